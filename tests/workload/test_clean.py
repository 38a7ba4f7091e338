"""Default cleaning, optional filters (with re-basing), load_trace and trace_info."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from conftest import TRACES_DIR
from dispatchlab.core.errors import InputError
from dispatchlab.workload.clean import check_filters, clean, select
from dispatchlab.workload.jobs import SWF_FIELDS, JobTable, TraceInfo
from dispatchlab.workload.load import load_trace, render_trace_info, trace_format, trace_info

TRACES = TRACES_DIR


def table(**kw: object) -> JobTable:
    """Jobs 1..n (job_id) from a few columns; units default to 1."""
    n = len(kw["submit"])  # type: ignore[arg-type]
    kw.setdefault("units", [1] * n)
    return JobTable.from_arrays(**kw)  # type: ignore[arg-type]


def ids(t: JobTable) -> list[int]:
    return t["job_id"].tolist()


# ---------------------------------------------------------------------- default cleaning


def test_cleaning_counts_per_reason_first_match() -> None:
    t = table(
        submit=[0, 1, 2, 3, 4, 5, 6],
        run=[5, -1, 5, -1, 5, 0, 5],
        units=[1, 1, 0, -1, 2, 3, 1],
    )
    t.columns["submit"][6] = -1  # only possible in hand-made tables
    c = clean(t)
    # job 4 has units -1 and run -1: counted once, under the first reason
    assert c.info.dropped == {"units <= 0": 2, "run < 0": 1, "submit < 0": 1}
    assert ids(c) == [1, 5, 6]
    assert len(t) == 7 and t.info.dropped == {}  # input untouched


def test_cleaning_nothing_to_drop_records_nothing() -> None:
    c = clean(table(submit=[0, 1], run=[1, 0]))
    assert c.info.dropped == {}
    assert len(c) == 2


def test_cleaning_adds_to_existing_counts() -> None:
    t = table(submit=[0, 1], run=[1, -1], info=TraceInfo(dropped={"run < 0": 3}))
    assert clean(t).info.dropped == {"run < 0": 4}


def test_copy_false_reuses_the_input() -> None:
    t = table(submit=[0, 1, 2], run=[1, -1, 1])
    c = clean(t, copy=False)
    assert ids(c) == [1, 3]
    assert t.columns is c.columns  # the input's dict was edited in place


# --------------------------------------------------------------------------- filters


def test_drop_overrun() -> None:
    t = table(submit=[0, 1, 2], run=[10, 20, 30], requested_time=[10, 19, 31])
    s = select(t, drop_overrun=True)
    assert ids(s) == [1, 3]
    assert s.info.dropped == {"run > requested_time": 1}


def test_max_procs_header_and_int() -> None:
    t = table(submit=[0, 1, 2], run=[1, 1, 1], units=[4, 8, 9], info=TraceInfo(max_procs=8))
    assert ids(select(t, max_procs=True)) == [1, 2]
    assert ids(select(t, max_procs="header")) == [1, 2]
    s = select(t, max_procs=4)
    assert ids(s) == [1]
    assert s.info.dropped == {"units > max_procs": 2}
    with pytest.raises(InputError) as exc:
        select(table(submit=[0], run=[1]), max_procs=True)
    assert exc.value.field == "max_procs" and "MaxProcs" in exc.value.message


def test_window_rebases_to_zero() -> None:
    t = table(submit=[100, 150, 200, 250, 300], run=[1] * 5, info=TraceInfo(time_offset=7))
    s = select(t, window=(150, 300))
    assert ids(s) == [2, 3, 4]
    assert s["submit"].tolist() == [0, 50, 100]
    assert s.info.time_offset == 7 + 150
    assert s.info.dropped == {"outside window": 2}
    assert t["submit"].tolist() == [100, 150, 200, 250, 300]  # input untouched
    # the first kept submit, not t0, becomes 0
    assert select(t, window=(120, 1000))["submit"].tolist() == [0, 50, 100, 150]


def test_jobs_range_rebases_and_clamps() -> None:
    t = table(submit=[10, 20, 30, 40], run=[1] * 4)
    s = select(t, jobs=(1, 3))
    assert ids(s) == [2, 3]
    assert s["submit"].tolist() == [0, 10]
    assert s.info.time_offset == 20
    assert s.info.dropped == {"outside jobs range": 2}
    assert ids(select(t, jobs=(2, 100))) == [3, 4]


def test_jobs_range_counts_positions_after_cleaning() -> None:
    t = table(submit=[10, 20, 30, 40, 50], run=[1, -1, 1, 1, 1])
    c = clean(t, jobs=(1, 3))
    assert ids(c) == [3, 4]
    assert c.info.dropped == {"run < 0": 1, "outside jobs range": 2}


@pytest.mark.parametrize(
    ("fraction", "expected"),
    [
        (("first", 0.3), [1, 2, 3]),
        (("last", 0.3), [8, 9, 10]),
        (("last", 1), list(range(1, 11))),
        (("first", 0.01), [1]),  # at least one job
        (("last", 0.25), [8, 9, 10]),  # round(2.5) -> 3 (half up)
    ],
)
def test_fraction(fraction: tuple[str, float], expected: list[int]) -> None:
    t = table(submit=list(range(100, 110)), run=[1] * 10)
    s = select(t, fraction=fraction)  # type: ignore[arg-type]
    assert ids(s) == expected
    assert s["submit"][0] == 0
    assert s.info.time_offset == 100 + expected[0] - 1


@pytest.mark.parametrize(
    ("kw", "option"),
    [
        ({"window": (5, 5)}, "window"),
        ({"window": (5,)}, "window"),
        ({"window": "0,5"}, "window"),
        ({"window": (0, 1.5)}, "window"),
        ({"jobs": (-1, 3)}, "jobs"),
        ({"jobs": (3, 3)}, "jobs"),
        ({"fraction": ("middle", 0.5)}, "fraction"),
        ({"fraction": ("last", 0)}, "fraction"),
        ({"fraction": ("last", 1.5)}, "fraction"),
        ({"fraction": "last"}, "fraction"),
        ({"max_procs": 0}, "max_procs"),
        ({"max_procs": "many"}, "max_procs"),
        ({"drop_overrun": "yes"}, "drop_overrun"),
        ({"window": (0, 5), "jobs": (0, 1)}, "jobs"),
    ],
)
def test_bad_filter_values_name_the_option(kw: dict[str, object], option: str) -> None:
    with pytest.raises(InputError) as exc:
        check_filters(**kw)  # type: ignore[arg-type]
    assert exc.value.field == option
    with pytest.raises(InputError):
        select(table(submit=[0], run=[1]), **kw)  # type: ignore[arg-type]


def test_filters_selecting_nothing_are_errors() -> None:
    t = table(submit=[10, 20], run=[1, 1])
    with pytest.raises(InputError) as exc:
        select(t, window=(30, 40))
    assert exc.value.field == "window" and "no jobs" in exc.value.message
    with pytest.raises(InputError) as exc:
        select(t, jobs=(2, 5))
    assert exc.value.field == "jobs"


def test_integral_floats_are_accepted_as_ints() -> None:
    assert check_filters(window=(0.0, 10.0)).window == (0, 10)
    assert check_filters(jobs=(np.int64(1), 3)).jobs == (1, 3)


# ------------------------------------------------------------------------ load_trace


def swf(tmp_path: Path, lines: list[str], name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def line(job: int, submit: int, run: int, procs: int, req: int) -> str:
    return f"{job} {submit} 0 {run} {procs} -1 -1 {procs} {req} -1 1 1 1 -1 -1 -1 -1 -1"


SMALL = [
    "; MaxProcs: 8",
    line(1, 100, 10, 4, 20),
    line(2, 110, -1, 4, 20),
    line(3, 120, 30, 16, 40),
    line(4, 130, 50, 2, 40),
    line(5, 140, 10, 0, 20),
    line(6, 150, 10, 8, 20),
]


def test_load_trace_cleans_and_filters(tmp_path: Path) -> None:
    path = swf(tmp_path, SMALL)
    t = load_trace(path)
    assert ids(t) == [1, 3, 4, 6]
    assert t.info.dropped == {"run < 0": 1, "units <= 0": 1}
    t = load_trace(path, drop_overrun=True, max_procs=True, fraction=("last", 0.5))
    assert ids(t) == [6]
    assert t.info.dropped == {
        "run < 0": 1,
        "units <= 0": 1,
        "run > requested_time": 1,
        "units > max_procs": 1,
        "outside fraction": 1,
    }
    assert t["submit"].tolist() == [0] and t.info.time_offset == 150
    raw = load_trace(path, clean=False)
    assert len(raw) == 6 and raw.info.dropped == {}
    assert ids(load_trace(path, window=(120, 140))) == [3, 4]


def test_load_trace_validates_options_before_reading(tmp_path: Path) -> None:
    with pytest.raises(InputError) as exc:
        load_trace(tmp_path / "missing.swf", window=(3, 1))
    assert exc.value.field == "window"
    with pytest.raises(InputError) as exc:
        load_trace(swf(tmp_path, SMALL), extra_fields="keep")  # type: ignore[arg-type]
    assert exc.value.field == "extra_fields"


def test_load_trace_no_jobs_left(tmp_path: Path) -> None:
    path = swf(tmp_path, [line(1, 0, -1, 4, 20)])
    with pytest.raises(InputError, match="no jobs left"):
        load_trace(path)


def test_trace_format(tmp_path: Path) -> None:
    assert trace_format("a/b.SWF.gz") == "swf"
    assert trace_format("x.swf") == "swf"
    assert trace_format("x.parquet") == "parquet"
    assert trace_format("x.csv") == "csv"
    with pytest.raises(InputError, match="no such file"):
        load_trace(tmp_path / "x.txt")
    (tmp_path / "x.txt").write_text("neither a log\nnor a table\n")
    with pytest.raises(InputError) as exc:
        load_trace(tmp_path / "x.txt")
    assert "unknown trace format" in exc.value.message and exc.value.file is not None
    assert "--format" in exc.value.message


# ------------------------------------------------------------------------ trace_info


def test_trace_info_and_render(tmp_path: Path) -> None:
    t = load_trace(swf(tmp_path, SMALL))
    info = trace_info(t)
    json.dumps(info)  # JSON-ready
    assert info["header"]["MaxProcs"] == 8
    assert info["header"]["MaxRuntime"] is None
    assert info["loading"]["dropped"] == {"run < 0": 1, "units <= 0": 1}
    assert info["loading"]["lines_read"] == 6
    pop = info["population"]
    assert list(pop) == list(SWF_FIELDS)
    assert pop["run"] == 1.0 and pop["avg_cpu"] == 0.0 and pop["req_mem"] == 0.0
    jobs = info["jobs"]
    assert jobs["count"] == 4
    assert jobs["first_submit"] == 100
    assert jobs["last_end"] == 180  # job 4: 130 + 0 + 50
    assert jobs["span_s"] == 80
    assert jobs["users"] == 1
    assert jobs["run"]["min"] == 10 and jobs["run"]["max"] == 50 and jobs["run"]["median"] == 10
    assert jobs["units"]["max"] == 16
    assert jobs["requested_time"]["mean"] == 30.0
    assert jobs["overrun_share"] == 0.25
    console = Console(record=True, width=120)
    console.print(render_trace_info(info))
    text = console.export_text()
    assert "MaxProcs" in text and "units <= 0: 1" in text and "req_procs" in text


def test_trace_info_counts_population_shares() -> None:
    t = table(submit=[0, 1, 2, 3], run=[1, 1, 1, 1], user=[1, -1, 2, 2])
    info = trace_info(t)
    assert info["population"]["user"] == 0.75
    assert info["jobs"]["users"] == 2


@pytest.mark.traces
def test_kth_window_and_fraction() -> None:
    path = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not path.exists():
        pytest.skip(f"trace not found: {path.resolve()} (shared traces absent)")
    full = load_trace(path)
    last = load_trace(path, fraction=("last", 0.3))
    k = int(np.floor(0.3 * 28475 + 0.5))
    assert len(last) == k
    np.testing.assert_array_equal(last["job_id"], full["job_id"][-k:])
    assert last["submit"][0] == 0
    assert last.info.time_offset == full["submit"][-k]
    np.testing.assert_array_equal(last["submit"] + last.info.time_offset, full["submit"][-k:])
