"""Campaign scaling: the same campaign of real-trace runs with 1 worker and with N.

Writes a campaign file (traces x dispatchers x predictors x seeds, each run a block of
``--sample-jobs`` jobs of a real trace chosen by its seed), runs it as a separate
``dispatchlab campaign run`` process into a fresh database once per worker count, and
reports runs, wall time, runs/s, the speed-up over one worker and the peak RSS of the
coordinator and of its largest worker. It then checks that every worker count stored
identical per-run results (wall-clock fields excepted).

    python benchmarks/bench_campaign.py $DISPATCHLAB_TRACES/KTH-SP2-1996-2.1-cln.swf.gz \\
        $DISPATCHLAB_TRACES/SDSC-SP2-1998-4.2-cln.swf.gz --seeds 6 --workers 1 2
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

import duckdb

from dispatchlab.metrics.keys import WALL_CLOCK

#: summary fields measured on the wall clock: they differ between executions
WALL = {"simulate_seconds", "wall_seconds", *WALL_CLOCK}


def campaign_text(traces: list[Path], seeds: int, sample: int, dispatchers: list[str],
                  predictors: list[str]) -> str:
    lines = ["[campaign]", 'name = "bench"', f"seeds = {list(range(seeds))}", ""]
    for t in traces:
        lines += ["[[traces]]", f'path = "{t.resolve()}"', f"sample_jobs = {sample}", ""]
    for d in dispatchers:
        lines += ["[[dispatchers]]", f'name = "{d}"', ""]
    for p in predictors:
        lines += ["[[predictors]]", f'name = "{p}"', ""]
    return "\n".join(lines)


def results(db: Path) -> dict[str, tuple]:
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT run_key, status, summary FROM runs").fetchall()
    con.close()
    out = {}
    for key, status, summary in rows:
        s = json.loads(summary) if summary else {}
        out[key] = (status, json.dumps({k: v for k, v in s.items() if k not in WALL},
                                       sort_keys=True))
    return out


def run(campaign: Path, db: Path, workers: int) -> dict[str, float]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c",
         "import resource, sys\n"
         "from dispatchlab.cli import main\n"
         "rc = main(sys.argv[1:])\n"
         "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,\n"
         "      file=sys.stderr)\n"
         "sys.exit(rc)\n",
         "campaign", "run", str(campaign), "--workers", str(workers), "--database", str(db),
         "--no-progress"],
        capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"campaign failed:\n{proc.stdout}\n{proc.stderr}")
    peak = next(line for line in proc.stderr.splitlines() if line.startswith("PEAK"))
    own = peak.split()[1]
    con = duckdb.connect(str(db), read_only=True)
    worker_mb = con.execute("SELECT max(peak_rss_mb) FROM runs").fetchone()[0]
    con.close()
    return {"wall": wall, "coordinator_mb": int(own) / 1024, "worker_mb": worker_mb}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--sample-jobs", type=int, default=5000)
    ap.add_argument("--dispatchers", default="fifo,sjf,easy")
    ap.add_argument("--predictors", default="walltime,history")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = ap.parse_args()
    for t in args.traces:
        if not t.is_file():
            raise SystemExit(f"error: trace not found: {t}")
    dispatchers = args.dispatchers.split(",")
    predictors = args.predictors.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        campaign = folder / "bench.toml"
        campaign.write_text(campaign_text(args.traces, args.seeds, args.sample_jobs,
                                          dispatchers, predictors))
        n_runs = len(args.traces) * args.seeds * len(dispatchers) * len(predictors)
        print(f"campaign: {n_runs} runs = {len(args.traces)} traces x {len(dispatchers)} "
              f"dispatchers x {len(predictors)} predictors x {args.seeds} seeds, "
              f"{args.sample_jobs} jobs each; {os.cpu_count()} cores")
        measured = {}
        stored = {}
        for w in args.workers:
            db = folder / f"w{w}.duckdb"
            measured[w] = run(campaign, db, w)
            stored[w] = results(db)
            assert len(stored[w]) == n_runs, f"{len(stored[w])} runs stored, not {n_runs}"
            failed = sum(s == "failed" for s, _ in stored[w].values())
            m = measured[w]
            base = measured[args.workers[0]]["wall"]
            print(f"workers={w}: {m['wall']:.2f} s wall ({n_runs / m['wall']:.1f} runs/s), "
                  f"{m['wall'] / base:.2f}x the {args.workers[0]}-worker time, failed {failed}, "
                  f"peak RSS coordinator {m['coordinator_mb']:.0f} MB, "
                  f"largest worker {m['worker_mb']:.0f} MB")
        first = stored[args.workers[0]]
        same = all(stored[w] == first for w in args.workers)
        print(f"identical per-run results across worker counts: {same}")
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
