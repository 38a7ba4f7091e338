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

Platform files (:meth:`Platform.from_file`, ``--platform``): a TOML file
(:meth:`Platform.from_toml`) or a PA-HPC-SIM node file
(:func:`dispatchlab.platform.eurora.read_eurora_nodes`), each also as a member of a tar
archive, ``ARCHIVE#MEMBER`` (see :mod:`dispatchlab.platform.eurora`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.core.errors import InputError, parse_toml

#: The most nodes a platform may have (all types together): 2**20, some 6 times the
#: largest machine today (Fugaku's 158,976 nodes); the capacity matrix holds a row per
#: node, so a larger count would only allocate memory for nothing.
MAX_NODES = 1 << 20
#: The largest amount of one resource on one node: 2**40. With :data:`MAX_NODES`, no
#: sum of capacities (2**60 at most) can overflow int64.
MAX_CAPACITY = 1 << 40


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

    def __post_init__(self) -> None:
        from dispatchlab.platform.queues import queue_table

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
        if sum(int(nt.count) for nt in self.node_types) > MAX_NODES:
            raise InputError(f"the platform has more than {MAX_NODES:,} nodes",
                             field="node_type")
        object.__setattr__(self, "resource_names", tuple(names))

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
        from dispatchlab.platform.queues import queue_table

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
    def from_trace_header(cls, info: Any, advice: str = "give a platform") -> Platform:
        """The default platform of a trace. ``info`` is the trace's ``TraceInfo``.

        When ``info.companions`` names a ``machines`` file (Alea's machine file, read
        with the trace), the node-level platform it describes
        (:func:`dispatchlab.platform.alea.read_alea_machines`); otherwise one pool of the
        header's MaxProcs cores (MaxNodes when MaxProcs is absent). A header with
        neither raises :class:`InputError` ending with ``advice``."""
        machines = (getattr(info, "companions", None) or {}).get("machines")
        if machines:
            from dispatchlab.platform.alea import read_alea_machines

            return read_alea_machines(machines)
        cores = info.max_procs or info.max_nodes
        if not cores:
            raise InputError(f"the trace header has neither MaxProcs nor MaxNodes; {advice}",
                             file=info.source)
        return cls.pooled(cores, name=f"MaxProcs={cores}" if info.max_procs else
                          f"MaxNodes={cores}")

    @classmethod
    def homogeneous(cls, nodes: int, cores_per_node: int, **other: int) -> Platform:
        """``nodes`` identical nodes of ``cores_per_node`` cores (and ``other`` resources)."""
        if nodes <= 0 or cores_per_node <= 0:
            raise InputError(
                f"nodes and cores per node must be > 0, got {nodes} x {cores_per_node}")
        cap = {"core": int(cores_per_node), **{k: int(v) for k, v in other.items()}}
        return cls((NodeType("node", int(nodes), cap),), name=f"{nodes}x{cores_per_node}")

    @classmethod
    def eurora(cls) -> Platform:
        """The Eurora prototype (CINECA) exactly as PA-HPC-SIM's ``nodes_#64``, with the
        queues of its ``system_queues`` (as PA-HPC-SIM's code reads them).

        64 nodes of 16 cores and 32 GiB, **in this order** (the traces' used-node ids
        refer to it): nodes 0-31 are type ``mic-2.1GHz`` (2 MICs, 0 GPUs, 2.1 GHz cores),
        nodes 32-63 type ``gpu-3.4GHz`` (2 GPUs, 0 MICs, 3.4 GHz). Resources ``core``,
        ``gpu``, ``mic``, ``mem``; **memory in KB** (33,554,432 per node, the traces'
        unit). Frequencies are labels: cores run at speed 1; the 2.1 GHz type has
        ``efficiency_rank`` 0 and the 3.4 GHz type 1 (Borghesi et al. 2018's LS prefers the more
        energy-efficient 2.1 GHz nodes). ``max_power`` is 400 W per
        node for both types (PA-HPC-SIM's per-node bound on the archive's power
        predictions, :data:`dispatchlab.platform.eurora.EURORA_NODE_MAX_POWER`; so
        ``max_dynamic_power`` = 25,600 W); ``idle_power`` is not set (not given).

        Queues (EWT in s): ``debug`` 3600, ``parallel`` 21600, ``np_longpar`` 86400,
        ``longpar`` 86400, ``reservation`` 1800. Queues not in the table (the traces'
        ``R``) get the caller's default, 1800 s in PA-HPC-SIM
        (:data:`dispatchlab.platform.queues.DEFAULT_EWT`)."""
        from dispatchlab.platform.eurora import eurora_platform

        return eurora_platform()

    @classmethod
    def from_file(cls, path: str | Path) -> Platform:
        """A platform file of any supported kind: TOML (:meth:`from_toml`) or a
        PA-HPC-SIM node file (:func:`dispatchlab.platform.eurora.read_eurora_nodes`),
        possibly ``ARCHIVE#MEMBER``. The kind is told by
        :func:`~dispatchlab.platform.eurora.looks_like_node_file` (ours): a ``.toml``
        name is TOML, a ``nodes_*`` name a node file, else the content decides."""
        return load_platform_file(path)[0]

    @classmethod
    def from_toml(cls, path: str | Path) -> Platform:
        """Read a platform file::

            name = "mycluster"
            [[node_type]]
            name = "cpu"
            count = 60
            capacity = { core = 32, mem = 192000 }
            [[node_type]]
            name = "gpu"
            count = 4
            capacity = { core = 32, gpu = 4, mem = 384000 }
            [queues]            # optional: queue name -> EWT, integer seconds > 0
            debug = 3600
            parallel = 21600

        A node type may also give ``idle_power`` / ``max_power`` (W) and
        ``efficiency_rank`` (integer >= 0, lower = more energy-efficient; default 0).
        ``pooled = true`` makes it one pool (then exactly one node type with count 1).
        ``queues_file = "system_queues"`` reads the queue table from a PA-HPC-SIM
        ``system_queues`` file (or ``ARCHIVE#MEMBER``), relative to the TOML file's
        folder (for a TOML inside an archive: the archive's folder); entries of a
        ``[queues]`` table given too are added to it and override it (ours). ``path``
        may be ``ARCHIVE#MEMBER``.
        """
        from dispatchlab.platform.eurora import read_source, split_archive

        text, shown = read_source(path, "platform file")
        return cls._from_toml_text(text, shown, split_archive(path)[0].parent)

    @classmethod
    def _from_toml_text(cls, text: str, source: str, base: Path) -> Platform:
        data = parse_toml(text, source)
        return cls.from_dict(data, source=source, base=base)

    @classmethod
    def from_dict(cls, data: dict, source: str = "<platform>",
                  base: str | Path | None = None) -> Platform:
        """A platform from the parsed TOML table ``data`` (keys as in :meth:`from_toml`);
        ``source`` names it in messages, ``base`` is the folder a relative
        ``queues_file`` is read from (default: the current folder)."""
        unknown = set(data) - _TOML_KEYS
        if unknown:
            raise InputError(f"unknown keys {sorted(unknown)} (expected "
                             f"{', '.join(sorted(_TOML_KEYS))})", file=source,
                             field=sorted(unknown)[0])
        types = data.get("node_type")
        if not isinstance(types, list) or not types:
            raise InputError("needs at least one [[node_type]] table", file=source,
                             field="node_type")
        out = []
        total_nodes = 0
        for k, t in enumerate(types):
            where = f"node_type[{k}]"
            if not isinstance(t, dict):
                raise InputError("must be a table", file=source, field=where)
            unknown = set(t) - {"name", "count", "capacity", "idle_power", "max_power",
                                "efficiency_rank"}
            if unknown:
                raise InputError(f"unknown keys {sorted(unknown)}", file=source, field=where)
            count = t.get("count")
            cap = t.get("capacity")
            check_node_type(str(t.get("name", f"type{k}")), count, cap, source=source,
                            where=where)
            total_nodes += count
            if total_nodes > MAX_NODES:
                raise InputError(f"the platform has more than {MAX_NODES:,} nodes",
                                 file=source, field=f"{where}.count")
            for key in ("idle_power", "max_power"):
                watts = t.get(key)
                if watts is not None and (isinstance(watts, bool)
                                          or not isinstance(watts, int | float) or watts < 0):
                    raise InputError(f"must be a number of watts >= 0, got {watts!r}",
                                     file=source, field=f"{where}.{key}")
            rank = t.get("efficiency_rank", 0)
            if not isinstance(rank, int) or isinstance(rank, bool) or rank < 0:
                raise InputError(f"must be an integer >= 0, got {rank!r}", file=source,
                                 field=f"{where}.efficiency_rank")
            out.append(NodeType(str(t.get("name", f"type{k}")), count, dict(cap),
                                t.get("idle_power"), t.get("max_power"), rank))
        pooled = data.get("pooled", False)
        if not isinstance(pooled, bool):
            raise InputError(f"must be true or false, got {pooled!r}", file=source,
                             field="pooled")
        if pooled and (len(out) != 1 or out[0].count != 1):
            raise InputError("a pooled platform has exactly one node type with count = 1",
                             file=source, field="pooled")
        queues = _toml_queues(data, source, Path(base) if base is not None else Path("."))
        mdp = data.get("max_dynamic_power")
        if mdp is not None and (isinstance(mdp, bool) or not isinstance(mdp, int | float)
                                or not mdp > 0):
            raise InputError(f"must be a number of watts > 0, got {mdp!r}", file=source,
                             field="max_dynamic_power")
        return cls(tuple(out), name=str(data.get("name", Path(source).stem)), is_pooled=pooled,
                   queues=queues, max_dynamic_power=None if mdp is None else float(mdp))

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

    def total_capacity(self) -> dict[str, int]:
        """Resource name -> total over all nodes."""
        tot = self.capacity_matrix().sum(axis=0)
        return {r: int(tot[k]) for k, r in enumerate(self.resource_names)}

    def is_core_only(self) -> bool:
        """True when ``core`` is the only resource with non-zero capacity."""
        return all(v == 0 for r, v in self.total_capacity().items() if r != "core")

    def describe(self) -> str:
        if self.is_pooled:
            return ", ".join(f"{v:,} {r}s" for r, v in self.total_capacity().items()) + \
                " (pooled)"
        parts = []
        for nt in self.node_types:
            cap = ", ".join(f"{v:,} {r}" for r, v in nt.capacity.items())
            parts.append(f"{nt.count} x {nt.name} ({cap})")
        return "; ".join(parts)


