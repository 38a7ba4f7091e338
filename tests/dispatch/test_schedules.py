"""Hand-computed schedules for every dispatcher.

Each expected start time is reasoned in the comment above it, from the semantics in the
README (completions, then submissions, then one dispatch pass per timestamp; estimates
= requested time unless stated; planned duration = max(estimate, 1)).
"""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import EASY, FIFO, LJF, SJF, Conservative, make_dispatcher
from dispatchlab.dispatch.backfill import ReferenceConservative, ReferenceEASY
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.predict import Predictor, RealPredictor

#: the backfilling classes: the fast ones (registered as ``easy``, ``conservative``) and
#: the plain reference ones they are pinned to; every schedule here holds for both
BACKFILL = {"fast": (EASY, Conservative), "reference": (ReferenceEASY, ReferenceConservative)}


@pytest.fixture(autouse=True, params=list(BACKFILL))
def backfill_classes(request, monkeypatch):
    """Every test runs with ``EASY`` and ``Conservative`` bound to the fast classes,
    then to the reference classes."""
    easy, conservative = BACKFILL[request.param]
    monkeypatch.setitem(globals(), "EASY", easy)
    monkeypatch.setitem(globals(), "Conservative", conservative)
    return request.param


def simulate(submit, run, units, req, cores=10, dispatcher=None, predictor=None, **kw):
    jobs = JobTable.from_arrays(submit=submit, run=run, units=units, requested_time=req)
    return Simulation(Platform.pooled(cores), jobs, dispatcher or EASY(), predictor, **kw).run()


def starts(result) -> list[int]:
    return result.start.tolist()


# ---------------------------------------------------------------------------- EASY
def test_easy_backfills_behind_blocked_head_and_consumes_extra():
    # C=10. J1 (6 cores, 100 s) starts at 0. J2 (8 cores) arrives at 1 and blocks:
    # shadow = 100 (J1's end), extra = 10 - 8 = 2.
    # J3 (4 cores, 90 s) at 2: fits the 4 free cores and 2 + 90 = 92 <= 100 -> starts at 2.
    # J4 (2 cores, 200 s) at 3: no free core -> waits. At 92 J3 ends: 4 free; J4 runs past
    # the shadow but 2 <= extra 2 -> starts at 92 and consumes the extra.
    # At 100 J1 ends: free = 4 - 2 + 6 = 8 -> J2 starts at 100, not delayed.
    r = simulate([0, 1, 2, 3], [100, 50, 90, 200], [6, 8, 4, 2], [100, 50, 90, 200])
    assert starts(r) == [0, 100, 2, 92]


def test_easy_does_not_backfill_a_job_that_would_delay_the_head():
    # As above, but J3 (4 cores) runs 150 s: 2 + 150 > 100 and 4 > extra 2 -> not
    # backfilled. At 100 J2 starts (2 cores left); J3 waits for J2's estimated end 150.
    r = simulate([0, 1, 2], [100, 50, 150], [6, 8, 4], [100, 50, 150])
    assert starts(r) == [0, 100, 150]


def test_easy_backfills_a_job_ending_exactly_at_the_shadow_time():
    # J3 requests 98 s at time 2: 2 + 98 = 100 = shadow -> backfilled at 2.
    r = simulate([0, 1, 2], [100, 50, 98], [6, 8, 4], [100, 50, 98])
    assert starts(r) == [0, 100, 2]
    # one second more and it would delay the head: not backfilled (waits for J2, ends 150)
    r = simulate([0, 1, 2], [100, 50, 99], [6, 8, 4], [100, 50, 99])
    assert starts(r) == [0, 100, 150]


