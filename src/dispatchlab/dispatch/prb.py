"""PRB, the priority-rule-based dispatcher (Galleguillos et al. 2017; AccaSim ``prb_scheduler``),
and its proactive form (the list scheduler of Borghesi et al. 2018 / PA-HPC-SIM).

**PRB** (``PRB(order="urgency", allocator="consolidate", default_ewt=1800)``). At each
pass, every waiting job gets its ordering keys (wait = now - submit, the predictor's
estimate, the EWT of its queue, its job demand; see :mod:`dispatchlab.dispatch.orderings`),
the queue is sorted by the ordering, and the *whole* sorted list is walked once: each
job that the allocator can place on the resources still free (after the starts already
decided in this pass) starts now; a job that does not fit is skipped and does not block
the later ones. There is no reservation, so a wide job can starve while narrow ones
keep starting (as in the authors' codes).

* ``order``: any registered ordering (``urgency`` = Galleguillos et al. 2017 PRB,
  ``ewt`` = Borghesi et al. 2018 LS, ``walltime`` = PA-HPC-SIM LS, ``fifo``, ``sjf``, ``slowdown``).
* ``allocator``: node-level platforms only (``consolidate`` = fewer free resources first,
  Galleguillos et al. 2017; ``first-fit``; ``best-fit``). On counting platforms a job fits iff its
  units are at most the free cores left.
* ``default_ewt``: the EWT in seconds of a job whose queue is not in the platform's
  queue table (``Platform.queues``; see :func:`dispatchlab.platform.queues.job_ewt`).

**Proactive form** (:func:`proactive_schedule`, PA-HPC-SIM's list scheduler): a whole schedule of
the waiting jobs, built by walking time points (now, the estimated ends of running
jobs, the planned ends of jobs placed by the walk); at each point the unscheduled jobs
are re-sorted with keys evaluated at that time and every one that fits over its
planned duration is placed. Its start-now part equals PRB's decisions; the rest is the
reference schedule and the hint of the CP dispatchers.

*Power* (Borghesi et al. 2018's LS, :class:`dispatchlab.dispatch.powercap.ls.LS`): given a
:class:`PowerBudget`, the plan also keeps the predicted power of the running jobs
(prediction x current level, released at their estimated ends) plus the jobs it placed
(released at their planned ends) within a budget of watts: a job fits at ``t`` only if
that power over ``[t, t + max(est, 1))`` plus its own stays within the budget (at
``now``: the power of *all* running jobs, as the start-now check of LS). The budget is
the cap *now* times the margin throughout: the cap schedule's future steps are ignored
(ours: a step triggers a new pass, which plans again at the new cap).

*Speed*: keys are numpy columns. Jobs that cannot fit the free resources (counting:
more units than free cores; node level: a total demand above what is free) or the
power are dropped before sorting; on node level the allocator is only called on jobs
whose units the nodes' free room can host in total (counted per distinct per-unit
request, kept until the next placement), and the walk stops as soon as none is left. The
proactive walk needs no profile of its own reservations: from each of its time points
on, free resources only grow, so a window's minimum is the free resources at its start
(see :func:`proactive_schedule`); a static ordering is sorted once per plan.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from heapq import heappop, heappush
from itertools import pairwise
from typing import Any, ClassVar, NamedTuple

import numpy as np

from dispatchlab.core.params import Nested
from dispatchlab.dispatch.allocators import (
    ALLOCATORS,
    Allocator,
    make_allocator,
    requested,
    start_allocator,
    units_per_node_of,
)
from dispatchlab.dispatch.base import Allocation, Decision, Dispatcher, Start, View
from dispatchlab.dispatch.orderings import (
    ORDERINGS,
    Ordering,
    OrderKeys,
    job_demand,
    job_width,
    make_ordering,
)
from dispatchlab.dispatch.priority import skip_walk
from dispatchlab.dispatch.profile import planned, step_cut, step_levels
from dispatchlab.platform.queues import check_ewt, job_ewt


class ProactivePlan(NamedTuple):
    """A proactive schedule: ``starts[i]`` is the planned start (absolute seconds,
    ``>= now``, int64) of the i-th planned row, -1 for a row that never fits the empty
    platform; ``allocations`` maps each row starting at ``now`` to its Allocation (None
    on counting platforms)."""

    starts: np.ndarray
    allocations: dict[int, Allocation | None]


class PowerBudget(NamedTuple):
    """The power dimension of a proactive plan (Borghesi et al. 2018's LS).

    ``pred``: predicted power (W, float) of each planned row, aligned with the plan's
    ``rows``; ``budget``: the watts the plan may use at any time (margin x cap);
    ``running``: the predicted power now of each running job (prediction x its current
    power level), aligned with ``view.running.jobs``."""

    pred: np.ndarray
    budget: float
    running: np.ndarray


def running_power_prediction(view: View) -> np.ndarray:
    """The predicted power now (W, float64) of each running job, aligned with
    ``view.running.jobs``: its power prediction's mean times its current power level
    (Borghesi et al. 2018: a throttled job's predicted power is its prediction times its level).
    A job without a prediction (NaN) counts 0 W."""
    jobs = view.running.jobs
    pp = view.power_prediction
    if pp is None or len(jobs) == 0:
        return np.zeros(len(jobs), dtype=np.float64)
    mean = np.nan_to_num(np.asarray(pp[0], dtype=np.float64)[jobs], nan=0.0)
    level = np.array([view.power_level(int(j)) for j in jobs.tolist()], dtype=np.float64)
    return mean * level


def power_sum(values) -> float:
    """The correctly rounded sum of ``values`` (W): every power dispatcher of Borghesi et al. 2018
    sums the running jobs' predicted power this way, so their checks agree."""
    return math.fsum(np.asarray(values, dtype=np.float64).tolist())


class PowerProfile:
    """Predicted power in use over future time (a step function from ``now``): running
    jobs release theirs at their effective estimated ends; :meth:`reserve` adds a planned
    job's power on its window. Used by :func:`proactive_schedule`."""

    def __init__(self, now: int, ends: np.ndarray, power: np.ndarray) -> None:
        times = [now]
        used = [power_sum(power)]
        level = used[0]
        ends_l = np.asarray(ends, dtype=np.int64).tolist()
        power_l = np.asarray(power, dtype=np.float64).tolist()
        last = len(ends_l) - 1
        for k, (t, p) in enumerate(zip(ends_l, power_l, strict=True)):
            # the last release leaves exactly nothing (no float residue)
            level = 0.0 if k == last else level - p
            if t == times[-1]:
                used[-1] = level
            else:
                times.append(t)
                used.append(level)
        self.times = times
        self.used = used
        #: the levels never rise over time (true unless a float residue left a level
        #: below the exact 0.0 of the last release). Reservations that all start at the
        #: earliest time still planned keep this from that time on (rounding is
        #: monotone), so there :meth:`max_over` of a window is the level at its start.
        self.non_increasing = all(a >= b for a, b in pairwise(used))

    def at(self, t: int) -> float:
        """The power in use at ``t`` (W)."""
        return self.used[bisect_right(self.times, t) - 1]

    def max_over(self, start: int, duration: int) -> float:
        """The largest power in use on ``[start, start + duration)``."""
        return max(step_levels(self.times, self.used, start, duration))

    def reserve(self, start: int, duration: int, watts: float) -> None:
        """Add ``watts`` on ``[start, start + duration)``."""
        used = self.used
        i, j = step_cut(self.times, used, start, start + duration)
        for k in range(i, j):
            used[k] += watts


#: at most this many int64 cells in one (request classes x nodes x resources) block
_BLOCK = 1 << 21


def units_per_node_many(reqs: np.ndarray, free: np.ndarray) -> np.ndarray:
    """How many units of each per-unit request ``reqs[k]`` every node can host given
    ``free``: a (requests x nodes) int64 matrix, the row-wise
    :func:`~dispatchlab.dispatch.allocators.units_per_node` (a request of nothing fits
    without limit: a large constant). Computed in blocks of requests to bound memory."""
    k, n_res = reqs.shape
    n = free.shape[0]
    out = np.empty((k, n), dtype=np.int64)
    big = np.iinfo(np.int64).max // 4
    step = max(1, _BLOCK // max(1, n * n_res))
    for a in range(0, k, step):
        r = reqs[a:a + step]
        pos = r > 0
        per = free[None, :, :] // np.maximum(r, 1)[:, None, :]
        out[a:a + step] = np.where(pos[:, None, :], per, big).min(axis=2, initial=big)
    return out


def proactive_schedule(view: View, rows: np.ndarray, estimate: np.ndarray,
                       ordering: Ordering, allocator: Allocator, ewt: np.ndarray,
                       demand: np.ndarray, power: PowerBudget | None = None) -> ProactivePlan:
    """The proactive list schedule of waiting jobs ``rows`` (PA-HPC-SIM's list scheduler).

    ``estimate``, ``ewt`` and ``demand`` are aligned with ``rows`` (seconds, seconds,
    :func:`~dispatchlab.dispatch.orderings.job_demand`). Starting from
    ``view.release_profile()`` (running jobs released at their effective estimated
    ends), the walk visits time points ``t``: ``now``, then each later breakpoint of the
    profile, which are the release times of running jobs and the planned ends of the
    jobs it placed. At each ``t`` the unscheduled jobs are sorted by ``ordering`` with
    keys evaluated at ``now = t``, and every job that fits on ``[t, t + max(est, 1))``
    is placed there and reserved in the profile (jobs that do not fit are skipped; no
    reservation). At ``t = now`` a job must also fit the physical free resources (a
    running job past its estimate still holds them). On node-level platforms the fit
    is ``allocator.allocate`` on the profile's per-node minimum over the window;
    the allocator's per-run set-up (:func:`~dispatchlab.dispatch.allocators.start_allocator`)
    is done first. Every job that fits the empty
    platform ends up scheduled (after the last release the platform is empty).

    The start-now part equals :class:`PRB`'s decisions with the same ordering and
    allocator. Cost: (time points) x (unscheduled jobs) fit tests; meant for the few
    hundred jobs a CP model holds.

    *Why the free resources at t suffice.* A job placed at ``t`` needs its resources
    over its whole window ``[t, t + d)``, i.e. the minimum of the free resources over
    it. From any time point ``t`` of the walk on, that minimum is the free resources at
    ``t`` itself: the release profile only gains resources over time (running jobs
    release theirs), and every reservation of the plan started at a time point already
    visited (``<= t``), so after ``t`` reservations only end. The free resources from
    ``t`` on are therefore non-decreasing, and the walk keeps just the free resources
    at ``t``: the releases up to ``t`` minus the reservations still in force (a heap
    of planned ends), no profile of the plan's reservations. The time points are the
    releases and the planned ends.

    ``power`` (a :class:`PowerBudget`, Borghesi et al. 2018's LS): a job also needs its predicted
    power within the budget with the power in use over its window (a
    :class:`PowerProfile`; at ``now``: the summed power of all running jobs plus the
    jobs placed now, exactly as :class:`~dispatchlab.dispatch.powercap.ls.LS` checks). A job
    whose power alone exceeds the budget is never placed (-1). The start-now part then
    equals LS's decisions."""
    rows = np.asarray(rows, dtype=np.int64)
    estimate = np.asarray(estimate, dtype=np.int64)
    ewt = np.asarray(ewt, dtype=np.int64)
    demand = np.asarray(demand, dtype=np.float64)
    n = len(rows)
    if not (len(estimate) == len(ewt) == len(demand) == n):
        raise ValueError("estimate, ewt and demand must be aligned with rows")
    now = int(view.now)
    starts = np.full(n, -1, dtype=np.int64)
    allocations: dict[int, Allocation | None] = {}
    if n == 0:
        return ProactivePlan(starts, allocations)
    submit = np.asarray(view.jobs["submit"], dtype=np.int64)[rows]
    units = np.asarray(view.jobs["units"], dtype=np.int64)[rows]
    counting = view.counting
    # the release profile is read, never changed: the plan's reservations are kept
    # apart (see "Why the free resources at t suffice" above)
    prof = view.release_profile()
    rel_times, rel_free = prof.times, prof.free
    held: list = []  # what reservation k takes (cores, or a nodes x resources matrix)
    ending: list[tuple[int, int]] = []  # heap of (planned end, k) of reservations
    if power is not None:
        pred_a, pbudget, pprof = _plan_power(view, power, n)
        ppred = pred_a.tolist()
        # the walk's reservations start at its current time point, so with levels that
        # never rise the window's maximum is the level at t: power_t itself
        power_flat = pprof.non_increasing
        phys_power = power_sum(power.running)
    if counting:
        active: Any = 0  # taken by the reservations in force at t
        phys_cores = int(view.free_cores)
    else:
        start_allocator(allocator, view)
        phys = view.free
        reqs = view.requests[rows]
        n_nodes = phys.shape[0]
        active = np.zeros_like(phys)
        demand_m, classes_l, class_split = _request_classes(reqs, units)
        total_demand = demand_m.tolist()
        max_units = int(units.max())
    unsched = np.arange(n, dtype=np.int64)
    # a static ordering ranks two jobs the same way at every t: sorted once
    order_all = None
    if ordering.static:
        order_all = ordering.sort(OrderKeys(rows, now, submit, estimate, ewt, demand))
    try_now = np.zeros(n, dtype=bool)  # per job: passes the necessary tests at t
    t = now
    while len(unsched):
        at_now = t == now
        while ending and ending[0][0] <= t:  # reservations ended: their resources return
            active = active - held[heappop(ending)[1]]
        # free at t: what the releases leave minus the reservations in force, which is
        # also the minimum over any window from t (see above); at now also within the
        # physical free resources (a running job past its estimate still holds them)
        base = rel_free[bisect_right(rel_times, t) - 1]
        # necessary tests over all unscheduled jobs at once (free resources only shrink
        # and the power in use only grows while t's jobs are placed): the jobs that
        # fail them are not tried, the same jobs are placed
        if counting:
            free_c = min(base, phys_cores) if at_now else base - active
            ok = units[unsched] <= free_c
        else:
            free_t = np.minimum(base, phys) if at_now else base - active
            total_free = free_t.sum(axis=0)
            free_sum = total_free.tolist()
            ok = (demand_m[unsched] <= total_free).all(axis=1)  # the demand in total
        if power is not None:
            # in use at t (at now: every running job's power, as LS checks)
            power_t = phys_power if at_now else pprof.at(t)
            ok &= ~(power_t + pred_a[unsched] > pbudget)
        if not counting:
            room: dict[int, int] = {}  # request class -> units it fits in total now
            placed = False  # whether a job was placed at t yet
        if ok.any():
            try_now[unsched[ok]] = True
            if order_all is not None:
                order = order_all[try_now[order_all]]
            else:
                keys = OrderKeys(rows[unsched], t, submit[unsched], estimate[unsched],
                                 ewt[unsched], demand[unsched])
                order = unsched[ordering.sort(keys)]
                order = order[try_now[order]]
            try_now[order] = False
        else:
            order = unsched[:0]
        for p in order.tolist():
            d = planned(int(estimate[p]))
            u = int(units[p])
            if power is not None:
                pw = ppred[p]
                if at_now:
                    if phys_power + pw > pbudget:
                        continue
                elif power_t + pw > pbudget or (
                        not power_flat and pprof.max_over(t, d) + pw > pbudget):
                    continue
            if counting:
                if u > free_c:
                    continue
                free_c -= u
                used: Any = u
                if at_now:
                    allocations[int(rows[p])] = None
            else:
                need = total_demand[p]
                # (until t's first placement the screen above already checked it)
                if placed and any(x > f for x, f in zip(need, free_sum, strict=True)):
                    continue
                # the units of its request the free matrix hosts in total (no allocator
                # places more), kept per request class until the next placement
                c = classes_l[p]
                fit = room.get(c)
                if fit is None:
                    fit = room[c] = _units_fitting(class_split[c], free_t, max_units)
                if u > fit:
                    continue
                alloc = allocator.allocate(reqs[p], u, free_t)
                if alloc is None:
                    continue
                used = alloc.matrix(reqs[p], n_nodes)
                free_t = free_t - used
                room.clear()
                placed = True
                free_sum = [f - x for f, x in zip(free_sum, need, strict=True)]
                if at_now:
                    allocations[int(rows[p])] = alloc
            active = active + used
            heappush(ending, (t + d, len(held)))
            held.append(used)
            if power is not None:
                pprof.reserve(t, d, pw)
                if at_now:
                    phys_power += pw
                else:
                    power_t += pw
            starts[p] = t
        unsched = unsched[starts[unsched] < 0]
        nxt = _next_time_point(rel_times, t, ending)
        if nxt is None:
            break  # the rest never fits the empty platform
        t = nxt
    return ProactivePlan(starts, allocations)


def _plan_power(view: View, power: PowerBudget, n: int
                ) -> tuple[np.ndarray, float, PowerProfile]:
    """The power side of :func:`proactive_schedule`: the jobs' predicted power (float64,
    aligned with the ``n`` rows, else ``ValueError``), the budget (W) and the
    :class:`PowerProfile` of the running jobs' power until their estimated ends."""
    pred = np.asarray(power.pred, dtype=np.float64)
    if len(pred) != n:
        raise ValueError("power.pred must be aligned with rows")
    return (pred, float(power.budget),
            PowerProfile(int(view.now), view.running.est_end, power.running))


def _request_classes(reqs: np.ndarray, units: np.ndarray
                     ) -> tuple[np.ndarray, list[int], list[tuple[np.ndarray, np.ndarray]]]:
    """Node-level facts of the jobs to plan (``reqs``: per-unit requests, jobs x
    resources; ``units`` per job): ``(demand, class_of, class_split)``.

    ``demand``: each job's total demand per resource (a job whose demand exceeds what
    is free at t summed over nodes cannot fit at t: a necessary test that spares most
    allocator calls; the same jobs are placed). ``class_of``: each job's request class,
    the index of its per-unit request among the distinct ones (the fit counts are
    computed per class and shared by its jobs). ``class_split``: per class, the
    resources it requests and how much of each per unit (:func:`requested`, found once
    for every fit count of the plan)."""
    classes, class_of = np.unique(reqs, axis=0, return_inverse=True)
    return (reqs * units[:, None], class_of.reshape(-1).tolist(),
            [requested(c) for c in classes])


def _units_fitting(split: tuple[np.ndarray, np.ndarray], free: np.ndarray,
                   max_units: int) -> int:
    """How many units of a request class (``split``: :func:`requested` of its per-unit
    request) the free matrix ``free`` (nodes x resources) hosts in total, each node
    counted up to ``max_units`` (no allocator places more); a request of nothing: every
    node hosts ``max_units``."""
    pos, per_unit = split
    if len(pos):
        return int(np.minimum(units_per_node_of(pos, per_unit, free), max_units).sum())
    return max_units * free.shape[0]


def _next_time_point(rel_times: list[int], t: int,
                     ending: list[tuple[int, int]]) -> int | None:
    """The walk's next time point after ``t``: the next release of the profile
    (``rel_times``, ascending) or the earliest planned end of the reservations in force
    (``ending``, a heap), whichever comes first; None when there is neither."""
    k = bisect_right(rel_times, t)
    nxt = rel_times[k] if k < len(rel_times) else None
    if ending and (nxt is None or ending[0][0] < nxt):
        nxt = ending[0][0]
    return None if nxt is None else int(nxt)


class PRB(Dispatcher):
    """Priority-rule-based dispatcher: sort the queue, start every job that fits, skip
    the others (see the module docstring).

    ``order``: a registered ordering name (default ``urgency``); ``allocator``:
    ``consolidate`` (default), ``first-fit`` or ``best-fit`` (node-level platforms);
    ``default_ewt``: EWT (integer seconds > 0) of queues missing from the platform's
    queue table."""

    name = "prb"
    call_on_empty_queue = False
    nested: ClassVar[Nested] = {"allocator": ALLOCATORS, "order": ORDERINGS}

    def __init__(self, order: str = "urgency", allocator: str = "consolidate",
                 default_ewt: int = 1800) -> None:
        self.order = order
        self.allocator = allocator
        self.default_ewt = default_ewt

    def validate(self) -> None:
        """Validate the parameters (InputError naming the field)."""
        check_ewt(self.default_ewt, field="default_ewt")
        make_ordering(self.order, field="order")
        make_allocator(self.allocator)

    def start(self, view: View) -> None:
        self.validate()
        self._after: tuple[int, int, int] | None = None
        self.ordering_: Ordering = make_ordering(self.order)
        self.ordering_.start(view)
        self.allocator_: Allocator = make_allocator(self.allocator)
        capacity = view.capacity
        start_allocator(self.allocator_, view)
        #: EWT (s) per job row
        self.ewt_: np.ndarray = job_ewt(view.jobs, view.platform, self.default_ewt)
        #: platform share per job row; demand = estimate x width
        self.width_: np.ndarray = job_width(view.requests, view.jobs["units"],
                                            capacity.sum(axis=0))
        if not view.counting:
            #: distinct per-unit requests, and the class (index into them) of each job row
            uniq, inv = np.unique(view.requests, axis=0, return_inverse=True)
            self.req_uniq_: np.ndarray = uniq
            self.req_class_: np.ndarray = inv.ravel()

    def keys(self, view: View, positions: np.ndarray | None = None) -> OrderKeys:
        """Ordering keys of the waiting jobs at ``positions`` in the queue (all when
        None), evaluated at ``view.now``."""
        q = view.queue
        if positions is None:
            rows, est, submit = q.jobs, q.estimate, q.submit
        else:
            rows, est, submit = q.jobs[positions], q.estimate[positions], q.submit[positions]
        return OrderKeys(rows, int(view.now), submit, est, self.ewt_[rows],
                         est * self.width_[rows])

    def plan(self, view: View, limit: int | None = None) -> ProactivePlan:
        """The proactive schedule (:func:`proactive_schedule`) of the first ``limit``
        waiting jobs in queue order (all when None), with this dispatcher's ordering,
        allocator, EWTs and demands; ``starts`` is aligned with
        ``view.queue.jobs[:limit]``."""
        q = view.queue
        k = len(q.jobs) if limit is None else min(int(limit), len(q.jobs))
        rows, est = q.jobs[:k], q.estimate[:k]
        return proactive_schedule(view, rows, est, self.ordering_, self.allocator_,
                                  self.ewt_[rows], est * self.width_[rows])

    def dispatch(self, view: View) -> list[Decision]:
        if view.counting:
            return self._dispatch_counting(view)
        q = view.queue
        if len(q.jobs) == 0:
            return []
        return self._dispatch_nodes(view, q)

    def _dispatch_counting(self, view: View) -> list[Decision]:
        free = int(view.free_cores)
        after = self._after
        if after is not None and after[0] == view.changes and after[1] == free:
            # Only submissions since the previous pass, and the same free cores: every
            # job that waited then still needs more than that pass left free (the walk
            # starts every job that fits), so only the jobs queued after that pass's
            # last row can start; the ordering ranks them among themselves as among all
            # (its contract). Same decisions, without reading the whole queue.
            if free == 0:
                return []
            rows_l, units_l, est_l = view.queued_after(after[2])
            if not rows_l:
                return []
            last_row = rows_l[-1]
            pick = [k for k, u in enumerate(units_l) if u <= free]
            if len(pick) <= 1:
                self._after = (after[0], free - sum(units_l[k] for k in pick), last_row)
                return [Start(rows_l[k]) for k in pick]
            rows = np.array([rows_l[k] for k in pick], dtype=np.int64)
            units = np.array([units_l[k] for k in pick], dtype=np.int64)
            est = np.array([est_l[k] for k in pick], dtype=np.int64)
            submit = view.jobs["submit"][rows]
        else:
            q = view.queue
            if len(q.jobs) == 0:
                return []
            last_row = int(q.jobs[-1])
            cand = np.flatnonzero(q.units <= free)
            if len(cand) <= 1:
                # nothing fits, or one job that fits: it starts whatever the order
                out: list[Decision] = [Start(int(q.jobs[c])) for c in cand]
                self._after = (view.changes, free - int(q.units[cand].sum()), last_row)
                return out
            rows, units, est, submit = q.jobs[cand], q.units[cand], q.estimate[cand], q.submit[cand]
        keys = OrderKeys(rows, int(view.now), submit, est, self.ewt_[rows],
                         est * self.width_[rows])
        order = self.ordering_.sort(keys)
        u_sorted = units[order]
        started = skip_walk(u_sorted, free)
        free -= int(u_sorted[started].sum()) if started else 0
        self._after = (view.changes, free, last_row)
        return [Start(int(rows[order[p]])) for p in started]

    def _dispatch_nodes(self, view: View, q,
                        power: tuple[np.ndarray, float, float] | None = None) -> list[Decision]:
        # Jobs are grouped by per-unit request ("classes"); count[c] is how many units of
        # class c the free resources can host in total (sum over nodes). A job can be
        # placed only if its units <= count of its class (with the built-in allocators:
        # if and only if), so the walk calls the allocator only on such jobs and stops
        # when none is left. After a start only the nodes it used are recounted.
        # ``power`` (LS): (predicted power per job row, power in use, budget); a job also
        # needs ``in use + its power <= budget``, and its power is added once it starts.
        free_m = view.free.copy()
        rows, units = q.jobs, q.units
        present, cls = np.unique(self.req_class_[rows], return_inverse=True)
        cls = cls.ravel()
        reqs_k = self.req_uniq_[present]
        fitn = units_per_node_many(reqs_k, free_m)
        count = fitn.sum(axis=1)
        fit = units <= count[cls]
        if power is not None:
            pred_all, used, budget = power
            fit &= used + np.asarray(pred_all)[rows] <= budget
        cand = np.flatnonzero(fit)
        if len(cand) == 0:
            return []
        order = cand[self.ordering_.sort(self.keys(view, cand))]
        u_o, c_o, j_o = units[order], cls[order], rows[order]
        if power is not None:
            w_o = np.asarray(pred_all, dtype=np.float64)[j_o]
        alloc_ = self.allocator_
        out: list[Decision] = []
        pos, m = 0, len(order)
        while pos < m:
            if power is None:
                ok = np.flatnonzero(u_o[pos:] <= count[c_o[pos:]])
            else:
                ok = np.flatnonzero((u_o[pos:] <= count[c_o[pos:]])
                                    & (used + w_o[pos:] <= budget))
            started = False
            for c in ok.tolist():
                p = pos + c
                req = reqs_k[c_o[p]]
                alloc = alloc_.allocate(req, int(u_o[p]), free_m)
                if alloc is None:
                    continue  # an allocator stricter than "room on some nodes"
                nodes = alloc.nodes
                free_m[nodes] -= alloc.counts[:, None] * req[None, :]
                new = units_per_node_many(reqs_k, free_m[nodes])
                count += new.sum(axis=1) - fitn[:, nodes].sum(axis=1)
                fitn[:, nodes] = new
                out.append(Start(int(j_o[p]), alloc))
                if power is not None:
                    used += float(w_o[p])
                pos = p + 1
                started = True
                break
            if not started:
                break  # nothing after pos fits any more: free only shrinks in a pass
        return out


__all__ = ["PRB", "PowerBudget", "PowerProfile", "ProactivePlan", "job_demand",
           "power_sum", "proactive_schedule", "running_power_prediction"]
