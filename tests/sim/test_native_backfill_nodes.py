"""Node-level EASY and conservative on the native engine give the Python engine's
schedules.

Hypothesis-generated multi-resource workloads (cores, GPUs, memory on two or three
node types, optionally with Slurm node weights and efficiency ranks; bursts of
submissions so queues grow; zero-second jobs; run times past the requested time, so
estimates run out) run through :class:`~dispatchlab.sim.engine.Simulation` and
:func:`~dispatchlab.sim.native.simulate_native` under node-level ``easy`` (K
reservations, backfill orders fifo, sjf and a static ordering, static queue
priorities in both scopes) and ``conservative`` with every built-in allocator: start,
end, status and allocation of every job and the run's event and pass counts must be
identical (``overrun`` run or kill, predictors ``walltime`` and ``real``). Busier
clusters (jobs of many one-core units, long requested times, submissions while jobs
run) reach the passes where a job starts beside the reservations of jobs queued before
it.

Skipped when the extension is not built (``make native`` builds it in place).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform import NodeType
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power.eurora_synth import eurora_instance
from dispatchlab.predict import make_predictor
from dispatchlab.sim.native import native_reason, simulate_native

pytest.importorskip("dispatchlab._core",
                    reason="the native core dispatchlab._core is not built (build it with "
                    "`make native`)")

ALLOCATORS = ("first-fit", "best-fit", "consolidate", "energy-consolidate")

#: the dispatcher parameter sets drawn (each with every allocator)
SPECS = [
    ("easy", {}),
    ("easy", {"order": "sjf"}),
    ("easy", {"reservations": 2}),
    ("easy", {"reservations": 3, "order": "sjf"}),
    ("easy", {"order": "random:seed=3"}),
    ("easy", {"priority": "random:seed=3"}),
    ("easy", {"priority": "random:seed=5", "scope": "queue"}),
    ("easy", {"priority": "walltime", "scope": "queue", "order": "sjf",
              "reservations": 2}),
    ("conservative", {}),
    ("conservative", {"order": "sjf"}),
]


@st.composite
def node_workloads(draw, max_jobs: int = 40):
    """``(platform, jobs)``: two or three node types with cores, GPUs and memory
    (weights and efficiency ranks drawn), bursts of submissions, per-unit requests from
    a few classes, zero-second jobs and run times past the requested time."""
    weights = draw(st.booleans())
    types = [NodeType("a", draw(st.integers(1, 3)), {"core": 8, "gpu": 0, "mem": 32},
                      weight=draw(st.integers(1, 3)) if weights else 1,
                      efficiency_rank=draw(st.integers(0, 1))),
             NodeType("b", draw(st.integers(1, 2)), {"core": 16, "gpu": 2, "mem": 64},
                      weight=draw(st.integers(1, 3)) if weights else 1)]
    if draw(st.booleans()):
        types.append(NodeType("c", 1, {"core": 32, "gpu": 0, "mem": 128},
                              efficiency_rank=1))
    platform = Platform(tuple(types), name="native-nodes")
    n = draw(st.integers(1, max_jobs))
    gaps = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 5, 17]), min_size=n, max_size=n))
    table = [(1, 0, 2), (2, 0, 4), (4, 1, 8), (8, 0, 16), (2, 1, 1), (3, 0, 30)]
    cls = draw(st.lists(st.integers(0, len(table) - 1), min_size=n, max_size=n))
    units = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    run = draw(st.lists(st.sampled_from([0, 0, 1, 3, 10, 25, 60]), min_size=n, max_size=n))
    req = draw(st.lists(st.sampled_from([0, 1, 5, 10, 30, 60, 90]), min_size=n, max_size=n))
    jobs = JobTable.from_arrays(
        submit=np.cumsum(gaps), run=run, units=units, requested_time=req,
        resources={"core": [table[c][0] for c in cls], "gpu": [table[c][1] for c in cls],
                   "mem": [table[c][2] for c in cls]})
    return platform, jobs


#: the parameter sets of the busy clusters: conservative (whose plan may be kept between
#: passes) and EASY (one or several reservations)
BUSY_SPECS = [("conservative", {}), ("conservative", {"order": "sjf"}), ("easy", {}),
              ("easy", {"reservations": 3})]


@st.composite
def busy_clusters(draw, max_jobs: int = 80):
    """``(platform, jobs)``: 5 to 16 nodes of two types (8 or 4 cores, GPUs and memory,
    weights and ranks drawn), jobs of 1 to 32 one-core units (some with a GPU or
    memory) whose requested times exceed their runs, submitted while others run: queues
    with reservations and passes with only submissions, where jobs start beside
    reservations of jobs before them in the queue."""
    types = (NodeType("big", draw(st.integers(2, 6)), {"core": 8, "gpu": 2, "mem": 64},
                      weight=draw(st.sampled_from([1, 5])), efficiency_rank=1),
             NodeType("small", draw(st.integers(3, 10)), {"core": 4, "gpu": 0, "mem": 16}))
    platform = Platform(types, name="busy-nodes")
    n = draw(st.integers(10, max_jobs))
    gaps = draw(st.lists(st.integers(0, 400), min_size=n, max_size=n))
    run = draw(st.lists(st.integers(0, 3000), min_size=n, max_size=n))
    slack = draw(st.lists(st.sampled_from([0, 100, 1000, 5000]), min_size=n, max_size=n))
    units = draw(st.lists(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 24, 32]), min_size=n,
                          max_size=n))
    gpu = draw(st.lists(st.sampled_from([0, 0, 0, 1]), min_size=n, max_size=n))
    mem = draw(st.lists(st.sampled_from([0, 1, 2, 4]), min_size=n, max_size=n))
    jobs = JobTable.from_arrays(
        submit=np.cumsum(gaps), run=run, units=units,
        requested_time=[r + x for r, x in zip(run, slack, strict=True)],
        resources={"core": [1] * n, "gpu": gpu, "mem": mem})
    return platform, jobs


def _schedule(result) -> tuple:
    allocs = {int(j): (a.nodes.tolist(), a.counts.tolist())
              for j, a in result.allocations.items()}
    return (result.start.tolist(), result.end.tolist(), result.status.tolist(), allocs,
            int(result.events), int(result.passes))


def _both(platform, jobs, name: str, params: dict, predictor: str,
          overrun: str = "run") -> tuple:
    disp = make_dispatcher(name, **params)
    pred = make_predictor(predictor)
    reason = native_reason(platform, jobs, disp, pred, overrun=overrun)
    assert reason is None, reason
    want = _schedule(Simulation(platform, jobs, make_dispatcher(name, **params),
                                make_predictor(predictor), overrun=overrun).run())
    got = _schedule(simulate_native(platform, jobs, disp, pred, overrun=overrun))
    return want, got


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=node_workloads(), spec=st.sampled_from(range(len(SPECS))),
       allocator=st.sampled_from(ALLOCATORS), predictor=st.sampled_from(["walltime", "real"]),
       overrun=st.sampled_from(["run", "kill"]))
def test_native_node_backfilling_matches_python_engine(workload, spec, allocator, predictor,
                                                       overrun):
    platform, jobs = workload
    name, params = SPECS[spec]
    want, got = _both(platform, jobs, name, {**params, "allocator": allocator}, predictor,
                      overrun)
    assert got == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=node_workloads(max_jobs=150), spec=st.sampled_from(range(len(SPECS))),
       allocator=st.sampled_from(ALLOCATORS))
def test_native_node_backfilling_on_longer_queues(workload, spec, allocator):
    platform, jobs = workload
    name, params = SPECS[spec]
    want, got = _both(platform, jobs, name, {**params, "allocator": allocator}, "walltime")
    assert got == want


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workload=busy_clusters(), spec=st.sampled_from(BUSY_SPECS),
       allocator=st.sampled_from(ALLOCATORS))
def test_native_node_backfilling_on_busy_clusters(workload, spec, allocator):
    platform, jobs = workload
    name, params = spec
    want, got = _both(platform, jobs, name, {**params, "allocator": allocator}, "walltime")
    assert got == want


def test_eurora_instance_both_engines() -> None:
    """A seeded Eurora-like instance (64 nodes; cores, GPUs, MICs, memory): node-level
    EASY (fifo, sjf, K = 2) and conservative give the same schedules natively."""
    jobs = eurora_instance(300, 1800, "uniform", seed=4)
    platform = eurora_platform()
    for name, params in [("easy", {}), ("easy", {"order": "sjf"}),
                         ("easy", {"reservations": 2}), ("conservative", {})]:
        want, got = _both(platform, jobs, name, params, "walltime")
        assert got == want, (name, params)
