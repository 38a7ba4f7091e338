"""``bf`` and ``dvfs`` (PA-HPC-SIM's power-budget EASY variants, seed 004), hand-computed
on 2-4 node / core instances, then property tests and the dispatcher contract.

Estimates = run times (requested = run) unless stated. Predictions come from a table
(mean = max = the given watts, std 0), or from the ``real`` predictor in the property
tests. Duration model: seed 004's factor F, speed = min(1, M / F) (F = 0: 1).
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY
from dispatchlab.dispatch.base import SetPower, Start
from dispatchlab.dispatch.powercap.budget import BF, DVFS, dvfs_threshold, predicted_bsld
from dispatchlab.dispatch.powercap.capped import EasyPC
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.platform.platform import NodeType
from dispatchlab.power import PowerCap
from dispatchlab.predict.power.base import PowerPrediction, PowerPredictor
from dispatchlab.predict.power.predictors import make_power_predictor
from dispatchlab.sim.duration import NoSlowdown
from dispatchlab.sim.result import STATUS_REJECTED
from dispatchlab.testing import check_dispatcher
from strategies import workloads

try:
    from dispatchlab.sim.duration import Factor
except ImportError:  # pragma: no cover - the duration models land in the same issue
    from dispatchlab.sim.duration import DurationModel

    class Factor(DurationModel):  # type: ignore[no-redef]
        name = "factor"

        def __init__(self, f: float = 1.0) -> None:
            self.f = f

        def speed(self, job: int, level: float) -> float:
            return 1.0 if self.f <= 0 else min(1.0, level / self.f)


class Table(PowerPredictor):
    """Predictions given per job row (W)."""

    name = "table"

    def __init__(self, watts=None) -> None:
        self.watts = watts

    def predict(self, job, now):
        w = float(self.watts[job])
        return PowerPrediction(w, w, 0.0)


def run(submit, run_s, units, dispatcher, watts=None, cap=None, *, platform=None,
        cores=4, model=None, per_unit=1):
    """Simulate; ``per_unit``: cores per unit (> 1: node-level placement)."""
    jobs = JobTable.from_arrays(submit=submit, run=run_s, units=units,
                                resources={"core": [per_unit] * len(submit)})
    plat = platform if platform is not None else Platform.pooled(cores)
    return Simulation(plat, jobs, dispatcher,
                      power_predictor=None if watts is None else Table(watts), cap=cap,
                      duration_model=model).run()


def levels(result) -> dict[int, float]:
    """Each throttled job's last power level (from the rate-change segments)."""
    seg = result.segments
    if seg is None:
        return {}
    return dict(zip(seg["job"].tolist(), seg["power_level"].tolist(), strict=True))


# ------------------------------------------------------------------------------- BF
def test_bf_refuses_a_job_ending_exactly_at_the_shadow_time():
    # 4 cores, no cap. A (3 cores, 100 s) at 0. At 1: H (4 cores, 50 s), B (1 core,
    # 99 s), C (1 core, 98 s).
    # At 1: H needs 4, 1 free: head; shadow = A's end = 100.
    #   BF: B ends at 1 + 99 = 100, not < 100 -> refused; C ends at 99 < 100 -> starts at
    #   1 (free 0). At 99 C ends: B would end at 198 -> refused. At 100 A ends: H starts
    #   (100-150); B at 150.
    #   Textbook EASY: B ends at 100 <= 100 -> backfilled at 1 (free 0); C waits; at 100
    #   H starts (A and B end), C at 150.
    args = ([0, 1, 1, 1], [100, 50, 99, 98], [3, 4, 1, 1])
    assert run(*args, BF()).start.tolist() == [0, 100, 150, 1]
    assert run(*args, EASY()).start.tolist() == [0, 100, 1, 150]


def test_bf_has_no_extra_nodes_rule():
    # 4 cores, no cap. A (2 cores, 100 s) at 0; at 1 H (3 cores, 50 s) and L (1 core,
    # 500 s). H: head, shadow 100, textbook extra = 4 - 3 = 1 core.
    #   EASY: L ends at 501 > 100 but fits the extra core -> backfilled at 1; at 100 H
    #   gets the 3 cores A frees.
    #   BF: L ends after the shadow -> refused (no extra rule); at 100 H starts, then L
    #   fits the last core -> 100.
    args = ([0, 1, 1], [100, 50, 500], [2, 3, 1])
    assert run(*args, EASY()).start.tolist() == [0, 100, 1]
    assert run(*args, BF()).start.tolist() == [0, 100, 100]


