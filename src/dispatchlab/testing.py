"""Conformance checks you can run on your own dispatcher or predictor class.

Like scikit-learn's ``check_estimator``: each function raises ``AssertionError`` with an
explanation at the first broken contract, and returns a small report dict otherwise::

    from dispatchlab.testing import check_dispatcher, check_predictor
    check_dispatcher(MyDispatcher)      # a class (built with its defaults) or an instance
    check_predictor(MyPredictor())

What is checked:

* the parameter contract (:mod:`dispatchlab.core.params`): ``get_params`` returns the
  ``__init__`` keywords, ``clone`` builds an equal, independent copy, ``repr`` works;
* on seeded random workloads built to contend (big jobs block the head, many small ones
  can backfill, tied submit times, 0-second jobs, under- and over-estimates), for a
  dispatcher: every job that fits the platform ends, no job starts before its
  submission, cores in use never exceed the capacity (checked from the per-job output
  table, not from engine counters), and two runs give identical schedules; the same on
  node-level multi-resource platforms (cores, GPUs, memory on 2-3 node types), where no
  node's capacity of any resource may be exceeded (checked from the allocations).
  A dispatcher that only handles pooled (counting) platforms declares
  ``supports_node_level = False`` (``requires.node_level``) and skips those; the
  check runs give a power predictor and a cap, or a duration model, to a dispatcher
  whose requirements (``Dispatcher.requires``) ask for them, and the report lists
  those requirements;
* for a predictor: estimates are integers >= 0, two runs give identical estimates, and
  it is causal: the estimates of the first half of a FIFO run do not change when the
  second half of the trace is removed (under FIFO the early jobs' schedule does not
  depend on later jobs, so only look-ahead could change them).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from dispatchlab.core.params import comparable_params
from dispatchlab.dispatch.base import Dispatcher, Requirements
from dispatchlab.dispatch.priority import FIFO
from dispatchlab.platform import NodeType, Platform
from dispatchlab.power import PowerCap
from dispatchlab.predict.duration.base import Predictor
from dispatchlab.predict.power.base import PowerPrediction, PowerPredictor
from dispatchlab.sim.duration import Factor
from dispatchlab.sim.engine import Simulation
from dispatchlab.workload.jobs import JobTable


def contending_workloads(count: int = 6, seed: int = 0) -> list[tuple[Platform, JobTable]]:
    """Small seeded workloads on pooled machines of 8..32 cores that make queues form."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        cores = int(rng.integers(8, 33))
        n = int(rng.integers(20, 60))
        # bursts of arrivals (many ties) so that the queue builds up
        submit = np.sort(rng.integers(0, n * 4, size=n) // 5 * 5)
        big = rng.random(n) < 0.3
        units = np.where(big, rng.integers(cores // 2, cores + 1, size=n),
                         rng.integers(1, max(cores // 4, 2), size=n))
        run = rng.integers(0, 200, size=n)
        run[rng.random(n) < 0.1] = 0
        factor = rng.choice([0.5, 1.0, 1.0, 2.0, 5.0], size=n)
        requested = np.maximum(np.ceil(run * factor), 0).astype(np.int64)
        out.append((Platform.pooled(cores), JobTable.from_arrays(
            submit=submit, run=run, units=units, requested_time=requested,
            user=rng.integers(1, 5, size=n))))
    return out


def node_workloads(count: int = 4, seed: int = 0) -> list[tuple[Platform, JobTable]]:
    """Small seeded multi-resource workloads on node-level platforms of 2-3 node types
    (cores, GPUs, memory), made to contend like :func:`contending_workloads`."""

    rng = np.random.default_rng(seed + 1_000)
    out = []
    for k in range(count):
        types = [NodeType("cpu", int(rng.integers(1, 4)), {"core": 8, "gpu": 0, "mem": 16}),
                 NodeType("gpu", int(rng.integers(1, 3)), {"core": 4, "gpu": 2, "mem": 32})]
        if k % 2:
            types.append(NodeType("fat", 1, {"core": 16, "gpu": 0, "mem": 64}))
        platform = Platform(tuple(types), name=f"nodes-{k}")
        n = int(rng.integers(20, 50))
        submit = np.sort(rng.integers(0, n * 4, size=n) // 5 * 5)
        units = rng.integers(1, 5, size=n)
        cores = rng.choice([1, 2, 4], size=n)
        gpus = np.where(rng.random(n) < 0.2, 1, 0)
        mem = rng.choice([1, 4, 8], size=n)
        run = rng.integers(0, 200, size=n)
        run[rng.random(n) < 0.1] = 0
        factor = rng.choice([0.5, 1.0, 1.0, 2.0, 5.0], size=n)
        requested = np.maximum(np.ceil(run * factor), 0).astype(np.int64)
        out.append((platform, JobTable.from_arrays(
            submit=submit, run=run, units=units, requested_time=requested,
            user=rng.integers(1, 5, size=n),
            resources={"core": cores, "gpu": gpus, "mem": mem})))
    return out


def _check_nodes(result, platform: Platform, where: str) -> None:
    """Every started job has an allocation of its units; no node's capacity of any
    resource is exceeded at any start time; no job starts before its submission."""
    jobs = result.jobs
    names = platform.resource_names
    req = np.stack([jobs.resources.get(r, np.zeros(len(jobs), np.int64)) for r in names],
                   axis=1)
    cap = platform.capacity_matrix()
    ran = np.flatnonzero(result.start >= 0)
    submit = jobs["submit"]
    for i in ran.tolist():
        if result.start[i] < submit[i]:
            raise AssertionError(f"{where}: job {i} starts at {result.start[i]} before its "
                                 f"submission at {submit[i]}")
        alloc = result.allocations.get(i)
        if alloc is None or int(alloc.counts.sum()) != int(jobs["units"][i]):
            raise AssertionError(f"{where}: job {i} ran without an allocation of its units")
    for t in np.unique(result.start[ran]).tolist():
        used = np.zeros_like(cap)
        for i in ran[(result.start[ran] <= t) & (result.end[ran] > t)].tolist():
            alloc = result.allocations[i]
            used[alloc.nodes] += alloc.counts[:, None] * req[i][None, :]
        over = np.argwhere(used > cap)
        if len(over):
            node, r = over[0].tolist()
            raise AssertionError(f"{where}: node {node} uses {used[node, r]} {names[r]} of "
                                 f"{cap[node, r]} at t={t}")


def _instance(obj: Any, base: type) -> Any:
    inst = obj() if isinstance(obj, type) else obj
    if not isinstance(inst, base):
        raise AssertionError(f"{inst!r} is not a {base.__name__}")
    return inst


def _check_params(inst: Any, built_from_class: bool) -> None:
    name = type(inst).__name__
    params = inst.get_params()
    if built_from_class:  # built with the defaults: each must be stored as given
        defaults = {k: p.default for k, p in
                    inspect.signature(type(inst).__init__).parameters.items() if k != "self"}
        for key, value in params.items():
            if defaults[key] is inspect.Parameter.empty:
                raise AssertionError(f"{name}: parameter {key!r} needs a default")
            if not (value is defaults[key] or value == defaults[key]):
                raise AssertionError(f"{name}: parameter {key!r} must be stored unchanged on "
                                     f"self.{key} (default {defaults[key]!r}, stored "
                                     f"{value!r})")
    twin = inst.clone()
    if twin is inst or type(twin) is not type(inst):
        raise AssertionError(f"{name}: clone() must return a new {name}")
    if comparable_params(twin.get_params()) != comparable_params(params):
        raise AssertionError(f"{name}: clone() changed the parameters: {twin.get_params()} "
                             f"!= {params}")
    if not isinstance(repr(inst), str):
        raise AssertionError(f"{name}: repr() failed")


def _check_capacity(result, cores: int, where: str) -> None:
    table = result.to_arrow()
    start = np.asarray(table["start"])
    end = np.asarray(table["end"])
    submit = np.asarray(table["submit"])
    procs = np.asarray(table["procs"])
    status = table["status"].to_pylist()
    ran = start >= 0
    for i, st in enumerate(status):
        if st != "rejected" and not ran[i]:
            raise AssertionError(f"{where}: job {i} never started")
        if st == "rejected" and procs[i] <= cores:
            raise AssertionError(f"{where}: job {i} fits the platform but was rejected")
    if (start[ran] < submit[ran]).any():
        i = int(np.flatnonzero(ran & (start < submit))[0])
        raise AssertionError(f"{where}: job {i} starts at {start[i]} before its "
                             f"submission at {submit[i]}")
    # sweep: at equal times, ends release before starts take
    times = np.concatenate((start[ran], end[ran]))
    delta = np.concatenate((procs[ran], -procs[ran]))
    kind = np.concatenate((np.ones(ran.sum()), np.zeros(ran.sum())))
    order = np.lexsort((kind, times))
    in_use = np.cumsum(delta[order])
    if len(in_use) and in_use.max() > cores:
        k = int(np.argmax(in_use > cores))
        raise AssertionError(f"{where}: {int(in_use[k])} cores in use at t={times[order][k]}"
                             f" on a {cores}-core platform")


class _PerUnitPower(PowerPredictor):
    """100 W mean, 150 W max, 20 W std per unit: the checks' power predictor."""

    name = "per-unit-power"

    def start(self, jobs, platform) -> None:
        self.units_ = np.asarray(jobs["units"])

    def predict(self, job: int, now: int) -> PowerPrediction:
        u = float(self.units_[job])
        return PowerPrediction(100.0 * u, 150.0 * u, 20.0 * u ** 0.5)


def _power_inputs(requires: Requirements) -> dict:
    """For a dispatcher that needs power predictions (``requires.power_predictions``):
    a power predictor and a cap of 1,000 W on [0, 20000) for the check runs (the
    workloads have 8-32 cores, so the cap binds), so that its power path runs; for one
    that slows running jobs (``requires.slows_running_jobs``), the duration model
    ``factor:f=1`` (a throttled job's remaining run stretches in proportion to its
    power cut); nothing for the others."""
    out: dict = {}
    if requires.power_predictions:
        out.update(power_predictor=_PerUnitPower(), cap=PowerCap.window(1000.0, 0, 20_000))
    if requires.slows_running_jobs:
        out["duration_model"] = Factor(f=1.0)
    return out


def check_dispatcher(dispatcher: type[Dispatcher] | Dispatcher, *, workloads: int = 6,
                     seed: int = 0) -> dict[str, Any]:
    """Run the dispatcher contract checks (see the module docstring). Returns the
    workloads and jobs checked and the requirements the dispatcher declares
    (``"requires"``: :meth:`Requirements.as_dict`, e.g. ``{"node_level": False,
    ...}``), which decided the check runs' inputs and workloads."""
    inst = _instance(dispatcher, Dispatcher)
    _check_params(inst, isinstance(dispatcher, type))
    inst.validate()
    requires = inst.requires
    if not isinstance(requires, Requirements):
        raise AssertionError(f"{type(inst).__name__}.requires must be a Requirements, got "
                             f"{requires!r}")
    jobs_checked = 0
    power = _power_inputs(requires)
    for k, (platform, jobs) in enumerate(contending_workloads(workloads, seed)):
        where = f"{inst!r} on workload {k} ({len(jobs)} jobs, {platform.describe()})"
        sim = Simulation(platform, jobs, inst, **power)
        first = sim.run()
        _check_capacity(first, platform.total_capacity()["core"], where)
        _check_pass_log(sim.dispatcher, requires, where)
        second = Simulation(platform, jobs, inst.clone(), **power).run()
        if not (np.array_equal(first.start, second.start)
                and np.array_equal(first.end, second.end)):
            raise AssertionError(f"{where}: two runs gave different schedules")
        jobs_checked += len(jobs)
    n_node = 0
    if requires.node_level:
        for k, (platform, jobs) in enumerate(node_workloads(max(workloads // 2, 1), seed)):
            where = (f"{inst!r} on node-level workload {k} ({len(jobs)} jobs, "
                     f"{platform.describe()})")
            first = Simulation(platform, jobs, inst, **power).run()
            _check_nodes(first, platform, where)
            fits = first.status != 2
            if not (first.start[fits] >= 0).all():
                raise AssertionError(f"{where}: a job that fits the platform never started")
            second = Simulation(platform, jobs, inst.clone(), **power).run()
            if not (np.array_equal(first.start, second.start)
                    and np.array_equal(first.end, second.end)):
                raise AssertionError(f"{where}: two runs gave different schedules")
            jobs_checked += len(jobs)
            n_node += 1
    return {"workloads": workloads + n_node, "jobs": jobs_checked,
            "requires": requires.as_dict()}


def _check_pass_log(ran: Dispatcher, requires: Requirements, where: str) -> None:
    """A dispatcher that declares a pass log (``requires.pass_log``) holds a list of
    dicts in ``pass_log_`` after its run, one per pass it logged."""
    if not requires.pass_log:
        return
    log = ran.pass_log_
    if not isinstance(log, list) or not all(isinstance(rec, dict) for rec in log):
        raise AssertionError(f"{where}: it declares a pass log (keeps_pass_log) but its "
                             f"pass_log_ is not a list of dicts: {type(log).__name__}")


def check_predictor(predictor: type[Predictor] | Predictor, *, workloads: int = 6,
                    seed: int = 0) -> dict[str, int]:
    """Run the predictor contract checks (see the module docstring)."""
    inst = _instance(predictor, Predictor)
    _check_params(inst, isinstance(predictor, type))
    jobs_checked = 0
    for k, (platform, jobs) in enumerate(contending_workloads(workloads, seed)):
        where = f"{inst!r} on workload {k} ({len(jobs)} jobs)"
        first = Simulation(platform, jobs, FIFO(), inst).run()
        est = first.estimate[first.status != 2]
        if (est < 0).any():
            raise AssertionError(f"{where}: negative estimate")
        second = Simulation(platform, jobs, FIFO(), inst.clone()).run()
        if not np.array_equal(first.estimate, second.estimate):
            raise AssertionError(f"{where}: two runs gave different estimates")
        half = len(jobs) // 2
        cut = Simulation(platform, jobs.take(np.arange(half)), FIFO(), inst.clone()).run()
        if not np.array_equal(cut.estimate, first.estimate[:half]):
            i = int(np.flatnonzero(cut.estimate != first.estimate[:half])[0])
            raise AssertionError(
                f"{where}: not causal: job {i}'s estimate is {first.estimate[i]} with the "
                f"whole trace but {cut.estimate[i]} when later jobs are removed")
        jobs_checked += len(jobs)
    return {"workloads": workloads, "jobs": jobs_checked}
