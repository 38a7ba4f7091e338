"""Execute one campaign run in a worker process and return its outcome (no database).

:func:`execute_run` takes a run spec (from :func:`dispatchlab.experiment.campaign.config.
load_campaign`) and returns a picklable outcome dict: ``status`` (``done`` or
``failed``), ``error`` (text, failed runs), ``summary`` (the metrics summary),
``jobs`` and ``series`` (pyarrow Tables with the store's columns, ``run_key``
first; None when the campaign does not store them), ``wall_seconds``,
``simulate_seconds``, ``worker`` (``host:pid``), ``peak_rss_mb`` (the worker
process's peak RSS so far), ``finished_at`` (UTC). It never
raises for a failing run: the error is part of the outcome, so a campaign goes on.

A run is assembled by :func:`dispatchlab.run.build.build` from its
:func:`run_config` (the components, hot start, overrun, measured jobs, tau,
``max_wall``), given the run's job table (:func:`load_run_jobs`), its platform
(:func:`build_platform`), its power inputs (:func:`_power_inputs`: synthetic power,
cap, power predictor, with history jobs) and, with ``cap_base``, the rule that reads
the cap's shares as shares of an uncapped reference run's peak
(:func:`_scaled_to_reference`).

Loaded traces are cached per worker process
(:mod:`~dispatchlab.experiment.campaign.traces`: the last few tables, a file as read and
as cleaned), so the many runs of a campaign on one trace read and clean it once per
worker; each run then selects its part of the cleaned table (its
``jobs``/``window``/``fraction``/``sample_jobs`` selection, or its slice's rows
``[first, stop)``).

Before simulating, a run checks that this process executes the code its key was made
for: :func:`dispatchlab.experiment.provenance.run_code_hash` here must equal the spec's
``code_hash`` (computed by the coordinator), else the run fails with an error saying
so (a Dask worker with another dispatchlab, or an own class edited while the campaign
ran), rather than storing results under a key they do not belong to.
"""

from __future__ import annotations

import datetime as dt
import os
import resource
import socket
import time
import traceback
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.experiment.campaign.power_table import build_cap, run_power
from dispatchlab.experiment.campaign.store import with_run_key
from dispatchlab.experiment.campaign.traces import (  # cleaned_length: re-exported
    cached,
    cleaned_length,  # noqa: F401
    cleaned_table,
    read_table,
)
from dispatchlab.experiment.campaign.validate import validate_run
from dispatchlab.experiment.provenance import run_code_hash
from dispatchlab.metrics import job_class_labels, job_columns
from dispatchlab.metrics.groups import MISSING_GROUP, group_labels
from dispatchlab.metrics.summary import measured_series, primary_resource
from dispatchlab.platform.choose import platform_for
from dispatchlab.power.accounting import platform_power
from dispatchlab.power.cap import PowerCap
from dispatchlab.power.data import match_power_series, with_power
from dispatchlab.power.eurora_synth import eurora_instance
from dispatchlab.power.model import POWER_COLUMNS, has_power
from dispatchlab.predict.power.predictors import WithPriorHistory, make_power_predictor
from dispatchlab.run.build import PowerInputs, Prepared, build
from dispatchlab.run.config import Component, RunConfig
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim import Simulation
from dispatchlab.workload.clean import clean, select, units_as_nodes
from dispatchlab.workload.generate import fit_model, scale_to_load
from dispatchlab.workload.lublin import lublin_model


def _selection(trace: dict[str, Any], n_jobs: int, seed: int) -> dict[str, Any]:
    """The ``select`` options of a trace file entry over ``n_jobs`` cleaned jobs."""
    options: dict[str, Any] = {}
    if "slice" in trace:
        options["jobs"] = (trace["slice"]["first"], trace["slice"]["stop"])
    if "window" in trace:
        options["window"] = tuple(trace["window"])
    if "jobs" in trace:
        options["jobs"] = tuple(trace["jobs"])
    if "fraction" in trace:
        side, _, f = trace["fraction"].partition(":")
        options["fraction"] = (side, float(f))
    if "sample_jobs" in trace:
        k = int(trace["sample_jobs"])
        if k < n_jobs:
            i0 = int(np.random.default_rng(seed).integers(0, n_jobs - k + 1))
            options["jobs"] = (i0, i0 + k)
    return options


def load_jobs(trace: dict[str, Any], seed: int):
    """The job table of a run's trace entry (real file with its options, or generated
    with the run's seed). Real files are read once per worker (cached)."""
    return load_run_jobs(trace, seed)[0]