# X (1 core, 100 s, 600 W) at 0; at 1 H (1 core, 100 s, 500 W), B (1 core, 50 s, 300 W),
# C (1 core, 500 s, 400 W); 4 cores, cap 1000 W.
SUBMIT, RUN, UNITS = [0, 1, 1, 1], [100, 100, 50, 500], [1, 1, 1, 1]
WATTS = [600, 500, 300, 400]


def test_bf_power_blocks_the_head():
    # At 1: H fits the cores but 600 + 500 = 1100 > 1000: head. Shadow: X releases at 100
    # -> 500 <= 1000: 100. B: 600 + 300 = 900 and ends at 51 < 100 -> starts at 1. C:
    # 900 + 400 > 1000 -> waits. At 51 B ends: C fits the power (600 + 400 = 1000) but
    # ends at 551 >= 100 -> refused (EASY+PC, with its extra rule, starts it at 51).
    # At 100 X ends: H starts (500 W), then C (900 W) -> 100.
    cap = PowerCap.window(1000.0)
    assert run(SUBMIT, RUN, UNITS, BF(), WATTS, cap).start.tolist() == [0, 100, 1, 100]
    assert run(SUBMIT, RUN, UNITS, EasyPC(), WATTS, cap).start.tolist() == [0, 100, 1, 51]


def test_bf_margin_and_cap_scale_scale_the_budget():
    # margin 0.9: budget 900 W. At 1: H head (1100 > 900); B: 600 + 300 = 900 <= 900 ->
    # starts at 1 (ends 51 < 100). Same as margin 1 here; with margin 0.85 (850 W) B
    # (900 W) is refused too and waits for X: at 100 H (500) starts, B: 800 <= 850 -> 100,
    # C: 800 + 400 > 850 waits until B ends at 150 (H 500 + C 400 = 900 > 850) ... until
    # H ends at 200: C at 200.
    cap = PowerCap.window(1000.0)
    assert run(SUBMIT, RUN, UNITS, BF(margin=0.9), WATTS, cap).start.tolist() == \
        [0, 100, 1, 100]
    assert run(SUBMIT, RUN, UNITS, BF(margin=0.85), WATTS, cap).start.tolist() == \
        [0, 100, 100, 200]
    # cap_scale 3 (admission control): budget 3000 W, everything fits at once
    assert run(SUBMIT, RUN, UNITS, BF(cap_scale=3), WATTS, cap).start.tolist() == \
        [0, 1, 1, 1]
    # power_check=False: PA's EASY without power: the same
    assert run(SUBMIT, RUN, UNITS, BF(power_check=False), WATTS, cap).start.tolist() == \
        [0, 1, 1, 1]


def test_bf_head_that_never_fits_stops_backfilling():
    # 4 cores, cap 1000 W on [0, 200). At 0: H (1 core, 100 s, 1200 W), B (1 core, 10 s,
    # 100 W). H fails the power with nothing running: no shadow time -> no backfilling at
    # all: B waits although it fits. At 200 the cap lifts: H and B start.
    cap = PowerCap.window(1000.0, 0, 200)
    r = run([0, 0], [100, 10], [1, 1], BF(), [1200, 100], cap)
    assert r.start.tolist() == [200, 200]
    # a permanent cap: H can never start -> rejected (ours), and B starts at 0
    r = run([0, 0], [100, 10], [1, 1], BF(), [1200, 100], PowerCap.window(1000.0))
    assert r.status[0] == STATUS_REJECTED
    assert "1,200 W" in r.reject_reason[0]
    assert r.start.tolist()[1] == 0


def test_bf_node_level_strict_shadow():
    # 3 nodes x 4 cores, units of 4 cores (one node each), first-fit. A (2 units, 100 s)
    # at 0 -> nodes 0 and 1. At 1: H (3 units, 50 s): head, shadow 100. B (1 unit, 99 s)
    # ends at 100 -> refused; C (1 unit, 98 s) ends at 99 -> node 2 at 1. At 100 H
    # (100-150), B at 150. Textbook EASY backfills B instead (100 <= 100).
    plat = Platform.homogeneous(3, 4)
    args = ([0, 1, 1, 1], [100, 50, 99, 98], [2, 3, 1, 1])
    r = run(*args, BF(), platform=plat, per_unit=4)
    assert r.start.tolist() == [0, 100, 150, 1]
    assert r.allocations[0].nodes.tolist() == [0, 1]
    assert r.allocations[3].nodes.tolist() == [2]
    assert run(*args, EASY(), platform=plat, per_unit=4).start.tolist() == [0, 100, 1, 150]


