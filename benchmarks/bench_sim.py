"""End-to-end simulation benchmark: the whole ``dispatchlab simulate`` command as a process.

For every trace x dispatcher it runs ``dispatchlab simulate TRACE --dispatcher D --out
TMP`` in a fresh process (start-up, load, simulate, metrics and writing outputs all
count) and prints jobs, wall seconds, jobs/s, peak RSS (from ``wait4``'s rusage of that
child), the SHA-256 prefix of ``jobs.parquet`` and the engine that ran (from
``summary.json``; ``--extra "--engine python"`` forces the Python engine). With
``--repeat 2`` (or more) each run is repeated and the outputs must be byte-identical
(determinism check); the fastest wall time is reported, and beside it its ratio to the
first dispatcher's (repeats alternate between the dispatchers, so a slow spell of the
machine hits all alike).

Usage::

    python benchmarks/bench_sim.py $DISPATCHLAB_TRACES/KTH-SP2-1996-2.1-cln.swf.gz \\
        --dispatcher fifo easy conservative [--repeat 2] [--extra "--predictor real"]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(trace: str, dispatcher: str, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "dispatchlab.cli", "simulate", trace,
               "--dispatcher", dispatcher, "--out", tmp, *extra]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        if status != 0:
            raise SystemExit(f"failed ({status}): {shlex.join(cmd)}\n{stderr}")
        summary = json.loads((Path(tmp) / "summary.json").read_text())
        digest = hashlib.sha256((Path(tmp) / "jobs.parquet").read_bytes()).hexdigest()
    return {"jobs": summary["total_jobs"], "wall": wall, "rss_mb": usage.ru_maxrss / 1024,
            "sha": digest[:12], "mean_wait": summary["mean_wait"],
            "simulate_s": summary["simulate_seconds"], "events": summary["events"],
            "engine": summary.get("engine", "python")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--dispatcher", nargs="+", default=["fifo", "easy", "conservative"])
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (>= 2: check "
                        "that the outputs are byte-identical)")
    parser.add_argument("--extra", default="", help="extra simulate options, quoted")
    args = parser.parse_args()
    extra = shlex.split(args.extra)
    print(f"{'trace':<34} {'dispatcher':<13} {'jobs':>8} {'wall s':>7} {'sim s':>7} "
          f"{'jobs/s':>9} {'RSS MB':>7} {'mean wait':>12} {'parquet sha':>13} "
          f"{'wall/1st':>7} {'engine':<7}")
    for trace in args.traces:
        # repeats go round the dispatchers (a, b, a, b, ...), so that a slow spell of a
        # shared machine hits every dispatcher of the trace alike and the ratios hold
        runs: dict[str, list[dict]] = {d: [] for d in args.dispatcher}
        for _ in range(args.repeat):
            for disp in args.dispatcher:
                runs[disp].append(run_once(trace, disp, extra))
        first = None
        for disp in args.dispatcher:
            if len({(r["sha"], r["events"]) for r in runs[disp]}) != 1:
                raise SystemExit(f"NOT DETERMINISTIC: {trace} {disp}: "
                                 f"{[r['sha'] for r in runs[disp]]}")
            best = min(runs[disp], key=lambda r: r["wall"])
            rss = max(r["rss_mb"] for r in runs[disp])
            first = first or best
            ratio = f"x{best['wall'] / first['wall']:.2f}" if best is not first else ""
            print(f"{Path(trace).name[:34]:<34} {disp:<13} {best['jobs']:>8,} "
                  f"{best['wall']:>7.2f} {best['simulate_s']:>7.2f} "
                  f"{best['jobs'] / best['wall']:>9,.0f} {rss:>7.0f} "
                  f"{best['mean_wait']:>12,.1f} {best['sha']:>13} {ratio:>7} "
                  f"{best['engine']:<7}", flush=True)


if __name__ == "__main__":
    main()
