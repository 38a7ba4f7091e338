"""The hybrid CP dispatchers ``hcp`` (CPH/DEC without power) and ``hcp-online`` (HCP').

Hand-computed schedules (the reasoning is in the comments), the shared CP machinery
(:mod:`dispatchlab.dispatch.cp.common`), the solver's answer against a brute-force
optimum of the relaxed model, and hypothesis property tests (capacity per node, no
start before submission, determinism). Every solver limit here is deterministic time,
so the tests are reproducible on any machine.
"""

from __future__ import annotations

import dataclasses
import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.cp.common import (
    DispatchSkip,
    TimeControl,
    add_slowdown_objective,
    fit_now_mask,
    improvement_share,
    next_queue_length,
    pass_facts,
    slowdown_digits,
    slowdown_objective_value,
    solver_parameters,
)
from dispatchlab.dispatch.cp.dec import DEC
from dispatchlab.dispatch.cp.hcp import HCP, HCPOnline, ewt_weights
from dispatchlab.platform import Platform
from dispatchlab.platform.platform import NodeType
from dispatchlab.sim.engine import Simulation
from dispatchlab.sim.result import STATUS_REJECTED
from dispatchlab.workload.jobs import JobTable

FAST = {"time_limit": 0.2, "max_time_limit": 0.4}


def run(platform: Platform, jobs: JobTable, disp):
    """Simulate; returns the result and the engine's (started) copy of ``disp``."""
    sim = Simulation(platform, jobs, disp)
    return sim.run(), sim.dispatcher


def share_report(disp) -> float:
    """Every run reports the share of solver passes where CP improved on PRB."""
    share = disp.improvement_share()
    assert 0.0 <= share <= 1.0
    print(f"{disp.name}: CP improved on PRB in {share:.0%} of solver passes")
    return share


# --- the two-job example -----------------------------------------------------------
def two_jobs(node_level: bool) -> tuple[Platform, JobTable]:
    """One node of 2 cores; A (1 core, 100 s) and B (2 cores, 60 s) submitted at 0.

    ``node_level``: B is 1 unit of 2 cores (node-level mode); else 2 units of 1 core
    (counting mode)."""
    platform = Platform.homogeneous(1, 2)
    if node_level:
        jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 60], units=[1, 1],
                                    resources={"core": [1, 2]})
    else:
        jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 60], units=[1, 2])
    return platform, jobs


@pytest.mark.parametrize("node_level", [False, True])
def test_hcp_starts_the_wide_job_first(node_level: bool) -> None:
    # Same queue, so equal weights w = 10**5. Plans: A at 0, B at 100 (B needs both
    # cores): total wait 100. B at 0, A at 60: total wait 60 (the optimum). PRB-urgency:
    # equal urgency (0 + 1) / 1800, tie by demand A = 100 x 1/2 = 50 < B = 60 x 2/2 = 60,
    # so PRB plans A at 0 and B at 100. CP finds 60 * 10**5 < 100 * 10**5 and is used:
    # B starts at 0, A at 60 (the pass at B's end).
    platform, jobs = two_jobs(node_level)
    disp = HCP(**FAST)
    res, disp = run(platform, jobs, disp)
    assert res.start.tolist() == [60, 0]
    first = disp.pass_log_[0]
    assert first["now"] == 0
    assert first["objective"] == 60 * 10**5
    assert first["prb_objective"] == 100 * 10**5
    assert first["improved_on_prb"] and first["solved"]
    assert first["modelled"] == 2
    assert share_report(disp) > 0


@pytest.mark.parametrize("node_level", [False, True])
def test_hcp_online_slowdown_objective(node_level: bool) -> None:
    # Slowdown priority: both slowdowns are 1, tie by demand -> A first. Both fit the
    # empty node now, so both are modelled. H = 100 + 60 = 160 -> d = 5 digits.
    # A first: A (0 + 100)/100 = 1, B (100 + 60)/60 = 2.67 -> 100000 + 266666 = 366666.
    # B first: B 1, A (60 + 100)/100 = 1.6 -> 100000 + 160000 = 260000 (the optimum).
    platform, jobs = two_jobs(node_level)
    disp = HCPOnline(**FAST)
    res, disp = run(platform, jobs, disp)
    assert res.start.tolist() == [60, 0]
    first = disp.pass_log_[0]
    assert first["objective"] == 260000
    assert first["prb_objective"] == 366666
    assert first["improved_on_prb"] and first["solved"]
    assert disp.cur_q_length_ == 100
    share_report(disp)


