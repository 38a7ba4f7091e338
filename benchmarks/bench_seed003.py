"""The Carastan-Santos et al. 2024 campaign (``examples/campaigns/seed003.toml``, 1,560 runs) from
scratch.

Runs ``dispatchlab campaign run`` as a separate process into a fresh database in a
temporary folder with ``--workers N`` (default 2) and reports runs, failed runs, wall
time, runs/s and the peak RSS of the coordinator and of its largest worker, against the
issue's target of 20 minutes on 2 workers. With ``--check`` a second execution into
another fresh database must store identical per-run metrics (wall-clock fields
excepted): the campaign's results do not depend on the run order or the worker.

    python benchmarks/bench_seed003.py [--workers 2] [--check]

The campaign reads ``LLNL-Thunder-2007-1.1-cln.swf.gz`` from the traces folder
(``$DISPATCHLAB_TRACES``, see :mod:`dispatchlab.core.references`); the script exits with a
message when it is absent.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from dispatchlab.core.references import traces_dir
from dispatchlab.metrics.keys import WALL_CLOCK

ROOT = Path(__file__).resolve().parents[1]
CAMPAIGN = ROOT / "examples" / "campaigns" / "seed003.toml"
TRACE = traces_dir(ROOT) / "LLNL-Thunder-2007-1.1-cln.swf.gz"
TARGET_S = 20 * 60
WALL = {"simulate_seconds", "wall_seconds", *WALL_CLOCK}


def execute(folder: Path, workers: int) -> dict:
    """Run the campaign into ``folder/seed003.duckdb``."""
    db = folder / "seed003.duckdb"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c",
         "import resource, sys\n"
         "from dispatchlab.cli import main\n"
         "code = main(sys.argv[1:])\n"
         "me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
         "kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
         "print(f'RSS {me} {kids}', file=sys.stderr)\n"
         "sys.exit(code)\n",
         "campaign", "run", str(CAMPAIGN), "--database", str(db), "--workers", str(workers)],
        capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"campaign failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    rss = next(line for line in proc.stderr.splitlines() if line.startswith("RSS"))
    me, kids = (int(x) / 1024 for x in rss.split()[1:])
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT run_key, status, summary FROM runs").fetchall()
    con.close()
    results = {k: (s, json.dumps({m: v for m, v in json.loads(j or "{}").items()
                                  if m not in WALL}, sort_keys=True)) for k, s, j in rows}
    return {"wall": wall, "runs": len(rows),
            "failed": sum(1 for _, s, _ in rows if s != "done"),
            "rss_coordinator_mb": me, "rss_worker_mb": kids, "results": results}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--check", action="store_true",
                    help="run twice and compare the stored metrics")
    args = ap.parse_args()
    if not TRACE.exists():
        raise SystemExit(f"{TRACE} not found: the campaign needs the traces folder "
                         "(set DISPATCHLAB_TRACES)")
    with tempfile.TemporaryDirectory() as tmp:
        first = execute(Path(tmp), args.workers)
        print(f"seed003 campaign, {args.workers} workers: {first['runs']:,} runs "
              f"({first['failed']} failed) in {first['wall']:.1f} s = "
              f"{first['runs'] / first['wall']:.1f} runs/s; peak RSS coordinator "
              f"{first['rss_coordinator_mb']:.0f} MB, largest worker "
              f"{first['rss_worker_mb']:.0f} MB; target {TARGET_S / 60:.0f} min: "
              f"{'met' if first['wall'] <= TARGET_S else 'NOT met'}")
        if args.check:
            other = Path(tmp) / "again"
            other.mkdir()
            second = execute(other, args.workers)
            same = first["results"] == second["results"]
            print(f"second execution: {second['wall']:.1f} s; stored metrics identical: "
                  f"{same}")
            if not same:
                raise SystemExit(1)


if __name__ == "__main__":
    main()
