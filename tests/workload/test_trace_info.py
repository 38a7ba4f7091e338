"""Offered load, capacity and the recorded schedule's metrics in ``trace_info``.

Expected values are computed by hand in the comments. The real-trace checks need
``/work/shared/traces`` and are skipped without it (``traces_dir`` fixture).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from dispatchlab import JobTable, Platform
from dispatchlab.workload import load_trace
from dispatchlab.workload.jobs import TraceInfo
from dispatchlab.workload.load import (
    Capacity,
    offered_load,
    recorded_metrics,
    render_trace_info,
    trace_capacity,
    trace_info,
    work,
)


def table(max_procs: int | None = 4, max_nodes: int | None = None, **cols) -> JobTable:
    """A job table with a header giving MaxProcs / MaxNodes (None: absent)."""
    info = TraceInfo(source="<test>", max_procs=max_procs, max_nodes=max_nodes)
    return JobTable.from_arrays(info=info, **cols)


def plain(max_procs: int | None = 8, max_nodes: int | None = None) -> JobTable:
    """Four jobs, no recorded waits; one with run -1 (as with ``clean=False``).

    work = 2 x 50 + 4 x 100 + 8 x 0 (+ the run -1 job, excluded) = 500 core-s;
    submit span = 300 - 0 = 300 s.
    """
    return table(max_procs, max_nodes, submit=[0, 100, 200, 300], run=[50, 100, 0, -1],
                 units=[2, 4, 8, 1])


def recorded() -> JobTable:
    """Five jobs with recorded waits (one missing) on a machine of MaxProcs = 4.

    row  submit  wait  run  units  start  end  slowdown        bsld (tau 10)
    0    0       0     100  1      0      100  100/100 = 1     1
    1    10      90    10   1      100    110  100/10 = 10     100/10 = 10
    2    20      -1    5    1      (no recorded wait: not counted)
    3    30      5     40   2      35     75   45/40 = 1.125   1.125
    4    40      8     2    4      48     50   10/2 = 5        max(10/10, 1) = 1
    """
    return table(4, submit=[0, 10, 20, 30, 40], run=[100, 10, 5, 40, 2],
                 units=[1, 1, 1, 2, 4], wait=[0, 90, -1, 5, 8])


def render(info: dict) -> str:
    out = io.StringIO()
    Console(file=out, width=120).print(render_trace_info(info))
    return out.getvalue()


# ------------------------------------------------------------------ capacity and load


def test_work_counts_units_times_run_of_jobs_with_a_run() -> None:
    # 2 x 50 + 4 x 100 + 8 x 0 = 500; the run -1 job is left out
    assert work(plain()) == 500.0


def test_work_uses_the_per_unit_amount_of_the_resource() -> None:
    # per-unit cores 3, 1: 2 x 3 x 10 + 1 x 1 x 20 = 80 core-s; no "gpu": 1 per unit
    t = JobTable.from_arrays(submit=[0, 1], run=[10, 20], units=[2, 1],
                             resources={"core": [3, 1]})
    assert work(t) == 80.0
    assert work(t, "gpu") == 2 * 10 + 1 * 20


def test_capacity_from_header_then_platform() -> None:
    assert trace_capacity(plain(8)) == Capacity("core", 8, "header MaxProcs")
    assert trace_capacity(plain(None, 16)) == Capacity("core", 16, "header MaxNodes")
    assert trace_capacity(plain(None, None)) == Capacity("core", None, None)
    # 3 nodes x 4 cores = 12 cores; the platform wins over the header
    assert trace_capacity(plain(8), Platform.homogeneous(3, 4, gpu=1)) == Capacity(
        "core", 12, "platform")


def test_offered_load_by_hand() -> None:
    # 500 core-s / (8 cores x 300 s) = 0.208333...
    assert offered_load(plain(), 8) == pytest.approx(500 / 2400)
    assert offered_load(plain(), None) is None
    assert offered_load(plain(), 0) is None


def test_offered_load_needs_a_submission_span() -> None:
    # all jobs submitted at t = 5: span 0, the load is undefined
    t = table(4, submit=[5, 5], run=[10, 10], units=[1, 1])
    assert offered_load(t, 4) is None


def test_trace_info_reports_load_and_capacity_from_header() -> None:
    info = trace_info(plain(8))
    assert info["capacity"] == 8 and info["capacity_source"] == "header MaxProcs"
    assert info["capacity_resource"] == "core"
    assert info["offered_load"] == pytest.approx(500 / 2400)
    assert info["jobs"]["work"] == 500.0 and info["jobs"]["submit_span_s"] == 300
    assert info["recorded"] is None  # from_arrays leaves every wait at -1


def test_trace_info_with_a_platform() -> None:
    # 2 nodes x 2 cores = 4 cores: 500 / (4 x 300) = 0.416667
    info = trace_info(plain(8), Platform.homogeneous(2, 2))
    assert info["capacity"] == 4 and info["capacity_source"] == "platform"
    assert info["offered_load"] == pytest.approx(500 / 1200)


def test_trace_info_without_any_capacity() -> None:
    info = trace_info(plain(None, None))
    assert info["capacity"] is None and info["capacity_source"] is None
    assert info["offered_load"] is None


# ------------------------------------------------------------------ recorded schedule


def test_recorded_metrics_by_hand() -> None:
    rec = recorded_metrics(recorded(), Capacity("core", 4, "header MaxProcs"))
    assert rec is not None
    assert rec["jobs"] == 4 and rec["missing_waits"] == 1
    # waits 0, 90, 5, 8: mean 103 / 4; median of 0, 5, 8, 90 = (5 + 8) / 2; max 90
    assert rec["mean_wait"] == pytest.approx(25.75)
    assert rec["median_wait"] == pytest.approx(6.5)
    assert rec["max_wait"] == 90
    # slowdowns 1, 10, 1.125, 5 -> 17.125 / 4; bsld 1, 10, 1.125, 1 -> 13.125 / 4
    assert rec["mean_slowdown"] == pytest.approx(4.28125)
    assert rec["mean_bsld"] == pytest.approx(3.28125)
    # work 1 x 100 + 1 x 10 + 2 x 40 + 4 x 2 = 198 core-s over 4 cores x (110 - 0) s
    assert rec["utilization"] == pytest.approx(198 / 440)
    assert rec["tau"] == 10.0 and rec["capacity_source"] == "header MaxProcs"


def test_recorded_metrics_without_capacity_has_no_utilization() -> None:
    rec = recorded_metrics(recorded(), Capacity("core", None, None))
    assert rec is not None and rec["utilization"] is None
    assert rec["mean_wait"] == pytest.approx(25.75)


def test_recorded_metrics_none_without_waits() -> None:
    assert recorded_metrics(plain(), Capacity("core", 8, "header MaxProcs")) is None


def test_trace_info_recorded_utilization_stays_on_the_trace_machine() -> None:
    # offered load on the platform (1 x 2 cores): work 198 + 1 x 5 = 203 over 2 x 40 s;
    # the recorded schedule ran on MaxProcs = 4, so its utilization is still 198 / 440
    info = trace_info(recorded(), Platform.pooled(2))
    assert info["offered_load"] == pytest.approx(203 / 80)
    assert info["recorded"]["utilization"] == pytest.approx(198 / 440)
    json.dumps(info)  # JSON-ready


# --------------------------------------------------------------------------- rendering


def test_render_shows_load_and_recorded_schedule() -> None:
    # offered load on MaxProcs 4: 203 / (4 x 40) = 1.26875 -> "1.269"
    text = render(trace_info(recorded()))
    assert "4 cores (header MaxProcs)" in text
    assert "1.269" in text
    assert "Recorded schedule" in text
    assert "25.8" in text  # mean wait 25.75 s, one decimal
    assert "0.450 (header MaxProcs)" in text  # recorded utilization 198 / 440
    assert "jobs without a wait (-1)" in text


def test_render_without_waits_or_capacity() -> None:
    text = render(trace_info(plain(None, None)))
    assert "Recorded schedule" not in text
    assert "unknown (no platform" in text


# -------------------------------------------------------------------------- real traces

#: Offered load on the header's MaxProcs, measured (5 significant digits). The PWA
#: cleaned logs record every wait, so the recorded utilization is close to it: the
#: work is the same, over last end - first submit instead of the submit span.
REAL_LOADS = {
    "SDSC-SP2-1998-4.2-cln.swf.gz": (128, 0.83406, 0.83381),
    "CTC-SP2-1996-3.1-cln.swf.gz": (338, 0.84164, 0.84128),
    "KTH-SP2-1996-2.1-cln.swf.gz": (100, 0.69924, 0.69921),
}


@pytest.mark.parametrize("name", sorted(REAL_LOADS))
def test_real_trace_offered_load(traces_dir: Path, name: str) -> None:
    path = traces_dir / name
    if not path.is_file():
        pytest.skip(f"trace {name} not found in {traces_dir}")
    cores, load, util = REAL_LOADS[name]
    info = trace_info(load_trace(path))
    assert info["capacity"] == cores and info["capacity_source"] == "header MaxProcs"
    assert info["offered_load"] == pytest.approx(load, abs=5e-5)
    rec = info["recorded"]
    assert rec["missing_waits"] == 0 and rec["jobs"] == info["jobs"]["count"]
    assert rec["utilization"] == pytest.approx(util, abs=5e-5)
    assert np.isfinite(rec["mean_bsld"]) and rec["mean_bsld"] >= 1.0
