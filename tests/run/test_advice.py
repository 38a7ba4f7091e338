"""Pre-run and post-run warnings (:mod:`dispatchlab.run.advice`).

Each warning is checked triggered and not triggered on small tables built here, with
the numbers computed by hand in the comments; one check runs the real SDSC SP2 trace
on 4 nodes x 8 cores (skipped without ``/work/shared/traces``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import EASY, FIFO
from dispatchlab.metrics import REJECTED
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.run.advice import load_estimate, platform_warnings, result_warnings
from dispatchlab.run.outputs import run_summary
from dispatchlab.workload import load_trace
from dispatchlab.workload.jobs import TraceInfo
from dispatchlab.workload.load import offered_load

OVERLOAD_TAIL = ("the queue grows while jobs arrive and waits measure the backlog, not the "
                 "dispatcher")


def overload(load: str, span: int) -> str:
    """The overload warning for an estimated load (as printed) over ``span`` seconds."""
    return (f"offered load on this platform is about {load} (> 1; estimated as work / "
            f"(capacity x {span:,} s from the first submission to the last end without "
            f"waiting)): {OVERLOAD_TAIL}")


def jobs(submit, run, units, max_procs: int | None = None) -> JobTable:
    return JobTable.from_arrays(submit=submit, run=run, units=units,
                                info=TraceInfo(source="<test>", max_procs=max_procs))


def light(max_procs: int | None = 128) -> JobTable:
    """Two 1-core jobs of 10 s, submitted 1000 s apart: work 20 core-s, span 1000 s,
    so the offered load is 20 / (cores x 1000), far below 1 on any platform here."""
    return jobs([0, 1000], [10, 10], [1, 1], max_procs)


# --------------------------------------------------------------------- smaller machine


def test_smaller_platform_than_maxprocs_warns_with_the_ratio() -> None:
    # 32 cores against MaxProcs 128: 128 / 32 = 4.0
    assert platform_warnings(light(128), Platform.pooled(32)) == [
        "platform has 32 cores, the trace's machine had 128 (MaxProcs): "
        "expect a load about 4.0x the recorded one"
    ]


def test_smaller_node_platform_counts_its_cores() -> None:
    # 3 nodes x 4 cores = 12 cores (the gpus do not count) against 30: 2.5x
    assert platform_warnings(light(30), Platform.homogeneous(3, 4, gpu=2)) == [
        "platform has 12 cores, the trace's machine had 30 (MaxProcs): "
        "expect a load about 2.5x the recorded one"
    ]


@pytest.mark.parametrize("cores", [128, 256])
def test_platform_as_large_as_maxprocs_does_not_warn(cores: int) -> None:
    assert platform_warnings(light(128), Platform.pooled(cores)) == []


def test_no_maxprocs_no_smaller_machine_warning() -> None:
    assert platform_warnings(light(None), Platform.pooled(1)) == []


# ---------------------------------------------------------------------------- overload


def test_overload_warns_with_the_load() -> None:
    # two 4-core jobs of 200 s, submitted 100 s apart, on 4 cores: the last end without
    # waiting is 100 + 200 = 300 s after the first submission;
    # work 2 x 4 x 200 = 1600 core-s / (4 cores x 300 s) = 1.33
    t = jobs([0, 100], [200, 200], [4, 4])
    assert load_estimate(t, 4) == (pytest.approx(1600 / 1200), 300)
    assert platform_warnings(t, Platform.pooled(4)) == [overload("1.33", 300)]


def test_load_of_exactly_one_does_not_warn() -> None:
    # two 4-core jobs of 100 s at 0 and 100 s: span 200 s;
    # work 2 x 4 x 100 = 800 core-s / (4 cores x 200 s) = 1.0: not above 1
    t = jobs([0, 100], [100, 100], [4, 4])
    assert load_estimate(t, 4) == (1.0, 200)
    assert platform_warnings(t, Platform.pooled(4)) == []


def test_both_warnings_in_order() -> None:
    # MaxProcs 8 on 2 cores (4.0x); two 2-core jobs of 300 s at 0 and 100 s:
    # work 2 x 2 x 300 = 1200 core-s / (2 cores x 400 s) = 1.50
    t = jobs([0, 100], [300, 300], [2, 2], max_procs=8)
    assert platform_warnings(t, Platform.pooled(2)) == [
        "platform has 2 cores, the trace's machine had 8 (MaxProcs): "
        "expect a load about 4.0x the recorded one",
        overload("1.50", 400),
    ]


def test_a_burst_is_spread_over_its_longest_job() -> None:
    # ten 1-core jobs submitted within 9 s, each running 1,000 s, on 4 cores: over the
    # submission span the load would be 10 x 1000 / (4 x 9) = 278; but no schedule ends
    # them before 9 + 1000 = 1009 s, over which the work is 10,000 / (4 x 1009) = 2.48
    t = jobs(np.arange(10), np.full(10, 1000), np.ones(10, dtype=np.int64))
    assert offered_load(t, 4) == pytest.approx(10_000 / 36)
    assert load_estimate(t, 4) == (pytest.approx(10_000 / 4036), 1009)
    # on 16 cores the burst fits at once: 10,000 / (16 x 1009) = 0.62, no warning,
    # where the submission span said 69
    assert offered_load(t, 16) > 60
    assert platform_warnings(t, Platform.pooled(16)) == []


def test_jobs_of_unknown_run_time_are_left_out_of_the_span() -> None:
    # the second job's run is unknown (-1): the span ends with the first (0 + 50);
    # work 2 x 50 = 100 / (1 x 50) = 2.0
    t = jobs([0, 500], [50, -1], [2, 1])
    assert load_estimate(t, 1) == (2.0, 50)
    assert load_estimate(t, None) is None
    assert load_estimate(jobs([0], [-1], [1]), 4) is None
    assert load_estimate(jobs([0, 0], [0, 0], [1, 1]), 4) is None  # span 0


EURORA = "Eurora-PA-HPC-SIM-testdata.tar.gz"
BURST = "test_data/job_instances/historical_traces/100/hist_100_20140331_110904.log_crypt"


def test_eurora_burst_instance_is_not_overloaded(traces_dir: Path) -> None:
    """The issue's false warning. Measured: 100 jobs submitted within 950 s, work
    2,243,014 core-s, on Eurora's 1,024 cores: the submission span gave a load of 2.31
    while EASY keeps the machine 7.5 % busy without a wait. The last end without waiting
    is at 29,167 s (a job of 28,800 s submitted at 367 s): 2,243,014 / (1,024 x 29,167)
    = 0.0751, the utilization the run reaches."""
    archive = traces_dir / EURORA
    if not archive.is_file():
        pytest.skip(f"{EURORA} not found in {traces_dir}")
    table = load_trace(f"{archive}#{BURST}")
    platform = eurora_platform()
    assert f"{offered_load(table, 1024):.2f}" == "2.31"  # the old rule
    load, span = load_estimate(table, 1024)
    assert span == 29_167 and load == pytest.approx(2_243_014 / (1024 * 29_167))
    assert platform_warnings(table, platform) == []
    summary = run_summary(Simulation(platform, table, EASY()).run())
    assert summary["mean_wait"] == 0 and summary["utilization"] == pytest.approx(load)


def test_kth_sp2_on_50_cores_still_warns(kth_trace: Path) -> None:
    """Truly overloaded: KTH SP2 (28,475 jobs over 11 months, MaxProcs 100) on 50 cores.
    Measured: work 2,011,271,357 core-s, span 28,763,776 s (first submission 599,850,
    last end without waiting 29,363,626): 2,011,271,357 / (50 x 28,763,776) = 1.40."""
    table = load_trace(kth_trace)
    load, span = load_estimate(table, 50)
    assert span == 28_763_776
    assert load == pytest.approx(2_011_271_357 / (50 * 28_763_776))
    assert platform_warnings(table, Platform.pooled(50)) == [
        "platform has 50 cores, the trace's machine had 100 (MaxProcs): "
        "expect a load about 2.0x the recorded one",
        overload("1.40", 28_763_776),
    ]


# --------------------------------------------------------------------------- rejections


def run_with_wide_jobs(wide: list[int], n: int = 100):
    """``n`` 1-core jobs of 1 s, one per second, on 4 pooled cores; the first
    ``len(wide)`` ask for ``wide`` cores instead (more than 4: rejected)."""
    units = np.ones(n, dtype=np.int64)
    units[: len(wide)] = wide
    t = jobs(np.arange(n), np.ones(n, dtype=np.int64), units)
    return Simulation(Platform.pooled(4), t, FIFO()).run()


def test_more_than_one_percent_rejected_warns_with_the_commonest_reason() -> None:
    # 3 of 100 rejected (3.0 %): reasons "needs 8" once, "needs 6" twice -> the 6
    result = run_with_wide_jobs([8, 6, 6])
    assert result_warnings(result) == [
        "3 of 100 jobs (3.0 %) were rejected; most common reason (2 jobs): "
        "needs 6 cores, the platform has 4"
    ]


def test_reason_ties_go_to_the_first_rejected_job() -> None:
    # 2 of 100 (2.0 %), one job per reason: the first rejected job's reason (needs 5)
    result = run_with_wide_jobs([5, 7])
    assert result_warnings(result) == [
        "2 of 100 jobs (2.0 %) were rejected; most common reason (1 job): "
        "needs 5 cores, the platform has 4"
    ]


@pytest.mark.parametrize("wide", [[], [8]])
def test_one_percent_or_less_rejected_does_not_warn(wide: list[int]) -> None:
    # 0 and 1 of 100 rejected: not more than 1 %
    assert result_warnings(run_with_wide_jobs(wide)) == []


# -------------------------------------------------------------------------- real trace

SDSC = "SDSC-SP2-1998-4.2-cln.swf.gz"


def test_sdsc_sp2_on_4_nodes_of_8_cores(traces_dir: Path) -> None:
    """Measured: 54,044 jobs after cleaning, offered load 3.34 on 32 cores (4 x its
    0.834 on MaxProcs 128), 4,091 jobs wider than 32 cores rejected (7.6 %)."""
    path = traces_dir / SDSC
    if not path.is_file():
        pytest.skip(f"trace {SDSC} not found in {traces_dir}")
    table = load_trace(path)
    platform = Platform.homogeneous(4, 8)
    # the load on 32 cores is exactly 128 / 32 = 4 times the load on the header's 128
    load = 4 * offered_load(table, 128)
    assert f"{load:.2f}" == "3.34"
    # the last end without waiting (63,588,898) barely extends the submission span
    assert load_estimate(table, 32)[1] == 63_588_898 - 566_129
    assert platform_warnings(table, platform) == [
        "platform has 32 cores, the trace's machine had 128 (MaxProcs): "
        "expect a load about 4.0x the recorded one",
        overload("3.34", 63_022_769),
    ]
    result = Simulation(platform, table, EASY()).run()
    # rejected at submission = exactly the jobs wider than the empty platform
    wide = int(np.count_nonzero(table["units"] > 32))
    assert int(np.count_nonzero(result.status == REJECTED)) == wide == 4_091
    assert result_warnings(result) == [
        "4,091 of 54,044 jobs (7.6 %) were rejected; most common reason (2,550 jobs): "
        "needs 64 cores, the platform has 32"
    ]


def test_simulate_prints_each_warning_once_and_runs_on(tmp_path) -> None:
    """Through the CLI: each warning is one `warning:` line on stderr, the run completes
    (exit 0, summary table printed)."""
    from test_cli import run_cli

    trace = tmp_path / "lublin.swf"
    gen = run_cli("generate", "--model", "lublin", "--machine-size", "64", "--jobs", "400",
                  "--seed", "3", "--out", trace)
    assert gen.returncode == 0, gen.stderr
    proc = run_cli("simulate", trace, "--nodes", "2", "--cores-per-node", "8")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert all(line.startswith("warning: ") for line in lines), proc.stderr
    assert any("platform has 16 cores, the trace's machine had 64" in x for x in lines)
    assert any("offered load on this platform is" in x for x in lines)
    assert any("were rejected; most common reason" in x for x in lines)
    assert "mean wait" in proc.stdout
    # the header machine itself: no warning at all
    quiet = run_cli("simulate", trace)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
