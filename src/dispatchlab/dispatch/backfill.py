"""Backfilling dispatchers: EASY (with K reservations) and conservative.

**EASY** (Mu'alem & Feitelson 2001), ``EASY()``. At each pass:

1. start jobs in queue order while they fit;
2. the first job that does not fit (the *head*) gets a reservation at its *shadow
   time*: the earliest time it fits, found by releasing running jobs in order of
   estimated end (an end already past counts as now; jobs started in step 1 release
   at ``now + max(estimate, 1)``). The *extra* capacity is what is free at the shadow
   time, counting every job whose estimated end is at or before it, minus what the head
   needs;
3. the rest of the queue is scanned in queue order (``order="sjf"``: by estimate,
   ties by queue order - EASY-SJBF; the head stays the oldest job). A job that fits now
   starts if ``now + max(estimate, 1) <= shadow``; otherwise it starts only if it also
   fits in the extra capacity, which it then consumes.

*Guarantee*: when estimates are exact, a backfilled job never delays the head's
reservation. Only the head is protected: other jobs may be delayed (unbounded).

**EASY with K reservations**, ``EASY(reservations=K)``: walking the queue in order,
each job gets the earliest reservation in the availability profile (running jobs plus
earlier reservations; see :mod:`dispatchlab.dispatch.profile`); a job whose
reservation is now and that physically fits starts now and does not count; the others
count as reserved until K jobs hold a reservation. Every later job (scanned in queue
or estimate order) starts now iff it fits now and in the profile over its planned
duration. ``reservations=1`` gives exactly the EASY schedule.

**Conservative**, ``Conservative()``: every waiting job gets a reservation, in queue
order, re-planned from scratch at every pass (EASY with K = infinity). A job starts
now when its reservation is now. *Guarantee*: with exact estimates no job is ever
started later than the first reservation it got.

*Knobs*: ``order`` ("fifo" | "sjf", the backfill scan order), ``reservations``
(1 <= K; EASY only), ``allocator`` (node-level platforms only), ``explain`` (record
every pass's shadow time, extra capacity and backfilled jobs in ``self.log_``).

*Reference and fast classes*: :class:`ReferenceEASY` and :class:`ReferenceConservative`
compute every pass from scratch as stated above, in plain loops (the classes to read,
and to copy for a variant; by name ``dispatchlab.dispatch.backfill:ReferenceEASY``).
:class:`EASY` and :class:`Conservative` (registered as ``easy`` and ``conservative``)
subclass them with the fast planners below and make the same decisions: the tests run
both classes (tests/dispatch/test_fast_paths.py, tests/dispatch/test_backfill_speed.py,
tests/dispatch/test_schedules.py).

*Speed* (the fast classes): on counting platforms the per-pass scans are numpy masks
over the queue's columns; the conservative planner stops as soon as no later job could
start now (none fits both the free cores and the profile's minimum over its window), keeps its plan
between passes when only submissions happened and starts each placement's scan at the
previous placement when that one is dominated; none of this changes a decision of the
pass (tests/dispatch/test_fast_paths.py compares with a plain from-scratch planner). On
node-level platforms the backfill candidates are screened with
vectorized fit counts (per distinct per-unit request) against the physical free
resources and the profile's running minimum before the allocator sees them, the head's
earliest breakpoint skips breakpoints where it cannot fit in total, and EASY keeps its
plan between passes when only submissions happened (see :meth:`_Backfill._plan_nodes`)
and finds its head's start from per-node release events kept between passes, without
a (release times x nodes x resources) profile (see :meth:`_Backfill._plan_nodes_easy`);
none of this changes a decision (tests/dispatch/test_backfill_speed.py compares with the plain
planner).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import ClassVar

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Nested
from dispatchlab.dispatch.allocation import Allocation
from dispatchlab.dispatch.allocators import (
    ALLOCATORS,
    Allocator,
    make_allocator,
    start_allocator,
)
from dispatchlab.dispatch.base import Decision, Dispatcher, Start, View
from dispatchlab.dispatch.orderings import (
    ORDERINGS,
    FifoOrder,
    Ordering,
    OrderKeys,
    SjfOrder,
    job_width,
    make_ordering,
)
from dispatchlab.dispatch.profile import (
    CoreProfile,
    NodeProfile,
    ReleaseEvents,
    fit_totals,
    node_fits,
    planned,
)
from dispatchlab.platform.queues import DEFAULT_EWT, job_ewt


def shadow_and_extra(free: int, need: int, ends, held,
                     started: Sequence[tuple[int, int]] = (),
                     complete: bool = True) -> tuple[int, int] | None:
    """EASY's shadow time and extra cores for a head needing ``need`` (> ``free``) cores.

    ``free``: cores free now; ``ends``/``held``: running jobs' effective ends (sorted,
    a list or an array) and cores; ``started``: (planned end, cores) of jobs started
    earlier in the same pass. Releasing all of them in time order, the shadow time is
    the first release time at which ``free`` plus the released cores reaches ``need``;
    the extra is that amount minus ``need``. One cumulative sum and a few binary
    searches (no sorting of the running jobs).

    ``complete=False`` says ``ends`` holds only the first running jobs to end (a
    prefix): the answer is returned only when it is certain from them (the shadow lies
    before the prefix's last end, or the prefix is every running job's), else None.
    """
    ends = ends.tolist() if isinstance(ends, np.ndarray) else ends
    held = held.tolist() if isinstance(held, np.ndarray) else held
    acc = list(accumulate(held, initial=free))  # acc[p] = free + held[:p]
    n_run, released, shadow = len(ends), 0, None
    for end, cores in [*sorted(started), (None, 0)]:
        # the first running end (before this started end) at which the head fits
        q = bisect_left(acc, need - released, 1)
        if q <= n_run and (end is None or ends[q - 1] < end):
            shadow = ends[q - 1]
            break
        if end is None:
            break
        released += cores
        if acc[bisect_right(ends, end)] + released >= need:
            shadow = end
            break
    if shadow is None or (not complete and not shadow < ends[-1]):
        if complete:
            raise ValueError(f"a head of {need} cores never fits ({free} free)")
        return None
    released_by_shadow = sum(c for e, c in started if e <= shadow)
    return shadow, acc[bisect_right(ends, shadow)] + released_by_shadow - need


#: the scopes of EASY's priority (see :class:`EASY`)
SCOPES = ("backfill", "queue")


class _Backfilling(Dispatcher):
    """Backfilling as its definition reads: the reference planner of EASY and
    conservative (the module docstring states the algorithm and its tie-breaks).

    Every pass is computed from scratch from the view, in plain loops: on a counting
    platform with one reservation the shadow time and extra cores of
    :func:`shadow_and_extra` (:meth:`_reference_easy`), otherwise an availability
    profile in which the first K waiting jobs (conservative: all of them) get their
    earliest reservation in turn, then the backfill scan (:meth:`_reference_cores`,
    :meth:`_reference_nodes`). It keeps no state between passes. The parameter
    checks, the orderings and the queue order are shared with the fast planners
    (:class:`_Backfill`), which make the same decisions."""

    order: str
    reservations: int | None
    allocator: str
    explain: bool
    #: the queue priority and where it applies (EASY's parameters; conservative keeps
    #: queue order everywhere)
    priority: str = "fifo"
    scope: str = "backfill"
    call_on_empty_queue = False

    nested: ClassVar[Nested] = {"allocator": ALLOCATORS, "order": ORDERINGS}

    def validate(self) -> None:
        if self.scope not in SCOPES:
            raise InputError(f"scope must be one of {', '.join(SCOPES)}, got {self.scope!r}",
                             field="scope")
        priority = make_ordering(self.priority, field="priority")
        fcfs = type(priority) is FifoOrder
        if isinstance(self.order, str) and self.order.lower() == "priority":
            if fcfs:
                raise InputError("order=priority needs a priority other than fcfs",
                                 field="order")
        else:
            order = make_ordering(self.order)
            if self.scope == "backfill" and not fcfs and type(order) is not FifoOrder:
                raise InputError("with scope=backfill the priority orders the backfill "
                                 "scan: give either order or priority, not both",
                                 field="order")
        make_allocator(self.allocator)
        if self.reservations is not None and (
            not isinstance(self.reservations, int) or self.reservations < 1
        ):
            raise InputError(f"reservations must be an integer >= 1, got {self.reservations!r}",
                             field="reservations")

    def start(self, view: View) -> None:
        self.validate()
        self.allocator_: Allocator = make_allocator(self.allocator)
        start_allocator(self.allocator_, view)
        self.priority_: Ordering = make_ordering(self.priority, field="priority")
        self.priority_.start(view)
        #: the queue is sorted by the priority (scope=queue with a priority other than
        #: fcfs): the head and the reservations follow it
        self.by_priority_ = self.scope == "queue" and type(self.priority_) is not FifoOrder
        if isinstance(self.order, str) and self.order.lower() == "priority":
            self.ordering_: Ordering = self.priority_
        elif self.scope == "backfill" and type(self.priority_) is not FifoOrder:
            self.ordering_ = self.priority_  # the priority orders the backfill scan
        else:
            self.ordering_ = make_ordering(self.order)
            self.ordering_.start(view)
        kind = type(self.ordering_)
        self._order_kind = ("fifo" if kind is FifoOrder else "sjf" if kind is SjfOrder
                            else "keys")
        if self._order_kind == "keys" or self.by_priority_:  # keys need EWTs and demands
            self.ewt_ = job_ewt(view.jobs, view.platform, DEFAULT_EWT)
            self.width_ = job_width(view.requests, view.jobs["units"],
                                    view.capacity.sum(axis=0))
        self.log_: list[dict] = []

    def _order_positions(self, view: View, rows, ests) -> np.ndarray | None:
        """The backfill scan order of the candidates ``rows`` (queue order) with
        estimates ``ests``: positions into them, or None for queue order (``fifo``).
        ``sjf`` is a stable sort by estimate; another ordering gets its keys at now
        (queues missing from the platform's EWT table count 1800 s)."""
        kind = self._order_kind
        if kind == "fifo":
            return None
        ests = np.asarray(ests, dtype=np.int64)
        if kind == "sjf":
            return np.argsort(ests, kind="stable")
        return self._sort(view, self.ordering_, rows, ests)

    def _sort(self, view: View, ordering: Ordering, rows, ests) -> np.ndarray:
        """Positions of the jobs ``rows`` (queue order, estimates ``ests``) in
        ``ordering``'s order, keys evaluated at now."""
        rows = np.asarray(rows, dtype=np.int64)
        ests = np.asarray(ests, dtype=np.int64)
        keys = OrderKeys(rows, int(view.now), view.jobs["submit"][rows], ests,
                         self.ewt_[rows], ests * self.width_[rows])
        return np.asarray(ordering.sort(keys), dtype=np.int64)

    def _queue_columns(self, view: View):
        """The waiting jobs ``(jobs, units, estimates)`` in reservation order: queue
        order, or the priority's order when the queue is sorted by it."""
        jobs, units, est, _ = view.queue
        if self.by_priority_ and len(jobs) > 1:
            perm = self._sort(view, self.priority_, jobs, est)
            return jobs[perm], units[perm], est[perm]
        return jobs, units, est

    def _rest_in_queue_order(self, view: View, jobs, est, i: int) -> np.ndarray:
        """Positions ``i..`` of the reservation-ordered columns, put back in queue order
        (ascending job row) and then in the backfill scan order."""
        rest = np.arange(i, len(jobs))
        if self.by_priority_:
            rest = rest[np.argsort(jobs[i:], kind="stable")]
        pos = self._order_positions(view, jobs[rest], est[rest])
        return rest if pos is None else rest[pos]

    def dispatch(self, view: View) -> list[Decision]:
        if view.queue_length == 0:
            return []
        if view.counting and self.reservations == 1:
            return self._reference_easy(view)
        if view.counting:
            return self._reference_cores(view)
        return self._reference_nodes(view)

    def _reservations(self, view: View) -> int:
        """K: how many waiting jobs hold a reservation (conservative: every one)."""
        return self.reservations if self.reservations is not None else view.queue_length + 1

    def _reference_easy(self, view: View) -> list[Decision]:
        """EASY on a counting platform (module docstring, steps 1-3)."""
        now = view.now
        jobs, units, est = self._queue_columns(view)
        free = view.free_cores
        out: list[Decision] = []
        i = 0
        while i < len(jobs) and units[i] <= free:  # 1. start in order while they fit
            free -= int(units[i])
            out.append(Start(int(jobs[i])))
            i += 1
        if i == len(jobs):
            return out
        # 2. the head's shadow time and the extra cores, releasing the running jobs and
        # the jobs just started in order of estimated end
        head, need = int(jobs[i]), int(units[i])
        started = [(now + planned(int(est[p])), int(units[p])) for p in range(i)]
        running = view.running
        found = shadow_and_extra(free, need, running.est_end, running.units, started)
        assert found is not None  # complete: every running job is given
        shadow, extra = found
        # 3. the backfill scan: the jobs after the head, in the scan order
        backfilled: list[int] = []
        for p in self._rest_in_queue_order(view, jobs, est, i + 1).tolist():
            if free <= 0:
                break
            u = int(units[p])
            if u > free:
                continue
            if now + planned(int(est[p])) <= shadow:  # ends by the shadow time
                free -= u
            elif u <= extra:  # or fits in the extra cores, which it consumes
                free -= u
                extra -= u
            else:
                continue
            backfilled.append(int(jobs[p]))
            out.append(Start(int(jobs[p])))
        if self.explain:
            self.log_.append({"now": now, "head": head, "shadow": shadow, "extra": extra,
                              "backfilled": backfilled, "reservations": [(head, shadow)],
                              "started": [d.job for d in out]})
        return out

    def _reference_cores(self, view: View) -> list[Decision]:
        """EASY with K reservations and conservative on a counting platform: walking the
        queue (reservation order), each job takes its earliest fit in the profile
        (running jobs and earlier reservations) and starts there when that is now and
        it physically fits, else holds that reservation, until K jobs hold one; every
        later job, in the scan order, starts now iff it fits the free cores and the
        profile over its planned window ``[now, now + max(estimate, 1))``."""
        now, k = view.now, self._reservations(view)
        jobs, units, est = self._queue_columns(view)
        free = view.free_cores
        prof = view.release_profile()
        assert isinstance(prof, CoreProfile)  # a counting platform's
        out: list[Decision] = []
        reserved: list[tuple[int, int]] = []
        i = 0
        while i < len(jobs) and len(reserved) < k:
            job, u, d = int(jobs[i]), int(units[i]), planned(int(est[i]))
            i += 1
            t = prof.earliest(u, d)
            prof.reserve(t, d, u)
            if t == now and u <= free:
                free -= u
                out.append(Start(job))
            else:
                reserved.append((job, t))
        for p in self._rest_in_queue_order(view, jobs, est, i).tolist():
            u, d = int(units[p]), planned(int(est[p]))
            if u <= free and prof.min_over(now, d) >= u:
                prof.reserve(now, d, u)
                free -= u
                out.append(Start(int(jobs[p])))
        if self.explain:
            self.log_.append({"now": now, "reservations": reserved,
                              "started": [d.job for d in out], "profile": prof.rows()})
        return out

    def _reference_nodes(self, view: View) -> list[Decision]:
        """:meth:`_reference_cores` on a node-level platform: a job's earliest fit is
        the first breakpoint of the profile (free resources per node over time) at which
        the allocator places it for its planned duration; it starts now when that is now
        and the allocator also places it in the physically free resources (the minimum
        of both over its window), which it then takes; a backfill candidate starts now
        iff the allocator places it so."""
        now, k = view.now, self._reservations(view)
        jobs, units, est = self._queue_columns(view)
        reqs = view.requests
        physical = view.free.copy()
        prof = view.release_profile()
        assert isinstance(prof, NodeProfile)  # a node-level platform's
        out: list[Decision] = []
        reserved: list[tuple[int, int]] = []

        def start_now(job: int, u: int, d: int) -> bool:
            alloc = self.allocator_.allocate(reqs[job], u,
                                             np.minimum(physical, prof.window_min(now, d)))
            if alloc is None:
                return False
            used = alloc.matrix(reqs[job], len(physical))
            prof.reserve(now, d, used)
            physical[...] -= used
            out.append(Start(job, alloc))
            return True

        i = 0
        while i < len(jobs) and len(reserved) < k:
            job, u, d = int(jobs[i]), int(units[i]), planned(int(est[i]))
            i += 1
            t, alloc = prof.earliest(self.allocator_, reqs[job], u, d)
            if not (t == now and start_now(job, u, d)):
                prof.reserve(t, d, alloc.matrix(reqs[job], len(physical)))
                reserved.append((job, t))
        for p in self._rest_in_queue_order(view, jobs, est, i).tolist():
            start_now(int(jobs[p]), int(units[p]), planned(int(est[p])))
        if self.explain:
            self.log_.append({"now": now, "reservations": reserved,
                              "started": [d.job for d in out]})
        return out


class ReferenceEASY(_Backfilling):
    """EASY backfilling, the reference: ``reservations=K`` protects the first K waiting
    jobs. The plain planner of :class:`_Backfilling`; :class:`EASY` (registered as
    ``easy``) is its fast subclass, pinned to it by the same tests. Reachable by name
    as ``dispatchlab.dispatch.backfill:ReferenceEASY``."""

    name = "easy-reference"

    nested: ClassVar[Nested] = {"allocator": ALLOCATORS, "order": ORDERINGS,
                                "priority": ORDERINGS}

    def __init__(self, order: str = "fifo", reservations: int = 1,
                 allocator: str = "first-fit", explain: bool = False,
                 priority: str = "fcfs", scope: str = "backfill") -> None:
        self.order = order
        self.reservations = reservations
        self.allocator = allocator
        self.explain = explain
        self.priority = priority
        self.scope = scope


class ReferenceConservative(_Backfilling):
    """Conservative backfilling, the reference: every waiting job holds a reservation.
    The plain planner of :class:`_Backfilling`; :class:`Conservative` (registered as
    ``conservative``) is its fast subclass, pinned to it by the same tests. Reachable
    by name as ``dispatchlab.dispatch.backfill:ReferenceConservative``."""

    name = "conservative-reference"

    def __init__(self, order: str = "fifo", allocator: str = "first-fit",
                 explain: bool = False) -> None:
        self.order = order
        self.allocator = allocator
        self.explain = explain

    # no such parameter: a read-only None (assigning it fails), where the base declares
    # the writable attribute that ReferenceEASY's __init__ sets (hence the ignore)
    @property
    def reservations(self) -> None:  # type: ignore[override]
        return None


# ------------------------------------------------------------------ the fast planners
def _last_candidate(prof: CoreProfile, now: int, free: int, units: list[int],
                    ests: list[int], i: int, last: int) -> int:
    """The index of the last job among ``i..last`` whose units fit the free cores and
    the profile's minimum over ``[now, now + planned duration)``, or ``i - 1`` when none
    does (``units``, ``ests``: the whole queue's).

    Both limits only shrink during a pass (starts take free cores, reservations lower
    the profile), so a job that fails once fails for the rest of the pass: the scan
    walks down from ``last`` and stops at the first job that passes, and the rejected
    tail is never looked at again."""
    if free <= 0:
        return i - 1
    times, levels = prof.times, prof.free
    c = last
    while c >= i and units[c] > free:
        c -= 1
    if c < i:
        return i - 1
    # the first profile test on a slice: the previous last candidate usually passes
    e = ests[c]
    if units[c] <= min(levels[: bisect_left(times, now + (e if e > 0 else 1))]):
        return c
    c -= 1
    pm = list(accumulate(levels, min))  # more tests: the running minimum, once
    while c >= i:
        u = units[c]
        if u <= free:
            e = ests[c]
            if u <= pm[bisect_left(times, now + (e if e > 0 else 1)) - 1]:
                return c
        c -= 1
    return i - 1


def _fit_now(prof: NodeProfile, physical: np.ndarray, now: int, requests: np.ndarray,
             units: np.ndarray, durs: np.ndarray) -> np.ndarray:
    """For each job (per-unit ``requests``, ``units``, planned durations ``durs``),
    whether its units fit in total (:func:`fit_totals`) in the physical free resources
    and ``prof``'s minimum over ``[now, now + durs[c])``: a necessary condition for
    starting now, whatever the allocator.

    When the windows are few (EASY's profile of two breakpoints: at most three), each
    window's per-node counts are computed once per distinct request among its jobs
    (:func:`node_fits`) and then clipped per job: O(windows x requests x N x R + jobs
    x N) instead of O(jobs x N x R); the same counts."""
    times = np.asarray(prof.times, dtype=np.int64)
    idx = np.maximum(np.searchsorted(times, now + durs, side="left"), 1) - 1
    rmin = prof.running_min()
    windows = np.unique(idx)
    if len(windows) > _FEW_WINDOWS or len(units) < 2:
        window = np.minimum(physical[None, :, :], rmin[idx])
        return fit_totals(requests, units, window) >= units
    out = np.empty(len(units), dtype=bool)
    for w in windows.tolist():
        sel = np.flatnonzero(idx == w) if len(windows) > 1 else np.arange(len(units))
        u = units[sel]
        distinct, inv = np.unique(requests[sel], axis=0, return_inverse=True)
        per = node_fits(distinct, np.minimum(physical, rmin[w]), int(u.max()))
        out[sel] = np.minimum(per[inv.reshape(-1)], u[:, None]).sum(axis=1) >= u
    return out


#: :func:`_fit_now` groups its jobs by window when they have at most this many
_FEW_WINDOWS = 3


def _last_node_candidate(prof: NodeProfile, physical: np.ndarray, now: int,
                         requests: np.ndarray, units: np.ndarray, durs: np.ndarray,
                         i: int, last: int) -> int:
    """The index of the last job among ``i..last`` that passes :func:`_fit_now`, or
    ``i - 1`` when none does (``requests``, ``units``, ``durs``: the queue's, in plan
    order). ``last`` alone is tested first (it usually still passes, and one window
    needs no running minimum); else the jobs before it at once."""
    if last < i:
        return last
    window = np.minimum(physical, prof.window_min(now, int(durs[last])))
    if fit_totals(requests[last : last + 1], units[last : last + 1], window)[0] >= units[last]:
        return last
    sel = slice(i, last)
    hit = np.flatnonzero(_fit_now(prof, physical, now, requests[sel], units[sel], durs[sel]))
    return i + int(hit[-1]) if len(hit) else i - 1


#: the built-in allocators (see :meth:`_Backfill._node_plan_kept`)
_BUILTIN_ALLOCATORS = frozenset(ALLOCATORS.values())


class _Backfill(_Backfilling):
    """The fast planners of :class:`EASY` and :class:`Conservative` (module docstring,
    *Speed*): the decisions of the reference planner of :class:`_Backfilling`, with
    state kept between passes."""

    #: EASY with the queue sorted by a static priority: the head's estimate at the pass
    #: that cached it (set whenever :meth:`_easy_priority_counting` caches a pass)
    _head_est: int

    def start(self, view: View) -> None:
        super().start(view)
        self._cache: tuple | None = None
        #: conservative: the waiting jobs after the previous pass (see
        #: :meth:`_conservative_counting`)
        self._queue: tuple | None = None
        #: node level: the distinct per-unit requests and each job's class (see
        #: :meth:`_backfill_nodes`)
        self._req_classes: tuple[np.ndarray, np.ndarray] | None = None
        #: node-level EASY: the running jobs' release events kept between passes (see
        #: :meth:`_release_events`)
        self._held: tuple | None = None

    def dispatch(self, view: View) -> list[Decision]:
        n = view.queue_length
        if n == 0:
            return []
        k = self.reservations if self.reservations is not None else n + 1
        if not view.counting:
            return self._plan_nodes(view, k)
        if k == 1:
            if self.by_priority_:
                return self._easy_priority_counting(view, n)
            return self._easy_counting(view, n)
        if self.reservations is None and not self.explain:
            return self._conservative_counting(view)
        return self._plan_counting(view, k)

    # ------------------------------------------------------------ conservative, counting
    def _conservative_counting(self, view: View) -> list[Decision]:
        """Conservative backfilling on a counting platform, with the decisions of
        :meth:`_plan_counting` (every job reserved in queue order, from scratch) at a
        fraction of the cost:

        * **stop at the last candidate.** A job can start now only if it fits the free
          cores and the profile's minimum over ``[now, now + duration)``; reservations
          only lower the profile, so once no later job passes that test no later
          decision can change: planning stops after the last job that passes it
          (re-tested after every start and every reservation that overlaps that
          job's window, walking down from it: see :func:`_last_candidate`).
        * **start the scan at a known bound.** A job with at least the units and the
          duration of the job placed just before it cannot be placed earlier than
          that one (see :meth:`~dispatchlab.dispatch.profile.CoreProfile.place`).
        * **keep the plan between passes** when only submissions happened (no
          completion, new estimate, rejection or expired estimate, and the same free
          cores): a from-scratch plan would reserve the old jobs exactly where they
          are (the running jobs' releases are the same and no breakpoint lies between
          the two passes), so the kept profile is advanced to now and only the jobs
          not planned yet (left by the stop rule, and the new ones) are planned.
        * **keep the queue between passes**: the waiting jobs' ``(rows, units,
          estimates)`` lists are the previous pass's minus the jobs it started plus
          the jobs queued since (:meth:`View.queued_after`): a waiting job leaves the
          queue only by a decision, and conservative's are starts. Checked against the
          queue's length; the engine's lists are read again when it differs.
        """
        now = view.now
        free = view.free_cores
        kept, queue = self._cache, self._queue
        if queue is None:
            rows, units, ests = view.queue_head(view.queue_length)
            last_job = -1
        else:
            rows, units, ests, last_job = queue
            if len(rows) < view.queue_length:  # jobs were queued since
                new_rows, new_units, new_ests = view.queued_after(last_job)
                rows += new_rows
                units += new_units
                ests += new_ests
            if len(rows) != view.queue_length:  # not only starts left the queue
                rows, units, ests = view.queue_head(view.queue_length)
                kept = None
        first_end = view.first_estimated_end()
        if kept is not None and kept[0] == view.changes and kept[1] == free and \
                (first_end is None or first_end > now):
            _, _, prof, i = kept
            prof.times[0] = now  # no breakpoint lies in (previous pass, now]
        else:
            prof = view.release_profile()
            i = 0
        out: list[Decision] = []
        started: list[int] = []
        last = _last_candidate(prof, now, free, units, ests, i, len(rows) - 1)
        place, times, levels = prof.place, prof.times, prof.free
        pu, pd, pt = -1, -1, now  # the previous placement: a lower bound if dominated
        while i <= last:
            u, d = units[i], ests[i]
            if d <= 0:
                d = 1  # the planning duration (see planned)
            t = place(u, d, pt if u >= pu and d >= pd else None)
            pu, pd, pt = u, d, t
            if t == now and u <= free:
                free -= u
                out.append(Start(rows[i]))
                started.append(i)
                i += 1
                last = _last_candidate(prof, now, free, units, ests, i, last)
                continue
            i += 1
            if i <= last:
                e = ests[last]
                stop = now + (e if e > 0 else 1)
                # the reservation overlaps the last candidate's window: test it again
                # (here when it still passes, else walk down from the job before it)
                if t < stop and not units[last] <= min(levels[: bisect_left(times, stop)]):
                    last = _last_candidate(prof, now, free, units, ests, i, last - 1)
        if rows:
            last_job = rows[-1]  # the latest job queued (rows ascend in the queue)
        for k in reversed(started):
            del rows[k], units[k], ests[k]
        self._queue = (rows, units, ests, last_job)
        self._cache = (view.changes, free, prof, i - len(started))
        return out

    # ------------------------------------------------------------------ EASY, counting
    #: queues up to this length are handled with plain Python lists, longer ones with
    #: numpy masks; both give the same decisions (the tests run both)
    small_queue: int = 64

    def _submissions_only(self, view: View):
        """When only submissions happened since the previous pass (no completion, new
        estimate or expiring estimate): ``(the cached pass, (rows, units, estimates) of
        the jobs queued since)``; else None."""
        cache = self._cache
        if cache is None or cache[0] != view.changes:
            return None
        first_end = view.first_estimated_end()
        if first_end is None or first_end <= view.now:
            return None
        return cache, view.queued_after(cache[6])

    def _scan_new(self, view: View, cache: tuple, rows, units, ests) -> list[Decision]:
        """The backfill scan of the jobs queued since the cached pass only."""
        _, head, need, shadow, extra, free, _ = cache
        if shadow is None and min(units) <= free:
            # not computed at the previous pass (nothing could use it): the running jobs
            # are the same, so it is the same now
            shadow, extra = self._shadow(view, free, need, [])
        return self._scan(view, rows, units, ests, free, shadow, extra, [], head, need)

    def _easy_counting(self, view: View, n: int) -> list[Decision]:
        now = view.now
        # Shortcut: if only submissions happened since the previous pass (no completion,
        # no new estimate, no estimate running out), every job already in the queue fails
        # again (free cores and extra capacity are unchanged and ``now + d <= shadow`` only
        # gets harder), so only the new jobs need scanning.
        new = self._submissions_only(view)
        if new is not None:
            cache, (rows, units, ests) = new
            return self._scan_new(view, cache, rows, units, ests) if rows else []
        self._cache = None
        free = view.free_cores
        out: list[Decision] = []
        if n <= self.small_queue:
            rows, units, ests = view.queue_head(n)
            i = 0
            while i < n and units[i] <= free:
                free -= units[i]
                out.append(Start(rows[i]))
                i += 1
        else:
            rows_a, units_a, est_a, _ = view.queue
            i = int((units_a.cumsum() > free).argmax()) if units_a[0] <= free else 0
            if i == 0 and units_a[0] <= free:  # everything fits
                i = n
            out.extend([Start(j) for j in rows_a[:i].tolist()])
            free -= int(units_a[:i].sum())
            rows, units, ests = rows_a, units_a, est_a
        if i == n:
            return out
        head = int(rows[i])
        last_job = int(rows[-1])
        need = int(units[i])
        rest_units = units[i + 1 :]
        if not self.explain and (free <= 0 or not len(rest_units) or (
                rest_units.min() if isinstance(rest_units, np.ndarray) else min(rest_units)
        ) > free):
            # no job after the head fits now: the shadow time is not needed (yet)
            self._cache = (view.changes, head, need, None, 0, free, last_job)
            return out
        started = [(now + max(int(e), 1), int(u)) for e, u in
                   zip(ests[:i], units[:i], strict=True)]
        shadow, extra = self._shadow(view, free, need, started)
        return self._scan(view, rows[i + 1 :], rest_units, ests[i + 1 :], free, shadow,
                          extra, out, head, need, last_job)

    def _easy_priority_counting(self, view: View, n: int) -> list[Decision]:
        """EASY with the queue sorted by the priority (``scope="queue"``), counting
        platform: jobs start from the top of the priority order while they fit; the
        first that does not fit is the head and gets the reservation; the others are
        the backfill candidates, scanned in ``order`` (``fifo`` = queue order).

        The shortcut after only submissions (scan just the new jobs) holds when the
        priority is static and the head outranks every new job: the head and the
        failed candidates are then the same as at the previous pass."""
        now = view.now
        new = self._submissions_only(view) if self.priority_.static else None
        if new is not None:
            cache, (rows, units, ests) = new
            if not rows:
                return []
            rank = self._sort(view, self.priority_, [cache[1], *rows],
                              [self._head_est, *ests])
            if rank[0] == 0:  # the head still comes first
                return self._scan_new(view, cache, rows, units, ests)
        self._cache = None
        free = view.free_cores
        jobs, units, est = self._queue_columns(view)
        last_job = int(view.queue.jobs[-1])
        i = int(np.searchsorted(np.cumsum(units), free, side="right"))
        out: list[Decision] = [Start(j) for j in jobs[:i].tolist()]
        free -= int(units[:i].sum())
        if i == n:
            return out
        head, need = int(jobs[i]), int(units[i])
        self._head_est = int(est[i])
        rest = i + 1 + np.argsort(jobs[i + 1 :], kind="stable")  # back to queue order
        r_jobs, r_units, r_est = jobs[rest], units[rest], est[rest]
        static = self.priority_.static
        if not self.explain and (free <= 0 or not len(r_units) or r_units.min() > free):
            self._cache = (view.changes, head, need, None, 0, free, last_job) if static \
                else None
            return out
        started = [(now + max(int(e), 1), int(u)) for e, u in
                   zip(est[:i].tolist(), units[:i].tolist(), strict=True)]
        shadow, extra = self._shadow(view, free, need, started)
        out = self._scan(view, r_jobs, r_units, r_est, free, shadow, extra, out, head, need,
                         last_job)
        assert self._cache is not None  # _scan caches every pass it scans
        # the rest is in queue order, but the queue's last job may be above the head
        self._cache = (*self._cache[:6], last_job) if static else None
        return out

    #: how many of the first running jobs EASY walks in Python to find the shadow time
    #: before it falls back to numpy over all of them (same result either way)
    shadow_walk: int = 64

    def _shadow(self, view: View, free: int, need: int,
                started: list[tuple[int, int]]) -> tuple[int, int]:
        """EASY's shadow time and extra cores (see :func:`shadow_and_extra`).

        Usually the first few jobs to end release enough: try them first, then all
        running jobs."""
        k_max = self.shadow_walk
        ends, held = view.running_head(k_max)
        if ends:
            found = shadow_and_extra(free, need, ends, held, started,
                                     complete=len(ends) < k_max)
            if found is not None:
                return found
        running = view.running
        found = shadow_and_extra(free, need, running.est_end, running.units, started)
        assert found is not None  # complete: every running job is given
        return found

    def _scan(self, view: View, rows, units, ests, free: int, shadow: int | None,
              extra: int, out: list[Decision], head: int, need: int,
              last_job: int | None = None) -> list[Decision]:
        """EASY's backfill scan over the jobs after the head (lists or numpy arrays, in
        queue order; ``order="sjf"`` scans them by estimate, ties by queue order)."""
        now = view.now
        n = len(rows)
        backfilled: list[int] = []
        if free > 0 and n and shadow is not None:
            if n <= self.small_queue:
                if not isinstance(rows, list):
                    rows, units, ests = rows.tolist(), units.tolist(), ests.tolist()
                pos = self._order_positions(view, rows, ests)
                order = range(n) if pos is None else pos.tolist()
                for p in order:
                    u = units[p]
                    if u > free:
                        continue
                    e = ests[p]
                    if now + (e if e > 0 else 1) <= shadow:
                        free -= u
                    elif u <= extra:
                        free -= u
                        extra -= u
                    else:
                        continue
                    backfilled.append(rows[p])
                    if free == 0:
                        break
            else:
                free, extra = self._scan_numpy(
                    now, np.asarray(rows), np.asarray(units), np.asarray(ests), free, shadow,
                    extra, backfilled, self._order_positions(view, rows, ests))
            if backfilled:
                out.extend([Start(int(j)) for j in backfilled])
        if self.explain:
            self.log_.append({"now": now, "head": head, "shadow": shadow, "extra": extra,
                              "backfilled": backfilled, "reservations": [(head, shadow)],
                              "started": [d.job for d in out]})
        # what the next pass may reuse if only submissions happen before it
        last = int(rows[-1]) if n else last_job
        self._cache = (view.changes, head, need, shadow, extra, free,
                       last if last is not None else head)
        return out

    def _scan_numpy(self, now: int, rows: np.ndarray, units: np.ndarray, ests: np.ndarray,
                    free: int, shadow: int, extra: int, backfilled: list[int],
                    order: np.ndarray | None) -> tuple[int, int]:
        """The backfill scan with numpy masks (long queues) in ``order`` (positions,
        None: queue order); appends to ``backfilled``."""
        if order is not None:
            rows, units, ests = rows[order], units[order], ests[order]
        ends_before = now + np.maximum(ests, 1) <= shadow
        pos = 0
        while free > 0:
            # candidates under the current free cores and extra capacity (the first few:
            # starts shrink free/extra, and then we re-filter)
            u_sub, eb_sub = units[pos:], ends_before[pos:]
            cand = ((u_sub <= free) & (eb_sub | (u_sub <= extra))).nonzero()[0][:32]
            if len(cand) == 0:
                break
            base = pos
            pos = base + int(cand[-1]) + 1
            for c, u, short in zip((cand + base).tolist(), u_sub[cand].tolist(),
                                   eb_sub[cand].tolist(), strict=True):
                if u > free or (not short and u > extra):
                    pos = c  # starts above shrank free/extra: re-filter from here
                    break
                free -= u
                if not short:
                    extra -= u
                backfilled.append(int(rows[c]))
                if free == 0:
                    break
        return free, extra

    # ------------------------------------------------------------- K reservations, counting
    def _plan_counting(self, view: View, k: int) -> list[Decision]:
        now = view.now
        jobs, units, est = self._queue_columns(view)
        n = len(jobs)
        free = view.free_cores
        prof = view.release_profile()
        assert isinstance(prof, CoreProfile)  # a counting platform's
        smallest_after = np.minimum.accumulate(units[::-1])[::-1]
        out: list[Decision] = []
        reserved: list[tuple[int, int]] = []
        i = 0
        while i < n and len(reserved) < k:
            if min(free, prof.free[0]) < smallest_after[i]:
                self._log(now, reserved, out)
                return out  # no later job can start now: the rest changes no decision
            u = int(units[i])
            d = planned(int(est[i]))
            t = prof.place(u, d)
            if t == now and u <= free:
                free -= u
                out.append(Start(int(jobs[i])))
            else:
                reserved.append((int(jobs[i]), t))
            i += 1
        if i < n and free > 0:
            rest = self._rest_in_queue_order(view, jobs, est, i)
            u_rest = units[rest]
            stop = now + np.maximum(est[rest], 1)
            pos = 0
            while free > 0 and pos < len(rest):
                fits = (u_rest[pos:] <= free) & (u_rest[pos:] <= prof.prefix_min_until(stop[pos:]))
                hit = np.flatnonzero(fits)
                if len(hit) == 0:
                    break
                c = pos + int(hit[0])
                u = int(u_rest[c])
                prof.reserve(now, int(stop[c]) - now, u)
                free -= u
                out.append(Start(int(jobs[rest[c]])))
                pos = c + 1
        self._log(now, reserved, out, prof)
        return out

    def _log(self, now: int, reserved: list, out: list, prof: CoreProfile | None = None) -> None:
        if self.explain:
            self.log_.append({"now": now, "reservations": list(reserved),
                              "started": [d.job for d in out],
                              "profile": prof.rows() if prof is not None else None})

    # ---------------------------------------------------------------- node level (any K)
    #: keep EASY's node-level plan between passes when only submissions happened (see
    #: :meth:`_plan_nodes`; False: plan every pass from scratch, same decisions)
    keep_node_plan: bool = True

    def _node_plan_kept(self, view: View, k: int) -> bool:
        """Whether a pass of node-level EASY may reuse the previous pass's plan: one
        reservation, the queue in queue order, a fifo or sjf scan, no log, a built-in
        allocator (they place a job iff its units fit in total, so a job that does not
        fit still does not with fewer free resources)."""
        return (self.keep_node_plan and k == 1 and not self.by_priority_
                and not self.explain and self._order_kind in ("fifo", "sjf")
                and type(self.allocator_) in _BUILTIN_ALLOCATORS)

    def _plan_nodes(self, view: View, k: int) -> list[Decision]:
        """Reservations in queue order (the first ``k`` jobs that do not start now),
        then the backfill scan of the rest (:meth:`_backfill_nodes`).

        **Kept plan** (EASY, :meth:`_node_plan_kept`): after a pass that started no job
        and reserved the head later than now, if only submissions happened since (no
        completion, new estimate or rejection, no running job's estimated end reached,
        so the same running jobs release at the same times and the physical free
        resources are the same), a plan from scratch would give the head the same
        reservation (every window from now holds the previous one's, so the head
        fits no earlier; later windows are the same) and every job scanned before
        fails again (its window from now only gains breakpoints, so it is no larger):
        only the jobs queued since are scanned, in the kept profile moved to now
        (no breakpoint lies between the two passes)."""
        kept, self._cache = self._cache, None
        if kept is not None and kept[0] == view.changes and self._node_plan_kept(view, k):
            first_end = view.first_estimated_end()
            if first_end is not None and first_end > view.now:
                _, prof, last_job = kept
                new_rows, new_units, new_ests = view.queued_after(last_job)
                if not new_rows:
                    self._cache = kept
                    return []
                rows = np.asarray(new_rows, dtype=np.int64)
                units = np.asarray(new_units, dtype=np.int64)
                ests = np.asarray(new_ests, dtype=np.int64)
                pos = self._order_positions(view, rows, ests)
                if pos is not None:
                    rows, units, ests = rows[pos], units[pos], ests[pos]
                prof.times[0] = view.now
                out: list[Decision] = []
                self._backfill_nodes(view, prof, view.free.copy(), rows, units, ests, out)
                if not out:
                    self._cache = (kept[0], prof, max(int(rows.max()), last_job))
                return out
        return self._plan_nodes_full(view, k)

    #: node-level conservative: stop planning after the last job that can still start
    #: now (False: reserve every waiting job; same decisions, the tests run both)
    stop_node_plan: bool = True
    #: node-level EASY: find the head's start from the running jobs' per-node release
    #: events (:class:`~dispatchlab.dispatch.profile.ReleaseEvents`) and backfill in a
    #: profile of two breakpoints (see :meth:`_plan_nodes_easy`; False: the stacked
    #: release profile of the engine; same decisions, the tests run both)
    sparse_head: bool = True

    def _release_events(self, view: View) -> ReleaseEvents:
        """The running jobs' :class:`~dispatchlab.dispatch.profile.ReleaseEvents`, their
        per-node events kept between passes: a job's are read (its allocation times its
        per-unit request) once, at the first pass that sees it running, and dropped,
        vectorized, at the first pass that does not; times are the current effective
        estimated ends. Per pass: O(running jobs + events) in numpy, and Python only
        for the jobs started since the previous pass."""
        running = view.running
        reqs = view.requests
        held = self._held
        if held is None or held[0].shape[0] != reqs.shape[0]:
            n_jobs, n_res = reqs.shape
            held = self._held = (np.full(n_jobs, -1, dtype=np.int64),  # start when read
                                 np.zeros(n_jobs, dtype=np.int64),  # effective end
                                 np.zeros(n_jobs, dtype=bool),  # a mark, kept all False
                                 [np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64),
                                  np.empty((0, n_res), dtype=np.int64)])
        read_at, end_of, mark, (owner, nodes, freed) = held
        jobs, start = running.jobs, running.start
        end_of[jobs] = running.est_end
        new = read_at[jobs] != start  # not read yet (or started again)
        fresh = jobs[new]
        mark[jobs] = True
        mark[fresh] = False  # their old events, if any, go too
        keep = mark[owner]
        mark[jobs] = False
        if not keep.all():
            owner, nodes, freed = owner[keep], nodes[keep], freed[keep]
        if len(fresh):
            allocs: list[Allocation] = []
            for j in fresh.tolist():
                alloc = view.allocation(j)
                assert alloc is not None  # a running job on a node-level platform
                allocs.append(alloc)
            sizes = np.fromiter((len(a.nodes) for a in allocs), dtype=np.int64,
                                count=len(allocs))
            new_owner = np.repeat(fresh, sizes)
            counts = np.concatenate([a.counts for a in allocs]).astype(np.int64)
            owner = np.concatenate([owner, new_owner])
            nodes = np.concatenate([nodes, np.concatenate([a.nodes for a in allocs])
                                    .astype(np.int64)])
            freed = np.concatenate([freed, counts[:, None] * reqs[new_owner]])
            read_at[fresh] = start[new]
        held[3][:] = [owner, nodes, freed]
        return ReleaseEvents.from_events(view.now, view.free, end_of[owner], nodes, freed)

    def _plan_nodes_easy(self, view: View) -> list[Decision]:
        """The node-level pass of EASY (one reservation) from scratch, with the
        decisions of :meth:`_plan_nodes_full` at ``k = 1`` without its (release times x
        nodes x resources) profile.

        Up to the head, every job is placed now or is the head, so the profile stays
        non-decreasing in time (the running jobs' releases, minus the jobs started now
        until their planned ends): a window's minimum is its first matrix, and
        :class:`~dispatchlab.dispatch.profile.ReleaseEvents` finds each job's earliest
        breakpoint from per-node events. Once the head is reserved at ``t`` for ``d``,
        the backfill scan asks only for windows ``[now, now + e)``, and their minimum
        is the matrix at now, or, when the window reaches ``t``, the lower of it and the
        matrix at ``t`` minus the head's resources: before ``t`` the profile rises,
        inside ``[t, t + d)`` it rises from its value at ``t`` (releases add, the jobs
        started now only end), after ``t + d`` it is at least its value at now. So the
        scan runs in the profile of two breakpoints, now and ``t`` (and the head's end),
        whose windows from now have the same minima as the full profile's, and so does
        the plan kept for the next pass (:meth:`_plan_nodes`), whose windows start at a
        later now with no breakpoint between."""
        now = view.now
        jobs, units, est = self._queue_columns(view)
        n = len(jobs)
        reqs = view.requests
        n_nodes = view.free.shape[0]
        physical = view.free.copy()
        events = self._release_events(view)
        alloc_ = self.allocator_
        out: list[Decision] = []
        reserved: list[tuple[int, int]] = []
        i = 0
        prof: NodeProfile | None = None
        while i < n:
            job, u, d = int(jobs[i]), int(units[i]), planned(int(est[i]))
            t, alloc, at_t = events.earliest(alloc_, reqs[job], u)
            i += 1
            if t == now:
                now_alloc = alloc_.allocate(reqs[job], u, np.minimum(physical, events.base))
                if now_alloc is not None:
                    events.start(now_alloc, reqs[job], d)
                    physical -= now_alloc.matrix(reqs[job], n_nodes)
                    out.append(Start(job, now_alloc))
                    continue
            # the head: the profile of two breakpoints, then its reservation
            rise = [] if t == now else [(t, at_t - events.base)]
            prof = NodeProfile(now, events.base, rise)
            prof.reserve(t, d, alloc.matrix(reqs[job], n_nodes))
            reserved.append((job, t))
            break
        if prof is not None and i < n:
            rest = self._rest_in_queue_order(view, jobs, est, i)
            self._backfill_nodes(view, prof, physical, jobs[rest], units[rest], est[rest],
                                 out)
        if self.explain:
            self.log_.append({"now": now, "reservations": reserved,
                              "started": [d.job for d in out]})
        if not out and reserved and reserved[0][1] > now and self._node_plan_kept(view, 1):
            self._cache = (view.changes, prof, int(view.queue.jobs[-1]))
        return out

    def _plan_nodes_full(self, view: View, k: int) -> list[Decision]:
        """The node-level pass from scratch (see :meth:`_plan_nodes`; EASY's is
        :meth:`_plan_nodes_easy` when :attr:`sparse_head`).

        **Stop at the last candidate** (every job reserved, i.e. conservative, without
        a log): a job starts now only if its units fit in total (:func:`fit_totals`)
        in the physical free resources and the profile's minimum over ``[now, now +
        planned duration)``, whatever the allocator (no allocation exists otherwise).
        Starts and reservations only lower both, so a job that fails this test once
        fails it for the rest of the pass: planning stops after the last job that
        passes it, re-tested after every start and every reservation that overlaps its
        window (then the jobs before it are screened again, vectorized, for the new
        last one). The jobs left unplanned would only have been reserved later.

        **Start the search at a known bound** (built-in allocators, which place a job
        iff its units fit in total): a job whose per-unit request, units and planned
        duration are each at least those of a job placed earlier in this pass at
        ``t'`` cannot be placed before ``t'``: every window before ``t'`` hosted fewer
        of the earlier job's units than it needed, hosts no more of this job's, and
        the profile has only been lowered since."""
        if k == 1 and self.sparse_head:
            return self._plan_nodes_easy(view)
        now = view.now
        jobs, units, est = self._queue_columns(view)
        n = len(jobs)
        reqs = view.requests
        n_nodes = view.free.shape[0]
        physical = view.free.copy()
        prof = view.release_profile()
        assert isinstance(prof, NodeProfile)  # a node-level platform's
        alloc_ = self.allocator_
        out: list[Decision] = []
        reserved: list[tuple[int, int]] = []
        i = 0
        last = n - 1
        stop_rule = self.stop_node_plan and k > n and not self.explain
        if stop_rule:
            durs = np.maximum(np.asarray(est, dtype=np.int64), 1)  # planned()
            req_q = reqs[jobs]
            last = _last_node_candidate(prof, physical, now, req_q, units, durs, 0, last)
        # with one reservation (EASY) every earlier placement of the pass starts now:
        # no bound worth its upkeep
        bounded = k > 1 and type(alloc_) in _BUILTIN_ALLOCATORS
        if bounded:  # the placements of this pass: requests, units, durations, starts
            p_req = np.empty((min(n, last + 1), reqs.shape[1]), dtype=np.int64)
            p_ud = np.empty((min(n, last + 1), 2), dtype=np.int64)
            p_t: list[int] = []
        while i <= last and len(reserved) < k:
            job, u, d = int(jobs[i]), int(units[i]), planned(int(est[i]))
            after = None
            if bounded:
                if p_t:
                    dom = np.flatnonzero((p_req[: len(p_t)] <= reqs[job]).all(axis=1)
                                         & (p_ud[: len(p_t)] <= (u, d)).all(axis=1))
                    if len(dom):
                        after = max(p_t[q] for q in dom.tolist())
                p_req[len(p_t)] = reqs[job]
                p_ud[len(p_t)] = (u, d)
            t, alloc = prof.earliest(alloc_, reqs[job], u, d, after)
            if bounded:
                p_t.append(t)
            started = False
            if t == now:
                now_alloc = alloc_.allocate(reqs[job], u,
                                            np.minimum(physical, prof.window_min(now, d)))
                if now_alloc is not None:
                    used = now_alloc.matrix(reqs[job], n_nodes)
                    prof.reserve(now, d, used)
                    physical -= used
                    out.append(Start(job, now_alloc))
                    started = True
            if not started:
                prof.reserve(t, d, alloc.matrix(reqs[job], n_nodes))
                reserved.append((job, t))
            i += 1
            if stop_rule and i <= last and t < now + int(durs[last]):
                # the start or reservation overlaps the last candidate's window
                last = _last_node_candidate(prof, physical, now, req_q, units, durs, i,
                                            last)
        if i < n and i <= last:
            rest = self._rest_in_queue_order(view, jobs, est, i)
            self._backfill_nodes(view, prof, physical, jobs[rest], units[rest], est[rest],
                                 out)
        if self.explain:
            self.log_.append({"now": now, "reservations": reserved,
                              "started": [d.job for d in out]})
        if not out and reserved and reserved[0][1] > now and self._node_plan_kept(view, k):
            self._cache = (view.changes, prof, int(view.queue.jobs[-1]))
        return out


    #: screen the backfill candidates with vectorized fit counts before calling the
    #: allocator (False: call it on every candidate; same decisions, the tests run both)
    screen_nodes: bool = True

    def _backfill_nodes(self, view: View, prof: NodeProfile, physical: np.ndarray,
                        rows: np.ndarray, units: np.ndarray, ests: np.ndarray,
                        out: list[Decision]) -> None:
        """The node-level backfill scan: in the given order, each job starts now iff the
        allocator places it in the physical free resources and the profile's minimum
        over its planned window ``[now, now + max(estimate, 1))``; a start takes its
        resources out of both. Appends the starts to ``out``; updates ``prof`` and
        ``physical``.

        Jobs whose units cannot fit in total (:func:`fit_totals`) in that minimum are
        never offered to the allocator (it could not place them); as both only shrink
        with starts, a job screened out stays out, and only the jobs left and after
        the last start are screened again after a start."""
        now = view.now
        reqs = view.requests
        n_nodes = physical.shape[0]
        alloc_ = self.allocator_
        rows = np.asarray(rows, dtype=np.int64)
        units = np.asarray(units, dtype=np.int64)
        durs = np.maximum(np.asarray(ests, dtype=np.int64), 1)
        req_c = reqs[rows]
        live = np.arange(len(rows))
        screen = self.screen_nodes
        if screen:
            # the jobs' distinct per-unit requests (classes), once per run
            req_classes = getattr(self, "_req_classes", None)
            if req_classes is None or req_classes[1].shape[0] != reqs.shape[0]:
                classes, inv = np.unique(reqs, axis=0, return_inverse=True)
                req_classes = self._req_classes = (classes, inv.reshape(-1).astype(np.int64))
            classes, class_of = req_classes
            cls = class_of[rows]
            cap = int(units.max()) if len(units) else 0
        while len(live):
            if screen:
                # physical room: each class's units per node once, then per job
                u_l, c_l = units[live], cls[live]
                used_cls, pos = np.unique(c_l, return_inverse=True)
                per_node = node_fits(classes[used_cls], physical, cap)
                ok = np.minimum(per_node[pos.reshape(-1)], u_l[:, None]).sum(axis=1) >= u_l
                live = live[ok]
                if not len(live):
                    break
                live = live[_fit_now(prof, physical, now, req_c[live], units[live],
                                     durs[live])]
            started = -1
            for p in live.tolist():
                job, u, d = int(rows[p]), int(units[p]), int(durs[p])
                alloc = alloc_.allocate(reqs[job], u,
                                        np.minimum(physical, prof.window_min(now, d)))
                if alloc is None:
                    continue
                used = alloc.matrix(reqs[job], n_nodes)
                prof.reserve(now, d, used)
                physical -= used
                out.append(Start(job, alloc))
                started = p
                break
            if started < 0:
                break
            live = live[live > started]


class EASY(_Backfill, ReferenceEASY):
    """EASY backfilling; ``reservations=K`` protects the first K waiting jobs.

    The fast planners of :class:`_Backfill` with the parameters of
    :class:`ReferenceEASY`, whose decisions they make (tests/dispatch/test_fast_paths.py,
    tests/dispatch/test_backfill_speed.py run both)."""

    name = "easy"


class Conservative(_Backfill, ReferenceConservative):
    """Conservative backfilling: every waiting job holds a reservation.

    The fast planners of :class:`_Backfill` with the parameters of
    :class:`ReferenceConservative`, whose decisions they make (tests/dispatch/test_fast_paths.py,
    tests/dispatch/test_backfill_speed.py run both)."""

    name = "conservative"
