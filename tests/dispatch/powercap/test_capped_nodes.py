"""The power-capped dispatchers of Carastan-Santos et al. 2024 (``easy-pc``, ``knapsack``)
on node-level platforms: hand-computed schedules on a small machine of CPU nodes and a
GPU node, placement and cap properties on random multi-resource instances, the uncapped
identity with node-level EASY, and the dispatcher contract's node-level checks.

The hand-computed platform: nodes 0-2 of 4 cores and no GPU, node 3 of 4 cores and 1
GPU (``first-fit``: nodes in index order); the ``real`` power predictor reads each job's
power columns (mean = max, std 0: the ``mean`` and ``max`` checks decide alike); a
1,000 W cap from time 0; requested times equal the run times (exact estimates).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY
from dispatchlab.dispatch.powercap.capped import (
    CHECKS,
    EasyPC,
    Knapsack,
    ReferenceEasyPC,
    ReferenceKnapsack,
)
from dispatchlab.platform.platform import NodeType
from dispatchlab.power import PowerCap
from dispatchlab.predict.power.predictors import make_power_predictor
from dispatchlab.testing import check_dispatcher


def small_platform() -> Platform:
    return Platform((NodeType("cpu", 3, {"core": 4, "gpu": 0}),
                     NodeType("gpu", 1, {"core": 4, "gpu": 1})), name="3cpu-1gpu")


def hand_jobs(rows: list[tuple[int, int, int, int, int]]) -> JobTable:
    """Jobs from (submit, units, cores per unit, GPUs per unit, run = requested time)
    rows; the power columns are set by the caller."""
    submit, units, cores, gpus, run = (list(c) for c in zip(*rows, strict=True))
    return JobTable.from_arrays(submit=submit, run=run, units=units, requested_time=run,
                                resources={"core": cores, "gpu": gpus})


def run_capped(jobs: JobTable, watts: list[int], dispatcher, cap: float | None = 1000.0):
    jobs.columns.update(power_mean=np.array(watts, dtype=np.float64),
                        power_max=np.array(watts, dtype=np.float64),
                        power_std=np.zeros(len(watts)))
    return Simulation(small_platform(), jobs, dispatcher,
                      power_predictor=make_power_predictor("real"),
                      cap=None if cap is None else PowerCap.window(cap)).run()


def nodes_of(result, job: int) -> list[int]:
    return result.allocations[job].nodes.tolist()


# EASY+PC (fcfs), all submitted at 0:
#   J0 2 x 4 cores, 100 s, 300 W | J1 1 x (1 core, 1 GPU), 50 s, 800 W
#   J2 1 x 4 cores, 200 s, 300 W | J3 1 x 1 core, 50 s, 50 W
#   J4 2 x 4 cores, 10 s, 10 W   | J5 1 x (1 core, 1 GPU), 300 s, 20 W
#   J6 1 x 1 core, 300 s, 5 W
# t=0: J0 starts on nodes 0, 1 (300 W). J1 fits node 3 but 300 + 800 > 1000: the head,
#   waiting for the cap although its node is free. Its shadow time: J0's end at 100
#   (then 800 W, node 3); extra at 100: nodes 0-2 whole, node 3 3 cores and no GPU.
#   Backfill, in queue order: J2 fits now (600 W, node 2) but ends at 200 > 100 and
#   800 + 300 > 1000 at the shadow time: it waits; J3 (350 W, ends at 50 <= 100)
#   starts on node 2; J4 (360 W would fit the cap) needs two whole nodes and only node
#   3 is: it waits for nodes although the cap has room; J5 (370 W) fits node 3 now but
#   ends after 100 and the head holds node 3's GPU then: it waits; J6 (355 W now, 805 W
#   at the shadow time) ends after 100 and fits both now and the extra: node 2.
# t=50: J3 ends; J1 still fails the cap, J2 the cap at the shadow time; J4 finds 3
#   cores on node 2 (J6 holds one) and 4 on node 3; J5 no GPU at the shadow time.
# t=100: J0 ends: J1 starts on node 3 (805 W); J2: 1,105 W, the new head (shadow time
#   150, when J1 ends); J4 (815 W, ends at 110 <= 150) starts on nodes 0, 1; J5: node
#   3's GPU is J1's.
# t=150: J1 ends: J2 starts on node 0 (305 W), J5 on node 3 (325 W).
EASY_PC_ROWS = [(0, 2, 4, 0, 100), (0, 1, 1, 1, 50), (0, 1, 4, 0, 200), (0, 1, 1, 0, 50),
                (0, 2, 4, 0, 10), (0, 1, 1, 1, 300), (0, 1, 1, 0, 300)]
EASY_PC_WATTS = [300, 800, 300, 50, 10, 20, 5]
EASY_PC_START = [0, 100, 150, 0, 100, 150, 0]
EASY_PC_NODES = [[0, 1], [3], [0], [2], [0, 1], [3], [2]]


@pytest.mark.parametrize("check", ["mean", "max"])
@pytest.mark.parametrize("cls", [EasyPC, ReferenceEasyPC])
def test_easy_pc_hand_computed_schedule_on_nodes(cls, check: str) -> None:
    r = run_capped(hand_jobs(EASY_PC_ROWS), EASY_PC_WATTS, cls(check=check))
    assert r.start.tolist() == EASY_PC_START
    assert [nodes_of(r, j) for j in range(7)] == EASY_PC_NODES
    # without the cap it is node-level EASY: J1 starts at 0 on node 3
    free = run_capped(hand_jobs(EASY_PC_ROWS), EASY_PC_WATTS, cls(check=check), cap=None)
    plain = Simulation(small_platform(), hand_jobs(EASY_PC_ROWS), EASY()).run()
    assert free.start.tolist() == plain.start.tolist()
    assert free.start[1] == 0 and nodes_of(free, 1) == [3]


# A cap step is a release time of the shadow walk (EASY+PC, cap 1,000 W, 2,000 W from 30):
#   J0 2 x 4 cores, 100 s, 600 W | J1 1 x (1 core, 1 GPU), 50 s, 500 W
#   J2 1 x (1 core, 1 GPU), 50 s, 10 W
# t=0: J0 on nodes 0, 1; J1 fails the cap (1,100 W): the head. Its shadow time is the
#   step at 30 (1,100 <= 2,000 W, node 3), not J0's end at 100; extra at 30: node 2
#   whole, node 3 without its GPU. J2 (610 W now, 1,110 W at 30) fits node 3 now but
#   ends at 50 > 30 and needs the GPU the head holds then: it waits (with a shadow
#   time of 100 it would end before it and start now).
# t=30: J1 starts on node 3; J2 has no GPU. t=80: J1 ends: J2 starts on node 3.
def test_easy_pc_shadow_time_at_a_cap_step_on_nodes() -> None:
    jobs = hand_jobs([(0, 2, 4, 0, 100), (0, 1, 1, 1, 50), (0, 1, 1, 1, 50)])
    watts = np.array([600.0, 500.0, 10.0])
    jobs.columns.update(power_mean=watts, power_max=watts, power_std=np.zeros(3))
    for cls in (EasyPC, ReferenceEasyPC):
        r = Simulation(small_platform(), jobs, cls(), power_predictor=make_power_predictor(
            "real"), cap=PowerCap.from_steps([(0, 1000.0), (30, 2000.0)])).run()
        assert r.start.tolist() == [0, 30, 80]
        assert [nodes_of(r, j) for j in range(3)] == [[0, 1], [3], [3]]


# Knapsack (value = wait), check mean:
#   K0 at 0: 2 x 4 cores, 100 s, 600 W | K1 at 0: 1 x (1 core, 1 GPU), 50 s, 500 W
#   K2 at 10: 1 x 4 cores, 100 s, 100 W | K3 at 20: 3 x 4 cores, 10 s, 30 W
# value / weight = wait / mean power, descending, ties in queue order; stop at the
# first job that does not fit.
# t=0: both ratios 0: K0 starts on nodes 0, 1 (600 W); K1: 1,100 W > 1,000: stop.
# t=10: K1 10/500 = 0.02 before K2 0/100 = 0: K1 fails the cap: stop (K2 waits though
#   node 2 and the power would take it).
# t=20: K2 10/100 = 0.1, K1 20/500 = 0.04, K3 0: K2 starts on node 2 (700 W); K1
#   fails the cap: stop.
# t=100: K0 ends (100 W). K3 80/30 first: nodes 0, 1, 3 (130 W); K1 100/500: 630 W is
#   under the cap but node 3's cores are taken: it waits for nodes: stop.
# t=110: K3 ends: K1 starts on node 3.
KNAPSACK_ROWS = [(0, 2, 4, 0, 100), (0, 1, 1, 1, 50), (10, 1, 4, 0, 100), (20, 3, 4, 0, 10)]
KNAPSACK_WATTS = [600, 500, 100, 30]
KNAPSACK_START = [0, 110, 20, 100]
KNAPSACK_NODES = [[0, 1], [3], [2], [0, 1, 3]]


@pytest.mark.parametrize("cls", [Knapsack, ReferenceKnapsack])
def test_knapsack_hand_computed_schedule_on_nodes(cls) -> None:
    r = run_capped(hand_jobs(KNAPSACK_ROWS), KNAPSACK_WATTS, cls(value="wait"))
    assert r.start.tolist() == KNAPSACK_START
    assert [nodes_of(r, j) for j in range(4)] == KNAPSACK_NODES


def test_the_allocator_parameter_places_the_jobs() -> None:
    """``allocator`` is the dispatcher's. J0 (2 cores) goes to node 0 and J1 (3 cores)
    to node 1 under both allocators; J2 (1 core): first-fit takes node 0 (the first with
    room, 2 cores free), best-fit node 1 (the fewest free cores, 1)."""
    rows = [(0, 1, 2, 0, 10), (0, 1, 3, 0, 10), (0, 1, 1, 0, 10)]
    for allocator, j2 in (("first-fit", [0]), ("best-fit", [1])):
        r = run_capped(hand_jobs(rows), [10, 10, 10], EasyPC(allocator=allocator))
        assert [nodes_of(r, j) for j in range(3)] == [[0], [1], j2]
    with pytest.raises(InputError, match="allocator"):
        EasyPC(allocator="no-such").validate()


# --------------------------------------------------------------------- random instances
@st.composite
def node_cases(draw: st.DrawFn):
    """A small multi-resource platform (cores, GPUs, memory on 2-3 node types), 6-20
    contending jobs with whole-watt power columns, and a cap schedule that binds."""
    types = [NodeType("cpu", draw(st.integers(1, 3)), {"core": 8, "gpu": 0, "mem": 16}),
             NodeType("gpu", draw(st.integers(1, 2)), {"core": 4, "gpu": 2, "mem": 32})]
    if draw(st.booleans()):
        types.append(NodeType("fat", 1, {"core": 16, "gpu": 0, "mem": 64}))
    platform = Platform(tuple(types), name="nodes")
    n = draw(st.integers(6, 20))
    gaps = draw(st.lists(st.sampled_from([0, 0, 0, 1, 5, 20]), min_size=n, max_size=n))
    submit = np.cumsum(gaps).tolist()
    units = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    cores = draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=n, max_size=n))
    gpus = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=n, max_size=n))
    mem = draw(st.lists(st.sampled_from([1, 4, 8, 16]), min_size=n, max_size=n))
    run = draw(st.lists(st.integers(0, 120), min_size=n, max_size=n))
    factor = draw(st.lists(st.sampled_from([1.0, 1.0, 2.0, 0.5]), min_size=n, max_size=n))
    requested = [int(np.ceil(r * f)) for r, f in zip(run, factor, strict=True)]
    mean = draw(st.lists(st.integers(0, 400), min_size=n, max_size=n))
    peak = [m + d for m, d in zip(mean, draw(st.lists(st.sampled_from([0, 20, 150]),
                                                       min_size=n, max_size=n)),
                                  strict=True)]
    std = draw(st.lists(st.sampled_from([0, 10, 60]), min_size=n, max_size=n))
    watts = draw(st.integers(300, 1200))
    kind = draw(st.sampled_from(["from0", "window", "steps"]))
    if kind == "from0":
        cap = PowerCap.window(float(watts))
    elif kind == "window":
        t0 = draw(st.integers(0, 60))
        cap = PowerCap.window(float(watts), t0, t0 + draw(st.integers(20, 300)))
    else:
        times = sorted(draw(st.lists(st.integers(0, 300), min_size=1, max_size=4,
                                     unique=True)))
        cap = PowerCap.from_steps([(t, draw(st.sampled_from([None, float(watts),
                                                            float(watts // 2)])))
                                   for t in times])
    jobs = JobTable.from_arrays(submit=submit, run=run, units=units,
                                requested_time=requested,
                                resources={"core": cores, "gpu": gpus, "mem": mem})
    jobs.columns.update(power_mean=np.array(mean, dtype=np.float64),
                        power_max=np.array(peak, dtype=np.float64),
                        power_std=np.array(std, dtype=np.float64))
    return platform, jobs, cap


def _simulate(platform, jobs, dispatcher, cap):
    return Simulation(platform, jobs, dispatcher,
                      power_predictor=make_power_predictor("real"), cap=cap).run()


def _check_node_capacity(r, platform: Platform) -> None:
    """No node's capacity of any resource exceeded at any instant (ends release before
    starts at equal times)."""
    names = platform.resource_names
    req = np.stack([r.jobs.resources.get(x, np.zeros(len(r.jobs), np.int64))
                    for x in names], axis=1)
    cap = platform.capacity_matrix()
    events = []
    for j, a in r.allocations.items():
        if r.start[j] < 0 or r.end[j] <= r.start[j]:
            continue
        used = np.zeros_like(cap)
        used[a.nodes] = a.counts[:, None] * req[j][None, :]
        events.append((int(r.end[j]), 0, -used))
        events.append((int(r.start[j]), 1, used))
    in_use = np.zeros_like(cap)
    for _, _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        in_use += delta
        assert (in_use <= cap).all(), np.argwhere(in_use > cap).tolist()


def _check_cap(r, cap: PowerCap, check: str) -> None:
    """Inside each capped span [t0, t1) with cap C, at every start time t: the jobs
    started since t0 and running at t pass ``check`` at C, and so does everything
    running at t when one of them is (the last one started was checked with all of
    them). With ``max`` and ``real`` this is the real power's bound."""
    p = r.power_prediction
    mean, peak, std = p["mean"].tolist(), p["max"].tolist(), p["std"].tolist()
    ran = np.flatnonzero((r.start >= 0) & (r.end > r.start)).tolist()

    def value(rows: list[int]) -> float:
        if check == "max":
            return float(sum(peak[j] for j in rows))
        mu = float(sum(mean[j] for j in rows))
        z = CHECKS[check]
        return mu if z is None else mu + z * float(np.sqrt(sum(std[j] ** 2 for j in rows)))

    steps = list(cap.steps)
    for k, (t0, c) in enumerate(steps):
        if c is None:
            continue
        t1 = steps[k + 1][0] if k + 1 < len(steps) else np.inf
        for t in sorted({t0, *(int(r.start[j]) for j in ran if t0 <= r.start[j] < t1)}):
            on = [j for j in ran if r.start[j] <= t < r.end[j]]
            inside = [j for j in on if r.start[j] >= t0]
            assert value(inside) <= c, (t, inside, c)
            if inside:
                assert value(on) <= c, (t, on, c)


