"""Requests from cluster logs become requests in the simulation: the request fitting.

A job table read from a Slurm (``sacct``) or PBS log says what each job asked for
(CPUs, nodes, GPUs and their type, memory, node features, its partition) and what it
was given. :func:`fit_requests` turns that into what the engine simulates on a given
node-level :class:`~dispatchlab.platform.Platform`: each job's ``units`` and its
per-unit request over the platform's resources (``core``, ``gpu``, ``mem`` in MB, any
other resource the platform declares), plus the node-eligibility resources below.
Every allocator and dispatcher then honours GPUs, memory, partitions, GPU types and
features with no change of its own.

The mapping rule
----------------
``P`` = the job's CPUs (``units`` as read: requested, else allocated), ``G`` = its GPUs
(``req_gpus``), ``M`` = its total memory (``req_mem_mb``), ``N`` = its node count
(``req_nodes``, else the nodes it was given, ``nodes_used``, else 1). The first row
that applies decides:

+------------------------------+----------------------------------------------------+--------------+
| The job                      | units x per-unit request                           | why          |
+==============================+====================================================+==============+
| **exclusive**: the log says  | ``N`` units of ``ceil(P/N)`` cores, ``ceil(G/N)``  | it held      |
| so (PBS ``place=excl``,      | GPUs, ``ceil(M/N)`` MB, each holding a whole node  | whole nodes  |
| Torque ``#excl``), its       | (the internal ``@excl`` resource: ``S`` = the      |              |
| partition is ``exclusive``,  | largest core count on every node, an ordinary unit |              |
| ``M = 0`` (Slurm's "all the  | asks 1 of it, an exclusive unit asks ``S``, so it  |              |
| memory of each node"), or it | starts only on an empty node and keeps every other |              |
| was allocated more CPUs than | job off it)                                        |              |
| it asked and exactly the     |                                                    |              |
| full CPUs of the nodes it    |                                                    |              |
| was given (sacct)            |                                                    |              |
+------------------------------+----------------------------------------------------+--------------+
| **GPU or node-count job**:   | ``N`` node-shaped units of ``ceil(P/N)`` cores,    | Slurm and    |
| ``G > 0``, or it asked for   | ``ceil(G/N)`` GPUs and ``ceil(M/N)`` MB (its       | PBS give     |
| more than one node           | per-node share, rounded up: a share that does not  | such jobs    |
| (``req_nodes > 1``)          | divide evenly is rounded up, never down)           | per-node     |
|                              |                                                    | shares       |
+------------------------------+----------------------------------------------------+--------------+
| **any other job** (CPU only, | ``P`` one-core units, each carrying ``ceil(M/P)``  | its tasks    |
| one node or no node count)   | MB (memory per core)                               | may be       |
|                              |                                                    | spread       |
+------------------------------+----------------------------------------------------+--------------+

The units of one job may share a node that has room for several (PBS's ``place=free``;
a "distinct nodes" rule cannot be a per-unit request without also blocking other jobs,
the reasoning of :mod:`dispatchlab.workload.alea`), except exclusive units, which
each hold a whole node. A **heterogeneous** Slurm job (components ``123+0``,
``123+1``) was merged by the reader into one job with the components' CPUs, nodes, GPUs
and memory summed, and is fitted by this table as one job (its components are counted in the trace's
``skipped["heterogeneous components merged"]``). An **SWF** trace on a node-level
platform with ``mem``: field 10 (requested memory per processor, KB) becomes
``ceil(KB / 1024)`` MB per one-core unit (absent, -1: no memory request); nothing else
of an SWF trace is fitted. What the log says stays in the job table (``req_procs``,
``alloc_procs``, ``req_gpus``, ``alloc_gpus``, ``req_nodes``, ``nodes_used``,
``req_mem_mb``, ``alloc_mem_mb``, ``gpu_type``, ``features``, ``exclusive``).

Eligibility
-----------
A job may run only on the nodes of its partition (the ``queue`` name as the log wrote
it; a comma list ``gpu,debug`` means any of them; none: the default partition, or every
node when the platform has no default), that have the feature ``gpu:TYPE`` of a typed
GPU request (``gres/gpu:a100``; ``a100|v100``: any of them), and that match its
``--constraint`` features (``Constraints``: ``a``, ``a&b`` (every one) or ``a|b`` (any);
any other form is an error naming the job's line and the field). Each distinct set of
eligible nodes that is not every node becomes an internal resource ``@nodes:K`` with a
large capacity on those nodes and 0 elsewhere; every unit of such a job asks 1 of it.
Node types that such a set cuts are split (node order and host names kept, each piece
keeping its type's name). Names starting with ``@`` are internal: summaries, job
tables written out and platform descriptions leave them out.

Partition names the platform does not know are an :class:`InputError` naming them and
their job counts; ``partition_map`` (``--partition-map OLD=NEW,...``) renames log names
first, ``ignore_partitions`` (``--ignore-partitions``) drops every partition
restriction. A platform that declares no partitions simulates none (a note says so).
``info.header["Partitions"]`` records which of these applied.

What cannot be served
---------------------
A job is **rejected** (never silently reduced) with its reason in the ``unservable``
column (the engine rejects it at submission with that reason and counts it) when it
asks for GPUs and the platform has none; when no node is eligible (a GPU type or
feature its partition lacks); when one unit asks more of a resource than any eligible
node has (more memory per node than any node of its partition holds); when its
requested time exceeds its partition's ``max_time``, or its node count is above the
partition's ``max_nodes`` or below its ``min_nodes`` (with a comma list, the
partitions whose limits it passes are its eligible ones). A platform without ``mem``
does not simulate memory: one warning line counts the jobs whose memory request is
dropped. A pooled platform places nothing: the table is left as it is, with one
warning line when jobs ask for GPUs or memory.

Where it is called
------------------
Every run assembled by :func:`dispatchlab.run.build.build` (``simulate``, ``compare``,
``study``, campaigns) fits its jobs to its platform. A library user who builds a
:class:`~dispatchlab.sim.Simulation` directly from a sacct or PBS table on a node-level
platform must fit it first (``fitted = fit_requests(jobs, platform)``, then simulate
``fitted.jobs`` on ``fitted.platform``): the engine refuses an unfitted cluster-log
table there with one :class:`InputError` line (:func:`needs_fitting`) instead of
running its GPU, memory and partition requests as bare cores. Fitting adds the
``unservable`` column, which marks a table as fitted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from itertools import pairwise

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.platform.hostlist import hosts as expand_hosts
from dispatchlab.platform.platform import INTERNAL_PREFIX, NodeType, Partition, Platform
from dispatchlab.workload.jobs import JobTable

__all__ = ["EXCLUSIVE", "INTERNAL_PREFIX", "NODES_PREFIX", "Fitted", "fit_requests",
           "is_internal", "needs_fitting", "parse_partition_map"]

#: The prefix of the node-eligibility resources (``@nodes:0``, ``@nodes:1``, ...).
NODES_PREFIX = "@nodes:"
#: The resource that makes exclusive jobs hold whole nodes.
EXCLUSIVE = "@excl"
#: The capacity of an eligibility resource on an eligible node (each unit asks 1;
#: nodes never host that many units).
_ELIGIBLE = 1 << 30
#: Formats whose requests are fitted in full.
CLUSTER_FORMATS = frozenset({"sacct", "pbs"})
_FEATURE_RE = re.compile(r"^[A-Za-z0-9_.:\-]+$")


def is_internal(name: str) -> bool:
    """Whether resource ``name`` is internal (``@...``), hidden from every output."""
    return name.startswith(INTERNAL_PREFIX)


def needs_fitting(jobs: JobTable, platform: Platform) -> bool:
    """Whether ``jobs`` come from a cluster log (sacct, PBS) and have not been fitted
    (no ``unservable`` column) while ``platform`` places jobs on nodes: such a table
    would run its GPU, memory and partition requests as bare cores."""
    return (jobs.info.format in CLUSTER_FORMATS and "unservable" not in jobs.columns
            and not platform.is_pooled)


def parse_partition_map(text: str | Mapping[str, str] | None) -> dict[str, str]:
    """``OLD=NEW[,OLD=NEW...]`` (``--partition-map``) as a dict; a mapping is checked and
    copied. A malformed entry is an :class:`InputError` naming ``--partition-map``."""
    if text is None:
        return {}
    items = list(text.items()) if isinstance(text, Mapping) else [
        tuple(part.split("=", 1)) if "=" in part else (part, "")
        for part in text.split(",")]
    out: dict[str, str] = {}
    for old, new in items:
        old, new = str(old).strip(), str(new).strip()
        if not old or not new or "=" in new:
            raise InputError(f"expected OLD=NEW[,OLD=NEW...], got {text!r}",
                             field="--partition-map")
        out[old] = new
    return out


@dataclass
class Fitted:
    """What :func:`fit_requests` made: the ``jobs`` (units and per-unit requests fitted,
    ``unservable`` set), the ``platform`` (node types split and the internal resources
    added where needed), ``warnings`` and ``notes`` (one line each) and ``rejected``:
    how many jobs cannot be served."""

    jobs: JobTable
    platform: Platform
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rejected: int = 0


def _column(jobs: JobTable, name: str, default: int = -1) -> np.ndarray:
    col = jobs.columns.get(name)
    if col is None:
        return np.full(len(jobs), default, dtype=np.int64)
    return np.asarray(col, dtype=np.int64)


def _text(jobs: JobTable, name: str) -> np.ndarray:
    col = jobs.columns.get(name)
    return np.full(len(jobs), "", dtype=object) if col is None else np.asarray(col)


def _ceil_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return -(-a // np.maximum(b, 1))


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


# --------------------------------------------------------------------- eligibility
def _features_test(text: str, where: dict) -> tuple[str, tuple[str, ...]]:
    """``("all" | "any", words)`` of a ``--constraint`` text (``a``, ``a&b``, ``a|b``)."""
    text = text.strip()
    if "&" in text and "|" in text:
        raise InputError(f"constraint {text!r} mixes & and |: only FEATURE, A&B or A|B "
                         "forms are simulated", **where)
    sep = "|" if "|" in text else "&"
    words = tuple(w.strip() for w in text.split(sep))
    if not all(_FEATURE_RE.match(w) for w in words):
        raise InputError(f"constraint {text!r}: only FEATURE, A&B or A|B forms are "
                         "simulated (no brackets, counts or spaces)", **where)
    return ("any" if sep == "|" else "all"), words


@dataclass(frozen=True)
class _Key:
    """What restricts a job's nodes: its partitions (None: every node), GPU types (any
    of them), feature test."""

    partitions: tuple[str, ...] | None
    gpu_types: tuple[str, ...]
    features: tuple[str, tuple[str, ...]] | None


def _partition_names(jobs: JobTable, platform: Platform, mapping: dict[str, str],
                     ignore: bool, fitted: Fitted) -> list[tuple[str, ...] | None]:
    """Each job's partitions (None: any node), after ``mapping``; unknown names raise."""
    n = len(jobs)
    names = jobs.info.codes.get("queue")
    codes = _column(jobs, "queue")
    if jobs.info.format not in CLUSTER_FORMATS or names is None:
        return [None] * n
    used = {names[c] for c in np.unique(codes).tolist() if 0 <= c < len(names)}
    if ignore:
        jobs.info.header["Partitions"] = "ignored (--ignore-partitions)"
        if used:
            fitted.notes.append("partitions ignored (--ignore-partitions): every job may "
                                "run on every node")
        return [None] * n
    if not platform.partitions:
        if used:
            shown = ", ".join(sorted(used)[:5]) + (", ..." if len(used) > 5 else "")
            fitted.notes.append(f"the platform declares no partitions: the jobs' "
                                f"partitions ({shown}) are not simulated")
            jobs.info.header["Partitions"] = "not simulated (the platform declares none)"
        return [None] * n
    per_code: list[tuple[str, ...]] = []
    unknown: dict[str, int] = {}
    counts = np.bincount(codes[codes >= 0], minlength=len(names))
    for c, text in enumerate(names):
        parts = tuple(dict.fromkeys(mapping.get(p.strip(), p.strip())
                                    for p in text.split(",") if p.strip()))
        per_code.append(parts)
        for p in parts:
            if platform.partition(p) is None and counts[c]:
                unknown[p] = unknown.get(p, 0) + int(counts[c])
    if unknown:
        shown = ", ".join(f"{name!r} ({_plural(k, 'job')})" for name, k in
                          sorted(unknown.items()))
        known = ", ".join(p.name for p in platform.partitions)
        raise InputError(f"the platform has no partition {shown} (it has {known}): map "
                         "them with --partition-map OLD=NEW or give --ignore-partitions",
                         file=jobs.info.source, field="partition")
    default = platform.default_partition
    none: tuple[str, ...] | None = (default.name,) if default is not None else None
    jobs.info.header["Partitions"] = (
        "mapped (--partition-map " + ",".join(f"{a}={b}" for a, b in mapping.items()) + ")"
        if mapping else "as the log names them")
    return [per_code[c] if c >= 0 and per_code[c] else none for c in codes.tolist()]


