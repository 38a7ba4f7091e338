"""The ``dispatchlab`` command line (thin: parsing, then calls into the library).

Every user mistake ends with exactly one ``error: ...`` line on stderr and exit status
2 (no traceback); see :class:`dispatchlab.errors.InputError`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from dispatchlab._memory import release_free_memory
from dispatchlab.errors import InputError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dispatchlab")
def app() -> None:
    """Simulate an HPC workload manager on real traces: dispatchers, predictors, metrics."""


@app.group("trace")
def trace_app() -> None:
    """Inspect workload traces."""


def _pair(text: str | None, option: str, cast=int) -> tuple[Any, Any] | None:
    if text is None:
        return None
    parts = text.split(":")
    if len(parts) != 2:
        raise InputError(f"expected A:B, got {text!r}", field=option)
    try:
        return cast(parts[0]), cast(parts[1])
    except ValueError:
        raise InputError(f"expected two numbers A:B, got {text!r}", field=option) from None


def _fraction(text: str | None) -> tuple[str, float] | None:
    if text is None:
        return None
    parts = text.split(":")
    if len(parts) != 2 or parts[0] not in ("first", "last"):
        raise InputError(f"expected first:F or last:F, got {text!r}", field="--fraction")
    try:
        return parts[0], float(parts[1])
    except ValueError:
        raise InputError(f"expected a number after ':', got {text!r}", field="--fraction") from None


def _load(trace: Path, *, lenient: bool, drop_overrun: bool = False, max_procs: bool = False,
          window: str | None = None, jobs: str | None = None, fraction: str | None = None,
          extra_fields: str = "error"):
    from dispatchlab.workload.load import load_trace

    if extra_fields not in ("error", "ignore"):
        raise InputError(f"must be 'error' or 'ignore', got {extra_fields!r}",
                         field="--extra-fields")
    return load_trace(
        trace,
        lenient=lenient,
        extra_fields=extra_fields,
        drop_overrun=drop_overrun,
        max_procs=True if max_procs else None,
        window=_pair(window, "--window"),
        jobs=_pair(jobs, "--jobs"),
        fraction=_fraction(fraction),
    )


def _platform(jobs, platform: str | None, nodes: int | None, cores_per_node: int | None):
    from dispatchlab.platform import Platform

    if platform is not None and (nodes is not None or cores_per_node is not None):
        raise InputError("give either --platform or --nodes/--cores-per-node, not both",
                         field="--platform")
    if platform is not None:
        if platform == "eurora":
            return Platform.eurora()
        return Platform.from_toml(platform)
    if nodes is not None or cores_per_node is not None:
        if nodes is None or cores_per_node is None:
            raise InputError("--nodes and --cores-per-node go together", field="--nodes")
        return Platform.homogeneous(nodes, cores_per_node)
    return Platform.from_trace_header(
        jobs.info, advice="give --platform or --nodes and --cores-per-node")


def _dispatcher(name: str, order: str | None, reservations: int | None, skip: bool,
                allocator: str):
    from dispatchlab.dispatch import DISPATCHERS, Dispatcher, make_dispatcher
    from dispatchlab.params import resolve

    cls = resolve(DISPATCHERS, "dispatcher", name, Dispatcher)
    takes_allocator = "allocator" in getattr(cls, "_param_names", lambda: [])()
    if not takes_allocator and allocator != "first-fit":
        raise InputError(f"dispatcher {name!r} takes no allocator", field="--allocator")
    params: dict[str, Any] = {"allocator": allocator} if takes_allocator else {}
    if order is not None:
        if name not in ("easy", "conservative"):
            raise InputError(f"--order applies to easy and conservative, not {name!r}",
                             field="--order")
        params["order"] = order
    if reservations is not None:
        if name != "easy":
            raise InputError(f"--reservations applies to easy, not {name!r}",
                             field="--reservations")
        params["reservations"] = reservations
    if skip:
        if name not in ("sjf", "ljf"):
            raise InputError(f"--skip applies to sjf and ljf, not {name!r}", field="--skip")
        params["skip"] = True
    return make_dispatcher(name, **params)


def _progress(enabled: bool):
    """A rich progress bar on stderr for long runs (only when stderr is a terminal)."""
    if not enabled or not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    progress = Progress(TextColumn("simulating"), BarColumn(), TextColumn("{task.completed:,}/"
                        "{task.total:,} jobs submitted"), TimeRemainingColumn(),
                        console=Console(stderr=True), transient=True)
    task = progress.add_task("sim", total=1)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    return progress, update


def _console(stderr: bool = False):
    """A rich console; 140 columns wide when not writing to a terminal (logs, pipes)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 140)


