"""The pure CP dispatchers ``pcp`` (Bartolini CP 2014 as re-implemented) and
``pcp-online`` (PCP', seed 002): one CP-SAT model for schedule and allocation.

Hand-computed schedules (reasoning in the comments), the model's answer against a
brute-force optimum on tiny instances (schedule and allocation enumerated), the PRB
reference plan and its replayed allocations, queue-length halving, and hypothesis
property tests (per-node capacity of every resource, no start before submission,
determinism). Every solver limit is deterministic time: reproducible on any machine.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.allocators import units_per_node
from dispatchlab.dispatch.cp.common import (
    TimeControl,
    add_slowdown_objective,
    slowdown_digits,
    slowdown_objective_value,
)
from dispatchlab.dispatch.cp.pcp import (
    PCP,
    PCPOnline,
    PlanProblem,
    add_tardiness_objective,
    build_plan_model,
    plan_is_feasible,
    prb_allocations,
    tardiness_digits,
    tardiness_objective_value,
)
from dispatchlab.platform import Platform
from dispatchlab.platform.platform import NodeType
from dispatchlab.sim.engine import Simulation
from dispatchlab.sim.result import STATUS_REJECTED
from dispatchlab.workload.jobs import JobTable

FAST = {"time_limit": 0.2, "max_time_limit": 0.4}


def run(platform: Platform, jobs: JobTable, disp):
    """Simulate; returns the result and the dispatcher instance that ran (the engine
    may clone the one passed in)."""
    sim = Simulation(platform, jobs, disp)
    res = sim.run()
    return res, sim.dispatcher


# --- the two-job example ------------------------------------------------------
def two_jobs(node_level: bool) -> tuple[Platform, JobTable]:
    """One node of 2 cores; A (1 core, 100 s) and B (2 cores, 60 s) submitted at 0, one
    queue, requested time = run time. ``node_level``: B is 1 unit of 2 cores (node-level
    mode); else 2 units of 1 core (counting mode)."""
    platform = Platform.homogeneous(1, 2)
    if node_level:
        jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 60], units=[1, 1],
                                    resources={"core": [1, 2]})
    else:
        jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 60], units=[1, 2])
    return platform, jobs


@pytest.mark.parametrize("node_level", [False, True])
def test_pcp_online_starts_the_wide_job_first(node_level: bool) -> None:
    # A and B cannot overlap (1 + 2 cores > 2). Slowdown objective (wait 0):
    #   B at 0, A at 60:  60/60 + (60 + 100)/100 = 1 + 1.6   = 2.6  (the optimum)
    #   A at 0, B at 100: 100/100 + (100 + 60)/60 = 1 + 2.67 = 3.67
    # H = 100 + 60 = 160 ("room": sum of durations), d = max(5, 3 digits) = 5, so the
    # solver's objective is 100000 + 160000 = 260000; PRB in slowdown order (equal
    # slowdowns 1, tie by demand A = 100 x 1/2 = 50 < B = 60 x 2/2 = 60) plans A first:
    # 100000 + floor(160/60 * 10**5) = 366666. B starts at 0, A at B's end, 60.
    platform, jobs = two_jobs(node_level)
    res, disp = run(platform, jobs, PCPOnline(**FAST))
    assert res.start.tolist() == [60, 0]
    first = disp.pass_log_[0]
    assert first["now"] == 0 and first["modelled"] == 2
    assert first["objective"] == 260000 and first["prb_objective"] == 366666
    assert first["improved_on_prb"] and first["solved"]


@pytest.mark.parametrize("node_level", [False, True])
def test_pcp_tardiness_starts_the_wide_job_first(node_level: bool) -> None:
    # EWT 30 s for both (default_ewt, no queue table). Tardiness max(0, (s - 30)/30):
    #   B at 0, A at 60:  0 + (60 - 30)/30  = 1     (the optimum)
    #   A at 0, B at 100: 0 + (100 - 30)/30 = 2.33
    # d = 5: solver 100000, PRB-urgency (tie by demand: A first) floor(2.333 * 10**5).
    platform, jobs = two_jobs(node_level)
    res, disp = run(platform, jobs, PCP(default_ewt=30, **FAST))
    assert res.start.tolist() == [60, 0]
    first = disp.pass_log_[0]
    assert first["objective"] == 100000 and first["prb_objective"] == 233333
    assert first["improved_on_prb"]


@pytest.mark.parametrize("ewt", [100, 1800])
def test_pcp_falls_back_to_prb_when_no_better(ewt: int) -> None:
    # With EWT >= 100 neither order is tardy (B at 100 is not later than 100): both cost
    # 0, the solver cannot beat PRB strictly, so PRB's plan is used: A (first by demand)
    # at 0, B at A's end 100.
    platform, jobs = two_jobs(node_level=True)
    res, disp = run(platform, jobs, PCP(default_ewt=ewt, **FAST))
    assert res.start.tolist() == [0, 100]
    first = disp.pass_log_[0]
    assert first["objective"] == 0 and first["prb_objective"] == 0
    assert not first["improved_on_prb"]


# --- allocation matters ---------------------------------------------------------------
def hetero_platform() -> Platform:
    """Node 0: 4 cores + 1 GPU; node 1: 8 cores, no GPU."""
    return Platform((NodeType("gpu", 1, {"core": 4, "gpu": 1}),
                     NodeType("cpu", 1, {"core": 8, "gpu": 0})))


@pytest.mark.parametrize("cls", [PCP, PCPOnline])
@pytest.mark.parametrize("nodes", ["all", "room"])
def test_solver_chooses_the_nodes(cls, nodes: str) -> None:
    # X: 1 unit of 2 cores, 100 s; Y: 1 unit of 4 cores + 1 GPU, 100 s; both at 0.
    # Y fits only node 0, and only if X is not there. PRB: equal urgency/slowdown, X
    # first by demand (100 x 2/12 < 100 x (4/12 + 1)); consolidate puts it on the node
    # with the smallest free share, a tie of empty nodes (1.0) broken by index: node 0,
    # so Y waits for X's end at 100. The model places X on node 1 and Y on node 0,
    # both at 0: tardiness 0 (EWT 30) vs PRB's floor(70/30 * 10**5) > 0; slowdown
    # 2 x 10**5 vs PRB's 10**5 + 2 x 10**5.
    jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 100], units=[1, 1],
                                resources={"core": [2, 4], "gpu": [0, 1]})
    params = dict(FAST, nodes=nodes)
    if cls is PCP:
        params["default_ewt"] = 30
    res, disp = run(hetero_platform(), jobs, cls(**params))
    assert res.start.tolist() == [0, 0]
    assert res.allocations[0].nodes.tolist() == [1]
    assert res.allocations[1].nodes.tolist() == [0]
    assert disp.pass_log_[0]["improved_on_prb"]


def test_units_split_over_nodes_with_running_jobs() -> None:
    # Two nodes of 4 cores. R (1 unit of 3 cores, 50 s) starts at 0 on some node.
    # W (2 units of 2 cores, 10 s) arrives at 1: R's node has 1 core (no unit), the
    # other 4 cores (2 units): W starts at 1 with both units on the other node. V (3
    # units of 1 core, 10 s) arrives at 2: R's node has 1 free core, the other none ->
    # V cannot start until W ends at 11 (then 1 + 4 cores are free): V starts at 11.
    platform = Platform.homogeneous(2, 4)
    jobs = JobTable.from_arrays(submit=[0, 1, 2], run=[50, 10, 10], units=[1, 2, 3],
                                resources={"core": [3, 2, 1]})
    for disp in (PCP(**FAST), PCPOnline(**FAST)):
        res, _ = run(platform, jobs, disp)
        assert res.start.tolist() == [0, 1, 11]
        other = 1 - int(res.allocations[0].nodes[0])
        assert res.allocations[1].nodes.tolist() == [other]
        assert res.allocations[1].counts.tolist() == [2]
        node_usage_ok(res, platform, jobs)


# --- the PRB reference plan ------------------------------------------------------------
class _CheckedPCP(PCP):
    """PCP that checks, at every pass, that the replayed PRB allocations agree with
    proactive_schedule's start-now allocations and form a feasible plan of the model."""

    def _reference(self, view, cand, used_nodes):
        offsets, units, now_allocs = super()._reference(view, cand, used_nodes)
        replay = prb_allocations(view, cand, offsets, self.ordering_, self.allocator_)
        for p, row in enumerate(cand.rows.tolist()):
            if offsets[p] == 0:
                a, b = replay[p], now_allocs[row]
                assert a.nodes.tolist() == b.nodes.tolist()
                assert a.counts.tolist() == b.counts.tolist()
            assert replay[p] is not None
        problem, _ = self._problem(view, cand)
        problem = self._with_reference_horizon(problem, offsets)
        assert plan_is_feasible(problem, offsets, units)
        self.checked_ = getattr(self, "checked_", 0) + 1
        return offsets, units, now_allocs


