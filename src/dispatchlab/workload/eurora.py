"""Read Eurora job instances (PA-HPC-SIM test data, ``*.log_crypt``) into a job table.

Source and format
-----------------
The PA-HPC-SIM test data (``Eurora-PA-HPC-SIM-testdata.tar.gz``, folder
``test_data/job_instances/historical_traces/N/``, N = 50 ... 1000 jobs per instance)
holds jobs that ran on Eurora, the CINECA prototype (64 nodes of 16 cores, 32 with
2 GPUs, 32 with 2 MICs, 32 GiB each). Its ``test_data/README`` gives one line per job,
``;``-separated fields in three ``__``-separated parts::

    job_id;executable;user;queue;arrival __ node;cores;gpus;mics;mem#node;...# __
    start;end;requested nodes;requested cores;requested memory;wall-time;NA;NA;status;app

e.g. ``498521;xxx;yyy;parallel;2014-03-31 09:30:36__14;8;0;0;2097152#__2014-03-31
09:30:37;2014-03-31 13:29:43;1;8;2;04:00;NA;NA;COMPLETED;2``. Dates are
``YYYY-MM-DD HH:MM:SS`` in local time; the middle part lists the node entries the job
actually used (node id, then the cores, GPUs, MICs and memory in KB it held there), each
entry ended by ``#``; the wall-time is ``HH:MM``. User and executable names are hidden
(always ``yyy`` and ``xxx``).

The rules below follow PA-HPC-SIM's reader (``TextBasedFwks/src/JobReader.hpp``) and
dispatcher (``Optimization/src/OnlineDispatcher.hpp::addJob``), tagged **[PA]**; the rest
is **ours**.

Input
-----
``path`` is an extracted ``.log_crypt`` file (plain or gzip, by its magic bytes) or a
member of a tar archive named as ``ARCHIVE#MEMBER`` (ours), e.g.
``Eurora-PA-HPC-SIM-testdata.tar.gz#job_instances/historical_traces/1000/hist_1000_20140331_093036.log_crypt``.
``MEMBER`` is the member's full name or any ending of it made of whole path components
(``1000/hist_1000_20140331_093036.log_crypt``, or just the file name) that names exactly
one regular file. The member is read with :mod:`tarfile`, nothing is extracted to disk.
An archive without a member is an :class:`~dispatchlab.core.errors.InputError` listing a few
job instances and the syntax. Blank lines are ignored (PA's ``script.sh`` deletes them);
line numbers are 1-based and count blank lines.

Jobs
----
* ``submit`` <- arrival, ``wait`` = start - arrival (the recorded schedule, which
  ``dispatchlab predict`` and ``trace info`` replay), ``run`` = end - start. Dates are read
  in ``timezone`` (default ``Europe/Rome``, where Eurora ran: ours; PA uses the local zone
  of the machine running it, ``mktime``); all times are integer seconds re-based so that
  the earliest arrival is t = 0 (PA's time origin too). ``info.unix_start_time`` and
  ``info.header["UnixStartTime"]`` hold that origin in Unix seconds,
  ``info.header["StartTime"]`` as an ISO 8601 local time with its UTC offset,
  ``info.header["TimeZoneString"]`` the zone. ``start < arrival`` and ``end < start`` are
  errors (ours; none in the archive).
* ``req_time`` <- the wall-time ``HH:MM`` in seconds (``00:00`` is 0). ``requested_time``
  (what the simulator uses): the wall-time, or when it is 0, ``(run // 60 + 1) * 60``
  (the real duration plus up to one minute, computed before the next rule) [PA].
* A run of 0 s becomes 1 s [PA]. A run longer than a wall-time > 0 is **clipped** to the
  wall-time [PA: ``addJob``, "this shouldn't happen but it does", a data collection bug];
  the number of clipped jobs is in ``info.header["ClippedRuns"]`` and in a ``Note`` line.
  After reading, ``run <= requested_time`` for every job.
* **Units and per-unit requests** are rebuilt from the used node entries [PA]: ``units``
  = the number of entries (an entry per chunk: a node may appear in several entries of
  one job, each is a unit; no entry: 1 unit); the totals of cores, GPUs, MICs and memory
  over the entries, a total of 0 cores becoming 4 and of 0 memory 200 MiB = 204800 KB
  [PA]; per-unit request = total // units (integer division) [PA]. They are
  ``resources["core"]``, ``["gpu"]``, ``["mic"]``, ``["mem"]``, the memory in **KB** as in
  the trace and in the node files (PA's optimizer divides by 1024 first and works in
  MB: ours to stay in KB, matching the ``eurora`` platform preset). The requested nodes,
  cores and memory fields are not used (PA ignores them too) and not checked. PA stops on
  jobs that exceed a node (more than 16 cores per unit, ...); here the simulator rejects
  them.
* ``alloc_procs`` = ``req_procs`` = the total cores (after the default of 4);
  ``req_mem`` = total memory / total cores rounded up (KB per processor); ``avg_cpu``,
  ``used_mem``, ``group``, ``partition``, ``prev_job``, ``think_time`` are -1.
* ``nodes_used`` = the number of distinct node ids (-1 when no entry);
  ``alloc_nodes`` = ``id:cores,id:cores`` per distinct node id in first-appearance order,
  the cores of a node met in several entries added (the ids as the trace writes them:
  1..64 in the historical traces; the node files number nodes 0..63, and no file says how
  the two relate).
* ``queue``: integer codes in order of first appearance in the returned (submit-sorted)
  table, names in ``info.codes["queue"]`` (``debug``, ``parallel``, ``R``, ``np_longpar``
  in the archive). ``user``: the hidden user name coded the same way, so every job has
  user 0 (``info.codes["user"] == ["yyy"]``): per-user statistics and history-based
  predictors degenerate to one user. The executable name (always ``xxx``) is dropped.
* ``app`` <- the application type (0 average, 1 CPU-bound, 2 memory-bound; an integer,
  no name table); a line without that last field gets 0 [PA].
* ``status``: the Slurm states of :mod:`dispatchlab.workload.status` (``COMPLETED`` ->
  1, ``FAILED`` -> 0, ``CANCELLED`` -> 5, ...), other -> -1 (the archive has only
  ``COMPLETED``).
* ``job_id`` is the trace's job number (it keys the power predictions of the archive).
* **Duplicate job ids** (some instances list every job twice): the first line of an id is
  kept, the later ones are skipped without being parsed and counted in
  ``info.skipped["duplicate job ids"]``; how many differ from the kept line is noted in
  ``info.header["Note"]``.

Ordering: stable by submit time, ties in file order (the files are not sorted).

Errors
------
A line that is not three ``__``-separated parts, a part with the wrong number of fields
(5 in the first, 9 or 10 in the last), a job id that is not a non-negative integer, a bad
date, node entry, wall-time, application type, or ``start < arrival`` / ``end < start``
is an :class:`~dispatchlab.core.errors.InputError` ``FILE:LINE: field NAME: message`` (NAME as
the README names the field: ``job_id``, ``arrival``, ``used nodes``, ``start``, ``end``,
``wall-time``, ``status``, ``application type``...). With ``lenient=True`` the line is
skipped and counted in ``info.malformed_skipped``. A date or wall-time at or beyond the
engine's time limit (:data:`dispatchlab.core.limits.TIME_LIMIT`; a date before 1970) and
an integer of more than 18 digits are such errors too. ``info.lines_read`` counts the
non-blank lines read (jobs + duplicates skipped + malformed lines skipped).
"""

