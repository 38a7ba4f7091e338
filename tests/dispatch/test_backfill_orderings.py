"""EASY's backfill scan order comes from the ordering registry (any registered name)."""

from __future__ import annotations

import dataclasses

import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform import NodeType, Platform
from dispatchlab.sim.engine import Simulation
from dispatchlab.workload.jobs import JobTable


def _workload() -> JobTable:
    # 4 cores, all submitted at 0, requested time = run time:
    #   J0 3 cores 100 s, J1 4 cores 100 s (the head: blocked, shadow 100, extra 0),
    #   J2 1 core 50 s in queue 2, J3 1 core 30 s in queue 1.
    return JobTable.from_arrays(submit=[0, 0, 0, 0], run=[100, 100, 50, 30],
                                units=[3, 4, 1, 1], requested_time=[100, 100, 50, 30],
                                queue=[1, 1, 2, 1])


PLATFORM = dataclasses.replace(Platform.pooled(4), queues={"1": 10, "2": 1000})

#: the registered (fast) EASY and its plain reference class, built by name alike
NAMES = ["easy", "dispatchlab.dispatch.backfill:ReferenceEASY"]


@pytest.mark.parametrize(("order", "starts"), [
    # fifo: J2 backfills at 0 (ends 50 <= shadow 100); at 50 J3 (ends 80) backfills
    ("fifo", [0, 100, 0, 50]),
    # sjf: J3 (30 s) first at 0; at 30 J2 (ends 80 <= 100) backfills
    ("sjf", [0, 100, 30, 0]),
    # urgency (wait + 1) / EWT: J3's queue has EWT 10, J2's 1000 -> J3 first, as sjf
    ("urgency", [0, 100, 30, 0]),
    # ewt: ascending queue EWT -> J3 first
    ("ewt", [0, 100, 30, 0]),
    # walltime: ascending estimate -> J3 first
    ("walltime", [0, 100, 30, 0]),
])
@pytest.mark.parametrize("name", NAMES)
def test_easy_backfill_order(order: str, starts: list[int], name: str) -> None:
    result = Simulation(PLATFORM, _workload(), make_dispatcher(name, order=order)).run()
    assert result.start.tolist() == starts


@pytest.mark.parametrize("name", NAMES)
def test_easy_urgency_follows_the_queue_table(name: str) -> None:
    # swap the EWTs: J2's queue is now the urgent one -> J2 first, as fifo
    platform = dataclasses.replace(Platform.pooled(4), queues={"1": 1000, "2": 10})
    result = Simulation(platform, _workload(), make_dispatcher(name, order="urgency")).run()
    assert result.start.tolist() == [0, 100, 0, 50]


@pytest.mark.parametrize("name", NAMES)
def test_node_level_easy_with_an_ordering_and_consolidate(name: str) -> None:
    # the same workload on one node of 4 cores: identical schedule, consolidate allocator
    platform = dataclasses.replace(Platform((NodeType("n", 1, {"core": 4, "mem": 8}),)),
                                   queues={"1": 10, "2": 1000})
    disp = make_dispatcher(name, order="urgency", allocator="consolidate")
    result = Simulation(platform, _workload(), disp).run()
    assert result.start.tolist() == [0, 100, 30, 0]


@pytest.mark.parametrize("name", NAMES)
def test_unknown_order_is_an_input_error_with_a_suggestion(name: str) -> None:
    with pytest.raises(InputError, match="did you mean 'urgency'"):
        make_dispatcher(name, order="urgenci")
