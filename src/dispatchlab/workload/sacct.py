"""Read Slurm accounting exports (``sacct --parsable2``) into a job table.

Versions followed
-----------------
The formats are those of ``sacct`` in Slurm **20.11** (``ReqMem`` with a per-CPU ``c``
or per-node ``n`` suffix) and **23.02 / 23.11** (``ReqMem`` is the job's total memory,
taken from the job's requested TRES, as since 21.08); the reader does not need to be
told the version: the suffix decides. Sources read: the ``sacct(1)`` manual in
SchedMD's repository (the 25.11 text: field list, ``JobID`` forms, ``--duplicates``,
``--parsable``/``--parsable2``, ``SLURM_TIME_FORMAT``, job state codes),
``src/sacct/print.c`` in its current form and in the form that printed the ``c``/``n``
suffix (what each field prints for jobs and for steps, ``CANCELLED by <uid>``,
``UNLIMITED``/``Partition_Limit`` limits), and ``src/common/parse_time.c`` (the time
limit forms, their rounding up to minutes, ``Unknown`` for a zero time stamp).
A typical export::

    SLURM_TIME_FORMAT=%s sacct --allusers --parsable2 --starttime=2024-01-01 \\
        --endtime=2024-07-01 --format=JobID,JobIDRaw,JobName,User,Group,Account,QOS,\\
    Partition,Submit,Eligible,Start,End,State,AllocCPUS,ReqCPUS,NNodes,ReqNodes,\\
    TimelimitRaw,ReqMem,ReqTRES,AllocTRES,NodeList,Constraints > jobs.sacct

``--parsable`` (a ``|`` after the last field) is read as well; the fixed-width output
(no ``-p``/``-P``) is not, and says so. A ``.gz`` file (gzip magic bytes) is read
through gzip.

Columns
-------
The first line is the header (``sacct`` prints one unless ``--noheader``); without
it, ``columns`` gives the ``--format`` names in order. Names are matched without
regard to case; columns the reader does not use are skipped unparsed, and so are
``Timelimit``, ``NCPUS``, ``UID`` and ``GID`` when the export also has
``TimelimitRaw``, ``AllocCPUS``, ``User`` and ``Group`` respectively, which say the
same for a job record. Required:
``JobIDRaw`` or ``JobID``; ``Submit`` (``Eligible`` with ``submit_from="eligible"``);
``Start``; ``End``; ``State``; one of ``ReqCPUS``/``AllocCPUS``/``NCPUS``. A missing
one is an :class:`~dispatchlab.core.errors.InputError` naming the file, the header line and
the column. Optional: ``JobName``, ``User`` (else ``UID``), ``Group`` (else ``GID``),
``Account``, ``QOS``, ``Partition``, ``Eligible``, ``NNodes``, ``ReqNodes``,
``Timelimit``, ``TimelimitRaw``, ``ReqMem``, ``ReqTRES``, ``AllocTRES``, ``NodeList``,
``Constraints``.

Records
-------
* **Job steps** (``123.batch``, ``123.extern``, ``123.0``, ``123_4.batch``,
  ``123+0.0``: a ``.`` in the id) are folded into their job: the job line carries
  what the simulation needs, so step lines are left out and counted in
  ``info.skipped["job steps folded"]``.
* **Array tasks** ``123_4`` are jobs. **Array placeholders** ``123_[5-10%2]`` (one
  line for the tasks that never started) are left out and counted per line in
  ``info.skipped["array placeholders (never started)"]``.
* **Heterogeneous jobs**: the components ``123+0``, ``123+1`` ... are co-scheduled
  parts of one job and are merged into one job: submit, eligible and start are the
  earliest, end the latest (start/end are missing when a component's is); CPUs,
  nodes and GPUs are summed (over the components that give them); memory per CPU is
  the total memory over the total CPUs; the time limit is the **largest** component
  limit (the allocation lasts until its longest part ends; missing when one is
  unlimited or missing); the status is the first present of *unfinished*, failed
  (0), cancelled (5), completed (1); ``NodeList`` values are joined with ``,``; job
  id, names, account, QOS and partition are the first component's (lowest offset).
  ``job_ref`` is ``123+``; the records merged away are counted in
  ``info.skipped["heterogeneous components merged"]``. Without a ``JobID`` column
  the components cannot be recognized (``JobIDRaw`` gives each its own id) and are
  read as separate jobs.
* **Duplicates** (``sacct --duplicates``: a requeued or preempted-and-requeued job
  has one job record per run, all with the same ``JobIDRaw``; Slurm resets
  ``Submit`` on requeue): the **last record** of a job id in the file is kept (the
  final run, with the submit time of its requeue) and the earlier ones are counted in
  ``info.skipped["earlier runs of requeued jobs (--duplicates)"]``. Different jobs
  that share an id after Slurm's job counter was reset are taken for one job too (only
  the last is kept): the export does not tell them from a requeue.
* A blank line is ignored.

Fields
------
``job_id`` = ``JobIDRaw`` as an integer (an array task's own id, e.g. ``127`` for
``123_4``; a heterogeneous job's first component's), or ``JobID`` when there is no
``JobIDRaw`` column and it is a plain number, else -1. ``job_ref`` (text) is the
``JobID`` as written (``123``, ``123_4``, ``123+`` for a merged heterogeneous job),
else ``JobIDRaw``. ``submit`` = ``Submit`` (``submit_from="submit"``) or ``Eligible``
(``"eligible"``; ``Submit`` when a job's ``Eligible`` is missing, noted in the
header). ``wait`` = start - submit (the chosen submit time), ``run`` = end - start
(-1 when unknown).
``alloc_procs`` = ``AllocCPUS`` (or ``NCPUS``; -1 for a job that never started,
where sacct prints 0), ``req_procs`` = ``ReqCPUS``. ``req_time`` = the time limit in
seconds (below). ``req_mem`` = requested memory per CPU in KB (below). ``status``
from ``State`` (below). ``user``, ``group``, ``queue`` (= ``Partition``), ``app`` (=
``JobName``) are integer codes with name tables in ``info.codes`` (below).
``partition``, ``avg_cpu``, ``used_mem``, ``prev_job``, ``think_time`` are -1.
Extra columns: ``job_ref``, ``account``, ``qos`` (text, "" missing), ``eligible`` (s,
same origin as submit, -1 missing), ``req_gpus`` (total GPUs, -1 missing),
``nodes_used`` (``NNodes``, else the number of hosts in ``NodeList``; -1 missing or for
a job that never started, where sacct prints the requested count), ``alloc_nodes``
(``NodeList`` as written, "" missing; a Slurm host list such as ``cn[001-004],gpu01``,
read by :mod:`dispatchlab.platform.hostlist`: a malformed one is an error of field
``NodeList``; the reader checks the syntax, ``platform infer`` expands it).
``line`` is the 1-based line of the job's record (the first component's for a
heterogeneous job, the kept record's for a duplicated one).

Times
-----
``Submit``/``Eligible``/``Start``/``End`` are epoch seconds (``SLURM_TIME_FORMAT=%s``)
or ``YYYY-MM-DDTHH:MM:SS`` (the default format) in local time of ``timezone`` (an
IANA name; epoch values do not depend on it); ``Unknown``, ``None`` and empty mean
missing. Daylight saving: a local time that occurs twice (the hour repeated when
clocks go back) is read as its **first occurrence** (``fold=0``, still summer time); a
local time that does not exist (the hour skipped when clocks go forward) is read with
the offset in force **before** the jump (as Python's ``zoneinfo`` does for ``fold=0``),
so ``02:30`` on a spring-forward night is the instant written ``03:30`` afterwards.
All times are re-based so that the first kept job's submit time is t = 0:
``info.unix_start_time`` and ``info.header["UnixStartTime"]`` hold that origin's
epoch and ``info.header["TimeZone"]`` the zone. Rows are ordered by submit time with
a stable sort (ties keep the file order).

Time limits
-----------
``TimelimitRaw`` (minutes) is read when the export has it (``Timelimit`` is then
not read: sacct prints both from the job's one limit); else ``Timelimit`` is read in
every form ``sbatch --time`` takes and ``sacct`` prints: ``MM``,
``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``; seconds are rounded up
to a whole minute, as Slurm stores limits in minutes. ``UNLIMITED``,
``Partition_Limit`` (no limit set) and empty give -1 (missing; the estimate fallback
of :func:`~dispatchlab.workload.swf.finish_table` then applies).

Memory
------
``ReqMem`` is a number (decimals allowed) with an optional unit ``K``/``M``/``G``/
``T``/``P`` (powers of 1024; no unit = MB, Slurm's default) and, up to Slurm 20.11, a
suffix ``c`` (per CPU) or ``n`` (per node); from 21.08 it has no suffix and is the
job's total. SWF's ``req_mem`` is KB per processor: ``c`` values are converted as
they are, ``n`` values times ``NNodes`` (else ``ReqNodes``) divided by the CPUs,
totals divided by the CPUs (``AllocCPUS`` when > 0, else ``ReqCPUS``); rounded to
the nearest KB; -1 when a needed count is missing. Where ``ReqMem`` is absent or
empty, ``mem=`` of ``ReqTRES`` (a total) is used. ``0`` (Slurm's "all the memory of
each node") is kept as 0.

GPUs
----
``req_gpus`` is read from ``ReqTRES`` (``AllocTRES`` when the export has no
``ReqTRES`` column: a job record always has its requested TRES): ``gres/gpu=N`` is the
job's total; without it, the typed counts ``gres/gpu:TYPE=N`` are summed (Slurm
writes both forms for the same GPUs when typed GPUs are tracked). A TRES string
without GPUs gives 0, an empty one -1.

Requests (for :mod:`dispatchlab.workload.requests`)
---------------------------------------------------
``req_nodes`` = ``ReqNodes``, else ``node=`` of ``ReqTRES`` (-1 without either);
``req_mem_mb`` = the job's total requested memory in MB, rounded up: ``ReqMem`` per CPU
times ``ReqCPUS`` (else ``AllocCPUS``), per node times ``req_nodes`` (else ``NNodes``),
or the total as it is (``mem=`` of ``ReqTRES`` where ``ReqMem`` is absent; 0 kept: all
the memory of each node; -1 unknown); ``alloc_gpus`` and ``alloc_mem_mb`` from
``AllocTRES`` (-1 without it, or for a job that never started); ``gpu_type`` = the types
of ``gres/gpu:TYPE=N`` in ``ReqTRES`` (else ``AllocTRES``), several joined with ``|``,
"" untyped; ``features`` = ``Constraints`` as written ("" without the column; a
constraint holding ``|`` cannot be read from a ``|``-separated export: export with
``--delimiter`` then); ``exclusive`` = -1 (sacct does not say; the fitting reads an
exclusive allocation from the CPUs). A heterogeneous job sums ``req_nodes``,
``req_mem_mb``, ``alloc_gpus`` and ``alloc_mem_mb`` over its components and keeps the
first component's ``gpu_type`` and ``features``.

States
------
``State`` is read up to the first blank (``CANCELLED by 1234`` -> ``CANCELLED``;
a trailing ``+`` is ignored). SWF ``status`` (:data:`STATE_STATUS`, the one table of
:mod:`dispatchlab.workload.status`, shared by every reader and ``--swf-out``):

=====================================================  ======  =========================
State                                                  status  why
=====================================================  ======  =========================
COMPLETED                                              1       ran to its end
FAILED, NODE_FAIL, BOOT_FAIL, OUT_OF_MEMORY, TIMEOUT,  0       failed, or stopped by the
LAUNCH_FAILED, SPECIAL_EXIT, RECONFIG_FAIL                     system at its own limits
                                                               (TIMEOUT: killed at its
                                                               time limit; its run time
                                                               is known)
CANCELLED (also ``CANCELLED by <uid>``), DEADLINE,     5       stopped by a user, an
PREEMPTED, REQUEUED, REQUEUE_FED, REQUEUE_HOLD,                admin or the scheduler,
REVOKED, RESV_DEL_HOLD                                         before or after its start
PENDING, RUNNING, SUSPENDED, RESIZING, CONFIGURING,    -1      not finished at export
COMPLETING, STOPPED, SIGNALING, STAGE_OUT,                     time
POWER_UP_NODE, UPDATE_DB
=====================================================  ======  =========================

Any other state is an error (a malformed record).

Jobs that never ran to an end
-----------------------------
* No ``Start`` (cancelled, or ended otherwise, before starting; or still pending at
  export time): ``unstarted="drop"`` (default) leaves them out, counted in
  ``info.skipped["cancelled before start"]`` (an ``End`` is known) and
  ``info.skipped["pending at export"]`` (no ``End``); ``"keep"`` keeps them with wait
  and run -1, ``alloc_procs`` -1 and their ``State`` status, and notes their number in
  ``info.header["Note"]``.
* ``Start`` but no ``End``, or an unfinished ``State`` (e.g. ``RUNNING`` with the
  ``End`` that ``sacct --truncate`` prints): ``running="drop"`` (default) leaves them
  out, counted in ``info.skipped["still running"]``; ``"keep"`` keeps them with run
  -1 (or the truncated end - start) and status -1, noted in the header.

Codes
-----
``user``/``group``/``queue``/``app`` are 0-based codes in order of first appearance
in the returned table (submit order, ties by file order); ``info.codes["user"][k]``
is the name of user code ``k``; an empty name is -1 and has no entry.

Errors and ``lenient``
----------------------
A line with another number of ``|``-separated fields than the header, a value that
cannot be read (time, count, time limit, memory, state, job id, node list), a job
record without a submit time, or one whose ``Start`` is before its submit time (a
negative wait, refused as the PBS reader refuses it) is an
:class:`~dispatchlab.core.errors.InputError`
``FILE:LINE: field NAME: message`` (``NAME`` as the file spells the column); with
``lenient=True`` such records are skipped and counted in ``info.malformed_skipped``.
A time (or time limit) at or beyond the engine's limit
(:data:`dispatchlab.core.limits.TIME_LIMIT`) is such a value. Bytes that are not UTF-8
never end a read: in names they become U+FFFD, elsewhere the value is unreadable, and
a line of a wrong field count holding such bytes (which pyarrow cannot hand over as
text) is found by reading the file again with those bytes replaced.
A bad option value is an error naming the option (``--submit-from``,
``--timezone``, ``--unstarted``, ``--running``, ``--columns``).

Info
----
``info.format`` is ``"sacct"``; ``info.lines_read`` counts the records read (job, step
and placeholder lines, malformed ones included; not the header, not blank lines: as
every reader, see :class:`~dispatchlab.workload.jobs.TraceInfo`);
``info.skipped`` the records left out by the rules above, by reason;
``info.malformed_skipped`` the records skipped in lenient mode. Kept jobs that never
started or had not ended have run -1, which the default cleaning of
:func:`~dispatchlab.workload.load.load_trace` then drops
(counted there): ``keep`` matters for ``convert`` and ``trace info`` without cleaning.

Performance
-----------
The file is streamed through ``pyarrow.csv`` in blocks of 2 MiB (``|`` delimiter, no
quoting, only the used columns converted, as text); the step lines of each block are
dropped at once with one vectorized test on the id, so the records kept in memory are
the job lines only. Every field is then converted on whole columns with
``pyarrow.compute`` and numpy: ISO times by arithmetic on the raw bytes, columns with
few distinct values (time limits, memory, TRES, states) through their distinct values.
Python loops run only over distinct states, heterogeneous jobs, and the records of a
malformed line (whose line numbers need a second, single-threaded pass over the file).
``benchmarks/bench_sacct.py``: 1,000,000 jobs with 2.5 step lines each (3.5 million
lines, 595 MiB) read in about 2.4 s, 2.5-2.8 times
:func:`~dispatchlab.workload.swf.read_swf` on the same jobs as SWF (peak RSS about
850 MiB).
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import IO, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from dispatchlab.core.errors import InputError
from dispatchlab.core.limits import beyond_limit, time_problem
from dispatchlab.platform.hostlist import hosts
from dispatchlab.workload.jobs import FLOAT_FIELDS, SWF_FIELDS, JobTable, TraceInfo
from dispatchlab.workload.status import SLURM_STATE_STATUS
from dispatchlab.workload.swf import finish_table

__all__ = [
    "COLUMNS",
    "SACCT_FORMAT",
    "STATE_STATUS",
    "looks_like_sacct",
    "read_sacct",
]

#: The sacct columns the reader uses (``--format`` names; matched without regard to case).
COLUMNS: tuple[str, ...] = (
    "JobID", "JobIDRaw", "JobName", "User", "UID", "Group", "GID", "Account", "QOS",
    "Partition", "Submit", "Eligible", "Start", "End", "State", "AllocCPUS", "NCPUS",
    "ReqCPUS", "NNodes", "ReqNodes", "Timelimit", "TimelimitRaw", "ReqMem", "ReqTRES",
    "AllocTRES", "NodeList", "Constraints",
)
#: A ``--format`` list giving the reader everything it uses.
SACCT_FORMAT = (
    "JobID,JobIDRaw,JobName,User,Group,Account,QOS,Partition,Submit,Eligible,Start,End,"
    "State,AllocCPUS,ReqCPUS,NNodes,ReqNodes,TimelimitRaw,ReqMem,ReqTRES,AllocTRES,NodeList,"
    "Constraints"
)
#: SWF status of each Slurm job state: the one table of
#: :mod:`dispatchlab.workload.status` (-1 = not finished).
STATE_STATUS: dict[str, int] = SLURM_STATE_STATUS
#: ``info.skipped`` keys.
SKIP_STEPS = "job steps folded"
SKIP_PLACEHOLDERS = "array placeholders (never started)"
SKIP_DUPLICATES = "earlier runs of requeued jobs (--duplicates)"
SKIP_HET = "heterogeneous components merged"
SKIP_CANCELLED = "cancelled before start"
SKIP_PENDING = "pending at export"
SKIP_RUNNING = "still running"

_CANON = {c.lower(): c for c in COLUMNS}
#: Columns that say what another one says (for job records), and are not read when the
#: export has that other one: Slurm prints both limits from the job's one limit, both
#: CPU counts from its allocated CPUs, ``ReqNodes`` only matters without ``NNodes``, and
#: a job record always has its requested TRES. (``ReqNodes`` and ``AllocTRES`` are read
#: with ``NNodes`` and ``ReqTRES``: what was asked and what was given both matter to
#: the request fitting, :mod:`dispatchlab.workload.requests`.)
_SAME_AS = {"Timelimit": "TimelimitRaw", "NCPUS": "AllocCPUS", "UID": "User", "GID": "Group"}
#: Columns kept as text in the table (job reference, names, node list).
_NAME_COLUMNS = frozenset({"JobID", "JobIDRaw", "JobName", "User", "UID", "Group", "GID",
                           "Account", "QOS", "Partition", "NodeList", "Constraints"})
_MISSING_TIMES = pa.array(["", "Unknown", "None"])
_NO_LIMIT = pa.array(["", "UNLIMITED", "Partition_Limit"])
_LIMIT_RE = (r"^(?:(?P<d>[0-9]{1,6})-)?(?P<a>[0-9]{1,9})"
             r"(?::(?P<b>[0-9]{1,9}))?(?::(?P<c>[0-9]{1,9}))?$")
_MEM_RE = r"^(?P<num>[0-9]{1,15}(?:\.[0-9]{1,9})?)(?P<unit>[KMGTP]?)(?P<per>[cn]?)$"
_TRES_MEM_RE = r"(?:^|,)mem=(?P<num>[0-9]{1,15}(?:\.[0-9]{1,9})?)(?P<unit>[KMGTP]?)(?:,|$)"
_GPU_RE = r"^gres/gpu(?P<type>:[^=]*)?=(?P<n>[0-9]{1,9})$"
_TRES_NODE_RE = r"(?:^|,)node=(?P<n>[0-9]{1,9})(?:,|$)"
#: A host list as sacct prints it: names, bracket groups of numbers and ranges, commas.
_HOST_ITEM = r"[0-9]{1,18}(?:-[0-9]{1,18})?"
_HOST_ENTRY = rf"(?:[^\[\],\s]|\[{_HOST_ITEM}(?:,{_HOST_ITEM})*\])+"
_HOSTLIST_RE = rf"^(?:{_HOST_ENTRY}(?:,{_HOST_ENTRY})*)?$"
_KB = {"K": 1, "": 1024, "M": 1024, "G": 1024**2, "T": 1024**3, "P": 1024**4}
_PER_TOTAL, _PER_CPU, _PER_NODE = 0, 1, 2
_ISO_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
_DAYS_IN_MONTH = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
#: Bytes of text pyarrow parses at a time.
_BLOCK_BYTES = 1 << 21
#: A column of the job records by sacct name (None when the export lacks it).
_Col = Callable[[str], "pa.Array | None"]
_JOB_ID_RE = r"^[0-9]+(?:_[0-9]+|\+[0-9]+)?$"
_HET_RE = r"^(?P<leader>[0-9]{1,15})\+(?P<offset>[0-9]{1,9})$"
_OPTIONS = {
    "submit_from": ("--submit-from", ("submit", "eligible")),
    "unstarted": ("--unstarted", ("drop", "keep")),
    "running": ("--running", ("drop", "keep")),
}


# --------------------------------------------------------------------------------------
# sniffing
# --------------------------------------------------------------------------------------


def _id_like(text: str) -> bool:
    """A sacct job id (``123``, ``123_4``, ``123+0``, ``123_[1-5]``, with ``.step``)."""
    head = text.split(".", 1)[0]
    return head[:1].isdigit() and all(c.isdigit() or c in "_+[]-%," for c in head)


def looks_like_sacct(first_lines: list[str]) -> bool:
    """True when the first lines of a file look like a sacct export: a header naming
    ``JobID``/``JobIDRaw`` (``|``-separated, or the fixed-width header, so that the
    reader can say how to export), or headerless ``|``-separated lines (3 fields or
    more, the same count on every line) whose first field is a job id."""
    lines = [x.strip("\r\n") for x in first_lines if x.strip()]
    if not lines:
        return False
    first = lines[0]
    names = {f.strip().lower() for f in first.split("|")}
    if "|" in first and names & {"jobid", "jobidraw"}:
        return True
    words = first.split()
    if words and words[0].lower() in ("jobid", "jobidraw"):
        return True
    counts = {line.count("|") for line in lines[:10]}
    return (len(counts) == 1 and min(counts) >= 2
            and all(_id_like(line.split("|", 1)[0]) for line in lines[:10]))


# --------------------------------------------------------------------------------------
# options, file layout
# --------------------------------------------------------------------------------------


def _check_choice(name: str, value: str) -> None:
    flag, choices = _OPTIONS[name]
    if value not in choices:
        raise InputError(f"must be {' or '.join(repr(c) for c in choices)}, not {value!r}",
                         field=flag)


def _check_timezone(timezone: str) -> None:
    """The zone must be known to both zoneinfo and pyarrow (InputError otherwise)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(timezone)
        pc.assume_timezone(pa.array([0], type=pa.timestamp("s")), timezone)
    except (ZoneInfoNotFoundError, ValueError, TypeError, pa.ArrowInvalid):
        raise InputError(f"unknown time zone {timezone!r} (an IANA name such as "
                         "'Europe/Rome', or 'UTC')", field="--timezone") from None


