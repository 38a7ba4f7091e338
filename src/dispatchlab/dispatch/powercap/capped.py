"""Power-capped dispatchers of Carastan-Santos et al. 2024: EASY+PC (its Algorithm 1) and the
greedy knapsack (its Algorithm 2), with five ways to check a job set against the cap.

Both read the cap now (``view.cap``, W; None = no cap) and the cap schedule, and the
power predictor's predictions (``view.power_prediction``: mean, max, std in W at full
power; a running job counts with its prediction at start times its current power
level). The simulation needs a power predictor (``power_predictor=``, CLI
``--power-predictor``).

**Checks** (``check``; Carastan-Santos et al. 2024 section 5.2): a set of jobs fits the
cap ``C`` when

* ``mean``: the sum of predicted means <= C;
* ``max``: the sum of predicted maxima <= C;
* ``gaussian68`` / ``gaussian95`` / ``gaussian99``: ``mu + z sigma <= C`` with ``mu``
  the sum of means, ``sigma`` the root of the summed variances (jobs independent) and
  ``z`` = 1, 2, 3 (the paper's 68 / 95 / 99 % rule).

The set is the running jobs plus those started in this pass plus the candidate.

**EASY+PC** (``easy-pc``, ``order = fcfs | saf``): the queue sorted (``fcfs``: queue
order; ``saf``: smallest area first, area = estimate x units, ties by queue order);
jobs start in that order while they fit the free cores *and* the check; the first that
does not is the head, and its shadow time is found by releasing running jobs in order
of estimated end (jobs started in this pass at now + max(estimate, 1)) and applying
the cap's future steps, until it fits both (a cap step counts as a release time; ours:
if it never fits, there is no shadow time and any job that fits now is backfilled).
The other jobs, in the sorted order, are backfilled when they fit now (cores and
check) and either end by the shadow time or also fit what is left at it: extra cores
(free at the shadow time minus the head's) and the check at the shadow time with the
head and the long backfilled jobs. Without a cap (``view.cap`` None) and with ``fcfs``
it *is* :class:`~dispatchlab.dispatch.backfill.EASY` (the same object decides:
identical schedules).

**Greedy knapsack** (``knapsack``, ``value = wait | stretch``): inside a cap, the
queue sorted by value / weight, descending (value ``wait`` = now - submit, or
``stretch`` = (wait + est) / est with est = max(estimate, 1); weight = the predicted
mean power; a weight of 0 sorts first; ties by queue order); jobs start in that order
while they fit the cores and the check; the first that does not fit stops the pass.
Without a cap it runs EASY+PC FCFS, i.e. EASY.

**Jobs that can never start** (ours): a waiting job whose predicted power alone fails
the check at the largest cap of the rest of the run (no uncapped time ahead) is rejected
with that reason, rather than left waiting forever.

**Node-level platforms** (placement under the cap is ours). The paper's rules are
those above, on a platform of whole nodes (Carastan-Santos et al. 2024, "Scheduling with
lightweight predictions in power-constrained HPC platforms", preprint hal-04747713,
2024; IEEE Transactions on Parallel and Distributed Systems, 2025, doi
10.1109/TPDS.2025.3586723: Marconi100 jobs with exclusive nodes, counted as units).
Where nodes hold several jobs and other resources (cores, GPUs, memory, the internal
resources of partitions), the same passes run with "fits the free cores" read as a
placement, made by the dispatcher's ``allocator`` (default ``first-fit``; any
registered one, so whatever eligibility the requests encode is honoured), in the
resources physically free now (minus this pass's starts):

* start phase and the knapsack: a job starts when the check passes and the allocator
  places it; the first that fails either is the head (EASY+PC) or stops the pass
  (knapsack);
* the head's shadow time: the release times (running jobs at their estimated ends,
  an end already past counting as now; this pass's starts at now + max(estimate, 1))
  and the cap's steps, walked in time order with the free resources and the power set
  following them, up to the first time at which the check passes and the allocator
  places the head in what is free then (every later time is not needed: walked
  lazily, the allocator called only where the head's units fit in total);
* the *extra* resources: what is free at the shadow time minus the head's placement
  there (nodes x resources, the node-level form of the extra cores); a backfill
  candidate ending after the shadow time must be placed within both the free and
  the extra resources (their minimum, node by node) and pass the check at the shadow
  time, and then takes its placement from both.

Without a cap (``view.cap`` None) the passes are node-level EASY's with the same
allocator; under a cap no job set reaches, EASY+PC FCFS decides each pass itself and
gives node-level EASY's schedule and placements (tested). The safety guarantee is the
pooled one: with ``check = max`` and ``real`` predictions the power never exceeds a
cap that holds from before the jobs started. Node-level passes are the reference
passes (plain loops, floating-point sums) in the fast classes too: none of the
*Speed* devices below applies to them.

**Reference and fast classes**: :class:`ReferenceEasyPC` and :class:`ReferenceKnapsack`
compute every capped pass from the view as stated above, in plain loops (the classes to
read, and to copy for a variant; by name
``dispatchlab.dispatch.powercap.capped:ReferenceEasyPC``); their passes without a cap
are :class:`~dispatchlab.dispatch.backfill.ReferenceEASY`'s. :class:`EasyPC` and
:class:`Knapsack` (registered as ``easy-pc`` and ``knapsack``) subclass them with the
fast passes below (their passes without a cap are
:class:`~dispatchlab.dispatch.backfill.EASY`'s) and make the same decisions: the tests
run both classes (tests/dispatch/powercap/test_power_properties.py,
tests/dispatch/powercap/test_power_dispatch.py).

**Speed** (ours; the schedules are those of the reference classes, whose pass is also
the fast classes' *reference* pass): the dispatchers keep their own picture of the system between
passes, updated from what changed (:attr:`~dispatchlab.dispatch.base.View.changed` and
their own decisions), instead of rebuilding it from the view at every pass:

* the waiting jobs as numpy columns (units, max(estimate, 1), the checked power term,
  variance, ...) that grow at the end and are compacted now and then. EASY+PC screens
  the backfill candidates with a few vector comparisons over them (cores now, the
  power term against what the check leaves without the job's variance, ends by the
  shadow time or fits the extra cores and the power left at it), computes the
  gaussian checks only for the few that pass, and walks those; after a start it
  screens the rest again instead of testing each;
* the running jobs in order of estimated end, with the *exact* sums of their predicted
  powers and variances (fixed point, 2**-64 W: no drift however many jobs start and
  end); the shadow time walks them in Python;
* the never-fitting test run once per job at submission (and over the queue again only
  when the largest cap left changes: a cap step);
* EASY+PC: after a pass in which only jobs were submitted (no completion, new estimate,
  expired estimate, cap step or rejection: the view's change counter did not move), the
  head, its shadow time, the extra cores and the set at the shadow are those of the
  previous pass and every job that waited then fails again (free cores and power left
  only shrank, ``now + estimate <= shadow`` only got harder), so only the new jobs are
  walked as backfill candidates. With ``saf`` a new job can sort before the head: it
  might then start before it or become the head, and the pass is computed in full;
* the knapsack finds its next job with an ``argmax`` (first maximum: ties in queue
  order, as the stable sort) instead of sorting the queue.

*Same decisions as the reference*: the reference sums powers in floating point (running
jobs in order of estimated end, then one by one in the pass), so its sums can differ
from the exact ones by rounding. When every predicted term is a whole number of watts
(and all of them add up below 2**52) the reference's sums are exact too, and every
check is evaluated with the reference's own expression: the same bits. Otherwise a check
is taken only when it clears the cap by more than twenty times the reference's
worst-case rounding (see ``_REL_PER_TERM``); a check closer than that (ties need
exactly tied sums: in practice never with measured or predicted power) hands the whole
pass to the reference. A running job whose power level is not 1 (a ``SetPower`` from
elsewhere) also sends the passes to the reference while it runs.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from array import array
from bisect import bisect_left, insort
from typing import ClassVar, cast

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Nested
from dispatchlab.dispatch.allocation import Allocation
from dispatchlab.dispatch.allocators import (
    ALLOCATORS,
    Allocator,
    make_allocator,
    requested,
    start_allocator,
    units_per_node_of,
)
from dispatchlab.dispatch.backfill import EASY, ReferenceEASY
from dispatchlab.dispatch.base import Decision, Dispatcher, Reject, Start, View

#: check name -> z (None: a plain sum of means or of maxima)
CHECKS: dict[str, int | None] = {"mean": None, "max": None, "gaussian68": 1,
                                 "gaussian95": 2, "gaussian99": 3}
#: the gaussian checks' z (the entries of :data:`CHECKS` with one)
_GAUSSIAN_Z: dict[str, int] = {c: z for c, z in CHECKS.items() if z is not None}
#: the registered allocators (they place a job iff its units fit in total)
_BUILTIN_ALLOCATORS = frozenset(ALLOCATORS.values())
#: no failed placement remembered
_NO_FAIL = 1 << 62


class PowerSums:
    """Sums over a job set of predicted mean, max and variance (W, W, W^2)."""

    __slots__ = ("mean", "peak", "var")

    def __init__(self, mean: float = 0.0, peak: float = 0.0, var: float = 0.0) -> None:
        self.mean, self.peak, self.var = mean, peak, var

    def copy(self) -> PowerSums:
        return PowerSums(self.mean, self.peak, self.var)

    def add(self, mean: float, peak: float, std: float, sign: float = 1.0) -> None:
        self.mean += sign * mean
        self.peak += sign * peak
        self.var += sign * std * std


def fits(check: str, cap: float | None, sums: PowerSums, mean: float, peak: float,
         std: float) -> bool:
    """Whether the set ``sums`` plus a job (mean, max, std) passes ``check`` at ``cap``
    (always True without a cap)."""
    if cap is None:
        return True
    if check == "mean":
        return sums.mean + mean <= cap
    if check == "max":
        return sums.peak + peak <= cap
    z = _GAUSSIAN_Z[check]
    return sums.mean + mean + z * math.sqrt(max(sums.var + std * std, 0.0)) <= cap


def passing(check: str, cap: float | None, sums: PowerSums, mean: np.ndarray,
            peak: np.ndarray, std: np.ndarray) -> np.ndarray:
    """:func:`fits` over arrays of jobs (their ``mean``, ``peak``, ``std``): which of
    them the set ``sums`` plus that job alone passes ``check`` at ``cap`` (a bool
    array; all True without a cap)."""
    if cap is None:
        return np.ones(len(mean), dtype=bool)
    if check == "mean":
        return sums.mean + mean <= cap
    if check == "max":
        return sums.peak + peak <= cap
    return (sums.mean + mean + _GAUSSIAN_Z[check]
            * np.sqrt(np.maximum(sums.var + std ** 2, 0.0))) <= cap


class _Placement:
    """The resources physically free during one node-level pass (nodes x resources,
    copied from the view, taken by each start) and the allocator's placements in them.

    The free resources only shrink during a pass, and a built-in allocator places a job
    iff its units fit in total, so a request (per-unit vector) that failed with ``u``
    units fails again with ``u`` or more for the rest of the pass: remembered per
    request, for each of the two matrices placements are made in (the free resources
    alone, and their minimum with the extra resources at the shadow time), only for the
    built-in allocators (another allocator is always called)."""

    __slots__ = ("alloc", "failed", "free", "memo", "requests")

    def __init__(self, view: View, alloc: Allocator) -> None:
        self.alloc = alloc
        self.requests = view.requests
        self.free = np.array(view.free, dtype=np.int64)
        self.memo = type(alloc) in _BUILTIN_ALLOCATORS
        #: (request bytes, within extra) -> the fewest units that failed
        self.failed: dict[tuple[bytes, bool], int] = {}

    def place(self, job: int, units: int, extra: np.ndarray | None = None
              ) -> Allocation | None:
        """The allocator's placement of ``units`` of ``job`` in the free resources (and,
        with ``extra``, within it too: their minimum), or None."""
        req = self.requests[job]
        key = req.tobytes()
        if self.memo and (units >= self.failed.get((key, False), _NO_FAIL) or (
                extra is not None and units >= self.failed.get((key, True), _NO_FAIL))):
            return None
        free = self.free if extra is None else np.minimum(self.free, extra)
        a = self.alloc.allocate(req, units, free)
        if a is None and self.memo:
            self.failed[(key, extra is not None)] = units
        return a

    def take(self, job: int, a: Allocation) -> np.ndarray:
        """Take ``a``'s resources (``job``'s request per unit) from the free ones; the
        (nodes x resources) matrix taken."""
        used = a.matrix(self.requests[job], self.free.shape[0])
        self.free -= used
        return used

    def any_free(self) -> bool:
        """Whether any node has any free resource left."""
        return bool(self.free.any())


# --------------------------------------------------------------------- the reference
class _PowerCapping(Dispatcher):
    """The power-capped dispatchers as their definitions read: the reference.

    A pass in which no cap applies is EASY's (:attr:`easy_class`, the reference EASY
    here); any other pass is computed from the view alone (:meth:`_reference`), with
    the predicted powers summed in floating point (running jobs in order of estimated
    end, then the jobs of the pass one by one), and no state kept between passes."""

    check: str
    allocator: str
    call_on_empty_queue = False
    #: the simulation must give power predictions (``check_dispatcher`` supplies them)
    needs_power = True
    nested: ClassVar[Nested] = {"allocator": ALLOCATORS}
    #: the EASY that decides the passes without a cap
    easy_class: ClassVar[type[ReferenceEASY]] = ReferenceEASY

    def validate(self) -> None:
        if self.check not in CHECKS:
            raise InputError(f"check must be one of {', '.join(CHECKS)}, got "
                             f"{self.check!r}", field="check")
        make_allocator(self.allocator)

    def start(self, view: View) -> None:
        self.validate()
        if view.power_prediction is None:
            raise InputError(f"{self.name} needs job power predictions: give a power "
                             "predictor (--power-predictor)", field="power-predictor")
        #: node level: the placements (counting platforms place nothing)
        self.allocator_: Allocator = make_allocator(self.allocator)
        start_allocator(self.allocator_, view)
        self.easy_ = self.easy_class(allocator=self.allocator)
        self.easy_.start(view)

    def dispatch(self, view: View) -> list[Decision]:
        """One pass: EASY where no cap applies (:meth:`_is_easy`), else
        :meth:`_reference`."""
        if self._is_easy(view):
            return self.easy_.dispatch(view)
        return self._reference(view)

    @abstractmethod
    def _is_easy(self, view: View) -> bool:
        """Whether this pass is plain EASY's (no cap applies)."""

    @abstractmethod
    def _reference(self, view: View) -> list[Decision]:
        """The pass as the plain implementation computes it."""

    def _never_fit(self, view: View) -> np.ndarray:
        """Queue positions of jobs whose predicted power alone fails the check at the
        largest cap of the rest of the run (no uncapped time ahead): they can never
        start, and are rejected with that reason (ours: the paper's caps never made it
        happen; without this a permanent cap would leave them waiting forever)."""
        sched = view.cap_schedule
        caps = [view.cap] + ([w for t, w in sched.steps if t > view.now] if sched else [])
        q = view.queue
        if any(c is None for c in caps) or len(q.jobs) == 0:
            return np.zeros(0, dtype=np.int64)
        top = max(cast("list[float]", caps))  # no None (returned above)
        mean, peak, std = self._predictions(view)
        rows = q.jobs
        if self.check == "mean":
            alone = mean[rows]
        elif self.check == "max":
            alone = peak[rows]
        else:
            alone = mean[rows] + CHECKS[self.check] * std[rows]
        return np.flatnonzero(alone > top)

    def _rejects(self, view: View, never: np.ndarray) -> list[Decision]:
        q = view.queue
        return [self._reject(view, int(q.jobs[p])) for p in never.tolist()]

    def _reject(self, view: View, j: int) -> Reject:
        """The rejection of never-fitting job ``j`` with its reason."""
        mean, peak, std = self._predictions(view)
        sched = view.cap_schedule
        assert sched is not None  # only a run with a cap rejects jobs (_never_fit)
        top = max(w for w in [view.cap] + [w for t, w in sched.steps
                                           if t > view.now] if w is not None)
        return Reject(j, f"its predicted power (mean {mean[j]:,.0f} W, max {peak[j]:,.0f} W, "
                      f"sd {std[j]:,.0f} W) fails the {self.check} check alone at the "
                      f"largest cap left ({top:,.0f} W)")

    def _predictions(self, view: View) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        prediction = view.power_prediction
        assert prediction is not None  # start() refuses a run without one
        mean, peak, std = prediction
        return mean, peak, std

    def _running_sums(self, view: View) -> PowerSums:
        mean, peak, std = self._predictions(view)
        rows = view.running.jobs
        lv = np.array([view.power_level(j) for j in rows.tolist()])
        s = std[rows] * lv
        return PowerSums(float((mean[rows] * lv).sum()), float((peak[rows] * lv).sum()),
                         float((s * s).sum()))


