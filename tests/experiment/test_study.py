"""The prediction study (seed 000, section 5.2): library API, merged queue lengths, CLI."""

from __future__ import annotations

import csv
import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.core.deprecation import MovedWarning
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.experiment import study as study_module
from dispatchlab.experiment.study import (
    TABLE_COLUMNS,
    run_prediction_study,
)
from dispatchlab.metrics import StepFunction, distributions
from dispatchlab.metrics.distributions import (
    merge_step_functions,
    merged_distributions,
    slowdown_changed_mask,
    weighted_box_stats,
)
from dispatchlab.platform import Platform
from dispatchlab.predict import make_predictor
from dispatchlab.report import study as report_study
from dispatchlab.report.study import study_figures, write_study
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim import Simulation
from dispatchlab.workload.jobs import JobTable
from dispatchlab.workload.synthetic import generate_synthetic

DISPATCHERS = ["fifo", "sjf", "ljf", "easy"]
PREDICTORS = ["walltime", "real"]


@pytest.fixture(scope="module")
def synthetic():
    return generate_synthetic(400, cores=32, seed=3), Platform.pooled(32)


@pytest.fixture(scope="module")
def study(synthetic):
    jobs, plat = synthetic
    return run_prediction_study(jobs, plat, DISPATCHERS, PREDICTORS, tau=10)


def test_one_row_per_combination_matching_independent_runs(study, synthetic):
    jobs, plat = synthetic
    rows = study.rows()
    assert len(rows) == 8
    assert [(r["dispatcher"], r["predictor"]) for r in rows] == [
        (d, p) for d in DISPATCHERS for p in PREDICTORS]
    assert all(set(r) == set(TABLE_COLUMNS) for r in rows)
    for row in rows:
        ref = run_summary(Simulation(plat, jobs, make_dispatcher(row["dispatcher"]),
                         make_predictor(row["predictor"])).run())
        assert row["mean_wait"] == pytest.approx(ref["mean_wait"], rel=0, abs=1e-9)
        assert row["mean_bsld"] == pytest.approx(ref["mean_bsld"], rel=1e-12)
    # the combinations really differ (otherwise the study is vacuous)
    assert len({round(r["mean_wait"], 3) for r in rows}) > 2


def test_rows_carry_waits_and_utilization(study):
    for row, run in zip(study.rows(), study.runs, strict=True):
        s = run.summary
        assert row["median_wait"] == s["median_wait"] and row["max_wait"] == s["max_wait"]
        assert row["utilization"] == s["utilization"]
        assert row["steady_utilization"] == s.get("steady_utilization")
        assert 0 < row["utilization"] <= 1
        ran = run.start >= 0
        assert row["max_wait"] == int((run.start[ran] - study.submit[ran]).max())
    # a summary without the steady-state key (older runs) gives None, not an error
    run = study.runs[0]
    old = dataclasses.replace(run, summary={k: v for k, v in run.summary.items()
                                            if k != "steady_utilization"})
    assert dataclasses.replace(study, runs=[old]).rows()[0]["steady_utilization"] is None


