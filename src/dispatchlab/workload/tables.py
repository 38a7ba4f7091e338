"""Job tables as Parquet or CSV files (via pyarrow), round-trip exact.

Layout: one column per entry of ``JobTable.columns`` (the SWF fields, ``units``,
``requested_time``, ``line``, in that order), plus one ``res_<name>`` column per
resource (``res_core``). Integer columns are int64, ``avg_cpu``/``used_mem``
float64. A Parquet file also stores the :class:`TraceInfo` as JSON under the
schema metadata key ``dispatchlab.trace_info``, so reading it back gives the same
table *and* the same info (``source`` still names the original trace). A CSV file
has a header row with the column names and no info; floats are written with the
shortest representation that reads back exactly.

Reading validates like the SWF reader: the columns ``submit`` and ``run`` and one of
``units``/``req_procs``/``alloc_procs`` are required (else :class:`InputError`
naming the file and the column); a null or non-numeric value is an error naming the
column and row (the CSV line: the header is line 1); integral decimals (``3600.0``)
are accepted in integer columns, other decimals are an error in the columns the
simulation uses and are rounded (and counted in ``info.rounded``) elsewhere; a job
with processors and a run time must have ``submit >= 0`` and ``req_time`` may not be
below -1. Missing SWF columns are filled with -1, missing ``units`` and
``requested_time`` are derived as for SWF, a missing ``line`` is the CSV line (0 for
Parquet), and without ``res_`` columns each unit is one core. Rows are stably
sorted by submit time. Other numeric columns are kept; non-numeric ones are ignored.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.workload.jobs import (  # the Arrow layout is the table's own (jobs.py)
    ALL_FIELDS,
    FLOAT_FIELDS,
    INFO_KEY,
    RES_PREFIX,
    SWF_FIELDS,
    JobTable,
    TraceInfo,
    arrow_to_pandas,
    info_to_dict,
    table_to_arrow,
)
from dispatchlab.workload.swf import SIM_FIELDS, finish_table

if TYPE_CHECKING:  # pyarrow (about 40 MB) is imported by the functions that use it
    import pyarrow as pa

__all__ = [
    "INFO_KEY",
    "RES_PREFIX",
    "arrow_to_pandas",
    "info_from_dict",
    "info_to_dict",
    "read_csv",
    "read_parquet",
    "read_table",
    "table_to_arrow",
    "write_csv",
    "write_parquet",
]

_EXACT = float(2**53)


def info_from_dict(d: dict[str, Any]) -> TraceInfo:
    """The inverse of :func:`info_to_dict` (unknown keys are ignored)."""
    known = {f.name for f in fields(TraceInfo)}
    kwargs = {k: v for k, v in d.items() if k in known}
    if "header_lines" in kwargs:
        kwargs["header_lines"] = tuple(kwargs["header_lines"])
    return TraceInfo(**kwargs)


def write_parquet(table: JobTable, path: str | Path) -> None:
    """Write ``table`` (columns, resources and info) as a Parquet file."""
    import pyarrow.parquet as pq

    try:
        with local_sink(path) as sink:
            pq.write_table(table_to_arrow(table), sink, compression="zstd")
    except OSError as exc:
        raise InputError(f"cannot write: {exc}", file=str(path)) from exc


def local_sink(path: str | Path):
    """A pyarrow output stream writing the local file ``path`` (a context manager),
    for Parquet writes: given a path string, pyarrow reads ``out-easy:order=sjf/
    jobs.parquet`` as a URI of scheme ``out-easy``. Every output path of dispatchlab
    is a local path."""
    import pyarrow as pa

    return pa.OSFile(str(path), "wb")


def write_csv(table: JobTable, path: str | Path) -> None:
    """Write ``table`` (columns and resources, not the info) as a CSV file with a header."""
    import pyarrow.csv as pacsv

    try:
        pacsv.write_csv(table_to_arrow(table, with_info=False), str(path))
    except OSError as exc:
        raise InputError(f"cannot write: {exc}", file=str(path)) from exc


# --------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------


class _Where:
    """Locates a row for error messages: a CSV line (header = line 1) or a table row."""

    def __init__(self, path: str, csv: bool) -> None:
        self.path = path
        self.csv = csv

    def error(self, message: str, column: str, row: int | None = None) -> InputError:
        if row is None:
            return InputError(message, file=self.path, field=column)
        if self.csv:
            return InputError(message, file=self.path, line=row + 2, field=column)
        return InputError(f"{message} (row {row + 1})", file=self.path, field=column)


def _numeric(col: pa.ChunkedArray, name: str, where: _Where) -> np.ndarray:
    import pyarrow as pa

    if col.null_count:
        row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
        raise where.error("missing value (empty cell / null)", name, row)
    t = col.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)):
        raise where.error(f"not numeric (type {t})", name)
    return col.to_numpy()


def _as_int(
    values: np.ndarray, name: str, where: _Where, rounded: dict[str, int] | None
) -> np.ndarray:
    """int64 values; non-integral ones are an error if ``rounded`` is None or the column
    is used by the simulation, else rounded and counted in ``rounded``."""
    if values.dtype.kind in "iub":
        return values.astype(np.int64, copy=False)
    huge = np.flatnonzero(~(np.abs(values) < _EXACT))
    if huge.size:
        raise where.error(f"value out of range: {values[huge[0]]!r}", name, int(huge[0]))
    frac = np.flatnonzero(values != np.floor(values))
    if frac.size:
        strict = rounded is None or name in SIM_FIELDS
        if strict or name in ("units", "requested_time", "line"):
            raise where.error(f"not a whole number: {values[frac[0]]!r}", name, int(frac[0]))
        assert rounded is not None
        rounded[name] = rounded.get(name, 0) + int(frac.size)
        values = np.rint(values)
    return values.astype(np.int64)


def _from_arrow(at: pa.Table, where: _Where, info: TraceInfo | None) -> JobTable:
    import pyarrow as pa

    names = at.column_names
    present = set(names)
    for required in ("submit", "run"):
        if required not in present:
            raise where.error(f"missing required column {required!r}", required)
    if not present & {"units", "req_procs", "alloc_procs"}:
        raise where.error("missing required column 'units' (or 'req_procs'/'alloc_procs')", "units")
    n = at.num_rows
    if n == 0:
        raise InputError("no jobs: the table has no rows", file=where.path)
    rounded: dict[str, int] = {}
    cols: dict[str, np.ndarray] = {}
    extra: dict[str, np.ndarray] = {}
    resources: dict[str, np.ndarray] = {}
    for name in names:
        col = at.column(name)
        if name in ALL_FIELDS:
            values = _numeric(col, name, where)
            if name in FLOAT_FIELDS:
                cols[name] = values.astype(np.float64)
            else:
                cols[name] = _as_int(values, name, where, rounded)
        elif name.startswith(RES_PREFIX) and len(name) > len(RES_PREFIX):
            values = _numeric(col, name, where)
            resources[name[len(RES_PREFIX) :]] = _as_int(values, name, where, None)
        else:
            t = col.type
            if col.null_count == 0 and (pa.types.is_integer(t) or pa.types.is_floating(t)):
                extra[name] = col.to_numpy()
            elif pa.types.is_string(t) or pa.types.is_large_string(t):
                # text columns (job_ref, account, ...): object arrays, null -> ""
                extra[name] = np.array(["" if v is None else v for v in col.to_pylist()],
                                       dtype=object)
    for name in SWF_FIELDS:
        if name not in cols:
            dtype = np.float64 if name in FLOAT_FIELDS else np.int64
            cols[name] = np.full(n, -1, dtype=dtype)
    if "line" not in cols:
        cols["line"] = np.arange(2, n + 2, dtype=np.int64) if where.csv else np.zeros(n, np.int64)
    # the checks the SWF reader makes on the fields the simulation uses
    units = cols.get("units")
    if units is None:
        units = np.where(cols["req_procs"] != -1, cols["req_procs"], cols["alloc_procs"])
    nosub = np.flatnonzero((cols["submit"] < 0) & (units > 0) & (cols["run"] >= 0))
    if nosub.size:
        v = int(cols["submit"][nosub[0]])
        raise where.error(
            f"{'missing' if v == -1 else 'negative'} submit time {v} for a job with "
            "processors and a run time",
            "submit",
            int(nosub[0]),
        )
    negreq = np.flatnonzero(cols["req_time"] < -1)
    if negreq.size:
        v = int(cols["req_time"][negreq[0]])
        raise where.error(
            f"negative requested time {v} (only -1 = missing is allowed)",
            "req_time",
            int(negreq[0]),
        )
    del units
    if info is None:
        info = TraceInfo(source=where.path, lines_read=n)
    for name, count in rounded.items():
        info.rounded[name] = info.rounded.get(name, 0) + count
    cols.update(extra)
    return finish_table(cols, resources or None, info)


def read_parquet(path: str | Path) -> JobTable:
    """Read a table written by :func:`write_parquet` (or any Parquet job table)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    where = _Where(str(path), csv=False)
    _check_file(path)
    try:
        at = pq.read_table(str(path))
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"cannot read Parquet: {exc}", file=str(path)) from exc
    info = None
    meta = at.schema.metadata or {}
    if INFO_KEY in meta:
        try:
            info = info_from_dict(json.loads(meta[INFO_KEY]))
        except (ValueError, TypeError) as exc:
            raise InputError(f"bad {INFO_KEY.decode()} metadata: {exc}", file=str(path)) from exc
    return _from_arrow(at, where, info)


