"""The readers agree: one SWF status table for sacct, PBS, the Eurora archive and
``simulate --swf-out`` (kept equal to the table of docs/reference/cluster-logs.md), the
same status for the same end in every format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dispatchlab.workload.eurora import read_eurora
from dispatchlab.workload.pbs import read_pbs
from dispatchlab.workload.sacct import read_sacct
from dispatchlab.workload.status import STATUS_TABLE
from test_eurora_reader import job as eurora_job
from test_eurora_reader import write as write_eurora
from test_pbs import torque_end
from test_pbs import write as write_pbs
from test_sacct import export, job

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "cluster-logs.md"


def _docs_table() -> set[tuple[str, str, int]]:
    text = PAGE.read_text()
    block = re.search(r"<!-- status-table.*?-->\n(.*?)<!-- end status-table -->", text,
                      re.DOTALL)
    assert block is not None, f"{PAGE.name} has no status table"
    rows = set()
    for line in block[1].splitlines()[2:]:
        source, whats, status = (cell.strip() for cell in line.strip("|").split("|"))
        rows |= {(source, what, int(status)) for what in whats.split(", ")}
    return rows


def test_the_docs_table_is_the_code_table():
    assert _docs_table() == set(STATUS_TABLE)
    assert len(STATUS_TABLE) == len(set(STATUS_TABLE))


# the same end written by Slurm, PBS Pro / Torque and the Eurora archive
SAME_END = [
    # (Slurm State, PBS Exit_status, PBS D record first, SWF status)
    ("COMPLETED", "0", False, 1),
    ("FAILED", "2", False, 0),
    ("TIMEOUT", "-29", False, 0),  # killed at the time limit: failed
    ("OUT_OF_MEMORY", "-27", False, 0),
    ("CANCELLED by 1001", "271", False, 5),  # deleted while running
    ("CANCELLED", "265", True, 5),  # a D record, then the kill
]


@pytest.mark.parametrize(("state", "exit_status", "deleted", "status"), SAME_END)
def test_same_end_same_status(tmp_path, state, exit_status, deleted, status):
    sacct = read_sacct(export(tmp_path, [job(State=state)]))
    b = 1705312800
    lines = ["01/15/2024 10:30:00;D;1.s;requestor=alice@login1"] if deleted else []
    lines.append(torque_end("1.s", b, b + 10, b + 100, exit_status=exit_status))
    pbs = read_pbs(write_pbs(tmp_path, lines))
    assert sacct["status"].tolist() == pbs["status"].tolist() == [status]


@pytest.mark.parametrize(("state", "status"), [("COMPLETED", 1), ("FAILED", 0),
                                               ("TIMEOUT", 0), ("CANCELLED", 5)])
def test_eurora_reads_the_slurm_states_of_the_table(tmp_path, state, status):
    t = read_eurora(write_eurora(tmp_path, [eurora_job(1, start=5, end=605, status=state)]))
    assert t["status"].tolist() == [status]
