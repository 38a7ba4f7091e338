"""Cluster logs through the whole product: detection by content, every command on them
(trace info, simulate, convert, platform infer), reader options on the command line."""

from __future__ import annotations

import json
import re

import pytest

from conftest import TRACES_DIR
from test_cli import assert_ok, assert_user_error, run_cli
from test_pbs import PRO_LOG, TORQUE_LOG, torque_end, write


def _pbs_folder(tmp_path):
    """Two daily Torque logs in a folder: 3 jobs in all."""
    folder = tmp_path / "accounting"
    folder.mkdir()
    write(folder, TORQUE_LOG, "20240115")
    write(folder, [torque_end("1002.torque01", 1705400000, 1705400100, 1705403700),
                   torque_end("1003.torque01", 1705400050, 1705400100, 1705401000)],
          "20240116")
    return folder


def test_pbs_log_and_folder_by_content(tmp_path) -> None:
    log = write(tmp_path, PRO_LOG, "pro.log")  # no telling name: the content decides
    proc = run_cli("trace", "info", log)
    assert_ok(proc)
    assert "│ format" in proc.stdout and "│ pbs" in proc.stdout
    assert "records of other types: 2" in proc.stdout  # the Q and S records
    assert "│ TimeZone" in proc.stdout
    folder = _pbs_folder(tmp_path)
    out = tmp_path / "o"
    assert_ok(run_cli("simulate", folder, "--nodes", "2", "--cores-per-node", "8",
                      "--out", out))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["total_jobs"] == 3
    parquet = tmp_path / "pbs.parquet"
    proc = run_cli("convert", folder, "--out", parquet)
    assert_ok(proc)
    assert "3 jobs of a pbs trace" in proc.stdout
    toml = tmp_path / "p.toml"
    proc = run_cli("platform", "infer", folder, "--out", toml)
    assert_ok(proc)
    assert "recorded placement" in proc.stdout


def test_reader_options_on_the_command_line(tmp_path) -> None:
    folder = _pbs_folder(tmp_path)
    assert_ok(run_cli("trace", "info", folder, "--submit-from", "eligible",
                      "--timezone", "Europe/Rome", "--format", "pbs"))
    assert_user_error(run_cli("trace", "info", folder, "--submit-from", "queued"),
                      "--submit-from")
    assert_user_error(run_cli("trace", "info", folder, "--running", "keep"), "--running",
                      "does not apply to pbs traces")
    assert_user_error(run_cli("trace", "info", folder, "--format", "swf"))


def test_sacct_export_through_every_command(tmp_path) -> None:
    """A Slurm export (no telling name) is found by content and runs through trace info,
    simulate (with --swf-out), compare and platform infer; a headerless export needs
    --columns; options another reader takes are refused."""
    from test_sacct import COLS_2302, EXPORT_2302
    from test_sacct import write as write_sacct

    export = write_sacct(tmp_path, EXPORT_2302, "march.txt")
    proc = run_cli("trace", "info", export)
    assert_ok(proc)
    assert "│ sacct" in proc.stdout and "job steps folded" in proc.stdout
    assert re.search(r"lines read\s*│ 21\s", proc.stdout)  # the records: jobs + skips
    sched = tmp_path / "easy.swf"
    out = tmp_path / "o"
    sim = run_cli("simulate", export, "--nodes", "8", "--cores-per-node", "16",
                  "--swf-out", sched, "--out", out)
    assert_ok(sim)
    # the records skipped by rule are told as trace info and trace convert tell them
    assert "skipped by rule: 10 (job steps folded), 1 (array placeholders" in sim.stdout
    assert json.loads((out / "summary.json").read_text())["jobs"] > 0
    assert_ok(run_cli("trace", "info", sched))
    assert_ok(run_cli("compare", export, "--nodes", "8", "--cores-per-node", "16",
                      "--dispatcher", "easy,fifo", "--workers", "1"))
    assert_ok(run_cli("platform", "infer", export, "--out", tmp_path / "p.toml"))
    headerless = write_sacct(tmp_path, EXPORT_2302[1:], "noheader.txt")
    assert_ok(run_cli("trace", "info", headerless, "--format", "sacct",
                      "--columns", COLS_2302.replace("|", ",")))
    assert_user_error(run_cli("trace", "info", export, "--extra-fields", "ignore",
                              "--running", "sometimes"), "--running")


