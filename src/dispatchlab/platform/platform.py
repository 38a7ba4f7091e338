"""Platforms: nodes grouped by type, each with a capacity per named resource.

A :class:`Platform` is a list of node types; every node of a type has the same
capacity vector (``core``, ``gpu``, ``mic``, ``mem``, ... any names, integer amounts).
Resource names are kept in a fixed order (``resource_names``), so a node's capacity is
a row of the ``capacity`` matrix (nodes x resources), nodes numbered in type order.

A *pooled* platform is one big node: units may share it freely. It is the default for
SWF traces (``MaxProcs`` cores), where placement is not simulated.

A platform may also carry a **queue table** (``queues``): queue name -> expected
waiting time (EWT) in integer seconds, used by dispatchers that rank jobs by their
queue (:func:`dispatchlab.platform.queues.job_ewt`).

This module is pure data: it reads no file. The readers live beside it: platform
files (TOML, PA-HPC-SIM node files) and a trace's default platform in
:mod:`dispatchlab.platform.files`, Alea machine files in :mod:`dispatchlab.platform.alea`,
the Eurora preset and PA-HPC-SIM files in :mod:`dispatchlab.platform.eurora`. The
classmethods that read files (``from_file``, ``from_toml``, ``from_dict``,
``from_trace_header``, ``eurora``) remain as deprecated shims of those functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from itertools import pairwise

import numpy as np

from dispatchlab.core.deprecation import moved_attributes, moved_callable
from dispatchlab.core.errors import InputError

#: The most nodes a platform may have (all types together): 2**20, some 6 times the
#: largest machine today (Fugaku's 158,976 nodes); the capacity matrix holds a row per
#: node, so a larger count would only allocate memory for nothing.
MAX_NODES = 1 << 20
#: The largest amount of one resource on one node: 2**40. With :data:`MAX_NODES`, no
#: sum of capacities (2**60 at most) can overflow int64.
MAX_CAPACITY = 1 << 40
#: Resource names starting with this are internal to a run (the request fitting's
#: node-eligibility resources, :mod:`dispatchlab.workload.requests`): descriptions,
#: summaries and written job tables leave them out.
INTERNAL_PREFIX = "@"


def check_node_type(name: str, count: object, capacity: object, *, source: str | None,
                    where: str) -> None:
    """An :class:`InputError` (``file=source``, field ``where.count`` or
    ``where.capacity[.RESOURCE]``) unless ``count`` is an integer in ``1..MAX_NODES``
    and ``capacity`` a non-empty mapping of integers in ``0..MAX_CAPACITY``, not all 0
    (a node offering nothing would reject every job)."""
    if (isinstance(count, bool) or not isinstance(count, int | np.integer)
            or not 0 < count <= MAX_NODES):
        shown = count if not isinstance(count, int) or abs(count) < 10**30 else "huge"
        raise InputError(f"node type {name!r}: count must be an integer from 1 to "
                         f"{MAX_NODES:,}, got {shown!r}", file=source, field=f"{where}.count")
    if not isinstance(capacity, Mapping) or not capacity:
        raise InputError(f"node type {name!r}: capacity must be a non-empty table",
                         file=source, field=f"{where}.capacity")
    for r, v in capacity.items():
        if (isinstance(v, bool) or not isinstance(v, int | np.integer)
                or not 0 <= v <= MAX_CAPACITY):
            shown = v if not isinstance(v, int) or abs(v) < 10**30 else "huge"
            raise InputError(f"node type {name!r}: must be an integer from 0 to "
                             f"{MAX_CAPACITY:,}, got {shown!r}", file=source,
                             field=f"{where}.capacity.{r}")
    if not any(capacity.values()):
        raise InputError(f"node type {name!r}: every capacity is 0 (its nodes could run no "
                         "job)", file=source, field=f"{where}.capacity")


def check_ewt(value: object, *, source: str | None = None, line: int | None = None,
              field: str | None = None) -> int:
    """``value`` as an EWT: an integer number of seconds > 0 (``bool`` is refused), else
    :class:`InputError` located at ``source``/``line``/``field``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value <= 0:
        raise InputError(f"expected waiting time must be a positive integer number of "
                         f"seconds, got {value!r}", file=source, line=line, field=field)
    return int(value)