# --- stage 2: a relaxed plan that does not map on the nodes ------------------------
def test_stage2_postpones_and_feedback_replans() -> None:
    # Two nodes of 3 cores. R1, R2 (1 unit x 2 cores, 1000 s) start at 0: consolidate
    # puts R1 on node 0 (equal shares, lowest index) and R2 on node 1 (node 0 has 1 core
    # left). At t = 10, X (1 unit x 2 cores, 50 s) and Y (1 unit x 1 core, 500 s) arrive:
    # 2 cores are free in total but 1 per node, so X fits the relaxed model, not a node.
    # Stage 1: X at 0, Y at 50 (total wait 50) beats PRB's plan (Y now, X at 1000 when R1
    # and R2 end: 990). Stage 2: X does not map -> postponed. Feedback: X >= the first
    # release in the plan (990, R1/R2's end) -> re-solve: Y at 0, X at 990; Y maps and
    # starts at 10; X starts at 1000.
    platform = Platform.homogeneous(2, 3)
    jobs = JobTable.from_arrays(submit=[0, 0, 10, 10], run=[1000, 1000, 50, 500],
                                units=[1, 1, 1, 1], resources={"core": [2, 2, 2, 1]})
    disp = HCP(feedback_rounds=3, **FAST)
    res, disp = run(platform, jobs, disp)
    assert res.start.tolist() == [0, 0, 1000, 10]
    assert res.allocations[0].nodes.tolist() == [0]
    assert res.allocations[1].nodes.tolist() == [1]
    at10 = next(p for p in disp.pass_log_ if p["now"] == 10)
    assert at10["objective"] == 50 * 10**5
    assert at10["prb_objective"] == 990 * 10**5
    assert at10["improved_on_prb"]
    assert at10["rounds"] >= 2  # the first solve and one feedback re-solve
    # without feedback (the default, as the authors run CPH), X is postponed and Y
    # (planned at 50) waits too: at t = 10 only the first solve is made
    disp0 = HCP(**FAST)
    res0, disp0 = run(platform, jobs, disp0)
    assert res0.start[3] > 10
    assert next(p for p in disp0.pass_log_ if p["now"] == 10)["rounds"] == 1
    # DEC keeps its own default of 3 feedback rounds (ours)
    assert DEC().feedback_rounds == 3


def test_hcp_model_order_urgency_picks_the_urgent_job() -> None:
    # One core; at t = 0 job 0 (queue "0", EWT 3600) and job 1 (queue "1", EWT 1800),
    # 100 s each. q_length = 1: in queue order only job 0 is modelled and starts; in
    # urgency order job 1 ((0 + 1)/1800 > (0 + 1)/3600) is modelled and starts.
    platform = dataclasses.replace(Platform.pooled(1), queues={"0": 3600, "1": 1800})
    jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 100], units=[1, 1], queue=[0, 1])
    res, _ = run(platform, jobs, HCP(q_length=1, **FAST))
    assert res.start.tolist() == [0, 100]
    res, disp = run(platform, jobs, HCP(q_length=1, model_order="urgency", **FAST))
    assert res.start.tolist() == [100, 0]
    assert disp.pass_log_[0]["modelled"] == 1


def test_wall_time_mode_runs() -> None:
    # wall-clock limits are not reproducible in general; this instance is solved to
    # optimality at once, so the answer is the hand-computed one
    platform, jobs = two_jobs(node_level=False)
    res, disp = run(platform, jobs, HCP(time_mode="wall", time_limit=0.5, max_time_limit=1))
    assert res.start.tolist() == [60, 0]
    assert disp.pass_log_[0]["status"] == "OPTIMAL"


# --- the PRB fallback ---------------------------------------------------------------
def test_prb_fallback_when_prb_is_optimal() -> None:
    # Two identical 2-core jobs of 100 s on 3 cores, both submitted at 0: one must wait
    # 100 s whatever the order, so PRB's plan (A at 0, B at 100; objective w x 100) is
    # optimal and the solver cannot beat it strictly -> PRB's plan is used.
    platform = Platform.pooled(3)
    jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 100], units=[2, 2])
    disp = HCP(**FAST)
    res, disp = run(platform, jobs, disp)
    assert res.start.tolist() == [0, 100]
    first = disp.pass_log_[0]
    assert first["prb_objective"] == 100 * 10**5 and first["objective"] == 100 * 10**5
    assert not first["improved_on_prb"]
    assert share_report(disp) == 0.0


