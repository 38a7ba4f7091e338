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
"""

from __future__ import annotations

import numpy as np

from dispatchlab.dispatch.allocators import Allocator
from dispatchlab.dispatch.base import Allocation

INF_TIME = np.iinfo(np.int64).max // 4


def planned(estimate: int) -> int:
    """The planning duration of an estimate (seconds, at least 1)."""
    return estimate if estimate > 0 else 1


class CoreProfile:
    """Free cores over time (counting mode)."""

    def __init__(self, now: int, ends: np.ndarray, units: np.ndarray, free_now: int) -> None:
        """``ends`` (effective, >= now, ascending) and ``units`` of running jobs; ``free_now``
        physical free cores."""
        self.now = now
        if len(ends):
            uniq, first = np.unique(ends, return_index=True)
            released = np.add.reduceat(units, first)
            if uniq[0] == now:
                base = free_now + int(released[0])
                uniq, released = uniq[1:], released[1:]
            else:
                base = free_now
            self.times = np.concatenate(([now], uniq)).astype(np.int64)
            self.free = (base + np.concatenate(([0], np.cumsum(released)))).astype(np.int64)
        else:
            self.times = np.array([now], dtype=np.int64)
            self.free = np.array([free_now], dtype=np.int64)

    def earliest(self, units: int, duration: int) -> int:
        """Earliest start ``t >= now`` with ``units`` free on ``[t, t + duration)``."""
        free, times = self.free, self.times
        bad = np.flatnonzero(free < units)
        if len(bad) == 0:
            return self.now
        if bad[0] > 0 and times[bad[0]] >= self.now + duration:
            return self.now
        m = len(times)
        nxt = np.searchsorted(bad, np.arange(m))
        next_bad_time = np.where(nxt < len(bad), times[bad[np.minimum(nxt, len(bad) - 1)]],
                                 INF_TIME)
        ok = (free >= units) & (next_bad_time >= times + duration)
        return int(times[int(np.argmax(ok))])

    def min_over(self, start: int, duration: int) -> int:
        """Minimum free cores on ``[start, start + duration)`` (start is a breakpoint)."""
        i = int(np.searchsorted(self.times, start, side="right")) - 1
        j = int(np.searchsorted(self.times, start + duration, side="left"))
        return int(self.free[i:j].min())

    def reserve(self, start: int, duration: int, units: int) -> None:
        """Take ``units`` cores on ``[start, start + duration)``."""
        times = self.times
        i = int(np.searchsorted(times, start, side="left"))
        if i == len(times) or times[i] != start:
            self.times = times = np.insert(times, i, start)
            self.free = np.insert(self.free, i, self.free[i - 1])
        stop = start + duration
        j = int(np.searchsorted(times, stop, side="left"))
        if j == len(times) or times[j] != stop:
            self.times = np.insert(times, j, stop)
            self.free = np.insert(self.free, j, self.free[j - 1])
        self.free[i:j] -= units

    def prefix_min_until(self, stops: np.ndarray) -> np.ndarray:
        """For each stop time s > now, the minimum free cores on ``[now, s)``."""
        pm = np.minimum.accumulate(self.free)
        idx = np.searchsorted(self.times, stops, side="left") - 1
        return pm[idx]

    def rows(self) -> list[tuple[int, int]]:
        return list(zip(self.times.tolist(), self.free.tolist(), strict=True))


class NodeProfile:
    """Free (nodes x resources) matrices over time (node-level mode)."""

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

    def _index(self, t: int) -> int:
        return int(np.searchsorted(self.times, t, side="right")) - 1

    def window_min(self, start: int, duration: int) -> np.ndarray:
        i = self._index(start)
        j = int(np.searchsorted(self.times, start + duration, side="left"))
        return np.minimum.reduce(self.free[i:max(j, i + 1)])

    def earliest(self, allocator: Allocator, request: np.ndarray, units: int,
                 duration: int) -> tuple[int, Allocation]:
        """Earliest breakpoint at which the allocator places the job for ``duration``."""
        for t in self.times:
            alloc = allocator.allocate(request, units, self.window_min(t, duration))
            if alloc is not None:
                return t, alloc
        raise AssertionError("a job that fits the empty platform always fits eventually")

    def _split(self, t: int) -> int:
        i = int(np.searchsorted(self.times, t, side="left"))
        if i == len(self.times) or self.times[i] != t:
            self.times.insert(i, t)
            self.free.insert(i, self.free[i - 1].copy())
        return i

    def reserve(self, start: int, duration: int, used: np.ndarray) -> None:
        i = self._split(start)
        j = self._split(start + duration)
        for k in range(i, j):
            self.free[k] = self.free[k] - used

    def rows(self) -> list[tuple[int, list[list[int]]]]:
        return [(t, f.tolist()) for t, f in zip(self.times, self.free, strict=True)]