def test_easy_extra_capacity_is_consumed_in_queue_order():
    # C=10. J1 (6, 100 s) at 0. J2 (7) at 1 blocks: shadow 100, extra 10 - 7 = 3.
    # J3 (2 cores, 500 s) at 2: long, 2 <= extra 3 -> starts at 2; extra 1, free 2.
    # J4 (2 cores, 500 s) at 3: long, 2 > extra 1 -> waits.
    # J5 (1 core, 500 s) at 4: long, 1 <= extra 1 -> starts at 4; extra 0, free 1.
    # At 100: free 1 + 6 = 7 -> J2 starts (free 0). J2 ends at 150 -> J4 starts at 150.
    r = simulate([0, 1, 2, 3, 4], [100, 50, 500, 500, 500], [6, 7, 2, 2, 1],
                 [100, 50, 500, 500, 500])
    assert starts(r) == [0, 100, 2, 150, 4]


def test_easy_sjf_backfill_order_keeps_the_oldest_head():
    # C=10. J1 (6, 100 s) at 0; J2 (8) at 1 is the head (shadow 100, extra 2).
    # At 2, J3 (4 cores, 90 s) and J4 (4 cores, 50 s) arrive; only 4 cores are free.
    # EASY (queue order) backfills J3 at 2; at 92 J4 (4 > extra 2, 92 + 50 > 100) waits;
    # at 100 J2 starts (2 free) and J4 waits for J2's end, 150.
    # EASY-SJBF scans J4 (50 s) first: J4 at 2; at 52 J3 (52 + 90 > 100, 4 > 2) waits,
    # and starts when J2 ends at 150. The head J2 starts at 100 in both.
    args = ([0, 1, 2, 2], [100, 50, 90, 50], [6, 8, 4, 4], [100, 50, 90, 50])
    assert starts(simulate(*args, dispatcher=EASY())) == [0, 100, 2, 150]
    assert starts(simulate(*args, dispatcher=EASY(order="sjf"))) == [0, 100, 150, 2]


# the workload where EASY and conservative differ
# C=10. J1 (6, 100 s) at 0; J2 (8, 50 s) at 1; J3 (9, 150 s) at 2; J4 (2, 40 s) at 3;
# J5 (2, 400 s) at 5.
DIFFER = ([0, 1, 2, 3, 5], [100, 50, 150, 40, 400], [6, 8, 9, 2, 2], [100, 50, 150, 40, 400])


def test_easy_protects_only_the_head():
    # EASY: J4 at 3 (3 + 40 <= shadow 100). J5 at 5: head J2, shadow 100,
    # extra 10 - 8 = 2, free 2 -> backfilled at 5 (runs to 405).
    # At 100 J2 starts; at 150 J2 ends but only 8 cores are free (J5 holds 2) -> J3,
    # which needs 9, waits until J5 ends at 405.
    assert starts(simulate(*DIFFER, dispatcher=EASY())) == [0, 100, 405, 3, 5]


def test_conservative_reserves_every_job():
    # Conservative: J2 reserved at 100 ([100,150), 8 cores), J3 at 150 ([150,300), 9 cores).
    # J4 at 3: 4 cores free on [3,100) -> starts at 3. J5 at 5 (2 cores for 400 s): the
    # profile has 1 free core on [150,300) -> earliest window is [300,700) -> starts at 300.
    assert starts(simulate(*DIFFER, dispatcher=Conservative())) == [0, 100, 150, 3, 300]


def test_easy_with_two_reservations_protects_the_second_job():
    # reservations=2: J2 and J3 hold reservations (100 and 150), J5 is only backfilled if
    # it fits the profile over [5, 405): it does not (1 core on [150,300)). At 100 J2
    # starts and J5 becomes the second reserved job, at 300: same as conservative here.
    r = simulate(*DIFFER, dispatcher=EASY(reservations=2))
    assert starts(r) == [0, 100, 150, 3, 300]


def test_easy_with_one_reservation_is_easy():
    for args in (DIFFER, ([0, 1, 2, 3, 4], [100, 50, 500, 500, 500], [6, 7, 2, 2, 1],
                          [100, 50, 500, 500, 500])):
        a = starts(simulate(*args, dispatcher=EASY()))
        # force the general K-reservation planner with K=1 (the fast path is EASY's own)
        b = starts(simulate(*args, dispatcher=_GeneralEasy(reservations=1)))
        assert a == b
        # and the reference's profile planner with K=1 (the reference EASY's is the
        # shadow time and extra cores)
        assert starts(simulate(*args, dispatcher=_ProfileEasy())) == a


