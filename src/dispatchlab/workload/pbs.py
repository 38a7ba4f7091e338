"""Read PBS accounting logs (Torque 6.x, PBS Professional / OpenPBS) into a job table.

Versions followed
-----------------
* **Torque 6.x** (Adaptive Computing): the "Accounting Records" and "Requesting
  Resources" pages of the Torque manual (record types A C D E Q R S T; ``nodes``
  specs ``{count|host}[:ppn=N][:gpus=N][:property...][+...]``; sizes with
  ``b/kb/mb/gb/tb`` and words ``w``) and the server source ``accounting.cpp``
  (``exec_host=host/0-7+host2/0,2-3`` ranges, ``total_execution_slots``,
  ``unique_node_count``, ``end=``, then ``Exit_status`` and ``resources_used.*``).
* **PBS Professional 2021+ / OpenPBS 20.0+** (Altair): the server source
  ``accounting.c``, ``acct.h`` (record types: job ``Q S s R C T E D A M u c e a z
  r``, reservation ``U Y B F K k``, license ``L``, provisioning ``P p``) and
  ``job.h`` (the negative ``JOB_EXEC_*`` exit codes), with the Reference Guide's
  chunk syntax (``select=N:res=val[:...][+...]``, ``exec_vnode=(vn:ncpus=8)+...``,
  ``exec_host=host/0*8+...``). PBS Pro quotes ``account="..."`` and any value
  holding a blank (``"..."``, or ``'...'`` when the value holds a ``"``); the
  quotes are removed.

Both write one record per line, ``MM/DD/YYYY HH:MM:SS;T;JOBID;key=value key=value``,
the time stamp in the server's local time, one file per day named ``YYYYMMDD``.

Input
-----
``path`` is one log file (plain or gzip, recognised by its magic bytes) or a folder of
daily files, read in name order (hidden files skipped) as one trace: a job queued in
one file and ended in another is one job. Blank lines are ignored. Line numbers are
1-based per file; every error names the file and the line.

Jobs
----
* A job is an ``E`` (end) record. ``S`` (start), ``Q`` (queued), ``R`` (rerun in both
  systems), ``T``, ``C``, reservation, license and all other record types are ignored
  and counted in ``info.skipped["records of other types"]``.
* **Array jobs**: subjobs ``123[4].server`` are jobs like any other; PBS Pro's array
  parent records ``123[].server`` (an ``E`` record summarising the whole array, no
  ``exec_host``) are skipped, every record of a parent counted in
  ``"array parent records"``.
* **Duplicate end records** (same job id and same ``ctime``, e.g. written twice across
  a server restart): the first is kept, the others counted in ``"duplicate end
  records"``. The same id with another ``ctime`` is a new job (ids wrap around).
* **Deleted / aborted jobs** (``D`` by request, ``A`` by the server):

  - a job deleted *while running* has its ``D`` record, then an ``E`` record with
    ``start`` and ``end``: it is a normal job whose status is 5 (cancelled) whatever
    its exit status (an ``A`` then ``E`` keeps the exit-status mapping); its D/A
    records are counted in ``"delete/abort records of jobs that ran"``;
  - an ``E`` record with ``start`` absent or 0 after a ``D``/``A`` record is a job
    deleted before it started (an ``E`` record without ``start`` and without a D/A
    record is an error);
  - a ``D``/``A`` record of a job without an ``E`` record: if an ``S`` record of it was
    seen, it ran but its end is not in the log: counted in ``"deleted after start, no
    end record"``; otherwise it never started;
  - jobs that never started are counted once per job (whatever their number of D/A
    records) in ``"deleted before start (D/A records)"`` with ``unstarted="drop"``
    (default). With ``unstarted="keep"`` each
    becomes a never-run submission (as in the sacct reader): ``run = -1``,
    ``wait = -1``, ``status = 5``, no placement
    (``alloc_procs``/``nodes_used`` -1), its request read from its ``E`` record, else
    from its last ``Q`` record (PBS Pro writes the full request there; Torque writes
    only ``queue=``, so such Torque jobs have ``req_procs = -1`` and are dropped by the
    default cleaning, ``units <= 0``). Its submit time is ``ctime`` (``etime`` with
    ``submit_from="eligible"``) of that record, else the time stamp of its ``Q``
    record (local time in ``timezone``); a job with neither (queued before the log
    starts) is counted in ``"deleted before start, submit time not in the log"``.
    Its ``line`` is the line of its D/A record (or of its ``E`` record).

Fields (SWF column <- record key)
---------------------------------
* ``submit`` <- ``ctime`` (creation; not ``qtime``, which a routing queue resets), or
  ``etime`` (became eligible: holds and dependencies end) with
  ``submit_from="eligible"``; ``eligible`` <- ``etime`` (-1 when absent or 0).
  All times are integer seconds re-based so that the first submission is t = 0;
  ``info.unix_start_time`` and ``info.header["UnixStartTime"]`` hold that origin
  (Unix seconds), ``info.header["TimeZone"]`` the zone of the time stamps. ``ctime``,
  ``etime``, ``start`` and ``end`` are Unix seconds in every version, so the zone
  only matters for the ``Q`` time stamps used by kept unstarted Torque jobs.
* ``wait`` = ``start - submit``; ``run`` = ``end - start``. ``end - start`` is the
  span the allocation was held (prologue, epilogue and stage-out included), which is
  what the simulation replays; it **wins** over ``resources_used.walltime`` (the
  script's own wall time, which excludes suspensions). Jobs where the two differ by
  more than 60 s are counted in a ``Note`` line of ``info.header``. ``end < start``,
  ``start < submit`` are errors.
* ``req_time`` <- ``Resource_List.walltime`` (``[[[DD:]HH:]MM:]SS[.fff]`` or seconds;
  fractions of a second dropped); -1 when absent (then the usual fallback of
  :func:`~dispatchlab.workload.swf.finish_table`).
* ``req_procs``, first of: PBS Pro ``Resource_List.select`` (sum over ``+`` chunks
  of count x ``ncpus``, count 1 and ``ncpus=1`` when omitted); Torque
  ``Resource_List.nodes`` (sum over ``+`` parts of count x ``ppn``; a part naming a
  host or a property, ``n01``, is one node; ``ppn`` 1 when omitted; each part has its
  own ``ppn``, so ``n01+n02:ppn=4`` is 1 + 4 = 5; a trailing ``#excl`` is ignored);
  ``Resource_List.ncpus``; Torque ``Resource_List.procs``; ``Resource_List.nodect``
  (nodes of one processor, Torque's default ``ppn``); else -1.
* ``req_gpus``: ``ngpus`` summed over select chunks when a chunk names it; else Torque
  ``gpus=`` summed over node parts (count x gpus); else ``Resource_List.ngpus``; else 0
  when a ``select`` or ``nodes`` spec (a complete request) is present; else -1.
* ``req_mem`` = requested memory per processor in KB (1 KB = 1024 bytes), rounded up:
  ``Resource_List.pmem`` (per process) as is; else select ``mem=`` when every chunk
  names it (sum of count x mem) divided by ``req_procs``; else ``Resource_List.mem``
  (job total) divided by ``req_procs`` (by ``alloc_procs`` when ``req_procs`` is
  unknown); else -1. Sizes are an integer with an optional unit, case-insensitive:
  ``b`` bytes (also no unit), ``kb`` 2**10, ``mb`` 2**20, ``gb`` 2**30, ``tb`` 2**40,
  ``pb`` 2**50 bytes; ``w`` words of 8 bytes (64-bit hosts), ``kw`` ... ``pw``
  likewise.
* For the request fitting (:mod:`dispatchlab.workload.requests`): ``req_nodes`` = the
  number of select chunks (sum of the counts) or of Torque ``nodes=`` nodes (-1
  without either spec); ``req_mem_mb`` = the job's total requested memory (``pmem``
  times ``req_procs``, the select chunks' ``mem``, else ``mem``) in MB rounded up
  (-1 unknown); ``exclusive`` = 1 when ``Resource_List.place`` holds ``excl`` or
  ``exclhost`` (``place=scatter:excl``) or the Torque spec ends with ``#excl``, else 0.
* Placement, from ``exec_host`` (Torque ``n01/0+n01/1``, ranges and lists
  ``n01/0-7``, ``n01/0,2-4``; PBS Pro ``n01/0*8+n02/0*8``: ``*N`` is N cores), else PBS
  Pro ``exec_vnode`` (``(n01:ncpus=8:ngpus=1)+(n02:ncpus=8)``, several vnodes in one
  chunk joined by ``+``; a vnode ``n01[1]`` belongs to host ``n01``; ``ncpus`` 0 when
  omitted): ``alloc_procs`` = cores in total, ``nodes_used`` = distinct hosts,
  ``alloc_nodes`` = ``host:cores,host:cores`` per host in first-appearance order (a
  host met twice has its cores added). -1 / "" when neither key is present.
* ``avg_cpu`` = ``resources_used.cput`` / ``alloc_procs`` (s per processor);
  ``used_mem`` = ``resources_used.mem`` / ``alloc_procs`` (KB per processor); -1 when
  either is unknown.
* ``user`` <- ``user=``, ``group`` <- ``group=``, ``queue`` <- ``queue=``, ``app`` <-
  ``jobname=``: integer codes in order of first appearance in the final (submit-sorted)
  table, from 0; the names are in ``info.codes`` (``info.codes["user"][k]`` is the
  name of code k); -1 when absent. ``partition``, ``prev_job``, ``think_time`` are -1.
* ``account`` <- ``account=`` (quotes removed; "" when absent); ``qos`` is "".
* ``job_ref`` is the job id as written; ``job_id`` is the job's rank after sorting
  (1..n), because ids such as ``123[4].server`` are not numbers.
* ``status`` from ``Exit_status``:

  ===============  ======================================================  ======
  Exit_status      meaning                                                 status
  ===============  ======================================================  ======
  0                the job script succeeded                                1
  1 .. 127         the script's exit code                                  0
  128 .. 255       128 + n: the shell saw a process killed by signal n     0
  271              256 + 15: killed by SIGTERM, what qdel sends to a        5
                   running job (deleted while running; Torque also ends
                   a job at its walltime with SIGTERM, which the record
                   does not tell apart)
  >= 256, not 271  256 + n: the job was killed by signal n (265 SIGKILL    0
                   after the grace time of a kill)
  -29              PBS Pro JOB_EXEC_KILL_WALLTIME: killed at its walltime   0
  -24 .. -28       PBS Pro: killed for exceeding ncpus, vmem, mem, cput    0
  other < 0        JOB_EXEC_* failures to start or run (-1 FAIL1, -2       0
                   FAIL2, -3 RETRY, -4..-7 MOM init/restart, -10 bad
                   uid, -11 rerun, -12 checkpoint, -13..-23 password,
                   hooks, security, Kerberos, -30 join job)
  absent                                                                   -1
  D record first   deleted while running (any exit status)                 5
                   (one mapping for every reader and ``--swf-out``:
                   :mod:`dispatchlab.workload.status`)
  never started    kept with ``unstarted="keep"``                          5
  ===============  ======================================================  ======

  A job killed at its walltime is therefore a failed job (0) whose ``run`` may exceed
  ``req_time`` by the kill's grace time; ``run`` is never clipped.

Ordering: jobs are sorted by submit time; ties keep the order of their defining
record (``E``, or D/A for kept unstarted jobs) in the trace (files in name order).
``line`` is the 1-based line of that record in its own file.

Errors
------
A line that is not ``stamp;type;id;message``, an unparsable or impossible time stamp,
an ``E`` record without ``ctime``/``start``/``end`` (or ``etime`` with
``submit_from="eligible"``), a time that is not an integer, a bad resource value
(``walltime=1h``, ``mem=4 GB``, ``select=two:ncpus=4``, ``exec_host=n01``), ``end <
start`` or ``start < submit``: :class:`~dispatchlab.core.errors.InputError` naming the file,
the line and the field (the key); a bad value in the ``Q`` record of a kept unstarted
job names that ``Q`` record. So is a value no table can hold: a time or duration at or
beyond the engine's limit (:data:`dispatchlab.core.limits.TIME_LIMIT`), a time stamp
before 1970, more than :data:`MAX_COUNT` processors or GPUs, a size above
:data:`MAX_BYTES`. With ``lenient=True`` the record is skipped and counted in
``info.malformed_skipped``. ``info.lines_read`` counts the non-blank lines (records)
read, so that it is the jobs plus the records skipped by rule or as malformed (see
:class:`~dispatchlab.workload.jobs.TraceInfo`).

The reader is one linear pass in Python over the records; ``select``/``nodes`` specs,
durations and sizes are parsed once per distinct value. 100,000 synthetic jobs (a
``Q``, ``S`` and ``E`` record each, 300,000 lines, 124 MB) take about 2.9 s of CPU in
PBS Pro form and 2.5 s in Torque form.
"""

