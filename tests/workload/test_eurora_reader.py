"""The Eurora job-instance reader (PA-HPC-SIM test data, ``*.log_crypt``).

Crafted instances are written by the tests in the line format of the archive's
``test_data/README`` (``job;exe;user;queue;arrival__node;cores;gpus;mics;mem#...__start;
end;req nodes;req cores;req mem;HH:MM;NA;NA;status;app``); the expected values are
computed by hand in the comments. The tests over the real archive skip when
``../shared/traces`` is absent.
"""

from __future__ import annotations

import gzip
import io
import re
import statistics
import subprocess
import sys
import tarfile
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY
from dispatchlab.platform import NodeType
from dispatchlab.predict import WalltimePredictor
from dispatchlab.workload import clean_table
from dispatchlab.workload.eurora import (
    DEFAULT_MEM_KB,
    SKIP_DUPLICATE,
    looks_like_eurora,
    read_eurora,
    read_eurora_archive,
    split_archive_path,
)
from dispatchlab.workload.load import detect_format, load_trace

ARCHIVE_NAME = "Eurora-PA-HPC-SIM-testdata.tar.gz"
HIST = "test_data/job_instances/historical_traces"
#: 2014-04-01 10:00:00 in Rome (CEST, UTC+2) = 08:00:00 UTC = 1396310400 + 8 * 3600.
T0_ROME = 1396339200
DAY = "2014-04-01"


def hms(seconds: int) -> str:
    """``DAY HH:MM:SS`` for ``seconds`` after 10:00:00 (same day)."""
    h, rest = divmod(10 * 3600 + seconds, 3600)
    return f"{DAY} {h:02d}:{rest // 60:02d}:{rest % 60:02d}"


def job(jid: int = 1, *, arrival: int = 0, start: int = 0, end: int = 100,
        nodes: str = "14;8;0;0;2097152#", wall: str = "01:00", queue: str = "debug",
        status: str = "COMPLETED", app: str | None = "0", user: str = "yyy") -> str:
    """One job line; times are seconds after 10:00:00 of DAY."""
    tail = f"{hms(start)};{hms(end)};1;8;2;{wall};NA;NA;{status}"
    if app is not None:
        tail += f";{app}"
    return f"{jid};xxx;{user};{queue};{hms(arrival)}__{nodes}__{tail}"


def write(tmp_path: Path, lines: list[str], name: str = "inst.log_crypt") -> Path:
    path = tmp_path / name
    path.write_text("".join(x + "\n" for x in lines))
    return path