def _summary_table(rows: list[tuple[str, dict]], title: str):
    from rich.table import Table

    table = Table(title=title, caption="times in seconds; slowdown and bounded slowdown "
                  "(bsld, tau = {:g} s) are means; util: core utilization".format(
                      rows[0][1]["tau"]))
    for col in ("run", "jobs", "rejected", "mean wait", "p95 wait", "slowdown", "bsld",
                "util", "makespan", "sim time"):
        table.add_column(col, justify="left" if col == "run" else "right", no_wrap=True)

    def num(v, fmt="{:,.0f}"):
        return "-" if v is None else fmt.format(v)

    for name, s in rows:
        table.add_row(name, f"{s['jobs']:,}", f"{s['rejected']:,}", num(s["mean_wait"]),
                      num(s["p95_wait"]), num(s["mean_slowdown"], "{:,.1f}"),
                      num(s["mean_bsld"], "{:,.1f}"), num(s["utilization"], "{:.3f}"),
                      num(s["makespan"]), num(s["simulate_seconds"], "{:.2f}"))
    return table


TRACE_ARG = click.argument("trace", type=click.Path(path_type=Path))


def _options(*options):
    """Several click options as one decorator (shared by the commands that read traces)."""
    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f
    return decorate


#: how a trace is read
READ_OPTIONS = _options(
    click.option("--lenient", is_flag=True,
                 help="skip malformed trace lines (counted) instead of failing"),
    click.option("--extra-fields", default="error", show_default=True,
                 help="SWF lines with more than 18 fields: error | ignore (keep the first 18)"),
)
#: which part of a trace is kept (each re-bases times to 0)
SELECT_OPTIONS = _options(
    click.option("--window", default=None,
                 help="keep jobs submitted in [T0, T1) (trace seconds), re-based to 0"),
    click.option("--jobs", "jobs_range", default=None,
                 help="keep cleaned jobs I0..I1-1 (0-based), re-based to 0"),
    click.option("--fraction", default=None,
                 help="keep first:F or last:F of the cleaned jobs (0 < F <= 1)"),
)


@app.command()
@TRACE_ARG
@click.option("--dispatcher", default="easy", show_default=True,
              help="fifo | sjf | ljf | easy | conservative")
@click.option("--predictor", default="walltime", show_default=True,
              help="walltime | real | history | tsafrir")
@click.option("--platform", default=None, help="platform TOML file, or 'eurora'")
@click.option("--nodes", type=int, default=None, help="homogeneous platform: node count")
@click.option("--cores-per-node", type=int, default=None, help="homogeneous platform")
@click.option("--allocator", default="first-fit", show_default=True,
              help="first-fit | best-fit (node-level platforms)")
@click.option("--order", default=None, help="backfill scan order (easy, conservative): fifo | sjf")
@click.option("--reservations", type=int, default=None, help="easy: reserved jobs K >= 1")
@click.option("--skip", is_flag=True, help="sjf/ljf: walk past jobs that do not fit")
@click.option("--overrun", default="run", show_default=True, help="run | kill")
@click.option("--tau", type=float, default=10.0, show_default=True,
              help="bounded-slowdown threshold (s)")
@click.option("--measure", default="all", show_default=True,
              help="jobs counted in metrics: all | time:T0:T1 | index:I0:I1")
