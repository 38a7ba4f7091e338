"""Duration predictors: the protocol and the two built-in ones.

A predictor gives every job an *estimate* of its duration (seconds) when it is
submitted, learns from jobs as they complete, and decides what happens when a running
job outlives its estimate. The engine calls, in simulated-time order:

* ``start(context)`` once before the run (``context.jobs`` is the :class:`JobTable`,
  ``context.overrun`` the overrun mode); learned state is created here.
* ``predict(job, now) -> int`` at the job's submission (``job`` is its row in the table,
  ``now`` its submit time). Causal: only jobs observed so far may be used.
* ``observe(job, now)`` when a job completes at ``now`` (completions at a timestamp are
  observed before the submissions at that timestamp are predicted, so a job ending
  exactly at a submission time is visible to it).
* ``on_expiry(job, now) -> int | None`` at a dispatch pass when a running job is still
  running at or past its estimated end (start + estimate). Return a new estimate
  (seconds from the job's start, greater than ``now - start``) or ``None``: no later
  estimate exists and the job counts as ending now when reservations are computed.
  The default is Tsafrir et al. (2007): jump to the wall-time if it is still ahead,
  else ``None``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.core.params import Params
from dispatchlab.core.registry import Registry

if TYPE_CHECKING:
    from dispatchlab.workload.jobs import JobTable


@dataclass(frozen=True)
class PredictorContext:
    """What a predictor may know before the run starts."""

    jobs: JobTable
    overrun: str  # "run" or "kill"
    start_times: np.ndarray  # int64 per job, -1 until the job starts (live, read-only)


class Predictor(Params, ABC):
    """Base class: subclass it and override :meth:`predict` (and :meth:`observe`)."""

    #: short name used by the CLI and in output files
    name: str = "predictor"

    def start(self, context: PredictorContext) -> None:
        self.jobs_ = context.jobs
        self.context_ = context
        self._requested = context.jobs["requested_time"]

    @abstractmethod
    def predict(self, job: int, now: int) -> int:
        """Subclasses implement this."""

    def static_estimates(self) -> np.ndarray | None:
        """Every job's estimate at once, for predictors that use no history (the engine
        then skips :meth:`predict`); ``None`` (the default) for learning predictors."""
        return None

    def observe(self, job: int, now: int) -> None:
        """Learn from ``job``, which completed at ``now`` (default: nothing)."""

    def on_expiry(self, job: int, now: int) -> int | None:
        """Tsafrir's rule: the wall-time if still ahead of ``now``, else ``None``."""
        started = int(self.context_.start_times[job])
        wall = int(self._requested[job])
        return wall if started + wall > now else None


class WalltimePredictor(Predictor):
    """W: the user's requested time (the default everywhere)."""

    name = "walltime"

    def __init__(self) -> None:
        pass

    def predict(self, job: int, now: int) -> int:
        return int(self._requested[job])

    def static_estimates(self) -> np.ndarray:
        return self._requested


class RealPredictor(Predictor):
    """R: the oracle. Predicts the duration the job will actually be simulated for
    (its run time; with ``overrun="kill"``, capped by its requested time)."""

    name = "real"

    def __init__(self) -> None:
        pass

    def start(self, context: PredictorContext) -> None:
        super().start(context)
        run = context.jobs["run"]
        self._actual = np.minimum(run, self._requested) if context.overrun == "kill" else run

    def predict(self, job: int, now: int) -> int:
        return int(self._actual[job])

    def static_estimates(self) -> np.ndarray:
        return self._actual


#: The registered duration predictors (component kind ``predictor``); the ones of
#: other modules are lazy entries (their modules import this one).
PREDICTORS: Registry[Predictor] = Registry("predictor", Predictor, {
    "walltime": WalltimePredictor,
    "real": RealPredictor,
    "history": "dispatchlab.predict.duration.history:HistoryPredictor",
    "tsafrir": "dispatchlab.predict.duration.tsafrir:TsafrirPredictor",
    "ml": "dispatchlab.predict.duration.ml:MLPredictor",
    "inflated": "dispatchlab.predict.duration.safety:Inflated",
})


def make_predictor(name: str, **params: object) -> Predictor:
    """Build a predictor by registered name (``walltime``, ``real``, ``history``, ...)
    or ``"module:Class"`` for a class of your own, with its ``__init__`` parameters."""
    return PREDICTORS.build(name, **params)
