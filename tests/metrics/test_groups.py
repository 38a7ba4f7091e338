"""Metrics per partition / user / account / QOS and the fairness figures
(dispatchlab.metrics.groups), on a small table computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.metrics.groups import (
    MISSING_GROUP,
    fairness,
    group_labels,
    group_metrics,
    group_summary,
    ordered_groups,
    parse_group_keys,
)
from dispatchlab.metrics.jobs import COMPLETED, REJECTED, job_columns
from dispatchlab.workload.jobs import JobTable, TraceInfo

# Six jobs (times in s, tau 10 s); queue codes 0 = batch, 1 = gpu; users 0 alice, 1 bob,
# 2 carol; held = nodes of the allocation.
#  row submit start  end   status  partition user  account held  wait run   hours  bsld
#   0     0     0    3600  done    batch     alice p1      2     0    3600  2      1
#   1     0   600    4200  done    batch     bob   p1      1     600  3600  1      4200/3600
#   2     0  1200    8400  done    gpu       bob   p2      1     1200 7200  2      8400/7200
#   3   100    -1      -1  rejected gpu      carol p2      0     -    -     0      -
#   4   200  3800    5600  done    batch     alice p1      1     3600 1800  0.5    5400/1800=3
#   5   300   300     300  done    (none)    alice ""      1     0    0     0      1
# batch: rows 0, 1, 4: waits 0, 600, 3600 -> mean 1400, median 600, max 3600; bsld mean
#   (1 + 7/6 + 3) / 3 = 31/18; hours 3.5 of 5.5
# gpu: row 2 ran (wait 1200, bsld 7/6, hours 2 of 5.5), row 3 rejected
# (none): row 5, wait 0, bsld 1, hours 0
# users: alice rows 0, 4, 5 (mean wait 1200), bob rows 1, 2 (mean 900), carol rejected only
# overall mean wait (5 jobs that ran): (0 + 600 + 1200 + 3600 + 0) / 5 = 1080
SUBMIT = [0, 0, 0, 100, 200, 300]
START = np.array([0, 600, 1200, -1, 3800, 300])
END = np.array([3600, 4200, 8400, -1, 5600, 300])
STATUS = np.array([COMPLETED, COMPLETED, COMPLETED, REJECTED, COMPLETED, COMPLETED])
HELD = np.array([2, 1, 1, 0, 1, 1])


def _table(**columns) -> JobTable:
    info = TraceInfo(format="sacct", codes={"queue": ["batch", "gpu"],
                                            "user": ["alice", "bob", "carol"]})
    run = np.maximum(END - START, 0)
    table = JobTable.from_arrays(submit=SUBMIT, run=run, units=[1] * 6, info=info,
                                 queue=[0, 0, 1, 1, 0, -1], user=[0, 1, 1, 2, 0, 0])
    for name, values in columns.items():
        table.columns[name] = np.array(values, dtype=object)
    return table


def _cols():
    return job_columns(SUBMIT, START, END, STATUS, tau=10.0)


def _hours():
    return HELD * np.maximum(END - START, 0) / 3600.0


def test_group_metrics_by_partition_by_hand() -> None:
    labels = group_labels(_table(), "partition")
    assert labels.source == "the log's partition or queue names"
    cols = _cols()
    got = group_metrics(labels, cols["wait"], cols["bounded_slowdown"], _hours(), STATUS)
    assert set(got) == {"batch", "gpu", MISSING_GROUP}
    batch = got["batch"]
    assert (batch["jobs"], batch["rejected"]) == (3, 0)
    assert batch["mean_wait"] == pytest.approx(1400.0)
    assert batch["median_wait"] == pytest.approx(600.0)
    assert batch["max_wait"] == 3600
    assert batch["mean_bsld"] == pytest.approx(31 / 18)
    assert batch["hours"] == pytest.approx(3.5)
    assert batch["hours_share"] == pytest.approx(3.5 / 5.5)
    gpu = got["gpu"]
    assert (gpu["jobs"], gpu["rejected"]) == (1, 1)
    assert gpu["mean_wait"] == gpu["median_wait"] == pytest.approx(1200.0)
    assert gpu["mean_bsld"] == pytest.approx(8400 / 7200)
    assert gpu["hours_share"] == pytest.approx(2 / 5.5)
    none = got[MISSING_GROUP]
    assert (none["jobs"], none["mean_wait"], none["mean_bsld"], none["hours"]) == (1, 0, 1, 0)
    # tables print the largest hours first
    assert [g for g, _ in ordered_groups({"groups": got})] == ["batch", "gpu", MISSING_GROUP]


def test_group_metrics_by_user_and_measured_rows() -> None:
    labels = group_labels(_table(), "user")
    cols = _cols()
    got = group_metrics(labels, cols["wait"], cols["bounded_slowdown"], _hours(), STATUS)
    assert got["alice"]["jobs"] == 3 and got["alice"]["mean_wait"] == pytest.approx(1200)
    assert got["bob"]["jobs"] == 2 and got["bob"]["mean_wait"] == pytest.approx(900)
    # carol: only a rejected job -> counted, no statistic
    assert got["carol"] == {"jobs": 0, "rejected": 1, "mean_wait": None,
                            "median_wait": None, "max_wait": None, "mean_bsld": None,
                            "hours": 0.0, "hours_share": 0.0}
    # row 4 outside the measurement window: alice has rows 0 and 5 (waits 0, 0)
    measured = np.array([True, True, True, True, False, True])
    got = group_metrics(labels, cols["wait"], cols["bounded_slowdown"], _hours(), STATUS,
                        measured)
    assert got["alice"]["jobs"] == 2 and got["alice"]["mean_wait"] == 0
    assert got["alice"]["hours_share"] == pytest.approx(2 / 5)  # 2 of 2 + 1 + 2 hours


def test_fairness_by_hand() -> None:
    table = _table(account=["p1", "p1", "p2", "p2", "p1", ""])
    cols = _cols()
    users = group_labels(table, "user")
    accounts = group_labels(table, "account")
    got = fairness(cols["wait"], _hours(), STATUS, users, accounts, min_user_jobs=2)
    assert got["mean_wait"] == pytest.approx(1080)
    assert got["users_counted"] == 2  # alice (3 jobs), bob (2); carol ran none
    assert (got["max_wait_user"], got["max_wait_user_jobs"]) == ("alice", 3)
    assert got["max_user_mean_wait"] == pytest.approx(1200)
    assert got["max_user_wait_ratio"] == pytest.approx(1200 / 1080)
    assert got["account_hours_share"] == pytest.approx(
        {"p1": 3.5 / 5.5, "p2": 2 / 5.5, MISSING_GROUP: 0.0})
    # with our minimum of 5 jobs no user qualifies: the figure is undefined, not made up
    strict = fairness(cols["wait"], _hours(), STATUS, users, None)
    assert strict["min_user_jobs"] == 5 and strict["users_counted"] == 0
    assert strict["max_wait_user"] is None and strict["max_user_wait_ratio"] is None
    assert strict["account_hours_share"] is None
    # ties go to the label that sorts first: bob's mean set equal to alice's
    wait = cols["wait"].copy()
    wait[1] = 1200
    tie = fairness(wait, _hours(), STATUS, users, None, min_user_jobs=2)
    assert tie["max_wait_user"] == "alice"


def test_group_summary_section() -> None:
    table = _table(account=["p1", "p1", "p2", "p2", "p1", ""], qos=[""] * 6)
    got = group_summary(table, START, END, STATUS, ["partition,user", "qos", "user"],
                        held=HELD, hours_unit="node-hours", tau=10.0)
    assert list(got) == ["hours_unit", "partition", "user", "qos", "fairness"]
    assert got["hours_unit"] == "node-hours"
    assert got["partition"]["groups"]["batch"]["hours"] == pytest.approx(3.5)
    assert set(got["qos"]["groups"]) == {MISSING_GROUP}  # a log that records no QOS
    assert got["qos"]["groups"][MISSING_GROUP]["jobs"] == 5
    assert got["fairness"]["account_hours_share"]["p1"] == pytest.approx(3.5 / 5.5)
    with pytest.raises(InputError, match="hours_unit"):
        group_summary(table, START, END, STATUS, ["user"], held=HELD, hours_unit="x")


def test_swf_numbers_as_text() -> None:
    """An SWF trace names nothing: partition is field 16 when recorded, else field 15;
    user the number; -1 is the missing group."""
    table = JobTable.from_arrays(submit=[0, 1, 2], run=[1, 1, 1], units=[1, 1, 1],
                                 queue=[3, 4, -1], partition=[-1, -1, -1], user=[7, 7, -1])
    labels = group_labels(table, "partition")
    assert "field 15" in labels.source
    assert [labels.label(i) for i in range(3)] == ["3", "4", MISSING_GROUP]
    table.columns["partition"] = np.array([1, 2, 2])
    labels = group_labels(table, "partition")
    assert "field 16" in labels.source
    assert [labels.label(i) for i in range(3)] == ["1", "2", "2"]
    users = group_labels(table, "user")
    assert [users.label(i) for i in range(3)] == ["7", "7", MISSING_GROUP]


def test_keys_and_missing_columns() -> None:
    assert parse_group_keys(["partition, user", "USER", "qos"]) == ("partition", "user", "qos")
    with pytest.raises(InputError, match=r"unknown group 'partiton' \(did you mean "
                                         r"'partition'\?\)") as err:
        parse_group_keys(["partiton"])
    assert err.value.field == "--by"
    table = JobTable.from_arrays(submit=[0], run=[1], units=[1])
    with pytest.raises(InputError, match=r"the trace \(swf\) has no account column"):
        group_labels(table, "account")


def test_empty_group_statistics_are_none() -> None:
    cols = _cols()
    got = group_metrics(group_labels(_table(), "partition"), cols["wait"],
                        cols["bounded_slowdown"], np.zeros(6), STATUS)
    assert got["batch"]["hours_share"] is None  # nothing held: no share
    assert not math.isnan(got["batch"]["mean_wait"])
