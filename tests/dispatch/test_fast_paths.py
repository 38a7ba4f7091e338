"""Every speed shortcut must give the schedule of the plain computation.

* the fast classes ``EASY`` and ``Conservative`` make the decisions of the plain
  reference classes ``ReferenceEASY`` and ``ReferenceConservative`` (every knob:
  orders, K reservations, priorities and scopes, explain logs);
* EASY's Python loop (short queues) and numpy masks (long queues) agree;
* EASY's fast path agrees with the general K-reservation planner at K = 1;
* EASY's reuse of the previous pass when only submissions happened agrees with a
  dispatcher that recomputes every pass;
* conservative agrees with EASY with more reservations than jobs, and with a plain
  planner that reserves every waiting job from scratch at every pass, trying every
  breakpoint (no stop rule, kept plan, scan bound or merging);
* ``CoreProfile.place`` (with or without a dominance bound) and ``earliest`` find the
  start that trying every breakpoint finds, and ``place`` leaves the step function
  of ``reserve`` there;
* FIFO's walk from the queue head agrees with a plain list scheduler;
* strict SJF/LJF's partial selection on long queues agrees with sorting the queue;
* ``shadow_and_extra`` agrees with sorting all releases.
"""

from __future__ import annotations

from bisect import bisect_right

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import EASY, FIFO, LJF, SJF, Conservative
from dispatchlab.dispatch.backfill import (
    ReferenceConservative,
    ReferenceEASY,
    shadow_and_extra,
)
from dispatchlab.dispatch.base import Start
from dispatchlab.dispatch.priority import ListDispatcher
from dispatchlab.dispatch.profile import CoreProfile, planned
from dispatchlab.predict import RealPredictor, WalltimePredictor


@st.composite
def workloads(draw, max_jobs=40):
    cores = draw(st.integers(4, 16))
    n = draw(st.integers(5, max_jobs))
    submit = sorted(draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)))
    units = draw(st.lists(st.integers(1, cores), min_size=n, max_size=n))
    run = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
    req = [max(0, r + d) for r, d in zip(run, draw(st.lists(
        st.integers(-10, 30), min_size=n, max_size=n)), strict=True)]
    return cores, JobTable.from_arrays(submit=submit, run=run, units=units, requested_time=req)


def _starts(cores, jobs, dispatcher, predictor=None, overrun="run"):
    return Simulation(Platform.pooled(cores), jobs, dispatcher, predictor,
                      overrun=overrun).run().start.tolist()


class NumpyEasy(EASY):
    small_queue = 0  # always the numpy masks
    shadow_walk = 0  # and the numpy shadow time


class PythonEasy(EASY):
    small_queue = 10**9  # always the Python loop
    shadow_walk = 10**9  # and the Python shadow walk


class ShortWalkEasy(EASY):
    shadow_walk = 2  # the walk often runs out and falls back


class GeneralEasy(EASY):
    """EASY through the general K-reservation planner (no fast path, no reuse)."""

    def dispatch(self, view):
        if view.queue_length == 0:
            return []
        return self._plan_counting(view, self.reservations)


class NoReuseEasy(EASY):
    """EASY's fast path but recomputed from scratch at every pass."""

    def dispatch(self, view):
        self._cache = None
        return super().dispatch(view)


def _brute_earliest(prof: CoreProfile, units: int, duration: int) -> int:
    """The earliest start by trying every breakpoint in turn (a window's fit can only
    change at one): independent of the profile's own scan."""
    return next(t for t in prof.times if prof.min_over(t, duration) >= units)


class PlainConservative(Conservative):
    """Conservative backfilling as its definition reads: every pass, a fresh release
    profile, every waiting job in queue order at its earliest fit (tried breakpoint by
    breakpoint, then ``reserve``), started when that is now and it physically fits."""

    def dispatch(self, view):
        prof = view.release_profile()
        free, now = view.free_cores, view.now
        q = view.queue
        out = []
        for job, u, e in zip(q.jobs.tolist(), q.units.tolist(), q.estimate.tolist(),
                             strict=True):
            t = _brute_earliest(prof, u, planned(e))
            prof.reserve(t, planned(e), u)
            if t == now and u <= free:
                free -= u
                out.append(Start(job))
        return out


class PlainFIFO(ListDispatcher):
    def __init__(self, allocator: str = "first-fit") -> None:
        self.allocator = allocator

    def order(self, view):
        return np.arange(view.queue_length)  # forces the general sorted-list code


SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(workloads(), st.sampled_from(["fifo", "sjf"]), st.booleans(), st.booleans())
def test_easy_paths_agree(w, order, real, kill):
    cores, jobs = w
    pred = RealPredictor() if real else WalltimePredictor()
    overrun = "kill" if kill else "run"
    ref = _starts(cores, jobs, ReferenceEASY(order=order), pred, overrun)
    assert _starts(cores, jobs, NoReuseEasy(order=order), pred, overrun) == ref
    assert _starts(cores, jobs, EASY(order=order), pred, overrun) == ref
    assert _starts(cores, jobs, NumpyEasy(order=order), pred, overrun) == ref
    assert _starts(cores, jobs, PythonEasy(order=order), pred, overrun) == ref
    assert _starts(cores, jobs, ShortWalkEasy(order=order), pred, overrun) == ref
    assert _starts(cores, jobs, GeneralEasy(order=order), pred, overrun) == ref