class ReferenceEasyPC(_PowerCapping):
    """EASY+PC (Carastan-Santos et al. 2024 Algorithm 1), the reference: ``order = fcfs |
    saf``, ``check`` (see the module docstring). Every capped pass computed from the
    view in plain loops and floating-point sums; :class:`EasyPC` (registered as
    ``easy-pc``) is its fast subclass, pinned to it by the same tests. Reachable by name
    as ``dispatchlab.dispatch.powercap.capped:ReferenceEasyPC``."""

    name = "easy-pc-reference"

    def __init__(self, order: str = "fcfs", check: str = "mean",
                 allocator: str = "first-fit") -> None:
        self.order = order
        self.check = check
        self.allocator = allocator

    def validate(self) -> None:
        super().validate()
        if self.order not in ("fcfs", "saf"):
            raise InputError(f"order must be fcfs or saf, got {self.order!r}", field="order")

    def _is_easy(self, view: View) -> bool:
        return view.cap is None and self.order == "fcfs"

    def _reference(self, view: View) -> list[Decision]:
        """Algorithm 1 over the queue in the pass's order, the never-fitting jobs
        rejected first."""
        q = view.queue
        if self.order == "fcfs":
            order = np.arange(len(q.jobs))
        else:
            area = np.maximum(q.estimate, 1) * q.units
            order = np.argsort(area, kind="stable")
        never = self._never_fit(view)
        if len(never):
            keep = np.ones(len(q.jobs), dtype=bool)
            keep[never] = False
            return self._rejects(view, never) + self._easy_pc(view, order[keep[order]])
        return self._easy_pc(view, order)

    def _easy_pc(self, view: View, order: np.ndarray) -> list[Decision]:
        """Algorithm 1 over the queue positions ``order`` (the reference; node level:
        :meth:`_easy_pc_nodes`)."""
        if not view.counting:
            return self._easy_pc_nodes(view, order)
        q = view.queue
        now, cap, check = view.now, view.cap, self.check
        mean, peak, std = self._predictions(view)
        free = view.free_cores
        sums = self._running_sums(view)
        out: list[Decision] = []
        started: list[tuple[int, int, int]] = []  # (end, units, job)
        pos = order.tolist()
        jobs, units, est = q.jobs.tolist(), q.units.tolist(), q.estimate.tolist()
        k = 0
        while k < len(pos):
            p = pos[k]
            j = jobs[p]
            if units[p] <= free and fits(check, cap, sums, mean[j], peak[j], std[j]):
                free -= units[p]
                sums.add(mean[j], peak[j], std[j])
                out.append(Start(j))
                started.append((now + max(est[p], 1), units[p], j))
                k += 1
                continue
            break
        if k == len(pos):
            return out
        head = pos[k]
        shadow, extra, at_shadow, cap_s = self._shadow(view, head, free, sums, started)
        # candidates: jobs after the head that fit the free cores and pass the check
        # alone with the current set (a necessary condition; the walk re-checks)
        rest = np.asarray(pos[k + 1:], dtype=np.int64)
        if len(rest) and cap is not None:
            rows = q.jobs[rest]
            if check == "mean":
                ok = sums.mean + mean[rows] <= cap
            elif check == "max":
                ok = sums.peak + peak[rows] <= cap
            else:
                ok = (sums.mean + mean[rows] + CHECKS[check]
                      * np.sqrt(np.maximum(sums.var + std[rows] ** 2, 0.0))) <= cap
            rest = rest[ok & (q.units[rest] <= free)]
        elif len(rest):
            rest = rest[q.units[rest] <= free]
        if len(rest) and shadow is not None:
            # long candidates must also fit what is left at the shadow time (necessary:
            # extra only shrinks and the set at the shadow only grows)
            long_ = now + np.maximum(q.estimate[rest], 1) > shadow
            ok = q.units[rest] <= extra
            if cap_s is not None:
                rows = q.jobs[rest]
                if check == "mean":
                    ok &= at_shadow.mean + mean[rows] <= cap_s
                elif check == "max":
                    ok &= at_shadow.peak + peak[rows] <= cap_s
                else:
                    ok &= (at_shadow.mean + mean[rows] + CHECKS[check] * np.sqrt(
                        np.maximum(at_shadow.var + std[rows] ** 2, 0.0))) <= cap_s
            rest = rest[~long_ | ok]
        for p in rest.tolist():
            if free <= 0:
                break
            j, u = jobs[p], units[p]
            if u > free or not fits(check, cap, sums, mean[j], peak[j], std[j]):
                continue
            if shadow is not None and now + max(est[p], 1) > shadow:
                if u > extra or not fits(check, cap_s, at_shadow, mean[j], peak[j], std[j]):
                    continue
                extra -= u
                at_shadow.add(mean[j], peak[j], std[j])
            free -= u
            sums.add(mean[j], peak[j], std[j])
            out.append(Start(j))
        return out

    def _shadow(self, view: View, head: int, free: int, sums: PowerSums,
                started: list[tuple[int, int, int]]):
        """The head's shadow time, the extra cores at it, the predicted power set at it
        (running then, head included) and the cap then; ``(None, ...)`` when the head
        never fits (the reference)."""
        q = view.queue
        mean, peak, std = self._predictions(view)
        j = int(q.jobs[head])
        need = int(q.units[head])
        running = view.running
        releases = [(int(e), int(u), int(r)) for e, u, r in
                    zip(running.est_end.tolist(), running.units.tolist(),
                        running.jobs.tolist(), strict=True)]
        releases += started
        releases.sort()
        steps = [] if view.cap_schedule is None else \
            [(t, w) for t, w in view.cap_schedule.steps if t > view.now]
        avail, s, cap = free, sums.copy(), view.cap
        fresh = {x[2] for x in started}  # started in this pass: at full power
        i = c = 0
        while True:
            t_rel = releases[i][0] if i < len(releases) else math.inf
            t_cap = steps[c][0] if c < len(steps) else math.inf
            t = min(t_rel, t_cap)
            if t == math.inf:
                return None, 0, s, cap
            while i < len(releases) and releases[i][0] == t:
                _, u, r = releases[i]
                lv = 1.0 if r in fresh else view.power_level(r)
                avail += u
                s.add(mean[r] * lv, peak[r] * lv, std[r] * lv, sign=-1.0)
                i += 1
            while c < len(steps) and steps[c][0] == t:
                cap = steps[c][1]
                c += 1
            if need <= avail and fits(self.check, cap, s, mean[j], peak[j], std[j]):
                s.add(mean[j], peak[j], std[j])
                return int(t), avail - need, s, cap

    # ------------------------------------------------------------------ node level
    def _easy_pc_nodes(self, view: View, order: np.ndarray) -> list[Decision]:
        """Algorithm 1 over the queue positions ``order`` on a node-level platform (see
        the module docstring, *Node-level platforms*): "fits the free cores" is the
        allocator's placement in the free resources, and "fits the extra cores" its
        placement within what is left at the shadow time once the head is placed
        there (:meth:`_shadow_nodes`) and the long jobs backfilled before took theirs."""
        q = view.queue
        now, cap, check = view.now, view.cap, self.check
        mean, peak, std = self._predictions(view)
        sums = self._running_sums(view)
        room = _Placement(view, self.allocator_)
        out: list[Decision] = []
        started: list[tuple[int, int, np.ndarray]] = []  # (planned end, job, used)
        pos = order.tolist()
        jobs, units, est = q.jobs.tolist(), q.units.tolist(), q.estimate.tolist()
        k = 0
        while k < len(pos):
            p = pos[k]
            j = jobs[p]
            if not fits(check, cap, sums, mean[j], peak[j], std[j]):
                break
            a = room.place(j, units[p])
            if a is None:
                break
            started.append((now + max(est[p], 1), j, room.take(j, a)))
            sums.add(mean[j], peak[j], std[j])
            out.append(Start(j, a))
            k += 1
        if k == len(pos):
            return out
        head = pos[k]
        shadow, extra, at_shadow, cap_s = self._shadow_nodes(view, jobs[head], units[head],
                                                             room.free, sums, started)
        # candidates: jobs after the head whose total request fits the free total of
        # each resource and that pass the check alone with the current set (necessary
        # conditions; the walk re-checks)
        rest = np.asarray(pos[k + 1:], dtype=np.int64)
        if len(rest):
            rows = q.jobs[rest]
            total = view.requests[rows] * q.units[rest][:, None]
            ok = (total <= room.free.sum(axis=0)).all(axis=1)
            ok &= passing(check, cap, sums, mean[rows], peak[rows], std[rows])
            rest = rest[ok]
        for p in rest.tolist():
            if not room.any_free():
                break
            j, u = jobs[p], units[p]
            if not fits(check, cap, sums, mean[j], peak[j], std[j]):
                continue
            long_ = shadow is not None and now + max(est[p], 1) > shadow
            if long_ and not fits(check, cap_s, at_shadow, mean[j], peak[j], std[j]):
                continue
            a = room.place(j, u, extra if long_ else None)
            if a is None:
                continue
            used = room.take(j, a)
            if long_:
                assert extra is not None  # a shadow time comes with its extra
                extra -= used
                at_shadow.add(mean[j], peak[j], std[j])
            sums.add(mean[j], peak[j], std[j])
            out.append(Start(j, a))
        return out

    def _shadow_nodes(self, view: View, j: int, need: int, free: np.ndarray,
                      sums: PowerSums, started: list[tuple[int, int, np.ndarray]]):
        """:meth:`_shadow` on a node-level platform, for head job ``j`` of ``need`` units
        (``free``: the resources physically free after this pass's ``started`` jobs,
        (planned end, job, resources used)): the release times (running jobs at their
        estimated ends, past ones counting as now; this pass's starts at their planned
        ends) and the cap's steps walked in time order, the free resources and the
        power set following them, until the allocator places the head and the check
        passes. Returns the shadow time, the *extra* resources there (free then minus
        the head's placement, nodes x resources), the power set at it (head
        included) and the cap then; ``(None, None, set, cap)`` when the head never fits.

        Walked lazily, each release updating only its nodes: per node the head's units
        that fit there are kept, and the allocator is called only where they add up to
        ``need`` (every built-in allocator needs that; any allocator decides)."""
        mean, peak, std = self._predictions(view)
        requests = view.requests
        req = requests[j]
        hpos, hreq = requested(req)
        free_m = free.copy()
        running = view.running
        # (time, job, nodes, per-node amounts, level): running jobs, then this pass's
        releases: list[tuple[int, int, np.ndarray, np.ndarray, float]] = []
        for e, r in zip(running.est_end.tolist(), running.jobs.tolist(), strict=True):
            a = view.allocation(r)
            assert a is not None  # node level: every running job has an allocation
            releases.append((max(int(e), view.now), r, a.nodes,
                             a.counts[:, None] * requests[r][None, :], view.power_level(r)))
        for e, r, used in started:
            nodes = np.flatnonzero(used.any(axis=1))
            releases.append((e, r, nodes, used[nodes], 1.0))
        releases.sort(key=lambda x: (x[0], x[1]))
        steps = [] if view.cap_schedule is None else \
            [(t, w) for t, w in view.cap_schedule.steps if t > view.now]
        screen = len(hpos) > 0
        if screen:
            fit_n = np.minimum(units_per_node_of(hpos, hreq, free_m), need)
            total = int(fit_n.sum())
        s, cap = sums.copy(), view.cap
        i = c = 0
        nr, nc = len(releases), len(steps)
        while True:
            t_rel = releases[i][0] if i < nr else math.inf
            t_cap = steps[c][0] if c < nc else math.inf
            t = min(t_rel, t_cap)
            if t == math.inf:
                return None, None, s, cap
            while i < nr and releases[i][0] == t:
                _, r, nodes, amounts, lv = releases[i]
                free_m[nodes] += amounts
                if screen:
                    f = np.minimum(units_per_node_of(hpos, hreq, free_m[nodes]), need)
                    total += int(f.sum() - fit_n[nodes].sum())
                    fit_n[nodes] = f
                s.add(mean[r] * lv, peak[r] * lv, std[r] * lv, sign=-1.0)
                i += 1
            while c < nc and steps[c][0] == t:
                cap = steps[c][1]
                c += 1
            if (screen and total < need) or not fits(self.check, cap, s, mean[j],
                                                     peak[j], std[j]):
                continue
            a = self.allocator_.allocate(req, need, free_m)
            if a is None:
                continue
            s.add(mean[j], peak[j], std[j])
            return int(t), free_m - a.matrix(req, free_m.shape[0]), s, cap


