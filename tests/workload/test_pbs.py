"""The PBS accounting-log reader (Torque 6.x and PBS Pro / OpenPBS records).

Every log here is written by the test in the record format of the versions named in
:mod:`dispatchlab.workload.pbs` (one ``MM/DD/YYYY HH:MM:SS;T;ID;key=value ...`` line per
record); the expected values are computed by hand in the comments.
"""

from __future__ import annotations

import gzip
import re
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY
from dispatchlab.predict import WalltimePredictor
from dispatchlab.workload.pbs import (
    SKIP_DUPLICATE,
    SKIP_EXTRA,
    SKIP_FOLDED,
    SKIP_NO_END,
    SKIP_NO_SUBMIT,
    SKIP_OTHER,
    SKIP_PARENT,
    SKIP_UNSTARTED,
    _RecordError,
    duration,
    exit_status_to_swf,
    looks_like_pbs,
    parse_exec_host,
    parse_exec_vnode,
    parse_message,
    parse_nodes,
    parse_select,
    read_pbs,
    size_bytes,
)

# --- Torque 6.x: queued, started, ended (01/15/2024 UTC) -------------------------------
# ctime 09:59:40 = 1705312780, etime +10 s, start 10:00:00 = 1705312800,
# end 11:00:05 = 1705316405. Node parts with their own ppn: n01:ppn=4 + n02:ppn=3 = 7.
TORQUE_COMMON = (
    "user=alice group=physics jobname=relax queue=batch ctime=1705312780 "
    "qtime=1705312780 etime=1705312790 start=1705312800 owner=alice@login1 "
    "exec_host=n01/0-3+n02/0,2-3 Resource_List.neednodes=n01:ppn=4+n02:ppn=3 "
    "Resource_List.nodect=2 Resource_List.nodes=n01:ppn=4+n02:ppn=3 "
    "Resource_List.walltime=02:00:00 Resource_List.pmem=512mb"
)
TORQUE_LOG = [
    "01/15/2024 09:59:40;Q;1001.torque01;queue=batch",
    f"01/15/2024 10:00:00;S;1001.torque01;{TORQUE_COMMON}",
    f"01/15/2024 11:00:05;E;1001.torque01;{TORQUE_COMMON} session=5555 "
    "total_execution_slots=7 unique_node_count=2 end=1705316405 Exit_status=0 "
    "resources_used.cput=03:30:00 resources_used.energy_used=0 "
    "resources_used.mem=700000kb resources_used.vmem=900000kb "
    "resources_used.walltime=01:00:00",
]

# --- PBS Pro / OpenPBS: a GPU job with select chunks (01/15/2024 UTC) ------------------
# ctime 10:00:00 = 1705312800, start 10:05:00 = 1705313100, end 12:05:00 = 1705320300.
PRO_COMMON = (
    'user=bob group=ai account="proj x" project=_pbs_project_default jobname=train '
    "queue=workq ctime=1705312800 qtime=1705312800 etime=1705312800 start=1705313100 "
    "exec_host=g01/0*8+g02/0*4 exec_vnode=(g01:ncpus=8:ngpus=2:mem=64gb)+(g02:ncpus=4:mem=32gb) "
    "Resource_List.mem=96gb Resource_List.ncpus=12 Resource_List.ngpus=2 "
    "Resource_List.nodect=2 Resource_List.place=scatter "
    "Resource_List.select=1:ncpus=8:ngpus=2:mem=64gb+1:ncpus=4:mem=32gb "
    "Resource_List.walltime=04:00:00"
)
PRO_LOG = [
    f"01/15/2024 10:00:00;Q;2001.pbs01;{PRO_COMMON.replace(' start=1705313100', '')}",
    f"01/15/2024 10:05:00;S;2001.pbs01;{PRO_COMMON} resource_assigned.mem=100663296kb "
    "resource_assigned.ncpus=12",
    f"01/15/2024 12:05:00;E;2001.pbs01;{PRO_COMMON} session=7777 end=1705320300 "
    "Exit_status=0 resources_used.cpupercent=1150 resources_used.cput=23:00:00 "
    "resources_used.mem=50331648kb resources_used.ncpus=12 resources_used.vmem=60000000kb "
    "resources_used.walltime=02:00:00 run_count=1",
]


def write(tmp_path: Path, lines: list[str], name: str = "20240115") -> Path:
    """A log file (gzip-compressed when ``name`` ends with .gz)."""
    path = tmp_path / name
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def torque_end(
    jid: str,
    ctime: int,
    start: int,
    end: int,
    *,
    stamp: str = "01/15/2024 12:00:00",
    nodes: str = "1:ppn=1",
    exec_host: str = "n01/0",
    walltime: str = "01:00:00",
    exit_status: str = "0",
    extra: str = "",
    user: str = "alice",
    queue: str = "batch",
) -> str:
    """A Torque 6 ``E`` record (the key order of Torque's accounting.cpp)."""
    return (
        f"{stamp};E;{jid};user={user} group=physics jobname=job queue={queue} "
        f"ctime={ctime} qtime={ctime} etime={ctime} start={start} owner={user}@login1 "
        f"exec_host={exec_host} Resource_List.nodect=1 Resource_List.nodes={nodes} "
        f"Resource_List.walltime={walltime} {extra}session=1 end={end} "
        f"Exit_status={exit_status} resources_used.cput=00:00:01 resources_used.mem=1024kb "
        f"resources_used.vmem=2048kb resources_used.walltime=00:00:01"
    )


