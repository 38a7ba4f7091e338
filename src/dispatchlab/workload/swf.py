"""Read and write the Standard Workload Format (SWF), plain or gzip-compressed.

Reading (:func:`read_swf`)
--------------------------
* A job line has the 18 SWF fields separated by whitespace (spaces, tabs; a ``\\r``
  before the newline is accepted). Lines whose first non-blank character is ``;``
  are comments; blank lines are ignored. Line numbers are 1-based and count every
  line of the (decompressed) file.
* Every field is read as int64 except fields 6 and 7 (average CPU time, used
  memory), which are float64 because PWA logs write fractions there (e.g. ``0.03``
  or ``142.00`` in field 6 of CTC, HPC2N, SDSC-BLUE...). ``-1`` means *missing* and
  is legal in every field.
* Decimals in integer fields. In the public traces listed in the documentation only field
  6 carries decimals (CTC, HPC2N, LANL-CM5, OSC, SDSC-BLUE/DS/Par/SP2, Sandia-Ross),
  plus the non-SWF 21st field of the Alea file. The rule is:

  - a value with a decimal point that is integral (``3600.00``) is read as that
    integer, in any field;
  - a non-integral value in a field the simulation uses (``SIM_FIELDS``: field 2
    submit, 4 run, 5 allocated processors, 8 requested processors, 9 requested
    time) is an error naming the file, line and field (a malformed line: skipped
    and counted with ``lenient=True``);
  - a non-integral value in another integer field (job number, wait time,
    requested memory, status, user, ...) is rounded to the nearest integer (ties
    to even) and counted per column in ``TraceInfo.rounded``;
  - magnitudes of 2**53 or more in an integer field are an error;
  - a submit, run or requested time at or beyond the engine's time limit
    (:data:`dispatchlab.core.limits.TIME_LIMIT`, 2**42 s) is an error (a malformed
    line).

* A line with a wrong number of fields, or a token that is not a number, is
  *structurally malformed*: :class:`~dispatchlab.core.errors.InputError` naming the
  file, the 1-based line and the field (``field 4 (run)``), unless
  ``lenient=True``, which skips the line and counts it in
  ``TraceInfo.malformed_skipped``. ``TraceInfo.lines_read`` counts every job line
  (neither blank nor a comment), malformed ones included: the jobs read plus
  ``malformed_skipped``. Files with more than 18 fields per line
  (the Alea ``wagap-2013`` file has 21, with non-numeric extras) are read with
  ``extra_fields="ignore"``, which drops every field after the 18th unparsed.
* Only the fields the simulation uses are validated further: a job that has
  processors (``units > 0``) and a run time (``run >= 0``) must have a submit
  time ``>= 0`` (a missing submit, -1, is an error naming the line). Lines
  where submit, processors and run time are all missing (LLNL-Thunder has 1,190
  such records of jobs that never ran) are kept and removed by the default
  cleaning (``units <= 0``). A requested time below -1 is an error.
* Derived columns: ``units`` = field 8 (requested processors), or field 5
  (allocated processors) when field 8 is -1 (both -1 gives -1, which cleaning
  drops). ``requested_time`` = field 9; where field 9 is -1 it is the fallback
  value, taken, in this order, from a ``; DispatchlabEstimateFallback:`` header
  line (written by :func:`write_swf`), the header's ``MaxRuntime`` (if > 0), the
  largest requested time over all lines of the file (before any cleaning), or,
  when no line has a requested time, the largest run time. The number of jobs
  concerned, the source and the value are recorded in :class:`TraceInfo`.
* Jobs are ordered by submit time with a **stable** sort, so jobs submitted at
  the same second keep their file order. Times are kept exactly as in the file
  (no re-basing). ``line`` holds the 1-based source line of each job.
* Header comments ``; Key: value`` are stored raw in ``TraceInfo.header`` (a key
  that appears several times, like ``Queue`` or ``Note``, has its values joined
  with newlines); the integer facts (MaxJobs, MaxRecords, MaxProcs, MaxNodes,
  MaxRuntime, UnixStartTime) are the leading integer of the value
  (``1664 (72, 1368, 224)`` -> 1664; ``N/A`` -> ``None``). A key starts with a
  capital letter and is followed by ``:`` and a blank, so continuation lines such
  as ``;      http://...`` are not keys. All comment lines are also kept verbatim
  in ``TraceInfo.header_lines``.

A clean file (every job line 18 plain decimal numbers, or more with
``extra_fields="ignore"``, nothing skipped, rounded or refused: every public trace) is
parsed by the compiled core (``dispatchlab._core.SwfParser``, dispatchlab-core's
``swf`` module: the text, decompressed here by zlib, in, the columns out, numpy arrays
over its buffers), which gives exactly the table described here; it hands any other
file back, and the Python parser below, the reference, reads it with its skips,
roundings and errors.

Parsing is vectorized: the decompressed text is processed in chunks of whole
lines (``chunk_bytes``); token boundaries and field counts are found with numpy,
and the numbers are converted by ``numpy.fromstring`` as int64 (decimal points
are removed and their scale applied afterwards, which gives the correctly rounded
float64 for fields 6 and 7). Chunks containing exponents or very long tokens use
a float64 path. No Python object is created per line except for comment lines
and, when a line is malformed, to locate the offending field.

Writing (:func:`write_swf`)
---------------------------
The original comment lines are written first, then ``; Note: written by
dispatchlab`` (and a ``DispatchlabEstimateFallback`` line when some jobs have no
requested time, so that reading the file back gives the same
``requested_time``), then one line per job with the 18 fields separated by single
spaces. Fields 6 and 7 are written as integers when integral, otherwise with the
shortest decimal representation that reads back to the same float64. Reading the
written file gives back the same columns, except ``line`` which then refers to
the new file. The file is gzip-compressed when its name ends with ``.gz``.
"""

