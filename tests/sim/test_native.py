"""``dispatchlab.sim.native``: which runs are native (:func:`native_reason`) and the
native run's result, which equals the Python engine's field for field
(:func:`simulate_native`, :class:`NativeSimulation`).

Skipped when the extension is not built (``make native`` builds it in place).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.dispatch.backfill import EASY
from dispatchlab.platform import NodeType
from dispatchlab.predict import make_predictor
from dispatchlab.sim import native
from dispatchlab.sim.native import (
    NativeCoreError,
    NativeSimulation,
    native_reason,
    simulate_native,
)
from test_native_engine import counting_workloads

core = pytest.importorskip(
    "dispatchlab._core",
    reason="the native core dispatchlab._core is not built (build it with `make native`)")

#: the fields equal in both engines' results (the wall-clock ones are not)
SAME = ("dispatcher", "predictor", "overrun", "reject_reason", "allocations", "events",
        "passes", "finished", "extra", "dispatcher_facts", "segments", "power_prediction",
        "cap", "power_series", "power_period", "input_jobs", "input_rows",
        "throttling_without_slowdown")
ARRAYS = ("start", "end", "status", "estimate")


def workload(seed: int = 3, n: int = 400, cores: int = 16) -> tuple[Platform, JobTable]:
    """Contended pooled jobs: equal submit times, 0-second jobs, expired estimates and
    jobs larger than the platform (rejected)."""
    rng = np.random.default_rng(seed)
    run = rng.choice([0, 0, 5, 60, 300, 900], n)
    jobs = JobTable.from_arrays(
        submit=np.sort(rng.integers(0, n * 40, n) // 20 * 20), run=run,
        units=rng.integers(1, cores + 3, n),
        requested_time=(run * rng.choice([0.5, 1, 2, 4], n)).astype(np.int64),
        user=rng.integers(1, 5, n))
    return Platform.pooled(cores), jobs


@pytest.mark.parametrize("dispatcher", ["fifo", "easy", "easy:allocator=best-fit",
                                        "easy:priority=fifo:scope=queue"])
@pytest.mark.parametrize("predictor", ["walltime", "real"])
@pytest.mark.parametrize("overrun", ["run", "kill"])
def test_native_result_equals_the_python_engines(dispatcher, predictor, overrun):
    platform, jobs = workload()
    d, p = make_dispatcher(dispatcher), make_predictor(predictor)
    assert native_reason(platform, jobs, d, p, overrun=overrun) is None
    py = Simulation(platform, jobs, d, p, overrun=overrun).run()
    nat = simulate_native(platform, jobs, d, p, overrun=overrun)
    assert (py.engine, nat.engine) == ("python", "native")
    for name in ARRAYS:
        a, b = getattr(py, name), getattr(nat, name)
        assert a.dtype == b.dtype, name
        np.testing.assert_array_equal(a, b, err_msg=name)
    for name in SAME:
        assert getattr(py, name) == getattr(nat, name), name
    assert nat.jobs is jobs and nat.platform is platform
    assert (py.status == 2).any() and (py.status == 0).any()  # the workload rejects some
    assert nat.decision_times.shape == (0,) and nat.wall_seconds > 0
    assert py.to_arrow().equals(nat.to_arrow())


def test_native_simulation_has_the_simulation_interface():
    platform, jobs = workload(n=50)
    calls = []
    sim = NativeSimulation(platform, jobs, make_dispatcher("easy"),
                           progress=lambda k, n: calls.append((k, n)))
    assert (sim.engine, sim.counting, sim.dispatcher.name) == ("native", True, "easy")
    result = sim.run()
    assert calls == [(50, 50)] and result.engine == "native"
    with pytest.raises(RuntimeError, match="runs once"):
        sim.run()


def test_reasons():
    platform, jobs = workload(n=20)
    easy, fifo = make_dispatcher("easy"), make_dispatcher("fifo")

    def reason(dispatcher=easy, predictor=None, plat=platform, js=jobs, **kw):
        return native_reason(plat, js, dispatcher, predictor, **kw)

    assert reason() is None and reason(fifo, make_predictor("real")) is None
    for spec in ("sjf", "ljf:skip=True", "conservative", "easy:order=sjf",
                 "easy:reservations=3", "easy:priority=walltime:scope=queue",
                 "conservative:order=random"):
        assert reason(make_dispatcher(spec)) is None, spec
    assert reason(make_dispatcher("prb")) == "dispatcher 'prb' is not native yet"
    assert reason(make_dispatcher("easy:order=urgency")) == (
        "dispatcher 'easy' with order='urgency' is not native yet (native: order=fifo, "
        "sjf, walltime, ewt, random, priority)")
    assert reason(make_dispatcher("easy:priority=slowdown:scope=queue")).startswith(
        "dispatcher 'easy' with priority='slowdown' is not native yet")
    assert "explain=True" in reason(make_dispatcher("easy:explain=True"))
    assert reason(make_dispatcher("easy:allocator=energy-consolidate")) is None
    spec = "dispatchlab.dispatch.allocators:FirstFit"  # a class by path: not by name
    assert f"allocator={spec!r}" in reason(make_dispatcher("easy", allocator=spec))
    # a predictor the core does not implement runs in Python, called by the core,
    # unless the dispatcher needs every estimate before the run
    history = make_predictor("history")
    assert reason(predictor=history) is None
    assert reason(make_dispatcher("easy:priority=walltime"), history) == (
        "predictor 'history' with priority='walltime' is not native yet (the ordering "
        "needs every estimate before the run)")

    class MyEasy(EASY):  # same name, any rule may differ: a Python dispatcher (View)
        pass

    assert reason(MyEasy()) is None
    assert reason(MyEasy(), history) is None  # (its View sees estimates at submission)
    MyEasy.__module__ = "dispatchlab.dispatch.backfill"  # one of dispatchlab's own
    assert "is not the native 'easy'" in reason(MyEasy())
    mine = make_dispatcher("easy")
    mine.call_on_empty_queue = True  # asks for passes the core does not make
    assert "requirements" in reason(mine)
    assert reason(max_wall=10.0) == "wall-clock budgets (max_wall) are not native yet"
    assert reason(cap=object()) == "power caps are not native yet"
    assert reason(power_predictor=object()) == "power predictors are not native yet"
    assert reason(duration_model=object()) == "duration models are not native yet"
    assert reason(pinned={0: None}) == "hot starts are not native yet"
    # a resource beside the cores makes placement matter (node-level)
    nodes = Platform((NodeType("n", 4, {"core": 8, "mem": 32}),))
    assert reason(fifo, plat=nodes) is None  # (tests/sim/test_native_nodes.py: the rest)
    gpu = JobTable.from_arrays(submit=[0, 1], run=[1, 1], units=[1, 1],
                               requested_time=[1, 1],
                               resources={"core": np.ones(2, np.int64), "gpu": np.array([0, 1])})
    assert reason(js=gpu) == "the jobs request resource 'gpu', which the platform lacks"


def test_not_built_is_a_reason(monkeypatch):
    platform, jobs = workload(n=5)
    monkeypatch.setattr(native, "_core", None)
    assert native_reason(platform, jobs, make_dispatcher("fifo")) == native.NOT_BUILT


def test_a_run_that_is_not_native_is_refused_naming_why():
    platform, jobs = workload(n=5)
    with pytest.raises(InputError, match="native engine cannot run this: dispatcher 'prb'"):
        NativeSimulation(platform, jobs, make_dispatcher("prb"))
    with pytest.raises(InputError, match="native engine cannot run this"):
        simulate_native(platform, jobs, make_dispatcher("fifo"), max_wall=5.0)


def test_bad_jobs_get_the_python_engines_error():
    jobs = JobTable.from_arrays(submit=[0, 1], run=[5, -2], units=[1, 1],
                                requested_time=[5, 5])
    platform = Platform.pooled(4)
    with pytest.raises(InputError) as py:
        Simulation(platform, jobs, make_dispatcher("easy"))
    with pytest.raises(InputError) as nat:
        simulate_native(platform, jobs, make_dispatcher("easy"))
    assert str(nat.value) == str(py.value) and "negative run time" in str(nat.value)


def test_a_panic_in_the_core_is_a_native_core_error(monkeypatch):
    platform, jobs = workload(n=5)

    def panics(*args, **kwargs):
        return core._panic_for_test("boom")

    monkeypatch.setattr(core, "simulate_counting", panics)
    with pytest.raises(NativeCoreError, match=r"^the native core panicked \(a bug\): boom$"):
        simulate_native(platform, jobs, make_dispatcher("easy"))


def test_drawn_workloads_give_the_same_job_table():
    """The per-job table (``jobs.parquet``'s columns) of hypothesis-drawn workloads
    (zero-second jobs, equal submit times, expired estimates, rejected jobs) is the
    same from both engines."""
    @settings(max_examples=60, deadline=None)
    @given(workload=counting_workloads(), dispatcher=st.sampled_from(["fifo", "easy"]),
           predictor=st.sampled_from(["walltime", "real"]),
           overrun=st.sampled_from(["run", "kill"]))
    def check(workload, dispatcher, predictor, overrun):
        jobs, cores = workload
        platform = Platform.pooled(cores)
        d, p = make_dispatcher(dispatcher), make_predictor(predictor)
        py = Simulation(platform, jobs, d, p, overrun=overrun).run()
        nat = simulate_native(platform, jobs, d, p, overrun=overrun)
        assert py.to_arrow().equals(nat.to_arrow())
        assert (py.events, py.passes, py.reject_reason) == (nat.events, nat.passes,
                                                            nat.reject_reason)

    check()
