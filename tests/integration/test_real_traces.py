"""Reference numbers on the KTH SP2 trace (Parallel Workloads Archive, cleaned version).

Skipped when ``/work/shared/traces`` is absent. Only KTH (28,476 job lines, 100
processors) is simulated here: each run takes about a second.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dispatchlab import Platform, Simulation
from dispatchlab.dispatch import EASY, FIFO, Conservative
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim.result import STATUS_COMPLETED
from dispatchlab.workload import load_trace

KTH_JOBS = 28_475  # after the default cleaning (one job line has no processors)
KTH_CORES = 100
KTH_FIFO_MEAN_WAIT = 389_852.2  # s, FIFO on the pooled 100 processors


@pytest.fixture(scope="module")
def kth(kth_trace: Path):
    return load_trace(kth_trace)


@pytest.fixture(scope="module")
def kth_fifo(kth):
    return Simulation(Platform.pooled(KTH_CORES), kth, FIFO()).run()


@pytest.fixture(scope="module")
def kth_easy(kth):
    return Simulation(Platform.pooled(KTH_CORES), kth, EASY()).run()


def peak_in_use(start: np.ndarray, end: np.ndarray, units: np.ndarray) -> int:
    """Peak cores in use over time; at equal times, ends are applied before starts."""
    ran = start >= 0
    times = np.concatenate([end[ran], start[ran]])
    kinds = np.concatenate([np.zeros(ran.sum(), np.int8), np.ones(ran.sum(), np.int8)])
    delta = np.concatenate([-units[ran], units[ran]])
    order = np.lexsort((kinds, times))  # by time, then ends (0) before starts (1)
    return int(np.cumsum(delta[order]).max())


def check_schedule(result, jobs, cores: int) -> None:
    submit, start, end = jobs["submit"], result.start, result.end
    assert np.all(result.status == STATUS_COMPLETED), "every KTH job fits and completes"
    assert np.all(start >= submit), "a job started before its submission"
    assert np.array_equal(end - start, jobs["run"]), "simulated runs differ from the trace"
    assert peak_in_use(start, end, jobs["units"]) <= cores, "capacity exceeded"


def test_kth_default_cleaning(kth) -> None:
    assert len(kth) == KTH_JOBS
    assert kth.info.max_procs == KTH_CORES
    assert kth.info.dropped == {"units <= 0": 1}
    assert int(kth["units"].max()) <= KTH_CORES
    assert np.all(np.diff(kth["submit"]) >= 0)


def test_kth_fifo_mean_wait(kth, kth_fifo) -> None:
    wait = kth_fifo.start - kth["submit"]
    assert round(float(wait.mean()), 1) == KTH_FIFO_MEAN_WAIT
    summary = run_summary(kth_fifo)
    assert round(summary["mean_wait"], 1) == KTH_FIFO_MEAN_WAIT
    assert summary["jobs"] == KTH_JOBS
    assert summary["rejected"] == 0
    check_schedule(kth_fifo, kth, KTH_CORES)
    # FIFO never overtakes: start times follow the queue order
    assert np.all(np.diff(kth_fifo.start) >= 0)


def test_kth_easy_schedule_is_valid_and_much_better(kth, kth_fifo, kth_easy) -> None:
    check_schedule(kth_easy, kth, KTH_CORES)
    easy_wait = run_summary(kth_easy)["mean_wait"]
    assert easy_wait == pytest.approx(float((kth_easy.start - kth["submit"]).mean()))
    # EASY backfills: some jobs overtake earlier ones ...
    assert np.any(np.diff(kth_easy.start) < 0)
    # ... and the mean wait drops by more than an order of magnitude (6,847.5 s today)
    assert easy_wait < KTH_FIFO_MEAN_WAIT / 10


def test_kth_conservative_schedule_is_valid(kth, kth_fifo) -> None:
    result = Simulation(Platform.pooled(KTH_CORES), kth, Conservative()).run()
    check_schedule(result, kth, KTH_CORES)
    assert run_summary(result)["mean_wait"] < KTH_FIFO_MEAN_WAIT / 10


def test_kth_fifo_through_the_cli(kth_trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "dispatchlab.cli", "simulate", str(kth_trace),
         "--dispatcher", "fifo", "--out", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    summary = json.loads((out / "summary.json").read_text())
    assert round(summary["mean_wait"], 1) == KTH_FIFO_MEAN_WAIT
    assert summary["jobs"] == KTH_JOBS
    assert summary["cores"] == KTH_CORES
    assert summary["dropped"] == {"units <= 0": 1}
    assert "dropped at load: 1 (units <= 0)" in proc.stdout


def test_kth_event_and_pass_counts_are_pinned(kth_fifo, kth_easy) -> None:
    # As SimPy's benchmarks do: the exact work done guards determinism (and flags any
    # change to the event semantics). Every job is one submission and one completion;
    # passes = distinct event timestamps + repeated passes after 0-second jobs.
    assert kth_fifo.events == kth_easy.events == 2 * KTH_JOBS
    assert kth_fifo.passes == 55_695
    assert kth_easy.passes == 56_257
    assert round(float(run_summary(kth_easy)["mean_wait"]), 1) == 6_847.5
