"""Prediction benchmark: the cost of the data-driven predictors.

For each trace, as fresh processes (start-up and loading included):

* ``dispatchlab predict TRACE --predictors history,tsafrir`` (the replay of the recorded
  schedule), wall seconds and peak RSS;
* ``dispatchlab simulate TRACE --dispatcher easy`` with ``--predictor walltime`` and with
  ``--predictor history``: the simulate seconds reported in ``summary.json`` and their
  ratio (the issue's target: history at most 1.5x walltime).

Usage::

    python benchmarks/bench_predict.py $DISPATCHLAB_TRACES/CEA-Curie-2011-2.1-cln.swf.gz \\
        [--repeat 3]
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


def run(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one command run as a child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (best kept)")
    args = parser.parse_args()
    cli = [sys.executable, "-m", "dispatchlab.cli"]
    print(f"{'trace':<34} {'predict s':>9} {'RSS MB':>7} {'easy W sim s':>12} "
          f"{'easy D sim s':>12} {'D / W':>6}")
    for trace in args.traces:
        with tempfile.TemporaryDirectory() as tmp:
            best = min(run([*cli, "predict", trace, "--predictors", "history,tsafrir",
                            "--out", tmp]) for _ in range(args.repeat))
            sims = {}
            for pred in ("walltime", "history"):
                times = []
                for _ in range(args.repeat):
                    out = Path(tmp) / pred
                    run([*cli, "simulate", trace, "--dispatcher", "easy", "--predictor", pred,
                         "--out", str(out)])
                    times.append(json.loads((out / "summary.json").read_text())
                                 ["simulate_seconds"])
                sims[pred] = min(times)
        print(f"{Path(trace).name[:34]:<34} {best[0]:>9.2f} {best[1]:>7.0f} "
              f"{sims['walltime']:>12.2f} {sims['history']:>12.2f} "
              f"{sims['history'] / sims['walltime']:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
