"""Node-level EASY and conservative on the native engine through the run layer:
``dispatchlab simulate --engine native`` on a platform of nodes (two node types with
cores, GPUs and memory, node weights and efficiency ranks that differ) writes the
``jobs.parquet`` of ``--engine python`` byte for byte (allocations included), with the
same event and pass counts, under easy (K reservations, backfill orders, a queue
priority) and conservative with every native allocator; ``auto`` runs them natively."""

from __future__ import annotations

import pytest

from test_engine_cli import assert_same_files, simulate, summary, synthetic_trace
from test_native_nodes_cli import platform_file

pytest.importorskip("dispatchlab._core", reason="the native core is not built (make native)")


@pytest.mark.parametrize(("dispatcher", "extra"), [
    ("easy", ()),
    ("easy:order=sjf", ("--allocator", "best-fit", "--predictor", "real")),
    ("easy:reservations=3", ("--allocator", "consolidate", "--overrun", "kill")),
    ("easy:priority=walltime:scope=queue", ("--allocator", "energy-consolidate")),
    ("conservative", ("--allocator", "energy-consolidate")),
    ("conservative:order=sjf", ("--predictor", "real", "--overrun", "kill")),
])
def test_native_and_python_write_the_same_jobs_parquet(capsys, tmp_path, dispatcher, extra):
    trace = synthetic_trace(tmp_path, 300, seed=23, cores=112)
    assert_same_files(capsys, tmp_path, trace, "--platform", str(platform_file(tmp_path)),
                      "--dispatcher", dispatcher, *extra)


def test_auto_runs_node_level_backfilling_natively(capsys, tmp_path):
    trace = synthetic_trace(tmp_path, 100, seed=24, cores=112)
    out = tmp_path / "out"
    rc, text, err = simulate(capsys, trace, out, "--platform", str(platform_file(tmp_path)),
                             "--dispatcher", "conservative", "--allocator", "best-fit")
    assert rc == 0, err
    assert summary(out)["engine"] == "native" and "engine: native" in text
