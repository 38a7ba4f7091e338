"""Steady-state utilization (metrics.summary.steady_state_utilization) on hand schedules."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.metrics import (
    REJECTED,
    STEADY_THRESHOLD,
    Measure,
    steady_state_utilization,
    summarize,
)

# Four cores, four jobs (times in s):
#   J0: submit 0,  runs [0, 100),  1 core
#   J1: submit 10, runs [10, 60),  1 core  -> at t = 10, 2 of 4 cores busy: t0 = 10
#   J2: submit 40, runs [40, 200), 2 cores
#   J3: submit 80, runs [80, 90),  1 core  -> last submission: t1 = 80
# Cores in use: [0,10) 1, [10,40) 2, [40,60) 4, [60,80) 3, [80,90) 4, [90,100) 3, [100,200) 2.
# Over [10, 80): 2 x 30 + 4 x 20 + 3 x 20 = 200 core-s, of 4 x 70 = 280 -> 200 / 280.
# Whole run: core-s 100 + 50 + 2 x 160 + 10 = 480 over 4 x 200 -> 0.6.
SUBMIT = [0, 10, 40, 80]
START = [0, 10, 40, 80]
END = [100, 60, 200, 90]
STATUS = [0, 0, 0, 0]
UNITS = [1, 1, 2, 1]
CORES = [1, 1, 1, 1]


def test_threshold_is_half() -> None:
    assert STEADY_THRESHOLD == 0.5


def test_hand_schedule() -> None:
    value, window, fell_back = steady_state_utilization(
        SUBMIT, START, END, STATUS, UNITS, CORES, 4
    )
    assert window == (10, 80) and fell_back is False
    assert value == pytest.approx(200 / 280)


def test_crossing_uses_value_after_all_changes_at_a_timestamp() -> None:
    # J0 runs [0, 10) and J1 runs [10, 40), 1 core each: at t = 10 one ends and one
    # starts, so 1 core is in use (never 2) -> 50 % is not reached at 10.
    # J2 starts at 20 (1 core): 2 of 4 busy -> t0 = 20. J3 is submitted last, at 30.
    # Over [20, 30): 2 cores x 10 s = 20 core-s of 4 x 10 -> 0.5.
    value, window, fell_back = steady_state_utilization(
        [0, 0, 20, 30], [0, 10, 20, 30], [10, 40, 40, 31], [0, 0, 0, 0],
        [1, 1, 1, 1], [1, 1, 1, 1], 4,
    )
    assert (value, window, fell_back) == (0.5, (20, 30), False)


def test_fallback_when_half_never_reached() -> None:
    # One core busy at a time: [0, 100) then [100, 150). Never 2 of 4 cores.
    # Whole run: 150 core-s over 4 x 150 -> 0.25.
    value, window, fell_back = steady_state_utilization(
        [0, 50], [0, 100], [100, 150], [0, 0], [1, 1], [1, 1], 4
    )
    assert (value, window, fell_back) == (0.25, None, True)
    # an explicit fallback value is returned as is
    assert steady_state_utilization(
        [0, 50], [0, 100], [100, 150], [0, 0], [1, 1], [1, 1], 4, fallback=0.3
    ) == (0.3, None, True)


def test_fallback_when_half_reached_only_after_last_submission() -> None:
    # Both submitted at 0 (t1 = 0); J1 (2 cores) starts at 10 -> t0 = 10 > t1.
    # Whole run: 1 x 10 + 2 x 10 = 30 core-s over 4 x 20 -> 0.375.
    assert steady_state_utilization(
        [0, 0], [0, 10], [10, 20], [0, 0], [1, 2], [1, 1], 4
    ) == (0.375, None, True)
    # Reached exactly at the last submission (t0 = t1 = 50): empty window, fallback.
    # Whole run: 100 + 50 = 150 core-s over 4 x 100 -> 0.375.
    assert steady_state_utilization(
        [0, 50], [0, 50], [100, 100], [0, 0], [1, 1], [1, 1], 4
    ) == (0.375, None, True)


def test_rejected_jobs_ignored() -> None:
    # J4 asks for 8 cores and is rejected at t = 150: it neither uses cores nor moves
    # t1 (which would otherwise become 150). Same result as test_hand_schedule.
    value, window, fell_back = steady_state_utilization(
        [*SUBMIT, 150], [*START, -1], [*END, -1], [*STATUS, REJECTED], [*UNITS, 8],
        [*CORES, 1], 4,
    )
    assert window == (10, 80) and not fell_back
    assert value == pytest.approx(200 / 280)
    # only rejected jobs: nothing ran, NaN fallback
    value, window, fell_back = steady_state_utilization([0], [-1], [-1], [REJECTED], [8],
                                                        [1], 4)
    assert math.isnan(value) and window is None and fell_back


def test_per_unit_amount_counts() -> None:
    # 2 units of 2 GPUs each on a 8-GPU platform: 4 GPUs = 50 % at t = 5 (t0);
    # a 1-GPU job is submitted at 15. Over [5, 15): 4 GPUs x 10 s of 8 x 10 -> 0.5;
    # the 1-GPU job starting at 15 is outside the window.
    value, window, _ = steady_state_utilization(
        [0, 15], [5, 15], [30, 20], [0, 0], [2, 1], [2, 1], 8
    )
    assert (value, window) == (0.5, (5, 15))


@pytest.mark.parametrize("seed", range(5))
def test_matches_per_second_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, cap = 30, 8
    submit = np.sort(rng.integers(0, 200, n))
    start = submit + rng.integers(0, 30, n)
    end = start + rng.integers(0, 60, n)
    units = rng.integers(1, 5, n)
    value, window, fell_back = steady_state_utilization(
        submit, start, end, np.zeros(n, np.int8), units, np.ones(n, np.int64), cap
    )
    busy = np.zeros(int(end.max()) + 1, np.int64)  # cores in use at each second
    for s, e, u in zip(start, end, units, strict=True):
        busy[s:e] += u
    t0 = int(np.flatnonzero(2 * busy >= cap)[0])
    t1 = int(submit.max())
    assert not fell_back and window == (t0, t1)
    assert value == pytest.approx(busy[t0:t1].sum() / (cap * (t1 - t0)))


def test_bad_inputs() -> None:
    with pytest.raises(InputError, match="non-negative integer"):
        steady_state_utilization(SUBMIT, START, END, STATUS, UNITS, CORES, -4)
    with pytest.raises(InputError, match="3 rows, expected 4"):
        steady_state_utilization(SUBMIT, START, END, STATUS, UNITS, CORES[:3], 4)


# ------------------------------------------------------------------------- summary


def test_summary_keys_and_json() -> None:
    s = summarize(SUBMIT, START, END, STATUS, UNITS, {"core": CORES}, {"core": 4})
    assert json.loads(json.dumps(s, allow_nan=False)) == s
    assert s["utilization"] == pytest.approx(0.6)
    assert s["steady_utilization"] == pytest.approx(200 / 280)
    assert s["steady_window"] == [10, 80]
    assert s["steady_fallback"] is False


def test_summary_steady_uses_all_jobs_not_the_measured_window() -> None:
    # Measured: J0 and J1 only -> utilization (100 + 50) / (4 x (100 - 0)) = 0.375;
    # the steady value still covers every job that ran: 200 / 280.
    s = summarize(SUBMIT, START, END, STATUS, UNITS, {"core": CORES}, {"core": 4},
                  measure=Measure.by_index(0, 2))
    assert s["utilization"] == pytest.approx(0.375)
    assert s["steady_utilization"] == pytest.approx(200 / 280)
    assert s["steady_window"] == [10, 80]


def test_summary_fallback_is_the_measured_utilization() -> None:
    # Never 2 of 4 cores busy; measured: J1 only -> 50 core-s over 4 x (150 - 50) = 0.125
    s = summarize([0, 50], [0, 100], [100, 150], [0, 0], [1, 1], {"core": [1, 1]},
                  {"core": 4}, measure=Measure.by_index(1, 2))
    assert s["utilization"] == pytest.approx(0.125)
    assert s["steady_utilization"] == s["utilization"]
    assert s["steady_window"] is None and s["steady_fallback"] is True


def test_summary_primary_resource_and_all_rejected() -> None:
    # No "core": the primary resource is the first one, "gpu" (capacity 2). One job on
    # 1 GPU reaches 50 % at t0 = 0, but its submission at 0 is also the last one
    # (t1 = 0 <= t0): fallback to the utilization 1 x 10 / (2 x 10) = 0.5.
    s = summarize([0], [0], [10], [0], [1], {"gpu": [1]}, {"gpu": 2})
    assert s["utilization_resource"] == "gpu"
    assert s["steady_utilization"] == pytest.approx(0.5) and s["steady_fallback"] is True
    s = summarize([0, 1], [-1, -1], [-1, -1], [2, 2], [1, 1], {"core": [1, 1]}, {"core": 1})
    assert s["steady_utilization"] is None and s["steady_window"] is None
    assert s["steady_fallback"] is True


def test_summary_reuses_the_series_only_with_the_same_result() -> None:
    """summarize() passes its measured in-use series to the steady computation when
    every row is measured; on random schedules (rejections included) the value and
    window equal the computation from scratch."""
    from dispatchlab.metrics import REJECTED, steady_state_utilization, summarize

    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(1, 60))
        submit = np.sort(rng.integers(0, 5_000, n))
        start = submit + rng.integers(0, 3_000, n)
        end = start + rng.integers(0, 4_000, n)
        status = np.where(rng.random(n) < 0.1, REJECTED, 0)
        start[status == REJECTED] = -1
        end[status == REJECTED] = -1
        units = rng.integers(1, 9, n)
        cores = np.ones(n, dtype=np.int64)
        s = summarize(submit, start, end, status, units, {"core": cores}, {"core": 16})
        if s["jobs"] == 0:
            continue
        value, window, fell_back = steady_state_utilization(
            submit, start, end, status, units, cores, 16, fallback=s["utilization"])
        assert s["steady_utilization"] == pytest.approx(value, rel=1e-12)
        assert s["steady_window"] == (None if window is None else list(window))
        assert s["steady_fallback"] == fell_back
