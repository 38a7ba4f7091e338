"""What a simulation produced: per-job times and statuses and counters, as data.

The run's summary and the files it writes are the run layer's
(:mod:`dispatchlab.run.outputs`); this module opens no file.

Statuses: ``completed`` (ran its full run time), ``killed`` (stopped at its requested
time with ``overrun="kill"``), ``rejected`` (could never fit the platform, or a
dispatcher rejected it). Rejected jobs have ``start = end = -1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.deprecation import moved_callable
from dispatchlab.core.errors import InputError
from dispatchlab.metrics import Measure
from dispatchlab.metrics.jobs import DEFAULT_TAU

if TYPE_CHECKING:
    import pyarrow as pa

    from dispatchlab.platform import Platform
    from dispatchlab.workload.jobs import JobTable

from dispatchlab.metrics.jobs import COMPLETED as STATUS_COMPLETED
from dispatchlab.metrics.jobs import KILLED as STATUS_KILLED
from dispatchlab.metrics.jobs import REJECTED as STATUS_REJECTED
from dispatchlab.metrics.jobs import job_columns, unstretched_run
from dispatchlab.metrics.summary import hot_start_mask
from dispatchlab.platform.platform import INTERNAL_PREFIX
from dispatchlab.power.accounting import sampled_platform_power
from dispatchlab.power.model import has_power
from dispatchlab.workload.jobs import SWF_FIELDS
from dispatchlab.workload.jobs import JobTable as _JobTable
from dispatchlab.workload.status import simulated_status
from dispatchlab.workload.tables import arrow_to_pandas

STATUS_WAITING = 3  # internal: never in a result
STATUS_RUNNING = 4  # internal: never in a result
STATUS_FUTURE = 5  # internal: not submitted yet
STATUS_NAMES = {STATUS_COMPLETED: "completed", STATUS_KILLED: "killed",
                STATUS_REJECTED: "rejected"}


def arrow_array(values: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    """The Arrow array of a one-dimensional numpy array of numbers or booleans, over its
    buffer (no copy when it is contiguous; booleans are bit-packed, as Arrow stores
    them), with the nulls where ``valid`` (bool per element) is false.

    The same array as ``pyarrow.array(values, mask=~valid)``, built from buffers:
    ``pyarrow.array`` imports pandas when it is installed (about 0.3 s, on every
    ``simulate --out``), ``Array.from_buffers`` does not."""
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    n = values.size
    if values.dtype == np.bool_:
        dtype = pa.bool_()
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
    else:
        dtype = pa.from_numpy_dtype(values.dtype)
        data = pa.py_buffer(values)
    if valid is None:
        return pa.Array.from_buffers(dtype, n, [None, data], null_count=0)
    nulls = n - int(np.count_nonzero(valid))
    bitmap = None if nulls == 0 else pa.py_buffer(np.packbits(valid, bitorder="little"))
    return pa.Array.from_buffers(dtype, n, [bitmap, data], null_count=nulls)


def _status_names() -> pa.Array:
    """The dictionary of the ``status`` column: the names of statuses 0, 1, 2."""
    import pyarrow as pa

    names = [STATUS_NAMES[k].encode() for k in range(3)]
    offsets = np.cumsum([0, *map(len, names)], dtype=np.int32)
    return pa.Array.from_buffers(pa.string(), 3, [None, pa.py_buffer(offsets),
                                                  pa.py_buffer(b"".join(names))])


@dataclass
class SimulationResult:
    """Arrays aligned with the rows of ``jobs`` plus run counters.

    ``estimate`` is the estimate each job got at submission (seconds; -1 if rejected).
    ``decision_times`` holds the wall-clock seconds of every dispatcher call (empty for
    a native run: the core does not time them).
    """

    jobs: JobTable
    platform: Platform
    dispatcher: str
    predictor: str
    overrun: str
    start: np.ndarray
    end: np.ndarray
    status: np.ndarray
    estimate: np.ndarray
    reject_reason: dict[int, str]
    allocations: dict[int, Any]  # job row -> Allocation (node-level runs only)
    events: int
    passes: int
    decision_times: np.ndarray
    wall_seconds: float
    #: False when the run was stopped by its wall-clock budget (``max_wall``): then
    #: ``jobs`` holds only the jobs that ended by then (see ``extra``)
    finished: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    #: the dispatcher's :meth:`~dispatchlab.dispatch.Dispatcher.run_facts` (in the summary)
    dispatcher_facts: dict[str, Any] = field(default_factory=dict)
    #: rate changes of running jobs, one row per change in the order they happened:
    #: ``job`` (row), ``time`` (s), ``speed`` (work per second from then on) and
    #: ``power_level`` (0-1]; a job runs at speed 1 and level 1 from its start until its
    #: first change. None when no job changed rate.
    segments: dict[str, np.ndarray] | None = None
    #: the power predictor's predictions at submission (``mean``, ``max``, ``std`` in W,
    #: NaN for jobs never submitted or rejected); None without a power predictor
    power_prediction: dict[str, np.ndarray] | None = None
    #: the power cap of the run (a dispatchlab.power.cap.PowerCap), None without one
    cap: Any = None
    #: the jobs' power time series, attached after the run (``simulate --power-series``):
    #: ``job_id``, ``offset`` (s since the job's start), ``watts`` (W of the whole job),
    #: sorted by job id then offset (:func:`dispatchlab.power.data.match_power_series`).
    #: With it (and the power columns) the cap-window metrics use the platform power
    #: sampled every :attr:`power_period` s
    #: (:func:`dispatchlab.power.accounting.sampled_platform_power`) and
    #: :func:`dispatchlab.run.outputs.write_result` writes it; None: the mean-power
    #: step function only, nothing extra computed
    power_series: dict[str, np.ndarray] | None = None
    #: the sampling period (whole s) of that platform power; None: 20 s
    #: (:data:`dispatchlab.power.data.DEFAULT_PERIOD`)
    power_period: int | None = None
    #: the whole job table the run was given, when ``jobs`` holds fewer (an unfinished
    #: run keeps only the jobs that ended); None: ``jobs``
    input_jobs: JobTable | None = None
    #: the rows of ``input_jobs`` that ``jobs`` holds (ascending), with ``input_jobs``
    input_rows: np.ndarray | None = None
    #: True when the dispatcher slows running jobs (``slows_running_jobs``) and the
    #: run's duration model, given explicitly, is ``none``: throttled jobs kept their
    #: run times (:func:`dispatchlab.run.advice.result_warnings` warns)
    throttling_without_slowdown: bool = False
    #: the engine that ran: ``"python"`` (:class:`dispatchlab.sim.engine.Simulation`) or
    #: ``"native"`` (the compiled core, :mod:`dispatchlab.sim.native`); the summary's
    #: ``engine``
    engine: str = "python"

    def measure_of_rows(self, measure: Measure | None) -> Measure | None:
        """``measure`` for the rows of ``jobs``: an index window (rows of the table the
        run was given, e.g. a slice's measured block) becomes the same rows among
        those an unfinished run kept (the summary's ``measure`` then names that window
        of the kept rows); other windows apply as they are."""
        if measure is None or measure.by != "index" or self.input_rows is None:
            return measure
        rows = self.input_rows
        lo = None if measure.lo is None else int(np.searchsorted(rows, measure.lo))
        hi = None if measure.hi is None else int(np.searchsorted(rows, measure.hi))
        if lo is not None and hi is not None and lo >= hi:
            raise InputError(f"measurement window {measure}: none of its jobs ended "
                             "before the run stopped at its wall-clock budget")
        return Measure.by_index(lo, hi)

    @property
    def wait(self) -> np.ndarray:
        return np.where(self.start >= 0, self.start - self.jobs["submit"], -1)

    def unstretched_run(self) -> np.ndarray:
        """Each job's simulated run at nominal speed (int64 s, whatever its status): the
        trace's run, or ``min(run, requested_time)`` under ``overrun = "kill"``
        (:func:`dispatchlab.metrics.jobs.unstretched_run`); the effective run of a job
        that ran is ``end - start``, longer when power reductions stretched it."""

        return unstretched_run(self.jobs["run"], self.jobs["requested_time"], self.overrun)

    def measured_rows(self, measure: Measure | None = None) -> np.ndarray:
        """Which jobs the run's metrics count (bool per row): inside the measurement
        window ``measure`` (default: all rows; lead-in jobs of a slice are outside) and
        not a hot-start dummy (job column ``hot_start``), as the summary's
        ``measured_jobs``. Rejected jobs in the window are measured (counted as
        rejected); they have no per-job metrics."""
        rows = (self.measure_of_rows(measure) or Measure()).mask(self.jobs["submit"])
        hot = self.hot_start_rows()
        return rows if hot is None else rows & ~hot

    def hot_start_rows(self) -> np.ndarray | None:
        """The hot-start dummy jobs (bool per row; :mod:`dispatchlab.sim.hotstart`),
        None when the jobs have no ``hot_start`` column."""

        if "hot_start" not in self.jobs.columns:
            return None
        return hot_start_mask(self.jobs["hot_start"], len(self.jobs))

    def to_arrow(self, rows: slice | None = None, *, tau: float = DEFAULT_TAU,
                 measure: Measure | None = None,
                 measured: np.ndarray | None = None) -> pa.Table:
        """One row per job (rejected included), in table order (submit, file order);
        ``rows`` selects a slice of them.

        ``status`` is dictionary-encoded (completed / killed / rejected); ``run`` is the
        simulated run (end - start), ``trace_run`` the run time in the trace;
        ``slowdown`` and ``bounded_slowdown`` are the per-job metrics of
        :func:`dispatchlab.metrics.jobs.job_columns` (``tau`` s, null for rejected
        jobs); ``measured`` is :meth:`measured_rows` of ``measure`` (the jobs the
        summary's metrics count: lead-in jobs and hot-start dummies are false) and
        ``hot_start`` is true for the hot-start dummy jobs (one-node jobs keeping the
        machine busy from t = 0, not part of the workload and not in ``total_jobs``).
        ``measured``: :meth:`measured_rows` of the whole table when already computed
        (writing in batches), else computed from ``measure``."""
        import pyarrow as pa  # imported here: it is heavy and only outputs need it


        j = self.jobs
        sl = rows if rows is not None else slice(0, len(j))
        lo, hi, _ = sl.indices(len(j))
        n = hi - lo
        start, end, submit = self.start[sl], self.end[sl], j["submit"][sl]
        ran = start >= 0
        per_job = job_columns(submit, start, end, self.status[sl], tau=tau)
        # the slice's rows only: run.outputs.write_result calls this once per batch
        hot = (None if "hot_start" not in j.columns
               else hot_start_mask(j["hot_start"][sl], n))

        def nullable(x: np.ndarray) -> pa.Array:
            return arrow_array(x, valid=~np.isnan(x))

        def strings(values: dict[int, str]) -> pa.Array:
            picked = {r - lo: t for r, t in values.items() if lo <= r < hi}
            if not picked:
                return pa.nulls(n, pa.string())
            full: list[str | None] = [None] * n
            for row, text in picked.items():
                full[row] = text
            return pa.array(full, type=pa.string())

        allocations = {row: ",".join(f"{node}:{c}" for node, c in zip(
            a.nodes.tolist(), a.counts.tolist(), strict=True))
            for row, a in self.allocations.items() if lo <= row < hi}
        cols = {
            "job_id": j["job_id"][sl],
            "submit": submit,
            "start": start,
            "end": end,
            "wait": np.where(ran, start - submit, -1),
            "run": np.where(ran, end - start, -1),
            "trace_run": j["run"][sl],
            "requested_time": j["requested_time"][sl],
            "procs": j["units"][sl],
            "user": j["user"][sl],
            "status": pa.DictionaryArray.from_arrays(
                arrow_array(self.status[sl].astype(np.int8, copy=False)), _status_names()),
            "estimate": self.estimate[sl],
            "reject_reason": strings(self.reject_reason),
            "allocation": strings(allocations),
            "slowdown": nullable(per_job["slowdown"]),
            "bounded_slowdown": nullable(per_job["bounded_slowdown"]),
            "measured": (self.measured_rows(measure) if measured is None else measured)[sl],
            "hot_start": np.zeros(n, dtype=bool) if hot is None else hot,
        }
        for name, values in j.resources.items():
            if name.startswith(INTERNAL_PREFIX):  # the request fitting's internal ones
                continue
            if name != "core" or np.any(values != 1):
                cols[f"res_{name}"] = values[sl]
        return pa.Table.from_arrays(
            [arrow_array(v) if isinstance(v, np.ndarray) else v for v in cols.values()],
            names=list(cols))

    def platform_power_table(self) -> pa.Table:
        """The platform power sampled from :attr:`power_series` every
        :attr:`power_period` s over the whole run
        (:func:`dispatchlab.power.accounting.sampled_platform_power`): columns ``time``
        (s, trace time, multiples of the period) and ``watts`` (W). ValueError without
        :attr:`power_series` or power columns."""
        import pyarrow as pa


        if self.power_series is None or not has_power(self.jobs):
            raise ValueError("no sampled platform power: the run has no job power series "
                             "or its jobs no power columns")
        times, watts = sampled_platform_power(self, self.power_series, self.power_period)
        return pa.table({"time": times, "watts": watts})

    def schedule_table(self) -> JobTable:
        """The simulated schedule as a job table in SWF terms, for
        :func:`dispatchlab.workload.swf.write_swf` (``simulate --swf-out``).

        Every input field is kept except: ``wait`` = simulated start - submit, ``run`` =
        simulated end - start, ``alloc_procs`` = processors started (units x cores per
        unit), ``status`` (the one table of :mod:`dispatchlab.workload.status`) = 1
        for completed jobs, 0 for jobs killed at their requested time (``overrun =
        kill``; SWF's "failed"), 5 for rejected jobs (SWF's "cancelled"; their wait, run
        and ``alloc_procs`` are -1), ``avg_cpu`` and ``used_mem`` = -1 (not simulated).
        ``req_time`` = the requested time the simulation used. Times stay in this run's
        origin; the header gives ``UnixStartTime`` shifted by the selection's offset,
        ``MaxProcs``/``MaxNodes`` of the simulated platform and the run's settings as
        ``Note`` lines, so other SWF tools read the file and this project reads it back
        (tested: same jobs, submits, runs and starts).
        """
        from dataclasses import replace


        jobs = self.jobs
        cols = {name: np.array(jobs[name], copy=True) for name in SWF_FIELDS}
        ran = self.status != STATUS_REJECTED
        cols["wait"] = np.where(ran, self.start - jobs["submit"], -1).astype(np.int64)
        cols["run"] = np.where(ran, self.end - self.start, -1).astype(np.int64)
        # processors: units x cores per unit (1 for SWF jobs; Alea's chunks hold several)
        core = jobs.resources.get("core")
        procs = jobs["units"] if core is None else jobs["units"] * core
        cols["alloc_procs"] = np.where(ran, procs, -1).astype(np.int64)
        cols["status"] = np.select(
            [self.status == STATUS_COMPLETED, self.status == STATUS_KILLED],
            [simulated_status(True, False), simulated_status(False, True)],
            simulated_status(False, False)).astype(np.int64)
        cols["avg_cpu"] = np.full(len(jobs), -1.0)
        cols["used_mem"] = np.full(len(jobs), -1.0)
        cols["req_time"] = np.asarray(jobs["requested_time"], dtype=np.int64).copy()
        cols["units"] = np.asarray(jobs["units"]).copy()
        cols["requested_time"] = cols["req_time"].copy()
        cols["line"] = np.zeros(len(jobs), dtype=np.int64)
        info = jobs.info
        total = self.platform.total_capacity()
        start = None if info.unix_start_time is None else info.unix_start_time + info.time_offset
        header = [
            "; Version: 2.2",
            "; Computer: dispatchlab simulation",
            f"; Installation: {self.platform.describe()}",
            f"; Note: simulated schedule of {info.source}",
            f"; Note: dispatcher {self.dispatcher}, predictor {self.predictor}, "
            f"overrun {self.overrun}; status 1 completed, 0 killed at the requested time, "
            "5 rejected",
            f"; MaxJobs: {len(jobs)}",
            f"; MaxRecords: {len(jobs)}",
            f"; MaxProcs: {int(total.get('core', next(iter(total.values()), 0)))}",
        ]
        if not self.platform.is_pooled:
            header.append(f"; MaxNodes: {self.platform.n_nodes}")
        if start is not None:
            header.append(f"; UnixStartTime: {start}")
        new_info = replace(info, header_lines=tuple(header), header={}, time_offset=0,
                           dropped={}, rounded={})

        return _JobTable(columns=cols, resources=dict(jobs.resources), info=new_info)

    def to_pandas(self) -> Any:
        """:meth:`to_arrow` as a pandas DataFrame, one row per job (``status`` a
        categorical). pandas is not a dependency of dispatchlab: without it this raises
        :class:`ImportError` saying so."""

        return arrow_to_pandas(self.to_arrow())

    def segments_table(self) -> pa.Table:
        """The rate changes (:attr:`segments`) with the trace's job ids: columns
        ``job_id``, ``time`` (s), ``speed``, ``power_level`` (empty when none)."""
        import pyarrow as pa

        seg = self.segments or {"job": np.zeros(0, np.int64), "time": np.zeros(0, np.int64),
                                "speed": np.zeros(0), "power_level": np.zeros(0)}
        return pa.table({"job_id": np.asarray(self.jobs["job_id"])[seg["job"]],
                         "time": seg["time"], "speed": seg["speed"],
                         "power_level": seg["power_level"]})

    # moved to the run layer (dispatchlab 0.2): the simulation layer opens no file
    summary = moved_callable("dispatchlab.sim.SimulationResult.summary",
                             "dispatchlab.run.outputs:run_summary")
    write = moved_callable("dispatchlab.sim.SimulationResult.write",
                           "dispatchlab.run.outputs:write_result")
    write_swf = moved_callable("dispatchlab.sim.SimulationResult.write_swf",
                               "dispatchlab.run.outputs:write_schedule_swf")