def load_run_jobs(trace: dict[str, Any], seed: int, past: int = 0):
    """``(jobs, history, prior)``: the run's job table (:func:`load_jobs`) and, for a
    slice of a trace file with ``past > 0``, the same rows preceded by up to ``past``
    earlier rows of the cleaned trace (``history``, ``prior`` = how many; one time base:
    the run's first submission at 0, the earlier ones before it, all scaled by the run's
    offered-load factor), else ``(jobs, None, 0)``. The run's table does not depend on
    ``past``."""

    generate = trace.get("generate")
    if generate == "eurora":  # Borghesi et al. 2018's synthetic instances (ours: see eurora_synth)

        table = eurora_instance(trace["jobs"], trace["arrival_window"],
                                arrival=trace.get("arrival", "uniform"), seed=seed,
                                burst_size=trace.get("burst_size"),
                                bursts=trace.get("bursts"))
        return clean(table, copy=False).compact(), None, 0
    if generate == "lublin":

        table = lublin_model(trace["machine_size"]).sample(trace["jobs"], seed)
        if trace.get("load") is not None:

            table, _ = scale_to_load(table, trace["load"], trace["machine_size"])
        return clean(table, copy=False).compact(), None, 0
    raw = read_table(trace)
    if generate == "fitted":

        key = ("fit", trace["path"], bool(trace.get("lenient", False)),
               trace.get("extra_fields", "error"))
        model = cached(key, lambda: fit_model(clean(raw, copy=True).compact()))
        return clean(model.sample(trace["jobs"], seed), copy=False).compact(), None, 0
    # default cleaning and the drop filters once per worker; the selection per run
    base = cleaned_table(trace, raw)
    options = _selection(trace, len(base), seed)
    prior = 0
    if past > 0 and "slice" in trace:
        first, stop = options["jobs"]
        prior = min(int(past), first)
        options["jobs"] = (first - prior, stop)
    table = select(base, copy=True, **options)
    if len(table) == 0:
        raise InputError(f"no jobs left after cleaning (dropped: {table.info.dropped})",
                         file=trace["path"])
    if trace.get("procs_per_node", 1) != 1:

        table = units_as_nodes(table, int(trace["procs_per_node"]))
    if prior:  # the run's first submission at 0 (as without a past), the past before it
        table.columns["submit"] = table["submit"] - int(table["submit"][prior])
    if trace.get("load") is not None:  # this run's arrivals at the offered load

        if prior:  # the factor of the run's own rows, applied to all (anchored at 0)
            run_rows = table.take(np.arange(prior, len(table)))
            _, factor = scale_to_load(run_rows, trace["load"], trace["machine_size"])
            table.columns["submit"] = np.floor(table["submit"] * factor).astype(np.int64)
        else:
            table, _ = scale_to_load(table, trace["load"], trace["machine_size"])
    if "slice" in trace and trace.get("slices", {}).get("queued"):
        lead = prior + trace["slice"]["start"] - trace["slice"]["first"]
        table = table.take(np.arange(len(table)))  # a copy: the cache keeps its rows
        table.columns["submit"][prior:lead] = table["submit"][lead]
    if not prior:
        return table.compact(), None, 0
    history = table.compact()
    return history.take(np.arange(prior, len(history))).compact(), history, prior


def build_platform(spec: dict[str, Any], jobs):
    """The platform of a run (no entry: pooled cores from the trace header)."""

    return platform_for(spec, jobs,
                        advice="give the platform (cores, nodes or file) in the campaign")


def jobs_table(result, tau: float, measure=None):
    """The ``jobs`` rows of a result (store column order, without ``run_key``): the
    per-job output table of :meth:`SimulationResult.to_arrow` (the one place that
    builds it, allocation strings, slowdowns and the ``measured`` / ``hot_start`` flags
    of ``measure`` included) under the store's column names, plus the job class and the
    job's groups (:func:`group_column`)."""
    import pyarrow as pa


    j = result.jobs
    base = result.to_arrow(tau=tau, measure=measure)
    cols = job_columns(j["submit"], result.start, result.end, result.status, tau=tau)

    return pa.table({
        "job_id": base["job_id"],
        "submit_time": base["submit"],
        "start_time": base["start"],
        "end_time": base["end"],
        "wait": cols["wait"],
        "run_time": cols["run"],
        "trace_run": base["trace_run"],
        "requested_time": base["requested_time"],
        "procs": base["procs"],
        "user_id": base["user"],
        "status": base["status"].cast(pa.string()),
        "estimate": base["estimate"],
        "slowdown": base["slowdown"],
        "bsld": base["bounded_slowdown"],
        "job_class": pa.array(job_class_labels(cols["job_class"]), type=pa.string()),
        "allocation": base["allocation"],
        "measured": base["measured"],
        "hot_start": base["hot_start"],
        **{key: group_column(j, key) for key in ("partition", "user", "account", "qos")},
    })


