"""Replay of a synthetic 1,000-node Slurm cluster under node-level EASY.

The cluster and its ``sacct`` export come from ``benchmarks/gen_slurm_cluster.py``
(seeded; ``--jobs``, ``--seed``, offered load 0.85, 20 % GPU jobs). Two modes:

* ``command`` (default): the whole command ``python -m dispatchlab.cli simulate
  jobs.sacct --platform P --dispatcher easy --out TMP`` in a fresh process (start-up,
  reading, simulation, metrics and outputs all count): wall seconds and the child's peak
  RSS (``wait4``'s rusage), best of ``--repeat`` (the ``jobs.parquet`` of every repeat
  must be byte-identical). ``--platform-format`` picks ``P``: ``slurm`` (``slurm.conf``,
  once the ``slurm.conf`` reader exists), ``toml`` (the same nodes as a platform TOML
  file, no partitions, weights or GPU type) or ``auto`` (``slurm`` when
  :mod:`dispatchlab.platform.slurmconf` is importable, else ``toml``). Before ``sacct``
  requests become per-unit requests, a ``sacct`` job asks for its CPUs as one-core units
  and nothing else (its GPUs and memory are ignored): the ``toml`` numbers are then a
  **lower bound** of the real replay's cost.
* ``emulated``: the same jobs with the requests the real replay will carry, built here
  from the generator's arrays (ours, by the rule of the mapping to come): a job that fits
  in one CPU node asks ``AllocCPUS`` one-core units of 1 core and its memory per core; a
  whole-node, exclusive or GPU job asks one unit per node of its per-node cores, memory
  and GPUs; every unit also asks 1 of its partition's internal resource (``@cpu``,
  ``@debug``, ``@gpu``: capacity 2**20 on the partition's nodes, 0 elsewhere), as
  partitions will be encoded. The simulation runs in a child process
  (``Simulation(...).run()`` only is timed; peak RSS of the whole child).

Usage::

    python benchmarks/bench_cluster.py [--jobs 100000] [--seed 0] [--repeat 1]
        [--mode command|emulated] [--platform-format auto|slurm|toml] [--dir DIR]

``--dir`` keeps the generated files there (default: a temporary folder, deleted).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_slurm_cluster as gen  # the generator beside this script

#: the child of ``--mode emulated``: argv = -, jobs, seed, this folder
EMULATED = r"""
import hashlib, json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[4])
import gen_slurm_cluster as gen
from dispatchlab import Simulation
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform.platform import NodeType, Platform
from dispatchlab.workload.jobs import JobTable

