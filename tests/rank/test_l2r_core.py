"""The learning core of the L2R pipeline (seed 001): split, features, pairs, learners,
model files. Every expectation is worked out by hand in the comments."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.experiment.l2r.split import split_lists, training_size
from dispatchlab.rank import (
    FEATURE_SETS,
    L2RModel,
    LambdaMART,
    RankSVM,
    apply_minmax,
    check_feature_set,
    finish_order_scores,
    fit_minmax,
    graded_labels,
    job_features,
    load_model,
    make_learner,
    pairs,
    user_jobs_before,
)
from dispatchlab.rank import learn as learn_mod
from dispatchlab.workload.jobs import JobTable, TraceInfo

# --------------------------------------------------------------------------- split


def test_split_100_jobs_7_lists() -> None:
    # train_n = int(100 * 0.7) = 70, part = 70 // 7 = 10: lists [0,10) ... [60,70),
    # test = [part * k, n) = [70, 100).
    sp = split_lists(100, 7)
    assert sp.train_n == 70
    assert sp.part == 10
    assert sp.lists == [(0, 10), (10, 20), (20, 30), (30, 40), (40, 50), (50, 60), (60, 70)]
    assert sp.test == (70, 100)


def test_split_remainder_goes_to_test() -> None:
    # n = 10: train_n = 7, part = 7 // 3 = 2: lists [0,2), [2,4), [4,6); the 7th training
    # job (row 6) does not fill a list and joins the test part: test = [6, 10).
    sp = split_lists(10, 3)
    assert (sp.train_n, sp.part) == (7, 2)
    assert sp.lists == [(0, 2), (2, 4), (4, 6)]
    assert sp.test == (6, 10)


def test_training_size_is_the_seeds_float_product() -> None:
    # The seed computes int(len(jobs) * 0.7); 90 * 0.7 == 62.99999999999999 -> 62, where
    # 90 * 7 // 10 would give 63. 100 * 0.7 == 70.0 exactly -> 70.
    assert training_size(90) == 62
    assert training_size(100) == 70
    assert split_lists(90, 2).lists == [(0, 31), (31, 62)]


def test_split_errors() -> None:
    with pytest.raises(InputError) as err:
        split_lists(100, 0)
    assert err.value.field == "lists"
    # n = 10 -> train_n = 7 < k = 8
    with pytest.raises(InputError) as err:
        split_lists(10, 8)
    assert err.value.field == "lists"
    assert "more lists" in err.value.message
    # k == train_n is allowed: one job per list
    assert split_lists(10, 7).part == 1


# ------------------------------------------------------------------------- target


def test_finish_order_scores() -> None:
    # Order by (end, row): row 1 (10), row 3 (10), row 2 (20), row 0 (30)
    # -> row1 999999, row3 999998, row2 999997, row0 999996.
    got = finish_order_scores(np.array([30, 10, 20, 10]))
    assert got.tolist() == [999996, 999999, 999997, 999998]
    # explicit rows reverse the tie: row ids 0, 9, 0, 5 -> the job at position 3 (row 5)
    # precedes position 1 (row 9) among the two ends at 10.
    got = finish_order_scores(np.array([30, 10, 20, 10]), rows=np.array([0, 9, 0, 5]))
    assert got.tolist() == [999996, 999998, 999997, 999999]


# ----------------------------------------------------------------------- features


def _table() -> JobTable:
    """9 jobs, users 1, 2 and unknown (-1). end = submit + wait + run:

    row submit wait run user req units  end
    0     0     0   100   1   200   2   100
    1    10     5    50   2    60   1    65
    2   120     0    30   1    40   4   150
    3   150    10    20   1    25   1   180
    4   200    -1    70   2    80   8   (not ended: wait < 0)
    5   200     0     0   1     5   1   200
    6   200     0    10  -1     7   3   210
    7   200     0     3   1     9   1   203
    8  1000     0     1   2    11   1  1001
    """
    return JobTable.from_arrays(
        submit=[0, 10, 120, 150, 200, 200, 200, 200, 1000],
        wait=[0, 5, 0, 10, -1, 0, 0, 0, 0],
        run=[100, 50, 30, 20, 70, 0, 10, 3, 1],
        user=[1, 2, 1, 1, 2, 1, -1, 1, 2],
        requested_time=[200, 60, 40, 25, 80, 5, 7, 9, 11],
        units=[2, 1, 4, 1, 8, 1, 3, 1, 1],
    )


def test_seed_features_recorded_and_overridden() -> None:
    jobs = _table()
    X = job_features(jobs, "seed")
    # columns: submit, wait, run, processors (units), requested
    assert X.dtype == np.float64
    assert X.shape == (9, 5)
    assert X[0].tolist() == [0, 0, 100, 2, 200]
    assert X[4].tolist() == [200, -1, 70, 8, 80]
    # simulated values replace wait and run only
    sim_wait = np.arange(9) * 10
    sim_run = np.full(9, 7)
    X2 = job_features(jobs, "seed", wait=sim_wait, run=sim_run)
    assert X2[4].tolist() == [200, 40, 7, 8, 80]
    assert X2[:, 1].tolist() == [0, 10, 20, 30, 40, 50, 60, 70, 80]


def test_causal_features_hand_computed() -> None:
    X = job_features(_table(), "causal")
    names = FEATURE_SETS["causal"]
    col = {name: X[:, k] for k, name in enumerate(names)}
    # user_last2_run: mean run of the user's last two earlier jobs ended by the submit:
    # row0 u1 @0: none -> own requested 200
    # row1 u2 @10: none -> 60
    # row2 u1 @120: row0 (end 100) -> 100
    # row3 u1 @150: row0 (100), row2 (end 150 <= 150, inclusive) -> (100 + 30) / 2 = 65
    # row4 u2 @200: row1 (65) -> 50
    # row5 u1 @200: rows 0, 2, 3 ended; last two by end: row3 (180), row2 (150)
    #               -> (20 + 30) / 2 = 25 (its own end 200 does not count)
    # row6 user -1: no history -> requested 7
    # row7 u1 @200: row5 ended at 200 with an earlier row, and row3 (180)
    #               -> (0 + 20) / 2 = 10
    # row8 u2 @1000: row1 (65); row4 has wait -1 -> not ended -> 50
    assert col["user_last2_run"].tolist() == [200, 60, 100, 65, 50, 25, 7, 10, 50]
    # user_jobs_before (not in the set; see the features module): u1 rows 0,2,3,5,7 ->
    # 0,1,2,3,4; u2 rows 1,4,8 -> 0,1,2; -1 -> 0
    assert "user_jobs_before" not in names
    assert user_jobs_before(_table()).tolist() == [0, 0, 1, 2, 1, 3, 0, 4, 2]
    assert col["requested"].tolist() == [200, 60, 40, 25, 80, 5, 7, 9, 11]
    assert col["processors"].tolist() == [2, 1, 4, 1, 8, 1, 3, 1, 1]
    # log_area = log10(1 + req * procs): row0 log10(401), row4 log10(641)
    assert col["log_area"][0] == pytest.approx(math.log10(401))
    assert col["log_area"][4] == pytest.approx(math.log10(641))
    # no UnixStartTime: hour = submit // 3600 % 24 = 0 for all these submits
    assert col["hour_of_day"].tolist() == [0] * 9


def test_causal_ignores_overrides() -> None:
    jobs = _table()
    a = job_features(jobs, "causal")
    b = job_features(jobs, "causal", wait=np.zeros(9), run=np.zeros(9))
    assert np.array_equal(a, b)


def test_user_last2_run_end_ties_broken_by_row() -> None:
    # user 3: rows 0, 1, 2 all end at 10 (runs 10, 8, 6); row 3 submits at 20.
    # Most recent two by (end, row): rows 2 and 1 -> (6 + 8) / 2 = 7
    # (breaking ties toward small rows would give (10 + 8) / 2 = 9).
    jobs = JobTable.from_arrays(submit=[0, 2, 4, 20], wait=[0, 0, 0, 0], run=[10, 8, 6, 1],
                                user=[3, 3, 3, 3], requested_time=[50, 50, 50, 99],
                                units=[1, 1, 1, 1])
    col = job_features(jobs, "causal")[:, FEATURE_SETS["causal"].index("user_last2_run")]
    assert col.tolist() == [50, 50, 50, 7]


def test_hour_of_day_with_unix_start_time() -> None:
    # origin 05:30 UTC (19800 s). submits 0, 1800, 72000:
    # 19800 // 3600 = 5; 21600 // 3600 = 6; 91800 // 3600 = 25 -> 25 % 24 = 1
    info = TraceInfo(unix_start_time=19800)
    jobs = JobTable.from_arrays(submit=[0, 1800, 72000], run=[1, 1, 1], units=[1, 1, 1],
                                info=info)
    k = FEATURE_SETS["causal"].index("hour_of_day")
    assert job_features(jobs, "causal")[:, k].tolist() == [5, 6, 1]
    # a re-based table (time_offset 7200 s removed) keeps the original clock: 2, 3, 22
    info2 = TraceInfo(unix_start_time=None, time_offset=7200)
    jobs2 = JobTable.from_arrays(submit=[0, 3600, 72000], run=[1, 1, 1], units=[1, 1, 1],
                                 info=info2)
    assert job_features(jobs2, "causal")[:, k].tolist() == [2, 3, 22]


def test_unknown_feature_set() -> None:
    with pytest.raises(InputError) as err:
        job_features(_table(), "magic")
    assert err.value.field == "features"
    assert "causal" in err.value.message and "seed" in err.value.message


def test_minmax() -> None:
    train = np.array([[0.0, 5.0, 1.0], [10.0, 5.0, 3.0]])
    lo, hi = fit_minmax(train)
    assert lo.tolist() == [0, 5, 1]
    assert hi.tolist() == [10, 5, 3]
    assert apply_minmax(train, lo, hi).tolist() == [[0, 0, 0], [1, 0, 1]]
    # test rows outside the training range are not clipped; the constant column -> 0:
    # (20-0)/10 = 2, (7 -> 0), (2-1)/2 = 0.5 ; (-5-0)/10 = -0.5, 0, (1-1)/2 = 0
    test = np.array([[20.0, 7.0, 2.0], [-5.0, 5.0, 1.0]])
    assert apply_minmax(test, lo, hi).tolist() == [[2.0, 0.0, 0.5], [-0.5, 0.0, 0.0]]


# -------------------------------------------------------------------------- pairs


def test_pairs_within_lists_ties_and_order() -> None:
    # qid 0 = positions 0, 2, 4 with y 5, 5, 1 -> (0,4), (2,4); 0/2 tie: no pair.
    # qid 1 = positions 1, 3 with y 2, 7 -> preferred 3 over 1.
    y = np.array([5, 2, 5, 7, 1])
    qid = np.array([0, 1, 0, 1, 0])
    ps = pairs(y, qid, max_pairs_per_list=100, rng=np.random.default_rng(0))
    assert ps.i.tolist() == [0, 2, 3]
    assert ps.j.tolist() == [4, 4, 1]
    assert ps.weight.tolist() == [1.0, 1.0, 1.0]


def test_pairs_subsampling_weights_and_determinism() -> None:
    # 3 lists of 10 distinct targets: 45 pairs each; at most 10 kept -> weight 4.5
    rng0 = np.random.default_rng(5)
    y = np.concatenate([rng0.permutation(10) for _ in range(3)])
    qid = np.repeat([7, 3, 9], 10)
    a = pairs(y, qid, max_pairs_per_list=10, rng=np.random.default_rng(42))
    b = pairs(y, qid, max_pairs_per_list=10, rng=np.random.default_rng(42))
    assert len(a.i) == 30
    assert np.all(a.weight == 4.5)
    assert np.array_equal(a.i, b.i) and np.array_equal(a.j, b.j)
    assert np.all(qid[a.i] == qid[a.j])
    assert np.all(y[a.i] > y[a.j])
    # lists in ascending qid: 3 (rows 10-19), 7 (rows 0-9), 9 (rows 20-29)
    assert np.all((a.i[:10] >= 10) & (a.i[:10] < 20))
    assert np.all(a.i[10:20] < 10)
    # no repeated pair inside a list
    assert len({(int(i), int(j)) for i, j in zip(a.i, a.j, strict=True)}) == 30


def test_pairs_blockwise_enumeration_matches_brute_force(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # tiny blocks force many row blocks; the pairs must still be all untied (a, b), a < b
    monkeypatch.setattr(learn_mod, "_BLOCK_CELLS", 7)
    rng = np.random.default_rng(3)
    y = rng.integers(0, 6, size=23)
    qid = np.zeros(23, dtype=np.int64)
    ps = pairs(y, qid, max_pairs_per_list=10_000, rng=np.random.default_rng(0))
    expected = [(a, b) if y[a] > y[b] else (b, a)
                for a, b in itertools.combinations(range(23), 2) if y[a] != y[b]]
    assert list(zip(ps.i.tolist(), ps.j.tolist(), strict=True)) == expected


def test_pairs_big_list_sampled_without_enumeration() -> None:
    # 3000 distinct targets: 3000 * 2999 / 2 = 4,498,500 pairs > the enumeration limit;
    # 100 are drawn by rejection: weight 4,498,500 / 100 = 44,985.
    y = np.random.default_rng(1).permutation(3000)
    qid = np.zeros(3000, dtype=np.int64)
    ps = pairs(y, qid, max_pairs_per_list=100, rng=np.random.default_rng(0))
    assert len(ps.i) == 100
    assert np.all(ps.weight == 44985.0)
    assert np.all(y[ps.i] > y[ps.j])
    assert len({(int(i), int(j)) for i, j in zip(ps.i, ps.j, strict=True)}) == 100


def test_graded_labels() -> None:
    # one list of 4: ranks (number of smaller y) 0, 3, 1, 2; G = 4 -> r * 4 // 4
    assert graded_labels(np.array([10, 40, 20, 30]), np.zeros(4)).tolist() == [0, 3, 1, 2]
    # 62 distinct targets: G = 31 -> label = r * 31 // 62 = r // 2 : 0,0,1,1,...,30,30
    got = graded_labels(np.arange(62), np.zeros(62))
    assert got.tolist() == [r // 2 for r in range(62)]
    # ties share the lower rank: y 1, 1, 2 -> r 0, 0, 2 -> G = 3 -> 0, 0, 2
    assert graded_labels(np.array([1, 1, 2]), np.zeros(3)).tolist() == [0, 0, 2]


# ----------------------------------------------------------------------- learners


def _lists(n_lists: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lists whose target order is 'fewer processors finish first'. Columns:
    processors (distinct in a list), requested time, noise."""
    rng = np.random.default_rng(seed)
    X, y, q = [], [], []
    for k in range(n_lists):
        procs = rng.choice(np.arange(1, 65), size=m, replace=False).astype(np.float64)
        req = rng.integers(60, 7200, size=m).astype(np.float64)
        X.append(np.column_stack([procs, req, rng.random(m)]))
        y.append(finish_order_scores(procs))  # end ~ processors
        q.append(np.full(m, k))
    return np.vstack(X), np.concatenate(y), np.concatenate(q)