def test_jobs_that_all_fit_now_start_without_a_solve() -> None:
    # Two 1-core jobs on 2 cores: both start at 0, the optimum of any objective that
    # grows with the starts; the solver is skipped (status ALL_FIT, 0 rounds).
    platform = Platform.pooled(2)
    jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 60], units=[1, 1])
    for disp in (HCP(**FAST), HCPOnline(**FAST)):
        res, disp = run(platform, jobs, disp)
        assert res.start.tolist() == [0, 0]
        assert disp.pass_log_[0]["status"] == "ALL_FIT"
        assert disp.pass_log_[0]["rounds"] == 0


# --- the fit-now filter ---------------------------------------------------------------
def test_fit_now_mask_node_level() -> None:
    # nodes' free (core, gpu): node 0 (3, 0), node 1 (1, 1), node 2 (2, 1).
    free = np.array([[3, 0], [1, 1], [2, 1]])
    requests = np.array([
        [1, 0],  # 1 core: 3 + 1 + 2 = 6 units fit
        [2, 0],  # 2 cores: 1 + 0 + 1 = 2 units fit
        [1, 1],  # 1 core + 1 gpu: 0 + 1 + 1 = 2 units fit
        [3, 0],  # 3 cores: node 0 only -> 1 unit
        [0, 0],  # nothing requested: always fits
    ])
    view = SimpleNamespace(counting=False, free=free, requests=requests)
    rows = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4])
    units = np.array([6, 7, 2, 3, 2, 3, 1, 2, 1000])
    assert fit_now_mask(view, rows, units).tolist() == [
        True, False, True, False, True, False, True, False, True]
    # the summed free cores (6) would admit a 1 x 3-core job twice; no node can
    assert not fit_now_mask(view, np.array([3]), np.array([2]))[0]


def test_fit_now_mask_counting() -> None:
    view = SimpleNamespace(counting=True, free_cores=5)
    assert fit_now_mask(view, np.array([0, 1, 2]), np.array([5, 6, 1])).tolist() == [
        True, False, True]


def test_hcp_online_models_only_jobs_that_fit_now() -> None:
    # 4 cores; R (3 cores, 100 s) starts at 0. At t = 5: W (2 cores, 10 s) and N (1 core,
    # 10 s) arrive; 1 core is free, so only N passes the filter and is modelled (1 job);
    # it starts at 5. W starts at 100 when R ends.
    platform = Platform.pooled(4)
    jobs = JobTable.from_arrays(submit=[0, 5, 5], run=[100, 10, 10], units=[3, 2, 1])
    disp = HCPOnline(**FAST)
    res, disp = run(platform, jobs, disp)
    assert res.start.tolist() == [0, 100, 5]
    at5 = next(p for p in disp.pass_log_ if p["now"] == 5)
    assert at5["modelled"] == 1


# --- queue-length halving and the dispatch skip -----------------------------------------
def test_q_length_halving_on_unsolved_passes() -> None:
    # A deterministic limit of 1e-9 leaves CP-SAT no time to find anything: every
    # solver pass is unsolved and the queue length halves (min 1). Five 2-core jobs of
    # 10 s, all submitted at 0, on 3 cores: each fits alone, no two together.
    # t=0: idle, all 5 fit now -> 5 modelled, unsolved; the system is idle so PRB's
    #      start-now job (job 0) starts (ours: no later event would come); q 8 -> 4.
    # t=10: job 0 ended, 4 wait, 4 modelled, unsolved, job 1 starts; q -> 2.
    # t=20: 3 wait, 2 modelled, unsolved, job 2 starts; q -> 1.
    # t=30: 1 modelled: it fits now alone, "start now" is optimal without a solve
    #      (ALL_FIT, a solved pass): job 3 starts and q is reset to 8; t=40 the same.
    disp = HCPOnline(q_length=8, time_limit=1e-9, max_time_limit=1e-9)
    platform = Platform.pooled(3)
    jobs = JobTable.from_arrays(submit=[0] * 5, run=[10] * 5, units=[2] * 5)
    res, disp = run(platform, jobs, disp)
    solved = [p for p in disp.pass_log_ if p["rounds"] > 0]
    assert solved and not any(p["solved"] for p in solved)
    assert all(p["objective"] is None for p in solved)
    assert [p["modelled"] for p in solved] == [5, 4, 2]
    assert [p["status"] for p in disp.pass_log_ if p["now"] >= 30] == ["ALL_FIT", "ALL_FIT"]
    assert disp.cur_q_length_ == 8
    assert res.start.tolist() == [0, 10, 20, 30, 40]
    assert next_queue_length(1, 100, False) == 1
    assert next_queue_length(6, 100, False) == 3
    assert next_queue_length(3, 100, True) == 100