def only(table, name):
    assert len(table) == 1
    return table[name][0]


# --- sniffing and options -------------------------------------------------------------


def test_looks_like_pbs():
    assert looks_like_pbs(["", TORQUE_LOG[0], TORQUE_LOG[1]])
    assert looks_like_pbs([PRO_LOG[2]])
    assert not looks_like_pbs(["1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1"])
    assert not looks_like_pbs(["JobID|Submit|Start", TORQUE_LOG[0]])
    assert not looks_like_pbs(["", "  "])


@pytest.mark.parametrize(
    ("option", "value", "field"),
    [("submit_from", "queued", "--submit-from"), ("timezone", "Mars/Olympus", "--timezone"),
     ("timezone", "America", "--timezone"), ("timezone", "", "--timezone"),
     ("unstarted", "maybe", "--unstarted")],
)
def test_bad_option_names_the_option(tmp_path, option, value, field):
    path = write(tmp_path, TORQUE_LOG)
    with pytest.raises(InputError) as err:
        read_pbs(path, **{option: value})
    assert err.value.field == field


def test_missing_path_and_empty_folder(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_pbs(tmp_path / "nope")
    (tmp_path / "logs").mkdir()
    with pytest.raises(InputError, match="no log files"):
        read_pbs(tmp_path / "logs")


def test_log_without_end_records_is_an_error(tmp_path):
    path = write(tmp_path, TORQUE_LOG[:2])
    with pytest.raises(InputError, match=r"no jobs.*2 records of other types"):
        read_pbs(path)


# --- a Torque job, field by field -----------------------------------------------------


def test_torque_job_every_field(tmp_path):
    t = read_pbs(write(tmp_path, TORQUE_LOG))
    assert len(t) == 1
    expected = {
        "job_id": 1, "submit": 0, "wait": 20, "run": 3605,  # 1705316405 - 1705312800
        "alloc_procs": 7, "req_procs": 7, "req_time": 7200, "units": 7,
        "req_mem": 524288,  # pmem 512 MB per process = 512 * 1024 KB
        "status": 1, "user": 0, "group": 0, "app": 0, "queue": 0,
        "partition": -1, "prev_job": -1, "think_time": -1, "line": 3,
        "eligible": 10, "req_gpus": 0, "nodes_used": 2,
    }
    for name, value in expected.items():
        assert t[name][0] == value, name
    assert t["avg_cpu"][0] == pytest.approx(12600 / 7)  # cput 3.5 h over 7 cores
    assert t["used_mem"][0] == pytest.approx(100000.0)  # 700000 KB / 7
    assert t["job_ref"][0] == "1001.torque01"
    assert t["alloc_nodes"][0] == "n01:4,n02:3"  # 0-3 -> 4 cores; 0,2-3 -> 3 cores
    assert t["account"][0] == "" and t["qos"][0] == ""
    info = t.info
    assert info.format == "pbs"
    assert info.unix_start_time == 1705312780
    assert info.header["UnixStartTime"] == "1705312780"
    assert info.header["TimeZone"] == "UTC"
    assert "more than 60 s" not in info.header["Note"]  # 3605 vs walltime 3600: 5 s
    assert info.codes == {"user": ["alice"], "group": ["physics"], "queue": ["batch"],
                          "app": ["relax"]}
    assert info.skipped == {SKIP_OTHER: 2}
    assert info.lines_read == 3 and info.malformed_skipped == 0


def test_pbs_pro_job_every_field(tmp_path):
    t = read_pbs(write(tmp_path, PRO_LOG))
    assert only(t, "wait") == 300 and only(t, "run") == 7200
    assert only(t, "alloc_procs") == 12 and only(t, "nodes_used") == 2
    assert only(t, "alloc_nodes") == "g01:8,g02:4"
    assert only(t, "req_procs") == 12  # 1 x 8 + 1 x 4 from the select chunks
    assert only(t, "req_gpus") == 2
    assert only(t, "req_mem") == 96 * 1024 * 1024 // 12  # 96 GB in chunks / 12 = 8 GB
    assert only(t, "req_time") == 14400
    assert only(t, "account") == "proj x"  # quotes removed, blank kept
    assert only(t, "avg_cpu") == pytest.approx(82800 / 12)
    assert only(t, "used_mem") == pytest.approx(50331648 / 12)
    assert only(t, "status") == 1 and only(t, "eligible") == 0
    assert t.info.codes["app"] == ["train"]


# --- value parsers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "nbytes"),
    [("10", 10), ("10b", 10), ("10kb", 10240), ("3mb", 3 * 2**20), ("2gb", 2 * 2**30),
     ("1tb", 2**40), ("4GB", 4 * 2**30), ("5w", 40), ("2kw", 2 * 1024 * 8),
     ("1mw", 2**20 * 8)],
)
def test_size_units(value, nbytes):
    assert size_bytes(value) == nbytes


