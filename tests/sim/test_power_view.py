"""The engine's measured-power accessors (``View.job_power``, ``node_power``,
``running_power``, ``speed``) and jobs pinned by the engine (a hot start's jobs)."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import FIFO, DispatchError
from dispatchlab.dispatch.base import Allocation, SetPower, Start
from dispatchlab.power.data import with_power
from dispatchlab.sim.duration import DurationModel


def NODE_LEVEL(n: int) -> dict[str, list[int]]:
    """Per-unit requests of one core and one memory unit: node-level placement."""
    return {"core": [1] * n, "mem": [1] * n}


def powered(table: JobTable, watts: list[float]) -> JobTable:
    w = np.asarray(watts, dtype=np.float64)
    return with_power(table, {"power_mean": w, "power_max": w, "power_std": 0 * w})


class Halves(DurationModel):
    """Speed = level (the proportional model, F = 1)."""

    name = "halves"

    def speed(self, job, level):
        return level


class Probe(FIFO):
    """FIFO on nodes (first free node for each unit) that throttles job row 0 to 0.5 at
    t = 10 and records (now, node power, running power, speed of row 0 at 0.5); called
    with an empty queue too."""

    call_on_empty_queue = True

    def start(self, view):
        super().start(view)
        self.seen = []

    def dispatch(self, view):
        self.seen.append((view.now, view.node_power().tolist(), view.running_power(),
                          view.speed(0, 0.5)))
        out = []
        free = view.free[:, 0].copy()
        for j, u in zip(view.queue.jobs.tolist(), view.queue.units.tolist(), strict=True):
            nodes = np.flatnonzero(free >= 1)[:u]
            if len(nodes) < u:
                break
            free[nodes] -= 1
            out.append(Start(j, Allocation(nodes, np.ones(len(nodes), dtype=np.int64))))
        if view.now == 10 and view.power_level(0) == 1.0:
            out.append(SetPower(0, 0.5))
        if view.now < 10:
            view.wake_at(10)
        return out


def test_node_power_splits_real_power_by_units_and_follows_the_level():
    # 3 nodes of 1 core. J0: 2 units, 400 W, 100 s, starts at 0 on nodes 0 and 1 (200 W
    # each). J1: 1 unit, 50 W, 30 s, starts at 0 on node 2. At t = 10 (a wake-up) J0 goes
    # to level 0.5 (seen at the next pass: 100 W per node) and, at speed 0.5 (Halves),
    # its 90 s of work left take 180 s: it ends at 190. J1 ends at 30.
    jobs = powered(JobTable.from_arrays(submit=[0, 0], run=[100, 30], units=[2, 1],
                                        resources=NODE_LEVEL(2)), [400.0, 50.0])
    sim = Simulation(Platform.homogeneous(3, 1, mem=4), jobs, Probe(), duration_model=Halves())
    r = sim.run()
    seen = sim.dispatcher.seen
    assert seen[0] == (0, [0.0, 0.0, 0.0], 0.0, 0.5)  # before the first starts
    assert seen[1] == (10, [200.0, 200.0, 50.0], 450.0, 0.5)
    # the pass at 30 (J1 ended) sees J0 at half power
    assert seen[2] == (30, [100.0, 100.0, 0.0], 200.0, 0.5)
    assert r.end.tolist() == [190, 30]


def test_measured_power_needs_job_power_and_nodes():
    jobs = JobTable.from_arrays(submit=[0], run=[10], units=[1])

    class AsksNodes(FIFO):
        def dispatch(self, view):
            view.node_power()
            return []

    class AsksTotal(FIFO):
        def dispatch(self, view):
            view.running_power()
            return []

    with pytest.raises(DispatchError, match="counting"):
        Simulation(Platform.pooled(2), powered(jobs, [5.0]), AsksNodes()).run()
    with pytest.raises(DispatchError, match="carry none"):
        Simulation(Platform.pooled(2), jobs, AsksTotal()).run()


def test_pinned_jobs_start_at_submission_on_their_nodes_without_the_dispatcher():
    # 2 nodes of 1 core. Row 0 is pinned to node 1 (hot start), 600 s; rows 1 and 2
    # (1 unit, 100 s) arrive at 0. FIFO places by first free node: row 1 on node 0 at 0,
    # row 2 waits for the first free node: node 0 at 100 (row 1 ends before the pinned
    # job). The dispatcher never sees row 0 in its queue; its Changes list it as pinned.
    jobs = JobTable.from_arrays(submit=[0, 0, 0], run=[600, 100, 100], units=[1, 1, 1],
                                resources=NODE_LEVEL(3))

    class Seen(FIFO):
        def start(self, view):
            super().start(view)
            self.queues, self.pinned = [], []

        def dispatch(self, view):
            self.queues.append(view.queue.jobs.tolist())
            self.pinned.extend(view.changed.pinned)
            return super().dispatch(view)

    pin = {0: Allocation(np.array([1]), np.array([1]))}
    sim = Simulation(Platform.homogeneous(2, 1, mem=4), jobs, Seen(), pinned=pin)
    r = sim.run()
    assert r.start.tolist() == [0, 0, 100]
    assert r.allocations[0].nodes.tolist() == [1]
    assert r.allocations[1].nodes.tolist() == [0]
    assert sim.dispatcher.queues[0] == [1, 2]
    assert sim.dispatcher.pinned == [0]


def test_pinned_jobs_are_checked():
    jobs = JobTable.from_arrays(submit=[0], run=[10], units=[1], resources=NODE_LEVEL(1))
    with pytest.raises(InputError, match="not a row"):
        Simulation(Platform.homogeneous(2, 1, mem=4), jobs, FIFO(),
                   pinned={3: Allocation(np.array([0]), np.array([1]))})
    with pytest.raises(InputError, match="needs an Allocation"):
        Simulation(Platform.homogeneous(2, 1, mem=4), jobs, FIFO(), pinned={0: None})
    jobs = JobTable.from_arrays(submit=[0], run=[10], units=[1])
    # on a counting platform the allocation is ignored: the job takes its cores
    r = Simulation(Platform.pooled(2), jobs, FIFO(), pinned={0: None}).run()
    assert r.start.tolist() == [0]
