"""PRB (priority-rule-based dispatcher), the consolidate allocator and the proactive
form: hand-computed schedules (reasoning in comments), parameter checks, the
dispatcher conformance check, and hypothesis properties on multi-resource nodes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import SJF
from dispatchlab.dispatch.allocators import (
    ALLOCATORS,
    Consolidate,
    FirstFit,
    make_allocator,
    units_per_node,
)
from dispatchlab.dispatch.base import View
from dispatchlab.dispatch.orderings import ORDERINGS
from dispatchlab.dispatch.prb import (
    PRB,
    ProactivePlan,
    proactive_schedule,
    units_per_node_many,
)
from dispatchlab.platform.platform import NodeType
from dispatchlab.predict import RealPredictor, WalltimePredictor
from dispatchlab.testing import check_dispatcher

#: every ordering but l2r, which needs a model file (tests/experiment/l2r/test_l2r_pipeline.py)
ORDERS = sorted(set(ORDERINGS) - {"l2r"})


def run(platform, jobs, disp, predictor=None):
    sim = Simulation(platform, jobs, disp, predictor or RealPredictor())
    return sim, sim.run()


def starts(result) -> list[int]:
    return [int(s) for s in result.start]


# ------------------------------------------------------------------ hand-computed
def test_issue_example_one_node_two_cores() -> None:
    # One node of 2 cores, requested time = run time. A (1 core, 100 s) and B (2 cores,
    # 60 s), both submitted at 0 in one queue (default EWT 1800). At t = 0 both have
    # urgency (0 + 1) / 1800: a tie, broken by demand: A 100 x 1/2 = 50 < B 60 x 2/2 = 60
    # (AccaSim's raw demand 100 < 120 gives the same order). A starts; B needs 2 cores,
    # 1 is free: skipped. A ends at 100 and B starts then.
    jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 60], units=[1, 2])
    for platform in (Platform.homogeneous(1, 2), Platform.pooled(2)):
        _, res = run(platform, jobs, PRB())
        assert starts(res) == [0, 100]


def test_issue_example_on_node_level_platform() -> None:
    # The same two jobs with 1 GB of memory per unit on a node of 2 cores and 4 GB: the
    # platform is node-level (not counting), the allocator places the units. Demands:
    # A 100 x (1/2 + 1/4) = 75 < B 60 x (2/2 + 2/4) = 90: A first, B at 100.
    platform = Platform((NodeType("n", 1, {"core": 2, "mem": 4}),))
    jobs = JobTable.from_arrays(submit=[0, 0], run=[100, 60], units=[1, 2],
                                resources={"core": [1, 1], "mem": [1, 1]})
    sim, res = run(platform, jobs, PRB())
    assert not sim.counting
    assert starts(res) == [0, 100]
    assert res.allocations[1].nodes.tolist() == [0]
    assert res.allocations[1].counts.tolist() == [2]


def _queue_jobs(submit, run, units, queue):
    return JobTable.from_arrays(submit=submit, run=run, units=units, queue=queue)


def test_urgency_short_ewt_queue_overtakes() -> None:
    # 2 cores; queue "1" has EWT 21600 s, queue "2" 3600 s (SWF queues are named by
    # their number). X (2 cores, 100 s, queue 1) runs 0..100. P (2 cores, 50 s, queue 1)
    # is submitted at 10, D (2 cores, 50 s, queue 2) at 50. At t = 100:
    #   urgency P = (90 + 1) / 21600 = 0.0042, urgency D = (50 + 1) / 3600 = 0.0142
    # so D starts at 100 and P at 150 (FIFO order would start P first).
    platform = Platform.pooled(2).with_queues({"1": 21600, "2": 3600})
    jobs = _queue_jobs([0, 10, 50], [100, 50, 50], [2, 2, 2], [1, 1, 2])
    _, res = run(platform, jobs, PRB())
    assert starts(res) == [0, 150, 100]
    _, res = run(platform, jobs, PRB(order="fifo"))
    assert starts(res) == [0, 100, 150]


def test_ewt_and_urgency_orders_differ() -> None:
    # X (2 cores, 100 s) runs 0..100. P (queue 1, EWT 21600) submitted at 1, D (queue 2,
    # EWT 3600) at 95, both 2 cores, 50 s. At t = 100:
    #   urgency P = 100 / 21600 = 0.00463 > urgency D = 6 / 3600 = 0.00167: P at 100
    #   ewt: D's queue has the smaller EWT whatever the wait: D at 100, P at 150
    platform = Platform.pooled(2).with_queues({"1": 21600, "2": 3600})
    jobs = _queue_jobs([0, 1, 95], [100, 50, 50], [2, 2, 2], [1, 1, 2])
    _, res = run(platform, jobs, PRB(order="urgency"))
    assert starts(res) == [0, 100, 150]
    _, res = run(platform, jobs, PRB(order="ewt"))
    assert starts(res) == [0, 150, 100]


def test_default_ewt_for_unknown_queues() -> None:
    # queue 7 is not in the table: it gets default_ewt. With default_ewt = 100, at t = 100
    # U (queue 7, submitted 95) has urgency 6 / 100 = 0.06 > P's 100 / 21600: U first.
    platform = Platform.pooled(2).with_queues({"1": 21600})
    jobs = _queue_jobs([0, 1, 95], [100, 50, 50], [2, 2, 2], [1, 1, 7])
    _, res = run(platform, jobs, PRB(default_ewt=100))
    assert starts(res) == [0, 150, 100]
    _, res = run(platform, jobs, PRB())  # default 1800: 6/1800 = 0.0033 < 0.0046
    assert starts(res) == [0, 100, 150]


def test_walltime_order() -> None:
    # X (2 cores, 10 s) runs 0..10; then J1 (est 30, submit 1), J2 (est 10, submit 2),
    # J3 (est 10, submit 3), all 2 cores. Ascending estimate, ties by submit:
    # J2 at 10, J3 at 20, J1 at 30.
    jobs = JobTable.from_arrays(submit=[0, 1, 2, 3], run=[10, 30, 10, 10], units=[2] * 4)
    _, res = run(Platform.pooled(2), jobs, PRB(order="walltime"))
    assert starts(res) == [0, 30, 10, 20]


def test_skip_a_big_job_does_not_block_a_small_one() -> None:
    # 4 cores. X (3 cores, 100 s) runs 0..100. At t = 5: B (4 cores, 10 s) then S
    # (1 core, 10 s), FIFO order. B does not fit (1 free) and is skipped; S starts at 5
    # (strict FIFO would block S behind B until 100). B starts at 100.
    jobs = JobTable.from_arrays(submit=[0, 5, 5], run=[100, 10, 10], units=[3, 4, 1])
    _, res = run(Platform.pooled(4), jobs, PRB(order="fifo"))
    assert starts(res) == [0, 100, 5]
    # node level: 2 nodes x (2 cores, 8 mem); X holds 3 units of (1 core, 1 mem) on
    # nodes 0,0,1. B wants 4 units: no; S (1 unit) fits on node 1 and starts at 5.
    platform = Platform.homogeneous(2, 2, mem=8)
    jobs = JobTable.from_arrays(submit=[0, 5, 5], run=[100, 10, 10], units=[3, 4, 1],
                                resources={"core": [1, 1, 1], "mem": [1, 1, 1]})
    sim, res = run(platform, jobs, PRB(order="fifo", allocator="first-fit"))
    assert not sim.counting
    assert starts(res) == [0, 100, 5]
    assert res.allocations[2].nodes.tolist() == [1]


# ------------------------------------------------------------------ consolidate
def three_node_capacity() -> np.ndarray:
    # resources (core, gpu, mem): node 0 (4, 0, 8), node 1 (8, 0, 8), node 2 (2, 1, 4)
    return np.array([[4, 0, 8], [8, 0, 8], [2, 1, 4]], dtype=np.int64)


def test_consolidate_node_order_hand_computed() -> None:
    alloc = make_allocator("consolidate")
    assert isinstance(alloc, Consolidate)
    alloc.start(three_node_capacity())
    free = np.array([[2, 0, 8], [2, 0, 2], [2, 1, 4]], dtype=np.int64)
    # shares (mean over resources with capacity > 0 of free / capacity):
    #   node 0: (2/4 + 8/8) / 2 = 0.75; node 1: (2/8 + 2/8) / 2 = 0.25;
    #   node 2: (2/2 + 1/1 + 4/4) / 3 = 1.0  ->  order 1, 0, 2
    assert alloc.share(free).tolist() == [0.75, 0.25, 1.0]
    req = np.array([1, 0, 1], dtype=np.int64)
    # node 1 hosts min(2/1, 2/1) = 2 units, node 0 min(2, 8) = 2, node 2 min(2, 4) = 2
    a = alloc.allocate(req, 4, free)
    assert a.nodes.tolist() == [1, 0] and a.counts.tolist() == [2, 2]
    a = alloc.allocate(req, 5, free)
    assert a.nodes.tolist() == [1, 0, 2] and a.counts.tolist() == [2, 2, 1]
    assert alloc.allocate(req, 7, free) is None
    # best-fit compares free cores first (2, 2, 2: tie), then mem (8, 2, 4): 1, 2, 0
    b = make_allocator("best-fit").allocate(req, 3, free)
    assert b.nodes.tolist() == [1, 2] and b.counts.tolist() == [2, 1]
    # a GPU unit can only go to node 2
    a = alloc.allocate(np.array([1, 1, 1], dtype=np.int64), 1, free)
    assert a.nodes.tolist() == [2]


def test_consolidate_ties_by_node_index() -> None:
    alloc = Consolidate()
    alloc.start(np.array([[3, 6], [6, 12], [3, 6]], dtype=np.int64))
    # nodes 0 and 1 have share (1/3 + 2/6) / 2 = 1/3 (exactly, whatever the float sums);
    # node 2 is full on mem (share 1/2 x 1/3 = 1/6) but cannot host the unit
    free = np.array([[1, 2], [2, 4], [1, 0]], dtype=np.int64)
    a = alloc.allocate(np.array([1, 1], dtype=np.int64), 3, free)
    assert a.nodes.tolist() == [0, 1] and a.counts.tolist() == [1, 2]


def test_consolidate_needs_start() -> None:
    with pytest.raises(InputError, match="start") as info:
        Consolidate().allocate(np.array([1]), 1, np.array([[2]]))
    assert info.value.field == "allocator"
    assert "consolidate" in ALLOCATORS
    with pytest.raises(InputError, match="did you mean 'consolidate'"):
        make_allocator("consolidat")


# ------------------------------------------------------------------ proactive form
class Recording(PRB):
    """PRB that records its proactive plan at each pass (test helper)."""

    def start(self, view: View) -> None:
        super().start(view)
        self.plans_: list[tuple[int, list[int], ProactivePlan]] = []

    def dispatch(self, view: View):
        if view.queue_length:
            plan = self.plan(view)
            self.plans_.append((view.now, view.queue.jobs.tolist(), plan))
        return super().dispatch(view)


def test_proactive_plan_hand_computed() -> None:
    # 4 cores. R (2 cores, 100 s) runs 0..100. At t = 10: A (4 cores, 50 s), B (2 cores,
    # 200 s), C (2 cores, 30 s). Walltime order C, A, B.
    #  t = 10: C fits (2 free on [10, 40)) -> 10. A (4) no. B: 2 on [10, 210)? 0 free: no.
    #  t = 40 (C's end): A needs 4, 2 free: no. B: free on [40, 100) is 2, then 4 -> 40.
    #  t = 100 (R's end): A needs 4 on [100, 150): B holds 2 -> no.
    #  t = 240 (B's end): A -> 240.
    # With exact estimates and no later submission, PRB realises exactly this plan.
    jobs = JobTable.from_arrays(submit=[0, 10, 10, 10], run=[100, 50, 200, 30],
                                units=[2, 4, 2, 2])
    sim, res = run(Platform.pooled(4), jobs, Recording(order="walltime"))
    now, rows, plan = sim.dispatcher.plans_[1]  # plans_[0]: R alone at t = 0
    assert now == 10 and rows == [1, 2, 3]
    assert plan.starts.tolist() == [240, 40, 10]
    assert plan.allocations == {3: None}
    assert starts(res) == [0, 240, 40, 10]


def test_proactive_plan_node_level_and_urgency() -> None:
    # 2 nodes x (2 cores, 4 mem), units of (1 core, 1 mem). R (2 units, 100 s) runs 0..100
    # on node 0 (consolidate: both nodes empty, share tie -> node 0; 2 units fit there).
    # At t = 10, all default EWT: A (4 units, 20 s), B (1 unit, 300 s), C (2 units, 50 s).
    # Urgency ties at every time point (same submit), so demand decides:
    #   A 20 x 4 x (1/4 + 1/8) = 30, B 300 x (1/4 + 1/8) = 112.5, C 50 x 2 x 3/8 = 37.5
    #   -> A, C, B.
    #  t = 10: A (4 units, 2 free) no; C fits node 1 (2 units) -> 10; B no room -> skip.
    #  t = 60 (C's end): A no (node 0 busy); B fits node 1 -> 60.
    #  t = 100 (R's end): A needs 4 units, node 1 has 1 free: no.
    #  t = 360 (B's end): A -> 360.
    platform = Platform.homogeneous(2, 2, mem=4)
    jobs = JobTable.from_arrays(submit=[0, 10, 10, 10], run=[100, 20, 300, 50],
                                units=[2, 4, 1, 2], resources={"core": [1] * 4, "mem": [1] * 4})
    sim, res = run(platform, jobs, Recording())
    assert not sim.counting
    assert res.allocations[0].nodes.tolist() == [0]
    now, rows, plan = sim.dispatcher.plans_[1]  # plans_[0]: R alone at t = 0
    assert now == 10 and rows == [1, 2, 3]
    assert plan.starts.tolist() == [360, 60, 10]
    assert list(plan.allocations) == [3]
    assert plan.allocations[3].nodes.tolist() == [1]
    assert plan.allocations[3].counts.tolist() == [2]
    assert starts(res) == [0, 360, 60, 10]


def test_proactive_schedule_leaves_misfits_unscheduled() -> None:
    # called directly on a 3-core pool: J0 and J1 (2 cores, 10 s, submitted at 5) and W
    # (5 cores: rejected at load, but its row can still be planned). FIFO order:
    #  t = 5: J0 fits -> 5; J1 (1 core left) no; W no.  t = 15 (J0's end): J1 -> 15.
    #  t = 25 (J1's end): W still needs 5 > 3 cores; no later time point: start -1.
    captured = {}

    class Probe(PRB):
        def dispatch(self, view):
            if "plan" not in captured:
                captured["plan"] = proactive_schedule(
                    view, np.array([0, 1, 2]), np.array([10, 10, 10]),
                    self.ordering_, self.allocator_, np.array([1800] * 3),
                    np.array([0.0, 0.0, 0.0]))
                captured["now"] = view.now
            return super().dispatch(view)

    jobs = JobTable.from_arrays(submit=[5, 5, 5], run=[10, 10, 10], units=[2, 2, 5])
    _, res = run(Platform.pooled(3), jobs, Probe(order="fifo"))
    assert captured["now"] == 5
    assert captured["plan"].starts.tolist() == [5, 15, -1]
    assert captured["plan"].allocations == {0: None}
    assert starts(res)[:2] == [5, 15]


# ------------------------------------------------------------------ parameters
def test_parameters_are_checked() -> None:
    for bad in (0, -5, 1.5, True, "1800"):
        with pytest.raises(InputError) as info:
            PRB(default_ewt=bad).validate()
        assert info.value.field == "default_ewt"
    with pytest.raises(InputError, match="did you mean 'urgency'") as info:
        PRB(order="urgncy").validate()
    assert info.value.field == "order"
    with pytest.raises(InputError) as info:
        PRB(allocator="worst-fit").validate()
    assert info.value.field == "allocator"
    jobs = JobTable.from_arrays(submit=[0], run=[1], units=[1])
    with pytest.raises(InputError):
        Simulation(Platform.pooled(2), jobs, PRB(default_ewt=0)).run()


def test_check_dispatcher_passes() -> None:
    check_dispatcher(PRB)
    for name in ORDERS:
        check_dispatcher(PRB(order=name))


# ------------------------------------------------------------------ properties
@st.composite
def node_workloads(draw, same_submit: bool = False):
    """2-4 heterogeneous nodes with cores, memory and (on some) GPUs; jobs whose units
    ask for several cores and some memory, sometimes a GPU: always node-level."""
    n_nodes = draw(st.integers(2, 4))
    types = []
    for k in range(n_nodes):
        cores = draw(st.sampled_from([2, 4, 8]))
        mem = draw(st.sampled_from([4, 8, 16]))
        gpu = draw(st.sampled_from([0, 0, 1, 2]))
        types.append(NodeType(f"t{k}", 1, {"core": cores, "mem": mem, "gpu": gpu}))
    platform = Platform(tuple(types))
    cap = platform.capacity_matrix()
    n = draw(st.integers(4, 20))
    rows = []
    for _ in range(n):
        node = cap[draw(st.integers(0, n_nodes - 1))]  # at least one node fits a unit
        core = draw(st.integers(1, int(node[0])))
        mem = draw(st.integers(0, int(node[1])))
        gpu = draw(st.integers(0, int(node[2])))
        per = np.array([core, mem, gpu])
        fits = [int(min(c // r for c, r in zip(row, per, strict=True) if r > 0))
                for row in cap]
        units = draw(st.integers(1, max(1, sum(fits))))
        rows.append((core, mem, gpu, units))
    submit = [0] * n if same_submit else sorted(
        draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)))
    run_ = draw(st.lists(st.integers(1, 40), min_size=n, max_size=n))
    queue = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    jobs = JobTable.from_arrays(
        submit=submit, run=run_, units=[r[3] for r in rows], queue=queue,
        resources={"core": [r[0] for r in rows], "mem": [r[1] for r in rows],
                   "gpu": [r[2] for r in rows]})
    return platform.with_queues({"1": 60, "2": 300, "3": 1800}), jobs


def check_node_capacity(result, platform) -> None:
    """No node exceeds its capacity of any resource at any time (from the allocations;
    ends release before starts at equal times)."""
    cap = platform.capacity_matrix()
    names = platform.resource_names
    req = np.stack([result.jobs.resources[r] for r in names], axis=1)
    events = []
    for row, alloc in result.allocations.items():
        used = alloc.matrix(req[row], len(cap))
        events.append((int(result.end[row]), 0, -used))
        events.append((int(result.start[row]), 1, used))
    in_use = np.zeros_like(cap)
    for _t, _kind, delta in sorted(events, key=lambda e: (e[0], e[1])):
        in_use += delta
        assert (in_use <= cap).all()


SEEN = {"overtaken": 0, "multi_node": 0}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_workloads(), st.sampled_from(ORDERS),
       st.sampled_from(sorted(ALLOCATORS)))
def test_node_level_capacity_and_submission(w, order, allocator) -> None:
    platform, jobs = w
    sim, res = run(platform, jobs, PRB(order=order, allocator=allocator))
    assert not sim.counting
    ran = res.start >= 0
    assert ran.all()
    assert (res.start >= jobs["submit"]).all()
    check_node_capacity(res, platform)
    # interesting cases: a job started while an earlier-submitted one still waited (a
    # skip or a reordering), and a job spread over several nodes
    submit = jobs["submit"]
    SEEN["overtaken"] += int(any(
        (res.start[j] < res.start[i]) and submit[i] < submit[j] and res.start[j] > submit[i]
        for i in range(len(jobs)) for j in range(len(jobs))))
    SEEN["multi_node"] += sum(len(a.nodes) > 1 for a in res.allocations.values())


def test_the_interesting_cases_happened() -> None:
    # runs after the property test in the same process (pytest keeps file order)
    if SEEN["overtaken"] == 0 and SEEN["multi_node"] == 0:
        test_node_level_capacity_and_submission()
    assert SEEN["overtaken"] > 0
    assert SEEN["multi_node"] > 0


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 5), st.data())
def test_units_per_node_many_matches_units_per_node(k, n_nodes, data) -> None:
    n_res = 3
    reqs = np.array(data.draw(st.lists(st.lists(st.integers(0, 4), min_size=n_res,
                                                max_size=n_res), min_size=k, max_size=k)))
    free = np.array(data.draw(st.lists(st.lists(st.integers(0, 9), min_size=n_res,
                                                max_size=n_res), min_size=n_nodes,
                                       max_size=n_nodes)))
    many = units_per_node_many(reqs, free)
    for i in range(k):
        assert many[i].tolist() == units_per_node(reqs[i], free).tolist()


class NotOnEmpty(FirstFit):
    """A stricter allocator (test helper): refuses a job with an odd number of units
    while the whole platform is free."""

    name = "not-on-empty"

    def start(self, capacity):
        self.capacity_ = capacity

    def allocate(self, request, units, free):
        if units % 2 and (free == self.capacity_).all():
            return None
        return super().allocate(request, units, free)


def test_a_stricter_allocator_only_skips() -> None:
    # 2 nodes x (2 cores, 4 mem), FIFO. At t = 0 (platform empty): J0 (1 unit) refused by
    # the allocator although it fits; the walk goes on: J1 (2 units, 10 s) on node 0, J2
    # (2 units, 30 s) on node 1. At t = 10 node 0 is free again (not the whole
    # platform): J0 starts on node 0.

    class Probe(PRB):
        def start(self, view):
            super().start(view)
            self.allocator_ = NotOnEmpty()
            self.allocator_.start(view.capacity)

    platform = Platform.homogeneous(2, 2, mem=4)
    jobs = JobTable.from_arrays(submit=[0] * 3, run=[10, 10, 30], units=[1, 2, 2],
                                resources={"core": [1] * 3, "mem": [1] * 3})
    _, res = run(platform, jobs, Probe(order="fifo", allocator="first-fit"))
    assert starts(res) == [10, 0, 0]
    assert [res.allocations[j].nodes.tolist() for j in range(3)] == [[0], [0], [1]]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_workloads(same_submit=True), st.sampled_from(ORDERS),
       st.sampled_from(sorted(ALLOCATORS)))
def test_proactive_plan_is_realised_with_exact_estimates(w, order, allocator) -> None:
    """All jobs submitted at 0, exact estimates (run >= 1): the plan made at the first
    pass is exactly the schedule PRB then realises (at each plan time point the profile
    after t only gains resources, so the fit test is PRB's own)."""
    platform, jobs = w
    sim, res = run(platform, jobs, Recording(order=order, allocator=allocator))
    now, rows, plan = sim.dispatcher.plans_[0]
    assert now == 0 and rows == list(range(len(jobs)))
    assert plan.starts.tolist() == starts(res)
    for row, alloc in plan.allocations.items():
        assert res.start[row] == 0
        assert alloc.nodes.tolist() == res.allocations[row].nodes.tolist()
        assert alloc.counts.tolist() == res.allocations[row].counts.tolist()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_workloads(), st.booleans())
