"""``dispatchlab campaign run|status``: many simulations declared in a TOML file."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import click

from dispatchlab.cli.common import console
from dispatchlab.core.errors import InputError


@click.group("campaign")
def campaign_app() -> None:
    """Run many simulations declared in a TOML campaign file."""


CAMPAIGN_ARG = click.argument("campaign_file", type=click.Path(path_type=Path))
DATABASE_OPTION = click.option(
    "--database", type=click.Path(path_type=Path), default=None,
    help="results database (default: the campaign's, results.duckdb next to the file)")


#: Off a terminal, a progress line at least this often (s) while runs execute...
PROGRESS_SECONDS = 60.0
#: ...and each time this share of the runs to execute has finished.
PROGRESS_STEP = 0.1


class ProgressLines:
    """Progress off a terminal (logs, pipes): plain lines on stderr,
    ``progress: D/T runs done (F failed), H:MM:SS elapsed``, one each time another
    :data:`PROGRESS_STEP` of the runs to execute has finished (the last at T/T), and
    one every ``every`` seconds without another line (from a timer thread, so a slow
    run does not leave the log silent). None before the first run ends or that
    heartbeat: a campaign that fails to start prints its one error line alone. The
    lines differ between executions only in their times and in the number of timed
    lines."""

    def __init__(self, every: float = PROGRESS_SECONDS, clock=time.monotonic) -> None:
        self.every = every
        self.clock = clock
        self.t0 = self.last = clock()
        self.state: tuple[int, int, int] | None = None  # (done, failed, total)
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.timer: threading.Thread | None = None

    def start(self) -> None:
        self.timer = threading.Thread(target=self._tick, name="dispatchlab-progress",
                                      daemon=True)
        self.timer.start()

    def stop(self) -> None:
        self.stopped.set()
        if self.timer is not None:
            self.timer.join()

    def update(self, done: int, failed: int, total: int) -> None:
        if total <= 0:
            return
        with self.lock:
            before = self.state or (0, 0, total)
            self.state = (done, failed, total)
            steps = round(1 / PROGRESS_STEP)
            if before[2] != total or done * steps // total > before[0] * steps // total:
                self._line()

    def heartbeat(self) -> None:
        """A line when the last one is ``every`` seconds old (called by the timer)."""
        with self.lock:
            if self.state is not None and self.clock() - self.last >= self.every:
                self._line()

    def _tick(self) -> None:
        while not self.stopped.wait(min(self.every, 1.0)):
            self.heartbeat()

    def _line(self) -> None:
        assert self.state is not None
        done, failed, total = self.state
        now = self.clock()
        self.last = now
        seconds = int(now - self.t0)
        print(f"progress: {done:,}/{total:,} runs done ({failed:,} failed), "
              f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d} elapsed",
              file=sys.stderr, flush=True)


class _Bar:
    """Progress on stderr: a rich bar (runs done / failed / remaining and the ETA) on a
    terminal, else :class:`ProgressLines`."""

    def __init__(self, enabled: bool) -> None:
        self.progress = None
        self.lines: ProgressLines | None = None
        if enabled and not sys.stderr.isatty():
            self.lines = ProgressLines()
        elif enabled:
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
                console=console(stderr=True), transient=True)
            self.task = self.progress.add_task("runs", total=1, done=0, failed=0, left=0)

    def __enter__(self) -> _Bar:
        if self.progress is not None:
            self.progress.start()
        if self.lines is not None:
            self.lines.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.stop()
        if self.lines is not None:
            self.lines.stop()

    def update(self, done: int, failed: int, total: int) -> None:
        if self.lines is not None:
            self.lines.update(done, failed, total)
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
@click.option("--rerun", is_flag=True,
              help="execute every run of the campaign again, replacing the stored rows")
@click.option("--rerun-where", default=None, metavar="SQL",
              help="execute again the stored runs of the campaign matching this SQL "
                   "condition on the runs table (e.g. \"dispatcher_name = 'easy'\")")
@DATABASE_OPTION
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="progress on stderr: a bar on a terminal, else a line each 10 % of "
                   "the runs and at least every minute")
def campaign_run(campaign_file: Path, workers: int | None, dask: str | None,
                 dask_timeout: float, retry_failed: bool, rerun: bool,
                 rerun_where: str | None, database: Path | None,
                 progress: bool) -> None:
    """Run the unfinished runs of CAMPAIGN_FILE and store them in its database."""
    from dispatchlab.experiment.campaign import load_campaign, run_campaign

    if workers is not None and workers < 1:
        raise InputError(f"must be >= 1, got {workers}", field="--workers")
    if not dask_timeout > 0:
        raise InputError(f"must be > 0, got {dask_timeout}", field="--dask-timeout")
    camp = load_campaign(campaign_file, database=database)
    if rerun and rerun_where is not None:
        raise InputError("give --rerun or --rerun-where, not both", field="--rerun")
    try:
        with _Bar(progress) as bar:
            report = run_campaign(camp, workers=workers, dask=dask,
                                  retry_failed=retry_failed, database=database,
                                  on_progress=bar.update, dask_timeout=dask_timeout,
                                  rerun=rerun, rerun_where=rerun_where)
    except KeyboardInterrupt as exc:
        _interrupted(camp, database, exc, rerun or rerun_where is not None)
        raise click.exceptions.Exit(130) from None
    con = console()
    con.print(
        f"campaign {report.campaign}: {report.total:,} runs; executed {report.executed:,} "
        f"({report.failed:,} failed, {report.reexecuted:,} re-executed after a worker "
        f"died); skipped {report.skipped_done:,} done before"
        + (f" and {report.skipped_failed:,} failed before (use --retry-failed)"
           if report.skipped_failed else "")
        + ".")
    if report.rerun or report.superseded:
        con.print(f"re-executed {report.rerun:,} stored runs on request; replaced "
                  f"{report.superseded:,} stored runs made by older code or inputs.")
    if report.stored < report.executed:
        con.print(f"{report.executed - report.stored:,} executed runs were already "
                      "stored by another process running this campaign; kept those.")
    con.print(f"[dim]{report.backend}, {report.wall_seconds:.1f} s; results in "
                  f"{report.database}[/dim]")


def _interrupted(camp, database: Path | None, exc: KeyboardInterrupt, rerun: bool) -> None:
    """Ctrl-C during ``campaign run``: one line on stderr saying how many runs are
    stored and how to resume (the caller exits with status 130)."""
    from dispatchlab.experiment.campaign import CampaignInterrupted, campaign_status

    now = ""
    if isinstance(exc, CampaignInterrupted):
        now = f" ({exc.report.stored:,} stored by this command)"
    # --rerun would execute the stored runs again: resuming is a run without it
    how = ("the command without --rerun/--rerun-where executes" if rerun
           else "the same command resumes with")
    try:
        st = campaign_status(camp, database=database)
    except InputError:  # the database is held by another process
        print(f"interrupted{now}; {how} the runs not stored", file=sys.stderr)
        return
    stored = st.done + st.failed
    print(f"interrupted: {stored:,} of the campaign's {st.total:,} runs are stored in "
          f"{st.database}{now}; {how} the other {st.total - stored:,}", file=sys.stderr)


@campaign_app.command("status")
@CAMPAIGN_ARG
@DATABASE_OPTION
def campaign_status_cmd(campaign_file: Path, database: Path | None) -> None:
    """Count the runs of CAMPAIGN_FILE that are done, failed and not run yet."""
    from rich.table import Table

    from dispatchlab.experiment.campaign import campaign_status

    st = campaign_status(campaign_file, database=database)
    con = console()
    table = Table(title=f"campaign {st.campaign} ({st.database})")
    for col in ("runs", "done", "failed", "pending", "outdated"):
        table.add_column(col, justify="right")
    table.add_row(f"{st.total:,}", f"{st.done:,}", f"{st.failed:,}", f"{st.pending:,}",
                  f"{st.outdated:,}")
    con.print(table)
    if st.outdated_runs:
        old = Table(title="outdated runs (made by other code or inputs; the next campaign "
                          "run replaces them)")
        for col in ("run key", "run", "why"):
            old.add_column(col)
        for key, desc, why in st.outdated_runs:
            old.add_row(key, desc, why)
        con.print(old)
    others = st.other_runs - st.outdated
    if others > 0:
        con.print(f"[dim]the database also holds {others:,} runs this campaign file does "
                  "not declare (other campaigns or edited entries)[/dim]")
    if st.errors:
        errors = Table(title="failed runs")
        for col in ("run key", "run", "error"):
            errors.add_column(col)
        for key, desc, error in st.errors:
            errors.add_row(key, desc, error)
        con.print(errors)
