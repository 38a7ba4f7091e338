"""The Eurora prototype (CINECA) and the PA-HPC-SIM system files.

PA-HPC-SIM's test data (``Eurora-PA-HPC-SIM-testdata.tar.gz``, folder
``test_data/system_configs``) describes the machine in two
whitespace-separated text files:

* a **node file** ``nodes_#N``, one node per line::

      0 16 0 2 33554432 0
      id cores GPUs MICs memory(KB) reserved(0/1)

  (the archive's README says "Memory (bytes)"; the values and the traces' requests are
  KB: 33554432 KB = 32 GiB per node). Node ids must run 0, 1, 2, ... in file order: the
  traces' used-node ids refer to them, and node ``k`` of the platform is line ``k``.
  Consecutive identical nodes form one node type, so the platform's node order is the
  file's. Every node type has the resources ``core``, ``gpu``, ``mic``, ``mem`` (KB), in
  that order. A node type is named ``KIND-FREQ``: ``KIND`` is ``mic`` (MICs, no GPU),
  ``gpu`` (GPUs, no MIC), ``gpu-mic`` (both) or ``cpu`` (neither); ``FREQ`` follows
  PA-HPC-SIM's rule (``_max_freqs = {2100, 3400}``, ``_nodeType_threshold = nodes/2``):
  the first half of the ids runs at ``2.1GHz``, the rest at ``3.4GHz``. The frequency
  is a label only: every core runs at speed 1, but it sets the node type's
  ``efficiency_rank``: 0 for the 2.1 GHz half (the more energy-efficient nodes, Borghesi
  et al. 2018 section 4.2: "cores that operate at higher frequencies also consume more
  power"), 1 for the 3.4 GHz half (a one-node file, all 3.4 GHz: 0; ranks are
  relative). A repeated name gets ``-2``, ``-3``... (ours). **Reserved nodes** (flag 1,
  "dedicated to reservation jobs") are refused with an :class:`InputError`: dispatchlab
  does not dedicate nodes to a queue (ours).
* a **queue file** ``system_queues``, one queue per line: ``name EWT`` with the
  queue's expected waiting time in integer seconds > 0.

Blank lines and lines starting with ``#`` are skipped in both files (ours; the shipped
files have none). Every bad line is an :class:`InputError` naming the file, the
1-based line and the field (``field 3 (gpus)``).

**Archive members.** Every reader here (and ``--platform``, a platform TOML's
``queues_file``, a campaign's platform ``file``) accepts ``ARCHIVE#MEMBER`` for a file
inside a tar archive (``.tar``, ``.tar.gz``/``.tgz``, ``.tar.bz2``, ``.tar.xz``), read
in memory (nothing is extracted to disk). The split is the Eurora job reader's: an
existing file is never split, else the first ``#`` whose left part is an existing file
(see :func:`split_archive`), so member names may contain ``#`` (``nodes_#64``).
``MEMBER`` is the member's full name or any ``/``-separated tail of it that names
exactly one file (``system_configs/nodes_#64`` or ``nodes_#64`` for
``test_data/system_configs/nodes_#64``).
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import close_matches
from dispatchlab.platform.platform import NodeType, Platform
from dispatchlab.platform.queues import DEFAULT_EWT, check_ewt, queue_table

if TYPE_CHECKING:
    import tarfile

__all__ = [
    "EURORA_DEFAULT_EWT",
    "EURORA_MEM_KB",
    "EURORA_QUEUES",
    "eurora_platform",
    "looks_like_node_file",
    "parse_eurora_nodes",
    "parse_system_queues",
    "read_eurora_nodes",
    "read_source",
    "read_system_queues",
    "split_archive",
]

#: Memory per Eurora node, KB (32 GiB).
EURORA_MEM_KB = 33_554_432
#: ``system_configs/system_queues`` of the PA-HPC-SIM test data: queue -> EWT (s).
EURORA_QUEUES: tuple[tuple[str, int], ...] = (
    ("debug", 3600),
    ("parallel", 21600),
    ("np_longpar", 86400),
    ("longpar", 86400),
    ("reservation", 1800),
)
#: EWT of a queue missing from the table (the traces' queue ``R``), s.
EURORA_DEFAULT_EWT = DEFAULT_EWT

_NODE_FIELDS = ("id", "cores", "gpus", "mics", "memory", "reserved")
_LOW_FREQ, _HIGH_FREQ = "2.1GHz", "3.4GHz"
#: node type efficiency rank by frequency label (lower = more energy-efficient; Borghesi et al. 2018
#: section 4.2 prefers the 2.1 GHz nodes)
_EFFICIENCY_RANK = {_LOW_FREQ: 0, _HIGH_FREQ: 1}
_ARCHIVE_RE = re.compile(r"^(.*?\.(?:tar\.gz|tgz|tar\.bz2|tbz2?|tar\.xz|txz|tar))#(.*)$",
                         re.IGNORECASE)
_INT_RE = re.compile(r"^[+-]?\d+$")


#: Largest power of one Eurora node (W), either type: PA-HPC-SIM caps a job's per-node
#: predicted power at 400 W (PA-HPC-SIM's code), the only per-node bound its data gives;
#: the idle power is not given (not set). So ``max_dynamic_power`` is 64 x 400 W.
EURORA_NODE_MAX_POWER = 400.0


def eurora_platform() -> Platform:
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
    mic = {"core": 16, "gpu": 0, "mic": 2, "mem": EURORA_MEM_KB}
    gpu = {"core": 16, "gpu": 2, "mic": 0, "mem": EURORA_MEM_KB}
    return Platform(
        (NodeType(f"mic-{_LOW_FREQ}", 32, mic, None, EURORA_NODE_MAX_POWER,
                  _EFFICIENCY_RANK[_LOW_FREQ]),
         NodeType(f"gpu-{_HIGH_FREQ}", 32, gpu, None, EURORA_NODE_MAX_POWER,
                  _EFFICIENCY_RANK[_HIGH_FREQ])),
        name="eurora",
        queues=EURORA_QUEUES,
    )


# ----------------------------------------------------------------- archive members
def split_archive(spec: str | Path) -> tuple[Path, str | None]:
    """``(archive, member)`` of ``ARCHIVE#MEMBER``, or ``(path, None)`` for a plain file.

    Same rule as the Eurora job reader (:mod:`dispatchlab.workload.eurora`): an existing
    file is plain, whatever its name; otherwise the first ``#`` whose left part is an
    existing file splits. Failing both, the first ``#`` after an archive suffix
    (``.tar``, ``.tar.gz``, ``.tgz``, ``.tar.bz2``, ``.tar.xz``...) splits, so that a
    missing archive is reported as such (ours)."""
    text = str(spec)
    if "#" not in text or Path(text).exists():
        return Path(text), None
    at = text.find("#")
    while at >= 0:
        if at and Path(text[:at]).is_file():
            return Path(text[:at]), text[at + 1:]
        at = text.find("#", at + 1)
    m = _ARCHIVE_RE.match(text)
    if m is None:
        return Path(text), None
    return Path(m.group(1)), m.group(2)


def _find_member(tf: tarfile.TarFile, member: str, shown: str) -> tarfile.TarInfo:
    """The one regular file of ``tf`` named ``member`` or ending with ``/member``."""
    want = member.strip("/")
    if not want:
        raise InputError("no member name after '#'", file=shown)
    files = [m for m in tf.getmembers() if m.isfile()]
    exact = [m for m in files if m.name.strip("/") == want]
    hits = exact or [m for m in files if m.name.endswith("/" + want)]
    if len(hits) == 1:
        return hits[0]
    if hits:
        names = ", ".join(m.name for m in hits[:3])
        raise InputError(f"member {member!r} is ambiguous ({names}); give more of its path",
                         file=shown)

    base = {PurePosixPath(m.name).name: m.name for m in files}
    near = close_matches(PurePosixPath(want).name, base)
    hint = f" (did you mean {' or '.join(repr(base[h]) for h in near)}?)" if near else ""
    raise InputError(f"no file {member!r} in the archive{hint}", file=shown)


def read_source(spec: str | Path, what: str = "file") -> tuple[str, str]:
    """``(text, shown)``: the UTF-8 text of a file or of an archive member
    (``ARCHIVE#MEMBER``), gzip-compressed or not (told by its magic bytes; ours), and
    the name to show in messages (the file name, or ``ARCHIVE#FULL_MEMBER_NAME``). A
    missing file, unreadable archive, missing member or non-UTF-8 content is an
    :class:`InputError` (``what`` names the kind of file)."""
    import tarfile  # (imported when an archive is read: start-up stays lean)

    path, member = split_archive(spec)
    shown = str(path) if member is None else f"{path}#{member}"
    try:
        if member is None:
            data = path.read_bytes()
        else:
            with tarfile.open(path, "r:*") as tf:
                info = _find_member(tf, member, shown)
                shown = f"{path}#{info.name}"
                handle = tf.extractfile(info)
                if handle is None:  # pragma: no cover - isfile() members always have data
                    raise InputError("cannot read the archive member", file=shown)
                data = handle.read()
    except FileNotFoundError:
        raise InputError(f"{what} not found", file=str(path)) from None
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise InputError(f"not a readable tar archive ({exc})", file=str(path)) from None
    except OSError as exc:
        if member is not None and exc.strerror is None:  # gzip layer: corrupt archive
            raise InputError(f"not a readable tar archive ({exc})", file=str(path)) from None
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", file=str(path)) from None
    if data[:2] == b"\x1f\x8b":  # a gzip-compressed file or member (ours)
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt gzip data: {exc}", file=shown) from None
    try:
        return data.decode("utf-8"), shown
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                         file=shown) from None


def _lines(text: str):
    """``(line_number, fields)`` of the lines that are neither blank nor ``#`` comments."""
    for no, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if stripped and not stripped.startswith("#"):
            yield no, stripped.split()


def looks_like_node_file(name: str, text: str | None = None) -> bool:
    """True when a platform file is a PA-HPC-SIM node file rather than TOML (ours): a
    ``.toml`` name is TOML; a name starting with ``nodes_`` is a node file; otherwise
    a node file when its first significant line is 5 or more whitespace-separated
    integers (never valid TOML)."""
    base = PurePosixPath(str(name).replace("\\", "/")).name
    if base.lower().endswith(".toml"):
        return False
    if base.startswith("nodes_"):
        return True
    if text is None:
        return False
    for _no, fields in _lines(text):
        return len(fields) >= 5 and all(_INT_RE.match(f) for f in fields)
    return False


# ------------------------------------------------------------------------- nodes
def _node_kind(gpus: int, mics: int) -> str:
    if gpus and mics:
        return "gpu-mic"
    return "gpu" if gpus else "mic" if mics else "cpu"


def parse_eurora_nodes(text: str, source: str = "<nodes>", name: str | None = None) -> Platform:
    """A platform from the text of a node file (see the module docstring); ``source``
    names the file in messages, ``name`` the platform (default: the file's base name)."""
    rows: list[tuple[int, int, int, int]] = []
    for no, fields in _lines(text):
        if len(fields) != len(_NODE_FIELDS):
            raise InputError(f"expected {len(_NODE_FIELDS)} fields ({' '.join(_NODE_FIELDS)}),"
                             f" got {len(fields)}", file=source, line=no)
        values = []
        for k, (raw, fname) in enumerate(zip(fields, _NODE_FIELDS, strict=True)):
            where = f"{k + 1} ({fname})"
            if not _INT_RE.match(raw):
                raise InputError(f"must be an integer, got {raw!r}", file=source, line=no,
                                 field=where)
            value = int(raw)
            if value < 0:
                raise InputError(f"must be >= 0, got {value}", file=source, line=no,
                                 field=where)
            values.append(value)
        node_id, cores, gpus, mics, mem, reserved = values
        if node_id != len(rows):
            raise InputError(f"node ids must run 0, 1, 2, ... in file order (the traces' "
                             f"node ids refer to them): expected {len(rows)}, got {node_id}",
                             file=source, line=no, field="1 (id)")
        if cores == 0:
            raise InputError("a node needs at least one core", file=source, line=no,
                             field="2 (cores)")
        if reserved not in (0, 1):
            raise InputError(f"must be 0 or 1, got {reserved}", file=source, line=no,
                             field="6 (reserved)")
        if reserved:
            raise InputError("reserved nodes are not supported (dispatchlab does not "
                             "dedicate nodes to the reservation queue); set the flag to 0",
                             file=source, line=no, field="6 (reserved)")
        rows.append((cores, gpus, mics, mem))
    if not rows:
        raise InputError("no nodes in the node file", file=source)
    half = len(rows) // 2
    groups: list[list] = []  # [key, freq, count]
    for k, row in enumerate(rows):
        freq = _LOW_FREQ if k < half else _HIGH_FREQ
        if groups and groups[-1][0] == row and groups[-1][1] == freq:
            groups[-1][2] += 1
        else:
            groups.append([row, freq, 1])
    types = []
    used: dict[str, int] = {}
    for (cores, gpus, mics, mem), freq, count in groups:
        tname = f"{_node_kind(gpus, mics)}-{freq}"
        used[tname] = used.get(tname, 0) + 1
        if used[tname] > 1:
            tname = f"{tname}-{used[tname]}"
        types.append(NodeType(tname, count, {"core": cores, "gpu": gpus, "mic": mics,
                                             "mem": mem}, None, EURORA_NODE_MAX_POWER,
                              _EFFICIENCY_RANK[freq] if half else 0))
    label = name or PurePosixPath(source.replace("\\", "/")).name
    return Platform(tuple(types), name=label)


def read_eurora_nodes(path: str | Path, name: str | None = None) -> Platform:
    """The platform of a PA-HPC-SIM node file, or ``ARCHIVE#MEMBER`` (see the module
    docstring). Every node gets ``max_power`` :data:`EURORA_NODE_MAX_POWER` (400 W,
    PA-HPC-SIM's per-node bound; the file has no power). No queues: add them with
    :meth:`Platform.with_queues` and :func:`read_system_queues`, or use a platform TOML
    with ``queues_file``."""
    text, shown = read_source(path, "node file")
    return parse_eurora_nodes(text, shown, name)


# ------------------------------------------------------------------------ queues
def parse_system_queues(text: str, source: str = "<queues>") -> dict[str, int]:
    """Queue name -> EWT (s) from the text of a ``system_queues`` file, in file order."""
    out: dict[str, int] = {}
    for no, fields in _lines(text):
        if len(fields) != 2:
            raise InputError(f"expected 2 fields (name EWT), got {len(fields)}", file=source,
                             line=no)
        qname, raw = fields
        if qname in out:
            raise InputError(f"queue {qname!r} given twice", file=source, line=no,
                             field="1 (name)")
        value = int(raw) if _INT_RE.match(raw) else raw
        out[qname] = check_ewt(value, source=source, line=no, field="2 (EWT)")
    if not out:
        raise InputError("no queues in the queue file", file=source)
    queue_table(out, source=source)  # same rules as every queue table
    return out


def read_system_queues(path: str | Path) -> dict[str, int]:
    """Queue name -> EWT in seconds from a PA-HPC-SIM ``system_queues`` file (or
    ``ARCHIVE#MEMBER``): ``name EWT`` per line, EWT an integer > 0."""
    text, shown = read_source(path, "queue file")
    return parse_system_queues(text, shown)
