"""The run layer's outputs (:mod:`dispatchlab.run.outputs`) and the deprecated
``SimulationResult`` methods that now call them."""

from __future__ import annotations

import json

import pytest

from dispatchlab import Platform, Simulation
from dispatchlab.core.deprecation import REMOVED_IN, MovedWarning
from dispatchlab.dispatch import EASY
from dispatchlab.run.outputs import run_summary, write_result, write_schedule_swf
from dispatchlab.workload.swf import read_swf
from dispatchlab.workload.synthetic import generate_synthetic


def _result():
    jobs = generate_synthetic(300, cores=32, seed=3, load=0.9)
    return Simulation(Platform.pooled(32), jobs, EASY()).run()


def _without_wall_clock(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in ("wall_seconds", "simulate_seconds")
            and "decision_time" not in k}


def test_old_methods_warn_and_give_the_same_outputs(tmp_path) -> None:
    result = _result()
    new = write_result(result, tmp_path / "new", tau=5.0)
    with pytest.warns(MovedWarning, match=rf"SimulationResult\.write moved to "
                      rf"dispatchlab\.run\.outputs\.write_result.*{REMOVED_IN}"):
        old = result.write(tmp_path / "old", tau=5.0)
    assert old == new
    for name in ("jobs.parquet", "summary.json"):
        assert (tmp_path / "old" / name).read_bytes() == (tmp_path / "new" / name).read_bytes()
    assert json.loads((tmp_path / "new" / "summary.json").read_text())["tau"] == 5.0
    with pytest.warns(MovedWarning, match=r"SimulationResult\.summary moved"):
        assert result.summary(tau=5.0) == run_summary(result, tau=5.0)
    assert _without_wall_clock(run_summary(result, tau=5.0)) == _without_wall_clock(new)
    write_schedule_swf(result, tmp_path / "new.swf")
    with pytest.warns(MovedWarning, match=r"SimulationResult\.write_swf moved"):
        result.write_swf(tmp_path / "old.swf")
    assert (tmp_path / "old.swf").read_bytes() == (tmp_path / "new.swf").read_bytes()
    assert len(read_swf(tmp_path / "new.swf")) == len(result.jobs)


def test_the_simulation_layer_opens_no_file() -> None:
    """sim/result.py keeps results as data: no writer, no import of the run layer."""
    import ast
    import inspect

    import dispatchlab.sim.result as module

    tree = ast.parse(inspect.getsource(module))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m and m.startswith("dispatchlab.run") for m in imported)
    assert not {"json", "time"} & {a.name for n in ast.walk(tree)
                                   if isinstance(n, ast.Import) for a in n.names}
