"""The summary's values do not depend on how it is computed: :func:`summarize` on
seeded random workloads gives the JSON it gave before the summary was made faster (the
hashes below were taken with the plain computation: every metric masked per block, the
series, job columns and steady state each from the full columns), and its parts equal
the plain functions bit for bit: :func:`~dispatchlab.metrics.jobs.class_blocks`
:func:`describe` of each metric masked by class, :func:`~dispatchlab.metrics.jobs.slowdowns`
:func:`slowdown` and :func:`bounded_slowdown`."""

from __future__ import annotations

import hashlib
import json
import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.metrics import Measure
from dispatchlab.metrics.jobs import (
    JOB_CLASS_LABELS,
    METRIC_KEYS,
    bounded_slowdown,
    class_blocks,
    describe,
    job_columns,
    slowdown,
    slowdowns,
)
from dispatchlab.metrics.summary import summarize


def workload(seed: int, n: int):
    """``n`` jobs of every class (runs of exactly 3600 and 43200 s among them), 40 %
    without a wait, 5 % killed and 3 % rejected, on cores, memory and a few GPUs."""
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.integers(0, 10**7, n))
    wait = np.where(rng.random(n) < 0.4, 0, rng.integers(0, 10**5, n))
    kind = rng.integers(0, 4, n)
    run = np.select([kind == 0, kind == 1, kind == 2],
                    [rng.integers(0, 3600, n), rng.integers(3600, 43201, n),
                     rng.choice([0, 3599, 3600, 43200, 43201], n)],
                    rng.integers(43201, 500000, n))
    start = submit + wait
    end = start + run
    status = np.where(rng.random(n) < 0.05, 1, 0)
    rejected = rng.random(n) < 0.03
    status[rejected] = 2
    start[rejected] = -1
    end[rejected] = -1
    units = rng.integers(1, 65, n)
    resources = {"core": np.ones(n, np.int64), "mem": rng.integers(0, 4000, n),
                 "gpu": np.where(rng.random(n) < 0.1, 1, 0)}
    return submit, start, end, status.astype(np.int8), units, resources, rng


CASES = {
    "all": {},
    "time": {"measure": Measure.by_time(2 * 10**6, 8 * 10**6)},
    "index": {"measure": Measure.by_index(100, None), "tau": 60.0},
    "hot": {"hot": True},
    "hot_index": {"hot": True, "measure": Measure.by_index(50, 3000)},
    "power": {"unstretched": True},
    "idle": {"cores": 10**6},  # never half busy: no steady window
}


def summary(seed: int, n: int, case: str) -> dict:
    sub, sta, en, st_, units, res, rng = workload(seed, n)
    opts = dict(CASES[case])
    hot = (rng.random(n) < 0.1).astype(np.int64) if opts.pop("hot", False) else None
    unstretched = None
    if opts.pop("unstretched", False):
        unstretched = np.where(st_ == 2, 0,
                               np.maximum(en - sta - rng.integers(0, 100, n), 0))
    capacity = {"core": opts.pop("cores", 2048), "mem": 64 * 4000 * 10, "gpu": 16,
                "fpga": 2}
    return summarize(sub, sta, en, st_, units, res, capacity,
                     decision_times=rng.random(500) * 1e-3,
                     dispatcher_facts={"finished": 1}, unstretched_run=unstretched,
                     hot_start=hot, **opts)


#: sha256 (first 16 hex digits) of ``json.dumps(summary, sort_keys=True)`` of each case
#: (seed 1: 5,000 jobs, seed 2: 40,000 jobs), from the computation before the fast one.
GOLDEN = {
    ("all", 1): "fd4c0661296dc733", ("all", 2): "bc744331bd0aa9b1",
    ("time", 1): "1bc93cb1993e0464", ("time", 2): "dfcab0f7b4c436c9",
    ("index", 1): "82de0d174f4b364c", ("index", 2): "28a8bd0843237d31",
    ("hot", 1): "37a6315146046a2f", ("hot", 2): "add50db208ac06bb",
    ("hot_index", 1): "def45ac464533c4d", ("hot_index", 2): "65885b7a95f91ed7",
    ("power", 1): "441f528a35661cd5", ("power", 2): "1020db7f8849d11b",
    ("idle", 1): "f7a2b130049aa252", ("idle", 2): "6fbee2187f0bd322",
}


