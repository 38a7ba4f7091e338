"""``dispatchlab power synth``: synthetic job power for traces without power data."""

from __future__ import annotations

from pathlib import Path

import click

from dispatchlab.cli.common import (
    PLATFORM_OPTIONS,
    READ_OPTIONS,
    SELECT_OPTIONS,
    TRACE_ARG,
    attach_job_power,
    choose_platform,
    console,
    load,
)
from dispatchlab.core.components import parse_component
from dispatchlab.core.errors import InputError


@click.group("power")
def power_app() -> None:
    """Job power data: synthesize it for traces that have none."""


@power_app.command("synth")
@TRACE_ARG
@click.option("--seed", type=int, default=0, show_default=True, help="random seed")
@click.option("--period", type=int, default=20, show_default=True,
              help="sampling period of the power series (s)")
@click.option("--series", type=click.Path(path_type=Path), default=None,
              help="also write the per-job power series (job_id, offset, watts) here")
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="the power file to write (Parquet; .csv for CSV): job_id, power_mean, "
                   "power_max, power_std in W, readable by --power")
@PLATFORM_OPTIONS
@READ_OPTIONS
@SELECT_OPTIONS
def synth_cmd(trace: Path, seed: int, period: int, series: Path | None, out: Path,
              platform: str | None, nodes: int | None, cores_per_node: int | None,
              lenient: bool, extra_fields: str, reader: dict, window: str | None,
              jobs_range: str | None, fraction: str | None) -> None:
    """Synthesize per-job power for TRACE (users' application signatures, calibrated to
    Carastan-Santos et al. 2024's Marconi100 data; see dispatchlab.power.synth) and print its
    calibration."""
    from rich.table import Table

    from dispatchlab.power.data import write_power, write_power_series
    from dispatchlab.power.model import job_nodes
    from dispatchlab.power.synth import CALIBRATION_TARGETS, calibration_report, synthesize_power

    if seed < 0:
        raise InputError(f"must be >= 0, got {seed}", field="--seed")
    if period <= 0:
        raise InputError(f"must be > 0 s, got {period}", field="--period")
    jobs = load(trace, lenient=lenient, extra_fields=extra_fields, reader=reader,
                window=window, jobs=jobs_range, fraction=fraction)
    plat = choose_platform(jobs, platform, nodes, cores_per_node)
    columns, ser = synthesize_power(jobs, plat, seed=seed, period=period,
                                    series=series is not None)
    try:
        write_power(out, jobs, columns)
        if series is not None and ser is not None:
            write_power_series(series, ser)
    except OSError as exc:
        raise InputError(f"cannot write: {exc}", file=str(out)) from None
    report = calibration_report(columns, job_nodes(jobs, plat))
    table = Table(title=f"synthetic power of {len(jobs):,} jobs on {plat.describe()} "
                        f"(seed {seed}): per node")
    table.add_column("statistic")
    table.add_column("measured", justify="right")
    table.add_column("target", justify="right")
    for key, value in report.items():
        target = CALIBRATION_TARGETS.get(key)
        shown = target[0] if isinstance(target, tuple) else target
        table.add_row(key, f"{value:,.0f}" if key == "jobs" else f"{value:,.3f}",
                      "" if shown is None else f"{shown:,}")
    console().print(table)
    console().print(f"written: {out}")


@power_app.command("predict")
@TRACE_ARG
@click.option("--power", "power_file", required=True, metavar="FILE",
              help="the jobs' power: a Parquet/CSV file or the Eurora power_predictions")
@click.option("--power-predictors", "predictors", default="naive,history", show_default=True,
              help="comma-separated power predictor specs: naive, real, history, per-user, "
                   "ml (history:alpha=1 with parameters; then give one per option use)")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write the per-job predictions as Parquet (job_id, user, actual and "
                   "predicted mean/max/std per predictor)")
@PLATFORM_OPTIONS
@READ_OPTIONS
@SELECT_OPTIONS
def predict_cmd(trace: Path, power_file: str, predictors: str, out: Path | None,
                platform: str | None, nodes: int | None, cores_per_node: int | None,
                lenient: bool, extra_fields: str, reader: dict, window: str | None,
                jobs_range: str | None, fraction: str | None) -> None:
    """Score power predictors on TRACE's recorded schedule (predicted at submission,
    learning from jobs at their recorded end), as Carastan-Santos et al. 2024 Figure 3: the mean
    absolute error overall and the median over users of each user's MAE, in W."""
    from rich.table import Table

    from dispatchlab.experiment.power_accuracy import evaluate_power_predictors

    specs = [p.strip() for p in (predictors.split(",") if "=" not in predictors
                                 else [predictors])]
    if not all(specs):
        raise InputError(f"expected comma-separated names, got {predictors!r}",
                         field="--power-predictors")
    built = {}
    for text in specs:
        spec = parse_component(text, "power-predictor", option="--power-predictors")
        built[spec.text] = spec.build()
    jobs = load(trace, lenient=lenient, extra_fields=extra_fields, reader=reader,
                window=window, jobs=jobs_range, fraction=fraction)
    plat = choose_platform(jobs, platform, nodes, cores_per_node)
    jobs = attach_job_power(jobs, power_file, plat)
    report = evaluate_power_predictors(jobs, plat, built)
    table = Table(title=f"{Path(trace).name}: {len(jobs):,} jobs, power predicted at "
                        "submission", caption="W; per user: the median over users of "
                        "each user's mean absolute error (Carastan-Santos et al. 2024 Figure 3)")
    for col in ("predictor", "jobs", "MAE mean", "MAE max", "MAE std", "per-user mean",
                "per-user max", "per-user std"):
        table.add_column(col, justify="left" if col == "predictor" else "right")

    def num(v):
        return "-" if v is None else f"{v:,.1f}"

    for name in built:
        m = report.metrics[name]
        table.add_row(name, f"{m['mean']['jobs']:,}", num(m["mean"]["mae"]),
                      num(m["max"]["mae"]), num(m["std"]["mae"]),
                      num(m["mean"]["user_mae_median"]), num(m["max"]["user_mae_median"]),
                      num(m["std"]["user_mae_median"]))
    console().print(table)
    if out is not None:
        import pyarrow.parquet as pq

        try:
            from dispatchlab.workload.tables import local_sink

            with local_sink(out) as sink:
                pq.write_table(report.to_arrow(), sink)
        except OSError as exc:
            raise InputError(f"cannot write: {exc}", file=str(out)) from None
        console().print(f"written: {out}")
