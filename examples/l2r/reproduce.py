"""Reproduce Darrous's Table 3 (and Figures 3-4, and the cross-trace remark) with
``dispatchlab.rank``: train on each trace's first 70 % in both set-ups, evaluate on the
rest, and write ``results.json``, ``table.md`` and ``lists.png`` into ``--out``.

    python examples/l2r/reproduce.py [--traces FOLDER] --out l2r-results [--ablation]

``--ablation`` adds the controlled rows (:data:`ABLATION`): the authors' set-up (their
cleaning, machine sizes) with the leak-free ``causal`` features, and the ``causal``
set-up with the authors' leaky ``seed`` features, so each row differs from a main row
in the features alone. ``--variants`` runs only the rows named.

Every number comes from this run; nothing is copied except the paper's own column
(``SEED``, its Table 3). Label simulations are stored in ``OUT/work/<trace>/<setup>``
(campaign databases), so a second run with another learner only re-fits.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

#: trace file, the paper's list count K (its Table 2)
TRACES: dict[str, tuple[str, int]] = {
    "KTH-SP2": ("KTH-SP2-1996-2.1-cln.swf.gz", 256),
    "CTC-SP2": ("CTC-SP2-1996-3.1-cln.swf.gz", 256),
    "SDSC-SP2": ("SDSC-SP2-1998-4.2-cln.swf.gz", 512),
    "SDSC-BLUE": ("SDSC-BLUE-2000-4.2-cln.swf.gz", 1024),
    "CEA-Curie": ("CEA-Curie-2011-2.1-cln.swf.gz", 1024),
}
#: the paper's Table 3: AVGbsld of EASY+BF (best of FCFS and SLD) and of L2R on the test set
SEED: dict[str, tuple[float, float]] = {
    "KTH-SP2": (34.74, 21.45), "CTC-SP2": (35.48, 21.13), "SDSC-SP2": (82.24, 60.82),
    "SDSC-BLUE": (29.60, 17.53), "CEA-Curie": (24.08, 2.65),
}
SETUPS = ("seed", "causal")
#: row name -> (set-up, feature set); the main rows use each set-up's own features
VARIANTS: dict[str, tuple[str, str]] = {
    "seed": ("seed", "seed"),
    "causal": ("causal", "causal"),
    "seed+causal-features": ("seed", "causal"),
    "causal+seed-features": ("causal", "seed"),
}
#: the ablation rows added by ``--ablation``
ABLATION: tuple[str, ...] = ("seed+causal-features", "causal+seed-features")


def run_one(traces: Path, out: Path, name: str, setup: str, lists: int,
            workers: int, features: str | None = None) -> dict:
    """Train and evaluate one row; ``features`` defaults to the set-up's own. The label
    simulations (``OUT/work/<trace>/<setup>``) do not depend on the features, so the
    rows of one set-up share them."""
    from dispatchlab.experiment.l2r.pipeline import evaluate, train

    features = features or setup
    variant = setup if features == setup else f"{setup}+{features}-features"
    path = traces / TRACES[name][0]
    work = out / "work" / name / setup
    model_path = out / "models" / f"{name}-{variant}-K{lists}.json"
    model_path.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    result = train(path, lists=lists, setup=setup, features=features, work=work,
                   workers=workers)
    result.model.save(model_path)
    t1 = time.perf_counter()
    ev = evaluate(path, model_path, work=work)
    fcfs = ev.value("policy:fcfs")
    best = ev.best_policy
    return {
        "trace": name, "setup": setup, "features": features, "variant": variant,
        "lists": lists, "model": str(model_path),
        "train_seconds": t1 - t0, "label_seconds": result.seconds["labels"],
        "fit_seconds": result.seconds["fit"], "best_per_list": result.best,
        "test_rows": list(ev.test_rows), "fcfs": fcfs, "best_policy": best.label,
        "best": best.avg_bsld, "l2r": ev.value("l2r"), "random": ev.value("random"),
        "improvement_vs_best": ev.improvement(best.avg_bsld),
        "improvement_vs_fcfs": ev.improvement(fcfs),
        "rows": [r.__dict__ for r in ev.rows],
    }


def transfer(traces: Path, out: Path, results: list[dict], names: list[str]) -> list[dict]:
    """Models trained on one trace (causal set-up) evaluated on the others' test parts,
    with the evaluated trace's own K."""
    from dispatchlab.experiment.l2r.pipeline import evaluate

    rows = []
    models = {r["trace"]: r["model"] for r in results if r["variant"] == "causal"}
    for src in names:
        for dst in names:
            if src == dst or src not in models:
                continue
            ev = evaluate(traces / TRACES[dst][0], models[src], lists=TRACES[dst][1],
                          work=out / "work" / dst / "causal")
            own = next((r for r in results if r["trace"] == dst
                        and r["variant"] == "causal"), None)
            if own is None:
                continue
            rows.append({"model": src, "trace": dst, "l2r": ev.value("l2r"),
                         "own_l2r": own["l2r"], "best": own["best"]})
    return rows


