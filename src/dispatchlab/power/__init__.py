"""Power: caps over time and job power predictions (Carastan-Santos et al. 2024; the engine's power
side).

* :mod:`dispatchlab.power.cap`: :class:`PowerCap`, a step function of trace time;

The power predictors moved to :mod:`dispatchlab.predict.power` (their protocol,
:class:`~dispatchlab.predict.power.base.PowerPredictor`, is in
:mod:`dispatchlab.predict.power.base`); the old names here still resolve, with a warning.
"""

from dispatchlab.core.deprecation import moved_attributes
from dispatchlab.power.cap import PowerCap, parse_cap_value, parse_window

__all__ = ["PowerCap", "parse_cap_value", "parse_window"]

__getattr__ = moved_attributes(__name__, {
    "PowerPrediction": "dispatchlab.predict.power.base:PowerPrediction",
    "PowerPredictor": "dispatchlab.predict.power.base:PowerPredictor",
})
