"""Duration models: how a running job's power level changes its speed.

A dispatcher may lower a running job's power level ``M`` in ``(0, 1]``
(:class:`~dispatchlab.dispatch.base.SetPower`); the simulation's duration model gives
the speed (work per second, 1 = nominal) the job then runs at, and the engine
reschedules the job's remaining work at that speed (exactly, see the engine's
docstring). The base model, :class:`NoSlowdown`, is the identity on durations: a level
changes the job's power but not its speed. Power-capping methods that throttle jobs
bring their own models (seed 004: ``D' = max(1, F / M) x D``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from dispatchlab.params import Params


class DurationModel(Params, ABC):
    """Base class: override :meth:`speed`; :meth:`start` sees the job table once."""

    name = "duration-model"

    def __init__(self) -> None:
        pass

    def start(self, jobs) -> None:
        """Called once before the run with the job table."""

    @abstractmethod
    def speed(self, job: int, level: float) -> float:
        """The speed (> 0) of job row ``job`` at power level ``level`` (0 < level <= 1)."""


class NoSlowdown(DurationModel):
    """The identity on durations: every level runs at speed 1."""

    name = "none"

    def speed(self, job: int, level: float) -> float:
        return 1.0