def _fits(fig) -> bool:
    """Every title and legend text lies inside the figure once drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    box = fig.bbox
    texts = [fig._suptitle] if fig._suptitle is not None else []
    for ax in fig.axes:
        texts += [ax.title, ax.yaxis.label, ax.xaxis.label]
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
    for t in texts:
        if not t.get_text():
            continue
        ext = t.get_window_extent(canvas.get_renderer())
        if ext.x0 < box.x0 - 1 or ext.x1 > box.x1 + 1 or ext.y1 > box.y1 + 1:
            return False
    return True


def test_study_figures_legends_colours_and_titles(study):
    from matplotlib.colors import to_rgba
    from matplotlib.patches import PathPatch

    from dispatchlab.report.plots import colour_map

    figs = study_figures(study)
    assert list(figs) == ["slowdown.png", "slowdown_by_class.png", "queue_length.png"]
    default = colour_map(PREDICTORS)
    for name, fig in figs.items():
        assert _fits(fig), name
        legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
        assert len(legends) == 1, name  # one legend, also on the three-panel figure
        assert [t.get_text() for t in legends[0].get_texts()] == ["W (walltime)", "R (real)"]
        faces = [p.get_facecolor()[:3] for p in fig.axes[0].patches
                 if isinstance(p, PathPatch)]
        assert faces == [to_rgba(default[r.predictor])[:3] for r in study.runs]
    # explicit colours per predictor
    figs = study_figures(study, {"real": "#000000"})
    faces = [p.get_facecolor()[:3] for p in figs["slowdown.png"].axes[0].patches
             if isinstance(p, PathPatch)]
    assert faces[1] == (0.0, 0.0, 0.0) and faces[0] == to_rgba(default["walltime"])[:3]
    assert study.groups()["easy-W"] == "walltime" and study.groups()["fifo-R"] == "real"


def test_study_figure_titles_fit_with_few_combinations():
    jobs = JobTable.from_arrays(submit=[0, 10, 20], run=[100, 50, 10], units=[2, 2, 1],
                                requested_time=[200, 100, 20])
    res = run_prediction_study(jobs, Platform.pooled(2), ["easy"], ["walltime"])
    for name, fig in study_figures(res).items():
        assert _fits(fig), name


def test_tables_in_experiment_figures_in_report(tmp_path):
    """experiment/ writes the study's tables; report/ adds the figures; the old method
    and names still work, with a warning."""
    jobs = JobTable.from_arrays(submit=[0, 10, 20], run=[100, 50, 10], units=[2, 2, 1],
                                requested_time=[200, 100, 20])
    res = run_prediction_study(jobs, Platform.pooled(2), ["fifo", "easy"], ["walltime"])
    tables = res.write_tables(tmp_path / "t")
    assert [p.name for p in tables] == ["study.csv", "study.json"]
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["study.csv", "study.json"]
    paths = write_study(res, tmp_path / "new")
    assert [p.name for p in paths] == ["study.csv", "study.json", "slowdown.png",
                                       "slowdown_by_class.png", "queue_length.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in paths[2:])
    assert (tmp_path / "new" / "study.csv").read_bytes() == (tmp_path / "t" / "study.csv"
                                                             ).read_bytes()
    with pytest.warns(MovedWarning, match=r"StudyResult\.write moved to "
                      r"dispatchlab\.report\.study\.write_study"):
        old = res.write(tmp_path / "old")
    assert [p.name for p in old] == [p.name for p in paths]
    for name in ("study.csv", "study.json"):
        assert (tmp_path / "old" / name).read_bytes() == (tmp_path / "new" / name).read_bytes()
    for name in ("study_figures", "plot_study", "predictor_legend"):
        with pytest.warns(MovedWarning, match=rf"study\.{name} moved to "
                          rf"dispatchlab\.report\.study\.{name}"):
            assert getattr(study_module, name) is getattr(report_study, name)


def test_changed_mask_on_study_matches_definition(study):
    sld = study.slowdowns()
    assert sld.shape == (8, len(study.submit))
    expected = [any(sld[i, j] != 1.0 for i in range(8) if np.isfinite(sld[i, j]))
                for j in range(sld.shape[1])]
    assert study.changed_jobs().tolist() == expected
    assert 0 < study.changed_jobs().sum() < len(study.submit)


def test_changed_filter_tiny_three_jobs():
    # 2 cores. Job 0 (t=0, 2 cores, 100 s) starts at once everywhere -> slowdown 1
    # always. Jobs 1 (t=10, 2 cores, 50 s) and 2 (t=20, 1 core, 10 s) must wait for
    # job 0 to end at t=100: both have slowdown > 1 in every combination.
    jobs = JobTable.from_arrays(submit=[0, 10, 20], run=[100, 50, 10], units=[2, 2, 1],
                                 requested_time=[200, 100, 20])
    res = run_prediction_study(jobs, Platform.pooled(2), ["fifo", "sjf"],
                               ["walltime", "real"])
    sld = res.slowdowns()
    assert np.all(sld[:, 0] == 1.0)
    assert np.all(sld[:, 1:] > 1.0)
    assert res.changed_jobs().tolist() == [False, True, True]
    # pure helper: a job differing from 1 in one combination only is kept; NaN (rejected)
    # never counts as a difference
    mat = np.array([[1.0, 1.0, np.nan, 1.0],
                    [1.0, 2.5, np.nan, np.nan]])
    assert slowdown_changed_mask(mat).tolist() == [False, True, False, False]


def test_merged_queue_length_distribution_hand_made():
    # A: 0 on [0,10), 2 on [10,20), 0 on [20,30), 1 on [30,40)     (domain [0,40))
    # B: 1 on [5,10), 0 on [10,25), 3 on [25,35)                    (domain [5,35))
    # Outside its own domain a function counts as 0 (empty queue).
    a = StepFunction(np.array([0, 10, 20, 30]), np.array([0, 2, 0, 1]), 40)
    b = StepFunction(np.array([5, 10, 25]), np.array([1, 0, 3]), 35)
    times, durations, values = merge_step_functions([a, b])
    # union of breakpoints and ends: 0 5 10 20 25 30 35 40
    assert times.tolist() == [0, 5, 10, 20, 25, 30, 35]
    assert durations.tolist() == [5, 5, 10, 5, 5, 5, 5]
    assert values.tolist() == [[0, 0, 2, 0, 0, 1, 1],
                               [0, 1, 0, 0, 3, 3, 0]]
    # Both are 0 on [0,5) and [20,25): those 10 s are dropped; 30 s remain.
    # A over the kept 30 s: 0 during [5,10)+[25,30) = 10 s, 2 during [10,20) = 10 s,
    #   1 during [30,40) = 10 s.
    # B: 0 during [10,20)+[35,40) = 15 s, 1 during [5,10) = 5 s, 3 during [25,35) = 10 s.
    (va, sa), (vb, sb) = merged_distributions([a, b])
    assert va.tolist() == [0, 1, 2] and sa.tolist() == [10, 10, 10]
    assert vb.tolist() == [0, 1, 3] and sb.tolist() == [15, 5, 10]
    # without the exclusion each one covers the whole 40 s grid
    (_, fa), (_, fb) = merged_distributions([a, b], exclude_all_zero=False)
    assert fa.tolist() == [20, 10, 10] and fb.tolist() == [25, 5, 10]
    # weighted box stats for B: cumulative seconds 15, 20, 30 of 30 ->
    # q1 (7.5 s) = 0, median (15 s) = 0, q3 (22.5 s) = 3; mean = (5*1 + 10*3)/30
    st = weighted_box_stats(vb, sb)
    assert (st["whislo"], st["q1"], st["med"], st["q3"], st["whishi"]) == (0, 0, 0, 3, 3)
    assert st["mean"] == pytest.approx(35 / 30)
    # the same as expanding one value per second (fine on such a tiny example)
    per_second = np.repeat(vb, sb)
    assert st["q3"] == np.quantile(per_second, 0.75, method="inverted_cdf")


def test_study_queue_distribution_consistent(study):
    dists = study.queue_distributions()
    assert len(dists) == 8
    totals = {int(s.sum()) for _, s in dists}
    assert len(totals) == 1  # every combination is measured over the same kept time
    funcs = study.queue_functions()
    # kept time = time where at least one queue is non-empty <= the common horizon
    assert totals.pop() <= funcs[0].duration
    # no kept interval has every queue empty
    _, _, values = merge_step_functions(funcs)
    assert np.any(values != 0, axis=0).sum() > 0


# ---------------------------------------------------------------------------- CLI
def _swf(path: Path) -> Path:
    rows = [(0, 100, 2, 200), (10, 50, 4, 100), (20, 300, 8, 400), (30, 20, 1, 60),
            (40, 80, 2, 100), (50, 10, 6, 30), (60, 5, 1, 10), (70, 200, 3, 250),
            (80, 40, 2, 90), (90, 60, 5, 90)]
    lines = ["; Version: 2.2", "; MaxProcs: 8"]
    for k, (sub, run, procs, req) in enumerate(rows, start=1):
        fields = [k, sub, -1, run, procs, -1, -1, procs, req, -1, 1, 1, 1, -1, 1, -1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")
    return path


def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dispatchlab.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_cli_study_predictions(tmp_path):
    swf = _swf(tmp_path / "small.swf")
    out = tmp_path / "out"
    proc = _cli("study", "predictions", swf, "--out", out, "--dispatchers", "fifo,easy",
                "--predictors", "walltime,real")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for name in ("slowdown.png", "slowdown_by_class.png", "queue_length.png"):
        assert (out / name).stat().st_size > 1000
    with open(out / "study.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4
    assert [(r["dispatcher"], r["predictor"]) for r in rows] == [
        ("fifo", "walltime"), ("fifo", "real"), ("easy", "walltime"), ("easy", "real")]
    assert (out / "study.json").stat().st_size > 0
    assert "easy" in proc.stdout


@pytest.mark.parametrize("option,value", [("--dispatchers", "fifo,nosuch"),
                                          ("--predictors", "walltime,nosuch")])
def test_cli_study_unknown_name(tmp_path, option, value):
    swf = _swf(tmp_path / "small.swf")
    proc = _cli("study", "predictions", swf, option, value, "--out", tmp_path / "o")
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert "nosuch" in lines[0]
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "o").exists()


def test_the_distributions_live_in_metrics_and_study_still_exports_them():
    """The step-function distributions are metrics (L1); the study (L7) imports them and
    keeps its old names; the report's plots no longer import the study."""
    import grimp

    for name in distributions.__all__:
        assert getattr(study_module, name) is getattr(distributions, name)
        assert getattr(distributions, name).__module__ == "dispatchlab.metrics.distributions"
    graph = grimp.build_graph("dispatchlab", cache_dir=None)
    assert graph.find_shortest_chain("dispatchlab.report.plots",
                                     "dispatchlab.experiment.study") is None


