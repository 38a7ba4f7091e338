"""``tests/compare_stores.py``: one campaign run twice gives the same results; a changed
result is found, a changed wall-clock or code field is not."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from compare_stores import compare_stores, main
from dispatchlab.experiment.campaign.runner import run_campaign

QUICK = Path(__file__).resolve().parents[3] / "examples" / "campaigns" / "quick.toml"


def _smaller_quick() -> str:
    """``examples/campaigns/quick.toml`` with 300 jobs and 2 seeds (20 runs, both
    platforms, every dispatcher and predictor), so two executions take seconds."""
    text = QUICK.read_text()
    for old, new in (("jobs = 2000", "jobs = 300"), ("seeds = [1, 2, 3]", "seeds = [1, 2]")):
        assert old in text, f"{QUICK.name} changed: no {old!r}"
        text = text.replace(old, new)
    return text


@pytest.fixture(scope="module")
def two_stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The campaign run twice into two databases (2 workers, then 1: another order)."""
    folder = tmp_path_factory.mktemp("stores")
    (folder / "quick.toml").write_text(_smaller_quick())
    dbs = folder / "a.duckdb", folder / "b.duckdb"
    for db, workers in zip(dbs, (2, 1), strict=True):
        report = run_campaign(folder / "quick.toml", workers=workers, database=db)
        assert report.stored == report.total == 20 and report.failed == 0
    return dbs


def _changed_copy(src: Path, dst: Path, *statements: str) -> Path:
    shutil.copyfile(src, dst)
    con = duckdb.connect(str(dst))
    try:
        for sql in statements:
            con.execute(sql)
    finally:
        con.close()
    return dst


def test_one_campaign_twice_is_identical(two_stores: tuple[Path, Path]) -> None:
    a, b = two_stores
    diffs = compare_stores(a, b)
    assert [d.table for d in diffs] == ["runs", "jobs", "series"]
    assert all(d.same for d in diffs), diffs
    # the runs differ in what is left out (so the comparison did leave it out)
    con = duckdb.connect()
    try:
        con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
        con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")
        n = con.execute("SELECT count(*) FROM a.runs JOIN b.runs USING (run_key) "
                        "WHERE a.runs.wall_seconds <> b.runs.wall_seconds").fetchone()[0]
    finally:
        con.close()
    assert n > 0
    assert main([str(a), str(b)]) == 0


def test_a_changed_result_is_found(two_stores: tuple[Path, Path], tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_stores
    job = "(SELECT run_key FROM runs ORDER BY run_key LIMIT 1)"
    changed = _changed_copy(
        b, tmp_path / "c.duckdb",
        f"UPDATE jobs SET start_time = start_time + 1 WHERE run_key = {job} AND job_id = "
        f"(SELECT min(job_id) FROM jobs WHERE run_key = {job})",
        "UPDATE runs SET mean_wait = mean_wait + 1 WHERE run_key = "
        "(SELECT max(run_key) FROM runs)")
    diffs = {d.table: d for d in compare_stores(a, changed)}
    assert (diffs["jobs"].only_a, diffs["jobs"].only_b) == (1, 1)
    assert (diffs["runs"].only_a, diffs["runs"].only_b) == (1, 1)
    assert diffs["series"].same
    assert main([str(a), str(changed)]) == 1
    assert "jobs: 1 rows only in A, 1 only in B" in capsys.readouterr().out


def test_machine_moment_and_code_fields_are_left_out(two_stores: tuple[Path, Path],
                                                     tmp_path: Path) -> None:
    a, b = two_stores
    changed = _changed_copy(
        b, tmp_path / "c.duckdb",
        "UPDATE runs SET wall_seconds = 1e6, simulate_seconds = 1e6, worker = 'elsewhere', "
        "peak_rss_mb = 1, finished_at = TIMESTAMP '2000-01-01', version = '9.9', "
        "code_hash = 'other', trace_path = '/else/where', max_decision_time = 1e6, "
        "summary = json_merge_patch(summary, '{\"simulate_seconds\": 1e6, "
        "\"total_decision_time\": 1e6}')",
        # a new code hash gives new run keys: jobs and series follow them
        "UPDATE jobs SET run_key = 'x' || run_key",
        "UPDATE series SET run_key = 'x' || run_key",
        "UPDATE runs SET run_key = 'x' || run_key")
    assert all(d.same for d in compare_stores(a, changed))


def test_not_a_database_is_a_usage_error(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "none.duckdb"), str(tmp_path / "none.duckdb")]) == 2
    assert capsys.readouterr().err.startswith("error: ")
    assert main([]) == 2
