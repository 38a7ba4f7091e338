"""``compare``: every configuration on every slice, results independent of the worker
count, each slice run equal to a direct simulation, statistics paired on slices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dispatchlab.core.components import parse_component, parse_component_list
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.compare import run_comparison
from dispatchlab.metrics import Measure
from dispatchlab.metrics.keys import WALL_CLOCK
from dispatchlab.platform import Platform
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim import Simulation
from dispatchlab.workload.clean import select
from dispatchlab.workload.load import load_trace
from test_cli import assert_ok, assert_user_error, run_cli, synthetic_swf

#: summary keys that depend on the machine's speed, not on the schedule
TIMING = {"simulate_seconds", "wall_seconds", *WALL_CLOCK}


@pytest.fixture(scope="module")
def swf(tmp_path_factory) -> Path:
    return synthetic_swf(tmp_path_factory.mktemp("compare") / "syn.swf", n=900)


def _schedule_part(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in TIMING}


def test_slices_runs_equal_direct_simulations(swf: Path) -> None:
    jobs = load_trace(swf)
    plat = Platform.pooled(64)
    d = parse_component_list(["easy,sjf"], "dispatcher")
    p = parse_component_list(["walltime"], "predictor")
    # the Python engine, as the direct runs below (a native run's summary has no
    # decision calls; tests/sim/test_native.py compares the engines' results)
    comp = run_comparison(jobs, plat, d, p, slices=(3, 200), lead_in=20, workers=1,
                          engine="python")
    # 3 slices x 2 dispatchers x 1 predictor
    assert len(comp.runs) == 6
    # 900 jobs, 3 segments of 220: free 240 spread over 2 gaps -> starts 0, 340, 680
    assert [(s.first, s.start, s.stop) for s in comp.slices] == [
        (0, 20, 220), (340, 360, 560), (680, 700, 900)]
    for run in comp.runs:
        s = comp.slices[run.slice]
        table = select(jobs, copy=True, jobs=(s.first, s.stop))
        disp = parse_component(run.dispatcher, "dispatcher").build()
        pred = parse_component("walltime", "predictor").build()
        direct = run_summary(Simulation(plat, table, disp, pred).run(),
                             measure=Measure.parse("index:20:220"))
        assert run.summary["measured_jobs"] == 200
        assert _schedule_part(run.summary) == _schedule_part(direct)
    # statistics: one entry per configuration, paired with the baseline on 3 slices
    labels = [e["config"] for e in comp.statistics]
    assert labels == ["easy", "sjf"]
    vs = comp.statistics[1]["vs_baseline"]["mean_wait"]
    assert vs.n_pairs == 3
    waits = {(r.dispatcher, r.slice): r.summary["mean_wait"] for r in comp.runs}
    expected = sum(waits["sjf", i] - waits["easy", i] for i in range(3)) / 3
    assert vs.diff == pytest.approx(expected)


def test_worker_count_does_not_change_results(swf: Path) -> None:
    jobs = load_trace(swf)
    plat = Platform.pooled(64)
    d = parse_component_list(["easy", "conservative"], "dispatcher")
    p = parse_component_list(["walltime,tsafrir"], "predictor")
    one = run_comparison(jobs, plat, d, p, slices=(2, 300), workers=1)
    two = run_comparison(jobs, plat, d, p, slices=(2, 300), workers=2)
    assert [(r.dispatcher, r.predictor, r.slice) for r in one.runs] == \
        [(r.dispatcher, r.predictor, r.slice) for r in two.runs]
    for a, b in zip(one.runs, two.runs, strict=True):
        assert _schedule_part(a.summary) == _schedule_part(b.summary)
    # with two predictors the labels name both parts, paired within a predictor
    assert [e["config"] for e in one.statistics] == [
        "easy / walltime", "conservative / walltime", "easy / tsafrir",
        "conservative / tsafrir"]


def test_library_errors(swf: Path) -> None:
    jobs = load_trace(swf)
    d = parse_component_list(["easy"], "dispatcher")
    p = parse_component_list(["walltime"], "predictor")
    with pytest.raises(InputError, match="baseline 'sjf' is not among"):
        run_comparison(jobs, Platform.pooled(64), d, p, baseline="sjf")
    with pytest.raises(InputError, match="need 10 x"):
        run_comparison(jobs, Platform.pooled(64), d, p, slices=(10, 100))
    with pytest.raises(InputError, match="does not combine with slices"):
        run_comparison(jobs, Platform.pooled(64), d, p, slices=(2, 100), measure="index:1:")


def test_cli_compare_with_slices(swf: Path, tmp_path: Path) -> None:
    proc = run_cli("compare", swf, "--dispatcher", "easy", "--dispatcher", "easy:order=sjf",
                   "--dispatcher", "fifo", "--cores-per-node", "8", "--nodes", "8",
                   "--slices", "3", "--slice-jobs", "250", "--baseline", "EASY",
                   "--out", tmp_path, "--workers", "2")
    assert_ok(proc)
    assert "3 slices of 250 jobs (lead-in 25)" in proc.stdout
    assert "paired differences to easy" in proc.stdout
    data = json.loads((tmp_path / "compare.json").read_text())
    assert len(data["runs"]) == 9 and data["baseline"] == "easy"
    fifo = next(e for e in data["statistics"] if e["config"] == "fifo")
    assert fifo["vs_baseline"]["mean_wait"]["n_pairs"] == 3


def test_cli_compare_without_slices(swf: Path) -> None:
    proc = run_cli("compare", swf, "--dispatcher", "easy,sjf", "--workers", "1")
    assert_ok(proc)
    for label in ("easy", "sjf", "steady", "util"):
        assert label in proc.stdout


@pytest.mark.parametrize(("args", "needles"), [
    (["--dispatcher", "easy", "--slices", "3"], ["--slices and --slice-jobs go together"]),
    (["--dispatcher", "easy", "--lead-in", "3"], ["--lead-in applies with --slices"]),
    (["--dispatcher", "easy", "--baseline", "sjf"], ["--baseline", "not among"]),
    (["--dispatcher", "easy", "--slices", "5", "--slice-jobs", "500"], ["slices", "need"]),
    (["--dispatcher", "easy", "--dispatcher", "easy"], ["given twice"]),
])
def test_cli_compare_errors(swf: Path, args: list[str], needles: list[str]) -> None:
    assert_user_error(run_cli("compare", swf, *args), *needles)
