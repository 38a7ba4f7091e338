"""Per-job metrics, job classes, the measurement window and their aggregates.

Everything here is a pure function of numpy arrays aligned with the rows of a
:class:`~dispatchlab.workload.jobs.JobTable` (row ``i`` of every array is job ``i``,
rows in submit order). Times are integer seconds in the trace's own origin.

Inputs produced by the simulator, per job:

``submit``, ``start``, ``end``
    int64 seconds. ``start = end = -1`` for rejected jobs (their values are ignored).
``status``
    int8: :data:`COMPLETED` (0), :data:`KILLED` (1, killed at its requested time
    under ``overrun = "kill"``) or :data:`REJECTED` (2).

Definitions (the one definition used everywhere in dispatchlab):

- ``wait = start - submit``, ``turnaround = end - submit``, ``run = end - start``
  (the *simulated* run, which is shorter than the trace's run for killed jobs);
- ``slowdown = (wait + run) / max(run, 1)``;
- ``bounded_slowdown = max((wait + run) / max(run, tau), 1)`` with ``tau = 10 s``
  by default (Feitelson); ``tau`` must be > 0;
- Borghesi et al. 2018's bounded slowdown of power runs (eq. 3, :func:`power_bounded_slowdown`):
  ``power_bsld = max((wait + run) / max(theta, unstretched run), 1)`` with ``theta =
  300 s`` (:data:`POWER_BSLD_THETA`), ``run = end - start`` the *effective* (possibly
  stretched) run and the unstretched run the simulated run at nominal speed
  (:func:`unstretched_run`: the trace's run, or ``min(run, requested_time)`` under
  ``overrun = "kill"``);
- job classes by simulated run time (see :func:`job_class`): ``short`` when
  ``run < 3600``, ``medium`` when ``3600 <= run <= 43200``, ``long`` when
  ``run > 43200``.

Rejected jobs are excluded from every job metric (their per-job columns are -1 /
NaN / class -1) but are counted. Killed jobs count as ordinary jobs with their
simulated run.

Aggregates (:func:`describe`): ``mean``; ``median`` and ``p95`` with numpy's default
*linear* interpolation between order statistics (``np.percentile(x, q)``); ``max``.
An empty selection gives ``count = 0`` and NaN for every statistic, without warnings.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from dispatchlab.core.errors import InputError

#: ``status`` codes written by the simulator: the job ran to its end.
COMPLETED: int = 0
#: ``status`` code: the job was killed at its requested time (``--overrun kill``).
KILLED: int = 1
#: ``status`` code: the job could never fit the platform and was rejected.
REJECTED: int = 2

#: Default ``tau`` (s) of the bounded slowdown (Feitelson).
DEFAULT_TAU: float = 10.0

#: ``theta`` (s) of Borghesi et al. 2018's bounded slowdown (eq. 3): five minutes, as the paper
#: (PA-HPC-SIM's code uses 60 s).
POWER_BSLD_THETA: float = 300.0

#: Upper bound (s, exclusive) of the ``short`` class: ``run < SHORT_MAX``.
SHORT_MAX: int = 3600
#: Upper bound (s, inclusive) of the ``medium`` class: ``SHORT_MAX <= run <= MEDIUM_MAX``.
MEDIUM_MAX: int = 43200
#: Labels of the job-class codes 0, 1, 2 returned by :func:`job_class`.
JOB_CLASS_LABELS: tuple[str, str, str] = ("short", "medium", "long")
#: Class code of a rejected job in :func:`job_columns`.
NO_CLASS: int = -1

#: Names of the per-job metrics aggregated by :func:`job_stats`, with their keys.
METRIC_KEYS: dict[str, str] = {
    "wait": "wait",
    "turnaround": "turnaround",
    "run": "run",
    "slowdown": "slowdown",
    "bounded_slowdown": "bsld",
}


# --------------------------------------------------------------------------- checks


def check_tau(tau: float) -> float:
    """Return ``tau`` (s) as a float, or raise :class:`InputError` unless it is finite and > 0."""
    if isinstance(tau, bool) or not isinstance(tau, Real):
        raise InputError(f"tau must be a number of seconds, got {tau!r}", field="tau")
    try:
        value = float(tau)
    except OverflowError:  # an integer beyond a float
        value = math.inf
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"tau must be > 0 seconds, got {tau!r}", field="tau")
    return value


def _int_array(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"{name} must be a 1-D array, got shape {arr.shape}", field=name)
    if (
        arr.size
        and not np.issubdtype(arr.dtype, np.integer)
        and (not np.issubdtype(arr.dtype, np.floating) or np.any(arr != np.floor(arr)))
    ):
        raise InputError(f"{name} must hold integers", field=name)
    return arr.astype(np.int64, copy=False)


def check_results(
    submit: ArrayLike, start: ArrayLike, end: ArrayLike, status: ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validate simulator results and return them as int64/int64/int64/int8 arrays.

    Raises :class:`InputError` when lengths differ, a status is not 0/1/2, or a
    non-rejected job has ``start < submit`` or ``end < start``.
    """
    sub = _int_array(submit, "submit")
    sta = _int_array(start, "start")
    en = _int_array(end, "end")
    st = np.asarray(status)
    if st.ndim != 1 or (st.size and not np.issubdtype(st.dtype, np.integer)):
        raise InputError("status must be a 1-D integer array", field="status")
    n = len(sub)
    for name, arr in (("start", sta), ("end", en), ("status", st)):
        if len(arr) != n:
            raise InputError(f"{name} has {len(arr)} rows, expected {n}", field=name)
    bad = (st != COMPLETED) & (st != KILLED) & (st != REJECTED)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"job row {i}: status {int(st[i])} is not 0, 1 or 2", field="status")
    ok = st != REJECTED
    bad = ok & ((sta < sub) | (en < sta))
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"job row {i}: need submit <= start <= end for a job that ran, got "
            f"submit={int(sub[i])} start={int(sta[i])} end={int(en[i])}"
        )
    return sub, sta, en, st.astype(np.int8, copy=False)


