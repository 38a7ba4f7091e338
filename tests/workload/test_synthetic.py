"""Tests of the seeded synthetic workload generator."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.workload.jobs import ALL_FIELDS, JobTable
from dispatchlab.workload.synthetic import generate_synthetic


def offered_load(table: JobTable, cores: int) -> float:
    submit = table["submit"]
    work = float(np.dot(table["units"].astype(np.float64), table["run"]))
    return work / (cores * float(submit[-1] - submit[0]))


def test_same_seed_same_table() -> None:
    a = generate_synthetic(n_jobs=500, cores=64, seed=11)
    b = generate_synthetic(n_jobs=500, cores=64, seed=11)
    assert a.columns.keys() == b.columns.keys()
    for name in a.columns:
        np.testing.assert_array_equal(a[name], b[name])
        assert a[name].dtype == b[name].dtype
    np.testing.assert_array_equal(a.resources["core"], b.resources["core"])
    assert a.info == b.info
    assert a.info.source == "<synthetic seed=11>"


def test_different_seed_differs() -> None:
    a = generate_synthetic(n_jobs=200, cores=64, seed=1)
    b = generate_synthetic(n_jobs=200, cores=64, seed=2)
    assert not np.array_equal(a["run"], b["run"])
    assert not np.array_equal(a["submit"], b["submit"])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("load", [0.5, 0.9, 1.3])
def test_offered_load_near_target(seed: int, load: float) -> None:
    cores = 256
    table = generate_synthetic(n_jobs=5000, cores=cores, seed=seed, load=load)
    assert offered_load(table, cores) == pytest.approx(load, rel=0.2)


def test_shape_of_the_workload() -> None:
    cores = 100  # not a power of two: power-of-two sizes stop at 64
    t = generate_synthetic(n_jobs=5000, cores=cores, seed=5, start_time=1000)
    n = len(t)
    assert n == 5000 and set(ALL_FIELDS) <= set(t.columns)
    submit, run, units, req = t["submit"], t["run"], t["units"], t["requested_time"]
    assert submit[0] == 1000 and np.all(np.diff(submit) >= 0)
    assert units.min() >= 1 and units.max() <= cores
    assert np.all(t.resources["core"] == 1)
    pow2 = (units & (units - 1)) == 0
    assert 0.6 < pow2.mean() < 0.95
    assert run.min() >= 1 and np.all(req % 60 == 0) and req.max() <= 86_400
    overrun = run > req
    assert 0.005 < overrun.mean() < 0.05
    assert np.all(run[overrun] <= req[overrun] * 1.05 + 1)  # slight overruns only
    assert np.any(run == req)  # some exact estimates
    assert np.median(req[~overrun] / np.maximum(run[~overrun], 1)) > 1.2  # over-estimation
    # a long-tailed mix of short, medium and long jobs
    assert np.mean(run < 3600) > 0.3 and np.any(run > 43_200)
    # columns filled
    assert np.array_equal(t["job_id"], np.arange(1, n + 1))
    assert np.all(t["user"] >= 1) and np.all(t["app"] >= 1) and set(t["queue"]) <= {1, 2, 3}
    assert np.all(t["line"] == 0) and np.array_equal(t["req_procs"], units)
    assert np.array_equal(t["req_time"], req)
    assert t.info.max_procs == cores


def test_users_repeat_profiles() -> None:
    t = generate_synthetic(n_jobs=3000, cores=128, seed=3)
    apps, counts = np.unique(t["app"], return_counts=True)
    repeated = np.isin(t["app"], apps[counts >= 5])
    assert repeated.mean() > 0.5
    # within one app: one user, one size, one requested time, similar run times
    for app in apps[counts >= 5][:20]:
        rows = t["app"] == app
        assert len(np.unique(t["user"][rows])) == 1
        assert len(np.unique(t["units"][rows])) == 1
        assert len(np.unique(t["requested_time"][rows])) == 1
        ran = t["run"][rows][t["run"][rows] <= t["requested_time"][rows]]
        assert ran.max() <= ran.min() / 0.75 + 1
    # a few heavy users
    per_user = np.bincount(t["user"])
    assert per_user.max() > 3 * np.median(per_user[per_user > 0])


def test_single_job_and_single_core() -> None:
    t = generate_synthetic(n_jobs=1, cores=1, seed=0)
    assert len(t) == 1 and t["units"][0] == 1 and t["submit"][0] == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_jobs": 0},
        {"n_jobs": 2.5},
        {"cores": 0},
        {"cores": True},
        {"seed": -1},
        {"load": 0},
        {"load": float("nan")},
        {"load": "high"},
        {"users": 0},
        {"min_run": 0},
        {"min_run": 100, "max_run": 50},
        {"overrun_share": 1.5},
        {"start_time": 1.5},
    ],
)
def test_bad_parameters(kwargs: dict[str, object]) -> None:
    with pytest.raises(InputError):
        generate_synthetic(**kwargs)  # type: ignore[arg-type]
