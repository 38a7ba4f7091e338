"""Duration predictors written in Python on the native engine
(:mod:`dispatchlab.sim.native_predict`): the core calls them at submissions,
completions and expiries, and the schedules are the Python engine's.

Hypothesis-generated counting workloads (shared submit times, zero-second jobs, jobs
outliving their estimates, rejected jobs, several users) run through
:class:`~dispatchlab.sim.engine.Simulation` and :func:`~dispatchlab.sim.native.
simulate_native` under the native dispatchers that need no estimate before the run,
with dispatchlab's learning predictors (``history``, ``tsafrir``, ``inflated`` over
``history``, and over ``walltime``, whose static estimates the core gets at each
submission), the tutorial's class (``examples/custom_predictor.py``, which reads the
live start times) and this file's :class:`Odd` (its own expiry rule): start, end,
status, estimates and the event and pass counts must be identical. Node-level runs the
same way on the golden synthetic platform. Errors raised by a predictor are raised
unchanged, with the Python engine's lines.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import golden
import test_native_view as view_tests
from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.dispatch.base import DispatchError
from dispatchlab.predict import make_predictor
from dispatchlab.predict.duration.base import Predictor
from dispatchlab.sim.native import native_reason, simulate_native

pytest.importorskip(
    "dispatchlab._core",
    reason="the native core dispatchlab._core is not built (build it with `make native`)")

ROOT = Path(__file__).resolve().parents[2]


def _last_run() -> type[Predictor]:
    """The tutorial's class ``LastRun`` (``examples/custom_predictor.py``)."""
    spec = importlib.util.spec_from_file_location("custom_predictor",
                                                  ROOT / "examples" / "custom_predictor.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LastRun


LastRun = _last_run()


class Odd(Predictor):
    """A predictor of this file: the mean run time observed so far (3 s before any),
    and at expiry a few seconds more than the job has run, or None every third time
    (so the core's checks of a new estimate matter)."""

    name = "odd"

    def __init__(self) -> None:
        pass

    def start(self, context):
        super().start(context)
        self.total_, self.count_, self.expired_ = 0, 0, 0

    def predict(self, job, now):
        return self.total_ // self.count_ if self.count_ else 3

    def observe(self, job, now):
        self.total_ += now - int(self.context_.start_times[job])
        self.count_ += 1

    def on_expiry(self, job, now):
        self.expired_ += 1
        if self.expired_ % 3 == 0:
            return None
        return now - int(self.context_.start_times[job]) + self.expired_ % 4


#: the native dispatchers and parameters that run with a predictor written in Python
SPECS = [
    ("fifo", {}),
    ("sjf", {}),
    ("sjf", {"skip": True}),
    ("ljf", {"skip": True}),
    ("easy", {}),
    ("easy", {"order": "sjf"}),
    ("easy", {"reservations": 3, "order": "sjf"}),
    ("easy", {"priority": "sjf", "scope": "queue", "order": "priority"}),
    ("easy", {"priority": "sjf", "reservations": 2}),
    ("conservative", {}),
    ("conservative", {"order": "sjf"}),
]

PREDICTORS = {
    "history": lambda: make_predictor("history"),
    "tsafrir": lambda: make_predictor("tsafrir"),
    "last-run": LastRun,
    "odd": Odd,
    # static estimates of a predictor the core does not implement (no predict calls)
    "inflated-walltime": lambda: make_predictor("inflated", base="walltime", factor=1.5),
    "inflated-history": lambda: make_predictor("inflated", base="history", factor=1.3),
}


@st.composite
def workloads(draw, max_cores: int = 12, max_jobs: int = 60):
    """``(jobs, cores)``: jobs of up to 3 users on up to ``max_cores`` cores, many at
    the same time, some of 0 s, some outliving their requested time, some too wide."""
    cores = draw(st.integers(1, max_cores))
    n = draw(st.integers(1, max_jobs))
    gaps = draw(st.lists(st.sampled_from([0, 0, 1, 2, 5, 17, 40]), min_size=n, max_size=n))
    run = draw(st.lists(st.sampled_from([0, 1, 3, 10, 25, 60]), min_size=n, max_size=n))
    req = draw(st.lists(st.sampled_from([0, 1, 5, 10, 30, 60, 90]), min_size=n, max_size=n))
    units = draw(st.lists(st.integers(1, cores + 1), min_size=n, max_size=n))
    users = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    jobs = JobTable.from_arrays(submit=np.cumsum(gaps), run=run, units=units,
                                requested_time=req, user=users)
    return jobs, cores


def assert_same(platform, jobs, dispatcher, predictor, overrun="run") -> None:
    """Both engines give the same schedule, estimates and counts."""
    assert native_reason(platform, jobs, dispatcher, predictor, overrun=overrun) is None
    py = Simulation(platform, jobs, dispatcher, predictor, overrun=overrun).run()
    nat = simulate_native(platform, jobs, dispatcher, predictor, overrun=overrun)
    for name in ("start", "end", "status", "estimate"):
        np.testing.assert_array_equal(getattr(py, name), getattr(nat, name),
                                      err_msg=f"{name} differs")
    assert (py.events, py.passes) == (nat.events, nat.passes)
    assert py.allocations.keys() == nat.allocations.keys()
    for row, alloc in py.allocations.items():
        np.testing.assert_array_equal(alloc.nodes, nat.allocations[row].nodes)
        np.testing.assert_array_equal(alloc.counts, nat.allocations[row].counts)
    assert nat.engine == "native" and nat.predictor == py.predictor


def test_counting_runs_match_the_python_engine():
    """Identical results on every draw, and the draws reached expired estimates and
    backfilled jobs."""
    seen = {"expired": 0, "backfilled": 0}

    @settings(max_examples=300, deadline=None)
    @given(workload=workloads(), spec=st.sampled_from(range(len(SPECS))),
           predictor=st.sampled_from(sorted(PREDICTORS)),
           overrun=st.sampled_from(["run", "kill"]))
    def check(workload, spec, predictor, overrun):
        jobs, cores = workload
        name, params = SPECS[spec]
        p = PREDICTORS[predictor]()
        assert_same(Platform.pooled(cores), jobs, make_dispatcher(name, **params), p, overrun)
        r = Simulation(Platform.pooled(cores), jobs, make_dispatcher(name, **params),
                       p, overrun=overrun).run()
        ran = r.status != 2
        seen["expired"] += bool((ran & (r.end > r.start + np.maximum(r.estimate, 1))).any())
        seen["backfilled"] += bool((np.diff(r.start[ran]) < 0).any())

    check()
    assert min(seen.values()) >= 10, seen


@pytest.mark.parametrize("spec", ["fifo", "sjf", "easy", "conservative"])
@pytest.mark.parametrize("predictor", ["history", "last-run", "odd"])
def test_node_level_runs_match_the_python_engine(spec, predictor):
    platform, jobs = golden.synthetic_nodes(seed=3, n=120)
    for allocator in ("first-fit", "best-fit"):
        assert_same(platform, jobs, make_dispatcher(spec, allocator=allocator),
                    PREDICTORS[predictor]())


def test_native_reason_names_the_combinations_not_native():
    jobs = JobTable.from_arrays(submit=[0, 1], run=[5, 5], units=[1, 1],
                                requested_time=[10, 10], user=[1, 1])
    platform = Platform.pooled(2)
    history = make_predictor("history")
    assert native_reason(platform, jobs, make_dispatcher("easy"), history) is None
    assert native_reason(platform, jobs, make_dispatcher("easy", order="walltime"),
                         history) == ("predictor 'history' with order='walltime' is not "
                                      "native yet (the ordering needs every estimate "
                                      "before the run)")
    assert native_reason(platform, jobs, make_dispatcher("easy"), history) is None
    # under the static ordering with a native predictor it is native
    assert native_reason(platform, jobs, make_dispatcher("easy", order="walltime"),
                         make_predictor("real")) is None


class Raises(Predictor):
    """Raises ``error`` in the method ``where`` at the ``at``-th call of it."""

    name = "raises"

    def __init__(self, where: str = "predict", at: int = 2, error: str = "value") -> None:
        self.where, self.at, self.error = where, at, error

    def start(self, context):
        super().start(context)
        self.calls_ = 0

    def _maybe(self, where):
        if where == self.where:
            self.calls_ += 1
            if self.calls_ == self.at:
                if self.error == "bad":
                    return -5
                raise (ValueError if self.error == "value" else KeyError)(
                    f"{where} failed at call {self.calls_}")
        return None

    def predict(self, job, now):
        return self._maybe("predict") or 1

    def observe(self, job, now):
        self._maybe("observe")

    def on_expiry(self, job, now):
        self._maybe("on_expiry")
        return None


@pytest.mark.parametrize("where,error", [("predict", "value"), ("predict", "key"),
                                         ("predict", "bad"), ("observe", "value"),
                                         ("on_expiry", "key")])
def test_errors_of_the_predictor_are_raised_unchanged(where, error):
    jobs = JobTable.from_arrays(submit=[0, 1, 2, 3, 50], run=[5, 5, 5, 5, 5],
                                units=[1, 1, 1, 1, 1], requested_time=[10] * 5)
    platform = Platform.pooled(1)
    raised = []
    for run in (lambda d, p: Simulation(platform, jobs, d, p).run(),
                lambda d, p: simulate_native(platform, jobs, d, p)):
        with pytest.raises((ValueError, KeyError, DispatchError)) as info:
            run(make_dispatcher("easy"), Raises(where, 1 if where == "on_expiry" else 2,
                                                error))
        raised.append((type(info.value), str(info.value)))
    assert raised[0] == raised[1]
    if error == "bad":
        assert raised[0][0] is DispatchError and "predicted -5 for job 2" in raised[0][1]


# --- under dispatchers written in Python (the View: tests/sim/test_native_view.py) ----

@pytest.mark.parametrize("cls", [view_tests.WidestFirst, view_tests.HeadFirst,
                                 view_tests.PlacingHead, view_tests.Probe,
                                 view_tests.SparseProbe])
@pytest.mark.parametrize("predictor", ["history", "last-run", "odd"])
def test_python_dispatchers_with_python_predictors(cls, predictor):
    """The View's estimates are known from each job's submission on, as on the Python
    engine (the probe reads every member of the View at every pass)."""
    workloads = view_tests.contending_workloads(4)
    if cls in (view_tests.PlacingHead, view_tests.Probe, view_tests.SparseProbe):
        workloads += view_tests.node_workloads(3)
    for platform, jobs in workloads:
        if "user" not in jobs.columns:
            jobs = JobTable.from_arrays(**{c: jobs[c] for c in (
                "submit", "run", "units", "requested_time")},
                user=np.arange(len(jobs)) % 3, resources=dict(jobs.resources))
        dispatcher, p = cls(), PREDICTORS[predictor]()
        assert native_reason(platform, jobs, dispatcher, p) is None
        view_tests.assert_same(*view_tests.run_both(platform, jobs, dispatcher, p))


@settings(max_examples=150, deadline=None)
@given(workload=workloads(), cls=st.sampled_from([view_tests.HeadFirst, view_tests.Probe,
                                                  view_tests.SparseProbe]),
       predictor=st.sampled_from(sorted(PREDICTORS)), overrun=st.sampled_from(["run", "kill"]))
def test_python_dispatchers_with_python_predictors_on_drawn_workloads(workload, cls,
                                                                      predictor, overrun):
    jobs, cores = workload
    view_tests.assert_same(*view_tests.run_both(Platform.pooled(cores), jobs, cls(),
                                                PREDICTORS[predictor](), overrun))
