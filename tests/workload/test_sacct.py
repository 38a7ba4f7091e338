"""The Slurm sacct reader: every field, record kind, rule and error, on hand-written
exports in the formats of sacct 20.11 and 23.02/23.11 (``--parsable2``).

Expected values are computed by hand in the comments. Times: 2024-03-01T08:00:00Z is
Unix 1709251200 + 8 * 3600 = 1709280000 (2024-01-01 is day 19723, + 31 + 29 days).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from dispatchlab import Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY
from dispatchlab.predict import WalltimePredictor
from dispatchlab.workload.sacct import (
    SKIP_CANCELLED,
    SKIP_DUPLICATES,
    SKIP_HET,
    SKIP_PENDING,
    SKIP_PLACEHOLDERS,
    SKIP_RUNNING,
    SKIP_STEPS,
    looks_like_sacct,
    read_sacct,
)

T0 = 1709280000  # 2024-03-01T08:00:00Z

# --- sacct 23.02 --parsable2, the default ISO times (UTC) ---------------------------------

COLS_2302 = ("JobID|JobIDRaw|JobName|User|Group|Account|QOS|Partition|Submit|Eligible|Start|"
             "End|State|AllocCPUS|ReqCPUS|NNodes|Timelimit|ReqMem|ReqTRES|AllocTRES|NodeList")
EXPORT_2302 = [
    COLS_2302,
    # line 2: completed; 32G is the job's total memory (>= 21.08)
    "4001|4001|cfd|alice|physics|proj1|normal|batch|2024-03-01T08:00:00|2024-03-01T08:00:00|"
    "2024-03-01T08:10:00|2024-03-01T09:10:00|COMPLETED|16|16|2|02:00:00|32G|"
    "billing=16,cpu=16,mem=32G,node=2|billing=16,cpu=16,mem=32G,node=2|n[01-02]",
    # lines 3-5: its steps (no user, group, limit, ReqMem or ReqTRES on step lines)
    "4001.batch|4001.batch|batch|||proj1|normal|batch|2024-03-01T08:10:00|"
    "2024-03-01T08:10:00|2024-03-01T08:10:00|2024-03-01T09:10:00|COMPLETED|8|8|1||||"
    "cpu=8,mem=16G,node=1|n01",
    "4001.extern|4001.extern|extern|||proj1|normal|batch|2024-03-01T08:10:00|"
    "2024-03-01T08:10:00|2024-03-01T08:10:00|2024-03-01T09:10:00|COMPLETED|16|16|2||||"
    "billing=16,cpu=16,mem=32G,node=2|n[01-02]",
    "4001.0|4001.0|mpi|||proj1|normal|batch|2024-03-01T08:11:00|2024-03-01T08:11:00|"
    "2024-03-01T08:11:00|2024-03-01T09:09:00|COMPLETED|16|16|2||||cpu=16,mem=32G,node=2|"
    "n[01-02]",
    # line 6: eligible 15 min after submit (--begin); timed out; typed + untyped GPUs
    "4002|4002|train|bob|ml|proj2|high|gpu|2024-03-01T08:05:00|2024-03-01T08:20:00|"
    "2024-03-01T08:30:00|2024-03-01T10:30:00|TIMEOUT|8|8|1|02:00:00|64000M|"
    "billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64000M,node=1|"
    "billing=8,cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=64000M,node=1|g01",
    "4002.batch|4002.batch|batch|||proj2|high|gpu|2024-03-01T08:30:00|2024-03-01T08:30:00|"
    "2024-03-01T08:30:00|2024-03-01T10:30:05|CANCELLED|8|8|1||||cpu=8,mem=64000M,node=1|g01",
    "4002.extern|4002.extern|extern|||proj2|high|gpu|2024-03-01T08:30:00|"
    "2024-03-01T08:30:00|2024-03-01T08:30:00|2024-03-01T10:30:05|COMPLETED|8|8|1||||"
    "billing=8,cpu=8,mem=64000M,node=1|g01",
    # line 9: failed, limit of one day
    "4003|4003|post|alice|physics|proj1|normal|batch|2024-03-01T08:20:00|"
    "2024-03-01T08:20:00|2024-03-01T08:21:00|2024-03-01T08:31:00|FAILED|4|4|1|1-00:00:00|"
    "8000M|billing=4,cpu=4,mem=8000M,node=1|billing=4,cpu=4,mem=8000M,node=1|n03",
    "4003.batch|4003.batch|batch|||proj1|normal|batch|2024-03-01T08:21:00|"
    "2024-03-01T08:21:00|2024-03-01T08:21:00|2024-03-01T08:31:00|FAILED|4|4|1||||"
    "cpu=4,mem=8000M,node=1|n03",
    # line 11: cancelled before it started (no Start, an End)
    "4004|4004|big|carol|physics|proj1|normal|batch|2024-03-01T08:30:00|"
    "2024-03-01T08:30:00|None|2024-03-01T08:45:00|CANCELLED by 1002|0|32|1|04:00:00|64G|"
    "billing=32,cpu=32,mem=64G,node=1||None assigned",
    # line 12: array placeholder of the tasks that never started
    "4005_[3-5%2]|4005|scan|dave|chem|proj3|normal|batch|2024-03-01T08:40:00|"
    "2024-03-01T08:40:00|Unknown|Unknown|PENDING|0|1|1|00:30:00|2G|"
    "billing=1,cpu=1,mem=2G,node=1||None assigned",
    # lines 13-16: two array tasks (their own raw ids) and their batch steps
    "4005_1|4006|scan|dave|chem|proj3|normal|batch|2024-03-01T08:40:00|2024-03-01T08:40:00|"
    "2024-03-01T08:41:00|2024-03-01T08:51:00|COMPLETED|1|1|1|00:30:00|2G|"
    "billing=1,cpu=1,mem=2G,node=1|billing=1,cpu=1,mem=2G,node=1|n04",
    "4005_1.batch|4006.batch|batch|||proj3|normal|batch|2024-03-01T08:41:00|"
    "2024-03-01T08:41:00|2024-03-01T08:41:00|2024-03-01T08:51:00|COMPLETED|1|1|1||||"
    "cpu=1,mem=2G,node=1|n04",
    "4005_2|4007|scan|dave|chem|proj3|normal|batch|2024-03-01T08:40:00|2024-03-01T08:40:00|"
    "2024-03-01T08:42:00|2024-03-01T08:50:00|COMPLETED|1|1|1|00:30:00|2G|"
    "billing=1,cpu=1,mem=2G,node=1|billing=1,cpu=1,mem=2G,node=1|n04",
    "4005_2.batch|4007.batch|batch|||proj3|normal|batch|2024-03-01T08:42:00|"
    "2024-03-01T08:42:00|2024-03-01T08:42:00|2024-03-01T08:50:00|COMPLETED|1|1|1||||"
    "cpu=1,mem=2G,node=1|n04",
    # lines 17-19: a heterogeneous job (two components, a step of the first)
    "4008+0|4008|coupled|erin|chem|proj3|normal|batch|2024-03-01T09:00:00|"
    "2024-03-01T09:00:00|2024-03-01T09:10:00|2024-03-01T10:00:00|COMPLETED|4|4|1|01:00:00|"
    "8G|billing=4,cpu=4,mem=8G,node=1|billing=4,cpu=4,mem=8G,node=1|n05",
    "4008+0.0|4008.0|solver|||proj3|normal|batch|2024-03-01T09:10:00|2024-03-01T09:10:00|"
    "2024-03-01T09:10:00|2024-03-01T10:00:00|COMPLETED|4|4|1||||cpu=4,mem=8G,node=1|n05",
    "4008+1|4009|coupled|erin|chem|proj3|normal|gpu|2024-03-01T09:00:00|"
    "2024-03-01T09:00:00|2024-03-01T09:10:00|2024-03-01T10:05:00|COMPLETED|2|2|1|02:00:00|"
    "4G|billing=2,cpu=2,gres/gpu=1,mem=4G,node=1|billing=2,cpu=2,gres/gpu=1,mem=4G,node=1|g02",
    # lines 20-21: still running at export time
    "4010|4010|md|frank|bio|proj4|normal|batch|2024-03-01T09:30:00|2024-03-01T09:30:00|"
    "2024-03-01T09:31:00|Unknown|RUNNING|8|8|1|UNLIMITED|16G|billing=8,cpu=8,mem=16G,node=1|"
    "billing=8,cpu=8,mem=16G,node=1|n06",
    "4010.batch|4010.batch|batch|||proj4|normal|batch|2024-03-01T09:31:00|"
    "2024-03-01T09:31:00|2024-03-01T09:31:00|Unknown|RUNNING|8|8|1||||cpu=8,mem=16G,node=1|n06",
    # line 22: still pending at export time
    "4011|4011|wait|alice|physics|proj1|normal|batch|2024-03-01T09:45:00|"
    "2024-03-01T09:45:00|Unknown|Unknown|PENDING|0|2|1|Partition_Limit|4G|"
    "billing=2,cpu=2,mem=4G,node=1||None assigned",
]


def write(tmp_path: Path, lines: list[str], name: str = "jobs.sacct") -> Path:
    path = tmp_path / name
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def export(tmp_path: Path, records: list[dict[str, str]], cols: str = COLS_2302,
           header: bool = True, name: str = "jobs.sacct") -> Path:
    """An export with columns ``cols`` ('|'-separated names) of ``records``: each
    record's missing fields default to a completed 4-CPU job of one hour."""
    names = cols.split("|")
    lines = [cols] if header else []
    for rec in records:
        full = {**job(), **rec}
        lines.append("|".join(full.get(n, "") for n in names))
    return write(tmp_path, lines, name)


