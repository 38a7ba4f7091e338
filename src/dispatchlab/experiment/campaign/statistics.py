"""Statistics over the stored runs of a results database (``dispatchlab results
summary`` and the table at the top of the report).

Runs are grouped without silent pooling (:func:`dispatchlab.experiment.campaign.groups.
group_runs`: by campaign, trace, platform and the full canonical configuration; only
seeds, repetitions and slices are pooled). Within a section (one trace and platform),
each group is one configuration; its runs are its workloads (the ``workload`` column:
seed and slice). :func:`dispatchlab.experiment.statistics.compare_configurations` gives each
configuration's mean over runs with a 95 % interval (Student's t below 10 runs,
percentile bootstrap from 10) and, when a baseline
dispatcher is named, the paired difference to the baseline dispatcher with the same
predictor on the same workloads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dispatchlab.core.errors import InputError


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
    from dispatchlab.experiment.campaign.groups import group_runs
    from dispatchlab.experiment.campaign.store import is_unfinished
    from dispatchlab.experiment.statistics import compare_configurations
    from dispatchlab.metrics.keys import COMPARE_TABLE

    keys = list(COMPARE_TABLE if metrics is None else metrics)
    done = [r for r in runs if r.get("status") == "done"
            and (include_unfinished or not is_unfinished(r))]
    groups = group_runs(done)
    sections: dict[tuple[str, str], Section] = {}
    for g in groups:
        sections.setdefault((g.trace, g.platform), Section(g.trace, g.platform)).groups.append(g)
    if baseline is not None and not any(g.dispatcher == baseline for g in groups):
        from dispatchlab.core.suggest import did_you_mean

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
