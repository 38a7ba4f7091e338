"""What a simulation produced: per-job times and statuses, counters, and outputs.

Statuses: ``completed`` (ran its full run time), ``killed`` (stopped at its requested
time with ``overrun="kill"``), ``rejected`` (could never fit the platform, or a
dispatcher rejected it). Rejected jobs have ``start = end = -1``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.errors import InputError, output_folder
from dispatchlab.core.memory import release_free_memory
from dispatchlab.metrics import Measure, summarize_table
from dispatchlab.metrics.jobs import DEFAULT_TAU

if TYPE_CHECKING:
    import pyarrow as pa

    from dispatchlab.platform import Platform
    from dispatchlab.workload.jobs import JobTable

from dispatchlab.metrics.jobs import COMPLETED as STATUS_COMPLETED
from dispatchlab.metrics.jobs import KILLED as STATUS_KILLED
from dispatchlab.metrics.jobs import REJECTED as STATUS_REJECTED

STATUS_WAITING = 3  # internal: never in a result
STATUS_RUNNING = 4  # internal: never in a result
STATUS_FUTURE = 5  # internal: not submitted yet
STATUS_NAMES = {STATUS_COMPLETED: "completed", STATUS_KILLED: "killed",
                STATUS_REJECTED: "rejected"}


@dataclass
class SimulationResult:
    """Arrays aligned with the rows of ``jobs`` plus run counters.

    ``estimate`` is the estimate each job got at submission (seconds; -1 if rejected).
    ``decision_times`` holds the wall-clock seconds of every dispatcher call.
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
    #: (:func:`dispatchlab.power.accounting.sampled_platform_power`) and :meth:`write`
    #: writes it; None: the mean-power step function only, nothing extra computed
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
        from dispatchlab.metrics.jobs import unstretched_run

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
        from dispatchlab.metrics.summary import hot_start_mask

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

        from dispatchlab.metrics.jobs import job_columns
        from dispatchlab.metrics.summary import hot_start_mask

        j = self.jobs
        sl = rows if rows is not None else slice(0, len(j))
        lo, hi, _ = sl.indices(len(j))
        n = hi - lo
        start, end, submit = self.start[sl], self.end[sl], j["submit"][sl]
        ran = start >= 0
        per_job = job_columns(submit, start, end, self.status[sl], tau=tau)
        # the slice's rows only: write() calls this once per batch
        hot = (None if "hot_start" not in j.columns
               else hot_start_mask(j["hot_start"][sl], n))

        def nullable(x: np.ndarray) -> pa.Array:
            return pa.array(x, mask=np.isnan(x))

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
                pa.array(self.status[sl], type=pa.int8()),
                pa.array([STATUS_NAMES[k] for k in range(3)], type=pa.string())),
            "estimate": self.estimate[sl],
            "reject_reason": strings(self.reject_reason),
            "allocation": strings(allocations),
            "slowdown": nullable(per_job["slowdown"]),
            "bounded_slowdown": nullable(per_job["bounded_slowdown"]),
            "measured": (self.measured_rows(measure) if measured is None else measured)[sl],
            "hot_start": np.zeros(n, dtype=bool) if hot is None else hot,
        }
        for name, values in j.resources.items():
            if name != "core" or np.any(values != 1):
                cols[f"res_{name}"] = values[sl]
        return pa.table({k: np.ascontiguousarray(v) if isinstance(v, np.ndarray) else v
                         for k, v in cols.items()})

    def _power_facts(self) -> dict[str, Any]:
        """The power metrics (:func:`dispatchlab.power.accounting.power_facts`) when the
        jobs carry power columns; nothing otherwise."""
        if "power_mean" not in self.jobs.columns:
            return {}
        from dispatchlab.power.accounting import power_facts

        return power_facts(self)

    def platform_power_table(self) -> pa.Table:
        """The platform power sampled from :attr:`power_series` every
        :attr:`power_period` s over the whole run
        (:func:`dispatchlab.power.accounting.sampled_platform_power`): columns ``time``
        (s, trace time, multiples of the period) and ``watts`` (W). ValueError without
        :attr:`power_series` or power columns."""
        import pyarrow as pa

        from dispatchlab.power.accounting import sampled_platform_power
        from dispatchlab.power.model import has_power

        if self.power_series is None or not has_power(self.jobs):
            raise ValueError("no sampled platform power: the run has no job power series "
                             "or its jobs no power columns")
        times, watts = sampled_platform_power(self, self.power_series, self.power_period)
        return pa.table({"time": times, "watts": watts})

    def summary(self, *, tau: float = 10.0, measure: Measure | None = None) -> dict[str, Any]:
        """The metrics summary (see :func:`dispatchlab.metrics.summarize`) plus run facts.

        Runs whose jobs carry power columns also get Borghesi et al. 2018's BSLD (eq. 3:
        ``mean_power_bsld``, ``max_power_bsld``) with :meth:`unstretched_run` as the
        original duration; hot-start dummies (job column ``hot_start``) are left out of
        the metrics (``hot_start_jobs``). ``warnings``: every warning of the run
        (:func:`dispatchlab.run.advice.run_warnings`: the ones ``simulate`` prints), one
        line of text each, ``[]`` when none."""
        from dispatchlab.power.model import has_power
        from dispatchlab.run.advice import run_warnings

        out = summarize_table(self.jobs, self.start, self.end, self.status,
                              self.platform.total_capacity(), tau=tau,
                              measure=self.measure_of_rows(measure),
                              decision_times=self.decision_times,
                              dispatcher_facts={"finished": int(self.finished),
                                                **self.dispatcher_facts,
                                                **self._power_facts()},
                              unstretched_run=self.unstretched_run()
                              if has_power(self.jobs) else None)
        info = self.jobs.info
        out.update({
            "dispatcher": self.dispatcher,
            "predictor": self.predictor,
            "overrun": self.overrun,
            "platform": self.platform.describe(),
            "cores": int(self.platform.total_capacity().get("core", 0)),
            "dropped": dict(info.dropped),
            "malformed_skipped": int(info.malformed_skipped),
            "estimate_fallbacks": int(info.estimate_fallbacks),
            "estimate_fallback_source": info.estimate_fallback_source,
            "events": int(self.events),
            "passes": int(self.passes),
            "simulate_seconds": float(self.wall_seconds),
            "trace": info.source,
        })
        if not self.finished:
            out["unfinished"] = dict(self.extra)
        out["warnings"] = run_warnings(self)
        return out

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

        from dispatchlab.workload.jobs import SWF_FIELDS
        from dispatchlab.workload.status import simulated_status

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
        from dispatchlab.workload.jobs import JobTable as _JobTable

        return _JobTable(columns=cols, resources=dict(jobs.resources), info=new_info)

    def to_pandas(self) -> Any:
        """:meth:`to_arrow` as a pandas DataFrame, one row per job (``status`` a
        categorical). pandas is not a dependency of dispatchlab: without it this raises
        :class:`ImportError` saying so."""
        from dispatchlab.workload.tables import arrow_to_pandas

        return arrow_to_pandas(self.to_arrow())

    def write_swf(self, path: str | Path) -> None:
        """Write :meth:`schedule_table` as an SWF file (gzip when ``path`` ends in .gz)."""
        from dispatchlab.workload.swf import write_swf

        write_swf(self.schedule_table(), path)

    def segments_table(self) -> pa.Table:
        """The rate changes (:attr:`segments`) with the trace's job ids: columns
        ``job_id``, ``time`` (s), ``speed``, ``power_level`` (empty when none)."""
        import pyarrow as pa

        seg = self.segments or {"job": np.zeros(0, np.int64), "time": np.zeros(0, np.int64),
                                "speed": np.zeros(0), "power_level": np.zeros(0)}
        return pa.table({"job_id": np.asarray(self.jobs["job_id"])[seg["job"]],
                         "time": seg["time"], "speed": seg["speed"],
                         "power_level": seg["power_level"]})

    def write(self, out_dir: str | Path, *, tau: float = 10.0, measure: Measure | None = None,
              started_at: float | None = None, csv: bool = False) -> dict[str, Any]:
        """Write ``jobs.parquet`` (and ``jobs.csv`` with ``csv=True``; the columns of
        :meth:`to_arrow` with ``tau`` and ``measure``), ``segments.parquet``
        when jobs changed rate (:meth:`segments_table`), ``platform_power.parquet`` when
        the run has job power series (:meth:`platform_power_table`), and then
        ``summary.json`` into ``out_dir``; return the summary.

        The ``allocation`` column is ``"node:units,..."`` (nodes numbered from 0 in
        platform order) for node-level runs, null for rejected jobs and for counting
        runs, where placement is not simulated.

        ``started_at`` is a ``time.perf_counter()`` value: ``wall_seconds`` in the summary
        is then the time from it until the summary is written (outputs included).
        Rows are written in batches to bound memory. The Parquet file is deterministic:
        same inputs, same bytes."""
        out = output_folder(out_dir)
        summary = self.summary(tau=tau, measure=measure)
        if len(self.jobs) > 50_000:
            release_free_memory()  # before pyarrow's share: keeps the peak RSS down

        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        # small batches and the system allocator (which gives memory back) bound the
        # extra memory of writing to a few MB
        n, batch, pool = len(self.jobs), 1 << 14, pa.system_memory_pool()
        measured = self.measured_rows(measure)  # once: each batch takes its rows
        first = self.to_arrow(slice(0, min(batch, n)), tau=tau, measured=measured)
        from dispatchlab.workload.tables import local_sink

        with local_sink(out / "jobs.parquet") as sink, pq.ParquetWriter(
                sink, first.schema, compression="zstd", memory_pool=pool) as pw:
            csv_writer = pacsv.CSVWriter(out / "jobs.csv", first.schema,
                                         memory_pool=pool) if csv else None
            for lo in range(0, max(n, 1), batch):
                table = first if lo == 0 else self.to_arrow(
                    slice(lo, min(lo + batch, n)), tau=tau, measured=measured)
                pw.write_table(table)
                if csv_writer is not None:
                    csv_writer.write_table(table)
            if csv_writer is not None:
                csv_writer.close()
        del first, table
        if self.segments is not None:
            with local_sink(out / "segments.parquet") as sink:
                pq.write_table(self.segments_table(), sink, compression="zstd")
        from dispatchlab.power.model import has_power

        if self.power_series is not None and has_power(self.jobs):
            with local_sink(out / "platform_power.parquet") as sink:
                pq.write_table(self.platform_power_table(), sink, compression="zstd")
        summary["wall_seconds"] = (time.perf_counter() - started_at
                                   if started_at is not None else None)
        (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        return summary
