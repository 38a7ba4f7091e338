"""Learning-to-rank benchmark (Darrous, learning-to-rank report): training time, and the scored
EASY run against plain EASY, each as a whole ``dispatchlab`` command in a fresh process.

1. ``dispatchlab l2r train TRACE -K LISTS --workers W`` (the label campaign, features
   and the fit), timed; the model's own summary splits the time (labels / fit). With
   ``--work`` pointing at a folder that already holds the label campaign, the labels
   are found stored: pass a fresh folder (the default: a temporary one) to time them.
2. ``dispatchlab simulate TRACE --jobs A:`` (the test part) with ``easy`` and with
   ``--priority l2r:model=MODEL -D scope=queue``, best of ``--repeat`` runs; with
   ``--repeat 2`` the outputs must be byte-identical.

Usage::

    python benchmarks/bench_l2r.py $DISPATCHLAB_TRACES/CEA-Curie-2011-2.1-cln.swf.gz \\
        --lists 1024 --workers 2 [--repeat 2]
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


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{proc.stderr}")
    return wall


def simulate(trace: str, first: int, extra: list[str], repeat: int) -> tuple[float, str]:
    walls, shas = [], set()
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            walls.append(timed([sys.executable, "-m", "dispatchlab.cli", "simulate", trace,
                                "--jobs", f"{first}:", "--out", tmp, *extra]))
            shas.add(hashlib.sha256((Path(tmp) / "jobs.parquet").read_bytes()).hexdigest())
    if len(shas) != 1:
        raise SystemExit(f"outputs differ between runs: {extra}")
    return min(walls), shas.pop()[:12]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--lists", type=int, default=1024)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--setup", default="causal")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--work", type=Path, default=None,
                        help="label campaign folder (default: a fresh temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp) / "work"
        model = Path(tmp) / "model.json"
        wall = timed([sys.executable, "-m", "dispatchlab.cli", "l2r", "train", args.trace,
                      "-K", str(args.lists), "-o", str(model), "--workers",
                      str(args.workers), "--setup", args.setup, "--work", str(work)])
        summary = json.loads(model.read_text())["summary"]
        sec = summary["seconds"]
        print(f"train: {Path(args.trace).name}, K = {args.lists}, {args.workers} workers, "
              f"set-up {args.setup}: {wall:.1f} s whole command (labels {sec['labels']:.1f} "
              f"s, fit {sec['fit']:.1f} s); {summary['train_jobs']:,} training jobs")
        first = summary["test_rows"][0]
        plain, sha_plain = simulate(args.trace, first, ["--dispatcher", "easy"], args.repeat)
        scored, sha_scored = simulate(args.trace, first, [
            "--dispatcher", "easy", "--priority", f"l2r:model={model}", "-D", "scope=queue"],
            args.repeat)
        print(f"test part (rows {first:,}-): easy {plain:.2f} s ({sha_plain}), "
              f"easy + l2r score {scored:.2f} s ({sha_scored}): x{scored / plain:.2f}")


if __name__ == "__main__":
    main()
