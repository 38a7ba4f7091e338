"""The native counting engine (``dispatchlab._core``, the Rust crate in ``rust/``) gives
the schedules of the Python engine.

Hypothesis-generated counting workloads (zero-second jobs, equal submit times, run
times past the requested time, jobs larger than the platform) run through
:class:`~dispatchlab.sim.engine.Simulation` and through
``dispatchlab._core.simulate_counting`` under every native dispatcher and parameter
set of :data:`SPECS` (fifo; sjf and ljf, strict and skipping; easy with the backfill
orders fifo and sjf, K reservations and static priorities in both scopes;
conservative): start, end and status of every job, and the run's event and pass
counts, must be identical. The golden counting cases of
``tests/integration/test_golden_schedules.py`` (``kth-pooled/fifo`` and
``kth-pooled/easy``) are checked the same way, with their recorded counts.

Skipped when the extension is not built (``make native`` builds it in place).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import golden
from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.dispatch.orderings import OrderKeys, make_ordering
from dispatchlab.predict import make_predictor
from test_golden_schedules import GOLDEN_COUNTS

core = pytest.importorskip(
    "dispatchlab._core",
    reason="the native core dispatchlab._core is not built (build it with `make native`)")


#: the native dispatchers and parameter sets the differential test draws from (the
#: Python class's parameters; orderings other than fifo / sjf / priority reach the core
#: as per-job rank arrays, see :func:`native_params`)
SPECS = [
    ("fifo", {}),
    ("sjf", {}),
    ("sjf", {"skip": True}),
    ("ljf", {}),
    ("ljf", {"skip": True}),
    ("easy", {}),
    ("easy", {"order": "sjf"}),
    ("easy", {"reservations": 2}),
    ("easy", {"reservations": 3, "order": "sjf"}),
    ("easy", {"order": "random:seed=3"}),
    ("easy", {"priority": "random:seed=3"}),
    ("easy", {"priority": "random:seed=5", "scope": "queue"}),
    ("easy", {"priority": "random:seed=7", "scope": "queue", "order": "sjf",
              "reservations": 2}),
    ("easy", {"priority": "walltime", "scope": "queue", "order": "priority"}),
    ("conservative", {}),
    ("conservative", {"order": "sjf"}),
]


def python_run(jobs: JobTable, cores: int, dispatcher: str, predictor: str = "walltime",
               overrun: str = "run", params: dict | None = None):
    """The Python engine's ``(start, end, status, events, passes)`` for ``jobs``."""
    r = Simulation(Platform.pooled(cores), jobs, make_dispatcher(dispatcher, **(params or {})),
                   make_predictor(predictor), overrun=overrun).run()
    return r.start, r.end, r.status, r.events, r.passes


def static_rank(spec: str, jobs: JobTable, estimate: np.ndarray) -> np.ndarray:
    """The rank of every job row in the static ordering ``spec`` over all jobs (the
    order of any subset sorted by it; estimates as the predictor gives them)."""
    ordering = make_ordering(spec)
    ordering.start(type("View", (), {"jobs": jobs})())
    n = len(jobs)
    keys = OrderKeys(np.arange(n), 0, np.asarray(jobs["submit"], dtype=np.int64), estimate,
                     np.ones(n, dtype=np.int64), np.zeros(n))
    rank = np.empty(n, dtype=np.int64)
    rank[ordering.sort(keys)] = np.arange(n)
    return rank


def native_params(params: dict, jobs: JobTable, predictor: str, overrun: str) -> dict:
    """``params`` for the core: orderings other than fifo, fcfs, sjf and priority as
    rank arrays."""
    run, req = jobs["run"], jobs["requested_time"]
    estimate = req if predictor == "walltime" else (np.minimum(run, req) if overrun == "kill"
                                                     else run)
    return {k: static_rank(v, jobs, np.asarray(estimate, dtype=np.int64))
            if k in ("order", "priority") and v not in ("fifo", "fcfs", "sjf", "priority")
            else v for k, v in params.items()}


def native_run(jobs: JobTable, cores: int, dispatcher: str, predictor: str = "walltime",
               overrun: str = "run", params: dict | None = None):
    """The native engine's ``(start, end, status, events, passes)`` for ``jobs``."""
    col = {c: np.ascontiguousarray(jobs[c], dtype=np.int64)
           for c in ("submit", "run", "requested_time", "units")}
    return core.simulate_counting(col["submit"], col["run"], col["requested_time"],
                                  col["units"], cores, dispatcher, predictor=predictor,
                                  overrun=overrun, counts=True,
                                  params=native_params(params or {}, jobs, predictor, overrun))