def job(**fields: str) -> dict[str, str]:
    """A job record of sacct 23.02 (defaults: 4 CPUs, submitted at T0, started 60 s
    later, ran 3600 s, limit 2 h, 8 GB in total)."""
    base = {
        "JobID": "7001", "JobIDRaw": "7001", "JobName": "app", "User": "u1", "Group": "g1",
        "Account": "acct", "QOS": "normal", "Partition": "batch",
        "Submit": "2024-03-01T08:00:00", "Eligible": "2024-03-01T08:00:00",
        "Start": "2024-03-01T08:01:00", "End": "2024-03-01T09:01:00", "State": "COMPLETED",
        "AllocCPUS": "4", "ReqCPUS": "4", "NNodes": "1", "Timelimit": "02:00:00",
        "ReqMem": "8G", "ReqTRES": "billing=4,cpu=4,mem=8G,node=1",
        "AllocTRES": "billing=4,cpu=4,mem=8G,node=1", "NodeList": "n01",
    }
    return {**base, **fields}


# --- the 23.02 export, field by field -----------------------------------------------------


def test_export_2302_every_field(tmp_path):
    t = read_sacct(write(tmp_path, EXPORT_2302))
    # kept: 4001, 4002, 4003, 4005_1, 4005_2 (same submit: file order), 4008+ (merged)
    assert t["job_ref"].tolist() == ["4001", "4002", "4003", "4005_1", "4005_2", "4008+"]
    assert t["job_id"].tolist() == [4001, 4002, 4003, 4006, 4007, 4008]
    # submit - 08:00: 0, 5 min, 20 min, 40 min, 40 min, 60 min
    assert t["submit"].tolist() == [0, 300, 1200, 2400, 2400, 3600]
    # start - submit: 10 min; 08:30 - 08:05; 1 min; 1 min; 2 min; 09:10 - 09:00
    assert t["wait"].tolist() == [600, 1500, 60, 60, 120, 600]
    # end - start: 1 h; 2 h (timeout); 10 min; 10 min; 8 min; 10:05 - 09:10 (het)
    assert t["run"].tolist() == [3600, 7200, 600, 600, 480, 3300]
    assert t["alloc_procs"].tolist() == [16, 8, 4, 1, 1, 6]
    assert t["req_procs"].tolist() == [16, 8, 4, 1, 1, 6]
    # 02:00:00, 02:00:00, 1-00:00:00, 00:30:00 x2, het: max(01:00:00, 02:00:00)
    assert t["req_time"].tolist() == [7200, 7200, 86400, 1800, 1800, 7200]
    # KB per CPU: 32G/16 = 2 GiB; 64000M/8 = 8000 MiB; 8000M/4; 2G/1; 2G/1; (8G+4G)/6
    assert t["req_mem"].tolist() == [2097152, 8192000, 2048000, 2097152, 2097152, 2097152]
    assert t["status"].tolist() == [1, 0, 0, 1, 1, 1]  # TIMEOUT and FAILED are 0
    assert t["user"].tolist() == [0, 1, 0, 2, 2, 3]
    assert t["group"].tolist() == [0, 1, 0, 2, 2, 2]
    assert t["queue"].tolist() == [0, 1, 0, 0, 0, 0]  # the het job: its first component's
    assert t["app"].tolist() == [0, 1, 2, 3, 3, 4]
    assert t.info.codes == {"user": ["alice", "bob", "dave", "erin"],
                            "group": ["physics", "ml", "chem"], "queue": ["batch", "gpu"],
                            "app": ["cfd", "train", "post", "scan", "coupled"]}
    for name in ("avg_cpu", "used_mem", "partition", "prev_job", "think_time"):
        assert (t[name] == -1).all(), name
    assert t["account"].tolist() == ["proj1", "proj2", "proj1", "proj3", "proj3", "proj3"]
    assert t["qos"].tolist() == ["normal", "high", "normal", "normal", "normal", "normal"]
    assert t["eligible"].tolist() == [0, 1200, 1200, 2400, 2400, 3600]  # 4002: 08:20
    assert t["req_gpus"].tolist() == [0, 2, 0, 0, 0, 1]  # gres/gpu=2 (typed twice); 0 + 1
    assert t["nodes_used"].tolist() == [2, 1, 1, 1, 1, 2]
    assert t["alloc_nodes"].tolist() == ["n[01-02]", "g01", "n03", "n04", "n04", "n05,g02"]
    assert t["line"].tolist() == [2, 6, 9, 13, 15, 17]
    assert t["units"].tolist() == [16, 8, 4, 1, 1, 6]
    assert t["job_ref"].dtype == object and isinstance(t["job_ref"][0], str)


def test_export_2302_info(tmp_path):
    t = read_sacct(write(tmp_path, EXPORT_2302))
    info = t.info
    assert info.format == "sacct"
    assert info.unix_start_time == T0
    assert info.header["UnixStartTime"] == str(T0) and info.header["TimeZone"] == "UTC"
    assert info.lines_read == 21
    assert info.malformed_skipped == 0
    assert info.skipped == {SKIP_STEPS: 10, SKIP_PLACEHOLDERS: 1, SKIP_HET: 1,
                            SKIP_CANCELLED: 1, SKIP_PENDING: 1, SKIP_RUNNING: 1}
    assert "Note" not in info.header


