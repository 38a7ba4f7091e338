"""Propose a node-level platform from what a trace recorded (``dispatchlab platform
infer``). The result is a proposal for a person to check and edit, written as a
platform TOML file (see :meth:`dispatchlab.platform.Platform.from_toml`).

Evidence used, in this order (the first one the trace has decides; all rules are ours):

1. **A machine file** read with the trace (Alea's ``.machines``, ``info.companions``):
   that platform, as it is.
2. **Recorded placement** (``alloc_nodes`` column: ``host:cores,...`` from PBS
   ``exec_host``/``exec_vnode``, Alea field 19, a Slurm NodeList): every host seen is a
   node; its core count is the **peak number of cores in use on it at once** in the
   recorded schedule (jobs on [start, end), a job ending at t frees its cores before one
   starting at t takes them), a lower bound of its real size. Hosts with the same core
   count form one node type (types named ``cores<N>``, ordered by size; hosts in
   first-appearance order).
3. **Node counts** (``nodes_used`` with allocated processors, e.g. Slurm NNodes and
   NCPUS): cores per node = the largest ``ceil(procs / nodes)`` over jobs (the widest
   per-node use seen), node count = the larger of the peak number of nodes in use at
   once and the header's MaxNodes; one node type.
4. **The header** (SWF ``MaxNodes`` and ``MaxProcs``): MaxNodes nodes of MaxProcs //
   MaxNodes cores.

Without any of these, :class:`~dispatchlab.errors.InputError` says what is missing.
GPUs (``req_gpus``) are reported but not inferred as a resource (the logs read here do
not say which node a GPU was on).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dispatchlab.errors import InputError


@dataclass
class Proposal:
    """A proposed platform: ``node_types`` as (name, count, capacity dict) and what it
    rests on (``evidence``: one sentence; ``notes``: caveats for the reader)."""

    name: str
    node_types: list[tuple[str, int, dict[str, int]]]
    evidence: str
    notes: list[str] = field(default_factory=list)

    def to_toml(self) -> str:
        """The proposal as a platform TOML file, with the evidence as comments."""
        lines = [f"# Proposed by dispatchlab platform infer: {self.evidence}",
                 *(f"# Note: {n}" for n in self.notes),
                 "# Check the node counts and sizes against the real machine before use.",
                 f'name = "{self.name}"']
        for name, count, capacity in self.node_types:
            cap = ", ".join(f"{k} = {v}" for k, v in capacity.items())
            lines += ["", "[[node_type]]", f'name = "{name}"', f"count = {count}",
                      f"capacity = {{ {cap} }}"]
        return "\n".join(lines) + "\n"

    def platform(self):
        """The proposal as a :class:`~dispatchlab.platform.Platform` (validated)."""
        from dispatchlab.platform import Platform

        return Platform.from_dict({"name": self.name, "node_type": [
            {"name": n, "count": c, "capacity": dict(cap)} for n, c, cap in self.node_types]})


def peak_in_use(start: np.ndarray, end: np.ndarray, amount: np.ndarray) -> int:
    """The largest total ``amount`` of jobs running at once on ``[start, end)`` (ends at
    a time are applied before starts at that time)."""
    if len(start) == 0:
        return 0
    times = np.concatenate([end, start])
    deltas = np.concatenate([-amount, amount])
    order = np.lexsort((deltas, times))  # by time, then ends (negative) first
    return int(max(0, np.cumsum(deltas[order]).max()))


def _parse_placement(text: str) -> list[tuple[str, int]]:
    out = []
    for part in text.split(","):
        host, _, cores = part.strip().rpartition(":")
        if not host:
            continue
        try:
            out.append((host, int(cores)))
        except ValueError:
            raise InputError(f"bad recorded placement {part!r} (expected host:cores)",
                             field="alloc_nodes") from None
    return out


def _from_placement(name: str, start: np.ndarray, end: np.ndarray,
                    placement: np.ndarray) -> Proposal | None:
    per_host: dict[str, list[tuple[int, int, int]]] = {}
    for s, e, text in zip(start.tolist(), end.tolist(), placement.tolist(), strict=True):
        if not text or s < 0 or e < s:
            continue
        for host, cores in _parse_placement(str(text)):
            per_host.setdefault(host, []).append((s, e, cores))
    if not per_host:
        return None
    sizes: dict[str, int] = {}
    for host, spans in per_host.items():
        a = np.array(spans, dtype=np.int64)
        sizes[host] = peak_in_use(a[:, 0], a[:, 1], a[:, 2])
    counts: dict[int, int] = {}
    for size in sizes.values():
        counts[size] = counts.get(size, 0) + 1
    types = [(f"cores{size}", n, {"core": size}) for size, n in sorted(counts.items())]
    return Proposal(name, types, f"recorded placement of {len(sizes):,} hosts; each host's "
                    "cores = the peak number of cores in use on it at once",
                    ["host sizes are lower bounds: a host never filled in the log looks "
                     "smaller than it is"])


def _from_node_counts(name: str, start: np.ndarray, end: np.ndarray, nodes: np.ndarray,
                      procs: np.ndarray, max_nodes: int | None) -> Proposal | None:
    ok = (nodes > 0) & (procs > 0) & (start >= 0) & (end >= start)
    if not ok.any():
        return None
    per_node = int(np.max(-(-procs[ok] // nodes[ok])))
    peak = peak_in_use(start[ok], end[ok], nodes[ok])
    count = max(peak, int(nodes[ok].max()), max_nodes or 0)
    return Proposal(name, [("node", count, {"core": per_node})],
                    f"node counts of {int(ok.sum()):,} jobs: {per_node} cores per node (the "
                    f"widest per-node use), {count} nodes (peak in use at once {peak}"
                    + (f", header MaxNodes {max_nodes}" if max_nodes else "") + ")",
                    ["a homogeneous machine is assumed"])


def infer_platform(jobs: Any, machines_platform: Any = None) -> Proposal:
    """A :class:`Proposal` for ``jobs`` (a :class:`~dispatchlab.workload.jobs.JobTable`
    as read, before cleaning). ``machines_platform``: the platform of a machine file
    read with the trace, if any (rule 1 of the module docstring)."""
    info = jobs.info
    name = str(info.source).rsplit("/", 1)[-1].split(".")[0] or "inferred"
    notes = []
    gpus = jobs.columns.get("req_gpus")
    if gpus is not None and np.any(gpus > 0):
        notes.append(f"{int(np.count_nonzero(gpus > 0)):,} jobs requested GPUs; add a gpu "
                     "capacity to the node types that have them")
    if machines_platform is not None:
        types = [(nt.name, nt.count, dict(nt.capacity)) for nt in machines_platform.node_types]
        return Proposal(name, types, "the machine file read with the trace", notes)
    submit, wait, run = (np.asarray(jobs[c], dtype=np.int64) for c in ("submit", "wait", "run"))
    start = np.where((wait >= 0) & (run >= 0), submit + wait, -1)
    end = np.where(start >= 0, start + run, -1)
    placement = jobs.columns.get("alloc_nodes")
    found = None
    if placement is not None:
        found = _from_placement(name, start, end, np.asarray(placement, dtype=object))
    if found is None and "nodes_used" in jobs.columns:
        procs = np.where(jobs["alloc_procs"] > 0, jobs["alloc_procs"], jobs["units"])
        found = _from_node_counts(name, start, end, np.asarray(jobs["nodes_used"]),
                                  np.asarray(procs, dtype=np.int64), info.max_nodes)
    if found is None and info.max_nodes and info.max_procs:
        per = info.max_procs // info.max_nodes
        if per > 0:
            found = Proposal(name, [("node", info.max_nodes, {"core": per})],
                             f"the header: MaxNodes {info.max_nodes}, MaxProcs "
                             f"{info.max_procs}", ["a homogeneous machine is assumed"])
    if found is None:
        raise InputError("the trace records no placement (node names per job), no node "
                         "counts and no MaxNodes/MaxProcs header: nothing to infer a "
                         "platform from", file=str(info.source))
    found.notes = notes + found.notes
    return found
