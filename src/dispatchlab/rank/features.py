"""Job feature matrices for learning to rank, and the paper's min-max normalisation.

Two feature sets (:data:`FEATURE_SETS`), one float64 row per job, columns in the set's
order:

``"seed"`` — the paper's five SWF fields 2, 3, 4, 5, 9 (predictsim ``conf.py``
``indices = (2, 3, 4, 5, 9)``):

* ``submit``: submit time (s, trace origin);
* ``wait``: wait time (s);
* ``run``: run time (s);
* ``processors``: the job's processors (``units``, the simulator's request);
* ``requested``: requested wall-time (``requested_time``, s).

In the seed, the **training** rows come from the *simulated* output of each list (wait =
simulated start - submit, run = the simulated run), and the **test** rows from the *raw
test trace*, i.e. the wait recorded on the original system and the actual run time.
**LEAKAGE**: both are unknown when a real scheduler must rank a waiting job; the run
time in particular tells the model the job's true length. The paper's numbers were
obtained this way (the author flagged it later, predictsim commit ``c671558``). Pass
``wait=``/``run=`` to :func:`job_features` to use simulated values; without them the
trace's recorded columns are used, which reproduces the paper's leaky test features.
Also note that the seed read SWF field 5 (allocated processors) of the raw test trace;
*Ours*: ``processors`` is always ``units`` (field 8, or 5 when 8 is missing).

``"causal"`` (the default) — *Ours*: only what is known when the job is submitted, so
a job's score never changes while it waits and nothing from the future leaks in:

* ``requested``: requested wall-time (s);
* ``processors``: ``units``;
* ``user_last2_run``: mean run time (s) of the user's two most recently *ended* earlier
  jobs (Tsafrir et al. 2007's history), see :func:`user_last2_run`;
* ``hour_of_day``: ``(origin + submit) // 3600 % 24`` with ``origin =
  info.unix_start_time + info.time_offset`` (``unix_start_time`` taken as 0 when
  unknown; ``time_offset`` undoes any re-basing of the table, so the hour is that of
  the original log, as :mod:`dispatchlab.predict.duration.ml` computes it). UTC;
* ``log_area``: ``log10(1 + requested * processors)`` (a negative product, i.e. a
  missing value, counts as 0).

The causal set never reads simulated values: ``wait``/``run`` overrides are ignored.
Features are computed on the table being simulated (a training list alone, or the test
part alone, as each is simulated alone), so the user history starts empty at the
beginning of each; a count of the user's earlier jobs (:func:`user_jobs_before`) is
therefore not in the set: it grows with the table's length (a few hundred in a list,
tens of thousands in a test part) and would not transfer.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.workload.jobs import JobTable

#: feature set name -> feature names, in column order
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "seed": ("submit", "wait", "run", "processors", "requested"),
    "causal": ("requested", "processors", "user_last2_run", "hour_of_day", "log_area"),
}
#: the feature set used when none is named
DEFAULT_FEATURE_SET = "causal"


def check_feature_set_name(feature_set: str) -> tuple[str, ...]:
    """The feature names of ``feature_set``; :class:`InputError` (field ``features``)
    naming the valid sets when it is unknown."""
    try:
        return FEATURE_SETS[feature_set]
    except (KeyError, TypeError):
        valid = ", ".join(sorted(FEATURE_SETS))
        raise InputError(f"unknown feature set {feature_set!r} (valid: {valid})",
                         field="features") from None


def _override(name: str, values: np.ndarray | None, default: np.ndarray) -> np.ndarray:
    if values is None:
        return default
    arr = np.asarray(values)
    if arr.shape != default.shape:
        raise ValueError(f"{name} override has shape {arr.shape}, expected {default.shape}")
    return arr


def user_last2_run(jobs: JobTable) -> np.ndarray:
    """For each job, the mean run time (s, float64) of the same user's last two ended jobs.

    A job ``j`` counts for job ``i`` when it has the same user, comes earlier in the table
    (row ``j < i``) and has *ended* by ``i``'s submission according to the trace:
    ``submit_j + wait_j + run_j <= submit_i`` with the **recorded** wait (a job with
    ``wait < 0`` or ``run < 0``, i.e. missing, never counts as ended). Of those, the two
    latest by ``(end, row)`` are used (ties in end time: the larger row is the more
    recent); with one, its run time; with none, ``i``'s own requested time. A user of
    ``-1`` (unknown) makes every such job its own user: no history, requested time.

    O(n log n): one lexicographic sort of end and submit events, then prefix maxima.
    """
    n = len(jobs)
    submit = np.asarray(jobs["submit"], dtype=np.int64)
    wait = np.asarray(jobs["wait"], dtype=np.int64)
    run = np.asarray(jobs["run"], dtype=np.int64)
    user = np.asarray(jobs["user"], dtype=np.int64)
    out = np.asarray(jobs["requested_time"], dtype=np.float64).copy()
    known = user >= 0
    ended = known & (wait >= 0) & (run >= 0)
    if n == 0 or not ended.any():
        return out
    rows = np.arange(n, dtype=np.int64)
    end_rows = rows[ended]
    query_rows = rows[known]
    # Events: ends (kind 1) and submissions (kind 0), per user, by (time, row, kind). An
    # end at time t precedes a submission at t only when its row is smaller, so the job
    # itself (kind 0 sorts first at equal row) and later rows never count.
    ev_row = np.concatenate([end_rows, query_rows])
    ev_time = np.concatenate([(submit + wait + run)[end_rows], submit[query_rows]])
    ev_kind = np.concatenate([np.ones(len(end_rows), np.int8),
                              np.zeros(len(query_rows), np.int8)])
    ev_user = user[ev_row]
    order = np.lexsort((ev_kind, ev_row, ev_time, ev_user))
    s_row, s_kind, s_user = ev_row[order], ev_kind[order], ev_user[order]
    pos = np.arange(len(order), dtype=np.int64)
    last_end = np.maximum.accumulate(np.where(s_kind == 1, pos, -1))
    is_query = s_kind == 0
    qpos = pos[is_query]
    l1 = last_end[qpos]
    ok1 = l1 >= 0
    ok1[ok1] = s_user[l1[ok1]] == s_user[qpos[ok1]]
    l2 = np.full_like(l1, -1)
    has_prev = ok1 & (l1 >= 1)
    l2[has_prev] = last_end[l1[has_prev] - 1]
    ok2 = l2 >= 0
    ok2[ok2] = s_user[l2[ok2]] == s_user[qpos[ok2]]
    runs = run.astype(np.float64)
    target = s_row[qpos]
    one = ok1 & ~ok2
    out[target[one]] = runs[s_row[l1[one]]]
    out[target[ok2]] = (runs[s_row[l1[ok2]]] + runs[s_row[l2[ok2]]]) / 2.0
    return out


def user_jobs_before(jobs: JobTable) -> np.ndarray:
    """For each job, the number of jobs of the same user at earlier rows (float64);
    0 for every job of the unknown user ``-1``."""
    user = np.asarray(jobs["user"], dtype=np.int64)
    n = len(user)
    out = np.zeros(n, dtype=np.float64)
    if n == 0:
        return out
    order = np.argsort(user, kind="stable")
    su = user[order]
    first = np.ones(n, dtype=bool)
    first[1:] = su[1:] != su[:-1]
    start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    rank = np.arange(n) - start
    out[order] = rank
    out[user < 0] = 0.0
    return out


def hour_of_day(jobs: JobTable) -> np.ndarray:
    """``(origin + submit) // 3600 % 24`` (float64, 0..23, UTC) with ``origin =
    (info.unix_start_time or 0) + info.time_offset``."""
    origin = int(jobs.info.unix_start_time or 0) + int(jobs.info.time_offset)
    t = np.asarray(jobs["submit"], dtype=np.int64) + origin
    return ((t // 3600) % 24).astype(np.float64)


def job_features(
    jobs: JobTable,
    feature_set: str = DEFAULT_FEATURE_SET,
    *,
    wait: np.ndarray | None = None,
    run: np.ndarray | None = None,
) -> np.ndarray:
    """The ``len(jobs) x len(FEATURE_SETS[feature_set])`` float64 feature matrix.

    ``wait``/``run`` (length ``len(jobs)``, s) replace the trace's recorded ``wait`` and
    ``run`` columns for the ``"seed"`` set (use the simulated schedule's values for
    training rows); the ``"causal"`` set ignores them. See the module docstring for each
    feature and for the paper's test-time leakage. Unknown ``feature_set``:
    :class:`InputError` (field ``features``).
    """
    names = check_feature_set_name(feature_set)
    n = len(jobs)
    requested = np.asarray(jobs["requested_time"], dtype=np.float64)
    processors = np.asarray(jobs["units"], dtype=np.float64)
    cols: dict[str, np.ndarray]
    if feature_set == "seed":
        cols = {
            "submit": np.asarray(jobs["submit"], dtype=np.float64),
            "wait": _override("wait", wait, np.asarray(jobs["wait"])).astype(np.float64),
            "run": _override("run", run, np.asarray(jobs["run"])).astype(np.float64),
            "processors": processors,
            "requested": requested,
        }
    else:
        area = np.maximum(requested * processors, 0.0)
        cols = {
            "requested": requested,
            "processors": processors,
            "user_last2_run": user_last2_run(jobs),
            "user_jobs_before": user_jobs_before(jobs),
            "hour_of_day": hour_of_day(jobs),
            "log_area": np.log10(1.0 + area),
        }
    out = np.empty((n, len(names)), dtype=np.float64)
    for k, name in enumerate(names):
        out[:, k] = cols[name]
    return out


def fit_minmax(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-column minimum and maximum of ``X`` (rows = jobs), as the paper's ``min_max``
    over all kept training outputs. ``X`` must have at least one row."""
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError(f"fit_minmax needs a non-empty 2-D matrix, got shape {arr.shape}")
    return arr.min(axis=0), arr.max(axis=0)


def apply_minmax(X: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``(X - lo) / (hi - lo)`` per column (float64, a new array); a constant column
    (``hi == lo``) becomes 0. Values are **not** clipped: rows outside the fitted range
    (test jobs) map outside ``[0, 1]``, as in the paper's ``normalize``."""
    arr = np.asarray(X, dtype=np.float64)
    lo_a = np.asarray(lo, dtype=np.float64)
    hi_a = np.asarray(hi, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != lo_a.shape[0] or lo_a.shape != hi_a.shape:
        raise ValueError(f"apply_minmax: matrix shape {arr.shape} does not match lo/hi "
                         f"lengths {lo_a.shape}/{hi_a.shape}")
    rng = hi_a - lo_a
    const = rng == 0
    safe = np.where(const, 1.0, rng)
    out = (arr - lo_a) / safe
    out[:, const] = 0.0
    return out
