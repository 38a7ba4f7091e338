"""The cluster read from Slurm's ``slurm.conf`` (``--platform slurm.conf``).

:func:`read_slurm_conf` turns a ``slurm.conf`` (and the files it includes) into a
node-level :class:`~dispatchlab.platform.platform.Platform`; the rules (ours where
Slurm leaves a choice open) are:

**Syntax** (as ``slurmctld`` reads it). ``#`` starts a comment (``\\#`` is a literal
``#``); a line ending in ``\\`` continues on the next one (errors name the first line);
a line is one or more ``KEY=VALUE`` pairs separated by blanks, a value may be quoted
(``Reason="down for repair"``); keys and the words ``YES``/``NO``/``ALL``/``DEFAULT``/
``UNLIMITED`` are case-insensitive. ``Include PATH`` reads another file in place:
a relative ``PATH`` is relative to the folder of the file that includes it (for a file
inside a tar archive: the archive's folder), ``%c`` in it is the ``ClusterName`` read
before it (Slurm's include modifier), a glob pattern (``conf.d/*.conf``) reads
every match in name order, a path matching no file is an error, and a file including
itself (directly or not) is refused. The first key of a line says what it is:
``NodeName``, ``PartitionName``, ``NodeSet``, ``DownNodes``, ``FrontendName``, or a
global parameter (``ClusterName=...``, ``GresTypes=...``, ...). A line that is not
``KEY=VALUE`` pairs is an error, as is a global key one letter or so from a line kind
(``NodeNames=``: a typo would otherwise drop its nodes silently).

**Nodes** (``NodeName`` lines; a ``NodeName=DEFAULT`` line sets defaults for the lines
after it). Each line is one node type, in file order, named by the line's host list;
its nodes are the hosts of the list (:mod:`dispatchlab.platform.hostlist`) in the order
written. A host named on two lines is an error. Capacities:

* ``core`` = ``CPUs`` (old name ``Procs``) when given, else ``Boards`` x
  ``SocketsPerBoard`` (or ``Sockets``) x ``CoresPerSocket`` x ``ThreadsPerCore`` (each
  1 when absent): **the number Slurm schedules as CPUs**, which is what sacct's
  ``AllocCPUS``/``ReqCPUS`` count (with ``ThreadsPerCore=2`` and no ``CPUs``, a 64-core
  node has 128);
* ``gpu`` = the sum of the ``gpu`` entries of ``Gres`` (``gpu:4``, ``gpu:a100:4``,
  ``gpu:a100:2,gpu:v100:2``; a ``(S:0-1)`` socket binding is dropped; no count means
  1): a typed entry also gives the node the feature ``gpu:TYPE``; other GRES
  (``mps``, ``shard``, ``nic``...) are listed as not modelled; with ``GresTypes`` given,
  a GRES it does not name is an error (as ``slurmctld`` refuses it);
* ``mem`` = ``RealMemory`` (MB) when any NodeName line gives one (a line without it
  then gets Slurm's default, 1 MB, with a note); without any ``RealMemory`` the platform
  has no ``mem`` resource (memory is not a constraint);
* ``weight`` = ``Weight`` (default 1: lower weights are allocated first);
  ``features`` = the words of ``Feature``/``Features`` (comma-separated) then the
  ``gpu:TYPE`` of typed GRES.

``NodeAddr``, ``NodeHostname``, ``Port``, ``TmpDisk``, ``Reason``... are ignored;
``State`` other than ``UNKNOWN``/``IDLE``, ``CoreSpecCount``, ``CpuSpecList`` and
``MemSpecLimit`` change what Slurm would run and are listed as not modelled. An unknown
key in a NodeName or PartitionName line is an error (``slurmctld`` refuses it too).

**Partitions** (``PartitionName`` lines, in file order; a ``PartitionName=DEFAULT`` line
sets defaults). ``Nodes`` is a host list whose names are nodes, ``ALL`` (every node) or
the name of a ``NodeSet`` (``NodeSet=NAME Nodes=LIST`` or ``Feature=WORD``: the nodes
having that feature); a name that is none of these is an error. ``Default=YES``;
``MaxTime`` (minutes, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``;
``UNLIMITED``/``INFINITE`` is no limit) in seconds; ``MaxNodes`` (``UNLIMITED``: none),
``MinNodes`` (0: none); ``OverSubscribe=EXCLUSIVE`` (or the old ``Shared=EXCLUSIVE``)
makes it exclusive; ``PriorityTier`` and ``PriorityJobFactor`` (and the old
``Priority``, setting both) are kept. A partition without nodes is left out, with a note.

**Not modelled.** Keys that change what Slurm would schedule and that the platform does
not carry (the scheduler and priority plug-ins and weights, preemption, selection
parameters, default and maximum memory per CPU or node, ``DefaultTime``, partition
access lists and QOS, ``OverSubscribe=YES/FORCE``, down, drained or future nodes,
``DownNodes``, specialised cores...) are collected in :attr:`SlurmConf.notes`, each key
once with the lines where it appears; other keys (daemons, paths, time-outs, logging)
are read and ignored.

Errors are :class:`~dispatchlab.core.errors.InputError` naming the file, the line and
the key (as ``field``).
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath

from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import close_matches
from dispatchlab.platform import hostlist
from dispatchlab.platform.eurora import read_source, split_archive
from dispatchlab.platform.platform import (
    MAX_CAPACITY,
    MAX_NODES,
    NodeType,
    Partition,
    Platform,
)

__all__ = ["SlurmConf", "looks_like_slurm_conf", "parse_slurm_conf", "read_slurm_conf",
           "slurm_conf_note", "slurm_minutes"]

#: The most files one configuration may read (includes included): a guard against a
#: pattern such as ``Include /*``.
MAX_FILES = 1000

#: The keys of a NodeName line (lower case -> Slurm's spelling); any other is an error.
_NODE_KEYS = {k.lower(): k for k in (
    "NodeName", "NodeHostname", "NodeAddr", "BcastAddr", "Boards", "CoreSpecCount",
    "CoresPerSocket", "CPUBind", "CPUs", "CpuSpecList", "Feature", "Features", "Gres",
    "MemSpecLimit", "Parameters", "Port", "Procs", "RealMemory", "Reason",
    "RestrictedCoresPerGPU", "Sockets", "SocketsPerBoard", "State", "ThreadsPerCore",
    "TmpDisk", "TRESWeights", "Weight", "Comment")}
#: NodeName keys that change what Slurm would run and are not modelled.
_NODE_NOT_MODELLED = {"corespeccount", "cpuspeclist", "memspeclimit",
                      "restrictedcorespergpu"}
#: Node states under which a node runs jobs.
_RUNNING_STATES = {"unknown", "idle", ""}

#: The keys of a PartitionName line.
_PARTITION_KEYS = {k.lower(): k for k in (
    "PartitionName", "AllocNodes", "AllowAccounts", "AllowGroups", "AllowQos", "Alternate",
    "CpuBind", "Default", "DefaultTime", "DefCpuPerGPU", "DefMemPerCPU", "DefMemPerGPU",
    "DefMemPerNode", "DenyAccounts", "DenyQos", "DisableRootJobs", "ExclusiveTopo",
    "ExclusiveUser", "GraceTime", "Hidden", "LLN", "MaxCPUsPerNode", "MaxCPUsPerSocket",
    "MaxMemPerCPU", "MaxMemPerNode", "MaxNodes", "MaxTime", "MinNodes", "Nodes",
    "OverSubscribe", "OverTimeLimit", "PowerDownOnIdle", "PreemptMode", "Priority",
    "PriorityJobFactor", "PriorityTier", "QOS", "ReqResv", "ResumeTimeout", "RootOnly",
    "SelectTypeParameters", "Shared", "State", "SuspendTime", "SuspendTimeout",
    "Topology", "TRESBillingWeights")}
#: PartitionName keys that change what Slurm would run and are not modelled.
_PARTITION_NOT_MODELLED = {
    "allowaccounts", "allowgroups", "allowqos", "denyaccounts", "denyqos", "defaulttime",
    "defcpupergpu", "defmempercpu", "defmempergpu", "defmempernode", "exclusiveuser",
    "exclusivetopo", "gracetime", "lln", "maxcpuspernode", "maxcpuspersocket",
    "maxmempercpu", "maxmempernode", "overtimelimit", "preemptmode", "qos", "reqresv",
    "selecttypeparameters", "tresbillingweights", "alternate"}

#: Global keys that change what Slurm would schedule and are not modelled.
_GLOBAL_NOT_MODELLED = {k.lower(): k for k in (
    "SchedulerType", "SchedulerParameters", "SelectType", "SelectTypeParameters",
    "PriorityType", "PriorityFlags", "PriorityDecayHalfLife", "PriorityCalcPeriod",
    "PriorityFavorSmall", "PriorityMaxAge", "PriorityUsageResetPeriod",
    "PriorityWeightAge", "PriorityWeightAssoc", "PriorityWeightFairshare",
    "PriorityWeightJobSize", "PriorityWeightPartition", "PriorityWeightQOS",
    "PriorityWeightTRES", "PriorityParameters", "PriorityDecayHalflife",
    "FairShareDampeningFactor", "PreemptType", "PreemptMode", "PreemptExemptTime",
    "PreemptParameters", "DefMemPerCPU", "DefMemPerNode", "DefMemPerGPU",
    "DefCpuPerGPU", "MaxMemPerCPU", "MaxMemPerNode", "EnforcePartLimits",
    "OverTimeLimit", "AccountingStorageEnforce", "TopologyPlugin", "TopologyParam",
    "MaxJobCount", "MaxStepCount", "MaxTasksPerNode", "SchedulerTimeSlice",
    "ReconfigFlags", "GpuFreqDef", "CpuFreqDef")}

#: The kinds of line, by first key (lower case).
_LINE_KINDS = ("nodename", "partitionname", "nodeset", "downnodes", "frontendname")
_KIND_NAMES = ("NodeName", "PartitionName", "NodeSet", "DownNodes", "FrontendName",
               "Include")

_PAIR_RE = re.compile(r'\s*([^=\s"]+)=("(?:[^"\\]|\\.)*"|[^\s"]*)(?=\s|$)')
_INT_RE = re.compile(r"[0-9]{1,15}")
_TIME_RE = re.compile(
    r"(?:(?P<d>[0-9]{1,6})-(?P<dh>[0-9]{1,4})(?::(?P<dm>[0-9]{1,4})(?::(?P<ds>[0-9]{1,4}))?)?"
    r"|(?P<a>[0-9]{1,9})(?::(?P<b>[0-9]{1,4})(?::(?P<c>[0-9]{1,4}))?)?)", re.ASCII)


@dataclass(frozen=True)
class SlurmConf:
    """What :func:`read_slurm_conf` read: the ``platform``, the ``files`` read (the
    configuration first, then its includes in reading order), ``notes`` (one text per
    key that matters for scheduling and is not modelled, naming the lines where it
    appears, in first-appearance order) and ``gres_types`` (``GresTypes``)."""

    platform: Platform
    files: tuple[Path, ...]
    notes: tuple[str, ...] = ()
    gres_types: tuple[str, ...] = ()

    def note_line(self) -> str:
        """The notes as one line (empty when there are none)."""
        if not self.notes:
            return ""
        return "slurm.conf keys not modelled (listed once): " + "; ".join(self.notes)


def looks_like_slurm_conf(name: str, text: str | None = None) -> bool:
    """True when a platform file is a ``slurm.conf`` (ours): a base name ``slurm.conf``
    or ending in ``.conf`` is one, a ``.toml`` or ``nodes_*`` name (TOML, a PA-HPC-SIM
    node file) is not; otherwise it is one when a line starts with ``NodeName=``,
    ``PartitionName=`` or ``Include FILE`` (any case; never valid TOML as Slurm writes
    them). ``name`` may be ``ARCHIVE#MEMBER`` (the member's name counts too)."""
    whole = PurePosixPath(str(name).replace("\\", "/")).name.lower()
    bases = {whole, PurePosixPath(whole.rsplit("#", 1)[-1]).name}
    if any(b.startswith("nodes_") or b.endswith(".toml") for b in bases):
        return False
    if any(b == "slurm.conf" or b.endswith(".conf") for b in bases):
        return True
    if text is None:
        return False
    return re.search(r"^[ \t]*(?:(?:nodename|partitionname)[ \t]*=|include[ \t]+[^=\s])",
                     text, re.IGNORECASE | re.MULTILINE) is not None


