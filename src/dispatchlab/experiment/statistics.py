"""Statistics over runs: intervals of a configuration's mean and of paired differences
between configurations (Student's t over few runs, percentile bootstrap over many).

**The unit is a run.** A run is one workload (one seed of a generator, one slice of a
trace) simulated under one configuration, and contributes one value per metric (its
summary value: a mean wait, a utilization, ...). A configuration's figure is the mean
over its runs of those values; jobs are never pooled across runs.

**Which interval** (:func:`interval_method`, the one rule every table uses: ``compare``,
``results summary``, the report). Below :data:`BOOTSTRAP_MIN_RUNS` (10) runs (or pairs)
a percentile bootstrap interval is about the min-max of a handful of values and means
little, so the interval is **Student's t** 95 % interval of the mean,
``mean +- t(0.975, n - 1) x s / sqrt(n)`` (``s`` the sample standard deviation, ``ddof
= 1``); for paired differences it is the t interval of the mean of the per-pair
differences ``candidate - baseline``, and the ratio's interval is that interval over
the baseline mean, ``1 + [low, high] / mean(baseline)`` (the baseline mean taken as
fixed; none when it is 0). From 10 runs on, the percentile bootstrap below. Every
:class:`Estimate` and :class:`PairedDifference` says which in ``method`` (``"t"`` or
``"bootstrap"``; None without an interval), and :func:`format_estimate` /
:func:`format_difference` mark the interval with it.

**Bootstrap intervals** (10 runs and more). ``scipy.stats.bootstrap`` itself computes
every such interval: the *percentile* method, :data:`N_RESAMPLES` resamples, a
two-sided :data:`CONFIDENCE` level, and a fresh ``np.random.default_rng(seed)`` per
call, so a result depends only on its inputs and the seed, never on what was computed
before. Runs are resampled with replacement; the statistic is the mean over runs.

- No interval (``None``) below :data:`MIN_RUNS` runs (or pairs): with one or two runs
  an interval says nothing.
- All values equal (a *degenerate* sample): the interval is ``(v, v)``, returned
  directly (scipy would compute the same up to rounding, and may warn).
- Missing values (``None``, NaN, and also +-inf) are dropped before anything else:
  ``n`` counts the runs with a finite value.

**Paired differences** (:func:`paired_difference`). Candidate and baseline are run on
the same workloads; pair ``i`` is (candidate on workload ``i``, baseline on workload
``i``) and a pair with a missing value on either side is dropped. ``diff`` is the mean
over pairs of ``candidate - baseline``; ``ratio`` is ``mean(candidate) /
mean(baseline)`` over the same pairs (a ratio of means, not a mean of ratios). Both
intervals come from one ``paired=True`` bootstrap: each resample draws pairs, and the
diff and the ratio of that resample's means are computed on the same draw.

**Batching.** :func:`compare_configurations` bootstraps all metrics of a configuration
that have the same runs present in one call (scipy applies the same resample indices
to every row of a 2-D sample), which gives the intervals of separate calls with the
same seed (equal up to floating-point rounding in the last digit: numpy sums a row of a
3-D array of resamples in another order), in a fraction of the time.

**Stored runs of a results database** (:func:`run_statistics`; ``dispatchlab results
summary`` and the table at the top of the report; formerly
``dispatchlab.experiment.campaign.statistics``). Runs are grouped without silent pooling
(:func:`dispatchlab.experiment.campaign.groups.group_runs`: by campaign, trace, platform
and the full canonical configuration; only seeds, repetitions and slices are pooled).
Within a section (one trace and platform), each group is one configuration; its runs
are its workloads (the ``workload`` column: seed and slice).
:func:`compare_configurations` gives each configuration's mean over runs with a 95 %
interval (Student's t below 10 runs, percentile bootstrap from 10) and, when a baseline
dispatcher is named, the paired difference to the baseline dispatcher with the same
predictor on the same workloads.

**Power-cap results over stored runs** (:func:`power_rows`, Carastan-Santos et al.
2024's way of reading a campaign; formerly ``dispatchlab.experiment.campaign.powerstats``)
group the runs of campaigns with power (``runs.cap`` set) by campaign, trace, platform,
dispatcher, predictor, power predictor and cap, and give per group the mean over its
runs (workloads) of

* the cap-window metrics (:data:`WINDOW_METRICS`; see
  :mod:`dispatchlab.power.accounting`), ``above_share``: the share of its runs whose
  power went above the cap at some time in the window, and ``above_own_share``: the
  same counting only the times when the jobs running at the window's opening were
  within the cap on their own (the dispatcher's own excess);
* the change of the mean and of the maximum turnaround (end - submit of the measured
  jobs) and of the mean wait relative to a **baseline run on the same workload**: the
  run of the same campaign, trace, platform, predictor, workload and repetition whose
  dispatcher is labelled ``baseline`` (default ``easy``) under the cap labelled
  ``baseline_cap`` (default ``none``: no cap). A change is ``value / baseline - 1``
  per run (so +0.14 is 14 % longer), averaged over the runs that have a baseline
  (Carastan-Santos et al. 2024 section 6: "computed by (workload, powercap) group, then
  averaged"); ``baselined`` counts them. Runs without a baseline leave those columns
  None.

Its rows come in the order their groups first appear among the runs.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.experiment.campaign.groups import group_runs
from dispatchlab.experiment.campaign.store import is_unfinished
from dispatchlab.metrics.keys import COMPARE_TABLE

#: Bootstrap resamples per interval.
N_RESAMPLES: int = 10_000
#: Two-sided confidence level of every interval.
CONFIDENCE: float = 0.95
#: Fewest runs (or pairs) with an interval; below it ``low``/``high`` are None.
MIN_RUNS: int = 3
#: Fewest runs (or pairs) with a bootstrap interval; below it, Student's t interval.
BOOTSTRAP_MIN_RUNS: int = 10
#: Seed of ``np.random.default_rng`` when none is given.
DEFAULT_SEED: int = 0

#: Keys of :func:`compare_configurations` output that a metric name may not take.
_RESERVED_KEYS: frozenset[str] = frozenset({"config", "runs", "vs_baseline"})


@dataclass(frozen=True)
class Estimate:
    """One configuration's metric over its runs.

    ``n``: runs with a finite value; ``mean``/``median``: over those runs (NaN when
    ``n == 0``); ``low``/``high``: the 95 % interval of the mean (None when ``n <
    MIN_RUNS``; ``(mean, mean)`` when all values are equal); ``method``: how it was
    computed, ``"t"`` (Student's t, ``n < BOOTSTRAP_MIN_RUNS``) or ``"bootstrap"``
    (percentile bootstrap), None without an interval (:func:`interval_method`).
    """

    n: int
    mean: float
    median: float
    low: float | None
    high: float | None
    method: str | None = None


@dataclass(frozen=True)
class PairedDifference:
    """Candidate vs baseline on the same workloads (only pairs with both values).

    ``diff``: mean over pairs of ``candidate - baseline``, with its interval
    ``diff_low``/``diff_high``; ``ratio``: ``mean(candidate) / mean(baseline)`` over
    the pairs (NaN when there is no pair or the baseline mean is 0), with its interval
    ``ratio_low``/``ratio_high``. Intervals are None below ``MIN_RUNS`` pairs; the ratio
    interval is also None when the ratio is undefined or a bound is not finite (enough
    resamples with a baseline mean of 0 to reach a tail of the interval). ``method``:
    ``"t"`` below ``BOOTSTRAP_MIN_RUNS`` pairs, else ``"bootstrap"``; None without an
    interval (see the module docstring).
    """

    n_pairs: int
    diff: float
    diff_low: float | None
    diff_high: float | None
    ratio: float
    ratio_low: float | None
    ratio_high: float | None
    method: str | None = None


# --------------------------------------------------------------------------- checks


def _check_options(n_resamples: int, confidence: float) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, Integral) or n_resamples < 1:
        raise InputError(f"n_resamples must be an integer >= 1, got {n_resamples!r}",
                         field="n_resamples")
    if (isinstance(confidence, bool) or not isinstance(confidence, Real)
            or not 0.0 < float(confidence) < 1.0):
        raise InputError(f"confidence must be a number in (0, 1), got {confidence!r}",
                         field="confidence")


def _as_values(values: ArrayLike | Iterable[Any], name: str) -> np.ndarray:
    """A 1-D float64 array; ``None`` becomes NaN. Non-numbers raise :class:`InputError`."""
    try:
        if np.asarray(values).dtype.kind in "USV":  # text would silently parse as numbers
            raise TypeError
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers (None or NaN for a missing value)",
                         field=name) from None
    if arr.ndim != 1:
        raise InputError(f"{name} must be a 1-D sequence, got shape {arr.shape}", field=name)
    return arr


def _as_float(value: Any, where: str) -> float:
    """One run's metric value as a float (NaN when missing)."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(f"{where}: expected a number or None, got {value!r}")
    return float(value)


# ------------------------------------------------------------------------ bootstrap


def _mean_stat(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def _paired_stat(c: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """Rows ``[diff_0..diff_k-1, ratio_0..ratio_k-1]`` of ``k`` paired samples."""
    mc = np.mean(c, axis=axis)
    mb = np.mean(b, axis=axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.concatenate((np.atleast_1d(mc - mb), np.atleast_1d(mc / mb)), axis=0)


def _bootstrap(
    data: tuple[np.ndarray, ...],
    statistic: Callable[..., np.ndarray],
    *,
    paired: bool,
    seed: int,
    n_resamples: int,
    confidence: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of ``statistic`` over resamples of the last axis.

    ``data`` are 2-D ``(rows, runs)`` arrays; returns ``low``, ``high`` per output
    row, NaN where the bootstrap distribution holds NaN (scipy's warning silenced).
    ``scipy.stats`` is imported here, on first use: it takes about a second to import,
    which a CLI command that never computes an interval should not pay.
    """
    from scipy import stats as _scipy_stats

    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore")
        res = _scipy_stats.bootstrap(
            data,
            statistic,
            n_resamples=n_resamples,
            vectorized=True,
            paired=paired,
            axis=-1,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    ci = res.confidence_interval
    return np.atleast_1d(ci.low), np.atleast_1d(ci.high)


def _interval(low: float, high: float) -> tuple[float | None, float | None]:
    """``(low, high)`` as floats, or ``(None, None)`` when either is not finite."""
    if math.isfinite(low) and math.isfinite(high):
        return float(low), float(high)
    return None, None


def interval_method(n: int) -> str | None:
    """The interval over ``n`` runs (or pairs): None below :data:`MIN_RUNS`, ``"t"``
    (Student's t) below :data:`BOOTSTRAP_MIN_RUNS`, else ``"bootstrap"`` (percentile).
    The one rule of every table of intervals (``compare``, ``results summary``, the
    report)."""
    if n < MIN_RUNS:
        return None
    return "t" if n < BOOTSTRAP_MIN_RUNS else "bootstrap"


def _t_interval(matrix: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Student's t interval of the mean of each row of ``matrix`` (rows x runs, all
    finite, at least 2 runs): ``mean +- t((1 + confidence) / 2, n - 1) x s / sqrt(n)``
    with ``s`` the sample standard deviation (``ddof = 1``)."""
    from scipy.special import stdtrit  # the t quantile; lighter than scipy.stats

    n = matrix.shape[1]
    mean = matrix.mean(axis=1)
    half = float(stdtrit(n - 1, 0.5 + confidence / 2)) * matrix.std(axis=1, ddof=1) \
        / math.sqrt(n)
    return mean - half, mean + half


def _estimates(
    matrix: np.ndarray, *, seed: int, n_resamples: int, confidence: float
) -> list[Estimate]:
    """One :class:`Estimate` per row of ``matrix`` (rows x runs, all finite)."""
    k, n = matrix.shape
    if n == 0:
        return [Estimate(0, math.nan, math.nan, None, None)] * k
    means = matrix.mean(axis=1)
    medians = np.median(matrix, axis=1)
    lows = np.full(k, np.nan)
    highs = np.full(k, np.nan)
    method = interval_method(n)
    if method is not None:
        constant = np.all(matrix == matrix[:, :1], axis=1)
        lows[constant] = highs[constant] = matrix[constant, 0]
        vary = ~constant
        if vary.any() and method == "t":
            lows[vary], highs[vary] = _t_interval(matrix[vary], confidence)
        elif vary.any():
            lows[vary], highs[vary] = _bootstrap(
                (matrix[vary],), _mean_stat, paired=False, seed=seed,
                n_resamples=n_resamples, confidence=confidence,
            )
    out = []
    for i in range(k):
        low, high = _interval(lows[i], highs[i])
        out.append(Estimate(n, float(means[i]), float(medians[i]), low, high,
                            None if low is None else method))
    return out


def _differences(
    cand: np.ndarray, base: np.ndarray, *, seed: int, n_resamples: int, confidence: float
) -> list[PairedDifference]:
    """One :class:`PairedDifference` per row of ``cand``/``base`` (rows x pairs, finite)."""
    k, n = cand.shape
    if n == 0:
        return [PairedDifference(0, math.nan, None, None, math.nan, None, None)] * k
    mc, mb = cand.mean(axis=1), base.mean(axis=1)
    diffs = (cand - base).mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(mb != 0, mc / np.where(mb != 0, mb, 1.0), np.nan)
    d_lo, d_hi, r_lo, r_hi = (np.full(k, np.nan) for _ in range(4))
    method = interval_method(n)
    if method is not None:
        both_constant = np.all(cand == cand[:, :1], axis=1) & np.all(base == base[:, :1], axis=1)
        d_lo[both_constant] = d_hi[both_constant] = diffs[both_constant]
        r_lo[both_constant] = r_hi[both_constant] = ratios[both_constant]
        vary = ~both_constant
        if vary.any() and method == "t":
            # the t interval of the mean per-pair difference; the ratio's is that
            # interval over the baseline mean (1 + diff / mean(b), mean(b) fixed)
            low, high = _t_interval((cand - base)[vary], confidence)
            d_lo[vary], d_hi[vary] = low, high
            with np.errstate(divide="ignore", invalid="ignore"):
                a, b = 1.0 + low / mb[vary], 1.0 + high / mb[vary]
            r_lo[vary], r_hi[vary] = np.minimum(a, b), np.maximum(a, b)
        elif vary.any():
            low, high = _bootstrap(
                (cand[vary], base[vary]), _paired_stat, paired=True, seed=seed,
                n_resamples=n_resamples, confidence=confidence,
            )
            m = int(vary.sum())
            d_lo[vary], d_hi[vary] = low[:m], high[:m]
            r_lo[vary], r_hi[vary] = low[m:], high[m:]
        # A constant difference (candidate = baseline + c) has the interval (c, c).
        diff_constant = np.all((cand - base) == (cand - base)[:, :1], axis=1)
        d_lo[diff_constant] = d_hi[diff_constant] = diffs[diff_constant]
    out = []
    for i in range(k):
        dl, dh = _interval(d_lo[i], d_hi[i])
        rl, rh = _interval(r_lo[i], r_hi[i]) if math.isfinite(ratios[i]) else (None, None)
        out.append(PairedDifference(n, float(diffs[i]), dl, dh, float(ratios[i]), rl, rh,
                                    None if dl is None and rl is None else method))
    return out


# ------------------------------------------------------------------------ public API


def estimate(
    values: ArrayLike | Iterable[float | None],
    *,
    seed: int = DEFAULT_SEED,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> Estimate:
    """Mean, median and 95 % interval of the mean of one metric over runs.

    ``values``: one value per run (``None``/NaN/inf = missing, dropped). Below
    :data:`BOOTSTRAP_MIN_RUNS` finite values the interval is Student's t (see the module
    docstring); from there on it is ``scipy.stats.bootstrap((x,), np.mean,
    method="percentile", n_resamples=..., confidence_level=...,
    rng=np.random.default_rng(seed))`` on the finite values ``x`` in the given order;
    None below :data:`MIN_RUNS` values, ``(v, v)`` when all values equal ``v``.
    """
    _check_options(n_resamples, confidence)
    x = _as_values(values, "values")
    x = x[np.isfinite(x)]
    return _estimates(x[None, :], seed=seed, n_resamples=n_resamples,
                      confidence=confidence)[0]


def paired_difference(
    candidate: ArrayLike | Iterable[float | None],
    baseline: ArrayLike | Iterable[float | None],
    *,
    seed: int = DEFAULT_SEED,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> PairedDifference:
    """Candidate minus baseline, and candidate over baseline, on the same workloads.

    ``candidate[i]`` and ``baseline[i]`` are the two configurations' values on workload
    ``i`` (same length; :func:`pair_up` aligns two ``{workload: value}`` dicts). Pairs
    with a missing value (None/NaN/inf) on either side are dropped. Below
    :data:`BOOTSTRAP_MIN_RUNS` pairs the intervals are Student's t on the per-pair
    differences (see the module docstring); from there on they are one
    ``scipy.stats.bootstrap((c, b), stat, paired=True, method="percentile", ...)``
    where ``stat`` returns ``mean(c) - mean(b)`` and ``mean(c) / mean(b)``; see
    :class:`PairedDifference` for the None cases.
    """
    _check_options(n_resamples, confidence)
    c = _as_values(candidate, "candidate")
    b = _as_values(baseline, "baseline")
    if len(c) != len(b):
        raise InputError(
            f"candidate has {len(c)} values and baseline {len(b)}: they must be aligned "
            "by workload (one value each per workload)", field="baseline")
    keep = np.isfinite(c) & np.isfinite(b)
    return _differences(c[keep][None, :], b[keep][None, :], seed=seed,
                        n_resamples=n_resamples, confidence=confidence)[0]


def _sorted_keys(keys: Iterable[Hashable]) -> list[Hashable]:
    """Keys in ascending order; keys that do not compare (mixed types) sort by ``repr``."""
    items = list(keys)
    try:
        return sorted(items)  # type: ignore[type-var]
    except TypeError:
        return sorted(items, key=repr)


def pair_up(
    candidate: Mapping[Hashable, float | None], baseline: Mapping[Hashable, float | None]
) -> tuple[np.ndarray, np.ndarray, list[Hashable]]:
    """Align two ``{workload_key: value}`` dicts on the keys both have.

    Returns the candidate values, the baseline values (float64, ``None`` -> NaN; missing
    values are kept, :func:`paired_difference` drops them) and the common keys, in
    ascending key order (by ``repr`` when the keys do not compare).
    """
    keys = _sorted_keys(k for k in candidate if k in baseline)
    c = np.array([_as_float(candidate[k], f"candidate workload {k!r}") for k in keys],
                 dtype=np.float64)
    b = np.array([_as_float(baseline[k], f"baseline workload {k!r}") for k in keys],
                 dtype=np.float64)
    return c, b, keys


# ------------------------------------------------------------- configurations


def _group_runs(
    rows: Sequence[Mapping[str, Any]], metrics: Sequence[str], config_key: str,
    workload_key: str,
) -> dict[str, dict[Hashable, dict[str, float]]]:
    """``{config: {workload: {metric: value}}}``, configs in first-appearance order."""
    groups: dict[str, dict[Hashable, dict[str, float]]] = {}
    for i, row in enumerate(rows):
        for key in (config_key, workload_key):
            if key not in row:
                raise InputError(f"run {i} has no {key!r} value", field=key)
        label, work = row[config_key], row[workload_key]
        if not isinstance(label, str):
            raise InputError(f"run {i}: configuration label must be a string, got {label!r}",
                             field=config_key)
        if not isinstance(work, Hashable):
            raise InputError(f"run {i}: workload key {work!r} is not hashable",
                             field=workload_key)
        runs = groups.setdefault(label, {})
        if work in runs:
            raise InputError(
                f"configuration {label!r} has two runs on workload {work!r} (run {i}); "
                "each workload must appear once per configuration", field=workload_key)
        runs[work] = {m: _as_float(row.get(m), f"run {i} metric {m!r}") for m in metrics}
    return groups


def _check_metrics(rows: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> None:
    if isinstance(metrics, str):
        raise InputError("metrics must be a list of metric names, not one string",
                         field="metrics")
    for m in metrics:
        if m in _RESERVED_KEYS:
            raise InputError(f"metric name {m!r} is reserved for the output", field="metrics")
        if rows and not any(m in row for row in rows):
            raise InputError(f"no run has a value for metric {m!r}", field="metrics")


def _by_mask(matrix: np.ndarray) -> dict[bytes, list[int]]:
    """Rows of ``matrix`` grouped by their pattern of finite values."""
    groups: dict[bytes, list[int]] = {}
    for i, row in enumerate(matrix):
        groups.setdefault(np.isfinite(row).tobytes(), []).append(i)
    return groups


def _config_estimates(
    runs: Mapping[Hashable, Mapping[str, float]], metrics: Sequence[str], *, seed: int,
    n_resamples: int,
) -> dict[str, Estimate]:
    """Each metric's :class:`Estimate`, runs ordered by workload key."""
    keys = _sorted_keys(runs)
    matrix = np.array([[runs[w][m] for w in keys] for m in metrics],
                      dtype=np.float64).reshape(len(metrics), len(keys))
    out: dict[str, Estimate] = {}
    for rows in _by_mask(matrix).values():
        mask = np.isfinite(matrix[rows[0]])
        ests = _estimates(matrix[np.ix_(rows, mask)], seed=seed, n_resamples=n_resamples,
                          confidence=CONFIDENCE)
        out.update({metrics[r]: e for r, e in zip(rows, ests, strict=True)})
    return {m: out[m] for m in metrics}


def _config_differences(
    cand: Mapping[Hashable, Mapping[str, float]], base: Mapping[Hashable, Mapping[str, float]],
    metrics: Sequence[str], *, seed: int, n_resamples: int,
) -> dict[str, PairedDifference]:
    """Each metric's :class:`PairedDifference` on the workloads both configurations ran."""
    keys = _sorted_keys(w for w in cand if w in base)
    c = np.array([[cand[w][m] for w in keys] for m in metrics],
                 dtype=np.float64).reshape(len(metrics), len(keys))
    b = np.array([[base[w][m] for w in keys] for m in metrics],
                 dtype=np.float64).reshape(len(metrics), len(keys))
    both = np.where(np.isfinite(b), c, np.nan)
    out: dict[str, PairedDifference] = {}
    for rows in _by_mask(both).values():
        mask = np.isfinite(both[rows[0]])
        diffs = _differences(c[np.ix_(rows, mask)], b[np.ix_(rows, mask)], seed=seed,
                             n_resamples=n_resamples, confidence=CONFIDENCE)
        out.update({metrics[r]: d for r, d in zip(rows, diffs, strict=True)})
    return {m: out[m] for m in metrics}


def compare_configurations(
    rows: Sequence[Mapping[str, Any]],
    *,
    metrics: Sequence[str],
    config_key: str = "config",
    workload_key: str = "workload",
    baseline: str | None = None,
    seed: int = DEFAULT_SEED,
    n_resamples: int = N_RESAMPLES,
) -> list[dict[str, Any]]:
    """Per-configuration estimates, and paired differences against a baseline.

    ``rows``: one dict per run with a configuration label (str) under ``config_key``,
    a workload identifier (hashable: a seed, a slice index) under ``workload_key`` and
    each metric's value under its name (a number; ``None``, NaN or an absent key means
    missing). Returns one dict per configuration, in order of first appearance::

        {"config": label, "runs": n, metric: Estimate, ...,
         "vs_baseline": {metric: PairedDifference, ...}}   # not for the baseline itself

    ``vs_baseline`` is present when ``baseline`` is given, for every other
    configuration, paired on the workloads both ran. Within a configuration runs are
    ordered by workload key before resampling, so the result does not depend on row
    order; every interval uses ``np.random.default_rng(seed)`` afresh (the values equal
    :func:`estimate` / :func:`paired_difference` on the same arrays, up to rounding in
    the last digit).

    Raises :class:`InputError` for a run without a label or workload, two runs of one
    configuration on the same workload (they would be silently pooled), a metric no run
    reports, a non-numeric value, or a ``baseline`` that is not a configuration label.
    """
    _check_options(n_resamples, CONFIDENCE)
    _check_metrics(rows, metrics)
    groups = _group_runs(rows, metrics, config_key, workload_key)
    if baseline is not None and baseline not in groups:
        choices = ", ".join(repr(g) for g in groups) or "none"
        raise InputError(f"baseline {baseline!r} is not a configuration (choices: {choices})",
                         field="baseline")
    out: list[dict[str, Any]] = []
    for label, runs in groups.items():
        entry: dict[str, Any] = {"config": label, "runs": len(runs)}
        entry.update(_config_estimates(runs, metrics, seed=seed, n_resamples=n_resamples))
        if baseline is not None and label != baseline:
            entry["vs_baseline"] = _config_differences(
                runs, groups[baseline], metrics, seed=seed, n_resamples=n_resamples)
        out.append(entry)
    return out


# ------------------------------------------------------------------------ formatting


def _fmt(fmt: str, value: float) -> str:
    return "n/a" if not math.isfinite(value) else fmt.format(value)


#: The mark after an interval, by ``method`` (:func:`interval_method`).
METHOD_MARKS: dict[str | None, str] = {"t": " t", "bootstrap": " boot", None: ""}


def format_estimate(e: Estimate, fmt: str = "{:,.1f}") -> str:
    """``"12.3 [10.1, 14.9] t"`` (mean, interval and its method: ``t`` for Student's t,
    ``boot`` for the percentile bootstrap, nothing when unknown), ``"12.3"`` without an
    interval, ``"n/a"`` without runs; every number through ``fmt``."""
    text = _fmt(fmt, e.mean)
    if e.low is not None and e.high is not None:
        text += f" [{fmt.format(e.low)}, {fmt.format(e.high)}]{METHOD_MARKS[e.method]}"
    return text


def format_difference(
    d: PairedDifference, fmt: str = "{:,.1f}", ratio_fmt: str = "{:.2f}"
) -> str:
    """``"-3.2 [-5.0, -1.1] t (x0.81 [0.70, 0.93])"``: the mean difference (``fmt``) and
    the ratio of means (``ratio_fmt``), each with its interval when it has one, the
    difference's marked with the method as in :func:`format_estimate`; the ratio part
    is left out when the ratio is undefined (a baseline mean of 0)."""
    text = _fmt(fmt, d.diff)
    if d.diff_low is not None and d.diff_high is not None:
        text += (f" [{fmt.format(d.diff_low)}, {fmt.format(d.diff_high)}]"
                 f"{METHOD_MARKS[d.method]}")
    if math.isfinite(d.ratio):
        ratio = "x" + ratio_fmt.format(d.ratio)
        if d.ratio_low is not None and d.ratio_high is not None:
            ratio += f" [{ratio_fmt.format(d.ratio_low)}, {ratio_fmt.format(d.ratio_high)}]"
        text += f" ({ratio})"
    return text


# ------------------------------------------------------- stored runs of a campaign


@dataclass
class Section:
    """The statistics of one (trace, platform): ``rows`` as returned by
    :func:`dispatchlab.experiment.statistics.compare_configurations` (one per configuration,
    in group order) plus ``unfinished`` (how many of its runs are unfinished: 0 unless they were
    included), with ``predictor`` and ``dispatcher`` of each row in ``groups``."""

    trace: str
    platform: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    groups: list[Any] = field(default_factory=list)


def _workload(run: dict[str, Any]) -> str:
    """What a run's statistics pair on: the ``workload`` column (seed, slice)."""
    return run.get("workload") or f"seed={run.get('seed')}"


def _first_repetitions(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One run per workload: the lowest repetition. Repetitions of one workload are the
    same deterministic simulation (they differ in wall-clock fields only), so counting
    each would inflate the number of runs behind an interval."""
    best: dict[str, dict[str, Any]] = {}
    for r in runs:
        key = _workload(r)
        if key not in best or (r.get("repetition") or 0) < (best[key].get("repetition") or 0):
            best[key] = r
    return list(best.values())


def run_statistics(runs: Sequence[dict[str, Any]], *, metrics: Sequence[str] | None = None,
                   baseline: str | None = None, seed: int = 0,
                   include_unfinished: bool = False) -> list[Section]:
    """Statistics of done ``runs`` (rows of the ``runs`` table as dicts), one
    :class:`Section` per (trace, platform). ``baseline`` is a dispatcher label (as in the
    campaign file); it must exist in every section that has another dispatcher.

    Unfinished runs (stopped at their wall-clock budget:
    :func:`dispatchlab.experiment.campaign.store.is_unfinished`) are left out unless
    ``include_unfinished``; each row says in ``unfinished`` how many of its runs are."""

    keys = list(COMPARE_TABLE if metrics is None else metrics)
    done = [r for r in runs if r.get("status") == "done"
            and (include_unfinished or not is_unfinished(r))]
    groups = group_runs(done)
    sections: dict[tuple[str, str], Section] = {}
    for g in groups:
        sections.setdefault((g.trace, g.platform), Section(g.trace, g.platform)).groups.append(g)
    if baseline is not None and not any(g.dispatcher == baseline for g in groups):

        names = sorted({g.dispatcher for g in groups})
        raise InputError(f"no dispatcher labelled {baseline!r} among the selected runs"
                         f"{did_you_mean(baseline, names)} ({', '.join(names)})",
                         field="--baseline")
    for section in sections.values():
        by_predictor: dict[str, list[Any]] = {}
        for g in section.groups:
            by_predictor.setdefault(g.predictor, []).append(g)
        ordered = []
        for members in by_predictor.values():
            rows = [{"config": g.label, "workload": _workload(r),
                     **{k: r.get(k) for k in keys}}
                    for g in members for r in _first_repetitions(g.runs)]
            base = next((g.label for g in members if g.dispatcher == baseline), None)
            stats = compare_configurations(rows, metrics=keys, baseline=base, seed=seed)
            by_label = {s["config"]: s for s in stats}
            for g in members:
                by_label[g.label]["unfinished"] = sum(
                    is_unfinished(r) for r in _first_repetitions(g.runs))
            ordered += [(g, by_label[g.label]) for g in members]
        section.groups = [g for g, _ in ordered]
        section.rows = [s for _, s in ordered]
    return list(sections.values())


# ------------------------------------------------------------ power-cap results


#: The cap-window metrics averaged per group.
WINDOW_METRICS: tuple[str, ...] = ("cap_mean_share", "cap_time_above_share",
                                   "cap_time_above_own_share", "cap_max_excess",
                                   "cap_max_excess_own", "cap_mean_underuse",
                                   "window_start_share")
#: Metrics compared with the baseline run (relative change).
RELATIVE_METRICS: tuple[str, ...] = ("mean_turnaround", "max_turnaround", "mean_wait")


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def power_rows(runs: Sequence[dict[str, Any]], baseline: str = "easy",
               baseline_cap: str = "none") -> list[dict[str, Any]]:
    """One dict per group (see the module docstring): the labels, ``runs``,
    ``baselined``, each of :data:`WINDOW_METRICS`, ``above_share``,
    ``above_own_share`` and
    ``<metric>_change`` for each of :data:`RELATIVE_METRICS`, and the group's mean of
    ``mean_wait`` and ``mean_turnaround`` (s)."""
    done = [r for r in runs if r.get("status") == "done" and r.get("cap") is not None]

    def slot(r: dict[str, Any]) -> tuple:
        return (r.get("campaign"), r.get("trace"), r.get("platform"), r.get("predictor"),
                r.get("workload"), r.get("repetition"))

    base = {slot(r): r for r in done
            if r.get("dispatcher") == baseline and r.get("cap") == baseline_cap}
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in done:
        key = (r.get("campaign"), r.get("trace"), r.get("platform"), r.get("dispatcher"),
               r.get("predictor"), r.get("power_predictor"), r.get("cap"))
        groups.setdefault(key, []).append(r)
    out = []
    for (campaign, trace, platform, dispatcher, predictor, pp, cap), members in groups.items():
        row: dict[str, Any] = {"campaign": campaign, "trace": trace, "platform": platform,
                               "dispatcher": dispatcher, "predictor": predictor,
                               "power_predictor": pp, "cap": cap, "runs": len(members)}
        for m in WINDOW_METRICS:
            row[m] = _mean([v for r in members if (v := _num(r.get(m))) is not None])
        above = [v for r in members if (v := _num(r.get("cap_time_above_share"))) is not None]
        row["above_share"] = _mean([1.0 if v > 0 else 0.0 for v in above])
        own = [v for r in members
               if (v := _num(r.get("cap_time_above_own_share"))) is not None]
        row["above_own_share"] = _mean([1.0 if v > 0 else 0.0 for v in own])
        for m in ("mean_wait", "mean_turnaround"):
            row[m] = _mean([v for r in members if (v := _num(r.get(m))) is not None])
        changes: dict[str, list[float]] = {m: [] for m in RELATIVE_METRICS}
        baselined = 0
        for r in members:
            b = base.get(slot(r))
            if b is None:
                continue
            baselined += 1
            for m in RELATIVE_METRICS:
                v, bv = _num(r.get(m)), _num(b.get(m))
                if v is not None and bv is not None and bv > 0:
                    changes[m].append(v / bv - 1.0)
        row["baselined"] = baselined
        for m in RELATIVE_METRICS:
            row[f"{m}_change"] = _mean(changes[m])
        out.append(row)
    return out