from __future__ import annotations

import functools
import gzip
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.limits import TIME_LIMIT, time_problem
from dispatchlab.workload.jobs import FLOAT_FIELDS, SWF_FIELDS, JobTable, TraceInfo
from dispatchlab.workload.status import CANCELLED, pbs_exit_status
from dispatchlab.workload.swf import finish_table

__all__ = ["looks_like_pbs", "read_pbs"]

#: ``submit_from`` option -> the record key giving the submit time.
SUBMIT_KEYS: dict[str, str] = {"submit": "ctime", "eligible": "etime"}
UNSTARTED_MODES: tuple[str, ...] = ("drop", "keep")
#: ``|end - start - resources_used.walltime|`` above this (s) is counted as a mismatch.
WALLTIME_TOLERANCE = 60
#: Bytes per word (``w`` units): 64-bit execution hosts.
WORD_BYTES = 8
#: the most processors or GPUs a record may give a job (SWF's exact-integer bound)
MAX_COUNT = 1 << 53
#: the largest memory size (bytes) a record may give: 4 EiB, so that no KB per
#: processor or sum of them leaves int64
MAX_BYTES = 1 << 62

SKIP_OTHER = "records of other types"
SKIP_PARENT = "array parent records"
SKIP_DUPLICATE = "duplicate end records"
SKIP_FOLDED = "delete/abort records of jobs that ran"
SKIP_UNSTARTED = "deleted before start (D/A records)"
SKIP_EXTRA = "further records of jobs deleted before start"
SKIP_NO_END = "deleted after start, no end record"
SKIP_NO_SUBMIT = "deleted before start, submit time not in the log"

