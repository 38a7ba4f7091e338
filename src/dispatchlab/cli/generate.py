"""``dispatchlab generate``: a synthetic SWF trace, fitted to a real trace or from a model."""

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
@click.option("--like", "like", type=click.Path(path_type=Path), default=None,
              help="the real trace the model is fitted to (fitted; for lublin: the trace "
                   "whose MaxProcs sets the machine size)")
@click.option("--jobs", type=int, required=True, help="number of jobs to generate (>= 1)")
@click.option("--seed", type=int, default=0, show_default=True, help="generator seed (>= 0)")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="output SWF file (.gz: compressed)")
@click.option("--model", "model_name", default="fitted", show_default=True,
              help="fitted (to --like) | lublin (Lublin & Feitelson 2003)")
@click.option("--machine-size", type=int, default=None,
              help="lublin: processors of the machine (or take MaxProcs of --like)")
@click.option("--load", "target_load", type=float, default=None,
              help="lublin: scale the arrival times to this offered load on the machine "
                   "(the model's own is about 0.4-0.5)")
@READ_OPTIONS
def generate(like: Path | None, jobs: int, seed: int, out: Path, model_name: str,
             machine_size: int | None, target_load: float | None, lenient: bool,
             extra_fields: str, reader: dict) -> None:
    """Write a synthetic SWF trace: fitted to a real trace (--like) or from the Lublin &
    Feitelson (2003) parametric model (--model lublin)."""
    from dispatchlab.workload.generate import write_generated

    if model_name not in ("fitted", "lublin"):
        raise InputError(f"unknown model {model_name!r} (fitted, lublin)", field="--model")
    if jobs < 1:
        raise InputError(f"must be >= 1, got {jobs}", field="--jobs")
    if seed < 0:
        raise InputError(f"must be >= 0, got {seed}", field="--seed")
    if model_name == "lublin":
        from dispatchlab.workload.lublin import lublin_header_lines, lublin_model

        if (machine_size is None) == (like is None):
            raise InputError("give the machine size: --machine-size P or --like TRACE (its "
                             "MaxProcs), one of the two", field="--machine-size")
        if machine_size is None:
            info = load(like, lenient=lenient, extra_fields=extra_fields,
                        reader=reader).info
            machine_size = info.max_procs or info.max_nodes
            if not machine_size:
                raise InputError("the trace header has no MaxProcs; give --machine-size",
                                 file=str(like))
        if machine_size < 2:
            raise InputError(f"must be >= 2, got {machine_size}", field="--machine-size")
        lmodel = lublin_model(machine_size)
        table, lines = lmodel.sample(jobs, seed), lublin_header_lines(lmodel, seed, jobs)
        if target_load is not None:
            from dispatchlab.workload.generate import scale_to_load

            table, factor = scale_to_load(table, target_load, machine_size)
            lines = (*lines, f"; Note: arrivals scaled by {factor:.6g} (dispatchlab "
                     f"generate --load {target_load}) to an offered load of {target_load} "
                     f"on {machine_size} processors")
        write_generated(table, out, lines)
        console().print(f"wrote {out} ({jobs:,} jobs, Lublin & Feitelson 2003 model, "
                         f"{machine_size} processors, seed {seed}"
                         + (f", offered load {target_load})" if target_load else ")"))
        return
    if target_load is not None:
        raise InputError("--load applies to --model lublin", field="--load")
    from dispatchlab.workload.generate import fit_model, header_lines

    if like is None:
        raise InputError("the fitted model needs --like TRACE", field="--like")
    if machine_size is not None:
        raise InputError("--machine-size applies to --model lublin", field="--machine-size")
    model = fit_model(load(like, lenient=lenient, extra_fields=extra_fields,
                           reader=reader))
    table = model.sample(jobs, seed)
    write_generated(table, out, header_lines(model, str(like), seed, jobs, model_name))
    console().print(f"wrote {out} ({jobs:,} jobs like {like}, seed {seed})")