def queue_table(queues: Mapping[str, object] | Iterable[tuple[str, object]], *,
                source: str | None = None,
                field: str = "queues") -> tuple[tuple[str, int], ...]:
    """A validated, immutable queue table: ``((name, ewt_seconds), ...)`` in the given
    order. Names are non-empty strings without whitespace, unique; EWTs pass
    :func:`check_ewt`. Errors name ``source`` and ``field.NAME``."""
    items = list(queues.items()) if isinstance(queues, Mapping) else list(queues)
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, tuple) or len(item) != 2:
            raise InputError(f"a queue entry must be a (name, seconds) pair, got {item!r}",
                             file=source, field=field)
        name, ewt = item
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise InputError(f"a queue name must be a non-empty word, got {name!r}",
                             file=source, field=field)
        if name in seen:
            raise InputError(f"queue {name!r} given twice", file=source, field=f"{field}.{name}")
        seen.add(name)
        out.append((name, check_ewt(ewt, source=source, field=f"{field}.{name}")))
    return tuple(out)


@dataclass(frozen=True)
class NodeType:
    """``count`` identical nodes with ``capacity`` (resource name -> amount per node).

    ``efficiency_rank`` (integer >= 0, default 0): how energy-efficient the type's nodes
    are, **lower = more efficient**; allocators that prefer efficient nodes (Borghesi et al. 2018's
    ``energy-consolidate``) read it through :meth:`Platform.efficiency_ranks`. Equal ranks
    (the default for every platform but Eurora's) make no preference."""

    name: str
    count: int
    capacity: dict[str, int]
    idle_power: float | None = None  # watts, for power-aware extensions
    max_power: float | None = None  # watts
    efficiency_rank: int = 0
    #: Slurm's node ``Weight``: allocators take nodes of **lower weight first** (their
    #: own rule among nodes of equal weight); integer >= 0, default 1 (Slurm's default).
    weight: int = 1
    #: node features: ``Feature=`` words of ``slurm.conf`` (matched by a job's
    #: ``--constraint``) and, for typed GPUs, ``gpu:TYPE`` (``Gres=gpu:a100:4`` gives
    #: ``gpu:a100``): a typed GPU request runs only on nodes with that feature.
    features: tuple[str, ...] = ()
    #: the host names of the type's nodes, in node order (``count`` names, unique over
    #: the platform), or empty: then nodes are named ``TYPE-K`` (:meth:`Platform.hosts`).
    hosts: tuple[str, ...] = ()


@dataclass(frozen=True)
class Partition:
    """A named set of nodes a job may be restricted to (Slurm partition, PBS queue).

    ``nodes``: the node indices (platform node order), ascending, unique, non-empty.
    ``default``: the partition of a job whose log names none (at most one per platform).
    ``max_time``: the longest wall time a job may request in it (integer seconds), or
    ``None`` for no limit; ``max_nodes`` / ``min_nodes``: node-count limits of a job, or
    ``None``. ``exclusive`` (Slurm ``OverSubscribe=EXCLUSIVE``): a job of the partition
    holds whole nodes. ``priority_tier`` and ``priority_job_factor`` are kept from
    ``slurm.conf`` for the scheduler emulation to come; nothing reads them yet."""

    name: str
    nodes: tuple[int, ...]
    default: bool = False
    max_time: int | None = None
    max_nodes: int | None = None
    min_nodes: int | None = None
    exclusive: bool = False
    priority_tier: int | None = None
    priority_job_factor: int | None = None