@pytest.mark.parametrize("case, seed", sorted(GOLDEN))
def test_the_summary_is_the_one_of_the_plain_computation(case: str, seed: int) -> None:
    s = summary(seed, {1: 5000, 2: 40000}[seed], case)
    assert s["steady_fallback"] is (case == "idle")
    digest = hashlib.sha256(json.dumps(s, sort_keys=True).encode()).hexdigest()
    assert digest[:16] == GOLDEN[case, seed]


def _bits(v: object) -> object:
    """A float as its bits (NaN equal to NaN, 0.0 apart from -0.0), anything else as is."""
    return struct.pack("<d", v) if isinstance(v, float) else v


def _reference_block(cols: dict, rows: np.ndarray) -> dict:
    out = {"jobs": int(np.count_nonzero(rows))}
    for name, key in METRIC_KEYS.items():
        d = describe(cols[name][rows])
        for stat in ("mean", "median", "p95", "max"):
            out[f"{stat}_{key}"] = d[stat]
    return out


RUNS = st.one_of(st.integers(0, 100), st.sampled_from([3599, 3600, 3601, 43199, 43200,
                                                       43201]),
                 st.integers(0, 2 * 10**5))


@settings(max_examples=300, deadline=None)
@given(jobs=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), RUNS,
                               st.sampled_from([0, 0, 0, 1, 2])), max_size=60),
       tau=st.sampled_from([1.0, 10.0, 333.5]))
def test_class_blocks_are_the_masked_statistics(jobs, tau: float) -> None:
    submit = np.array([j[0] for j in jobs], np.int64)
    start = submit + np.array([j[1] for j in jobs], np.int64)
    end = start + np.array([j[2] for j in jobs], np.int64)
    status = np.array([j[3] for j in jobs], np.int8)
    start[status == 2] = -1
    end[status == 2] = -1
    cols = job_columns(submit, start, end, status, tau=tau)
    rows = status != 2
    whole, classes = class_blocks({name: cols[name][rows] for name in METRIC_KEYS})
    want = _reference_block(cols, rows)
    assert {k: _bits(v) for k, v in whole.items()} == {k: _bits(v) for k, v in want.items()}
    assert list(whole) == list(want)  # the same keys in the same order
    for code, label in enumerate(JOB_CLASS_LABELS):
        want = _reference_block(cols, rows & (cols["job_class"] == code))
        got = classes[label]
        assert {k: _bits(v) for k, v in got.items()} == {k: _bits(v) for k, v in want.items()}
        if want["jobs"] == 0:
            assert all(math.isnan(v) for k, v in got.items() if k != "jobs")


@settings(max_examples=300, deadline=None)
@given(jobs=st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 2**40)), max_size=50),
       tau=st.floats(1e-3, 1e6), as_float=st.booleans())
def test_slowdowns_are_slowdown_and_bounded_slowdown(jobs, tau: float,
                                                     as_float: bool) -> None:
    wait = np.array([j[0] for j in jobs], np.int64)
    run = np.array([j[1] for j in jobs], np.int64)
    if as_float:
        wait, run = wait.astype(np.float64), run.astype(np.float64)
    before = (wait.copy(), run.copy())
    sld, bsld = slowdowns(wait, run, tau)
    assert sld.tobytes() == slowdown(wait, run).tobytes()
    assert bsld.tobytes() == bounded_slowdown(wait, run, tau).tobytes()
    assert wait.tobytes() == before[0].tobytes() and run.tobytes() == before[1].tobytes()
