"""The columnar job table every layer above ``workload`` reads.

A :class:`JobTable` holds one numpy array per field, all of the same length ``n``,
with jobs **ordered by submit time with a stable sort**: ties keep the order of the
source file. That order is the *file order* used everywhere for tie-breaking
(queue order = submit time, then file order = row index).

Times are integer seconds in the trace's own origin (no re-basing unless a window
or fraction was selected when the trace was loaded). ``-1`` means *missing*, as in
the Standard Workload Format (SWF).

Columns (int64 unless noted):

========================  ===========================================================
``job_id``                SWF field 1, the job number
``submit``                SWF field 2, submit time (s)
``wait``                  SWF field 3, the wait time recorded in the trace (s)
``run``                   SWF field 4, the actual run time (s)
``alloc_procs``           SWF field 5, allocated processors
``avg_cpu``               SWF field 6, average CPU time used (s, float64: fractional
                          in several PWA logs)
``used_mem``              SWF field 7, used memory per processor (KB, float64)
``req_procs``             SWF field 8, requested processors
``req_time``              SWF field 9, requested time as written in the file (s)
``req_mem``               SWF field 10, requested memory per processor (KB)
``status``                SWF field 11
``user``                  SWF field 12
``group``                 SWF field 13
``app``                   SWF field 14, executable (application) number
``queue``                 SWF field 15
``partition``             SWF field 16
``prev_job``              SWF field 17, preceding job number
``think_time``            SWF field 18 (s)
``units``                 derived: job units requested (field 8, or field 5 when
                          field 8 is -1)
``requested_time``        derived: the wall-time used by the simulator (field 9, or
                          the fallback described in :class:`TraceInfo`)
``line``                  derived: 1-based line number in the source file (0 when the
                          table was not read from a text file)
========================  ===========================================================

Optional columns, present when the source has them (readers of cluster logs: Slurm
``sacct``, PBS accounting, Alea's extended SWF; see :data:`OPTIONAL_FIELDS`):

========================  ===========================================================
``job_ref``               str: the job id as the source wrote it (``123_4``,
                          ``123[4].server``, ``123+``)
``account``, ``qos``      str: the job's account and quality of service ("" missing)
``eligible``              int64: the time the job became eligible to start (s, same
                          origin as ``submit``; -1 missing)
``req_gpus``              int64: GPUs requested by the job in total (-1 missing)
``nodes_used``            int64: nodes the job was given in the recorded schedule
                          (-1 missing)
``alloc_nodes``           str: the recorded placement, ``host:cores,host:cores``
                          ("" missing); kept, never used by the simulation
``hot_start``             int64: 1 for the dummy jobs of a hot start (Borghesi et al. 2018's
                          "HS = x %", :mod:`dispatchlab.sim.hotstart`), 0 for the
                          trace's jobs
``req_nodes``             int64: nodes the job asked for (Slurm ``ReqNodes`` /
                          ``ReqTRES`` ``node=``; PBS select chunks or ``nodes=N``;
                          -1 missing)
``req_mem_mb``            int64: the job's total requested memory in MB (MiB, rounded
                          up; 0 = Slurm's "all the memory of each node"; -1 missing)
``alloc_gpus``            int64: GPUs allocated (``AllocTRES``; -1 missing)
``alloc_mem_mb``          int64: memory allocated in MB (``AllocTRES``; -1 missing)
``gpu_type``              str: the GPU type of a typed request (``gres/gpu:a100`` ->
                          ``a100``; "" untyped or none)
``features``              str: the node features the job asked for (Slurm
                          ``--constraint``, the ``Constraints`` column; "" none)
``exclusive``             int64: 1 when the log says the job held whole nodes (PBS
                          ``place=excl``, Torque ``#excl``), 0 when it says not, -1
                          when it does not say (sacct)
``unservable``            str: why the platform cannot serve the job ("" when it
                          can), set by :func:`dispatchlab.workload.requests.fit_requests`;
                          the engine rejects such jobs with that reason
========================  ===========================================================

Integer columns that stand for names (``user``, ``group``, ``queue``, ``app``,
``partition`` when read from a log that names them) have a name table in
``info.codes``: ``info.codes["user"][k]`` is the name of user code ``k``.

``resources`` maps each resource name to the per-unit request (int64 arrays of length
``n``); an SWF job asks for ``units`` units of ``{"core": 1}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: SWF field names, in file order (fields 1..18).
SWF_FIELDS: tuple[str, ...] = (
    "job_id",
    "submit",
    "wait",
    "run",
    "alloc_procs",
    "avg_cpu",
    "used_mem",
    "req_procs",
    "req_time",
    "req_mem",
    "status",
    "user",
    "group",
    "app",
    "queue",
    "partition",
    "prev_job",
    "think_time",
)
#: SWF fields stored as float64 because real logs write fractions there.
FLOAT_FIELDS: frozenset[str] = frozenset({"avg_cpu", "used_mem"})
#: Columns derived when a trace is loaded.
DERIVED_FIELDS: tuple[str, ...] = ("units", "requested_time", "line")
#: Every column of a loaded job table: the SWF fields, then the derived ones.
ALL_FIELDS: tuple[str, ...] = SWF_FIELDS + DERIVED_FIELDS
#: Optional columns of cluster-log readers (str columns are numpy object arrays).
OPTIONAL_FIELDS: dict[str, str] = {
    "job_ref": "str", "account": "str", "qos": "str", "eligible": "int",
    "req_gpus": "int", "nodes_used": "int", "alloc_nodes": "str", "hot_start": "int",
    "req_nodes": "int", "req_mem_mb": "int", "alloc_gpus": "int", "alloc_mem_mb": "int",
    "gpu_type": "str", "features": "str", "exclusive": "int", "unservable": "str",
}


def _span_text(seconds: int) -> str:
    """A duration for people: ``45 s``, ``12.5 min``, ``7.3 h`` or ``334.2 days``."""
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.1f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:,.1f} days"


@dataclass
class TraceInfo:
    """Facts about where a job table came from and what loading did to it.

    ``header`` holds the SWF header comments as raw strings (key -> value);
    ``max_procs``/``max_nodes``/``max_runtime``/``unix_start_time``/``max_jobs``/
    ``max_records`` are the leading integers of those header values (``None`` when
    absent or without a leading integer, e.g. ``N/A``).

    ``lines_read`` counts the data records a reader saw: every line that holds a
    record (a job line of SWF or Alea, a sacct record, a PBS accounting record, a
    Eurora job line), malformed ones included; not blank lines, comments or a header.
    Every record is accounted for, in every reader: right after reading,
    ``lines_read == len(table) + malformed_skipped + sum(skipped.values())``, and after
    cleaning and filters ``+ sum(dropped.values())`` (nothing is lost silently, also
    under ``lenient``). A CSV job table counts its rows; a Parquet one keeps the info
    it was written with.
    ``dropped`` counts removed jobs per reason (cleaning and filters);
    ``malformed_skipped`` counts records (lines) skipped in lenient mode;
    ``estimate_fallbacks`` counts jobs whose requested time was -1 and got
    ``estimate_fallback_value`` from ``estimate_fallback_source``
    (``"MaxRuntime"``, ``"max requested time"``, or ``"max run time"`` when no line
    has a requested time and the header has no MaxRuntime).
    ``time_offset`` is what was subtracted from all times when a window or fraction
    re-based the table to t=0 (0 otherwise).
    ``header_lines`` keeps the comment lines of the source file verbatim (in file
    order, so that :func:`~dispatchlab.workload.swf.write_swf` can preserve them);
    ``rounded`` counts, per column, the non-integral values found in integer SWF
    fields that the simulation does not use (they are rounded to the nearest
    integer, see :mod:`dispatchlab.workload.swf`).
    ``format`` names the reader (``swf``, ``sacct``, ``pbs``, ``alea``, ``parquet``,
    ``csv``); ``codes`` holds the name tables of integer-coded columns (see the module
    docstring); ``skipped`` counts the records a reader leaves out by a documented rule
    (job steps folded into their job, array placeholders, ...), by reason, unlike
    ``dropped`` (cleaning and filters) and ``malformed_skipped`` (lenient mode);
    ``companions`` names files read with the trace (``{"machines": path}`` for Alea's
    machine file), which the platform layer may use.
    """

    source: str = "<memory>"
    header: dict[str, str] = field(default_factory=dict)
    max_procs: int | None = None
    max_nodes: int | None = None
    max_runtime: int | None = None
    unix_start_time: int | None = None
    max_jobs: int | None = None
    max_records: int | None = None
    lines_read: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    malformed_skipped: int = 0
    estimate_fallbacks: int = 0
    estimate_fallback_source: str | None = None
    estimate_fallback_value: int | None = None
    time_offset: int = 0
    header_lines: tuple[str, ...] = ()
    rounded: dict[str, int] = field(default_factory=dict)
    format: str = "swf"
    codes: dict[str, list[str]] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    companions: dict[str, str] = field(default_factory=dict)


@dataclass(eq=False)
class JobTable:
    """Jobs as columns (see the module docstring for the columns and their order)."""

    columns: dict[str, np.ndarray]
    resources: dict[str, np.ndarray]
    info: TraceInfo = field(default_factory=TraceInfo)

    def __post_init__(self) -> None:
        n = len(self.columns["submit"])
        for name, col in {**self.columns, **self.resources}.items():
            if len(col) != n:
                raise ValueError(f"column {name!r} has {len(col)} rows, expected {n}")

    def __len__(self) -> int:
        return len(self.columns["submit"])

    @overload
    def __getitem__(self, key: str) -> np.ndarray: ...

    @overload
    def __getitem__(self, key: slice | np.ndarray | Sequence[int] | Sequence[bool]
                    ) -> JobTable: ...

    def __getitem__(self, key: str | slice | np.ndarray | Sequence[int] | Sequence[bool]
                    ) -> np.ndarray | JobTable:
        """``jobs["submit"]``: a column. ``jobs[:3000]``, ``jobs[mask]`` (a boolean array
        of one value per job), ``jobs[rows]`` (increasing row positions, negative ones
        counted from the end): a new :class:`JobTable` with those jobs, in table order,
        with copies of their rows (resources included) and a copy of ``info``.

        A table keeps its jobs in submit order, so a slice with a negative step and row
        positions that are not increasing (which would reorder or repeat jobs) raise
        :class:`ValueError`; a single integer raises :class:`TypeError` (``jobs[k:k+1]``
        is the table of job row ``k``)."""
        if isinstance(key, str):
            return self.columns[key]
        return self.take(self._rows(key))

    def _rows(self, key: object) -> np.ndarray:
        """The increasing int64 row positions ``key`` selects (see :meth:`__getitem__`)."""
        n = len(self)
        if isinstance(key, slice):
            if key.step is not None and key.step < 0:
                raise ValueError("a JobTable keeps its jobs in submit order: a slice with a "
                                 f"negative step ({key}) would reverse them")
            return np.arange(n, dtype=np.int64)[key]
        if isinstance(key, int | np.integer):
            raise TypeError(f"jobs[{key}]: a JobTable is indexed by column name or by a "
                            f"selection of rows; jobs[{key}:{key + 1}] is the table of that "
                            f"job, jobs[\"submit\"][{key}] one of its values")
        index = np.asarray(key)
        if index.dtype == bool:
            if index.shape != (n,):
                raise ValueError(f"a boolean mask over a JobTable needs one value per job "
                                 f"({n}), got shape {index.shape}")
            return np.flatnonzero(index)
        if index.ndim != 1 or not (np.issubdtype(index.dtype, np.integer) or len(index) == 0):
            raise TypeError(f"cannot select jobs with {type(key).__name__} {key!r:.60}: give a "
                            "column name, a slice, a boolean mask or row positions")
        rows = np.arange(n, dtype=np.int64)[index.astype(np.int64)]
        if len(rows) > 1 and not bool((np.diff(rows) > 0).all()):
            raise ValueError("row positions must be increasing: a JobTable keeps its jobs "
                             "in submit order, each once (sort them first: np.unique(rows))")
        return rows

    def __repr__(self) -> str:
        """Class, number of jobs, source, submit span and column names (no values)."""
        n = len(self)
        source = self.info.source
        if not source.startswith("<"):
            source = Path(source).name
        span = ""
        if n:
            submit = np.asarray(self.columns["submit"])
            lo, hi = int(submit.min()), int(submit.max())
            span = f", submitted over {_span_text(hi - lo)} (t = {lo:,} .. {hi:,} s)"
        return (f"JobTable: {n:,} jobs from {source}{span}\n"
                f"  columns: {', '.join(self.columns)}\n"
                f"  resources (per unit): {', '.join(self.resources) or 'none'}")

    def to_arrow(self) -> pa.Table:
        """The table as a pyarrow Table: one column per entry of ``columns``, one
        ``res_<name>`` column per resource, the :class:`TraceInfo` as JSON in the schema
        metadata (the layout of :func:`dispatchlab.workload.tables.write_parquet`)."""
        return table_to_arrow(self)

    def to_pandas(self) -> pd.DataFrame:
        """The table as a pandas DataFrame (the columns of :meth:`to_arrow`; needs
        pandas, which dispatchlab does not require: :class:`ImportError` saying so
        when it is absent)."""
        return arrow_to_pandas(self.to_arrow())

    @property
    def n(self) -> int:
        return len(self)

    def take(self, index: np.ndarray) -> JobTable:
        """A new table with rows ``index`` (a boolean mask or integer positions)."""
        return replace(
            self,
            columns={k: v[index] for k, v in self.columns.items()},
            resources={k: v[index] for k, v in self.resources.items()},
            info=replace(self.info, dropped=dict(self.info.dropped), header=dict(self.info.header)),
        )

    @classmethod
    def from_arrays(
        cls,
        *,
        submit: np.ndarray | list[int],
        run: np.ndarray | list[int],
        units: np.ndarray | list[int],
        requested_time: np.ndarray | list[int] | None = None,
        resources: dict[str, np.ndarray | list[int]] | None = None,
        info: TraceInfo | None = None,
        **extra: np.ndarray | list[int],
    ) -> JobTable:
        """Build a table from a few columns (handy in tests and notebooks).

        Missing SWF fields are filled with -1, ``job_id`` with 1..n, ``requested_time``
        with ``run`` (exact estimates), ``resources`` with one core per unit. Rows are
        stably sorted by ``submit``.
        """
        submit_a = np.asarray(submit, dtype=np.int64)
        n = len(submit_a)
        cols: dict[str, np.ndarray] = {}
        for name in SWF_FIELDS:
            dtype = np.float64 if name in FLOAT_FIELDS else np.int64
            cols[name] = np.full(n, -1, dtype=dtype)
        cols["job_id"] = np.arange(1, n + 1, dtype=np.int64)
        cols["submit"] = submit_a
        cols["run"] = np.asarray(run, dtype=np.int64)
        cols["units"] = np.asarray(units, dtype=np.int64)
        cols["req_procs"] = cols["units"].copy()
        rt = cols["run"] if requested_time is None else requested_time
        cols["requested_time"] = np.asarray(rt, dtype=np.int64).copy()
        cols["req_time"] = cols["requested_time"].copy()
        cols["line"] = np.zeros(n, dtype=np.int64)
        for name, values in extra.items():
            if name not in cols:
                raise TypeError(f"unknown job column {name!r}")
            cols[name] = np.asarray(values, dtype=cols[name].dtype)
        res = {"core": np.ones(n, dtype=np.int64)} if resources is None else {
            k: np.asarray(v, dtype=np.int64) for k, v in resources.items()
        }
        order = np.argsort(submit_a, kind="stable")
        table = cls(columns=cols, resources=res, info=info or TraceInfo())
        if n and np.any(order != np.arange(n)):
            table = table.take(order)
        return table

    def compact(self) -> JobTable:
        """Store every column whose rows all hold one value (e.g. an SWF field that is -1
        throughout) as a read-only broadcast view: same values, no memory. Returns self."""
        n = len(self)
        if n == 0:
            return self
        for group in (self.columns, self.resources):
            for name, col in group.items():
                if col.strides != (0,) and bool((col == col[0]).all()):
                    group[name] = np.broadcast_to(col[:1].copy(), (n,))
        return self

    def source_path(self) -> Path | None:
        return None if self.info.source.startswith("<") else Path(self.info.source)


# ------------------------------------------------ the Arrow layout of a job table

#: Parquet schema-metadata key holding the TraceInfo JSON.
INFO_KEY = b"dispatchlab.trace_info"
#: Prefix of the resource columns.
RES_PREFIX = "res_"


def info_to_dict(info: TraceInfo) -> dict[str, Any]:
    """A JSON-ready dict of ``info``."""
    d = asdict(info)
    d["header_lines"] = list(info.header_lines)
    return d


def table_to_arrow(table: JobTable, *, with_info: bool = True) -> pa.Table:
    """The table as a pyarrow Table (zero-copy for numeric columns): one column per
    entry of ``columns``, one ``res_<name>`` (:data:`RES_PREFIX`) column per resource,
    the :class:`TraceInfo` as JSON under :data:`INFO_KEY` in the schema metadata
    (``with_info``). pyarrow is imported on first use (not at start-up)."""
    import pyarrow as pa

    names: list[str] = []
    arrays: list[pa.Array] = []
    for name, col in table.columns.items():
        names.append(name)
        arrays.append(pa.array(np.asarray(col)))
    for name, col in table.resources.items():
        names.append(RES_PREFIX + name)
        arrays.append(pa.array(np.asarray(col, dtype=np.int64)))
    metadata = {INFO_KEY: json.dumps(info_to_dict(table.info)).encode()} if with_info else None
    return pa.Table.from_arrays(arrays, names=names, metadata=metadata)


def arrow_to_pandas(table: pa.Table) -> Any:
    """``table.to_pandas()`` (a pandas DataFrame; dictionary columns become
    categoricals). pandas is not a dependency of dispatchlab: without it this raises
    :class:`ImportError` naming the package to install."""
    try:
        import pandas  # noqa: F401
    except ImportError:
        raise ImportError("to_pandas() needs pandas, which is not installed (pip install "
                          "pandas); to_arrow() gives the same table without it") from None
    return table.to_pandas()
