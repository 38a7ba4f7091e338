"""Campaigns on the local process pool: expansion, run keys, storage, resume, retries,
a killed worker, a killed coordinator, and bad input (nothing written)."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from campaign_helpers import (
    comparable,
    connect,
    job_digest,
    own_dispatchers,
    stored_runs,
    synthetic_trace,
    write_campaign,
)
from dispatchlab.core.components import load_object
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.experiment.campaign import (
    LocalPool,
    campaign_status,
    group_runs,
    load_campaign,
    run_campaign,
    runner,
    select_runs,
    worker,
)
from dispatchlab.experiment.campaign.store import SCHEMA_VERSION
from dispatchlab.experiment.campaign.traces import cleaned_length
from dispatchlab.experiment.provenance import run_code_hash
from dispatchlab.platform import Platform
from dispatchlab.predict import make_predictor
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim import Simulation
from dispatchlab.workload.load import load_trace
from test_cli import assert_ok, assert_user_error, run_cli


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory) -> Path:
    return synthetic_trace(tmp_path_factory.mktemp("traces"), 1500, seed=3, cores=64)


@pytest.fixture(scope="module")
def slow_trace(tmp_path_factory) -> Path:
    # conservative backfilling on 5,000 of these jobs takes about 0.7 s: long enough to
    # kill a worker or the coordinator in the middle of a run
    return synthetic_trace(tmp_path_factory.mktemp("slow"), 12000, seed=5, cores=256)


def small_campaign(folder: Path, trace: Path, extra: str = "") -> Path:
    return write_campaign(folder, f"""
[campaign]
name = "small"
seeds = [1, 2]

[[traces]]
label = "syn"
path = "{trace}"

[[platforms]]
cores = 64

[[dispatchers]]
name = "fifo"
[[dispatchers]]
name = "easy"
label = "easy-sjf"
params = {{ order = "sjf" }}

[[predictors]]
name = "walltime"
[[predictors]]
name = "real"
{extra}""")


# --------------------------------------------------------------------------- expansion


def test_expansion_is_the_product_minus_exclusions(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace, """
[[exclude]]
dispatcher = "fifo"
predictor = "real"
""")
    camp = load_campaign(path)
    # 1 trace x 1 platform x 2 dispatchers x 2 predictors x 2 seeds = 8, minus the
    # fifo/real pair for both seeds = 6
    assert len(camp.runs) == 6
    pairs = {(r["dispatcher"]["label"], r["predictor"]["label"], r["seed"]) for r in camp.runs}
    assert ("fifo", "real", 1) not in pairs and ("easy-sjf", "real", 2) in pairs
    assert camp.database == tmp_path / "results.duckdb"
    assert len(set(camp.keys)) == 6


def test_run_keys_are_stable_and_cover_what_changes_results(tmp_path, small_trace):
    a = load_campaign(small_campaign(tmp_path, small_trace))
    b = load_campaign(small_campaign(tmp_path, small_trace))
    assert a.keys == b.keys  # same file twice: same keys
    # a label is cosmetic: same keys
    relabelled = small_campaign(tmp_path, small_trace).read_text().replace(
        'label = "easy-sjf"', 'label = "EASY (sjf order)"')
    c = load_campaign(write_campaign(tmp_path, relabelled, "relabelled.toml"))
    assert sorted(c.keys) == sorted(a.keys)
    # a parameter, the seed or the trace content change the key
    changed = relabelled.replace('order = "sjf"', 'order = "fifo"')
    d = load_campaign(write_campaign(tmp_path, changed, "changed.toml"))
    assert len(set(d.keys) & set(a.keys)) == 4  # the fifo runs are unchanged
    copy = tmp_path / "copy.swf"
    copy.write_bytes(small_trace.read_bytes() + b"\n")
    e = load_campaign(small_campaign(tmp_path, copy))
    assert not set(e.keys) & set(a.keys)


def test_seed_reaches_sampled_blocks_and_generated_traces(tmp_path, small_trace):
    path = write_campaign(tmp_path, f"""
[campaign]
seeds = [1, 2]
[[traces]]
path = "{small_trace}"
sample_jobs = 200
[[traces]]
generate = "fitted"
like = "{small_trace}"
jobs = 300
[[traces]]
generate = "lublin"
machine_size = 64
jobs = 250
[[platforms]]
cores = 64
[[dispatchers]]
name = "fifo"
""")
    report = run_campaign(path, workers=2)
    assert report.executed == 6 and report.failed == 0
    con = connect(tmp_path / "results.duckdb")
    rows = con.execute("SELECT trace, seed, jobs, "
                       "(SELECT sum(trace_run) FROM jobs j WHERE j.run_key = r.run_key) "
                       "FROM runs r ORDER BY trace, seed").fetchall()
    con.close()
    assert [(r[0], r[2]) for r in rows] == [
        ("fitted-syn-1500-3-300", 300), ("fitted-syn-1500-3-300", 300), ("lublin-64-250", 250),
        ("lublin-64-250", 250), ("syn-1500-3", 200), ("syn-1500-3", 200)]
    # different seeds: different sampled blocks and different generated workloads
    assert all(rows[i][3] != rows[i + 1][3] for i in (0, 2, 4))


# ----------------------------------------------------------------------- storing runs


def test_stored_results_equal_a_direct_simulation(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace)
    report = run_campaign(path, workers=2)
    assert (report.total, report.executed, report.failed) == (8, 8, 0)
    runs = stored_runs(tmp_path / "results.duckdb")
    assert len(runs) == 8 and all(r["status"] == "done" for r in runs.values())
    row = next(r for r in runs.values()
               if r["dispatcher"] == "easy-sjf" and r["predictor"] == "real")
    direct = Simulation(Platform.pooled(64), load_trace(small_trace),
                        make_dispatcher("easy", order="sjf"), make_predictor("real")).run()
    summary = run_summary(direct, tau=10.0)
    for column in ("jobs", "mean_wait", "mean_bsld", "p95_bsld", "utilization", "makespan"):
        assert row[column] == pytest.approx(summary[column]), column
    con = connect(tmp_path / "results.duckdb")
    starts = con.execute("SELECT start_time FROM jobs WHERE run_key = ? ORDER BY rowid",
                         [row["run_key"]]).fetchnumpy()["start_time"]
    series = con.execute("SELECT name, count(*) FROM series WHERE run_key = ? GROUP BY name",
                         [row["run_key"]]).fetchall()
    con.close()
    assert starts.tolist() == direct.start.tolist()
    assert dict(series).keys() == {"queue_length", "utilization"}


def test_rerun_skips_finished_runs_and_adds_new_ones(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace)
    first = run_campaign(path, workers=2)
    again = run_campaign(path, workers=2)
    assert again.executed == 0 and again.skipped_done == 8
    # one more seed: only its 4 runs are executed
    path.write_text(path.read_text().replace("seeds = [1, 2]", "seeds = [1, 2, 3]"))
    more = run_campaign(path, workers=2)
    assert more.executed == 4 and more.skipped_done == 8
    runs = stored_runs(tmp_path / "results.duckdb")
    assert len(runs) == 12 and set(first.executed_keys) <= set(runs)


def test_failed_run_is_recorded_and_retried_on_request(tmp_path, small_trace):
    # the window selects no job: the run fails in the worker, the campaign goes on
    path = write_campaign(tmp_path, f"""