def test_bf_is_side_effect_free_as_an_inner_component():
    # driving BF by hand (as the RAPL dispatchers do) gives the decisions of its run and
    # leaves the view unchanged between two calls
    seen = []

    class Outer(BF):
        def dispatch(self, view):
            before = (view.free_cores, view.queue.jobs.tolist())
            first = super().dispatch(view)
            again = super().dispatch(view)
            assert first == again and (view.free_cores, view.queue.jobs.tolist()) == before
            seen.append(first)
            return first

    r = run(SUBMIT, RUN, UNITS, Outer(), WATTS, PowerCap.window(1000.0))
    assert r.start.tolist() == [0, 100, 1, 100]
    assert seen[0] == [Start(0)]


# ----------------------------------------------------------------------------- DVFS
@pytest.mark.parametrize("f, end", [(1.0, 400), (0.5, 200), (0.25, 100), (0.0, 100)])
def test_dvfs_lowers_the_power_of_a_job_over_the_budget(f, end):
    # 4 cores, cap 1000 W. At 0: X (1 core, 100 s, 600 W) starts at full power; J (1 core,
    # 100 s, 1600 W): 600 + 1600 > 1000 -> avail = 400, M = 400 / 1600 = 0.25 (floor
    # 1 W / 1600 W: fine). Speed min(1, 0.25 / F): F = 1 -> 0.25, D' = 400; F = 0.5 ->
    # 0.5, D' = 200; F = 0.25 and 0 -> 1, D' = 100. Hypothetical power 600 + 400 = 1000 >
    # 750 -> threshold 10; BSLD = max(1, (0 + D') / max(300, 100)) <= 1.34 < 10 -> starts
    # at 0 at level 0.25 and ends at D'.
    r = run([0, 0], [100, 100], [1, 1], DVFS(), [600, 1600], PowerCap.window(1000.0),
            model=Factor(f=f))
    assert r.start.tolist() == [0, 0]
    assert r.end.tolist() == [100, end]
    assert levels(r) == {1: 0.25}


def test_dvfs_throttled_job_counts_prediction_times_level():
    # As above with F = 1 (J at 0.25 until 400) and K (1 core, 10 s, 500 W) at 0: used =
    # 600 + 1600 x 0.25 = 1000, avail 0 -> no reduction: K is the head, shadow = X's end
    # at 100 (400 + 500 <= 1000). At 100 K starts at full power (400 + 500 = 900): J
    # counts 400 W, not 1600.
    r = run([0, 0, 0], [100, 100, 10], [1, 1, 1], DVFS(), [600, 1600, 500],
            PowerCap.window(1000.0), model=Factor(f=1.0))
    assert r.start.tolist() == [0, 0, 100]
    assert r.end.tolist() == [100, 400, 110]
    assert levels(r) == {1: 0.25}


def dvfs_case(j_submit: int):
    # 2 cores, cap 1000 W, F = 1. At 0: X (1 core, 2900 s, 100 W) and Y (1 core, 5000 s,
    # 750 W) start (850 W). J (1 core, 300 s, 1000 W) waits for a core until 2900; then
    # 750 + 1000 > 1000: avail 250, M = 0.25, D' = 1200, threshold 10 (hypothetical
    # 1000 W), BSLD = max(1, (2900 - submit + 1200) / 300).
    return run([0, 0, j_submit], [2900, 5000, 300], [1, 1, 1], DVFS(), [100, 750, 1000],
               PowerCap.window(1000.0), cores=2, model=Factor(f=1.0))


def test_dvfs_refuses_a_reduction_when_the_bsld_passes_the_threshold():
    # J submitted at 0: BSLD = (2900 + 1200) / 300 = 13.7 >= 10 -> refused: J keeps full
    # power, waits for Y (shadow 5000: 1000 <= 1000) and runs 5000-5300 unthrottled.
    r = dvfs_case(0)
    assert r.start.tolist()[2] == 5000 and r.end.tolist()[2] == 5300
    assert levels(r) == {}
    # J submitted at 2900: BSLD = 1200 / 300 = 4 < 10 -> starts at 2900 at 0.25, ends
    # at 2900 + 1200 = 4100
    r = dvfs_case(2900)
    assert r.start.tolist()[2] == 2900 and r.end.tolist()[2] == 4100
    assert levels(r) == {2: 0.25}


