"""System metrics over the measured jobs, and the JSON summary of a run.

The *measured jobs* are the rows inside the measurement window
(:class:`~dispatchlab.metrics.jobs.Measure`, default: all rows) that were not
rejected. Over them, with ``T0 = min(submit)`` and ``T1 = max(end)`` (seconds):

- ``makespan = T1 - T0``;
- ``utilization[r] = sum(units x per-unit r x run) / (capacity[r] x makespan)``;
- the time series (:func:`measured_series`) are built **from the measured jobs only**
  and restricted to the horizon ``[T0, T1)``: the queue length counts measured jobs
  waiting (``[submit, start)``), the resource in use counts measured jobs running
  (``[start, end)``). Warm-up and cool-down jobs outside the window are not in these
  series even while they wait or run inside ``[T0, T1)``. With this choice the
  time-weighted mean of ``in_use[r] / capacity[r]`` over ``[T0, T1)`` equals
  ``utilization[r]`` exactly, and the time-weighted mean queue length equals
  ``sum(wait) / makespan``.

Rejected jobs are counted (``rejected``) and excluded from everything else.

**Hot start** (Borghesi et al. 2018, ours where the paper is silent). A job table may carry an int
column ``hot_start`` (1 = a dummy job that keeps a node busy from the start of a hot-start
run, :mod:`dispatchlab.sim.hotstart`; 0 = a job of the workload). The dummies are
not part of the workload: :func:`summarize` drops them from every count (``total_jobs``
included), job metric, series and utilization (the steady-state one too) and reports
their number as ``hot_start_jobs``. A summary without the column has no
``hot_start_jobs`` key and is computed exactly as before.

**Steady-state utilization** (:func:`steady_state_utilization`, summary keys
``steady_utilization``, ``steady_window``, ``steady_fallback``). The whole-run
``utilization`` includes the ramp-up from an empty machine and the drain after the last
submission, when no dispatcher can keep the machine busy. The steady value leaves both
out. Over **all** non-rejected jobs (lead-in and cool-down jobs included, whatever the
measurement window), with ``in_use(t)`` the primary resource held by running jobs:

- ``t0``: the first time ``in_use(t) >= 50 %`` of the platform capacity of the primary
  resource (the value after all the changes at one timestamp counts, as in
  :mod:`~dispatchlab.metrics.series`);
- ``t1``: the last submission time of a non-rejected job (a rejected job never reaches
  the machine, so it does not extend the window);
- ``steady_utilization = integral of in_use over [t0, t1) / (capacity x (t1 - t0))``,
  ``steady_window = [t0, t1]``, ``steady_fallback = false``.

When half the capacity is never in use, or ``t1 <= t0`` (the machine fills only after
the last submission), there is no steady window: ``steady_utilization`` is the whole-run
``utilization``, ``steady_window`` is None and ``steady_fallback`` is true.

*Limits.* Below saturation (offered load < 1, queue mostly empty) every dispatcher
starts jobs as they arrive, so both whole-run and steady utilization track the offered
load and barely separate dispatchers. They separate them only when the machine is
saturated (work waits), where a dispatcher that packs better keeps more of the machine
busy. The 50 % threshold is a fixed rule, not a detected equilibrium: a workload whose
load changes over time (day/night cycles, bursts) has no single steady state, and the
window then averages over whatever happened between ``t0`` and ``t1``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from dispatchlab.core.errors import InputError
from dispatchlab.metrics.jobs import (
    DEFAULT_TAU,
    KILLED,
    POWER_BSLD_THETA,
    REJECTED,
    Measure,
    _int_array,
    check_results,
    check_tau,
    class_blocks,
    describe,
    power_bounded_slowdown,
    slowdowns,
)
from dispatchlab.metrics.keys import BY_KEY, DISPATCHER_FACTS
from dispatchlab.metrics.series import StepFunction, queue_length, resource_in_use

if TYPE_CHECKING:  # a table is only read by column: metrics import no workload module
    from dispatchlab.workload.jobs import JobTable


def _json_value(x: Any) -> Any:
    """Python scalars for JSON: numpy scalars unwrapped, NaN/inf -> None, dicts recursed."""
    if isinstance(x, Mapping):
        return {str(k): _json_value(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_json_value(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _check_capacity(capacity: Mapping[str, int]) -> dict[str, int]:
    if not capacity:
        raise InputError("platform capacity must name at least one resource")
    out: dict[str, int] = {}
    for name, value in capacity.items():
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
            raise InputError(
                f"capacity of {name!r} must be a non-negative integer, got {value!r}",
                field="capacity",
            )
        out[str(name)] = int(value)
    return out


def _amounts(
    units: ArrayLike, resources: Mapping[str, ArrayLike], n: int
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    u = _int_array(units, "units")
    if len(u) != n:
        raise InputError(f"units has {len(u)} rows, expected {n}", field="units")
    res: dict[str, np.ndarray] = {}
    for name, per_unit in resources.items():
        r = _int_array(per_unit, f"resources[{name}]")
        if len(r) != n:
            raise InputError(f"resource {name!r} has {len(r)} rows, expected {n}", field=name)
        res[name] = u * r
    return u, res


def primary_resource(capacity: Mapping[str, int]) -> str:
    """The resource reported as ``utilization``: ``"core"`` if present, else the first one."""
    if "core" in capacity:
        return "core"
    return next(iter(capacity))


@dataclass(frozen=True, eq=False)
class MeasuredSeries:
    """Time series over the measured jobs, on the horizon ``[t0, t1)`` (s).

    ``queue``: number of measured jobs waiting; ``in_use[r]``: amount of resource ``r``
    held by measured jobs (``units x per-unit r``); ``capacity[r]``: platform total.
    ``t0``/``t1`` are None (and the series empty) when no job is measured.
    """

    queue: StepFunction
    in_use: dict[str, StepFunction]
    capacity: dict[str, int]
    t0: int | None = None
    t1: int | None = None

    def utilization(self, resource: str) -> StepFunction:
        """``in_use[resource] / capacity[resource]`` as a step function (float values)."""
        cap = self.capacity[resource]
        return self.in_use[resource].scaled(1.0 / cap if cap else float("nan"))


def measured_series(
    submit: ArrayLike,
    start: ArrayLike,
    end: ArrayLike,
    status: ArrayLike,
    units: ArrayLike,
    resources: Mapping[str, ArrayLike],
    capacity: Mapping[str, int],
    *,
    measure: Measure | None = None,
    exclude: ArrayLike | None = None,
) -> MeasuredSeries:
    """Queue length and resources in use of the measured jobs on ``[T0, T1)``.

    See the module docstring for exactly which jobs and which horizon. Resources in
    ``capacity`` that the jobs do not request are in use 0; a resource that measured
    jobs use (amount > 0) but that has no capacity raises :class:`InputError`.
    ``exclude``: a boolean mask of rows that are never measured (the hot-start dummies,
    :func:`hot_start_mask`).
    """
    sub, sta, en, st = check_results(submit, start, end, status)
    cap = _check_capacity(capacity)
    _, amounts = _amounts(units, resources, len(sub))
    rows = (measure or Measure()).mask(sub) & (st != REJECTED)
    if exclude is not None:
        rows &= ~_bool_rows(exclude, len(sub), "exclude")
    used = _measured_amounts(amounts, rows, cap)
    return _series_of(sub[rows], sta[rows], en[rows], used, cap)


def _measured_amounts(amounts: Mapping[str, np.ndarray], rows: np.ndarray,
                      cap: Mapping[str, int]) -> dict[str, np.ndarray]:
    """Each resource's amounts (units x per-unit) of the measured ``rows`` (``amounts``
    themselves when every row is measured); a resource they use (amount > 0) without a
    capacity in ``cap`` raises :class:`InputError`."""
    every = bool(rows.all())
    used = {name: amount if every else amount[rows] for name, amount in amounts.items()}
    for name, amount in used.items():
        if name not in cap and np.any(amount > 0):
            raise InputError(f"jobs use resource {name!r} but the platform has no capacity for it")
    return used


def _series_of(submit: np.ndarray, start: np.ndarray, end: np.ndarray,
               amounts: Mapping[str, np.ndarray], cap: dict[str, int],
               resources: Iterable[str] | None = None) -> MeasuredSeries:
    """:func:`measured_series` of the measured jobs' checked ``submit``, ``start``,
    ``end`` and resource ``amounts`` (the measured rows only, in table order), with the
    in-use series of the ``resources`` named (default: every resource of ``cap``)."""
    names = list(cap if resources is None else resources)
    if not len(submit):
        empty = StepFunction(np.zeros(0, np.int64), np.zeros(0, np.int64), 0)
        return MeasuredSeries(empty, dict.fromkeys(names, empty), cap)
    t0, t1 = int(submit.min()), int(end.max())
    horizon = (t0, t1)
    queue = queue_length(submit, start, horizon=horizon)
    in_use: dict[str, StepFunction] = {}
    for name in names:
        amount = amounts[name] if name in amounts else np.zeros(len(submit), np.int64)
        in_use[name] = resource_in_use(start, end, amount, horizon=horizon)
    return MeasuredSeries(queue, in_use, cap, t0, t1)


def _bool_rows(mask: ArrayLike, n: int, name: str) -> np.ndarray:
    m = np.asarray(mask, dtype=bool)
    if m.shape != (n,):
        raise InputError(f"{name} has shape {m.shape}, expected ({n},)", field=name)
    return m


def hot_start_mask(hot_start: ArrayLike | None, n: int) -> np.ndarray | None:
    """The rows of hot-start dummy jobs (bool, ``hot_start == 1``) from a ``hot_start``
    column (None: no column, None returned). Values must be 0 or 1 (else
    :class:`InputError`)."""
    if hot_start is None:
        return None
    h = np.asarray(hot_start)
    if h.shape != (n,):
        raise InputError(f"hot_start has {h.size} rows, expected {n}", field="hot_start")
    bad = (h != 0) & (h != 1)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"job row {i}: hot_start must be 0 or 1, got {h[i]!r}",
                         field="hot_start")
    return h == 1


#: Fraction of the primary resource's capacity whose first crossing opens the steady window.
STEADY_THRESHOLD: float = 0.5


def _whole_run_utilization(
    submit: np.ndarray, start: np.ndarray, end: np.ndarray, amount: np.ndarray, capacity: int
) -> float:
    """``sum(amount x run) / (capacity x (max end - min submit))`` of the given jobs
    (NaN when there is no job, no time span or no capacity)."""
    if len(submit) == 0 or capacity == 0:
        return float("nan")
    span = int(end.max()) - int(submit.min())
    if span <= 0:
        return float("nan")
    used = float((amount.astype(np.float64) * (end - start)).sum())
    return used / (capacity * span)


def _integral(f: StepFunction, t0: int, t1: int) -> float:
    """Integral of ``f`` over ``[t0, t1)`` (value x seconds, float64), ``f`` taken as 0
    outside its domain: the sum of each value times the seconds of its segment inside
    ``[t0, t1)``, in segment order (computed in place: two arrays of the segments)."""
    if not len(f.times):
        return 0.0
    seconds = np.empty_like(f.times)  # each segment's end, then its seconds inside
    seconds[:-1] = f.times[1:]
    seconds[-1] = f.end
    np.clip(seconds, t0, t1, out=seconds)
    np.subtract(seconds, np.clip(f.times, t0, t1), out=seconds)
    product = f.values.astype(np.float64)
    np.multiply(product, seconds, out=product)
    return float(product.sum())


def steady_state_utilization(
    submit: ArrayLike,
    start: ArrayLike,
    end: ArrayLike,
    status: ArrayLike,
    units: ArrayLike,
    per_unit_primary: ArrayLike,
    capacity_primary: int,
    *,
    fallback: float | None = None,
    in_use: StepFunction | None = None,
) -> tuple[float, tuple[int, int] | None, bool]:
    """Utilization of the primary resource between the machine half full and the last
    submission: ``(value, window, fell_back)``.

    Arrays are aligned with the job table (times in seconds, trace origin);
    ``per_unit_primary`` is each job's per-unit amount of the primary resource and
    ``capacity_primary`` its platform total. Every non-rejected job counts (no
    measurement window). ``window = (t0, t1)``: ``t0`` is the first time the amount in
    use reaches ``STEADY_THRESHOLD x capacity_primary``, ``t1`` the last submit time of
    a non-rejected job, and ``value = integral of in-use over [t0, t1) / (capacity x
    (t1 - t0))``. Without such a window (threshold never reached, ``t1 <= t0``, no job
    ran, capacity 0) it returns ``(fallback, None, True)``; ``fallback`` defaults to
    the whole-run utilization of the non-rejected jobs, ``sum(amount x run) /
    (capacity x (max end - min submit))`` (NaN when undefined). See the module docstring
    for the meaning and limits. ``in_use``: the primary resource in use by exactly the
    non-rejected jobs, when the caller has it already (it is then not built again).
    """
    sub, sta, en, st = check_results(submit, start, end, status)
    _, amounts = _amounts(units, {"per_unit_primary": per_unit_primary}, len(sub))
    cap = _check_capacity({"primary": capacity_primary})["primary"]
    ran = st != REJECTED
    return _steady(sub[ran], sta[ran], en[ran], amounts["per_unit_primary"][ran], cap,
                   fallback, in_use)


def _steady(submit: np.ndarray, start: np.ndarray, end: np.ndarray, amount: np.ndarray,
            cap: int, fallback: float | None, in_use: StepFunction | None
            ) -> tuple[float, tuple[int, int] | None, bool]:
    """:func:`steady_state_utilization` of the checked arrays of the jobs that ran
    (``amount``: units x per-unit primary resource)."""
    window = _steady_window(submit, start, end, amount, cap, in_use)
    if window is None:
        if fallback is None:
            fallback = _whole_run_utilization(submit, start, end, amount, cap)
        return float(fallback), None, True
    in_use, t0, t1 = window
    return _integral(in_use, t0, t1) / (cap * (t1 - t0)), (t0, t1), False


def _steady_window(
    submit: np.ndarray, start: np.ndarray, end: np.ndarray, amount: np.ndarray, capacity: int,
    in_use: StepFunction | None = None,
) -> tuple[StepFunction, int, int] | None:
    """The in-use step function and the steady window ``(t0, t1)`` of jobs that ran,
    or None when there is none (see :func:`steady_state_utilization`)."""
    if len(submit) == 0 or capacity == 0:
        return None
    if in_use is None:
        in_use = resource_in_use(start, end, amount)
    reached = in_use.values >= STEADY_THRESHOLD * capacity
    first = int(reached.argmax()) if len(reached) else 0
    if not len(reached) or not reached[first]:
        return None
    t0, t1 = int(in_use.times[first]), int(submit.max())
    return (in_use, t0, t1) if t1 > t0 else None


#: numpy percentile method of the decision-time percentiles: ``"linear"`` (numpy's
#: default, type 7 of Hyndman & Fan): with the ``n`` values sorted as ``x[0..n-1]``, the
#: ``q``-th percentile is ``x[i] + f x (x[i+1] - x[i])`` where ``h = q / 100 x (n - 1)``,
#: ``i = floor(h)``, ``f = h - i`` (ours: a smooth value for few calls, same as before).
DECISION_PERCENTILE_METHOD = "linear"


def decision_time_stats(seconds: ArrayLike | None) -> dict[str, Any]:
    """Dispatcher decision time: per-pass wall-clock seconds summarised.

    ``seconds``: one value per dispatcher call (scheduling pass), in seconds of wall
    clock, in any order. Returns ``calls`` (the number of values), ``mean``, ``p50``,
    ``p99`` (percentiles with :data:`DECISION_PERCENTILE_METHOD` ``"linear"``, both
    computed in one ``np.percentile`` call), ``max`` and ``total`` (the sum), all in
    seconds. Example: ``[0.1, 0.2, 0.3, 0.4]`` gives calls 4, mean 0.25, p50 0.25
    (``h = 1.5``), p99 0.397 (``h = 2.97``: 0.3 + 0.97 x 0.1), max 0.4, total 1.0. No
    calls (``None`` or empty) gives ``calls = 0``, ``total = 0.0`` and NaN mean / p50 /
    p99 / max (None in the JSON summary). Values must be finite and >= 0, in a 1-D
    array (else :class:`InputError`).
    """
    x = np.zeros(0) if seconds is None else np.asarray(seconds, dtype=np.float64)
    if x.ndim != 1:
        raise InputError("decision times must be a 1-D array of seconds", field="decision_times")
    if np.any(~np.isfinite(x)) or np.any(x < 0):
        raise InputError("decision times must be finite and >= 0 seconds",
                         field="decision_times")
    nan = float("nan")
    if x.size == 0:
        return {"calls": 0, "mean": nan, "p50": nan, "p99": nan, "max": nan, "total": 0.0}
    p50, p99 = np.percentile(x, [50.0, 99.0], method=DECISION_PERCENTILE_METHOD)
    return {
        "calls": int(x.size),
        "mean": float(x.mean()),
        "p50": float(p50),
        "p99": float(p99),
        "max": float(x.max()),
        "total": float(x.sum()),
    }


def check_dispatcher_facts(
    facts: Mapping[str, Any] | None, *, reserved: Iterable[str] = ()
) -> dict[str, Any]:
    """The run-level facts a dispatcher or the engine supplies, checked and made JSON-able.

    ``facts`` maps a summary key to its value (None: no facts, ``{}`` returned). Keys of
    :data:`dispatchlab.metrics.keys.DISPATCHER_FACTS` (``finished``, ``cp_passes``,
    ``cp_improved_share``, ``cp_limit_hits``, ``cp_mean_modelled``) must be None / NaN
    (the fact is undefined for this run, e.g. no solved pass: stored as None) or a
    finite real number in the declared range; a BIGINT metric must have an integral value (a bool
    counts as 0 / 1) and is returned as ``int``, a DOUBLE metric as ``float``. Any other
    key is copied as given, after the JSON conversion of the summary (numpy scalars
    unwrapped, NaN -> None); it is then in ``summary.json`` but is no store column. Ours:
    ``cp_limit_hits <= cp_passes`` when both are given. Errors (a non-string key, a key
    in ``reserved`` such as a key the summary computes itself, a value of the wrong type
    or out of range, a value JSON cannot hold) raise :class:`InputError` naming the key.
    """
    if facts is None:
        return {}
    if not isinstance(facts, Mapping):
        raise InputError(f"dispatcher facts must be a mapping of summary keys to values, "
                         f"got {type(facts).__name__}", field="dispatcher_facts")
    taken = set(reserved)
    out: dict[str, Any] = {}
    for key, value in facts.items():
        if not isinstance(key, str) or not key:
            raise InputError(f"dispatcher fact names must be non-empty strings, got {key!r}",
                             field="dispatcher_facts")
        if key in taken:
            raise InputError(f"dispatcher fact {key!r} would replace a metric the summary "
                             "computes itself", field=key)
        if key in DISPATCHER_FACTS:
            out[key] = _declared_fact(key, value, BY_KEY[key].sql, DISPATCHER_FACTS[key])
            continue
        converted = _json_value(value)
        try:
            json.dumps(converted, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InputError(f"dispatcher fact {key!r} is not JSON-able ({exc})",
                             field=key) from None
        out[key] = converted
    passes, hits = out.get("cp_passes"), out.get("cp_limit_hits")
    if passes is not None and hits is not None and hits > passes:
        raise InputError(f"cp_limit_hits ({hits}) exceeds cp_passes ({passes}): a pass "
                         "that hit the time limit is a pass where the solver ran",
                         field="cp_limit_hits")
    return out


def _declared_fact(key: str, value: Any, sql: str, bounds: tuple[float, float]
                   ) -> int | float | None:
    """One declared dispatcher fact as int (BIGINT) / float (DOUBLE) / None, checked."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return None
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, Real):
        raise InputError(f"dispatcher fact {key!r} must be a number or None, got {value!r}",
                         field=key)
    number = float(value)
    if math.isnan(number):
        return None
    lo, hi = bounds
    if not math.isfinite(number) or not lo <= number <= hi:
        raise InputError(f"dispatcher fact {key!r} = {value!r} is outside [{lo:g}, {hi:g}]",
                         field=key)
    if sql == "BIGINT":
        if not number.is_integer():
            raise InputError(f"dispatcher fact {key!r} must be an integer, got {value!r}",
                             field=key)
        return int(value)
    return number


