"""``dispatchlab platform infer``: propose a platform file from a trace's records."""

from __future__ import annotations

from pathlib import Path

import click

from dispatchlab.cli.common import READ_OPTIONS, TRACE_ARG, console, load, warn
from dispatchlab.core.errors import InputError
from dispatchlab.platform.alea import read_alea_machines


@click.group("platform")
def platform_app() -> None:
    """Platforms: propose one from a trace."""


@platform_app.command("infer")
@TRACE_ARG
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="the platform TOML file to write (check and edit it before use)")
@READ_OPTIONS
def infer(trace: Path, out: Path, lenient: bool, extra_fields: str, reader: dict) -> None:
    """Propose a node-level platform for TRACE from its machine file, recorded placement
    (PBS exec_host, Alea node ids, Slurm NodeList), node counts or header."""
    from dispatchlab.platform.infer import infer_platform

    jobs = load(trace, lenient=lenient, extra_fields=extra_fields, reader=reader,
                clean=False)
    machines = None
    machine_file = jobs.info.companions.get("machines")
    if machine_file:
        machines = read_alea_machines(machine_file)
    proposal = infer_platform(jobs, machines)
    platform = proposal.platform()  # validates what is written
    try:
        out.write_text(proposal.to_toml())
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", file=str(out)) from None
    con = console()
    con.print(f"wrote {out}: {platform.describe()}")
    con.print(f"[dim]from {proposal.evidence}[/dim]")
    for note in proposal.notes:
        con.print(f"[yellow]note: {note}[/yellow]")
    for warning in proposal.warnings:
        warn(warning)
