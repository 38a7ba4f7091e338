"""Read Alea's extended SWF (21 fields per line) with its machine file.

The Alea simulator (D. Klusáček, ``aleasimulator/alea``) ships MetaCentrum / CERIT-SC
workloads as SWF lines with three more fields, plus a machine file
``TRACE.machines`` (read by :func:`dispatchlab.platform.alea.read_alea_machines`)::

    6 1357016559 1 33765 64 1 1024 64 86400 8589934592 1 62 1 1 -1 1 1 1 \\
        {1273,1273,...,1256} q_1d 8:ppn=8:x86_64:cl_zegox

Fields
------
* **1-18** are read by :func:`~dispatchlab.workload.swf.read_swf` (same columns, same
  rules, same errors), except field 15 ``queue``, replaced by field 20's codes.
* **19** ``alloc_nodes``: the recorded placement, one node id per processor in braces
  (``{1270,1270,1281}``; ids are the site's node numbers, not indices into the machine
  file). Stored as ``"1270:2,1281:1"`` (id:processors, in order of first appearance) in
  the optional column ``alloc_nodes`` and counted in ``nodes_used`` (distinct ids);
  ``{}`` or ``-1`` is missing (``""`` / -1). Kept, **never used by the simulation**.
* **20** the queue name (``q_1d``): ``queue`` holds codes, ``info.codes["queue"][k]``
  the name of code ``k``, codes numbered in order of first appearance in the file.
* **21** the PBS node specification (nodespec) the job asked for, honoured by the
  simulation (below): ``N:ppn=P[:property...][#excl]``, groups joined by ``+``
  (``1:ppn=1+2:ppn=2``). ``N`` may be omitted (``1``) or replaced by a host name
  (``zewura19.cerit-sc.cz:ppn=12``), ``ppn`` defaults to 1, ``mem=3gb`` asks memory
  per chunk (suffixes b, kb, mb, gb, tb; powers of 1,024).
* **10** (``req_mem``) is memory in **bytes per chunk** (per node of the nodespec; one
  chunk = ``P`` processors on one node). Why: Alea's own reader divides the field by
  1,024 into "KB per node (not CPU)" and its fitting test asks that much free memory on
  each node it picks (``SWFLoader``, ``ResourceInfo.canExecuteNow``). The data agree:
  per processor is impossible (``1:ppn=16`` jobs ask 50 GiB, x 16 would be 800 GiB on
  nodes of at most 505 GiB, and replaying the recorded placement with per-processor
  memory exceeds a node's memory at 10,489 job starts, up to 81 times), and no multi-node
  job asks more than one node holds. Per node and per job cannot be told apart from the
  data (they differ on the 334 multi-node jobs only). -1 means no memory request.
  Converted to KB (the machine file's unit) rounding up.

A file whose first job line has 18 fields is read as plain SWF with the machine file as
its platform (Alea ships ``hpc2n.swf`` + ``hpc2n.swf.machines``): one core per unit,
field 10 unused (as :func:`read_swf`), no constraints. Every job line of a file must
have the field count of its first job line.

How the nodespec is simulated (our encoding)
--------------------------------------------
Nothing in the dispatchers knows about Alea: the nodespec becomes per-unit resources of
the job table, on the platform of the machine file (resources ``core``, ``mem`` (KB),
``share``, ``cl_<cluster>``; see :mod:`dispatchlab.platform.alea`). Every dispatcher,
EASY's shadow time and backfilling, and the conservative profile therefore handle it
exactly, with no change.

* **unit = one chunk**: ``N:ppn=P`` is ``units = N`` of ``core = P`` each, so each
  chunk's ``P`` processors are on one node (as PBS places them). Chunks of one job may
  share a node when it has room for several (PBS Pro's ``place=free``; Alea instead
  puts each chunk on a different node - an exact "distinct nodes" rule cannot be a
  per-unit resource without also blocking other jobs). ``req_procs``/``alloc_procs``
  keep the trace's processor counts; ``units x core`` equals them.
* **memory**: ``mem`` per unit = the chunk's memory in KB, the larger of field 10 and
  the nodespec's ``mem=`` (never understate a request; in this trace ``mem=3gb`` comes
  with the 400 MiB default in field 10). Not requested when the machine file has no
  memory.
* **cluster restriction**: ``cl_X`` restricts the job to cluster X's nodes: it asks
  ``cl_X = P`` per unit, a resource that only X's nodes have (their cores). Recognised
  properties, intersected: ``cl_X``; ``^cl_X`` (not X); ``nodecpusC`` (clusters whose
  nodes have C cores); a host name ``<cluster><number>[.domain]`` or
  ``host=<name>`` (its cluster: we do not pin the job to one node, the machine file
  does not name nodes); a bare cluster name. Negated host names (``^zewura12...``) and
  every other property (``x86_64``, ``brno``, ``nfs4``, ``infiniband``, unknown
  ``key=value`` ...) are ignored: the machine file lists no node properties. A
  restriction no cluster satisfies, a positive ``cl_X`` or ``host=`` naming an unknown
  cluster, and a set of several (but not all) clusters (only possible with 3+
  clusters) are :class:`InputError`\\ s naming the line and field 21.
* **exclusive** (``#excl``, ``#exclhost``): every unit of every job holds one ``share``
  of its node and an exclusive unit holds all of them (``S`` = the largest cores per
  node). So an exclusive chunk starts only on a node no job uses, no other job starts
  on its nodes while it runs, its chunks are on distinct nodes, and ``core`` still
  counts the processors it asked for (the idle rest of the node is held, not counted as
  used). This works without a cluster property on a heterogeneous machine. (Alea only
  asks for an empty node at start; we follow PBS: the node stays the job's.)
  ``#shared`` is accepted (not exclusive); another ``#flag`` is an error.
* **mixed chunk sizes** (``1:ppn=1+2:ppn=2``, 12 jobs here): units of ``g`` = gcd of
  the ``ppn`` values cores (``1`` here, 5 units), memory spread evenly over them
  (rounded up). ``#excl`` with mixed sizes cannot be expressed: :class:`InputError`.
* **fractional ppn** (``ppn=1.5``, 20 jobs here) is truncated (1), Alea's rule; field 8
  of those jobs says 1 processor.
* **consistency**: the nodespec's processors (sum of ``N x P``) must equal field 8 (or
  field 5 when 8 is -1), else :class:`InputError` naming field 21. A job with neither
  keeps ``units = -1`` and is dropped by the default cleaning.

Errors name the file, the 1-based line and the field (``field 21 (resources)``);
``lenient=True`` skips such lines and counts them in ``info.malformed_skipped``. The
error raised is the one on the lowest line among field counts, fields 19 and 21 and
what :func:`read_swf` finds in fields 1-18; the checks that need fields 5, 8 and 10
(processors, memory) come after those. For
simulating on another platform (pooled, ``--nodes``), :func:`drop_constraints` turns
the table back into plain one-core units.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.platform import Platform
from dispatchlab.platform.alea import (
    CLUSTER_PREFIX,
    MEM,
    SHARE,
    cluster_resource,
    read_alea_machines,
)
from dispatchlab.workload.companions import find_machines
from dispatchlab.workload.jobs import JobTable
from dispatchlab.workload.swf import _open_binary, read_swf

__all__ = [
    "NodeSpec",
    "Request",
    "allowed_clusters",
    "drop_constraints",
    "encode",
    "find_machines",
    "looks_like_alea",
    "parse_alloc",
    "parse_nodespec",
    "read_alea",
]

#: Field labels used in errors.
FIELD_MEM = "10 (req_mem)"
FIELD_ALLOC = "19 (alloc_nodes)"
FIELD_SPEC = "21 (resources)"
#: Fields of an Alea job line, and of a plain SWF line.
ALEA_FIELDS = 21
SWF_FIELDS_N = 18

_SIZE_RE = re.compile(r"^(\d+)(b|kb|mb|gb|tb)?$", re.IGNORECASE)
_SIZE_SCALE = {"b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}
_PPN_RE = re.compile(r"^(\d+)(\.\d*)?$")
_HOST_RE = re.compile(r"^([A-Za-z][A-Za-z_\-]*?)(\d+)(\.[A-Za-z0-9.\-]+)?$")
_NODECPUS_RE = re.compile(r"^nodecpus(\d+)$")
_EXCLUSIVE_FLAGS = frozenset({"excl", "exclhost"})
_SHARED_FLAGS = frozenset({"shared"})


# --------------------------------------------------------------------------------------
# field 21: the nodespec
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeSpec:
    """A parsed PBS node specification (field 21).

    ``chunks``: ``(count, ppn)`` per ``+``-joined group; ``exclusive``: ``#excl``;
    ``properties``: the other tokens of every group, in order (host names included);
    ``mem_kb``: the largest ``mem=`` of the groups, KB per chunk (None when absent).
    """

    chunks: tuple[tuple[int, int], ...]
    exclusive: bool = False
    properties: tuple[str, ...] = ()
    mem_kb: int | None = None

    @property
    def cores(self) -> int:
        """Processors asked for: the sum of ``count x ppn``."""
        return sum(n * p for n, p in self.chunks)

    @property
    def nodes(self) -> int:
        """Chunks asked for: the sum of the counts."""
        return sum(n for n, _ in self.chunks)


def _size_kb(text: str) -> int:
    """A PBS size (``3gb``, ``400mb``, ``1024``: bytes) in KB, rounded up."""
    m = _SIZE_RE.match(text)
    if m is None:
        raise ValueError(f"not a memory size: {text!r} (e.g. 3gb, 512mb)")
    scale = _SIZE_SCALE[(m.group(2) or "b").lower()]
    return -(-int(m.group(1)) * scale // 1024)


def _ppn(text: str) -> int:
    """A ``ppn`` value: a whole number >= 1, a decimal truncated (Alea's rule)."""
    m = _PPN_RE.match(text)
    if m is None or int(m.group(1)) < 1:
        raise ValueError(f"ppn must be a number >= 1, got {text!r}")
    return int(m.group(1))


def _flags(parts: list[str]) -> bool:
    """Whether the ``#flag`` parts make the job exclusive."""
    exclusive = False
    for flag in parts:
        low = flag.lower()
        if low in _EXCLUSIVE_FLAGS:
            exclusive = True
        elif low not in _SHARED_FLAGS:
            raise ValueError(f"unknown placement '#{flag}' (expected #excl or #shared)")
    return exclusive


def _group(text: str) -> tuple[int, int, list[str], int | None]:
    """``(count, ppn, properties, mem KB)`` of one ``+``-joined group."""
    tokens = text.split(":")
    count = 1
    if tokens[0].isdigit():
        count = int(tokens.pop(0))
        if count < 1:
            raise ValueError(f"a node count must be >= 1, got {count}")
    ppn: int | None = None
    mem: int | None = None
    props: list[str] = []
    for tok in tokens:
        key, eq, value = tok.partition("=")
        if not tok:
            raise ValueError(f"empty property in {text!r}")
        if eq and key == "ppn":
            if ppn is not None:
                raise ValueError(f"ppn given twice in {text!r}")
            ppn = _ppn(value)
        elif eq and key == "mem":
            mem = _size_kb(value)
        else:
            props.append(tok)
    return count, 1 if ppn is None else ppn, props, mem


def parse_nodespec(text: str) -> NodeSpec:
    """Parse a nodespec (``8:ppn=8:x86_64:cl_zegox``, ``1:ppn=64:cl_zewura#excl``,
    ``1:ppn=1+2:ppn=2``, ``2``, ``zewura19.cerit-sc.cz:ppn=12``); ValueError with the
    reason when malformed. See the module docstring for the grammar."""
    spec, *flag_parts = text.split("#")
    exclusive = _flags(flag_parts)
    if not spec:
        raise ValueError(f"no node specification in {text!r}")
    chunks: list[tuple[int, int]] = []
    props: list[str] = []
    mems: list[int] = []
    for part in spec.split("+"):
        if not part:
            raise ValueError(f"empty group in {text!r}")
        count, ppn, group_props, mem = _group(part)
        chunks.append((count, ppn))
        props.extend(group_props)
        if mem is not None:
            mems.append(mem)
    return NodeSpec(tuple(chunks), exclusive, tuple(props), max(mems) if mems else None)


def _cluster_of_host(token: str, clusters: Mapping[str, int]) -> str | None:
    """The cluster a host name (``zewura12.cerit-sc.cz``) or cluster name belongs to."""
    if token in clusters:
        return token
    m = _HOST_RE.match(token)
    return m.group(1) if m and m.group(1) in clusters else None


def _restriction(prop: str, clusters: Mapping[str, int]) -> frozenset[str] | None:
    """The clusters one property allows (None: the property restricts nothing)."""
    every = frozenset(clusters)
    if prop.startswith("^"):
        name = prop[1:]
        if name.startswith(CLUSTER_PREFIX) and name[len(CLUSTER_PREFIX):] in clusters:
            return every - {name[len(CLUSTER_PREFIX):]}
        return None  # a negated host or unknown cluster: ignored
    if prop.startswith(CLUSTER_PREFIX):
        name = prop[len(CLUSTER_PREFIX):]
        if name not in clusters:
            raise ValueError(f"cluster {name!r} ({prop}) is not in the machine file "
                             f"(it has {', '.join(clusters)})")
        return frozenset({name})
    m = _NODECPUS_RE.match(prop)
    if m:
        return frozenset(c for c, cores in clusters.items() if cores == int(m.group(1)))
    if prop.startswith("host="):
        host = prop[len("host="):]
        cluster = _cluster_of_host(host, clusters)
        if cluster is None:
            raise ValueError(f"host {host!r} belongs to no cluster of the machine file "
                             f"(it has {', '.join(clusters)})")
        return frozenset({cluster})
    cluster = _cluster_of_host(prop, clusters)
    return None if cluster is None else frozenset({cluster})


def allowed_clusters(properties: Sequence[str], clusters: Mapping[str, int]) -> frozenset[str]:
    """The clusters a job with ``properties`` may run on (``clusters``: name -> cores per
    node, in machine-file order). ValueError when none is left."""
    allowed = frozenset(clusters)
    for prop in properties:
        only = _restriction(prop, clusters)
        if only is not None:
            allowed &= only
    if not allowed:
        raise ValueError(f"no cluster of the machine ({', '.join(clusters)}) satisfies "
                         f"{':'.join(properties)}")
    return allowed


# --------------------------------------------------------------------------------------
# the encoding
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Machine:
    """What the encoding needs from the machine file's platform."""

    clusters: dict[str, int]  # name -> cores per node, file order
    shares: int  # share capacity of every node
    has_mem: bool

    @classmethod
    def of(cls, platform: Platform) -> Machine:
        clusters = {nt.name: int(nt.capacity["core"]) for nt in platform.node_types}
        shares = int(platform.node_types[0].capacity[SHARE])
        return cls(clusters, shares, MEM in platform.resource_names)


class Request(NamedTuple):
    """A job's request as per-unit resources: ``units`` of (``core``, ``mem`` KB,
    ``share``), restricted to ``cluster`` (None: any)."""

    units: int
    core: int
    mem: int
    share: int
    cluster: str | None


def _cluster(allowed: frozenset[str], machine: Machine) -> str | None:
    """The one cluster of ``allowed``, or None when it is every cluster."""
    if len(allowed) == len(machine.clusters):
        return None
    if len(allowed) == 1:
        return next(iter(allowed))
    names = ", ".join(c for c in machine.clusters if c in allowed)
    raise ValueError(f"restricted to clusters {names}: only one cluster or all of them "
                     "can be simulated")


def encode(spec: NodeSpec, mem_bytes: int, machine: Machine) -> Request:
    """The per-unit request of a job (module docstring, "our encoding").

    ``mem_bytes``: field 10, bytes per chunk (-1: none). ValueError when the nodespec
    cannot be expressed on ``machine``."""
    cluster = _cluster(allowed_clusters(spec.properties, machine.clusters), machine)
    chunk_kb = max(-(-mem_bytes // 1024) if mem_bytes > 0 else 0, spec.mem_kb or 0)
    sizes = {p for _, p in spec.chunks}
    if len(sizes) == 1:
        units, core, mem = spec.nodes, sizes.pop(), chunk_kb
    else:
        if spec.exclusive:
            raise ValueError("#excl with chunks of different sizes cannot be simulated")
        core = math.gcd(*sizes)
        units = spec.cores // core
        mem = -(-chunk_kb * spec.nodes // units)
    share = machine.shares if spec.exclusive else 1
    return Request(units, core, mem if machine.has_mem else 0, share, cluster)


# --------------------------------------------------------------------------------------
# field 19
# --------------------------------------------------------------------------------------


def parse_alloc(text: str) -> tuple[str, int]:
    """Field 19 -> (``"id:cpus,id:cpus"`` in order of first appearance, distinct ids);
    ``{}`` and ``-1`` give ``("", -1)``. ValueError when malformed."""
    if text == "-1":
        return "", -1
    if len(text) < 2 or text[0] != "{" or text[-1] != "}":
        raise ValueError(f"expected {{id,id,...}}, got {_short(text)!r}")
    inner = text[1:-1]
    if not inner:
        return "", -1
    counts: dict[str, int] = {}
    for tok in inner.split(","):
        if not tok.isdigit():
            raise ValueError(f"not a node id: {_short(tok)!r}")
        key = str(int(tok))
        counts[key] = counts.get(key, 0) + 1
    return ",".join(f"{k}:{v}" for k, v in counts.items()), len(counts)


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


# --------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------


def looks_like_alea(path: str | Path, first_lines: Sequence[str | bytes]) -> bool:
    """Whether a trace is Alea's: a machine file beside it (:func:`find_machines`), or a
    first job line (not blank, not a ``;`` comment) of 21 fields whose first 18 are
    numbers."""
    if find_machines(path) is not None:
        return True
    for raw in first_lines:
        line = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        tokens = line.split()
        if not tokens or tokens[0].startswith(";"):
            continue
        if len(tokens) != ALEA_FIELDS:
            return False
        try:
            [float(t) for t in tokens[:SWF_FIELDS_N]]
        except ValueError:
            return False
        return True
    return False


class _Problem(NamedTuple):
    line: int
    field: str | None
    message: str


@dataclass
class _Extras:
    """Fields 19-21 of every job line, in file order."""

    lines: list[int] = field(default_factory=list)
    alloc: list[str] = field(default_factory=list)
    queue: list[str] = field(default_factory=list)
    spec: list[str] = field(default_factory=list)
    problems: list[_Problem] = field(default_factory=list)
    width: int = 0  # fields per job line: 21 (Alea) or 18 (plain SWF)


def _scan(path: Path) -> _Extras:
    """Read the job lines' extra fields and check every line's field count."""
    fh = _open_binary(path)
    try:
        with fh:
            data = fh.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read: {exc}", file=str(path)) from None
    out = _Extras()
    first_line = 0
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        tokens = raw.split()
        if not tokens or tokens[0].startswith(b";"):
            continue
        if out.width == 0:
            if len(tokens) not in (ALEA_FIELDS, SWF_FIELDS_N):
                out.problems.append(_Problem(lineno, None, f"expected {ALEA_FIELDS} fields "
                                             f"(Alea) or {SWF_FIELDS_N} (SWF), found "
                                             f"{len(tokens)}"))
                continue
            out.width, first_line = len(tokens), lineno
        if len(tokens) != out.width:
            out.problems.append(_Problem(lineno, None, f"expected {out.width} fields like "
                                         f"line {first_line}, found {len(tokens)}"))
            continue
        if out.width == ALEA_FIELDS:
            out.lines.append(lineno)
            out.alloc.append(tokens[18].decode("utf-8", "replace"))
            out.queue.append(tokens[19].decode("utf-8", "replace"))
            out.spec.append(tokens[20].decode("utf-8", "replace"))
    return out


@dataclass
class _Decoded:
    """Per Alea job line (file order): the nodespec (None when the line has a problem in
    field 19 or 21) and the recorded placement."""

    specs: list[NodeSpec | None]
    alloc: list[str]
    used: list[int]


def _checked_spec(text: str, machine: Machine) -> NodeSpec | str:
    """The parsed nodespec, or the reason it cannot be simulated on ``machine``."""
    try:
        spec = parse_nodespec(text)
        encode(spec, -1, machine)  # what only the nodespec and the machine decide
    except ValueError as exc:
        return str(exc)
    return spec


def _decode(extras: _Extras, machine: Machine) -> _Decoded:
    """Parse and check fields 19 and 21 of every line (nodespecs cached per text)."""
    spec_cache: dict[str, NodeSpec | str] = {}
    out = _Decoded([], [], [])
    for lineno, spec_text, alloc_text in zip(extras.lines, extras.spec, extras.alloc,
                                             strict=True):
        spec = spec_cache.get(spec_text)
        if spec is None:
            spec = spec_cache[spec_text] = _checked_spec(spec_text, machine)
        if isinstance(spec, str):
            extras.problems.append(_Problem(lineno, FIELD_SPEC, spec))
            spec = None
        try:
            placed, n_used = parse_alloc(alloc_text)
        except ValueError as exc:
            extras.problems.append(_Problem(lineno, FIELD_ALLOC, str(exc)))
            placed, n_used, spec = "", -1, None
        out.specs.append(spec)
        out.alloc.append(placed)
        out.used.append(n_used)
    return out


def _machines_for(path: Path, machines: str | Path | None) -> Path:
    if machines is not None:
        return Path(machines)
    found = find_machines(path)
    if found is None:
        raise InputError(f"no Alea machine file beside the trace (looked for "
                         f"{path.name}.machines[.gz]); give machines=FILE", file=str(path))
    return found


def _raise(problems: list[_Problem], source: str) -> None:
    first = min(problems, key=lambda p: p.line)
    raise InputError(first.message, file=source, line=first.line, field=first.field)


def _read_fields(path: Path, lenient: bool, extras: _Extras) -> JobTable:
    """Fields 1-18 by :func:`read_swf`; in strict mode the first problem of the file
    (lowest line) is raised, whether :func:`read_swf` or :func:`_scan` found it."""
    try:
        return read_swf(path, lenient=lenient, extra_fields="ignore")
    except InputError as exc:
        mine = [p for p in extras.problems if exc.line is None or p.line < exc.line]
        if mine and not lenient:
            _raise(mine, str(path))
        raise


def _requests(table: JobTable, rows: np.ndarray, decoded: _Decoded, machine: Machine,
              extras: _Extras) -> list[Request | None]:
    """The request of every table row (``rows``: its index into the Alea lines)."""
    units0 = table["units"].tolist()
    has_req = (table["req_procs"] != -1).tolist()
    mem = table["req_mem"].tolist()
    lines = table["line"].tolist()
    out: list[Request | None] = []
    cache: dict[tuple[int, int], Request] = {}
    for r, k in enumerate(rows.tolist()):
        spec = decoded.specs[k]
        if spec is None:
            out.append(None)
            continue
        if mem[r] < -1:
            extras.problems.append(_Problem(lines[r], FIELD_MEM,
                                            f"negative memory {mem[r]} (only -1 = missing)"))
            out.append(None)
            continue
        if units0[r] > 0 and spec.cores != units0[r]:
            said = "8 (req_procs)" if has_req[r] else "5 (alloc_procs)"
            extras.problems.append(_Problem(
                lines[r], FIELD_SPEC, f"asks for {spec.cores} processors, field {said} "
                f"says {units0[r]}"))
            out.append(None)
            continue
        key = (id(spec), mem[r])
        req = cache.get(key)
        if req is None:  # cannot fail: _decode checked the nodespec on this machine
            req = cache[key] = encode(spec, mem[r], machine)
        out.append(req)
    return out


def _resources(reqs: list[Request | None], units0: np.ndarray,
               machine: Machine) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``units`` and the per-unit resource columns of the rows (missing rows: zeros)."""
    ok = [q for q in reqs if q is not None]
    n = len(reqs)
    good = np.fromiter((q is not None for q in reqs), dtype=bool, count=n)

    def col(values: list[int]) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        out[good] = values
        return out

    units = np.where(good & (units0 > 0), col([q.units for q in ok]), units0)
    core = col([q.core for q in ok])
    resources = {"core": core}
    if machine.has_mem:
        resources[MEM] = col([q.mem for q in ok])
    resources[SHARE] = col([q.share for q in ok])
    for name in machine.clusters:
        resources[cluster_resource(name)] = col([q.core if q.cluster == name else 0
                                                 for q in ok])
    return units.astype(np.int64), resources


def _queue_codes(queues: list[str], order: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Codes of ``queues`` (one per row) numbered by first appearance in ``order``."""
    names: dict[str, int] = {}
    for k in order.tolist():
        names.setdefault(queues[k], len(names))
    return np.fromiter((names[q] for q in queues), dtype=np.int64, count=len(queues)), \
        list(names)


def _plain(table: JobTable, machine: Machine) -> JobTable:
    """An 18-field file on the machine file: one core per unit, one share, no limits."""
    n = len(table)
    resources = {"core": np.ones(n, dtype=np.int64)}
    if machine.has_mem:
        resources[MEM] = np.zeros(n, dtype=np.int64)
    resources[SHARE] = np.ones(n, dtype=np.int64)
    for name in machine.clusters:
        resources[cluster_resource(name)] = np.zeros(n, dtype=np.int64)
    table.resources = resources
    return table


def _extend(table: JobTable, extras: _Extras, decoded: _Decoded,
            machine: Machine) -> np.ndarray:
    """Add fields 19-21 to the rows of ``table`` (in place); returns the rows to drop."""
    line_of = np.asarray(extras.lines, dtype=np.int64)
    rows = np.searchsorted(line_of, table["line"])
    missing = (rows >= len(line_of)) | (line_of[np.minimum(rows, len(line_of) - 1)]
                                        != table["line"])
    rows = np.where(missing, 0, rows)  # rows whose line has a structural problem
    reqs = _requests(table, rows, decoded, machine, extras)
    bad = np.fromiter((q is None for q in reqs), dtype=bool, count=len(reqs)) | missing
    units, table.resources = _resources(reqs, table["units"], machine)
    table.columns["units"] = units
    queues = [extras.queue[k] for k in rows.tolist()]
    codes, names = _queue_codes(queues, np.argsort(table["line"], kind="stable"))
    table.columns["queue"] = codes
    table.info.codes["queue"] = names
    table.columns["alloc_nodes"] = np.array([decoded.alloc[k] for k in rows.tolist()],
                                            dtype=object)
    table.columns["nodes_used"] = np.asarray([decoded.used[k] for k in rows.tolist()],
                                             dtype=np.int64)
    return bad


def read_alea(path: str | Path, *, lenient: bool = False,
              machines: str | Path | None = None) -> JobTable:
    """Read an Alea trace (plain or gzip) into a :class:`JobTable` (module docstring).

    ``machines``: the machine file (default: :func:`find_machines` beside the trace; an
    :class:`InputError` when there is none). The table's ``info.format`` is ``"alea"``
    and ``info.companions["machines"]`` names the machine file, so
    :func:`~dispatchlab.platform.files.trace_platform` simulates on it. ``lenient=True``
    skips malformed lines (counted in ``info.malformed_skipped``) instead of raising.
    """
    path = Path(path)
    extras = _scan(path)
    machines_path = _machines_for(path, machines)
    machine = Machine.of(read_alea_machines(machines_path))
    decoded = _decode(extras, machine)
    table = _read_fields(path, lenient, extras)
    if extras.width == ALEA_FIELDS:
        bad = _extend(table, extras, decoded, machine)
    else:  # plain SWF lines (or no valid line at all: every row is flagged)
        table = _plain(table, machine)
        flagged = [p.line for p in extras.problems]
        bad = np.isin(table["line"], flagged) if extras.width else np.ones(len(table), bool)
    if extras.problems and not lenient:
        _raise(extras.problems, str(path))
    table.info.format = "alea"
    table.info.companions["machines"] = str(machines_path)
    if bad.any():
        table.info.malformed_skipped += int(bad.sum())
        table = table.take(~bad)
        if len(table) == 0:
            raise InputError(f"no jobs: all {int(bad.sum())} job lines are malformed",
                             file=str(path))
    return table


def drop_constraints(table: JobTable) -> JobTable:
    """The table as plain SWF-like jobs for another platform (pooled, homogeneous):
    ``units`` = processors (``units x core``), one core per unit, no memory, share or
    cluster requests. A new table; ``table`` is unchanged."""
    core = table.resources.get("core")
    units = table["units"] if core is None else np.where(
        table["units"] > 0, table["units"] * core, table["units"])
    out = table.take(np.arange(len(table)))
    out.columns["units"] = units.astype(np.int64)
    out.resources = {"core": np.ones(len(table), dtype=np.int64)}
    return out


def for_platform(table: JobTable, resources: Iterable[str]) -> tuple[JobTable, str | None]:
    """``table`` ready for a platform with ``resources``: unchanged when the platform has
    every resource the jobs request (the machine-file platform), else, for an Alea
    table, :func:`drop_constraints` and a note saying what was dropped (the cluster
    properties, ``#excl`` and memory need the machine file's platform). Other tables
    are returned unchanged with no note (the engine then names what is missing)."""
    have = set(resources)
    missing = sorted(r for r, v in table.resources.items() if r not in have and np.any(v > 0))
    if not missing or table.info.format != "alea":
        return table, None
    return drop_constraints(table), (
        "this platform is not the trace's machine file: cluster properties, #excl and "
        f"memory requests ({', '.join(missing)}) are dropped; jobs ask for their "
        "processors only")