class ReferenceKnapsack(_PowerCapping):
    """Greedy knapsack (Carastan-Santos et al. 2024 Algorithm 2), the reference: ``value =
    wait | stretch``, ``check``. Every capped pass computed from the view in plain
    loops and floating-point sums; :class:`Knapsack` (registered as ``knapsack``) is its
    fast subclass, pinned to it by the same tests. Reachable by name as
    ``dispatchlab.dispatch.powercap.capped:ReferenceKnapsack``."""

    name = "knapsack-reference"

    def __init__(self, value: str = "wait", check: str = "mean",
                 allocator: str = "first-fit") -> None:
        self.value = value
        self.check = check
        self.allocator = allocator

    def validate(self) -> None:
        super().validate()
        if self.value not in ("wait", "stretch"):
            raise InputError(f"value must be wait or stretch, got {self.value!r}",
                             field="value")

    def _is_easy(self, view: View) -> bool:
        return view.cap is None

    def _reference(self, view: View) -> list[Decision]:
        """Algorithm 2: the never-fitting jobs rejected, then the queue sorted by value /
        weight, descending (ties: queue order), started in that order while they fit
        the free cores and the check; the first that does not stops the pass."""
        q = view.queue
        mean, peak, std = self._predictions(view)
        never = self._never_fit(view)
        out: list[Decision] = self._rejects(view, never) if len(never) else []
        skip = set(never.tolist())
        wait = (view.now - q.submit).astype(np.float64)
        if self.value == "wait":
            value = wait
        else:
            est = np.maximum(q.estimate, 1).astype(np.float64)
            value = (wait + est) / est
        weight = mean[q.jobs]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(weight > 0, value / np.where(weight > 0, weight, 1), np.inf)
        order = np.argsort(-ratio, kind="stable")  # ties: queue order
        free, cap, sums = view.free_cores, view.cap, self._running_sums(view)
        # node level: "fits the free cores" is the allocator's placement
        room = None if view.counting else _Placement(view, self.allocator_)
        for p in order.tolist():
            if p in skip:
                continue
            j, u = int(q.jobs[p]), int(q.units[p])
            if room is not None:
                if not fits(self.check, cap, sums, mean[j], peak[j], std[j]):
                    break
                a = room.place(j, u)
                if a is None:
                    break
                room.take(j, a)
                out.append(Start(j, a))
            else:
                if u > free or not fits(self.check, cap, sums, mean[j], peak[j], std[j]):
                    break
                free -= u
                out.append(Start(j))
            sums.add(mean[j], peak[j], std[j])
        return out


