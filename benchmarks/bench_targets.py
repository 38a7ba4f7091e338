"""The compiled core's speed targets, measured as one table (whole commands, fresh processes).

Every case runs whole commands as fresh processes, best of ``--repeat`` (default 3),
the native engine beside the Python engine in the same run, and is judged against its
target (PASS / FAIL):

==========================  ===============================================  ==================
case                        commands                                         target
==========================  ===============================================  ==================
``easy-hpc2n``              ``simulate HPC2N --dispatcher easy`` vs the      native <= 3x the
                            minimal compiled EASY (``benchmarks/             minimal one
                            minimal_easy``, built with cargo), both          (the command as
                            printing their results and writing no file;      the issue states
                            the same command with ``--out`` (Parquet and     it, no ``--out``)
                            JSON written) is measured beside it
``easy-curie``              the same on CEA-Curie                            native <= 3x
``accasim-hpc2n``           ``simulate HPC2N --dispatcher easy --engine      >= 100x faster
                            native`` vs AccaSim 1.1.3's EBF, as               than AccaSim
                            ``bench_accasim.py`` runs it (only with
                            ``--accasim-python``; AccaSim runs
                            ``--accasim-repeat`` times, default 1)
``easy-ricc``               ``simulate RICC --dispatcher easy``              native < 5 s
``ctc-conservative``        ``simulate CTC-SP2`` under ``conservative`` and  conservative <= 2x
                            ``easy``                                         easy (native)
``eurora-conservative``     node-level ``conservative`` on the 1,000         < 5 s
                            Eurora-like jobs of ``bench_backfill_nodes.py``
                            (``eurora_instance(1000, 1800, "uniform",
                            seed=0)`` on ``eurora_platform()``), through
                            the run layer in a child process (its schedule
                            hash is the script's, e.g. ``2bdac0a64057``
                            under ``easy``)
``alea-wagap``              ``simulate alea-wagap-2013.swf.gz --dispatcher   < 10 s
                            easy`` (68 heterogeneous nodes)
``sacct-replay``            ``simulate jobs.sacct --platform slurm.conf      < 10 s
                            --dispatcher easy``: the seeded 100,000-job
                            cluster of ``gen_slurm_cluster.py`` (seed 0)
``python-dispatcher``       ``simulate KTH-SP2 --dispatcher                  native <= python
                            examples/custom_dispatcher.py:WidestFirst``
                            (the README's own Python dispatcher)
==========================  ===============================================  ==================

and, for every case, peak memory: the native run's peak RSS (``wait4``'s rusage of the
whole process) no higher than the Python engine's on the same trace.

A case the native engine cannot run yet runs with ``--engine auto`` (the table says
which engine ran; when that is the Python engine the separate Python run is not
repeated). Each ``simulate`` writes its outputs into a temporary folder; the engine,
jobs, mean wait and simulation seconds come from its ``summary.json``, and the
``jobs.parquet`` of the native and the Python engine must be byte-identical (a
mismatch is printed and fails the case). The load average is printed before and after:
the machine may be shared, compare rows of the same minutes.

Usage::

    python benchmarks/bench_targets.py [--cases easy-hpc2n easy-ricc ...] [--repeat 3]
        [--python-repeat N] [--accasim-python PATH [--accasim-repeat 1]] [--smoke]

``--python-repeat`` runs the Python engine fewer times than the native one (default:
``--repeat``); ``--smoke`` runs every case on a small slice (2,000 jobs of each trace,
100 Eurora-like jobs, a 2,000-job cluster, once each) to check that the commands work:
its verdicts are not the targets'. Traces come from the traces folder
(``$DISPATCHLAB_TRACES``, see docs/explanation/references.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_accasim  # the scripts beside this one
import gen_slurm_cluster
from bench_native import build as build_minimal
from dispatchlab.core.references import traces_dir

ROOT = Path(__file__).resolve().parents[1]
TRACES = {
    "hpc2n": "HPC2N-2002-2.2-cln.swf.gz",
    "curie": "CEA-Curie-2011-2.1-cln.swf.gz",
    "ricc": "RICC-2010-2.swf.gz",
    "ctc": "CTC-SP2-1996-3.1-cln.swf.gz",
    "alea": "alea-wagap-2013.swf.gz",
    "kth": "KTH-SP2-1996-2.1-cln.swf.gz",
}
SMOKE_JOBS = 2000

#: the Eurora-like case's child: argv = dispatcher, jobs, engine. It simulates through
#: the run layer (engine choice as ``simulate``'s) and prints one JSON line.
EURORA = r"""
import hashlib, json, sys, time
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power.eurora_synth import eurora_instance
from dispatchlab.run.build import build
from dispatchlab.run.config import Component, RunConfig
from dispatchlab.run.outputs import run_summary

