"""Campaigns on a real Dask distributed cluster: a scheduler and two workers started as
separate processes on 127.0.0.1; one worker is killed in the middle of the campaign."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from campaign_helpers import comparable, job_digest, stored_runs, synthetic_trace, write_campaign
from dispatchlab.experiment.campaign import load_campaign, run_campaign

pytestmark = pytest.mark.dask


def _dask(*args: str, log: Path) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("dask")
    return subprocess.Popen([str(exe), *args], stdout=log.open("wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def cluster(tmp_path):
    """A scheduler and two single-thread workers without nannies (a killed worker stays
    dead); yields (address, [worker processes])."""
    sched_file = tmp_path / "scheduler.json"
    procs = [_dask("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", str(sched_file), log=tmp_path / "scheduler.log")]
    try:
        _wait_for(lambda: sched_file.exists() and sched_file.stat().st_size > 0, 60,
                  "the Dask scheduler")
        address = json.loads(sched_file.read_text())["address"]
        workers = [_dask("worker", address, "--nthreads", "1", "--no-nanny",
                         "--no-dashboard", "--host", "127.0.0.1",
                         log=tmp_path / f"worker{i}.log") for i in range(2)]
        procs += workers
        from distributed import Client

        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address, workers
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_dask_cluster_survives_a_killed_worker_and_matches_the_local_pool(tmp_path, cluster):
    address, workers = cluster
    trace = synthetic_trace(tmp_path, 12000, seed=9, cores=256)
    # engine = "python": the runs must outlast the kill of a worker (the native engine
    # simulates each of them in milliseconds)
    text = f"""
[campaign]
seeds = [1, 2, 3, 4, 5, 6]
engine = "python"
[[traces]]
path = "{trace}"
sample_jobs = 6000
[[platforms]]
cores = 256
[[dispatchers]]
name = "conservative"
"""
    dask_dir, local_dir = tmp_path / "dask", tmp_path / "local"
    dask_dir.mkdir()
    local_dir.mkdir()
    path = write_campaign(dask_dir, text)
    done: list[int] = []

    def kill_a_worker() -> None:
        # wait until the first run is finished, so both workers are busy with later ones
        _wait_for(lambda: max(done, default=0) >= 1, 120, "the first finished run")
        workers[0].send_signal(signal.SIGKILL)

    killer = threading.Thread(target=kill_a_worker)
    killer.start()
    report = run_campaign(path, dask=address, on_progress=lambda d, f, t: done.append(d))
    killer.join()
    assert workers[0].wait(timeout=10) == -signal.SIGKILL
    assert report.executed == 6 and report.failed == 0
    runs = stored_runs(dask_dir / "results.duckdb")
    camp = load_campaign(path)
    assert set(runs) == set(camp.keys)  # every run stored exactly once (primary key)
    assert all(r["status"] == "done" for r in runs.values())
    # the killed worker held at least one run (running or queued on it), which the
    # scheduler gave to the survivor
    assert max(r["attempts"] for r in runs.values()) >= 2
    assert report.reexecuted >= 1
    # the same campaign on the local pool: identical per-run results
    run_campaign(write_campaign(local_dir, text), workers=2)
    local = stored_runs(local_dir / "results.duckdb")
    assert {k: comparable(v) for k, v in runs.items()} == \
        {k: comparable(v) for k, v in local.items()}
    assert job_digest(dask_dir / "results.duckdb") == job_digest(local_dir / "results.duckdb")
    # a re-run on the cluster executes nothing
    again = run_campaign(path, dask=address)
    assert again.executed == 0 and again.skipped_done == 6


def tiny_campaign(folder: Path, n_jobs: int, dispatchers: tuple[str, ...]) -> Path:
    trace = synthetic_trace(folder, n_jobs, seed=2, cores=32)
    entries = "".join(f'[[dispatchers]]\nname = "{d}"\n' for d in dispatchers)
    return write_campaign(folder, f'[[traces]]\npath = "{trace}"\n[[platforms]]\n'
                                  f"cores = 32\n{entries}")


def test_dask_local_cluster_option(tmp_path):
    path = tiny_campaign(tmp_path, 400, ("fifo", "easy"))
    report = run_campaign(path, dask="local", workers=2)
    assert report.executed == 2 and report.failed == 0
    assert "LocalCluster" in report.backend


def test_unreachable_scheduler_is_a_clear_error(tmp_path):
    from test_cli import assert_user_error, run_cli

    path = tiny_campaign(tmp_path, 100, ("fifo",))
    proc = run_cli("campaign", "run", path, "--dask", "tcp://127.0.0.1:9",
                   "--dask-timeout", "1")
    assert_user_error(proc, "--dask", "cannot reach the Dask scheduler")
    assert not (tmp_path / "results.duckdb").exists() or stored_runs(
        tmp_path / "results.duckdb") == {}