def _keys(jobs: JobTable, parts: list[tuple[str, ...] | None],
          typed_gpus: bool) -> tuple[list[_Key], np.ndarray]:
    """The distinct eligibility keys and each job's index into them."""
    gpu_type = _text(jobs, "gpu_type")
    features = _text(jobs, "features")
    lines = _column(jobs, "line", 0)
    index: dict[_Key, int] = {}
    out = np.empty(len(jobs), dtype=np.int64)
    tests: dict[str, tuple[str, tuple[str, ...]] | None] = {"": None}
    for k in range(len(jobs)):
        ftext = str(features[k] or "")
        if ftext not in tests:
            tests[ftext] = _features_test(ftext, {"file": jobs.info.source,
                                                  "line": int(lines[k]) or None,
                                                  "field": "Constraints"})
        types = tuple(t for t in str(gpu_type[k] or "").split("|") if t) if typed_gpus \
            else ()
        key = _Key(parts[k], types, tests[ftext])
        out[k] = index.setdefault(key, len(index))
    return list(index), out


def _eligible(key: _Key, platform: Platform, features: list[frozenset[str]],
              limits_ok: tuple[str, ...] | None) -> np.ndarray:
    """The eligible-node mask of ``key`` (partitions restricted to ``limits_ok``)."""
    n = platform.n_nodes
    if key.partitions is None:
        mask = np.ones(n, dtype=bool)
    else:
        mask = np.zeros(n, dtype=bool)
        for name in (limits_ok if limits_ok is not None else key.partitions):
            part = platform.partition(name)
            assert part is not None
            mask[list(part.nodes)] = True
    if key.gpu_types:
        wanted = {f"gpu:{t}" for t in key.gpu_types}
        mask &= np.array([bool(f & wanted) for f in features], dtype=bool)
    if key.features is not None:
        how, words = key.features
        test = all if how == "all" else any
        mask &= np.array([test(w in f for w in words) for f in features], dtype=bool)
    return mask