def summarize(
    submit: ArrayLike,
    start: ArrayLike,
    end: ArrayLike,
    status: ArrayLike,
    units: ArrayLike,
    resources: Mapping[str, ArrayLike],
    capacity: Mapping[str, int],
    *,
    tau: float = DEFAULT_TAU,
    measure: Measure | None = None,
    decision_times: ArrayLike | None = None,
    dispatcher_facts: Mapping[str, Any] | None = None,
    unstretched_run: ArrayLike | None = None,
    hot_start: ArrayLike | None = None,
) -> dict[str, Any]:
    """The metrics summary of one run as a JSON-able dict (floats, ints, None, str).

    Arrays are aligned with the job table rows; times in seconds; ``resources`` maps a
    resource name to the per-unit request; ``capacity`` maps a resource name to the
    platform total over all nodes. NaN (an undefined statistic) is written as None.

    Keys:

    - counts: ``total_jobs`` (rows), ``measured_jobs`` (rows in the window),
      ``jobs`` (measured and not rejected), ``rejected`` (measured rows rejected),
      ``rejected_total`` (all rejected rows), ``killed`` (measured rows killed at
      their requested time);
    - ``tau`` (s), ``measure`` (the window as ``"all"``, ``"time:T0:T1"`` or
      ``"index:I0:I1"``);
    - ``{mean,median,p95,max}_{wait,turnaround,run,slowdown,bsld}``;
    - ``by_class``: ``{"short"|"medium"|"long": {"jobs": n, <the same 20 keys>}}``;
    - ``first_submit``, ``last_end``, ``makespan`` (s);
    - ``utilization`` (of ``utilization_resource``: ``"core"`` if present, else the
      first resource of ``capacity``) and ``utilization_by_resource``;
    - ``steady_utilization`` (of the same resource, over all non-rejected jobs),
      ``steady_window`` (``[t0, t1]`` in s, or None) and ``steady_fallback`` (true when
      there is no steady window and ``steady_utilization`` is ``utilization``): see
      :func:`steady_state_utilization`;
    - ``mean_queue_length`` (time-weighted over ``[first_submit, last_end)``),
      ``mean_queue_length_nonempty``, ``median_queue_length_nonempty``,
      ``p95_queue_length_nonempty`` (time-weighted, excluding empty-queue periods,
      inverted-CDF quantiles) and ``max_queue_length``;
    - ``decision_calls``, ``mean_decision_time``, ``p50_decision_time``,
      ``p99_decision_time``, ``max_decision_time``, ``total_decision_time`` (s, wall
      clock, per dispatcher call; see :func:`decision_time_stats`; 0 calls, total 0.0
      and None otherwise when ``decision_times`` is not given);
    - the ``dispatcher_facts``, when given: every key of the mapping, checked and
      converted by :func:`check_dispatcher_facts`, added at the top level after the
      computed keys (a fact may not replace a computed key: :class:`InputError`). The
      declared facts (``finished``, ``cp_passes``, ``cp_improved_share``,
      ``cp_limit_hits``, ``cp_mean_modelled``: see
      :data:`dispatchlab.metrics.keys.DISPATCHER_FACTS`) that are not given are absent
      from the summary, so their store columns are null and tables show ``-``. Ours:
      ``cp_passes`` may not exceed ``decision_calls`` when ``decision_times`` is given
      (a solver pass is a dispatcher call);
    - with ``unstretched_run`` (each job's simulated run at nominal speed, s:
      :func:`~dispatchlab.metrics.jobs.unstretched_run`): Borghesi et al. 2018's bounded slowdown
      (eq. 3, :func:`~dispatchlab.metrics.jobs.power_bounded_slowdown`, ``theta`` =
      ``power_bsld_theta`` = 300 s) over the measured jobs, ``mean_power_bsld`` and
      ``max_power_bsld``; without it these keys are absent;
    - with ``hot_start`` (the jobs' ``hot_start`` column, 0 or 1): the rows with 1 (the
      dummy jobs of a hot start) are left out of everything above, ``total_jobs`` and
      the steady-state utilization included, and counted in ``hot_start_jobs``; without
      it that key is absent.
    """
    t = check_tau(tau)
    sub, sta, en, st = check_results(submit, start, end, status)
    cap = _check_capacity(capacity)
    measure = measure or Measure()
    hot = hot_start_mask(hot_start, len(sub))
    in_window = measure.mask(sub)
    workload = np.ones(len(sub), dtype=bool) if hot is None else ~hot
    if hot is not None:
        in_window &= workload
    rejected = st == REJECTED
    rows = in_window & ~rejected
    # the measured jobs' arrays, taken once (the columns themselves when every row is
    # measured): the series, the job metrics and the utilization all work on them, in
    # table order; each intermediate array is let go once used (the summary is often
    # the peak of a command's memory)
    _, amounts = _amounts(units, resources, len(sub))
    used = _measured_amounts(amounts, rows, cap)
    every = bool(rows.all())
    m_sub, m_sta, m_en = (sub, sta, en) if every else (sub[rows], sta[rows], en[rows])
    primary = primary_resource(cap)
    n = len(m_sub)
    t0, t1 = (int(m_sub.min()), int(m_en.max())) if n else (None, None)
    makespan = None if t0 is None else t1 - t0  # type: ignore[operator]
    run = m_en - m_sta
    util = _utilization(cap, used, run, makespan)

    # the summary reads the queue and the primary resource's in-use series (the steady
    # state) only: the other resources' series are not built. When every (workload) row
    # is measured, the measured series already is the in-use function of all (workload)
    # jobs that ran (on [first submit, last end), which holds every start and end);
    # else the steady state is of all of them
    series = _series_of(m_sub, m_sta, m_en, used, cap, (primary,))
    if t0 is not None and (in_window == workload).all():
        amount = used[primary] if primary in used else np.zeros(n, np.int64)
        steady = _steady(m_sub, m_sta, m_en, amount, cap[primary], util[primary],
                         series.in_use[primary])
    else:
        ran = workload & ~rejected
        amount = amounts[primary][ran] if primary in amounts else \
            np.zeros(int(ran.sum()), np.int64)
        steady = _steady(sub[ran], sta[ran], en[ran], amount, cap[primary], util[primary],
                         None)
    del amounts, amount
    queue = _queue_keys(series.queue)
    del series

    wait = m_sta - m_sub
    turnaround = m_en - m_sub
    del m_sub, m_sta, m_en
    sld, bsld = slowdowns(wait, run, t)
    block, by_class = class_blocks({"wait": wait, "turnaround": turnaround, "run": run,
                                    "slowdown": sld, "bounded_slowdown": bsld})
    del turnaround, sld, bsld

    out: dict[str, Any] = {
        "total_jobs": len(sub) if hot is None else int(workload.sum()),
        "measured_jobs": int(in_window.sum()),
        "jobs": n,
        "rejected": int(np.count_nonzero(in_window & rejected)),
        "rejected_total": int(np.count_nonzero(workload & rejected)),
        "killed": int(np.count_nonzero(in_window & (st == KILLED))),
        "tau": t,
        "measure": str(measure),
    }
    if hot is not None:
        out["hot_start_jobs"] = int(hot.sum())
    del block["jobs"]
    out.update(block)
    if unstretched_run is not None:
        out.update(_power_bsld_keys(wait, run, rows, unstretched_run, len(sub)))
    out["by_class"] = by_class
    out["first_submit"] = t0
    out["last_end"] = t1
    out["makespan"] = makespan
    out["utilization_resource"] = primary
    out["utilization"] = util[primary]
    out["utilization_by_resource"] = util
    out["steady_utilization"] = steady[0]
    out["steady_window"] = None if steady[1] is None else list(steady[1])
    out["steady_fallback"] = steady[2]
    out.update(queue)
    dec = decision_time_stats(decision_times)
    out.update(_decision_keys(dec))
    out.update(_checked_facts(dispatcher_facts, out,
                              None if decision_times is None else dec["calls"]))
    return _json_value(out)


