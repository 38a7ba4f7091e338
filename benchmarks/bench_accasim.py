"""dispatchlab's EASY against AccaSim 1.1.3's EBF on HPC2N (whole processes).

AccaSim (Galleguillos et al. 2017) is never a dependency: install it in a throwaway
virtual environment outside the repository and give its Python with
``--accasim-python``. AccaSim 1.1.3 imports ``collections.Mapping``, gone since Python
3.10, so that environment needs a Python of 3.9 or older::

    python3.9 -m venv ../accasim-venv && ../accasim-venv/bin/pip install accasim==1.1.3
    python benchmarks/bench_accasim.py --accasim-python ../accasim-venv/bin/python \
        [--trace TRACE] [--repeat 3] [--accasim-repeat 1] [--engine native] \
        [--accasim-system NODES,CORES,PER_PROC] [--accasim-no-plan]

Both simulators run as fresh processes on the same trace (default: HPC2N from the
traces folder, ``$DISPATCHLAB_TRACES``, see docs/explanation/references.md):

* ours: ``python -m dispatchlab.cli simulate TRACE --dispatcher easy --engine native
  --out TMP`` (the Python of this script, so ``PYTHONPATH`` picks the checkout), best of
  ``--repeat`` (default 3): it reads the gzipped SWF, simulates and writes
  ``jobs.parquet`` and ``summary.json``;
* AccaSim: a small driver run by ``--accasim-python`` that builds its ``Simulator`` with
  ``EASYBackfilling(FirstFit())`` (EBF with the first-fit allocator, AccaSim's nearest
  to our EASY on a pool of cores) and calls ``start_simulation()`` with its default
  outputs (the dispatching plan and the statistics files, in a temporary folder), best
  of ``--accasim-repeat`` (default 1: it takes minutes on HPC2N).

AccaSim reads plain text only: the trace is decompressed into the temporary folder
before any timing (that time is not counted against AccaSim). Its system is written
there too, from the SWF header as our platform inference reads a header: MaxNodes
nodes of MaxProcs // MaxNodes cores (HPC2N: 240 nodes of 1 core; AccaSim asks one
core per requested processor, so this is the same pool of 240 cores our ``simulate``
uses). The jobs' memory requests are dropped (a driver-side tweak of AccaSim's reader):
our pooled platform has no memory, and AccaSim 1.1.3's EBF divides by zero on a job
without a memory request. ``--accasim-system NODES,CORES,PER_PROC`` gives AccaSim
another machine of as many processors, e.g. ``120,4,2``, the layout AccaSim's authors
gave HPC2N's Seth in their simulator comparison (120 nodes of 4 cores, 2 cores per
processor), and ``--accasim-no-plan`` turns its dispatching-plan output off (as that
comparison did): AccaSim's mean wait on HPC2N is the same, its time need not be.

It prints the load average before and after (the machine may be shared), both best
wall times, the ratio (AccaSim / ours; the target is 100x), both job counts and both
mean waits. The mean waits differ and are not meant to agree: AccaSim's EBF computes
the blocked job's reservation once and keeps it (early completions do not move it),
retries that job only once the reservation time is reached, and (in 1.1.3) passes no
reserved nodes to its backfilling, so a backfilled job may take cores the reservation
needs; our EASY recomputes the head's shadow time at every pass and protects it. A
missing or unusable ``--accasim-python`` ends the script with one ``error:`` line and
exit status 2.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_native import run_dispatchlab  # the script beside this one
from dispatchlab.core.references import traces_dir

ROOT = Path(__file__).resolve().parents[1]
TRACE = "HPC2N-2002-2.2-cln.swf.gz"
TARGET = 100.0  # AccaSim / ours, whole process

#: the driver run by AccaSim's Python: argv = workload, system config, results folder,
#: output JSON, cores per processor, plan output (1 or 0). It writes the completed jobs,
#: rejected jobs, mean wait and AccaSim's own simulation seconds to the output JSON.
DRIVER = r'''
import json, sys
from accasim.base.allocator_class import FirstFit
from accasim.base.scheduler_class import EASYBackfilling
from accasim.base.simulator_class import Simulator
from accasim.utils.reader_class import DefaultTweaker


class CoresOnly(DefaultTweaker):
    """AccaSim's default tweak without the jobs' memory requests."""

    def tweak_function(self, job):
        job = DefaultTweaker.tweak_function(self, job)
        job["requested_resources"].pop("mem", None)
        job.pop("mem", None)
        return job


workload, system, results, out, per_processor, plan = sys.argv[1:7]
tweak = CoresOnly(0, None, {"processor": {"core": int(per_processor)}})
sim = Simulator(workload, system, EASYBackfilling(FirstFit()), RESULTS_FOLDER_PATH=results,
                tweak_function=tweak, scheduling_output=plan == "1")
sim.start_simulation()
waits = sim.mapper.wtimes
with open(out, "w") as f:
    json.dump({"jobs": len(waits), "rejected": sim.rejected_jobs,
               "mean_wait": sum(waits) / len(waits) if waits else None,
               "simulate_seconds": sim.end_simulation_time - sim.start_simulation_time}, f)
'''


def _open(trace: Path):
    """``trace`` opened as text, gunzipped when it starts with gzip's magic bytes."""
    with open(trace, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    return gzip.open(trace, "rt") if gzipped else open(trace)


def swf_machine(trace: Path) -> tuple[int, int]:
    """``(nodes, cores per node)`` from the SWF header of ``trace`` (gzipped or not):
    MaxNodes nodes of MaxProcs // MaxNodes cores, as the header rule of
    :mod:`dispatchlab.platform.infer`; MaxProcs one-core nodes when MaxNodes is absent."""
    header: dict[str, int] = {}
    with _open(trace) as f:
        for line in f:
            if not line.startswith(";"):
                break
            key, sep, value = line[1:].partition(":")
            if sep and key.strip() in ("MaxNodes", "MaxProcs"):
                fields = value.split()
                if fields and fields[0].isdigit():
                    header[key.strip()] = int(fields[0])
    procs = header.get("MaxProcs") or header.get("MaxNodes")
    if not procs:
        raise SystemExit(f"error: {trace}: the SWF header has neither MaxProcs nor MaxNodes")
    nodes = header.get("MaxNodes") or procs
    return nodes, max(1, procs // nodes)


def check_accasim(python: str) -> None:
    """Exit with one ``error:`` line (status 2) unless ``python`` runs and imports
    AccaSim's simulator."""
    how = ("create a throwaway venv outside the repository with Python <= 3.9 and "
           "`pip install accasim==1.1.3` in it (see this script's docstring)")
    if not (shutil.which(python) or Path(python).is_file()):
        print(f"error: --accasim-python {python}: no such program; {how}", file=sys.stderr)
        raise SystemExit(2)
    proc = subprocess.run([python, "-c", "import accasim.base.simulator_class"],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        print(f"error: --accasim-python {python} cannot import AccaSim: {last}; {how}",
              file=sys.stderr)
        raise SystemExit(2)


def run_accasim(python: str, folder: Path, workload: Path, system: Path, n: int,
                per_processor: int = 1, plan: bool = True) -> dict:
    """One AccaSim process: its driver's JSON and ``wall`` seconds (``per_processor``:
    cores per SWF processor; ``plan``: AccaSim writes its dispatching plan). Its log
    goes to ``folder/accasim-N.log`` (the tail is shown if it fails)."""
    driver = folder / "accasim_driver.py"
    driver.write_text(DRIVER)
    results, out, log = folder / f"results-{n}", folder / f"out-{n}.json", \
        folder / f"accasim-{n}.log"
    with open(log, "w") as f:
        t0 = time.perf_counter()
        proc = subprocess.run([python, str(driver), str(workload), str(system),
                               str(results), str(out), str(per_processor),
                               "1" if plan else "0"], stdout=f, stderr=subprocess.STDOUT,
                              cwd=folder, check=False)
        wall = time.perf_counter() - t0
    if proc.returncode != 0 or not out.exists():
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise SystemExit(f"AccaSim failed ({proc.returncode}):\n{tail}")
    row = json.loads(out.read_text())
    shutil.rmtree(results, ignore_errors=True)
    return {**row, "wall": wall}


def prepare(trace: Path, folder: Path, nodes: int, cores: int) -> tuple[Path, Path]:
    """The plain-text workload and AccaSim's system file (``nodes`` of ``cores``) in
    ``folder``."""
    workload = folder / trace.name.removesuffix(".gz")
    with _open(trace) as src, open(workload, "w") as dst:
        shutil.copyfileobj(src, dst)
    system = folder / "system.config"
    system.write_text(json.dumps({"system_name": trace.name, "start_time": 0,
                                  "groups": {"node": {"core": cores}},
                                  "resources": {"node": nodes}}))
    return workload, system


def best(runs: list[dict]) -> dict:
    return min(runs, key=lambda r: r["wall"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--accasim-python", required=True,
                        help="the Python of the throwaway venv where accasim==1.1.3 is")
    parser.add_argument("--trace", type=Path, default=None,
                        help=f"SWF trace (default: {TRACE} from the traces folder)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of ours (best kept)")
    parser.add_argument("--accasim-repeat", type=int, default=1,
                        help="runs of AccaSim (best kept)")
    parser.add_argument("--engine", default="native", choices=("native", "auto", "python"),
                        help="our engine (default native)")
    parser.add_argument("--accasim-system", default=None, metavar="NODES,CORES,PER_PROC",
                        help="AccaSim's machine: nodes, cores per node, cores per SWF "
                             "processor (default: from the header, N,C,1); it must hold "
                             "as many processors as the header")
    parser.add_argument("--accasim-no-plan", action="store_true",
                        help="AccaSim does not write its dispatching plan (default: it "
                             "does, as ours writes jobs.parquet)")
    args = parser.parse_args()
    if args.repeat < 1 or args.accasim_repeat < 1:
        parser.error("--repeat and --accasim-repeat must be >= 1")
    trace = args.trace or traces_dir(ROOT) / TRACE
    if not trace.is_file():
        print(f"error: {trace}: no such trace file", file=sys.stderr)
        raise SystemExit(2)
    check_accasim(args.accasim_python)
    nodes, cores = swf_machine(trace)
    processors, per_processor = nodes * cores, 1
    if args.accasim_system:
        try:
            nodes, cores, per_processor = (int(x) for x in args.accasim_system.split(","))
        except ValueError:
            parser.error(f"--accasim-system: three integers NODES,CORES,PER_PROC, got "
                         f"{args.accasim_system!r}")
        if min(nodes, cores, per_processor) < 1 or nodes * cores != per_processor * processors:
            parser.error(f"--accasim-system {args.accasim_system}: {nodes} x {cores} cores "
                         f"are not {per_processor} per processor of the header's "
                         f"{processors} processors")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-accasim-") as tmp:
        folder = Path(tmp)
        workload, system = prepare(trace, folder, nodes, cores)
        print(f"{trace.name}: AccaSim system {nodes} nodes x {cores} cores, {per_processor} "
              f"per processor, dispatching plan {'off' if args.accasim_no_plan else 'on'}; "
              f"ours: the header's pool of {processors} cores")
        ours = best([run_dispatchlab(str(trace), args.engine) for _ in range(args.repeat)])
        if args.engine == "native" and ours["engine"] != "native":
            raise SystemExit(f"--engine native ran {ours['engine']}")
        acc = best([run_accasim(args.accasim_python, folder, workload, system, n,
                                per_processor, not args.accasim_no_plan)
                    for n in range(args.accasim_repeat)])
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ratio = acc["wall"] / ours["wall"]
    print(f"{'':<24} {'wall s':>8} {'sim s':>8} {'jobs':>8} {'mean wait s':>12}")
    print(f"{'dispatchlab easy (' + ours['engine'] + ')':<24} {ours['wall']:>8.2f} "
          f"{ours['simulate_seconds']:>8.2f} {int(ours['jobs']):>8,} "
          f"{float(ours['mean_wait']):>12,.1f}   best of {args.repeat}")
    print(f"{'AccaSim 1.1.3 EBF-FF':<24} {acc['wall']:>8.2f} {acc['simulate_seconds']:>8.2f} "
          f"{acc['jobs']:>8,} {acc['mean_wait']:>12,.1f}   best of {args.accasim_repeat}")
    print(f"ratio (AccaSim / ours, whole process): {ratio:.1f}x; target >= {TARGET:.0f}x: "
          f"{'PASS' if ratio >= TARGET else 'FAIL'}")
    if acc["jobs"] != int(ours["jobs"]) or f"{acc['mean_wait']:.1f}" != ours["mean_wait"]:
        print("the job counts or mean waits differ: expected, AccaSim's EBF is another "
              "EASY (reservation kept once computed, no reserved nodes while "
              "backfilling; see this script's docstring)")


if __name__ == "__main__":
    main()