def _where(key: _Key) -> str:
    """Where a job may run, for reasons: ``partition 'gpu'`` or ``the platform``."""
    if key.partitions is None:
        return "the platform"
    names = ", ".join(repr(p) for p in key.partitions)
    return f"partition{'s' if len(key.partitions) > 1 else ''} {names}"


def _duration(seconds: int) -> str:
    return f"{seconds:,} s" if seconds < 7200 else f"{seconds / 3600:,.1f} h"


def _limit_problem(part: Partition, req_time: int, nodes: int) -> str | None:
    """Why a job of ``req_time`` s on ``nodes`` nodes breaks ``part``'s limits, or None."""
    if part.max_time is not None and req_time > part.max_time:
        return (f"asks {_duration(req_time)} of wall time; partition {part.name!r} allows "
                f"{_duration(part.max_time)} (max_time)")
    if part.max_nodes is not None and nodes > part.max_nodes:
        return (f"asks {nodes} nodes; partition {part.name!r} allows {part.max_nodes} "
                "(max_nodes)")
    if part.min_nodes is not None and nodes < part.min_nodes:
        return (f"asks {nodes} nodes; partition {part.name!r} needs at least "
                f"{part.min_nodes} (min_nodes)")
    return None


# -------------------------------------------------------------------------- shapes
def _recorded_cores(jobs: JobTable, rows: np.ndarray, platform: Platform,
                    cores: np.ndarray) -> dict[int, int]:
    """The full cores of the nodes each job of ``rows`` was given, where every one of
    its recorded hosts is a platform host (sacct ``NodeList``, PBS ``host:cores``)."""
    host_index = {h: k for k, h in enumerate(platform.hosts())}
    alloc = _text(jobs, "alloc_nodes")
    out: dict[int, int] = {}
    for row in rows.tolist():
        text = str(alloc[row] or "")
        try:
            names = ([p.split(":", 1)[0] for p in text.split(",")] if ":" in text
                     else expand_hosts(text))
        except InputError:
            continue
        if names and all(h in host_index for h in names):
            out[row] = int(sum(int(cores[host_index[h]]) for h in dict.fromkeys(names)))
    return out


