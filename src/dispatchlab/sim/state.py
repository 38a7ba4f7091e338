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
    """Running jobs sorted by estimated end, ties by job row.

    One sorted int64 array of keys ``est_end << shift | job`` (``est_end`` is start +
    planned duration, seconds; it may lie in the past when a job outlives its estimate);
    units are looked up in ``units_of`` (per job row) when the columns are asked for.
    """

    def __init__(self, units_of: np.ndarray, n_jobs: int, capacity: int = 1024) -> None:
        self._keys = np.empty(max(capacity, 16), dtype=np.int64)
        self.n = 0
        self.shift = max(20, int(n_jobs).bit_length())
        self.mask = (1 << self.shift) - 1
        self._units_of = units_of

    def __len__(self) -> int:
        return self.n

    def insert(self, job: int, est_end: int) -> None:
        n = self.n
        keys = self._keys
        if n == len(keys):
            self._keys = keys = np.concatenate((keys, np.empty(n, dtype=np.int64)))
        key = (est_end << self.shift) | job
        pos = int(keys[:n].searchsorted(key))
        if pos < n:
            keys[pos + 1 : n + 1] = keys[pos:n]
        keys[pos] = key
        self.n = n + 1

    def remove(self, job: int, est_end: int) -> None:
        n = self.n
        keys = self._keys
        pos = int(keys[:n].searchsorted((est_end << self.shift) | job))
        if pos < n - 1:
            keys[pos : n - 1] = keys[pos + 1 : n]
        self.n = n - 1

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(est_end, units, jobs) in estimated-end order (new arrays)."""
        keys = self._keys[: self.n]
        jobs = keys & self.mask
        return keys >> self.shift, self._units_of[jobs], jobs

    def first_end(self) -> int | None:
        return int(self._keys[0]) >> self.shift if self.n else None
