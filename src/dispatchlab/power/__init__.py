"""Power: caps over time and job power predictions (Carastan-Santos et al. 2024; the engine's power
side).

* :mod:`dispatchlab.power.cap`: :class:`PowerCap`, a step function of trace time;
* :mod:`dispatchlab.power.predict`: the power-predictor protocol (mean, max, std in W).
"""

from dispatchlab.power.cap import PowerCap, parse_cap_value, parse_window
from dispatchlab.power.predict import PowerPrediction, PowerPredictor

__all__ = ["PowerCap", "PowerPrediction", "PowerPredictor", "parse_cap_value",
           "parse_window"]
