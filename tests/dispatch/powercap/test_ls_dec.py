"""LS and DEC, the scheduling-based power cappers of seed 004 (sections 4.2-4.3), with
the ``energy-consolidate`` allocator and the power dimension of the proactive plan.

Hand-computed instances: estimates = run times (requested = run) unless stated; power
from the job table (``power_mean``/``power_max``/``power_std``) through the ``real``
power predictor, so predicted = real power."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.allocators import EnergyConsolidate, make_allocator
from dispatchlab.dispatch.cp.dec import DEC, model_power
from dispatchlab.dispatch.cp.hcp import ewt_weights
from dispatchlab.dispatch.powercap.ls import LS
from dispatchlab.dispatch.prb import PRB, PowerProfile
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.platform.platform import NodeType
from dispatchlab.power import PowerCap
from dispatchlab.predict.power.predictors import make_power_predictor
from dispatchlab.sim.result import STATUS_REJECTED
from dispatchlab.testing import check_dispatcher
from strategies import workloads


def table(submit, run_s, units, watts, queue=None, resources=None, requested=None):
    extra = {} if queue is None else {"queue": queue}
    jobs = JobTable.from_arrays(submit=submit, run=run_s, units=units, resources=resources,
                                requested_time=requested, **extra)
    w = np.asarray(watts, dtype=np.float64)
    jobs.columns.update(power_mean=w, power_max=w.copy(), power_std=np.zeros(len(w)))
    return jobs


def simulate_with(platform, jobs, dispatcher, cap):
    """The result and the dispatcher that ran (the simulation runs a copy)."""
    sim = Simulation(platform, jobs, dispatcher, power_predictor=make_power_predictor("real"),
                     cap=None if cap is None else PowerCap.window(float(cap)))
    return sim.run(), sim.dispatcher


def simulate(platform, jobs, dispatcher, cap):
    return simulate_with(platform, jobs, dispatcher, cap)[0]


# ------------------------------------------------------- LS and DEC choose differently
# Pool of 4 cores, cap 1,000 W, all 1-core jobs submitted at 0 (wait 0):
#   H: queue 1 (EWT 150 s), 800 W, 100 s;  A, B: queue 2 (EWT 200 s), 500 W, 100 s.
# LS (ewt order): H first (smallest EWT): 800 <= 1000 -> starts at 0; A: 800 + 500 >
# 1000 skip; B skip. At 100 H ends: A: 500, B: 1000 <= 1000 -> both start at 100.
# DEC: weights floor(max_ewt 1e5 / ewt) = H 200*1e5/150 = 133,333; A, B 100,000.
#   LS's plan (H 0, A 100, B 100): 100,000 x 100 x 2 = 20,000,000.
#   A, B at 0 (1000 W), H at 100:  133,333 x 100   = 13,333,300 (the optimum: H can
#   share the cap with neither A nor B, so one side waits 100 s) -> A, B at 0, H at 100.
CHOICE = dict(submit=[0, 0, 0], run_s=[100, 100, 100], units=[1, 1, 1],
              watts=[800, 500, 500], queue=[1, 2, 2])
CHOICE_PLATFORM = Platform.pooled(4).with_queues({"1": 150, "2": 200})


def test_ls_and_dec_pick_different_job_sets_under_a_cap():
    jobs = table(**CHOICE)
    ls = simulate(CHOICE_PLATFORM, jobs, LS(), 1000)
    assert ls.start.tolist() == [0, 100, 100]
    r, dec = simulate_with(CHOICE_PLATFORM, jobs, DEC(), 1000)
    assert r.start.tolist() == [100, 0, 0]
    first = dec.pass_log_[0]
    assert first["prb_objective"] == 20_000_000
    assert first["objective"] == 13_333_300
    assert first["improved_on_prb"] is True
    facts = dec.run_facts()
    assert facts["cp_passes"] >= 1 and facts["cp_improved_share"] > 0


def test_without_a_cap_the_same_instance_starts_everything():
    # no cap: 3 cores of 4 -> all three start at 0 with both dispatchers
    jobs = table(**CHOICE)
    assert simulate(CHOICE_PLATFORM, jobs, LS(), None).start.tolist() == [0, 0, 0]
    assert simulate(CHOICE_PLATFORM, jobs, DEC(), None).start.tolist() == [0, 0, 0]


def test_margin_tightens_the_budget():
    # margin 0.9: budget 900 W. LS: H (800) at 0; A, B (500 each) cannot run together
    # (1000 > 900): A at 100 (ewt tie -> demand tie -> submit tie -> row: A first), then
    # B when A ends at 200.
    jobs = table(**CHOICE)
    r = simulate(CHOICE_PLATFORM, jobs, LS(margin=0.9), 1000)
    assert r.start.tolist() == [0, 100, 200]


# ---------------------------------------------------------- the proactive plan (LS)
class Capture(LS):
    """LS that records its proactive plan (absolute starts) at its first pass."""

    def dispatch(self, view):
        if not hasattr(self, "plans_"):
            self.plans_ = []
        if not self.plans_:
            self.plans_.append((view.queue.jobs.tolist(), self.plan(view).starts.tolist()))
        return super().dispatch(view)


def test_plan_releases_power_at_planned_ends():
    # Pool 4 cores, cap 1,000 W, 1-core jobs at 0: H (queue 1, EWT 100, 700 W, 100 s),
    # A (queue 2, EWT 200, 300 W, 30 s), B (queue 2, 700 W, 50 s).
    # ewt order: H, then A before B (same EWT, demand 30 < 50).
    # t = 0: H 700 ok; A 700 + 300 = 1000 ok; B 1000 + 700 > 1000 skip.
    # t = 30 (A's planned end releases 300 W): B 700 + 700 > 1000 skip.
    # t = 100 (H's end): B 700 <= 1000 -> B at 100.
    plat = Platform.pooled(4).with_queues({"1": 100, "2": 200})
    jobs = table([0, 0, 0], [100, 30, 50], [1, 1, 1], [700, 300, 700], queue=[1, 2, 2])
    r, cap = simulate_with(plat, jobs, Capture(), 1000)
    assert cap.plans_[0] == ([0, 1, 2], [0, 0, 100])
    assert r.start.tolist() == [0, 0, 100]


def test_plan_releases_running_power_at_estimated_ends():
    # Pool 4 cores, cap 1,000 W, one queue. R (600 W, 100 s) at 0 starts alone. At 10:
    # X (500 W, 20 s) and Y (400 W, 50 s): X first (demand 20 < 50).
    # Plan at 10: X 600 + 500 > 1000 skip; Y 600 + 400 = 1000 -> Y at 10. t = 60 (Y's
    # planned end): X 600 + 500 > 1000 skip. t = 100 (R's estimated end): X at 100.
    jobs = table([0, 10, 10], [100, 20, 50], [1, 1, 1], [600, 500, 400])

    class AtTen(LS):
        def dispatch(self, view):
            if view.now == 10:
                self.seen_ = (view.queue.jobs.tolist(), self.plan(view).starts.tolist())
            return super().dispatch(view)

    r, at10 = simulate_with(Platform.pooled(4), jobs, AtTen(), 1000)
    assert at10.seen_ == ([1, 2], [100, 10])
    assert r.start.tolist() == [0, 100, 10]


def test_power_profile_steps():
    # running powers 300 (end 10), 200 (end 10), 100 (end 20) at now 0: 600 until 10,
    # 100 until 20, exactly 0 after; reserving 50 W on [5, 15) splits the steps
    prof = PowerProfile(0, np.array([10, 10, 20]), np.array([300.0, 200.0, 100.0]))
    assert (prof.times, prof.used) == ([0, 10, 20], [600.0, 100.0, 0.0])
    prof.reserve(5, 10, 50.0)
    assert (prof.times, prof.used) == ([0, 5, 10, 15, 20], [600.0, 650.0, 150.0, 100.0, 0.0])
    assert prof.max_over(12, 100) == 150.0 and prof.max_over(0, 5) == 600.0


# --------------------------------------------------------- energy-efficient nodes first
def two_types(first_rank: int, second_rank: int) -> Platform:
    # nodes 0-1 type "fast", nodes 2-3 type "eff", 2 cores and 4 memory units each
    # (memory makes the platform node-level: placement is simulated)
    return Platform((NodeType("fast", 2, {"core": 2, "mem": 4}, max_power=400.0,
                              efficiency_rank=first_rank),
                     NodeType("eff", 2, {"core": 2, "mem": 4}, max_power=400.0,
                              efficiency_rank=second_rank)), name="two")


def with_mem(n):
    return {"core": [1] * n, "mem": [1] * n}


def nodes_of(result):
    return {row: a.nodes.tolist() for row, a in result.allocations.items()}


def test_ls_puts_jobs_on_energy_efficient_nodes_first():
    # five 1-core jobs at 0, 1, 2, 3, 4 (each runs 100 s), no cap binding (cap 10 kW).
    # energy-consolidate: rank 0 nodes (2, 3) first, then fewer free resources, ties
    # by id: job 0 -> node 2 (2 and 3 tie, id); job 1 -> node 2 (fewer free); job 2 ->
    # node 3 (node 2 full); job 3 -> node 3; job 4 -> node 0 (rank 1; 0 and 1 tie, id).
    jobs = table([0, 1, 2, 3, 4], [100] * 5, [1] * 5, [10] * 5, resources=with_mem(5))
    r = simulate(two_types(1, 0), jobs, LS(), 10_000)
    assert nodes_of(r) == {0: [2], 1: [2], 2: [3], 3: [3], 4: [0]}
    # plain consolidate (PRB) ignores efficiency: nodes 0, 0, 1, 1, 2
    plain = {0: [0], 1: [0], 2: [1], 3: [1], 4: [2]}
    assert nodes_of(simulate(two_types(1, 0), jobs, PRB(order="ewt"), 10_000)) == plain
    # equal ranks: energy-consolidate places exactly as consolidate
    assert nodes_of(simulate(two_types(0, 0), jobs, LS(), 10_000)) == plain


def test_eurora_marks_the_mic_nodes_efficient():
    ranks = eurora_platform().efficiency_ranks()
    assert ranks.tolist() == [0] * 32 + [1] * 32
    # G (1 GPU + 1 core per unit) must go to a GPU node: node 32 (ties by id). C (1
    # core) at 1: consolidate prefers node 32 (fewer free resources); energy-consolidate
    # a 2.1 GHz MIC node first: node 0.
    plat = eurora_platform()
    jobs = table([0, 1], [100, 100], [1, 1], [50, 50],
                 resources={"core": [1, 1], "gpu": [1, 0], "mic": [0, 0], "mem": [1, 1]})
    r = simulate(plat, jobs, LS(), 25_600)
    assert nodes_of(r) == {0: [32], 1: [0]}
    r = simulate(plat, jobs, LS(allocator="consolidate"), 25_600)
    assert nodes_of(r) == {0: [32], 1: [32]}


def test_energy_consolidate_needs_the_platform():
    alloc = make_allocator("energy-consolidate")
    assert isinstance(alloc, EnergyConsolidate)
    cap = np.array([[2], [2]])
    alloc.start(cap)
    with pytest.raises(InputError, match="use_platform"):
        alloc.allocate(np.array([1]), 1, cap.copy())


# ----------------------------------------------------------------------- the cap kept
def test_ls_never_starts_a_job_over_the_budget_and_rejects_never_fitting_jobs():
    # cap 1,000 W forever: J0 1,200 W can never start -> rejected; J1 (400 W) and J2
    # (700 W) cannot run together: J1 at 0 (fifo-like: same EWT, demand 10 < 20), J2 at 10.
    jobs = table([0, 0, 0], [5, 10, 20], [1, 1, 1], [1200, 400, 700])
    for disp in (LS(), DEC()):
        r = simulate(Platform.pooled(4), jobs, disp, 1000)
        assert r.status[0] == STATUS_REJECTED
        assert r.start.tolist()[1:] == [0, 10]


def test_cap_window_ends_and_the_waiting_job_starts():
    # cap 1,000 W on [0, 50): J0 (1,200 W) waits (not rejected: uncapped time ahead) and
    # starts at 50 when the cap ends (a cap step triggers a pass)
    jobs = table([0], [5], [1], [1200])
    for disp in (LS(), DEC()):
        r = Simulation(Platform.pooled(4), jobs, disp,
                       power_predictor=make_power_predictor("real"),
                       cap=PowerCap.window(1000.0, 0, 50)).run()
        assert r.start.tolist() == [50]


def test_model_power_rounding_and_overload():
    # running (by estimated end) 299.2, 500, 400 W -> ceil 300, 500, 400 = 1,200 W over a
    # capacity floor(1000.5) = 1,000: the excess 200 W comes off the earliest end first
    # -> 100, 500, 400 (so the model sees min(running power, capacity) at every time);
    # candidates 999.2 -> 1000, 1200.1 -> 1201 capped at the capacity 1000
    mp = model_power(np.array([299.2, 500.0, 400.0]), np.array([999.2, 1200.1]), 1000.5)
    assert mp.capacity == 1000
    assert mp.running.tolist() == [100, 500, 400]
    assert mp.candidates.tolist() == [1000, 1000]


# ------------------------------------------------------------- DEC vs brute force
def brute_force(dur, cores, watts, weights, capacity, budget) -> int:
    """The relaxed model's optimum by enumeration: starts in [0, H], H = sum of
    durations; cores and integer watts as cumulatives; objective sum w_i s_i."""
    n = len(dur)
    horizon = sum(dur)
    best = None
    for starts in itertools.product(range(horizon + 1), repeat=n):
        obj = sum(w * s for w, s in zip(weights, starts, strict=True))
        if best is not None and obj >= best:
            continue
        ok = True
        for t in range(horizon + max(dur)):
            on = [i for i in range(n) if starts[i] <= t < starts[i] + dur[i]]
            if sum(cores[i] for i in on) > capacity or sum(watts[i] for i in on) > budget:
                ok = False
                break
        if ok:
            best = obj
    return best


@pytest.mark.parametrize("seed", range(6))
def test_dec_objective_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 5))
    dur = rng.integers(1, 4, n).tolist() if n == 4 else rng.integers(1, 5, n).tolist()
    cores = rng.integers(1, 4, n).tolist()
    watts = rng.choice([100, 200, 300, 400, 500], n).tolist()
    queue = rng.integers(1, 4, n).tolist()
    ewts = {"1": 100, "2": 300, "3": 700}
    plat = Platform.pooled(4).with_queues(ewts)
    budget = 600
    jobs = table([0] * n, dur, cores, watts, queue=queue)
    _, dec = simulate_with(plat, jobs, DEC(time_limit=5.0, max_time_limit=5.0), budget)
    first = dec.pass_log_[0]
    if first["rounds"] == 0:
        pytest.skip(f"no solver pass ({first['status']})")
    w = ewt_weights(np.array([ewts[str(q)] for q in queue])).tolist()
    assert first["status"] == "OPTIMAL"
    assert first["objective"] == brute_force(dur, cores, watts, w, 4, budget)


# ---------------------------------------------------------------------- uncapped = PRB
def test_without_a_cap_ls_is_prb_with_its_order_and_allocator():
    rng = np.random.default_rng(3)
    n = 300
    submit = np.sort(rng.integers(0, 5_000, n))
    run_s = rng.integers(1, 500, n)
    units = rng.integers(1, 9, n)
    queue = rng.integers(1, 3, n)
    for plat, res in ((Platform.pooled(16), None), (two_types(1, 0), with_mem(n))):
        jobs = table(submit, run_s, np.minimum(units, 2 if res else 16), 50.0 * units,
                     queue=queue, requested=run_s + 100, resources=res)
        plat = plat.with_queues({"1": 100, "2": 900})
        a = Simulation(plat, jobs, LS()).run()
        b = Simulation(plat, jobs, PRB(order="ewt", allocator="energy-consolidate")).run()
        assert np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)
        # a cap that never binds changes nothing either
        c = simulate(plat, jobs, LS(), 1e9)
        assert np.array_equal(a.start, c.start)


def test_bad_parameters():
    for bad in (LS(margin=0), LS(margin=1.5), LS(margin="x"), DEC(margin=0.0),
                DEC(order="nope"), LS(allocator="nope"), DEC(conflicts=0),
                DEC(conflicts=2.5), DEC(presolve="no")):
        with pytest.raises(InputError):
            simulate(Platform.pooled(4), table([0], [1], [1], [1]), bad, 100)
    with pytest.raises(InputError, match="power predictor"):
        Simulation(Platform.pooled(4), table([0], [1], [1], [1]), LS(),
                   cap=PowerCap.window(100.0)).run()


# ---------------------------------------------------------------------- conformance
@pytest.mark.parametrize("disp", [LS, DEC, LS(margin=0.9, order="urgency")])
def test_check_dispatcher(disp):
    assert check_dispatcher(disp, workloads=3)["jobs"] > 0


# ------------------------------------------------------------------------ properties
EXAMPLES = int(os.environ.get("DISPATCHLAB_PROPERTY_EXAMPLES", "40"))


@st.composite
def power_cases(draw):
    """A contending workload with power, a permanent cap and a pooled or 2-core-node
    platform (node types of ranks 1 then 0)."""
    w = draw(workloads(min_jobs=5, max_jobs=18, min_capacity=4, max_capacity=8))
    watts = [draw(st.sampled_from([0.0, 10.0, 50.5, 120.0, 200.25, 350.0])) * max(1, u // 2)
             for u in w.units]
    positive = sorted(p for p in watts if p > 0) or [100.0]
    low = max(1, int(positive[len(positive) // 2]))
    cap = draw(st.integers(low, max(low + 1, int(sum(sorted(watts)[-3:])))))
    node_level = draw(st.booleans())
    margin = draw(st.sampled_from([1.0, 0.95]))
    return w, watts, cap, node_level, margin


def run_case(case, dispatcher):
    w, watts, cap, node_level, _ = case
    jobs = table(list(w.submit), list(w.run), list(w.units), watts,
                 requested=list(w.requested_time),
                 resources=with_mem(w.n) if node_level else None)
    if node_level:
        # 2-core nodes (memory 4: node-level), first type rank 1, second rank 0
        half = (w.capacity + 1) // 2
        plat = Platform((NodeType("fast", (half + 1) // 2, {"core": 2, "mem": 4},
                                  max_power=400.0, efficiency_rank=1),
                         NodeType("eff", max(1, half - (half + 1) // 2),
                                  {"core": 2, "mem": 4}, max_power=400.0)), name="n")
    else:
        plat = Platform.pooled(w.capacity)
    return plat, simulate(plat, jobs, dispatcher, cap)


def check_run(case, plat, r):
    w, watts, cap, _, margin = case
    submit = np.array(w.submit)
    units = np.array(w.units)
    power = np.array(watts)
    ran = r.start >= 0
    assert (r.start[ran] >= submit[ran]).all(), "a job started before its submission"
    capacity = plat.total_capacity()["core"]
    for t in np.unique(r.start[ran]).tolist():
        on = ran & (r.start <= t) & (r.end > t)  # a 0-second job draws nothing
        assert units[on].sum() <= capacity, f"capacity exceeded at {t}"
        assert power[on].sum() <= margin * cap * (1 + 1e-12), f"budget exceeded at {t}"
    for j in np.flatnonzero(r.status == STATUS_REJECTED).tolist():
        assert units[j] > capacity or watts[j] > margin * cap


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=power_cases())
def test_ls_properties(case):
    margin = case[4]
    plat, a = run_case(case, LS(margin=margin))
    check_run(case, plat, a)
    _, b = run_case(case, LS(margin=margin))
    assert np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)


@settings(max_examples=max(5, EXAMPLES // 3), deadline=None)
@given(case=power_cases())
def test_dec_properties(case):
    margin = case[4]
    plat, a = run_case(case, DEC(margin=margin, time_limit=0.02, max_time_limit=0.08))
    check_run(case, plat, a)


def test_solver_budget_reaches_cp_sat():
    """``conflicts`` and ``presolve`` are CP-SAT's parameters of every solve; without
    them the budget is 2,000 conflicts per deterministic second (at least 100)."""
    from dispatchlab.dispatch.cp.common import solver_parameters

    p = solver_parameters(0.1, "deterministic", 0, conflicts=7, presolve=False).parameters
    assert (p.max_number_of_conflicts, p.cp_model_presolve) == (7, False)
    p = solver_parameters(0.1).parameters
    assert (p.max_number_of_conflicts, p.cp_model_presolve) == (200, True)
    assert solver_parameters(0.01).parameters.max_number_of_conflicts == 100
    params = DEC(conflicts=1, presolve=False).get_params()
    assert (params["conflicts"], params["presolve"]) == (1, False)


@settings(max_examples=max(5, EXAMPLES // 3), deadline=None)
@given(case=power_cases())
def test_dec_with_the_smallest_solver_budget(case):
    """One conflict and no presolve: the schedule still keeps the cap and the capacity,
    and two runs are identical."""
    margin = case[4]
    plat, a = run_case(case, DEC(margin=margin, conflicts=1, presolve=False))
    check_run(case, plat, a)
    _, b = run_case(case, DEC(margin=margin, conflicts=1, presolve=False))
    assert np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)
