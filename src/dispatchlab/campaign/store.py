"""The campaign results database: one embedded DuckDB file.

Only the coordinating process writes it (workers return results; see
:mod:`dispatchlab.campaign.runner`). Runs are stored in transactions that hold whole runs
(their ``runs`` row, ``jobs`` rows and ``series`` rows), so a coordinator killed at any
moment leaves each run either whole or absent; ``runs.run_key`` is the primary key, and
:func:`store_outcomes` drops an outcome whose run is already stored as done, so a run is
never stored twice, even by two coordinators running one campaign at the same time.

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
    process so far, MB: an upper bound for the run), the main
    metrics as columns (``jobs``, ``rejected``, ``killed``, ``mean_wait``,
    ``median_wait``, ``p95_wait``, ``max_wait``, ``mean_slowdown``, ``mean_bsld``,
    ``p95_bsld``, ``bsld_short``, ``bsld_medium``, ``bsld_long``, ``utilization``,
    ``makespan``, ``mean_queue_length``), ``series_start`` / ``series_end`` (the
    horizon of the series) and the whole metrics summary as JSON (``summary``).
    Metric columns are null for failed runs.
``jobs``
    One row per job of a done run (when the campaign stores jobs): ``run_key``,
    ``job_id``, ``submit_time``, ``start_time``, ``end_time`` (-1 if rejected),
    ``wait``, ``run_time`` (simulated, -1 if rejected), ``trace_run`` (from the
    trace), ``requested_time``, ``procs`` (units requested), ``user_id``, ``status``
    (completed / killed / rejected), ``estimate`` (the predictor's estimate at
    submission, s; -1 if rejected), ``slowdown``, ``bsld`` (null if rejected),
    ``job_class`` (short / medium / long by simulated run; null if rejected) and
    ``allocation`` (``"node:units,..."`` for node-level runs, else null).
``series``
    Step functions of a done run (when the campaign stores series): ``run_key``,
    ``name`` (``queue_length``: waiting jobs; ``utilization``: fraction of the
    primary resource in use), ``time`` (breakpoint, s) and ``value``, holding on
    ``[time, next time)``; the last value holds until ``runs.series_end``. Never one
    row per simulated second.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dispatchlab.errors import InputError

#: Raised when the file layout changes; a file with a larger number is refused.
SCHEMA_VERSION = 1

#: Metric columns of ``runs`` copied from the metrics summary (same names).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "jobs", "rejected", "killed", "mean_wait", "median_wait", "p95_wait", "max_wait",
    "mean_slowdown", "mean_bsld", "p95_bsld", "utilization", "makespan",
    "mean_queue_length",
)

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS runs (
    run_key VARCHAR PRIMARY KEY,
    campaign VARCHAR, trace VARCHAR, platform VARCHAR, dispatcher VARCHAR,
    predictor VARCHAR, dispatcher_name VARCHAR, predictor_name VARCHAR,
    seed BIGINT, repetition INTEGER, tau DOUBLE, overrun VARCHAR, config JSON,
    trace_path VARCHAR, trace_sha256 VARCHAR, version VARCHAR,
    status VARCHAR, attempts INTEGER, error VARCHAR, finished_at TIMESTAMP,
    wall_seconds DOUBLE, simulate_seconds DOUBLE, worker VARCHAR,
    cores BIGINT, node_level BOOLEAN, nodes BIGINT, peak_rss_mb DOUBLE,
    jobs BIGINT, rejected BIGINT, killed BIGINT, mean_wait DOUBLE, median_wait DOUBLE,
    p95_wait DOUBLE, max_wait DOUBLE, mean_slowdown DOUBLE, mean_bsld DOUBLE,
    p95_bsld DOUBLE, bsld_short DOUBLE, bsld_medium DOUBLE, bsld_long DOUBLE,
    utilization DOUBLE, makespan BIGINT, mean_queue_length DOUBLE,
    series_start BIGINT, series_end BIGINT, summary JSON
);
CREATE TABLE IF NOT EXISTS jobs (
    run_key VARCHAR, job_id BIGINT, submit_time BIGINT, start_time BIGINT,
    end_time BIGINT, wait BIGINT, run_time BIGINT, trace_run BIGINT,
    requested_time BIGINT, procs BIGINT, user_id BIGINT, status VARCHAR,
    estimate BIGINT, slowdown DOUBLE, bsld DOUBLE, job_class VARCHAR,
    allocation VARCHAR
);
CREATE TABLE IF NOT EXISTS series (
    run_key VARCHAR, name VARCHAR, time BIGINT, value DOUBLE
);
"""

