"""The run-level metrics, declared once.

Every metric a run reports in its summary (``summary.json``, the campaign store's
``runs`` columns, the CLI tables, ``study``/``compare`` tables, the report and the
statistics over runs) is one :class:`Metric` in :data:`METRICS`. A later feature adds
a metric by adding one entry here (and computing it in
:func:`dispatchlab.metrics.summarize`); the store's columns, the tables and the
statistics follow from this list. The store creates new columns for entries added
after a database was written (see :mod:`dispatchlab.experiment.campaign.store`).

Aggregation over runs (the statistics of :mod:`dispatchlab.experiment.statistics`): the unit is a
run (one workload: a seed, a slice); a configuration's value is the mean over its
runs of each run's value, with a bootstrap interval over runs.

**Decision time** (wall clock, seconds per dispatcher call, i.e. per scheduling pass):
``decision_calls``, ``mean_decision_time``, ``p50_decision_time``,
``p99_decision_time``, ``max_decision_time`` and ``total_decision_time``, computed by
:func:`dispatchlab.metrics.summary.decision_time_stats` (percentiles with numpy's
``"linear"`` method). They measure the machine as much as the dispatcher
(:data:`WALL_CLOCK`).

**Dispatcher facts** (:data:`DISPATCHER_FACTS`): run-level values that only some
runs have, supplied by the engine or the dispatcher rather than computed from the
schedule: ``finished`` (1 when the simulation ran to the end, 0 when a wall-clock
budget such as ``--max-wall`` stopped it) and the constraint-programming dispatchers'
``cp_passes``, ``cp_improved_share``, ``cp_limit_hits`` and ``cp_mean_modelled``.
:func:`dispatchlab.metrics.summarize` copies them into the summary when given
(``dispatcher_facts``); a run without them has None there, a null store column and
``-`` in tables (:meth:`Metric.format`).

**Borghesi et al. 2018's BSLD** (``mean_power_bsld``, ``max_power_bsld``; eq. 3 of Borghesi et al.
2018, :func:`dispatchlab.metrics.jobs.power_bounded_slowdown`): computed by
:func:`~dispatchlab.metrics.summarize` when it is given the jobs' unstretched runs, which
:meth:`~dispatchlab.sim.result.SimulationResult.summary` does for runs whose jobs carry
power columns (the power runs; ours: other runs have None, as their runs are never
stretched and the value would only repeat the bounded slowdown with ``tau = 300 s``).
It is reported beside, not instead of, ``mean_bsld`` (``tau``). **Hot start**:
``hot_start_jobs`` counts the dummy jobs of a hot start (job column ``hot_start`` = 1),
present only when the jobs table has that column.
"""

from __future__ import annotations