def test_unstarted_and_running_kept(tmp_path):
    t = read_sacct(write(tmp_path, EXPORT_2302), unstarted="keep", running="keep")
    assert t["job_ref"].tolist() == ["4001", "4002", "4003", "4004", "4005_1", "4005_2",
                                     "4008+", "4010", "4011"]
    k = {ref: i for i, ref in enumerate(t["job_ref"].tolist())}
    cancelled, running, pending = k["4004"], k["4010"], k["4011"]
    # cancelled before start: submitted 08:30, no wait or run, its State's status
    assert t["submit"][cancelled] == 1800
    assert (t["wait"][cancelled], t["run"][cancelled]) == (-1, -1)
    assert t["status"][cancelled] == 5 and t["alloc_procs"][cancelled] == -1
    assert t["req_procs"][cancelled] == 32 and t["req_time"][cancelled] == 14400
    assert t["req_mem"][cancelled] == 2097152  # 64G / 32
    assert t["nodes_used"][cancelled] == -1 and t["alloc_nodes"][cancelled] == ""
    # running: started 09:31 (wait 60 s), no end, unlimited
    assert t["submit"][running] == 5400 and t["wait"][running] == 60
    assert t["run"][running] == -1 and t["status"][running] == -1
    assert t["req_time"][running] == -1 and t["alloc_procs"][running] == 8
    # pending: nothing happened yet; Partition_Limit is no limit
    assert t["submit"][pending] == 6300 and t["status"][pending] == -1
    assert (t["wait"][pending], t["run"][pending], t["req_time"][pending]) == (-1, -1, -1)
    assert t.info.skipped == {SKIP_STEPS: 10, SKIP_PLACEHOLDERS: 1, SKIP_HET: 1}
    notes = t.info.header["Note"].split("\n")
    assert notes == ["sacct: 1 jobs cancelled before start kept",
                     "sacct: 1 jobs pending at export kept", "sacct: 1 jobs still running kept"]


def test_only_unstarted_kept(tmp_path):
    t = read_sacct(write(tmp_path, EXPORT_2302), unstarted="keep")
    assert "4004" in t["job_ref"] and "4011" in t["job_ref"] and "4010" not in t["job_ref"]
    assert t.info.skipped[SKIP_RUNNING] == 1
    assert SKIP_CANCELLED not in t.info.skipped and SKIP_PENDING not in t.info.skipped


def test_running_truncated_by_sacct_is_still_running(tmp_path):
    # sacct --truncate prints an End (the window's end) for running jobs
    path = export(tmp_path, [job(JobID="1", JobIDRaw="1"),
                             job(JobID="2", JobIDRaw="2", State="RUNNING")])
    assert read_sacct(path)["job_ref"].tolist() == ["1"]
    t = read_sacct(path, running="keep")
    assert t["run"].tolist() == [3600, 3600] and t["status"].tolist() == [1, -1]


# --- the 20.11 format: ReqMem per CPU (c) or per node (n), steps repeat it ----------------

COLS_2011 = ("JobID|JobIDRaw|JobName|Partition|Account|AllocCPUS|ReqCPUS|NNodes|State|Submit|"
             "Eligible|Start|End|Timelimit|ReqMem|User|Group")
EXPORT_2011 = [
    COLS_2011,
    "5001|5001|md|short|lab|8|8|2|COMPLETED|2021-02-01T12:00:00|2021-02-01T12:00:00|"
    "2021-02-01T12:00:30|2021-02-01T12:30:30|00:45:00|3800Mn|gina|lab",
    "5001.batch|5001.batch|batch||lab|4|4|1|COMPLETED|2021-02-01T12:00:30|"
    "2021-02-01T12:00:30|2021-02-01T12:00:30|2021-02-01T12:30:30||3800Mn||",
    "5001.extern|5001.extern|extern||lab|8|8|2|COMPLETED|2021-02-01T12:00:30|"
    "2021-02-01T12:00:30|2021-02-01T12:00:30|2021-02-01T12:30:30||3800Mn||",
    "5002|5002|fit|short|lab|4|4|1|CANCELLED by 1234|2021-02-01T12:10:00|"
    "2021-02-01T12:10:00|2021-02-01T12:11:00|2021-02-01T12:20:00|01:00:00|1000Mc|hank|lab",
    "5002.batch|5002.batch|batch||lab|4|4|1|CANCELLED|2021-02-01T12:11:00|"
    "2021-02-01T12:11:00|2021-02-01T12:11:00|2021-02-01T12:20:00||1000Mc||",
    "5003|5003|fit|long|lab|0|16|1|CANCELLED by 1234|2021-02-01T12:15:00|"
    "2021-02-01T12:15:00|Unknown|2021-02-01T12:16:00|2-00:00:00|2Gc|hank|lab",
]


def test_export_2011(tmp_path):
    t = read_sacct(write(tmp_path, EXPORT_2011))
    assert t["job_id"].tolist() == [5001, 5002]
    assert t["submit"].tolist() == [0, 600] and t["wait"].tolist() == [30, 60]
    assert t["run"].tolist() == [1800, 540] and t["status"].tolist() == [1, 5]
    assert t["req_time"].tolist() == [2700, 3600]
    # 3800 MB per node x 2 nodes / 8 CPUs = 950 MB = 972800 KB; 1000 MB per CPU
    assert t["req_mem"].tolist() == [972800, 1024000]
    assert t["queue"].tolist() == [0, 0] and t.info.codes["queue"] == ["short"]
    assert t["user"].tolist() == [0, 1] and t.info.codes["user"] == ["gina", "hank"]
    assert t["req_gpus"].tolist() == [-1, -1]  # no TRES columns
    assert t["eligible"].tolist() == [0, 600]
    assert t["alloc_nodes"].tolist() == ["", ""]  # no NodeList column
    assert t.info.unix_start_time == 1612180800  # 2021-02-01T12:00:00Z
    assert t.info.skipped == {SKIP_STEPS: 3, SKIP_CANCELLED: 1}


def test_export_2011_unstarted_kept(tmp_path):
    t = read_sacct(write(tmp_path, EXPORT_2011), unstarted="keep")
    assert t["job_id"].tolist() == [5001, 5002, 5003]
    # 2Gc: 2 GiB per CPU; 2-00:00:00; never started: wait, run, allocation -1
    assert t["req_mem"][2] == 2097152 and t["req_time"][2] == 172800
    assert (t["wait"][2], t["run"][2], t["alloc_procs"][2], t["status"][2]) == (-1, -1, -1, 5)
    assert t["req_procs"][2] == 16 and t["submit"][2] == 900


def test_header_absent_with_columns(tmp_path):
    with_header = read_sacct(write(tmp_path, EXPORT_2011))
    path = write(tmp_path, EXPORT_2011[1:], "noheader.sacct")
    t = read_sacct(path, columns=COLS_2011.split("|"))
    for name in ("job_id", "submit", "wait", "run", "req_mem", "req_time", "status", "user"):
        np.testing.assert_array_equal(t[name], with_header[name], err_msg=name)
    assert t["line"].tolist() == [1, 4]  # no header line: the records start at line 1
    # the list may also be one comma-separated string (the --format value)
    t2 = read_sacct(path, columns=COLS_2011.replace("|", ","))
    assert t2["line"].tolist() == [1, 4]


def test_columns_given_and_header_present(tmp_path):
    t = read_sacct(write(tmp_path, EXPORT_2011), columns=COLS_2011.lower().split("|"))
    assert t["line"].tolist() == [2, 5]  # the header line is recognized and skipped


def test_header_names_ignore_case(tmp_path):
    lines = [COLS_2011.upper(), *EXPORT_2011[1:]]
    assert read_sacct(write(tmp_path, lines))["job_id"].tolist() == [5001, 5002]


