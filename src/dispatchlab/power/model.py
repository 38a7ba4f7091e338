"""The power model's job-side facts: how many nodes a job occupies, and the power
columns of a job table.

**Job power columns** (float64 W, NaN = unknown), optional columns of a
:class:`~dispatchlab.workload.jobs.JobTable` attached by :mod:`dispatchlab.power.data`:
``power_mean``, ``power_max``, ``power_std``: the measured power of the nodes the job
ran on (Carastan-Santos et al. 2024's IPMI data: it includes those nodes' idle part), over the
whole job.

**Nodes of a job** (:func:`job_nodes`): on a node-level platform, the fewest nodes
that can hold the job's units, from the largest node capacity of each resource:
``max over resources r of ceil(units x request_r / max node capacity_r)`` (at least 1);
on a pooled platform, one node per unit (ours: the pool has no node size).
"""

from __future__ import annotations

import numpy as np

#: the optional power columns of a job table
POWER_COLUMNS: tuple[str, ...] = ("power_mean", "power_max", "power_std")
#: Sampling period (s) of job power series: Carastan-Santos et al. 2024's IPMI period
#: (Marconi100); also :data:`dispatchlab.power.data.DEFAULT_PERIOD`, the readers' default.
DEFAULT_PERIOD = 20


def has_power(jobs) -> bool:
    """True when the table carries the power columns."""
    return all(c in jobs.columns for c in POWER_COLUMNS)


def job_nodes(jobs, platform) -> np.ndarray:
    """Nodes each job occupies at least (int64 per job row; see the module docstring)."""
    units = np.asarray(jobs["units"], dtype=np.int64)
    if platform.is_pooled:
        return units.copy()
    names = platform.resource_names
    cap = platform.capacity_matrix().max(axis=0)
    nodes = np.ones(len(units), dtype=np.int64)
    for k, r in enumerate(names):
        req = jobs.resources.get(r)
        if req is None or cap[k] <= 0:
            continue
        need = units * np.asarray(req, dtype=np.int64)
        nodes = np.maximum(nodes, -(-need // int(cap[k])))
    return nodes
