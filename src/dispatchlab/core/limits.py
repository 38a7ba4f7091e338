"""The engine's limits on times, in one place for the engine and every reader.

The engine packs a time with a job row into one int64 key (``state.RunningSet``), which
bounds the times it can represent: for a trace of ``n`` jobs, every simulated time must
stay below :func:`time_limit` ``(n)`` = ``2**(62 - max(20, bits(n)))`` seconds, at most
:data:`TIME_LIMIT` = ``2**42`` s (about 139,000 years) for any trace of fewer than 2**20
jobs. A reader refuses a time at or beyond :data:`TIME_LIMIT` where it reads it
(:func:`check_time`, :func:`time_problem` for readers that collect problems per
record, :func:`beyond_limit` for whole columns), naming the file, line and field; the
engine then checks the trace's own, possibly lower, limit (:meth:`Simulation._check_jobs`).
Every reader of times (SWF, Alea, sacct, PBS, Eurora, power files, cap schedules) uses
these, not a copy of the bound.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.core.errors import InputError


def time_limit(n_jobs: int) -> int:
    """The engine's time limit (s, exclusive) for a trace of ``n_jobs`` jobs."""
    return 1 << (62 - max(20, int(n_jobs).bit_length()))


#: the largest time (s, exclusive) the engine represents for any trace (``2**42``)
TIME_LIMIT = time_limit(0)


def time_problem(value: int, what: str = "time") -> str | None:
    """``None`` if ``0 <= value < TIME_LIMIT``, else the message that refuses ``value``
    (for readers that collect problems per record before they raise or skip)."""
    if value < 0:
        return f"{what} must be >= 0 s, got {_shown(value)}"
    if value >= TIME_LIMIT:
        return (f"{what} {_shown(value)} s is beyond the engine's time limit "
                f"({TIME_LIMIT - 1:,} s, about {TIME_LIMIT / 3.156e7:,.0f} years)")
    return None


def check_time(value: int, *, what: str = "time", file: str | None = None,
               line: int | None = None, field: str | None = None) -> int:
    """``value`` if ``0 <= value < TIME_LIMIT`` (Python int of seconds); else an
    :class:`InputError` located by ``file``, ``line`` and ``field``."""
    problem = time_problem(value, what)
    if problem is not None:
        raise InputError(problem, file=file, line=line, field=field)
    return value


def beyond_limit(values: np.ndarray) -> np.ndarray:
    """The vectorized sibling of :func:`check_time` for readers of whole columns: a
    boolean mask of the times at or beyond :data:`TIME_LIMIT` (integers or floats; NaN
    is not beyond). Negative values (often "missing", -1) are the reader's business;
    :func:`time_problem` gives the message for a flagged value."""
    values = np.asarray(values)
    if values.dtype.kind == "f":
        return values >= float(TIME_LIMIT)
    return values >= TIME_LIMIT


def _shown(value: int) -> str:
    """An integer for a message (a huge one by its size: its digits may not print)."""
    if abs(value) < 10**30:
        return f"{value:,}"
    sign = "-" if value < 0 else ""
    return f"{sign}~10^{int((abs(value).bit_length() - 1) * 0.30103)}"
