"""Load a trace from any supported file, and summarize it (``dispatchlab trace info``).

:func:`load_trace` reads every supported format (:data:`FORMATS`): the Standard
Workload Format (:func:`~dispatchlab.workload.swf.read_swf`), Alea's extended SWF with
its machine file (:mod:`dispatchlab.workload.alea`), Slurm ``sacct`` exports
(:mod:`dispatchlab.workload.sacct`), PBS / Torque accounting logs (a file or a folder of
daily files, :mod:`dispatchlab.workload.pbs`), Eurora job instances of the PA-HPC-SIM test
data (a ``.log_crypt`` file or ``ARCHIVE.tar.gz#MEMBER``,
:mod:`dispatchlab.workload.eurora`), and job tables as Parquet or CSV
(:mod:`dispatchlab.workload.tables`). The reader is chosen by ``format`` when given,
else by content (:func:`detect_format`: the first lines of the file, gzip or not), and
only when the content says nothing by the file name. It then applies the default
cleaning and the optional filters of :mod:`dispatchlab.workload.clean`.

The result is ordered by submit time (stable: ties keep the file order); times are
seconds in the trace's own origin unless a window, job range or fraction re-based
them to t=0 (``info.time_offset`` then holds what was subtracted).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from dispatchlab.core.components import load_object
from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean, missing_file_hint
from dispatchlab.metrics import COMPLETED, primary_resource, summarize
from dispatchlab.workload.clean import (
    Fraction,
    JobRange,
    MaxProcs,
    Window,
    check_filters,
    select,
)
from dispatchlab.workload.clean import clean as clean_table
from dispatchlab.workload.companions import find_machines
from dispatchlab.workload.jobs import SWF_FIELDS, JobTable
from dispatchlab.workload.swf import HEADER_INT_KEYS, ExtraFields, read_swf

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table

    from dispatchlab.platform import Platform

__all__ = [
    "FORMATS",
    "SUFFIXES",
    "Capacity",
    "detect_format",
    "load_trace",
    "offered_load",
    "recorded_metrics",
    "render_trace_info",
    "trace_capacity",
    "trace_format",
    "trace_info",
    "work",
]

#: File-name endings understood by :func:`load_trace`, and their format.
SUFFIXES: dict[str, str] = {
    ".swf": "swf",
    ".swf.gz": "swf",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".csv.gz": "csv",
    ".log_crypt": "eurora",
}


#: Every format :func:`load_trace` reads, and the reader options each one takes (beyond
#: ``lenient``).
FORMATS: dict[str, tuple[str, ...]] = {
    "swf": ("extra_fields",),
    "alea": ("machines",),
    "sacct": ("columns", "submit_from", "timezone", "unstarted", "running"),
    "pbs": ("submit_from", "timezone", "unstarted"),
    "eurora": ("timezone",),
    "parquet": (),
    "csv": (),
}
#: The reader of each format but SWF, as a lazy ``"module:function"`` entry: its module
#: is imported when that format is read or detected, so an SWF run imports no other
#: reader (together some 60 ms), and only sacct, Parquet and CSV load pyarrow.
READERS: dict[str, str] = {
    "alea": "dispatchlab.workload.alea:read_alea",
    "sacct": "dispatchlab.workload.sacct:read_sacct",
    "pbs": "dispatchlab.workload.pbs:read_pbs",
    "eurora": "dispatchlab.workload.eurora:read_eurora",
    "parquet": "dispatchlab.workload.tables:read_parquet",
    "csv": "dispatchlab.workload.tables:read_csv",
}
#: How many leading non-empty lines :func:`detect_format` looks at.
SNIFF_LINES = 20


def _first_lines(path: Path, limit: int = SNIFF_LINES) -> list[str]:
    """The first ``limit`` non-empty lines of a text file (gzip or not) that are not SWF
    comments (``;``: PWA headers run to dozens of lines); [] for a file that cannot be
    read as text."""
    import gzip

    lines: list[str] = []
    try:
        with open(path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        opener = gzip.open if gz else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                if raw.strip() and not raw.lstrip().startswith(";"):
                    lines.append(raw.rstrip("\n"))
                    if len(lines) >= limit:
                        break
    except (OSError, EOFError):
        return []
    return lines


def _swf_line(line: str) -> bool:
    """18 whitespace-separated numbers (an SWF job line)."""
    fields = line.split()
    return len(fields) == 18 and all(f.lstrip("-").replace(".", "", 1).isdigit()
                                     for f in fields)


def _sniff(path: Path, lines: list[str]) -> str | None:
    """The format the content shows, or None. Plain SWF lines are recognised without
    importing the other readers (they cost start-up time on every SWF run)."""
    data = [x for x in lines if not x.lstrip().startswith(";")]
    if data and all(_swf_line(x) for x in data[:5]):
        # 18-field lines with a machine file beside them: Alea's reader takes them
        return "alea" if find_machines(path) is not None else "swf"
    checks = (("pbs", "looks_like_pbs"), ("sacct", "looks_like_sacct"),
              ("eurora", "looks_like_eurora"))
    for fmt, fn in checks:
        if load_object(f"dispatchlab.workload.{fmt}:{fn}")(lines):
            return fmt
    if load_object("dispatchlab.workload.alea:looks_like_alea")(path, lines):
        return "alea"
    if data and all(x.split()[0].lstrip("-").isdigit() for x in data[:5]):
        return "swf"  # SWF-like but malformed: the SWF reader names the bad line
    return None


def detect_format(path: str | Path) -> str:
    """The format of a trace (one of :data:`FORMATS`) from its content: a Parquet file by
    its magic bytes; a folder of PBS daily logs; ``ARCHIVE#MEMBER`` (an existing archive
    file, then ``#``) as a Eurora job instance in a tar archive; PBS, sacct, Eurora, Alea or
    SWF lines by their shape (see each reader's ``looks_like_*``); then, when the content
    says nothing (an empty file, say), by the file name (:data:`SUFFIXES`).
    :class:`InputError` when neither tells, and for a tar archive given without a member
    (the error lists a few members and the syntax)."""
    p = Path(path)
    if (not p.exists() and "#" in str(p)
            and load_object("dispatchlab.workload.eurora:split_archive_path")(p) is not None):
        return "eurora"
    if not p.exists():

        raise InputError("no such file" + missing_file_hint(p), file=str(p))
    if p.is_dir():
        files = sorted(q for q in p.iterdir() if q.is_file() and not q.name.startswith("."))
        if files and _sniff(files[0], _first_lines(files[0])) == "pbs":
            return "pbs"
        raise InputError("is a directory, and not one of PBS accounting logs (a folder is "
                         "read as a PBS log split in daily files)", file=str(p))
    try:
        with open(p, "rb") as fh:
            if fh.read(4) == b"PAR1":
                return "parquet"
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", file=str(p)) from exc
    if p.name.lower().endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz",
                                ".txz")):
        raise load_object("dispatchlab.workload.eurora:archive_needs_member")(p)
    if not p.name.lower().endswith((".csv", ".csv.gz")):
        found = _sniff(p, _first_lines(p))
        if found is not None:
            return found
    return trace_format(p)


def trace_format(path: str | Path) -> str:
    """``"swf"``, ``"parquet"`` or ``"csv"`` from the file name (InputError otherwise)."""
    name = Path(path).name.lower()
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return SUFFIXES[suffix]
    raise InputError(
        "unknown trace format: the content is none of " + ", ".join(FORMATS) + " and the "
        "name does not end with " + ", ".join(SUFFIXES) + " (give --format)",
        file=str(path),
    )


def load_trace(
    path: str | Path,
    *,
    lenient: bool = False,
    clean: bool = True,
    extra_fields: ExtraFields = "error",
    drop_overrun: bool = False,
    max_procs: MaxProcs = None,
    window: Window | None = None,
    jobs: JobRange | None = None,
    fraction: Fraction | None = None,
    format: str | None = None,
    reader_options: Mapping[str, Any] | None = None,
) -> JobTable:
    """Read a trace file and prepare it for simulation.

    * ``format``: one of :data:`FORMATS` (default: :func:`detect_format`);
      ``reader_options``: options of that format's reader (:data:`FORMATS` lists them,
      e.g. ``{"submit_from": "eligible", "timezone": "Europe/Rome"}`` for sacct); an
      option another format takes is an :class:`InputError` naming it.
    * ``lenient``: skip malformed SWF lines (counted in ``info.malformed_skipped``)
      instead of raising :class:`InputError`.
    * ``clean``: apply the default cleaning (drop jobs with ``units <= 0``,
      ``run < 0`` or ``submit < 0``; counts in ``info.dropped``).
    * ``extra_fields="ignore"``: accept SWF lines with more than 18 fields.
    * ``drop_overrun``: drop jobs with ``run > requested_time``.
    * ``max_procs``: drop jobs with more units than the header's MaxProcs (``True``)
      or than the given number.
    * ``window=(t0, t1)``: keep jobs submitted in ``[t0, t1)``; ``jobs=(i0, i1)``:
      keep rows ``i0..i1-1`` of the cleaned table; ``fraction=("first"|"last", f)``:
      keep the first/last fraction ``f`` of the cleaned jobs. At most one of the
      three; each re-bases the submit times so that the first kept job is at t=0.

    Raises :class:`InputError` for a missing, unreadable or malformed file, a bad
    option value (naming the option), or when no job is left.
    """
    filters = check_filters(
        drop_overrun=drop_overrun, max_procs=max_procs, window=window, jobs=jobs, fraction=fraction
    )
    if extra_fields not in ("error", "ignore"):
        raise InputError(f"must be 'error' or 'ignore', not {extra_fields!r}", field="extra_fields")
    path = Path(path)
    kind = detect_format(path) if format is None else _check_format(format)
    table = _read(path, kind, lenient, extra_fields, dict(reader_options or {}))
    options: dict[str, Any] = {
        "drop_overrun": filters.drop_overrun,
        "max_procs": filters.max_procs,
        "window": filters.window,
        "jobs": filters.jobs,
        "fraction": filters.fraction,
    }
    if clean:
        table = clean_table(table, copy=False, **options)
    else:
        table = select(table, copy=False, **options)
    if len(table) == 0:
        raise InputError(
            f"no jobs left after cleaning (dropped: {table.info.dropped})", file=str(path)
        )
    return table.compact()


def _check_format(name: str) -> str:
    if name not in FORMATS:

        raise InputError(f"unknown format {name!r}{did_you_mean(name, FORMATS)} (choose from "
                         f"{', '.join(FORMATS)})", field="--format")
    return name


def _read(path: Path, kind: str, lenient: bool, extra_fields: ExtraFields,
          options: dict[str, Any]) -> JobTable:
    """Call the reader of ``kind`` with the options it takes."""
    allowed = FORMATS[kind]
    for key, value in options.items():
        if key not in allowed and value is not None:
            raise InputError(f"does not apply to {kind} traces (it applies to "
                             f"{', '.join(f for f, opts in FORMATS.items() if key in opts)})",
                             field="--" + key.replace("_", "-"))
    options = {k: v for k, v in options.items() if v is not None}
    if kind == "swf":
        return read_swf(path, lenient=lenient, extra_fields=extra_fields)
    reader = load_object(READERS[kind])
    if kind in ("parquet", "csv"):
        return reader(path)
    return reader(path, lenient=lenient, **options)


# --------------------------------------------------------------------------------------
# trace info
# --------------------------------------------------------------------------------------

#: Quantiles reported by :func:`trace_info` (label, q).
QUANTILES: tuple[tuple[str, float], ...] = (
    ("min", 0.0),
    ("p10", 0.1),
    ("p25", 0.25),
    ("median", 0.5),
    ("p75", 0.75),
    ("p90", 0.9),
    ("p99", 0.99),
    ("max", 1.0),
)
#: Raw header keys shown by :func:`trace_info` (besides the integer facts).
TEXT_KEYS: tuple[str, ...] = (
    "Version",
    "Computer",
    "Installation",
    "TimeZoneString",
    "TimeZone",
    "StartTime",
    "EndTime",
    "Preemption",
    "ClippedRuns",
)


def _stats(values: np.ndarray) -> dict[str, float | int | None]:
    out: dict[str, float | int | None] = {}
    if values.size == 0:
        out.update({label: None for label, _ in QUANTILES})
        out["mean"] = None
        return out
    qs = np.quantile(values, [q for _, q in QUANTILES], method="inverted_cdf")
    for (label, _), v in zip(QUANTILES, qs, strict=True):
        out[label] = int(v)
    out["mean"] = float(values.mean())
    return out


class Capacity(NamedTuple):
    """The machine size that loads and utilizations are relative to.

    ``amount`` is the total of ``resource`` (``"core"`` for SWF traces, where a
    processor is a core), or None when nothing gives it; ``source`` says where it came
    from: ``"platform"``, ``"header MaxProcs"``, ``"header MaxNodes"`` or None.
    """

    resource: str
    amount: int | None
    source: str | None


def trace_capacity(table: JobTable, platform: Platform | None = None) -> Capacity:
    """The capacity of ``platform`` if given, else of the trace's own machine.

    With a platform: its total of the primary resource (``"core"`` when it has cores,
    else its first resource). Without: the header's MaxProcs, or MaxNodes when MaxProcs
    is absent (as :func:`~dispatchlab.platform.files.trace_platform` does), counted in
    cores; a header with neither gives ``amount = None``.
    """
    if platform is not None:
        total = platform.total_capacity()
        resource = primary_resource(total)
        return Capacity(resource, int(total[resource]), "platform")
    info = table.info
    if info.max_procs:
        return Capacity("core", int(info.max_procs), "header MaxProcs")
    if info.max_nodes:
        return Capacity("core", int(info.max_nodes), "header MaxNodes")
    return Capacity("core", None, None)


def _per_unit(table: JobTable, resource: str) -> np.ndarray:
    """Per-unit amount of ``resource`` of each job; 1 when the table does not name it
    (an SWF job's unit is one processor)."""
    per_unit = table.resources.get(resource)
    return np.ones(len(table), dtype=np.int64) if per_unit is None else per_unit


def work(table: JobTable, resource: str = "core") -> float:
    """Total work in resource-seconds: the sum of ``units x per-unit resource x run``
    over the jobs with ``run >= 0``.

    For an SWF trace this is processor-seconds (``units x run``). float64, because the
    product passes 2**63 on large machines and long traces.
    """
    keep = table["run"] >= 0
    amount = table["units"][keep].astype(np.float64) * _per_unit(table, resource)[keep]
    return float(np.dot(amount, table["run"][keep].astype(np.float64)))


def offered_load(table: JobTable, capacity: int | None, resource: str = "core") -> float | None:
    """``work / (capacity x span)``: the share of the machine the submitted jobs ask for.

    ``work`` is :func:`work` (resource-seconds, jobs with ``run >= 0``), ``capacity``
    the machine's total of ``resource`` and ``span = last submit - first submit``
    (seconds, in the trace's own time origin, over all rows). The submission span, not
    the last end, is the denominator: it is the time over which the work *arrives*, so
    a load above 1 means the machine cannot keep up and the queue grows, whatever the
    dispatcher. None when ``capacity`` is None or 0 or the span is 0 (fewer than two
    distinct submit times).
    """
    submit = table["submit"]
    if not capacity or len(submit) == 0:
        return None
    span = int(submit.max()) - int(submit.min())
    if span <= 0:
        return None
    return work(table, resource) / (float(capacity) * span)


def recorded_metrics(
    table: JobTable, capacity: Capacity, *, tau: float = 10.0
) -> dict[str, Any] | None:
    """Metrics of the schedule recorded in the trace, or None when it records no wait.

    Counted jobs: ``wait >= 0`` and ``run >= 0``; each started at ``submit + wait``
    and ended at ``submit + wait + run``. Computed by
    :func:`dispatchlab.metrics.summarize` (same definitions as a simulation's summary):
    ``jobs``, ``mean_wait``, ``median_wait`` (linear interpolation), ``max_wait`` (s),
    ``mean_slowdown``, ``mean_bsld`` (bounded slowdown, ``tau`` s), ``utilization``
    (their work / (capacity x (last end - first submit)), None without a capacity),
    ``missing_waits`` (jobs with no recorded wait, ``wait < 0``, i.e. -1), ``tau``, and
    ``capacity`` / ``capacity_source`` (the ``capacity`` argument).
    None when no job has both ``wait >= 0`` and ``run >= 0``.

    ``capacity`` should be the machine the trace was recorded on
    (``trace_capacity(table)``, the header's): the recorded schedule ran there, so its
    utilization relative to another platform means nothing.
    """
    wait, run = table["wait"], table["run"]
    rows = (wait >= 0) & (run >= 0)
    if not rows.any():
        return None
    submit = table["submit"][rows]
    start = submit + wait[rows]
    resource, amount = capacity.resource, capacity.amount or 0
    summary = summarize(
        submit,
        start,
        start + run[rows],
        np.full(len(submit), COMPLETED, dtype=np.int8),
        table["units"][rows],
        {resource: _per_unit(table, resource)[rows]},
        {resource: amount},
        tau=tau,
    )
    return {
        "jobs": summary["jobs"],
        "mean_wait": summary["mean_wait"],
        "median_wait": summary["median_wait"],
        "max_wait": summary["max_wait"],
        "mean_slowdown": summary["mean_slowdown"],
        "mean_bsld": summary["mean_bsld"],
        "utilization": summary["utilization"] if amount else None,
        "missing_waits": int(np.count_nonzero(wait < 0)),
        "tau": float(tau),
        "capacity": capacity.amount,
        "capacity_source": capacity.source,
    }


def trace_info(table: JobTable, platform: Platform | None = None) -> dict[str, Any]:
    """Facts about a loaded trace, as a JSON-ready dict.

    * ``header``: the integer header facts (MaxJobs, MaxRecords, MaxProcs, MaxNodes,
      MaxRuntime, UnixStartTime; None when absent) and a few text ones;
    * ``loading``: lines read, malformed lines skipped, dropped jobs per reason,
      estimate fallbacks, time offset, rounded values;
    * ``population``: for each SWF field, the share (0..1) of rows whose value is
      not -1;
    * ``jobs``: count, first submit, last end (max of submit + wait + run, with
      missing wait/run taken as 0), span (s and days), number of distinct users,
      share of jobs with ``run > requested_time``, and quantiles (plus mean) of the
      run time (rows with run >= 0), requested time (>= 0) and units (> 0); ``work``
      (resource-seconds, :func:`work`) and ``submit_span_s`` (last - first submit);
    * ``capacity``, ``capacity_resource``, ``capacity_source``: the machine size the
      load is relative to (:func:`trace_capacity`: ``platform`` when given, else the
      header's MaxProcs or MaxNodes; None when unknown);
    * ``offered_load``: work / (capacity x submit span) (:func:`offered_load`; None
      without a capacity);
    * ``recorded``: the recorded schedule's metrics (:func:`recorded_metrics`, tau =
      10 s), None when the trace records no wait. Its utilization is always relative
      to the header's machine (MaxProcs, else MaxNodes), where the schedule was
      recorded, even when ``platform`` is given.
    """
    info = table.info
    cols = table.columns
    n = len(table)
    lower = {k.lower(): v for k, v in info.header.items()}
    header: dict[str, Any] = {key: getattr(info, attr) for attr, key in HEADER_INT_KEYS.items()}
    for key in TEXT_KEYS:
        header[key] = lower.get(key.lower())
    population = {
        name: (float(np.count_nonzero(cols[name] != -1)) / n if n else 0.0) for name in SWF_FIELDS
    }
    submit, run, wait = cols["submit"], cols["run"], cols["wait"]
    req = cols["requested_time"]
    units = cols["units"]
    if n:
        end = submit + np.maximum(wait, 0) + np.maximum(run, 0)
        first, last = int(submit.min()), int(end.max())
    else:
        first = last = 0
    users = cols["user"]
    jobs = {
        "count": n,
        "first_submit": first,
        "last_end": last,
        "span_s": last - first,
        "span_days": (last - first) / 86400.0,
        "users": int(np.unique(users[users != -1]).size),
        "overrun_share": float(np.count_nonzero(run > req)) / n if n else 0.0,
        "run": _stats(run[run >= 0]),
        "requested_time": _stats(req[req >= 0]),
        "units": _stats(units[units > 0]),
    }
    capacity = trace_capacity(table, platform)
    jobs["work"] = work(table, capacity.resource)
    jobs["submit_span_s"] = int(submit.max()) - int(submit.min()) if n else 0
    loading = {
        "lines_read": info.lines_read,
        "malformed_skipped": info.malformed_skipped,
        "dropped": dict(info.dropped),
        "estimate_fallbacks": info.estimate_fallbacks,
        "estimate_fallback_source": info.estimate_fallback_source,
        "estimate_fallback_value": info.estimate_fallback_value,
        "time_offset": info.time_offset,
        "rounded": dict(info.rounded),
        "format": info.format,
        "skipped": dict(info.skipped),
        "names": {col: len(names) for col, names in info.codes.items()},
        "companions": dict(info.companions),
    }
    return {
        "source": info.source,
        "header": header,
        "loading": loading,
        "population": population,
        "jobs": jobs,
        "capacity": capacity.amount,
        "capacity_resource": capacity.resource,
        "capacity_source": capacity.source,
        "offered_load": offered_load(table, capacity.amount, capacity.resource),
        "recorded": recorded_metrics(table, trace_capacity(table)),
    }


#: header facts shown as written (epoch times), not as quantities with separators
_PLAIN_HEADER_KEYS = frozenset({"UnixStartTime"})


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.1f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {_fmt(x)}" for k, x in v.items()) or "-"
    return str(v)


def render_trace_info(info: dict[str, Any]) -> RenderableType:
    """A rich renderable (tables) for the dict returned by :func:`trace_info`."""
    from rich.console import Group
    from rich.table import Table

    facts = Table(title=f"Trace {info['source']}", show_header=False, title_justify="left")
    facts.add_column("fact", style="bold")
    facts.add_column("value")
    for key, value in info["header"].items():
        if value is not None:
            # an epoch time is an identifier of an instant: no thousands separators
            facts.add_row(key, str(value) if key in _PLAIN_HEADER_KEYS else _fmt(value))
    jobs = info["jobs"]
    loading = info["loading"]
    facts.add_row("format", str(loading.get("format", "swf")))
    for role, path in loading.get("companions", {}).items():
        facts.add_row(f"{role} file", str(path))
    facts.add_row("jobs", _fmt(jobs["count"]))
    facts.add_row("lines read", _fmt(loading["lines_read"]))
    if loading.get("skipped"):
        facts.add_row("skipped by rule", _fmt(loading["skipped"]))
    if loading.get("names"):
        facts.add_row("named", ", ".join(f"{n:,} {col} names"
                                         for col, n in loading["names"].items()))
    facts.add_row("malformed lines skipped", _fmt(loading["malformed_skipped"]))
    facts.add_row("dropped", _fmt(loading["dropped"]))
    if loading["estimate_fallbacks"]:
        facts.add_row(
            "requested time fallback",
            f"{loading['estimate_fallbacks']:,} jobs get {_fmt(loading['estimate_fallback_value'])}"
            f" s ({loading['estimate_fallback_source']})",
        )
    if loading["time_offset"]:
        facts.add_row("time offset", f"{_fmt(loading['time_offset'])} s")
    if loading["rounded"]:
        facts.add_row("rounded decimals", _fmt(loading["rounded"]))
    facts.add_row(
        "span",
        f"{_fmt(jobs['first_submit'])} .. {_fmt(jobs['last_end'])} s "
        f"({jobs['span_days']:.1f} days)",
    )
    facts.add_row("users", _fmt(jobs["users"]))
    facts.add_row("run > requested", f"{100 * jobs['overrun_share']:.1f} %")
    _add_load_rows(facts, info)

    stats = Table(title="Job statistics", title_justify="left")
    stats.add_column("")
    for name in ("run", "requested_time", "units"):
        stats.add_column(name.replace("_", " "), justify="right")
    labels = [label for label, _ in QUANTILES] + ["mean"]
    for label in labels:
        stats.add_row(
            label, *(_fmt(jobs[name][label]) for name in ("run", "requested_time", "units"))
        )

    pop = Table(title="Field population (share of rows != -1)", title_justify="left")
    pop.add_column("#", justify="right")
    pop.add_column("field")
    pop.add_column("share", justify="right")
    for i, (name, share) in enumerate(info["population"].items(), start=1):
        pop.add_row(str(i), name, f"{100 * share:.1f} %")
    recorded = _recorded_table(info)
    parts = (facts, stats) if recorded is None else (facts, recorded, stats)
    return Group(*parts, pop)


def _add_load_rows(facts: Table, info: dict[str, Any]) -> None:
    """Rows ``capacity`` and ``offered load`` of the facts table."""
    resource = info.get("capacity_resource", "core")
    capacity = info.get("capacity")
    if capacity is None:
        facts.add_row("capacity", "unknown (no platform, no MaxProcs/MaxNodes in the header)")
        facts.add_row("offered load", "-")
        return
    facts.add_row("capacity", f"{capacity:,} {resource}s ({info['capacity_source']})")
    load = info.get("offered_load")
    facts.add_row(
        "offered load",
        "-" if load is None else f"{load:.3f} (work / (capacity x submit span))",
    )


def _recorded_table(info: dict[str, Any]) -> Table | None:
    """The recorded schedule's metrics as a two-column table (None: no recorded waits)."""
    from rich.table import Table

    rec = info.get("recorded")
    if rec is None:
        return None
    table = Table(title="Recorded schedule", show_header=False, title_justify="left")
    table.add_column("metric", style="bold")
    table.add_column("value", justify="right")
    util = rec["utilization"]
    rows = (
        ("jobs (wait >= 0, run >= 0)", _fmt(rec["jobs"])),
        ("jobs without a wait (-1)", _fmt(rec["missing_waits"])),
        ("mean wait (s)", _fmt(rec["mean_wait"])),
        ("median wait (s)", _fmt(rec["median_wait"])),
        ("max wait (s)", _fmt(rec["max_wait"])),
        ("mean slowdown", _fmt(rec["mean_slowdown"])),
        (f"mean bsld (tau = {rec['tau']:g} s)", _fmt(rec["mean_bsld"])),
        ("utilization", "-" if util is None else f"{util:.3f} ({rec['capacity_source']})"),
    )
    for label, value in rows:
        table.add_row(label, value)
    return table