def _check_columns(columns: Sequence[str] | str) -> list[str]:
    """The ``--columns`` list (a sequence, or one comma-separated string)."""
    names = columns.split(",") if isinstance(columns, str) else list(columns)
    names = [n.strip() if isinstance(n, str) else n for n in names]
    if not names or any(not isinstance(n, str) or not n for n in names):
        raise InputError("must be the non-empty sacct --format names, in order",
                         field="--columns")
    return names


@dataclass
class _Layout:
    """Where the records are: the file, its column names and its first data line."""

    path: str
    gz: bool
    names: list[str]  # names given to pyarrow: canonical for used columns, "_i" otherwise
    spelled: dict[str, str]  # canonical name -> as the file (or --columns) spells it
    header_line: int | None  # 1 when the first line is a header
    first_line: int  # 1-based line of the first record
    #: the file's text with every byte that is not UTF-8 replaced by U+FFFD, once a
    #: malformed row turned out to hold such bytes (pyarrow cannot hand such a row to
    #: the invalid-row handler); the records are then read from it
    repaired: bytes | None = None

    def has(self, name: str) -> bool:
        return name in self.spelled

    def read(self) -> list[str]:
        """The columns to convert: the used ones, except those that only repeat another
        column the export also has (:data:`_SAME_AS`)."""
        return [n for n in self.names
                if not n.startswith("_") and not self.has(_SAME_AS.get(n, "_"))]

    def field(self, name: str) -> str:
        return self.spelled.get(name, name)

    def source(self) -> pa.NativeFile:
        """A stream of the file's (decompressed) bytes, or of its repaired text."""
        if self.repaired is not None:
            return pa.BufferReader(self.repaired)
        return pa.input_stream(self.path, compression="gzip" if self.gz else None)

    def repair(self) -> None:
        """Read the whole file and keep it with its bytes that are not UTF-8 replaced
        (only for a file whose malformed rows hold such bytes)."""
        try:
            with _open(Path(self.path), self.gz) as fh:
                raw = fh.read()
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read: {exc}", file=self.path) from exc
        self.repaired = raw.decode("utf-8", "replace").encode("utf-8")


