"""The power-predictor protocol: a job's power, predicted at submission.

A power predictor is a small class like the duration predictors
(:mod:`dispatchlab.predict.duration.base`): parameters in ``__init__``, state built in
:meth:`PowerPredictor.start`, one :meth:`PowerPredictor.predict` per submitted job
giving a :class:`PowerPrediction` (mean, max, std of the job's whole power, in watts,
at full power level), and :meth:`PowerPredictor.observe` at each completion (for
predictors that learn from finished jobs). Causal by construction: the engine calls
``predict`` at the job's submission and ``observe`` only for jobs that ended.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import NamedTuple

from dispatchlab.core.params import Params


class PowerPrediction(NamedTuple):
    """A job's predicted power (W, the whole job at full power level)."""

    mean: float
    max: float
    std: float


class PowerPredictor(Params, ABC):
    """Base class: override :meth:`predict` (and :meth:`observe` to learn)."""

    name = "power-predictor"

    def __init__(self) -> None:
        pass

    def start(self, jobs, platform) -> None:
        """Called once before the run with the job table and the platform."""

    @abstractmethod
    def predict(self, job: int, now: int) -> PowerPrediction:
        """The power of job row ``job``, submitted at ``now``."""

    def observe(self, job: int, end: int) -> None:
        """Job row ``job`` ended at ``end`` (its recorded power may now be used)."""
