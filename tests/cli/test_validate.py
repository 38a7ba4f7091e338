"""``dispatchlab validate`` end to end: the table, the counts and the JSON on a small
SWF, the figure, and its mistakes as one ``error:`` line (exit 2); on KTH-SP2, the
archive's cleaning and the scheduler its header names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_cli import assert_ok, assert_user_error, run_cli

SMALL = Path(__file__).resolve().parents[1] / "data" / "validate-small.swf"


def test_validate_end_to_end_with_json(tmp_path: Path) -> None:
    out = tmp_path / "v" / "small.json"
    proc = run_cli("validate", SMALL, "--dispatcher", "fifo", "--json", out)
    assert_ok(proc)
    assert "compared 3 of 5 jobs; left out: 1 without a recorded wait, 1 not run" \
        in proc.stdout
    assert "queue 1 batch" in proc.stdout and "queue 2 debug" in proc.stdout
    assert "archive cleaning removed 2 of 7 jobs (28.6 %)" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["dispatcher"] == "fifo" and doc["platform"] == "4 cores (pooled)"
    assert doc["counts"] == {"measured": 5, "compared": 3, "no_recorded_wait": 1,
                             "not_run": 1}
    assert doc["overall"]["mae"] == 40.0 and doc["overall"]["jobs"] == 3
    assert [g["mae"] for g in doc["groups"]] == [60.0, 0.0]
    assert doc["cleaning"]["removed"] == 2 and doc["group_by"] == "queue"
    assert doc["rolling"]["mape_percent"] is None
    assert "doi:10.1007/978-3-031-40843-4_24" in doc["rolling"]["reference"]


def test_validate_plot_and_a_short_rolling_window(tmp_path: Path) -> None:
    # 0.01 d = 864 s windows: points 3600 s .. 3600 s, whose window (2736, 3600] is
    # empty: one point, left out, so the figure has nothing to draw
    png = tmp_path / "r.png"
    proc = run_cli("validate", SMALL, "--dispatcher", "fifo", "--rolling-days", "0.01",
                   "--plot", png)
    # the run's own warnings (an overloaded platform, a rejected job) come first
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert errors == [proc.stderr.splitlines()[-1]]
    assert "no rolling-mean point to draw" in errors[0] and "0.01-day window" in errors[0]
    assert not png.exists()


def test_validate_without_recorded_waits_is_one_error_line(tmp_path: Path) -> None:
    trace = tmp_path / "nowait.swf"
    trace.write_text("; MaxProcs: 4\n"
                     "1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
                     "2 5 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
    line = assert_user_error(run_cli("validate", trace), "nowait.swf",
                             "no job of the trace has a recorded wait")
    assert "all 2 are -1" in line


@pytest.mark.parametrize("args,needle", [
    (("--by", "user"), "field --by: unknown grouping 'user'"),
    (("--rolling-days", "0"), "field --rolling-days: the rolling window must be positive"),
])
def test_validate_bad_options(args: tuple[str, ...], needle: str) -> None:
    assert_user_error(run_cli("validate", SMALL, *args), needle)


def test_validate_kth_names_its_cleaning_and_scheduler(kth_trace: Path,
                                                       tmp_path: Path) -> None:
    out = tmp_path / "kth.json"
    proc = run_cli("validate", kth_trace, "--dispatcher", "easy", "--jobs", "0:3000",
                   "--json", out, "--plot", tmp_path / "kth.png")
    assert_ok(proc)
    doc = json.loads(out.read_text())
    assert doc["cleaning"] == {"kept": 28_476, "removed": 14, "total": 28_490,
                               "removed_share": 14 / 28_490, "source": "header notes"}
    assert doc["scheduler"] == "EASY scheduler"
    assert doc["counts"]["compared"] == 3000
    assert doc["rolling"]["points_used"] > 0 and doc["rolling"]["mape_percent"] > 0
    assert (tmp_path / "kth.png").stat().st_size > 10_000
