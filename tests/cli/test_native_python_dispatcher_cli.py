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


SLOWING = '''
from dispatchlab import Dispatcher
from dispatchlab.dispatch import SetSpeed, Start


class Slowing(Dispatcher):
    """Starts jobs in queue order while they fit; halves the speed of the first job it
    sees running at an even time (a rate change, which needs no declaration)."""

    name = "slowing"

    def __init__(self):
        self.slowed = set()

    def dispatch(self, view):
        out, free = [], view.free_cores
        for job, units in zip(view.queue.jobs.tolist(), view.queue.units.tolist()):
            if units > free:
                break
            out.append(Start(job))
            free -= units
        for job in view.running.jobs.tolist():
            if view.now % 2 == 0 and job not in self.slowed:
                self.slowed.add(job)
                out.append(SetSpeed(job, 0.5))
                break
        return out
'''


def test_auto_makes_a_rate_changing_run_again_on_the_python_engine(capsys, tmp_path):
    """A Python dispatcher may return SetSpeed without declaring it: under auto the
    native run stops at that decision and the whole run is made again on the Python
    engine, writing the jobs.parquet of --engine python and saying so; --engine native
    ends with the one error line naming --engine python."""
    (tmp_path / "slowing.py").write_text(SLOWING)
    trace = synthetic_trace(tmp_path, 200, seed=24, cores=16)
    spec = f"{tmp_path / 'slowing.py'}:Slowing"
    rc, text, err = simulate(capsys, trace, tmp_path / "auto", "--dispatcher", spec)
    assert rc == 0, err
    assert summary(tmp_path / "auto")["engine"] == "python"
    assert "engine: python (" in text and "SetSpeed" in text
    rc, _, err = simulate(capsys, trace, tmp_path / "python", "--engine", "python",
                          "--dispatcher", spec)
    assert rc == 0, err
    assert ((tmp_path / "auto" / "jobs.parquet").read_bytes()
            == (tmp_path / "python" / "jobs.parquet").read_bytes())
    rc, _, err = simulate(capsys, trace, tmp_path / "native", "--engine", "native",
                          "--dispatcher", spec)
    assert rc == 1
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "run it with --engine python" in errors[0]
