"""The user-history profile predictor (D, Galleguillos et al.), on hand-made histories
driven through the real engine.

Every workload runs on a platform large enough that each job starts at its submission,
so a job submitted at ``s`` with run time ``r`` completes at ``s + r``. The job under
test is always the last row; its estimate is ``result.estimate[-1]``.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from dispatchlab import Platform, Simulation
from dispatchlab.dispatch import EASY, FIFO
from dispatchlab.predict import PREDICTORS, HistoryPredictor, make_predictor
from dispatchlab.predict.duration.history import name_prefix
from dispatchlab.testing import check_predictor
from dispatchlab.workload import load_trace
from dispatchlab.workload.jobs import JobTable


def simulate(*, submit, run, requested, user, units=None, app=None, queue=None,
             name=None, resources=None, platform=None, **params):
    """Run FIFO + HistoryPredictor; return (estimates at submission, the predictor)."""
    n = len(submit)
    cols = {"user": user}
    if app is not None:
        cols["app"] = app
    if queue is not None:
        cols["queue"] = queue
    jobs = JobTable.from_arrays(submit=submit, run=run, units=units or [1] * n,
                                requested_time=requested, resources=resources, **cols)
    if name is not None:  # an optional string column (not an SWF field)
        jobs.columns["name"] = np.array(name, dtype=object)
    sim = Simulation(platform or Platform.pooled(64), jobs, FIFO(), HistoryPredictor(**params))
    result = sim.run()
    return result.estimate, sim.predictor


def counts(**nonzero):
    """A full ``rule_counts_`` dict with the given non-zero entries."""
    out = {r: 0 for r in range(1, 8)} | {"no_user": 0}
    for key, value in nonzero.items():
        out["no_user" if key == "no_user" else int(key[1:])] = value
    return out


# ------------------------------------------------------------------ the seven rules
def test_rule1_full_profile_beats_a_more_recent_weaker_match():
    # job 0: app 5, queue 2, wall 100, 2 units, runs 0..30
    # job 1: same but 3 units (resources differ: rule 3 only), runs 5..45 (more recent)
    # job 2 at 50: same profile as job 0 -> rule 1 -> job 0's run, 30
    est, pred = simulate(submit=[0, 5, 50], run=[30, 40, 10], requested=[100] * 3,
                         user=[1] * 3, app=[5] * 3, queue=[2] * 3, units=[2, 3, 2])
    assert est.tolist() == [100, 100, 30]  # jobs 0 and 1 had no history (rule 7)
    assert pred.rule_counts_ == counts(r1=1, r7=2)


def test_rule1_per_unit_amounts_are_part_of_the_resources():
    # same units, but 10 vs 20 memory per unit: not rule 1, rule 3 (same name/queue/wall)
    est, pred = simulate(submit=[0, 50], run=[10, 10], requested=[100, 100], user=[1, 1],
                         units=[2, 2], resources={"core": [1, 1], "mem": [10, 20]},
                         platform=Platform.homogeneous(2, 8, mem=100))
    assert est.tolist() == [100, 10]
    assert pred.rule_counts_ == counts(r3=1, r7=1)


def test_minus_one_is_an_ordinary_value():
    # no app, no queue (all -1): the profile is user + queue + wall + resources -> rule 1
    est, pred = simulate(submit=[0, 50], run=[20, 5], requested=[100, 100], user=[3, 3])
    assert est[-1] == 20
    assert pred.rule_counts_[1] == 1


def test_rule2_name_prefix_with_same_queue_wall_resources():
    # job 0 "job12": queue 1, wall 100, 1 unit, runs 0..20
    # job 1 "job7": same name as the probe but 2 units (rule 3), runs 1..36 (more recent)
    # job 2 "job7" at 50, 1 unit: rule 1 fails (job 1 has other resources), rule 2 finds
    # job 0 ("job12" -> prefix "job", same queue/wall/resources): 20
    est, pred = simulate(submit=[0, 1, 50], run=[20, 35, 5], requested=[100] * 3,
                         user=[1] * 3, queue=[1] * 3, units=[1, 2, 1],
                         name=["job12", "job7", "job7"])
    assert est[-1] == 20
    assert pred.rule_counts_[2] == 1


def test_rule3_same_name_queue_wall_resources_differ():
    # job 0: app 5, queue 1, wall 100, 4 units, runs 0..25
    # job 1: app 5, queue 2 (other queue: rule 5 only), runs 1..45 (more recent)
    # job 2 at 50: app 5, queue 1, wall 100, 1 unit -> rule 3 -> 25
    est, pred = simulate(submit=[0, 1, 50], run=[25, 44, 5], requested=[100] * 3,
                         user=[1] * 3, app=[5] * 3, queue=[1, 2, 1], units=[4, 1, 1])
    assert est[-1] == 25
    assert pred.rule_counts_ == counts(r3=1, r7=2)


def test_rule4_prefix_with_same_queue_wall():
    # job 0 "job1": queue 1, wall 100, 4 units, runs 0..25
    # job 1 "job9": the probe's name but queue 2 (rule 5 only), runs 1..45
    # job 2 "job9" at 50, queue 1, 1 unit: rules 1-3 fail, rule 4 finds job 0: 25
    est, pred = simulate(submit=[0, 1, 50], run=[25, 44, 5], requested=[100] * 3,
                         user=[1] * 3, queue=[1, 2, 1], units=[4, 1, 1],
                         name=["job1", "job9", "job9"])
    assert est[-1] == 25
    assert pred.rule_counts_[4] == 1


def test_rule5_same_name_only():
    # job 0: app 5, queue 1, wall 200, runs 0..60
    # job 1: app 6 with the probe's queue and wall (no rule applies), runs 1..11
    # job 2 at 70: app 5, queue 2, wall 100 -> rule 5 -> min(60, 100) = 60
    est, pred = simulate(submit=[0, 1, 70], run=[60, 10, 5], requested=[200, 100, 100],
                         user=[1] * 3, app=[5, 6, 5], queue=[1, 2, 2])
    assert est[-1] == 60
    assert pred.rule_counts_ == counts(r5=1, r7=2)


def test_rule6_same_prefix_only():
    # job 0 "job1": queue 1, wall 200, runs 0..60
    # job 1 "other3", the probe's queue and wall: another prefix, not used
    # job 2 "job2" at 70: queue 2, wall 100 -> rule 6 -> 60
    est, pred = simulate(submit=[0, 1, 70], run=[60, 10, 5], requested=[200, 100, 100],
                         user=[1] * 3, queue=[1, 2, 2], name=["job1", "other3", "job2"])
    assert est[-1] == 60
    assert pred.rule_counts_ == counts(r6=1, r7=2)


def test_rule7_no_match_falls_back_to_walltime():
    # the user's only history has another app; another user's job has the same app
    est, pred = simulate(submit=[0, 1, 50], run=[10, 10, 5], requested=[100, 100, 80],
                         user=[1, 2, 1], app=[6, 5, 5])
    assert est[-1] == 80
    assert pred.rule_counts_ == counts(r7=3)


# ------------------------------------------------------------------ names and prefixes
def test_name_prefix():
    assert name_prefix("job12") == "job"
    assert name_prefix("run_3a") == "run_3a"  # no trailing number: the name itself
    assert name_prefix("18288") is None  # numeric: no prefix (would match everything)
    assert name_prefix("") is None
    assert name_prefix(18288) is None  # an SWF executable number


def test_numeric_names_have_no_prefix():
    # "18288" and "18289" (string digits), same queue/wall/resources: no prefix rule
    est, pred = simulate(submit=[0, 50], run=[10, 5], requested=[100, 100], user=[1, 1],
                         name=["18288", "18289"])
    assert est[-1] == 100
    assert pred.rule_counts_[7] == 2
    # SWF executable numbers 12 and 13: the same
    est, pred = simulate(submit=[0, 50], run=[10, 5], requested=[100, 100], user=[1, 1],
                         app=[12, 13])
    assert est[-1] == 100
    assert pred.rule_counts_ == counts(r7=2)


# ------------------------------------------------------------------ the estimate
def test_capped_by_walltime():
    # same app, other wall: rule 5 finds a 300 s run, the probe asks for 100 s
    kw = dict(submit=[0, 400], run=[300, 5], requested=[500, 100], user=[1, 1], app=[5, 5])
    est, _ = simulate(**kw)
    assert est[-1] == 100
    est, _ = simulate(**kw, cap_by_walltime=False)
    assert est[-1] == 300


def test_most_recent_completion_wins():
    # job 0 runs 0..30 (30 s), job 1 runs 20..40 (20 s): job 1 ended last
    est, _ = simulate(submit=[0, 20, 50], run=[30, 20, 5], requested=[100] * 3,
                      user=[1] * 3, app=[5] * 3)
    assert est[-1] == 20
    # completion order, not submission order: job 0 runs 0..45 (45 s), job 1 10..20
    est, _ = simulate(submit=[0, 10, 50], run=[45, 10, 5], requested=[100] * 3,
                      user=[1] * 3, app=[5] * 3)
    assert est[-1] == 45
    # tie on completion (both end at 40): the later submitted (larger row), 30 s
    est, _ = simulate(submit=[0, 10, 50], run=[40, 30, 5], requested=[100] * 3,
                      user=[1] * 3, app=[5] * 3)
    assert est[-1] == 30


def test_job_ending_at_submission_is_used_running_job_is_not():
    # job 0 ends exactly at 50 when job 1 is submitted: used
    est, _ = simulate(submit=[0, 50], run=[50, 5], requested=[100, 100], user=[1, 1])
    assert est[-1] == 50
    # job 0 runs until 60: still running at 50, not used
    est, pred = simulate(submit=[0, 50], run=[60, 5], requested=[100, 100], user=[1, 1])
    assert est[-1] == 100
    assert pred.rule_counts_ == counts(r7=2)


def test_no_user():
    est, pred = simulate(submit=[0, 50, 60], run=[10, 10, 10], requested=[100, 90, 100],
                         user=[-1, -1, 1])
    # user -1: the wall-time, even with an identical completed job before it
    assert est.tolist() == [100, 90, 100]
    assert pred.rule_counts_ == counts(no_user=2, r7=1)


# ------------------------------------------------------------------ contract
def test_passes_checks_and_is_registered():
    check_predictor(HistoryPredictor)
    check_predictor(HistoryPredictor(cap_by_walltime=False))
    assert PREDICTORS["history"] is HistoryPredictor
    assert isinstance(make_predictor("history"), HistoryPredictor)
    assert make_predictor("history", cap_by_walltime=False).cap_by_walltime is False
    assert repr(HistoryPredictor(cap_by_walltime=False)) == \
        "HistoryPredictor(cap_by_walltime=False)"


def test_kth_easy(kth_trace):
    jobs = load_trace(kth_trace)
    sim = Simulation(Platform.pooled(100), jobs, EASY(), HistoryPredictor())
    t0 = time.perf_counter()
    result = sim.run()
    assert time.perf_counter() - t0 < 60
    est = result.estimate
    assert (est >= 0).all() and (est <= jobs["requested_time"]).all()
    assert sum(sim.predictor.rule_counts_.values()) == len(jobs)
    # the history is used for most jobs
    assert sim.predictor.rule_counts_[7] < len(jobs) // 2


@pytest.mark.parametrize("cap", [True, False])
def test_estimates_are_integers(cap):
    est, _ = simulate(submit=[0, 50], run=[10, 5], requested=[100, 100], user=[1, 1],
                      cap_by_walltime=cap)
    assert est.dtype == np.int64
