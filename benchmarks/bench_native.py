"""dispatchlab's EASY against a minimal compiled EASY (the compiled core's speed yardstick).

Builds ``benchmarks/minimal_easy`` (std-only Rust, ``cargo build --release``, once), then
for every trace runs, as fresh processes, the minimal binary and ``python -m
dispatchlab.cli simulate TRACE --dispatcher easy --engine ENGINE --out TMP`` (the Python
of this script, so ``PYTHONPATH`` picks the checkout; ``--engine native`` by default,
``--engine native python`` runs both engines), alternating them, ``--repeat`` times each
(default 3), and prints the best whole-process wall time of each with its ratio to the
binary's, each one's own parse and simulate times (the binary's ``parse_seconds``
includes its ``gzip -dc`` child process; dispatchlab's ``simulate_seconds`` is the
engine's, from ``summary.json``), the jobs and the mean waits. The mean waits, to one
decimal, and the job counts must be equal, and the engine recorded in ``summary.json``
must be the one asked for: otherwise the script exits with status 1. The load average
is printed before and after (the machine may be shared).

Usage::

    python benchmarks/bench_native.py [TRACE ...] [--repeat 3] [--engine native python]

Without traces: KTH-SP2, SDSC-SP2, HPC2N, CEA-Curie and RICC from the traces folder
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

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "benchmarks" / "minimal_easy" / "Cargo.toml"
DEFAULT_TRACES = (
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "SDSC-SP2-1998-4.2-cln.swf.gz",
    "HPC2N-2002-2.2-cln.swf.gz",
    "CEA-Curie-2011-2.1-cln.swf.gz",
    "RICC-2010-2.swf.gz",
)


def build(manifest: Path = MANIFEST) -> Path:
    """``cargo build --release`` the crate; the path of the built binary."""
    proc = subprocess.run(
        ["cargo", "build", "--release", "--manifest-path", str(manifest),
         "--message-format=json-render-diagnostics"],
        stdout=subprocess.PIPE, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"cargo build failed ({proc.returncode}) for {manifest}")
    for line in proc.stdout.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("executable"):
            return Path(msg["executable"])
    raise SystemExit(f"cargo built no executable for {manifest}")


def run_minimal(binary: Path, trace: str) -> dict:
    """One run of the binary: its ``key value`` output (numbers) and ``wall`` seconds."""
    t0 = time.perf_counter()
    proc = subprocess.run([str(binary), trace], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{binary.name} failed ({proc.returncode}) on {trace}: "
                         f"{proc.stderr.strip()}")
    out: dict = {"wall": wall}
    for line in proc.stdout.splitlines():
        key, value = line.split()
        out[key] = value if key == "mean_wait" else float(value)
    return out


def run_dispatchlab(trace: str, engine: str = "native") -> dict:
    """One ``dispatchlab simulate TRACE --dispatcher easy --engine ENGINE`` process: its
    summary's jobs, rejected, mean wait (one decimal), simulate seconds and engine, and
    ``wall`` seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "dispatchlab.cli", "simulate", trace,
               "--dispatcher", "easy", "--engine", engine, "--out", tmp]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"dispatchlab failed ({proc.returncode}) on {trace}: "
                             f"{proc.stderr.strip()}")
        summary = json.loads((Path(tmp) / "summary.json").read_text())
    return {"wall": wall, "jobs": float(summary["jobs"]),
            "rejected": float(summary["rejected"]),
            "mean_wait": f"{summary['mean_wait']:.1f}",
            "simulate_seconds": float(summary["simulate_seconds"]),
            "engine": summary["engine"]}


def compare(binary: Path, trace: str, repeat: int,
            engines: tuple[str, ...] = ("native",)) -> list[dict]:
    """Best-of-``repeat`` runs of the binary and of dispatchlab on each engine on
    ``trace`` (alternating); one row per engine, ``equal`` saying whether jobs, rejected
    jobs and mean waits agree with the binary's."""
    best: dict[str, dict] = {}
    runs = [("minimal", lambda: run_minimal(binary, trace))]
    runs += [(e, lambda e=e: run_dispatchlab(trace, e)) for e in engines]
    for _ in range(repeat):
        for name, run in runs:
            result = run()
            if name not in best or result["wall"] < best[name]["wall"]:
                best[name] = result
    m = best["minimal"]
    return [{"trace": Path(trace).name, "minimal": m, "dispatchlab": best[e], "engine": e,
             "equal": all(m[k] == best[e][k] for k in ("jobs", "rejected", "mean_wait"))}
            for e in engines]


def default_traces() -> list[str]:
    folder = traces_dir(ROOT)
    return [str(folder / name) for name in DEFAULT_TRACES]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="*", help="SWF traces (default: the five above)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (best kept)")
    parser.add_argument("--engine", nargs="+", choices=("native", "python"),
                        default=["native"], help="dispatchlab's engines to run")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    traces = args.traces or default_traces()
    binary = build()
    print(f"load average before: {os.getloadavg()[0]:.2f}; best of {args.repeat}")
    print(f"{'trace':<30} {'engine':<7} {'jobs':>8} {'wait minimal':>12} {'wait ours':>10} "
          f"{'minimal s':>9} {'ours s':>7} {'ratio':>6} {'min parse':>9} {'min sim':>8} "
          f"{'our sim':>8}")
    bad = []
    rows = [row for trace in traces
            for row in compare(binary, trace, args.repeat, tuple(args.engine))]
    for row in rows:
        m, d = row["minimal"], row["dispatchlab"]
        if d["engine"] != row["engine"]:
            raise SystemExit(f"{row['trace']}: --engine {row['engine']} ran {d['engine']}")
        print(f"{row['trace']:<30} {row['engine']:<7} {int(d['jobs']):>8,} "
              f"{m['mean_wait']:>12} {d['mean_wait']:>10} {m['wall']:>9.3f} "
              f"{d['wall']:>7.2f} {d['wall'] / m['wall']:>5.1f}x "
              f"{m['parse_seconds']:>9.3f} {m['simulate_seconds']:>8.3f} "
              f"{d['simulate_seconds']:>8.2f}{'' if row['equal'] else '  MISMATCH'}",
              flush=True)
        if not row["equal"]:
            bad.append(f"{row['trace']} ({row['engine']})")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if bad:
        print(f"error: jobs or mean waits differ on {', '.join(bad)}", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