#: fresh list; by processors ascending the order is rows 1 (1), 3 (8), 4 (16), 0 (32), 2 (64)
_FRESH = np.array([[32, 100, 0.9], [1, 7000, 0.1], [64, 3000, 0.5], [8, 60, 0.3],
                   [16, 5000, 0.7]], dtype=np.float64)


@pytest.mark.parametrize("name", ["ranksvm", "lambdamart"])
def test_learner_recovers_smaller_processors_first(name: str) -> None:
    X, y, q = _lists(20, 10, seed=1)
    lo, hi = fit_minmax(X)
    learner = make_learner(name).fit(apply_minmax(X, lo, hi), y, q)
    s = learner.score(apply_minmax(_FRESH, lo, hi))
    assert np.argsort(-s, kind="stable").tolist() == [1, 3, 4, 0, 2]
    assert len(set(s.tolist())) == 5  # strict order, no ties
    if name == "ranksvm":
        assert isinstance(learner, RankSVM)
        coef = learner.coef_
        assert coef is not None and coef.dtype == np.float64 and coef.shape == (3,)
        assert coef[0] < 0  # more processors -> lower score
        assert abs(coef[0]) > 5 * max(abs(coef[1]), abs(coef[2]))
        assert learner.n_pairs_ == 20 * 45  # 10 distinct targets per list, no cap hit
        assert learner.C_eff_ == pytest.approx(3.0 / 20)


