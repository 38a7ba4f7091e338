"""Regenerates the "Validation against the recorded schedule" table of docs/reference/validation.md.

Runs ``dispatchlab validate`` on shipped archive traces that record their waits, under
textbook dispatchers (FCFS: ``fifo``, EASY, conservative backfilling),
each trace on its header's machine (pooled cores), one run at a time, and writes
``OUT/<trace>-<dispatcher>.json`` / ``.png`` and ``OUT/table.md`` (the documentation's
tables). A run whose JSON exists is not repeated (``--force`` repeats it), so the
script can be stopped and started again.

    python examples/validate_traces.py [--out out/validation] [--only CEA-Curie]

The traces come from the folder of :func:`dispatchlab.core.references.traces_dir`
(``$DISPATCHLAB_TRACES``, see docs/explanation/references.md). Every number of the tables is
read from the JSON files of the runs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from dispatchlab.core.references import traces_dir
from dispatchlab.workload.archive import percent

#: the traces, the least-cleaned logs first: UniLu-Gaia and RICC are not cleaned, KTH,
#: CTC and SDSC-BLUE barely; SDSC-SP2, HPC2N and CEA-Curie (Slurm) heavily. (The LLNL
#: logs, also Slurm, record no wait: field 3 is -1 in every line.)
TRACES: tuple[str, ...] = (
    "UniLu-Gaia-2014-1.swf.gz", "RICC-2010-2.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz",
    "CTC-SP2-1996-3.1-cln.swf.gz", "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "SDSC-SP2-1998-4.2-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz",
    "CEA-Curie-2011-2.1-cln.swf.gz")
#: the runs, in order: FCFS and EASY on every trace, then conservative backfilling on
#: all but RICC (448,000 jobs and a long simulated queue: it had not ended after 10
#: minutes here)
RUNS: list[tuple[str, str]] = (
    [(t, d) for t in TRACES for d in ("fifo", "easy")]
    + [(t, "conservative") for t in TRACES if not t.startswith("RICC")])


def _stem(trace: str) -> str:
    return trace.split(".swf")[0]


def run_one(trace: Path, dispatcher: str, out: Path, force: bool) -> Path | None:
    """One ``dispatchlab validate`` run (skipped when its JSON exists); None when it
    failed (its ``error:`` line is printed, the other runs go on)."""
    target = out / f"{_stem(trace.name)}-{dispatcher}.json"
    if target.exists() and not force:
        return target
    cmd = [sys.executable, "-m", "dispatchlab.cli", "validate", str(trace),
           "--dispatcher", dispatcher, "--json", str(target),
           "--plot", str(target.with_suffix(".png"))]
    print("+", " ".join(cmd[2:]), flush=True)
    if subprocess.run(cmd).returncode != 0:
        print(f"run failed: {trace.name} {dispatcher}", file=sys.stderr)
        return None
    return target


def _h(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 3600:.2f}"


def _r(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _removed(cleaning: dict) -> str:
    if cleaning["removed"] is None:
        return "unknown"
    if cleaning["removed"] == 0:
        return f"none (of {cleaning['total']:,})"
    return (f"{percent(cleaning['removed_share'])} % ({cleaning['removed']:,} of "
            f"{cleaning['total']:,})")


def tables(results: list[tuple[str, str, dict]]) -> str:
    """The documentation's tables (markdown) from the runs' JSON documents."""
    lines = ["| trace (scheduler named by the header) | removed by cleaning | dispatcher "
             "| jobs compared | recorded mean wait (h) | simulated mean wait (h) "
             "| MAE (h) | median error (h) | Pearson | Spearman | rolling MAPE (%) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for trace, dispatcher, doc in results:
        o, c = doc["overall"], doc["counts"]
        mape = doc["rolling"]["mape_percent"]
        # the scheduler as the header names it, without its web address
        sched = f" ({doc['scheduler'].split(' (')[0]})" if doc["scheduler"] else ""
        lines.append(
            f"| {trace}{sched} | {_removed(doc['cleaning'])} | {dispatcher} "
            f"| {c['compared']:,} | {_h(o['recorded_mean_wait'])} "
            f"| {_h(o['simulated_mean_wait'])} | {_h(o['mae'])} "
            f"| {_h(o['error_quantiles']['p50'])} | {_r(o['pearson'])} "
            f"| {_r(o['spearman'])} | {'-' if mape is None else f'{mape:.1f}'} |")
    lines += ["", "Per queue or partition (EASY; groups with at least 2 % of the jobs):", "",
              "| trace | group | jobs | recorded mean wait (h) | simulated mean wait (h) "
              "| MAE (h) | Spearman |", "|---|---|---:|---:|---:|---:|---:|"]
    for trace, dispatcher, doc in results:
        if dispatcher != "easy" or len(doc["groups"]) < 2:
            continue
        for g in doc["groups"]:
            if g["jobs"] < 0.02 * doc["counts"]["compared"]:
                continue
            lines.append(f"| {trace} | {doc['group_by']} {g['group']} | {g['jobs']:,} "
                         f"| {_h(g['recorded_mean_wait'])} | {_h(g['simulated_mean_wait'])} "
                         f"| {_h(g['mae'])} | {_r(g['spearman'])} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("out/validation"))
    parser.add_argument("--only", default=None, help="runs whose trace name has this text")
    parser.add_argument("--force", action="store_true", help="repeat existing runs")
    args = parser.parse_args(argv)
    traces = traces_dir(Path(__file__).resolve().parents[1])
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for name, dispatcher in RUNS:
        if args.only and args.only not in name:
            continue
        path = run_one(traces / name, dispatcher, args.out, args.force)
        if path is not None:
            results.append((_stem(name), dispatcher, json.loads(path.read_text())))
    order = {(_stem(t), d): i for i, (t, d) in enumerate(
        (t, d) for t in TRACES for d in ("fifo", "easy", "conservative"))}
    results.sort(key=lambda r: order[(r[0], r[1])])
    text = tables(results)
    (args.out / "table.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
