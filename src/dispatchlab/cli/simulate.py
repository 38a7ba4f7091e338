"""``dispatchlab simulate``: one run (``dispatchlab demo`` is :mod:`dispatchlab.cli.demo`)."""

from __future__ import annotations

import importlib
import threading
import time
from pathlib import Path

import click

from dispatchlab.cli.common import (
    CAP_OPTIONS,
    CLEAN_OPTIONS,
    COMPONENT_OPTIONS,
    ENGINE_OPTION,
    OVERRUN_OPTION,
    PARTITION_OPTIONS,
    PLATFORM_OPTIONS,
    READ_OPTIONS,
    SELECT_OPTIONS,
    SHORTHAND_OPTIONS,
    TAU_OPTION,
    THROTTLE_OPTIONS,
    TRACE_ARG,
    console,
    dispatcher_spec,
    duration_model_spec,
    engine_line,
    power_predictor_spec,
    predictor_spec,
    progress_bar,
    report,
    summary_table,
    trace_source,
    warn,
)
from dispatchlab.core.errors import InputError, output_folder
from dispatchlab.core.memory import release_free_memory
from dispatchlab.metrics.groups import (
    check_group_keys,
    ordered_groups,
    parse_group_keys,
)

#: Groups of one key printed by ``simulate --by`` (the largest hours first); summary.json
#: holds them all.
GROUP_ROWS = 20


def _load_notes(jobs, summary: dict) -> list[str]:
    info = jobs.info
    notes = []
    if info.skipped:  # as trace convert and trace info name them
        notes.append("skipped by rule: " + ", ".join(f"{v:,} ({k})"
                                                     for k, v in info.skipped.items()))
    if info.dropped:
        notes.append("dropped at load: " + ", ".join(f"{v:,} ({k})"
                                                    for k, v in info.dropped.items()))
    if info.malformed_skipped:
        notes.append(f"malformed lines skipped: {info.malformed_skipped:,}")
    if info.estimate_fallbacks:
        notes.append(f"requested time -1 replaced for {info.estimate_fallbacks:,} jobs "
                     f"({info.estimate_fallback_source})")
    if summary.get("rejected_total"):
        notes.append(f"rejected (cannot fit the platform): {summary['rejected_total']:,}")
    return notes


@click.command()
@TRACE_ARG
@COMPONENT_OPTIONS
@PLATFORM_OPTIONS
@PARTITION_OPTIONS
@SHORTHAND_OPTIONS
@CAP_OPTIONS
@click.option("--power-series", type=click.Path(path_type=Path), default=None,
              metavar="FILE",
              help="job power time series (job_id, offset s, watts; Parquet/CSV, e.g. "
                   "from 'dispatchlab power synth --series'; needs --power): the cap "
                   "metrics use the platform power sampled every 20 s from them, and "
                   "--out writes it to platform_power.parquet")
@THROTTLE_OPTIONS
@OVERRUN_OPTION
@ENGINE_OPTION
@TAU_OPTION
@click.option("--measure", default="all", show_default=True,
              help="jobs counted in metrics: all | time:T0:T1 | index:I0:I1 (T1/I1 may "
                   "be left open)")
@click.option("--by", "by", multiple=True, metavar="KEY",
              help="also print the metrics per partition | user | account | qos, and the "
                   "fairness figures (repeatable or a comma list; summary.json: by_group)")
@READ_OPTIONS
@CLEAN_OPTIONS
@SELECT_OPTIONS
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write jobs.parquet and summary.json into this folder")
@click.option("--csv", is_flag=True, help="also write jobs.csv")
@click.option("--swf-out", type=click.Path(path_type=Path), default=None,
              help="write the simulated schedule as a standard SWF file (.gz: compressed)")
@click.option("--max-wall", type=float, default=None,
              help="stop after this many wall-clock seconds; the run is reported as not "
                   "finished, with the jobs that ended by then (not reproducible)")
@click.option("--trace-decisions", type=click.Path(path_type=Path), default=None,
              help="write one row per dispatcher pass to this Parquet file: the solver "
                   "facts of CP dispatchers, the decision time of the others")