# ----------------------------------------------------------------------------- helpers
#: fixed point of the exact sums: a term of x W (or W^2) counts int(x * 2**64)
_SCALE = 2.0 ** 64
_UNSCALE = 2.0 ** -64
#: while every term is a whole number and all terms ever seen add up below this, the
#: reference's floating-point sums are exact (exact mode)
_EXACT_LIMIT = 2.0 ** 52
#: a floating-point sum of n terms is off by at most n x 2**-53 of the magnitudes summed.
#: A reference pass sums at most 2 (running jobs + free cores) + 2 terms into a set (the
#: running jobs, its starts - one core each at least -, the releases, the head); the
#: tolerance mode allows 1e-14 x (running jobs + free cores + 64) of the magnitudes,
#: over 20x that bound
_REL_PER_TERM = 1e-14
_INF = math.inf
#: a pass walks the jobs after the head directly when at most this many wait there
#: (below it the vector screen costs more than it saves)
_SHORT = 24
#: units of a job that left the waiting columns: no free core count reaches it
_GONE = np.iinfo(np.int64).max


class _Ambiguous(Exception):
    """A check came within rounding distance of its cap: the reference redoes the pass."""


class _Waiting:
    """The waiting jobs a power-capped dispatcher knows, in queue order (ascending job
    row), as numpy columns with room to grow at the end. A job that leaves (starts, is
    rejected) is marked gone (its units become ``_GONE``, which no free core count
    reaches, so every filter on ``units <= free`` drops it); the columns are compacted
    between passes once over a quarter of them are gone.

    Columns: ``rows``, ``units``, ``est1`` (max(estimate, 1)), ``submit`` (int64);
    ``x`` (the checked term: predicted mean, or max for the ``max`` check), ``s2``
    (std**2), ``mean`` and ``alone`` (the never-fit test's value) (float64); ``area``
    (est1 x units, int64)."""

    _INT = ("rows", "units", "est1", "submit", "area")
    _FLOAT = ("x", "s2", "mean", "alone")
    # the columns, set by _alloc (by name)
    rows: np.ndarray
    units: np.ndarray
    est1: np.ndarray
    submit: np.ndarray
    area: np.ndarray
    x: np.ndarray
    s2: np.ndarray
    mean: np.ndarray
    alone: np.ndarray

    def __init__(self) -> None:
        self.n = 0  # columns used
        self.live = 0  # jobs still waiting
        self.front = 0  # no waiting job before this position
        #: waiting job row -> its position, in queue order (ascending row)
        self.at: dict[int, int] = {}
        self._alloc(64)

    def _alloc(self, size: int) -> None:
        old = {c: getattr(self, c, None) for c in self._INT + self._FLOAT}
        for c in self._INT:
            setattr(self, c, np.zeros(size, dtype=np.int64))
        for c in self._FLOAT:
            setattr(self, c, np.zeros(size, dtype=np.float64))
        for c, a in old.items():
            if a is not None:
                getattr(self, c)[: self.n] = a[: self.n]

    def append(self, row: int, units: int, est1: int, submit: int, x: float, s2: float,
               mean: float, alone: float) -> int:
        """Add a job at the end; its position."""
        i = self.n
        if i == len(self.rows):
            self._alloc(2 * i)
        self.rows[i] = row
        self.units[i] = units
        self.est1[i] = est1
        self.submit[i] = submit
        self.area[i] = est1 * units
        self.x[i] = x
        self.s2[i] = s2
        self.mean[i] = mean
        self.alone[i] = alone
        self.at[row] = i
        self.n = i + 1
        self.live += 1
        return i

    def position(self, row: int) -> int:
        """The position of waiting job ``row`` (-1 if it is not here)."""
        return self.at.get(row, -1)

    def remove(self, i: int) -> None:
        del self.at[int(self.rows[i])]
        self.units[i] = _GONE
        self.live -= 1
        if i == self.front:
            units, n = self.units, self.n
            while i < n and units[i] == _GONE:
                i += 1
            self.front = i

    def compact(self) -> None:
        """Drop the gone jobs (positions change: call between passes only)."""
        n = self.n
        keep = self.units[:n] != _GONE
        k = int(keep.sum())
        for c in self._INT + self._FLOAT:
            a = getattr(self, c)
            a[:k] = a[:n][keep]
        self.n, self.live, self.front = k, k, 0
        self.at = dict(zip(self.rows[:k].tolist(), range(k), strict=True))


