"""The comparison of simulated with recorded waits (:mod:`dispatchlab.metrics.validation`):
the rolling-mean MAPE of Wilkinson et al. (2023) on a hand-computed series, the error
figures and correlations on a few jobs, and the per-group table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dispatchlab.metrics.validation import (
    average_ranks,
    rolling_mean_waits,
    rolling_wait_mape,
    wait_errors,
    wait_errors_by_group,
)

DAY = 86400
HOUR = 3600


def test_rolling_mape_on_a_hand_computed_series() -> None:
    # Five jobs over 20 days; windows (h - 14 d, h] at every whole hour h from the first
    # at or after first submit + 14 d = 336 h, to the first at or after the last
    # submit (20 d = 480 h): 336 h .. 480 h, 145 points.
    #   job  submit        recorded  simulated
    #   J1   0             100       200
    #   J2   1 d           300       300
    #   J3   15 d            0       600
    #   J4   16 d + 1800 s   0         0
    #   J5   20 d          500       250
    # h = 336 .. 359 (24 points): window (h - 14 d, h] holds J2 only (J1 at 0 is on the
    #   open left edge at h = 336): recorded 300, simulated 300, error 0.
    # h = 360 .. 384 (25 points): J2 at 1 d left at h = 15 d (open edge), J3 entered:
    #   recorded mean 0 -> left out.
    # h = 385 .. 479 (95 points): J3, J4 (J4 enters at the first hour >= 16 d + 1800 s):
    #   recorded mean 0 -> left out.
    # h = 480 (1 point): J3, J4, J5: recorded 500 / 3, simulated 850 / 3, |error| /
    #   recorded = 350 / 500 = 0.7.
    # MAPE = 100 * (24 * 0 + 0.7) / 25 = 2.8 %; 120 points left out (recorded mean 0),
    # none empty.
    submit = np.array([0, DAY, 15 * DAY, 16 * DAY + 1800, 20 * DAY])
    recorded = np.array([100, 300, 0, 0, 500])
    simulated = np.array([200, 300, 600, 0, 250])
    r = rolling_wait_mape(submit, recorded, simulated)
    assert r.hours[0] == 336 * HOUR and r.hours[-1] == 480 * HOUR and len(r.hours) == 145
    assert r.used.sum() == 25 and r.zero == 120 and r.empty == 0
    assert r.mape == pytest.approx(2.8)
    assert r.recorded[0] == 300 and r.simulated[0] == 300
    assert r.recorded[-1] == pytest.approx(500 / 3)
    assert r.simulated[-1] == pytest.approx(850 / 3)
    assert list(r.jobs[[0, 23, 24, 48, 49, 144]]) == [1, 1, 1, 1, 2, 3]
    assert r.summary()["points_used"] == 25 and r.summary()["window_days"] == 14


def test_rolling_points_without_jobs_are_left_out_as_empty() -> None:
    # jobs at 0 and 30 d: points 336 h .. 720 h (385); the windows of 336 h .. 719 h
    # hold no job (0 sits on the open left edge at 336 h), 720 h holds the second job.
    r = rolling_wait_mape(np.array([0, 30 * DAY]), np.array([10, 40]), np.array([20, 30]))
    assert len(r.hours) == 385 and r.empty == 384 and r.zero == 0
    assert r.used.sum() == 1 and r.mape == pytest.approx(25.0)
    assert math.isnan(r.recorded[0])


def test_rolling_without_a_full_window_has_no_point() -> None:
    r = rolling_wait_mape(np.array([0, 5 * DAY]), np.array([10, 40]), np.array([20, 30]))
    assert len(r.hours) == 0 and r.mape is None
    empty = rolling_wait_mape(np.array([], dtype=np.int64), np.array([]), np.array([]))
    assert len(empty.hours) == 0 and empty.mape is None


def test_rolling_means_need_no_sorted_submits() -> None:
    count, mean = rolling_mean_waits(np.array([50, 10, 30]), np.array([5, 1, 3]),
                                     np.array([30, 60]), window=25)
    # (5, 30]: jobs at 10, 30 -> mean 2; (35, 60]: job at 50 -> 5
    assert list(count) == [2, 1] and list(mean) == [2.0, 5.0]


def test_wait_errors_on_three_jobs() -> None:
    rec = np.array([0, 90, 200])
    sim = np.array([0, 90, 80])
    s = wait_errors(rec, sim)
    assert s["jobs"] == 3
    assert s["recorded_mean_wait"] == pytest.approx(290 / 3)
    assert s["simulated_mean_wait"] == pytest.approx(170 / 3)
    assert s["mae"] == pytest.approx(40.0) and s["mean_error"] == pytest.approx(-40.0)
    q = s["error_quantiles"]
    assert (q["min"], q["p50"], q["max"]) == (-120.0, 0.0, 0.0)
    assert q["p25"] == pytest.approx(-60.0)  # linear between -120 and 0
    # Pearson: deviations rec (-290, -20, 310)/3, sim (-170, 100, 70)/3
    num = (-290 * -170) + (-20 * 100) + (310 * 70)
    den = math.sqrt((290**2 + 20**2 + 310**2) * (170**2 + 100**2 + 70**2))
    assert s["pearson"] == pytest.approx(num / den)
    # Spearman: ranks (1, 2, 3) and (1, 3, 2): 1 - 6 * 2 / (3 * 8) = 0.5
    assert s["spearman"] == pytest.approx(0.5)


def test_wait_errors_degenerate_cases() -> None:
    none = wait_errors(np.array([]), np.array([]))
    assert none["jobs"] == 0 and none["mae"] is None and none["pearson"] is None
    const = wait_errors(np.array([5, 5]), np.array([1, 3]))
    assert const["pearson"] is None and const["spearman"] is None and const["mae"] == 3
    with pytest.raises(ValueError, match="aligned"):
        wait_errors(np.array([1, 2]), np.array([1]))


def test_average_ranks_share_ties() -> None:
    assert list(average_ranks(np.array([10, 20, 10, 5]))) == [2.5, 4.0, 2.5, 1.0]


def test_errors_by_group_are_labelled_and_in_code_order() -> None:
    rows = wait_errors_by_group(np.array([0, 90, 200]), np.array([0, 90, 80]),
                                np.array([1, 2, 1]), {1: "batch"})
    assert [(r["group"], r["code"], r["jobs"]) for r in rows] == [("batch", 1, 2),
                                                                  ("2", 2, 1)]
    assert rows[0]["mae"] == 60 and rows[0]["recorded_mean_wait"] == 100
    assert rows[1]["mae"] == 0 and rows[1]["pearson"] is None
