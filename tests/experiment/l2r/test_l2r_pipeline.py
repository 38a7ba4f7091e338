"""The seed-001 pipeline: label campaign, hand-computed labels, training, evaluation,
the seed set-up's cleaning and the CLI's errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY
from dispatchlab.dispatch.l2r import L2ROrder
from dispatchlab.experiment.l2r.pipeline import (
    POLICIES,
    Prepared,
    avg_bsld,
    evaluate,
    prepare,
    run_labels,
    seed_clean,
    train,
)
from dispatchlab.experiment.l2r.split import split_lists
from dispatchlab.predict import make_predictor
from dispatchlab.rank.features import FEATURE_SETS, fit_minmax, job_features
from dispatchlab.rank.learn import finish_order_scores
from dispatchlab.rank.model import load_model
from dispatchlab.workload.jobs import TraceInfo
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.swf import write_swf

# One contended list pattern on a 2-core machine (requested = run):
#   j0 @0 (2 cores, 100 s), j1 @1 (2 cores, 1000 s), j2 @2 (1 core, 10 s), j3 @3 (1, 10 s)
# FCFS: j1 starts at 100, j2 and j3 at 1100 -> bsld 1, 1099/1000, 1108/10, 1107/10:
#   AVGbsld = (1 + 1.099 + 110.8 + 110.7) / 4 = 55.89975
# SLD at 100: sld(j1) = (99 + 1000) // 1000 = 1, sld(j2) = (98 + 10) // 10 = 10,
#   sld(j3) = (97 + 10) // 10 = 10 -> j2, j3 (stable), j1: j2 and j3 start at 100, j1 at
#   110 -> bsld 1, 1.109, 10.8, 10.7: AVGbsld = 5.90225 (SLD is the best policy)
#   finish order j0 (100), j2 (110), j3 (110, after j2 by row), j1 (1110)
#   -> scores 999999, 999996, 999998, 999997 for rows j0, j1, j2, j3.
CONTENDED = [(0, 100, 2), (1, 1000, 2), (2, 10, 1), (3, 10, 1)]
# An uncontended list: four 1-core 10-s jobs 100 s apart: both policies give AVGbsld 1,
# a tie -> the first policy given (fcfs).
EASYGOING = [(0, 10, 1), (100, 10, 1), (200, 10, 1), (300, 10, 1)]


def _trace(tmp_path: Path) -> Path:
    """20 jobs: lists (K = 3, train_n = 14, part = 4) = contended @0, contended @10^4,
    easygoing @2*10^4; row 12 joins the test part with rows 13-19 (contended ones)."""
    rows: list[tuple[int, int, int]] = []
    for base, pattern in ((0, CONTENDED), (10_000, CONTENDED), (20_000, EASYGOING),
                          (30_000, CONTENDED), (40_000, CONTENDED)):
        rows += [(base + s, r, u) for s, r, u in pattern]
    submit, run, units = (np.array(c) for c in zip(*rows, strict=True))
    jobs = JobTable.from_arrays(submit=submit, run=run, units=units, requested_time=run,
                                user=np.arange(20) % 3,
                                info=TraceInfo(max_procs=2, header={"MaxProcs": "2"},
                                               header_lines=("; MaxProcs: 2",)))
    path = tmp_path / "tiny.swf"
    write_swf(jobs, path)
    return path


def test_avg_bsld_of_the_hand_schedules():
    submit = [0, 1, 2, 3]
    assert avg_bsld(submit, [0, 100, 1100, 1100], [100, 1100, 1110, 1110]) == \
        pytest.approx(55.89975)
    assert avg_bsld(submit, [0, 110, 100, 100], [100, 1110, 110, 110]) == \
        pytest.approx(5.90225)


def test_label_campaign_matches_direct_simulations_and_hand_labels(tmp_path):
    path = _trace(tmp_path)
    jobs = load_trace(path)
    assert len(jobs) == 20
    split = split_lists(20, 3)
    assert split.lists == [(0, 4), (4, 8), (8, 12)] and split.test == (12, 20)
    prep = Prepared(jobs, path, 2)
    labels = run_labels(prep, split, ["fcfs", "slowdown"], tmp_path / "work", workers=1)
    # every (list, policy) equals the list simulated alone in this process
    for k, (a, b) in enumerate(split.lists):
        sub = jobs.take(np.arange(a, b))
        for p in ("fcfs", "slowdown"):
            res = Simulation(Platform.pooled(2), sub,
                             EASY(scope="queue", priority=POLICIES[p]),
                             make_predictor("walltime")).run()
            start, end = labels[(k, p)]
            assert start.tolist() == res.start.tolist() and end.tolist() == res.end.tolist()
    # the hand schedules of list 0
    assert labels[(0, "fcfs")][0].tolist() == [0, 100, 1100, 1100]
    assert labels[(0, "slowdown")][0].tolist() == [0, 110, 100, 100]
    assert finish_order_scores(labels[(0, "slowdown")][1]).tolist() == \
        [999999, 999996, 999998, 999997]


def test_train_picks_the_best_policy_per_list_and_is_deterministic(tmp_path):
    path = _trace(tmp_path)
    work = tmp_path / "work"
    first = train(path, lists=3, work=work, workers=1)
    # lists 0 and 1 contended: SLD best; list 2: a tie -> fcfs (the first policy)
    assert first.best == {"fcfs": 1, "slowdown": 2}
    assert first.model.feature_set == "causal"
    again = train(path, lists=3, work=work, workers=1)  # labels re-used from the store
    assert again.model.coef.tolist() == first.model.coef.tolist()
    model_path = tmp_path / "m.json"
    first.model.save(model_path)
    ev = evaluate(path, model_path, work=work)
    assert ev.test_rows == (12, 20)
    assert [r.label for r in ev.rows] == ["policy:fcfs", "policy:slowdown", "l2r", "random"]
    # the test part holds two contended patterns (rows 12-19 minus the easygoing tail):
    # SLD does better than FCFS there, as on the lists
    assert ev.value("policy:slowdown") < ev.value("policy:fcfs")
    assert all(np.isfinite(r.avg_bsld) for r in ev.rows)
    with pytest.raises(InputError, match="feature set 'causal', not 'seed'"):
        evaluate(path, model_path, work=work, features="seed")


def test_seed_clean_rules():
    # rows: ok; run > requested (cut to 40); run 0 (dropped); too wide (dropped);
    # missing request (dropped); negative submit (dropped)
    jobs = JobTable.from_arrays(submit=[0, 1, 2, 3, 4, -5], run=[50, 100, 0, 10, 30, 5],
                                units=[2, 2, 3, 20, 1, 1],
                                requested_time=[60, 40, 10, 10, -1, 9],
                                alloc_procs=[2, 2, 5, 20, 1, 1])
    out = seed_clean(jobs, 8)
    assert out["run"].tolist() == [50, 40]
    assert out["requested_time"].tolist() == [60, 40]
    assert out["units"].tolist() == [2, 2]
    assert out.info.dropped == {"seed filter: processors > machine": 1,
                                "seed filter: run <= 0": 1,
                                "seed filter: requested time <= 0": 1,
                                "seed filter: submit < 0": 1}
    assert jobs["run"].tolist() == [5, 50, 100, 0, 10, 30]  # unchanged (sorted by submit)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dispatchlab.cli", "l2r", *args],
                          capture_output=True, text=True)


@pytest.mark.parametrize("args, message", [
    (["train", "{trace}", "-K", "15", "-o", "{tmp}/m.json"], "more lists"),
    (["train", "{trace}", "-K", "3", "-o", "{tmp}/m.json", "--policies", "fcfs,sjb"],
     "unknown policy 'sjb'"),
    (["train", "{trace}", "-K", "3", "-o", "{tmp}/m.json", "--features", "leaky"],
     "unknown feature set"),
    (["train", "{trace}", "-K", "3", "-o", "{tmp}/m.json", "--learner", "svm"],
     "unknown learner"),
    (["evaluate", "{trace}", "-m", "{tmp}/broken.json"], "not a dispatchlab L2R model"),
])
def test_cli_bad_input_is_one_error_line(tmp_path, args, message):
    trace = _trace(tmp_path)
    (tmp_path / "broken.json").write_text('{"format": "dispatchlab-l2r-model", ')
    done = _cli(*(a.format(trace=trace, tmp=tmp_path) for a in args))
    assert done.returncode == 2, done.stderr
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], lines


def test_cli_train_and_evaluate(tmp_path):
    trace = _trace(tmp_path)
    model = tmp_path / "m.json"
    done = _cli("train", str(trace), "-K", "3", "-o", str(model), "--workers", "1",
                "--setup", "seed")
    assert done.returncode == 0, done.stderr
    assert load_model(model).feature_set == "seed"
    out = tmp_path / "ev.json"
    done = _cli("evaluate", str(trace), "-m", str(model), "--json", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["setup"] == "seed" and data["best_policy"] == "policy:slowdown"
    # the learned score in an ordinary simulation: the same AVGbsld as the evaluation's
    sim_out = tmp_path / "sim"
    done = subprocess.run([sys.executable, "-m", "dispatchlab.cli", "simulate", str(trace),
                           "--jobs", "12:", "--priority", f"l2r:model={model}", "-D",
                           "scope=queue", "--tau", "10", "--out", str(sim_out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    l2r = next(r for r in data["rows"] if r["label"] == "l2r")["avg_bsld"]
    summary = json.loads((sim_out / "summary.json").read_text())
    assert summary["mean_bsld"] == pytest.approx(l2r)


def test_seed_setup_with_causal_features_is_honoured_and_recorded(tmp_path):
    """``setup="seed", features="causal"``: the authors' cleaning and machine size with
    the leak-free columns only; the file records the set; a mismatch is refused."""
    path = _trace(tmp_path)
    work = tmp_path / "work"
    result = train(path, lists=3, setup="seed", features="causal", work=work, workers=1)
    model = result.model
    assert model.summary["setup"] == "seed"
    assert model.feature_set == "causal" and model.features == FEATURE_SETS["causal"]
    assert not {"wait", "run", "submit"} & set(model.features)
    # the scaler was fitted on the causal columns of the seed-cleaned lists
    prep = prepare(path, "seed", work)
    X = np.vstack([job_features(prep.jobs.take(np.arange(a, b)), "causal")
                   for a, b in split_lists(len(prep.jobs), 3).lists])
    lo, hi = fit_minmax(X)
    assert model.lo.tolist() == lo.tolist() and model.hi.tolist() == hi.tolist()
    model_path = tmp_path / "m.json"
    model.save(model_path)
    data = json.loads(model_path.read_text())
    assert data["feature_set"] == "causal" and data["features"] == list(FEATURE_SETS["causal"])
    ev = evaluate(path, model_path, work=work)
    assert ev.setup == "seed"
    # the l2r ordering scores with the recorded set, and refuses another one
    test = prep.jobs.take(np.arange(*ev.test_rows))
    platform = Platform.pooled(prep.cores)
    ok = EASY(scope="queue", priority=L2ROrder(model=str(model_path), features="causal"))
    res = Simulation(platform, test, ok, make_predictor("walltime")).run()
    assert avg_bsld(test["submit"], res.start, res.end) == pytest.approx(ev.value("l2r"))
    bad = EASY(scope="queue", priority=L2ROrder(model=str(model_path), features="seed"))
    with pytest.raises(InputError, match="trained on feature set 'causal', not 'seed'"):
        Simulation(platform, test, bad, make_predictor("walltime")).run()
    done = subprocess.run([sys.executable, "-m", "dispatchlab.cli", "simulate", str(path),
                           "--priority", f"l2r:model={model_path}:features=seed",
                           "--out", str(tmp_path / "sim")], capture_output=True, text=True)
    lines = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error:") and "not 'seed'" in lines[0], lines
