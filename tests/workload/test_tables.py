"""Parquet and CSV job tables: exact round trips and the same validation as SWF."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import TRACES_DIR
from dispatchlab.core.errors import InputError
from dispatchlab.workload.jobs import ALL_FIELDS, FLOAT_FIELDS, JobTable, TraceInfo
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.swf import read_swf, write_swf
from dispatchlab.workload.tables import (
    INFO_KEY,
    read_csv,
    read_parquet,
    read_table,
    write_csv,
    write_parquet,
)

TRACES = TRACES_DIR

SWF_TEXT = """; Version: 2.2
; MaxProcs: 1664 (72, 1368, 224)
; MaxRuntime: N/A
;              continuation
1 100 5 50 4 0.03 552.21 4 100 -1 1 3 1 -1 -1 -1 -1 -1
2 100 5 60 8 142.00 -1 -1 -1 -1 1 4 1 -1 -1 -1 -1 -1
3 50 5 70 -1 1e-7 -1 2 300 -1 1 3 1 -1 -1 -1 -1 -1
4 70 5 -1 2 -1 -1 2 9000 2048 0 5 1 -1 -1 -1 -1 -1
5 20 5 10 0 -1 -1 0 60 -1 0 5 1 -1 -1 -1 -1 -1
"""


def assert_tables_equal(a: JobTable, b: JobTable, *, skip: tuple[str, ...] = ()) -> None:
    assert list(a.columns) == list(b.columns)
    for name in a.columns:
        if name in skip:
            continue
        assert a[name].dtype == b[name].dtype, name
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert list(a.resources) == list(b.resources)
    for name in a.resources:
        assert b.resources[name].dtype == np.int64
        np.testing.assert_array_equal(a.resources[name], b.resources[name], err_msg=name)


@pytest.fixture
def swf_table(tmp_path: Path) -> JobTable:
    path = tmp_path / "src.swf"
    path.write_text(SWF_TEXT)
    return read_swf(path)


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_round_trip_swf_table_file_table(tmp_path: Path, swf_table: JobTable, suffix: str) -> None:
    path = tmp_path / ("t" + suffix)
    (write_parquet if suffix == ".parquet" else write_csv)(swf_table, path)
    back = read_table(path)
    assert_tables_equal(swf_table, back)
    assert back["avg_cpu"].tolist() == [-1.0, 1e-7, -1.0, 0.03, 142.0]
    if suffix == ".parquet":
        assert back.info == swf_table.info  # the info travels in the schema metadata
        assert back.info.header_lines == swf_table.info.header_lines
    else:
        assert back.info.source == str(path)


def test_round_trip_swf_to_parquet_to_swf(tmp_path: Path, swf_table: JobTable) -> None:
    write_parquet(swf_table, tmp_path / "t.parquet")
    write_swf(read_parquet(tmp_path / "t.parquet"), tmp_path / "t.swf")
    assert_tables_equal(swf_table, read_swf(tmp_path / "t.swf"), skip=("line",))


def test_parquet_metadata_is_json(tmp_path: Path, swf_table: JobTable) -> None:
    write_parquet(swf_table, tmp_path / "t.parquet")
    schema = pq.read_schema(tmp_path / "t.parquet")
    assert INFO_KEY in schema.metadata
    names = schema.names
    assert names[: len(ALL_FIELDS)] == list(ALL_FIELDS) and names[-1] == "res_core"
    for name in ALL_FIELDS:
        kind = pa.float64() if name in FLOAT_FIELDS else pa.int64()
        assert schema.field(name).type == kind


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_cleaned_and_rebased_table_round_trips(
    tmp_path: Path, swf_table: JobTable, suffix: str
) -> None:
    t = load_trace(Path(swf_table.info.source), fraction=("last", 0.5))
    assert t.info.time_offset > 0
    path = tmp_path / ("c" + suffix)
    (write_parquet if suffix == ".parquet" else write_csv)(t, path)
    back = load_trace(path)  # cleaning again changes nothing
    assert_tables_equal(t, back)
    if suffix == ".parquet":
        assert back.info == t.info


def test_resources_and_extra_columns_round_trip(tmp_path: Path) -> None:
    t = JobTable.from_arrays(
        submit=[0, 3, 3],
        run=[1, 2, 3],
        units=[1, 2, 1],
        resources={"core": [4, 4, 2], "gpu": [0, 1, 2]},
    )
    t.columns["predicted"] = np.array([1.5, 2.5, 3.5])
    for name in ("r.parquet", "r.csv"):
        write_parquet(t, tmp_path / name) if name.endswith("parquet") else write_csv(
            t, tmp_path / name
        )
        back = read_table(tmp_path / name)
        assert_tables_equal(t, back)


@pytest.mark.traces
def test_real_trace_round_trip(tmp_path: Path) -> None:
    path = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not path.exists():
        pytest.skip(f"trace not found: {path.resolve()} (shared traces absent)")
    t = load_trace(path)
    for name in ("k.parquet", "k.csv"):
        out = tmp_path / name
        write_parquet(t, out) if name.endswith("parquet") else write_csv(t, out)
        assert_tables_equal(t, load_trace(out))


# ------------------------------------------------------------------------ hand-made CSV


def csv(tmp_path: Path, text: str, name: str = "h.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_minimal_csv_derives_columns(tmp_path: Path) -> None:
    path = csv(
        tmp_path,
        "submit,run,req_procs,alloc_procs,req_time\n20,5,-1,8,100\n10,6,4,4,-1\n10,7,2,2,50\n",
    )
    t = read_csv(path)
    assert list(t.columns) == list(ALL_FIELDS)
    assert t["submit"].tolist() == [10, 10, 20]  # stable sort: file order on ties
    assert t["line"].tolist() == [3, 4, 2]  # CSV lines (header = line 1)
    assert t["units"].tolist() == [4, 2, 8]
    assert t["requested_time"].tolist() == [100, 50, 100]  # max requested time
    assert t.info.estimate_fallbacks == 1
    assert t["job_id"].tolist() == [-1, -1, -1]
    assert t["avg_cpu"].dtype == np.float64
    assert t.resources["core"].tolist() == [1, 1, 1]


@pytest.mark.parametrize(
    ("header", "missing"),
    [("run,units", "submit"), ("submit,units", "run"), ("submit,run,wait", "units")],
)
def test_missing_required_column(tmp_path: Path, header: str, missing: str) -> None:
    path = csv(tmp_path, header + "\n" + ",".join("1" for _ in header.split(",")) + "\n")
    with pytest.raises(InputError) as exc:
        read_csv(path)
    assert exc.value.file == str(path) and exc.value.field == missing
    assert "missing required column" in exc.value.message


def test_missing_required_column_parquet(tmp_path: Path) -> None:
    path = tmp_path / "m.parquet"
    pq.write_table(pa.table({"submit": [1, 2], "units": [1, 1]}), path)
    with pytest.raises(InputError) as exc:
        read_parquet(path)
    assert (exc.value.file, exc.value.field) == (str(path), "run")


def test_csv_decimals_follow_the_swf_rules(tmp_path: Path) -> None:
    ok = read_csv(csv(tmp_path, "submit,run,units,wait\n0,5.0,1,2.6\n1,3,1,4\n"))
    assert ok["run"].tolist() == [5, 3] and ok["run"].dtype == np.int64
    assert ok["wait"].tolist() == [3, 4]
    assert ok.info.rounded == {"wait": 1}
    path = csv(tmp_path, "submit,run,units\n0,5,1\n1,3.5,1\n", "bad.csv")
    with pytest.raises(InputError) as exc:
        read_csv(path)
    assert (exc.value.line, exc.value.field) == (3, "run")
    assert "not a whole number" in exc.value.message


def test_csv_non_numeric_and_empty_cells(tmp_path: Path) -> None:
    path = csv(tmp_path, "submit,run,units\n0,5,1\n1,5,1\n2,abc,1\n")
    with pytest.raises(InputError) as exc:
        read_csv(path)
    assert str(exc.value) == f"{path}:4: field run: not a number: 'abc'"
    path = csv(tmp_path, "submit,run,units\n0,5,1\n1,,1\n", "e.csv")
    with pytest.raises(InputError) as exc:
        read_csv(path)
    assert (exc.value.line, exc.value.field) == (3, "run")


def test_csv_missing_submit_and_negative_estimate(tmp_path: Path) -> None:
    path = csv(tmp_path, "submit,run,units\n0,5,1\n-1,5,1\n")
    with pytest.raises(InputError) as exc:
        read_csv(path)
    assert (exc.value.line, exc.value.field) == (3, "submit")
    path = csv(tmp_path, "submit,run,units,req_time\n0,5,1,-3\n", "r.csv")
    with pytest.raises(InputError) as exc:
        read_csv(path)
    assert (exc.value.line, exc.value.field) == (2, "req_time")


def test_parquet_validation(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"submit": [0, 1], "run": [1.0, 2.5], "units": [1, 1]}), path)
    with pytest.raises(InputError) as exc:
        read_parquet(path)
    assert exc.value.field == "run" and "row 2" in exc.value.message
    pq.write_table(pa.table({"submit": [0, None], "run": [1, 2], "units": [1, 1]}), path)
    with pytest.raises(InputError) as exc:
        read_parquet(path)
    assert exc.value.field == "submit" and "missing value" in exc.value.message
    pq.write_table(pa.table({"submit": [0, 1], "run": ["a", "b"], "units": [1, 1]}), path)
    with pytest.raises(InputError, match="not numeric"):
        read_parquet(path)
    pq.write_table(pa.table({"submit": [1, 0], "run": [1.0, 2.0], "units": [1, 1]}), path)
    t = read_parquet(path)
    assert t["submit"].tolist() == [0, 1] and t["run"].tolist() == [2, 1]
    assert t["line"].tolist() == [0, 0]


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_table(tmp_path / "none.parquet")
    garbage = tmp_path / "g.parquet"
    garbage.write_bytes(b"not parquet at all")
    with pytest.raises(InputError) as exc:
        read_parquet(garbage)
    assert exc.value.file == str(garbage)
    with pytest.raises(InputError, match="no jobs"):
        read_csv(csv(tmp_path, "submit,run,units\n"))
    with pytest.raises(InputError, match="unknown table format"):
        read_table(tmp_path / "x.json")
    with pytest.raises(InputError):
        read_csv(csv(tmp_path, "", "empty.csv"))


def test_info_without_metadata_is_fresh(tmp_path: Path) -> None:
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"submit": [0], "run": [1], "units": [2]}), path)
    t = read_parquet(path)
    # no req_time column: every estimate is missing and falls back as in SWF
    expected = TraceInfo(
        source=str(path),
        lines_read=1,
        estimate_fallbacks=1,
        estimate_fallback_source="max run time",
        estimate_fallback_value=1,
    )
    assert t.info == expected
    assert t["req_time"].tolist() == [-1] and t["requested_time"].tolist() == [1]


def test_text_columns_and_name_tables_round_trip(tmp_path) -> None:
    """Optional text columns (job_ref, account, ...) and the info's name tables, format
    and skip counts survive a Parquet round trip."""
    from dispatchlab.workload.jobs import JobTable, TraceInfo
    from dispatchlab.workload.tables import read_parquet, write_parquet

    info = TraceInfo(format="sacct", codes={"user": ["ann", "bob"]},
                     skipped={"job steps folded": 4})
    t = JobTable.from_arrays(submit=[0, 5], run=[10, 20], units=[1, 2], info=info,
                             user=[1, 0])
    t.columns["job_ref"] = np.array(["12_1", "13+"], dtype=object)
    t.columns["account"] = np.array(["", "phys"], dtype=object)
    path = tmp_path / "x.parquet"
    write_parquet(t, path)
    back = read_parquet(path)
    assert back["job_ref"].tolist() == ["12_1", "13+"]
    assert back["account"].tolist() == ["", "phys"]
    assert back.info.format == "sacct" and back.info.codes == {"user": ["ann", "bob"]}
    assert back.info.skipped == {"job steps folded": 4}
    assert [back.info.codes["user"][k] for k in back["user"]] == ["bob", "ann"]
