"""What a dispatcher sees (:class:`View`) and what it may decide (:class:`Start`, ...).

A dispatcher is called once per dispatch pass with a read-only, lazy view of the
system and returns a list of decisions. The engine applies them in order and
re-validates each (the job must be waiting, its allocation must fit the free
resources), so a buggy dispatcher cannot corrupt a run: an invalid decision raises
:class:`DispatchError` naming the dispatcher, the job and the reason.

Two ways of fitting jobs exist:

* **counting** (``view.counting`` is True): every job unit is exactly one core and the
  platform has no other resource, so a job fits iff ``units <= view.free_cores``.
  Placement is not simulated; a :class:`Start` carries no allocation.
* **node-level**: ``view.free`` is the (nodes x resources) matrix of free capacity and a
  :class:`Start` must carry an :class:`Allocation` (units per node), usually made by
  the dispatcher's allocator.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar, NamedTuple

import numpy as np

from dispatchlab.core.params import Params

if TYPE_CHECKING:
    from dispatchlab.dispatch.profile import CoreProfile, NodeProfile
    from dispatchlab.platform import Platform
    from dispatchlab.workload.jobs import JobTable


class DispatchError(RuntimeError):
    """A dispatcher returned a decision the engine cannot apply (a bug in the dispatcher)."""


@dataclass(frozen=True, slots=True)
class Allocation:
    """Units of a job per node: ``nodes[k]`` gets ``counts[k]`` units (int64 arrays)."""

    nodes: np.ndarray
    counts: np.ndarray

    def matrix(self, request: np.ndarray, n_nodes: int) -> np.ndarray:
        """Resources used per node (nodes x resources)."""
        used = np.zeros((n_nodes, len(request)), dtype=np.int64)
        used[self.nodes] = self.counts[:, None] * request[None, :]
        return used


class Start(NamedTuple):
    """Start waiting job ``job`` (row in the job table) now, on ``allocation``."""

    job: int
    allocation: Allocation | None = None


class Reject(NamedTuple):
    """Remove waiting job ``job`` from the queue without running it."""

    job: int
    reason: str


class SetSpeed(NamedTuple):
    """Run job ``job`` at ``speed`` (work per second, 1.0 = nominal) from now on; the
    engine reschedules its end from its exact remaining work (and scales its remaining
    estimate the same way)."""

    job: int
    speed: float


class SetPower(NamedTuple):
    """Run job ``job`` at power level ``level`` (0 < level <= 1, 1 = full power) from now
    on; the simulation's duration model turns the level into a speed (the identity
    model keeps the speed at 1), and the job's remaining work is rescheduled at it."""

    job: int
    level: float


Decision = Start | Reject | SetSpeed | SetPower


class QueueColumns(NamedTuple):
    """The waiting jobs in queue order (submit time, then file order): read-only int64
    numpy arrays of equal length. ``jobs``: rows of the job table; ``units``: units
    requested; ``estimate``: the predictor's estimate at submission (s, may be 0);
    ``submit``: submit time (s, trace origin)."""

    jobs: np.ndarray
    units: np.ndarray
    estimate: np.ndarray
    submit: np.ndarray


class RunningColumns(NamedTuple):
    """The running jobs in order of estimated end (ties by job row): int64 numpy arrays.
    ``est_end`` is the *effective* planned end: start + max(estimate, 1), and an end
    already past counts as now (so ``est_end >= now``); ``start`` the start time."""

    jobs: np.ndarray
    units: np.ndarray
    est_end: np.ndarray
    start: np.ndarray


class Changes(NamedTuple):
    """What happened since the dispatcher's previous pass (job rows, in event order):
    jobs ``submitted`` (and queued; rejected ones are not listed), jobs ``completed``
    (ended or killed), running jobs ``reestimated`` (a new estimated end: an expired
    estimate replaced by the predictor, or a speed change)."""

    submitted: tuple[int, ...]
    completed: tuple[int, ...]
    reestimated: tuple[int, ...]
    #: jobs started by the engine itself, not by a dispatcher: a hot start's jobs
    #: (``Simulation(pinned=...)``), started at their submission on given nodes
    pinned: tuple[int, ...] = ()