def test_prb_allocations_replay_the_plan() -> None:
    # Contention on 2 heterogeneous nodes: the reference plan places jobs later than
    # now, and its replayed allocations must be feasible in the model.
    platform = Platform((NodeType("a", 1, {"core": 4, "mem": 8}),
                         NodeType("b", 1, {"core": 6, "mem": 6})))
    jobs = JobTable.from_arrays(submit=[0, 0, 0, 5, 5, 9], run=[30, 20, 25, 10, 40, 5],
                                units=[2, 1, 3, 1, 2, 1],
                                resources={"core": [2, 3, 1, 4, 2, 1],
                                           "mem": [2, 4, 1, 3, 1, 2]})
    res, disp = run(platform, jobs, _CheckedPCP(**FAST))
    assert disp.checked_ > 0
    assert (res.start >= 0).all()
    node_usage_ok(res, platform, jobs)


# --- the model against brute force ---------------------------------------------------------
def allocations_of(units: int, bounds: list[int]) -> list[tuple[int, ...]]:
    """Every way to put ``units`` units on nodes with per-node ``bounds``."""
    return [x for x in itertools.product(*(range(b + 1) for b in bounds))
            if sum(x) == units]


def brute_force(problem: PlanProblem, cost) -> int:
    """The least ``cost(starts)`` over every feasible plan (every start in [0, H - d],
    every allocation), by testing start vectors in increasing cost order: the first one
    some allocation makes feasible is optimal. Independent of the model's code."""
    m = len(problem.units)
    cap = problem.capacity.tolist()
    n_nodes, n_res = len(cap), len(cap[0])
    options = [allocations_of(int(problem.units[j]), problem.bounds[j].tolist())
               for j in range(m)]
    dur = problem.durations.tolist()
    reqs = problem.requests.tolist()
    runs = list(zip(problem.run_node.tolist(), problem.run_duration.tolist(),
                    problem.run_usage.tolist(), strict=True))

    def fits(starts, alloc) -> bool:
        for t in {0, *starts}:
            for n in range(n_nodes):
                for r in range(n_res):
                    load = sum(use[r] for node, d, use in runs if node == n and t < d)
                    load += sum(alloc[j][n] * reqs[j][r] for j in range(m)
                                if starts[j] <= t < starts[j] + dur[j])
                    if load > cap[n][r]:
                        return False
        return True

    vectors = sorted(itertools.product(*(range(problem.horizon - d + 1) for d in dur)),
                     key=cost)
    for starts in vectors:
        if any(fits(starts, alloc) for alloc in itertools.product(*options)):
            return cost(starts)
    raise AssertionError("no feasible plan")


