"""Backfilling dispatchers: EASY (with K reservations) and conservative.

**EASY** (Mu'alem & Feitelson 2001), ``EASY()``. At each pass:

1. start jobs in queue order while they fit;
2. the first job that does not fit (the *head*) gets a reservation at its *shadow
   time*: the earliest time it fits, found by releasing running jobs in order of
   estimated end (an end already past counts as now; jobs started in step 1 release
   at ``now + max(estimate, 1)``). The *extra* capacity is what is free at the shadow
   time, counting every job whose estimated end is at or before it, minus what the head
   needs;
3. the rest of the queue is scanned in queue order (``order="sjf"``: by estimate,
   ties by queue order - EASY-SJBF; the head stays the oldest job). A job that fits now
   starts if ``now + max(estimate, 1) <= shadow``; otherwise it starts only if it also
   fits in the extra capacity, which it then consumes.

*Guarantee*: when estimates are exact, a backfilled job never delays the head's
reservation. Only the head is protected: other jobs may be delayed (unbounded).

**EASY with K reservations**, ``EASY(reservations=K)``: walking the queue in order,
each job gets the earliest reservation in the availability profile (running jobs plus
earlier reservations; see :mod:`dispatchlab.dispatch.profile`); a job whose
reservation is now and that physically fits starts now and does not count; the others
count as reserved until K jobs hold a reservation. Every later job (scanned in queue
or estimate order) starts now iff it fits now and in the profile over its planned
duration. ``reservations=1`` gives exactly the EASY schedule.

**Conservative**, ``Conservative()``: every waiting job gets a reservation, in queue
order, re-planned from scratch at every pass (EASY with K = infinity). A job starts
now when its reservation is now. *Guarantee*: with exact estimates no job is ever
started later than the first reservation it got.

*Knobs*: ``order`` ("fifo" | "sjf", the backfill scan order), ``reservations``
(1 <= K; EASY only), ``allocator`` (node-level platforms only), ``explain`` (record
every pass's shadow time, extra capacity and backfilled jobs in ``self.log_``).

*Speed*: on counting platforms the per-pass scans are numpy masks over the queue's
columns; the conservative planner stops as soon as no later job could start now (the
free cores now are fewer than the smallest remaining request), which changes no
decision of the pass.
"""

from __future__ import annotations

import numpy as np

from dispatchlab.dispatch.allocators import Allocator, make_allocator
from dispatchlab.dispatch.base import Decision, Dispatcher, Start, View
from dispatchlab.dispatch.profile import CoreProfile, NodeProfile, planned
from dispatchlab.errors import InputError

ORDERS = ("fifo", "sjf")


def shadow_and_extra(free: int, need: int, ends: np.ndarray, held: np.ndarray,
                     started: list[tuple[int, int]] = ()) -> tuple[int, int]:
    """EASY's shadow time and extra cores for a head needing ``need`` (> ``free``) cores.

    ``free``: cores free now; ``ends``/``held``: running jobs' effective ends (sorted) and
    cores; ``started``: (planned end, cores) of jobs started earlier in the same pass.
    Releasing all of them in time order, the shadow time is the first release time at
    which ``free`` plus the released cores reaches ``need``; the extra is that amount
    minus ``need``. Costs one cumulative sum and a few binary searches (no sorting of the
    running jobs).
    """
    avail = held.cumsum()
    avail += free  # avail[q]: free cores once ends[0..q] have ended
    if not started:
        shadow = int(ends[int(avail.searchsorted(need, side="left"))])
        return shadow, int(avail[int(ends.searchsorted(shadow, side="right")) - 1]) - need

    def running_avail(t: int) -> int:
        p = int(ends.searchsorted(t, side="right"))
        return int(avail[p - 1]) if p else free

    released = 0  # cores of this pass's started jobs released so far
    for end, cores in [*sorted(started), (None, 0)]:
        # the first running end (before this started end) at which the head fits
        q = int(avail.searchsorted(need - released, side="left"))
        if q < len(ends) and (end is None or int(ends[q]) < end):
            shadow = int(ends[q])
            break
        if end is None:
            raise ValueError(f"a head of {need} cores never fits ({free} free)")
        released += cores
        if running_avail(end) + released >= need:
            shadow = end
            break
    released_by_shadow = sum(c for e, c in started if e <= shadow)
    return shadow, running_avail(shadow) + released_by_shadow - need


