"""The campaign results database: one embedded DuckDB file.

Only the coordinating process writes it (workers return results; see
:mod:`dispatchlab.experiment.campaign.runner`). Runs are stored in transactions that hold whole runs
(their ``runs`` row, ``jobs`` rows and ``series`` rows), so a coordinator killed at any
moment leaves each run either whole or absent; ``runs.run_key`` is the primary key, and
:func:`store_outcomes` drops an outcome whose run is already stored as done, so a run is
never stored twice, even by two coordinators running one campaign at the same time.

**One row per run slot.** A run of a campaign is identified by its slot: campaign,
trace label, configuration key, workload and repetition. When a run is stored, the
rows of the same slot under another run key (the same run made with other code or
other input files: outdated) are removed in the same transaction, so editing an own
class, a trace or dispatchlab and running the campaign again replaces the old results
instead of storing the run twice.

Tables (times in seconds from the trace's time origin after slicing, i.e. the values
the simulation used):

``meta``
    ``key``, ``value``: ``schema_version`` (an integer, :data:`SCHEMA_VERSION`) and
    ``dispatchlab_version`` (the version that created the file).
``runs``
    One row per run: its labels (``campaign``, ``trace``, ``platform``,
    ``dispatcher``, ``predictor``: the names given in the campaign file), the
    component names (``dispatcher_name``, ``predictor_name``), ``seed``,
    ``repetition``, ``tau``, ``overrun``, the full configuration as JSON
    (``config``), ``trace_path`` and ``trace_sha256``, ``version`` (dispatchlab's),
    ``status`` (``done`` or ``failed``), ``attempts`` (local pool: executions it
    took, more than one when its worker process died under it; Dask: 1 + the number
    of workers that died while the scheduler had given them the run, running or
    queued there), ``error`` (the failure, null when done),
    ``finished_at`` (UTC), ``wall_seconds`` (the worker's wall time for the whole
    run: load, simulate, metrics), ``simulate_seconds``, ``worker`` (where it ran),
    ``cores`` (platform core capacity), ``node_level`` (placement on nodes simulated:
    jobs have ``allocation`` strings; false for pools and for core-only platforms with
    one-core units, which are simulated by counting), ``nodes`` (node count of a
    node-level run, else null), ``peak_rss_mb`` (peak resident memory of the worker
    process so far, MB: an upper bound for the run), one column per metric of
    :data:`dispatchlab.metrics.keys.METRICS` (same name, its declared SQL type; null
    for failed runs), ``series_start`` / ``series_end`` (the horizon of the series),
    the whole metrics summary as JSON (``summary``), and since schema version 2:
    ``code_hash`` (:func:`dispatchlab.experiment.provenance.run_code_hash` of the code that made
    it; null for runs stored by schema version 1), ``config_key``
    (:func:`dispatchlab.experiment.campaign.config.config_key`: what is compared), ``slice``
    (the slice index, null when the run is not a slice), ``workload`` (what the
    statistics pair runs on: ``seed=S`` or ``seed=S/slice=K``) and ``inputs`` (JSON:
    input file path -> SHA-256); and, added like new metric columns, ``cap`` and
    ``power_predictor`` (the campaign's labels of the run's cap and power predictor;
    null for runs of campaigns without ``[power]``) and ``warnings`` (JSON list of the
    run's warnings, :func:`dispatchlab.run.advice.run_warnings`, as in its summary; null
    for failed runs and for runs whose summary has none, stored before warnings were
    kept) and ``engine`` (the engine that ran, ``python`` or ``native``, as in its
    summary; ``python`` for runs stored before the native engine, null for failed
    runs).
``jobs``
    One row per job of a done run (when the campaign stores jobs): ``run_key``,
    ``job_id``, ``submit_time``, ``start_time``, ``end_time`` (-1 if rejected),
    ``wait``, ``run_time`` (simulated, -1 if rejected), ``trace_run`` (from the
    trace), ``requested_time``, ``procs`` (units requested), ``user_id``, ``status``
    (completed / killed / rejected), ``estimate`` (the predictor's estimate at
    submission, s; -1 if rejected), ``slowdown``, ``bsld`` (null if rejected),
    ``job_class`` (short / medium / long by simulated run; null if rejected),
    ``allocation`` (``"node:units,..."`` for node-level runs, else null), and, added to
    older files like new metric columns (:data:`JOB_ADDED_COLUMNS`), ``measured`` (the
    job counts in the run's metrics: inside the measurement window, so not a lead-in
    job of a slice, and not a hot-start dummy) and ``hot_start`` (a hot-start dummy
    job: one node kept busy from t = 0, not part of the workload), then the job's
    groups as text (:data:`JOB_GROUP_COLUMNS`, the keys of ``simulate --by``,
    :func:`dispatchlab.metrics.groups.group_labels`): ``partition`` (the log's
    partition or queue name; an SWF trace's number), ``user`` (name, or the SWF
    number), ``account`` and ``qos`` (null when the trace has no such column), null
    for a job without the value. Rows stored before these columns existed get
    ``measured`` = submitted at or after the run's ``series_start`` (its first
    measured submission; true when unknown), ``hot_start`` null (unknown) and null
    groups.
``series``
    Step functions of a done run (when the campaign stores series): ``run_key``,
    ``name`` (``queue_length``: waiting jobs; ``utilization``: fraction of the
    primary resource in use), ``time`` (breakpoint, s) and ``value``, holding on
    ``[time, next time)``; the last value holds until ``runs.series_end``. Never one
    row per simulated second.

**Older files.** Opening a schema-1 file *for writing* (:func:`open_write`) migrates it
in place, in one transaction: the new columns are added, ``config_key`` and
``workload`` computed from the stored configuration
(:func:`~dispatchlab.experiment.campaign.config.legacy_config_key`, which brings it to today's
form so it matches new runs of the same configuration), ``inputs`` from the stored
trace and platform checksums, the metric columns filled from the stored ``summary``
where it has them, ``code_hash`` left null (such runs count as outdated), and the
schema version set to 2. Any column of a metric declared after the file was written
is added the same way on every open for writing, so a new metric needs no schema
version. Opening *for reading* (:func:`open_read`) never writes: when the file lacks
columns (schema 1, or new metrics), the connection gets a temporary view ``runs``
that computes them the same way, so readers always see today's columns. A file
written by a newer schema is refused.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from dispatchlab.core.errors import InputError, one_line
from dispatchlab.experiment.campaign.keys import legacy_config_key
from dispatchlab.experiment.provenance import package_version, run_code_hash
from dispatchlab.metrics.keys import METRICS, summary_values

#: Raised when the file layout changes; a file with a larger number is refused.
SCHEMA_VERSION = 2

#: ``runs`` columns before the metric columns, with their SQL types.
BASE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_key", "VARCHAR PRIMARY KEY"), ("campaign", "VARCHAR"), ("trace", "VARCHAR"),
    ("platform", "VARCHAR"), ("dispatcher", "VARCHAR"), ("predictor", "VARCHAR"),
    ("dispatcher_name", "VARCHAR"), ("predictor_name", "VARCHAR"), ("seed", "BIGINT"),
    ("repetition", "INTEGER"), ("tau", "DOUBLE"), ("overrun", "VARCHAR"),
    ("config", "JSON"), ("trace_path", "VARCHAR"), ("trace_sha256", "VARCHAR"),
    ("version", "VARCHAR"), ("status", "VARCHAR"), ("attempts", "INTEGER"),
    ("error", "VARCHAR"), ("finished_at", "TIMESTAMP"), ("wall_seconds", "DOUBLE"),
    ("simulate_seconds", "DOUBLE"), ("worker", "VARCHAR"), ("cores", "BIGINT"),
    ("node_level", "BOOLEAN"), ("nodes", "BIGINT"), ("peak_rss_mb", "DOUBLE"),
)
#: ``runs`` columns after the metric columns (schema version 1).
TAIL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("series_start", "BIGINT"), ("series_end", "BIGINT"), ("summary", "JSON"),
)
#: ``runs`` columns added by schema version 2.
V2_COLUMNS: tuple[tuple[str, str], ...] = (
    ("code_hash", "VARCHAR"), ("config_key", "VARCHAR"), ("slice", "INTEGER"),
    ("workload", "VARCHAR"), ("inputs", "JSON"),
)
#: ``runs`` columns of campaigns with power (labels; null otherwise), added to older
#: files like new metric columns (no schema version).
POWER_RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("cap", "VARCHAR"), ("power_predictor", "VARCHAR"),
)
#: ``runs`` columns after the power labels, added to older files the same way.
LATER_RUN_COLUMNS: tuple[tuple[str, str], ...] = (("warnings", "JSON"), ("engine", "VARCHAR"))
#: ``jobs`` columns after ``allocation``, added to older files like new metric columns
#: (no schema version), with the SQL computing them for rows stored before.
JOB_FLAG_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("measured", "BOOLEAN",
     "coalesce(submit_time >= (SELECT r.series_start FROM runs r WHERE r.run_key = "
     "jobs.run_key), TRUE)"),
    ("hot_start", "BOOLEAN", "NULL"),
)
#: ``jobs`` columns after the flags: the job's groups as text (``simulate --by``'s keys,
#: :func:`dispatchlab.metrics.groups.group_labels`), added to older files the same way
#: (null for rows stored before them).
JOB_GROUP_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("partition", "VARCHAR", "NULL"), ("user", "VARCHAR", "NULL"),
    ("account", "VARCHAR", "NULL"), ("qos", "VARCHAR", "NULL"),
)
#: Every ``jobs`` column added after the first layout, in table order.
JOB_ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (*JOB_FLAG_COLUMNS, *JOB_GROUP_COLUMNS)

_OTHER_TABLES_SQL = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS jobs (
    run_key VARCHAR, job_id BIGINT, submit_time BIGINT, start_time BIGINT,
    end_time BIGINT, wait BIGINT, run_time BIGINT, trace_run BIGINT,
    requested_time BIGINT, procs BIGINT, user_id BIGINT, status VARCHAR,
    estimate BIGINT, slowdown DOUBLE, bsld DOUBLE, job_class VARCHAR,
    allocation VARCHAR, measured BOOLEAN, hot_start BOOLEAN, partition VARCHAR,
    "user" VARCHAR, account VARCHAR, qos VARCHAR
);
CREATE TABLE IF NOT EXISTS series (
    run_key VARCHAR, name VARCHAR, time BIGINT, value DOUBLE
);
"""