def random_problem(rng) -> PlanProblem:
    """1-2 nodes of 2 resources (capacity 2-4), 0-2 running jobs, 1-3 waiting jobs of
    1-2 units, 1-3 s; every waiting job fits the empty platform."""
    n_nodes = int(rng.integers(1, 3))
    cap = rng.integers(2, 5, (n_nodes, 2))
    run_node, run_dur, run_use = [], [], []
    held = np.zeros_like(cap)
    for _ in range(int(rng.integers(0, 3))):
        n = int(rng.integers(0, n_nodes))
        use = np.minimum(rng.integers(0, 3, 2), cap[n] - held[n])
        held[n] += use
        run_node.append(n)
        run_dur.append(int(rng.integers(1, 4)))
        run_use.append(use)
    units, reqs, bounds = [], [], []
    while len(units) < int(rng.integers(1, 4)) or not units:
        req = rng.integers(0, 3, 2)
        if not req.any():
            continue
        u = int(rng.integers(1, 3))
        b = np.minimum(units_per_node(req, cap), u)
        if b.sum() < u:
            continue
        units.append(u)
        reqs.append(req)
        bounds.append(b)
    dur = rng.integers(1, 4, len(units))
    return PlanProblem(
        capacity=cap, run_node=np.asarray(run_node, dtype=np.int64),
        run_duration=np.asarray(run_dur, dtype=np.int64),
        run_usage=np.asarray(run_use, dtype=np.int64).reshape(len(run_node), 2),
        units=np.asarray(units, dtype=np.int64), requests=np.asarray(reqs, dtype=np.int64),
        durations=dur.astype(np.int64), bounds=np.asarray(bounds, dtype=np.int64),
        horizon=int(max(run_dur, default=0) + dur.sum()))


@pytest.mark.parametrize("seed", range(8))
def test_model_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    problem = random_problem(rng)
    m = len(problem.units)
    wait = rng.integers(0, 6, m).tolist()
    if seed % 2 == 0:  # PCP: tardiness with EWTs of 1..6 s
        ewt = rng.integers(1, 7, m).tolist()
        d = tardiness_digits(problem.horizon, wait, ewt)

        def cost(s):
            return tardiness_objective_value(list(s), wait, ewt, d)
        pm = build_plan_model(problem)
        objective = add_tardiness_objective(pm.model, pm.starts, wait, ewt,
                                            problem.horizon, d)
    else:  # PCP': slowdown with estimates (0 = a 1 s planning duration)
        est = [0 if x == 1 and rng.random() < 0.5 else x
               for x in problem.durations.tolist()]
        d = slowdown_digits(problem.horizon, wait, est)

        def cost(s):
            return slowdown_objective_value(list(s), wait, est, d)
        pm = build_plan_model(problem)
        objective = add_slowdown_objective(pm.model, pm.starts, wait, est,
                                           problem.horizon, d)
    out = TimeControl(5.0, 5.0).solve(pm.model, pm.variables, None, objective)
    assert out.status == "OPTIMAL"
    offsets, units = pm.values_to_plan(out.values, len(problem.capacity))
    assert plan_is_feasible(problem, offsets, units)
    assert out.objective == cost(offsets.tolist()) == brute_force(problem, cost)


