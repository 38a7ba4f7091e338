"""Galleguillos et al. 2017 (section 5.2) on the Eurora data: every 1,000-job historical instance
of the PA-HPC-SIM test archive, simulated separately on the 64-node Eurora machine under every
dispatcher x predictor of the seed (plus FIFO as a baseline), then pooled.

    python examples/seed000/reproduce.py [--archive ARCHIVE] [--out OUT]

Writes into OUT (default ``seed000-eurora``):

- ``instances.csv``: one row per instance x dispatcher x predictor (the study table
  of :mod:`dispatchlab.experiment.study`, with the instance name);
- ``study.csv`` / ``study.json``: the pooled table (rewritten after every instance, with
  the figures, so an interrupted run keeps the instances it finished). Wait and
  slowdown metrics are over the jobs of all instances together; ``utilization`` and
  ``steady_utilization`` are the mean over instances (ours: pooling times of overlapping
  instances would not mean anything);
- ``slowdown.png``, ``slowdown_by_class.png``, ``queue_length.png``: the paper's
  Figures 3-5 over the pooled jobs (each instance's times are shifted so that the
  instances follow one another; the queue figure leaves out the time when every
  combination's queue is empty, so the gaps between instances do not count).

The same thing for one instance (or any trace) is ``dispatchlab study predictions``.
"""

from __future__ import annotations

import argparse
import csv
import re
import time
from pathlib import Path

import numpy as np

from dispatchlab.core.references import traces_dir
from dispatchlab.experiment.study import (
    STUDY_METRICS,
    TABLE_COLUMNS,
    Combination,
    StudyResult,
    run_prediction_study,
)
from dispatchlab.metrics import summarize
from dispatchlab.platform import Platform
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.report.study import write_study
from dispatchlab.workload.eurora import archive_members
from dispatchlab.workload.load import load_trace

HERE = Path(__file__).resolve().parent
ARCHIVE = traces_dir(HERE.parents[1]) / "Eurora-PA-HPC-SIM-testdata.tar.gz"
DISPATCHERS = ("fifo", "sjf", "ljf", "easy", "prb", "hcp")
PREDICTORS = ("walltime", "history", "real")


def instances(archive: Path, size: int) -> list[str]:
    """The archive's historical instances of ``size`` jobs, in name order."""
    pattern = re.compile(rf"historical_traces/{size}/[^/]+\.log_crypt$")
    return sorted(m for m in archive_members(archive) if pattern.search(m))


def pooled(studies: list[StudyResult], tau: float, platform: Platform) -> StudyResult:
    """One study over the jobs of all ``studies`` (same combinations, in order), each
    shifted to start one hour after the previous one's last event."""
    runs = []
    submits = []
    offsets = []
    shift = 0
    for st in studies:
        offsets.append(shift - int(st.submit.min()))
        last = max(int(np.max(r.end)) for r in st.runs)
        shift += last - int(st.submit.min()) + 3600
    for st, off in zip(studies, offsets, strict=True):
        submits.append(st.submit + off)
    submit = np.concatenate(submits)
    capacity = platform.total_capacity()
    for k, first in enumerate(studies[0].runs):
        parts = [st.runs[k] for st in studies]
        start = np.concatenate([np.where(p.start >= 0, p.start + off, -1)
                                for p, off in zip(parts, offsets, strict=True)])
        end = np.concatenate([np.where(p.end >= 0, p.end + off, -1)
                              for p, off in zip(parts, offsets, strict=True)])
        status = np.concatenate([p.status for p in parts])
        units = np.concatenate([p.units_ for p in parts])
        resources = {r: np.concatenate([p.resources_[r] for p in parts])
                     for r in parts[0].resources_}
        summary = summarize(submit, start, end, status, units, resources, capacity, tau=tau)
        for key in ("utilization", "steady_utilization"):
            values = [p.summary.get(key) for p in parts if p.summary.get(key) is not None]
            summary[key] = float(np.mean(values)) if values else None
        summary["simulate_seconds"] = float(sum(p.summary["simulate_seconds"] for p in parts))
        cols = {name: np.concatenate([p.columns[name] for p in parts])
                for name in parts[0].columns}
        runs.append(Combination(first.dispatcher, first.predictor, start, end, status,
                                summary, cols))
    return StudyResult(studies[0].dispatchers, studies[0].predictors, tau, submit, runs,
                       source=f"{len(studies)} Eurora instances", platform=platform.describe())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path, default=ARCHIVE)
    parser.add_argument("--out", type=Path, default=Path("seed000-eurora"))
    parser.add_argument("--size", type=int, default=1000, help="instance size (jobs)")
    parser.add_argument("--tau", type=float, default=10.0)
    parser.add_argument("--dispatchers", default=",".join(DISPATCHERS))
    parser.add_argument("--predictors", default=",".join(PREDICTORS))
    args = parser.parse_args()
    if not args.archive.is_file():
        raise SystemExit(f"error: archive not found: {args.archive} (give --archive)")
    names = instances(args.archive, args.size)
    if not names:
        raise SystemExit(f"error: no {args.size}-job instance in {args.archive}")
    platform = eurora_platform()
    dispatchers = args.dispatchers.split(",")
    predictors = args.predictors.split(",")
    args.out.mkdir(parents=True, exist_ok=True)
    studies = []
    t0 = time.perf_counter()
    with open(args.out / "instances.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=["instance", *TABLE_COLUMNS])
        writer.writeheader()
        for k, member in enumerate(names):
            jobs = load_trace(f"{args.archive}#{member}")
            study = run_prediction_study(jobs, platform, dispatchers, predictors,
                                         tau=args.tau)
            for run in study.runs:  # what pooling needs besides the study's columns
                run.units_ = np.asarray(jobs["units"])
                run.resources_ = {r: np.asarray(v) for r, v in jobs.resources.items()}
            for row in study.rows():
                writer.writerow({"instance": Path(member).stem, **row})
            studies.append(study)
            fh.flush()
            # the pooled outputs so far (an interrupted run keeps what it did)
            paths = write_study(pooled(studies, args.tau, platform), args.out)
            print(f"[{k + 1}/{len(names)}] {Path(member).name}: {len(jobs):,} jobs "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
    study = pooled(studies, args.tau, platform)
    print("pooled table (means over all jobs; utilization: mean over instances):")
    shown = ("mean_wait", "mean_slowdown", "mean_bsld", "bsld_short", "bsld_medium",
             "bsld_long")
    print(f"{'dispatcher':<12}{'pred':<10}" + "".join(f"{k:>14}" for k in shown))
    for row in study.rows():
        print(f"{row['dispatcher']:<12}{row['predictor']:<10}"
              + "".join(f"{row[k]:>14.3f}" if row[k] is not None else f"{'-':>14}"
                        for k in shown))
    print("wrote", ", ".join(str(p) for p in [args.out / "instances.csv", *paths]))
    assert set(STUDY_METRICS) >= set(shown)


if __name__ == "__main__":
    main()