@READ_OPTIONS
@click.option("--drop-overrun", is_flag=True,
              help="drop jobs whose run time exceeds their requested time")
@click.option("--max-procs", is_flag=True,
              help="drop jobs requesting more processors than the header's MaxProcs")
@SELECT_OPTIONS
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write jobs.parquet and summary.json into this folder")
@click.option("--csv", is_flag=True, help="also write jobs.csv")
def simulate(trace: Path, dispatcher: str, predictor: str, platform: str | None,
             nodes: int | None, cores_per_node: int | None, allocator: str,
             order: str | None, reservations: int | None, skip: bool, overrun: str,
             tau: float, measure: str, lenient: bool, extra_fields: str, drop_overrun: bool,
             max_procs: bool,
             window: str | None, jobs_range: str | None, fraction: str | None,
             out: Path | None, csv: bool) -> None:
    """Simulate TRACE under one dispatcher and predictor; print and write the results."""
    t0 = time.perf_counter()

    from dispatchlab.metrics import Measure, check_tau
    from dispatchlab.predict import make_predictor
    from dispatchlab.sim import Simulation

    check_tau(tau)
    try:
        measure_spec = Measure.parse(measure)
    except (ValueError, InputError) as exc:
        message = exc.message if isinstance(exc, InputError) else str(exc)
        raise InputError(message, field="--measure") from None
    disp = _dispatcher(dispatcher, order, reservations, skip, allocator)
    pred = make_predictor(predictor)
    if overrun not in ("run", "kill"):
        raise InputError(f"must be 'run' or 'kill', got {overrun!r}", field="--overrun")
    jobs = _load(trace, lenient=lenient, drop_overrun=drop_overrun, max_procs=max_procs,
                 window=window, jobs=jobs_range, fraction=fraction, extra_fields=extra_fields)
    release_free_memory()
    plat = _platform(jobs, platform, nodes, cores_per_node)
    progress, update = _progress(len(jobs) > 20_000)
    sim = Simulation(plat, jobs, disp, pred, overrun=overrun, progress=update)
    if progress is not None:
        with progress:
            result = sim.run()
    else:
        result = sim.run()
    del sim  # the engine's buffers are no longer needed: keep peak memory down
    release_free_memory()
    if out is not None:
        summary = result.write(out, tau=tau, measure=measure_spec, started_at=t0, csv=csv)
    else:
        summary = result.summary(tau=tau, measure=measure_spec)
        summary["wall_seconds"] = time.perf_counter() - t0
    console = _console()
    console.print(_summary_table([(f"{dispatcher} / {predictor}", summary)],
                                 title=f"{Path(trace).name} on {plat.describe()}"))
    notes = []
    if jobs.info.dropped:
        notes.append("dropped at load: " + ", ".join(f"{v:,} ({k})"
                                                    for k, v in jobs.info.dropped.items()))
    if jobs.info.malformed_skipped:
        notes.append(f"malformed lines skipped: {jobs.info.malformed_skipped:,}")
    if jobs.info.estimate_fallbacks:
        notes.append(f"requested time -1 replaced for {jobs.info.estimate_fallbacks:,} jobs "
                     f"({jobs.info.estimate_fallback_source})")
    if summary.get("rejected_total"):
        notes.append(f"rejected (cannot fit the platform): {summary['rejected_total']:,}")
    for note in notes:
        console.print(f"[dim]{note}[/dim]")
    if out is not None:
        console.print(f"[dim]wrote {Path(out) / 'jobs.parquet'} and summary.json[/dim]")


@app.command("predict")
@TRACE_ARG
@click.option("--predictors", default="walltime,history,tsafrir", show_default=True,
              help="comma-separated: walltime | real | history | tsafrir")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write predictions.parquet, prediction_errors.png and "
                   "prediction_summary.json into this folder")