def test_prb_sjf_first_fit_equals_sjf_skip(w, counting) -> None:
    """PRB with the sjf ordering and first-fit makes the same schedule as SJF(skip=True)
    (same order, same skip walk, same allocator), node-level and counting."""
    platform, jobs = w
    if counting:
        platform = Platform.pooled(int(platform.capacity_matrix()[:, 0].sum()))
        jobs = JobTable.from_arrays(submit=jobs["submit"], run=jobs["run"],
                                    units=np.minimum(jobs["units"], 8))
    _, a = run(platform, jobs, PRB(order="sjf", allocator="first-fit"))
    _, b = run(platform, jobs, SJF(skip=True, allocator="first-fit"))
    assert starts(a) == starts(b)


def test_submission_only_shortcut_changes_no_decision() -> None:
    # PRB on a pooled platform skips the old jobs when only submissions happened since
    # the previous pass (same free cores): the schedule equals the one computed from
    # the whole queue at every pass.
    from dispatchlab.workload.synthetic import generate_synthetic

    class WholeQueue(PRB):
        def dispatch(self, view):
            self._after = None  # forget the previous pass: always the whole queue
            return super().dispatch(view)

    jobs = generate_synthetic(3000, cores=64, seed=11, load=0.95)
    for order in ("urgency", "walltime", "slowdown"):
        fast = Simulation(Platform.pooled(64), jobs, PRB(order=order)).run()
        whole = Simulation(Platform.pooled(64), jobs, WholeQueue(order=order)).run()
        assert fast.start.tolist() == whole.start.tolist()
        assert (fast.wait > 0).mean() > 0.2  # queues formed: the shortcut was exercised