disp, n, engine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
jobs = eurora_instance(n, 1800, "uniform", seed=0)
run = build(RunConfig(dispatcher=Component(disp), engine=engine), jobs=jobs,
            platform=eurora_platform())
t0 = time.perf_counter()
r = run.simulation.run()
sim = time.perf_counter() - t0
h = hashlib.sha256()
h.update(repr((r.start.tolist(), r.end.tolist())).encode())
for j in sorted(r.allocations):
    a = r.allocations[j]
    h.update(repr((j, a.nodes.tolist(), a.counts.tolist())).encode())
s = run_summary(r)
print(json.dumps({"engine": run.engine, "jobs": s["jobs"], "mean_wait": s["mean_wait"],
                  "simulate_seconds": sim, "sha": h.hexdigest()[:12]}))
"""


@dataclass
class Run:
    """One command of a case: ``label`` (``native``, ``python``, ``auto``, ``minimal``,
    or a dispatcher name prefix such as ``easy native``), the command, and how its
    results are read (``kind``: ``simulate`` reads ``summary.json`` from the ``--out``
    folder the runner appends, ``json`` the last stdout line, ``minimal`` the
    ``key value`` lines of the compiled baseline, ``accasim`` the JSON file
    ``result``, ``plain`` nothing: a ``simulate`` without ``--out``, timed only);
    ``repeat``: its own number of runs (None: the runner's)."""

    label: str
    cmd: list[str]
    kind: str = "simulate"
    engine: str | None = None  # the --engine asked for (simulate and json kinds)
    result: Path | None = None
    repeat: int | None = None


@dataclass
class Case:
    name: str
    what: str
    target: str
    runs: list[Run]
    #: the verdict: (passed, measured text) from the best result of each run label
    judge: Callable[[dict[str, dict]], tuple[bool, str]]
    results: dict[str, dict] = field(default_factory=dict)


def measure(run: Run) -> dict:
    """One fresh process of ``run``: ``wall`` seconds, ``rss_mb`` (peak RSS of the
    process, ``wait4``) and what its output says (engine, jobs, mean wait, simulation
    seconds, ``sha``: the first 12 hex digits of ``jobs.parquet``'s SHA-256 or the
    child's schedule hash)."""
    with tempfile.TemporaryDirectory(prefix="bench-targets-") as tmp:
        cmd = run.cmd + (["--out", tmp] if run.kind == "simulate" else [])
        stdout, stderr = Path(tmp) / "stdout.txt", Path(tmp) / "stderr.txt"
        with open(stdout, "w") as fo, open(stderr, "w") as fe:
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=fo, stderr=fe)
            _, status, usage = os.wait4(proc.pid, 0)  # reaped here: its own rusage
            wall = time.perf_counter() - t0
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out, err = stdout.read_text(), stderr.read_text()
        if code != 0:
            raise SystemExit(f"{run.label} failed ({code}): {' '.join(cmd)}\n"
                             f"{err.strip()[-2000:]}")
        row: dict = {"wall": wall, "rss_mb": usage.ru_maxrss / 1024}
        if run.kind == "simulate":
            summary = json.loads((Path(tmp) / "summary.json").read_text())
            digest = hashlib.sha256((Path(tmp) / "jobs.parquet").read_bytes()).hexdigest()
            row.update(engine=summary["engine"], jobs=summary["jobs"],
                       mean_wait=summary["mean_wait"],
                       sim=summary["simulate_seconds"], sha=digest[:12])
        elif run.kind == "plain":  # timed only: its values are its --out twin's
            row.update(engine=run.engine, jobs=None, mean_wait=None, sim=None, sha="")
        elif run.kind == "accasim":
            assert run.result is not None
            data = json.loads(run.result.read_text())
            row.update(engine="accasim", jobs=data["jobs"], mean_wait=data["mean_wait"],
                       sim=data["simulate_seconds"], sha="")
        elif run.kind == "json":
            data = json.loads(out.strip().splitlines()[-1])
            row.update(engine=data["engine"], jobs=data["jobs"], mean_wait=data["mean_wait"],
                       sim=data["simulate_seconds"], sha=data["sha"])
        else:  # the minimal compiled EASY
            values = dict(line.split() for line in out.splitlines())
            row.update(engine="compiled", jobs=int(float(values["jobs"])),
                       mean_wait=float(values["mean_wait"]),
                       sim=float(values["simulate_seconds"]), sha="")
    return row


