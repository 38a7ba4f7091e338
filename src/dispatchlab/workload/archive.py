"""What a Parallel Workloads Archive header says about the log itself: how many jobs
the archive's cleaning removed, the names of its queues and partitions, and the
scheduler the site ran.

Cleaned archive logs (``*-cln.swf``) had jobs removed (flurries of one user, jobs
before a date): CEA-Curie's cleaned log keeps 312,826 of 773,138 jobs. A simulation of
such a log does not see the removed jobs, yet they shaped the waits the log recorded.
The header says what was removed in its ``; Note: THIS IS A CLEANED VERSION OF THE
LOG!`` block, one filter a line ending ``(N jobs removed)``; :func:`archive_cleaning`
reads it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ArchiveCleaning", "archive_cleaning", "header_names", "header_scheduler",
           "percent"]

_REMOVED = re.compile(r"\((\d[\d,]*)\s+jobs?\s+removed\)", re.IGNORECASE)
_MAX_JOBS = re.compile(r"^;\s*MaxJobs:\s*(\d+)", re.IGNORECASE)
_SCHEDULER = re.compile(r"^;\s*Note:\s*(?:Scheduler (?:is|was)\s+|uses (?:the )?)(.*)$",
                        re.IGNORECASE)


def percent(share: float) -> str:
    """``share`` (0-1) in percent for a line of text: one decimal, two below 1 %
    (``59.5``, ``0.05``), so a small removed share does not read as 0."""
    value = 100 * share
    return f"{value:.2f}" if 0 < value < 1 else f"{value:.1f}"


@dataclass(frozen=True)
class ArchiveCleaning:
    """How much of the original log a trace file keeps.

    ``kept`` is the number of job records in the file; ``removed`` the number the
    archive's cleaning removed (None: unknown), ``source`` says where that number
    comes from (``"header notes"``: the sum of the cleaned-version notes;
    ``"uncleaned"``: the header says the log was not cleaned, or its MaxJobs equals
    the records read; ``"unknown"``: neither)."""

    kept: int
    removed: int | None
    source: str

    @property
    def total(self) -> int | None:
        """The jobs of the original log (None: unknown)."""
        return None if self.removed is None else self.kept + self.removed

    @property
    def removed_share(self) -> float | None:
        """The share (0-1) of the original log's jobs removed (None: unknown)."""
        total = self.total
        return None if total is None or total == 0 else (self.removed or 0) / total

    def describe(self) -> str:
        """One line: ``archive cleaning removed 460,312 of 773,138 jobs (59.5 %)``,
        ``not cleaned by the archive`` or ``jobs removed by the archive's cleaning:
        unknown``."""
        if self.removed is None:
            return "jobs removed by the archive's cleaning: unknown"
        if self.removed == 0:
            return "not cleaned by the archive (no job removed)"
        return (f"archive cleaning removed {self.removed:,} of {self.total:,} jobs "
                f"({percent(self.removed_share or 0)} %)")

    def as_dict(self) -> dict[str, Any]:
        return {"kept": self.kept, "removed": self.removed, "total": self.total,
                "removed_share": self.removed_share, "source": self.source}


def archive_cleaning(header_lines: Sequence[str], kept: int) -> ArchiveCleaning:
    """What the archive's cleaning removed, from the header comment lines of an SWF
    file (``TraceInfo.header_lines``) and ``kept``, the job records read.

    The removed count is the sum of the ``(N jobs removed)`` notes after the
    ``CLEANED VERSION`` line. Without such a note, a header that says
    ``uncleaned`` or whose ``MaxJobs`` equals ``kept`` means nothing was removed;
    otherwise the count is unknown (a log with no archive header, e.g. a site's own
    sacct export, says nothing of its own history)."""
    cleaned = False
    removed = 0
    max_jobs = None
    uncleaned = False
    for line in header_lines:
        if "CLEANED VERSION" in line.upper():
            cleaned = True
        if cleaned:
            m = _REMOVED.search(line)
            if m:
                removed += int(m.group(1).replace(",", ""))
        m = _MAX_JOBS.match(line.strip())
        if m:
            max_jobs = int(m.group(1))
        if "uncleaned" in line.lower():
            uncleaned = True
    if cleaned and removed:
        return ArchiveCleaning(kept, removed, "header notes")
    if uncleaned or (max_jobs is not None and max_jobs == kept and not cleaned):
        return ArchiveCleaning(kept, 0, "uncleaned")
    return ArchiveCleaning(kept, None, "unknown")


def header_names(header_lines: Sequence[str], key: str) -> dict[int, str]:
    """The names an SWF header gives to queue or partition numbers: ``key`` is
    ``"Queue"`` or ``"Partition"``, read from lines ``; Queue: 3  normal`` (number,
    then the name; a leading ``-`` and anything after a `` - `` are dropped, as in
    ``; Queue: 1 - Normal jobs queue - normal priority``). A number without a name
    is left out (its label is the number)."""
    pattern = re.compile(rf"^;\s*{re.escape(key)}:\s*(-?\d+)\s*(.*)$", re.IGNORECASE)
    names: dict[int, str] = {}
    for line in header_lines:
        m = pattern.match(line.strip())
        if not m:
            continue
        name = m.group(2).strip()
        if name.startswith("- "):
            name = name[2:]
        name = name.split(" - ", 1)[0].strip()
        if name:
            names[int(m.group(1))] = name
    return names


def header_scheduler(header_lines: Sequence[str]) -> str | None:
    """The scheduler the header names (``; Note: Scheduler is Slurm (...)``, ``; Note:
    uses the EASY scheduler``, ``; Note: uses MAUI scheduler``), as written; None when
    it names none."""
    for line in header_lines:
        m = _SCHEDULER.match(line.strip())
        if m:
            return m.group(1).strip()
    return None
