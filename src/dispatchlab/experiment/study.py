"""The prediction study (Galleguillos et al. 2017, section 5.2): every dispatcher x predictor.

:func:`run_prediction_study` simulates one workload under each combination of the
named dispatchers (built with :func:`~dispatchlab.dispatch.make_dispatcher`) and
predictors (:func:`~dispatchlab.predict.make_predictor`), so any registered name slots
in without code change. The :class:`StudyResult` gives one table row per combination
and the data of the paper's three figures (slowdowns of the jobs whose slowdown differs
from 1 somewhere, per job class, and the time-weighted queue lengths), which
:mod:`dispatchlab.report.study` draws (``slowdown.png``, ``slowdown_by_class.png``,
``queue_length.png``; :func:`dispatchlab.report.study.write_study` writes the tables and
the figures). Queue-length statistics are computed on the union of the step functions'
breakpoints (never one value per second).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.core.components import parse_component
from dispatchlab.core.deprecation import moved_attributes, moved_callable
from dispatchlab.core.errors import InputError, output_folder
from dispatchlab.metrics import StepFunction, check_tau, job_columns, queue_length
from dispatchlab.metrics.distributions import (  # moved to metrics/, still importable here
    merge_step_functions,  # noqa: F401
    merged_distributions,
    slowdown_changed_mask,
    weighted_box_stats,  # noqa: F401
)
from dispatchlab.metrics.keys import BY_KEY
from dispatchlab.run.build import PowerInputs, build, choose_engine
from dispatchlab.run.config import Component, RunConfig
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim.engine import check_combination, is_node_level
from dispatchlab.sim.native import native_reason

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
    "dispatcher", "predictor", "label", *STUDY_METRICS, "simulate_seconds", "engine",
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
        window; None when the summary does not report it), the simulation's wall
        time ``simulate_seconds`` and the ``engine`` that ran; with job power (summaries
        with ``energy_j``), also the :data:`POWER_STUDY_METRICS` (cap metrics None
        without a cap)."""

        power = any("energy_j" in run.summary for run in self.runs)
        keys = STUDY_METRICS + (POWER_STUDY_METRICS if power else ())
        out = []
        for run in self.runs:
            row = {"dispatcher": run.dispatcher, "predictor": run.predictor,
                   "label": run.label}
            row.update({k: BY_KEY[k].value(run.summary) for k in keys})
            row["simulate_seconds"] = run.summary.get("simulate_seconds")
            row["engine"] = run.summary.get("engine")
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
    def write_tables(self, out_dir: str | Path) -> list[Path]:
        """Write ``study.csv`` (the :meth:`rows`) and ``study.json`` (the rows with the
        study's trace, platform, tau, names and the number of jobs the slowdown figures
        draw) into ``out_dir`` (created if needed); return the two paths. The figures
        are drawn by :func:`dispatchlab.report.study.write_study`, which calls this."""
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
        return [out / "study.csv", out / "study.json"]

    write = moved_callable("dispatchlab.experiment.study.StudyResult.write",
                           "dispatchlab.report.study:write_study")


def run_prediction_study(jobs, platform, dispatchers: Sequence[str],
                         predictors: Sequence[str], tau: float = 10.0, *, cap=None,
                         power_predictor=None, duration_model=None,
                         model_field: str = "duration_model",
                         engine: str = "auto") -> StudyResult:
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
    them: runs do not share state), on the ``engine`` (``auto``, ``native``,
    ``python``: :class:`~dispatchlab.run.config.RunConfig`)."""

    t = check_tau(tau)
    RunConfig(engine=engine).validate()
    if not dispatchers or not predictors:
        raise InputError("a study needs at least one dispatcher and one predictor")
    specs_d = {d: parse_component(d, "dispatcher", option="dispatchers") for d in dispatchers}
    specs_p = {p: parse_component(p, "predictor", option="predictors") for p in predictors}

    node_level = is_node_level(platform, jobs)
    for d in dispatchers:
        check_combination(specs_d[d].build(), duration_model=duration_model,
                          node_level=node_level, model_field=model_field)
        if engine == "native":  # refused before any run, naming the first not native
            for p in predictors:
                choose_engine(engine, native_reason(
                    platform, jobs, specs_d[d].build(), specs_p[p].build(), cap=cap,
                    power_predictor=power_predictor, duration_model=duration_model))
    submit = np.asarray(jobs["submit"], dtype=np.int64)
    runs = []
    for d in dispatchers:
        for p in predictors:
            config = RunConfig(dispatcher=Component(specs_d[d].name, dict(specs_d[d].params)),
                               predictor=Component(specs_p[p].name, dict(specs_p[p].params)),
                               tau=t, engine=engine)
            res = build(config, jobs=jobs, platform=platform,
                        power=lambda j, _: PowerInputs(j, None, cap, power_predictor),
                        duration_model=duration_model).simulation.run()
            summary = run_summary(res, tau=t)
            cols = job_columns(submit, res.start, res.end, res.status, tau=t)
            runs.append(Combination(d, p, res.start, res.end, res.status, summary, cols))
    return StudyResult(list(dispatchers), list(predictors), t, submit, runs,
                       source=str(jobs.info.source), platform=platform.describe())



# the figures moved to the report layer (experiment/ draws none)
__getattr__ = moved_attributes(__name__, {
    name: f"dispatchlab.report.study:{name}"
    for name in ("study_figures", "plot_study", "predictor_legend")})
