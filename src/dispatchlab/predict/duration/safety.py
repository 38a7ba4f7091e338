"""Safety against underestimation: inflate another predictor's estimates.

Underestimates hurt reservation-based dispatchers (Galleguillos et al. 2017): a backfilled job
predicted too short delays the reserved head job. :class:`Inflated` multiplies a base
predictor's estimates by a factor >= 1, capped by the wall-time.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Nested
from dispatchlab.predict.duration.base import PREDICTORS, Predictor, make_predictor

if TYPE_CHECKING:
    from dispatchlab.predict.duration.base import PredictorContext


class Inflated(Predictor):
    """``min(wall-time, ceil(base estimate * factor))``.

    ``base`` is a registered predictor name (built with :func:`make_predictor` and its
    defaults) or a predictor instance (a fresh clone of it is used in each run, so the
    object passed in is never started). ``factor`` (>= 1) is read as the decimal number
    it prints as (``1.1`` is 11/10), so the ceiling is exact integer arithmetic. Completed
    jobs are forwarded to the base (``observe``); a job outliving its estimate gets the
    default treatment of :class:`Predictor` (jump to the wall-time). A base that uses no
    history (``walltime``, ``real``) keeps the engine's all-at-once fast path.
    """

    name = "inflated"
    nested: ClassVar[Nested] = {"base": PREDICTORS}

    def __init__(self, base: str | Predictor = "history", factor: float = 1.5) -> None:
        self.base = base
        self.factor = factor
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not (
                factor >= 1 and np.isfinite(factor)):
            raise InputError(f"inflated factor must be a finite number >= 1, got {factor!r}",
                             field="predictor")
        if not isinstance(base, str | Predictor):
            raise InputError(f"inflated base must be a predictor name or a Predictor, got "
                             f"{base!r}", field="predictor")

    def start(self, context: PredictorContext) -> None:
        super().start(context)
        base = make_predictor(self.base) if isinstance(self.base, str) else self.base.clone()
        base.start(context)
        self.base_ = base
        ratio = Fraction(repr(float(self.factor)))
        self._num = ratio.numerator
        self._den = ratio.denominator

    def _inflate(self, estimate: int) -> int:
        return -(-(int(estimate) * self._num) // self._den)

    def predict(self, job: int, now: int) -> int:
        return min(int(self._requested[job]), self._inflate(self.base_.predict(job, now)))

    def static_estimates(self) -> np.ndarray | None:
        est = self.base_.static_estimates()
        if est is None:
            return None
        est = np.asarray(est, dtype=np.int64)
        if est.size and int(est.max()) > np.iinfo(np.int64).max // self._num:
            inflated = np.array([self._inflate(e) for e in est.tolist()], dtype=object)
            return np.minimum(inflated, self._requested.astype(object)).astype(np.int64)
        return np.minimum(-(-(est * self._num) // self._den), self._requested)

    def observe(self, job: int, now: int) -> None:
        self.base_.observe(job, now)
