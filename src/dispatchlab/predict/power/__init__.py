"""Job power predictors (Carastan-Santos et al. 2024): the protocol
(:mod:`~dispatchlab.predict.power.base`), the predictors
(:mod:`~dispatchlab.predict.power.predictors`) and their evaluation on a replay of the
recorded schedule (:mod:`~dispatchlab.experiment.power_accuracy`)."""

from dispatchlab.predict.power.base import PowerPrediction, PowerPredictor

__all__ = ["PowerPrediction", "PowerPredictor"]