#: Columns of ``runs`` in table order.
RUN_COLUMNS: tuple[str, ...] = (
    "run_key", "campaign", "trace", "platform", "dispatcher", "predictor",
    "dispatcher_name", "predictor_name", "seed", "repetition", "tau", "overrun", "config",
    "trace_path", "trace_sha256", "version", "status", "attempts", "error", "finished_at",
    "wall_seconds", "simulate_seconds", "worker", "cores", "node_level", "nodes",
    "peak_rss_mb",
    *SUMMARY_COLUMNS[:10], "bsld_short", "bsld_medium", "bsld_long",
    *SUMMARY_COLUMNS[10:], "series_start", "series_end", "summary",
)


def _duckdb():
    import duckdb

    return duckdb


def package_version() -> str:
    from importlib.metadata import version

    return version("dispatchlab")


def _check_meta(con, path: Path) -> None:
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


def _connect(path: Path, read_only: bool):
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
        raise InputError(f"cannot open as a DuckDB database: {text}",
                         file=str(path)) from None
    except duckdb.Error as exc:
        raise InputError(f"cannot open as a DuckDB database: {str(exc).splitlines()[0]}",
                         file=str(path)) from None


def open_read(path: str | Path, *, wait: float = 10.0):
    """Open an existing results database read-only after checking its version.

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
        _check_meta(con, p)
    except BaseException:
        con.close()
        raise
    return con


def check_writable(path: str | Path) -> None:
    """Raise :class:`InputError` if ``path`` exists and is not a database this version
    may write (newer schema, not DuckDB, not ours). Writes nothing."""
    p = Path(path)
    if p.exists():
        open_read(p, wait=0.0).close()


def open_write(path: str | Path):
    """Open (creating if needed) a results database for writing; the version is checked
    before anything is written."""
    p = Path(path)
    existed = p.exists()
    if existed:
        check_writable(p)
    elif not p.parent.is_dir():
        raise InputError("the folder for the results database does not exist",
                         file=str(p))
    con = _connect(p, read_only=False)
    try:
        # one thread: the coordinator shares the machine with its workers
        con.execute("SET threads = 1")
        con.execute("BEGIN")
        con.execute(SCHEMA_SQL)
        if con.execute("SELECT count(*) FROM meta").fetchone()[0]:
            # another process may have created the file since we looked: check it
            _check_meta(con, p)
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


def run_states(con, keys: Iterable[str] | None = None) -> dict[str, str]:
    """``run_key -> status`` of the stored runs (all, or those among ``keys``)."""
    rows = con.execute("SELECT run_key, status FROM runs").fetchall()
    wanted = None if keys is None else set(keys)
    return {k: s for k, s in rows if wanted is None or k in wanted}


def _summary_values(summary: dict[str, Any] | None) -> list[Any]:
    if summary is None:
        return [None] * (len(SUMMARY_COLUMNS) + 3)
    by_class = summary.get("by_class", {})
    vals = [summary.get(c) for c in SUMMARY_COLUMNS[:10]]
    vals += [by_class.get(c, {}).get("mean_bsld") for c in ("short", "medium", "long")]
    vals += [summary.get(c) for c in SUMMARY_COLUMNS[10:]]
    return vals


def _run_row(outcome: dict[str, Any]) -> list[Any]:
    spec = outcome["spec"]
    summary = outcome.get("summary")
    return [
        spec["run_key"], spec["campaign"], spec["trace"]["label"],
        spec["platform"]["label"], spec["dispatcher"]["label"], spec["predictor"]["label"],
        spec["dispatcher"]["name"], spec["predictor"]["name"], spec["seed"],
        spec["repetition"], spec["tau"], spec["overrun"],
        json.dumps(spec["config"], sort_keys=True), spec["trace"].get("path"),
        spec["trace_sha256"], spec["version"], outcome["status"],
        outcome.get("attempts", 1), outcome.get("error"), outcome["finished_at"],
        outcome.get("wall_seconds"), outcome.get("simulate_seconds"),
        outcome.get("worker"), outcome.get("cores"), outcome.get("node_level"),
        outcome.get("nodes"), outcome.get("peak_rss_mb"),
        *_summary_values(summary), outcome.get("series_start"),
        outcome.get("series_end"),
        None if summary is None else json.dumps(summary, sort_keys=True),
    ]


def with_run_key(table, key: str):
    """``table`` with a first column ``run_key`` (dictionary-encoded: one string)."""
    import numpy as np
    import pyarrow as pa

    codes = pa.array(np.zeros(table.num_rows, dtype=np.int32))
    return table.add_column(0, "run_key", pa.DictionaryArray.from_arrays(
        codes, pa.array([key], type=pa.string())))


def store_outcomes(con, outcomes: list[dict[str, Any]], *,
                   replace: Iterable[str] = ()) -> int:
    """Store finished runs (outcomes of :func:`dispatchlab.campaign.worker.execute_run`)
    in **one transaction**: all of them or none. Their ``jobs`` and ``series`` tables
    have the store's columns, with or without the leading ``run_key`` column.

    A run whose key is already stored (another coordinator ran the same campaign at the
    same time) is never stored twice: a stored ``done`` run is kept and the new outcome
    dropped; a stored ``failed`` run is replaced when the new outcome is ``done`` or its
    key is in ``replace`` (``--retry-failed``). Returns the number of outcomes stored."""
    if not outcomes:
        return 0
    import pyarrow as pa

    retry = set(replace)
    con.execute("BEGIN")
    try:
        keys = [o["spec"]["run_key"] for o in outcomes]
        marks = ", ".join("?" * len(keys))
        stored = dict(con.execute(f"SELECT run_key, status FROM runs WHERE run_key IN "
                                  f"({marks})", keys).fetchall())
        keep = []
        for key, o in zip(keys, outcomes, strict=True):
            old = stored.get(key)
            if old is None:
                keep.append((key, o))
            elif old == "failed" and (o["status"] == "done" or key in retry):
                for table in ("jobs", "series", "runs"):
                    con.execute(f"DELETE FROM {table} WHERE run_key = ?", [key])
                keep.append((key, o))
        if keep:
            marks = ", ".join("?" * len(RUN_COLUMNS))
            con.executemany(f"INSERT INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({marks})",
                            [_run_row(o) for _, o in keep])
        for table in ("jobs", "series"):
            parts = []
            for key, o in keep:
                data = o.get(table)
                if data is not None and data.num_rows:
                    parts.append(data if data.column_names[0] == "run_key" else
                                 with_run_key(data, key))
            if parts:
                incoming = pa.concat_tables(parts, promote_options="permissive")
                con.register("_incoming", incoming)
                con.execute(f"INSERT INTO {table} SELECT * FROM _incoming")
                con.unregister("_incoming")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(keep)


def store_outcome(con, outcome: dict[str, Any], *, replace: bool = False) -> None:
    """Store one run's outcome in one transaction (see :func:`store_outcomes`)."""
    store_outcomes(con, [outcome],
                   replace=[outcome["spec"]["run_key"]] if replace else ())
