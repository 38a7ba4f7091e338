"""Borghesi et al. 2018's budgets read both ways: one campaign with ``cap_base =
"own-peak"`` (each method's budget a share of its own uncapped peak) and the same
campaign with ``cap_base = "bf-peak"`` (every method's a share of one uncapped ``bf``
run's peak), e.g. ``examples/campaigns/borghesi2018-bases*.toml``.

    python examples/seed004/bases.py OWN_PEAK.duckdb BF_PEAK.duckdb

Prints, per instance family (trace entry):

* each method's uncapped peak relative to ``bf``'s on the same instance (the runs'
  ``cap_base_w``: mean, min and max over instances);
* the mean BSLD (Borghesi et al. 2018 eq. 3, ``mean_power_bsld``) per budget and
  method under both bases, and under ``own-peak`` the mean budget in watts as a share of
  ``bf``'s peak (equal percentages are not equal watts);
* the methods ranked by mean BSLD at each budget under each base (``bf-peak``: equal
  watts for every method; ``own-peak``: equal percentages), and whether it changes;
* how many paired runs (same instance, budget, method) have identical metrics under
  both bases.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from dispatchlab.experiment.campaign.store import open_read, select_runs


def load(db: Path) -> dict[tuple, dict]:
    """(trace, seed, cap, dispatcher) -> run row (done runs with a cap)."""
    con = open_read(db)
    try:
        runs, _ = select_runs(con)
    finally:
        con.close()
    out = {}
    for r in runs:
        if r["status"] == "done" and r.get("cap") is not None:
            r["base_w"] = json.loads(r["summary"]).get("cap_base_w")
            out[(r["trace"], r["seed"], r["cap"], r["dispatcher"])] = r
    return out


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def share(cap: str) -> float:
    return float(str(cap).rstrip("%")) / 100


def ranking(bsld: dict[str, float]) -> str:
    return " < ".join(sorted(bsld, key=bsld.__getitem__))


def main(own_db: Path, bf_db: Path) -> None:
    own, bf = load(own_db), load(bf_db)
    keys = sorted(set(own) & set(bf))
    print(f"{len(own)} own-peak runs, {len(bf)} bf-peak runs, {len(keys)} paired\n")
    for trace in dict.fromkeys(k[0] for k in keys):
        ks = [k for k in keys if k[0] == trace]
        methods = list(dict.fromkeys(k[3] for k in ks))
        caps = sorted({k[2] for k in ks}, key=lambda c: -share(c))
        seeds = sorted({k[1] for k in ks})
        print(f"### {trace} ({len(seeds)} instances)\n")
        ratio: dict[str, list[float]] = defaultdict(list)
        for k in ks:
            if k[2] == caps[0]:
                ratio[k[3]].append(own[k]["base_w"] / bf[k]["base_w"])
        print("uncapped peak / bf's uncapped peak (mean, min-max): " + "; ".join(
            f"{m} {mean(ratio[m]):.3f} ({min(ratio[m]):.3f}-{max(ratio[m]):.3f})"
            for m in methods) + "\n")
        print("| budget | " + " | ".join(methods) + " |")
        print("|---" * (len(methods) + 1) + "|")
        ranks = {}
        for c in caps:
            cells, b_own, b_bf = [], {}, {}
            for m in methods:
                pair = [(own[k], bf[k]) for k in ks if k[2] == c and k[3] == m]
                b_own[m] = mean(o["mean_power_bsld"] for o, _ in pair)
                b_bf[m] = mean(b["mean_power_bsld"] for _, b in pair)
                watts = mean(o["base_w"] * share(c) / b["base_w"] for o, b in pair)
                cells.append(f"{b_own[m]:.2f} / {b_bf[m]:.2f} ({watts * 100:.0f} %)")
            ranks[c] = (ranking(b_own), ranking(b_bf))
            print(f"| {c} | " + " | ".join(cells) + " |")
        print("\ncells: mean BSLD own-peak / bf-peak (own-peak's budget in % of bf's "
              "uncapped peak)\n")
        for c in caps:
            o, b = ranks[c]
            same = "same" if o == b else "CHANGES"
            print(f"- {c}: own-peak {o}; bf-peak {b} ({same})")
        same_runs = sum(
            all(own[k].get(f) == bf[k].get(f) for f in ("mean_power_bsld", "mean_wait"))
            for k in ks)
        print(f"\nidentical metrics under both bases: {same_runs} of {len(ks)} paired runs")
        for m in methods:
            n = sum(own[k]["mean_power_bsld"] == bf[k]["mean_power_bsld"]
                    for k in ks if k[3] == m)
            print(f"  {m}: {n} of {sum(k[3] == m for k in ks)}")
        print()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python examples/seed004/bases.py OWN_PEAK.duckdb BF_PEAK.duckdb")
    main(Path(sys.argv[1]), Path(sys.argv[2]))
