"""The native engine on node-level platforms gives the schedules of the Python engine.

Hypothesis-generated node-level runs: heterogeneous node types with several resources
(core, gpu, mem, some capacities 0), node weights and efficiency ranks that differ or
not, a partition (the request fitting's internal ``@nodes:K`` resource on some nodes),
jobs of several units asking several resources per unit, zero-second jobs, equal
submit times, jobs outliving their estimates, ``overrun`` run or kill, and jobs no
empty node can host (rejected). Each run goes through
:class:`~dispatchlab.sim.engine.Simulation` and :func:`~dispatchlab.sim.native.
simulate_native` under fifo, sjf and ljf (strict and skipping) with every native
allocator: the written job table (start, end, status, estimate, allocation, reject
reason and the derived columns) must be identical, and so must the event and pass
counts.

Skipped when the extension is not built (``make native`` builds it in place).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform import NodeType
from dispatchlab.platform.files import read_platform
from dispatchlab.predict import make_predictor
from dispatchlab.run.build import build
from dispatchlab.run.config import Component, PlatformChoice, RunConfig, TraceSource
from dispatchlab.sim import native
from dispatchlab.sim.engine import is_node_level
from dispatchlab.sim.native import (
    NATIVE_ALLOCATORS,
    NativeCoreError,
    native_reason,
    simulate_native,
)
from dispatchlab.workload.load import load_trace

core = pytest.importorskip(
    "dispatchlab._core",
    reason="the native core dispatchlab._core is not built (build it with `make native`)")

#: the node-level dispatchers and parameter sets drawn (each with every allocator)
SPECS = [("fifo", {}), ("sjf", {}), ("sjf", {"skip": True}), ("ljf", {}),
         ("ljf", {"skip": True})]
ALLOCATORS = sorted(NATIVE_ALLOCATORS)
PARTITION = "@nodes:0"


@st.composite
def node_workloads(draw, max_jobs: int = 30):
    """``(platform, jobs)``: 1-3 node types of 1-4 nodes (core, gpu, mem; weights and
    ranks that may differ; the first type alone in partition ``@nodes:0`` when drawn)
    and up to ``max_jobs`` jobs, some asking the partition."""
    partition = draw(st.booleans())
    types = []
    for k in range(draw(st.integers(1, 3))):
        cap = {"core": draw(st.integers(1, 8)), "gpu": draw(st.sampled_from([0, 0, 1, 2])),
               "mem": draw(st.sampled_from([16, 64]))}
        if partition:
            cap[PARTITION] = 1_000_000 if k == 0 else 0
        types.append(NodeType(f"t{k}", draw(st.integers(1, 4)), cap,
                              efficiency_rank=draw(st.sampled_from([0, 1])),
                              weight=draw(st.sampled_from([1, 1, 2, 5]))))
    platform = Platform(tuple(types))
    n = draw(st.integers(1, max_jobs))
    ints = lambda values: draw(st.lists(st.sampled_from(values), min_size=n,  # noqa: E731
                                        max_size=n))
    gaps = ints([0, 0, 0, 1, 2, 5, 17])
    run = ints([0, 0, 1, 3, 10, 25, 60])
    req = ints([0, 1, 5, 10, 30, 60, 90])
    units = draw(st.lists(st.one_of(st.integers(1, 3), st.integers(1, 12)), min_size=n,
                          max_size=n))
    per_core = np.array(ints([0, 1, 1, 1, 2, 3]), dtype=np.int64)
    gpu = np.array(ints([0, 0, 0, 1]), dtype=np.int64)
    mem = np.array(ints([0, 0, 8, 32]), dtype=np.int64)
    per_core[(per_core == 0) & (gpu == 0) & (mem == 0)] = 1  # every unit asks something
    resources = {"core": per_core, "gpu": gpu, "mem": mem}
    if partition:
        resources[PARTITION] = np.array(ints([0, 1]), dtype=np.int64)
    jobs = JobTable.from_arrays(submit=np.cumsum(gaps), run=run, units=units,
                                requested_time=req, resources=resources)
    if draw(st.booleans()):  # fitted, some jobs unservable (rejected with the reason)
        unservable = np.array(ints(["", "", "", "asks what no node has"]), dtype=object)
        jobs = JobTable(columns={**jobs.columns, "unservable": unservable},
                        resources=jobs.resources, info=jobs.info)
    return platform, jobs


def both(platform, jobs, dispatcher, predictor="walltime", overrun="run"):
    """The Python engine's and the native engine's results of one run."""
    make = lambda: (make_dispatcher(dispatcher[0], **dispatcher[1]),  # noqa: E731
                    make_predictor(predictor))
    py = Simulation(platform, jobs, *make(), overrun=overrun).run()
    assert native_reason(platform, jobs, *make(), overrun=overrun) is None
    return py, simulate_native(platform, jobs, *make(), overrun=overrun)


def assert_same(py, native) -> None:
    """Identical job tables (every written column) and counts."""
    for name in ("start", "end", "status", "estimate"):
        np.testing.assert_array_equal(getattr(py, name), getattr(native, name),
                                      err_msg=f"{name} differs")
    assert py.allocations.keys() == native.allocations.keys()
    for row, a in py.allocations.items():
        b = native.allocations[row]
        assert (a.nodes.tolist(), a.counts.tolist()) == (b.nodes.tolist(),
                                                         b.counts.tolist()), row
        assert b.nodes.dtype == a.nodes.dtype and b.counts.dtype == a.counts.dtype
    assert py.reject_reason == native.reject_reason
    assert (py.events, py.passes) == (native.events, native.passes)
    assert py.to_arrow().equals(native.to_arrow())


def test_native_node_level_runs_match_the_python_engine():
    """Identical results on every drawn run, and the draws reached the cases that
    matter (each counted over the search and required several times)."""
    seen = dict.fromkeys(("rejected", "zero-second", "expired", "tied", "spread",
                          "shared-node", "weights", "partition", "reordered", "killed",
                          "unservable"), 0)

    @settings(max_examples=500, deadline=None)
    @given(workload=node_workloads(), spec=st.sampled_from(SPECS),
           allocator=st.sampled_from(ALLOCATORS),
           predictor=st.sampled_from(["walltime", "real"]),
           overrun=st.sampled_from(["run", "kill"]))
    def check(workload, spec, allocator, predictor, overrun):
        platform, jobs = workload
        assert is_node_level(platform, jobs)
        dispatcher = (spec[0], {**spec[1], "allocator": allocator})
        py, native = both(platform, jobs, dispatcher, predictor, overrun)
        assert_same(py, native)
        start, end, status = py.start, py.end, py.status
        ran = status != 2
        seen["rejected"] += bool((~ran).any())
        seen["killed"] += bool((status == 1).any())
        seen["zero-second"] += bool((ran & (end == start)).any())
        est = py.estimate
        seen["expired"] += bool((ran & (end > start + np.maximum(est, 1))).any())
        seen["tied"] += bool((np.diff(jobs["submit"]) == 0).any())
        seen["reordered"] += bool((np.diff(start[ran]) < 0).any())
        allocs = list(py.allocations.values())
        seen["spread"] += any(len(a.nodes) > 1 for a in allocs)
        seen["shared-node"] += any(int(c) > 1 for a in allocs for c in a.counts)
        seen["weights"] += platform.has_weights() and bool(allocs)
        seen["partition"] += PARTITION in jobs.resources and bool(
            (jobs.resources[PARTITION][ran] > 0).any())
        seen["unservable"] += "unservable" in jobs.columns and bool(
            (jobs.columns["unservable"] != "").any())

    check()
    assert min(seen.values()) >= 10, seen


@settings(max_examples=60, deadline=None)
@given(workload=node_workloads(max_jobs=120), spec=st.sampled_from(SPECS),
       allocator=st.sampled_from(ALLOCATORS))
def test_longer_queues(workload, spec, allocator):
    """Longer queues (many jobs waiting, several placed in one pass)."""
    platform, jobs = workload
    assert_same(*both(platform, jobs, (spec[0], {**spec[1], "allocator": allocator})))


@pytest.mark.parametrize("seed", range(4))
def test_many_resources(seed):
    """Nodes with 8 to 16 resources (consolidate's shares then summed by numpy's
    pairwise rule, which the core follows), under every native allocator."""
    rng = np.random.default_rng(seed)
    names = ["core"] + [f"r{k}" for k in range(int(rng.integers(7, 16)))]
    types = tuple(NodeType(f"t{k}", int(rng.integers(1, 6)),
                           {**{r: int(rng.choice([0, 3, 7, 10, 13, 64])) for r in names},
                            "core": int(rng.integers(1, 17))},
                           weight=int(rng.choice([1, 2])),
                           efficiency_rank=int(rng.integers(0, 2)))
                  for k in range(int(rng.integers(2, 5))))
    n = 80
    resources = {r: rng.choice([0, 0, 1, 2, 5], n) for r in names}
    resources["core"] = rng.integers(1, 4, n)
    jobs = JobTable.from_arrays(submit=np.sort(rng.integers(0, 400, n)),
                                run=rng.integers(0, 60, n), units=rng.integers(1, 6, n),
                                requested_time=rng.integers(0, 90, n), resources=resources)
    for allocator in ALLOCATORS:
        assert_same(*both(Platform(types), jobs, ("sjf", {"skip": True,
                                                          "allocator": allocator})))


CLUSTER = Path(__file__).resolve().parent.parent / "data" / "cluster"


@pytest.mark.parametrize("platform_file", ["cluster.toml", "slurm.conf"])
@pytest.mark.parametrize("trace", ["jobs.sacct", "pbs"])
@pytest.mark.parametrize("dispatcher", [
    Component("fifo"), Component("sjf", {"skip": True, "allocator": "best-fit"}),
    Component("ljf", {"allocator": "consolidate"})], ids=["fifo", "sjf-skip", "ljf"])
def test_fitted_cluster_logs(trace, platform_file, dispatcher):
    """The hand-made sacct export and PBS log of ``tests/data/cluster`` fitted to their
    heterogeneous platform (partitions, typed GPUs, memory, an exclusive job, jobs the
    platform cannot serve) give the same schedule on both engines."""
    results = {}
    for engine in ("python", "native"):
        config = RunConfig(trace=TraceSource(str(CLUSTER / trace)),
                           platform=PlatformChoice(str(CLUSTER / platform_file)),
                           dispatcher=dispatcher, engine=engine)
        run = build(config, report=lambda kind, text: None)
        assert run.simulation.engine == engine
        results[engine] = run.simulation.run()
    py, native = results["python"], results["native"]
    assert py.reject_reason and any(r.startswith("@") for r in
                                    py.platform.resource_names)
    assert_same(py, native)


def test_node_level_reasons(monkeypatch):
    """What is not native on node-level platforms, each with its reason: a native
    dispatcher out of NODE_LEVEL (the table decides), jobs asking for nothing, a
    cluster log not fitted."""
    platform = Platform.homogeneous(4, 8, mem=32)
    jobs = JobTable.from_arrays(submit=[0, 1], run=[5, 5], units=[1, 2],
                                requested_time=[5, 5])
    fifo, sjf = make_dispatcher("fifo"), make_dispatcher("sjf")
    assert native_reason(platform, jobs, fifo) is None
    assert native_reason(platform, jobs, sjf) is None
    monkeypatch.setattr(native, "NODE_LEVEL", frozenset({"fifo"}))
    assert native_reason(platform, jobs, sjf) == (
        "dispatcher 'sjf' is not native on node-level platforms yet")
    assert native_reason(platform, jobs, fifo) is None
    assert native_reason(Platform.pooled(8), jobs, sjf) is None  # counting: not asked
    nothing = JobTable.from_arrays(submit=[0, 1], run=[5, 5], units=[1, 2],
                                   requested_time=[5, 5],
                                   resources={"core": np.array([1, 0]),
                                              "mem": np.array([4, 0])})
    assert native_reason(platform, nothing, fifo) == (
        "jobs asking for no resource per unit are not native")
    unfitted = load_trace(CLUSTER / "jobs.sacct")
    assert native_reason(read_platform(CLUSTER / "cluster.toml"), unfitted, fifo) == (
        "jobs read from a cluster log and not fitted to the platform")


def test_a_broken_rule_in_the_core_is_a_native_core_error(monkeypatch):
    """A core error (here: a rank array of the wrong length handed to the binding)
    surfaces as NativeCoreError, a RuntimeError, not as a wrong schedule."""
    platform = Platform.homogeneous(2, 4, mem=8)
    jobs = JobTable.from_arrays(submit=[0, 1], run=[5, 5], units=[1, 2],
                                requested_time=[5, 5])
    real = core.simulate_nodes

    def broken(*args, **kwargs):
        kwargs["ranks"] = np.zeros(1, dtype=np.int64)  # one rank for two nodes
        return real(*args, **kwargs)

    monkeypatch.setattr(core, "simulate_nodes", broken)
    with pytest.raises(NativeCoreError, match="ranks: has 1 values for 2 nodes"):
        simulate_native(platform, jobs, make_dispatcher("fifo"))


def test_node_level_runs_in_threads_share_no_state():
    """Four node-level runs at once on threads (the GIL is released during a run) give
    the results of the same runs one after another."""
    rng = np.random.default_rng(3)
    n, nodes = 5000, 40
    capacity = np.tile(np.array([[16, 2, 64]], dtype=np.int64), (nodes, 1))
    runs = []
    for k in range(4):
        run = rng.integers(0, 3000, n)
        requests = np.stack([rng.integers(1, 5, n), rng.integers(0, 2, n),
                             rng.integers(0, 17, n)], axis=1).astype(np.int64)
        runs.append((np.sort(rng.integers(0, n * 30, n)), run,
                     run + rng.integers(0, 500, n), rng.integers(1, 9, n), requests,
                     capacity, ("fifo", "sjf", "ljf", "fifo")[k]))
    params = {"allocator": "best-fit"}
    alone = [core.simulate_nodes(*args, core=0, params=params) for args in runs]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda args: core.simulate_nodes(*args, core=0,
                                                                  params=params), runs))
    for a, b in zip(alone, together, strict=True):
        assert len(a) == len(b) == 8
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)


def test_binding_checks_the_matrices():
    one = np.ones(2, dtype=np.int64)
    cap = np.array([[4, 8]], dtype=np.int64)
    with pytest.raises(ValueError, match=r"^requests: is 1 x 2, not jobs x resources"):
        core.simulate_nodes(one, one, one, one, np.ones((1, 2), np.int64), cap, "fifo")
    with pytest.raises(ValueError, match=r"^capacity: row 0 has a negative amount -4"):
        core.simulate_nodes(one, one, one, one, np.ones((2, 2), np.int64), -cap, "fifo")
    with pytest.raises(ValueError, match=r'^allocator: no native allocator "worst-fit"'):
        core.simulate_nodes(one, one, one, one, np.ones((2, 2), np.int64), cap, "fifo",
                            params={"allocator": "worst-fit"})
    with pytest.raises(ValueError, match=r'^dispatcher: no native dispatcher "lifo"'):
        core.simulate_nodes(one, one, one, one, np.ones((2, 2), np.int64), cap, "lifo")
    start, _, status, events, passes, offsets, nodes, counts = core.simulate_nodes(
        one, one, one, one, np.ones((2, 2), np.int64), cap, "fifo", core=0)
    assert start.tolist() == [1, 1] and status.tolist() == [0, 0]
    assert (events, passes) == (4, 2)
    assert (offsets.tolist(), nodes.tolist(), counts.tolist()) == ([0, 1, 2], [0, 0], [1, 1])