_STAMP_RE = re.compile(r"(\d\d)/(\d\d)/(\d{4}) ([01]\d|2[0-3]):([0-5]\d):([0-5]\d)", re.ASCII)
_SNIFF_RE = re.compile(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d;[A-Za-z];[^;\s]+;")
#: A ``key=value`` pair, or (second branch, group 1 None) a whole run of characters
#: that is not followed by ``=``: consuming the run keeps the scan linear (a search that
#: restarted inside a long run without ``=`` rescanned it from every position).
_PAIR_RE = re.compile(r"""([^\s=]+)=("[^"]*"|'[^']*'|\S*)|[^\s=]+""")
_SIZE_RE = re.compile(r"(\d+)([kmgtp]?)([bw]?)", re.IGNORECASE | re.ASCII)
_DURATION_RE = re.compile(r"(?:(?:(?:(\d+):)?(\d+):)?(\d+):)?(\d+)(?:\.\d*)?", re.ASCII)
_PREFIX = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}
_STR_COLUMNS = ("job_ref", "account", "qos", "alloc_nodes")
_INT_EXTRAS = ("eligible", "req_gpus", "nodes_used", "req_nodes", "req_mem_mb", "exclusive")
_NAMED = {"user": "user", "group": "group", "queue": "queue", "app": "jobname"}


class _RecordError(Exception):
    """A bad record: ``message`` about record key ``field``."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


# --------------------------------------------------------------------------------------
# sniffing, options, files
# --------------------------------------------------------------------------------------


def looks_like_pbs(first_lines: list[str]) -> bool:
    """Whether the first non-blank line reads ``MM/DD/YYYY HH:MM:SS;T;JOBID;...``."""
    for line in first_lines:
        if line.strip():
            return _SNIFF_RE.match(line.lstrip("\ufeff")) is not None
    return False


def _check_options(submit_from: str, timezone: str, unstarted: str) -> ZoneInfo:
    """Validate the options (InputError naming the CLI option); returns the zone."""
    if submit_from not in SUBMIT_KEYS:
        raise InputError(f"must be 'submit' or 'eligible', not {submit_from!r}",
                         field="--submit-from")
    if unstarted not in UNSTARTED_MODES:
        raise InputError(f"must be 'drop' or 'keep', not {unstarted!r}", field="--unstarted")
    try:
        return ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError, TypeError, OSError):
        raise InputError(f"unknown time zone {timezone!r} (a zoneinfo name such as "
                         "'UTC' or 'Europe/Paris')", field="--timezone") from None


def _log_files(path: Path) -> list[Path]:
    """``[path]`` for a file, the folder's non-hidden files in name order for a folder."""
    if not path.exists():
        raise InputError("no such file or folder", file=str(path))
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    if not files:
        raise InputError("the folder holds no log files", file=str(path))
    return files


def _is_gzip(path: Path) -> bool:
    """Whether the file starts with the gzip magic bytes."""
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", file=str(path)) from exc


