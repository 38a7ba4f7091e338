"""Cluster logs replayed with their requests honoured (issue 30, items 1 and 2).

A hand-made ``sacct --parsable2`` export (``tests/data/cluster/jobs.sacct``: 23 jobs,
step lines, a heterogeneous job, typed GPUs, per-CPU / per-node / total memory, a
constraint, an exclusive allocation, a comma list of partitions) and a PBS Pro log with
select chunks (``tests/data/cluster/pbs/``) on a heterogeneous TOML platform
(``cluster.toml``: CPU, big-memory, A100 and V100 nodes; partitions cpu (default),
bigmem, gpu and debug) are replayed under ``easy`` and ``conservative``: every job runs
on nodes of its partition, GPU jobs on GPU nodes, typed GPU jobs on nodes of their type,
no node exceeds its cores, GPUs or memory at any instant, and the jobs the platform
cannot serve are rejected with their reasons and counted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform import NodeType, Partition, Platform
from dispatchlab.platform.files import platform_from_table, read_platform
from dispatchlab.run.build import build
from dispatchlab.run.config import Component, PlatformChoice, RunConfig, TraceSource
from dispatchlab.sim.engine import Simulation
from dispatchlab.workload.jobs import JobTable, TraceInfo
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.requests import fit_requests
from test_cli import assert_ok, assert_user_error, run_cli

DATA = Path(__file__).resolve().parent.parent / "data" / "cluster"
PLATFORM = DATA / "cluster.toml"


def check_capacity(platform: Platform, jobs: JobTable, result) -> None:
    """No node holds more of a public resource than it has, at any instant (the usage
    only rises at start times: checked at each of them), from the allocation log."""
    names = [r for r in platform.resource_names if not r.startswith("@")]
    cap = platform.capacity_matrix()[:, [platform.resource_names.index(r) for r in names]]
    use = []  # (start, end, usage matrix)
    for row, alloc in result.allocations.items():
        per_unit = np.array([int(jobs.resources[r][row]) if r in jobs.resources else 0
                             for r in names])
        m = np.zeros_like(cap)
        np.add.at(m, alloc.nodes, np.outer(alloc.counts, per_unit))
        assert int(alloc.counts.sum()) == int(jobs["units"][row])
        use.append((int(result.start[row]), int(result.end[row]), m))
    for t, _, _ in use:
        total = sum((m for s, e, m in use if s <= t < e), np.zeros_like(cap))
        over = np.argwhere(total > cap)
        assert not over.size, (f"t = {t}: node {over[0][0]} holds {total[tuple(over[0])]} "
                               f"{names[over[0][1]]} of {cap[tuple(over[0])]}")


def eligible_hosts(platform: Platform, jobs: JobTable, row: int, partitions) -> set[str]:
    """The hosts a job may use by its partition(s) (the default one when none)."""
    names = jobs.info.codes["queue"]
    code = int(jobs["queue"][row])
    wanted = names[code].split(",") if code >= 0 else [
        p.name for p in platform.partitions if p.default]
    hosts = platform.hosts()
    return {hosts[k] for p in partitions if p.name in wanted for k in p.nodes}


def replay(trace: Path, dispatcher: str, platform: Path = PLATFORM):
    config = RunConfig(trace=TraceSource(str(trace)),
                       platform=PlatformChoice(str(platform)),
                       dispatcher=Component(dispatcher))
    notes: list[tuple[str, str]] = []
    run = build(config, report=lambda kind, text: notes.append((kind, text)))
    return run, run.simulation.run(), notes


@pytest.mark.parametrize("platform_file", ["cluster.toml", "slurm.conf"])
@pytest.mark.parametrize("dispatcher", ["easy", "conservative"])
@pytest.mark.parametrize("trace", ["jobs.sacct", "pbs"])
def test_cluster_log_replay_honours_every_request(trace: str, dispatcher: str,
                                                  platform_file: str) -> None:
    # the same cluster as a platform TOML and as the slurm.conf a centre has
    run, result, notes = replay(DATA / trace, dispatcher, DATA / platform_file)
    jobs, plat = run.jobs, run.platform
    original = read_platform(DATA / platform_file)
    hosts = plat.hosts()
    features = dict(zip(hosts, plat.node_features(), strict=True))
    gpu_hosts = {h for h, row in zip(hosts, original.capacity_matrix()[
        :, original.resource_names.index("gpu")], strict=True) if row > 0}
    check_capacity(original, jobs, result)
    ran = 0
    for row, alloc in result.allocations.items():
        used = {hosts[k] for k in alloc.nodes.tolist()}
        assert used <= eligible_hosts(original, jobs, row, original.partitions), (
            jobs["job_ref"][row], used)
        if int(jobs["req_gpus"][row]) > 0:
            assert used <= gpu_hosts
        if "gpu_type" in jobs.columns and jobs["gpu_type"][row]:
            assert all(f"gpu:{jobs['gpu_type'][row]}" in features[h] for h in used)
        if "features" in jobs.columns and jobs["features"][row]:
            assert all(jobs["features"][row] in features[h] for h in used)
        ran += 1
    rejected = np.flatnonzero(result.status == 2)
    assert ran + len(rejected) == len(jobs)
    expected = {
        "jobs.sacct": {
            "1008": "asks 2.0 h of wall time; partition 'debug' allows 3,600 s (max_time)",
            "1012": "asks 307,200 MB of memory per node; the largest node of partition "
                    "'gpu' has 128,000",
            "1014": "asks 1 GPU per node; the largest node of partition 'cpu' has 0",
            "1017": "asks GPU type h100: no node of partition 'gpu' has it"},
        "pbs": {
            "5.pbs01": "asks 2.0 h of wall time; partition 'debug' allows 3,600 s "
                       "(max_time)",
            "7.pbs01": "asks 8 GPUs per node; the largest node of partition 'gpu' has 4",
            "8.pbs01": "asks 1 GPU per node; the largest node of partition 'cpu' has 0"},
    }[trace]
    assert {str(jobs["job_ref"][r]): result.reject_reason[int(r)] for r in rejected} == \
        expected
    warning = [t for k, t in notes if k == "warning" and "cannot be served" in t]
    assert len(warning) == 1 and warning[0].startswith(f"{len(expected)} jobs cannot")


@pytest.mark.parametrize("dispatcher", ["easy", "conservative"])
def test_slurm_conf_and_toml_give_the_same_schedule(dispatcher: str) -> None:
    """``slurm.conf`` describes ``cluster.toml``'s cluster (CPUs or sockets x cores,
    DEFAULT memory, typed GRES as features, partitions by host list): same hosts,
    capacities, features and partitions, so the same starts on the same nodes."""
    conf, toml = read_platform(DATA / "slurm.conf"), read_platform(PLATFORM)
    assert conf.hosts() == toml.hosts()
    assert conf.node_features() == toml.node_features()
    names = ["core", "gpu", "mem"]
    cols = [[p.resource_names.index(r) for r in names] for p in (conf, toml)]
    assert (conf.capacity_matrix()[:, cols[0]] == toml.capacity_matrix()[:, cols[1]]).all()
    assert [(p.name, p.nodes, p.default, p.max_time, p.max_nodes)
            for p in conf.partitions] == [(p.name, p.nodes, p.default, p.max_time,
                                           p.max_nodes) for p in toml.partitions]
    _, a, _ = replay(DATA / "jobs.sacct", dispatcher, DATA / "slurm.conf")
    _, b, _ = replay(DATA / "jobs.sacct", dispatcher, PLATFORM)
    assert a.start.tolist() == b.start.tolist()
    assert {k: v.nodes.tolist() for k, v in a.allocations.items()} == {
        k: v.nodes.tolist() for k, v in b.allocations.items()}


def test_exclusive_sacct_job_keeps_its_node(tmp_path) -> None:
    """Job 1013 asked 4 CPUs and was given all 32 CPUs of big01: while it runs, no other
    job shares its node."""
    run, result, _ = replay(DATA / "jobs.sacct", "easy")
    jobs = run.jobs
    row = int(np.flatnonzero(jobs["job_ref"] == "1013")[0])
    node = set(result.allocations[row].nodes.tolist())
    s, e = result.start[row], result.end[row]
    for other, alloc in result.allocations.items():
        if other != row and result.start[other] < e and result.end[other] > s:
            assert not node & set(alloc.nodes.tolist()), jobs["job_ref"][other]


def test_job_waits_for_its_partition_although_other_nodes_are_free(tmp_path) -> None:
    """Hand-computed schedule, FIFO on 2 CPU nodes (partition cpu, the default) and
    1 GPU node (partition gpu), 8 cores each:

    * t = 0: A (gpu, 8 CPUs, 1 GPU, runs 100 s) starts on the GPU node;
    * t = 10: B (gpu, 8 CPUs, 1 GPU, 50 s) waits for the GPU node (A ends at 100);
    * t = 20: C (cpu, 16 CPUs, 30 s): FIFO keeps it behind B, so it starts with B at
      t = 100, on the two CPU nodes, and ends at 130;
    * t = 30: D (gpu, 8 CPUs, **no GPU**, 10 s): from t = 130 both CPU nodes are free,
      but D may use only the GPU node, free again when B ends at t = 150.

    Expected starts: A 0, B 100, C 100, D 150. With ``ignore_partitions`` D starts at
    t = 130 on a CPU node."""
    header = ("JobID|JobIDRaw|User|Partition|Submit|Start|End|State|AllocCPUS|ReqCPUS|"
              "NNodes|ReqNodes|TimelimitRaw|ReqTRES")
    t = 1_700_000_000
    rows = [f"1|1|u|gpu|{t}|{t}|{t + 100}|COMPLETED|8|8|1|1|2|cpu=8,gres/gpu=1,node=1",
            f"2|2|u|gpu|{t + 10}|{t + 10}|{t + 60}|COMPLETED|8|8|1|1|1|cpu=8,gres/gpu=1,node=1",
            f"3|3|u|cpu|{t + 20}|{t + 20}|{t + 50}|COMPLETED|16|16|2|1|1|cpu=16,node=1",
            f"4|4|u|gpu|{t + 30}|{t + 30}|{t + 40}|COMPLETED|8|8|1|1|1|cpu=8,node=1"]
    path = tmp_path / "p.sacct"
    path.write_text(header + "\n" + "\n".join(rows) + "\n")
    plat = Platform((NodeType("cpu", 2, {"core": 8, "gpu": 0}),
                     NodeType("gpu", 1, {"core": 8, "gpu": 1})),
                    partitions=(Partition("cpu", (0, 1), default=True),
                                Partition("gpu", (2,))))
    fitted = fit_requests(load_trace(path), plat)
    result = Simulation(fitted.platform, fitted.jobs, make_dispatcher("fifo")).run()
    assert result.start.tolist() == [0, 100, 100, 150]
    assert {int(k) for k in result.allocations[3].nodes} == {2}
    free = fit_requests(load_trace(path), plat, ignore_partitions=True)
    again = Simulation(free.platform, free.jobs, make_dispatcher("fifo")).run()
    assert again.start.tolist() == [0, 100, 100, 130]


# ------------------------------------------------------------- property: capacity
@st.composite
def node_level_instance(draw: st.DrawFn) -> tuple[Platform, JobTable]:
    """2-3 node types with cores, GPUs and memory, 1-3 random partitions (one default),
    12-30 sacct-like jobs in random partitions with CPUs, nodes, GPUs and memory."""
    types = []
    for k in range(draw(st.integers(2, 3))):
        types.append(NodeType(f"t{k}", draw(st.integers(1, 3)),
                              {"core": draw(st.sampled_from([4, 8, 16])),
                               "gpu": draw(st.sampled_from([0, 0, 2, 4])),
                               "mem": draw(st.sampled_from([8000, 32000]))}))
    n_nodes = sum(t.count for t in types)
    parts = []
    for k in range(draw(st.integers(1, 3))):
        nodes = sorted(draw(st.sets(st.integers(0, n_nodes - 1), min_size=1)))
        parts.append(Partition(f"p{k}", tuple(nodes), default=k == 0,
                               exclusive=draw(st.booleans()) and k == 2))
    plat = Platform(tuple(types), partitions=tuple(parts))
    n = draw(st.integers(12, 30))
    submit = sorted(draw(st.lists(st.integers(0, 500), min_size=n, max_size=n)))
    run = draw(st.lists(st.integers(1, 400), min_size=n, max_size=n))
    cpus = draw(st.lists(st.integers(1, 24), min_size=n, max_size=n))
    jobs = JobTable.from_arrays(submit=submit, run=run, units=cpus,
                                info=TraceInfo(format="sacct",
                                               codes={"queue": [p.name for p in parts]}))
    jobs.columns["queue"] = np.array(draw(st.lists(st.integers(-1, len(parts) - 1),
                                                   min_size=n, max_size=n)), dtype=np.int64)
    jobs.columns["req_gpus"] = np.array(draw(st.lists(st.sampled_from([0, 0, 1, 2, 4]),
                                                      min_size=n, max_size=n)))
    jobs.columns["req_nodes"] = np.array(draw(st.lists(st.integers(1, 3), min_size=n,
                                                       max_size=n)))
    jobs.columns["req_mem_mb"] = np.array(draw(st.lists(st.sampled_from(
        [-1, 0, 1000, 6000, 20000]), min_size=n, max_size=n)))
    return plat, jobs


@settings(max_examples=30, deadline=None)
@given(node_level_instance(), st.sampled_from(["easy", "conservative", "fifo"]))
def test_capacity_per_node_and_resource_holds_with_partitions(instance, dispatcher) -> None:
    plat, jobs = instance
    fitted = fit_requests(jobs, plat)
    result = Simulation(fitted.platform, fitted.jobs, make_dispatcher(dispatcher)).run()
    check_capacity(plat, fitted.jobs, result)
    names = jobs.info.codes["queue"]
    for row, alloc in result.allocations.items():
        code = int(jobs["queue"][row])
        part = plat.partitions[code] if code >= 0 else plat.default_partition
        assert set(alloc.nodes.tolist()) <= set(part.nodes), names
    assert set(np.flatnonzero(result.status == 2).tolist()) <= set(
        np.flatnonzero(fitted.jobs["unservable"] != "").tolist()) | set(
        result.reject_reason)


# ------------------------------------------------------------------ platform files
@pytest.mark.parametrize(("partition", "field", "message"), [
    ({"name": "x", "nodes": "cn[01-09]"}, "partition[0].nodes", "host 'cn05' is no node"),
    ({"name": "x", "nodes": "cn[01"}, "partition[0].nodes", "not a Slurm host list"),
    ({"name": "x", "node_types": ["gpu"]}, "partition[0].node_types", "no node type 'gpu'"),
    ({"name": "x", "nodes": "cn01", "node_types": ["cpu"]}, "partition[0].nodes",
     "either nodes"),
    ({"name": "x", "nodes": "cn01", "max_time": -5}, "partition[0].max_time",
     "integer > 0"),
    ({"name": "x", "nodes": "cn01", "default": "yes"}, "partition[0].default",
     "true or false"),
    ({"name": "x", "nodes": "cn01", "maxtime": 5}, "partition[0]", "unknown keys"),
    ({"nodes": "cn01"}, "partition[0].name", "needs a name"),
])
def test_bad_partition_fields_name_file_and_field(partition, field, message) -> None:
    table = {"node_type": [{"name": "cpu", "count": 4, "hosts": "cn[01-04]",
                            "capacity": {"core": 8}}], "partition": [partition]}
    with pytest.raises(InputError, match=message) as err:
        platform_from_table(table, source="p.toml")
    assert err.value.file == "p.toml" and err.value.field == field


def test_bad_host_lists_and_features_of_node_types() -> None:
    base = {"name": "cpu", "count": 4, "capacity": {"core": 8}}
    for extra, field, message in [({"hosts": "cn[01-03]"}, "node_type[0].hosts", "3 hosts"),
                                  ({"hosts": 7}, "node_type[0].hosts", "host list"),
                                  ({"features": ["a b"]}, "node_type[0].features", "words"),
                                  ({"weight": -1}, "node_type[0].weight", "integer >= 0"),
                                  ({"weight": 1.5}, "node_type[0].weight", "integer >= 0")]:
        with pytest.raises(InputError, match=message) as err:
            platform_from_table({"node_type": [{**base, **extra}]}, source="p.toml")
        assert err.value.field == field
    two = {"node_type": [{**base, "hosts": "n[1-4]"}, {**base, "name": "b",
                                                      "hosts": "n[4-7]"}]}
    with pytest.raises(InputError, match="'n4' is given to two nodes") as err:
        platform_from_table(two, source="p.toml")
    assert err.value.file == "p.toml"


def test_partitions_read_from_toml() -> None:
    plat = read_platform(PLATFORM)
    weighted = platform_from_table({"node_type": [
        {"name": "a", "count": 1, "capacity": {"core": 8}, "weight": 7},
        {"name": "b", "count": 1, "capacity": {"core": 8}}]}, source="p.toml")
    assert weighted.node_weights().tolist() == [7, 1] and weighted.has_weights()
    assert [(p.name, p.nodes, p.default) for p in plat.partitions] == [
        ("cpu", (0, 1, 2, 3, 4, 5), True), ("bigmem", (4, 5), False),
        ("gpu", (6, 7, 8), False), ("debug", (3,), False)]
    assert plat.partition("debug").max_time == 3600
    assert plat.hosts()[6:] == ["ga01", "ga02", "gv01"]
    assert plat.node_features()[8] == frozenset({"gpu:v100"})


# ------------------------------------------------------------------------- the CLI
def test_unknown_partition_is_one_line_and_the_options_fix_it(tmp_path) -> None:
    toml = tmp_path / "p.toml"
    text = PLATFORM.read_text()
    toml.write_text(text[:text.index('[[partition]]\nname = "debug"')])
    trace = DATA / "jobs.sacct"
    assert_user_error(run_cli("simulate", trace, "--platform", toml),
                      "jobs.sacct", "no partition 'debug' (3 jobs)", "--partition-map")
    ok = run_cli("simulate", trace, "--platform", toml, "--partition-map", "debug=cpu")
    assert_ok(ok)
    assert "partitions mapped (--partition-map debug=cpu)" in ok.stdout
    ignored = run_cli("simulate", trace, "--platform", toml, "--ignore-partitions")
    assert_ok(ignored)
    assert "partitions ignored" in ignored.stdout
    assert_user_error(run_cli("simulate", trace, "--platform", toml, "--ignore-partitions",
                              "--partition-map", "debug=cpu"), "--ignore-partitions")


@pytest.mark.parametrize("command", [("compare", "--dispatcher", "easy", "--dispatcher", "fifo"),
                                     ("validate", "--dispatcher", "easy"),
                                     ("study", "predictions", "--dispatchers", "easy",
                                      "--predictors", "walltime")])
def test_commands_that_simulate_a_log_take_the_partition_options(tmp_path, command) -> None:
    # compare, validate and study fit the log once, as simulate does: the same one-line
    # error for a partition the platform lacks, the same two ways out
    toml = tmp_path / "p.toml"
    text = PLATFORM.read_text()
    toml.write_text(text[:text.index('[[partition]]\nname = "debug"')])
    trace = DATA / "jobs.sacct"
    assert_user_error(run_cli(*command, trace, "--platform", toml),
                      "jobs.sacct", "no partition 'debug' (3 jobs)", "--partition-map")
    for extra in (("--partition-map", "debug=cpu"), ("--ignore-partitions",)):
        assert_ok(run_cli(*command, trace, "--platform", toml, *extra))


def test_a_fitted_table_is_fitted_once() -> None:
    # the first fitting splits the platform and adds the @ resources; fitting its result
    # again (each run of a comparison is assembled from the fitted table) changes nothing
    jobs = load_trace(DATA / "jobs.sacct")
    first = fit_requests(jobs, read_platform(PLATFORM))
    again = fit_requests(first.jobs, first.platform)
    assert again.jobs is first.jobs and again.platform is first.platform
    assert not again.warnings and not again.notes
