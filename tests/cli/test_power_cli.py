"""The power commands: power synth, power predict and simulate with power; bad input is
one error line."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from dispatchlab import JobTable
from dispatchlab.workload.jobs import TraceInfo
from dispatchlab.workload.swf import write_swf


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dispatchlab.cli", *args],
                          capture_output=True, text=True)


@pytest.fixture()
def trace(tmp_path):
    rng = np.random.default_rng(1)
    n = 60
    jobs = JobTable.from_arrays(submit=np.sort(rng.integers(0, 5000, n)),
                                run=rng.integers(10, 600, n), units=rng.integers(1, 9, n),
                                user=rng.integers(0, 5, n),
                                info=TraceInfo(max_procs=16, header={"MaxProcs": "16"},
                                               header_lines=("; MaxProcs: 16",)))
    path = tmp_path / "t.swf"
    write_swf(jobs, path)
    return path


def test_synth_predict_and_a_capped_simulation(trace, tmp_path):
    power = tmp_path / "p.parquet"
    done = _cli("power", "synth", str(trace), "--platform", "marconi100", "-o", str(power))
    assert done.returncode == 0, done.stderr
    out = tmp_path / "pred.parquet"
    done = _cli("power", "predict", str(trace), "--power", str(power), "--platform",
                "marconi100", "--power-predictors", "naive,history,real", "--out", str(out))
    assert done.returncode == 0, done.stderr
    import pyarrow.parquet as pq

    table = pq.read_table(out)
    assert table.num_rows == 60 and "history_mean" in table.column_names
    # real predictions have no error
    assert np.allclose(table["real_mean"].to_numpy(), table["actual_mean"].to_numpy())
    sim = tmp_path / "sim"
    done = _cli("simulate", str(trace), "--power", str(power), "--dispatcher", "easy-pc",
                "-D", "check=max", "--power-predictor", "real", "--cap", "3kW", "--out",
                str(sim))
    assert done.returncode == 0, done.stderr
    summary = json.loads((sim / "summary.json").read_text())
    assert summary["cap_time_above_share"] == 0.0 and summary["energy_j"] > 0


@pytest.mark.parametrize("args, message", [
    (["simulate", "{trace}", "--power", "{bad}"], "power_mean"),
    (["simulate", "{trace}", "--cap", "0"], "cap"),
    (["simulate", "{trace}", "--cap", "2kW", "--cap-window", "50:10"], "cap-window"),
    (["simulate", "{trace}", "--dispatcher", "knapsack"], "power predictor"),
    (["simulate", "{trace}", "--power-predictor", "histroy"], "did you mean 'history'"),
    (["power", "predict", "{trace}", "--power", "{neg}"], "negative: -5.0 W"),
])
def test_bad_power_input_is_one_error_line(trace, tmp_path, args, message):
    (tmp_path / "bad.csv").write_text("job_id,power_max,power_std\n1,10,1\n")
    (tmp_path / "neg.csv").write_text("job_id,power_mean,power_max,power_std\n1,-5,10,1\n")
    done = _cli(*(a.format(trace=trace, bad=tmp_path / "bad.csv", neg=tmp_path / "neg.csv")
                  for a in args))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [x for x in done.stderr.splitlines()
             if x.strip() and not x.startswith(("note:", "warning:"))]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], lines


def test_study_predictions_under_a_cap(trace, tmp_path):
    power = tmp_path / "p.parquet"
    assert _cli("power", "synth", str(trace), "-o", str(power)).returncode == 0
    out = tmp_path / "study"
    done = _cli("study", "predictions", str(trace), "--dispatcher", "easy",
                "--dispatcher", "easy-pc:check=max", "--predictors", "walltime", "--power",
                str(power), "--power-predictor", "real", "--cap", "3kW", "--out", str(out))
    assert done.returncode == 0, done.stderr
    rows = {r["dispatcher"]: r for r in json.loads((out / "study.json").read_text())["rows"]}
    # easy ignores the cap and goes above it; easy-pc with max and exact power never does
    assert rows["easy-pc:check=max"]["cap_time_above_share"] == 0.0
    assert rows["easy"]["cap_time_above_share"] > 0
    bad = _cli("study", "predictions", str(trace), "--dispatcher", "easy-pc",
               "--predictors", "walltime")
    assert bad.returncode == 2 and bad.stderr.startswith("error:")
    assert "power" in bad.stderr and "Traceback" not in bad.stderr