def test_first_pcp_pass_matches_brute_force() -> None:
    # Three jobs at 0 on the heterogeneous platform (node 0: 4 cores + 1 GPU, node 1: 8
    # cores), EWT 1 s so that every second of waiting counts: X (2 units of 2 cores,
    # 3 s), Y (1 unit of 4 cores + 1 GPU, 2 s: node 0 only), Z (1 unit of 5 cores, 4 s:
    # node 1 only). Not all three fit at 0 (Y fills node 0; X's 4 cores + Z's 5 > 8).
    # PRB-urgency (ties by demand: X = Z = 1.0 < Y, then row) puts X on node 0 first,
    # which delays Y. The first pass models all three on both nodes ("all"); its solver
    # objective (before any PRB fallback) equals the optimum enumerated by brute force.
    jobs = JobTable.from_arrays(submit=[0, 0, 0], run=[3, 2, 4], units=[2, 1, 1],
                                resources={"core": [2, 4, 5], "gpu": [0, 1, 0]})
    platform = hetero_platform()
    _, disp = run(platform, jobs, PCP(default_ewt=1, time_limit=2.0, max_time_limit=2.0))
    first = disp.pass_log_[0]
    assert first["status"] == "OPTIMAL" and first["modelled"] == 3
    cap = platform.capacity_matrix()
    reqs = np.array([[2, 0], [4, 1], [5, 0]])
    units = np.array([2, 1, 1])
    bounds = np.array([np.minimum(units_per_node(r, cap), u)
                       for r, u in zip(reqs, units, strict=True)])
    dur = np.array([3, 2, 4])
    problem = PlanProblem(cap, np.zeros(0, np.int64), np.zeros(0, np.int64),
                          np.zeros((0, 2), np.int64), units, reqs, dur, bounds,
                          int(dur.sum()))
    d = tardiness_digits(problem.horizon, [0, 0, 0], [1, 1, 1])
    best = brute_force(problem,
                       lambda s: tardiness_objective_value(list(s), [0, 0, 0], [1] * 3, d))
    # By hand: Y (node 0) and Z (node 1) at 0, X at Y's end 2 (node 0 free again):
    # tardiness (2 - 1)/1 = 1 -> 10**5. Starting X at 0 delays Y or Z by 2-3 s instead.
    # PRB: X on node 0 and Z at 0, Y at X's end 3: (3 - 1)/1 = 2 -> 2 x 10**5.
    assert first["objective"] == best == 10**5
    assert first["prb_objective"] == 2 * 10**5 and first["improved_on_prb"]


def test_tardiness_objective_exact_floor_and_digits() -> None:
    # (s + wait - ewt) * 10**d / ewt, floored, at least 0: s = 0, wait 10, ewt 30 -> 0;
    # s = 31, wait 0, ewt 30 -> floor(1/30 * 10**5) = 3333; s = 100 -> 233333.
    assert tardiness_objective_value([0, 31, 100], [10, 0, 0], [30, 30, 30], 5) == \
        0 + 3333 + 233333
    # huge waits lower the digits so that terms x jobs stay below 2**60
    d = tardiness_digits(10**6, [10**12] * 100, [1] * 100)
    assert d < 5 and (10**6 + 10**12) * 10**d * 100 < 1 << 60


# --- queue-length halving ---------------------------------------------------------------
def test_q_length_halving_on_unsolved_passes() -> None:
    # A deterministic limit of 1e-9 leaves CP-SAT no time to find anything: every solve
    # is unsolved and dispatches nothing, and the queue length halves (min 1). Pooled 2
    # cores, 2-core jobs of 10 s submitted at 0, 0, 1, 2, 3 (each fits alone):
    #   t=0: 2 fit, q 8 -> models 2, PRB plans one later -> solve, unsolved: q 4; the
    #        system is idle, so PRB's start-now job 0 starts (ours: no later event would
    #        call the dispatcher again); it runs 0..10
    #   t=1, 2, 3: the running job holds both cores: nothing fits (NO_FIT, modelled 0)
    #   t=10: 4 fit -> models 4, unsolved: q 2; idle -> job 1 starts (the longest wait)
    #   t=20: 3 fit -> models 2, unsolved: q 1; idle -> job 2 starts
    #   t=30: models 1; PRB starts it now, which is optimal: no solve (PRB_OPTIMAL, a
    #        solved pass: q back to 8); t=40 the same for the last job
    platform = Platform.pooled(2)
    jobs = JobTable.from_arrays(submit=[0, 0, 1, 2, 3], run=[10] * 5, units=[2] * 5)
    res, disp = run(platform, jobs, PCPOnline(q_length=8, time_limit=1e-9,
                                              max_time_limit=1e-9))
    log = disp.pass_log_
    assert [(p["now"], p["modelled"], p["status"]) for p in log] == [
        (0, 2, log[0]["status"]), (1, 0, "NO_FIT"), (2, 0, "NO_FIT"), (3, 0, "NO_FIT"),
        (10, 4, log[4]["status"]), (20, 2, log[5]["status"]), (30, 1, "PRB_OPTIMAL"),
        (40, 1, "PRB_OPTIMAL")]
    solves = [p for p in log if p["rounds"] > 0]
    assert [p["now"] for p in solves] == [0, 10, 20]
    assert not any(p["solved"] for p in solves)
    assert all(p["objective"] is None for p in solves)
    assert disp.cur_q_length_ == 8
    assert res.start.tolist() == [0, 10, 20, 30, 40]


def test_q_length_reset_after_a_solved_pass() -> None:
    # Pooled 2 cores, three 2-core jobs of 10 s at 0: each fits now, q_length = 2 models
    # two (in slowdown order: equal slowdowns and demands, so queue order). They cannot
    # run together, so the solver runs and proves its optimum: the pass is solved and
    # the queue length stays 2. The jobs run one after the other.
    platform = Platform.pooled(2)
    jobs = JobTable.from_arrays(submit=[0, 0, 0], run=[10, 10, 10], units=[2, 2, 2])
    res, disp = run(platform, jobs, PCPOnline(q_length=2, **FAST))
    first = disp.pass_log_[0]
    assert first["modelled"] == 2 and first["solved"] and first["rounds"] > 0
    assert disp.cur_q_length_ == 2
    assert res.start.tolist() == [0, 10, 20]


