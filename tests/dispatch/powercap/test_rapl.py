"""RAPL-like throttling of seed 004 (``rapl-dynshare``, ``rapl-simple``, ``dec-rapl``):
the DynShare allocation step alone, then hand-computed runs on 1-4 node platforms,
the admission control and the budget excess as a measured metric, and the dispatcher
contract.

Jobs carry their real power (``power_mean`` = ``power_max``, std 0) and the ``real``
power predictor predicts it exactly. Duration model: seed 004's factor F (speed =
min(1, M / F); F = 0 never stretches). Estimates = run times. DynShare measures every
5 s on the grid 5, 10, 15, ...; the first measurement only sets every allocation to
round(bound / N).
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import FIFO, make_dispatcher
from dispatchlab.dispatch.base import SetPower
from dispatchlab.dispatch.powercap.rapl import DecRapl, RaplDynShare, RaplSimple, dynshare_step
from dispatchlab.power import PowerCap
from dispatchlab.power.accounting import platform_power, power_facts
from dispatchlab.power.data import with_power
from dispatchlab.predict.power.predictors import RealPowerPredictor
from dispatchlab.sim.duration import Factor
from dispatchlab.testing import check_dispatcher

DYN = "dispatchlab.dispatch.powercap.rapl:RaplDynShare"


def powered(watts, **cols) -> JobTable:
    w = np.asarray(watts, dtype=np.float64)
    return with_power(JobTable.from_arrays(**cols),
                      {"power_mean": w, "power_max": w, "power_std": 0 * w})


def simulate(platform, jobs, dispatcher, cap, f=0.0) -> Simulation:
    sim = Simulation(platform, jobs, dispatcher, power_predictor=RealPowerPredictor(),
                     cap=cap, duration_model=Factor(f))
    sim.result = sim.run()
    return sim


def levels(result, job) -> list[tuple[int, float]]:
    """The (time, level) changes of job row ``job``."""
    seg = result.segments
    if seg is None:
        return []
    rows = np.flatnonzero(seg["job"] == job)
    return [(int(seg["time"][k]), float(seg["power_level"][k])) for k in rows]


def one_core_units(n):
    """One core and one memory unit per unit: node-level placement (a core-only
    platform with one-core units would be a counting one)."""
    return {"core": [1] * n, "mem": [1] * n}


def nodes(n, cores):
    return Platform.homogeneous(n, cores, mem=8)


# ----------------------------------------------------------------------------- the step
def test_first_call_sets_round_bound_over_n():
    # 401 W over 2 nodes: 200.5 -> 201 (C round, halves away from zero, as PA)
    assert dynshare_step(np.array([0.0, 300.0]), None, 401.0).tolist() == [201.0, 201.0]
    assert dynshare_step(np.zeros(4), None, 1.0).tolist() == [0.0] * 4  # 0.25 -> 0


def test_idle_node_yields_to_busy_node_in_one_step():
    # a = [200, 200], bound 400. Node 0 idle (c = 0 < 200 - 5): down to max(0 + 5, 1) = 5.
    # Node 1 at its allocation (200 < 195? no): up by u = (400 - 5 - 200) / 1 = 195 ->
    # 395 (< p_max 400).
    a = dynshare_step(np.array([0.0, 200.0]), np.array([200.0, 200.0]), 400.0)
    assert a.tolist() == [5.0, 395.0]


def test_take_then_up_when_no_node_yields():
    # a = [110, 100, 95, 95] (sum 400), c = [108, 100, 92, 95]: nobody is below a - 5.
    # sum(a) + N = 404 >= 400: take: share 100, only node 0 is above: 110 - 10 x (1 - 0.9)
    # = 109 (sum 399). Up: u = (400 - 399) / 4 = 0.25 to every node.
    a = dynshare_step(np.array([108.0, 100.0, 92.0, 95.0]),
                      np.array([110.0, 100.0, 95.0, 95.0]), 400.0)
    assert a == pytest.approx([109.25, 100.25, 95.25, 95.25], abs=1e-12)


def test_a_lower_bound_lowers_allocations_pa_has_no_guard():
    # a = [200, 200], c = [200, 200], bound 300: take: share 150: 200 - 50 x 0.1 = 195
    # each (sum 390); u = (300 - 390) / 2 = -45 -> 150 each (PA: no u < 0 guard)
    a = dynshare_step(np.array([200.0, 200.0]), np.array([200.0, 200.0]), 300.0)
    assert a.tolist() == [150.0, 150.0]


def test_p_max_p_min_and_all_down():
    # bound 1000: node 0 yields to 5, node 1 gets 500 + 495 -> capped at p_max 400
    a = dynshare_step(np.array([0.0, 500.0]), np.array([500.0, 500.0]), 1000.0)
    assert a.tolist() == [5.0, 400.0]
    # every node goes down: no up step (allocations sum to less than the bound)
    a = dynshare_step(np.array([0.0, 10.0]), np.array([200.0, 200.0]), 400.0)
    assert a.tolist() == [5.0, 15.0]
    # p_min 12 > c + q = 5
    a = dynshare_step(np.array([0.0, 10.0]), np.array([200.0, 200.0]), 400.0, p_min=12.0)
    assert a.tolist() == [12.0, 15.0]


def _step_by_loop(c, a, bound, q, rfact, p_min, p_max):
    """The rules node by node (the reference for the vectorized step)."""
    n = len(c)
    a = [float(x) for x in a]
    down = [False] * n
    for i in range(n):
        if c[i] < a[i] - q:
            a[i] = max(c[i] + q, p_min)
            down[i] = True
    if not any(down) and sum(a) + n >= bound:
        for i in range(n):
            if a[i] > bound / n:
                a[i] -= (a[i] - bound / n) * (1 - rfact)
    if not all(down):
        u = (bound - sum(a)) / (n - sum(down))
        for i in range(n):
            if not down[i]:
                a[i] = min(max(a[i] + u, p_min), p_max)
    return a


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 500), st.floats(0, 500)), min_size=1, max_size=12),
       st.floats(1, 5000), st.floats(0, 20), st.floats(0, 1))
def test_vectorized_step_equals_the_rules_node_by_node(nodes, bound, q, rfact):
    c = np.array([x for x, _ in nodes])
    a = np.array([y for _, y in nodes])
    got = dynshare_step(c, a, bound, q, rfact, 1.0, 400.0)
    assert got == pytest.approx(_step_by_loop(c, a, bound, q, rfact, 1.0, 400.0),
                                rel=1e-9, abs=1e-9)


# ----------------------------------------------------------------------------- DynShare
def test_dynshare_moves_budget_from_idle_node_to_busy_node_in_one_period():
    # 2 nodes of 1 core, cap 400 W. Job 0 (300 W, 1000 s) alone on node 0, F = 1.
    # t = 5: first measurement: a = [200, 200]; node 0 draws 300 > 200: level 200/300.
    # t = 10: c = [200, 0]: node 1 yields (0 < 195) to 5, node 0 gets u = 400 - 5 - 200
    # = 195 -> 395; ratio 395 / 200 -> level min(1, 2/3 x 1.975) = 1: full power again.
    # Work: 5 s at speed 1, 5 s at 2/3 (10/3), the 991.67 left at speed 1: end 10 + 992.
    jobs = powered([300.0], submit=[0], run=[1000], units=[1], resources=one_core_units(1))
    sim = simulate(nodes(2, 1), jobs, RaplDynShare(admission="none"),
                   PowerCap.window(400.0), f=1.0)
    r = sim.result
    got = levels(r, 0)
    assert [t for t, _ in got] == [5, 10]
    assert got[0][1] == pytest.approx(2 / 3) and got[1][1] == 1.0
    assert r.end.tolist() == [1002]


def test_proportional_enforcement_per_job_on_one_node():
    # 1 node of 2 cores, cap 200 W, F = 0 (no stretch). A (300 W) at 0, B (100 W) at 6.
    # t = 5: a = [200]; c = 300: A -> 200/300 = 2/3 (200 W).
    # t = 10: c = 200 + 100 = 300; nobody down; take: 200 + 1 >= 200 but 200 is not above
    # the share 200; u = 0: a = 200. Each job gets 200 x (its power / 300): A 200 x 200/300
    # = 133.3 W (level 2/3 x 2/3 = 4/9), B 200 x 100/300 = 66.7 W (level 2/3).
    jobs = powered([300.0, 100.0], submit=[0, 6], run=[100, 100], units=[1, 1],
                   resources=one_core_units(2))
    r = simulate(nodes(1, 2), jobs, RaplDynShare(admission="none"),
                 PowerCap.window(200.0)).result
    a, b = levels(r, 0), levels(r, 1)
    assert [t for t, _ in a][:2] == [5, 10] and [t for t, _ in b][:1] == [10]
    assert a[0][1] == pytest.approx(2 / 3) and a[1][1] == pytest.approx(4 / 9)
    assert b[0][1] == pytest.approx(2 / 3)
    assert a[1][1] * 300 + b[0][1] * 100 == pytest.approx(200.0)


def test_multi_node_job_takes_the_minimum_its_nodes_allow():
    # 2 nodes of 3 cores, cap 400 W, F = 0. M: 2 units of 2 cores (one per node), 400 W
    # (200 per node); S: 1 unit of 1 core on node 0 (first fit), 200 W.
    # t = 5: a = [200, 200], c = [400, 200]: ratios [0.5, 1]: M min(0.5, 1) = 0.5, S 0.5.
    # t = 10: c = [100 + 100, 100]: node 1 yields (100 < 195) to 105; node 0 gets
    # u = 400 - 105 - 200 = 95 -> 295. Ratios [295/200, 105/100] = [1.475, 1.05]:
    # M min(0.5 x 1.475, 0.5 x 1.05) = 0.525, S 0.5 x 1.475 = 0.7375 (no dead band: M's
    # raise is exactly 5 %, which the default dead band would skip).
    jobs = powered([400.0, 200.0], submit=[0, 0], run=[100, 100], units=[2, 1],
                   resources={"core": [2, 1], "mem": [1, 1]})
    r = simulate(nodes(2, 3), jobs, RaplDynShare(admission="none", deadband=0),
                 PowerCap.window(400.0)).result
    assert r.allocations[0].nodes.tolist() == [0, 1]
    m, s = levels(r, 0), levels(r, 1)
    assert m[:2] == [(5, 0.5), (10, pytest.approx(0.525))]
    assert s[:2] == [(5, 0.5), (10, pytest.approx(0.7375))]


def test_never_below_one_watt_per_node():
    # 4 nodes of 1 core, cap 1 W: a = round(1 / 4) = 0 W on each node, so the ratio is
    # 0 and every job sits at its floor: J0 (1 node, 100 W) 1 / 100 = 0.01, J1 (2 nodes,
    # 100 W) 2 / 100 = 0.02. The jobs then draw 3 W > 1 W: measured, not hidden.
    jobs = powered([100.0, 100.0], submit=[0, 0], run=[50, 50], units=[1, 2],
                   resources=one_core_units(2))
    r = simulate(nodes(4, 1), jobs, RaplDynShare(admission="none"),
                 PowerCap.window(1.0)).result
    assert levels(r, 0) == [(5, 0.01)]
    assert levels(r, 1) == [(5, 0.02)]
    times, watts = platform_power(r)
    assert watts[(times >= 5) & (times < 50)] == pytest.approx([3.0])


def test_power_restored_when_budget_frees_end_moves_back():
    # 2 nodes of 1 core, cap 400, F = 1 (speed = level). A (300 W, 100 s) on node 0,
    # B (300 W, 20 s) on node 1. t = 5: a = [200, 200], both at 2/3. B: 15 s of work
    # left at 2/3 -> 22.5 s -> ends at 28. Later measurements: c = a, nothing moves.
    # t = 30: node 1 idle yields to 5; node 0 gets 395: A back to level 1. A's work:
    # 5 + 25 x 2/3 = 21.67 done, 78.33 left at speed 1 -> ends at 30 + 79 = 109: later
    # than its original 100 (never before it), earlier than at 2/3 all along (148).
    jobs = powered([300.0, 300.0], submit=[0, 0], run=[100, 20], units=[1, 1],
                   resources=one_core_units(2))
    r = simulate(nodes(2, 1), jobs, RaplDynShare(admission="none"),
                 PowerCap.window(400.0), f=1.0).result
    a = levels(r, 0)
    assert [t for t, _ in a] == [5, 30] and a[0][1] == pytest.approx(2 / 3)
    assert a[1][1] == 1.0
    assert r.end.tolist() == [109, 28]


def test_dead_band_skips_small_raises_and_stops_the_two_period_cycle():
    # 2 nodes of 1 core, cap 100 W, J0 (300 W, 100 s) alone on node 0, F = 0.
    # PA's rules (deadband 0): t = 5 a = [50, 50] -> 50 W; t = 10 node 1 yields to 5,
    # node 0 gets 95 -> 95 W; t = 15 take (share 50): 95 -> 90.5, u = (100 - 95.5) / 2
    # = 2.25 -> a = [92.75, 7.25] -> 92.75 W; t = 20 node 1 yields (0 < 2.25) to 5, node
    # 0 gets 95 again: a two-period cycle 95 / 92.75 W until the end (a level change
    # every period). Default dead band 5 %: the raise 92.75 -> 95 (2.4 %) at 20 is
    # skipped; at 25 c = [92.75, 0], a = [95, 5]: nobody down, take: 95 -> 90.5, u =
    # 2.25: a = [92.75, 7.25] = what the node draws: no change, and so on.
    jobs = powered([300.0], submit=[0], run=[100], units=[1], resources=one_core_units(1))
    cap = PowerCap.window(100.0)
    exact = simulate(nodes(2, 1), jobs, RaplDynShare(admission="none", deadband=0),
                     cap).result
    watts = [(t, round(lv * 300, 6)) for t, lv in levels(exact, 0)]
    assert watts == [(5, 50.0), (10, 95.0)] + [
        (t, 92.75 if t % 10 else 95.0) for t in range(15, 100, 5)]
    banded = simulate(nodes(2, 1), jobs, RaplDynShare(admission="none"), cap).result
    watts = [(t, round(lv * 300, 6)) for t, lv in levels(banded, 0)]
    assert watts == [(5, 50.0), (10, 95.0), (15, 92.75)]


def test_measured_node_power_is_the_views():
    # the per-node measurement DynShare computes from its job-node incidence equals
    # View.node_power() (real power x level split by units), levels included
    from dispatchlab.dispatch.powercap.rapl import _Incidence

    seen = []

    class Probe(RaplDynShare):
        def _tick(self, view):
            out = super()._tick(view)
            rows = np.sort(view.running.jobs)
            if len(rows):
                inc = _Incidence(view, rows)
                drawn = self.real_[rows] * self.level_[rows]
                seen.append((self.measure(view, inc, drawn).tolist(),
                             view.node_power().tolist()))
            return out

    rng = np.random.default_rng(7)
    n = 40
    jobs = powered(rng.uniform(50, 400, n), submit=np.sort(rng.integers(0, 300, n)),
                   run=rng.integers(20, 200, n), units=rng.integers(1, 4, n),
                   resources=one_core_units(n))
    simulate(nodes(4, 2), jobs, Probe(admission="none"), PowerCap.window(300.0), f=1.0)
    assert len(seen) > 20
    for mine, theirs in seen:
        assert mine == pytest.approx(theirs, rel=1e-12, abs=1e-9)


def test_no_cap_means_nothing_to_enforce_and_levels_go_back_to_one():
    # cap 100 W on [0, 20): A (300 W) throttled at 5 (a = 50 per node on 2 nodes ->
    # 1/6); at 20 the cap goes: the measurement at 20 puts A back to full power.
    jobs = powered([300.0], submit=[0], run=[100], units=[1], resources=one_core_units(1))
    r = simulate(nodes(2, 1), jobs, RaplDynShare(admission="none"),
                 PowerCap.window(100.0, 0, 20)).result
    got = levels(r, 0)
    assert got[0] == (5, pytest.approx(50 / 300))
    assert got[-1] == (20, 1.0)


# ----------------------------------------------------------------------------- Simple
def test_simple_budget_given_at_start_and_returned_only_at_end():
    # 4 nodes of 1 core, cap 600 W, F = 1. Rows: J0 (400 W, 100 s) at 0, J1 (400 W,
    # 100 s) at 10, J2 (100 W, 10 s) at 20, J3 (200 W, 10 s) at 50, J4 (200 W, 10 s) at 150.
    # J0: min(400, 600) = 400 -> level 1, ends 100.
    # J1: min(400, 600 - 400 = 200) -> level 0.5 -> 200 s: ends 210.
    # J2: min(100, 0) -> 1 W floor -> level 0.01 -> 1000 s: ends 1020.
    # J3: left 600 - 601 = -1 -> 1 W -> level 1/200 -> 2000 s: ends 2050 (J0's budget
    #     is not shared while J0 runs).
    # J4 at 150: J0 ended at 100 and returned its 400 W: left 600 - 200 - 1 - 1 = 398
    #     -> 200 W, level 1, ends 160. Levels never change after the start.
    jobs = powered([400.0, 400.0, 100.0, 200.0, 200.0], submit=[0, 10, 20, 50, 150],
                   run=[100, 100, 10, 10, 10], units=[1] * 5, resources=one_core_units(5))
    r = simulate(nodes(4, 1), jobs, RaplSimple(admission="none"),
                 PowerCap.window(600.0), f=1.0).result
    assert r.start.tolist() == [0, 10, 20, 50, 150]
    assert r.end.tolist() == [100, 210, 1020, 2050, 160]
    assert levels(r, 0) == [] and levels(r, 4) == []
    assert levels(r, 1) == [(10, 0.5)]
    assert levels(r, 2) == [(20, 0.01)]
    assert levels(r, 3) == [(50, 0.005)]


def test_simple_without_cap_runs_at_full_power():
    jobs = powered([400.0, 400.0], submit=[0, 0], run=[10, 10], units=[1, 1],
                   resources=one_core_units(2))
    r = simulate(nodes(2, 1), jobs, RaplSimple(), None, f=1.0).result
    assert r.end.tolist() == [10, 10]
    assert r.segments is None or not len(r.segments["job"])


# ----------------------------------------------------------------------------- admission
def test_admission_k_checks_k_times_the_budget_none_admits_everything():
    # 2 nodes, cap 100 W, two jobs of 150 W (100 s) at 0, F = 0. admission = none: both
    # start at 0. admission = 2 (BF at 200 W, predicted power x level): the first starts
    # (150 <= 200), the second does not (300 > 200).
    # Simple: the first runs on a 100 W budget (level 2/3): BF sees 100 + 150 > 200
    # until the first ends at 100.
    # DynShare: at 5 the first is throttled to a = 50 W (level 1/3); BF, in the same
    # pass, still sees 150 W; at 10 it sees 50 + 150 = 200 <= 200: the second starts.
    jobs = powered([150.0, 150.0], submit=[0, 0], run=[100, 100], units=[1, 1],
                   resources=one_core_units(2))
    for cls, second in ((RaplDynShare, 10), (RaplSimple, 100)):
        free = simulate(nodes(2, 1), jobs, cls(admission="none"),
                        PowerCap.window(100.0)).result
        assert free.start.tolist() == [0, 0]
        held = simulate(nodes(2, 1), jobs, cls(admission=2),
                        PowerCap.window(100.0)).result
        assert held.start.tolist() == [0, second]


def test_budget_excess_is_measured_and_admission_reduces_it():
    # 4 nodes of 1 core, 4 jobs of 100 W x 100 s at 0, F = 0 (ends stay at 100): the
    # uncapped peak is 400 W; the budget is 30 % of it, 120 W.
    # Without admission: all 4 start at 0 (400 W). t = 5: a = 30 per node: every job
    # 0.3 (120 W) until 100. Above the cap on [0, 5) only: 5 % of the window [0, 100),
    # by (400 - 120) / 120 = 233 %.
    # With admission 3 (BF at 360 W): 3 start at 0 (300 W, the 4th would be 400).
    # t = 5: a = 30: levels 0.3 (90 W); BF, in the same pass, still sees them at full
    # power. t = 10: node 3 idle yields to 5, the others get (120 - 5 - 90) / 3 more:
    # 38.33 (115 W); BF now sees 90 W + 100 <= 360 and starts the 4th at full power:
    # 215 W on [10, 15). t = 15: c = [38.33 x 3, 100], a = [38.33 x 3, 5]; nobody down,
    # take (share 30): 38.33 -> 37.5, u = (120 - 117.5) / 4 = 0.625: a = [38.125 x 3,
    # 5.625], each node at its allocation: 120 W until the first three end at 100, then
    # less. The window is [0, 110) (the 4th ends at 110): above the cap on [0, 5) and
    # [10, 15), 10 / 110 of it, by at most (300 - 120) / 120 = 150 %.
    jobs = powered([100.0] * 4, submit=[0] * 4, run=[100] * 4, units=[1] * 4,
                   resources=one_core_units(4))
    cap = PowerCap.window(120.0)
    plain = simulate(nodes(4, 1), jobs, RaplDynShare(admission="none"),
                     cap).result
    facts = power_facts(plain)
    assert facts["cap_time_above_share"] == pytest.approx(0.05)
    assert facts["cap_max_excess"] == pytest.approx(280 / 120)
    held = simulate(nodes(4, 1), jobs, RaplDynShare(), cap).result
    assert held.start.tolist() == [0, 0, 0, 10]
    assert levels(held, 3)[0] == (15, pytest.approx(5.625 / 100))
    facts = power_facts(held)
    assert facts["cap_time_above_share"] == pytest.approx(10 / 110)
    assert facts["cap_max_excess"] == pytest.approx(180 / 120)


# ----------------------------------------------------------------------------- DEC+RAPL
def test_dec_rapl_switches_on_the_arrival_rate_and_keeps_throttled_levels():
    # the sliding window (estimator "window") of 100 s, threshold 0.02 jobs / s (2 jobs
    # in the window). high = FIFO (stands in for dec: it never throttles), low =
    # DynShare without admission, no dead band.
    # 2 nodes of 1 core, cap 100 W, F = 0. J0 (300 W, 200 s) at 0: rate 1/100 < 0.02 ->
    # low starts it. DynShare measures: t = 5: a = [50, 50] -> level 1/6; t = 10: node 1
    # yields to 5, node 0 gets 95 -> 95/300; t = 15: take (share 50): 95 -> 90.5, u =
    # (100 - 95.5) / 2 = 2.25 -> a = [92.75, 7.25] -> 92.75/300; t = 20: 95/300 again,
    # t = 25: 92.75/300. J1 (100 W, 10 s) at 30, J2 (100 W, 10 s) at 31: the rate is
    # 2/100 >= 0.02 from 30 -> high (FIFO) starts J1 on node 1 at 30 and J2 when J1
    # ends at 40. J0 keeps its level 92.75/300 (ours: not restored at the switch) until
    # its end at 200: nothing asks for a pass in between.
    jobs = powered([300.0, 100.0, 100.0], submit=[0, 30, 31], run=[200, 10, 10],
                   units=[1, 1, 1], resources=one_core_units(3))
    disp = DecRapl(high="fifo", low=RaplDynShare(admission="none", deadband=0), window=100,
                   threshold=0.02, estimator="window")
    sim = simulate(nodes(2, 1), jobs, disp, PowerCap.window(100.0))
    r = sim.result
    assert r.start.tolist() == [0, 30, 40] and r.end.tolist() == [200, 40, 50]
    assert levels(r, 0) == [(5, pytest.approx(50 / 300)), (10, pytest.approx(95 / 300)),
                            (15, pytest.approx(92.75 / 300)), (20, pytest.approx(95 / 300)),
                            (25, pytest.approx(92.75 / 300))]
    assert levels(r, 1) == [] and levels(r, 2) == []
    d = sim.dispatcher
    assert d.switches_ == 1 and d.passes_[0] > 0 and d.passes_[1] > 0


def test_dec_rapl_rate_window():
    d = DecRapl(high="fifo", low="fifo", window=60, threshold=0.05, estimator="window")
    d.arrivals_ = deque([0, 10, 59, 60])
    assert d.rate(60) == pytest.approx(3 / 60)  # (0, 60]: 10, 59, 60
    assert d.rate(119) == pytest.approx(1 / 60)  # (59, 119]: 60
    assert d.rate(200) == 0.0


# ----------------------------------------------------------------------------- contract
@pytest.mark.parametrize("disp", [RaplDynShare, RaplSimple, RaplDynShare(admission="none"),
                                  RaplSimple(admission=1.5),
                                  DecRapl(high="fifo", low=DYN, window=50, threshold=0.1,
                                          estimator="window"),
                                  DecRapl(high="dispatchlab.dispatch.cp.dec:DEC", low=DYN)])
def test_conformance(disp):
    check_dispatcher(disp, workloads=3 if isinstance(disp, DecRapl) else 6)


def test_dec_default_components_when_registered():
    # the defaults name the registry's "dec" and "rapl-dynshare" (added by the lead)
    d = DecRapl()
    assert d.get_params()["high"] == "dec" and d.get_params()["low"] == "rapl-dynshare"


@pytest.mark.parametrize("params, field", [
    ({"period": 0}, "period"), ({"period": -5}, "period"), ({"period": 2.5}, "period"),
    ({"rfact": 1.5}, "rfact"), ({"q": -1}, "q"), ({"p_min": 0}, "p_min"),
    ({"admission": 0}, "admission"), ({"admission": "three"}, "admission"),
    ({"deadband": -0.1}, "deadband")])
def test_bad_parameters_are_input_errors(params, field):
    with pytest.raises(InputError) as err:
        make_dispatcher(DYN, **params)
    assert err.value.field == field


def test_two_runs_same_schedule_on_a_throttled_run():
    rng = np.random.default_rng(3)
    n = 60
    jobs = powered(rng.uniform(50, 400, n), submit=np.sort(rng.integers(0, 600, n)),
                   run=rng.integers(1, 400, n), units=rng.integers(1, 4, n),
                   resources=one_core_units(n))
    runs = [simulate(nodes(6, 2), jobs, RaplDynShare(),
                     PowerCap.window(500.0), f=0.5).result for _ in range(2)]
    assert np.array_equal(runs[0].start, runs[1].start)
    assert np.array_equal(runs[0].end, runs[1].end)
    assert (runs[0].start >= jobs["submit"]).all()


def test_fifo_admission_can_be_swapped_in():
    # the admission dispatcher is one method: a subclass may admit with another one
    class FifoAdmit(RaplDynShare):
        def _admission_dispatcher(self):
            return FIFO()

    jobs = powered([300.0], submit=[0], run=[1000], units=[1], resources=one_core_units(1))
    r = simulate(nodes(2, 1), jobs, FifoAdmit(), PowerCap.window(400.0),
                 f=1.0).result
    assert r.end.tolist() == [1002]


# --------------------------------------------------------------- superseded end events
class _SlowDown(FIFO):
    """FIFO that records every pass time and halves job 0's level at t = 10 (waking
    itself there); called at every pass."""

    call_on_empty_queue = True

    def start(self, view) -> None:
        super().start(view)
        self.passes_at: list[int] = []

    def dispatch(self, view):
        self.passes_at.append(view.now)
        out = super().dispatch(view)
        if view.now == 0:
            view.wake_at(10)
        if view.now == 10:
            out.append(SetPower(0, 0.5))
        return out


def test_no_pass_at_a_superseded_end_only():
    # job 0 (100 s) halved at t = 10 with F = 1: 90 s of work left at speed 0.5 ends at
    # 190; its old end event at 100 is superseded and, alone at 100, makes no pass
    # (ours); job 1 (submitted at 150) still gets its pass at 150
    jobs = powered([50.0, 50.0], submit=[0, 150], run=[100, 10], units=[1, 1])
    sim = Simulation(Platform.pooled(2), jobs, _SlowDown(),
                     power_predictor=RealPowerPredictor(), duration_model=Factor(1.0))
    r = sim.run()
    assert r.end.tolist() == [190, 160]
    assert sim.dispatcher.passes_at == [0, 10, 150, 160, 190]
    assert r.passes == 5


def test_planned_end_scaled_exactly_by_level_changes():
    # estimate = run = 1000 s; levels 0.5 (t = 100), 0.25 (t = 300), 1 (t = 700) with
    # F = 1: work 100 + 100 + 100 + 700 -> ends at 1400; the planned end is rescaled
    # the same way at each change (exact), so it equals the end
    class Levels(FIFO):
        def dispatch(self, view):
            out = super().dispatch(view)
            plan = {0: 100, 100: 300, 300: 700}
            if view.now in plan:
                view.wake_at(plan[view.now])
            level = {100: 0.5, 300: 0.25, 700: 1.0}.get(view.now)
            ends.append((view.now, view.first_estimated_end()))
            return out + ([SetPower(0, level)] if level is not None else [])

    ends: list[tuple[int, int | None]] = []
    jobs = powered([50.0], submit=[0], run=[1000], units=[1])
    r = Simulation(Platform.pooled(1), jobs, Levels(), power_predictor=RealPowerPredictor(),
                   duration_model=Factor(1.0)).run()
    assert r.end.tolist() == [1400]
    # planned ends seen at each pass: 1000, then 100 + 900 / 0.5 = 1900, then
    # 300 + 1600 x 0.5 / 0.25 = 3500, seen before each pass's own change; after the
    # last one, 700 + 2800 x 0.25 = 1400 = the end
    assert ends[:4] == [(0, None), (100, 1000), (300, 1900), (700, 3500)]