def test_ranksvm_deterministic() -> None:
    X, y, q = _lists(15, 12, seed=2)
    a = RankSVM(max_pairs_per_list=30, seed=7).fit(X, y, q)
    b = RankSVM(max_pairs_per_list=30, seed=7).fit(X, y, q)
    assert a.coef_ is not None and b.coef_ is not None
    assert np.array_equal(a.coef_, b.coef_)
    assert a.n_pairs_ == 15 * 30


def test_lambdamart_deterministic() -> None:
    X, y, q = _lists(15, 12, seed=2)
    a = LambdaMART(n_estimators=20, seed=3).fit(X, y, q).score(_FRESH)
    b = LambdaMART(n_estimators=20, seed=3).fit(X, y, q).score(_FRESH)
    assert np.array_equal(a, b)


def test_ranksvm_single_pair_and_no_pair() -> None:
    # one list of two jobs: the only pair prefers row 1 (y 5 > 1), x1 - x0 = (-1,) -> w < 0
    X = np.array([[1.0], [0.0]])
    m = RankSVM().fit(X, np.array([1, 5]), np.array([0, 0]))
    assert m.coef_ is not None and m.coef_[0] < 0
    with pytest.raises(InputError) as err:
        RankSVM().fit(X, np.array([3, 3]), np.array([0, 0]))
    assert err.value.field == "lists"


