"""The cluster read from ``slurm.conf`` (platform/slurmconf.py): real-world forms of
every line kind, includes, errors naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.platform.files import load_platform_file, read_platform
from dispatchlab.platform.slurmconf import (
    looks_like_slurm_conf,
    parse_slurm_conf,
    read_slurm_conf,
    slurm_minutes,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "slurm"


def _types(text: str) -> list[tuple[str, int, dict[str, int], int, tuple[str, ...]]]:
    p = parse_slurm_conf(text).platform
    return [(nt.name, nt.count, nt.capacity, nt.weight, nt.features) for nt in p.node_types]


# (slurm.conf text, expected node types: (name, count, capacity, weight, features))
NODE_FORMS = [
    # CPUs counts as cores; no RealMemory anywhere: no mem resource
    ("NodeName=cn[01-04] CPUs=64", [("cn[01-04]", 4, {"core": 64}, 1, ())]),
    # the old name Procs
    ("NodeName=n1 Procs=8", [("n1", 1, {"core": 8}, 1, ())]),
    # sockets x cores x threads: the CPUs Slurm schedules (threads included)
    ("NodeName=n[1-2] Sockets=2 CoresPerSocket=16 ThreadsPerCore=2 RealMemory=191000",
     [("n[1-2]", 2, {"core": 64, "mem": 191000}, 1, ())]),
    # boards x sockets per board x cores
    ("NodeName=b1 Boards=2 SocketsPerBoard=2 CoresPerSocket=4",
     [("b1", 1, {"core": 16}, 1, ())]),
    # CPUs wins over the topology when both are given (Slurm schedules CPUs)
    ("NodeName=t1 CPUs=32 Sockets=2 CoresPerSocket=16 ThreadsPerCore=2",
     [("t1", 1, {"core": 32}, 1, ())]),
    # nothing given: Slurm's defaults (1 CPU)
    ("NodeName=tiny", [("tiny", 1, {"core": 1}, 1, ())]),
    # GPUs: untyped, typed (a feature), several types, socket binding, no count
    ("NodeName=g1 CPUs=32 Gres=gpu:4", [("g1", 1, {"core": 32, "gpu": 4}, 1, ())]),
    ("NodeName=g2 CPUs=32 Gres=gpu:a100:4 Feature=ib",
     [("g2", 1, {"core": 32, "gpu": 4}, 1, ("ib", "gpu:a100"))]),
    ("NodeName=g3 CPUs=32 Gres=gpu:a100:2,gpu:v100:2(S:0-1)",
     [("g3", 1, {"core": 32, "gpu": 4}, 1, ("gpu:a100", "gpu:v100"))]),
    ("NodeName=g4 CPUs=8 Gres=gpu", [("g4", 1, {"core": 8, "gpu": 1}, 1, ())]),
    ("NodeName=g5 CPUs=8 Gres=gpu:tesla:2(S:0),mps:200",
     [("g5", 1, {"core": 8, "gpu": 2}, 1, ("gpu:tesla",))]),
    # Weight and Features (both spellings), quoted values
    ('NodeName=w1 CPUs=4 Weight=100 Features="bigmem,skylake"',
     [("w1", 1, {"core": 4}, 100, ("bigmem", "skylake"))]),
    # DEFAULT lines accumulate and apply to the lines after them only
    ("NodeName=DEFAULT CPUs=16 RealMemory=1000\nNodeName=a1\n"
     "NodeName=DEFAULT Weight=5\nNodeName=a2 RealMemory=2000",
     [("a1", 1, {"core": 16, "mem": 1000}, 1, ()),
      ("a2", 1, {"core": 16, "mem": 2000}, 5, ())]),
    # keys and words in any case; several host groups; NodeAddr/NodeHostname ignored
    ("nodename=r[1-2]n[01-02],login1 cpus=2 NODEADDR=10.0.0.[1-5] nodehostname=x",
     [("r[1-2]n[01-02],login1", 5, {"core": 2}, 1, ())]),
    # continuation lines and comments (an escaped \# is a character)
    ("NodeName=c1 \\\n  CPUs=12 \\\n  RealMemory=500 # a comment\n# NodeName=c2 CPUs=1",
     [("c1", 1, {"core": 12, "mem": 500}, 1, ())]),
]


@pytest.mark.parametrize("text, expected", NODE_FORMS, ids=[t[:40] for t, _ in NODE_FORMS])
def test_node_forms(text: str, expected: list) -> None:
    assert _types(text) == expected


def test_hosts_in_the_order_written_and_resource_order() -> None:
    p = parse_slurm_conf("NodeName=cn[3,1-2] CPUs=4 RealMemory=10\n"
                         "NodeName=gpu1 CPUs=4 RealMemory=10 Gres=gpu:2").platform
    assert p.hosts() == ["cn3", "cn1", "cn2", "gpu1"]
    assert p.resource_names == ("core", "gpu", "mem")
    assert not p.is_pooled


def test_partition_forms() -> None:
    text = """