def test_parsable_with_trailing_bar(tmp_path):
    # sacct --parsable: a '|' after the last field, on the header and every record
    lines = [line + "|" for line in EXPORT_2011]
    t = read_sacct(write(tmp_path, lines))
    assert t["job_id"].tolist() == [5001, 5002] and t["req_mem"].tolist() == [972800, 1024000]
    t = read_sacct(write(tmp_path, lines[1:], "p.sacct"), columns=COLS_2011.split("|"))
    assert t["job_id"].tolist() == [5001, 5002]


def test_epoch_times(tmp_path):
    # SLURM_TIME_FORMAT=%s; the time zone does not apply to epoch values
    path = export(tmp_path, [
        job(Submit=str(T0), Eligible=str(T0), Start=str(T0 + 60), End=str(T0 + 3660)),
        job(JobID="7002", JobIDRaw="7002", Submit=str(T0 + 10), Eligible=str(T0 + 10),
            Start="Unknown", End="Unknown", State="PENDING"),
    ])
    for tz in ("UTC", "Europe/Rome"):
        t = read_sacct(path, timezone=tz)
        assert t["submit"].tolist() == [0] and t["wait"].tolist() == [60]
        assert t["run"].tolist() == [3600] and t.info.unix_start_time == T0


def test_gzip_export(tmp_path):
    t = read_sacct(write(tmp_path, EXPORT_2011, "jobs.sacct.gz"))
    assert t["job_id"].tolist() == [5001, 5002]


def test_crlf_line_ends(tmp_path):
    path = tmp_path / "crlf.sacct"
    path.write_bytes(("\r\n".join(EXPORT_2011) + "\r\n").encode())
    t = read_sacct(path)
    assert t["job_id"].tolist() == [5001, 5002] and t.info.codes["user"] == ["gina", "hank"]


def test_blank_lines_are_ignored(tmp_path):
    lines = [EXPORT_2011[0], "", *EXPORT_2011[1:4], "", *EXPORT_2011[4:]]
    t = read_sacct(write(tmp_path, lines))
    assert t["line"].tolist() == [3, 7]


# --- time zones and daylight saving -------------------------------------------------------


def test_iso_times_in_a_time_zone(tmp_path):
    # 2024-01-15T10:00:00 in Rome (CET, UTC+1) is 09:00Z: day 19723 + 14 = 19737,
    # 19737 * 86400 + 9 * 3600 = 1705309200
    path = export(tmp_path, [job(Submit="2024-01-15T10:00:00", Eligible="2024-01-15T10:00:00",
                                 Start="2024-01-15T10:00:30", End="2024-01-15T11:00:30")])
    t = read_sacct(path, timezone="Europe/Rome")
    assert t.info.unix_start_time == 1705309200
    assert t.info.header["TimeZone"] == "Europe/Rome"
    assert t["wait"].tolist() == [30] and t["run"].tolist() == [3600]


def test_repeated_hour_is_its_first_occurrence(tmp_path):
    # New York, 2023-11-05: 01:00-02:00 happens twice (EDT, then EST). Submit 00:30 EDT
    # (04:30Z); start 01:30, read as the first 01:30 (EDT, 05:30Z): wait 3600 (7200 if
    # it were the second); end 02:30 EST (07:30Z): run 7200.
    path = export(tmp_path, [job(Submit="2023-11-05T00:30:00", Eligible="2023-11-05T00:30:00",
                                 Start="2023-11-05T01:30:00", End="2023-11-05T02:30:00")])
    t = read_sacct(path, timezone="America/New_York")
    assert t["wait"].tolist() == [3600] and t["run"].tolist() == [7200]


def test_skipped_hour_takes_the_offset_before_the_jump(tmp_path):
    # New York, 2023-03-12: 02:00 EST jumps to 03:00 EDT. Submit 01:30 EST (06:30Z);
    # start 02:30 does not exist: read with EST (UTC-5) it is 07:30Z (03:30 EDT): wait
    # 3600; end 03:30 EDT is 07:30Z: run 0.
    path = export(tmp_path, [job(Submit="2023-03-12T01:30:00", Eligible="2023-03-12T01:30:00",
                                 Start="2023-03-12T02:30:00", End="2023-03-12T03:30:00")])
    t = read_sacct(path, timezone="America/New_York")
    assert t["wait"].tolist() == [3600] and t["run"].tolist() == [0]


# --- submit_from --------------------------------------------------------------------------


def test_submit_from_eligible(tmp_path):
    t = read_sacct(write(tmp_path, EXPORT_2302), submit_from="eligible")
    # Eligible times - 08:00 (the earliest, 4001's): 4002 becomes eligible at 08:20
    assert t["job_ref"].tolist() == ["4001", "4002", "4003", "4005_1", "4005_2", "4008+"]
    assert t["submit"].tolist() == [0, 1200, 1200, 2400, 2400, 3600]
    assert t["eligible"].tolist() == [0, 1200, 1200, 2400, 2400, 3600]
    assert t["wait"].tolist() == [600, 600, 60, 60, 120, 600]  # 4002: 08:30 - 08:20


def test_submit_from_eligible_rebases_on_the_first_eligible(tmp_path):
    path = export(tmp_path, [
        job(Submit="2024-03-01T07:00:00", Eligible="2024-03-01T08:00:00"),
        job(JobID="2", JobIDRaw="2", Submit="2024-03-01T07:30:00",
            Eligible="2024-03-01T07:45:00", Start="2024-03-01T08:00:00"),
    ])
    t = read_sacct(path, submit_from="eligible")
    assert t["job_ref"].tolist() == ["2", "7001"]  # sorted by eligible time
    assert t["submit"].tolist() == [0, 900] and t.info.unix_start_time == T0 - 900
    assert t["wait"].tolist() == [900, 60]


def test_submit_from_eligible_falls_back_to_submit(tmp_path):
    path = export(tmp_path, [job(Eligible="Unknown"),
                             job(JobID="2", JobIDRaw="2", Submit="2024-03-01T08:00:10",
                                 Eligible="2024-03-01T08:00:20")])
    t = read_sacct(path, submit_from="eligible")
    assert t["submit"].tolist() == [0, 20] and t["eligible"].tolist() == [-1, 20]
    assert "1 jobs without an Eligible time" in t.info.header["Note"]


def test_submit_from_eligible_needs_the_column(tmp_path):
    cols = COLS_2302.replace("|Eligible", "")
    path = export(tmp_path, [job()], cols=cols)
    assert read_sacct(path)["submit"].tolist() == [0]
    with pytest.raises(InputError) as err:
        read_sacct(path, submit_from="eligible")
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 1, "Eligible")


# --- time limits --------------------------------------------------------------------------


@pytest.mark.parametrize("limit, seconds", [
    ("30", 1800),  # MM
    ("30:15", 1860),  # MM:SS, rounded up to 31 minutes as Slurm stores minutes
    ("01:00:00", 3600),  # HH:MM:SS (what sacct prints)
    ("00:00:30", 60),  # rounded up
    ("2-12", 216000),  # D-HH
    ("2-12:30", 217800),  # D-HH:MM
    ("1-00:00:00", 86400),  # D-HH:MM:SS
    ("1-00:00:01", 86460),
    ("UNLIMITED", -1),
    ("Partition_Limit", -1),
    ("", -1),
])
def test_time_limit_forms(tmp_path, limit, seconds):
    t = read_sacct(export(tmp_path, [job(Timelimit=limit)]))
    assert t["req_time"].tolist() == [seconds]


