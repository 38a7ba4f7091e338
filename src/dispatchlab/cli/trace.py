"""``dispatchlab trace info`` (``generate`` and ``convert`` have modules of their own)."""

from __future__ import annotations

from pathlib import Path

import click

from dispatchlab.cli.common import (
    PLATFORM_OPTIONS,
    READ_OPTIONS,
    TRACE_ARG,
    choose_platform,
    console,
    load,
)


@click.group("trace")
def trace_app() -> None:
    """Inspect workload traces."""


@trace_app.command("info")
@TRACE_ARG
@READ_OPTIONS
@PLATFORM_OPTIONS
def trace_info_cmd(trace: Path, lenient: bool, extra_fields: str, reader: dict,
                   platform: str | None,
                   nodes: int | None, cores_per_node: int | None) -> None:
    """Print a trace's header facts, field population, job statistics, offered load and
    the metrics of its recorded schedule (offered load on --platform/--nodes when given,
    else on the header's machine)."""
    from dispatchlab.workload.load import render_trace_info, trace_info

    jobs = load(trace, lenient=lenient, extra_fields=extra_fields, reader=reader)
    plat = None
    if platform is not None or nodes is not None or cores_per_node is not None:
        plat = choose_platform(jobs, platform, nodes, cores_per_node)
    console().print(render_trace_info(trace_info(jobs, platform=plat)))
