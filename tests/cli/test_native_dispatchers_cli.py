"""The native dispatchers beyond ``fifo`` and ``easy`` (``sjf``, ``ljf``, ``easy``'s
backfill orders, K reservations and static priorities, ``conservative``) through the
run layer: ``dispatchlab simulate --engine native`` writes the ``jobs.parquet`` of
``--engine python`` byte for byte, with the same event and pass counts, and ``auto``
runs them natively."""

from __future__ import annotations

import pytest

from test_engine_cli import assert_same_files, simulate, summary, synthetic_trace

pytest.importorskip("dispatchlab._core", reason="the native core is not built (make native)")

#: (dispatcher spec, extra options)
CASES = [
    ("sjf", ()),
    ("sjf:skip=True", ("--predictor", "real")),
    ("ljf", ()),
    ("ljf:skip=True", ("--overrun", "kill")),
    ("easy:order=sjf", ()),
    ("easy:reservations=3", ("--predictor", "real")),
    ("easy:reservations=2:order=sjf", ("--overrun", "kill")),
    ("easy:order=walltime", ()),
    ("easy:priority=random", ()),
    ("easy:priority=ewt:scope=queue", ()),
    ("easy:priority=walltime:scope=queue:order=sjf:reservations=2", ()),
    ("easy:priority=random:scope=queue:order=priority", ("--predictor", "real")),
    ("conservative", ()),
    ("conservative:order=sjf", ("--predictor", "real", "--overrun", "kill")),
]


@pytest.mark.parametrize(("dispatcher", "extra"), CASES)
def test_native_and_python_write_the_same_jobs_parquet(capsys, tmp_path, dispatcher, extra):
    trace = synthetic_trace(tmp_path, 500, seed=11, cores=48)
    assert_same_files(capsys, tmp_path, trace, "--dispatcher", dispatcher, *extra)


@pytest.mark.parametrize("dispatcher", ["sjf", "ljf:skip=True", "easy:reservations=3",
                                        "conservative"])
def test_auto_runs_them_natively(capsys, tmp_path, dispatcher):
    trace = synthetic_trace(tmp_path, 100, seed=12, cores=32)
    rc, text, err = simulate(capsys, trace, tmp_path / "out", "--dispatcher", dispatcher)
    assert rc == 0, err
    assert summary(tmp_path / "out")["engine"] == "native" and "engine: native" in text


@pytest.mark.traces
@pytest.mark.parametrize("dispatcher", ["conservative", "easy:order=sjf", "sjf"])
def test_a_real_trace_gives_the_same_jobs_parquet(capsys, tmp_path, traces_dir, dispatcher):
    assert_same_files(capsys, tmp_path, traces_dir / "HPC2N-2002-2.2-cln.swf.gz",
                      "--dispatcher", dispatcher, "--jobs", "10000:20000")
