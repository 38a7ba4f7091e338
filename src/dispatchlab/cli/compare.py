"""``dispatchlab compare``: several dispatchers (x predictors) on one trace, one table,
with intervals and paired differences when the trace is cut into slices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from dispatchlab.cli.common import (
    ENGINE_OPTION,
    OVERRUN_OPTION,
    PARTITION_OPTIONS,
    PLATFORM_OPTIONS,
    READ_OPTIONS,
    SELECT_OPTIONS,
    TAU_OPTION,
    TRACE_ARG,
    check_overrun,
    choose_platform,
    console,
    engines_line,
    fit_cluster_requests,
    fit_jobs,
    load,
    names_help,
    warn,
)
from dispatchlab.core.components import parse_component, parse_component_list
from dispatchlab.core.errors import InputError, output_folder

#: Metrics whose paired differences to the baseline are shown.
DIFFERENCE_METRICS = ("mean_wait", "mean_slowdown", "mean_bsld", "utilization",
                      "steady_utilization")


def _fmt(key: str) -> str:
    """A metric's number format for mean values (integers shown without decimals)."""
    from dispatchlab.metrics.keys import BY_KEY

    fmt = BY_KEY[key].fmt
    return "{:,.0f}" if fmt == "{:,}" else fmt


def _single_table(comp, title: str):
    from rich.table import Table

    from dispatchlab.metrics.keys import BY_KEY, COMPARE_TABLE

    table = Table(title=title, caption="times in seconds; slowdown, bsld: means over jobs; "
                  "util: whole run, steady util: from the first time half the platform is "
                  "busy to the last submission; mean decision s: per dispatcher call")
    table.add_column("configuration", no_wrap=True)
    table.add_column("jobs", justify="right")
    for key in COMPARE_TABLE:
        table.add_column(BY_KEY[key].label, justify="right")
    for r in comp.runs:
        s = r.summary
        table.add_row(comp.label(r.dispatcher, r.predictor), f"{s['jobs']:,}",
                      *(BY_KEY[k].format(BY_KEY[k].value(s)) for k in COMPARE_TABLE))
    return table


