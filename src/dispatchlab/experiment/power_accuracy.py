"""Evaluate job power predictors on their own, on a replay of the trace's recorded
schedule (Carastan-Santos et al. 2024 section 6.3, Figure 3).

No dispatcher is involved: every job is submitted at its ``submit`` time and ends at
its recorded ``end = submit + wait + run`` (SWF fields 2-4; a negative run counts as 0).
A job with a missing wait (``wait < 0``) has no recorded end: it is predicted but never
observed (so it never joins any history; ``unobserved`` counts them).

Event order (causal, as in the engine). Events are processed in time order; at one
timestamp ``t``: first the jobs ending at ``t`` that were submitted before ``t`` are
observed (``observe(job, t)``, in job-row order), then the jobs submitted at ``t`` are
predicted (``predict(job, t)``, in row order), then the jobs both submitted and ended at
``t`` (wait and run 0) are observed (row order): a job is never observed before its own
prediction, and a prediction at ``t`` sees exactly the jobs that ended at or before
``t`` and were submitted before ``t``. Each predictor is replayed on its own fresh clone
(``PowerPredictor.clone``), started with ``start(jobs, platform)``.

Metrics, per predictor and per power metric m in ``mean``, ``max``, ``std`` (W): over
the jobs whose actual value (``power_m`` column) is finite, ``mae`` and ``median_ae``
(mean and median absolute error), ``jobs`` (their number; ``None`` errors when 0), and
the per-user MAE (:attr:`PowerReport.user_mae`, Carastan-Santos et al. 2024 Figure 3's box plots:
one value per user) with its median ``user_mae_median`` (the paper's "median prediction
MAE").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.power.model import POWER_COLUMNS, has_power
from dispatchlab.predict.power.base import PowerPredictor
from dispatchlab.predict.power.predictors import make_power_predictor

if TYPE_CHECKING:
    import pyarrow as pa

    from dispatchlab.platform.platform import Platform
    from dispatchlab.workload.jobs import JobTable

#: the power metrics, in the order of :class:`~dispatchlab.predict.power.base.PowerPrediction`
POWER_METRICS: tuple[str, ...] = ("mean", "max", "std")

_END, _SUBMIT, _END_SAME = 0, 1, 2  # event kinds, in their order at one timestamp


def power_replay_events(jobs: JobTable) -> tuple[list[int], list[int], list[int], int]:
    """(times, kinds, rows, unobserved): the replay's events in processing order (see the
    module docstring; kinds 0 = end, 1 = submit, 2 = end of a job submitted at the same
    time) and the number of jobs never observed (``wait < 0``)."""
    n = len(jobs)
    submit = np.asarray(jobs["submit"], dtype=np.int64)
    wait = np.asarray(jobs["wait"], dtype=np.int64)
    run = np.maximum(np.asarray(jobs["run"], dtype=np.int64), 0)
    ends = np.flatnonzero(wait >= 0)
    end = submit[ends] + wait[ends] + run[ends]
    end_kind = np.where(end == submit[ends], _END_SAME, _END).astype(np.int8)
    times = np.concatenate([submit, end])
    kinds = np.concatenate([np.full(n, _SUBMIT, dtype=np.int8), end_kind])
    rows = np.concatenate([np.arange(n, dtype=np.int64), ends])
    order = np.lexsort((rows, kinds, times))  # time, then kind, then row
    return (times[order].tolist(), kinds[order].tolist(), rows[order].tolist(),
            int(n - len(ends)))


def replay_power(predictor: PowerPredictor, jobs: JobTable, platform: Platform,
                 events: tuple[list[int], list[int], list[int], int] | None = None,
                 ) -> np.ndarray:
    """Start ``predictor`` itself (no clone) and replay the events on it; return its
    predictions, float64 ``(n, 3)`` (columns mean, max, std in W; NaN never predicted)."""
    times, kinds, rows, _ = power_replay_events(jobs) if events is None else events
    out = np.full((len(jobs), 3), np.nan)
    predictor.start(jobs, platform)
    predict, observe = predictor.predict, predictor.observe
    for t, kind, job in zip(times, kinds, rows, strict=True):
        if kind == _SUBMIT:
            p = predict(job, t)
            out[job] = (float(p[0]), float(p[1]), float(p[2]))
        else:
            observe(job, t)
    return out


def _error_metrics(err: np.ndarray) -> dict[str, Any]:
    """MAE, median AE (W) and count of absolute errors ``err``."""
    if not len(err):
        return {"mae": None, "median_ae": None, "jobs": 0}
    return {"mae": float(err.mean()), "median_ae": float(np.median(err)),
            "jobs": len(err)}


@dataclass
class PowerReport:
    """Power predictions of several predictors on one replayed trace (see the module
    docstring). Arrays are aligned with the job rows.

    ``actual`` and each ``predicted[name]`` map ``"mean"``, ``"max"``, ``"std"`` to
    float64 W arrays (NaN: unknown actual power); ``metrics[name][m]`` holds ``mae``,
    ``median_ae`` (W), ``jobs`` and ``user_mae_median``; ``users`` are the user ids with
    at least one job of known power (any metric, sorted) and ``user_mae[name][m]`` the
    MAE of each of them (aligned with ``users``; NaN for a user without a known value of
    m)."""

    job_id: np.ndarray
    user: np.ndarray
    submit: np.ndarray
    actual: dict[str, np.ndarray]
    predicted: dict[str, dict[str, np.ndarray]]
    metrics: dict[str, dict[str, dict[str, Any]]]
    users: np.ndarray
    user_mae: dict[str, dict[str, np.ndarray]]
    unobserved: int = 0
    source: str = "<memory>"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.predicted)

    def __len__(self) -> int:
        return len(self.job_id)

    def table(self) -> dict[str, np.ndarray]:
        """The predictions, one row per job: ``job_id``, ``user``, ``submit``,
        ``actual_mean``, ``actual_max``, ``actual_std``, then ``<name>_mean``,
        ``<name>_max``, ``<name>_std`` per predictor (W; NaN unknown)."""
        out: dict[str, np.ndarray] = {"job_id": self.job_id, "user": self.user,
                                      "submit": self.submit}
        for m in POWER_METRICS:
            out[f"actual_{m}"] = self.actual[m]
        for name, pred in self.predicted.items():
            for m in POWER_METRICS:
                out[f"{name}_{m}"] = pred[m]
        return out

    def to_arrow(self) -> pa.Table:
        """:meth:`table` as a pyarrow table (int64 ids and times, float64 powers)."""
        import pyarrow as pa

        return pa.table({k: pa.array(v) for k, v in self.table().items()})

    def summary(self) -> dict[str, Any]:
        """A JSON-ready dict: the source, job counts, replay facts and the metrics."""
        return {
            "source": self.source,
            "jobs": len(self),
            "jobs_with_power": {m: int(np.count_nonzero(np.isfinite(self.actual[m])))
                                for m in POWER_METRICS},
            "users_with_power": len(self.users),
            "unobserved": self.unobserved,
            "replay": "recorded schedule: observed at end = submit + wait + run; "
                      "wait < 0: never observed",
            "metrics": self.metrics,
            **self.extra,
        }


def evaluate_power_predictors(jobs: JobTable, platform: Platform,
                              predictors: Mapping[str, PowerPredictor | str],
                              ) -> PowerReport:
    """Replay ``jobs``' recorded schedule causally for each predictor (a fresh clone
    each; a string value is built with
    :func:`~dispatchlab.predict.power.predictors.make_power_predictor`) and score its predictions
    against the jobs' power columns (see the module docstring). The keys label the
    predictors (the predictions table's column prefixes; ``"actual"`` is reserved).
    :class:`InputError` when the table has no power columns or no predictor is given.
    """

    if not has_power(jobs):
        raise InputError("evaluating power predictors needs the job power columns "
                         f"({', '.join(POWER_COLUMNS)}), which the job table lacks",
                         field="power-predictor")
    if not predictors:
        raise InputError("no power predictor given", field="power-predictor")
    pairs: list[tuple[str, PowerPredictor]] = []
    for label, pred in predictors.items():
        if str(label) in ("actual", "job_id", "user", "submit"):
            raise InputError(f"{label!r} cannot label a power predictor (reserved)",
                             field="power-predictor")
        built = make_power_predictor(pred) if isinstance(pred, str) else pred.clone()
        pairs.append((str(label), built))
    events = power_replay_events(jobs)
    user = np.asarray(jobs["user"], dtype=np.int64)
    actual = {m: np.asarray(jobs.columns[c], dtype=np.float64)
              for m, c in zip(POWER_METRICS, POWER_COLUMNS, strict=True)}
    any_known = np.zeros(len(jobs), dtype=bool)
    for a in actual.values():
        any_known |= np.isfinite(a)
    users, inverse = np.unique(user, return_inverse=True)
    keep = np.bincount(inverse[any_known], minlength=len(users)) > 0
    predicted: dict[str, dict[str, np.ndarray]] = {}
    metrics: dict[str, dict[str, dict[str, Any]]] = {}
    user_mae: dict[str, dict[str, np.ndarray]] = {}
    extra: dict[str, Any] = {}
    for label, pred in pairs:
        out = replay_power(pred, jobs, platform, events)
        predicted[label] = {m: out[:, i].copy() for i, m in enumerate(POWER_METRICS)}
        metrics[label] = {}
        user_mae[label] = {}
        for i, m in enumerate(POWER_METRICS):
            a = actual[m]
            known = np.isfinite(a)
            err = np.abs(out[known, i] - a[known])
            stats = _error_metrics(err)
            sums = np.bincount(inverse[known], weights=err, minlength=len(users))
            counts = np.bincount(inverse[known], minlength=len(users))
            with np.errstate(invalid="ignore", divide="ignore"):
                per_user = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)[keep]
            finite = per_user[np.isfinite(per_user)]
            stats["user_mae_median"] = float(np.median(finite)) if len(finite) else None
            metrics[label][m] = stats
            user_mae[label][m] = per_user
        counts_ = getattr(pred, "counts_", None)
        if isinstance(counts_, dict):
            extra.setdefault("counts", {})[label] = {str(k): int(v)
                                                     for k, v in counts_.items()}
    return PowerReport(
        job_id=np.asarray(jobs["job_id"], dtype=np.int64), user=user,
        submit=np.asarray(jobs["submit"], dtype=np.int64), actual=actual,
        predicted=predicted, metrics=metrics, users=users[keep], user_mae=user_mae,
        unobserved=events[3], source=str(jobs.info.source), extra=extra)
