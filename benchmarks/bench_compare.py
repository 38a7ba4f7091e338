"""``dispatchlab compare`` benchmark: the whole command as a process, repeated.

Runs ``dispatchlab compare TRACE --dispatcher easy --dispatcher conservative
--dispatcher sjf --dispatcher easy:order=sjf --slices K --slice-jobs N --out TMP``
``--repeat`` times (default 5), prints each wall time, the median, jobs simulated per
second (slices x (lead-in + N) x dispatchers / median wall), the peak RSS of the
command's process tree (``wait4`` of the command: its own RSS; workers are reported by
their own ``ru_maxrss`` through RUSAGE_CHILDREN of this process), and checks that the
statistics in ``compare.json`` are identical across repetitions (determinism: the
results must not depend on timing or on which worker ran what).

Target (issue "trustworthy comparisons"): 4 dispatchers x 10 slices of 5,000 jobs in
under 45 s (median of 5) on 2 cores.

Usage::

    python benchmarks/bench_compare.py $DISPATCHLAB_TRACES/CTC-SP2-1996-3.1-cln.swf.gz
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DISPATCHERS = ("easy", "conservative", "sjf", "easy:order=sjf")


def _stable(data: dict) -> str:
    """compare.json without the timing-dependent values."""
    timing = ("simulate_seconds", "decision", "wall_seconds")
    runs = [{k: v for k, v in r["summary"].items() if not any(t in k for t in timing)}
            for r in data["runs"]]
    return json.dumps(runs, sort_keys=True)


def run_once(trace: str, slices: int, jobs: int, workers: int | None) -> tuple[float, float,
                                                                                 str]:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "dispatchlab.cli", "compare", trace, "--slices",
               str(slices), "--slice-jobs", str(jobs), "--out", tmp]
        for d in DISPATCHERS:
            cmd += ["--dispatcher", d]
        if workers is not None:
            cmd += ["--workers", str(workers)]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        if status != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode()}")
        data = json.loads((Path(tmp) / "compare.json").read_text())
    return wall, usage.ru_maxrss / 1024, _stable(data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--slices", type=int, default=10)
    parser.add_argument("--slice-jobs", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    walls, rss, outputs = [], [], set()
    for i in range(args.repeat):
        wall, mb, stable = run_once(args.trace, args.slices, args.slice_jobs, args.workers)
        walls.append(wall)
        rss.append(mb)
        outputs.add(stable)
        print(f"run {i + 1}: {wall:.2f} s, coordinator peak RSS {mb:.0f} MB", flush=True)
    if len(outputs) != 1:
        raise SystemExit("NOT DETERMINISTIC: the run summaries differ between repetitions")
    med = statistics.median(walls)
    lead = args.slice_jobs // 10
    simulated = args.slices * (lead + args.slice_jobs) * len(DISPATCHERS)
    workers_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{Path(args.trace).name}: {len(DISPATCHERS)} dispatchers x {args.slices} slices "
          f"of {args.slice_jobs:,} jobs: median {med:.2f} s (min {min(walls):.2f}, max "
          f"{max(walls):.2f}), {simulated / med:,.0f} jobs simulated/s, peak RSS "
          f"coordinator {max(rss):.0f} MB, largest child {workers_mb:.0f} MB; identical "
          f"results in all {args.repeat} runs")


if __name__ == "__main__":
    main()
