"""Node-level runs on the native engine through the run layer: ``dispatchlab simulate
--engine native`` on a platform of nodes (two node types with cores, GPUs and memory,
node weights and efficiency ranks that differ) writes the ``jobs.parquet`` of
``--engine python`` byte for byte (allocations included), with the same event and pass
counts, under fifo, sjf and ljf with every native allocator; ``auto`` runs them
natively."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_engine_cli import assert_same_files, simulate, summary, synthetic_trace

pytest.importorskip("dispatchlab._core", reason="the native core is not built (make native)")

PLATFORM = """\
[[node_type]]
name = "big"
count = 6
capacity = { core = 8, gpu = 2, mem = 64 }
weight = 5
efficiency_rank = 1

[[node_type]]
name = "small"
count = 10
capacity = { core = 4, mem = 16 }
"""


def platform_file(folder: Path) -> Path:
    path = folder / "nodes.toml"
    path.write_text(PLATFORM)
    return path


@pytest.mark.parametrize(("dispatcher", "extra"), [
    ("fifo", ()),
    ("sjf", ("--allocator", "best-fit", "--predictor", "real")),
    ("sjf:skip=True", ("--allocator", "consolidate", "--overrun", "kill")),
    ("ljf:skip=True", ("--allocator", "energy-consolidate")),
    ("ljf", ("--allocator", "first-fit", "--predictor", "real", "--overrun", "kill")),
])
def test_native_and_python_write_the_same_jobs_parquet(capsys, tmp_path, dispatcher, extra):
    trace = synthetic_trace(tmp_path, 400, seed=21, cores=112)
    assert_same_files(capsys, tmp_path, trace, "--platform", str(platform_file(tmp_path)),
                      "--dispatcher", dispatcher, *extra)


def test_auto_runs_node_level_lists_natively(capsys, tmp_path):
    trace = synthetic_trace(tmp_path, 100, seed=22, cores=112)
    out = tmp_path / "out"
    rc, text, err = simulate(capsys, trace, out, "--platform", str(platform_file(tmp_path)),
                             "--dispatcher", "ljf:skip=True", "--allocator", "best-fit")
    assert rc == 0, err
    assert summary(out)["engine"] == "native" and "engine: native" in text