@READ_OPTIONS
def predict(trace: Path, predictors: str, out: Path | None, lenient: bool,
            extra_fields: str) -> None:
    """Score duration predictors on TRACE's recorded schedule (no dispatcher)."""
    from rich.table import Table

    from dispatchlab.predict import make_predictor
    from dispatchlab.predict.evaluate import evaluate_predictors

    names = [x.strip() for x in predictors.split(",")]
    if not any(names) or not all(names):
        raise InputError(f"expected comma-separated names, got {predictors!r}",
                         field="--predictors")
    preds = [make_predictor(name) for name in names]
    jobs = _load(trace, lenient=lenient, extra_fields=extra_fields)
    report = evaluate_predictors(jobs, preds)
    table = Table(title=f"{Path(trace).name}: {len(jobs):,} jobs, recorded schedule replayed",
                  caption="errors in minutes; under/over: predicted < / > actual run; "
                          "within 25 %: |error| <= 25 % of the run; classes by actual run")
    for col in ("predictor", "MAE min", "median AE min", "under %", "over %", "within 25 %",
                *(f"MAE {c}" for c in ("short", "medium", "long"))):
        table.add_column(col, justify="left" if col == "predictor" else "right", no_wrap=True)

    def num(v, fmt="{:,.1f}"):
        return "-" if v is None else fmt.format(v)

    for name, m in report.metrics.items():
        a = m["all"]
        table.add_row(name, num(a["mae_min"]), num(a["median_ae_min"]),
                      num(a["under"], "{:.1%}"), num(a["over"], "{:.1%}"),
                      num(a["within_25"], "{:.1%}"),
                      *(num(m[c]["mae_min"]) for c in ("short", "medium", "long")))
    console = _console()
    console.print(table)
    if report.wait_missing:
        console.print("[yellow]note: the trace has no wait times (-1 throughout): "
                      "replayed with wait 0 (start = submit)[/yellow]")
    elif report.missing_waits:
        console.print(f"[dim]wait -1 replaced by 0 for {report.missing_waits:,} jobs[/dim]")
    if report.no_user:
        console.print(f"[yellow]note: {report.no_user:,} jobs have no user id: history, "
                      "tsafrir and ml give them their wall-time[/yellow]")
    for name, counts in report.rule_counts.items():
        console.print(f"[dim]{name} rules: " + ", ".join(f"{k}: {v:,}"
                                                        for k, v in counts.items()) + "[/dim]")
    if jobs.info.dropped:
        console.print("[dim]dropped at load: " + ", ".join(
            f"{v:,} ({k})" for k, v in jobs.info.dropped.items()) + "[/dim]")
    if out is not None:
        report.write(out)
        console.print(f"[dim]wrote {Path(out) / 'predictions.parquet'}, "
                      "prediction_errors.png and prediction_summary.json[/dim]")


@trace_app.command("info")
@TRACE_ARG
@READ_OPTIONS
def trace_info_cmd(trace: Path, lenient: bool, extra_fields: str) -> None:
    """Print a trace's header facts, field population and job statistics."""
    from dispatchlab.workload.load import render_trace_info, trace_info

    jobs = _load(trace, lenient=lenient, extra_fields=extra_fields)
    _console().print(render_trace_info(trace_info(jobs)))


@app.command()
@click.option("--jobs", type=int, default=5000, show_default=True, help="synthetic jobs")
@click.option("--cores", type=int, default=256, show_default=True, help="pooled cores")
@click.option("--seed", type=int, default=1, show_default=True, help="generator seed")
@click.option("--load", type=float, default=0.85, show_default=True, help="offered load")
def demo(jobs: int, cores: int, seed: int, load: float) -> None:
    """Generate a synthetic workload and compare FIFO, SJF, EASY and conservative on it."""
    from dispatchlab.dispatch import EASY, FIFO, SJF, Conservative
    from dispatchlab.platform import Platform
    from dispatchlab.predict import RealPredictor, WalltimePredictor
    from dispatchlab.sim import Simulation
    from dispatchlab.workload.synthetic import generate_synthetic

    console = _console()
    table = generate_synthetic(jobs, cores=cores, seed=seed, load=load)
    console.print(f"synthetic workload: {len(table):,} jobs on a pooled machine of {cores} "
                  f"cores (seed {seed}, offered load {load})")
    plat = Platform.pooled(cores)
    runs = [("fifo", FIFO(), WalltimePredictor()), ("sjf", SJF(), WalltimePredictor()),
            ("easy", EASY(), WalltimePredictor()), ("easy-sjbf", EASY(order="sjf"),
                                                    WalltimePredictor()),
            ("conservative", Conservative(), WalltimePredictor()),
            ("easy (real run times)", EASY(), RealPredictor())]
    rows = []
    for name, disp, pred in runs:
        result = Simulation(plat, table, disp, pred).run()
        rows.append((name, result.summary()))
    console.print(_summary_table(rows, title="dispatchers compared (estimates: requested "
                                           "time unless noted)"))