[[traces]]
label = "ok"
path = "{small_trace}"
[[traces]]
label = "empty"
path = "{small_trace}"
window = [900000000, 900000001]
[[platforms]]
cores = 64
[[dispatchers]]
name = "fifo"
""")
    report = run_campaign(path, workers=1)
    assert (report.executed, report.failed) == (2, 1)
    runs = stored_runs(tmp_path / "results.duckdb")
    failed = [r for r in runs.values() if r["status"] == "failed"]
    assert len(failed) == 1 and "selects no jobs" in failed[0]["error"]
    assert failed[0]["mean_wait"] is None
    status = campaign_status(path)
    assert (status.done, status.failed, status.pending) == (1, 1, 0)
    assert "selects no jobs" in status.errors[0][2]
    skipped = run_campaign(path, workers=1)
    assert skipped.executed == 0 and skipped.skipped_failed == 1
    retried = run_campaign(path, workers=1, retry_failed=True)
    assert retried.executed == 1 and retried.failed == 1
    assert len(stored_runs(tmp_path / "results.duckdb")) == 2  # replaced, not duplicated


# ------------------------------------------------------------------ killed processes


def slow_campaign(folder: Path, trace: Path, seeds: str) -> Path:
    # engine = "python": the runs must last long enough to be interrupted (the native
    # engine simulates each of them in milliseconds)
    return write_campaign(folder, f"""
