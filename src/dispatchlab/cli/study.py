"""``dispatchlab study predictions``: every dispatcher x predictor on one trace."""

from __future__ import annotations

from pathlib import Path

import click

from dispatchlab.cli.common import (
    CAP_OPTIONS,
    DURATION_MODEL_OPTION,
    ENGINE_OPTION,
    PARTITION_OPTIONS,
    PLATFORM_OPTIONS,
    READ_OPTIONS,
    SELECT_OPTIONS,
    TAU_OPTION,
    TRACE_ARG,
    attach_job_power,
    choose_platform,
    console,
    duration_model_spec,
    engines_line,
    fit_cluster_requests,
    fit_jobs,
    load,
    names_help,
    power_cap,
    power_predictor_spec,
)
from dispatchlab.core.components import parse_component_list


@click.group("study")
def study_app() -> None:
    """Experiments over many simulations of one trace."""


@study_app.command("predictions")
@TRACE_ARG
@click.option("--dispatchers", "--dispatcher", "dispatchers", multiple=True,
              default=("fifo,sjf,ljf,easy",), show_default=True,
              help="repeatable, or comma-separated plain names: " + names_help("dispatcher"))
@click.option("--predictors", "--predictor", "predictors", multiple=True,
              default=("walltime,history,real,tsafrir",), show_default=True,
              help="repeatable, or comma-separated plain names: " + names_help("predictor"))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write study.csv, study.json and the three PNG figures here")
@TAU_OPTION
@PLATFORM_OPTIONS
@PARTITION_OPTIONS
@READ_OPTIONS
@SELECT_OPTIONS
@CAP_OPTIONS
@DURATION_MODEL_OPTION
@ENGINE_OPTION
def study_predictions(trace: Path, dispatchers: tuple[str, ...],
                      predictors: tuple[str, ...], out: Path | None,
                      tau: float, platform: str | None, nodes: int | None,
                      cores_per_node: int | None,
                      partition_map: str | None, ignore_partitions: bool, lenient: bool,
                      extra_fields: str, reader: dict,
                      window: str | None, jobs_range: str | None,
                      fraction: str | None, cap: str | None, cap_window: str | None,
                      cap_file: Path | None, power_file: str | None,
                      power_predictor: str | None,
                      power_predictor_params: tuple[str, ...],
                      duration_model: str | None, engine: str) -> None:
    """Simulate TRACE under every dispatcher x predictor (Galleguillos et al. 2017, section 5.2)."""
    from rich.table import Table

    from dispatchlab.experiment.study import predictor_label, run_prediction_study
    from dispatchlab.metrics import check_tau
    from dispatchlab.report.study import write_study

    check_tau(tau)
    # fail on a bad name before loading the trace
    d_names = [s.text for s in parse_component_list(dispatchers, "dispatcher",
                                                    option="--dispatchers")]
    p_names = [s.text for s in parse_component_list(predictors, "predictor",
                                                    option="--predictors")]
    dmodel = duration_model_spec(duration_model)
    jobs = load(trace, lenient=lenient, window=window, jobs=jobs_range, fraction=fraction,
                 extra_fields=extra_fields, reader=reader)
    plat = choose_platform(jobs, platform, nodes, cores_per_node)
    jobs = fit_jobs(jobs, plat)
    jobs, plat = fit_cluster_requests(jobs, plat, partition_map, ignore_partitions)
    cap_spec = power_cap(cap, cap_window, cap_file, plat)
    jobs = attach_job_power(jobs, power_file, plat)
    ppspec = power_predictor_spec(power_predictor, power_predictor_params)
    study = run_prediction_study(jobs, plat, d_names, p_names, tau=tau, cap=cap_spec,
                                 power_predictor=None if ppspec is None else ppspec.build(),
                                 duration_model=None if dmodel is None else dmodel.build(),
                                 model_field="--duration-model", engine=engine)
    table = Table(title=f"{Path(trace).name}: {len(jobs):,} jobs on {plat.describe()}",
                  caption=f"times in seconds; slowdown and bsld (tau = {tau:g} s) are means "
                          "unless noted; W wall-time, D history (data-driven), R real")
    from dispatchlab.metrics.keys import BY_KEY
    # every declared metric of the study but the counts and p95 bsld (all in study.csv);
    # with job power, energy and the cap metrics (those the runs report)
    rows = study.rows()
    shown = [k for k in rows[0] if k in BY_KEY and k not in ("jobs", "rejected", "p95_bsld")
             and any(r[k] is not None for r in rows)]
    table.add_column("dispatcher", no_wrap=True)
    table.add_column("pred", no_wrap=True)
    for key in shown:  # headers wrap onto two lines; numbers are never cut
        table.add_column(BY_KEY[key].label, justify="right", min_width=6)
    table.add_column("sim s", justify="right", no_wrap=True)
    for row in rows:
        sim = row["simulate_seconds"]
        table.add_row(row["dispatcher"], predictor_label(row["predictor"]),
                      *(BY_KEY[k].format(row[k]) for k in shown),
                      "-" if sim is None else f"{sim:.2f}")
    con = console()
    con.print(table)
    con.print("[dim]" + engines_line([(f"{r['dispatcher']} / {r['predictor']}", r["engine"])
                                      for r in rows]) + "[/dim]")
    if out is not None:
        paths = write_study(study, out)
        con.print("[dim]wrote " + ", ".join(str(p) for p in paths) + "[/dim]")
