"""Platform files: a TOML platform file, a PA-HPC-SIM node file, a trace's machine.

The readers that turn files into a :class:`~dispatchlab.platform.platform.Platform`
(which itself is pure data and reads nothing):

* :func:`read_platform` (``--platform FILE``, a campaign's ``file =``): a TOML file
  (:func:`read_platform_toml`), a Slurm ``slurm.conf``
  (:func:`dispatchlab.platform.slurmconf.read_slurm_conf`) or a PA-HPC-SIM node file
  (:func:`dispatchlab.platform.eurora.read_eurora_nodes`), each also as a member of a
  tar archive, ``ARCHIVE#MEMBER`` (see :mod:`dispatchlab.platform.eurora`);
  :func:`load_platform_file` also returns the files read (for provenance);
* :func:`platform_from_table`: a parsed TOML table (what :func:`read_platform_toml`
  reads, also built in memory by ``platform infer``);
* :func:`trace_platform`: a trace's default platform, from its header or its Alea
  machine file (:func:`dispatchlab.platform.alea.read_alea_machines`).

The Eurora preset is :func:`dispatchlab.platform.eurora.eurora_platform`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dispatchlab.core.components import load_object
from dispatchlab.core.errors import InputError, parse_toml
from dispatchlab.platform.alea import read_alea_machines
from dispatchlab.platform.eurora import (
    looks_like_node_file,
    parse_eurora_nodes,
    read_source,
    read_system_queues,
    split_archive,
)
from dispatchlab.platform.hostlist import hosts as expand_hosts
from dispatchlab.platform.platform import (
    MAX_NODES,
    NodeType,
    Partition,
    Platform,
    check_node_type,
    check_partitions,
    queue_table,
)

__all__ = ["load_platform_file", "platform_from_table", "read_platform",
           "read_platform_toml", "trace_platform"]

#: The Slurm ``slurm.conf`` reader (:mod:`dispatchlab.platform.slurmconf`), reached by
#: lazy ``"module:name"`` entries (as the trace readers of
#: :data:`dispatchlab.workload.load.READERS`): imported when a platform file is read,
#: so a run on a trace's own machine or a preset does not load it.
SLURM_CONF = {"sniff": "dispatchlab.platform.slurmconf:looks_like_slurm_conf",
              "read": "dispatchlab.platform.slurmconf:read_slurm_conf"}
#: Top-level keys of a platform TOML file.
_TOML_KEYS = frozenset({"name", "pooled", "node_type", "queues", "queues_file",
                        "max_dynamic_power", "partition"})
#: Keys of a ``[[partition]]`` table.
_PARTITION_KEYS = frozenset({"name", "nodes", "node_types", "default", "max_time",
                             "max_nodes", "min_nodes", "exclusive"})


def read_platform(path: str | Path) -> Platform:
    """A platform file of any supported kind: TOML (:func:`read_platform_toml`), a
    Slurm ``slurm.conf`` (:func:`dispatchlab.platform.slurmconf.read_slurm_conf`) or a
    PA-HPC-SIM node file (:func:`dispatchlab.platform.eurora.read_eurora_nodes`),
    possibly ``ARCHIVE#MEMBER``. The kind (ours): a ``.toml`` name is TOML; a name
    ``slurm.conf`` or ``*.conf`` is a slurm.conf; a ``nodes_*`` name is a node file;
    otherwise the content decides: a line starting with ``NodeName=``,
    ``PartitionName=`` or ``Include FILE`` makes a slurm.conf
    (:func:`~dispatchlab.platform.slurmconf.looks_like_slurm_conf`), a first line of
    5 or more integers a node file
    (:func:`~dispatchlab.platform.eurora.looks_like_node_file`), anything else TOML."""
    return load_platform_file(path)[0]


def read_platform_toml(path: str | Path) -> Platform:
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

    A node type may also give ``idle_power`` / ``max_power`` (W),
    ``efficiency_rank`` (integer >= 0, lower = more energy-efficient; default 0),
    ``weight`` (Slurm's node ``Weight``, integer >= 0, default 1: allocators take nodes
    of lower weight first), ``hosts`` (a Slurm host list of its ``count`` nodes,
    ``"cn[001-060]"``, in node order) and ``features`` (a list of words;
    ``"gpu:a100"`` marks typed GPUs).

    Partitions (optional, any number)::

        [[partition]]
        name = "gpu"
        nodes = "gpu[01-04]"       # a host list of node hosts, or:
        # node_types = ["gpu"]     # every node of these types
        default = false            # the partition of jobs that name none
        max_time = 86400           # longest requested time (s)
        max_nodes = 4              # most nodes of one job
        min_nodes = 1
        exclusive = false          # jobs hold whole nodes (OverSubscribe=EXCLUSIVE)

    Errors name the file and ``partition[K].FIELD``.
    ``pooled = true`` makes it one pool (then exactly one node type with count 1).
    ``queues_file = "system_queues"`` reads the queue table from a PA-HPC-SIM
    ``system_queues`` file (or ``ARCHIVE#MEMBER``), relative to the TOML file's
    folder (for a TOML inside an archive: the archive's folder); entries of a
    ``[queues]`` table given too are added to it and override it (ours). ``path``
    may be ``ARCHIVE#MEMBER``.
    """
    text, shown = read_source(path, "platform file")
    return _from_toml_text(text, shown, split_archive(path)[0].parent)


