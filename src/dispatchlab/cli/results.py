"""``dispatchlab results query|export|summary|power``: reading a campaign results database
(``dispatchlab report`` is :mod:`dispatchlab.cli.report`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dispatchlab.cli.common import console, fits, print_records, print_wide
from dispatchlab.core.errors import InputError, output_folder
from dispatchlab.core.suggest import did_you_mean


@click.group("results")
def results_app() -> None:
    """Query and export a results database."""


DB_ARG = click.argument("db", type=click.Path(path_type=Path))

#: ``--include-unfinished`` of the commands that read runs.
INCLUDE_UNFINISHED = click.option(
    "--include-unfinished", is_flag=True,
    help="also use runs stopped at their wall-clock budget (max_wall), whose metrics "
         "cover only the jobs that ended (left out by default, and listed)")


@results_app.command("query")
@DB_ARG
@click.argument("sql")
@click.option("--limit", type=int, default=100, show_default=True,
              help="rows shown in table format (the count of all rows is printed)")
@click.option("--format", "fmt", type=click.Choice(["auto", "table", "records", "csv",
                                                  "json"]),
              default="auto", show_default=True,
              help="auto: a table of the first --limit rows when it fits the width "
                   "(the terminal's or COLUMNS; off a terminal COLUMNS, else 140), else "
                   "records; table: a table at its full width; records: one block of "
                   "'column: value' lines per row; csv / json: every row on standard "
                   "output")
def results_query(db: Path, sql: str, limit: int, fmt: str) -> None:
    """Run SQL on DB (read-only) and print the result."""
    import duckdb

    from dispatchlab.experiment.campaign.store import open_read

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
            if fmt in SHOWN:
                total = rel.count("*").fetchall()[0][0]
                rows = rel.limit(limit).fetchall()
            else:
                rows = rel.fetchall()
                total = len(rows)
        except duckdb.Error as exc:
            raise InputError(f"SQL error: {str(exc).splitlines()[0]}", field="SQL") from None
    finally:
        con.close()
    if fmt not in SHOWN:
        _write_rows(columns, rows, fmt)
        return
    from rich.table import Table

    cells = [["NULL" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)
              for v in row] for row in rows]
    table = Table()
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in cells:
        table.add_row(*row)
    out = console()
    show(out, table, fmt, list(columns), cells)
    shown = f"; showing the first {limit:,} (--limit)" if total > limit else ""
    out.print(f"[dim]{total:,} row{'s' * (total != 1)}{shown}[/dim]")


#: The --format values shown on the console (the others write every row as data).
SHOWN = ("auto", "table", "records")


def show(out, table, fmt: str, columns: list[str], cells: list[list[str]]) -> None:
    """``table`` as ``--format`` says: ``table`` at its full width; ``records`` (one
    ``column: value`` block per row, :func:`~dispatchlab.cli.common.print_records`);
    ``auto``: the table when it fits the output's width, else the records. Headers and
    values are never cut."""
    if fmt == "records" or (fmt == "auto" and not fits(out, table)):
        print_records(columns, cells)
    else:
        print_wide(out, table)


def _write_rows(columns: list[str], rows: list[tuple], fmt: str) -> None:
    """Every row on standard output as CSV (header first) or a JSON array of objects."""
    import csv
    import datetime as dt
    import json

    def plain(v):
        if isinstance(v, (dt.date, dt.datetime)):
            return v.isoformat()
        if isinstance(v, float) and v != v:
            return None
        return v

    if fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[("" if v is None else plain(v)) for v in r] for r in rows])
    else:
        json.dump([{c: plain(v) for c, v in zip(columns, r, strict=True)} for r in rows],
                  sys.stdout, default=str, indent=1)
        sys.stdout.write("\n")


@results_app.command("summary")
@DB_ARG
@click.option("--runs", "runs_filter", default=None,
              help="SQL condition on the runs table, e.g. \"trace = 'CTC'\"")
@click.option("--baseline", default=None,
              help="dispatcher label the others are compared with (same predictor, same "
                   "workloads)")
@click.option("--metric", "metrics", multiple=True,
              default=("mean_wait", "mean_bsld", "steady_utilization"),
              show_default=True, help="metrics shown (repeatable; declared metric keys)")
@click.option("--include-outdated", is_flag=True,
              help="also use runs made by other code than the current (left out by default)")
@INCLUDE_UNFINISHED
@click.option("--seed", type=int, default=0, show_default=True, help="bootstrap seed")
def results_summary(db: Path, runs_filter: str | None, baseline: str | None,
                    metrics: tuple[str, ...], include_outdated: bool,
                    include_unfinished: bool, seed: int) -> None:
    """Per configuration: the mean over runs of each run's metric with a 95 % interval
    (Student's t below 10 runs, percentile bootstrap from 10), and paired differences
    to --baseline."""
    from dispatchlab.experiment.campaign.store import open_read, select_runs, split_unfinished
    from dispatchlab.experiment.statistics import run_statistics
    from dispatchlab.metrics.keys import BY_KEY

    for key in metrics:
        if key not in BY_KEY:
            raise InputError(f"unknown metric {key!r}{did_you_mean(key, BY_KEY)}",
                             field="--metric")
    con = open_read(db)
    try:
        runs, outdated = select_runs(con, runs_filter, include_outdated=include_outdated)
    finally:
        con.close()
    runs, unfinished = split_unfinished(runs, include_unfinished=include_unfinished)
    if not runs:
        raise InputError("no current run matches" + ("" if runs_filter is None else
                         f" the filter {runs_filter!r}") +
                         (f" ({len(outdated)} outdated runs left out: --include-outdated)"
                          if outdated else "") +
                         (f" ({len(unfinished)} unfinished runs left out: "
                          "--include-unfinished)" if unfinished else ""))
    sections = run_statistics(runs, metrics=metrics, baseline=baseline, seed=seed,
                              include_unfinished=include_unfinished)
    out = console()
    for section in sections:
        out.print(_summary_section(section, metrics, baseline))
    if outdated:
        out.print(f"[yellow]{len(outdated):,} outdated runs left out (made by other code "
                  "than the current one; campaign run --rerun replaces them, "
                  "--include-outdated uses them)[/yellow]")
    print_unfinished(unfinished)



def print_unfinished(unfinished: list[dict]) -> None:
    """List the unfinished runs left out, with how many of their jobs ended."""
    from dispatchlab.experiment.campaign.store import describe_unfinished

    if not unfinished:
        return
    out = console()
    out.print(f"[yellow]{len(unfinished):,} unfinished runs left out (stopped at their "
              "wall-clock budget: their metrics cover only the jobs that ended; "
              "--include-unfinished uses them, marked):[/yellow]", soft_wrap=True)
    for row in unfinished:
        # names are the user's labels: printed as text, never read as markup
        out.print("  " + describe_unfinished(row), style="yellow", soft_wrap=True,
                  markup=False, highlight=False)


def _summary_section(section, metrics: tuple[str, ...], baseline: str | None):
    from rich.table import Table

    from dispatchlab.experiment.statistics import (
        BOOTSTRAP_MIN_RUNS,
        MIN_RUNS,
        format_difference,
        format_estimate,
    )
    from dispatchlab.metrics.keys import BY_KEY

    table = Table(title=f"trace {section.trace}, platform {section.platform}",
                  caption="mean over runs of each run's value [95 % interval over runs: "
                          f"t = Student's t below {BOOTSTRAP_MIN_RUNS} runs, boot = "
                          f"percentile bootstrap from {BOOTSTRAP_MIN_RUNS}; none below "
                          f"{MIN_RUNS} runs]" + (
                              f"; vs {baseline}: paired difference on the same workloads "
                              "with its interval, and the ratio of means" if baseline
                              else ""))
    table.add_column("configuration")
    table.add_column("runs", justify="right")
    for key in metrics:
        table.add_column(BY_KEY[key].label, justify="right")
    if baseline:
        for key in metrics[:2]:
            table.add_column(f"{BY_KEY[key].label} vs {baseline}", justify="right")
    for group, row in zip(section.groups, section.rows, strict=True):
        fmts = ["{:,.0f}" if BY_KEY[k].fmt == "{:,}" else BY_KEY[k].fmt for k in metrics]
        cells = [format_estimate(row[k], f) for k, f in zip(metrics, fmts, strict=True)]
        if baseline:
            diffs = row.get("vs_baseline") or {}
            mark = "baseline" if group.dispatcher == baseline else "-"
            cells += [format_difference(diffs[k], f) if k in diffs else mark
                      for k, f in zip(metrics[:2], fmts[:2], strict=True)]
        runs = str(row["runs"]) + (f" ({row['unfinished']} unfinished)"
                                   if row.get("unfinished") else "")
        table.add_row(row["config"], runs, *cells)
    return table


@results_app.command("power")
@DB_ARG
@click.option("--runs", "runs_filter", default=None,
              help="SQL condition on the runs table, e.g. \"trace = 'thunder'\"")
@click.option("--baseline", default="easy", show_default=True,
              help="dispatcher label of the baseline run on each workload")
@click.option("--baseline-cap", default="none", show_default=True,
              help="cap label of the baseline run (none: the uncapped run)")
@click.option("--format", "fmt", type=click.Choice(["auto", "table", "records", "csv",
                                                  "json"]),
              default="auto", show_default=True,
              help="auto: a table when it fits the width (the terminal's or COLUMNS; off "
                   "a terminal COLUMNS, else 140), else records; table | records (one "
                   "block of 'column: value' lines per row) | csv | json")
@click.option("--include-outdated", is_flag=True,
              help="also use runs made by other code than the current (left out by default)")
@INCLUDE_UNFINISHED
def results_power(db: Path, runs_filter: str | None, baseline: str, baseline_cap: str,
                  fmt: str, include_outdated: bool, include_unfinished: bool) -> None:
    """Power caps (Carastan-Santos et al. 2024): per dispatcher x power predictor x cap, the means
    over workloads of the cap-window metrics and the turnaround change against the baseline
    run on the same workload."""
    from dispatchlab.experiment.campaign.store import open_read, select_runs, split_unfinished
    from dispatchlab.experiment.statistics import power_rows

    con = open_read(db)
    try:
        runs, outdated = select_runs(con, runs_filter, include_outdated=include_outdated)
    finally:
        con.close()
    runs, unfinished = split_unfinished(runs, include_unfinished=include_unfinished)
    if unfinished:
        from dispatchlab.experiment.campaign.store import describe_unfinished

        print(f"note: {len(unfinished):,} unfinished runs left out (stopped at their "
              "wall-clock budget; --include-unfinished uses them): "
              + "; ".join(describe_unfinished(r) for r in unfinished), file=sys.stderr)
    rows = power_rows(runs, baseline=baseline, baseline_cap=baseline_cap)
    if not rows:
        raise InputError("no current run with a power cap axis matches" + (
            "" if runs_filter is None else f" the filter {runs_filter!r}") + (
            f" ({len(outdated)} outdated runs left out: --include-outdated)"
            if outdated else ""))
    if not any(r["baselined"] for r in rows):
        print(f"note: no run has a baseline ({baseline!r} at cap {baseline_cap!r} on the "
              "same workload): the change columns are empty", file=sys.stderr)
    if fmt not in SHOWN:
        columns = list(rows[0])
        _write_rows(columns, [tuple(r[c] for c in columns) for r in rows], fmt)
        return
    from rich.table import Table

    def pct(v, signed=False):
        return "-" if v is None else f"{v * 100:+.1f} %" if signed else f"{v * 100:.1f} %"

    # (table header, record label): a record names the column the table's "own" follows
    names = [("cap", "cap"), ("dispatcher", "dispatcher"),
             ("power predictor", "power predictor"), ("runs", "runs"),
             ("power / cap", "power / cap"), ("time above", "time above"),
             ("own", "time above, own"), ("runs above", "runs above"),
             ("own", "runs above, own"), ("max excess", "max excess"),
             ("own", "max excess, own"), ("under-use", "under-use"),
             ("started in window", "started in window"), ("turnaround", "turnaround"),
             ("max turnaround", "max turnaround")]
    out = console()
    for (trace, platform) in dict.fromkeys((r["trace"], r["platform"]) for r in rows):
        title = f"trace {trace}, platform {platform}"
        caption = (f"means over runs (workloads); 'own': leaving out the times when the "
                   "jobs running at the window's opening were above the cap on their own; "
                   f"changes vs {baseline} at cap {baseline_cap} on the same workload")
        table = Table(title=title, caption=caption)
        for col, _ in names:
            table.add_column(col, justify="left" if col in ("cap", "dispatcher",
                                                            "power predictor") else "right")
        cells = []
        for r in rows:
            if (r["trace"], r["platform"]) != (trace, platform):
                continue
            cells.append([r["cap"], r["dispatcher"], r["power_predictor"] or "-",
                          str(r["runs"]), pct(r["cap_mean_share"]),
                          pct(r["cap_time_above_share"]),
                          pct(r["cap_time_above_own_share"]), pct(r["above_share"]),
                          pct(r["above_own_share"]), pct(r["cap_max_excess"]),
                          pct(r["cap_max_excess_own"]), pct(r["cap_mean_underuse"]),
                          pct(r["window_start_share"]),
                          pct(r["mean_turnaround_change"], True),
                          pct(r["max_turnaround_change"], True)])
            table.add_row(*cells[-1])
        if fmt == "records" or (fmt == "auto" and not fits(out, table)):
            print(f"{title}\n{caption}\n")
            print_records([label for _, label in names], cells)
        else:
            print_wide(out, table)


@results_app.command("groups")
@DB_ARG
@click.option("--by", default="partition", show_default=True,
              type=click.Choice(["partition", "user", "account", "qos"]),
              help="the jobs column the jobs are grouped by (the log's names, an SWF "
                   "trace's numbers)")
@click.option("--runs", "runs_filter", default=None,
              help="SQL condition on the runs table, e.g. \"trace = 'curie'\"")
@click.option("--format", "fmt", type=click.Choice(["auto", "table", "records", "csv",
                                                  "json"]),
              default="auto", show_default=True,
              help="auto: a table when it fits the width, else records; table | records "
                   "| csv | json")
@click.option("--include-outdated", is_flag=True,
              help="also use runs made by other code than the current (left out by default)")
@INCLUDE_UNFINISHED
def results_groups(db: Path, by: str, runs_filter: str | None, fmt: str,
                   include_outdated: bool, include_unfinished: bool) -> None:
    """Metrics per partition (or user, account, QOS) of each configuration: the stored
    measured jobs of its runs pooled (jobs, rejected, mean and median wait, bounded
    slowdown, node-hours or proc-hours and their share)."""
    from dispatchlab.experiment.campaign.store import (
        group_rows,
        open_read,
        select_runs,
        split_unfinished,
    )

    con = open_read(db)
    try:
        runs, outdated = select_runs(con, runs_filter, include_outdated=include_outdated)
        runs, unfinished = split_unfinished(runs, include_unfinished=include_unfinished)
        rows = group_rows(con, [r["run_key"] for r in runs if r["status"] == "done"], by)
    finally:
        con.close()
    if not rows:
        raise InputError("no stored jobs of a current done run match" + (
            "" if runs_filter is None else f" the filter {runs_filter!r}") + (
            f" ({len(outdated)} outdated runs left out: --include-outdated)"
            if outdated else "") + " (the campaign stores jobs unless told not to)")
    if fmt not in SHOWN:
        columns = list(rows[0])
        _write_rows(columns, [tuple(r[c] for c in columns) for r in rows], fmt)
        return
    from rich.table import Table
    from rich.text import Text

    def num(v, f="{:,.0f}"):
        return "-" if v is None else f.format(v)

    out = console()
    for trace, platform in dict.fromkeys((r["trace"], r["platform"]) for r in rows):
        part = [r for r in rows if (r["trace"], r["platform"]) == (trace, platform)]
        unit = part[0]["hours_unit"]
        caption = (f"measured jobs of all runs of a configuration pooled; {unit}: "
                   + ("nodes of the allocation x run" if unit == "node-hours" else
                      "units x run") + "; share: of the configuration's " + unit)
        if all(r["group"] is None for r in part):
            caption += (f"; no stored job has a {by} (runs stored before dispatchlab "
                        f"kept the jobs' groups, or a trace without {by}): (none)")
        table = Table(title=f"by {by}: trace {trace}, platform {platform}", caption=caption)
        names = ["configuration", by, "runs", "jobs", "rejected", "mean wait",
                 "median wait", "bsld", unit, "share"]
        for col in names:
            table.add_column(col, justify="left" if col in ("configuration", by)
                             else "right")
        cells = []
        for r in part:
            config = f"{r['dispatcher']} / {r['predictor']}" + (
                f" @ {r['cap']}" if r["cap"] else "")
            cells.append([config, "(none)" if r["group"] is None else str(r["group"]),
                          str(r["runs"]), f"{r['jobs']:,}", f"{r['rejected']:,}",
                          num(r["mean_wait"]), num(r["median_wait"]),
                          num(r["mean_bsld"], "{:,.2f}"), f"{r['hours']:,.1f}",
                          "-" if r["hours_share"] is None else f"{r['hours_share']:.1%}"])
            table.add_row(*(Text(c) for c in cells[-1]))
        if fmt == "records" or (fmt == "auto" and not fits(out, table)):
            print(f"{table.title}\n{caption}\n")
            print_records(names, cells)
        else:
            print_wide(out, table)
    if outdated:
        out.print(f"[yellow]{len(outdated):,} outdated runs left out (--include-outdated "
                  "uses them)[/yellow]")
    print_unfinished(unfinished)


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

    from dispatchlab.experiment.campaign.store import open_read

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
        console().print(f"wrote {line}")