@pytest.mark.parametrize("value", ["4 GB", "4xb", "1.5gb", "gb", "-1kb", ""])
def test_bad_sizes(value):
    with pytest.raises(_RecordError):
        size_bytes(value)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("90", 90), ("1:30", 90), ("01:00:00", 3600), ("100:00:00", 360000),
     ("1:02:03:04", 93784), ("00:00:10.5", 10)],
)
def test_durations(value, seconds):
    assert duration(value) == seconds


@pytest.mark.parametrize("value", ["1h", "1:2:3:4:5", "01:xx:00", "", "-5"])
def test_bad_durations(value):
    with pytest.raises(_RecordError):
        duration(value)


@pytest.mark.parametrize(
    ("spec", "procs", "gpus"),
    [("2:ppn=8", 16, None), ("n01+n02:ppn=4", 5, None), ("3", 3, None),
     ("2:ppn=8:gpus=2", 16, 4), ("1:ppn=4:bigmem+2:ppn=2:gpus=1", 8, 2),
     ("2:ppn=4#excl", 8, None), ("n01", 1, None)],
)
def test_torque_nodes_specs(spec, procs, gpus):
    parsed = parse_nodes(spec)
    assert (parsed.procs, parsed.gpus) == (procs, gpus)


@pytest.mark.parametrize(
    ("spec", "procs", "gpus", "mem"),
    [("2:ncpus=8:mpiprocs=8+1:ncpus=4:ngpus=1", 20, 1, None),
     ("ncpus=2", 2, None, None), ("3", 3, None, None),  # ncpus 1 per chunk by default
     ("2:ncpus=4:mem=4mw", 8, None, 2 * 4 * 2**20 * 8),
     ("1:ncpus=2:mem=1gb+1:ncpus=2", 4, None, None)],  # not every chunk names mem
)
def test_pbs_pro_select_chunks(spec, procs, gpus, mem):
    parsed = parse_select(spec)
    assert (parsed.procs, parsed.gpus, parsed.mem) == (procs, gpus, mem)


@pytest.mark.parametrize(
    ("value", "hosts"),
    [("n01/0+n01/1+n02/0", {"n01": 2, "n02": 1}),  # Torque list
     ("n01/0-7+n02/0,2-4", {"n01": 8, "n02": 4}),  # Torque 6 ranges
     ("n01/0*8+n02/0*8+n01/1*2", {"n01": 10, "n02": 8})],  # PBS Pro index*ncpus
)
def test_exec_host_forms(value, hosts):
    assert parse_exec_host(value) == hosts
    assert list(parse_exec_host(value)) == list(hosts)  # first-appearance order


def test_exec_vnode_form():
    value = "(n01:ncpus=8:ngpus=1)+(n02:ncpus=8)+(n03[0]:ncpus=2+n03[1]:ncpus=2)+(n04:mem=1gb)"
    assert parse_exec_vnode(value) == {"n01": 8, "n02": 8, "n03": 4, "n04": 0}


@pytest.mark.parametrize("value", ["n01", "n01/", "n01/x", "n01/3-1", "/0"])
def test_bad_exec_host(value):
    with pytest.raises(_RecordError):
        parse_exec_host(value)


def test_parse_message_quotes():
    assert parse_message('account="a b" jobname=x') == {"account": "a b", "jobname": "x"}
    assert parse_message('account="p" project=q') == {"account": "p", "project": "q"}
    assert parse_message("jobname='say \"hi\" now' x=1") == {"jobname": 'say "hi" now',
                                                              "x": "1"}
    assert parse_message("jobname=it's x=2") == {"jobname": "it's", "x": "2"}


# The record parser before it was made linear (quoted values, slow path: a regular
# expression searched from every position of a long token without "="): kept to check
# that the linear one gives the same pairs.
_OLD_PAIR_RE = re.compile(r"""([^\s=]+)=("[^"]*"|'[^']*'|\S*)""")


def _old_parse_message(message: str) -> dict[str, str]:
    pairs = {}
    for token in message.split():
        key, _, value = token.partition("=")
        pairs[key] = value
    if '"' not in message and "'" not in message:
        return pairs
    for mark in ('="', "='"):
        at = message.find(mark)
        while at >= 0:
            key = message[message.rfind(" ", 0, at) + 1 : at]
            value = pairs.get(key, "")
            if len(value) < 2 or value[-1] != value[0] or value[0] != mark[1]:
                pairs = {}
                for key, value in _OLD_PAIR_RE.findall(message):
                    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                        value = value[1:-1]
                    pairs[key] = value
                return pairs
            pairs[key] = value[1:-1]
            at = message.find(mark, at + 2)
    return pairs


def _messages_of_this_file() -> list[str]:
    """The message part of every record written by the tests of this file."""
    lines = [*TORQUE_LOG, *PRO_LOG, GOOD, *(bad for bad, _, _ in BAD_RECORDS)]
    messages = [line.split(";", 3)[3] for line in lines if line.count(";") >= 3]
    quoted = [PRO_COMMON.replace('account="proj x"', f"account={q}")
              for q in ('"a b"', "'say \"hi\"'", '"open', "'", '"a b"x=1', '"a"b c"')]
    return messages + quoted + ['account="a b" ' + "x" * 50 + " y=1 =z a==b =c=d"]


