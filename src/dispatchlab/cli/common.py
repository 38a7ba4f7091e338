"""What the command modules share: option groups, parsing of ranges and components,
trace loading and platform choice, consoles and summary tables.

Every user mistake raises :class:`~dispatchlab.core.errors.InputError`; :func:`dispatchlab.
cli.main` prints it as one ``error: ...`` line and exits with status 2.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from dispatchlab.core.components import (
    component_class,
    parse_assignments,
    parse_component,
    registered_names,
    split_spec,
)
from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.dispatch import ALLOCATORS


# ------------------------------------------------------------------- parsing
def parse_range(text: str | None, option: str, cast: Callable[[str], Any] = int,
                *, open_end: bool = True) -> tuple[Any, Any] | None:
    """``A:B`` -> (A, B); with ``open_end``, ``A:`` -> (A, a huge end): to the end
    (:func:`dispatchlab.run.build.parse_range`)."""
    from dispatchlab.run.build import parse_range as parse

    return parse(text, option, cast, open_end=open_end)


def names_help(kind: str, extra: str = "") -> str:
    """Help text listing the registered names of ``kind`` (never hand-written)."""

    return (" | ".join(registered_names(kind)) + " | module:Class | path/file.py:Class"
            " (NAME:KEY=VALUE sets parameters)" + extra)


def allocator_names() -> str:
    return " | ".join(ALLOCATORS)


# -------------------------------------------------------------- trace, platform
def trace_source(trace: Path, *, lenient: bool, drop_overrun: bool = False,
                 max_procs: bool = False, window: str | None = None,
                 jobs: str | None = None, fraction: str | None = None,
                 extra_fields: str = "error", reader: dict[str, Any] | None = None):
    """The :class:`~dispatchlab.run.config.TraceSource` of the command-line options
    (``reader``: the format and reader options collected by :data:`READ_OPTIONS`)."""
    from dispatchlab.run.config import TraceSource

    options = dict(reader or {})
    fmt = options.pop("format", None)
    return TraceSource(str(trace), format=fmt, reader_options=options, lenient=lenient,
                       extra_fields=extra_fields, drop_overrun=drop_overrun,
                       max_procs=max_procs, window=window, jobs=jobs, fraction=fraction)


def load(trace: Path, *, lenient: bool, drop_overrun: bool = False, max_procs: bool = False,
         window: str | None = None, jobs: str | None = None, fraction: str | None = None,
         extra_fields: str = "error", reader: dict[str, Any] | None = None,
         clean: bool = True):
    """Read, clean and select a trace as the command-line options say (``reader``: the
    format and reader options collected by :data:`READ_OPTIONS`; ``clean=False``: the
    trace as read, for conversion and inference, where nothing may be lost):
    :func:`dispatchlab.run.build.load_jobs` of :func:`trace_source`."""
    from dispatchlab.run.build import load_jobs

    return load_jobs(trace_source(trace, lenient=lenient, drop_overrun=drop_overrun,
                                  max_procs=max_procs, window=window, jobs=jobs,
                                  fraction=fraction, extra_fields=extra_fields,
                                  reader=reader), clean=clean)


def choose_platform(jobs, platform: str | None, nodes: int | None,
                    cores_per_node: int | None):
    """``--platform eurora|FILE``, ``--nodes N --cores-per-node C``, or the trace
    header's machine (pooled cores): :func:`dispatchlab.run.build.choose_platform`."""
    from dispatchlab.run.build import choose_platform as choose
    from dispatchlab.run.config import PlatformChoice

    return choose(jobs, PlatformChoice(platform, nodes, cores_per_node))


def report(kind: str, text: str) -> None:
    """A note or warning of :func:`dispatchlab.run.build.build` on stderr
    (``warning: ...`` as :func:`warn`, ``note: ...``)."""
    print(f"{kind}: {text}", file=sys.stderr)


def fit_jobs(jobs, platform):
    """``jobs`` made runnable on ``platform``, one warning line when an Alea table
    loses its constraints (:func:`dispatchlab.run.build.fit_jobs`)."""
    from dispatchlab.run.build import fit_jobs as fit

    return fit(jobs, platform, report)


def fit_cluster_requests(jobs, platform, partition_map: str | None,
                         ignore_partitions: bool):
    """``(jobs, platform)`` with a cluster log's GPUs, memory and partitions fitted
    (``--partition-map``, ``--ignore-partitions``; its warnings and notes on stderr):
    :func:`dispatchlab.run.build.fit_cluster_requests`, for commands that simulate one
    table many times."""
    from dispatchlab.run.build import fit_cluster_requests as fit
    from dispatchlab.run.config import RunConfig

    config = RunConfig(partition_map=partition_map,
                       ignore_partitions=ignore_partitions).validate()
    return fit(jobs, platform, config, report)