class _PowerCapped(_PowerCapping):
    """The fast passes of :class:`EasyPC` and :class:`Knapsack` (module docstring,
    *Speed*): the decisions of the reference passes of :class:`_PowerCapping`, on a
    picture of the system kept between passes; a pass too close to call, or while a
    running job's power level is not 1, is the reference's."""

    easy_class = EASY

    def start(self, view: View) -> None:
        super().start(view)
        n = len(view.jobs)
        #: z of a gaussian check, 0 for mean / max
        self._z = CHECKS[self.check] or 0
        # per job row (filled at submission): units, max(estimate, 1), checked term x
        # (mean, or max for the max check), variance std**2
        self._units = array("q", np.asarray(view.jobs["units"], dtype=np.int64).tobytes())
        self._submit = np.asarray(view.jobs["submit"], dtype=np.int64)
        zeros = bytes(8 * n)
        self._est1 = array("q", zeros)
        self._x, self._s2 = array("d", zeros), array("d", zeros)
        self._w = _Waiting()
        self._last_row = -1  # the last job row seen submitted
        # running jobs: sorted keys (estimated end << shift | row), their terms, and the
        # exact sums of x and of the variances (fixed point)
        self._shift = max(20, int(n).bit_length())
        self._mask = (1 << self._shift) - 1
        self._run: list[int] = []
        #: running job -> (its key, units, x and variance in fixed point)
        self._running: dict[int, tuple[int, int, int, int]] = {}
        self._sx = 0
        self._sv = 0
        #: running jobs whose power level is not 1: passes go to the reference
        self._scaled: set[int] = set()
        # exact mode: every term so far a whole number, their total below 2**52
        self._exact = True
        self._total = 0.0
        self._rel = 0.0  # the tolerance mode's relative bound in this pass
        # the cap ahead: steps after now, the largest cap left (None: uncapped time
        # ahead), valid until the next step
        self._until: float = -1  # a time, or _INF
        self._steps: list[tuple[int, float | None]] = []
        self._top: float | None = None
        self._top_changed = False
        #: the rows queued since the previous pass (never-fitting ones left out)
        self._fresh: list[int] = []
        #: what the next pass may reuse if only submissions happen before it
        self._cache: tuple | None = None
        #: passes decided on the dispatcher's picture / handed to the reference
        self.fast_passes_ = 0
        self.reference_passes_ = 0

    # ------------------------------------------------------------------ bookkeeping
    def _absorb(self, view: View) -> list[int]:
        """Bring the dispatcher's picture up to date with what changed since its last
        pass; returns the job rows to reject (never fitting), in queue order."""
        ch = view.changed
        for j in ch.completed:
            self._run_remove(j)
        if ch.reestimated:
            self._reestimate(view, ch.reestimated)
        now = view.now
        w = self._w
        if now >= self._until:
            self._cap_ahead(view)
        rejects: list[int] = []
        self._fresh = []  # the rows queued since the previous pass
        if ch.submitted:
            rows, units, ests = view.queued_after(self._last_row)
            if rows:
                self._last_row = rows[-1]
                self._new(view, rows, units, ests, rejects)
        if self._top_changed:
            self._top_changed = False
            if self._top is not None and w.live:
                n = w.n
                gone = np.flatnonzero((w.alone[:n] > self._top) & (w.units[:n] != _GONE))
                if len(gone):
                    old = w.rows[gone].tolist()
                    for i in gone.tolist():
                        w.remove(i)
                        self._unorder(int(w.rows[i]))
                    rejects = sorted(old + rejects)
        return rejects

    def _new(self, view: View, rows: list[int], units: list[int], ests: list[int],
             rejects: list[int]) -> None:
        """Record newly submitted jobs; those that can never start go to ``rejects``."""
        prediction = view.power_prediction
        assert prediction is not None  # start() refuses a run without one
        pm, pp, ps = prediction
        z, top, w, fresh = self._z, self._top, self._w, self._fresh
        peak = self.check == "max"
        for j, u, e in zip(rows, units, ests, strict=True):
            m, s = float(pm[j]), float(ps[j])
            x = float(pp[j]) if peak else m
            s2 = s * s if z else 0.0  # the deviation only counts in gaussian checks
            alone = x + z * s if z else x
            if top is not None and alone > top:
                rejects.append(j)
                continue
            e1 = e if e > 0 else 1
            self._est1[j] = e1
            self._x[j] = x
            self._s2[j] = s2
            if self._exact:
                self._total += x + s2
                if not (x.is_integer() and s2.is_integer() and self._total < _EXACT_LIMIT):
                    self._exact = False
            w.append(j, u, e1, int(self._submit[j]), x, s2, m, alone)
            fresh.append(j)
            self._order_add(j)

    def _cap_ahead(self, view: View) -> None:
        """The cap's steps after now and the largest cap left (None when uncapped time
        lies ahead), valid until the next step."""
        now = view.now
        sched = view.cap_schedule
        self._steps = [] if sched is None else [(t, w) for t, w in sched.steps if t > now]
        self._until = self._steps[0][0] if self._steps else _INF
        caps = [view.cap] + [w for _, w in self._steps]
        top = None if any(c is None for c in caps) else max(cast("list[float]", caps))
        self._top_changed = top != self._top
        self._top = top

    def _run_add(self, j: int, end: int) -> None:
        key = (end << self._shift) | j
        insort(self._run, key)
        xi, vi = int(self._x[j] * _SCALE), int(self._s2[j] * _SCALE)
        self._running[j] = (key, self._units[j], xi, vi)
        self._sx += xi
        self._sv += vi

    def _run_remove(self, j: int) -> None:
        entry = self._running.pop(j, None)
        if entry is None:
            return
        key, _, xi, vi = entry
        run = self._run
        del run[bisect_left(run, key)]
        self._sx -= xi
        self._sv -= vi
        self._scaled.discard(j)

    def _reestimate(self, view: View, jobs: tuple[int, ...]) -> None:
        """New estimated ends (or power levels) of running jobs: re-read them (each
        O(1), :meth:`View.estimated_end`)."""
        for j in jobs:
            if j not in self._running:
                continue
            key, u, xi, vi = self._running[j]
            del self._run[bisect_left(self._run, key)]
            key = (view.estimated_end(j) << self._shift) | j
            insort(self._run, key)
            self._running[j] = (key, u, xi, vi)
            if view.power_level(j) != 1.0:
                self._scaled.add(j)
            else:
                self._scaled.discard(j)

    def _apply(self, view: View, out: list[Decision]) -> None:
        """Record the pass's decisions in the dispatcher's picture."""
        now, w = view.now, self._w
        for d in out:
            j = d.job
            i = w.position(j)
            if i >= 0:
                w.remove(i)
                self._unorder(j)
            if type(d) is Start:
                self._run_add(j, now + self._est1[j])
        if w.n > 256 and 4 * (w.n - w.live) > w.n:
            w.compact()

    # saf keeps the waiting jobs' order in a sorted list; fcfs needs none
    def dispatch(self, view: View) -> list[Decision]:
        """One pass: EASY itself where no cap applies (:meth:`_is_easy`), else the fast
        pass on the dispatcher's picture, or the plain :meth:`_reference` pass while a
        power level differs from 1 or when a check is too close to call exactly."""
        if not view.counting:  # node level: the reference passes (no picture kept)
            return _PowerCapping.dispatch(self, view)
        rejects = self._absorb(view)
        if self._is_easy(view):
            self._cache = None
            out = self.easy_.dispatch(view)
        elif self._scaled:
            out = self._fallback(view)
        else:
            try:
                out = self._fast(view, rejects)
                self.fast_passes_ += 1
            except _Ambiguous:
                out = self._fallback(view)
        self._apply(view, out)
        return out

    def _fallback(self, view: View) -> list[Decision]:
        """The reference pass, counted; the next pass is computed in full."""
        self._cache = None
        self.reference_passes_ += 1
        return self._reference(view)

    @abstractmethod
    def _fast(self, view: View, rejects: list[int]) -> list[Decision]:
        """The pass on the dispatcher's picture (:class:`_Ambiguous` if too close)."""

    def _order_add(self, j: int) -> None:
        pass

    def _unorder(self, j: int) -> None:
        pass
    # ------------------------------------------------------------------ checks
    def _fits(self, cap: float, sx: int, sv: int, x: float, s2: float, mag: float,
              magv: float) -> bool:
        """Whether the set with exact sums (``sx``, ``sv``, fixed point) plus a job
        (``x``, ``s2``) passes the check at ``cap`` as the reference decides it.

        Exact mode: the reference's sums equal the exact ones, and the same expression
        gives the same bits. Tolerance mode: decided only when the margin exceeds the
        reference's possible rounding (``mag``, ``magv``: the magnitudes it sums), else
        :class:`_Ambiguous`."""
        fx = sx * _UNSCALE
        z = self._z
        if z:
            r = math.sqrt(max(sv * _UNSCALE + s2, 0.0))
            lhs = fx + x + z * r
        else:
            lhs = fx + x
        if self._exact:
            return lhs <= cap
        rel = self._rel
        tol = rel * (cap + lhs + mag) + 1e-12
        if z:
            dv = rel * magv + 1e-12
            tol += z * (min(math.sqrt(dv), dv / r) if r > 0 else math.sqrt(dv))
        if lhs <= cap - tol:
            return True
        if lhs > cap + tol:
            return False
        raise _Ambiguous

    def _limit(self, cap: float | None, sx: int, sv: int, mag: float,
               magv: float) -> tuple[float, float] | None:
        """For vector pre-filters of the check at ``cap`` with the set (``sx``, ``sv``):
        ``(lim, v)`` such that every job :meth:`_fits` could let through has
        ``x + z sqrt(v + s2) <= lim`` (the cap widened beyond any tolerance, minus
        the set's power; ``v`` its variance); None without a cap."""
        if cap is None:
            return None
        if self._exact:
            slack = 1e-9 * cap
        else:
            slack = 2 * self._rel * (3 * cap + mag) + 1e-9
            if self._z:
                slack += 2 * self._z * math.sqrt(self._rel * magv + 1e-12)
        return cap + slack - sx * _UNSCALE, max(sv * _UNSCALE, 0.0)
    # ------------------------------------------------------------------ fast parts
    def _shadow_fast(self, now: int, free: int, head: int, sx: int, sv: int,
                     started: list[tuple[int, int]], cap: float | None, mag: float,
                     magv: float):
        """:meth:`_shadow` on the dispatcher's picture: ``(shadow, extra, sx, sv,
        cap)`` at the shadow time (exact sums with the head), ``shadow`` None when the
        head never fits. ``started``: (end, row) of the jobs started in this pass."""
        shift, mask, running = self._shift, self._mask, self._running
        need, xh, s2h = self._units[head], self._x[head], self._s2[head]
        z, exact = self._z, self._exact
        # a bound on the tolerance of _fits beyond its (cap + lhs) term, for a cheap
        # first look at each release time
        rel = self._rel
        zt = 1e-12 + (z * math.sqrt(rel * magv + 1e-12) if z else 0.0)
        releases = self._run
        if started:
            terms = {j: ((e << shift) | j, self._units[j], int(self._x[j] * _SCALE),
                         int(self._s2[j] * _SCALE)) for e, j in started}
            running = {**running, **terms}
            releases = sorted(releases + [key for key, _, _, _ in terms.values()])
        steps = self._steps
        nr, nc = len(releases), len(steps)
        i = c = 0
        t_cap = steps[0][0] if nc else _INF
        avail = free
        t: float  # a release or step time (_INF only as t_cap, never returned)
        while True:
            if i < nr:
                t = releases[i] >> shift
                if t < now:  # an estimate already past counts as ending now
                    t = now
                if t_cap < t:
                    t = t_cap
            elif t_cap < _INF:
                t = t_cap
            else:
                return None, 0, sx, sv, cap
            while i < nr and releases[i] >> shift <= t:
                _, u, xi, vi = running[releases[i] & mask]
                avail += u
                sx -= xi
                sv -= vi
                i += 1
            while c < nc and steps[c][0] == t:
                cap = steps[c][1]
                c += 1
                t_cap = steps[c][0] if c < nc else _INF
            if need > avail:
                continue
            if cap is not None:
                if z:
                    lhs = sx * _UNSCALE + xh + z * math.sqrt(max(sv * _UNSCALE + s2h, 0.0))
                else:
                    lhs = sx * _UNSCALE + xh
                if exact:
                    if lhs > cap:
                        continue
                elif lhs - cap > rel * (cap + lhs + mag) + zt or not (
                        cap - lhs > rel * (cap + lhs + mag) + zt
                        or self._fits(cap, sx, sv, xh, s2h, mag, magv)):
                    continue
            return t, avail - need, sx + int(xh * _SCALE), sv + int(s2h * _SCALE), cap