def test_prb_optimal_skips_the_solver() -> None:
    # Pooled 4 cores, three 1-core jobs at 0: PRB starts all three now, which no plan
    # can beat (every objective term is least at s = 0): no solve, PRB_OPTIMAL.
    platform = Platform.pooled(4)
    jobs = JobTable.from_arrays(submit=[0, 0, 0], run=[10, 10, 10], units=[1, 1, 1])
    for disp in (PCP(**FAST), PCPOnline(**FAST)):
        res, ran = run(platform, jobs, disp)
        assert res.start.tolist() == [0, 0, 0]
        first = ran.pass_log_[0]
        assert first["status"] == "PRB_OPTIMAL" and first["rounds"] == 0
        assert first["prb_objective"] is not None


def test_pcp_models_at_most_q_length_in_queue_order() -> None:
    # Pooled 2 cores; 4 jobs of 2 cores at 0: q_length 3 models the first 3 in queue
    # order; one starts now (all tardiness 0 at EWT 1800: PRB's first = queue order).
    platform = Platform.pooled(2)
    jobs = JobTable.from_arrays(submit=[0, 0, 0, 0], run=[10] * 4, units=[2] * 4)
    res, disp = run(platform, jobs, PCP(q_length=3, **FAST))
    assert disp.pass_log_[0]["modelled"] == 3
    assert sorted(res.start.tolist()) == [0, 10, 20, 30]


def test_no_fit_skips_the_solver() -> None:
    # Pooled 2 cores: A (2 cores, 50 s) at 0 starts; B (2 cores) at 5 cannot start now
    # on any plan, so the pass at 5 does not solve (NO_FIT) and B starts at 50.
    platform = Platform.pooled(2)
    jobs = JobTable.from_arrays(submit=[0, 5], run=[50, 10], units=[2, 2])
    for disp in (PCP(**FAST), PCPOnline(**FAST)):
        res, ran = run(platform, jobs, disp)
        assert res.start.tolist() == [0, 50]
        assert [p["status"] for p in ran.pass_log_ if p["now"] == 5] == ["NO_FIT"]


def test_parameter_errors() -> None:
    with pytest.raises(InputError, match="nodes"):
        PCP(nodes="some").validate()
    with pytest.raises(InputError, match="q_length"):
        PCPOnline(q_length=0).validate()
    with pytest.raises(InputError, match="default_ewt"):
        PCP(default_ewt=0).validate()
    with pytest.raises(InputError, match="max_k"):
        PCPOnline(max_k=0).validate()
    with pytest.raises(InputError, match="time_mode"):
        PCP(time_mode="cpu").validate()
    with pytest.raises(InputError, match="allocator"):
        PCP(allocator="nope").validate()


def test_queue_ewt_from_the_platform() -> None:
    # Queues "0" (EWT 10 s) and "1" (EWT 20 s); one core. A (queue 0, 100 s) and B
    # (queue 1, 10 s) at 0. PRB-urgency ranks A first ((0 + 1)/10 > (0 + 1)/20): A at 0,
    # B at 100, tardiness 0 + (100 - 20)/20 = 4. B first: B at 0, A at 10, tardiness
    # 0 + (10 - 10)/10 = 0, the optimum: B starts at 0, A at 10.
    platform = dataclasses.replace(Platform.pooled(1), queues={"0": 10, "1": 20})
    jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 10], units=[1, 1], queue=[0, 1])
    res, disp = run(platform, jobs, PCP(**FAST))
    assert res.start.tolist() == [10, 0]
    first = disp.pass_log_[0]
    assert first["objective"] == 0 and first["prb_objective"] == 4 * 10**5


# --- properties ----------------------------------------------------------------------------
def node_usage_ok(res, platform: Platform, jobs: JobTable) -> None:
    """No node's capacity of any resource is exceeded at any start (ends release before
    starts), from the result's allocations."""
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
    """2-3 heterogeneous nodes (GPU nodes and fat-memory nodes), 3-7 jobs."""
    gpu_nodes = draw(st.integers(1, 2))
    platform = Platform((NodeType("gpu", gpu_nodes, {"core": 4, "gpu": 1, "mem": 8}),
                         NodeType("fat", 1, {"core": 6, "gpu": 0, "mem": 16})))
    n = draw(st.integers(3, 7))
    submit = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
    run_t = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    units = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    core = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    gpu = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    mem = draw(st.lists(st.integers(1, 10), min_size=n, max_size=n))
    factor = draw(st.lists(st.sampled_from([1, 2]), min_size=n, max_size=n))
    jobs = JobTable.from_arrays(
        submit=submit, run=run_t, units=units,
        requested_time=[r * f for r, f in zip(run_t, factor, strict=True)],
        resources={"core": core, "gpu": gpu, "mem": mem})
    return platform, jobs


PROPERTY = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(small_workloads(), st.sampled_from(["pcp", "pcp-online", "pcp-room", "online-all"]))
def test_properties_capacity_causality_determinism(workload, name: str) -> None:
    platform, jobs = workload
    params = {"time_limit": 0.05, "max_time_limit": 0.1}
    make = {"pcp": lambda: PCP(**params), "pcp-online": lambda: PCPOnline(**params),
            "pcp-room": lambda: PCP(nodes="room", **params),
            "online-all": lambda: PCPOnline(nodes="all", **params)}[name]
    first, first_disp = run(platform, jobs, make())
    ran = first.start >= 0
    assert (first.start[ran] >= jobs["submit"][ran]).all()
    assert (ran | (first.status == STATUS_REJECTED)).all(), "a job that fits never started"
    node_usage_ok(first, platform, jobs)
    second, second_disp = run(platform, jobs, make())
    assert first.start.tobytes() == second.start.tobytes()
    assert first.end.tobytes() == second.end.tobytes()
    assert first_disp.pass_log_ == second_disp.pass_log_


