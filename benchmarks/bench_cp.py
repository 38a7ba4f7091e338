"""CP dispatcher benchmark: ``dispatchlab simulate`` with a CP-SAT dispatcher on the heavy
Eurora workload of the Galleguillos et al., CP-based dispatching Table 1 analogue, as a fresh
process.

The workload is generated first (``dispatchlab generate --model lublin --machine-size
1024 --load 0.95``: Lublin & Feitelson 2003 jobs, arrivals scaled to an offered load of
0.95, seed 0) and simulated on the 64-node ``eurora`` preset. For each dispatcher it
prints the whole command's wall time, the per-pass decision time (mean / p99 / max,
wall clock), the passes where the solver ran, the mean number of jobs modelled per
solver pass, the passes that hit the limit, whether the run finished, the mean wait and
the SHA-256 prefix of ``jobs.parquet``. With ``--repeat 2`` every run is repeated and
the outputs must be byte-identical (the deterministic limits make them so).

Usage::

    python benchmarks/bench_cp.py --jobs 10000 --dispatcher hcp-online [--repeat 2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run(trace: Path, dispatcher: str, predictor: str, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "dispatchlab.cli", "simulate", str(trace),
               "--platform", "eurora", "--dispatcher", dispatcher, "--predictor",
               predictor, "--out", tmp, *extra]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
        s = json.loads((Path(tmp) / "summary.json").read_text())
        sha = hashlib.sha256((Path(tmp) / "jobs.parquet").read_bytes()).hexdigest()[:12]
    return {"wall": wall, "mean": s["mean_decision_time"], "p99": s["p99_decision_time"],
            "max": s["max_decision_time"], "passes": s["decision_calls"],
            "cp_passes": s.get("cp_passes"), "modelled": s.get("cp_mean_modelled"),
            "hits": s.get("cp_limit_hits"), "finished": s.get("finished"),
            "mean_wait": s["mean_wait"], "sha": sha, "jobs": s["total_jobs"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--load", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dispatcher", nargs="+", default=["hcp-online"])
    parser.add_argument("--predictor", default="walltime")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--extra", default="", help="more simulate options, quoted")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "lublin.swf"
        subprocess.run([sys.executable, "-m", "dispatchlab.cli", "generate", "--model",
                        "lublin", "--machine-size", "1024", "--jobs", str(args.jobs),
                        "--seed", str(args.seed), "--load", str(args.load), "--out",
                        str(trace)], check=True, capture_output=True)
        print(f"Lublin workload: {args.jobs:,} jobs, offered load {args.load} on 1,024 "
              f"cores, seed {args.seed}; platform eurora; predictor {args.predictor}")
        print("| dispatcher | jobs | wall s | decision mean ms | p99 ms | max ms | passes | "
              "solver passes | mean modelled | limit hits | finished | mean wait s | sha |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for d in args.dispatcher:
            results = [run(trace, d, args.predictor, args.extra.split())
                       for _ in range(args.repeat)]
            if len({r["sha"] for r in results}) != 1:
                raise SystemExit(f"{d}: outputs differ between repeats: "
                                 f"{[r['sha'] for r in results]}")
            r = min(results, key=lambda x: x["wall"])
            modelled = "-" if r["modelled"] is None else f"{r['modelled']:.2f}"
            print(f"| {d} | {r['jobs']:,} | {r['wall']:.1f} | {1e3 * r['mean']:.1f} | "
                  f"{1e3 * r['p99']:.0f} | {1e3 * r['max']:.0f} | {r['passes']:,} | "
                  f"{r['cp_passes']} | {modelled} | {r['hits']} | {r['finished']} | "
                  f"{r['mean_wait']:,.0f} | {r['sha']} |", flush=True)


if __name__ == "__main__":
    main()
