"""Seed 004 runs through the command line: a throttled run with a duration model and a
hot start, and every bad input of the issue as one ``error:`` line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.power.eurora_synth import eurora_instance, write_instance
from dispatchlab.workload.tables import write_csv
from test_cli import assert_ok, assert_user_error, run_cli


@pytest.fixture(scope="module")
def instance(tmp_path_factory) -> Path:
    """40 Eurora-like jobs in 2 hours, with their power columns (Parquet)."""
    path = tmp_path_factory.mktemp("seed004") / "inst.parquet"
    write_instance(eurora_instance(40, 7200, "uniform", seed=3), path)
    return path


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Path:
    """Three one-core jobs without power, with a CPI column holding a 0."""
    from dispatchlab import JobTable

    table = JobTable.from_arrays(submit=[0, 5, 9], run=[100, 50, 20], units=[1, 1, 1])
    table.columns["cpi"] = np.array([1.5, 0.0, 3.0])
    path = tmp_path_factory.mktemp("seed004") / "plain.csv"
    write_csv(table, path)
    return path


def test_a_throttled_run_with_hot_start_reports_seed_004_bsld(instance, tmp_path):
    out = tmp_path / "out"
    proc = run_cli("simulate", instance, "--platform", "eurora", "--dispatcher",
                   "rapl-dynshare", "--cap", "0.05", "--power-predictor", "real",
                   "--duration-model", "mixed:profile=dynshare", "--hot-start", "0.5",
                   "--out", out)
    assert_ok(proc)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["hot_start_jobs"] == 32  # half of the 64 nodes
    assert summary["total_jobs"] == 40  # the dummy jobs are not counted
    assert summary["mean_power_bsld"] >= 1.0
    assert summary["max_power_bsld"] >= summary["mean_power_bsld"]


@pytest.mark.parametrize("args, needles", [
    (("--duration-model", "factor:f=1.5"), ("f",)),
    (("--duration-model", "nope"), ("nope",)),
    (("-D", "period=0"), ("period",)),
    (("--hot-start", "1.5"), ("--hot-start",)),
])
def test_bad_throttling_inputs_are_one_error_line(instance, args, needles):
    proc = run_cli("simulate", instance, "--platform", "eurora", "--dispatcher",
                   "rapl-dynshare", "--cap", "0.3", "--power-predictor", "real", *args)
    assert_user_error(proc, *needles)


def test_a_cpi_column_with_a_zero_is_an_error(plain, tmp_path):
    power = tmp_path / "power.csv"
    power.write_text("job_id,power_mean,power_max,power_std\n1,100,100,0\n2,100,100,0\n"
                     "3,100,100,0\n")
    proc = run_cli("simulate", plain, "--dispatcher", "dvfs", "--cap", "500W", "--power",
                   power, "--power-predictor", "real", "--duration-model", "cpi",
                   "--nodes", "4", "--cores-per-node", "1")
    # the model reads the column when the run starts, after the notes on what was read
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    errors = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert len(errors) == 1 and "'cpi'" in errors[0] and "job 2 has CPI 0.0" in errors[0]


@pytest.mark.parametrize("dispatcher", ["ls", "dec", "bf", "dvfs", "rapl-simple",
                                        "rapl-dynshare", "dec-rapl"])
def test_a_capping_method_without_a_cap_is_an_error(instance, dispatcher):
    proc = run_cli("simulate", instance, "--platform", "eurora", "--dispatcher", dispatcher,
                   "--power-predictor", "real")
    assert_user_error(proc, "--cap")


@pytest.mark.parametrize("dispatcher", ["rapl-simple", "rapl-dynshare"])
def test_a_throttling_method_without_job_power_is_an_error(plain, dispatcher):
    proc = run_cli("simulate", plain, "--dispatcher", dispatcher, "--cap", "500W",
                   "--power-predictor", "naive", "--nodes", "4", "--cores-per-node", "1")
    assert_user_error(proc)


def test_a_scheduling_method_without_power_predictions_is_an_error(instance):
    proc = run_cli("simulate", instance, "--platform", "eurora", "--dispatcher", "ls",
                   "--cap", "0.5")
    assert_user_error(proc, "power predict")