_ORDER = ("campaign, trace, platform, dispatcher, predictor, seed, slice NULLS FIRST, "
          "repetition, run_key")

# Python functions the migration and the reading view call from SQL.
_CONFIG_KEY_FN = "dispatchlab_legacy_config_key"
_INPUTS_FN = "dispatchlab_legacy_inputs"


def run_column_types() -> list[tuple[str, str]]:
    """Every ``runs`` column with its SQL type, in the order of a new file: the base
    columns, one per declared metric, the series horizon and summary, then the
    schema-2 columns, then the power labels and the warnings."""
    metrics = [(m.key, m.sql) for m in METRICS]
    return [*BASE_COLUMNS, *metrics, *TAIL_COLUMNS, *V2_COLUMNS, *POWER_RUN_COLUMNS,
            *LATER_RUN_COLUMNS]


def run_columns() -> tuple[str, ...]:
    """The names of :func:`run_column_types`."""
    return tuple(name for name, _ in run_column_types())


#: Columns of ``runs`` in table order (of a file created by this version).
RUN_COLUMNS: tuple[str, ...] = run_columns()


def schema_sql() -> str:
    """``CREATE TABLE IF NOT EXISTS`` statements for every table of a new file."""
    cols = ",\n    ".join(f"{name} {sql}" for name, sql in run_column_types())
    return f"{_OTHER_TABLES_SQL}CREATE TABLE IF NOT EXISTS runs (\n    {cols}\n);\n"