#: Top-level keys of a platform TOML file.
_TOML_KEYS = frozenset({"name", "pooled", "node_type", "queues", "queues_file",
                        "max_dynamic_power"})


def _queues_file_spec(data: dict, source: str, base: Path) -> str | None:
    """The ``queues_file`` of a TOML table (``~`` expanded, relative to ``base``), or
    ``None`` if absent. It may read ``ARCHIVE#MEMBER``."""
    value = data.get("queues_file")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"must be a file name, got {value!r}", file=source,
                         field="queues_file")
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base / path)


def _toml_queues(data: dict, source: str, base: Path) -> tuple[tuple[str, int], ...]:
    """The queue table of a platform TOML: ``queues_file`` then the ``[queues]`` table
    (whose entries add to and override the file's)."""
    from dispatchlab.platform.eurora import read_system_queues
    from dispatchlab.platform.queues import queue_table

    table: dict[str, int] = {}
    spec = _queues_file_spec(data, source, base)
    if spec is not None:
        try:
            table.update(read_system_queues(spec))
        except InputError as exc:  # say where the queue file was named
            raise InputError(f"{exc.message} (the queues_file of {source})", file=exc.file,
                             line=exc.line, field=exc.field) from None
    given = data.get("queues")
    if given is not None:
        if not isinstance(given, dict):
            raise InputError("must be a table of queue = seconds", file=source,
                             field="queues")
        table.update(queue_table(given, source=source))
    return tuple(table.items())


def load_platform_file(path: str | Path) -> tuple[Platform, tuple[Path, ...]]:
    """:meth:`Platform.from_file`, plus the files it read (for provenance checksums):
    the platform file or its archive, and a TOML's ``queues_file`` (or its archive)."""
    from dispatchlab.platform.eurora import (
        looks_like_node_file,
        parse_eurora_nodes,
        read_source,
        split_archive,
    )

    text, shown = read_source(path, "platform file")
    real = split_archive(path)[0]
    if looks_like_node_file(shown, text):
        return parse_eurora_nodes(text, shown), (real,)
    base = real.parent
    platform = Platform._from_toml_text(text, shown, base)
    files = [real]
    data = tomllib.loads(text)  # parsed without error just above
    spec = _queues_file_spec(data, shown, base)
    if spec is not None:
        files.append(split_archive(spec)[0])
    return platform, tuple(files)
