"""Golden schedules: fixed traces x dispatchers x platforms and the SHA-256 of their
per-job output table (the content of ``jobs.parquet``).

Recorded before the issue-8 design refactor (named view columns, the shared release
profile, orderings as components) to prove it changed no schedule. The hash covers the
table's content, column by column (names, types and values), not the Parquet file's
bytes: those also hold the writer's version, which would make the hashes depend on the
installed pyarrow.

Each case also records the number of engine events and dispatch passes of its run
(``SimulationResult.events`` / ``.passes``), taken from the same simulation as the hash:
a refactor that keeps the schedule but adds or drops events or passes shows there.

``python tests/golden.py`` prints the current hashes and counts (to re-record them on
purpose).
"""

from __future__ import annotations

import hashlib
import sys
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from dispatchlab.core.references import traces_dir
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform import NodeType, Platform
from dispatchlab.platform.files import trace_platform
from dispatchlab.predict import make_predictor
from dispatchlab.sim.engine import Simulation
from dispatchlab.sim.native import native_reason, simulate_native
from dispatchlab.workload.jobs import JobTable

TRACES = traces_dir(Path(__file__).resolve().parents[1])


def table_digest(table) -> str:
    """SHA-256 over an Arrow table's columns: name, type and values of each, in order."""
    h = hashlib.sha256()
    for name, col in zip(table.column_names, table.columns, strict=True):
        h.update(name.encode() + b"\0" + str(col.type).encode() + b"\0")
        h.update(repr(col.to_pylist()).encode())
    return h.hexdigest()