def _duckdb():
    import duckdb

    return duckdb


def damage_errors() -> tuple[type[Exception], ...]:
    """The DuckDB exceptions that mean the file itself is damaged (a read past its
    end, a block that does not deserialize), not a mistake in a query."""
    duckdb = _duckdb()
    return (duckdb.IOException, duckdb.SerializationException, duckdb.InternalException,
            duckdb.FatalException)


def damaged(path: str | Path, exc: BaseException) -> InputError:
    """The one-line error for a damaged results database (``exc``: DuckDB's error)."""
    return InputError(f"the results database is damaged (truncated or corrupt: "
                      f"{one_line(str(exc).splitlines()[0] if str(exc) else exc, 160)}); "
                      "it was left untouched: restore it from a copy, or move it away to "
                      "start afresh", file=str(path))


def _verify(con, path: Path, tables: tuple[str, ...] | None = ("meta", "runs")) -> None:
    """Read every value of ``tables`` once (None: every table of the file): a damaged
    file (truncated, overwritten) fails here with :func:`damaged` before anything is
    done with it. Opening reads ``meta`` and ``runs``; the larger per-job tables are
    read whole by :func:`verify` (before a campaign writes) and else by the queries
    that use them."""
    try:
        if tables is None:
            tables = tuple(r[0] for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = "
                "current_database()").fetchall())
        for table in tables:
            con.execute(f'SELECT count(hash("{table}")) FROM "{table}"').fetchall()
    except damage_errors() as exc:
        raise damaged(path, exc) from None
    except _duckdb().CatalogException:
        pass  # a missing table is told by _check_meta / created by open_write


def _check_meta(con, path: Path) -> int:
    """The file's schema version; :class:`InputError` when it is not a dispatchlab
    database or was written by a newer schema."""
    try:
        rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
    except _duckdb().CatalogException:
        raise InputError("not a dispatchlab results database (it has no 'meta' table)",
                         file=str(path)) from None
    try:
        found = int(rows.get("schema_version", "0"))
    except ValueError:
        raise InputError(f"bad schema_version {rows.get('schema_version')!r} in 'meta'",
                         file=str(path)) from None
    if found > SCHEMA_VERSION:
        raise InputError(
            f"written by dispatchlab {rows.get('dispatchlab_version', '?')} with schema "
            f"version {found}; this dispatchlab ({package_version()}) reads up to schema "
            f"version {SCHEMA_VERSION}: upgrade dispatchlab", file=str(path))
    return found


def _connect(path: Path, read_only: bool):
    """A DuckDB connection; a lock held by another process, a folder or a file that
    is not DuckDB raise :class:`InputError` naming the file."""
    duckdb = _duckdb()
    if path.is_dir():
        raise InputError("is a directory, expected a DuckDB file", file=str(path))
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as exc:
        text = str(exc).splitlines()[0]
        if "lock" in text.lower():
            raise InputError("the database is in use by another process (a campaign "
                             "writing it?); try again when it is done",
                             file=str(path)) from None
        raise damaged(path, exc) from None
    except damage_errors() as exc:
        raise damaged(path, exc) from None
    except duckdb.Error as exc:
        raise InputError(f"cannot open as a DuckDB database: {str(exc).splitlines()[0]}",
                         file=str(path)) from None


# ------------------------------------------------------- columns of older files


def _present_columns(con, table: str = "runs") -> set[str]:
    """Names of the columns ``table`` has in the file."""
    rows = con.execute(f"SELECT name FROM pragma_table_info('{table}')").fetchall()
    return {r[0] for r in rows}


