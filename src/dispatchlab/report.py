"""A static HTML report of a campaign results database (``dispatchlab report``).

:func:`write_report` reads a results database (:mod:`dispatchlab.campaign.store`,
opened read-only after its version check) and writes one self-contained page,
``index.html``: figures are embedded PNG data URIs, the CSS is inline, nothing is
fetched from the network, so the page opens from disk anywhere.

What the page holds, for the selected runs (all, or those matching ``runs_filter``):

- **Groups.** Done runs are grouped by ``(trace, platform)`` labels: one section per
  group, because slowdowns of different workloads or machines do not compare. Within a
  group, boxes are labelled ``dispatcher-predictor`` (the campaign labels) and the
  jobs of every run with that label (several seeds or repetitions) are **pooled** into
  one box.
- **Slowdown and bounded slowdown** box plots (log scale; min / max whiskers, quartile
  box, median line, mean triangle), over all jobs that ran and per job class short /
  medium / long (:func:`dispatchlab.plots.slowdown_boxes`). Rejected jobs are left out.
  A label with more than ``max_jobs_per_box`` job rows is drawn from a uniform random
  sample of that many rows (DuckDB reservoir sample, fixed seed) so memory stays
  bounded; the page says where.
- **Prediction errors** (:func:`dispatchlab.plots.prediction_errors`): estimate at
  submission versus the trace's run time, when the jobs carry estimates.
- **Waiting jobs, time-weighted** (:func:`dispatchlab.plots.queue_length_distribution`)
  and **utilization / queue length over time** (:func:`dispatchlab.plots.over_time`):
  one box / panel per run (series are not pooled), for at most ``max_runs_per_figure``
  runs per group (the first ones in label, seed, repetition order; the page says how
  many were left out).
- **Gantt chart** (:func:`dispatchlab.plots.gantt`) of one run in a time window:
  ``gantt_run`` (a run key) or by default the first done run with stored jobs;
  ``gantt_window`` (trace seconds) or by default one day centred on the run's longest
  queue (the first time the ``queue_length`` series reaches its maximum), clipped to the
  series horizon, or the first day from the first start when no series is stored.
  Node-level runs (jobs with an ``allocation``) show nodes; other runs show core lanes
  assigned after the run.
- **A table of every selected run** (done and failed): configuration labels, status,
  error, metrics, timings, and the full configuration JSON (HTML-escaped).

Runs without stored ``jobs`` / ``series`` rows contribute no figure; the page says so.
Times are seconds in each trace's time origin after slicing.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.campaign import store
from dispatchlab.errors import InputError, output_folder
from dispatchlab.metrics import StepFunction

#: Default largest number of job rows per box-plot label (above: a uniform sample).
MAX_JOBS_PER_BOX = 500_000
#: Default largest number of runs per series figure (queue distribution, over time).
MAX_RUNS_PER_FIGURE = 8
#: Length (s) of the default Gantt window.
GANTT_DEFAULT_SPAN = 86_400
#: Figure resolution (dots per inch) of the embedded PNGs.
DPI = 90

#: Columns of the runs table (``runs`` columns), in order.
TABLE_COLUMNS: tuple[str, ...] = (
    "run_key", "trace", "platform", "dispatcher", "predictor", "seed", "repetition",
    "tau", "overrun", "status", "attempts", "error", "jobs", "rejected", "killed",
    "mean_wait", "median_wait", "p95_wait", "max_wait", "mean_slowdown", "mean_bsld",
    "p95_bsld", "bsld_short", "bsld_medium", "bsld_long", "utilization", "makespan",
    "mean_queue_length", "cores", "node_level", "nodes", "wall_seconds", "simulate_seconds",
    "worker", "finished_at", "version",
)

_CSS = """
body { font-family: sans-serif; margin: 1.5em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.5em; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; }
p.note { font-size: 0.9em; color: #555; background: #f6f6f6; padding: 0.4em 0.6em; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.8em; }
th, td { border: 1px solid #ccc; padding: 2px 5px; text-align: right; white-space: nowrap; }
th { background: #eee; position: sticky; top: 0; }
td.text { text-align: left; }
tr.failed td { background: #fde8e8; }
td.error { white-space: normal; min-width: 20em; text-align: left; }
details pre { text-align: left; white-space: pre-wrap; max-width: 40em; }
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


def _select_runs(con, runs_filter: str | None) -> list[dict[str, Any]]:
    import duckdb

    where = "TRUE" if runs_filter is None else f"({runs_filter})"
    sql = (f"SELECT * FROM runs WHERE {where} ORDER BY trace, platform, dispatcher, "
           "predictor, seed, repetition, run_key")
    try:
        runs = _rows(con, sql)
    except duckdb.Error as exc:
        raise InputError(f"bad runs filter {runs_filter!r}: {str(exc).splitlines()[0]}",
                         field="runs filter") from None
    if not runs:
        what = "the database holds no runs" if runs_filter is None else \
            f"no run matches the filter {runs_filter!r}"
        raise InputError(what)
    return runs


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return f"{value:.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(value)


# ---------------------------------------------------------------------- sections
def _job_arrays(con, keys: list[str], limit: int) -> tuple[dict[str, np.ndarray], int]:
    """Job columns of the runs ``keys`` (jobs that ran), a uniform sample of ``limit``
    rows when there are more; returns the arrays and the number of rows available."""
    base = ("SELECT slowdown, bsld, job_class, estimate, trace_run FROM jobs "
            "WHERE list_contains(?, run_key) AND status <> 'rejected'")
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


def _box_section(con, runs: list[dict[str, Any]], max_jobs: int) -> str:
    from dispatchlab import plots

    by_label: dict[str, list[str]] = {}
    for r in runs:
        by_label.setdefault(_label(r), []).append(r["run_key"])
    arrays, notes, empty = {}, [], []
    for lab, keys in by_label.items():
        cols, total = _job_arrays(con, keys, max_jobs)
        if total == 0:
            empty.append(lab)
            continue
        arrays[lab] = cols
        if total > max_jobs:
            notes.append(f"{lab}: a uniform sample of {max_jobs:,} of {total:,} jobs")
    out = ""
    if empty:
        out += _note("No stored jobs (the campaign did not store them, or every job was "
                     f"rejected) for: {', '.join(empty)}; they have no box.")
    if not arrays:
        return out
    if notes:
        out += _note("Box plots drawn from samples to bound memory: " + "; ".join(notes)
                     + ".")
    pooled = any(len(by_label[lab]) > 1 for lab in arrays)
    scope = ("jobs of all runs with the same label pooled (seeds, repetitions); "
             if pooled else "")
    for col, name in (("slowdown", "slowdown"), ("bsld", "bounded slowdown")):
        values = {lab: a[col] for lab, a in arrays.items()}
        out += _figure(plots.slowdown_boxes(values, ylabel=name, title=f"Job {name}"),
                       f"{name} box plots",
                       f"Job {name} per dispatcher-predictor ({scope}rejected jobs left "
                       "out). Whiskers: min / max; box: quartiles; line: median; "
                       "triangle: mean; log scale.")
        classes = {lab: a["job_class"] for lab, a in arrays.items()}
        out += _figure(plots.slowdown_boxes(values, classes=classes, ylabel=name,
                                            title=f"Job {name} by class"),
                       f"{name} by job class",
                       f"Job {name} per job class (short < 1 h <= medium <= 12 h < long, "
                       "by simulated run time).")
    est = {lab: a["estimate"] for lab, a in arrays.items() if np.any(a["estimate"] >= 0)}
    if est:
        act = {lab: arrays[lab]["trace_run"] for lab in est}
        out += _figure(plots.prediction_errors(est, act), "prediction errors",
                       "Run-time estimate given at submission versus the trace's run time "
                       "(all jobs that ran).")
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


def _series_section(con, runs: list[dict[str, Any]], max_runs: int) -> str:
    from dispatchlab import plots

    with_series = [r for r in runs if con.execute(
        "SELECT count(*) FROM series WHERE run_key = ?", [r["run_key"]]).fetchone()[0]]
    out = ""
    if len(with_series) < len(runs):
        out += _note(f"{len(runs) - len(with_series)} of {len(runs)} runs have no stored "
                     "series (the campaign did not store them); they are not drawn.")
    if not with_series:
        return out
    shown = with_series[:max_runs]
    if len(with_series) > max_runs:
        out += _note(f"Series figures show the first {max_runs} of {len(with_series)} runs "
                     "(label, seed, repetition order); raise max_runs_per_figure for more.")
    counts: dict[str, int] = {}
    for r in shown:
        counts[_label(r)] = counts.get(_label(r), 0) + 1
    funcs: dict[str, dict[str, StepFunction]] = {"queue_length": {}, "utilization": {}}
    for r in shown:
        lab = _label(r)
        if counts[lab] > 1:
            lab += f" seed {r['seed']} rep {r['repetition']}"
        for name, f in _series(con, r).items():
            funcs[name][lab] = f
    if funcs["queue_length"]:
        out += _figure(plots.queue_length_distribution(funcs["queue_length"]),
                       "waiting jobs distribution",
                       "Number of waiting jobs, time-weighted (every second weighs the "
                       "same), leaving out the periods where the queue is empty in every "
                       "run shown. One box per run.")
    if funcs["utilization"]:
        out += _figure(plots.over_time(funcs["utilization"], ylabel="utilization",
                                       title="Utilization over time"),
                       "utilization over time",
                       "Fraction of the platform's primary resource in use by the measured "
                       "jobs.")
    if funcs["queue_length"]:
        out += _figure(plots.over_time(funcs["queue_length"], ylabel="waiting jobs",
                                       title="Waiting jobs over time"),
                       "queue length over time", "Number of waiting (measured) jobs.")
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
    from dispatchlab import plots

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


def _table(runs: list[dict[str, Any]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in (*TABLE_COLUMNS, "config"))
    lines = [f'<div class="table-wrap"><table id="runs"><thead><tr>{head}</tr></thead><tbody>']
    for r in runs:
        cells = []
        for c in TABLE_COLUMNS:
            v = r.get(c)
            cls = "error" if c == "error" else "text" if isinstance(v, str) else ""
            attr = f' class="{cls}"' if cls else ""
            cells.append(f"<td{attr}>{html.escape(_fmt(v))}</td>")
        try:
            config = json.dumps(json.loads(r["config"]), indent=1, sort_keys=True)
        except (TypeError, ValueError):
            config = str(r.get("config"))
        cells.append(f'<td class="text"><details><summary>config</summary><pre>'
                     f"{html.escape(config)}</pre></details></td>")
        status = "failed" if r.get("status") != "done" else "done"
        lines.append(f'<tr class="{status}">{"".join(cells)}</tr>')
    lines.append("</tbody></table></div>")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- entry
def write_report(db: str | Path, out_dir: str | Path, *, runs_filter: str | None = None,
                 gantt_run: str | None = None, gantt_window: tuple[int, int] | None = None,
                 max_runs_per_figure: int = MAX_RUNS_PER_FIGURE,
                 max_jobs_per_box: int = MAX_JOBS_PER_BOX) -> Path:
    """Write ``out_dir/index.html`` for the runs of results database ``db``; return its path.

    ``runs_filter`` is an SQL boolean expression over the ``runs`` columns (e.g.
    ``dispatcher = 'easy' AND seed < 3``); a filter DuckDB rejects raises
    :class:`InputError` naming it, and so does a filter (or database) with no runs.
    ``gantt_run`` is a run key among the selected runs (done, with stored jobs);
    ``gantt_window = (t0, t1)`` trace seconds, ``t0 < t1``. See the module docstring
    for the page's content, grouping and defaults. The database is opened read-only
    (:func:`dispatchlab.campaign.store.open_read`: a newer schema is refused)."""
    if max_runs_per_figure < 1 or max_jobs_per_box < 1:
        raise InputError("max_runs_per_figure and max_jobs_per_box must be >= 1")
    if gantt_window is not None and int(gantt_window[1]) <= int(gantt_window[0]):
        raise InputError(f"the Gantt window must have T0 < T1, got "
                         f"{gantt_window[0]}:{gantt_window[1]}", field="gantt window")
    con = store.open_read(db)
    try:
        runs = _select_runs(con, runs_filter)
        if gantt_run is not None:  # checked before any figure is drawn
            _gantt_run(con, runs, gantt_run)
        done = [r for r in runs if r["status"] == "done"]
        failed = len(runs) - len(done)
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
        parts.append(_note(
            "Times are seconds from each trace's time origin after slicing. Runs are "
            "grouped by trace and platform; within a group, runs with the same "
            "dispatcher-predictor labels (seeds, repetitions) are pooled in the job box "
            "plots and drawn separately in the series figures."))
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in done:
            groups.setdefault((r["trace"], r["platform"]), []).append(r)
        if not groups:
            parts.append(_note("No selected run is done: no figures."))
        for (trace, platform), members in groups.items():
            parts.append(f"<h2>Trace {html.escape(str(trace))}, platform "
                         f"{html.escape(str(platform))} ({len(members)} runs)</h2>")
            parts.append("<h3>Job slowdown</h3>")
            parts.append(_box_section(con, members, max_jobs_per_box))
            parts.append("<h3>Queue and utilization</h3>")
            parts.append(_series_section(con, members, max_runs_per_figure))
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
