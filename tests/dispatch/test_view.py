"""The dispatcher's view: named columns, the shared release profile, what changed."""

from __future__ import annotations

import numpy as np

from dispatchlab.dispatch.base import Dispatcher, Start
from dispatchlab.dispatch.profile import CoreProfile, NodeProfile
from dispatchlab.platform import NodeType, Platform
from dispatchlab.predict.duration.base import Predictor
from dispatchlab.sim.engine import Simulation
from dispatchlab.workload.jobs import JobTable


class Recorder(Dispatcher):
    """FIFO that records what the view shows at every pass."""

    name = "recorder"

    def __init__(self) -> None:
        pass

    def start(self, view) -> None:
        self.seen_: list[dict] = []

    def dispatch(self, view):
        q, r = view.queue, view.running
        prof = view.release_profile()
        self.seen_.append({
            "now": view.now, "queue": q.jobs.tolist(), "estimate": q.estimate.tolist(),
            "submit": q.submit.tolist(), "running": r.jobs.tolist(),
            "est_end": r.est_end.tolist(), "start": r.start.tolist(),
            "changed": view.changed, "profile": prof.rows(),
            "same_object": prof is view.release_profile()})
        if view.counting:
            free, out = view.free_cores, []
            for job, units in zip(q.jobs.tolist(), q.units.tolist(), strict=True):
                if units > free:
                    break
                free -= units
                out.append(Start(job))
            return out
        return []


def test_named_columns_changes_and_profile_on_a_counting_platform() -> None:
    # 4 cores; A (3 cores, 100 s) at 0, B (2 cores, 50 s) at 0, C (1 core, 10 s) at 5.
    # t=0: A starts (1 free), B blocks.  t=5: C submitted, B still blocks (FIFO).
    # t=100: A ends -> B and C start.
    jobs = JobTable.from_arrays(submit=[0, 0, 5], run=[100, 50, 10], units=[3, 2, 1],
                                requested_time=[100, 50, 10])
    sim = Simulation(Platform.pooled(4), jobs, Recorder())
    sim.run()
    seen = sim.dispatcher.seen_
    assert [s["now"] for s in seen] == [0, 5, 100, 110, 150]
    first, second, third = seen[0], seen[1], seen[2]
    assert first["queue"] == [0, 1] and first["submit"] == [0, 0]
    assert first["changed"].submitted == (0, 1) and first["changed"].completed == ()
    assert first["profile"] == [(0, 4)]  # nothing running yet
    # at t=5: A runs until 100 (est = requested = 100); C is new
    assert second["running"] == [0] and second["est_end"] == [100] and second["start"] == [0]
    assert second["changed"].submitted == (2,) and second["changed"].completed == ()
    assert second["profile"] == [(5, 1), (100, 4)]
    assert not second["same_object"]  # every call returns a copy
    assert third["changed"].completed == (0,) and third["changed"].submitted == ()


def test_release_profile_is_a_copy_and_reserving_in_it_changes_nothing() -> None:
    class Reserver(Recorder):
        def dispatch(self, view):
            prof = view.release_profile()
            prof.reserve(view.now, 1000, 1)
            self.after_ = view.release_profile().rows()
            return super().dispatch(view)

    jobs = JobTable.from_arrays(submit=[0, 1], run=[50, 5], units=[4, 1],
                                requested_time=[50, 5])
    sim = Simulation(Platform.pooled(4), jobs, Reserver())
    sim.run()
    # at t=1 job 0 holds all 4 cores until 50: the reservation above did not leak
    assert sim.dispatcher.seen_[1]["profile"] == [(1, 0), (50, 4)]


def test_node_profile_equals_the_running_jobs_releases() -> None:
    platform = Platform((NodeType("a", 2, {"core": 4, "mem": 8}),))
    # job 0: 2 units of (2 core, 2 mem) -> one per node (first-fit packs 2 on node 0);
    # job 1: 1 unit of (2 core, 4 mem).  Estimates 30 and 60 (requested times).
    jobs = JobTable.from_arrays(submit=[0, 0, 1], run=[30, 60, 5], units=[2, 1, 1],
                                requested_time=[30, 60, 5],
                                resources={"core": [2, 2, 4], "mem": [2, 4, 8]})

    class NodeFIFO(Recorder):
        def dispatch(self, view):
            from dispatchlab.dispatch.allocators import FirstFit

            super().dispatch(view)
            free, out, alloc = view.free.copy(), [], FirstFit()
            for job, units in zip(view.queue.jobs.tolist(), view.queue.units.tolist(),
                                  strict=True):
                a = alloc.allocate(view.requests[job], units, free)
                if a is None:
                    break
                free[a.nodes] -= a.counts[:, None] * view.requests[job][None, :]
                out.append(Start(job, a))
            return out

    sim = Simulation(platform, jobs, NodeFIFO())
    sim.run()
    at1 = sim.dispatcher.seen_[1]
    assert at1["now"] == 1 and at1["running"] == [0, 1]
    # node 0 holds both units of job 0 (4 core, 4 mem): free (0, 4); node 1 holds job 1:
    # free (2, 4). At 30 job 0 releases node 0 -> (4, 8); at 60 job 1 -> node 1 (4, 8).
    assert at1["profile"] == [(1, [[0, 4], [2, 4]]), (30, [[4, 8], [2, 4]]),
                              (60, [[4, 8], [4, 8]])]


def test_reestimated_jobs_are_reported() -> None:
    class Short(Predictor):
        name = "short"

        def __init__(self) -> None:
            pass

        def predict(self, job, now):
            return 10

        def on_expiry(self, job, now):
            return 100  # a new estimate: ends at start + 100

    jobs = JobTable.from_arrays(submit=[0, 0, 20], run=[50, 50, 1], units=[2, 2, 1],
                                requested_time=[100, 100, 100])
    sim = Simulation(Platform.pooled(2), jobs, Recorder(), Short())
    sim.run()
    # t=20: job 0 (estimate 10) expired at 10: re-estimated at the pass of t=20
    at20 = next(s for s in sim.dispatcher.seen_ if s["now"] == 20)
    assert at20["changed"].reestimated == (0,)
    assert at20["est_end"] == [100]


def test_profile_classes() -> None:
    prof = CoreProfile(0, np.array([5, 5, 9]), np.array([1, 2, 3]), 0)
    assert prof.copy().rows() == prof.rows() == [(0, 0), (5, 3), (9, 6)]
    node = NodeProfile(0, np.zeros((1, 1), dtype=np.int64), [(4, np.ones((1, 1), np.int64))])
    twin = node.copy()
    twin.reserve(0, 2, np.ones((1, 1), dtype=np.int64) * -1)
    assert node.rows() == [(0, [[0]]), (4, [[1]])]
