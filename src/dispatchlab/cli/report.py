"""``dispatchlab report``: the HTML report of a campaign results database."""

from __future__ import annotations

from pathlib import Path

import click

from dispatchlab.cli.common import console, parse_range
from dispatchlab.cli.results import DB_ARG, INCLUDE_UNFINISHED
from dispatchlab.core.errors import InputError


def _window(text: str | None) -> tuple[int, int] | None:
    window = parse_range(text, "--gantt-window", open_end=False)
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
@click.option("--baseline", default=None,
              help="dispatcher label the summary table compares the others with (default: "
                   "the first dispatcher)")
@click.option("--include-outdated", is_flag=True,
              help="also use runs made by other code than the current (left out by default)")
@INCLUDE_UNFINISHED
def report(db: Path, out: Path, runs_filter: str | None, gantt_run: str | None,
           gantt_window: str | None, baseline: str | None, include_outdated: bool,
           include_unfinished: bool) -> None:
    """Write a self-contained HTML report (figures and tables) of DB's runs."""
    from dispatchlab.report.html import write_report

    path = write_report(db, out, runs_filter=runs_filter, gantt_run=gantt_run,
                        gantt_window=_window(gantt_window), baseline=baseline,
                        include_outdated=include_outdated,
                        include_unfinished=include_unfinished)
    console().print(f"wrote {path}")