[campaign]
seeds = {seeds}
engine = "python"
[[traces]]
path = "{trace}"
sample_jobs = 5000
[[platforms]]
cores = 256
[[dispatchers]]
name = "conservative"
""")


def test_killed_worker_run_is_reexecuted_and_stored_once(tmp_path, slow_trace):
    path = slow_campaign(tmp_path, slow_trace, "[1, 2, 3, 4]")
    pool = LocalPool(2)
    killed: list[int] = []

    def kill_one_worker() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(pool.pids()) < 2:
            time.sleep(0.02)
        time.sleep(0.4)  # both workers are inside their first run now
        pid = pool.pids()[0]
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    report = run_campaign(path, backend=pool)
    killer.join()
    assert killed, "no worker was killed"
    assert report.executed == 4 and report.failed == 0
    assert report.reexecuted >= 1
    runs = stored_runs(tmp_path / "results.duckdb")
    assert len(runs) == 4 and all(r["status"] == "done" for r in runs.values())
    assert max(r["attempts"] for r in runs.values()) == 2
    assert all(r["worker"].split(":")[1] != str(killed[0]) for r in runs.values())
    con = connect(tmp_path / "results.duckdb")
    dup = con.execute("SELECT count(*) FROM (SELECT run_key, job_id FROM jobs "
                      "GROUP BY ALL HAVING count(*) > 1)").fetchone()[0]
    con.close()
    assert dup == 0
    # the re-executed run has the same results as an undisturbed run of it
    clean = tmp_path / "clean"
    clean.mkdir()
    run_campaign(slow_campaign(clean, slow_trace, "[1, 2, 3, 4]"), workers=2)
    again = stored_runs(clean / "results.duckdb")
    assert {k: comparable(v) for k, v in runs.items()} == \
        {k: comparable(v) for k, v in again.items()}
    assert job_digest(tmp_path / "results.duckdb") == job_digest(clean / "results.duckdb")


def test_resume_after_killing_the_coordinator(tmp_path, slow_trace):
    # 40 runs: the coordinator stores finished runs every FLUSH_SECONDS (2 s), and on an
    # idle machine 14 runs ended before the first store could be seen, so the kill found
    # the campaign complete; 40 outlast the first store with a margin
    seeds = list(range(1, 41))
    path = slow_campaign(tmp_path, slow_trace, str(seeds))
    db = tmp_path / "results.duckdb"
    proc = subprocess.Popen([sys.executable, "-m", "dispatchlab.cli", "campaign", "run",
                             str(path), "--workers", "2", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        done = 0
        while time.monotonic() < deadline and done < 2:
            time.sleep(0.1)
            if db.exists():
                try:
                    done = len(stored_runs(db))
                except duckdb.Error:
                    done = 0
        assert done >= 2, "the campaign stored nothing in time"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the coordinator and its workers
        proc.wait()
    before = stored_runs(db)
    assert 2 <= len(before) < len(seeds), f"{len(before)} runs stored before the kill"
    camp = load_campaign(path)
    report = run_campaign(camp, workers=2)
    # exactly the unfinished runs were executed: nothing lost, nothing run twice
    assert sorted(report.executed_keys) == sorted(set(camp.keys) - set(before))
    after = stored_runs(db)
    assert set(after) == set(camp.keys)
    assert all(r["status"] == "done" for r in after.values())
    for key, row in before.items():
        assert comparable(after[key]) == comparable(row)


# --------------------------------------------------------------------------- bad input


def db_fingerprint(db: Path) -> str | None:
    return hashlib.sha256(db.read_bytes()).hexdigest() if db.exists() else None


@pytest.mark.parametrize(("text", "needles"), [
    ("[[traces]\npath = 'x'", ["invalid TOML", "line 1"]),
    ("[campaign]\nseeds = 3\n", ["seeds must be a non-empty array"]),
    ("[campaign]\nwhatever = 1\n", ["unknown key(s) 'whatever'"]),
    ("[[traces]]\npath = 'missing.swf'\n[[dispatchers]]\nname = 'fifo'\n",
     ["traces[0]", "trace file not found", "missing.swf"]),
    ("[[traces]]\npath = '{trace}'\n[[dispatchers]]\nname = 'fast'\n",
     ["dispatchers[0]", "unknown dispatcher 'fast'"]),
    ("[[traces]]\npath = '{trace}'\n[[dispatchers]]\nname = 'easy'\n"
     "params = {{ reservations = 0 }}\n", ["dispatchers[0]", "reservations"]),
    ("[[traces]]\npath = '{trace}'\n[[dispatchers]]\nname = 'fifo'\n"
     "[[predictors]]\nname = 'oracle'\n", ["predictors[0]", "unknown predictor 'oracle'"]),
    ("[[traces]]\npath = '{trace}'\n[[dispatchers]]\nname = 'fifo'\n"
     "[[exclude]]\ndispatcher = 'easy'\n", ["exclude[0]", "no dispatcher labelled 'easy'"]),
    ("[[traces]]\npath = '{trace}'\n[[dispatchers]]\nname = 'fifo'\n[[dispatchers]]\n"
     "name = 'fifo'\nlabel = 'again'\n", ["same configuration"]),
    ("[[traces]]\npath = '{trace}'\nwindow = [5, 1]\n[[dispatchers]]\nname = 'fifo'\n",
     ["traces[0]", "0 <= A < B"]),
    ("[[traces]]\ngenerate = 'lublin'\njobs = 10\n[[dispatchers]]\nname = 'fifo'\n",
     ["machine_size"]),
    ("[[traces]]\npath = '{trace}'\n[[platforms]]\ncores = 4\nnodes = 2\n"
     "[[dispatchers]]\nname = 'fifo'\n", ["platforms[0]", "give one of"]),
])
def test_bad_campaign_is_refused_and_nothing_is_written(tmp_path, small_trace, text,
                                                        needles):
    # a database already holding one run: it must stay byte-identical
    good = small_campaign(tmp_path, small_trace)
    run_campaign(load_campaign(good), workers=1)
    db = tmp_path / "results.duckdb"
    before = db_fingerprint(db)
    bad = write_campaign(tmp_path, text.format(trace=small_trace), "bad.toml")
    proc = run_cli("campaign", "run", bad, "--workers", "1")
    line = assert_user_error(proc, *needles)
    assert str(bad) in line
    assert db_fingerprint(db) == before


def test_newer_database_is_refused_and_left_alone(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace)
    db = tmp_path / "results.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("INSERT INTO meta VALUES ('schema_version', ?), "
                "('dispatchlab_version', '9.0.0')", [str(SCHEMA_VERSION + 1)])
    con.close()
    before = db_fingerprint(db)
    proc = run_cli("campaign", "run", path, "--workers", "1")
    assert_user_error(proc, str(db), "dispatchlab 9.0.0", "upgrade dispatchlab")
    assert db_fingerprint(db) == before
    for args in (("campaign", "status", path), ("results", "query", db, "SELECT 1")):
        assert_user_error(run_cli(*args), "upgrade dispatchlab")
    with pytest.raises(InputError, match="upgrade"):
        run_campaign(path, workers=1)


def test_not_a_database_is_refused(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace)
    db = tmp_path / "results.duckdb"
    db.write_text("not a database\n")
    assert_user_error(run_cli("campaign", "run", path), str(db), "DuckDB")
    assert db.read_text() == "not a database\n"
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()  # a DuckDB file, but not ours
    assert_user_error(run_cli("campaign", "run", path, "--database", other),
                      "not a dispatchlab results database")


# ---------------------------------------------------------------------------- the CLI


def test_cli_run_status_query_export(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace)
    db = tmp_path / "results.duckdb"
    proc = run_cli("campaign", "status", path)
    assert_ok(proc)
    assert "8" in proc.stdout and not db.exists()  # status writes nothing
    proc = run_cli("campaign", "run", path, "--workers", "2")
    assert_ok(proc)
    assert "executed 8 (0 failed" in proc.stdout
    proc = run_cli("campaign", "run", path, "--workers", "2")
    assert_ok(proc)
    assert "executed 0" in proc.stdout and "skipped 8 done before" in proc.stdout
    proc = run_cli("results", "query", db,
                   "SELECT dispatcher, count(*) AS n FROM runs GROUP BY ALL ORDER BY 1")
    assert_ok(proc)
    assert "easy-sjf" in proc.stdout and "fifo" in proc.stdout
    proc = run_cli("results", "query", db, "SELECT * FROM jobs", "--limit", "5")
    assert_ok(proc)
    # the true count of all rows, not "more than the limit"
    n_jobs = connect(db).execute("SELECT count(*) FROM jobs").fetchone()[0]
    assert f"{n_jobs:,} rows; showing the first 5" in proc.stdout
    sql = "SELECT dispatcher, count(*) AS n FROM runs GROUP BY ALL ORDER BY 1"
    proc = run_cli("results", "query", db, sql, "--format", "csv")
    assert_ok(proc)
    rows = list(csv.reader(io.StringIO(proc.stdout)))
    assert rows[0] == ["dispatcher", "n"] and len(rows) >= 3
    proc = run_cli("results", "query", db, sql, "--format", "json")
    assert_ok(proc)
    data = json.loads(proc.stdout)
    assert [r["dispatcher"] for r in data] == [r[0] for r in rows[1:]]
    assert [r["n"] for r in data] == [int(r[1]) for r in rows[1:]]
    assert_user_error(run_cli("results", "query", db, "SELECT nope FROM runs"),
                      "SQL error", "nope")
    assert_user_error(run_cli("results", "query", db, "DELETE FROM runs"), "read-only")
    for fmt in ("parquet", "csv"):
        out = tmp_path / fmt
        assert_ok(run_cli("results", "export", db, "--format", fmt, "--out", out))
        assert sorted(p.name for p in out.iterdir()) == [
            f"jobs.{fmt}", f"runs.{fmt}", f"series.{fmt}"]
    assert_ok(run_cli("results", "export", db, "--tables", "runs"))  # default folder
    assert (tmp_path / "results-export" / "runs.parquet").is_file()
    import pyarrow.parquet as pq

    assert pq.read_table(tmp_path / "parquet" / "runs.parquet").num_rows == 8
    assert pq.read_table(tmp_path / "parquet" / "jobs.parquet").num_rows == 8 * 1500
    assert_user_error(run_cli("results", "query", tmp_path / "nope.duckdb", "SELECT 1"),
                      "no such results database")
    assert_user_error(run_cli("campaign", "run", path, "--workers", "0"), "--workers")


# ---------------------------------------------------------------- the docs and examples

DOCS = Path(__file__).resolve().parents[3] / "docs"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "campaigns"


def docs_block(page: str, after: str, lang: str) -> str:
    """The first ``lang`` code block after the text ``after`` on the docs page ``page``."""
    text = (DOCS / page).read_text()
    start = text.index(f"```{lang}\n", text.index(after)) + len(lang) + 4
    return text[start:text.index("```", start)]


def test_docs_campaign_example_is_valid(tmp_path, traces_dir):
    text = docs_block("reference/campaigns.md", "A complete example", "toml")
    camp = load_campaign(write_campaign(tmp_path, text))
    # 3 traces x 1 platform x 2 dispatchers x 2 predictors x 3 seeds = 36, minus
    # sjf/walltime for every trace and seed (9) = 27
    assert len(camp.runs) == 27
    assert camp.name == "easy-vs-sjf" and camp.database == tmp_path / "results.duckdb"
    easy = next(r for r in camp.runs if r["dispatcher"]["label"] == "easy-sjbf")
    assert easy["dispatcher"]["params"] == {"order": "sjf", "reservations": 1}
    assert easy["trace"]["sample_jobs"] == 5000


@pytest.mark.parametrize("name", ["quick.toml", "prediction-study.toml"])
def test_shipped_campaigns_are_valid(name, traces_dir):
    camp = load_campaign(EXAMPLES / name)
    assert len(camp.runs) == {"quick.toml": 30, "prediction-study.toml": 39}[name]


def test_cli_report_and_docs_plots_snippet(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace)
    db = tmp_path / "results.duckdb"
    assert_ok(run_cli("campaign", "run", path, "--workers", "2"))
    proc = run_cli("report", db, "--out", tmp_path / "report", "--runs",
                   "dispatcher = 'easy-sjf'")
    assert_ok(proc)
    html = (tmp_path / "report" / "index.html").read_text()
    assert html.count("<img") >= 5 and "easy-sjf" in html
    assert_user_error(run_cli("report", db, "--out", tmp_path / "r2", "--runs", "nope = 1"),
                      "nope")
    assert_user_error(run_cli("report", db, "--out", tmp_path / "r3", "--gantt-window",
                              "10:5"), "--gantt-window")
    assert not (tmp_path / "r2").exists() or not (tmp_path / "r2" / "index.html").exists()
    # the reference's notebook snippet, run on this database
    snippet = docs_block("reference/reports.md", "In notebooks, `dispatchlab.report.plots`",
                         "python")
    os.chdir(tmp_path)
    try:
        exec(compile(snippet, "docs/reference/reports.md", "exec"), {})
    finally:
        os.chdir(Path(__file__).resolve().parents[3])
    assert (tmp_path / "bsld.png").stat().st_size > 0


def test_two_coordinators_at_once_store_each_run_once(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace)
    cmd = [sys.executable, "-m", "dispatchlab.cli", "campaign", "run", str(path),
           "--workers", "1", "--no-progress"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert "Traceback" not in err
        assert "campaign small: 8 runs" in out
    runs = stored_runs(tmp_path / "results.duckdb")
    assert len(runs) == 8 and all(r["status"] == "done" for r in runs.values())
    con = connect(tmp_path / "results.duckdb")
    per_run = con.execute("SELECT count(*) FROM jobs GROUP BY run_key").fetchall()
    con.close()
    assert [n for (n,) in per_run] == [1500] * 8  # no run's jobs stored twice


def test_node_level_platform_file_and_allocator(tmp_path, small_trace):
    (tmp_path / "cluster.toml").write_text(
        'name = "cluster"\n[[node_type]]\nname = "cpu"\ncount = 8\n'
        'capacity = { core = 8, mem = 64000 }\n')
    path = write_campaign(tmp_path, f"""