def group_column(table, key: str):
    """The ``jobs`` column of group ``key`` (``partition``, ``user``, ``account``,
    ``qos``): each job's label (:func:`dispatchlab.metrics.groups.group_labels`) as
    dictionary-encoded text, null for a job without the value and for every job of a
    trace without the column (account, QOS of an SWF trace)."""
    import pyarrow as pa

    if key in ("account", "qos") and key not in table.columns:
        return pa.nulls(len(table), pa.string())
    labels = group_labels(table, key)
    names = list(labels.names)
    codes = labels.codes.astype(np.int32)
    missing = codes == names.index(MISSING_GROUP) if MISSING_GROUP in names else None
    return pa.DictionaryArray.from_arrays(pa.array(codes, mask=missing),
                                          pa.array(names, type=pa.string()))


def series_table(result, measure) -> tuple[Any, int | None, int | None]:
    """``series`` rows (queue length, utilization of the primary resource; with job
    power also ``platform_power``, W, the running jobs' power at their levels, of all
    jobs, and ``power_cap``, W, NaN where uncapped, when the run has a cap) and the
    horizon ``[start, end)`` of the measured jobs."""
    import pyarrow as pa


    j = result.jobs
    cap = result.platform.total_capacity()
    s = measured_series(j["submit"], result.start, result.end, result.status, j["units"],
                        j.resources, cap, measure=result.measure_of_rows(measure),
                        exclude=result.hot_start_rows())
    util = s.utilization(primary_resource(cap))
    parts = [("queue_length", s.queue.times, s.queue.values),
             ("utilization", util.times, util.values)]
    if has_power(j):

        parts.append(("platform_power", *platform_power(result)))
        if result.cap is not None:
            steps = result.cap.steps
            parts.append(("power_cap", np.array([t for t, _ in steps], dtype=np.int64),
                          np.array([np.nan if w is None else w for _, w in steps])))
    table = pa.table({
        "name": pa.array([name for name, t, _ in parts for _ in range(len(t))],
                         type=pa.string()),
        "time": np.concatenate([t for _, t, _ in parts]).astype(np.int64),
        "value": np.concatenate([np.asarray(v, dtype=np.float64) for _, _, v in parts]),
    })
    return table, s.t0, s.t1


def _check_code(spec: dict[str, Any]) -> None:
    """Raise :class:`InputError` when this process would run other code than the
    spec's ``code_hash`` names (no check for specs without one)."""
    expected = spec.get("code_hash")
    if expected is None:
        return

    pp = spec.get("power_predictor")
    found = run_code_hash(spec["dispatcher"]["name"], spec["predictor"]["name"],
                          None if pp is None else pp["name"])
    if found != expected:
        raise InputError(f"the code here (code hash {found[:12]}) differs from the code "
                         f"the campaign was expanded with ({expected[:12]}): dispatchlab, "
                         "numpy/ortools/lightgbm/scikit-learn or an own class differ on "
                         "this worker, or changed while the campaign ran",
                         field="code_hash")


def _power_inputs(spec: dict[str, Any], jobs, platform, history=None,
                  prior: int = 0) -> PowerInputs:
    """A run's job power, series, cap and power predictor (:mod:`dispatchlab.experiment.
    campaign.power_table`), the cap and the power predictor only when the run has them.
    With a ``history`` table (:func:`load_run_jobs`), the power is drawn for it (past
    and run together: a user's signatures carry over) and the power predictor has seen
    the past jobs that ended before the run
    (:class:`~dispatchlab.predict.power.predictors.WithPriorHistory`)."""
    if spec.get("power") is None:
        return PowerInputs(jobs)

    if history is not None and prior:

        history, series = run_power(spec["power"], history, platform)
        rows = np.arange(prior, len(history))
        jobs = with_power(jobs, {c: history[c][rows] for c in POWER_COLUMNS})
    else:
        jobs, series = run_power(spec["power"], jobs, platform)
    sl = spec["trace"].get("slice")
    first = None if sl is None else sl["start"] - sl["first"]
    cap = spec.get("cap")
    built_cap = (build_cap(cap["spec"], platform, jobs, first)
                 if cap is not None and cap["spec"] is not None else None)
    pp = spec.get("power_predictor")
    predictor = None
    if pp is not None:
        predictor = make_power_predictor(pp["name"], **pp["params"])
        if history is not None and prior:
            wait = np.maximum(np.asarray(history["wait"][:prior], dtype=np.int64), 0)
            ends = history["submit"][:prior] + wait + np.asarray(history["run"][:prior])
            predictor = WithPriorHistory(predictor, history, prior, ends)
    return PowerInputs(jobs, series, built_cap, predictor)