def test_check_dispatcher_contract() -> None:
    from dispatchlab.testing import check_dispatcher

    # small limits: the contending workloads (up to ~25 waiting jobs on one pool) make
    # CP-SAT use its whole limit on many passes
    for disp in (PCP(time_limit=0.01, max_time_limit=0.01),
                 PCPOnline(time_limit=0.01, max_time_limit=0.02)):
        report = check_dispatcher(disp, workloads=2)
        assert report["jobs"] > 0


# --- saved models ---------------------------------------------------------------------
@pytest.mark.parametrize("cls", [PCP, PCPOnline])
def test_save_models_writes_sampled_passes(cls, tmp_path) -> None:
    import json

    from google.protobuf import text_format
    from ortools.sat import cp_model_pb2

    # five 1-core jobs of 30 s on one 2-core node, submitted 0, 5, 10, 15, 20: several
    # passes reach the solver; every solve is saved with save_every=1, every second
    # with save_every=2, and the schedule is the one without saving
    platform = Platform.homogeneous(1, 2)
    jobs = JobTable.from_arrays(submit=[0, 0, 0, 5, 5], run=[30, 20, 40, 10, 30],
                                units=[1, 1, 1, 1, 1], resources={"core": [1, 1, 2, 1, 2]})
    plain, disp0 = run(platform, jobs, cls(**FAST))
    solves = sum(1 for p in disp0.pass_log_ if p["rounds"] > 0)
    assert solves >= 2
    for every in (1, 2):
        folder = tmp_path / f"every{every}"
        res, _ = run(platform, jobs, cls(save_models=str(folder), save_every=every, **FAST))
        assert res.start.tolist() == plain.start.tolist()
        saved = sorted(folder.glob("*.json"))
        assert [p.stem for p in saved] == [f"{cls.name}-{k:06d}"
                                           for k in range(0, solves, every)]
        for path in saved:
            facts = json.loads(path.read_text())
            assert facts["solve"] == int(path.stem.rsplit("-", 1)[1])
            assert facts["jobs"] and facts["nodes"] == [0]
            assert facts["hint_feasible"] is True
            proto = cp_model_pb2.CpModelProto()
            text_format.Parse(path.with_suffix(".pb.txt").read_text(), proto)
            assert len(proto.solution_hint.vars) == len(facts["jobs"]) * 2  # s_j, x_j0
            assert proto.HasField("objective")
    with pytest.raises(InputError, match="save_every"):
        cls(save_models=str(tmp_path), save_every=0).validate()
    with pytest.raises(InputError, match="save_models"):
        cls(save_models=3).validate()


