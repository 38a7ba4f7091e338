"""The Eurora platform, PA-HPC-SIM node and queue files, queue tables and ``job_ewt``.

The real files come from ``../shared/traces/Eurora-PA-HPC-SIM-testdata.tar.gz``
(``test_data/system_configs``); tests that need it skip when it is absent. Everything
else uses small files written here, with the expected platform worked out by hand.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dispatchlab.cli import main
from dispatchlab.cli.common import choose_platform
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.provenance import file_sha256
from dispatchlab.platform import (
    DEFAULT_EWT,
    EURORA_QUEUES,
    NodeType,
    Platform,
    job_ewt,
    load_platform_file,
    read_eurora_nodes,
    read_system_queues,
)
from dispatchlab.platform.eurora import (
    eurora_platform,
    looks_like_node_file,
    parse_eurora_nodes,
    split_archive,
)
from dispatchlab.platform.files import read_platform, read_platform_toml
from dispatchlab.workload.jobs import JobTable, TraceInfo

ARCHIVE_NAME = "Eurora-PA-HPC-SIM-testdata.tar.gz"
KB_32GIB = 33_554_432


@pytest.fixture(scope="module")
def archive(traces_dir: Path) -> Path:
    """The PA-HPC-SIM test data archive; skipped when absent."""
    path = traces_dir / ARCHIVE_NAME
    if not path.is_file():
        pytest.skip(f"{ARCHIVE_NAME} not found in {traces_dir}")
    return path


def node_line(k: int, cores: int = 16, gpus: int = 0, mics: int = 2, mem: int = KB_32GIB,
              reserved: int = 0) -> str:
    return f"{k} {cores} {gpus} {mics} {mem} {reserved}"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def make_tar(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def assert_input_error(exc: InputError, *needles: str, file: str | None = None,
                       line: int | None = None, field: str | None = None) -> None:
    text = str(exc)
    for needle in needles:
        assert needle in text, f"{needle!r} not in {text!r}"
    if file is not None:
        assert exc.file == file, text
    if line is not None:
        assert exc.line == line, text
    if field is not None:
        assert exc.field == field, text


# ------------------------------------------------------------------ the real files
def test_preset_equals_nodes_64(archive: Path) -> None:
    real = read_eurora_nodes(f"{archive}#system_configs/nodes_#64")
    preset = eurora_platform()
    assert real.node_types == preset.node_types
    assert real.resource_names == preset.resource_names == ("core", "gpu", "mic", "mem")
    assert np.array_equal(real.capacity_matrix(), preset.capacity_matrix())
    assert real.name == "nodes_#64" and real.queues == ()


def test_real_node_files(archive: Path) -> None:
    # every shipped node file: the first half MIC nodes (2.1 GHz), the second GPU nodes
    for member, n, cores, acc in (("nodes_#8", 8, 16, 2), ("nodes_#8_big", 8, 128, 16),
                                  ("nodes_#32", 32, 16, 2), ("nodes_#64", 64, 16, 2)):
        p = read_eurora_nodes(f"{archive}#{member}")
        assert p.name == member and p.n_nodes == n
        assert [(nt.name, nt.count) for nt in p.node_types] == [
            ("mic-2.1GHz", n // 2), ("gpu-3.4GHz", n // 2)]
        assert p.node_types[0].capacity == {"core": cores, "gpu": 0, "mic": acc,
                                            "mem": KB_32GIB}
        assert p.node_types[1].capacity == {"core": cores, "gpu": acc, "mic": 0,
                                            "mem": KB_32GIB}


def test_real_system_queues(archive: Path) -> None:
    queues = read_system_queues(f"{archive}#test_data/system_configs/system_queues")
    assert list(queues.items()) == list(EURORA_QUEUES)
    assert eurora_platform().queue_ewt == queues


def test_cli_platform_archive_member(archive: Path) -> None:
    p = choose_platform(None, f"{archive}#system_configs/nodes_#8", None, None)
    assert p.n_nodes == 8 and p.node_types[0].name == "mic-2.1GHz"


# ----------------------------------------------------------------------- the preset
def test_eurora_preset() -> None:
    p = eurora_platform()
    assert p.name == "eurora" and not p.is_pooled
    assert [(nt.name, nt.count) for nt in p.node_types] == [("mic-2.1GHz", 32),
                                                           ("gpu-3.4GHz", 32)]
    cap = p.capacity_matrix()  # columns core, gpu, mic, mem
    assert cap[:32].tolist() == [[16, 0, 2, KB_32GIB]] * 32  # nodes 0-31: MIC
    assert cap[32:].tolist() == [[16, 2, 0, KB_32GIB]] * 32  # nodes 32-63: GPU
    # 400 W per node: PA-HPC-SIM's bound on a node's predicted power (no idle power)
    assert all(nt.idle_power is None and nt.max_power == 400.0 for nt in p.node_types)
    assert p.queue_ewt == {"debug": 3600, "parallel": 21600, "np_longpar": 86400,
                           "longpar": 86400, "reservation": 1800}
    assert p.ewt("debug") == 3600 and p.ewt("R") is None and p.ewt("R", 1800) == 1800
    assert DEFAULT_EWT == 1800


# ------------------------------------------------------------------ node file reader
def test_grouping_order_and_names(tmp_path: Path) -> None:
    # 6 nodes, half = 3: ids 0-2 are 2.1 GHz, 3-5 are 3.4 GHz.
    # 0 cpu, 1 cpu  -> cpu-2.1GHz x2 (consecutive identical)
    # 2 gpu         -> gpu-2.1GHz x1
    # 3 gpu         -> gpu-3.4GHz x1 (same node as 2, other frequency half)
    # 4 cpu         -> cpu-3.4GHz x1
    # 5 gpu         -> gpu-3.4GHz again, not consecutive: renamed gpu-3.4GHz-2
    text = "\n".join([
        "# a comment and a blank line are skipped",
        "",
        node_line(0, 8, 0, 0, 1000),
        node_line(1, 8, 0, 0, 1000) + "   ",
        node_line(2, 8, 1, 0, 1000),
        node_line(3, 8, 1, 0, 1000),
        node_line(4, 8, 0, 0, 1000),
        node_line(5, 8, 1, 0, 1000),
    ]) + "\n"
    p = read_eurora_nodes(write(tmp_path / "nodes_#6", text))
    assert p.name == "nodes_#6"
    assert [(nt.name, nt.count) for nt in p.node_types] == [
        ("cpu-2.1GHz", 2), ("gpu-2.1GHz", 1), ("gpu-3.4GHz", 1), ("cpu-3.4GHz", 1),
        ("gpu-3.4GHz-2", 1)]
    # node k of the platform is line k of the file
    assert p.capacity_matrix()[:, 1].tolist() == [0, 0, 1, 1, 0, 1]
    assert p.resource_names == ("core", "gpu", "mic", "mem")


def test_node_with_gpus_and_mics(tmp_path: Path) -> None:
    p = read_eurora_nodes(write(tmp_path / "nodes_x", node_line(0, 4, 1, 1, 10) + "\n"))
    assert p.node_types == (NodeType("gpu-mic-3.4GHz", 1,
                                     {"core": 4, "gpu": 1, "mic": 1, "mem": 10}, None,
                                     400.0),)


@given(st.lists(st.tuples(st.integers(1, 3), st.integers(0, 2), st.integers(0, 2)),
                min_size=1, max_size=12))
def test_node_file_round_trip(rows: list[tuple[int, int, int]]) -> None:
    # any valid file: node k has line k's capacities, and node types are the maximal
    # runs of identical consecutive nodes within each frequency half
    text = "".join(node_line(k, c, g, m, 7) + "\n" for k, (c, g, m) in enumerate(rows))
    p = parse_eurora_nodes(text, "nodes_h")
    assert p.capacity_matrix().tolist() == [[c, g, m, 7] for c, g, m in rows]
    half = len(rows) // 2
    runs = 1 + sum(1 for k in range(1, len(rows))
                   if rows[k] != rows[k - 1] or k == half)
    assert len(p.node_types) == runs
    assert len({nt.name for nt in p.node_types}) == runs  # names are unique


@pytest.mark.parametrize(
    ("lines", "line", "field", "needles"),
    [
        pytest.param([node_line(0), "1 16 0 2 33554432"], 2, None, ("expected 6 fields",),
                     id="missing-field"),
        pytest.param([node_line(0), "1 16 0 2 33554432 0 9"], 2, None, ("got 7",),
                     id="extra-field"),
        pytest.param(["0 16 x 2 33554432 0"], 1, "3 (gpus)", ("integer", "'x'"),
                     id="not-integer"),
        pytest.param(["0 16 0 2 32.5 0"], 1, "5 (memory)", ("'32.5'",), id="float-memory"),
        pytest.param(["0 16 0 -2 33554432 0"], 1, "4 (mics)", (">= 0",), id="negative"),
        pytest.param([node_line(0), node_line(2)], 2, "1 (id)", ("expected 1, got 2",),
                     id="id-gap"),
        pytest.param([node_line(1)], 1, "1 (id)", ("expected 0, got 1",), id="id-start"),
        pytest.param(["0 0 0 2 33554432 0"], 1, "2 (cores)", ("core",), id="no-cores"),
        pytest.param([node_line(0, reserved=2)], 1, "6 (reserved)", ("0 or 1",),
                     id="bad-reserved"),
        pytest.param([node_line(0, reserved=1)], 1, "6 (reserved)",
                     ("reserved nodes are not supported",), id="reserved-node"),
        pytest.param(["# nothing"], None, None, ("no nodes",), id="empty"),
    ],
)
def test_bad_node_file(tmp_path: Path, lines: list[str], line: int | None,
                       field: str | None, needles: tuple[str, ...]) -> None:
    path = write(tmp_path / "nodes_#bad", "\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        read_eurora_nodes(path)
    assert_input_error(info.value, *needles, file=str(path), line=line, field=field)


def test_node_file_not_utf8_and_missing(tmp_path: Path) -> None:
    path = tmp_path / "nodes_#1"
    path.write_bytes(b"0 16 0 2 \xff 0\n")
    with pytest.raises(InputError, match="UTF-8") as info:
        read_eurora_nodes(path)
    assert info.value.file == str(path)
    with pytest.raises(InputError, match="node file not found"):
        read_eurora_nodes(tmp_path / "nodes_#none")


# ------------------------------------------------------------------ queue file reader
def test_system_queues_file(tmp_path: Path) -> None:
    path = write(tmp_path / "system_queues", "debug 3600\n\n# c\nR   60  \n")
    assert read_system_queues(path) == {"debug": 3600, "R": 60}


@pytest.mark.parametrize(
    ("text", "line", "field", "needles"),
    [
        pytest.param("debug 3600\nparallel -5\n", 2, "2 (EWT)", ("positive", "-5"),
                     id="negative"),
        pytest.param("debug 0\n", 1, "2 (EWT)", ("positive",), id="zero"),
        pytest.param("debug 1h\n", 1, "2 (EWT)", ("'1h'",), id="not-integer"),
        pytest.param("debug 3600 x\n", 1, None, ("expected 2 fields",), id="three-fields"),
        pytest.param("debug\n", 1, None, ("expected 2 fields",), id="one-field"),
        pytest.param("debug 1\ndebug 2\n", 2, "1 (name)", ("twice",), id="duplicate"),
        pytest.param("\n", None, None, ("no queues",), id="empty"),
    ],
)
def test_bad_system_queues(tmp_path: Path, text: str, line: int | None, field: str | None,
                           needles: tuple[str, ...]) -> None:
    path = write(tmp_path / "system_queues", text)
    with pytest.raises(InputError) as info:
        read_system_queues(path)
    assert_input_error(info.value, *needles, file=str(path), line=line, field=field)


# ------------------------------------------------------------------ archive members
def test_archive_members(tmp_path: Path) -> None:
    nodes = ("\n".join(node_line(k) for k in range(4)) + "\n").encode()
    tar = make_tar(tmp_path / "sys.tar.gz", {
        "top/cfg/nodes_#4": nodes,
        "top/cfg/system_queues": b"debug 10\n",
        "top/gz/nodes_#2": gzip.compress(b"0 16 2 0 100 0\n1 16 2 0 100 0\n"),
        "a/x/q": b"debug 1\n",
        "b/x/q": b"debug 2\n",
    })
    # full name, a tail of whole path components, the bare file name
    for member in ("top/cfg/nodes_#4", "cfg/nodes_#4", "nodes_#4"):
        p = read_eurora_nodes(f"{tar}#{member}")
        assert p.n_nodes == 4 and p.name == "nodes_#4"
    assert read_system_queues(f"{tar}#system_queues") == {"debug": 10}
    assert read_eurora_nodes(f"{tar}#nodes_#2").node_types[0].name == "gpu-2.1GHz"  # gzip
    assert read_system_queues(f"{tar}#a/x/q") == {"debug": 1}
    with pytest.raises(InputError, match="ambiguous") as info:
        read_system_queues(f"{tar}#x/q")
    assert info.value.file == f"{tar}#x/q"
    with pytest.raises(InputError, match=r"no file 'nodes_#5'.*top/cfg/nodes_#4"):
        read_eurora_nodes(f"{tar}#nodes_#5")
    with pytest.raises(InputError, match="no member name"):
        read_eurora_nodes(f"{tar}#")
    # an error inside a member names ARCHIVE#FULL_MEMBER and the line
    bad = make_tar(tmp_path / "bad.tgz", {"d/nodes_#1": b"0 16 0 2 x 0\n"})
    with pytest.raises(InputError) as info:
        read_eurora_nodes(f"{bad}#nodes_#1")
    assert_input_error(info.value, file=f"{bad}#d/nodes_#1", line=1, field="5 (memory)")


def test_archive_errors(tmp_path: Path) -> None:
    missing = tmp_path / "none.tar.gz"
    assert split_archive(f"{missing}#nodes_#4") == (missing, "nodes_#4")
    with pytest.raises(InputError, match="not found") as info:
        read_eurora_nodes(f"{missing}#nodes_#4")
    assert info.value.file == str(missing)
    fake = write(tmp_path / "fake.tar.gz", "not a tar\n")
    with pytest.raises(InputError, match="tar archive") as info:
        read_eurora_nodes(f"{fake}#nodes_#4")
    assert info.value.file == str(fake)
    # an existing file whose name holds '#' is a plain file, never split
    plain = write(tmp_path / "nodes_#1", node_line(0) + "\n")
    assert split_archive(plain) == (plain, None)
    assert read_eurora_nodes(plain).n_nodes == 1


# ------------------------------------------------------------- TOML and queue tables
TOML_NODES = '[[node_type]]\nname = "n"\ncount = 2\ncapacity = { core = 4 }\n'


def test_toml_queues_table(tmp_path: Path) -> None:
    path = write(tmp_path / "p.toml", TOML_NODES + '[queues]\ndebug = 3600\n1 = 60\n')
    p = read_platform_toml(path)
    assert p.queues == (("debug", 3600), ("1", 60))
    assert read_platform(path) == p


def test_toml_queues_file(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    write(tmp_path / "conf" / "system_queues", "debug 3600\nparallel 21600\n")
    # relative to the TOML's folder; the [queues] table adds R and overrides debug
    path = write(tmp_path / "conf" / "p.toml", 'queues_file = "system_queues"\n'
                 + TOML_NODES + "[queues]\nR = 1800\ndebug = 60\n")
    p, files = load_platform_file(path)
    assert p.queue_ewt == {"debug": 60, "parallel": 21600, "R": 1800}
    assert files == (path, tmp_path / "conf" / "system_queues")


def test_toml_queues_file_in_archive(tmp_path: Path) -> None:
    make_tar(tmp_path / "sys.tar.gz", {"t/system_configs/system_queues": b"debug 7\n"})
    path = write(tmp_path / "p.toml",
                 'queues_file = "sys.tar.gz#system_configs/system_queues"\n' + TOML_NODES)
    p, files = load_platform_file(path)
    assert p.queue_ewt == {"debug": 7}
    assert files == (path, tmp_path / "sys.tar.gz")


@pytest.mark.parametrize(
    ("text", "field", "needles"),
    [
        pytest.param(TOML_NODES + "[queues]\ndebug = -3600\n", "queues.debug",
                     ("positive", "-3600"), id="negative-ewt"),
        pytest.param(TOML_NODES + "[queues]\ndebug = 0\n", "queues.debug", ("positive",),
                     id="zero-ewt"),
        pytest.param(TOML_NODES + "[queues]\ndebug = 1.5\n", "queues.debug", ("1.5",),
                     id="float-ewt"),
        pytest.param(TOML_NODES + "[queues]\ndebug = true\n", "queues.debug", ("True",),
                     id="bool-ewt"),
        pytest.param("queues = 5\n" + TOML_NODES, "queues", ("table",), id="not-a-table"),
        pytest.param("queue = { debug = 1 }\n" + TOML_NODES, "queue",
                     ("unknown keys", "queues"), id="unknown-key"),
        pytest.param("queues_file = 3\n" + TOML_NODES, "queues_file", ("file name",),
                     id="queues-file-not-a-string"),
    ],
)
def test_bad_toml_queues(tmp_path: Path, text: str, field: str,
                         needles: tuple[str, ...]) -> None:
    path = write(tmp_path / "p.toml", text)
    with pytest.raises(InputError) as info:
        read_platform_toml(path)
    assert_input_error(info.value, *needles, file=str(path), field=field)


def test_missing_queues_file_names_both_files(tmp_path: Path) -> None:
    path = write(tmp_path / "p.toml", 'queues_file = "nope"\n' + TOML_NODES)
    with pytest.raises(InputError) as info:
        read_platform_toml(path)
    assert_input_error(info.value, "queue file not found", str(path),
                       file=str(tmp_path / "nope"))


def test_platform_queue_validation() -> None:
    nt = (NodeType("n", 1, {"core": 1}),)
    assert Platform(nt, queues={"a": 5}).queues == (("a", 5),)
    with pytest.raises(InputError, match="positive"):
        Platform(nt, queues={"a": 0})
    with pytest.raises(InputError, match="twice"):
        Platform(nt, queues=(("a", 1), ("a", 2)))
    with pytest.raises(InputError, match="non-empty word"):
        Platform(nt, queues={"a b": 1})
    p = Platform(nt).with_queues({"x": 9})
    assert p.queues == (("x", 9),) and p.ewt("x") == 9 and p.ewt("y", 3) == 3
    assert Platform(nt).queues == () and Platform(nt).queue_ewt == {}


def test_file_kind_detection(tmp_path: Path) -> None:
    assert looks_like_node_file("nodes_#64")
    assert looks_like_node_file("archive.tar.gz#test_data/system_configs/nodes_#8")
    assert not looks_like_node_file("nodes_a.toml", "0 1 2 3 4 5")
    assert looks_like_node_file("eurora.txt", "# c\n\n0 16 0 2 33554432 0\n")
    assert not looks_like_node_file("cluster.cfg", 'name = "x"\n')
    sniffed = write(tmp_path / "machine.txt", node_line(0) + "\n" + node_line(1) + "\n")
    assert read_platform(sniffed).n_nodes == 2
    toml = write(tmp_path / "machine.cfg", TOML_NODES)
    assert read_platform(toml).n_nodes == 2


# -------------------------------------------------------------------------- job_ewt
def jobs_with_queues(queue: list[int], codes: list[str] | None = None) -> JobTable:
    n = len(queue)
    info = TraceInfo(codes={"queue": codes} if codes is not None else {})
    return JobTable.from_arrays(submit=list(range(n)), run=[1] * n, units=[1] * n,
                                queue=queue, info=info)


def test_job_ewt_named_queues() -> None:
    # Eurora log: codes 0..3 = debug, parallel, R, np_longpar; R is not in the table,
    # code 7 has no name; -1 has no queue -> the default (1800)
    jobs = jobs_with_queues([0, 1, 2, 3, -1, 7, 0],
                            ["debug", "parallel", "R", "np_longpar"])
    ewt = job_ewt(jobs, eurora_platform(), 1800)
    assert ewt.dtype == np.int64
    assert ewt.tolist() == [3600, 21600, 1800, 86400, 1800, 1800, 3600]


def test_job_ewt_swf_integer_queues() -> None:
    # SWF: queue k is named "k"; queue 3 is missing from the table -> default 999
    plat = Platform.homogeneous(2, 4).with_queues({"1": 60, "2": 7200, "debug": 5})
    jobs = jobs_with_queues([1, 2, 3, -1, 1, 0])
    assert job_ewt(jobs, plat, 999).tolist() == [60, 7200, 999, 999, 60, 999]


def test_job_ewt_defaults() -> None:
    jobs = jobs_with_queues([0, 1])
    assert job_ewt(jobs, Platform.homogeneous(1, 1), 42).tolist() == [42, 42]  # no table
    assert job_ewt(jobs_with_queues([]), eurora_platform(), 5).tolist() == []
    with pytest.raises(InputError, match="default_ewt"):
        job_ewt(jobs, eurora_platform(), 0)


# --------------------------------------------------------------------- command line
def test_cli_bad_node_file_is_one_error_line(tmp_path: Path, capsys) -> None:
    trace = write(tmp_path / "t.swf", "; MaxProcs: 8\n1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 -1 1 "
                  "-1 -1 -1\n")
    nodes = write(tmp_path / "nodes_#2", node_line(0) + "\n1 16 0 two 33554432 0\n")
    rc = main(["simulate", str(trace), "--platform", str(nodes)])
    err = capsys.readouterr().err.splitlines()
    assert rc == 2 and len(err) == 1
    assert err[0].startswith("error:") and f"{nodes}:2: field 4 (mics)" in err[0]


def test_cli_node_file_is_used(tmp_path: Path, capsys) -> None:
    # 2 jobs of 16 cores on a node file of 2 nodes x 16 cores: both start at t=0
    trace = write(tmp_path / "t.swf", "; MaxProcs: 32\n" + "".join(
        f"{k} 0 -1 10 16 -1 -1 16 20 -1 1 1 1 -1 1 -1 -1 -1\n" for k in (1, 2)))
    nodes = write(tmp_path / "nodes_#2", node_line(0) + "\n" + node_line(1, gpus=2, mics=0)
                  + "\n")
    out = tmp_path / "out"
    rc = main(["simulate", str(trace), "--platform", str(nodes), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs"] == 2 and summary["mean_wait"] == 0


def test_cli_missing_archive(tmp_path: Path, capsys) -> None:
    rc = main(["simulate", str(tmp_path / "t.swf"), "--platform",
               f"{tmp_path / 'x.tar.gz'}#nodes_#8"])
    err = capsys.readouterr().err.splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("error:")


def test_choose_platform_preset_and_errors(tmp_path: Path) -> None:
    assert choose_platform(None, "eurora", None, None) == eurora_platform()
    with pytest.raises(InputError, match=r"not found.*eurora"):
        choose_platform(None, "eurra", None, None)
    with pytest.raises(InputError, match="not found") as info:
        choose_platform(None, f"{tmp_path / 'x.tar.gz'}#nodes_#8", None, None)
    assert info.value.file == str(tmp_path / "x.tar.gz")


# ------------------------------------------------------------------------ campaigns
def campaign_platform(tmp_path: Path, platform: str) -> dict:
    from dispatchlab.experiment.campaign.config import load_campaign

    trace = write(tmp_path / "t.swf", "; MaxProcs: 32\n" + "".join(
        f"{k} {k} -1 10 4 -1 -1 4 20 -1 1 1 1 -1 1 -1 -1 -1\n" for k in (1, 2, 3)))
    camp = write(tmp_path / "c.toml", f"""
