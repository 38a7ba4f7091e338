"""A static HTML report of a campaign results database (``dispatchlab report``).

:func:`write_report` reads a results database (:mod:`dispatchlab.experiment.campaign.store`,
opened read-only after its version check) and writes one self-contained page,
``index.html``: figures are embedded PNG data URIs, the CSS is inline, nothing is
fetched from the network, so the page opens from disk anywhere.

What the page holds, for the selected runs (all, or those matching ``runs_filter``):

- **Which runs.** The runs matching ``runs_filter`` whose code is the current one
  (:func:`dispatchlab.experiment.campaign.store.select_runs`): runs made by other code (dispatchlab,
  its result-affecting dependencies or the run's own classes changed since) are left out
  and listed, unless ``include_outdated``; so are *unfinished* runs (stopped at their
  wall-clock budget, ``finished = 0``: their metrics cover only the jobs that happened
  to end), listed with how many of their jobs ended, unless ``include_unfinished``
  (then they are used, and marked in the summary and the runs table).
- **Statistics first.** At the top, per (trace, platform), one row per configuration:
  the mean over runs of each run's metric with a 95 % interval over runs (Student's t
  below 10 runs, percentile bootstrap from 10:
  :func:`dispatchlab.experiment.statistics.interval_method`;
  :func:`dispatchlab.experiment.statistics.run_statistics`), and the paired difference to the
  ``baseline`` dispatcher with the same predictor on the same workloads. The metrics
  are :data:`SUMMARY_METRICS`, the last one the mean wall time of one dispatcher call
  (seconds, machine-dependent).
- **Groups.** Done runs are grouped by campaign, trace, platform and full canonical
  configuration (:func:`dispatchlab.experiment.campaign.groups.group_runs`): only seeds,
  repetitions and slices of one configuration are pooled, never two campaigns or two
  job selections, even when their labels are equal (such labels name what differs).
  One section per (trace, platform), headed with the platform's size ("pooled 338
  cores", "64 nodes, 1,024 cores"). In a configuration's box, the jobs of all its runs
  are **pooled**. Colours are one per predictor (the campaign label), the same in every
  figure, with a legend.
- **Slowdown and bounded slowdown** box plots (log scale; min / max whiskers, quartile
  box, median line, mean triangle), over the measured jobs that ran (``jobs.measured``:
  the jobs the runs' metrics count, so lead-in jobs of slices and hot-start dummies are
  left out) and per job class short / medium / long
  (:func:`dispatchlab.report.plots.slowdown_boxes`). Rejected jobs are left out.
  A label with more than ``max_jobs_per_box`` job rows is drawn from a uniform random
  sample of that many rows (DuckDB reservoir sample, fixed seed) so memory stays
  bounded; the page says where.
- **Prediction errors** (:func:`dispatchlab.report.plots.prediction_errors`): estimate at
  submission versus the trace's run time of the measured jobs, when they carry
  estimates.
- **Waiting jobs, time-weighted** (:func:`dispatchlab.report.plots.queue_length_distribution`)
  and **utilization / queue length over time** (:func:`dispatchlab.report.plots.over_time`),
  per section: one box / one line per configuration, drawn from its first run with
  stored series (lowest seed, slice, repetition; series of several runs are not
  pooled), overlaid in one panel, for at most ``max_runs_per_figure`` configurations
  (the page says how many were left out).
- **Gantt chart** (:func:`dispatchlab.report.plots.gantt`) of one run in a time window:
  ``gantt_run`` (a run key) or by default the first done run with stored jobs;
  ``gantt_window`` (trace seconds) or by default one day centred on the run's longest
  queue (the first time the ``queue_length`` series reaches its maximum), clipped to the
  series horizon, or the first day from the first start when no series is stored.
  Node-level runs (jobs with an ``allocation``) show nodes; other runs show core lanes
  assigned after the run.
- **Power caps (Carastan-Santos et al. 2024)**, only when some selected run has a cap (``runs.cap``
  set: a campaign with a ``[power]`` table): per (trace, platform) the table of
  :func:`dispatchlab.experiment.statistics.power_rows` (per dispatcher x power predictor x
  cap, the means over runs of the cap-window metrics and the turnaround change against
  the baseline run on the same workload: the ``baseline`` dispatcher when given, else
  ``easy`` when the selection has it, else the first dispatcher label; at cap ``none``),
  and the figures of Carastan-Santos et al. 2024's section 6 drawn from the runs' metrics, one
  panel per cap, one box / column of dots per *method* (dispatcher / power predictor, coloured by
  dispatcher): mean power in the window over the cap (Figure 4, per-run means), time
  above the cap (Figure 6, with the "own" variant), under-use, the change of the mean
  and max turnaround against the baseline (Figures 5, 7b, 7c; capped runs with a
  baseline), the share of jobs started in the window (Figure 7d) and, when jobs are
  stored, the mean and max wait per job size class (the starvation of large jobs; the
  measured jobs (``jobs.measured``: lead-ins and hot-start dummies left out);
  at most ``max_jobs_per_box`` jobs per method and cap, a uniform sample beyond).
  Campaigns without power get no such section.
- **A table of every selected run** (done and failed): labels, workload, status, error,
  the run's warnings (the ``warnings`` column: every warning ``simulate`` prints for the
  run, :func:`dispatchlab.run.advice.run_warnings`) and the main metrics to 3 significant
  digits, with the dispatcher's per-pass decision time (wall clock) as one cell "mean /
  p99 / max" in milliseconds (ours: one cell keeps the table narrow; ``-`` for a run
  with no dispatcher call); every other column (decision calls, p50 and total decision
  time, dispatcher facts such as ``finished`` and ``cp_passes``) and the full
  configuration JSON (HTML-escaped) fold out per row.

- **By partition** (:func:`_partition_section`), per (trace, platform) section when its
  stored jobs have partitions: per configuration and partition (the largest
  :data:`MAX_PARTITIONS` by hours), the measured jobs of its runs pooled: jobs, rejected,
  mean and median wait, bounded slowdown, node-hours (node-level runs) or proc-hours and
  their share (:func:`dispatchlab.experiment.campaign.store.group_rows`, as ``dispatchlab
  results groups``).

Runs without stored ``jobs`` / ``series`` rows contribute no figure; the page says so.
Times are seconds in each trace's time origin after slicing.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.core.errors import InputError, output_folder
from dispatchlab.experiment.campaign import store
from dispatchlab.experiment.campaign.groups import group_runs
from dispatchlab.experiment.statistics import (
    BOOTSTRAP_MIN_RUNS,
    MIN_RUNS,
    N_RESAMPLES,
    format_difference,
    format_estimate,
    power_rows,
    run_statistics,
)
from dispatchlab.metrics import StepFunction
from dispatchlab.metrics.keys import BY_KEY
from dispatchlab.report import plots

#: Default largest number of job rows per box-plot label (above: a uniform sample).
MAX_JOBS_PER_BOX = 500_000
#: Default largest number of runs per series figure (queue distribution, over time).
MAX_RUNS_PER_FIGURE = 8
#: Length (s) of the default Gantt window.
GANTT_DEFAULT_SPAN = 86_400
#: Figure resolution (dots per inch) of the embedded PNGs.
DPI = 90

#: Columns shown in the runs table (``runs`` columns), in order; the others fold out.
TABLE_COLUMNS: tuple[str, ...] = (
    "run_key", "trace", "platform", "dispatcher", "predictor", "workload", "status",
    "error", "warnings", "jobs", "mean_wait", "max_wait", "mean_bsld", "utilization",
    "steady_utilization", "decision_time", "wall_seconds",
)
#: The ``runs`` columns shown together in the runs table's ``decision_time`` cell
#: (seconds per dispatcher call, shown in milliseconds as "mean / p99 / max").
DECISION_COLUMNS: tuple[str, ...] = (
    "mean_decision_time", "p99_decision_time", "max_decision_time",
)
#: Header of the ``decision_time`` cell.
DECISION_HEADER = "decision ms mean / p99 / max"
#: Metrics in the statistics table at the top (declared metric keys).
SUMMARY_METRICS: tuple[str, ...] = (
    "mean_wait", "max_wait", "mean_bsld", "utilization", "steady_utilization",
    "mean_decision_time",
)
#: Metrics whose paired difference to the baseline the statistics table shows.
DIFFERENCE_METRICS: tuple[str, ...] = ("mean_wait", "mean_bsld")

_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.5em; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; }
p.note { font-size: 0.9em; color: #555; background: #f6f6f6; padding: 0.4em 0.6em; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.8em; }
th, td { border: 1px solid #ccc; padding: 2px 5px; text-align: right; }
table#runs td.num { white-space: nowrap; }
table.stats td { min-width: 7em; }
th { background: #eee; position: sticky; top: 0; }
td.text { text-align: left; }
tr.failed td { background: #fde8e8; }
tr.unfinished td { background: #fff4d6; }
td.error { white-space: normal; max-width: 25em; text-align: left; }
table#runs summary { white-space: nowrap; }
details pre { text-align: left; white-space: pre-wrap; max-width: 40em; }
details dl { text-align: left; columns: 2; font-size: 0.95em; }
details dt { font-weight: bold; } details dd { margin: 0 0 0.3em 0.5em; }
"""