from __future__ import annotations

import gzip
import queue
import re
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Literal, NamedTuple

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.limits import beyond_limit, time_problem
from dispatchlab.workload.jobs import ALL_FIELDS, FLOAT_FIELDS, SWF_FIELDS, JobTable, TraceInfo

try:  # the compiled core: its SWF parser is read_swf's fast path (_read_native)
    from dispatchlab import _core
except ImportError:  # not built: the reference reader reads every file
    _core = None

__all__ = [
    "CHUNK_BYTES",
    "HEADER_INT_KEYS",
    "N_FIELDS",
    "SIM_FIELDS",
    "field_label",
    "leading_int",
    "parse_header",
    "read_swf",
    "write_swf",
]

#: Number of fields of a strict SWF job line.
N_FIELDS = 18
#: SWF fields the simulation uses; a non-integral value there is an error.
SIM_FIELDS: frozenset[str] = frozenset({"submit", "run", "alloc_procs", "req_procs", "req_time"})
#: Bytes of decompressed text parsed at a time.
CHUNK_BYTES = 1 << 20
#: Bytes of decompressed text the compiled parser takes at a time.
NATIVE_BLOCK_BYTES = 1 << 20
#: TraceInfo attribute -> SWF header key holding an integer fact.
HEADER_INT_KEYS: dict[str, str] = {
    "max_jobs": "MaxJobs",
    "max_records": "MaxRecords",
    "max_procs": "MaxProcs",
    "max_nodes": "MaxNodes",
    "max_runtime": "MaxRuntime",
    "unix_start_time": "UnixStartTime",
}
#: Header key written by :func:`write_swf` to record the requested-time fallback.
FALLBACK_KEY = "DispatchlabEstimateFallback"
WRITTEN_NOTE = "; Note: written by dispatchlab"
_REBASE_NOTE = "; Note: dispatchlab re-based the times:"

ExtraFields = Literal["error", "ignore"]

_FLOAT_COLS = tuple(i for i, name in enumerate(SWF_FIELDS) if name in FLOAT_FIELDS)
_EXACT = float(2**53)
_EXACT_INT = 2**53
_IDX = {name: i for i, name in enumerate(SWF_FIELDS)}
_SIM_IDX = frozenset(_IDX[name] for name in SIM_FIELDS)
#: the time fields the engine reads (field, what a message calls it): refused at or
#: beyond :data:`dispatchlab.core.limits.TIME_LIMIT`
_TIME_FIELDS = (("submit", "submit time"), ("run", "run time"), ("req_time", "requested time"))

# Byte classes. Whitespace is what numpy.fromstring(sep=" ") skips (C isspace).
_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True
_ALLOWED = _WS.copy()
_ALLOWED[ord("0") : ord("9") + 1] = True
for _c in b"+-.eE":
    _ALLOWED[_c] = True
_NL, _SEMI, _DOT, _SPACE = 10, 59, 46, 32

_KEY_RE = re.compile(r"^\s*;\s*([A-Z][A-Za-z0-9]*):(?:\s(.*))?$")
_INT_RE = re.compile(r"\s*([+-]?\d+)")
_OWN_LINE_RE = re.compile(
    rf"^;\s*({re.escape(FALLBACK_KEY)}:|Note: written by dispatchlab|"
    rf"Note: dispatchlab re-based the times:)"
)


def field_label(index: int) -> str:
    """``"4 (run)"`` for the 0-based field ``index`` 3 (just the number past 18)."""
    if index < N_FIELDS:
        return f"{index + 1} ({SWF_FIELDS[index]})"
    return str(index + 1)


def leading_int(value: str | None) -> int | None:
    """The integer a header value starts with (``"1664 (72, 1368)"`` -> 1664), else None."""
    if value is None:
        return None
    m = _INT_RE.match(value)
    return int(m.group(1)) if m else None


def parse_header(lines: Sequence[str]) -> dict[str, str]:
    """``; Key: value`` comment lines -> {key: raw value}; repeated keys join with newlines.

    Comment lines without a key (continuations, blank ``;`` lines, rulers) are ignored.
    """
    header: dict[str, str] = {}
    for line in lines:
        m = _KEY_RE.match(line)
        if m is None:
            continue
        key, value = m.group(1), (m.group(2) or "").strip()
        header[key] = f"{header[key]}\n{value}" if key in header else value
    return header


def header_facts(header: dict[str, str]) -> dict[str, int | None]:
    """The integer facts of a header, as TraceInfo attribute -> value (keys case-insensitive)."""
    lower = {k.lower(): v for k, v in header.items()}
    return {attr: leading_int(lower.get(key.lower())) for attr, key in HEADER_INT_KEYS.items()}


# --------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------


def _open_binary(path: Path) -> IO[bytes]:
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.is_dir():
        raise InputError("is a directory, not a trace file", file=str(path))
    try:
        with open(path, "rb") as fh:
            magic = fh.read(2)
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", file=str(path)) from exc
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if path.name.endswith(".gz"):
        raise InputError("not a gzip file (the name ends with .gz)", file=str(path))
    return open(path, "rb")


def _decompressed_size(path: Path, fh: IO[bytes]) -> int:
    """The size of the text (gzip: the trailer's ISIZE, i.e. modulo 4 GiB; 0 if unknown)."""
    try:
        size = path.stat().st_size
        if not isinstance(fh, gzip.GzipFile):
            return size
        if size < 18:
            return 0
        with open(path, "rb") as raw:
            raw.seek(-4, 2)
            return int.from_bytes(raw.read(4), "little")
    except OSError:
        return 0