NodeName=cn[01-04] CPUs=8
NodeName=gpu[1-2] CPUs=8 Gres=gpu:a100:2 Feature=nvlink
NodeSet=gpus Feature=nvlink
NodeSet=half Nodes=cn[01-02]
PartitionName=DEFAULT MaxTime=60 State=UP
PartitionName=cpu Nodes=cn[01-04] Default=YES MaxNodes=UNLIMITED MinNodes=0
PartitionName=gpu Nodes=gpus OverSubscribe=EXCLUSIVE MaxTime=2-12 PriorityTier=10
PartitionName=debug Nodes=ALL MaxTime=0:30:00 MaxNodes=2 MinNodes=1 PriorityJobFactor=5
PartitionName=old Nodes=half,gpu1 Shared=EXCLUSIVE MaxTime=INFINITE Priority=3
partitionname=long nodes=cn04 maxtime=7-00:00:00 default=no
"""
    parts = {p.name: p for p in parse_slurm_conf(text).platform.partitions}
    assert list(parts) == ["cpu", "gpu", "debug", "old", "long"]
    cpu, gpu, debug, old, long = parts.values()
    assert cpu.nodes == (0, 1, 2, 3) and cpu.default and cpu.max_time == 3600
    assert cpu.max_nodes is None and cpu.min_nodes is None and not cpu.exclusive
    assert gpu.nodes == (4, 5) and gpu.exclusive and gpu.max_time == 2 * 86400 + 12 * 3600
    assert gpu.priority_tier == 10 and gpu.priority_job_factor is None
    assert debug.nodes == tuple(range(6)) and debug.max_time == 1800
    assert (debug.max_nodes, debug.min_nodes, debug.priority_job_factor) == (2, 1, 5)
    assert old.nodes == (0, 1, 4) and old.exclusive and old.max_time is None
    assert (old.priority_tier, old.priority_job_factor) == (3, 3)
    assert long.nodes == (3,) and long.max_time == 7 * 86400 and not long.default


@pytest.mark.parametrize("text, seconds", [
    ("30", 1800), ("30:15", 1815), ("2:00:05", 7205), ("1-0", 86400),
    ("1-02:03", 93780), ("1-02:03:04", 93784), ("UNLIMITED", None), ("infinite", None)])
def test_slurm_time_forms(text: str, seconds: int | None) -> None:
    assert slurm_minutes(text) == seconds


def test_the_shipped_example_with_an_include(tmp_path: Path) -> None:
    conf = read_slurm_conf(DATA / "slurm.conf")
    p = conf.platform
    assert p.name == "tiny"  # ClusterName
    assert [nt.name for nt in p.node_types] == ["cn[01-04]", "big01", "gpu[1-2]", "old[1-2]"]
    assert p.node_types[3].hosts == ("old1", "old2")  # from conf.d/old.conf
    assert p.node_types[0].capacity == {"core": 8, "mem": 16000}  # DEFAULT topology
    assert p.node_types[1].features == ("intel", "bigmem")  # a continued line
    assert [x.name for x in p.partitions] == ["cpu", "gpu", "debug"]
    assert conf.files == (DATA / "slurm.conf", DATA / "conf.d" / "old.conf")
    assert conf.gres_types == ("gpu",)
    line = conf.note_line()
    assert line.startswith("slurm.conf keys not modelled (listed once): ")
    for part in ("SchedulerType=sched/backfill (line 4)", "PriorityType=priority/multifactor",
                 "State=DRAIN nodes", "old.conf:2", "DefMemPerCPU on partitions (line 21)"):
        assert part in line
    assert line.count("SchedulerType") == 1
    # the same through the platform-file readers (kind told by the name)
    platform, files = load_platform_file(DATA / "slurm.conf")
    assert platform == p and files == conf.files
    assert read_platform(str(DATA / "slurm.conf")) == p


def test_nested_and_glob_includes_in_name_order(tmp_path: Path) -> None:
    (tmp_path / "nodes").mkdir()
    (tmp_path / "nodes" / "b.conf").write_text("NodeName=b1 CPUs=2\n")
    (tmp_path / "nodes" / "a.conf").write_text("NodeName=a1 CPUs=1\nInclude ../more.inc\n")
    (tmp_path / "more.inc").write_text("NodeName=m1 CPUs=3\n")
    main = tmp_path / "cluster.txt"
    main.write_text("include nodes/*.conf\nPartitionName=all Nodes=ALL Default=YES\n")
    conf = read_slurm_conf(main)
    assert conf.platform.hosts() == ["a1", "m1", "b1"]
    assert [f.name for f in conf.files] == ["cluster.txt", "a.conf", "more.inc", "b.conf"]
    # told from its content: a NodeName= line
    assert read_platform(main).hosts() == ["a1", "m1", "b1"]
    # %c: the cluster name read before the Include
    (tmp_path / "nodes-alpha.conf").write_text("NodeName=x1 CPUs=4\n")
    main.write_text("ClusterName=alpha\nInclude nodes-%c.conf\n")
    assert read_slurm_conf(main).platform.hosts() == ["x1"]
    main.write_text("Include nodes-%c.conf\nClusterName=alpha\n")
    with pytest.raises(InputError, match="before any ClusterName line"):
        read_slurm_conf(main)


def test_looks_like_slurm_conf() -> None:
    assert looks_like_slurm_conf("/etc/slurm/slurm.conf")
    assert looks_like_slurm_conf("cluster.conf")
    assert looks_like_slurm_conf("a.tar.gz#etc/slurm.conf")
    assert not looks_like_slurm_conf("p.toml", "NodeName=x")
    assert not looks_like_slurm_conf("nodes_#64", "NodeName=x")
    assert looks_like_slurm_conf("cluster", "# c\n  nodename = x CPUs=1\n")
    assert not looks_like_slurm_conf("cluster", 'name = "x"\n')
    assert looks_like_slurm_conf("cluster", "Include /etc/slurm/nodes.conf\n")
    assert not looks_like_slurm_conf("cluster", 'include = "x"\n')  # a TOML key


def test_a_partition_without_nodes_is_left_out_with_a_note() -> None:
    conf = parse_slurm_conf("NodeName=a CPUs=2\nPartitionName=empty\n"
                            "PartitionName=p Nodes=a AllowGroups=hpc\n")
    assert [p.name for p in conf.platform.partitions] == ["p"]
    assert conf.notes == ("partition empty without nodes (left out) (line 2)",
                          "AllowGroups on partitions (line 3)")


def test_no_real_memory_on_one_line_takes_slurms_default_with_a_note() -> None:
    conf = parse_slurm_conf("NodeName=a CPUs=2 RealMemory=100\nNodeName=b CPUs=2")
    assert conf.platform.node_types[1].capacity == {"core": 2, "mem": 1}
    assert "no RealMemory (Slurm's default 1 MB taken) (line 2)" in conf.notes


def test_not_modelled_keys_are_listed_once_with_their_lines() -> None:
    text = ("SchedulerType=sched/backfill\nDefMemPerCPU=2000\n"
            "NodeName=a[1-2] CPUs=2 State=DOWN CoreSpecCount=1\n"
            "NodeName=b[1-2] CPUs=2 State=DOWN Gres=gpu:1,mps:100\n"
            "DownNodes=a1 State=DOWN\n"
            "PartitionName=p Nodes=ALL OverSubscribe=FORCE:4 QOS=normal State=DRAIN\n"
            "PartitionName=q Nodes=ALL DefaultTime=10 QOS=high\n"
            "SlurmctldHost=head\nClusterName=x\n")
    conf = parse_slurm_conf(text)
    assert conf.notes == (
        "SchedulerType=sched/backfill (line 1)", "DefMemPerCPU=2000 (line 2)",
        "CoreSpecCount on nodes (line 3)", "State=DOWN nodes (simulated as available) "
        "(line 3, line 4)", "Gres=mps (line 4)", "DownNodes lines (line 5)",
        "OverSubscribe=FORCE:4 (jobs sharing cores) (line 6)",
        "QOS on partitions (line 6, line 7)",
        "partition State=DRAIN (simulated as UP) (line 6)",
        "DefaultTime on partitions (line 7)")


# (text, line, field, words in the message)
ERRORS = [
    ("NodeName=a CPUs=x", 1, "CPUs", "expected an integer"),
    ("NodeName=a CPUs=0", 1, "CPUs", "from 1"),
    ("NodeName=a CPUs=4\nNodeName=b RealMemory=-5", 2, "RealMemory", "integer"),
    ("NodeName=a CPUs=4 Weight=heavy", 1, "Weight", "integer"),
    ("NodeName=a Gres=gpu:a100:x4", 1, "Gres", "not a number"),
    ("NodeName=a Gres=gpu:a:b:4", 1, "Gres", "NAME[:TYPE][:COUNT]"),
    ("GresTypes=gpu\nNodeName=a Gres=mps:100", 2, "Gres", "not in GresTypes"),
    ("NodeName=a[1-3] CPUs=1\nNodeName=a3 CPUs=2", 2, "NodeName", "'a3' is already defined"),
    ("NodeName=a[3-1]", 1, "NodeName", "not a Slurm host list"),
    ("NodeName=a RealMemroy=5", 1, "RealMemroy", "did you mean 'RealMemory'"),
    ("NodeName=a\nPartitionName=p Nodes=a,b[1-2]", 2, "Nodes", "b[1-2]"),
    ("NodeName=a\nPartitionName=p Nodes=a MaxTime=1:2:3:4", 2, "MaxTime", "not a Slurm time"),
    ("NodeName=a\nPartitionName=p Nodes=a MaxNodes=many", 2, "MaxNodes", "integer"),
    ("NodeName=a\nPartitionName=p Nodes=a Default=maybe", 2, "Default", "YES or NO"),
    ("NodeName=a\nPartitionName=p Nodes=a OverSubscribe=SOMETIMES", 2, "OverSubscribe",
     "EXCLUSIVE"),
    ("NodeName=a\nPartitionName=p Nodes=a\nPartitionName=p Nodes=a", 3, "PartitionName",
     "already defined"),
    ("NodeName=a\nPartitionName=p Nodes=a Default=YES\nPartitionName=q Nodes=a Default=YES",
     3, "Default", "second default"),
    ("NodeName=a\nPartitionName=p Nodes=a Flavour=x", 2, "Flavour", "unknown key"),
    ("NodeName=a\nthis is not a slurm line", 2, None, "expected KEY=VALUE"),
    ("NodeNames=a[1-4] CPUs=4\nNodeName=b", 1, "NodeNames", "did you mean 'NodeName'"),
    ("NodeName=a\nNodeSet=s Color=red", 2, "NodeSet", "NodeSet=NAME"),
    ("NodeName=a \\\n CPUs=zz", 1, "CPUs", "integer"),
    ("ClusterName=x", None, "NodeName", "no NodeName line"),
    ("NodeName=a\nInclude", 2, "Include", "needs a file name"),
]


@pytest.mark.parametrize("text, line, key, words", ERRORS, ids=[e[0][:40] for e in ERRORS])
def test_errors_name_file_line_and_key(text: str, line: int | None, key: str | None,
                                       words: str, tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text(text + "\n")
    with pytest.raises(InputError) as err:
        read_slurm_conf(path)
    e = err.value
    assert (e.file, e.line, e.field) == (str(path), line, key)
    assert words in e.message


def test_include_errors(tmp_path: Path) -> None:
    main = tmp_path / "slurm.conf"
    main.write_text("NodeName=a\nInclude missing.conf\n")
    with pytest.raises(InputError, match="included file not found") as err:
        read_slurm_conf(main)
    assert (err.value.file, err.value.line, err.value.field) == (str(main), 2, "Include")
    main.write_text("NodeName=a\nInclude conf.d/*.conf\n")
    with pytest.raises(InputError, match="no file matches"):
        read_slurm_conf(main)
    # a loop through a second file, reported where it closes
    (tmp_path / "b.conf").write_text("# b\nInclude slurm.conf\n")
    main.write_text("NodeName=a\nInclude b.conf\n")
    with pytest.raises(InputError, match="an Include loop") as err:
        read_slurm_conf(main)
    assert (err.value.file, err.value.line) == (str(tmp_path / "b.conf"), 2)
    # an error inside an included file names that file and its line
    (tmp_path / "b.conf").write_text("NodeName=b CPUs=two\n")
    with pytest.raises(InputError) as err:
        read_slurm_conf(main)
    assert (err.value.file, err.value.line, err.value.field) == (
        str(tmp_path / "b.conf"), 1, "CPUs")
