"""Metrics: pure functions from recorded simulation results to figures.

- :mod:`dispatchlab.metrics.jobs`: per-job metrics (wait, turnaround, run, slowdown,
  bounded slowdown, job class), the measurement window :class:`Measure`, aggregates;
- :mod:`dispatchlab.metrics.series`: time-weighted step functions (queue length,
  resources in use);
- :mod:`dispatchlab.metrics.distributions`: step functions merged on their breakpoints,
  their value distributions and weighted box statistics (the study's and report's boxes);
- :mod:`dispatchlab.metrics.summary`: makespan, utilization, steady-state utilization,
  decision time and the JSON summary of a run (:func:`summarize`).
"""

from dispatchlab.metrics.jobs import (
    COMPLETED,
    DEFAULT_TAU,
    JOB_CLASS_LABELS,
    KILLED,
    MEDIUM_MAX,
    NO_CLASS,
    REJECTED,
    SHORT_MAX,
    Measure,
    bounded_slowdown,
    check_results,
    check_tau,
    describe,
    job_class,
    job_class_labels,
    job_columns,
    job_stats,
    measured_mask,
    slowdown,
)
from dispatchlab.metrics.series import StepFunction, queue_length, resource_in_use, step_function
from dispatchlab.metrics.summary import (
    STEADY_THRESHOLD,
    MeasuredSeries,
    decision_time_stats,
    measured_series,
    primary_resource,
    steady_state_utilization,
    summarize,
    summarize_table,
)

__all__ = [
    "COMPLETED",
    "DEFAULT_TAU",
    "JOB_CLASS_LABELS",
    "KILLED",
    "MEDIUM_MAX",
    "NO_CLASS",
    "REJECTED",
    "SHORT_MAX",
    "STEADY_THRESHOLD",
    "Measure",
    "MeasuredSeries",
    "StepFunction",
    "bounded_slowdown",
    "check_results",
    "check_tau",
    "decision_time_stats",
    "describe",
    "job_class",
    "job_class_labels",
    "job_columns",
    "job_stats",
    "measured_mask",
    "measured_series",
    "primary_resource",
    "queue_length",
    "resource_in_use",
    "slowdown",
    "steady_state_utilization",
    "step_function",
    "summarize",
    "summarize_table",
]
