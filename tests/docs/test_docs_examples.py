"""Every shell command and Python block of the documentation runs.

Each page's blocks run in order in a scratch folder (``docs_runner.py``), with
``dispatchlab`` and ``python`` on the path as this checkout's, ``examples/`` and
``benchmarks/`` linked in, and ``$DISPATCHLAB_TRACES`` set to the traces folder of
``tests/conftest.py``. A page that reads a trace is skipped, with a message, when the
traces are absent. The blocks of the getting-started and tutorial pages run at small
scale (their commands say so: ``--jobs 0:3000``...); a block elsewhere runs unless
``exemptions.py`` lists it with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TRACES_DIR
from docs_site import ROOT, blocks, is_walkthrough, pages
from exemptions import EXEMPT, reason

pytestmark = pytest.mark.docs

RUNNER = Path(__file__).resolve().parent / "docs_runner.py"


def _run_blocks(page: str) -> list:
    return [b for b in blocks(page) if reason(page, b.first_line) is None]


def _params() -> list:
    out = []
    for page in pages():
        run = _run_blocks(page)
        if not run:
            continue
        needs = any("$DISPATCHLAB_TRACES" in b.code or "traces_dir()" in b.code
                    for b in run)
        marks = [pytest.mark.traces] if needs else []
        if not is_walkthrough(page):
            marks.append(pytest.mark.slow)
        out.append(pytest.param(page, needs, marks=marks, id=page))
    return out


def _scratch(tmp_path: Path) -> dict[str, str]:
    """The scratch folder's links and the environment of the blocks."""
    for name in ("examples", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name)
    bin_dir = tmp_path / ".bin"
    bin_dir.mkdir()
    # this checkout's package first, even under a block's own PYTHONPATH=...
    src = str(ROOT / "src")
    path = f'PYTHONPATH="{src}${{PYTHONPATH:+:$PYTHONPATH}}"'
    (bin_dir / "python").write_text(f'#!/bin/sh\n{path} exec "{sys.executable}" "$@"\n')
    (bin_dir / "dispatchlab").write_text(
        f'#!/bin/sh\n{path} exec "{sys.executable}" -m dispatchlab.cli "$@"\n')
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = dict(os.environ)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
               DISPATCHLAB_TRACES=str(TRACES_DIR), MPLBACKEND="Agg", COLUMNS="160",
               PYTHONPATH=src + (os.pathsep + env["PYTHONPATH"]
                                 if env.get("PYTHONPATH") else ""))
    return env


@pytest.mark.parametrize("page, needs_traces", _params())
def test_page_blocks_run(page, needs_traces, tmp_path):
    if needs_traces and not TRACES_DIR.is_dir():
        pytest.skip(f"{page} reads traces from $DISPATCHLAB_TRACES, absent here: "
                    f"{TRACES_DIR} is not a folder")
    env = _scratch(tmp_path)
    items = [{"lang": b.lang, "line": b.line, "code": b.code, "expect": list(b.expect)}
             for b in _run_blocks(page)]
    (tmp_path / ".blocks.json").write_text(json.dumps(items))
    proc = subprocess.run([sys.executable, str(RUNNER), ".blocks.json"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (f"docs/{page}:\n" + proc.stdout[-4000:]
                                  + proc.stderr[-4000:])


def test_every_exemption_names_a_block():
    known = {(b.page, b.first_line) for p in pages() for b in blocks(p)}
    stale = [key for key in EXEMPT
             if not any(page == key[0] and first.startswith(key[1]) for page, first in known)]
    assert not stale, f"exemptions naming no block: {stale}"


def test_walkthroughs_exempt_only_what_needs_a_cluster_or_the_set_up():
    """On the getting-started and tutorial pages every block runs, but for the set-up
    commands and the export that needs a real cluster."""
    exempt = sorted(key for key in EXEMPT if is_walkthrough(key[0]))
    assert exempt == [("getting-started.md", "make demo"),
                      ("tutorials/cluster.md", "SLURM_TIME_FORMAT=%s sacct")]
