"""ML: a regression model retrained online on the jobs completed so far (Galleguillos et al. 2017,
section 3)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.predict.duration.base import Predictor
from dispatchlab.predict.duration.history import HistoryPredictor

if TYPE_CHECKING:
    from dispatchlab.predict.duration.base import PredictorContext

#: the job's own submit-time columns, in matrix order (then the per-unit resources)
_STATIC_FEATURES = ("user", "group", "app", "queue", "partition", "log_requested_time",
                    "log_units")
#: features from the run's history, filled at predict time, in matrix order
_DYNAMIC_FEATURES = ("hour", "weekday", "log_user_last_run", "log_user_prev_run",
                     "log_user_mean_run", "user_outstanding", "user_observed",
                     "log_history")
#: the model output (log1p seconds) is clipped to [0, this] before expm1 (~2.4e17 s)
_MAX_LOG = 40.0


def _default_model() -> Any:
    import lightgbm

    return lightgbm.LGBMRegressor(objective="l1", n_estimators=100, learning_rate=0.1,
                                  num_leaves=31, verbose=-1, n_jobs=1, random_state=0)


def _category_ids(col: np.ndarray) -> np.ndarray:
    """Integer columns as they are; other columns (strings) as ids 0, 1, ... in order of
    first appearance (so a job's id never depends on later jobs)."""
    if col.dtype != object:
        return col.astype(np.float64)
    ids: dict[Any, int] = {}
    return np.array([ids.setdefault(v, len(ids)) for v in col.tolist()], dtype=np.float64)


class MLPredictor(Predictor):
    """ML: a regression model retrained online on all the jobs completed so far.

    Every ``retrain_every`` seconds of simulated time (weekly by default), at the first
    submission at or after the due time, the model is refitted on the feature rows of
    all jobs observed (completed) so far, with target ``log1p(observed run)``; the first
    training happens at the first submission once ``min_train_jobs`` jobs have been
    observed. Until then the prediction is the :class:`HistoryPredictor`'s (``fallbacks_``
    counts those jobs). After it, the prediction is ``expm1(model output)`` rounded to an
    integer, at least 0 and, with ``cap_by_walltime`` (the default), at most the job's
    wall-time. ``trainings_`` counts the fits.

    ``model`` is ``"lightgbm"`` (``LGBMRegressor(objective="l1", n_estimators=100,
    learning_rate=0.1, num_leaves=31, verbose=-1, n_jobs=1, random_state=0)``, predicted
    through its booster) or any object with scikit-learn's ``fit``/``predict``, copied at
    every training with ``sklearn.base.clone`` (a deep copy if it is not a scikit-learn
    estimator), so the object passed in is never fitted. A fit that raises becomes an
    :class:`InputError` naming the simulated time.

    The default objective is L1 (absolute error) on the log target: its optimum is the
    conditional median of ``log1p(run)``, i.e. of the run time itself, which is what
    minimises the mean absolute error in seconds. The squared-error objective estimates
    the conditional mean of the log, a geometric mean that underestimates long jobs (on
    KTH-SP2 it gave an MAE of 96 minutes against 71 for L1 and 80 for the wall-time).

    Features (one float64 row per job, computed at its submission, O(1) each from hash
    maps, stored so that training recomputes nothing):

    * ``user``, ``group``, ``app``, ``queue``, ``partition``: the ids as numbers (a string
      column gets ids 0, 1, ... in order of first appearance; -1 = unknown);
    * ``log1p(requested_time)``, ``log1p(units)`` and ``log1p`` of each per-unit resource
      other than ``core`` (in name order; negative values count as 0);
    * hour of day (0-23) and day of week (0 = Monday) of the submission: UTC from the
      trace's ``UnixStartTime`` (plus any re-basing offset) when known, else the submit
      time counted from an arbitrary Monday 00:00;
    * the user's last and previous observed run times (``log1p``, -1 when missing; the
      most recent completion first) and mean observed run time (``log1p``, -1 when none);
    * the number of the user's jobs submitted but not yet completed, and observed so far;
    * the history heuristic's prediction (``log1p``).

    Jobs without a user id (``user == -1``) share the user statistics of id -1.
    """

    name = "ml"

    def __init__(self, model: str | Any = "lightgbm", retrain_every: int = 7 * 86400,
                 min_train_jobs: int = 100, cap_by_walltime: bool = True) -> None:
        self.model = model
        self.retrain_every = retrain_every
        self.min_train_jobs = min_train_jobs
        self.cap_by_walltime = cap_by_walltime

    def _validate(self) -> None:
        if isinstance(self.model, str):
            if self.model != "lightgbm":
                raise InputError(f"unknown ml model {self.model!r} (give \"lightgbm\" or a "
                                 "scikit-learn regressor object)", field="predictor")
        elif not (hasattr(self.model, "fit") and hasattr(self.model, "predict")):
            raise InputError(f"the ml model {self.model!r} has no fit/predict methods",
                             field="predictor")
        for key, low in (("retrain_every", 1), ("min_train_jobs", 1)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InputError(f"ml {key} must be an integer >= {low}, got {value!r}",
                                 field="predictor")

    def start(self, context: PredictorContext) -> None:
        self._validate()
        super().start(context)
        jobs = context.jobs
        n = len(jobs)
        self.history_ = HistoryPredictor(cap_by_walltime=self.cap_by_walltime)
        self.history_.start(context)
        extra = sorted(k for k in jobs.resources if k != "core")
        self.feature_names_ = (*_STATIC_FEATURES,
                               *(f"log_per_unit_{k}" for k in extra), *_DYNAMIC_FEATURES)
        n_static = len(_STATIC_FEATURES) + len(extra)
        self._n_static = n_static
        x = np.zeros((n, len(self.feature_names_)), dtype=np.float64)
        for i, col in enumerate(("user", "group", "app", "queue", "partition")):
            x[:, i] = _category_ids(np.asarray(jobs[col]))
        x[:, 5] = np.log1p(np.maximum(self._requested, 0))
        x[:, 6] = np.log1p(np.maximum(jobs["units"], 0))
        for i, k in enumerate(extra):
            x[:, 7 + i] = np.log1p(np.maximum(jobs.resources[k], 0))
        # hour and weekday of the submission (computed here: they depend on the job only)
        info = jobs.info
        submit = jobs["submit"].astype(np.int64)
        if info.unix_start_time is not None:
            t = submit + int(info.unix_start_time) + int(info.time_offset)
            day_shift = 3  # 1970-01-01 was a Thursday
        else:
            t = submit + int(info.time_offset)
            day_shift = 0
        x[:, n_static] = (t % 86400) // 3600
        x[:, n_static + 1] = (t // 86400 + day_shift) % 7
        self.features_ = x
        self.user_list_ = jobs["user"].tolist()
        self.wall_list_ = self._requested.tolist()
        # user -> [last run, previous run, sum of runs, observed count, outstanding count]
        self.user_stats_: dict[int, list[float]] = {}
        self.predicted_ = np.zeros(n, dtype=bool)
        self.train_rows_: list[int] = []
        self.train_y_: list[float] = []
        self.next_train_: int | None = None  # None: train as soon as enough jobs are seen
        self.model_: Any = None
        self.booster_: Any = None
        self.trainings_ = 0
        self.fallbacks_ = 0
        self.train_seconds_: list[float] = []

    # -- learning ---------------------------------------------------------------------

    def _train(self, now: int) -> None:
        import time

        rows = np.asarray(self.train_rows_, dtype=np.int64)
        y = np.asarray(self.train_y_, dtype=np.float64)
        if isinstance(self.model, str):
            model = _default_model()
        else:
            from sklearn.base import clone

            model = clone(self.model, safe=False)  # deep copy if not an estimator
        tic = time.perf_counter()
        try:
            model.fit(self.features_[rows], y)
        except Exception as exc:
            raise InputError(f"the ml predictor's model failed to train at t={now}: {exc}",
                             field="predictor") from None
        self.train_seconds_.append(time.perf_counter() - tic)
        self.model_ = model
        booster = getattr(model, "booster_", None) if _is_lightgbm(model) else None
        self.booster_ = booster
        self.trainings_ += 1

    def predict(self, job: int, now: int) -> int:
        wall = self.wall_list_[job]
        hist = self.history_.predict(job, now)
        user = self.user_list_[job]
        stats = self.user_stats_.get(user)
        if stats is None:
            stats = self.user_stats_[user] = [-1.0, -1.0, 0.0, 0, 0]
        row = self.features_[job]
        k = self._n_static + 2
        row[k] = stats[0]
        row[k + 1] = stats[1]
        row[k + 2] = math.log1p(stats[2] / stats[3]) if stats[3] else -1.0
        row[k + 3] = stats[4]
        row[k + 4] = stats[3]
        row[k + 5] = math.log1p(max(hist, 0))
        stats[4] += 1
        self.predicted_[job] = True
        if len(self.train_rows_) >= self.min_train_jobs and (
                self.next_train_ is None or now >= self.next_train_):
            self._train(now)
            self.next_train_ = now + self.retrain_every
        if self.model_ is None:
            self.fallbacks_ += 1
            return hist
        x = row[None, :]
        try:
            out = (self.booster_.predict(x, num_threads=1) if self.booster_ is not None
                   else self.model_.predict(x))
            value = float(np.asarray(out).ravel()[0])
        except Exception as exc:
            raise InputError(f"the ml predictor's model failed to predict at t={now}: {exc}",
                             field="predictor") from None
        if not math.isfinite(value):
            value = 0.0 if value != math.inf else _MAX_LOG
        est = max(round(math.expm1(min(max(value, 0.0), _MAX_LOG))), 0)
        return min(est, wall) if self.cap_by_walltime else est

    def observe(self, job: int, now: int) -> None:
        self.history_.observe(job, now)
        if not self.predicted_[job]:
            return  # no feature row (never submitted through predict)
        run = max(now - int(self.context_.start_times[job]), 0)
        log_run = math.log1p(run)
        stats = self.user_stats_[self.user_list_[job]]
        stats[1] = stats[0]
        stats[0] = log_run
        stats[2] += run
        stats[3] += 1
        stats[4] -= 1
        self.train_rows_.append(job)
        self.train_y_.append(log_run)


def _is_lightgbm(model: Any) -> bool:
    try:
        import lightgbm
    except ImportError:  # pragma: no cover - lightgbm is a dependency
        return False
    return isinstance(model, lightgbm.LGBMModel)