def check_partitions(partitions: Iterable[Partition], n_nodes: int, *,
                     source: str | None = None) -> tuple[Partition, ...]:
    """``partitions`` as a validated tuple: names non-empty words without whitespace or
    commas and unique, at most one default, nodes ascending unique indices in
    ``0..n_nodes-1`` (non-empty), limits integers > 0 (or ``None``). Errors are
    :class:`InputError` naming ``source`` and ``partition.NAME[.FIELD]``."""
    out = tuple(partitions)
    seen: set[str] = set()
    defaults = []
    for p in out:
        if not isinstance(p, Partition):
            raise InputError(f"a partition must be a Partition, got {p!r}", file=source,
                             field="partition")
        if (not isinstance(p.name, str) or not p.name
                or any(c.isspace() or c == "," for c in p.name)):
            raise InputError(f"a partition name must be a non-empty word without commas, "
                             f"got {p.name!r}", file=source, field="partition")
        where = f"partition.{p.name}"
        if p.name in seen:
            raise InputError(f"partition {p.name!r} given twice", file=source, field=where)
        seen.add(p.name)
        if p.default:
            defaults.append(p.name)
        nodes = p.nodes
        if (not nodes or any(isinstance(k, bool) or not isinstance(k, int | np.integer)
                             or not 0 <= k < n_nodes for k in nodes)
                or any(a >= b for a, b in pairwise(nodes))):
            raise InputError(f"partition {p.name!r}: nodes must be ascending unique node "
                             f"indices from 0 to {n_nodes - 1}", file=source,
                             field=f"{where}.nodes")
        for key in ("max_time", "max_nodes", "min_nodes"):
            v = getattr(p, key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer)
                                  or v <= 0):
                raise InputError(f"partition {p.name!r}: {key} must be an integer > 0, "
                                 f"got {v!r}", file=source, field=f"{where}.{key}")
    if len(defaults) > 1:
        raise InputError(f"more than one default partition: {', '.join(defaults)}",
                         file=source, field=f"partition.{defaults[1]}.default")
    return out