class _GeneralEasy(EASY):
    """EASY through the general K-reservation planner, for comparison with the fast path."""

    def dispatch(self, view):
        if view.queue_length == 0:
            return []
        return self._plan_counting(view, self.reservations)


class _ProfileEasy(ReferenceEASY):
    """The reference EASY through its K-reservation profile planner, with K=1."""

    def dispatch(self, view):
        if view.queue_length == 0:
            return []
        return self._reference_cores(view)


# ----------------------------------------------------------------------- FIFO / SJF / LJF
def test_fifo_head_blocks_tied_submit_times_keep_file_order():
    # C=4, all submitted at 0 in file order: J1 (2 cores, 10 s) starts; J2 (3 cores) does
    # not fit and blocks J3 (1 core), which would fit. At 10 J1 ends: J2 and J3 start.
    args = ([0, 0, 0], [10, 10, 5], [2, 3, 1], [10, 10, 5])
    assert starts(simulate(*args, cores=4, dispatcher=FIFO())) == [0, 10, 10]
    # EASY backfills J3 at 0 (0 + 5 <= shadow 10)
    assert starts(simulate(*args, cores=4, dispatcher=EASY())) == [0, 10, 0]


# C=4. J0 (3 cores, 10 s) at 0 starts. At 1: J1 (2 cores, 20 s), J2 (1 core, 100 s),
# J3 (1 core, 50 s); one core is free.
SORTED = ([0, 1, 1, 1], [10, 20, 100, 50], [3, 2, 1, 1], [10, 20, 100, 50])


def test_sjf_strict_and_skip():
    # SJF order at 1: J1 (20), J3 (50), J2 (100).
    # strict: J1 needs 2 > 1 free -> stop. At 10 (4 free): J1, J3, J2 all start.
    assert starts(simulate(*SORTED, cores=4, dispatcher=SJF())) == [0, 10, 10, 10]
    # skip: J1 does not fit, J3 does (starts at 1), J2 does not. At 10 (3 free): J1, J2.
    assert starts(simulate(*SORTED, cores=4, dispatcher=SJF(skip=True))) == [0, 10, 10, 1]


def test_ljf_strict():
    # LJF order at 1: J2 (100), J3 (50), J1 (20). J2 fits the free core -> starts at 1;
    # J3 does not fit -> stop. At 10 (3 free): J3 then J1 start.
    assert starts(simulate(*SORTED, cores=4, dispatcher=LJF())) == [0, 10, 1, 10]


# ------------------------------------------------------------------ time edge cases
@pytest.mark.parametrize("name", ["fifo", "sjf", "ljf", "easy", "conservative"])
def test_zero_second_job_triggers_another_pass_at_the_same_time(name):
    # C=4. At 5, J1 (4 cores, 0 s) starts and ends at 5; its completion is handled and
    # another pass at 5 starts J2 (4 cores).
    r = simulate([5, 5], [0, 7], [4, 4], [10, 10], cores=4, dispatcher=make_dispatcher(name))
    assert starts(r) == [5, 5]
    assert r.end.tolist() == [5, 12]


