"""Node-level backfilling's speed-ups must give the schedule of the plain computation.

The fast node-level planner of :mod:`dispatchlab.dispatch.backfill` (vectorized fit
screens of the backfill candidates and of the head's breakpoints, the profile's stacked
matrices and running minimum, EASY's plan kept between passes when only submissions
happened, EASY's head search from per-node release events) is compared, start for
start and node for node, with a plain planner written here: one reservation after
the other in a list-of-matrices profile, every window reduced from its matrices,
every breakpoint and every candidate offered to the allocator, and with the library's
own reference classes (``ReferenceEASY``, ``ReferenceConservative``), which the fast
classes subclass. Random multi-resource workloads on heterogeneous platforms, with
inexact estimates (estimates run out), long queues (many passes with only
submissions), and the built-in allocators; then a few Eurora-like instances.
"""

from __future__ import annotations

from contextlib import suppress

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import EASY, Conservative
from dispatchlab.dispatch.allocators import FirstFit, units_per_node
from dispatchlab.dispatch.backfill import ReferenceConservative, ReferenceEASY
from dispatchlab.dispatch.base import Allocation, Start
from dispatchlab.dispatch.profile import (
    NodeProfile,
    ReleaseEvents,
    fit_totals,
    node_fits,
    planned,
)
from dispatchlab.platform import NodeType
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.predict import RealPredictor, WalltimePredictor


# ---------------------------------------------------------------- the plain planner
class PlainProfile:
    """The node profile without caches: a list of matrices, windows reduced anew."""

    def __init__(self, prof: NodeProfile) -> None:
        self.times = list(prof.times)
        self.free = [np.array(f) for f in prof.free]

    def window_min(self, start: int, duration: int) -> np.ndarray:
        i = int(np.searchsorted(self.times, start, side="right")) - 1
        j = int(np.searchsorted(self.times, start + duration, side="left"))
        return np.minimum.reduce(self.free[i:max(j, i + 1)])

    def earliest(self, allocator, request, units: int, duration: int):
        for t in self.times:
            alloc = allocator.allocate(request, units, self.window_min(t, duration))
            if alloc is not None:
                return t, alloc
        raise AssertionError("never fits")

    def _split(self, t: int) -> int:
        i = int(np.searchsorted(self.times, t, side="left"))
        if i == len(self.times) or self.times[i] != t:
            self.times.insert(i, t)
            self.free.insert(i, self.free[i - 1].copy())
        return i

    def reserve(self, start: int, duration: int, used: np.ndarray) -> None:
        i, j = self._split(start), self._split(start + duration)
        for k in range(i, j):
            self.free[k] = self.free[k] - used


class PlainMixin:
    """``_plan_nodes`` as the plain loop: reservations in queue order, then every later
    job (in the scan order) offered to the allocator."""

    def _plan_nodes(self, view, k):
        now = view.now
        jobs, units, est = self._queue_columns(view)
        n = len(jobs)
        reqs = view.requests
        n_nodes = view.free.shape[0]
        physical = view.free.copy()
        prof = PlainProfile(view.release_profile())
        alloc_ = self.allocator_
        out, reserved, i = [], [], 0
        while i < n and len(reserved) < k:
            job, u, d = int(jobs[i]), int(units[i]), planned(int(est[i]))
            t, alloc = prof.earliest(alloc_, reqs[job], u, d)
            if t == now:
                now_alloc = alloc_.allocate(reqs[job], u,
                                            np.minimum(physical, prof.window_min(now, d)))
                if now_alloc is not None:
                    used = now_alloc.matrix(reqs[job], n_nodes)
                    prof.reserve(now, d, used)
                    physical -= used
                    out.append(Start(job, now_alloc))
                    i += 1
                    continue
            prof.reserve(t, d, alloc.matrix(reqs[job], n_nodes))
            reserved.append((job, t))
            i += 1
        for p in self._rest_in_queue_order(view, jobs, est, i).tolist():
            job, u, d = int(jobs[p]), int(units[p]), planned(int(est[p]))
            alloc = alloc_.allocate(reqs[job], u, np.minimum(physical, prof.window_min(now, d)))
            if alloc is None:
                continue
            used = alloc.matrix(reqs[job], n_nodes)
            prof.reserve(now, d, used)
            physical -= used
            out.append(Start(job, alloc))
        return out


