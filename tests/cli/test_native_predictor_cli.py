"""``simulate`` with a predictor written in Python (``history``, the tutorial's class,
a class of a file) on the native engine: the same files and the same ``error:`` line as
on the Python engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_engine_cli import assert_same_files, simulate, synthetic_trace

pytest.importorskip("dispatchlab._core",
                    reason="the native core dispatchlab._core is not built (`make native`)")

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("seed", "args"), [
    (5, ("--dispatcher", "easy", "--predictor", "history")),
    (6, ("--dispatcher", "easy", "--order", "sjf", "--predictor", "tsafrir")),
    (7, ("--dispatcher", "conservative", "--predictor",
         f"{ROOT / 'examples' / 'custom_predictor.py'}:LastRun")),
    (8, ("--dispatcher", "easy", "--predictor", "history", "--cores-per-node", "4",
         "--nodes", "12", "--allocator", "best-fit")),
])
def test_python_predictors_write_the_same_jobs_parquet(capsys, tmp_path, seed, args):
    trace = synthetic_trace(tmp_path, 500, seed=seed, cores=48)
    assert_same_files(capsys, tmp_path, trace, *args)


BROKEN = '''
from dispatchlab import Predictor


class Negative(Predictor):
    name = "negative"

    def __init__(self):
        pass

    def predict(self, job, now):
        return -1 if job == 7 else 10
'''


def test_a_bad_estimate_is_the_same_error_line_on_both_engines(capsys, tmp_path):
    trace = synthetic_trace(tmp_path, 50, seed=9, cores=16)
    (tmp_path / "negative.py").write_text(BROKEN)
    errs = []
    for engine in ("native", "python"):
        rc, _, err = simulate(capsys, trace, None, "--engine", engine, "--predictor",
                              f"{tmp_path / 'negative.py'}:Negative")
        errs.append((rc, err))
    assert errs[0] == errs[1], errs
    rc, err = errs[0]
    assert rc != 0 and err.count("\n") == 1 and "predicted -1 for job 8" in err