#: reference peaks (W) per cap-base key, see :func:`reference_peak`
_PEAKS: OrderedDict[str, float] = OrderedDict()
#: how many reference peaks a worker keeps (a campaign's runs come dispatcher by
#: dispatcher, cap by cap, seed by seed: one key per workload x dispatcher is live)
PEAK_CACHE_SIZE = 256


def reference_key(spec: dict[str, Any]) -> str:
    """The cache key of a run's reference peak: its configuration without the cap and
    the repetition and, with ``cap_base = "bf-peak"``, without the dispatcher and its
    duration model (one ``bf`` reference per workload); with ``"own-peak"`` the
    dispatcher and duration model are part of it (one reference per workload x
    dispatcher)."""
    import json

    drop = {"cap", "repetition"}
    if (spec.get("power") or {}).get("cap_base") != "own-peak":
        drop |= {"dispatcher", "duration_model"}
    config = {k: v for k, v in spec["config"].items() if k not in drop}
    return json.dumps(config, sort_keys=True, default=str)


def reference_peak(spec: dict[str, Any], prepared: Prepared) -> float:
    """The peak platform power (W) of a run's uncapped reference (``cap_base``, see
    :mod:`dispatchlab.experiment.campaign.power_table`), cached per :func:`reference_key`. The
    reference runs the same workload (jobs, platform, predictor, power predictor, overrun, hot
    start) **without a cap**: with ``"bf-peak"`` under ``bf`` (PA-HPC-SIM's power-aware
    EASY), with ``"own-peak"`` under the run's own dispatcher (its parameters, the
    platform's allocator, its duration model). Without a cap every method is its
    uncapped self: ``bf``, ``dvfs``, ``ls`` and ``dec`` check no power (``dvfs``
    lowers no level), the RAPL methods admit with BF checking no power and throttle
    nothing (every job at full power, so the duration model never applies), and
    ``dec-rapl``'s components likewise. Hot-start jobs run in the reference but are left
    out of the peak (they are not the workload's). ``prepared``: the run's inputs as
    :func:`~dispatchlab.run.build.build` made them (jobs, platform, pinned rows, its
    components: cloned here; the dispatcher and duration model used with
    ``"own-peak"`` only)."""

    key = reference_key(spec)
    if key not in _PEAKS:

        jobs, pinned = prepared.jobs, prepared.pinned
        extra: dict[str, Any] = {}
        if spec["power"].get("cap_base") == "own-peak":
            reference = prepared.dispatcher.clone()
            if prepared.duration_model is not None:
                extra["duration_model"] = prepared.duration_model.clone()
        else:
            reference = make_dispatcher("bf")
        pp = prepared.power_predictor
        ref = Simulation(prepared.platform, jobs, reference, prepared.predictor.clone(),
                         overrun=spec["overrun"], pinned=pinned,
                         power_predictor=None if pp is None else pp.clone(), **extra).run()
        if pinned:  # the hot start's dummy jobs are not part of the budget base
            keep = np.ones(len(jobs), dtype=bool)
            keep[list(pinned)] = False
            ref.start = np.where(keep, ref.start, -1)
        _, watts = platform_power(ref)
        _PEAKS[key] = float(watts.max()) if len(watts) else 0.0
        while len(_PEAKS) > PEAK_CACHE_SIZE:
            _PEAKS.popitem(last=False)
    _PEAKS.move_to_end(key)
    return _PEAKS[key]


def _scaled_to_reference(spec: dict[str, Any], prepared: Prepared) -> tuple[Any, float]:
    """``(cap, peak)``: the run's cap with ``cap_base = "bf-peak"`` or ``"own-peak"``,
    each step's value read as a share of the reference peak (:func:`reference_peak`,
    W, also returned). The campaign stored the cap as a fraction of the platform's
    ``max_dynamic_power``; it is divided back out here. The reference is computed inside
    the worker and cached, so runs stay independent of each other."""

    peak = reference_peak(spec, prepared)
    if peak <= 0:
        base_name = spec["power"]["cap_base"]
        who = "bf" if base_name == "bf-peak" else spec["dispatcher"]["name"]
        raise InputError(f"the uncapped reference {who} run draws no power: cap_base = "
                         f"{base_name!r} needs job power", field="cap_base")
    base = prepared.platform.dynamic_power_base
    return PowerCap.from_steps([(t, None if w is None else w / base * peak)
                                for t, w in prepared.cap.steps]), peak