def test_dispatch_skip_rule() -> None:
    skip = DispatchSkip()
    quiet = SimpleNamespace(changed=SimpleNamespace(submitted=()))
    busy = np.array([4, 1])
    assert not skip.should_skip(quiet, busy)  # nothing recorded yet
    skip.record(busy, dispatched=0)
    assert skip.should_skip(quiet, busy)  # same usage, no new job
    assert skip.should_skip(quiet, np.array([5, 1]))  # more usage
    new_job = SimpleNamespace(changed=SimpleNamespace(submitted=(7,)))
    assert not skip.should_skip(new_job, busy)  # a submission forgets the state
    skip.record(busy, dispatched=0)
    assert not skip.should_skip(quiet, np.array([3, 1]))  # fewer cores in use
    skip.record(busy, dispatched=0)
    assert not skip.should_skip(quiet, np.array([0, 0]))  # empty system
    skip.record(busy, dispatched=2)
    assert not skip.should_skip(quiet, busy)  # the last pass dispatched


# --- the shared machinery ------------------------------------------------------------
def test_solver_parameters_and_time_control() -> None:
    solver = solver_parameters(0.5, "deterministic", 7)
    assert solver.parameters.num_workers == 1
    assert solver.parameters.random_seed == 7
    assert solver.parameters.max_deterministic_time == 0.5
    wall = solver_parameters(2.0, "wall", 0)
    assert wall.parameters.max_time_in_seconds == 2.0
    assert TimeControl(1.0, 16.0).limits() == [1, 2, 4, 8, 16]
    assert TimeControl(1.0, 150.0, stop="first").limits()[-1] == 128
    with pytest.raises(InputError, match="time_mode"):
        solver_parameters(1.0, "fast")
    for bad in ({"time_limit": 0}, {"time_limit": -1.0}, {"max_time_limit": 0.5},
                {"time_mode": "cpu"}, {"seed": -1}, {"max_k": 0}):
        with pytest.raises(InputError):
            TimeControl(**{"time_limit": 1.0, "max_time_limit": 2.0, **bad})


def test_time_control_proves_small_optimum() -> None:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x = model.new_int_var(0, 10, "x")
    y = model.new_int_var(0, 10, "y")
    model.add(x + y >= 7)
    model.minimize(3 * x + 2 * y)
    out = TimeControl(0.5, 1.0).solve(model, [x, y], hint=[7, 0])
    assert out.status == "OPTIMAL" and out.solved and not out.hit_limit
    assert out.values == (0, 7) and out.objective == 14 and out.rounds == 1


def test_slowdown_objective_exact_floor() -> None:
    from ortools.sat.python import cp_model

    # three jobs: (wait, est) = (5, 7), (0, 0), (30, 3); starts fixed by constraints
    wait, est = [5, 0, 30], [7, 0, 3]
    for fixed in ([0, 0, 0], [3, 9, 1], [11, 0, 4]):
        model = cp_model.CpModel()
        starts = [model.new_int_var(0, 20, f"s{k}") for k in range(3)]
        for s, v in zip(starts, fixed, strict=True):
            model.add(s == v)
        d = slowdown_digits(20, wait, est)
        obj = add_slowdown_objective(model, starts, wait, est, 20, d)
        solver = solver_parameters(1.0)
        assert solver.solve(model) == cp_model.OPTIMAL
        assert solver.value(obj) == slowdown_objective_value(fixed, wait, est, d)
    # by hand, d = 5: (0 + 5 + 7) * 1e5 // 7 = 171428; max(1, 0) * 1e5; 33 * 1e5 // 3
    assert slowdown_objective_value([0, 0, 0], wait, est, 5) == 171428 + 100000 + 1100000