from __future__ import annotations

import functools
import gzip
import math
import re
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.limits import time_problem
from dispatchlab.workload.jobs import FLOAT_FIELDS, SWF_FIELDS, JobTable, TraceInfo
from dispatchlab.workload.status import SLURM_STATE_STATUS
from dispatchlab.workload.swf import finish_table

if TYPE_CHECKING:  # zoneinfo is imported where a zone is checked (start-up)
    from zoneinfo import ZoneInfo

__all__ = [
    "ARCHIVE_SEPARATOR",
    "DEFAULT_CORES",
    "DEFAULT_MEM_KB",
    "DEFAULT_TIMEZONE",
    "SKIP_DUPLICATE",
    "UsedNodes",
    "archive_members",
    "archive_needs_member",
    "is_tar_name",
    "looks_like_eurora",
    "read_eurora",
    "read_eurora_archive",
    "split_archive_path",
]

#: Separates an archive from the member inside it: ``ARCHIVE#MEMBER`` (ours).
ARCHIVE_SEPARATOR = "#"
#: Zone of the trace's dates (ours: Eurora ran at CINECA, Bologna).
DEFAULT_TIMEZONE = "Europe/Rome"
#: Total cores of a job whose node entries give none [PA].
DEFAULT_CORES = 4
#: Total memory (KB) of a job whose node entries give none: 200 MiB [PA].
DEFAULT_MEM_KB = 200 * 1024
#: Capacity of the machine the historical traces were recorded on (``nodes_#64``).
EURORA_NODES = 64
EURORA_CORES = 64 * 16
#: ``info.skipped`` reason of the later lines of a job id.
SKIP_DUPLICATE = "duplicate job ids"
#: Ends of file names read as tar archives.
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
#: SWF status of the trace's final status: the Slurm states of the one table of
#: :mod:`dispatchlab.workload.status` (anything else: -1).
STATUS_CODES = SLURM_STATE_STATUS