def list_sweep(traces: Path, out: Path, name: str, ks: list[int], workers: int) -> list[dict]:
    rows = []
    for setup in SETUPS:
        for k in ks:
            r = run_one(traces, out, name, setup, k, workers)
            rows.append({k2: r[k2] for k2 in ("trace", "setup", "lists", "train_seconds",
                                               "label_seconds", "fit_seconds", "l2r",
                                               "best")})
    return rows


def plot_sweep(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.4))
    for setup in SETUPS:
        sel = [r for r in rows if r["setup"] == setup]
        ks = [r["lists"] for r in sel]
        a.plot(ks, [r["l2r"] for r in sel], marker="o", label=f"L2R, {setup} set-up")
        b.plot(ks, [r["train_seconds"] for r in sel], marker="o", label=f"{setup} set-up")
    if rows:
        a.axhline(rows[0]["best"], color="grey", ls="--", label="best policy")
    a.set(xscale="log", xlabel="training lists K", ylabel="test AVGbsld",
          title=f"{rows[0]['trace'] if rows else ''}: test AVGbsld vs K")
    b.set(xscale="log", xlabel="training lists K", ylabel="training time (s)",
          title="training time vs K (2 workers)")
    ks = sorted({r["lists"] for r in rows})
    for ax in (a, b):
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
    a.legend(fontsize=8)
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def table(results: list[dict]) -> str:
    head = ("| trace | K | seed: EASY+BF -> L2R (impr.) | set-up | EASY FCFS | best policy "
            "| L2R | random | impr. vs best | impr. vs FCFS |\n"
            "|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in results:
        s_best, s_l2r = SEED[r["trace"]]
        lines.append(
            f"| {r['trace']} | {r['lists']} | {s_best:.2f} -> {s_l2r:.2f} "
            f"({s_best / s_l2r - 1:+.0%}) | {r['variant']} | {r['fcfs']:.2f} | "
            f"{r['best']:.2f} ({r['best_policy'].removeprefix('policy:')}) | "
            f"{r['l2r']:.2f} | {r['random']:.2f} | {r['improvement_vs_best']:+.0%} | "
            f"{r['improvement_vs_fcfs']:+.0%} |")
    return "\n".join(lines)


def main() -> None:
    from dispatchlab.core.references import traces_dir

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=Path,
                        default=traces_dir(Path(__file__).resolve().parents[2]))
    parser.add_argument("--out", type=Path, default=Path("l2r-results"))
    parser.add_argument("--only", nargs="*", default=list(TRACES), choices=list(TRACES))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sweep", nargs="*", type=int, default=[128, 256, 512, 1024],
                        help="K values of the list sweep on SDSC-BLUE (none: skip)")
    parser.add_argument("--variants", nargs="*", default=list(SETUPS),
                        choices=list(VARIANTS),
                        help="rows per trace: a set-up with its own features, or "
                        "SETUP+FEATURES-features (default: seed causal)")
    parser.add_argument("--ablation", action="store_true",
                        help=f"add the rows that change the feature set alone "
                        f"({', '.join(ABLATION)})")
    args = parser.parse_args()
    variants = list(args.variants) + [v for v in ABLATION
                                      if args.ablation and v not in args.variants]
    args.out.mkdir(parents=True, exist_ok=True)
    results = []
    for name in args.only:
        for variant in variants:
            setup, features = VARIANTS[variant]
            r = run_one(args.traces, args.out, name, setup, TRACES[name][1], args.workers,
                        features)
            results.append(r)
            print(f"{name} {variant}: FCFS {r['fcfs']:.2f} best {r['best']:.2f} "
                  f"L2R {r['l2r']:.2f} random {r['random']:.2f} "
                  f"({r['train_seconds']:.0f} s training)", flush=True)
            (args.out / "results.json").write_text(json.dumps({"table": results}, indent=1))
    moved = transfer(args.traces, args.out, results,
                     [n for n in ("KTH-SP2", "CTC-SP2", "SDSC-SP2") if n in args.only])
    sweep = list_sweep(args.traces, args.out, "SDSC-BLUE", args.sweep, args.workers) \
        if args.sweep and "SDSC-BLUE" in args.only else []
    if sweep:
        plot_sweep(sweep, args.out / "lists.png")
    (args.out / "results.json").write_text(json.dumps(
        {"table": results, "transfer": moved, "sweep": sweep}, indent=1))
    (args.out / "table.md").write_text(table(results) + "\n")
    print(table(results))
    for m in moved:
        print(f"transfer {m['model']} -> {m['trace']}: L2R {m['l2r']:.2f} (own model "
              f"{m['own_l2r']:.2f}, best policy {m['best']:.2f})")


if __name__ == "__main__":
    main()
