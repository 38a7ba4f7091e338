"""Results databases of older schemas: a schema-1 file (written by dispatchlab before
schema version 2, ``tests/data/store-v1.duckdb.gz``) reads with today's columns without
being written, migrates in place in one transaction when opened for writing, and its
runs are replaced when the campaign runs again; metrics declared later become columns;
a newer schema is refused."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from campaign_helpers import connect
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.campaign import (
    group_runs,
    load_campaign,
    run_campaign,
    select_runs,
    store,
)
from dispatchlab.metrics.keys import METRICS, Metric

DATA = Path(__file__).resolve().parents[2] / "data"
#: The fixture: campaign "legacy" (tests/data/store-v1.toml) run by the schema-1 code:
#: traces head (jobs = [0, 30]), block (sample_jobs = 20) and empty (a window with no
#: job: failed runs) x fifo, easy-sjf x seeds 1, 2 = 12 runs, 8 done.
V1_RUNS = 12


@pytest.fixture
def v1_db(tmp_path) -> Path:
    path = tmp_path / "v1.duckdb"
    with gzip.open(DATA / "store-v1.duckdb.gz", "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def columns(path: Path) -> list[str]:
    con = connect(path)
    try:
        return [r[0] for r in con.execute("SELECT name FROM pragma_table_info('runs')")
                .fetchall()]
    finally:
        con.close()


def schema_version(path: Path) -> str:
    con = connect(path)
    try:
        return con.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                           ).fetchall()[0][0]
    finally:
        con.close()


def test_the_fixture_is_schema_1(v1_db):
    assert schema_version(v1_db) == "1"
    cols = columns(v1_db)
    assert "code_hash" not in cols and "steady_utilization" not in cols
    assert "mean_bsld" in cols


def test_reading_a_schema_1_file_shows_todays_columns_and_writes_nothing(v1_db):
    before = fingerprint(v1_db)
    con = store.open_read(v1_db)
    try:
        current, outdated = select_runs(con)
        names = [d[0] for d in con.execute("SELECT * FROM runs LIMIT 0").description]
    finally:
        con.close()
    assert fingerprint(v1_db) == before
    assert set(store.run_columns()) <= set(names)
    # no code hash: every run is outdated, and says why
    assert current == [] and len(outdated) == V1_RUNS
    assert all("no code hash" in r["outdated"] for r in outdated)
    done = [r for r in outdated if r["status"] == "done"]
    assert len(done) == 8
    assert all(r["workload"] == f"seed={r['seed']}" and r["slice"] is None for r in done)
    assert all(r["config_key"] and r["code_hash"] is None for r in done)
    # metric columns of later metrics come from the stored summary where it has them
    for r in done:
        summary = json.loads(r["summary"])
        assert r["decision_calls"] == summary["decision_calls"] > 0
        assert r["steady_utilization"] is None  # not in schema-1 summaries
    # inputs: the trace file's checksum as the run read it
    assert all(json.loads(r["inputs"]) == {r["trace_path"]: r["trace_sha256"]}
               for r in done)


def test_opening_for_writing_migrates_in_place(v1_db):
    con = store.open_read(v1_db)
    try:
        viewed = {r["run_key"]: r for r in select_runs(con, include_outdated=True)[0]}
    finally:
        con.close()
    store.open_write(v1_db).close()
    assert schema_version(v1_db) == "2"
    assert set(store.run_columns()) <= set(columns(v1_db))
    con = connect(v1_db)
    try:
        cur = con.execute("SELECT * FROM runs")
        cols = [d[0] for d in cur.description]
        migrated = {row[0]: dict(zip(cols, row, strict=True)) for row in cur.fetchall()}
        counts = con.execute("SELECT (SELECT count(*) FROM jobs), "
                             "(SELECT count(*) FROM series)").fetchall()[0]
    finally:
        con.close()
    assert migrated.keys() == viewed.keys()
    for key, row in migrated.items():
        # the reading view and the migration compute the same values
        for col in ("config_key", "workload", "slice", "code_hash", "decision_calls",
                    "steady_utilization", "mean_bsld"):
            assert row[col] == viewed[key][col], col
        assert json.loads(row["inputs"]) == json.loads(viewed[key]["inputs"])
    assert counts == (200, 429)  # jobs and series untouched
    # opening again finds nothing to migrate
    store.open_write(v1_db).close()
    assert columns(v1_db) == cols
    con = connect(v1_db)
    try:
        again = con.execute("SELECT run_key, config_key FROM runs ORDER BY 1").fetchall()
    finally:
        con.close()
    assert again == sorted((k, r["config_key"]) for k, r in migrated.items())


def test_a_failed_migration_leaves_the_file_at_schema_1(v1_db, monkeypatch):
    def broken(*args):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store, "_legacy_inputs", broken)
    with pytest.raises(duckdb.Error):
        store.open_write(v1_db)
    assert schema_version(v1_db) == "1"
    assert "code_hash" not in columns(v1_db)


def test_migrated_runs_match_new_runs_of_the_same_configuration(v1_db, tmp_path):
    campaign = tmp_path / "store-v1.toml"
    shutil.copy(DATA / "store-v1.toml", campaign)
    shutil.copy(DATA / "store-v1-trace.swf", tmp_path / "store-v1-trace.swf")
    camp = load_campaign(campaign, database=v1_db)
    con = store.open_read(v1_db)
    try:
        old = select_runs(con, include_outdated=True)[0]
    finally:
        con.close()
    # the configuration key of a schema-1 run equals today's for the same configuration
    new_keys = {(s["trace"]["label"], s["dispatcher"]["label"], s["seed"]): s["config_key"]
                for s in camp.runs}
    assert {(r["trace"], r["dispatcher"], r["seed"]): r["config_key"] for r in old} == \
        new_keys
    assert not set(camp.keys) & {r["run_key"] for r in old}  # the key formula changed
    # running the campaign again replaces every old run: one row per run
    report = run_campaign(camp, workers=1, database=v1_db)
    assert (report.executed, report.stored, report.superseded) == (V1_RUNS, V1_RUNS, V1_RUNS)
    con = store.open_read(v1_db)
    try:
        current, outdated = select_runs(con)
        jobs = con.execute("SELECT count(DISTINCT run_key) FROM jobs").fetchall()[0][0]
    finally:
        con.close()
    assert outdated == [] and len(current) == V1_RUNS
    assert {r["run_key"] for r in current} == set(camp.keys)
    assert jobs == 8  # the old runs' job rows went with them
    # same simulation, same numbers as the schema-1 code stored
    by_slot = {(r["trace"], r["dispatcher"], r["seed"]): r for r in current}
    for r in old:
        if r["status"] == "done":
            assert by_slot[(r["trace"], r["dispatcher"], r["seed"])]["mean_bsld"] == \
                pytest.approx(r["mean_bsld"])
    assert len(group_runs(current)) == 6


def test_a_metric_declared_later_becomes_a_column(tmp_path, monkeypatch, v1_db):
    store.open_write(v1_db).close()  # today's schema
    later = Metric("later_jobs", "jobs", "BIGINT", None, "later", "{:,}",
                   "the measured jobs again", ("jobs",))
    monkeypatch.setattr(store, "METRICS", (*METRICS, later))
    # reading: the view computes it from the summary, nothing is written
    before = fingerprint(v1_db)
    con = store.open_read(v1_db)
    try:
        rows = con.execute("SELECT jobs, later_jobs FROM runs WHERE status = 'done'"
                           ).fetchall()
    finally:
        con.close()
    assert fingerprint(v1_db) == before
    assert rows and all(a == b for a, b in rows)
    # writing: the column is added and filled; the schema version stays
    store.open_write(v1_db).close()
    assert "later_jobs" in columns(v1_db) and schema_version(v1_db) == "2"
    con = connect(v1_db)
    try:
        assert con.execute("SELECT count(*) FROM runs WHERE status = 'done' AND "
                           "later_jobs = jobs").fetchall()[0][0] == 8
    finally:
        con.close()


def test_a_newer_schema_is_refused_and_left_alone(v1_db):
    con = duckdb.connect(str(v1_db))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                [str(store.SCHEMA_VERSION + 1)])
    con.close()
    before = fingerprint(v1_db)
    for opener in (store.open_read, store.open_write):
        with pytest.raises(InputError, match="upgrade dispatchlab"):
            opener(v1_db)
    assert fingerprint(v1_db) == before


def test_jobs_of_older_files_get_the_measured_and_hot_start_flags(v1_db):
    """Jobs rows stored before the ``measured`` / ``hot_start`` columns: reading shows
    them computed (measured = submitted from the run's first measured submission on,
    hot_start unknown) without writing; opening for writing adds them with the same
    values, and new rows insert after them."""
    query = ("SELECT j.run_key, j.job_id, j.measured, j.hot_start, "
             "j.submit_time >= r.series_start FROM jobs j JOIN runs r USING (run_key) "
             "ORDER BY 1, 2")
    before = fingerprint(v1_db)
    con = store.open_read(v1_db)
    try:
        viewed = con.execute(query).fetchall()
    finally:
        con.close()
    assert fingerprint(v1_db) == before
    assert len(viewed) == 200
    assert all(m == expected and h is None for _, _, m, h, expected in viewed)
    store.open_write(v1_db).close()
    con = connect(v1_db)
    try:
        migrated = con.execute(query).fetchall()
        names = [r[0] for r in con.execute(
            "SELECT name FROM pragma_table_info('jobs')").fetchall()]
    finally:
        con.close()
    assert migrated == viewed
    assert names[-6:] == ["measured", "hot_start", "partition", "user", "account", "qos"]