class EasyPC(_PowerCapped, ReferenceEasyPC):
    """EASY+PC (Carastan-Santos et al. 2024 Algorithm 1): ``order = fcfs | saf``, ``check`` (see the
    module docstring). The fast passes with the parameters of :class:`ReferenceEasyPC`,
    whose decisions they make (tests/dispatch/powercap/test_power_properties.py checks
    every pass)."""

    name = "easy-pc"

    def start(self, view: View) -> None:
        super().start(view)
        self._saf = self.order == "saf"
        #: saf: the waiting jobs as a sorted list of (area, row)
        self._sorted: list[tuple[int, int]] = []

    def _order_add(self, j: int) -> None:
        if self._saf:
            insort(self._sorted, (self._est1[j] * self._units[j], j))

    def _unorder(self, j: int) -> None:
        if self._saf:
            s = self._sorted
            del s[bisect_left(s, (self._est1[j] * self._units[j], j))]
    # ------------------------------------------------------------------ the fast pass
    def _fast(self, view: View, rejects: list[int]) -> list[Decision]:
        """One pass of Algorithm 1 on the dispatcher's picture (same decisions as
        :meth:`_reference`; :class:`_Ambiguous` when a check is too close to call)."""
        out: list[Decision] = [self._reject(view, j) for j in rejects] if rejects else []
        self._rel = _REL_PER_TERM * (len(self._run) + view.free_cores + 64)
        cache, self._cache = self._cache, None
        if cache is not None and cache[0] == view.changes and not rejects:
            first_end = view.first_estimated_end()
            if first_end is None or first_end > view.now:
                done = self._submitted_only(view, cache, out)
                if done is not None:
                    return done
        return self._full(view, out)

    def _submitted_only(self, view: View, cache: tuple, out: list[Decision]):
        """The pass when only submissions happened since the cached one: the new jobs
        are the only candidates (see the module docstring); None when the pass must be
        computed in full (saf: a new job sorts before the head)."""
        _, head, head_key, shadow, extra, ssx, ssv, cap_s = cache
        units, est1 = self._units, self._est1
        new = self._fresh
        if self._saf and new:
            keys = sorted((est1[j] * units[j], j) for j in new)
            if keys[0] < head_key:
                return None
            new = [j for _, j in keys]
        if new:
            xh, s2h = self._x[head], self._s2[head]
            mag = 2 * (self._sx * _UNSCALE) + xh
            magv = 2 * (self._sv * _UNSCALE) + s2h
            starts, extra, ssx, ssv = self._walk(
                view.now, view.cap, new, None, view.free_cores, self._sx, self._sv, shadow,
                extra, cap_s, ssx, ssv, mag, magv)
            out.extend([Start(j) for j in starts])
        self._cache = (view.changes, head, head_key, shadow, extra, ssx, ssv, cap_s)
        return out

    def _full(self, view: View, out: list[Decision]) -> list[Decision]:
        """The whole pass: start phase, head and shadow time, backfill."""
        now, cap = view.now, view.cap
        free = view.free_cores
        w = self._w
        units, xs, s2s, est1 = self._units, self._x, self._s2, self._est1
        sx, sv = self._sx, self._sv
        mag, magv = 2 * (sx * _UNSCALE), 2 * (sv * _UNSCALE)
        fits = self._fits
        started: list[tuple[int, int]] = []  # (end, row)
        # the start phase, in the pass's order (fcfs: queue order; saf: by area)
        head = head_pos = -1
        order = ((-1, j) for _, j in self._sorted) if self._saf else self._queue_order()
        for p, j in order:
            u, x, s2 = units[j], xs[j], s2s[j]
            if u <= free and (cap is None or fits(cap, sx, sv, x, s2, mag + 2 * x,
                                                  magv + 2 * s2)):
                free -= u
                sx += int(x * _SCALE)
                sv += int(s2 * _SCALE)
                mag += 2 * x
                magv += 2 * s2
                started.append((now + est1[j], j))
                out.append(Start(j))
                continue
            head, head_pos = j, p
            break
        if head < 0:
            return out
        mag += xs[head]
        magv += s2s[head]
        shadow, extra, ssx, ssv, cap_s = self._shadow_fast(now, free, head, sx, sv, started,
                                                           cap, mag, magv)
        head_key = (est1[head] * units[head], head)
        if free > 0:
            if w.live - len(started) - 1 <= _SHORT:
                # few jobs after the head: the walk itself tests them all (the screen is
                # a cheap superset for long queues only; the walk decides either way)
                idx = None
                cand = [j for _, j in order]
            else:
                now_lim = self._limit(cap, sx, sv, mag, magv)
                shadow_lim = None if shadow is None else self._limit(cap_s, ssx, ssv, mag,
                                                                     magv)
                if self._saf:
                    n = w.n
                    area, rows = w.area[:n], w.rows[:n]
                    after = (area > head_key[0]) | ((area == head_key[0]) & (rows > head))
                    idx = self._screen(slice(0, n), now, free, now_lim, shadow, extra,
                                       shadow_lim, after)
                    if len(idx) > 1:
                        idx = idx[np.lexsort((w.rows[idx], w.area[idx]))]
                else:
                    idx = self._screen(slice(head_pos + 1, w.n), now, free, now_lim,
                                       shadow, extra, shadow_lim)
                cand = w.rows[idx].tolist()
            if cand:
                starts, extra, ssx, ssv = self._walk(now, cap, cand, idx, free, sx, sv,
                                                     shadow, extra, cap_s, ssx, ssv, mag,
                                                     magv)
                out.extend([Start(j) for j in starts])
        self._cache = (view.changes, head, head_key, shadow, extra, ssx, ssv, cap_s)
        return out

    def _queue_order(self):
        """(position, row) of the waiting jobs in queue order (the position map keeps
        the order in which jobs were queued, and only waiting jobs)."""
        return ((i, j) for j, i in self._w.at.items())

    def _screen(self, sel, now: int, free: int, now_lim: tuple[float, float] | None,
                shadow: int | None, extra: int, shadow_lim: tuple[float, float] | None,
                mask: np.ndarray | None = None) -> np.ndarray:
        """The backfill candidates among the waiting-column positions ``sel`` (a slice or
        an array of positions, in walk order; ``mask``: also required), their order
        kept: jobs that fit the free cores and the check now (``now_lim``, see
        :meth:`_limit`) and, ending after the shadow time, the extra cores and the
        check at it (``shadow_lim``). A superset (the power checks are widened; the
        walk decides): cheap necessary tests run over all of ``sel``, the gaussian's
        square roots only over the few that pass them."""
        w, z = self._w, self._z
        u, x = w.units[sel], w.x[sel]
        ok = u <= free
        if mask is not None:
            ok &= mask
        if now_lim is not None:
            # sqrt(v + s2) >= sqrt(v): a necessary bound without the job's variance
            lim, v = now_lim
            ok &= x <= (lim - z * math.sqrt(v) * (1 - 1e-12) if z else lim)
        if shadow is not None:
            fit_s = None if extra >= free else u <= extra
            if shadow_lim is not None:
                lim, v = shadow_lim
                below = x <= (lim - z * math.sqrt(v) * (1 - 1e-12) if z else lim)
                fit_s = below if fit_s is None else fit_s & below
            if fit_s is not None:
                ok &= (w.est1[sel] <= shadow - now) | fit_s
        hit = ok.nonzero()[0]
        idx = hit + sel.start if isinstance(sel, slice) else sel[hit]
        if z and len(idx) > 8 and (now_lim is not None or shadow_lim is not None):
            # the gaussian checks themselves (widened) over the few left
            x, s2 = w.x[idx], w.s2[idx]
            keep = None
            if now_lim is not None:
                keep = x + z * np.sqrt(now_lim[1] + s2) <= now_lim[0]
            if shadow is not None and shadow_lim is not None:
                fit_s = (w.est1[idx] <= shadow - now) | (
                    x + z * np.sqrt(shadow_lim[1] + s2) <= shadow_lim[0])
                keep = fit_s if keep is None else keep & fit_s
            idx = idx[keep]
        return idx

    def _walk(self, now: int, cap: float | None, cand: list[int], pos: np.ndarray | None,
              free: int, sx: int, sv: int, shadow: int | None, extra: int,
              cap_s: float | None, ssx: int, ssv: int, mag: float, magv: float):
        """The backfill walk over candidate rows ``cand`` (in order; ``pos``: their
        waiting-column positions, to screen the rest again after a start): a job starts
        when it fits the free cores and the check now and, ending after the shadow
        time, the extra cores and the check at it (``mag``, ``magv``: the magnitudes
        for :meth:`_fits`). Returns the rows started and the extra cores and exact set
        sums at the shadow time after them."""
        units, xs, s2s, est1 = self._units, self._x, self._s2, self._est1
        fits = self._fits
        starts: list[int] = []
        k, nc = 0, len(cand)
        while k < nc and free > 0:
            j = cand[k]
            k += 1
            u = units[j]
            if u > free:
                continue
            x, s2 = xs[j], s2s[j]
            if cap is not None and not fits(cap, sx, sv, x, s2, mag + 2 * x, magv + 2 * s2):
                continue
            xi, vi = int(x * _SCALE), int(s2 * _SCALE)
            if shadow is not None and now + est1[j] > shadow:
                if u > extra or (cap_s is not None and not fits(
                        cap_s, ssx, ssv, x, s2, mag + 2 * x, magv + 2 * s2)):
                    continue
                extra -= u
                ssx += xi
                ssv += vi
            free -= u
            sx += xi
            sv += vi
            mag += 2 * x
            magv += 2 * s2
            starts.append(j)
            if pos is not None and nc - k > 8 and free > 0:
                # the sets grew: screen the rest again
                pos = self._screen(pos[k:], now, free, self._limit(cap, sx, sv, mag, magv),
                                   shadow, extra, None if shadow is None else
                                   self._limit(cap_s, ssx, ssv, mag, magv))
                k = 0
                cand = self._w.rows[pos].tolist()
                nc = len(cand)
        return starts, extra, ssx, ssv

