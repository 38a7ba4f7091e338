"""The compiled EASY baseline (``benchmarks/minimal_easy``, run by
``benchmarks/bench_native.py``) keeps reproducing ``dispatchlab simulate --dispatcher
easy``: the same jobs, rejected jobs and mean wait (one decimal) on KTH-SP2 and on
seeded small traces full of edge cases, so the speed baseline cannot drift silently."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench() -> ModuleType:  # the benchmark script as a module
    path = ROOT / "benchmarks" / "bench_native.py"
    spec = importlib.util.spec_from_file_location("bench_native", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def binary(bench: ModuleType) -> Path:
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    return bench.build()


def _trace(path: Path, seed: int) -> Path:
    """A small SWF trace drawn with ``seed``: bursts of equal submit times, 0-second
    jobs, requested time 0, jobs running past their requested time, requested time -1 (fallback),
    processors from field 5 when field 8 is -1, jobs dropped at load (no processors,
    no run time) or wider than the machine, integral decimals, comments between jobs."""
    rng = np.random.default_rng(seed)
    lines = ["; Version: 2.2", "; MaxProcs: 16"]
    if seed % 2:
        lines.append("; MaxRuntime: 900")
    t = 0
    for i in range(1, 401):
        t += int(rng.choice([0, 0, 1, 5, 30, 200]))
        req_time = 0 if rng.random() < 0.05 else int(rng.integers(1, 600))
        over = int(rng.integers(0, 2 * req_time + 1))  # past the request about half the time
        run = int(rng.choice([0, req_time, rng.integers(0, 600), over]))
        procs = int(rng.choice([1, 2, 4, 8, 16, 3, 5]))
        alloc, req = (procs, -1) if rng.random() < 0.2 else (-1, procs)
        if rng.random() < 0.02:
            req = 17  # wider than the machine: rejected
        if rng.random() < 0.02:
            req, alloc = 0, -1  # no processors: dropped
        if rng.random() < 0.02:
            run = -1  # no run time: dropped
        req_s = "-1" if rng.random() < 0.05 else (
            f"{req_time}.00" if rng.random() < 0.1 else str(req_time))
        if rng.random() < 0.02:
            lines.append(";   a comment between jobs")
        lines.append(f"{i} {t} -1 {run} {alloc} -1 -1 {req} {req_s} -1 1 1 1 1 1 -1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_same_jobs_and_mean_wait_on_edge_cases(bench, binary, tmp_path: Path,
                                               seed: int) -> None:
    trace = _trace(tmp_path / f"t{seed}.swf", seed)
    rows = bench.compare(binary, str(trace), 1, ("native", "python"))
    assert [(r["engine"], r["dispatchlab"]["engine"]) for r in rows] == [
        ("native", "native"), ("python", "python")]
    for row in rows:
        m, d = row["minimal"], row["dispatchlab"]
        assert row["equal"], (row["engine"], m, d)
        assert m["jobs"] > 300 and m["rejected"] > 0
        assert float(m["mean_wait"]) > 0  # the machine is contended: jobs do wait


def test_same_mean_wait_on_kth(bench, binary, kth_trace: Path) -> None:
    for row in bench.compare(binary, str(kth_trace), 1, ("native", "python")):
        m, d = row["minimal"], row["dispatchlab"]
        assert row["equal"], (row["engine"], m, d)
        assert m["jobs"] == d["jobs"] == 28475