def test_job_overrunning_its_estimate_counts_as_ending_now():
    # C=4. J1 (3 cores) requests 50 s but runs 100 s (overrun = run). J2 (4 cores) at 1
    # blocks: shadow 50. At 60 J3 (1 core, 30 s) arrives: J1's estimated end (50) is past,
    # so it counts as ending now: shadow = 60, extra = 1 + 3 - 4 = 0; 60 + 30 > 60 and
    # 1 > 0 -> J3 is not backfilled. J1 really ends at 100: J2 starts (ends 110), then J3.
    args = ([0, 1, 60], [100, 10, 30], [3, 4, 1], [50, 10, 30])
    r = simulate(*args, cores=4)
    assert starts(r) == [0, 100, 110]
    assert r.status.tolist() == [0, 0, 0]
    # overrun = kill: J1 is stopped at its requested time 50 -> J2 runs 50..60, then J3.
    r = simulate(*args, cores=4, overrun="kill")
    assert starts(r) == [0, 50, 60]
    assert r.end.tolist() == [50, 60, 90]
    assert r.to_arrow()["status"].to_pylist() == ["killed", "completed", "completed"]


def test_real_predictor_backfills_with_actual_run_times():
    # J3 requests 500 s but runs 90 s: with requested times it cannot be backfilled (2 +
    # 500 > 100, 4 > extra 2), with the oracle it can (2 + 90 <= 100).
    args = ([0, 1, 2], [100, 50, 90], [6, 8, 4], [100, 50, 500])
    assert starts(simulate(*args)) == [0, 100, 150]
    assert starts(simulate(*args, predictor=RealPredictor())) == [0, 100, 2]


def test_job_too_large_is_rejected_and_its_submission_is_an_event():
    # C=4: J2 (5 cores) can never fit: rejected at its submission (t=3), counted, written.
    r = simulate([0, 3, 3], [10, 10, 10], [4, 5, 1], [10, 10, 10], cores=4, dispatcher=FIFO())
    table = r.to_arrow()
    assert table["status"].to_pylist() == ["completed", "rejected", "completed"]
    assert r.start.tolist() == [0, -1, 10]
    assert "needs 5 cores" in table["reject_reason"][1].as_py()
    assert r.events == 3 + 2  # 3 submissions + 2 completions


# ------------------------------------------------------------------------ node level
def _node_jobs(submit, run, cores_per_unit, units=None, req=None):
    n = len(submit)
    return JobTable.from_arrays(submit=submit, run=run, units=units or [1] * n,
                                requested_time=req or run,
                                resources={"core": cores_per_unit})


def test_node_fragmentation_summed_capacity_fits_but_no_node_does():
    # 2 nodes x 4 cores, units of c cores must sit on one node.
    # J1 (1 x 3 cores, 100 s) -> node 0 (1 core left). J2 (1 x 3, 200 s) -> node 1 (1 left).
    # J3 (1 x 2 cores) at 1: 2 cores are free in total but no node has 2 -> blocked until
    # J1 ends at 100 (a pooled model would start it at 1).
    # J4 (1 x 1 core, 50 s) at 2: fits node 0 and 2 + 50 <= shadow 100 -> backfilled at 2.
    jobs = _node_jobs([0, 0, 1, 2], [100, 200, 10, 50], [3, 3, 2, 1])
    r = Simulation(Platform.homogeneous(2, 4), jobs, EASY()).run()
    assert starts(r) == [0, 0, 100, 2]
    pooled = Simulation(Platform.pooled(8), JobTable.from_arrays(
        submit=[0, 0, 1, 2], run=[100, 200, 10, 50], units=[3, 3, 2, 1]), EASY()).run()
    assert starts(pooled)[2] == 1  # the summed-capacity answer, wrong for nodes


def test_node_level_backfill_never_takes_the_reserved_node():
    # 2 nodes x 4 cores. J1 (1 x 3, 100 s) -> node 0; J2 (1 x 3, 1000 s) -> node 1.
    # J3 (1 x 4 cores, 50 s) at 1 is the head: shadow 100, reserved on node 0.
    # J4 (1 x 1 core, 500 s) at 2 is long: first-fit on the free cores alone would pick
    # node 0 (and delay J3 to 502); the node-level extra (node 0: 0, node 1: 1) sends it
    # to node 1 -> J4 at 2, J3 at 100. J5 (1 x 1, 500 s) at 3: no extra left -> waits
    # until J3 ends at 150 (node 0 free again).
    jobs = _node_jobs([0, 0, 1, 2, 3], [100, 1000, 50, 500, 500], [3, 3, 4, 1, 1])
    r = Simulation(Platform.homogeneous(2, 4), jobs, EASY()).run()
    assert starts(r) == [0, 0, 100, 2, 150]
    alloc = r.to_arrow()["allocation"].to_pylist()
    assert alloc[3] == "1:1"  # node 1, one unit
    assert alloc[2] == "0:1"


