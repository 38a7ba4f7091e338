"""Node-level backfilling benchmark: EASY and conservative on a Eurora-like instance.

For every dispatcher it simulates ``eurora_instance(JOBS, WINDOW, ARRIVAL, seed=SEED)``
on ``eurora_platform()`` (64 nodes; cores, GPUs, MICs, memory per unit) in a fresh
process and prints the simulation's wall seconds (the ``run()`` call only), jobs/s,
the child's peak RSS (``wait4``'s rusage) and the SHA-256 prefix of the schedule (start,
end and allocation of every job). Each case runs ``--repeat`` times (default 2): the
schedules must be identical, and the fastest wall time is reported.

``--engine`` picks the engine (``auto``, the default: the native core when it can run
the case, else the Python engine; ``native``: an error when it cannot; ``python``); the
engine that ran is printed. ``--src DIR`` runs the children on another source tree
(``PYTHONPATH=DIR``), e.g. a checkout of an older commit (one without the native
engine runs the Python engine), to compare before and after.

Usage::

    python benchmarks/bench_backfill_nodes.py [--dispatcher easy conservative]
        [--jobs 1000] [--window 1800] [--arrival uniform] [--seed 0] [--repeat 2]
        [--engine auto|native|python] [--src ../old/src]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import hashlib, json, sys, time
from dispatchlab import Simulation
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power.eurora_synth import eurora_instance

disp, n, window, arrival, seed, engine = sys.argv[1:7]
jobs = eurora_instance(int(n), int(window), arrival, seed=int(seed))
platform, dispatcher = eurora_platform(), make_dispatcher(disp)
try:
    from dispatchlab.sim.native import NativeSimulation, native_reason
except ImportError:  # a source tree without the native engine
    NativeSimulation, reason = None, "no native engine in this source tree"
else:
    reason = native_reason(platform, jobs, dispatcher) if engine != "python" else "python"
if reason is None:
    sim = NativeSimulation(platform, jobs, dispatcher)
elif engine == "native":
    sys.exit(f"the native engine cannot run this: {reason}")
else:
    sim = Simulation(platform, jobs, dispatcher)
t0 = time.perf_counter()
r = sim.run()
wall = time.perf_counter() - t0
h = hashlib.sha256()
h.update(repr((r.start.tolist(), r.end.tolist())).encode())
for j in sorted(r.allocations):
    a = r.allocations[j]
    h.update(repr((j, a.nodes.tolist(), a.counts.tolist())).encode())
print(json.dumps({"wall": wall, "jobs": len(r.start), "sha": h.hexdigest()[:12],
                  "engine": getattr(r, "engine", "python")}))
"""


def run_once(disp: str, args: argparse.Namespace) -> dict:
    env = dict(os.environ)
    if args.src:
        env["PYTHONPATH"] = os.path.abspath(args.src)
    cmd = [sys.executable, "-c", CHILD, disp, str(args.jobs), str(args.window),
           args.arrival, str(args.seed), args.engine]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"{disp} failed ({status}):\n{err}")
    row = json.loads(out.strip().splitlines()[-1])
    row["rss_mb"] = usage.ru_maxrss / 1024
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dispatcher", nargs="+", default=["easy", "conservative"])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--window", type=int, default=1800)
    parser.add_argument("--arrival", default="uniform")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs per case (>= 2: the schedules must be identical)")
    parser.add_argument("--engine", choices=("auto", "native", "python"), default="auto",
                        help="the engine (auto: native when it can run the case)")
    parser.add_argument("--src", default=None, help="source tree to run (PYTHONPATH)")
    args = parser.parse_args()
    print(f"eurora_instance({args.jobs}, {args.window}, {args.arrival!r}, "
          f"seed={args.seed}) on eurora_platform()"
          + (f"  [src: {args.src}]" if args.src else ""))
    print(f"{'dispatcher':<14} {'engine':<7} {'jobs':>6} {'wall s':>8} {'jobs/s':>9} "
          f"{'RSS MB':>8} {'schedule sha':>13}")
    for disp in args.dispatcher:
        t0 = time.perf_counter()
        runs = [run_once(disp, args) for _ in range(max(1, args.repeat))]
        shas = {r["sha"] for r in runs}
        if len(shas) != 1:
            raise SystemExit(f"{disp}: runs gave different schedules: {sorted(shas)}")
        best = min(runs, key=lambda r: r["wall"])
        rss = max(r["rss_mb"] for r in runs)
        print(f"{disp:<14} {best['engine']:<7} {best['jobs']:>6} {best['wall']:>8.2f} "
              f"{best['jobs'] / best['wall']:>9.1f} {rss:>8.1f} {best['sha']:>13}"
              f"   ({len(runs)} runs, {time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