n, seed = int(sys.argv[2]), int(sys.argv[3])
j = gen.make_jobs(n, seed=seed)
big = 1 << 20
platform = Platform((
    NodeType("cn", gen.DEBUG_FIRST, {"core": gen.CPU_CORES, "gpu": 0, "mem": gen.CPU_MEM,
                                     "@cpu": big, "@debug": 0, "@gpu": 0}),
    NodeType("cn-debug", gen.DEBUG_NODES, {"core": gen.CPU_CORES, "gpu": 0,
                                           "mem": gen.CPU_MEM, "@cpu": big,
                                           "@debug": big, "@gpu": 0}),
    NodeType("gn", gen.GPU_NODES, {"core": gen.GPU_CORES, "gpu": gen.GPUS,
                                   "mem": gen.GPU_MEM, "@cpu": 0, "@debug": 0,
                                   "@gpu": big}),
), name="bench-emulated")
nodes, alloc, mem, gpus = j["nodes"], j["alloc_cpus"], j["mem"], j["gpus"]
node_shaped = (nodes > 1) | (gpus > 0) | (alloc == gen.CPU_CORES)
units = np.where(node_shaped, nodes, alloc)
res = {
    "core": np.where(node_shaped, alloc // nodes, 1),
    "gpu": gpus,
    "mem": np.where(node_shaped, -(-mem // nodes), -(-mem // alloc)),
}
for k, name in enumerate(("@cpu", "@debug", "@gpu")):
    res[name] = (j["part"] == k).astype(np.int64)
jobs = JobTable.from_arrays(submit=j["submit"] - j["submit"].min(), run=j["run"],
                            units=units, requested_time=j["limit_min"] * 60,
                            resources=res)
sim = Simulation(platform, jobs, make_dispatcher("easy"))
t0 = time.perf_counter()
r = sim.run()
wall = time.perf_counter() - t0
h = hashlib.sha256()
h.update(repr((r.start.tolist(), r.end.tolist())).encode())
wait = r.start - jobs["submit"]
print(json.dumps({"wall": wall, "jobs": len(r.start), "sha": h.hexdigest()[:12],
                  "mean_wait": float(wait[r.start >= 0].mean()),
                  "rejected": int((r.start < 0).sum())}))
"""


def _wait(proc: subprocess.Popen, cmd: list[str]) -> tuple[float, str]:
    out = proc.stdout.read().decode() if proc.stdout else ""
    err = proc.stderr.read().decode() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        raise SystemExit(f"failed ({status}): {shlex.join(cmd)}\n{err}")
    return usage.ru_maxrss / 1024, out


def run_command(sacct: Path, platform: Path) -> dict:
    """The whole ``simulate`` command in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "dispatchlab.cli", "simulate", str(sacct),
               "--platform", str(platform), "--dispatcher", "easy", "--out", tmp]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        rss, _ = _wait(proc, cmd)
        wall = time.perf_counter() - t0
        summary = json.loads((Path(tmp) / "summary.json").read_text())
        digest = hashlib.sha256((Path(tmp) / "jobs.parquet").read_bytes()).hexdigest()
    return {"jobs": summary["total_jobs"], "wall": wall, "rss_mb": rss,
            "sim_s": summary["simulate_seconds"], "mean_wait": summary["mean_wait"],
            "sha": digest[:12]}


def run_emulated(jobs: int, seed: int) -> dict:
    """The emulated requests' simulation in a fresh process (``run()`` timed)."""
    here = str(Path(__file__).resolve().parent)
    cmd = [sys.executable, "-c", EMULATED, "-", str(jobs), str(seed), here]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rss, out = _wait(proc, cmd)
    row = json.loads(out.strip().splitlines()[-1])
    row.update({"rss_mb": rss, "sim_s": row["wall"], "wall": time.perf_counter() - t0})
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs (best wall time; >= 2 also checks determinism)")
    parser.add_argument("--mode", choices=["command", "emulated"], default="command")
    parser.add_argument("--platform-format", choices=["auto", "slurm", "toml"],
                        default="auto")
    parser.add_argument("--dir", default=None, help="keep the generated files here")
    args = parser.parse_args()
    fmt = args.platform_format
    if fmt == "auto":
        fmt = ("slurm" if importlib.util.find_spec("dispatchlab.platform.slurmconf")
               else "toml")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.dir or tmp)
        t0 = time.perf_counter()
        w = gen.write_cluster(folder, args.jobs, args.seed, platform_format=fmt)
        sacct = Path(str(w["sacct"]))
        platform = Path(str(w["slurm.conf" if fmt == "slurm" else "toml"]))
        print(f"generated {args.jobs:,} jobs (seed {args.seed}, {w['gpu_jobs']:,} gpu) in "
              f"{time.perf_counter() - t0:.1f} s: {sacct.stat().st_size / 2**20:.0f} MiB; "
              f"offered load {w['load_cpu']:.3f} (cpu+debug) / {w['load_gpu']:.3f} (gpu)")
        if args.mode == "command":
            print(f"mode command: simulate jobs.sacct --platform {platform.name} "
                  "--dispatcher easy" + (" (one-core units: a lower bound)"
                                         if fmt == "toml" else ""))
        else:
            print("mode emulated: node-shaped and one-core units with memory, GPUs and "
                  "@partition resources; run() timed")
        print(f"{'run':>4} {'jobs':>8} {'wall s':>8} {'sim s':>8} {'peak MB':>8} "
              f"{'mean wait s':>12} {'sha':>13}")
        runs = []
        for k in range(max(1, args.repeat)):
            r = (run_command(sacct, platform) if args.mode == "command"
                 else run_emulated(args.jobs, args.seed))
            runs.append(r)
            print(f"{k + 1:>4} {r['jobs']:>8,} {r['wall']:>8.1f} {r['sim_s']:>8.1f} "
                  f"{r['rss_mb']:>8.0f} {r['mean_wait']:>12,.0f} {r['sha']:>13}")
        if len({r["sha"] for r in runs}) != 1:
            raise SystemExit("the repeats gave different schedules")
        best = min(runs, key=lambda r: r["wall"])
        print(f"best of {len(runs)}: {best['wall']:.1f} s wall, "
              f"{max(r['rss_mb'] for r in runs):.0f} MB peak RSS")


if __name__ == "__main__":
    main()