def _from_toml_text(text: str, source: str, base: Path) -> Platform:
    data = parse_toml(text, source)
    return platform_from_table(data, source=source, base=base)


def platform_from_table(data: dict, source: str = "<platform>",
                        base: str | Path | None = None) -> Platform:
    """A platform from the parsed TOML table ``data`` (keys as in
    :func:`read_platform_toml`); ``source`` names it in messages, ``base`` is the
    folder a relative ``queues_file`` is read from (default: the current folder)."""
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
                            "efficiency_rank", "hosts", "features", "weight"}
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
        weight = t.get("weight", 1)
        if not isinstance(weight, int) or isinstance(weight, bool) or weight < 0:
            raise InputError(f"must be an integer >= 0, got {weight!r}", file=source,
                             field=f"{where}.weight")
        out.append(NodeType(str(t.get("name", f"type{k}")), count, dict(cap),
                            t.get("idle_power"), t.get("max_power"), rank, weight=weight,
                            features=_toml_features(t, source, where),
                            hosts=_toml_hosts(t, count, source, where)))
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
    partitions = _toml_partitions(data.get("partition"), out, source)
    try:
        return Platform(tuple(out), name=str(data.get("name", Path(source).stem)),
                        is_pooled=pooled, queues=queues,
                        max_dynamic_power=None if mdp is None else float(mdp),
                        partitions=partitions)
    except InputError as exc:  # e.g. a host given to two nodes: name the file
        if exc.file is not None:
            raise
        raise InputError(exc.message, file=source, field=exc.field or "node_type") from None


def _toml_features(t: dict, source: str, where: str) -> tuple[str, ...]:
    """A node type's ``features``: a list of words (no blanks, ``&``, ``|``, ``,``)."""
    value = t.get("features", [])
    if not isinstance(value, list) or not all(
            isinstance(f, str) and f and not any(c.isspace() or c in "&|," for c in f)
            for f in value):
        raise InputError(f"must be a list of words (e.g. [\"avx512\", \"gpu:a100\"]), got "
                         f"{value!r}", file=source, field=f"{where}.features")
    return tuple(dict.fromkeys(value))


def _toml_hosts(t: dict, count: int, source: str, where: str) -> tuple[str, ...]:
    """A node type's ``hosts``: a Slurm host list (or a list of names) of ``count``."""
    value = t.get("hosts")
    if value is None:
        return ()
    try:
        if isinstance(value, str):
            names = expand_hosts(value)
        elif isinstance(value, list) and all(isinstance(h, str) and h for h in value):
            names = list(dict.fromkeys(value))
        else:
            raise InputError(f"must be a host list such as \"cn[001-004]\", got {value!r}")
    except InputError as exc:
        raise InputError(exc.message, file=source, field=f"{where}.hosts") from None
    if len(names) != count:
        raise InputError(f"names {len(names)} hosts for count = {count}", file=source,
                         field=f"{where}.hosts")
    return tuple(names)