_HEAD_FIELDS = ("job_id", "executable", "user", "queue", "arrival")
_TAIL_FIELDS = ("start", "end", "requested nodes", "requested cores", "requested memory",
                "wall-time", "NA", "NA", "status", "application type")
_DATE_RE = re.compile(r"(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)", re.ASCII)
_WALL_RE = re.compile(r"(\d+):(\d+)", re.ASCII)
_SNIFF_RE = re.compile(r"\d+;[^;_]*;[^;_]*;[^;_]*;\d{4}-\d\d-\d\d \d\d:\d\d:\d\d__", re.ASCII)
_NAMED = ("queue", "user")
_INT_EXTRAS = ("nodes_used",)


class _LineError(Exception):
    """A bad line: ``message`` about field ``field``."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


# --------------------------------------------------------------------------------------
# sniffing and archives
# --------------------------------------------------------------------------------------


def looks_like_eurora(first_lines: list[str]) -> bool:
    """Whether the first non-blank line starts like a job instance line
    (``ID;name;user;queue;YYYY-MM-DD HH:MM:SS__``)."""
    for line in first_lines:
        if line.strip():
            return _SNIFF_RE.match(line.lstrip("\ufeff")) is not None
    return False


def is_tar_name(path: str | Path) -> bool:
    """Whether the file name ends like a tar archive (:data:`TAR_SUFFIXES`)."""
    return str(path).lower().endswith(TAR_SUFFIXES)


def split_archive_path(path: str | Path) -> tuple[Path, str] | None:
    """``(archive, member)`` when ``path`` reads ``ARCHIVE#MEMBER`` with ``ARCHIVE`` an
    existing file and ``path`` itself not an existing file; else None. The first ``#``
    whose left part is an existing file splits (a ``#`` in the member is kept)."""
    text = str(path)
    if ARCHIVE_SEPARATOR not in text or Path(text).exists():
        return None
    at = text.find(ARCHIVE_SEPARATOR)
    while at >= 0:
        archive = Path(text[:at])
        if text[:at] and archive.is_file():
            return archive, text[at + 1:]
        at = text.find(ARCHIVE_SEPARATOR, at + 1)
    return None


def _open_archive(archive: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise InputError(f"not a readable tar archive: {exc}", file=str(archive)) from None


def archive_members(archive: str | Path) -> list[str]:
    """Names of the job instances (``*.log_crypt`` regular files) in a tar archive, in
    archive order; every regular file when none ends with ``.log_crypt``."""
    with _open_archive(Path(archive)) as tar:
        try:
            files = [m.name for m in tar.getmembers() if m.isfile()]
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt tar archive: {exc}", file=str(archive)) from None
    jobs = [name for name in files if name.endswith(".log_crypt")]
    return jobs or files


def _syntax_hint(archive: Path, names: list[str], limit: int = 4) -> str:
    """``give ARCHIVE#MEMBER, e.g. ...; N job instances, such as a, b, ...``."""
    if not names:
        return "the archive holds no files"
    shown = ", ".join(names[:limit]) + (", ..." if len(names) > limit else "")
    return (f"name the job instance as ARCHIVE{ARCHIVE_SEPARATOR}MEMBER, e.g. "
            f"{archive}{ARCHIVE_SEPARATOR}{names[0]} (a member may be given by the end of "
            f"its path, e.g. {'/'.join(names[0].split('/')[-2:])}); {len(names)} candidates: "
            f"{shown}")


def archive_needs_member(archive: str | Path) -> InputError:
    """The error for an archive given without a member (lists a few job instances)."""
    archive = Path(archive)
    return InputError("is a tar archive: " + _syntax_hint(archive, archive_members(archive)),
                      file=str(archive))


def _resolve_member(tar: tarfile.TarFile, archive: Path, wanted: str) -> tarfile.TarInfo:
    """The regular-file member named ``wanted`` or ending with ``/wanted`` (unique)."""
    wanted = wanted.strip().removeprefix("./").lstrip("/")
    files = [m for m in tar.getmembers() if m.isfile()]
    if not wanted:
        raise InputError("empty member name: " + _syntax_hint(
            archive, [m.name for m in files if m.name.endswith(".log_crypt")]),
            file=str(archive))
    exact = [m for m in files if m.name.removeprefix("./") == wanted]
    found = exact or [m for m in files if m.name.endswith("/" + wanted)]
    if len(found) == 1:
        return found[0]
    if found:
        names = ", ".join(m.name for m in found[:4]) + (", ..." if len(found) > 4 else "")
        raise InputError(f"member {wanted!r} is ambiguous: {len(found)} files end with it "
                         f"({names}); give more of its path", file=str(archive))
    base = wanted.rsplit("/", 1)[-1]
    near = [m.name for m in files if base and base in m.name]
    jobs = [m.name for m in files if m.name.endswith(".log_crypt")]
    raise InputError(f"no member {wanted!r} in the archive; "
                     + _syntax_hint(archive, near or jobs or [m.name for m in files]),
                     file=str(archive))


def _archive_text(archive: Path, member: str) -> tuple[str, str]:
    """(source name ``ARCHIVE#FULL_MEMBER``, text) of one member, decoded as UTF-8."""
    with _open_archive(archive) as tar:
        try:
            info = _resolve_member(tar, archive, member)
            fh = tar.extractfile(info)
            assert fh is not None  # a regular file
            data = fh.read()
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt tar archive: {exc}", file=str(archive)) from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt gzip member: {exc}",
                             file=f"{archive}{ARCHIVE_SEPARATOR}{info.name}") from None
    return f"{archive}{ARCHIVE_SEPARATOR}{info.name}", data.decode("utf-8", errors="replace")


def _file_text(path: Path) -> str:
    """Text of a plain or gzip file (undecodable bytes replaced)."""
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.is_dir():
        raise InputError("is a directory, not a job instance file", file=str(path))
    return read_text_maybe_gzip(path)


def read_text_maybe_gzip(path: Path) -> str:
    """Text of a plain or gzip file (told by its magic bytes; undecodable bytes
    replaced); an unreadable or corrupt file is an :class:`InputError` naming it."""
    try:
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"corrupt or unreadable file: {exc}", file=str(path)) from None
    return data.decode("utf-8", errors="replace")