def test_make_learner_errors() -> None:
    with pytest.raises(InputError) as err:
        make_learner("svmlight")
    assert err.value.field == "learner"
    assert "lambdamart" in err.value.message and "ranksvm" in err.value.message
    with pytest.raises(InputError):
        make_learner("ranksvm", gamma=2)
    assert make_learner("ranksvm", C=1.5).C == 1.5


# -------------------------------------------------------------------- model files


def _fitted_model(name: str) -> tuple[L2RModel, np.ndarray]:
    X, y, q = _lists(10, 8, seed=4)
    X = np.column_stack([X, X[:, 0] * 2, np.ones(len(X))])  # 5 columns, as "causal"
    lo, hi = fit_minmax(X)
    learner = make_learner(name, **({"n_estimators": 10} if name == "lambdamart" else {}))
    learner.fit(apply_minmax(X, lo, hi), y, q)
    # numpy scalars in the summary are written as plain JSON numbers
    model = L2RModel.from_fitted("causal", lo, hi, learner,
                                 summary={"lists": np.int64(10), "fit_s": np.float64(0.5)})
    return model, X


@pytest.mark.parametrize("name", ["ranksvm", "lambdamart"])
def test_model_round_trip(name: str, tmp_path: Path) -> None:
    model, X = _fitted_model(name)
    path = tmp_path / "m.json"
    model.save(path)
    back = load_model(path)
    assert back.learner == name
    assert back.features == FEATURE_SETS["causal"]
    assert np.array_equal(back.lo, model.lo) and np.array_equal(back.hi, model.hi)
    assert np.array_equal(back.score(X), model.score(X))
    assert back.summary == {"lists": 10, "fit_s": 0.5}
    assert json.loads(path.read_text())["format"] == "dispatchlab-l2r-model"
    assert L2RModel.load(path).path == str(path)


