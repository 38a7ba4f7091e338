"""The prediction study's three figures (Galleguillos et al. 2017, Figures 3-5), drawn from a
:class:`~dispatchlab.experiment.study.StudyResult` (the data :mod:`dispatchlab.experiment.study`
returns; this module only presents it):

- ``slowdown.png``: job slowdown per combination, only jobs whose slowdown differs
  from 1 in at least one combination (Figure 3);
- ``slowdown_by_class.png``: the same per job class short / medium / long (Figure 4);
- ``queue_length.png``: the time-weighted distribution of the number of waiting jobs,
  leaving out the time when the queue is empty in *every* combination (Figure 5).

Box plots show min / max whiskers, the quartile box, the median line and the mean as
a triangle, on a log y axis; boxes are grouped by dispatcher and coloured by predictor
(:func:`dispatchlab.report.plots.colour_map` in predictor order, or explicit colours), with a
legend predictor -> colour. :func:`write_study` writes the study's tables
(:meth:`~dispatchlab.experiment.study.StudyResult.write_tables`) and the figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.errors import output_folder
from dispatchlab.experiment.study import StudyResult, predictor_label
from dispatchlab.metrics import JOB_CLASS_LABELS
from dispatchlab.metrics.distributions import weighted_box_stats
from dispatchlab.report.plots import colour_map

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw (not on import)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_BOX_KEYS = ("whislo", "q1", "med", "q3", "whishi", "mean")


def _grouped_boxes(ax: Axes, study: StudyResult, stats: list[dict[str, Any]], ylabel: str,
                   floor: float, colours: Mapping[str, str], *, legend: bool) -> None:
    """Boxes grouped by dispatcher, predictors side by side, one colour per predictor
    (``colours``: predictor -> colour); with ``legend``, a legend predictor -> colour
    outside the axes at the right."""
    from matplotlib.patches import Patch

    n_p = len(study.predictors)
    positions = [i * (n_p + 1) + j for i in range(len(study.dispatchers)) for j in range(n_p)]
    faces = [colours[r.predictor] for r in study.runs]
    shown = []
    for s in stats:  # log axis: clip zeros (and NaN of empty sets) to the floor
        s = dict(s)
        for key in _BOX_KEYS:
            val = s[key]
            s[key] = floor if not np.isfinite(val) or val < floor else val
        shown.append(s)
    boxes = ax.bxp(shown, positions=positions, widths=0.8, showmeans=True,
                   showfliers=False, patch_artist=True,
                   meanprops={"marker": "^", "markerfacecolor": "black",
                              "markeredgecolor": "black", "markersize": 5},
                   medianprops={"color": "black"})
    for patch, colour in zip(boxes["boxes"], faces, strict=True):
        patch.set_facecolor(colour)
        patch.set_alpha(0.75)
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    ax.set_xticks([i * (n_p + 1) + (n_p - 1) / 2 for i in range(len(study.dispatchers))])
    ax.set_xticklabels([d.upper() for d in study.dispatchers])
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", which="major", alpha=0.3)
    if legend:
        ax.legend(handles=[Patch(facecolor=colours[p], edgecolor="black", linewidth=0.5,
                                 alpha=0.75, label=predictor_legend(p))
                           for p in study.predictors],
                  fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  borderaxespad=0.0, frameon=False)


def predictor_legend(name: str) -> str:
    """Legend text of a predictor in the study figures: ``"W (walltime)"``, or the name
    when it has no short label."""
    short = predictor_label(name)
    return name if short == name else f"{short} ({name})"


def _floor_of(arrays: list[np.ndarray], default: float) -> float:
    """Bottom of a log axis: 0.8 x the smallest positive finite value, at most ``default``."""
    pos = [a[np.isfinite(a) & (a > 0)] for a in arrays]
    pos = [p for p in pos if p.size]
    return min(default, 0.8 * min(float(p.min()) for p in pos)) if pos else default


def study_figures(study: StudyResult, colours: Mapping[str, str] | None = None
                  ) -> dict[str, Figure]:
    """The three study figures, by file name: ``slowdown.png``, ``slowdown_by_class.png``
    and ``queue_length.png`` (module docstring). Boxes are coloured by predictor:
    ``colours`` maps a predictor name to a colour; predictors it does not name get
    :func:`dispatchlab.report.plots.colour_map` colours in ``study.predictors`` order (the
    default for all). Each figure has a legend predictor -> colour."""
    from matplotlib.figure import Figure


    col = colour_map(study.predictors, colours)
    width = max(6.0, 1.0 + 0.45 * len(study.runs) + 0.3 * len(study.dispatchers)) + 1.6
    sld = study.slowdowns()
    changed = study.changed_jobs()
    n_changed = int(changed.sum())
    floor = _floor_of([sld[:, changed]], 0.8)
    out: dict[str, Figure] = {}

    # Figure 3: slowdown of the jobs that differ from 1 somewhere
    fig = Figure(figsize=(width, 5), layout="constrained")
    ax = fig.subplots()
    stats = [weighted_box_stats(row[changed], label=r.label)
             for row, r in zip(sld, study.runs, strict=True)]
    _grouped_boxes(ax, study, stats, "slowdown", floor, col, legend=True)
    ax.set_title(f"Job slowdown per dispatcher and predictor\n({n_changed:,} jobs whose "
                 "slowdown differs from 1 in some combination)", fontsize="medium")
    out["slowdown.png"] = fig

    # Figure 4: per job class
    classes = study.job_classes()
    fig = Figure(figsize=(3 * (width - 1.6) / 1.6 + 1.6, 5), layout="constrained")
    axes = fig.subplots(1, len(JOB_CLASS_LABELS), sharey=True)
    for code, (ax, name) in enumerate(zip(axes, JOB_CLASS_LABELS, strict=True)):
        pick = changed & (classes == code)
        stats = [weighted_box_stats(row[pick], label=r.label)
                 for row, r in zip(sld, study.runs, strict=True)]
        _grouped_boxes(ax, study, stats, "slowdown" if code == 0 else "", floor, col,
                       legend=code == len(JOB_CLASS_LABELS) - 1)
        ax.set_title(f"{name} jobs ({int(pick.sum()):,})", fontsize="medium")
    fig.suptitle("Job slowdown by job class (jobs whose slowdown differs from 1 in some "
                 "combination)", fontsize="medium")
    out["slowdown_by_class.png"] = fig

    # Figure 5: queue length, time-weighted, all-empty periods left out
    dists = study.queue_distributions()
    fig = Figure(figsize=(width, 5), layout="constrained")
    ax = fig.subplots()
    stats = [weighted_box_stats(v, s, label=r.label)
             for (v, s), r in zip(dists, study.runs, strict=True)]
    _grouped_boxes(ax, study, stats, "waiting jobs (0 drawn at the bottom)", 0.8, col,
                   legend=True)
    kept = int(dists[0][1].sum()) if dists else 0
    span = (f"{kept / 86400:,.1f} days" if kept > 3 * 86400 else f"{kept / 3600:,.1f} hours")
    ax.set_title(f"Number of waiting jobs, time-weighted\n({kept:,} s = {span} where some "
                 "queue is non-empty)", fontsize="medium")
    out["queue_length.png"] = fig
    return out


def plot_study(study: StudyResult, out_dir: str | Path,
               colours: Mapping[str, str] | None = None) -> list[Path]:
    """Write the :func:`study_figures` into ``out_dir`` (PNG, 120 dpi); return the paths
    in the order ``slowdown.png``, ``slowdown_by_class.png``, ``queue_length.png``."""
    out = Path(out_dir)
    paths = []
    for name, fig in study_figures(study, colours).items():
        paths.append(out / name)
        fig.savefig(paths[-1], dpi=120)
    return paths


def write_study(study: StudyResult, out_dir: str | Path, *,
                colours: Mapping[str, str] | None = None) -> list[Path]:
    """Write ``study.csv``, ``study.json``
    (:meth:`~dispatchlab.experiment.study.StudyResult.write_tables`) and the three PNG
    figures (:func:`plot_study`; boxes coloured by predictor, ``colours`` as in
    :func:`study_figures`) into ``out_dir`` (created if needed); return the paths."""
    out = output_folder(out_dir)
    return [*study.write_tables(out), *plot_study(study, out, colours)]
