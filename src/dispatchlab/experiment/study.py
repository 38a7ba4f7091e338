"""The prediction study (Galleguillos et al. 2017, section 5.2): every dispatcher x predictor.

:func:`run_prediction_study` simulates one workload under each combination of the
named dispatchers (built with :func:`~dispatchlab.dispatch.make_dispatcher`) and
predictors (:func:`~dispatchlab.predict.make_predictor`), so any registered name slots
in without code change. The :class:`StudyResult` gives one table row per combination
and draws the paper's three figures:

- ``slowdown.png``: job slowdown per combination, only jobs whose slowdown differs
  from 1 in at least one combination (Figure 3);
- ``slowdown_by_class.png``: the same per job class short / medium / long (Figure 4);
- ``queue_length.png``: the time-weighted distribution of the number of waiting jobs,
  leaving out the time when the queue is empty in *every* combination (Figure 5).

Box plots show min / max whiskers, the quartile box, the median line and the mean as
a triangle, on a log y axis; boxes are grouped by dispatcher and coloured by predictor
(:func:`dispatchlab.report.plots.colour_map` in predictor order, or explicit colours), with a
legend predictor -> colour. Queue-length statistics are computed on the union of the
step functions' breakpoints (never one value per second).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.components import parse_component
from dispatchlab.core.errors import InputError, output_folder
from dispatchlab.metrics import JOB_CLASS_LABELS, StepFunction, check_tau, job_columns, queue_length
from dispatchlab.metrics.distributions import (  # moved to metrics/, still importable here
    merge_step_functions,  # noqa: F401
    merged_distributions,
    slowdown_changed_mask,
    weighted_box_stats,
)
from dispatchlab.metrics.keys import BY_KEY
from dispatchlab.report.plots import colour_map
from dispatchlab.run.build import PowerInputs, build
from dispatchlab.run.config import Component, RunConfig
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim.engine import check_combination, is_node_level

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Short labels of the paper (W: wall-time, D: data-driven, R: real duration); other
#: predictors are labelled by their name.
PREDICTOR_LABELS: dict[str, str] = {"walltime": "W", "history": "D", "real": "R"}

#: Declared metrics (:mod:`dispatchlab.metrics.keys`) in the study table, in order.
STUDY_METRICS: tuple[str, ...] = (
    "jobs", "rejected", "mean_wait", "median_wait", "max_wait", "mean_slowdown",
    "mean_bsld", "p95_bsld", "bsld_short", "bsld_medium", "bsld_long", "utilization",
    "steady_utilization",
)
#: Power metrics added to the rows when the jobs carry power (``--power``).
POWER_STUDY_METRICS: tuple[str, ...] = (
    "energy_j", "cap_mean_share", "cap_time_above_share", "cap_max_excess",
    "cap_mean_underuse", "window_start_share",
)
#: Columns of the study table, in order (``study.csv``; with power, the
#: :data:`POWER_STUDY_METRICS` come before ``simulate_seconds``).
TABLE_COLUMNS: tuple[str, ...] = (
    "dispatcher", "predictor", "label", *STUDY_METRICS, "simulate_seconds",
)


def predictor_label(name: str) -> str:
    """``W`` / ``D`` / ``R`` for walltime / history / real, the name otherwise."""
    return PREDICTOR_LABELS.get(name, name)


def parse_names(text: str, option: str) -> list[str]:
    """Split a comma-separated list of names; empty items or duplicates are errors."""
    names = [x.strip() for x in text.split(",")]
    if not names or not all(names):
        raise InputError(f"expected comma-separated names, got {text!r}", field=option)
    if len(set(names)) != len(names):
        raise InputError(f"a name is repeated in {text!r}", field=option)
    return names


@dataclass
class Combination:
    """One simulated dispatcher x predictor combination (arrays aligned with the jobs)."""

    dispatcher: str
    predictor: str
    start: np.ndarray
    end: np.ndarray
    status: np.ndarray
    summary: dict[str, Any]
    columns: dict[str, np.ndarray]  # from metrics.job_columns

    @property
    def label(self) -> str:
        return f"{self.dispatcher}-{predictor_label(self.predictor)}"


@dataclass
class StudyResult:
    """All combinations of a prediction study, in dispatcher-major order."""

    dispatchers: list[str]
    predictors: list[str]
    tau: float
    submit: np.ndarray
    runs: list[Combination]
    source: str = ""
    platform: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------- table
    def rows(self) -> list[dict[str, Any]]:
        """One dict per combination with the :data:`TABLE_COLUMNS` keys, read from the
        run summary (:func:`dispatchlab.metrics.summarize`): waits in seconds (mean,
        median, max), mean slowdown and bounded slowdown (overall, p95 and per job
        class), ``utilization`` (whole run) and ``steady_utilization`` (the steady-state
        window; None when the summary does not report it), and the simulation's wall
        time ``simulate_seconds``; with job power (summaries with ``energy_j``), also the
        :data:`POWER_STUDY_METRICS` (cap metrics None without a cap)."""

        power = any("energy_j" in run.summary for run in self.runs)
        keys = STUDY_METRICS + (POWER_STUDY_METRICS if power else ())
        out = []
        for run in self.runs:
            row = {"dispatcher": run.dispatcher, "predictor": run.predictor,
                   "label": run.label}
            row.update({k: BY_KEY[k].value(run.summary) for k in keys})
            row["simulate_seconds"] = run.summary.get("simulate_seconds")
            out.append(row)
        return out

    # ----------------------------------------------------------------- figures data
    def groups(self) -> dict[str, str]:
        """Colour group of each combination's label: its predictor name (the ``groups``
        argument of the :mod:`dispatchlab.report.plots` functions)."""
        return {r.label: r.predictor for r in self.runs}

    def slowdowns(self) -> np.ndarray:
        """Slowdown matrix: one row per combination, one column per job (NaN: rejected)."""
        return np.vstack([r.columns["slowdown"] for r in self.runs])

    def changed_jobs(self) -> np.ndarray:
        """Mask of jobs whose slowdown differs from 1 in at least one combination."""
        return slowdown_changed_mask(self.slowdowns())

    def job_classes(self) -> np.ndarray:
        """Class code per job (0 short, 1 medium, 2 long) from the first combination
        where the job ran (the simulated run is the trace run unless killed)."""
        cls = np.full(len(self.submit), -1, dtype=np.int8)
        for r in self.runs:
            fill = (cls < 0) & (r.columns["job_class"] >= 0)
            cls[fill] = r.columns["job_class"][fill]
        return cls

    def queue_functions(self) -> list[StepFunction]:
        """Queue-length step function of each combination on a common horizon."""
        started = [r.start >= 0 for r in self.runs]
        if len(self.submit) == 0:
            return [StepFunction(np.zeros(0, np.int64), np.zeros(0, np.int64), 0)
                    for _ in self.runs]
        h0 = int(self.submit.min())
        h1 = max([h0 + 1] + [int(r.start[m].max()) for r, m in zip(self.runs, started,
                                                                     strict=True) if m.any()])
        return [queue_length(self.submit[m], r.start[m], horizon=(h0, h1))
                for r, m in zip(self.runs, started, strict=True)]

    def queue_distributions(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per combination: (queue lengths, seconds) excluding all-empty periods."""
        return merged_distributions(self.queue_functions())

    # ------------------------------------------------------------------- output
    def write(self, out_dir: str | Path, *, colours: Mapping[str, str] | None = None
              ) -> list[Path]:
        """Write ``study.csv``, ``study.json`` and the three PNG figures (boxes coloured
        by predictor, ``colours`` as in :func:`study_figures`); return the paths."""
        out = output_folder(out_dir)
        rows = self.rows()
        with open(out / "study.csv", "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows
                                    else list(TABLE_COLUMNS))
            writer.writeheader()
            writer.writerows(rows)
        doc = {"trace": self.source, "platform": self.platform, "tau": self.tau,
               "dispatchers": self.dispatchers, "predictors": self.predictors,
               "jobs_plotted_slowdown": int(self.changed_jobs().sum()), "rows": rows}
        (out / "study.json").write_text(json.dumps(doc, indent=2) + "\n")
        return [out / "study.csv", out / "study.json", *plot_study(self, out, colours)]


