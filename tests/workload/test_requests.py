"""The request fitting (:mod:`dispatchlab.workload.requests`): one test per row of the
mapping table, eligibility (partitions, GPU types, constraints), rejections with their
reasons, partition options, and the guard against unfitted cluster-log tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform import NodeType, Partition, Platform
from dispatchlab.sim.engine import Simulation
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.requests import EXCLUSIVE, fit_requests, parse_partition_map
from dispatchlab.workload.sacct import read_sacct
from dispatchlab.workload.swf import read_swf

HEADER = ("JobID|JobIDRaw|User|Partition|Submit|Start|End|State|AllocCPUS|ReqCPUS|NNodes|"
          "ReqNodes|TimelimitRaw|ReqMem|ReqTRES|AllocTRES|NodeList|Constraints")


def row(jid: str, *, part: str = "cpu", cpus: int = 4, alloc: int | None = None,
        nodes: int = 1, req_nodes: int = 1, mem: str = "4000M", gpus: str = "",
        hosts: str = "cn01", constraint: str = "", limit: int = 60, start: int = 0,
        tres_mem: str | None = None) -> str:
    """One sacct job record (submit 1700000000 + start, run 100 s); the TRES memory is
    ``tres_mem`` (default: ``mem``)."""
    t = 1_700_000_000 + start
    tres = (f"cpu={cpus},mem={tres_mem or mem},node={req_nodes}"
            + (f",{gpus}" if gpus else ""))
    return (f"{jid}|{jid}|u|{part}|{t}|{t}|{t + 100}|COMPLETED|{alloc or cpus}|{cpus}|"
            f"{nodes}|{req_nodes}|{limit}|{mem}|{tres}|{tres}|{hosts}|{constraint}")


def export(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "jobs.sacct"
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    return path


def platform(partitions: tuple[Partition, ...] = (), **cpu_extra: int) -> Platform:
    """4 CPU nodes cn01-04 (16 cores, 64,000 MB), 2 GPU nodes g01-02 (16 cores, 4 GPUs
    of type a100, 128,000 MB)."""
    return Platform((
        NodeType("cpu", 4, {"core": 16, "gpu": 0, "mem": 64_000, **cpu_extra},
                 hosts=("cn01", "cn02", "cn03", "cn04")),
        NodeType("gpu", 2, {"core": 16, "gpu": 4, "mem": 128_000}, features=("gpu:a100",),
                 hosts=("g01", "g02")),
    ), partitions=partitions)


PARTS = (Partition("cpu", (0, 1, 2, 3), default=True),
         Partition("gpu", (4, 5), max_nodes=2),
         Partition("debug", (3,), max_time=3600, exclusive=False),
         Partition("whole", (2, 3), exclusive=True))


def fit(tmp_path: Path, *rows: str, plat: Platform | None = None,
        features: dict[int, str] | None = None, **options):
    """The fitting of an export of ``rows``; ``features``: job row -> a ``Constraints``
    text set after reading (``a|b`` cannot be written in a ``|``-separated export)."""
    jobs = read_sacct(export(tmp_path, *rows))
    for k, text in (features or {}).items():
        jobs.columns["features"][k] = text
    return fit_requests(jobs, plat or platform(PARTS), **options)


def request(fitted, k: int = 0) -> tuple[int, dict[str, int]]:
    """(units, the public per-unit request) of job row ``k``."""
    j = fitted.jobs
    return int(j["units"][k]), {r: int(v[k]) for r, v in j.resources.items()
                                if v[k] and not r.startswith("@")}


# ------------------------------------------------------------- the mapping table
def test_cpu_only_job_is_one_core_units_with_memory_per_core(tmp_path) -> None:
    # 6 CPUs, 10,000 MB in total: 6 units of 1 core and ceil(10000 / 6) = 1,667 MB
    f = fit(tmp_path, row("1", cpus=6, mem="10000M"))
    assert request(f) == (6, {"core": 1, "mem": 1667})


def test_gpu_job_is_node_shaped_units_rounded_up(tmp_path) -> None:
    # 2 nodes, 6 CPUs, 3 GPUs, 9 GB: 2 units of ceil(6/2) = 3 cores, ceil(3/2) = 2 GPUs,
    # ceil(9216/2) = 4,608 MB
    f = fit(tmp_path, row("1", part="gpu", cpus=6, nodes=2, req_nodes=2, mem="9G",
                          gpus="gres/gpu=3", hosts="g[01-02]"))
    assert request(f) == (2, {"core": 3, "gpu": 2, "mem": 4608})


def test_node_count_job_is_node_shaped(tmp_path) -> None:
    # CPU only but asked for 2 nodes: 2 units of 8 cores and 4,000 MB
    f = fit(tmp_path, row("1", cpus=16, nodes=2, req_nodes=2, mem="8000M",
                          hosts="cn[01-02]"))
    assert request(f) == (2, {"core": 8, "mem": 4000})


def test_exclusive_job_by_its_allocation_holds_whole_nodes(tmp_path) -> None:
    # asked 4 CPUs, was given the 16 CPUs of cn01 (all of them): exclusive, one unit
    # asking all of the @excl share (16, the largest core count)
    f = fit(tmp_path, row("1", cpus=4, alloc=16, hosts="cn01"),
            row("2", cpus=4, alloc=8, hosts="cn02"))
    assert request(f, 0) == (1, {"core": 4, "mem": 4000})
    assert int(f.jobs.resources[EXCLUSIVE][0]) == 16
    assert int(f.jobs.resources[EXCLUSIVE][1]) == 1  # 8 of 16 CPUs: not exclusive
    assert request(f, 1) == (4, {"core": 1, "mem": 1000})


def test_exclusive_partition_and_whole_node_memory_are_exclusive(tmp_path) -> None:
    f = fit(tmp_path, row("1", part="whole", cpus=4), row("2", cpus=2, mem="0"))
    assert f.jobs.resources[EXCLUSIVE].tolist() == [16, 16]
    assert request(f, 1) == (1, {"core": 2})  # mem 0: the node's memory, by exclusivity


def test_exclusive_unit_runs_alone_on_its_node(tmp_path) -> None:
    # partition 'whole' (cn03, cn04) is exclusive: jobs 1 and 2 (2 CPUs each, run
    # 100 s) take one node each; job 3 (2 CPUs, t = 2) would fit beside either in cores
    # but waits for a whole node: it starts at t = 100 when job 1 ends
    f = fit(tmp_path, row("1", part="whole", cpus=2),
            row("2", part="whole", cpus=2, start=1), row("3", part="whole", cpus=2, start=2))
    result = Simulation(f.platform, f.jobs, make_dispatcher("fifo")).run()
    node_of = {k: set(result.allocations[k].nodes.tolist()) for k in range(3)}
    assert not node_of[0] & node_of[1]
    assert result.start.tolist() == [0, 1, 100]


def test_heterogeneous_job_is_fitted_as_one(tmp_path) -> None:
    path = export(tmp_path,
                  row("5+0", part="gpu", cpus=4, gpus="gres/gpu=1", hosts="g01").replace(
                      "5+0|5+0", "5+0|5"),
                  row("5+1", part="gpu", cpus=4, hosts="g01").replace("5+1|5+1", "5+1|6"))
    f = fit_requests(read_sacct(path), platform(PARTS))
    assert len(f.jobs) == 1
    # 8 CPUs, 1 GPU, 8,000 MB and 2 nodes summed: 2 node-shaped units of 4 cores,
    # ceil(1/2) = 1 GPU and 4,000 MB
    assert request(f) == (2, {"core": 4, "gpu": 1, "mem": 4000})
    assert any("heterogeneous" in n for n in f.notes)


def test_swf_memory_per_processor_becomes_mb_per_core(tmp_path) -> None:
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 64\n"
                   "1 0 0 100 4 -1 -1 4 200 3000 1 1 1 1 1 -1 -1 -1\n"
                   "2 1 0 100 2 -1 -1 2 200 -1 1 1 1 1 1 -1 -1 -1\n"
                   "3 2 0 100 1 -1 -1 1 200 199999999 1 1 1 1 1 -1 -1 -1\n")
    jobs = read_swf(swf)
    f = fit_requests(jobs, platform())
    # 3,000 KB -> ceil(3000/1024) = 3 MB per core; -1 -> none; 195,313 MB > 128,000
    assert f.jobs.resources["mem"].tolist() == [3, 0, 195313]
    assert f.jobs["unservable"][2].startswith("asks 195,313 MB of memory per core")
    assert f.rejected == 1
    pooled = fit_requests(jobs, Platform.pooled(64))
    assert pooled.jobs is jobs  # the default pooled platform: nothing changes


# ------------------------------------------------------------------ eligibility
def test_partitions_gpu_types_and_constraints_restrict_nodes(tmp_path) -> None:
    plat = Platform((
        NodeType("cpu", 2, {"core": 8}, features=("avx",), hosts=("a1", "a2")),
        NodeType("cpu2", 2, {"core": 8}, features=("avx", "ib"), hosts=("b1", "b2")),
        NodeType("gpu", 2, {"core": 8, "gpu": 2}, features=("gpu:v100", "ib"),
                 hosts=("g1", "g2")),
    ), partitions=(Partition("all", tuple(range(6)), default=True),
                   Partition("gpu", (4, 5)), Partition("low", (0, 1))))
    f = fit(tmp_path, row("1", part="low", cpus=1), row("2", part="all", cpus=1,
                                                        constraint="avx&ib"),
            row("3", part="all", cpus=1, constraint="ib_or_avx"),
            row("4", part="all", cpus=1, gpus="gres/gpu:v100=1"),
            row("5", part="gpu,low", cpus=1), row("6", part="", cpus=1), plat=plat,
            features={2: "ib|avx"})
    elig = {}  # the nodes that can hold a unit of the job (all its requests)
    cap = f.platform.capacity_matrix()
    for k in range(6):
        req = np.array([int(f.jobs.resources[r][k]) if r in f.jobs.resources else 0
                        for r in f.platform.resource_names])
        elig[k] = [f.platform.hosts()[i] for i in np.flatnonzero((cap >= req).all(axis=1))]
    assert elig == {0: ["a1", "a2"], 1: ["b1", "b2"], 2: ["a1", "a2", "b1", "b2", "g1", "g2"],
                    3: ["g1", "g2"], 4: ["a1", "a2", "g1", "g2"],
                    5: ["a1", "a2", "b1", "b2", "g1", "g2"]}
    assert not f.rejected
    # a restriction the requests already imply takes no resource: job 4's GPUs keep it
    # on the GPU nodes, which are all of type v100
    assert not any(v[3] for r, v in f.jobs.resources.items() if r.startswith("@nodes"))
    # the split keeps node order and host names
    assert f.platform.hosts() == plat.hosts()
    assert f.platform.describe() == plat.describe()


def test_unsupported_constraint_is_an_error_naming_the_line(tmp_path) -> None:
    with pytest.raises(InputError, match=r"jobs\.sacct:3: field Constraints: .*'\[a&b\]'"):
        fit(tmp_path, row("1"), row("2", constraint="[a&b]"))
    with pytest.raises(InputError, match=r"jobs\.sacct:2: .*mixes & and \|"):
        fit(tmp_path, row("1"), features={0: "a&b|c"})


# ------------------------------------------------------------------- rejections
def test_requests_the_platform_cannot_serve_are_rejected_with_reasons(tmp_path) -> None:
    f = fit(tmp_path,
            row("1", part="gpu", cpus=4, mem="300G", gpus="gres/gpu=1", hosts="g01"),
            row("2", part="debug", cpus=1, limit=120),
            row("3", part="gpu", cpus=4, gpus="gres/gpu:h100=1", hosts="g01"),
            row("4", part="cpu", cpus=4, gpus="gres/gpu=1"),
            row("5", part="gpu", cpus=12, nodes=3, req_nodes=3, gpus="gres/gpu=3",
                hosts="g[01-02]"),
            row("6", part="cpu", cpus=2))
    reasons = f.jobs["unservable"].tolist()
    assert reasons == [
        "asks 307,200 MB of memory per node; the largest node of partition 'gpu' has "
        "128,000",
        "asks 2.0 h of wall time; partition 'debug' allows 3,600 s (max_time)",
        "asks GPU type h100: no node of partition 'gpu' has it",
        "asks 1 GPU per node; the largest node of partition 'cpu' has 0",
        "asks 3 nodes; partition 'gpu' allows 2 (max_nodes)",
        ""]
    assert f.rejected == 5
    assert sum("rejected" in w for w in f.warnings) == 1
    result = Simulation(f.platform, f.jobs, make_dispatcher("easy")).run()
    assert (result.status == 2).sum() == 5  # rejected, counted by the engine
    assert result.reject_reason[1] == reasons[1]


def test_gpus_on_a_platform_without_gpus_are_rejected_with_one_warning(tmp_path) -> None:
    plat = Platform.homogeneous(4, 16, mem=64_000)
    f = fit(tmp_path, row("1", part="", gpus="gres/gpu=2"), row("2", part="",
                                                                gpus="gres/gpu=1"),
            row("3", part=""), plat=plat)
    assert f.jobs["unservable"].tolist()[:2] == ["asks 2 GPUs; the platform has none",
                                                  "asks 1 GPU; the platform has none"]
    assert [w for w in f.warnings if "no gpu" in w] == [
        "the platform has no gpu resource: 2 jobs asking for GPUs are rejected"]


def test_memory_on_a_platform_without_memory_is_one_warning(tmp_path) -> None:
    f = fit(tmp_path, row("1", part=""), row("2", part=""),
            plat=Platform.homogeneous(4, 16))
    assert f.warnings == ["the platform has no mem resource: the memory requests of 2 "
                          "jobs are not simulated"]
    assert "mem" not in f.jobs.resources and not f.rejected


# ------------------------------------------------------------------- partitions
def test_unknown_partition_names_them_and_their_jobs(tmp_path) -> None:
    rows = (row("1", part="gpux"), row("2", part="gpux"), row("3", part="cpu,old"))
    with pytest.raises(InputError, match=r"no partition 'gpux' \(2 jobs\), 'old' \(1 job\)"
                       r".*--partition-map OLD=NEW or give --ignore-partitions"):
        fit(tmp_path, *rows)
    mapped = fit(tmp_path, *rows, partition_map="gpux=gpu,old=cpu")
    assert mapped.jobs.info.header["Partitions"] == "mapped (--partition-map gpux=gpu,old=cpu)"
    ignored = fit(tmp_path, *rows, ignore_partitions=True)
    assert not any(r.startswith("@nodes") for r in ignored.jobs.resources)
    assert ignored.jobs.info.header["Partitions"] == "ignored (--ignore-partitions)"


def test_partition_map_syntax() -> None:
    assert parse_partition_map("a=b, c=d") == {"a": "b", "c": "d"}
    for bad in ("a", "a=", "=b", "a=b=c"):
        with pytest.raises(InputError, match="--partition-map"):
            parse_partition_map(bad)


def test_platform_without_partitions_simulates_none(tmp_path) -> None:
    f = fit(tmp_path, row("1", part="anything"), plat=platform())
    assert any("declares no partitions" in n for n in f.notes)
    assert not any(r.startswith("@") for r in f.jobs.resources)


# ------------------------------------------------------------------ library use
def test_simulation_refuses_an_unfitted_cluster_log(tmp_path) -> None:
    jobs = read_sacct(export(tmp_path, row("1", part="gpu", gpus="gres/gpu=1")))
    with pytest.raises(InputError, match="not fitted to this node-level platform"):
        Simulation(platform(PARTS), jobs, make_dispatcher("easy"))


def test_internal_resources_are_not_shown(tmp_path) -> None:
    from dispatchlab.run.outputs import run_summary

    f = fit(tmp_path, row("1", part="gpu", gpus="gres/gpu=1", hosts="g01"),
            row("2", part="whole", cpus=1))
    assert any(r.startswith("@") for r in f.jobs.resources)
    result = Simulation(f.platform, f.jobs, make_dispatcher("easy")).run()
    summary = run_summary(result)
    assert "@" not in str(summary)
    assert not any("@" in c for c in result.to_arrow().column_names)


def test_load_trace_keeps_what_the_log_says(tmp_path) -> None:
    jobs = load_trace(export(tmp_path, row("1", part="gpu", cpus=8, alloc=8, nodes=2,
                                           req_nodes=2, mem="2Gn", tres_mem="4G",
                                           gpus="gres/gpu=2,gres/gpu:a100=2",
                                           hosts="g[01-02]", constraint="ib")))
    assert jobs["req_nodes"].tolist() == [2]
    assert jobs["req_mem_mb"].tolist() == [4096]  # 2 GB per node x 2 nodes
    assert jobs["alloc_gpus"].tolist() == [2]
    assert jobs["alloc_mem_mb"].tolist() == [4096]
    assert jobs["gpu_type"].tolist() == ["a100"]
    assert jobs["features"].tolist() == ["ib"]
    assert jobs["exclusive"].tolist() == [-1]


def test_pbs_select_chunks_nodes_and_place_excl(tmp_path) -> None:
    from dispatchlab.workload.pbs import read_pbs

    def end(jid: int, queue: str, spec: str) -> str:
        return (f"01/15/2024 12:00:00;E;{jid}.s;user=u queue={queue} ctime=1705312800 "
                f"start=1705312800 exec_host=cn01/0 {spec} Resource_List.walltime=00:30:00 "
                "end=1705312900 Exit_status=0")

    log = tmp_path / "20240115"
    log.write_text("\n".join([
        end(1, "gpu", "Resource_List.select=2:ncpus=4:ngpus=2:mem=8gb"),
        end(2, "cpu", "Resource_List.select=1:ncpus=2:mem=2gb Resource_List.place=scatter:excl"),
        end(3, "cpu", "Resource_List.nodes=2:ppn=8#excl"),
        end(4, "cpu", "Resource_List.select=1:ncpus=6:mem=3gb"),
    ]) + "\n")
    jobs = read_pbs(log)
    assert jobs["req_nodes"].tolist() == [2, 1, 2, 1]
    assert jobs["req_mem_mb"].tolist() == [16384, 2048, -1, 3072]
    assert jobs["exclusive"].tolist() == [0, 1, 1, 0]
    f = fit_requests(jobs, platform(PARTS))
    # 2 chunks of 4 CPUs, 2 GPUs, 8 GB each; exclusive 1 x 2 CPUs; 2 whole nodes of 8;
    # 6 one-core units of 512 MB
    assert [request(f, k) for k in range(4)] == [
        (2, {"core": 4, "gpu": 2, "mem": 8192}), (1, {"core": 2, "mem": 2048}),
        (2, {"core": 8}), (6, {"core": 1, "mem": 512})]
    assert f.jobs.resources[EXCLUSIVE].tolist() == [1, 16, 16, 1]