class _Backfill(Dispatcher):
    order: str
    reservations: int | None
    allocator: str
    explain: bool
    call_on_empty_queue = False

    def _check(self) -> None:
        if self.order not in ORDERS:
            raise InputError(f"order must be one of {ORDERS}, got {self.order!r}", field="order")
        if self.reservations is not None and (
            not isinstance(self.reservations, int) or self.reservations < 1
        ):
            raise InputError(f"reservations must be an integer >= 1, got {self.reservations!r}",
                             field="reservations")

    def start(self, view: View) -> None:
        self._check()
        self.allocator_: Allocator = make_allocator(self.allocator)
        self.log_: list[dict] = []
        self._cache: tuple | None = None

    def dispatch(self, view: View) -> list[Decision]:
        if view.queue_length == 0:
            return []
        k = self.reservations if self.reservations is not None else view.queue_length + 1
        if not view.counting:
            return self._plan_nodes(view, k)
        if k == 1:
            return self._easy_counting(view)
        return self._plan_counting(view, k)

    # ------------------------------------------------------------------ EASY, counting
    #: queues up to this length are scanned with plain Python loops, longer ones with
    #: numpy masks; both give the same decisions (the tests run both)
    small_queue: int = 16

    def _easy_counting(self, view: View) -> list[Decision]:
        now = view.now
        cache = self._cache
        # Shortcut: if only submissions happened since the previous pass (no completion,
        # no new estimate, no estimate running out), every job already in the queue fails
        # again (free cores and extra capacity are unchanged and ``now + d <= shadow`` only
        # gets harder), so only the new jobs need scanning.
        if cache is not None and cache[0] == view.changes:
            first_end = view.first_estimated_end()
            if first_end is not None and first_end > now:
                _, head, shadow, extra, free, last_job = cache
                new_jobs, new_units, new_est = view.queued_after(last_job)
                if len(new_jobs) == 0:
                    return []
                return self._backfill(view, new_jobs, new_units, new_est, 0, free, shadow,
                                      extra, [], head)
        jobs, units, est = view.queue
        n = len(jobs)
        self._cache = None
        free = view.free_cores
        out: list[Decision] = []
        i = 0
        if n <= self.small_queue:
            units_l = units.tolist()
            while i < n and units_l[i] <= free:
                free -= units_l[i]
                out.append(Start(int(jobs[i])))
                i += 1
        else:
            i = int((units.cumsum() > free).argmax()) if units[0] <= free else 0
            if i == 0 and units[0] <= free:  # everything fits
                i = n
            for p in range(i):
                out.append(Start(int(jobs[p])))
            free -= int(units[:i].sum())
        if i == n:
            return out
        if free <= 0:  # nothing can start before a job ends
            self._cache = (view.changes, int(jobs[i]), now, 0, 0, int(jobs[n - 1]))
            return out
        need = int(units[i])
        shadow = None
        if not i:
            # usually the first few jobs to end release enough: walk them in Python
            ends_l, held_l = view.running_head(self.small_queue)
            avail = free
            for k, (end, cores) in enumerate(zip(ends_l, held_l, strict=True)):
                avail += cores
                if avail >= need:
                    shadow = end
                    for end2, cores2 in zip(ends_l[k + 1 :], held_l[k + 1 :], strict=True):
                        if end2 != shadow:
                            break
                        avail += cores2
                    else:
                        if len(ends_l) == self.small_queue:
                            shadow = None  # more jobs may end at the shadow time
                    extra = avail - need
                    break
        if shadow is None:
            ends, held, _ = view.running
            started = [(now + max(e, 1), u) for e, u in
                       zip(est[:i].tolist(), units[:i].tolist(), strict=True)]
            shadow, extra = shadow_and_extra(free, need, ends, held, started)
        return self._backfill(view, jobs, units, est, i + 1, free, shadow, extra, out,
                              int(jobs[i]))

    def _backfill(self, view: View, jobs: np.ndarray, units: np.ndarray, est: np.ndarray,
                  first: int, free: int, shadow: int, extra: int, out: list[Decision],
                  head: int) -> list[Decision]:
        """Scan queue positions ``first..`` for EASY backfilling (see the class doc)."""
        now = view.now
        n = len(jobs)
        backfilled: list[int] = []
        if free > 0 and first < n:
            if n - first <= self.small_queue:
                rest = range(first, n)
                est_l = est[first:].tolist()
                if self.order == "sjf":
                    rest = sorted(rest, key=lambda p: est_l[p - first])
                units_l = units.tolist()
                for p in rest:
                    u = units_l[p]
                    if u > free:
                        continue
                    e = est_l[p - first]
                    if now + (e if e > 0 else 1) <= shadow:
                        free -= u
                    elif u <= extra:
                        free -= u
                        extra -= u
                    else:
                        continue
                    backfilled.append(int(jobs[p]))
                    if free == 0:
                        break
            else:
                rest = np.arange(first, n)
                if self.order == "sjf":
                    rest = rest[est[first:].argsort(kind="stable")]
                u_rest = units[rest]
                ends_before = now + np.maximum(est[rest], 1) <= shadow
                pos = 0
                while free > 0:
                    # candidates under the current free cores and extra capacity (the
                    # first few: starts shrink free/extra, and then we re-filter)
                    u_sub, eb_sub = u_rest[pos:], ends_before[pos:]
                    cand = ((u_sub <= free) & (eb_sub | (u_sub <= extra))).nonzero()[0]
                    if len(cand) == 0:
                        break
                    cand = cand[:32]
                    pos = int(cand[-1]) + pos + 1
                    for c, u, short in zip((cand + (pos - 1 - int(cand[-1]))).tolist(),
                                           u_sub[cand].tolist(), eb_sub[cand].tolist(),
                                           strict=True):
                        if u > free or (not short and u > extra):
                            pos = c  # starts above shrank free/extra: re-filter from here
                            break
                        free -= u
                        if not short:
                            extra -= u
                        backfilled.append(int(jobs[rest[c]]))
                        if free == 0:
                            break
            if backfilled:
                out.extend([Start(j) for j in backfilled])
        if self.explain:
            self.log_.append({"now": now, "head": head, "shadow": shadow, "extra": extra,
                              "backfilled": backfilled})
        # what the next pass may reuse if only submissions happen before it
        if head not in backfilled:
            self._cache = (view.changes, head, shadow, extra, free, int(jobs[-1]))
        return out

    # ------------------------------------------------------------- K reservations, counting
    def _plan_counting(self, view: View, k: int) -> list[Decision]:
        now = view.now
        jobs, units, est = view.queue
        n = len(jobs)
        free = view.free_cores
        ends, held, _ = view.running
        prof = CoreProfile(now, ends, held, free)
        smallest_after = np.minimum.accumulate(units[::-1])[::-1]
        out: list[Decision] = []
        reserved: list[tuple[int, int]] = []
        i = 0
        while i < n and len(reserved) < k:
            if min(free, prof.free[0]) < smallest_after[i]:
                self._log(now, reserved, out)
                return out  # no later job can start now: the rest changes no decision
            u = int(units[i])
            d = planned(int(est[i]))
            t = prof.earliest(u, d)
            prof.reserve(t, d, u)
            if t == now and u <= free:
                free -= u
                out.append(Start(int(jobs[i])))
            else:
                reserved.append((int(jobs[i]), t))
            i += 1
        if i < n and free > 0:
            rest = np.arange(i, n)
            if self.order == "sjf" and len(rest) > 1:
                rest = rest[np.argsort(est[i:], kind="stable")]
            u_rest = units[rest]
            stop = now + np.maximum(est[rest], 1)
            pos = 0
            while free > 0 and pos < len(rest):
                fits = (u_rest[pos:] <= free) & (u_rest[pos:] <= prof.prefix_min_until(stop[pos:]))
                hit = np.flatnonzero(fits)
                if len(hit) == 0:
                    break
                c = pos + int(hit[0])
                u = int(u_rest[c])
                prof.reserve(now, int(stop[c]) - now, u)
                free -= u
                out.append(Start(int(jobs[rest[c]])))
                pos = c + 1
        self._log(now, reserved, out, prof)
        return out

    def _log(self, now: int, reserved: list, out: list, prof: CoreProfile | None = None) -> None:
        if self.explain:
            self.log_.append({"now": now, "reservations": list(reserved),
                              "started": [d.job for d in out],
                              "profile": prof.rows() if prof is not None else None})

    # ---------------------------------------------------------------- node level (any K)
    def _plan_nodes(self, view: View, k: int) -> list[Decision]:
        now = view.now
        jobs, units, est = view.queue
        n = len(jobs)
        reqs = view.requests
        n_nodes = view.free.shape[0]
        physical = view.free.copy()
        ends, _held, running_jobs = view.running
        releases = [
            (int(t), view.allocation(int(j)).matrix(reqs[int(j)], n_nodes))
            for t, j in zip(ends.tolist(), running_jobs.tolist(), strict=True)
        ]
        prof = NodeProfile(now, physical, releases)
        alloc_ = self.allocator_
        out: list[Decision] = []
        reserved: list[tuple[int, int]] = []
        i = 0
        while i < n and len(reserved) < k:
            job, u, d = int(jobs[i]), int(units[i]), planned(int(est[i]))
            t, alloc = prof.earliest(alloc_, reqs[job], u, d)
            if t == now:
                now_alloc = alloc_.allocate(reqs[job], u,
                                            np.minimum(physical, prof.window_min(now, d)))
                if now_alloc is not None:
                    used = now_alloc.matrix(reqs[job], n_nodes)
                    prof.reserve(now, d, used)
                    physical -= used
                    out.append(Start(job, now_alloc))
                    i += 1
                    continue
            prof.reserve(t, d, alloc.matrix(reqs[job], n_nodes))
            reserved.append((job, t))
            i += 1
        rest = list(range(i, n))
        if self.order == "sjf" and len(rest) > 1:
            rest = (i + np.argsort(est[i:], kind="stable")).tolist()
        for p in rest:
            job, u, d = int(jobs[p]), int(units[p]), planned(int(est[p]))
            alloc = alloc_.allocate(reqs[job], u, np.minimum(physical, prof.window_min(now, d)))
            if alloc is None:
                continue
            used = alloc.matrix(reqs[job], n_nodes)
            prof.reserve(now, d, used)
            physical -= used
            out.append(Start(job, alloc))
        if self.explain:
            self.log_.append({"now": now, "reservations": reserved,
                              "started": [d.job for d in out]})
        return out


class EASY(_Backfill):
    """EASY backfilling; ``reservations=K`` protects the first K waiting jobs."""

    name = "easy"

    def __init__(self, order: str = "fifo", reservations: int = 1,
                 allocator: str = "first-fit", explain: bool = False) -> None:
        self.order = order
        self.reservations = reservations
        self.allocator = allocator
        self.explain = explain


class Conservative(_Backfill):
    """Conservative backfilling: every waiting job holds a reservation."""

    name = "conservative"

    def __init__(self, order: str = "fifo", allocator: str = "first-fit",
                 explain: bool = False) -> None:
        self.order = order
        self.allocator = allocator
        self.explain = explain

    @property
    def reservations(self) -> None:
        return None