class Knapsack(_PowerCapped, ReferenceKnapsack):
    """Greedy knapsack (Carastan-Santos et al. 2024 Algorithm 2): ``value = wait | stretch``,
    ``check``. The fast passes with the parameters of :class:`ReferenceKnapsack`, whose
    decisions they make (tests/dispatch/powercap/test_power_properties.py runs both)."""

    name = "knapsack"

    def _fast(self, view: View, rejects: list[int]) -> list[Decision]:
        """The knapsack pass on the dispatcher's picture: the next job is the first
        maximum of value / weight among those not taken (the stable sort's order)."""
        out: list[Decision] = [self._reject(view, j) for j in rejects]
        self._rel = _REL_PER_TERM * (len(self._run) + view.free_cores + 64)
        w = self._w
        lo, n = w.front, w.n
        if lo >= n:
            return out
        now, cap = view.now, view.cap
        assert cap is not None  # a pass without a cap is EASY's (_is_easy)
        free = view.free_cores
        wait = (now - w.submit[lo:n]).astype(np.float64)
        if self.value == "wait":
            value = wait
        else:
            est = w.est1[lo:n].astype(np.float64)
            value = (wait + est) / est
        weight = w.mean[lo:n]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(weight > 0, value / np.where(weight > 0, weight, 1), np.inf)
        u_all = w.units[lo:n]
        ratio[u_all == _GONE] = -np.inf
        units, xs, s2s = self._units, self._x, self._s2
        sx, sv = self._sx, self._sv
        mag, magv = 2 * (sx * _UNSCALE), 2 * (sv * _UNSCALE)
        rows = w.rows
        while True:
            p = int(ratio.argmax())
            if ratio[p] == -np.inf:
                break
            j = int(rows[lo + p])
            u, x, s2 = units[j], xs[j], s2s[j]
            if u > free or not self._fits(cap, sx, sv, x, s2, mag + 2 * x, magv + 2 * s2):
                break
            free -= u
            sx += int(x * _SCALE)
            sv += int(s2 * _SCALE)
            mag += 2 * x
            magv += 2 * s2
            out.append(Start(j))
            ratio[p] = -np.inf
        return out
__all__ = ["CHECKS", "EasyPC", "Knapsack", "PowerSums", "ReferenceEasyPC", "ReferenceKnapsack",
           "fits", "passing"]