def dispatcher_spec(name: str, params: Sequence[str], *, order: str | None = None,
                    reservations: int | None = None, skip: bool = False,
                    allocator: str | None = None, priority: str | None = None):
    """One dispatcher from ``--dispatcher SPEC``, ``-D KEY=VALUE`` and the shorthand
    options (``--order``, ``--priority``, ``--reservations``, ``--skip``,
    ``--allocator``), which set the parameters of the same names."""

    if "," in name and "=" not in name:
        raise InputError(f"simulate runs one dispatcher, got {name!r}; compare several "
                         "with: dispatchlab compare TRACE --dispatcher A --dispatcher B",
                         field="--dispatcher")
    typed: dict[str, Any] = {}
    for key, value, given in (("order", order, order is not None),
                              ("priority", priority, priority is not None),
                              ("reservations", reservations, reservations is not None),
                              ("skip", True, skip),
                              ("allocator", allocator, allocator is not None)):
        if given:
            typed[key] = value
    cls = component_class("dispatcher", split_spec(name, "--dispatcher")[0])
    accepted = set(cls._param_names()) if hasattr(cls, "_param_names") else set()
    for key in typed:
        if key not in accepted:
            raise InputError(f"--{key} does not apply to dispatcher {name!r} (it has no "
                             f"{key!r} parameter)", field=f"--{key}")
    try:
        spec = parse_component(name, "dispatcher", extra=parse_assignments(params, "-D"),
                               typed=typed)
    except InputError as exc:  # name the shorthand option the bad value came from
        bad = [k for k in typed if exc.message.startswith(k) or f"{k!r}" in exc.message
               or (isinstance(typed[k], str) and repr(typed[k]) in exc.message)]
        if bad:
            raise InputError(exc.message, field=f"--{bad[0]}") from None
        raise
    allocator_name = spec.params.get("allocator")
    if allocator_name is not None and allocator_name not in ALLOCATORS:
        raise InputError(f"unknown allocator {allocator_name!r}"
                         f"{did_you_mean(str(allocator_name), ALLOCATORS)} (choose from "
                         f"{', '.join(ALLOCATORS)})", field="--allocator")
    return spec


def predictor_spec(name: str, params: Sequence[str]):
    """One predictor from ``--predictor SPEC`` and ``-P KEY=VALUE``."""

    if "," in name and "=" not in name:
        raise InputError(f"expected one predictor here, got {name!r}", field="--predictor")
    return parse_component(name, "predictor", extra=parse_assignments(params, "-P"))


# ------------------------------------------------------------------- output
#: Off a terminal (logs, pipes): the console's width, so that no line is wrapped and
#: every table keeps its natural width...
UNWRAPPED_WIDTH = 100_000
#: ...and, without ``COLUMNS``, the width a table must fit there to be printed as a
#: table by the commands that otherwise print one record per row (:func:`fits`).
LOG_WIDTH = 140