class PlainEASY(PlainMixin, EASY):
    pass


class PlainConservative(PlainMixin, Conservative):
    pass


class StackedEASY(EASY):
    """Node-level EASY through the engine's stacked release profile (the general
    planner at ``k = 1``), not the release events."""

    sparse_head = False


class UnscreenedEASY(EASY):
    """The fast planner without the candidate screen and the kept plan."""

    screen_nodes = False
    keep_node_plan = False


def _schedule(platform, jobs, dispatcher, predictor):
    r = Simulation(platform, jobs, dispatcher, predictor).run()
    allocs = {int(j): (a.nodes.tolist(), a.counts.tolist()) for j, a in r.allocations.items()}
    return r.start.tolist(), r.end.tolist(), allocs


# ------------------------------------------------------------------------ workloads
@st.composite
def multi_resource_workloads(draw):
    """Two or three node types with cores, GPUs and memory; bursts of submissions on a
    small platform (long queues), per-unit requests from a few classes."""
    types = [NodeType("a", draw(st.integers(1, 3)), {"core": 8, "gpu": 0, "mem": 32}),
             NodeType("b", draw(st.integers(1, 2)), {"core": 16, "gpu": 2, "mem": 64})]
    if draw(st.booleans()):
        types.append(NodeType("c", 1, {"core": 32, "gpu": 0, "mem": 128}))
    platform = Platform(tuple(types), name="speed-test")
    n = draw(st.integers(8, 45))
    submit = sorted(draw(st.lists(st.integers(0, 120), min_size=n, max_size=n)))
    cls = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    table = [(1, 0, 2), (2, 0, 4), (4, 1, 8), (8, 0, 16), (2, 1, 1)]
    cores = [table[c][0] for c in cls]
    gpus = [table[c][1] for c in cls]
    mem = [table[c][2] for c in cls]
    units = draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))
    run = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    req = [max(0, r + d) for r, d in zip(run, draw(st.lists(
        st.integers(-15, 40), min_size=n, max_size=n)), strict=True)]
    jobs = JobTable.from_arrays(submit=submit, run=run, units=units, requested_time=req,
                                resources={"core": cores, "gpu": gpus, "mem": mem})
    return platform, jobs


DISPATCHERS = [
    ("easy", {}),
    ("easy", {"order": "sjf"}),
    ("easy", {"reservations": 3}),
    ("easy", {"allocator": "best-fit"}),
    ("easy", {"allocator": "consolidate"}),
    ("conservative", {}),
    ("conservative", {"allocator": "best-fit"}),
]


def _triple(name, params):
    """The fast class, the plain planner written here and the reference class."""
    if name == "easy":
        return EASY(**params), PlainEASY(**params), ReferenceEASY(**params)
    return (Conservative(**params), PlainConservative(**params),
            ReferenceConservative(**params))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(multi_resource_workloads(), st.sampled_from(DISPATCHERS), st.booleans())
def test_fast_node_planner_matches_the_plain_one(w, disp, real):
    platform, jobs = w
    pred = RealPredictor() if real else WalltimePredictor()
    fast, plain, reference = _triple(*disp)
    want = _schedule(platform, jobs, plain, pred)
    assert _schedule(platform, jobs, fast, pred) == want
    assert _schedule(platform, jobs, reference, pred) == want


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(multi_resource_workloads(), st.booleans())
def test_screen_and_kept_plan_change_no_decision(w, real):
    platform, jobs = w
    pred = RealPredictor() if real else WalltimePredictor()
    for order in ("fifo", "sjf"):
        assert _schedule(platform, jobs, EASY(order=order), pred) == \
            _schedule(platform, jobs, UnscreenedEASY(order=order), pred)


class LastNodesFirst(FirstFit):
    """A user allocator (not a built-in one): nodes in reverse index order. The
    dominance bound of node-level conservative is off for it; the stop rule holds for
    every allocator."""

    name = "last-nodes-first"

    def allocate(self, request, units, free):
        fit = units_per_node(request, free)
        order = np.arange(len(fit))[::-1]
        taken = np.minimum(fit[order], units)
        if taken.sum() < units:
            return None
        cum = np.cumsum(taken)
        k = int(np.searchsorted(cum, units))
        counts = taken[: k + 1].copy()
        counts[k] -= cum[k] - units
        keep = counts > 0
        return Allocation(order[: k + 1][keep], counts[keep])