[[traces]]
path = "{small_trace}"
[[platforms]]
file = "cluster.toml"
allocator = "best-fit"
[[platforms]]
label = "pool"
cores = 64
[[dispatchers]]
name = "easy"
""")
    report = run_campaign(path, workers=2)
    assert report.executed == 2 and report.failed == 0
    con = connect(tmp_path / "results.duckdb")
    rows = dict(con.execute("SELECT platform, (node_level, nodes) FROM runs").fetchall())
    allocated = dict(con.execute(
        "SELECT r.platform, count(j.allocation) FROM runs r JOIN jobs j USING (run_key) "
        "GROUP BY ALL").fetchall())
    con.close()
    # nodes with memory as well as cores: placement on the 8 nodes is simulated, and
    # every job that ran has its allocation; the pool has none
    assert rows == {"cluster": (True, 8), "pool": (False, None)}
    assert allocated == {"cluster": 1500, "pool": 0}
    run = load_campaign(path).runs[0]
    assert run["config"]["platform"]["allocator"] == "best-fit"
    # the platform file's checksum is one of the run's inputs, not configuration
    cluster = str((tmp_path / "cluster.toml").resolve())
    assert run["config"]["platform"]["file"] == cluster and cluster in run["inputs"]
    assert run["config"]["dispatcher"]["params"]["allocator"] == "best-fit"


def test_allocator_needs_a_dispatcher_that_takes_it(tmp_path, small_trace, monkeypatch):
    import sys as _sys

    from dispatchlab.dispatch import DISPATCHERS

    _sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
    try:
        from custom_dispatcher import WidestFirst
    finally:
        _sys.path.pop(0)
    monkeypatch.setitem(DISPATCHERS, "widest", WidestFirst)
    path = write_campaign(tmp_path, f"""