def plain_proactive_schedule(view, rows, estimate, ordering, allocator, ewt, demand,
                             power=None):
    """The proactive plan as its docstring states it, with no shortcut: a profile of
    the plan's reservations, each job tried at every time point over the *minimum* of
    its window (and the *maximum* power over it), jobs re-sorted at every point."""
    from dispatchlab.dispatch.allocators import start_allocator
    from dispatchlab.dispatch.orderings import OrderKeys
    from dispatchlab.dispatch.prb import PowerProfile, power_sum
    from dispatchlab.dispatch.profile import planned

    n, now = len(rows), int(view.now)
    submit = np.asarray(view.jobs["submit"], dtype=np.int64)[rows]
    units = np.asarray(view.jobs["units"], dtype=np.int64)[rows]
    starts_ = np.full(n, -1, dtype=np.int64)
    allocs = {}
    prof = view.release_profile()
    if power is not None:
        pprof = PowerProfile(now, view.running.est_end, power.running)
        phys_power = power_sum(power.running)
    if view.counting:
        phys_cores = int(view.free_cores)
    else:
        start_allocator(allocator, view)
        phys = view.free.copy()
        reqs = view.requests[rows]
    t = now
    while (starts_ < 0).any():
        left = np.flatnonzero(starts_ < 0)
        keys = OrderKeys(rows[left], t, submit[left], estimate[left], ewt[left], demand[left])
        for p in left[ordering.sort(keys)].tolist():
            d, u = planned(int(estimate[p])), int(units[p])
            if power is not None:
                pw = float(power.pred[p])
                used_w = phys_power if t == now else pprof.max_over(t, d)
                if used_w + pw > power.budget:
                    continue
            if view.counting:
                room = prof.min_over(t, d)
                if t == now:
                    room = min(room, phys_cores)
                if u > room:
                    continue
                prof.reserve(t, d, u)
                if t == now:
                    phys_cores -= u
                    allocs[int(rows[p])] = None
            else:
                window = prof.window_min(t, d)
                if t == now:
                    window = np.minimum(window, phys)
                alloc = allocator.allocate(reqs[p], u, window)
                if alloc is None:
                    continue
                used = alloc.matrix(reqs[p], phys.shape[0])
                prof.reserve(t, d, used)
                if t == now:
                    phys -= used
                    allocs[int(rows[p])] = alloc
            if power is not None:
                pprof.reserve(t, d, pw)
                if t == now:
                    phys_power += pw
            starts_[p] = t
        k = np.searchsorted(prof.times, t, side="right")
        if k == len(prof.times):
            break
        t = int(prof.times[k])
    return ProactivePlan(starts_, allocs)


