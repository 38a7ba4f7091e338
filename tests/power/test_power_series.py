"""Platform power sampled from job power series (seed 003's post-processing of a schedule
with the jobs' measured series): the grid, the sample in force, power levels, the
fallback to the mean, the cap-window metrics that use it, and ``simulate
--power-series``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY, FIFO
from dispatchlab.power import PowerCap
from dispatchlab.power.accounting import (
    platform_power,
    sampled_platform_power,
    series_fallback_rows,
)
from dispatchlab.power.data import match_power_series, write_power, write_power_series
from dispatchlab.run.outputs import run_summary
from dispatchlab.workload.jobs import TraceInfo
from dispatchlab.workload.swf import write_swf


def _with_power(jobs: JobTable, mean) -> JobTable:
    mean = np.asarray(mean, dtype=np.float64)
    jobs.columns.update(power_mean=mean, power_max=mean.copy(), power_std=np.zeros(len(mean)))
    return jobs


def _series(samples: dict[int, tuple[list[float], list[float]]]) -> dict[str, np.ndarray]:
    """``{job_id: (offsets, watts)}`` -> the read_power_series layout (sorted)."""
    ids = [j for j in sorted(samples) for _ in samples[j][0]]
    off = [o for j in sorted(samples) for o in samples[j][0]]
    w = [x for j in sorted(samples) for x in samples[j][1]]
    return {"job_id": np.array(ids, np.int64), "offset": np.array(off, np.float64),
            "watts": np.array(w, np.float64)}


def hand_run():
    # Pooled 4 cores, FIFO, every job starts at its submission (at most 3 run at once):
    #   id 1 (A): [0, 100)   samples at offsets 0, 20, 40, 60, 80: 100, 200, 300, 400, 500
    #   id 2 (D): [10, 25)   no series: its power_mean 7 W is used
    #   id 3 (B): [30, 80)   samples at 0, 20, 40: 10, 20, 30
    #   id 4 (C): [58, 98)   samples at 5, 20: 1000, 2000 (first offset > 0)
    jobs = JobTable.from_arrays(submit=[0, 10, 30, 58], run=[100, 15, 50, 40],
                                units=[1, 1, 1, 1])
    jobs = _with_power(jobs, [300, 7, 20, 1500])
    series = _series({1: ([0, 20, 40, 60, 80], [100, 200, 300, 400, 500]),
                      3: ([0, 20, 40], [10, 20, 30]),
                      4: ([5, 20], [1000, 2000])})
    r = Simulation(Platform.pooled(4), jobs, FIFO()).run()
    assert r.start.tolist() == [0, 10, 30, 58] and r.end.tolist() == [100, 25, 80, 98]
    return r, series


def test_hand_computed_grid():
    r, series = hand_run()
    times, watts = sampled_platform_power(r, series, 20)
    # default grid: 0 (first start rounded down) to the first multiple of 20 at or after
    # the last end (100); at each point the running jobs (start <= t < end) and the
    # sample in force at u = t - start (last offset <= u):
    #   t=0:   A u=0 -> 100                                             = 100
    #   t=20:  A u=20 -> 200; D (no series) -> 7                       = 207
    #   t=40:  A u=40 -> 300; B u=10 -> 10                              = 310
    #   t=60:  A u=60 -> 400; B u=30 -> 20; C u=2 < 5: first sample 1000 = 1420
    #   t=80:  A u=80 -> 500; B ended at 80 (not counted); C u=22 -> 2000 = 2500
    #   t=100: A ended at 100, C at 98                                  = 0
    assert times.tolist() == [0, 20, 40, 60, 80, 100]
    assert watts.tolist() == [100, 207, 310, 1420, 2500, 0]
    # a sub-range: the multiples of 20 in [start, end)
    t, w = sampled_platform_power(r, series, 20, start=41, end=81)
    assert t.tolist() == [60, 80] and w.tolist() == [1420, 2500]
    t, w = sampled_platform_power(r, series, 20, start=40, end=80)
    assert t.tolist() == [40, 60] and w.tolist() == [310, 1420]
    # period 30: grid 0 .. 120 (first multiple of 30 at or after 100)
    #   t=30: A u=30 -> 200; B u=0 -> 10 = 210;  t=60: 1420 (as above)
    #   t=90: A u=90 -> 500; C u=32 -> 2000 = 2500;  t=120: 0
    t, w = sampled_platform_power(r, series, 30)
    assert t.tolist() == [0, 30, 60, 90, 120] and w.tolist() == [100, 210, 1420, 2500, 0]
    # the job without a series, counted
    assert series_fallback_rows(r, series).tolist() == [1]
    s = run_summary(r)
    assert "power_series_period" not in s and "power_series_fallback_jobs" not in s
    r.power_series = series
    s = run_summary(r)
    assert s["power_series_period"] == 20 and s["power_series_fallback_jobs"] == 1
    table = r.platform_power_table()
    assert table.column_names == ["time", "watts"]
    assert table["watts"].to_pylist() == [100, 207, 310, 1420, 2500, 0]


def test_window_metrics_from_the_sampled_series():
    # The hand run under a 2,000 W cap on [50, 90): the sampled series holds 310 W on
    # [50, 60), 1,420 on [60, 80), 2,500 on [80, 90): 40 s inside; energy 3,100 + 28,400
    # + 25,000 = 56,500 J -> mean share 56,500 / (2,000 x 40) = 0.70625; above the cap
    # 10 of 40 s = 0.25; excess (2,500 - 2,000) / 2,000 = 0.25; under-use
    # (1,690 / 2,000 x 10 + 580 / 2,000 x 20) / 40 = 0.35625; started inside: C of 4.
    r, series = hand_run()
    r.cap = PowerCap.window(2000.0, 50, 90)
    r.power_series = series
    s = run_summary(r)
    assert s["cap_mean_share"] == pytest.approx(0.70625)
    assert s["cap_time_above_share"] == pytest.approx(0.25)
    assert s["cap_max_excess"] == pytest.approx(0.25)
    assert s["cap_mean_underuse"] == pytest.approx(0.35625)
    assert s["window_start_share"] == pytest.approx(0.25)
    # energy and mean power stay exact, from the mean step function
    times, watts = platform_power(r)
    energy = float((watts[:-1] * np.diff(times)).sum())
    assert s["energy_j"] == pytest.approx(energy)
    r.power_series = None
    assert run_summary(r)["energy_j"] == s["energy_j"]


def test_peaks_break_the_cap_that_the_means_do_not():
    # A and B on [0, 200); A alternates 400 / 800 W every 20 s (mean 600), B holds 300 W.
    # Means: 900 W all along, under the 1,000 W cap: no time above, no excess, under-use
    # 0.1. Sampled: 700 and 1,100 W in turn: half the time above, excess 0.1, under-use
    # (0.3 x 100 s) / 200 s = 0.15; the mean share is 0.9 either way.
    jobs = _with_power(JobTable.from_arrays(submit=[0, 0], run=[200, 200], units=[1, 1]),
                       [600, 300])
    r = Simulation(Platform.pooled(2), jobs, FIFO(), cap=PowerCap.window(1000.0, 0, None)).run()
    offsets = list(range(0, 200, 20))
    series = _series({1: (offsets, [400, 800] * 5), 2: (offsets, [300] * 10)})
    mean_based = run_summary(r)
    assert mean_based["cap_time_above_share"] == 0.0 and mean_based["cap_max_excess"] == 0.0
    assert mean_based["cap_mean_underuse"] == pytest.approx(0.1)
    r.power_series = series
    sampled = run_summary(r)
    assert sampled["cap_time_above_share"] == pytest.approx(0.5)
    assert sampled["cap_max_excess"] == pytest.approx(0.1)
    assert sampled["cap_mean_underuse"] == pytest.approx(0.15)
    assert mean_based["cap_mean_share"] == pytest.approx(0.9)
    assert sampled["cap_mean_share"] == pytest.approx(0.9)


def _random_run(period: int, seed: int = 3, cap: float | None = None):
    rng = np.random.default_rng(seed)
    n = 80
    jobs = JobTable.from_arrays(submit=np.sort(rng.integers(0, 300, n)) * period,
                                run=rng.integers(0, 30, n) * period,
                                units=rng.integers(1, 5, n))
    jobs = _with_power(jobs, rng.uniform(50, 500, n))
    plat = Platform.pooled(8)
    r = Simulation(plat, jobs, EASY(), cap=None if cap is None else
                   PowerCap.window(cap, 40 * period, 200 * period)).run()
    return r


def _constant_series(r, period: int) -> dict[str, np.ndarray]:
    # every job's series constant at its mean, sampled at 0, period, ... up to its run
    run = np.asarray(r.jobs["run"])
    counts = run // period + 1
    ids = np.repeat(np.asarray(r.jobs["job_id"]), counts)
    off = np.concatenate([np.arange(c) * period for c in counts]).astype(np.float64)
    watts = np.repeat(np.asarray(r.jobs["power_mean"]), counts)
    return {"job_id": ids, "offset": off, "watts": watts}


@pytest.mark.parametrize("period", [20, 7])
def test_constant_series_sample_the_step_function(period):
    # with run times and submits on the grid every change of the step function falls on
    # a grid point: the sampled series is the step function read at the grid points, and
    # the window metrics are the same
    r = _random_run(period, cap=1500.0)
    series = _constant_series(r, period)
    times, watts = platform_power(r)
    grid, sampled = sampled_platform_power(r, series, period)
    k = np.searchsorted(times, grid, side="right") - 1
    expected = np.where(k >= 0, watts[np.maximum(k, 0)], 0.0)
    np.testing.assert_allclose(sampled, expected, rtol=1e-12, atol=1e-9)
    assert sampled[-1] == 0.0 and grid[-1] >= times[-1]
    mean_based = run_summary(r)
    r.power_series, r.power_period = series, period
    with_series = run_summary(r)
    for key in ("cap_mean_share", "cap_time_above_share", "cap_max_excess",
                "cap_mean_underuse", "window_start_share", "energy_j", "mean_power_w"):
        assert with_series[key] == pytest.approx(mean_based[key], rel=1e-9, abs=1e-12), key
    assert with_series["power_series_fallback_jobs"] == 0


def test_constant_series_off_the_grid_still_read_the_step_function():
    # starts and ends anywhere: the grid values are still the step function at the grid
    # points (a job running at t contributes its mean)
    rng = np.random.default_rng(5)
    n = 60
    jobs = _with_power(JobTable.from_arrays(submit=np.sort(rng.integers(0, 5000, n)),
                                            run=rng.integers(0, 700, n),
                                            units=rng.integers(1, 5, n)),
                       rng.uniform(10, 900, n))
    r = Simulation(Platform.pooled(6), jobs, EASY()).run()
    series = _constant_series(r, 20)
    times, watts = platform_power(r)
    grid, sampled = sampled_platform_power(r, series, 20)
    assert grid[0] % 20 == 0 and np.all(np.diff(grid) == 20)
    k = np.searchsorted(times, grid, side="right") - 1
    np.testing.assert_allclose(sampled, np.where(k >= 0, watts[np.maximum(k, 0)], 0.0),
                               rtol=1e-12, atol=1e-9)
    # a job whose series is missing falls back to its mean: same values
    drop = series["job_id"] != r.jobs["job_id"][0]
    partial = {c: v[drop] for c, v in series.items()}
    np.testing.assert_allclose(sampled_platform_power(r, partial, 20)[1], sampled)
    assert series_fallback_rows(r, partial).tolist() == [0]


def test_power_levels_scale_the_samples():
    # A [0, 100) at level 0.5 from t = 20, samples 300 W (offset 0) and 600 W (40);
    # B [50, 150) constant 200 W. Grid values:
    #   0: 300;  20: 300 x 0.5 = 150;  40: 600 x 0.5 = 300;  60, 80: 300 + 200 = 500;
    #   100, 120, 140: 200;  160: 0
    from dispatchlab.dispatch import SetPower

    class Halve(FIFO):
        def dispatch(self, view):
            if view.now == 0:
                view.wake_at(20)
            out = super().dispatch(view)
            return [*out, SetPower(0, 0.5)] if view.now == 20 else out

    jobs = _with_power(JobTable.from_arrays(submit=[0, 50], run=[100, 100], units=[1, 1]),
                       [450, 200])
    r = Simulation(Platform.pooled(4), jobs, Halve()).run()
    assert r.segments is not None
    series = _series({1: ([0, 40], [300, 600]), 2: ([0, 60], [200, 200])})
    times, watts = sampled_platform_power(r, series, 20)
    assert times.tolist() == list(range(0, 180, 20))
    assert watts.tolist() == [300, 150, 300, 500, 500, 200, 200, 200, 0]
    # the fallback is scaled too: without A's series, 450 x 0.5 = 225 from t = 20
    _, w = sampled_platform_power(r, _series({2: ([0], [200])}), 20)
    assert w.tolist() == [450, 225, 225, 425, 425, 200, 200, 200, 0]


def test_sampling_needs_a_sorted_series_and_a_whole_period():
    r, series = hand_run()
    with pytest.raises(ValueError, match="sorted"):
        sampled_platform_power(r, {c: v[::-1] for c, v in series.items()}, 20)
    with pytest.raises(ValueError, match="whole number"):
        sampled_platform_power(r, series, 2.5)
    with pytest.raises(ValueError, match="whole number"):
        sampled_platform_power(r, series, 0)
    # nothing started: empty
    jobs = _with_power(JobTable.from_arrays(submit=[0], run=[10], units=[9]), [5])
    none = Simulation(Platform.pooled(2), jobs, FIFO()).run()
    t, w = sampled_platform_power(none, series, 20)
    assert t.size == 0 and w.size == 0


@pytest.mark.parametrize("scale", [1, 2**56])
def test_the_sample_lookup_against_brute_force(scale):
    # the last entry of the query's group with key <= the query's key (ties: the later
    # entry), -1 when none; scale 2**56 takes the merge-sort path (keys too wide to pack)
    from dispatchlab.power.accounting import _last_at_or_before

    rng = np.random.default_rng(scale % 97)
    eg = np.sort(rng.integers(0, 12, 300))
    ek = rng.integers(-5, 40, 300) * scale
    order = np.lexsort((ek, eg))
    eg, ek = eg[order], ek[order]
    qg, qk = rng.integers(-1, 14, 500), rng.integers(-10, 50, 500) * scale
    got = _last_at_or_before(eg, ek, qg, qk)
    want = [max((i for i in range(300) if eg[i] == g and ek[i] <= k), default=-1)
            for g, k in zip(qg.tolist(), qk.tolist(), strict=True)]
    assert got.tolist() == want


def test_match_power_series_skips_unknown_ids_and_sorts():
    r, series = hand_run()
    extra = {"job_id": np.r_[series["job_id"], 99, 99, 98][::-1],
             "offset": np.r_[series["offset"], 0, 20, 0][::-1],
             "watts": np.r_[series["watts"], 1, 2, 3][::-1]}
    kept, report = match_power_series(r.jobs, extra, source="s.csv")
    for c in ("job_id", "offset", "watts"):
        np.testing.assert_array_equal(kept[c], series[c])
    assert (report.samples, report.jobs, report.matched, report.unknown_ids,
            report.unknown_samples, report.median_step) == (13, 4, 3, 2, 3, 20.0)
    assert "2 job ids (3 samples) not in the trace" in report.describe()
    with pytest.raises(InputError, match="none of the 2 job ids") as err:
        match_power_series(r.jobs, _series({98: ([0], [1]), 99: ([0], [1])}), "s.csv")
    assert err.value.file == "s.csv" and err.value.field == "job_id"
    with pytest.raises(InputError, match="two samples at offset 20 s"):
        match_power_series(r.jobs, {"job_id": np.array([1, 1]), "offset": np.array([20., 20]),
                                    "watts": np.array([1., 2])})
    with pytest.raises(InputError, match="negative"):
        match_power_series(r.jobs, _series({1: ([0], [-1])}))
    with pytest.raises(InputError, match="no samples"):
        match_power_series(r.jobs, _series({}))


def test_sample_offsets_beyond_the_engine_limit(tmp_path):
    # the engine's limit is exclusive (sim.limits): an offset of exactly 2**42 s is out,
    # in a series given as arrays and in a file
    from dispatchlab.core.limits import TIME_LIMIT
    from dispatchlab.power.data import read_power_series

    r, _ = hand_run()
    far = {"job_id": np.array([1, 1]), "offset": np.array([0.0, float(TIME_LIMIT)]),
           "watts": np.array([1.0, 2.0])}
    with pytest.raises(InputError, match=r"offset 4,398,046,511,104 s is beyond the engine's "
                                         r"time limit .*\(job 1\)") as err:
        match_power_series(r.jobs, far, source="s.csv")
    assert err.value.field == "offset"
    path = tmp_path / "s.csv"
    path.write_text(f"job_id,offset,watts\n1,0,1.0\n1,{TIME_LIMIT},2.0\n")
    with pytest.raises(InputError, match=r"s\.csv:3: field offset: offset 4,398,046,511,104 s "
                                         r"is beyond the engine's time limit"):
        read_power_series(path)
    path.write_text(f"job_id,offset,watts\n1,0,1.0\n1,{TIME_LIMIT - 1},2.0\n")
    assert read_power_series(path)["offset"].tolist() == [0.0, float(TIME_LIMIT - 1)]


# --------------------------------------------------------------------------------------
# the CLI
# --------------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dispatchlab.cli", *args],
                          capture_output=True, text=True)


@pytest.fixture()
def files(tmp_path):
    rng = np.random.default_rng(1)
    n = 40
    jobs = JobTable.from_arrays(submit=np.sort(rng.integers(0, 3000, n)),
                                run=rng.integers(10, 600, n), units=rng.integers(1, 9, n),
                                user=rng.integers(0, 5, n),
                                info=TraceInfo(max_procs=16, header={"MaxProcs": "16"},
                                               header_lines=("; MaxProcs: 16",)))
    trace = tmp_path / "t.swf"
    write_swf(jobs, trace)
    from dispatchlab.power.synth import synthesize_power

    cols, series = synthesize_power(jobs, Platform.pooled(16), seed=2, series=True)
    assert series is not None
    power = tmp_path / "p.parquet"
    write_power(power, jobs, cols)
    ser = tmp_path / "s.parquet"
    write_power_series(ser, series)
    return trace, power, ser, series


def test_simulate_with_power_series_writes_the_sampled_power(files, tmp_path):
    trace, power, ser, _ = files
    out = tmp_path / "run"
    done = _cli("simulate", str(trace), "--power", str(power), "--power-series", str(ser),
                "--cap", "20kW", "--cap-window", "500:2500", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "note: power series from" in done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["power_series_period"] == 20
    assert summary["power_series_fallback_jobs"] == 0
    assert summary["cap_time_above_share"] is not None
    import pyarrow.parquet as pq

    table = pq.read_table(out / "platform_power.parquet")
    assert table.column_names == ["time", "watts"]
    times = table["time"].to_numpy()
    assert np.all(np.diff(times) == 20) and times[0] % 20 == 0
    assert table["watts"].to_numpy()[-1] == 0 and table["watts"].to_numpy().max() > 0
    # the same run without the series: no extra file, no extra keys
    plain = tmp_path / "plain"
    done = _cli("simulate", str(trace), "--power", str(power), "--cap", "20kW",
                "--cap-window", "500:2500", "--out", str(plain))
    assert done.returncode == 0, done.stderr
    assert not (plain / "platform_power.parquet").exists()
    base = json.loads((plain / "summary.json").read_text())
    assert "power_series_period" not in base
    assert base["energy_j"] == summary["energy_j"]


@pytest.mark.parametrize("content, message", [
    ("job_id,offset,watts\n9001,0,5\n9002,20,5\n", "none of the 2 job ids"),
    ("job_id,offset,watts\n1,0,-5\n", "negative: -5.0 W"),
    ("job_id,offset\n1,0\n", "missing column watts"),
    ("job_id,offset,watts\n1,20,5\n1,0,6\n1,20,7\n", "two samples at offset 20 s"),
    ("job_id,offset,watts\n1,x,5\n", "not a number"),
    (None, "needs --power"),
])
def test_bad_power_series_is_one_error_line(files, tmp_path, content, message):
    trace, power, _, _ = files
    bad = tmp_path / "bad.csv"
    args = ["simulate", str(trace), "--power-series", str(bad)]
    if content is None:
        bad.write_text("job_id,offset,watts\n1,0,5\n")
    else:
        bad.write_text(content)
        args += ["--power", str(power)]
    done = _cli(*args)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [x for x in done.stderr.splitlines()
             if x.strip() and not x.startswith(("note:", "warning:"))]
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], lines
    if content is not None:
        assert str(bad) in lines[0]


@pytest.mark.parametrize("inherited_w, above, own, excess, excess_own", [
    # J0 runs [0, 300), J1 [150, 450) (FIFO ignores the cap); cap 1,000 W on [100, 400)
    # ([300, 400): J1's 500 W alone, within):
    # J0 at 1,200 W: [100, 150) 1,200 and [150, 300) 1,700 are above, both while the
    # inherited J0 alone is above -> nothing "own"; largest excess 0.7
    (1200.0, 200 / 300, 0.0, 0.7, 0.0),
    # J0 at 800 W: [100, 150) 800 within; [150, 300) 1,300 above while J0 alone is
    # within -> own: 150 s of 300, excess 0.3 both ways
    (800.0, 150 / 300, 150 / 300, 0.3, 0.3),
])
@pytest.mark.parametrize("sampled", [False, True])
def test_own_excess_leaves_out_what_the_inherited_jobs_cause(inherited_w, above, own,
                                                             excess, excess_own, sampled):
    jobs = JobTable.from_arrays(submit=[0, 150], run=[300, 300], units=[1, 1])
    jobs = _with_power(jobs, [inherited_w, 500.0])
    r = Simulation(Platform.pooled(2), jobs, FIFO(), cap=PowerCap.window(1000, 100, 400)).run()
    assert r.start.tolist() == [0, 150]
    if sampled:  # constant series at the means, on a 50-s grid: the same pieces
        r.power_series = _series({1: ([0], [inherited_w]), 2: ([0], [500.0])})
        r.power_period = 50
    s = run_summary(r)
    assert s["cap_time_above_share"] == pytest.approx(above)
    assert s["cap_time_above_own_share"] == pytest.approx(own)
    assert s["cap_max_excess"] == pytest.approx(excess)
    assert s["cap_max_excess_own"] == pytest.approx(excess_own)
