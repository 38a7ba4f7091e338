"""The engine's mutable state containers: the waiting queue and the running set.

Both keep their rows in numpy arrays so that dispatchers can scan them with vectorized
masks, and both avoid per-pass allocation: the queue is an array window ``[lo, hi)``
(a FIFO start only moves ``lo``), the running set is kept sorted by estimated end by
shifting rows (one ``memmove`` per insert or removal).
"""

from __future__ import annotations

import numpy as np


class WaitingQueue:
    """Waiting jobs in queue order: submit time, then file order.

    Because the job table is sorted by submit time (stable), queue order is simply
    ascending job row; appending at submission keeps it. Columns: ``jobs`` (row in the
    job table), ``units`` and ``estimate`` (seconds, the prediction at submission).
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._data = np.empty((3, max(capacity, 16)), dtype=np.int64)
        self.lo = 0
        self.hi = 0

    def __len__(self) -> int:
        return self.hi - self.lo

    def append(self, job: int, units: int, estimate: int) -> None:
        if self.hi == self._data.shape[1]:
            self._make_room()
        d = self._data
        d[0, self.hi] = job
        d[1, self.hi] = units
        d[2, self.hi] = estimate
        self.hi += 1

    def _make_room(self) -> None:
        n = len(self)
        cap = self._data.shape[1]
        if n > cap // 2:
            new = np.empty((3, cap * 2), dtype=np.int64)
            new[:, :n] = self._data[:, self.lo : self.hi]
            self._data = new
        else:
            self._data[:, :n] = self._data[:, self.lo : self.hi]
        self.lo, self.hi = 0, n

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Read-only views (jobs, units, estimate), valid until the queue changes."""
        d = self._data[:, self.lo : self.hi]
        return d[0], d[1], d[2]

    def remove_jobs(self, jobs: list[int]) -> None:
        """Remove the given jobs (rows of the job table) from the queue."""
        k = len(jobs)
        if k == 0:
            return
        window = self._data[0, self.lo : self.hi]
        if k == 1:
            if window[0] == jobs[0]:
                self.lo += 1
                return
            positions = window.searchsorted(jobs)
        else:
            positions = window.searchsorted(sorted(jobs))
            if positions[-1] == k - 1:  # a prefix: just move the window
                self.lo += k
                return
        d = self._data
        if k <= 8:  # shift the tail left over each removed row, last one first
            for pos in sorted(positions.tolist(), reverse=True):
                p = self.lo + pos
                d[:, p : self.hi - 1] = d[:, p + 1 : self.hi]
                self.hi -= 1
            return
        keep = np.ones(len(self), dtype=bool)
        keep[positions] = False
        kept = d[:, self.lo : self.hi][:, keep]
        d[:, self.lo : self.lo + kept.shape[1]] = kept
        self.hi = self.lo + kept.shape[1]


class RunningSet:
    """Running jobs sorted by estimated end (ties: the order they were inserted).

    Columns: ``est_end`` (start + current estimate, seconds; may lie in the past when a
    job outlives its estimate), ``units``, ``jobs``.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self._data = np.empty((3, max(capacity, 16)), dtype=np.int64)
        self.n = 0

    def __len__(self) -> int:
        return self.n

    def insert(self, job: int, est_end: int, units: int) -> None:
        n = self.n
        if n == self._data.shape[1]:
            new = np.empty((3, n * 2), dtype=np.int64)
            new[:, :n] = self._data[:, :n]
            self._data = new
        d = self._data
        pos = int(d[0, :n].searchsorted(est_end, side="right"))
        if pos < n:
            d[:, pos + 1 : n + 1] = d[:, pos:n]
        d[0, pos] = est_end
        d[1, pos] = units
        d[2, pos] = job
        self.n = n + 1

    def remove(self, job: int, est_end: int) -> None:
        d = self._data
        n = self.n
        pos = int(d[0, :n].searchsorted(est_end, side="left"))
        jobs = d[2]
        while jobs[pos] != job:
            pos += 1
        if pos < n - 1:
            d[:, pos : n - 1] = d[:, pos + 1 : n]
        self.n = n - 1

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Read-only views (est_end, units, jobs) in estimated-end order."""
        d = self._data[:, : self.n]
        return d[0], d[1], d[2]

    def first_end(self) -> int | None:
        return int(self._data[0, 0]) if self.n else None