def test_each_combination_is_assembled_by_build(monkeypatch):
    # one way to assemble a run: every dispatcher x predictor goes through run.build
    # with the study's table, platform, cap, power predictor and duration model
    from dispatchlab.power.cap import PowerCap
    from dispatchlab.power.data import with_power
    from dispatchlab.power.model import POWER_COLUMNS
    from dispatchlab.predict.power.predictors import make_power_predictor
    from dispatchlab.sim.duration import make_duration_model

    jobs = JobTable.from_arrays(submit=[0, 10, 20], run=[100, 50, 10], units=[2, 2, 1],
                                requested_time=[200, 100, 20])
    jobs = with_power(jobs, {c: np.full(3, 100.0) for c in POWER_COLUMNS})
    plat = Platform.pooled(2)
    cap, pp = PowerCap.window(1e9), make_power_predictor("real")
    model = make_duration_model("none")
    calls = []
    real_build = study_module.build

    def spy(config, **kwargs):
        calls.append((config, kwargs))
        return real_build(config, **kwargs)

    monkeypatch.setattr(study_module, "build", spy)
    run_prediction_study(jobs, plat, ["fifo", "easy:order=sjf"], ["walltime", "real"],
                         cap=cap, power_predictor=pp, duration_model=model)
    assert [(c.dispatcher.text, c.predictor.text) for c, _ in calls] == [
        ("fifo", "walltime"), ("fifo", "real"), ("easy:order=sjf", "walltime"),
        ("easy:order=sjf", "real")]
    for _, kwargs in calls:
        assert kwargs["jobs"] is jobs and kwargs["platform"] is plat
        assert kwargs["duration_model"] is model
        given = kwargs["power"](jobs, plat)
        assert given.cap is cap and given.power_predictor is pp and given.jobs is jobs