[[traces]]
path = "{small_trace}"
[[platforms]]
nodes = 8
cores_per_node = 8
allocator = "best-fit"
[[dispatchers]]
name = "widest"
""")
    with pytest.raises(InputError, match="takes no allocator parameter"):
        load_campaign(path)


def test_concurrent_creation_of_one_database(tmp_path):
    # several coordinators creating the same new database at once: each waits for the
    # lock, the first creates the tables and the version, the others find them
    db = tmp_path / "new.duckdb"
    code = ("import sys\nfrom dispatchlab.experiment.campaign.runner import _open_for_flush\n"
            "_open_for_flush(__import__('pathlib').Path(sys.argv[1])).close()\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(db)], stderr=subprocess.PIPE,
                              text=True) for _ in range(4)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, errors
    con = connect(db)
    meta = con.execute("SELECT key FROM meta ORDER BY key").fetchall()
    con.close()
    assert meta == [("dispatchlab_version",), ("schema_version",)]


def test_storage_switches(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace).read_text().replace(
        'name = "small"', 'name = "small"\nstore_jobs = false\nstore_series = false')
    report = run_campaign(write_campaign(tmp_path, path, "light.toml"), workers=1)
    assert report.executed == 8
    con = connect(tmp_path / "results.duckdb")
    counts = [con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
              for t in ("runs", "jobs", "series")]
    horizon = con.execute("SELECT min(series_end - series_start) FROM runs").fetchone()[0]
    con.close()
    assert counts == [8, 0, 0] and horizon > 0  # metrics and the horizon are still kept
    # the switches do not change what a run computes: same keys as the full campaign
    assert sorted(load_campaign(tmp_path / "light.toml").keys) == sorted(
        load_campaign(small_campaign(tmp_path, small_trace)).keys)


def test_trace_without_maxprocs_needs_a_platform(tmp_path, small_trace):
    # the synthetic SWF has no MaxProcs/MaxNodes header: the default platform is unknown
    path = write_campaign(tmp_path, f'[[traces]]\npath = "{small_trace}"\n'
                                    '[[dispatchers]]\nname = "fifo"\n')
    report = run_campaign(path, workers=1)
    assert report.failed == 1
    (run,) = stored_runs(tmp_path / "results.duckdb").values()
    assert "neither MaxProcs nor MaxNodes; give the platform" in run["error"]
    assert_user_error(run_cli("simulate", small_trace), "neither MaxProcs nor MaxNodes",
                      "--nodes and --cores-per-node")


# ------------------------------------------------ provenance: code, inputs, re-runs


def own_campaign(folder: Path, trace: Path, dispatchers: str, platform: str = "cores = 64",
                 seeds: str = "[1, 2]") -> Path:
    return write_campaign(folder, f"""
