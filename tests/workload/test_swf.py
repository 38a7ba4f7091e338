"""The SWF reader and writer: parsing, header, fallbacks, errors, round trips, real traces."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import TRACES_DIR
from dispatchlab.core.errors import InputError
from dispatchlab.core.limits import TIME_LIMIT
from dispatchlab.workload.clean import clean
from dispatchlab.workload.jobs import ALL_FIELDS, FLOAT_FIELDS, SWF_FIELDS, JobTable, TraceInfo
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.swf import leading_int, parse_header, read_swf, write_swf

TRACES = TRACES_DIR


def row(
    job: int,
    submit: int,
    run: int,
    procs: int = 4,
    req_time: int = 100,
    *,
    alloc: int | None = None,
    avg_cpu: str = "-1",
    used_mem: str = "-1",
    wait: int = 0,
    user: int = 1,
) -> str:
    """One SWF job line (18 fields)."""
    alloc = procs if alloc is None else alloc
    fields = [job, submit, wait, run, alloc, avg_cpu, used_mem, procs, req_time, -1, 1, user]
    fields += [1, -1, -1, -1, -1, -1]
    return " ".join(str(f) for f in fields)


def write(tmp_path: Path, lines: list[str], name: str = "t.swf", end: str = "\n") -> Path:
    path = tmp_path / name
    text = end.join(lines) + (end if lines else "")
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_bytes(text.encode())
    return path


def assert_tables_equal(a: JobTable, b: JobTable, *, skip: tuple[str, ...] = ()) -> None:
    assert list(a.columns) == list(b.columns)
    for name in a.columns:
        if name in skip:
            continue
        assert a[name].dtype == b[name].dtype, name
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert list(a.resources) == list(b.resources)
    for name in a.resources:
        np.testing.assert_array_equal(a.resources[name], b.resources[name], err_msg=name)


HEADER = [
    "; Version: 2.2",
    "; Computer: Test machine",
    "; Information: http://example.org/a",
    ";              http://example.org/b",
    "; MaxJobs: 5",
    "; MaxRecords: 5",
    "; UnixStartTime: 843480031",
    "; TimeZoneString: Europe/Stockholm",
    "; MaxNodes: 184  ( 6,  171,   7)",
    "; MaxProcs: 1664 (72, 1368, 224)",
    "; MaxRuntime: N/A",
    "; Queue:  0  interactive",
    "; Queue:  1  batch",
    ";",
    "; Note: THIS IS A CLEANED VERSION OF THE LOG!",
    ";       The filter used to produce it was",
]


# ----------------------------------------------------------------------------- parsing


def test_basic_columns_dtypes_and_order(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            *HEADER,
            row(1, 10, 50, 4, 100, avg_cpu="0.03", used_mem="552.21"),
            row(2, 20, 60, 8, 200, avg_cpu="142.00"),
            row(3, 30, 70, 2, 300, used_mem="7"),
        ],
    )
    t = read_swf(path)
    assert list(t.columns) == list(ALL_FIELDS)
    for name in ALL_FIELDS:
        expected = np.float64 if name in FLOAT_FIELDS else np.int64
        assert t[name].dtype == expected, name
    assert t["job_id"].tolist() == [1, 2, 3]
    assert t["submit"].tolist() == [10, 20, 30]
    assert t["run"].tolist() == [50, 60, 70]
    assert t["avg_cpu"].tolist() == [0.03, 142.0, -1.0]
    assert t["used_mem"].tolist() == [552.21, -1.0, 7.0]
    assert t["units"].tolist() == [4, 8, 2]
    assert t["requested_time"].tolist() == [100, 200, 300]
    assert t["line"].tolist() == [len(HEADER) + 1, len(HEADER) + 2, len(HEADER) + 3]
    assert t.resources["core"].tolist() == [1, 1, 1]
    assert t.info.lines_read == 3
    assert t.info.source == str(path)


def test_large_values_stay_exact(tmp_path: Path) -> None:
    # job numbers up to 2**53 stay exact; times up to the engine's limit
    path = write(tmp_path, [row(1, 0, 5, 1, 2147483647),
                            row(10**15 + 1, 1, 5, 1, TIME_LIMIT - 1)])
    t = read_swf(path)
    assert t["job_id"].tolist() == [1, 10**15 + 1]
    assert t["req_time"].tolist() == [2147483647, TIME_LIMIT - 1]


@pytest.mark.parametrize(("submit", "run", "req", "field"), [
    (TIME_LIMIT, 5, 100, r"field 2 \(submit\): submit time 4,398,046,511,104 s"),
    (0, 10**15, 100, r"field 4 \(run\): run time 1,000,000,000,000,000 s"),
    (0, 5, TIME_LIMIT, r"field 9 \(req_time\): requested time 4,398,046,511,104 s"),
])
def test_times_beyond_the_engine_limit(tmp_path: Path, submit: int, run: int, req: int,
                                       field: str) -> None:
    # the one bound of sim.limits: an error naming file, line and field; under lenient
    # a counted skip, and lines_read counts the skipped line
    path = write(tmp_path, [row(1, 0, 5), row(2, submit, run, 1, req), row(3, 2, 5)])
    with pytest.raises(InputError, match=rf"t\.swf:2: {field} is beyond the engine's "
                                         r"time limit \(4,398,046,511,103 s"):
        read_swf(path)
    t = read_swf(path, lenient=True)
    assert t["job_id"].tolist() == [1, 3]
    assert t.info.malformed_skipped == 1 and t.info.lines_read == 3


def test_header_parsing(tmp_path: Path) -> None:
    path = write(tmp_path, [*HEADER, row(1, 0, 5)])
    info = read_swf(path).info
    assert info.max_procs == 1664
    assert info.max_nodes == 184
    assert info.max_runtime is None  # "N/A"
    assert info.max_jobs == 5 and info.max_records == 5
    assert info.unix_start_time == 843480031
    assert info.header["MaxRuntime"] == "N/A"
    assert info.header["MaxProcs"] == "1664 (72, 1368, 224)"
    assert info.header["TimeZoneString"] == "Europe/Stockholm"
    assert info.header["Information"] == "http://example.org/a"  # continuation ignored
    assert info.header["Queue"] == "0  interactive\n1  batch"
    assert "http" not in info.header
    assert info.header_lines == tuple(HEADER)


def test_header_helpers() -> None:
    assert leading_int("1664 (72, 1368, 224)") == 1664
    assert leading_int("  -5 s") == -5
    assert leading_int("N/A") is None
    assert leading_int(None) is None
    header = parse_header([";       MaxJobs: 7", ";\tsee: http://x", "; Note:", ";Version: 2"])
    assert header == {"MaxJobs": "7", "Note": "", "Version": "2"}


def test_units_fallback_to_allocated(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            row(1, 0, 5, procs=-1, alloc=16),
            row(2, 1, 5, procs=8, alloc=16),
            row(3, 2, 5, -1, alloc=-1),
        ],
    )
    t = read_swf(path)
    assert t["units"].tolist() == [16, 8, -1]
    assert t["req_procs"].tolist() == [-1, 8, -1]


def test_estimate_fallback_max_runtime(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ["; MaxRuntime: 7200", row(1, 0, 5, 1, -1), row(2, 1, 5, 1, 900), row(3, 2, 5, 1, -1)],
    )
    info_t = read_swf(path)
    assert info_t["requested_time"].tolist() == [7200, 900, 7200]
    assert info_t["req_time"].tolist() == [-1, 900, -1]
    assert info_t.info.estimate_fallbacks == 2
    assert info_t.info.estimate_fallback_source == "MaxRuntime"
    assert info_t.info.estimate_fallback_value == 7200


def test_estimate_fallback_max_requested_over_all_lines(tmp_path: Path) -> None:
    # the largest requested time (5000) belongs to a job that cleaning drops (procs 0)
    path = write(
        tmp_path,
        [
            "; MaxRuntime: N/A",
            row(1, 0, 5, 1, -1),
            row(2, 1, 5, 0, 5000),
            row(3, 2, 5, 1, 900),
            row(4, 3, 5, 1, -1),
        ],
    )
    raw = read_swf(path)
    assert raw.info.estimate_fallbacks == 2
    assert raw.info.estimate_fallback_source == "max requested time"
    assert raw.info.estimate_fallback_value == 5000
    cleaned = load_trace(path)
    assert cleaned["requested_time"].tolist() == [5000, 900, 5000]
    assert cleaned.info.estimate_fallbacks == 2


def test_estimate_fallback_max_run_time(tmp_path: Path) -> None:
    path = write(tmp_path, [row(1, 0, 5, 1, -1), row(2, 1, 77, 1, -1)])
    t = read_swf(path)
    assert t["requested_time"].tolist() == [77, 77]
    assert t.info.estimate_fallback_source == "max run time"
    assert t.info.estimate_fallbacks == 2


def test_no_fallback_when_every_job_has_an_estimate(tmp_path: Path) -> None:
    t = read_swf(write(tmp_path, ["; MaxRuntime: 10", row(1, 0, 5, 1, 60)]))
    assert t.info.estimate_fallbacks == 0
    assert t.info.estimate_fallback_source is None
    assert t["requested_time"].tolist() == [60]


def test_stable_sort_on_tied_submit_times(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [row(1, 50, 1), row(2, 10, 1), row(3, 50, 1), row(4, 10, 1), row(5, 30, 1), row(6, 10, 1)],
    )
    t = read_swf(path)
    assert t["submit"].tolist() == [10, 10, 10, 30, 50, 50]
    assert t["job_id"].tolist() == [2, 4, 6, 5, 1, 3]
    assert t["line"].tolist() == [2, 4, 6, 5, 1, 3]


def test_stable_sort_many_ties(tmp_path: Path) -> None:
    # large enough for numpy's default (unstable) sort to reorder ties
    rng = np.random.default_rng(7)
    submits = rng.integers(0, 5, 500)
    t = read_swf(write(tmp_path, [row(i + 1, int(s), 1) for i, s in enumerate(submits)]))
    assert np.all(np.diff(t["submit"]) >= 0)
    for value in range(5):
        group = t["job_id"][t["submit"] == value]
        assert np.all(np.diff(group) > 0)  # file order within a tie
    np.testing.assert_array_equal(t["line"], t["job_id"])


def test_whitespace_crlf_blank_lines_and_no_final_newline(tmp_path: Path) -> None:
    text = "; MaxProcs: 8\r\n\r\n\t" + row(1, 0, 5).replace(" ", " \t ") + "\r\n\n  " + row(2, 1, 6)
    path = tmp_path / "w.swf"
    path.write_bytes(text.encode())
    t = read_swf(path)
    assert t["job_id"].tolist() == [1, 2]
    assert t["line"].tolist() == [3, 5]
    assert t.info.max_procs == 8
    assert t.info.header_lines == ("; MaxProcs: 8",)


def test_gzip_and_plain_give_the_same_table(tmp_path: Path) -> None:
    lines = [*HEADER, *(row(i, i * 3, i) for i in range(1, 50))]
    a = read_swf(write(tmp_path, lines, "a.swf"))
    b = read_swf(write(tmp_path, lines, "b.swf.gz"))
    assert_tables_equal(a, b)


@pytest.mark.parametrize("chunk", [16, 97, 1000])
def test_small_chunks_give_the_same_table(tmp_path: Path, chunk: int) -> None:
    rng = np.random.default_rng(3)
    lines = ["; MaxProcs: 64"]
    for i in range(300):
        if i % 37 == 5:
            lines.append("; a comment in the middle")
        avg = f"{rng.integers(0, 10**6) / 100:.2f}"
        lines.append(row(i + 1, int(rng.integers(0, 500)), int(rng.integers(-1, 999)), avg_cpu=avg))
    path = write(tmp_path, lines)
    assert_tables_equal(read_swf(path, chunk_bytes=chunk), read_swf(path))


def test_decimals_exponents_and_signs(tmp_path: Path) -> None:
    line = row(1, 0, 5, avg_cpu="1e3", used_mem="2.5E-1").replace(" 0 5 ", " +0 5.00 ", 1)
    t = read_swf(write(tmp_path, [line, row(2, 1, 5, avg_cpu=".5", used_mem="-0.25")]))
    assert t["avg_cpu"].tolist() == [1000.0, 0.5]
    assert t["used_mem"].tolist() == [0.25, -0.25]
    assert t["run"].tolist() == [5, 5]
    assert t["submit"].tolist() == [0, 1]


def test_decimal_in_unused_int_field_is_rounded_and_counted(tmp_path: Path) -> None:
    line = row(1, 0, 5).split()
    line[2] = "3.6"  # wait
    line[9] = "10.25"  # requested memory
    t = read_swf(write(tmp_path, [" ".join(line), row(2, 1, 5, wait=7)]))
    assert t["wait"].tolist() == [4, 7]
    assert t["req_mem"].tolist() == [10, -1]
    assert t.info.rounded == {"wait": 1, "req_mem": 1}


# ------------------------------------------------------------------------------ errors


def error_of(path: Path, **kw: object) -> InputError:
    with pytest.raises(InputError) as exc:
        read_swf(path, **kw)  # type: ignore[arg-type]
    return exc.value


def test_too_few_fields_names_line_and_field(tmp_path: Path) -> None:
    short = " ".join(row(2, 1, 5).split()[:17])
    path = write(tmp_path, ["; Version: 2", row(1, 0, 5), short, row(3, 2, 5)])
    err = error_of(path)
    assert (err.file, err.line, err.field) == (str(path), 3, "18 (think_time)")
    assert (
        str(err) == f"{path}:3: field 18 (think_time): missing: the line has 17 fields, SWF has 18"
    )


def test_too_many_fields_names_line_and_field(tmp_path: Path) -> None:
    path = write(tmp_path, [row(1, 0, 5), row(2, 1, 5), row(3, 2, 5) + " 7"])
    err = error_of(path)
    assert (err.line, err.field) == (3, "19")
    assert "19 fields" in err.message and "extra_fields='ignore'" in err.message


def test_non_numeric_value_names_line_and_field(tmp_path: Path) -> None:
    bad = row(2, 1, 5).split()
    bad[3] = "abc"
    path = write(tmp_path, [row(1, 0, 5), " ".join(bad)])
    err = error_of(path)
    assert str(err) == f"{path}:2: field 4 (run): not a number: 'abc'"


@pytest.mark.parametrize(
    ("token", "field", "label"),
    [
        ("1-2", 1, "2 (submit)"),
        ("-", 4, "5 (alloc_procs)"),
        (".", 10, "11 (status)"),
        ("1.2.3", 6, "7 (used_mem)"),
        ("1e", 5, "6 (avg_cpu)"),
        ("0x10", 11, "12 (user)"),
    ],
)
def test_malformed_tokens(tmp_path: Path, token: str, field: int, label: str) -> None:
    bad = row(3, 2, 5).split()
    bad[field] = token
    lines = [row(1, 0, 5), row(2, 1, 5), " ".join(bad), row(4, 3, 5)]
    path = write(tmp_path, lines)
    err = error_of(path)
    assert (err.line, err.field) == (3, label)
    assert token in err.message
    t = read_swf(path, lenient=True)
    assert t["job_id"].tolist() == [1, 2, 4]
    assert t.info.malformed_skipped == 1


def test_fraction_in_a_simulation_field_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, [row(1, 0, 5), row(2, 1, 5).replace(" 1 0 5 ", " 1 0 5.5 ", 1)])
    err = error_of(path)
    assert (err.line, err.field) == (2, "4 (run)")
    assert "not a whole number: '5.5'" in err.message


def test_first_error_in_file_order_is_reported(tmp_path: Path) -> None:
    lines = [row(i, i, 5) for i in range(1, 10)]
    lines[6] = lines[6] + " 1"  # extra field on line 7
    bad = lines[3].split()
    bad[8] = "x9"
    lines[3] = " ".join(bad)  # non-numeric on line 4
    err = error_of(write(tmp_path, lines))
    assert (err.line, err.field) == (4, "9 (req_time)")


def test_error_line_numbers_across_chunks(tmp_path: Path) -> None:
    lines = [row(i, i, 5) for i in range(1, 400)]
    lines[350] = lines[350].replace(" 5 ", " five ", 1)
    err = error_of(write(tmp_path, lines), chunk_bytes=100)
    assert (err.line, err.field) == (351, "4 (run)")


def test_lenient_skips_and_counts(tmp_path: Path) -> None:
    lines = [
        row(1, 0, 5),
        "1 2 3",
        row(3, 2, 5) + " 9",
        row(4, 3, 5).replace(" 5 ", " x ", 1),
        row(5, 4, 5).replace(" 5 ", " 2.5 ", 1),
        row(6, -1, 5),  # missing submit for a job with procs and a run time
        row(7, 6, 5, 1, -7),  # requested time below -1
        row(8, 7, 5),
    ]
    t = read_swf(write(tmp_path, lines), lenient=True)
    assert t["job_id"].tolist() == [1, 8]
    assert t.info.malformed_skipped == 6
    assert t["line"].tolist() == [1, 8]


def test_missing_submit_is_an_error_naming_the_line(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, [row(1, 0, 5), row(2, -1, 5)]))
    assert (err.line, err.field) == (2, "2 (submit)")
    assert "missing submit time" in err.message


def test_missing_submit_of_a_job_that_never_ran_is_kept_for_cleaning(tmp_path: Path) -> None:
    # like the 1,190 records of LLNL-Thunder: submit, procs and run all -1
    path = write(tmp_path, [row(1, 0, 5), row(2, -1, -1, -1, -1, alloc=-1), row(3, 2, 5)])
    raw = read_swf(path)
    assert raw["job_id"].tolist() == [2, 1, 3]
    cleaned = load_trace(path)
    assert cleaned["job_id"].tolist() == [1, 3]
    assert cleaned.info.dropped == {"units <= 0": 1}


def test_negative_requested_time_is_an_error(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, [row(1, 0, 5, 1, -2)]))
    assert (err.line, err.field) == (1, "9 (req_time)")


def test_empty_file(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, []))
    assert "no jobs" in err.message and err.file is not None
    err = error_of(write(tmp_path, ["; Version: 2", ";", ""], "c.swf"))
    assert "no jobs" in err.message


def test_all_lines_malformed_in_lenient_mode_is_no_jobs(tmp_path: Path) -> None:
    err = error_of(write(tmp_path, ["1 2 3", "x"]), lenient=True)
    assert "no jobs" in err.message and "2 malformed" in err.message


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.swf.gz"
    err = error_of(path)
    assert err.file == str(path) and "no such file" in err.message
    with pytest.raises(InputError, match=r"nope\.swf"):
        load_trace(tmp_path / "nope.swf")


def test_corrupt_gzip(tmp_path: Path) -> None:
    good = gzip.compress(("\n".join(row(i, i, 5) for i in range(1, 2000)) + "\n").encode())
    truncated = tmp_path / "trunc.swf.gz"
    truncated.write_bytes(good[: len(good) // 2])
    assert "gzip" in error_of(truncated).message
    garbage = tmp_path / "garbage.swf.gz"
    garbage.write_bytes(b"\x1f\x8b" + bytes(range(200)))
    assert error_of(garbage).file == str(garbage)
    notgz = tmp_path / "plain.swf.gz"
    notgz.write_bytes(b"1 2 3\n")
    assert "not a gzip file" in error_of(notgz).message


def test_extra_fields_ignore(tmp_path: Path) -> None:
    lines = [row(1, 0, 5) + " {1241,1241} q_2h nodes=1:ppn=4:mem=1.5gb", row(2, 1, 6) + " x"]
    path = write(tmp_path, lines)
    assert error_of(path).field == "19"
    t = read_swf(path, extra_fields="ignore")
    assert t["job_id"].tolist() == [1, 2]
    assert t["think_time"].tolist() == [-1, -1]
    with pytest.raises(InputError, match="extra_fields"):
        read_swf(path, extra_fields="drop")  # type: ignore[arg-type]
    # too few fields is still an error
    short = write(tmp_path, [" ".join(row(1, 0, 5).split()[:10])], "short.swf")
    assert error_of(short, extra_fields="ignore").field == "11 (status)"


# -------------------------------------------------------------------------- round trips


def test_round_trip_swf_table_swf(tmp_path: Path) -> None:
    lines = [
        *HEADER,
        row(1, 100, 50, 4, 100, avg_cpu="0.03", used_mem="552.21"),
        row(2, 100, 60, 8, -1, avg_cpu="142.00"),
        row(3, 50, 70, -1, 300, alloc=3, used_mem="1e-7"),
        row(4, 70, -1, 2, 9000),
    ]
    src = write(tmp_path, lines)
    t = read_swf(src)
    for name in ("out.swf", "out.swf.gz"):
        out = tmp_path / name
        write_swf(t, out)
        back = read_swf(out)
        assert_tables_equal(t, back, skip=("line",))
        assert back.info.header["MaxProcs"] == "1664 (72, 1368, 224)"
        assert back.info.header_lines[: len(HEADER)] == tuple(HEADER)
        assert back.info.header_lines[len(HEADER)] == "; Note: written by dispatchlab"
        # writing again does not stack our own lines
        write_swf(back, tmp_path / "again.swf")
        again = read_swf(tmp_path / "again.swf")
        assert again.info.header_lines == back.info.header_lines
    text = (tmp_path / "out.swf").read_text()
    assert "142 " in text and "142.0" not in text and "0.03 552.21" in text


def test_round_trip_keeps_the_fallback_after_cleaning(tmp_path: Path) -> None:
    lines = [row(1, 0, 5, 1, -1), row(2, 1, 5, 0, 5000), row(3, 2, 5, 1, 900)]
    t = load_trace(write(tmp_path, lines))
    assert t["requested_time"].tolist() == [5000, 900]
    write_swf(t, tmp_path / "o.swf")
    back = read_swf(tmp_path / "o.swf")  # the 5000 line is gone from this file
    assert_tables_equal(t, back, skip=("line",))
    assert back.info.estimate_fallback_source == "max requested time"


def test_write_swf_from_a_table_without_header(tmp_path: Path) -> None:
    t = JobTable.from_arrays(submit=[0, 5, 5], run=[1, 2, 3], units=[1, 2, 3])
    write_swf(t, tmp_path / "m.swf")
    back = read_swf(tmp_path / "m.swf")
    assert_tables_equal(t, back, skip=("line",))
    assert back["line"].tolist() == [2, 3, 4]


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
ints = st.integers(min_value=-1, max_value=2**40)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 10**9), ints, finite, finite, ints), min_size=1, max_size=30
    )
)
def test_round_trip_property(
    tmp_path: Path, data: list[tuple[int, int, float, float, int]]
) -> None:
    n = len(data)
    submit, run, avg, mem, user = (list(c) for c in zip(*data, strict=True))
    t = JobTable.from_arrays(
        submit=submit,
        run=run,
        units=[1] * n,
        avg_cpu=avg,
        used_mem=mem,
        user=user,
        info=TraceInfo(header={"MaxProcs": "8"}),
    )
    write_swf(t, tmp_path / "p.swf.gz")
    back = read_swf(tmp_path / "p.swf.gz")
    assert_tables_equal(t, back, skip=("line",))
    assert back.info.max_procs == 8


# ------------------------------------------------------------------------- real traces

#: file -> (job lines, jobs after default cleaning, dropped per reason). The line
#: counts match SOURCES.md (= MaxRecords where the header has it).
REAL = {
    "ANL-Theta-2022-cqsim.swf.gz": (23911, 23911, {}),
    "CEA-Curie-2011-2.1-cln.swf.gz": (312826, 312807, {"units <= 0": 19}),
    "CTC-SP2-1996-3.1-cln.swf.gz": (77222, 77222, {}),
    "HPC2N-2002-2.2-cln.swf.gz": (202871, 202871, {}),
    "KTH-SP2-1996-2.1-cln.swf.gz": (28476, 28475, {"units <= 0": 1}),
    "LANL-CM5-1994-4.1-cln.swf.gz": (122060, 122057, {"units <= 0": 3}),
    "LCG-2005-1.swf.gz": (188041, 188041, {}),
    "LLNL-Atlas-2006-2.1-cln.swf.gz": (43778, 39207, {"units <= 0": 4571}),
    "LLNL-Thunder-2007-1.1-cln.swf.gz": (121039, 118791, {"units <= 0": 2248}),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (18239, 18239, {}),
    "OSC-Clust-2000-3.1-cln.swf.gz": (36097, 36097, {}),
    "RICC-2010-2.swf.gz": (447794, 447794, {}),
    "SDSC-BLUE-2000-4.2-cln.swf.gz": (243306, 232562, {"run < 0": 10744}),
    "SDSC-DS-2004-2.1-cln.swf.gz": (96069, 85045, {"run < 0": 11024}),
    "SDSC-Par-1996-3.1-cln.swf.gz": (32135, 32135, {}),
    "SDSC-SP2-1998-4.2-cln.swf.gz": (59715, 54044, {"run < 0": 5671}),
    "Sandia-Ross-2001-1.1-cln.swf.gz": (57882, 57867, {"units <= 0": 15}),
    "UniLu-Gaia-2014-1.swf.gz": (51987, 51860, {"run < 0": 127}),
    "lublin_256.swf.gz": (10000, 10000, {}),
}


def trace(name: str) -> Path:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"trace {name} not found in {TRACES.resolve()} (shared traces absent)")
    return path


@pytest.mark.traces
def test_kth_loads_28476_lines_and_cleaning_keeps_28475() -> None:
    path = trace("KTH-SP2-1996-2.1-cln.swf.gz")
    raw = read_swf(path)
    assert len(raw) == raw.info.lines_read == 28476
    assert raw.info.max_records == 28476 and raw.info.max_jobs == 28490
    assert raw.info.max_procs == 100 and raw.info.unix_start_time == 843480031
    # the one job without processors: job 27313 (fields 5 and 8 are -1)
    gone = np.flatnonzero(raw["units"] <= 0)
    assert raw["job_id"][gone].tolist() == [27313]
    assert raw["line"][gone].tolist() == [27323]
    cleaned = load_trace(path)
    assert len(cleaned) == 28475
    assert cleaned.info.dropped == {"units <= 0": 1}
    assert np.all(np.diff(cleaned["submit"]) >= 0)


@pytest.mark.parametrize("name", sorted(REAL))
@pytest.mark.traces
def test_real_traces_load(name: str) -> None:
    path = trace(name)
    lines, kept, dropped = REAL[name]
    t = load_trace(path)
    assert t.info.lines_read == lines
    assert t.info.malformed_skipped == 0
    assert len(t) == kept
    assert t.info.dropped == dropped
    assert np.all(np.diff(t["submit"]) >= 0)
    assert np.all(t["units"] > 0) and np.all(t["run"] >= 0) and np.all(t["requested_time"] >= 0)


@pytest.mark.traces
def test_real_trace_facts() -> None:
    curie = read_swf(trace("CEA-Curie-2011-2.1-cln.swf.gz"))
    assert curie["req_time"].max() == 2147483647
    assert curie.info.estimate_fallbacks == 3
    assert curie.info.estimate_fallback_value == 2147483647
    lublin = read_swf(trace("lublin_256.swf.gz"))
    assert lublin.info.estimate_fallback_source == "MaxRuntime"
    assert lublin.info.estimate_fallbacks == 10000
    assert set(lublin["requested_time"].tolist()) == {162754}
    sdsc_ds = read_swf(trace("SDSC-DS-2004-2.1-cln.swf.gz"))
    assert sdsc_ds.info.max_procs == 1664 and sdsc_ds.info.max_nodes == 184
    ctc = read_swf(trace("CTC-SP2-1996-3.1-cln.swf.gz"))
    assert ctc["avg_cpu"][0] == 142.0  # written "142.00" on the first job line


@pytest.mark.traces
def test_alea_needs_extra_fields_ignore() -> None:
    path = trace("alea-wagap-2013.swf.gz")
    with pytest.raises(InputError) as exc:
        read_swf(path)
    assert (exc.value.line, exc.value.field) == (1, "19")
    t = load_trace(path, extra_fields="ignore")
    assert t.info.lines_read == 17900
    assert len(t) == 17898 and t.info.dropped == {"run < 0": 2}
    assert t["req_mem"].max() == 549755813888  # bytes (512 GiB), beyond int32
    assert t.info.header == {}


@pytest.mark.traces
def test_real_trace_round_trip(tmp_path: Path) -> None:
    t = clean(read_swf(trace("SDSC-SP2-1998-4.2-cln.swf.gz")))
    write_swf(t, tmp_path / "sp2.swf.gz")
    assert_tables_equal(t, read_swf(tmp_path / "sp2.swf.gz"), skip=("line",))


def test_swf_fields_constant() -> None:
    assert len(SWF_FIELDS) == 18