def synthetic_nodes(seed: int = 0, n: int = 250) -> tuple[Platform, JobTable]:
    """A contended multi-resource workload on 3 node types (no shared data needed)."""
    rng = np.random.default_rng(seed)
    platform = Platform((
        NodeType("small", 4, {"core": 8, "gpu": 0, "mem": 32}),
        NodeType("gpu", 2, {"core": 16, "gpu": 4, "mem": 64}),
        NodeType("big", 2, {"core": 32, "gpu": 0, "mem": 256}),
    ), name="golden-3types")
    submit = np.sort(rng.integers(0, n * 60, size=n) // 10 * 10)
    units = rng.integers(1, 9, size=n)
    cores = rng.choice([1, 2, 4, 8], size=n)
    gpus = np.where(rng.random(n) < 0.15, rng.integers(1, 3, size=n), 0)
    mem = rng.choice([1, 2, 4, 16], size=n)
    run = rng.integers(0, 900, size=n)
    requested = np.ceil(run * rng.choice([0.8, 1.0, 1.5, 3.0], size=n)).astype(np.int64)
    jobs = JobTable.from_arrays(submit=submit, run=run, units=units, requested_time=requested,
                                user=rng.integers(1, 6, size=n),
                                resources={"core": cores, "gpu": gpus, "mem": mem})
    return platform, jobs


DISPATCHERS = {
    "fifo": ("fifo", {}),
    "sjf": ("sjf", {}),
    "sjf-skip": ("sjf", {"skip": True}),
    "ljf-skip": ("ljf", {"skip": True}),
    "easy": ("easy", {}),
    "easy-sjf": ("easy", {"order": "sjf"}),
    "easy-k3": ("easy", {"reservations": 3}),
    "conservative": ("conservative", {}),
    # CP (deterministic time limits, one worker): the authors' CPH has no feedback round
    # (the default), the feedback of ours is a parameter
    "hcp": ("hcp", {}),
    "hcp-feedback3": ("hcp", {"feedback_rounds": 3}),
}

#: Dispatchers run on the synthetic workload only (a CP model per pass is slow on KTH).
SYNTHETIC_ONLY = ("hcp", "hcp-feedback3")


def cases() -> dict[str, tuple]:
    """name -> (workload builder, dispatcher key, dispatcher params, predictor)."""
    out: dict[str, tuple] = {}
    for d in DISPATCHERS:
        out[f"syn-nodes/{d}"] = ("synthetic", d, "walltime")
        if d in SYNTHETIC_ONLY:
            continue
        out[f"syn-bestfit/{d}"] = ("synthetic-bestfit", d, "walltime")
        out[f"kth-pooled/{d}"] = ("kth-pooled", d, "walltime")
        out[f"kth-nodes/{d}"] = ("kth-nodes", d, "walltime")
    for d in ("fifo", "easy", "conservative"):
        out[f"alea-nodes/{d}"] = ("alea", d, "walltime")
    out["kth-pooled/easy+hist"] = ("kth-pooled", "easy", "history")
    out["kth-pooled/easy-sjf+hist"] = ("kth-pooled", "easy-sjf", "history")
    return out


def needs_shared(workload: str) -> bool:
    return workload in ("kth-pooled", "kth-nodes", "alea")


@cache
def workload(name: str) -> tuple[Platform, JobTable, dict]:
    from dispatchlab.workload.load import load_trace

    extra: dict = {}
    if name.startswith("synthetic"):
        platform, jobs = synthetic_nodes()
        if name.endswith("bestfit"):
            extra = {"allocator": "best-fit"}
        return platform, jobs, extra
    if name.startswith("kth"):
        if name == "kth-pooled":
            jobs = load_trace(TRACES / "KTH-SP2-1996-2.1-cln.swf.gz", jobs=(0, 3000))
            return Platform.pooled(100), jobs, extra
        jobs = load_trace(TRACES / "KTH-SP2-1996-2.1-cln.swf.gz", jobs=(0, 1200))
        # 25 nodes of 4 cores plus a resource no job asks for: node-level placement
        return Platform.homogeneous(25, 4, mem=1), jobs, extra
    if name == "alea":
        jobs = load_trace(TRACES / "alea-wagap-2013.swf.gz", jobs=(0, 1500))
        return trace_platform(jobs.info), jobs, extra
    raise KeyError(name)


class GoldenRun(NamedTuple):
    """What one golden case records: the schedule's digest and the run's counters."""

    digest: str
    events: int
    passes: int


def case_run(name: str) -> tuple:
    """Case ``name``'s ``(platform, jobs, dispatcher, predictor)``."""
    wl, d, pred = cases()[name]
    platform, jobs, extra = workload(wl)
    disp_name, params = DISPATCHERS[d]
    params = dict(params)
    if extra and not platform.is_pooled:
        params.update(extra)
    return platform, jobs, make_dispatcher(disp_name, **params), make_predictor(pred)


def native_case_reason(name: str) -> str | None:
    """Why case ``name`` cannot run on the native engine (None: it can;
    :func:`dispatchlab.sim.native.native_reason`)."""
    return native_reason(*case_run(name))


@cache
def golden_run(name: str, engine: str = "python") -> GoldenRun:
    """Simulate case ``name`` once on ``engine`` (``python`` or ``native``; cached: the
    hash and count tests share the run)."""
    platform, jobs, dispatcher, predictor = case_run(name)
    if engine == "native":
        result = simulate_native(platform, jobs, dispatcher, predictor)
    else:
        result = Simulation(platform, jobs, dispatcher, predictor).run()
    table = result.to_arrow()
    # the schedule: the columns computed from it (slowdowns, which jobs are measured)
    # came later and are left out, so the recorded hashes still apply
    digest = table_digest(table.drop_columns([c for c in DERIVED if c in table.column_names]))
    return GoldenRun(digest, int(result.events), int(result.passes))


def run_case(name: str) -> str:
    """The SHA-256 of case ``name``'s schedule."""
    return golden_run(name).digest


#: Columns of the output table derived from the schedule (not hashed).
DERIVED = ("slowdown", "bounded_slowdown", "measured", "hot_start")


if __name__ == "__main__":
    import time

    counts: dict[str, tuple[int, int]] = {}
    for name in cases():
        t = time.perf_counter()
        run = golden_run(name)
        counts[name] = (run.events, run.passes)
        print(f'    "{name}": "{run.digest}",  # {time.perf_counter() - t:.1f}s',
              file=sys.stdout, flush=True)
    print("\n# (events, passes)")
    for name, (events, passes) in counts.items():
        print(f'    "{name}": ({events}, {passes}),')