SEEN: Counter = Counter()
NODE_DISPATCHERS = [(EasyPC, ReferenceEasyPC, {"order": "fcfs"}),
                    (EasyPC, ReferenceEasyPC, {"order": "saf"}),
                    (Knapsack, ReferenceKnapsack, {"value": "wait"}),
                    (Knapsack, ReferenceKnapsack, {"value": "stretch"})]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=node_cases(), which=st.integers(0, 3),
       check=st.sampled_from(["max", "max", "mean", "gaussian95"]),
       allocator=st.sampled_from(["first-fit", "first-fit", "best-fit", "consolidate"]))
def test_node_level_capacity_cap_and_determinism(case, which: int, check: str,
                                                 allocator: str) -> None:
    platform, jobs, cap = case
    fast, reference, params = NODE_DISPATCHERS[which]
    r = _simulate(platform, jobs, fast(check=check, allocator=allocator, **params), cap)
    started = r.start >= 0
    assert (r.start[started] >= jobs["submit"][started]).all()
    for j in np.flatnonzero(started).tolist():
        assert int(r.allocations[j].counts.sum()) == int(jobs["units"][j])
    _check_node_capacity(r, platform)
    _check_cap(r, cap, check)
    again = _simulate(platform, jobs, fast(check=check, allocator=allocator, **params), cap)
    ref = _simulate(platform, jobs, reference(check=check, allocator=allocator, **params),
                    cap)
    for other in (again, ref):
        assert np.array_equal(r.start, other.start) and np.array_equal(r.end, other.end)
        assert all(np.array_equal(r.allocations[j].nodes, other.allocations[j].nodes)
                   for j in r.allocations)
    plain = Simulation(platform, jobs, EASY(allocator=allocator)).run()
    if not np.array_equal(plain.start, r.start):
        SEEN["the cap changed the schedule"] += 1
        event("the cap changed the schedule")
    if r.reject_reason and any("fails the" in m for m in r.reject_reason.values()):
        SEEN["power rejection"] += 1
    order = np.argsort(jobs["submit"], kind="stable")
    s = r.start[order]
    if any(s[k] >= 0 and (s[:k][s[:k] >= 0] > s[k]).any() for k in range(len(s))):
        SEEN["a later job started first"] += 1


