"""EASY+PC and the greedy knapsack (seed 003), hand-computed. Estimates = run times
(requested = run) unless stated; predictions come from a table (mean, max, std W)."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY
from dispatchlab.dispatch.powercap.capped import (
    EasyPC,
    Knapsack,
    ReferenceEasyPC,
    ReferenceKnapsack,
)
from dispatchlab.power import PowerCap
from dispatchlab.predict.power.base import PowerPrediction, PowerPredictor


class Table(PowerPredictor):
    """Predictions given per job row."""

    name = "table"

    def __init__(self, rows=None) -> None:
        self.rows = rows

    def predict(self, job, now):
        return PowerPrediction(*self.rows[job])


#: the fast classes (registered as ``easy-pc``, ``knapsack``) and the plain reference
#: classes they are pinned to: every schedule here holds for both
CLASSES = {"fast": (EasyPC, Knapsack), "reference": (ReferenceEasyPC, ReferenceKnapsack)}


@pytest.fixture(autouse=True, params=list(CLASSES))
def power_capped_classes(request, monkeypatch):
    """Every test runs with ``EasyPC`` and ``Knapsack`` bound to the fast classes, then
    to the reference classes."""
    easy_pc, knapsack = CLASSES[request.param]
    monkeypatch.setitem(globals(), "EasyPC", easy_pc)
    monkeypatch.setitem(globals(), "Knapsack", knapsack)
    return request.param


def run(submit, run_s, units, cores, dispatcher, rows, cap):
    jobs = JobTable.from_arrays(submit=submit, run=run_s, units=units)
    return Simulation(Platform.pooled(cores), jobs, dispatcher, power_predictor=Table(rows),
                      cap=cap).run()


# three 1-core jobs at 0, each predicted (mean 300, max 500, std 100), cap 1000:
#   mean: 300 + 300 + 300 = 900 <= 1000 -> all three start at 0
#   max: 500 + 500 = 1000 <= 1000, + 500 = 1500 > 1000 -> two
#   gaussian68: 900 + 1 x sqrt(3) x 100 = 1073 > 1000; 600 + 141 = 741 -> two
#   gaussian95: 600 + 2 x 141.4 = 883 -> two; three: 900 + 346 = 1246 -> no
#   gaussian99: 600 + 3 x 141.4 = 1024 > 1000 -> one (300 + 300 = 600)
@pytest.mark.parametrize("check, started", [("mean", 3), ("max", 2), ("gaussian68", 2),
                                            ("gaussian95", 2), ("gaussian99", 1)])
def test_each_check_rule(check, started):
    rows = [(300.0, 500.0, 100.0)] * 3
    r = run([0, 0, 0], [100, 100, 100], [1, 1, 1], 10, EasyPC(check=check), rows,
            PowerCap.window(1000.0))
    assert int((r.start == 0).sum()) == started
    # with a cap of 1100 W gaussian68 lets the third in: 900 + 173 = 1073 <= 1100
    if check == "gaussian68":
        r = run([0, 0, 0], [100, 100, 100], [1, 1, 1], 10, EasyPC(check=check), rows,
                PowerCap.window(1100.0))
        assert int((r.start == 0).sum()) == 3


# 4 cores, cap 1000 W (mean check). X (1 core, 100 s, 600 W) starts at 0. At 1: H (1 core,
# 100 s, 500 W), B (1 core, 50 s, 300 W), C (1 core, 500 s, 400 W).
ROWS = [(600.0, 600.0, 0.0), (500.0, 500.0, 0.0), (300.0, 300.0, 0.0), (400.0, 400.0, 0.0)]
SUBMIT, RUN, UNITS = [0, 1, 1, 1], [100, 100, 50, 500], [1, 1, 1, 1]


def test_easy_pc_power_bound_shadow_time():
    # At 1: H fits the cores (3 free) but not the power (600 + 500 > 1000): head. Its
    # shadow: X's release at 100 -> 500 <= 1000: shadow 100, extra cores 4 - 1 = 3, set
    # at the shadow {H} = 500 W. B: fits now (600 + 300 = 900) and ends at 51 <= 100 ->
    # starts at 1. C: 900 + 400 > 1000 -> waits.
    # At 51 B ends: C fits now (600 + 400 = 1000) but ends at 551 > 100: long; extra
    # cores 3 >= 1 and at the shadow 500 + 400 = 900 <= 1000 -> starts at 51.
    # At 100 X ends: H: 400 + 500 = 900 -> starts at 100 (not delayed).
    r = run(SUBMIT, RUN, UNITS, 4, EasyPC(), ROWS, PowerCap.window(1000.0))
    assert r.start.tolist() == [0, 100, 1, 51]


def test_easy_pc_cap_change_counts_as_a_release():
    # The cap ends at 60: H's shadow is 60 (the cap step comes before X's release at
    # 100; at 60 H fits the 3 free cores without a cap); B ends at 51 <= 60 -> starts
    # at 1; C starts at 51 as a long job (extra cores 2, no cap at the shadow); at 60 the
    # cap goes and H starts (2 cores free).
    r = run(SUBMIT, RUN, UNITS, 4, EasyPC(), ROWS, PowerCap.window(1000.0, 0, 60))
    assert r.start.tolist() == [0, 60, 1, 51]


# 4 cores; blocker Z (4 cores, 10 s, 0 W) at 0; cap 920 W (mean check). X1 at 1 (1 core,
# 10 s, 900 W), X2 at 5 (1 core, 10 s, 50 W), X3 at 9 (1 core, 10 s, 100 W).
KN_ROWS = [(0.0, 0.0, 0.0), (900.0, 900.0, 0.0), (50.0, 50.0, 0.0), (100.0, 100.0, 0.0)]


def test_knapsack_wait_stops_at_the_first_job_that_does_not_fit():
    # At 10 (Z ends): value / weight = wait / mean: X1 9 / 900 = 0.01, X2 5 / 50 = 0.1,
    # X3 1 / 100 = 0.01 -> X2, X1, X3 (X1 before X3: queue order). X2 starts (50 W); X1:
    # 950 > 920 -> stop: X3 does not start although it fits. At 20 X2 ends: X1 (0.0122),
    # X3 (0.11) -> X3 first now: starts (100 W); X1: 1000 > 920 -> stop. At 30 X3 ends:
    # X1 starts.
    r = run([0, 1, 5, 9], [10, 10, 10, 10], [4, 1, 1, 1], 4, Knapsack(value="wait"),
            KN_ROWS, PowerCap.window(920.0))
    assert r.start.tolist() == [0, 30, 10, 20]


def test_knapsack_stretch_orders_by_stretch_per_watt():
    # P at 1 (1 core, 1000 s, 100 W), Q at 2 (1 core, 10 s, 100 W); blocker until 10;
    # cap 150 W: one at a time. wait / mean: P 0.09 > Q 0.08 -> P first (Q at 1010).
    # stretch / mean: P (9 + 1000) / 1000 / 100 = 0.0101, Q (8 + 10) / 10 / 100 = 0.018
    # -> Q first at 10, P when Q ends at 20.
    rows = [(0.0, 0.0, 0.0), (100.0, 100.0, 0.0), (100.0, 100.0, 0.0)]
    cap = PowerCap.window(150.0)
    r = run([0, 1, 2], [10, 1000, 10], [4, 1, 1], 4, Knapsack(value="wait"), rows, cap)
    assert r.start.tolist() == [0, 10, 1010]
    r = run([0, 1, 2], [10, 1000, 10], [4, 1, 1], 4, Knapsack(value="stretch"), rows, cap)
    assert r.start.tolist() == [0, 20, 10]


def test_without_a_cap_they_are_easy():
    rng = np.random.default_rng(5)
    n = 400
    submit = np.sort(rng.integers(0, 20_000, n))
    run_s = rng.integers(1, 3000, n)
    units = rng.integers(1, 17, n)
    rows = [(100.0 * u, 150.0 * u, 10.0) for u in units.tolist()]
    jobs = JobTable.from_arrays(submit=submit, run=run_s, units=units,
                                requested_time=run_s + 600)
    plain = Simulation(Platform.pooled(32), jobs, EASY()).run()
    for disp in (EasyPC(), Knapsack(), Knapsack(value="stretch", check="gaussian99")):
        r = Simulation(Platform.pooled(32), jobs, disp, power_predictor=Table(rows)).run()
        assert r.start.tolist() == plain.start.tolist(), disp


def test_capped_runs_respect_the_predicted_power_and_capacity():
    # with check = max and every running job's max counted, the predicted max of the
    # running set never exceeds the cap inside the window (jobs running when it opens
    # excepted: here the window opens at 0)
    rng = np.random.default_rng(8)
    n = 300
    submit = np.sort(rng.integers(0, 10_000, n))
    run_s = rng.integers(1, 2000, n)
    units = rng.integers(1, 9, n)
    rows = [(80.0 * u, 120.0 * u, 10.0) for u in units.tolist()]
    jobs = JobTable.from_arrays(submit=submit, run=run_s, units=units)
    for disp in (EasyPC(check="max"), EasyPC(order="saf", check="max"),
                 Knapsack(check="max")):
        r = Simulation(Platform.pooled(32), jobs, disp, power_predictor=Table(rows),
                       cap=PowerCap.window(1500.0)).run()
        peak = np.array([p[1] for p in rows])
        for t in np.unique(r.start):
            on = (r.start <= t) & (r.end > t)
            assert peak[on].sum() <= 1500.0 + 1e-9
            assert units[on].sum() <= 32
        assert (r.start >= submit).all()


def test_errors():
    with pytest.raises(InputError):
        EasyPC(check="median").validate()
    with pytest.raises(InputError):
        EasyPC(order="sjf").validate()
    with pytest.raises(InputError):
        Knapsack(value="size").validate()
    jobs = JobTable.from_arrays(submit=[0], run=[1], units=[1])
    with pytest.raises(InputError, match="power predictor"):
        Simulation(Platform.pooled(2), jobs, EasyPC()).run()


@pytest.mark.parametrize("which", ["easy-pc", "knapsack"])
def test_a_job_that_never_fits_a_permanent_cap_is_rejected(which):
    disp = EasyPC() if which == "easy-pc" else Knapsack()
    # cap 1000 W for the whole run; J1 alone is predicted 1500 W: rejected at its first
    # pass with the reason; J0 and J2 run (J0 0-10, J2 from 1)
    rows = [(300.0, 300.0, 0.0), (1500.0, 1500.0, 0.0), (300.0, 300.0, 0.0)]
    r = run([0, 1, 1], [10, 10, 10], [1, 1, 1], 4, disp, rows, PowerCap.window(1000.0))
    status = r.to_arrow()["status"].to_pylist()
    assert status == ["completed", "rejected", "completed"]
    assert "fails the mean check alone" in r.reject_reason[1]
    # with a cap that ends, it waits for the end instead (starts at 50). EASY+PC
    # backfills J2 at 1; the knapsack at 1 sees equal values 0 / W = 0, so J1 comes first
    # (queue order), does not fit and stops the pass: J2 starts at 10 (ratio 9 / 300 >
    # 9 / 1500)
    r = run([0, 1, 1], [10, 10, 10], [1, 1, 1], 4, disp, rows, PowerCap.window(1000.0, 0, 50))
    assert r.start.tolist() == [0, 50, 1 if which == "easy-pc" else 10]
