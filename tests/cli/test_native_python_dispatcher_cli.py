"""A dispatcher written in Python (the README's ``examples/custom_dispatcher.py``)
through the run layer: ``dispatchlab simulate --engine native`` writes the
``jobs.parquet`` of ``--engine python`` byte for byte, with the same event and pass
counts and dispatch calls, ``auto`` runs it natively, and a dispatcher that breaks the
rules ends both engines with the same ``error:`` line."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_engine_cli import assert_same_files, simulate, summary, synthetic_trace

pytest.importorskip("dispatchlab._core", reason="the native core is not built (make native)")

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "custom_dispatcher.py")


@pytest.mark.parametrize("extra", [(), ("--predictor", "real", "--overrun", "kill"),
                                   ("--nodes", "12", "--cores-per-node", "4")])
def test_the_readme_example_writes_the_same_jobs_parquet(capsys, tmp_path, extra):
    trace = synthetic_trace(tmp_path, 500, seed=21, cores=48)
    assert_same_files(capsys, tmp_path, trace, "--dispatcher",
                      f"{EXAMPLE}:WidestFirst:max_starts=3", *extra)
    native, python = (summary(tmp_path / f"{trace.stem}-{e}") for e in ("native", "python"))
    assert native["decision_calls"] == python["decision_calls"] > 0


def test_auto_runs_it_natively(capsys, tmp_path):
    trace = synthetic_trace(tmp_path, 100, seed=22, cores=32)
    rc, text, err = simulate(capsys, trace, tmp_path / "out", "--dispatcher",
                             f"{EXAMPLE}:WidestFirst")
    assert rc == 0, err
    assert summary(tmp_path / "out")["engine"] == "native" and "engine: native" in text


BROKEN = '''
from dispatchlab import Dispatcher
from dispatchlab.dispatch import Start


class TooWide(Dispatcher):
    name = "too-wide"

    def dispatch(self, view):
        return [Start(j) for j in view.queue.jobs.tolist()]
'''


def test_a_broken_rule_is_the_same_error_line(capsys, tmp_path, monkeypatch):
    (tmp_path / "too_wide.py").write_text(BROKEN)
    trace = synthetic_trace(tmp_path, 100, seed=23, cores=16)
    monkeypatch.delenv("DISPATCHLAB_TRACEBACK", raising=False)
    lines = []
    for engine in ("native", "python"):
        rc, _, err = simulate(capsys, trace, tmp_path / engine, "--engine", engine,
                              "--dispatcher", f"{tmp_path / 'too_wide.py'}:TooWide")
        assert rc == 1
        lines.append([line for line in err.splitlines() if line.startswith("error:")])
    assert lines[0] == lines[1] and len(lines[0]) == 1
    assert "TooWide() started job" in lines[0][0] and "free" in lines[0][0]
