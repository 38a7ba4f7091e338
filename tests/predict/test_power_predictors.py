"""Job power predictors (seed 003 sections 4 and 6, seed 004 section 4.1) and their
evaluation on a replay of the recorded schedule."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import FIFO
from dispatchlab.experiment.power_accuracy import (
    evaluate_power_predictors,
    power_replay_events,
    replay_power,
)
from dispatchlab.predict.power.base import PowerPrediction, PowerPredictor
from dispatchlab.predict.power.predictors import (
    POWER_PREDICTORS,
    HistoryPowerPredictor,
    MLPowerPredictor,
    NaivePowerPredictor,
    PerUserPowerPredictor,
    RealPowerPredictor,
    _tree_predict_one,
    clip_prediction,
    make_power_predictor,
)

M100 = Platform.marconi100()  # 32 cores and 4 GPUs per node, 2,100 W max node power


def table(units, users, pmean, pmax, pstd, submit=None, run=None, wait=None,
          resources=None) -> JobTable:
    """A job table with power columns (rows in submit order)."""
    n = len(units)
    extra = {} if wait is None else {"wait": wait}
    jobs = JobTable.from_arrays(submit=list(range(n)) if submit is None else submit,
                                run=[10] * n if run is None else run, units=units,
                                user=users, resources=resources, **extra)
    jobs.columns["power_mean"] = np.asarray(pmean, dtype=np.float64)
    jobs.columns["power_max"] = np.asarray(pmax, dtype=np.float64)
    jobs.columns["power_std"] = np.asarray(pstd, dtype=np.float64)
    return jobs


def approx(p: PowerPrediction, mean: float, peak: float, std: float) -> None:
    assert p.mean == pytest.approx(mean, rel=1e-12)
    assert p.max == pytest.approx(peak, rel=1e-12)
    assert p.std == pytest.approx(std, rel=1e-12)


def crafted() -> JobTable:
    # rows 0-2: user 1's jobs A, B, C (1 node each), observed at 100, 200, 300 with
    # mean 100, 200, 400 W, max 150, 300, 500 W, std 10, 20, 40 W; row 3: user 1's job J,
    # predicted at r = 400; row 4: user 2 (no history), 64 cores = 2 nodes; row 5: no
    # user id (-1), 1 node
    return table(units=[1, 1, 1, 1, 64, 1], users=[1, 1, 1, 1, 2, -1],
                 pmean=[100, 200, 400, 0, 0, 0], pmax=[150, 300, 500, 0, 0, 0],
                 pstd=[10, 20, 40, 0, 0, 0])


def started(pred: HistoryPowerPredictor, jobs: JobTable, ends=(100, 200, 300)):
    pred.start(jobs, M100)
    for row, end in enumerate(ends):
        pred.observe(row, end)
    return pred


# --------------------------------------------------------------------------------------
# history: eqs. 1-3 by hand
# --------------------------------------------------------------------------------------


def test_history_explicit_window_weights_by_hand():
    jobs = crafted()
    # s = 400: window [0, 400] holds A, B, C; theta = (1 - (400 - C)/400)**2 =
    # 1/16, 1/4, 9/16 (sum 7/8): mean = (6.25 + 50 + 225) / 0.875 = 2250/7,
    # max = (9.375 + 75 + 281.25) / 0.875 = 2925/7, std = (0.625 + 5 + 22.5) / 0.875 = 225/7
    p = started(HistoryPowerPredictor(s=400), jobs)
    approx(p.predict(3, 400), 2250 / 7, 2925 / 7, 225 / 7)
    # s = 250: window [150, 400] holds B, C; theta = (1 - 200/250)**2 = 0.04 and
    # (1 - 100/250)**2 = 0.36 (sum 0.4): mean = (8 + 144)/0.4 = 380, max = (12 + 180)/0.4
    # = 480, std = (0.8 + 14.4)/0.4 = 38
    p = started(HistoryPowerPredictor(s=250), jobs)
    approx(p.predict(3, 400), 380, 480, 38)
    assert p.counts_["window"] == 1
    # alpha = 1, s = 400: theta = 1/4, 1/2, 3/4 (sum 3/2): mean = (25 + 100 + 300)/1.5
    p = started(HistoryPowerPredictor(alpha=1, s=400), jobs)
    approx(p.predict(3, 400), 425 / 1.5, (37.5 + 150 + 375) / 1.5, (2.5 + 10 + 30) / 1.5)
    # a non-integral alpha (direct formula): alpha = 0.5, s = 400: theta = 1/2,
    # sqrt(1/2), sqrt(3/4)
    p = started(HistoryPowerPredictor(alpha=0.5, s=400), jobs)
    th = np.array([0.5, math.sqrt(0.5), math.sqrt(0.75)])
    approx(p.predict(3, 400), th @ [100, 200, 400] / th.sum(),
           th @ [150, 300, 500] / th.sum(), th @ [10, 20, 40] / th.sum())
    assert p.direct_ == 1


def test_history_default_window_is_the_whole_user_history():
    jobs = crafted()
    # s = r - C_first = 400 - 100 = 300: theta = (1 - 300/300)**2 = 0, (1 - 200/300)**2 =
    # 1/9, (1 - 100/300)**2 = 4/9 (sum 5/9): mean = (200 + 1600)/5 = 360, max =
    # (300 + 2000)/5 = 460, std = (20 + 160)/5 = 36
    p = started(HistoryPowerPredictor(), jobs)
    approx(p.predict(3, 400), 360, 460, 36)
    # the same at r = 700: s = 600, theta = 0, (1 - 500/600)**2 = 1/36,
    # (1 - 400/600)**2 = 4/36: mean = (200 + 1600)/5 = 360 again (weights scale alike)
    approx(p.predict(3, 700), 360, 460, 36)
    # non-integral alpha on the default window (direct): alpha = 0.5 at r = 400:
    # theta = 0, sqrt(1/3), sqrt(2/3)
    p = started(HistoryPowerPredictor(alpha=0.5), jobs)
    th = np.array([0.0, math.sqrt(1 / 3), math.sqrt(2 / 3)])
    approx(p.predict(3, 400), th @ [100, 200, 400] / th.sum(),
           th @ [150, 300, 500] / th.sum(), th @ [10, 20, 40] / th.sum())


def test_history_zero_weights_give_the_plain_mean():
    jobs = crafted()
    # only A finished (C = 100); s = 300 at r = 400: window [100, 400] = {A} with
    # theta = (1 - 300/300)**2 = 0: the plain mean of the window, A's own power
    p = started(HistoryPowerPredictor(s=300), jobs, ends=(100,))
    approx(p.predict(3, 400), 100, 150, 10)
    assert p.counts_ == {"window": 0, "zero-weight": 1, "no-history": 0, "cold": 0}
    # the default s: s = 400 - 100, A again has weight 0
    p = started(HistoryPowerPredictor(), jobs, ends=(100,))
    approx(p.predict(3, 400), 100, 150, 10)
    assert p.counts_["zero-weight"] == 1
    # A and B both ended at 100: weights 0, plain mean (150, 225, 15)
    p = started(HistoryPowerPredictor(), jobs, ends=(100, 100))
    approx(p.predict(3, 400), 150, 225, 15)
    # default s with every job ending at r itself (s = 0): plain mean too
    approx(p.predict(3, 100), 150, 225, 15)
    # a job ending exactly at r is in the window (eq. 2 is closed): s = 100 at r = 300
    # holds B (theta 0) and C (theta 1): C's power
    p = started(HistoryPowerPredictor(s=100), jobs)
    approx(p.predict(3, 300), 400, 500, 40)


def test_history_without_user_history_and_before_any_completion():
    jobs = crafted()
    # nothing finished yet: naive, 2,100 W x nodes (user 2's job has 64 cores = 2 nodes)
    p = started(HistoryPowerPredictor(), jobs, ends=())
    approx(p.predict(4, 400), 4200, 4200, 0)
    approx(p.predict(3, 400), 2100, 2100, 0)
    assert p.counts_["cold"] == 2
    # after A, B, C (1 node each): the mean per-node power over all finished jobs
    # ((100 + 200 + 400)/3 W) x 2 nodes; max (150 + 300 + 500)/3 x 2; std 70/3 x 2
    p = started(HistoryPowerPredictor(), jobs)
    approx(p.predict(4, 400), 1400 / 3, 1900 / 3, 140 / 3)
    # no user id: the same fall-back (1 node)
    approx(p.predict(5, 400), 700 / 3, 950 / 3, 70 / 3)
    # an explicit window without a finished job of the user: s = 50 at r = 400
    p = started(HistoryPowerPredictor(s=50), jobs)
    approx(p.predict(3, 400), 700 / 3, 950 / 3, 70 / 3)
    assert p.counts_ == {"window": 0, "zero-weight": 0, "no-history": 1, "cold": 0}
    # a job of unknown power never joins a history
    jobs.columns["power_std"][0] = np.nan
    p = started(HistoryPowerPredictor(s=400), jobs)
    # B, C only: theta 1/4, 9/16 (sum 13/16): mean = (50 + 225)/(13/16)
    approx(p.predict(3, 400), 275 * 16 / 13, (75 + 281.25) * 16 / 13, (5 + 22.5) * 16 / 13)


def test_history_lagged_features_by_hand():
    jobs = crafted()
    p = started(HistoryPowerPredictor(), jobs)
    pred, std, last = p.lagged(3, 400)
    approx(pred, 360, 460, 36)
    # population std of A, B, C: mean 700/3, deviations -400/3, -100/3, 500/3:
    # sqrt((160000 + 10000 + 250000)/9/3) = sqrt(420000/27)
    assert std[0] == pytest.approx(math.sqrt(420000 / 27), rel=1e-12)
    assert last == (400.0, 500.0, 40.0)  # C, the last finished
    # explicit s = 250: window B, C: std of (200, 400) = 100
    p = started(HistoryPowerPredictor(s=250), jobs)
    _, std, last = p.lagged(3, 400)
    assert std == pytest.approx((100.0, 100.0, 10.0))
    assert last == (400.0, 500.0, 40.0)
    # no history: std 0, last = the prediction
    pred, std, last = p.lagged(4, 400)
    assert std == (0.0, 0.0, 0.0)
    assert last == tuple(pred)


def reference(c: np.ndarray, p: np.ndarray, r: int, s: float, alpha: float) -> np.ndarray:
    """Eqs. 1-3 written directly (window [r - s, r])."""
    w = (c >= r - s) & (c <= r)
    theta = (1.0 - (r - c[w]) / s) ** alpha
    if theta.sum() == 0:
        return p[w].mean(axis=0)
    return theta @ p[w] / theta.sum()


@pytest.mark.parametrize(("alpha", "s"), [(2, 3600), (2, 86_400), (2, 700_000), (1, 5000),
                                          (3, 86_400), (0, 10_000), (2, None)])
def test_history_prefix_sums_equal_the_direct_formula(alpha, s):
    # one user, 3,000 jobs ending at random times over ~10^8 s after t = 10^9
    rng = np.random.default_rng(7)
    n = 3000
    ends = np.sort(10**9 + rng.integers(0, 10**8, n))
    ends[100:110] = ends[100]  # ties
    pw = rng.uniform(100, 5000, (n, 3))
    pw[:, 1] += pw[:, 0]  # max >= mean for each job, so the clipping never acts
    jobs = table(units=[1] * (n + 1), users=[5] * (n + 1), pmean=[*pw[:, 0], 0],
                 pmax=[*pw[:, 1], 0], pstd=[*pw[:, 2], 0])
    pred = HistoryPowerPredictor(alpha=alpha, s=s)
    pred.start(jobs, M100)
    k = 0
    for r in np.sort(rng.integers(int(ends[0]), int(ends[-1]) + 10**5, 400)).tolist():
        while k < n and ends[k] <= r:
            pred.observe(k, int(ends[k]))
            k += 1
        got = pred.predict(n, r)
        if s is not None and not ((ends[:k] >= r - s) & (ends[:k] <= r)).any():
            continue  # no window: fall-back (tested elsewhere)
        window = r - ends[0] if s is None else s
        want = (reference(ends[:k], pw[:k], r, window, alpha) if window > 0
                else pw[:k].mean(axis=0))
        np.testing.assert_allclose(tuple(got), want, rtol=1e-9)
    # the prefix path did the work (the direct one only for ill-conditioned windows)
    assert pred.direct_ <= 0.05 * pred.counts_["window"]


def test_history_checks():
    jobs = crafted()
    for params in ({"alpha": -1}, {"alpha": "2"}, {"s": 0}, {"s": 1.5}, {"s": True}):
        with pytest.raises(InputError) as err:
            HistoryPowerPredictor(**params).start(jobs, M100)
        assert err.value.field == "power-predictor"
    HistoryPowerPredictor(s=3600.0).start(jobs, M100)  # a whole float is accepted
    p = started(HistoryPowerPredictor(), jobs)
    with pytest.raises(ValueError, match="completion order"):
        p.observe(3, 50)


# --------------------------------------------------------------------------------------
# naive and real
# --------------------------------------------------------------------------------------


def test_naive_is_max_node_power_times_nodes_on_marconi100():
    # cores 1, 32, 33, 64, 100 -> nodes 1, 1, 2, 2, 4; row 5: 2 units of 4 GPUs -> 8 GPUs
    # on 4-GPU nodes -> 2 nodes
    jobs = table(units=[1, 32, 33, 64, 100, 2], users=[1] * 6, pmean=[0] * 6,
                 pmax=[0] * 6, pstd=[0] * 6,
                 resources={"core": [1] * 6, "gpu": [0, 0, 0, 0, 0, 4]})
    p = NaivePowerPredictor()
    p.start(jobs, M100)
    got = [tuple(p.predict(i, i)) for i in range(6)]
    assert got == [(w, w, 0.0) for w in (2100.0, 2100.0, 4200.0, 4200.0, 8400.0, 4200.0)]
    with pytest.raises(InputError, match="maximum node power"):
        NaivePowerPredictor().start(jobs, Platform.pooled(64))


def test_real_is_the_oracle():
    jobs = table(units=[1, 64], users=[1, 2], pmean=[700.0, np.nan], pmax=[900.0, 1.0],
                 pstd=[50.0, 1.0])
    p = RealPowerPredictor()
    p.start(jobs, M100)
    assert tuple(p.predict(0, 0)) == (700.0, 900.0, 50.0)
    assert tuple(p.predict(1, 1)) == (4200.0, 4200.0, 0.0)  # unknown: naive, 2 nodes
    assert p.unknown_ == 1
    with pytest.raises(InputError, match="maximum node power"):
        RealPowerPredictor().start(jobs, Platform.pooled(64))
    jobs.columns["power_mean"][1] = 5.0
    RealPowerPredictor().start(jobs, Platform.pooled(64))  # all known: no need


def test_clip_prediction():
    assert clip_prediction(-5, -10, -1) == (0.0, 0.0, 0.0)
    assert clip_prediction(100, 50, 3) == (100.0, 100.0, 3.0)
    assert clip_prediction(float("nan"), 50, float("inf")) == (0.0, 50.0, 0.0)


# --------------------------------------------------------------------------------------
# registry and input errors
# --------------------------------------------------------------------------------------


def test_registry_and_unknown_names():
    assert list(POWER_PREDICTORS) == ["naive", "real", "history", "per-user", "ml",
                                      "underpredicted"]
    p = make_power_predictor("HISTORY", s=3600)
    assert isinstance(p, HistoryPowerPredictor) and p.s == 3600
    with pytest.raises(InputError, match="did you mean 'history'") as err:
        make_power_predictor("histroy")
    assert err.value.field == "power-predictor"
    with pytest.raises(InputError, match="has no parameter 'alpha'"):
        make_power_predictor("naive", alpha=2)
    with pytest.raises(InputError, match="did you mean 'forest'"):
        make_power_predictor("per-user", model="forrest").start(crafted(), M100)
    with pytest.raises(InputError, match="did you mean 'svr'"):
        make_power_predictor("ml", model="svm").start(crafted(), M100)
    with pytest.raises(InputError, match="min_jobs"):
        make_power_predictor("ml", min_jobs=0).start(crafted(), M100)


@pytest.mark.parametrize("name", ["real", "history", "per-user", "ml"])
def test_missing_power_columns_are_input_errors(name):
    jobs = JobTable.from_arrays(submit=[0, 1], run=[5, 5], units=[1, 1], user=[1, 1])
    with pytest.raises(InputError, match="power columns") as err:
        make_power_predictor(name).start(jobs, M100)
    assert err.value.field == "power-predictor"
    with pytest.raises(InputError, match="power columns"):
        evaluate_power_predictors(jobs, M100, {"naive": NaivePowerPredictor()})


# --------------------------------------------------------------------------------------
# the retrained regressors
# --------------------------------------------------------------------------------------


def workload(n: int = 400, seed: int = 3) -> JobTable:
    """n jobs of 6 users over ~4 days; each user's power per node depends on the
    requested time; recorded waits of 0-30 min, runs of 10 min - 5 h."""
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.integers(0, 4 * 86400, n))
    user = rng.integers(1, 7, n)
    units = rng.choice([1, 16, 32, 64, 128], n)
    req = rng.choice([3600, 7200, 14400, 28800], n)
    run = rng.integers(600, 18000, n)
    wait = rng.integers(0, 1800, n)
    nodes = -(-units // 32)
    per_node = 300 + 60 * user + req / 100 + rng.normal(0, 20, n)
    jobs = JobTable.from_arrays(submit=submit, run=run, units=units, user=user, wait=wait,
                                requested_time=req)
    jobs.columns["power_mean"] = per_node * nodes
    jobs.columns["power_max"] = per_node * nodes * 1.3
    jobs.columns["power_std"] = per_node * nodes * 0.05
    return jobs


def predictions(pred: PowerPredictor, jobs: JobTable) -> np.ndarray:
    return replay_power(pred, jobs, M100)


REGRESSORS = [
    ("history", {}),
    ("history", {"s": 20_000}),
    ("per-user", {"retrain": 36_000, "min_jobs": 10}),
    ("per-user", {"model": "forest", "retrain": 36_000, "min_jobs": 10,
                  "n_estimators": 5}),
    ("ml", {"retrain": 36_000}),
    ("ml", {"model": "forest", "retrain": 36_000, "n_estimators": 5}),
    ("ml", {"model": "sgd", "retrain": 36_000, "s": 50_000}),
]


@pytest.mark.parametrize(("name", "params"), REGRESSORS)
def test_causality_by_truncation(name, params):
    # the first k jobs get the same predictions whether the table stops after job k or
    # not (the cut table has no later job to peek at)
    jobs = workload()
    k = 250
    full = predictions(make_power_predictor(name, **params), jobs)
    cut = predictions(make_power_predictor(name, **params), jobs.take(np.arange(k)))
    np.testing.assert_array_equal(cut, full[:k])
    assert np.isfinite(full).all()
    assert (full[:, 0] >= 0).all() and (full[:, 1] >= full[:, 0]).all()


@pytest.mark.parametrize(("name", "params"), REGRESSORS[2:])
def test_regressors_train_are_seeded_and_fall_back_to_history_before(name, params):
    jobs = workload()
    pred = make_power_predictor(name, **params, seed=4)
    out = predictions(pred, jobs)
    again = predictions(make_power_predictor(name, **params, seed=4), jobs)
    np.testing.assert_array_equal(out, again)
    assert pred.trainings_ >= 5  # every 10 h over ~4 days
    # jobs submitted before the first training (t0 + 36,000 s) got history's prediction
    history = predictions(HistoryPowerPredictor(s=params.get("s")), jobs)
    submit = jobs["submit"]
    early = submit < submit.min() + 36_000
    assert early.sum() > 10 and pred.fallbacks_ == early.sum()
    np.testing.assert_array_equal(out[early], history[early])
    assert not np.array_equal(out[~early], history[~early])


def test_per_user_models_and_the_shared_one():
    jobs = workload()
    pred = PerUserPowerPredictor(retrain=36_000, min_jobs=30)
    predictions(pred, jobs)
    counts = np.bincount(jobs["user"])
    # by the last training every user with >= 30 training rows has a model
    assert pred.models_ and set(pred.models_) <= {u for u in range(7) if counts[u] >= 30}
    assert pred.shared_ is not None
    assert pred.feature_names_ == ("queue", "requested_time", "nodes", "processors",
                                   "req_mem", "hour")
    # one row through the trees equals scikit-learn's predict
    model = next(iter(pred.models_.values()))
    x = pred.x_[7]
    np.testing.assert_array_equal(_tree_predict_one(model, x), model.predict(x[None])[0])


def test_forest_fast_path_equals_sklearn():
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 4))
    y = x @ [1.0, 2.0, 0.0, -1.0] + rng.normal(size=200)
    forest = RandomForestRegressor(n_estimators=7, random_state=0).fit(x, y)
    for row in x[:5]:
        assert _tree_predict_one(forest, row)[0] == forest.predict(row[None])[0]
    multi = RandomForestRegressor(n_estimators=3, random_state=0).fit(x, np.c_[y, 2 * y])
    np.testing.assert_array_equal(_tree_predict_one(multi, x[0]), multi.predict(x[:1])[0])


def test_ml_linear_is_scikit_learns_fit_on_the_table2_features():
    from sklearn.linear_model import LinearRegression

    jobs = workload()
    pred = MLPowerPredictor(retrain=36_000)
    out = predictions(pred, jobs)
    # refit by hand on the last training set: jobs predicted and ended before t(w)
    t = pred.t0_ + pred.trained_w_ * pred.retrain_
    rows = pred._rows_before(t)
    x = np.hstack([pred.static_[rows], pred.lag_[rows, 0:3]])
    lr = LinearRegression().fit(x, pred.y_[rows, 0])
    last = int(np.flatnonzero(jobs["submit"] >= t)[0])
    xj = np.hstack([pred.static_[last], pred.lag_[last, 0:3]])
    assert out[last, 0] == pytest.approx(max(lr.predict(xj[None])[0], 0.0), rel=1e-9)


@pytest.mark.parametrize("model", ["linear", "svr", "sgd", "forest"])
def test_ml_models_and_tuning_run(model):
    # one training, after 3 days, with recursive feature elimination and the grid search
    jobs = workload(n=160)
    pred = MLPowerPredictor(model=model, retrain=3 * 86_400, tune=True, n_estimators=3)
    out = predictions(pred, jobs)
    assert pred.trainings_ == 1 and np.isfinite(out).all()
    assert all(mask.dtype == bool and mask.any() for mask in pred.masks_)


# --------------------------------------------------------------------------------------
# evaluation
# --------------------------------------------------------------------------------------


class Recorder(PowerPredictor):
    """Records the calls; predicts 1 W."""

    name = "recorder"

    def __init__(self) -> None:
        pass

    def start(self, jobs, platform):
        self.calls_: list[tuple[str, int, int]] = []

    def predict(self, job, now):
        self.calls_.append(("predict", job, now))
        return PowerPrediction(1.0, 1.0, 0.0)

    def observe(self, job, end):
        self.calls_.append(("observe", job, end))


def test_replay_order_is_causal():
    # J0: submit 0, wait 5, run 5 -> ends 10; J1: submit 10 (J0 observed first);
    # J2: submit 10, wait 0, run 0 -> ends 10, observed after its own prediction;
    # J3: submit 12, wait missing -> never observed
    jobs = table(units=[1] * 4, users=[1] * 4, pmean=[1] * 4, pmax=[1] * 4, pstd=[0] * 4,
                 submit=[0, 10, 10, 12], run=[5, 3, 0, 4], wait=[5, 0, 0, -1])
    rec = Recorder()
    replay_power(rec, jobs, M100)
    assert rec.calls_ == [("predict", 0, 0), ("observe", 0, 10), ("predict", 1, 10),
                          ("predict", 2, 10), ("observe", 2, 10), ("predict", 3, 12),
                          ("observe", 1, 13)]
    assert power_replay_events(jobs)[3] == 1


def test_evaluate_real_naive_and_history():
    # 3 one-node jobs of users 1, 1, 2 (2,100 W naive each); the third's power is unknown
    # (not scored). naive errors: mean |2100 - 1000| = 1100, |2100 - 1500| = 600 -> MAE
    # 850, median 850; max: actual 1200, 2000 -> errors 900, 100 -> MAE 500; std: actual
    # 50, 70, predicted 0 -> MAE 60. Only user 1 has jobs of known power.
    jobs = table(units=[1, 1, 1], users=[1, 1, 2], pmean=[1000, 1500, np.nan],
                 pmax=[1200, 2000, np.nan], pstd=[50, 70, np.nan], submit=[0, 100, 200],
                 run=[50, 50, 50], wait=[0, 0, 0])
    rep = evaluate_power_predictors(jobs, M100, {"real": RealPowerPredictor(),
                                                 "naive": "naive",
                                                 "history": HistoryPowerPredictor()})
    assert rep.names == ["real", "naive", "history"]
    for m in ("mean", "max", "std"):
        assert rep.metrics["real"][m] == {"mae": 0.0, "median_ae": 0.0, "jobs": 2,
                                          "user_mae_median": 0.0}
    naive = rep.metrics["naive"]
    assert (naive["mean"]["mae"], naive["mean"]["median_ae"]) == (850.0, 850.0)
    assert (naive["max"]["mae"], naive["std"]["mae"]) == (500.0, 60.0)
    assert rep.users.tolist() == [1]
    assert rep.user_mae["naive"]["mean"].tolist() == [850.0]
    assert rep.summary()["jobs_with_power"] == {"mean": 2, "max": 2, "std": 2}
    h = rep.predicted["history"]
    assert h["mean"].tolist() == [2100.0, 1000.0, 1250.0]
    assert h["max"].tolist() == [2100.0, 1200.0, 1600.0]
    assert h["std"].tolist() == [0.0, 50.0, 60.0]
    assert rep.summary()["counts"]["history"] == {"window": 0, "zero-weight": 1,
                                                  "no-history": 1, "cold": 1}
    tab = rep.table()
    assert list(tab)[:6] == ["job_id", "user", "submit", "actual_mean", "actual_max",
                             "actual_std"]
    assert tab["naive_max"].tolist() == [2100.0] * 3
    assert rep.to_arrow().num_rows == 3
    with pytest.raises(InputError, match="reserved"):
        evaluate_power_predictors(jobs, M100, {"actual": RealPowerPredictor()})


def test_history_in_the_engine():
    jobs = workload(n=60)
    r = Simulation(M100, jobs, FIFO(), power_predictor=HistoryPowerPredictor()).run()
    mean, peak = r.power_prediction["mean"], r.power_prediction["max"]
    assert np.isfinite(mean).all() and (peak >= mean).all()
    assert mean[0] == 2100.0 * math.ceil(jobs["units"][0] / 32)  # cold start: naive
