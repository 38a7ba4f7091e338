"""Power accounting of a finished run: the platform power over time, energy, and the
cap-window metrics (Carastan-Santos et al. 2024 section 6).

**Platform power** (:func:`platform_power`): the sum over running jobs of each job's
``power_mean`` (its measured whole-job power, W; see :mod:`dispatchlab.power.model`)
times its power level (1 unless a ``SetPower`` changed it; the changes are the run's
``segments``). It changes only at starts, ends and level changes, so it is a step
function, built after the run from the schedule (a run without power columns costs
nothing). Idle nodes are not in it (the capped quantity is the jobs' power). Jobs with
unknown power (NaN) count as 0 W and are counted (``power_unknown_jobs``).

**Sampled platform power** (:func:`sampled_platform_power`): when the jobs' power time
series are given (``SimulationResult.power_series``, the layout of
:func:`dispatchlab.power.data.read_power_series`), the platform power on a grid of
``period`` s (default :data:`~dispatchlab.power.data.DEFAULT_PERIOD` = 20 s,
Carastan-Santos et al. 2024's IPMI period), built after the run from the schedule plus
the series, as Carastan-Santos et al. 2024 do
with Batsim's schedules and the Marconi100 series. A mean-power step function cannot
show a cap being broken by peaks; this series can. Jobs without a series contribute
their ``power_mean`` (counted: ``power_series_fallback_jobs``).

**Metrics** (:func:`power_facts`, in the run summary when the jobs carry power):
``energy_j`` (J, the integral of platform power over the run), ``mean_power_w`` (W,
energy over the span from the first start to the last end), and with a cap window
(the first span where the cap is set; ours: a schedule with several capped spans uses
all of them together): ``cap_mean_share`` (mean power in the window / cap),
``cap_time_above_share`` (share of window time with power above the cap),
``cap_max_excess`` (largest (power - cap) / cap, 0 when never above),
``cap_mean_underuse`` (time-mean of (cap - power) / cap over the window, counting 0
when above) and ``window_start_share`` (share of the started jobs that started inside
the window). Power above the cap caused by jobs already running when the window
opened is included (they keep running, as the paper's); ours: two more metrics leave
out the times when those *inherited* jobs alone are above the cap (no dispatcher can
help it then): ``cap_time_above_own_share`` (share of window time with the power above
the cap while the inherited jobs' own power is within it) and ``cap_max_excess_own``
(the largest excess at such times). With the ``max`` check and exact predictions they
are 0 (up to the sampled series' peaks above a job's ``power_max``, which cannot
happen: the max is the series' maximum).

Which power each metric uses: ``energy_j`` and ``mean_power_w`` always come from the
exact step function of the mean powers (:func:`platform_power`). The four ``cap_*``
metrics come from the step function too, unless the run carries job power series: then
from the sampled series, each grid value holding for one period (the window's edges
cut the first and last periods; the window's open end is the last job end, as
without series). Such runs also report ``power_series_period`` (s, the grid period:
its presence says the ``cap_*`` metrics are sampled) and
``power_series_fallback_jobs``; runs without series report neither, and cost nothing
extra. ``window_start_share`` depends on the starts only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.power.model import DEFAULT_PERIOD, has_power


def platform_power(result) -> tuple[np.ndarray, np.ndarray]:
    """``(times, watts)``: the platform power, right-continuous steps (times in s,
    ascending, unique; the last value holds until nothing runs, so it is 0)."""
    jobs = result.jobs
    p = np.nan_to_num(np.asarray(jobs["power_mean"], dtype=np.float64), nan=0.0)
    started = result.start >= 0
    t = [result.start[started], result.end[started]]
    d = [p[started], -p[started]]
    seg = result.segments
    if seg is not None and len(seg["job"]):
        # level changes: +p (new - old) at each change; the end removes p x last level
        level = np.ones(len(p))
        deltas = np.empty(len(seg["job"]))
        for k, (j, lv) in enumerate(zip(seg["job"].tolist(), seg["power_level"].tolist(),
                                        strict=True)):
            deltas[k] = p[j] * (lv - level[j])
            level[j] = lv
        t.append(seg["time"])
        d.append(deltas)
        last = level[started]
        d[1] = -p[started] * last
    times = np.concatenate(t).astype(np.int64)
    delta = np.concatenate(d)
    if len(times) == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    order = np.argsort(times, kind="stable")
    times, delta = times[order], delta[order]
    uniq, first = np.unique(times, return_index=True)
    sums = np.add.reduceat(delta, first)
    watts = np.cumsum(sums)
    watts[np.abs(watts) < 1e-6] = 0.0
    return uniq, watts


def _last_at_or_before(entry_group: np.ndarray, entry_key: np.ndarray,
                       query_group: np.ndarray, query_key: np.ndarray) -> np.ndarray:
    """For each query ``(group, key)``, the index of the last entry of the same group
    whose key is <= the query's key, or -1 when the group has no such entry. All int64;
    the entries sorted by (group, key), of equal entries the later one is found.

    Exact and sort-free: entry keys are clipped to ``[min query key, max query key +
    1]`` (which keeps every comparison with a query), groups become dense ranks, and
    ``rank x stride + key`` is one increasing int64 key for ``np.searchsorted``: O((E +
    Q) log E). When that key could overflow, one merge sort of entries and queries
    instead."""
    n, q = len(entry_group), len(query_group)
    out = np.full(q, -1, dtype=np.int64)
    if n == 0 or q == 0:
        return out
    q_lo, q_hi = int(query_key.min()), int(query_key.max())
    stride = q_hi - q_lo + 2
    heads = np.flatnonzero(np.r_[True, entry_group[1:] != entry_group[:-1]])
    groups = entry_group[heads]  # sorted, unique
    if len(groups) * stride < 2**62:
        e_rank = np.repeat(np.arange(len(groups), dtype=np.int64),
                           np.diff(np.r_[heads, n]))
        q_rank = np.minimum(np.searchsorted(groups, query_group), len(groups) - 1)
        member = groups[q_rank] == query_group
        e_comp = e_rank * stride + (np.clip(entry_key, q_lo, q_hi + 1) - q_lo)
        q_comp = q_rank * stride + (query_key - q_lo)
        found = np.searchsorted(e_comp, q_comp, side="right") - 1
        ok = member & (found >= 0)
        ok[ok] = e_rank[found[ok]] == q_rank[ok]
        out[ok] = found[ok]
        return out
    key = np.concatenate((entry_key, query_key))
    group = np.concatenate((entry_group, query_group))
    is_query = np.concatenate((np.zeros(n, np.int8), np.ones(q, np.int8)))
    order = np.lexsort((is_query, key, group))
    # entries appear in index order along ``order``: a running max is the last one seen
    last = np.maximum.accumulate(np.where(order < n, order, -1))
    at_query = order >= n
    found, which = last[at_query], order[at_query] - n
    ok = found >= 0
    ok[ok] = entry_group[found[ok]] == query_group[which[ok]]
    out[which[ok]] = found[ok]
    return out


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The indices ``lo[0]..hi[0]-1, lo[1]..hi[1]-1, ...`` concatenated (``hi >= lo``)."""
    counts = hi - lo
    first = np.cumsum(counts) - counts
    return np.repeat(lo - first, counts) + np.arange(int(counts.sum()), dtype=np.int64)