def _legacy_inputs(trace_path: str | None, trace_sha256: str | None,
                   config_text: str | None) -> str | None:
    """``inputs`` JSON of a schema-1 run: its trace file and platform file checksums."""
    out = {}
    if trace_path and trace_sha256:
        out[trace_path] = trace_sha256
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        platform = json.loads(config_text or "null").get("platform") or {}
        if platform.get("file") and platform.get("file_sha256"):
            out[platform["file"]] = platform["file_sha256"]
    return json.dumps(out, sort_keys=True)


def _register_functions(con) -> None:
    """Register the Python functions that compute schema-2 columns of older rows."""

    def config_key_fn(campaign: str | None, config: str | None, seed: int | None) -> str | None:
        return legacy_config_key(campaign or "", config, seed)

    con.create_function(_CONFIG_KEY_FN, config_key_fn, ["VARCHAR", "VARCHAR", "BIGINT"],
                        "VARCHAR", null_handling="special", side_effects=False)
    con.create_function(_INPUTS_FN, _legacy_inputs, ["VARCHAR", "VARCHAR", "VARCHAR"],
                        "VARCHAR", null_handling="special", side_effects=False)


def _metric_sql(metric) -> str:
    """SQL computing a metric column from the ``summary`` JSON (null when absent)."""
    path = "$." + ".".join(metric.path or (metric.key,))
    return f"TRY_CAST(json_extract_string(summary, '{path}') AS {metric.sql})"


def _missing_column_sql(present: set[str]) -> list[tuple[str, str, str]]:
    """``(name, type, expression)`` of every ``runs`` column missing from a file, the
    expression computing its value from the stored columns."""
    computed = {
        "code_hash": "NULL",
        "config_key": f"{_CONFIG_KEY_FN}(campaign, CAST(config AS VARCHAR), seed)",
        "slice": "NULL",
        "workload": "'seed=' || CAST(seed AS VARCHAR)",
        "inputs": f"{_INPUTS_FN}(trace_path, trace_sha256, CAST(config AS VARCHAR))",
        "cap": "NULL", "power_predictor": "NULL",
        "warnings": "json_extract(summary, '$.warnings')",
        # every run stored before the native engine ran on the Python engine
        "engine": "CASE WHEN summary IS NULL THEN NULL ELSE coalesce(json_extract_string("
                  "summary, '$.engine'), 'python') END",
    }
    computed.update({m.key: _metric_sql(m) for m in METRICS})
    return [(name, sql, computed[name]) for name, sql in run_column_types()
            if name not in present and name in computed]


def _migrate(con, found: int) -> None:
    """Bring the ``runs`` table of an open write transaction to today's columns (see
    the module docstring) and the schema version to :data:`SCHEMA_VERSION`."""
    present_jobs = _present_columns(con, "jobs")
    for name, sql, expr in JOB_ADDED_COLUMNS:
        if name not in present_jobs:
            con.execute(f'ALTER TABLE jobs ADD COLUMN "{name}" {sql}')
            if expr != "NULL":
                con.execute(f'UPDATE jobs SET "{name}" = {expr}')
    missing = _missing_column_sql(_present_columns(con))
    if missing:
        _register_functions(con)
        try:
            for name, sql, _ in missing:
                con.execute(f"ALTER TABLE runs ADD COLUMN {name} {sql}")
            sets = ", ".join(f"{name} = {expr}" for name, _, expr in missing)
            con.execute(f"UPDATE runs SET {sets}")
        finally:
            con.remove_function(_CONFIG_KEY_FN)
            con.remove_function(_INPUTS_FN)
    if found < SCHEMA_VERSION:
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                    [str(SCHEMA_VERSION)])


def _reading_view(con) -> None:
    """On a read-only connection to a file that lacks ``runs`` or ``jobs`` columns:
    temporary views ``runs`` / ``jobs`` with every column, the missing ones computed
    (nothing is written)."""
    (db,), = con.execute("SELECT current_database()").fetchall()
    present_jobs = _present_columns(con, "jobs")
    flags = [(n, sql, expr.replace("jobs.run_key", "j.run_key").replace(
        "FROM runs r", f'FROM "{db}".main.runs r'))
        for n, sql, expr in JOB_ADDED_COLUMNS if n not in present_jobs]
    if flags:
        extra = ", ".join(f'CAST({expr} AS {sql}) AS "{name}"' for name, sql, expr in flags)
        con.execute(f'CREATE TEMP VIEW jobs AS SELECT j.*, {extra} FROM "{db}".main.jobs j')
    missing = _missing_column_sql(_present_columns(con))
    if not missing:
        return
    _register_functions(con)
    extra = ", ".join(f"CAST({expr} AS {sql}) AS {name}" for name, sql, expr in missing)
    con.execute(f'CREATE TEMP VIEW runs AS SELECT *, {extra} FROM "{db}".main.runs')


# ---------------------------------------------------------------- opening files


