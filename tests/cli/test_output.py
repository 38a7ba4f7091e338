"""Output outside a terminal (logs, pipes, ``| tee``): ``simulate``'s title and caption
at full width, ``COLUMNS`` respected, wide ``results query`` / ``results power`` rows as
``column: value`` records (headers never cut), plain progress lines of a campaign, and
Ctrl-C during a campaign (how many runs are stored, how to resume, status 130)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from campaign_helpers import connect, stored_runs, synthetic_trace, write_campaign
from dispatchlab.cli.campaign import ProgressLines
from dispatchlab.experiment.campaign import run_campaign
from test_campaign_power import HEAD, POWER
from test_cli import assert_ok, run_cli


def _env(**extra: str) -> dict[str, str]:
    """This process's environment without COLUMNS / LINES, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def power_db(tmp_path_factory) -> Path:
    """The 7 runs of test_campaign_power's campaign (runs table: ~80 columns)."""
    folder = tmp_path_factory.mktemp("power")
    report = run_campaign(write_campaign(folder, HEAD + POWER), workers=1)
    assert (report.executed, report.failed) == (7, 0)
    return folder / "results.duckdb"


# ---------------------------------------------------------------------- simulate
CAPTION = ("slowdown and bounded slowdown (bsld, tau = 10 s) are means over jobs; util: "
           "core utilization over the whole run; steady util: from the first time half "
           "the cores are busy to the last submission")


def test_simulate_off_a_terminal_is_not_squeezed_to_the_table(tmp_path):
    trace = synthetic_trace(tmp_path, 300, cores=64)
    proc = run_cli("simulate", trace, "--nodes", "4", "--cores-per-node", "16", env=_env())
    assert_ok(proc)
    lines = proc.stdout.splitlines()
    # the title and the caption are whole lines, not wrapped at the table's 40 columns
    assert lines[0].startswith(f"{trace.name} on ") and lines[1].startswith("┏")
    assert CAPTION in lines
    table = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert len(table) > 10 and len({len(line) for line in table}) == 1
    # off a terminal nothing is wrapped or squeezed, whatever COLUMNS says (it only
    # decides between a table and records in results query / power)
    narrow = run_cli("simulate", trace, "--nodes", "4", "--cores-per-node", "16",
                     env=_env(COLUMNS="60"))
    assert_ok(narrow)
    assert CAPTION in narrow.stdout.splitlines()
    demo = run_cli("demo", "--jobs", "100", env=_env(COLUMNS="60"))
    assert_ok(demo)
    header = next(line for line in demo.stdout.splitlines() if line.startswith("┃"))
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "metric", "unit", "fifo", "sjf", "easy", "easy-sjbf", "conservative",
        "easy (real run times)"]
    assert len(header) > 60 and "…" not in demo.stdout


# ---------------------------------------------------------------- results query
def _records(text: str) -> list[dict[str, str]]:
    """The ``row N`` blocks of records output as dicts."""
    blocks: list[dict[str, str]] = []
    for line in text.splitlines():
        if re.fullmatch(r"row [\d,]+", line):
            blocks.append({})
        elif line.startswith("  ") and blocks:
            name, _, value = line[2:].partition(":")
            blocks[-1][name] = value.strip()
    return blocks