def test_linear_parser_gives_the_pairs_of_the_old_one():
    messages = _messages_of_this_file()
    assert len(messages) > 20
    for message in messages:
        assert parse_message(message) == _old_parse_message(message), message


@given(st.text(alphabet=" \t=\"'ab.", max_size=40))
@settings(max_examples=2000)
def test_linear_parser_agrees_with_the_old_one_on_any_text(message):
    assert parse_message(message) == _old_parse_message(message)


def test_a_long_token_after_a_quoted_value_parses_in_linear_time(tmp_path):
    # A quoted value with a blank sends the parser to its slow path; a 200,000-character
    # token without "=" then took minutes (7.8 s at 40,000 characters: quadratic).
    long_token = "x" * 200_000
    message = f'user=a jobname="a b" {long_token} Exit_status=0'
    began = time.perf_counter()
    pairs = parse_message(message)
    elapsed = time.perf_counter() - began
    assert pairs == {"user": "a", "jobname": "a b", "Exit_status": "0"}
    assert elapsed < 1.0, f"{elapsed:.2f} s for a 200,000-character record"
    record = torque_end("1.s", B, B + 1, B + 2, extra=f'account="a b" {long_token} ')
    began = time.perf_counter()
    table = read_pbs(write(tmp_path, [record]))
    elapsed = time.perf_counter() - began
    assert only(table, "run") == 1 and table.info.codes["user"] == ["alice"]
    assert elapsed < 1.0, f"{elapsed:.2f} s to read one 200,000-character record"


@pytest.mark.parametrize(
    ("value", "status"),
    [("0", 1), ("1", 0), ("127", 0), ("137", 0), ("271", 5), ("265", 0), ("-29", 0),
     ("-3", 0), (None, -1), ("", -1)],
)
def test_exit_status_table(value, status):
    assert exit_status_to_swf(value) == status


# --- requests and placements in whole records ----------------------------------------


def test_exec_vnode_used_when_exec_host_is_absent(tmp_path):
    rec = PRO_LOG[2].replace("exec_host=g01/0*8+g02/0*4 ", "")
    t = read_pbs(write(tmp_path, [rec]))
    assert only(t, "alloc_procs") == 12 and only(t, "alloc_nodes") == "g01:8,g02:4"


def test_request_priority_and_memory_units(tmp_path):
    base = 1705312800
    lines = [
        # no select/nodes: ncpus=4, mem 1000w = 8000 bytes / 4 = 2000 bytes -> 2 KB (ceil)
        torque_end("1.s", base, base, base + 10, nodes="x", extra="").replace(
            "Resource_List.nodes=x ", "Resource_List.ncpus=4 Resource_List.mem=1000w "),
        # only nodect=3 (1 processor per node), 1536b total -> 512 b per proc -> 1 KB
        torque_end("2.s", base + 1, base + 1, base + 11).replace(
            "Resource_List.nodes=1:ppn=1 ", "Resource_List.mem=1536b ").replace(
            "Resource_List.nodect=1", "Resource_List.nodect=3"),
        # Torque procs=6 with 12tb total -> 2 TB per proc = 2 * 2**30 KB
        torque_end("3.s", base + 2, base + 2, base + 12).replace(
            "Resource_List.nodes=1:ppn=1 ", "Resource_List.procs=6 Resource_List.mem=12tb "),
        # nodes with gpus, and no memory at all
        torque_end("4.s", base + 3, base + 3, base + 13, nodes="2:ppn=8:gpus=2"),
        # nothing about processors or GPUs: -1 (units from alloc_procs)
        torque_end("5.s", base + 4, base + 4, base + 14).replace(
            "Resource_List.nodect=1 Resource_List.nodes=1:ppn=1 ", ""),
    ]
    t = read_pbs(write(tmp_path, lines))
    assert t["req_procs"].tolist() == [4, 3, 6, 16, -1]
    assert t["req_mem"].tolist() == [2, 1, 2 * 2**30, -1, -1]
    assert t["req_gpus"].tolist() == [-1, -1, -1, 4, -1]
    assert t["units"].tolist() == [4, 3, 6, 16, 1]


def test_walltime_mismatch_is_noted(tmp_path):
    # end - start = 600 s but resources_used.walltime = 1 s: end - start wins
    line = torque_end("1.s", 1705312800, 1705312800, 1705313400)
    t = read_pbs(write(tmp_path, [line]))
    assert only(t, "run") == 600
    assert "1 jobs: end - start differs from resources_used.walltime" in t.info.header["Note"]


# --- statuses -------------------------------------------------------------------------


def test_statuses_from_exit_codes(tmp_path):
    b = 1705312800
    codes = ["0", "2", "271", "-29", "137"]
    lines = [torque_end(f"{i}.s", b + i, b + i, b + 100, exit_status=c)
             for i, c in enumerate(codes)]
    lines.append(torque_end("9.s", b + 9, b + 9, b + 100).replace(" Exit_status=0", ""))
    t = read_pbs(write(tmp_path, lines))
    assert t["status"].tolist() == [1, 0, 5, 0, 0, -1]  # 271 = 256 + SIGTERM: deleted