def simulate(trace: str, dispatcher: str, engine: str, jobs: str | None) -> list[str]:
    cmd = [sys.executable, "-m", "dispatchlab.cli", "simulate", trace,
           "--dispatcher", dispatcher, "--engine", engine]
    return cmd + (["--jobs", jobs] if jobs else [])


def engines(prefix: str, make: Callable[[str], list[str]], native: str = "native",
            kind: str = "simulate") -> list[Run]:
    """The case's two runs: ``native`` (or ``auto`` where the native engine may not run
    it yet) and ``python``."""
    pre = f"{prefix} " if prefix else ""
    return [Run(f"{pre}{native}", make(native), kind, native),
            Run(f"{pre}python", make("python"), kind, "python")]


def within(a: str, b: str, factor: float) -> Callable[[dict[str, dict]], tuple[bool, str]]:
    """Run ``a``'s wall time at most ``factor`` times run ``b``'s."""
    def judge(r: dict[str, dict]) -> tuple[bool, str]:
        ratio = r[a]["wall"] / r[b]["wall"]
        return ratio <= factor, f"{a} {r[a]['wall']:.2f} s / {b} {r[b]['wall']:.2f} s = " \
                                f"{ratio:.2f}x"
    return judge


def within_also(a: str, b: str, factor: float, also: str
                ) -> Callable[[dict[str, dict]], tuple[bool, str]]:
    """:func:`within`, and run ``also``'s ratio to ``b`` said beside (not judged)."""
    def judge(r: dict[str, dict]) -> tuple[bool, str]:
        ok, text = within(a, b, factor)(r)
        return ok, f"{text}; {also} {r[also]['wall']:.2f} s = " \
                   f"{r[also]['wall'] / r[b]['wall']:.2f}x"
    return judge


def under(a: str, seconds: float) -> Callable[[dict[str, dict]], tuple[bool, str]]:
    """Run ``a``'s wall time under ``seconds``."""
    def judge(r: dict[str, dict]) -> tuple[bool, str]:
        return r[a]["wall"] < seconds, f"{a} ({r[a]['engine']}) {r[a]['wall']:.2f} s"
    return judge


def faster(a: str, b: str, factor: float) -> Callable[[dict[str, dict]], tuple[bool, str]]:
    """Run ``a`` at least ``factor`` times faster than run ``b`` (wall times)."""
    def judge(r: dict[str, dict]) -> tuple[bool, str]:
        ratio = r[b]["wall"] / r[a]["wall"]
        return ratio >= factor, f"{b} {r[b]['wall']:.2f} s / {a} {r[a]['wall']:.2f} s = " \
                                f"{ratio:.1f}x"
    return judge


