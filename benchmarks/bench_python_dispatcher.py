"""A dispatcher written in Python on both engines: the README's own example.

Runs, as fresh processes, ``python -m dispatchlab.cli simulate TRACE --dispatcher
examples/custom_dispatcher.py:WidestFirst --engine ENGINE --out TMP`` (the one small
class of the README and of docs/tutorials/extending.md; ``--dispatcher`` takes any other
``file.py:Class`` or ``module:Class``) on the native engine (the core runs the engine
loop and calls the class through the View, ``dispatchlab.sim.native_view``) and on the
Python engine, alternating them, ``--repeat`` times each (default 3), and prints for
each engine the best whole-process wall time, the engine's own simulate seconds (from
``summary.json``), the dispatch calls and their total time (the dispatcher's own
share, the same on both engines), and the ratio python / native. The schedules must
agree (the jobs, the mean wait to the second, the dispatch calls) and each run must
record the engine asked for: otherwise the script exits with status 1. The load
average is printed before and after (the machine may be shared).

Usage::

    python benchmarks/bench_python_dispatcher.py [TRACE ...] [--repeat 3]
        [--dispatcher examples/custom_dispatcher.py:WidestFirst] [--jobs 0:20000]

Without traces: KTH-SP2, SDSC-SP2 and HPC2N from the traces folder
(``$DISPATCHLAB_TRACES``, see docs/explanation/references.md).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dispatchlab.core.references import traces_dir

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = str(ROOT / "examples" / "custom_dispatcher.py") + ":WidestFirst"
DEFAULT_TRACES = ("KTH-SP2-1996-2.1-cln.swf.gz", "SDSC-SP2-1998-4.2-cln.swf.gz",
                  "HPC2N-2002-2.2-cln.swf.gz")
ENGINES = ("native", "python")


def run(trace: str, engine: str, dispatcher: str, jobs: str | None) -> dict:
    """One ``dispatchlab simulate`` process: its summary's jobs, mean wait, dispatch
    calls and times, simulate seconds and engine, and ``wall`` seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "dispatchlab.cli", "simulate", trace, "--dispatcher",
               dispatcher, "--engine", engine, "--out", tmp]
        if jobs:
            cmd += ["--jobs", jobs]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"dispatchlab failed ({proc.returncode}) on {trace} "
                             f"({engine}): {proc.stderr.strip()}")
        s = json.loads((Path(tmp) / "summary.json").read_text())
    calls = s.get("decision_calls")
    return {"wall": wall, "jobs": s["jobs"], "mean_wait": f"{s['mean_wait']:.0f}",
            "calls": calls, "engine": s["engine"],
            "decide": s.get("total_decision_time") or 0.0,
            "simulate": float(s["simulate_seconds"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="*", help="SWF traces (default: the three above)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (best kept)")
    parser.add_argument("--dispatcher", default=EXAMPLE, help="file.py:Class or "
                        "module:Class (default: the README's WidestFirst)")
    parser.add_argument("--jobs", default=None, help="simulate's --jobs range")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    traces = args.traces or [str(traces_dir(ROOT) / t) for t in DEFAULT_TRACES]
    print(f"load average before: {os.getloadavg()[0]:.2f}; best of {args.repeat}; "
          f"{args.dispatcher}")
    print(f"{'trace':<30} {'engine':<7} {'jobs':>8} {'mean wait':>10} {'calls':>8} "
          f"{'wall s':>7} {'sim s':>7} {'decide s':>8} {'python/native':>13}")
    bad = []
    for trace in traces:
        best: dict[str, dict] = {}
        for _ in range(args.repeat):
            for engine in ENGINES:
                r = run(trace, engine, args.dispatcher, args.jobs)
                if r["engine"] != engine:
                    raise SystemExit(f"{trace}: --engine {engine} ran {r['engine']}")
                if engine not in best or r["wall"] < best[engine]["wall"]:
                    best[engine] = r
        n, p = best["native"], best["python"]
        same = all(n[k] == p[k] for k in ("jobs", "mean_wait", "calls"))
        for engine in ENGINES:
            r = best[engine]
            ratio = f"{p['wall'] / n['wall']:.2f}x" if engine == "native" else ""
            print(f"{Path(trace).name:<30} {engine:<7} {r['jobs']:>8,} {r['mean_wait']:>10} "
                  f"{r['calls'] or 0:>8,} {r['wall']:>7.2f} {r['simulate']:>7.2f} "
                  f"{r['decide']:>8.2f} {ratio:>13}{'' if same else '  MISMATCH'}",
                  flush=True)
        if not same:
            bad.append(Path(trace).name)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if bad:
        print(f"error: the engines' schedules differ on {', '.join(bad)}", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
