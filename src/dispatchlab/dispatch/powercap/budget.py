"""Power-budget EASY variants of PA-HPC-SIM (Borghesi et al. 2018): ``bf`` and ``dvfs``.

Both are the EASY skeleton of PA-HPC-SIM (``BackFillingScheduler.hpp::schedule_easy``
and ``StaticDVFSScheduler.hpp``) with a power
budget checked on *predicted* power.

.. warning::
   **This is not textbook EASY.** PA's variant, kept here on purpose:

   * a backfilled job must end **strictly before** the head's shadow time
     (``now + max(estimate, 1) < shadow``; a job ending exactly at the shadow time is
     refused, where textbook EASY, :class:`~dispatchlab.dispatch.backfill.EASY`, takes
     it);
   * there is **no "extra nodes" rule**: a job ending after the shadow time is never
     backfilled, even when it would fit in what the head leaves free at the shadow time;
   * when the head can **never** fit (its predicted power does not fit the budget even
     with every running job released), it has no shadow time and **nothing is
     backfilled** in that pass.

**Budget.** ``B = margin x view.cap`` (``bf``: ``margin x cap_scale x view.cap``). The
*predicted power* of a running job is its prediction (``view.power_prediction`` mean,
W, whole job at full level) times its current level (``view.power_level``); a job
started in the same pass counts its prediction times the level it starts at. A job
fits the power now when ``sum(running) + sum(started this pass) + pred_j <= B``. No cap
now (``view.cap`` None): no power check (the methods are their uncapped selves). A job
without a prediction (NaN) counts 0 W (ours).

**BF** (``bf``; ``BF(margin=1.0, cap_scale=1.0, power_check=True,
allocator="first-fit")``), one pass:

1. walk the queue in FCFS order, starting each job that fits the resources now and the
   power; the first that does not is the *head*;
2. its *shadow time*: running jobs are released in order of estimated end (an end
   already past counts as now; jobs started in step 1 release at
   ``now + max(estimate, 1)``), and the shadow time is the first release time at which
   the head fits the resources **and** the power. None when it never does;
3. with a shadow time, every later job in queue order that fits the resources and the
   power now **and** ends strictly before the shadow time starts now.

``cap_scale`` multiplies the budget (Borghesi et al. 2018's admission control: the RAPL methods
admit jobs with BF checking ``3 x`` the budget and let the throttling enforce the real
one). ``power_check=False`` is PA's EASY without power (``admission = none``). BF keeps
no state between passes and does not touch the view: it can be driven as an inner
component (``bf.start(view)`` once, then ``bf.dispatch(view)``).

**DVFS** (``dvfs``; ``DVFS(margin=1.0, bsld_theta=300, allocator="first-fit")``): the
same skeleton; a job that fits the resources but not the power at full level is tried
at a reduced level (PA's "RAPL-like" static DVFS, no discrete frequencies):

* ``avail = B - sum(running) - sum(started this pass)``, ``M = avail / pred_j``; no
  reduction when ``M <= 0`` (the job does not fit now);
* ``M`` is never below the job's floor of 1 W per node, ``min(1, nodes_j / pred_j)``
  (``nodes_j``: distinct nodes of the allocation it would get now; counting platforms:
  its units). *Ours*: when ``M`` is below the floor the job does not fit now (raising
  ``M`` to the floor would break the budget);
* stretched duration ``D' = est / view.speed(j, M)`` (the engine's duration model:
  with ``factor`` F, ``D' = max(1, F / M) x est``);
* dynamic BSLD threshold from the hypothetical power ``H = sum(running) + sum(started)
  + M x pred_j``: ``H < 0.25 B`` -> 0, ``H > 0.75 B`` -> 10, else 2 (PA's rule, kept
  as written; note that with ``M = avail / pred_j`` the hypothetical power *is* the
  budget ``B``, so in PA's formula, and here, the threshold is always 10);
* predicted ``BSLD = max(1, (now - submit + D') / max(bsld_theta, est))``
  (``bsld_theta`` = 300 s as Borghesi et al. 2018's metric; PA's code uses 60 s); if
  ``BSLD >= threshold`` the reduction is refused (the job keeps full power and does not
  fit now), else it starts now at level ``M``: the pass returns ``Start(j)`` followed by
  ``SetPower(j, M)`` (the level is kept for the job's whole life).

Backfill candidates go through the same routine; the shadow test uses the stretched
planned duration (``now + ceil(max(est, 1) / speed) < shadow``, the engine's own
rounding of the planned end). A throttled running job counts ``pred x level`` for every
dispatcher afterwards.

**Jobs that can never start** (ours, as :class:`~dispatchlab.dispatch.powercap.capped.EasyPC`):
PA would leave such a job at the head forever (blocking every backfill); the engine
refuses runs that leave jobs waiting, so:

* BF rejects (``Reject`` with the reason) a waiting job whose predicted power alone
  exceeds the largest budget of the rest of the run (no uncapped time ahead);
* DVFS can start such a job at a reduced level, so it rejects only a job whose *floor*
  (1 W per node on the fewest nodes it can occupy) exceeds that budget. A job that can
  never run at full power is tried at a reduced level as any other, but since its
  BSLD refusal only gets stricter as it waits (it could wait forever), the refusal is
  waived when nothing running (or started in the pass) holds predicted power: its level
  ``budget / pred`` is then the best it can ever get (ours). Its shadow time at full
  power does not exist, so, as PA, nothing is backfilled while it is the head.

**Cap steps** (ours): the shadow time uses the cap now (PA's budget is constant); a cap
change triggers a pass, which recomputes everything.

**Node-level platforms**: the resource fit is the allocator's placement on the free
nodes (default ``first-fit``: nodes in id order, as PA); the shadow time is the first
breakpoint of the release profile (running jobs released at their estimated ends, the
jobs started in the pass holding their resources until their planned ends) where the
allocator places the head, found by walking the breakpoints in time order up to it
(:meth:`_BudgetEasy._node_shadow`; the same time as the view's whole
:meth:`~dispatchlab.dispatch.base.View.release_profile`, tested) and computed only when
some backfill candidate fits now. Counting platforms: cores.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from fractions import Fraction
from typing import ClassVar

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Nested
from dispatchlab.dispatch.allocators import (
    ALLOCATORS,
    Allocator,
    make_allocator,
    requested,
    start_allocator,
    units_per_node,
    units_per_node_of,
)
from dispatchlab.dispatch.base import (
    Decision,
    Dispatcher,
    QueueColumns,
    Reject,
    SetPower,
    Start,
    View,
)
from dispatchlab.dispatch.profile import planned

_NEVER = 1 << 62

#: DVFS's dynamic BSLD threshold bands (PA ``StaticDVFSScheduler.hpp``): hypothetical
#: power below LOW x budget -> 0, above HIGH x budget -> 10, else 2
DVFS_LOW, DVFS_HIGH = 0.25, 0.75
DVFS_THRESHOLDS = (0.0, 2.0, 10.0)


def node_units(row: list[int], pos: list[int], per_unit: list[int], cap: int) -> int:
    """How many units of a request a node with free resources ``row`` hosts, clipped to
    ``[0, cap]``: the fewest over the requested resources ``pos`` of ``row[p] //
    per_unit`` (``pos`` not empty). Summed over nodes, the units a free matrix hosts in
    total: no allocator places more (the shadow time's screen of allocator calls)."""
    f = min(row[p] // q for p, q in zip(pos, per_unit, strict=True))
    return 0 if f < 0 else cap if f > cap else f


def power_releases(running, run_power: list[float], started) -> list[tuple[int, float]]:
    """(time, W) of the predicted power each running job (at its estimated end) and each
    of this pass's starts (at its planned end) gives back, in time order (stable: the
    order in which both shadow walks sum them)."""
    out = list(zip(running.est_end.tolist(), run_power, strict=True))
    out += [(end, pw) for end, pw, _ in started]
    out.sort(key=lambda r: r[0])
    return out


def dvfs_threshold(hypothetical: float, budget: float) -> float:
    """DVFS's BSLD threshold for a hypothetical power sum against ``budget`` (W)."""
    if hypothetical < DVFS_LOW * budget:
        return DVFS_THRESHOLDS[0]
    if hypothetical > DVFS_HIGH * budget:
        return DVFS_THRESHOLDS[2]
    return DVFS_THRESHOLDS[1]


def predicted_bsld(now: int, submit: int, stretched: float, estimate: float,
                   theta: float) -> float:
    """``max(1, (now - submit + D') / max(theta, estimate))`` (Borghesi et al. 2018 eq. 3,
    predicted)."""
    return max(1.0, (now - submit + stretched) / max(theta, estimate))


def stretched_end(now: int, estimate: int, speed: float | Fraction) -> int:
    """The planned end of a job started now at ``speed``: ``now + ceil(max(est, 1) /
    speed)`` in exact arithmetic, as the engine rescales a planned end."""
    if speed == 1:
        return now + planned(estimate)
    return now + math.ceil(Fraction(planned(estimate)) / Fraction(speed))


def _exact_speed(view: View, job: int, level: float) -> Fraction:
    """The duration model's speed as the engine applies it: the view's exact speed when
    it offers one, else the float speed's exact value (what the engine uses today)."""
    exact = getattr(view, "exact_speed", None)
    if exact is not None:
        return Fraction(exact(job, level))
    return Fraction(view.speed(job, level))


class _BudgetEasy(Dispatcher):
    """The shared skeleton (see the module docstring)."""

    margin: float
    allocator: str
    call_on_empty_queue = False
    #: whether a job that fails the power check at full power may start reduced
    reduces: ClassVar[bool] = False
    #: check_dispatcher gives such dispatchers a power predictor and a cap
    needs_power = True
    #: a power-capping method: the command line refuses it without a cap
    needs_cap = True
    nested: ClassVar[Nested] = {"allocator": ALLOCATORS}

    # ------------------------------------------------------------------ set-up
    def validate(self) -> None:
        m = self.margin
        if isinstance(m, bool) or not isinstance(m, int | float) or not 0 < m <= 1:
            raise InputError(f"margin must be in (0, 1], got {m!r}", field="margin")
        make_allocator(self.allocator)

    def _scale(self) -> float:
        """The budget's factor on the cap."""
        return float(self.margin)

    def _checks_power(self) -> bool:
        return True

    def start(self, view: View) -> None:
        self.validate()
        self.allocator_: Allocator = make_allocator(self.allocator)
        start_allocator(self.allocator_, view)
        use_platform = getattr(self.allocator_, "use_platform", None)
        if use_platform is not None:  # allocators that need node facts (efficiency)
            use_platform(view.platform)
        sched = view.cap_schedule
        if self._checks_power() and sched is not None and view.power_prediction is None:
            raise InputError(f"{self.name} needs job power predictions under a power cap: "
                             "give a power predictor (--power-predictor)",
                             field="power-predictor")
        # the largest cap from each step on (None: uncapped time from that step on)
        steps = [] if sched is None else list(sched.steps)
        self._step_times = [t for t, _ in steps]
        top: list[float | None] = [None] * (len(steps) + 1)
        best: float | None = -math.inf
        for k in range(len(steps) - 1, -1, -1):
            w = steps[k][1]
            best = None if best is None or w is None else max(best, w)
            top[k] = best
        top[len(steps)] = -math.inf  # no step ahead: only the cap now counts
        self._top_after = top
        #: jobs started at a reduced level (DVFS; not a run fact: no metric key yet)
        self.throttled_ = 0

    # ------------------------------------------------------------------ helpers
    def _budget(self, view: View) -> float | None:
        cap = view.cap
        if cap is None or not self._checks_power():
            return None
        return self._scale() * cap

    def _top_budget(self, view: View) -> float | None:
        """The largest budget of the rest of the run, None with uncapped time ahead."""
        cap = view.cap
        if cap is None or not self._checks_power():
            return None
        k = bisect_right(self._step_times, view.now)
        ahead = self._top_after[k]
        if ahead is None:
            return None
        return self._scale() * max(cap, ahead)

    def _never_fits(self, view: View, j: int, units: int, pred: float,
                    top: float) -> str | None:
        """Why waiting job ``j`` (predicted ``pred`` W > ``top``, the largest budget
        left) can never start, or None if it can (BF: never at full power)."""
        return (f"its predicted power ({pred:,.0f} W) exceeds the largest power budget "
                f"left ({top:,.0f} W = {self._scale():g} x the largest cap)")

    def _reduce(self, view: View, j: int, est: int, submit: int, pred: float,
                used: float, budget: float, never_full: bool) -> tuple[float, int] | None:
        """BF: no power reduction. DVFS overrides: ``(level, planned end)`` or None
        (``never_full``: the job can never run at full power in the rest of the run;
        the caller then checks the resources and the 1 W per node floor)."""
        return None

    # ------------------------------------------------------------------ the pass
    def dispatch(self, view: View) -> list[Decision]:
        q = view.queue
        n = len(q.jobs)
        if n == 0:
            return []
        now = view.now
        budget = self._budget(view)
        rows = q.jobs.tolist()
        units = q.units.tolist()
        ests = q.estimate.tolist()
        submits = q.submit.tolist()
        out: list[Decision] = []
        skip: set[int] = set()
        running = view.running
        # used: predicted power of the running jobs and of this pass's starts
        pq, pred, top, run_power, used = self._pass_power(view, budget, rows, units, out, skip)

        counting = view.counting
        reqs = view.requests
        alloc_ = self.allocator_
        # ``free``: free cores (counting) or, on node level, 1 while any node has any
        # free resource (a coarse "something may still start" flag)
        physical: np.ndarray | None  # node level only (None on counting platforms)
        if counting:
            free = view.free_cores
            physical = None
        else:
            physical = view.free.copy()
            free = int(bool(physical.any()))
            n_nodes = physical.shape[0]
        # jobs started in this pass: (planned end, power, units or used matrix)
        started: list[tuple[int, float, object]] = []

        # node level: per request vector, the fewest units that failed to place in this
        # pass (the free resources only shrink during a pass: as many or more fail too)
        failed: dict[bytes, int] = {}

        def place(p: int):
            """The resource fit of queue position p now: (ok, allocation, nodes)."""
            u = units[p]
            if counting:
                return (u <= free), None, u
            req = reqs[rows[p]]
            key = req.tobytes()
            if u >= failed.get(key, _NEVER):  # (allocators place iff the units fit)
                return False, None, 0
            assert physical is not None  # node level
            a = alloc_.allocate(req, u, physical)
            if a is None:
                failed[key] = u
                return False, None, 0
            return True, a, len(a.nodes)

        def commit(p: int, a, level: float | None, end: int) -> None:
            nonlocal free, used
            j = rows[p]
            out.append(Start(j, a))
            if level is not None:
                out.append(SetPower(j, level))
            power = pred[p] * (1.0 if level is None else level)
            used += power
            if counting:
                free -= units[p]
                started.append((end, power, units[p]))
            else:
                assert physical is not None  # node level
                m = a.matrix(reqs[j], n_nodes)
                physical[...] -= m
                free = int(bool(physical.any()))
                started.append((end, power, m))

        def try_start(p: int, shadow: int | None) -> bool:
            """Start position p now if it fits (resources, power or a reduction, and,
            with a shadow time, ends strictly before it)."""
            j, e = rows[p], ests[p]
            if shadow is not None and now + planned(e) >= shadow:
                return False  # even unstretched it ends at or after the shadow time
            x = pred[p]
            if budget is None or used + x <= budget:
                ok, a, _ = place(p)
                if ok:
                    commit(p, a, None, now + planned(e))
                return ok
            if not self.reduces or used >= budget:
                return False  # no power at full level, and none to reduce into
            # the reduction first (it needs no placement), then the resources and the
            # 1 W per node floor (it needs the nodes)
            red = self._reduce(view, j, e, submits[p], x, used, budget,
                               top is not None and x > top)
            if red is None:
                return False
            level, end = red
            if shadow is not None and end >= shadow:
                return False
            ok, a, nodes = place(p)
            if not ok or level < min(1.0, nodes / x):
                return False
            self.throttled_ += 1
            commit(p, a, level, end)
            return True

        # 1. start jobs in FCFS order while they fit
        head = -1
        for p in range(n):
            if p in skip:
                continue
            if not try_start(p, None):
                head = p
                break
        if head < 0:
            return out
        # 2./3. the head's shadow time, then the backfill scan (only if something could
        # start now at all)
        rest = [p for p in range(head + 1, n) if p not in skip]
        if free <= 0 or not rest:
            return out
        # necessary conditions over all candidates at once (free and the power left
        # only shrink during the scan; try_start re-checks everything), the shadow
        # time's last: when no job fits now, no shadow time is needed
        cand = self._may_start_now(q, reqs, rest, free, physical, pq, used, budget)
        if not len(cand):
            return out
        shadow = self._shadow(view, head, rows, units, pred, budget, used, running,
                              run_power, started, counting)
        if shadow is None:
            return out  # PA: a head that never fits -> no backfilling at all
        cand = cand[now + np.maximum(q.estimate[cand], 1) < shadow]
        for p in cand.tolist():
            if free <= 0:
                break
            if counting and units[p] > free:
                continue
            try_start(p, shadow)
        return out

    def _pass_power(self, view: View, budget: float | None, rows: list[int],
                    units: list[int], out: list[Decision], skip: set[int]
                    ) -> tuple[np.ndarray | None, list[float], float | None, list[float],
                               float]:
        """The power facts of one pass: ``(pq, pred, top, run_power, used)``.

        Without a budget: no predictions (``pq`` None, ``pred`` all 0.0, ``top`` None,
        nothing running counted, ``used`` 0.0). With one: ``pq`` / ``pred`` the queued
        jobs' predicted power (NaN -> 0, array and list, queue order), ``top`` the
        largest budget of the run (:meth:`_top_budget`), ``run_power`` each running
        job's predicted power at its current level and ``used`` their exact sum. Queued
        jobs above ``top`` that can never fit (:meth:`_never_fits`) are rejected: a
        :class:`Reject` appended to ``out`` and their position added to ``skip``."""
        if budget is None:
            return None, [0.0] * len(rows), None, [], 0.0
        prediction = view.power_prediction
        assert prediction is not None  # requires.power_predictions (checked in start)
        pm = prediction[0]
        pq = np.nan_to_num(np.asarray(pm[view.queue.jobs], dtype=np.float64), nan=0.0)
        pred = pq.tolist()
        top = self._top_budget(view)
        if top is not None:
            for p in np.flatnonzero(pq > top).tolist():
                reason = self._never_fits(view, rows[p], units[p], pred[p], top)
                if reason is not None:
                    skip.add(p)
                    out.append(Reject(rows[p], reason))
        running = view.running
        rj = running.jobs.tolist()
        pr = np.nan_to_num(np.asarray(pm[running.jobs], dtype=np.float64), nan=0.0)
        run_power = [float(p) * view.power_level(r)
                     for p, r in zip(pr.tolist(), rj, strict=True)]
        return pq, pred, top, run_power, math.fsum(run_power)

    def _may_start_now(self, q: QueueColumns, reqs: np.ndarray, rest: list[int], free: int,
                       physical: np.ndarray | None, pq: np.ndarray | None, used: float,
                       budget: float | None) -> np.ndarray:
        """The queue positions of ``rest`` (int64 array, same order) that pass the
        necessary conditions of starting now: their units within ``free`` cores
        (counting, ``physical`` None) or their total request (``reqs``: the per-unit
        requests of every job) within the free total of each resource (node level);
        without reductions, their predicted power within the budget left. Free
        resources and power only shrink during a pass, so a position left out could
        not start later in it either."""
        cand = np.asarray(rest, dtype=np.int64)
        if physical is None:
            keep = q.units[cand] <= free
        else:
            # the job's total request within the free total of each resource
            total = reqs[q.jobs[cand]] * q.units[cand][:, None]
            keep = (total <= physical.sum(axis=0)).all(axis=1)
        if budget is not None and not self.reduces:
            assert pq is not None  # predictions exist whenever a budget does
            keep &= pq[cand] + used <= budget
        return cand[keep]

    def _shadow(self, view: View, head: int, rows, units, pred, budget, used: float,
                running, run_power: list[float], started, counting: bool) -> int | None:
        """The head's shadow time: the first release time (running jobs by estimated
        end, this pass's starts at their planned end) at which it fits the resources
        and, with a budget, the power; None when it never does (node level:
        :meth:`_node_shadow`)."""
        now = view.now
        if not counting:
            return self._node_shadow(view, rows[head], units[head], pred[head], budget,
                                     used, running, run_power, started)
        prof = view.release_profile()
        for end, _, held in started:
            prof.reserve(now, end - now, held)
        x = pred[head]
        releases = [] if budget is None else power_releases(running, run_power, started)
        released = 0.0
        i, nr = 0, len(releases)
        need = units[head]
        times, frees = prof.times, prof.free
        first = 0
        if budget is not None:
            # the power left only shrinks as jobs are released: the breakpoints where
            # the head fits the power are a suffix, from ``first``
            for t in times:
                while i < nr and releases[i][0] <= t:
                    released += releases[i][1]
                    i += 1
                left = used - released if i < nr else 0.0  # exact once all are gone
                if left + x <= budget:
                    break
                first += 1
        for k in range(first, len(times)):
            if frees[k] >= need:
                return times[k]
        return None

    def _node_shadow(self, view: View, j: int, need: int, x: float, budget, used: float,
                     running, run_power: list[float], started) -> int | None:
        """:meth:`_shadow` on a node-level platform, walked lazily: the breakpoints of
        the release profile (now, the running jobs' estimated ends - past ones count as
        now -, the planned ends of this pass's starts, which hold their resources until
        then) in time order, the free matrix updated by each release only up to the
        shadow time (usually a small part of the profile: building all of it cost more
        than the rest of the pass). At each breakpoint from the first where the power
        fits, the head's units that fit in total (per node the fewest over its
        requested resources, at most ``need``) screen the allocator call, which decides
        on the same free matrix as the profile's: the same time as the profile."""
        now = view.now
        requests = view.requests
        req = requests[j]
        pos, per_unit = requested(req)
        hpos, hreq = pos.tolist(), per_unit.tolist()
        free_m = np.array(view.free, dtype=np.int64)
        held_back: list[tuple[int, list[tuple[int, list[int]]]]] = []
        for end, _, held in started:  # this pass's starts hold theirs until their end
            free_m -= held
            held_back.append((end, [(n, held[n].tolist()) for n in
                                    np.flatnonzero(held.any(axis=1)).tolist()]))
        held_back.sort(key=lambda e: e[0])
        n_res = free_m.shape[1]
        # per node the head's units it hosts (node_units), then kept up to date
        fits = np.clip(units_per_node_of(pos, per_unit, free_m), 0, need).tolist() \
            if hpos else []
        free = free_m.tolist()  # nodes x resources, Python ints, updated in place
        total = sum(fits)
        ends = running.est_end
        order = np.argsort(ends, kind="stable")
        rel_t = np.maximum(ends[order], now).tolist()
        rel_j = running.jobs[order].tolist()
        times = sorted({now, *rel_t, *(e for e, _ in held_back)})
        # the power released by each time, summed in the reference's order
        preleases = [] if budget is None else power_releases(running, run_power, started)
        power_ok = budget is None
        released = 0.0
        ip, npr = 0, len(preleases)
        ir, nrel = 0, len(rel_t)
        ie, nheld = 0, len(held_back)
        alloc_ = self.allocator_

        def add(n: int, amounts: list[int], count: int) -> None:
            """Node ``n`` gets ``count`` x ``amounts`` back; its fit count follows."""
            nonlocal total
            row = free[n]
            for r in range(n_res):
                row[r] += count * amounts[r]
            if hpos:
                f = node_units(row, hpos, hreq, need)
                total += f - fits[n]
                fits[n] = f

        for t in times:
            while ir < nrel and rel_t[ir] <= t:
                r = rel_j[ir]
                a = view.allocation(r)
                assert a is not None  # node level: every running job has one
                amounts = requests[r].tolist()
                for n, c in zip(a.nodes.tolist(), a.counts.tolist(), strict=True):
                    add(n, amounts, c)
                ir += 1
            while ie < nheld and held_back[ie][0] <= t:
                for n, h in held_back[ie][1]:
                    add(n, h, 1)
                ie += 1
            if not power_ok:
                # the power left only shrinks as jobs are released: once the head fits
                # it, it fits at every later breakpoint
                while ip < npr and preleases[ip][0] <= t:
                    released += preleases[ip][1]
                    ip += 1
                left = used - released if ip < npr else 0.0  # exact once all are gone
                if left + x > budget:
                    continue
                power_ok = True
            if hpos and total < need:
                continue  # (no allocator places a job whose units do not fit in total)
            if alloc_.allocate(req, need, np.array(free, dtype=np.int64)) is not None:
                return t
        return None


class BF(_BudgetEasy):
    """PA-HPC-SIM's power-aware EASY (not textbook EASY: strict "ends before the
    shadow time", no extra-nodes rule; see the module docstring)."""

    name = "bf"

    def __init__(self, margin: float = 1.0, cap_scale: float = 1.0,
                 power_check: bool = True, allocator: str = "first-fit") -> None:
        self.margin = margin
        self.cap_scale = cap_scale
        self.power_check = power_check
        self.allocator = allocator

    def validate(self) -> None:
        super().validate()
        s = self.cap_scale
        if isinstance(s, bool) or not isinstance(s, int | float) or not 0 < s < math.inf:
            raise InputError(f"cap_scale must be > 0, got {s!r}", field="cap_scale")
        if not isinstance(self.power_check, bool):
            raise InputError(f"power_check must be true or false, got {self.power_check!r}",
                             field="power_check")

    def _scale(self) -> float:
        return float(self.margin) * float(self.cap_scale)

    def _checks_power(self) -> bool:
        return bool(self.power_check)


class DVFS(_BudgetEasy):
    """PA-HPC-SIM's power-budget-guided EASY (Etinski et al. 2010): jobs that do not fit
    the budget at full power start at a reduced level unless their predicted BSLD passes
    the dynamic threshold (see the module docstring)."""

    name = "dvfs"
    reduces: ClassVar[bool] = True
    #: starts jobs at reduced power levels (SetPower): a run needs an explicit
    #: duration model
    slows_running_jobs: ClassVar[bool] = True

    def __init__(self, margin: float = 1.0, bsld_theta: float = 300,
                 allocator: str = "first-fit") -> None:
        self.margin = margin
        self.bsld_theta = bsld_theta
        self.allocator = allocator

    def validate(self) -> None:
        super().validate()
        t = self.bsld_theta
        if isinstance(t, bool) or not isinstance(t, int | float) or not 0 <= t < math.inf:
            raise InputError(f"bsld_theta must be >= 0 seconds, got {t!r}",
                             field="bsld_theta")

    def _never_fits(self, view: View, j: int, units: int, pred: float,
                    top: float) -> str | None:
        """DVFS can start a job over the budget at a reduced level: it never fits only
        when even its floor (1 W per node, on the fewest nodes it can occupy) passes
        the largest budget left."""
        if view.counting:
            nodes = units
        else:
            per_node = int(units_per_node(view.requests[j], view.capacity).max())
            nodes = -(-units // per_node) if per_node > 0 else units
        if min(pred, float(nodes)) <= top:
            return None
        return (f"even at its lowest power level (1 W per node, {nodes} nodes) it exceeds "
                f"the largest power budget left ({top:,.0f} W = {self._scale():g} x the "
                "largest cap)")

    def _reduce(self, view: View, j: int, est: int, submit: int, pred: float,
                used: float, budget: float, never_full: bool) -> tuple[float, int] | None:
        """The reduced level and planned end of job ``j`` started now, or None (no
        reduction possible, or refused by BSLD; the refusal is waived for a job that
        can never run at full power when nothing holds predicted power, see the module
        docstring). The 1 W per node floor is checked by the caller once the job is
        placed."""
        avail = budget - used
        if pred <= 0 or avail <= 0:
            return None
        level = avail / pred
        if level >= 1:
            return None  # (it would fit at full power: not reached)
        while level > 0 and level * pred > avail:  # the budget holds exactly
            level = math.nextafter(level, 0.0)
        if level <= 0:
            return None
        speed = view.speed(j, level)
        stretched = est / speed
        threshold = dvfs_threshold(used + level * pred, budget)
        now = view.now
        if predicted_bsld(now, submit, stretched, est, self.bsld_theta) >= threshold \
                and not (never_full and used <= 0):
            return None
        return level, stretched_end(now, est, _exact_speed(view, j, level))


__all__ = ["BF", "DVFS", "dvfs_threshold", "predicted_bsld", "stretched_end"]
