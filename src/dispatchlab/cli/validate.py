"""``dispatchlab validate``: simulate a trace and compare, job by job, the simulated
waits with the waits the log recorded (:mod:`dispatchlab.experiment.validation`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dispatchlab.cli.common import (
    CLEAN_OPTIONS,
    COMPONENT_OPTIONS,
    ENGINE_OPTION,
    OVERRUN_OPTION,
    PARTITION_OPTIONS,
    PLATFORM_OPTIONS,
    READ_OPTIONS,
    SELECT_OPTIONS,
    SHORTHAND_OPTIONS,
    TRACE_ARG,
    console,
    dispatcher_spec,
    engine_line,
    predictor_spec,
    print_wide,
    progress_bar,
    report,
    trace_source,
    warn,
)
from dispatchlab.core.errors import InputError, output_folder


def _hours(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 3600:,.2f}"


def _corr(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table(validation, title: str):
    """One row overall, one per group: jobs, both mean waits, the bias, the MAE, the
    median and the 5-95 % range of the error (hours), both correlations."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title, caption="waits and errors in hours; error = simulated - "
                  "recorded wait of a job; r: Pearson, rho: Spearman")
    for name in ("group", "jobs", "recorded mean", "simulated mean", "mean error", "MAE",
                 "error p50", "error p5..p95", "r", "rho"):
        table.add_column(name, justify="left" if name == "group" else "right",
                         no_wrap=True)

    def row(label: str, s: dict) -> None:
        q = s["error_quantiles"]
        table.add_row(label, f"{s['jobs']:,}", _hours(s["recorded_mean_wait"]),
                      _hours(s["simulated_mean_wait"]), _hours(s["mean_error"]),
                      _hours(s["mae"]), _hours(q["p50"]),
                      f"{_hours(q['p5'])} .. {_hours(q['p95'])}",
                      _corr(s["pearson"]), _corr(s["spearman"]))

    row("all", validation.overall)
    if len(validation.groups) > 1:
        table.add_section()
        for s in validation.groups:
            row(escape(f"{validation.group_by} {s['group']}"), s)
    return table


@click.command()
@TRACE_ARG
@COMPONENT_OPTIONS
@PLATFORM_OPTIONS
@PARTITION_OPTIONS
@SHORTHAND_OPTIONS
@OVERRUN_OPTION
@ENGINE_OPTION
@READ_OPTIONS
@CLEAN_OPTIONS
@SELECT_OPTIONS
@click.option("--by", default="auto", show_default=True,
              help="the per-group table: auto (queue when the jobs use several "
                   "queues, else partition) | queue | partition (SWF fields 15 / 16; "
                   "sacct partitions and PBS queues are queues)")
@click.option("--rolling-days", type=float, default=14.0, show_default=True,
              help="the window of the rolling mean waits (days; 14 as Wilkinson et al. "
                   "2023)")
@click.option("--json", "json_out", type=click.Path(path_type=Path), default=None,
              metavar="FILE", help="write every number (and the hourly rolling means) "
                                   "as JSON")
@click.option("--plot", type=click.Path(path_type=Path), default=None, metavar="FILE.png",
              help="draw the recorded and simulated rolling mean waits over time")