def fit_requests(jobs: JobTable, platform: Platform, *,
                 partition_map: Mapping[str, str] | str | None = None,
                 ignore_partitions: bool = False) -> Fitted:
    """Fit the requests of ``jobs`` (a cluster log, or an SWF trace for its memory) to
    ``platform`` by the module's mapping rule; see the module docstring. The input table
    is not changed. Raises :class:`InputError` for a partition the platform does not
    know (naming it and its job count) and for a constraint of an unsupported form
    (naming the job's line and the field ``Constraints``). A table fitted already (it
    has the ``unservable`` column) is returned as it is, with ``platform``: fitting is
    done once, by the first caller (a command that compares several runs of one fitted
    table, then each run's assembly)."""
    mapping = parse_partition_map(partition_map)
    fitted = Fitted(jobs, platform)
    if "unservable" in jobs.columns:
        return fitted
    fmt = jobs.info.format
    n = len(jobs)
    if platform.is_pooled or fmt not in CLUSTER_FORMATS | {"swf"} or n == 0:
        if platform.is_pooled and fmt in CLUSTER_FORMATS:
            asks = int(((_column(jobs, "req_gpus") > 0)
                        | (_column(jobs, "req_mem_mb") > 0)).sum())
            if asks:
                fitted.warnings.append(
                    f"the platform is pooled (no nodes): the GPU and memory requests of "
                    f"{_plural(asks, 'job')} are not simulated")
        return fitted
    if fmt == "swf":
        return _fit_swf_memory(jobs, platform, fitted)
    info = replace(jobs.info, header=dict(jobs.info.header), dropped=dict(jobs.info.dropped))
    work = JobTable(columns=dict(jobs.columns), resources={}, info=info)
    names = list(platform.resource_names)
    capacity = platform.capacity_matrix()
    col = {r: k for k, r in enumerate(names)}
    cores = capacity[:, col["core"]] if "core" in col else np.zeros(platform.n_nodes,
                                                                     dtype=np.int64)
    # -- what the log asks
    procs = np.maximum(_column(jobs, "units"), 1)
    gpus = np.maximum(_column(jobs, "req_gpus"), 0)
    mem = _column(jobs, "req_mem_mb")
    req_nodes = _column(jobs, "req_nodes")
    nodes = np.where(req_nodes > 0, req_nodes, np.maximum(_column(jobs, "nodes_used"), 1))
    req_time = _column(jobs, "requested_time")
    reasons = np.full(n, "", dtype=object)
    # -- partitions and eligibility keys
    parts = _partition_names(work, platform, mapping, ignore_partitions, fitted)
    node_features = platform.node_features()
    typed_gpus = any(f.startswith("gpu:") for fs in node_features for f in fs)
    keys, key_of = _keys(jobs, parts, typed_gpus)
    if not typed_gpus:
        typed = int((_text(jobs, "gpu_type") != "").sum())
        if typed:
            fitted.warnings.append(f"the platform names no GPU types (node features "
                                   f"gpu:TYPE): the GPU types of {_plural(typed, 'job')} "
                                   "are not simulated")
    # -- exclusive jobs
    exclusive = _column(jobs, "exclusive") == 1
    exclusive |= mem == 0
    for k, key in enumerate(keys):
        if key.partitions is not None and all(
                platform.partition(p).exclusive for p in key.partitions):  # type: ignore[union-attr]
            exclusive |= key_of == k
    alloc = _column(jobs, "alloc_procs")
    req_procs = _column(jobs, "req_procs")
    candidates = np.flatnonzero(~exclusive & (alloc > req_procs) & (req_procs > 0))
    if candidates.size:
        full = _recorded_cores(jobs, candidates, platform, cores)
        for row, total in full.items():
            if alloc[row] == total:
                exclusive[row] = True
    shaped = exclusive | (gpus > 0) | (req_nodes > 1)
    units = np.where(shaped, nodes, procs)
    per_core = np.where(shaped, _ceil_div(procs, nodes), 1)
    per_gpu = np.where(shaped, _ceil_div(gpus, nodes), 0)
    per_mem = np.where(mem > 0, _ceil_div(np.maximum(mem, 0), units), 0)
    resources: dict[str, np.ndarray] = {"core": per_core.astype(np.int64)}
    # -- resources the platform lacks
    if (gpus > 0).any():
        if "gpu" in col:
            resources["gpu"] = per_gpu.astype(np.int64)
        else:
            lacking = gpus > 0
            reasons[lacking] = [f"asks {_plural(g, 'GPU')}; the platform has none"
                                for g in gpus[lacking].tolist()]
            fitted.warnings.append(f"the platform has no gpu resource: "
                                   f"{_plural(int(lacking.sum()), 'job')} asking for GPUs "
                                   "are rejected")
    if (per_mem > 0).any():
        if "mem" in col:
            resources["mem"] = per_mem.astype(np.int64)
        else:
            fitted.warnings.append(f"the platform has no mem resource: the memory requests "
                                   f"of {_plural(int((per_mem > 0).sum()), 'job')} are not "
                                   "simulated")
    # -- eligibility per key (partition limits first)
    masks: list[np.ndarray] = []
    mask_of_row = np.full(n, -1, dtype=np.int64)  # -1: every node is eligible
    for k, key in enumerate(keys):
        rows = np.flatnonzero(key_of == k)
        if key.partitions is None:
            limits = None
        else:
            passing: dict[tuple[str, ...], list[int]] = {}
            first_problem: dict[int, str] = {}
            for row in rows.tolist():
                ok = []
                for p in key.partitions:
                    problem = _limit_problem(platform.partition(p),  # type: ignore[arg-type]
                                             int(req_time[row]), int(nodes[row]))
                    if problem is None:
                        ok.append(p)
                    elif row not in first_problem:
                        first_problem[row] = problem
                if ok:
                    passing.setdefault(tuple(ok), []).append(row)
                elif not reasons[row]:
                    reasons[row] = first_problem[row]
            # the common case: the jobs of the key pass in the same partitions
            limits = key.partitions
            if len(passing) > 1:  # rare: split the key by the partitions passed
                for names_ok, group in passing.items():
                    sub = _Key(names_ok, key.gpu_types, key.features)
                    mask = _eligible(sub, platform, node_features, None)
                    _assign(mask, np.asarray(group), masks, mask_of_row, reasons, sub)
                continue
            if passing:
                limits = next(iter(passing))
        mask = _eligible(key, platform, node_features, limits)
        _assign(mask, rows, masks, mask_of_row, reasons,
                _Key(limits, key.gpu_types, key.features) if limits else key)
    # -- what no eligible node can hold
    _too_big(resources, mask_of_row, masks, capacity, col, shaped, reasons, keys, key_of)
    # -- per-job eligibility resources (only where needed): each unit asks 1 of its set's
    masks, mask_of_row = _needed(masks, mask_of_row, resources, capacity, col, reasons)
    new_names = [f"{NODES_PREFIX}{m}" for m in range(len(masks))]
    for m, name in enumerate(new_names):
        resources[name] = (mask_of_row == m).astype(np.int64)
    # -- exclusivity
    share = int(cores.max()) if cores.size else 1
    if exclusive.any():
        resources[EXCLUSIVE] = np.where(exclusive, share, 1).astype(np.int64)
    fitted.platform = _split_platform(platform, masks, new_names,
                                      share if exclusive.any() else 0)
    cols = dict(jobs.columns)
    cols["units"] = units.astype(np.int64)
    cols["unservable"] = reasons
    work = JobTable(columns=cols, resources=resources, info=work.info)
    fitted.jobs = work
    fitted.rejected = int((reasons != "").sum())
    if fitted.rejected:
        fitted.warnings.append(_rejections(reasons))
    het = int(sum(1 for r in _text(jobs, "job_ref").tolist() if str(r).endswith("+")))
    if het:
        fitted.notes.append(f"{_plural(het, 'heterogeneous job')} fitted as one job each "
                            "(components' CPUs, nodes, GPUs and memory summed)")
    return fitted


