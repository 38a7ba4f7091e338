"""Alea's extended SWF and machine file: reading, the nodespec encoding, schedules.

Hand-computed schedules on crafted traces show that field 21 (cluster restriction,
``#excl``, memory) changes start times under every dispatcher; the real
``alea-wagap-2013`` trace (skipped when ``/work/shared/traces`` is absent) is simulated on
its own machine file and the simulated placement is checked: cluster-restricted jobs ran
on their cluster's nodes only, exclusive jobs had their nodes to themselves, and no
node's capacity was ever exceeded.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from dispatchlab import Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY, FIFO, LJF, SJF, Conservative
from dispatchlab.platform import read_alea_machines
from dispatchlab.platform.files import trace_platform
from dispatchlab.sim.result import STATUS_REJECTED
from dispatchlab.workload import load_trace
from dispatchlab.workload.alea import (
    Machine,
    NodeSpec,
    allowed_clusters,
    drop_constraints,
    encode,
    find_machines,
    looks_like_alea,
    parse_alloc,
    parse_nodespec,
    read_alea,
)
from dispatchlab.workload.jobs import SWF_FIELDS
from dispatchlab.workload.swf import read_swf

TRACE = "alea-wagap-2013.swf.gz"
MACHINES = "alea-wagap-2013.swf.machines.gz"
GIB = 1 << 30


# ----------------------------------------------------------------------------- helpers
def job_line(job: int, submit: int, run: int, procs: int, spec: str, *, mem: int = -1,
             req: int | None = None, alloc: str = "{1}", queue: str = "q_1d",
             user: int = 1) -> str:
    """A 21-field Alea line; unlisted SWF fields are -1 (wait) or 1 (status...)."""
    fields = [job, submit, -1, run, procs, -1, -1, procs, run if req is None else req, mem,
              1, user, 1, 1, -1, 1, -1, -1]
    return " ".join(str(v) for v in fields) + f" {alloc} {queue} {spec}"


def write_trace(folder: Path, lines: list[str], machines: str, name: str = "t.swf") -> Path:
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    (folder / (name + ".machines")).write_text(machines)
    return path


TWO_CLUSTERS = "0\ta\t1\t4\t1\t1000\n1\tb\t1\t4\t1\t1000\n"
ONE_CLUSTER = "0\tc\t2\t4\t1\t1000\n"


def simulate(path: Path, dispatcher):
    jobs = read_alea(path)
    platform = trace_platform(jobs.info)
    return jobs, Simulation(platform, jobs, dispatcher).run()


def starts(result) -> list[int]:
    return result.start.tolist()


def nodes_of(result, row: int) -> list[int]:
    return result.allocations[row].nodes.tolist()


def check_placement(jobs, result, platform: Platform) -> dict[str, int]:
    """Cluster restrictions, exclusivity and per-node capacity, from the simulated
    allocations and start/end times; returns how many jobs each check covered."""
    names = platform.resource_names
    cluster_nodes: dict[str, set[int]] = {}
    first = 0
    for nt in platform.node_types:
        cluster_nodes[nt.name] = set(range(first, first + nt.count))
        first += nt.count
    share = jobs.resources["share"]
    exclusive = share > 1
    seen = {"restricted": 0, "exclusive": 0}
    per_node: dict[int, list[tuple[int, int, int]]] = {}
    for row, alloc in result.allocations.items():
        nodes = alloc.nodes.tolist()
        for cluster, members in cluster_nodes.items():
            if jobs.resources["cl_" + cluster][row] > 0:
                seen["restricted"] += 1
                assert set(nodes) <= members, f"row {row} left cluster {cluster}"
        if exclusive[row]:
            seen["exclusive"] += 1
            assert alloc.counts.tolist() == [1] * len(nodes), "exclusive chunks share a node"
        for node in nodes:
            per_node.setdefault(node, []).append((int(result.start[row]),
                                                  int(result.end[row]), row))
    for node, spans in per_node.items():
        for s, e, row in spans:
            if not exclusive[row] or e == s:
                continue
            others = [r for s2, e2, r in spans if r != row and s2 < e and s < e2]
            assert not others, f"exclusive row {row} shared node {node} with {others}"
    cap = platform.capacity_matrix()
    events = []
    for row, alloc in result.allocations.items():
        req = np.array([jobs.resources[r][row] if r in jobs.resources else 0 for r in names])
        for node, count in zip(alloc.nodes.tolist(), alloc.counts.tolist(), strict=True):
            events.append((int(result.end[row]), 0, node, -count * req))
            events.append((int(result.start[row]), 1, node, count * req))
    used = np.zeros_like(cap)
    events.sort(key=lambda ev: ev[:3])  # ends before starts at equal times
    for _t, _kind, node, delta in events:
        used[node] += delta
        assert (used[node] <= cap[node]).all(), f"node {node} over capacity"
    return seen


# ----------------------------------------------------------------------- machine file
def test_machines_real_file(traces_dir: Path) -> None:
    platform = read_alea_machines(traces_dir / MACHINES)
    assert [nt.name for nt in platform.node_types] == ["zewura", "zegox"]
    assert platform.n_nodes == 68
    total = platform.total_capacity()
    assert total["core"] == 20 * 80 + 48 * 12 == 2_176
    assert platform.node_types[0].capacity == {"core": 80, "mem": 529_426_432, "share": 80,
                                               "cl_zewura": 80}
    assert platform.node_types[1].capacity == {"core": 12, "mem": 94_035_968, "share": 80,
                                               "cl_zegox": 12}
    assert platform.resource_names == ("core", "mem", "share", "cl_zewura", "cl_zegox")
    assert not platform.is_pooled
    # nodes in file order: zewura 0..19, zegox 20..67
    cap = platform.capacity_matrix()
    assert cap[19].tolist() == [80, 529_426_432, 80, 80, 0]
    assert cap[20].tolist() == [12, 94_035_968, 80, 0, 12]


def test_machines_gzip_comments_and_no_memory(tmp_path: Path) -> None:
    path = tmp_path / "m.machines.gz"
    path.write_bytes(gzip.compress(b"; a comment\n\n0 x 3 8 1\n1 y 1 16 2.5\n"))
    platform = read_alea_machines(path)
    assert platform.n_nodes == 4
    assert platform.resource_names == ("core", "share", "cl_x", "cl_y")
    assert platform.node_types[0].capacity == {"core": 8, "share": 16, "cl_x": 8}


@pytest.mark.parametrize(
    ("text", "line", "field", "message"),
    [
        ("0 a 2 4 1 100\n1 b x 4 1 100\n", 2, "3 (nodes)", "not an integer: 'x'"),
        ("0 a 2 0 1 100\n", 1, "4 (cores)", "must be >= 1, got 0"),
        ("0 a 2 4 0 100\n", 1, "5 (rating)", "must be a number > 0"),
        ("0 a 2 4 1 -5\n", 1, "6 (memory)", "must be >= 0"),
        ("0 a 2 4 1 100\n1 a 2 4 1 100\n", 2, "2 (name)", "appears twice"),
        ("0 a 2 4 1 100\n0 b 2 4 1 100\n", 2, "1 (id)", "appears twice"),
        ("0 a 2 4 1 100\n\n1 b 2 4 1\n", 3, "6 (memory)", "every line must have it"),
        ("0 a/b 2 4 1\n", 1, "2 (name)", "not a cluster name"),
        ("0 a 2 4\n", 1, None, "expected 5 or 6 fields"),
    ],
)
def test_machines_bad_field(tmp_path: Path, text, line, field, message) -> None:
    path = tmp_path / "bad.machines"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        read_alea_machines(path)
    assert (err.value.file, err.value.line, err.value.field) == (str(path), line, field)
    assert message in err.value.message


def test_machines_missing_and_empty(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_alea_machines(tmp_path / "none.machines")
    (tmp_path / "e.machines").write_text("; nothing\n")
    with pytest.raises(InputError, match="no cluster lines"):
        read_alea_machines(tmp_path / "e.machines")


# --------------------------------------------------------------------------- field 21
@pytest.mark.parametrize(
    ("text", "chunks", "exclusive", "props", "mem_kb"),
    [
        ("1:ppn=1", ((1, 1),), False, (), None),
        ("8:ppn=8:x86_64:cl_zegox", ((8, 8),), False, ("x86_64", "cl_zegox"), None),
        ("1:ppn=64:x86_64:cl_zewura#excl", ((1, 64),), True, ("x86_64", "cl_zewura"), None),
        ("2", ((2, 1),), False, (), None),
        ("1:ppn=1+3:ppn=2", ((1, 1), (3, 2)), False, (), None),
        ("1:ppn=1.5:brno", ((1, 1),), False, ("brno",), None),
        ("zewura19.cerit-sc.cz:ppn=12:brno", ((1, 12),), False,
         ("zewura19.cerit-sc.cz", "brno"), None),
        ("1:zegox17.cerit-sc.cz", ((1, 1),), False, ("zegox17.cerit-sc.cz",), None),
        ("1:ppn=14:mem=3gb", ((1, 14),), False, (), 3 * 1024 * 1024),
        ("1:ppn=2:mem=1000", ((1, 2),), False, (), 1),  # bytes, rounded up to 1 KB
        ("1:ppn=4#shared", ((1, 4),), False, (), None),
        ("1:ppn=5:host=zewura10", ((1, 5),), False, ("host=zewura10",), None),
    ],
)
def test_parse_nodespec(text, chunks, exclusive, props, mem_kb) -> None:
    spec = parse_nodespec(text)
    assert spec == NodeSpec(chunks, exclusive, props, mem_kb)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1:ppn=x", "ppn must be a number >= 1"),
        ("1:ppn=0", "ppn must be a number >= 1"),
        ("0:ppn=2", "node count must be >= 1"),
        ("1:ppn=2:ppn=3", "ppn given twice"),
        ("1:ppn=2#weird", "unknown placement '#weird'"),
        ("1::ppn=2", "empty property"),
        ("1:ppn=1+", "empty group"),
        ("#excl", "no node specification"),
        ("1:mem=3 gb", "not a memory size"),
    ],
)
def test_parse_nodespec_errors(text, message) -> None:
    with pytest.raises(ValueError, match=message):
        parse_nodespec(text)


CLUSTERS = {"zewura": 80, "zegox": 12}


@pytest.mark.parametrize(
    ("props", "allowed"),
    [
        ((), {"zewura", "zegox"}),
        (("x86_64", "brno", "nfs4", "debian", "infiniband"), {"zewura", "zegox"}),
        (("cl_zegox",), {"zegox"}),
        (("cl_zewura", "cl_zewura", "cl_zewura"), {"zewura"}),
        (("^cl_zewura",), {"zegox"}),
        (("^cl_zigur",), {"zewura", "zegox"}),  # an unknown negated cluster: ignored
        (("nodecpus80",), {"zewura"}),
        (("nodecpus12",), {"zegox"}),
        (("zegox20.cerit-sc.cz",), {"zegox"}),
        (("host=zewura10",), {"zewura"}),
        (("^zewura12.cerit-sc.cz",), {"zewura", "zegox"}),  # negated host: ignored
        (("zewura",), {"zewura"}),
    ],
)
def test_allowed_clusters(props, allowed) -> None:
    assert allowed_clusters(props, CLUSTERS) == allowed


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (("cl_zigur",), "cluster 'zigur'"),
        (("host=skirit5",), "belongs to no cluster"),
        (("cl_zewura", "nodecpus12"), "satisfies"),
        (("nodecpus16",), "satisfies"),
    ],
)
def test_allowed_clusters_errors(props, message) -> None:
    with pytest.raises(ValueError, match=message):
        allowed_clusters(props, CLUSTERS)


MACHINE = Machine(clusters={"zewura": 80, "zegox": 12}, shares=80, has_mem=True)


@pytest.mark.parametrize(
    ("text", "mem", "expected"),
    [
        # units, core, mem (KB per unit), share, cluster
        ("8:ppn=8:x86_64:cl_zegox", 8 * GIB, (8, 8, 8 * 1024 * 1024, 1, "zegox")),
        ("1:ppn=64:x86_64:cl_zewura#excl", 64 * GIB, (1, 64, 64 * 1024 * 1024, 80, "zewura")),
        ("2:ppn=3#excl", -1, (2, 3, 0, 80, None)),  # exclusive without a cluster
        ("1:ppn=1", 1025, (1, 1, 2, 1, None)),  # bytes rounded up to KB
        ("1:ppn=14:mem=3gb", 400 << 20, (1, 14, 3 << 20, 1, None)),  # nodespec mem wins
        ("1:ppn=1:mem=2gb", 4 * GIB, (1, 1, 4 << 20, 1, None)),  # field 10 wins
        # mixed chunks: gcd(1, 2) = 1 core per unit, 5 units; 3 chunks x 10 KB over 5
        ("1:ppn=1+2:ppn=2", 10 * 1024, (5, 1, 6, 1, None)),
        ("1:ppn=2+1:ppn=4:cl_zewura", -1, (3, 2, 0, 1, "zewura")),  # 6 cores / gcd 2
        ("1:ppn=1:^cl_zewura", -1, (1, 1, 0, 1, "zegox")),
    ],
)
def test_encode(text, mem, expected) -> None:
    assert tuple(encode(parse_nodespec(text), mem, MACHINE)) == expected


def test_encode_without_memory_and_errors() -> None:
    no_mem = Machine(clusters={"a": 4, "b": 4, "c": 8}, shares=8, has_mem=False)
    assert tuple(encode(parse_nodespec("1:ppn=2"), 5 * GIB, no_mem)) == (1, 2, 0, 1, None)
    with pytest.raises(ValueError, match="only one cluster or all"):
        encode(parse_nodespec("1:ppn=2:^cl_c"), -1, no_mem)  # a and b
    with pytest.raises(ValueError, match="different sizes"):
        encode(parse_nodespec("1:ppn=1+1:ppn=2#excl"), -1, no_mem)


# --------------------------------------------------------------------------- field 19
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{1270,1270,1281}", ("1270:2,1281:1", 2)),
        ("{1273,1255,1273}", ("1273:2,1255:1", 2)),
        ("{1244}", ("1244:1", 1)),
        ("{}", ("", -1)),
        ("-1", ("", -1)),
    ],
)
def test_parse_alloc(text, expected) -> None:
    assert parse_alloc(text) == expected


@pytest.mark.parametrize("text", ["1270,1281", "{1270,x}", "{1270,,1}", "{"])
def test_parse_alloc_errors(text) -> None:
    with pytest.raises(ValueError):
        parse_alloc(text)


# ---------------------------------------------------------------- reading crafted files
def test_read_alea_maps_every_field(tmp_path: Path) -> None:
    lines = [
        "; a comment line",
        "7 100 3 50 16 2.5 1024 16 3600 1073741824 1 42 5 9 -1 2 6 8 "
        "{11,11,11,11,11,11,11,11,12,12,12,12,12,12,12,12} q_2d 2:ppn=8:cl_a#excl",
        "",
        job_line(8, 90, 20, 1, "1:ppn=1", mem=2048, alloc="{12}", queue="q_1w"),
        job_line(9, 100, 5, 2, "2", alloc="{11,12}", queue="q_2d"),
    ]
    path = write_trace(tmp_path, lines, "0 a 2 8 1 4000000\n1 b 1 4 1 1000\n")
    table = read_alea(path)
    # rows by submit time, stable: job 8 (t=90), job 7 (t=100, line 2), job 9 (line 5)
    assert table["job_id"].tolist() == [8, 7, 9]
    assert table["line"].tolist() == [4, 2, 5]
    row = 1
    expected = {"submit": 100, "wait": 3, "run": 50, "alloc_procs": 16, "avg_cpu": 2.5,
                "used_mem": 1024.0, "req_procs": 16, "req_time": 3600,
                "req_mem": 1073741824, "status": 1, "user": 42, "group": 5, "app": 9,
                "partition": 2, "prev_job": 6, "think_time": 8}
    for name, value in expected.items():
        assert table[name][row] == value, name
    # field 20: codes by first appearance in the file (q_2d on line 2, then q_1w)
    assert table.info.codes["queue"] == ["q_2d", "q_1w"]
    assert table["queue"].tolist() == [1, 0, 0]
    # field 19
    assert table["alloc_nodes"].tolist() == ["12:1", "11:8,12:8", "11:1,12:1"]
    assert table["nodes_used"].tolist() == [1, 2, 2]
    # field 21 as per-unit resources: 2 chunks of 8 cores, 1 GiB each, exclusive, on a
    assert table["units"].tolist() == [1, 2, 2]
    res = table.resources
    assert res["core"].tolist() == [1, 8, 1]
    assert res["mem"].tolist() == [2, 1024 * 1024, 0]
    assert res["share"].tolist() == [1, 8, 1]
    assert res["cl_a"].tolist() == [0, 8, 0]
    assert res["cl_b"].tolist() == [0, 0, 0]
    assert table.info.format == "alea"
    assert table.info.companions == {"machines": str(tmp_path / "t.swf.machines")}
    # fields 1-18 exactly as read_swf gives them (field 15 aside)
    swf = read_swf(path, extra_fields="ignore")
    for name in SWF_FIELDS:
        if name != "queue":
            np.testing.assert_array_equal(table[name], swf[name], err_msg=name)
    np.testing.assert_array_equal(table["requested_time"], swf["requested_time"])


def test_read_alea_gzip_and_machines_argument(tmp_path: Path) -> None:
    text = job_line(0, 0, 10, 4, "1:ppn=4:cl_b") + "\n"
    path = tmp_path / "x.swf.gz"
    path.write_bytes(gzip.compress(text.encode()))
    with pytest.raises(InputError, match="no Alea machine file beside the trace"):
        read_alea(path)
    other = tmp_path / "elsewhere.txt"
    other.write_text(TWO_CLUSTERS)
    table = read_alea(path, machines=other)
    assert table.info.companions["machines"] == str(other)
    assert table.resources["cl_b"].tolist() == [4]
    (tmp_path / "x.swf.machines.gz").write_bytes(gzip.compress(TWO_CLUSTERS.encode()))
    assert find_machines(path) == tmp_path / "x.swf.machines.gz"
    assert read_alea(path).info.companions["machines"] == str(tmp_path / "x.swf.machines.gz")


def test_looks_like_alea(tmp_path: Path) -> None:
    alea = job_line(0, 0, 10, 4, "1:ppn=4")
    swf = " ".join(["1"] * 18)
    lone = tmp_path / "lone.swf"
    assert looks_like_alea(lone, ["; header", "", alea])
    assert looks_like_alea(lone, [alea.encode()])
    assert not looks_like_alea(lone, ["; header", swf])
    assert not looks_like_alea(lone, [])
    assert not looks_like_alea(lone, [" ".join(["x"] * 21)])
    (tmp_path / "lone.swf.machines").write_text(ONE_CLUSTER)
    assert looks_like_alea(lone, [swf])  # a companion machine file beside it


@pytest.mark.parametrize(
    ("bad", "field", "message"),
    [
        (job_line(2, 5, 1, 4, "1:ppn=x"), "21 (resources)", "ppn must be"),
        (job_line(2, 5, 1, 4, "1:ppn=4:cl_zzz"), "21 (resources)", "cluster 'zzz'"),
        (job_line(2, 5, 1, 4, "2:ppn=4"), "21 (resources)",
         "asks for 8 processors, field 8 (req_procs) says 4"),
        (job_line(2, 5, 1, 4, "1:ppn=4", alloc="{1;2}"), "19 (alloc_nodes)", "node id"),
        (job_line(2, 5, 1, 4, "1:ppn=4", mem=-7), "10 (req_mem)", "negative memory"),
        (job_line(2, 5, 1, 4, "1:ppn=4") + " extra", None, "expected 21 fields like line 1"),
    ],
)
def test_bad_line_names_file_line_field(tmp_path: Path, bad, field, message) -> None:
    lines = [job_line(1, 0, 10, 1, "1:ppn=1"), bad, job_line(3, 9, 1, 1, "1:ppn=1")]
    path = write_trace(tmp_path, lines, TWO_CLUSTERS)
    with pytest.raises(InputError) as err:
        read_alea(path)
    assert (err.value.file, err.value.line, err.value.field) == (str(path), 2, field)
    assert message in err.value.message
    table = read_alea(path, lenient=True)
    assert table["job_id"].tolist() == [1, 3]
    assert table.info.malformed_skipped == 1


def test_first_error_of_the_file_is_reported(tmp_path: Path) -> None:
    """A field-21 problem on line 2 comes before a field-4 problem on line 3, and the
    other way round."""
    good = job_line(1, 0, 10, 1, "1:ppn=1")
    bad21 = job_line(2, 1, 10, 1, "1:ppn=?")
    bad4 = job_line(3, 2, 10, 1, "1:ppn=1").replace(" 10 1 ", " x 1 ", 1)
    path = write_trace(tmp_path, [good, bad21, bad4], TWO_CLUSTERS)
    with pytest.raises(InputError) as err:
        read_alea(path)
    assert (err.value.line, err.value.field) == (2, "21 (resources)")
    path = write_trace(tmp_path, [good, bad4, bad21], TWO_CLUSTERS)
    with pytest.raises(InputError) as err:
        read_alea(path)
    assert (err.value.line, err.value.field) == (2, "4 (run)")
    table = read_alea(path, lenient=True)
    assert table["job_id"].tolist() == [1]
    assert table.info.malformed_skipped == 2


def test_plain_swf_lines_with_a_machine_file(tmp_path: Path) -> None:
    """An 18-field file beside a machine file (Alea's hpc2n.swf): one core per unit, no
    constraints, the machine file as platform."""
    lines = ["1 0 -1 10 3 -1 -1 3 10 512 1 1 1 1 1 1 -1 -1",
             "2 1 -1 10 2 -1 -1 2 10 512 1 1 1 1 1 1 -1 -1"]
    path = write_trace(tmp_path, lines, TWO_CLUSTERS)
    table = read_alea(path)
    assert table["units"].tolist() == [3, 2]
    assert table.resources["core"].tolist() == [1, 1]
    assert table.resources["mem"].tolist() == [0, 0]
    assert table.resources["cl_a"].tolist() == [0, 0]
    assert "alloc_nodes" not in table.columns
    platform = trace_platform(table.info)
    result = Simulation(platform, table, FIFO()).run()
    assert starts(result) == [0, 1]
    assert nodes_of(result, 0) == [0] and nodes_of(result, 1) == [0, 1]  # 1 + 1 core


def test_load_trace_detects_alea(tmp_path: Path) -> None:
    path = write_trace(tmp_path, [job_line(1, 0, 10, 4, "1:ppn=4:cl_b")], TWO_CLUSTERS)
    table = load_trace(path)
    assert table.info.format == "alea"
    assert table.resources["cl_b"].tolist() == [4]


def test_from_trace_header_unchanged_for_swf(tmp_path: Path) -> None:
    path = tmp_path / "p.swf"
    path.write_text("; MaxProcs: 64\n1 0 -1 10 3 -1 -1 3 10 -1 1 1 1 1 1 1 -1 -1\n")
    platform = trace_platform(read_swf(path).info)
    assert platform == Platform.pooled(64, name="MaxProcs=64")


def test_drop_constraints(tmp_path: Path) -> None:
    lines = [job_line(1, 0, 10, 16, "2:ppn=8:cl_a#excl", mem=GIB),
             job_line(2, 1, 10, 1, "1:ppn=1")]
    table = read_alea(write_trace(tmp_path, lines, "0 a 2 8 1 4000000\n"))
    plain = drop_constraints(table)
    assert plain["units"].tolist() == [16, 1]
    assert plain.resources == {"core": plain.resources["core"]}
    assert plain.resources["core"].tolist() == [1, 1]
    assert table["units"].tolist() == [2, 1]  # unchanged
    result = Simulation(Platform.pooled(16), plain, FIFO()).run()
    assert starts(result) == [0, 10]


# ------------------------------------------------------------- hand-computed schedules
def cluster_trace(tmp_path: Path, restricted: bool) -> Path:
    """Clusters a and b, one node of 4 cores each. J1 fills a for [0, 10); J2 (2 cores,
    restricted to a or not) at 1; J3 (2 cores, anywhere) at 2, 5 s long."""
    spec2 = "1:ppn=2:cl_a" if restricted else "1:ppn=2"
    lines = [job_line(1, 0, 10, 4, "1:ppn=4:cl_a"), job_line(2, 1, 5, 2, spec2),
             job_line(3, 2, 5, 2, "1:ppn=2")]
    return write_trace(tmp_path, lines, TWO_CLUSTERS)


@pytest.mark.parametrize(
    ("dispatcher", "expected"),
    [
        # J2 waits for cluster a (free at 10) although b is free; EASY and conservative
        # backfill J3 on b (it ends at 7 <= 10); FIFO holds J3 behind J2, then both fit
        # on a at 10
        (EASY(), [0, 10, 2]),
        (Conservative(), [0, 10, 2]),
        (FIFO(), [0, 10, 10]),
        (SJF(), [0, 10, 10]),  # equal estimates: queue order, strict
        (LJF(skip=True), [0, 10, 2]),
    ],
)
def test_cluster_restriction_delays_a_job(tmp_path: Path, dispatcher, expected) -> None:
    _, result = simulate(cluster_trace(tmp_path, restricted=True), dispatcher)
    assert starts(result) == expected
    assert nodes_of(result, 0) == [0] and nodes_of(result, 1) == [0]
    assert nodes_of(result, 2) == ([1] if expected[2] == 2 else [0])


@pytest.mark.parametrize("dispatcher", [EASY(), Conservative(), FIFO()])
def test_without_the_restriction_the_job_runs_on_the_free_cluster(tmp_path, dispatcher):
    _, result = simulate(cluster_trace(tmp_path, restricted=False), dispatcher)
    assert starts(result) == [0, 1, 2]
    assert nodes_of(result, 1) == [1] and nodes_of(result, 2) == [1]


def exclusive_trace(tmp_path: Path, exclusive: bool) -> Path:
    """One cluster of 2 nodes x 4 cores. J1 (0-10) and J2 (1-11) take one core of node 0
    each; J3 (at 2, 5 s) asks 2 chunks of 1 core, exclusive or not; J4 (at 3, 2 s) and
    J5 (at 12, 1 s) one core."""
    spec3 = "2:ppn=1#excl" if exclusive else "2:ppn=1"
    lines = [job_line(1, 0, 10, 1, "1:ppn=1"), job_line(2, 1, 10, 1, "1:ppn=1"),
             job_line(3, 2, 5, 2, spec3), job_line(4, 3, 2, 1, "1:ppn=1"),
             job_line(5, 12, 1, 1, "1:ppn=1")]
    return write_trace(tmp_path, lines, ONE_CLUSTER)


@pytest.mark.parametrize(
    ("dispatcher", "expected"),
    [
        # J3 needs both nodes empty: at 11 (J2 ends). EASY/conservative backfill J4 on
        # node 0 at 3 (ends 5 <= 11); J5 (at 12) waits for J3's end at 16 although
        # both nodes have 3 idle cores
        (EASY(), [0, 1, 11, 3, 16]),
        (Conservative(), [0, 1, 11, 3, 16]),
        (EASY(reservations=3), [0, 1, 11, 3, 16]),
        # FIFO: J4 waits behind J3, then for J3's nodes
        (FIFO(), [0, 1, 11, 16, 16]),
    ],
)
def test_exclusive_job_waits_for_and_keeps_empty_nodes(tmp_path, dispatcher, expected):
    jobs, result = simulate(exclusive_trace(tmp_path, exclusive=True), dispatcher)
    assert starts(result) == expected
    assert nodes_of(result, 2) == [0, 1]
    assert result.allocations[2].counts.tolist() == [1, 1]
    check_placement(jobs, result, trace_platform(jobs.info))


@pytest.mark.parametrize("dispatcher", [EASY(), Conservative(), FIFO()])
def test_without_excl_the_chunks_share_a_busy_node(tmp_path, dispatcher):
    _, result = simulate(exclusive_trace(tmp_path, exclusive=False), dispatcher)
    assert starts(result) == [0, 1, 2, 3, 12]
    assert nodes_of(result, 2) == [0]  # both chunks on node 0, next to J1 and J2
    assert result.allocations[2].counts.tolist() == [2]


def test_exclusive_without_cluster_on_a_heterogeneous_machine(tmp_path: Path) -> None:
    """Node 0: cluster a, 4 cores; node 1: cluster b, 8 cores. J2 (2 cores, #excl, no
    cluster) takes the empty node 1 for [1, 6); J4 (6 cores) fits only node 1 and waits
    for J2's end, although 6 of its cores are idle."""
    lines = [job_line(1, 0, 10, 1, "1:ppn=1"), job_line(2, 1, 5, 2, "1:ppn=2#excl"),
             job_line(3, 2, 1, 1, "1:ppn=1"), job_line(4, 3, 1, 6, "1:ppn=6")]
    path = write_trace(tmp_path, lines, "0 a 1 4 1 1000\n1 b 1 8 1 1000\n")
    for dispatcher in (EASY(), Conservative(), FIFO()):
        _, result = simulate(path, dispatcher)
        assert starts(result) == [0, 1, 2, 6]
        assert [nodes_of(result, r) for r in range(4)] == [[0], [1], [0], [1]]
    lines[1] = job_line(2, 1, 5, 2, "1:ppn=2")
    path = write_trace(tmp_path, lines, "0 a 1 4 1 1000\n1 b 1 8 1 1000\n")
    _, result = simulate(path, EASY())
    assert starts(result) == [0, 1, 2, 3]


def test_memory_per_chunk_limits_a_node(tmp_path: Path) -> None:
    """One node of 4 cores and 1,000 KB: J1 holds 800 KB for [0, 10), so J2 (300 KB)
    waits although 3 cores are idle; J3 (2,000 KB) can never fit and is rejected."""
    lines = [job_line(1, 0, 10, 1, "1:ppn=1", mem=800 * 1024),
             job_line(2, 1, 5, 1, "1:ppn=1", mem=300 * 1024),
             job_line(3, 2, 5, 1, "1:ppn=1", mem=2000 * 1024),
             job_line(4, 3, 1, 1, "1:ppn=1", mem=200 * 1024)]
    path = write_trace(tmp_path, lines, "0 m 1 4 1 1000\n")
    _, result = simulate(path, EASY())
    assert starts(result)[:2] == [0, 10]
    assert result.status[2] == STATUS_REJECTED
    assert "2000 mem" in result.reject_reason[2]
    assert starts(result)[3] == 3  # 200 KB fits next to J1, and ends before 10


# ------------------------------------------------------------------------- real trace
@pytest.fixture(scope="module")
def alea_trace(traces_dir: Path) -> Path:
    path = traces_dir / TRACE
    if not path.is_file() or not (traces_dir / MACHINES).is_file():
        pytest.skip(f"{TRACE} or {MACHINES} not found in {traces_dir}")
    return path


@pytest.fixture(scope="module")
def alea_jobs(alea_trace: Path):
    return load_trace(alea_trace)


def test_real_trace_reads(alea_trace: Path) -> None:
    table = read_alea(alea_trace)
    assert len(table) == 17_900
    assert table.info.format == "alea"
    assert table.info.companions["machines"].endswith(MACHINES)
    assert sorted(table.info.codes["queue"]) == sorted(
        ["q_1d", "q_2w", "q_2d", "q_4d", "q_1w", "q_4h", "q_2h", "q_2w_plus", "backfill",
         "priority_long", "ops"])
    res = table.resources
    # counted independently with awk on field 21 (cl_X, ^cl_zewura, nodecpusC, hosts)
    assert int((res["cl_zewura"] > 0).sum()) == 616
    assert int((res["cl_zegox"] > 0).sum()) == 343
    assert int((res["share"] > 1).sum()) == 231  # ...#excl
    # every job: chunks x cores per chunk = its processors (fields 5 and 8)
    np.testing.assert_array_equal(table["units"] * res["core"], table["req_procs"])
    assert int((table["units"] > 1).sum()) == 334  # multi-chunk jobs
    # field 19 agrees with the nodespec's chunk count on all but the 13 mixed/host specs
    assert int((table["nodes_used"] != table["units"]).sum()) <= 13 + 12
    assert table["alloc_nodes"][0] == "1241:64"


def test_real_trace_default_platform(alea_jobs) -> None:
    platform = trace_platform(alea_jobs.info)
    assert platform.n_nodes == 68 and platform.total_capacity()["core"] == 2_176


def test_real_trace_fifo_honours_field_21(alea_jobs) -> None:
    platform = trace_platform(alea_jobs.info)
    result = Simulation(platform, alea_jobs, FIFO()).run()
    ran = result.status != STATUS_REJECTED
    # one job asks 512 GiB on one node; zewura nodes have 504.9 GiB
    assert int((~ran).sum()) == 1
    row = int(np.flatnonzero(~ran)[0])
    assert alea_jobs.resources["mem"][row] == 512 * 1024 * 1024
    assert np.array_equal((result.end - result.start)[ran], alea_jobs["run"][ran])
    seen = check_placement(alea_jobs, result, platform)
    assert seen == {"restricted": 959, "exclusive": 231}


@pytest.fixture(scope="module")
def alea_slice(alea_trace: Path):
    """The first 2,500 cleaned jobs (EASY on all 17,898 takes minutes)."""
    return load_trace(alea_trace, jobs=(0, 2_500))


@pytest.mark.parametrize("dispatcher", [EASY(), Conservative()], ids=["easy", "conservative"])
def test_real_trace_backfilling_honours_field_21(alea_slice, dispatcher) -> None:
    platform = trace_platform(alea_slice.info)
    result = Simulation(platform, alea_slice, dispatcher).run()
    ran = result.status != STATUS_REJECTED
    assert ran.all()
    assert (result.start >= alea_slice["submit"]).all()
    seen = check_placement(alea_slice, result, platform)
    assert seen["restricted"] > 50 and seen["exclusive"] > 20


def test_missing_or_corrupt_trace(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_alea(tmp_path / "none.swf", machines=tmp_path / "none.machines")
    bad = tmp_path / "bad.swf.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00garbage")
    (tmp_path / "bad.swf.machines").write_text(ONE_CLUSTER)
    with pytest.raises(InputError) as err:
        read_alea(bad)
    assert err.value.file == str(bad)
