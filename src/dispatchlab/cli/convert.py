"""``dispatchlab convert``: a trace of any format written as SWF, Parquet or CSV."""

from __future__ import annotations

from pathlib import Path

import click

from dispatchlab.cli.common import (
    READ_OPTIONS,
    console,
    load,
)
from dispatchlab.core.errors import InputError


@click.command()
@click.argument("trace", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="output file: .swf / .swf.gz (Standard Workload Format), .parquet, .csv")
@click.option("--clean/--no-clean", default=False, show_default=True,
              help="apply the default cleaning (drop jobs that cannot be simulated)")
@READ_OPTIONS
def convert(trace: Path, out: Path, clean: bool, lenient: bool, extra_fields: str,
            reader: dict) -> None:
    """Convert TRACE (any format: swf, alea, sacct, pbs, parquet, csv) to SWF, Parquet or
    CSV. Parquet keeps every column and the trace's facts (name tables of users, queues,
    ...); SWF keeps the 18 standard fields (names become their integer codes)."""
    name = out.name.lower()
    kinds = {".swf": "swf", ".swf.gz": "swf", ".parquet": "parquet", ".pq": "parquet",
             ".csv": "csv"}
    kind = next((k for suffix, k in sorted(kinds.items(), key=lambda x: -len(x[0]))
                 if name.endswith(suffix)), None)
    if kind is None:
        raise InputError("the output name must end with .swf, .swf.gz, .parquet or .csv",
                         field="--out")
    jobs = load(trace, lenient=lenient, extra_fields=extra_fields, reader=reader,
                clean=clean)
    if kind == "swf":
        from dispatchlab.workload.swf import write_swf

        write_swf(jobs, out)
    else:
        from dispatchlab.workload import tables

        (tables.write_parquet if kind == "parquet" else tables.write_csv)(jobs, out)
    info = jobs.info
    notes = [f"wrote {out} ({len(jobs):,} jobs of a {info.format} trace)"]
    for label, counts in (("skipped by rule", info.skipped), ("dropped", info.dropped)):
        if counts:
            notes.append(f"{label}: " + ", ".join(f"{v:,} ({k})" for k, v in counts.items()))
    if info.malformed_skipped:
        notes.append(f"malformed lines skipped: {info.malformed_skipped:,}")
    for note in notes:
        console().print(note)
