"""``dispatchlab demo``: a synthetic workload under the classic dispatchers, no file needed."""

from __future__ import annotations

import click

from dispatchlab.cli.common import console, summary_table


@click.command()
@click.option("--jobs", type=int, default=5000, show_default=True, help="synthetic jobs")
@click.option("--cores", type=int, default=256, show_default=True, help="pooled cores")
@click.option("--seed", type=int, default=1, show_default=True, help="generator seed")
@click.option("--load", "offered", type=float, default=0.85, show_default=True,
              help="offered load")
def demo(jobs: int, cores: int, seed: int, offered: float) -> None:
    """Generate a synthetic workload and compare FIFO, SJF, EASY and conservative on it."""
    from dispatchlab.dispatch import EASY, FIFO, SJF, Conservative
    from dispatchlab.platform import Platform
    from dispatchlab.predict import RealPredictor, WalltimePredictor
    from dispatchlab.run.outputs import run_summary
    from dispatchlab.sim import Simulation
    from dispatchlab.workload.synthetic import generate_synthetic

    con = console()
    table = generate_synthetic(jobs, cores=cores, seed=seed, load=offered)
    con.print(f"synthetic workload: {len(table):,} jobs on a pooled machine of {cores} "
              f"cores (seed {seed}, offered load {offered})")
    plat = Platform.pooled(cores)
    runs = [("fifo", FIFO(), WalltimePredictor()), ("sjf", SJF(), WalltimePredictor()),
            ("easy", EASY(), WalltimePredictor()), ("easy-sjbf", EASY(order="sjf"),
                                                    WalltimePredictor()),
            ("conservative", Conservative(), WalltimePredictor()),
            ("easy (real run times)", EASY(), RealPredictor())]
    rows = []
    for name, disp, pred in runs:
        result = Simulation(plat, table, disp, pred).run()
        rows.append((name, run_summary(result)))
    con.print(summary_table(rows, title="dispatchers compared (estimates: requested "
                                        "time unless noted)"))
