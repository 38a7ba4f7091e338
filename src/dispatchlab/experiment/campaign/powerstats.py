"""Power-cap results over stored runs: Carastan-Santos et al. 2024's way of reading a campaign.

:func:`power_rows` groups the runs of campaigns with power (``runs.cap`` set) by
campaign, trace, platform, dispatcher, predictor, power predictor and cap, and gives
per group the mean over its runs (workloads) of

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
  (Carastan-Santos et al. 2024 section 6: "computed by (workload, powercap) group, then averaged");
  ``baselined`` counts them. Runs without a baseline leave those columns None.

Rows come in the order their groups first appear among the runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

#: The cap-window metrics averaged per group.
WINDOW_METRICS: tuple[str, ...] = ("cap_mean_share", "cap_time_above_share",
                                   "cap_time_above_own_share", "cap_max_excess",
                                   "cap_max_excess_own", "cap_mean_underuse",
                                   "window_start_share")
#: Metrics compared with the baseline run (relative change).
RELATIVE_METRICS: tuple[str, ...] = ("mean_turnaround", "max_turnaround", "mean_wait")

__all__ = ["RELATIVE_METRICS", "WINDOW_METRICS", "power_rows"]


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
