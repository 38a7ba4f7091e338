"""The simulation's :class:`~dispatchlab.dispatch.view.View`: the one object that reads
the engine's state for a dispatcher.

:class:`EngineView` implements the protocol on the engine's public accessors only (the
protocol documents each member: units, time origin, cost). The engine makes one per run
and sets :attr:`EngineView.now` at every time point.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.dispatch.view import Changes, QueueColumns, RunningColumns

if TYPE_CHECKING:
    from dispatchlab.dispatch.allocation import Allocation
    from dispatchlab.dispatch.profile import CoreProfile, NodeProfile
    from dispatchlab.platform import Platform
    from dispatchlab.power.cap import PowerCap
    from dispatchlab.sim.engine import Simulation
    from dispatchlab.workload.jobs import JobTable


class EngineView:
    """The read-only, lazy view of one :class:`~dispatchlab.sim.engine.Simulation`
    (see :class:`dispatchlab.dispatch.view.View` for every member)."""

    def __init__(self, engine: Simulation) -> None:
        self._engine = engine
        #: the time of the current pass (s, trace origin), set by the engine
        self.now: int = 0

    # --- static facts -----------------------------------------------------------
    @property
    def jobs(self) -> JobTable:
        return self._engine.jobs

    @property
    def platform(self) -> Platform:
        return self._engine.platform

    @property
    def counting(self) -> bool:
        return self._engine.counting

    @property
    def requests(self) -> np.ndarray:
        return self._engine.requests

    @property
    def capacity(self) -> np.ndarray:
        return self._engine.capacity

    # --- the queue ----------------------------------------------------------------
    @property
    def queue(self) -> QueueColumns:
        return QueueColumns(*self._engine.queue.columns())

    @property
    def queue_length(self) -> int:
        return len(self._engine.queue)

    @property
    def woken(self) -> bool:
        return self._engine.woken

    def queue_head(self, k: int) -> tuple[list[int], list[int], list[int]]:
        return self._engine.queue_head(k)

    def queued_after(self, job: int) -> tuple[list[int], list[int], list[int]]:
        return self._engine.queued_after(job)

    # --- running jobs -------------------------------------------------------------
    @property
    def running(self) -> RunningColumns:
        jobs, units, est_end = self._engine.running.columns()
        if len(est_end) and est_end[0] < self.now:
            est_end = np.maximum(est_end, self.now)
        return RunningColumns(jobs, units, est_end, self._engine.start[jobs])

    @property
    def running_count(self) -> int:
        return len(self._engine.running)

    def estimated_end(self, job: int) -> int:
        end = self._engine.estimated_end(job)
        return end if end > self.now else self.now

    def first_estimated_end(self) -> int | None:
        return self._engine.running.first_end()

    def running_head(self, k: int) -> tuple[list[int], list[int]]:
        running = self._engine.running
        ends = running.ends[:k].tolist()
        if ends and ends[0] < self.now:
            now = self.now
            ends = [e if e > now else now for e in ends]
        return ends, running.units[:k].tolist()

    def allocation(self, job: int) -> Allocation | None:
        return self._engine.allocations.get(job)

    def start_time(self, job: int) -> int:
        return int(self._engine.start[job])

    def release_profile(self) -> CoreProfile | NodeProfile:
        return self._engine.release_profile().copy()

    # --- what changed ---------------------------------------------------------------
    @property
    def changes(self) -> int:
        return self._engine.changes

    @property
    def changed(self) -> Changes:
        return self._engine.changes_since_pass()

    # --- free resources ---------------------------------------------------------------
    @property
    def free_cores(self) -> int:
        return self._engine.free_cores

    @property
    def free(self) -> np.ndarray:
        return self._engine.free_view

    # --- power -------------------------------------------------------------------
    @property
    def cap(self) -> float | None:
        return self._engine.cap_watts

    def next_cap_change(self) -> tuple[int, float | None] | None:
        return self._engine.next_cap_change()

    @property
    def cap_schedule(self) -> PowerCap | None:
        return self._engine.cap

    def power_level(self, job: int) -> float:
        return self._engine.power_level(job)

    @property
    def power_prediction(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        eng = self._engine
        if eng.power_predictor is None:
            return None
        return eng.power_prediction_views

    @property
    def job_power(self) -> np.ndarray | None:
        return self._engine.job_power_view

    def node_power(self) -> np.ndarray:
        return self._engine.node_power()

    def running_power(self) -> float:
        return self._engine.running_power()

    def speed(self, job: int, level: float) -> float:
        return self._engine.duration_model.speed(int(job), float(level))

    def exact_speed(self, job: int, level: float) -> Fraction:
        return self._engine.duration_model.exact_speed(int(job), float(level))

    # --- requests to the engine ---------------------------------------------------
    def wake_at(self, time: int) -> None:
        self._engine.request_wakeup(int(time))

    def withdraw_wake(self, time: int) -> None:
        self._engine.withdraw_wakeup(int(time))