[campaign]
name = "eur"
[[traces]]
path = "{trace.name}"
[[platforms]]
{platform}
[[dispatchers]]
name = "fifo"
""")
    return load_campaign(camp).runs[0]


def test_campaign_node_file_and_archive(tmp_path: Path) -> None:
    write(tmp_path / "nodes_#2", node_line(0) + "\n" + node_line(1) + "\n")
    run = campaign_platform(tmp_path, 'file = "nodes_#2"')
    assert run["platform"]["label"] == "nodes_#2"
    assert run["inputs"][str((tmp_path / "nodes_#2").resolve())]
    tar = make_tar(tmp_path / "sys.tar.gz", {"x/system_configs/nodes_#2":
                                             (tmp_path / "nodes_#2").read_bytes()})
    run = campaign_platform(tmp_path, 'file = "sys.tar.gz#system_configs/nodes_#2"')
    spec = run["config"]["platform"]
    assert spec["file"] == f"{tar.resolve()}#system_configs/nodes_#2"
    assert run["inputs"][str(tar.resolve())] == file_sha256(tar)
    assert read_platform(spec["file"]).n_nodes == 2


def test_campaign_toml_with_queues_file(tmp_path: Path) -> None:
    queues = write(tmp_path / "system_queues", "debug 3600\n")
    write(tmp_path / "p.toml", 'queues_file = "system_queues"\n' + TOML_NODES)
    run = campaign_platform(tmp_path, 'file = "p.toml"')
    assert run["inputs"][str(queues)] == file_sha256(queues)  # a queue edit re-runs
    write(tmp_path / "system_queues", "debug -1\n")
    with pytest.raises(InputError, match="positive"):
        campaign_platform(tmp_path, 'file = "p.toml"')


def test_campaign_builtin_eurora(tmp_path: Path) -> None:
    run = campaign_platform(tmp_path, 'builtin = "eurora"')
    assert run["config"]["platform"] == {"builtin": "eurora"}