def _interval_table(comp, title: str):
    """One row per metric, one column per configuration (narrow for a few of them)."""
    from rich.table import Table

    from dispatchlab.experiment.statistics import BOOTSTRAP_MIN_RUNS, N_RESAMPLES, format_estimate
    from dispatchlab.metrics.keys import BY_KEY, COMPARE_TABLE

    table = Table(title=title, caption="mean over slices of each slice's value [95 % "
                  f"interval over slices: t = Student's t below {BOOTSTRAP_MIN_RUNS} "
                  f"slices, boot = percentile bootstrap ({N_RESAMPLES:,} resamples) from "
                  f"{BOOTSTRAP_MIN_RUNS}]")
    table.add_column("metric", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    for entry in comp.statistics:
        table.add_column(f"{entry['config']} ({entry['runs']} slices)", justify="right")
    for key in COMPARE_TABLE:
        m = BY_KEY[key]
        table.add_row(m.label, "" if m.unit in ("1", "count") else m.unit,
                      *(format_estimate(e[key], _fmt(key)) for e in comp.statistics))
    return table


def _difference_table(comp):
    """Paired differences to the baseline: one row per metric, one column per other
    configuration."""
    from rich.table import Table

    from dispatchlab.experiment.statistics import BOOTSTRAP_MIN_RUNS, format_difference
    from dispatchlab.metrics.keys import BY_KEY

    entries = [e for e in comp.statistics if e.get("vs_baseline")]
    table = Table(title=f"paired differences to {comp.baseline} (same predictor, same "
                        "slices)",
                  caption="mean over slices of (configuration - baseline) [95 % interval: "
                          "t = Student's t on the paired differences below "
                          f"{BOOTSTRAP_MIN_RUNS} pairs, boot = paired bootstrap from "
                          f"{BOOTSTRAP_MIN_RUNS}] and ratio of means (x [95 % "
                          "interval]); an interval that excludes 0 (ratio: 1) is a "
                          "difference larger than the variation across these slices")
    table.add_column("metric", no_wrap=True)
    for e in entries:
        pairs = max(d.n_pairs for d in e["vs_baseline"].values())
        table.add_column(f"{e['config']} ({pairs} pairs)", justify="right")
    for key in DIFFERENCE_METRICS:
        table.add_row(BY_KEY[key].label,
                      *(format_difference(e["vs_baseline"][key], _fmt(key)) for e in entries))
    return table


def _plain(value: Any) -> Any:
    from dataclasses import asdict, is_dataclass

    if is_dataclass(value):
        return asdict(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@click.command()
@TRACE_ARG
@click.option("--dispatcher", "dispatchers", multiple=True, required=True,
              help="repeatable (or comma-separated plain names): " + names_help("dispatcher"))
@click.option("--predictor", "predictors", multiple=True, default=("walltime",),
              show_default=True,
              help="repeatable (or comma-separated plain names): " + names_help("predictor"))
@click.option("--baseline", default=None,
              help="dispatcher (as given) that the others are compared with (default: the "
                   "first)")
@click.option("--slices", type=int, default=None,
              help="K: cut the cleaned trace into K disjoint, evenly spaced slices")
@click.option("--slice-jobs", type=int, default=None, help="N: measured jobs per slice")
@click.option("--lead-in", type=int, default=None,
              help="jobs simulated before each slice and not measured (default N // 10)")
@PLATFORM_OPTIONS
@PARTITION_OPTIONS
@OVERRUN_OPTION
@ENGINE_OPTION
@TAU_OPTION
@click.option("--workers", type=int, default=None,
              help="worker processes (default: the number of cores)")
@READ_OPTIONS
@SELECT_OPTIONS
@click.option("--seed", type=int, default=0, show_default=True, help="bootstrap seed")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="write compare.json (every run's summary and the statistics) here")
def compare(trace: Path, dispatchers: tuple[str, ...], predictors: tuple[str, ...],
            baseline: str | None, slices: int | None, slice_jobs: int | None,
            lead_in: int | None, platform: str | None, nodes: int | None,
            cores_per_node: int | None,
            partition_map: str | None, ignore_partitions: bool, overrun: str, engine: str,
            tau: float,
            workers: int | None,
            lenient: bool, extra_fields: str, reader: dict, window: str | None,
            jobs_range: str | None,
            fraction: str | None, seed: int, out: Path | None) -> None:
    """Simulate TRACE under several dispatchers (x predictors) and print one table.

    With --slices K --slice-jobs N every configuration runs on K slices of the trace and
    the table gives means with 95 % intervals over slices (Student's t below 10 slices,
    percentile bootstrap from 10), plus paired
    differences to --baseline."""
    from dispatchlab.experiment.compare import run_comparison
    from dispatchlab.metrics import check_tau
    from dispatchlab.run.advice import platform_warnings

    check_tau(tau)
    check_overrun(overrun)
    dspecs = parse_component_list(dispatchers, "dispatcher")
    pspecs = parse_component_list(predictors, "predictor")
    if (slices is None) != (slice_jobs is None):
        raise InputError("--slices and --slice-jobs go together", field="--slices")
    if lead_in is not None and slices is None:
        raise InputError("--lead-in applies with --slices", field="--lead-in")
    if baseline is not None:
        baseline = parse_component(baseline, "dispatcher", option="--baseline").text
        if baseline not in [d.text for d in dspecs]:
            raise InputError(f"the baseline {baseline!r} is not among the dispatchers "
                             f"compared ({', '.join(d.text for d in dspecs)})",
                             field="--baseline")
    jobs = load(trace, lenient=lenient, extra_fields=extra_fields, reader=reader, window=window,
                jobs=jobs_range, fraction=fraction)
    plat = choose_platform(jobs, platform, nodes, cores_per_node)
    jobs = fit_jobs(jobs, plat)
    jobs, plat = fit_cluster_requests(jobs, plat, partition_map, ignore_partitions)
    if slices is not None:  # a plan that does not fit fails before any warning
        from dispatchlab.workload.slices import plan_slices

        plan_slices(len(jobs), slices, slice_jobs, lead_in)
    for text in platform_warnings(jobs, plat):
        warn(text)
    comp = run_comparison(jobs, plat, dspecs, pspecs, baseline=baseline,
                          slices=None if slices is None else (slices, slice_jobs),
                          lead_in=lead_in, tau=tau, overrun=overrun, workers=workers,
                          seed=seed, engine=engine)
    con = console()
    title = f"{Path(trace).name}: {len(jobs):,} jobs on {plat.describe()}"
    if comp.slices:
        s0 = comp.slices[0]
        title += (f", {len(comp.slices)} slices of {s0.stop - s0.start:,} jobs (lead-in "
                  f"{s0.start - s0.first:,})")
        con.print(_interval_table(comp, title))
        con.print(_difference_table(comp))
    else:
        con.print(_single_table(comp, title))
    con.print("[dim]" + engines_line([(comp.label(r.dispatcher, r.predictor),
                                       r.summary["engine"]) for r in comp.runs]) + "[/dim]")
    if out is not None:
        folder = output_folder(out)
        data = {
            "trace": str(trace), "platform": plat.describe(), "baseline": comp.baseline,
            "slices": [_plain(s) for s in comp.slices],
            "runs": [_plain(r) for r in comp.runs],
            "statistics": [_plain(e) for e in comp.statistics],
        }
        path = folder / "compare.json"
        path.write_text(json.dumps(data, indent=1, default=str) + "\n")
        con.print(f"[dim]wrote {path}[/dim]")