[campaign]
name = "own"
seeds = {seeds}
[[traces]]
label = "syn"
path = "{trace}"
jobs = [0, 600]
[[platforms]]
label = "p"
{platform}
[[dispatchers]]
name = "fifo"
{dispatchers}
""")


def rows_by_dispatcher(db: Path) -> dict[tuple[str, int], dict]:
    return {(r["dispatcher"], r["seed"]): r for r in stored_runs(db).values()}


def test_editing_an_own_class_reexecutes_exactly_its_runs(tmp_path, small_trace):
    files = own_dispatchers(tmp_path)
    path = own_campaign(tmp_path, small_trace,
                        '[[dispatchers]]\nlabel = "mine"\nname = "mine.py:Mine"')
    db = tmp_path / "results.duckdb"
    assert run_campaign(path, workers=2).executed == 4
    before = rows_by_dispatcher(db)
    assert before[("mine", 1)]["dispatcher_name"] == f"{files['mine'].resolve()}:Mine"
    # the campaign's seed reaches the class's seed parameter, but not the config key
    assert {before[("mine", s)]["config_key"] for s in (1, 2)} == {
        before[("mine", 1)]["config_key"]}
    # docstrings and comments are not code: nothing to do
    files["mine"].write_text(files["mine"].read_text().replace(
        '"""EASY with', '# a comment\n    """Still EASY, with'))
    assert run_campaign(path, workers=2).executed == 0
    # an edit of a module it imports: its two runs are outdated until run again
    files["helpers"].write_text("ORDER = 'sjf'\n")
    con = connect(db)
    current, outdated = select_runs(con)
    con.close()
    assert {(r["dispatcher"], r["seed"]) for r in outdated} == {("mine", 1), ("mine", 2)}
    assert all("made by other code" in r["outdated"] for r in outdated)
    assert {r["dispatcher"] for r in current} == {"fifo"}
    status = campaign_status(path)
    assert (status.done, status.pending, status.outdated) == (2, 2, 2)
    assert "made by other code" in status.outdated_runs[0][2]
    camp = load_campaign(path)
    report = run_campaign(camp, workers=2)
    assert report.executed == 2 and report.superseded == 2
    assert set(report.executed_keys) == set(camp.keys) - {r["run_key"]
                                                          for r in before.values()}
    after = rows_by_dispatcher(db)
    assert len(after) == 4 and all(r["status"] == "done" for r in after.values())
    for seed in (1, 2):
        assert after[("fifo", seed)] == before[("fifo", seed)]  # untouched
        old, new = before[("mine", seed)], after[("mine", seed)]
        assert new["code_hash"] != old["code_hash"]
        assert new["config_key"] == old["config_key"]
        assert new["mean_wait"] != old["mean_wait"]  # now in SJF order
    con = connect(db)
    per_run = con.execute("SELECT count(*) FROM jobs GROUP BY run_key").fetchall()
    con.close()
    assert sorted(per_run) == [(600,)] * 4  # the old runs' jobs went with them
    # an own class whose module is gone: its runs are outdated, and it is said why
    files["mine"].unlink()
    con = connect(db)
    current, outdated = select_runs(con)
    everything, none = select_runs(con, include_outdated=True)
    con.close()
    assert len(outdated) == 2 and "cannot be imported" in outdated[0]["outdated"]
    assert len(everything) == 4 and none == []
    assert sum(r["outdated"] is not None for r in everything) == 2


def test_edited_input_files_reexecute_their_runs(tmp_path, small_trace):
    files = own_dispatchers(tmp_path)
    cluster = tmp_path / "cluster.toml"
    cluster.write_text('name = "c"\n[[node_type]]\nname = "cpu"\ncount = 8\n'
                       'capacity = { core = 8 }\n')
    path = own_campaign(tmp_path, small_trace,
                        '[[dispatchers]]\nlabel = "ff"\nname = "from_file.py:FromFile"',
                        platform='file = "cluster.toml"', seeds="[1]")
    db = tmp_path / "results.duckdb"
    assert run_campaign(path, workers=2).executed == 2
    before = rows_by_dispatcher(db)
    inputs = json.loads(before[("ff", 1)]["inputs"])
    assert set(inputs) == {str(small_trace.resolve()), str(cluster.resolve()),
                           str(files["order"].resolve())}
    assert set(json.loads(before[("fifo", 1)]["inputs"])) == {
        str(small_trace.resolve()), str(cluster.resolve())}
    # the class's declared input file: its run only
    files["order"].write_text("sjf\n")
    report = run_campaign(path, workers=2)
    assert report.executed == 1 and report.superseded == 1
    after = rows_by_dispatcher(db)
    assert after[("fifo", 1)] == before[("fifo", 1)]
    assert after[("ff", 1)]["mean_wait"] != before[("ff", 1)]["mean_wait"]
    # the platform file: every run on it
    cluster.write_text(cluster.read_text() + "# one more line\n")
    report = run_campaign(path, workers=2)
    assert report.executed == 2 and report.superseded == 2
    assert len(stored_runs(db)) == 2


def test_rerun_and_rerun_where_replace_rows_without_duplicates(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace)
    db = tmp_path / "results.duckdb"
    run_campaign(path, workers=2)
    before = stored_runs(db)
    report = run_campaign(path, workers=2, rerun_where="dispatcher = 'fifo' AND seed = 1")
    assert (report.executed, report.rerun, report.skipped_done) == (2, 2, 6)
    after = stored_runs(db)
    assert after.keys() == before.keys()
    changed = {k for k in after if after[k]["finished_at"] != before[k]["finished_at"]}
    assert changed == {k for k, r in before.items()
                       if r["dispatcher"] == "fifo" and r["seed"] == 1}
    assert all(comparable(after[k]) == comparable(before[k]) for k in after)
    report = run_campaign(path, workers=2, rerun=True)
    assert (report.executed, report.rerun, report.skipped_done) == (8, 8, 0)
    con = connect(db)
    counts = con.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM jobs), "
                         "(SELECT count(*) FROM (SELECT run_key, name, time FROM series "
                         "GROUP BY ALL HAVING count(*) > 1))").fetchall()[0]
    con.close()
    assert counts == (8, 8 * 1500, 0)
    with pytest.raises(InputError, match="bad run condition") as info:
        run_campaign(path, workers=2, rerun_where="nope = 1")
    assert info.value.field == "--rerun-where" and info.value.file == str(db)
    assert run_campaign(path, workers=2, rerun_where="dispatcher = 'nobody'").executed == 0


def selection_campaign(folder: Path, trace: Path, name: str, selection: str) -> Path:
    return write_campaign(folder, f"""
[campaign]
name = "{name}"
seeds = [1, 2]
[[traces]]
label = "syn"
path = "{trace}"
{selection}
[[platforms]]
cores = 64
[[dispatchers]]
name = "easy"
""", f"{name}.toml")