def slurm_conf_note(spec: str | Path) -> str:
    """The one note line of the platform file ``spec`` when it is a slurm.conf (the keys
    read but not modelled, :meth:`SlurmConf.note_line`), else ``""``."""
    text, shown = read_source(spec, "platform file")
    if not looks_like_slurm_conf(shown, text):
        return ""
    return read_slurm_conf(spec).note_line()


def slurm_minutes(text: str) -> int | None:
    """A Slurm time limit in **seconds** (``None`` for ``UNLIMITED``/``INFINITE``):
    ``M`` (minutes), ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``. Raises
    ``ValueError`` for anything else (the caller locates it)."""
    t = text.strip()
    if t.lower() in ("unlimited", "infinite"):
        return None
    m = _TIME_RE.fullmatch(t)
    if m is None:
        raise ValueError(t)
    if m["d"] is not None:
        return (int(m["d"]) * 86400 + int(m["dh"]) * 3600 + int(m["dm"] or 0) * 60
                + int(m["ds"] or 0))
    if m["c"] is not None:
        return int(m["a"]) * 3600 + int(m["b"]) * 60 + int(m["c"])
    if m["b"] is not None:
        return int(m["a"]) * 60 + int(m["b"])
    return int(m["a"]) * 60


@dataclass
class _Line:
    """One logical line: ``pairs`` (key as written, lower-case key, value unquoted)."""

    source: str
    number: int
    pairs: list[tuple[str, str, str]]
    #: the line's place in reading order (includes read in place)
    order: int = 0

    def error(self, message: str, key: str | None = None) -> InputError:
        return InputError(message, file=self.source, line=self.number, field=key)

    def where(self) -> str:
        return f"{self.source}:{self.number}"