def test_job_deleted_while_running_is_cancelled(tmp_path):
    b = 1705312800
    lines = [
        f"01/15/2024 10:00:00;S;7.s;user=alice queue=batch ctime={b} start={b}",
        "01/15/2024 10:30:00;D;7.s;requestor=alice@login1",
        torque_end("7.s", b, b, b + 1805, exit_status="271"),
        "01/15/2024 10:40:00;A;8.s;",
        torque_end("8.s", b + 1, b + 2, b + 100, exit_status="-3"),  # aborted: exit status
    ]
    t = read_pbs(write(tmp_path, lines))
    assert t["job_ref"].tolist() == ["7.s", "8.s"]
    assert t["status"].tolist() == [5, 0]
    assert t["run"].tolist() == [1805, 98]
    assert t.info.skipped == {SKIP_OTHER: 1, SKIP_FOLDED: 2}


# --- arrays, duplicates ---------------------------------------------------------------


def test_array_subjobs_and_parent_records(tmp_path):
    b = 1705312800
    lines = [
        "01/15/2024 10:00:00;Q;55[].pbs01;queue=workq",
        torque_end("55[1].pbs01", b, b + 10, b + 20),
        torque_end("55[2].pbs01", b, b + 10, b + 30),
        torque_end("55[].pbs01", b, b + 10, b + 30).replace("exec_host=n01/0 ", ""),
    ]
    t = read_pbs(write(tmp_path, lines))
    assert t["job_ref"].tolist() == ["55[1].pbs01", "55[2].pbs01"]
    assert t["job_id"].tolist() == [1, 2]
    assert t.info.skipped == {SKIP_PARENT: 2}


def test_duplicate_end_records(tmp_path):
    b = 1705312800
    first = torque_end("9.s", b, b + 5, b + 50)
    reused_id = torque_end("9.s", b + 999, b + 1000, b + 1100)  # same id, new ctime
    t = read_pbs(write(tmp_path, [first, first, reused_id]))
    assert t["run"].tolist() == [45, 100]
    assert t.info.skipped == {SKIP_DUPLICATE: 1}


# --- jobs that never started (D/A records) --------------------------------------------

QUEUED_THEN_DELETED = [
    # PBS Pro writes the full request in the Q record; ctime 10:10:00 = 1705313400
    "01/15/2024 10:10:00;Q;2002.pbs01;user=bob group=ai jobname=wait queue=workq "
    "ctime=1705313400 qtime=1705313400 etime=1705313400 Resource_List.ncpus=4 "
    "Resource_List.nodect=1 Resource_List.place=pack Resource_List.select=1:ncpus=4 "
    "Resource_List.walltime=00:30:00",
    "01/15/2024 10:20:00;D;2002.pbs01;requestor=bob@login1",
    "01/15/2024 10:21:00;A;2003.pbs01;",  # aborted, queued before the log starts
    "01/15/2024 10:22:00;S;2004.pbs01;user=bob queue=workq ctime=1705313000 start=1705314120",
    "01/15/2024 10:23:00;D;2004.pbs01;requestor=root@server",  # ran, end not in the log
]


def test_unstarted_jobs_dropped_and_counted(tmp_path):
    t = read_pbs(write(tmp_path, PRO_LOG + QUEUED_THEN_DELETED))
    assert t["job_ref"].tolist() == ["2001.pbs01"]
    assert t.info.skipped == {SKIP_OTHER: 4, SKIP_UNSTARTED: 2, SKIP_NO_END: 1}


def test_deleted_then_aborted_job_is_counted_once(tmp_path):
    # 2002 never starts: a D record, then the server's A record, then an E record
    # without start; 2005 never starts and has no E record. Each is one job deleted
    # before start, none a "job that ran". 7.s ran: its D and A records are folded.
    b = 1705312800
    lines = [
        *PRO_LOG, *QUEUED_THEN_DELETED[:2],
        "01/15/2024 10:20:01;A;2002.pbs01;",
        "01/15/2024 10:20:02;E;2002.pbs01;user=bob queue=workq ctime=1705313400 "
        "Exit_status=-2",
        "01/15/2024 10:24:00;D;2005.pbs01;requestor=bob@login1",
        "01/15/2024 10:24:01;A;2005.pbs01;",
        "01/15/2024 10:30:00;D;7.s;requestor=alice@login1",
        "01/15/2024 10:30:01;A;7.s;",
        torque_end("7.s", b, b, b + 1805, exit_status="-11"),
    ]
    t = read_pbs(write(tmp_path, lines))
    assert t["job_ref"].tolist() == ["2001.pbs01", "7.s"]
    assert t["status"].tolist() == [1, 5]  # 7.s: deleted while running
    # 2002's D and A records are folded into its E record, 2005's A into its D record
    assert t.info.skipped == {SKIP_OTHER: 3, SKIP_UNSTARTED: 2, SKIP_FOLDED: 2,
                              SKIP_EXTRA: 3}
    assert t.info.lines_read == len(t) + sum(t.info.skipped.values())  # no record lost
    # an A record, then a D record: deleted by request all the same
    swapped = [lines[-3].replace(";D;", ";A;"), lines[-2].replace(";A;", ";D;"), lines[-1]]
    assert read_pbs(write(tmp_path, swapped, "swapped"))["status"].tolist() == [5]


