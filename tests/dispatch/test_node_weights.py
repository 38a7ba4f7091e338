"""Node weights (Slurm ``Weight``): every allocator takes nodes of lower weight first,
its own rule among nodes of equal weight; equal weights change nothing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Simulation
from dispatchlab.dispatch import DISPATCHERS, EASY, FIFO, Conservative
from dispatchlab.dispatch.allocators import ALLOCATORS, make_allocator, units_per_node
from dispatchlab.platform.platform import NodeType, Platform
from dispatchlab.power import PowerCap
from dispatchlab.predict.power.predictors import make_power_predictor
from dispatchlab.sim.duration import NoSlowdown


def _platform(*types: tuple[int, int, int]) -> Platform:
    """Node types of (count, cores, weight), named t0, t1, ..."""
    return Platform(tuple(NodeType(f"t{k}", n, {"core": c}, weight=w)
                          for k, (n, c, w) in enumerate(types)))


def _jobs(submit, run, cores, units=None) -> JobTable:
    n = len(submit)
    return JobTable.from_arrays(submit=submit, run=run, units=units or [1] * n,
                                requested_time=run, resources={"core": cores})


def _alloc(result) -> list[str]:
    return result.to_arrow()["allocation"].to_pylist()


def test_first_fit_takes_lower_weights_first() -> None:
    # Nodes 0-1: 4 cores, weight 10; node 2: 8 cores, weight 1; node 3: 4 cores,
    # weight 5. First-fit order with weights: 2, 3, 0, 1.
    # J1 (1 x 4) -> node 2 (4 left); J2 (1 x 4) -> node 2 (full); J3 (1 x 2) -> node 3
    # (2 left); J4 (2 units x 2) -> one unit on node 3, the next on node 0.
    # Without weights (index order): J1 -> 0, J2 -> 1, J3 -> 2, J4 -> 2 (two units).
    jobs = _jobs([0, 0, 0, 0], [100] * 4, [4, 4, 2, 2], units=[1, 1, 1, 2])
    weighted = _platform((2, 4, 10), (1, 8, 1), (1, 4, 5))
    plain = _platform((2, 4, 1), (1, 8, 1), (1, 4, 1))
    assert _alloc(Simulation(weighted, jobs, FIFO()).run()) == ["2:1", "2:1", "3:1",
                                                                 "3:1,0:1"]
    assert _alloc(Simulation(plain, jobs, FIFO()).run()) == ["0:1", "1:1", "2:1", "2:2"]


def test_best_fit_weights_first_then_fewest_free() -> None:
    # Node 0: 4 cores, weight 2; nodes 1-2: 4 cores, weight 1.
    # J1 (1 core): weight-1 nodes 1, 2 both have 4 free -> index -> node 1 (3 left).
    # J2 (2 cores): node 1 (3 free) is fuller than node 2 (4) -> node 1 (1 left).
    # J3 (2 cores): node 1 has 1 -> node 2 (the only weight-1 node with room; 2 left).
    # J4 (3 cores): no weight-1 node has 3 -> node 0.
    # Without weights: J1 -> 0 (3 left), J2 -> 0 (fullest that fits, 1 left),
    # J3 -> 1 (nodes 1 and 2 tie at 4: index), J4 -> 2.
    jobs = _jobs([0, 0, 0, 0], [100] * 4, [1, 2, 2, 3])
    weighted = _platform((1, 4, 2), (2, 4, 1))
    plain = _platform((1, 4, 7), (2, 4, 7))
    bf = FIFO(allocator="best-fit")
    assert _alloc(Simulation(weighted, jobs, bf).run()) == ["1:1", "1:1", "2:1", "0:1"]
    assert _alloc(Simulation(plain, jobs, bf).run()) == ["0:1", "0:1", "1:1", "2:1"]


@pytest.mark.parametrize("dispatcher", [EASY, Conservative])
def test_weights_change_the_schedule(dispatcher) -> None:
    # First-fit. Node 0: 8 cores, weight 2; node 1: 4 cores, weight 1.
    # J1 (1 x 4 cores, 100 s) at 0 goes to node 1 (lower weight), so J2 (1 x 8 cores,
    # 10 s) at 1 finds node 0 whole and starts at 1.
    # Same weights: J1 on node 0 leaves 4 + 4 free cores, no node has 8: J2 waits for
    # J1's end at 100.
    jobs = _jobs([0, 1], [100, 10], [4, 8])
    weighted = _platform((1, 8, 2), (1, 4, 1))
    r = Simulation(weighted, jobs, dispatcher()).run()
    assert r.start.tolist() == [0, 1]
    assert _alloc(r) == ["1:1", "0:1"]
    plain = _platform((1, 8, 1), (1, 4, 1))
    r = Simulation(plain, jobs, dispatcher()).run()
    assert r.start.tolist() == [0, 100]


def _started(allocator: str, platform: Platform):
    alloc = make_allocator(allocator)
    alloc.start(platform.capacity_matrix())
    alloc.use_platform(platform)
    return alloc


def test_consolidate_allocators_prefer_lower_weights() -> None:
    # Nodes 0, 1: weight 3, node 2: weight 1, 4 cores each. Free: node 0 has 1 core
    # (the smallest share), node 1 has 2, node 2 has 4. One unit of 1 core: consolidate
    # alone picks node 0 (smallest share); with weights node 2 (the only weight-1 node).
    # Five units of 1 core: node 2 takes 4, then the weight-3 nodes in share order:
    # node 0 (1 free) takes the fifth.
    platform = _platform((2, 4, 3), (1, 4, 1))
    free = np.array([[1], [2], [4]], dtype=np.int64)
    for name in ("consolidate", "energy-consolidate"):
        alloc = _started(name, platform)
        a = alloc.allocate(np.array([1]), 1, free)
        assert a is not None and a.nodes.tolist() == [2], name
        b = alloc.allocate(np.array([1]), 5, free)
        assert b is not None and b.nodes.tolist() == [2, 0], name
        assert b.counts.tolist() == [4, 1], name
        same = _started(name, _platform((2, 4, 3), (1, 4, 3)))
        c = same.allocate(np.array([1]), 1, free)
        assert c is not None and c.nodes.tolist() == [0], name


def test_energy_consolidate_weights_before_efficiency() -> None:
    # Node 0: rank 0 (efficient), weight 5; node 1: rank 1, weight 1. Weights decide.
    platform = Platform((NodeType("eff", 1, {"core": 4}, efficiency_rank=0, weight=5),
                         NodeType("slow", 1, {"core": 4}, efficiency_rank=1, weight=1)))
    free = np.array([[4], [4]], dtype=np.int64)
    a = _started("energy-consolidate", platform).allocate(np.array([1]), 1, free)
    assert a is not None and a.nodes.tolist() == [1]


def test_equal_weights_set_no_order() -> None:
    platform = _platform((2, 4, 9), (1, 8, 9))
    for name in ALLOCATORS:
        alloc = _started(name, platform)
        assert alloc.node_weight_ is None, name
        assert getattr(alloc, "order_", None) is None, name


def test_every_placing_dispatcher_honours_weights() -> None:
    # One job of 1 x 2 cores on nodes 0-1 (weight 9) and node 2 (weight 1): every
    # dispatcher that places jobs with an allocator puts it on node 2 (its allocator
    # learnt the weights through use_platform before its first allocate).
    platform = _platform((2, 4, 9), (1, 4, 1))
    jobs = _jobs([0], [100], [2])
    checked = []
    for name in sorted(DISPATCHERS):
        d = DISPATCHERS[name]()
        if not d.requires.node_level or "allocator" not in d.get_params():
            continue
        model = NoSlowdown() if d.requires.slows_running_jobs else None
        power: dict = {}
        if d.requires.power_predictions:  # easy-pc, knapsack: a cap with room for the job
            jobs.columns.update(power_mean=np.array([100.0]), power_max=np.array([100.0]),
                                power_std=np.zeros(1))
            power = {"power_predictor": make_power_predictor("real"),
                     "cap": PowerCap.window(1000.0)}
        r = Simulation(platform, jobs, d, duration_model=model, **power).run()
        assert _alloc(r) == ["2:1"], name
        checked.append(name)
    assert {"easy", "conservative", "fifo", "sjf", "bf", "prb", "pcp", "hcp", "dvfs",
            "ls", "dec", "easy-pc", "knapsack"} <= set(checked)


@st.composite
def weighted_instances(draw):
    """A free matrix (nodes x core, mem), node weights with ties, a request and units."""
    n = draw(st.integers(2, 8))
    weights = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    cores = draw(st.lists(st.integers(1, 8), min_size=n, max_size=n))
    free = np.array([[draw(st.integers(0, c)), draw(st.integers(0, 16))] for c in cores],
                    dtype=np.int64)
    request = np.array([draw(st.integers(1, 4)), draw(st.integers(0, 4))], dtype=np.int64)
    units = draw(st.integers(1, 12))
    return weights, cores, free, request, units


@settings(max_examples=200, deadline=None)
@given(weighted_instances(), st.sampled_from(sorted(ALLOCATORS)))
def test_no_heavier_node_while_a_lighter_one_has_room(instance, name) -> None:
    # With differing weights: when the allocator places a job, every node lighter than
    # the heaviest node it uses is filled to what it can host (units_per_node), and no
    # node exceeds its room; with equal weights it places as with no weights at all.
    weights, cores, free, request, units = instance
    platform = Platform(tuple(NodeType(f"n{k}", 1, {"core": c, "mem": 16}, weight=w)
                              for k, (c, w) in enumerate(zip(cores, weights, strict=True))))
    alloc = _started(name, platform).allocate(request, units, free)
    fit = units_per_node(request, free)
    if alloc is None:
        assert fit.sum() < units
        return
    used = dict(zip(alloc.nodes.tolist(), alloc.counts.tolist(), strict=True))
    assert sum(used.values()) == units and all(used[k] <= fit[k] for k in used)
    if platform.has_weights():
        heaviest = max(weights[k] for k in used)
        for k in range(len(weights)):
            if weights[k] < heaviest:
                assert used.get(k, 0) == fit[k], (k, used, fit.tolist(), weights)
    else:
        plain = Platform(tuple(NodeType(f"n{k}", 1, {"core": c, "mem": 16})
                               for k, c in enumerate(cores)))
        again = _started(name, plain).allocate(request, units, free)
        assert again is not None
        assert again.nodes.tolist() == alloc.nodes.tolist()
        assert again.counts.tolist() == alloc.counts.tolist()