def _iter_chunks(fh: IO[bytes], chunk_bytes: int) -> Iterator[bytes]:
    """Blocks of whole lines, each ending with a newline."""
    rest = b""
    while True:
        block = fh.read(chunk_bytes)
        if not block:
            break
        if rest:
            block = rest + block
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            rest = block
            continue
        rest = block[cut:]
        yield block[:cut] if cut < len(block) else block
    if rest:
        yield rest + b"\n"


def _blank(buf: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
    """Overwrite the disjoint byte ranges [a, b) of ``buf`` with spaces."""
    if a.size == 0:
        return
    delta = np.zeros(buf.size + 1, dtype=np.int8)
    np.add.at(delta, a, 1)
    np.add.at(delta, b, -1)
    buf[np.cumsum(delta[:-1], dtype=np.int8).view(bool)] = _SPACE


class _Tokens(NamedTuple):
    """One chunk cut into lines and tokens (byte offsets into ``buf``)."""

    buf: np.ndarray  # the chunk's bytes, a copy: rejected lines get blanked in it
    starts: np.ndarray  # first byte of each line
    nl: np.ndarray  # the newline ending each line
    tok_s: np.ndarray  # first byte of each token
    tok_e: np.ndarray  # one past the last byte of each token
    ftok: np.ndarray  # first token of each line
    ntok: np.ndarray  # tokens of each line


def _tokenize(data: bytes) -> _Tokens:
    """Cut a block of whole lines into lines and whitespace-separated tokens."""
    buf = np.frombuffer(data, dtype=np.uint8).copy()
    nl = np.flatnonzero(buf == _NL)
    starts = np.empty_like(nl)
    starts[:1] = 0
    starts[1:] = nl[:-1] + 1
    # token boundaries: a token starts at a non-blank byte after a blank one
    ws = _WS[buf]
    mark = ~ws
    mark[1:] &= ws[:-1]
    tok_s = np.flatnonzero(mark)
    mark = ~ws
    mark[:-1] &= ws[1:]
    tok_e = np.flatnonzero(mark) + 1
    del mark, ws
    ftok = np.searchsorted(tok_s, starts)  # first token of each line
    ntok = np.diff(ftok, append=tok_s.size)  # tokens per line
    return _Tokens(buf, starts, nl, tok_s, tok_e, ftok, ntok)


def _needs_float(tk: _Tokens, job: np.ndarray, bad: np.ndarray) -> bool:
    """Whether the chunk's numbers must be parsed as float64 instead of int64: a token
    with an exponent, or a token of more than 18 characters among the fields of a good
    job line."""
    buf = tk.buf
    if np.any((buf == ord("e")) | (buf == ord("E"))):
        return True
    long_tok = np.flatnonzero(tk.tok_e - tk.tok_s > 18)
    if not long_tok.size:
        return False
    lines = np.searchsorted(tk.nl, tk.tok_s[long_tok])
    inside = job[lines] & ~bad[lines] & (long_tok - tk.ftok[lines] < N_FIELDS)
    return bool(inside.any())


class _Parser:
    """Accumulates the columns of an SWF file fed chunk by chunk."""

    def __init__(self, path: str, *, lenient: bool, ignore_extra: bool, size_hint: int = 0) -> None:
        self.path = path
        self.lenient = lenient
        self.ignore_extra = ignore_extra
        # Output columns are preallocated from an estimate of the number of rows
        # (decompressed size x rows per byte seen so far) and grown when needed:
        # appending chunk pieces and concatenating them at the end fragments the heap
        # and nearly doubles the peak RSS.
        self.size_hint = size_hint
        self.bytes_seen = 0
        self.n = 0
        self.out: list[np.ndarray] = []  # 18 SWF columns + line
        self.comments: list[str] = []
        self.skipped = 0
        self.rounded: dict[str, int] = {}
        self.lines_seen = 0
        self.records = 0  # job lines (not blank, not comments), malformed ones included

    # -- helpers ---------------------------------------------------------------------

    def _fail(self, base: int, problems: list[tuple[int, int, str]]) -> None:
        i, f, msg = min(problems, key=lambda p: (p[0], p[1]))
        raise InputError(msg, file=self.path, line=base + i + 1, field=field_label(f))

    @staticmethod
    def _token(data: bytes, tok_s: np.ndarray, tok_e: np.ndarray, t: int) -> str:
        text = data[int(tok_s[t]) : int(tok_e[t])].decode("utf-8", "replace")
        return text if len(text) <= 40 else text[:37] + "..."

    @staticmethod
    def _locate(
        data: bytes, starts: np.ndarray, nl: np.ndarray, lines: np.ndarray
    ) -> list[tuple[int, int, str]]:
        """Slow path, only after numpy refused a chunk: the first bad token of each line."""
        found: list[tuple[int, int, str]] = []
        for i in lines.tolist():
            for j, tok in enumerate(data[int(starts[i]) : int(nl[i])].split()[:N_FIELDS]):
                try:
                    float(tok)
                except ValueError:
                    found.append((i, j, f"not a number: '{tok.decode('utf-8', 'replace')}'"))
                    break
        return found

    # -- one chunk -------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Parse a block of whole lines (``data`` ends with a newline).

        The steps: cut the block into lines and tokens (:func:`_tokenize`); keep the
        comments and find the job lines (:meth:`_job_lines`); refuse lines with the
        wrong number of fields (:meth:`_check_field_counts`) and tokens that cannot be
        numbers (:meth:`_reject_non_numbers`); parse every job line's numbers at once
        (:meth:`_parse_numbers`), as floats (:meth:`_float_columns`) when a token has an
        exponent or is long, else as integers with the decimal points handled
        (:meth:`_int_columns`); check the values the simulation relies on
        (:meth:`_check_sim_values`); report the problems (an :class:`InputError`
        unless lenient) and store the good rows (:meth:`_store`). A rejected line is
        blanked in the byte buffer, so that the numbers of the others parse."""
        base = self.lines_seen
        self.bytes_seen += len(data)
        tk = _tokenize(data)
        self.lines_seen += tk.nl.size
        job, comment = self._job_lines(data, tk)
        bad = np.zeros(tk.nl.size, dtype=bool)
        problems: list[tuple[int, int, str]] = []
        self._check_field_counts(tk, job, comment, bad, problems)

        def reject(lines: np.ndarray) -> None:
            lines = np.unique(lines)
            lines = lines[~bad[lines]]
            bad[lines] = True
            _blank(tk.buf, tk.starts[lines], tk.nl[lines])

        dots, dtok = self._reject_non_numbers(data, tk, problems, reject)
        slow = _needs_float(tk, job, bad)
        vals, keep, kl = self._parse_numbers(data, tk, job, bad, problems, reject, slow,
                                             dots, base)
        nk = kl.size
        if nk == 0:
            if problems and not self.lenient:
                self._fail(base, problems)
            self.skipped += int(bad.sum())
            return

        mat = vals.reshape(nk, N_FIELDS)
        del vals
        bad_rows = np.zeros(nk, dtype=bool)

        def tok_text(rows: np.ndarray, j: int) -> str:
            t = int(tk.ftok[kl[rows[0]]]) + j
            return self._token(data, tk.tok_s, tk.tok_e, t)

        if slow:
            cols = self._float_columns(mat, kl, bad_rows, problems, tok_text)
        else:
            cols = self._int_columns(mat, tk, keep, kl, dots, dtok, bad_rows, problems,
                                     tok_text)
        del mat
        self._check_sim_values(cols, kl, bad_rows, problems)

        if problems and not self.lenient:
            self._fail(base, problems)
        self.skipped += int(bad.sum()) + int(bad_rows.sum())
        cols.append(kl + (base + 1))
        self._store(cols, bad_rows)

    # -- the steps of one chunk --------------------------------------------------------

    def _job_lines(self, data: bytes, tk: _Tokens) -> tuple[np.ndarray, np.ndarray]:
        """Per line of the chunk: whether it is a job line (not blank, not a comment)
        and whether it is a comment (masks). Keeps the comments' text and counts the
        job lines in ``records``."""
        has = tk.ntok > 0
        first = np.zeros(tk.nl.size, dtype=np.uint8)
        first[has] = tk.buf[tk.tok_s[tk.ftok[has]]]
        comment = first == _SEMI
        job = has & ~comment
        self.records += int(np.count_nonzero(job))
        for i in np.flatnonzero(comment).tolist():
            text = data[int(tk.starts[i]) : int(tk.nl[i])].decode("utf-8", "replace")
            self.comments.append(text.rstrip("\r"))
        return job, comment

    def _check_field_counts(self, tk: _Tokens, job: np.ndarray, comment: np.ndarray,
                            bad: np.ndarray, problems: list[tuple[int, int, str]]) -> None:
        """Job lines with fewer than :data:`N_FIELDS` fields are bad, and so are lines
        with more unless ``ignore_extra`` (then their extra fields are blanked); the
        comment and bad lines are blanked in ``tk.buf`` (a problem per kind: its first
        line)."""
        ntok, starts, nl = tk.ntok, tk.starts, tk.nl
        few = job & (ntok < N_FIELDS)
        many = job & (ntok > N_FIELDS)
        if few.any():
            i = int(np.argmax(few))
            n = int(ntok[i])
            problems.append((i, n, f"missing: the line has {n} fields, SWF has {N_FIELDS}"))
            bad |= few
        if many.any() and not self.ignore_extra:
            i = int(np.argmax(many))
            n = int(ntok[i])
            problems.append(
                (
                    i,
                    N_FIELDS,
                    f"unexpected extra field: the line has {n} fields, SWF has {N_FIELDS} "
                    "(extra_fields='ignore' drops the fields after the 18th)",
                )
            )
            bad |= many
        drop = comment | bad
        a = [starts[drop]]
        b = [nl[drop]]
        if self.ignore_extra:
            ext = many & ~bad
            if ext.any():  # blank everything after the 18th token
                a.append(tk.tok_e[tk.ftok[ext] + N_FIELDS - 1])
                b.append(nl[ext])
        _blank(tk.buf, np.concatenate(a), np.concatenate(b))

    def _reject_non_numbers(self, data: bytes, tk: _Tokens,
                            problems: list[tuple[int, int, str]],
                            reject: Callable[[np.ndarray], None]
                            ) -> tuple[np.ndarray, np.ndarray]:
        """Reject the lines with a character that cannot be part of a number or a token
        with two decimal points. Returns the positions of the decimal points left in
        ``tk.buf`` and the token of each."""
        buf, nl, tok_s, ftok = tk.buf, tk.nl, tk.tok_s, tk.ftok
        badc = np.flatnonzero(~_ALLOWED[buf])
        if badc.size:
            lines = np.searchsorted(nl, badc)
            t = int(np.searchsorted(tok_s, badc[0], side="right")) - 1
            i = int(lines[0])
            tok = self._token(data, tok_s, tk.tok_e, t)
            problems.append((i, t - int(ftok[i]), f"not a number: '{tok}'"))
            reject(lines)

        # tokens with two decimal points
        dots = np.flatnonzero(buf == _DOT)
        dtok = np.searchsorted(tok_s, dots, side="right") - 1
        if dots.size > 1:
            dup = np.flatnonzero(dtok[1:] == dtok[:-1]) + 1
            if dup.size:
                lines = np.searchsorted(nl, dots[dup])
                i, t = int(lines[0]), int(dtok[dup[0]])
                tok = self._token(data, tok_s, tk.tok_e, t)
                problems.append((i, t - int(ftok[i]), f"not a number: '{tok}'"))
                reject(lines)
        return dots, dtok

    def _parse_numbers(self, data: bytes, tk: _Tokens, job: np.ndarray, bad: np.ndarray,
                       problems: list[tuple[int, int, str]],
                       reject: Callable[[np.ndarray], None], slow: bool,
                       dots: np.ndarray, base: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every good job line's numbers in one ``np.fromstring`` call: ``(values,
        keep, kl)`` with ``keep`` the good job lines (mask), ``kl`` their indices and
        ``values`` their :data:`N_FIELDS` numbers each, in line order (float64 when
        ``slow``, else int64 with the decimal points removed). When numpy refuses the
        text, the bad lines are found (:meth:`_locate`) and rejected and the parse is
        tried again (three times at most)."""
        buf = tk.buf
        for _ in range(3):
            keep = job & ~bad
            kl = np.flatnonzero(keep)
            nk = kl.size
            if nk == 0:
                return np.zeros(0), keep, kl
            vals: np.ndarray | None
            try:
                if slow:
                    vals = np.fromstring(buf.tobytes(), sep=" ")
                else:
                    text = buf[buf != _DOT] if dots.size else buf
                    vals = np.fromstring(text.tobytes(), dtype=np.int64, sep=" ")
                    del text
            except ValueError:
                vals = None
            if vals is not None and vals.size == nk * N_FIELDS:
                return vals, keep, kl
            found = self._locate(data, tk.starts, tk.nl, kl)
            if not found:
                raise InputError(
                    f"cannot parse the numbers of lines {base + kl[0] + 1}-{base + kl[-1] + 1}",
                    file=self.path,
                )
            problems.append(found[0])
            reject(np.array([f[0] for f in found], dtype=np.int64))
        # the locator always finds the bad lines
        raise InputError("cannot parse the numbers", file=self.path,  # pragma: no cover
                         line=base + 1)

    def _float_columns(self, mat: np.ndarray, kl: np.ndarray, bad_rows: np.ndarray,
                       problems: list[tuple[int, int, str]],
                       tok_text: Callable[[np.ndarray, int], str]) -> list[np.ndarray]:
        """The columns of ``mat`` (float64, one row per job line ``kl``): float fields as
        they are (an infinite value is a bad row), the others as int64: values beyond
        2**53 are bad rows; a fraction is a bad row in a field the simulation uses, and
        rounded (counted in ``rounded``) in the others."""
        cols: list[np.ndarray] = []
        for j in range(N_FIELDS):
            col = mat[:, j]
            if j in _FLOAT_COLS:
                inf = np.flatnonzero(~np.isfinite(col))
                if inf.size:
                    problems.append(
                        (int(kl[inf[0]]), j, f"value out of range: '{tok_text(inf, j)}'")
                    )
                    bad_rows[inf] = True
                cols.append(col.copy())
                continue
            huge = np.flatnonzero(~(np.abs(col) < _EXACT))
            if huge.size:
                problems.append(
                    (int(kl[huge[0]]), j, f"value out of range: '{tok_text(huge, j)}'")
                )
                bad_rows[huge] = True
                col = np.where(bad_rows, 0.0, col)
            frac = np.flatnonzero(col != np.floor(col))
            if frac.size:
                if j in _SIM_IDX:
                    problems.append(
                        (int(kl[frac[0]]), j, f"not a whole number: '{tok_text(frac, j)}'")
                    )
                    bad_rows[frac] = True
                else:
                    name = SWF_FIELDS[j]
                    self.rounded[name] = self.rounded.get(name, 0) + int(frac.size)
                col = np.rint(col)
            cols.append(col.astype(np.int64))
        return cols

    def _int_columns(self, mat: np.ndarray, tk: _Tokens, keep: np.ndarray, kl: np.ndarray,
                     dots: np.ndarray, dtok: np.ndarray, bad_rows: np.ndarray,
                     problems: list[tuple[int, int, str]],
                     tok_text: Callable[[np.ndarray, int], str]) -> list[np.ndarray]:
        """The columns of ``mat`` (int64 parsed without the decimal points, one row per
        job line ``kl``), each token with a decimal point scaled back: float fields
        divided by 10**(digits after the point); in the others a whole value is
        divided exactly, a fraction is a bad row in a field the simulation uses and
        rounded (counted in ``rounded``) in the others. Values beyond 2**53 are bad
        rows (set to 0)."""
        nl, ftok = tk.nl, tk.ftok
        row_of_line = np.cumsum(keep) - 1
        keep_dot = keep[np.searchsorted(nl, dots)] if dots.size else np.zeros(0, bool)
        dots, dtok = dots[keep_dot], dtok[keep_dot]
        dline = np.searchsorted(nl, dots)
        dfield = dtok - ftok[dline]
        drow = row_of_line[dline]
        ddig = tk.tok_e[dtok] - dots - 1  # digits after the decimal point
        cols: list[np.ndarray] = []
        for j in range(N_FIELDS):
            col = mat[:, j]
            sel = dfield == j
            if j in _FLOAT_COLS:
                fcol = col.astype(np.float64)
                if sel.any():
                    r = drow[sel]
                    fcol[r] = col[r] / np.power(10.0, ddig[sel])
                cols.append(fcol)
                continue
            col = col.copy()
            if sel.any():
                r = drow[sel]
                scale = np.power(np.int64(10), ddig[sel])
                q, rem = np.divmod(col[r], scale)
                whole = rem == 0
                col[r[whole]] = q[whole]
                if not whole.all():
                    fr = r[~whole]
                    if j in _SIM_IDX:
                        problems.append(
                            (int(kl[fr[0]]), j, f"not a whole number: '{tok_text(fr, j)}'")
                        )
                        bad_rows[fr] = True
                    else:
                        name = SWF_FIELDS[j]
                        self.rounded[name] = self.rounded.get(name, 0) + int(fr.size)
                        col[fr] = np.rint(col[fr] / scale[~whole]).astype(np.int64)
            huge = np.flatnonzero((col >= _EXACT_INT) | (col <= -_EXACT_INT))
            if huge.size:
                problems.append(
                    (int(kl[huge[0]]), j, f"value out of range: '{tok_text(huge, j)}'")
                )
                bad_rows[huge] = True
                col[huge] = 0
            cols.append(col)
        return cols

    @staticmethod
    def _check_sim_values(cols: list[np.ndarray], kl: np.ndarray, bad_rows: np.ndarray,
                          problems: list[tuple[int, int, str]]) -> None:
        """The values the simulation relies on: a submit time for a job with processors
        and a run time, no negative requested time but -1, times within the engine's
        limit (:mod:`dispatchlab.core.limits`); a row failing one is bad."""
        submit, run, req_time = cols[_IDX["submit"]], cols[_IDX["run"]], cols[_IDX["req_time"]]
        units = np.where(
            cols[_IDX["req_procs"]] != -1, cols[_IDX["req_procs"]], cols[_IDX["alloc_procs"]]
        )
        nosub = np.flatnonzero((submit < 0) & (units > 0) & (run >= 0) & ~bad_rows)
        if nosub.size:
            v = int(submit[nosub[0]])
            msg = "missing submit time (-1)" if v == -1 else f"negative submit time {v}"
            problems.append(
                (
                    int(kl[nosub[0]]),
                    _IDX["submit"],
                    msg + " for a job with processors and a run time",
                )
            )
            bad_rows[nosub] = True
        negreq = np.flatnonzero((req_time < -1) & ~bad_rows)
        if negreq.size:
            v = int(req_time[negreq[0]])
            problems.append(
                (
                    int(kl[negreq[0]]),
                    _IDX["req_time"],
                    f"negative requested time {v} (only -1 = missing is allowed)",
                )
            )
            bad_rows[negreq] = True
        for name, what in _TIME_FIELDS:  # the engine's time limit (sim.limits)
            col = cols[_IDX[name]]
            far = np.flatnonzero(beyond_limit(col) & ~bad_rows)
            if far.size:
                problems.append((int(kl[far[0]]), _IDX[name],
                                 str(time_problem(int(col[far[0]]), what))))
                bad_rows[far] = True

    def _store(self, cols: list[np.ndarray], bad_rows: np.ndarray) -> None:
        """Append the rows of ``cols`` (the 18 fields and the line number) that are not
        ``bad_rows`` to the output columns."""
        ok = ~bad_rows if bad_rows.any() else slice(None)
        k = bad_rows.size - int(bad_rows.sum())
        if k == 0:  # every job line of the chunk skipped (lenient): nothing to store
            return
        self._reserve(self.n + k)
        for j, col in enumerate(cols):
            self.out[j][self.n : self.n + k] = col[ok]
        self.n += k

    def _reserve(self, need: int) -> None:
        cap = self.out[0].size if self.out else 0
        if need <= cap:
            return
        estimate = int(need * max(self.size_hint, self.bytes_seen) / max(self.bytes_seen, 1))
        new_cap = max(need, estimate + estimate // 50 + 64, cap + cap // 4)
        if not self.out:
            dtypes = [np.float64 if name in FLOAT_FIELDS else np.int64 for name in SWF_FIELDS]
            self.out = [np.empty(new_cap, dtype=dt) for dt in [*dtypes, np.int64]]
            return
        for j, old in enumerate(self.out):  # one column at a time
            new = np.empty(new_cap, dtype=old.dtype)
            new[: self.n] = old[: self.n]
            self.out[j] = new
            del old, new

    def columns(self) -> dict[str, np.ndarray]:
        """The parsed columns (trimmed to the rows read, one column at a time)."""
        names = [*SWF_FIELDS, "line"]
        if not self.out:
            dtypes = [np.float64 if name in FLOAT_FIELDS else np.int64 for name in names]
            return {name: np.empty(0, dtype=dt) for name, dt in zip(names, dtypes, strict=True)}
        cols: dict[str, np.ndarray] = {}
        out, self.out = self.out, []
        out.reverse()
        for name in names:
            col = out.pop()  # drop our reference so the untrimmed buffer is freed
            cols[name] = col[: self.n].copy() if col.size > self.n else col
            del col
        return cols


def estimate_fallback(
    req_time: np.ndarray, run: np.ndarray, header: dict[str, str]
) -> tuple[str, int]:
    """The (source, value) used where the requested time is -1 (see the module docstring)."""
    own = header.get(FALLBACK_KEY)
    value = leading_int(own)
    if value is not None:
        m = re.search(r"\((.*)\)", own or "")
        return (m.group(1) if m else "recorded"), value
    max_runtime = header_facts(header)["max_runtime"]
    if max_runtime is not None and max_runtime > 0:
        return "MaxRuntime", max_runtime
    if req_time.size and (req_time >= 0).any():
        return "max requested time", int(req_time.max())
    return "max run time", int(run.max()) if run.size else -1


def finish_table(
    cols: dict[str, np.ndarray],
    resources: dict[str, np.ndarray] | None,
    info: TraceInfo,
) -> JobTable:
    """Derive ``units``/``requested_time`` when absent, sort stably by submit, build the table.

    ``cols`` must hold the 18 SWF columns and ``line``; it is modified in place.
    ``info.header`` must already be set (for the estimate fallback).
    """
    n = cols["submit"].size
    if "units" not in cols:
        req, alloc = cols["req_procs"], cols["alloc_procs"]
        cols["units"] = np.where(req != -1, req, alloc)
    if "requested_time" not in cols:
        missing = cols["req_time"] == -1
        count = int(missing.sum())
        if count:
            source, value = estimate_fallback(cols["req_time"], cols["run"], info.header)
            info.estimate_fallbacks = count
            info.estimate_fallback_source = source
            info.estimate_fallback_value = value
            cols["requested_time"] = np.where(missing, np.int64(value), cols["req_time"])
        else:
            cols["requested_time"] = cols["req_time"].copy()
        del missing
    if resources is None:
        resources = {"core": np.ones(n, dtype=np.int64)}
    ordered = {name: cols.pop(name) for name in ALL_FIELDS}
    ordered.update(cols)  # extra columns (tables only) keep their place after the known ones
    submit = ordered["submit"]
    if n > 1 and bool(np.any(submit[1:] < submit[:-1])):
        order = np.argsort(submit, kind="stable")
        for group in (ordered, resources):
            for name in list(group):
                group[name] = group[name][order]
        del order
    return JobTable(columns=ordered, resources=resources, info=info)


def read_swf(
    path: str | Path,
    *,
    lenient: bool = False,
    extra_fields: ExtraFields = "error",
    chunk_bytes: int = CHUNK_BYTES,
) -> JobTable:
    """Read an SWF file (``.swf`` or gzip-compressed ``.swf.gz``) into a :class:`JobTable`.

    Jobs are sorted by submit time with a stable sort (ties keep the file order);
    times are in seconds exactly as in the file. No cleaning is done here (see
    :mod:`dispatchlab.workload.clean`). ``lenient=True`` skips malformed lines
    instead of raising; ``extra_fields="ignore"`` accepts lines with more than 18
    fields and drops the extras. See the module docstring for the details.

    Raises :class:`InputError` for a missing or corrupt file, a malformed line
    (naming file, line and field), or a file without job lines.
    """
    if extra_fields not in ("error", "ignore"):
        raise InputError(
            f"extra_fields must be 'error' or 'ignore', not {extra_fields!r}", field="extra_fields"
        )
    if chunk_bytes < 1:
        raise InputError("chunk_bytes must be positive", field="chunk_bytes")
    path = Path(path)
    name = str(path)
    fh = _open_binary(path)
    with fh:
        fast = _read_native(path, gzipped=isinstance(fh, gzip.GzipFile),
                            ignore_extra=extra_fields == "ignore",
                            size_hint=_decompressed_size(path, fh))
        if fast is not None:
            cols, comments, records = fast
            skipped, rounded = 0, {}
        else:
            cols, comments, records, skipped, rounded = _read_python(
                name, fh, lenient=lenient, ignore_extra=extra_fields == "ignore",
                chunk_bytes=chunk_bytes, size_hint=_decompressed_size(path, fh))
    header = parse_header(comments)
    info = TraceInfo(
        source=name,
        header=header,
        lines_read=records,
        malformed_skipped=skipped,
        header_lines=tuple(comments),
        rounded=rounded,
        **header_facts(header),
    )
    return finish_table(cols, None, info)


def _read_python(name: str, fh: IO[bytes], *, lenient: bool, ignore_extra: bool,
                 chunk_bytes: int, size_hint: int
                 ) -> tuple[dict[str, np.ndarray], list[str], int, int, dict[str, int]]:
    """The reference reader (:class:`_Parser`, chunk by chunk): the columns, the comment
    lines, the job lines read, the malformed lines skipped and the rounded values per
    column; an :class:`InputError` naming the file, line and field for a malformed line
    (without ``lenient``), a corrupt file or a file without jobs."""
    parser = _Parser(name, lenient=lenient, ignore_extra=ignore_extra, size_hint=size_hint)
    try:
        for chunk in _iter_chunks(fh, chunk_bytes):
            parser.feed(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        kind = "corrupt or truncated gzip file" if isinstance(fh, gzip.GzipFile) else "read error"
        raise InputError(f"{kind}: {exc}", file=name) from exc
    cols = parser.columns()
    if cols["submit"].size == 0:
        extra = f" ({parser.skipped} malformed lines skipped)" if parser.skipped else ""
        raise InputError(f"no jobs: the file has no job lines{extra}", file=name)
    return cols, parser.comments, parser.records, parser.skipped, dict(parser.rounded)


def _text_blocks(path: Path, gzipped: bool, block_bytes: int) -> Iterator[bytes]:
    """The file's text in blocks of at most ``block_bytes`` (zlib, in C, for a gzip
    file, member after member). Raises ValueError where the reference reader might
    not read the same text (anything but gzip members back to back: trailing bytes,
    a truncated member) and OSError/zlib.error as reading does."""
    with open(path, "rb") as raw:
        if not gzipped:
            while block := raw.read(block_bytes):
                yield block
            return
        unzip = None  # the member being read (its trailer is checked)
        data = b""
        while True:
            while len(data) < 2 and (more := raw.read(block_bytes)):
                data += more
            if not data:
                break
            if unzip is None:
                if data[:2] != b"\x1f\x8b":
                    raise ValueError("bytes after the last gzip member")
                unzip = zlib.decompressobj(wbits=31)
            block = unzip.decompress(data, block_bytes)
            if block:
                yield block
            if unzip.eof:
                data, unzip = unzip.unused_data, None
            else:
                data = unzip.unconsumed_tail
        if unzip is not None:
            raise ValueError("a truncated gzip member")


#: Blocks the reading thread of :func:`_prefetched` may hold ahead of the parser.
PREFETCH_BLOCKS = 2


def _prefetched(blocks: Iterator[bytes], depth: int = PREFETCH_BLOCKS) -> Iterator[bytes]:
    """``blocks``, produced by a helper thread at most ``depth`` blocks ahead, so that
    making the next block (zlib's decompression, the file's reads: both release the
    GIL) overlaps the caller's work on this one (the compiled parser's ``feed``, which
    releases it too). The same blocks in the same order, then the exception that
    iterating ``blocks`` raised, at the same point. Closing this generator early (the
    caller stops reading) stops the thread and closes ``blocks``; at most ``depth + 1``
    blocks are alive besides the caller's."""
    box: queue.Queue[tuple[bytes | None, BaseException | None]] = queue.Queue(depth)
    stop = threading.Event()

    def put(item: tuple[bytes | None, BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                box.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for block in blocks:
                if not put((block, None)):
                    return
            put((None, None))
        except BaseException as exc:  # handed to the caller, raised there
            put((None, exc))
        finally:
            close = getattr(blocks, "close", None)
            if close is not None:
                close()

    worker = threading.Thread(target=produce, name="dispatchlab-swf-read", daemon=True)
    worker.start()
    try:
        while True:
            block, exc = box.get()
            if exc is not None:
                raise exc
            if block is None:
                return
            yield block
    finally:
        # after the stop, the thread puts at most one more block: the room the
        # draining makes is enough, so it ends within one block's work
        stop.set()
        with suppress(queue.Empty):
            while True:
                box.get_nowait()
        worker.join()


def _read_native(path: Path, *, gzipped: bool, ignore_extra: bool, size_hint: int = 0
                 ) -> tuple[dict[str, np.ndarray], list[str], int] | None:
    """The fast path of :func:`read_swf`: the compiled parser (``dispatchlab._core``,
    dispatchlab-core's ``swf`` module; bytes in, columns out) reads a clean file (see
    its rules there: no skip, rounding or error), giving the columns, the comment
    lines and the job lines read, exactly as the reference reader would; None for any
    other file (or without the compiled core), which the reference reader
    (:func:`_read_python`) then reads and reports on. ``size_hint``: the text's
    expected size (bytes, 0: unknown), to size the columns once."""
    if _core is None:
        return None
    parser = _core.SwfParser(ignore_extra, size_hint)
    blocks = _prefetched(_text_blocks(path, gzipped, NATIVE_BLOCK_BYTES))
    try:
        for block in blocks:
            if not parser.feed(block):
                return None
        done = parser.finish()
    except (OSError, EOFError, ValueError, zlib.error):
        return None  # the reference reader reads it again and names the problem
    except RuntimeError:  # a panic in the parser (a bug): the reference reader reads it
        return None
    finally:
        blocks.close()  # the reading thread stops (a file handed back early)
    if isinstance(done, str):
        return None
    arrays, comments, records = done
    cols = dict(zip((*SWF_FIELDS, "line"), arrays, strict=True))
    text = [c.decode("utf-8", "replace").rstrip("\r") for c in comments]
    return cols, text, records


# --------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------


def _header_lines_for(table: JobTable) -> list[str]:
    info = table.info
    lines = [line for line in info.header_lines if not _OWN_LINE_RE.match(line)]
    if not lines:
        for key, value in info.header.items():
            if key == FALLBACK_KEY:
                continue
            lines.extend(f"; {key}: {part}" for part in value.split("\n"))
    lines.append(WRITTEN_NOTE)
    if info.time_offset:
        lines.append(f"{_REBASE_NOTE} {info.time_offset} s were subtracted from the submit times")
    req_time = table.columns["req_time"]
    missing = req_time == -1
    if missing.any():
        values = table.columns["requested_time"][missing]
        lo, hi = int(values.min()), int(values.max())
        if lo == hi:
            source = info.estimate_fallback_source or "recorded"
            lines.append(f"; {FALLBACK_KEY}: {lo} ({source})")
    return lines


@contextmanager
def _open_write(path: Path) -> Iterator[IO[bytes]]:
    """Open ``path`` for writing; a ``.gz`` path gets a gzip stream with no file name and
    mtime 0 in its header, so equal tables give byte-identical files."""
    try:
        with open(path, "wb") as raw:
            if path.name.endswith(".gz"):
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6,
                                   mtime=0) as gz:
                    yield gz
            else:
                yield raw
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", file=str(path)) from exc


def write_swf(table: JobTable, path: str | Path) -> None:
    """Write ``table`` as SWF (gzip-compressed when ``path`` ends with ``.gz``).

    The source's comment lines are preserved, followed by ``; Note: written by
    dispatchlab``; then one line per job in table order with the 18 fields.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    path = Path(path)
    cols = table.columns
    for name in SWF_FIELDS:
        if name in FLOAT_FIELDS and not np.all(np.isfinite(cols[name])):
            raise InputError(f"column {name!r} has non-finite values", file=str(path), field=name)
    arrow = pa.Table.from_arrays(
        [pa.array(np.asarray(cols[name])) for name in SWF_FIELDS], names=list(SWF_FIELDS)
    )
    head = "\n".join(_header_lines_for(table)) + "\n"
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with _open_write(path) as fh:
        fh.write(head.encode("utf-8"))
        pacsv.write_csv(arrow, fh, options)
