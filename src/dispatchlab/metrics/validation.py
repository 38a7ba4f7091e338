"""How closely simulated waits follow the waits a log recorded (pure numpy).

A trace from a real system records when each job actually started (SWF field 3, the
wait). ``dispatchlab validate`` simulates the trace and compares, job by job, the
simulated wait with the recorded one; these functions compute the comparison from
three aligned arrays (one value per compared job): the submit times, the recorded
waits and the simulated waits (seconds). Which jobs are compared (a recorded wait, a
simulated start) is the caller's choice (:mod:`dispatchlab.experiment.validation`).

- :func:`wait_errors`: the error distribution (quantiles of simulated - recorded
  wait), the mean absolute error, Pearson's and Spearman's correlation and both mean
  waits;
- :func:`wait_errors_by_group`: the same per group (a partition or queue);
- :func:`rolling_mean_waits` and :func:`rolling_wait_mape`: the measure of Wilkinson et
  al. (2023), *D. Wilkinson et al., 2023, Springer LNCS,
  doi:10.1007/978-3-031-40843-4_24* (cited by its DOI: title and volume not checked
  here), who report 7.3 % for their Slurm simulator on
  ARCHER2: the mean absolute percentage error, over hourly points, between the
  recorded and the simulated 14-day rolling mean wait, leaving out the points where
  the recorded mean is 0.

**The 14-day rolling mean wait at hour h** (our definition, where the paper is not
explicit): the mean wait of the compared jobs *submitted* in the window
``(h - 14 days, h]`` (open at the left, closed at the right), the recorded and the
simulated series over the same jobs. Hours ``h`` are the multiples of 3600 s of the
trace's time axis, from the first one at least 14 days after the first submission to
the first one at or after the last submission. The series starts 14 days in, so
that every point averages a full window (an early point would average a few days,
and those are the days the simulation starts from an empty machine while the real
one already had a queue). A point whose window holds no job has no mean and is left
out (counted as ``empty``); a point whose recorded mean is 0 is left out of the
percentage error (counted as ``zero``), as in the paper. The MAPE is
``100 * mean(|simulated - recorded| / recorded)`` over the points kept, in percent.
A job is placed in the window by its submit time, not its start: the mean wait of
the jobs submitted in the last 14 days is what a user submitting at ``h`` could have
been told. Window and step are parameters (:data:`ROLLING_WINDOW`,
:data:`ROLLING_STEP` by default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ERROR_QUANTILES", "ROLLING_STEP", "ROLLING_WINDOW", "WILKINSON_2023",
           "RollingWaits", "average_ranks", "rolling_mean_waits", "rolling_wait_mape",
           "wait_errors", "wait_errors_by_group"]

#: the rolling window of Wilkinson et al. (2023): 14 days, in seconds
ROLLING_WINDOW = 14 * 86400
#: the spacing of the rolling-mean points: one hour, in seconds
ROLLING_STEP = 3600
#: the quantiles of the wait error reported (name -> fraction)
ERROR_QUANTILES: dict[str, float] = {"p5": 0.05, "p25": 0.25, "p50": 0.5, "p75": 0.75,
                                     "p95": 0.95}
#: the reference the rolling MAPE is defined after, with the figure it reports
WILKINSON_2023 = ("D. Wilkinson et al. 2023, doi:10.1007/978-3-031-40843-4_24: "
                  "7.3 % on ARCHER2")


def average_ranks(x: np.ndarray) -> np.ndarray:
    """The 1-based ranks of ``x`` (float64), ties sharing the mean of their ranks (the
    ranks Spearman's correlation is Pearson's correlation of)."""
    x = np.asarray(x)
    n = len(x)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    # a tie group starts where the sorted value changes
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], n]  # exclusive
    mean_rank = (starts + ends + 1) / 2.0  # mean of ranks starts+1 .. ends
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's correlation, None for fewer than two values or a constant array."""
    if len(x) < 2:
        return None
    xc = x - x.mean()
    yc = y - y.mean()
    denom = float(np.sqrt((xc * xc).sum() * (yc * yc).sum()))
    if denom == 0.0:
        return None
    return float((xc * yc).sum() / denom)


def wait_errors(recorded: np.ndarray, simulated: np.ndarray) -> dict[str, Any]:
    """Compare simulated with recorded waits (aligned arrays, seconds, one per job).

    Returns ``jobs`` (how many), ``recorded_mean_wait`` and ``simulated_mean_wait``
    (s), ``mean_error`` (mean of simulated - recorded, s: the bias), ``mae`` (mean
    absolute error, s), ``error_quantiles`` (``min``, :data:`ERROR_QUANTILES`,
    ``max`` of simulated - recorded, s; linear interpolation), ``pearson`` and
    ``spearman`` (None for fewer than two jobs or when one side is constant). With no
    job every figure but ``jobs`` is None."""
    rec = np.asarray(recorded, dtype=np.float64)
    sim = np.asarray(simulated, dtype=np.float64)
    if rec.shape != sim.shape:
        raise ValueError(f"recorded ({rec.shape}) and simulated ({sim.shape}) waits "
                         "must be aligned")
    n = len(rec)
    if n == 0:
        return {"jobs": 0, "recorded_mean_wait": None, "simulated_mean_wait": None,
                "mean_error": None, "mae": None,
                "error_quantiles": dict.fromkeys(["min", *ERROR_QUANTILES, "max"]),
                "pearson": None, "spearman": None}
    err = sim - rec
    quantiles = {"min": float(err.min())}
    values = np.quantile(err, list(ERROR_QUANTILES.values()))
    quantiles.update({k: float(v) for k, v in zip(ERROR_QUANTILES, values, strict=True)})
    quantiles["max"] = float(err.max())
    return {
        "jobs": n,
        "recorded_mean_wait": float(rec.mean()),
        "simulated_mean_wait": float(sim.mean()),
        "mean_error": float(err.mean()),
        "mae": float(np.abs(err).mean()),
        "error_quantiles": quantiles,
        "pearson": _pearson(rec, sim),
        "spearman": _pearson(average_ranks(rec), average_ranks(sim)),
    }