class PlainCheck(PRB):
    """PRB that, at every pass with a queue, compares :func:`proactive_schedule` with the
    plain plan above, with and without a power budget (test helper)."""

    def __init__(self, order="urgency", allocator="consolidate", seed=0):
        super().__init__(order=order, allocator=allocator)
        self.seed = seed

    def start(self, view):
        super().start(view)
        self.checked_ = 0
        self.rng_ = np.random.default_rng(self.seed)

    def dispatch(self, view):
        from dispatchlab.dispatch.prb import PowerBudget

        q = view.queue
        if len(q.jobs):
            rows, est = q.jobs, q.estimate
            args = (view, rows, est, self.ordering_, self.allocator_, self.ewt_[rows],
                    est * self.width_[rows])
            # power: whole watts half the time (sums exact), else fractions (rounding)
            pred = self.rng_.uniform(1, 100, len(rows))
            running = self.rng_.uniform(1, 100, len(view.running.jobs))
            if self.rng_.random() < 0.5:
                pred, running = np.round(pred), np.round(running)
            budget = float(self.rng_.uniform(50, 400))
            for power in (None, PowerBudget(pred, budget, running)):
                fast = proactive_schedule(*args, power=power)
                plain = plain_proactive_schedule(*args, power=power)
                assert fast.starts.tolist() == plain.starts.tolist()
                assert fast.allocations.keys() == plain.allocations.keys()
                for row, a in fast.allocations.items():
                    b = plain.allocations[row]
                    assert (a is None) == (b is None)
                    if a is not None:
                        assert a.nodes.tolist() == b.nodes.tolist()
                        assert a.counts.tolist() == b.counts.tolist()
            self.checked_ += 1
        return super().dispatch(view)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_workloads(), st.sampled_from(ORDERS), st.sampled_from(sorted(ALLOCATORS)),
       st.booleans(), st.integers(0, 2**16))
