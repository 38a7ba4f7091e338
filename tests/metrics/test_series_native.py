"""The compiled core's int64 step functions and group sums (``_core.step_function``,
``_core.group_sum``, used by :mod:`dispatchlab.metrics.series`) against the numpy
reference: bit-identical results, dtypes included, and the same summary.json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import _core
from dispatchlab.cli import main
from dispatchlab.metrics import series

I64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


def _same(got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray]) -> None:
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype == np.int64
        assert np.array_equal(g, w)


@st.composite
def intervals(draw: st.DrawFn, span: int = 40) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                         int, int]:
    n = draw(st.integers(0, 400))
    base = draw(st.integers(-(2**40), 2**40))
    width = draw(st.sampled_from([span, 2**20, 2**36]))
    lo = np.array(draw(st.lists(st.integers(0, width), min_size=n, max_size=n)), np.int64) + base
    length = np.array(draw(st.lists(st.integers(0, width), min_size=n, max_size=n)), np.int64)
    huge = draw(st.booleans())
    weight = np.array(draw(st.lists(I64 if huge else st.integers(-5, 50), min_size=n,
                                    max_size=n)), np.int64)
    h0 = base + draw(st.integers(-3, width // 2))
    h1 = h0 + draw(st.integers(1, 2 * width))
    if draw(st.booleans()):
        lo.sort()  # a sorted submit column
    return lo, lo + length, weight, h0, h1


@settings(max_examples=300, deadline=None)
@given(intervals())
def test_step_function_matches_numpy(case) -> None:
    lo, hi, weight, h0, h1 = case
    ref = series._step_function_numpy(lo, hi, weight, h0, h1)
    _same(_core.step_function(lo, hi, weight, h0, h1), (ref.times, ref.values))
    # and through the public function (the fast path taken)
    got = series.step_function(lo, hi, weight, horizon=(h0, h1))
    _same((got.times, got.values), (ref.times, ref.values))
    assert got.end == ref.end == h1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.one_of(st.integers(-3, 30), I64), I64), min_size=1,
                max_size=600))
def test_group_sum_matches_numpy(pairs) -> None:
    keys = np.array([k for k, _ in pairs], np.int64)
    weights = np.array([w for _, w in pairs], np.int64)
    with np.errstate(over="ignore"):
        want = series._group_sum_numpy(keys, weights)
    _same(_core.group_sum(keys, weights), want)


def test_large_unsorted_columns_match_numpy() -> None:
    """Beyond hypothesis's sizes: the radix sort's passes (a trace-like span)."""
    rng = np.random.default_rng(7)
    lo = np.sort(rng.integers(0, 10**8, 50_000))
    hi = lo + rng.integers(0, 10**6, lo.size)
    start = lo + rng.integers(0, 10**5, lo.size)
    weight = rng.integers(1, 4096, lo.size)
    for a, b in ((lo, start), (start, hi)):
        h0, h1 = int(a.min()), int(b.max())
        ref = series._step_function_numpy(a, b, weight, h0, h1)
        _same(_core.step_function(a, b, weight, h0, h1), (ref.times, ref.values))
        secs = ref.durations()
        _same(_core.group_sum(ref.values, secs), series._group_sum_numpy(ref.values, secs))


def test_bad_arguments_are_value_errors() -> None:
    one = np.zeros(1, np.int64)
    with pytest.raises(ValueError, match="differ in length"):
        _core.step_function(one, np.zeros(2, np.int64), one, 0, 1)
    with pytest.raises(ValueError, match="empty horizon"):
        _core.step_function(one, one, one, 5, 5)
    with pytest.raises(ValueError, match="differ in length"):
        _core.group_sum(one, np.zeros(2, np.int64))


def test_float_weights_stay_in_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A float sum's order would change its rounding: numpy computes it."""
    def refuse(*args: object) -> None:
        raise AssertionError("the compiled core was called for float weights")

    monkeypatch.setattr(series._core, "step_function", refuse)
    f = series.step_function([0, 1], [3, 2], np.array([0.1, 0.2]))
    assert f.values.dtype == np.float64


@pytest.mark.parametrize("by", [False, True])
def test_summary_identical_without_the_core(kth_trace: Path, tmp_path: Path, capsys,
                                            monkeypatch: pytest.MonkeyPatch, by: bool) -> None:
    """The summary (a run's metrics, per group with --by) is the same with the
    compiled series and with numpy's."""

    def run(name: str) -> dict:
        args = ["simulate", str(kth_trace),
                "--dispatcher", "easy", "--out", str(tmp_path / name)]
        if by:
            args += ["--by", "user"]
        assert main(args) == 0, capsys.readouterr().err
        summary = json.loads((tmp_path / name / "summary.json").read_text())
        for key in [k for k in summary if k.endswith("_seconds")]:
            del summary[key]
        return summary

    native = run("native")
    monkeypatch.setattr(series, "_core", None)
    assert run("numpy") == native
