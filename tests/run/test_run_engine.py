"""The engine of a run (``RunConfig.engine``, :func:`dispatchlab.run.build.build`):
``auto`` runs the native core when it implements the run's components and the Python
engine otherwise; ``native`` refuses what it cannot run, naming why; ``python`` always
runs the Python engine. The engine that ran is in the result and the summary."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.run.build import build, choose_engine
from dispatchlab.run.config import Component, RunConfig
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim.native import NativeSimulation

pytest.importorskip("dispatchlab._core", reason="the native core is not built (make native)")


def _jobs(n: int = 120, seed: int = 2) -> JobTable:
    rng = np.random.default_rng(seed)
    run = rng.integers(0, 500, n)
    return JobTable.from_arrays(submit=np.sort(rng.integers(0, 6000, n)), run=run,
                                units=rng.integers(1, 12, n), requested_time=run * 2)


def _build(dispatcher: str, engine: str, **config):
    return build(RunConfig(dispatcher=Component(dispatcher), engine=engine, **config),
                 jobs=_jobs(), platform=Platform.pooled(16))


@pytest.mark.parametrize(("dispatcher", "engine", "ran"), [
    ("fifo", "auto", "native"), ("easy", "auto", "native"), ("sjf", "auto", "native"),
    ("conservative", "auto", "native"), ("prb", "auto", "python"), ("easy", "python", "python"),
    ("fifo", "native", "native")])
def test_the_engine_chosen_runs_and_is_recorded(dispatcher, engine, ran):
    made = _build(dispatcher, engine)
    kind = NativeSimulation if ran == "native" else Simulation
    assert type(made.simulation) is kind and made.engine == ran
    assert (made.not_native is None) == (ran == "native" or engine == "python")
    result = made.simulation.run()
    summary = run_summary(result)
    assert result.engine == summary["engine"] == ran
    # a native run does not time its dispatcher calls: null, not 0
    assert (summary["decision_calls"] is None) == (ran == "native")


def test_auto_gives_the_python_engines_schedule():
    native = _build("easy", "auto").simulation.run()
    python = _build("easy", "python").simulation.run()
    for name in ("start", "end", "status", "estimate"):
        np.testing.assert_array_equal(getattr(native, name), getattr(python, name))
    assert (native.events, native.passes) == (python.events, python.passes)


def test_a_run_the_native_engine_cannot_simulate_is_refused_naming_why():
    with pytest.raises(InputError) as err:
        _build("prb", "native")
    assert err.value.field == "--engine"
    assert "the native engine cannot run this: dispatcher 'prb' is not native yet" in \
        err.value.message
    with pytest.raises(InputError, match="wall-clock budgets"):
        _build("easy", "native", max_wall=100.0)
    # auto: the Python engine, and why not the native one
    made = _build("easy", "auto", max_wall=100.0)
    assert made.engine == "python" and "wall-clock" in made.not_native


def test_choose_engine():
    assert choose_engine("auto", None) == "native"
    assert choose_engine("auto", "no") == "python"
    assert choose_engine("python", None) == "python"
    assert choose_engine("native", None) == "native"
    with pytest.raises(InputError, match="cannot run this: no"):
        choose_engine("native", "no")


def test_the_engine_setting_is_checked_and_kept_in_json():
    with pytest.raises(InputError, match=r"got 'nativ' \(did you mean 'native'\?\)") as err:
        RunConfig(engine="nativ").validate()
    assert err.value.field == "--engine"
    config = RunConfig(engine="python")
    assert RunConfig.from_json(config.to_json()) == config
    assert RunConfig().engine == "auto"
