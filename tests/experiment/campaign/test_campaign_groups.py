"""Campaigns store the jobs' groups (partition, user, account, QOS) with the jobs;
``results groups`` shows metrics per group; a store written before the group columns
still opens and shows its results."""

from __future__ import annotations

import gzip
import hashlib
import shutil
from pathlib import Path

import pytest

from campaign_helpers import connect, write_campaign
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.campaign import run_campaign, store
from test_cli import assert_ok, assert_user_error, run_cli
from test_sacct import EXPORT_2302
from test_sacct import write as write_sacct

DATA = Path(__file__).resolve().parents[2] / "data"

CAMPAIGN = """
[campaign]
name = "groups"
database = "g.duckdb"
[[traces]]
label = "march"
path = "{trace}"
[[platforms]]
label = "n+g"
file = "{platform}"
[[dispatchers]]
name = "fifo"
"""
NODE_AND_GPU_NODE = """
# one 16-core node and one with 2 GPUs: the export's GPU jobs (4002, the GPU part of
# 4008) need a GPU node since a cluster log's requests are honoured
[[node_type]]
name = "n"
count = 1
capacity = { core = 16 }
[[node_type]]
name = "g"
count = 1
capacity = { core = 16, gpu = 2 }
"""


@pytest.fixture
def group_db(tmp_path) -> Path:
    trace = write_sacct(tmp_path, EXPORT_2302, "march.txt")
    platform = tmp_path / "n+g.toml"
    platform.write_text(NODE_AND_GPU_NODE)
    run_campaign(write_campaign(tmp_path, CAMPAIGN.format(trace=trace, platform=platform)),
                 workers=1)
    return tmp_path / "g.duckdb"


def test_jobs_store_their_groups_as_text(group_db) -> None:
    con = connect(group_db)
    try:
        rows = con.execute('SELECT job_id, partition, "user", account, qos, user_id '
                           "FROM jobs ORDER BY job_id").fetchall()
    finally:
        con.close()
    # the export's six jobs (23.02 reader test); 4008 is the merged heterogeneous job
    assert rows == [(4001, "batch", "alice", "proj1", "normal", 0),
                    (4002, "gpu", "bob", "proj2", "high", 1),
                    (4003, "batch", "alice", "proj1", "normal", 0),
                    (4006, "batch", "dave", "proj3", "normal", 2),
                    (4007, "batch", "dave", "proj3", "normal", 2),
                    (4008, "batch", "erin", "proj3", "normal", 3)]


def test_results_groups_shows_the_breakdown(group_db) -> None:
    proc = run_cli("results", "groups", group_db, "--format", "table")
    assert_ok(proc)
    assert "by partition: trace march, platform n+g" in proc.stdout
    assert "│ fifo / walltime │ batch " in proc.stdout
    assert "│ fifo / walltime │ gpu " in proc.stdout
    con = store.open_read(group_db)
    try:
        keys = [r["run_key"] for r in store.select_runs(con)[0]]
        rows = store.group_rows(con, keys, "partition")
        summary = con.execute("SELECT jobs, mean_wait FROM runs").fetchall()[0]
        with pytest.raises(InputError, match="unknown group 'queue'"):
            store.group_rows(con, keys, "queue")
    finally:
        con.close()
    assert [(r["group"], r["jobs"], r["runs"]) for r in rows] == [("batch", 5, 1),
                                                                  ("gpu", 1, 1)]
    # the groups add up to the run's own metrics
    jobs, mean_wait = summary
    assert sum(r["jobs"] for r in rows) == jobs
    assert sum(r["jobs"] * r["mean_wait"] for r in rows) == pytest.approx(jobs * mean_wait)
    assert sum(r["hours_share"] for r in rows) == pytest.approx(1.0)
    assert rows[0]["hours_unit"] == "node-hours"
    proc = run_cli("results", "groups", group_db, "--by", "account", "--format", "csv")
    assert_ok(proc)
    assert proc.stdout.splitlines()[0].startswith("trace,platform,dispatcher,predictor,cap,"
                                                  "group,runs,jobs")
    assert {line.split(",")[5] for line in proc.stdout.splitlines()[1:]} == {
        "proj1", "proj2", "proj3"}
    assert_user_error(run_cli("results", "groups", group_db, "--runs", "trace = 'x'"),
                      "no stored jobs of a current done run match the filter")


