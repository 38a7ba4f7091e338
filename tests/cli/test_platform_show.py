"""``dispatchlab platform show`` and ``--platform slurm.conf`` end to end (a simulate
run, a campaign's platform file with its includes in the run's inputs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq

from campaign_helpers import write_campaign
from dispatchlab.experiment.campaign import load_campaign
from test_cli import assert_ok, assert_user_error, run_cli

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"


def test_show_prints_what_was_read() -> None:
    proc = run_cli("platform", "show", DATA / "slurm.conf")
    assert_ok(proc)
    out = proc.stdout
    assert out.startswith("tiny: 9 nodes, 80 core, 6 gpu, 224,000 mem; read from ")
    assert "(+1 included)" in out.splitlines()[0]
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines()
            if line.startswith("│")]
    assert ["cn[01-04]", "4", "cn[01-04]", "8", "0", "16,000", "10", "intel,ib"] in rows
    assert ["gpu[1-2]", "2", "gpu[1-2]", "8", "2", "32,000", "50", "gpu:a100"] in rows
    assert ["old[1-2]", "2", "old[1-2]", "8", "1", "16,000", "50", "gpu:v100"] in rows
    assert ["cpu", "5", "cn[01-04],big01", "yes", "1-00:00:00", "4", "-", "", "-",
            "-"] in rows
    assert ["gpu", "2", "gpu[1-2]", "", "12:00:00", "-", "-", "yes", "2", "-"] in rows
    assert ["debug", "9", "cn[01-04],big01,gpu[1-2],old[1-2]", "", "00:30:00", "2", "-",
            "", "-", "10"] in rows
    # the keys not modelled: one note line on stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "note: slurm.conf keys not modelled (listed once): SchedulerType=sched/backfill "
        "(line 4);")


def test_show_other_platforms() -> None:
    proc = run_cli("platform", "show", "marconi100")
    assert_ok(proc)
    assert proc.stdout.startswith("marconi100: 980 nodes, 31,360 core, 3,920 gpu (preset)")
    assert proc.stderr == ""


def test_show_errors_are_one_line(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=cn[1-4] CPUs=8\nPartitionName=p Nodes=cn[1-5]\n")
    assert_user_error(run_cli("platform", "show", conf),
                      f"{conf}:2: field Nodes: names nodes that no NodeName line defines: cn5")
    conf.write_text("NodeName=cn1 CPUs=8\nInclude nodes.conf\n")
    assert_user_error(run_cli("platform", "show", conf), ":2: field Include: included "
                      "file not found")
    assert_user_error(run_cli("platform", "show", tmp_path / "nope.conf"),
                      "platform file not found")


def test_simulate_on_a_slurm_conf(tmp_path: Path) -> None:
    # 8-, 16- and 4-core jobs (one-core units) on the example cluster: first-fit with
    # the node weights (cn01-04 weight 10 first, then big01 20, then the GPU nodes 50):
    # J1 fills cn01 (node 0), J2 cn02 and cn03 (nodes 1, 2), J3 half of cn04 (node 3)
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 80\n"
                     "1 0 0 100 8 -1 -1 8 200 -1 1 1 1 1 1 -1 -1 -1\n"
                     "2 5 0 50 16 -1 -1 16 100 -1 1 1 1 1 1 -1 -1 -1\n"
                     "3 6 0 50 4 -1 -1 4 100 -1 1 1 1 1 1 -1 -1 -1\n")
    conf = tmp_path / "etc" / "slurm.conf"
    shutil.copytree(DATA, conf.parent)
    proc = run_cli("simulate", trace, "--platform", conf, "--out", tmp_path / "out")
    assert_ok(proc)
    assert "t.swf on 4 x cn[01-04] (8 core, 16,000 mem); 1 x big01" in proc.stdout
    assert [ln for ln in proc.stderr.splitlines() if ln.startswith("note: slurm.conf")]
    table = pq.read_table(tmp_path / "out" / "jobs.parquet").to_pydict()
    assert table["start"] == [0, 5, 6]
    assert table["allocation"] == ["0:8", "1:8,2:8", "3:4"]


def test_a_campaign_platform_file_lists_the_included_files(tmp_path: Path) -> None:
    shutil.copytree(DATA, tmp_path / "slurm")
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxProcs: 80\n1 0 0 100 8 -1 -1 8 200 -1 1 1 1 1 1 -1 -1 -1\n")
    path = write_campaign(tmp_path, f"""
[[traces]]
path = "{trace}"
[[platforms]]
file = "slurm/slurm.conf"
[[dispatchers]]
name = "easy"
""")
    run = load_campaign(path).runs[0]
    assert set(run["inputs"]) == {str(trace.resolve()),
                                  str((tmp_path / "slurm" / "slurm.conf").resolve()),
                                  str((tmp_path / "slurm" / "conf.d" / "old.conf").resolve())}
