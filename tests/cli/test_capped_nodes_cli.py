"""The power-capped dispatchers on the node-level ``marconi100`` platform (980 nodes of
32 cores and 4 GPUs) through the command line: ``simulate --platform marconi100
--dispatcher easy-pc | knapsack --cap ...`` places every job on nodes and, with the
``max`` check and ``real`` predictions, never exceeds the cap."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pyarrow.parquet as pq
import pytest

from dispatchlab import JobTable
from dispatchlab.workload.jobs import TraceInfo
from dispatchlab.workload.swf import write_swf


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dispatchlab.cli", *args],
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def trace_and_power(tmp_path_factory):
    """60 jobs of 1-8 cores and their synthetic Marconi100 power."""
    tmp = tmp_path_factory.mktemp("m100")
    rng = np.random.default_rng(1)
    n = 60
    jobs = JobTable.from_arrays(submit=np.sort(rng.integers(0, 5000, n)),
                                run=rng.integers(10, 600, n), units=rng.integers(1, 9, n),
                                user=rng.integers(0, 5, n),
                                info=TraceInfo(max_procs=16, header={"MaxProcs": "16"},
                                               header_lines=("; MaxProcs: 16",)))
    trace = tmp / "t.swf"
    write_swf(jobs, trace)
    power = tmp / "p.parquet"
    done = _cli("power", "synth", str(trace), "--platform", "marconi100", "-o", str(power))
    assert done.returncode == 0, done.stderr
    return trace, power


@pytest.mark.parametrize("dispatcher", ["easy-pc", "easy-pc:order=saf", "knapsack"])
def test_capped_dispatchers_run_on_marconi100_nodes(trace_and_power, tmp_path,
                                                    dispatcher: str) -> None:
    trace, power = trace_and_power
    out = tmp_path / "sim"
    done = _cli("simulate", str(trace), "--power", str(power), "--platform", "marconi100",
                "--dispatcher", dispatcher, "-D", "check=max", "--power-predictor", "real",
                "--cap", "3kW", "--out", str(out))
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["platform"].startswith("980 x m100")
    # max check, real predictions, a cap from 0: the accounted power never exceeds it
    assert summary["cap_time_above_share"] == 0.0 and summary["cap_max_excess"] == 0.0
    assert summary["mean_wait"] > 0  # 3 kW binds: jobs wait for power on a free machine
    table = pq.read_table(out / "jobs.parquet").to_pydict()
    assert set(table["status"]) == {"completed"}
    for alloc, procs in zip(table["allocation"], table["procs"], strict=True):
        # "node:units" entries on the 980 nodes, one core a unit, as many units as procs
        parts = [tuple(map(int, p.split(":"))) for p in alloc.split(",")]
        assert all(0 <= node < 980 and 0 < units <= 32 for node, units in parts)
        assert sum(units for _, units in parts) == procs
