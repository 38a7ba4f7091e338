"""``dispatchlab l2r train`` / ``l2r evaluate``: learning-to-rank queue order for EASY
(Darrous, learning-to-rank report; the pipeline is :mod:`dispatchlab.experiment.l2r.pipeline`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dispatchlab.cli.common import TRACE_ARG, console
from dispatchlab.core.components import _parse_untyped, parse_assignments
from dispatchlab.core.errors import InputError

SETUP_HELP = ("causal (default: submit-time features, default cleaning) | seed (the "
              "authors' set-up: pyss cleaning, machine sizes, the leaky test features)")


def _policies(text: str) -> list[str]:
    from dispatchlab.experiment.l2r.pipeline import check_policies

    return check_policies([p for p in text.split(",") if p.strip()] or [""])


def _default_work(path: Path) -> Path:
    return path.with_name(path.name + ".work")


@click.group("l2r")
def l2r_app() -> None:
    """Learning to rank the EASY queue (Darrous, learning-to-rank report): train a ranker, evaluate
    it."""


@l2r_app.command("train")
@TRACE_ARG
@click.option("--lists", "-K", type=int, required=True,
              help="contiguous training lists K (the paper: KTH/CTC 256, SDSC-SP2 512, "
                   "SDSC-BLUE and CEA-Curie 1024)")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="the model file to write (JSON)")
@click.option("--policies", default="fcfs,slowdown", show_default=True,
              help="EASY priorities the lists are simulated under: fcfs, slowdown, "
                   "largest, lcfs, smallest-slowdown, smallest")
@click.option("--features", default=None,
              help="feature set: causal | seed (default: the set-up's)")
@click.option("--learner", default="ranksvm", show_default=True,
              help="ranksvm (the paper's pairwise RankSVM) | lambdamart (LightGBM)")
@click.option("--learner-param", "-L", "learner_params", multiple=True, metavar="KEY=VALUE",
              help="a learner parameter, e.g. -L C=3 -L max_pairs_per_list=2000")
@click.option("--setup", default="causal", show_default=True, help=SETUP_HELP)
@click.option("--workers", type=int, default=None,
              help="local worker processes for the label simulations (default: cores)")
@click.option("--dask", default=None,
              help="run the label simulations on a Dask scheduler (tcp://host:port | local)")
@click.option("--work", type=click.Path(path_type=Path), default=None,
              help="folder for the label campaign and its database (default: MODEL.work; "
                   "re-used by later trainings on the same lists)")
def train_cmd(trace: Path, lists: int, out: Path, policies: str, features: str | None,
              learner: str, learner_params: tuple[str, ...], setup: str, workers: int | None,
              dask: str | None, work: Path | None) -> None:
    """Label TRACE's training lists by simulation and train a ranking model."""
    from dispatchlab.experiment.l2r.pipeline import train

    params = {k: _parse_untyped(v) for k, v in
              parse_assignments(learner_params, "--learner-param").items()}
    con = console()
    done = {"n": 0}

    def progress(finished: int, failed: int, total: int) -> None:
        done["n"] = finished
        if finished == total or finished % 256 == 0:
            con.print(f"label simulations: {finished}/{total} ({failed} failed)")

    result = train(trace, lists=lists, policies=_policies(policies), features=features,
                   learner=learner, learner_params=params, setup=setup,
                   work=work or _default_work(out), workers=workers, dask=dask,
                   on_progress=progress)
    result.model.save(out)
    s = result.model.summary
    con.print(f"model written to {out}: {s['learner']} on {result.model.feature_set} "
              f"features, {s['lists']} lists of {s['jobs_per_list']} jobs; best policy per "
              f"list: {', '.join(f'{k} {v}' for k, v in result.best.items())}; "
              f"{s['seconds']['labels']:.1f} s labelling, {s['seconds']['fit']:.1f} s "
              f"fitting, {s['seconds']['total']:.1f} s in all")


@l2r_app.command("evaluate")
@TRACE_ARG
@click.option("--model", "-m", "model", type=click.Path(path_type=Path), required=True,
              help="a model file written by l2r train")
@click.option("--lists", "-K", type=int, default=None,
              help="K of the split whose test part is simulated (default: the model's)")
@click.option("--setup", default=None, help=SETUP_HELP + " (default: the model's)")
@click.option("--features", default=None,
              help="refuse a model trained on another feature set (causal | seed)")
@click.option("--policies", default=None,
              help="the baselines (default: the model's training policies)")
@click.option("--random-seed", type=int, default=0, show_default=True,
              help="seed of the random-score control")
@click.option("--work", type=click.Path(path_type=Path), default=None,
              help="folder for the seed set-up's cleaned trace (default: MODEL.work)")
@click.option("--json", "json_out", type=click.Path(path_type=Path), default=None,
              help="also write the table as JSON")
def evaluate_cmd(trace: Path, model: Path, lists: int | None, setup: str | None,
                 features: str | None, policies: str | None, random_seed: int,
                 work: Path | None, json_out: Path | None) -> None:
    """Simulate TRACE's test part under EASY with the learned score and the baselines."""
    from rich.table import Table

    from dispatchlab.experiment.l2r.pipeline import evaluate

    if random_seed < 0:
        raise InputError(f"must be >= 0, got {random_seed}", field="--random-seed")
    ev = evaluate(trace, model, lists=lists, setup=setup, features=features,
                  policies=_policies(policies) if policies else None,
                  random_seed=random_seed, work=work or _default_work(model))
    fcfs = next((r.avg_bsld for r in ev.rows if r.label == "policy:fcfs"), None)
    best = ev.best_policy
    a, b = ev.test_rows
    table = Table(title=f"{Path(trace).name}: test part (rows {a:,}-{b - 1:,}, "
                        f"{b - a:,} jobs), set-up {ev.setup}",
                  caption="AVGbsld: mean bounded slowdown, tau = 10 s; improvement = "
                          "baseline / L2R - 1 (the paper's definition)")
    for col in ("EASY priority", "AVGbsld", "L2R improvement"):
        table.add_column(col, justify="left" if col == "EASY priority" else "right")
    l2r = ev.value("l2r")
    for r in ev.rows:
        gain = "" if r.label == "l2r" else f"{r.avg_bsld / l2r - 1:+.1%}"
        name = r.label.removeprefix("policy:") + (" (best policy)" if r is best else "")
        table.add_row(name, f"{r.avg_bsld:,.2f}", gain)
    console().print(table)
    if json_out is not None:
        data = {"trace": str(trace), "model": str(model), "setup": ev.setup,
                "test_rows": [a, b], "rows": [r.__dict__ for r in ev.rows],
                "best_policy": best.label, "improvement_vs_best": ev.improvement(
                    best.avg_bsld),
                "improvement_vs_fcfs": None if fcfs is None else ev.improvement(fcfs)}
        try:
            json_out.write_text(json.dumps(data, indent=2))
        except OSError as exc:
            raise InputError(f"cannot write: {exc}", file=str(json_out)) from None
