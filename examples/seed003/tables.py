"""The Carastan-Santos et al. 2024 tables (docs/reproductions/carastan-santos2024.md)
from a finished seed003 campaign database.

    dispatchlab campaign run examples/campaigns/seed003.toml --workers 2
    python examples/seed003/tables.py examples/campaigns/seed003.duckdb [--include-outdated]

Prints two Markdown tables: (1) section 6.5, per check method and power predictor, the
means over (workload, cap) runs (the paper averages "by (workload, powercap) group") of
the cap under-use, the share of runs above the cap at some time, the largest excess
over the cap, the time above it, and the mean turnaround change against uncapped EASY on
the same workload; the "own" values leave out the times when the jobs running at the
window's opening alone were above the cap (none here: the windows open on an empty
machine). (2) section 6.6, the four algorithms with gaussian_99 and real power at a cap
of 50 %: mean power / cap, mean and max turnaround change against uncapped EASY, the
share of jobs started in the window, and the mean wait of the largest jobs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from dispatchlab.experiment.campaign.store import open_read, select_runs
from dispatchlab.experiment.statistics import power_rows

CHECKS = [("pc-mean", "naive", "naive"), ("pc-max", "history", "max"),
          ("pc-max", "real", "max"), ("pc-mean", "history", "mean"),
          ("pc-mean", "real", "mean"), ("pc-g68", "history", "gaussian_68"),
          ("pc-g68", "real", "gaussian_68"), ("pc-g95", "history", "gaussian_95"),
          ("pc-g95", "real", "gaussian_95"), ("pc-g99", "history", "gaussian_99"),
          ("pc-g99", "real", "gaussian_99")]
ALGORITHMS = [("pc-g99", "EASY FCFS"), ("saf-g99", "EASY SAF"),
              ("ks-wait-g99", "Knapsack Wait"), ("ks-stretch-g99", "Knapsack Stretch")]


def pct(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "-"
    return f"{v * 100:+.1f} %" if signed else f"{v * 100:.1f} %"


def mean(values: list[float]) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--include-outdated"]
    db = Path(args[0] if args else "examples/campaigns/seed003.duckdb")
    con = open_read(db)
    try:
        runs, outdated = select_runs(con, include_outdated="--include-outdated" in sys.argv)
        jobs = con.execute(
            "SELECT r.dispatcher, r.power_predictor, r.cap, avg(j.wait) AS wait "
            "FROM jobs j JOIN runs r USING (run_key) WHERE j.procs > 256 "
            "AND j.submit_time >= r.series_start GROUP BY ALL").fetchall()
    finally:
        con.close()
    if outdated:
        print(f"note: {len(outdated)} outdated runs left out", file=sys.stderr)
    # per run: its change against the uncapped EASY run on the same workload
    base = {r["workload"]: r for r in runs
            if r["dispatcher"] == "easy" and r["cap"] == "none" and r["status"] == "done"}

    def change(r, key):
        b = base.get(r["workload"])
        if b is None or r.get(key) is None or not b.get(key):
            return None
        return r[key] / b[key] - 1

    print("| method | power predictor | runs | under-use | runs above cap | largest excess "
          "| time above cap | mean turnaround vs EASY |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for disp, pp, label in CHECKS:
        mine = [r for r in runs if r["dispatcher"] == disp and r["power_predictor"] == pp
                and r["cap"] not in (None, "none") and r["status"] == "done"]
        if not mine:
            continue
        print(f"| {label} | {pp} | {len(mine)} "
              f"| {pct(mean([r['cap_mean_underuse'] for r in mine]))} "
              f"| {pct(mean([1.0 if r['cap_time_above_share'] > 0 else 0.0 for r in mine]))} "
              f"| {pct(mean([r['cap_max_excess'] for r in mine]))} "
              f"| {pct(mean([r['cap_time_above_share'] for r in mine]))} "
              f"| {pct(mean([change(r, 'mean_turnaround') for r in mine]), True)} |")
    print()
    big = {(d, pp, cap): w for d, pp, cap, w in jobs}
    rows = {(r["dispatcher"], r["power_predictor"], r["cap"]): r
            for r in power_rows(runs)}
    easy_big = big.get(("easy", "real", "none"))
    print("| algorithm (gaussian_99, real, cap 50 %) | power / cap | mean turnaround vs EASY "
          "| max turnaround vs EASY | jobs started in window | mean wait of jobs > 256 "
          "nodes |")
    print("|---|---:|---:|---:|---:|---:|")
    for disp, label in ALGORITHMS:
        r = rows.get((disp, "real", "50%"))
        if r is None:
            continue
        w = big.get((disp, "real", "50%"))
        print(f"| {label} | {pct(r['cap_mean_share'])} "
              f"| {pct(r['mean_turnaround_change'], True)} "
              f"| {pct(r['max_turnaround_change'], True)} "
              f"| {pct(r['window_start_share'])} "
              f"| {'-' if w is None else f'{w / 3600:.1f} h'} |")
    if easy_big is not None:
        print(f"\n(uncapped EASY: mean wait of jobs > 256 nodes {easy_big / 3600:.1f} h)")


if __name__ == "__main__":
    main()