@dataclass
class _Reader:
    """The state of one read: files seen, lines gathered, includes being read."""

    files: list[Path] = field(default_factory=list)
    lines: list[_Line] = field(default_factory=list)
    stack: list[Path] = field(default_factory=list)
    #: the ClusterName read so far (an Include's ``%c``)
    cluster: str | None = None

    def text(self, text: str, source: str, base: Path) -> None:
        """Gather the lines of ``text`` (named ``source``), reading includes from
        ``base``."""
        physical = text.splitlines()
        k = 0
        while k < len(physical):
            number = k + 1
            parts = []
            while True:
                body = _strip_comment(physical[k]).rstrip()
                k += 1
                if body.endswith("\\") and k < len(physical):
                    parts.append(body[:-1])
                    continue
                parts.append(body[:-1] if body.endswith("\\") else body)
                break
            logical = " ".join(p.strip() for p in parts).strip()
            if not logical:
                continue
            head, _, rest = logical.partition(" ")
            if head.lower() == "include" and "=" not in head:
                self.include(rest.strip(), source, number, base)
                continue
            line = _Line(source, number, _pairs(logical, source, number), len(self.lines))
            self.lines.append(line)
            if line.pairs[0][1] == "clustername":
                self.cluster = line.pairs[0][2]

    def include(self, spec: str, source: str, number: int, base: Path) -> None:
        if not spec:
            raise InputError("Include needs a file name", file=source, line=number,
                             field="Include")
        if len(spec) >= 2 and spec[0] == spec[-1] == '"':
            spec = spec[1:-1]
        if "%c" in spec:  # Slurm's include modifier: the cluster name
            if self.cluster is None:
                raise InputError("Include uses %c (the cluster name) before any "
                                 "ClusterName line", file=source, line=number,
                                 field="Include")
            spec = spec.replace("%c", self.cluster)
        path = Path(spec).expanduser()
        if not path.is_absolute():
            path = base / path
        if glob.has_magic(str(path)):
            found = sorted(Path(p) for p in glob.glob(str(path)) if Path(p).is_file())
            if not found:
                raise InputError(f"no file matches {spec!r}", file=source, line=number,
                                 field="Include")
        else:
            if not path.is_file():
                raise InputError(f"included file not found: {path}", file=source,
                                 line=number, field="Include")
            found = [path]
        for one in found:
            real = one.resolve()
            if real in self.stack:
                raise InputError(f"{one} includes itself (an Include loop)", file=source,
                                 line=number, field="Include")
            self.read(one, real)

    def read(self, path: Path, real: Path) -> None:
        if len(self.files) >= MAX_FILES:
            raise InputError(f"more than {MAX_FILES} files read (an Include pattern too "
                             "wide?)", file=str(path), field="Include")
        text, shown = read_source(path, "slurm.conf")
        self.files.append(path)
        self.stack.append(real)
        self.text(text, shown, path.parent)
        self.stack.pop()