@contextmanager
def _not_utf8_rows() -> Iterator[list[BaseException]]:
    """Collect (instead of printing) the errors pyarrow meets when it decodes a malformed
    row that is not UTF-8 for the invalid-row handler: it reports them through
    ``sys.unraisablehook`` ("Exception ignored in on_bad") and then fails the read."""
    seen: list[BaseException] = []
    old = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, UnicodeDecodeError):
            seen.append(unraisable.exc_value)
        else:
            old(unraisable)

    sys.unraisablehook = hook
    try:
        yield seen
    finally:
        sys.unraisablehook = old


def _first_line(path: Path) -> tuple[str, bool]:
    """The first line of ``path`` (decoded, without its end of line) and whether the file
    is gzip-compressed; InputError for a missing, unreadable or empty file."""
    name = str(path)
    if not path.exists():
        raise InputError("no such file", file=name)
    if path.is_dir():
        raise InputError("is a directory, not a sacct export", file=name)
    try:
        with open(path, "rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        with _open(path, gz) as fh:
            raw = fh.readline()
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read: {exc}", file=name) from exc
    text = raw.decode("utf-8", "replace").rstrip("\r\n").lstrip("\ufeff")
    if not text.strip():
        raise InputError("no header or records: the first line is empty", file=name, line=1)
    return text, gz


def _open(path: Path, gz: bool) -> IO[bytes]:
    return gzip.open(path, "rb") if gz else open(path, "rb")


def _layout(path: Path, columns: Sequence[str] | str | None) -> _Layout:
    """Read the header (or take ``columns``) and name the columns for pyarrow."""
    first, gz = _first_line(path)
    fields = first.split("|")
    lower = [f.strip().lower() for f in fields]
    if columns is None:
        if "|" not in first and first.split()[0].lower() in ("jobid", "jobidraw"):
            raise InputError("not a parsable export: the fields are not separated by '|' "
                             "(export with sacct --parsable2)", file=str(path), line=1)
        if not set(_CANON) & set(lower):
            raise InputError("no header: the first line does not name sacct columns "
                             "(JobID|JobIDRaw|...); export without --noheader or give the "
                             "column names (--columns)", file=str(path), line=1)
        names, header_line = [f.strip() for f in fields], 1
    else:
        names = _check_columns(columns)
        given = [n.lower() for n in names]
        header_line = 1 if lower in (given, [*given, ""]) else None
        if len(fields) == len(names) + 1 and fields[-1] == "":
            names.append("")  # --parsable: a '|' after the last field
    return _name_columns(str(path), gz, names, header_line)


def _name_columns(path: str, gz: bool, names: list[str], header_line: int | None) -> _Layout:
    spelled: dict[str, str] = {}
    arrow_names: list[str] = []
    for i, name in enumerate(names):
        canon = _CANON.get(name.lower())
        if canon is not None and canon in spelled:
            raise InputError(f"column {name} appears twice", file=path, line=header_line,
                             field=name if header_line else "--columns")
        if canon is not None:
            spelled[canon] = name
        arrow_names.append(canon if canon is not None else f"_{i}")
    first = 2 if header_line else 1
    return _Layout(path, gz, arrow_names, spelled, header_line, first)


def _require(layout: _Layout, submit_from: str) -> None:
    """InputError for the first required column the export lacks."""
    submit = "Eligible" if submit_from == "eligible" else "Submit"
    needs = [("JobIDRaw", "JobID"), (submit,), ("Start",), ("End",), ("State",),
             ("ReqCPUS", "AllocCPUS", "NCPUS")]
    for options in needs:
        if not any(layout.has(c) for c in options):
            name = " or ".join(options)
            where = "the header" if layout.header_line else "--columns"
            raise InputError(f"missing column: {where} has no {name} (the reader needs "
                             "JobIDRaw or JobID, Submit (Eligible with --submit-from "
                             "eligible), Start, End, State and one of ReqCPUS/AllocCPUS/"
                             "NCPUS)", file=layout.path, line=layout.header_line,
                             field=options[0])


# --------------------------------------------------------------------------------------
# reading the records
# --------------------------------------------------------------------------------------


@dataclass
class _BadRow:
    number: int | None
    text: str
    actual: int
    expected: int


@dataclass
class _Records:
    """What the reader kept of the file: the non-step records as text columns, their
    0-based positions among all records, and the counts of what it set aside."""

    table: pa.Table
    position: np.ndarray
    total: int  # records pyarrow returned (steps included, malformed rows excluded)
    steps: int
    bad: list[_BadRow]


def _reader(layout: _Layout, source: pa.NativeFile, columns: list[str],
            on_bad: Callable[[pacsv.InvalidRow], str], threads: bool) -> pacsv.CSVStreamingReader:
    """A pyarrow streaming reader of the records: ``|``-separated, no quoting, only
    ``columns`` converted (as text, unchecked UTF-8), malformed rows passed to ``on_bad``."""
    return pacsv.open_csv(
        source,
        read_options=pacsv.ReadOptions(column_names=layout.names, use_threads=threads,
                                       skip_rows=layout.first_line - 1, block_size=_BLOCK_BYTES),
        parse_options=pacsv.ParseOptions(delimiter="|", quote_char=False,
                                         ignore_empty_lines=False, invalid_row_handler=on_bad),
        convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(columns, pa.string()),
                                             include_columns=columns, check_utf8=False,
                                             strings_can_be_null=False),
    )