def _source_text(path: str | Path) -> tuple[str, str]:
    """(source name, text) of a file or an ``ARCHIVE#MEMBER``."""
    split = split_archive_path(path)
    if split is not None:
        return _archive_text(*split)
    p = Path(path)
    if p.is_file() and is_tar_name(p) and tarfile.is_tarfile(p):
        raise archive_needs_member(p)
    return str(p), _file_text(p)


def _numbered(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) of each non-blank line."""
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            yield number, line


# --------------------------------------------------------------------------------------
# one line
# --------------------------------------------------------------------------------------


def _check_zone(name: str) -> ZoneInfo:
    # zoneinfo looks up its search path on import (sysconfig): a few ms, paid only by a
    # run that reads an Eurora trace, not by every `simulate` importing this module
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError, OSError):
        raise InputError(f"unknown time zone {name!r} (a zoneinfo name such as "
                         "'Europe/Rome' or 'UTC')", field="--timezone") from None


def _count(value: str, name: str) -> int:
    """A non-negative integer (ASCII digits only)."""
    if not (value.isascii() and value.isdigit()) or len(value) > 18:
        shown = value if len(value) <= 40 else value[:37] + "..."
        raise _LineError(f"not a non-negative integer of at most 18 digits: '{shown}'", name)
    return int(value)


class UsedNodes(NamedTuple):
    """The used node entries of one job, summed: ``units`` (entries), total ``cores``,
    ``gpus``, ``mics`` and ``mem`` (KB), ``nodes`` (distinct node ids) and ``placement``
    (``id:cores,...`` per distinct id, first-appearance order, cores added)."""

    units: int
    cores: int
    gpus: int
    mics: int
    mem: int
    nodes: int
    placement: str


@functools.lru_cache(maxsize=1 << 14)
def parse_nodes(part: str) -> UsedNodes:
    """The ``node;cores;gpus;mics;mem#...#`` part (cached: parts repeat). A trailing
    ``#`` ends the last entry; an empty entry in the middle (``##``) or an entry without
    5 non-negative integers is an error."""
    entries = part.split("#") if part else []
    if entries and entries[-1] == "":
        entries.pop()
    totals = [0, 0, 0, 0]
    per_node: dict[int, int] = {}
    for entry in entries:
        values = entry.split(";")
        if len(values) != 5:
            raise _LineError(f"node entry '{entry}' is not node;cores;gpus;mics;memory",
                             "used nodes")
        node, *amounts = (_count(v.strip(), "used nodes") for v in values)
        for k, amount in enumerate(amounts):
            totals[k] += amount
        per_node[node] = per_node.get(node, 0) + amounts[0]
    placement = ",".join(f"{k}:{v}" for k, v in per_node.items())
    return UsedNodes(len(entries), *totals, len(per_node), placement)


def wall_seconds(value: str) -> int:
    """Seconds of a wall-time ``HH:MM`` (any number of digits each) [PA]."""
    m = _WALL_RE.fullmatch(value.strip())
    if m is None:
        raise _LineError(f"not a wall-time HH:MM: '{value}'", "wall-time")
    if len(m[1].lstrip("0")) > 18 or len(m[2].lstrip("0")) > 18:
        raise _LineError(f"the wall-time {value[:37]} is beyond the engine's time limit",
                         "wall-time")
    seconds = int(m[1]) * 3600 + int(m[2]) * 60
    problem = time_problem(seconds, "the wall-time")
    if problem is not None:
        raise _LineError(problem, "wall-time")
    return seconds


@dataclass
class _Reader:
    """State of one pass over the lines of a job instance."""

    zone: ZoneInfo
    lenient: bool
    rows: list[dict[str, object]] = field(default_factory=list)
    kept: dict[str, str] = field(default_factory=dict)
    duplicates: int = 0
    differing: int = 0
    clipped: int = 0
    malformed: int = 0
    lines: int = 0
    dates: dict[str, int] = field(default_factory=dict)

    def read(self, source: str, text: str) -> None:
        for number, line in _numbered(text):
            self.lines += 1
            try:
                self.line(line, number)
            except _LineError as err:
                if not self.lenient:
                    raise InputError(err.message, file=source, line=number,
                                     field=err.field) from None
                self.malformed += 1

    def epoch(self, value: str, name: str) -> int:
        """Unix seconds of a ``YYYY-MM-DD HH:MM:SS`` local date (cached)."""
        seconds = self.dates.get(value)
        if seconds is not None:
            return seconds
        m = _DATE_RE.fullmatch(value.strip())
        try:
            if m is None:
                raise ValueError
            when = datetime(*(int(g) for g in m.groups()), tzinfo=self.zone)
            seconds = int(when.timestamp())
        except (ValueError, OverflowError):  # OverflowError: year 1 or 9999 shifted
            raise _LineError(f"not a date YYYY-MM-DD HH:MM:SS: '{value}'", name) from None
        problem = time_problem(seconds, name)
        if problem is not None:
            raise _LineError(problem, name)
        self.dates[value] = seconds
        return seconds

    def line(self, line: str, number: int) -> None:
        """Parse one job line (or skip it as a duplicate id)."""
        jid = line.split(";", 1)[0].strip()
        first = self.kept.get(jid)
        if first is not None:
            self.duplicates += 1
            self.differing += first != line
            return
        parts = line.split("__")
        if len(parts) != 3:
            raise _LineError(f"expected 3 parts separated by '__' (job __ used nodes __ "
                             f"schedule), found {len(parts)}")
        head = parts[0].split(";")
        if len(head) != len(_HEAD_FIELDS):
            raise _LineError(f"the first part has {len(head)} ';'-separated fields, expected "
                             f"5 ({';'.join(_HEAD_FIELDS)})")
        tail = parts[2].split(";")
        if len(tail) not in (9, 10):
            raise _LineError(f"the last part has {len(tail)} ';'-separated fields, expected "
                             f"10 ({';'.join(_TAIL_FIELDS)}; the last may be absent)")
        job_id = _count(jid, "job_id")
        submit = self.epoch(head[4], "arrival")
        start = self.epoch(tail[0], "start")
        end = self.epoch(tail[1], "end")
        if start < submit:
            raise _LineError(f"start {tail[0]} is before the arrival {head[4]}", "start")
        if end < start:
            raise _LineError(f"end {tail[1]} is before the start {tail[0]}", "end")
        wall = wall_seconds(tail[5])
        app = _count(tail[9].strip(), "application type") if len(tail) == 10 else 0
        used = parse_nodes(parts[1])
        run = end - start
        requested = wall if wall > 0 else (run // 60 + 1) * 60  # [PA]
        run = max(run, 1)  # [PA]
        if run > requested:  # [PA] "data collection bug": clip to the wall-time
            run = requested
            self.clipped += 1
        units = max(used.units, 1)
        cores = used.cores or DEFAULT_CORES
        mem = used.mem or DEFAULT_MEM_KB
        self.rows.append({
            "job_id": job_id, "submit": submit, "wait": start - submit, "run": run,
            "alloc_procs": cores, "req_procs": cores, "req_time": wall,
            "req_mem": math.ceil(mem / cores), "status": STATUS_CODES.get(tail[8].strip(), -1),
            "app": app, "queue": head[3].strip(), "user": head[2].strip(),
            "units": units, "requested_time": requested, "line": number,
            "nodes_used": used.nodes or -1, "alloc_nodes": used.placement,
            "_res": (cores // units, used.gpus // units, used.mics // units, mem // units),
        })
        self.kept[jid] = line


# --------------------------------------------------------------------------------------
# the table
# --------------------------------------------------------------------------------------


def _factorize(names: list[str]) -> tuple[np.ndarray, list[str]]:
    """Codes 0, 1, ... in order of first appearance ("" -> -1) and the name table."""
    table: dict[str, int] = {}
    codes = [-1 if not s else table.setdefault(s, len(table)) for s in names]
    return np.asarray(codes, dtype=np.int64), list(table)


def _columns(rows: list[dict[str, object]]) -> tuple[
        dict[str, np.ndarray], dict[str, np.ndarray], dict[str, list[str]]]:
    """Submit-sorted columns (times still in Unix seconds), resources and name tables."""
    n = len(rows)
    submit = np.fromiter((r["submit"] for r in rows), dtype=np.int64, count=n)
    order = np.argsort(submit, kind="stable")
    rows = [rows[i] for i in order]
    cols: dict[str, np.ndarray] = {}
    present = set(rows[0])
    for name in (*SWF_FIELDS, "units", "requested_time", "line", *_INT_EXTRAS):
        dtype = np.float64 if name in FLOAT_FIELDS else np.int64
        if name in _NAMED or name not in present:
            cols[name] = np.full(n, -1, dtype=dtype)
        else:
            cols[name] = np.fromiter((r[name] for r in rows), dtype=dtype, count=n)
    codes: dict[str, list[str]] = {}
    for name in _NAMED:
        cols[name], codes[name] = _factorize([str(r[name]) for r in rows])
    cols["alloc_nodes"] = np.array([str(r["alloc_nodes"]) for r in rows], dtype=object)
    res = np.array([r["_res"] for r in rows], dtype=np.int64).reshape(n, 4)
    resources = {name: np.ascontiguousarray(res[:, k])
                 for k, name in enumerate(("core", "gpu", "mic", "mem"))}
    return cols, resources, codes


def _header(origin: int, zone: ZoneInfo, timezone: str, reader: _Reader) -> dict[str, str]:
    """Header facts: origin, zone, Eurora's size, clipped runs, notes."""
    start = datetime.fromtimestamp(origin, UTC).astimezone(zone)
    notes = ["converted from a Eurora PA-HPC-SIM job instance by dispatchlab: wait = start "
             "- arrival, run = end - start; units and per-unit core/gpu/mic/mem (KB) "
             "requests rebuilt from the used node entries (PA-HPC-SIM JobReader)"]
    if reader.clipped:
        notes.append(f"{reader.clipped} jobs ran longer than their wall-time: run clipped "
                     "to the wall-time (PA-HPC-SIM: data collection bug)")
    if reader.duplicates:
        notes.append(f"{reader.duplicates} later lines of an already seen job id skipped "
                     f"({reader.differing} of them differ from the kept line)")
    notes.append("user and executable names are hidden in the source: one user")
    return {
        "Computer": "Eurora (CINECA)",
        "MaxNodes": str(EURORA_NODES),
        "MaxProcs": str(EURORA_CORES),
        "UnixStartTime": str(origin),
        "StartTime": start.isoformat(),
        "TimeZoneString": timezone,
        "ClippedRuns": str(reader.clipped),
        "Note": "\n".join(notes),
    }