def assert_same(py, native) -> None:
    for name, a, b in zip(("start", "end", "status"), py[:3], native[:3], strict=True):
        np.testing.assert_array_equal(a, b, err_msg=f"{name} differs")
    assert tuple(py[3:]) == tuple(native[3:]), "(events, passes) differ"


@st.composite
def counting_workloads(draw, min_cores: int = 1, max_cores: int = 8, max_jobs: int = 40):
    """``(jobs, cores)``: up to ``max_jobs`` jobs on ``min_cores``-``max_cores`` cores;
    many jobs share a submit time, some run 0 s, some outlive their requested time (an
    expired estimate), and some need more cores than the platform has (rejected)."""
    cores = draw(st.integers(min_cores, max_cores))
    n = draw(st.integers(1, max_jobs))
    gaps = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 5, 17]), min_size=n, max_size=n))
    run = draw(st.lists(st.sampled_from([0, 0, 1, 3, 10, 25, 60]), min_size=n, max_size=n))
    req = draw(st.lists(st.sampled_from([0, 1, 5, 10, 30, 60, 90]), min_size=n, max_size=n))
    units = draw(st.lists(st.one_of(st.integers(1, 3), st.integers(1, cores + 1)),
                          min_size=n, max_size=n))
    jobs = JobTable.from_arrays(submit=np.cumsum(gaps), run=run, units=units,
                                requested_time=req)
    return jobs, cores


def test_native_engine_matches_python_engine():
    """Identical results on every drawn workload, and the draws reached the cases that
    matter (each counted over the search and required at least a few times)."""
    seen = dict.fromkeys(("rejected", "zero-second", "expired", "backfilled", "tied"), 0)
    # how many drawn workloads ran under each spec and moved a job ahead of an older one
    jumped = dict.fromkeys(range(len(SPECS)), 0)
    drawn = dict.fromkeys(range(len(SPECS)), 0)

    @settings(max_examples=600, deadline=None)
    @given(workload=counting_workloads(), spec=st.sampled_from(range(len(SPECS))),
           predictor=st.sampled_from(["walltime", "real"]),
           overrun=st.sampled_from(["run", "kill"]))
    def check(workload, spec, predictor, overrun):
        jobs, cores = workload
        dispatcher, params = SPECS[spec]
        py = python_run(jobs, cores, dispatcher, predictor, overrun, params)
        assert_same(py, native_run(jobs, cores, dispatcher, predictor, overrun, params))
        start, end, status = py[:3]
        ran = status != 2
        seen["rejected"] += bool((~ran).any())
        seen["zero-second"] += bool((ran & (end == start)).any())
        # a job still running past its planned end (start + max(estimate, 1))
        est = jobs["requested_time"] if predictor == "walltime" else jobs["run"]
        seen["expired"] += bool((ran & (end > start + np.maximum(est, 1))).any())
        # a job started before an earlier-submitted one (EASY's backfilling)
        order = start[ran]
        seen["backfilled"] += bool((np.diff(order) < 0).any())
        jumped[spec] += bool((np.diff(order) < 0).any())
        drawn[spec] += 1
        seen["tied"] += bool((np.diff(jobs["submit"]) == 0).any())

    check()
    assert min(seen.values()) >= 10, seen
    # every spec but fifo reordered jobs in some draws (its rules were exercised)
    assert min(v for s, v in jumped.items() if SPECS[s][0] != "fifo") >= 1, str((jumped, drawn))


@settings(max_examples=150, deadline=None)
@given(workload=counting_workloads(min_cores=8, max_cores=32, max_jobs=150),
       spec=st.sampled_from([s for s, (name, _) in enumerate(SPECS) if name != "fifo"]),
       predictor=st.sampled_from(["walltime", "real"]))
def test_native_engine_matches_python_engine_on_longer_queues(workload, spec, predictor):
    """Longer queues on more cores (several backfilled jobs in one pass, long waits)."""
    jobs, cores = workload
    dispatcher, params = SPECS[spec]
    assert_same(python_run(jobs, cores, dispatcher, predictor, "run", params),
                native_run(jobs, cores, dispatcher, predictor, "run", params))


