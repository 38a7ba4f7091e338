"""List schedulers without reservations: FIFO, SJF and LJF.

* ``fifo``: strict first-come-first-served in queue order (submit time, then file
  order). Jobs start while they fit; the first job that does not fit blocks the queue.
* ``sjf`` / ``ljf``: the queue sorted by estimate, ascending / descending (ties by
  queue order). **Strict** by default: start jobs in that order while they fit and stop
  at the first that does not (the sorted head blocks). With ``skip=True`` the walk goes
  on past jobs that do not fit, starting every later job that still fits. Galleguillos et
  al. 2017 say both "continue moving through the sorted list until no available resources
  remain" (read as ``skip``) and that the sorted list is mapped in order (``strict``);
  both are offered.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from dispatchlab.core.params import Nested
from dispatchlab.dispatch.allocators import ALLOCATORS, Allocator, make_allocator, start_allocator
from dispatchlab.dispatch.base import Decision, Dispatcher, Start, View

#: below this many jobs, :func:`skip_walk` loops in Python (cheaper than numpy calls)
_SMALL_WALK = 64


def skip_walk(units: np.ndarray, free: int) -> list[int]:
    """Positions (into ``units``, already in dispatch order) of the jobs a walk that
    skips what does not fit starts on ``free`` cores: each job that fits what is left
    starts, the others are passed over."""
    started: list[int] = []
    if len(units) <= _SMALL_WALK:
        for p, u in enumerate(units.tolist()):
            if u <= free:
                free -= u
                started.append(p)
                if free <= 0:
                    break
        return started
    pos = 0
    while free > 0:
        fit = np.flatnonzero(units[pos:] <= free)
        if len(fit) == 0:
            break
        p = pos + int(fit[0])
        free -= int(units[p])
        started.append(p)
        pos = p + 1
    return started


class ListDispatcher(Dispatcher):
    """Shared machinery: walk an ordered list of queue positions, starting what fits."""

    allocator: str
    call_on_empty_queue = False
    #: walk past jobs that do not fit (SJF's and LJF's parameter; False for the others)
    skip: bool = False

    nested: ClassVar[Nested] = {"allocator": ALLOCATORS}

    def start(self, view: View) -> None:
        self.allocator_: Allocator = make_allocator(self.allocator)
        start_allocator(self.allocator_, view)

    #: SJF / LJF: the order is by estimate, ascending (False) or descending (True), ties
    #: by queue position; None: another order (see :meth:`order`)
    descending: bool | None = None
    #: strict passes on long queues first look at this many jobs in order
    SMALL = 32

    def order(self, view: View) -> np.ndarray | None:
        """Queue positions in the order to try them (None: queue order)."""
        return None

    def _strict_by_estimate(self, jobs: np.ndarray, units: np.ndarray, est: np.ndarray,
                            free: int) -> list[Decision] | None:
        """Strict SJF/LJF on a counting platform without sorting the whole queue: only
        a short prefix of the order can start, and most passes on a long queue start
        nothing. Returns the decisions, or None when the whole order is needed."""
        first = int(np.argmax(est) if self.descending else np.argmin(est))  # ties: first
        if units[first] > free:
            return []
        n = len(est)
        m = self.SMALL
        if n <= 4 * m:
            return None
        # distinct keys (estimate, then queue position) so a partial selection keeps
        # the tie order; estimates too large to pack are ranked first (same order)
        e = est.astype(np.int64)
        if int(e.max()) >= (1 << 62) // n:
            e = np.unique(e, return_inverse=True)[1].astype(np.int64)
        keys = (-e if self.descending else e) * n + np.arange(n, dtype=np.int64)
        cand = np.argpartition(keys, m - 1)[:m]
        cand = cand[np.argsort(keys[cand])]
        k = int(np.searchsorted(np.cumsum(units[cand]), free, side="right"))
        if k == m:
            return None  # every candidate starts: walk the full order
        return [Start(int(j)) for j in jobs[cand[:k]]]

    def dispatch(self, view: View) -> list[Decision]:
        out: list[Decision] = []
        if view.counting and type(self).order is ListDispatcher.order:
            # queue order on a counting platform: walk from the head, a chunk at a time
            free = view.free_cores
            taken, chunk = 0, 1  # most passes stop at a blocked head
            while True:
                rows, head_units, _ = view.queue_head(taken + chunk)
                for job, u in zip(rows[taken:], head_units[taken:], strict=True):
                    if u > free:
                        return out
                    free -= u
                    out.append(Start(job))
                if len(rows) < taken + chunk:
                    return out
                taken, chunk = len(rows), chunk * 8
        jobs, units, _est, _ = view.queue
        n = len(jobs)
        if n == 0:
            return []
        skip = self.skip
        if view.counting and not skip and self.descending is not None:
            started = self._strict_by_estimate(jobs, units, _est, view.free_cores)
            if started is not None:
                return started
        order = self.order(view)
        if view.counting:
            if order is None:  # queue order, from a subclass's order()
                order = np.arange(n)
            free = view.free_cores
            u_sorted = units[order]
            if not skip:
                # strict: the longest prefix of the sorted list whose total fits
                k = int(np.searchsorted(np.cumsum(u_sorted), free, side="right"))
                return [Start(int(j)) for j in jobs[order[:k]]]
            return [Start(int(jobs[order[p]])) for p in skip_walk(u_sorted, free)]
        # node level: allocate one job at a time on a working copy of the free matrix
        free_m = view.free.copy()
        reqs = view.requests
        for p in (range(n) if order is None else order.tolist()):
            job = int(jobs[p])
            alloc = self.allocator_.allocate(reqs[job], int(units[p]), free_m)
            if alloc is None:
                if skip:
                    continue
                break
            free_m[alloc.nodes] -= alloc.counts[:, None] * reqs[job][None, :]
            out.append(Start(job, alloc))
        return out


class FIFO(ListDispatcher):
    """Strict first-come-first-served: the head blocks the queue."""

    name = "fifo"

    def __init__(self, allocator: str = "first-fit") -> None:
        self.allocator = allocator


class SJF(ListDispatcher):
    """Shortest (estimated) job first; ``skip`` walks past jobs that do not fit."""

    name = "sjf"
    descending = False

    def __init__(self, skip: bool = False, allocator: str = "first-fit") -> None:
        self.skip = skip
        self.allocator = allocator

    def order(self, view: View) -> np.ndarray:
        return np.argsort(view.queue.estimate, kind="stable")


class LJF(ListDispatcher):
    """Longest (estimated) job first; ``skip`` walks past jobs that do not fit."""

    name = "ljf"
    descending = True

    def __init__(self, skip: bool = False, allocator: str = "first-fit") -> None:
        self.skip = skip
        self.allocator = allocator

    def order(self, view: View) -> np.ndarray:
        return np.argsort(-view.queue.estimate, kind="stable")