def _power_bsld_keys(wait: np.ndarray, run: np.ndarray, rows: np.ndarray,
                     unstretched_run: ArrayLike, n: int) -> dict[str, Any]:
    """``power_bsld_theta``, ``mean_power_bsld`` and ``max_power_bsld`` of
    :func:`summarize` over the measured ``rows`` (``wait`` and ``run``: theirs;
    ``unstretched_run``: n values, s)."""
    nominal = _int_array(unstretched_run, "unstretched_run")
    if len(nominal) != n:
        raise InputError(f"unstretched_run has {len(nominal)} rows, expected "
                         f"{n}", field="unstretched_run")
    pb = power_bounded_slowdown(wait, run, nominal[rows])
    d = describe(pb)
    return {"power_bsld_theta": POWER_BSLD_THETA, "mean_power_bsld": d["mean"],
            "max_power_bsld": d["max"]}


def _utilization(cap: Mapping[str, int], used: Mapping[str, np.ndarray],
                 run: np.ndarray, makespan: int | None) -> dict[str, float]:
    """Resource name -> the share of ``cap`` x ``makespan`` the measured jobs used
    (their amounts ``used`` x their ``run`` seconds); NaN without a makespan or for a
    capacity of 0."""
    util: dict[str, float] = {}
    for name, total in cap.items():
        if not makespan or total == 0:
            util[name] = float("nan")
            continue
        # float64: units x resource x seconds can pass 2**63 on big platforms.
        amount = 0.0
        if name in used:
            amount = float((used[name].astype(np.float64) * run).sum())
        util[name] = amount / (total * makespan)
    return util


