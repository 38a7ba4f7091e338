"""Warnings about a simulation's set-up (before the run) and its outcome (after it).

Each warning is one short line of text, with the numbers behind it and no trailing
period; the caller prints it (``dispatchlab simulate`` writes ``warning: <text>`` on
stderr) and the run goes on. A function returns ``[]`` when nothing applies.

Before the run, :func:`platform_warnings`:

1. *smaller machine*: the platform's primary resource (cores) is below the trace
   header's MaxProcs, so the same jobs load it about ``MaxProcs / cores`` times more
   than the recorded machine;
2. *overload*: the estimated offered load on the platform (:func:`load_estimate`) is
   above 1: the platform cannot keep up with the jobs, the queue grows while they
   arrive, and waits measure the backlog rather than the dispatcher.

After the run, :func:`result_warnings`: throttling without slowdown (a dispatcher that
slows running jobs, run with the duration model ``none``), a run stopped by its
wall-clock budget, and more than :data:`REJECTED_SHARE` of the jobs rejected, with the
most common rejection reason.

:func:`run_warnings` is the one list of every warning of a run: the pre-run and the
post-run ones, in that order. A run's summary stores it (``warnings`` in
``summary.json`` and in a campaign's ``runs`` rows, shown beside the run in the
report), so a warning any of these functions returns is kept with the run without
further wiring.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.metrics import REJECTED
from dispatchlab.workload.load import trace_capacity, work

if TYPE_CHECKING:
    from dispatchlab.platform import Platform
    from dispatchlab.sim.result import SimulationResult
    from dispatchlab.workload.jobs import JobTable

__all__ = ["MAX_LOAD", "REJECTED_SHARE", "THROTTLING_WITHOUT_SLOWDOWN", "load_estimate",
           "platform_warnings", "result_warnings", "run_warnings"]

#: Estimated offered load (:func:`load_estimate`) above which the platform is overloaded.
MAX_LOAD: float = 1.0
#: How the warning about a throttling run with the duration model ``none`` begins.
THROTTLING_WITHOUT_SLOWDOWN: str = "throttling without slowdown"
#: Share of rejected jobs (0..1) above which :func:`result_warnings` warns (1 %).
REJECTED_SHARE: float = 0.01


def _smaller_machine(jobs: JobTable, platform: Platform) -> str | None:
    """Warning 1: the platform has fewer of its primary resource than MaxProcs."""
    capacity = trace_capacity(jobs, platform)
    recorded = jobs.info.max_procs
    if not recorded or capacity.amount is None or capacity.amount >= recorded:
        return None
    text = (
        f"platform has {capacity.amount:,} {capacity.resource}s, the trace's machine had "
        f"{recorded:,} (MaxProcs)"
    )
    if capacity.amount == 0:
        return text
    return text + f": expect a load about {recorded / capacity.amount:.1f}x the recorded one"


def load_estimate(jobs: JobTable, capacity: int | None,
                  resource: str = "core") -> tuple[float, int] | None:
    """The estimated offered load of ``jobs`` on ``capacity`` of ``resource``, and the
    span it is taken over: ``(work / (capacity x span), span)``.

    ``work`` is :func:`dispatchlab.workload.load.work` (resource-seconds of the jobs with
    ``run >= 0``) and ``span = max(submit + run) - min(submit)`` (s; the maximum over
    the jobs with ``run >= 0``, the minimum over all rows): the time from the first
    submission to the last end the jobs would reach if none of them waited. No schedule
    on any platform ends them sooner, so an estimate above 1 means the platform cannot
    run the work in that time whatever the dispatcher: jobs must queue. The span is at
    least the submission span (the plain offered load's,
    :func:`dispatchlab.workload.load.offered_load`) and at least the longest run: a
    burst of jobs submitted within minutes is spread over the hours its longest job
    takes, not over the minutes of its arrivals (where the plain load of a 100-job
    Eurora instance is 2.31 while the machine is 7.5 % busy). On a long trace the two
    agree. None when ``capacity`` is None or 0, or no job has ``run >= 0``, or the span
    is 0."""
    submit, run = jobs["submit"], jobs["run"]
    keep = run >= 0
    if not capacity or not keep.any():
        return None
    span = int((submit[keep] + run[keep]).max()) - int(submit.min())
    if span <= 0:
        return None
    return work(jobs, resource) / (float(capacity) * span), span


def _overloaded(jobs: JobTable, platform: Platform) -> str | None:
    """Warning 2: the estimated offered load on the platform is above :data:`MAX_LOAD`."""
    capacity = trace_capacity(jobs, platform)
    found = load_estimate(jobs, capacity.amount, capacity.resource)
    if found is None or found[0] <= MAX_LOAD:
        return None
    load, span = found
    return (
        f"offered load on this platform is about {load:.2f} (> {MAX_LOAD:g}; estimated as "
        f"work / (capacity x {span:,} s from the first submission to the last end without "
        "waiting)): the queue grows while jobs arrive and waits measure the backlog, not "
        "the dispatcher"
    )


def platform_warnings(jobs: JobTable, platform: Platform) -> list[str]:
    """Pre-run warnings about running ``jobs`` on ``platform`` (see the module docstring).

    Capacities are the platform's total of its primary resource (``"core"`` when it has
    cores); the offered load uses the jobs' run times (``run >= 0``) and submit times
    as loaded (seconds). A platform without any of its primary resource gives no
    overload warning (the load is undefined); its jobs are rejected instead.
    """
    found = (_smaller_machine(jobs, platform), _overloaded(jobs, platform))
    return [text for text in found if text is not None]


def result_warnings(result: SimulationResult) -> list[str]:
    """Post-run warnings about ``result``, in this order: throttling without slowdown
    (``result.throttling_without_slowdown``: the dispatcher slows running jobs and the
    duration model is ``none``; the line starts with
    :data:`THROTTLING_WITHOUT_SLOWDOWN`), a run stopped by its wall-clock budget (its
    metrics cover only the jobs that ended), and more than 1 % of the jobs rejected.

    The share is rejected jobs / all jobs of the table (no measurement window); the
    line names the most common reason in ``result.reject_reason`` (ties: the reason
    met first in job order) and how many jobs got it.
    """
    out = []
    if getattr(result, "throttling_without_slowdown", False):
        out.append(f"{THROTTLING_WITHOUT_SLOWDOWN}: dispatcher {result.dispatcher} lowers "
                   "running jobs' power levels, and the duration model is 'none', so a "
                   "throttled job ran as long as at full power")
    if not getattr(result, "finished", True):
        e = result.extra
        out.append(f"NOT FINISHED: the run stopped at its wall-clock budget ({e['max_wall']} "
                   f"s) at trace time {e['stopped_at']:,} s; {e['jobs_done']:,} of "
                   f"{e['jobs_total']:,} jobs had ended and the metrics cover only those "
                   f"({e['jobs_running']:,} running, {e['jobs_waiting']:,} waiting, "
                   f"{e['jobs_not_submitted']:,} not submitted yet)")
    return out + _rejected_warning(result)


def _rejected_warning(result: SimulationResult) -> list[str]:
    total = len(result.status)
    rejected = int(np.count_nonzero(result.status == REJECTED))
    if total == 0 or rejected / total <= REJECTED_SHARE:
        return []
    text = f"{rejected:,} of {total:,} jobs ({100 * rejected / total:.1f} %) were rejected"
    reasons = Counter(result.reject_reason[row] for row in sorted(result.reject_reason))
    if reasons:
        reason, count = reasons.most_common(1)[0]
        text += f"; most common reason ({count:,} job{'' if count == 1 else 's'}): {reason}"
    return [text]


def run_warnings(result: SimulationResult) -> list[str]:
    """Every warning of a run, as printed: :func:`platform_warnings` of the jobs the run
    was given (for an unfinished run, all of them, not only those that ended:
    ``result.input_jobs``) on its platform, then :func:`result_warnings`."""
    jobs = result.input_jobs if result.input_jobs is not None else result.jobs
    return platform_warnings(jobs, result.platform) + result_warnings(result)
