"""Property tests of the power-capped dispatchers (seed 003): EASY+PC (``order`` fcfs /
saf) and the greedy knapsack (``value`` wait / stretch), under every check.

Workloads come from :func:`strategies.workloads` (6-25 contending jobs on 4-8 cores,
bursts, wide jobs, overruns, jobs wider than the machine) with integer power columns
(``max >= mean >= 0``, ``std >= 0``; some jobs draw 0 W, which the knapsack sorts
first) and a cap schedule drawn so that some jobs fit and some do not: a permanent cap
from time 0, a window opening after jobs already run, or a step schedule (1-4 steps,
some of them lifting the cap); one case in four adds two jobs of which one is held
back by power alone until the cap lifts. Powers and caps are whole watts, so with the ``real``
and ``naive`` power predictors every sum the tests and the dispatchers form is exact
and the comparisons need no tolerance (``history`` predicts weighted means: 1e-9 of
the cap is allowed for summation order).

Everything is checked on the final schedule (``SimulationResult``), except the
knapsack's per-pass rule, checked by wrapping the dispatcher. Each test counts the
interesting situations its examples reached (a head blocked by power, jobs over the cap
when a window opens, power rejections, ...) and asserts they happened: a property that
never met its case proves nothing.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import EASY
from dispatchlab.dispatch.base import Reject, Start
from dispatchlab.dispatch.powercap.capped import (
    CHECKS,
    EasyPC,
    Knapsack,
    ReferenceEasyPC,
    ReferenceKnapsack,
)
from dispatchlab.platform.platform import NodeType
from dispatchlab.power import PowerCap
from dispatchlab.power.accounting import platform_power, power_facts
from dispatchlab.predict.power.predictors import make_power_predictor
from dispatchlab.sim.result import STATUS_COMPLETED, STATUS_KILLED, STATUS_REJECTED
from strategies import Workload, workloads

#: hypothesis budget per test (the file runs in a few seconds);
#: DISPATCHLAB_PROPERTY_EXAMPLES=500 for a deeper search
EXAMPLES = int(os.environ.get("DISPATCHLAB_PROPERTY_EXAMPLES", "40"))
PROPERTY = settings(max_examples=EXAMPLES, deadline=None)

#: max node power (W) of the test platform: ``naive`` and ``history`` (cold start)
#: predict it x units
NODE_POWER = 100.0

#: the dispatchers under test, by id: (the fast class, registered, and the plain
#: reference class it subclasses, their parameters but the check); every property is
#: checked on both classes ("fast", "reference")
DISPATCHERS: dict[str, tuple[type, type, dict[str, str]]] = {
    "easy-pc-fcfs": (EasyPC, ReferenceEasyPC, {"order": "fcfs"}),
    "easy-pc-saf": (EasyPC, ReferenceEasyPC, {"order": "saf"}),
    "knapsack-wait": (Knapsack, ReferenceKnapsack, {"value": "wait"}),
    "knapsack-stretch": (Knapsack, ReferenceKnapsack, {"value": "stretch"}),
}
IDS = list(DISPATCHERS)
KINDS = ["fast", "reference"]


def build(dispatcher_id: str, check: str,
          kind: str = "fast") -> EasyPC | Knapsack | ReferenceEasyPC | ReferenceKnapsack:
    """The dispatcher ``dispatcher_id`` with ``check``: its fast or reference class."""
    fast, reference, params = DISPATCHERS[dispatcher_id]
    return (fast if kind == "fast" else reference)(check=check, **params)
#: ``max`` and ``mean`` (the brief's two) weighted up; the gaussians too
CHECK_NAMES = st.sampled_from(["max", "mean", "max", "mean", *CHECKS])
PREDICTORS = st.sampled_from(["real", "real", "real", "history", "naive"])


# ---------------------------------------------------------------------------- cases
@dataclass(frozen=True)
class Case:
    """A workload with power columns (W, whole job), users and a cap schedule."""

    w: Workload
    mean: tuple[int, ...]
    peak: tuple[int, ...]
    std: tuple[int, ...]
    user: tuple[int, ...]
    cap: PowerCap | None
    cap_kind: str
    overrun: str

    def table(self) -> JobTable:
        jobs = JobTable.from_arrays(**self.w.as_lists(), user=list(self.user))
        jobs.columns.update(power_mean=np.array(self.mean, dtype=np.float64),
                            power_max=np.array(self.peak, dtype=np.float64),
                            power_std=np.array(self.std, dtype=np.float64))
        return jobs

    def platform(self) -> Platform:
        return Platform((NodeType("pool", 1, {"core": self.w.capacity},
                                  max_power=NODE_POWER),),
                        name=f"pool-{self.w.capacity}", is_pooled=True)

    def describe(self) -> str:
        return (f"C={self.w.capacity} submit={list(self.w.submit)} run={list(self.w.run)} "
                f"units={list(self.w.units)} requested={list(self.w.requested_time)} "
                f"mean={list(self.mean)} max={list(self.peak)} std={list(self.std)} "
                f"user={list(self.user)} overrun={self.overrun} "
                f"cap={None if self.cap is None else self.cap.steps}")


@st.composite
def job_power(draw: st.DrawFn, units: int) -> tuple[int, int, int]:
    """(mean, max, std) in whole watts: per unit, flat, or 0 W."""
    # (the first choice of each draw is what hypothesis starts from and shrinks to:
    # not a degenerate 0)
    kind = draw(st.sampled_from(["per_unit", "flat", "per_unit", "flat", "zero"]))
    if kind == "per_unit":
        mean = units * draw(st.integers(10, 60))
    elif kind == "flat":
        mean = draw(st.integers(20, 400))
    else:
        mean = 0
    peak = mean + draw(st.sampled_from([20, 0, 60, 1, 150, 0]))
    std = draw(st.sampled_from([10, 0, 30, 5, 60, 0]))
    return mean, peak, std


@st.composite
def cap_schedules(draw: st.DrawFn, w: Workload, peak: tuple[int, ...]) -> tuple[PowerCap, str]:
    """A cap schedule and its kind: ``from0`` (one cap from time 0 on), ``late`` (a
    window opening after 0, while jobs run, closing or not) or ``steps``."""
    top = sorted(peak, reverse=True)
    positive = sorted(p for p in peak if p > 0) or [100]
    lo = max(1, positive[len(positive) // 2] // 2)
    hi = max(lo + 1, sum(top[:2]))
    share = draw(st.sampled_from([0.3, 0.1, 0.6, 1.0, 0.2, 0.45]))
    watts = lo + int((hi - lo) * share) + draw(st.integers(0, 10))
    horizon = w.submit[-1] + 60
    kind = draw(st.sampled_from(["from0", "late", "late", "steps", "steps"]))
    if kind == "from0":
        return PowerCap.window(float(watts)), kind
    if kind == "late":
        t0 = draw(st.integers(1, horizon))
        # short windows often: jobs the cap held back start when it closes
        length = draw(st.sampled_from([15, None, 40, 5, 90, 200, 400]))
        t1 = None if length is None else t0 + length + draw(st.integers(0, 5))
        return PowerCap.window(float(watts), t0, t1), kind
    times = draw(st.lists(st.integers(0, horizon + 120), min_size=1, max_size=4,
                          unique=True))
    values = draw(st.lists(st.sampled_from([None, 0.5, 1.0, 1.0, 1.5, 2.0]),
                           min_size=len(times), max_size=len(times)))
    steps = [(t, None if f is None else float(max(1, round(watts * f))))
             for t, f in zip(sorted(times), values, strict=True)]
    return PowerCap.from_steps(steps), kind


@st.composite
def cases(draw: st.DrawFn, capped: bool = True) -> Case:
    w = draw(workloads(min_jobs=6, max_jobs=23, min_capacity=4, max_capacity=8))
    powers = [draw(job_power(u)) for u in w.units]
    mean, peak, std = (tuple(p[k] for p in powers) for k in range(3))
    user = tuple(draw(st.lists(st.integers(1, 3), min_size=w.n, max_size=w.n)))
    cap, kind = draw(cap_schedules(w, peak)) if capped else (None, "none")
    if capped and draw(st.integers(0, 3)) == 0:
        # "held": two 1-core jobs at 0 of p W each (std 0) and a cap of 1.5 p lifted at
        # t1, before the first ends: the second is held back by power alone until t1
        p = draw(st.integers(60, 300))
        long_run, short_run = draw(st.integers(100, 200)), draw(st.integers(10, 50))
        w = Workload(w.capacity, (0, 0, *w.submit), (long_run, short_run, *w.run),
                     (1, 1, *w.units), (long_run, short_run, *w.requested_time))
        mean, peak, std = (p, p, *mean), (p, p, *peak), (0, 0, *std)
        user = (1, 2, *user)
        cap, kind = PowerCap.window(float(p + p // 2), 0, draw(st.integers(20, 90))), "held"
    overrun = draw(st.sampled_from(["run", "run", "kill"]))
    return Case(w, mean, peak, std, user, cap, kind, overrun)


def simulate(case: Case, dispatcher, predictor: str = "real",
             cap: PowerCap | str | None = "case"):
    """Run ``case`` (with its own cap schedule unless ``cap`` is given): (the
    simulation, its result)."""
    sim = Simulation(case.platform(), case.table(), dispatcher, overrun=case.overrun,
                     power_predictor=make_power_predictor(predictor),
                     cap=case.cap if cap == "case" else cap)
    return sim, sim.run()


# ---------------------------------------------------------------------------- helpers
def check_value(check: str, rows, mean, peak, std) -> float:
    """What ``check`` bounds for the job set ``rows`` (predicted W): the sum of means,
    the sum of maxima, or mu + z sigma. Whole-watt inputs: computed exactly as the
    dispatcher does (sum of means + z x sqrt(sum of variances))."""
    rows = list(rows)
    if check == "mean":
        return float(sum(mean[j] for j in rows))
    if check == "max":
        return float(sum(peak[j] for j in rows))
    mu = float(sum(mean[j] for j in rows))
    var = float(sum(std[j] * std[j] for j in rows))
    return mu + CHECKS[check] * math.sqrt(var)


def slack(predictor: str, cap: float) -> float:
    """Rounding room: 0 for whole-watt predictions (``real``, ``naive``: every sum is
    exact); ``history`` predicts weighted means, whose sums the tests and the dispatcher
    form in different orders."""
    return 1e-9 * cap if predictor == "history" else 0.0


def alone_value(check: str, j: int, mean, peak, std) -> float:
    """A job's own check value as the dispatcher's never-fit rule computes it."""
    if check == "mean":
        return float(mean[j])
    if check == "max":
        return float(peak[j])
    return float(mean[j]) + CHECKS[check] * float(std[j])


def cap_spans(cap: PowerCap | None) -> list[tuple[int, float, float]]:
    """The capped spans ``[t0, t1)`` (t1 = inf when open) and their watts."""
    if cap is None:
        return []
    steps = list(cap.steps)
    out = []
    for k, (t, w) in enumerate(steps):
        if w is not None:
            out.append((t, steps[k + 1][0] if k + 1 < len(steps) else math.inf, w))
    return out


def predictions(r) -> tuple[list[float], list[float], list[float]]:
    p = r.power_prediction
    return p["mean"].tolist(), p["max"].tolist(), p["std"].tolist()


def event_times(case: Case, r) -> list[int]:
    """Every time with an engine event: submissions, completions, cap steps."""
    started = r.start >= 0
    times = set(case.w.submit) | set(r.end[started].tolist())
    if case.cap is not None:
        times |= {t for t, _ in case.cap.steps}
    return sorted(times)


def never_fits(case: Case, check: str, j: int, t: int, pred) -> bool:
    """The dispatcher's rule: ``j`` alone fails ``check`` at the largest cap of the rest
    of the run (no uncapped time ahead)."""
    cap = case.cap
    if cap is None:
        return False
    caps = [cap.at(t)] + [w for s, w in cap.steps if s > t]
    if any(c is None for c in caps):
        return False
    return alone_value(check, j, *pred) > max(caps)


def power_reject_times(case: Case, r, check: str, pred) -> dict[int, int]:
    """Job row -> the first event time (a pass with the job waiting) at which it never
    fits, for jobs that fit the platform (the rule is monotone: the largest cap left
    only shrinks)."""
    times = event_times(case, r)
    out = {}
    for j in range(case.w.n):
        if case.w.units[j] > case.w.capacity:
            continue
        for t in times:
            if t >= case.w.submit[j] and never_fits(case, check, j, t, pred):
                out[j] = t
                break
    return out


def dispatcher_order(dispatcher_id: str, waiting: list[int], t: int, cap_now, case: Case,
                     r, pred) -> list[int]:
    """The waiting rows (ascending = queue order) in the order the dispatcher walks
    them at a pass at ``t``."""
    if dispatcher_id == "easy-pc-saf":
        est = r.estimate
        return sorted(waiting, key=lambda j: (max(int(est[j]), 1) * case.w.units[j], j))
    if dispatcher_id.startswith("knapsack") and cap_now is not None:
        mean = pred[0]

        def ratio(j: int) -> float:
            wait = float(t - case.w.submit[j])
            if dispatcher_id == "knapsack-wait":
                value = wait
            else:
                est = float(max(int(r.estimate[j]), 1))
                value = (wait + est) / est
            return value / mean[j] if mean[j] > 0 else math.inf

        return sorted(waiting, key=lambda j: (-ratio(j), j))
    return list(waiting)


def assert_seen(seen: Counter, keys: tuple[str, ...], what: str) -> None:
    missing = [k for k in keys if seen[k] == 0]
    assert not missing, (
        f"{what}: the generated cases never exercised {missing} (seen: {dict(seen)}); "
        "the strategies must make these cases happen")


def combos(check: str, predictor: str) -> list[tuple[str, str]]:
    """The drawn (check, power predictor), after ``max`` and ``mean`` with ``real``."""
    out = [("max", "real"), ("mean", "real")]
    return out if (check, predictor) in out else [*out, (check, predictor)]


def note(seen: Counter, key: str) -> None:
    seen[key] += 1
    event(key)


# ---------------------------------------------------------------------------- 1. safety
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dispatcher_id", IDS)
def test_cap_safety(dispatcher_id: str, kind: str) -> None:
    """Inside every capped span ``[t0, t1)`` with cap ``C``, at every time ``t``, let
    ``S`` be the jobs running at ``t`` (start <= t < end) and ``P`` those of ``S`` that
    started at or after ``t0`` (``S - P``: jobs already running when the span opened).
    Then ``check(P) <= C`` on the predicted powers, and when ``P`` is not empty even
    ``check(S) <= C`` (the last job of ``S`` to start was checked with all of ``S``).
    With ``real`` the predictions are the table's columns, so for ``max`` the running
    jobs' ``power_max`` and for ``mean`` their ``power_mean`` (the accounted platform
    power, cross-checked with :func:`platform_power`) stay under the cap, but for the
    jobs running at the opening. With one capped span from 0 and ``real`` the accounted
    power is never above the cap (``cap_max_excess`` = ``cap_time_above_share`` = 0)."""
    seen: Counter = Counter()

    @PROPERTY
    @given(case=cases(), drawn_check=CHECK_NAMES, drawn_predictor=PREDICTORS)
    def run(case: Case, drawn_check: str, drawn_predictor: str) -> None:
        for check, predictor in combos(drawn_check, drawn_predictor):
            _, r = simulate(case, build(dispatcher_id, check, kind), predictor)
            where = f"{dispatcher_id} check={check} predictor={predictor} {case.describe()}"
            pred = predictions(r)
            ran = np.flatnonzero((r.start >= 0) & (r.end > r.start)).tolist()
            if predictor == "real":
                for j in np.flatnonzero(r.start >= 0).tolist():
                    assert (pred[0][j], pred[1][j], pred[2][j]) == \
                        (case.mean[j], case.peak[j], case.std[j]), where
                note(seen, f"real-{check}")
            times, watts = platform_power(r)
            for t0, t1, c in cap_spans(case.cap):
                starts = sorted({int(r.start[j]) for j in ran if t0 <= r.start[j] < t1})
                for t in [t0, *starts]:
                    if t >= t1:
                        continue
                    on = [j for j in ran if r.start[j] <= t < r.end[j]]
                    inside = [j for j in on if r.start[j] >= t0]
                    assert check_value(check, inside, *pred) <= c + slack(predictor, c), (
                        f"at t={t} the jobs started since {t0} ({inside}) exceed the cap "
                        f"{c}; {where}")
                    if inside:
                        assert check_value(check, on, *pred) <= c + slack(predictor, c), (
                            f"at t={t} the running set {on} exceeds the cap {c}; {where}")
                    elif on and check_value(check, on, *pred) > c:
                        note(seen, "over_cap_from_jobs_running_at_opening")
                    if inside and len(inside) < len(on):
                        note(seen, "opening_jobs_still_running_with_new_ones")
                    # the accounted platform power is the running jobs' power_mean
                    k = int(np.searchsorted(times, t, side="right")) - 1
                    assert (watts[k] if k >= 0 else 0.0) == sum(case.mean[j] for j in on), \
                        where
            if case.cap_kind in ("from0", "held") and predictor == "real":
                facts = power_facts(r)
                if "cap_max_excess" in facts:
                    assert facts["cap_max_excess"] == 0.0, where
                    assert facts["cap_time_above_share"] == 0.0, where
            if r.reject_reason and any("fails the" in m for m in r.reject_reason.values()):
                note(seen, "power_rejected")

    run()
    assert_seen(seen, ("real-max", "real-mean", "over_cap_from_jobs_running_at_opening",
                       "opening_jobs_still_running_with_new_ones", "power_rejected"),
                dispatcher_id)


# ---------------------------------------------------------------------------- 2. liveness
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dispatcher_id", IDS)
def test_liveness_and_power_rejections(dispatcher_id: str, kind: str) -> None:
    """No idling: at every event time ``t`` (submission, completion, cap step), once
    every pass at ``t`` is done, the first waiting job in the dispatcher's order does
    not fit both the free cores and the check (predicted powers, cap at ``t``) with the
    jobs running then; else the dispatcher left a startable job waiting. The order is
    queue order for EASY+PC FCFS and whenever no cap applies (both dispatchers are then
    EASY; for ``saf`` the smallest-area order is used capped or not), smallest area first
    for ``saf``, and value / weight descending at ``t`` for the knapsack (which walks
    that order and stops at the first job that does not fit, so what is left first in
    it is the job that stopped it).

    Waiting jobs: submitted by ``t``, fitting the platform, not started by ``t`` and not
    rejected by ``t``. (Some jobs start at a cap step where nothing else happens: the
    engine's pass at a step matters.) Rejections: a job is rejected by the dispatcher
    exactly when, at some event time between its submission and its start, its
    predicted power alone fails the check at the largest cap of the rest of the run
    (none uncapped); the rejection happens at the first such time."""
    seen: Counter = Counter()

    @PROPERTY
    @given(case=cases(), drawn_check=CHECK_NAMES, drawn_predictor=PREDICTORS)
    def run(case: Case, drawn_check: str, drawn_predictor: str) -> None:
        for check, predictor in combos(drawn_check, drawn_predictor):
            _, r = simulate(case, build(dispatcher_id, check, kind), predictor)
            where = f"{dispatcher_id} check={check} predictor={predictor} {case.describe()}"
            pred = predictions(r)
            w = case.w
            rejected_at = power_reject_times(case, r, check, pred)
            started = r.start >= 0
            for j in range(w.n):
                by_power = j in rejected_at and (not started[j] or rejected_at[j] <= r.start[j])
                is_power_reject = r.status[j] == STATUS_REJECTED and w.units[j] <= w.capacity
                assert by_power == is_power_reject, (
                    f"job {j}: never-fit at {rejected_at.get(j)}, status {r.status[j]}, "
                    f"start {r.start[j]}; {where}")
                if by_power:
                    note(seen, "power_rejected")
            steps_only = {t for t, _ in case.cap.steps} - set(w.submit) - \
                set(r.end[started].tolist())
            if any(int(t) in steps_only for t in r.start[started].tolist()):
                note(seen, "started_at_a_cap_step")  # a pass only the cap step made
            for t in event_times(case, r):
                cap_now = None if case.cap is None else case.cap.at(t)
                running = [j for j in range(w.n) if started[j] and r.start[j] <= t < r.end[j]]
                waiting = [j for j in range(w.n)
                           if w.submit[j] <= t and w.units[j] <= w.capacity
                           and not (started[j] and r.start[j] <= t)
                           and not (j in rejected_at and rejected_at[j] <= t)]
                if not waiting:
                    continue
                order = dispatcher_order(dispatcher_id, waiting, t, cap_now, case, r, pred)
                first = order[0]
                free = w.capacity - sum(w.units[j] for j in running)
                fits_cores = w.units[first] <= free
                fits_power = cap_now is None or \
                    check_value(check, [*running, first], *pred) <= \
                    cap_now - slack(predictor, cap_now)
                assert not (fits_cores and fits_power), (
                    f"at t={t} job {first} (first of {order} in the dispatcher's order) fits "
                    f"{free} free cores and the cap {cap_now} with running {running} but "
                    f"waits; {where}")
                if fits_cores:
                    note(seen, "first_blocked_by_power")
                else:
                    note(seen, "first_blocked_by_cores")
                if order[0] != waiting[0]:
                    note(seen, "order_is_not_fcfs")

    run()
    must = ["first_blocked_by_power", "first_blocked_by_cores", "power_rejected",
            "started_at_a_cap_step"]
    if dispatcher_id != "easy-pc-fcfs":
        must.append("order_is_not_fcfs")
    assert_seen(seen, tuple(must), dispatcher_id)


class KnapsackChecks:
    """A knapsack class mixed in, checking each capped pass against Algorithm 2: its
    starts are exactly the longest prefix of the value / weight order (rejected jobs
    skipped) whose jobs each fit the free cores and the check with the running jobs and
    the earlier ones of the prefix."""

    value: str
    check: str

    def dispatch(self, view):
        out = super().dispatch(view)  # type: ignore[misc]
        if view.cap is None:
            return out
        q = view.queue
        mean, peak, std = (a.tolist() for a in view.power_prediction)
        rejected = {d.job for d in out if type(d) is Reject}
        starts = [d.job for d in out if type(d) is Start]
        wait = [float(view.now - s) for s in q.submit.tolist()]
        est = [float(max(e, 1)) for e in q.estimate.tolist()]
        jobs = q.jobs.tolist()
        units = dict(zip(jobs, q.units.tolist(), strict=True))
        value = wait if self.value == "wait" else \
            [(a + e) / e for a, e in zip(wait, est, strict=True)]
        ratio = [v / mean[j] if mean[j] > 0 else math.inf
                 for v, j in zip(value, jobs, strict=True)]
        order = [jobs[p] for p in sorted(range(len(jobs)), key=lambda p: (-ratio[p], p))]
        chosen = list(view.running.jobs.tolist())
        free, want = view.free_cores, []
        rest = [j for j in order if j not in rejected]
        for k, j in enumerate(rest):
            if units[j] > free or \
                    check_value(self.check, [*chosen, j], mean, peak, std) > view.cap:
                # a later job that would have fitted: the stop is what makes it greedy
                if any(units[i] <= free and check_value(self.check, [*chosen, i], mean,
                                                        peak, std) <= view.cap
                       for i in rest[k + 1:]):
                    self.stopped_before_fitting_ = True
                break
            free -= units[j]
            chosen.append(j)
            want.append(j)
        assert starts == want, f"t={view.now}: started {starts}, Algorithm 2 gives {want}"
        self.passes_checked_ = getattr(self, "passes_checked_", 0) + 1
        return out


class CheckedKnapsack(KnapsackChecks, Knapsack):
    """The fast knapsack, every capped pass checked against Algorithm 2."""


class CheckedReferenceKnapsack(KnapsackChecks, ReferenceKnapsack):
    """The reference knapsack, every capped pass checked against Algorithm 2."""


@pytest.mark.parametrize("checked", [CheckedKnapsack, CheckedReferenceKnapsack],
                         ids=KINDS)
@pytest.mark.parametrize("value", ["wait", "stretch"])
def test_knapsack_passes_follow_algorithm_2(value: str, checked: type) -> None:
    """Per capped pass (instrumented): the knapsack starts exactly the prefix of its
    value / weight order that fits (cores and check), stopping at the first job that
    does not, even when later jobs would fit."""
    seen: Counter = Counter()

    @PROPERTY
    @given(case=cases(), check=CHECK_NAMES, predictor=st.sampled_from(["real", "naive"]))
    def run(case: Case, check: str, predictor: str) -> None:
        sim, _ = simulate(case, checked(value=value, check=check), predictor)
        seen["passes"] += getattr(sim.dispatcher, "passes_checked_", 0)
        if getattr(sim.dispatcher, "stopped_before_fitting_", 0):
            note(seen, "stopped_before_a_job_that_fits")

    run()
    assert_seen(seen, ("passes", "stopped_before_a_job_that_fits"), f"knapsack-{value}")


# ---------------------------------------------------------------------------- 3. capacity
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dispatcher_id", IDS)
def test_capacity_invariants_under_caps(dispatcher_id: str, kind: str) -> None:
    """Under any cap schedule: cores in use never exceed the capacity (ends before
    starts at equal times; 0-second jobs hold nothing); no job starts before its
    submission; every job either ran (completed, or killed at its requested time under
    ``overrun=kill``; end = start + its simulated run) or is rejected with a reason
    (wider than the machine, or its predicted power alone fails the check at every cap
    left)."""
    seen: Counter = Counter()

    @PROPERTY
    @given(case=cases(), check=CHECK_NAMES, predictor=PREDICTORS)
    def run(case: Case, check: str, predictor: str) -> None:
        _, r = simulate(case, build(dispatcher_id, check, kind), predictor)
        where = f"{dispatcher_id} check={check} predictor={predictor} {case.describe()}"
        w = case.w
        deltas = []
        for j in range(w.n):
            if r.status[j] == STATUS_REJECTED:
                assert r.start[j] == -1 and r.end[j] == -1, where
                reason = r.reject_reason.get(j)
                assert reason, f"job {j} rejected without a reason; {where}"
                if w.units[j] > w.capacity:
                    assert "cores" in reason, where
                else:
                    assert f"fails the {check} check alone" in reason, where
                    note(seen, "power_rejected")
                continue
            assert w.units[j] <= w.capacity, where
            assert r.status[j] in (STATUS_COMPLETED, STATUS_KILLED), where
            assert r.start[j] >= w.submit[j], f"job {j} starts before its submission; {where}"
            sim_run = min(w.run[j], w.requested_time[j]) if case.overrun == "kill" \
                else w.run[j]
            assert r.end[j] - r.start[j] == sim_run, where
            assert (r.status[j] == STATUS_KILLED) == (sim_run < w.run[j]), where
            if r.end[j] > r.start[j]:
                deltas += [(int(r.start[j]), 1, w.units[j]), (int(r.end[j]), 0, -w.units[j])]
        used = 0
        for t, _, d in sorted(deltas):
            used += d
            assert used <= w.capacity, f"{used} cores in use at t={t}; {where}"
            if used == w.capacity and d > 0:
                note(seen, "machine_full")

    run()
    assert_seen(seen, ("power_rejected", "machine_full"), dispatcher_id)


# ---------------------------------------------------------------------------- 4. no cap
NO_CAP = {"none": None, "all-none steps": PowerCap.from_steps([(0, None)])}


@pytest.mark.parametrize("dispatcher_id", ["easy-pc-fcfs", "knapsack-wait",
                                           "knapsack-stretch"])
@pytest.mark.parametrize("kind", KINDS)
def test_without_a_cap_they_are_easy(dispatcher_id: str, kind: str) -> None:
    """Without a cap (none at all, or a schedule whose only step is "no cap") EASY+PC
    FCFS and the knapsack give exactly EASY's schedule (start and end of every job),
    whatever the check and the power predictor. (EASY+PC SAF is not EASY: it picks its
    head in smallest-area order.)"""

    @PROPERTY
    @given(case=cases(capped=False), check=CHECK_NAMES, predictor=PREDICTORS,
           no_cap=st.sampled_from(sorted(NO_CAP)))
    def run(case: Case, check: str, predictor: str, no_cap: str) -> None:
        jobs = case.table()
        plain = Simulation(case.platform(), jobs, EASY(), overrun=case.overrun).run()
        _, r = simulate(case, build(dispatcher_id, check, kind), predictor,
                        cap=NO_CAP[no_cap])
        where = f"{dispatcher_id} check={check} {no_cap} {case.describe()}"
        assert r.start.tolist() == plain.start.tolist(), where
        assert r.end.tolist() == plain.end.tolist(), where
        assert r.status.tolist() == plain.status.tolist(), where

    run()


@PROPERTY
@given(case=cases(capped=False), check=CHECK_NAMES, kind=st.sampled_from(KINDS))
def test_a_cap_that_never_binds_gives_easy(case: Case, check: str, kind: str) -> None:
    """A cap from time 0 above every job set's check value (its own Algorithm 1 code
    path, not EASY's) gives EASY's schedule with EASY+PC FCFS: without power binding,
    Algorithm 1 is EASY. The cap's step at 0 adds no pass (the queue is empty then or
    the pass is the submissions' own)."""
    total = sum(case.peak) + 3 * sum(case.std) + 1
    plain = Simulation(case.platform(), case.table(), EASY(), overrun=case.overrun).run()
    _, r = simulate(case, build("easy-pc-fcfs", check, kind),
                    cap=PowerCap.window(float(total)))
    assert r.start.tolist() == plain.start.tolist(), f"check={check} {case.describe()}"


class CheckedEasyPC(EasyPC):
    """EASY+PC checking every pass against its plain implementation of Algorithm 1
    (the :class:`ReferenceEasyPC` pass, run by a twin on the same view): the fast pass
    (the dispatcher's own picture, the submissions-only shortcut, the vector screen or
    the direct walk) must make exactly the same decisions, in the same order."""

    def dispatch(self, view):
        twin = ReferenceEasyPC(order=self.order, check=self.check)
        capped = not (view.cap is None and self.order == "fcfs")
        want = twin._reference(view) if capped else None
        fast_before = getattr(self, "fast_passes_", 0)
        out = super().dispatch(view)
        if want is not None:
            got = [(type(d).__name__, d.job) for d in out]
            assert got == [(type(d).__name__, d.job) for d in want], (
                f"t={view.now}: fast pass {got}, Algorithm 1 {want}")
            self.compared_ = getattr(self, "compared_", 0) + 1
            if self.fast_passes_ > fast_before and any(type(d) is Start for d in out):
                self.fast_starts_ = getattr(self, "fast_starts_", 0) + 1
        return out


@pytest.mark.parametrize("order", ["fcfs", "saf"])
@pytest.mark.parametrize("short", [0, 10**6], ids=["screen", "walk"])
def test_the_fast_pass_is_algorithm_1(order: str, short: int,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Every capped pass of EASY+PC decided on the dispatcher's picture equals the
    plain Algorithm 1 pass on the same view, with the jobs after the head found by the
    vector screen (``_SHORT = 0``) or walked directly (``_SHORT`` above any queue)."""
    from dispatchlab.dispatch.powercap import capped as power

    monkeypatch.setattr(power, "_SHORT", short)
    seen: Counter = Counter()

    @PROPERTY
    @given(case=cases(), check=CHECK_NAMES, predictor=PREDICTORS)
    def run(case: Case, check: str, predictor: str) -> None:
        sim, _ = simulate(case, CheckedEasyPC(order=order, check=check), predictor)
        disp = sim.dispatcher
        if getattr(disp, "fast_starts_", 0):
            note(seen, "fast_pass_started_jobs")
        if getattr(disp, "compared_", 0):
            note(seen, "passes_compared")

    run()
    assert_seen(seen, ("fast_pass_started_jobs", "passes_compared"), f"{order} {short}")


@pytest.mark.parametrize("dispatcher_id", IDS)
def test_fast_classes_make_the_reference_decisions(dispatcher_id: str) -> None:
    """The registered (fast) class and the plain reference class it subclasses give the
    same run under any cap schedule, check and power predictor: start and end of every
    job, statuses and rejection reasons. Runs where the fast passes started jobs must
    occur (the comparison is not only of EASY's passes)."""
    fast_cls, reference_cls, _ = DISPATCHERS[dispatcher_id]
    assert issubclass(fast_cls, reference_cls)
    seen: Counter = Counter()

    @PROPERTY
    @given(case=cases(), check=CHECK_NAMES, predictor=PREDICTORS)
    def run(case: Case, check: str, predictor: str) -> None:
        sim, a = simulate(case, build(dispatcher_id, check, "fast"), predictor)
        _, b = simulate(case, build(dispatcher_id, check, "reference"), predictor)
        where = f"{dispatcher_id} check={check} predictor={predictor} {case.describe()}"
        assert a.start.tolist() == b.start.tolist(), where
        assert a.end.tolist() == b.end.tolist(), where
        assert a.status.tolist() == b.status.tolist(), where
        assert a.reject_reason == b.reject_reason, where
        if sim.dispatcher.fast_passes_:
            note(seen, "fast_passes")

    run()
    assert_seen(seen, ("fast_passes",), dispatcher_id)


# ---------------------------------------------------------------------------- 5. determinism
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dispatcher_id", IDS)
def test_determinism(dispatcher_id: str, kind: str) -> None:
    """The same capped configuration run twice (a fresh dispatcher, then the same
    dispatcher object again: the simulation clones it) gives identical start and end
    times, statuses, rejection reasons and power predictions."""

    @settings(max_examples=max(EXAMPLES // 2, 10), deadline=None)
    @given(case=cases(), check=CHECK_NAMES, predictor=PREDICTORS)
    def run(case: Case, check: str, predictor: str) -> None:
        disp = build(dispatcher_id, check, kind)
        _, a = simulate(case, disp, predictor)
        _, b = simulate(case, build(dispatcher_id, check, kind), predictor)
        _, c = simulate(case, disp, predictor)
        for other in (b, c):
            assert a.start.tolist() == other.start.tolist(), case.describe()
            assert a.end.tolist() == other.end.tolist(), case.describe()
            assert a.status.tolist() == other.status.tolist(), case.describe()
            assert a.reject_reason == other.reject_reason, case.describe()
            for k in ("mean", "max", "std"):
                np.testing.assert_array_equal(a.power_prediction[k],
                                              other.power_prediction[k])

    run()