@SETTINGS
@given(workloads(), st.booleans())
def test_conservative_is_easy_with_unbounded_reservations(w, real):
    cores, jobs = w
    pred = RealPredictor() if real else WalltimePredictor()
    assert _starts(cores, jobs, Conservative(), pred) == \
        _starts(cores, jobs, EASY(reservations=10**6), pred)


@SETTINGS
@given(workloads(max_jobs=60), st.booleans(), st.booleans())
def test_conservative_matches_the_plain_planner(w, real, kill):
    cores, jobs = w
    pred = RealPredictor() if real else WalltimePredictor()
    overrun = "kill" if kill else "run"
    plain = _starts(cores, jobs, PlainConservative(), pred, overrun)
    assert _starts(cores, jobs, Conservative(), pred, overrun) == plain
    assert _starts(cores, jobs, ReferenceConservative(), pred, overrun) == plain


#: (fast class, reference class, parameters): every planner of the fast classes on a
#: counting platform
PAIRS = [
    (EASY, ReferenceEASY, {}),
    (EASY, ReferenceEASY, {"order": "sjf"}),
    (EASY, ReferenceEASY, {"reservations": 2}),
    (EASY, ReferenceEASY, {"reservations": 3, "order": "sjf"}),
    (EASY, ReferenceEASY, {"priority": "maui:wait=0:sld=1", "scope": "queue"}),
    (EASY, ReferenceEASY, {"priority": "maui:wait=0:size=1", "scope": "queue",
                           "order": "sjf"}),
    (EASY, ReferenceEASY, {"priority": "maui:wait=0:size=1", "scope": "backfill"}),
    (EASY, ReferenceEASY, {"explain": True}),
    (EASY, ReferenceEASY, {"explain": True, "reservations": 2}),
    (Conservative, ReferenceConservative, {}),
    (Conservative, ReferenceConservative, {"order": "sjf"}),
    (Conservative, ReferenceConservative, {"explain": True}),
]


def _run(cores, jobs, dispatcher, predictor, overrun):
    sim = Simulation(Platform.pooled(cores), jobs, dispatcher, predictor, overrun=overrun)
    return sim.run().start.tolist(), sim.dispatcher


@pytest.mark.parametrize("fast, reference, params", PAIRS,
                         ids=[f"{f.name}-{p}" for f, _, p in PAIRS])
def test_fast_classes_make_the_reference_decisions(fast, reference, params):
    """The registered classes and the plain reference classes they subclass give the
    same schedule; with ``explain``, EASY (one reservation) logs the same passes."""
    assert issubclass(fast, reference)

    @SETTINGS
    @given(workloads(max_jobs=50), st.booleans(), st.booleans())
    def run(w, real, kill):
        cores, jobs = w
        pred = RealPredictor() if real else WalltimePredictor()
        overrun = "kill" if kill else "run"
        got, fast_d = _run(cores, jobs, fast(**params), pred, overrun)
        want, ref_d = _run(cores, jobs, reference(**params), pred, overrun)
        assert got == want
        if params.get("explain") and fast is EASY and "reservations" not in params:
            assert fast_d.log_ == ref_d.log_

    run()


@SETTINGS
@given(workloads())
def test_fifo_head_walk_matches_plain_list_scheduler(w):
    cores, jobs = w
    assert _starts(cores, jobs, FIFO()) == _starts(cores, jobs, PlainFIFO())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 8)), min_size=0, max_size=12),
       st.lists(st.tuples(st.integers(1, 50), st.integers(1, 8)), min_size=0, max_size=4),
       st.integers(0, 8), st.integers(1, 60))
def test_shadow_and_extra_matches_sorting_all_releases(running, started, free, need):
    total = free + sum(u for _, u in running) + sum(u for _, u in started)
    if need <= free or need > total:
        return
    running = sorted(running)
    ends = np.array([e for e, _ in running], dtype=np.int64)
    held = np.array([u for _, u in running], dtype=np.int64)
    shadow, extra = shadow_and_extra(free, need, ends, held, started)
    releases = sorted(running + started)
    avail = free
    for t, u in releases:  # the obvious computation
        avail += u
        if avail >= need:
            expect_shadow = t
            break
    expect_extra = free + sum(u for t, u in releases if t <= expect_shadow) - need
    assert (shadow, extra) == (expect_shadow, expect_extra)


class FullSortSJF(SJF):
    SMALL = 10**9  # never the partial selection: sort the whole queue every pass


class FullSortLJF(LJF):
    SMALL = 10**9


class TinySJF(SJF):
    SMALL = 2  # the partial selection on queues of more than 8 jobs, often exhausted


class TinyLJF(LJF):
    SMALL = 2


