"""``dispatchlab predict``: score duration predictors on a trace's recorded schedule."""

from __future__ import annotations

from pathlib import Path

import click

from dispatchlab.cli.common import (
    READ_OPTIONS,
    SELECT_OPTIONS,
    TRACE_ARG,
    console,
    load,
    names_help,
)
from dispatchlab.core.components import parse_component_list


@click.command("predict")
@TRACE_ARG
@click.option("--predictors", "--predictor", "predictors", multiple=True,
              default=("walltime,history,tsafrir",), show_default=True,
              help="repeatable, or comma-separated plain names: " + names_help("predictor"))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write predictions.parquet, prediction_summary.json and the figures "
                   "prediction_errors.png and prediction_vs_actual.png into this folder")
@READ_OPTIONS
@SELECT_OPTIONS
def predict(trace: Path, predictors: tuple[str, ...], out: Path | None, lenient: bool,
            extra_fields: str, reader: dict, window: str | None, jobs_range: str | None,
            fraction: str | None) -> None:
    """Score duration predictors on TRACE's recorded schedule (no dispatcher)."""
    from rich.table import Table

    from dispatchlab.experiment.duration_accuracy import evaluate_predictors
    from dispatchlab.report.duration_accuracy import write_prediction_report

    specs = parse_component_list(predictors, "predictor", option="--predictors")
    jobs = load(trace, lenient=lenient, extra_fields=extra_fields, reader=reader, window=window,
                jobs=jobs_range, fraction=fraction)
    report = evaluate_predictors(jobs, {s.text: s.build() for s in specs})
    table = Table(title=f"{Path(trace).name}: {len(jobs):,} jobs, recorded schedule replayed",
                  caption="errors in minutes; under/over: predicted < / > actual run; "
                          "within 25 %: |error| <= 25 % of the run; classes by actual run")
    for col in ("predictor", "MAE min", "median AE min", "under %", "over %", "within 25 %",
                *(f"MAE {c}" for c in ("short", "medium", "long"))):
        table.add_column(col, justify="left" if col == "predictor" else "right", no_wrap=True)

    def num(v, fmt="{:,.1f}"):
        return "-" if v is None else fmt.format(v)

    for name, m in report.metrics.items():
        a = m["all"]
        table.add_row(name, num(a["mae_min"]), num(a["median_ae_min"]),
                      num(a["under"], "{:.1%}"), num(a["over"], "{:.1%}"),
                      num(a["within_25"], "{:.1%}"),
                      *(num(m[c]["mae_min"]) for c in ("short", "medium", "long")))
    con = console()
    con.print(table)
    if report.wait_missing:
        con.print("[yellow]note: the trace has no wait times (-1 throughout): "
                      "replayed with wait 0 (start = submit)[/yellow]")
    elif report.missing_waits:
        con.print(f"[dim]wait -1 replaced by 0 for {report.missing_waits:,} jobs[/dim]")
    if report.no_user:
        con.print(f"[yellow]note: {report.no_user:,} jobs have no user id: history, "
                      "tsafrir and ml give them their wall-time[/yellow]")
    for name, counts in report.rule_counts.items():
        con.print(f"[dim]{name} rules: " + ", ".join(f"{k}: {v:,}"
                                                        for k, v in counts.items()) + "[/dim]")
    if jobs.info.dropped:
        con.print("[dim]dropped at load: " + ", ".join(
            f"{v:,} ({k})" for k, v in jobs.info.dropped.items()) + "[/dim]")
    if out is not None:
        written = write_prediction_report(report, out).get("files", [])
        con.print(f"[dim]wrote into {out}: {', '.join(written)}[/dim]")
