"""A researcher's own dispatcher or predictor: the examples shown by the tutorial
(docs/tutorials/extending.md) run, and the conformance checks accept correct classes and
catch broken ones."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from dispatchlab import Dispatcher, Platform, Predictor, Simulation
from dispatchlab.dispatch import DISPATCHERS, EASY, FIFO, Start, make_dispatcher
from dispatchlab.dispatch.backfill import ReferenceConservative, ReferenceEASY
from dispatchlab.dispatch.powercap.capped import ReferenceEasyPC, ReferenceKnapsack
from dispatchlab.predict import PREDICTORS
from dispatchlab.testing import check_dispatcher, check_predictor
from dispatchlab.workload.synthetic import generate_synthetic

ROOT = Path(__file__).resolve().parents[2]


def _load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["custom_dispatcher", "custom_predictor"])
def test_docs_show_the_example_classes_verbatim(name):
    source = (ROOT / "examples" / f"{name}.py").read_text()
    cls = re.search(r"^class .*?(?=\n\n\n)", source, re.S | re.M).group(0)
    page = (ROOT / "docs" / "tutorials" / "extending.md").read_text()
    assert cls in page, f"docs/tutorials/extending.md's copy of examples/{name}.py is out of date"


def test_custom_dispatcher_is_under_30_lines_passes_checks_and_runs():
    mod = _load_example("custom_dispatcher")
    source = (ROOT / "examples" / "custom_dispatcher.py").read_text()
    cls = re.search(r"^class .*?(?=\n\n\n)", source, re.S | re.M).group(0)
    assert len(cls.splitlines()) < 30
    report = check_dispatcher(mod.WidestFirst)
    assert report["jobs"] > 100
    jobs = generate_synthetic(500, cores=32, seed=2)
    result = Simulation(Platform.pooled(32), jobs, mod.WidestFirst(max_starts=3)).run()
    assert (result.start >= jobs["submit"]).all()
    assert repr(mod.WidestFirst(max_starts=3)) == "WidestFirst(max_starts=3)"


def test_custom_predictor_passes_checks_and_learns():
    mod = _load_example("custom_predictor")
    check_predictor(mod.LastRun)
    jobs = generate_synthetic(500, cores=32, seed=2)
    result = Simulation(Platform.pooled(32), jobs, EASY(), mod.LastRun()).run()
    # after the first completions, some estimates are below the wall-time
    assert (result.estimate < jobs["requested_time"]).any()


@pytest.mark.parametrize("name", sorted(DISPATCHERS))
def test_builtin_dispatchers_pass_the_checks(name):
    check_dispatcher(DISPATCHERS[name])


@pytest.mark.parametrize("cls", [ReferenceEASY, ReferenceConservative, ReferenceEasyPC,
                                 ReferenceKnapsack], ids=lambda c: c.__name__)
def test_reference_dispatchers_pass_the_checks(cls):
    # the plain classes the registered fast ones subclass, built by module:Class
    assert any(issubclass(d, cls) for d in DISPATCHERS.values())
    check_dispatcher(cls)
    assert type(make_dispatcher(f"{cls.__module__}:{cls.__name__}")) is cls


@pytest.mark.parametrize("name", sorted(PREDICTORS))
def test_builtin_predictors_pass_the_checks(name):
    check_predictor(PREDICTORS[name])


# ------------------------------------------------------------------ broken classes
class _NeverStarts(Dispatcher):
    def __init__(self):
        pass

    def dispatch(self, view):
        return []


class _Nondeterministic(Dispatcher):
    """Starts jobs that fit in a random order: different schedules from run to run."""

    def __init__(self):
        pass

    def dispatch(self, view):
        jobs, units, *_ = view.queue
        free = view.free_cores
        out = []
        for pos in np.random.default_rng().permutation(len(jobs)):
            if units[pos] <= free:
                free -= int(units[pos])
                out.append(Start(int(jobs[pos])))
        return out


class _ChangesParameter(FIFO):
    def __init__(self, allocator: str = "First-Fit"):
        self.allocator = allocator.lower()  # not stored as given: clone() would differ


class _LooksAhead(Predictor):
    """Predicts from the NEXT job's run time: uses the future."""

    def __init__(self):
        pass

    def predict(self, job, now):
        run = self.jobs_["run"]
        return int(run[job + 1]) if job + 1 < len(run) else 60


class _Negative(Predictor):
    def __init__(self):
        pass

    def predict(self, job, now):
        return -5


def test_checks_catch_a_dispatcher_that_never_starts_jobs():
    with pytest.raises(Exception, match="waiting forever"):
        check_dispatcher(_NeverStarts)


def test_checks_catch_a_nondeterministic_dispatcher():
    with pytest.raises(AssertionError, match="different schedules"):
        check_dispatcher(_Nondeterministic)


def test_checks_catch_a_parameter_not_stored_as_given():
    with pytest.raises(AssertionError, match="stored unchanged"):
        check_dispatcher(_ChangesParameter)