def test_best_fit_packs_the_fullest_node():
    # 2 nodes x 4 cores. J1 (1 x 2 cores) -> node 0 (2 left). J2 (1 x 3) -> node 1 (1 left).
    # J3 (1 x 1 core): first-fit picks node 0; best-fit the node with the fewest free
    # cores that fits: node 1.
    jobs = _node_jobs([0, 0, 0], [100, 100, 100], [2, 3, 1])
    plat = Platform.homogeneous(2, 4)
    ff = Simulation(plat, jobs, FIFO()).run().to_arrow()["allocation"].to_pylist()
    bf = Simulation(plat, jobs, FIFO(allocator="best-fit")).run().to_arrow()["allocation"]
    assert ff == ["0:1", "1:1", "0:1"]
    assert bf.to_pylist() == ["0:1", "1:1", "1:1"]


def test_multi_resource_eurora_gpu_jobs_only_on_gpu_nodes():
    # Eurora (nodes_#64): 32 MIC nodes (ids 0-31, 2 MICs) then 32 GPU nodes (ids 32-63,
    # 2 GPUs). 70 units of (1 core + 1 GPU) need 35 GPU nodes' worth of GPUs: impossible
    # (64 GPUs) -> rejected. 64 units fit exactly, 2 per GPU node.
    n = 3
    jobs = JobTable.from_arrays(submit=[0] * n, run=[10] * n, units=[70, 64, 1],
                                resources={"core": [1] * n, "gpu": [1, 1, 0],
                                           "mic": [0, 0, 1]})
    r = Simulation(eurora_platform(), jobs, FIFO()).run()
    assert r.to_arrow()["status"].to_pylist() == ["rejected", "completed", "completed"]
    alloc = r.to_arrow()["allocation"].to_pylist()
    nodes = [int(part.split(":")[0]) for part in alloc[1].split(",")]
    assert sorted(nodes) == list(range(32, 64))  # GPU nodes are 32..63
    assert int(alloc[2].split(":")[0]) < 32  # the MIC job on a MIC node (0..31)


# ------------------------------------------------------------------ engine features
def test_speed_change_reschedules_the_end():
    # A dispatcher that starts everything it can and, at t=50, halves the speed of J1
    # (100 s of work). 50 s of work remain -> 100 s at half speed -> J1 ends at 150.
    from dispatchlab.dispatch import SetSpeed, Start

    class SlowDown(FIFO):
        def dispatch(self, view):
            out = super().dispatch(view)
            if view.now == 0:
                view.wake_at(50)
            if view.now == 50:
                out.append(SetSpeed(0, 0.5))
            return out

    r = simulate([0], [100], [1], [100], cores=1, dispatcher=SlowDown())
    assert r.end.tolist() == [150]
    assert isinstance(Start(0), Start)


def test_dispatcher_mistakes_are_caught_by_the_engine():
    from dispatchlab.dispatch import Dispatcher, DispatchError, Start

    class Greedy(Dispatcher):
        def __init__(self):
            pass

        def dispatch(self, view):
            return [Start(int(j)) for j in view.queue[0]]  # ignores capacity

    with pytest.raises(DispatchError, match="with only"):
        simulate([0, 0], [10, 10], [3, 3], [10, 10], cores=4, dispatcher=Greedy())


def test_results_are_identical_across_runs():
    from dispatchlab.workload.synthetic import generate_synthetic

    jobs = generate_synthetic(800, cores=32, seed=3)
    for d in (FIFO(), EASY(), EASY(order="sjf"), Conservative(), SJF(skip=True)):
        a = Simulation(Platform.pooled(32), jobs, d).run()
        b = Simulation(Platform.pooled(32), jobs, d).run()
        assert np.array_equal(a.start, b.start) and a.events == b.events