def read_eurora_text(lines: list[str]):
    """The table of an instance given as lines, written to a temporary folder
    (hypothesis tests cannot take the function-scoped ``tmp_path``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        return read_eurora(write(Path(folder), lines))


# --- one rule per test ----------------------------------------------------------------


def test_fields_of_one_job(tmp_path: Path) -> None:
    # arrival 10:00:00, start 10:00:05, end 10:10:05: wait 5, run 600; wall 01:30 = 5400 s
    # one node entry on node 14: 8 cores, 0 GPU, 0 MIC, 2097152 KB (2 GiB)
    t = read_eurora(write(tmp_path, [job(498521, start=5, end=605, wall="01:30", app="2",
                                         queue="parallel")]))
    assert len(t) == 1
    assert t["job_id"].tolist() == [498521]
    assert (t["submit"][0], t["wait"][0], t["run"][0]) == (0, 5, 600)
    assert (t["req_time"][0], t["requested_time"][0]) == (5400, 5400)
    assert (t["units"][0], t["alloc_procs"][0], t["req_procs"][0]) == (1, 8, 8)
    assert {k: int(v[0]) for k, v in t.resources.items()} == {
        "core": 8, "gpu": 0, "mic": 0, "mem": 2097152}
    assert t["req_mem"][0] == 2097152 // 8  # KB per processor
    assert t["app"][0] == 2 and t["status"][0] == 1
    assert t["queue"][0] == 0 and t.info.codes["queue"] == ["parallel"]
    assert t["nodes_used"][0] == 1 and t["alloc_nodes"][0] == "14:8"
    assert t["group"][0] == -1 and t["avg_cpu"][0] == -1
    assert t.info.format == "eurora" and t.info.lines_read == 1
    assert t.info.max_procs == 1024 and t.info.max_nodes == 64


def test_times_rebased_and_origin_kept(tmp_path: Path) -> None:
    # the earliest arrival is the SECOND line (file order is not time order): origin
    # 09:59:00 Rome = T0_ROME - 60; the first line arrives 60 s later
    lines = [job(1, arrival=0, start=0, end=10),
             job(2, arrival=-60, start=-60, end=0)]
    t = read_eurora(write(tmp_path, lines))
    assert t["job_id"].tolist() == [2, 1]
    assert t["submit"].tolist() == [0, 60]
    assert t.info.unix_start_time == T0_ROME - 60
    assert t.info.header["UnixStartTime"] == str(T0_ROME - 60)
    assert t.info.header["StartTime"] == "2014-04-01T09:59:00+02:00"
    assert t.info.header["TimeZoneString"] == "Europe/Rome"
    # read as UTC the same wall-clock dates are 2 h later in Unix seconds
    u = read_eurora(write(tmp_path, lines), timezone="UTC")
    assert u.info.unix_start_time == T0_ROME - 60 + 7200
    assert u.info.header["StartTime"] == "2014-04-01T09:59:00+00:00"  # same wall clock
    np.testing.assert_array_equal(u["submit"], t["submit"])


def test_zero_run_becomes_one_second(tmp_path: Path) -> None:
    # start == end: run 0 -> 1 s [PA]; the wall-time (1 h) is kept
    t = read_eurora(write(tmp_path, [job(start=3, end=3)]))
    assert t["run"][0] == 1 and t["requested_time"][0] == 3600


def test_run_longer_than_walltime_is_clipped_and_counted(tmp_path: Path) -> None:
    # wall 00:01 = 60 s; job 1 ran 90 s -> 60 (clipped); job 2 ran 60 s (kept)
    t = read_eurora(write(tmp_path, [job(1, end=90, wall="00:01"),
                                     job(2, arrival=1, start=1, end=61, wall="00:01")]))
    assert t["run"].tolist() == [60, 60]
    assert t.info.header["ClippedRuns"] == "1"
    assert "1 jobs ran longer than their wall-time" in t.info.header["Note"]
    assert np.all(t["run"] <= t["requested_time"])


def test_zero_walltime_becomes_real_duration_plus_up_to_a_minute(tmp_path: Path) -> None:
    # wall 00:00: requested = (run // 60 + 1) * 60 [PA], from the run BEFORE 0 -> 1:
    # run 130 -> 180; run 120 (a whole minute) -> 180; run 0 -> 60 and the run becomes 1
    t = read_eurora(write(tmp_path, [job(1, end=130, wall="00:00"),
                                     job(2, arrival=1, start=1, end=121, wall="00:00"),
                                     job(3, arrival=2, start=2, end=2, wall="00:00")]))
    assert t["requested_time"].tolist() == [180, 180, 60]
    assert t["req_time"].tolist() == [0, 0, 0]  # as written
    assert t["run"].tolist() == [130, 120, 1]
    assert t.info.header["ClippedRuns"] == "0"


def test_units_and_per_unit_requests_from_used_nodes(tmp_path: Path) -> None:
    # 3 entries: cores 16+16+8 = 40, GPUs 2+2+1 = 5, MICs 0, mem 3 x 14680064 + 1
    # units 3; per unit (integer division): 40 // 3 = 13 cores, 5 // 3 = 1 GPU,
    # (3 * 14680064 + 1) // 3 = 14680064 KB; alloc/req procs = the total, 40
    nodes = "37;16;2;0;14680064#46;16;2;0;14680064#47;8;1;0;14680065#"
    t = read_eurora(write(tmp_path, [job(nodes=nodes)]))
    assert t["units"][0] == 3
    assert {k: int(v[0]) for k, v in t.resources.items()} == {
        "core": 13, "gpu": 1, "mic": 0, "mem": 14680064}
    assert t["alloc_procs"][0] == 40 and t["req_procs"][0] == 40
    assert t["nodes_used"][0] == 3 and t["alloc_nodes"][0] == "37:16,46:16,47:8"


def test_a_node_in_several_entries(tmp_path: Path) -> None:
    # entries on nodes 7, 7, 14: 3 units (one per entry, PA), 2 distinct nodes; the
    # placement adds node 7's cores: 2 + 2
    nodes = "7;2;0;0;4194304#7;2;0;0;4194304#14;2;0;0;4194304#"
    t = read_eurora(write(tmp_path, [job(nodes=nodes)]))
    assert t["units"][0] == 3 and t["alloc_procs"][0] == 6
    assert t.resources["core"][0] == 2 and t.resources["mem"][0] == 4194304
    assert t["nodes_used"][0] == 2 and t["alloc_nodes"][0] == "7:4,14:2"


def test_missing_cores_and_memory_get_pa_defaults(tmp_path: Path) -> None:
    # job 1: entries with 0 cores and 0 memory on 2 nodes -> totals 4 cores, 204800 KB
    #        [PA]; per unit 4 // 2 = 2 cores, 102400 KB
    # job 2: no entry at all -> 1 unit of 4 cores, 200 MiB; no placement
    t = read_eurora(write(tmp_path, [job(1, nodes="3;0;0;0;0#4;0;0;0;0#"),
                                     job(2, arrival=1, start=1, end=2, nodes="")]))
    assert t["units"].tolist() == [2, 1]
    assert t.resources["core"].tolist() == [2, 4]
    assert t.resources["mem"].tolist() == [DEFAULT_MEM_KB // 2, DEFAULT_MEM_KB]
    assert t["alloc_procs"].tolist() == [4, 4]
    assert t["nodes_used"].tolist() == [2, -1] and t["alloc_nodes"].tolist() == ["3:0,4:0", ""]


def test_duplicate_job_ids_keep_the_first(tmp_path: Path) -> None:
    # ids 1, 2, 1 (same line), 2 (another run time): the first of each kept, 2 skipped,
    # 1 of the 2 differs from its kept line
    lines = [job(1, end=10), job(2, arrival=5, start=5, end=20), job(1, end=10),
             job(2, arrival=5, start=5, end=999)]
    t = read_eurora(write(tmp_path, lines))
    assert t["job_id"].tolist() == [1, 2]
    assert t["run"].tolist() == [10, 15]
    assert t["line"].tolist() == [1, 2]
    assert t.info.skipped == {SKIP_DUPLICATE: 2}
    assert "2 later lines of an already seen job id skipped (1 of them differ" in \
        t.info.header["Note"]
    assert t.info.lines_read == 4


def test_queue_and_user_codes_in_submit_order(tmp_path: Path) -> None:
    # file order: parallel@20, R@10, debug@10, R@0 -> submit order (stable: the two
    # arrivals at 10 keep file order) R@0, R@10, debug@10, parallel@20
    lines = [job(1, arrival=20, start=20, end=30, queue="parallel"),
             job(2, arrival=10, start=10, end=30, queue="R"),
             job(3, arrival=10, start=10, end=30, queue="debug"),
             job(4, arrival=0, start=0, end=30, queue="R")]
    t = read_eurora(write(tmp_path, lines))
    assert t["job_id"].tolist() == [4, 2, 3, 1]
    assert t.info.codes["queue"] == ["R", "debug", "parallel"]
    assert t["queue"].tolist() == [0, 0, 1, 2]
    # the hidden user name is one user for every job
    assert t.info.codes["user"] == ["yyy"] and t["user"].tolist() == [0, 0, 0, 0]


def test_status_and_missing_application_type(tmp_path: Path) -> None:
    # 9 fields in the last part: application type 0 [PA]; statuses mapped to SWF
    lines = [job(1, app=None), job(2, status="FAILED", app="1"),
             job(3, status="CANCELLED"), job(4, status="WEIRD")]
    t = read_eurora(write(tmp_path, lines))
    assert t["app"].tolist() == [0, 1, 0, 0]
    assert t["status"].tolist() == [1, 0, 5, -1]


def test_blank_lines_are_ignored_but_counted_in_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "blank.log_crypt"
    path.write_text("\n" + job(1) + "\n\n" + job(2, arrival=1, start=1, end=2) + "\n")
    t = read_eurora(path)
    assert t["line"].tolist() == [2, 4] and t.info.lines_read == 2


def test_gzip_file(tmp_path: Path) -> None:
    path = tmp_path / "inst.log_crypt.gz"
    path.write_bytes(gzip.compress((job(1) + "\n").encode()))
    assert read_eurora(path)["job_id"].tolist() == [1]


ENTRY = st.tuples(st.integers(0, 70), st.integers(0, 16), st.integers(0, 2),
                  st.integers(0, 2), st.integers(0, 33554432))


@settings(max_examples=60, deadline=None)
@given(entries=st.lists(ENTRY, max_size=12), run=st.integers(0, 20000),
       wall=st.integers(0, 300))
def test_property_units_requests_and_times(entries: list[tuple[int, ...]], run: int,
                                           wall: int) -> None:
    # any used-node list and run/wall-time: the PA rules hold row by row
    nodes = "".join(";".join(map(str, e)) + "#" for e in entries)
    t = read_eurora_text([job(1, end=run, nodes=nodes, wall=f"{wall // 60:02d}:{wall % 60:02d}")])
    units = max(len(entries), 1)
    cores = sum(e[1] for e in entries) or 4
    mem = sum(e[4] for e in entries) or DEFAULT_MEM_KB
    assert t["units"][0] == units and t["alloc_procs"][0] == cores
    assert t.resources["core"][0] == cores // units
    assert t.resources["gpu"][0] == sum(e[2] for e in entries) // units
    assert t.resources["mic"][0] == sum(e[3] for e in entries) // units
    assert t.resources["mem"][0] == mem // units
    placed = {}
    for e in entries:
        placed[e[0]] = placed.get(e[0], 0) + e[1]
    assert t["alloc_nodes"][0] == ",".join(f"{k}:{v}" for k, v in placed.items())
    assert t["nodes_used"][0] == (len(placed) or -1)
    requested = wall * 60 if wall else (run // 60 + 1) * 60
    assert t["requested_time"][0] == requested
    assert t["run"][0] == min(max(run, 1), requested)
    assert t.info.header["ClippedRuns"] == str(int(max(run, 1) > requested))


# --- malformed lines --------------------------------------------------------------------

GOOD = job(1)
BAD_LINES = [
    (GOOD.replace("__", "_", 1), None, "expected 3 parts"),
    (GOOD.replace("xxx;", "", 1), None, "first part has 4"),
    (GOOD.replace(";COMPLETED;0", ""), None, "last part has 8"),
    (GOOD.replace("1;xxx", "j1;xxx", 1), "job_id", "not a non-negative integer"),
    (GOOD.replace(f"debug;{DAY}", "debug;2014-04-31"), "arrival", "not a date"),
    (GOOD.replace(f"__{DAY} 10:00:00;", "__2014/04/01 10:00:00;"), "start", "not a date"),
    (job(1, start=5, end=4), "end", "before the start"),
    (job(1, arrival=5, start=4, end=9), "start", "before the arrival"),
    (job(1, nodes="14;8;0;0#"), "used nodes", "not node;cores"),
    (job(1, nodes="14;8;0;0;1#;#"), "used nodes", "not node;cores"),
    (job(1, nodes="14;8;-1;0;1#"), "used nodes", "non-negative integer"),
    (job(1, wall="1h"), "wall-time", "HH:MM"),
    (job(1, wall="01:00:00"), "wall-time", "HH:MM"),
    (job(1, app="cpu"), "application type", "non-negative integer"),
    # huge or far values: one error each (the engine's time limit from sim.limits)
    (job(1, wall="99999999999999:00"), "wall-time", "beyond the engine's time limit"),
    (job(1, wall="9" * 5000 + ":00"), "wall-time", "beyond the engine's time limit"),
    (job(1, nodes="14;" + "9" * 30 + ";0;0;1#"), "used nodes", "at most 18 digits"),
    (GOOD.replace(f"debug;{DAY}", "debug;0001-01-01"), "arrival", "must be >= 0 s"),
]


@pytest.mark.parametrize(("line", "field", "needle"), BAD_LINES,
                         ids=[f"{i}-{b[1]}" for i, b in enumerate(BAD_LINES)])
def test_malformed_line_is_a_located_error(tmp_path: Path, line: str, field: str | None,
                                           needle: str) -> None:
    path = write(tmp_path, [job(7), line])
    with pytest.raises(InputError) as err:
        read_eurora(path)
    assert err.value.file == str(path) and err.value.line == 2
    assert err.value.field == field
    assert needle in err.value.message
    assert str(err.value).startswith(f"{path}:2: ")


def test_lenient_skips_and_counts_malformed_lines(tmp_path: Path) -> None:
    lines = [job(1000 + i, arrival=i, start=i, end=i + 9) if i % 2 == 0 else bad
             for i, (bad, _, _) in enumerate(BAD_LINES)]
    t = read_eurora(write(tmp_path, lines), lenient=True)
    assert len(t) == (len(BAD_LINES) + 1) // 2
    assert t.info.malformed_skipped == len(BAD_LINES) // 2
    assert t.info.lines_read == len(BAD_LINES)


def test_no_jobs_and_bad_timezone(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no jobs"):
        read_eurora(write(tmp_path, []))
    with pytest.raises(InputError) as err:
        read_eurora(write(tmp_path, [job(1)]), timezone="Mars/Olympus")
    assert err.value.field == "--timezone"
    with pytest.raises(InputError, match="no such file"):
        read_eurora(tmp_path / "absent.log_crypt")


# --- detection, load_trace, archives -------------------------------------------------


def test_content_detection_and_load_trace(tmp_path: Path) -> None:
    path = write(tmp_path, [job(1), job(2, arrival=3, start=4, end=9)], name="jobs.txt")
    assert looks_like_eurora([job(1)]) and not looks_like_eurora(["1 0 5 10 1 -1"])
    assert detect_format(path) == "eurora"
    t = load_trace(path)  # no format given
    assert t.info.format == "eurora" and t["wait"].tolist() == [0, 1]
    # the timezone option passes through; an option of another format is refused
    u = load_trace(path, format="eurora", reader_options={"timezone": "UTC"})
    assert u.info.unix_start_time == T0_ROME + 7200
    with pytest.raises(InputError) as err:
        load_trace(path, reader_options={"submit_from": "eligible"})
    assert err.value.field == "--submit-from"
    # an empty .log_crypt goes to this reader by its name
    empty = write(tmp_path, [], name="empty.log_crypt")
    assert detect_format(empty) == "eurora"


def make_archive(tmp_path: Path, members: dict[str, str]) -> Path:
    """A tar.gz holding ``members`` (name -> text)."""
    path = tmp_path / "instances.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_archive_members(tmp_path: Path) -> None:
    a = f"{HIST}/50/hist_50_a.log_crypt"
    b = f"{HIST}/100/hist_100_b.log_crypt"
    archive = make_archive(tmp_path, {
        "test_data/README": "the format\n",
        a: job(1) + "\n",
        b: job(2) + "\n" + job(3, app="x") + "\n",
    })
    # full name, an ending of whole path components, or the file name alone
    for member in (a, "job_instances/historical_traces/50/hist_50_a.log_crypt",
                   "50/hist_50_a.log_crypt", "hist_50_a.log_crypt", "./" + a):
        spec = f"{archive}#{member}"
        assert split_archive_path(spec) == (archive, member)
        assert detect_format(spec) == "eurora"
        t = load_trace(spec)
        assert t["job_id"].tolist() == [1]
        assert t.info.source == f"{archive}#{a}"
    # a bad line names ARCHIVE#MEMBER and its line
    with pytest.raises(InputError) as err:
        load_trace(f"{archive}#hist_100_b.log_crypt")
    assert err.value.file == f"{archive}#{b}" and err.value.line == 2
    assert err.value.field == "application type"
    # no such member: the syntax and candidates are listed
    with pytest.raises(InputError, match=r"no member 'hist_9\.log_crypt'.*ARCHIVE#MEMBER"):
        load_trace(f"{archive}#hist_9.log_crypt")
    # every instance at once
    with pytest.raises(InputError, match="application type"):
        read_eurora_archive(archive)
    assert list(read_eurora_archive(archive, lenient=True)) == [a, b]


def test_archive_member_endings_match_whole_components(tmp_path: Path) -> None:
    archive = make_archive(tmp_path, {f"{HIST}/50/x_a.log_crypt": job(1) + "\n",
                                      f"{HIST}/60/x_a.log_crypt": job(2) + "\n"})
    with pytest.raises(InputError, match="ambiguous: 2 files"):
        load_trace(f"{archive}#x_a.log_crypt")
    assert load_trace(f"{archive}#60/x_a.log_crypt")["job_id"].tolist() == [2]
    # "a.log_crypt" is not a whole component of "x_a.log_crypt"
    with pytest.raises(InputError, match="no member"):
        load_trace(f"{archive}#a.log_crypt")


def test_archive_without_member_lists_members_and_syntax(tmp_path: Path) -> None:
    archive = make_archive(tmp_path, {f"{HIST}/50/h{i}.log_crypt": job(i) + "\n"
                                      for i in range(6)})
    for call in (lambda: load_trace(archive), lambda: load_trace(archive, format="eurora")):
        with pytest.raises(InputError) as err:
            call()
        message = str(err.value)
        assert message.startswith(f"{archive}: is a tar archive")
        assert f"{archive}#{HIST}/50/h0.log_crypt" in message
        assert "6 candidates" in message and "h3.log_crypt, ..." in message


# --- the table simulates ----------------------------------------------------------------


def test_simulation_uses_per_unit_requests(tmp_path: Path) -> None:
    # one Eurora-like node: 16 cores, 2 GPUs, 32 GiB. EASY, estimates = wall-times.
    # A at 0: 1 unit of 8 cores + 2 GPUs, run 100 (wall 00:02);
    # B at 10: 1 unit of 8 cores + 1 GPU, run 50: the cores fit but no GPU is free
    #   -> waits for A, starts at 100, ends 150;
    # C at 20: 2 units of 4 cores each (entries on nodes 3 and 4), no GPU, run 30: 8
    #   free cores at 20 -> backfilled at 20 (ends 50 <= A's end), ends 50.
    lines = [job(1, arrival=0, start=0, end=100, wall="00:02", nodes="1;8;2;0;1048576#"),
             job(2, arrival=10, start=10, end=60, wall="00:02", nodes="1;8;1;0;1048576#"),
             job(3, arrival=20, start=20, end=50, wall="00:01",
                 nodes="3;4;0;0;1048576#4;4;0;0;1048576#")]
    t = load_trace(write(tmp_path, lines))
    node = NodeType("gpu", 1, {"core": 16, "gpu": 2, "mic": 0, "mem": 33554432})
    result = Simulation(Platform((node,)), t, EASY(), WalltimePredictor()).run()
    np.testing.assert_array_equal(result.start, [0, 100, 20])
    np.testing.assert_array_equal(result.end, [100, 150, 50])


# --- the real archive ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def archive(traces_dir: Path) -> Path:
    path = traces_dir / ARCHIVE_NAME
    if not path.is_file():
        pytest.skip(f"{ARCHIVE_NAME} not found in {traces_dir}")
    return path


def test_every_historical_instance_reads(archive: Path) -> None:
    tables = read_eurora_archive(archive)
    by_size: dict[int, list] = defaultdict(list)
    for name, t in tables.items():
        assert name.startswith(HIST + "/")
        by_size[int(name.split("/")[-2])].append(t)
    assert sorted(by_size) == [50, 100, 200, 400, 600, 800, 1000]
    assert len(tables) == 206
    queues: set[str] = set()
    # an instance of size N holds N distinct jobs; three hold a few more
    assert {size: max(len(t) for t in group) for size, group in by_size.items()} == {
        50: 55, 100: 100, 200: 200, 400: 404, 600: 600, 800: 800, 1000: 1011}
    for size, group in by_size.items():
        jobs = [len(t) for t in group]
        assert statistics.median(jobs) == size and min(jobs) == size
        for t in group:
            queues.update(t.info.codes["queue"])
            assert t.info.codes["user"] == ["yyy"]
            assert np.all(t["run"] >= 1) and np.all(t["run"] <= t["requested_time"])
            assert np.all(t["wait"] >= 0) and t["submit"][0] == 0
            assert int(t["units"].max()) <= 32 and int(t.resources["core"].max()) <= 16
            assert int(t.resources["mem"].max()) <= 33554432
            assert int(t.resources["gpu"].max()) <= 2 and int(t.resources["mic"].max()) <= 2
            assert len(clean_table(t)) == len(t)  # the default cleaning drops nothing
    assert queues == {"debug", "parallel", "R", "np_longpar"}
    # some instances list jobs twice: 3976 + 396 + 140 later lines dropped in all
    dup = {size: sum(t.info.skipped.get(SKIP_DUPLICATE, 0) for t in group)
           for size, group in by_size.items()}
    assert dup == {50: 140, 100: 0, 200: 0, 400: 396, 600: 0, 800: 0, 1000: 3976}


def run_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dispatchlab.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


MEMBER_1000 = "1000/hist_1000_20140331_093036.log_crypt"


def test_cli_trace_info_of_an_archive_member(archive: Path) -> None:
    proc = run_cli("trace", "info", f"{archive}#{MEMBER_1000}")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"format\s*│\s*eurora", proc.stdout)
    assert re.search(r"jobs\s*│\s*1,000\b", proc.stdout)


def test_cli_archive_without_member(archive: Path) -> None:
    proc = run_cli("trace", "info", archive)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and len(proc.stderr.splitlines()) == 1
    assert "ARCHIVE#MEMBER" in proc.stderr and "206 candidates" in proc.stderr


def test_cli_simulate_eurora_instance(archive: Path, tmp_path: Path) -> None:
    # the CLI on the extracted member (the reader itself never extracts)
    with tarfile.open(archive) as tar:
        data = tar.extractfile(f"{HIST}/{MEMBER_1000}").read()  # type: ignore[union-attr]
    path = tmp_path / MEMBER_1000.split("/")[1]
    path.write_bytes(data)
    info = run_cli("trace", "info", path)
    assert info.returncode == 0, info.stderr
    assert re.search(r"jobs\s*│\s*1,000\b", info.stdout)
    proc = run_cli("simulate", path, "--platform", "eurora", "--dispatcher", "easy",
                   "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"jobs\s*│\s*jobs\s*│\s*1,000\b", proc.stdout), proc.stdout
    assert (tmp_path / "out" / "jobs.parquet").is_file()


def test_importing_the_reader_leaves_zoneinfo_for_a_read() -> None:
    """run.build imports this module for every `simulate`: zoneinfo (its search path is
    looked up on import) loads only when a zone is checked, i.e. when a trace is read."""
    code = ("import sys\nimport dispatchlab.workload.eurora as e\n"
            "print('zoneinfo' in sys.modules)\n"
            "e._check_zone('Europe/Rome')\nprint('zoneinfo' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["False", "True"]