def _strip_comment(line: str) -> str:
    """``line`` up to its first ``#`` not escaped as ``\\#`` (which becomes ``#``)."""
    if "#" not in line:
        return line
    out = []
    k = 0
    while k < len(line):
        c = line[k]
        if c == "\\" and line[k + 1:k + 2] == "#":
            out.append("#")
            k += 2
            continue
        if c == "#":
            break
        out.append(c)
        k += 1
    return "".join(out)


def _pairs(text: str, source: str, number: int) -> list[tuple[str, str, str]]:
    out = []
    pos = 0
    while pos < len(text):
        m = _PAIR_RE.match(text, pos)
        if m is None:
            rest = text[pos:].strip()
            shown = rest if len(rest) <= 40 else rest[:37] + "..."
            raise InputError(f"expected KEY=VALUE, got {shown!r} (not a slurm.conf line)",
                             file=source, line=number)
        key, value = m[1], m[2]
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1].replace('\\"', '"')
        out.append((key, key.lower(), value))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


# ------------------------------------------------------------------ values
def _int(line: _Line, key: str, value: str, *, low: int = 0,
         high: int = MAX_CAPACITY) -> int:
    if _INT_RE.fullmatch(value.strip()) is None or not low <= int(value) <= high:
        raise line.error(f"expected an integer from {low} to {high:,}, got {value!r}", key)
    return int(value)


