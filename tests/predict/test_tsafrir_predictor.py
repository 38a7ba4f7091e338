"""Tsafrir et al. (2007): the mean of the user's last two run times, on hand-made
histories driven through the real engine.

The platform is large enough that each job starts at its submission, so a job
submitted at ``s`` with run time ``r`` completes at ``s + r``; the job under test is the
last row.
"""

from __future__ import annotations

from dispatchlab import Platform, Simulation
from dispatchlab.dispatch import FIFO
from dispatchlab.predict import PREDICTORS, TsafrirPredictor, make_predictor
from dispatchlab.testing import check_predictor
from dispatchlab.workload.jobs import JobTable


def estimates(*, submit, run, requested, user):
    jobs = JobTable.from_arrays(submit=submit, run=run, units=[1] * len(submit),
                                requested_time=requested, user=user)
    return Simulation(Platform.pooled(64), jobs, FIFO(), TsafrirPredictor()).run().estimate


def test_mean_of_last_two():
    # runs 10 (0..10), 20 (1..21), 40 (2..42); at 50 the last two are 20 and 40 -> 30
    est = estimates(submit=[0, 1, 2, 50], run=[10, 20, 40, 5], requested=[100] * 4,
                    user=[1] * 4)
    assert est.tolist() == [100, 100, 100, 30]


def test_mean_is_rounded_up():
    # runs 10 and 21: mean 15.5 -> 16
    est = estimates(submit=[0, 1, 50], run=[10, 21, 5], requested=[100] * 3, user=[1] * 3)
    assert est[-1] == 16


def test_last_two_by_completion_not_submission():
    # job 0 runs 0..45 (45 s), job 1 1..11 (10 s), job 2 2..22 (20 s): the last two
    # to complete are jobs 0 and 2 -> (45 + 20) / 2 = 32.5 -> 33
    est = estimates(submit=[0, 1, 2, 50], run=[45, 10, 20, 5], requested=[100] * 4,
                    user=[1] * 4)
    assert est[-1] == 33
    # ties on completion: jobs 0 (0..40), 1 (10..40), 2 (20..40) all end at 40; the
    # larger rows count as later: jobs 1 and 2 -> (30 + 20) / 2 = 25
    est = estimates(submit=[0, 10, 20, 50], run=[40, 30, 20, 5], requested=[100] * 4,
                    user=[1] * 4)
    assert est[-1] == 25


def test_one_completed_job():
    est = estimates(submit=[0, 50], run=[30, 5], requested=[100, 100], user=[1, 1])
    assert est[-1] == 30


def test_no_history_or_no_user():
    # user 1's first job; user -1 jobs get the wall-time even after a completed job
    est = estimates(submit=[0, 50, 60], run=[10, 5, 5], requested=[100, 90, 80],
                    user=[-1, -1, 1])
    assert est.tolist() == [100, 90, 80]


def test_capped_by_walltime():
    # runs 100 and 200, mean 150, the job asks for 120
    est = estimates(submit=[0, 1, 300], run=[100, 200, 5], requested=[300, 300, 120],
                    user=[1] * 3)
    assert est[-1] == 120
    # one job: 200 s, capped at 50
    est = estimates(submit=[0, 300], run=[200, 5], requested=[300, 50], user=[1, 1])
    assert est[-1] == 50


def test_job_ending_at_submission_is_used_running_job_is_not():
    # job 0 ends at 50 (used), job 1 runs 10..60 (still running at 50, not used)
    est = estimates(submit=[0, 10, 50], run=[50, 50, 5], requested=[100] * 3,
                    user=[1] * 3)
    assert est[-1] == 50


def test_users_are_separate():
    # user 2's jobs (runs 90, 80) do not affect user 1 (one job, 10 s)
    est = estimates(submit=[0, 1, 2, 100, 101], run=[10, 90, 80, 5, 5],
                    requested=[100] * 5, user=[1, 2, 2, 1, 2])
    assert est[-2] == 10
    assert est[-1] == 85


def test_passes_checks_and_is_registered():
    check_predictor(TsafrirPredictor)
    assert PREDICTORS["tsafrir"] is TsafrirPredictor
    assert isinstance(make_predictor("tsafrir"), TsafrirPredictor)
    # the default expiry rule: jump to the wall-time
    assert TsafrirPredictor.on_expiry is PREDICTORS["walltime"].on_expiry
