"""Tests of dispatchlab.metrics: hand-computed examples and brute-force checks."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.core.errors import InputError
from dispatchlab.metrics import (
    JOB_CLASS_LABELS,
    Measure,
    StepFunction,
    bounded_slowdown,
    decision_time_stats,
    describe,
    job_class,
    job_class_labels,
    job_columns,
    job_stats,
    measured_series,
    queue_length,
    resource_in_use,
    slowdown,
    step_function,
    summarize,
    summarize_table,
)
from dispatchlab.workload.jobs import JobTable

# Three jobs used in several tests (times in s):
#   job 0: submit 0, start 0,  end 100  -> wait 0,  run 100,  turnaround 100
#   job 1: submit 0, start 10, end 4000 -> wait 10, run 3990, turnaround 4000 (killed)
#   job 2: submit 5, start 20, end 20   -> wait 15, run 0,    turnaround 15
SUBMIT = [0, 0, 5]
START = [0, 10, 20]
END = [100, 4000, 20]
STATUS = [0, 1, 0]


def expand(f: StepFunction) -> np.ndarray:
    """One value per second of the domain (only for tiny test cases)."""
    return np.repeat(f.values, f.durations())


# ------------------------------------------------------------------- per-job metrics


def test_three_jobs_hand_computed() -> None:
    cols = job_columns(SUBMIT, START, END, STATUS)
    assert cols["wait"].tolist() == [0, 10, 15]
    assert cols["turnaround"].tolist() == [100, 4000, 15]
    assert cols["run"].tolist() == [100, 3990, 0]
    # slowdown = (wait + run) / max(run, 1):
    #   job 0: (0 + 100) / 100 = 1;  job 1: 4000 / 3990;  job 2: (15 + 0) / max(0, 1) = 15
    np.testing.assert_allclose(cols["slowdown"], [1.0, 4000 / 3990, 15.0])
    # bounded slowdown = max((wait + run) / max(run, 10), 1):
    #   job 0: 100 / 100 = 1;  job 1: 4000 / 3990;  job 2: 15 / max(0, 10) = 1.5
    np.testing.assert_allclose(cols["bounded_slowdown"], [1.0, 4000 / 3990, 1.5])
    # classes: 100 s short, 3990 s medium (>= 3600), 0 s short
    assert cols["job_class"].tolist() == [0, 1, 0]
    assert job_class_labels(cols["job_class"]).tolist() == ["short", "medium", "short"]


def test_tau_effect_and_clipping() -> None:
    # tau = 60: job 2 -> max(15 / max(0, 60), 1) = max(0.25, 1) = 1
    cols = job_columns(SUBMIT, START, END, STATUS, tau=60)
    np.testing.assert_allclose(cols["bounded_slowdown"], [1.0, 4000 / 3990, 1.0])
    # wait 0, run 5, tau 10: 5 / 10 = 0.5 -> clipped to 1; plain slowdown 5 / 5 = 1
    assert bounded_slowdown([0], [5]).tolist() == [1.0]
    # wait 30, run 5, tau 10: 35 / 10 = 3.5; tau 300 (5 min): 35 / 300 -> 1
    assert bounded_slowdown([30], [5]).tolist() == [3.5]
    assert bounded_slowdown([30], [5], tau=300).tolist() == [1.0]
    # tau may be fractional: wait 34, run 1 -> 35 / max(1, 2.5) = 14
    assert bounded_slowdown([34], [1], tau=2.5).tolist() == [14.0]
    # slowdown with run 0 divides by 1: (7 + 0) / 1 = 7; run 2: (7 + 2) / 2 = 4.5
    assert slowdown([7, 7], [0, 2]).tolist() == [7.0, 4.5]


def test_class_boundaries() -> None:
    runs = [0, 3599, 3600, 3601, 43199, 43200, 43201, 10**8]
    assert job_class(runs).tolist() == [0, 0, 1, 1, 1, 1, 2, 2]
    assert JOB_CLASS_LABELS == ("short", "medium", "long")


def test_rejected_columns() -> None:
    cols = job_columns([0, 1, 2], [3, -1, 2], [4, -1, 9], [0, 2, 0])
    assert cols["wait"].tolist() == [3, -1, 0]
    assert cols["run"].tolist() == [1, -1, 7]
    assert cols["turnaround"].tolist() == [4, -1, 7]
    assert np.isnan(cols["slowdown"][1]) and np.isnan(cols["bounded_slowdown"][1])
    assert cols["job_class"].tolist() == [0, -1, 0]
    assert job_class_labels(cols["job_class"]).tolist() == ["short", None, "short"]


def test_describe_and_empty_without_warnings() -> None:
    # waits 0, 10, 15: mean 25/3, median 10, p95 = 10 + 0.9 * (15 - 10) = 14.5, max 15
    d = describe([0, 10, 15])
    assert d["count"] == 3 and d["mean"] == pytest.approx(25 / 3)
    assert d["median"] == 10.0 and d["p95"] == pytest.approx(14.5) and d["max"] == 15
    assert isinstance(d["max"], int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        e = describe(np.zeros(0, dtype=np.int64))
        stats = job_stats(SUBMIT, START, END, STATUS)
    assert e["count"] == 0 and all(math.isnan(e[k]) for k in ("mean", "median", "p95", "max"))
    long = stats["by_class"]["long"]
    assert long["jobs"] == 0 and math.isnan(long["mean_wait"])
    assert stats["by_class"]["short"]["jobs"] == 2
    # short jobs 0 and 2: waits 0 and 15 -> mean 7.5; medium job 1: wait 10
    assert stats["by_class"]["short"]["mean_wait"] == 7.5
    assert stats["by_class"]["medium"]["max_wait"] == 10
    assert stats["jobs"] == 3 and stats["mean_bsld"] == pytest.approx((1 + 4000 / 3990 + 1.5) / 3)


def test_rejected_jobs_excluded_but_counted() -> None:
    # Insert a rejected job (row 1) among the three jobs: statistics must not change.
    submit = [0, 0, 0, 5]
    start = [0, -1, 10, 20]
    end = [100, -1, 4000, 20]
    status = [0, 2, 1, 0]
    cap = {"core": 4}
    units = [1, 64, 2, 1]
    res = {"core": [1, 1, 1, 1]}
    with_rejected = summarize(submit, start, end, status, units, res, cap)
    plain = summarize(SUBMIT, START, END, STATUS, [1, 2, 1], {"core": [1, 1, 1]}, cap)
    assert with_rejected["rejected"] == 1 and with_rejected["rejected_total"] == 1
    assert with_rejected["jobs"] == 3 and with_rejected["total_jobs"] == 4
    assert with_rejected["killed"] == 1
    for key in ("mean_wait", "p95_bsld", "makespan", "utilization", "mean_queue_length"):
        assert with_rejected[key] == plain[key], key


# ---------------------------------------------------------------------- step functions


def test_queue_length_ties_and_zero_waits() -> None:
    # job A waits [3, 5), B waits [5, 5) (0 s), C waits [5, 8), D waits [8, 8), E [8, 12)
    # At t=5: A starts (-1), B submitted and started (+1 -1), C submitted (+1): value 1.
    # Value 1 on [3, 8) (A then C, merged), at t=8: C starts, D 0-s, E submitted -> 1,
    # so one segment of value 1 on [3, 12) and nothing else.
    q = queue_length([3, 5, 5, 8, 8], [5, 5, 8, 8, 12])
    assert q.times.tolist() == [3] and q.values.tolist() == [1] and q.end == 12
    # E submitted at 9 instead: 1 on [3, 8), 0 on [8, 9), 1 on [9, 12)
    q = queue_length([3, 5, 5, 8, 9], [5, 5, 8, 8, 12])
    assert q.times.tolist() == [3, 8, 9] and q.values.tolist() == [1, 0, 1]
    assert q.durations().tolist() == [5, 1, 3]
    assert q.mean() == pytest.approx(8 / 9)
    assert q.value_at([3, 7, 8, 11]).tolist() == [1, 1, 0, 1]


def test_time_weighted_distribution_excluding_empty() -> None:
    # Waits: [0, 10), [2, 4), [2, 4), [20, 25) on horizon [0, 30):
    #   [0,2): 1   [2,4): 3   [4,10): 1   [10,20): 0   [20,25): 1   [25,30): 0
    q = queue_length([0, 2, 2, 20], [10, 4, 4, 25], horizon=(0, 30))
    assert q.times.tolist() == [0, 2, 4, 10, 20, 25]
    assert q.values.tolist() == [1, 3, 1, 0, 1, 0]
    values, seconds = q.distribution()
    assert values.tolist() == [0, 1, 3] and seconds.tolist() == [15, 13, 2]
    values, seconds = q.distribution(exclude_zero=True)
    assert values.tolist() == [1, 3] and seconds.tolist() == [13, 2]
    # mean over 30 s: (13 * 1 + 2 * 3) / 30 = 19 / 30; over the 15 non-empty seconds: 19 / 15
    assert q.mean() == pytest.approx(19 / 30)
    assert q.mean(exclude_zero=True) == pytest.approx(19 / 15)
    assert q.integral() == 19.0
    # inverted CDF over the non-empty 15 s: value 1 covers 13/15 = 0.867 of the time
    assert q.quantile(0.5, exclude_zero=True) == 1.0
    assert q.quantile(13 / 15, exclude_zero=True) == 1.0
    assert q.quantile(0.9, exclude_zero=True) == 3.0
    # including empty periods, 15/30 of the time is 0: the median is 0, just above it 1
    assert q.quantile(0.5) == 0.0 and q.quantile(0.51) == 1.0
    assert q.quantile([0.0, 1.0]).tolist() == [0.0, 3.0]
    assert q.max() == 3.0
    cols = q.to_columns()
    assert cols["duration"].sum() == 30


def test_empty_step_function() -> None:
    q = queue_length([5], [5])  # one job with a 0-second wait: domain [5, 5)
    assert len(q) == 0 and q.duration == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(q.mean()) and math.isnan(q.quantile(0.5)) and math.isnan(q.max())
    assert len(queue_length([], [])) == 0


jobs_strategy = st.lists(
    st.tuples(st.integers(0, 30), st.sampled_from([0, 0, 0, 1, 2, 3, 7, 15])),
    min_size=0,
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(jobs=jobs_strategy, cut=st.tuples(st.integers(-5, 40), st.integers(0, 20)))
def test_queue_length_matches_per_second_count(
    jobs: list[tuple[int, int]], cut: tuple[int, int]
) -> None:
    submit = np.array([s for s, _ in jobs], dtype=np.int64)
    start = submit + np.array([w for _, w in jobs], dtype=np.int64)
    horizons = [(cut[0], cut[0] + cut[1])]
    if len(jobs):
        horizons.append((int(submit.min()), int(start.max())))
    for h0, h1 in horizons:
        q = queue_length(submit, start, horizon=(h0, h1))
        seconds = np.arange(h0, h1)
        brute = np.array(
            [np.count_nonzero((submit <= t) & (t < start)) for t in seconds], dtype=np.int64
        )
        assert q.end == h1 and q.duration == h1 - h0
        assert np.all(np.diff(q.times) > 0) and np.all(q.durations() > 0)
        assert np.all(q.values[1:] != q.values[:-1])
        np.testing.assert_array_equal(expand(q), brute)
        if len(brute):
            assert q.mean() == pytest.approx(brute.mean())
            values, secs = q.distribution(exclude_zero=True)
            bv, bc = np.unique(brute[brute > 0], return_counts=True)
            np.testing.assert_array_equal(values, bv)
            np.testing.assert_array_equal(secs, bc)
            for p in (0.0, 0.25, 0.5, 0.9, 1.0):
                expected = np.quantile(brute, p, method="inverted_cdf")
                assert q.quantile(p) == expected
    if len(jobs):
        q = queue_length(submit, start)
        assert q.start == (int(submit.min()) if q.duration else q.end)


@settings(max_examples=100, deadline=None)
@given(
    jobs=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 10), st.integers(0, 4)), max_size=20)
)
def test_resource_in_use_matches_per_second_sum(jobs: list[tuple[int, int, int]]) -> None:
    start = np.array([s for s, _, _ in jobs], dtype=np.int64)
    end = start + np.array([r for _, r, _ in jobs], dtype=np.int64)
    amount = np.array([a for _, _, a in jobs], dtype=np.int64)
    f = resource_in_use(start, end, amount, horizon=(0, 45))
    brute = np.array([amount[(start <= t) & (t < end)].sum() for t in range(45)])
    np.testing.assert_array_equal(expand(f), brute)
    assert f.integral() == float(np.sum(amount * (end - start)))


def test_large_time_span_is_not_materialized() -> None:
    # 200 000 jobs over 10^15 s: any per-second array would be impossible.
    rng = np.random.default_rng(7)
    submit = np.sort(rng.integers(0, 10**15, 200_000))
    start = submit + rng.integers(0, 10**9, 200_000)
    q = queue_length(submit, start)
    assert q.duration == int(start.max() - submit.min())
    assert q.mean() == pytest.approx((start - submit).sum() / q.duration)


def test_step_function_bad_inputs() -> None:
    with pytest.raises(InputError):
        step_function([5], [4])
    with pytest.raises(InputError):
        step_function([0], [1], horizon=(5, 4))
    with pytest.raises(InputError):
        step_function([0, 1], [1])
    q = queue_length([0], [10])
    with pytest.raises(InputError):
        q.quantile(1.5)
    with pytest.raises(InputError):
        q.value_at([10])


# --------------------------------------------------------------- system metrics


def test_utilization_hand_computed() -> None:
    # Platform: 4 cores, 2 GPUs. Jobs (submit, start, end, units, core/unit, gpu/unit):
    #   A: 0, 0, 10,  2 units x (1 core, 1 gpu)  -> 2*1*10 = 20 core-s, 2*1*10 = 20 gpu-s
    #   B: 0, 10, 20, 4 units x (1 core, 0 gpu)  -> 4*1*10 = 40 core-s
    # makespan = 20 - 0 = 20 s
    # core utilization = (20 + 40) / (4 * 20) = 0.75; gpu = 20 / (2 * 20) = 0.5
    # queue: B waits [0, 10) -> mean 10 / 20 = 0.5; non-empty mean 1
    submit, start, end, status = [0, 0], [0, 10], [10, 20], [0, 0]
    units = [2, 4]
    res = {"core": [1, 1], "gpu": [1, 0]}
    cap = {"gpu": 2, "core": 4}
    s = summarize(submit, start, end, status, units, res, cap)
    assert s["makespan"] == 20 and s["first_submit"] == 0 and s["last_end"] == 20
    assert s["utilization_resource"] == "core"
    assert s["utilization"] == pytest.approx(0.75)
    assert s["utilization_by_resource"] == pytest.approx({"core": 0.75, "gpu": 0.5})
    assert s["mean_queue_length"] == pytest.approx(0.5)
    assert s["mean_queue_length_nonempty"] == pytest.approx(1.0)
    assert s["max_queue_length"] == 1
    series = measured_series(submit, start, end, status, units, res, cap)
    # cores in use: 2 on [0, 10), 4 on [10, 20)
    assert series.in_use["core"].times.tolist() == [0, 10]
    assert series.in_use["core"].values.tolist() == [2, 4]
    assert series.utilization("core").mean() == pytest.approx(0.75)
    assert series.utilization("gpu").mean() == pytest.approx(0.5)
    # without "core", the first resource of the capacity is the headline one
    s2 = summarize(submit, start, end, status, units, {"gpu": [1, 0]}, {"gpu": 2})
    assert s2["utilization_resource"] == "gpu" and s2["utilization"] == pytest.approx(0.5)


def test_series_mean_equals_formula_on_random_results() -> None:
    rng = np.random.default_rng(3)
    n = 300
    submit = np.sort(rng.integers(0, 5000, n))
    start = submit + rng.integers(0, 300, n)
    end = start + rng.integers(0, 2000, n)
    status = rng.choice([0, 1, 2], n, p=[0.8, 0.1, 0.1]).astype(np.int8)
    start[status == 2] = -1
    end[status == 2] = -1
    units = rng.integers(1, 8, n)
    res = {"core": np.ones(n, np.int64), "mem": rng.integers(0, 1000, n)}
    cap = {"core": 64, "mem": 64 * 1000}
    for measure in (None, Measure.by_index(50, 250), Measure.by_time(1000, 4000)):
        s = summarize(submit, start, end, status, units, res, cap, measure=measure)
        ser = measured_series(submit, start, end, status, units, res, cap, measure=measure)
        for name in cap:
            assert ser.utilization(name).mean() == pytest.approx(s["utilization_by_resource"][name])
        rows = (measure or Measure()).mask(submit) & (status != 2)
        assert s["mean_queue_length"] == pytest.approx(
            (start[rows] - submit[rows]).sum() / s["makespan"]
        )


def test_measure_by_time_and_by_index() -> None:
    # Four jobs (submit, start, end): (0,0,10) (10,30,40) (20,40,100) (30,30,35)
    submit, start, end, status = [0, 10, 20, 30], [0, 30, 40, 30], [10, 40, 100, 35], [0] * 4
    units, res, cap = [1] * 4, {"core": [1] * 4}, {"core": 2}
    # rows [1, 3): jobs 1 and 2 -> waits 20, 20; makespan = 100 - 10 = 90
    # core-s = 10 + 60 = 70 -> utilization 70 / (2 * 90)
    s = summarize(submit, start, end, status, units, res, cap, measure=Measure.by_index(1, 3))
    assert s["jobs"] == 2 and s["measured_jobs"] == 2 and s["total_jobs"] == 4
    assert s["mean_wait"] == 20.0 and s["makespan"] == 90 and s["first_submit"] == 10
    assert s["utilization"] == pytest.approx(70 / 180)
    # queue of measured jobs on [10, 100): job 1 waits [10, 30), job 2 [20, 40) -> 40 job-s
    assert s["mean_queue_length"] == pytest.approx(40 / 90)
    assert s["measure"] == "index:1:3"
    # submit in [10, 30): the same two jobs
    t = summarize(submit, start, end, status, units, res, cap, measure=Measure.by_time(10, 30))
    for key in ("jobs", "mean_wait", "makespan", "utilization", "mean_queue_length"):
        assert t[key] == s[key]
    # open bounds and parsing
    assert Measure.parse("index:2:").mask(submit).tolist() == [False, False, True, True]
    assert Measure.parse("time::20").mask(submit).tolist() == [True, True, False, False]
    assert Measure.parse("all") == Measure.all()
    assert str(Measure.by_time(10, 30)) == "time:10:30"
    stats = job_stats(submit, start, end, status, measure=Measure.by_index(3, None))
    assert stats["jobs"] == 1 and stats["mean_wait"] == 0.0


def test_bad_measurement_windows() -> None:
    for make in (
        lambda: Measure.by_time(10, 10),
        lambda: Measure.by_time(20, 10),
        lambda: Measure.by_index(3, 1),
        lambda: Measure.by_index(-1, 2),
        lambda: Measure("weird"),  # type: ignore[arg-type]
        lambda: Measure.parse("time:a:b"),
        lambda: Measure.parse("rows:1:2"),
        lambda: Measure.by_time(1.5, 3),  # type: ignore[arg-type]
    ):
        with pytest.raises(InputError):
            make()
    submit = [0, 10, 20]
    with pytest.raises(InputError, match="selects no job"):
        Measure.by_time(100, 200).mask(submit)
    with pytest.raises(InputError, match="only 3 jobs"):
        Measure.by_index(0, 4).mask(submit)
    with pytest.raises(InputError, match="selects no job"):
        Measure.by_index(5, None).mask(submit)


def test_bad_inputs_raise_input_error() -> None:
    for tau in (0, -1, float("nan"), float("inf"), True, "10"):
        with pytest.raises(InputError):
            job_columns(SUBMIT, START, END, STATUS, tau=tau)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        bounded_slowdown([0], [1], tau=0)
    with pytest.raises(InputError, match="status"):
        job_columns([0], [0], [1], [3])
    with pytest.raises(InputError, match="submit <= start <= end"):
        job_columns([5], [4], [6], [0])
    with pytest.raises(InputError, match="submit <= start <= end"):
        job_columns([0], [4], [3], [0])
    with pytest.raises(InputError, match="rows"):
        job_columns([0, 1], [0], [1], [0])
    with pytest.raises(InputError):
        job_columns([0.5], [1], [2], [0])
    ok = (SUBMIT, START, END, STATUS, [1, 1, 1], {"core": [1, 1, 1]})
    with pytest.raises(InputError):
        summarize(*ok, {"core": -1})
    with pytest.raises(InputError):
        summarize(*ok, {})
    with pytest.raises(InputError, match="no capacity"):
        summarize(*ok, {"gpu": 1})
    with pytest.raises(InputError):
        summarize(*ok, {"core": 4}, decision_times=[-0.1])
    with pytest.raises(InputError):
        summarize(*ok, {"core": 4}, tau=0)


def test_decision_time_stats() -> None:
    # 1, 2, ..., 100 s: mean 50.5, p99 at index 0.99 * 99 = 98.01 -> 99 + 0.01 = 99.01
    d = decision_time_stats(np.arange(1, 101, dtype=np.float64))
    assert d["calls"] == 100 and d["mean"] == 50.5 and d["total"] == 5050.0
    assert d["p99"] == pytest.approx(99.01)
    # p50 at index 0.5 * 99 = 49.5 -> 50 + 0.5 = 50.5; max 100
    assert d["p50"] == pytest.approx(50.5) and d["max"] == 100.0
    e = decision_time_stats(None)
    assert e["calls"] == 0 and e["total"] == 0.0 and math.isnan(e["mean"])
    assert math.isnan(e["p50"]) and math.isnan(e["max"])


def test_summary_is_json_and_complete() -> None:
    s = summarize(
        SUBMIT,
        START,
        END,
        STATUS,
        [1, 2, 1],
        {"core": [1, 1, 1]},
        {"core": 4},
        tau=300,
        decision_times=[0.001, 0.003],
    )
    text = json.dumps(s, allow_nan=False)
    assert json.loads(text) == s
    for key in (
        "jobs",
        "rejected",
        "mean_wait",
        "median_wait",
        "p95_wait",
        "max_wait",
        "mean_turnaround",
        "mean_slowdown",
        "mean_bsld",
        "median_bsld",
        "p95_bsld",
        "max_bsld",
        "makespan",
        "utilization",
        "utilization_by_resource",
        "mean_queue_length",
        "tau",
        "by_class",
        "mean_decision_time",
        "p50_decision_time",
        "p99_decision_time",
        "max_decision_time",
        "total_decision_time",
    ):
        assert key in s, key
    assert s["tau"] == 300.0 and s["decision_calls"] == 2
    assert s["by_class"]["long"]["mean_wait"] is None and s["by_class"]["long"]["jobs"] == 0
    # waits 0, 10, 15 (see SUBMIT/START/END): mean 25/3, max 15
    assert s["mean_wait"] == pytest.approx(25 / 3) and s["max_wait"] == 15
    # bsld with tau 300: job 2 -> max(15 / 300, 1) = 1; job 1 -> 4000 / 3990; job 0 -> 1
    assert s["max_bsld"] == pytest.approx(4000 / 3990)
    # core-s = 1*100 + 2*3990 + 1*0 = 8080 over 4 cores x 4000 s
    assert s["utilization"] == pytest.approx(8080 / 16000)
    table = JobTable.from_arrays(submit=SUBMIT, run=[100, 3990, 0], units=[1, 2, 1])
    assert (
        summarize_table(
            table, START, END, STATUS, {"core": 4}, tau=300, decision_times=[0.001, 0.003]
        )
        == s
    )


def test_all_rejected_summary() -> None:
    s = summarize([0, 1], [-1, -1], [-1, -1], [2, 2], [1, 1], {"core": [1, 1]}, {"core": 1})
    assert s["jobs"] == 0 and s["rejected"] == 2
    assert s["makespan"] is None and s["utilization"] is None
    assert s["mean_wait"] is None and s["mean_queue_length"] is None
    json.dumps(s, allow_nan=False)
