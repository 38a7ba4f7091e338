"""A run's warnings are kept: ``summary.json`` holds the lines ``simulate`` prints, a
campaign stores them in the run's row, and the report shows them beside the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from campaign_helpers import stored_runs, synthetic_trace, write_campaign
from dispatchlab.experiment.campaign import run_campaign
from dispatchlab.report.html import write_report

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def wide_trace(tmp_path_factory) -> Path:
    # jobs of up to 64 cores (offered load 0.85 on 64), simulated on 32 cores below: an
    # offered load above 1 and rejected jobs (wider than 32)
    return synthetic_trace(tmp_path_factory.mktemp("wide"), 300, seed=4, cores=64)


def test_summary_json_keeps_the_printed_warnings(wide_trace, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run([sys.executable, "-m", "dispatchlab.cli", "simulate",
                           str(wide_trace), "--nodes", "32", "--cores-per-node", "1",
                           "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    printed = [line.removeprefix("warning: ") for line in proc.stderr.splitlines()
               if line.startswith("warning: ")]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["warnings"] == printed
    assert len(printed) == 2
    assert "offered load" in printed[0] and "were rejected" in printed[1]


def test_a_run_without_warnings_stores_an_empty_list(wide_trace, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run([sys.executable, "-m", "dispatchlab.cli", "simulate",
                           str(wide_trace), "--nodes", "64", "--cores-per-node", "1",
                           "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0 and "warning:" not in proc.stderr, proc.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["warnings"] == []


def test_campaign_rows_and_report_keep_the_warnings(wide_trace, tmp_path):
    path = write_campaign(tmp_path, f"""
[campaign]
name = "warned"
[[traces]]
label = "wide"
path = "{wide_trace}"
[[platforms]]
label = "half"
cores = 32
[[platforms]]
label = "full"
cores = 64
[[dispatchers]]
name = "easy"
""")
    report = run_campaign(path, workers=1)
    assert report.executed == 2 and report.failed == 0
    runs = {r["platform"]: r for r in stored_runs(tmp_path / "results.duckdb").values()}
    half = json.loads(runs["half"]["warnings"])
    assert half == json.loads(runs["half"]["summary"])["warnings"]
    assert len(half) == 2 and "were rejected" in half[1]
    assert json.loads(runs["full"]["warnings"]) == []
    text = write_report(tmp_path / "results.duckdb", tmp_path / "rep").read_text()
    rows = {key: row for key, row in
            ((r["run_key"], text[text.index(f"<td class=\"text\">{r['run_key']}</td>"):])
             for r in runs.values())}
    half_row = rows[runs["half"]["run_key"]].split("</tr>")[0]
    full_row = rows[runs["full"]["run_key"]].split("</tr>")[0]
    assert half_row.count("warning: ") == 2 and "were rejected" in half_row
    assert "warning: " not in full_row