def _assign(mask: np.ndarray, rows: np.ndarray, masks: list[np.ndarray],
            mask_of_row: np.ndarray, reasons: np.ndarray, key: _Key) -> None:
    """Record ``rows``' eligible nodes ``mask`` in ``mask_of_row``: nothing when every
    node is eligible, the reason when none is, else the index of an equal mask in
    ``masks`` (appended when new)."""
    if mask.all():
        return
    if not mask.any():
        what = []
        if key.gpu_types:
            what.append("GPU type " + "|".join(key.gpu_types))
        if key.features is not None:
            what.append("features " + ("|" if key.features[0] == "any" else "&")
                        .join(key.features[1]))
        text = f"asks {' and '.join(what) or 'nodes'}: no node of {_where(key)} has it"
        for row in rows.tolist():
            if not reasons[row]:
                reasons[row] = text
        return
    for m, other in enumerate(masks):
        if np.array_equal(other, mask):
            mask_of_row[rows] = m
            return
    masks.append(mask)
    mask_of_row[rows] = len(masks) - 1


def _too_big(resources: dict[str, np.ndarray], mask_of_row: np.ndarray,
             masks: list[np.ndarray], capacity: np.ndarray, col: dict[str, int],
             shaped: np.ndarray, reasons: np.ndarray, keys: list[_Key],
             key_of: np.ndarray) -> None:
    """Set the reason of every job one unit of which no eligible node can hold."""
    for r in ("core", "gpu", "mem"):
        if r not in resources or r not in col:
            continue
        per_unit = resources[r]
        for m in range(-1, len(masks)):
            rows = np.flatnonzero(mask_of_row == m)
            if rows.size == 0:
                continue
            nodes = capacity[:, col[r]] if m < 0 else capacity[masks[m], col[r]]
            largest = int(nodes.max()) if nodes.size else 0
            over = rows[per_unit[rows] > largest]
            for row in over.tolist():
                if reasons[row]:
                    continue
                v = int(per_unit[row])
                unit = {"core": "core" if v == 1 else "cores", "gpu": "GPU" if v == 1 else
                        "GPUs", "mem": "MB of memory"}[r]
                per = ("on one node" if r == "core" else
                       "per node" if shaped[row] else "per core")
                reasons[row] = (f"asks {v:,} {unit} {per}; the largest node of "
                                f"{_where(keys[key_of[row]])} has {largest:,}")