def hint_solves(pb_txt) -> bool:
    """CP-SAT's own check of a saved model's hint: every hinted variable fixed to its
    hinted value, the model still has a solution."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    proto = model.proto
    assert proto.parse_text_format(pb_txt.read_text())
    hint = proto.solution_hint
    assert len(hint.vars) > 0
    for var, value in zip(list(hint.vars), list(hint.values), strict=True):
        model.add(model.get_int_var_from_proto_index(var) == value)
    proto.clear_solution_hint()
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 10
    return solver.solve(model) in (cp_model.OPTIMAL, cp_model.FEASIBLE)


def test_room_hint_is_feasible_when_prb_uses_a_node_without_room(tmp_path) -> None:
    import json

    # Two nodes of 2 cores. R (2 cores, 50 s) starts at 0 on one node. At t = 1, A
    # (2 cores, 200 s) and B (2 cores, 100 s) arrive; only the other node has room, so
    # with nodes="room" the model knows that node only. PRB (slowdown order: equal
    # slowdowns, ties by smaller demand: B first) plans B now on the free node and A at
    # R's end (offset 49) on R's node, outside the room set: the model cannot express
    # that allocation (before the fix the hint had A with 0 units, infeasible). The
    # repaired hint puts A at B's end (offset 100) on the room node. The solver's
    # optimum in the model: B at 0, A at 100 (slowdown 1 + 3/2 = 2.5 against A first,
    # 1 + 3 = 4): B starts at 1; R ends at 50, then A fits R's node and starts at 50.
    platform = Platform.homogeneous(2, 2)
    jobs = JobTable.from_arrays(submit=[0, 1, 1], run=[50, 200, 100], units=[1, 1, 1],
                                resources={"core": [2, 2, 2]})
    for cls in (PCPOnline, lambda **kw: PCP(nodes="room", **kw)):
        folder = tmp_path / str(id(cls))
        res, _ = run(platform, jobs, cls(save_models=str(folder), **FAST))
        assert res.start.tolist() == [0, 50, 1]
        saved = {json.loads(p.read_text())["now"]: p for p in folder.glob("*.json")}
        assert 1 in saved
        facts = json.loads(saved[1].read_text())
        assert sorted(facts["jobs"]) == [1, 2] and len(facts["nodes"]) == 1
        assert facts["hint_feasible"] is True
        assert hint_solves(saved[1].with_suffix(".pb.txt"))


def test_pooled_hint_feasible_is_checked_on_the_pooled_model(tmp_path) -> None:
    import json

    # The instance above with the pooled model (ours). Its hint is PRB's start times
    # only: B at offset 0, A at 49 (R's end). On the pooled capacity (4 cores, R's 2
    # fixed until offset 49) those start times are feasible: B 2 + A 2 = 4 cores from
    # 49. The saved value is the pooled model's own answer with them fixed (before, PRB's
    # whole plan was checked against the node model, a different question).
    platform = Platform.homogeneous(2, 2)
    jobs = JobTable.from_arrays(submit=[0, 1, 1], run=[50, 200, 100], units=[1, 1, 1],
                                resources={"core": [2, 2, 2]})
    folder = tmp_path / "pooled"
    run(platform, jobs, PCPOnline(model="pooled", save_models=str(folder), **FAST))
    saved = {json.loads(p.read_text())["now"]: p for p in folder.glob("*.json")}
    facts = json.loads(saved[1].read_text())
    assert facts["model"] == "pooled"
    assert facts["hint_feasible"] is True
    assert hint_solves(saved[1].with_suffix(".pb.txt"))


def test_hint_extends_fixes_the_hinted_variables() -> None:
    from ortools.sat.python import cp_model

    from dispatchlab.dispatch.cp.common import hint_extends

    # x + y <= 5, minimise x: (3, 2) is a solution, (3, 3) is not; hinting b alone
    # leaves x, y free (a solution exists); the model keeps its objective and no hint
    model = cp_model.CpModel()
    x, y, b = model.new_int_var(0, 10, "x"), model.new_int_var(0, 10, "y"), \
        model.new_bool_var("b")
    model.add(x + y <= 5)
    model.minimize(x)
    assert hint_extends(model, [x, y, b], [3, 2, None]) is True
    assert hint_extends(model, [x, y, b], [3, 3, None]) is False
    assert hint_extends(model, [x, y, b], [None, None, 1]) is True
    assert model.has_objective() and len(model.proto.solution_hint.vars) == 0


# --- PCP' pooled model (ours) and the authors' form -----------------------------------
def three_jobs() -> tuple[Platform, JobTable]:
    """Two nodes of 3 cores; A (2 cores, 100 s), B (2 cores, 200 s), C (2 cores, 10 s)
    submitted at 0, one unit each."""
    platform = Platform.homogeneous(2, 3)
    jobs = JobTable.from_arrays(submit=[0, 0, 0], run=[100, 200, 10], units=[1, 1, 1],
                                resources={"core": [2, 2, 2]})
    return platform, jobs


@pytest.mark.parametrize("model", ["nodes", "pooled"])
def test_pcp_online_start_now_packing(model: str) -> None:
    # 6 free cores in all, 3 jobs of 2 cores: the pooled capacity holds all three now,
    # but a node of 3 cores holds one 2-core job, so only two can start now.
    # Slowdown terms, wait 0, d = 5 (H = 310 has 3 digits):
    # * pooled: the exact packing at 0 forbids all-three-now (without it the optimum
    #   would be 3 x 10**5 = 300000). Delaying one job to s = 1 (the pooled cumulative
    #   of 6 cores then holds it) costs least for the longest, B: 10**5 (A) + 10**5 (C)
    #   + floor((1 + 200) / 200 * 10**5) = 300500 (delaying A: 301000, C: 310000).
    # * nodes (room = both nodes): B must wait for a node; C's ends first, at 10:
    #   10**5 + 10**5 + floor(210 / 200 * 10**5) = 305000 (A waiting for C: 310000).
    # PRB (slowdown order: equal slowdowns, ties by demand: C, A, B) plans C and A now,
    # B at 10: 305000. Both: A and C start at 0; B when C ends, at 10.
    platform, jobs = three_jobs()
    res, disp = run(platform, jobs, PCPOnline(model=model, **FAST))
    assert res.start.tolist() == [0, 10, 0]
    first = disp.pass_log_[0]
    assert first["modelled"] == 3 and first["prb_objective"] == 305000
    assert first["objective"] == {"pooled": 300500, "nodes": 305000}[model]
    assert first["solved"]
    node_usage_ok(res, platform, jobs)


def test_pooled_model_packs_only_the_start_now_jobs() -> None:
    # The model alone, on three_jobs' first pass: the solution starts exactly two jobs
    # now, with x on distinct nodes (one 2-core job per 3-core node), B at 1.
    problem = PlanProblem(
        capacity=np.array([[3], [3]]), run_node=np.zeros(0, np.int64),
        run_duration=np.zeros(0, np.int64), run_usage=np.zeros((0, 1), np.int64),
        units=np.array([1, 1, 1]), requests=np.array([[2], [2], [2]]),
        durations=np.array([100, 200, 10]), bounds=np.ones((3, 2), np.int64), horizon=310)
    from dispatchlab.dispatch.cp.pcp import build_pooled_model

    pm = build_pooled_model(problem, np.array([[3], [3]]))
    objective = add_slowdown_objective(pm.model, pm.starts, [0, 0, 0], [100, 200, 10],
                                       310, 5)
    out = TimeControl(1.0, 1.0).solve(pm.model, pm.variables, None, objective)
    offsets, units = pm.values_to_plan(out.values, 2)
    assert offsets.tolist() == [0, 1, 0] and out.objective == 300500
    assert units[1].sum() == 0 and (units[[0, 2]].sum(axis=0) == [1, 1]).all()


@PROPERTY
@given(small_workloads(), st.sampled_from(["nodes", "pooled"]))
def test_pcp_online_every_pass_solved_with_a_feasible_hint(workload, model: str) -> None:
    import json
    import tempfile
    from pathlib import Path

    platform, jobs = workload
    with tempfile.TemporaryDirectory() as tmp:
        res, disp = run(platform, jobs, PCPOnline(model=model, save_models=tmp,
                                                  time_limit=0.05, max_time_limit=0.1))
        saved = [json.loads(p.read_text()) for p in Path(tmp).glob("*.json")]
    solver_passes = [p for p in disp.pass_log_ if p["rounds"] > 0]
    assert len(saved) == len(solver_passes)
    assert all(f["hint_feasible"] for f in saved)
    # a solver pass has a solution; the others need none (PRB_OPTIMAL dispatches PRB's
    # start-now plan, feasible by construction; SKIPPED / NO_FIT start nothing)
    assert all(p["objective"] is not None for p in solver_passes)
    ran = res.start >= 0
    assert (ran | (res.status == STATUS_REJECTED)).all()
    node_usage_ok(res, platform, jobs)


def test_pcp_online_same_schedule_across_processes() -> None:
    import os
    import subprocess
    import sys

    # the three_jobs instance and the room-hint instance, both models, in two fresh
    # interpreters with different hash seeds: the same starts
    code = (
        "from dispatchlab.dispatch.cp.pcp import PCPOnline\n"
        "from dispatchlab.platform import Platform\n"
        "from dispatchlab.sim.engine import Simulation\n"
        "from dispatchlab.workload.jobs import JobTable\n"
        "out = []\n"
        "for model in ('nodes', 'pooled'):\n"
        "    for n, c, sub, rt, core in ((2, 3, [0, 0, 0, 2], [100, 200, 10, 30],\n"
        "                                 [2, 2, 2, 1]),\n"
        "                                (2, 2, [0, 1, 1, 1], [50, 200, 100, 5],\n"
        "                                 [2, 2, 2, 1])):\n"
        "        jobs = JobTable.from_arrays(submit=sub, run=rt, units=[1] * 4,\n"
        "                                    resources={'core': core})\n"
        "        res = Simulation(Platform.homogeneous(n, c), jobs,\n"
        "                         PCPOnline(model=model, time_limit=0.2,\n"
        "                                   max_time_limit=0.4)).run()\n"
        "        out.append(res.start.tolist())\n"
        "print(out)\n")
    from pathlib import Path

    import dispatchlab

    src = str(Path(dispatchlab.__file__).resolve().parents[1])
    outs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed,
                   PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get(
                       "PYTHONPATH")])))
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, check=True)
        outs.append(proc.stdout)
    assert outs[0] == outs[1] and outs[0].startswith("[[")


def test_pcp_online_model_parameter_error() -> None:
    with pytest.raises(InputError, match="pooled"):
        PCPOnline(model="pool").validate()


def test_hcp_online_save_models(tmp_path) -> None:
    import json

    from dispatchlab.dispatch.cp.hcp import HCPOnline

    # the two-job example: A and B cannot both start now, so hcp-online's first pass
    # reaches the solver (solve 0, saved with its 2 start variables hinted)
    platform, jobs = two_jobs(True)
    plain, _ = run(platform, jobs, HCPOnline(**FAST))
    res, _ = run(platform, jobs, HCPOnline(save_models=str(tmp_path), **FAST))
    assert res.start.tolist() == plain.start.tolist()
    facts = json.loads((tmp_path / "hcp-online-000000.json").read_text())
    assert facts["now"] == 0 and sorted(facts["jobs"]) == [0, 1] and facts["nodes"] == []
    text = (tmp_path / "hcp-online-000000.pb.txt").read_text()
    assert "solution_hint" in text and "cumulative" in text


@pytest.mark.parametrize("by_type", [False, True])
def test_pooled_model_node_types(by_type: bool) -> None:
    # three_jobs' pass on two 3-core nodes of different types (one has a GPU). Pooled
    # over types (default) B may start at 1 (6 cores hold 2 + 2 + 2): 300500. With
    # per-type cumulatives (by_type) each type has 3 cores, 2 held by A or C, so B
    # waits for C's end at 10: 10**5 + 10**5 + floor(210 / 200 * 10**5) = 305000.
    from dispatchlab.dispatch.cp.pcp import build_pooled_model

    problem = PlanProblem(
        capacity=np.array([[3, 0], [3, 1]]), run_node=np.zeros(0, np.int64),
        run_duration=np.zeros(0, np.int64), run_usage=np.zeros((0, 2), np.int64),
        units=np.array([1, 1, 1]), requests=np.array([[2, 0], [2, 0], [2, 0]]),
        durations=np.array([100, 200, 10]), bounds=np.ones((3, 2), np.int64), horizon=310)
    pm = build_pooled_model(problem, problem.capacity, by_type=by_type)
    objective = add_slowdown_objective(pm.model, pm.starts, [0, 0, 0], [100, 200, 10],
                                       310, 5)
    out = TimeControl(1.0, 1.0).solve(pm.model, pm.variables, None, objective)
    offsets, _ = pm.values_to_plan(out.values, 2)
    assert offsets.tolist() == ([0, 10, 0] if by_type else [0, 1, 0])
    assert out.objective == (305000 if by_type else 300500)