# ------------------------------------------------------------------ measurement window


@dataclass(frozen=True)
class Measure:
    """Which jobs count in the metrics (the others are simulated but not counted).

    - ``Measure()`` / :meth:`Measure.all`: every job.
    - :meth:`Measure.by_time` ``(t0, t1)``: jobs whose submit time is in ``[t0, t1)``
      (seconds, the trace's time origin).
    - :meth:`Measure.by_index` ``(i0, i1)``: rows ``[i0, i1)`` of the job table, in
      table order (submit time, ties in file order), 0-based.

    ``None`` for a bound means open on that side. An empty or reversed window
    (``lo >= hi``), a negative row index, a row bound past the table, or a window
    that selects no job of the table raises :class:`InputError`.
    """

    by: Literal["all", "time", "index"] = "all"
    lo: int | None = None
    hi: int | None = None

    def __post_init__(self) -> None:
        if self.by not in ("all", "time", "index"):
            raise InputError(f"measure must be 'all', 'time' or 'index', got {self.by!r}")
        for bound in (self.lo, self.hi):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int)):
                raise InputError(f"measurement window bounds must be integers, got {bound!r}")
        if self.by == "all" and (self.lo is not None or self.hi is not None):
            raise InputError("measure 'all' takes no bounds")
        if self.by == "index" and any(b is not None and b < 0 for b in (self.lo, self.hi)):
            raise InputError(f"measurement window rows must be >= 0, got {self}")
        if self.lo is not None and self.hi is not None and self.lo >= self.hi:
            raise InputError(f"measurement window {self} is empty or reversed")

    @classmethod
    def all(cls) -> Measure:
        return cls()

    @classmethod
    def by_time(cls, t0: int | None, t1: int | None) -> Measure:
        """Jobs submitted in ``[t0, t1)`` (s)."""
        return cls("time", t0, t1)

    @classmethod
    def by_index(cls, i0: int | None, i1: int | None) -> Measure:
        """Rows ``[i0, i1)`` of the job table (0-based, table order)."""
        return cls("index", i0, i1)

    @classmethod
    def parse(cls, spec: str) -> Measure:
        """Parse ``"all"``, ``"time:T0:T1"`` or ``"index:I0:I1"`` (a bound may be empty)."""
        text = spec.strip()
        if text == "all":
            return cls()
        parts = text.split(":")
        if len(parts) != 3 or parts[0] not in ("time", "index"):
            raise InputError(
                f"measurement window {spec!r}: expected 'all', 'time:T0:T1' or 'index:I0:I1'"
            )
        bounds: list[int | None] = []
        for part in parts[1:]:
            try:
                bounds.append(int(part) if part.strip() else None)
            except ValueError:
                raise InputError(
                    f"measurement window {spec!r}: {part!r} is not an integer"
                ) from None
        return cls(parts[0], bounds[0], bounds[1])  # type: ignore[arg-type]

    def __str__(self) -> str:
        if self.by == "all":
            return "all"
        lo = "" if self.lo is None else str(self.lo)
        hi = "" if self.hi is None else str(self.hi)
        return f"{self.by}:{lo}:{hi}"

    def mask(self, submit: ArrayLike) -> np.ndarray:
        """Boolean mask of the measured rows of a table with these submit times."""
        sub = np.asarray(submit)
        n = len(sub)
        if self.by == "all":
            return np.ones(n, dtype=bool)
        if self.by == "index":
            lo = 0 if self.lo is None else self.lo
            hi = n if self.hi is None else self.hi
            if hi > n:
                raise InputError(f"measurement window {self}: the table has only {n} jobs")
            out = np.zeros(n, dtype=bool)
            out[lo:hi] = True
        else:
            out = np.ones(n, dtype=bool)
            if self.lo is not None:
                out &= sub >= self.lo
            if self.hi is not None:
                out &= sub < self.hi
        if n and not out.any():
            raise InputError(f"measurement window {self} selects no job")
        return out