def _limit(line: _Line, key: str, value: str) -> int | None:
    """A node-count limit: an integer, ``UNLIMITED``/``INFINITE`` (None); 0 is None."""
    if value.strip().lower() in ("unlimited", "infinite"):
        return None
    return _int(line, key, value, high=MAX_NODES) or None


def _yes(line: _Line, key: str, value: str) -> bool:
    v = value.strip().lower()
    if v not in ("yes", "no"):
        raise line.error(f"expected YES or NO, got {value!r}", key)
    return v == "yes"


def _gres(line: _Line, key: str, value: str,
          gres_types: tuple[str, ...] | None) -> tuple[int, list[str], list[str]]:
    """``(gpus, gpu features, other GRES names)`` of a ``Gres=`` value."""
    gpus = 0
    features: list[str] = []
    other: list[str] = []
    for entry in _split_outside_parens(value):
        body = re.sub(r"\([^)]*\)$", "", entry.strip())
        if not body or body.lower() == "(null)":
            continue
        parts = body.split(":")
        name = parts[0]
        if gres_types is not None and name.lower() not in gres_types:
            raise line.error(f"GRES {name!r} is not in GresTypes "
                             f"({','.join(gres_types) or 'empty'})", key)
        rest = [p for p in parts[1:] if p.lower() != "no_consume"]
        if len(rest) > 2:
            raise line.error(f"a GRES is NAME[:TYPE][:COUNT], got {entry!r}", key)
        # NAME:TYPE:COUNT; NAME:X is a count when X starts with a digit, else a type
        count_text = rest[-1] if len(rest) == 2 or (rest and rest[-1][:1].isdigit()) \
            else None
        types = rest[:-1] if count_text is not None else rest
        count = 1
        if count_text is not None:
            count = _gres_count(line, key, count_text, entry)
        if name.lower() == "gpu":
            gpus += count
            features.extend(f"gpu:{t}" for t in types)
        else:
            other.append(name)
    return gpus, features, other