def test_model_file_errors(tmp_path: Path) -> None:
    model, _ = _fitted_model("ranksvm")
    good = tmp_path / "good.json"
    model.save(good)
    text = good.read_text()
    data = json.loads(text)

    def bad(name: str, content: str) -> InputError:
        p = tmp_path / name
        p.write_text(content)
        with pytest.raises(InputError) as err:
            load_model(p)
        assert err.value.file == str(p)
        assert str(p) in str(err.value)
        return err.value

    assert "invalid JSON" in bad("trunc.json", text[: len(text) // 2]).message
    assert "marker" in bad("marker.json", json.dumps({**data, "format": "x"})).message
    e = bad("coef.json", json.dumps({**data, "coef": data["coef"][:-1]}))
    assert e.field == "coef" and "4 values but the model has 5 features" in e.message
    e = bad("version.json", json.dumps({**data, "version": 2}))
    assert e.field == "version"
    e = bad("keys.json", json.dumps({k: v for k, v in data.items() if k != "lo"}))
    assert "lo" in e.message
    e = bad("fs.json", json.dumps({**data, "feature_set": "seed"}))
    assert e.field == "features"  # 'seed' has 5 features, the file lists the 6 causal ones
    with pytest.raises(InputError) as err:
        load_model(tmp_path / "absent.json")
    assert "not found" in err.value.message


def test_check_feature_set(tmp_path: Path) -> None:
    model, _ = _fitted_model("ranksvm")
    model.save(tmp_path / "m.json")
    loaded = load_model(tmp_path / "m.json")
    check_feature_set(loaded, "causal")  # fine
    with pytest.raises(InputError) as err:
        check_feature_set(loaded, "seed")
    assert "trained on feature set 'causal', not 'seed'" in err.value.message
    assert err.value.file == str(tmp_path / "m.json")


def test_lambdamart_file_with_broken_booster(tmp_path: Path) -> None:
    model, _ = _fitted_model("lambdamart")
    model.save(tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text())
    p = tmp_path / "broken.json"
    p.write_text(json.dumps({**data, "booster": "not a tree model"}))
    with pytest.raises(InputError) as err:
        load_model(p)
    assert err.value.field == "booster" and err.value.file == str(p)
    p.write_text(json.dumps({**data, "booster": None}))
    with pytest.raises(InputError) as err:
        load_model(p)
    assert err.value.field == "booster"
