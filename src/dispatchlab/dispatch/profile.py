"""Availability profiles: free resources over future time, for reservations.

A profile starts at ``now`` and is a step function: ``free[k]`` holds on
``[times[k], times[k + 1])`` and the last value holds forever. Running jobs release
their resources at their *effective* estimated end (an end already past counts as
now, so such jobs are free again at ``now`` in the profile, although they still hold
their resources physically: a job starting now must also fit the physical free
resources, which the dispatchers check separately).

**Planning duration.** A job planned to start at ``t`` with estimate ``e`` holds its
resources on ``[t, t + max(e, 1))``: a 0-second estimate still needs free resources
at its start.

Both profiles can be dumped (``rows()``) for debugging.

**Node-level speed.** A :class:`NodeProfile` keeps, besides its list of matrices, a
stacked (breakpoints x nodes x resources) copy and its running minimum from ``now``
(both built on demand, dropped by every change), so that a window from ``now`` is one
row of the running minimum and the breakpoints where a job cannot fit at all are
found with one vectorized count. :func:`fit_totals` is that count: how many units of
a request the nodes can host in total (capped per node at the units wanted, so it
never overflows). An allocator never places a job whose units do not fit in total,
so skipping those breakpoints or candidates changes no decision.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

import numpy as np

from dispatchlab.dispatch.allocation import Allocation
from dispatchlab.dispatch.allocators import Allocator


def planned(estimate: int) -> int:
    """The planning duration of an estimate (seconds, at least 1)."""
    return estimate if estimate > 0 else 1


def fit_totals(requests: np.ndarray, units: np.ndarray, free: np.ndarray) -> np.ndarray:
    """For each job ``c`` (per-unit request ``requests[c]``, ``units[c]`` units), the
    units the (nodes x resources) matrix ``free[c]`` can host in total, each node's
    count clipped to ``[0, units[c]]``: the job can fit only where this reaches
    ``units[c]`` (the row-wise :func:`~dispatchlab.dispatch.allocators.units_per_node`,
    clipped and summed).

    ``requests``: (C x R); ``units``: (C,); ``free``: (C x N x R), or (N x R) shared by
    every job. A request of nothing fits every node (count ``units[c]``)."""
    requests = np.asarray(requests, dtype=np.int64)
    units = np.asarray(units, dtype=np.int64)
    free = np.asarray(free, dtype=np.int64)
    if free.ndim == 2:
        free = free[None, :, :]
    pos = requests > 0
    per = free // np.maximum(requests, 1)[:, None, :]
    big = units[:, None, None]
    per = np.where(pos[:, None, :], per, big)
    fit = np.clip(per.min(axis=2), 0, units[:, None])
    return fit.sum(axis=1)


def node_fits(requests: np.ndarray, free: np.ndarray, cap: int) -> np.ndarray:
    """How many units of each per-unit request ``requests[k]`` (K x R) every node can
    host given ``free`` (N x R), clipped to ``[0, cap]``: a (K x N) int64 matrix (a
    request of nothing fits ``cap``)."""
    requests = np.asarray(requests, dtype=np.int64)
    pos = requests > 0
    per = free[None, :, :] // np.maximum(requests, 1)[:, None, :]
    per = np.where(pos[:, None, :], per, cap)
    return np.clip(per.min(axis=2), 0, cap)


def _stack_fits(stack: np.ndarray, request: np.ndarray, units: int) -> np.ndarray:
    """For each matrix of ``stack`` (T x N x R), whether ``units`` units of ``request``
    fit in it in total."""
    pos = np.flatnonzero(np.asarray(request) > 0)
    if len(pos) == 0:
        return np.full(stack.shape[0], stack.shape[1] > 0 or units <= 0)
    per = (stack[:, :, pos] // np.asarray(request)[pos]).min(axis=2)
    return np.clip(per, 0, units).sum(axis=1) >= units


def _accumulate(ufunc: np.ufunc, stack: np.ndarray) -> np.ndarray:
    """``ufunc.accumulate(stack, axis=0)`` (a new array), computed along contiguous
    rows of the transpose: numpy's accumulation over the first axis of a 3-d array
    walks it with a stride and runs a few times slower."""
    if stack.shape[0] <= 1:
        return stack.copy()
    t = np.array(stack.reshape(stack.shape[0], -1).T, order="C")  # always a copy
    ufunc.accumulate(t, axis=1, out=t)
    return np.ascontiguousarray(t.T).reshape(stack.shape)


def step_cut(times: list[int], levels: list, start: int, stop: int) -> tuple[int, int]:
    """Make ``start`` and ``stop`` (``> start >= times[0]``) breakpoints of the step
    function ``(times, levels)`` (a new breakpoint takes the level in force there) and
    return their indices ``(i, j)``: breakpoints ``i..j-1`` cover ``[start, stop)``."""
    i = bisect_left(times, start)
    if i == len(times) or times[i] != start:
        times.insert(i, start)
        levels.insert(i, levels[i - 1])
    j = bisect_left(times, stop, i)
    if j == len(times) or times[j] != stop:
        times.insert(j, stop)
        levels.insert(j, levels[j - 1])
    return i, j


def step_levels(times: list[int], levels: list, start: int, duration: int) -> list:
    """The levels of the step function ``(times, levels)`` in force on ``[start, start +
    duration)`` (``start >= times[0]``, ``duration >= 1``)."""
    return levels[bisect_right(times, start) - 1 : bisect_left(times, start + duration)]


class CoreProfile:
    """Free cores over time (counting mode).

    Kept as two Python lists: a plan touches a few dozen breakpoints, where plain
    loops beat numpy's per-call overhead.
    """

    def __init__(self, now: int, ends, units, free_now: int) -> None:
        """``ends`` (ascending; an end before ``now`` counts as ``now``) and ``units`` of
        running jobs (numpy arrays or ``array('q')`` buffers); ``free_now`` physical free
        cores."""
        self.now = now
        times = [now]
        free = [free_now]
        level = free_now
        for t, u in zip(ends.tolist(), units.tolist(), strict=True):
            level += u
            if t <= times[-1]:  # ascending: only an end at or before now is below
                free[-1] = level
            else:
                times.append(t)
                free.append(level)
        self.times = times
        self.free = free

    def copy(self) -> CoreProfile:
        """An independent copy (reservations in it leave this one unchanged)."""
        twin = CoreProfile.__new__(CoreProfile)
        twin.now, twin.times, twin.free = self.now, list(self.times), list(self.free)
        return twin

    def earliest(self, units: int, duration: int) -> int:
        """Earliest start ``t >= now`` with ``units`` free on ``[t, t + duration)`` (what
        :meth:`place` would take; this profile is left unchanged)."""
        return self.copy().place(units, duration)

    def place(self, units: int, duration: int, after: int | None = None) -> int:
        """Take ``units`` cores on ``[t, t + duration)`` at the earliest ``t >= now``
        where they fit, in one scan, and return ``t`` (the step function is that of
        :meth:`reserve` at ``t``).

        ``after``: a time known not to be later than that earliest start (the scan
        begins at the first breakpoint at or after it). A job placed earlier in this
        profile at ``t'`` with no more units and no longer duration gives such a bound:
        every window before ``t'`` held fewer free cores than it needed then, and
        reservations since only took more.

        Adjacent breakpoints left on the same level are merged (the step function is
        unchanged, the next scans are shorter)."""
        times, free = self.times, self.free
        m = len(times)
        k = 0 if after is None else bisect_left(times, after)
        while True:
            while free[k] < units:  # the last level is the whole platform: always fits
                k += 1
            stop = times[k] + duration
            j = k + 1
            while j < m and times[j] < stop:
                if free[j] < units:
                    break
                j += 1
            else:
                break
            k = j + 1  # every start up to breakpoint j has j in its window
        # the window is breakpoints k..j-1; j is the first breakpoint at or after stop
        start = times[k]
        if j == m or times[j] != stop:
            times.insert(j, stop)
            free.insert(j, free[j - 1])
        elif free[j] == free[j - 1] - units:  # the level after the window: merged
            del times[j], free[j]
        if j - k == 1:
            free[k] -= units
        else:
            free[k:j] = [x - units for x in free[k:j]]
        if k and free[k - 1] == free[k]:  # the level before the window: merged
            del times[k], free[k]
        return start

    def min_over(self, start: int, duration: int) -> int:
        """Minimum free cores on ``[start, start + duration)``."""
        return min(step_levels(self.times, self.free, start, duration))

    def reserve(self, start: int, duration: int, units: int) -> None:
        """Take ``units`` cores on ``[start, start + duration)``."""
        free = self.free
        i, j = step_cut(self.times, free, start, start + duration)
        for k in range(i, j):
            free[k] -= units

    def prefix_min_until(self, stops: np.ndarray) -> np.ndarray:
        """For each stop time s > now, the minimum free cores on ``[now, s)``."""
        pm = np.minimum.accumulate(np.asarray(self.free, dtype=np.int64))
        idx = np.asarray(self.times, dtype=np.int64).searchsorted(stops, side="left") - 1
        return pm[idx]

    def rows(self) -> list[tuple[int, int]]:
        return list(zip(self.times, self.free, strict=True))


class NodeProfile:
    """Free (nodes x resources) matrices over time (node-level mode).

    Kept as a list of matrices (``free``; a matrix is never written into: a change
    replaces it, so copies share them) and, once asked for, as one stacked
    (breakpoints x nodes x resources) array that reservations then keep up to date
    (with one copy of it per reservation, instead of stacking every matrix again; a
    profile never asked for it drops it at its first reservation)."""

    def __init__(self, now: int, free_now: np.ndarray,
                 releases: list[tuple[int, np.ndarray]]) -> None:
        """``releases``: (effective end >= now, resources freed per node) of running jobs."""
        self.now = now
        by_time: dict[int, np.ndarray] = {}
        for t, used in releases:
            if t in by_time:
                by_time[t] = by_time[t] + used
            else:
                by_time[t] = used.copy()
        base = free_now.copy()
        if now in by_time:
            base += by_time.pop(now)
        self.times = [now]
        self.free = [base]
        for t in sorted(by_time):
            self.times.append(t)
            self.free.append(self.free[-1] + by_time[t])
        #: the matrices of ``free`` stacked (times x nodes x resources) and their
        #: running minimum, made on demand
        self._stack: np.ndarray | None = None
        self._pmin: np.ndarray | None = None
        self._own = False  # whether the stack is this profile's alone (see reserve)
        self._keep = False  # whether reserve keeps the stack (once it was asked for)
        self._monotone = False  # not checked: the running minimum is computed

    @classmethod
    def from_running(cls, now: int, free_now: np.ndarray, ends: np.ndarray,
                     allocations: list, requests: np.ndarray) -> NodeProfile:
        """The profile of running jobs from their arrays, without one dense (nodes x
        resources) matrix per job: job ``i`` frees ``allocations[i].counts x
        requests[i]`` on ``allocations[i].nodes`` at ``ends[i]`` (>= now). Equal, value
        for value, to ``NodeProfile(now, free_now, [(ends[i], allocations[i].matrix(
        requests[i], n_nodes)) ...])`` (integer sums in another order)."""
        prof = cls.__new__(cls)
        prof.now = now
        prof._stack = prof._pmin = None
        prof._own = False  # the matrices of ``free`` are views of the stack
        prof._keep = False
        prof._monotone = True  # releases only add resources
        base = free_now.copy()
        if len(ends) == 0:
            prof.times, prof.free = [now], [base]
            return prof
        times, inv = np.unique(np.asarray(ends, dtype=np.int64), return_inverse=True)
        sizes = np.fromiter((len(a.nodes) for a in allocations), dtype=np.int64,
                            count=len(allocations))
        nodes = np.concatenate([a.nodes for a in allocations])
        counts = np.concatenate([a.counts for a in allocations])
        owner = np.repeat(np.arange(len(allocations)), sizes)
        freed = np.zeros((len(times), base.shape[0], base.shape[1]), dtype=np.int64)
        np.add.at(freed, (inv[owner], nodes), counts[:, None] * requests[owner])
        if times[0] == now:  # released now: part of the free matrix at now
            base += freed[0]
            times, freed = times[1:], freed[1:]
        if len(freed):
            freed[0] += base
        stack = np.concatenate([base[None, :, :], _accumulate(np.add, freed)])
        stack.flags.writeable = False
        prof.times = [now, *times.tolist()]
        prof.free = list(stack)  # read-only views: changes replace matrices
        prof._stack = stack
        return prof

    def copy(self) -> NodeProfile:
        """An independent copy. The matrices are shared (every change to a profile
        replaces a matrix, never writes into one), and so is the stacked array:
        neither profile writes into it after this (:meth:`reserve` copies it first)."""
        twin = NodeProfile.__new__(NodeProfile)
        twin.now, twin.times, twin.free = self.now, list(self.times), list(self.free)
        twin._stack, twin._pmin = self._stack, self._pmin
        twin._own = self._own = False
        twin._keep = self._keep
        twin._monotone = self._monotone
        return twin

    def stacked(self) -> np.ndarray:
        """The free matrices as one read-only (breakpoints x nodes x resources) array
        (built on demand, then kept up to date by :meth:`reserve`; valid until the
        next change)."""
        self._keep = True
        s = self._stack
        if s is None:
            s = self._stack = np.stack(self.free)
            self._own = True
        view = s.view()
        view.flags.writeable = False
        return view

    def running_min(self) -> np.ndarray:
        """Read-only: row ``k`` is the minimum of the free matrices ``0..k`` (the free
        resources on ``[now, times[k + 1])``). In a profile known to be non-decreasing
        (running jobs' releases, then only reservations from now) that is the first
        matrix."""
        if self._monotone:  # every matrix is below the next one: the first is the minimum
            stack = self.stacked()
            return np.broadcast_to(stack[0], stack.shape)
        p = self._pmin
        if p is None:
            p = self._pmin = _accumulate(np.minimum, self.stacked())
            p.flags.writeable = False
        return p

    def _index(self, t: int) -> int:
        return bisect_right(self.times, t) - 1

    def _window(self, start: int, duration: int) -> np.ndarray:
        """:meth:`window_min` as a read-only array (no copy)."""
        i = self._index(start)
        j = max(bisect_left(self.times, start + duration), i + 1)
        if i < 0:  # before the profile (not used by the dispatchers): as a plain reduce
            return np.minimum.reduce(self.free[i:j])
        if j == i + 1:
            return self.free[i]
        if i == 0 and self._monotone:  # the first matrix is the minimum
            return self.free[0]
        if self._stack is None:  # never stacked: reduce the window only
            return np.minimum.reduce(self.free[i:j])
        if i == 0 and self._pmin is not None:
            return self._pmin[j - 1]
        return self._stack[i:j].min(axis=0)

    def window_min(self, start: int, duration: int) -> np.ndarray:
        """Minimum free matrix over ``[start, start + duration)`` (a new array)."""
        return self._window(start, duration).copy()

    def earliest(self, allocator: Allocator, request: np.ndarray, units: int,
                 duration: int, after: int | None = None) -> tuple[int, Allocation]:
        """Earliest breakpoint at which the allocator places the job for ``duration``.

        Breakpoints where the job's units do not fit in total even in the free matrix
        at that breakpoint alone (an upper bound of the window's) are skipped: no
        allocator places the job there. ``after``: a time known not to be later than
        the answer (only the breakpoints from it on are tried)."""
        times = self.times
        k = 0 if after is None else bisect_left(times, after)
        stack = self.stacked()
        for i in np.flatnonzero(_stack_fits(stack[k:] if k else stack, request,
                                            units)).tolist():
            t = times[i + k]
            alloc = allocator.allocate(request, units, self.window_min(t, duration))
            if alloc is not None:
                return t, alloc
        raise AssertionError("a job that fits the empty platform always fits eventually")

    def reserve(self, start: int, duration: int, used: np.ndarray) -> None:
        """Take ``used`` (nodes x resources) on ``[start, start + duration)`` (``start >=
        now``, ``duration >= 1``). New breakpoints at ``start`` and at the end take the
        matrix in force there; a stacked array, if any, gets the same rows inserted (in
        one copy, or a plain copy when it is shared) and the window lowered in place."""
        times, free = self.times, self.free
        stop = start + duration
        i = bisect_left(times, start)
        add_i = i == len(times) or times[i] != start
        j = bisect_left(times, stop, i)
        add_j = j == len(times) or times[j] != stop
        stack = self._stack if self._keep else None
        if stack is not None:
            at = [p for p, add in ((i, add_i), (j, add_j)) if add]
            if at:
                stack = np.insert(stack, at, stack[[p - 1 for p in at]], axis=0)
            elif not self._own:
                stack = stack.copy()
        if add_i:  # the matrix in force at start; replaced below
            times.insert(i, start)
            free.insert(i, free[i - 1])
            j += 1
        if add_j:  # the matrix in force at the end, before this reservation
            times.insert(j, stop)
            free.insert(j, free[j - 1])
        for k in range(i, j):
            free[k] = free[k] - used
        if stack is not None:
            stack[i:j] -= used
            self._own = True
        self._stack = stack
        self._pmin = None
        # from now on, taking resources keeps every matrix below the next one
        self._monotone = self._monotone and i == 0 and bool((used >= 0).all())

    def rows(self) -> list[tuple[int, list[list[int]]]]:
        return [(t, f.tolist()) for t, f in zip(self.times, self.free, strict=True)]


class ReleaseEvents:
    """The running jobs' releases as per-node events, for EASY's node-level pass: the
    head job's earliest start found without a (breakpoints x nodes x resources) array.

    A :class:`NodeProfile` of the running jobs (:meth:`NodeProfile.from_running`) holds
    one full matrix per distinct release time: building it, finding the head's first
    fitting breakpoint in it and inserting the head's reservation cost O(T x N x R) per
    pass (T release times, N nodes, R resources), which grows with the platform and the
    number of running jobs (on 1,000 nodes with a few hundred running jobs, tens of ms
    per pass). Here the profile is ``base`` (the free matrix at ``now``) and events
    ``(time > now, node, resources freed)``: one per node of each running job, and one
    per node of each job started now in this pass, at its planned end (:meth:`start`).

    The profile is non-decreasing in time (releases only add; a job started now holds
    its resources from now on, and gives them back at its end), so its minimum over any
    window ``[t, t + d)`` is its matrix at ``t``: :meth:`earliest` tries the breakpoints
    in order with the matrix in force there, as :meth:`NodeProfile.earliest` does with
    the window's minimum, and skips, as it does, the breakpoints where the job's units
    do not fit in total (:func:`fit_totals`); those totals are computed for all
    breakpoints at once from the events (each node's running sums), O(E log E + E x R)
    for E events. Same starts and allocations, value for value, as the stacked profile
    (tests/dispatch/test_backfill_speed.py)."""

    def __init__(self, now: int, free_now: np.ndarray, ends: np.ndarray,
                 allocations: list, requests: np.ndarray) -> None:
        """``ends`` (effective estimated ends, >= now), ``allocations`` and ``requests``
        (per-unit, one row per job) of the running jobs; ``free_now`` the physical free
        (nodes x resources) matrix."""
        n = len(allocations)
        if n:
            sizes = np.fromiter((len(a.nodes) for a in allocations), dtype=np.int64,
                                count=n)
            nodes = np.concatenate([a.nodes for a in allocations]).astype(np.int64)
            counts = np.concatenate([a.counts for a in allocations]).astype(np.int64)
            owner = np.repeat(np.arange(n), sizes)
            times = np.asarray(ends, dtype=np.int64)[owner]
            freed = counts[:, None] * np.asarray(requests, dtype=np.int64)[owner]
        else:
            times = np.empty(0, dtype=np.int64)
            nodes = np.empty(0, dtype=np.int64)
            freed = np.empty((0, np.shape(free_now)[1]), dtype=np.int64)
        self._fold(now, free_now, times, nodes, freed)

    @classmethod
    def from_events(cls, now: int, free_now: np.ndarray, times: np.ndarray,
                    nodes: np.ndarray, freed: np.ndarray) -> ReleaseEvents:
        """From the events themselves: ``freed[e]`` (resources) comes back to node
        ``nodes[e]`` at ``times[e]`` (>= now; at now: part of the matrix at now)."""
        events = cls.__new__(cls)
        events._fold(now, free_now, times, nodes, freed)
        return events

    def _fold(self, now: int, free_now: np.ndarray, times: np.ndarray, nodes: np.ndarray,
              freed: np.ndarray) -> None:
        self.now = now
        base = np.array(free_now, dtype=np.int64)
        at_now = times <= now
        if at_now.any():  # released now: part of the matrix at now
            np.add.at(base, nodes[at_now], freed[at_now])
            later = ~at_now
            times, nodes, freed = times[later], nodes[later], freed[later]
        self.base = base
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [(times, nodes, freed)]

    def start(self, alloc: Allocation, request: np.ndarray, duration: int) -> None:
        """A job placed now for ``duration`` (>= 1) seconds: its resources leave the
        matrix at now and come back at ``now + duration``."""
        nodes = np.asarray(alloc.nodes, dtype=np.int64)
        used = np.asarray(alloc.counts, dtype=np.int64)[:, None] * np.asarray(
            request, dtype=np.int64)[None, :]
        self.base[nodes] -= used
        self._parts.append((np.full(len(nodes), self.now + duration, dtype=np.int64),
                            nodes, used))

    def _events(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        parts = self._parts
        if len(parts) > 1:
            parts[:] = [(np.concatenate([p[0] for p in parts]),
                         np.concatenate([p[1] for p in parts]),
                         np.concatenate([p[2] for p in parts]))]
        return parts[0]

    def matrix_at(self, t: int) -> np.ndarray:
        """The free (nodes x resources) matrix in force at ``t >= now`` (a new array)."""
        times, nodes, freed = self._events()
        out = self.base.copy()
        sel = times <= t
        np.add.at(out, nodes[sel], freed[sel])
        return out

    def earliest(self, allocator: Allocator, request: np.ndarray,
                 units: int) -> tuple[int, Allocation, np.ndarray]:
        """The earliest breakpoint ``t`` (now, or an event time) at which ``allocator``
        places ``units`` units of ``request`` in the matrix in force at ``t``: ``(t,
        allocation, that matrix)``."""
        request = np.asarray(request, dtype=np.int64)
        pos = np.flatnonzero(request > 0)
        base = self.base
        n_nodes = base.shape[0]

        def per_node(rows: np.ndarray) -> np.ndarray:
            if len(pos) == 0:  # a request of nothing fits every node (as _stack_fits)
                return np.full(rows.shape[0], units if n_nodes else 0, dtype=np.int64)
            return np.clip((rows[:, pos] // request[pos]).min(axis=1), 0, units)

        f0 = per_node(base)
        total0 = int(f0.sum())
        if total0 >= units:
            alloc = allocator.allocate(request, units, base.copy())
            if alloc is not None:
                return self.now, alloc, base.copy()
        times, nodes, freed = self._events()
        if len(times):
            # each node's matrix row after each of its events (events by node, then time)
            order = np.lexsort((times, nodes))
            node_s = nodes[order]
            cum = np.cumsum(freed[order], axis=0)
            first = np.ones(len(order), dtype=bool)
            first[1:] = node_s[1:] != node_s[:-1]
            heads = np.flatnonzero(first)
            before = cum[heads] - freed[order][heads]  # the running sum before each node
            rows = base[node_s] + cum - np.repeat(before, np.diff(np.append(heads,
                                                                            len(order))),
                                                   axis=0)
            fit = per_node(rows)
            prev = np.empty_like(fit)
            prev[first] = f0[node_s[first]]
            prev[1:][~first[1:]] = fit[:-1][~first[1:]]
            change = np.empty_like(fit)
            change[order] = fit - prev
            by_time = np.argsort(times, kind="stable")
            t_sorted = times[by_time]
            totals = total0 + np.cumsum(change[by_time])
            last = np.flatnonzero(np.append(t_sorted[1:] != t_sorted[:-1], True))
            for k in np.flatnonzero(totals[last] >= units).tolist():
                t = int(t_sorted[last[k]])
                matrix = self.matrix_at(t)
                alloc = allocator.allocate(request, units, matrix.copy())
                if alloc is not None:
                    return t, alloc, matrix
        raise AssertionError("a job that fits the empty platform always fits eventually")