def test_unstarted_jobs_kept(tmp_path):
    t = read_pbs(write(tmp_path, PRO_LOG + QUEUED_THEN_DELETED), unstarted="keep")
    assert t["job_ref"].tolist() == ["2001.pbs01", "2002.pbs01"]
    kept = 1
    assert t["submit"][kept] == 600  # 1705313400 - 1705312800
    assert t["run"][kept] == -1 and t["wait"][kept] == -1 and t["status"][kept] == 5
    assert t["req_procs"][kept] == 4 and t["req_time"][kept] == 1800
    assert t["alloc_procs"][kept] == -1 and t["nodes_used"][kept] == -1
    assert t["line"][kept] == 5  # its D record
    assert t["app"][kept] == 1 and t.info.codes["app"] == ["train", "wait"]
    assert t.info.skipped == {SKIP_OTHER: 4, SKIP_NO_SUBMIT: 1, SKIP_NO_END: 1}
    assert "1 jobs deleted before they started kept" in t.info.header["Note"]


def test_bad_queue_record_of_a_kept_job_names_that_record(tmp_path):
    queued = QUEUED_THEN_DELETED[0].replace("walltime=00:30:00", "walltime=half-hour")
    path = write(tmp_path, [*PRO_LOG, queued, *QUEUED_THEN_DELETED[1:]])
    assert len(read_pbs(path)) == 1  # dropped: the Q record is never read
    with pytest.raises(InputError) as err:
        read_pbs(path, unstarted="keep")
    assert (err.value.line, err.value.field) == (4, "Resource_List.walltime")
    lenient = read_pbs(path, unstarted="keep", lenient=True)
    assert len(lenient) == 1 and lenient.info.malformed_skipped == 1


def test_unstarted_end_record_after_delete(tmp_path):
    # an E record with start=0 after a D record: deleted while queued
    b = 1705312800
    lines = ["01/15/2024 10:00:00;D;6.s;requestor=alice@login1",
             torque_end("6.s", b, 0, b + 60).replace("exec_host=n01/0 ", ""),
             torque_end("7.s", b + 1, b + 1, b + 61)]
    dropped = read_pbs(write(tmp_path, lines))
    assert dropped["job_ref"].tolist() == ["7.s"]
    # the D record is folded into the E record that stands for the job
    assert dropped.info.skipped == {SKIP_UNSTARTED: 1, SKIP_EXTRA: 1}
    assert dropped.info.lines_read == len(dropped) + sum(dropped.info.skipped.values())
    kept = read_pbs(write(tmp_path, lines), unstarted="keep")
    assert kept["job_ref"].tolist() == ["6.s", "7.s"]
    assert kept["status"].tolist() == [5, 1] and kept["run"].tolist() == [-1, 60]
    assert kept["line"].tolist() == [2, 3]


def test_time_zone_of_queue_stamps(tmp_path):
    # Torque Q records carry no ctime: the kept job is submitted at its Q time stamp,
    # 03/10/2024 12:00:00 local. New York is on EDT (UTC-4) since 02:00 that day:
    # 16:00 UTC = 1710086400; read as UTC it is 1710072000.
    lines = ["03/10/2024 12:00:00;Q;3001.t;queue=batch",
             "03/10/2024 12:30:00;D;3001.t;requestor=carol@login1",
             torque_end("3002.t", 1710090000, 1710090060, 1710093660, queue="short")]
    path = write(tmp_path, lines)
    ny = read_pbs(path, unstarted="keep", timezone="America/New_York")
    assert ny.info.unix_start_time == 1710086400
    assert ny.info.header["TimeZone"] == "America/New_York"
    assert ny["submit"].tolist() == [0, 3600]
    assert ny["queue"].tolist() == [0, 1] and ny.info.codes["queue"] == ["batch", "short"]
    assert ny["req_procs"][0] == -1  # Torque's Q record has no request
    utc = read_pbs(path, unstarted="keep")
    assert utc.info.unix_start_time == 1710072000
    assert utc["submit"].tolist() == [0, 18000]
    # the zone changes nothing when all times come from ctime
    assert read_pbs(path, timezone="Asia/Tokyo").info.unix_start_time == 1710090000


# --- submit from ctime or etime -------------------------------------------------------


def test_submit_from_eligible(tmp_path):
    b = 1705312800
    held = torque_end("1.s", b, b + 500, b + 600).replace(
        f"etime={b}", f"etime={b + 300}")
    other = torque_end("2.s", b + 100, b + 150, b + 160)
    path = write(tmp_path, [held, other])
    by_ctime = read_pbs(path)
    assert by_ctime["job_ref"].tolist() == ["1.s", "2.s"]
    assert by_ctime["submit"].tolist() == [0, 100]
    assert by_ctime["wait"].tolist() == [500, 50]
    assert by_ctime["eligible"].tolist() == [300, 100]
    by_etime = read_pbs(path, submit_from="eligible")
    assert by_etime["job_ref"].tolist() == ["2.s", "1.s"]  # held job now submits later
    assert by_etime["submit"].tolist() == [0, 200]
    assert by_etime["wait"].tolist() == [50, 200]
    assert by_etime.info.unix_start_time == b + 100
    assert "submit = etime" in by_etime.info.header["Note"]


