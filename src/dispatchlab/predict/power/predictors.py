"""Job power predictors: naive, real, the user-history window of Carastan-Santos et al. 2024
(section 4.1),
per-user regressors (Borghesi et al. 2018 section 4.1) and Carastan-Santos et al. 2024's online
retrained regression (section 4.2).

Every predictor follows :class:`~dispatchlab.predict.power.base.PowerPredictor`: parameters
in ``__init__`` (stored unchanged), state built in ``start(jobs, platform)``, one
``predict(job, now)`` at the job's submission (``now`` = its submit time ``r_j``, in
the table's own time origin, integer seconds) and one ``observe(job, end)`` at its
completion ``C_j = end``. Predictions are :class:`PowerPrediction` ``(mean, max, std)``
in W for the **whole job** (all its nodes), like the table's power columns
(:data:`~dispatchlab.power.model.POWER_COLUMNS`). Every prediction is clipped to
``mean >= 0``, ``max >= mean`` and ``std >= 0`` (a non-finite value counts as 0), which
the engine requires.

Causality. ``observe`` calls must come in non-decreasing ``end`` order (the engine and
:func:`~dispatchlab.experiment.power_accuracy.evaluate_power_predictors` do so); a job observed at
``end`` may be used by every later ``predict`` with ``now >= end``. A job's own power
columns are read only once it is observed (except by ``real``, the oracle).

Registered names (:data:`POWER_PREDICTORS`, :func:`make_power_predictor`):

* ``naive`` (:class:`NaivePowerPredictor`): mean = max = the platform's maximum node
  power x the job's nodes (Carastan-Santos et al. 2024: 2,100 W x q_j on Marconi100), std 0;
* ``real`` (:class:`RealPowerPredictor`): the job's own measured power (oracle);
* ``history`` (:class:`HistoryPowerPredictor`): Carastan-Santos et al. 2024 eqs. 1-3;
* ``per-user`` (:class:`PerUserPowerPredictor`): Borghesi et al. 2018's one regressor per user;
* ``ml`` (:class:`MLPowerPredictor`): Carastan-Santos et al. 2024's weekly retrained regression
  (Table 2);
* ``underpredicted`` (:class:`Underpredicted`): the real power, a seeded share of the jobs
  predicted ``factor`` x their real power (Borghesi et al. 2018's misprediction study).
"""

from __future__ import annotations

import math
import warnings
from abc import abstractmethod
from array import array
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.registry import Registry
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.power.model import POWER_COLUMNS, has_power, job_nodes
from dispatchlab.predict.power.base import PowerPrediction, PowerPredictor

if TYPE_CHECKING:
    from dispatchlab.platform.platform import Platform
    from dispatchlab.workload.jobs import JobTable

#: the ``field`` of the InputErrors raised here
FIELD = "power-predictor"
#: seconds in a week: the default retraining period of ``per-user`` and ``ml``
WEEK = 7 * 86400

# the exact running sums of the history window store power x 2**_SCALE_BITS as integers
_SCALE_BITS = 40
_SCALE = 1 << _SCALE_BITS
_EPS = 2.0 ** -52
# the prefix-sum result is used when its error bound is below _TOL x its value
_TOL = 1e-10
# integral alphas up to this use prefix sums; others the direct formula
_MAX_INT_ALPHA = 8


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def clip_prediction(mean: float, peak: float, std: float) -> PowerPrediction:
    """``(mean, max, std)`` made valid for the engine: non-finite values become 0, then
    ``mean >= 0``, ``max >= mean``, ``std >= 0`` (W)."""
    m = float(mean)
    p = float(peak)
    s = float(std)
    m = m if math.isfinite(m) and m > 0.0 else 0.0
    p = p if math.isfinite(p) and p > m else m
    s = s if math.isfinite(s) and s > 0.0 else 0.0
    return PowerPrediction(m, p, s)


def _node_power(platform: Platform, who: str) -> float:
    """The platform's maximum node power (W); InputError when it is not set."""
    value = platform.max_node_power
    if value is None:
        raise InputError(f"the {who} power predictor needs the platform's maximum node "
                         f"power (max_power of its node types), which the platform "
                         f"({platform.name}) does not set: give a platform with it, such "
                         "as --platform "
                         "marconi100 (2,100 W a node) or a platform TOML with max_power",
                         field=FIELD)
    return float(value)


