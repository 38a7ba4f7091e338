"""Simulated schedules out as SWF (``simulate --swf-out``), read back by this project,
and ``dispatchlab convert`` between formats."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab import Platform, Simulation
from dispatchlab.dispatch import EASY
from dispatchlab.metrics import COMPLETED, KILLED, REJECTED
from dispatchlab.predict import WalltimePredictor
from dispatchlab.run.outputs import write_schedule_swf
from dispatchlab.workload.jobs import JobTable, TraceInfo
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.swf import read_swf
from test_cli import assert_ok, assert_user_error, run_cli, synthetic_swf


def _result():
    # 4 cores; job 3 asks for 8 cores (rejected), job 2 runs past its requested time
    jobs = JobTable.from_arrays(submit=[0, 10, 20, 30], run=[100, 200, 50, 40],
                                units=[2, 2, 8, 4], requested_time=[100, 150, 60, 60],
                                info=TraceInfo(unix_start_time=1_000_000), user=[7, 8, 7, 9])
    return Simulation(Platform.pooled(4), jobs, EASY(), WalltimePredictor(),
                      overrun="kill").run()


def test_round_trip_same_jobs_submits_runs_and_starts(tmp_path) -> None:
    result = _result()
    assert result.status.tolist() == [COMPLETED, KILLED, REJECTED, COMPLETED]
    path = tmp_path / "schedule.swf.gz"
    write_schedule_swf(result, path)
    back = read_swf(path)
    ran = result.status != REJECTED
    assert back["job_id"].tolist() == result.jobs["job_id"].tolist()
    assert back["submit"].tolist() == result.jobs["submit"].tolist()
    # runs and starts are the simulated ones; the rejected job never ran (-1)
    assert back["run"][ran].tolist() == (result.end - result.start)[ran].tolist()
    assert (back["submit"] + back["wait"])[ran].tolist() == result.start[ran].tolist()
    assert back["run"][~ran].tolist() == [-1] and back["wait"][~ran].tolist() == [-1]
    # SWF status: 1 completed, 0 killed at the requested time, 5 rejected
    assert back["status"].tolist() == [1, 0, 5, 1]
    assert back["user"].tolist() == [7, 8, 7, 9]
    assert back.info.max_procs == 4 and back.info.unix_start_time == 1_000_000
    assert any("dispatcher" in line for line in back.info.header_lines)


def test_simulating_the_written_schedule_again_is_possible(tmp_path) -> None:
    """The file is a valid trace: the completed jobs simulate again."""
    path = tmp_path / "schedule.swf"
    write_schedule_swf(_result(), path)
    again = load_trace(path)  # default cleaning drops the rejected job (run -1)
    assert len(again) == 3 and again.info.dropped
    Simulation(Platform.pooled(4), again, EASY(), WalltimePredictor()).run()


@pytest.fixture(scope="module")
def swf(tmp_path_factory):
    return synthetic_swf(tmp_path_factory.mktemp("out") / "syn.swf", n=200)


def test_cli_swf_out_round_trip(swf, tmp_path) -> None:
    out = tmp_path / "sched.swf"
    assert_ok(run_cli("simulate", swf, "--swf-out", out, "--out", tmp_path / "o"))
    import pyarrow.parquet as pq

    jobs = pq.read_table(tmp_path / "o" / "jobs.parquet").to_pydict()
    back = read_swf(out)
    assert back["submit"].tolist() == jobs["submit"]
    assert (back["submit"] + back["wait"]).tolist() == jobs["start"]
    assert back["run"].tolist() == jobs["run"]


def test_cli_convert(swf, tmp_path) -> None:
    parquet = tmp_path / "t.parquet"
    assert_ok(run_cli("convert", swf, "--out", parquet))
    swf2 = tmp_path / "t.swf.gz"
    assert_ok(run_cli("convert", parquet, "--out", swf2))
    a, b = read_swf(swf), read_swf(swf2)
    for name in ("job_id", "submit", "wait", "run", "req_procs", "req_time", "user"):
        assert np.array_equal(a[name], b[name]), name
    assert_user_error(run_cli("convert", swf, "--out", tmp_path / "t.txt"), "--out",
                      ".swf, .swf.gz, .parquet or .csv")