def _columns_env() -> int | None:
    """``COLUMNS`` when it is set to a positive whole number (None otherwise)."""
    import os

    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def console(stderr: bool = False):
    """A rich console on stdout (or stderr): on a terminal, the terminal's width or
    ``COLUMNS`` when set; off a terminal (logs, pipes, ``| tee``) nothing is wrapped or
    squeezed: text lines stay whole and a table is as wide as its content (``COLUMNS``
    then only sets the width of :func:`fits`)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else UNWRAPPED_WIDTH)


def _natural_width(con, renderable) -> int:
    """The width ``renderable`` takes when nothing in it is wrapped or truncated."""
    from rich.measure import Measurement

    return Measurement.get(con, con.options.update_width(UNWRAPPED_WIDTH),
                           renderable).maximum


def fits(con, renderable) -> bool:
    """Whether ``renderable`` (a table) at its natural width, nothing wrapped or
    truncated, fits the output's width: the terminal's (or ``COLUMNS``) on a terminal;
    off a terminal ``COLUMNS``, or :data:`LOG_WIDTH` without it."""
    width = con.width if con.width < UNWRAPPED_WIDTH else (_columns_env() or LOG_WIDTH)
    return _natural_width(con, renderable) <= width


def print_wide(con, table) -> None:
    """``table`` at its natural width even when it is wider than ``con`` (on a
    terminal the lines then run past its edge; nothing is truncated)."""
    width = con.width
    con.width = max(width, _natural_width(con, table))
    try:
        con.print(table)
    finally:
        con.width = width


def print_records(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """Rows too wide for a table, on stdout: one block per row, a ``row N`` line then
    one ``column: value`` line per column (names padded to one width, values never
    cut), a blank line after each block. Plain text: no markup, no colour."""
    width = max((len(c) for c in columns), default=0) + 1
    for i, row in enumerate(rows, start=1):
        print(f"row {i:,}")
        for name, value in zip(columns, row, strict=True):
            print(f"  {name + ':':<{width}} {value}")
        print()


def warn(text: str) -> None:
    """One ``warning: ...`` line on stderr (the command goes on)."""
    print(f"warning: {text}", file=sys.stderr)


def progress_bar(enabled: bool):
    """A rich progress bar on stderr for long runs (only when stderr is a terminal)."""
    if not enabled or not sys.stderr.isatty():
        return None, None
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    progress = Progress(TextColumn("simulating"), BarColumn(), TextColumn("{task.completed:,}/"
                        "{task.total:,} jobs submitted"), TimeRemainingColumn(),
                        console=console(stderr=True), transient=True)
    task = progress.add_task("sim", total=1)

    def update(done: int, total: int) -> None:
        progress.update(task, completed=done, total=total)

    return progress, update


def summary_table(rows: list[tuple[str, dict]], title: str):
    """The metrics of :data:`dispatchlab.metrics.keys.SUMMARY_TABLE`, the power metrics
    of :data:`~dispatchlab.metrics.keys.POWER_TABLE` that some run reports (runs with
    job power or a cap) and the simulation time: one row per metric, one column per
    run (so it stays narrow). The title and the caption are lines of their own, wrapped
    at the output's width, not at the narrow table's."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    from dispatchlab.metrics.keys import BY_KEY, POWER_TABLE, SUMMARY_TABLE

    power = [k for k in POWER_TABLE if any(BY_KEY[k].value(s) is not None for _, s in rows)]
    caption = ("slowdown and bounded slowdown (bsld, tau = {:g} s) are means over jobs; "
               "util: core utilization over the whole run; steady util: from the first "
               "time half the cores are busy to the last submission").format(rows[0][1]["tau"])
    if any(k.startswith("cap_") for k in power):
        caption += ("; power / cap: mean power in the cap window as a share of the cap; "
                    "time above cap: share of the window's time above it; max excess: "
                    "largest excess as a share of the cap; under-use: mean unused share")
    table = Table()
    table.add_column("metric", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    for name, _ in rows:
        table.add_column(name, justify="right")
    for key in (*SUMMARY_TABLE, *power):
        m = BY_KEY[key]
        table.add_row(m.label, "" if m.unit in ("1", "count") else m.unit,
                      *(m.format(m.value(s)) for _, s in rows))
    sim = [s.get("simulate_seconds") for _, s in rows]
    table.add_row("sim time", "s", *("-" if v is None else f"{v:.2f}" for v in sim))
    return Group(Text(title, style="table.title"), table,
                 Text(caption, style="table.caption"))


# ------------------------------------------------------------------- options
TRACE_ARG = click.argument("trace", type=click.Path(path_type=Path))


def options(*opts):
    """Several click options as one decorator."""
    def decorate(f):
        for option in reversed(opts):
            f = option(f)
        return f
    return decorate


#: Reader options collected into the ``reader`` argument of the commands.
READER_KEYS = ("format", "submit_from", "timezone", "columns", "unstarted", "running")


def _reader_options(f):
    """Add the reader options and hand them to ``f`` as one ``reader`` dict."""
    import functools

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        kwargs["reader"] = {k: kwargs.pop(k) for k in READER_KEYS}
        return f(*args, **kwargs)

    return options(
        click.option("--format", "format", default=None,
                     help="trace format: swf | alea | sacct | pbs | eurora | parquet | "
                          "csv (default: from the content)"),
        click.option("--submit-from", default=None,
                     help="sacct/pbs: submit time from 'submit' (default) or 'eligible' "
                          "(held or dependent jobs then do not inflate waits)"),
        click.option("--timezone", default=None,
                     help="sacct/pbs/eurora: time zone of local timestamps (default UTC; "
                          "eurora: Europe/Rome)"),
        click.option("--columns", default=None,
                     help="sacct without a header line: its comma-separated column names"),
        click.option("--unstarted", default=None,
                     help="sacct/pbs: jobs cancelled before they started: drop (default, "
                          "counted) | keep"),
        click.option("--running", default=None,
                     help="sacct: jobs still running at export: drop (default, counted) | "
                          "keep"),
    )(wrapper)


#: how a trace is read
READ_OPTIONS = options(
    click.option("--lenient", is_flag=True,
                 help="skip malformed trace lines (counted) instead of failing"),
    click.option("--extra-fields", default="error", show_default=True,
                 help="SWF lines with more than 18 fields: error | ignore (keep the first 18)"),
    _reader_options,
)
#: which part of a trace is kept (each re-bases times to 0)
SELECT_OPTIONS = options(
    click.option("--window", default=None,
                 help="keep jobs submitted in [T0, T1) (trace seconds; T0: = to the end), "
                      "re-based to 0"),
    click.option("--jobs", "jobs_range", default=None,
                 help="keep cleaned jobs I0..I1-1 (0-based; I0: = to the end), re-based to 0"),
    click.option("--fraction", default=None,
                 help="keep first:F or last:F of the cleaned jobs (0 < F <= 1)"),
)
#: the platform
PLATFORM_OPTIONS = options(
    click.option("--platform", default=None,
                 help="a preset ('eurora', with queues; 'marconi100'; 'marconi100-nodes': whole "
                      "nodes as units), a platform TOML file, a Slurm slurm.conf, or a "
                      "PA-HPC-SIM node file; ARCHIVE.tar.gz#MEMBER reads inside a tar"),
    click.option("--nodes", type=int, default=None, help="homogeneous platform: node count"),
    click.option("--cores-per-node", type=int, default=None, help="homogeneous platform"),
)
#: the run's dispatcher and predictor, each with its parameters (``simulate``, ``validate``)
COMPONENT_OPTIONS = options(
    click.option("--dispatcher", default="easy", show_default=True,
                 help=names_help("dispatcher")),
    click.option("--dispatcher-param", "-D", "dispatcher_params", multiple=True,
                 metavar="KEY=VALUE", help="a dispatcher parameter (repeatable)"),
    click.option("--predictor", default="walltime", show_default=True,
                 help=names_help("predictor")),
    click.option("--predictor-param", "-P", "predictor_params", multiple=True,
                 metavar="KEY=VALUE", help="a predictor parameter (repeatable)"),
)
#: shorthands for dispatcher parameters (:func:`dispatcher_spec`)
SHORTHAND_OPTIONS = options(
    click.option("--allocator", default=None,
                 help=f"node placement: {allocator_names()} (default first-fit; the "
                      "dispatcher's allocator parameter)"),
    click.option("--order", default=None,
                 help="queue / backfill scan order: fifo | sjf | urgency | ewt | walltime | "
                      "slowdown | maui | random | l2r, or priority (the dispatcher's order "
                      "parameter)"),
    click.option("--priority", default=None, metavar="SPEC",
                 help="EASY's queue priority, an ordering in the component grammar: fcfs, "
                      "maui:wait=0:sld=1, random:seed=1, l2r:model=PATH (with -D "
                      "scope=queue the head follows it too)"),
    click.option("--reservations", type=int, default=None,
                 help="reserved jobs K >= 1 (the dispatcher's reservations parameter)"),
    click.option("--skip", is_flag=True,
                 help="walk past jobs that do not fit (the dispatcher's skip parameter)"),
)
#: cleaning switches of the trace reader (``simulate``, ``validate``)
CLEAN_OPTIONS = options(
    click.option("--drop-overrun", is_flag=True,
                 help="drop jobs whose run time exceeds their requested time"),
    click.option("--max-procs", is_flag=True,
                 help="drop jobs requesting more processors than the header's MaxProcs"),
)
#: the partitions of a cluster log (sacct, PBS) on a platform that declares them
PARTITION_OPTIONS = options(
    click.option("--partition-map", default=None, metavar="OLD=NEW[,OLD=NEW]",
                 help="rename the log's partition (queue) names to the platform's"),
    click.option("--ignore-partitions", is_flag=True,
                 help="let every job run on every node, whatever its partition"),
)
TAU_OPTION = click.option("--tau", type=float, default=10.0, show_default=True,
                          help="bounded-slowdown threshold (s)")
OVERRUN_OPTION = click.option("--overrun", default="run", show_default=True,
                              help="a job past its requested time: run | kill")


#: ``--engine``: which engine simulates (checked by ``RunConfig.validate``; the values:
#: :data:`dispatchlab.sim.native.ENGINES`)
ENGINE_OPTION = click.option(
    "--engine", default="auto", show_default=True, metavar="auto|native|python",
    help="the simulation engine: auto (the compiled core when it implements every "
         "component of the run, else the Python engine) | native | python; the results "
         "say which ran")


def engine_line(engine: str, not_native: str | None) -> str:
    """The line a command prints about the engine that ran (and, when the Python
    engine ran, why the native one could not)."""
    return f"engine: {engine}" + ("" if engine == "native" or not_native is None
                                  else f" ({not_native})")


def engines_line(runs: Sequence[tuple[str, str]]) -> str:
    """The line a command of several runs prints about the engines that ran: ``runs``
    are ``(label, engine)`` pairs (labels in order, each listed once per engine)."""
    by: dict[str, list[str]] = {}
    for label, engine in runs:
        if label not in by.setdefault(engine, []):
            by[engine].append(label)
    return "engine: " + "; ".join(f"{engine} for {', '.join(labels)}"
                                  for engine, labels in by.items())


def check_overrun(overrun: str) -> str:
    from dispatchlab.sim.engine import check_overrun as check

    return check(overrun, field="--overrun")


# -------------------------------------------------------------------- power
def power_cap(cap: str | None, window: str | None, cap_file: Path | None, platform):
    """The :class:`~dispatchlab.power.cap.PowerCap` of ``--cap``/``--cap-window`` or
    ``--cap-file`` (None without either; :func:`dispatchlab.run.build.power_cap`)."""
    from dispatchlab.run.build import power_cap as make

    return make(cap, window, cap_file, platform)


#: the power cap options
CAP_OPTIONS = options(
    click.option("--cap", default=None, metavar="CAP",
                 help="power cap on the running jobs' power: a fraction of the platform's "
                      "max_dynamic_power (0.5) or watts (400kW)"),
    click.option("--cap-window", default=None, metavar="T0:T1",
                 help="the cap applies on [T0, T1) (trace seconds, as --window; T1 may be "
                      "left open; default: the whole run)"),
    click.option("--cap-file", type=click.Path(path_type=Path), default=None,
                 help="a cap schedule: 'time;watts' lines (PA-HPC-SIM variable_power_caps)"),
    click.option("--power", "power_file", default=None, metavar="FILE",
                 help="job power (W): a Parquet/CSV file (job_id, power_mean, power_max, "
                      "power_std, e.g. from 'dispatchlab power synth') or the Eurora "
                      "archive's power_predictions (ARCHIVE#MEMBER)"),
    click.option("--power-predictor", default=None, metavar="SPEC",
                 help="job power predictor for power-aware dispatchers: naive | real | "
                      "history | per-user | ml (the component grammar, e.g. history:alpha=1)"),
    click.option("--power-predictor-param", "-Q", "power_predictor_params", multiple=True,
                 metavar="KEY=VALUE", help="a power predictor parameter (repeatable)"),
)


def power_predictor_spec(name: str | None, params: Sequence[str]):
    """The power predictor of ``--power-predictor SPEC`` and ``-Q KEY=VALUE`` (None
    without the option)."""

    if name is None:
        if params:
            raise InputError("-Q needs --power-predictor", field="-Q")
        return None
    return parse_component(name, "power-predictor", option="--power-predictor",
                           extra=parse_assignments(params, "-Q"))


def attach_job_power(jobs, power_file: str | None, platform):
    """``--power FILE``: the jobs with their power columns (a note on stderr says what
    matched; :func:`dispatchlab.run.build.attach_job_power`)."""
    from dispatchlab.run.build import attach_job_power as attach

    return attach(jobs, power_file, platform, report)


#: ``--duration-model``: required with a dispatcher that slows running jobs
#: (:func:`dispatchlab.sim.engine.check_combination`)
DURATION_MODEL_OPTION = click.option(
    "--duration-model", default=None, metavar="SPEC",
    help="how a job's power level stretches its remaining run time: none | factor:f=F "
         "(D' = max(1, F/M) D, F in [0, 1]) | mixed:profile=dynshare|dvfs (a per-job F "
         "by application type) | cpi (Borghesi et al. 2018 eq. 4); required for "
         "dispatchers that slow running jobs ('none' then runs them without slowdown "
         "and says so)")

#: the throttling options of power-capping runs (Borghesi et al. 2018)
THROTTLE_OPTIONS = options(
    DURATION_MODEL_OPTION,
    click.option("--hot-start", type=float, default=None, metavar="SHARE",
                 help="start with this share (0-1) of the nodes busy with short dummy jobs "
                      "(Borghesi et al. 2018's hot start; they are left out of the job metrics)"),
)


def duration_model_spec(text: str | None):
    """The duration model of ``--duration-model SPEC`` (None without the option)."""
    if text is None:
        return None

    return parse_component(text, "duration-model", option="--duration-model")