def test_two_job_selections_in_one_database_are_never_pooled(tmp_path, small_trace):
    a = selection_campaign(tmp_path, small_trace, "a", "jobs = [0, 1000]")
    b = selection_campaign(tmp_path, small_trace, "b", "sample_jobs = 1000")
    for path in (a, b):
        assert run_campaign(path, workers=2).executed == 2
    con = connect(tmp_path / "results.duckdb")
    runs, outdated = select_runs(con)
    con.close()
    assert len(runs) == 4 and not outdated
    groups = group_runs(runs)
    assert len(groups) == 2 and len({g.config_key for g in groups}) == 2
    assert all(len(g.runs) == 2 and {r["campaign"] for r in g.runs} == {g.campaign}
               for g in groups)
    labels = {g.campaign: g.label for g in groups}
    assert labels == {"a": "easy-walltime [campaign=a, trace.jobs=[0,1000]]",
                      "b": "easy-walltime [campaign=b, trace.sample_jobs=1000]"}
    assert {g.predictor for g in groups} == {"walltime"}


def test_groups_name_what_differs(tmp_path, small_trace):
    # one campaign name, two files with different parameters under the same labels
    texts = [small_campaign(tmp_path, small_trace).read_text()]
    texts.append(texts[0].replace('order = "sjf"', 'order = "sjf", reservations = 2'))
    rows = []
    for i, text in enumerate(texts):
        for spec in load_campaign(write_campaign(tmp_path, text, f"v{i}.toml")).runs:
            rows.append({"campaign": spec["campaign"], "trace": spec["trace"]["label"],
                         "platform": spec["platform"]["label"],
                         "dispatcher": spec["dispatcher"]["label"],
                         "predictor": spec["predictor"]["label"], "seed": spec["seed"],
                         "config": json.dumps(spec["config"]),
                         "config_key": spec["config_key"]})
    groups = group_runs(rows)
    labels = sorted(g.label for g in groups)
    assert labels == ["easy-sjf-real [dispatcher.params.reservations=1]",
                      "easy-sjf-real [dispatcher.params.reservations=2]",
                      "easy-sjf-walltime [dispatcher.params.reservations=1]",
                      "easy-sjf-walltime [dispatcher.params.reservations=2]",
                      "fifo-real", "fifo-walltime"]
    assert all(len(g.runs) == (4 if g.dispatcher == "fifo" else 2) for g in groups)


# ---------------------------------------------------------------------------- slices


def sliced_campaign(folder: Path, trace: Path, slices: str, extra: str = "",
                    trace_extra: str = "") -> Path:
    return write_campaign(folder, f"""
[campaign]
seeds = [1, 2]
{extra}
[[traces]]
label = "syn"
path = "{trace}"
slices = {slices}
{trace_extra}
[[platforms]]
cores = 64
[[dispatchers]]
name = "fifo"
[[dispatchers]]
name = "easy"
""", "sliced.toml")


def test_slices_expand_into_one_run_per_slice(tmp_path, small_trace):
    from dispatchlab.workload.slices import measure_for, plan_slices

    camp = load_campaign(sliced_campaign(tmp_path, small_trace, "{ count = 3, jobs = 300 }"))
    plan = plan_slices(1500, 3, 300)  # lead-in 30 by default
    assert len(camp.runs) == 2 * 2 * 3 and len(set(camp.keys)) == 12
    for run in camp.runs:
        s = plan[run["slice"]]
        assert run["workload"] == f"seed={run['seed']}/slice={s.index}"
        assert run["measure"] == measure_for(s) == "index:30:330"
        assert run["trace"]["slice"] == {"index": s.index, "first": s.first,
                                         "start": s.start, "stop": s.stop}
        assert run["config"]["trace"]["slices"] == {"count": 3, "jobs": 300, "lead_in": 30}
    # slices and seeds are workloads of one configuration
    assert len({r["config_key"] for r in camp.runs}) == 2
    lead = load_campaign(sliced_campaign(tmp_path, small_trace,
                                         "{ count = 3, jobs = 300, lead_in = 0 }"))
    assert not {r["config_key"] for r in lead.runs} & {r["config_key"] for r in camp.runs}