@st.composite
def long_queues(draw):
    """Many jobs submitted close together on few cores, so queues grow long; estimates
    drawn from few values (ties) or near 2**31 (the key packing's fallback)."""
    cores = draw(st.integers(2, 8))
    n = draw(st.integers(40, 160))
    submit = sorted(draw(st.lists(st.integers(0, 30), min_size=n, max_size=n)))
    units = draw(st.lists(st.integers(1, cores), min_size=n, max_size=n))
    run = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
    huge = draw(st.booleans())
    req = draw(st.lists(st.sampled_from([2**31 - 1, 2**31 - 2, 2**30] if huge
                                        else [10, 20, 30, 60]), min_size=n, max_size=n))
    return cores, JobTable.from_arrays(submit=submit, run=run, units=units, requested_time=req)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_queues(), st.booleans(), st.booleans())
def test_strict_sjf_ljf_partial_selection_agrees_with_sorting(w, real, kill):
    cores, jobs = w
    pred = RealPredictor() if real else WalltimePredictor()
    overrun = "kill" if kill else "run"
    for fast, tiny, full in ((SJF(), TinySJF(), FullSortSJF()),
                             (LJF(), TinyLJF(), FullSortLJF())):
        ref = _starts(cores, jobs, full, pred, overrun)
        assert _starts(cores, jobs, fast, pred, overrun) == ref
        assert _starts(cores, jobs, tiny, pred, overrun) == ref


def test_node_profile_from_running_equals_the_dense_construction() -> None:
    """The vectorized release profile equals the one built from one dense matrix per
    running job (same times, same free matrices), ends at `now` included."""
    from dispatchlab.dispatch.base import Allocation
    from dispatchlab.dispatch.profile import NodeProfile

    rng = np.random.default_rng(11)
    for _ in range(200):
        n_nodes, n_res, now = int(rng.integers(1, 6)), int(rng.integers(1, 4)), 100
        running = int(rng.integers(0, 8))
        ends = rng.integers(now, now + 5, running)  # repeated times and `now` itself
        allocs, reqs = [], rng.integers(0, 4, (running, n_res))
        for _ in range(running):
            k = int(rng.integers(1, n_nodes + 1))
            nodes = np.sort(rng.choice(n_nodes, k, replace=False)).astype(np.int64)
            allocs.append(Allocation(nodes, rng.integers(1, 4, k).astype(np.int64)))
        free = rng.integers(0, 10, (n_nodes, n_res)).astype(np.int64)
        dense = NodeProfile(now, free, [(int(t), a.matrix(r, n_nodes))
                                        for t, a, r in zip(ends, allocs, reqs, strict=True)])
        fast = NodeProfile.from_running(now, free, ends, allocs, reqs)
        assert fast.times == dense.times
        assert all(np.array_equal(a, b) for a, b in zip(fast.free, dense.free, strict=True))


def test_core_profile_counts_past_ends_as_now() -> None:
    """Running jobs whose estimated end is already past release at now: at now = 10,
    ends 3, 5 and 10 free 1 + 2 + 3 cores on top of the 1 free (7), the end at 20
    frees 4 more (11); the engine's ``array('q')`` buffers give the same profile."""
    from array import array

    for ends, units in ((np.array([3, 5, 10, 20]), np.array([1, 2, 3, 4])),
                        (array("q", [3, 5, 10, 20]), array("q", [1, 2, 3, 4]))):
        prof = CoreProfile(10, ends, units, 1)
        assert prof.rows() == [(10, 7), (20, 11)]


def _level(prof: CoreProfile, t: int) -> int:
    """The profile's free cores at time ``t`` (>= now)."""
    return prof.free[bisect_right(prof.times, t) - 1]


@settings(max_examples=300, deadline=None)
@given(running=st.lists(st.tuples(st.integers(0, 50), st.integers(1, 4)), max_size=6),
       jobs=st.lists(st.tuples(st.integers(1, 8), st.integers(0, 40)), min_size=1,
                     max_size=25),
       bound=st.booleans())
def test_core_profile_place_equals_earliest_then_reserve(running, jobs, bound) -> None:
    """``CoreProfile.place`` (one scan; with ``bound``, started at the previous
    placement when that one is dominated, as conservative does) and ``earliest`` give
    the start found by trying every breakpoint, ``place`` the step function of
    ``reserve`` there, job after job, with no two neighbouring breakpoints on the same
    level."""
    running = sorted(running)
    ends = np.array([e for e, _ in running], dtype=np.int64)
    held = np.array([u for _, u in running], dtype=np.int64)
    total = 8
    free_now = total - int(held.sum()) if len(held) else total
    if free_now < 0:
        return
    fused = CoreProfile(0, ends, held, free_now)
    plain = fused.copy()
    prev = None
    for units, est in jobs:
        d = planned(est)
        t = _brute_earliest(plain, units, d)
        assert plain.earliest(units, d) == t
        plain.reserve(t, d, units)
        after = prev[2] if bound and prev and units >= prev[0] and d >= prev[1] else None
        assert fused.place(units, d, after) == t
        prev = (units, d, t)
        for x in sorted(set(plain.times) | set(fused.times)):
            assert _level(fused, x) == _level(plain, x)
        assert all(a != b for a, b in zip(fused.free, fused.free[1:], strict=False))