ALEA = str(TRACES_DIR / "alea-wagap-2013.swf.gz")


def _alea():
    from pathlib import Path

    import pytest

    path = Path(__file__).resolve().parents[2] / ALEA
    if not path.exists():
        pytest.skip(f"{ALEA} not found: the shared traces folder is absent")
    return path


@pytest.mark.traces
def test_alea_runs_with_no_option_and_on_another_platform(tmp_path) -> None:
    """The machine file is the default platform; another platform drops the cluster
    and exclusivity requests with one warning; the written SWF counts processors, not
    Alea's chunks."""
    from dispatchlab.workload.swf import read_swf

    trace = _alea()
    proc = run_cli("simulate", trace, "--dispatcher", "fifo", "--jobs", "0:400",
                   "--swf-out", tmp_path / "s.swf")
    assert_ok(proc)
    assert proc.stderr == ""
    assert "20 x zewura" in proc.stdout and "48 x zegox" in proc.stdout  # the machine file
    written = read_swf(tmp_path / "s.swf")
    ran = written["run"] >= 0
    # field 5 (allocated processors) = field 8 (requested processors) of the trace
    assert (written["alloc_procs"][ran] == written["req_procs"][ran]).all()
    other = run_cli("simulate", trace, "--dispatcher", "fifo", "--jobs", "0:400",
                    "--nodes", "68", "--cores-per-node", "32")
    assert_ok(other)
    assert other.stderr.count("warning:") == 1 and "are dropped" in other.stderr


def test_bad_cluster_logs_are_one_error_line(tmp_path) -> None:
    """Through the CLI: a sacct export without a required column, an unparsable
    timestamp or time limit, a PBS end record without its end time, a machine file with
    a bad field: one `error: FILE:LINE: field ...` line, exit 2, no traceback; with
    --lenient the bad record is skipped and counted."""
    from test_pbs import torque_end
    from test_pbs import write as write_pbs
    from test_sacct import EXPORT_2302
    from test_sacct import write as write_sacct

    header, *rows = EXPORT_2302
    no_state = write_sacct(tmp_path, ["|".join(c for c in header.split("|")
                                                if c != "State")], "nostate.sacct")
    assert_user_error(run_cli("trace", "info", no_state, "--format", "sacct"),
                      str(no_state), "State")
    cols = header.split("|")
    bad = rows[0].split("|")
    bad[cols.index("Submit")] = "2024-13-45T99:00:00"
    bad_time = write_sacct(tmp_path, [header, "|".join(bad), *rows[1:]], "badtime.sacct")
    msg = assert_user_error(run_cli("trace", "info", bad_time), str(bad_time), ":2:",
                            "Submit")
    assert "Traceback" not in msg
    proc = run_cli("trace", "info", bad_time, "--lenient")
    assert_ok(proc)
    assert "malformed lines skipped │ 1" in proc.stdout
    limit = rows[0].split("|")
    limit[cols.index("Timelimit")] = "two hours"
    bad_limit = write_sacct(tmp_path, [header, "|".join(limit)], "badlimit.sacct")
    assert_user_error(run_cli("trace", "info", bad_limit), str(bad_limit), "Timelimit")
    end = torque_end("7.srv", 1705400000, 1705400100, 1705403700).replace(" end=1705403700", "")
    no_end = write_pbs(tmp_path, [end], "20240116")
    assert_user_error(run_cli("trace", "info", no_end), str(no_end), ":1:", "end")
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1 {7,7,7,7} q 1:ppn=4\n")
    (tmp_path / "t.swf.machines").write_text("0 a 2 eight 1 1000\n")
    assert_user_error(run_cli("simulate", trace), "t.swf.machines:1:", "cores")
