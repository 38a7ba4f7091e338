"""Validation of a simulation against the schedule the log recorded
(``dispatchlab validate``).

A trace from a real system records each job's wait (SWF field 3; the sacct and PBS
readers fill it from the recorded start). :func:`compare_waits` takes a finished
simulation of that trace and compares, job by job, the simulated wait with the
recorded one, overall and per partition or queue, and computes the rolling-mean
measure of Wilkinson et al. (2023) (:mod:`dispatchlab.metrics.validation` defines
every figure).

**Which jobs are compared**: the jobs the run measured (hot-start dummies left out)
that have a recorded wait (not -1) and that the simulation started (not rejected).
The others are counted, never silently dropped: ``no_recorded_wait`` and ``not_run``
(a job missing both counts under ``no_recorded_wait``).

**What the comparison cannot see**: jobs the simulation never had. The archive's
cleaning removed jobs from ``*-cln`` logs (:func:`dispatchlab.workload.archive.
archive_cleaning` reads how many from the header), the loader drops jobs it cannot
run (``dropped at load``), and a window or job range leaves out the jobs before it;
all of them occupied the real machine, so the recorded waits were shaped by load the
simulation does not have: with much removed, simulated waits are expected to be
shorter. Prefer the least-cleaned log available and read each result beside its
removed share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.metrics.validation import (
    ROLLING_STEP,
    ROLLING_WINDOW,
    WILKINSON_2023,
    RollingWaits,
    rolling_wait_mape,
    wait_errors,
    wait_errors_by_group,
)
from dispatchlab.workload.archive import (
    ArchiveCleaning,
    archive_cleaning,
    header_names,
    header_scheduler,
)

if TYPE_CHECKING:
    from dispatchlab.sim.result import SimulationResult
    from dispatchlab.workload.jobs import JobTable

__all__ = ["GROUP_KEYS", "WaitValidation", "check_recorded_waits", "compare_waits",
           "group_column"]

#: the values of ``--by``: ``auto`` picks ``queue`` when the compared jobs use more than
#: one queue, else ``partition`` when they use more than one partition, else ``queue``
GROUP_KEYS = ("auto", "queue", "partition")


def check_recorded_waits(jobs: JobTable, source: str) -> int:
    """The number of jobs with a recorded wait (``wait >= 0``); an
    :class:`InputError` naming ``source`` when there is none (nothing to validate
    against), before any simulation is run."""
    n = int((np.asarray(jobs["wait"]) >= 0).sum())
    if n == 0:
        raise InputError(f"no job of the trace has a recorded wait (all {len(jobs):,} "
                         "are -1, SWF field 3): there is no recorded schedule to "
                         "validate against", file=source)
    return n


def _names(jobs: JobTable, column: str) -> dict[int, str]:
    """Labels of the codes of ``column`` (``queue`` or ``partition``): the reader's
    name table (sacct partitions, PBS queues), else the SWF header's
    ``; Queue:`` / ``; Partition:`` lines."""
    codes = jobs.info.codes.get(column)
    if codes:
        return dict(enumerate(codes))
    named = header_names(jobs.info.header_lines, column.capitalize())
    return {k: f"{k} {v}" for k, v in named.items()}


def group_column(jobs: JobTable, rows: np.ndarray, by: str) -> tuple[str, np.ndarray]:
    """The column the per-group table uses (``queue`` or ``partition``) and its codes
    for ``rows`` (a boolean mask of the compared jobs); ``by`` is one of
    :data:`GROUP_KEYS`."""
    if by not in GROUP_KEYS:
        raise InputError(f"unknown grouping {by!r} (choose {' | '.join(GROUP_KEYS)})",
                         field="--by")
    if by == "auto":
        by = "queue"
        for column in ("queue", "partition"):
            if len(np.unique(np.asarray(jobs[column])[rows])) > 1:
                by = column
                break
    return by, np.asarray(jobs[by])[rows]


@dataclass
class WaitValidation:
    """The comparison of a run with its recorded schedule (:func:`compare_waits`).

    ``counts``: ``measured`` jobs, ``compared``, ``no_recorded_wait``, ``not_run``;
    ``overall`` and each of ``groups`` are :func:`~dispatchlab.metrics.validation.
    wait_errors` dicts (``groups`` per code of ``group_by``, with ``group`` labels);
    ``rolling`` the rolling means and their MAPE; ``cleaning`` what the archive
    removed; ``dropped`` what loading dropped and skipped (reason -> jobs);
    ``scheduler`` the scheduler the trace header names (None: none named)."""

    counts: dict[str, int]
    overall: dict[str, Any]
    group_by: str
    groups: list[dict[str, Any]]
    rolling: RollingWaits
    cleaning: ArchiveCleaning
    dropped: dict[str, int] = field(default_factory=dict)
    scheduler: str | None = None

    def as_dict(self, *, series: bool = True) -> dict[str, Any]:
        """Every number as JSON-ready values (NaN -> None); ``series``: with the hourly
        rolling means (``hours`` s, ``jobs``, ``recorded`` and ``simulated`` s,
        ``used``)."""
        rolling: dict[str, Any] = {**self.rolling.summary(), "reference": WILKINSON_2023}
        if series:
            r = self.rolling
            rolling["series"] = {
                "hours": r.hours.tolist(), "jobs": r.jobs.tolist(),
                "recorded": [None if np.isnan(v) else float(v) for v in r.recorded],
                "simulated": [None if np.isnan(v) else float(v) for v in r.simulated],
                "used": r.used.tolist()}
        return {"counts": dict(self.counts), "overall": self.overall,
                "group_by": self.group_by, "groups": self.groups, "rolling": rolling,
                "cleaning": self.cleaning.as_dict(), "dropped_at_load": dict(self.dropped),
                "scheduler": self.scheduler}


def compare_waits(result: SimulationResult, *, by: str = "auto",
                  window: int = ROLLING_WINDOW, step: int = ROLLING_STEP) -> WaitValidation:
    """Compare the simulated waits of ``result`` with the waits its trace recorded
    (the module docstring says which jobs); ``by`` chooses the per-group column
    (:data:`GROUP_KEYS`); ``window`` and ``step`` (s) those of the rolling means. An
    :class:`InputError` when no job can be compared."""
    if not result.finished:
        raise InputError("the run stopped at its wall-clock budget: its schedule is "
                         "incomplete and cannot be compared with the recorded one")
    jobs = result.jobs
    measured = result.measured_rows()
    recorded = np.asarray(jobs["wait"], dtype=np.int64)
    simulated = np.asarray(result.wait, dtype=np.int64)
    has_recorded = recorded >= 0
    ran = np.asarray(result.start) >= 0
    rows = measured & has_recorded & ran
    counts = {"measured": int(measured.sum()), "compared": int(rows.sum()),
              "no_recorded_wait": int((measured & ~has_recorded).sum()),
              "not_run": int((measured & has_recorded & ~ran).sum())}
    if not counts["compared"]:
        raise InputError(f"no job both has a recorded wait and ran in the simulation "
                         f"({counts['no_recorded_wait']:,} without a recorded wait, "
                         f"{counts['not_run']:,} not run): nothing to compare",
                         file=jobs.info.source)
    rec, sim = recorded[rows], simulated[rows]
    group_by, codes = group_column(jobs, rows, by)
    info = jobs.info
    dropped = {**info.skipped, **info.dropped}
    if info.malformed_skipped:
        dropped["malformed"] = info.malformed_skipped
    return WaitValidation(
        counts=counts,
        overall=wait_errors(rec, sim),
        group_by=group_by,
        groups=wait_errors_by_group(rec, sim, codes, _names(jobs, group_by)),
        rolling=rolling_wait_mape(np.asarray(jobs["submit"])[rows], rec, sim,
                                  window=window, step=step),
        cleaning=archive_cleaning(info.header_lines, info.lines_read),
        dropped=dropped,
        scheduler=header_scheduler(info.header_lines),
    )
