"""The engine's mutable state containers: the waiting queue and the running set.

Both keep one ``array('q')`` buffer of integers: appending, inserting and deleting are
single C calls (a ``memmove`` at most). Dispatchers get numpy arrays built from them on
request (one copy and, for the per-job columns, one gather).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right

import numpy as np


def _np(buf: array) -> np.ndarray:
    """A numpy copy of an int64 array buffer (a copy: the buffer may change later)."""
    return np.array(buf, dtype=np.int64) if len(buf) else np.empty(0, np.int64)


class WaitingQueue:
    """Waiting jobs in queue order: submit time, then file order.

    Because the job table is sorted by submit time (stable), queue order is simply
    ascending job row; appending at submission keeps it. Only the rows are stored;
    ``units_of`` and ``estimate_of`` (per job row, live views of the engine's state)
    give the other columns.
    """

    def __init__(self, units_of: np.ndarray, estimate_of: np.ndarray,
                 submit_of: np.ndarray) -> None:
        self.jobs = array("q")
        self._units_of = units_of
        self._estimate_of = estimate_of
        self._submit_of = submit_of
        self._cols: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.jobs)

    def append(self, job: int) -> None:
        self.jobs.append(job)
        self._cols = None

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(jobs, units, estimates, submit) as read-only numpy arrays, cached until the
        queue changes."""
        if self._cols is None:
            jobs = _np(self.jobs)
            cols = (jobs, self._units_of[jobs], self._estimate_of[jobs], self._submit_of[jobs])
            for c in cols:
                c.flags.writeable = False
            self._cols = cols
        return self._cols

    def remove_jobs(self, jobs: list[int]) -> None:
        """Remove the given jobs (rows of the job table) from the queue."""
        if not jobs:
            return
        self._cols = None
        qjobs = self.jobs
        if len(jobs) == 1:
            if qjobs[0] == jobs[0]:
                del qjobs[0]
            else:
                del qjobs[bisect_left(qjobs, jobs[0])]
            return
        # positions by binary search (queue order is ascending job row), last one first
        for job in sorted(jobs, reverse=True):
            del qjobs[bisect_left(qjobs, job)]


class RunningSet:
    """Running jobs sorted by estimated end, ties by job row.

    ``keys`` is a sorted buffer of ``est_end << shift | job``; ``est_end`` is the job's
    start + planned duration (seconds), which may lie in the past when the job outlives
    its estimate. ``ends`` and ``units`` are kept aligned with ``keys`` so that the first
    few can be read without decoding.
    """

    def __init__(self, units_of: np.ndarray, n_jobs: int) -> None:
        self.keys = array("q")
        self.ends = array("q")
        self.units = array("q")
        self.shift = max(20, int(n_jobs).bit_length())
        self.mask = (1 << self.shift) - 1
        self._units_of = units_of

    def __len__(self) -> int:
        return len(self.keys)

    def insert(self, job: int, est_end: int, units: int) -> None:
        key = (est_end << self.shift) | job
        pos = bisect_left(self.keys, key)
        self.keys.insert(pos, key)
        self.ends.insert(pos, est_end)
        self.units.insert(pos, units)

    def remove(self, job: int, est_end: int) -> None:
        pos = bisect_left(self.keys, (est_end << self.shift) | job)
        del self.keys[pos], self.ends[pos], self.units[pos]

    def count_ending_by(self, t: int) -> int:
        """How many running jobs have an estimated end at or before ``t``."""
        return bisect_right(self.ends, t)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(jobs, units, est_end) in estimated-end order (new arrays)."""
        return _np(self.keys) & self.mask, _np(self.units), _np(self.ends)

    def first_end(self) -> int | None:
        ends = self.ends
        return ends[0] if ends else None
