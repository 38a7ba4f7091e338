"""What an archive header says about the log (:mod:`dispatchlab.workload.archive`):
the jobs the cleaning removed, queue and partition names, the scheduler."""

from __future__ import annotations

import pytest

from dispatchlab.workload.archive import (
    archive_cleaning,
    header_names,
    header_scheduler,
)

#: the header lines of CEA-Curie-2011-2.1-cln that matter (MaxJobs not updated)
CURIE = [
    "; MaxJobs: 773138",
    "; MaxRecords: 773138",
    "; Note: Scheduler is Slurm (https://computing.llnl.gov/linux/slurm/)",
    "; Partition:  2  parallel",
    "; Partition: 13  -1",
    "; Partition: 21  ",
    "; Note: THIS IS A CLEANED VERSION OF THE LOG!",
    ";       The filters used to produce it were",
    ";         submit<=2012-02-03 00:00:00 (272392 jobs removed)",
    ";         user=204 and (job>=274118 and job<=303564) (28878 jobs removed)",
    ";         user=288 and (job>=372153 and job<=593820) (118014 jobs removed)",
    ";         user=553 and (job>=542320 and job<=587600) (37905 jobs removed)",
    ";         user=4 and (job>=518258 and job<=600524) (3123 jobs removed)",
]


def test_cleaning_of_a_cleaned_log_sums_its_notes() -> None:
    c = archive_cleaning(CURIE, 312_826)
    assert (c.kept, c.removed, c.total, c.source) == (312_826, 460_312, 773_138,
                                                      "header notes")
    assert c.removed_share == pytest.approx(460_312 / 773_138)
    assert c.describe() == "archive cleaning removed 460,312 of 773,138 jobs (59.5 %)"
    assert c.as_dict()["total"] == 773_138


def test_cleaning_of_an_uncleaned_log_and_of_an_unknown_one() -> None:
    gaia = archive_cleaning([";    Conversion: J. E. - uncleaned version - March 2015",
                             ";       MaxJobs: 51987"], 51_987)
    assert (gaia.removed, gaia.source, gaia.removed_share) == (0, "uncleaned", 0.0)
    ricc = archive_cleaning(["; MaxJobs: 447794", "; MaxRecords: 447794"], 447_794)
    assert (ricc.removed, ricc.source) == (0, "uncleaned")
    theta = archive_cleaning(["; UnixStartTime: 0", "; MaxNodes: 4360"], 23_911)
    assert theta.removed is None and theta.removed_share is None
    assert "unknown" in theta.describe() and theta.source == "unknown"
    # MaxJobs above the records without a cleaning note: unknown, not "uncleaned"
    assert archive_cleaning(["; MaxJobs: 100"], 90).removed is None


def test_header_names_of_queues_and_partitions() -> None:
    assert header_names(CURIE, "Partition") == {2: "parallel", 13: "-1"}
    gaia = ["; Queue: 1 - Normal jobs queue - normal priority - jobs are not preemptible",
            ";    Queues: Queue nb 1 is default queue.", "; Queue:  0  interactive  "]
    assert header_names(gaia, "Queue") == {1: "Normal jobs queue", 0: "interactive"}


def test_header_scheduler() -> None:
    assert header_scheduler(CURIE) == "Slurm (https://computing.llnl.gov/linux/slurm/)"
    assert header_scheduler(["; Note: uses the EASY scheduler"]) == "EASY scheduler"
    assert header_scheduler(["; Note: uses MAUI scheduler"]) == "MAUI scheduler"
    assert header_scheduler(["; Computer: IBM SP2"]) is None
