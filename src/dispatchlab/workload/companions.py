"""Files read together with a trace file (light: imported by format detection and by
campaigns, which must not load the readers to find them)."""

from __future__ import annotations

from pathlib import Path


def find_machines(path: str | Path) -> Path | None:
    """The machine file beside trace ``path`` (Alea's companion): ``PATH.machines``,
    ``PATH.machines.gz``, then, for ``X.gz``, ``X.machines`` and ``X.machines.gz``;
    None if none exists."""
    p = Path(path)
    bases = [p]
    if p.name.endswith(".gz"):
        bases.append(p.with_name(p.name[:-3]))
    for base in bases:
        for suffix in (".machines", ".machines.gz"):
            cand = base.with_name(base.name + suffix)
            if cand.is_file():
                return cand
    return None
