"""Report benchmark: the whole ``write_report`` and the part its statistics take.

Opens a results database, times :func:`dispatchlab.report.html.write_report` (median of
``--repeat``), and separately the statistics table at the top of the report (selecting
the runs with their code check, grouping them, bootstrapping every configuration's
metrics and paired differences, rendering the HTML), each in this process after one
warm-up call (imports such as ``scipy.stats`` are paid once per process and reported as
the warm-up time).

Target (issue "trustworthy comparisons"): the statistics add under 1 s to the report of
the shipped prediction-study campaign (``examples/campaigns/prediction-study.toml``).

Usage::

    dispatchlab campaign run examples/campaigns/prediction-study.toml --database ps.duckdb
    python benchmarks/bench_report.py ps.duckdb
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def _statistics_seconds(db: Path) -> float:
    from dispatchlab.experiment.campaign import store
    from dispatchlab.experiment.campaign.groups import group_runs
    from dispatchlab.report.html import _statistics_section

    t0 = time.perf_counter()
    con = store.open_read(db)
    try:
        runs, _ = store.select_runs(con)
    finally:
        con.close()
    done = [r for r in runs if r["status"] == "done"]
    groups = group_runs(done)
    _statistics_section(done, groups[0].dispatcher if groups else None)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from dispatchlab.report.html import write_report

    warm = _statistics_seconds(args.db)
    stats = [_statistics_seconds(args.db) for _ in range(args.repeat)]
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            t0 = time.perf_counter()
            write_report(args.db, Path(tmp) / f"r{i}")
            walls.append(time.perf_counter() - t0)
    print(f"{args.db}: report median {statistics.median(walls):.2f} s (min {min(walls):.2f}, "
          f"max {max(walls):.2f}); statistics part median {statistics.median(stats):.3f} s "
          f"(max {max(stats):.3f}; first call with imports {warm:.3f} s)")


if __name__ == "__main__":
    main()
