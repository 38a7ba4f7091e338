"""What a simulation produced: per-job times and statuses, counters, and outputs.

Statuses: ``completed`` (ran its full run time), ``killed`` (stopped at its requested
time with ``overrun="kill"``), ``rejected`` (could never fit the platform, or a
dispatcher rejected it). Rejected jobs have ``start = end = -1``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from dispatchlab.metrics import Measure, summarize_table

if TYPE_CHECKING:
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
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def wait(self) -> np.ndarray:
        return np.where(self.start >= 0, self.start - self.jobs["submit"], -1)

    def allocation_strings(self) -> np.ndarray:
        """Per job ``"node:units,node:units"`` (nodes numbered from 0 in platform order);
        None for rejected jobs and for counting-mode runs, where placement is not
        simulated."""
        out = np.full(len(self.jobs), None, dtype=object)
        for row, alloc in self.allocations.items():
            out[row] = ",".join(f"{n}:{c}" for n, c in
                                zip(alloc.nodes.tolist(), alloc.counts.tolist(), strict=True))
        return out

    def to_arrow(self) -> pa.Table:
        """One row per job (rejected included), in table order (submit, file order)."""
        j = self.jobs
        ran = self.start >= 0
        names = np.array([STATUS_NAMES[k] for k in range(3)], dtype=object)
        reasons = np.full(len(j), None, dtype=object)
        for row, why in self.reject_reason.items():
            reasons[row] = why
        cols = {
            "job_id": j["job_id"],
            "submit": j["submit"],
            "start": self.start,
            "end": self.end,
            "wait": self.wait,
            "run": np.where(ran, self.end - self.start, -1),
            "trace_run": j["run"],
            "requested_time": j["requested_time"],
            "procs": j["units"],
            "user": j["user"],
            "status": pa.array(names[self.status], type=pa.string()),
            "estimate": self.estimate,
            "reject_reason": pa.array(reasons, type=pa.string()),
            "allocation": pa.array(self.allocation_strings(), type=pa.string()),
        }
        for name, values in j.resources.items():
            if name != "core" or np.any(values != 1):
                cols[f"res_{name}"] = values
        return pa.table(cols)

    def summary(self, *, tau: float = 10.0, measure: Measure | None = None) -> dict[str, Any]:
        """The metrics summary (see :func:`dispatchlab.metrics.summarize`) plus run facts."""
        out = summarize_table(self.jobs, self.start, self.end, self.status,
                              self.platform.total_capacity(), tau=tau, measure=measure,
                              decision_times=self.decision_times)
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
        return out

    def write(self, out_dir: str | Path, *, tau: float = 10.0, measure: Measure | None = None,
              extra_summary: dict[str, Any] | None = None) -> dict[str, Any]:
        """Write ``jobs.parquet`` and ``summary.json`` into ``out_dir``; return the summary.

        The Parquet file is deterministic: same inputs, same bytes."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        pq.write_table(self.to_arrow(), out / "jobs.parquet", compression="zstd")
        summary = self.summary(tau=tau, measure=measure)
        if extra_summary:
            summary.update(extra_summary)
        (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        return summary
