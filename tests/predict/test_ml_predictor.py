"""The online ML predictor (``ml``) and the underestimation safety wrapper (``inflated``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import TRACES_DIR
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.duration_accuracy import (
    _event_order,
    _replay,
    evaluate_predictors,
    prediction_metrics,
    replay_schedule,
)
from dispatchlab.predict import (
    HistoryPredictor,
    Inflated,
    MLPredictor,
    Predictor,
    make_predictor,
)
from dispatchlab.testing import check_predictor
from dispatchlab.workload.jobs import JobTable
from dispatchlab.workload.synthetic import generate_synthetic

KTH = TRACES_DIR / "KTH-SP2-1996-2.1-cln.swf.gz"


def replay(pred: Predictor, jobs: JobTable) -> np.ndarray:
    """The evaluation replay on ``pred`` itself (not a clone), so its counters can be read."""
    start, end, _, _ = replay_schedule(jobs)
    events = _event_order(jobs["submit"].astype(np.int64), start, end)
    return _replay(pred, jobs, events, start)


@pytest.fixture(scope="module")
def synthetic() -> JobTable:
    return generate_synthetic(3000, cores=64, seed=1)


@pytest.fixture(scope="module")
def ml_run(synthetic: JobTable) -> tuple[MLPredictor, np.ndarray]:
    pred = MLPredictor()
    return pred, replay(pred, synthetic)


class FixedPredictor(Predictor):
    """Test helper: job ``i`` gets ``values[i]``."""

    name = "fixed"

    def __init__(self, values: tuple[int, ...] = ()) -> None:
        self.values = values

    def predict(self, job: int, now: int) -> int:
        return self.values[job]


class FailingModel:
    """Not a scikit-learn estimator: cloned by deep copy; its fit raises."""

    def fit(self, x, y):
        raise ValueError("singular matrix")

    def predict(self, x):  # pragma: no cover - never reached
        return np.zeros(len(x))


def test_contract_checks() -> None:
    check_predictor(MLPredictor)
    check_predictor(MLPredictor(min_train_jobs=10, retrain_every=60))
    check_predictor(Inflated)
    check_predictor(Inflated(base="tsafrir", factor=2.0))
    check_predictor(Inflated(base="walltime", factor=1.25))  # static fast path


def test_ml_trains_online_and_beats_walltime(synthetic: JobTable, ml_run) -> None:
    pred, out = ml_run
    assert pred.trainings_ > 1
    assert 0 < pred.fallbacks_ < len(synthetic)
    assert out.dtype == np.int64
    assert (out >= 0).all() and (out <= synthetic["requested_time"]).all()
    actual = np.maximum(synthetic["run"], 0)
    wall_mae = prediction_metrics(synthetic["requested_time"], actual)["mae_min"]
    assert prediction_metrics(out, actual)["mae_min"] < wall_mae
    # the evaluation (on a clone) gives the same predictions: deterministic, and the
    # object handed to evaluate_predictors is not what ran
    report = evaluate_predictors(synthetic, ["walltime", pred])
    np.testing.assert_array_equal(report.predicted["ml"], out)
    assert report.metrics["ml"]["all"]["mae_min"] < report.metrics["walltime"]["all"]["mae_min"]


def test_ml_is_causal_on_a_truncated_trace(synthetic: JobTable, ml_run) -> None:
    _, out = ml_run
    half = synthetic.take(np.arange(1500))
    np.testing.assert_array_equal(replay(MLPredictor(), half)[:1500], out[:1500])


def test_ml_falls_back_to_history_before_training(synthetic: JobTable) -> None:
    pred = MLPredictor(min_train_jobs=10**9)
    out = replay(pred, synthetic)
    assert pred.trainings_ == 0 and pred.fallbacks_ == len(synthetic)
    np.testing.assert_array_equal(out, replay(HistoryPredictor(), synthetic))


def test_ml_with_a_scikit_learn_model(synthetic: JobTable) -> None:
    from sklearn.tree import DecisionTreeRegressor

    tree = DecisionTreeRegressor(max_depth=6, random_state=0)
    pred = MLPredictor(model=tree, min_train_jobs=50)
    out = replay(pred, synthetic)
    assert pred.trainings_ > 1
    assert not hasattr(tree, "tree_")  # the object given is cloned, never fitted
    assert (out >= 0).all() and (out <= synthetic["requested_time"]).all()
    np.testing.assert_array_equal(out, replay(pred.clone(), synthetic))
    assert make_predictor("ml", model=tree).model is tree


def test_ml_failing_model_raises_input_error() -> None:
    jobs = generate_synthetic(200, cores=16, seed=3)
    with pytest.raises(InputError, match=r"the ml predictor's model failed to train at "
                                         r"t=\d+: singular matrix") as err:
        replay(MLPredictor(model=FailingModel(), min_train_jobs=5), jobs)
    assert err.value.field == "predictor"


@pytest.mark.parametrize("params", [{"model": "xgboost"}, {"model": 3},
                                    {"retrain_every": 0}, {"min_train_jobs": -1}])
def test_ml_bad_parameters(params) -> None:
    jobs = generate_synthetic(20, cores=16, seed=3)
    with pytest.raises(InputError):
        replay(MLPredictor(**params), jobs)


def test_ml_feature_matrix(synthetic: JobTable, ml_run) -> None:
    pred, _ = ml_run
    assert pred.features_.shape == (len(synthetic), len(pred.feature_names_))
    assert np.isfinite(pred.features_).all()
    hours = pred.features_[:, pred.feature_names_.index("hour")]
    days = pred.features_[:, pred.feature_names_.index("weekday")]
    assert hours.min() >= 0 and hours.max() <= 23 and days.min() >= 0 and days.max() <= 6


def test_inflated_hand_made_case() -> None:
    values = (0, 10, 100, 7, 1000, 3)
    wall = [50, 50, 500, 50, 900, 3]
    jobs = JobTable.from_arrays(submit=list(range(6)), run=[5] * 6, units=[1] * 6,
                                requested_time=wall, user=[1] * 6)
    report = evaluate_predictors(jobs, [Inflated(base=FixedPredictor(values), factor=1.1)])
    expected = [min(w, math.ceil(round(v * 1.1, 6))) for v, w in zip(values, wall,
                                                                      strict=True)]
    assert expected == [0, 11, 110, 8, 900, 3]
    np.testing.assert_array_equal(report.predicted["inflated"], expected)


def test_inflated_wraps_registered_predictors(synthetic: JobTable) -> None:
    wall = synthetic["requested_time"]
    base = evaluate_predictors(synthetic, ["history", "tsafrir"]).predicted
    got = evaluate_predictors(synthetic, ["inflated"]).predicted["inflated"]
    np.testing.assert_array_equal(got, np.minimum(wall, -(-base["history"] * 3 // 2)))
    two = make_predictor("inflated", base="tsafrir", factor=2.0)
    got = evaluate_predictors(synthetic, [two]).predicted["inflated"]
    np.testing.assert_array_equal(got, np.minimum(wall, 2 * base["tsafrir"]))


@pytest.mark.parametrize("factor", [0.5, 0.999, -1, float("nan"), float("inf"), "2"])
def test_inflated_rejects_bad_factors(factor) -> None:
    with pytest.raises(InputError, match="factor"):
        Inflated(factor=factor)
    with pytest.raises(InputError, match="factor"):
        make_predictor("inflated", base="history", factor=factor)


def test_inflated_unknown_base() -> None:
    jobs = generate_synthetic(20, cores=16, seed=3)
    with pytest.raises(InputError, match="unknown predictor"):
        evaluate_predictors(jobs, [Inflated(base="nope")])


@pytest.mark.skipif(not KTH.exists(), reason="KTH-SP2 trace not available")
@pytest.mark.traces
def test_ml_on_kth() -> None:
    from dispatchlab.workload.load import load_trace

    report = evaluate_predictors(load_trace(KTH), ["walltime", "history", MLPredictor()])
    mae = {k: m["all"]["mae_min"] for k, m in report.metrics.items()}
    print("KTH MAE (min):", mae)
    assert mae["ml"] < mae["walltime"]