def test_missing_limit_uses_the_estimate_fallback(tmp_path):
    t = read_sacct(export(tmp_path, [job(), job(JobID="2", JobIDRaw="2", Timelimit="")]))
    assert t["req_time"].tolist() == [7200, -1]
    assert t["requested_time"].tolist() == [7200, 7200]
    assert t.info.estimate_fallbacks == 1


def test_timelimit_raw_is_preferred(tmp_path):
    # sacct prints both from the job's one limit; with TimelimitRaw, Timelimit is not read
    cols = COLS_2302 + "|TimelimitRaw"
    path = export(tmp_path, [
        job(JobID="1", JobIDRaw="1", TimelimitRaw="90", Timelimit="01:30:00"),
        job(JobID="2", JobIDRaw="2", TimelimitRaw="UNLIMITED", Timelimit="UNLIMITED"),
        job(JobID="3", JobIDRaw="3", TimelimitRaw="Partition_Limit",
            Timelimit="Partition_Limit"),
        job(JobID="4", JobIDRaw="4", TimelimitRaw="", Timelimit=""),
        job(JobID="5", JobIDRaw="5", TimelimitRaw="60", Timelimit="not read"),
    ], cols=cols)
    assert read_sacct(path)["req_time"].tolist() == [5400, -1, -1, -1, 3600]
    path = export(tmp_path, [job(TimelimitRaw="1:00")], cols=cols)
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert (err.value.line, err.value.field) == (2, "TimelimitRaw")


def test_timelimit_raw_alone(tmp_path):
    cols = COLS_2302.replace("Timelimit", "TimelimitRaw")
    path = export(tmp_path, [job(TimelimitRaw="1440")], cols=cols)
    assert read_sacct(path)["req_time"].tolist() == [86400]


# --- memory -------------------------------------------------------------------------------


@pytest.mark.parametrize("req_mem, cpus, nodes, kb", [
    ("2000Mc", "4", "1", 2048000),  # <= 20.11, per CPU: 2000 * 1024
    ("1.50Gc", "4", "1", 1572864),  # 1.5 * 1024 * 1024
    ("4Gn", "8", "2", 1048576),  # per node: 4 GiB * 2 nodes / 8 CPUs = 1 GiB
    ("1Tn", "64", "1", 16777216),  # 1024^3 KB / 64
    ("16G", "8", "2", 2097152),  # >= 21.08, the job's total: 16 GiB / 8
    ("2000", "4", "1", 512000),  # no unit: MB; 2000 * 1024 / 4
    ("512K", "4", "1", 128),
    ("3000M", "7", "1", 438857),  # 3000 * 1024 / 7 = 438857.14 -> nearest KB
    ("0n", "4", "1", 0),  # --mem=0 (all the memory of the node) kept as 0
])
def test_req_mem_forms(tmp_path, req_mem, cpus, nodes, kb):
    path = export(tmp_path, [job(ReqMem=req_mem, AllocCPUS=cpus, ReqCPUS=cpus, NNodes=nodes)])
    assert read_sacct(path)["req_mem"].tolist() == [kb]


def test_req_mem_from_req_tres_when_absent_or_empty(tmp_path):
    path = export(tmp_path, [
        job(JobID="1", JobIDRaw="1", ReqMem="", ReqTRES="billing=4,cpu=4,mem=8G,node=1"),
        job(JobID="2", JobIDRaw="2", ReqMem="", ReqTRES="billing=4,cpu=4,node=1"),
        job(JobID="3", JobIDRaw="3", ReqMem="", ReqTRES=""),
    ])
    assert read_sacct(path)["req_mem"].tolist() == [2097152, -1, -1]  # 8 GiB / 4 CPUs
    cols = COLS_2302.replace("|ReqMem", "")
    path = export(tmp_path, [job(ReqTRES="cpu=2,mem=1000M,node=1", AllocCPUS="2")], cols=cols)
    assert read_sacct(path)["req_mem"].tolist() == [512000]


def test_req_mem_per_node_needs_the_node_count(tmp_path):
    cols = COLS_2011.replace("|NNodes", "")
    lines = [cols, "1|1|a|p|acc|8|8|COMPLETED|100|100|110|210|10|4Gn|u|g",
             "2|2|a|p|acc|8|8|COMPLETED|100|100|110|210|10|4Gc|u|g"]
    t = read_sacct(write(tmp_path, lines))
    assert t["req_mem"].tolist() == [-1, 4194304]
    # ReqNodes stands in for NNodes: 4 GiB x 2 nodes / 8 CPUs
    lines = [cols + "|ReqNodes", "1|1|a|p|acc|8|8|COMPLETED|100|100|110|210|10|4Gn|u|g|2"]
    assert read_sacct(write(tmp_path, lines))["req_mem"].tolist() == [1048576]


# --- GPUs, nodes --------------------------------------------------------------------------


@pytest.mark.parametrize("req_tres, gpus", [
    ("billing=8,cpu=8,gres/gpu=4,mem=8G,node=1", 4),
    ("cpu=8,gres/gpu:a100=2,gres/gpu:v100=1,mem=8G", 3),  # typed only: summed
    ("cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=8G", 2),  # both forms: the total
    ("cpu=8,gres/gpumem=40G,mem=8G", 0),  # not a GPU count
    ("cpu=8,mem=8G,node=1", 0),  # requested none (AllocTRES is not read)
    ("", -1),
])
def test_gpus(tmp_path, req_tres, gpus):
    path = export(tmp_path, [job(ReqTRES=req_tres, AllocTRES="cpu=8,gres/gpu=1")])
    assert read_sacct(path)["req_gpus"].tolist() == [gpus]


def test_gpus_from_alloc_tres_without_req_tres(tmp_path):
    cols = COLS_2302.replace("|ReqTRES", "")
    path = export(tmp_path, [job(AllocTRES="cpu=2,gres/gpu:a100=2,node=1"),
                             job(JobID="2", JobIDRaw="2", AllocTRES="")], cols=cols)
    assert read_sacct(path)["req_gpus"].tolist() == [2, -1]


def test_node_count_with_a_unit(tmp_path):
    path = export(tmp_path, [job(NNodes="1K", AllocCPUS="4096", ReqCPUS="4096")])
    assert read_sacct(path)["nodes_used"].tolist() == [1024]


# --- states -------------------------------------------------------------------------------


@pytest.mark.parametrize("state, status", [
    ("COMPLETED", 1), ("TIMEOUT", 0), ("FAILED", 0), ("NODE_FAIL", 0), ("BOOT_FAIL", 0),
    ("OUT_OF_MEMORY", 0), ("CANCELLED by 1234", 5), ("CANCELLED by 0", 5), ("CANCELLED+", 5),
    ("CANCELLED", 5), ("DEADLINE", 5), ("PREEMPTED", 5), ("REQUEUED", 5),
])
def test_state_table(tmp_path, state, status):
    assert read_sacct(export(tmp_path, [job(State=state)]))["status"].tolist() == [status]


# --- records: steps, arrays, heterogeneous jobs, duplicates -------------------------------