_CSV_COL_RE = re.compile(r"CSV column #(\d+)")


def read_csv(path: str | Path) -> JobTable:
    """Read a CSV job table (header row with the column names, comma-separated)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    path = Path(path)
    where = _Where(str(path), csv=True)
    _check_file(path)
    types: dict[str, pa.DataType] = {
        name: pa.float64() if name in FLOAT_FIELDS else pa.int64() for name in ALL_FIELDS
    }
    header: list[str] | None = None
    for _ in range(len(ALL_FIELDS) + 2):
        try:
            at = pacsv.read_csv(str(path), convert_options=pacsv.ConvertOptions(column_types=types))
            break
        except pa.ArrowInvalid as exc:
            m = _CSV_COL_RE.search(str(exc))
            if m is None:
                raise InputError(f"cannot read CSV: {exc}", file=str(path)) from exc
            if header is None:
                header = _csv_header(path)
            name = header[int(m.group(1))]
            if types.get(name) == pa.int64():  # maybe decimals: read as float, then check
                types[name] = pa.float64()
                continue
            raise _csv_bad_value(path, name, where) from exc
        except OSError as exc:
            raise InputError(f"cannot read CSV: {exc}", file=str(path)) from exc
    else:  # pragma: no cover - each retry widens one column
        raise InputError("cannot read CSV", file=str(path))
    return _from_arrow(at, where, None)


def _csv_header(path: Path) -> list[str]:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace", newline="") as fh:
        return next(csv.reader([fh.readline()]), [])


def _csv_bad_value(path: Path, name: str, where: _Where) -> InputError:
    """The error for the first cell of column ``name`` that is not a number."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    at = pacsv.read_csv(
        str(path),
        convert_options=pacsv.ConvertOptions(
            include_columns=[name], column_types={name: pa.string()}
        ),
    )
    for row, value in enumerate(at.column(name).to_pylist()):
        try:
            float(value)
        except (TypeError, ValueError):
            return where.error(f"not a number: {value!r}", name, row)
    return where.error("not a number", name)


def _check_file(path: Path) -> None:
    if not path.exists():
        raise InputError("no such file", file=str(path))
    if path.is_dir():
        raise InputError("is a directory, not a table file", file=str(path))


def read_table(path: str | Path) -> JobTable:
    """Read a Parquet (``.parquet``/``.pq``) or CSV (``.csv``, ``.csv.gz``) job table."""
    p = Path(path)
    name = p.name.lower()
    if name.endswith((".parquet", ".pq")):
        return read_parquet(p)
    if name.endswith((".csv", ".csv.gz")):
        return read_csv(p)
    raise InputError(
        "unknown table format: expected .parquet, .pq, .csv or .csv.gz", file=str(path)
    )
