"""Distributions of step functions and weighted box statistics (pure functions).

Used by the prediction study (:mod:`dispatchlab.experiment.study`) and the report's box
plots (:mod:`dispatchlab.report.plots`):

- :func:`merge_step_functions` evaluates several
  :class:`~dispatchlab.metrics.series.StepFunction` on the union of their breakpoints
  (never one value per second);
- :func:`merged_distributions`: per function, each distinct value and the seconds it
  holds on that merged grid (optionally leaving out the time where every function is 0);
- :func:`weighted_box_stats`: min / max whiskers, weighted quartiles, median and mean
  in the form ``matplotlib.axes.Axes.bxp`` draws;
- :func:`slowdown_changed_mask`: the jobs whose slowdown differs from 1 in some row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dispatchlab.metrics.series import StepFunction

__all__ = ["merge_step_functions", "merged_distributions", "slowdown_changed_mask",
           "weighted_box_stats"]


def slowdown_changed_mask(slowdowns: np.ndarray) -> np.ndarray:
    """Columns (jobs) of a combinations x jobs slowdown matrix where some finite value
    differs from 1 (NaN, i.e. rejected, never counts as a difference)."""
    s = np.atleast_2d(np.asarray(slowdowns, dtype=np.float64))
    return np.any(np.isfinite(s) & (s != 1.0), axis=0)


def merge_step_functions(funcs: Sequence[StepFunction]) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    """Evaluate step functions on the union of their breakpoints.

    Returns ``(times, durations, values)``: interval ``k`` is
    ``[times[k], times[k] + durations[k])`` and ``values[i, k]`` is function ``i`` on
    it (0 outside a function's own domain). Intervals span from the earliest start to
    the latest end."""
    edges = [np.append(f.times, np.int64(f.end)) for f in funcs if len(f)]
    if not edges:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((len(funcs), 0))
    grid = np.unique(np.concatenate(edges)).astype(np.int64)
    times, durations = grid[:-1], np.diff(grid)
    values = np.zeros((len(funcs), len(times)),
                      dtype=np.result_type(*[f.values.dtype for f in funcs]))
    for i, f in enumerate(funcs):
        if not len(f):
            continue
        idx = np.searchsorted(f.times, times, side="right") - 1
        inside = (idx >= 0) & (times < f.end)
        values[i, inside] = f.values[idx[inside]]
    return times, durations, values


def merged_distributions(funcs: Sequence[StepFunction], *, exclude_all_zero: bool = True
                         ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per function: distinct values (ascending) and the seconds each holds, on the
    merged grid, leaving out intervals where every function is 0 (``exclude_all_zero``)."""
    _, durations, values = merge_step_functions(funcs)
    if exclude_all_zero and values.size:
        keep = np.any(values != 0, axis=0)
        durations, values = durations[keep], values[:, keep]
    out = []
    for row in values:
        vals, inverse = np.unique(row, return_inverse=True)
        secs = np.bincount(inverse, weights=durations, minlength=len(vals)).astype(np.int64)
        out.append((vals, secs))
    return out


def weighted_box_stats(values: np.ndarray, weights: np.ndarray | None = None,
                       label: str = "") -> dict[str, Any]:
    """Box statistics for ``Axes.bxp``: min / max whiskers, quartiles (inverted-CDF
    weighted quantiles, as :meth:`StepFunction.quantile`), median and weighted mean."""
    v = np.asarray(values, dtype=np.float64)
    w = np.ones(len(v)) if weights is None else np.asarray(weights, dtype=np.float64)
    keep = np.isfinite(v) & (w > 0)
    v, w = v[keep], w[keep]
    if v.size == 0:
        nan = float("nan")
        return {"label": label, "whislo": nan, "q1": nan, "med": nan, "q3": nan,
                "whishi": nan, "mean": nan, "fliers": [], "n": 0}
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    cum = np.cumsum(w)
    idx = np.searchsorted(cum, np.array([0.25, 0.5, 0.75]) * cum[-1], side="left")
    q1, med, q3 = v[np.minimum(idx, len(v) - 1)]
    return {"label": label, "whislo": float(v[0]), "q1": float(q1), "med": float(med),
            "q3": float(q3), "whishi": float(v[-1]),
            "mean": float((v * w).sum() / w.sum()), "fliers": [], "n": float(w.sum())}