def _numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without its end) for each non-blank line of a plain or
    gzip file (undecodable bytes replaced)."""
    opener = gzip.open if _is_gzip(path) else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, 1):
                line = line.rstrip("\r\n")
                if line.strip():
                    yield number, line
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"corrupt or unreadable file: {exc}", file=str(path)) from exc


# --------------------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------------------


def _digits(text: str) -> bool:
    """Only ASCII digits (``str.isdigit`` alone accepts ``²``), at most 18 of them
    (no valid field is longer; Python refuses to read more than 4,300)."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def parse_message(message: str) -> dict[str, str]:
    """``key=value`` pairs of a record, split at blanks; PBS Pro's quotes around a value
    (``account="a"``, ``jobname="a b"``) are removed. A token without ``=`` is a key
    with an empty value."""
    pairs = {}
    for token in message.split():
        key, _, value = token.partition("=")
        pairs[key] = value
    if '"' not in message and "'" not in message:
        return pairs
    for mark in ('="', "='"):
        at = message.find(mark)
        while at >= 0:
            key = message[message.rfind(" ", 0, at) + 1 : at]
            value = pairs.get(key, "")
            if len(value) < 2 or value[-1] != value[0] or value[0] != mark[1]:
                return _quoted_pairs(message)  # a quoted value holding blanks
            pairs[key] = value[1:-1]
            at = message.find(mark, at + 2)
    return pairs


def _quoted_pairs(message: str) -> dict[str, str]:
    """The slow path of :func:`parse_message`: values quoted around blanks. A token
    without ``=`` is ignored here. One linear scan: each run of non-blank, non-``=``
    characters is read once, as a key or as a run skipped whole."""
    pairs = {}
    for key, value in _PAIR_RE.findall(message):
        if not key:
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        pairs[key] = value
    return pairs


def _count(value: str, key: str) -> int:
    """A non-negative integer (a count of processors, nodes, GPUs)."""
    if not _digits(value):
        raise _RecordError(f"not a non-negative integer: '{value}'", key)
    return int(value)


def _shown(value: str) -> str:
    """A value for a message: at most 40 characters (a fuzzed one may have thousands)."""
    return value if len(value) <= 40 else value[:37] + "..."


def _time(attrs: dict[str, str], key: str) -> int:
    """Unix seconds of ``key``; -1 when absent, empty or 0 (PBS writes 0 for "never").
    A time at or beyond the engine's limit is refused (:mod:`dispatchlab.core.limits`)."""
    value = attrs.get(key, "")
    if value in ("", "0"):
        return -1
    if not (value.isascii() and value.isdigit()):
        raise _RecordError(f"not a time in Unix seconds: '{_shown(value)}'", key)
    if len(value.lstrip("0")) > 40:  # no int() of thousands of digits
        raise _RecordError(f"{key} {_shown(value)} s is beyond the engine's time limit "
                           f"({TIME_LIMIT - 1:,} s)", key)
    seconds = int(value)
    problem = time_problem(seconds, key)
    if problem is not None:
        raise _RecordError(problem, key)
    return seconds


def _required_time(attrs: dict[str, str], key: str, rtype: str) -> int:
    value = _time(attrs, key)
    if value < 0:
        raise _RecordError(f"the {rtype} record has no {key} (absent or 0)", key)
    return value


@functools.lru_cache(maxsize=1 << 16)
def _seconds(value: str) -> int:
    """Seconds of a duration, -1 when ``value`` is not one, :data:`TIME_LIMIT` when a
    part has more than 18 digits (cached: values repeat)."""
    m = _DURATION_RE.fullmatch(value)
    if m is None:
        return -1
    if any(g and len(g.lstrip("0")) > 18 for g in m.groups()):
        return TIME_LIMIT  # beyond the limit, without int() of thousands of digits
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def duration(value: str, key: str = "walltime") -> int:
    """Seconds of ``[[[DD:]HH:]MM:]SS[.fff]`` (a fraction of a second is dropped); a
    duration at or beyond the engine's time limit is refused."""
    seconds = _seconds(value)
    if seconds < 0:
        raise _RecordError(f"not a duration ([[[DD:]HH:]MM:]SS or seconds): "
                           f"'{_shown(value)}'", key)
    if seconds >= TIME_LIMIT:
        raise _RecordError(f"{key} {_shown(value)} is beyond the engine's time limit "
                           f"({TIME_LIMIT - 1:,} s)", key)
    return seconds


@functools.lru_cache(maxsize=1 << 16)
def _bytes(value: str) -> int:
    """Bytes of a size, -1 when ``value`` is not one (cached: values repeat)."""
    m = _SIZE_RE.fullmatch(value)
    if m is None:
        return -1
    unit = WORD_BYTES if m[3].lower() == "w" else 1
    if len(m[1].lstrip("0")) > 18:
        return MAX_BYTES + 1  # too large, without int() of thousands of digits
    return int(m[1]) * _PREFIX[m[2].lower()] * unit


def size_bytes(value: str, key: str = "mem") -> int:
    """Bytes of a PBS size: integer + optional ``k/m/g/t/p`` prefix + ``b`` or ``w``."""
    size = _bytes(value)
    if size < 0:
        raise _RecordError(f"not a size (integer with b, kb, mb, gb, tb, w, kw...): "
                           f"'{_shown(value)}'", key)
    if size > MAX_BYTES:
        raise _RecordError(f"a size beyond {MAX_BYTES:,} bytes: '{_shown(value)}'", key)
    return size


def _bounded(value: int, key: str, what: str) -> int:
    """``value`` (a job's processors or GPUs) if at most :data:`MAX_COUNT`."""
    if value > MAX_COUNT:
        raise _RecordError(f"{what} beyond {MAX_COUNT:,}: {value:,}"
                           if value < 10**30 else f"{what} beyond {MAX_COUNT:,}", key)
    return value


# --------------------------------------------------------------------------------------
# requests and placements
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    """A parsed ``select`` or ``nodes`` spec: processors, GPUs (None: never named),
    memory in bytes (None: not named by every chunk), the number of chunks (nodes) and
    whether the spec says the job is exclusive (Torque ``#excl``)."""

    procs: int
    gpus: int | None
    mem: int | None
    chunks: int = -1
    exclusive: bool = False


