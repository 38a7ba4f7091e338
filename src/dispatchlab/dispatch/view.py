"""What a dispatcher sees: the :class:`View` protocol and its column records.

A dispatcher is called once per dispatch pass with a read-only, lazy view of the
system. :class:`View` is the contract, a :class:`typing.Protocol`: it says what every
member means (units, time origin) and what it costs. The simulation's implementation
lives in :mod:`dispatchlab.sim.view` (the only code that touches the engine's state);
a dispatcher depends on this protocol only, so a test may hand it any object with these
members.

Conventions of every member:

* **times** are integer seconds in the trace's own time origin (the job table's
  ``submit`` column); **durations and estimates** are seconds; **power** is W; a
  **job** is a row of the job table (``view.jobs``), not a job id;
* **arrays** are read-only numpy arrays, valid during the ``dispatch`` call only (copy
  what you keep);
* **cost**, in the number of waiting jobs *Q* (the queue), running jobs *R*, nodes *N*
  and jobs in the trace *J*: O(1) members read a value; O(Q) and O(R) ones build new
  arrays or lists of that length at each access (read them once per pass); a cached
  member is built once per engine state (time and running set) and shared.

Two ways of fitting jobs exist (:attr:`View.counting`): **counting** (every job unit
is exactly one core and the platform has no other resource: a job fits iff
``units <= view.free_cores``; a ``Start`` carries no allocation) and **node-level**
(``view.free`` is the nodes x resources matrix of free capacity and a ``Start`` must
carry an ``Allocation``, usually made by the dispatcher's allocator).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from fractions import Fraction  # (imported when used: it pulls in decimal)

    from dispatchlab.dispatch.allocation import Allocation
    from dispatchlab.dispatch.profile import CoreProfile, NodeProfile
    from dispatchlab.platform import Platform
    from dispatchlab.power.cap import PowerCap
    from dispatchlab.workload.jobs import JobTable


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


@runtime_checkable
class View(Protocol):
    """A read-only, lazy view of the system at one dispatch pass (see the module
    docstring for units, time origin and costs).

    The columns are named: :attr:`queue` is a :class:`QueueColumns`, :attr:`running` a
    :class:`RunningColumns` (both start with ``jobs, units``). :meth:`release_profile`
    gives the running jobs' releases over future time, built once per engine state and
    shared by every dispatcher that asks. What changed since the previous pass:
    :attr:`changed` (the jobs) and :attr:`changes` (a counter).
    """

    # --- time and static facts -----------------------------------------------------
    @property
    def now(self) -> int:
        """The time of this pass (s, trace origin). O(1)."""
        ...

    @property
    def jobs(self) -> JobTable:
        """The whole job table of the run (every job, submitted or not; rows are the
        job numbers every other member uses). O(1)."""
        ...

    @property
    def platform(self) -> Platform:
        """The platform (nodes, resources, power facts). O(1)."""
        ...

    @property
    def counting(self) -> bool:
        """True when fit reduces to counting free cores (see the module docstring):
        fixed for the whole run. O(1)."""
        ...

    @property
    def requests(self) -> np.ndarray:
        """Per-unit request of every job (int64, jobs x resources, platform resource
        order). O(1) (one array for the run)."""
        ...

    @property
    def capacity(self) -> np.ndarray:
        """Capacity of every node (int64, nodes x resources, platform resource order).
        O(1) (one array for the run)."""
        ...

    # --- the queue -------------------------------------------------------------------
    @property
    def queue(self) -> QueueColumns:
        """Waiting jobs in queue order (submit time, then file order; see
        :class:`QueueColumns`). O(Q), cached until the queue changes."""
        ...

    @property
    def queue_length(self) -> int:
        """The number of waiting jobs. O(1)."""
        ...

    def queue_head(self, k: int) -> tuple[list[int], list[int], list[int]]:
        """The first ``k`` waiting jobs in queue order as Python lists ``(jobs, units,
        estimates)`` (estimates in s). O(k): cheap whatever the queue length, for
        dispatchers that walk from the head."""
        ...

    def queued_after(self, job: int) -> tuple[list[int], list[int], list[int]]:
        """``(jobs, units, estimates)`` as Python lists for the waiting jobs submitted
        after row ``job``, in queue order: for dispatchers that remember the queue.
        O(log Q + the jobs returned)."""
        ...

    # --- running jobs -------------------------------------------------------------------
    @property
    def running(self) -> RunningColumns:
        """Running jobs in order of estimated end (see :class:`RunningColumns`; ends
        effective, never before now). O(R), new arrays at each access."""
        ...

    @property
    def running_count(self) -> int:
        """The number of running jobs. O(1)."""
        ...

    def estimated_end(self, job: int) -> int:
        """The effective estimated end (s, trace origin) of running job row ``job``:
        start + max(estimate, 1), updated by new estimates and speed changes, and now if
        that is already past (its value in :attr:`running`). O(1): what a dispatcher
        that keeps its own picture of the running jobs reads for the jobs in
        :attr:`changed` instead of rebuilding the running set."""
        ...

    def first_estimated_end(self) -> int | None:
        """The earliest *raw* (not clamped to now) estimated end among running jobs
        (s), None when none runs. O(1)."""
        ...

    def running_head(self, k: int) -> tuple[list[int], list[int]]:
        """The ``k`` running jobs that end first, as Python lists ``(est_end, units)``
        (effective ends, as in :attr:`running`). O(k): cheap whatever the number
        running."""
        ...

    def allocation(self, job: int) -> Allocation | None:
        """The allocation of running job row ``job`` (units per node); None in counting
        mode. O(1)."""
        ...

    def start_time(self, job: int) -> int:
        """The start time (s, trace origin) of job row ``job``; -1 if it has not
        started. O(1)."""
        ...

    def release_profile(self) -> CoreProfile | NodeProfile:
        """Free resources over future time if no job started: a
        :class:`~dispatchlab.dispatch.profile.CoreProfile` (counting platforms) or
        :class:`~dispatchlab.dispatch.profile.NodeProfile` (node level) that starts at
        now with the free resources and releases each running job's resources at its
        effective estimated end (:attr:`running`). Built once per engine state (time
        and running set, O(R) or O(R x N)) and shared: every call returns a fresh,
        writable copy (O(R), or O(R x N) node-level), so a dispatcher may reserve in
        it."""
        ...

    # --- what changed ---------------------------------------------------------------------
    @property
    def changed(self) -> Changes:
        """What happened since this dispatcher's previous pass (job rows; see
        :class:`Changes`). O(number of changes)."""
        ...

    @property
    def changes(self) -> int:
        """A counter of changes to the running jobs that the dispatcher did not make
        itself (completions, new estimates, speed changes, rejections, cap steps). When
        it has not moved since the previous pass, only submissions happened in
        between. O(1)."""
        ...

    @property
    def woken(self) -> bool:
        """Whether a wake-up asked for with :meth:`wake_at` fired at this pass's time.
        O(1)."""
        ...

    # --- free resources ------------------------------------------------------------------
    @property
    def free_cores(self) -> int:
        """Free cores over the whole platform now. O(1)."""
        ...

    @property
    def free(self) -> np.ndarray:
        """Free capacity per node and resource now (int64, nodes x resources, read-only;
        node-level mode). O(1) (a live read-only view: copy it to keep it)."""
        ...

    # --- power ---------------------------------------------------------------------------
    @property
    def cap(self) -> float | None:
        """The power cap now (W), or None when no cap applies now. O(1)."""
        ...

    def next_cap_change(self) -> tuple[int, float | None] | None:
        """The cap's next step after now, ``(time in s, watts or None)``, or None when
        no step comes. O(number of cap steps)."""
        ...

    @property
    def cap_schedule(self) -> PowerCap | None:
        """The whole cap schedule (a :class:`~dispatchlab.power.cap.PowerCap`, whose
        steps are known in advance), or None when the run has no cap. O(1)."""
        ...

    def power_level(self, job: int) -> float:
        """The power level (0-1] of running job row ``job`` (1 unless a ``SetPower``
        or ``SetSpeed`` changed it). O(1)."""
        ...

    @property
    def power_prediction(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Predicted power per job row (``mean``, ``max``, ``std`` float64 arrays in W,
        NaN for jobs not submitted yet; read-only, filled in place as jobs arrive), or
        None when the run has no power predictor. O(1)."""
        ...

    @property
    def job_power(self) -> np.ndarray | None:
        """The jobs' *real* (measured) power at full level, W per job row (the job
        table's ``power_mean``, NaN unknown; read-only), or None when the jobs carry no
        power. Dispatchers that act on measured power (RAPL-like throttling) read it;
        the others should use :attr:`power_prediction`. O(1)."""
        ...

    def node_power(self) -> np.ndarray:
        """Measured power per node now (W, float64, nodes; read-only): for every running
        job, its real power times its power level, shared among its nodes in proportion
        to its units there (jobs of unknown power count 0 W). Node-level platforms only
        (a DispatchError on counting ones); the jobs must carry power. O(R + N), cached
        per engine state."""
        ...

    def running_power(self) -> float:
        """The measured power of all running jobs now (W): real power x level, summed
        (jobs of unknown power count 0 W); the jobs must carry power. O(R)."""
        ...

    def speed(self, job: int, level: float) -> float:
        """The speed (work per second, 1 = nominal) the run's duration model gives job
        row ``job`` at power level ``level``: a job throttled to ``level`` from now runs
        its remaining work ``1 / speed`` times slower. O(1)."""
        ...

    def exact_speed(self, job: int, level: float) -> Fraction:
        """:meth:`speed` as the exact fraction the engine applies (a throttled job's
        remaining work runs at exactly this speed; only its end is rounded up). O(1)."""
        ...

    # --- requests to the engine -------------------------------------------------------
    def wake_at(self, time: int) -> None:
        """Ask for a dispatch pass at ``time`` (s, trace origin, > now) even if no job
        event happens then. O(log of the events pending)."""
        ...

    def withdraw_wake(self, time: int) -> None:
        """Withdraw one wake-up asked for at ``time`` (> now) with :meth:`wake_at` that
        has not fired: unless another one is pending then, no pass happens at ``time``
        for it. O(1)."""
        ...