def native_not_slower(a: str, b: str) -> Callable[[dict[str, dict]], tuple[bool, str]]:
    """Run ``a`` ran the native engine and took at most run ``b``'s wall time."""
    def judge(r: dict[str, dict]) -> tuple[bool, str]:
        ok = r[a]["engine"] == "native" and r[a]["wall"] <= r[b]["wall"]
        return ok, f"{a} ran {r[a]['engine']}: {r[a]['wall']:.2f} s vs {b} " \
                   f"{r[b]['wall']:.2f} s"
    return judge


def cases(smoke: bool, minimal: Path | None) -> list[Case]:
    """The cases of the table (``smoke``: small slices)."""
    folder = traces_dir(ROOT)
    tr = {k: str(folder / v) for k, v in TRACES.items()}
    jobs = f"0:{SMOKE_JOBS}" if smoke else None
    out = []
    for key, name in (("hpc2n", "HPC2N"), ("curie", "CEA-Curie")):
        # the command as the issue states it (no file written, as the minimal EASY),
        # and with --out (its values, the parquet comparison and the files' cost)
        runs = engines("", lambda e, key=key: simulate(tr[key], "easy", e, jobs), kind="plain")
        runs += engines("out", lambda e, key=key: simulate(tr[key], "easy", e, jobs))
        if minimal is not None:
            runs.insert(0, Run("minimal", [str(minimal), tr[key]], "minimal"))
            judge = within_also("native", "minimal", 3.0, "out native")
        else:  # --smoke: the minimal binary reads whole traces only
            judge = under("native", float("inf"))
        out.append(Case(f"easy-{key}", f"simulate {name} --dispatcher easy",
                        "native <= 3x minimal" if minimal else "(smoke)", runs, judge))
    out.append(Case("accasim-hpc2n", "simulate HPC2N --dispatcher easy vs AccaSim's EBF",
                    ">= 100x faster than AccaSim", [], faster("native", "accasim", 100.0)))
    out.append(Case("easy-ricc", "simulate RICC --dispatcher easy", "native < 5 s",
                    engines("", lambda e: simulate(tr["ricc"], "easy", e, jobs)),
                    under("native", 5.0)))
    out.append(Case("ctc-conservative", "simulate CTC-SP2, conservative vs easy",
                    "conservative <= 2x easy (native)",
                    engines("conservative",
                            lambda e: simulate(tr["ctc"], "conservative", e, jobs))
                    + engines("easy", lambda e: simulate(tr["ctc"], "easy", e, jobs)),
                    within("conservative native", "easy native", 2.0)))
    n = "100" if smoke else "1000"
    out.append(Case("eurora-conservative", f"conservative, {n} Eurora-like jobs, 64 nodes",
                    "< 5 s", engines("", lambda e: [sys.executable, "-c", EURORA,
                                                    "conservative", n, e], "auto", "json"),
                    under("auto", 5.0)))
    out.append(Case("alea-wagap", "simulate alea-wagap-2013 --dispatcher easy", "< 10 s",
                    engines("", lambda e: simulate(tr["alea"], "easy", e, jobs), "auto"),
                    under("auto", 10.0)))
    out.append(Case("sacct-replay", "simulate 100,000-job sacct replay --dispatcher easy",
                    "< 10 s", [], under("auto", 10.0)))  # runs filled in by main()
    out.append(Case("python-dispatcher", "simulate KTH-SP2 --dispatcher "
                    "examples/custom_dispatcher.py:WidestFirst", "native <= python",
                    engines("", lambda e: simulate(
                        tr["kth"], str(ROOT / "examples" / "custom_dispatcher.py")
                        + ":WidestFirst", e, jobs), "auto"),
                    native_not_slower("auto", "python")))
    return out