@app.command()
@click.option("--like", "like", type=click.Path(path_type=Path), default=None,
              help="the real trace the model is fitted to (fitted; for lublin: the trace "
                   "whose MaxProcs sets the machine size)")
@click.option("--jobs", type=int, required=True, help="number of jobs to generate (>= 1)")
@click.option("--seed", type=int, default=0, show_default=True, help="generator seed (>= 0)")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="output SWF file (.gz: compressed)")
@click.option("--model", "model_name", default="fitted", show_default=True,
              help="fitted (to --like) | lublin (Lublin & Feitelson 2003)")
@click.option("--machine-size", type=int, default=None,
              help="lublin: processors of the machine (or take MaxProcs of --like)")
@READ_OPTIONS
def generate(like: Path | None, jobs: int, seed: int, out: Path, model_name: str,
             machine_size: int | None, lenient: bool, extra_fields: str) -> None:
    """Write a synthetic SWF trace: fitted to a real trace (--like) or from the Lublin &
    Feitelson (2003) parametric model (--model lublin)."""
    from dispatchlab.workload.generate import write_generated

    if model_name not in ("fitted", "lublin"):
        raise InputError(f"unknown model {model_name!r} (fitted, lublin)", field="--model")
    if jobs < 1:
        raise InputError(f"must be >= 1, got {jobs}", field="--jobs")
    if seed < 0:
        raise InputError(f"must be >= 0, got {seed}", field="--seed")
    if model_name == "lublin":
        from dispatchlab.workload.lublin import lublin_header_lines, lublin_model

        if (machine_size is None) == (like is None):
            raise InputError("give the machine size: --machine-size P or --like TRACE (its "
                             "MaxProcs), one of the two", field="--machine-size")
        if machine_size is None:
            info = _load(like, lenient=lenient, extra_fields=extra_fields).info
            machine_size = info.max_procs or info.max_nodes
            if not machine_size:
                raise InputError("the trace header has no MaxProcs; give --machine-size",
                                 file=str(like))
        if machine_size < 2:
            raise InputError(f"must be >= 2, got {machine_size}", field="--machine-size")
        lmodel = lublin_model(machine_size)
        write_generated(lmodel.sample(jobs, seed), out,
                        lublin_header_lines(lmodel, seed, jobs))
        _console().print(f"wrote {out} ({jobs:,} jobs, Lublin & Feitelson 2003 model, "
                         f"{machine_size} processors, seed {seed})")
        return
    from dispatchlab.workload.generate import fit_model, header_lines

    if like is None:
        raise InputError("the fitted model needs --like TRACE", field="--like")
    if machine_size is not None:
        raise InputError("--machine-size applies to --model lublin", field="--machine-size")
    model = fit_model(_load(like, lenient=lenient, extra_fields=extra_fields))
    table = model.sample(jobs, seed)
    write_generated(table, out, header_lines(model, str(like), seed, jobs, model_name))
    _console().print(f"wrote {out} ({jobs:,} jobs like {like}, seed {seed})")


@app.group("study")
def study_app() -> None:
    """Experiments over many simulations of one trace."""


