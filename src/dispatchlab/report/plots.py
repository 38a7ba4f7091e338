"""Figures for notebooks and reports, from plain numpy arrays.

Every function returns a :class:`matplotlib.figure.Figure` built directly (no pyplot,
no global state, no backend choice): show it in a notebook by evaluating it, or write
it with ``fig.savefig("x.png")``. Inputs are numpy arrays and mappings ``label ->
array`` (a label is any text, e.g. ``"easy-walltime"``), never a database: see
:mod:`dispatchlab.report.html` for figures drawn from a campaign results database.

Conventions:

- times are integer seconds in the trace's time origin after slicing (the values the
  simulation used); axes show them as hours or days from a stated origin;
- box plots (as in Galleguillos et al. 2017) show min / max whiskers, the quartile box, the
  median line and the mean as a triangle, with statistics from
  :func:`dispatchlab.metrics.distributions.weighted_box_stats` (inverted-CDF quantiles); NaN values
  (rejected jobs) are ignored; on a log axis values below the axis floor (e.g. 0) are
  drawn at the floor;
- step functions are :class:`~dispatchlab.metrics.StepFunction` objects; statistics over
  time are time-weighted and computed on breakpoints, never one value per second.

Colours and legends. Labels are never parsed. Every label-keyed function takes
``groups``, a mapping label -> colour group (usually the predictor name, given by the
caller; ``None``: every label is its own group; a label missing from the mapping is its
own group), and ``colours``, an optional mapping group -> colour. Groups get colours in
the order they first appear among the labels, from :func:`colour_map`; ``colours``
overrides it group by group (groups it does not name take the :data:`PALETTE` colours it
does not use, in first-appearance order). To keep one colour per predictor across
figures, build ``colours = colour_map(all_predictors)`` once and pass it to every call.
Every figure has a legend, outside the axes at the right of the (top) right panel: group
-> colour for box and scatter plots, one entry per line (its label) for line plots.

Power-cap figures (Carastan-Santos et al. 2024: :func:`cap_power_boxes`, :func:`time_above_cap`,
:func:`underuse_boxes`, :func:`turnaround_change`, :func:`window_start_bars`,
:func:`wait_by_size_class`) take ``cap -> method -> array`` (a cap label, e.g.
``"50%"``, then a method label, e.g. ``"easy-pc/real"``: one value per run, or per job
for the size classes) and draw one panel (or row of panels) per cap, in mapping order;
the per-run values are drawn as dots over the boxes / bars (each dot column is a
``Line2D`` with ``gid="runs"``, its y data the values in input order).

Prediction figures (:func:`prediction_errors`, :func:`prediction_error_curves`,
:func:`predicted_vs_actual`): a label whose errors are all exactly 0 (the ``real``
oracle) is *exact*; it is drawn but never moves the axis limits, which are set by the
other labels (by all of them if every label is exact), and the figure title names it.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.metrics import JOB_CLASS_LABELS, StepFunction
from dispatchlab.metrics.distributions import merged_distributions, weighted_box_stats

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw (not on import)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Default largest number of jobs :func:`gantt` draws.
GANTT_MAX_JOBS = 3000
#: Default largest number of points per line :func:`over_time` draws.
OVER_TIME_MAX_POINTS = 4000
#: Default largest number of jobs per label a predicted-vs-actual scatter draws (a
#: uniform sample with a fixed seed beyond it).
SCATTER_MAX_POINTS = 5000
#: Largest number of steps drawn per line of a signed-error CDF (exact steps, evenly
#: spaced in rank, beyond it).
_CDF_MAX_POINTS = 4000

#: Group colours in assignment order: matplotlib's ``tab10``, then the lighter
#: ``tab20`` shades; the 21st group starts over.
PALETTE: tuple[str, ...] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
    "#7f7f7f", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
    "#c7c7c7", "#dbdb8d", "#9edae5",
)
#: Line styles of the lines sharing a colour group, in order.
LINE_STYLES: tuple[str, ...] = ("-", "--", ":", "-.")

_MEANPROPS = {"marker": "^", "markerfacecolor": "black", "markeredgecolor": "black",
              "markersize": 5}
_LEGEND_KW: dict[str, Any] = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0),
                              "borderaxespad": 0.0, "fontsize": "small", "frameon": False}


# ----------------------------------------------------------------------- colours
def colour_map(groups: Sequence[str], colours: Mapping[str, str] | None = None
               ) -> dict[str, str]:
    """One colour per distinct group, in first-appearance order.

    The k-th distinct group gets ``PALETTE[k % len(PALETTE)]`` (hex strings). The result
    depends only on the order in which groups appear, never on their text: pass it as
    ``colours=`` to several figures to keep one colour per group across them.
    ``colours`` fixes the colour of the groups it names; the other groups take, in
    first-appearance order, the palette colours it does not use."""
    order = list(dict.fromkeys(groups))
    given = {g: str(colours[g]) for g in order if colours and g in colours}
    used = set(given.values())
    free = [c for c in PALETTE if c not in used] or list(PALETTE)
    out: dict[str, str] = {}
    k = 0
    for g in order:
        if g in given:
            out[g] = given[g]
        else:
            out[g] = free[k % len(free)]
            k += 1
    return out


@dataclass(frozen=True)
class _Colouring:
    """Resolved colours of one figure: label -> group, group -> colour (in order)."""

    group: dict[str, str]
    colour: dict[str, str]

    def of(self, label: str) -> str:
        return self.colour[self.group[label]]

    def styles(self) -> dict[str, str]:
        """Line style per label: the labels of a group cycle through LINE_STYLES."""
        seen: dict[str, int] = {}
        out = {}
        for lab, g in self.group.items():
            out[lab] = LINE_STYLES[seen.get(g, 0) % len(LINE_STYLES)]
            seen[g] = seen.get(g, 0) + 1
        return out


def _colouring(labels: Sequence[str], groups: Mapping[str, str] | None,
               colours: Mapping[str, str] | None) -> _Colouring:
    """Groups and colours of ``labels`` (see the module docstring)."""
    group = {lab: (str(groups.get(lab, lab)) if groups is not None else lab)
             for lab in labels}
    return _Colouring(group, colour_map(list(group.values()), colours))


def _group_legend(ax: Axes, col: _Colouring) -> None:
    """Legend group -> colour (box faces), outside the axes at the right."""
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=c, edgecolor="black", linewidth=0.5, alpha=0.75, label=g)
               for g, c in col.colour.items()]
    ax.legend(handles=handles, **_LEGEND_KW)


def _line_legend(ax: Axes, labels: Sequence[str], names: Mapping[str, str] | None = None
                 ) -> None:
    """Legend with one entry per line, in ``labels`` order (``names``: legend text per
    label when it differs from the label)."""
    found = dict(zip(*reversed(ax.get_legend_handles_labels()), strict=True))
    names = names or {}
    texts = [names.get(lab, lab) for lab in labels]
    ax.legend([found[t] for t in texts if t in found], [t for t in texts if t in found],
              **_LEGEND_KW)


# ----------------------------------------------------------------------- helpers
def _log_floor(arrays: Sequence[np.ndarray], default: float = 0.8) -> float:
    """Bottom of a log axis: 0.8 x the smallest positive finite value, at most ``default``."""
    pos = [a[np.isfinite(a) & (a > 0)] for a in arrays]
    pos = [p for p in pos if p.size]
    return min(default, 0.8 * min(float(p.min()) for p in pos)) if pos else default


def _limits_without(ax: Axes, draw_kept: Callable[[], None],
                    draw_excluded: Callable[[], None], *, x: bool, y: bool) -> None:
    """Draw with ``draw_kept``, freeze the autoscaled x / y limits it gives, then draw
    ``draw_excluded`` without moving them."""
    draw_kept()
    xlim, ylim = ax.get_xlim(), ax.get_ylim()
    draw_excluded()
    if x:
        ax.set_xlim(xlim)
    if y:
        ax.set_ylim(ylim)


def _draw_boxes(ax: Axes, stats: list[dict[str, Any]], colours: Sequence[str], *,
                log: bool, floor: float, ylabel: str, exclude: frozenset[int] = frozenset(),
                reference: float | None = None) -> None:
    """One box per ``stats`` entry at positions 0..n-1; empty sets draw no box but keep
    their tick (labelled ``n=0``). ``reference``: a dashed grey line drawn first (part
    of the y range). Boxes whose index is in ``exclude`` are drawn after the y limits
    were set by the other boxes and the reference, and do not move them."""
    from matplotlib.ticker import NullLocator

    if reference is not None:
        ax.axhline(reference, color="grey", linewidth=0.8, linestyle="--")
    if log:
        ax.set_yscale("log")
    shown: dict[int, dict[str, Any]] = {}
    for k, s in enumerate(stats):
        if s["n"] == 0:
            continue
        s = dict(s)
        if log:
            for key in ("whislo", "q1", "med", "q3", "whishi", "mean"):
                s[key] = max(s[key], floor)
        shown[k] = s

    def draw(idx: list[int]) -> None:
        if not idx:
            return
        parts = ax.bxp([shown[k] for k in idx], positions=idx, widths=0.7, showmeans=True,
                       showfliers=False, patch_artist=True, meanprops=_MEANPROPS,
                       medianprops={"color": "black"})
        for patch, k in zip(parts["boxes"], idx, strict=True):
            patch.set_facecolor(colours[k])
            patch.set_alpha(0.75)

    kept = [k for k in shown if k not in exclude]
    other = [k for k in shown if k in exclude]
    if kept and other:
        _limits_without(ax, lambda: draw(kept), lambda: draw(other), x=False, y=True)
    else:
        draw(kept + other)
    ax.set_xlim(-0.6, len(stats) - 0.4)
    ax.set_xticks(range(len(stats)))
    ax.set_xticklabels([f"{s['label']}\nn={s['n']:,.0f}" for s in stats],
                       rotation=30 if len(stats) > 4 else 0,
                       ha="right" if len(stats) > 4 else "center", fontsize="small")
    if log:
        ax.set_ylim(bottom=floor)
        top = max((s["whishi"] for s in shown.values()), default=floor)
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
                   ylabel: str = "slowdown", title: str | None = None,
                   groups: Mapping[str, str] | None = None,
                   colours: Mapping[str, str] | None = None) -> Figure:
    """Box plots of per-job values (slowdown, bounded slowdown...) on a log y axis.

    ``values`` maps a label to one value per job; NaN (rejected jobs) is ignored. Boxes
    are coloured by ``groups`` / ``colours`` (module docstring; e.g. group = predictor)
    and the legend maps each group to its colour. With ``classes`` (label -> job class
    per job, aligned with ``values[label]``: ``"short"`` / ``"medium"`` / ``"long"``
    strings or the codes 0 / 1 / 2 of :func:`dispatchlab.metrics.job_columns`; anything
    else is left out) the figure has one panel per class, short / medium / long, with
    one box per label (Galleguillos et al. 2017, Figure 4). Each tick says how many jobs the box
    holds."""
    from matplotlib.figure import Figure

    labels = list(values)
    if not labels:
        raise InputError("slowdown_boxes needs at least one labelled array")
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in values.items()}
    floor = _log_floor(list(arrays.values()))
    col = _colouring(labels, groups, colours)
    faces = [col.of(k) for k in labels]
    fig = Figure(figsize=(_width(len(labels)) * (2.6 if classes is not None else 1) + 1.2,
                          4.8), layout="constrained")
    if classes is None:
        ax = fig.subplots()
        stats = [weighted_box_stats(arrays[k], label=k) for k in labels]
        _draw_boxes(ax, stats, faces, log=True, floor=floor, ylabel=ylabel)
        ax.set_title(title or f"{ylabel} per job")
        _group_legend(ax, col)
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
        _draw_boxes(ax, stats, faces, log=True, floor=floor,
                    ylabel=ylabel if code == 0 else "")
        ax.set_title(f"{name} jobs")
    _group_legend(axes[-1], col)
    fig.suptitle(title or f"{ylabel} per job class")
    return fig


def queue_length_distribution(series: Mapping[str, StepFunction], *,
                              title: str | None = None,
                              groups: Mapping[str, str] | None = None,
                              colours: Mapping[str, str] | None = None) -> Figure:
    """Time-weighted box plots of the number of waiting jobs (Galleguillos et al. 2017, Figure 5).

    Every second of a run weighs the same; the periods where the queue is empty in
    *every* series are left out (so idle periods do not pile up at 0). Computed on the
    union of the series' breakpoints
    (:func:`dispatchlab.metrics.distributions.merged_distributions`).
    Log y axis; 0 (an empty queue while another series has a queue) is drawn at the
    bottom edge. Boxes coloured by ``groups`` / ``colours``, legend group -> colour."""
    from matplotlib.figure import Figure

    labels = list(series)
    if not labels:
        raise InputError("queue_length_distribution needs at least one series")
    col = _colouring(labels, groups, colours)
    dists = merged_distributions([series[k] for k in labels])
    stats = [weighted_box_stats(v, s, label=k) for (v, s), k in zip(dists, labels, strict=True)]
    kept = int(dists[0][1].sum()) if dists else 0
    fig = Figure(figsize=(_width(len(labels)) + 1.2, 4.8), layout="constrained")
    ax = fig.subplots()
    _draw_boxes(ax, stats, [col.of(k) for k in labels], log=True, floor=0.8,
                ylabel="waiting jobs (0 drawn at the bottom)")
    ax.set_xticklabels([s["label"] for s in stats], rotation=30 if len(stats) > 4 else 0,
                       ha="right" if len(stats) > 4 else "center", fontsize="small")
    div, unit = _time_scale(kept)
    ax.set_title(title or "Waiting jobs, time-weighted\n"
                 f"({kept / div:,.1f} {unit} where some queue is non-empty)",
                 fontsize="medium")
    _group_legend(ax, col)
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
              max_points: int = OVER_TIME_MAX_POINTS,
              groups: Mapping[str, str] | None = None,
              colours: Mapping[str, str] | None = None) -> Figure:
    """Step plots of several series over time, overlaid in one panel, with a legend
    of one entry per series (its label).

    A line's colour is its group's (``groups`` / ``colours``, module docstring); the
    lines of one group differ by line style (:data:`LINE_STYLES`, in label order). The x
    axis is days (or hours for spans up to 3 days) from the earliest series start; the
    axis label states that origin in trace seconds. A series with more than
    ``max_points`` breakpoints is drawn as its exact time-weighted mean over
    ``max_points`` equal bins, and its legend entry says so (``"(mean per N-minute
    bin)"``); an empty series has an entry ending in ``"(no data)"`` and no line."""
    from matplotlib.figure import Figure

    labels = list(series)
    if not labels:
        raise InputError("over_time needs at least one series")
    col = _colouring(labels, groups, colours)
    styles = col.styles()
    nonempty = [f for f in series.values() if len(f)]
    t0 = min((f.start for f in nonempty), default=0)
    t1 = max((int(f.end) for f in nonempty), default=t0 + 1)
    div, unit = _time_scale(t1 - t0)
    fig = Figure(figsize=(10.5, 4.2), layout="constrained")
    ax = fig.subplots()
    names = {}
    for lab in labels:
        f = series[lab]
        kw = {"color": col.of(lab), "linestyle": styles[lab], "linewidth": 1.0}
        if len(f) == 0:
            names[lab] = f"{lab} (no data)"
            ax.plot([], [], label=names[lab], **kw)
        elif len(f) > max_points:
            edges = np.linspace(f.start, float(f.end), max_points + 1)
            names[lab] = f"{lab} (mean per {(edges[1] - edges[0]) / 60:,.0f}-minute bin)"
            ax.stairs(_binned(f, edges), (edges - t0) / div, label=names[lab], **kw)
        else:
            x = (np.append(f.times, f.end).astype(np.float64) - t0) / div
            ax.stairs(f.values.astype(np.float64), x, label=lab, **kw)
    ax.set_ylabel(ylabel)
    ax.set_xlabel(f"{unit} from the series start (t = {t0:,} s in trace time)")
    ax.grid(alpha=0.3)
    ax.set_title(title)
    _line_legend(ax, labels, names)
    return fig


