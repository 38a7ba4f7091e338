"""Shared pieces of the campaign tests: synthetic traces, campaign files, DB readers."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import duckdb

from dispatchlab.metrics.keys import WALL_CLOCK
from dispatchlab.workload.swf import write_swf
from dispatchlab.workload.synthetic import generate_synthetic

#: Summary keys measured on the wall clock: they differ between executions.
WALL_CLOCK_KEYS = {"simulate_seconds", "wall_seconds", *WALL_CLOCK}


def synthetic_trace(folder: Path, n_jobs: int, seed: int = 1, cores: int = 256) -> Path:
    path = folder / f"syn-{n_jobs}-{seed}.swf"
    if not path.exists():
        write_swf(generate_synthetic(n_jobs, cores=cores, seed=seed), path)
    return path


def write_campaign(folder: Path, text: str, name: str = "campaign.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def stored_runs(db: Path) -> dict[str, dict[str, Any]]:
    """run_key -> row dict of the runs table (waits for a writer to let go)."""
    con = connect(db)
    try:
        cur = con.execute("SELECT * FROM runs")
        cols = [d[0] for d in cur.description]
        return {row[0]: dict(zip(cols, row, strict=True)) for row in cur.fetchall()}
    finally:
        con.close()


def connect(db: Path, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            return duckdb.connect(str(db), read_only=True)
        except duckdb.IOException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def comparable(row: dict[str, Any]) -> dict[str, Any]:
    """A runs row without wall-clock, memory and execution-place fields, summary parsed."""
    out = {k: v for k, v in row.items()
           if k not in WALL_CLOCK_KEYS | {"finished_at", "worker", "attempts", "summary",
                                          "peak_rss_mb"}}
    summary = json.loads(row["summary"]) if row["summary"] else None
    if summary is not None:
        out["summary"] = {k: v for k, v in summary.items() if k not in WALL_CLOCK_KEYS}
    return out


def job_digest(db: Path) -> dict[str, tuple]:
    """Per run: a digest of its jobs rows (count and sums of times) and series rows."""
    con = connect(db)
    try:
        jobs = con.execute(
            "SELECT run_key, count(*), sum(start_time), sum(end_time), sum(estimate), "
            "sum(hash(job_id, start_time, end_time, status)) FROM jobs GROUP BY run_key"
        ).fetchall()
        series = con.execute(
            "SELECT run_key, count(*), sum(hash(name, time, value)) FROM series "
            "GROUP BY run_key").fetchall()
    finally:
        con.close()
    s = {r[0]: r[1:] for r in series}
    return {r[0]: (*r[1:], *s.get(r[0], ())) for r in jobs}


#: An own dispatcher: EASY with the queue order of its own module ``helpers`` and a
#: ``seed`` parameter the campaign fills in.
MINE = '''
"""EASY in the order helpers.ORDER."""
import helpers
from dispatchlab.dispatch import EASY


class Mine(EASY):
    """EASY with an own queue order."""

    def __init__(self, reservations: int = 1, allocator: str = "first-fit",
                 seed: int = 0):
        super().__init__(order=helpers.ORDER, reservations=reservations,
                         allocator=allocator)
        self.seed = seed
'''

#: An own dispatcher that reads its queue order from a declared input file.
FROM_FILE = '''
from pathlib import Path

from dispatchlab.dispatch import EASY

HERE = Path(__file__).resolve().parent


class FromFile(EASY):
    """EASY in the order written in order.txt."""

    input_files = ("order.txt",)

    def __init__(self, reservations: int = 1):
        order = (HERE / "order.txt").read_text().strip()
        super().__init__(order=order, reservations=reservations)
'''


def own_dispatchers(folder: Path, order: str = "fifo") -> dict[str, Path]:
    """Write ``mine.py`` (+ ``helpers.py``) and ``from_file.py`` (+ ``order.txt``)."""
    files = {"mine": folder / "mine.py", "helpers": folder / "helpers.py",
             "from_file": folder / "from_file.py", "order": folder / "order.txt"}
    files["mine"].write_text(MINE)
    files["helpers"].write_text(f"ORDER = {order!r}\n")
    files["from_file"].write_text(FROM_FILE)
    files["order"].write_text(f"{order}\n")
    return files
