"""Compare dispatchers (x predictors) on one trace, optionally over slices, with
statistics over runs (``dispatchlab compare``).

Without slices every configuration runs once on the whole (selected) job table and
the comparison is one number per metric. With ``slices = (K, N)`` the cleaned table is
cut into K disjoint, evenly spaced blocks of N measured jobs, each preceded by a
simulated lead-in excluded from the metrics (:func:`dispatchlab.workload.slices.
plan_slices`); every configuration runs on every slice, a slice is one workload, and
:func:`dispatchlab.experiment.statistics.compare_configurations` gives each configuration's
mean over slices with a 95 % interval (Student's t below 10 slices, bootstrap from 10:
:func:`dispatchlab.experiment.statistics.interval_method`) and its paired difference to the baseline
dispatcher with the same predictor on the same slices.

Runs execute in worker processes (``workers``, default: the number of cores; a pool
of spawned interpreters) and the results do not depend on the number of workers: each
run is a deterministic simulation of its own table.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dispatchlab.core.components import ComponentSpec
from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.experiment.statistics import compare_configurations
from dispatchlab.metrics import check_tau
from dispatchlab.metrics.keys import BY_KEY, COMPARE_TABLE
from dispatchlab.run.build import build, choose_engine
from dispatchlab.run.config import Component, RunConfig
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim.engine import check_combination, is_node_level
from dispatchlab.sim.native import native_reason
from dispatchlab.workload.clean import select
from dispatchlab.workload.slices import measure_for, plan_slices


@dataclass(frozen=True)
class ComparisonRun:
    """One simulation of a comparison: the configuration (``dispatcher`` and
    ``predictor`` spec texts), its ``slice`` (None: the whole table) and the metrics
    summary of the run (``simulate_seconds`` included)."""

    dispatcher: str
    predictor: str
    slice: int | None
    summary: dict[str, Any]


@dataclass
class Comparison:
    """All runs of a comparison and, with slices, the statistics over them."""

    runs: list[ComparisonRun]
    dispatchers: list[str]
    predictors: list[str]
    baseline: str
    slices: list[Any] = field(default_factory=list)  # the Slice plan (empty: none)
    statistics: list[dict[str, Any]] = field(default_factory=list)

    def label(self, dispatcher: str, predictor: str) -> str:
        """A configuration's label: the dispatcher spec, plus ``/ predictor`` when
        several predictors are compared."""
        return dispatcher if len(self.predictors) == 1 else f"{dispatcher} / {predictor}"


def _simulate(task: tuple) -> dict[str, Any]:
    """Worker: run one simulation (its job table, platform and
    :class:`~dispatchlab.run.config.RunConfig`, assembled by
    :func:`dispatchlab.run.build.build`) and return its summary (module-level:
    picklable)."""
    table, platform, config = task
    result = build(config, jobs=table, platform=platform).simulation.run()
    summary = run_summary(result, tau=config.tau, measure=config.parsed_measure())
    summary["simulate_seconds"] = result.wall_seconds
    return summary


def _execute(tasks: list[tuple], workers: int) -> list[dict[str, Any]]:
    if workers <= 1 or len(tasks) <= 1:
        return [_simulate(t) for t in tasks]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(workers, len(tasks)),
                             mp_context=mp.get_context("spawn")) as pool:
        return list(pool.map(_simulate, tasks, chunksize=1))


def run_comparison(jobs, platform, dispatchers: Sequence[ComponentSpec],
                   predictors: Sequence[ComponentSpec], *, baseline: str | None = None,
                   slices: tuple[int, int] | None = None, lead_in: int | None = None,
                   tau: float = 10.0, overrun: str = "run", measure: str = "all",
                   workers: int | None = None, seed: int = 0,
                   engine: str = "auto") -> Comparison:
    """Simulate every dispatcher x predictor on ``jobs`` (a cleaned
    :class:`~dispatchlab.workload.jobs.JobTable`) on ``platform``.

    ``baseline``: a dispatcher spec text among ``dispatchers`` (default: the first).
    ``slices = (count, jobs_per_slice)`` with ``lead_in`` lead-in jobs per slice
    (default :func:`~dispatchlab.workload.slices.default_lead_in`); ``measure``
    applies only without slices. ``seed`` seeds the bootstrap. Runs are simulated
    without a cap or duration model: a dispatcher that slows running jobs, or one that
    cannot place jobs on nodes on a node-level run, is refused before any run
    (:func:`~dispatchlab.sim.engine.check_combination`). ``engine``: ``auto``,
    ``native`` or ``python`` (:class:`~dispatchlab.run.config.RunConfig`); with
    ``native`` a run the native core cannot simulate is refused before any run; each
    run's summary says which engine ran (``engine``)."""

    check_tau(tau)
    RunConfig(engine=engine).validate()
    if not dispatchers or not predictors:
        raise InputError("a comparison needs at least one dispatcher and one predictor")
    d_texts = [d.text for d in dispatchers]
    p_texts = [p.text for p in predictors]
    base = d_texts[0] if baseline is None else baseline
    if base not in d_texts:
        raise InputError(f"the baseline {base!r} is not among the dispatchers compared"
                         f"{did_you_mean(base, d_texts)} ({', '.join(d_texts)})",
                         field="--baseline")
    n = (os.cpu_count() or 1) if workers is None else workers
    if n < 1:
        raise InputError(f"must be >= 1, got {n}", field="--workers")

    node_level = is_node_level(platform, jobs)
    for d in dispatchers:  # refused before any run: a comparison takes no duration model
        check_combination(d.build(), duration_model=None, node_level=node_level,
                          model_field=None, platform_field="--platform")
        if engine == "native":  # refused before any run, naming the first not native
            for p in predictors:
                choose_engine(engine, native_reason(platform, jobs, d.build(), p.build(),
                                                    overrun=overrun))

    plan = []
    if slices is None:
        parts: list[tuple[int | None, Any, str]] = [(None, jobs, measure)]
    else:
        if measure != "all":
            raise InputError("--measure does not combine with slices (each slice measures "
                             "its own block)", field="--measure")
        plan = plan_slices(len(jobs), slices[0], slices[1], lead_in)
        parts = [(s.index, select(jobs, copy=True, jobs=(s.first, s.stop)), measure_for(s))
                 for s in plan]
    tasks, keys = [], []
    for index, table, measure_text in parts:
        for d in dispatchers:
            for p in predictors:
                tasks.append((table, platform, RunConfig(
                    dispatcher=Component(d.name, dict(d.params)),
                    predictor=Component(p.name, dict(p.params)),
                    overrun=overrun, measure=measure_text, tau=tau, engine=engine)))
                keys.append((d.text, p.text, index))
    summaries = _execute(tasks, n)
    runs = [ComparisonRun(d, p, i, s) for (d, p, i), s in zip(keys, summaries, strict=True)]
    comp = Comparison(runs, d_texts, p_texts, base, plan)
    if plan:
        for p in p_texts:
            rows = [{"config": comp.label(r.dispatcher, p), "workload": r.slice,
                     **{k: BY_KEY[k].value(r.summary) for k in COMPARE_TABLE}}
                    for r in runs if r.predictor == p]
            comp.statistics += compare_configurations(
                rows, metrics=COMPARE_TABLE, baseline=comp.label(base, p), seed=seed)
    return comp
