"""The summary's percentiles (:func:`dispatchlab.metrics.jobs.linear_percentiles`) are
``np.percentile``'s, bit for bit, without importing ``numpy.ma``."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dispatchlab.metrics.jobs import linear_percentiles

VALUES = st.one_of(
    hnp.arrays(np.int64, st.integers(1, 80), elements=st.integers(-2**40, 2**40)),
    hnp.arrays(np.float64, st.integers(1, 80),
               elements=st.floats(-1e12, 1e12, allow_nan=False, width=64)),
    hnp.arrays(np.float64, st.integers(1, 80), elements=st.sampled_from([0.0, 1.5, 7.0])),
)


@settings(max_examples=400, deadline=None)
@given(x=VALUES, percents=st.lists(st.floats(0, 100), min_size=1, max_size=4))
def test_equal_to_numpy_percentile(x: np.ndarray, percents: list[float]) -> None:
    before = x.copy()
    got = linear_percentiles(x, tuple(percents))
    assert x.tobytes() == before.tobytes()  # the input is left as it was
    want = np.percentile(x, percents)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_nan_as_numpy_gives_it() -> None:
    x = np.array([1.0, np.nan, 3.0])
    assert np.isnan(linear_percentiles(x, (50.0, 95.0))).all()


def test_the_summary_statistics_do_not_import_numpy_ma() -> None:
    code = ("import sys\n"
            "import numpy as np\n"
            "from dispatchlab.metrics.jobs import describe\n"
            "d = describe(np.arange(1000) % 7)\n"
            "assert d['median'] == float(np.median(np.arange(1000) % 7))\n"
            "print('numpy.ma' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True)
    assert done.stdout.split() == ["False"]