def _check_series(series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ids = np.asarray(series["job_id"], dtype=np.int64)
    offsets = np.asarray(series["offset"], dtype=np.float64)
    watts = np.asarray(series["watts"], dtype=np.float64)
    if not (len(ids) == len(offsets) == len(watts)):
        raise ValueError("the series' job_id, offset and watts differ in length")
    if len(ids) > 1:
        step_id, step_off = np.diff(ids), np.diff(offsets)
        if bool(np.any((step_id < 0) | ((step_id == 0) & ~(step_off > 0)))):
            raise ValueError("the series must be sorted by job_id, then by strictly "
                             "increasing offset (as read_power_series and "
                             "match_power_series return it)")
    return ids, offsets, watts


def _check_period(period: int | None) -> int:
    if period is None:
        return int(DEFAULT_PERIOD)
    if isinstance(period, bool) or int(period) != period or period < 1:
        raise ValueError(f"the sampling period must be a whole number of seconds >= 1, "
                         f"got {period!r}")
    return int(period)


def sampled_platform_power(result, series, period: int | None = None,
                           start: int | None = None,
                           end: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(times, watts)``: the platform power of ``result`` sampled every ``period`` s
    from the jobs' power time series (Carastan-Santos et al. 2024's post-processing of a schedule).

    ``series``: a dict ``job_id`` (int64), ``offset`` (s since the job's start),
    ``watts`` (W of the whole job), sorted by job id then strictly increasing offset
    (:func:`~dispatchlab.power.data.read_power_series` and
    :func:`~dispatchlab.power.data.match_power_series` return it so; ValueError
    otherwise). ``period``: whole seconds >= 1 (default
    :data:`~dispatchlab.power.data.DEFAULT_PERIOD` = 20).

    **Grid**: ``times`` are the multiples of ``period`` in trace time (the run's time
    origin: 0, ``period``, ``2 period``, ...; int64 s) in ``[start, end)``; the
    defaults are ``start`` = the first job start rounded down to a multiple of
    ``period`` and ``end`` = the last job end + ``period``, so the grid's last point is
    the first one at or after the last end, where nothing runs (0 W, as
    :func:`platform_power` ends). No job started: two empty arrays (with the defaults).

    **Value** at a grid point ``t`` (float64 W): the sum over the jobs *running at*
    ``t``, i.e. with ``start <= t < end`` (half-open: a job counts at its start
    instant, not at its end instant; a 0-s job never counts), of the job's sample *in
    force at* ``t``: with ``u = t - start`` (s since the job's simulated start; ours:
    wall time, not work done, so a slowed-down job's series is not stretched), the last
    sample whose offset is <= ``u`` (sample k covers ``[start + offset_k, start +
    offset_{k+1})``, the last one holds until the job's end, and the first one also
    covers ``[start, start + offset_0)`` when ``offset_0 > 0``). The sample is
    multiplied by the job's power level in force at ``t`` (1 until its first
    ``SetPower``; a change at ``t`` is in force at ``t``), as :func:`platform_power`
    does. A job whose id has no sample contributes its ``power_mean`` times its level
    (NaN counts as 0 W); :func:`series_fallback_rows` names them. Rows sharing a job id
    share its series. The value stands for the period ``[t, t + period)``: activity
    between two grid points (e.g. a job shorter than the period) is not seen, which is
    what sampling means; energy stays exact in :func:`platform_power`.

    Cost: numpy only, no sort of samples: proportional to the samples of the jobs
    running in ``[start, end)`` plus their grid points (times a log for binary
    searches), plus one pass over the job rows (which run in the range) and one over
    the series (its order is checked).
    """
    p = _check_period(period)
    ids, offsets, watts_s = _check_series(series)
    run_start, run_end = result.start, result.end
    started = run_start >= 0
    if start is None or end is None:
        if not started.any():
            return np.zeros(0, np.int64), np.zeros(0)
        if start is None:
            start = int(run_start[started].min()) // p * p
        if end is None:
            end = int(run_end[started].max()) + p
    k_lo, k_hi = -(-int(start) // p), -(-int(end) // p)  # grid indices [k_lo, k_hi)
    times = np.arange(k_lo, max(k_hi, k_lo), dtype=np.int64) * p
    if len(times) == 0:
        return times, np.zeros(0)
    lo_t, hi_t = int(times[0]), int(times[-1]) + 1
    rows = np.flatnonzero(started & (run_start < hi_t) & (run_end > lo_t))
    job_ids = np.asarray(result.jobs["job_id"], dtype=np.int64)
    # rows by job id: the pairs below come in (job id, time) order, so the searches run
    # over sorted queries (much faster than in row order)
    rows = rows[np.argsort(job_ids[rows], kind="stable")]
    # grid points of each row: [ceil(max(start, lo) / p), ceil(min(end, hi) / p))
    k0 = -(-np.maximum(run_start[rows], lo_t) // p)
    k1 = -(-np.minimum(run_end[rows], hi_t) // p)
    counts = np.maximum(k1 - k0, 0)
    pair_row = np.repeat(rows, counts)
    pair_k = _ranges(k0, k0 + counts)
    pair_t = pair_k * p
    # the samples of those rows' job ids, and each pair's sample in force
    uid = np.unique(job_ids[rows])
    s_lo = np.searchsorted(ids, uid, side="left")
    s_hi = np.searchsorted(ids, uid, side="right")
    take = _ranges(s_lo, s_hi)
    e_ids, e_watts = ids[take], watts_s[take]
    pair_id = job_ids[pair_row]
    u = pair_t - run_start[pair_row]  # whole s since the job's start
    # u is whole, so offset <= u exactly when ceil(offset) <= u (ties: the later sample)
    u_max = float(u.max()) if len(u) else 0.0
    e_key = np.ceil(np.minimum(offsets[take], u_max + 1.0)).astype(np.int64)
    found = _last_at_or_before(e_ids, e_key, pair_id, u.astype(np.int64))
    # before the first offset: the job's first sample; no sample at all: power_mean
    rank = np.searchsorted(uid, pair_id)
    first = (np.cumsum(s_hi - s_lo) - (s_hi - s_lo))[rank]
    has = (s_hi - s_lo)[rank] > 0
    found = np.where((found < 0) & has, first, found)
    mean = np.nan_to_num(np.asarray(result.jobs["power_mean"], dtype=np.float64), nan=0.0)
    value = np.where(found >= 0, e_watts[np.maximum(found, 0)] if len(e_watts) else 0.0,
                     mean[pair_row])
    seg = result.segments
    if seg is not None and len(seg["job"]):
        order = np.argsort(seg["job"], kind="stable")  # (row, time), in happened order
        seg_row = np.asarray(seg["job"], dtype=np.int64)[order]
        at = _last_at_or_before(seg_row, np.asarray(seg["time"], dtype=np.int64)[order],
                                pair_row.astype(np.int64), pair_t)
        level = np.asarray(seg["power_level"], dtype=np.float64)[order]
        value = value * np.where(at >= 0, level[np.maximum(at, 0)], 1.0)
    watts = np.bincount(pair_k - k_lo, weights=value, minlength=len(times))
    watts[np.abs(watts) < 1e-6] = 0.0
    return times, watts


def series_fallback_rows(result, series) -> np.ndarray:
    """Rows of ``result.jobs`` that started and whose job id has no sample in
    ``series`` (sorted as for :func:`sampled_platform_power`, which uses their
    ``power_mean``)."""
    series_ids = _check_series(series)[0]
    ids = np.asarray(result.jobs["job_id"], dtype=np.int64)
    at = np.minimum(np.searchsorted(series_ids, ids), max(len(series_ids) - 1, 0))
    has = series_ids[at] == ids if len(series_ids) else np.zeros(len(ids), dtype=bool)
    return np.flatnonzero((result.start >= 0) & ~has)


def _windows(cap) -> list[tuple[int, int | None, float]]:
    """The capped spans ``(t0, t1 or None, watts)`` of a cap schedule."""
    out = []
    steps = list(cap.steps)
    for k, (t, w) in enumerate(steps):
        if w is None:
            continue
        t1 = steps[k + 1][0] if k + 1 < len(steps) else None
        out.append((t, t1, w))
    return out


def _on_span(times: np.ndarray, watts: np.ndarray, t0: int,
             t1: int) -> tuple[np.ndarray, np.ndarray]:
    """The step function ``(times, watts)`` (0 before its first time, its last value
    after its last time) restricted to ``[t0, t1)``: (value, length in s) of each
    piece."""
    edges = np.concatenate([[t0], times[(times > t0) & (times < t1)], [t1]])
    k = np.searchsorted(times, edges[:-1], side="right") - 1
    vals = np.where(k >= 0, watts[np.maximum(k, 0)], 0.0)
    return vals, np.diff(edges).astype(np.float64)


class _Inherited:
    """``result`` seen through the jobs running at ``t0`` that started before it (the
    jobs a cap window opening at ``t0`` inherits): the others count as never started."""

    def __init__(self, result, t0: int) -> None:
        keep = (result.start >= 0) & (result.start < t0) & (result.end > t0)
        self.jobs = result.jobs
        self.start = np.where(keep, result.start, -1)
        self.end = np.where(keep, result.end, -1)
        self.segments = getattr(result, "segments", None)


def _span_values(result, series, period, t0: int, t1: int, times, watts):
    """(value, length) pieces of the platform power on ``[t0, t1)``: the step function
    ``(times, watts)`` or, with ``series``, the sampled power; and the same pieces'
    values of the power of the jobs inherited at ``t0`` (:class:`_Inherited`; exact at
    each piece's start: their power only changes at their own ends and level changes,
    which are breakpoints of the whole)."""
    inherited = _Inherited(result, t0)
    if series is None:
        vals, lens = _on_span(times, watts, t0, t1)
        starts = t0 + np.concatenate([[0.0], np.cumsum(lens)[:-1]])
        it, iw = platform_power(inherited)
        if len(it) == 0:
            return vals, lens, np.zeros(len(vals))
        k = np.searchsorted(it, starts, side="right") - 1
        return vals, lens, np.where(k >= 0, iw[np.maximum(k, 0)], 0.0)
    start = t0 // period * period
    grid, sampled = sampled_platform_power(result, series, period, start=start, end=t1)
    vals, lens = _on_span(grid, sampled, t0, t1)
    igrid, isampled = sampled_platform_power(inherited, series, period, start=start, end=t1)
    ivals, _ = _on_span(igrid, isampled, t0, t1)
    return vals, lens, ivals


def power_facts(result) -> dict[str, Any]:
    """The power metrics of ``result`` (see the module docstring); empty without power
    columns. With ``result.power_series`` (not None), the ``cap_*`` metrics come from
    :func:`sampled_platform_power` every ``result.power_period`` s (None: the default
    period), computed on the cap windows only."""
    jobs = result.jobs
    if not has_power(jobs):
        return {}
    times, watts = platform_power(result)
    out: dict[str, Any] = {"power_unknown_jobs": int(np.isnan(jobs["power_mean"]).sum())}
    series = getattr(result, "power_series", None)
    period = None
    if series is not None:
        period = _check_period(getattr(result, "power_period", None))
        out.update(power_series_period=period,
                   power_series_fallback_jobs=len(series_fallback_rows(result, series)))
    if len(times) < 2:
        out.update(energy_j=0.0, mean_power_w=0.0)
        return out
    dt = np.diff(times).astype(np.float64)
    energy = float((watts[:-1] * dt).sum())
    out.update(energy_j=energy, mean_power_w=energy / float(times[-1] - times[0]))
    cap = getattr(result, "cap", None)
    if cap is None:
        return out
    spans = _windows(cap)
    if not spans:
        return out
    end_all = int(times[-1])
    inside = above = excess_max = underuse = energy_in = cap_time = 0.0
    above_own = excess_own = 0.0
    for t0, t1, w in spans:
        t1 = end_all if t1 is None else min(t1, end_all)
        if t1 <= t0:
            continue
        vals, lens, inherited = _span_values(result, series, period, t0, t1, times, watts)
        inside += lens.sum()
        energy_in += (vals * lens).sum()
        cap_time += w * lens.sum()
        over = vals > w
        above += lens[over].sum()
        if over.any():
            excess_max = max(excess_max, float(((vals[over] - w) / w).max()))
        own = over & (inherited <= w)
        above_own += lens[own].sum()
        if own.any():
            excess_own = max(excess_own, float(((vals[own] - w) / w).max()))
        underuse += (np.maximum(w - vals, 0.0) / w * lens).sum()
    if inside > 0:
        starts = result.start[result.start >= 0]
        in_window = np.zeros(len(starts), dtype=bool)
        for t0, t1, _ in spans:
            in_window |= (starts >= t0) & (starts < (np.inf if t1 is None else t1))
        out.update(cap_mean_share=float(energy_in / cap_time),
                   cap_time_above_share=float(above / inside),
                   cap_max_excess=excess_max,
                   cap_time_above_own_share=float(above_own / inside),
                   cap_max_excess_own=excess_own,
                   cap_mean_underuse=float(underuse / inside),
                   window_start_share=float(in_window.mean()) if len(starts) else None)
    return out
