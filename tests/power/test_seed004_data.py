"""Seed 004's data features: hot start (HS = x %), synthetic Eurora instances and the
``underpredicted`` power predictor (mispredictions)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY, FIFO
from dispatchlab.dispatch.base import Allocation
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power.eurora_synth import (
    EURORA_MODEL,
    MIN_RUN,
    eurora_instance,
    fit_eurora_model,
    write_instance,
)
from dispatchlab.predict.power.predictors import (
    POWER_PREDICTORS,
    RealPowerPredictor,
    Underpredicted,
    make_power_predictor,
)
from dispatchlab.sim.hotstart import add_hot_start, hot_nodes
from dispatchlab.workload.jobs import OPTIONAL_FIELDS

EURORA = eurora_platform()  # nodes 0-31: 16 cores, 2 MICs; 32-63: 16 cores, 2 GPUs
KB_32GIB = 33_554_432
ARCHIVE_NAME = "Eurora-PA-HPC-SIM-testdata.tar.gz"


def eurora_jobs(submit, run, units, core, gpu=None, mic=None, mem=None,
                power: bool = False) -> JobTable:
    n = len(submit)
    z = [0] * n
    jobs = JobTable.from_arrays(submit=submit, run=run, units=units, resources={
        "core": core, "gpu": gpu or z, "mic": mic or z, "mem": mem or z})
    if power:
        jobs.columns["power_mean"] = np.full(n, 100.0)
        jobs.columns["power_max"] = np.full(n, 120.0)
        jobs.columns["power_std"] = np.full(n, 3.0)
    return jobs


# ------------------------------------------------------------------------ hot start
def test_hot_nodes_rule():
    # HS = 50 % of 64 nodes: k = 32; k // 2 = 16 jobs of 600 s on nodes 0-15, 16 of
    # 1200 s on nodes 32-47 (from N // 2 = 32, PA's node-type threshold)
    nodes, runs = hot_nodes(64, 0.5)
    assert nodes.tolist() == list(range(16)) + list(range(32, 48))
    assert runs.tolist() == [600] * 16 + [1200] * 16
    # HS = 70 %: floor(44.8) = 44 nodes (PA truncates): 0-21 and 32-53
    nodes, runs = hot_nodes(64, 0.7)
    assert nodes.tolist() == list(range(22)) + list(range(32, 54))
    # odd count: 5 of 10 nodes -> 2 short (nodes 0, 1), 3 long (nodes 5, 6, 7)
    nodes, runs = hot_nodes(10, 0.5)
    assert nodes.tolist() == [0, 1, 5, 6, 7]
    assert runs.tolist() == [600, 600, 1200, 1200, 1200]
    # 0.29 x 100 = 28.999999999999996 in floating point: counted as 29
    assert len(hot_nodes(100, 0.29)[0]) == 29
    assert len(hot_nodes(64, 1.0)[0]) == 64
    assert sorted(hot_nodes(64, 1.0)[0].tolist()) == list(range(64))
    assert len(hot_nodes(64, 0.0)[0]) == 0


def test_hot_start_table():
    jobs = eurora_jobs([5, 5, 9], [100, 100, 100], [1, 1, 1], [1, 2, 3], power=True)
    jobs.columns["job_id"] = np.array([7, 40, 8])
    table, pinned = add_hot_start(jobs, EURORA, 0.5)
    assert len(table) == 35
    # the 32 dummy jobs come first (same submit time 5 = the first submission)
    assert table["hot_start"].tolist() == [1] * 32 + [0] * 3
    assert table["submit"][:32].tolist() == [5] * 32
    assert table["job_id"].tolist() == [*range(41, 73), 7, 40, 8]  # above max 40
    assert table["run"][:32].tolist() == [600] * 16 + [1200] * 16
    assert np.array_equal(table["requested_time"][:32], table["run"][:32])
    assert table.resources["core"][:32].tolist() == [16] * 32
    assert table.resources["mem"][:32].tolist() == [KB_32GIB // 8] * 32  # 4 GiB in KB
    assert not table.resources["gpu"][:32].any() and not table.resources["mic"][:32].any()
    assert table["units"][:32].tolist() == [1] * 32
    assert table["power_mean"][:32].tolist() == [5.0] * 32
    assert table["power_max"][:32].tolist() == [5.0] * 32
    assert table["power_std"][:32].tolist() == [0.0] * 32
    assert table["power_mean"][32:].tolist() == [100.0] * 3
    assert sorted(pinned) == list(range(32))
    assert [int(pinned[r].nodes[0]) for r in range(32)] == list(range(16)) + list(range(32, 48))
    assert all(pinned[r].counts.tolist() == [1] for r in range(32))
    # the input is untouched
    assert len(jobs) == 3 and "hot_start" not in jobs.columns


def test_hot_start_order_and_at():
    # hot jobs at `at` = 50 sort among the trace's jobs; at equal submit they come first
    jobs = eurora_jobs([0, 50, 60], [10, 10, 10], [1, 1, 1], [1, 1, 1])
    table, pinned = add_hot_start(jobs, EURORA, 2 / 64, at=50)
    assert table["submit"].tolist() == [0, 50, 50, 50, 60]
    assert table["hot_start"].tolist() == [0, 1, 1, 0, 0]
    assert sorted(pinned) == [1, 2]
    assert pinned[1].nodes.tolist() == [0] and pinned[2].nodes.tolist() == [32]
    # no power columns in, none out
    assert "power_mean" not in table.columns


def test_hot_start_engine_hand_computed():
    # HS = 50 %: nodes 0-15 busy until 600, nodes 32-47 until 1200; free at 0: nodes
    # 16-31 and 48-63 = 32 whole nodes.
    # Job A (row after the hot ones): 48 units of a whole node (16 cores): 32 free at 0,
    # 48 at 600 -> starts at 600, ends 700. Job B: 1 core, 100 s: EASY backfills it at 0
    # (ends at 100 < A's shadow 600).
    jobs = eurora_jobs([0, 0], [100, 100], [48, 1], [16, 1])
    table, pinned = add_hot_start(jobs, EURORA, 0.5)
    res = Simulation(EURORA, table, EASY(), pinned=pinned).run()
    hot = np.flatnonzero(table["hot_start"] == 1)
    assert res.start[hot].tolist() == [0] * 32
    assert res.end[hot].tolist() == [600] * 16 + [1200] * 16
    assert [int(res.allocations[r].nodes[0]) for r in hot] == \
        list(range(16)) + list(range(32, 48))
    a, b = 32, 33
    assert (res.start[a], res.end[a]) == (600, 700)
    assert (res.start[b], res.end[b]) == (0, 100)
    # Job C: the whole machine (64 whole nodes) waits for the last dummy job: 1200
    jobs = eurora_jobs([0], [100], [64], [16])
    table, pinned = add_hot_start(jobs, EURORA, 0.5)
    res = Simulation(EURORA, table, FIFO(), pinned=pinned).run()
    assert (res.start[32], res.end[32]) == (1200, 1300)
    # a job needing a GPU node: GPU nodes 48-63 are free at 0 -> starts at 0; one needing
    # 17 GPU nodes (34 GPUs, whole nodes) waits for nodes 32-47 -> 1200
    jobs = eurora_jobs([0, 0], [100, 100], [1, 17], [16, 16], gpu=[2, 2])
    table, pinned = add_hot_start(jobs, EURORA, 0.5)
    res = Simulation(EURORA, table, FIFO(), pinned=pinned).run()
    assert res.start[32:].tolist() == [0, 1200]


def test_hot_start_counting_platform():
    # 4 nodes x 8 cores, core-only: the engine counts cores. HS = 50 % -> 2 dummy jobs of
    # 8 one-core units: 600 s (node 0) and 1200 s (node 2): 16 cores free at 0, 24 at 600.
    platform = Platform.homogeneous(4, 8)
    jobs = JobTable.from_arrays(submit=[0], run=[50], units=[24])
    table, pinned = add_hot_start(jobs, platform, 0.5)
    assert pinned == {0: None, 1: None}
    assert table["units"][:2].tolist() == [8, 8]
    res = Simulation(platform, table, FIFO(), pinned=pinned).run()
    assert res.start.tolist() == [0, 0, 600]
    assert res.end.tolist() == [600, 1200, 650]


def test_hot_start_column_is_optional_and_persists(tmp_path: Path):
    assert OPTIONAL_FIELDS["hot_start"] == "int"
    from dispatchlab.workload.tables import read_parquet, write_parquet

    jobs = eurora_jobs([0, 3], [10, 10], [1, 1], [1, 1], power=True)
    table, _ = add_hot_start(jobs, EURORA, 0.25)
    path = tmp_path / "hs.parquet"
    write_parquet(table, path)
    back = read_parquet(path)
    assert back["hot_start"].dtype == np.int64
    assert back["hot_start"].tolist() == table["hot_start"].tolist()
    sub = table.take(np.array([0, len(table) - 1]))
    assert sub["hot_start"].tolist() == [1, 0]
    # applying twice keeps the first dummy jobs flagged and adds new ids above them
    again, _ = add_hot_start(table, EURORA, 1 / 64)
    assert int(again["hot_start"].sum()) == 16 + 1
    assert again["job_id"].max() == table["job_id"].max() + 1


@pytest.mark.parametrize("share", [-0.1, 1.5, math.nan, math.inf, True, "0.5", None])
def test_hot_start_bad_share(share):
    jobs = eurora_jobs([0], [10], [1], [1])
    with pytest.raises(InputError) as err:
        add_hot_start(jobs, EURORA, share)
    assert err.value.field == "hot_start"


def test_hot_start_bad_platform_and_at():
    jobs = eurora_jobs([0], [10], [1], [1])
    with pytest.raises(InputError, match="pool"):
        add_hot_start(JobTable.from_arrays(submit=[0], run=[1], units=[1]),
                      Platform.pooled(64), 0.5)
    with pytest.raises(InputError) as err:
        add_hot_start(jobs, EURORA, 0.5, at=-1)
    assert err.value.field == "hot_start"


# ---------------------------------------------------------------- synthetic instances
NODE = {"core": 16, "gpu": 2, "mic": 2, "mem": KB_32GIB}


def check_instance(t: JobTable, n: int, window: int) -> None:
    assert len(t) == n
    assert t["job_id"].tolist() == list(range(1, n + 1))
    sub = t["submit"]
    assert sub.min() >= 0 and sub.max() < window
    assert np.all(np.diff(sub) >= 0)
    assert t["run"].min() >= MIN_RUN  # seed 004: no job shorter than a minute
    assert np.all(t["run"] <= t["requested_time"])
    assert np.array_equal(t["requested_time"], t["req_time"])
    res = t.resources
    for r, cap in NODE.items():
        assert res[r].min() >= 0 and res[r].max() <= cap, r
    assert res["core"].min() >= 1
    assert not np.any((res["gpu"] > 0) & (res["mic"] > 0))  # no node has both
    units = t["units"]
    assert units.min() >= 1 and units.max() <= 64
    assert np.all(units * res["gpu"] <= 64) and np.all(units * res["mic"] <= 64)
    p = t["power_mean"]
    assert np.array_equal(p, t["power_max"]) and not t["power_std"].any()
    assert np.all(p >= units) and np.all(p <= 400 * units)  # 1..400 W per node
    assert set(np.unique(t["app"]).tolist()) <= {0, 1, 2}
    assert t.info.codes["queue"] == [q.name for q in EURORA_MODEL.queues]


@pytest.mark.parametrize("arrival", ["uniform", "left-skewed", "burst"])
def test_instance_shapes_and_determinism(arrival):
    a = eurora_instance(400, 300, arrival, seed=11)
    check_instance(a, 400, 300)
    b = eurora_instance(400, 300, arrival, seed=11)
    for name in a.columns:
        assert np.array_equal(a[name], b[name]), name
    for name in a.resources:
        assert np.array_equal(a.resources[name], b.resources[name])
    c = eurora_instance(400, 300, arrival, seed=12)
    assert not np.array_equal(a["run"], c["run"])


def test_burst_arrivals_are_grouped():
    t = eurora_instance(400, 300, "burst", seed=3, burst_size=50)
    counts = np.unique(t["submit"], return_counts=True)[1]
    # 8 bursts of 50 jobs, each at its own second
    assert counts.tolist() == [50] * 8
    # default: 10 bursts of 200 / 10 = 20 jobs
    t = eurora_instance(200, 300, "burst", seed=4)
    counts = np.unique(t["submit"], return_counts=True)[1]
    assert counts.tolist() == [20] * 10
    # an uneven last burst: 45 jobs in bursts of 20 -> 20, 20, 5 (in some time order)
    t = eurora_instance(45, 3600, "burst", seed=5, burst_size=20)
    counts = np.unique(t["submit"], return_counts=True)[1]
    assert sorted(counts.tolist()) == [5, 20, 20]


@pytest.mark.parametrize("n, window, bursts", [
    (200, 300, None), (400, 300, None), (45, 3600, None), (400, 300, 10), (7, 300, 3),
    (400, 12, 12), (5, 300, 10), (1, 1, 4), (100, 3, 3), (30, 20, 20), (1000, 900, 64)])
def test_the_configured_groups_are_produced(n, window, bursts):
    # G = min(bursts, n) groups at G distinct seconds, sizes as even as possible
    groups = min(n, 10 if bursts is None else bursts)
    for seed in range(12):
        t = eurora_instance(n, window, "burst", seed=seed, bursts=bursts)
        times, counts = np.unique(t["submit"], return_counts=True)
        assert len(times) == groups, seed
        assert times.min() >= 0 and times.max() < window
        assert counts.sum() == n and counts.max() - counts.min() <= 1
        assert sorted(counts.tolist()) == sorted([n // groups + (g < n % groups)
                                                  for g in range(groups)])


def test_more_groups_than_seconds_share_seconds():
    # 8 groups in a 5-second window: every group still arrives at one second
    t = eurora_instance(80, 5, "burst", seed=1, bursts=8)
    times, counts = np.unique(t["submit"], return_counts=True)
    assert len(times) <= 5 and all(c % 10 == 0 for c in counts.tolist())


def test_group_seconds_are_uniform_and_distinct():
    # 3 groups in a 6-second window, 3,000 instances: each second is taken by one group
    # in half of them (3 / 6), and no second by two groups
    hits = np.zeros(6)
    for seed in range(3000):
        times = np.unique(eurora_instance(3, 6, "burst", seed=seed, bursts=3)["submit"])
        assert len(times) == 3
        hits[times] += 1
    assert np.all(np.abs(hits / 3000 - 0.5) < 0.04)


def test_left_skew_median_below_uniform():
    # Beta(1, 3) median = 1 - 2 ** (-1/3) = 0.2063 of the window vs 0.5 for uniform
    window = 7200
    uni = eurora_instance(2000, window, "uniform", seed=1)
    left = eurora_instance(2000, window, "left-skewed", seed=1)
    assert np.median(left["submit"]) < np.median(uni["submit"])
    assert np.median(left["submit"]) == pytest.approx(0.2063 * window, rel=0.1)
    assert np.median(uni["submit"]) == pytest.approx(0.5 * window, rel=0.1)


def test_instance_model_shares():
    # 20,000 jobs follow the frozen queue shares within 1.5 percentage points
    t = eurora_instance(20_000, 3600, seed=2)
    share = np.bincount(t["queue"], minlength=len(EURORA_MODEL.queues)) / len(t)
    for k, q in enumerate(EURORA_MODEL.queues):
        assert share[k] == pytest.approx(q.share, abs=0.015), q.name
    debug = t["queue"] == [q.name for q in EURORA_MODEL.queues].index("debug")
    assert set(t["requested_time"][debug].tolist()) <= {1800, 600}


def test_instance_runs_on_eurora():
    t = eurora_instance(150, 600, "burst", seed=7)
    res = Simulation(EURORA, t, EASY()).run()
    assert not res.reject_reason
    assert np.all(res.start >= t["submit"])


def test_instance_from_source():
    # a tiny Eurora-like source: every generated job must use one of its size classes,
    # wall-times and queues; the 30-s job is ignored (shorter than a minute)
    src = eurora_jobs([0, 1, 2, 3], [600, 1200, 30, 3600], [1, 2, 1, 1], [8, 16, 4, 1],
                      gpu=[0, 2, 0, 0], mem=[1024, 2048, 4096, 512])
    src.columns["requested_time"] = np.array([1800, 3600, 1800, 7200])
    src.columns["queue"] = np.array([0, 1, 0, 1])
    src.columns["app"] = np.array([1, 2, 0, 0])
    src.info.codes = {"queue": ["debug", "parallel"]}
    model = fit_eurora_model(src)
    assert sorted(q.name for q in model.queues) == ["debug", "parallel"]
    t = eurora_instance(300, 1000, seed=9, source=src)
    sizes = {tuple(r) for r in np.stack([t["units"], t.resources["core"],
                                         t.resources["gpu"], t.resources["mic"],
                                         t.resources["mem"]], axis=1).tolist()}
    assert sizes <= {(1, 8, 0, 0, 1024), (2, 16, 2, 0, 2048), (1, 1, 0, 0, 512)}
    assert set(t["requested_time"].tolist()) <= {1800, 3600, 7200}
    assert t["run"].min() >= 60 and np.all(t["run"] <= t["requested_time"])
    assert t.info.codes["queue"] == [q.name for q in model.queues]


def test_instance_power_model():
    # without noise the power is PA's dummy model: 40 W x units + 62 W x GPUs + 115 W x
    # MICs, per node rounded up, capped at 400 W per node
    t = eurora_instance(500, 600, seed=4, power_noise=0.0)
    u, g, m = t["units"], t.resources["gpu"], t.resources["mic"]
    per_node = np.minimum(np.ceil((40.0 * u + 62.0 * u * g + 115.0 * u * m) / u), 400)
    assert np.array_equal(t["power_mean"], per_node * u)


def test_write_instance(tmp_path: Path):
    from dispatchlab.workload.swf import read_swf
    from dispatchlab.workload.tables import read_parquet

    t = eurora_instance(50, 300, seed=1)
    write_instance(t, tmp_path / "i.parquet")
    back = read_parquet(tmp_path / "i.parquet")
    assert np.array_equal(back["power_mean"], t["power_mean"])
    assert np.array_equal(back.resources["gpu"], t.resources["gpu"])
    write_instance(t, tmp_path / "i.swf.gz")
    write_instance(t, tmp_path / "j.swf.gz")
    assert (tmp_path / "i.swf.gz").read_bytes() == (tmp_path / "j.swf.gz").read_bytes()
    swf = read_swf(tmp_path / "i.swf.gz")
    assert np.array_equal(swf["submit"], t["submit"]) and np.array_equal(swf["run"], t["run"])
    with pytest.raises(InputError):
        write_instance(t, tmp_path / "i.txt")


@pytest.mark.parametrize("kwargs, field", [
    ({"n_jobs": 0}, "n_jobs"), ({"window_s": 0}, "window_s"), ({"seed": -1}, "seed"),
    ({"arrival": "poisson"}, "arrival"), ({"burst_size": 10}, "burst_size"),
    ({"arrival": "burst", "burst_size": 0}, "burst_size"),
    ({"bursts": 10}, "bursts"), ({"arrival": "burst", "bursts": 0}, "bursts"),
    ({"arrival": "burst", "bursts": 2.5}, "bursts"),
    ({"arrival": "burst", "bursts": 5, "burst_size": 5}, "bursts"),
    ({"power_noise": -1.0}, "power_noise"),
])
def test_instance_bad_arguments(kwargs, field):
    args = {"n_jobs": 10, "window_s": 300, **kwargs}
    with pytest.raises(InputError) as err:
        eurora_instance(**args)
    assert err.value.field == field


def _unique_archive_jobs(archive: Path) -> JobTable:
    """Every job id of the archive's historical instances once (first occurrence), with
    queue codes over one name table."""
    from dispatchlab.workload.eurora import read_eurora_archive

    names: list[str] = []
    seen: set[int] = set()
    parts = []
    for t in read_eurora_archive(archive).values():
        ids = np.asarray(t["job_id"]).tolist()
        keep = np.array([j not in seen for j in ids])
        seen.update(ids)
        if not keep.any():
            continue
        sub = t.take(np.flatnonzero(keep))
        qn = t.info.codes["queue"]
        for q in np.asarray(sub["queue"]).tolist():
            if qn[q] not in names:
                names.append(qn[q])
        sub.columns["queue"] = np.array([names.index(qn[q]) for q in sub["queue"].tolist()])
        parts.append(sub)

    def cat(get) -> np.ndarray:
        return np.concatenate([np.asarray(get(p)) for p in parts])

    jobs = JobTable.from_arrays(
        submit=np.zeros(sum(len(p) for p in parts), np.int64), run=cat(lambda p: p["run"]),
        units=cat(lambda p: p["units"]),
        requested_time=cat(lambda p: p["requested_time"]),
        resources={r: cat(lambda p, r=r: p.resources[r]) for r in ("core", "gpu", "mic", "mem")},
        app=cat(lambda p: p["app"]), queue=cat(lambda p: p["queue"]))
    jobs.info.codes = {"queue": names}
    return jobs


def test_frozen_model_rederived(traces_dir: Path):
    archive = traces_dir / ARCHIVE_NAME
    if not archive.is_file():
        pytest.skip(f"{ARCHIVE_NAME} not found")
    jobs = _unique_archive_jobs(archive)
    assert len(jobs) == 5930 and int((jobs["run"] >= 60).sum()) == 4964
    assert fit_eurora_model(jobs, min_share=0.01, digits=4) == EURORA_MODEL


# ----------------------------------------------------------- underpredicted (3.6)
def power_table(n: int) -> JobTable:
    jobs = JobTable.from_arrays(submit=np.arange(n), run=np.full(n, 10), units=np.ones(n))
    rng = np.random.default_rng(0)
    jobs.columns["power_mean"] = rng.uniform(50, 300, n)
    jobs.columns["power_max"] = jobs.columns["power_mean"] * 1.5
    jobs.columns["power_std"] = np.full(n, 8.0)
    return jobs


def test_underpredicted_share_and_values():
    jobs = power_table(10_000)
    plat = Platform.homogeneous(4, 8)
    pred = Underpredicted()  # share 0.1, factor 0.6, seed 0
    pred.start(jobs, plat)
    # binomial(10,000, 0.1): sd 0.3 percentage point; tolerance 1 point
    assert pred.under_.mean() == pytest.approx(0.1, abs=0.01)
    assert np.array_equal(pred.under_rows_, np.flatnonzero(pred.under_))
    real = RealPowerPredictor()
    real.start(jobs, plat)
    for j in range(0, 10_000, 97):
        p, r = pred.predict(j, j), real.predict(j, j)
        f = 0.6 if pred.under_[j] else 1.0
        assert p.mean == pytest.approx(f * r.mean, rel=1e-12)
        assert p.max == pytest.approx(f * r.max, rel=1e-12)
        assert p.std == pytest.approx(f * r.std, rel=1e-12)
    # same seed, same jobs; another seed, other jobs
    again = Underpredicted(seed=0)
    again.start(jobs, plat)
    assert np.array_equal(again.under_, pred.under_)
    other = Underpredicted(seed=1)
    other.start(jobs, plat)
    assert not np.array_equal(other.under_, pred.under_)


def test_underpredicted_exact_small():
    # 3 jobs, share 1: every job at factor 1/1.4 (PA's x1.4): 140 W -> 100 W
    jobs = power_table(3)
    jobs.columns["power_mean"] = np.array([140.0, 70.0, 14.0])
    jobs.columns["power_max"] = np.array([280.0, 70.0, 14.0])
    jobs.columns["power_std"] = np.array([14.0, 0.0, 1.4])
    pred = Underpredicted(share=1.0, factor=1 / 1.4)
    pred.start(jobs, Platform.homogeneous(1, 4))
    assert [pred.predict(j, j).mean for j in range(3)] == pytest.approx([100.0, 50.0, 10.0])
    assert pred.predict(0, 0).max == pytest.approx(200.0)
    assert pred.predict(2, 2).std == pytest.approx(1.0)
    none = Underpredicted(share=0.0)
    none.start(jobs, Platform.homogeneous(1, 4))
    assert not none.under_.any() and none.predict(0, 0).mean == 140.0


def test_underpredicted_registered_and_in_engine():
    assert POWER_PREDICTORS["underpredicted"] is Underpredicted
    pred = make_power_predictor("underpredicted", share=0.5, factor=0.6, seed=3)
    jobs = power_table(40)
    res = Simulation(Platform.homogeneous(4, 8), jobs, FIFO(), power_predictor=pred).run()
    probe = Underpredicted(share=0.5, factor=0.6, seed=3)
    probe.start(jobs, Platform.homogeneous(4, 8))
    expect = np.where(probe.under_, 0.6, 1.0) * jobs["power_mean"]
    assert np.allclose(res.power_prediction["mean"], expect, rtol=1e-12)
    assert 0 < probe.under_.sum() < 40


@pytest.mark.parametrize("kwargs, word", [
    ({"share": -0.1}, "share"), ({"share": 1.1}, "share"), ({"share": math.nan}, "share"),
    ({"factor": 0.0}, "factor"), ({"factor": 1.4}, "factor"), ({"factor": "x"}, "factor"),
    ({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"),
])
def test_underpredicted_bad_parameters(kwargs, word):
    pred = Underpredicted(**kwargs)
    with pytest.raises(InputError, match=word) as err:
        pred.start(power_table(3), Platform.homogeneous(1, 4))
    assert err.value.field == "power-predictor"


def test_allocation_type_of_pinned():
    _, pinned = add_hot_start(eurora_jobs([0], [1], [1], [1]), EURORA, 1 / 64)
    assert isinstance(pinned[0], Allocation)