@functools.lru_cache(maxsize=1 << 14)
def parse_select(value: str, key: str = "Resource_List.select") -> _Spec:
    """PBS Pro ``N:ncpus=C:ngpus=G:mem=M+...`` (count 1, ``ncpus=1`` by default; cached)."""
    procs, gpus, mem, chunks = 0, None, 0, 0
    for chunk in value.split("+"):
        fields = chunk.split(":")
        count = 1
        if "=" not in fields[0]:
            head = fields.pop(0)
            count = _count(head, key) if head else 1
        res = dict(f.partition("=")[::2] for f in fields)
        procs += count * _count(res.get("ncpus", "1"), key)
        chunks += count
        if "ngpus" in res:
            gpus = (gpus or 0) + count * _count(res["ngpus"], key)
        if "mem" in res and mem is not None:
            mem += count * size_bytes(res["mem"], key)
        else:
            mem = None
    return _Spec(procs, gpus, mem, chunks)


@functools.lru_cache(maxsize=1 << 14)
def parse_nodes(value: str, key: str = "Resource_List.nodes") -> _Spec:
    """Torque ``{count|host}[:ppn=P][:gpus=G][:property...]+...`` (``#excl`` ignored;
    cached)."""
    procs, gpus, chunks = 0, None, 0
    spec, _, flags = value.partition("#")
    for part in spec.split("+"):
        fields = part.split(":")
        if not fields[0]:
            raise _RecordError(f"a node spec without a count or a host name: '{value}'", key)
        count = int(fields[0]) if _digits(fields[0]) else 1
        res = dict(f.partition("=")[::2] for f in fields[1:])
        procs += count * _count(res.get("ppn", "1"), key)
        chunks += count
        if "gpus" in res:
            gpus = (gpus or 0) + count * _count(res["gpus"], key)
    return _Spec(procs, gpus, None, chunks, flags.startswith("excl"))


def _slots(spec: str, key: str) -> int:
    """Cores of one ``exec_host`` entry: ``0``, ``0-7``, ``0,2-4`` (Torque), ``0*8`` (PBS)."""
    if spec.isascii() and spec.isdigit():
        return 1
    total = 0
    for item in spec.split(","):
        first, star, cores = item.partition("*")
        low, dash, high = first.partition("-")
        if star:
            ok = _digits(first) and _digits(cores)
            total += int(cores) if ok else 0
        elif dash:
            ok = _digits(low) and _digits(high) and int(high) >= int(low)
            total += int(high) - int(low) + 1 if ok else 0
        else:
            ok = _digits(first)
            total += 1
        if not ok:
            raise _RecordError(f"not a core index, range or index*count: '{item}'", key)
    return total


def parse_exec_host(value: str, key: str = "exec_host") -> dict[str, int]:
    """Cores per host of ``host/spec+host/spec`` (first-appearance order)."""
    hosts: dict[str, int] = {}
    for part in value.split("+"):
        host, slash, spec = part.partition("/")
        if not host or not slash or not spec:
            raise _RecordError(f"not host/cores: '{part}'", key)
        hosts[host] = hosts.get(host, 0) + _slots(spec, key)
    return hosts


def parse_exec_vnode(value: str, key: str = "exec_vnode") -> dict[str, int]:
    """Cores per host of ``(vnode:ncpus=N:...)+(...)`` (a vnode ``h[1]`` is on host ``h``)."""
    hosts: dict[str, int] = {}
    for piece in value.split("+"):
        name, *fields = piece.strip().strip("()").split(":")
        if not name or "(" in name or ")" in name:
            raise _RecordError(f"not a (vnode:resource=value) chunk: '{piece}'", key)
        res = dict(f.partition("=")[::2] for f in fields)
        host = name.split("[", 1)[0]
        hosts[host] = hosts.get(host, 0) + _count(res.get("ncpus", "0"), key)
    return hosts


# --------------------------------------------------------------------------------------
# one job
# --------------------------------------------------------------------------------------


def exit_status_to_swf(value: str | None) -> int:
    """SWF status of an ``Exit_status`` (see the module table, from
    :func:`dispatchlab.workload.status.pbs_exit_status`): 0 -> 1, absent -> -1, 271
    (256 + SIGTERM: deleted while running) -> 5, any other integer -> 0."""
    if value is None or value == "":
        return pbs_exit_status(None)
    try:
        code = int(value)
    except ValueError:
        raise _RecordError(f"not an integer: '{value}'", "Exit_status") from None
    return pbs_exit_status(code)


def _request(attrs: dict[str, str]) -> tuple[int, int, int, int, bool, _Spec | None]:
    """(req_procs, req_gpus, memory bytes, req_time s, whether the memory is per
    processor, the parsed select/nodes spec) of a record; -1 for what it does not say
    (see the module docstring)."""
    select = attrs.get("Resource_List.select")
    nodes = attrs.get("Resource_List.nodes")
    spec = parse_select(select) if select else parse_nodes(nodes) if nodes else None
    procs = spec.procs if spec is not None else -1
    for key in ("Resource_List.ncpus", "Resource_List.procs", "Resource_List.nodect"):
        if procs < 0 and attrs.get(key):
            procs = _count(attrs[key], key)
    walltime = attrs.get("Resource_List.walltime")
    req_time = duration(walltime, "Resource_List.walltime") if walltime else -1
    memory, per_proc = _memory(attrs, spec if select else None)
    where = "Resource_List.select" if select else "Resource_List.nodes" if nodes else \
        "Resource_List.ncpus"
    if memory > MAX_BYTES:  # the select chunks' memory summed
        raise _RecordError(f"memory beyond {MAX_BYTES:,} bytes", where)
    return (_bounded(procs, where, "processors"), _bounded(_gpus(attrs, spec), where, "GPUs"),
            memory, req_time, per_proc, spec)


def _gpus(attrs: dict[str, str], spec: _Spec | None) -> int:
    """GPUs named by the select/nodes spec, else ``Resource_List.ngpus``, else 0 when a
    spec (a complete request) is present, else -1."""
    if spec is not None and spec.gpus is not None:
        return spec.gpus
    if attrs.get("Resource_List.ngpus"):
        return _count(attrs["Resource_List.ngpus"], "Resource_List.ngpus")
    return 0 if spec is not None else -1


