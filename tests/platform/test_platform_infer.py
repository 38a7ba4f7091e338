"""Platform inference from a trace's records (``dispatchlab platform infer``)."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.platform.files import read_platform_toml
from dispatchlab.platform.infer import infer_platform, peak_in_use
from dispatchlab.workload.jobs import JobTable, TraceInfo
from dispatchlab.workload.sacct import read_sacct
from test_cli import assert_ok, assert_user_error, run_cli


def _jobs(submit, wait, run, procs, info=None, **extra) -> JobTable:
    t = JobTable.from_arrays(submit=submit, run=run, units=procs, wait=wait,
                             alloc_procs=procs, info=info or TraceInfo(source="x.log"))
    for name, values in extra.items():
        t.columns[name] = np.asarray(values, dtype=object if name == "alloc_nodes" else
                                     np.int64)
    return t


def test_peak_in_use_ends_before_starts() -> None:
    # [0,10) 4 cores, [10,20) 4 cores: the second starts when the first ends -> peak 4;
    # [5,15) 2 more overlaps both -> peak 6
    assert peak_in_use(np.array([0, 10]), np.array([10, 20]), np.array([4, 4])) == 4
    assert peak_in_use(np.array([0, 10, 5]), np.array([10, 20, 15]),
                       np.array([4, 4, 2])) == 6
    assert peak_in_use(np.array([], dtype=np.int64), np.array([], dtype=np.int64),
                       np.array([], dtype=np.int64)) == 0


def test_from_recorded_placement() -> None:
    # n01 runs 8 cores on [0,100) and 8 more on [50,150): peak 16; n02 peaks at 8
    # (its two jobs do not overlap); n03 at 8 -> types cores8 x 2 and cores16 x 1
    jobs = _jobs(submit=[0, 50, 0, 200], wait=[0, 0, 0, 0], run=[100, 100, 100, 50],
                 procs=[16, 8, 8, 8],
                 alloc_nodes=["n01:8,n02:8", "n01:8", "n03:8", "n02:8"])
    p = infer_platform(jobs)
    assert p.node_types == [("cores8", 2, {"core": 8}), ("cores16", 1, {"core": 16})]
    assert "3 hosts" in p.evidence
    plat = p.platform()
    assert plat.n_nodes == 3 and plat.total_capacity() == {"core": 32}


def test_from_node_counts_and_header() -> None:
    # widest per-node use: 24 cores on 2 nodes -> 12 per node; at most 3 nodes at once
    jobs = _jobs(submit=[0, 0, 0], wait=[0, 0, 0], run=[10, 10, 10], procs=[24, 12, 3],
                 nodes_used=[2, 1, 1], info=TraceInfo(source="x", max_nodes=2))
    p = infer_platform(jobs)
    assert p.node_types == [("node", 4, {"core": 12})]
    header_only = _jobs(submit=[0], wait=[0], run=[1], procs=[1],
                        info=TraceInfo(source="y", max_nodes=10, max_procs=80))
    assert infer_platform(header_only).node_types == [("node", 10, {"core": 8})]
    with pytest.raises(InputError, match="nothing to infer a platform from"):
        infer_platform(_jobs(submit=[0], wait=[0], run=[1], procs=[1]))


def test_toml_round_trip(tmp_path) -> None:

    jobs = _jobs(submit=[0], wait=[0], run=[10], procs=[8], alloc_nodes=["a:8"])
    path = tmp_path / "p.toml"
    path.write_text(infer_platform(jobs).to_toml())
    assert read_platform_toml(path).total_capacity() == {"core": 8}


def test_cli_platform_infer(tmp_path) -> None:
    trace = tmp_path / "t.swf"
    trace.write_text("; MaxNodes: 4\n; MaxProcs: 32\n1 0 0 10 8 -1 -1 8 20 -1 1 1 1 1 1 -1 -1 -1\n")
    out = tmp_path / "p.toml"
    proc = run_cli("platform", "infer", trace, "--out", out)
    assert_ok(proc)
    assert "4 x node (8 core)" in proc.stdout or "4 x" in proc.stdout
    assert_ok(run_cli("simulate", trace, "--platform", out))
    bare = tmp_path / "bare.swf"
    bare.write_text("1 0 0 10 8 -1 -1 8 20 -1 1 1 1 1 1 -1 -1 -1\n")
    assert_user_error(run_cli("platform", "infer", bare, "--out", out), "nothing to infer")


# --- Slurm host lists (sacct NodeList) ------------------------------------------------

T0 = 1709280000
SACCT_COLS = ("JobID|JobIDRaw|User|Partition|Submit|Start|End|State|AllocCPUS|ReqCPUS|"
              "NNodes|ReqTRES|NodeList")


def _sacct_log(tmp_path, extra: tuple[str, ...] = ()):
    """20 hosts of 16 cores, 4 of them (gpu01-04) with 4 GPUs, seen only through host
    lists: cn[01-16] whole (256 CPUs), gpu[01-04] whole with 16 GPUs (4 a host), then
    smaller jobs on some of the same hosts."""

    def job(i, sub, start, end, cpus, nodes, node_list, gpus=0):
        tres = f"cpu={cpus},node={nodes}" + (f",gres/gpu={gpus}" if gpus else "")
        return (f"{i}|{i}|u1|batch|{T0 + sub}|{T0 + start}|{T0 + end}|COMPLETED|{cpus}|"
                f"{cpus}|{nodes}|{tres}|{node_list}")

    lines = [SACCT_COLS,
             job(1, 0, 10, 3610, 256, 16, "cn[01-16]"),
             job(2, 0, 20, 1820, 64, 4, "gpu[01-04]", gpus=16),
             job(3, 100, 4000, 5000, 32, 2, "cn[01,16]"),
             job(4, 200, 5000, 5100, 16, 1, "gpu03", gpus=2),
             job(5, 300, 5200, 5300, 48, 3, "cn[02-03],gpu01"),
             *extra]
    path = tmp_path / "jobs.sacct"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_sacct_host_lists_give_the_hosts(tmp_path) -> None:
    # before host lists were expanded: "20 x node (16 core) from node counts", no GPUs
    out = tmp_path / "p.toml"
    proc = run_cli("platform", "infer", _sacct_log(tmp_path), "--out", out)
    assert_ok(proc)
    assert "16 x cores16 (16 core); 4 x cores16-gpu4 (16 core, 4 gpu)" in proc.stdout
    assert "recorded placement of 20 hosts (4 with GPUs)" in proc.stdout
    assert "evenly assumed" in proc.stdout and proc.stderr == ""

    # hosts and a partition are written, and read back by the platform TOML reader
    table = tomllib.loads(out.read_text())
    assert [(t["count"], t["capacity"], t["hosts"]) for t in table["node_type"]] == [
        (16, {"core": 16}, "cn[01-16]"), (4, {"core": 16, "gpu": 4}, "gpu[01-04]")]
    assert table["partition"] == [{"name": "batch", "nodes": "cn[01-16],gpu[01-04]",
                                   "default": True}]
    back = read_platform_toml(out)
    assert back.hosts()[:2] == ["cn01", "cn02"] and back.hosts()[-1] == "gpu04"
    assert [(p.name, p.default, len(p.nodes)) for p in back.partitions] == [
        ("batch", True, 20)]


def test_a_host_list_that_cannot_be_used_is_said(tmp_path) -> None:
    # the reader checks the syntax; a range that runs backwards is found on expansion
    bad = (f"6|6|u1|batch|{T0 + 400}|{T0 + 5400}|{T0 + 5500}|COMPLETED|16|16|1|"
           "cpu=16,node=1|cn[05-01]")
    proc = run_cli("platform", "infer", _sacct_log(tmp_path, (bad,)),
                   "--out", tmp_path / "p.toml")
    assert_ok(proc)
    assert "16 x cores16 (16 core); 4 x cores16-gpu4" in proc.stdout
    assert proc.stderr.splitlines() == [
        "warning: the recorded placement (NodeList) of 1 job could not be used: left out "
        "of the inference (first at line 7: not a Slurm host list (the range 05-01 ends "
        "below its start): 'cn[05-01]')"]


def test_placements_of_both_kinds() -> None:
    # PBS host:cores parts keep their cores; a Slurm list spreads the CPUs evenly
    # (ceil(10 / 3) = 4 on each of n1-n3); n1 peaks at 8 + 4 = 12 (both jobs overlap)
    jobs = _jobs(submit=[0, 0], wait=[0, 0], run=[10, 10], procs=[8, 10],
                 alloc_nodes=["n1:8", "n[1-3]"])
    p = infer_platform(jobs)
    assert p.node_types == [("cores4", 2, {"core": 4}), ("cores12", 1, {"core": 12})]
    assert not p.warnings
    unusable = _jobs(submit=[0], wait=[0], run=[1], procs=[1], alloc_nodes=["n[2-1]"],
                     nodes_used=[1])
    p = infer_platform(unusable)
    assert p.node_types == [("node", 1, {"core": 1})]  # node counts instead, and said
    assert len(p.warnings) == 1 and "job 1: not a Slurm host list" in p.warnings[0]


def test_sacct_partitions_and_gpu_nodes_proposed(tmp_path) -> None:
    # cpu jobs ran on cn01-cn03, gpu jobs (GPUs in ReqTRES) on gpu1-gpu2, debug jobs on
    # cn03 and gpu2; a job submitted to "cpu,debug" counts for neither partition.
    # cpu has 3 jobs, the most: proposed as the default.
    def job(i, part, cpus, nodes, node_list, gpus=0):
        tres = f"cpu={cpus},node={nodes}" + (f",gres/gpu={gpus}" if gpus else "")
        return (f"{i}|{i}|u1|{part}|{T0}|{T0 + 10 * i}|{T0 + 10 * i + 5}|COMPLETED|{cpus}|"
                f"{cpus}|{nodes}|{tres}|{node_list}")

    lines = [SACCT_COLS,
             job(1, "cpu", 16, 2, "cn[01-02]"), job(2, "cpu", 8, 1, "cn03"),
             job(3, "cpu", 8, 1, "cn01"), job(4, "gpu", 16, 2, "gpu[1-2]", gpus=8),
             job(5, "debug", 8, 2, "cn03,gpu2"), job(6, "cpu,debug", 8, 1, "cn04")]
    log = tmp_path / "jobs.sacct"
    log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "p.toml"
    proc = run_cli("platform", "infer", log, "--out", out)
    assert_ok(proc)
    assert "'cpu', the one with the most jobs, is proposed as the default" in proc.stdout
    assert "1 job submitted to several partitions counted for none" in proc.stdout
    table = tomllib.loads(out.read_text())
    assert [(t["name"], t["hosts"]) for t in table["node_type"]] == [
        ("cores8", "cn[01-04]"), ("cores8-gpu4", "gpu[1-2]")]
    assert table["partition"] == [
        {"name": "cpu", "nodes": "cn[01-03]", "default": True},
        {"name": "gpu", "nodes": "gpu[1-2]", "default": False},
        {"name": "debug", "nodes": "cn03,gpu2", "default": False}]
    # the proposal as a platform: GPU nodes 4-5, partitions by node index
    proposal = infer_platform(read_sacct(log))
    plat = proposal.platform()
    assert plat.hosts() == ["cn01", "cn02", "cn03", "cn04", "gpu1", "gpu2"]
    assert [(p.name, p.nodes, p.default) for p in plat.partitions] == [
        ("cpu", (0, 1, 2), True), ("gpu", (4, 5), False), ("debug", (2, 5), False)]