def test_ties_keep_record_order_and_codes_follow_the_table(tmp_path):
    b = 1705312800
    lines = [torque_end("3.s", b + 50, b + 60, b + 70, user="zoe"),
             torque_end("1.s", b, b + 10, b + 20, user="yan"),
             torque_end("2.s", b, b + 10, b + 30, user="zoe")]
    t = read_pbs(write(tmp_path, lines))
    assert t["job_ref"].tolist() == ["1.s", "2.s", "3.s"]
    assert t["job_id"].tolist() == [1, 2, 3]
    assert t["user"].tolist() == [0, 1, 1] and t.info.codes["user"] == ["yan", "zoe"]
    assert t["line"].tolist() == [2, 3, 1]


# --- files and folders ----------------------------------------------------------------


def test_folder_of_daily_files(tmp_path):
    logs = tmp_path / "accounting"
    logs.mkdir()
    b = 1705312800
    write(logs, ["01/15/2024 23:59:00;Q;40.s;queue=batch",
                 "01/15/2024 23:59:30;S;40.s;user=alice queue=batch",
                 torque_end("39.s", b, b + 5, b + 10)], name="20240115")
    write(logs, ["01/16/2024 00:10:00;D;40.s;requestor=alice@login1",
                 torque_end("40.s", b + 86000, b + 86340, b + 87000, exit_status="271")],
          name="20240116.gz")
    (logs / ".hidden").write_text("not a log\n")
    t = read_pbs(logs)
    assert t["job_ref"].tolist() == ["39.s", "40.s"]
    assert t["line"].tolist() == [3, 2]  # lines in their own files
    assert t["status"].tolist() == [1, 5]  # deleted while running across midnight
    assert t["submit"].tolist() == [0, 86000]
    assert t.info.lines_read == 5
    assert t.info.source == str(logs)


def test_error_in_a_folder_names_the_file(tmp_path):
    logs = tmp_path / "accounting"
    logs.mkdir()
    b = 1705312800
    write(logs, [torque_end("1.s", b, b, b + 1)], name="20240115")
    bad = torque_end("2.s", b, b, b + 1).replace(f" end={b + 1}", "")
    write(logs, ["01/16/2024 00:00:01;Q;3.s;queue=batch", bad], name="20240116")
    with pytest.raises(InputError) as err:
        read_pbs(logs)
    assert err.value.file == str(logs / "20240116")
    assert err.value.line == 2 and err.value.field == "end"
    assert str(err.value).startswith(f"{logs / '20240116'}:2: field end: ")


def test_gzip_file(tmp_path):
    t = read_pbs(write(tmp_path, PRO_LOG, name="20240115.gz"))
    assert only(t, "run") == 7200


# --- bad input ------------------------------------------------------------------------

B = 1705312800
GOOD = torque_end("1.s", B, B + 1, B + 2)
BAD_RECORDS = [
    # (line, field, message part)
    (torque_end("2.s", B, B, B + 5).replace(f" end={B + 5}", ""), "end", "no end"),
    (torque_end("3.s", B, B, B + 5).replace(f" ctime={B}", ""), "ctime", "no ctime"),
    (torque_end("4.s", B, B, B + 5).replace(f" start={B}", ""), "start", "no start"),
    ("13/45/2024 10:00:00;E;5.s;ctime=1 start=1 end=2", "timestamp", "not a date"),
    ("01/15/24 10:00:00;E;5.s;ctime=1 start=1 end=2", "timestamp", "not a date"),
    (torque_end("6.s", B, B, B + 5, walltime="1h"), "Resource_List.walltime",
     "not a duration"),
    (torque_end("7.s", B, B, B + 5, exec_host="n01"), "exec_host", "not host/cores"),
    (torque_end("8.s", B, B, B + 5, nodes="2:ppn=many"), "Resource_List.nodes",
     "not a non-negative integer"),
    (torque_end("9.s", B, B, B + 5).replace("resources_used.mem=1024kb",
                                            "resources_used.mem=1.5gb"),
     "resources_used.mem", "not a size"),
    (torque_end("10.s", B, B, B + 5).replace(f"end={B + 5}", "end=soon"), "end",
     "not a time"),
    (torque_end("11.s", B, B + 9, B + 5), "end", "before start"),
    (torque_end("12.s", B, B - 9, B + 5), "start", "before ctime"),
    (torque_end("13.s", B, B, B + 5, exit_status="ok"), "Exit_status", "not an integer"),
    ("01/15/2024 10:00:00 E 14.s ctime=1", None, "not an accounting record"),
]


@pytest.mark.parametrize(("bad", "field", "message"), BAD_RECORDS)
def test_bad_records_are_errors(tmp_path, bad, field, message):
    path = write(tmp_path, [GOOD, bad])
    with pytest.raises(InputError) as err:
        read_pbs(path)
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 2, field)
    assert message in err.value.message