def _memory(attrs: dict[str, str], select: _Spec | None) -> tuple[int, bool]:
    """(bytes, per processor?): ``pmem`` (per processor), else the select chunks' ``mem``
    when every chunk names it, else ``mem`` (job total); (-1, False) when unknown."""
    if attrs.get("Resource_List.pmem"):
        return size_bytes(attrs["Resource_List.pmem"], "Resource_List.pmem"), True
    if select is not None and select.mem is not None:
        return select.mem, False
    if attrs.get("Resource_List.mem"):
        return size_bytes(attrs["Resource_List.mem"], "Resource_List.mem"), False
    return -1, False


def per_proc_kb(memory: int, per_proc: bool, procs: int) -> int:
    """KB per processor, rounded up: ``memory`` bytes as is when ``per_proc``, else
    divided by ``procs``; -1 when the memory or (for a total) the divisor is unknown."""
    if memory < 0 or (not per_proc and procs <= 0):
        return -1
    return -(-memory // (1024 if per_proc else procs * 1024))


def _placement(attrs: dict[str, str]) -> tuple[int, int, str]:
    """(alloc_procs, nodes_used, alloc_nodes) from exec_host, else exec_vnode."""
    if attrs.get("exec_host"):
        hosts = parse_exec_host(attrs["exec_host"])
    elif attrs.get("exec_vnode"):
        hosts = parse_exec_vnode(attrs["exec_vnode"])
    else:
        return -1, -1, ""
    text = ",".join(f"{host}:{cores}" for host, cores in hosts.items())
    key = "exec_host" if attrs.get("exec_host") else "exec_vnode"
    return _bounded(sum(hosts.values()), key, "processors"), len(hosts), text


def _usage(attrs: dict[str, str], procs: int) -> tuple[float, float, int]:
    """(avg_cpu s, used_mem KB per processor, resources_used.walltime s or -1)."""
    cput, mem, wall = (attrs.get(f"resources_used.{k}") for k in ("cput", "mem", "walltime"))
    cpu_s = duration(cput, "resources_used.cput") if cput else -1
    mem_kb = size_bytes(mem, "resources_used.mem") / 1024 if mem else -1.0
    avg_cpu = cpu_s / procs if cpu_s >= 0 and procs > 0 else -1.0
    used_mem = mem_kb / procs if mem_kb >= 0 and procs > 0 else -1.0
    return avg_cpu, used_mem, duration(wall, "resources_used.walltime") if wall else -1


def _request_row(attrs: dict[str, str], submit_key: str) -> dict[str, object]:
    """The columns a record gives about the request (shared by ended and unstarted jobs)."""
    procs, gpus, memory, req_time, per_proc, spec = _request(attrs)
    total = -1 if memory < 0 or (per_proc and procs <= 0) else \
        memory * (procs if per_proc else 1)
    place = attrs.get("Resource_List.place", "")
    exclusive = (spec is not None and spec.exclusive) or any(
        word in ("excl", "exclhost") for word in place.split(":"))
    row: dict[str, object] = {
        "req_nodes": spec.chunks if spec is not None else -1,
        "req_mem_mb": -(-total // (1 << 20)) if total >= 0 else -1,
        "exclusive": int(exclusive),
        "req_procs": procs, "req_gpus": gpus, "req_time": req_time, "_memory": memory,
        "_per_proc": per_proc,
        "eligible": _time(attrs, "etime"), "submit": _time(attrs, submit_key),
        "account": attrs.get("account", ""), "qos": "",
    }
    for column, key in _NAMED.items():
        row[column] = attrs.get(key, "")
    return row


def ended_job(attrs: dict[str, str], submit_key: str) -> tuple[dict[str, object], int]:
    """The row of an ``E`` record of a job that ran, and its ``resources_used.walltime``
    (-1 when absent). Raises :class:`_RecordError` for a missing or bad value."""
    _required_time(attrs, "ctime", "E")
    submit = _required_time(attrs, submit_key, "E")
    start = _required_time(attrs, "start", "E")
    end = _required_time(attrs, "end", "E")
    if end < start:
        raise _RecordError(f"end {end} is before start {start}", "end")
    if start < submit:
        raise _RecordError(f"start {start} is before {submit_key} {submit}", "start")
    row = _request_row(attrs, submit_key)
    alloc, nodes_used, alloc_nodes = _placement(attrs)
    avg_cpu, used_mem, walltime = _usage(attrs, alloc)
    row.update(
        wait=start - submit, run=end - start, alloc_procs=alloc, nodes_used=nodes_used,
        alloc_nodes=alloc_nodes, avg_cpu=avg_cpu, used_mem=used_mem,
        status=exit_status_to_swf(attrs.get("Exit_status")),
    )
    return row, walltime


def unstarted_job(attrs: dict[str, str], submit_key: str, submit: int) -> dict[str, object]:
    """The row of a job deleted before it started (run -1, wait -1, status 5: kept in
    the table, e.g. for ``convert`` and arrival statistics; the default cleaning drops
    it before a simulation, counted under ``run < 0``); ``submit``
    replaces a missing ``ctime``/``etime``."""
    row = _request_row(attrs, submit_key)
    if row["submit"] == -1:
        row["submit"] = submit
    row.update(wait=-1, run=-1, alloc_procs=-1, nodes_used=-1, alloc_nodes="",
               avg_cpu=-1.0, used_mem=-1.0, status=CANCELLED)
    return row


# --------------------------------------------------------------------------------------
# the trace
# --------------------------------------------------------------------------------------


@dataclass
class _Pending:
    """A D/A record waiting for the job's E record (or the end of the trace)."""

    rtype: str
    line: int
    seq: int
    extra: int = 0  # later D/A records of the job (counted with it once it is known)


@dataclass
class _Queued:
    """The last ``Q`` record of a job (kept only with ``unstarted="keep"``)."""

    stamp: str
    message: str
    file: str
    line: int


@dataclass
class _Reader:
    """State of one pass over the records of all files."""

    submit_key: str
    zone: ZoneInfo
    keep_unstarted: bool
    lenient: bool
    rows: list[dict[str, object]] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    malformed: int = 0
    records: int = 0
    mismatches: int = 0
    kept_unstarted: int = 0
    pending: dict[str, _Pending] = field(default_factory=dict)
    queued: dict[str, _Queued] = field(default_factory=dict)
    started: set[str] = field(default_factory=set)
    ended: set[tuple[str, str]] = field(default_factory=set)
    ended_ids: set[str] = field(default_factory=set)
    dates: dict[str, bool] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        """Count one record (or job) left out for ``reason``."""
        self._count(reason, 1)

    def _count(self, reason: str, k: int) -> None:
        """Count ``k`` records left out for ``reason``."""
        self.skipped[reason] = self.skipped.get(reason, 0) + k

    # -- records -----------------------------------------------------------------------

    def read(self, path: Path) -> None:
        """Feed every record of one file."""
        name = str(path)
        for number, line in _numbered_lines(path):
            self.records += 1
            try:
                self.record(line, name, number)
            except _RecordError as err:
                if not self.lenient:
                    raise InputError(err.message, file=name, line=number,
                                     field=err.field) from None
                self.malformed += 1

    def record(self, line: str, file: str, number: int) -> None:
        """Dispatch one ``stamp;type;id;message`` line."""
        parts = line.split(";", 3)
        if len(parts) < 4 or len(parts[1]) != 1 or not parts[2]:
            raise _RecordError("not an accounting record 'MM/DD/YYYY HH:MM:SS;T;ID;...'")
        stamp, rtype, jid, message = parts
        self.check_stamp(stamp)
        if "[]" in jid:
            self.skip(SKIP_PARENT)
        elif rtype == "E":
            self.end_record(jid, parse_message(message), number)
        elif rtype in "DA":
            self.delete_record(jid, rtype, number)
        else:
            if rtype == "Q" and self.keep_unstarted:
                self.queued[jid] = _Queued(stamp, message, file, number)
            elif rtype == "S":
                self.started.add(jid)
            self.skip(SKIP_OTHER)

    def check_stamp(self, stamp: str) -> None:
        """``MM/DD/YYYY HH:MM:SS`` with a real calendar date (dates cached)."""
        m = _STAMP_RE.fullmatch(stamp)
        ok = m is not None and self.dates.get(stamp[:10])
        if ok is None and m is not None:
            try:
                datetime(int(m[3]), int(m[1]), int(m[2]))
                ok = True
            except ValueError:
                ok = False
            self.dates[stamp[:10]] = ok
        if not ok:
            raise _RecordError(f"not a date MM/DD/YYYY HH:MM:SS: '{stamp}'", "timestamp")

    def epoch(self, stamp: str) -> int:
        """Unix seconds of a (checked) record time stamp in the log's zone."""
        m = _STAMP_RE.fullmatch(stamp)
        assert m is not None
        month, day, year, hour, minute, second = (int(g) for g in m.groups())
        try:
            seconds = int(datetime(year, month, day, hour, minute, second,
                                   tzinfo=self.zone).timestamp())
        except (OverflowError, ValueError):  # a year 1 or 9999 shifted out of range
            raise _RecordError(f"not a time the engine can represent: '{stamp}'",
                               "timestamp") from None
        problem = time_problem(seconds, "the time stamp")
        if problem is not None:
            raise _RecordError(problem, "timestamp")
        return seconds

    def end_record(self, jid: str, attrs: dict[str, str], number: int) -> None:
        """A job from an E record: ran (maybe deleted while running) or never started."""
        key = (jid, attrs.get("ctime", ""))
        if key in self.ended:
            self.skip(SKIP_DUPLICATE)
            return
        deletion = self.pending.get(jid)
        if deletion is not None and _time(attrs, "start") < 0:
            row = unstarted_job(attrs, self.submit_key, -1)
            if row["submit"] == -1:
                raise _RecordError(f"the E record has no {self.submit_key}", self.submit_key)
            row["_jid"] = jid
            self.pending.pop(jid)
            self._count(SKIP_EXTRA, 1 + deletion.extra)  # its D/A records: the E stands for it
            self.add_unstarted(row, number, self.records)
        else:
            row, walltime = ended_job(attrs, self.submit_key)
            if walltime >= 0 and abs(int(row["run"]) - walltime) > WALLTIME_TOLERANCE:
                self.mismatches += 1
            if deletion is not None:
                self.pending.pop(jid)
                self.skip(SKIP_FOLDED)
                self.skipped[SKIP_FOLDED] += deletion.extra
                if deletion.rtype == "D":
                    row["status"] = pbs_exit_status(None, deleted=True)
            self.add(row, jid, number, self.records)
        self.ended.add(key)
        self.ended_ids.add(jid)
        self.queued.pop(jid, None)

    def delete_record(self, jid: str, rtype: str, number: int) -> None:
        """Hold a D/A record until the job's E record (or the end of the trace); a
        later D/A record of a held job waits with it (a job deleted, then aborted, that
        never started is one job deleted before start)."""
        if jid in self.ended_ids:
            self.skip(SKIP_FOLDED)
            return
        held = self.pending.get(jid)
        if held is not None:
            held.extra += 1
            if rtype == "D":
                held.rtype = "D"  # deleted by request, whatever the server did too
            return
        self.pending[jid] = _Pending(rtype, number, self.records)

    def add(self, row: dict[str, object], jid: str, number: int, seq: int) -> None:
        """Append a job; ``seq`` (its record's position in the trace) breaks submit ties."""
        row.update(job_ref=jid, line=number, _seq=seq)
        self.rows.append(row)

    def add_unstarted(self, row: dict[str, object], number: int, seq: int) -> None:
        """Keep (or count) a job that never started, per ``unstarted``."""
        if not self.keep_unstarted:
            self.skip(SKIP_UNSTARTED)
            return
        self.kept_unstarted += 1
        self.add(row, str(row.pop("_jid", "")), number, seq)

    # -- end of the trace ----------------------------------------------------------------

    def close(self) -> None:
        """Classify the D/A records whose job has no E record."""
        for jid, deletion in self.pending.items():
            if deletion.extra:  # the first D/A record stands for the job, once
                self._count(SKIP_EXTRA, deletion.extra)
            if jid in self.started:
                self.skip(SKIP_NO_END)
            elif not self.keep_unstarted:
                self.skip(SKIP_UNSTARTED)
            else:
                self.keep_deleted(jid, deletion)
        self.pending.clear()

    def keep_deleted(self, jid: str, deletion: _Pending) -> None:
        """A kept job deleted before it started, with its request from its Q record."""
        queued = self.queued.get(jid)
        if queued is None:
            self.skip(SKIP_NO_SUBMIT)
            return
        try:
            row = unstarted_job(parse_message(queued.message), self.submit_key,
                                self.epoch(queued.stamp))
        except _RecordError as err:
            if not self.lenient:
                raise InputError(err.message, file=queued.file, line=queued.line,
                                 field=err.field) from None
            self.malformed += 1
            return
        if row["submit"] == -1:
            self.skip(SKIP_NO_SUBMIT)
            return
        row["_jid"] = jid
        self.add_unstarted(row, deletion.line, deletion.seq)


# --------------------------------------------------------------------------------------
# the table
# --------------------------------------------------------------------------------------


def _factorize(names: list[object]) -> tuple[np.ndarray, list[str]]:
    """Codes 0, 1, ... in order of first appearance ("" -> -1) and the name table."""
    table: dict[str, int] = {}
    codes = [-1 if not s else table.setdefault(str(s), len(table)) for s in names]
    return np.asarray(codes, dtype=np.int64), list(table)


def _columns(rows: list[dict[str, object]]) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """Submit-sorted columns (times still in Unix seconds) and the name tables."""
    submit = np.fromiter((r["submit"] for r in rows), dtype=np.int64, count=len(rows))
    seq = np.fromiter((r["_seq"] for r in rows), dtype=np.int64, count=len(rows))
    order = np.lexsort((seq, submit))
    rows = [rows[i] for i in order]
    n = len(rows)
    cols: dict[str, np.ndarray] = {}
    for name in (*SWF_FIELDS, "line", *_INT_EXTRAS):
        dtype = np.float64 if name in FLOAT_FIELDS else np.int64
        if name in _NAMED or name not in rows[0]:
            cols[name] = np.full(n, -1, dtype=dtype)
        else:
            cols[name] = np.fromiter((r[name] for r in rows), dtype=dtype, count=n)
    cols["job_id"] = np.arange(1, n + 1, dtype=np.int64)
    divisors = np.where(cols["req_procs"] > 0, cols["req_procs"], cols["alloc_procs"])
    cols["req_mem"] = np.fromiter(
        (per_proc_kb(r["_memory"], r["_per_proc"], d)  # type: ignore[arg-type]
         for r, d in zip(rows, divisors.tolist(), strict=True)),
        dtype=np.int64, count=n)
    codes: dict[str, list[str]] = {}
    for column in _NAMED:
        cols[column], codes[column] = _factorize([r[column] for r in rows])
    for name in _STR_COLUMNS:
        cols[name] = np.array([str(r[name]) for r in rows], dtype=object)
    return cols, codes


def _rebase(cols: dict[str, np.ndarray]) -> int:
    """Shift ``submit`` and ``eligible`` so that the first submission is 0; the origin."""
    origin = int(cols["submit"][0])
    cols["submit"] -= origin
    known = cols["eligible"] >= 0
    cols["eligible"][known] -= origin
    return origin


def _notes(reader: _Reader, submit_key: str) -> str:
    """The ``Note`` header value (lines joined with newlines)."""
    notes = [f"converted from PBS/Torque accounting logs by dispatchlab: submit = "
             f"{submit_key}, run = end - start"]
    if reader.mismatches:
        notes.append(f"{reader.mismatches} jobs: end - start differs from "
                     f"resources_used.walltime by more than {WALLTIME_TOLERANCE} s "
                     "(end - start kept)")
    if reader.kept_unstarted:
        notes.append(f"{reader.kept_unstarted} jobs deleted before they started kept "
                     "with run 0 and status 5")
    return "\n".join(notes)


def read_pbs(
    path: str | Path,
    *,
    lenient: bool = False,
    submit_from: str = "submit",
    timezone: str = "UTC",
    unstarted: str = "drop",
) -> JobTable:
    """Read a Torque or PBS Pro accounting log (a file, plain or gzip, or a folder of
    daily files read in name order) into a :class:`JobTable` sorted by submit time.

    ``submit_from``: ``"submit"`` (``ctime``) or ``"eligible"`` (``etime``);
    ``timezone``: the zoneinfo name of the log's local time stamps; ``unstarted``:
    ``"drop"`` (count) or ``"keep"`` the jobs deleted before they started; ``lenient``:
    skip bad records (counted) instead of raising. Times are seconds re-based to the
    first submission. See the module docstring for every rule.

    Raises :class:`InputError` for a bad option (naming it), a missing or unreadable
    file, a bad record (naming file, line and field) or a log without jobs.
    """
    zone = _check_options(submit_from, timezone, unstarted)
    path = Path(path)
    submit_key = SUBMIT_KEYS[submit_from]
    reader = _Reader(submit_key, zone, unstarted == "keep", lenient)
    for file in _log_files(path):
        reader.read(file)
    reader.close()
    if not reader.rows:
        detail = ", ".join(f"{v} {k}" for k, v in reader.skipped.items()) or "no records"
        raise InputError(f"no jobs: the log has no usable E (end) records ({detail})",
                         file=str(path))
    cols, codes = _columns(reader.rows)
    origin = _rebase(cols)
    info = TraceInfo(source=str(path), lines_read=reader.records,
                     malformed_skipped=reader.malformed)
    info.header = {"UnixStartTime": str(origin), "TimeZone": timezone,
                   "Note": _notes(reader, submit_key)}
    info.unix_start_time = origin
    info.format = "pbs"
    info.codes = codes
    info.skipped = dict(reader.skipped)
    return finish_table(cols, None, info)