def test_the_interesting_node_cases_happened() -> None:
    # runs after the property test in the same process (pytest keeps file order)
    if not SEEN:
        test_node_level_capacity_cap_and_determinism()
    for key in ("the cap changed the schedule", "power rejection",
                "a later job started first"):
        assert SEEN[key] > 0, (key, dict(SEEN))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=node_cases(), order=st.sampled_from(["fcfs"]))
def test_a_cap_that_never_binds_gives_node_level_easy(case, order: str) -> None:
    """EASY+PC FCFS under a cap no job set reaches decides every pass with its own
    node-level planner (not EASY's), and yet gives node-level EASY's schedule and
    placements: the shadow time, the extra resources and the backfill rule agree."""
    platform, jobs, _ = case
    for cls in (EasyPC, ReferenceEasyPC):
        r = _simulate(platform, jobs, cls(order=order), PowerCap.window(1e12))
        plain = Simulation(platform, jobs, EASY()).run()
        assert np.array_equal(r.start, plain.start)
        assert all(np.array_equal(r.allocations[j].nodes, plain.allocations[j].nodes)
                   and np.array_equal(r.allocations[j].counts, plain.allocations[j].counts)
                   for j in plain.allocations)


@pytest.mark.parametrize("cls", [EasyPC, Knapsack, ReferenceEasyPC, ReferenceKnapsack])
def test_check_dispatcher_runs_the_node_level_case(cls) -> None:
    out = check_dispatcher(cls, workloads=4)
    assert out["requires"]["node_level"] is True
    assert out["workloads"] == 4 + 2  # the node-level workloads ran too
