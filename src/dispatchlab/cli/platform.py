"""``dispatchlab platform infer``: propose a platform file from a trace's records;
``dispatchlab platform show``: print a platform file (a slurm.conf, TOML...) as read."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.table import Table

from dispatchlab.cli.common import READ_OPTIONS, TRACE_ARG, console, load, print_wide, warn
from dispatchlab.core.errors import InputError
from dispatchlab.platform.alea import read_alea_machines


@click.group("platform")
def platform_app() -> None:
    """Platforms: propose one from a trace, show one as read."""


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


@platform_app.command("show")
@click.argument("platform", metavar="PLATFORM")
def show(platform: str) -> None:
    """Print the platform PLATFORM as read: a slurm.conf (and the files it includes), a
    platform TOML file, a PA-HPC-SIM node file (also ARCHIVE#MEMBER) or a preset (eurora,
    marconi100, marconi100-nodes). Shows the node types (hosts as compressed host lists,
    capacities, weights, features), the partitions with their limits, and for a
    slurm.conf one note line with the keys read but not modelled."""
    from dispatchlab.platform import hostlist
    from dispatchlab.platform.choose import PRESETS
    from dispatchlab.platform.eurora import read_source, split_archive
    from dispatchlab.platform.files import load_platform_file
    from dispatchlab.platform.slurmconf import looks_like_slurm_conf, read_slurm_conf

    note = ""
    files: tuple[Path, ...] = ()
    if platform in PRESETS:
        plat = PRESETS[platform]()
    else:
        path, _member = split_archive(platform)
        if not path.exists():
            raise InputError("platform file not found (give a slurm.conf, a TOML file, an "
                             f"Eurora node file, ARCHIVE#MEMBER or a preset: "
                             f"{', '.join(PRESETS)})", file=str(path))
        text, shown = read_source(platform, "platform file")
        if looks_like_slurm_conf(shown, text):
            conf = read_slurm_conf(platform)
            plat, files, note = conf.platform, conf.files, conf.note_line()
        else:
            plat, files = load_platform_file(platform)
    con = console()
    total = plat.total_capacity()
    more = f" (+{len(files) - 1} included)" if len(files) > 1 else ""
    con.print(f"{plat.name}: {plat.n_nodes:,} nodes, "
              + ", ".join(f"{v:,} {r}" for r, v in total.items())
              + (" (pooled)" if plat.is_pooled else "")
              + (f"; read from {files[0]}{more}" if files else " (preset)"),
              markup=False, highlight=False)
    types = Table(title="node types (lower weight allocated first)", title_justify="left")
    for col in ("type", "nodes", "hosts", *plat.resource_names, "weight", "features"):
        types.add_column(col, justify="right" if col not in ("type", "hosts", "features")
                         else "left")
    for nt in plat.node_types:
        types.add_row(nt.name, f"{nt.count:,}",
                      hostlist.compress(nt.hosts) if nt.hosts else "-",
                      *(f"{nt.capacity.get(r, 0):,}" for r in plat.resource_names),
                      str(nt.weight), ",".join(nt.features) or "-")
    print_wide(con, types)
    if plat.partitions:
        hosts = plat.hosts()
        parts = Table(title="partitions", title_justify="left")
        for col in ("name", "nodes", "hosts", "default", "max time", "max nodes",
                    "min nodes", "exclusive", "priority tier", "job factor"):
            parts.add_column(col, justify="left" if col in ("name", "hosts") else "right")
        for p in plat.partitions:
            parts.add_row(p.name, f"{len(p.nodes):,}",
                          hostlist.compress([hosts[k] for k in p.nodes]),
                          "yes" if p.default else "", _duration(p.max_time),
                          _or_dash(p.max_nodes), _or_dash(p.min_nodes),
                          "yes" if p.exclusive else "", _or_dash(p.priority_tier),
                          _or_dash(p.priority_job_factor))
        print_wide(con, parts)
    if plat.queues:
        con.print("queues (expected wait): " + ", ".join(
            f"{q} {_duration(s)}" for q, s in plat.queues), markup=False, highlight=False)
    if note:
        print(f"note: {note}", file=sys.stderr)


def _or_dash(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def _duration(seconds: int | None) -> str:
    """``D-HH:MM:SS`` (Slurm's form; ``HH:MM:SS`` under a day), ``-`` for None."""
    if seconds is None:
        return "-"
    days, rest = divmod(int(seconds), 86400)
    clock = f"{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}-{clock}" if days else clock