# ------------------------------------------------------------ prediction errors
def _prediction_pairs(estimate: Mapping[str, np.ndarray],
                      actual: Mapping[str, np.ndarray] | np.ndarray,
                      what: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """label -> (estimate, actual) in seconds (float64), jobs with a negative or NaN
    estimate or actual left out. ``actual`` is one array per label or one array for all."""
    labels = list(estimate)
    if not labels:
        raise InputError(f"{what} needs at least one labelled array")
    out = {}
    for k in labels:
        if isinstance(actual, Mapping) and k not in actual:
            raise InputError(f"{what}: no actual run times for {k!r}")
        e = np.asarray(estimate[k], dtype=np.float64)
        a = np.asarray(actual[k] if isinstance(actual, Mapping) else actual, dtype=np.float64)
        if e.shape != a.shape:
            raise InputError(f"estimate[{k!r}] and actual[{k!r}] differ in length")
        ok = np.isfinite(e) & np.isfinite(a) & (e >= 0) & (a >= 0)
        out[k] = (e[ok], a[ok])
    return out


def _exact(pairs: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> set[str]:
    """Labels with at least one job whose estimates all equal the actual run times."""
    return {k for k, (e, a) in pairs.items() if e.size and np.array_equal(e, a)}


def _exact_note(exact: set[str], labels: Sequence[str]) -> str:
    names = [k for k in labels if k in exact]
    return ("" if not names else "\nexact for every job (drawn, not used for the axis "
            f"limits): {', '.join(names)}")


def _scatter_limits(pairs: Mapping[str, tuple[np.ndarray, np.ndarray]], exact: set[str],
                    div: float) -> tuple[float, float]:
    """Common limits of both log axes of a predicted-vs-actual plot (values floored at
    1 s, divided by ``div``), from the non-exact labels (all if every label is exact)."""
    use = [k for k, (e, _) in pairs.items() if e.size and k not in exact]
    use = use or [k for k, (e, _) in pairs.items() if e.size]
    if not use:
        return 0.5 / div, 10.0 / div
    lo = min(min(float(pairs[k][0].min()), float(pairs[k][1].min())) for k in use)
    hi = max(max(float(pairs[k][0].max()), float(pairs[k][1].max())) for k in use)
    return max(lo, 1.0) / div / 1.6, max(hi, 1.0) / div * 1.6


def _scatter_panel(ax: Axes, pairs: Mapping[str, tuple[np.ndarray, np.ndarray]],
                   colour_of: Mapping[str, str], limits: tuple[float, float], *,
                   div: float, unit: str, max_points: int) -> bool:
    """Estimate (y) against actual run time (x), log-log in ``unit`` (seconds / ``div``;
    0 drawn at 1 s), with the diagonal. At most ``max_points`` jobs per label (uniform
    sample, fixed seed); the points of all labels are drawn in one shuffled layer, so no
    label systematically hides another. Returns whether some label was sampled."""
    rng = np.random.default_rng(0)
    xs, ys, cs = [], [], []
    sampled = False
    for lab, (e, a) in pairs.items():
        if len(e) > max_points:
            pick = np.sort(rng.choice(len(e), size=max_points, replace=False))
            e, a = e[pick], a[pick]
            sampled = True
        xs.append(np.maximum(a, 1.0) / div)
        ys.append(np.maximum(e, 1.0) / div)
        cs.extend([colour_of[lab]] * len(e))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.plot(limits, limits, color="black", linewidth=0.8, linestyle="--", zorder=3)
    if cs:
        order = rng.permutation(len(cs))
        ax.scatter(np.concatenate(xs)[order], np.concatenate(ys)[order],
                   c=np.asarray(cs, dtype=object)[order].tolist(), s=4, alpha=0.35,
                   linewidths=0, rasterized=True)
    ax.set_xlim(limits)
    ax.set_ylim(limits)
    ax.set_box_aspect(1)
    ax.grid(alpha=0.3)
    ax.text(0.03, 0.97, "too long", transform=ax.transAxes, va="top", fontsize="x-small",
            color="dimgrey")
    ax.text(0.97, 0.03, "too short", transform=ax.transAxes, ha="right", va="bottom",
            fontsize="x-small", color="dimgrey")
    ax.set_xlabel(f"actual run time ({unit}; 0 at 1 s)")
    ax.set_ylabel(f"estimate ({unit})")
    return sampled


def prediction_errors(estimate: Mapping[str, np.ndarray],
                      actual: Mapping[str, np.ndarray] | np.ndarray, *,
                      title: str | None = None, groups: Mapping[str, str] | None = None,
                      colours: Mapping[str, str] | None = None,
                      max_points: int = SCATTER_MAX_POINTS) -> Figure:
    """Run-time predictions per label, as box plots (suited to many labels).

    ``estimate`` and ``actual`` are seconds, aligned per label (``actual`` may be one
    array shared by every label); jobs with a negative estimate or actual (e.g.
    rejected) and NaN are left out. Three panels:

    1. the ratio estimate / actual on a log axis (1 = exact; above 1 the prediction
       was too long; both floored at 1 s);
    2. the signed error estimate - actual in hours (symmetric log axis, linear within
       +-1 h; below 0 = underestimated);
    3. estimate against actual run time (hours, log-log, diagonal = exact), at most
       ``max_points`` jobs per label (uniform sample, fixed seed).

    Boxes and points are coloured by ``groups`` / ``colours``; the legend maps groups
    to colours. Exact labels (module docstring) do not move the axis limits."""
    from matplotlib.figure import Figure

    pairs = _prediction_pairs(estimate, actual, "prediction_errors")
    labels = list(pairs)
    col = _colouring(labels, groups, colours)
    exact = _exact(pairs)
    excl = frozenset(k for k, lab in enumerate(labels) if lab in exact and
                     len(exact) < sum(e.size > 0 for e, _ in pairs.values()))
    ratios = {k: np.maximum(e, 1.0) / np.maximum(a, 1.0) for k, (e, a) in pairs.items()}
    errors = {k: (e - a) / 3600.0 for k, (e, a) in pairs.items()}
    faces = [col.of(k) for k in labels]
    w = _width(len(labels))
    fig = Figure(figsize=(2 * w + 6.5, 5.0), layout="constrained")
    ax_r, ax_e, ax_s = fig.subplots(1, 3, width_ratios=[w, w, 5.0])
    floor = _log_floor([ratios[k] for k in labels if k not in exact] or list(ratios.values()),
                       0.5)
    _draw_boxes(ax_r, [weighted_box_stats(ratios[k], label=k) for k in labels], faces,
                log=True, floor=floor, ylabel="estimate / actual run (log)", exclude=excl,
                reference=1.0)
    ax_r.set_title("ratio (1 = exact)")
    ax_e.set_yscale("symlog", linthresh=1.0)
    _draw_boxes(ax_e, [weighted_box_stats(errors[k], label=k) for k in labels], faces,
                log=False, floor=0.0, ylabel="estimate - actual run (hours)", exclude=excl,
                reference=0.0)
    ax_e.set_title("error (symlog, linear within ±1 h)")
    limits = _scatter_limits(pairs, exact if excl else set(), 3600.0)
    sampled = _scatter_panel(ax_s, pairs, {k: col.of(k) for k in labels}, limits,
                             div=3600.0, unit="hours", max_points=max_points)
    ax_s.set_title("estimate vs actual" + (f" ({max_points:,} jobs per label)"
                                           if sampled else ""))
    _group_legend(ax_s, col)
    fig.suptitle((title or "Run-time prediction errors")
                 + _exact_note(exact if excl else set(), labels))
    return fig


def prediction_error_curves(estimate: Mapping[str, np.ndarray],
                            actual: Mapping[str, np.ndarray] | np.ndarray, *,
                            title: str | None = None,
                            groups: Mapping[str, str] | None = None,
                            colours: Mapping[str, str] | None = None) -> Figure:
    """Run-time prediction errors per label as curves (suited to a few labels), in
    minutes; inputs as :func:`prediction_errors`. Two panels, one line per label:

    1. *absolute error*: histogram of ``|estimate - actual|`` (share of the label's jobs
       per bin, 60 log-spaced bins from 1 s to the largest error; an error of 0 is
       counted in the first bin), log x axis (Galleguillos et al. 2017, Figure 2);
    2. *signed error*: the cumulative distribution of ``estimate - actual`` on a
       symmetric log x axis (linear within +-1 minute): the height at 0 is the share
       of jobs that were underestimated or exact, left of 0 are the underestimates.

    Line colours follow ``groups`` / ``colours``; lines of one group differ by style.
    Exact labels (module docstring) are drawn but the axis limits come from the others
    (an exact label's first-bin peak of 100 % then leaves the top of panel 1)."""
    from matplotlib.figure import Figure

    pairs = _prediction_pairs(estimate, actual, "prediction_error_curves")
    labels = list(pairs)
    col = _colouring(labels, groups, colours)
    styles = col.styles()
    exact = _exact(pairs)
    if len(exact) == sum(e.size > 0 for e, _ in pairs.values()):
        exact = set()  # all exact: they set the limits
    fig = Figure(figsize=(13.0, 4.8), layout="constrained")
    ax_a, ax_s = fig.subplots(1, 2)

    lo = 1.0 / 60.0  # one second, in minutes
    abs_err = {k: np.abs(e - a) / 60.0 for k, (e, a) in pairs.items()}
    top = max((float(x.max()) for x in abs_err.values() if x.size), default=1.0)
    bins = np.logspace(math.log10(lo), math.log10(max(top, lo * 10) * 1.01), 61)

    def hist(keys: list[str], zorder: float) -> None:
        for k in keys:
            x = abs_err[k]
            if x.size:
                ax_a.hist(np.clip(x, lo, None), bins=bins, histtype="step", linewidth=1.4,
                          weights=np.full(x.size, 100.0 / x.size), color=col.of(k),
                          linestyle=styles[k], label=k, zorder=zorder)

    ax_a.set_xscale("log")
    kept = [k for k in labels if k not in exact]
    exact_keys = [k for k in labels if k in exact]  # drawn behind the others
    _limits_without(ax_a, lambda: hist(kept, 1.0), lambda: hist(exact_keys, 0.9),
                    x=True, y=True)
    ax_a.set_ylim(bottom=0.0)
    ax_a.set_xlabel("absolute error (minutes; error 0 counted at 1 s)")
    ax_a.set_ylabel("jobs (%) per bin")
    ax_a.set_title("absolute error")
    ax_a.grid(alpha=0.3)

    def cdf(keys: list[str], zorder: float) -> None:
        for k in keys:
            e, a = pairs[k]
            if not e.size:
                continue
            x = np.sort(e - a) / 60.0
            rank = np.arange(1, x.size + 1)
            if x.size > _CDF_MAX_POINTS:
                pick = np.unique(np.linspace(0, x.size - 1, _CDF_MAX_POINTS).round()
                                 .astype(np.int64))
                x, rank = x[pick], rank[pick]
            ax_s.step(np.r_[x[0], x], np.r_[0.0, rank / e.size], where="post",
                      color=col.of(k), linestyle=styles[k], linewidth=1.4, label=k,
                      zorder=zorder)

    ax_s.set_xscale("symlog", linthresh=1.0)
    ax_s.axvline(0.0, color="grey", linewidth=0.8, linestyle="--")
    _limits_without(ax_s, lambda: cdf(kept, 2.0), lambda: cdf(exact_keys, 1.9),
                    x=True, y=False)
    ax_s.set_ylim(0.0, 1.02)
    ax_s.text(0.02, 0.97, "← underestimated", transform=ax_s.transAxes, va="top",
              fontsize="small", color="dimgrey")
    ax_s.text(0.98, 0.03, "overestimated →", transform=ax_s.transAxes, ha="right",
              va="bottom", fontsize="small", color="dimgrey")
    ax_s.set_xlabel("estimate - actual run (minutes; symlog, linear within ±1 min)")
    ax_s.set_ylabel("share of jobs with error ≤ x")
    ax_s.set_title("signed error (cumulative)")
    ax_s.grid(alpha=0.3)
    _line_legend(ax_s, labels)
    fig.suptitle((title or "Run-time prediction errors") + _exact_note(exact, labels))
    return fig


def predicted_vs_actual(estimate: Mapping[str, np.ndarray],
                        actual: Mapping[str, np.ndarray] | np.ndarray, *,
                        title: str | None = None, groups: Mapping[str, str] | None = None,
                        colours: Mapping[str, str] | None = None,
                        max_points: int = SCATTER_MAX_POINTS) -> Figure:
    """Estimate against actual run time, one panel per label (up to 4 per row), in
    minutes on shared log-log axes with the diagonal (above it: too long; 0 drawn at
    1 s); inputs as :func:`prediction_errors`. At most ``max_points`` jobs per label
    (uniform sample, fixed seed; the panel's title says how many of how many, the
    figure's title that panels are sampled). Points take their group's colour
    (``groups`` / ``colours``); the legend maps groups to colours. The limits come from
    the non-exact labels (module docstring)."""
    from matplotlib.figure import Figure

    pairs = _prediction_pairs(estimate, actual, "predicted_vs_actual")
    labels = list(pairs)
    col = _colouring(labels, groups, colours)
    exact = _exact(pairs)
    if len(exact) == sum(e.size > 0 for e, _ in pairs.values()):
        exact = set()
    limits = _scatter_limits(pairs, exact, 60.0)
    ncols = min(4, len(labels))
    nrows = -(-len(labels) // ncols)
    fig = Figure(figsize=(3.4 * ncols + 1.8, 3.4 * nrows + 0.9), layout="constrained")
    axes = np.atleast_2d(fig.subplots(nrows, ncols, squeeze=False))
    sampled = False
    for k, ax in enumerate(axes.flat):
        if k >= len(labels):
            ax.remove()
            continue
        lab = labels[k]
        drawn = _scatter_panel(ax, {lab: pairs[lab]}, {lab: col.of(lab)}, limits,
                               div=60.0, unit="minutes", max_points=max_points)
        sampled |= drawn
        size = pairs[lab][0].size
        ax.set_title(f"{lab}: {max_points:,} of {size:,} jobs drawn" if drawn
                     else f"{lab}: {size:,} jobs", fontsize="medium")
    _group_legend(axes[0, -1], col)  # the first row is always full
    fig.suptitle((title or "Estimate vs actual run time")
                 + (f" (a panel of more than {max_points:,} jobs draws a uniform sample "
                    f"of {max_points:,})" if sampled else "")
                 + _exact_note(exact, labels))
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
    from matplotlib.collections import PolyCollection
    from matplotlib.figure import Figure

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


# ---------------------------------------------- power caps (Carastan-Santos et al. 2024)
#: Upper bounds (inclusive, processors) of the job size classes of
#: :func:`wait_by_size_class`; the last class holds every larger job: 1, 2-4, 5-16,
#: 17-64, 65-256, >256 (powers of 4: each class is 4x the previous one; on platforms of
#: one-core nodes, such as ``marconi100-nodes``, processors are nodes).
SIZE_BOUNDS: tuple[int, ...] = (1, 4, 16, 64, 256)
#: Bar hatches of the labels sharing a colour group, in order (as LINE_STYLES).
_HATCHES: tuple[str, ...] = ("", "//", "..", "xx")
#: Half-width (in box widths) of the horizontal spread of the per-run dots.
_DOT_SPREAD = 0.18
#: Width (inches) above which the per-cap panels of a figure wrap to a new row.
_MAX_PANELS_WIDTH = 18.0


def size_class_names(bounds: Sequence[int] = SIZE_BOUNDS) -> list[str]:
    """The names of the classes :func:`size_classes` gives for ``bounds``:
    ``["1", "2-4", ..., ">256"]``."""
    b = [int(x) for x in bounds]
    if not b or b[0] < 1 or bool(np.any(np.diff(b) <= 0)):
        raise InputError(f"size class bounds must be increasing integers >= 1, got {bounds}")
    names, lo = [], 1
    for hi in b:
        names.append(str(hi) if hi == lo else f"{lo}-{hi}")
        lo = hi + 1
    return [*names, f">{b[-1]}"]


def size_classes(procs: np.ndarray, bounds: Sequence[int] = SIZE_BOUNDS) -> np.ndarray:
    """The size class of each job (0 .. len(bounds)): the first class whose upper bound
    ``bounds[k]`` is >= the job's processors; len(bounds) above the last bound."""
    size_class_names(bounds)  # checks the bounds
    return np.searchsorted(np.asarray(bounds, dtype=np.int64),
                           np.asarray(procs, dtype=np.int64), side="left")


def _nested(values: Mapping[str, Mapping[str, Any]], what: str
            ) -> tuple[dict[str, dict[str, np.ndarray]], list[str]]:
    """``cap -> method -> float array`` and the methods in first-appearance order."""
    if not values or not any(values.values()):
        raise InputError(f"{what} needs at least one cap with one labelled array")
    out = {str(cap): {str(m): np.asarray(v, dtype=np.float64).ravel()
                      for m, v in per.items()} for cap, per in values.items()}
    methods = list(dict.fromkeys(m for per in out.values() for m in per))
    return out, methods


def _spread(n: int) -> np.ndarray:
    """Horizontal offsets of ``n`` dots around their position (input order)."""
    return np.zeros(n) if n <= 1 else np.linspace(-_DOT_SPREAD, _DOT_SPREAD, n)


def _dots(ax: Axes, x: float, y: np.ndarray, colour: str, *, hollow: bool = False,
          gid: str = "runs", spread: float = 1.0) -> None:
    """One dot per finite value of ``y`` around ``x`` (a Line2D with ``gid``: its
    y data are the values, in input order; ``spread`` scales the sideways spread)."""
    y = y[np.isfinite(y)]
    if not y.size:
        return
    ax.plot(x + _spread(y.size) * spread, y, linestyle="none", marker="o", markersize=4,
            markerfacecolor="none" if hollow else colour,
            markeredgecolor=colour if hollow else "black",
            markeredgewidth=0.8 if hollow else 0.4, alpha=0.9, zorder=3, gid=gid)


def _share_axis(ax: Axes) -> None:
    from matplotlib.ticker import PercentFormatter

    ax.yaxis.set_major_formatter(PercentFormatter(1.0))


def _ticks(ax: Axes, names: Sequence[str]) -> None:
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_xticks(range(len(names)))
    long = len(names) > 4 or any(len(n) > 12 for n in names)
    ax.set_xticklabels(names, rotation=30 if long else 0, ha="right" if long else "center",
                       fontsize="small")


def _cap_panels(caps: Sequence[str], panel_width: float, height: float = 4.4
                ) -> tuple[Figure, list[Axes], Axes]:
    """A figure with one panel per cap, sharing the y axis, wrapped to new rows beyond
    :data:`_MAX_PANELS_WIDTH`; returns the figure, the panels (in ``caps`` order) and
    the panel that holds the legend (the first row's last)."""
    from matplotlib.figure import Figure

    ncols = max(1, min(len(caps), int(_MAX_PANELS_WIDTH // panel_width)))
    nrows = -(-len(caps) // ncols)
    fig = Figure(figsize=(ncols * panel_width + 1.8, height * nrows + 0.4),
                 layout="constrained")
    grid = fig.subplots(nrows, ncols, sharey=True, squeeze=False)
    flat = list(grid.flat)
    for ax in flat[len(caps):]:
        ax.remove()
    return fig, flat[:len(caps)], grid[0, -1]


def _panel_width(n_items: int) -> float:
    return _width(n_items) * 0.8


def _cap_boxes(values: Mapping[str, Mapping[str, Any]], what: str, *, ylabel: str,
               title: str, groups: Mapping[str, str] | None,
               colours: Mapping[str, str] | None, cap_line: bool) -> Figure:
    data, methods = _nested(values, what)
    col = _colouring(methods, groups, colours)
    caps = list(data)
    fig, axes, legend_ax = _cap_panels(caps, _panel_width(max(len(p) for p in data.values())))
    for ax, cap in zip(axes, caps, strict=True):
        labels = list(data[cap])
        stats = [weighted_box_stats(data[cap][m], label=m) for m in labels]
        _draw_boxes(ax, stats, [col.of(m) for m in labels], log=False, floor=0.0,
                    ylabel=ylabel if ax.get_subplotspec().is_first_col() else "")
        for k, m in enumerate(labels):
            _dots(ax, k, data[cap][m], col.of(m))
        if cap_line:
            ax.axhline(1.0, color="black", linewidth=1.4, zorder=2.5, gid="cap")
        _share_axis(ax)
        ax.set_title(f"cap {cap}")
    _group_legend(legend_ax, col)
    fig.suptitle(title)
    return fig


def cap_power_boxes(shares: Mapping[str, Mapping[str, np.ndarray]], *,
                    title: str | None = None, groups: Mapping[str, str] | None = None,
                    colours: Mapping[str, str] | None = None) -> Figure:
    """Platform power in the cap window as a share of the cap (Carastan-Santos et al. 2024, Figure
    4).

    ``shares`` maps a cap label to a mapping method label (e.g. ``"easy-pc/real"``: a
    dispatcher x power predictor) -> one value per run (workload): the run's **mean**
    platform power in the window divided by the cap (``cap_mean_share``). One panel per
    cap (shared y axis; panels wrap to a new row when many), one box per method of that
    cap (min / max whiskers, quartile box, median line, mean triangle; NaN ignored), the
    runs as dots over it (spread sideways in input order), and the cap as a black line
    at 100 %. The seed plots the distribution of the power *over the window's time*;
    these are per-run means (a run whose mean is under the cap may still break it: see
    :func:`time_above_cap`). Colours: ``groups`` / ``colours`` (module docstring)."""
    return _cap_boxes(shares, "cap_power_boxes", ylabel="mean power in window / cap",
                      title=title or "Mean platform power in the cap window (per run)",
                      groups=groups, colours=colours, cap_line=True)


def underuse_boxes(underuse: Mapping[str, Mapping[str, np.ndarray]], *,
                   title: str | None = None, groups: Mapping[str, str] | None = None,
                   colours: Mapping[str, str] | None = None) -> Figure:
    """Under-use of the cap per method and cap: ``underuse`` as :func:`cap_power_boxes`,
    one value per run, the time-mean of ``(cap - power) / cap`` over the window
    counting 0 while above the cap (``cap_mean_underuse``; Carastan-Santos et al. 2024 section 6.5).
    One panel per cap, boxes with the runs as dots; lower is better."""
    return _cap_boxes(underuse, "underuse_boxes", ylabel="mean under-use of the cap",
                      title=title or "Under-use of the cap in the window (per run)",
                      groups=groups, colours=colours, cap_line=False)


def time_above_cap(shares: Mapping[str, Mapping[str, np.ndarray]], *,
                   own: Mapping[str, Mapping[str, np.ndarray]] | None = None,
                   title: str | None = None, groups: Mapping[str, str] | None = None,
                   colours: Mapping[str, str] | None = None) -> Figure:
    """Share of the cap window's time with the platform power above the cap, one dot
    per run (Carastan-Santos et al. 2024, Figure 6; lower is better).

    ``shares`` as :func:`cap_power_boxes` (values ``cap_time_above_share``, 0 .. 1).
    One panel per cap, one column of dots per method (spread sideways in input order,
    so equal values stay visible), a black bar at the mean. With ``own`` (same
    layout, ``cap_time_above_own_share``: only the times when the jobs already running
    when the window opened are within the cap on their own) the own variant is drawn as
    hollow dots to the right of the filled ones, with its own mean bar."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    data, methods = _nested(shares, "time_above_cap")
    own_data = _nested(own, "time_above_cap")[0] if own else {}
    col = _colouring(methods, groups, colours)
    caps = list(data)
    fig, axes, legend_ax = _cap_panels(caps, _panel_width(max(len(p) for p in data.values())),
                                       height=4.2)
    shift = 0.2 if own_data else 0.0
    for ax, cap in zip(axes, caps, strict=True):
        labels = list(data[cap])
        for k, m in enumerate(labels):
            for x, y, hollow, gid in ((k - shift, data[cap][m], False, "runs"),
                                      (k + shift, own_data.get(cap, {}).get(m), True, "own")):
                if y is None:
                    continue
                _dots(ax, x, y, col.of(m), hollow=hollow, gid=gid,
                      spread=0.6 if own_data else 1.0)
                if np.isfinite(y).any():
                    ax.plot([x - 0.14, x + 0.14], [float(np.nanmean(y))] * 2, color="black",
                            linewidth=1.6, zorder=4, gid=f"{gid}-mean")
        _ticks(ax, labels)
        ax.set_ylim(-0.03, 1.03)
        _share_axis(ax)
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylabel("time above the cap (share of window)"
                      if ax.get_subplotspec().is_first_col() else "")
        ax.set_title(f"cap {cap}")
    handles: list[Any] = [Patch(facecolor=c, edgecolor="black", linewidth=0.5, alpha=0.75,
                                label=g) for g, c in col.colour.items()]
    if own_data:
        handles += [Line2D([], [], linestyle="none", marker="o", color="black",
                           markerfacecolor="none" if hollow else "black", label=text)
                    for text, hollow in (("all window time", False),
                                         ("own starts only", True))]
    legend_ax.legend(handles=handles, **_LEGEND_KW)
    fig.suptitle(title or "Time above the cap, one dot per run")
    return fig


def turnaround_change(mean_change: Mapping[str, Mapping[str, np.ndarray]],
                      max_change: Mapping[str, Mapping[str, np.ndarray]] | None = None, *,
                      baseline: str | None = None, title: str | None = None,
                      groups: Mapping[str, str] | None = None,
                      colours: Mapping[str, str] | None = None) -> Figure:
    """Change of the turnaround against a baseline run on the same workload (Carastan-Santos
    et al. 2024, Figures 5 and 7b / 7c).

    ``mean_change`` (and ``max_change``) as :func:`cap_power_boxes`: cap -> method ->
    one value per workload, ``value / baseline - 1`` of the run's mean (maximum)
    turnaround (+0.1: 10 % longer than the baseline; lower is better, unlike the paper's
    7b which plots the improvement). One row of panels per cap, a column per metric
    (mean, then max; each column shares its y axis), boxes with the workloads as dots
    and a dashed line at 0. ``baseline`` names the baseline in the axis labels."""
    from matplotlib.figure import Figure

    data, methods = _nested(mean_change, "turnaround_change")
    metrics = [("mean turnaround", data)]
    if max_change:
        max_data, more = _nested(max_change, "turnaround_change")
        methods = list(dict.fromkeys([*methods, *more]))
        metrics.append(("max turnaround", max_data))
    col = _colouring(methods, groups, colours)
    caps = list(dict.fromkeys(c for _, d in metrics for c in d))
    panel = _panel_width(max(len(d.get(c, {})) for _, d in metrics for c in caps))
    fig = Figure(figsize=(panel * len(metrics) + 1.8, 4.2 * len(caps) + 0.4),
                 layout="constrained")
    axes = fig.subplots(len(caps), len(metrics), sharey="col", squeeze=False)
    vs = f" vs {baseline}" if baseline else " vs baseline"
    for c, (name, d) in enumerate(metrics):
        for r, cap in enumerate(caps):
            ax = axes[r, c]
            per = d.get(cap, {})
            labels = list(per)
            stats = [weighted_box_stats(per[m], label=m) for m in labels]
            _draw_boxes(ax, stats, [col.of(m) for m in labels], log=False, floor=0.0,
                        ylabel=f"{name} change{vs}", reference=0.0)
            for k, m in enumerate(labels):
                _dots(ax, k, per[m], col.of(m))
            _share_axis(ax)
            ax.set_title(f"cap {cap}: {name}")
    _group_legend(axes[0, -1], col)
    fig.suptitle(title or "Turnaround change vs baseline (lower is better)")
    return fig


def window_start_bars(shares: Mapping[str, Mapping[str, np.ndarray]], *,
                      title: str | None = None, groups: Mapping[str, str] | None = None,
                      colours: Mapping[str, str] | None = None) -> Figure:
    """Share of the started jobs that started inside the cap window (Carastan-Santos et al. 2024,
    Figure 7d; ``window_start_share``): ``shares`` as :func:`cap_power_boxes`. One
    panel per cap, one bar per method at the mean over runs (NaN ignored; labelled in
    %; no bar without a value), the runs as dots over it."""
    data, methods = _nested(shares, "window_start_bars")
    col = _colouring(methods, groups, colours)
    caps = list(data)
    fig, axes, legend_ax = _cap_panels(caps, _panel_width(max(len(p) for p in data.values())),
                                       height=4.2)
    top = max((float(np.nanmax(v)) for per in data.values() for v in per.values()
               if np.isfinite(v).any()), default=0.0)
    for ax, cap in zip(axes, caps, strict=True):
        labels = list(data[cap])
        means = [float(np.nanmean(data[cap][m])) if np.isfinite(data[cap][m]).any()
                 else float("nan") for m in labels]
        shown = [k for k, v in enumerate(means) if v == v]
        bars = ax.bar(shown, [means[k] for k in shown], width=0.7,
                      color=[col.of(labels[k]) for k in shown], alpha=0.75,
                      edgecolor="black", linewidth=0.5)
        ax.bar_label(bars, labels=[f"{means[k]:.0%}" for k in shown], fontsize="small",
                     padding=2)
        for k, m in enumerate(labels):
            _dots(ax, k, data[cap][m], col.of(m))
        _ticks(ax, labels)
        _share_axis(ax)
        ax.set_ylim(0.0, max(0.05, top) * 1.15)
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylabel("jobs started in the window (share)"
                      if ax.get_subplotspec().is_first_col() else "")
        ax.set_title(f"cap {cap}")
    _group_legend(legend_ax, col)
    fig.suptitle(title or "Jobs started inside the cap window (bar: mean over runs)")
    return fig


def wait_by_size_class(procs: Mapping[str, Mapping[str, np.ndarray]],
                       wait: Mapping[str, Mapping[str, np.ndarray]], *,
                       bounds: Sequence[int] = SIZE_BOUNDS,
                       stats: Sequence[str] = ("mean",), title: str | None = None,
                       groups: Mapping[str, str] | None = None,
                       colours: Mapping[str, str] | None = None) -> Figure:
    """Wait per job size class and method (the starvation of large jobs, Carastan-Santos
    et al. 2024 section 6.6: EASY SAF against the knapsacks).

    ``procs`` and ``wait`` (s) are cap -> method -> one value per job, aligned (e.g. the
    jobs of all the method's runs pooled; NaN waits ignored). Jobs are put in size
    classes by processors (:func:`size_classes`; default :data:`SIZE_BOUNDS`: 1, 2-4,
    5-16, 17-64, 65-256, >256). One row of panels per cap, a column per statistic in
    ``stats`` (``"mean"`` and / or ``"max"`` wait, hours), bars grouped by size class,
    one bar per method; a class without jobs has no bar. Each tick gives the class's
    job count (of the panel's first method). Bars take their group's colour
    (``groups`` / ``colours``), the methods of one group differ by hatching, and the
    legend has one entry per method."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    names = size_class_names(bounds)
    if not stats:
        raise InputError("wait_by_size_class needs at least one statistic")
    for s in stats:
        if s not in ("mean", "max"):
            raise InputError(f"stats are 'mean' and / or 'max', got {s!r}")
    w_data, methods = _nested(wait, "wait_by_size_class")
    p_data = _nested(procs, "wait_by_size_class")[0]
    col = _colouring(methods, groups, colours)
    hatch = {m: _HATCHES[LINE_STYLES.index(st) % len(_HATCHES)]
             for m, st in col.styles().items()}
    caps = list(w_data)
    n_methods = max(len(p) for p in w_data.values())
    panel = max(5.0, 0.14 * n_methods * len(names) + 1.5)
    fig = Figure(figsize=(panel * len(stats) + 2.4, 3.6 * len(caps) + 0.5),
                 layout="constrained")
    axes = fig.subplots(len(caps), len(stats), sharey="col", squeeze=False)
    width = 0.8 / max(n_methods, 1)
    for r, cap in enumerate(caps):
        labels = list(w_data[cap])
        counts = np.zeros(len(names), dtype=np.int64)
        for k, m in enumerate(labels):
            w = w_data[cap][m]
            p = p_data.get(cap, {}).get(m)
            if p is None or len(p) != len(w):
                raise InputError(f"procs[{cap!r}][{m!r}] must have one entry per wait "
                                 f"({len(w)})")
            ok = np.isfinite(w)
            cls = size_classes(p[ok].astype(np.int64), bounds)
            w = w[ok] / 3600.0
            jobs = np.bincount(cls, minlength=len(names))
            if k == 0:
                counts = jobs
            x = np.arange(len(names)) - 0.4 + width * (k + 0.5)
            keep = jobs > 0
            for c, stat in enumerate(stats):
                if stat == "mean":
                    y = np.bincount(cls, weights=w, minlength=len(names)) / np.maximum(jobs, 1)
                else:
                    y = np.zeros(len(names))
                    np.maximum.at(y, cls, w)
                axes[r, c].bar(x[keep], y[keep], width=width, color=col.of(m), alpha=0.75,
                               edgecolor="black", linewidth=0.4, hatch=hatch[m], label=m)
        for c, stat in enumerate(stats):
            ax = axes[r, c]
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels([f"{n}\n{j:,} jobs" for n, j in
                                zip(names, counts.tolist(), strict=True)], fontsize="small")
            ax.set_xlim(-0.6, len(names) - 0.4)
            ax.grid(axis="y", alpha=0.3)
            ax.set_ylabel(f"{stat} wait (hours)")
            ax.set_title(f"cap {cap}: {stat} wait")
            if r == len(caps) - 1:
                ax.set_xlabel("job size (processors)")
    axes[0, -1].legend(handles=[Patch(facecolor=col.of(m), edgecolor="black", linewidth=0.5,
                                      alpha=0.75, hatch=hatch[m], label=m)
                                for m in methods], **_LEGEND_KW)
    fig.suptitle(title or "Wait per job size class (jobs of all runs pooled)")
    return fig


# ----------------------------------------------------------- Borghesi et al. 2018 power capping
def budget_bsld_bars(bsld: Mapping[str, Mapping[str, np.ndarray]], *,
                     title: str | None = None, log: bool = True,
                     groups: Mapping[str, str] | None = None,
                     colours: Mapping[str, str] | None = None) -> Figure:
    """Mean BSLD per power budget and method (Borghesi et al. 2018, Figures 2-5; lower is
    better).

    ``bsld`` maps a budget label (e.g. ``"50%"``, in the order to draw) to a mapping
    method label (e.g. ``"dec"``, ``"dynshare-0.5"``) -> one value per run (workload
    instance): the run's mean BSLD (Borghesi et al. 2018 eq. 3, ``mean_power_bsld``). One group of
    bars per budget, one bar per method (the mean over runs; NaN runs, e.g. failed
    ones, left out), the runs as dots over their bar. ``log``: a log y axis (the
    paper's values span orders of magnitude at tight budgets)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    data, methods = _nested(bsld, "budget_bsld_bars")
    col = _colouring(methods, groups, colours)
    budgets = list(data)
    n = len(methods)
    width = min(0.8 / max(n, 1), 0.22)
    fig = Figure(figsize=(max(6.0, 1.0 + len(budgets) * (n * width + 0.5) * 1.3) + 1.8, 4.6),
                 layout="constrained")
    ax = fig.subplots()
    for k, m in enumerate(methods):
        xs, means = [], []
        for b, budget in enumerate(budgets):
            y = data[budget].get(m)
            if y is None or not np.isfinite(y).any():
                continue
            x = b + (k - (n - 1) / 2) * width
            xs.append(x)
            means.append(float(np.nanmean(y)))
            _dots(ax, x, y, col.of(m), spread=width * 2.0)
        ax.bar(xs, means, width=width * 0.92, color=col.of(m), edgecolor="black",
               linewidth=0.5, alpha=0.75, label=m, zorder=2, gid=f"bars-{m}")
    ax.set_xticks(range(len(budgets)))
    ax.set_xticklabels(budgets)
    ax.set_xlabel("power budget")
    ax.set_ylabel("mean BSLD (Borghesi et al. 2018 eq. 3)")
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    handles = [Patch(facecolor=col.of(m), edgecolor="black", linewidth=0.5, alpha=0.75,
                     label=m) for m in methods]
    ax.legend(handles=handles, **_LEGEND_KW)
    ax.set_title(title or "BSLD by power budget")
    return fig


def power_against_budget(power: Mapping[str, tuple[np.ndarray, np.ndarray]],
                         budget: tuple[np.ndarray, np.ndarray], *,
                         title: str | None = None, origin: int = 0,
                         groups: Mapping[str, str] | None = None,
                         colours: Mapping[str, str] | None = None) -> Figure:
    """Platform power over time against the power budget (Borghesi et al. 2018, Figure 1b
    style): one step line per method from ``power`` (label -> ``(times, watts)``,
    right-continuous steps as :func:`dispatchlab.power.accounting.platform_power`
    gives), the budget as a black dashed step line (``(times, watts)``, NaN where
    there is none). Times in hours from ``origin`` (s)."""
    from matplotlib.figure import Figure

    if not power:
        raise InputError("power_against_budget needs at least one labelled power series")
    labels = list(power)
    col = _colouring(labels, groups, colours)
    fig = Figure(figsize=(9.5, 4.4), layout="constrained")
    ax = fig.subplots()
    end = max((int(t[-1]) for t, _ in power.values() if len(t)), default=origin)
    for m in labels:
        t, w = (np.asarray(a) for a in power[m])
        if not len(t):
            continue
        ax.step((np.append(t, end) - origin) / 3600, np.append(w, w[-1]) / 1000,
                where="post", color=col.of(m), linewidth=1.3, label=m, gid=f"power-{m}")
    bt, bw = (np.asarray(a, dtype=np.float64) for a in budget)
    if len(bt):
        ax.step((np.append(bt, max(end, bt[-1])) - origin) / 3600,
                np.append(bw, bw[-1]) / 1000, where="post", color="black", linestyle="--",
                linewidth=1.4, label="budget", gid="budget")
    ax.set_xlabel("time (h)")
    ax.set_ylabel("platform power (kW)")
    ax.grid(alpha=0.3)
    ax.legend(**_LEGEND_KW)
    ax.set_title(title or "platform power against the budget")
    return fig
