"""Default cleaning of a job table and optional job filters.

Default cleaning (:func:`clean`) drops the jobs the simulator cannot run:

1. ``units <= 0``: no (valid) processor request (fields 8 and 5 both missing or 0);
2. ``run < 0``: no run time (``-1``, or a negative value as in two Alea lines);
3. ``submit < 0``: no submit time (the SWF reader already refuses such jobs when
   they have processors and a run time, so this only fires for tables built by
   hand).

A job counts under the *first* reason that matches; the counts are added to
``info.dropped`` (only reasons that removed at least one job appear).

Optional filters (:func:`select`, also keyword arguments of :func:`clean` and of
:func:`~dispatchlab.workload.load.load_trace`), applied in this order:

* ``drop_overrun=True``: drop jobs whose run time exceeds their requested time
  (``run > requested_time``, after the estimate fallback);
* ``max_procs``: drop jobs requesting more processors than the machine has:
  ``True`` (or ``"header"``) uses the header's MaxProcs, an int gives the limit
  (reason ``units > max_procs``);
* then at most one of

  - ``window=(t0, t1)``: keep jobs submitted in ``[t0, t1)`` (seconds, in the
    table's current time origin);
  - ``jobs=(i0, i1)``: keep rows ``i0 .. i1-1`` (0-based positions in the table
    left by the previous steps, i.e. the cleaned table; ``i1`` past the end is
    clamped);
  - ``fraction=("first" | "last", f)`` with ``0 < f <= 1``: keep the first or last
    ``round(f * n)`` jobs (at least one) of that table; ``("last", 0.3)`` is the
    last 30 %.

  These three re-base the times to t=0: the first kept submit time is subtracted
  from ``submit`` (the only absolute time column; wait, run and requested times are
  durations) and added to ``info.time_offset``.

Rows keep their order (submit time, then file order). A bad option value raises
:class:`~dispatchlab.core.errors.InputError` naming the option, and so does a window,
range or fraction that selects no job.

Every function returns a new table; with ``copy=False`` it may instead reuse and
modify the input's arrays and column dicts (the input must not be used afterwards),
which keeps the peak memory near one copy of the table.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.workload.jobs import JobTable

__all__ = ["DEFAULT_REASONS", "Filters", "check_filters", "clean", "select", "units_as_nodes"]

#: Reasons of the default cleaning, in the order they are tested.
DEFAULT_REASONS: tuple[str, ...] = ("units <= 0", "run < 0", "submit < 0")

MaxProcs = bool | int | Literal["header"] | None
Window = tuple[int, int]
JobRange = tuple[int, int]
Fraction = tuple[Literal["first", "last"], float]


@dataclass(frozen=True)
class Filters:
    """Validated optional filters (see :func:`check_filters`)."""

    drop_overrun: bool = False
    max_procs: int | Literal["header"] | None = None
    window: Window | None = None
    jobs: JobRange | None = None
    fraction: tuple[str, float] | None = None


def _int(value: object, option: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"expected an integer, got {value!r}", field=option)
    if isinstance(value, numbers.Integral):
        return int(value)
    if not math.isfinite(float(value)) or float(value) != int(value):
        raise InputError(f"expected an integer, got {value!r}", field=option)
    return int(value)


def _pair(value: object, option: str) -> tuple[object, object]:
    if isinstance(value, str | bytes):
        raise InputError(f"expected a pair of values, got {value!r}", field=option)
    try:
        a, b = value  # type: ignore[misc]
    except (TypeError, ValueError):
        raise InputError(f"expected a pair of values, got {value!r}", field=option) from None
    return a, b


def check_filters(
    *,
    drop_overrun: bool = False,
    max_procs: MaxProcs = None,
    window: Window | None = None,
    jobs: JobRange | None = None,
    fraction: Fraction | None = None,
) -> Filters:
    """Validate the filter options (raises :class:`InputError` naming the bad option)."""
    if not isinstance(drop_overrun, bool | np.bool_):
        raise InputError(f"expected True or False, got {drop_overrun!r}", field="drop_overrun")
    mp: int | Literal["header"] | None
    if max_procs is None or max_procs is False:
        mp = None
    elif max_procs is True or max_procs == "header":
        mp = "header"
    else:
        mp = _int(max_procs, "max_procs")
        if mp <= 0:
            raise InputError(f"must be positive, got {mp}", field="max_procs")
    win: Window | None = None
    if window is not None:
        t0, t1 = (_int(v, "window") for v in _pair(window, "window"))
        if t1 <= t0:
            raise InputError(f"needs t0 < t1, got ({t0}, {t1})", field="window")
        win = (t0, t1)
    rng: JobRange | None = None
    if jobs is not None:
        i0, i1 = (_int(v, "jobs") for v in _pair(jobs, "jobs"))
        if i0 < 0 or i1 <= i0:
            raise InputError(f"needs 0 <= i0 < i1, got ({i0}, {i1})", field="jobs")
        rng = (i0, i1)
    frac: tuple[str, float] | None = None
    if fraction is not None:
        which, f = _pair(fraction, "fraction")
        if which not in ("first", "last"):
            raise InputError(f"must start with 'first' or 'last', got {which!r}", field="fraction")
        if isinstance(f, bool) or not isinstance(f, numbers.Real) or not 0 < float(f) <= 1:
            raise InputError(f"needs 0 < f <= 1, got {f!r}", field="fraction")
        frac = (str(which), float(f))
    chosen = [n for n, v in (("window", win), ("jobs", rng), ("fraction", frac)) if v is not None]
    if len(chosen) > 1:
        raise InputError(
            f"choose at most one of window, jobs and fraction (got {', '.join(chosen)})",
            field=chosen[1],
        )
    return Filters(bool(drop_overrun), mp, win, rng, frac)


class _Edit:
    """A table being filtered: new info, columns replaced one at a time."""

    def __init__(self, table: JobTable, copy: bool) -> None:
        info = table.info
        self.info = replace(
            info, dropped=dict(info.dropped), header=dict(info.header), rounded=dict(info.rounded)
        )
        self.copy = copy
        self.columns = dict(table.columns) if copy else table.columns
        self.resources = dict(table.resources) if copy else table.resources

    def __len__(self) -> int:
        return len(self.columns["submit"])

    def col(self, name: str) -> np.ndarray:
        return self.columns[name]

    def keep(self, index: np.ndarray | slice, dropped: int, reason: str) -> None:
        """Keep rows ``index`` (mask, positions or slice); ``dropped`` rows go under ``reason``."""
        if dropped <= 0:
            return
        self.info.dropped[reason] = self.info.dropped.get(reason, 0) + int(dropped)
        self.apply(index)

    def apply(self, index: np.ndarray | slice) -> None:
        """Keep rows ``index``, replacing the columns one at a time."""
        for group in (self.columns, self.resources):
            for name in list(group):
                kept = group[name][index]
                # a slice is a view: copy it so the dropped rows' memory is freed
                group[name] = kept.copy() if isinstance(index, slice) else kept
                del kept

    def drop(self, mask: np.ndarray, reason: str) -> None:
        n = int(np.count_nonzero(mask))
        if n:
            self.keep(~mask, n, reason)

    def rebase(self) -> None:
        submit = self.columns["submit"]
        if submit.size == 0:
            return
        offset = int(submit[0])
        if offset == 0:
            return
        if self.copy:
            self.columns["submit"] = submit - offset
        else:
            submit -= offset
        self.info.time_offset += offset

    def table(self) -> JobTable:
        return JobTable(columns=self.columns, resources=self.resources, info=self.info)


def _select(edit: _Edit, f: Filters) -> None:
    if f.drop_overrun:
        edit.drop(edit.col("run") > edit.col("requested_time"), "run > requested_time")
    if f.max_procs is not None:
        limit = edit.info.max_procs if f.max_procs == "header" else f.max_procs
        if limit is None:
            raise InputError(
                "the trace header has no MaxProcs; give the limit as a number",
                field="max_procs",
            )
        edit.drop(edit.col("units") > limit, "units > max_procs")
    n = len(edit)
    if f.window is not None:
        t0, t1 = f.window
        submit = edit.col("submit")
        lo, hi = np.searchsorted(submit, [t0, t1], side="left")  # submit is sorted
        if hi <= lo:
            span = f"{int(submit[0])}..{int(submit[-1])}" if n else "empty"
            raise InputError(f"({t0}, {t1}) selects no jobs (submit times: {span})", field="window")
        edit.keep(slice(int(lo), int(hi)), n - int(hi - lo), "outside window")
        edit.rebase()
    elif f.jobs is not None:
        i0, i1 = f.jobs
        if i0 >= n:
            raise InputError(f"({i0}, {i1}) selects no jobs (the table has {n})", field="jobs")
        i1 = min(i1, n)
        edit.keep(slice(i0, i1), n - (i1 - i0), "outside jobs range")
        edit.rebase()
    elif f.fraction is not None:
        which, frac = f.fraction
        if n == 0:
            raise InputError(f"({which!r}, {frac}) selects no jobs: no jobs", field="fraction")
        k = min(n, max(1, int(np.floor(frac * n + 0.5))))
        index = slice(0, k) if which == "first" else slice(n - k, n)
        edit.keep(index, n - k, "outside fraction")
        edit.rebase()


def select(
    table: JobTable,
    *,
    drop_overrun: bool = False,
    max_procs: MaxProcs = None,
    window: Window | None = None,
    jobs: JobRange | None = None,
    fraction: Fraction | None = None,
    copy: bool = True,
) -> JobTable:
    """Apply the optional filters only (see the module docstring for their semantics)."""
    filters = check_filters(
        drop_overrun=drop_overrun, max_procs=max_procs, window=window, jobs=jobs, fraction=fraction
    )
    edit = _Edit(table, copy)
    _select(edit, filters)
    return edit.table()


def clean(
    table: JobTable,
    *,
    drop_overrun: bool = False,
    max_procs: MaxProcs = None,
    window: Window | None = None,
    jobs: JobRange | None = None,
    fraction: Fraction | None = None,
    copy: bool = True,
) -> JobTable:
    """Default cleaning (units <= 0, run < 0, submit < 0), then :func:`select`'s filters.

    Dropped jobs are counted per reason in ``info.dropped`` (first matching reason).
    """
    filters = check_filters(
        drop_overrun=drop_overrun, max_procs=max_procs, window=window, jobs=jobs, fraction=fraction
    )
    edit = _Edit(table, copy)
    units, run, submit = edit.col("units"), edit.col("run"), edit.col("submit")
    bad_units = units <= 0
    bad_run = (run < 0) & ~bad_units
    bad_submit = (submit < 0) & ~bad_units & ~bad_run
    counts = [int(np.count_nonzero(m)) for m in (bad_units, bad_run, bad_submit)]
    if any(counts):
        keep = ~(bad_units | bad_run | bad_submit)
        del bad_units, bad_run, bad_submit
        for reason, count in zip(DEFAULT_REASONS, counts, strict=True):
            if count:
                edit.info.dropped[reason] = edit.info.dropped.get(reason, 0) + count
        edit.apply(keep)
    _select(edit, filters)
    return edit.table()


def units_as_nodes(table: JobTable, procs_per_node: int) -> JobTable:
    """A copy of ``table`` whose jobs ask for whole nodes: ``units`` becomes
    ``ceil(units / procs_per_node)`` (and ``req_procs`` too, where set), for running a
    trace that counts processors on a platform whose unit is a node (e.g.
    ``marconi100-nodes``: exclusive whole-node allocation). Other columns unchanged;
    the job's per-unit resources (one core per unit) are kept, so a unit is one node.
    ``procs_per_node`` must be >= 1 (1 leaves the table as it is)."""
    if isinstance(procs_per_node, bool) or not isinstance(procs_per_node, int) \
            or procs_per_node < 1:
        raise InputError(f"procs_per_node must be an integer >= 1, got {procs_per_node!r}",
                         field="procs_per_node")
    cols = dict(table.columns)
    k = int(procs_per_node)
    cols["units"] = -(-np.asarray(table["units"], dtype=np.int64) // k)
    if "req_procs" in cols:
        req = np.asarray(cols["req_procs"], dtype=np.int64)
        cols["req_procs"] = np.where(req > 0, -(-req // k), req)
    return replace(table, columns=cols, resources=dict(table.resources))