def _toml_partitions(value: object, types: list[NodeType],
                     source: str) -> tuple[Partition, ...]:
    """The ``[[partition]]`` tables as :class:`Partition` s (nodes by host list or node
    types), validated; errors name ``partition[K].FIELD``."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InputError("must be [[partition]] tables", file=source, field="partition")
    host_index: dict[str, int] = {}
    type_nodes: dict[str, list[int]] = {}
    start = 0
    for nt in types:
        names = nt.hosts or tuple(f"{nt.name}-{k}" for k in range(nt.count))
        host_index.update({h: start + k for k, h in enumerate(names)})
        type_nodes.setdefault(nt.name, []).extend(range(start, start + nt.count))
        start += nt.count
    out = []
    for k, p in enumerate(value):
        where = f"partition[{k}]"
        if not isinstance(p, dict):
            raise InputError("must be a table", file=source, field=where)
        unknown = set(p) - _PARTITION_KEYS
        if unknown:
            raise InputError(f"unknown keys {sorted(unknown)} (expected "
                             f"{', '.join(sorted(_PARTITION_KEYS))})", file=source,
                             field=where)
        name = p.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"needs a name (a word), got {name!r}", file=source,
                             field=f"{where}.name")
        nodes = _partition_nodes(p, host_index, type_nodes, source, where)
        for key in ("default", "exclusive"):
            if not isinstance(p.get(key, False), bool):
                raise InputError(f"must be true or false, got {p[key]!r}", file=source,
                                 field=f"{where}.{key}")
        for key in ("max_time", "max_nodes", "min_nodes"):
            v = p.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v <= 0):
                raise InputError(f"must be an integer > 0, got {v!r}", file=source,
                                 field=f"{where}.{key}")
        out.append(Partition(name, nodes, default=p.get("default", False),
                             max_time=p.get("max_time"), max_nodes=p.get("max_nodes"),
                             min_nodes=p.get("min_nodes"), exclusive=p.get("exclusive", False)))
    return check_partitions(out, start, source=source)


def _partition_nodes(p: dict, host_index: dict[str, int], type_nodes: dict[str, list[int]],
                     source: str, where: str) -> tuple[int, ...]:
    """The node indices of a ``[[partition]]``: ``nodes`` (a host list; ``ALL``: every
    node) or ``node_types`` (a list of node type names), exactly one of them."""
    if ("nodes" in p) == ("node_types" in p):
        raise InputError("give either nodes (a host list) or node_types (a list of node "
                         "type names)", file=source, field=f"{where}.nodes")
    if "node_types" in p:
        wanted = p["node_types"]
        if not isinstance(wanted, list) or not wanted or not all(
                isinstance(t, str) for t in wanted):
            raise InputError(f"must be a non-empty list of node type names, got {wanted!r}",
                             file=source, field=f"{where}.node_types")
        missing = [t for t in wanted if t not in type_nodes]
        if missing:
            raise InputError(f"no node type {missing[0]!r} (types: "
                             f"{', '.join(type_nodes)})", file=source,
                             field=f"{where}.node_types")
        return tuple(sorted({k for t in wanted for k in type_nodes[t]}))
    text = p["nodes"]
    if not isinstance(text, str):
        raise InputError(f"must be a host list such as \"cn[001-004]\", got {text!r}",
                         file=source, field=f"{where}.nodes")
    if text.strip().upper() == "ALL":
        return tuple(range(len(host_index)))
    try:
        names = expand_hosts(text)
    except InputError as exc:
        raise InputError(exc.message, file=source, field=f"{where}.nodes") from None
    missing = [h for h in names if h not in host_index]
    if missing or not names:
        raise InputError(f"host {missing[0]!r} is no node of the platform (give node "
                         "types hosts = \"...\")" if missing else "names no host",
                         file=source, field=f"{where}.nodes")
    return tuple(sorted({host_index[h] for h in names}))


def trace_platform(info: Any, advice: str = "give a platform") -> Platform:
    """The default platform of a trace. ``info`` is the trace's ``TraceInfo``.

    When ``info.companions`` names a ``machines`` file (Alea's machine file, read
    with the trace), the node-level platform it describes
    (:func:`dispatchlab.platform.alea.read_alea_machines`); otherwise one pool of the
    header's MaxProcs cores (MaxNodes when MaxProcs is absent). A header with
    neither raises :class:`InputError` ending with ``advice``."""
    machines = (getattr(info, "companions", None) or {}).get("machines")
    if machines:
        return read_alea_machines(machines)
    cores = info.max_procs or info.max_nodes
    if not cores:
        raise InputError(f"the trace header has neither MaxProcs nor MaxNodes; {advice}",
                         file=info.source)
    return Platform.pooled(cores, name=f"MaxProcs={cores}" if info.max_procs else
                           f"MaxNodes={cores}")


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
    """:func:`read_platform`, plus the files it read (for provenance checksums):
    the platform file or its archive, a TOML's ``queues_file`` (or its archive), the
    files a slurm.conf includes."""
    text, shown = read_source(path, "platform file")
    real = split_archive(path)[0]
    if load_object(SLURM_CONF["sniff"])(shown, text):
        conf = load_object(SLURM_CONF["read"])(path)
        return conf.platform, conf.files
    if looks_like_node_file(shown, text):
        return parse_eurora_nodes(text, shown), (real,)
    base = real.parent
    platform = _from_toml_text(text, shown, base)
    files = [real]
    import tomllib  # (imported when a platform file is read: start-up stays lean)

    data = tomllib.loads(text)  # parsed without error just above
    spec = _queues_file_spec(data, shown, base)
    if spec is not None:
        files.append(split_archive(spec)[0])
    return platform, tuple(files)
