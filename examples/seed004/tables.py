"""The Borghesi et al. 2018 tables (docs/reproductions/borghesi2018.md) from finished
seed004-* campaign databases.

    python examples/seed004/tables.py examples/campaigns/seed004-synthetic.duckdb [...]

For each database, per instance family (a trace entry, or the members of one archive
pattern: ``hist100/...``) and budget, prints a Markdown table of the mean over
instances of each run's mean BSLD (Borghesi et al. 2018 eq. 3, ``mean_power_bsld``) per method,
then per method the share of runs that went above the budget at some time, the mean
share of time above it and the largest excess; then the comparisons that page quotes:
DEC against LS (share of runs where DEC's BSLD is lower, and DEC's share of solver
passes that improved on LS's plan), DEC+RAPL against the best other method, and (for
the misprediction campaign) the BSLD change of the tighter caps against the plain
method with under-predicted power. Runs are matched on the same instance (trace,
workload) and budget. ``--include-outdated`` keeps runs of older code.
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

from dispatchlab.experiment.campaign.store import open_read, select_runs


def family(trace: str) -> str:
    return str(trace).split("/", 1)[0]


def num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def cap_key(cap: str) -> float:
    try:
        return -float(str(cap).rstrip("%"))
    except ValueError:
        return 1.0


def fmt(v: float | None, pct: bool = False, signed: bool = False) -> str:
    if v is None:
        return "-"
    if pct:
        return f"{v * 100:+.1f} %" if signed else f"{v * 100:.1f} %"
    return f"{v:.2f}" if v < 100 else f"{v:.0f}"


def report(db: Path, include_outdated: bool) -> None:
    con = open_read(db)
    try:
        runs, outdated = select_runs(con, include_outdated=include_outdated)
    finally:
        con.close()
    if outdated:
        print(f"note: {len(outdated)} outdated runs left out", file=sys.stderr)
    done = [r for r in runs if r["status"] == "done" and r.get("cap") is not None]
    failed = [r for r in runs if r["status"] != "done"]
    print(f"## {db.name}: {len(done)} runs done, {len(failed)} failed\n")
    methods = list(dict.fromkeys(r["dispatcher"] for r in done))
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in done:
        groups[(family(r["trace"]), r.get("power_predictor"), r["cap"])].append(r)
    fams = list(dict.fromkeys((f, p) for f, p, _ in groups))
    for fam, pp in fams:
        caps = sorted({c for f, p, c in groups if (f, p) == (fam, pp)}, key=cap_key)
        print(f"### {fam}, power predictor {pp}: mean BSLD\n")
        print("| budget | " + " | ".join(methods) + " |")
        print("|---" * (len(methods) + 1) + "|")
        for c in caps:
            by = defaultdict(list)
            for r in groups[(fam, pp, c)]:
                by[r["dispatcher"]].append(num(r.get("mean_power_bsld")))
            print(f"| {c} | " + " | ".join(fmt(mean(by[m])) if by[m] else "-"
                                           for m in methods) + " |")
        print(f"\n### {fam}, power predictor {pp}: above the budget "
              "(runs above at some time / mean time share / largest excess)\n")
        print("| budget | " + " | ".join(methods) + " |")
        print("|---" * (len(methods) + 1) + "|")
        for c in caps:
            cells = []
            for m in methods:
                rs = [r for r in groups[(fam, pp, c)] if r["dispatcher"] == m]
                above = [num(r.get("cap_time_above_share")) for r in rs]
                above = [a for a in above if a is not None]
                excess = [num(r.get("cap_max_excess")) for r in rs]
                excess = [e for e in excess if e is not None]
                if not above:
                    cells.append("-")
                    continue
                runs_above = sum(a > 0 for a in above) / len(above)
                cells.append(f"{fmt(runs_above, True)} / {fmt(mean(above), True)} / "
                             f"{fmt(max(excess) if excess else None, True)}")
            print(f"| {c} | " + " | ".join(cells) + " |")
        print()
    compare(done)


def compare(done: list[dict]) -> None:
    by_slot: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for r in done:
        by_slot[(r["trace"], r.get("workload"), r.get("power_predictor"), r["cap"])][
            r["dispatcher"]] = r
    lines = []
    dec = [r for r in done if r.get("dispatcher_name") == "dec"]
    if dec:
        means = [num(r.get("mean_decision_time")) for r in dec]
        p99 = [num(r.get("p99_decision_time")) for r in dec]
        peak = [num(r.get("max_decision_time")) for r in dec]
        lines.append(f"- DEC decision time (wall s, {len(dec)} runs): mean of the runs' means "
                     f"{mean(means):.4f}, largest p99 {max(x for x in p99 if x is not None):.3f}"
                     f", largest {max(x for x in peak if x is not None):.3f}")
    pairs = [(s, m["dec"], m["ls"]) for s, m in by_slot.items() if "dec" in m and "ls" in m]
    if pairs:
        better = [num(d.get("mean_power_bsld")) < num(ls.get("mean_power_bsld")) - 1e-9
                  for _, d, ls in pairs]
        worse = [num(d.get("mean_power_bsld")) > num(ls.get("mean_power_bsld")) + 1e-9
                 for _, d, ls in pairs]
        improved = mean([num(d.get("cp_improved_share")) for _, d, _ in pairs])
        rel = mean([num(d.get("mean_power_bsld")) / num(ls.get("mean_power_bsld")) - 1
                    for _, d, ls in pairs])
        lines.append(f"- DEC vs LS ({len(pairs)} runs): DEC lower BSLD in "
                     f"{fmt(sum(better) / len(pairs), True)}, higher in "
                     f"{fmt(sum(worse) / len(pairs), True)}, mean change "
                     f"{fmt(rel, True, True)}; share of DEC's solver passes that improved "
                     f"on LS's plan: {fmt(improved, True)}")
    combo = [(s, m) for s, m in by_slot.items() if "dec+rapl" in m and len(m) > 1]
    if combo:
        gains = []
        for _, m in combo:
            own = num(m["dec+rapl"].get("mean_power_bsld"))
            others = [num(r.get("mean_power_bsld")) for k, r in m.items()
                      if k != "dec+rapl" and not k.endswith("-0")]
            others = [o for o in others if o is not None]
            if own is not None and others:
                gains.append(own / min(others) - 1)
        lines.append(f"- DEC+RAPL against the best other method on the same instance and "
                     f"budget ({len(gains)} runs): mean BSLD change {fmt(mean(gains), True, True)}")
    for base in ("ls", "dec"):
        for tight in ("u99", "u95"):
            rel = []
            for (_trace, _wl, pp, _cap), m in by_slot.items():
                if pp == "real" or base not in m or f"{base}-{tight}" not in m:
                    continue
                b = num(m[base].get("mean_power_bsld"))
                t = num(m[f"{base}-{tight}"].get("mean_power_bsld"))
                if b and t:
                    rel.append(t / b - 1)
            if rel:
                lines.append(f"- {base} with cap x0.{tight[1:]} vs x1 under misprediction "
                             f"({len(rel)} runs): mean BSLD change {fmt(mean(rel), True, True)}")
    if lines:
        print("### Comparisons\n")
        print("\n".join(lines))
        print()


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--include-outdated"]
    if not args:
        args = ["examples/campaigns/seed004-synthetic.duckdb"]
    for db in args:
        report(Path(db), "--include-outdated" in sys.argv)


if __name__ == "__main__":
    main()
