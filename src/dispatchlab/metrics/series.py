"""Time-weighted step functions: queue length and resources in use.

A trace spans up to ~10^8 seconds, so a time series is never one value per second:
it is a :class:`StepFunction`, a list of breakpoints ``times`` (int64 s, strictly
increasing) and ``values``, where ``values[k]`` holds on ``[times[k], times[k+1])``
and the last value holds on ``[times[-1], end)``. Consecutive equal values are merged,
so every segment has a positive duration and differs from its neighbours.

Both series are sums of weighted half-open intervals ``[lo, hi)``
(:func:`step_function`), built in O(n log n) with one stable sort, a segmented sum
(``np.add.reduceat``) and a cumulative sum (int64 weights: the compiled core,
``dispatchlab._core``, with the same result bit for bit):

- queue length (:func:`queue_length`): a job waits on ``[submit, start)``, weight 1;
- resource in use (:func:`resource_in_use`): a job runs on ``[start, end)``, weight
  ``units x per-unit resource``.

Tie rule: at a timestamp where several intervals open and close, the value *after all
the changes* at that timestamp is what holds from it on. An empty interval
(``lo == hi``, e.g. a 0-second wait or a 0-second run) changes nothing.

Time-weighted statistics (:meth:`StepFunction.mean`, :meth:`~StepFunction.distribution`,
:meth:`~StepFunction.quantile`) weight every value by the seconds it holds; that is the
"value at every second" distribution, without materializing the seconds.
``exclude_zero=True`` leaves out the periods where the value is 0 (e.g. an empty queue).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from dispatchlab.core.errors import InputError

try:  # the compiled core: the int64 step functions and group sums (bit-identical)
    from dispatchlab import _core
except ImportError:  # not built: numpy computes every series
    _core = None


def _int64(*arrays: np.ndarray) -> bool:
    """Whether the compiled core computes on these arrays: all one-dimensional native
    int64 (integer sums do not depend on the order of the additions, so the core's
    result is bit-identical to numpy's; float sums stay in numpy)."""
    return _core is not None and all(a.dtype == np.int64 and a.ndim == 1 for a in arrays)


def _group_sum(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique keys and the sum of ``weights`` per key (dtype kept)."""
    if keys.size == 0:
        return keys[:0], weights[:0]
    if _int64(keys, weights):
        return _core.group_sum(keys, weights)
    return _group_sum_numpy(keys, weights)


def _group_sum_numpy(keys: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_group_sum` in numpy (the reference) for non-empty ``keys``."""
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    w = weights[order]
    first = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
    return k[first], np.add.reduceat(w, first)


@dataclass(frozen=True, eq=False)
class StepFunction:
    """A right-continuous step function on ``[times[0], end)`` (seconds).

    ``values[k]`` holds on ``[times[k], times[k+1])``, the last one on
    ``[times[-1], end)``. An empty function (no breakpoints) has no duration; its
    statistics are NaN.
    """

    times: np.ndarray
    values: np.ndarray
    end: int

    @property
    def start(self) -> int:
        """First second of the domain (``end`` when the function is empty)."""
        return int(self.times[0]) if len(self.times) else int(self.end)

    @property
    def duration(self) -> int:
        """Length of the domain (s)."""
        return int(self.end) - self.start

    def __len__(self) -> int:
        return len(self.times)

    def durations(self) -> np.ndarray:
        """Seconds each value holds (int64, all > 0)."""
        return np.diff(np.append(self.times, np.int64(self.end)))

    def _weighted(self, exclude_zero: bool) -> tuple[np.ndarray, np.ndarray]:
        vals = self.values
        secs = self.durations()
        if exclude_zero:
            keep = vals != 0
            vals, secs = vals[keep], secs[keep]
        return vals, secs

    def integral(self) -> float:
        """Sum of value x seconds over the domain (e.g. job-seconds of waiting)."""
        return float((self.values.astype(np.float64) * self.durations()).sum())

    def mean(self, *, exclude_zero: bool = False) -> float:
        """Time-weighted mean; with ``exclude_zero`` only over the time the value is non-zero.

        NaN when there is no time to average over.
        """
        vals, secs = self._weighted(exclude_zero)
        total = int(secs.sum())
        if total == 0:
            return float("nan")
        # float64 products: amount x seconds can pass 2**63 (e.g. memory in KB).
        return float((vals.astype(np.float64) * secs).sum()) / total

    def max(self) -> float:
        """Largest value (NaN for an empty function)."""
        return float(self.values.max()) if len(self.values) else float("nan")

    def distribution(self, *, exclude_zero: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Distinct values (ascending) and the total seconds each one holds."""
        vals, secs = self._weighted(exclude_zero)
        return _group_sum(vals, secs)

    def quantile(self, q: ArrayLike, *, exclude_zero: bool = False) -> Any:
        """Time-weighted quantile(s), ``q`` in [0, 1].

        The smallest value ``v`` such that the value is ``<= v`` during at least a
        fraction ``q`` of the time (the *inverted CDF* definition: on the
        one-value-per-second expansion it equals ``np.quantile(..., method="inverted_cdf")``).
        Returns a float for a scalar ``q``, an array otherwise; NaN when there is no time.
        """
        qa = np.asarray(q, dtype=np.float64)
        if np.any(~np.isfinite(qa)) or np.any((qa < 0) | (qa > 1)):
            raise InputError(f"quantile must be in [0, 1], got {q!r}")
        vals, secs = self.distribution(exclude_zero=exclude_zero)
        if vals.size == 0:
            out = np.full(qa.shape, np.nan)
        else:
            cum = np.cumsum(secs)
            idx = np.searchsorted(cum, qa * cum[-1], side="left")
            out = vals[np.minimum(idx, len(vals) - 1)].astype(np.float64)
        return float(out) if out.ndim == 0 else out

    def value_at(self, t: ArrayLike) -> np.ndarray:
        """Values at the given times (s); every time must be in ``[start, end)``."""
        ta = np.asarray(t, dtype=np.int64)
        if len(self.times) == 0 or np.any((ta < self.start) | (ta >= self.end)):
            raise InputError(f"time outside the step function's domain [{self.start}, {self.end})")
        return self.values[np.searchsorted(self.times, ta, side="right") - 1]

    def scaled(self, factor: float) -> StepFunction:
        """The same function with values multiplied by ``factor`` (float64 values)."""
        return StepFunction(self.times, self.values * float(factor), self.end)

    def to_columns(self) -> dict[str, np.ndarray]:
        """Columns for a time-series table: ``time`` (s), ``duration`` (s), ``value``."""
        return {"time": self.times, "duration": self.durations(), "value": self.values}


def step_function(
    lo: ArrayLike,
    hi: ArrayLike,
    weight: ArrayLike | None = None,
    *,
    horizon: tuple[int, int] | None = None,
) -> StepFunction:
    """Sum of ``weight`` over the half-open intervals ``[lo, hi)`` (integer seconds).

    ``horizon = (h0, h1)`` restricts the domain to ``[h0, h1)``: intervals are clipped
    to it, the result starts at ``h0`` (value 0 if nothing is open then) and ends at
    ``h1``. By default the horizon is ``[min(lo), max(hi))``. Weights default to 1
    (int64); integer weights give exact integer values (float weights may leave
    rounding residues instead of exact zeros). Ties: the value after all changes at
    one timestamp holds; empty intervals change nothing.
    """
    a = np.asarray(lo, dtype=np.int64)
    b = np.asarray(hi, dtype=np.int64)
    if a.shape != b.shape or a.ndim != 1:
        raise InputError("interval bounds must be 1-D arrays of the same length")
    w = np.ones(len(a), dtype=np.int64) if weight is None else np.asarray(weight)
    if w.shape != a.shape:
        raise InputError("interval weights must have one value per interval")
    if np.any(b < a):
        raise InputError("an interval ends before it starts")
    if horizon is None:
        if len(a) == 0:
            return StepFunction(np.zeros(0, np.int64), w[:0], 0)
        h0, h1 = int(a.min()), int(b.max())
    else:
        h0, h1 = int(horizon[0]), int(horizon[1])
        if h1 < h0:
            raise InputError(f"horizon [{h0}, {h1}) is reversed")
    if h1 == h0:
        return StepFunction(np.zeros(0, np.int64), w[:0], h0)
    if _int64(w):
        times, values = _core.step_function(a, b, w, h0, h1)
        return StepFunction(times, values, h1)
    return _step_function_numpy(a, b, w, h0, h1)


def _step_function_numpy(a: np.ndarray, b: np.ndarray, w: np.ndarray, h0: int, h1: int
                         ) -> StepFunction:
    """:func:`step_function` in numpy (the reference), on checked int64 bounds ``a``,
    ``b``, weights ``w`` and a horizon with ``h0 < h1``."""
    a = np.clip(a, h0, h1)
    b = np.clip(b, h0, h1)
    keep = a < b
    times = np.concatenate((a[keep], b[keep]))
    deltas = np.concatenate((w[keep], -w[keep]))
    times, deltas = _group_sum(times, deltas)
    values = np.cumsum(deltas)
    # Value 0 before the first change; nothing after h1 belongs to the domain.
    if times.size == 0 or times[0] != h0:
        times = np.concatenate(([h0], times))
        values = np.concatenate((np.zeros(1, dtype=values.dtype), values))
    inside = times < h1
    times, values = times[inside], values[inside]
    change = np.concatenate(([True], values[1:] != values[:-1]))
    return StepFunction(times[change].astype(np.int64), values[change], h1)


def queue_length(
    submit: ArrayLike, start: ArrayLike, *, horizon: tuple[int, int] | None = None
) -> StepFunction:
    """Number of waiting jobs over time: a job waits on ``[submit, start)``.

    Pass only jobs that started (no rejected jobs). By default the domain is
    ``[min(submit), max(start))``; see :func:`step_function` for ``horizon`` and ties.
    """
    return step_function(submit, start, horizon=horizon)


def resource_in_use(
    start: ArrayLike,
    end: ArrayLike,
    amount: ArrayLike,
    *,
    horizon: tuple[int, int] | None = None,
) -> StepFunction:
    """Amount of one resource held by running jobs: ``amount`` on ``[start, end)``.

    ``amount`` is the job's total (``units x per-unit resource``). Divide by the
    platform capacity (:meth:`StepFunction.scaled`) to get utilization.
    """
    return step_function(start, end, np.asarray(amount), horizon=horizon)