def _write_cluster_apart(folder: str, jobs: int) -> dict[str, Path]:
    """``gen_slurm_cluster.write_cluster(folder, jobs=jobs, seed=0)`` in a process of its
    own. Made here, the 100,000 jobs would grow this process to about 500 MB, and Linux
    counts the parent's peak RSS at the fork in every later child's ``ru_maxrss`` (exec
    keeps the larger of the old and new image's peaks), which would hide the children's
    own peaks."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(gen_slurm_cluster.write_cluster, (folder,),
                          {"jobs": jobs, "seed": 0})


def run_case(case: Case, repeat: int, python_repeat: int) -> None:
    """Best of ``repeat`` of each run (``python_repeat`` for the Python engine's),
    alternating; a Python run is skipped when the case's ``auto`` run ran the Python
    engine (its result is the ``auto`` one)."""
    best: dict[str, dict] = {}
    counts = [run.repeat or (python_repeat if run.engine == "python" else repeat)
              for run in case.runs]
    for i in range(max(counts)):
        for run, count in zip(case.runs, counts, strict=True):
            if i >= count:
                continue
            auto = run.label.replace("python", "auto")
            if run.engine == "python" and best.get(auto, {}).get("engine") == "python":
                best[run.label] = {**best[auto], "same_as": auto}
                continue
            row = measure(run)
            if run.label not in best or row["wall"] < best[run.label]["wall"]:
                best[run.label] = row
    case.results = best


def print_runs(case: Case) -> list[str]:
    """The case's rows; the mismatches of native vs python outputs (``jobs.parquet``
    or schedule hashes), as text."""
    bad = []
    for label, r in case.results.items():
        note = f"  (= {r['same_as']})" if "same_as" in r else ""
        wait = "-" if r["mean_wait"] is None else f"{r['mean_wait']:,.1f}"
        sim = "-" if r["sim"] is None else f"{r['sim']:.2f}"
        jobs = "-" if r["jobs"] is None else f"{r['jobs']:,}"
        print(f"{case.name:<20} {label:<20} {r['engine']:<8} {r['wall']:>8.2f} "
              f"{sim:>8} {r['rss_mb']:>7.0f} {jobs:>8} {wait:>12} "
              f"{r['sha']:>12}{note}", flush=True)
    minimal, ours = case.results.get("minimal"), case.results.get("out native")
    if minimal is not None and ours is not None \
            and abs(minimal["mean_wait"] - ours["mean_wait"]) > 0.05 + 1e-9:
        bad.append(f"{case.name}: the minimal EASY's mean wait {minimal['mean_wait']} "
                   f"(printed to 0.1 s) is not ours, {ours['mean_wait']}")
    for label, r in case.results.items():
        twin = case.results.get(label.replace("native", "python").replace("auto", "python"))
        if twin is not None and twin is not r and r["engine"] != twin["engine"] \
                and r["sha"] != twin["sha"]:
            bad.append(f"{case.name}: {label} and its python run differ "
                       f"({r['sha']} vs {twin['sha']})")
    return bad


def rss_verdict(case: Case) -> tuple[bool, str] | None:
    """Native peak RSS <= Python's for each engine pair that ran both engines."""
    pairs = []
    for label, r in case.results.items():
        twin = case.results.get(label.replace("native", "python").replace("auto", "python"))
        if twin is not None and r["engine"] == "native" and twin["engine"] == "python":
            pairs.append((label, r["rss_mb"], twin["rss_mb"]))
    if not pairs:
        return None
    ok = all(a <= b for _, a, b in pairs)
    return ok, "; ".join(f"{label} {a:.0f} MB vs python {b:.0f} MB" for label, a, b in pairs)


