"""The run layer's outputs (:mod:`dispatchlab.run.outputs`) and the deprecated
``SimulationResult`` methods that now call them."""

from __future__ import annotations

import json

import pytest

from dispatchlab import Platform, Simulation
from dispatchlab.core.deprecation import REMOVED_IN, MovedWarning
from dispatchlab.dispatch import EASY, FIFO
from dispatchlab.run.outputs import held_per_job, run_summary, write_result, write_schedule_swf
from dispatchlab.workload.jobs import JobTable
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


def test_group_hours_are_node_hours_on_node_level_runs() -> None:
    """Three 4-core nodes; job 0: 2 units of 4 cores for 1 h (2 nodes: 2 node-hours),
    job 1: 1 unit of 2 cores for 2 h (node 2: 2 node-hours), job 2: 2 units of 1 core
    for 30 min, first fit on node 2's two free cores (0.5 node-hours): 4.5 node-hours
    (13 core-hours would be 8 + 4 + 1)."""
    jobs = JobTable.from_arrays(submit=[0, 0, 0], run=[3600, 7200, 1800], units=[2, 1, 2],
                                resources={"core": [4, 2, 1]}, user=[0, 1, 1])
    result = Simulation(Platform.homogeneous(3, 4), jobs, FIFO()).run()
    assert list(result.start) == [0, 0, 0]
    held, unit = held_per_job(result)
    assert unit == "node-hours" and held.tolist() == [2, 1, 1]
    section = run_summary(result, by=["user"])["by_group"]
    assert section["hours_unit"] == "node-hours"
    groups = section["user"]["groups"]
    assert (groups["0"]["hours"], groups["1"]["hours"]) == (2.0, 2.5)
    # a pooled run counts core-hours
    pooled = _result()
    held, unit = held_per_job(pooled)
    assert unit == "core-hours" and held.tolist() == pooled.jobs["units"].tolist()
    assert "by_group" not in run_summary(pooled)


def test_jobs_parquet_dictionary_encodes_only_the_small_domain_columns(tmp_path) -> None:
    """jobs.parquet: users, statuses, reasons and allocations dictionary-encoded, the
    mostly distinct numbers plain (pyarrow's default would encode them all: slower to
    write and larger); the table read back is the result's."""
    import pyarrow.parquet as pq

    from dispatchlab.run.outputs import DICTIONARY_COLUMNS

    jobs = generate_synthetic(3000, cores=64, seed=3)
    result = Simulation(Platform.pooled(64), jobs, EASY()).run()
    write_result(result, tmp_path)
    meta = pq.ParquetFile(tmp_path / "jobs.parquet").metadata
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    for i, name in enumerate(names):
        encodings = meta.row_group(0).column(i).encodings
        assert ("RLE_DICTIONARY" in encodings) == (name in DICTIONARY_COLUMNS), (name,
                                                                                  encodings)
    assert set(DICTIONARY_COLUMNS) <= set(names)
    assert pq.read_table(tmp_path / "jobs.parquet").equals(result.to_arrow())
