"""EASY with a queue priority (seed 001): ``priority`` x ``scope``, hand-computed.

Semantics (README, "EASY with a priority"): with ``scope="queue"`` the waiting queue is
sorted by the priority, jobs start from the top while they fit, the first that does not
fit gets the reservation, and the others are backfilled in ``order`` (``fifo`` = queue
order, ``priority`` = the priority's order). With ``scope="backfill"`` the head is the
oldest job and the priority orders only the backfill scan. Estimates = requested times.
"""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY
from dispatchlab.dispatch.backfill import ReferenceEASY
from dispatchlab.dispatch.orderings import MauiOrder, make_ordering
from dispatchlab.testing import check_dispatcher


@pytest.fixture(autouse=True, params=["fast", "reference"])
def easy_class(request, monkeypatch):
    """Every test runs with ``EASY`` the fast (registered) class, then the plain
    :class:`ReferenceEASY` it is pinned to."""
    if request.param == "reference":
        monkeypatch.setitem(globals(), "EASY", ReferenceEASY)
    return request.param


def run(submit, run_s, units, cores, dispatcher, req=None):
    jobs = JobTable.from_arrays(submit=submit, run=run_s, units=units,
                                requested_time=run_s if req is None else req)
    return Simulation(Platform.pooled(cores), jobs, dispatcher).run()


# A (4 cores, 100 s) at 0 fills 4 cores. B (4 cores, 1000 s) at 10, C (2 cores, 10 s) at
# 20, D (2 cores, 50 s) at 30 wait. At 100 A ends, every job fits on its own:
SUBMIT, RUN, UNITS = [0, 10, 20, 30], [100, 1000, 10, 50], [4, 4, 2, 2]


def test_fcfs_easy_starts_the_oldest_job_first():
    # FCFS: B starts at 100 (4 cores); C and D wait for B's end at 1100, both fit then.
    r = run(SUBMIT, RUN, UNITS, 4, EASY())
    assert r.start.tolist() == [0, 100, 1100, 1100]


def test_queue_scope_sorts_the_queue_by_the_seeds_integer_slowdown():
    # MAUI SLD at 100: sld = (wait + req) // req: B (90 + 1000) // 1000 = 1,
    # C (80 + 10) // 10 = 9, D (70 + 50) // 50 = 2 -> order C, D, B. C and D fit (2 + 2)
    # and start at 100; B is the head: its reservation is at 110 (C ends) or later; at
    # 110 C ends (2 free): B still does not fit; at 150 D ends -> B starts at 150.
    r = run(SUBMIT, RUN, UNITS, 4, EASY(priority="maui:wait=0:sld=1", scope="queue"))
    assert r.start.tolist() == [0, 150, 100, 100]


def test_backfill_scope_keeps_the_oldest_job_as_head():
    # scope=backfill: the head is B, which fits at 100 and starts; the priority only
    # orders the backfill scan -> C and D wait for B's end, as FCFS.
    r = run(SUBMIT, RUN, UNITS, 4, EASY(priority="maui:wait=0:sld=1", scope="backfill"))
    assert r.start.tolist() == [0, 100, 1100, 1100]


# A (2 cores, 100 s) at 0; at 5: H (4 cores, 100 s), X1 (1 core, 10 s), X2 (2 cores,
# 10 s), in that file order. Priority "largest first" (maui size weight): H, X2, X1.
SUBMIT2, RUN2, UNITS2 = [0, 5, 5, 5], [100, 100, 10, 10], [2, 4, 1, 2]
LARGEST = "maui:wait=0:size=1"


def test_queue_scope_backfills_in_queue_order_by_default():
    # At 5: 2 free. Top of the priority order is H (4): does not fit -> head, shadow 100
    # (A's end), extra 0. Backfill in queue order: X1 (1 core, ends 15 <= 100) starts at
    # 5 (1 free left); X2 (2) does not fit. At 15 X1 ends (2 free): H still blocked, X2
    # (ends 25 <= 100) starts at 15. At 100 A ends and H starts (X2 ended at 25).
    r = run(SUBMIT2, RUN2, UNITS2, 4, EASY(priority=LARGEST, scope="queue"))
    assert r.start.tolist() == [0, 100, 5, 15]