def test_steps_of_every_kind_are_folded(tmp_path):
    path = export(tmp_path, [
        job(JobID="10", JobIDRaw="10"),
        job(JobID="10.batch", JobIDRaw="10.batch", State="FAILED"),
        job(JobID="10.extern", JobIDRaw="10.extern"),
        job(JobID="10.0", JobIDRaw="10.0"),
        job(JobID="11_4", JobIDRaw="15"),
        job(JobID="11_4.batch", JobIDRaw="15.batch"),
        job(JobID="20+0", JobIDRaw="20"),
        job(JobID="20+0.0", JobIDRaw="20.0"),
        job(JobID="20+1", JobIDRaw="21"),
        job(JobID="20+1.batch", JobIDRaw="21.batch"),
    ])
    t = read_sacct(path)
    assert t["job_ref"].tolist() == ["10", "11_4", "20+"]
    assert t["status"].tolist() == [1, 1, 1]  # the FAILED batch step is not the job
    assert t.info.skipped == {SKIP_STEPS: 6, SKIP_HET: 1}


def test_array_placeholders_are_dropped_and_counted(tmp_path):
    path = export(tmp_path, [
        job(JobID="30_[5-10%2]", JobIDRaw="30", State="PENDING", Start="Unknown",
            End="Unknown"),
        job(JobID="30_[11-12]", JobIDRaw="30", State="CANCELLED by 5", Start="None"),
        job(JobID="30_1", JobIDRaw="31"),
        job(JobID="30_2", JobIDRaw="32"),
    ])
    t = read_sacct(path, unstarted="keep")
    assert t["job_ref"].tolist() == ["30_1", "30_2"] and t["job_id"].tolist() == [31, 32]
    assert t.info.skipped == {SKIP_PLACEHOLDERS: 2}


def test_heterogeneous_job_merge(tmp_path):
    path = export(tmp_path, [
        # first component: 4 CPUs, 8 GiB, 1 h; starts 08:02, ends 09:00; submitted 08:00
        job(JobID="40+0", JobIDRaw="40", AllocCPUS="4", ReqCPUS="4", NNodes="1",
            Start="2024-03-01T08:02:00", End="2024-03-01T09:00:00", Timelimit="01:00:00",
            ReqMem="8G", ReqTRES="cpu=4,mem=8G,node=1", NodeList="n01", Partition="cpu",
            User="ann", State="COMPLETED"),
        # second: 12 CPUs on 2 nodes, 4 GiB, 3 GPUs, 2 h; submitted 08:00:30 (later),
        # starts 08:02, ends 09:30, failed
        job(JobID="40+1", JobIDRaw="41", AllocCPUS="12", ReqCPUS="12", NNodes="2",
            Submit="2024-03-01T08:00:30", Eligible="2024-03-01T08:00:30",
            Start="2024-03-01T08:02:00", End="2024-03-01T09:30:00", Timelimit="02:00:00",
            ReqMem="4G", ReqTRES="cpu=12,gres/gpu=3,mem=4G,node=2", NodeList="g[01-02]",
            Partition="gpu", User="ann", State="FAILED"),
    ])
    t = read_sacct(path)
    assert t["job_ref"].tolist() == ["40+"] and t["job_id"].tolist() == [40]
    assert t["submit"].tolist() == [0] and t["wait"].tolist() == [120]
    assert t["run"].tolist() == [5280]  # 09:30 - 08:02
    assert t["alloc_procs"].tolist() == [16] and t["req_procs"].tolist() == [16]
    assert t["nodes_used"].tolist() == [3] and t["req_gpus"].tolist() == [3]
    assert t["req_time"].tolist() == [7200]  # the longest component limit
    assert t["req_mem"].tolist() == [786432]  # (8 + 4) GiB / 16 CPUs = 0.75 GiB
    assert t["status"].tolist() == [0]  # one component failed
    assert t["alloc_nodes"].tolist() == ["n01,g[01-02]"]
    assert t.info.codes["queue"] == ["cpu"]  # the first component's partition
    assert t["line"].tolist() == [2]
    assert t.info.skipped == {SKIP_HET: 1}


def test_heterogeneous_job_with_an_unlimited_component(tmp_path):
    path = export(tmp_path, [job(JobID="40+0", JobIDRaw="40"),
                             job(JobID="40+1", JobIDRaw="41", Timelimit="UNLIMITED")])
    assert read_sacct(path)["req_time"].tolist() == [-1]


def test_heterogeneous_job_still_running(tmp_path):
    path = export(tmp_path, [job(JobID="40+0", JobIDRaw="40"),
                             job(JobID="40+1", JobIDRaw="41", End="Unknown", State="RUNNING"),
                             job(JobID="50", JobIDRaw="50")])
    t = read_sacct(path)
    assert t["job_ref"].tolist() == ["50"]
    assert t.info.skipped == {SKIP_HET: 1, SKIP_RUNNING: 1}


def test_heterogeneous_components_without_jobid_are_separate_jobs(tmp_path):
    cols = COLS_2302.replace("JobID|", "")
    path = export(tmp_path, [job(JobIDRaw="40"), job(JobIDRaw="41")], cols=cols)
    t = read_sacct(path)
    assert t["job_id"].tolist() == [40, 41] and t["job_ref"].tolist() == ["40", "41"]


def test_duplicates_keep_the_last_record(tmp_path):
    # sacct --duplicates: job 60 was preempted and requeued, then ran to completion;
    # Slurm reset its Submit on requeue
    path = export(tmp_path, [
        job(JobID="60", JobIDRaw="60", State="PREEMPTED", Start="2024-03-01T08:01:00",
            End="2024-03-01T08:30:00"),
        job(JobID="60.batch", JobIDRaw="60.batch", State="CANCELLED"),
        job(JobID="61", JobIDRaw="61", Submit="2024-03-01T08:10:00",
            Eligible="2024-03-01T08:10:00", Start="2024-03-01T08:11:00",
            End="2024-03-01T08:20:00"),
        job(JobID="60", JobIDRaw="60", State="REQUEUED", Submit="2024-03-01T08:30:00",
            Eligible="2024-03-01T08:30:00", Start="2024-03-01T08:31:00",
            End="2024-03-01T08:40:00"),
        job(JobID="60", JobIDRaw="60", State="COMPLETED", Submit="2024-03-01T08:40:00",
            Eligible="2024-03-01T08:40:00", Start="2024-03-01T08:41:00",
            End="2024-03-01T09:41:00"),
    ])
    t = read_sacct(path)
    assert t["job_ref"].tolist() == ["61", "60"]
    assert t["submit"].tolist() == [0, 1800] and t["run"].tolist() == [540, 3600]
    assert t["status"].tolist() == [1, 1] and t["line"].tolist() == [4, 6]
    assert t.info.skipped == {SKIP_DUPLICATES: 2, SKIP_STEPS: 1}


def test_duplicates_by_jobid_without_jobidraw(tmp_path):
    cols = COLS_2302.replace("|JobIDRaw", "")
    path = export(tmp_path, [job(JobID="8_1", State="REQUEUED"), job(JobID="8_2"),
                             job(JobID="8_1")], cols=cols)
    t = read_sacct(path)
    assert t["job_ref"].tolist() == ["8_2", "8_1"] and t["job_id"].tolist() == [-1, -1]
    assert t["line"].tolist() == [3, 4] and t.info.skipped == {SKIP_DUPLICATES: 1}


# --- order and codes ----------------------------------------------------------------------


def test_sorted_by_submit_ties_in_file_order_codes_follow_the_table(tmp_path):
    path = export(tmp_path, [
        job(JobID="3", JobIDRaw="3", Submit="2024-03-01T08:00:50", User="zoe"),
        job(JobID="1", JobIDRaw="1", User="yan", Group=""),
        job(JobID="2", JobIDRaw="2", User="zoe", Group="g2"),
        job(JobID="4", JobIDRaw="4", User="", Group="g1"),
    ])
    t = read_sacct(path)
    assert t["job_ref"].tolist() == ["1", "2", "4", "3"]
    assert t["line"].tolist() == [3, 4, 5, 2]
    assert t["user"].tolist() == [0, 1, -1, 1] and t.info.codes["user"] == ["yan", "zoe"]
    assert t["group"].tolist() == [-1, 0, 1, 1] and t.info.codes["group"] == ["g2", "g1"]
    assert t["submit"].tolist() == [0, 0, 0, 50]