def test_pass_facts_keys_and_share() -> None:
    a = pass_facts(3, None, modelled=0, status="SKIPPED")
    assert a["status"] == "SKIPPED" and a["rounds"] == 0 and a["objective"] is None
    assert improvement_share([a]) == 0.0
    b = dict(a, rounds=1, improved_on_prb=True)
    c = dict(a, rounds=2, improved_on_prb=False)
    assert improvement_share([a, b, c]) == 0.5
    assert ewt_weights(np.array([1800, 3600, 86400])).tolist() == [
        86400 * 10**5 // 1800, 86400 * 10**5 // 3600, 10**5]


def test_parameter_errors() -> None:
    from dispatchlab.dispatch.cp.common import check_control_params

    with pytest.raises(InputError, match="q_length"):
        HCP(q_length=0).validate()
    with pytest.raises(InputError, match="model_order"):
        HCP(model_order="sjf").validate()
    with pytest.raises(InputError, match="time_limit"):
        HCPOnline(time_limit=0).validate()
    with pytest.raises(InputError, match="time_mode"):
        HCPOnline(time_mode="cpu").validate()
    with pytest.raises(InputError, match="feedback_rounds"):
        HCP(feedback_rounds=-1).validate()
    with pytest.raises(InputError, match="default_ewt"):
        HCP(default_ewt=0).validate()
    check_control_params(1.0, 16.0, "wall", 3)  # fine


# --- the solver's answer against a brute-force optimum ---------------------------------
def serial_schedule(order, dur, demand, cap) -> list[int]:
    """Serial schedule generation: each job, in ``order``, at the earliest time (0 or a
    placed job's end) where the summed demand fits ``cap`` over its whole duration."""
    starts = [0] * len(dur)
    placed: list[int] = []
    for j in order:
        for t in sorted({0} | {starts[k] + dur[k] for k in placed}):
            ok = True
            for u in sorted({t} | {starts[k] for k in placed if t < starts[k] < t + dur[j]}):
                used = sum((demand[k] for k in placed
                            if starts[k] <= u < starts[k] + dur[k]), np.zeros_like(cap))
                if ((used + demand[j]) > cap).any():
                    ok = False
                    break
            if ok:
                starts[j] = t
                break
        placed.append(j)
    return starts


def brute_force(dur, demand, cap, cost) -> int:
    """Min of ``cost(starts)`` over all serial schedules (contains an optimum of any
    regular objective, e.g. weighted starts or slowdowns)."""
    return min(cost(serial_schedule(order, dur, demand, cap))
               for order in itertools.permutations(range(len(dur))))


def random_instance(rng, n: int):
    """``n`` jobs submitted at 0 on 2 nodes of (4 cores, 1 gpu, 8 mem), 1 queue of 2
    (EWT 1800 and 3600)."""
    platform = dataclasses.replace(
        Platform((NodeType("n", 2, {"core": 4, "gpu": 1, "mem": 8}),)),
        queues={"0": 1800, "1": 3600})
    units = rng.integers(1, 3, n)
    core = rng.integers(1, 4, n)
    gpu = (rng.random(n) < 0.3).astype(np.int64)
    mem = rng.integers(1, 5, n)
    run_t = rng.integers(1, 40, n)
    jobs = JobTable.from_arrays(submit=np.zeros(n, dtype=np.int64), run=run_t, units=units,
                                resources={"core": core, "gpu": gpu, "mem": mem},
                                queue=rng.integers(0, 2, n))
    demand = [np.array([core[i], gpu[i], mem[i]]) * units[i] for i in range(n)]
    return platform, jobs, demand, np.array([8, 2, 16])


@pytest.mark.parametrize("seed", range(4))
def test_hcp_solver_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = 3 + seed % 3
    platform, jobs, demand, cap = random_instance(rng, n)
    disp = HCP(time_limit=2.0, max_time_limit=2.0)
    _, disp = run(platform, jobs, disp)
    first = disp.pass_log_[0]
    rows = np.argsort(jobs["submit"], kind="stable")  # all at 0: file order
    dur = [int(jobs["run"][r]) for r in rows]
    ewt = np.where(jobs["queue"][rows] == 0, 1800, 3600)
    w = ewt_weights(ewt)
    best = brute_force(dur, [demand[r] for r in rows], cap,
                       lambda s: int(sum(int(wi) * si for wi, si in zip(w, s, strict=True))))
    if first["status"] == "ALL_FIT":  # no solve: "all start now" (objective 0) is optimal
        assert best == 0
        return
    assert first["now"] == 0 and first["modelled"] == n and first["status"] == "OPTIMAL"
    assert first["objective"] == best
    share_report(disp)


@pytest.mark.parametrize("seed", range(3))
def test_hcp_online_solver_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    n = 3 + seed
    platform, jobs, demand, cap = random_instance(rng, n)
    disp = HCPOnline(time_limit=2.0, max_time_limit=2.0)
    _, disp = run(platform, jobs, disp)
    first = disp.pass_log_[0]
    dur = [int(x) for x in jobs["run"]]
    # every job fits the empty nodes now, so all are modelled
    assert first["modelled"] == n
    d = slowdown_digits(sum(dur), [0] * n, dur)
    best = brute_force(dur, demand, cap,
                       lambda s: slowdown_objective_value(s, [0] * n, dur, d))
    if first["status"] == "ALL_FIT":  # no solve: "all start now" is optimal
        assert best == slowdown_objective_value([0] * n, [0] * n, dur, d)
        return
    assert first["status"] == "OPTIMAL" and first["solved"]
    assert first["objective"] == best


# --- properties ---------------------------------------------------------------------------
def node_usage_ok(res, platform: Platform, jobs: JobTable) -> None:
    """No node's capacity is exceeded at any start (ends release before starts)."""
    cap = platform.capacity_matrix()
    names = platform.resource_names
    req = np.stack([np.asarray(jobs.resources.get(r, np.zeros(len(jobs), dtype=np.int64)))
                    for r in names], axis=1)
    ran = np.flatnonzero(res.start >= 0)
    for t in sorted({int(res.start[j]) for j in ran}):
        used = np.zeros_like(cap)
        for j in ran:
            if res.start[j] <= t < res.end[j]:
                a = res.allocations[int(j)]
                used[a.nodes] += a.counts[:, None] * req[j][None, :]
        assert (used <= cap).all(), f"node capacity exceeded at t={t}"


@st.composite
def small_workloads(draw):
    n_nodes = draw(st.integers(2, 3))
    platform = Platform((NodeType("n", n_nodes, {"core": 4, "gpu": 1, "mem": 8}),))
    n = draw(st.integers(3, 7))
    submit = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
    run_t = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    units = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    core = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    gpu = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    mem = draw(st.lists(st.integers(1, 8), min_size=n, max_size=n))
    factor = draw(st.lists(st.sampled_from([1, 2]), min_size=n, max_size=n))
    jobs = JobTable.from_arrays(
        submit=submit, run=run_t, units=units,
        requested_time=[r * f for r, f in zip(run_t, factor, strict=True)],
        resources={"core": core, "gpu": gpu, "mem": mem})
    return platform, jobs


PROPERTY = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(small_workloads(), st.sampled_from(["hcp", "hcp-online"]))
def test_properties_capacity_causality_determinism(workload, name: str) -> None:
    platform, jobs = workload
    cls = HCP if name == "hcp" else HCPOnline
    params = {"time_limit": 0.05, "max_time_limit": 0.1}
    first_disp = cls(**params)
    first, first_disp = run(platform, jobs, first_disp)
    ran = first.start >= 0
    assert (first.start[ran] >= jobs["submit"][ran]).all()
    assert (ran | (first.status == STATUS_REJECTED)).all(), "a job that fits never started"
    node_usage_ok(first, platform, jobs)
    second_disp = cls(**params)
    second, second_disp = run(platform, jobs, second_disp)
    assert first.start.tobytes() == second.start.tobytes()
    assert first.end.tobytes() == second.end.tobytes()
    assert first_disp.pass_log_ == second_disp.pass_log_


def test_check_dispatcher_contract() -> None:
    from dispatchlab.testing import check_dispatcher

    # small deterministic limits keep this fast (the solver still finds plans: every
    # job must end, and two runs must agree)
    for disp in (HCP(time_limit=0.01, max_time_limit=0.01),
                 HCPOnline(time_limit=0.01, max_time_limit=0.02)):
        report = check_dispatcher(disp, workloads=1)
        assert report["jobs"] > 0
