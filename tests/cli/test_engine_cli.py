"""``--engine`` on the command line: the native and the Python engine write the same
``jobs.parquet`` byte for byte, ``auto`` picks the native engine exactly when it can
run the run and says which ran (printed and in ``summary.json``), a run the native
engine cannot simulate is one ``error:`` line, and a panic in the core is the one
``error:`` line of a bug (with the panic message), never an abort."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dispatchlab.cli as cli
from campaign_helpers import synthetic_trace as jobs_file

core = pytest.importorskip("dispatchlab._core",
                           reason="the native core is not built (make native)")


def synthetic_trace(folder: Path, n: int, seed: int, cores: int) -> Path:
    """A synthetic SWF trace of ``n`` jobs whose header names ``cores`` pooled cores."""
    path = jobs_file(folder, n, seed=seed, cores=cores)
    text = path.read_text()
    if "; MaxProcs:" not in text:
        path.write_text(f"; MaxProcs: {cores}\n" + text)
    return path


def simulate(capsys, trace: Path, out: Path | None, *args: str) -> tuple[int, str, str]:
    """``dispatchlab simulate TRACE ARGS [--out OUT]`` in this process: (status,
    stdout, stderr)."""
    argv = ["simulate", str(trace), *args] + ([] if out is None else ["--out", str(out)])
    rc = cli.main(argv)
    got = capsys.readouterr()
    return rc, got.out, got.err


def summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def assert_same_files(capsys, tmp_path: Path, trace: Path, *args: str) -> None:
    outs = {}
    for engine in ("native", "python"):
        out = tmp_path / f"{trace.stem}-{engine}"
        rc, text, err = simulate(capsys, trace, out, "--engine", engine, *args)
        assert rc == 0, err
        assert f"engine: {engine}" in text
        assert summary(out)["engine"] == engine
        outs[engine] = out
    native, python = (outs[e] / "jobs.parquet" for e in ("native", "python"))
    assert native.read_bytes() == python.read_bytes()
    a, b = summary(outs["native"]), summary(outs["python"])
    assert (a["events"], a["passes"]) == (b["events"], b["passes"])


@pytest.mark.parametrize(("seed", "cores", "args"), [
    (1, 64, ("--dispatcher", "easy")),
    (2, 32, ("--dispatcher", "fifo", "--predictor", "real")),
    (3, 128, ("--dispatcher", "easy", "--overrun", "kill", "--predictor", "real")),
    (4, 64, ("--dispatcher", "easy", "--cores-per-node", "1", "--nodes", "48")),
])
def test_native_and_python_write_the_same_jobs_parquet(capsys, tmp_path, seed, cores, args):
    trace = synthetic_trace(tmp_path, 600, seed=seed, cores=cores)
    assert_same_files(capsys, tmp_path, trace, *args)


@pytest.mark.traces
@pytest.mark.parametrize(("name", "jobs"), [("KTH-SP2-1996-2.1-cln.swf.gz", "0:8000"),
                                            ("HPC2N-2002-2.2-cln.swf.gz", "10000:20000")])
@pytest.mark.parametrize("dispatcher", ["fifo", "easy"])
def test_real_traces_give_the_same_jobs_parquet(capsys, tmp_path, traces_dir, name, jobs,
                                                 dispatcher):
    assert_same_files(capsys, tmp_path, traces_dir / name, "--dispatcher", dispatcher,
                      "--jobs", jobs)


@pytest.mark.parametrize(("dispatcher", "engine"), [
    ("fifo", "native"), ("easy", "native"), ("easy:order=urgency", "python"),
    ("prb", "python")])
def test_auto_picks_the_native_engine_when_it_can(capsys, tmp_path, dispatcher, engine):
    trace = synthetic_trace(tmp_path, 200, seed=5, cores=32)
    rc, text, err = simulate(capsys, trace, tmp_path / "out", "--dispatcher", dispatcher)
    assert rc == 0, err
    assert summary(tmp_path / "out")["engine"] == engine
    line = next(s for s in text.splitlines() if s.startswith("engine: "))
    assert line == ("engine: native" if engine == "native"
                    else f"engine: python (dispatcher {dispatcher.split(':')[0]!r} "
                    + ("with order='urgency' is not native yet (native: order=fifo, sjf, "
                       "walltime, ewt, random, priority))"
                       if ":" in dispatcher else "is not native yet)"))


def test_native_when_it_cannot_run_is_one_error_line(capsys, tmp_path):
    trace = synthetic_trace(tmp_path, 50, seed=6, cores=16)
    rc, _, err = simulate(capsys, trace, None, "--dispatcher", "prb", "--engine", "native")
    assert rc == 2
    assert err == ("error: field --engine: the native engine cannot run this: dispatcher "
                   "'prb' is not native yet (use --engine auto or python)\n")
    rc, _, err = simulate(capsys, trace, None, "--engine", "nativ")
    assert rc == 2 and err.startswith("error: field --engine: the engine is one of auto, "
                                      "native, python, got 'nativ' (did you mean")


def test_decision_traces_run_on_the_python_engine(capsys, tmp_path):
    trace = synthetic_trace(tmp_path, 50, seed=7, cores=16)
    rc, text, err = simulate(capsys, trace, tmp_path / "out", "--trace-decisions",
                             str(tmp_path / "d.parquet"))
    assert rc == 0, err
    assert summary(tmp_path / "out")["engine"] == "python" and "engine: python" in text
    rc, _, err = simulate(capsys, trace, None, "--engine", "native", "--trace-decisions",
                          str(tmp_path / "d.parquet"))
    assert rc == 2 and "--trace-decisions needs --engine python" in err


def test_a_panic_in_the_core_is_the_error_line_of_a_bug(capsys, tmp_path, monkeypatch):
    """The core panics (through the binding's test hook, on the path of a run): one
    ``error:`` line with the panic message and status 1; the traceback on request."""
    trace = synthetic_trace(tmp_path, 50, seed=8, cores=16)

    def panics(*args, **kwargs):
        return core._panic_for_test("index out of bounds: the len is 3 but the index is 7")

    monkeypatch.setattr(core, "simulate_counting", panics)
    monkeypatch.delenv(cli.TRACEBACK_ENV, raising=False)
    rc, _, err = simulate(capsys, trace, None, "--dispatcher", "easy")
    assert rc == 1
    assert err == ("error: the native core failed (a bug in dispatchlab; "
                   "DISPATCHLAB_TRACEBACK=1 shows where; --engine python avoids it): the "
                   "native core panicked (a bug): index out of bounds: the len is 3 but the "
                   "index is 7\n")
    monkeypatch.setenv(cli.TRACEBACK_ENV, "1")
    with pytest.raises(RuntimeError, match="native core panicked"):
        cli.main(["simulate", str(trace), "--dispatcher", "easy"])


def test_compare_and_study_say_which_engine_ran(capsys, tmp_path):
    trace = synthetic_trace(tmp_path, 150, seed=9, cores=32)
    rc = cli.main(["compare", str(trace), "--dispatcher", "fifo,prb,easy", "--workers",
                   "1", "--out", str(tmp_path / "cmp")])
    text = capsys.readouterr().out
    assert rc == 0 and "engine: native for fifo, easy; python for prb" in text
    runs = json.loads((tmp_path / "cmp" / "compare.json").read_text())["runs"]
    assert {r["dispatcher"]: r["summary"]["engine"] for r in runs} == {
        "fifo": "native", "prb": "python", "easy": "native"}
    rc = cli.main(["compare", str(trace), "--dispatcher", "fifo,prb", "--engine", "native"])
    err = capsys.readouterr().err
    assert rc == 2 and "dispatcher 'prb' is not native yet" in err
    # history runs natively (called in Python by the core), except under an ordering
    # ranked over all jobs before the run
    rc = cli.main(["study", "predictions", str(trace), "--dispatchers", "easy:order=walltime",
                   "--predictors", "walltime,history", "--out", str(tmp_path / "st")])
    text = capsys.readouterr().out
    assert rc == 0
    assert ("engine: native for easy:order=walltime / walltime; python for "
            "easy:order=walltime / history") in text
    rows = json.loads((tmp_path / "st" / "study.json").read_text())["rows"]
    assert [r["engine"] for r in rows] == ["native", "python"]


@pytest.mark.traces
def test_validate_runs_on_the_engine_asked_for(capsys, traces_dir):
    trace = traces_dir / "KTH-SP2-1996-2.1-cln.swf.gz"
    for engine in ("native", "python"):
        rc = cli.main(["validate", str(trace), "--jobs", "0:3000", "--engine", engine])
        got = capsys.readouterr()
        assert rc == 0, got.err
        assert f"engine: {engine}\n" in got.out