def simulate(trace: Path, dispatcher: str, dispatcher_params: tuple[str, ...],
             predictor: str, predictor_params: tuple[str, ...], platform: str | None,
             nodes: int | None, cores_per_node: int | None, partition_map: str | None,
             ignore_partitions: bool, allocator: str | None,
             order: str | None, priority: str | None, reservations: int | None,
             skip: bool, cap: str | None, cap_window: str | None, cap_file: Path | None,
             power_file: str | None, power_predictor: str | None,
             power_predictor_params: tuple[str, ...], power_series: Path | None,
             duration_model: str | None, hot_start: float | None, overrun: str,
             engine: str, tau: float, measure: str, by: tuple[str, ...], lenient: bool,
             extra_fields: str, reader: dict,
             drop_overrun: bool, max_procs: bool, window: str | None,
             jobs_range: str | None, fraction: str | None, out: Path | None,
             csv: bool, swf_out: Path | None, max_wall: float | None,
             trace_decisions: Path | None) -> None:
    """Simulate TRACE under one dispatcher and predictor; print and write the results.

    Components follow one grammar: NAME(:KEY=VALUE)*, e.g. --dispatcher
    easy:order=sjf, or -D order=sjf."""
    t0 = time.perf_counter()

    from dispatchlab.run.advice import result_warnings
    from dispatchlab.run.build import build
    from dispatchlab.run.config import Component, PlatformChoice, RunConfig
    from dispatchlab.run.outputs import run_summary, write_result, write_schedule_swf
    from dispatchlab.sim.native import is_python_dispatcher

    group_keys = parse_group_keys(by)
    dspec = dispatcher_spec(dispatcher, dispatcher_params, order=order, priority=priority,
                            reservations=reservations, skip=skip, allocator=allocator)
    pspec = predictor_spec(predictor, predictor_params)
    dmodel = duration_model_spec(duration_model)
    ppspec = power_predictor_spec(power_predictor, power_predictor_params)
    config = RunConfig(
        trace=trace_source(trace, lenient=lenient, drop_overrun=drop_overrun,
                           max_procs=max_procs, window=window, jobs=jobs_range,
                           fraction=fraction, extra_fields=extra_fields, reader=reader),
        platform=PlatformChoice(platform, nodes, cores_per_node),
        dispatcher=Component(dspec.name, dict(dspec.params)),
        predictor=Component(pspec.name, dict(pspec.params)),
        power_predictor=None if ppspec is None else Component(ppspec.name,
                                                              dict(ppspec.params)),
        duration_model=None if dmodel is None else Component(dmodel.name, dict(dmodel.params)),
        power=power_file, power_series=None if power_series is None else str(power_series),
        cap=cap, cap_window=cap_window, cap_file=None if cap_file is None else str(cap_file),
        hot_start=hot_start, overrun=overrun, measure=measure, tau=tau, max_wall=max_wall,
        partition_map=partition_map, ignore_partitions=ignore_partitions,
        engine=_decision_engine(engine, trace_decisions),
    )
    measure_spec = config.parsed_measure()
    bars = []

    def progress_for(n_jobs: int):  # a bar on a terminal, for long runs
        progress, update = progress_bar(n_jobs > 20_000)
        bars.append(progress)
        return update

    run = build(config, report=report, progress=progress_for)
    jobs, plat, cap_spec, job_series = run.jobs, run.platform, run.cap, run.series
    not_native = run.not_native
    check_group_keys(jobs, group_keys)  # before the run: a key the trace cannot give
    sim = run.simulation
    # no Python code of the run is timed (a dispatcher written in Python is, on either
    # engine), and no output files follow (their writing is the command's peak of
    # memory, which rich loaded before it would raise): the printing may be readied
    # beside the run
    beside = run.engine == "native" and not is_python_dispatcher(sim.dispatcher) \
        and out is None
    del run
    progress = bars[0] if bars else None
    if progress is not None:
        with progress:
            result = sim.run()
    elif beside:
        printing = _import_in_background(PRINTING_MODULES)
        try:
            result = sim.run()
        finally:  # also when the run fails: no import left going on at exit
            printing.join()
    else:
        result = sim.run()
    # after the run: under auto a native run may have been made again on Python
    ran = engine_line(result.engine, sim.fell_back or not_native)
    if trace_decisions is not None:
        write_decision_trace(trace_decisions, sim.dispatcher, result)
    if job_series is not None:
        result.power_series = job_series  # the sampled platform power is built from it
    del sim  # the engine's buffers are no longer needed: keep peak memory down
    release_free_memory()
    for text in result_warnings(result):
        warn(text)
    if out is not None:
        summary = write_result(result, out, tau=tau, measure=measure_spec, started_at=t0,
                               csv=csv, by=group_keys)
    else:
        summary = run_summary(result, tau=tau, measure=measure_spec, by=group_keys)
        summary["wall_seconds"] = time.perf_counter() - t0
    con = console()
    title = run_header(f"{Path(trace).name} on {plat.describe()}", cap_spec, plat,
                       ppspec, dmodel, result.throttling_without_slowdown,
                       partitions=jobs.info.header.get("Partitions"))
    con.print(summary_table([(f"{dspec.text} / {pspec.text}", summary)], title=title))
    for note in _load_notes(jobs, summary):
        con.print(f"[dim]{note}[/dim]")
    con.print(f"[dim]{ran}[/dim]")
    if "by_group" in summary:
        for part in group_tables(summary["by_group"], group_keys):
            con.print(part)
    if out is not None:
        extra = ", platform_power.parquet" if job_series is not None else ""
        con.print(f"[dim]wrote {Path(out) / 'jobs.parquet'}{extra} and summary.json[/dim]")
    if swf_out is not None:
        write_schedule_swf(result, swf_out)
        con.print(f"[dim]wrote the simulated schedule to {swf_out}[/dim]")