def test_dvfs_bsld_equal_to_the_threshold_is_refused():
    # submitted at 1100: wait 1800 at 2900, BSLD = (1800 + 1200) / 300 = 10 >= 10 ->
    # refused (starts at 5000); at 1101: 2999 / 300 < 10 -> throttled at 2900
    assert dvfs_case(1100).start.tolist()[2] == 5000
    assert dvfs_case(1101).start.tolist()[2] == 2900


@pytest.mark.parametrize("est, start, end", [(40, 1, 81), (60, 110, 170)])
def test_dvfs_backfill_uses_the_stretched_duration(est, start, end):
    # 4 cores, cap 1000 W, F = 1. A (3 cores, 100 s, 600 W) at 0. At 1: H (4 cores, 10 s,
    # 100 W): head (1 core free), shadow 100. B (1 core, est, 800 W): 600 + 800 > 1000 ->
    # M = 400 / 800 = 0.5, D' = 2 x est, BSLD <= 1 < 10. est 40: ends 1 + 80 = 81 < 100 ->
    # backfilled at 0.5. est 60: at full power it would end at 61 < 100, but it does not
    # fit the power; reduced it ends at 121 >= 100 -> refused; at 100 H runs (100-110),
    # then B at 110 at full power (800 W).
    r = run([0, 1, 1], [100, 10, est], [3, 4, 1], DVFS(), [600, 100, 800],
            PowerCap.window(1000.0), model=Factor(f=1.0))
    assert r.start.tolist() == [0, 100, start]
    assert r.end.tolist()[2] == end


@pytest.mark.parametrize("units, start", [(1, 0), (3, 1000)])
def test_dvfs_never_below_one_watt_per_node(units, start):
    # 4 nodes x 2 cores, units of 2 cores (a node each), cap 1000 W, F = 0 (no stretch).
    # X (1 node, 1000 s, 998 W) at 0. J (units nodes, 100 s, 600 W): avail 2 W, M = 2 /
    # 600 = 0.0033. Floor = nodes / 600: 1 node -> 0.0017 <= M: starts at 0 throttled;
    # 3 nodes -> 0.005 > M: does not fit (ours: the floor would break the budget) and
    # waits for X: 1000 at full power.
    r = run([0, 0], [1000, 100], [1, units], DVFS(), [998, 600], PowerCap.window(1000.0),
            platform=Platform.homogeneous(4, 2), per_unit=2, model=Factor(f=0.0))
    assert r.start.tolist() == [0, start]
    if start == 0:
        assert levels(r)[1] == pytest.approx(2 / 600)
        assert 600 * levels(r)[1] <= 2.0


def test_dvfs_returns_start_then_set_power_in_one_pass():
    passes = []

    class Spy(DVFS):
        def dispatch(self, view):
            out = super().dispatch(view)
            passes.append(out)
            return out

    run([0, 0], [100, 100], [1, 1], Spy(), [600, 1600], PowerCap.window(1000.0),
        model=Factor(f=1.0))
    assert passes[0] == [Start(0), Start(1), SetPower(1, 0.25)]


def test_dvfs_helpers():
    # the bands of PA's dynamic threshold
    assert [dvfs_threshold(h, 1000.0) for h in (249.0, 250.0, 750.0, 751.0)] == \
        [0.0, 2.0, 2.0, 10.0]
    # BSLD: max(1, (wait + D') / max(theta, est))
    assert predicted_bsld(100, 0, 500.0, 200, 300) == pytest.approx(2.0)
    assert predicted_bsld(0, 0, 50.0, 50, 300) == 1.0
    assert predicted_bsld(0, 0, 1200.0, 600, 60) == pytest.approx(2.0)


