"""``simulate --by``: metrics per partition, user, account and QOS, end to end on the
hand-made sacct export and PBS log of the reader tests (printed tables, summary.json's
``by_group`` section, errors)."""

from __future__ import annotations

import json

import pytest

from test_campaign_groups import NODE_AND_GPU_NODE
from test_cli import assert_ok, assert_user_error, run_cli
from test_pbs import TORQUE_LOG
from test_pbs import write as write_pbs
from test_sacct import EXPORT_2302
from test_sacct import write as write_sacct


def test_by_partition_and_user_on_a_sacct_export(tmp_path) -> None:
    """The six jobs of the 23.02 export on a 16-core node and a GPU node: batch holds 4001, 4003,
    the array tasks 4005_1/2 and the heterogeneous 4008 (merged, first component's
    partition), gpu holds 4002; every group's figures add up to the run's."""
    export = write_sacct(tmp_path, EXPORT_2302, "march.txt")
    platform = tmp_path / "n+g.toml"
    platform.write_text(NODE_AND_GPU_NODE)
    out = tmp_path / "o"
    proc = run_cli("simulate", export, "--platform", platform,
                   "--by", "partition", "--by", "user", "--out", out)
    assert_ok(proc)
    assert "by partition: the log's partition or queue names; node-hours" in proc.stdout
    assert "by user: the log's user names" in proc.stdout
    for needle in ("│ batch ", "│ gpu ", "│ alice ", "│ dave ", "share of node-hours per "
                   "account: "):
        assert needle in proc.stdout, needle
    summary = json.loads((out / "summary.json").read_text())
    section = summary["by_group"]
    assert list(section) == ["fairness", "hours_unit", "partition", "user"]  # sorted keys
    assert section["hours_unit"] == "node-hours"
    parts = section["partition"]["groups"]
    assert set(parts) == {"batch", "gpu"}
    assert (parts["batch"]["jobs"], parts["gpu"]["jobs"]) == (5, 1)
    users = section["user"]["groups"]
    assert {u: g["jobs"] for u, g in users.items()} == {"alice": 2, "bob": 1, "dave": 2,
                                                         "erin": 1}
    for groups in (parts, users):  # the groups partition the run's jobs
        assert sum(g["jobs"] for g in groups.values()) == summary["jobs"]
        assert sum(g["jobs"] * g["mean_wait"] for g in groups.values()) == pytest.approx(
            summary["jobs"] * summary["mean_wait"])
        assert sum(g["hours_share"] for g in groups.values()) == pytest.approx(1.0)
    fair = section["fairness"]
    assert fair["mean_wait"] == pytest.approx(summary["mean_wait"])
    assert fair["min_user_jobs"] == 5 and fair["max_wait_user"] is None  # 2 jobs at most
    assert set(fair["account_hours_share"]) == {"proj1", "proj2", "proj3"}
    # without --by the summary has no such section
    plain = tmp_path / "p"
    assert_ok(run_cli("simulate", export, "--platform", platform, "--out", plain))
    assert "by_group" not in json.loads((plain / "summary.json").read_text())


def test_by_account_and_qos_on_a_pbs_log(tmp_path) -> None:
    """PBS logs record accounts but no QOS: every job is in the (none) QOS group."""
    folder = tmp_path / "accounting"
    folder.mkdir()
    write_pbs(folder, TORQUE_LOG, "20240115")
    out = tmp_path / "o"
    proc = run_cli("simulate", folder, "--nodes", "2", "--cores-per-node", "8",
                   "--by", "qos,account", "--out", out)
    assert_ok(proc)
    section = json.loads((out / "summary.json").read_text())["by_group"]
    assert list(section["qos"]["groups"]) == ["(none)"]
    assert proc.stdout.index("by qos") < proc.stdout.index("by account")  # as given


def test_by_errors(tmp_path) -> None:
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 4\n"
                   "1 0 0 100 1 -1 -1 1 200 -1 1 3 -1 -1 -1 -1 -1 -1\n"
                   "2 5 0 100 1 -1 -1 1 200 -1 1 4 -1 -1 -1 -1 -1 -1\n")
    line = assert_user_error(run_cli("simulate", swf, "--by", "account"), "--by",
                             "the trace (swf) has no account column")
    assert "Traceback" not in line
    assert_user_error(run_cli("simulate", swf, "--by", "partition,users"), "--by",
                      "unknown group 'users' (did you mean 'user'?)")
    # SWF numbers as text, said in the table's title
    proc = run_cli("simulate", swf, "--by", "user,partition")
    assert_ok(proc)
    assert "by user: SWF field 12 (user numbers" in proc.stdout
    assert "│ 3 " in proc.stdout and "│ 4 " in proc.stdout
    assert "by partition: SWF field 15 (queue numbers" in proc.stdout