def open_read(path: str | Path, *, wait: float = 10.0, verify: bool = True):
    """Open an existing results database read-only after checking its version; a file
    of an older schema reads with today's columns (see the module docstring).
    ``verify``: first read ``meta`` and ``runs`` whole (:func:`_verify`), so a damaged
    file is told at once; False where the caller verifies otherwise (the campaign
    writer, which :func:`verify` checked before its first run, opens the file once per
    stored batch).

    While another process writes it (a campaign storing a batch of runs, which takes
    a fraction of a second), retry for up to ``wait`` seconds."""
    import time

    p = Path(path)
    if not p.exists():
        raise InputError("no such results database", file=str(p))
    deadline = time.monotonic() + wait
    while True:
        try:
            con = _connect(p, read_only=True)
            break
        except InputError as exc:
            if "in use" not in exc.message or time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    try:
        if verify:
            _verify(con, p)
        _check_meta(con, p)
        _reading_view(con)
    except damage_errors() as exc:
        con.close()
        raise damaged(p, exc) from None
    except BaseException:
        con.close()
        raise
    return con


def verify(path: str | Path) -> None:
    """Read every table of an existing results database once: :func:`damaged` (one
    ``error:`` line naming the file, which is left untouched) if any part of it cannot
    be read. Called before a campaign executes runs, so a damaged file is told before
    any work and not after it."""
    p = Path(path)
    if not p.exists():
        return
    con = open_read(p, verify=False)  # every table is read just below
    try:
        _verify(con, p, None)
    finally:
        con.close()


def check_writable(path: str | Path) -> None:
    """Raise :class:`InputError` if ``path`` exists and is not a database this version
    may write (newer schema, not DuckDB, not ours). Writes nothing."""
    p = Path(path)
    if p.exists():
        open_read(p, wait=0.0, verify=False).close()


def open_write(path: str | Path):
    """Open (creating if needed) a results database for writing; the version is checked
    before anything is written, and an older file is migrated (one transaction)."""
    p = Path(path)
    if p.exists():
        check_writable(p)
    elif not p.parent.is_dir():
        raise InputError("the folder for the results database does not exist",
                         file=str(p))
    con = _connect(p, read_only=False)
    try:
        # one thread: the coordinator shares the machine with its workers
        con.execute("SET threads = 1")
        con.execute("BEGIN")
        con.execute(schema_sql())
        if con.execute("SELECT count(*) FROM meta").fetchall()[0][0]:
            # another process may have created the file since we looked: check it
            _migrate(con, _check_meta(con, p))
        else:
            con.executemany("INSERT INTO meta VALUES (?, ?)",
                            [("schema_version", str(SCHEMA_VERSION)),
                             ("dispatchlab_version", package_version())])
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(Exception):
            con.execute("ROLLBACK")
        con.close()
        raise
    return con


# ------------------------------------------------------------------- storing runs


def _database_name(con) -> str:
    """The file of an open connection (for messages)."""
    try:
        rows = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = "
                           "current_database()").fetchall()
        return str(rows[0][0]) if rows and rows[0][0] else "results database"
    except _duckdb().Error:
        return "results database"


def run_states(con, keys: Iterable[str] | None = None) -> dict[str, str]:
    """``run_key -> status`` of the stored runs (all, or those among ``keys``)."""
    rows = con.execute("SELECT run_key, status FROM runs").fetchall()
    wanted = None if keys is None else set(keys)
    return {k: s for k, s in rows if wanted is None or k in wanted}


def _run_row(outcome: dict[str, Any]) -> dict[str, Any]:
    """The ``runs`` row of an outcome, by column name."""
    spec = outcome["spec"]
    summary = outcome.get("summary")
    inputs = spec.get("inputs")
    row = {
        "run_key": spec["run_key"], "campaign": spec["campaign"],
        "trace": spec["trace"]["label"], "platform": spec["platform"]["label"],
        "dispatcher": spec["dispatcher"]["label"], "predictor": spec["predictor"]["label"],
        "dispatcher_name": spec["dispatcher"]["name"],
        "predictor_name": spec["predictor"]["name"], "seed": spec["seed"],
        "repetition": spec["repetition"], "tau": spec["tau"], "overrun": spec["overrun"],
        "config": json.dumps(spec["config"], sort_keys=True),
        "trace_path": spec["trace"].get("path"), "trace_sha256": spec["trace_sha256"],
        "version": spec["version"], "status": outcome["status"],
        "attempts": outcome.get("attempts", 1), "error": outcome.get("error"),
        "finished_at": outcome["finished_at"],
        **{k: outcome.get(k) for k in ("wall_seconds", "simulate_seconds", "worker",
                                       "cores", "node_level", "nodes", "peak_rss_mb",
                                       "series_start", "series_end")},
        "summary": None if summary is None else json.dumps(summary, sort_keys=True),
        "code_hash": spec.get("code_hash"), "config_key": spec.get("config_key"),
        "slice": spec.get("slice"),
        "workload": spec.get("workload") or f"seed={spec['seed']}",
        "inputs": None if inputs is None else json.dumps(inputs, sort_keys=True),
        "cap": (spec.get("cap") or {}).get("label"),
        "power_predictor": (spec.get("power_predictor") or {}).get("label"),
        "warnings": None if summary is None or "warnings" not in summary else
        json.dumps(summary["warnings"]),
        "engine": None if summary is None else summary.get("engine", "python"),
    }
    row.update(summary_values(summary))
    return row


