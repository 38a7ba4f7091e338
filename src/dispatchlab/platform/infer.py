"""Propose a node-level platform from what a trace recorded (``dispatchlab platform
infer``). The result is a proposal for a person to check and edit, written as a
platform TOML file (see :func:`dispatchlab.platform.files.read_platform_toml`).

Evidence used, in this order (the first one the trace has decides; all rules are ours):

1. **A machine file** read with the trace (Alea's ``.machines``, ``info.companions``):
   that platform, as it is.
2. **Recorded placement** (``alloc_nodes`` column: ``host:cores,...`` from PBS
   ``exec_host``/``exec_vnode`` and Alea field 19, or a Slurm host list from sacct's
   ``NodeList`` such as ``cn[001-016],gpu[01-04]``, expanded by
   :mod:`dispatchlab.platform.hostlist`): every host seen is a node; its core count is
   the **peak number of cores in use on it at once** in the recorded schedule (jobs on
   [start, end), a job ending at t frees its cores before one starting at t takes them),
   a lower bound of its real size where the placement gives cores per host. A Slurm
   host list does not say how a job's CPUs were spread: each host is given
   ``ceil(alloc_procs / hosts)`` of them (exact for whole-node jobs). GPUs likewise:
   a job's ``req_gpus`` spread evenly (rounded up) over its hosts, each host's GPU count
   being the peak in use at once; hosts where no GPU job ran have none. Hosts with the
   same core and GPU counts form one node type (types named ``cores<N>`` or
   ``cores<N>-gpu<G>``, ordered by size; hosts in first-appearance order). A placement
   that cannot be read (a malformed host list, ``host:cores`` with a bad count) leaves
   its job out of the evidence; how many were left out, and the first one, is in
   :attr:`Proposal.warnings` (the command prints it as one ``warning:`` line).
   When the placement is Slurm host lists (sacct's ``NodeList``), the proposal also
   names each node type's hosts (``hosts = "cn[01-16]"``) and proposes **partitions**:
   each partition named in the log (``Partition``, the ``queue`` codes) holds the hosts
   its jobs ran on (a job submitted to a comma list of partitions ran in one of them,
   which the log does not say: it counts for none); the partition with the most jobs
   is proposed as the default (a guess, said in a note).
3. **Node counts** (``nodes_used`` with allocated processors, e.g. Slurm NNodes and
   NCPUS): cores per node = the largest ``ceil(procs / nodes)`` over jobs (the widest
   per-node use seen), node count = the larger of the peak number of nodes in use at
   once and the header's MaxNodes; one node type.
4. **The header** (SWF ``MaxNodes`` and ``MaxProcs``): MaxNodes nodes of MaxProcs //
   MaxNodes cores.

Without any of these, :class:`~dispatchlab.core.errors.InputError` says what is missing.
Without a placement, GPUs (``req_gpus``) are reported in a note but not inferred (the
counts do not say which node a GPU was on).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.platform import hostlist
from dispatchlab.platform.files import platform_from_table
from dispatchlab.platform.platform import NodeType, Partition, Platform


@dataclass
class Proposal:
    """A proposed platform: ``node_types`` as (name, count, capacity dict) and what it
    rests on (``evidence``: one sentence; ``notes``: caveats for the reader;
    ``warnings``: records that could not be used, one line each). ``hosts``: each node
    type's host names (parallel to ``node_types``), or empty when the evidence names no
    hosts; ``partitions``: proposed partitions as (name, host names, default)."""

    name: str
    node_types: list[tuple[str, int, dict[str, int]]]
    evidence: str
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    hosts: list[list[str]] = field(default_factory=list)
    partitions: list[tuple[str, list[str], bool]] = field(default_factory=list)

    def to_toml(self) -> str:
        """The proposal as a platform TOML file, with the evidence as comments. Node
        types with hosts get ``hosts = "LIST"``; partitions are ``[[partition]]`` tables
        with ``name``, ``nodes`` (a host list) and ``default``."""
        lines = [f"# Proposed by dispatchlab platform infer: {self.evidence}",
                 *(f"# Note: {n}" for n in self.notes),
                 "# Check the node counts and sizes against the real machine before use.",
                 f'name = "{self.name}"']
        for k, (name, count, capacity) in enumerate(self.node_types):
            cap = ", ".join(f"{key} = {v}" for key, v in capacity.items())
            lines += ["", "[[node_type]]", f'name = "{name}"', f"count = {count}",
                      f"capacity = {{ {cap} }}"]
            if self.hosts and self.hosts[k]:
                lines.append(f"hosts = {json.dumps(hostlist.compress(self.hosts[k]))}")
        for name, hosts, default in self.partitions:
            lines += ["", "[[partition]]", f"name = {json.dumps(name)}",
                      f"nodes = {json.dumps(hostlist.compress(hosts))}",
                      f"default = {'true' if default else 'false'}"]
        return "\n".join(lines) + "\n"

    def platform(self) -> Platform:
        """The proposal as a :class:`~dispatchlab.platform.Platform` (validated), its
        nodes in the order the written host lists give them."""
        if not self.hosts and not self.partitions:
            return platform_from_table({"name": self.name, "node_type": [
                {"name": n, "count": c, "capacity": dict(cap)}
                for n, c, cap in self.node_types]})
        types = tuple(NodeType(n, c, dict(cap), hosts=tuple(
            hostlist.expand(hostlist.compress(self.hosts[k])) if self.hosts[k] else ()))
            for k, (n, c, cap) in enumerate(self.node_types))
        index = {h: k for k, h in enumerate(Platform(types, name=self.name).hosts())}
        parts = tuple(Partition(name, tuple(sorted(index[h] for h in hosts)), default)
                      for name, hosts, default in self.partitions)
        return Platform(types, name=self.name, partitions=parts)


def peak_in_use(start: np.ndarray, end: np.ndarray, amount: np.ndarray) -> int:
    """The largest total ``amount`` of jobs running at once on ``[start, end)`` (ends at
    a time are applied before starts at that time)."""
    if len(start) == 0:
        return 0
    times = np.concatenate([end, start])
    deltas = np.concatenate([-amount, amount])
    order = np.lexsort((deltas, times))  # by time, then ends (negative) first
    return int(max(0, np.cumsum(deltas[order]).max()))


def parse_placement(text: str) -> list[tuple[str, int | None]]:
    """The hosts of one recorded placement with their cores: ``host:cores,...`` (PBS,
    Alea; a host named twice keeps both parts), or a Slurm host list (distinct hosts,
    cores None: not recorded). Raises :class:`InputError` for a malformed one."""
    if ":" not in text:
        return [(host, None) for host in hostlist.hosts(text)]
    out: list[tuple[str, int | None]] = []
    for part in text.split(","):
        host, _, cores = part.strip().rpartition(":")
        if not host:
            continue
        if not (cores.isascii() and cores.isdigit()):
            raise InputError(f"bad recorded placement {part!r} (expected host:cores)",
                             field="alloc_nodes")
        out.append((host, int(cores)))
    return out


def _from_placement(name: str, start: np.ndarray, end: np.ndarray, placement: np.ndarray,
                    procs: np.ndarray, gpus: np.ndarray,
                    lines: np.ndarray | None) -> Proposal | None:
    per_host: dict[str, list[tuple[int, int, int, int]]] = {}
    unusable, first, spread = 0, "", False
    for k, (s, e, text) in enumerate(zip(start.tolist(), end.tolist(), placement.tolist(),
                                         strict=True)):
        if not text or s < 0 or e < s:
            continue
        try:
            hosts = parse_placement(str(text))
        except InputError as err:
            unusable += 1
            if not first:
                line = int(lines[k]) if lines is not None else 0
                where = f"line {line}" if line > 0 else f"job {k + 1}"
                first = f"{where}: {err.message}"
            continue
        if not hosts:
            continue
        spread = spread or hosts[0][1] is None
        share = -(-int(max(procs[k], 0)) // len(hosts))
        gpu_share = -(-int(max(gpus[k], 0)) // len(hosts))
        for host, cores in hosts:
            per_host.setdefault(host, []).append(
                (s, e, share if cores is None else cores, gpu_share))
    warnings = [f"the recorded placement (NodeList) of {unusable:,} "
                f"job{'s' if unusable != 1 else ''} could not be used: left out of the "
                f"inference (first at {first})"] if unusable else []
    if not per_host:
        if warnings:
            return Proposal(name, [], "", warnings=warnings)
        return None
    sizes: dict[str, tuple[int, int]] = {}
    for host, spans in per_host.items():
        a = np.array(spans, dtype=np.int64)
        sizes[host] = (peak_in_use(a[:, 0], a[:, 1], a[:, 2]),
                       peak_in_use(a[:, 0], a[:, 1], a[:, 3]))
    counts: dict[tuple[int, int], int] = {}
    by_size: dict[tuple[int, int], list[str]] = {}
    for host, size in sizes.items():
        counts[size] = counts.get(size, 0) + 1
        by_size.setdefault(size, []).append(host)
    types = [(f"cores{c}" if not g else f"cores{c}-gpu{g}", n,
              {"core": c} if not g else {"core": c, "gpu": g})
             for (c, g), n in sorted(counts.items())]
    with_gpus = sum(n for (_, g), n in counts.items() if g)
    notes = ["host sizes are lower bounds: a host never filled in the log looks smaller "
             "than it is"]
    if spread:
        notes = ["host sizes are estimates: a host never filled in the log looks smaller "
                 "than it is, and a Slurm NodeList does not say how a job's CPUs and GPUs "
                 "were spread over its hosts (evenly assumed)"]
    return Proposal(name, types, f"recorded placement of {len(sizes):,} hosts"
                    + (f" ({with_gpus:,} with GPUs)" if with_gpus else "")
                    + "; each host's cores = the peak number of cores in use on it at once",
                    notes, warnings,
                    hosts=[by_size[size] for size in sorted(counts)] if spread else [])


def _partitions(jobs: Any, placement: np.ndarray, known: set[str]
                ) -> tuple[list[tuple[str, list[str], bool]], str]:
    """Partitions from the hosts each partition's jobs ran on (Slurm host lists), and a
    note; ``([], "")`` when the log names no partition."""
    codes = jobs.info.codes.get("queue") or []
    if not codes or "queue" not in jobs.columns:
        return [], ""
    queue = np.asarray(jobs["queue"])
    hosts: dict[str, dict[str, None]] = {}
    jobs_in: dict[str, int] = {}
    several = 0
    for code, text in zip(queue.tolist(), placement.tolist(), strict=True):
        if not 0 <= code < len(codes) or not codes[code] or not text:
            continue
        name = codes[code]
        if "," in name:
            several += 1
            continue
        try:
            ran = [h for h in hostlist.hosts(str(text)) if h in known]
        except InputError:  # said by the placement's warning
            continue
        if ran:
            hosts.setdefault(name, {}).update(dict.fromkeys(ran))
            jobs_in[name] = jobs_in.get(name, 0) + 1
    if not hosts:
        return [], ""
    order = list(jobs_in)
    default = max(order, key=lambda n: (jobs_in[n], -order.index(n)))
    out = [(name, list(h), name == default) for name, h in hosts.items()]
    note = (f"partitions proposed from the hosts their jobs ran on (a partition may hold "
            f"more); '{default}', the one with the most jobs, is proposed as the default")
    if several:
        note += (f"; {several:,} job{'s' if several != 1 else ''} submitted to several "
                 "partitions counted for none")
    return out, note


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
    notes: list[str] = []
    gpus = jobs.columns.get("req_gpus")
    gpu_note = ""
    if gpus is not None and np.any(gpus > 0):
        gpu_note = (f"{int(np.count_nonzero(gpus > 0)):,} jobs requested GPUs; add a gpu "
                    "capacity to the node types that have them")
    if machines_platform is not None:
        types = [(nt.name, nt.count, dict(nt.capacity)) for nt in machines_platform.node_types]
        return Proposal(name, types, "the machine file read with the trace", notes)
    submit, wait, run = (np.asarray(jobs[c], dtype=np.int64) for c in ("submit", "wait", "run"))
    start = np.where((wait >= 0) & (run >= 0), submit + wait, -1)
    end = np.where(start >= 0, start + run, -1)
    placement = jobs.columns.get("alloc_nodes")
    procs = np.asarray(np.where(jobs["alloc_procs"] > 0, jobs["alloc_procs"], jobs["units"]),
                       dtype=np.int64)
    found = None
    warnings: list[str] = []
    if placement is not None:
        found = _from_placement(
            name, start, end, np.asarray(placement, dtype=object), procs,
            np.zeros(len(procs), dtype=np.int64) if gpus is None else np.asarray(gpus),
            np.asarray(jobs.columns["line"]) if "line" in jobs.columns else None)
        if found is not None and not found.node_types:
            warnings, found = found.warnings, None
        if found is not None and found.hosts:
            known = {h for group in found.hosts for h in group}
            found.partitions, note = _partitions(jobs, np.asarray(placement, dtype=object),
                                                 known)
            if note:
                notes.append(note)
    if found is None and "nodes_used" in jobs.columns:
        found = _from_node_counts(name, start, end, np.asarray(jobs["nodes_used"]),
                                  procs, info.max_nodes)
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
    if gpu_note and not any("gpu" in cap for _, _, cap in found.node_types):
        notes.append(gpu_note)
    found.notes = notes + found.notes
    found.warnings = warnings + found.warnings
    return found