class UnstoppedConservative(Conservative):
    """Node-level conservative reserving every waiting job (no stop rule)."""

    stop_node_plan = False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(multi_resource_workloads(), st.sampled_from(["first-fit", "best-fit",
                                                    "consolidate", "user"]),
       st.booleans())
def test_node_conservative_stop_rule_and_bound_match_the_plain_planner(w, alloc, real):
    """Node-level conservative stops after the last job that can start now and starts
    each job's search at the placement of an earlier job it dominates (request, units
    and duration): the schedule of the plain planner, which reserves every job trying
    every breakpoint, and of the same dispatcher without the stop rule."""
    platform, jobs = w
    pred = RealPredictor() if real else WalltimePredictor()
    allocator = LastNodesFirst() if alloc == "user" else alloc
    fast = _schedule(platform, jobs, Conservative(allocator=allocator), pred)
    assert fast == _schedule(platform, jobs, PlainConservative(allocator=allocator), pred)
    assert fast == _schedule(platform, jobs, ReferenceConservative(allocator=allocator),
                             pred)
    assert fast == _schedule(platform, jobs, UnstoppedConservative(allocator=allocator),
                             pred)


def test_eurora_instances_match_the_plain_planner() -> None:
    """Seeded Eurora-like instances (64 nodes, cores/GPUs/MICs/memory): node-level EASY
    (fifo, sjf) and conservative as the plain planner, fast and reference classes."""
    from dispatchlab.power.eurora_synth import eurora_instance

    platform = eurora_platform()
    for seed, arrival in ((0, "uniform"), (1, "burst")):
        jobs = eurora_instance(60, 300, arrival, seed=seed)
        for name, params in (("easy", {}), ("easy", {"order": "sjf"}), ("conservative", {})):
            fast, plain, reference = _triple(name, params)
            pred = WalltimePredictor()
            want = _schedule(platform, jobs, plain, pred)
            assert _schedule(platform, jobs, fast, pred) == want, (seed, name, params)
            assert _schedule(platform, jobs, reference, pred) == want, (seed, name, params)


@st.composite
def partitioned_workloads(draw):
    """:func:`multi_resource_workloads` with partitions encoded as internal resources:
    ``@p0`` on the first node type's nodes, ``@p1`` on the others', ``@all`` on every
    node (large capacities), each job asking 1 of one of them per unit."""
    platform, jobs = draw(multi_resource_workloads())
    big = 1 << 20
    types = tuple(NodeType(t.name, t.count, {**t.capacity, "@p0": big if k == 0 else 0,
                                             "@p1": 0 if k == 0 else big, "@all": big})
                  for k, t in enumerate(platform.node_types))
    n = len(jobs)
    part = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    res = {k: jobs.resources[k] for k in ("core", "gpu", "mem")}
    for k, name in enumerate(("@p0", "@p1", "@all")):
        res[name] = np.array([int(p == k) for p in part])
    # a job of partition 0 asks no GPU (the first type has none)
    res["gpu"] = np.where(res["@p0"] == 1, 0, res["gpu"])
    table = JobTable.from_arrays(submit=jobs["submit"], run=jobs["run"],
                                 units=jobs["units"], requested_time=jobs["requested_time"],
                                 resources=res)
    return Platform(types, name="partitioned"), table