def with_run_key(table, key: str):
    """``table`` with a first column ``run_key`` (dictionary-encoded: one string)."""
    import numpy as np
    import pyarrow as pa

    codes = pa.array(np.zeros(table.num_rows, dtype=np.int32))
    return table.add_column(0, "run_key", pa.DictionaryArray.from_arrays(
        codes, pa.array([key], type=pa.string())))


class StoreCounts(NamedTuple):
    """What :func:`store_outcomes` did: ``stored`` outcomes, ``replaced`` stored runs
    of the same key (failed runs retried, re-runs), ``superseded`` stored runs of the
    same slot under another key (made by other code or other input files)."""

    stored: int
    replaced: int
    superseded: int


def _delete_runs(con, keys: list[str]) -> None:
    """Delete the ``runs``, ``jobs`` and ``series`` rows of ``keys``."""
    if not keys:
        return
    for table in ("jobs", "series", "runs"):
        con.execute(f"DELETE FROM {table} WHERE run_key IN (SELECT unnest(?::VARCHAR[]))",
                    [keys])


def _superseded(con, outcomes: list[dict[str, Any]]) -> list[str]:
    """Stored runs in the slots of ``outcomes`` (campaign, trace, config_key,
    workload, repetition) under other run keys."""
    import pyarrow as pa

    specs = [o["spec"] for o in outcomes if o["spec"].get("config_key")]
    if not specs:
        return []
    slots = pa.table({
        "campaign": [s["campaign"] for s in specs],
        "trace": [s["trace"]["label"] for s in specs],
        "config_key": [s["config_key"] for s in specs],
        "workload": [s.get("workload") or f"seed={s['seed']}" for s in specs],
        "repetition": pa.array([s["repetition"] for s in specs], type=pa.int32()),
        "run_key": [s["run_key"] for s in specs],
    })
    con.register("_slots", slots)
    try:
        rows = con.execute(
            "SELECT DISTINCT r.run_key FROM runs r JOIN _slots s ON r.campaign = s.campaign "
            "AND r.trace = s.trace AND r.config_key = s.config_key AND r.workload = "
            "s.workload AND r.repetition = s.repetition AND r.run_key <> s.run_key"
        ).fetchall()
    finally:
        con.unregister("_slots")
    return sorted(r[0] for r in rows)


def _insert_rows(con, kept: list[tuple[str, dict[str, Any]]]) -> None:
    """Insert the ``runs``, ``jobs`` and ``series`` rows of the kept outcomes."""
    import pyarrow as pa

    if not kept:
        return
    rows = [_run_row(o) for _, o in kept]
    cols = list(rows[0])
    marks = ", ".join("?" * len(cols))
    con.executemany(f"INSERT INTO runs ({', '.join(cols)}) VALUES ({marks})",
                    [[r[c] for c in cols] for r in rows])
    for table in ("jobs", "series"):
        parts = []
        for key, o in kept:
            data = o.get(table)
            if data is not None and data.num_rows:
                parts.append(data if data.column_names[0] == "run_key" else
                             with_run_key(data, key))
        if parts:
            incoming = pa.concat_tables(parts, promote_options="permissive")
            con.register("_incoming", incoming)
            con.execute(f"INSERT INTO {table} SELECT * FROM _incoming")
            con.unregister("_incoming")


def store_outcomes(con, outcomes: list[dict[str, Any]], *,
                   replace: Iterable[str] = ()) -> StoreCounts:
    """Store finished runs (outcomes of :func:`dispatchlab.experiment.campaign.worker.execute_run`)
    in **one transaction**: all of them or none. Their ``jobs`` and ``series`` tables
    have the store's columns, with or without the leading ``run_key`` column.

    A run whose key is already stored is never stored twice: a stored run whose key is
    in ``replace`` (``--retry-failed``, ``--rerun``) is replaced whatever its status; a
    stored ``failed`` run is replaced by a ``done`` outcome; otherwise (another
    coordinator ran the same campaign at the same time) the stored run is kept and the
    new outcome dropped. Stored runs of the same slot under another key are removed
    (see the module docstring)."""
    if not outcomes:
        return StoreCounts(0, 0, 0)
    retry = set(replace)
    con.execute("BEGIN")
    try:
        keys = [o["spec"]["run_key"] for o in outcomes]
        stored = dict(con.execute(
            "SELECT run_key, status FROM runs WHERE run_key IN (SELECT unnest(?::VARCHAR[]))",
            [keys]).fetchall())
        kept, replaced = [], []
        for key, o in zip(keys, outcomes, strict=True):
            old = stored.get(key)
            if old is not None and (key in retry or (old == "failed"
                                                     and o["status"] == "done")):
                replaced.append(key)
            elif old is not None:
                continue
            kept.append((key, o))
        superseded = _superseded(con, [o for _, o in kept])
        _delete_runs(con, replaced + superseded)
        _insert_rows(con, kept)
        con.execute("COMMIT")
    except damage_errors() as exc:
        with contextlib.suppress(Exception):
            con.execute("ROLLBACK")
        raise damaged(_database_name(con), exc) from None
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return StoreCounts(len(kept), len(replaced), len(superseded))