@dataclass(frozen=True)
class Platform:
    """A set of node types. ``is_pooled=True`` marks a single shared pool (no placement).

    Nodes are numbered 0.. in node-type order (the first type's nodes first).
    ``queues`` is the queue table, an immutable tuple of ``(name, ewt_seconds)`` pairs
    (EWT: expected waiting time, integer seconds > 0; names unique, kept in the given
    order; default: no queues). A mapping may be passed; it is stored as such a tuple.
    Read it with :meth:`ewt` or :attr:`queue_ewt` (a dict copy).
    """

    node_types: tuple[NodeType, ...]
    name: str = "platform"
    is_pooled: bool = False
    resource_names: tuple[str, ...] = field(default=())
    queues: tuple[tuple[str, int], ...] = ()
    #: the base of caps given as fractions (W); None: nodes x maximum node power
    max_dynamic_power: float | None = None
    #: the partitions (:class:`Partition`), in the order given; empty: none (every job
    #: may run on every node)
    partitions: tuple[Partition, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "queues", queue_table(self.queues))
        if not self.node_types:
            raise InputError("a platform needs at least one node type")
        names: list[str] = list(self.resource_names)
        for k, nt in enumerate(self.node_types):
            check_node_type(nt.name, nt.count, nt.capacity, source=None,
                            where=f"node_type[{k}]")
            for r in nt.capacity:
                if r not in names:
                    names.append(r)
            rank = nt.efficiency_rank
            if isinstance(rank, bool) or not isinstance(rank, int | np.integer) or rank < 0:
                raise InputError(f"node type {nt.name!r}: efficiency_rank must be an integer "
                                 f">= 0, got {rank!r}")
            w = nt.weight
            if isinstance(w, bool) or not isinstance(w, int | np.integer) or w < 0:
                raise InputError(f"node type {nt.name!r}: weight must be an integer >= 0, "
                                 f"got {w!r}")
            if nt.hosts and len(nt.hosts) != nt.count:
                raise InputError(f"node type {nt.name!r}: {len(nt.hosts)} host names for "
                                 f"{nt.count} nodes")
        named = [h for nt in self.node_types for h in nt.hosts]
        if len(set(named)) != len(named):
            dup = next(h for k, h in enumerate(named) if h in named[:k])
            raise InputError(f"host name {dup!r} is given to two nodes")
        if sum(int(nt.count) for nt in self.node_types) > MAX_NODES:
            raise InputError(f"the platform has more than {MAX_NODES:,} nodes",
                             field="node_type")
        object.__setattr__(self, "resource_names", tuple(names))
        object.__setattr__(self, "partitions",
                           check_partitions(self.partitions, self.n_nodes))

    # --- queues -------------------------------------------------------------------
    @property
    def queue_ewt(self) -> dict[str, int]:
        """Queue name -> EWT in seconds (a new dict, in table order)."""
        return dict(self.queues)

    def ewt(self, queue: str, default: int | None = None) -> int | None:
        """The EWT (s) of ``queue``, or ``default`` when the table does not name it."""
        for name, seconds in self.queues:
            if name == queue:
                return seconds
        return default

    def with_queues(self, queues: Mapping[str, int] | Iterable[tuple[str, int]]) -> Platform:
        """This platform with its queue table replaced by ``queues`` (validated)."""
        return replace(self, queues=queue_table(queues))

    # --- constructors -------------------------------------------------------------
    @classmethod
    def pooled(cls, cores: int, name: str | None = None) -> Platform:
        """One pool of ``cores`` cores (SWF default: MaxProcs)."""
        if cores <= 0:
            raise InputError(f"cores must be > 0, got {cores}")
        return cls((NodeType("pool", 1, {"core": int(cores)}),), name=name or f"pool-{cores}",
                   is_pooled=True)

    @classmethod
    def homogeneous(cls, nodes: int, cores_per_node: int, **other: int) -> Platform:
        """``nodes`` identical nodes of ``cores_per_node`` cores (and ``other`` resources)."""
        if nodes <= 0 or cores_per_node <= 0:
            raise InputError(
                f"nodes and cores per node must be > 0, got {nodes} x {cores_per_node}")
        cap = {"core": int(cores_per_node), **{k: int(v) for k, v in other.items()}}
        return cls((NodeType("node", int(nodes), cap),), name=f"{nodes}x{cores_per_node}")

    # --- deprecated readers (moved to dispatchlab.platform.files / .eurora) -------
    # Static methods, so each call's MovedWarning points at the caller's line; called on
    # the class they behave as the old classmethods did (always building a Platform).
    from_file = staticmethod(moved_callable(
        "dispatchlab.platform.Platform.from_file", "dispatchlab.platform.files:read_platform"))
    from_toml = staticmethod(moved_callable(
        "dispatchlab.platform.Platform.from_toml",
        "dispatchlab.platform.files:read_platform_toml"))
    from_dict = staticmethod(moved_callable(
        "dispatchlab.platform.Platform.from_dict",
        "dispatchlab.platform.files:platform_from_table"))
    from_trace_header = staticmethod(moved_callable(
        "dispatchlab.platform.Platform.from_trace_header",
        "dispatchlab.platform.files:trace_platform"))
    eurora = staticmethod(moved_callable(
        "dispatchlab.platform.Platform.eurora", "dispatchlab.platform.eurora:eurora_platform"))

    # --- power ---------------------------------------------------------------------
    @property
    def max_node_power(self) -> float | None:
        """The largest ``max_power`` of the node types (W), None when none is set."""
        values = [nt.max_power for nt in self.node_types if nt.max_power is not None]
        return max(values) if values else None

    @property
    def dynamic_power_base(self) -> float | None:
        """The base of caps given as fractions (W): ``max_dynamic_power`` when set, else
        the sum over node types of count x ``max_power`` (None when a type lacks it)."""
        if self.max_dynamic_power is not None:
            return float(self.max_dynamic_power)
        if any(nt.max_power is None for nt in self.node_types):
            return None
        return float(sum(nt.count * nt.max_power for nt in self.node_types))

    @classmethod
    def marconi100(cls) -> Platform:
        """CINECA Marconi100 as Carastan-Santos et al. 2024 describe it: 980 nodes of 32 cores and
        4 GPUs, 2,100 W maximum node power (the largest node power in its 2022 dataset), and
        ``max_dynamic_power`` 955,080 W (the highest dynamic power of that dataset: the
        base of its caps). The idle node power is not given by the paper: not set."""
        return cls((NodeType("m100", 980, {"core": 32, "gpu": 4}, None, 2100.0),),
                   name="marconi100", max_dynamic_power=955_080.0)

    @classmethod
    def marconi100_nodes(cls) -> Platform:
        """Marconi100 with **whole nodes as the unit** (``marconi100-nodes``): 980 nodes
        of one ``core`` each, a job's units being the nodes it holds exclusively, as in
        Carastan-Santos et al. 2024's filtered data (jobs sharing a node were removed) and its
        Batsim platform. Same power facts as :meth:`marconi100` (2,100 W per node,
        ``max_dynamic_power`` 955,080 W). Being core-only with one-core units, it is
        simulated by counting, so the power-capped dispatchers run on it (ours)."""
        return cls((NodeType("m100-node", 980, {"core": 1}, None, 2100.0),),
                   name="marconi100-nodes", max_dynamic_power=955_080.0)

    # --- derived facts -------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return sum(nt.count for nt in self.node_types)

    def capacity_matrix(self) -> np.ndarray:
        """int64 matrix (nodes x resources), nodes in node-type order."""
        rows = []
        for nt in self.node_types:
            row = [int(nt.capacity.get(r, 0)) for r in self.resource_names]
            rows.extend([row] * nt.count)
        return np.asarray(rows, dtype=np.int64).reshape(self.n_nodes, len(self.resource_names))

    def efficiency_ranks(self) -> np.ndarray:
        """The ``efficiency_rank`` of every node (int64, nodes in node-type order; lower =
        more energy-efficient; all 0 unless a node type sets it)."""
        return np.repeat(np.array([int(nt.efficiency_rank) for nt in self.node_types],
                                  dtype=np.int64),
                         [nt.count for nt in self.node_types])

    def node_weights(self) -> np.ndarray:
        """The Slurm ``Weight`` of every node (int64, node order; lower is allocated
        first; all 1 unless a node type sets it)."""
        return np.repeat(np.array([int(nt.weight) for nt in self.node_types],
                                  dtype=np.int64),
                         [nt.count for nt in self.node_types])

    def has_weights(self) -> bool:
        """Whether node weights differ (else they make no preference)."""
        return len({int(nt.weight) for nt in self.node_types}) > 1

    def hosts(self) -> list[str]:
        """Every node's host name, node order: the type's ``hosts`` when given, else
        ``TYPE-K`` (``K`` counting the type's nodes from 0)."""
        out: list[str] = []
        for nt in self.node_types:
            out.extend(nt.hosts or [f"{nt.name}-{k}" for k in range(nt.count)])
        return out

    def node_features(self) -> list[frozenset[str]]:
        """Every node's features (node order)."""
        out: list[frozenset[str]] = []
        for nt in self.node_types:
            out.extend([frozenset(nt.features)] * nt.count)
        return out

    def partition(self, name: str) -> Partition | None:
        """The partition called ``name``, or ``None``."""
        return next((p for p in self.partitions if p.name == name), None)

    @property
    def default_partition(self) -> Partition | None:
        """The partition marked ``default``, or ``None``."""
        return next((p for p in self.partitions if p.default), None)

    def total_capacity(self) -> dict[str, int]:
        """Resource name -> total over all nodes."""
        tot = self.capacity_matrix().sum(axis=0)
        return {r: int(tot[k]) for k, r in enumerate(self.resource_names)}

    def is_core_only(self) -> bool:
        """True when ``core`` is the only resource with non-zero capacity."""
        return all(v == 0 for r, v in self.total_capacity().items() if r != "core")

    def describe(self) -> str:
        """``N x TYPE (capacities); ...`` (or the pooled totals). Internal resources
        (:data:`INTERNAL_PREFIX`) are left out, and consecutive node types alike once
        they are (pieces of one type split by the request fitting) are counted as one."""
        if self.is_pooled:
            return ", ".join(f"{v:,} {r}s" for r, v in self.total_capacity().items()) + \
                " (pooled)"
        parts: list[list] = []
        for nt in self.node_types:
            cap = ", ".join(f"{v:,} {r}" for r, v in nt.capacity.items()
                            if not r.startswith(INTERNAL_PREFIX))
            if parts and parts[-1][1:] == [nt.name, cap]:
                parts[-1][0] += nt.count
            else:
                parts.append([nt.count, nt.name, cap])
        return "; ".join(f"{count} x {name} ({cap})" for count, name, cap in parts)



#: ``load_platform_file`` moved to :mod:`dispatchlab.platform.files` (old name kept with a
#: warning until :data:`dispatchlab.core.deprecation.REMOVED_IN`).
__getattr__ = moved_attributes(
    "dispatchlab.platform.platform",
    {"load_platform_file": "dispatchlab.platform.files:load_platform_file"})
