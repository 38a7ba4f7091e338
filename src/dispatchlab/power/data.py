"""Job power data: attach measured or predicted job power to a job table.

:func:`attach_power` returns a **new** :class:`~dispatchlab.workload.jobs.JobTable` with
the power columns of :mod:`dispatchlab.power.model` (``power_mean``, ``power_max``,
``power_std``: float64 **watts** of the whole job, i.e. of all the nodes it ran on,
``NaN`` = unknown), rows, order and every other column unchanged, and a
:class:`PowerDataReport` counting what was joined. Two kinds of source:

**(a) A power table** (measured power, e.g. Carastan-Santos et al. 2024's Marconi100 IPMI data): a
Parquet file (recognised by its ``PAR1`` magic bytes) or a CSV file (header row, comma-separated,
plain or ``.gz``) with the columns ``job_id`` (an integer, the trace's SWF field 1) and
``power_mean``, ``power_max``, ``power_std`` (W, the job's power over its whole run); other
columns are ignored. Rows are joined on ``job_id``; a job id that appears on several
rows of the *trace* gets the same values on each (ours). Errors
(:class:`~dispatchlab.core.errors.InputError` naming the file, the CSV line where one exists,
else ``(row N)`` for Parquet, and the field):

* a missing column (all missing ones are named), a value that is not a number or is
  empty/null, a CSV line with the wrong number of fields;
* watts that are negative or not finite;
* ``power_max < power_mean`` (beyond a relative rounding tolerance of 1e-9);
* a job id on two rows (the later row is named);
* **no** row whose job id is in the trace (the file belongs to another trace).

*Documented skip, counted*: rows whose job id is not in the trace are skipped and
counted in ``report.unknown_ids`` (a power file may cover a longer period than a trace
window). Jobs of the trace without a row get ``NaN`` and are counted in
``report.missing``.

**(b) The Eurora power predictions** of the PA-HPC-SIM test data
(``Eurora-PA-HPC-SIM-testdata.tar.gz#test_data/eurora_power_predictions/power_predictions``,
any ``ARCHIVE#MEMBER`` ending as in :mod:`dispatchlab.workload.eurora`, or the extracted
file), recognised by its content: lines ``<jobid>.node129;<watts>`` (``jobid;watts``
without the server suffix is accepted too). **These are machine-learning predictions of
the job's power (Borghesi et al., ISC 2016), not measurements.** A line's job id is the
number before the first ``.`` (the trace ids are bare numbers; ``.node129`` is the PBS
server, as the archive's README says). The job's power follows PA-HPC-SIM's
``OnlineDispatcher::addJob`` [PA]:

1. ``p = ceil(prediction)``, and ``p = 1`` W when ``p < 1``;
2. per node ``w = ceil(p / nodes)`` (at least 1 W), capped at
   :data:`EURORA_MAX_NODE_POWER` = 400 W;
3. job power = ``w x nodes``; ``power_mean = power_max`` = that value and
   ``power_std = 0`` (*ours*: the prediction is one value per job).

``nodes`` is the job's ``nodes_used`` column (distinct nodes of the recorded placement,
:mod:`dispatchlab.workload.eurora`) where it is > 0, else
:func:`~dispatchlab.power.model.job_nodes` on ``platform`` (default
:func:`~dispatchlab.platform.eurora.eurora_platform`). *Ours*:
PA-HPC-SIM divides by its job's "number of nodes", which is the number of used-node
entries (our ``units``); the two differ for 32 of the archive's 5,930 jobs, whose
entries name a node twice.

Jobs without a prediction get PA-HPC-SIM's dummy model (``Predictor::predict_power``)
``40 W x nodes + 62 W x GPUs + 115 W x MICs`` (2 x 20 W CPU idle per node; 50 W active +
12 W idle per GPU; 115 W per MIC), GPUs and MICs = ``units x`` the per-unit ``gpu`` /
``mic`` requests (0 when the table has no such resource), then the same rules 1-3 (as
PA applies them to whatever its predictor returns); they are counted in
``report.fallback``, not in ``missing`` (every job gets a value). Predictions whose job
id is not in the trace are counted in ``report.unknown_ids``; there is no error when no
trace job has a prediction (some of the archive's instances have none: every job then
gets the fallback, which is also what PA-HPC-SIM as shipped does, since it looks the
predictions up by the bare id). A negative prediction is clamped by rule 1 as in PA; a
line that is not ``ID;WATTS``, or whose watts are not a finite number, or a job id on
two lines (*ours*: PA keeps the last) is an error naming the line.

**Time series** (:func:`read_power_series`): per-job power samples, columns ``job_id``,
``offset`` (seconds since the job's start, >= 0) and ``watts`` (W of the whole job), in
Parquet or CSV, validated like (a) (missing columns, non-numbers, negative or
non-finite watts or offsets, a ``(job_id, offset)`` pair on two rows). Samples are
expected every :data:`DEFAULT_PERIOD` = 20 s (Carastan-Santos et al. 2024's IPMI period, and the
synthetic generator's default); :func:`series_power` summarises a series into the three
columns with every sample weighted equally (Carastan-Santos et al. 2024's formulas: mean, max, and
the population standard deviation), which assumes a constant period.
:func:`match_power_series` keeps the samples of a trace's jobs (unknown job ids
skipped and counted, an error when none is in the trace) for
:func:`dispatchlab.power.accounting.sampled_platform_power`.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import re
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING

import numpy as np

from dispatchlab.core.errors import InputError, one_line
from dispatchlab.core.limits import beyond_limit, time_problem
from dispatchlab.platform.eurora import EURORA_NODE_MAX_POWER, eurora_platform
from dispatchlab.power.model import DEFAULT_PERIOD, POWER_COLUMNS, job_nodes
from dispatchlab.workload.eurora import (
    ARCHIVE_SEPARATOR,
    _archive_text,
    is_tar_name,
    read_text_maybe_gzip,
    split_archive_path,
)
from dispatchlab.workload.jobs import JobTable
from dispatchlab.workload.tables import local_sink

if TYPE_CHECKING:  # pyarrow (about 40 MB) is imported by the functions that use it
    import pyarrow as pa

    from dispatchlab.platform.platform import Platform

__all__ = [
    "DEFAULT_PERIOD",
    "EURORA_FALLBACK_GPU",
    "EURORA_FALLBACK_MIC",
    "EURORA_FALLBACK_NODE",
    "EURORA_MAX_NODE_POWER",
    "EURORA_PREDICTIONS_MEMBER",
    "SERIES_COLUMNS",
    "PowerDataReport",
    "PowerSeriesReport",
    "attach_power",
    "eurora_job_power",
    "match_power_series",
    "read_power_series",
    "read_power_table",
    "series_power",
    "with_power",
    "write_power",
    "write_power_series",
]

#: Columns of a power time series.
SERIES_COLUMNS: tuple[str, ...] = ("job_id", "offset", "watts")
#: The predictions member of the PA-HPC-SIM test data archive.
EURORA_PREDICTIONS_MEMBER = "test_data/eurora_power_predictions/power_predictions"
#: Per-node cap of a Eurora job's power (W) [PA ``_node_max_alloc_power``].
EURORA_MAX_NODE_POWER = int(EURORA_NODE_MAX_POWER)  # the eurora preset's max_power
#: Smallest job power (W) [PA]: smaller predictions become 1 W.
EURORA_MIN_POWER = 1
#: PA-HPC-SIM's dummy model, W per node (2 x ``CPU_IDLE`` 20 W).
EURORA_FALLBACK_NODE = 40
#: W per GPU (``GPU_ACTIVE`` 50 W + ``GPU_IDLE`` 12 W).
EURORA_FALLBACK_GPU = 62
#: W per MIC (``MIC`` 115 W).
EURORA_FALLBACK_MIC = 115

_KIND_EURORA = "eurora"
#: The largest power (W) a job may have in a power file (1 GW, some 30 times today's
#: largest machines whole): a larger value (``power_std = 1e160``) is an error where
#: the file is read, so no sum or square of job powers can overflow later.
MAX_JOB_WATTS = 1e9
#: relative tolerance of the ``power_max >= power_mean`` check (rounding in the source)
_MAX_MEAN_RTOL = 1e-9
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_EURORA_SNIFF = re.compile(r"\s*\d+(?:\.[^;,\s]+)?\s*;\s*" + _NUMBER + r"\s*", re.ASCII)
_EURORA_ID = re.compile(r"\s*(\d+)(?:\.[^;,\s]*)?\s*", re.ASCII)


# --------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PowerDataReport:
    """What :func:`attach_power` joined.

    ``source``: the file (``ARCHIVE#MEMBER`` for an archive member); ``kind``:
    ``"parquet"``, ``"csv"`` (measured power tables) or ``"eurora"`` (ML predictions);
    ``jobs``: rows of the trace; ``rows``: power rows (or prediction lines) read;
    ``matched``: trace rows that got a value from the source; ``missing``: trace rows
    left without power (``NaN``; always 0 for ``"eurora"``); ``unknown_ids``: source rows
    whose job id is not in the trace (skipped); ``fallback``: trace rows that got
    PA-HPC-SIM's dummy model (``"eurora"`` only). ``matched + missing + fallback ==
    jobs``.
    """

    source: str
    kind: str
    jobs: int
    rows: int
    matched: int
    missing: int
    unknown_ids: int
    fallback: int = 0

    @property
    def measured(self) -> bool:
        """False for the Eurora predictions (ML predictions, not measurements)."""
        return self.kind != _KIND_EURORA

    def describe(self) -> str:
        """One line: the source, what it is, and the counts."""
        if self.kind == _KIND_EURORA:
            what = "Eurora ML power predictions, not measurements"
            counts = (f"{self.matched:,} of {self.jobs:,} jobs predicted, "
                      f"{self.fallback:,} from PA-HPC-SIM's model "
                      f"({EURORA_FALLBACK_NODE} W/node + {EURORA_FALLBACK_GPU} W/GPU + "
                      f"{EURORA_FALLBACK_MIC} W/MIC)")
        else:
            what = f"{self.kind}, measured"
            counts = (f"{self.matched:,} of {self.jobs:,} jobs matched, "
                      f"{self.missing:,} without power (NaN)")
        return (f"power from {self.source} ({what}): {counts}; {self.unknown_ids:,} of "
                f"{self.rows:,} source rows name a job not in the trace (skipped)")


# --------------------------------------------------------------------------------------
# locating rows and reading files
# --------------------------------------------------------------------------------------


def _open_text(path: Path) -> IO[str]:
    """A text stream of a plain or gzip file (by magic bytes)."""
    with path.open("rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace",
                                newline="")
    return path.open("r", encoding="utf-8", errors="replace", newline="")


def _csv_records(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of each non-empty CSV record, the header first."""
    with _open_text(path) as fh:
        reader = csv.reader(fh)
        try:
            for record in reader:
                if record:
                    yield reader.line_num, record
        except csv.Error as exc:
            raise InputError(f"malformed CSV: {one_line(exc)}", file=str(path),
                             line=reader.line_num) from None


class _Where:
    """Turns a data row index into a location: the CSV line, or ``(row N)``."""

    def __init__(self, path: Path, csv_file: bool) -> None:
        self.path = path
        self.csv = csv_file

    def line_of(self, row: int) -> int | None:
        if not self.csv:
            return None
        for k, (line, _) in enumerate(_csv_records(self.path)):
            if k == row + 1:  # record 0 is the header
                return line
        return None

    def error(self, message: str, field: str | None, row: int | None = None) -> InputError:
        if row is None:
            return InputError(message, file=str(self.path), field=field)
        if self.csv:
            return InputError(message, file=str(self.path), line=self.line_of(row),
                              field=field)
        return InputError(f"{message} (row {row + 1})", file=str(self.path), field=field)


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.is_dir():
        raise InputError("is a directory, not a power file", file=str(path))


def _is_parquet(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(4) == b"PAR1"


def _missing_columns(present: list[str], wanted: tuple[str, ...], where: _Where) -> None:
    missing = [c for c in wanted if c not in present]
    if missing:
        raise where.error(f"missing column{'s' if len(missing) > 1 else ''} "
                          f"{', '.join(missing)} (a power file needs {', '.join(wanted)}; "
                          f"found {one_line(', '.join(present), 200) or 'none'})",
                          ", ".join(missing))


def _scan_csv_error(path: Path, wanted: tuple[str, ...], ints: tuple[str, ...],
                    exc: Exception) -> InputError:
    """The error for the first CSV record pyarrow could not convert (found by a scan)."""
    header: list[str] = []
    index: dict[str, int] = {}
    for line, record in _csv_records(path):
        if not header:
            header = record
            index = {name: header.index(name) for name in wanted}
            continue
        if len(record) != len(header):
            return InputError(f"{len(record)} fields, expected {len(header)} (as in the "
                              "header)", file=str(path), line=line)
        for name in wanted:
            cell = record[index[name]].strip()
            try:
                value = int(cell) if name in ints else float(cell)
            except ValueError:
                kind = "an integer" if name in ints else "a number"
                what = "empty cell" if not cell else f"not {kind}: {cell!r}"
                return InputError(what, file=str(path), line=line, field=name)
            if name not in ints and not math.isfinite(value):
                return InputError(f"not a finite number: {cell!r}", file=str(path),
                                  line=line, field=name)
    return InputError(f"cannot read CSV: {one_line(exc)}", file=str(path))


def _read_columns(path: Path, wanted: tuple[str, ...],
                  ints: tuple[str, ...]) -> tuple[str, dict[str, np.ndarray], _Where]:
    """(kind, columns, locator) of the ``wanted`` columns of a Parquet or CSV file:
    ``ints`` as int64 (integral values only), the others as float64."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    _check_file(path)
    if _is_parquet(path):
        where = _Where(path, csv_file=False)
        try:
            schema = pq.read_schema(str(path))
            _missing_columns(list(schema.names), wanted, where)
            at = pq.read_table(str(path), columns=list(wanted))
        except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:  # (damaged metadata)
            raise InputError(f"cannot read Parquet: {one_line(exc)}",
                             file=str(path)) from None
        kind = "parquet"
    else:
        where = _Where(path, csv_file=True)
        header = next((rec for _, rec in _csv_records(path)), None)
        if header is None:
            raise InputError("empty file: a power file needs a header row naming "
                             + ", ".join(wanted), file=str(path))
        if any("\ufffd" in cell or "\x00" in cell for cell in header):
            raise InputError("not a power file: binary data, neither Parquet nor UTF-8 CSV "
                             "text", file=str(path))
        _missing_columns(header, wanted, where)
        types = {name: pa.int64() if name in ints else pa.float64() for name in wanted}
        try:
            at = pacsv.read_csv(str(path), convert_options=pacsv.ConvertOptions(
                column_types=types, include_columns=list(wanted)))
        except pa.ArrowInvalid as exc:
            raise _scan_csv_error(path, wanted, ints, exc) from None
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot read CSV: {one_line(exc)}", file=str(path)) from None
        kind = "csv"
    cols: dict[str, np.ndarray] = {}
    for name in wanted:
        col = at.column(name)
        if col.null_count:
            row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            raise where.error("missing value (empty cell / null)", name, row)
        t = col.type
        if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
            raise where.error(f"not numeric (type {t})", name)
        values = col.to_numpy()
        if name in ints:
            if values.dtype.kind == "f":
                bad = np.flatnonzero(~np.isfinite(values) | (values != np.floor(values))
                                     | (np.abs(values) >= 2.0**53))
                if bad.size:
                    raise where.error(f"not an integer: {values[bad[0]]!r}", name,
                                      int(bad[0]))
            cols[name] = values.astype(np.int64)
        else:
            cols[name] = values.astype(np.float64)
    return kind, cols, where


def _check_watts(cols: Mapping[str, np.ndarray], names: tuple[str, ...],
                 where: _Where, unit: str = "W", top: float = MAX_JOB_WATTS) -> None:
    """Every value of ``names`` finite, >= 0 and at most ``top`` (first offending row
    named)."""
    for name in names:
        values = cols[name]
        bad = np.flatnonzero(~(np.isfinite(values) & (values >= 0) & (values <= top)))
        if bad.size:
            v = float(values[bad[0]])
            what = ("not a finite number" if not math.isfinite(v) else "negative" if v < 0
                    else f"absurdly large (above {top:g} {unit})")
            raise where.error(f"{what}: {v!r} {unit}".rstrip(), name, int(bad[0]))


def _first_duplicate(keys: list[np.ndarray]) -> tuple[int, int] | None:
    """(later row, first row) of the first repeated key (rows in file order), or None."""
    n = len(keys[0])
    if n < 2:
        return None
    order = np.lexsort(keys[::-1])  # stable: equal keys stay in file order
    same = np.ones(n - 1, dtype=bool)
    for k in keys:
        s = k[order]
        same &= s[1:] == s[:-1]
    if not same.any():
        return None
    later = int(order[1:][same].min())  # the first row (file order) repeating a key
    equal = np.ones(n, dtype=bool)
    for k in keys:
        equal &= k == k[later]
    return later, int(np.flatnonzero(equal)[0])


def read_power_table(path: str | Path) -> tuple[str, dict[str, np.ndarray]]:
    """Read a power table, kind (a) of the module docstring: ``(kind, columns)`` with
    ``kind`` ``"parquet"`` or ``"csv"`` and columns ``job_id`` (int64) and the three power
    columns (float64 W), in file order, validated (missing columns, non-numbers,
    negative or non-finite watts, ``power_max < power_mean``, duplicate job ids)."""
    kind, cols, _ = _read_table(Path(path))
    return kind, cols


def _read_table(path: Path) -> tuple[str, dict[str, np.ndarray], _Where]:
    wanted = ("job_id", *POWER_COLUMNS)
    kind, cols, where = _read_columns(path, wanted, ints=("job_id",))
    _check_watts(cols, POWER_COLUMNS, where)
    mean, peak = cols["power_mean"], cols["power_max"]
    low = np.flatnonzero(peak < mean - _MAX_MEAN_RTOL * np.maximum(mean, 1.0))
    if low.size:
        r = int(low[0])
        raise where.error(f"power_max {float(peak[r])!r} W is below power_mean "
                          f"{float(mean[r])!r} W",
                          "power_max", r)
    dup = _first_duplicate([cols["job_id"]])
    if dup is not None:
        later, first = dup
        at = where.line_of(first) if where.csv else first + 1
        raise where.error(f"duplicate job id {int(cols['job_id'][later])} (first on "
                          f"{'line' if where.csv else 'row'} {at})", "job_id", later)
    return kind, cols, where


# --------------------------------------------------------------------------------------
# the Eurora predictions
# --------------------------------------------------------------------------------------


def _looks_like_eurora(text: str) -> bool:
    """Whether the first non-blank line reads ``ID[.SERVER];WATTS``."""
    for line in text.splitlines():
        if line.strip():
            return _EURORA_SNIFF.fullmatch(line.lstrip("\ufeff")) is not None
    return False


def _parse_eurora(source: str, text: str) -> tuple[np.ndarray, np.ndarray]:
    """(job ids, predicted watts) of the prediction lines (blank lines ignored)."""
    ids: list[int] = []
    watts: list[float] = []
    first_line: dict[int, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.lstrip("\ufeff").split(";")
        if len(parts) != 2:
            raise InputError(f"expected 'JOBID.SERVER;WATTS' (2 ';'-separated fields), "
                             f"found {len(parts)} fields", file=source, line=number)
        m = _EURORA_ID.fullmatch(parts[0])
        if m is None:
            raise InputError(f"not a job id (digits, optionally .SERVER): {parts[0]!r}",
                             file=source, line=number, field="job_id")
        try:
            value = float(parts[1])
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or abs(value) > MAX_JOB_WATTS:
            what = "not a finite number" if not math.isfinite(value) else \
                f"absurdly large (above {MAX_JOB_WATTS:g} W)"
            raise InputError(f"{what}: {one_line(parts[1].strip(), 40)!r}", file=source,
                             line=number, field="power")
        jid = int(m.group(1))
        if jid in first_line:
            raise InputError(f"duplicate job id {jid} (first on line {first_line[jid]})",
                             file=source, line=number, field="job_id")
        first_line[jid] = number
        ids.append(jid)
        watts.append(value)
    if not ids:
        raise InputError("no power predictions: the file has no lines", file=source)
    return np.asarray(ids, dtype=np.int64), np.asarray(watts, dtype=np.float64)


def eurora_job_power(prediction: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """Job power (W, float64) from a whole-job prediction (W) and the job's nodes, by
    PA-HPC-SIM's rules (module docstring, rules 1-3): ``p = max(ceil(prediction), 1)``,
    ``w = min(max(ceil(p / nodes), 1), 400)``, power ``= w x nodes``. E.g. 0.4 W on 1
    node -> 1 W; 1,001 W on 2 nodes -> 2 x 400 W = 800 W; 301 W on 2 nodes -> 2 x 151 W =
    302 W."""
    nodes_i = np.maximum(np.asarray(nodes, dtype=np.int64), 1)
    p = np.maximum(np.ceil(np.asarray(prediction, dtype=np.float64)), EURORA_MIN_POWER)
    p_i = p.astype(np.int64)
    per_node = np.minimum(np.maximum(-(-p_i // nodes_i), 1), EURORA_MAX_NODE_POWER)
    return (per_node * nodes_i).astype(np.float64)


def _eurora_nodes(jobs: JobTable, platform: Platform | None) -> np.ndarray:
    """Nodes of each job: ``nodes_used`` where > 0, else ``job_nodes`` on the platform."""
    used = jobs.columns.get("nodes_used")
    if used is not None and bool(np.all(np.asarray(used) > 0)):
        return np.asarray(used, dtype=np.int64)
    if platform is None:
        platform = eurora_platform()
    fallback = job_nodes(jobs, platform)
    if used is None:
        return fallback
    used = np.asarray(used, dtype=np.int64)
    return np.where(used > 0, used, fallback)


def _attach_eurora(jobs: JobTable, source: str, text: str,
                   platform: Platform | None) -> tuple[dict[str, np.ndarray], PowerDataReport]:
    ids, watts = _parse_eurora(source, text)
    n = len(jobs)
    trace_ids = np.asarray(jobs["job_id"], dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    at = np.minimum(np.searchsorted(sorted_ids, trace_ids), len(ids) - 1)
    found = sorted_ids[at] == trace_ids
    nodes = _eurora_nodes(jobs, platform)
    units = np.asarray(jobs["units"], dtype=np.int64)
    gpus = units * np.asarray(jobs.resources.get("gpu", np.zeros(n, np.int64)), np.int64)
    mics = units * np.asarray(jobs.resources.get("mic", np.zeros(n, np.int64)), np.int64)
    dummy = (EURORA_FALLBACK_NODE * nodes + EURORA_FALLBACK_GPU * gpus
             + EURORA_FALLBACK_MIC * mics).astype(np.float64)
    raw = np.where(found, watts[order][at], dummy)
    power = eurora_job_power(raw, nodes)
    unknown = int(np.count_nonzero(~np.isin(ids, trace_ids)))
    matched = int(found.sum())
    report = PowerDataReport(source=source, kind=_KIND_EURORA, jobs=n, rows=len(ids),
                             matched=matched, missing=0, unknown_ids=unknown,
                             fallback=n - matched)
    cols = {"power_mean": power, "power_max": power.copy(), "power_std": np.zeros(n)}
    return cols, report


# --------------------------------------------------------------------------------------
# attach
# --------------------------------------------------------------------------------------


def _plain_text(path: Path) -> str:

    return read_text_maybe_gzip(path)


def _first_text(path: Path, size: int = 4096) -> str:
    """The first bytes of a plain or gzip file as text (for sniffing)."""
    try:
        with _open_text(path) as fh:
            return fh.read(size)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"corrupt or unreadable file: {one_line(exc)}",
                         file=str(path)) from None


def with_power(jobs: JobTable, cols: Mapping[str, np.ndarray]) -> JobTable:
    """A copy of ``jobs`` with the power columns ``cols`` (the others shared)."""
    columns = {**jobs.columns, **{name: cols[name] for name in POWER_COLUMNS}}
    return replace(jobs, columns=columns, resources=dict(jobs.resources),
                   info=replace(jobs.info))


def attach_power(jobs: JobTable, source: str | Path,
                 platform: Platform | None = None) -> tuple[JobTable, PowerDataReport]:
    """A new table: ``jobs`` with the power columns from ``source`` (W of the whole job,
    ``NaN`` = unknown), and the report of the join. See the module docstring for the
    sources (a Parquet/CSV power table: measured; the Eurora predictions: ML
    predictions), the rules and the errors. ``platform`` gives the nodes of Eurora jobs
    without a ``nodes_used`` value (default: the Eurora platform); a power table does not
    use it. Power columns already in ``jobs`` are replaced in the new table (``jobs`` is
    not modified). Rows whose job id is not in the trace are a documented skip, counted
    (``report.unknown_ids``); a power table none of whose job ids is in the trace is an
    error."""
    split = split_archive_path(source)
    if split is not None:
        name, text = _archive_text(*split)
        if not _looks_like_eurora(text):
            raise InputError("not a power prediction file (lines 'JOBID.SERVER;WATTS'); "
                             "an archive member must be the Eurora predictions, e.g. "
                             f"{split[0]}{ARCHIVE_SEPARATOR}{EURORA_PREDICTIONS_MEMBER}",
                             file=name)
        cols, report = _attach_eurora(jobs, name, text, platform)
        return with_power(jobs, cols), report
    path = Path(source)
    _check_file(path)
    if is_tar_name(path):
        raise InputError("is a tar archive: name the power predictions inside it as "
                         f"ARCHIVE{ARCHIVE_SEPARATOR}MEMBER, e.g. "
                         f"{path}{ARCHIVE_SEPARATOR}{EURORA_PREDICTIONS_MEMBER}",
                         file=str(path))
    if not _is_parquet(path) and _looks_like_eurora(_first_text(path)):
        cols, report = _attach_eurora(jobs, str(path), _plain_text(path), platform)
        return with_power(jobs, cols), report
    kind, table, where = _read_table(path)
    trace_ids = np.asarray(jobs["job_id"], dtype=np.int64)
    ids = table["job_id"]
    known = np.isin(ids, trace_ids)
    if len(ids) and not known.any():
        raise where.error(f"none of the {len(ids):,} job ids is in the trace (e.g. "
                          f"{int(ids[0])}; the trace's ids run from {int(trace_ids.min())} "
                          f"to {int(trace_ids.max())}): is this the power file of another "
                          "trace?", "job_id")
    n = len(jobs)
    cols = {name: np.full(n, np.nan) for name in POWER_COLUMNS}
    matched = 0
    if len(ids):
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        at = np.minimum(np.searchsorted(sorted_ids, trace_ids), len(ids) - 1)
        found = sorted_ids[at] == trace_ids
        rows = order[at[found]]
        for name in POWER_COLUMNS:
            cols[name][found] = table[name][rows]
        matched = int(found.sum())
    report = PowerDataReport(source=str(path), kind=kind, jobs=n, rows=len(ids),
                             matched=matched, missing=n - matched,
                             unknown_ids=int(np.count_nonzero(~known)))
    return with_power(jobs, cols), report


# --------------------------------------------------------------------------------------
# series
# --------------------------------------------------------------------------------------


def read_power_series(path: str | Path) -> dict[str, np.ndarray]:
    """Per-job power samples from a Parquet or CSV file with columns ``job_id``,
    ``offset`` (s since the job's start) and ``watts`` (W of the whole job): a dict of
    those three arrays (int64, float64, float64) sorted by job id then offset (ties
    impossible: a repeated ``(job_id, offset)`` is an error). Errors as for a power
    table (module docstring), plus a negative or non-finite offset. The samples are
    expected every :data:`DEFAULT_PERIOD` s; the file is not required to be regular."""
    path = Path(path)
    _, cols, where = _read_columns(path, SERIES_COLUMNS, ints=("job_id",))
    _check_watts(cols, ("watts",), where)
    _check_watts(cols, ("offset",), where, unit="s", top=math.inf)
    far = np.flatnonzero(beyond_limit(cols["offset"]))
    if far.size:  # the engine's time limit (sim.limits)
        raise where.error(str(time_problem(int(cols["offset"][far[0]]), "offset")), "offset",
                          int(far[0]))
    dup = _first_duplicate([cols["job_id"], cols["offset"]])
    if dup is not None:
        later, first = dup
        at = where.line_of(first) if where.csv else first + 1
        raise where.error(f"job {int(cols['job_id'][later])} has two samples at offset "
                          f"{float(cols['offset'][later]):g} s (first on "
                          f"{'line' if where.csv else 'row'} {at})", "offset", later)
    order = np.lexsort((cols["offset"], cols["job_id"]))
    return {name: np.ascontiguousarray(cols[name][order]) for name in SERIES_COLUMNS}


@dataclass(frozen=True)
class PowerSeriesReport:
    """What :func:`match_power_series` kept.

    ``source``: the file (or a label); ``samples``: samples given; ``jobs``: rows of the
    trace; ``matched``: trace rows whose job id has samples; ``unknown_ids``: distinct
    job ids of the series not in the trace and ``unknown_samples`` their samples (both
    skipped); ``median_step``: the median gap (s) between a job's consecutive samples
    (None when no job has two), to compare with the sampling period.
    """

    source: str
    samples: int
    jobs: int
    matched: int
    unknown_ids: int
    unknown_samples: int
    median_step: float | None

    def describe(self) -> str:
        """One line: the source and the counts."""
        step = "" if self.median_step is None else f", median step {self.median_step:g} s"
        return (f"power series from {self.source}: {self.samples:,} samples{step}; "
                f"{self.matched:,} of {self.jobs:,} jobs have a series (the others use "
                f"their power_mean); {self.unknown_ids:,} job ids ({self.unknown_samples:,} "
                "samples) not in the trace (skipped)")


def match_power_series(jobs: JobTable, series: Mapping[str, np.ndarray],
                       source: str = "power series"
                       ) -> tuple[dict[str, np.ndarray], PowerSeriesReport]:
    """The samples of ``series`` (:func:`read_power_series` layout, any row order) whose
    job id is in ``jobs``, sorted by job id then offset, and a report. Documented skip,
    counted: samples of job ids not in the trace (``report.unknown_ids``,
    ``unknown_samples``). Errors (:class:`~dispatchlab.core.errors.InputError` naming
    ``source`` and the field): columns of different lengths, negative or non-finite
    watts or offsets, a job with two samples at one offset (its offsets would not
    increase), no sample at all, and no sample whose job id is in the trace (the series
    of another trace)."""
    try:
        ids = np.asarray(series["job_id"], dtype=np.int64)
        offsets = np.asarray(series["offset"], dtype=np.float64)
        watts = np.asarray(series["watts"], dtype=np.float64)
    except KeyError as exc:
        raise InputError(f"missing column {exc.args[0]} (a power series needs "
                         f"{', '.join(SERIES_COLUMNS)})", file=source,
                         field=str(exc.args[0])) from None
    if not (len(ids) == len(offsets) == len(watts)):
        raise InputError(f"columns of different lengths ({len(ids)}, {len(offsets)}, "
                         f"{len(watts)} values)", file=source)
    for name, values, unit, top in (("watts", watts, "W", MAX_JOB_WATTS),
                                    ("offset", offsets, "s", math.inf)):
        bad = np.flatnonzero(~(np.isfinite(values) & (values >= 0) & (values <= top)))
        if bad.size:
            v = float(values[bad[0]])
            what = ("not a finite number" if not math.isfinite(v) else "negative" if v < 0
                    else f"absurdly large (above {top:g} {unit})")
            raise InputError(f"{what}: {v!r} {unit} (job {int(ids[bad[0]])})", file=source,
                             field=name)
    far = np.flatnonzero(beyond_limit(offsets))
    if far.size:  # the engine's time limit (sim.limits)
        raise InputError(f"{time_problem(int(offsets[far[0]]), 'offset')} "
                         f"(job {int(ids[far[0]])})", file=source, field="offset")
    if ids.size == 0:
        raise InputError("no samples: a power series needs rows of job_id, offset, "
                         "watts", file=source)
    step_id, step_off = np.diff(ids), np.diff(offsets)
    if not bool(np.all((step_id > 0) | ((step_id == 0) & (step_off > 0)))):
        order = np.lexsort((offsets, ids))  # not in (job, offset) order yet: sort
        ids, offsets, watts = ids[order], offsets[order], watts[order]
        same = (ids[1:] == ids[:-1]) & (offsets[1:] == offsets[:-1])
        if same.any():
            k = int(np.flatnonzero(same)[0])
            raise InputError(f"job {int(ids[k])} has two samples at offset "
                             f"{float(offsets[k]):g} s: a job's offsets must increase",
                             file=source, field="offset")
    trace_ids = np.asarray(jobs["job_id"], dtype=np.int64)
    trace_sorted = np.unique(trace_ids)
    at = np.minimum(np.searchsorted(trace_sorted, ids), max(len(trace_sorted) - 1, 0))
    known = (trace_sorted[at] == ids) if len(trace_sorted) else np.zeros(len(ids), bool)
    if not known.any():
        raise InputError(f"none of the {len(np.unique(ids)):,} job ids of the series is in "
                         f"the trace (e.g. {int(ids[0])}; the trace's ids run from "
                         f"{int(trace_ids.min()) if trace_ids.size else '-'} to "
                         f"{int(trace_ids.max()) if trace_ids.size else '-'}): is this the "
                         "power series of another trace?", file=source, field="job_id")
    kept = {"job_id": ids[known], "offset": offsets[known], "watts": watts[known]}
    k_ids = kept["job_id"]
    steps = np.diff(kept["offset"])[k_ids[1:] == k_ids[:-1]]
    report = PowerSeriesReport(
        source=source, samples=int(ids.size), jobs=len(jobs),
        matched=int((k_ids[np.minimum(np.searchsorted(k_ids, trace_ids), len(k_ids) - 1)]
                     == trace_ids).sum()),
        unknown_ids=len(np.unique(ids[~known])),
        unknown_samples=int((~known).sum()),
        median_step=float(np.median(steps)) if steps.size else None)
    return kept, report


def series_power(series: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Summarise a power series (:func:`read_power_series` layout) per job: a dict with
    ``job_id`` (sorted, unique) and ``power_mean``, ``power_max``, ``power_std`` (W; mean
    and population standard deviation over the job's samples, each sample weighted
    equally: a constant period is assumed)."""
    ids = np.asarray(series["job_id"], dtype=np.int64)
    watts = np.asarray(series["watts"], dtype=np.float64)
    if ids.size == 0:
        empty = np.zeros(0)
        return {"job_id": ids.copy(), "power_mean": empty, "power_max": empty.copy(),
                "power_std": empty.copy()}
    order = np.argsort(ids, kind="stable")
    ids, watts = ids[order], watts[order]
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    counts = np.diff(np.r_[starts, ids.size])
    mean = np.add.reduceat(watts, starts) / counts
    dev = watts - np.repeat(mean, counts)
    std = np.sqrt(np.add.reduceat(dev * dev, starts) / counts)
    return {"job_id": ids[starts], "power_mean": mean,
            "power_max": np.maximum.reduceat(watts, starts), "power_std": std}


# --------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------


def _write_arrow(at: pa.Table, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    try:
        if path.name.lower().endswith((".csv", ".csv.gz")):
            if path.name.lower().endswith(".gz"):
                with pa.CompressedOutputStream(str(path), "gzip") as out:
                    pacsv.write_csv(at, out)
            else:
                pacsv.write_csv(at, str(path))
        else:

            with local_sink(path) as sink:
                pq.write_table(at, sink)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot write: {one_line(exc)}", file=str(path)) from None


def write_power(path: str | Path, jobs: JobTable,
                columns: Mapping[str, np.ndarray]) -> int:
    """Write ``job_id`` and the three power columns (W) of the rows of ``jobs`` whose
    power is known (all three finite; rows with ``NaN`` are left out: read back, they are
    missing) to a Parquet file (CSV when the name ends with ``.csv``/``.csv.gz``),
    readable by :func:`attach_power`. ``columns`` maps each power column to an array of
    ``len(jobs)`` values (e.g. :func:`dispatchlab.power.synth.synthesize_power`'s). A
    trace with a job id on two rows is an error (the file could not be joined back).
    Returns the number of rows written."""
    import pyarrow as pa

    path = Path(path)
    n = len(jobs)
    for name in POWER_COLUMNS:
        if name not in columns:
            raise InputError(f"no {name} column to write", field=name)
        if len(columns[name]) != n:
            raise InputError(f"{name} has {len(columns[name])} values for {n} jobs",
                             field=name)
    ids = np.asarray(jobs["job_id"], dtype=np.int64)
    dup = _first_duplicate([ids])
    if dup is not None:
        raise InputError(f"the trace has job id {int(ids[dup[0]])} on two rows: a power "
                         "file is keyed by job id", file=str(path), field="job_id")
    values = {name: np.asarray(columns[name], dtype=np.float64) for name in POWER_COLUMNS}
    keep = np.ones(n, dtype=bool)
    for v in values.values():
        keep &= np.isfinite(v)
    data: dict[str, np.ndarray] = {"job_id": ids[keep]}
    data.update({name: v[keep] for name, v in values.items()})
    _write_arrow(pa.table(data), path)
    return int(keep.sum())


def write_power_series(path: str | Path, series: Mapping[str, np.ndarray]) -> int:
    """Write a power series (``job_id``, ``offset`` s, ``watts`` W) to Parquet (CSV when
    the name ends with ``.csv``/``.csv.gz``), readable by :func:`read_power_series`.
    Returns the number of samples written."""
    import pyarrow as pa

    data = {"job_id": np.asarray(series["job_id"], dtype=np.int64),
            "offset": np.asarray(series["offset"], dtype=np.float64),
            "watts": np.asarray(series["watts"], dtype=np.float64)}
    _write_arrow(pa.table(data), Path(path))
    return int(data["job_id"].size)

