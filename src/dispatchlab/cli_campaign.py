"""CLI commands for campaigns and their results: ``campaign run|status``,
``results query|export`` and ``report`` (registered on the main group in
:mod:`dispatchlab.cli`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from dispatchlab.errors import InputError


def _console(stderr: bool = False):
    from dispatchlab.cli import _console as console  # imported late: cli imports us

    return console(stderr)


@click.group("campaign")
def campaign_app() -> None:
    """Run many simulations declared in a TOML campaign file."""


CAMPAIGN_ARG = click.argument("campaign_file", type=click.Path(path_type=Path))
DATABASE_OPTION = click.option(
    "--database", type=click.Path(path_type=Path), default=None,
    help="results database (default: the campaign's, results.duckdb next to the file)")


class _Bar:
    """A rich progress bar on stderr: runs done / failed / remaining and the ETA."""

    def __init__(self, enabled: bool) -> None:
        self.progress = None
        if enabled and sys.stderr.isatty():
            from rich.progress import (
                BarColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                TextColumn("runs"), BarColumn(),
                TextColumn("{task.fields[done]} done · {task.fields[failed]} failed · "
                           "{task.fields[left]} left"),
                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=_console(stderr=True), transient=True)
            self.task = self.progress.add_task("runs", total=1, done=0, failed=0, left=0)

    def __enter__(self) -> _Bar:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.stop()

    def update(self, done: int, failed: int, total: int) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=done, total=max(total, 1),
                                 done=done - failed, failed=failed, left=total - done)


@campaign_app.command("run")
@CAMPAIGN_ARG
@click.option("--workers", type=int, default=None,
              help="worker processes (default: the number of cores)")
@click.option("--dask", default=None, metavar="ADDRESS|local",
              help="run on a Dask cluster: a scheduler address (tcp://host:8786) or "
                   "'local' for a Dask LocalCluster on this machine")
@click.option("--dask-timeout", type=float, default=10.0, show_default=True,
              help="seconds to wait for the Dask scheduler")
@click.option("--retry-failed", is_flag=True, help="execute failed runs again")
@DATABASE_OPTION
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="progress bar on stderr (only when it is a terminal)")
def campaign_run(campaign_file: Path, workers: int | None, dask: str | None,
                 dask_timeout: float, retry_failed: bool, database: Path | None,
                 progress: bool) -> None:
    """Run the unfinished runs of CAMPAIGN_FILE and store them in its database."""
    from dispatchlab.campaign import load_campaign, run_campaign

    if workers is not None and workers < 1:
        raise InputError(f"must be >= 1, got {workers}", field="--workers")
    if not dask_timeout > 0:
        raise InputError(f"must be > 0, got {dask_timeout}", field="--dask-timeout")
    camp = load_campaign(campaign_file, database=database)
    with _Bar(progress) as bar:
        report = run_campaign(camp, workers=workers, dask=dask, retry_failed=retry_failed,
                              database=database, on_progress=bar.update,
                              dask_timeout=dask_timeout)
    console = _console()
    console.print(
        f"campaign {report.campaign}: {report.total:,} runs; executed {report.executed:,} "
        f"({report.failed:,} failed, {report.reexecuted:,} re-executed after a worker "
        f"died); skipped {report.skipped_done:,} done before"
        + (f" and {report.skipped_failed:,} failed before (use --retry-failed)"
           if report.skipped_failed else "")
        + ".")
    if report.stored < report.executed:
        console.print(f"{report.executed - report.stored:,} executed runs were already "
                      "stored by another process running this campaign; kept those.")
    console.print(f"[dim]{report.backend}, {report.wall_seconds:.1f} s; results in "
                  f"{report.database}[/dim]")


@campaign_app.command("status")
@CAMPAIGN_ARG
@DATABASE_OPTION
def campaign_status_cmd(campaign_file: Path, database: Path | None) -> None:
    """Count the runs of CAMPAIGN_FILE that are done, failed and not run yet."""
    from rich.table import Table

    from dispatchlab.campaign import campaign_status

    st = campaign_status(campaign_file, database=database)
    console = _console()
    table = Table(title=f"campaign {st.campaign} ({st.database})")
    for col in ("runs", "done", "failed", "pending"):
        table.add_column(col, justify="right")
    table.add_row(f"{st.total:,}", f"{st.done:,}", f"{st.failed:,}", f"{st.pending:,}")
    console.print(table)
    if st.other_runs:
        console.print(f"[dim]the database also holds {st.other_runs:,} runs this campaign "
                      "file does not declare (other campaigns or edited entries)[/dim]")
    if st.errors:
        errors = Table(title="failed runs")
        for col in ("run key", "run", "error"):
            errors.add_column(col)
        for key, desc, error in st.errors:
            errors.add_row(key, desc, error)
        console.print(errors)


@click.group("results")
def results_app() -> None:
    """Query and export a results database."""


DB_ARG = click.argument("db", type=click.Path(path_type=Path))


@results_app.command("query")
@DB_ARG
@click.argument("sql")
@click.option("--limit", type=int, default=100, show_default=True,
              help="rows shown (the count of all rows is printed)")
def results_query(db: Path, sql: str, limit: int) -> None:
    """Run SQL on DB (read-only) and print the result as a table."""
    import duckdb
    from rich.table import Table

    from dispatchlab.campaign.store import open_read

    if limit < 1:
        raise InputError(f"must be >= 1, got {limit}", field="--limit")
    con = open_read(db)
    try:
        try:
            rel = con.sql(sql)
        except duckdb.Error as exc:
            raise InputError(f"SQL error: {str(exc).splitlines()[0]}", field="SQL") from None
        if rel is None:
            raise InputError("the statement returns no rows (results are read-only)",
                             field="SQL")
        try:
            columns = rel.columns
            rows = rel.limit(limit + 1).fetchall()
        except duckdb.Error as exc:
            raise InputError(f"SQL error: {str(exc).splitlines()[0]}", field="SQL") from None
    finally:
        con.close()
    table = Table()
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows[:limit]:
        table.add_row(*("NULL" if v is None else f"{v:.6g}" if isinstance(v, float)
                        else str(v) for v in row))
    console = _console()
    console.print(table)
    if len(rows) > limit:
        console.print(f"[dim]more than {limit} rows; showing the first {limit} "
                      "(--limit)[/dim]")


@results_app.command("export")
@DB_ARG
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet",
              show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="folder for runs.*, jobs.* and series.* (default: DB's name with "
                   "'-export', next to it)")
@click.option("--tables", default="runs,jobs,series", show_default=True,
              help="comma-separated tables to export")
def results_export(db: Path, fmt: str, out: Path | None, tables: str) -> None:
    """Export DB's tables to Parquet or CSV files, one per table."""
    import duckdb

    from dispatchlab.campaign.store import open_read
    from dispatchlab.errors import output_folder

    names = [t.strip() for t in tables.split(",")]
    unknown = [t for t in names if t not in ("runs", "jobs", "series")]
    if unknown or not names:
        raise InputError(f"unknown table(s) {unknown} (runs, jobs, series)", field="--tables")
    con = open_read(db)
    folder = output_folder(out if out is not None else db.with_name(f"{db.stem}-export"))
    written = []
    try:
        for name in names:
            path = folder / f"{name}.{fmt}"
            options = "FORMAT PARQUET, COMPRESSION ZSTD" if fmt == "parquet" else \
                "FORMAT CSV, HEADER"
            order = "run_key" if name == "runs" else "run_key, rowid"
            try:
                con.execute(f"COPY (SELECT * FROM {name} ORDER BY {order}) TO "
                            "'" + path.as_posix().replace("'", "''") + f"' ({options})")
            except duckdb.Error as exc:
                raise InputError(f"cannot write: {str(exc).splitlines()[0]}",
                                 file=str(path)) from None
            count = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
            written.append(f"{path} ({count:,} rows)")
    finally:
        con.close()
    for line in written:
        _console().print(f"wrote {line}")


def _window(text: str | None) -> tuple[int, int] | None:
    from dispatchlab.cli import _pair  # imported late: cli imports us

    window = _pair(text, "--gantt-window")
    if window is not None and window[1] <= window[0]:
        raise InputError(f"T1 must be after T0, got {text!r}", field="--gantt-window")
    return window


@click.command("report")
@DB_ARG
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="folder for index.html")
@click.option("--runs", "runs_filter", default=None,
              help="SQL condition on the runs table, e.g. \"dispatcher = 'easy'\"")
@click.option("--gantt-run", default=None, help="run key of the run drawn as a Gantt chart")
@click.option("--gantt-window", default=None,
              help="T0:T1 (s, simulation time) of the Gantt chart")
def report(db: Path, out: Path, runs_filter: str | None, gantt_run: str | None,
           gantt_window: str | None) -> None:
    """Write a self-contained HTML report (figures and tables) of DB's runs."""
    from dispatchlab.report import write_report

    path = write_report(db, out, runs_filter=runs_filter, gantt_run=gantt_run,
                        gantt_window=_window(gantt_window))
    _console().print(f"wrote {path}")