def _split_outside_parens(value: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for c in value:
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth <= 0:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(c)
    out.append("".join(cur))
    return out


def _gres_count(line: _Line, key: str, text: str, entry: str) -> int:
    m = re.fullmatch(r"([0-9]{1,12})([KMGkmg]?)", text)
    if m is None:
        raise line.error(f"the GRES count of {entry!r} is not a number", key)
    scale = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[m[2].lower()]
    count = int(m[1]) * scale
    if count > MAX_CAPACITY:
        raise line.error(f"the GRES count of {entry!r} is too large", key)
    return count


# ------------------------------------------------------------------ notes
class _Notes:
    """Not-modelled keys, each once with its lines."""

    def __init__(self) -> None:
        self.where: dict[str, list[str]] = {}
        self.first: dict[str, int] = {}

    def add(self, what: str, line: _Line) -> None:
        self.where.setdefault(what, [])
        self.first[what] = min(self.first.get(what, line.order), line.order)
        if line.where() not in self.where[what]:
            self.where[what].append(line.where())

    def texts(self, main: str) -> tuple[str, ...]:
        """One text per key, in the reading order of the line where it first appears
        (keys of one line in the order found); lines of ``main`` shown as ``line N``."""
        out = []
        for what in sorted(self.where, key=self.first.__getitem__):  # a stable sort
            places = self.where[what]
            shown = [p.removeprefix(main + ":") if p.startswith(main + ":") else p
                     for p in places]
            lines = [("line " + s) if s.isdigit() else s for s in shown[:5]]
            more = f" and {len(shown) - 5} more" if len(shown) > 5 else ""
            out.append(f"{what} ({', '.join(lines)}{more})")
        return tuple(out)


# ------------------------------------------------------------------ assembly
@dataclass
class _NodeLine:
    line: _Line
    hosts: list[str]
    values: dict[str, tuple[str, _Line]]


def read_slurm_conf(path: str | Path) -> SlurmConf:
    """The cluster of the ``slurm.conf`` at ``path`` (also ``ARCHIVE#MEMBER``), with the
    files read and the notes (see the module docstring for the rules)."""
    archive, member = split_archive(path)
    reader = _Reader()
    if member is None:
        reader.read(archive, archive.resolve())
    else:
        text, shown = read_source(path, "slurm.conf")
        reader.files.append(archive)
        reader.text(text, shown, archive.parent)
    shown = str(archive) if member is None else f"{archive}#{member}"
    return _assemble(reader, shown, Path(member or archive).stem)


def parse_slurm_conf(text: str, source: str = "<slurm.conf>",
                     base: str | Path | None = None) -> SlurmConf:
    """:func:`read_slurm_conf` of a text (named ``source`` in messages; includes read
    relative to ``base``, default the current folder)."""
    reader = _Reader()
    reader.text(text, source, Path(base) if base is not None else Path("."))
    return _assemble(reader, source, PurePosixPath(source).stem or "slurm")


def _assemble(reader: _Reader, main: str, stem: str) -> SlurmConf:
    notes = _Notes()
    gres_types: tuple[str, ...] | None = None
    cluster = None
    node_default: dict[str, tuple[str, _Line]] = {}
    part_default: dict[str, tuple[str, _Line]] = {}
    node_lines: list[_NodeLine] = []
    part_lines: list[tuple[_Line, str, dict[str, tuple[str, _Line]]]] = []
    nodesets: list[tuple[_Line, str, str, str]] = []
    owner: dict[str, _Line] = {}
    for line in reader.lines:
        key0, low0, value0 = line.pairs[0]
        if low0 == "nodename":
            values = _keyed(line, _NODE_KEYS, "NodeName")
            if value0.lower() == "default":
                node_default.update(values)
                continue
            try:
                names = hostlist.hosts(value0)
            except InputError as exc:
                raise line.error(exc.message, key0) from None
            if not names:
                raise line.error("names no node", key0)
            for h in names:
                if h in owner:
                    raise line.error(f"node {h!r} is already defined at "
                                     f"{owner[h].where()}", key0)
                owner[h] = line
            node_lines.append(_NodeLine(line, names, {**node_default, **values}))
        elif low0 == "partitionname":
            values = _keyed(line, _PARTITION_KEYS, "PartitionName")
            if value0.lower() == "default":
                part_default.update(values)
                continue
            part_lines.append((line, value0, {**part_default, **values}))
        elif low0 == "nodeset":
            keys = {low: (key, v) for key, low, v in line.pairs[1:]}
            unknown = set(keys) - {"nodes", "feature"}
            if unknown or len(keys) != 1:
                raise line.error("a NodeSet line is NodeSet=NAME Nodes=LIST or "
                                 "NodeSet=NAME Feature=WORD", key0)
            (low, (key, v)), = keys.items()
            nodesets.append((line, value0, low, v))
        elif low0 in ("downnodes", "frontendname"):
            notes.add({"downnodes": "DownNodes lines",
                       "frontendname": "FrontendName lines"}[low0], line)
        else:
            for key, low, value in line.pairs:
                if low in _GLOBAL_NOT_MODELLED:
                    notes.add(f"{_GLOBAL_NOT_MODELLED[low]}={value}", line)
                elif low == "grestypes":
                    gres_types = tuple(t.strip().lower() for t in value.split(",")
                                       if t.strip())
                elif low == "clustername":
                    cluster = value.strip() or None
                else:
                    near = close_matches(key, _KIND_NAMES, n=1, cutoff=0.8)
                    if near and key.lower() != near[0].lower():
                        raise line.error(f"unknown line kind {key!r}; did you mean "
                                         f"{near[0]!r}?", key)
    if not node_lines:
        raise InputError("no NodeName line: a slurm.conf names its nodes", file=main,
                         field="NodeName")
    types, features = _node_types(node_lines, gres_types, notes)
    hosts = [h for nl in node_lines for h in nl.hosts]
    index = {h: k for k, h in enumerate(hosts)}
    sets = _nodesets(nodesets, index, features)
    partitions = _partitions(part_lines, index, sets, notes)
    resources = tuple(r for r in ("core", "gpu", "mem")
                      if any(r in nt.capacity for nt in types))
    try:
        platform = Platform(tuple(types), name=cluster or stem, resource_names=resources,
                            partitions=tuple(partitions))
    except InputError as exc:
        raise InputError(exc.message, file=main, field=exc.field) from None
    return SlurmConf(platform, tuple(reader.files), notes.texts(main), gres_types or ())


def _keyed(line: _Line, known: dict[str, str], kind: str) -> dict[str, tuple[str, _Line]]:
    """The pairs of a NodeName/PartitionName line by lower-case key (unknown: error)."""
    out: dict[str, tuple[str, _Line]] = {}
    for key, low, value in line.pairs[1:]:
        if low not in known:
            near = close_matches(key, known.values(), n=1)
            hint = f"; did you mean {near[0]!r}?" if near else ""
            raise line.error(f"unknown key {key!r} in a {kind} line{hint}", key)
        out[low] = (value, line)
    return out


def _node_types(node_lines: list[_NodeLine], gres_types: tuple[str, ...] | None,
                notes: _Notes) -> tuple[list[NodeType], list[frozenset[str]]]:
    has_mem = any("realmemory" in nl.values for nl in node_lines)
    types, features_per_node = [], []
    for nl in node_lines:
        v = nl.values
        num = partial(_node_int, v)

        if "cpus" in v or "procs" in v:
            low = "cpus" if "cpus" in v else "procs"
            cores = num(low, 1, at_least=1)
        else:
            boards = num("boards", 1, at_least=1)
            sockets = (num("socketsperboard", 1, at_least=1) * boards
                       if "socketsperboard" in v else num("sockets", 1, at_least=1))
            cores = sockets * num("corespersocket", 1, at_least=1) * \
                num("threadspercore", 1, at_least=1)
            if cores > MAX_CAPACITY:
                raise nl.line.error("more CPUs per node than can be counted", "CPUs")
        capacity = {"core": cores}
        feats: list[str] = []
        if "feature" in v or "features" in v:
            value, _ = v["features" if "features" in v else "feature"]
            feats = [w.strip() for w in value.split(",") if w.strip()]
        if "gres" in v:
            value, where = v["gres"]
            gpus, gpu_features, other = _gres(where, "Gres", value, gres_types)
            if gpus:
                capacity["gpu"] = gpus
            feats.extend(f for f in gpu_features if f not in feats)
            for name in dict.fromkeys(other):
                notes.add(f"Gres={name}", where)
        if has_mem:
            if "realmemory" in v:
                value, where = v["realmemory"]
                capacity["mem"] = _int(where, "RealMemory", value, low=1)
            else:
                capacity["mem"] = 1
                notes.add("no RealMemory (Slurm's default 1 MB taken)", nl.line)
        weight = num("weight", 1)
        for low in _NODE_NOT_MODELLED:
            if low in v:
                notes.add(f"{_NODE_KEYS[low]} on nodes", v[low][1])
        if "state" in v:
            state, where = v["state"]
            if state.strip().lower() not in _RUNNING_STATES:
                notes.add(f"State={state} nodes (simulated as available)", where)
        name = nl.line.pairs[0][2]
        types.append(NodeType(name, len(nl.hosts), capacity, weight=weight,
                              features=tuple(feats), hosts=tuple(nl.hosts)))
        features_per_node.extend([frozenset(feats)] * len(nl.hosts))
    return types, features_per_node


def _node_int(v: dict[str, tuple[str, _Line]], low: str, default: int, *,
              at_least: int = 0) -> int:
    """The integer value of NodeName key ``low`` in ``v``, else ``default``."""
    if low not in v:
        return default
    value, where = v[low]
    return _int(where, _NODE_KEYS[low], value, low=at_least)


def _nodesets(nodesets: list[tuple[_Line, str, str, str]], index: dict[str, int],
              features: list[frozenset[str]]) -> dict[str, list[int]]:
    sets: dict[str, list[int]] = {}
    for line, name, low, value in nodesets:
        if name in sets:
            raise line.error(f"node set {name!r} is given twice", "NodeSet")
        if low == "feature":
            sets[name] = [k for k, f in enumerate(features) if value in f]
            continue
        sets[name] = _node_indices(line, "Nodes", value, index, {})
    return sets


def _node_indices(line: _Line, key: str, value: str, index: dict[str, int],
                  sets: dict[str, list[int]]) -> list[int]:
    try:
        names = hostlist.expand(value)
    except InputError as exc:
        raise line.error(exc.message, key) from None
    out: set[int] = set()
    unknown = []
    for name in names:
        if name.lower() == "all":
            out.update(index.values())
        elif name in sets:
            out.update(sets[name])
        elif name in index:
            out.add(index[name])
        else:
            unknown.append(name)
    if unknown:
        shown = hostlist.compress(unknown) if all(
            not any(c in u for c in "[], ") for u in unknown) else ",".join(unknown)
        raise line.error(f"names nodes that no NodeName line defines: {shown}", key)
    return sorted(out)


def _partitions(part_lines: list[tuple[_Line, str, dict[str, tuple[str, _Line]]]],
                index: dict[str, int], sets: dict[str, list[int]],
                notes: _Notes) -> list[Partition]:
    out: list[Partition] = []
    seen: dict[str, _Line] = {}
    default_at: _Line | None = None
    for line, name, v in part_lines:
        if name in seen:
            raise line.error(f"partition {name!r} is already defined at "
                             f"{seen[name].where()}", "PartitionName")
        if not name or any(c.isspace() or c == "," for c in name):
            raise line.error(f"a partition name must be a word without commas, got "
                             f"{name!r}", "PartitionName")
        seen[name] = line
        nodes: list[int] = []
        if "nodes" in v:
            value, where = v["nodes"]
            nodes = _node_indices(where, "Nodes", value, index, sets)
        if not nodes:
            notes.add(f"partition {name} without nodes (left out)", line)
            continue
        default = False
        if "default" in v:
            value, where = v["default"]
            default = _yes(where, "Default", value)
        if default:
            if default_at is not None:
                raise line.error(f"a second default partition (the first is at "
                                 f"{default_at.where()})", "Default")
            default_at = line
        max_time = None
        if "maxtime" in v:
            value, where = v["maxtime"]
            try:
                max_time = slurm_minutes(value)
            except ValueError:
                raise where.error(f"not a Slurm time (minutes, D-HH:MM:SS or UNLIMITED): "
                                  f"{value!r}", "MaxTime") from None
            if max_time == 0:
                raise where.error("a MaxTime of 0 lets no job run", "MaxTime")
        limits = {}
        for low in ("maxnodes", "minnodes"):
            if low in v:
                value, where = v[low]
                limits[low] = _limit(where, _PARTITION_KEYS[low], value)
        exclusive = False
        for low in ("oversubscribe", "shared"):
            if low in v:
                value, where = v[low]
                word = value.split(":")[0].strip().lower()
                if word == "exclusive":
                    exclusive = True
                elif word in ("yes", "force"):
                    notes.add(f"{_PARTITION_KEYS[low]}={value} (jobs sharing cores)", where)
                elif word != "no":
                    raise where.error(f"expected EXCLUSIVE, FORCE, YES or NO, got "
                                      f"{value!r}", _PARTITION_KEYS[low])
        tier = factor = None
        if "priority" in v:
            value, where = v["priority"]
            tier = factor = _int(where, "Priority", value, high=65533)
        if "prioritytier" in v:
            value, where = v["prioritytier"]
            tier = _int(where, "PriorityTier", value, high=65533)
        if "priorityjobfactor" in v:
            value, where = v["priorityjobfactor"]
            factor = _int(where, "PriorityJobFactor", value, high=65533)
        for low in sorted(_PARTITION_NOT_MODELLED & set(v), key=list(v).index):
            notes.add(f"{_PARTITION_KEYS[low]} on partitions", v[low][1])
        if "state" in v:
            state, where = v["state"]
            if state.strip().lower() != "up":
                notes.add(f"partition State={state} (simulated as UP)", where)
        out.append(Partition(name, tuple(nodes), default=default, max_time=max_time,
                             max_nodes=limits.get("maxnodes"),
                             min_nodes=limits.get("minnodes"), exclusive=exclusive,
                             priority_tier=tier, priority_job_factor=factor))
    return out