def test_proactive_schedule_equals_the_plain_plan(w, order, allocator, counting,
                                                  seed) -> None:
    """At every pass of a run (running jobs, later submissions, over-estimates), the
    plan equals the plain one: the window minimum is the free resources at the window's
    start (the walk's reservations all start at visited points, releases only add), the
    power maximum the power at it, the screens and the sort-once of static orderings
    drop no job that fits."""
    platform, jobs = w
    if counting:
        platform = Platform.pooled(int(platform.capacity_matrix()[:, 0].sum()))
        jobs = JobTable.from_arrays(submit=jobs["submit"], run=jobs["run"],
                                    units=np.minimum(jobs["units"], 8),
                                    requested_time=jobs["run"] * 2, queue=jobs["queue"])
    else:
        jobs = JobTable.from_arrays(
            submit=jobs["submit"], run=jobs["run"], units=jobs["units"],
            requested_time=jobs["run"] + 5, queue=jobs["queue"],
            resources={r: jobs.resources[r] for r in platform.resource_names})
    sim = Simulation(platform.with_queues({"1": 60, "2": 300, "3": 1800}), jobs,
                     PlainCheck(order=order, allocator=allocator, seed=seed),
                     WalltimePredictor())
    sim.run()
    assert sim.dispatcher.checked_ > 0


def test_power_profile_flags_a_rising_residue() -> None:
    # Running jobs of 0.3, 0.4 and 0 W released at 10, 20, 30: the levels are
    # 0.7, 0.7 - 0.3 = 0.39999999999999997, that - 0.4 = -5.55e-17 (a float residue)
    # and the exact 0.0 of the last release, which is *above* the level before it: a
    # window from 20 on has its maximum at its end, not at its start, so the plan must
    # not take the level at t for the window's maximum (it uses max_over then).
    from dispatchlab.dispatch.prb import PowerProfile

    prof = PowerProfile(0, np.array([10, 20, 30]), np.array([0.3, 0.4, 0.0]))
    assert prof.used[2] < 0.0 == prof.used[3]
    assert not prof.non_increasing
    assert prof.max_over(20, 20) == 0.0 > prof.at(20)
    assert PowerProfile(0, np.array([10, 20]), np.array([1.0, 2.0])).non_increasing
