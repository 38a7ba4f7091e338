"""The seeded Slurm cluster of ``benchmarks/gen_slurm_cluster.py``: the same seed gives
the same bytes, and the export reads as the jobs the generator drew."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from dispatchlab.platform.files import read_platform
from dispatchlab.workload.sacct import read_sacct

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gen() -> ModuleType:  # the benchmark script as a module
    path = ROOT / "benchmarks" / "gen_slurm_cluster.py"
    spec = importlib.util.spec_from_file_location("gen_slurm_cluster", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_same_seed_same_bytes(gen, tmp_path: Path) -> None:
    a = gen.write_cluster(tmp_path / "a", jobs=300, seed=0, platform_format="both")
    b = gen.write_cluster(tmp_path / "b", jobs=300, seed=0, platform_format="both")
    c = gen.write_cluster(tmp_path / "c", jobs=300, seed=1, platform_format="both")
    for key in ("sacct", "slurm.conf", "toml"):
        assert Path(a[key]).read_bytes() == Path(b[key]).read_bytes(), key
    assert Path(a["sacct"]).read_bytes() != Path(c["sacct"]).read_bytes()
    # both parts of the cluster are offered the asked load
    assert a["load_cpu"] == pytest.approx(0.85, rel=1e-4)
    assert a["load_gpu"] == pytest.approx(0.85, rel=1e-4)


def test_export_reads_as_drawn(gen, tmp_path: Path) -> None:
    w = gen.write_cluster(tmp_path, jobs=500, seed=3, platform_format="toml")
    drawn = gen.make_jobs(500, seed=3)
    jobs = read_sacct(w["sacct"])
    assert len(jobs) == 500
    assert jobs.info.skipped["job steps folded"] == 1000
    order = np.argsort(jobs["job_id"])
    assert np.array_equal(jobs["job_id"][order], drawn["raw"])
    assert np.array_equal(jobs["run"][order], drawn["run"])
    assert np.array_equal(jobs["alloc_procs"][order], drawn["alloc_cpus"])
    assert np.array_equal(jobs["req_procs"][order], drawn["req_cpus"])
    assert np.array_equal(jobs["req_time"][order], drawn["limit_min"] * 60)
    assert np.array_equal(jobs["req_gpus"][order], drawn["gpus"] * drawn["nodes"])
    assert np.array_equal(jobs["nodes_used"][order], drawn["nodes"])
    waits = drawn["start"] - drawn["submit"]
    assert np.array_equal(jobs["wait"][order], waits) and waits.min() >= 0
    names = np.asarray(jobs.info.codes["queue"], dtype=object)[jobs["queue"][order]]
    assert list(names) == list(gen.PARTITIONS[drawn["part"]])
    # memory per CPU in KB, as the reader converts a 21.08+ total
    kb = np.rint(drawn["mem"] * 1024 / drawn["alloc_cpus"]).astype(np.int64)
    assert np.array_equal(jobs["req_mem"][order], kb)
    # the TOML twin: 1,000 nodes of the documented capacities
    plat = read_platform(w["toml"])
    cap = plat.capacity_matrix()
    names_r = list(plat.resource_names)
    assert cap.shape[0] == 1000
    assert int(cap[:, names_r.index("gpu")].sum()) == 400
    assert int(cap[:, names_r.index("core")].sum()) == 900 * 64 + 100 * 32