def store_outcome(con, outcome: dict[str, Any], *, replace: bool = False) -> None:
    """Store one run's outcome in one transaction (see :func:`store_outcomes`)."""
    store_outcomes(con, [outcome],
                   replace=[outcome["spec"]["run_key"]] if replace else ())


# ------------------------------------------------------------------ reading runs


def _condition(where: str | None) -> str:
    """An SQL condition in parentheses (``TRUE`` for None or blank)."""
    return "TRUE" if where is None or not where.strip() else f"({where})"


def _fetch_runs(con, where: str | None, field: str) -> list[dict[str, Any]]:
    """Rows of ``runs`` matching the SQL condition, as dicts, in a stable order."""
    duckdb = _duckdb()
    try:
        cur = con.execute(f"SELECT * FROM runs WHERE {_condition(where)} ORDER BY {_ORDER}")
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    except damage_errors() as exc:
        raise damaged(_database_name(con), exc) from None
    except duckdb.Error as exc:
        raise InputError(f"bad run condition {where!r}: {str(exc).splitlines()[0]}",
                         field=field) from None


def matching_keys(con, where: str, *, campaign: str | None = None,
                  field: str = "where") -> set[str]:
    """Run keys of the stored runs matching an SQL condition on ``runs`` (of one
    campaign when given); a bad condition raises :class:`InputError`."""
    duckdb = _duckdb()
    sql = f"SELECT run_key FROM runs WHERE {_condition(where)}"
    params: list[Any] = []
    if campaign is not None:
        sql += " AND campaign = ?"
        params.append(campaign)
    try:
        return {r[0] for r in con.execute(sql, params).fetchall()}
    except damage_errors() as exc:
        raise damaged(_database_name(con), exc) from None
    except duckdb.Error as exc:
        raise InputError(f"bad run condition {where!r}: {str(exc).splitlines()[0]}",
                         field=field) from None


def _power_predictor_name(row: dict[str, Any]) -> str | None:
    """The power predictor's component name of a stored run (from its configuration;
    None for runs without one)."""
    if not row.get("power_predictor"):
        return None
    config = row.get("config")
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        config = json.loads(config) if isinstance(config, str) else config
        return (config.get("power_predictor") or {}).get("name")
    return None


def outdated_reason(row: dict[str, Any], memo: dict[tuple, Any] | None = None
                    ) -> str | None:
    """Why a stored run is outdated, or None when its ``code_hash`` equals
    :func:`dispatchlab.experiment.provenance.run_code_hash` of its components now. A run without
    a code hash (stored by schema version 1) and a run whose own class cannot be
    found or parsed any more are outdated. ``memo`` caches the hashes per component
    pair across calls."""

    stored = row.get("code_hash")
    if stored is None:
        return "no code hash (stored before dispatchlab recorded the code of a run)"
    memo = {} if memo is None else memo
    pair = (row.get("dispatcher_name") or "", row.get("predictor_name") or "",
            _power_predictor_name(row))
    if pair not in memo:
        try:
            memo[pair] = run_code_hash(*pair)
        except InputError as exc:
            memo[pair] = InputError(exc.message)
    now = memo[pair]
    if isinstance(now, InputError):
        return f"its own class cannot be imported any more: {now.message}"
    if now != stored:
        return ("made by other code (dispatchlab, numpy/ortools/lightgbm/scikit-learn or "
                "its own classes changed since)")
    return None


def select_runs(con, where: str | None = None, *, include_outdated: bool = False,
                field: str = "where") -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stored runs matching an SQL condition on ``runs`` (all when None), as dicts
    of the ``runs`` columns plus ``outdated`` (why the run is outdated, see
    :func:`outdated_reason`, or None), ordered by campaign, trace, platform,
    dispatcher, predictor, seed, slice and repetition.

    Returns ``(runs, left_out)``: the current runs and the outdated runs left out; with
    ``include_outdated`` every matching run is in the first list (each still marked)
    and the second is empty. A bad condition raises :class:`InputError` (``field``
    names the option it came from)."""
    memo: dict[tuple[str, str], Any] = {}
    current, outdated = [], []
    for row in _fetch_runs(con, where, field):
        row["outdated"] = outdated_reason(row, memo)
        (outdated if row["outdated"] and not include_outdated else current).append(row)
    return current, outdated


def is_unfinished(row: dict[str, Any]) -> bool:
    """Whether a stored run is done but *unfinished*: stopped at its wall-clock budget
    (``max_wall``; column ``finished`` = 0), so its metrics cover only the jobs that
    happened to end by then. A run without the column's value (stored before it
    existed) counts as finished."""
    return row.get("status") == "done" and row.get("finished") == 0


def unfinished_jobs(row: dict[str, Any]) -> tuple[int | None, int | None]:
    """``(jobs that ended, jobs of the run)`` of an unfinished run, from its stored
    summary (``unfinished.jobs_done`` / ``jobs_total``); None where unknown."""
    with contextlib.suppress(ValueError, TypeError, AttributeError):
        summary = row.get("summary")
        summary = json.loads(summary) if isinstance(summary, str) else summary
        info = summary.get("unfinished") or {}
        return info.get("jobs_done"), info.get("jobs_total")
    return None, None


def describe_unfinished(row: dict[str, Any]) -> str:
    """``trace/platform/dispatcher/predictor/workload: 124 of 200 jobs ended`` (one
    line naming an unfinished run and how far it got)."""
    done, total = unfinished_jobs(row)
    fields = ("trace", "platform", "dispatcher", "predictor", "workload")
    name = "/".join(str(row.get(k)) for k in fields)
    count = "?" if done is None else f"{done:,}"
    return f"{name}: {count} of {'?' if total is None else f'{total:,}'} jobs ended"


def split_unfinished(runs: list[dict[str, Any]], *, include_unfinished: bool = False
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(used, left_out)``: the runs every summary, statistic and figure uses, and the
    unfinished runs (:func:`is_unfinished`) left out of them. Each row gets
    ``unfinished`` (bool); with ``include_unfinished`` every run is used (the
    unfinished ones still marked) and none is left out."""
    used, left = [], []
    for row in runs:
        row["unfinished"] = is_unfinished(row)
        (left if row["unfinished"] and not include_unfinished else used).append(row)
    return used, left