#: The modules the results are printed with, imported while a native run of a native
#: dispatcher without a progress bar nor ``--out`` goes on
#: (:func:`_import_in_background`).
PRINTING_MODULES = ("rich.console", "rich.table", "rich.text")


def _import_in_background(names: tuple[str, ...]) -> threading.Thread:
    """Import the modules ``names`` in a thread, started now; the caller joins it before
    it imports any of them itself (the main thread and this one then never import the
    same modules at once), then renders a small table to memory (:func:`_render_once`).
    The compiled core runs without the GIL, so the 20-30 ms of rich's import and first
    table overlap a native run on another core instead of following it. Not for a run
    on Python nor one calling a dispatcher written in Python: the thread would hold the
    GIL while a dispatcher call is timed (its decision times are metrics); nor before
    the output files of ``--out``, whose writing is the command's peak of memory. A
    module that fails to import is left to the caller's own import, which then reports
    it."""
    def load() -> None:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # the caller's own import reports it
                return
        try:
            _render_once()
        except Exception:  # a warm-up only: the printing itself reports any error
            return

    thread = threading.Thread(target=load, name="dispatchlab-import", daemon=True)
    thread.start()
    return thread


def _render_once() -> None:
    """Render a small table with a title, a caption and markup to a console writing to
    memory: what rich loads and compiles at its first table (its emoji codes, its
    highlighter's regular expressions), done ahead of the results' table."""
    import io

    from rich.console import Console
    from rich.table import Table

    table = Table(title="warm-up 1,234", caption="caption (s): 0.5")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("[dim]mean wait[/dim]", "1,234")
    Console(file=io.StringIO(), width=80).print(table, "[dim]engine: native[/dim]")


def _decision_engine(engine: str, trace_decisions: Path | None) -> str:
    """The engine of a run with ``--trace-decisions``: the decision times are measured
    by the Python engine only, so ``auto`` means python and ``native`` is refused."""
    if trace_decisions is None or engine not in ("auto", "native"):
        return engine
    if engine == "native":
        raise InputError("the native engine does not time its dispatcher calls: "
                         "--trace-decisions needs --engine python (or auto)",
                         field="--trace-decisions")
    return "python"


