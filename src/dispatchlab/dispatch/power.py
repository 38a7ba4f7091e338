"""Power-capped dispatchers of seed 003: EASY+PC (its Algorithm 1) and the greedy
knapsack (its Algorithm 2), with five ways to check a job set against the cap.

Both read the cap now (``view.cap``, W; None = no cap) and the cap schedule, and the
power predictor's predictions (``view.power_prediction``: mean, max, std in W at full
power; a running job counts with its prediction at start times its current power
level). The simulation needs a power predictor (``power_predictor=``, CLI
``--power-predictor``).

**Checks** (``check``; seed 003 section 5.2): a set of jobs fits the cap ``C`` when

* ``mean``: the sum of predicted means <= C;
* ``max``: the sum of predicted maxima <= C;
* ``gaussian68`` / ``gaussian95`` / ``gaussian99``: ``mu + z sigma <= C`` with ``mu``
  the sum of means, ``sigma`` the root of the summed variances (jobs independent) and
  ``z`` = 1, 2, 3 (the seed's 68 / 95 / 99 % rule).

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

*Pooled (counting) platforms only* for now: node-level platforms are refused with an
error (ours; node-level placement comes with the power platform presets).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from dispatchlab.dispatch.backfill import EASY
from dispatchlab.dispatch.base import Decision, Dispatcher, Reject, Start, View
from dispatchlab.errors import InputError

#: check name -> z (None: a plain sum of means or of maxima)
CHECKS: dict[str, int | None] = {"mean": None, "max": None, "gaussian68": 1,
                                 "gaussian95": 2, "gaussian99": 3}


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
    z = CHECKS[check]
    return sums.mean + mean + z * math.sqrt(max(sums.var + std * std, 0.0)) <= cap


class _PowerCapped(Dispatcher):
    check: str
    call_on_empty_queue = False
    #: the simulation must give power predictions (``check_dispatcher`` supplies them)
    needs_power = True
    supports_node_level = False
    nested: ClassVar[dict[str, str]] = {}

    def _check(self) -> None:
        if self.check not in CHECKS:
            raise InputError(f"check must be one of {', '.join(CHECKS)}, got "
                             f"{self.check!r}", field="check")

    def start(self, view: View) -> None:
        self._check()
        if not view.counting:
            raise InputError(f"{self.name} runs on pooled (core-counting) platforms for now; "
                             f"{view.platform.describe()} is node-level", field="platform")
        if view.power_prediction is None:
            raise InputError(f"{self.name} needs job power predictions: give a power "
                             "predictor (--power-predictor)", field="power-predictor")
        self.easy_ = EASY()
        self.easy_.start(view)

    # ------------------------------------------------------------------ shared parts
    def _never_fit(self, view: View) -> np.ndarray:
        """Queue positions of jobs whose predicted power alone fails the check at the
        largest cap of the rest of the run (no uncapped time ahead): they can never
        start, and are rejected with that reason (ours: the seed's caps never made it
        happen; without this a permanent cap would leave them waiting forever)."""
        sched = view.cap_schedule
        caps = [view.cap] + ([w for t, w in sched.steps if t > view.now] if sched else [])
        q = view.queue
        if any(c is None for c in caps) or len(q.jobs) == 0:
            return np.zeros(0, dtype=np.int64)
        top = max(caps)
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
        mean, peak, std = self._predictions(view)
        top = max(w for w in [view.cap] + [w for t, w in view.cap_schedule.steps
                                           if t > view.now] if w is not None)
        return [Reject(int(q.jobs[p]), f"its predicted power (mean {mean[q.jobs[p]]:,.0f} W, "
                       f"max {peak[q.jobs[p]]:,.0f} W, sd {std[q.jobs[p]]:,.0f} W) fails the "
                       f"{self.check} check alone at the largest cap left ({top:,.0f} W)")
                for p in never.tolist()]

    def _predictions(self, view: View):
        mean, peak, std = view.power_prediction
        return mean, peak, std

    def _running_sums(self, view: View) -> PowerSums:
        mean, peak, std = self._predictions(view)
        rows = view.running.jobs
        lv = np.array([view.power_level(j) for j in rows.tolist()]) if \
            view._engine._level else np.ones(len(rows))
        s = std[rows] * lv
        return PowerSums(float((mean[rows] * lv).sum()), float((peak[rows] * lv).sum()),
                         float((s * s).sum()))

    def _easy_pc(self, view: View, order: np.ndarray) -> list[Decision]:
        """Algorithm 1 over the queue positions ``order``."""
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
        never fits."""
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


class EasyPC(_PowerCapped):
    """EASY+PC (seed 003 Algorithm 1): ``order = fcfs | saf``, ``check`` (see the
    module docstring)."""

    name = "easy-pc"

    def __init__(self, order: str = "fcfs", check: str = "mean") -> None:
        self.order = order
        self.check = check

    def _check(self) -> None:
        super()._check()
        if self.order not in ("fcfs", "saf"):
            raise InputError(f"order must be fcfs or saf, got {self.order!r}", field="order")

    def dispatch(self, view: View) -> list[Decision]:
        if view.cap is None and self.order == "fcfs":
            return self.easy_.dispatch(view)
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


class Knapsack(_PowerCapped):
    """Greedy knapsack (seed 003 Algorithm 2): ``value = wait | stretch``, ``check``."""

    name = "knapsack"

    def __init__(self, value: str = "wait", check: str = "mean") -> None:
        self.value = value
        self.check = check

    def _check(self) -> None:
        super()._check()
        if self.value not in ("wait", "stretch"):
            raise InputError(f"value must be wait or stretch, got {self.value!r}",
                             field="value")

    def dispatch(self, view: View) -> list[Decision]:
        if view.cap is None:
            return self.easy_.dispatch(view)
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
        for p in order.tolist():
            if p in skip:
                continue
            j, u = int(q.jobs[p]), int(q.units[p])
            if u > free or not fits(self.check, cap, sums, mean[j], peak[j], std[j]):
                break
            free -= u
            sums.add(mean[j], peak[j], std[j])
            out.append(Start(j))
        return out


__all__ = ["CHECKS", "EasyPC", "Knapsack", "PowerSums", "fits"]