# ------------------------------------------------------------------------ helpers
def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _figure(fig, alt: str, caption: str) -> str:
    return (f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,'
            f'{_png(fig)}"><figcaption>{html.escape(caption)}</figcaption></figure>\n')


def _note(text: str) -> str:
    return f'<p class="note">{html.escape(text)}</p>\n'


def _rows(con, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _strings(col: Any) -> list[str | None]:
    """A fetched string column as a list (SQL NULL -> None)."""
    mask = np.ma.getmaskarray(col)
    data = np.ma.getdata(col)
    return [None if m or x is None else str(x) for x, m in zip(data, mask, strict=True)]


def _label(run: dict[str, Any]) -> str:
    return f"{run['dispatcher']}-{run['predictor']}"


def _select_runs(con, runs_filter: str | None, include_outdated: bool
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The selected current runs and the outdated runs left out (see
    :func:`dispatchlab.experiment.campaign.store.select_runs`)."""
    runs, outdated = store.select_runs(con, runs_filter, include_outdated=include_outdated,
                                       field="runs filter")
    if not runs:
        what = "the database holds no runs" if runs_filter is None else \
            f"no run matches the filter {runs_filter!r}"
        if outdated:
            what += (f" made by the current code ({len(outdated)} outdated runs left out: "
                     "re-run them with campaign run --rerun, or include them)")
        raise InputError(what)
    return runs, outdated


def platform_heading(run: dict[str, Any]) -> str:
    """The platform's size for a section heading: ``pooled 338 cores`` or ``64 nodes,
    1,024 cores`` (node-level placement simulated)."""
    cores = run.get("cores")
    if run.get("node_level") and run.get("nodes"):
        return f"{run['nodes']:,} nodes, {cores or 0:,} cores"
    return f"pooled {cores or 0:,} cores"


def _fmt(value: Any) -> str:
    """A table cell: numbers to 3 significant digits (thousands separated when larger),
    booleans as yes / no."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _warnings_cell(value: Any) -> str:
    """The runs table's warnings cell (HTML): the run's warnings (the ``warnings``
    column, a JSON list of lines), one per line; empty when none."""
    try:
        items = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        items = [value]
    if not items:
        return ""
    return "<br>".join(f"warning: {html.escape(str(w))}" for w in items)


def _decision_cell(run: dict[str, Any]) -> str:
    """The runs table's decision-time cell: mean / p99 / max of the per-pass wall time
    in milliseconds, each to 3 significant digits (``-`` when absent, e.g. no call);
    empty when the run has none of them (a failed run)."""
    values = [run.get(c) for c in DECISION_COLUMNS]
    if all(v is None for v in values):
        return ""
    return " / ".join("-" if v is None or v != v else _fmt(float(v) * 1000.0)
                      for v in values)


# ---------------------------------------------------------------------- sections
def _job_arrays(con, keys: list[str], limit: int) -> tuple[dict[str, np.ndarray], int]:
    """Job columns of the runs ``keys`` (measured jobs that ran: lead-in jobs and
    hot-start dummies left out, as in the runs' metrics), a uniform sample of ``limit``
    rows when there are more; returns the arrays and the number of rows available."""
    base = ("SELECT slowdown, bsld, job_class, estimate, trace_run FROM jobs "
            "WHERE list_contains(?, run_key) AND status <> 'rejected' AND measured")
    total = con.execute(f"SELECT count(*) FROM ({base})", [keys]).fetchone()[0]
    sql = base if total <= limit else \
        f"SELECT * FROM ({base}) USING SAMPLE reservoir({int(limit)} ROWS) REPEATABLE (0)"
    data = con.execute(sql, [keys]).fetchnumpy()
    out = {}
    for name, col in data.items():
        arr = np.ma.filled(col, np.nan) if name in ("slowdown", "bsld") else \
            np.array(_strings(col), dtype=object) if name == "job_class" else \
            np.ma.filled(col, -1)
        out[name] = np.asarray(arr)
    return out, int(total)


def _box_section(con, groups: list[Any], colours: dict[str, str], max_jobs: int) -> str:
    """Box plots of one section: one box per configuration (its runs' jobs pooled)."""

    arrays, notes, empty = {}, [], []
    for g in groups:
        keys = [r["run_key"] for r in g.runs]
        cols, total = _job_arrays(con, keys, max_jobs)
        if total == 0:
            empty.append(g.label)
            continue
        arrays[g.label] = cols
        if total > max_jobs:
            notes.append(f"{g.label}: a uniform sample of {max_jobs:,} of {total:,} jobs")
    out = ""
    if empty:
        out += _note("No stored jobs (the campaign did not store them, or every job was "
                     f"rejected) for: {', '.join(empty)}; they have no box.")
    if not arrays:
        return out
    if notes:
        out += _note("Box plots drawn from samples to bound memory: " + "; ".join(notes)
                     + ".")
    colour_of = {g.label: g.predictor for g in groups}
    pooled = any(len(g.runs) > 1 for g in groups if g.label in arrays)
    scope = ("the jobs of all runs of one configuration pooled (seeds, slices, "
             "repetitions); " if pooled else "")
    style = {"groups": colour_of, "colours": colours}
    for col, name in (("slowdown", "slowdown"), ("bsld", "bounded slowdown")):
        values = {lab: a[col] for lab, a in arrays.items()}
        out += _figure(plots.slowdown_boxes(values, ylabel=name, title=f"Job {name}",
                                            **style),
                       f"{name} box plots",
                       f"Job {name} per configuration ({scope}measured jobs only: "
                       "lead-in jobs of slices and hot-start dummies left out, as in the "
                       "runs' metrics; rejected jobs left out); colour: predictor. "
                       "Whiskers: min / max; box: quartiles; line: median; triangle: mean; "
                       "log scale.")
        classes = {lab: a["job_class"] for lab, a in arrays.items()}
        out += _figure(plots.slowdown_boxes(values, classes=classes, ylabel=name,
                                            title=f"Job {name} by class", **style),
                       f"{name} by job class",
                       f"Job {name} per job class (short < 1 h <= medium <= 12 h < long, "
                       "by simulated run time); measured jobs only.")
    est = {lab: a["estimate"] for lab, a in arrays.items() if np.any(a["estimate"] >= 0)}
    if est:
        act = {lab: arrays[lab]["trace_run"] for lab in est}
        out += _figure(plots.prediction_errors(est, act, **style), "prediction errors",
                       "Run-time estimate given at submission versus the trace's run time "
                       "(the measured jobs that ran): error ratio, signed error, and predicted "
                       "versus actual (a sample when large).")
    return out


def _series(con, run: dict[str, Any]) -> dict[str, StepFunction]:
    data = con.execute("SELECT name, time, value FROM series WHERE run_key = ? "
                       "ORDER BY name, time", [run["run_key"]]).fetchnumpy()
    names = np.asarray(data["name"], dtype=object)
    out = {}
    for name in ("queue_length", "utilization"):
        pick = names == name
        if not pick.any():
            continue
        times = np.asarray(data["time"], dtype=np.int64)[pick]
        values = np.asarray(data["value"], dtype=np.float64)[pick]
        end = run["series_end"]
        end = int(times[-1]) + 1 if end is None or end <= times[-1] else int(end)
        out[name] = StepFunction(times, values, end)
    return out


def _series_section(con, groups: list[Any], colours: dict[str, str], max_runs: int) -> str:
    """Series figures of one section: per configuration its first run with stored
    series, overlaid in one panel."""

    def has_series(run: dict[str, Any]) -> bool:
        return bool(con.execute("SELECT count(*) FROM series WHERE run_key = ?",
                                [run["run_key"]]).fetchone()[0])

    chosen, missing = [], []
    for g in groups:
        run = next((r for r in g.runs if has_series(r)), None)
        (chosen.append((g, run)) if run is not None else missing.append(g.label))
    out = ""
    if missing:
        out += _note(f"{len(missing)} of {len(groups)} configurations have no stored "
                     f"series (the campaign did not store them): {', '.join(missing)}.")
    if not chosen:
        return out
    if len(chosen) > max_runs:
        out += _note(f"Series figures show the first {max_runs} of {len(chosen)} "
                     "configurations; raise max_runs_per_figure for more.")
        chosen = chosen[:max_runs]
    funcs: dict[str, dict[str, StepFunction]] = {"queue_length": {}, "utilization": {}}
    colour_of: dict[str, str] = {}
    several = any(len(g.runs) > 1 for g, _ in chosen)
    for g, run in chosen:
        lab = g.label + (f" ({run.get('workload') or 'seed=' + str(run['seed'])})"
                         if several else "")
        colour_of[lab] = g.predictor
        for name, f in _series(con, run).items():
            funcs[name][lab] = f
    style = {"groups": colour_of, "colours": colours}
    which = ("each configuration's first run (lowest seed / slice); " if several else "")
    if funcs["queue_length"]:
        out += _figure(plots.queue_length_distribution(funcs["queue_length"], **style),
                       "waiting jobs distribution",
                       "Number of waiting jobs, time-weighted (every second weighs the "
                       "same), leaving out the periods where the queue is empty in every "
                       f"run shown; {which}one box per configuration.")
    if funcs["utilization"]:
        out += _figure(plots.over_time(funcs["utilization"], ylabel="utilization",
                                       title="Utilization over time", **style),
                       "utilization over time",
                       "Fraction of the platform's primary resource in use by the measured "
                       f"jobs; {which}configurations overlaid.")
    if funcs["queue_length"]:
        out += _figure(plots.over_time(funcs["queue_length"], ylabel="waiting jobs",
                                       title="Waiting jobs over time", **style),
                       "queue length over time",
                       f"Number of waiting (measured) jobs; {which}configurations "
                       "overlaid.")
    return out


def _default_window(con, run: dict[str, Any]) -> tuple[int, int]:
    """One day around the first time the queue reaches its maximum (clipped to the
    series horizon), or the first day from the first start."""
    row = con.execute("SELECT time FROM series WHERE run_key = ? AND name = 'queue_length' "
                      "ORDER BY value DESC, time LIMIT 1", [run["run_key"]]).fetchone()
    lo = hi = None
    if row is not None and run["series_start"] is not None and run["series_end"] is not None:
        lo, hi = int(run["series_start"]), int(run["series_end"])
    if lo is None or hi is None or hi <= lo:
        first = con.execute("SELECT min(start_time), max(end_time) FROM jobs WHERE "
                            "run_key = ? AND start_time >= 0", [run["run_key"]]).fetchone()
        t0 = int(first[0] or 0)
        return t0, t0 + max(1, min(GANTT_DEFAULT_SPAN, int(first[1] or t0 + 1) - t0))
    if hi - lo <= GANTT_DEFAULT_SPAN:
        return lo, hi
    t0 = max(lo, int(row[0]) - GANTT_DEFAULT_SPAN // 2)
    t0 = min(t0, hi - GANTT_DEFAULT_SPAN)
    return t0, t0 + GANTT_DEFAULT_SPAN


def _gantt_run(con, runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The selected run ``key``; it must be done with stored jobs."""
    match = [r for r in runs if r["run_key"] == key]
    if not match:
        raise InputError(f"run {key!r} is not among the selected runs", field="gantt run")
    run = match[0]
    stored = con.execute("SELECT count(*) FROM jobs WHERE run_key = ?", [key]).fetchone()[0]
    if run["status"] != "done" or not stored:
        raise InputError(f"run {key!r} has no stored jobs (status {run['status']})",
                         field="gantt run")
    return run


def _gantt_section(con, runs: list[dict[str, Any]], gantt_run: str | None,
                   window: tuple[int, int] | None) -> str:
    def has_jobs(key: str) -> bool:
        return bool(con.execute("SELECT count(*) FROM jobs WHERE run_key = ?",
                                [key]).fetchone()[0])

    if gantt_run is not None:
        run = _gantt_run(con, runs, gantt_run)
    else:
        run = next((r for r in runs if r["status"] == "done" and has_jobs(r["run_key"])),
                   None)
        if run is None:
            return _note("No selected run has stored jobs: no Gantt chart.")
    if window is not None:
        t0, t1 = int(window[0]), int(window[1])
        if t1 <= t0:
            raise InputError(f"the Gantt window must have T0 < T1, got {t0}:{t1}",
                             field="gantt window")
        how = "the requested window"
    else:
        t0, t1 = _default_window(con, run)
        how = "default window: one day around the longest queue"
    cond = ("run_key = ? AND start_time >= 0 AND start_time < ? AND "
            "(end_time > ? OR (end_time = start_time AND start_time >= ?))")
    params = [run["run_key"], t1, t0, t0]
    total = con.execute(f"SELECT count(*) FROM jobs WHERE {cond}", params).fetchone()[0]
    limit = plots.GANTT_MAX_JOBS
    data = con.execute(f"SELECT job_id, start_time, end_time, procs, allocation FROM jobs "
                       f"WHERE {cond} ORDER BY start_time, submit_time, job_id LIMIT {limit}",
                       params).fetchnumpy()
    alloc = _strings(data["allocation"])
    node_level = any(a is not None for a in alloc)
    title = f"{_label(run)} ({run['trace']}, {run['platform']}, seed {run['seed']})"
    fig = plots.gantt(np.asarray(data["job_id"]), np.asarray(data["start_time"]),
                      np.asarray(data["end_time"]), np.asarray(data["procs"]),
                      window=(t0, t1), allocation=alloc if node_level else None,
                      nodes=run.get("nodes") if node_level else None,
                      cores=None if node_level else run["cores"], title=title,
                      max_jobs=limit)
    out = f"<p>Run <code>{html.escape(run['run_key'])}</code>, {html.escape(how)}: " \
          f"[{t0:,}, {t1:,}) s.</p>\n"
    if total > limit:
        out += _note(f"{total:,} jobs run in this window; the {limit:,} that start first "
                     "are drawn.")
    kind = ("nodes, from the simulated placement" if node_level else
            "core lanes assigned after the run: placement is not simulated for this run, "
            "lanes are first-fit by start time and a job is split over several blocks only "
            "when no contiguous block is free")
    return out + _figure(fig, "Gantt chart", f"Jobs running in the window; y axis: {kind}.")


def _cap_order(cap: str) -> tuple[int, float, str]:
    """Sort key of cap labels: ``none`` first, then shares (``50%``) by value, then
    watts (``400kW``) by value, then the others by text."""
    if cap == "none":
        return (0, 0.0, cap)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*%\s*", cap)
    if m:
        return (1, float(m[1]), cap)
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kMG]?)W\s*", cap)
    if m:
        return (2, float(m[1]) * {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}[m[2]], cap)
    return (3, 0.0, cap)


def _num(value: Any) -> float:
    """A metric value as a float (None -> NaN)."""
    try:
        return float("nan") if value is None else float(value)
    except (TypeError, ValueError):
        return float("nan")


def _pct(value: Any, signed: bool = False) -> str:
    if value is None or value != value:
        return "-"
    return f"{value * 100:+.1f} %" if signed else f"{value * 100:.1f} %"


#: Columns of the power table: (header, ``power_rows`` key, signed percentage).
POWER_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("power / cap", "cap_mean_share", False),
    ("time above cap", "cap_time_above_share", False),
    ("time above cap (own)", "cap_time_above_own_share", False),
    ("runs above cap", "above_share", False),
    ("runs above cap (own)", "above_own_share", False),
    ("max excess", "cap_max_excess", False),
    ("max excess (own)", "cap_max_excess_own", False),
    ("under-use", "cap_mean_underuse", False),
    ("started in window", "window_start_share", False),
    ("mean turnaround change", "mean_turnaround_change", True),
    ("max turnaround change", "max_turnaround_change", True),
    ("mean wait change", "mean_wait_change", True),
)


def _power_table(rows: list[dict[str, Any]], extra: list[str]) -> str:
    """The ``power_rows`` rows of one (trace, platform) as an HTML table."""
    head = ["cap", "dispatcher", "power predictor", *extra, "runs",
            *(h for h, _, _ in POWER_COLUMNS), "with baseline"]
    lines = []
    for r in rows:
        cells = [r["cap"], r["dispatcher"], r["power_predictor"] or "-",
                 *(str(r[k]) for k in extra), str(r["runs"]),
                 *(_pct(r[k], signed) for _, k, signed in POWER_COLUMNS), str(r["baselined"])]
        n_text = 3 + len(extra)
        lines.append("<tr>" + "".join(
            f'<td class="{"text" if n < n_text else "num"}">{html.escape(c)}</td>'
            for n, c in enumerate(cells)) + "</tr>")
    return ('<div class="table-wrap"><table class="stats power"><thead><tr>'
            + "".join(f"<th>{html.escape(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(lines) + "</tbody></table></div>\n")


def _power_wait_figure(con, runs: list[dict[str, Any]], method, caps: list[str],
                       style: dict[str, Any], max_jobs: int) -> str:
    """Mean and max wait per job size class, per cap and method (jobs pooled)."""

    keys: dict[str, dict[str, list[str]]] = {}
    for r in runs:
        keys.setdefault(r["cap"], {}).setdefault(method(r), []).append(r["run_key"])
    base = ("SELECT j.procs, j.wait FROM jobs j WHERE list_contains(?, j.run_key) AND "
            "j.status <> 'rejected' AND j.start_time >= 0 AND j.measured")
    procs: dict[str, dict[str, np.ndarray]] = {}
    wait: dict[str, dict[str, np.ndarray]] = {}
    sampled = []
    for cap in caps:
        for m, ks in keys.get(cap, {}).items():
            total = con.execute(f"SELECT count(*) FROM ({base})", [ks]).fetchone()[0]
            if not total:
                continue
            sql = base if total <= max_jobs else (
                f"SELECT * FROM ({base}) USING SAMPLE reservoir({int(max_jobs)} ROWS) "
                "REPEATABLE (0)")
            if total > max_jobs:
                sampled.append(f"{m} at cap {cap}: {max_jobs:,} of {total:,} jobs")
            data = con.execute(sql, [ks]).fetchnumpy()
            procs.setdefault(cap, {})[m] = np.ma.filled(data["procs"], 0).astype(np.int64)
            wait.setdefault(cap, {})[m] = np.ma.filled(
                np.ma.asarray(data["wait"], dtype=np.float64), np.nan)
    if not wait:
        return _note("No stored jobs for the runs with a cap (the campaign did not store "
                     "them): no wait per job size class.")
    out = ""
    if sampled:
        out += _note("Wait per size class drawn from samples to bound memory (the max is "
                     "the sample's): " + "; ".join(sampled) + ".")
    names = plots.size_class_names()
    fig = plots.wait_by_size_class(procs, wait, stats=("mean", "max"), **style)
    return out + _figure(
        fig, "wait by job size class",
        "Mean (left) and maximum (right) wait per job size class in processors ("
        + ", ".join(names) + "), per cap and method: the measured jobs of all the "
        "method's runs pooled (lead-in jobs and hot-start dummies left out); "
        "a large maximum for the largest classes is the starvation of large jobs "
        "(Carastan-Santos et al. 2024 section 6.6, EASY SAF against the "
        "knapsacks). Tick: jobs in the class.")


def _power_section(con, runs: list[dict[str, Any]], baseline: str, baseline_cap: str,
                   max_jobs: int) -> str:
    """The "Power caps (Carastan-Santos et al. 2024)" section: ``runs`` are the done selected
    runs."""

    capped = [r for r in runs if r.get("cap") is not None]
    rows = power_rows(capped, baseline=baseline, baseline_cap=baseline_cap)
    out = _note(
        "Power-cap runs (campaigns with a [power] table), read as Carastan-Santos et al. 2024 "
        "section 6: "
        "per dispatcher, power predictor and cap, the means over runs (workloads) of "
        "the cap-window metrics: mean platform power in the window over the cap, share "
        "of window time above the cap, share of runs above it at some time, largest "
        "excess (share of the cap), under-use (time-mean of (cap - power) / cap, 0 "
        "while above), share of the started jobs started in the window; and the change "
        f"(value / baseline - 1, averaged over runs) against the {baseline} run at cap "
        f"{baseline_cap} on the same workload (same campaign, trace, platform, predictor, "
        "workload and repetition). Positive turnaround changes are longer turnarounds. "
        "A method is a dispatcher / power predictor pair; colours: one per dispatcher.")
    if not any(r["baselined"] for r in rows):
        out += _note(f"No run has a baseline ({baseline} at cap {baseline_cap} on the same "
                     "workload): the change columns and the turnaround figure are empty.")
    campaigns = {r.get("campaign") for r in capped}
    predictors = {r.get("predictor") for r in capped}
    extra = (["campaign"] if len(campaigns) > 1 else []) + \
        (["predictor"] if len(predictors) > 1 else [])
    order = {d: k for k, d in enumerate(dict.fromkeys(r["dispatcher"] for r in capped))}

    def method(r: dict[str, Any]) -> str:
        label = f"{r['dispatcher']}/{r.get('power_predictor') or '-'}"
        if len(predictors) > 1:
            label += f" [{r.get('predictor')}]"
        return f"{r.get('campaign')}: {label}" if len(campaigns) > 1 else label

    def slot(r: dict[str, Any]) -> tuple:
        return (r.get("campaign"), r.get("trace"), r.get("platform"), r.get("predictor"),
                r.get("workload"), r.get("repetition"))

    base = {slot(r): r for r in capped
            if r["dispatcher"] == baseline and r["cap"] == baseline_cap}
    dispatchers = list(order)
    colours = plots.colour_map(dispatchers)
    for trace, platform in dict.fromkeys((r["trace"], r["platform"]) for r in rows):
        members = sorted((r for r in capped if (r["trace"], r["platform"]) == (trace, platform)),
                         key=lambda r: (order[r["dispatcher"]], str(r.get("power_predictor"))))
        table_rows = sorted(
            (r for r in rows if (r["trace"], r["platform"]) == (trace, platform)),
            key=lambda r: (_cap_order(r["cap"]), order[r["dispatcher"]],
                           str(r["power_predictor"])))
        out += (f"<h3>{html.escape(str(trace))} on {html.escape(str(platform))} "
                f"({html.escape(platform_heading(members[0]))})</h3>\n")
        out += _power_table(table_rows, extra)
        caps = sorted({r["cap"] for r in members}, key=_cap_order)
        style = {"groups": {method(r): r["dispatcher"] for r in members},
                 "colours": colours}

        def per_cap(metric: str, *, relative: bool = False, members=members, caps=caps
                    ) -> dict[str, dict[str, np.ndarray]]:
            """cap -> method -> one value per run (caps with some finite value only);
            ``relative``: the change against the baseline run (capped runs with one)."""
            values: dict[str, dict[str, list[float]]] = {}
            for r in members:
                v = _num(r.get(metric))
                if relative:
                    b = base.get(slot(r))
                    if r["cap"] == baseline_cap or b is None:
                        continue
                    bv = _num(b.get(metric))
                    v = v / bv - 1.0 if bv > 0 else float("nan")
                values.setdefault(r["cap"], {}).setdefault(method(r), []).append(v)
            return {c: {m: np.asarray(v) for m, v in values[c].items()} for c in caps
                    if c in values and any(np.isfinite(v).any() for v in values[c].values())}

        share = per_cap("cap_mean_share")
        if not share:
            out += _note("No run has cap-window metrics (no cap was set in the window, or "
                         "the jobs carry no power): no power figures.")
        else:
            out += _figure(plots.cap_power_boxes(share, **style), "power in the cap window",
                           "Mean platform power in the cap window as a share of the cap "
                           "(black line: the cap), one box per method, the runs as dots "
                           "(Carastan-Santos et al. 2024 Figure 4 shows the power's distribution "
                           "over the "
                           "window's time; these are per-run means, so a run under the "
                           "line may still break the cap: see the next figure). Whiskers: "
                           "min / max; box: quartiles; line: median; triangle: mean.")
            above = per_cap("cap_time_above_share")
            own = per_cap("cap_time_above_own_share")
            if above:
                out += _figure(
                    plots.time_above_cap(above, own=own or None, **style),
                    "time above the cap",
                    "Share of the cap window's time with the platform power above the cap, "
                    "one dot per run, black bar: mean (Carastan-Santos et al. 2024 Figure 6; "
                    "lower is better)"
                    + ("; hollow dots: the same counting only the times when the jobs "
                       "already running when the window opened are within the cap on "
                       "their own (the excess the dispatcher's own starts caused)."
                       if own else "."))
            underuse = per_cap("cap_mean_underuse")
            if underuse:
                out += _figure(plots.underuse_boxes(underuse, **style), "under-use of the cap",
                               "Under-use of the cap: time-mean of (cap - power) / cap over "
                               "the window, 0 while above (lower is better), one box per "
                               "method, the runs as dots.")
        mean_change = per_cap("mean_turnaround", relative=True)
        max_change = per_cap("max_turnaround", relative=True)
        if mean_change:
            out += _figure(
                plots.turnaround_change(mean_change, max_change or None,
                                        baseline=f"{baseline} at cap {baseline_cap}", **style),
                "turnaround change",
                f"Change of the mean (left) and max (right) turnaround of each run against "
                f"the {baseline} run at cap {baseline_cap} on the same workload "
                "(value / baseline - 1; above 0: longer, worse), capped runs with a "
                "baseline, one box per method, the workloads as dots (Carastan-Santos et al. "
                "2024 Figures 5, "
                "7b and 7c; the max is the starvation of the worst job).")
        starts = per_cap("window_start_share")
        if starts:
            out += _figure(plots.window_start_bars(starts, **style), "jobs started in window",
                           "Share of the started jobs that started inside the cap window "
                           "(Carastan-Santos et al. 2024 Figure 7d): bar, the mean over runs; "
                           "dots, the runs.")
        out += _power_wait_figure(con, members, method, caps, style, max_jobs)
    return out


def _table(runs: list[dict[str, Any]]) -> str:
    """Every selected run: the main columns, and per row a fold-out with every other
    column and the configuration JSON (so the table needs no side-scrolling)."""

    names = [DECISION_HEADER if c == "decision_time" else BY_KEY[c].label if c in BY_KEY
             else c.replace("_", " ") for c in TABLE_COLUMNS]
    head = "".join(f'<th title="{html.escape(c)}">{html.escape(n)}</th>'
                   for c, n in zip((*TABLE_COLUMNS, "details"), (*names, "details"),
                                   strict=True))
    lines = [f'<div class="table-wrap"><table id="runs"><thead><tr>{head}</tr></thead><tbody>']
    shown = set(TABLE_COLUMNS) | set(DECISION_COLUMNS) | {"config", "summary"}
    for r in runs:
        cells = []
        for c in TABLE_COLUMNS:
            if c == "decision_time":
                cells.append(f'<td class="num">{html.escape(_decision_cell(r))}</td>')
                continue
            v = r.get(c)
            if c == "status" and r.get("unfinished"):
                v = f"unfinished ({store.describe_unfinished(r).rsplit(': ', 1)[-1]})"
            if c == "warnings":
                cells.append(f'<td class="error">{_warnings_cell(v)}</td>')
                continue
            cls = "error" if c == "error" else "text" if isinstance(v, str) else "num"
            cells.append(f'<td class="{cls}">{html.escape(_fmt(v))}</td>')
        try:
            config = json.dumps(json.loads(r["config"]), indent=1, sort_keys=True)
        except (TypeError, ValueError):
            config = str(r.get("config"))
        rest = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(_fmt(v))}</dd>"
                       for k, v in r.items() if k not in shown)
        cells.append(f'<td class="text"><details><summary>more</summary>'
                     f"<dl>{rest}</dl><pre>{html.escape(config)}</pre></details></td>")
        status = "failed" if r.get("status") != "done" else \
            "unfinished" if r.get("unfinished") else "done"
        lines.append(f'<tr class="{status}">{"".join(cells)}</tr>')
    lines.append("</tbody></table></div>")
    return "\n".join(lines) + "\n"


def _statistics_section(groups_runs: list[dict[str, Any]], baseline: str | None,
                        include_unfinished: bool = False) -> str:
    """The table at the top: per (trace, platform), one row per configuration."""

    sections = run_statistics(groups_runs, metrics=SUMMARY_METRICS, baseline=baseline,
                              include_unfinished=include_unfinished)
    out = _note("Each configuration's value is the mean over its runs (one run = one "
                "workload: a seed or a slice) of the run's metric, with a 95 % interval "
                "over runs marked with its method: t, Student's t (below "
                f"{BOOTSTRAP_MIN_RUNS} runs; for the differences, on the paired "
                "differences); boot, the percentile bootstrap "
                f"({N_RESAMPLES:,} resamples, from {BOOTSTRAP_MIN_RUNS} runs); none below "
                f"{MIN_RUNS} runs. "
                + (f"Differences: the paired difference to {baseline} with the same "
                   "predictor on the same workloads, [interval], (ratio of means); an "
                   "interval that excludes 0 is a difference larger than the variation "
                   "across workloads." if baseline else ""))

    def fmt(key: str) -> str:
        f = BY_KEY[key].fmt
        return "{:,.0f}" if f == "{:,}" else f

    for sec in sections:
        head = ["configuration", "runs", *(BY_KEY[k].label for k in SUMMARY_METRICS)]
        if baseline:
            head += [f"{BY_KEY[k].label} vs {baseline}" for k in DIFFERENCE_METRICS]
        rows = []
        for g, row in zip(sec.groups, sec.rows, strict=True):
            cells = [g.label, str(row["runs"]) + (f" ({row['unfinished']} unfinished)"
                                                  if row.get("unfinished") else "")]
            cells += [format_estimate(row[k], fmt(k)) for k in SUMMARY_METRICS]
            if baseline:
                diffs = row.get("vs_baseline") or {}
                mark = "baseline" if g.dispatcher == baseline else "-"
                cells += [format_difference(diffs[k], fmt(k)) if k in diffs else mark
                          for k in DIFFERENCE_METRICS]
            rows.append("<tr>" + "".join(
                f'<td class="{"text" if n == 0 else "num"}">{html.escape(c)}</td>'
                for n, c in enumerate(cells)) + "</tr>")
        platform = platform_heading(sec.groups[0].runs[0])
        out += (f"<h3>{html.escape(str(sec.trace))} on {html.escape(str(sec.platform))} "
                f"({html.escape(platform)})</h3>\n<div class=\"table-wrap\"><table "
                f'class="stats"><thead><tr>'
                + "".join(f"<th>{html.escape(h)}</th>" for h in head)
                + "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>\n")
    return out


# --------------------------------------------------------------------------- entry
def write_report(db: str | Path, out_dir: str | Path, *, runs_filter: str | None = None,
                 gantt_run: str | None = None, gantt_window: tuple[int, int] | None = None,
                 max_runs_per_figure: int = MAX_RUNS_PER_FIGURE,
                 max_jobs_per_box: int = MAX_JOBS_PER_BOX, baseline: str | None = None,
                 include_outdated: bool = False, include_unfinished: bool = False) -> Path:
    """Write ``out_dir/index.html`` for the runs of results database ``db``; return its path.

    ``runs_filter`` is an SQL boolean expression over the ``runs`` columns (e.g.
    ``dispatcher = 'easy' AND seed < 3``); a filter DuckDB rejects raises
    :class:`InputError` naming it, and so does a filter (or database) with no current
    run. Outdated runs (made by other code) are left out and listed unless
    ``include_outdated``, unfinished runs (stopped at their wall-clock budget) unless
    ``include_unfinished``. ``baseline`` is a dispatcher label: the statistics table gives
    every other configuration's paired difference to it (default: the first
    dispatcher label in the selection). ``gantt_run`` is a run key among the selected
    runs (done, with stored jobs); ``gantt_window = (t0, t1)`` trace seconds,
    ``t0 < t1``. See the module docstring for the page's content, grouping and
    defaults. The database is opened read-only
    (:func:`dispatchlab.experiment.campaign.store.open_read`: a newer schema is refused)."""

    if max_runs_per_figure < 1 or max_jobs_per_box < 1:
        raise InputError("max_runs_per_figure and max_jobs_per_box must be >= 1")
    if gantt_window is not None and int(gantt_window[1]) <= int(gantt_window[0]):
        raise InputError(f"the Gantt window must have T0 < T1, got "
                         f"{gantt_window[0]}:{gantt_window[1]}", field="gantt window")
    con = store.open_read(db)
    try:
        runs, outdated = _select_runs(con, runs_filter, include_outdated)
        runs, unfinished = store.split_unfinished(runs,
                                                  include_unfinished=include_unfinished)
        if not runs:
            raise InputError(f"every selected run is unfinished ({len(unfinished)} runs "
                             "stopped at their wall-clock budget): include them to report "
                             "them (--include-unfinished)")
        if gantt_run is not None:  # checked before any figure is drawn
            _gantt_run(con, runs, gantt_run)
        done = [r for r in runs if r["status"] == "done"]
        failed = len(runs) - len(done)
        groups = group_runs(done)
        asked = baseline
        if baseline is None and groups:
            baseline = groups[0].dispatcher
        version = dict(con.execute("SELECT key, value FROM meta").fetchall())
        parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
                 "<title>dispatchlab campaign report</title>",
                 f"<style>{_CSS}</style></head><body>",
                 "<h1>dispatchlab campaign report</h1>"]
        campaigns = sorted({str(r["campaign"]) for r in runs})
        parts.append(
            f"<p>Database <code>{html.escape(str(db))}</code> (schema "
            f"{html.escape(str(version.get('schema_version', '?')))}, written by dispatchlab "
            f"{html.escape(str(version.get('dispatchlab_version', '?')))}); campaign "
            f"{html.escape(', '.join(campaigns))}; runs filter: "
            f"<code>{html.escape(runs_filter or 'none')}</code>; {len(runs)} runs selected: "
            f"{len(done)} done, {failed} failed.</p>")
        if outdated:
            parts.append(_outdated_note(outdated))
        if unfinished:
            parts.append(_unfinished_note(unfinished))
        parts.append("<h2>Summary</h2>")
        parts.append(_statistics_section(done, baseline, include_unfinished)
                     if groups else
                     _note("No selected run is done: no statistics."))
        parts.append(_note(
            "Times are seconds from each trace's time origin after slicing. Runs are "
            "grouped by campaign, trace, platform and full configuration; only the seeds, "
            "slices and repetitions of one configuration are pooled (in the job box "
            "plots). Colours: one per predictor, the same in every figure."))
        if any(r.get("dispatcher_name") in POWER_CAPPING_METHODS and r.get("cap") is not None
               for r in done):
            parts.append("<h2>Power capping by scheduling and by throttling "
                         "(Borghesi et al. 2018)</h2>")
            parts.append(_power_capping_section(con, done))
        if any(r.get("cap") is not None for r in done):
            parts.append("<h2>Power caps (Carastan-Santos et al. 2024)</h2>")
            parts.append(_power_section(con, done, _power_baseline(done, asked),
                                        "none", max_jobs_per_box))
        colours = plots.colour_map([g.predictor for g in groups])
        sections: dict[tuple[str, str], list[Any]] = {}
        for g in groups:
            sections.setdefault((g.trace, g.platform), []).append(g)
        if not sections:
            parts.append(_note("No selected run is done: no figures."))
        for (trace, platform), members in sections.items():
            n_runs = sum(len(g.runs) for g in members)
            parts.append(f"<h2>Trace {html.escape(str(trace))}, platform "
                         f"{html.escape(str(platform))} "
                         f"({html.escape(platform_heading(members[0].runs[0]))}; "
                         f"{len(members)} configurations, {n_runs} runs)</h2>")
            parts.append("<h3>Job slowdown</h3>")
            parts.append(_box_section(con, members, colours, max_jobs_per_box))
            parts.append("<h3>Queue and utilization</h3>")
            parts.append(_series_section(con, members, colours, max_runs_per_figure))
            parts.append(_partition_section(con, members))
        parts.append("<h2>Gantt chart</h2>")
        parts.append(_gantt_section(con, runs, gantt_run, gantt_window))
        parts.append(f"<h2>All runs ({len(runs)})</h2>")
        parts.append(_table(runs))
        parts.append("</body></html>\n")
    finally:
        con.close()
    out = output_folder(out_dir)
    path = out / "index.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


#: Partitions shown per configuration in the report's per-partition table (largest hours
#: first).
MAX_PARTITIONS = 20


def _partition_section(con, groups: list[Any]) -> str:
    """``By partition``: one table of a (trace, platform) section, a block of rows per
    configuration (its runs' stored measured jobs pooled,
    :func:`dispatchlab.experiment.campaign.store.group_rows`): jobs, rejected, mean and
    median wait, bounded slowdown, hours and their share. Empty (no heading) when no
    stored job of these runs has a partition (SWF traces without partition or queue
    numbers, stores written before the jobs kept their groups)."""
    blocks = []
    for g in groups:
        rows = store.group_rows(con, [r["run_key"] for r in g.runs], "partition")
        if rows:
            blocks.append((g.label, rows))
    if not any(r["group"] is not None for _, rows in blocks for r in rows):
        return ""
    unit = blocks[0][1][0]["hours_unit"]
    head = ["configuration", "partition", "runs", "jobs", "rejected", "mean wait (s)",
            "median wait (s)", "bsld", unit, "share"]
    lines, cut = [], []
    for label, rows in blocks:
        if len(rows) > MAX_PARTITIONS:
            cut.append(f"{label}: {MAX_PARTITIONS} of {len(rows)} partitions")
        for r in rows[:MAX_PARTITIONS]:
            cells = [label, "(none)" if r["group"] is None else str(r["group"]),
                     str(r["runs"]), f"{r['jobs']:,}", f"{r['rejected']:,}",
                     _fmt(r["mean_wait"]), _fmt(r["median_wait"]), _fmt(r["mean_bsld"]),
                     f"{r['hours']:,.1f}", _pct(r["hours_share"])]
            lines.append("<tr>" + "".join(
                f'<td class="{"text" if n < 2 else "num"}">{html.escape(c)}</td>'
                for n, c in enumerate(cells)) + "</tr>")
    note = (f"Per partition (the log's partition or queue; an SWF trace's number): the "
            f"measured jobs of all runs of a configuration pooled; {unit}: "
            + ("nodes of the allocation" if unit == "node-hours" else "units")
            + " x simulated run; share: of the configuration's " + unit + "."
            + (" Largest partitions only: " + "; ".join(cut) + "." if cut else ""))
    return ("<h3>By partition</h3>\n" + _note(note)
            + '<div class="table-wrap"><table class="stats partitions"><thead><tr>'
            + "".join(f"<th>{html.escape(h)}</th>" for h in head)
            + "</tr></thead><tbody>" + "".join(lines) + "</tbody></table></div>\n")


#: the dispatchers of Borghesi et al. 2018 (registered names): their runs get the Borghesi et al.
#: 2018 section
POWER_CAPPING_METHODS = ("ls", "dec", "bf", "dvfs", "rapl-simple", "rapl-dynshare", "dec-rapl")


def _family(trace: str) -> str:
    """The instance family of a trace label: the text before ``/`` (campaign traces
    expanded from ``ARCHIVE#PATTERN`` are labelled ``LABEL/MEMBER``), else the label."""
    return str(trace).split("/", 1)[0]


def _power_capping_section(con, runs: list[dict[str, Any]]) -> str:
    """Borghesi et al. 2018's figures from the runs of its methods: per instance family and platform
    (the instances of one family, seeds or archive members, pooled), the mean BSLD per
    budget and method, the time above the budget per method, and the platform power
    against the budget of one workload (when series are stored)."""

    mine = [r for r in runs if r.get("dispatcher_name") in POWER_CAPPING_METHODS]
    out = _note(
        "Runs of Borghesi et al. 2018's methods (ls, dec, bf, dvfs, rapl-simple, rapl-dynshare, "
        "dec-rapl), one method per dispatcher label (the label carries the duration "
        "model, e.g. dynshare-0.5). BSLD is Borghesi et al. 2018's eq. 3 (mean_power_bsld: "
        "(wait + effective run) / max(300 s, unstretched run), at least 1). Instances of "
        "one family (a trace entry's seeds, or the members of one archive pattern) are "
        "pooled: the bar is the mean over instances of each run's mean BSLD, the dots "
        "the instances. Time above the budget: share of the cap window's time with the "
        "platform power above the budget (measured, with every job at its power level).")
    order = {d: k for k, d in enumerate(dict.fromkeys(r["dispatcher"] for r in mine))}
    colours = plots.colour_map(list(order))
    fams = dict.fromkeys((_family(r["trace"]), r["platform"]) for r in mine)
    for fam, platform in fams:
        members = [r for r in mine if (_family(r["trace"]), r["platform"]) == (fam, platform)]
        caps = sorted({r["cap"] for r in members if r.get("cap") is not None},
                      key=_cap_order, reverse=True)
        out += f"<h3>{html.escape(fam)} on {html.escape(str(platform))}</h3>\n"

        def per_cap(metric: str, members=members, caps=caps) -> dict[str, dict[str, Any]]:
            values: dict[str, dict[str, list[float]]] = {}
            for r in sorted(members, key=lambda r: order[r["dispatcher"]]):
                if r.get("cap") is None:
                    continue
                values.setdefault(r["cap"], {}).setdefault(r["dispatcher"], []).append(
                    _num(r.get(metric)))
            return {c: {m: np.asarray(v) for m, v in values[c].items()} for c in caps
                    if c in values and any(np.isfinite(v).any() for v in values[c].values())}

        bsld = per_cap("mean_power_bsld")
        if bsld:
            out += _figure(plots.budget_bsld_bars(bsld, colours=colours,
                                                  title=f"{fam}: BSLD by power budget"),
                           "BSLD by budget", "Mean BSLD (Borghesi et al. 2018 eq. 3) per power "
                           "budget "
                           "and method (Borghesi et al. 2018 Figures 2-5; lower is better).")
            rows = []
            for c, per in bsld.items():
                cells = "".join(f"<td>{_fmt(float(np.nanmean(v)))}</td>"
                                if np.isfinite(v).any() else "<td>-</td>"
                                for v in (per.get(m, np.array([np.nan])) for m in order))
                rows.append(f"<tr><td>{html.escape(c)}</td>{cells}</tr>")
            head = "".join(f"<th>{html.escape(m)}</th>" for m in order)
            out += (f"<table><thead><tr><th>budget</th>{head}</tr></thead><tbody>"
                    + "".join(rows) + "</tbody></table>\n")
        above = per_cap("cap_time_above_share")
        if above:
            out += _figure(plots.time_above_cap(above, colours=colours),
                           "time above the budget",
                           "Share of the run's time with the platform power above the "
                           "budget, one dot per instance, black bar: mean. Scheduling "
                           "methods with exact predictions stay at 0; the throttling "
                           "methods' excess is measured (Borghesi et al. 2018: without admission "
                           "control they fail at budgets <= 30 %).")
        out += _power_capping_figure(con, members, caps, colours)
    return out


def _power_capping_figure(con, members: list[dict[str, Any]], caps: list[str],
                          colours: dict[str, str]) -> str:
    """Platform power against the budget for one workload at the tightest budget with
    stored power series: one line per method."""

    keys = [r["run_key"] for r in members]
    if not keys:
        return ""
    have = {k for (k,) in con.execute(
        "SELECT DISTINCT run_key FROM series WHERE name = 'platform_power' AND run_key IN "
        f"({','.join('?' * len(keys))})", keys).fetchall()}
    for cap in reversed(caps):  # tightest first
        runs = [r for r in members if r.get("cap") == cap and r["run_key"] in have]
        if not runs:
            continue
        first = sorted(runs, key=lambda r: (str(r["trace"]), str(r.get("workload"))))[0]
        same = [r for r in runs if (r["trace"], r.get("workload")) ==
                (first["trace"], first.get("workload"))]
        power: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        budget = (np.zeros(0), np.zeros(0))
        for r in same:
            rows = con.execute("SELECT name, time, value FROM series WHERE run_key = ? AND "
                               "name IN ('platform_power', 'power_cap') ORDER BY name, time",
                               [r["run_key"]]).fetchall()
            t = np.array([x[1] for x in rows if x[0] == "platform_power"], dtype=np.int64)
            w = np.array([x[2] for x in rows if x[0] == "platform_power"], dtype=np.float64)
            power[r["dispatcher"]] = (t, w)
            bt = [x[1] for x in rows if x[0] == "power_cap"]
            if bt and not len(budget[0]):
                budget = (np.array(bt, dtype=np.int64),
                          np.array([x[2] for x in rows if x[0] == "power_cap"],
                                   dtype=np.float64))
        origin = min((int(t[0]) for t, _ in power.values() if len(t)), default=0)
        fig = plots.power_against_budget(
            power, budget, origin=origin, colours=colours,
            title=f"{first['trace']} ({first.get('workload')}), budget {cap}")
        return _figure(fig, "power against the budget",
                       f"Platform power over time against the budget {html.escape(cap)} "
                       "(dashed) on one instance, one line per method (Borghesi et al. 2018 "
                       "Figure 1b "
                       "style); hours from the first start.")
    return _note("No power series stored (store_series = false): no power-over-time "
                 "figure.")


def _power_baseline(runs: list[dict[str, Any]], asked: str | None) -> str:
    """The power section's baseline dispatcher: ``asked`` when given, else ``easy`` when
    a run has it, else the first dispatcher label of the runs with a cap."""
    if asked is not None:
        return asked
    capped = [r["dispatcher"] for r in runs if r.get("cap") is not None]
    return "easy" if "easy" in capped else sorted(capped)[0]


def _unfinished_note(unfinished: list[dict[str, Any]], shown: int = 10) -> str:
    """The unfinished runs left out, listed (the first ``shown``) with their job
    counts."""
    items = "".join(
        f"<li><code>{html.escape(str(r['run_key']))}</code> "
        f"{html.escape(str(r.get('campaign')))}/{html.escape(store.describe_unfinished(r))}"
        "</li>" for r in unfinished[:shown])
    more = f"<li>... and {len(unfinished) - shown} more</li>" if len(unfinished) > shown \
        else ""
    return (f'<p class="note">{len(unfinished)} unfinished runs left out (stopped at their '
            "wall-clock budget: their metrics cover only the jobs that happened to end; "
            "<code>dispatchlab report --include-unfinished</code> uses them, marked):</p>"
            f"<ul>{items}{more}</ul>\n")


def _outdated_note(outdated: list[dict[str, Any]], shown: int = 10) -> str:
    """The outdated runs left out, listed (the first ``shown``) with the reason."""
    fields = ("campaign", "trace", "platform", "dispatcher", "predictor", "workload")

    def describe(r: dict[str, Any]) -> str:
        return "/".join(str(r.get(k)) for k in fields)

    items = "".join(
        f"<li><code>{html.escape(str(r['run_key']))}</code> {html.escape(describe(r))}: "
        f"{html.escape(str(r.get('outdated')))}</li>" for r in outdated[:shown])
    more = f"<li>... and {len(outdated) - shown} more</li>" if len(outdated) > shown else ""
    return (f'<p class="note">{len(outdated)} outdated runs left out (made by other code '
            "than the current one; <code>dispatchlab campaign run --rerun</code> replaces "
            f"them):</p><ul>{items}{more}</ul>\n")