def read_eurora(
    path: str | Path,
    *,
    lenient: bool = False,
    timezone: str = DEFAULT_TIMEZONE,
) -> JobTable:
    """Read a Eurora job instance (a ``.log_crypt`` file, or ``ARCHIVE#MEMBER`` inside a
    tar archive) into a :class:`JobTable` sorted by submit time (ties: file order).

    ``timezone``: the zoneinfo name of the trace's local dates (default Europe/Rome);
    ``lenient``: skip malformed lines (counted) instead of raising. Times are seconds
    re-based to the first arrival; resources are ``core``, ``gpu``, ``mic`` and ``mem``
    (KB) per unit, one unit per used node entry. See the module docstring for every rule.

    Raises :class:`InputError` for a bad time zone (``--timezone``), a missing or
    unreadable file, an archive without (or with an unknown) member, a malformed line
    (naming file, line and field) or an instance without jobs.
    """
    zone = _check_zone(timezone)
    source, text = _source_text(path)
    return _table(source, text, zone, timezone, lenient)


def read_eurora_archive(
    archive: str | Path,
    *,
    lenient: bool = False,
    timezone: str = DEFAULT_TIMEZONE,
) -> dict[str, JobTable]:
    """Every job instance (``*.log_crypt`` member) of a tar archive, read in one pass over
    the archive: member name -> table, in archive order (ours; for batch experiments over
    all instances). Each table is exactly what :func:`read_eurora` gives for
    ``ARCHIVE#MEMBER`` (not cleaned)."""
    zone = _check_zone(timezone)
    archive = Path(archive)
    if not archive.is_file():
        raise InputError("no such file", file=str(archive))
    out: dict[str, JobTable] = {}
    with _open_archive(archive) as tar:
        try:
            for info in tar:
                if not (info.isfile() and info.name.endswith(".log_crypt")):
                    continue
                fh = tar.extractfile(info)
                assert fh is not None  # a regular file
                data = fh.read()
                if data[:2] == b"\x1f\x8b":
                    data = gzip.decompress(data)
                source = f"{archive}{ARCHIVE_SEPARATOR}{info.name}"
                out[info.name] = _table(source, data.decode("utf-8", errors="replace"),
                                        zone, timezone, lenient)
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            raise InputError(f"corrupt tar archive: {exc}", file=str(archive)) from None
    if not out:
        raise InputError("the archive holds no job instance (*.log_crypt)", file=str(archive))
    return out


def _table(source: str, text: str, zone: ZoneInfo, timezone: str, lenient: bool) -> JobTable:
    """The job table of one instance's text (``source`` names it in errors)."""
    reader = _Reader(zone, lenient)
    reader.read(source, text)
    if not reader.rows:
        raise InputError(f"no jobs: the file has no usable job lines ({reader.lines} lines "
                         f"read, {reader.malformed} malformed)", file=source)
    cols, resources, codes = _columns(reader.rows)
    origin = int(cols["submit"][0])
    cols["submit"] -= origin
    info = TraceInfo(source=source, lines_read=reader.lines,
                     malformed_skipped=reader.malformed)
    info.header = _header(origin, zone, timezone, reader)
    info.unix_start_time = origin
    info.max_nodes = EURORA_NODES
    info.max_procs = EURORA_CORES
    info.format = "eurora"
    info.codes = codes
    if reader.duplicates:
        info.skipped = {SKIP_DUPLICATE: reader.duplicates}
    return finish_table(cols, resources, info)