def test_planning_slices_does_not_load_the_worker(tmp_path, small_trace):
    """The configuration reads a trace's cleaned length through campaign.traces (as the
    worker does), and the runner names the worker's task: reading a campaign file, even
    one with slices, loads the campaign package without the simulator's worker."""
    path = sliced_campaign(tmp_path, small_trace, "{ count = 3, jobs = 300 }")
    code = ("import sys\nfrom dispatchlab.experiment.campaign import load_campaign\n"
            f"camp = load_campaign({str(path)!r})\n"
            "print(len(camp.runs), 'dispatchlab.experiment.campaign.worker' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["12", "False"]
    assert load_object(runner.RUN_TASK) is worker.execute_run
    assert worker.cleaned_length is cleaned_length
    assert cleaned_length({"path": str(small_trace)}) == 1500


def test_sliced_runs_store_slice_and_workload(tmp_path, small_trace):
    path = sliced_campaign(tmp_path, small_trace, "{ count = 2, jobs = 200, lead_in = 50 }")
    text = path.read_text().replace("seeds = [1, 2]", "seeds = [1]")
    report = run_campaign(write_campaign(tmp_path, text, "sliced.toml"), workers=2)
    assert report.executed == 4 and report.failed == 0
    rows = sorted(stored_runs(tmp_path / "results.duckdb").values(),
                  key=lambda r: (r["dispatcher"], r["slice"]))
    assert [(r["dispatcher"], r["slice"], r["workload"]) for r in rows] == [
        ("easy", 0, "seed=1/slice=0"), ("easy", 1, "seed=1/slice=1"),
        ("fifo", 0, "seed=1/slice=0"), ("fifo", 1, "seed=1/slice=1")]
    assert all(r["jobs"] == 200 for r in rows)  # the measured block only
    con = connect(tmp_path / "results.duckdb")
    simulated = dict(con.execute("SELECT run_key, count(*) FROM jobs GROUP BY 1").fetchall())
    con.close()
    assert set(simulated.values()) == {250}  # lead-in + measured jobs
    groups = group_runs(rows)
    assert sorted((g.label, len(g.runs)) for g in groups) == [("easy-walltime", 2),
                                                             ("fifo-walltime", 2)]


@pytest.mark.parametrize(("slices", "extra", "trace_extra", "needles"), [
    ("{ count = 10, jobs = 200 }", "", "", ["traces[0]", "do not fit", "1,500"]),
    ("{ count = 2, jobs = 200 }", 'measure = "index:0:100"', "", ["traces[0]", "measure"]),
    ("{ count = 2, jobs = 200 }", "", "sample_jobs = 100", ["traces[0]", "sample_jobs"]),
    ("{ cont = 2, jobs = 200 }", "", "", ["traces[0].slices", "did you mean 'count'"]),
    ("{ count = 0, jobs = 200 }", "", "", ["traces[0]", "count = K >= 1"]),
])
def test_bad_slices_are_refused(tmp_path, small_trace, slices, extra, trace_extra, needles):
    path = sliced_campaign(tmp_path, small_trace, slices, extra, trace_extra)
    with pytest.raises(InputError) as info:
        load_campaign(path)
    text = str(info.value)
    assert str(path) in text
    for needle in needles:
        assert needle in text


def test_slices_need_a_trace_file(tmp_path):
    path = write_campaign(tmp_path, """
[[traces]]
generate = "lublin"
machine_size = 64
jobs = 500
slices = { count = 2, jobs = 100 }
[[dispatchers]]
name = "fifo"
""")
    with pytest.raises(InputError, match="slices apply to trace files"):
        load_campaign(path)


# ------------------------------------------------------------- names and suggestions


@pytest.mark.parametrize(("text", "needles"), [
    ("[[traces]]\npath = '{trace}'\n[[dispatcher]]\nname = 'fifo'\n",
     ["unknown section(s) 'dispatcher'", "did you mean 'dispatchers'"]),
    ("[campaign]\nsed = [1]\n[[traces]]\npath = '{trace}'\n[[dispatchers]]\nname = 'fifo'\n",
     ["campaign", "unknown key(s) 'sed'", "did you mean 'seeds'"]),
    ("[[traces]]\npath = '{trace}'\nsample_job = 5\n[[dispatchers]]\nname = 'fifo'\n",
     ["traces[0]", "did you mean 'sample_jobs'"]),
    ("[[traces]]\npath = '{near}'\n[[dispatchers]]\nname = 'fifo'\n",
     ["traces[0]", "trace file not found", "did you mean", "syn-1500-3.swf"]),
    ("[[traces]]\npath = '{trace}'\n[[dispatchers]]\nname = 'eazy'\n",
     ["dispatchers[0]", "did you mean 'easy'"]),
    ("[[traces]]\npath = '{trace}'\n[[platforms]]\nfile = 'clustr.toml'\n"
     "[[dispatchers]]\nname = 'fifo'\n", ["platforms[0]", "platform file not found"]),
])
def test_mistakes_come_with_suggestions(tmp_path, small_trace, text, needles):
    near = str(small_trace)[:-1]  # syn-1500-3.sw
    path = write_campaign(tmp_path, text.format(trace=small_trace, near=near), "typo.toml")
    with pytest.raises(InputError) as info:
        load_campaign(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for needle in needles:
        assert needle in message, message


def test_names_are_stored_canonical_and_parameters_in_full(tmp_path, small_trace):
    path = small_campaign(tmp_path, small_trace).read_text().replace(
        'name = "easy"', 'name = "EASY"')
    camp = load_campaign(write_campaign(tmp_path, path, "upper.toml"))
    easy = next(r for r in camp.runs if r["dispatcher"]["label"] == "easy-sjf")
    assert easy["dispatcher"]["name"] == "easy"
    assert easy["dispatcher"]["params"] == {"order": "sjf"}  # what it is built with
    full = easy["config"]["dispatcher"]["params"]
    assert full["order"] == "sjf" and full["reservations"] == 1  # defaults recorded
    assert easy["config_key"] and easy["code_hash"] == run_code_hash("easy", "walltime")
    # spelling the default out gives the same configuration, so the same keys
    explicit = path.replace('order = "sjf"', 'order = "sjf", reservations = 1')
    again = load_campaign(write_campaign(tmp_path, explicit, "explicit.toml"))
    assert sorted(again.keys) == sorted(camp.keys)


def test_reader_options_and_companion_files(tmp_path, small_trace) -> None:
    """A trace entry names its format and reader options (checked against the format);
    a companion machine file beside the trace joins the run's inputs, so editing it
    re-keys the runs."""
    import shutil

    trace = tmp_path / "t.swf"
    shutil.copy(small_trace, trace)
    body = f"""
[campaign]
name = "fmt"
[[traces]]
path = "{trace}"
format = "swf"
[[platforms]]
cores = 64
[[dispatchers]]
name = "fifo"
"""
    camp = load_campaign(write_campaign(tmp_path, body))
    assert camp.runs[0]["trace"]["format"] == "swf"
    assert list(camp.runs[0]["inputs"]) == [str(trace)]
    key = camp.runs[0]["run_key"]
    machines = tmp_path / "t.swf.machines"
    machines.write_text("0 a 2 8 1 1000\n")
    camp = load_campaign(write_campaign(tmp_path, body))
    assert sorted(camp.runs[0]["inputs"]) == [str(trace), str(machines)]
    assert camp.runs[0]["run_key"] != key
    with pytest.raises(InputError, match="timezone does not apply to swf traces"):
        load_campaign(write_campaign(tmp_path, body.replace('format = "swf"',
                                                            'format = "swf"\ntimezone = "UTC"')))
    with pytest.raises(InputError, match="did you mean 'sacct'"):
        load_campaign(write_campaign(tmp_path, body.replace('"swf"', '"sact"')))