import math
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
    ``fmt``: a format spec for tables (``"{:,.0f}"``); ``meaning``: one sentence;
    ``wall_clock`` (ours): the value depends on wall-clock time (the machine's speed
    and load), so two executions of the same run differ in it even though the
    simulated schedule is the same.
    """

    key: str
    unit: str
    sql: str
    better: str | None
    label: str
    fmt: str
    meaning: str
    path: tuple[str, ...] = ()
    wall_clock: bool = False

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
       meaning: str, path: tuple[str, ...] = (), *, wall_clock: bool = False) -> Metric:
    return Metric(key, unit, sql, better, label, fmt, meaning, path, wall_clock)


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
    _m("mean_turnaround", "s", "DOUBLE", "lower", "mean turnaround", "{:,.0f}",
       "mean of end - submit (wait + run) over the measured jobs"),
    _m("max_turnaround", "s", "DOUBLE", "lower", "max turnaround", "{:,.0f}",
       "longest end - submit of a measured job (starvation)"),
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
       "dispatcher calls (scheduling passes)"),
    _m("mean_decision_time", "s", "DOUBLE", "lower", "mean decision s", "{:.2e}",
       "mean wall time of one dispatcher call", wall_clock=True),
    _m("p50_decision_time", "s", "DOUBLE", "lower", "p50 decision s", "{:.2e}",
       "median wall time of one dispatcher call (linear interpolation)", wall_clock=True),
    _m("p99_decision_time", "s", "DOUBLE", "lower", "p99 decision s", "{:.2e}",
       "99th percentile of the wall time of one dispatcher call (linear interpolation)",
       wall_clock=True),
    _m("max_decision_time", "s", "DOUBLE", "lower", "max decision s", "{:.2e}",
       "longest wall time of one dispatcher call", wall_clock=True),
    _m("total_decision_time", "s", "DOUBLE", "lower", "decision s", "{:.2f}",
       "total wall time spent in the dispatcher", wall_clock=True),
    # dispatcher facts: present only in runs whose engine / dispatcher supplies them
    _m("finished", "1", "BIGINT", "higher", "finished", "{:,}",
       "1 when the simulation ran to the end, 0 when a wall-clock budget (--max-wall) "
       "stopped it; over runs, the share of runs that finished", wall_clock=True),
    _m("cp_passes", "count", "BIGINT", None, "CP passes", "{:,}",
       "scheduling passes in which a constraint solver ran"),
    _m("cp_improved_share", "1", "DOUBLE", None, "CP improved", "{:.3f}",
       "share of the solved passes whose solver plan improved on the PRB reference plan"),
    _m("cp_limit_hits", "count", "BIGINT", None, "CP limit hits", "{:,}",
       "solved passes in which the solver stopped at its time limit"),
    _m("cp_mean_modelled", "jobs", "DOUBLE", None, "CP modelled", "{:,.1f}",
       "mean number of jobs in the solver model per solved pass"),
    # power facts: present only in runs whose jobs carry power (dispatchlab.power)
    _m("energy_j", "J", "DOUBLE", "lower", "energy J", "{:,.3g}",
       "energy of the running jobs over the run (integral of the platform power)"),
    _m("mean_power_w", "W", "DOUBLE", None, "mean power W", "{:,.0f}",
       "mean platform power (running jobs) from the first start to the last end"),
    _m("power_unknown_jobs", "jobs", "BIGINT", None, "power unknown", "{:,}",
       "jobs whose power is unknown (counted as 0 W)"),
    _m("cap_mean_share", "1", "DOUBLE", None, "power / cap", "{:.3f}",
       "mean platform power in the cap window as a share of the cap"),
    _m("cap_time_above_share", "1", "DOUBLE", "lower", "time above cap", "{:.3f}",
       "share of the cap window's time with the platform power above the cap"),
    _m("cap_max_excess", "1", "DOUBLE", "lower", "max excess", "{:.3f}",
       "largest excess of the platform power over the cap, as a share of the cap"),
    _m("cap_time_above_own_share", "1", "DOUBLE", "lower", "time above cap (own)", "{:.3f}",
       "share of the cap window's time with the platform power above the cap while the "
       "jobs already running when the window opened are within it on their own (the "
       "excess the dispatcher's own starts caused)"),
    _m("cap_max_excess_own", "1", "DOUBLE", "lower", "max excess (own)", "{:.3f}",
       "largest excess over the cap (share of the cap) at such times"),
    _m("cap_mean_underuse", "1", "DOUBLE", "lower", "under-use", "{:.3f}",
       "time-mean of (cap - power) / cap in the cap window (0 while above)"),
    _m("window_start_share", "1", "DOUBLE", None, "started in window", "{:.3f}",
       "share of the started jobs that started inside the cap window"),
    # Borghesi et al. 2018's BSLD (eq. 3): present only in runs whose jobs carry power
    _m("mean_power_bsld", "1", "DOUBLE", "lower", "power bsld", "{:,.2f}",
       "mean of Borghesi et al. 2018's bounded slowdown max((wait + effective run) / max(300 s, "
       "unstretched run), 1): effective run = end - start (stretched by power "
       "reductions), unstretched run = the simulated run at nominal speed"),
    _m("max_power_bsld", "1", "DOUBLE", "lower", "max power bsld", "{:,.2f}",
       "largest Borghesi et al. 2018 bounded slowdown (eq. 3) of a measured job"),
    # present only in runs whose job table has a hot_start column (Borghesi et al. 2018's hot start)
    _m("hot_start_jobs", "jobs", "BIGINT", None, "hot-start jobs", "{:,}",
       "dummy jobs of a hot start (busy nodes at time 0), excluded from every other "
       "metric of the summary"),
    # present only in runs given job power series (simulate --power-series)
    _m("power_series_period", "s", "BIGINT", None, "power sampled s", "{:,}",
       "sampling period of the platform power built from the job power series; when "
       "present, the cap_* metrics are computed on that sampled power"),
    _m("power_series_fallback_jobs", "jobs", "BIGINT", None, "no power series", "{:,}",
       "started jobs without a power series (their mean power is used)"),
)

#: Metrics by key.
BY_KEY: dict[str, Metric] = {m.key: m for m in METRICS}

#: Metrics shown in the CLI summary tables (``simulate``, ``demo``).
SUMMARY_TABLE: tuple[str, ...] = (
    "jobs", "rejected", "mean_wait", "median_wait", "p95_wait", "max_wait",
    "mean_slowdown", "mean_bsld", "utilization", "steady_utilization", "makespan",
)

#: Power metrics shown in the CLI summary table below :data:`SUMMARY_TABLE` when a run
#: reports them (jobs with power; the cap_* ones with a cap, the power BSLD with job power).
POWER_TABLE: tuple[str, ...] = (
    "energy_j", "mean_power_w", "power_unknown_jobs", "cap_mean_share",
    "cap_time_above_share", "cap_max_excess", "cap_time_above_own_share",
    "cap_max_excess_own", "cap_mean_underuse", "mean_power_bsld", "max_power_bsld",
)

#: Metrics shown with intervals in comparison tables (``compare``, ``results``, report).
COMPARE_TABLE: tuple[str, ...] = (
    "mean_wait", "median_wait", "p95_wait", "max_wait", "mean_slowdown", "mean_bsld",
    "utilization", "steady_utilization", "makespan", "mean_decision_time",
)


#: Declared metrics that :func:`dispatchlab.metrics.summarize` does not compute from the
#: schedule but copies from its ``dispatcher_facts`` argument, with the closed range
#: ``(low, high)`` a given value must lie in (ours: ``finished`` is 0 or 1 and a share
#: lies in [0, 1]; counts are integers >= 0). A run that does not supply one has None.
DISPATCHER_FACTS: dict[str, tuple[float, float]] = {
    "finished": (0, 1),
    "cp_passes": (0, math.inf),
    "cp_improved_share": (0, 1),
    "cp_limit_hits": (0, math.inf),
    "cp_mean_modelled": (0, math.inf),
    "energy_j": (0, math.inf),
    "mean_power_w": (0, math.inf),
    "power_unknown_jobs": (0, math.inf),
    "cap_mean_share": (0, math.inf),
    "cap_time_above_share": (0, 1),
    "cap_max_excess": (0, math.inf),
    "cap_mean_underuse": (0, 1),
    "window_start_share": (0, 1),
    "power_series_period": (1, math.inf),
    "power_series_fallback_jobs": (0, math.inf),
}

#: Keys of the declared metrics measured on the wall clock (:attr:`Metric.wall_clock`):
#: they differ between two executions of one run. Run records have further wall-clock
#: fields outside the metrics (``simulate_seconds``, ``wall_seconds``).
WALL_CLOCK: frozenset[str] = frozenset(m.key for m in METRICS if m.wall_clock)


def metric(key: str) -> Metric:
    """The declared metric ``key``; an unknown key raises ``KeyError`` naming the choices."""
    try:
        return BY_KEY[key]
    except KeyError:
        raise KeyError(f"unknown metric {key!r} (declared: {', '.join(BY_KEY)})") from None


def summary_values(summary: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every declared metric's value in a run summary, by key (None when absent)."""
    return {m.key: m.value(summary) for m in METRICS}