def group_tables(section: dict, keys: tuple[str, ...]) -> list:
    """``simulate --by``: one table per group key (its :data:`GROUP_ROWS` groups with the
    most hours, the source of the labels and the hours unit in the title), then the
    fairness lines, from the summary's ``by_group`` section."""
    from rich.table import Table
    from rich.text import Text

    unit = section["hours_unit"]
    out: list = []
    for key in keys:
        part = section[key]
        groups = ordered_groups(part)
        table = Table(title=f"by {key}: {part['source']}; {unit}: "
                            + ("nodes held x run" if unit == "node-hours"
                               else "units x per-unit amount x run"),
                      caption=None if len(groups) <= GROUP_ROWS else
                      f"the {GROUP_ROWS} of {len(groups):,} groups with the most {unit}; "
                      "summary.json (--out) holds every group")
        for col in (key, "jobs", "rejected", "mean wait", "median wait", "max wait",
                    "bsld", unit, "share"):
            table.add_column(col, justify="left" if col == key else "right",
                             no_wrap=col != key)
        for label, g in groups[:GROUP_ROWS]:
            table.add_row(Text(label), f"{g['jobs']:,}", f"{g['rejected']:,}",
                          *("-" if g[k] is None else f"{g[k]:,.0f}"
                            for k in ("mean_wait", "median_wait", "max_wait")),
                          "-" if g["mean_bsld"] is None else f"{g['mean_bsld']:,.2f}",
                          f"{g['hours']:,.1f}",
                          "-" if g["hours_share"] is None else f"{g['hours_share']:.1%}")
        out.append(table)
    out.append(Text(fairness_text(section["fairness"], unit)))
    return out


def fairness_text(f: dict, unit: str) -> str:
    """The fairness lines of ``simulate --by``: the largest per-user mean wait against
    the overall mean, and the accounts' shares of the hours (largest first)."""
    lines = []
    if f["max_wait_user"] is None:
        lines.append(f"fairness: no user has {f['min_user_jobs']} or more jobs that ran: "
                     "no largest per-user mean wait")
    else:
        ratio = f["max_user_wait_ratio"]
        lines.append(f"fairness: largest per-user mean wait {f['max_user_mean_wait']:,.0f} s "
                     f"(user {f['max_wait_user']}, {f['max_wait_user_jobs']:,} jobs; among "
                     f"{f['users_counted']:,} users with >= {f['min_user_jobs']} jobs), "
                     + (f"{ratio:.2f} x the mean wait of all jobs ({f['mean_wait']:,.0f} s)"
                        if ratio is not None else "the mean wait of all jobs is 0 s"))
    shares = f["account_hours_share"]
    if shares:
        top = sorted(shares.items(), key=lambda kv: (-kv[1], kv[0]))
        text = ", ".join(f"{name} {share:.1%}" for name, share in top[:10])
        more = f" (and {len(top) - 10:,} more)" if len(top) > 10 else ""
        lines.append(f"share of {unit} per account: {text}{more}")
    return "\n".join(lines)


def run_header(head: str, cap, platform, power_predictor, duration_model,
               no_slowdown: bool, partitions: str | None = None) -> str:
    """The title of a run's table: ``head`` (trace and platform), then, for a run with a
    power cap, a power predictor or a duration model, one line naming each (the cap in
    watts with its window, and its share of the platform's maximum dynamic power when
    it has one), "throttling without slowdown" when ``no_slowdown``, and how the jobs'
    partitions were simulated (``partitions``: as the log names them, mapped, ignored;
    see :mod:`dispatchlab.workload.requests`) when the request fitting says."""
    parts = []
    if partitions is not None:
        parts.append(f"partitions {partitions}")
    if cap is not None:
        parts.append(cap.describe(platform.dynamic_power_base))
    if power_predictor is not None:
        parts.append(f"power predictor {power_predictor.text}")
    if duration_model is not None:
        parts.append(f"duration model {duration_model.text}")
    if no_slowdown:
        parts.append("throttling without slowdown")
    return head if not parts else head + "\n" + "; ".join(parts)


def write_decision_trace(path: Path, dispatcher, result) -> None:
    """``--trace-decisions``: the per-pass log of a dispatcher that keeps one
    (``requires.pass_log``, its ``pass_log_``: CP solver facts) as Parquet, or, for a
    dispatcher without one, one row per dispatcher call with its decision time (s)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq


    log = dispatcher.pass_log_ if dispatcher.requires.pass_log else None
    if log:
        table = pa.Table.from_pylist(list(log))
    else:
        times = result.decision_times
        table = pa.table({"call": np.arange(len(times), dtype=np.int64),
                          "decision_time": times})
    folder = output_folder(Path(path).parent)
    try:
        from dispatchlab.workload.tables import local_sink

        with local_sink(folder / Path(path).name) as sink:
            pq.write_table(table, sink)
    except OSError as exc:
        raise InputError(f"cannot write the decision trace: {exc}", file=str(path)) from None
    console().print(f"[dim]wrote {len(table):,} pass records to {path}[/dim]")