def _power_columns(jobs: JobTable, who: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three power columns (float64 W); InputError when the table lacks them."""
    if not has_power(jobs):
        raise InputError(f"the {who} power predictor needs the job power columns "
                         f"({', '.join(POWER_COLUMNS)}), which the job table lacks",
                         field=FIELD)
    cols = tuple(np.asarray(jobs.columns[c], dtype=np.float64) for c in POWER_COLUMNS)
    return cols[0], cols[1], cols[2]


def _check_int(who: str, key: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise InputError(f"{who} {key} must be an integer >= {low}, got {value!r}",
                         field=FIELD)
    return int(value)


def _check_window(who: str, alpha: Any, s: Any) -> tuple[float, int | None]:
    """Validated (alpha, s): alpha a finite number >= 0, s None or whole seconds >= 1."""
    if (isinstance(alpha, bool) or not isinstance(alpha, int | float | np.number)
            or not math.isfinite(float(alpha)) or float(alpha) < 0):
        raise InputError(f"{who} alpha must be a finite number >= 0, got {alpha!r}",
                         field=FIELD)
    if s is None:
        return float(alpha), None
    if (isinstance(s, bool) or not isinstance(s, int | float | np.number)
            or not math.isfinite(float(s)) or not float(s).is_integer() or s < 1):
        raise InputError(f"{who} s must be None or a whole number of seconds >= 1, "
                         f"got {s!r}", field=FIELD)
    return float(alpha), int(s)


def submit_hours(jobs: JobTable) -> np.ndarray:
    """Hour of day (0-23, float64) of each job's submission: UTC from the trace's
    ``UnixStartTime`` (plus any re-basing offset) when known, else the submit time
    counted from an arbitrary midnight (as :class:`dispatchlab.predict.duration.ml.MLPredictor`).
    """
    info = jobs.info
    t = np.asarray(jobs["submit"], dtype=np.int64) + int(info.time_offset)
    if info.unix_start_time is not None:
        t = t + int(info.unix_start_time)
    return ((t % 86400) // 3600).astype(np.float64)


def job_processors(jobs: JobTable) -> np.ndarray:
    """Processors (cores) each job requests: units x the per-unit ``core`` amount (units
    when the table has no ``core`` resource), float64."""
    units = np.asarray(jobs["units"], dtype=np.int64)
    core = jobs.resources.get("core")
    procs = units if core is None else units * np.asarray(core, dtype=np.int64)
    return np.maximum(procs, 0).astype(np.float64)


def _category_ids(col: np.ndarray) -> np.ndarray:
    """Integer columns as they are; strings as ids 0, 1, ... in order of first
    appearance (so a job's id never depends on later rows)."""
    if col.dtype != object:
        return col.astype(np.float64)
    ids: dict[Any, int] = {}
    return np.array([ids.setdefault(v, len(ids)) for v in col.tolist()], dtype=np.float64)


# --------------------------------------------------------------------------------------
# naive and real
# --------------------------------------------------------------------------------------


class NaivePowerPredictor(PowerPredictor):
    """``naive``: every node of the job at the platform's maximum node power.

    mean = max = ``platform.max_node_power`` x :func:`~dispatchlab.power.model.job_nodes`
    (W; Carastan-Santos et al. 2024: 2,100 W x q_j on Marconi100), std = 0. Uses no history.
    :class:`InputError` in ``start`` when the platform has no maximum node power.
    """

    name = "naive"

    def __init__(self) -> None:
        pass

    def start(self, jobs: JobTable, platform: Platform) -> None:
        self.node_power_ = _node_power(platform, self.name)
        self.value_: list[float] = (self.node_power_
                                    * job_nodes(jobs, platform).astype(np.float64)).tolist()

    def predict(self, job: int, now: int) -> PowerPrediction:
        v = self.value_[job]
        return PowerPrediction(v, v, 0.0)


class RealPowerPredictor(PowerPredictor):
    """``real``: the job's own measured power columns (the oracle, Carastan-Santos et al. 2024's
    baseline).

    A job whose three power values are not all finite gets the ``naive`` prediction
    (*Ours*: the paper's data has no such job); then the platform must have a maximum node
    power. :class:`InputError` in ``start`` when the table has no power columns, or has
    unknown values and the platform no maximum node power. Values are clipped like every
    prediction (``max >= mean`` and so on).
    """

    name = "real"

    def __init__(self) -> None:
        pass

    def start(self, jobs: JobTable, platform: Platform) -> None:
        mean, peak, std = _power_columns(jobs, self.name)
        known = np.isfinite(mean) & np.isfinite(peak) & np.isfinite(std)
        self.unknown_ = int(np.count_nonzero(~known))
        self.mean_: list[float] = mean.tolist()
        self.max_: list[float] = peak.tolist()
        self.std_: list[float] = std.tolist()
        self.known_: list[bool] = known.tolist()
        self.naive_: list[float] | None = None
        if self.unknown_:
            power = _node_power(platform, "real (for jobs of unknown power)")
            self.naive_ = (power * job_nodes(jobs, platform).astype(np.float64)).tolist()

    def predict(self, job: int, now: int) -> PowerPrediction:
        if self.known_[job]:
            return clip_prediction(self.mean_[job], self.max_[job], self.std_[job])
        assert self.naive_ is not None
        v = self.naive_[job]
        return PowerPrediction(v, v, 0.0)


# --------------------------------------------------------------------------------------
# history (Carastan-Santos et al. 2024, section 4.1)
# --------------------------------------------------------------------------------------


class _UserHistory:
    """One user's finished jobs of known power, in completion order.

    ``c``: completion times; ``p``: their mean, max, std power; ``c0``: the first
    completion. ``n``, ``wmean``, ``wm2``: Welford's running count, mean and sum of
    squared deviations of each metric; ``last``: the last job's powers.

    Prefix sums (integral alpha K only). The jobs are cut into *epochs*: epoch e starts
    at job index ``ep_start[e]`` with origin ``ep_origin[e]`` (its first completion) and
    holds the following jobs with ``C - origin < s`` (one epoch when s is None). For
    k = 0..K and series m (0-2: the power metrics, 3: the constant 1), ``tot[4k + m]``
    is the exact integer sum over the current epoch so far of ``x**k * P_m * 2**40``
    (``x**k`` for m = 3), ``x = C - origin``; for ``ep_start[e] < i <= ep_start[e + 1]``
    the sum over the jobs of epoch e before index i (divided by 2**40) is
    ``pre[4k + m][i] + prl[4k + m][i]`` (``pre`` the correctly rounded float, ``prl`` the
    rounded remainder: a double-double, relative error ~1e-32); at ``i = ep_start[e]``
    that sum is 0 (the entry there closes epoch e - 1).
    """

    __slots__ = ("c", "c0", "ep_origin", "ep_start", "last", "n", "p", "pre", "prl",
                 "tot", "wm2", "wmean")

    def __init__(self, c0: int, series: int) -> None:
        self.c = array("q")
        self.p = (array("d"), array("d"), array("d"))
        self.c0 = c0
        self.ep_start = [0]
        self.ep_origin = [c0]
        self.tot = [0] * series
        self.pre = [array("d", [0.0]) for _ in range(series)]
        self.prl = [array("d", [0.0]) for _ in range(series)]
        self.n = 0
        self.wmean = [0.0, 0.0, 0.0]
        self.wm2 = [0.0, 0.0, 0.0]
        self.last = (0.0, 0.0, 0.0)

    def sums_at(self, base: int, i: int) -> tuple[float, float, float, float]:
        """The four prefix sums of series ``base..base+3`` over the first ``i`` jobs."""
        pre, prl = self.pre, self.prl
        return (pre[base][i] + prl[base][i], pre[base + 1][i] + prl[base + 1][i],
                pre[base + 2][i] + prl[base + 2][i], pre[base + 3][i] + prl[base + 3][i])


class HistoryPowerPredictor(PowerPredictor):
    """``history``: the user's recent jobs, weighted by recency (Carastan-Santos et al. 2024 eqs.
    1-3).

    For job j of user u submitted at ``r_j = now``, the window is
    ``W = {j' of u finished, r_j - s <= C_j' <= r_j}`` (eq. 2) and each metric
    (mean, max and std of the power, W) is the weighted mean over W of the same metric of
    those jobs (eq. 1), with weights ``theta = (1 - (r_j - C_j') / s) ** alpha`` (eq. 3).
    The std is predicted, as the seed writes it (section 4.1, last paragraph), as the
    weighted mean of the window jobs' stds (not the std of their powers). The values are
    the whole-job powers as stored in the table, not normalised per node (the paper's).

    * ``alpha`` (default 2, the paper's value, section 6.2): a number >= 0 (``0 ** 0``
      counts as 1, so alpha = 0 is the plain mean).
    * ``s`` (seconds): ``None`` (default) is the paper's choice, the whole user history:
      ``s = r_j - C_first``, ``C_first`` the completion of the user's first finished job
      (so that job has weight 0). An explicit ``s`` is a whole number of seconds >= 1.

    Cases (counted in ``counts_``):

    * ``"window"``: eq. 1 over a non-empty window with positive weight sum;
    * ``"zero-weight"``: the weights sum to 0 (a single job at exactly ``C = r_j - s``,
      or with ``s = None`` only jobs that ended with the user's first one; also
      ``s = None`` with every finished job ended at ``r_j``, where s = 0 and theta is
      0/0): the plain mean of the window;
    * ``"no-history"`` (*Ours*): the user has no finished job (of known power), or none in
      the window (explicit ``s``), or has no id (``user == -1``): for each metric, the
      mean over all users' finished jobs of (power / nodes), times the job's nodes;
    * ``"cold"`` (*Ours*): no job has finished yet: the ``naive`` prediction (max node
      power x nodes, std 0). So the platform must have a maximum node power:
      :class:`InputError` in ``start`` otherwise, as when the table lacks power columns.

    A finished job joins the history only when its three power values are finite
    (*Ours*). Ties: jobs finishing at the same time keep their observation order; a job
    finishing exactly at ``r_j`` is in the window (eq. 2 is closed on both ends).

    Cost. With an integral alpha <= 8 (so the default), ``theta`` is a polynomial of
    degree alpha in C and the window sums come from per-user prefix sums of
    ``(C - origin)**k x P`` (k = 0..alpha): O(log n) per prediction (bisects on the
    completion times) and O(alpha) per observation. With ``s = None`` the origin is
    ``C_first`` and the window is a whole prefix (no subtraction at all); with an explicit
    ``s`` the user's jobs are cut into epochs spanning less than ``s`` each, with their
    own origin, so a window covers at most 3 epochs and the expansion about an origin at
    most ``s`` away keeps its precision. The prefix sums are exact integers stored as
    double-doubles, and each window result carries a bound of its rounding error; when
    that bound exceeds 1e-10 of the result (weights all near 0: e.g. the only window jobs
    at its far end), the window is computed directly from eqs. 1-3 with numpy, as for
    other alphas (O(window size); ``direct_`` counts those predictions).
    """

    name = "history"

    def __init__(self, alpha: float = 2.0, s: int | None = None) -> None:
        self.alpha = alpha
        self.s = s

    def start(self, jobs: JobTable, platform: Platform) -> None:
        alpha, s = _check_window(self.name, self.alpha, self.s)
        self.alpha_ = alpha
        self.s_ = s
        self.k_: int | None = (int(alpha) if alpha.is_integer() and alpha <= _MAX_INT_ALPHA
                               else None)
        self._series = 0 if self.k_ is None else 4 * (self.k_ + 1)
        mean, peak, std = _power_columns(jobs, self.name)
        self.node_power_ = _node_power(platform, self.name)
        nodes = job_nodes(jobs, platform).astype(np.float64)
        self.nodes_: list[float] = nodes.tolist()
        self.naive_: list[float] = (self.node_power_ * nodes).tolist()
        self.power_: list[tuple[float, float, float]] = list(
            zip(mean.tolist(), peak.tolist(), std.tolist(), strict=True))
        self.known_: list[bool] = (np.isfinite(mean) & np.isfinite(peak)
                                   & np.isfinite(std)).tolist()
        self.user_list_: list[int] = np.asarray(jobs["user"]).tolist()
        self.users_: dict[int, _UserHistory] = {}
        self.finished_ = 0
        self.per_node_sum_ = [0.0, 0.0, 0.0]
        self.counts_: dict[str, int] = {"window": 0, "zero-weight": 0, "no-history": 0,
                                        "cold": 0}
        self.direct_ = 0

    # -- learning ---------------------------------------------------------------------

    def observe(self, job: int, end: int) -> None:
        if not self.known_[job]:
            return
        vals = self.power_[job]
        nodes = self.nodes_[job]
        self.finished_ += 1
        pn = self.per_node_sum_
        for m in range(3):
            pn[m] += vals[m] / nodes
        user = self.user_list_[job]
        if user == -1:
            return
        end = int(end)
        h = self.users_.get(user)
        if h is None:
            h = self.users_[user] = _UserHistory(end, self._series)
        elif end < h.c[-1]:
            raise ValueError(f"history: job row {job} observed at {end}, before an earlier "
                             f"observation at {h.c[-1]} (observe in completion order)")
        h.c.append(end)
        for m in range(3):
            h.p[m].append(vals[m])
        # Welford's running mean and squared deviations (the window std of ml's features)
        h.n += 1
        for m in range(3):
            delta = vals[m] - h.wmean[m]
            h.wmean[m] += delta / h.n
            h.wm2[m] += delta * (vals[m] - h.wmean[m])
        h.last = vals
        if self.k_ is None:
            return
        if self.s_ is not None and end - h.ep_origin[-1] >= self.s_:
            h.ep_start.append(len(h.c) - 1)
            h.ep_origin.append(end)
            h.tot = [0] * self._series
        x = end - h.ep_origin[-1]
        scaled = [int(v * _SCALE) for v in vals]
        tot, pre, prl = h.tot, h.pre, h.prl
        xk = 1
        for k in range(self.k_ + 1):
            base = 4 * k
            for m in range(3):
                t = tot[base + m] + xk * scaled[m]
                tot[base + m] = t
                v = t / _SCALE  # correctly rounded; v x 2**40 is an integer
                pre[base + m].append(v)
                prl[base + m].append((t - int(v * _SCALE)) / _SCALE)
            t = tot[base + 3] + xk
            tot[base + 3] = t
            v = float(t)
            pre[base + 3].append(v)
            prl[base + 3].append(float(t - int(v)))
            xk *= x

    # -- prediction -------------------------------------------------------------------

    def _fallback(self, job: int) -> tuple[tuple[float, float, float], str]:
        if self.finished_ == 0:
            v = self.naive_[job]
            return (v, v, 0.0), "cold"
        f = self.nodes_[job] / self.finished_
        pn = self.per_node_sum_
        return (pn[0] * f, pn[1] * f, pn[2] * f), "no-history"

    def _direct(self, h: _UserHistory, lo: int, hi: int, now: int, s: float,
                ) -> tuple[tuple[float, float, float], str]:
        """Eqs. 1-3 computed as written over window rows [lo, hi) (numpy)."""
        self.direct_ += 1
        c = np.frombuffer(h.c[lo:hi], dtype=np.int64)
        p = [np.frombuffer(h.p[m][lo:hi], dtype=np.float64) for m in range(3)]
        if s > 0:
            theta = np.maximum(1.0 - (now - c) / s, 0.0) ** self.alpha_
            d = float(theta.sum())
        else:
            d = 0.0
        if d > 0:
            return (float(theta @ p[0]) / d, float(theta @ p[1]) / d,
                    float(theta @ p[2]) / d), "window"
        return (float(p[0].mean()), float(p[1].mean()), float(p[2].mean())), "zero-weight"

    def _window(self, h: _UserHistory, now: int) -> tuple[int, int]:
        hi = bisect_right(h.c, now)
        lo = 0 if self.s_ is None else bisect_left(h.c, now - self.s_)
        return lo, hi

    def _core(self, job: int, now: int
              ) -> tuple[tuple[float, float, float], str, _UserHistory | None, int, int]:
        """(values, case, the user's history or None, window rows lo, hi)."""
        user = self.user_list_[job]
        h = self.users_.get(user) if user != -1 else None
        if h is None:
            vals, case = self._fallback(job)
            return vals, case, None, 0, 0
        lo, hi = self._window(h, now)
        if lo >= hi:
            vals, case = self._fallback(job)
            return vals, case, h, lo, hi
        k = self.k_
        if self.s_ is None:
            s = now - h.c0
            if k is None:
                vals, case = self._direct(h, lo, hi, now, float(max(s, 0)))
                return vals, case, h, lo, hi
            # window = the whole history (lo = 0) and theta ~ (C - C_first)**k: the sums
            # are the prefix sums at hi, with no subtraction. s = 0 (every finished job
            # ended at r_j) makes theta 0/0: the plain mean, as for zero weights
            top = h.sums_at(4 * k, hi)
            if top[3] > 0 and s > 0:
                return (top[0] / top[3], top[1] / top[3], top[2] / top[3]), "window", h, lo, hi
            plain = h.sums_at(0, hi)
            return ((plain[0] / plain[3], plain[1] / plain[3], plain[2] / plain[3]),
                    "zero-weight", h, lo, hi)
        s = self.s_
        if k is not None:
            vals = self._prefix(h, lo, hi, now - s, k)
            if vals is not None:
                return vals, "window", h, lo, hi
        vals, case = self._direct(h, lo, hi, now, float(s))
        return vals, case, h, lo, hi

    @staticmethod
    def _prefix(h: _UserHistory, lo: int, hi: int, a: int, k: int
                ) -> tuple[float, float, float] | None:
        """The weighted means over window rows [lo, hi) from the prefix sums, theta ~
        ``(C - a)**k`` (a = r_j - s): per epoch e overlapping the window, with
        ``b = a - origin_e`` and ``F_i`` the epoch's prefix sums of moment i,
        ``sum_i binom(k, i) (-b)**(k-i) (F_i[end] - F_i[begin])`` per series. Every
        job of an epoch piece has ``0 <= C - origin < s`` and ``|b| <= s``, so the
        binomial expansion loses at most a factor ~2**k of precision. None when the
        rounding-error bound is not below _TOL of a result (or the weight sum is not
        positive)."""
        sums = [0.0, 0.0, 0.0, 0.0]
        bound = [0.0, 0.0, 0.0, 0.0]
        pre, prl = h.pre, h.prl
        starts = h.ep_start
        n_ep = len(starts)
        e = bisect_right(starts, lo) - 1
        while e < n_ep and starts[e] < hi:
            begin = starts[e]
            i0 = max(lo, begin)
            i1 = min(hi, starts[e + 1] if e + 1 < n_ep else len(h.c))
            b = a - h.ep_origin[e]
            for i in range(k + 1):
                fc = float(math.comb(k, i) * (-b) ** (k - i))
                ac = abs(fc)
                base = 4 * i
                for m in range(4):
                    arr = pre[base + m]
                    arl = prl[base + m]
                    v1 = arr[i1]
                    if i0 == begin:  # the epoch's empty sum
                        w = v1 + arl[i1]
                        v0 = 0.0
                    else:
                        v0 = arr[i0]
                        w = (v1 - v0) + (arl[i1] - arl[i0])
                    sums[m] += fc * w
                    bound[m] += ac * (abs(w) + _EPS * (abs(v1) + abs(v0)))
            e += 1
        scale = (k + 4) * _EPS
        d = sums[3]
        if not d > bound[3] * scale / _TOL:
            return None
        for m in range(3):
            if bound[m] * scale > _TOL * abs(sums[m]):
                return None
        return sums[0] / d, sums[1] / d, sums[2] / d

    def predict(self, job: int, now: int) -> PowerPrediction:
        vals, case, *_ = self._core(job, int(now))
        self.counts_[case] += 1
        return clip_prediction(*vals)

    def lagged(self, job: int, now: int
               ) -> tuple[PowerPrediction, tuple[float, float, float],
                          tuple[float, float, float]]:
        """Carastan-Santos et al. 2024 Table 2's lagged features of ``job`` at ``now`` (not counted
        in ``counts_``): (the prediction of eq. 1, feature 5; the population std (ddof 0) of
        each metric over the window W, feature 6; the powers of the user's last finished
        job, feature 7; ties on completion: the last observed). Without a window the std is
        0 (*Ours*), and without a finished job of the user the last powers are the
        prediction (*Ours*)."""
        now = int(now)
        vals, _, h, lo, hi = self._core(job, now)
        pred = clip_prediction(*vals)
        if h is None:
            return pred, (0.0, 0.0, 0.0), (pred.mean, pred.max, pred.std)
        if lo >= hi:
            std = (0.0, 0.0, 0.0)
        elif self.s_ is None and lo == 0 and hi == h.n:
            std = (math.sqrt(max(h.wm2[0], 0.0) / h.n), math.sqrt(max(h.wm2[1], 0.0) / h.n),
                   math.sqrt(max(h.wm2[2], 0.0) / h.n))
        else:
            sd = [float(np.frombuffer(h.p[m][lo:hi], dtype=np.float64).std())
                  for m in range(3)]
            std = (sd[0], sd[1], sd[2])
        return pred, std, h.last


# --------------------------------------------------------------------------------------
# regressors retrained on a fixed period
# --------------------------------------------------------------------------------------


def _tree_model(kind: str, seed: int, n_estimators: int) -> Any:
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.tree import DecisionTreeRegressor

    if kind == "tree":
        return DecisionTreeRegressor(random_state=seed)
    return RandomForestRegressor(n_estimators=n_estimators, min_samples_leaf=5,
                                 random_state=seed, n_jobs=1)


def _tree_predict_one(model: Any, x: np.ndarray) -> np.ndarray:
    """``model.predict(x[None])[0]`` for a fitted tree or forest, through the trees'
    own ``tree_.predict`` (skips scikit-learn's per-call validation: ~10x faster on one
    row); the same sums in the same order, so the same values."""
    x32 = np.ascontiguousarray(x, dtype=np.float32).reshape(1, -1)
    trees = getattr(model, "estimators_", None)
    if trees is None:
        return np.asarray(model.tree_.predict(x32)[0], dtype=np.float64).reshape(-1)
    out = np.zeros(model.n_outputs_, dtype=np.float64)
    for tree in trees:
        out += np.asarray(tree.tree_.predict(x32)[0]).reshape(-1)
    out /= len(trees)
    return out


class _Retrained(PowerPredictor):
    """Shared machinery: the history fallback, the retraining schedule, the training set.

    Retraining times are ``t(w) = t0 + w x retrain`` (w = 1, 2, ...), ``t0`` the
    table's first submission (*Ours*: the paper's weeks have no stated origin). At the first
    ``predict`` with ``now >= t(w)`` for a w not yet trained (the latest such w when
    several passed without a submission), the models are refitted on the finished jobs
    of known power (all three values finite) with ``C < t(w)`` (Carastan-Santos et al. 2024 eq. 4).
    A model needs at least ``min_jobs`` training rows; until the first model exists, predictions
    are the :class:`HistoryPowerPredictor`'s (``alpha``, ``s``; ``fallbacks_`` counts
    them). ``trainings_`` counts the trainings.
    """

    # the parameters the subclasses take (declared here for the shared code)
    retrain: int
    min_jobs: int
    seed: int
    n_estimators: int
    alpha: float
    s: int | None

    def _start_common(self, jobs: JobTable, platform: Platform) -> None:
        who = self.name
        self.retrain_ = _check_int(who, "retrain", self.retrain, 1)
        self.min_jobs_ = _check_int(who, "min_jobs", self.min_jobs, 1)
        self.seed_ = _check_int(who, "seed", self.seed, 0)
        self.n_estimators_ = _check_int(who, "n_estimators", self.n_estimators, 1)
        mean, peak, std = _power_columns(jobs, who)
        self.history_ = HistoryPowerPredictor(alpha=self.alpha, s=self.s)
        self.history_.start(jobs, platform)
        self.y_ = np.column_stack([mean, peak, std])
        self.known_: list[bool] = np.isfinite(self.y_).all(axis=1).tolist()
        self.user_ = np.asarray(jobs["user"], dtype=np.int64)
        submit = np.asarray(jobs["submit"], dtype=np.int64)
        self.submit_ = submit
        self.t0_ = int(submit.min()) if len(submit) else 0
        self.obs_rows_: list[int] = []
        self.obs_end_: list[int] = []
        self.trained_w_ = 0
        self.trainings_ = 0
        self.fallbacks_ = 0

    def _due(self, now: int) -> None:
        w = (now - self.t0_) // self.retrain_
        if w >= 1 and w > self.trained_w_:
            self.trained_w_ = w
            self._train(self.t0_ + w * self.retrain_)

    def _rows_before(self, t: int) -> np.ndarray:
        """Rows of the training set at t: observed, known power, C < t (eq. 4)."""
        k = bisect_left(self.obs_end_, t)
        return np.asarray(self.obs_rows_[:k], dtype=np.int64)

    @abstractmethod
    def _train(self, t: int) -> None:
        """Fit the model(s) on the jobs finished before ``t``."""

    def _usable(self, job: int) -> bool:
        return True

    def observe(self, job: int, end: int) -> None:
        self.history_.observe(job, end)
        if self.known_[job] and self._usable(job):
            self.obs_rows_.append(job)
            self.obs_end_.append(int(end))


class PerUserPowerPredictor(_Retrained):
    """``per-user``: one regressor per user plus one shared (Borghesi et al. 2018 section 4.1).

    Features, all known at submission (Borghesi et al. 2018 list user, queue, requested duration,
    nodes, cores, GPUs, Xeon Phis and memory): the queue (ids; strings numbered in order
    of first appearance), the requested time (s), the nodes
    (:func:`~dispatchlab.power.model.job_nodes`), the processors (:func:`job_processors`),
    for each other resource of the table (``gpu``, ...) the job's total (units x per-unit
    amount), the requested memory (SWF field 10, -1 unknown) and the hour of day of the
    submission (:func:`submit_hours`; the brief's addition to Borghesi et al. 2018's list). The
    targets are the three power metrics (W, one multi-output regressor).

    ``model``: ``"tree"`` (``DecisionTreeRegressor(random_state=seed)``) or ``"forest"``
    (``RandomForestRegressor(n_estimators, min_samples_leaf=5, random_state=seed,
    n_jobs=1)``; *Ours*: 30 trees by default and leaves of at least 5 jobs, for speed and
    memory: scikit-learn's defaults, 100 fully grown trees, take GBs on 10^5 jobs). At
    each retraining
    (see :class:`_Retrained`: every ``retrain`` seconds, 7 days by default) every user
    (``user != -1``) with at least ``min_jobs`` training rows gets their own model, and
    one shared model is fitted on all training rows (*Ours*: all users, Borghesi et al. 2018's
    "users submitting for the first time" have no rows of their own); a user without a
    model of their own gets the shared one. Until the first training (at least
    ``min_jobs`` rows in all): :class:`HistoryPowerPredictor` (``alpha``, ``s``).

    A model's predictions for the jobs submitted in ``[t(w), t(w) + retrain)`` are
    computed in one batch per user at training time (each only from its own features, so
    causal) and any other job's on demand.
    """

    name = "per-user"

    def __init__(self, model: str = "tree", min_jobs: int = 20, retrain: int = WEEK,
                 seed: int = 0, n_estimators: int = 30, alpha: float = 2.0,
                 s: int | None = None) -> None:
        self.model = model
        self.min_jobs = min_jobs
        self.retrain = retrain
        self.seed = seed
        self.n_estimators = n_estimators
        self.alpha = alpha
        self.s = s

    def start(self, jobs: JobTable, platform: Platform) -> None:
        if self.model not in ("tree", "forest"):
            raise InputError(f"per-user model must be \"tree\" or \"forest\", got "
                             f"{self.model!r}{did_you_mean(str(self.model), ['tree', 'forest'])}",
                             field=FIELD)
        self._start_common(jobs, platform)
        n = len(jobs)
        units = np.asarray(jobs["units"], dtype=np.int64)
        cols = [_category_ids(np.asarray(jobs["queue"])),
                np.asarray(jobs["requested_time"], dtype=np.float64),
                job_nodes(jobs, platform).astype(np.float64),
                job_processors(jobs)]
        names = ["queue", "requested_time", "nodes", "processors"]
        for r in sorted(k for k in jobs.resources if k != "core"):
            cols.append((units * np.asarray(jobs.resources[r], dtype=np.int64)
                         ).astype(np.float64))
            names.append(f"total_{r}")
        cols.append(np.asarray(jobs["req_mem"], dtype=np.float64))
        cols.append(submit_hours(jobs))
        names += ["req_mem", "hour"]
        self.feature_names_ = tuple(names)
        self.x_ = np.column_stack(cols) if n else np.zeros((0, len(names)))
        self.order_ = np.argsort(self.submit_, kind="stable")
        self.sorted_submit_ = self.submit_[self.order_]
        self.models_: dict[int, Any] = {}
        self.shared_: Any = None
        self.gen_ = 0
        self.pred_ = np.zeros((n, 3), dtype=np.float64)
        self.pred_gen_ = np.zeros(n, dtype=np.int64)

    def _train(self, t: int) -> None:
        rows = self._rows_before(t)
        if len(rows) < self.min_jobs_:
            return
        x, y = self.x_[rows], self.y_[rows]
        shared = _tree_model(self.model, self.seed_, self.n_estimators_).fit(x, y)
        models: dict[int, Any] = {}
        users = self.user_[rows]
        order = np.argsort(users, kind="stable")
        su = users[order]
        cuts = np.flatnonzero(np.diff(su)) + 1
        for group in np.split(order, cuts):
            u = int(users[group[0]])
            if u == -1 or len(group) < self.min_jobs_:
                continue
            models[u] = _tree_model(self.model, self.seed_, self.n_estimators_).fit(
                x[group], y[group])
        self.shared_ = shared
        self.models_ = models
        self.gen_ += 1
        self.trainings_ += 1
        lo, hi = np.searchsorted(self.sorted_submit_, [t, t + self.retrain_], side="left")
        self._batch(self.order_[lo:hi])

    def _batch(self, rows: np.ndarray) -> None:
        """Predict ``rows`` with their user's model (else the shared one)."""
        if not len(rows):
            return
        users = self.user_[rows]
        order = np.argsort(users, kind="stable")
        su = users[order]
        cuts = np.flatnonzero(np.diff(su)) + 1
        for group in np.split(order, cuts):
            r = rows[group]
            model = self.models_.get(int(users[group[0]]), self.shared_)
            self.pred_[r] = np.asarray(model.predict(self.x_[r]), dtype=np.float64
                                       ).reshape(len(r), 3)
        self.pred_gen_[rows] = self.gen_

    def predict(self, job: int, now: int) -> PowerPrediction:
        now = int(now)
        self._due(now)
        if self.shared_ is None:
            self.fallbacks_ += 1
            return self.history_.predict(job, now)
        if self.pred_gen_[job] != self.gen_:
            model = self.models_.get(int(self.user_[job]), self.shared_)
            self.pred_[job] = _tree_predict_one(model, self.x_[job])
            self.pred_gen_[job] = self.gen_
        m, p, s = self.pred_[job].tolist()
        return clip_prediction(m, p, s)


#: the ml predictor's estimators
ML_MODELS: tuple[str, ...] = ("linear", "forest", "svr", "sgd")
#: the hyper-parameter grids of ``ml`` with ``tune=True`` (*Ours*: the seed gives none)
ML_GRIDS: dict[str, dict[str, list[Any]]] = {
    "linear": {},
    "forest": {"max_depth": [None, 10], "min_samples_leaf": [1, 5]},
    "svr": {"regressor__est__C": [0.1, 1.0, 10.0]},
    "sgd": {"regressor__est__alpha": [1e-5, 1e-4, 1e-3]},
}
#: the names of ml's features for one target (Table 2 of Carastan-Santos et al. 2024, in order)
ML_FEATURES: tuple[str, ...] = ("hour", "processors", "nodes", "requested_time",
                                "history", "window_std", "last")


class MLPowerPredictor(_Retrained):
    """``ml``: Carastan-Santos et al. 2024's online retrained regression (section 4.2, Table 2).

    One regressor per target (mean, max, std; W), refitted every ``retrain`` seconds
    (7 days by default) on all finished jobs with ``C < t(w)`` (eq. 4; see
    :class:`_Retrained` for the schedule) that were predicted by this instance (their
    features were computed at their submission); until the first training (at least
    ``min_jobs`` rows) the prediction is :class:`HistoryPowerPredictor`'s (``alpha``,
    ``s``), as the paper's week 0.

    Features for target m (Carastan-Santos et al. 2024 Table 2; all of them exist for a job table
    with power columns): 1 hour of day of the submission (:func:`submit_hours`), 2 processors
    (:func:`job_processors`), 3 nodes (:func:`~dispatchlab.power.model.job_nodes`), 4
    requested time (s), and the lagged features of metric m from
    :meth:`HistoryPowerPredictor.lagged` at the submission: 5 the history prediction
    (eq. 1), 6 the std of the metric over the window W, 7 the metric of the user's last
    finished job (see there for the values without history).

    ``model``: ``"linear"`` (``LinearRegression``), ``"forest"``
    (``RandomForestRegressor(n_estimators, min_samples_leaf=5, random_state=seed,
    n_jobs=1)``; *Ours*: 30 trees and leaves of at least 5 jobs by default, see
    :class:`PerUserPowerPredictor`), ``"svr"`` (``LinearSVR(random_state=seed,
    max_iter=10000)``) or ``"sgd"`` (``SGDRegressor(random_state=seed)``); svr and sgd
    (*Ours*) standardise the features and the target (``StandardScaler`` in a pipeline
    inside ``TransformedTargetRegressor``), without which they do not converge on watts.
    ``tune=True`` does what the seed did each week (*Ours*: off by default, for speed):
    recursive feature elimination with 5-fold cross-validation (``RFECV``, unshuffled
    ``KFold(5)``, mean squared error) then a 5-fold ``GridSearchCV`` of
    :data:`ML_GRIDS` on the kept features (with fewer than 10 rows: no tuning). Linear
    models are predicted as their exact affine map (probed once per training), forests
    through their trees; both give scikit-learn's values.
    """

    name = "ml"

    def __init__(self, model: str = "linear", retrain: int = WEEK, min_jobs: int = 20,
                 tune: bool = False, seed: int = 0, n_estimators: int = 30,
                 alpha: float = 2.0, s: int | None = None) -> None:
        self.model = model
        self.retrain = retrain
        self.min_jobs = min_jobs
        self.tune = tune
        self.seed = seed
        self.n_estimators = n_estimators
        self.alpha = alpha
        self.s = s

    def start(self, jobs: JobTable, platform: Platform) -> None:
        if self.model not in ML_MODELS:
            raise InputError(f"ml model must be one of {', '.join(ML_MODELS)}, got "
                             f"{self.model!r}{did_you_mean(str(self.model), ML_MODELS)}",
                             field=FIELD)
        if not isinstance(self.tune, bool):
            raise InputError(f"ml tune must be true or false, got {self.tune!r}", field=FIELD)
        self._start_common(jobs, platform)
        n = len(jobs)
        static = [submit_hours(jobs), job_processors(jobs),
                  job_nodes(jobs, platform).astype(np.float64),
                  np.asarray(jobs["requested_time"], dtype=np.float64)]
        self.static_ = np.column_stack(static) if n else np.zeros((0, 4))
        # per target m: columns 3m..3m+2 = history prediction, window std, last job
        self.lag_ = np.zeros((n, 9), dtype=np.float64)
        self.predicted_ = np.zeros(n, dtype=bool)
        # per target: ("affine", coef, intercept) or ("tree", model); feature masks
        self.models_: list[tuple[Any, ...]] | None = None
        self.masks_: list[np.ndarray] = []

    def _usable(self, job: int) -> bool:
        return bool(self.predicted_[job])

    def _features(self, rows: np.ndarray, m: int) -> np.ndarray:
        return np.hstack([self.static_[rows], self.lag_[rows, 3 * m:3 * m + 3]])

    def _estimator(self) -> Any:
        from sklearn.compose import TransformedTargetRegressor
        from sklearn.linear_model import LinearRegression, SGDRegressor
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import LinearSVR

        if self.model == "linear":
            return LinearRegression()
        if self.model == "forest":
            return _tree_model("forest", self.seed_, self.n_estimators_)
        est = (LinearSVR(random_state=self.seed_, max_iter=10000) if self.model == "svr"
               else SGDRegressor(random_state=self.seed_))
        return TransformedTargetRegressor(
            regressor=Pipeline([("scale", StandardScaler()), ("est", est)]),
            transformer=StandardScaler())

    def _fit(self, x: np.ndarray, y: np.ndarray) -> tuple[Any, np.ndarray]:
        """(fitted estimator on the kept features, mask of the kept features)."""
        from sklearn.base import clone

        base = self._estimator()
        mask = np.ones(x.shape[1], dtype=bool)
        if not (self.tune and len(y) >= 10):
            return base.fit(x, y), mask
        from sklearn.feature_selection import RFECV
        from sklearn.model_selection import GridSearchCV, KFold

        cv = KFold(5)
        getter = ("regressor_.named_steps.est.coef_" if self.model in ("svr", "sgd")
                  else "auto")
        rfe = RFECV(clone(base), step=1, cv=cv, scoring="neg_mean_squared_error",
                    importance_getter=getter)
        rfe.fit(x, y)
        mask = np.asarray(rfe.support_, dtype=bool).copy()
        grid = ML_GRIDS[self.model]
        if not grid:
            return clone(base).fit(x[:, mask], y), mask
        search = GridSearchCV(clone(base), grid, cv=cv, scoring="neg_mean_squared_error")
        search.fit(x[:, mask], y)
        return search.best_estimator_, mask

    def _train(self, t: int) -> None:
        from sklearn.exceptions import ConvergenceWarning

        rows = self._rows_before(t)
        if len(rows) < self.min_jobs_:
            return
        models: list[tuple[Any, ...]] = []
        masks: list[np.ndarray] = []
        d = len(ML_FEATURES)
        for m in range(3):
            x = self._features(rows, m)
            y = self.y_[rows, m]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                est, mask = self._fit(x, y)
            masks.append(mask)
            if self.model == "forest":
                models.append(("tree", est))
            else:
                probe = np.vstack([np.zeros(d), np.eye(d)])[:, mask]
                out = np.asarray(est.predict(probe), dtype=np.float64).ravel()
                models.append(("affine", out[1:] - out[0], float(out[0])))
        self.models_ = models
        self.masks_ = masks
        self.trainings_ += 1

    def predict(self, job: int, now: int) -> PowerPrediction:
        now = int(now)
        self._due(now)
        hist, std, last = self.history_.lagged(job, now)
        lag = self.lag_[job]
        for m in range(3):
            lag[3 * m] = hist[m]
            lag[3 * m + 1] = std[m]
            lag[3 * m + 2] = last[m]
        self.predicted_[job] = True
        if self.models_ is None:
            self.fallbacks_ += 1
            return hist
        out = [0.0, 0.0, 0.0]
        static = self.static_[job]
        for m, entry in enumerate(self.models_):
            x = np.concatenate([static, lag[3 * m:3 * m + 3]])
            if entry[0] == "affine":
                out[m] = float(entry[1] @ x) + entry[2]
            else:
                out[m] = float(_tree_predict_one(entry[1], x[self.masks_[m]])[0])
        return clip_prediction(*out)


class WithPriorHistory(PowerPredictor):
    """A power predictor that has already seen jobs finished before the run (ours: a
    campaign slice's past, so that ``history`` and the learned predictors do not start
    cold at the run's first submission, as Carastan-Santos et al. 2024's predictors, which had each
    user's whole history, did not).

    ``predictor``: the wrapped predictor; ``history``: a job table whose first ``prior``
    rows are the past jobs and whose other rows are *exactly* the run's jobs (same
    order; one contiguous selection of a trace, times in one base); ``ends``: the past
    jobs' completion times (s, same base; recorded, not simulated). At :meth:`start` the
    wrapped predictor starts on the whole ``history`` table and observes, in order of
    end (ties: row order), each past job that ended no later than the run's first
    submission; the others are left out (they would still be running). Then run job
    ``j`` is row ``prior + j`` of that table for :meth:`predict` and :meth:`observe`.

    A run with a hot start (:mod:`dispatchlab.sim.hotstart`) has dummy jobs in its table
    (column ``hot_start`` = 1) that the history never had: the run's other rows, in
    order, are the history's rows after the prior ones; a dummy job is predicted at its
    own recorded power (the hot start writes it) and never observed by the wrapped
    predictor."""

    name = "with-prior-history"

    def __init__(self, predictor: PowerPredictor | None = None, history: Any = None,
                 prior: int = 0, ends: Any = None) -> None:
        self.predictor = predictor
        self.history = history
        self.prior = prior
        self.ends = ends

    def start(self, jobs, platform) -> None:
        if self.predictor is None or self.history is None:
            raise InputError("with-prior-history needs a predictor and a history table",
                             field="power-predictor")
        k = int(self.prior)
        n = len(jobs)
        dummy = (np.asarray(jobs["hot_start"]) == 1 if "hot_start" in jobs.columns
                 else np.zeros(n, dtype=bool))
        own = np.flatnonzero(~dummy)
        if len(self.history) != k + len(own) or not np.array_equal(
                np.asarray(self.history["submit"])[k:], np.asarray(jobs["submit"])[own]):
            raise InputError("the history table's rows after the prior ones must be the "
                             "run's jobs", field="power-predictor")
        #: run row -> history row (-1: a hot-start dummy job, predicted at its own power)
        rows = np.full(n, -1, dtype=np.int64)
        rows[own] = k + np.arange(len(own))
        self.rows_: list[int] = rows.tolist()
        self.dummy_: dict[int, PowerPrediction] = {}
        if dummy.any():
            mean, peak, std = (np.asarray(jobs[c], dtype=np.float64) for c in POWER_COLUMNS)
            self.dummy_ = {r: clip_prediction(float(mean[r]), float(peak[r]), float(std[r]))
                           for r in np.flatnonzero(dummy).tolist()}
        self.predictor.start(self.history, platform)
        ends = np.asarray(self.ends, dtype=np.int64)[:k]
        first = int(jobs["submit"][0]) if len(jobs) else 0
        seen = np.flatnonzero(ends <= first)
        for row in seen[np.argsort(ends[seen], kind="stable")].tolist():
            self.predictor.observe(row, int(ends[row]))
        self.observed_ = len(seen)

    def predict(self, job: int, now: int) -> PowerPrediction:
        row = self.rows_[job]
        if row < 0:
            return self.dummy_[job]
        return self.predictor.predict(row, now)

    def observe(self, job: int, end: int) -> None:
        row = self.rows_[job]
        if row >= 0:
            self.predictor.observe(row, end)


class Underpredicted(PowerPredictor):
    """``underpredicted``: the real power (as :class:`RealPowerPredictor`), but a seeded
    share of the jobs is predicted ``factor`` x its real value (Borghesi et al. 2018 section 5.2.4,
    the misprediction study).

    * ``share`` (default 0.1, in [0, 1]): each job row is under-predicted with this
      probability, drawn once per job in :meth:`start` (one vectorised draw
      ``Generator(PCG64(seed)).random(n) < share`` over the table's rows), so the set of
      under-predicted jobs depends only on ``seed``, ``share`` and the table's length.
    * ``factor`` (default 0.6, in (0, 1]): an under-predicted job's mean, max and std are
      ``factor`` x the real ones. Borghesi et al. 2018's "the predicted power is 40%
      smaller than the real one" (section 5.2.4) is 0.6 (real = predicted / 0.6);
      PA-HPC-SIM's commented-out code (real = 1.4 x predicted) is ``factor = 1 / 1.4``.
    * ``seed`` (default 0): an integer >= 0.

    The job table's power columns (what the job really draws) are not changed: only the
    prediction is. ``under_`` (bool per job row) and ``under_rows_`` (their rows) tell
    which jobs are under-predicted. Invalid parameters raise :class:`InputError` in
    :meth:`start` naming the parameter (field ``power-predictor``).
    """

    name = "underpredicted"

    def __init__(self, share: float = 0.1, factor: float = 0.6, seed: int = 0) -> None:
        self.share = share
        self.factor = factor
        self.seed = seed

    @staticmethod
    def _number(key: str, value: Any) -> float:
        if (isinstance(value, bool) or not isinstance(value, int | float | np.number)
                or not math.isfinite(float(value))):
            raise InputError(f"underpredicted {key} must be a finite number, got {value!r}",
                             field=FIELD)
        return float(value)

    def start(self, jobs: JobTable, platform: Platform) -> None:
        share = self._number("share", self.share)
        if not 0.0 <= share <= 1.0:
            raise InputError(f"underpredicted share must be in [0, 1], got {self.share!r}",
                             field=FIELD)
        factor = self._number("factor", self.factor)
        if not 0.0 < factor <= 1.0:
            raise InputError(f"underpredicted factor must be in (0, 1] (predicted / real "
                             f"power), got {self.factor!r}", field=FIELD)
        seed = _check_int(self.name, "seed", self.seed, 0)
        self.real_ = RealPowerPredictor()
        self.real_.start(jobs, platform)
        self.factor_ = factor
        draw = np.random.Generator(np.random.PCG64(seed)).random(len(jobs))
        self.under_: np.ndarray = draw < share
        self.under_rows_: np.ndarray = np.flatnonzero(self.under_)
        self._under: list[bool] = self.under_.tolist()

    def predict(self, job: int, now: int) -> PowerPrediction:
        p = self.real_.predict(job, now)
        if not self._under[job]:
            return p
        f = self.factor_
        return clip_prediction(p.mean * f, p.max * f, p.std * f)


#: registered power predictors by name
POWER_PREDICTORS: Registry[PowerPredictor] = Registry(FIELD, PowerPredictor, {
    "naive": NaivePowerPredictor,
    "real": RealPowerPredictor,
    "history": HistoryPowerPredictor,
    "per-user": PerUserPowerPredictor,
    "ml": MLPowerPredictor,
    "underpredicted": Underpredicted,
})


def make_power_predictor(name: str, **params: Any) -> PowerPredictor:
    """Build a power predictor by registered name (case-insensitive: ``naive``,
    ``real``, ``history``, ``per-user``, ``ml``, ``underpredicted``) or ``"module:Class"`` /
    ``"path/file.py:Class"`` for a class of your own, with its ``__init__`` parameters.
    An unknown name or bad parameters raise :class:`InputError` (``field
    "power-predictor"``, with a did-you-mean suggestion)."""
    return POWER_PREDICTORS.build(name, **params)