def test_parameters_are_checked():
    for bad in (BF(margin=0), BF(margin=1.5), BF(cap_scale=0), BF(power_check="yes"),
                DVFS(bsld_theta=-1), BF(allocator="nope")):
        with pytest.raises(InputError):
            run([0], [10], [1], bad, [10], PowerCap.window(100.0), model=NoSlowdown())
    with pytest.raises(InputError, match="power predictor"):
        run([0], [10], [1], BF(), None, PowerCap.window(100.0))
    # no cap at all: no predictor needed
    assert run([0], [10], [1], DVFS(), model=NoSlowdown()).start.tolist() == [0]


# ------------------------------------------------------------------------ contract
@pytest.mark.parametrize("disp", [BF, DVFS, BF(power_check=False), BF(cap_scale=3.0)])
def test_check_dispatcher(disp):
    report = check_dispatcher(disp, workloads=3)
    assert report["jobs"] > 0


# ------------------------------------------------------------------------ properties
EXAMPLES = int(os.environ.get("DISPATCHLAB_PROPERTY_EXAMPLES", "40"))
PROPERTY = settings(max_examples=EXAMPLES, deadline=None)


@st.composite
def power_cases(draw):
    """A contending workload with whole-watt power, a permanent cap and a platform."""
    w = draw(workloads(min_jobs=5, max_jobs=20, min_capacity=4, max_capacity=8))
    watts = [draw(st.sampled_from([0, 10, 50, 120, 200, 350])) * max(1, u // 2)
             for u in w.units]
    positive = sorted(p for p in watts if p > 0) or [100]
    lo = max(1, positive[len(positive) // 2])
    cap = draw(st.integers(lo, max(lo + 1, sum(sorted(watts)[-3:]))))
    node_level = draw(st.booleans())
    f = draw(st.sampled_from([0.0, 0.5, 1.0]))
    return w, watts, cap, node_level, f


def simulate(case, dispatcher):
    w, watts, cap, node_level, f = case
    jobs = JobTable.from_arrays(**w.as_lists())
    jobs.columns.update(power_mean=np.array(watts, dtype=np.float64),
                        power_max=np.array(watts, dtype=np.float64),
                        power_std=np.zeros(len(watts)))
    if node_level:
        plat = Platform((NodeType("n", (w.capacity + 1) // 2, {"core": 2},
                                  max_power=400.0),), name="n")
    else:
        plat = Platform((NodeType("pool", 1, {"core": w.capacity}, max_power=400.0),),
                        name="pool", is_pooled=True)
    return Simulation(plat, jobs, dispatcher, power_predictor=make_power_predictor("real"),
                      cap=PowerCap.window(float(cap)), duration_model=Factor(f=f)).run()


def check_run(case, r, margin: float = 1.0) -> None:
    w, watts, cap, node_level, _ = case
    submit = np.array(w.submit)
    units = np.array(w.units)
    ran = r.start >= 0
    assert (r.start[ran] >= submit[ran]).all(), "a job started before its submission"
    lv = levels(r)
    level = np.array([lv.get(j, 1.0) for j in range(w.n)])
    power = np.array(watts, dtype=np.float64) * level
    capacity = w.capacity if not node_level else 2 * ((w.capacity + 1) // 2)
    for t in np.unique(r.start[ran]).tolist():
        # running at t (0-second jobs hold nothing: the engine frees them in the
        # same time point, before the next pass)
        on = ran & (r.start <= t) & (r.end > t)
        assert units[on].sum() <= capacity, f"capacity exceeded at {t}"
        assert power[on].sum() <= margin * cap * (1 + 1e-12), f"budget exceeded at {t}"
    # a rejection by power only for a job whose prediction alone passes the budget
    for j in np.flatnonzero(r.status == STATUS_REJECTED).tolist():
        assert units[j] > capacity or watts[j] > margin * cap


@PROPERTY
@given(case=power_cases(), margin=st.sampled_from([1.0, 0.95]))
def test_bf_properties(case, margin):
    a = simulate(case, BF(margin=margin))
    check_run(case, a, margin)
    event(f"bf rejected by power: {bool((a.status == STATUS_REJECTED).any())}")
    assert levels(a) == {}
    b = simulate(case, BF(margin=margin))
    assert np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)


@PROPERTY
@given(case=power_cases())
def test_dvfs_properties(case):
    a = simulate(case, DVFS())
    check_run(case, a)
    event(f"dvfs throttled: {bool(levels(a))}")
    for lvl in levels(a).values():
        assert 0 < lvl < 1
    b = simulate(case, DVFS())
    assert np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)


def test_bf_uncapped_power_check_off_equals_bf_without_cap():
    # without a cap, BF ignores power: power_check on or off gives the same schedule
    args = ([0, 0, 1, 2, 3], [50, 30, 20, 80, 5], [2, 3, 1, 4, 1])
    a = run(*args, BF())
    b = run(*args, BF(power_check=False), [1e6] * 5, PowerCap.window(1.0))
    assert a.start.tolist() == b.start.tolist()


# ------------------------------------------------- the shadow time's fit-in-total filter
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_node_units_screen_is_necessary_for_every_allocator(seed):
    # the units that fit in total (node_units summed over nodes: the shadow time's
    # screen) reach the job's units wherever an allocator places it (the screen must
    # never hide a breakpoint where the head fits), and equal units_per_node's count
    from dispatchlab.dispatch.allocators import make_allocator, units_per_node
    from dispatchlab.dispatch.powercap.budget import node_units

    rng = np.random.default_rng(seed)
    cap = rng.integers(0, 5, size=(6, 3))
    frees = [rng.integers(0, 5, size=(6, 3)) for _ in range(int(rng.integers(1, 5)))]
    request = rng.integers(0, 3, size=3)
    if not request.any():
        request[int(rng.integers(0, 3))] = 1  # (a request of nothing is not screened)
    units = int(rng.integers(1, 12))
    pos = np.flatnonzero(request > 0).tolist()
    per_unit = [int(request[p]) for p in pos]
    for name in ("first-fit", "best-fit", "consolidate"):
        alloc = make_allocator(name)
        alloc.start(cap)
        for f in frees:
            total = sum(node_units(row, pos, per_unit, units) for row in f.tolist())
            placed = alloc.allocate(request, units, f) is not None
            assert not placed or total >= units
            assert total == int(np.minimum(units_per_node(request, f), units).sum())


# ------------------------------------------- the node-level shadow time against a profile
def profile_shadow(disp, view, head, rows, units, pred, budget, used, running, run_power,
                   started):
    """The shadow time as first written: the whole release profile with this pass's
    starts reserved until their planned end, the first breakpoint where the power fits,
    then the first breakpoint from it where the allocator places the head."""
    from dispatchlab.dispatch.allocators import units_per_node

    now = view.now
    prof = view.release_profile().copy()  # (the engine keeps the view's for the pass)
    for end, _, held in started:
        prof.reserve(now, end - now, held)
    j, need, x = rows[head], units[head], pred[head]
    times, frees = prof.times, prof.free
    first = 0
    if budget is not None:
        releases = list(zip(running.est_end.tolist(), run_power, strict=True))
        releases += [(end, pw) for end, pw, _ in started]
        releases.sort(key=lambda r: r[0])
        released, i = 0.0, 0
        for t in times:
            while i < len(releases) and releases[i][0] <= t:
                released += releases[i][1]
                i += 1
            left = used - released if i < len(releases) else 0.0
            if left + x <= budget:
                break
            first += 1
    req = view.requests[j]
    for k in range(first, len(times)):
        if int(np.minimum(units_per_node(req, frees[k]), need).sum()) < need:
            continue
        if disp.allocator_.allocate(req, need, frees[k]) is not None:
            return times[k]
    return None


def shadows_compared(make_sim) -> dict[str, int]:
    """Run ``make_sim()``'s simulation with every node-level shadow time computed both
    lazily and from the whole profile (asserted equal); counts of what was seen."""
    from dispatchlab.dispatch.powercap.budget import _BudgetEasy

    seen = {"passes": 0, "started": 0, "found": 0}
    original = _BudgetEasy._node_shadow

    def both(self, view, j, need, x, budget, used, running, run_power, started):
        got = original(self, view, j, need, x, budget, used, running, run_power, started)
        q = view.queue
        head = int(np.flatnonzero(q.jobs == j)[0])
        rows, units = q.jobs.tolist(), q.units.tolist()
        pred = [0.0] * len(rows)
        pred[head] = x
        want = profile_shadow(self, view, head, rows, units, pred, budget, used, running,
                              run_power, started)
        assert got == want, (view.now, j, got, want, len(started))
        seen["passes"] += 1
        seen["started"] += bool(started)
        seen["found"] += got is not None
        return got

    _BudgetEasy._node_shadow = both
    try:
        make_sim().run()
    finally:
        _BudgetEasy._node_shadow = original
    return seen


@st.composite
def node_cases(draw):
    """Jobs of 1-4 units of 1-4 cores arriving close together on 2-4 nodes of 4 cores,
    estimates that may run out (``overrun = run``), whole-watt power and a cap."""
    n_nodes = draw(st.integers(2, 4))
    n = draw(st.integers(6, 16))
    submit, run, units, per_unit, req, watts = [], [], [], [], [], []
    t = 0
    for _ in range(n):
        t += draw(st.sampled_from([0, 0, 1, 3, 10]))
        r = draw(st.integers(5, 120))
        submit.append(t)
        run.append(r)
        units.append(draw(st.integers(1, 4)))
        per_unit.append(draw(st.integers(1, 4)))
        req.append(max(1, r + draw(st.sampled_from([0, 30, -3, 60, -40, 5]))))
        watts.append(draw(st.sampled_from([10, 40, 80, 150])) * units[-1])
    cap = draw(st.integers(max(watts), max(max(watts) + 1, sum(sorted(watts)[-3:]))))
    return n_nodes, submit, run, units, per_unit, req, watts, cap


@PROPERTY
@given(case=node_cases(), name=st.sampled_from(["bf", "dvfs", "rapl-dynshare",
                                                 "rapl-simple"]),
       f=st.sampled_from([0.0, 0.5, 1.0]))
def test_node_shadow_equals_the_profile_shadow_on_small_nodes(case, name, f):
    # a few 4-core nodes, jobs of several units, a permanent cap: this pass's starts
    # often hold cores the head needs, and estimates run out
    from dispatchlab.dispatch import make_dispatcher

    n_nodes, submit, run_s, units, per_unit, req, watts, cap = case
    jobs = JobTable.from_arrays(submit=submit, run=run_s, units=units,
                                requested_time=req, resources={"core": per_unit})
    jobs.columns.update(power_mean=np.array(watts, dtype=np.float64),
                        power_max=np.array(watts, dtype=np.float64),
                        power_std=np.zeros(len(watts)))
    plat = Platform((NodeType("n", n_nodes, {"core": 4}, max_power=400.0),), name="n")
    seen = shadows_compared(lambda: Simulation(
        plat, jobs, make_dispatcher(name), power_predictor=make_power_predictor("real"),
        cap=PowerCap.window(float(cap)), duration_model=Factor(f=f), overrun="run"))
    event(f"shadow computed: {seen['passes'] > 0}")
    event(f"with this pass's starts: {seen['started'] > 0}")
    event(f"a shadow time found: {seen['found'] > 0}")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(20, 70),
       kind=st.sampled_from(["burst", "uniform", "left-skewed"]),
       share=st.sampled_from([0.1, 0.3, 0.5, 0.8]),
       name=st.sampled_from(["bf", "dvfs", "rapl-dynshare", "rapl-simple"]),
       hot=st.sampled_from([0.0, 0.0, 0.5]))
def test_node_shadow_equals_the_profile_shadow(seed, n, kind, share, name, hot):
    # at every pass of node-level runs (the Eurora preset, synthetic instances, a budget,
    # with and without a hot start) the lazily walked shadow time equals the one read
    # off the whole release profile; this pass's starts are held until their end
    from dispatchlab.dispatch import make_dispatcher
    from dispatchlab.power.eurora_synth import eurora_instance
    from dispatchlab.predict.power.predictors import RealPowerPredictor
    from dispatchlab.sim.duration import MixedFactor
    from dispatchlab.sim.hotstart import add_hot_start

    platform = eurora_platform()
    jobs = eurora_instance(n, 600, kind, seed=seed, burst_size=n) if kind == "burst" \
        else eurora_instance(n, 600, kind, seed=seed)
    peak = float(np.asarray(jobs["power_mean"]).sum())
    kwargs = {}
    if hot:
        jobs, kwargs["pinned"] = add_hot_start(jobs, platform, hot)
    model = MixedFactor("dynshare" if name.startswith("rapl") else "dvfs")
    seen = shadows_compared(lambda: Simulation(
        platform, jobs, make_dispatcher(name), power_predictor=RealPowerPredictor(),
        cap=PowerCap.window(share * peak), duration_model=model, **kwargs))
    event(f"shadow passes > 0: {seen['passes'] > 0}")
    event(f"with this pass's starts: {seen['started'] > 0}")
