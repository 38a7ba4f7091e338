"""Platforms: nodes grouped by type, each with a capacity per named resource.

A :class:`Platform` is a list of node types; every node of a type has the same
capacity vector (``core``, ``gpu``, ``mic``, ``mem``, ... any names, integer amounts).
Resource names are kept in a fixed order (``resource_names``), so a node's capacity is
a row of the ``capacity`` matrix (nodes x resources), nodes numbered in type order.

A *pooled* platform is one big node: units may share it freely. It is the default for
SWF traces (``MaxProcs`` cores), where placement is not simulated.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.errors import InputError


@dataclass(frozen=True)
class NodeType:
    """``count`` identical nodes with ``capacity`` (resource name -> amount per node)."""

    name: str
    count: int
    capacity: dict[str, int]
    idle_power: float | None = None  # watts, for power-aware extensions
    max_power: float | None = None  # watts


@dataclass(frozen=True)
class Platform:
    """A set of node types. ``is_pooled=True`` marks a single shared pool (no placement)."""

    node_types: tuple[NodeType, ...]
    name: str = "platform"
    is_pooled: bool = False
    resource_names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.node_types:
            raise InputError("a platform needs at least one node type")
        names: list[str] = list(self.resource_names)
        for nt in self.node_types:
            if nt.count <= 0:
                raise InputError(f"node type {nt.name!r}: count must be > 0, got {nt.count}")
            for r, amount in nt.capacity.items():
                if int(amount) < 0:
                    raise InputError(f"node type {nt.name!r}: capacity of {r!r} must be >= 0")
                if r not in names:
                    names.append(r)
        object.__setattr__(self, "resource_names", tuple(names))

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
        """The Eurora prototype (CINECA): 64 nodes of 16 cores and 16 GB (in MB),
        32 of them with 2 GPUs and 32 with 2 MICs."""
        return cls(
            (
                NodeType("gpu", 32, {"core": 16, "gpu": 2, "mic": 0, "mem": 16 * 1024}),
                NodeType("mic", 32, {"core": 16, "gpu": 0, "mic": 2, "mem": 16 * 1024}),
            ),
            name="eurora",
        )

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

        ``pooled = true`` makes it one pool (then exactly one node type with count 1).
        """
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text())
        except FileNotFoundError:
            raise InputError("platform file not found", file=str(p)) from None
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"invalid TOML: {exc}", file=str(p)) from None
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                             file=str(p)) from None
        except OSError as exc:
            raise InputError(f"cannot read platform file: {exc.strerror}", file=str(p)) from None
        return cls.from_dict(data, source=str(p))

    @classmethod
    def from_dict(cls, data: dict, source: str = "<platform>") -> Platform:
        unknown = set(data) - {"name", "pooled", "node_type"}
        if unknown:
            raise InputError(f"unknown keys {sorted(unknown)} (expected name, pooled, "
                             "node_type)", file=source, field=sorted(unknown)[0])
        types = data.get("node_type")
        if not isinstance(types, list) or not types:
            raise InputError("needs at least one [[node_type]] table", file=source,
                             field="node_type")
        out = []
        for k, t in enumerate(types):
            where = f"node_type[{k}]"
            if not isinstance(t, dict):
                raise InputError("must be a table", file=source, field=where)
            unknown = set(t) - {"name", "count", "capacity", "idle_power", "max_power"}
            if unknown:
                raise InputError(f"unknown keys {sorted(unknown)}", file=source, field=where)
            count = t.get("count")
            if not isinstance(count, int) or isinstance(count, bool) or count <= 0:
                raise InputError(f"count must be a positive integer, got {count!r}", file=source,
                                 field=f"{where}.count")
            cap = t.get("capacity")
            if not isinstance(cap, dict) or not cap:
                raise InputError("capacity must be a non-empty table", file=source,
                                 field=f"{where}.capacity")
            for r, v in cap.items():
                if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                    raise InputError(f"must be a non-negative integer, got {v!r}", file=source,
                                     field=f"{where}.capacity.{r}")
            for key in ("idle_power", "max_power"):
                watts = t.get(key)
                if watts is not None and (isinstance(watts, bool)
                                          or not isinstance(watts, int | float) or watts < 0):
                    raise InputError(f"must be a number of watts >= 0, got {watts!r}",
                                     file=source, field=f"{where}.{key}")
            out.append(NodeType(str(t.get("name", f"type{k}")), count, dict(cap),
                                t.get("idle_power"), t.get("max_power")))
        pooled = data.get("pooled", False)
        if not isinstance(pooled, bool):
            raise InputError(f"must be true or false, got {pooled!r}", file=source,
                             field="pooled")
        if pooled and (len(out) != 1 or out[0].count != 1):
            raise InputError("a pooled platform has exactly one node type with count = 1",
                             file=source, field="pooled")
        return cls(tuple(out), name=str(data.get("name", Path(source).stem)), is_pooled=pooled)

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