def validate(trace: Path, dispatcher: str, dispatcher_params: tuple[str, ...],
             predictor: str, predictor_params: tuple[str, ...], platform: str | None,
             nodes: int | None, cores_per_node: int | None,
             partition_map: str | None, ignore_partitions: bool, allocator: str | None,
             order: str | None, priority: str | None, reservations: int | None,
             skip: bool, overrun: str, engine: str, lenient: bool, extra_fields: str, reader: dict,
             drop_overrun: bool, max_procs: bool, window: str | None,
             jobs_range: str | None, fraction: str | None, by: str, rolling_days: float,
             json_out: Path | None, plot: Path | None) -> None:
    """Simulate TRACE and compare each job's simulated wait with the wait the log
    recorded: the error distribution, mean absolute error, correlations and mean
    waits, overall and per partition or queue, and the MAPE between the recorded and
    simulated 14-day rolling mean waits over hourly points (Wilkinson et al. 2023,
    doi:10.1007/978-3-031-40843-4_24). Jobs without a recorded wait or not run are
    left out and counted; the share of jobs the archive's cleaning removed is shown
    beside the result."""
    from dispatchlab.experiment.validation import (
        GROUP_KEYS,
        check_recorded_waits,
        compare_waits,
    )
    from dispatchlab.metrics.validation import WILKINSON_2023
    from dispatchlab.run.advice import result_warnings
    from dispatchlab.run.build import build
    from dispatchlab.run.config import Component, PlatformChoice, RunConfig

    if by not in GROUP_KEYS:
        raise InputError(f"unknown grouping {by!r} (choose {' | '.join(GROUP_KEYS)})",
                         field="--by")
    if not rolling_days > 0:
        raise InputError(f"the rolling window must be positive, got {rolling_days:g}",
                         field="--rolling-days")
    dspec = dispatcher_spec(dispatcher, dispatcher_params, order=order, priority=priority,
                            reservations=reservations, skip=skip, allocator=allocator)
    pspec = predictor_spec(predictor, predictor_params)
    config = RunConfig(
        trace=trace_source(trace, lenient=lenient, drop_overrun=drop_overrun,
                           max_procs=max_procs, window=window, jobs=jobs_range,
                           fraction=fraction, extra_fields=extra_fields, reader=reader),
        platform=PlatformChoice(platform, nodes, cores_per_node),
        dispatcher=Component(dspec.name, dict(dspec.params)),
        predictor=Component(pspec.name, dict(pspec.params)),
        overrun=overrun, partition_map=partition_map, ignore_partitions=ignore_partitions,
        engine=engine,
    )
    bars = []

    def progress_for(n_jobs: int):
        progress, update = progress_bar(n_jobs > 20_000)
        bars.append(progress)
        return update

    run = build(config, report=report, progress=progress_for)
    check_recorded_waits(run.jobs, str(trace))
    plat, sim = run.platform, run.simulation
    not_native = run.not_native
    del run
    progress = bars[0] if bars else None
    if progress is not None:
        with progress:
            result = sim.run()
    else:
        result = sim.run()
    # after the run: under auto a native run may have been made again on Python
    ran = engine_line(result.engine, sim.fell_back or not_native)
    del sim
    for text in result_warnings(result):
        warn(text)
    validation = compare_waits(result, by=by, window=round(rolling_days * 86400))
    con = console()
    title = f"{Path(trace).name} on {plat.describe()}: {dspec.text} / {pspec.text}"
    print_wide(con, _table(validation, title))
    c = validation.counts
    con.print(f"compared {c['compared']:,} of {c['measured']:,} jobs; left out: "
              f"{c['no_recorded_wait']:,} without a recorded wait, {c['not_run']:,} not "
              f"run in the simulation")
    r = validation.rolling
    mape = "n/a (no point kept)" if r.mape is None else f"{r.mape:.1f} %"
    con.print(f"rolling-mean MAPE ({rolling_days:g}-day windows, hourly): {mape} over "
              f"{int(r.used.sum()):,} of {len(r.hours):,} hours ({r.zero:,} left out: "
              f"recorded mean 0; {r.empty:,}: no job in the window); "
              f"[dim]cf. {WILKINSON_2023}[/dim]")
    con.print(validation.cleaning.describe()
              + ("" if not validation.dropped else "; dropped at load: " + ", ".join(
                  f"{v:,} ({k})" for k, v in validation.dropped.items())))
    con.print(f"[dim]{ran}[/dim]")
    if validation.cleaning.removed:
        con.print("[dim]the removed jobs used the real machine too: the recorded waits "
                  "were shaped by load this simulation does not see[/dim]")
    if validation.scheduler:
        from rich.markup import escape

        con.print(f"[dim]the log's header names its scheduler: "
                  f"{escape(validation.scheduler)}[/dim]")
    if json_out is not None:
        doc = {"trace": str(trace), "platform": plat.describe(), "dispatcher": dspec.text,
               "predictor": pspec.text, **validation.as_dict()}
        folder = output_folder(Path(json_out).parent)
        try:
            (folder / Path(json_out).name).write_text(json.dumps(doc, indent=1) + "\n",
                                                      encoding="utf-8")
        except OSError as exc:
            raise InputError(f"cannot write the JSON file: {exc.strerror}",
                             file=str(json_out)) from None
        con.print(f"[dim]wrote {json_out}[/dim]")
    if plot is not None:
        from dispatchlab.report.validation import rolling_waits_figure

        start = result.jobs.info.unix_start_time
        offset = result.jobs.info.time_offset
        fig = rolling_waits_figure(
            r, title=title, start_epoch=None if start is None else start + offset)
        folder = output_folder(Path(plot).parent)
        try:
            fig.savefig(folder / Path(plot).name, dpi=120)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot write the figure: {exc}", file=str(plot)) from None
        con.print(f"[dim]wrote {plot}[/dim]")