@study_app.command("predictions")
@TRACE_ARG
@click.option("--dispatchers", default="fifo,sjf,ljf,easy", show_default=True,
              help="comma-separated dispatcher names")
@click.option("--predictors", default="walltime,history,real,tsafrir", show_default=True,
              help="comma-separated predictor names")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write study.csv, study.json and the three PNG figures here")
@click.option("--tau", type=float, default=10.0, show_default=True,
              help="bounded-slowdown threshold (s)")
@click.option("--platform", default=None, help="platform TOML file, or 'eurora'")
@click.option("--nodes", type=int, default=None, help="homogeneous platform: node count")
@click.option("--cores-per-node", type=int, default=None, help="homogeneous platform")
@READ_OPTIONS
@SELECT_OPTIONS
def study_predictions(trace: Path, dispatchers: str, predictors: str, out: Path | None,
                      tau: float, platform: str | None, nodes: int | None,
                      cores_per_node: int | None, lenient: bool, extra_fields: str,
                      window: str | None, jobs_range: str | None,
                      fraction: str | None) -> None:
    """Simulate TRACE under every dispatcher x predictor (seed 000, section 5.2)."""
    from rich.table import Table

    from dispatchlab.dispatch import make_dispatcher
    from dispatchlab.metrics import check_tau
    from dispatchlab.predict import make_predictor
    from dispatchlab.study import parse_names, predictor_label, run_prediction_study

    check_tau(tau)
    d_names = parse_names(dispatchers, "--dispatchers")
    p_names = parse_names(predictors, "--predictors")
    for name in d_names:  # fail on a bad name before loading the trace
        make_dispatcher(name)
    for name in p_names:
        make_predictor(name)
    jobs = _load(trace, lenient=lenient, window=window, jobs=jobs_range, fraction=fraction,
                 extra_fields=extra_fields)
    plat = _platform(jobs, platform, nodes, cores_per_node)
    study = run_prediction_study(jobs, plat, d_names, p_names, tau=tau)
    table = Table(title=f"{Path(trace).name}: {len(jobs):,} jobs on {plat.describe()}",
                  caption=f"times in seconds; slowdown and bsld (tau = {tau:g} s) are means "
                          "unless noted; W wall-time, D history (data-driven), R real")
    for col in ("dispatcher", "pred", "mean wait", "median wait", "slowdown", "bsld",
                "p95 bsld", "bsld short", "bsld medium", "bsld long", "sim s"):
        table.add_column(col, justify="left" if col in ("dispatcher", "pred") else "right",
                         no_wrap=True)

    def num(v, fmt="{:,.1f}"):
        return "-" if v is None else fmt.format(v)

    for row in study.rows():
        table.add_row(row["dispatcher"], predictor_label(row["predictor"]),
                      num(row["mean_wait"], "{:,.0f}"), num(row["median_wait"], "{:,.0f}"),
                      num(row["mean_slowdown"]), num(row["mean_bsld"]), num(row["p95_bsld"]),
                      num(row["bsld_short"]), num(row["bsld_medium"]), num(row["bsld_long"]),
                      num(row["simulate_seconds"], "{:.2f}"))
    console = _console()
    console.print(table)
    if out is not None:
        paths = study.write(out)
        console.print("[dim]wrote " + ", ".join(str(p) for p in paths) + "[/dim]")


from dispatchlab.cli_campaign import campaign_app, report, results_app  # noqa: E402

app.add_command(campaign_app)
app.add_command(results_app)
app.add_command(report)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning user mistakes into one line on stderr."""
    try:
        rc = app.main(args=argv, prog_name="dispatchlab", standalone_mode=False)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except click.exceptions.NoArgsIsHelpError as exc:
        print(exc.ctx.get_help() if exc.ctx is not None else "dispatchlab --help")
        return 0
    except click.ClickException as exc:
        print(f"error: {exc.format_message()}", file=sys.stderr)
        return 2
    except click.exceptions.Abort:
        print("error: aborted", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return rc if isinstance(rc, int) else 0


if __name__ == "__main__":
    sys.exit(main())