def _read_table(layout: _Layout) -> _Records:
    """Stream the records in blocks (only used columns converted, as text); step lines
    are dropped block by block so that they never pile up in memory; rows with a wrong
    field count are set aside."""
    bad: list[_BadRow] = []

    def on_bad(row: pacsv.InvalidRow) -> str:
        bad.append(_BadRow(row.number, row.text, row.actual_columns, row.expected_columns))
        return "skip"

    used = layout.read()
    ident = "JobID" if layout.has("JobID") else "JobIDRaw"
    while True:
        source = layout.source()
        batches, positions = [], []
        total = steps = 0
        try:
            with _not_utf8_rows() as not_utf8:
                reader = _reader(layout, source, used, on_bad, threads=True)
                for batch in reader:
                    step = _np(pc.match_substring(batch.column(ident), "."))
                    keep = np.flatnonzero(~step)
                    batches.append(batch.take(pa.array(keep)) if keep.size < len(step)
                                   else batch)
                    positions.append(keep + total)
                    total += len(step)
                    steps += len(step) - keep.size
            schema = reader.schema
            break
        except (pa.ArrowInvalid, OSError, EOFError) as exc:
            if not_utf8 and layout.repaired is None:  # read again from the repaired text
                bad.clear()
                layout.repair()
                continue
            raise InputError(f"cannot read as a sacct export: {exc}",
                             file=layout.path) from exc
        finally:
            source.close()
    table = pa.Table.from_batches(batches, schema=schema)
    del batches
    position = np.concatenate(positions) if positions else np.zeros(0, dtype=np.int64)
    table = _valid_utf8(_combine(table))
    pa.default_memory_pool().release_unused()  # the step blocks' memory, for numpy
    return _Records(table, position, total, steps, bad)


def _combine(table: pa.Table) -> pa.Table:
    """One chunk per column, a column at a time (each column's blocks are freed as soon
    as it is copied)."""
    for i, name in enumerate(table.column_names):
        table = table.set_column(i, name, table.column(i).combine_chunks())
    return table


def _valid_utf8(table: pa.Table) -> pa.Table:
    """Check the names of the kept records (read unchecked: step lines are not worth it;
    the other columns are parsed, and a stray byte there is an unreadable value); a
    column with bytes that are not UTF-8 (a name written in Latin-1, say) is decoded
    with U+FFFD for those bytes."""
    for i, name in enumerate(table.column_names):
        if name not in _NAME_COLUMNS:
            continue
        column = table.column(i)
        try:
            column.validate(full=True)
        except pa.ArrowInvalid:
            raw = column.cast(pa.binary()).to_pylist()
            fixed = pa.array([v.decode("utf-8", "replace") for v in raw], type=pa.string())
            table = table.set_column(i, name, fixed)
    return table


def _locate(layout: _Layout, bad: list[_BadRow]) -> list[tuple[int, _BadRow]]:
    """The malformed rows with their 1-based line numbers, in file order. pyarrow numbers
    them only when it parses without threads: the file is then read again that way (one
    column converted; only files with malformed rows pay for it)."""
    if any(b.number is None for b in bad):
        bad = []

        def on_bad(row: pacsv.InvalidRow) -> str:
            bad.append(_BadRow(row.number, row.text, row.actual_columns, row.expected_columns))
            return "skip"

        ident = "JobID" if layout.has("JobID") else "JobIDRaw"
        with layout.source() as src:
            for _ in _reader(layout, src, [ident], on_bad, threads=False):
                pass
    return sorted(((int(b.number or 0), b) for b in bad), key=lambda x: x[0])


def _record_lines(layout: _Layout, n_rows: int, bad_lines: list[int]) -> np.ndarray:
    """The 1-based line of each row pyarrow returned (rows skip the set-aside lines)."""
    lines = np.arange(layout.first_line, layout.first_line + n_rows + len(bad_lines),
                      dtype=np.int64)
    if bad_lines:
        lines = np.delete(lines, np.asarray(bad_lines, dtype=np.int64) - layout.first_line)
    return lines


def _raise_first(layout: _Layout, located: list[tuple[int, _BadRow]], problems: _Problems,
                 lines: np.ndarray) -> None:
    """Raise the first problem in file order: a malformed line or an unreadable value."""
    value_line = None if problems.first is None else int(lines[problems.first[0]])
    if located and (value_line is None or located[0][0] < value_line):
        line, first = located[0]
        where = "the header names" if layout.header_line else "--columns names"
        raise InputError(f"malformed record: {first.actual} fields separated by '|', {where} "
                         f"{first.expected} (a '|' inside a value, or a truncated line?)",
                         file=layout.path, line=line)
    if problems.first is not None:
        _, field, message = problems.first
        raise InputError(message, file=layout.path, line=value_line, field=field)


# --------------------------------------------------------------------------------------
# vectorized field parsing
# --------------------------------------------------------------------------------------


