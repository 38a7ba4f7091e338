"""Hot start: begin a run with part of the machine already busy (Borghesi et al. 2018, "HS = x %").

Borghesi et al. 2018 (section 5.2.1, Figure 2b) runs instances on a machine where x % of the nodes
are already occupied when the first job arrives. PA-HPC-SIM does it in
``OnlineDispatcher::initiate_startup``; :func:`add_hot_start`
follows it, tagged **[PA]**, the rest is **ours**:

* **How many nodes.** ``k = floor(share x N)`` of the platform's ``N`` nodes, ``share``
  in [0, 1] [PA: ``int(nodes / 100 * hotness)``, a truncation; ours: a ``1e-9`` slack
  so that e.g. ``0.29 x 100`` counts as 29, not 28]. So HS = 70 % of Eurora's 64 nodes
  is 44 nodes, HS = 50 % is 32.
* **Which nodes, how long.** The first ``k // 2`` dummy jobs run **600 s** on nodes
  ``0 .. k//2 - 1`` (the low ids: Eurora's 2.1 GHz MIC half); the other ``k - k // 2``
  run **1200 s** on nodes ``N//2 .. N//2 + (k - k//2) - 1`` (the high-id half, from its
  first node) [PA: ``_nodeType_threshold = nodes / 2``]. An odd ``k`` puts the extra
  job in the 1200-s half [PA]. HS = 50 % on Eurora: nodes 0-15 busy until ``at + 600``,
  nodes 32-47 until ``at + 1200``.
* **Each dummy job** is a 1-node job using all the cores of its node and ``1/8`` of its
  memory (integer division), no other resource [PA]; power 5 W [PA]: ``power_mean =
  power_max = 5``, ``power_std = 0`` when the table has the power columns (a table
  without them stays without: no power column is added, ours); application type
  ``app = 0`` [PA]; queue ``-1`` (no queue: the default EWT, 1800 s, PA's EWT of its
  dummy jobs); ``run = requested_time = req_time`` (600 or 1200); ``user``/``group``
  -1, ``status`` 1, ``line`` 0. On a node-level platform the job is one unit of
  ``{core: cores of the node, mem: memory // 8}``; on a core-only platform (no other
  resource: the engine may run in counting mode) it is ``cores`` units of one core.
  A table without a ``mem`` resource gets one (0 for its jobs) when the platform has
  memory; resources the platform lacks are 0 for the dummy jobs.
* **When.** Submitted (and started by the engine) at ``at``, default the table's first
  submission [PA: the reference time]; an empty table needs ``at``.
* **Ids (ours).** The dummy jobs get new job ids above the table's largest:
  ``max(job_id, 0) + 1 + i`` for the ``i``-th dummy job (low nodes first).
* **Flag.** Column ``hot_start``: 1 for the dummy jobs, 0 for the trace's jobs (a
  table that already has the column keeps its values). Campaigns exclude flagged jobs
  from job metrics and from the budget base (the caller's job).
* **Order.** The returned table is stably sorted by submit time with the dummy jobs
  placed *before* the trace's jobs of the same submit time (so they are started first).

The returned dict maps each dummy job's row in the **new** table to its allocation
(:class:`~dispatchlab.dispatch.base.Allocation` of its one node), or to None when the
engine will run in counting mode; pass it as ``Simulation(..., pinned=...)``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from numbers import Integral, Real

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.allocation import Allocation
from dispatchlab.platform.platform import Platform
from dispatchlab.power.model import POWER_COLUMNS, has_power
from dispatchlab.workload.jobs import FLOAT_FIELDS, JobTable

__all__ = [
    "HOT_LONG",
    "HOT_MEMORY_DIVISOR",
    "HOT_POWER",
    "HOT_SHORT",
    "add_hot_start",
    "hot_nodes",
]

#: ``field`` of the InputErrors raised here
FIELD = "hot_start"
#: run time (s) of the dummy jobs on the low-id nodes [PA]
HOT_SHORT = 600
#: run time (s) of the dummy jobs on the high-id nodes [PA]
HOT_LONG = 1200
#: power of a dummy job (W) [PA]
HOT_POWER = 5.0
#: a dummy job uses 1/8 of its node's memory [PA]
HOT_MEMORY_DIVISOR = 8


def _check_share(share: object) -> float:
    if isinstance(share, bool) or not isinstance(share, Real) \
            or not math.isfinite(float(share)) or not 0.0 <= float(share) <= 1.0:
        raise InputError(f"the hot-start share must be a number in [0, 1] (a fraction of "
                         f"the nodes), got {share!r}", field=FIELD)
    return float(share)


def hot_nodes(n_nodes: int, share: float) -> tuple[np.ndarray, np.ndarray]:
    """``(nodes, runs)`` of the dummy jobs for ``share`` of ``n_nodes`` nodes, in dummy
    job order (the module docstring's rule): e.g. ``hot_nodes(64, 0.5)`` gives nodes
    0-15 with 600 s then 32-47 with 1200 s."""
    share = _check_share(share)
    k = math.floor(share * n_nodes + 1e-9)
    low = k // 2
    high = k - low
    nodes = np.concatenate([np.arange(low), n_nodes // 2 + np.arange(high)]).astype(np.int64)
    runs = np.concatenate([np.full(low, HOT_SHORT), np.full(high, HOT_LONG)]).astype(np.int64)
    return nodes, runs


def _fill(col: np.ndarray, k: int, name: str) -> np.ndarray:
    """The missing-value filler of column ``col`` for ``k`` new rows."""
    if col.dtype == object:
        return np.full(k, "", dtype=object)
    if col.dtype.kind == "f" or name in FLOAT_FIELDS:
        return np.full(k, -1.0 if name in FLOAT_FIELDS else np.nan, dtype=col.dtype)
    if col.dtype.kind == "b":
        return np.zeros(k, dtype=col.dtype)
    return np.full(k, -1, dtype=col.dtype)


def add_hot_start(jobs: JobTable, platform: Platform, share: float, *,
                  at: int | None = None) -> tuple[JobTable, dict[int, Allocation | None]]:
    """``(table, pinned)``: ``jobs`` plus the dummy jobs of a hot start on ``share`` of
    the nodes of ``platform``, and the rows of the dummy jobs (in the new table) mapped
    to their allocations, for ``Simulation(..., pinned=pinned)``. See the module
    docstring for every rule. ``jobs`` is not modified.

    Raises :class:`InputError` (field ``hot_start``) when ``share`` is not in [0, 1],
    ``at`` is not an integer >= 0 (or missing for an empty table), or the platform is
    pooled (it has no nodes to occupy) or has no ``core`` resource."""
    share = _check_share(share)
    if platform.is_pooled:
        raise InputError("a hot start needs a platform with nodes; this one is a single "
                         "pool of cores", field=FIELD)
    names = platform.resource_names
    if "core" not in names:
        raise InputError("a hot start needs a platform with a 'core' resource", field=FIELD)
    n = len(jobs)
    if at is None:
        if n == 0:
            raise InputError("a hot start on an empty job table needs its time 'at'",
                             field=FIELD)
        at = int(np.min(jobs["submit"]))
    elif isinstance(at, bool) or not isinstance(at, Integral) or at < 0:
        raise InputError(f"the hot start time must be an integer >= 0 (s), got {at!r}",
                         field=FIELD)
    at = int(at)
    nodes, runs = hot_nodes(platform.n_nodes, share)
    k = len(nodes)
    capacity = platform.capacity_matrix()  # nodes x resources
    cores = capacity[nodes, names.index("core")].astype(np.int64)
    core_only = platform.is_core_only()

    # -- resources of the dummy rows (per unit)
    resources_in = dict(jobs.resources)
    if "mem" in names and "mem" not in resources_in:
        resources_in["mem"] = np.zeros(n, dtype=np.int64)
    if "core" not in resources_in:  # an SWF-like table without resources: one core a unit
        resources_in["core"] = np.ones(n, dtype=np.int64)
    hot_res: dict[str, np.ndarray] = {}
    for r in resources_in:
        if r == "core":
            hot_res[r] = np.ones(k, np.int64) if core_only else cores.copy()
        elif r == "mem" and "mem" in names:
            hot_res[r] = (capacity[nodes, names.index("mem")].astype(np.int64)
                          // HOT_MEMORY_DIVISOR)
        else:
            hot_res[r] = np.zeros(k, dtype=np.int64)
    units = cores.copy() if core_only else np.ones(k, dtype=np.int64)

    # -- columns of the dummy rows
    cols_in = jobs.columns
    max_id = int(np.max(cols_in["job_id"])) if n else 0
    hot_cols: dict[str, np.ndarray] = {}
    for name, col in cols_in.items():
        hot_cols[name] = _fill(np.asarray(col), k, name)
    procs = units * hot_res["core"]
    hot_cols.update({
        "job_id": max(max_id, 0) + 1 + np.arange(k, dtype=np.int64),
        "submit": np.full(k, at, dtype=np.int64),
        "run": runs.copy(),
        "requested_time": runs.copy(),
        "req_time": runs.copy(),
        "units": units,
        "req_procs": procs.copy(),
        "alloc_procs": procs.copy(),
        "status": np.ones(k, dtype=np.int64),
        "app": np.zeros(k, dtype=np.int64),
        "queue": np.full(k, -1, dtype=np.int64),
        "line": np.zeros(k, dtype=np.int64),
    })
    if has_power(jobs):
        hot_cols["power_mean"] = np.full(k, HOT_POWER)
        hot_cols["power_max"] = np.full(k, HOT_POWER)
        hot_cols["power_std"] = np.zeros(k)
    if "nodes_used" in cols_in:
        hot_cols["nodes_used"] = np.ones(k, dtype=np.int64)
    for name in POWER_COLUMNS:  # keep the dtype of the table's columns
        if name in cols_in:
            hot_cols[name] = hot_cols[name].astype(np.asarray(cols_in[name]).dtype)
    flag_in = (np.asarray(cols_in["hot_start"], dtype=np.int64) if "hot_start" in cols_in
               else np.zeros(n, dtype=np.int64))
    hot_cols["hot_start"] = np.ones(k, dtype=np.int64)

    # -- the new table: dummy rows first, then a stable sort by submit
    columns: dict[str, np.ndarray] = {}
    for name, col in cols_in.items():
        base = np.asarray(col)
        add = hot_cols[name]
        dtype = object if base.dtype == object else np.result_type(base.dtype, add.dtype)
        columns[name] = np.concatenate([add.astype(dtype), base.astype(dtype, copy=False)])
    columns["hot_start"] = np.concatenate([hot_cols["hot_start"], flag_in])
    resources = {r: np.concatenate([hot_res[r], np.asarray(v, dtype=np.int64)])
                 for r, v in resources_in.items()}
    info = replace(jobs.info, dropped=dict(jobs.info.dropped), header=dict(jobs.info.header))
    table = JobTable(columns=columns, resources=resources, info=info)
    order = np.argsort(table["submit"], kind="stable")
    if np.any(order != np.arange(len(order))):
        table = table.take(order)
    new_row = np.empty(len(order), dtype=np.int64)
    new_row[order] = np.arange(len(order))

    # counting mode: the engine's rule (core-only platform, one core a unit, nothing else)
    req = table.resources
    counting = core_only and bool(np.all(req["core"] == 1)) and all(
        not np.any(v) for r, v in req.items() if r != "core")
    pinned: dict[int, Allocation | None] = {}
    for i in range(k):
        alloc = None if counting else Allocation(nodes=np.array([nodes[i]], dtype=np.int64),
                                                 counts=np.array([units[i]], dtype=np.int64))
        pinned[int(new_row[i])] = alloc
    return table, pinned
