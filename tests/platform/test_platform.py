"""Platforms (constructors, TOML files and their errors) and the node allocators."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dispatchlab import InputError, Platform
from dispatchlab.dispatch.allocators import (
    ALLOCATORS,
    BestFit,
    FirstFit,
    make_allocator,
    units_per_node,
)
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.platform.files import read_platform_toml
from dispatchlab.platform.platform import NodeType

# --------------------------------------------------------------------------- constructors


def test_pooled() -> None:
    p = Platform.pooled(100)
    assert p.is_pooled
    assert p.n_nodes == 1
    assert p.resource_names == ("core",)
    assert p.total_capacity() == {"core": 100}
    assert p.capacity_matrix().tolist() == [[100]]
    assert p.capacity_matrix().dtype == np.int64
    assert p.is_core_only()
    assert p.name == "pool-100"
    assert p.describe() == "100 cores (pooled)"
    assert Platform.pooled(8, name="small").name == "small"


@pytest.mark.parametrize("cores", [0, -5])
def test_pooled_needs_cores(cores: int) -> None:
    with pytest.raises(InputError, match="cores must be > 0"):
        Platform.pooled(cores)


def test_homogeneous() -> None:
    p = Platform.homogeneous(4, 16)
    assert not p.is_pooled
    assert p.n_nodes == 4
    assert p.resource_names == ("core",)
    assert p.capacity_matrix().tolist() == [[16]] * 4
    assert p.total_capacity() == {"core": 64}
    assert p.is_core_only()
    assert p.name == "4x16"


def test_homogeneous_with_other_resources() -> None:
    p = Platform.homogeneous(2, 8, mem=1024, gpu=1)
    assert p.resource_names == ("core", "mem", "gpu")
    assert p.capacity_matrix().tolist() == [[8, 1024, 1], [8, 1024, 1]]
    assert p.total_capacity() == {"core": 16, "mem": 2048, "gpu": 2}
    assert not p.is_core_only()
    # a resource with zero capacity everywhere does not make the platform multi-resource
    assert Platform.homogeneous(2, 8, gpu=0).is_core_only()


@pytest.mark.parametrize(("nodes", "cores"), [(0, 4), (4, 0), (-1, 4), (4, -2)])
def test_homogeneous_needs_positive_sizes(nodes: int, cores: int) -> None:
    with pytest.raises(InputError, match="must be > 0"):
        Platform.homogeneous(nodes, cores)


def test_eurora() -> None:
    p = eurora_platform()
    assert p.name == "eurora"
    assert not p.is_pooled
    assert p.n_nodes == 64
    assert p.resource_names == ("core", "gpu", "mic", "mem")
    cap = p.capacity_matrix()
    assert cap.shape == (64, 4)
    assert np.all(cap[:, 0] == 16)  # 16 cores per node
    assert np.all(cap[:, 3] == 32 * 1024 * 1024)  # 32 GiB in KB (nodes_#64)
    gpu_nodes = cap[:, 1] > 0
    mic_nodes = cap[:, 2] > 0
    assert gpu_nodes.sum() == 32 and np.all(cap[gpu_nodes, 1] == 2)
    assert mic_nodes.sum() == 32 and np.all(cap[mic_nodes, 2] == 2)
    assert not np.any(gpu_nodes & mic_nodes)  # a node has GPUs or MICs, not both
    # nodes_#64 order: MIC nodes 0-31 (2.1 GHz), then GPU nodes 32-63 (3.4 GHz)
    assert np.flatnonzero(mic_nodes).tolist() == list(range(32))
    assert [nt.name for nt in p.node_types] == ["mic-2.1GHz", "gpu-3.4GHz"]
    assert p.total_capacity() == {"core": 1024, "gpu": 64, "mic": 64,
                                  "mem": 64 * 33_554_432}
    assert not p.is_core_only()


def test_constructor_validates_node_types() -> None:
    with pytest.raises(InputError, match="at least one node type"):
        Platform(())
    with pytest.raises(InputError, match="count must be an integer from 1 to"):
        Platform((NodeType("a", 0, {"core": 4}),))
    with pytest.raises(InputError, match="must be an integer from 0 to"):
        Platform((NodeType("a", 1, {"core": -1}),))


# ------------------------------------------------------------------------------- TOML

TWO_TYPES = """\
name = "mycluster"

