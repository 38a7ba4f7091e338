"""Duration predictors behind one small protocol (see :mod:`dispatchlab.predict.duration.base`)."""

from dispatchlab.predict.duration.base import (
    PREDICTORS,
    Predictor,
    PredictorContext,
    RealPredictor,
    WalltimePredictor,
    make_predictor,
)
from dispatchlab.predict.duration.history import HistoryPredictor
from dispatchlab.predict.duration.ml import MLPredictor
from dispatchlab.predict.duration.safety import Inflated
from dispatchlab.predict.duration.tsafrir import TsafrirPredictor

__all__ = [
    "PREDICTORS",
    "HistoryPredictor",
    "Inflated",
    "MLPredictor",
    "Predictor",
    "PredictorContext",
    "RealPredictor",
    "TsafrirPredictor",
    "WalltimePredictor",
    "make_predictor",
]