def test_lenient_skips_and_counts_bad_records(tmp_path):
    lines = [GOOD] + [bad for bad, _, _ in BAD_RECORDS] + [torque_end("99.s", B, B, B + 7)]
    t = read_pbs(write(tmp_path, lines), lenient=True)
    assert t["job_ref"].tolist() == ["1.s", "99.s"]
    assert t.info.malformed_skipped == len(BAD_RECORDS)
    assert t.info.lines_read == len(BAD_RECORDS) + 2


def test_etime_required_when_submit_from_eligible(tmp_path):
    line = torque_end("1.s", B, B, B + 5).replace(f" etime={B}", "")
    assert len(read_pbs(write(tmp_path, [line]))) == 1
    with pytest.raises(InputError) as err:
        read_pbs(write(tmp_path, [line]), submit_from="eligible")
    assert err.value.field == "etime"


# --- the table simulates --------------------------------------------------------------


def test_table_simulates_with_easy(tmp_path):
    # 8 cores: A (8 procs, 100 s) at t=0, B (4 procs, 50 s) at t=10, C (4 procs, 50 s)
    # at t=20. B and C wait for A and both start at 100.
    lines = [
        torque_end("A.s", B, B, B + 100, nodes="1:ppn=8", exec_host="n01/0-7",
                   walltime="00:03:20"),
        torque_end("B.s", B + 10, B + 10, B + 60, nodes="1:ppn=4", exec_host="n02/0-3",
                   walltime="00:03:20"),
        torque_end("C.s", B + 20, B + 20, B + 70, nodes="1:ppn=4", exec_host="n02/4-7",
                   walltime="00:03:20"),
    ]
    t = read_pbs(write(tmp_path, lines))
    result = Simulation(Platform.pooled(8), t, EASY(), WalltimePredictor()).run()
    np.testing.assert_array_equal(result.start, [0, 100, 100])
    np.testing.assert_array_equal(result.end, [100, 150, 150])


@pytest.mark.parametrize(("old", "new", "field", "message"), [
    ("ctime=1705312800", "ctime=" + "9" * 20, "ctime",
     "ctime 99,999,999,999,999,999,999 s is beyond the engine's time limit"),
    ("end=1705320300", "end=" + "9" * 5000, "end", "end 9999999999999999999999999999999999999... s "
     "is beyond the engine's time limit"),
    ("walltime=04:00:00", "walltime=" + "9" * 5000, "Resource_List.walltime",
     "Resource_List.walltime 9999999999999999999999999999999999999... is beyond"),
    ("walltime=04:00:00", "walltime=99999999999:00:00:00", "Resource_List.walltime",
     "Resource_List.walltime 99999999999:00:00:00 is beyond the engine's time limit"),
    ("select=1:ncpus=8", "select=999999999999999999:ncpus=999999999999999999",
     "Resource_List.select", "memory beyond 4,611,686,018,427,387,904 bytes"),
    ("select=1:ncpus=8:ngpus=2", "select=1:ncpus=8:ngpus=999999999999999999",
     "Resource_List.select", "GPUs beyond 9,007,199,254,740,992"),
    ("exec_host=", "exec_host=a/999999999999999999*999999999999999999+", "exec_host",
     "processors beyond"),
    ("resources_used.mem=50331648kb", "resources_used.mem=999999999999999999pb",
     "resources_used.mem", "a size beyond 4,611,686,018,427,387,904 bytes"),
])
def test_huge_values_are_one_error_or_a_counted_skip(tmp_path, old, new, field, message):
    # fuzzer findings: OverflowError (int64 columns, far dates), ValueError (5,000-digit
    # durations); the engine's time limit comes from sim.limits
    end = next(k for k, ln in enumerate(PRO_LOG) if ";E;" in ln)
    assert old in PRO_LOG[end]
    lines = [*TORQUE_LOG, *PRO_LOG[:end], PRO_LOG[end].replace(old, new)]
    path = write(tmp_path, lines)
    with pytest.raises(InputError) as err:
        read_pbs(path)
    assert (err.value.line, err.value.field) == (len(lines), field)
    assert message in err.value.message
    t = read_pbs(path, lenient=True)
    assert t["job_ref"].tolist() == ["1001.torque01"] and t.info.malformed_skipped == 1
    assert t.info.lines_read == len(t) + 1 + sum(t.info.skipped.values())


def test_queue_stamp_before_1970_is_refused(tmp_path):
    # the Q time stamp of a kept unstarted job without ctime gives its submit time: a
    # year-1 stamp is no time the engine represents (an OverflowError in some zones)
    queued = re.sub(r" ctime=\d+", "", QUEUED_THEN_DELETED[0]).replace(
        "01/15/2024 10:10:00", "01/01/0001 00:00:00")
    path = write(tmp_path, [*PRO_LOG, queued, *QUEUED_THEN_DELETED[1:]])
    with pytest.raises(InputError, match="the time stamp must be >= 0 s") as err:
        read_pbs(path, unstarted="keep", timezone="America/New_York")
    assert (err.value.line, err.value.field) == (4, "timestamp")
    t = read_pbs(path, unstarted="keep", lenient=True)
    assert len(t) == 1 and t.info.malformed_skipped == 1
