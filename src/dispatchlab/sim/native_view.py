"""A dispatcher written in Python on the native engine: the ``View`` it sees and the
checks of its decisions.

The native core (``dispatchlab._core.simulate_python``, the adapter in
``rust/py/src/python_dispatcher.rs``) runs the engine loop and calls
:meth:`NativePasses.run_pass` at each dispatch pass, with the GIL taken, handing over
the pass's state: the time, the free cores, the change counter, whether a wake-up
fired, and what happened since the dispatcher's previous call (jobs queued, jobs
ended, jobs given a new estimate, with their new planned ends). The waiting queue and
the running set are the core's own: the adapter keeps two compiled objects
(``_core.NativeQueue``, ``_core.NativeRunning``) equal to them in native code (the
queue's rows compared and copied before each call when they changed; the running set
handed the starts, ends and new estimates, applied when it is read), and they have the
interface of the Python engine's containers (:class:`~dispatchlab.sim.state.
WaitingQueue`, :class:`~dispatchlab.sim.state.RunningSet`): the queue's columns built
on access in one native call and kept until the queue changes, the running set's as
new arrays, both as the Python engine builds them (the same dtypes, flags and
lengths). So a pass keeps no container up to date in Python (no insertion nor
removal per job queued, started or ended). :class:`NativePasses` keeps what only the
checks and the view's per-job accessors need (each job's status, start, planned end;
on a node-level platform the free matrix and the running jobs' allocations), updated
from the events and from the dispatcher's decisions as the Python engine updates them.
It has the accessors of :class:`~dispatchlab.sim.engine.Simulation` that the Python
engine's view reads, so the dispatcher sees the same :class:`~dispatchlab.sim.view.
EngineView` (the very class) on both engines, member for member: the same values,
array types and errors.

The decisions are checked as the Python engine checks them, in their order, with its
messages (:class:`~dispatchlab.dispatch.base.DispatchError`: a job started that is not
waiting or does not fit the free cores, or on nodes has no valid allocation or one
beyond the free resources, a job rejected that is not waiting, a value that is not a
decision), and wake-ups as the engine checks them. On nodes the allocations are the
dispatcher's own (the core checks each again and records it). Rate changes
(``SetSpeed``, ``SetPower``) of a running job are not native: such a decision raises a
:class:`NotNativeDecision` (a ``DispatchError``) naming ``--engine python``; under
``--engine auto`` the run is then made again on the Python engine
(:class:`dispatchlab.sim.native.NativeSimulation`, ``fallback``). Whatever the
dispatcher raises stops the run and is raised unchanged by
:func:`dispatchlab.sim.native.simulate_native`.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from time import perf_counter
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.dispatch.allocation import Allocation
from dispatchlab.dispatch.base import (
    Changes,
    Dispatcher,
    DispatchError,
    Reject,
    SetPower,
    SetSpeed,
    Start,
)
from dispatchlab.dispatch.profile import CoreProfile, NodeProfile
from dispatchlab.power.model import has_power
from dispatchlab.sim.duration import NoSlowdown
from dispatchlab.sim.engine import is_node_level
from dispatchlab.sim.result import (
    STATUS_COMPLETED,
    STATUS_FUTURE,
    STATUS_REJECTED,
    STATUS_RUNNING,
)
from dispatchlab.sim.view import EngineView

try:  # the compiled core (a NativePasses is made only when it is built)
    from dispatchlab import _core
except ImportError:  # not built: dispatchlab.sim.native refuses every native run
    _core = None

if TYPE_CHECKING:
    from dispatchlab.platform import Platform
    from dispatchlab.workload.jobs import JobTable

__all__ = ["NativePasses"]

#: the status of a waiting job (the Python engine's STATUS_WAITING)
_WAITING = 3

#: no decision, no wake-up: what :meth:`NativePasses.run_pass` returns then
_NOTHING = None

def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a



class NotNativeDecision(DispatchError):
    """A dispatcher written in Python returned a decision the native engine does not
    apply (a rate change of a running job): not a bug of the dispatcher, a limit of the
    native engine; the Python engine applies it."""

class NativePasses:
    """One native run of a Python ``dispatcher`` (started here, with the view) on
    ``jobs`` and ``platform`` (pooled cores or nodes): the engine state at each pass as the
    Python engine's accessors (what :class:`~dispatchlab.sim.view.EngineView` reads),
    and :meth:`run_pass`, the function the core calls at each pass. ``estimate``:
    every job's estimate at submission (the native predictors' static ones)."""

    #: no power cap natively
    cap = None
    cap_watts = None
    power_predictor = None

    def __init__(self, platform: Platform, jobs: JobTable, dispatcher: Dispatcher,
                 estimate: np.ndarray, total_cores: int) -> None:
        self.platform, self.jobs, self.dispatcher = platform, jobs, dispatcher
        #: counting (pooled cores) or node-level (placement on nodes), for the run
        self.counting = not is_node_level(platform, jobs)
        n = len(jobs)
        names = platform.resource_names
        self.requests = np.zeros((n, len(names)), dtype=np.int64)
        for k, r in enumerate(names):
            if r in jobs.resources:
                self.requests[:, k] = jobs.resources[r]
        capacity = platform.capacity_matrix()
        self.capacity = _readonly(capacity.view())
        # the free matrix (node level: kept as the Python engine keeps it; counting:
        # never placed on)
        self._free = capacity.copy()
        self.free_view = _readonly(self._free.view())
        self.total_cores = total_cores
        #: the allocations of the running jobs, and of every started job (node level)
        self.allocations: dict[int, Allocation] = {}
        self.allocation_log: dict[int, Allocation] = {}
        # per job row: cores and estimate at submission (fast scalar reads)
        self._units = array("q", np.asarray(jobs["units"], dtype=np.int64).tobytes())
        self._est0 = array("q", np.asarray(estimate, dtype=np.int64).tobytes())
        self._job_id = jobs["job_id"]
        self._start_at = array("q", np.full(n, -1, dtype=np.int64).tobytes())
        self.start = np.frombuffer(self._start_at, dtype=np.int64)
        self._est_end = array("q", np.full(n, -1, dtype=np.int64).tobytes())
        self._status = array("b", bytes([STATUS_FUTURE]) * n)
        # the waiting queue and the running set: the core's, as the Python engine's
        # containers (the adapter brings them up to the core's before each pass)
        assert _core is not None  # (dispatchlab.sim.native refuses the run otherwise)
        self.queue = _core.NativeQueue(np.ascontiguousarray(jobs["submit"],
                                                            dtype=np.int64))
        self.running = _core.NativeRunning()
        self.now = 0
        self.free_cores = total_cores
        self.changes = 0
        self.woken = False
        self._changed: tuple[tuple[int, ...], ...] = ((), (), ())
        self._profile: CoreProfile | NodeProfile | None = None
        self._pending_wakes: dict[int, int] = {}
        self._withdrawn_wakes: dict[int, int] = {}
        self._wakes: list[int] = []
        self._withdraws: list[int] = []
        self.duration_model = NoSlowdown()
        self.duration_model.start(jobs)
        self.job_power_view: np.ndarray | None = None
        if has_power(jobs):
            self.job_power_view = _readonly(np.asarray(jobs["power_mean"],
                                                       dtype=np.float64).view())
        #: the duration of every dispatch call (s), as the Python engine records them
        self.decision_times = array("d")
        #: the dispatcher's reasons for the jobs it rejected (job row -> reason)
        self.reject_reason: dict[int, str] = {}
        #: whatever the dispatcher (or a check of its decisions) raised: the run's end
        self.error: BaseException | None = None
        self.view = EngineView(self)  # type: ignore[arg-type]  # the engine's accessors
        self._dispatch = dispatcher.dispatch
        self.dispatcher.start(self.view)

    # ------------------------------------------------------------------ the passes
    def empty_queue_pass(self) -> bool:
        """Whether to call the dispatcher at a pass on an empty queue (no wake-up
        fired): its live ``call_on_empty_queue``, as the Python engine reads it."""
        try:
            return bool(self.dispatcher.call_on_empty_queue)
        except BaseException as exc:
            self.error = exc
            raise

    def run_pass(self, now: int, free_cores: int, changes: int, woken: bool,
                 submitted: tuple[int, ...], completed: tuple[int, ...],
                 reestimated: tuple[int, ...], new_ends: tuple[int, ...]
                 ) -> list[int] | tuple[list[Any], ...] | None:
        """One dispatch pass (called by the core; the arguments: ``rust/py/src/
        python_dispatcher.rs``): the dispatcher's decisions, checked, as ``(starts,
        rejects, wakes, withdraws)``, the list ``starts`` alone when it asks nothing
        else (node level: ``(starts, rejects, wakes, withdraws, allocations)``, one
        allocation ``(nodes, units)`` per start), or None when there are none."""
        try:
            if now != self.now:
                if self._pending_wakes:
                    self._fired(now)
                self.now = self.view.now = now
                self._profile = None
            self.free_cores, self.changes, self.woken = free_cores, changes, woken
            status = self._status
            for job in submitted:
                status[job] = _WAITING
            if completed or reestimated:
                self._profile = None
                for job in completed:
                    status[job] = STATUS_COMPLETED
                if not self.counting:
                    for job in completed:
                        alloc = self.allocations.pop(job)
                        self._free[alloc.nodes] += (alloc.counts[:, None]
                                                    * self.requests[job][None, :])
                est_end = self._est_end
                for job, end in zip(reestimated, new_ends, strict=True):
                    if end is not None:  # (None: it completed since, a learning
                        est_end[job] = end  # predictor's expiry)
            self._changed = (submitted, completed, reestimated)
            t0 = perf_counter()
            decisions = self._dispatch(self.view)
            self.decision_times.append(perf_counter() - t0)
            if not decisions and not self._wakes and not self._withdraws:
                return _NOTHING
            return self._decide(decisions, status)
        except BaseException as exc:
            self.error = exc
            raise

    def _decide(self, decisions: Any, status: array) -> list[int] | tuple[list[Any], ...]:
        """The decisions checked as the Python engine checks them, in order, as
        ``(starts, rejects, wakes, withdraws)`` (``starts`` alone when that is all)."""
        now = self.now
        starts: list[int] = []
        rejects: list[int] = []
        free = self.free_cores
        placed: list[tuple[list[int], list[int]]] = []
        for d in decisions or ():
            kind = type(d)
            if kind is Start:
                job = d.job
                if status[job] != _WAITING:
                    raise DispatchError(f"{self.dispatcher!r} started job "
                                        f"{int(self._job_id[job])}, which is not waiting")
                units = self._units[job]
                if self.counting:
                    if units > free:
                        raise DispatchError(f"{self.dispatcher!r} started job "
                                            f"{int(self._job_id[job])} ({units} cores) "
                                            f"with only {free} free")
                    free -= units
                else:
                    placed.append(self._place(job, d.allocation, units))
                row = job if job >= 0 else job + len(status)
                status[row] = STATUS_RUNNING
                self._start_at[row] = now
                est = self._est0[row]
                end = now + (est if est > 0 else 1)  # planned end: at least 1 s
                self._est_end[row] = end
                starts.append(row)
            elif kind is Reject:
                job = d.job
                if status[job] != _WAITING:
                    raise DispatchError(f"{self.dispatcher!r} rejected job "
                                        f"{int(self._job_id[job])}, which is not waiting")
                row = job if job >= 0 else job + len(status)
                status[row] = STATUS_REJECTED
                self.reject_reason[row] = d.reason
                rejects.append(row)
            elif kind is SetSpeed or kind is SetPower:
                what = ("changed the speed of" if kind is SetSpeed
                        else "changed the power level of")
                self._check_running(d.job, what)
                raise NotNativeDecision(f"{self.dispatcher!r} {what} job "
                                        f"{int(self._job_id[d.job])}: rate changes "
                                        "(SetSpeed, SetPower) are not native yet (run it "
                                        "with --engine python)")
            else:
                raise DispatchError(f"{self.dispatcher!r} returned {d!r}, not a decision")
        if starts:
            self._profile = None
        wakes, withdraws = self._wakes, self._withdraws
        if not self.counting:
            self._wakes, self._withdraws = [], []
            return starts, rejects, wakes, withdraws, placed
        if not rejects and not wakes and not withdraws:
            return starts  # (the common answer: starts only)
        self._wakes, self._withdraws = [], []
        return starts, rejects, wakes, withdraws

    def _place(self, job: int, alloc: Allocation | None, units: int
               ) -> tuple[list[int], list[int]]:
        """Take ``alloc`` for ``job`` after the Python engine's checks (node level):
        its allocation as lists ``(nodes, units)`` for the core."""
        if alloc is None or int(alloc.counts.sum()) != units or (alloc.counts <= 0).any():
            raise DispatchError(f"{self.dispatcher!r} started job "
                                f"{int(self._job_id[job])} without a valid allocation "
                                f"of its {units} units")
        used = alloc.counts[:, None] * self.requests[job][None, :]
        if len(np.unique(alloc.nodes)) != len(alloc.nodes) or \
                (self._free[alloc.nodes] < used).any():
            raise DispatchError(f"{self.dispatcher!r} allocated job "
                                f"{int(self._job_id[job])} beyond the free resources")
        self._free[alloc.nodes] -= used
        self.allocations[job] = alloc
        self.allocation_log[job] = alloc
        return alloc.nodes.tolist(), alloc.counts.tolist()

    def _fired(self, now: int) -> None:
        """Forget the wake-ups up to ``now``: they fired (or were withdrawn) before
        this pass."""
        for t in [t for t in self._pending_wakes if t <= now]:
            del self._pending_wakes[t]
            self._withdrawn_wakes.pop(t, None)

    def _check_running(self, job: int, what: str) -> None:
        if not 0 <= job < len(self._status):
            raise DispatchError(f"{self.dispatcher!r} {what} job row {job!r}: no such job")
        if self._status[job] != STATUS_RUNNING:
            raise DispatchError(f"{self.dispatcher!r} {what} job "
                                f"{int(self._job_id[job])}, which is not running")

    def waiting_rows(self) -> np.ndarray:
        """The jobs queued and never started nor rejected (after the run: the jobs the
        dispatcher left waiting forever)."""
        status = np.frombuffer(self._status, dtype=np.int8)
        return np.flatnonzero(status == _WAITING)

    # ------------------------------------------------ the engine's accessors (view)
    def queue_head(self, k: int) -> tuple[list[int], list[int], list[int]]:
        """The first ``k`` waiting jobs as lists ``(jobs, units, estimates)`` (``k`` as
        the Python engine slices its queue with it: ``jobs[:k]``)."""
        return self.queue.head(slice(None, k).indices(len(self.queue))[1])

    def queued_after(self, job: int) -> tuple[list[int], list[int], list[int]]:
        """The waiting jobs after row ``job`` as lists ``(jobs, units, estimates)``."""
        if type(job) is int and 0 <= job < len(self._status):
            return self.queue.after(job)
        buf = self.queue.columns()[0].tolist()  # any other value: compared with the
        rows = buf[bisect_right(buf, job):]     # rows as the Python engine compares it
        return (rows, [self._units[r] for r in rows], [self._est0[r] for r in rows])

    def estimated_end(self, job: int) -> int:
        """The raw planned end (s) of job row ``job`` while it runs (-1 before it
        starts)."""
        return self._est_end[job]

    def power_level(self, job: int) -> float:
        return 1.0

    def changes_since_pass(self) -> Changes:
        return Changes(*self._changed)

    def release_profile(self) -> CoreProfile | NodeProfile:
        """The running jobs' release profile now (cached until the time or the running
        set changes; the view hands out copies), as the Python engine builds it."""
        if self._profile is None:
            r = self.running
            if self.counting:
                self._profile = CoreProfile(self.now, r.ends, r.units, self.free_cores)
            else:
                jobs, _, ends = r.columns()
                if len(ends) and ends[0] < self.now:
                    ends = np.maximum(ends, self.now)
                allocations = self.allocations
                self._profile = NodeProfile.from_running(
                    self.now, self._free, ends, [allocations[j] for j in jobs.tolist()],
                    self.requests[jobs])
        return self._profile

    def next_cap_change(self) -> None:
        return None

    def node_power(self) -> np.ndarray:
        """Measured power per node now (W), as the Python engine computes it (every
        power level is 1 natively)."""
        if self.counting:
            raise DispatchError(f"{self.dispatcher!r} asked for node power in counting "
                                "mode (a core-only platform with one-core units: no "
                                "placement)")
        watts = self._require_power()
        out = np.zeros(self.capacity.shape[0], dtype=np.float64)
        jobs = self.running.columns()[0].tolist()
        if jobs:
            allocs = [self.allocations[j] for j in jobs]
            per_unit = [(0.0 if watts[j] != watts[j] else float(watts[j])) / self._units[j]
                        for j in jobs]
            nodes = np.concatenate([a.nodes for a in allocs])
            share = np.concatenate([a.counts * w for a, w in zip(allocs, per_unit,
                                                                  strict=True)])
            np.add.at(out, nodes, share)
        out.flags.writeable = False
        return out

    def _require_power(self) -> np.ndarray:
        if self.job_power_view is None:
            raise DispatchError(f"{self.dispatcher!r} reads measured job power, but the "
                                "jobs carry none (give job power: --power FILE or a "
                                "synthetic power file)")
        return self.job_power_view

    def running_power(self) -> float:
        watts = self._require_power()
        total = 0.0
        for j in self.running.columns()[0].tolist():
            w = watts[j]
            if w == w:
                total += float(w)
        return total

    def request_wakeup(self, t: int) -> None:
        if t <= self.now:
            raise DispatchError(f"{self.dispatcher!r} asked to wake at {t}, not after now "
                                f"({self.now})")
        self._pending_wakes[t] = self._pending_wakes.get(t, 0) + 1
        self._wakes.append(t)

    def withdraw_wakeup(self, t: int) -> None:
        left = self._pending_wakes.get(t, 0) - self._withdrawn_wakes.get(t, 0)
        if t <= self.now or left <= 0:
            raise DispatchError(f"{self.dispatcher!r} withdrew a wake-up at {t}, but none "
                                f"is pending then (now {self.now})")
        self._withdrawn_wakes[t] = self._withdrawn_wakes.get(t, 0) + 1
        self._withdraws.append(t)


def make_passes(platform: Platform, jobs: JobTable, dispatcher: Dispatcher,
                estimate: np.ndarray, total_cores: int) -> NativePasses:
    """The state of a native run of the Python ``dispatcher``, started with its view:
    its :meth:`~NativePasses.run_pass` is what the core calls at each pass, and its
    :meth:`~NativePasses.empty_queue_pass` at a pass on an empty queue when the
    dispatcher declares it may skip those."""
    return NativePasses(platform, jobs, dispatcher, estimate, total_cores)
