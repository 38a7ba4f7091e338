"""Time loading traces and report the peak memory (RSS).

Usage::

    python benchmarks/bench_load.py                    # CEA-Curie, RICC, synthetic 1M lines
    python benchmarks/bench_load.py TRACE.swf.gz ...   # given traces + synthetic
    python benchmarks/bench_load.py --lines 0 TRACE    # no synthetic trace

Each load runs in a fresh Python process so that its peak RSS (``VmHWM``) is its
own; the baseline is the RSS after the imports, before loading. ``read`` is
:func:`read_swf` alone, ``load`` is :func:`load_trace` (read + default cleaning).
The synthetic trace (plain ``.swf``, PWA-like values with decimals in field 6) is
written to a temporary directory and deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dispatchlab.core.references import traces_dir

TRACES = traces_dir(Path(__file__).resolve().parents[1])
DEFAULT_TRACES = ("CEA-Curie-2011-2.1-cln.swf.gz", "RICC-2010-2.swf.gz")


def peak_rss_mb() -> float:
    """This process's peak RSS in MiB (VmHWM: unlike ``ru_maxrss`` it is not inherited
    across ``exec`` from the parent on Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(path: str, mode: str, repeat: int) -> None:
    from dispatchlab.workload.load import load_trace
    from dispatchlab.workload.swf import read_swf

    base = peak_rss_mb()
    times = []
    n = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        table = read_swf(path) if mode == "read" else load_trace(path)
        times.append(time.perf_counter() - t0)
        n = len(table)
        table_mb = sum(c.nbytes for c in table.columns.values()) / 2**20
        del table
    peak = peak_rss_mb()
    print(
        json.dumps(
            {
                "jobs": n,
                "seconds": min(times),
                "base_mb": base,
                "peak_mb": peak,
                "table_mb": table_mb,
            }
        )
    )


def write_synthetic(path: Path, lines: int, seed: int = 1) -> float:
    """Write a PWA-like SWF with ``lines`` jobs; returns the seconds it took."""
    import numpy as np

    from dispatchlab.workload.jobs import JobTable, TraceInfo
    from dispatchlab.workload.swf import write_swf

    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.integers(0, 60, lines))
    run = rng.integers(0, 86400, lines)
    units = 2 ** rng.integers(0, 10, lines)
    req = np.maximum(run, rng.integers(60, 172800, lines))
    table = JobTable.from_arrays(
        submit=submit,
        run=run,
        units=units,
        requested_time=req,
        wait=rng.integers(0, 100000, lines),
        alloc_procs=units,
        avg_cpu=np.round(rng.random(lines) * run, 2),
        user=rng.integers(1, 500, lines),
        group=rng.integers(1, 50, lines),
        status=np.ones(lines, dtype=np.int64),
        info=TraceInfo(header={"MaxProcs": "1024", "MaxJobs": str(lines)}),
    )
    write_swf(table, path)
    return time.perf_counter() - t0


def measure(path: Path, mode: str, repeat: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path), "--mode", mode, "--repeat", str(repeat)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="*", type=Path)
    parser.add_argument(
        "--lines", type=int, default=1_000_000, help="synthetic SWF lines (0: none)"
    )
    parser.add_argument("--repeat", type=int, default=3, help="loads per process (best time)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="load", choices=["read", "load"])
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.mode, args.repeat)
        return

    traces = list(args.traces) or [TRACES / name for name in DEFAULT_TRACES]
    with tempfile.TemporaryDirectory() as tmp:
        if args.lines > 0:
            synth = Path(tmp) / f"synthetic-{args.lines}.swf"
            secs = write_synthetic(synth, args.lines)
            size = synth.stat().st_size / 2**20
            print(f"wrote {synth.name}: {args.lines:,} lines, {size:.0f} MiB in {secs:.1f} s")
            traces.append(synth)
        header = f"{'trace':42s} {'mode':5s} {'jobs':>9s} {'seconds':>8s} {'base MB':>8s} "
        header += f"{'peak MB':>8s} {'table MB':>9s}"
        print(header)
        for path in traces:
            if not path.exists():
                print(f"{path.name:42s} (missing: {path})")
                continue
            for mode in ("read", "load"):
                r = measure(path, mode, args.repeat)
                print(
                    f"{path.name:42s} {mode:5s} {r['jobs']:9,d} {r['seconds']:8.2f} "
                    f"{r['base_mb']:8.0f} {r['peak_mb']:8.0f} {r['table_mb']:9.0f}"
                )


if __name__ == "__main__":
    main()