def test_names_are_preferred_to_ids(tmp_path):
    cols = COLS_2302 + "|UID|GID|NCPUS"
    path = export(tmp_path, [job(UID="1001", GID="100", NCPUS="4")], cols=cols)
    t = read_sacct(path)
    assert t.info.codes["user"] == ["u1"] and t.info.codes["group"] == ["g1"]


def test_uid_and_gid_when_no_names(tmp_path):
    cols = COLS_2302.replace("User|Group", "UID|GID")
    path = export(tmp_path, [job(UID="1001", GID="100"), job(JobID="2", JobIDRaw="2",
                                                               UID="1002", GID="100")], cols=cols)
    t = read_sacct(path)
    assert t.info.codes["user"] == ["1001", "1002"] and t.info.codes["group"] == ["100"]


def test_non_utf8_names_are_replaced(tmp_path):
    path = export(tmp_path, [job(JobName="x")])
    path.write_bytes(path.read_bytes().replace(b"|x|", b"|J\xf6rg|"))  # Latin-1 o-umlaut
    t = read_sacct(path)
    assert t.info.codes["app"] == ["J\ufffdrg"]


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("drop, field", [
    (("JobID", "JobIDRaw"), "JobIDRaw"),
    (("Submit",), "Submit"),
    (("Start",), "Start"),
    (("End",), "End"),
    (("State",), "State"),
    (("AllocCPUS", "ReqCPUS"), "ReqCPUS"),
])
def test_missing_required_column(tmp_path, drop, field):
    cols = "|".join(c for c in COLS_2302.split("|") if c not in drop)
    path = export(tmp_path, [job()], cols=cols)
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 1, field)
    assert str(err.value).startswith(f"{path}:1: field {field}: missing column")


def test_missing_required_column_in_columns_option(tmp_path):
    cols = COLS_2302.replace("|State", "")
    path = export(tmp_path, [job()], cols=cols, header=False)
    with pytest.raises(InputError) as err:
        read_sacct(path, columns=cols.split("|"))
    assert (err.value.line, err.value.field) == (None, "State")
    assert "--columns has no State" in str(err.value)


def test_one_cpu_column_is_enough(tmp_path):
    cols = COLS_2302.replace("|AllocCPUS|ReqCPUS", "|NCPUS")
    t = read_sacct(export(tmp_path, [job(NCPUS="6")], cols=cols))
    assert t["alloc_procs"].tolist() == [6] and t["req_procs"].tolist() == [-1]
    assert t["units"].tolist() == [6]


@pytest.mark.parametrize("field, value, message", [
    ("Start", "2024-03-01 08:01:00", "not a time"),
    ("Start", "2024-02-30T08:01:00", "not a time"),
    ("Submit", "yesterday", "not a time"),
    ("Submit", "Unknown", "missing submit time"),
    ("End", "2024-03-01T24:00:00", "not a time"),
    ("Timelimit", "two hours", "not a time limit"),
    ("Timelimit", "1:2:3:4", "not a time limit"),
    ("ReqMem", "lots", "not a memory size"),
    ("ReqMem", "4Gx", "not a memory size"),
    ("AllocCPUS", "four", "not a count"),
    ("State", "EXPLODED", "unknown job state"),
    ("JobIDRaw", "x9", "not a job id"),
])
def test_unreadable_values_name_file_line_and_field(tmp_path, field, value, message):
    path = export(tmp_path, [job(JobID="1", JobIDRaw="1"), job(JobID="2", JobIDRaw="2"),
                             {**job(JobID="3", JobIDRaw="3"), field: value}])
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 4, field)
    assert message in err.value.message and f"{path}:4: field {field}: " in str(err.value)


def test_field_spelled_as_in_the_header(tmp_path):
    cols = COLS_2302.replace("Start", "start")
    path = export(tmp_path, [job(start="soon")], cols=cols)
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert err.value.field == "start"


def test_wrong_field_count_names_the_line(tmp_path):
    path = export(tmp_path, [job(JobID="1", JobIDRaw="1"),
                             job(JobID="2", JobIDRaw="2", JobName="a|b")])
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert (err.value.file, err.value.line) == (str(path), 3)
    assert "22 fields separated by '|', the header names 21" in str(err.value)


def test_first_problem_in_file_order_is_reported(tmp_path):
    path = export(tmp_path, [job(JobID="1", JobIDRaw="1", Start="soon"),
                             job(JobID="2", JobIDRaw="2", JobName="a|b")])
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert (err.value.line, err.value.field) == (2, "Start")


def test_lenient_skips_and_counts(tmp_path):
    path = export(tmp_path, [
        job(JobID="1", JobIDRaw="1"),  # line 2
        job(JobID="2", JobIDRaw="2", Start="soon"),  # line 3: bad time
        job(JobID="3", JobIDRaw="3", JobName="a|b"),  # line 4: one field too many
        job(JobID="4", JobIDRaw="4"),  # line 5
        job(JobID="5", JobIDRaw="5", State="EXPLODED"),  # line 6
        job(JobID="5.batch", JobIDRaw="5.batch"),  # line 7: a step of a skipped job
        job(JobID="6", JobIDRaw="6", Submit="2024-03-01T08:00:01"),  # line 8
    ])
    t = read_sacct(path, lenient=True)
    assert t["job_ref"].tolist() == ["1", "4", "6"] and t["line"].tolist() == [2, 5, 8]
    assert t.info.malformed_skipped == 3
    assert t.info.skipped == {SKIP_STEPS: 1}
    assert t.info.lines_read == 7


def test_start_before_submit_is_refused(tmp_path):
    # 7002 starts at 07:51:50, 490 s before its submission at 08:00:00: refused as the
    # PBS reader refuses it, naming file, line and field; --lenient skips and counts it
    path = export(tmp_path, [job(JobID="7001", JobIDRaw="7001"),
                             job(JobID="7002", JobIDRaw="7002", Start="2024-03-01T07:51:50")])
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 3, "Start")
    assert err.value.message == ("Start '2024-03-01T07:51:50' is before Submit "
                                 "'2024-03-01T08:00:00' (a wait of -490 s)")
    t = read_sacct(path, lenient=True)
    assert t["job_ref"].tolist() == ["7001"] and t["wait"].tolist() == [60]
    assert t.info.malformed_skipped == 1 and t.info.lines_read == 2
    # with --submit-from eligible the eligible time is the submit time
    late = export(tmp_path, [job(Eligible="2024-03-01T08:02:00")], name="late.sacct")
    with pytest.raises(InputError, match="is before Eligible"):
        read_sacct(late, submit_from="eligible")
    assert read_sacct(late)["wait"].tolist() == [60]


def test_blank_lines_are_not_counted_as_records(tmp_path):
    lines = [EXPORT_2011[0], "", *EXPORT_2011[1:4], "", "", *EXPORT_2011[4:], ""]
    with_blanks = read_sacct(write(tmp_path, lines, "blanks.sacct"))
    plain = read_sacct(write(tmp_path, EXPORT_2011, "plain.sacct"))
    assert with_blanks.info.lines_read == plain.info.lines_read == len(EXPORT_2011) - 1


