"""The per-job results as Arrow arrays over the numpy buffers
(:func:`dispatchlab.sim.result.arrow_array`), and what writing them imports."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from dispatchlab.sim.result import arrow_array


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int8, np.uint8, np.float64, bool])
def test_the_same_array_as_pyarrow_array(dtype) -> None:
    rng = np.random.default_rng(7)
    values = (rng.integers(-50, 50, 37) > 0 if dtype is bool
              else rng.integers(-50, 50, 37).astype(dtype))
    for part in (values, values[3:], values[5:30:3]):  # offsets, strides
        got = arrow_array(part)
        assert got.equals(pa.array(part)) and got.type == pa.array(part).type


def test_nulls_where_not_valid_and_no_copy() -> None:
    x = np.array([1.5, np.nan, 3.0, np.nan, 5.0, 6.0, 7.0, 8.0, 9.0])
    got = arrow_array(x, valid=~np.isnan(x))
    assert got.equals(pa.array(x, mask=np.isnan(x))) and got.null_count == 2
    assert got.to_pylist() == [1.5, None, 3.0, None, 5.0, 6.0, 7.0, 8.0, 9.0]
    assert arrow_array(x[:1], valid=np.ones(1, bool)).null_count == 0
    ints = np.arange(10, dtype=np.int64)
    assert arrow_array(ints).buffers()[1].address == ints.ctypes.data  # no copy


def test_writing_a_run_imports_neither_pandas_nor_arrow_compute(tmp_path) -> None:
    """``pyarrow.array`` imports pandas (and with it ``pyarrow.compute``), about 0.3 s of
    every ``simulate --out``; the outputs are built from buffers instead."""
    code = ("import sys\n"
            "from dispatchlab import Platform, Simulation\n"
            "from dispatchlab.dispatch import EASY\n"
            "from dispatchlab.run.outputs import write_result\n"
            "from dispatchlab.workload.synthetic import generate_synthetic\n"
            "jobs = generate_synthetic(300, cores=32, seed=3, load=0.9)\n"
            "result = Simulation(Platform.pooled(32), jobs, EASY()).run()\n"
            f"write_result(result, {str(tmp_path)!r}, csv=True)\n"
            "print(sorted(m for m in ('pandas', 'pyarrow.compute') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    assert out.split("\n")[-2] == "[]"
    assert (tmp_path / "jobs.parquet").is_file() and (tmp_path / "jobs.csv").is_file()