def test_queue_scope_backfills_in_priority_order_with_order_priority():
    # Same, but the backfill scan follows the priority: X2 (2 cores) first, starts at 5
    # (0 free); X1 waits until X2 ends at 15 and starts then. H starts at 100.
    r = run(SUBMIT2, RUN2, UNITS2, 4, EASY(priority=LARGEST, scope="queue", order="priority"))
    assert r.start.tolist() == [0, 100, 15, 5]


def test_backfill_scope_scans_in_priority_order():
    # scope=backfill: the head is H (oldest waiting), the scan follows the priority:
    # X2 first at 5, X1 at 15 (as with order=priority above).
    r = run(SUBMIT2, RUN2, UNITS2, 4, EASY(priority=LARGEST, scope="backfill"))
    assert r.start.tolist() == [0, 100, 15, 5]


def test_fcfs_priority_is_todays_easy_in_both_scopes():
    rng = np.random.default_rng(3)
    for _ in range(5):
        n = 300
        submit = np.sort(rng.integers(0, 20_000, n))
        run_s = rng.integers(1, 3000, n)
        req = run_s + rng.integers(0, 3000, n)
        units = rng.integers(1, 17, n)
        plain = run(submit, run_s, units, 32, EASY(), req)
        for scope in ("queue", "backfill"):
            for prio in ("fcfs", "fifo", "maui"):  # maui's default weights are FCFS
                other = run(submit, run_s, units, 32, EASY(priority=prio, scope=scope), req)
                assert other.start.tolist() == plain.start.tolist(), (prio, scope)


class _NoShortcut(EASY):
    """Queue-scope EASY without the submission-only shortcut (the plain computation)."""

    def dispatch(self, view):
        self._cache = None
        return super().dispatch(view)


@pytest.mark.parametrize("priority", ["random:seed=4", "maui:wait=0:size=1",
                                      "maui:wait=0:sld=1", "maui:wait=-1"])
@pytest.mark.parametrize("order", ["fifo", "priority", "sjf"])
def test_queue_scope_shortcut_equals_the_plain_computation(priority, order):
    rng = np.random.default_rng(11)
    n = 400
    submit = np.sort(rng.integers(0, 30_000, n))
    run_s = rng.integers(1, 4000, n)
    req = run_s + rng.integers(0, 4000, n)
    units = rng.integers(1, 33, n)
    fast = run(submit, run_s, units, 64, EASY(priority=priority, scope="queue", order=order),
               req)
    plain = run(submit, run_s, units, 64,
                _NoShortcut(priority=priority, scope="queue", order=order), req)
    assert fast.start.tolist() == plain.start.tolist()


@pytest.mark.parametrize("params", [
    {"priority": "maui:wait=0:sld=1", "scope": "queue"},
    {"priority": "random:seed=1", "scope": "queue", "reservations": 2},
    {"priority": "maui:wait=0:size=1", "scope": "backfill"},
])
def test_priority_easy_passes_the_dispatcher_checks(params):
    # capacity, determinism and clone on pooled and node-level workloads
    check_dispatcher(EASY(**params), workloads=3)


def test_static_orderings():
    assert make_ordering("fcfs").static and make_ordering("random").static
    assert MauiOrder(wait=1, size=2).static and not MauiOrder(sld=1).static
    assert not make_ordering("urgency").static and not make_ordering("slowdown").static


@pytest.mark.parametrize("params, field", [
    ({"scope": "head"}, "scope"),
    ({"order": "priority"}, "order"),  # order=priority needs a priority
    ({"priority": "maui:sld=1", "order": "sjf"}, "order"),  # both, scope=backfill
    ({"priority": "maui:user=1", "scope": "queue"}, "user"),
    ({"priority": "l2r", "scope": "queue"}, "model"),
    ({"priority": "nope"}, "priority"),
])
def test_bad_priority_parameters_are_input_errors(params, field):
    with pytest.raises(InputError) as err:
        run([0, 1], [10, 10], [1, 1], 2, EASY(**params))
    assert err.value.field == field
