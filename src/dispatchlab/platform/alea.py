"""Alea's machine file (``TRACE.machines``): one line per cluster -> a :class:`Platform`.

The Alea simulator (D. Klusáček, ``aleasimulator/alea``) describes the machine of an
SWF workload in a companion file named after the trace with ``.machines`` appended
(``wagap-2013.swf`` + ``wagap-2013.swf.machines``; here also gzip-compressed). Each line
holds whitespace-separated fields (Alea writes tabs)::

    0   zewura  20  80  1   529426432
    id  name    nodes  cores-per-node  rating  memory-per-node (KB)

* ``id``: an integer, unique in the file (kept for error messages only);
* ``name``: the cluster name (letters, digits, ``_``, ``-``, ``.``), unique;
* ``nodes`` and ``cores-per-node``: integers > 0;
* ``rating``: the speed rating of one core (Alea's ``peRating``), a number > 0. Read and
  checked, **not simulated** (every core runs at speed 1);
* ``memory-per-node``: optional, an integer >= 0 in KB (1 KB = 1,024 bytes, Alea's unit).
  Either every line has it or none does; without it memory is not simulated.

Blank lines and lines starting with ``;`` or ``#`` are skipped.

The platform (our encoding, see :mod:`dispatchlab.workload.alea` for the job side) has
one node type per cluster, named after it, in file order (so node indices run through
the first cluster's nodes, then the second's, ...), with the resources, in this order:

* ``core``: cores per node;
* ``mem``: memory per node in KB (only when the file gives memory);
* ``share`` (:data:`SHARE`): ``S`` = the largest cores-per-node of the file, on every
  node. Every job unit holds one share of its node and an exclusive unit holds all
  ``S``: a node hosts at most ``cores <= S`` ordinary units, so shares never limit
  ordinary jobs, and an exclusive unit fits only on a node no job uses and keeps every
  other job off it while it runs;
* ``cl_<name>`` for every cluster: the node's cores on that cluster's nodes, 0 on the
  others. A job restricted to cluster X asks ``cl_X`` = its cores per unit, so it can
  only be placed on X's nodes.

Every malformed line is an :class:`~dispatchlab.core.errors.InputError` naming the file,
the 1-based line and the field (``field 4 (cores)``).
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

from dispatchlab.core.errors import InputError
from dispatchlab.platform.platform import NodeType, Platform

__all__ = ["CLUSTER_PREFIX", "MEM", "SHARE", "cluster_resource", "read_alea_machines"]

#: Resource holding memory per node (KB) and per unit.
MEM = "mem"
#: Resource that makes exclusive jobs exclusive (see the module docstring).
SHARE = "share"
#: Prefix of the per-cluster resources (``cl_zewura``), as in PBS node properties.
CLUSTER_PREFIX = "cl_"

_FIELDS = ("id", "name", "nodes", "cores", "rating", "memory")
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")


def cluster_resource(name: str) -> str:
    """The resource restricting a job to cluster ``name`` (``cl_<name>``)."""
    return CLUSTER_PREFIX + name


def _label(k: int) -> str:
    """``"4 (cores)"`` for the 0-based field ``k``."""
    return f"{k + 1} ({_FIELDS[k]})"


def _read_text(path: Path) -> str:
    """The decompressed text of ``path`` (gzip detected by its magic bytes)."""
    name = str(path)
    if not path.is_file():
        raise InputError("no such file" if not path.exists() else "not a file", file=name)
    try:
        raw = path.read_bytes()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(f"cannot read the machine file: {exc}", file=name) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                         file=name) from None


def _int(token: str, k: int, minimum: int | None, where: dict) -> int:
    """Field ``k`` as an integer (>= ``minimum`` unless None), else :class:`InputError`."""
    try:
        value = int(token)
    except ValueError:
        raise InputError(f"not an integer: {token!r}", field=_label(k), **where) from None
    if minimum is not None and value < minimum:
        raise InputError(f"must be >= {minimum}, got {value}", field=_label(k), **where)
    return value


def _parse_line(tokens: list[str], where: dict) -> tuple[int, str, int, int, int | None]:
    """``(id, name, nodes, cores, memory KB or None)`` of one machine line."""
    if len(tokens) not in (5, 6):
        raise InputError(f"expected 5 or 6 fields (id, name, nodes, cores per node, rating"
                         f"[, memory per node in KB]), found {len(tokens)}", **where)
    ident = _int(tokens[0], 0, None, where)
    name = tokens[1]
    if not _NAME_RE.match(name):
        raise InputError(f"not a cluster name: {name!r} (letters, digits, _ - .)",
                         field=_label(1), **where)
    nodes = _int(tokens[2], 2, 1, where)
    cores = _int(tokens[3], 3, 1, where)
    try:
        rating = float(tokens[4])
    except ValueError:
        rating = -1.0
    if not rating > 0:
        raise InputError(f"must be a number > 0, got {tokens[4]!r}", field=_label(4), **where)
    memory = _int(tokens[5], 5, 0, where) if len(tokens) == 6 else None
    return ident, name, nodes, cores, memory


def _clusters(text: str, source: str) -> list[tuple[str, int, int, int | None]]:
    """``(name, nodes, cores, memory)`` per cluster line, in file order, validated."""
    out: list[tuple[str, int, int, int | None]] = []
    ids: set[int] = set()
    names: set[str] = set()
    first_memory_line: tuple[int, bool] | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped[0] in ";#":
            continue
        where = {"file": source, "line": lineno}
        ident, name, nodes, cores, memory = _parse_line(stripped.split(), where)
        if ident in ids:
            raise InputError(f"cluster id {ident} appears twice", field=_label(0), **where)
        if name in names:
            raise InputError(f"cluster {name!r} appears twice", field=_label(1), **where)
        has_memory = memory is not None
        if first_memory_line is None:
            first_memory_line = (lineno, has_memory)
        elif first_memory_line[1] != has_memory:
            said = "has" if first_memory_line[1] else "has no"
            raise InputError(f"line {first_memory_line[0]} {said} memory per node: every "
                             "line must have it, or none", field=_label(5), **where)
        ids.add(ident)
        names.add(name)
        out.append((name, nodes, cores, memory))
    if not out:
        raise InputError("no cluster lines", file=source)
    return out


def read_alea_machines(path: str | Path) -> Platform:
    """Read an Alea machine file (plain or gzip) into a node-level :class:`Platform`.

    One node type per cluster (named after it, file order), resources ``core``,
    ``mem`` (KB per node, when the file has it), ``share`` and ``cl_<cluster>`` as the
    module docstring describes. Raises :class:`InputError` (file, line, field) for a
    missing file or a malformed line.
    """
    p = Path(path)
    source = str(p)
    clusters = _clusters(_read_text(p), source)
    shares = max(cores for _, _, cores, _ in clusters)
    types = []
    for name, nodes, cores, memory in clusters:
        capacity = {"core": cores}
        if memory is not None:
            capacity[MEM] = memory
        capacity[SHARE] = shares
        capacity[cluster_resource(name)] = cores
        types.append(NodeType(name, nodes, capacity))
    label = p.name[:-3] if p.name.endswith(".gz") else p.name
    try:
        return Platform(tuple(types), name=label)
    except InputError as exc:  # beyond the platform bounds: name the file
        raise InputError(exc.message, file=source, field=exc.field) from None