def measured_mask(
    submit: ArrayLike, status: ArrayLike, measure: Measure | None = None
) -> np.ndarray:
    """Rows that count in the metrics: inside ``measure`` and not rejected."""
    m = (measure or Measure()).mask(submit)
    return m & (np.asarray(status) != REJECTED)


# ----------------------------------------------------------------- per-job metrics


def slowdown(wait: ArrayLike, run: ArrayLike) -> np.ndarray:
    """``(wait + run) / max(run, 1)`` (float64), both in seconds."""
    w = np.asarray(wait, dtype=np.float64)
    r = np.asarray(run, dtype=np.float64)
    return (w + r) / np.maximum(r, 1.0)


def bounded_slowdown(wait: ArrayLike, run: ArrayLike, tau: float = DEFAULT_TAU) -> np.ndarray:
    """``max((wait + run) / max(run, tau), 1)`` (float64); ``tau`` in seconds, > 0."""
    t = check_tau(tau)
    w = np.asarray(wait, dtype=np.float64)
    r = np.asarray(run, dtype=np.float64)
    return np.maximum((w + r) / np.maximum(r, t), 1.0)


def slowdowns(wait: np.ndarray, run: np.ndarray, tau: float = DEFAULT_TAU
              ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`slowdown` and :func:`bounded_slowdown` of the same jobs, bit for bit, with
    ``wait + run`` computed once and the arithmetic in place (three float64 arrays of
    the jobs at most instead of eight)."""
    t = check_tau(tau)
    r = np.asarray(run, dtype=np.float64)
    r = r.copy() if r is run else r  # r is overwritten below
    total = np.asarray(wait, dtype=np.float64)
    total = total + r if total is wait else np.add(total, r, out=total)
    sld = np.maximum(r, 1.0)
    np.divide(total, sld, out=sld)
    np.maximum(r, t, out=r)
    np.divide(total, r, out=r)
    np.maximum(r, 1.0, out=r)
    return sld, r


def unstretched_run(trace_run: ArrayLike, requested_time: ArrayLike,
                    overrun: str = "run") -> np.ndarray:
    """The simulated run of each job at nominal speed (int64 s): the trace's run, or
    ``min(run, requested_time)`` under ``overrun = "kill"`` (the job is killed at its
    requested time). Borghesi et al. 2018's "original duration" of eq. 3."""
    run = np.asarray(trace_run, dtype=np.int64)
    if overrun == "kill":
        return np.minimum(run, np.asarray(requested_time, dtype=np.int64))
    if overrun != "run":
        raise InputError(f"overrun must be 'run' or 'kill', got {overrun!r}", field="overrun")
    return run


def power_bounded_slowdown(wait: ArrayLike, run: ArrayLike, unstretched: ArrayLike,
                           theta: float = POWER_BSLD_THETA) -> np.ndarray:
    """Borghesi et al. 2018 eq. 3: ``max((wait + run) / max(theta, unstretched), 1)`` (float64).

    ``wait`` and ``run`` (the effective run, end - start, stretched by power
    reductions) and ``unstretched`` (the run at nominal speed, :func:`unstretched_run`)
    in seconds; ``theta`` (s, > 0) defaults to 300 s."""
    t = check_tau(theta)
    w = np.asarray(wait, dtype=np.float64)
    r = np.asarray(run, dtype=np.float64)
    u = np.asarray(unstretched, dtype=np.float64)
    return np.maximum((w + r) / np.maximum(u, t), 1.0)


def job_class(run: ArrayLike) -> np.ndarray:
    """Class code (int8) of each simulated run time (s): 0 short, 1 medium, 2 long.

    Boundaries: ``short`` is ``run < 3600`` (under one hour), ``medium`` is
    ``3600 <= run <= 43200`` (one to twelve hours, both ends included), ``long`` is
    ``run > 43200`` (over twelve hours). So a run of exactly 3600 s or exactly
    43200 s is *medium*. Labels are :data:`JOB_CLASS_LABELS`.
    """
    r = np.asarray(run)
    return ((r >= SHORT_MAX).astype(np.int8) + (r > MEDIUM_MAX).astype(np.int8)).astype(np.int8)


def job_class_labels(codes: ArrayLike) -> np.ndarray:
    """Object array of class labels for codes from :func:`job_columns` (None for -1)."""
    c = np.asarray(codes)
    table = np.array([*JOB_CLASS_LABELS, None], dtype=object)
    return table[np.where(c < 0, len(JOB_CLASS_LABELS), c)]


def job_columns(
    submit: ArrayLike,
    start: ArrayLike,
    end: ArrayLike,
    status: ArrayLike,
    *,
    tau: float = DEFAULT_TAU,
) -> dict[str, np.ndarray]:
    """Per-job metric columns for the output table, aligned with the input rows.

    Returns ``wait``, ``turnaround``, ``run`` (int64 s, -1 for rejected jobs),
    ``slowdown``, ``bounded_slowdown`` (float64, NaN for rejected jobs) and
    ``job_class`` (int8 code into :data:`JOB_CLASS_LABELS`, -1 for rejected jobs;
    :func:`job_class_labels` turns codes into strings). No measurement window is
    applied: every row gets its values.
    """
    t = check_tau(tau)
    sub, sta, en, st = check_results(submit, start, end, status)
    ran = st != REJECTED
    wait = np.where(ran, sta - sub, -1)
    turnaround = np.where(ran, en - sub, -1)
    run = np.where(ran, en - sta, -1)
    sld = np.full(len(sub), np.nan)
    bsld = np.full(len(sub), np.nan)
    sld[ran] = slowdown(wait[ran], run[ran])
    bsld[ran] = bounded_slowdown(wait[ran], run[ran], t)
    cls = np.where(ran, job_class(run), NO_CLASS).astype(np.int8)
    return {
        "wait": wait.astype(np.int64),
        "turnaround": turnaround.astype(np.int64),
        "run": run.astype(np.int64),
        "slowdown": sld,
        "bounded_slowdown": bsld,
        "job_class": cls,
    }


# ------------------------------------------------------------------------ aggregates


def linear_percentiles(x: np.ndarray, percents: tuple[float, ...]) -> np.ndarray:
    """``np.percentile(x, percents)`` (method ``linear``) of a non-empty one-dimensional
    array, with numpy's own arithmetic: the order statistics around each virtual index
    ``(n - 1) q`` by a partition, then numpy's interpolation (``b - (b - a)(1 - g)``
    from ``g >= 0.5`` on, else ``a + (b - a) g``), so the values are equal bit for bit.

    ``np.percentile`` asks ``np.ma`` whether its partition points are masked, which
    imports ``numpy.ma`` (about 20 ms) at the first call: that is every ``simulate``'s
    first summary. Float input with a NaN goes to ``np.percentile`` (NaN there)."""
    if _has_nan(x):
        return np.asarray(np.percentile(x, list(percents)))
    n = x.size
    lo, hi, gamma = _linear_positions(n, percents)
    # only the order statistics read (numpy partitions at the first and the last too)
    kth = sorted({int(i) % n for i in (*lo, *hi)})
    part = np.partition(x, kth)
    return _interpolated(part[lo], part[hi], gamma)


def _has_nan(x: np.ndarray) -> bool:
    """Whether ``x`` is a float array holding a NaN (:func:`linear_percentiles` then
    leaves it to ``np.percentile``)."""
    return x.dtype.kind == "f" and bool(np.isnan(x).any())


def _linear_positions(n: int, percents: tuple[float, ...]
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """numpy's order-statistic positions and weights of the ``linear`` percentiles
    ``percents`` of ``n >= 1`` values: the positions ``lo`` and ``hi`` (-1: the largest
    value) of the two order statistics around each virtual index ``(n - 1) q``, and
    the weight ``gamma`` of the upper one, as ``np.percentile`` computes them."""
    q = np.true_divide(np.asarray(percents, dtype=np.float64), 100)
    virtual = (n - 1) * q
    below = np.floor(virtual)
    above = below + 1
    top = virtual >= n - 1  # numpy takes the largest value there
    below[top] = -1
    above[top] = -1
    lo, hi = below.astype(np.intp), above.astype(np.intp)
    gamma = np.asarray(virtual - lo, dtype=virtual.dtype)
    return lo, hi, gamma


def _interpolated(a: np.ndarray, b: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """numpy's ``linear`` interpolation between the order statistics ``a`` and ``b``
    with the weights ``gamma`` of :func:`_linear_positions` (bit for bit)."""
    diff = b - a
    out = np.add(a, diff * gamma)
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5, casting="unsafe",
                dtype=type(out.dtype))
    return out


#: The percentiles of :func:`describe` (``median``, ``p95``).
_DESCRIBED = (50.0, 95.0)


def describe(values: ArrayLike) -> dict[str, Any]:
    """``count``, ``mean``, ``median``, ``p95`` (linear interpolation) and ``max``.

    ``mean``/``median``/``p95`` are Python floats; ``max`` keeps the kind of the input
    (int for integer arrays). An empty input gives ``count = 0`` and NaN elsewhere.
    """
    x = np.asarray(values)
    if x.size == 0:
        nan = float("nan")
        return {"count": 0, "mean": nan, "median": nan, "p95": nan, "max": nan}
    median, p95 = linear_percentiles(x, _DESCRIBED)
    return {
        "count": int(x.size),
        "mean": float(np.mean(x, dtype=np.float64)),
        "median": float(median),
        "p95": float(p95),
        "max": x.max().item(),
    }


def class_blocks(metrics: Mapping[str, np.ndarray]
                 ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The statistics of the measured jobs and of each of their job classes: a block
    ``{"jobs": n, "mean_wait", "median_wait", "p95_wait", "max_wait", ...}`` (the
    :func:`describe` ``mean``, ``median``, ``p95`` and ``max`` of each metric of
    :data:`METRIC_KEYS`, under its key) for all of them and for each class.

    ``metrics``: the arrays of :data:`METRIC_KEYS` over the measured jobs only, in
    table order; their classes are :func:`job_class` of their ``run``. The values are
    :func:`describe`'s of each metric masked by class, bit for bit, computed with the
    classes' rows gathered once (a stable sort of the class codes) instead of a boolean
    mask per metric and class, and the ``run`` statistics of every block from one
    partition: the classes are ranges of ``run``, so each class's order statistics are
    order statistics of all the runs. Returns the block of all the jobs and the blocks
    by label of :data:`JOB_CLASS_LABELS` (an empty class: ``jobs = 0`` and NaN)."""
    codes = job_class(metrics["run"])
    n = len(codes)
    counts = np.bincount(codes, minlength=len(JOB_CLASS_LABELS))
    bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
    spans = [(0, n), *itertools.pairwise(bounds)]  # all jobs, then each class
    order = np.argsort(codes, kind="stable")  # class 0's rows, then 1's, then 2's
    whole: dict[str, Any] = {"jobs": n}
    classes: dict[str, dict[str, Any]] = {label: {"jobs": int(counts[code])}
                                          for code, label in enumerate(JOB_CLASS_LABELS)}
    for name, key in METRIC_KEYS.items():
        x = metrics[name]
        grouped = x[order]
        values = [x, *(grouped[lo:hi] for lo, hi in spans[1:])]  # each in table order
        if name == "run" and not _has_nan(x):
            part = _partitioned(x, spans)  # sorted by run, the classes follow each other
            found = [_described(v, part, lo, hi) for v, (lo, hi) in zip(values, spans,
                                                                          strict=True)]
        else:
            found = [describe(v) for v in values]
        for block, d in zip((whole, *classes.values()), found, strict=True):
            for stat in ("mean", "median", "p95", "max"):
                block[f"{stat}_{key}"] = d[stat]
    return whole, classes


def _partitioned(x: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """``x`` partitioned at every order statistic :func:`_described` takes from each
    ``(lo, hi)`` span of its sorted values (the last and the two around each percentile
    of :data:`_DESCRIBED`)."""
    kth: set[int] = set()
    for lo, hi in spans:
        m = hi - lo
        if m == 0:
            continue
        below, above, _ = _linear_positions(m, _DESCRIBED)
        kth.update((hi - 1, *(lo + int(i) % m for i in (*below, *above))))
    return np.partition(x, sorted(kth)) if kth else x


def _described(values: np.ndarray, part: np.ndarray, lo: int, hi: int) -> dict[str, Any]:
    """:func:`describe` of ``values``, whose sorted values are ``part[lo:hi]`` (a
    partition of :func:`_partitioned`): the mean from ``values`` (in their order), the
    percentiles and the maximum from the order statistics."""
    m = hi - lo
    if m == 0:
        return describe(values)
    below, above, gamma = _linear_positions(m, _DESCRIBED)
    median, p95 = _interpolated(part[lo + below % m], part[lo + above % m], gamma)
    return {
        "count": m,
        "mean": float(np.mean(values, dtype=np.float64)),
        "median": float(median),
        "p95": float(p95),
        "max": part[hi - 1].item(),
    }


def job_stats(
    submit: ArrayLike,
    start: ArrayLike,
    end: ArrayLike,
    status: ArrayLike,
    *,
    tau: float = DEFAULT_TAU,
    measure: Measure | None = None,
) -> dict[str, Any]:
    """Aggregates of the per-job metrics over the measured, non-rejected jobs.

    Returns ``{"jobs": n, "mean_wait": ..., "median_wait": ..., "p95_wait": ...,
    "max_wait": ..., ...}`` for the metrics ``wait``, ``turnaround``, ``run``,
    ``slowdown`` and ``bsld`` (bounded slowdown), plus ``"by_class"``: the same flat
    dict for each of ``short``, ``medium``, ``long`` (an empty class has ``jobs = 0``
    and NaN statistics).
    """
    cols = job_columns(submit, start, end, status, tau=tau)
    rows = measured_mask(submit, status, measure)
    out, classes = class_blocks({name: cols[name][rows] for name in METRIC_KEYS})
    out["by_class"] = classes
    return out
