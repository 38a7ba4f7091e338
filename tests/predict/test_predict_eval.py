"""Evaluation of predictors on a replay of the trace's recorded schedule."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import TRACES_DIR
from dispatchlab.core.deprecation import MovedWarning
from dispatchlab.core.errors import InputError
from dispatchlab.experiment import duration_accuracy
from dispatchlab.experiment.duration_accuracy import (
    evaluate_predictors,
    replay_schedule,
)
from dispatchlab.predict import HistoryPredictor
from dispatchlab.report.duration_accuracy import (
    FIGURE_FILES,
    plot_prediction_errors,
    prediction_figures,
    write_prediction_report,
)
from dispatchlab.workload.jobs import JobTable

KTH = TRACES_DIR / "KTH-SP2-1996-2.1-cln.swf.gz"


def causal_jobs() -> JobTable:
    # user 1 throughout; rows A, B, C, D
    #   A: submit 0,    wait 20, run 80   -> runs 20..100  (observed run 100 - 20 = 80)
    #   B: submit 10,   wait 0,  run 1000 -> runs 10..1010 (still running at t = 100)
    #   C: submit 100,  wait 0,  run 50   -> runs 100..150
    #   D: submit 1010, wait 0,  run 10   -> B ends exactly at D's submission
    return JobTable.from_arrays(
        submit=[0, 10, 100, 1010], wait=[20, 0, 0, 0], run=[80, 1000, 50, 10],
        units=[1, 1, 2, 1], requested_time=[200, 2000, 5000, 6000], user=[1, 1, 1, 1])


def test_replay_is_causal_tsafrir():
    report = evaluate_predictors(causal_jobs(), ["tsafrir"])
    # A at 0: nothing completed -> its wall-time 200.
    # B at 10: A still running (ends at 100) -> wall-time 2000.
    # C at 100: A ends exactly at 100 -> visible; B still running -> not used. One job,
    #   its observed run = end - recorded start = 100 - 20 = 80 (not 100: the start is
    #   submit + wait). Had B been used: ceil((80 + 1000) / 2) = 540.
    # D at 1010: B ends exactly at 1010 -> visible. The last two completions are
    #   C (end 150, run 50) and B (end 1010, run 1000): ceil(1050 / 2) = 525 <= 6000.
    assert report.predicted["tsafrir"].tolist() == [200, 2000, 80, 525]


def test_replay_is_causal_history():
    report = evaluate_predictors(causal_jobs(), ["history"])
    # names (app) and queues are -1 for all, so rule 5 (same user + name) matches any
    # completed job of user 1; rules 1 and 3 need the same wall-time, which no earlier
    # job of D has (6000), and C's (5000) is unique too.
    # A: rule 7 -> 200. B: A still running at 10 -> rule 7 -> 2000.
    # C: only A completed (B running) -> A's observed run 80.
    # D: the most recent completion at or before 1010 is B (ending exactly at 1010) -> 1000.
    assert report.predicted["history"].tolist() == [200, 2000, 80, 1000]
    counts = report.rule_counts["history"]
    assert counts["5"] == 2 and counts["7"] == 2 and counts["1"] == 0


def four_jobs(wait=None) -> JobTable:
    return JobTable.from_arrays(
        submit=[0, 100, 200, 300], run=[600, 1200, 3600, 0], units=[1, 1, 1, 1],
        requested_time=[600, 1500, 1800, 60], user=[1, 2, 3, 4],
        wait=[0, 0, 0, 0] if wait is None else wait)


def test_metrics_hand_computed():
    report = evaluate_predictors(four_jobs(), ["walltime"])
    # walltime predicts the requested time:
    #   job 1: run 600,  predicted 600  -> error 0 s  (0 min),  exact, within 25 %
    #   job 2: run 1200, predicted 1500 -> error 300 (5 min),  over, within (300 <= 0.25*1200)
    #   job 3: run 3600, predicted 1800 -> error 1800 (30 min), under, not within (> 900)
    #   job 4: run 0,    predicted 60   -> error 60 (1 min),   over, not within (actual 0
    #          counts only for a prediction of 0)
    # MAE = (0 + 5 + 30 + 1) / 4 = 9 min; median of {0, 1, 5, 30} = (1 + 5) / 2 = 3 min;
    # under 1/4, over 2/4, within 2/4.
    m = report.metrics["walltime"]
    assert m["all"] == {"mae_min": pytest.approx(9.0), "median_ae_min": pytest.approx(3.0),
                        "under": 0.25, "over": 0.5, "within_25": 0.5, "jobs": 4}
    # classes by actual run: short = jobs 1, 2, 4 (0, 5, 1 min -> MAE 2), medium = job 3
    # (3600 s is medium), long = none
    assert m["short"]["jobs"] == 3 and m["short"]["mae_min"] == pytest.approx(2.0)
    assert m["short"]["median_ae_min"] == pytest.approx(1.0)
    assert m["medium"]["jobs"] == 1 and m["medium"]["mae_min"] == pytest.approx(30.0)
    assert m["medium"]["under"] == 1.0
    assert m["long"]["jobs"] == 0 and m["long"]["mae_min"] is None
    table = report.to_arrow()
    assert table.column_names == ["job_id", "predictor", "predicted", "actual", "submit"]
    assert table["predicted"].to_pylist() == [600, 1500, 1800, 60]
    assert table["actual"].to_pylist() == [600, 1200, 3600, 0]


def test_wait_missing_throughout_replays_with_wait_zero():
    # from_arrays fills wait with -1: A runs 0..100, so B (submitted at 100) sees it
    jobs = JobTable.from_arrays(submit=[0, 100], run=[100, 30], units=[1, 1],
                                requested_time=[500, 500], user=[7, 7])
    start, end, missing, all_missing = replay_schedule(jobs)
    assert start.tolist() == [0, 100] and end.tolist() == [100, 130]
    assert missing == 2 and all_missing
    report = evaluate_predictors(jobs, ["tsafrir"])
    assert report.wait_missing and report.missing_waits == 2
    assert report.predicted["tsafrir"].tolist() == [500, 100]
    assert report.summary()["wait_missing"] is True


def test_some_waits_missing_are_counted():
    report = evaluate_predictors(four_jobs(wait=[-1, 5, 0, -1]), ["walltime"])
    assert not report.wait_missing and report.missing_waits == 2


def test_predictor_instances_are_cloned_and_names_unique():
    given = HistoryPredictor()
    report = evaluate_predictors(four_jobs(), [given, "walltime"])
    assert report.names == ["history", "walltime"]
    assert not hasattr(given, "rule_counts_")
    with pytest.raises(InputError):
        evaluate_predictors(four_jobs(), ["walltime", "walltime"])


def test_write_files_and_figures(tmp_path):
    report = evaluate_predictors(four_jobs(), ["walltime", "real", "tsafrir"])
    summary = write_prediction_report(report, tmp_path / "out")
    expected = ["predictions.parquet", *FIGURE_FILES, "prediction_summary.json"]
    assert FIGURE_FILES == ("prediction_errors.png", "prediction_vs_actual.png")
    assert summary["files"] == expected
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(expected)
    for name in FIGURE_FILES:
        assert (tmp_path / "out" / name).read_bytes()[:4] == b"\x89PNG"
    on_disk = json.loads((tmp_path / "out" / "prediction_summary.json").read_text())
    assert on_disk["files"] == expected and on_disk["metrics"] == summary["metrics"]
    # legends: one line per predictor (name and MAE) and one colour per predictor
    figs = prediction_figures(report)
    assert list(figs) == list(FIGURE_FILES)
    curves = figs["prediction_errors.png"]
    texts = [t.get_text() for t in curves.axes[1].get_legend().get_texts()]
    assert texts == ["walltime (MAE 9 min)", "real (MAE 0 min)", "tsafrir (MAE 9 min)"]
    # real is exact on every job: named in the title, not used for the limits
    assert "exact for every job" in curves.get_suptitle()
    assert curves.axes[0].get_ylim()[1] < 100
    scatter = figs["prediction_vs_actual.png"]
    assert len(scatter.axes) == 3
    texts = [t.get_text() for t in scatter.axes[-1].get_legend().get_texts()]
    assert texts == ["walltime", "real", "tsafrir"]
    plot_prediction_errors(report, tmp_path / "errors.png")
    assert (tmp_path / "errors.png").stat().st_size > 1000


def test_old_methods_of_the_report_warn_and_draw_the_same(tmp_path):
    """The figures moved to report/ (experiment/ draws none): the old methods and the old
    name of FIGURE_FILES still work, with a warning."""
    report = evaluate_predictors(four_jobs(), ["walltime", "real"])
    new = write_prediction_report(report, tmp_path / "new")
    with pytest.warns(MovedWarning, match=r"PredictionReport\.write moved to dispatchlab\."
                      r"report\.duration_accuracy\.write_prediction_report"):
        old = report.write(tmp_path / "old")
    assert old == new
    assert (tmp_path / "old" / "prediction_summary.json").read_bytes() == (
        tmp_path / "new" / "prediction_summary.json").read_bytes()
    with pytest.warns(MovedWarning, match=r"PredictionReport\.figures moved"):
        assert list(report.figures()) == list(FIGURE_FILES)
    with pytest.warns(MovedWarning, match=r"PredictionReport\.plot moved"):
        report.plot(tmp_path / "errors.png")
    assert (tmp_path / "errors.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.warns(MovedWarning, match=r"duration_accuracy\.FIGURE_FILES moved"):
        assert duration_accuracy.FIGURE_FILES is FIGURE_FILES


def swf(path: Path, jobs: list[tuple[int, int, int, int, int]]) -> Path:
    """jobs: (submit, wait, run, requested time, user); one processor each."""
    lines = ["; MaxProcs: 4"]
    for k, (submit, wait, run, req, user) in enumerate(jobs, start=1):
        fields = [k, submit, wait, run, 1, -1, -1, 1, req, -1, 1, user, 1, -1, 1, -1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")
    return path


def run_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dispatchlab.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


TRACE_JOBS = [(0, 10, 100, 300, 1), (50, 0, 200, 400, 2), (120, 5, 90, 300, 1),
              (400, 0, 250, 400, 2), (500, 0, 4000, 7200, 1)]


def test_cli_writes_files(tmp_path):
    trace = swf(tmp_path / "t.swf", TRACE_JOBS)
    out = tmp_path / "out"
    res = run_cli("predict", trace, "--out", out)
    assert res.returncode == 0, res.stderr
    assert "MAE" in res.stdout and "tsafrir" in res.stdout
    table = pq.read_table(out / "predictions.parquet")
    assert table.num_rows == len(TRACE_JOBS) * 3
    assert sorted(set(table["predictor"].to_pylist())) == ["history", "tsafrir", "walltime"]
    for name in ("prediction_errors.png", "prediction_vs_actual.png"):
        png = out / name
        assert png.exists() and png.stat().st_size > 0
    summary = json.loads((out / "prediction_summary.json").read_text())
    assert summary["jobs"] == len(TRACE_JOBS) and summary["wait_missing"] is False
    walltime = summary["metrics"]["walltime"]["all"]
    errors = np.array([300 - 100, 400 - 200, 300 - 90, 400 - 250, 7200 - 4000]) / 60
    assert walltime["mae_min"] == pytest.approx(errors.mean())
    assert set(summary["metrics"]["history"]) == {"all", "short", "medium", "long"}
    assert "history" in summary["rule_counts"]


def test_cli_notes_missing_waits(tmp_path):
    trace = swf(tmp_path / "t.swf", [(s, -1, r, q, u) for s, _, r, q, u in TRACE_JOBS])
    res = run_cli("predict", trace, "--predictors", "walltime")
    assert res.returncode == 0, res.stderr
    assert "no wait times" in res.stdout


def test_cli_unknown_predictor(tmp_path):
    trace = swf(tmp_path / "t.swf", TRACE_JOBS)
    res = run_cli("predict", trace, "--predictors", "walltime,oracle9")
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "oracle9" in lines[0]


@pytest.mark.skipif(not KTH.exists(), reason="KTH-SP2 trace not available")
@pytest.mark.traces
def test_kth_history_beats_walltime():
    from dispatchlab.workload.load import load_trace

    jobs = load_trace(KTH)
    report = evaluate_predictors(jobs, ["walltime", "history"])
    assert not report.wait_missing
    assert report.metrics["history"]["all"]["jobs"] == len(jobs)
    assert (report.metrics["history"]["all"]["mae_min"]
            < report.metrics["walltime"]["all"]["mae_min"])


def test_cli_reports_jobs_without_user_ids(tmp_path: Path) -> None:
    # every job has user -1: the user-based predictors fall back per job, and the
    # report says how many jobs that was
    lines = ["; MaxProcs: 8"] + [
        f"{i + 1} {i * 10} 0 50 1 -1 -1 1 100 -1 1 -1 -1 -1 -1 -1 -1 -1" for i in range(6)]
    trace = tmp_path / "nouser.swf"
    trace.write_text("\n".join(lines) + "\n")
    proc = subprocess.run([sys.executable, "-m", "dispatchlab.cli", "predict", str(trace),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "6 jobs have no user id" in proc.stdout
    summary = json.loads((tmp_path / "out" / "prediction_summary.json").read_text())
    assert summary["jobs_without_user"] == 6
    assert summary["rule_counts"]["history"]["no_user"] == 6