def _np(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A pyarrow array (boolean, numeric) as a writable numpy array."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return values.to_numpy(zero_copy_only=False, writable=True)


def _empty_strings(n: int) -> pa.Array:
    """``n`` empty strings, without building Python objects."""
    return pa.StringArray.from_buffers(n, pa.py_buffer(np.zeros(n + 1, dtype=np.int32)),
                                       pa.py_buffer(b""))


def _ints(text: pa.Array) -> np.ndarray:
    """Decimal strings -> int64 (the caller has checked them)."""
    return _np(pc.cast(text, pa.int64()))


def _try_ints(text: pa.Array) -> np.ndarray | None:
    """All values as non-negative int64 when every one is a plain decimal number (the
    usual case, one cast), else None (the caller then checks value by value)."""
    if len(text) == 0:
        return np.zeros(0, dtype=np.int64)
    try:
        values = _np(pc.cast(text, pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return values if values.min() >= 0 else None


def _digits(text: pa.Array, max_len: int = 15) -> np.ndarray:
    """Rows holding 1..``max_len`` ASCII digits."""
    return _np(pc.and_(pc.ascii_is_decimal(text),
                       pc.less_equal(pc.utf8_length(text), max_len)))


class _Problems:
    """Rows whose values cannot be read; the first one in file order is the error."""

    def __init__(self, n: int) -> None:
        self.bad = np.zeros(n, dtype=bool)
        self.first: tuple[int, str, str] | None = None  # (row, field, message)

    def add(self, mask: np.ndarray, field: str, values: pa.Array, what: str) -> None:
        """Flag the rows of ``mask``: ``what`` says what the value should be."""
        if not mask.any():
            return
        row = int(np.argmax(mask))
        self.bad |= mask
        if self.first is None or row < self.first[0]:
            self.first = (row, field, f"{what}: '{_text_at(values, row)}'")

    def add_message(self, mask: np.ndarray, field: str,
                    message: Callable[[int], str]) -> None:
        """Flag the rows of ``mask``; ``message(row)`` is the error of the first one."""
        if not mask.any():
            return
        row = int(np.argmax(mask))
        self.bad |= mask
        if self.first is None or row < self.first[0]:
            self.first = (row, field, message(row))


def _by_value(text: pa.Array,
              parse: Callable[[pa.Array], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """Apply ``parse`` to the distinct values of ``text`` only and spread its results to
    the rows (for columns with few distinct values: limits, memory, TRES)."""
    enc = pc.dictionary_encode(text)
    index = _np(enc.indices)
    return tuple(result[index] for result in parse(enc.dictionary))


def _string_bytes(text: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The offsets (n + 1) and the data bytes of a string array, without copies."""
    _, offsets, data = text.buffers()
    offs = np.frombuffer(offsets, dtype=np.int32, count=len(text) + 1, offset=text.offset * 4)
    return offs, (np.frombuffer(data, dtype=np.uint8) if data is not None
                  else np.zeros(0, dtype=np.uint8))


def _iso_seconds(text: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``YYYY-MM-DDTHH:MM:SS`` strings -> seconds of that wall time counted as UTC, and
    the rows that have exactly this form and a valid date (numpy on the raw bytes)."""
    n = len(text)
    offs, data = _string_bytes(text)
    rows = np.flatnonzero(np.diff(offs) == 19)
    if rows.size == 0:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    if rows.size == n and offs[-1] - offs[0] == 19 * n:
        chars = data[offs[0]:offs[-1]].reshape(n, 19)
    else:
        chars = data[offs[rows][:, None] + np.arange(19)]
    c = np.ascontiguousarray(chars.T)  # one contiguous row per character position
    d = c - np.uint8(48)  # digits 0..9; other bytes wrap around to > 9
    form = ((c[4] == 45) & (c[7] == 45) & (c[10] == 84) & (c[13] == 58) & (c[16] == 58)
            & (d[_ISO_DIGITS].max(axis=0) <= 9))

    def num(*pos: int) -> np.ndarray:
        value = d[pos[0]].astype(np.int32)
        for p in pos[1:]:
            value *= 10
            value += d[p]
        return value

    year, month, day = num(0, 1, 2, 3), num(5, 6), num(8, 9)
    hour, minute, sec = num(11, 12), num(14, 15), num(17, 18)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    days_in = _DAYS_IN_MONTH[np.clip(month, 1, 12) - 1] + ((month == 2) & leap)
    valid = (form & (month >= 1) & (month <= 12) & (day >= 1) & (day <= days_in)
             & (hour <= 23) & (minute <= 59) & (sec <= 59))
    secs = _days_from_civil(year, month, day) * 86400 + (hour * 3600 + minute * 60 + sec)
    if rows.size == n:
        return secs, valid
    out, ok = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    out[rows], ok[rows] = secs, valid
    return out, ok


def _days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates: a table of month starts for
    1900-2199, H. Hinnant's formula for other years."""
    ym = year * 12 + (month - 1) - _MONTH_TABLE_BASE
    inside = (ym >= 0) & (ym < _MONTH_START.size)
    if inside.all():
        return _MONTH_START[ym] + (day - 1)
    year, month, day = (x.astype(np.int64) for x in (year, month, day))
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    days = era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468
    days[inside] = _MONTH_START[ym[inside]] + day[inside] - 1
    return days


def _month_starts(first_year: int, years: int) -> np.ndarray:
    """Days since 1970-01-01 of the first day of each month from ``first_year``."""
    months = np.arange(years * 12)
    start = np.datetime64(f"{first_year:04d}-01", "M") + months.astype("timedelta64[M]")
    return start.astype("datetime64[D]").astype(np.int64)


_MONTH_TABLE_BASE = 1900 * 12
_MONTH_START = _month_starts(1900, 300)


def _times(text: pa.Array, timezone: str) -> tuple[np.ndarray, np.ndarray]:
    """Epoch seconds (-1 missing) and the rows that are no time."""
    n = len(text)
    out = np.full(n, -1, dtype=np.int64)
    wall, iso = _iso_seconds(text)
    bad = np.zeros(n, dtype=bool)
    if iso.all():
        return _local_to_epoch(wall, timezone), bad
    if iso.any():
        out[iso] = _local_to_epoch(wall[iso], timezone)
    rows = np.flatnonzero(~iso)
    sub = text if rows.size == n else text.take(pa.array(rows))
    epoch = _digits(sub, 12)
    out[rows[epoch]] = _ints(sub.filter(pa.array(epoch)))
    missing = _np(pc.is_in(sub, value_set=_MISSING_TIMES))
    bad[rows[~(epoch | missing)]] = True
    return out, bad


def _local_to_epoch(wall: np.ndarray, timezone: str) -> np.ndarray:
    """Local wall times in ``timezone`` (seconds counted as if UTC) -> epoch seconds: a
    repeated local time is its first occurrence; a skipped one takes the offset in force
    before the jump."""
    if timezone == "UTC":
        return wall
    naive = pa.array(wall, type=pa.timestamp("s"))
    try:
        aware = pc.assume_timezone(naive, timezone, ambiguous="earliest", nonexistent="raise")
        return _np(aware.cast(pa.int64()))
    except pa.ArrowInvalid:
        pass  # some local times fall in a gap: fix those below
    before = pc.assume_timezone(naive, timezone, ambiguous="earliest", nonexistent="earliest")
    after = pc.assume_timezone(naive, timezone, ambiguous="earliest", nonexistent="latest")
    out = _np(after.cast(pa.int64()))
    last = _np(before.cast(pa.int64()))
    gap = last != out  # "earliest" gives the last instant before the gap, "latest" the first
    local = _np(pc.local_timestamp(before.filter(pa.array(gap))).cast(pa.int64()))
    out[gap] = wall[gap] - (local - last[gap])
    return out


def _counts(text: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Counts (CPUs, nodes): -1 empty; a ``K``/``M`` suffix (``convert_num_unit``) is a
    power of 1024. Returns (values, rows that are no count)."""
    n = len(text)
    fast = _try_ints(text)
    if fast is not None:
        return fast, np.zeros(n, dtype=bool)
    out = np.full(n, -1, dtype=np.int64)
    plain = _digits(text)
    out[plain] = _ints(text.filter(plain))
    empty = _np(pc.equal(text, ""))
    rest = np.flatnonzero(~(plain | empty))
    bad = np.zeros(n, dtype=bool)
    if rest.size:
        m = pc.extract_regex(text.take(rest), r"^(?P<n>[0-9]{1,12})(?P<u>[KM])$")
        ok = _np(m.is_valid())
        if ok.any():
            num = _ints(m.field("n").filter(ok))
            scale = np.where(_np(pc.equal(m.field("u").filter(ok), "K")), 1024, 1024**2)
            out[rest[ok]] = num * scale
        bad[rest[~ok]] = True
    return out, bad


def _limits_raw(text: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``TimelimitRaw`` (minutes) -> seconds, -1 for none; (values, bad rows)."""
    out = np.full(len(text), -1, dtype=np.int64)
    digits = _digits(text, 9)
    out[digits] = _ints(text.filter(digits)) * 60
    none = _np(pc.is_in(text, value_set=_NO_LIMIT))
    return out, ~(digits | none)


def _limits_text(text: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """``Timelimit`` in any sbatch/sacct form -> seconds rounded up to a minute, -1 for
    none; (values, bad rows)."""
    n = len(text)
    out = np.full(n, -1, dtype=np.int64)
    rows = np.flatnonzero(~_np(pc.is_in(text, value_set=_NO_LIMIT)))
    bad = np.zeros(n, dtype=bool)
    if rows.size == 0:
        return out, bad
    m = pc.extract_regex(text.take(rows), _LIMIT_RE)
    ok = _np(m.is_valid())
    parts = {}
    for key in "dabc":
        part = m.field(key).filter(ok)
        parts[key + "?"] = _np(pc.greater(pc.utf8_length(part), 0))
        parts[key] = _ints(pc.if_else(parts[key + "?"], part, "0"))
    d, a, b, c = parts["d"], parts["a"], parts["b"], parts["c"]
    secs = np.where(parts["d?"], d * 86400 + a * 3600 + b * 60 + c,
                    np.where(parts["c?"], a * 3600 + b * 60 + c,
                             np.where(parts["b?"], a * 60 + b, a * 60)))
    out[rows[ok]] = (secs + 59) // 60 * 60
    bad[rows[~ok]] = True
    return out, bad


def _memory(text: pa.Array, pattern: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Memory values -> (KB as float64, NaN when empty; form: total / per CPU / per node;
    bad rows)."""
    n = len(text)
    kb = np.full(n, np.nan)
    per = np.full(n, _PER_TOTAL, dtype=np.int8)
    rows = np.flatnonzero(~_np(pc.equal(text, "")))
    bad = np.zeros(n, dtype=bool)
    if rows.size == 0:
        return kb, per, bad
    m = pc.extract_regex(text.take(rows), pattern)
    ok = _np(m.is_valid())
    good = rows[ok]
    num = _np(pc.cast(m.field("num").filter(ok), pa.float64()))
    kb[good] = num * _unit_factor(m.field("unit").filter(ok))
    if "per" in [f.name for f in m.type]:
        form = m.field("per").filter(ok)
        per[good[_np(pc.equal(form, "c"))]] = _PER_CPU
        per[good[_np(pc.equal(form, "n"))]] = _PER_NODE
    bad[rows[~ok]] = True
    return kb, per, bad


def _gpus(tres: pa.Array) -> np.ndarray:
    """Total GPUs of TRES strings: ``gres/gpu=N``, else the sum of ``gres/gpu:TYPE=N``;
    0 without GPUs, -1 for an empty string."""
    out = np.where(_np(pc.equal(tres, "")), -1, 0).astype(np.int64)
    rows = np.flatnonzero(_np(pc.match_substring(tres, "gres/gpu")))
    if rows.size == 0:
        return out
    items = pc.split_pattern(tres.take(rows), ",")
    flat = pc.list_flatten(items)
    parent = _np(pc.list_parent_indices(items))
    m = pc.extract_regex(flat, _GPU_RE)
    ok = _np(m.is_valid())
    count = _ints(m.field("n").filter(ok))
    typed = _np(pc.greater(pc.utf8_length(m.field("type").filter(ok)), 0))
    owner = parent[ok]
    untyped_total = np.full(rows.size, -1, dtype=np.int64)
    untyped_total[owner[~typed]] = count[~typed]
    typed_sum = np.bincount(owner[typed], weights=count[typed], minlength=rows.size)
    out[rows] = np.where(untyped_total >= 0, untyped_total, typed_sum.astype(np.int64))
    return out


def _states(text: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """SWF status of each ``State`` and the rows whose state is unknown."""
    enc = pc.dictionary_encode(text)
    names = _decoded(enc.dictionary)
    codes = _np(enc.indices)
    table = np.array([STATE_STATUS.get(_base_state(s), -2) for s in names] or [-2],
                     dtype=np.int64)
    status = table[codes]
    return status, status == -2


def _decoded(values: pa.Array) -> list[str]:
    """The strings of a column read without a UTF-8 check, bytes that are not UTF-8
    replaced by U+FFFD (such a value is then simply not a known one)."""
    return [v.decode("utf-8", "replace") for v in values.cast(pa.binary()).to_pylist()]


def _base_state(state: str) -> str:
    """``CANCELLED by 1234`` -> ``CANCELLED``; ``CANCELLED+`` -> ``CANCELLED``."""
    words = state.split()
    return words[0].rstrip("+").upper() if words else ""


# --------------------------------------------------------------------------------------
# records -> job rows
# --------------------------------------------------------------------------------------


@dataclass
class _Rows:
    """Job records being turned into jobs: numeric columns, text columns, lines."""

    num: dict[str, np.ndarray]
    txt: dict[str, pa.Array]
    line: np.ndarray

    def __len__(self) -> int:
        return len(self.line)

    def take(self, index: np.ndarray) -> _Rows:
        idx = pa.array(index) if index.dtype != bool else pa.array(np.flatnonzero(index))
        return _Rows({k: v[index] for k, v in self.num.items()},
                     {k: v.take(idx) for k, v in self.txt.items()}, self.line[index])


def _job_records(records: _Records, lines: np.ndarray, layout: _Layout,
                 skipped: dict[str, int]) -> tuple[pa.Table, np.ndarray, int]:
    """The job records, their lines and the number of blank lines: array placeholders
    are counted and dropped, blank lines (every used field empty) dropped (steps are
    gone already)."""
    table = records.table
    _count(skipped, SKIP_STEPS, records.steps)
    ident = table.column("JobID" if layout.has("JobID") else "JobIDRaw")
    holder = _np(pc.match_substring(ident, "["))
    blank = _np(pc.equal(ident, ""))
    if blank.any():
        for name in table.column_names:
            blank &= _np(pc.equal(table.column(name), ""))
    _count(skipped, SKIP_PLACEHOLDERS, int(holder.sum()))
    drop = holder | blank
    if not drop.any():
        return table, lines, 0
    keep = np.flatnonzero(~drop)
    return table.take(pa.array(keep)), lines[keep], int(blank.sum())


def _count(counts: dict[str, int], key: str, n: int) -> None:
    if n:
        counts[key] = counts.get(key, 0) + n


def _column(table: pa.Table, name: str) -> pa.Array | None:
    if name not in table.column_names:
        return None
    col = table.column(name)
    return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()


def _parse(table: pa.Table, lines: np.ndarray, layout: _Layout, timezone: str,
           submit_from: str) -> tuple[_Rows, _Problems, list[str]]:
    """Every used field of the job records, vectorized; unreadable values are flagged."""
    n = table.num_rows
    problems = _Problems(n)
    notes: list[str] = []
    num: dict[str, np.ndarray] = {}

    def col(name: str) -> pa.Array | None:
        return _column(table, name)

    _parse_ids(col, layout, num, problems)
    _parse_times(col, layout, timezone, submit_from, num, problems, notes)
    state = col("State")
    assert state is not None
    num["status"], unknown = _states(state)
    problems.add(unknown, layout.field("State"), state, "unknown job state")
    num["unfinished"] = num["status"] == -1
    _parse_sizes(col, layout, num, problems)
    _parse_node_lists(col, layout, num, problems)
    _parse_limit(col, layout, num, problems)
    _parse_memory(col, layout, num, problems)
    num["req_gpus"] = _parse_gpus(col, n)
    _parse_requests(col, num)
    txt = _texts(col, layout, n)
    return _Rows(num, txt, lines), problems, notes


def _parse_ids(col: _Col, layout: _Layout, num: dict[str, np.ndarray],
               problems: _Problems) -> None:
    """``job_id``, the duplicate key, and heterogeneous components (leader, offset)."""
    raw, jid = col("JobIDRaw"), col("JobID")
    n = len(raw if raw is not None else jid)
    ident = raw if raw is not None else jid
    assert ident is not None
    fast = _try_ints(ident)
    if fast is not None:
        decimal, num["job_id"] = np.ones(n, dtype=bool), fast
    else:
        decimal = _digits(ident, 18)
        num["job_id"] = np.full(n, -1, dtype=np.int64)
        num["job_id"][decimal] = _ints(ident.filter(decimal))
    if raw is not None:
        problems.add(~decimal, layout.field("JobIDRaw"), raw, "not a job id")
        num["key"] = num["job_id"]
    else:
        assert jid is not None
        ok = _np(pc.match_substring_regex(jid, _JOB_ID_RE))
        problems.add(~ok, layout.field("JobID"), jid, "not a job id")
        num["key"] = _np(pc.dictionary_encode(jid).indices).astype(np.int64)
    num["het_leader"] = np.full(n, -1, dtype=np.int64)
    num["het_offset"] = np.full(n, -1, dtype=np.int64)
    if jid is None:
        return
    rows = np.flatnonzero(_np(pc.match_substring(jid, "+")))
    if rows.size:
        m = pc.extract_regex(jid.take(rows), _HET_RE)
        ok = _np(m.is_valid())
        num["het_leader"][rows[ok]] = _ints(m.field("leader").filter(ok))
        num["het_offset"][rows[ok]] = _ints(m.field("offset").filter(ok))
        bad = np.zeros(n, dtype=bool)
        bad[rows[~ok]] = True
        problems.add(bad, layout.field("JobID"), jid, "not a job id")


def _parse_times(col: _Col, layout: _Layout, timezone: str, submit_from: str,
                 num: dict[str, np.ndarray], problems: _Problems, notes: list[str]) -> None:
    """``submit`` (by ``submit_from``), ``eligible``, ``start``, ``end`` as epoch (-1)."""
    what = "not a time (epoch seconds or YYYY-MM-DDTHH:MM:SS)"
    parsed: dict[str, tuple[pa.Array, np.ndarray, np.ndarray]] = {}
    for name in ("Submit", "Eligible", "Start", "End"):
        text = col(name)
        if text is None:
            continue
        if name == "Eligible" and "Submit" in parsed:
            values, bad = _times_like(text, parsed["Submit"], timezone)
        else:
            values, bad = _times(text, timezone)
        parsed[name] = (text, values, bad)
        problems.add(bad, layout.field(name), text, what)
        _beyond_limit(values, layout.field(name), name, problems)
        num[name.lower()] = values
    n = len(num["start"])
    num.setdefault("eligible", np.full(n, -1, dtype=np.int64))
    if submit_from == "eligible":
        orig = num.get("submit", np.full(n, -1, dtype=np.int64))
        fallback = (num["eligible"] == -1) & (orig != -1)
        if fallback.any():
            notes.append(f"sacct: {int(fallback.sum())} jobs without an Eligible time are "
                         "submitted at their Submit time")
        num["submit"] = np.where(fallback, orig, num["eligible"])
        field, text = layout.field("Eligible"), col("Eligible")
    else:
        field, text = layout.field("Submit"), col("Submit")
    assert text is not None
    problems.add(num["submit"] == -1, field, text, "missing submit time")
    start = col("Start")
    assert start is not None
    early = (num["start"] >= 0) & (num["submit"] >= 0) & (num["start"] < num["submit"])

    def before(row: int) -> str:
        wait = int(num["start"][row] - num["submit"][row])
        return (f"Start '{_text_at(start, row)}' is before {field} "
                f"'{_text_at(text, row)}' (a wait of {wait} s)")

    problems.add_message(early, layout.field("Start"), before)


def _beyond_limit(values: np.ndarray, field: str, what: str, problems: _Problems) -> None:
    """Flag the times at or beyond the engine's limit (:mod:`dispatchlab.core.limits`)."""
    far = beyond_limit(values)
    if far.any():
        problems.add_message(far, field, lambda row: str(time_problem(int(values[row]), what)))


def _text_at(values: pa.Array, row: int) -> str:
    """The text of one row (bytes that are not UTF-8 replaced), shortened to 40."""
    raw = values.slice(row, 1).cast(pa.binary())[0].as_py()
    text = raw.decode("utf-8", "replace")
    return text if len(text) <= 40 else text[:37] + "..."


def _times_like(text: pa.Array, ref: tuple[pa.Array, np.ndarray, np.ndarray],
                timezone: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_times` of a column that mostly repeats another (``Eligible`` is usually
    ``Submit``): equal strings take the other's values, the rest are parsed."""
    ref_text, ref_values, ref_bad = ref
    differ = np.flatnonzero(~_np(pc.equal(text, ref_text)))
    values, bad = ref_values.copy(), ref_bad.copy()
    if differ.size:
        values[differ], bad[differ] = _times(text.take(pa.array(differ)), timezone)
    return values, bad


def _parse_sizes(col: _Col, layout: _Layout, num: dict[str, np.ndarray],
                 problems: _Problems) -> None:
    """``alloc_procs``, ``req_procs``, ``nodes`` (``NNodes``), ``req_nodes``."""
    targets = (("alloc_procs", ("AllocCPUS", "NCPUS")), ("req_procs", ("ReqCPUS",)),
               ("nodes", ("NNodes",)), ("req_nodes", ("ReqNodes",)))
    n = len(num["start"])
    for key, names in targets:
        num[key] = np.full(n, -1, dtype=np.int64)
        for name in names:
            text = col(name)
            if text is None:
                continue
            values, bad = _counts(text)
            problems.add(bad, layout.field(name), text, "not a count")
            num[key] = values
            break


def _parse_node_lists(col: _Col, layout: _Layout, num: dict[str, np.ndarray],
                      problems: _Problems) -> None:
    """Check ``NodeList`` as a Slurm host list (:mod:`dispatchlab.platform.hostlist`);
    when the export has no ``NNodes``, ``nodes`` = its number of distinct hosts (-1 for
    none). The lists sacct prints pass one vectorized pattern; only the others (and all
    of them when counting) go through :func:`~dispatchlab.platform.hostlist.hosts`."""
    text = col("NodeList")
    if text is None:
        return
    n = len(text)
    count = col("NNodes") is None
    plain = _np(pc.match_substring_regex(text, _HOSTLIST_RE))
    rows = np.arange(n) if count else np.flatnonzero(~plain)
    if rows.size == 0:
        return
    enc = pc.dictionary_encode(text.take(pa.array(rows)))
    sizes = np.full(len(enc.dictionary), -1, dtype=np.int64)
    errors: dict[int, str] = {}
    for k, value in enumerate(enc.dictionary.to_pylist()):
        try:
            sizes[k] = len(hosts(value))
        except InputError as err:
            errors[k] = err.message
    index = np.full(n, -1, dtype=np.int64)
    index[rows] = _np(enc.indices)
    bad = np.zeros(n, dtype=bool)
    bad[rows] = sizes[index[rows]] < 0
    problems.add_message(bad, layout.field("NodeList"), lambda row: errors[int(index[row])])
    if count:
        size = np.full(n, -1, dtype=np.int64)
        size[rows] = sizes[index[rows]]
        num["nodes"] = np.where(size > 0, size, -1)


def _parse_limit(col: _Col, layout: _Layout, num: dict[str, np.ndarray],
                 problems: _Problems) -> None:
    """``req_time``: ``TimelimitRaw`` (minutes) or ``Timelimit`` (text) in s, -1 none."""
    raw, text = col("TimelimitRaw"), col("Timelimit")
    if raw is not None:
        values, bad = _by_value(raw, _limits_raw)
        problems.add(bad, layout.field("TimelimitRaw"), raw,
                     "not a time limit in minutes (or UNLIMITED, Partition_Limit)")
    elif text is not None:
        values, bad = _by_value(text, _limits_text)
        problems.add(bad, layout.field("Timelimit"), text,
                     "not a time limit ([D-]HH:MM:SS, MM, MM:SS, D-HH, D-HH:MM, UNLIMITED)")
    else:
        values = np.full(len(num["start"]), -1, dtype=np.int64)
    if raw is not None or text is not None:
        _beyond_limit(values, layout.field("TimelimitRaw" if raw is not None else "Timelimit"),
                      "the time limit", problems)
    num["req_time"] = values


def _parse_memory(col: _Col, layout: _Layout, num: dict[str, np.ndarray],
                  problems: _Problems) -> None:
    """``mem_per_cpu`` (KB, float64, NaN unknown) from ``ReqMem``, else ``ReqTRES``."""
    n = len(num["start"])
    kb, per = np.full(n, np.nan), np.full(n, _PER_TOTAL, dtype=np.int8)
    req_mem, tres = col("ReqMem"), col("ReqTRES")
    if req_mem is not None:
        kb, per, bad = _by_value(req_mem, lambda v: _memory(v, _MEM_RE))
        problems.add(bad, layout.field("ReqMem"), req_mem,
                     "not a memory size (NUMBER[K|M|G|T|P][c|n])")
    if tres is not None and np.isnan(kb).any():
        tres_kb, _, _ = _by_value(tres, lambda v: _memory(v, _TRES_MEM_RE))  # NaN: no mem=
        fill = np.isnan(kb)
        kb = np.where(fill, tres_kb, kb)
        per = np.where(fill, _PER_TOTAL, per).astype(np.int8)
    procs = np.where(num["alloc_procs"] > 0, num["alloc_procs"], num["req_procs"])
    nodes = np.where(num["nodes"] > 0, num["nodes"], num["req_nodes"])
    with np.errstate(divide="ignore", invalid="ignore"):
        per_cpu = np.where(per == _PER_CPU, kb,
                           np.where(per == _PER_NODE, kb * nodes / procs, kb / procs))
    unknown = (per != _PER_CPU) & ((procs <= 0) | ((per == _PER_NODE) & (nodes <= 0)))
    per_cpu[unknown] = np.nan
    num["mem_per_cpu"] = per_cpu
    # the job's total request in MB: per CPU x requested CPUs, per node x requested nodes
    req_procs = np.where(num["req_procs"] > 0, num["req_procs"], num["alloc_procs"])
    req_nodes = np.where(num["req_nodes"] > 0, num["req_nodes"], num["nodes"])
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.where(per == _PER_CPU, kb * req_procs,
                         np.where(per == _PER_NODE, kb * req_nodes, kb))
    total[((per == _PER_CPU) & (req_procs <= 0)) | ((per == _PER_NODE) & (req_nodes <= 0))] \
        = np.nan
    num["req_mem_mb"] = np.where(np.isnan(total), -1,
                                 np.ceil(np.nan_to_num(total) / 1024 - 1e-9)).astype(np.int64)


def _parse_gpus(col: _Col, n: int) -> np.ndarray:
    """GPUs from ``ReqTRES`` (``AllocTRES`` when the export has no ``ReqTRES``)."""
    tres = col("ReqTRES")
    tres = col("AllocTRES") if tres is None else tres
    if tres is None:
        return np.full(n, -1, dtype=np.int64)
    return _by_value(tres, lambda v: (_gpus(v),))[0]


def _tres_nodes(tres: pa.Array) -> tuple[np.ndarray]:
    """``node=N`` of TRES strings (-1 without it)."""
    out = np.full(len(tres), -1, dtype=np.int64)
    m = pc.extract_regex(tres, _TRES_NODE_RE)
    ok = _np(m.is_valid())
    if ok.any():
        out[ok] = _ints(m.field("n").filter(ok))
    return (out,)


def _gpu_types(tres: pa.Array) -> tuple[np.ndarray]:
    """The GPU types of TRES strings (``gres/gpu:a100=4`` -> ``a100``; several types
    joined with ``|``, any of them; "" untyped or no GPU)."""
    out = np.full(len(tres), "", dtype=object)
    for k, value in enumerate(_decoded(tres)):  # bytes that are not UTF-8 replaced
        types = [item.split("=", 1)[0][len("gres/gpu:"):] for item in value.split(",")
                 if item.startswith("gres/gpu:") and "=" in item]
        types = [t for t in dict.fromkeys(types) if t]
        out[k] = "|".join(types)
    return (out,)


def _tres_memory_mb(tres: pa.Array) -> tuple[np.ndarray]:
    """``mem=`` of TRES strings in MB, rounded up (-1 without it)."""
    kb, _, _ = _memory(tres, _TRES_MEM_RE)
    return (np.where(np.isnan(kb), -1, np.ceil(np.nan_to_num(kb) / 1024 - 1e-9))
            .astype(np.int64),)


def _parse_requests(col: _Col, num: dict[str, np.ndarray]) -> None:
    """What the request fitting reads besides CPUs and memory per CPU: ``req_nodes``
    (``ReqNodes``, else ``node=`` of ``ReqTRES``), ``alloc_gpus`` and ``alloc_mem_mb``
    (``AllocTRES``), ``gpu_type`` (typed GPUs of ``ReqTRES``, else ``AllocTRES``), as
    arrays in ``num`` (``gpu_type`` an object array)."""
    n = len(num["start"])
    req, alloc = col("ReqTRES"), col("AllocTRES")
    if req is not None:
        tres_nodes = _by_value(req, _tres_nodes)[0]
        num["req_nodes"] = np.where(num["req_nodes"] > 0, num["req_nodes"], tres_nodes)
    if alloc is not None:
        num["alloc_gpus"] = _by_value(alloc, lambda v: (_gpus(v),))[0]
        num["alloc_mem_mb"] = _by_value(alloc, _tres_memory_mb)[0]
    else:
        num["alloc_gpus"] = np.full(n, -1, dtype=np.int64)
        num["alloc_mem_mb"] = np.full(n, -1, dtype=np.int64)
    typed = req if req is not None else alloc
    num["gpu_type"] = (_by_value(typed, _gpu_types)[0] if typed is not None
                       else np.full(n, "", dtype=object))


def _unit_factor(units: pa.Array) -> np.ndarray:
    """KB per unit of each memory unit letter (no letter: MB)."""
    factor = np.full(len(units), 1024.0)
    for u, kb in _KB.items():
        if u not in ("", "M"):
            factor[_np(pc.equal(units, u))] = kb
    return factor


def _texts(col: _Col, layout: _Layout, n: int) -> dict[str, pa.Array]:
    """The text columns: job reference, names, account, QOS, node list."""
    def first(*names: str) -> pa.Array:
        for name in names:
            values = col(name)
            if values is not None:
                return values
        return _empty_strings(n)

    return {
        "job_ref": first("JobID", "JobIDRaw"), "user": first("User", "UID"),
        "group": first("Group", "GID"), "queue": first("Partition"), "app": first("JobName"),
        "account": first("Account"), "qos": first("QOS"), "alloc_nodes": first("NodeList"),
        "features": first("Constraints"),
    }


# --------------------------------------------------------------------------------------
# duplicates, heterogeneous jobs, selection
# --------------------------------------------------------------------------------------


def _dedupe(rows: _Rows, skipped: dict[str, int]) -> _Rows:
    """Keep the last record of each job id (file order); count the earlier ones."""
    key = rows.num["key"]
    if key.size < 2 or bool(np.all(key[1:] > key[:-1])):
        return rows
    order = np.argsort(key, kind="stable")
    k = key[order]
    last = np.ones(len(k), dtype=bool)
    last[:-1] = k[:-1] != k[1:]
    if last.all():
        return rows
    _count(skipped, SKIP_DUPLICATES, int((~last).sum()))
    return rows.take(np.sort(order[last]))


def _merge_het(rows: _Rows, skipped: dict[str, int]) -> _Rows:
    """Merge the components of each heterogeneous job into one row (module docstring)."""
    het = np.flatnonzero(rows.num["het_leader"] >= 0)
    if het.size == 0:
        return rows
    num = rows.num
    order = het[np.lexsort((num["het_offset"][het], num["het_leader"][het]))]
    leader = num["het_leader"][order]
    starts = np.flatnonzero(np.r_[True, leader[1:] != leader[:-1]])
    merged = _merged_numbers(num, order, starts)
    merged_line = np.minimum.reduceat(rows.line[order], starts)
    heads = order[starts]
    txt = {k: v.take(pa.array(heads)) for k, v in rows.txt.items()}
    txt["job_ref"] = pa.array([f"{x}+" for x in leader[starts].tolist()], type=pa.string())
    nodes = rows.txt["alloc_nodes"].take(pa.array(order)).to_pylist()
    bounds = [*starts.tolist(), len(order)]
    txt["alloc_nodes"] = pa.array([",".join(x for x in nodes[a:b] if x)
                                   for a, b in pairwise(bounds)], type=pa.string())
    _count(skipped, SKIP_HET, int(order.size - starts.size))
    rest = rows.take(np.setdiff1d(np.arange(len(rows)), het))
    out = _Rows({k: np.concatenate([rest.num[k], merged[k]]) for k in num},
                {k: pa.concat_arrays([rest.txt[k], txt[k]]) for k in rows.txt},
                np.concatenate([rest.line, merged_line]))
    return out.take(np.argsort(out.line, kind="stable"))


def _merged_numbers(num: dict[str, np.ndarray], order: np.ndarray,
                    starts: np.ndarray) -> dict[str, np.ndarray]:
    """Numeric columns of the merged rows (``order`` groups components by job)."""
    g = {k: v[order] for k, v in num.items()}
    out = {k: v[starts].copy() for k, v in g.items()}  # first component by default
    for key in ("submit", "eligible"):
        known = np.where(g[key] >= 0, g[key], np.iinfo(np.int64).max)
        first = np.minimum.reduceat(known, starts)
        out[key] = np.where(first == np.iinfo(np.int64).max, -1, first)

    def any_missing(key: str) -> np.ndarray:
        return np.add.reduceat((g[key] < 0).astype(np.int64), starts) > 0

    out["start"] = np.where(any_missing("start"), -1, np.minimum.reduceat(g["start"], starts))
    out["end"] = np.where(any_missing("end"), -1, np.maximum.reduceat(g["end"], starts))
    out["req_time"] = np.where(any_missing("req_time"), -1,
                               np.maximum.reduceat(g["req_time"], starts))
    for key in ("alloc_procs", "req_procs", "nodes", "req_nodes", "req_gpus", "alloc_gpus",
                "req_mem_mb", "alloc_mem_mb"):
        known = np.add.reduceat((g[key] >= 0).astype(np.int64), starts)
        total = np.add.reduceat(np.maximum(g[key], 0), starts)
        out[key] = np.where(known > 0, total, -1)
    procs = np.where(g["alloc_procs"] > 0, g["alloc_procs"], g["req_procs"]).astype(float)
    mem_total = np.add.reduceat(g["mem_per_cpu"] * procs, starts)
    procs_total = np.add.reduceat(procs, starts)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["mem_per_cpu"] = np.where(procs_total > 0, mem_total / procs_total, np.nan)
    rank = np.select([g["status"] == -1, g["status"] == 0, g["status"] == 5], [0, 1, 2], 3)
    best = np.minimum.reduceat(rank, starts)
    out["status"] = np.array([-1, 0, 5, 1], dtype=np.int64)[best]
    out["unfinished"] = np.add.reduceat(g["unfinished"].astype(np.int64), starts) > 0
    return out


@dataclass(frozen=True)
class _Selection:
    unstarted: str
    running: str


def _select(rows: _Rows, sel: _Selection, skipped: dict[str, int],
            notes: list[str]) -> _Rows:
    """Apply the ``unstarted`` and ``running`` rules (module docstring)."""
    num = rows.num
    started, ended = num["start"] >= 0, num["end"] >= 0
    groups = {
        SKIP_CANCELLED: ~started & ended,
        SKIP_PENDING: ~started & ~ended,
        SKIP_RUNNING: started & (~ended | num["unfinished"]),
    }
    drop = np.zeros(len(rows), dtype=bool)
    for reason, mask in groups.items():
        count = int(mask.sum())
        rule = sel.running if reason == SKIP_RUNNING else sel.unstarted
        if rule == "drop":
            _count(skipped, reason, count)
            drop |= mask
        elif count:
            notes.append(f"sacct: {count} jobs {reason} kept")
    return rows.take(~drop) if drop.any() else rows


# --------------------------------------------------------------------------------------
# the table
# --------------------------------------------------------------------------------------


def _codes(values: pa.Array) -> tuple[np.ndarray, list[str]]:
    """0-based codes in order of first appearance ("" -> -1) and the name table."""
    enc = pc.dictionary_encode(values)
    names = enc.dictionary.to_pylist()
    codes = _np(enc.indices).astype(np.int64)
    if "" in names:
        p = names.index("")
        codes = np.where(codes == p, -1, np.where(codes > p, codes - 1, codes))
        names.pop(p)
    return codes, names


def _strings(values: pa.Array, *, few: bool = False) -> np.ndarray:
    """A text column as a numpy object array of str; ``few``: the column has few distinct
    values (account, QOS), whose str objects are then made once each."""
    if few:
        enc = pc.dictionary_encode(values)
        names = np.array(enc.dictionary.to_pylist() or [""], dtype=object)
        return names[_np(enc.indices)]
    out = values.to_numpy(zero_copy_only=False)
    return out if out.dtype == object else out.astype(object)


def _columns(rows: _Rows, origin: int) -> dict[str, np.ndarray]:
    """The 18 SWF columns, ``line`` and the extra columns, times re-based to ``origin``."""
    num = rows.num
    n = len(rows)
    missing = ("avg_cpu", "used_mem", "partition", "prev_job", "think_time")
    cols = {name: np.full(n, -1, dtype=np.float64 if name in FLOAT_FIELDS else np.int64)
            for name in missing}
    started, ended = num["start"] >= 0, num["end"] >= 0
    cols["job_id"] = num["job_id"]
    cols["submit"] = num["submit"] - origin
    cols["wait"] = np.where(started, num["start"] - num["submit"], -1)
    cols["run"] = np.where(started & ended, num["end"] - num["start"], -1)
    cols["alloc_procs"] = np.where(started, num["alloc_procs"], -1)
    cols["req_procs"] = num["req_procs"]
    cols["req_time"] = num["req_time"]
    mem = num["mem_per_cpu"]
    cols["req_mem"] = np.where(np.isnan(mem), -1, np.rint(np.nan_to_num(mem))).astype(np.int64)
    cols["status"] = np.where(started & (~ended | num["unfinished"]), -1, num["status"])
    cols["line"] = rows.line
    cols["eligible"] = np.where(num["eligible"] >= 0, num["eligible"] - origin, -1)
    cols["req_gpus"] = num["req_gpus"]
    cols["nodes_used"] = np.where(started, num["nodes"], -1)
    cols["req_nodes"] = num["req_nodes"]
    cols["req_mem_mb"] = num["req_mem_mb"]
    cols["alloc_gpus"] = np.where(started, num["alloc_gpus"], -1)
    cols["alloc_mem_mb"] = np.where(started, num["alloc_mem_mb"], -1)
    cols["gpu_type"] = num["gpu_type"]
    cols["exclusive"] = np.full(n, -1, dtype=np.int64)
    return cols


def _node_lists(rows: _Rows) -> pa.Array:
    """``NodeList`` of the jobs that started ("" otherwise, and for ``None assigned``)."""
    nodes = rows.txt["alloc_nodes"]
    none = pc.or_(pa.array(rows.num["start"] < 0), pc.equal(nodes, "None assigned"))
    return pc.if_else(none, "", nodes) if pc.any(none).as_py() else nodes


def _finish(rows: _Rows, info: TraceInfo) -> JobTable:
    """Re-base, sort by submit (stable), code the names, build the table."""
    origin = int(rows.num["submit"].min())
    order = np.argsort(rows.num["submit"], kind="stable")
    if np.any(order != np.arange(len(order))):
        rows = rows.take(order)
    cols = _columns(rows, origin)
    codes: dict[str, list[str]] = {}
    for name in ("user", "group", "queue", "app"):
        cols[name], codes[name] = _codes(rows.txt[name])
    for name in ("job_ref", "account", "qos"):
        cols[name] = _strings(rows.txt[name], few=name != "job_ref")
    cols["alloc_nodes"] = _strings(_node_lists(rows))
    cols["features"] = _strings(rows.txt["features"], few=True)
    extras = ("job_ref", "account", "qos", "eligible", "req_gpus", "nodes_used", "alloc_nodes",
              "req_nodes", "req_mem_mb", "alloc_gpus", "alloc_mem_mb", "gpu_type", "features",
              "exclusive")
    cols = {k: cols[k] for k in (*SWF_FIELDS, "line", *extras)}
    info.unix_start_time = origin
    info.header["UnixStartTime"] = str(origin)
    info.codes = codes
    return finish_table(cols, None, info)


def read_sacct(
    path: str | Path,
    *,
    lenient: bool = False,
    columns: Sequence[str] | None = None,
    submit_from: str = "submit",
    timezone: str = "UTC",
    unstarted: str = "drop",
    running: str = "drop",
) -> JobTable:
    """Read a ``sacct --parsable2`` export into a :class:`JobTable` (module docstring).

    ``columns``: the ``--format`` names in order when the file has no header line.
    ``submit_from``: ``"submit"`` (the ``Submit`` time) or ``"eligible"`` (the time the
    job became eligible: begin time and dependencies satisfied). ``timezone``: the IANA
    zone of ``YYYY-MM-DDTHH:MM:SS`` times. ``unstarted`` / ``running``: ``"drop"``
    (default) or ``"keep"`` jobs that never started / had not ended at export time.
    ``lenient``: skip malformed records (counted) instead of raising.

    Times are integer seconds from the first kept submission (t = 0; its epoch is in
    ``info.unix_start_time``); rows are ordered by submit time (stable). Raises
    :class:`InputError` naming the file, line and column for malformed input, and the
    option for a bad option value.
    """
    for name, value in (("submit_from", submit_from), ("unstarted", unstarted),
                        ("running", running)):
        _check_choice(name, value)
    _check_timezone(timezone)
    layout = _layout(Path(path), columns)
    _require(layout, submit_from)
    rows, counts = _job_rows(layout, lenient=lenient, timezone=timezone,
                             submit_from=submit_from)
    rows = _merge_het(_dedupe(rows, counts.skipped), counts.skipped)
    rows = _select(rows, _Selection(unstarted, running), counts.skipped, counts.notes)
    if len(rows) == 0:
        raise _no_jobs(layout, counts)
    header = {"TimeZone": timezone}
    if counts.notes:
        header["Note"] = "\n".join(counts.notes)
    info = TraceInfo(source=layout.path, header=header, lines_read=counts.lines_read,
                     malformed_skipped=counts.malformed)
    info.format = "sacct"
    info.skipped = counts.skipped
    return _finish(rows, info)


@dataclass
class _Counts:
    """What reading did besides the jobs: records read, malformed records skipped,
    records left out by rule (by reason) and notes for the header."""

    lines_read: int
    malformed: int
    skipped: dict[str, int]
    notes: list[str]


def _job_rows(layout: _Layout, *, lenient: bool, timezone: str,
              submit_from: str) -> tuple[_Rows, _Counts]:
    """Read the file and parse the job records; the first problem raises unless
    ``lenient``, which drops the records with problems (counted)."""
    records = _read_table(layout)
    located = _locate(layout, records.bad) if records.bad else []
    lines = _record_lines(layout, records.total, [line for line, _ in located])
    lines = lines[records.position]
    counts = _Counts(records.total + len(records.bad), len(located), {}, [])
    table, lines, blank = _job_records(records, lines, layout, counts.skipped)
    counts.lines_read -= blank
    del records
    rows, problems, counts.notes = _parse(table, lines, layout, timezone, submit_from)
    del table
    if not lenient:
        _raise_first(layout, located, problems, lines)
    if problems.first is not None:
        counts.malformed += int(problems.bad.sum())
        rows = rows.take(~problems.bad)
    return rows, counts


def _no_jobs(layout: _Layout, counts: _Counts) -> InputError:
    told = ", ".join(f"{v} {k}" for k, v in counts.skipped.items())
    return InputError("no jobs: the export has no job record to keep"
                      + (f" ({told})" if told else "")
                      + (f" and {counts.malformed} malformed records skipped"
                         if counts.malformed else ""), file=layout.path)