@pytest.mark.parametrize("seed", range(4))
def test_easy_on_queues_that_grow_long_and_shrink_short(seed):
    """Bursts of hundreds of jobs at once, then quiet: the queue grows past the length
    at which the core keeps its waiting tree (256 jobs) and shrinks below the one at
    which it sets it aside (64) again and again; EASY (fifo scan, so the core switches
    between the tree and a walk of the queue) gives the Python engine's schedule."""
    rng = np.random.default_rng(seed)
    bursts = 6
    size = rng.integers(300, 500, bursts)
    submit = np.concatenate([np.full(k, b * 4000) + rng.integers(0, 2, k).cumsum()
                             for b, k in enumerate(size)])
    n = len(submit)
    run = rng.integers(0, 60, n)
    requested = run + rng.integers(-10, 80, n).clip(min=-run)  # some expire
    units = np.where(rng.random(n) < 0.7, rng.integers(1, 4, n), rng.integers(1, 33, n))
    jobs = JobTable.from_arrays(submit=submit, run=run, units=units,
                                requested_time=requested)
    py = python_run(jobs, 32, "easy")
    assert_same(py, native_run(jobs, 32, "easy"))
    # the queue crossed both lengths, more than once
    t = np.concatenate([submit, py[0]])
    step = np.concatenate([np.ones(n), -np.ones(n)])
    order = np.lexsort((-step, t))
    waiting = np.cumsum(step[order])
    long_, short = waiting >= 256, waiting <= 64
    rises = np.count_nonzero(long_[1:] & ~long_[:-1])
    assert rises >= 2 and short[-1], (rises, waiting.max())


@pytest.mark.traces
@pytest.mark.parametrize("dispatcher", ["fifo", "easy"])
def test_golden_counting_cases(traces_dir, dispatcher):
    """``kth-pooled/<dispatcher>`` of the golden set: the first 3,000 KTH-SP2 jobs on
    100 pooled cores; the same schedule as the Python engine and the recorded counts."""
    name = f"kth-pooled/{dispatcher}"
    platform, jobs, _ = golden.workload(golden.cases()[name][0])
    assert platform.is_pooled
    cores = int(platform.capacity_matrix()[:, platform.resource_names.index("core")].sum())
    native = native_run(jobs, cores, dispatcher)
    assert_same(python_run(jobs, cores, dispatcher), native)
    assert tuple(native[3:]) == GOLDEN_COUNTS[name]


def test_simulations_in_threads_share_no_state():
    """Four native runs at once on threads (the GIL is released during a run) give the
    results of the same runs one after another."""
    rng = np.random.default_rng(7)
    n = 20_000
    runs = []
    for k in range(4):
        submit = np.sort(rng.integers(0, n * 20, n))
        run = rng.integers(0, 3000, n)
        requested = run + rng.integers(-100, 2000, n).clip(min=-run)
        units = rng.integers(1, 33 + k, n)
        runs.append((submit, run, requested, units, 64, ("fifo", "easy")[k % 2]))
    alone = [core.simulate_counting(*args, counts=True) for args in runs]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda args: core.simulate_counting(*args, counts=True),
                                  runs))
    for a, b in zip(alone, together, strict=True):
        assert_same(a, b)


def test_bad_input_is_a_value_error_naming_the_field():
    a = np.array([3, 1], dtype=np.int64)
    one = np.ones(2, dtype=np.int64)
    with pytest.raises(ValueError, match=r"^submit: job row 1 is submitted before"):
        core.simulate_counting(a, one, one, one, 2, "easy")
    with pytest.raises(ValueError, match=r'^dispatcher: no native dispatcher "lifo"'):
        core.simulate_counting(one, one, one, one, 2, "lifo")
    with pytest.raises(ValueError, match=r"^skip: easy has no parameter skip"):
        core.simulate_counting(one, one, one, one, 2, "easy", params={"skip": True})
    with pytest.raises(ValueError, match=r"^reservations: reservations must be an integer >= 1"):
        core.simulate_counting(one, one, one, one, 2, "easy", params={"reservations": 0})
    with pytest.raises(ValueError, match=r"^order: order=priority needs a priority other"):
        core.simulate_counting(one, one, one, one, 2, "easy", params={"order": "priority"})
    with pytest.raises(ValueError, match=r"^priority: has 3 ranks for 2 jobs"):
        core.simulate_counting(one, one, one, one, 2, "easy",
                               params={"priority": np.arange(3), "scope": "queue"})
    with pytest.raises(ValueError, match=r'^params: no parameter "explain"'):
        core.simulate_counting(one, one, one, one, 2, "fifo", params={"explain": True})


def test_a_panic_in_the_core_is_a_runtime_error_not_an_abort():
    with pytest.raises(RuntimeError, match=r"^the native core panicked \(a bug\): boom$"):
        core._panic_for_test("boom")