class View:
    """A read-only, lazy view of the system at one dispatch pass.

    Every member is computed on access from the engine's public accessors; arrays are
    read-only numpy arrays valid during the ``dispatch`` call only. Times are integer
    seconds in the trace's time origin; estimates are seconds.

    The columns are named: :attr:`queue` is a :class:`QueueColumns`, :attr:`running` a
    :class:`RunningColumns` (both start with ``jobs, units``). :meth:`release_profile`
    gives the running jobs' releases over future time, built once per engine state and
    shared by every dispatcher that asks; :attr:`changed` tells what happened since the
    previous pass.
    """

    def __init__(self, engine) -> None:  # engine: dispatchlab.sim.engine.Simulation
        self._engine = engine
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
        """True when fit reduces to counting free cores (see module docstring)."""
        return self._engine.counting

    @property
    def requests(self) -> np.ndarray:
        """Per-unit request of every job (jobs x resources, platform resource order)."""
        return self._engine.requests

    @property
    def capacity(self) -> np.ndarray:
        """Capacity of every node (nodes x resources, platform resource order)."""
        return self._engine.capacity

    # --- the queue ----------------------------------------------------------------
    @property
    def queue(self) -> QueueColumns:
        """Waiting jobs in queue order (submit time, then file order)."""
        return QueueColumns(*self._engine.queue.columns())

    @property
    def queue_length(self) -> int:
        return len(self._engine.queue)

    @property
    def woken(self) -> bool:
        """Whether a wake-up asked for with :meth:`wake_at` fired at this pass."""
        return self._engine._woken

    def queue_head(self, k: int) -> tuple[list[int], list[int], list[int]]:
        """The first ``k`` waiting jobs in queue order as Python lists
        ``(jobs, units, estimates)``: cheap whatever the queue length, for dispatchers
        that walk from the head."""
        return self._engine.queue_head(k)

    def queued_after(self, job: int) -> tuple[list[int], list[int], list[int]]:
        """``(jobs, units, estimates)`` as Python lists for the waiting jobs submitted
        after ``job`` (a row), in queue order: for dispatchers that remember the queue."""
        return self._engine.queued_after(job)

    # --- running jobs -------------------------------------------------------------
    @property
    def running(self) -> RunningColumns:
        """Running jobs in order of estimated end (see :class:`RunningColumns`)."""
        jobs, units, est_end = self._engine.running.columns()
        if len(est_end) and est_end[0] < self.now:
            est_end = np.maximum(est_end, self.now)
        return RunningColumns(jobs, units, est_end, self._engine.start[jobs])

    # --- power -------------------------------------------------------------------
    @property
    def cap(self) -> float | None:
        """The power cap now (W), or None when no cap applies."""
        return self._engine.cap_watts

    def next_cap_change(self) -> tuple[int, float | None] | None:
        """The cap's next step after now, ``(time, watts or None)``, or None."""
        return self._engine.next_cap_change()

    @property
    def cap_schedule(self):
        """The whole cap schedule (a :class:`~dispatchlab.power.cap.PowerCap`, whose
        steps are known in advance), or None when the run has no cap."""
        return self._engine.cap

    def power_level(self, job: int) -> float:
        """The power level (0-1] of running job row ``job`` (1 unless changed)."""
        return self._engine._level.get(job, 1.0)

    @property
    def power_prediction(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Predicted power per job row (``mean``, ``max``, ``std`` arrays in W, NaN for
        jobs not submitted yet), or None when the simulation has no power predictor."""
        eng = self._engine
        if eng.power_predictor is None:
            return None
        return eng.power_prediction_views

    @property
    def job_power(self) -> np.ndarray | None:
        """The jobs' *real* (measured) power at full level, W per job row (the job
        table's ``power_mean``, NaN unknown; read-only), or None when the jobs carry no
        power. Dispatchers that act on measured power (RAPL-like throttling) read it;
        the others should use :attr:`power_prediction`."""
        return self._engine.job_power_view

    def node_power(self) -> np.ndarray:
        """Measured power per node now (W, float64, nodes; read-only): for every running
        job, its real power times its power level, shared among its nodes in proportion
        to its units there (jobs of unknown power count 0 W). Node-level platforms
        only (a DispatchError on counting ones); the jobs must carry power."""
        return self._engine.node_power()

    def running_power(self) -> float:
        """The measured power of all running jobs now (W): real power x level, summed
        (jobs of unknown power count 0 W); the jobs must carry power."""
        return self._engine.running_power()

    def speed(self, job: int, level: float) -> float:
        """The speed (work per second, 1 = nominal) the simulation's duration model gives
        job row ``job`` at power level ``level``: a job throttled to ``level`` from now
        runs its remaining work ``1 / speed`` times slower."""
        return self._engine.duration_model.speed(int(job), float(level))

    def exact_speed(self, job: int, level: float) -> Fraction:
        """:meth:`speed` as the exact fraction the engine applies (a throttled job's
        remaining work runs at exactly this speed; only its end is rounded up)."""
        return self._engine.duration_model.exact_speed(int(job), float(level))

    @property
    def changes(self) -> int:
        """A counter of changes to the running jobs that the dispatcher did not make
        itself (completions, new estimates, speed changes, rejections). When it has not
        moved since the previous pass, only submissions happened in between."""
        return self._engine.changes

    @property
    def changed(self) -> Changes:
        """What happened since this dispatcher's previous pass (see :class:`Changes`)."""
        return self._engine.changes_since_pass()

    def first_estimated_end(self) -> int | None:
        """The earliest (raw, unclamped) estimated end among running jobs."""
        return self._engine.running.first_end()

    def running_head(self, k: int) -> tuple[list[int], list[int]]:
        """The ``k`` running jobs that end first, as Python lists ``(est_end, units)``
        (effective ends, as in :attr:`running`): cheap whatever the number running."""
        running = self._engine.running
        ends = running.ends[:k].tolist()
        if ends and ends[0] < self.now:
            now = self.now
            ends = [e if e > now else now for e in ends]
        return ends, running.units[:k].tolist()

    def allocation(self, job: int) -> Allocation | None:
        """The allocation of a running job (None in counting mode)."""
        return self._engine.allocations.get(job)

    def start_time(self, job: int) -> int:
        return int(self._engine.start[job])

    def release_profile(self) -> CoreProfile | NodeProfile:
        """Free resources over future time if no job started: a
        :class:`~dispatchlab.dispatch.profile.CoreProfile` (counting platforms) or
        :class:`~dispatchlab.dispatch.profile.NodeProfile` (node level) that starts at
        now with the free resources and releases each running job's resources at its
        effective estimated end (:attr:`running`).

        Built once per engine state (time and running set) and shared: every call
        returns a fresh, writable copy, so a dispatcher may reserve in it."""
        return self._engine.release_profile().copy()

    # --- free resources ---------------------------------------------------------------
    @property
    def free_cores(self) -> int:
        """Free cores over the whole platform."""
        return self._engine.free_cores

    @property
    def free(self) -> np.ndarray:
        """Free capacity per node and resource (nodes x resources); node-level mode only."""
        return self._engine.free_view

    # --- requests to the engine ---------------------------------------------------
    def wake_at(self, time: int) -> None:
        """Ask for a dispatch pass at ``time`` (> now) even if no job event happens then."""
        self._engine.request_wakeup(int(time))

    def withdraw_wake(self, time: int) -> None:
        """Withdraw one wake-up asked for at ``time`` (> now) with :meth:`wake_at` that
        has not fired: unless another one is pending then, no pass happens at ``time``
        for it."""
        self._engine.withdraw_wakeup(int(time))


class Dispatcher(Params, ABC):
    """Base class of all dispatchers: override :meth:`dispatch`.

    Parameters are ``__init__`` keywords (see :class:`dispatchlab.core.params.Params`).
    ``start(engine_facts)`` is called once before the run; per-run state goes there.
    """

    name: str = "dispatcher"
    #: False for a dispatcher that only handles counting (pooled cores) platforms: a
    #: node-level run of it is refused before it starts (an InputError from
    #: :func:`dispatchlab.sim.engine.check_combination`, which every way of building a
    #: run calls), and :func:`dispatchlab.testing.check_dispatcher` skips its node-level
    #: checks
    supports_node_level: bool = True
    #: True for a dispatcher that slows running jobs: it lowers their power levels
    #: (:class:`SetPower`), which the run's duration model turns into speeds. Such a
    #: run needs an explicit duration model (``none``, kept run times, only when given
    #: on purpose; it is then reported as "throttling without slowdown"); without one
    #: it is refused before it starts (:func:`dispatchlab.sim.engine.
    #: check_combination`). A dispatcher that only gives speeds itself
    #: (:class:`SetSpeed`) uses no duration model and need not declare it.
    slows_running_jobs: ClassVar[bool] = False

    def start(self, view: View) -> None:
        """Called once before the first pass."""

    def run_facts(self) -> dict:
        """Facts about the run a dispatcher reports in the summary once it ends (the
        CP dispatchers: solver passes, share improved on PRB, limit hits, jobs
        modelled). Keys must be declared in :data:`dispatchlab.metrics.keys.METRICS`
        to reach tables and stores. Default: none."""
        return {}

    @abstractmethod
    def dispatch(self, view: View) -> list[Decision]:
        """Subclasses implement this."""