def wait_errors_by_group(recorded: np.ndarray, simulated: np.ndarray, groups: np.ndarray,
                         names: Mapping[int, str] | None = None) -> list[dict[str, Any]]:
    """:func:`wait_errors` per group: ``groups`` holds one integer code per job (a
    partition or queue number); ``names`` maps a code to its label (a code it does not
    name is labelled by its number). One dict per code present, in ascending code
    order, with ``group`` (the label) and ``code`` added."""
    rec = np.asarray(recorded)
    sim = np.asarray(simulated)
    codes = np.asarray(groups, dtype=np.int64)
    rows = []
    for code in np.unique(codes):
        mask = codes == code
        label = (names or {}).get(int(code), str(int(code)))
        rows.append({"group": label, "code": int(code), **wait_errors(rec[mask], sim[mask])})
    return rows


@dataclass(frozen=True)
class RollingWaits:
    """The recorded and simulated rolling mean waits and their MAPE
    (:func:`rolling_wait_mape`; the definition is in the module docstring).

    ``hours`` holds every point (s, trace time; multiples of ``step``), ``jobs`` the
    number of jobs in each point's window, ``recorded`` and ``simulated`` the two
    means (s; NaN where the window is empty). ``used`` marks the points the MAPE
    averages (a job in the window, a recorded mean above 0); ``empty`` and ``zero``
    count the points left out for each reason. ``mape`` is in percent, None when no
    point is kept."""

    hours: np.ndarray
    jobs: np.ndarray
    recorded: np.ndarray
    simulated: np.ndarray
    used: np.ndarray
    empty: int
    zero: int
    mape: float | None
    window: int
    step: int

    def summary(self) -> dict[str, Any]:
        """The figures without the series: ``mape_percent``, ``points`` (all),
        ``points_used``, ``left_out_empty``, ``left_out_zero_recorded``,
        ``window_days``, ``step_hours``."""
        return {"mape_percent": self.mape, "points": len(self.hours),
                "points_used": int(self.used.sum()), "left_out_empty": self.empty,
                "left_out_zero_recorded": self.zero, "window_days": self.window / 86400,
                "step_hours": self.step / 3600}


def rolling_mean_waits(submit: np.ndarray, waits: np.ndarray, hours: np.ndarray,
                       window: int = ROLLING_WINDOW) -> tuple[np.ndarray, np.ndarray]:
    """For each point ``h`` of ``hours``: the number of jobs submitted in
    ``(h - window, h]`` and their mean wait (NaN when none). ``submit`` need not be
    sorted; ``waits`` is aligned with it. Linear in jobs + points (cumulative sums)."""
    submit = np.asarray(submit, dtype=np.int64)
    order = np.argsort(submit, kind="stable")
    s = submit[order]
    csum = np.r_[0.0, np.cumsum(np.asarray(waits, dtype=np.float64)[order])]
    hi = np.searchsorted(s, hours, side="right")
    lo = np.searchsorted(s, np.asarray(hours, dtype=np.int64) - window, side="right")
    count = hi - lo
    total = csum[hi] - csum[lo]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / np.maximum(count, 1), np.nan)
    return count.astype(np.int64), mean


def rolling_wait_mape(submit: np.ndarray, recorded: np.ndarray, simulated: np.ndarray, *,
                      window: int = ROLLING_WINDOW, step: int = ROLLING_STEP
                      ) -> RollingWaits:
    """The recorded and simulated rolling mean waits at every point and the MAPE
    between them (the definition, after Wilkinson et al. 2023, is in the module
    docstring). ``submit``, ``recorded`` and ``simulated`` are aligned (one value per
    compared job, seconds); ``window`` and ``step`` are seconds (> 0)."""
    if window <= 0 or step <= 0:
        raise ValueError(f"window ({window}) and step ({step}) must be positive")
    submit = np.asarray(submit, dtype=np.int64)
    if len(submit) == 0:
        hours = np.zeros(0, dtype=np.int64)
    else:
        first = -(-(int(submit.min()) + window) // step) * step  # ceiling
        last = -(-int(submit.max()) // step) * step
        hours = np.arange(first, last + 1, step, dtype=np.int64)
    count, rec = rolling_mean_waits(submit, recorded, hours, window)
    _, sim = rolling_mean_waits(submit, simulated, hours, window)
    has_jobs = count > 0
    used = has_jobs & (np.nan_to_num(rec) > 0)
    mape = None
    if used.any():
        mape = float(100.0 * np.mean(np.abs(sim[used] - rec[used]) / rec[used]))
    return RollingWaits(hours=hours, jobs=count, recorded=rec, simulated=sim, used=used,
                        empty=int((~has_jobs).sum()), zero=int((has_jobs & ~used).sum()),
                        mape=mape, window=int(window), step=int(step))