def accasim_runs(folder: Path, args: argparse.Namespace) -> list[Run]:
    """The AccaSim case's runs: ours (native) and AccaSim's driver (``bench_accasim.py``)
    on HPC2N, its plain-text copy and system written into ``folder`` (``--smoke``: the
    header and the first jobs only)."""
    trace = traces_dir(ROOT) / TRACES["hpc2n"]
    nodes, cores = bench_accasim.swf_machine(trace)
    workload, system = bench_accasim.prepare(trace, folder, nodes, cores)
    if args.smoke:
        lines = workload.read_text().splitlines(keepends=True)
        head = [x for x in lines if x.startswith(";")]
        body = [x for x in lines if not x.startswith(";")][:SMOKE_JOBS]
        workload.write_text("".join(head + body))
    driver, out = folder / "accasim_driver.py", folder / "accasim.json"
    driver.write_text(bench_accasim.DRIVER)
    return [Run("native", simulate(str(trace), "easy", "native",
                                   f"0:{SMOKE_JOBS}" if args.smoke else None), engine="native"),
            Run("accasim", [args.accasim_python, str(driver), str(workload), str(system),
                            str(folder / "accasim-results"), str(out), "1", "1"],
                "accasim", result=out, repeat=1 if args.smoke else args.accasim_repeat)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", nargs="+", default=None,
                        help="case names (default: all), e.g. easy-hpc2n sacct-replay")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (best kept)")
    parser.add_argument("--python-repeat", type=int, default=None,
                        help="runs of the Python engine (default: --repeat)")
    parser.add_argument("--accasim-python", default=None,
                        help="the Python of a throwaway venv with accasim==1.1.3 (see "
                             "bench_accasim.py); without it the AccaSim case is skipped")
    parser.add_argument("--accasim-repeat", type=int, default=1,
                        help="runs of AccaSim (best kept; it takes minutes)")
    parser.add_argument("--smoke", action="store_true",
                        help="small slices, once each: checks the commands, not the targets")
    args = parser.parse_args()
    repeat = 1 if args.smoke else args.repeat
    python_repeat = 1 if args.smoke else (args.python_repeat or repeat)
    if repeat < 1 or python_repeat < 1:
        parser.error("--repeat and --python-repeat must be >= 1")
    minimal = None if args.smoke else build_minimal()
    table = cases(args.smoke, minimal)
    names = [c.name for c in table]
    unknown = sorted(set(args.cases or ()) - set(names))
    if unknown:
        parser.error(f"unknown case {unknown[0]!r}; the cases: {', '.join(names)}")
    chosen = [c for c in table if args.cases is None or c.name in args.cases]
    if args.accasim_python is None:
        chosen = [c for c in chosen if c.name != "accasim-hpc2n"]
        print("accasim-hpc2n: skipped (no --accasim-python)")
    else:
        bench_accasim.check_accasim(args.accasim_python)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; best of "
          f"{repeat} (python: {python_repeat}){'; SMOKE: small slices' if args.smoke else ''}")
    print(f"{'case':<20} {'run':<20} {'engine':<8} {'wall s':>8} {'sim s':>8} {'RSS MB':>7} "
          f"{'jobs':>8} {'mean wait s':>12} {'sha':>12}")
    bad: list[str] = []
    verdicts: list[tuple[str, str, bool, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-targets-cluster-") as cluster:
        for case in chosen:
            if case.name == "accasim-hpc2n":
                case.runs = accasim_runs(Path(cluster), args)
            if case.name == "sacct-replay":
                n = SMOKE_JOBS if args.smoke else 100_000
                files = _write_cluster_apart(cluster, n)
                case.runs = engines("", lambda e, f=files: [
                    sys.executable, "-m", "dispatchlab.cli", "simulate", str(f["sacct"]),
                    "--platform", str(f["slurm.conf"]), "--dispatcher", "easy",
                    "--engine", e], "auto")
            run_case(case, repeat, python_repeat)
            bad += print_runs(case)
            ok, text = case.judge(case.results)
            verdicts.append((case.name, case.target, ok, text))
            rss = rss_verdict(case)
            if rss is not None:
                verdicts.append((case.name, "peak RSS native <= python", *rss))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print()
    print(f"{'case':<20} {'target':<34} {'verdict':<7} measured")
    for name, target, ok, text in verdicts:
        verdict = "smoke" if args.smoke else ("PASS" if ok else "FAIL")
        print(f"{name:<20} {target:<34} {verdict:<7} {text}")
    for line in bad:
        print(f"MISMATCH: {line}")
    if bad:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