# ------------------------------------------------------------ metrics per group

#: The ``jobs`` columns a breakdown can group by (``results groups --by``).
GROUP_COLUMNS: tuple[str, ...] = tuple(name for name, _, _ in JOB_GROUP_COLUMNS)


def group_rows(con, run_keys: Iterable[str], by: str) -> list[dict[str, Any]]:
    """Metrics per group of the stored jobs of ``run_keys``, per configuration: one
    dict per (trace, platform, dispatcher, predictor, cap, group) with ``runs``,
    ``jobs`` (measured jobs that ran, of all those runs pooled), ``rejected``
    (measured jobs rejected), ``mean_wait``, ``median_wait`` (s, continuous median),
    ``mean_bsld``, ``hours`` and ``hours_share`` (the group's share of the
    configuration's hours; None when nothing was held), ``hours_unit``.

    Hours as ``simulate --by`` counts them (:mod:`dispatchlab.metrics.groups`): on
    node-level runs (``runs.node_level``) the nodes of each job's ``allocation`` x its
    simulated run (``node-hours``); on other runs ``procs`` (units) x run
    (``proc-hours``: core-hours for one-core units). ``group`` is the job's ``by``
    column (:data:`GROUP_COLUMNS`), None for jobs without the value, among them every
    job of a run stored before the column existed. Only measured jobs count (lead-in
    jobs of slices and hot-start dummies left out), as in the runs' metrics. Rows are
    ordered by trace, platform, configuration, then hours (largest first)."""
    if by not in GROUP_COLUMNS:
        raise InputError(f"unknown group {by!r} (one of {', '.join(GROUP_COLUMNS)})",
                         field="--by")
    keys = list(run_keys)
    if not keys:
        return []
    held = ("CASE WHEN r.node_level THEN CASE WHEN j.allocation IS NULL THEN 0 ELSE "
            "length(j.allocation) - length(replace(j.allocation, ',', '')) + 1 END "
            "ELSE j.procs END")
    ran = "j.status <> 'rejected'"
    sql = f"""
        SELECT r.trace, r.platform, r.dispatcher, r.predictor, r.cap,
               j."{by}" AS grp, count(DISTINCT j.run_key) AS runs,
               count(*) FILTER (WHERE {ran}) AS jobs,
               count(*) FILTER (WHERE NOT ({ran})) AS rejected,
               avg(j.wait) FILTER (WHERE {ran}) AS mean_wait,
               quantile_cont(j.wait, 0.5) FILTER (WHERE {ran}) AS median_wait,
               avg(j.bsld) FILTER (WHERE {ran}) AS mean_bsld,
               coalesce(sum(({held}) * greatest(j.run_time, 0)) FILTER (WHERE {ran}),
                        0) / 3600.0 AS hours,
               bool_and(coalesce(r.node_level, FALSE)) AS node_level
        FROM jobs j JOIN runs r USING (run_key)
        WHERE list_contains(?, j.run_key) AND coalesce(j.measured, TRUE)
        GROUP BY ALL
    """
    try:
        cur = con.execute(sql, [keys])
        cols = [d[0] for d in cur.description]
        rows = [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    except damage_errors() as exc:
        raise damaged(_database_name(con), exc) from None
    config = ("trace", "platform", "dispatcher", "predictor", "cap")
    totals: dict[tuple, float] = {}
    units: dict[tuple, bool] = {}
    for row in rows:
        c = tuple(row[k] for k in config)
        totals[c] = totals.get(c, 0.0) + float(row["hours"])
        units[c] = units.get(c, True) and bool(row["node_level"])
    out = []
    for row in rows:
        c = tuple(row[k] for k in config)
        node_level = units[c]
        row = {**{k: row[k] for k in config}, "group": row["grp"],
               **{k: row[k] for k in ("runs", "jobs", "rejected", "mean_wait",
                                      "median_wait", "mean_bsld")},
               "hours": float(row["hours"]),
               "hours_share": float(row["hours"]) / totals[c] if totals[c] > 0 else None,
               "hours_unit": "node-hours" if node_level else "proc-hours"}
        out.append(row)
    out.sort(key=lambda r: (*(str(r[k] or "") for k in config), -r["hours"], -r["jobs"],
                            "" if r["group"] is None else str(r["group"])))
    return out