[[node_type]]
name = "cpu"
count = 3
capacity = { core = 32, mem = 192000 }
idle_power = 100.0
max_power = 350.0

[[node_type]]
name = "gpu"
count = 2
capacity = { core = 32, gpu = 4, mem = 384000 }
"""


def write(tmp_path: Path, text: str, name: str = "platform.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_from_toml_two_node_types(tmp_path: Path) -> None:
    p = read_platform_toml(write(tmp_path, TWO_TYPES))
    assert p.name == "mycluster"
    assert not p.is_pooled
    assert p.n_nodes == 5
    assert [(nt.name, nt.count) for nt in p.node_types] == [("cpu", 3), ("gpu", 2)]
    assert p.node_types[0].idle_power == 100.0 and p.node_types[0].max_power == 350.0
    # resources in order of first appearance; a type without a resource has 0 of it
    assert p.resource_names == ("core", "mem", "gpu")
    assert p.capacity_matrix().tolist() == [[32, 192000, 0]] * 3 + [[32, 384000, 4]] * 2
    assert p.total_capacity() == {"core": 160, "mem": 3 * 192000 + 2 * 384000, "gpu": 8}
    assert p.describe() == "3 x cpu (32 core, 192,000 mem); 2 x gpu (32 core, 4 gpu, 384,000 mem)"


def test_from_toml_defaults_and_pooled(tmp_path: Path) -> None:
    p = read_platform_toml(write(tmp_path, "[[node_type]]\ncount = 2\ncapacity = { core = 4 }\n",
                                 name="tiny.toml"))
    assert p.name == "tiny"  # the file's stem
    assert p.node_types[0].name == "type0"
    pooled = read_platform_toml(write(tmp_path, 'pooled = true\n[[node_type]]\ncount = 1\n'
                                      'capacity = { core = 64 }\n'))
    assert pooled.is_pooled and pooled.total_capacity() == {"core": 64}


def test_from_toml_accepts_str_path(tmp_path: Path) -> None:
    assert read_platform_toml(str(write(tmp_path, TWO_TYPES))).n_nodes == 5


def test_from_toml_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(InputError, match="not found") as info:
        read_platform_toml(path)
    assert info.value.file == str(path)
    assert str(path) in str(info.value)


def test_from_toml_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read") as info:
        read_platform_toml(tmp_path)
    assert info.value.file == str(tmp_path)


def test_from_toml_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "x"\n[[node_type]\ncount = 2\n')
    with pytest.raises(InputError, match="invalid TOML") as info:
        read_platform_toml(path)
    assert info.value.file == str(path)
    assert "line 2" in str(info.value)  # where the syntax error is


NODE = 'name = "a"\ncount = 2\ncapacity = { core = 4 }\n'

INVALID = [
    pytest.param(f"[[node_type]]\n{NODE}turbo = true\n", "node_type[0]", "turbo",
                 id="unknown-key"),
    pytest.param(f"[[node_type]]\n{NODE}[[node_type]]\nname = \"b\"\ncount = 0\n"
                 "capacity = { core = 4 }\n", "node_type[1].count", "0", id="count-0"),
    pytest.param('[[node_type]]\ncount = -3\ncapacity = { core = 4 }\n', "node_type[0].count",
                 "-3", id="count-negative"),
    pytest.param('[[node_type]]\ncount = "2"\ncapacity = { core = 4 }\n',
                 "node_type[0].count", "'2'", id="count-string"),
    pytest.param('[[node_type]]\ncount = true\ncapacity = { core = 4 }\n',
                 "node_type[0].count", "True", id="count-bool"),
    pytest.param('[[node_type]]\ncount = 2\ncapacity = { core = 4, mem = -1 }\n',
                 "node_type[0].capacity.mem", "-1", id="capacity-negative"),
    pytest.param('[[node_type]]\ncount = 2\ncapacity = { core = 4.5 }\n',
                 "node_type[0].capacity.core", "4.5", id="capacity-float"),
    pytest.param('[[node_type]]\ncount = 2\n', "node_type[0].capacity", "capacity",
                 id="capacity-missing"),
    pytest.param('[[node_type]]\ncount = 2\ncapacity = {}\n', "node_type[0].capacity",
                 "non-empty", id="capacity-empty"),
    pytest.param(f'pooled = true\n[[node_type]]\n{NODE}[[node_type]]\nname = "b"\n'
                 "count = 1\ncapacity = { core = 4 }\n", "pooled", "exactly one",
                 id="pooled-two-node-types"),
    pytest.param(f"pooled = true\n[[node_type]]\n{NODE}", "pooled", "count = 1",
                 id="pooled-count-2"),
    pytest.param('name = "x"\n', "node_type", "[[node_type]]", id="no-node-type"),
    pytest.param('[node_type]\ncount = 2\ncapacity = { core = 4 }\n', "node_type",
                 "[[node_type]]", id="node-type-not-an-array"),
    # an unknown top-level key (here a misspelt `pooled`) must not be ignored silently
    pytest.param(f"poolde = true\n[[node_type]]\n{NODE}", "poolde", "unknown",
                 id="unknown-top-level-key"),
    pytest.param('pooled = "false"\n[[node_type]]\ncount = 1\ncapacity = { core = 4 }\n',
                 "pooled", "false", id="pooled-not-a-boolean"),
    pytest.param(f'[[node_type]]\n{NODE}idle_power = "lots"\n', "node_type[0].idle_power",
                 "lots", id="idle-power-not-a-number"),
]


@pytest.mark.parametrize(("text", "field", "needle"), INVALID)
def test_from_toml_invalid(tmp_path: Path, text: str, field: str, needle: str) -> None:
    path = write(tmp_path, text, name="bad.toml")
    with pytest.raises(InputError) as info:
        read_platform_toml(path)
    err = info.value
    msg = str(err)
    assert err.file == str(path)
    assert err.field == field
    assert msg.startswith(f"{path}: field {field}: "), msg
    assert needle in msg, msg


# ------------------------------------------------------------------------- allocators


def mat(rows: list[list[int]]) -> np.ndarray:
    return np.asarray(rows, dtype=np.int64)


def vec(values: list[int]) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


def placed(alloc) -> dict[int, int]:
    """An Allocation as {node: units}; checks its arrays."""
    assert alloc is not None, "expected the job to fit"
    assert alloc.nodes.dtype == np.int64 and alloc.counts.dtype == np.int64
    assert len(alloc.nodes) == len(alloc.counts) == len(set(alloc.nodes.tolist()))
    assert np.all(alloc.counts > 0)
    return dict(zip(alloc.nodes.tolist(), alloc.counts.tolist(), strict=True))


def test_units_per_node() -> None:
    # (core, mem) per unit (2, 100): node 0 has 5 cores (2 units) and 1000 mem (10 units)
    # -> 2; node 1: 8 cores (4) and 250 mem (2) -> 2; node 2: 1 core -> 0
    free = mat([[5, 1000], [8, 250], [1, 5000]])
    assert units_per_node(vec([2, 100]), free).tolist() == [2, 2, 0]
    # a resource the job does not request does not limit it
    assert units_per_node(vec([2, 0]), free).tolist() == [2, 4, 0]


def test_first_fit_single_resource() -> None:
    # free cores 3, 0, 5, 2; 6 one-core units: node 0 takes 3, node 1 none, node 2 the
    # remaining 3 (node 3 untouched)
    free = mat([[3], [0], [5], [2]])
    alloc = FirstFit().allocate(vec([1]), 6, free)
    assert placed(alloc) == {0: 3, 2: 3}
    assert alloc.nodes.tolist() == [0, 2]  # index order
    assert free.tolist() == [[3], [0], [5], [2]]  # the free matrix is not modified


def test_best_fit_single_resource() -> None:
    # same free cores 3, 0, 5, 2: fewest free first -> node 3 (2), node 0 (3), node 2 (5);
    # 6 units: node 3 takes 2, node 0 takes 3, node 2 the last 1
    free = mat([[3], [0], [5], [2]])
    alloc = BestFit().allocate(vec([1]), 6, free)
    assert placed(alloc) == {3: 2, 0: 3, 2: 1}
    assert alloc.nodes.tolist() == [3, 0, 2]
    # one unit goes to the tightest node that can host it (node 3), not node 1 (full)
    assert placed(BestFit().allocate(vec([1]), 1, free)) == {3: 1}


def test_best_fit_orders_by_free_amount_not_by_units() -> None:
    # 2 cores per unit; free cores 5, 2, 4 -> units 2, 1, 2. Best-fit takes the node with
    # the fewest free cores first: node 1 (2 cores, 1 unit), then node 2 (4): {1: 1, 2: 1}.
    # First-fit puts both units on node 0.
    free = mat([[5], [2], [4]])
    assert placed(BestFit().allocate(vec([2]), 2, free)) == {1: 1, 2: 1}
    assert placed(FirstFit().allocate(vec([2]), 2, free)) == {0: 2}


def test_best_fit_compares_per_resource_not_summed() -> None:
    # resources (core, mem); a unit needs 1 core and 100 mem.
    #   node 0: 6 free cores, 300 free mem    -> 3 units (mem-bound); "sum" 306
    #   node 1: 2 free cores, 10,000 free mem -> 2 units (core-bound); "sum" 10,002
    # Best-fit compares the first requested resource (cores) first: node 1 (2 cores) is
    # tighter than node 0 (6 cores). Adding cores to bytes would wrongly pick node 0.
    free = mat([[6, 300], [2, 10_000]])
    request = vec([1, 100])
    assert placed(BestFit().allocate(request, 2, free)) == {1: 2}
    assert placed(FirstFit().allocate(request, 2, free)) == {0: 2}
    # 4 units: best-fit fills node 1 (2) then node 0 (2); first-fit node 0 (3) then node 1 (1)
    assert placed(BestFit().allocate(request, 4, free)) == {1: 2, 0: 2}
    assert placed(FirstFit().allocate(request, 4, free)) == {0: 3, 1: 1}
    # 5 units is everything there is; 6 does not fit (mem limits node 0 to 3 units)
    assert placed(BestFit().allocate(request, 5, free)) == {1: 2, 0: 3}
    assert BestFit().allocate(request, 6, free) is None
    assert FirstFit().allocate(request, 6, free) is None


def test_best_fit_second_resource_breaks_ties() -> None:
    # resources (core, gpu); a unit needs 1 core and 1 gpu.
    #   node 0: 4 cores, 2 gpus -> 2 units;  node 1: 4 cores, 1 gpu -> 1 unit;
    #   node 2: 1 core, 0 gpus -> 0 units (fewest cores, but cannot host a unit)
    # Cores tie between nodes 0 and 1; node 1 has fewer free gpus, so it comes first.
    free = mat([[4, 2], [4, 1], [1, 0]])
    request = vec([1, 1])
    assert placed(BestFit().allocate(request, 1, free)) == {1: 1}
    assert placed(BestFit().allocate(request, 3, free)) == {1: 1, 0: 2}
    assert placed(FirstFit().allocate(request, 1, free)) == {0: 1}
    assert BestFit().allocate(request, 4, free) is None  # only 3 units can be hosted
    assert FirstFit().allocate(request, 4, free) is None


def test_best_fit_ignores_resources_the_job_does_not_request() -> None:
    # resources (core, gpu); a CPU-only unit (1 core, 0 gpu). Nodes 0 and 1 both have 4
    # free cores: the tie goes to the lower index (node 0) even though node 1 has fewer
    # free gpus - gpus are not compared for a job that requests none.
    free = mat([[4, 2], [4, 0]])
    assert placed(BestFit().allocate(vec([1, 0]), 1, free)) == {0: 1}
    assert placed(BestFit().allocate(vec([1, 0]), 6, free)) == {0: 4, 1: 2}


def test_allocators_when_the_job_does_not_fit() -> None:
    # cores are plentiful but no node has 1000 free mem for a unit
    free = mat([[16, 999], [16, 500]])
    for allocator in (FirstFit(), BestFit()):
        assert allocator.allocate(vec([1, 1000]), 1, free) is None
        # single resource: 2 + 3 = 5 free cores < 6 units
        assert allocator.allocate(vec([1]), 6, mat([[2], [3]])) is None
        # every node full
        assert allocator.allocate(vec([1]), 1, mat([[0], [0]])) is None


def test_make_allocator() -> None:
    assert sorted(ALLOCATORS) == ["best-fit", "consolidate", "energy-consolidate", "first-fit"]
    assert isinstance(make_allocator("first-fit"), FirstFit)
    assert isinstance(make_allocator("best-fit"), BestFit)
    with pytest.raises(InputError, match="worst-fit") as info:
        make_allocator("worst-fit")
    assert info.value.field == "allocator"


@pytest.mark.parametrize("rank", [-3, 1.5, True])
def test_a_bad_efficiency_rank_is_refused_when_built_directly(rank):
    from dispatchlab.platform.platform import NodeType

    with pytest.raises(InputError, match="efficiency_rank must be an integer >= 0"):
        Platform((NodeType("a", 2, {"core": 4}, None, None, rank),))


# ------------------------------------------------- readers outside the data class (issue 29)


def test_the_data_class_imports_no_reader() -> None:
    """``platform.platform`` is pure data: no chain of imports (TYPE_CHECKING ones
    included) leads from it to a reader, and the package has no import cycle."""
    import grimp

    graph = grimp.build_graph("dispatchlab", cache_dir=None)
    readers = ("alea", "eurora", "files", "queues", "choose", "infer")
    for reader in readers:
        assert graph.find_shortest_chain("dispatchlab.platform.platform",
                                         f"dispatchlab.platform.{reader}") is None, reader
    modules = sorted(m for m in graph.modules if m.startswith("dispatchlab.platform."))
    for a in modules:
        for b in modules:
            if a < b:
                assert not (graph.find_shortest_chain(a, b)
                            and graph.find_shortest_chain(b, a)), (a, b)


def test_the_old_reading_classmethods_warn_and_give_the_same_platform(tmp_path: Path) -> None:
    from dispatchlab.core.deprecation import REMOVED_IN, MovedWarning
    from dispatchlab.platform.files import platform_from_table, read_platform, trace_platform

    path = write(tmp_path, TWO_TYPES)
    info = type("Info", (), {"companions": None, "max_procs": 64, "max_nodes": None,
                             "source": "t.swf"})()
    cases = [(lambda: Platform.from_toml(path), read_platform_toml(path), "from_toml"),
             (lambda: Platform.from_file(path), read_platform(path), "from_file"),
             (lambda: Platform.from_dict({"node_type": [{"count": 1,
                                                         "capacity": {"core": 2}}]}),
              platform_from_table({"node_type": [{"count": 1, "capacity": {"core": 2}}]}),
              "from_dict"),
             (lambda: Platform.from_trace_header(info), trace_platform(info),
              "from_trace_header"),
             (lambda: Platform.eurora(), eurora_platform(), "eurora")]
    for old, new, name in cases:
        with pytest.warns(MovedWarning, match=rf"Platform\.{name} moved to .*removed in "
                                              rf"dispatchlab {REMOVED_IN}") as seen:
            assert old() == new
        assert seen[0].filename == __file__  # the warning points at the caller


def test_the_old_home_of_load_platform_file_warns(tmp_path: Path) -> None:
    from dispatchlab.core.deprecation import MovedWarning
    from dispatchlab.platform import files
    from dispatchlab.platform import platform as data

    with pytest.warns(MovedWarning, match="platform.platform.load_platform_file moved"):
        assert data.load_platform_file is files.load_platform_file
    with pytest.raises(AttributeError):
        data.no_such_name  # noqa: B018
