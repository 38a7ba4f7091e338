"""Power accounting of a finished run: the platform power over time, energy, and the
cap-window metrics (seed 003 section 6).

**Platform power** (:func:`platform_power`): the sum over running jobs of each job's
``power_mean`` (its measured whole-job power, W; see :mod:`dispatchlab.power.model`)
times its power level (1 unless a ``SetPower`` changed it; the changes are the run's
``segments``). It changes only at starts, ends and level changes, so it is a step
function, built after the run from the schedule (a run without power columns costs
nothing). Idle nodes are not in it (the capped quantity is the jobs' power). Jobs with
unknown power (NaN) count as 0 W and are counted (``power_unknown_jobs``).

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
opened is included (they keep running, as the seed's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dispatchlab.power.model import has_power


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


def power_facts(result) -> dict[str, Any]:
    """The power metrics of ``result`` (see the module docstring); empty without power
    columns."""
    jobs = result.jobs
    if not has_power(jobs):
        return {}
    times, watts = platform_power(result)
    out: dict[str, Any] = {"power_unknown_jobs": int(np.isnan(jobs["power_mean"]).sum())}
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
    for t0, t1, w in spans:
        t1 = end_all if t1 is None else min(t1, end_all)
        if t1 <= t0:
            continue
        # the step function restricted to [t0, t1)
        edges = np.concatenate([[t0], times[(times > t0) & (times < t1)], [t1]])
        k = np.searchsorted(times, edges[:-1], side="right") - 1
        vals = np.where(k >= 0, watts[np.maximum(k, 0)], 0.0)
        lens = np.diff(edges).astype(np.float64)
        inside += lens.sum()
        energy_in += (vals * lens).sum()
        cap_time += w * lens.sum()
        over = vals > w
        above += lens[over].sum()
        if over.any():
            excess_max = max(excess_max, float(((vals[over] - w) / w).max()))
        underuse += (np.maximum(w - vals, 0.0) / w * lens).sum()
    if inside > 0:
        starts = result.start[result.start >= 0]
        in_window = np.zeros(len(starts), dtype=bool)
        for t0, t1, _ in spans:
            in_window |= (starts >= t0) & (starts < (np.inf if t1 is None else t1))
        out.update(cap_mean_share=float(energy_in / cap_time),
                   cap_time_above_share=float(above / inside),
                   cap_max_excess=excess_max,
                   cap_mean_underuse=float(underuse / inside),
                   window_start_share=float(in_window.mean()) if len(starts) else None)
    return out
