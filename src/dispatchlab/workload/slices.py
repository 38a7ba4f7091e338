"""Evenly spaced slices of a trace: several independent workloads from one log.

A *slice* is a block of ``jobs`` consecutive jobs of the cleaned table (rows in submit
order, 0-based), the *measured* jobs, preceded by ``lead_in`` jobs that are simulated
but not counted. The lead-in fills the machine, so the measured block does not start
from an empty machine (which would flatter every dispatcher: the first jobs never
wait). A run of slice ``s`` selects rows ``[s.first, s.stop)`` of the cleaned table
(``load_trace(path, jobs=(s.first, s.stop))`` or ``--jobs FIRST:STOP``, which re-base
the times to t = 0) and measures with :func:`measure_for`, the rows
``[s.start - s.first, s.stop - s.first)`` of that selection. The same cleaning options
(``drop_overrun``, ``max_procs``) must be used to count ``n_jobs`` and to select.

:func:`plan_slices` lays out ``count`` slices over ``n_jobs`` cleaned jobs:

- the *segments* ``[first, stop)`` (lead-in plus measured jobs, ``L = lead_in + jobs``
  rows each) never overlap, so no job is simulated in two slices;
- the ``free = n_jobs - count x L`` jobs left over are spread evenly over the
  ``count - 1`` gaps between segments: segment ``k`` begins at
  ``first_k = k x L + floor(k x free / (count - 1))``. So the first segment begins at
  row 0 and, when ``count > 1``, the last one ends exactly at ``n_jobs``; gaps differ
  by at most one job (integer division rounds down). With ``count == 1`` the only
  segment begins at row 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from dispatchlab.core.errors import InputError

__all__ = ["Slice", "default_lead_in", "measure_for", "plan_slices"]


@dataclass(frozen=True)
class Slice:
    """One slice of the cleaned table (row indices, 0-based, half-open).

    ``index``: position in the plan, ``0 .. count-1``; ``first``: the first simulated
    row (first lead-in job); ``start``: the first measured row; ``stop``: one past the
    last measured row. ``start - first`` is the lead-in, ``stop - start`` the measured
    jobs.
    """

    index: int
    first: int
    start: int
    stop: int


def default_lead_in(jobs: int) -> int:
    """Lead-in for ``jobs`` measured jobs: ``jobs // 10`` (a tenth, rounded down).

    The lead-in jobs are simulated before the measured block so that it does not start
    from an empty machine; they are excluded from the metrics.
    """
    return _count(jobs, "jobs", minimum=1) // 10


def _count(value: int, name: str, *, minimum: int) -> int:
    """``value`` as an int, or :class:`InputError` (field ``slices``) if below ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InputError(f"{name} must be an integer, got {value!r}", field="slices")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value}", field="slices")
    return int(value)


def plan_slices(n_jobs: int, count: int, jobs: int, lead_in: int | None = None) -> list[Slice]:
    """``count`` disjoint, evenly spaced slices of ``jobs`` measured jobs each.

    ``n_jobs``: rows of the cleaned table; ``lead_in``: simulated, unmeasured jobs
    before each block (default :func:`default_lead_in`). See the module docstring for
    the layout and its rounding. Raises :class:`InputError` (field ``slices``) when
    ``count < 1``, ``jobs < 1``, ``lead_in < 0`` or the slices need more jobs than the
    table has (``count x (lead_in + jobs) > n_jobs``).
    """
    count = _count(count, "slice count", minimum=1)
    jobs = _count(jobs, "jobs per slice", minimum=1)
    lead = default_lead_in(jobs) if lead_in is None else _count(lead_in, "lead-in", minimum=0)
    n_jobs = _count(n_jobs, "number of jobs", minimum=0)
    length = lead + jobs
    needed = count * length
    if needed > n_jobs:
        raise InputError(
            f"{count} slices of {jobs} jobs with a lead-in of {lead} need "
            f"{count} x ({lead} + {jobs}) = {needed:,} jobs, the trace has {n_jobs:,} "
            "after cleaning", field="slices")
    free = n_jobs - needed
    out = []
    for k in range(count):
        first = k * length + (k * free // (count - 1) if count > 1 else 0)
        out.append(Slice(k, first, first + lead, first + length))
    return out


def measure_for(s: Slice) -> str:
    """The measurement window of ``s`` within its own selection ``[s.first, s.stop)``:
    ``"index:{start - first}:{stop - first}"`` (see
    :meth:`dispatchlab.metrics.jobs.Measure.parse`)."""
    return f"index:{s.start - s.first}:{s.stop - s.first}"