def test_wide_query_rows_are_records_and_narrow_ones_a_table(power_db):
    con = connect(power_db)
    try:
        columns = [d[0] for d in con.execute("SELECT * FROM runs LIMIT 0").description]
        keys = [r[0] for r in con.execute("SELECT run_key FROM runs ORDER BY 1").fetchall()]
    finally:
        con.close()
    assert len(columns) > 40
    sql = "SELECT * FROM runs ORDER BY run_key"
    proc = run_cli("results", "query", power_db, sql, env=_env())
    assert_ok(proc)
    assert "┏" not in proc.stdout and "…" not in proc.stdout
    records = _records(proc.stdout)
    assert [list(r) for r in records] == [columns] * 7
    assert [r["run_key"] for r in records] == keys
    assert proc.stdout.rstrip().endswith("7 rows")

    narrow = "SELECT dispatcher, cap FROM runs ORDER BY 1, 2"
    proc = run_cli("results", "query", power_db, narrow, env=_env())
    assert_ok(proc)
    assert "┃ dispatcher ┃ cap " in proc.stdout and not _records(proc.stdout)
    proc = run_cli("results", "query", power_db, narrow, "--format", "records", env=_env())
    assert_ok(proc)
    assert [r["dispatcher"] for r in _records(proc.stdout)] == ["easy"] * 3 + ["pc"] * 4

    # --format table: the whole table, headers whole, even past a narrow width
    proc = run_cli("results", "query", power_db, sql, "--format", "table",
                   env=_env(COLUMNS="100"))
    assert_ok(proc)
    header = next(line for line in proc.stdout.splitlines() if line.startswith("┃"))
    assert [c.strip() for c in header.strip("┃").split("┃")] == columns
    assert "…" not in proc.stdout


# ---------------------------------------------------------------- results power
POWER_HEADERS = ["cap", "dispatcher", "power predictor", "runs", "power / cap",
                 "time above", "own", "runs above", "own", "max excess", "own",
                 "under-use", "started in window", "turnaround", "max turnaround"]


def test_results_power_headers_are_never_cut(power_db):
    proc = run_cli("results", "power", power_db, env=_env(COLUMNS="220"))
    assert_ok(proc)
    header = [line for line in proc.stdout.splitlines() if line.startswith("┃")]
    assert len(header) == 1  # one header line: nothing wrapped
    assert [c.strip() for c in header[0].strip("┃").split("┃")] == POWER_HEADERS
    assert "…" not in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) <= 220

    # off a terminal without COLUMNS the table (188 columns) is wider than 140: records
    proc = run_cli("results", "power", power_db, env=_env())
    assert_ok(proc)
    assert "┏" not in proc.stdout and "…" not in proc.stdout
    assert proc.stdout.startswith("trace lub, platform marconi100-nodes\nmeans over runs")
    records = _records(proc.stdout)
    assert len(records) == 7
    assert list(records[0]) == [
        "cap", "dispatcher", "power predictor", "runs", "power / cap", "time above",
        "time above, own", "runs above", "runs above, own", "max excess",
        "max excess, own", "under-use", "started in window", "turnaround",
        "max turnaround"]
    pc = next(r for r in records if (r["dispatcher"], r["power predictor"], r["cap"])
              == ("pc", "history", "2%"))
    assert pc["runs"] == "1" and pc["turnaround"].endswith(" %")


