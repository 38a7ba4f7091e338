"""A run's outputs: its summary (metrics, run facts and warnings) and the files it writes.

The simulation layer (:class:`~dispatchlab.sim.result.SimulationResult`) holds a run's
results as data (arrays, and Arrow tables built from them) and opens no file; this
module, in the run layer, turns them into outputs:

* :func:`run_summary`: the metrics summary of a run plus its run facts and every
  warning of the run (:func:`dispatchlab.run.advice.run_warnings`);
* :func:`write_result`: ``jobs.parquet`` (``jobs.csv``), ``segments.parquet``,
  ``platform_power.parquet`` and ``summary.json`` into a folder (``simulate --out``);
* :func:`write_schedule_swf`: the simulated schedule as an SWF file
  (``simulate --swf-out``).

The methods ``SimulationResult.summary``, ``write`` and ``write_swf`` of dispatchlab 0.1
call these functions, with a :class:`~dispatchlab.core.deprecation.MovedWarning`, until
:data:`~dispatchlab.core.deprecation.REMOVED_IN`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.errors import output_folder
from dispatchlab.core.memory import release_free_memory
from dispatchlab.metrics import Measure, primary_resource, summarize_table
from dispatchlab.metrics.groups import group_summary
from dispatchlab.power.accounting import power_facts
from dispatchlab.power.model import has_power
from dispatchlab.run.advice import run_warnings
from dispatchlab.sim.engine import is_node_level
from dispatchlab.workload.swf import write_swf
from dispatchlab.workload.tables import local_sink  # pyarrow's: with it

if TYPE_CHECKING:
    from dispatchlab.sim.result import SimulationResult

__all__ = ["held_per_job", "run_summary", "write_result", "write_schedule_swf"]


def held_per_job(result: SimulationResult) -> tuple[np.ndarray, str]:
    """What each job holds while it runs, for the hours of :mod:`dispatchlab.metrics.groups`,
    and its unit: on node-level runs (:func:`~dispatchlab.sim.engine.is_node_level`) the
    number of nodes of the job's allocation (``"node-hours"``; 0 for a job never placed),
    on pooled runs units x the per-unit amount of the primary resource (``"core-hours"``,
    or ``"<resource>-hours"`` on a platform without cores)."""
    jobs = result.jobs
    if is_node_level(result.platform, jobs):
        held = np.zeros(len(jobs), dtype=np.int64)
        for row, allocation in result.allocations.items():
            held[row] = len(allocation.nodes)
        return held, "node-hours"
    primary = primary_resource(result.platform.total_capacity())
    per_unit = jobs.resources.get(primary)
    amount = (np.zeros(len(jobs), dtype=np.int64) if per_unit is None
              else np.asarray(jobs["units"], dtype=np.int64) * per_unit)
    return amount, f"{primary}-hours"


def run_summary(result: SimulationResult, *, tau: float = 10.0,
                measure: Measure | None = None, by: Iterable[str] = ()) -> dict[str, Any]:
    """The metrics summary of ``result`` (see :func:`dispatchlab.metrics.summarize`) plus
    run facts.

    Runs whose jobs carry power columns also get Borghesi et al. 2018's BSLD (eq. 3:
    ``mean_power_bsld``, ``max_power_bsld``) with
    :meth:`~dispatchlab.sim.result.SimulationResult.unstretched_run` as the original
    duration, and the power metrics of :func:`dispatchlab.power.accounting.power_facts`;
    hot-start dummies (job column ``hot_start``) are left out of the metrics
    (``hot_start_jobs``). ``tau`` is the bounded-slowdown threshold (s), ``measure`` the
    jobs the metrics count (an index window names rows of the table the run was given).
    ``warnings``: every warning of the run (:func:`dispatchlab.run.advice.run_warnings`:
    the ones ``simulate`` prints), one line of text each, ``[]`` when none. An
    unfinished run (``max_wall``) has ``unfinished``: why and where it stopped. A run of
    a cluster log fitted to a platform with partitions has ``partitions``: how they were
    simulated (as the log names them, mapped, ignored). ``engine``: the engine that ran
    (``python`` or ``native``, :attr:`~dispatchlab.sim.result.SimulationResult.engine`);
    a native run's ``decision_calls`` and decision times are null (the core does not
    time its native dispatchers' calls; a dispatcher written in Python is timed on both
    engines).

    ``by``: group keys (``partition``, ``user``, ``account``, ``qos``; ``simulate
    --by``): the summary then has ``by_group``, the metrics per group of each key and
    the fairness figures over the same measured jobs
    (:func:`dispatchlab.metrics.groups.group_summary`, hours from
    :func:`held_per_job`); without keys it has no such section."""
    power = has_power(result.jobs)
    facts: dict[str, Any] = {}
    if "power_mean" in result.jobs.columns:
        facts = power_facts(result)
    native = result.engine == "native" and not len(result.decision_times)
    out = summarize_table(result.jobs, result.start, result.end, result.status,
                          result.platform.total_capacity(), tau=tau,
                          measure=result.measure_of_rows(measure),
                          decision_times=None if native else result.decision_times,
                          dispatcher_facts={"finished": int(result.finished),
                                            **result.dispatcher_facts, **facts},
                          unstretched_run=result.unstretched_run() if power else None)
    if native:  # the core does not time its dispatcher calls: not measured (null)
        out.update({k: None for k in out
                    if k == "decision_calls" or k.endswith("_decision_time")})
    info = result.jobs.info
    out.update({
        "dispatcher": result.dispatcher,
        "predictor": result.predictor,
        "overrun": result.overrun,
        "platform": result.platform.describe(),
        "cores": int(result.platform.total_capacity().get("core", 0)),
        "dropped": dict(info.dropped),
        "malformed_skipped": int(info.malformed_skipped),
        "estimate_fallbacks": int(info.estimate_fallbacks),
        "estimate_fallback_source": info.estimate_fallback_source,
        "events": int(result.events),
        "passes": int(result.passes),
        "simulate_seconds": float(result.wall_seconds),
        "engine": result.engine,
        "trace": info.source,
    })
    if "Partitions" in info.header:  # how the request fitting simulated partitions
        out["partitions"] = info.header["Partitions"]
    if not result.finished:
        out["unfinished"] = dict(result.extra)
    out["warnings"] = run_warnings(result)
    keys = tuple(by)
    if keys:
        held, unit = held_per_job(result)
        out["by_group"] = group_summary(result.jobs, result.start, result.end,
                                        result.status, keys, held=held, hours_unit=unit,
                                        measured=result.measured_rows(measure), tau=tau)
    return out


#: the ``jobs.parquet`` columns stored dictionary-encoded: text and the few distinct
#: values of a small domain (users, statuses, reasons, allocations). Dictionary
#: encoding of every column, pyarrow's default, made HPC2N's file 5.4 MB in 0.09 s;
#: these alone 3.6 MB in 0.06 s.
DICTIONARY_COLUMNS = ("user", "status", "reject_reason", "allocation")


def write_result(result: SimulationResult, out_dir: str | Path, *, tau: float = 10.0,
                 measure: Measure | None = None, started_at: float | None = None,
                 csv: bool = False, by: Iterable[str] = ()) -> dict[str, Any]:
    """Write ``jobs.parquet`` (and ``jobs.csv`` with ``csv=True``; the columns of
    :meth:`~dispatchlab.sim.result.SimulationResult.to_arrow` with ``tau`` and
    ``measure``), ``segments.parquet`` when jobs changed rate
    (:meth:`~dispatchlab.sim.result.SimulationResult.segments_table`),
    ``platform_power.parquet`` when the run has job power series
    (:meth:`~dispatchlab.sim.result.SimulationResult.platform_power_table`), and then
    ``summary.json`` (:func:`run_summary`, with ``by_group`` for the group keys ``by``)
    into ``out_dir``; return the summary.

    The ``allocation`` column is ``"node:units,..."`` (nodes numbered from 0 in
    platform order) for node-level runs, null for rejected jobs and for counting
    runs, where placement is not simulated.

    ``started_at`` is a ``time.perf_counter()`` value: ``wall_seconds`` in the summary
    is then the time from it until the summary is written (outputs included), else
    null. Rows are written in batches to bound memory, zstd-compressed, the columns of
    :data:`DICTIONARY_COLUMNS` dictionary-encoded (the others, mostly distinct
    numbers, plain: faster to write and smaller). The Parquet file is deterministic:
    same inputs, same bytes. A folder that cannot be made raises
    :class:`~dispatchlab.core.errors.InputError`."""
    out = output_folder(out_dir)
    summary = run_summary(result, tau=tau, measure=measure, by=by)
    if len(result.jobs) > 50_000:
        release_free_memory()  # before pyarrow's share: keeps the peak RSS down

    import pyarrow as pa  # heavy: imported when a run writes its outputs
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq


    # small batches and the system allocator (which gives memory back) bound the
    # extra memory of writing to a few MB
    n, batch, pool = len(result.jobs), 1 << 14, pa.system_memory_pool()
    measured = result.measured_rows(measure)  # once: each batch takes its rows
    first = result.to_arrow(slice(0, min(batch, n)), tau=tau, measured=measured)
    dictionary = [c for c in DICTIONARY_COLUMNS if c in first.schema.names]
    with local_sink(out / "jobs.parquet") as sink, pq.ParquetWriter(
            sink, first.schema, compression="zstd", use_dictionary=dictionary,
            memory_pool=pool) as pw:
        csv_writer = pacsv.CSVWriter(out / "jobs.csv", first.schema,
                                     memory_pool=pool) if csv else None
        for lo in range(0, max(n, 1), batch):
            table = first if lo == 0 else result.to_arrow(
                slice(lo, min(lo + batch, n)), tau=tau, measured=measured)
            pw.write_table(table)
            if csv_writer is not None:
                csv_writer.write_table(table)
        if csv_writer is not None:
            csv_writer.close()
    del first, table
    if result.segments is not None:
        with local_sink(out / "segments.parquet") as sink:
            pq.write_table(result.segments_table(), sink, compression="zstd")
    if result.power_series is not None and has_power(result.jobs):
        with local_sink(out / "platform_power.parquet") as sink:
            pq.write_table(result.platform_power_table(), sink, compression="zstd")
    summary["wall_seconds"] = (time.perf_counter() - started_at
                               if started_at is not None else None)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def write_schedule_swf(result: SimulationResult, path: str | Path) -> None:
    """Write the simulated schedule
    (:meth:`~dispatchlab.sim.result.SimulationResult.schedule_table`) as an SWF file
    (gzip when ``path`` ends in .gz)."""
    write_swf(result.schedule_table(), path)