def run_prediction_study(jobs, platform, dispatchers: Sequence[str],
                         predictors: Sequence[str], tau: float = 10.0, *, cap=None,
                         power_predictor=None, duration_model=None,
                         model_field: str = "duration_model") -> StudyResult:
    """Simulate ``jobs`` on ``platform`` for every dispatcher x predictor, each named in
    the component grammar of :mod:`dispatchlab.core.components` (``easy``,
    ``easy:order=sjf``, ``module:Class``, ...), each under the power ``cap`` (a
    :class:`~dispatchlab.power.cap.PowerCap`, None: none) with the ``power_predictor``
    (None: none; the power-capped dispatchers need one) and the ``duration_model`` (a
    :class:`~dispatchlab.sim.duration.DurationModel`; None: none given, which the
    dispatchers that slow running jobs refuse).

    All names are checked (built) before the first simulation, so an unknown name
    fails fast with :class:`~dispatchlab.core.errors.InputError`, and so is every
    combination (:func:`~dispatchlab.sim.engine.check_combination`; a missing duration
    model names ``model_field``). Each run is assembled by
    :func:`~dispatchlab.run.build.build` on the given ``jobs`` and ``platform``, with
    ``cap``, ``power_predictor`` and ``duration_model`` as given (the simulation clones
    them: runs do not share state)."""

    t = check_tau(tau)
    if not dispatchers or not predictors:
        raise InputError("a study needs at least one dispatcher and one predictor")
    specs_d = {d: parse_component(d, "dispatcher", option="dispatchers") for d in dispatchers}
    specs_p = {p: parse_component(p, "predictor", option="predictors") for p in predictors}

    node_level = is_node_level(platform, jobs)
    for d in dispatchers:
        check_combination(specs_d[d].build(), duration_model=duration_model,
                          node_level=node_level, model_field=model_field)
    submit = np.asarray(jobs["submit"], dtype=np.int64)
    runs = []
    for d in dispatchers:
        for p in predictors:
            config = RunConfig(dispatcher=Component(specs_d[d].name, dict(specs_d[d].params)),
                               predictor=Component(specs_p[p].name, dict(specs_p[p].params)),
                               tau=t)
            res = build(config, jobs=jobs, platform=platform,
                        power=lambda j, _: PowerInputs(j, None, cap, power_predictor),
                        duration_model=duration_model).simulation.run()
            summary = run_summary(res, tau=t)
            cols = job_columns(submit, res.start, res.end, res.status, tau=t)
            runs.append(Combination(d, p, res.start, res.end, res.status, summary, cols))
    return StudyResult(list(dispatchers), list(predictors), t, submit, runs,
                       source=str(jobs.info.source), platform=platform.describe())


# ------------------------------------------------------------------------ plotting
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