def test_an_old_store_reads_and_shows_its_results(tmp_path) -> None:
    """The schema-1 fixture (tests/data/store-v1.duckdb.gz) has no group columns: read,
    its jobs have null groups and results groups shows them as (none) without writing
    the file; opened for writing the columns are added (null), and new runs store
    their groups after them."""
    db = tmp_path / "v1.duckdb"
    with gzip.open(DATA / "store-v1.duckdb.gz", "rb") as src, open(db, "wb") as dst:
        shutil.copyfileobj(src, dst)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    con = store.open_read(db)
    try:
        nulls = con.execute('SELECT count(*), count(partition), count("user"), '
                            "count(account), count(qos) FROM jobs").fetchall()[0]
    finally:
        con.close()
    assert nulls == (200, 0, 0, 0, 0)
    proc = run_cli("results", "groups", db, "--include-outdated", "--format", "table")
    assert_ok(proc)
    assert "│ (none) " in proc.stdout
    assert "no stored job has a partition" in " ".join(proc.stdout.split())
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    store.open_write(db).close()
    con = connect(db)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM pragma_table_info('jobs')")
                 .fetchall()]
        count = con.execute("SELECT count(partition) FROM jobs").fetchall()[0][0]
    finally:
        con.close()
    assert names[-4:] == ["partition", "user", "account", "qos"] and count == 0
    # a new campaign's runs insert into the migrated file with their groups
    trace = tmp_path / "store-v1-trace.swf"
    shutil.copy(DATA / "store-v1-trace.swf", trace)
    text = (DATA / "store-v1.toml").read_text().replace('database = "v1.duckdb"',
                                                       f'database = "{db}"')
    run_campaign(write_campaign(tmp_path, text, "legacy.toml"), workers=1)
    con = connect(db)
    try:
        stored = con.execute('SELECT count(*), count("user") FROM jobs j JOIN runs r '
                             "USING (run_key) WHERE r.code_hash IS NOT NULL").fetchall()[0]
    finally:
        con.close()
    assert stored[0] > 0 and stored[1] == stored[0]  # SWF user numbers as text


PARTITIONED = """
[campaign]
name = "parts"
database = "p.duckdb"
[[traces]]
label = "log"
path = "{trace}"
{extra}
[[platforms]]
file = "{platform}"
[[dispatchers]]
name = "easy"
"""


def test_a_campaign_trace_takes_the_partition_options(tmp_path) -> None:
    # the hand-made cluster log names a partition 'debug' that this platform lacks: the
    # trace entry maps it (or ignores partitions), as simulate's options do; a run's
    # jobs then keep their partition names as the log wrote them
    cluster = DATA / "cluster"
    text = (cluster / "cluster.toml").read_text()
    platform = tmp_path / "p.toml"
    platform.write_text(text[:text.index('[[partition]]\nname = "debug"')])
    for extra in ('partition_map = "debug=cpu"', "ignore_partitions = true"):
        folder = tmp_path / extra.split()[0]
        folder.mkdir()
        spec = PARTITIONED.format(trace=cluster / "jobs.sacct", platform=platform,
                                  extra=extra)
        run_campaign(write_campaign(folder, spec), workers=1)
        con = connect(folder / "p.duckdb")
        try:
            status = con.execute("SELECT status FROM runs").fetchall()
            parts = {r[0] for r in con.execute("SELECT partition FROM jobs").fetchall()}
        finally:
            con.close()
        assert status == [("done",)], extra
        assert "debug" in parts
    (tmp_path / "none").mkdir()
    spec = PARTITIONED.format(trace=cluster / "jobs.sacct", platform=platform, extra="")
    run_campaign(write_campaign(tmp_path / "none", spec), workers=1)
    con = connect(tmp_path / "none" / "p.duckdb")
    try:
        failed = con.execute("SELECT status, error FROM runs").fetchall()
    finally:
        con.close()
    assert failed[0][0] == "failed" and "no partition 'debug'" in failed[0][1]
    both = PARTITIONED.format(trace=cluster / "jobs.sacct", platform=platform,
                              extra='partition_map = "debug=cpu"\nignore_partitions = true')
    with pytest.raises(InputError, match="either partition_map or ignore_partitions"):
        run_campaign(write_campaign(tmp_path, both), workers=1)
