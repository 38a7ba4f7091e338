"""Figures for notebooks and reports, from plain numpy arrays.

Every function returns a :class:`matplotlib.figure.Figure` built directly (no pyplot,
no global state, no backend choice): show it in a notebook by evaluating it, or write
it with ``fig.savefig("x.png")``. Inputs are numpy arrays and mappings ``label ->
array`` (a label is usually ``"dispatcher-predictor"``), never a database: see
:mod:`dispatchlab.report` for figures drawn from a campaign results database.

Conventions:

- times are integer seconds in the trace's time origin after slicing (the values the
  simulation used); axes show them as hours or days from a stated origin;
- box plots (as in seed paper 000) show min / max whiskers, the quartile box, the
  median line and the mean as a triangle, with statistics from
  :func:`dispatchlab.study.weighted_box_stats` (inverted-CDF quantiles); NaN values
  (rejected jobs) are ignored; on a log axis values below the axis floor (e.g. 0) are
  drawn at the floor;
- step functions are :class:`~dispatchlab.metrics.StepFunction` objects; statistics over
  time are time-weighted and computed on breakpoints, never one value per second.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from dispatchlab.errors import InputError
from dispatchlab.metrics import JOB_CLASS_LABELS, StepFunction
from dispatchlab.study import merged_distributions, weighted_box_stats

#: Default largest number of jobs :func:`gantt` draws.
GANTT_MAX_JOBS = 3000
#: Default largest number of points per line :func:`over_time` draws.
OVER_TIME_MAX_POINTS = 4000

_MEANPROPS = {"marker": "^", "markerfacecolor": "black", "markeredgecolor": "black",
              "markersize": 5}


# ----------------------------------------------------------------------- helpers
def _predictor_part(label: str) -> str:
    """The part after the first ``-`` of ``dispatcher-predictor`` (the whole label
    otherwise): boxes of the same predictor share a colour."""
    return label.split("-", 1)[1] if "-" in label else label


def _colours(labels: Sequence[str]) -> list[str]:
    keys: dict[str, str] = {}
    for lab in labels:
        keys.setdefault(_predictor_part(lab), f"C{len(keys) % 10}")
    return [keys[_predictor_part(lab)] for lab in labels]


def _log_floor(arrays: Sequence[np.ndarray], default: float = 0.8) -> float:
    """Bottom of a log axis: 0.8 x the smallest positive finite value, at most ``default``."""
    pos = [a[np.isfinite(a) & (a > 0)] for a in arrays]
    pos = [p for p in pos if p.size]
    return min(default, 0.8 * min(float(p.min()) for p in pos)) if pos else default


def _draw_boxes(ax: Axes, stats: list[dict[str, Any]], colours: Sequence[str], *,
                log: bool, floor: float, ylabel: str) -> None:
    """One box per ``stats`` entry at positions 0..n-1; empty sets draw no box but keep
    their tick (labelled ``n=0``)."""
    shown, positions, faces = [], [], []
    for k, s in enumerate(stats):
        if s["n"] == 0:
            continue
        s = dict(s)
        if log:
            for key in ("whislo", "q1", "med", "q3", "whishi", "mean"):
                s[key] = max(s[key], floor)
        shown.append(s)
        positions.append(k)
        faces.append(colours[k])
    if shown:
        parts = ax.bxp(shown, positions=positions, widths=0.7, showmeans=True,
                       showfliers=False, patch_artist=True, meanprops=_MEANPROPS,
                       medianprops={"color": "black"})
        for patch, colour in zip(parts["boxes"], faces, strict=True):
            patch.set_facecolor(colour)
            patch.set_alpha(0.75)
    ax.set_xlim(-0.6, len(stats) - 0.4)
    ax.set_xticks(range(len(stats)))
    ax.set_xticklabels([f"{s['label']}\nn={s['n']:,.0f}" for s in stats],
                       rotation=30 if len(stats) > 4 else 0,
                       ha="right" if len(stats) > 4 else "center", fontsize="small")
    if log:
        ax.set_yscale("log")
        ax.set_ylim(bottom=floor)
        top = max((s["whishi"] for s in shown), default=floor)
        if top > 100 * floor:  # minor ticks of many decades cost time and add nothing
            ax.yaxis.set_minor_locator(NullLocator())
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", which="major", alpha=0.3)


def _width(n_boxes: int) -> float:
    return max(5.0, 1.5 + 0.6 * n_boxes)


def _time_scale(span: float) -> tuple[float, str]:
    """Divisor and unit name for an axis covering ``span`` seconds."""
    return (86400.0, "days") if span > 3 * 86400 else (3600.0, "hours")


# ------------------------------------------------------------------- box plots
def slowdown_boxes(values: Mapping[str, np.ndarray], *,
                   classes: Mapping[str, np.ndarray] | None = None,
                   ylabel: str = "slowdown", title: str | None = None) -> Figure:
    """Box plots of per-job values (slowdown, bounded slowdown...) on a log y axis.

    ``values`` maps a label (``"dispatcher-predictor"``) to one value per job; NaN
    (rejected jobs) is ignored. Boxes of the same predictor (the part after the first
    ``-``) share a colour. With ``classes`` (label -> job class per job, aligned with
    ``values[label]``: ``"short"`` / ``"medium"`` / ``"long"`` strings or the codes
    0 / 1 / 2 of :func:`dispatchlab.metrics.job_columns`; anything else is left out)
    the figure has one panel per class, short / medium / long, with one box per label
    (seed paper 000, Figure 4). Each tick says how many jobs the box holds."""
    labels = list(values)
    if not labels:
        raise InputError("slowdown_boxes needs at least one labelled array")
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}
    floor = _log_floor(list(arrays.values()))
    colours = _colours(labels)
    fig = Figure(figsize=(_width(len(labels)) * (2.6 if classes is not None else 1), 4.8),
                 layout="constrained")
    if classes is None:
        ax = fig.subplots()
        stats = [weighted_box_stats(arrays[k], label=k) for k in labels]
        _draw_boxes(ax, stats, colours, log=True, floor=floor, ylabel=ylabel)
        ax.set_title(title or f"{ylabel} per job")
        return fig
    axes = fig.subplots(1, len(JOB_CLASS_LABELS), sharey=True)
    for code, (ax, name) in enumerate(zip(axes, JOB_CLASS_LABELS, strict=True)):
        stats = []
        for k in labels:
            c = np.asarray(classes[k])
            if len(c) != len(arrays[k]):
                raise InputError(f"classes[{k!r}] has {len(c)} entries for "
                                 f"{len(arrays[k])} values")
            pick = (c == name) if c.dtype.kind in "OUS" else (c == code)
            stats.append(weighted_box_stats(arrays[k][pick], label=k))
        _draw_boxes(ax, stats, colours, log=True, floor=floor,
                    ylabel=ylabel if code == 0 else "")
        ax.set_title(f"{name} jobs")
    fig.suptitle(title or f"{ylabel} per job class")
    return fig


def queue_length_distribution(series: Mapping[str, StepFunction], *,
                              title: str | None = None) -> Figure:
    """Time-weighted box plots of the number of waiting jobs (seed paper 000, Figure 5).

    Every second of a run weighs the same; the periods where the queue is empty in
    *every* series are left out (so idle periods do not pile up at 0). Computed on the
    union of the series' breakpoints (:func:`dispatchlab.study.merged_distributions`).
    Log y axis; 0 (an empty queue while another series has a queue) is drawn at the
    bottom edge."""
    labels = list(series)
    if not labels:
        raise InputError("queue_length_distribution needs at least one series")
    dists = merged_distributions([series[k] for k in labels])
    stats = [weighted_box_stats(v, s, label=k) for (v, s), k in zip(dists, labels, strict=True)]
    kept = int(dists[0][1].sum()) if dists else 0
    fig = Figure(figsize=(_width(len(labels)), 4.8), layout="constrained")
    ax = fig.subplots()
    _draw_boxes(ax, stats, _colours(labels), log=True, floor=0.8,
                ylabel="waiting jobs (0 drawn at the bottom)")
    ax.set_xticklabels([s["label"] for s in stats], rotation=30 if len(stats) > 4 else 0,
                       ha="right" if len(stats) > 4 else "center", fontsize="small")
    div, unit = _time_scale(kept)
    ax.set_title(title or "Waiting jobs, time-weighted\n"
                 f"({kept / div:,.1f} {unit} where some queue is non-empty)",
                 fontsize="medium")
    return fig


def _binned(f: StepFunction, edges: np.ndarray) -> np.ndarray:
    """Time-weighted mean of ``f`` over each ``[edges[k], edges[k+1])`` (exact, from
    the cumulative integral at the breakpoints)."""
    t = f.times.astype(np.float64)
    v = f.values.astype(np.float64)
    cum = np.concatenate(([0.0], np.cumsum(v * np.diff(np.append(t, float(f.end))))))

    def integral(x: np.ndarray) -> np.ndarray:
        x = np.clip(x, t[0], float(f.end))
        k = np.clip(np.searchsorted(t, x, side="right") - 1, 0, len(t) - 1)
        return cum[k] + v[k] * (x - t[k])

    return np.diff(integral(edges)) / np.diff(edges)


def over_time(series: Mapping[str, StepFunction], *, ylabel: str, title: str,
              max_points: int = OVER_TIME_MAX_POINTS) -> Figure:
    """Step plots of series over time, one panel per label (shared axes).

    The x axis is days (or hours for spans up to 3 days) from the earliest series
    start; the label states that origin in trace seconds. A series with more than
    ``max_points`` breakpoints is drawn as its exact time-weighted mean over
    ``max_points`` equal bins, and the panel says so."""
    labels = list(series)
    if not labels:
        raise InputError("over_time needs at least one series")
    nonempty = [f for f in series.values() if len(f)]
    t0 = min((f.start for f in nonempty), default=0)
    t1 = max((int(f.end) for f in nonempty), default=t0 + 1)
    div, unit = _time_scale(t1 - t0)
    fig = Figure(figsize=(9, 0.6 + 1.6 * len(labels)), layout="constrained")
    axes = np.atleast_1d(fig.subplots(len(labels), 1, sharex=True, sharey=True, squeeze=False)
                         [:, 0])
    for k, (ax, lab) in enumerate(zip(axes, labels, strict=True)):
        f = series[lab]
        note = ""
        if len(f) == 0:
            note = " (no data)"
        elif len(f) > max_points:
            edges = np.linspace(f.start, float(f.end), max_points + 1)
            vals = _binned(f, edges)
            ax.stairs(vals, (edges - t0) / div, color=f"C{k % 10}", linewidth=0.8)
            note = f" (mean per {(edges[1] - edges[0]) / 60:,.0f}-minute bin)"
        else:
            x = (np.append(f.times, f.end).astype(np.float64) - t0) / div
            ax.stairs(f.values.astype(np.float64), x, color=f"C{k % 10}", linewidth=0.8)
        ax.set_title(f"{lab}{note}", fontsize="small", loc="left")
        ax.set_ylabel(ylabel, fontsize="small")
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel(f"{unit} from the series start (t = {t0:,} s in trace time)")
    fig.suptitle(title)
    return fig


def prediction_errors(estimate: Mapping[str, np.ndarray],
                      actual: Mapping[str, np.ndarray], *, title: str | None = None) -> Figure:
    """Distribution of run-time predictions per label (``estimate`` and ``actual`` in
    seconds, aligned per label; jobs with a negative estimate or actual, e.g. rejected,
    and NaN are left out).

    Left panel: the ratio estimate / actual on a log axis (1 = exact; above 1 the
    prediction was too long; ``actual`` is floored at 1 s). Right panel: the error
    estimate - actual in hours (symmetric log axis, linear within +-1 h)."""
    labels = list(estimate)
    if not labels:
        raise InputError("prediction_errors needs at least one labelled array")
    ratios, errors = {}, {}
    for k in labels:
        e = np.asarray(estimate[k], dtype=np.float64)
        a = np.asarray(actual[k], dtype=np.float64)
        if e.shape != a.shape:
            raise InputError(f"estimate[{k!r}] and actual[{k!r}] differ in length")
        ok = np.isfinite(e) & np.isfinite(a) & (e >= 0) & (a >= 0)
        ratios[k] = np.maximum(e[ok], 1.0) / np.maximum(a[ok], 1.0)
        errors[k] = (e[ok] - a[ok]) / 3600.0
    colours = _colours(labels)
    fig = Figure(figsize=(2 * _width(len(labels)), 4.8), layout="constrained")
    ax_r, ax_e = fig.subplots(1, 2)
    stats = [weighted_box_stats(ratios[k], label=k) for k in labels]
    _draw_boxes(ax_r, stats, colours, log=True, floor=_log_floor(list(ratios.values()), 0.5),
                ylabel="estimate / actual run (log)")
    ax_r.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax_r.set_title("ratio (1 = exact)")
    stats = [weighted_box_stats(errors[k], label=k) for k in labels]
    _draw_boxes(ax_e, stats, colours, log=False, floor=0.0,
                ylabel="estimate - actual run (hours)")
    ax_e.set_yscale("symlog", linthresh=1.0)
    ax_e.axhline(0.0, color="grey", linewidth=0.8, linestyle="--")
    ax_e.set_title("error (symlog, linear within ±1 h)")
    fig.suptitle(title or "Run-time prediction errors")
    return fig


# ------------------------------------------------------------------ core lanes
def _take_free(free: list[list[int]], procs: int) -> list[tuple[int, int]]:
    """Take ``procs`` lanes from the sorted, merged free list ``free`` (``[lo, hi)``)."""
    for k, (lo, hi) in enumerate(free):  # first fit, contiguous
        if hi - lo >= procs:
            if hi - lo == procs:
                del free[k]
            else:
                free[k][0] = lo + procs
            return [(lo, lo + procs)]
    # no contiguous block: largest blocks first (the fewest blocks); ties by lane order
    order = sorted(range(len(free)), key=lambda k: (-(free[k][1] - free[k][0]), free[k][0]))
    segments, need, emptied = [], procs, []
    for k in order:
        lo, hi = free[k]
        take = min(need, hi - lo)
        segments.append((lo, lo + take))
        if take == hi - lo:
            emptied.append(k)
        else:
            free[k][0] = lo + take
        need -= take
        if need == 0:
            break
    for k in sorted(emptied, reverse=True):
        del free[k]
    return sorted(segments)


def _give_back(free: list[list[int]], segments: list[tuple[int, int]]) -> None:
    """Return segments to the free list, merging adjacent blocks."""
    for lo, hi in segments:
        k = bisect_left(free, [lo, hi])
        if k > 0 and free[k - 1][1] == lo:
            k -= 1
            free[k][1] = hi
        else:
            free.insert(k, [lo, hi])
        if k + 1 < len(free) and free[k][1] == free[k + 1][0]:
            free[k][1] = free[k + 1][1]
            del free[k + 1]


def assign_core_lanes(start: np.ndarray, end: np.ndarray, procs: np.ndarray,
                      cores: int) -> list[list[tuple[int, int]]]:
    """Core lanes for a run whose placement was not simulated (pooled cores).

    Returns, per job (aligned with the inputs), a list of half-open lane segments
    ``(lane_lo, lane_hi)`` covering exactly ``procs`` lanes out of ``0 .. cores-1``;
    jobs that did not run (``start < 0``) get ``[]``. The assignment is made after the
    fact and is only a drawing aid:

    - jobs are taken by start time, ties in input order;
    - before a job is placed, the lanes of every job with ``end <= start`` are freed
      (a job ending at ``t`` frees its lanes for a job starting at ``t``);
    - a job takes the lowest contiguous block of free lanes that fits (first fit);
    - if no contiguous block fits (fragmentation), the job is split over the fewest
      free blocks (largest first); such a job has several segments (count them with
      ``sum(len(s) > 1 for s in lanes)``).

    Jobs running at the same time never share a lane. Raises :class:`InputError` if
    running jobs would need more than ``cores`` lanes."""
    s = np.asarray(start, dtype=np.int64)
    e = np.asarray(end, dtype=np.int64)
    p = np.asarray(procs, dtype=np.int64)
    if not (len(s) == len(e) == len(p)):
        raise InputError("start, end and procs must have the same length")
    cores = int(cores)
    if cores < 0:
        raise InputError(f"cores must be >= 0, got {cores}")
    lanes: list[list[tuple[int, int]]] = [[] for _ in range(len(s))]
    free: list[list[int]] = [[0, cores]] if cores else []
    available = cores
    running: list[tuple[int, int]] = []  # heap of (end, job)
    for j in np.lexsort((np.arange(len(s)), s)).tolist():
        t = int(s[j])
        if t < 0:
            continue
        while running and running[0][0] <= t:
            _, done = heapq.heappop(running)
            _give_back(free, lanes[done])
            available += int(p[done])
        need = int(p[j])
        if need < 0 or int(e[j]) < t:
            raise InputError(f"job {j}: procs must be >= 0 and end >= start")
        if need > available:
            raise InputError(f"job {j} needs {need} cores at t = {t} s but only {available} "
                             f"of {cores} are free: more cores than the platform has")
        if need:
            lanes[j] = _take_free(free, need)
            available -= need
            heapq.heappush(running, (int(e[j]), j))
    return lanes


# ------------------------------------------------------------------------ gantt
def _parse_allocation(text: str, row: int) -> list[tuple[int, int]]:
    try:
        parts = [item.split(":") for item in text.split(",")]
        return [(int(node), int(units)) for node, units in parts]
    except ValueError:
        raise InputError(f"job row {row}: allocation {text!r} is not 'node:units,...'"
                         ) from None


def gantt(job_id: np.ndarray, start: np.ndarray, end: np.ndarray, procs: np.ndarray, *,
          window: tuple[int, int] | None, allocation: Sequence[str | None] | None = None,
          nodes: int | None = None, cores: int | None = None, title: str | None = None,
          max_jobs: int = GANTT_MAX_JOBS) -> Figure:
    """A Gantt chart of the jobs running in ``window = (t0, t1)`` (trace seconds;
    None: from the first start to the last end).

    Each job is a rectangle from ``max(start, t0)`` to ``min(end, t1)``, one colour per
    job (the same on all its segments / nodes). Jobs that did not run (``start < 0``)
    are left out; a job lasting 0 s is drawn as a thin line. When more than ``max_jobs``
    jobs overlap the window, only the ``max_jobs`` that start first are drawn and the
    title says how many were left out.

    - **Node-level runs** (``allocation`` given: ``"node:units,node:units"`` per job,
      None for jobs that did not run): the y axis is nodes ``0 .. nodes-1`` (``nodes``
      None: the largest node number seen + 1). Within a node's band, the job's units on
      that node get sub-lanes (:func:`assign_core_lanes` per node, ``cores`` units per
      node, or the per-node peak seen when ``cores`` is None), so jobs sharing a node do
      not overlap; a job on several nodes has a rectangle on each.
    - **Pooled runs** (no ``allocation``): the y axis is core lanes ``0 .. cores-1``
      assigned after the run by :func:`assign_core_lanes` (placement was not
      simulated; the axis says so; split jobs are counted in the title).
    """
    ids = np.asarray(job_id)
    s = np.asarray(start, dtype=np.int64)
    e = np.asarray(end, dtype=np.int64)
    p = np.asarray(procs, dtype=np.int64)
    if not (len(ids) == len(s) == len(e) == len(p)):
        raise InputError("job_id, start, end and procs must have the same length")
    if allocation is not None and len(allocation) != len(s):
        raise InputError("allocation must have one entry per job")
    ran = s >= 0
    if window is None:
        t0 = int(s[ran].min()) if ran.any() else 0
        t1 = int(e[ran].max()) if ran.any() else t0 + 1
        t1 = max(t1, t0 + 1)
    else:
        t0, t1 = int(window[0]), int(window[1])
        if t1 <= t0:
            raise InputError(f"the Gantt window must have t0 < t1, got ({t0}, {t1})")
    inside = ran & (s < t1) & ((e > t0) | ((e == s) & (s >= t0)))
    rows = np.flatnonzero(inside)
    rows = rows[np.lexsort((rows, s[rows]))]
    left_out = max(0, len(rows) - max_jobs)
    rows = rows[:max_jobs]
    div, unit = _time_scale(t1 - t0)
    cmap_colours = [f"C{k}" for k in range(10)]

    def colour(row: int) -> str:
        return cmap_colours[hash(int(ids[row])) % 10]

    boxes: list[np.ndarray] = []
    faces: list[str] = []

    def add(row: int, y0: float, y1: float) -> None:
        x0 = (max(int(s[row]), t0) - t0) / div
        x1 = (min(int(e[row]), t1) - t0) / div
        boxes.append(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))
        faces.append(colour(row))

    fig = Figure(figsize=(10, 5.5), layout="constrained")
    ax = fig.subplots()
    notes = []
    if allocation is not None:
        per_node: dict[int, list[tuple[int, int]]] = {}  # node -> (row, units)
        for row in rows.tolist():
            text = allocation[row]
            if not text:
                continue
            for node, units in _parse_allocation(text, row):
                per_node.setdefault(node, []).append((row, units))
        n_nodes = nodes if nodes is not None else (max(per_node, default=-1) + 1)
        for node, items in per_node.items():
            r = np.array([x[0] for x in items])
            u = np.array([x[1] for x in items])
            cap = cores if cores is not None else int(u.sum())
            lanes = assign_core_lanes(s[r], e[r], u, cap)
            used = cap if cores is not None else max(
                (hi for segs in lanes for _, hi in segs), default=1)
            for row, segs in zip(r.tolist(), lanes, strict=True):
                for lo, hi in segs:
                    add(row, node + 0.05 + 0.9 * lo / used, node + 0.05 + 0.9 * hi / used)
        ax.set_ylim(0, max(n_nodes, 1))
        if n_nodes <= 40:  # one labelled tick per node, at the band's centre
            ax.set_yticks([k + 0.5 for k in range(n_nodes)], [str(k) for k in range(n_nodes)],
                          fontsize="small")
        ax.set_ylabel("node (bands split among the jobs sharing a node)")
        what = "node-level placement"
    else:
        cap = cores if cores is not None else int(p[rows].sum())
        lanes = assign_core_lanes(s[rows], e[rows], p[rows], cap)
        top = cap if cores is not None else max((hi for segs in lanes for _, hi in segs),
                                                 default=1)
        for row, segs in zip(rows.tolist(), lanes, strict=True):
            for lo, hi in segs:
                add(row, lo, hi)
        split = sum(len(segs) > 1 for segs in lanes)
        if split:
            notes.append(f"{split} jobs split over several lane blocks")
        ax.set_ylim(0, max(top, 1))
        ax.set_ylabel("core lanes assigned after the run\n(placement not simulated)")
        what = "core lanes assigned after the run (placement not simulated)"
    if boxes:
        ax.add_collection(PolyCollection(boxes, facecolors=faces, edgecolors="black",
                                         linewidths=0.3, alpha=0.85))
    ax.set_xlim(0, (t1 - t0) / div)
    ax.set_xlabel(f"{unit} from t = {t0:,} s (trace time)")
    ax.grid(axis="x", alpha=0.3)
    if left_out:
        notes.append(f"{left_out:,} later-starting jobs not drawn")
    head = title or f"Jobs running in [{t0:,}, {t1:,}) s"
    fig.suptitle(f"{head}: {len(rows):,} jobs, {what}"
                 + (f"\n{'; '.join(notes)}" if notes else ""), fontsize="medium")
    return fig
