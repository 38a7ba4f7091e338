"""Statistics over runs (dispatchlab.experiment.statistics): intervals are Student's t below 10 runs
and scipy's bootstrap from 10, pairing is by workload, degenerate and missing data are
handled."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats as scipy_stats

from dispatchlab.core.errors import InputError
from dispatchlab.experiment.statistics import (
    BOOTSTRAP_MIN_RUNS,
    CONFIDENCE,
    DEFAULT_SEED,
    MIN_RUNS,
    N_RESAMPLES,
    Estimate,
    PairedDifference,
    compare_configurations,
    estimate,
    format_difference,
    format_estimate,
    interval_method,
    pair_up,
    paired_difference,
)


def _scipy_mean_ci(x: np.ndarray, seed: int) -> tuple[float, float]:
    """The reference: scipy's percentile bootstrap of the mean, called directly."""
    res = scipy_stats.bootstrap(
        (x,), np.mean, n_resamples=N_RESAMPLES, confidence_level=CONFIDENCE,
        method="percentile", rng=np.random.default_rng(seed),
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _scipy_paired_ci(c: np.ndarray, b: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Reference paired bootstrap of (mean(c) - mean(b), mean(c) / mean(b))."""

    def stat(c: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        mc, mb = c.mean(axis=axis), b.mean(axis=axis)
        return np.stack([mc - mb, mc / mb])

    res = scipy_stats.bootstrap(
        (c, b), stat, paired=True, n_resamples=N_RESAMPLES, confidence_level=CONFIDENCE,
        method="percentile", rng=np.random.default_rng(seed),
    )
    return res.confidence_interval.low, res.confidence_interval.high


def test_constants() -> None:
    assert (N_RESAMPLES, CONFIDENCE, MIN_RUNS, DEFAULT_SEED) == (10_000, 0.95, 3, 0)
    assert BOOTSTRAP_MIN_RUNS == 10
    assert [interval_method(n) for n in (2, 3, 9, 10, 40)] == [
        None, "t", "t", "bootstrap", "bootstrap"]


def test_few_runs_get_student_t_interval_by_hand() -> None:
    # runs 1, 4, 10: mean 5; deviations -4, -1, 5 -> s^2 = (16 + 1 + 25) / 2 = 21,
    # s = 4.582576, s / sqrt(3) = 2.645751; t(0.975, df=2) = 4.302653 (scipy.stats.t
    # below); half width 4.302653 x 2.645751 = 11.383749 -> [-6.383749, 16.383749]
    assert scipy_stats.t.ppf(0.975, 2) == pytest.approx(4.302653, abs=1e-6)
    e = estimate([1.0, 4.0, 10.0])
    assert e.method == "t"
    assert (e.low, e.high) == pytest.approx((-6.383749, 16.383749), abs=1e-6)
    assert format_estimate(e) == "5.0 [-6.4, 16.4] t"


def test_few_pairs_get_student_t_on_the_paired_differences_by_hand() -> None:
    # candidate 12, 15, 11, 20 vs baseline 10, 14, 12, 16: differences 2, 1, -1, 4,
    # mean 1.5; deviations 0.5, -0.5, -2.5, 2.5 -> s^2 = (0.25 + 0.25 + 6.25 + 6.25) / 3
    # = 13 / 3, s = 2.081666, s / sqrt(4) = 1.040833; t(0.975, df=3) = 3.182446;
    # half width 3.312395 -> diff [-1.812395, 4.812395]. Baseline mean 13: ratio
    # 14.5 / 13 = 1.115385, its interval 1 + [-1.812395, 4.812395] / 13 =
    # [0.860585, 1.370184]. (A t interval on each side separately would be wider:
    # the pairing removes the workloads' own variation.)
    assert scipy_stats.t.ppf(0.975, 3) == pytest.approx(3.182446, abs=1e-6)
    d = paired_difference([12.0, 15.0, 11.0, 20.0], [10.0, 14.0, 12.0, 16.0])
    assert d.method == "t" and d.n_pairs == 4
    assert d.diff == pytest.approx(1.5)
    assert (d.diff_low, d.diff_high) == pytest.approx((-1.812395, 4.812395), abs=1e-6)
    assert d.ratio == pytest.approx(14.5 / 13)
    assert (d.ratio_low, d.ratio_high) == pytest.approx((0.860585, 1.370184), abs=1e-6)
    assert format_difference(d) == "1.5 [-1.8, 4.8] t (x1.12 [0.86, 1.37])"


# ------------------------------------------------------------------------- estimate


@pytest.mark.parametrize("n", [10, 12, 40])
def test_estimate_interval_is_scipy_bootstrap(n: int) -> None:
    x = np.random.default_rng(n).lognormal(5.0, 1.0, n)
    e = estimate(x, seed=7)
    low, high = _scipy_mean_ci(x, 7)
    assert e.n == n and e.method == "bootstrap"
    assert e.mean == pytest.approx(x.mean()) and e.median == pytest.approx(np.median(x))
    assert e.low == pytest.approx(low, rel=1e-12) and e.high == pytest.approx(high, rel=1e-12)
    assert e.low <= e.mean <= e.high


def test_estimate_seed_determinism() -> None:
    x = np.random.default_rng(1).normal(100.0, 15.0, 10)  # 10 runs: bootstrap
    assert estimate(x, seed=3) == estimate(x, seed=3)
    assert estimate(x) == estimate(x, seed=DEFAULT_SEED)
    a, b = estimate(x, seed=3), estimate(x, seed=4)
    assert a.mean == b.mean and (a.low, a.high) != (b.low, b.high)


def test_no_interval_below_min_runs() -> None:
    # 2 runs: mean (1 + 4) / 2 = 2.5, median 2.5, no interval
    assert estimate([1.0, 4.0]) == Estimate(2, 2.5, 2.5, None, None)
    assert estimate([7.0]) == Estimate(1, 7.0, 7.0, None, None)
    e = estimate([])
    assert e.n == 0 and math.isnan(e.mean) and math.isnan(e.median) and e.low is None
    # three runs are enough
    assert estimate([1.0, 4.0, 10.0]).low is not None


def test_missing_values_dropped() -> None:
    # None, NaN and inf are dropped: the runs 2, 4, 9 remain -> mean 5, median 4
    e = estimate([2.0, None, 4.0, float("nan"), 9.0, float("inf")], seed=1)
    assert (e.n, e.mean, e.median) == (3, 5.0, 4.0)
    # t interval over 3 runs: s = sqrt((9 + 1 + 16) / 2) = 3.605551, sem 2.081666,
    # t(0.975, 2) = 4.302653 -> half width 8.956686
    assert (e.low, e.high) == pytest.approx((5.0 - 8.956686, 5.0 + 8.956686), abs=1e-6)
    # only two finite values left: no interval
    assert estimate([1.0, None, 3.0]).low is None


def test_degenerate_sample_has_point_interval_and_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = estimate([0.1, 0.1, 0.1, 0.1])
    # all four runs equal 0.1: the interval is exactly (0.1, 0.1)
    assert (e.low, e.high) == (0.1, 0.1)
    assert e.mean == pytest.approx(0.1)


def test_estimate_bad_input() -> None:
    with pytest.raises(InputError, match="values must be numbers"):
        estimate(["a", "b", "c"])
    with pytest.raises(InputError, match="values must be numbers"):
        estimate(["1", "2", "3"])
    with pytest.raises(InputError, match="1-D"):
        estimate([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(InputError, match="n_resamples"):
        estimate([1.0, 2.0, 3.0], n_resamples=0)
    with pytest.raises(InputError, match="confidence"):
        estimate([1.0, 2.0, 3.0], confidence=95)


# ---------------------------------------------------------------- paired difference


@pytest.mark.parametrize("n", [10, 25])
def test_paired_intervals_are_scipy_bootstrap(n: int) -> None:
    rng = np.random.default_rng(100 + n)
    b = rng.lognormal(6.0, 0.5, n)
    c = b * rng.uniform(0.6, 1.1, n)
    d = paired_difference(c, b, seed=11)
    low, high = _scipy_paired_ci(c, b, 11)
    assert d.n_pairs == n and d.method == "bootstrap"
    assert d.diff == pytest.approx((c - b).mean())
    assert d.ratio == pytest.approx(c.mean() / b.mean())
    assert (d.diff_low, d.diff_high) == pytest.approx((low[0], high[0]), rel=1e-12)
    assert (d.ratio_low, d.ratio_high) == pytest.approx((low[1], high[1]), rel=1e-12)


def test_ratio_of_means_by_hand() -> None:
    # candidate 10, 20, 60 (mean 30) vs baseline 20, 20, 20 (mean 20): ratio of means
    # 30 / 20 = 1.5 (the mean of the ratios would be (0.5 + 1 + 3) / 3 = 1.5 too, so
    # check a case where they differ: baseline 10, 20, 90 (mean 40) -> ratio 0.75,
    # while the mean of ratios is (1 + 1 + 2/3) / 3 = 0.889).
    d = paired_difference([10.0, 20.0, 60.0], [10.0, 20.0, 90.0])
    assert d.ratio == pytest.approx(0.75)
    # differences 0, 0, -30 -> mean -10
    assert d.diff == pytest.approx(-10.0)
    assert d.n_pairs == 3


def test_paired_drops_incomplete_pairs() -> None:
    # pairs 1 (None on the candidate side) and 3 (NaN on the baseline side) are dropped;
    # remaining pairs (5, 4), (7, 5): diff mean ((5-4) + (7-5)) / 2 = 1.5, ratio 12 / 9
    d = paired_difference([5.0, None, 7.0, 1.0], [4.0, 3.0, 5.0, float("nan")])
    assert d == PairedDifference(2, 1.5, None, None, pytest.approx(12 / 9), None, None)


def test_paired_zero_baseline_mean_has_no_ratio() -> None:
    d = paired_difference([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    assert math.isnan(d.ratio) and d.ratio_low is None and d.ratio_high is None
    # differences 1, 2, 3: mean 2, and the diff interval still exists
    assert d.diff == 2.0 and d.diff_low is not None


def test_paired_constant_difference_is_point_interval() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = paired_difference([11.0, 12.0, 13.0, 14.0], [10.0, 11.0, 12.0, 13.0])
    # every pair differs by exactly 1
    assert (d.diff, d.diff_low, d.diff_high) == (1.0, 1.0, 1.0)
    # both sides constant: ratio 6 / 3 = 2 with the point interval
    e = paired_difference([6.0] * 4, [3.0] * 4)
    assert (e.ratio, e.ratio_low, e.ratio_high) == (2.0, 2.0, 2.0)


def test_paired_length_mismatch() -> None:
    with pytest.raises(InputError, match="aligned by workload"):
        paired_difference([1.0, 2.0, 3.0], [1.0, 2.0])


def test_pair_up_keys_both_have_sorted() -> None:
    c, b, keys = pair_up({3: 30.0, 1: 10.0, 2: None, 9: 90.0}, {2: 2.0, 1: 1.0, 3: 3.0, 4: 4.0})
    assert keys == [1, 2, 3]
    assert c[0] == 10.0 and math.isnan(c[1]) and c[2] == 30.0
    assert list(b) == [1.0, 2.0, 3.0]


# ----------------------------------------------------------- compare configurations


def _assert_close(a: Estimate | PairedDifference, b: Estimate | PairedDifference) -> None:
    """Same fields; floats equal up to rounding (batched means sum in another order)."""
    assert type(a) is type(b)
    for name, x in vars(a).items():
        y = vars(b)[name]
        if x is None or y is None or isinstance(x, (int, str)):
            assert x == y, name
        else:
            assert x == pytest.approx(y, rel=1e-12, nan_ok=True), name


def _rows(config: str, values: dict[int, float | None], metric: str = "wait") -> list[dict]:
    return [{"config": config, "workload": w, metric: v} for w, v in values.items()]


def test_compare_pairs_only_matching_workloads() -> None:
    base = {0: 100.0, 1: 200.0, 2: 300.0, 3: 400.0, 4: 500.0}
    # "new" misses workloads 1 and 4 and has a workload 7 the baseline never ran
    new = {0: 90.0, 2: 240.0, 3: 400.0, 7: 50.0}
    rows = _rows("new", new) + _rows("base", base)
    out = compare_configurations(rows, metrics=["wait"], baseline="base")
    assert [o["config"] for o in out] == ["new", "base"]  # first appearance
    assert out[0]["runs"] == 4 and out[1]["runs"] == 5
    assert "vs_baseline" not in out[1]
    d = out[0]["vs_baseline"]["wait"]
    # pairs on workloads 0, 2, 3: differences -10, -60, 0 -> mean -70 / 3;
    # ratio of means (90 + 240 + 400) / (100 + 300 + 400) = 730 / 800
    assert d.n_pairs == 3
    assert d.diff == pytest.approx(-70 / 3)
    assert d.ratio == pytest.approx(730 / 800)
    _assert_close(d, paired_difference([90.0, 240.0, 400.0], [100.0, 300.0, 400.0]))
    # the configuration's own estimate uses all its runs: (90 + 240 + 400 + 50) / 4
    assert out[0]["wait"].mean == pytest.approx(195.0) and out[0]["wait"].n == 4


def test_compare_matches_single_calls_and_ignores_row_order() -> None:
    rng = np.random.default_rng(3)
    metrics = ["a", "b", "c"]
    rows = []
    for cfg in ("x", "y"):
        for w in range(8):
            row = {"config": cfg, "workload": w}
            row.update({m: float(rng.normal(50, 10)) for m in metrics})
            rows.append(row)
    rows[3]["b"] = None  # x misses metric b on workload 3
    rows[12]["c"] = float("nan")  # y misses metric c on workload 4
    out = compare_configurations(rows, metrics=metrics, baseline="x", seed=5)
    shuffled = [rows[i] for i in np.random.default_rng(0).permutation(len(rows))]
    again = compare_configurations(shuffled, metrics=metrics, baseline="x", seed=5)
    assert {o["config"]: o for o in again} == {o["config"]: o for o in out}
    for o in out:
        mine = [r for r in rows if r["config"] == o["config"]]
        for m in metrics:
            _assert_close(o[m], estimate([r[m] for r in mine], seed=5))
    x = {r["workload"]: r for r in rows if r["config"] == "x"}
    y = {r["workload"]: r for r in rows if r["config"] == "y"}
    for m in metrics:
        c, b, _ = pair_up({w: r[m] for w, r in y.items()}, {w: r[m] for w, r in x.items()})
        _assert_close(out[1]["vs_baseline"][m], paired_difference(c, b, seed=5))
    # b: workload 3 missing in x -> 7 pairs; c: workload 4 missing in y -> 7 pairs
    assert out[1]["vs_baseline"]["b"].n_pairs == 7
    assert out[1]["vs_baseline"]["c"].n_pairs == 7
    assert out[1]["vs_baseline"]["a"].n_pairs == 8


def test_compare_duplicate_workload_raises() -> None:
    rows = [*_rows("a", {0: 1.0, 1: 2.0}), {"config": "a", "workload": 1, "wait": 5.0}]
    with pytest.raises(InputError, match="two runs on workload 1"):
        compare_configurations(rows, metrics=["wait"])


def test_compare_unknown_baseline_names_choices() -> None:
    rows = _rows("easy", {0: 1.0}) + _rows("fifo", {0: 2.0})
    with pytest.raises(InputError, match=r"'sjf'.*choices: 'easy', 'fifo'"):
        compare_configurations(rows, metrics=["wait"], baseline="sjf")


def test_compare_input_errors() -> None:
    rows = _rows("a", {0: 1.0, 1: 2.0})
    with pytest.raises(InputError, match="no run has a value for metric 'wiat'"):
        compare_configurations(rows, metrics=["wiat"])
    with pytest.raises(InputError, match="run 0 has no 'workload'"):
        compare_configurations([{"config": "a", "wait": 1.0}], metrics=["wait"])
    with pytest.raises(InputError, match="run 1 metric 'wait'"):
        compare_configurations([*rows[:1], {"config": "a", "workload": 2, "wait": "x"}],
                               metrics=["wait"])
    with pytest.raises(InputError, match="reserved"):
        compare_configurations(rows, metrics=["runs"])
    assert compare_configurations([], metrics=["wait"]) == []


def test_compare_missing_metric_key_counts_as_missing() -> None:
    rows = [*_rows("a", {0: 1.0, 1: 2.0, 2: 3.0}), {"config": "a", "workload": 3}]
    out = compare_configurations(rows, metrics=["wait"])
    # 4 runs, 3 with a value: mean (1 + 2 + 3) / 3 = 2
    assert out[0]["runs"] == 4 and out[0]["wait"].n == 3 and out[0]["wait"].mean == 2.0


# ---------------------------------------------------------------------- formatting


def test_format_estimate() -> None:
    assert format_estimate(Estimate(5, 12.34, 12.0, 10.06, 14.94)) == "12.3 [10.1, 14.9]"
    assert format_estimate(Estimate(2, 1234.5, 1234.5, None, None), "{:,.0f}") == "1,234"
    assert format_estimate(Estimate(0, math.nan, math.nan, None, None)) == "n/a"


def test_format_difference() -> None:
    d = PairedDifference(5, -3.21, -5.0, -1.1, 0.812, 0.7, 0.93)
    assert format_difference(d) == "-3.2 [-5.0, -1.1] (x0.81 [0.70, 0.93])"
    no_ci = PairedDifference(2, -3.21, None, None, 0.812, None, None)
    assert format_difference(no_ci) == "-3.2 (x0.81)"
    no_ratio = PairedDifference(3, 2.0, 1.0, 3.0, math.nan, None, None)
    assert format_difference(no_ratio) == "2.0 [1.0, 3.0]"


def test_one_statistics_module_and_the_old_campaign_modules_resolve_to_it():
    """``campaign.statistics`` and ``campaign.powerstats`` were merged into
    ``experiment.statistics``: their old names are the same module, with a warning, and
    every public name they had is there."""
    import importlib
    import sys

    import dispatchlab.experiment.statistics as merged
    from dispatchlab.core.deprecation import MOVED_MODULES, MovedWarning

    for old, names in (("dispatchlab.experiment.campaign.statistics",
                        ("Section", "run_statistics")),
                       ("dispatchlab.experiment.campaign.powerstats",
                        ("RELATIVE_METRICS", "WINDOW_METRICS", "power_rows"))):
        sys.modules.pop(old, None)
        with pytest.warns(MovedWarning, match=f"{old} moved to dispatchlab.experiment.statistics"):
            module = importlib.import_module(old)
        assert module is merged
        for name in names:
            assert hasattr(merged, name), name
        # the names from before the layering point at the merged module directly
        assert MOVED_MODULES[old.replace("experiment.", "")] == merged.__name__