# ------------------------------------------------------------ campaign progress
def test_progress_lines_at_each_tenth_and_after_a_silence(capsys):
    now = [100.0]
    lines = ProgressLines(every=60, clock=lambda: now[0])
    lines.update(0, 0, 20)  # the start: no line (a failing start shows its error alone)
    lines.heartbeat()
    assert capsys.readouterr().err == ""
    now[0] += 61  # the first run is slow: a line after a minute
    lines.heartbeat()
    assert capsys.readouterr().err == "progress: 0/20 runs done (0 failed), 0:01:01 elapsed\n"
    for done in range(1, 21):
        now[0] += 1
        lines.update(done, done // 7, 20)
    out = capsys.readouterr().err.splitlines()
    assert [re.sub(r", \d+:\d\d:\d\d elapsed$", "", line) for line in out] == [
        f"progress: {d}/20 runs done ({d // 7} failed)" for d in range(2, 21, 2)]
    assert out[-1].endswith(", 0:01:21 elapsed")
    lines.heartbeat()  # 0 s since the last line: nothing
    now[0] += 59.5
    lines.heartbeat()
    assert capsys.readouterr().err == ""
    now[0] += 3725 - 59.5  # a silent hour: one line saying where the campaign is
    lines.heartbeat()
    assert capsys.readouterr().err == "progress: 20/20 runs done (2 failed), 1:03:26 elapsed\n"


SMALL = """
[campaign]
name = "out"
seeds = [1, 2, 3]

[[traces]]
label = "lub"
generate = "lublin"
jobs = {jobs}
machine_size = 64

[[platforms]]
cores = 64

[[dispatchers]]
name = "fifo"
[[dispatchers]]
name = "easy"

[[predictors]]
name = "walltime"
"""


def test_campaign_off_a_terminal_prints_progress_lines(tmp_path):
    path = write_campaign(tmp_path, SMALL.format(jobs=100))
    proc = run_cli("campaign", "run", path, "--workers", "1", env=_env())
    assert_ok(proc)
    progress = [re.sub(r", \d+:\d\d:\d\d elapsed$", "", line)
                for line in proc.stderr.splitlines() if line.startswith("progress: ")]
    assert progress == [f"progress: {d}/6 runs done (0 failed)" for d in range(1, 7)]
    assert "executed 6" in proc.stdout
    quiet = run_cli("campaign", "run", path, "--rerun", "--no-progress", "--workers", "1",
                    env=_env())
    assert_ok(quiet)
    assert "progress:" not in quiet.stderr


# ------------------------------------------------------------------- Ctrl-C
def test_ctrl_c_says_what_is_stored_and_the_same_command_resumes(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from dispatchlab.cli import app
    from dispatchlab.experiment.campaign import runner
    from dispatchlab.experiment.campaign.worker import execute_run

    closed = []

    def two_then_ctrl_c(self, specs):
        try:
            for spec in specs[:2]:
                yield execute_run(spec)
            raise KeyboardInterrupt
        finally:
            closed.append(True)

    path = write_campaign(tmp_path, SMALL.format(jobs=100))
    monkeypatch.setattr(runner.LocalPool, "execute", two_then_ctrl_c)
    result = CliRunner().invoke(app, ["campaign", "run", str(path), "--workers", "1"])
    assert result.exit_code == 130, result.output
    assert result.stderr.splitlines()[-1] == (
        f"interrupted: 2 of the campaign's 6 runs are stored in {tmp_path / 'results.duckdb'}"
        " (2 stored by this command); the same command resumes with the other 4")
    assert "Traceback" not in result.output and closed == [True]
    assert sorted(r["status"] for r in stored_runs(tmp_path / "results.duckdb").values()) \
        == ["done", "done"]
    monkeypatch.undo()
    again = run_cli("campaign", "run", path, "--workers", "1", env=_env())
    assert_ok(again)
    assert "executed 4 (0 failed" in again.stdout and "skipped 2 done before" in again.stdout


def test_sigint_to_a_running_campaign_stores_the_finished_runs(tmp_path):
    """A terminal's Ctrl-C: SIGINT to the whole process group (coordinator and workers)
    once the progress lines say runs finished."""
    path = write_campaign(tmp_path, SMALL.format(jobs=2000).replace(
        "seeds = [1, 2, 3]", "seeds = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"))
    proc = subprocess.Popen([sys.executable, "-m", "dispatchlab.cli", "campaign", "run",
                             str(path), "--workers", "1"], env=_env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("progress: 2/20"):
                break
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err and out == ""
    m = re.fullmatch(r"interrupted: (\d+) of the campaign's 20 runs are stored in (.+) "
                     r"\((\d+) stored by this command\); the same command resumes with "
                     r"the other (\d+)", err.strip())
    assert m is not None, err
    stored = stored_runs(tmp_path / "results.duckdb")
    assert int(m[1]) == int(m[3]) == len(stored) == 20 - int(m[4])
    assert 2 <= len(stored) < 20 and {r["status"] for r in stored.values()} == {"done"}