class HalfWalltime(WalltimePredictor):
    """Half the requested time: estimates run out and are replaced by the requested time
    (``on_expiry``), so running jobs get new estimated ends."""

    name = "half-walltime"

    def predict(self, job: int, now: int) -> int:
        return max(1, int(self._requested[job]) // 2)

    def static_estimates(self) -> np.ndarray:
        return np.maximum(1, self._requested // 2)


PREDICTORS = {"real": RealPredictor, "walltime": WalltimePredictor, "half": HalfWalltime}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(multi_resource_workloads(), partitioned_workloads()),
       st.sampled_from(["first-fit", "best-fit", "consolidate", "user"]),
       st.sampled_from([{}, {"order": "sjf"}, {"explain": True}]),
       st.sampled_from(sorted(PREDICTORS)))
def test_easy_release_events_match_the_stacked_profile(w, alloc, params, predictor):
    """Node-level EASY's head search from per-node release events (kept between passes)
    and its backfill in a profile of two breakpoints: the schedule of the stacked
    release profile (the general planner at K = 1) and of the plain planner, for every
    allocator (a user allocator too), with partitions encoded as resources and with
    estimates that run out and are replaced."""
    platform, jobs = w
    pred = PREDICTORS[predictor]()
    allocator = LastNodesFirst() if alloc == "user" else alloc
    fast = _schedule(platform, jobs, EASY(allocator=allocator, **params), pred)
    assert fast == _schedule(platform, jobs, StackedEASY(allocator=allocator, **params),
                             pred)
    assert fast == _schedule(platform, jobs, PlainEASY(allocator=allocator, **params), pred)


# --------------------------------------------------------------------- the profile
def test_release_events_find_the_stacked_profiles_earliest() -> None:
    """:meth:`ReleaseEvents.earliest` (after jobs started now) gives the start and the
    allocation of :meth:`NodeProfile.earliest` in the profile of the same running jobs
    with the same starts reserved, and the matrix in force there."""
    from dispatchlab.dispatch.allocators import FirstFit
    from dispatchlab.dispatch.base import Allocation

    rng = np.random.default_rng(11)
    ff = FirstFit()
    for _ in range(300):
        n_nodes, n_res, now = int(rng.integers(1, 6)), int(rng.integers(1, 4)), 50
        running = int(rng.integers(0, 8))
        ends = np.sort(rng.integers(now, now + 30, running))
        allocs = []
        for _ in range(running):
            nodes = np.sort(rng.choice(n_nodes, int(rng.integers(1, n_nodes + 1)),
                                       replace=False))
            allocs.append(Allocation(nodes, rng.integers(1, 3, len(nodes))))
        reqs = rng.integers(0, 3, (running, n_res))
        free = rng.integers(0, 6, (n_nodes, n_res)).astype(np.int64)
        prof = NodeProfile.from_running(now, free, ends, allocs, reqs)
        events = ReleaseEvents(now, free, ends, allocs, reqs)
        assert np.array_equal(events.base, prof.free[0])
        for _ in range(int(rng.integers(0, 3))):  # jobs started now
            request = rng.integers(0, 2, n_res)
            alloc = ff.allocate(request, 1, np.array(events.base))
            if alloc is None:
                continue
            d = int(rng.integers(1, 25))
            prof.reserve(now, d, alloc.matrix(request, n_nodes))
            events.start(alloc, request, d)
        for t in prof.times:
            assert np.array_equal(events.matrix_at(t), prof.window_min(t, 1))
        request = rng.integers(0, 3, n_res)
        units = int(rng.integers(1, 5))
        want = got = None
        with suppress(AssertionError):  # never fits
            want = prof.earliest(ff, request, units, int(rng.integers(1, 30)))
        with suppress(AssertionError):
            got = events.earliest(ff, request, units)
        assert (got is None) == (want is None)
        if got is not None:
            assert got[0] == want[0]
            assert np.array_equal(got[1].nodes, want[1].nodes)
            assert np.array_equal(got[1].counts, want[1].counts)
            assert np.array_equal(got[2], prof.window_min(got[0], 1))
def test_node_profile_caches_equal_the_plain_reductions() -> None:
    """After random reservations (from now and later), windows, the running minimum and
    ``earliest`` equal their plain definitions, and the fit counts equal the
    allocators' units per node summed."""
    from dispatchlab.dispatch.allocators import FirstFit, units_per_node
    from dispatchlab.dispatch.base import Allocation

    rng = np.random.default_rng(5)
    ff = FirstFit()
    for _ in range(150):
        n_nodes, n_res, now = int(rng.integers(1, 5)), int(rng.integers(1, 4)), 50
        running = int(rng.integers(0, 6))
        ends = np.sort(rng.integers(now, now + 30, running))
        allocs = [Allocation(np.array([int(rng.integers(n_nodes))]), np.array([1]))
                  for _ in range(running)]
        reqs = rng.integers(0, 3, (running, n_res))
        free = rng.integers(0, 6, (n_nodes, n_res)).astype(np.int64)
        prof = NodeProfile.from_running(now, free, ends, allocs, reqs)
        plain = PlainProfile(prof)
        for _ in range(int(rng.integers(0, 5))):
            start = now if rng.random() < 0.5 else int(rng.integers(now, now + 40))
            d = int(rng.integers(1, 20))
            used = rng.integers(0, 2, (n_nodes, n_res))
            before = prof.copy()  # copies share the caches; reserving drops this one's
            kept = [f.copy() for f in before.free]
            prof.reserve(start, d, used)
            plain.reserve(start, d, used)
            assert all(np.array_equal(a, b) for a, b in zip(before.free, kept, strict=True))
            # the stack kept up to date by reserve is the copy's no more
            assert np.array_equal(before.stacked(), np.stack(kept))
            assert prof.times == plain.times
            stack = np.stack(plain.free)
            assert np.array_equal(prof.stacked(), stack)
            assert np.array_equal(prof.running_min(), np.minimum.accumulate(stack, axis=0))
            for t in prof.times:
                for d2 in (1, 3, 25):
                    assert np.array_equal(prof.window_min(t, d2), plain.window_min(t, d2))
            request = rng.integers(0, 3, n_res)
            if request.any():
                units, dd = int(rng.integers(1, 4)), int(rng.integers(1, 30))
                got = want = None
                with suppress(AssertionError):  # never fits (negative levels)
                    want = plain.earliest(ff, request, units, dd)
                with suppress(AssertionError):
                    got = prof.earliest(ff, request, units, dd)
                assert (got is None) == (want is None)
                if got is not None:
                    assert got[0] == want[0]
                    # a true lower bound changes nothing
                    assert prof.earliest(ff, request, units, dd, after=int(
                        rng.integers(now, got[0] + 1)))[0] == got[0]
                    assert np.array_equal(got[1].nodes, want[1].nodes)
                    assert np.array_equal(got[1].counts, want[1].counts)
            reqs_k = rng.integers(0, 3, (4, n_res))
            units_k = rng.integers(1, 5, 4)
            counts = node_fits(reqs_k, free, 4)
            totals = fit_totals(reqs_k, units_k, free)
            for r, u, c, tot in zip(reqs_k, units_k, counts, totals, strict=True):
                per = units_per_node(r, free)
                assert np.array_equal(c, np.clip(per, 0, 4))
                assert tot == np.clip(per, 0, u).sum()


def test_fit_now_grouped_by_window_equals_the_fit_totals() -> None:
    """``_fit_now`` with few windows (grouped by window and distinct request) gives
    the fit totals of every job's own window, as with many windows."""
    from dispatchlab.dispatch.backfill import _fit_now

    rng = np.random.default_rng(7)
    grouped = 0
    for _ in range(300):
        n_nodes, n_res, now = int(rng.integers(1, 6)), int(rng.integers(1, 4)), 10
        free = rng.integers(0, 6, (n_nodes, n_res)).astype(np.int64)
        prof = NodeProfile(now, free, [])
        for _ in range(int(rng.integers(0, 4))):
            prof.reserve(int(rng.integers(now, now + 20)), int(rng.integers(1, 15)),
                         rng.integers(0, 2, (n_nodes, n_res)))
        physical = rng.integers(0, 6, (n_nodes, n_res)).astype(np.int64)
        c = int(rng.integers(1, 12))
        requests = rng.integers(0, 3, (c, n_res))
        requests[rng.random(c) < 0.5] = requests[0]  # repeated requests
        units = rng.integers(1, 6, c)
        durs = rng.integers(1, 30, c)
        want = np.array([
            fit_totals(requests[k : k + 1], units[k : k + 1],
                       np.minimum(physical, prof.window_min(now, int(durs[k]))))[0]
            >= units[k] for k in range(c)])
        got = _fit_now(prof, physical, now, requests, units, durs)
        assert np.array_equal(got, want)
        times = np.asarray(prof.times)
        grouped += len(np.unique(np.searchsorted(times, now + durs))) <= 3 and c > 1
    assert grouped > 100  # the grouped path ran