def test_checks_catch_a_predictor_that_looks_ahead():
    with pytest.raises(AssertionError, match="not causal"):
        check_predictor(_LooksAhead)


def test_checks_catch_negative_estimates():
    with pytest.raises(Exception, match="estimates are seconds >= 0"):
        check_predictor(_Negative)


def test_own_classes_by_module_path_in_the_cli_and_in_a_campaign(tmp_path, monkeypatch):
    """``module:Class`` names work wherever a registered name does, including campaign
    worker processes (fresh interpreters that import the module themselves)."""
    import os
    import subprocess
    import sys

    from campaign_helpers import stored_runs, synthetic_trace, write_campaign
    from dispatchlab.experiment.campaign import run_campaign

    examples = str(ROOT / "examples")
    monkeypatch.setenv("PYTHONPATH", examples + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.syspath_prepend(examples)
    trace = synthetic_trace(tmp_path, 800, seed=4, cores=64)
    proc = subprocess.run(
        [sys.executable, "-m", "dispatchlab.cli", "simulate", str(trace), "--nodes", "8",
         "--cores-per-node", "8", "--dispatcher", "custom_dispatcher:WidestFirst",
         "--predictor", "custom_predictor:LastRun"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "custom_dispatcher:WidestFirst" in proc.stdout
    path = write_campaign(tmp_path, f"""
[[traces]]
path = "{trace}"
[[platforms]]
cores = 64
[[dispatchers]]
label = "widest"
name = "custom_dispatcher:WidestFirst"
params = {{ max_starts = 10 }}
[[predictors]]
name = "custom_predictor:LastRun"
""")
    report = run_campaign(path, workers=1)
    assert report.executed == 1 and report.failed == 0, stored_runs(tmp_path / "results.duckdb")
    run = next(iter(stored_runs(tmp_path / "results.duckdb").values()))
    assert run["dispatcher"] == "widest" and run["jobs"] == 800


@pytest.mark.parametrize(("name", "needle"), [
    ("no_such_module:X", "cannot import module"),
    ("json:Nope", "has no 'Nope'"),
    ("json:JSONDecoder", "not a subclass of Dispatcher"),
])
def test_bad_module_paths_are_clear_errors(name, needle):
    from dispatchlab.core.errors import InputError
    from dispatchlab.dispatch import make_dispatcher

    with pytest.raises(InputError, match=needle):
        make_dispatcher(name)


BROKEN_DISPATCHER = """
from dispatchlab import Dispatcher
from dispatchlab.dispatch import Start


class StartsTwice(Dispatcher):
    \"\"\"Starts the first waiting job twice in one pass: a protocol break.\"\"\"

    name = "starts-twice"

    def dispatch(self, view):
        jobs = view.queue.jobs.tolist()
        return [Start(jobs[0]), Start(jobs[0])] if jobs else []
"""


def test_a_dispatcher_that_breaks_the_rules_is_one_error_line(tmp_path, monkeypatch, capsys):
    """A user's dispatcher whose decision the engine cannot apply ends ``simulate`` with
    one ``error:`` line naming the problem and exit status 1 (a bug in its code, not in
    the input); ``DISPATCHLAB_TRACEBACK=1`` shows the traceback instead."""
    from dispatchlab.cli import main
    from dispatchlab.dispatch.base import DispatchError

    (tmp_path / "broken_dispatcher.py").write_text(BROKEN_DISPATCHER)
    monkeypatch.syspath_prepend(str(tmp_path))
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 0 100 1 -1 -1 1 100 -1 1 1 -1 -1 -1 -1 -1 -1\n"
                     "2 5 0 100 1 -1 -1 1 100 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    args = ["simulate", str(trace), "--nodes", "1", "--cores-per-node", "4", "--dispatcher",
            "broken_dispatcher:StartsTwice", "--out", str(tmp_path / "out")]
    monkeypatch.delenv("DISPATCHLAB_TRACEBACK", raising=False)
    assert main(args) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, err
    assert errors[0].startswith("error: the dispatcher broke the engine's rules"), err
    assert "StartsTwice() started job 1, which is not waiting" in errors[0]
    assert "Traceback" not in err
    monkeypatch.setenv("DISPATCHLAB_TRACEBACK", "1")
    with pytest.raises(DispatchError):
        main(args)


def test_a_dispatcher_without_parameters_needs_no_init():
    """The smallest dispatcher is a class with ``dispatch`` only (no ``__init__``): it
    has no parameters, clones, prints as ``Name()`` and passes the conformance checks."""

    class InOrder(Dispatcher):
        name = "in-order"
        supports_node_level = False  # counts free cores: pooled platforms only

        def dispatch(self, view):
            out, free = [], view.free_cores
            for job, units in zip(view.queue.jobs.tolist(), view.queue.units.tolist(),
                                  strict=True):
                if units > free:
                    break
                free -= units
                out.append(Start(job))
            return out

    assert InOrder().get_params() == {}
    assert repr(InOrder().clone()) == "InOrder()"
    assert check_dispatcher(InOrder)["jobs"] > 100
