"""Evaluate duration predictors on their own, on a replay of the trace's recorded schedule.

No dispatcher is involved: every job starts at ``submit + wait`` and ends at
``start + run`` (SWF fields 2, 3 and 4), as recorded in the trace. A missing wait
(``-1``, or any negative value) is replayed as 0 and counted; when no job of the trace
has a wait (LLNL-Atlas, LLNL-Thunder, NASA-iPSC, ...) the report says so with
``wait_missing = True``. A negative run time is replayed (and scored) as 0.

Events are processed in time order. At each timestamp, first every job ending then is
observed (``observe(job, end)``, in job-row order), then every job submitted then is
predicted (``predict(job, submit)``, in row order), then the jobs starting then get
their start time in the context's ``start_times``. So a prediction may use exactly the
jobs that ended at or before the submission: a job ending at the submission time is
visible, one still running is not. Each predictor is replayed on its own fresh clone,
with ``overrun = "run"``.

Metrics (per predictor, overall and per job class of the *actual* run time, see
:func:`dispatchlab.metrics.jobs.job_class`): ``mae_min`` and ``median_ae_min`` (mean and
median absolute error, minutes), ``under`` (share with predicted < actual), ``over``
(predicted > actual), ``within_25`` (share with ``|predicted - actual| <= 0.25 *
actual``; for an actual of 0 only a prediction of 0 counts) and ``jobs``. Shares are
fractions in [0, 1]; an empty class has ``jobs = 0`` and ``None`` elsewhere.

The files and figures of a :class:`PredictionReport` (``predictions.parquet``,
``prediction_errors.png``, ``prediction_vs_actual.png``, ``prediction_summary.json``:
``dispatchlab predict --out DIR``) are written by
:func:`dispatchlab.report.duration_accuracy.write_prediction_report`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.components import parse_component
from dispatchlab.core.deprecation import moved_attributes, moved_callable
from dispatchlab.core.errors import InputError
from dispatchlab.metrics.jobs import JOB_CLASS_LABELS, job_class
from dispatchlab.predict.duration.base import Predictor, PredictorContext

if TYPE_CHECKING:
    import pyarrow as pa

    from dispatchlab.workload.jobs import JobTable

#: metric keys, in display order
METRIC_NAMES: tuple[str, ...] = ("mae_min", "median_ae_min", "under", "over", "within_25",
                                 "jobs")

_END, _SUBMIT, _START = 0, 1, 2  # event kinds, in their order at one timestamp


def prediction_metrics(predicted: np.ndarray, actual: np.ndarray) -> dict[str, Any]:
    """The metrics of one set of predictions (seconds) against the actual run times."""
    p = np.asarray(predicted, dtype=np.int64)
    a = np.asarray(actual, dtype=np.int64)
    n = len(a)
    if n == 0:
        return {k: (0 if k == "jobs" else None) for k in METRIC_NAMES}
    err = np.abs(p - a)
    within = np.where(a == 0, p == 0, err <= 0.25 * a)
    return {
        "mae_min": float(err.mean() / 60.0),
        "median_ae_min": float(np.median(err) / 60.0),
        "under": float(np.mean(p < a)),
        "over": float(np.mean(p > a)),
        "within_25": float(np.mean(within)),
        "jobs": int(n),
    }


@dataclass
class PredictionReport:
    """Predictions of several predictors on one replayed trace (see the module docstring).

    ``predicted`` maps each predictor name to its per-job predictions (int64 seconds,
    aligned with the job rows); ``actual`` holds the run times; ``metrics`` maps each
    name to ``{"all": {...}, "short": {...}, "medium": {...}, "long": {...}}``;
    ``rule_counts`` the ``rule_counts_`` of predictors that have one (history).
    """

    job_id: np.ndarray
    submit: np.ndarray
    actual: np.ndarray
    predicted: dict[str, np.ndarray]
    metrics: dict[str, dict[str, dict[str, Any]]]
    wait_missing: bool = False
    missing_waits: int = 0
    rule_counts: dict[str, dict[str, int]] = field(default_factory=dict)
    source: str = "<memory>"
    #: jobs whose user id is missing (-1): user-based predictors give them the wall-time
    no_user: int = 0

    @property
    def names(self) -> list[str]:
        return list(self.predicted)

    def __len__(self) -> int:
        return len(self.actual)

    def to_arrow(self) -> pa.Table:
        """One row per job and predictor: job_id, predictor, predicted, actual, submit."""
        import pyarrow as pa

        n = len(self.actual)
        k = len(self.predicted)
        names = np.repeat(np.array(self.names, dtype=object), n)
        predicted = (np.concatenate(list(self.predicted.values())) if k
                     else np.zeros(0, dtype=np.int64))
        return pa.table({
            "job_id": pa.array(np.tile(self.job_id, k), type=pa.int64()),
            "predictor": pa.array(names.tolist(), type=pa.string()),
            "predicted": pa.array(predicted, type=pa.int64()),
            "actual": pa.array(np.tile(self.actual, k), type=pa.int64()),
            "submit": pa.array(np.tile(self.submit, k), type=pa.int64()),
        })

    def summary(self) -> dict[str, Any]:
        """A JSON-ready dict of the metrics and replay facts."""
        return {
            "source": self.source,
            "jobs": len(self),
            "wait_missing": self.wait_missing,
            "missing_waits": self.missing_waits,
            "replay": "recorded schedule: start = submit + wait, end = start + run",
            "metrics": self.metrics,
            "rule_counts": self.rule_counts,
            "jobs_without_user": self.no_user,
        }

    # the presentation moved to the report layer (experiment/ draws no figures)
    figures = moved_callable("dispatchlab.experiment.duration_accuracy.PredictionReport.figures",
                             "dispatchlab.report.duration_accuracy:prediction_figures")
    plot = moved_callable("dispatchlab.experiment.duration_accuracy.PredictionReport.plot",
                          "dispatchlab.report.duration_accuracy:plot_prediction_errors")
    write = moved_callable("dispatchlab.experiment.duration_accuracy.PredictionReport.write",
                           "dispatchlab.report.duration_accuracy:write_prediction_report")


def replay_schedule(jobs: JobTable) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """(start, end, missing waits, wait missing throughout) of the recorded schedule."""
    submit = jobs["submit"].astype(np.int64)
    wait = jobs["wait"].astype(np.int64)
    missing = wait < 0
    run = np.maximum(jobs["run"].astype(np.int64), 0)
    start = submit + np.where(missing, 0, wait)
    n_missing = int(missing.sum())
    return start, start + run, n_missing, bool(len(wait) > 0 and n_missing == len(wait))


def _event_order(submit: np.ndarray, start: np.ndarray, end: np.ndarray):
    n = len(submit)
    times = np.concatenate([end, submit, start])
    kinds = np.repeat(np.array([_END, _SUBMIT, _START], dtype=np.int8), n)
    rows = np.tile(np.arange(n, dtype=np.int64), 3)
    order = np.lexsort((rows, kinds, times))  # time, then kind, then row
    return times[order].tolist(), kinds[order].tolist(), rows[order].tolist()


def _replay(pred: Predictor, jobs: JobTable, events, start: np.ndarray) -> np.ndarray:
    n = len(jobs)
    start_times = np.full(n, -1, dtype=np.int64)
    pred.start(PredictorContext(jobs=jobs, overrun="run", start_times=start_times))
    out = np.zeros(n, dtype=np.int64)
    start_list = start.tolist()
    observe, predict = pred.observe, pred.predict
    for t, kind, job in zip(*events, strict=True):
        if kind == _END:
            start_times[job] = start_list[job]  # a run of 0 starts and ends at once
            observe(job, t)
        elif kind == _SUBMIT:
            out[job] = int(predict(job, t))
        else:
            start_times[job] = start_list[job]
    return out


def _as_predictors(items: Iterable[str | Predictor] | Mapping[str, Predictor]
                   ) -> list[tuple[str, Predictor]]:
    """(label, fresh predictor) pairs: a string is a component spec in the grammar of
    :mod:`dispatchlab.core.components` (labelled by its text, e.g. ``inflated:factor=2.0``),
    a predictor object is cloned and labelled by its ``name``, a mapping gives labels."""

    pairs: list[tuple[str, Predictor]] = []
    if isinstance(items, Mapping):
        pairs = [(str(k), v.clone()) for k, v in items.items()]
    else:
        for item in items:
            if isinstance(item, str):
                spec = parse_component(item, "predictor", option="predictors")
                pairs.append((spec.text, spec.build()))
            else:
                pairs.append((item.name, item.clone()))
    seen: set[str] = set()
    for label, _ in pairs:
        if label in seen:
            raise InputError(f"predictor {label!r} given twice", field="predictors")
        seen.add(label)
    if not pairs:
        raise InputError("no predictor given", field="predictors")
    return pairs


def evaluate_predictors(jobs: JobTable,
                        names_or_predictors: Iterable[str | Predictor] | Mapping[str, Predictor]
                        ) -> PredictionReport:
    """Replay ``jobs``' recorded schedule for each predictor (a fresh clone each) and
    score its predictions against the actual run times (see the module docstring)."""
    preds = _as_predictors(names_or_predictors)
    start, end, n_missing, all_missing = replay_schedule(jobs)
    submit = jobs["submit"].astype(np.int64)
    actual = np.maximum(jobs["run"].astype(np.int64), 0)
    events = _event_order(submit, start, end)
    classes = job_class(actual)
    predicted: dict[str, np.ndarray] = {}
    metrics: dict[str, dict[str, dict[str, Any]]] = {}
    rule_counts: dict[str, dict[str, int]] = {}
    for label, pred in preds:
        p = _replay(pred, jobs, events, start)
        predicted[label] = p
        m = {"all": prediction_metrics(p, actual)}
        for code, job_class_label in enumerate(JOB_CLASS_LABELS):
            mask = classes == code
            m[job_class_label] = prediction_metrics(p[mask], actual[mask])
        metrics[label] = m
        counts = getattr(pred, "rule_counts_", None)
        if counts is not None:
            rule_counts[label] = {str(k): int(v) for k, v in counts.items()}
    return PredictionReport(
        job_id=jobs["job_id"].astype(np.int64), submit=submit, actual=actual,
        predicted=predicted, metrics=metrics, wait_missing=all_missing,
        missing_waits=n_missing, rule_counts=rule_counts, source=str(jobs.info.source),
        no_user=int(np.count_nonzero(jobs["user"] == -1)))


# the figure file names moved with the figures to the report layer
__getattr__ = moved_attributes(__name__, {
    "FIGURE_FILES": "dispatchlab.report.duration_accuracy:FIGURE_FILES"})
