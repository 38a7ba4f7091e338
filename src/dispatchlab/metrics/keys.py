"""The run-level metrics, declared once.

Every metric a run reports in its summary (``summary.json``, the campaign store's
``runs`` columns, the CLI tables, ``study``/``compare`` tables, the report and the
statistics over runs) is one :class:`Metric` in :data:`METRICS`. A later feature adds
a metric by adding one entry here (and computing it in
:func:`dispatchlab.metrics.summarize`); the store's columns, the tables and the
statistics follow from this list. The store creates new columns for entries added
after a database was written (see :mod:`dispatchlab.campaign.store`).

Aggregation over runs (the statistics of :mod:`dispatchlab.stats`): the unit is a
run (one workload: a seed, a slice); a configuration's value is the mean over its
runs of each run's value, with a bootstrap interval over runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Metric:
    """One run-level metric.

    ``key``: name in the summary dict and column name in the store's ``runs`` table;
    ``path``: where the value sits in the summary (``("by_class", "short",
    "mean_bsld")`` for a nested value; default ``(key,)``); ``unit``: ``"s"``,
    ``"jobs"``, ``"1"`` (a ratio) or ``"count"``; ``sql``: the column type
    (``BIGINT`` or ``DOUBLE``); ``better``: ``"lower"``, ``"higher"`` or ``None``
    (a count, no direction); ``label``: the short column header of tables;
    ``fmt``: a format spec for tables (``"{:,.0f}"``); ``meaning``: one sentence.
    """

    key: str
    unit: str
    sql: str
    better: str | None
    label: str
    fmt: str
    meaning: str
    path: tuple[str, ...] = ()

    def value(self, summary: Mapping[str, Any] | None) -> Any:
        """This metric's value in a run summary (None when absent)."""
        node: Any = summary
        for part in self.path or (self.key,):
            if not isinstance(node, Mapping):
                return None
            node = node.get(part)
        return node

    def format(self, value: Any) -> str:
        """``value`` for a table cell (``-`` when missing)."""
        if value is None:
            return "-"
        try:
            if value != value:  # NaN
                return "-"
        except TypeError:
            return str(value)
        return self.fmt.format(value)


def _m(key: str, unit: str, sql: str, better: str | None, label: str, fmt: str,
       meaning: str, path: tuple[str, ...] = ()) -> Metric:
    return Metric(key, unit, sql, better, label, fmt, meaning, path)


#: Every run-level metric, in table order.
METRICS: tuple[Metric, ...] = (
    _m("jobs", "jobs", "BIGINT", None, "jobs", "{:,}",
       "measured jobs that ran (not rejected)"),
    _m("rejected", "jobs", "BIGINT", None, "rejected", "{:,}",
       "measured jobs rejected because they can never fit the platform"),
    _m("killed", "jobs", "BIGINT", None, "killed", "{:,}",
       "measured jobs killed at their requested time (overrun = kill)"),
    _m("mean_wait", "s", "DOUBLE", "lower", "mean wait", "{:,.0f}",
       "mean of start - submit over the measured jobs"),
    _m("median_wait", "s", "DOUBLE", "lower", "median wait", "{:,.0f}",
       "median wait over the measured jobs"),
    _m("p95_wait", "s", "DOUBLE", "lower", "p95 wait", "{:,.0f}",
       "95th percentile of the wait over the measured jobs"),
    _m("max_wait", "s", "DOUBLE", "lower", "max wait", "{:,.0f}",
       "longest wait of a measured job"),
    _m("mean_slowdown", "1", "DOUBLE", "lower", "slowdown", "{:,.2f}",
       "mean of (wait + run) / max(run, 1)"),
    _m("mean_bsld", "1", "DOUBLE", "lower", "bsld", "{:,.2f}",
       "mean bounded slowdown max((wait + run) / max(run, tau), 1)"),
    _m("p95_bsld", "1", "DOUBLE", "lower", "p95 bsld", "{:,.2f}",
       "95th percentile of the bounded slowdown"),
    _m("bsld_short", "1", "DOUBLE", "lower", "bsld short", "{:,.2f}",
       "mean bounded slowdown of short jobs (run < 1 h)", ("by_class", "short", "mean_bsld")),
    _m("bsld_medium", "1", "DOUBLE", "lower", "bsld medium", "{:,.2f}",
       "mean bounded slowdown of medium jobs (1 h <= run <= 12 h)",
       ("by_class", "medium", "mean_bsld")),
    _m("bsld_long", "1", "DOUBLE", "lower", "bsld long", "{:,.2f}",
       "mean bounded slowdown of long jobs (run > 12 h)", ("by_class", "long", "mean_bsld")),
    _m("utilization", "1", "DOUBLE", "higher", "util", "{:.3f}",
       "work of the measured jobs over capacity x makespan (whole run; below saturation "
       "it tracks the offered load)"),
    _m("steady_utilization", "1", "DOUBLE", "higher", "steady util", "{:.3f}",
       "utilization over [first time half the platform is busy, last submission], all jobs"),
    _m("makespan", "s", "BIGINT", None, "makespan", "{:,}",
       "last end - first submit of the measured jobs"),
    _m("mean_queue_length", "jobs", "DOUBLE", "lower", "mean queue", "{:,.1f}",
       "time-weighted mean number of waiting measured jobs"),
    _m("decision_calls", "count", "BIGINT", None, "passes", "{:,}",
       "dispatcher calls"),
    _m("mean_decision_time", "s", "DOUBLE", "lower", "mean decision s", "{:.2e}",
       "mean wall time of one dispatcher call"),
    _m("p99_decision_time", "s", "DOUBLE", "lower", "p99 decision s", "{:.2e}",
       "99th percentile of the wall time of one dispatcher call"),
    _m("total_decision_time", "s", "DOUBLE", "lower", "decision s", "{:.2f}",
       "total wall time spent in the dispatcher"),
)

#: Metrics by key.
BY_KEY: dict[str, Metric] = {m.key: m for m in METRICS}

#: Metrics shown in the CLI summary tables (``simulate``, ``demo``).
SUMMARY_TABLE: tuple[str, ...] = (
    "jobs", "rejected", "mean_wait", "median_wait", "p95_wait", "max_wait",
    "mean_slowdown", "mean_bsld", "utilization", "steady_utilization", "makespan",
)

#: Metrics shown with intervals in comparison tables (``compare``, ``results``, report).
COMPARE_TABLE: tuple[str, ...] = (
    "mean_wait", "median_wait", "p95_wait", "max_wait", "mean_slowdown", "mean_bsld",
    "utilization", "steady_utilization", "makespan", "mean_decision_time",
)


def metric(key: str) -> Metric:
    """The declared metric ``key``; an unknown key raises ``KeyError`` naming the choices."""
    try:
        return BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown metric {key!r} (declared: {', '.join(BY_KEY)})") from None


def summary_values(summary: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every declared metric's value in a run summary, by key (None when absent)."""
    return {m.key: m.value(summary) for m in METRICS}