@pytest.mark.parametrize("node_list", ["n[01-02", "n01]", "n[a-b]", "n[1,,2]", "n[[1]]"])
def test_malformed_node_list_is_refused(tmp_path, node_list):
    path = export(tmp_path, [job(JobID="1", JobIDRaw="1"),
                             job(JobID="2", JobIDRaw="2", NodeList=node_list)])
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert (err.value.line, err.value.field) == (3, "NodeList")
    assert "not a Slurm host list" in err.value.message and node_list in err.value.message
    t = read_sacct(path, lenient=True)
    assert t["job_ref"].tolist() == ["1"] and t.info.malformed_skipped == 1


def test_node_list_forms_and_node_count_without_nnodes(tmp_path):
    forms = ["cn[001-004]", "r[1-2]n[01-02],gpu01", "cn[1,3-5],cn[3]", "n 01", "n[ 1-2]"]
    cols = COLS_2302.replace("|NNodes", "")
    path = export(tmp_path, [job(JobID=str(i), JobIDRaw=str(i), NodeList=f)
                             for i, f in enumerate(forms, 1)], cols=cols)
    t = read_sacct(path)
    assert t["alloc_nodes"].tolist() == forms  # kept as written
    assert t["nodes_used"].tolist() == [4, 5, 4, 2, 2]  # distinct hosts
    with_nnodes = read_sacct(export(tmp_path, [job(NodeList="cn[001-004]")], name="b"))
    assert with_nnodes["nodes_used"].tolist() == [1]  # NNodes wins


def test_lenient_in_a_gzip_export(tmp_path):
    lines = [COLS_2011, EXPORT_2011[1], "5009|5009|a|b", *EXPORT_2011[2:]]
    t = read_sacct(write(tmp_path, lines, "jobs.sacct.gz"), lenient=True)
    assert t["job_id"].tolist() == [5001, 5002] and t["line"].tolist() == [2, 6]
    assert t.info.malformed_skipped == 1
    with pytest.raises(InputError) as err:
        read_sacct(write(tmp_path, lines, "again.sacct.gz"))
    assert err.value.line == 3 and "4 fields separated by '|'" in str(err.value)


def test_no_header_is_an_error(tmp_path):
    path = write(tmp_path, EXPORT_2011[1:])
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert err.value.line == 1 and "--columns" in str(err.value)


def test_fixed_width_output_is_an_error(tmp_path):
    path = write(tmp_path, ["JobID           JobName  Partition    Account  AllocCPUS",
                            "------------ ---------- ---------- ---------- ----------",
                            "4001                cfd      batch      proj1         16"])
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert err.value.line == 1 and "--parsable2" in str(err.value)


def test_duplicate_column_is_an_error(tmp_path):
    path = export(tmp_path, [job()], cols=COLS_2302 + "|start")
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert (err.value.line, err.value.field) == (1, "start")


def test_no_jobs_left_is_an_error(tmp_path):
    path = export(tmp_path, [job(Start="Unknown", End="Unknown", State="PENDING"),
                             job(JobID="7001.batch", JobIDRaw="7001.batch")])
    with pytest.raises(InputError) as err:
        read_sacct(path)
    assert "no jobs" in str(err.value) and "1 pending at export" in str(err.value)
    with pytest.raises(InputError, match="no jobs"):
        read_sacct(write(tmp_path, [COLS_2302], "empty.sacct"))


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_sacct(tmp_path / "nope.sacct")
    with pytest.raises(InputError, match="directory"):
        read_sacct(tmp_path)
    (tmp_path / "empty.sacct").write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        read_sacct(tmp_path / "empty.sacct")


@pytest.mark.parametrize("option, value, field", [
    ("submit_from", "start", "--submit-from"),
    ("unstarted", "drop-all", "--unstarted"),
    ("running", "yes", "--running"),
    ("timezone", "Mars/Olympus", "--timezone"),
    ("timezone", "", "--timezone"),
    ("columns", [], "--columns"),
    ("columns", ["JobID", ""], "--columns"),
])
def test_bad_option_names_the_option(tmp_path, option, value, field):
    path = write(tmp_path, EXPORT_2011)
    with pytest.raises(InputError) as err:
        read_sacct(path, **{option: value})
    assert err.value.field == field and str(err.value).startswith(f"field {field}: ")


# --- sniffing -----------------------------------------------------------------------------


def test_looks_like_sacct():
    assert looks_like_sacct(EXPORT_2302[:5])
    assert looks_like_sacct(EXPORT_2011[:3])
    assert looks_like_sacct([line + "|\r\n" for line in EXPORT_2011[:3]])  # --parsable
    assert looks_like_sacct(EXPORT_2011[1:6])  # headerless records
    assert looks_like_sacct(["JobID    JobName  Partition", "------- -------- ---------"])
    assert not looks_like_sacct([])
    # SWF, PBS accounting, a CSV job table
    assert not looks_like_sacct(["; Version: 2.2", "1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1"
                                 " -1 -1"])
    assert not looks_like_sacct(["01/15/2024 10:00:00;E;123.pbs01;user=alice group=lab "
                                 "queue=batch"])
    assert not looks_like_sacct(["job_id,submit,run,units", "1,0,10,4"])
    assert not looks_like_sacct(["name|value|unit", "cpu|4|cores"])


# --- the table simulates ------------------------------------------------------------------


def test_table_simulates_with_easy(tmp_path):
    # 8 cores: A (8 CPUs, 100 s) at t=0, B (4 CPUs, 50 s) at t=10, C (4 CPUs, 50 s) at
    # t=20, limits 200 s. B and C wait for A and both start at 100.
    path = export(tmp_path, [
        job(JobID="A", JobIDRaw="1", AllocCPUS="8", ReqCPUS="8", Submit=str(T0),
            Start=str(T0), End=str(T0 + 100), Timelimit="00:03:20"),
        job(JobID="B", JobIDRaw="2", Submit=str(T0 + 10), Start=str(T0 + 10),
            End=str(T0 + 60), Timelimit="00:03:20"),
        job(JobID="C", JobIDRaw="3", Submit=str(T0 + 20), Start=str(T0 + 20),
            End=str(T0 + 70), Timelimit="00:03:20"),
    ], cols=COLS_2302.replace("|Eligible", ""))
    t = read_sacct(path)
    result = Simulation(Platform.pooled(8), t, EASY(), WalltimePredictor()).run()
    np.testing.assert_array_equal(result.start, [0, 100, 100])
    np.testing.assert_array_equal(result.end, [100, 150, 150])


def test_malformed_row_that_is_not_utf8(tmp_path, monkeypatch):
    # pyarrow cannot hand such a row to the invalid-row handler ("Exception ignored in
    # on_bad", then a failed read): the records are read again from the text with the
    # bytes replaced, so the row is one error naming its line, or a counted skip
    import sys

    reported: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    lines = list(EXPORT_2302)
    lines[2] += "|x\xe9"
    lines[1] = lines[1].replace("|cfd|", "|cf\xe9|")  # a stray byte in a kept name too
    path = tmp_path / "j.sacct"
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    with pytest.raises(InputError, match="malformed record: 22 fields") as err:
        read_sacct(path)
    assert err.value.line == 3
    t = read_sacct(path, lenient=True)
    plain = read_sacct(write(tmp_path, EXPORT_2302))
    assert t.info.malformed_skipped == 1 and t.info.lines_read == plain.info.lines_read
    assert t["job_id"].tolist() == plain["job_id"].tolist()
    assert t.info.codes["app"][0] == "cf\ufffd"
    assert reported == []
