"""Duration predictors behind one small protocol (see :mod:`dispatchlab.predict.base`)."""

from dispatchlab.predict.base import (
    PREDICTORS,
    Predictor,
    PredictorContext,
    RealPredictor,
    WalltimePredictor,
    make_predictor,
)

__all__ = [
    "PREDICTORS",
    "Predictor",
    "PredictorContext",
    "RealPredictor",
    "WalltimePredictor",
    "make_predictor",
]
