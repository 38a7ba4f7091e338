"""``dispatchlab demo``: a synthetic workload under the classic dispatchers, no file needed."""

from __future__ import annotations

import click

from dispatchlab.cli.common import console, engines_line, summary_table

#: the demo's runs: column label, dispatcher (name, parameters), predictor
RUNS = (("fifo", ("fifo", {}), "walltime"),
        ("sjf", ("sjf", {}), "walltime"),
        ("easy", ("easy", {}), "walltime"),
        ("easy-sjbf", ("easy", {"order": "sjf"}), "walltime"),
        ("conservative", ("conservative", {}), "walltime"),
        ("easy (real run times)", ("easy", {}), "real"))


@click.command()
@click.option("--jobs", type=int, default=5000, show_default=True, help="synthetic jobs")
@click.option("--cores", type=int, default=256, show_default=True, help="pooled cores")
@click.option("--seed", type=int, default=1, show_default=True, help="generator seed")
@click.option("--load", "offered", type=float, default=0.85, show_default=True,
              help="offered load")
def demo(jobs: int, cores: int, seed: int, offered: float) -> None:
    """Generate a synthetic workload and compare FIFO, SJF, EASY and conservative on it."""
    from dispatchlab.platform import Platform
    from dispatchlab.run.build import build
    from dispatchlab.run.config import Component, RunConfig
    from dispatchlab.run.outputs import run_summary
    from dispatchlab.workload.synthetic import generate_synthetic

    con = console()
    table = generate_synthetic(jobs, cores=cores, seed=seed, load=offered)
    con.print(f"synthetic workload: {len(table):,} jobs on a pooled machine of {cores} "
              f"cores (seed {seed}, offered load {offered})")
    plat = Platform.pooled(cores)
    rows, engines = [], []
    for label, (name, params), predictor in RUNS:
        # the run layer, as `simulate` runs: engine auto (native where it can run)
        config = RunConfig(dispatcher=Component(name, params),
                           predictor=Component(predictor), engine="auto")
        run = build(config, jobs=table, platform=plat)
        rows.append((label, run_summary(run.simulation.run())))
        engines.append((label, run.engine))
    con.print(summary_table(rows, title="dispatchers compared (estimates: requested "
                                        "time unless noted)"))
    con.print("[dim]" + engines_line(engines) + "[/dim]")