def _needed(masks: list[np.ndarray], mask_of_row: np.ndarray,
            resources: dict[str, np.ndarray], capacity: np.ndarray, col: dict[str, int],
            reasons: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """The eligibility sets some job needs, and each job's index into them (-1: none).

    A job needs none when it is rejected, or when every node that can hold one of its
    units at all (its per-unit cores, GPUs, memory within the node's capacity) is
    eligible: a GPU job of a partition holding every GPU node is kept off the CPU nodes
    by its GPUs already. Leaving such restrictions out changes no schedule and spares
    the dispatchers a resource column (each costs them time on every pass)."""
    out = np.where(reasons != "", -1, mask_of_row)
    public = [r for r in resources if r in col]
    if not public:
        return masks, out
    req = np.stack([resources[r] for r in public], axis=1)
    cap = capacity[:, [col[r] for r in public]]
    for m, mask in enumerate(masks):
        rows = np.flatnonzero(out == m)
        if rows.size == 0:
            continue
        shapes, inverse = np.unique(req[rows], axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        for k, shape in enumerate(shapes):
            if not ((cap >= shape).all(axis=1) & ~mask).any():
                out[rows[inverse == k]] = -1
    used = sorted(set(out[out >= 0].tolist()))
    renumber = np.full(len(masks) + 1, -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    return [masks[m] for m in used], renumber[out]


def _rejections(reasons: np.ndarray) -> str:
    """One line: how many jobs are rejected, by kind of reason."""
    kinds: dict[str, int] = {}
    for text in reasons[reasons != ""].tolist():
        kind = re.sub(r"\b[0-9][0-9,.]*\b", "N", text.split(";")[0])
        kind = re.sub(r"'[^']*'", "P", kind)
        kinds[kind] = kinds.get(kind, 0) + 1
    total = sum(kinds.values())
    shown = "; ".join(f"{k}: {v:,}" for k, v in sorted(kinds.items(), key=lambda x: -x[1])[:4])
    return (f"{_plural(total, 'job')} cannot be served by the platform and are rejected "
            f"({shown})")


def _split_platform(platform: Platform, masks: list[np.ndarray], names: list[str],
                    share: int) -> Platform:
    """``platform`` with the eligibility resources ``names`` (capacity on ``masks``)
    and, when ``share`` > 0, :data:`EXCLUSIVE` (``share`` on every node); node types are
    split into runs of consecutive nodes with the same eligibility (order, names and
    host names kept)."""
    if not masks and not share:
        return platform
    stacked = np.stack(masks, axis=1) if masks else np.zeros((platform.n_nodes, 0), bool)
    hosts = platform.hosts()
    types: list[NodeType] = []
    start = 0
    for nt in platform.node_types:
        rows = stacked[start:start + nt.count]
        cut = [0, *(np.flatnonzero(np.any(rows[1:] != rows[:-1], axis=1)) + 1).tolist(),
               nt.count]
        for a, b in pairwise(cut):
            cap = dict(nt.capacity)
            for name, bit in zip(names, rows[a].tolist(), strict=True):
                cap[name] = _ELIGIBLE if bit else 0
            if share:
                cap[EXCLUSIVE] = share
            types.append(replace(nt, count=b - a, capacity=cap,
                                 hosts=tuple(hosts[start + a:start + b])))
        start += nt.count
    return replace(platform, node_types=tuple(types),
                   resource_names=tuple(platform.resource_names))


def _fit_swf_memory(jobs: JobTable, platform: Platform, fitted: Fitted) -> Fitted:
    """An SWF trace on a node-level platform with ``mem``: field 10 (KB per processor)
    as MB per one-core unit, rounded up; rejected when no node holds it."""
    if "mem" not in platform.resource_names or "req_mem" not in jobs.columns:
        return fitted
    kb = np.asarray(jobs["req_mem"], dtype=np.int64)
    if not (kb > 0).any():
        return fitted
    per_unit = np.where(kb > 0, -(-kb // 1024), 0)
    cols = dict(jobs.columns)
    resources = dict(jobs.resources)
    resources["mem"] = per_unit.astype(np.int64)
    largest = int(platform.capacity_matrix()[:, platform.resource_names.index("mem")].max())
    over = per_unit > largest
    reasons = np.full(len(jobs), "", dtype=object)
    reasons[over] = [f"asks {v:,} MB of memory per core; the largest node of the platform "
                     f"has {largest:,}" for v in per_unit[over].tolist()]
    cols["unservable"] = reasons
    fitted.jobs = JobTable(columns=cols, resources=resources,
                           info=replace(jobs.info, header=dict(jobs.info.header)))
    fitted.rejected = int(over.sum())
    if fitted.rejected:
        fitted.warnings.append(_rejections(reasons))
    fitted.notes.append(f"memory: {_plural(int((kb > 0).sum()), 'job')} ask memory per "
                        "processor (SWF field 10), simulated as MB per core")
    return fitted

