"""Queue orderings (dispatchlab.dispatch.orderings): hand-computed orders, exact ratio
ties, job demand, the registry, and properties (permutations, subset-consistency, SJF
equal to EASY-SJBF's stable argsort, exact ratio keys)."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.core.deprecation import MovedWarning
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import l2r, orderings
from dispatchlab.dispatch.orderings import (
    ORDERINGS,
    Ordering,
    OrderKeys,
    SjfOrder,
    UrgencyOrder,
    job_demand,
    make_ordering,
    ratio_key,
)
from dispatchlab.workload.jobs import JobTable


def keys(now, submit, estimate, ewt=None, demand=None, rows=None) -> OrderKeys:
    n = len(submit)
    return OrderKeys(
        rows=np.asarray(rows if rows is not None else range(n), dtype=np.int64),
        now=now,
        submit=np.asarray(submit, dtype=np.int64),
        estimate=np.asarray(estimate, dtype=np.int64),
        ewt=np.asarray(ewt if ewt is not None else [1800] * n, dtype=np.int64),
        demand=np.asarray(demand if demand is not None else [0.0] * n, dtype=np.float64),
    )


def order(name: str, k: OrderKeys) -> list[int]:
    return make_ordering(name).sort(k).tolist()


def test_fifo_is_queue_order() -> None:
    k = keys(100, [0, 5, 5, 9], [50, 10, 1, 0])
    assert order("fifo", k) == [0, 1, 2, 3]


def test_sjf_ascending_estimate_ties_by_queue_order() -> None:
    # estimates 30, 10, 30, 10 -> the two 10 s jobs (positions 1, 3) then the 30 s ones
    # (0, 2), each pair in queue order
    k = keys(0, [0, 0, 0, 0], [30, 10, 30, 10])
    assert order("sjf", k) == [1, 3, 0, 2]


def test_urgency_descending_wait_over_ewt() -> None:
    # now = 100. urgency = (now - submit + 1) / ewt:
    #   job 0: submit 0,  ewt 21600 -> 101/21600 = 0.00468
    #   job 1: submit 50, ewt 3600  ->  51/3600  = 0.01417   (short-EWT queue overtakes)
    #   job 2: submit 90, ewt 1800  ->  11/1800  = 0.00611
    #   job 3: submit 99, ewt 86400 ->   2/86400 = 0.0000231
    k = keys(100, [0, 50, 90, 99], [10, 10, 10, 10], ewt=[21600, 3600, 1800, 86400])
    assert order("urgency", k) == [1, 2, 0, 3]


def test_urgency_exact_ties_go_to_demand_then_submit_then_row() -> None:
    # now = 10. job 0: (10 - 9 + 1) / 3 = 2/3; job 1: (10 - 7 + 1) / 6 = 4/6 = 2/3: a real
    # tie (exact comparison), broken by demand: job 1 (5.0) before job 0 (7.0).
    # job 2: (10 - 5 + 1) / 9 = 6/9 = 2/3 too, demand 5.0 = job 1's: submit 5 < 7 first.
    # job 3: (10 - 10 + 1)/1 = 1: the most urgent.
    k = keys(10, [9, 7, 5, 10], [0, 0, 0, 0], ewt=[3, 6, 9, 1], demand=[7.0, 5.0, 5.0, 1.0])
    assert order("urgency", k) == [3, 2, 1, 0]
    # equal urgency, demand and submit: job row decides (rows given out of order)
    k = keys(10, [4, 4], [0, 0], ewt=[7, 7], demand=[1.0, 1.0], rows=[9, 3])
    assert order("urgency", k) == [1, 0]


def test_ewt_order() -> None:
    # ascending EWT whatever the wait: jobs 1 and 3 (3600) before 0 (21600) before 2
    # (86400); 1 and 3 tie on EWT, demand 2.0 < 4.0 puts 3 first
    k = keys(1000, [0, 900, 0, 950], [10] * 4, ewt=[21600, 3600, 86400, 3600],
             demand=[1.0, 4.0, 0.5, 2.0])
    assert order("ewt", k) == [3, 1, 0, 2]


def test_walltime_order_ties_by_submit_then_row() -> None:
    # estimates 30, 10, 10, 10 with submits 1, 3, 2, 2 and rows 0, 1, 5, 4:
    # the 10 s jobs by submit (2, 2, 3) and the two submitted at 2 by row (4 < 5)
    k = keys(5, [1, 3, 2, 2], [30, 10, 10, 10], rows=[0, 1, 5, 4])
    assert order("walltime", k) == [3, 2, 1, 0]


def test_slowdown_order() -> None:
    # now = 100. slowdown = (wait + est) / est, est 0 -> max(1, wait):
    #   job 0: wait 100, est 100 -> 2
    #   job 1: wait 50, est 10   -> 6
    #   job 2: wait 3, est 0     -> 3
    #   job 3: wait 0, est 0     -> max(1, 0) = 1
    #   job 4: wait 20, est 20   -> 2 = job 0's: demand 1.0 < 3.0 puts job 4 first
    k = keys(100, [0, 50, 97, 100, 80], [100, 10, 0, 0, 20],
             demand=[3.0, 0.0, 0.0, 0.0, 1.0])
    assert order("slowdown", k) == [1, 2, 4, 0, 3]


def test_job_demand_normalised_per_resource() -> None:
    # platform totals: 8 cores, 0 gpus (skipped), 64 mem
    # job 0: 2 units x (1 core, 8 mem), 100 s: 100 x (2/8 + 16/64) = 100 x 0.5 = 50
    # job 1: 1 unit x (4 cores, 0 mem), 30 s: 30 x 4/8 = 15
    # job 2: estimate 0 -> demand 0
    req = np.array([[1, 0, 8], [4, 0, 0], [1, 0, 1]])
    d = job_demand(req, np.array([2, 1, 3]), np.array([100, 30, 0]), np.array([8, 0, 64]))
    assert d.tolist() == [50.0, 15.0, 0.0]
    # counting platform: estimate x units / total cores
    d = job_demand(np.ones((2, 1), dtype=np.int64), np.array([1, 2]), np.array([100, 60]),
                   np.array([2]))
    assert d.tolist() == [50.0, 60.0]


def test_registry_and_errors() -> None:
    assert set(ORDERINGS) == {"fifo", "sjf", "urgency", "ewt", "walltime", "slowdown", "maui",
                              "random", "l2r"}
    for name, cls in ORDERINGS.items():
        made = make_ordering(name)
        assert isinstance(made, cls) and made.name == name
        assert made.clone().get_params() == made.get_params()
        assert made.get_params() == {} or name in {"maui", "random", "l2r"}
    assert isinstance(make_ordering("URGENCY"), UrgencyOrder)
    inst = SjfOrder()
    made = make_ordering(inst)  # a copy: components are never shared between runs
    assert made is not inst and isinstance(made, SjfOrder)
    with pytest.raises(InputError, match="did you mean 'urgency'") as info:
        make_ordering("urgncy")
    assert info.value.field == "order"
    with pytest.raises(InputError, match="choose from"):
        make_ordering("zzz")
    with pytest.raises(InputError):
        make_ordering(3)  # type: ignore[arg-type]


def test_ratio_key_falls_back_to_exact_fractions() -> None:
    # beyond 2**52 the float quotients of 2**60/3 and (2**60 + 1)/3 are equal; the exact
    # fallback still orders them, and keeps 2/4 == 1/2 a tie
    big = 1 << 60
    num = np.array([big + 1, big, 2, 1], dtype=np.int64)
    den = np.array([3, 3, 4, 2], dtype=np.int64)
    key = ratio_key(num, den)
    assert key.dtype == np.int64
    assert key[0] > key[1] > key[2] == key[3]


# ------------------------------------------------------------------ properties
@st.composite
def order_keys(draw, max_n: int = 30) -> OrderKeys:
    n = draw(st.integers(0, max_n))
    now = draw(st.integers(0, 2000))
    submit = sorted(draw(st.lists(st.integers(0, now), min_size=n, max_size=n)))
    est = draw(st.lists(st.sampled_from([0, 1, 5, 10, 60, 100, 3600]), min_size=n,
                        max_size=n))
    ewt = draw(st.lists(st.sampled_from([1, 3, 1800, 3600, 21600]), min_size=n,
                        max_size=n))
    demand = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.5]), min_size=n, max_size=n))
    return keys(now, submit, est, ewt, demand)


@settings(max_examples=150, deadline=None)
@given(order_keys(), st.sampled_from(sorted(ORDERINGS)), st.randoms())
def test_orderings_are_subset_consistent_permutations(k, name, rnd) -> None:
    """Every ordering returns a permutation, and the relative order of two jobs does not
    depend on the other candidates (PRB sorts only the jobs that can fit; the proactive
    form re-sorts the unscheduled ones)."""
    if name == "l2r":
        return  # needs a model file: tests/experiment/l2r/test_l2r_pipeline.py
    ordering: Ordering = make_ordering(name)
    n_rows = int(k.rows.max()) + 1 if len(k.rows) else 0
    rng = np.random.default_rng(n_rows)
    jobs = JobTable.from_arrays(submit=np.zeros(n_rows, np.int64), run=np.ones(n_rows),
                                units=rng.integers(1, 5, n_rows))
    ordering.start(SimpleNamespace(jobs=jobs))  # per-job facts (maui: units; random)
    full = ordering.sort(k)
    n = len(k.rows)
    assert sorted(full.tolist()) == list(range(n))
    subset = sorted(rnd.sample(range(n), rnd.randint(0, n)))
    sub = OrderKeys(k.rows[subset], k.now, *(a[subset] for a in k[2:]))
    expect = [p for p in full.tolist() if p in set(subset)]
    assert [subset[i] for i in ordering.sort(sub).tolist()] == expect


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 50), max_size=40))
def test_sjf_equals_easy_sjbf_stable_argsort(est) -> None:
    e = np.asarray(est, dtype=np.int64)
    k = keys(0, [0] * len(e), e)
    assert SjfOrder().sort(k).tolist() == np.argsort(e, kind="stable").tolist()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.integers(0, 10**6), st.integers(0, 2**62)),
                          st.integers(1, 10**6)), min_size=1, max_size=20))
def test_ratio_key_orders_like_fractions(pairs) -> None:
    num = np.array([a for a, _ in pairs], dtype=np.int64)
    den = np.array([b for _, b in pairs], dtype=np.int64)
    key = ratio_key(num, den).tolist()
    fr = [Fraction(a, b) for a, b in pairs]
    for i in range(len(pairs)):
        for j in range(len(pairs)):
            assert (key[i] < key[j]) == (fr[i] < fr[j])
            assert (key[i] == key[j]) == (fr[i] == fr[j])


def test_l2r_ordering_loads_its_model_code_on_use() -> None:
    """``l2r`` is a lazy registry entry: importing the orderings loads no rank module
    (start-up time); building the ordering imports :mod:`dispatchlab.dispatch.l2r`."""
    code = ("import sys\n"
            "from dispatchlab.dispatch.orderings import make_ordering\n"
            "assert not any(m.startswith('dispatchlab.rank') for m in sys.modules)\n"
            "o = make_ordering('l2r:model=m.json')\n"
            "assert type(o).__module__ == 'dispatchlab.dispatch.l2r', type(o).__module__\n"
            "assert 'dispatchlab.rank.model' in sys.modules\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr


def test_l2r_ordering_old_path_warns() -> None:
    with pytest.warns(MovedWarning, match="dispatchlab.dispatch.l2r.L2ROrder"):
        assert orderings.L2ROrder is l2r.L2ROrder