def _component(entry: dict[str, Any] | None, extra: dict[str, Any] | None = None
               ) -> Component | None:
    """A run spec's component entry (``name``, ``params``) as a :class:`Component`."""
    if entry is None:
        return None
    return Component(entry["name"], {**entry["params"], **(extra or {})})


def run_config(spec: dict[str, Any]) -> RunConfig:
    """The :class:`~dispatchlab.run.config.RunConfig` of a run spec
    (:func:`~dispatchlab.experiment.campaign.config.load_campaign`'s layout): its
    components (the platform entry's ``allocator`` a dispatcher parameter), hot start,
    the trace entry's partition options, overrun, measured jobs, tau, wall-clock
    budget and engine. The trace, the platform and the
    power inputs are not named by files a configuration can hold (generated and sliced
    workloads, history jobs, synthetic power tables, cap specs): :func:`execute_run`
    gives them to :func:`~dispatchlab.run.build.build` built. The spec, its keys and
    its ``run_key`` are unchanged."""
    allocator = ({"allocator": spec["platform"]["allocator"]}
                 if "allocator" in spec["platform"] else None)
    dispatcher = _component(spec["dispatcher"], allocator)
    predictor = _component(spec["predictor"])
    assert dispatcher is not None and predictor is not None
    return RunConfig(dispatcher=dispatcher, predictor=predictor,
                     power_predictor=_component(spec.get("power_predictor")),
                     duration_model=_component(spec.get("duration_model")),
                     hot_start=spec["trace"].get("hot_start"), overrun=spec["overrun"],
                     measure=spec["measure"], tau=spec["tau"], max_wall=spec.get("max_wall"),
                     engine=spec.get("engine", "auto"),
                     partition_map=spec["trace"].get("partition_map"),
                     ignore_partitions=bool(spec["trace"].get("ignore_partitions", False)))


#: platform specs :func:`~dispatchlab.experiment.campaign.validate.validate_run` has built in this
#: worker process (each is built once, not once per run)
_VALIDATED: dict[str, Any] = {}


def execute_run(spec: dict[str, Any]) -> dict[str, Any]:
    """Run one simulation from its spec; see the module docstring for the outcome."""
    t0 = time.perf_counter()
    out: dict[str, Any] = {"spec": spec, "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        _check_code(spec)
        validate_run(spec, _VALIDATED)  # as load_campaign did; build() checks the rest
        config = run_config(spec)
        past = int((spec.get("power") or {}).get("history_jobs", 0))
        jobs, history, prior = load_run_jobs(spec["trace"], spec["seed"], past)
        cap_base_w: list[float] = []

        def scaled(prepared: Prepared):
            cap, peak = _scaled_to_reference(spec, prepared)
            cap_base_w.append(peak)
            return cap

        scale = (spec.get("power") or {}).get("cap_base") in ("bf-peak", "own-peak")
        made = build(config, jobs=jobs, platform=build_platform(spec["platform"], jobs),
                     power=lambda j, p: _power_inputs(spec, j, p, history, prior),
                     cap_rule=scaled if scale else None)
        sim, jobs, platform = made.simulation, made.jobs, made.platform
        result = sim.run()
        if made.series is not None:  # cap-window metrics on the sampled platform power

            result.power_series, _ = match_power_series(jobs, made.series, "synthetic power")
            result.power_period = int(spec["power"].get("period", 20))
        node_level = not sim.counting
        del sim
        measure = config.parsed_measure()
        summary = run_summary(result, tau=spec["tau"], measure=measure)
        if cap_base_w:  # the watts the run's cap shares are shares of
            summary["cap_base_w"] = cap_base_w[0]
        out.update(status="done", summary=summary, simulate_seconds=result.wall_seconds,
                   cores=int(platform.total_capacity().get("core", 0)),
                   node_level=node_level,
                   nodes=len(platform.capacity_matrix()) if node_level else None)
        key = spec["run_key"]
        out["jobs"] = (with_run_key(jobs_table(result, spec["tau"], measure), key)
                       if spec["store_jobs"] else None)
        series, lo, hi = series_table(result, measure)
        out["series"] = with_run_key(series, key) if spec["store_series"] else None
        out["series_start"], out["series_end"] = lo, hi
    except InputError as exc:
        out.update(status="failed", error=str(exc))
    except Exception as exc:  # a failing run is recorded; the campaign goes on
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
        out.update(status="failed", error=f"{type(exc).__name__}: {exc}{where}")
    out["wall_seconds"] = time.perf_counter() - t0
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["finished_at"] = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    return out
