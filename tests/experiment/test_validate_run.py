"""The comparison of a finished run with its recorded schedule
(:func:`dispatchlab.experiment.validation.compare_waits`) on a tiny SWF: which jobs are
compared and counted, the per-queue and per-partition tables, the archive's cleaning."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.experiment.validation import check_recorded_waits, compare_waits
from dispatchlab.run.build import build
from dispatchlab.run.config import Component, PlatformChoice, RunConfig, TraceSource
from dispatchlab.workload.jobs import JobTable
from test_sacct import export, job

#: 5 jobs on 4 pooled cores, queues 1 batch and 2 debug (see the file); under FIFO:
#:   job  submit  recorded  simulated    queue
#:   1    0       0         0            1 batch   (4 cores until 100)
#:   2    10      90        90           2 debug   (2 cores, 100..150)
#:   3    20      200       80           1 batch   (2 cores, 100..150)
#:   4    30      -1        (120)        2 debug   no recorded wait: counted, left out
#:   5    40      5         rejected     2 debug   8 cores > 4: not run, left out
SMALL = Path(__file__).resolve().parents[1] / "data" / "validate-small.swf"


def _result(dispatcher: str = "fifo"):
    run = build(RunConfig(trace=TraceSource(str(SMALL)),
                          dispatcher=Component(dispatcher)))
    return run.simulation.run()


def test_per_queue_table_on_a_tiny_swf() -> None:
    v = compare_waits(_result())
    assert v.counts == {"measured": 5, "compared": 3, "no_recorded_wait": 1, "not_run": 1}
    assert v.group_by == "queue"  # the compared jobs use two queues
    assert [(g["group"], g["jobs"]) for g in v.groups] == [("1 batch", 2), ("2 debug", 1)]
    batch, debug = v.groups
    assert (batch["recorded_mean_wait"], batch["simulated_mean_wait"], batch["mae"]) == \
        (100.0, 40.0, 60.0)
    assert (debug["recorded_mean_wait"], debug["simulated_mean_wait"], debug["mae"]) == \
        (90.0, 90.0, 0.0)
    assert v.overall["mae"] == pytest.approx(40.0)
    assert v.overall["spearman"] == pytest.approx(0.5)
    assert (v.cleaning.kept, v.cleaning.removed, v.cleaning.total) == (5, 2, 7)
    assert v.scheduler is None
    assert v.rolling.mape is None and len(v.rolling.hours) == 0  # spans 40 s, not 14 d
    doc = v.as_dict()
    assert doc["cleaning"]["removed_share"] == pytest.approx(2 / 7)
    assert doc["rolling"]["series"]["hours"] == []


def test_grouping_by_partition_and_unknown_grouping() -> None:
    result = _result()
    v = compare_waits(result, by="partition")  # field 16 is -1 for every job
    assert v.group_by == "partition" and [g["group"] for g in v.groups] == ["-1"]
    assert v.groups[0]["jobs"] == 3
    with pytest.raises(InputError, match="unknown grouping 'user'"):
        compare_waits(result, by="user")


def test_a_trace_without_recorded_waits_is_refused_before_simulating() -> None:
    jobs = JobTable.from_arrays(submit=[0, 5], run=[10, 10], units=[1, 1])
    with pytest.raises(InputError, match="no job of the trace has a recorded wait"):
        check_recorded_waits(jobs, "x.swf")
    jobs.columns["wait"] = np.array([-1, 3])
    assert check_recorded_waits(jobs, "x.swf") == 1


def test_sacct_partitions_are_the_groups(tmp_path: Path) -> None:
    # three 4-CPU jobs of one hour on 8 pooled cores under FIFO:
    #   job   partition  submit    recorded start (wait)   simulated wait
    #   7001  batch      08:00:00  08:01:00 (60 s)         0
    #   7002  gpu        08:00:30  08:30:00 (1,770 s)      0
    #   7003  batch      08:02:00  09:01:00 (3,540 s)      3,480 (7001 ends at 09:00:00)
    trace = export(tmp_path, [
        job(JobID="7001", JobIDRaw="7001"),
        job(JobID="7002", JobIDRaw="7002", Partition="gpu", Submit="2024-03-01T08:00:30",
            Eligible="2024-03-01T08:00:30", Start="2024-03-01T08:30:00",
            End="2024-03-01T09:30:00"),
        job(JobID="7003", JobIDRaw="7003", Submit="2024-03-01T08:02:00",
            Eligible="2024-03-01T08:02:00", Start="2024-03-01T09:01:00",
            End="2024-03-01T10:01:00")])
    run = build(RunConfig(trace=TraceSource(str(trace)),
                          platform=PlatformChoice(None, 1, 8),
                          dispatcher=Component("fifo")))
    v = compare_waits(run.simulation.run())
    assert v.group_by == "queue"
    assert [(g["group"], g["jobs"], g["recorded_mean_wait"], g["simulated_mean_wait"])
            for g in v.groups] == [("batch", 2, 1800.0, 1740.0), ("gpu", 1, 1770.0, 0.0)]
    assert v.cleaning.removed is None and v.cleaning.source == "unknown"