def _queue_keys(q: StepFunction) -> dict[str, Any]:
    """The queue-length keys of :func:`summarize` from the measured queue ``q``."""
    med, p95 = q.quantile([0.5, 0.95], exclude_zero=True)
    return {"mean_queue_length": q.mean(),
            "mean_queue_length_nonempty": q.mean(exclude_zero=True),
            "median_queue_length_nonempty": float(med),
            "p95_queue_length_nonempty": float(p95),
            "max_queue_length": int(q.values.max()) if len(q) else None}


def _decision_keys(dec: Mapping[str, Any]) -> dict[str, Any]:
    """The decision-time keys of :func:`summarize` from :func:`decision_time_stats`."""
    return {"decision_calls": dec["calls"], "mean_decision_time": dec["mean"],
            "p50_decision_time": dec["p50"], "p99_decision_time": dec["p99"],
            "max_decision_time": dec["max"], "total_decision_time": dec["total"]}


def _checked_facts(facts: Mapping[str, Any] | None, computed: Mapping[str, Any],
                   calls: int | None) -> dict[str, Any]:
    """The dispatcher facts, checked (:func:`check_dispatcher_facts`, no computed key
    replaced); ``cp_passes`` may not exceed ``calls`` (the dispatcher calls, when
    known)."""
    checked = check_dispatcher_facts(facts, reserved=computed)
    passes = checked.get("cp_passes")
    if calls is not None and passes is not None and passes > calls:
        raise InputError(f"cp_passes ({passes}) exceeds the dispatcher calls "
                         f"({calls}): a solver pass is a dispatcher call",
                         field="cp_passes")
    return checked


def summarize_table(
    table: JobTable,
    start: ArrayLike,
    end: ArrayLike,
    status: ArrayLike,
    capacity: Mapping[str, int],
    *,
    tau: float = DEFAULT_TAU,
    measure: Measure | None = None,
    decision_times: ArrayLike | None = None,
    dispatcher_facts: Mapping[str, Any] | None = None,
    unstretched_run: ArrayLike | None = None,
) -> dict[str, Any]:
    """:func:`summarize` taking ``submit``, ``units`` and ``resources`` from ``table``,
    and ``hot_start`` from its ``hot_start`` column when it has one. Internal resources
    (names starting with ``@``: the request fitting's node-eligibility resources,
    :data:`dispatchlab.platform.platform.INTERNAL_PREFIX`) are left out."""
    return summarize(
        table["submit"],
        start,
        end,
        status,
        table["units"],
        {r: v for r, v in table.resources.items() if not r.startswith("@")},
        {r: v for r, v in capacity.items() if not r.startswith("@")},
        tau=tau,
        measure=measure,
        decision_times=decision_times,
        dispatcher_facts=dispatcher_facts,
        unstretched_run=unstretched_run,
        hot_start=table["hot_start"] if "hot_start" in table.columns else None,
    )