# ------------------------------------------------------------------ predictor expiry
class _HalfWall(Predictor):  # half the requested time
    def __init__(self, give_up: bool = False):
        self.give_up = give_up

    def predict(self, job, now):
        return int(self.jobs_["requested_time"][job]) // 2

    def on_expiry(self, job, now):
        return None if self.give_up else super().on_expiry(job, now)


def test_underestimate_expiry_jumps_to_the_walltime():
    # C=4, estimates = half the requested time. J1 (3 cores, run 100, est 50) at 0;
    # J2 (4 cores) at 1 blocks: shadow 50 (J1's planned end), extra 0.
    # J3 (1 core, est 20, runs 40) at 2: 2 + 20 <= 50 -> backfilled at 2, ends at 42.
    # J4 (1 core, est 15, runs 30) at 45: shadow still 50, 45 + 15 > 50, extra 0 -> waits.
    # At 60 (J5 arrives) J1 has outlived its estimate: Tsafrir's rule gives it its
    # wall-time, planned end 100 -> shadow 100, and J4 (60 + 15 <= 100) starts at 60.
    # J4 ends at 90: J5 (1 core, est 5) has 90 + 5 <= 100 -> starts at 90.
    # At 100 J1 (and J5) end: J2 starts.
    args = ([0, 1, 2, 45, 60], [100, 10, 40, 30, 10], [3, 4, 1, 1, 1], [100, 10, 40, 30, 10])
    r = simulate(*args, cores=4, predictor=_HalfWall())
    assert starts(r) == [0, 100, 2, 60, 90]
    # If the predictor gives up (no later estimate), J1 counts as ending now: at 60 the
    # shadow is 60, extra = 1 + 3 - 4 = 0, so J4 cannot backfill; J2 runs 100..110 and
    # then J4 and J5 start together.
    r = simulate(*args, cores=4, predictor=_HalfWall(give_up=True))
    assert starts(r) == [0, 100, 2, 110, 110]


def test_pooled_platform_with_multi_core_units_counts_cores_not_units():
    # Pooled 8 cores; units of 2 cores. J1: 3 units (6 cores, 10 s) at 0; J2: 2 units
    # (4 cores) at 0 does not fit the 2 free cores -> starts when J1 ends at 10.
    # (Counting units as cores would wrongly start J2 at 0.)
    jobs = JobTable.from_arrays(submit=[0, 0], run=[10, 10], units=[3, 2],
                                resources={"core": [2, 2]})
    r = Simulation(Platform.pooled(8), jobs, FIFO()).run()
    assert starts(r) == [0, 10]


def test_a_dispatcher_may_reject_waiting_jobs():
    # A FIFO that refuses jobs wider than 2 cores: J2 (3 cores) is rejected at its
    # submission pass (t=1) with the dispatcher's reason. That pass returns only the
    # rejection, and there is one pass per timestamp, so J3 waits for the next event:
    # J1's end at 10, when it starts (no 3-core head blocks it any more).
    from dispatchlab.dispatch import Reject

    class NarrowOnly(FIFO):
        def dispatch(self, view):
            jobs, units, *_ = view.queue
            wide = [Reject(int(j), "wider than 2 cores") for j, u in zip(jobs, units,
                                                                        strict=True) if u > 2]
            if wide:
                return wide
            return super().dispatch(view)

    r = simulate([0, 1, 1], [10, 10, 10], [2, 3, 2], [10, 10, 10], cores=4,
                 dispatcher=NarrowOnly())
    table = r.to_arrow()
    assert table["status"].to_pylist() == ["completed", "rejected", "completed"]
    assert table["reject_reason"][1].as_py() == "wider than 2 cores"
    assert starts(r) == [0, -1, 10]
