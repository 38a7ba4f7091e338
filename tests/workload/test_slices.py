"""Evenly spaced slices of a trace (dispatchlab.workload.slices): hand-computed plans."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.metrics import Measure
from dispatchlab.workload.slices import Slice, default_lead_in, measure_for, plan_slices


def test_default_lead_in_is_a_tenth_rounded_down() -> None:
    assert default_lead_in(200) == 20
    assert default_lead_in(15) == 1
    assert default_lead_in(9) == 0


def test_plan_default_lead_in() -> None:
    # 3 slices of 200 jobs, lead-in 200 // 10 = 20: segments of 220 rows, 660 needed,
    # 1000 - 660 = 340 free over 2 gaps of 170: segments begin at 0, 220 + 170 = 390,
    # 440 + 340 = 780; the last ends at 780 + 220 = 1000.
    assert plan_slices(1000, 3, 200) == [
        Slice(0, 0, 20, 220),
        Slice(1, 390, 410, 610),
        Slice(2, 780, 800, 1000),
    ]


def test_plan_rounding_of_gaps() -> None:
    # 4 slices of 10 jobs after 5 lead-in jobs: segments of 15, 60 needed, 40 free over
    # 3 gaps: first_k = 15 k + floor(40 k / 3) = 0, 15 + 13, 30 + 26, 45 + 40
    #   = 0, 28, 56, 85 (gaps 13, 13, 14); the last ends at 85 + 15 = 100.
    plan = plan_slices(100, 4, 10, lead_in=5)
    assert [(s.first, s.start, s.stop) for s in plan] == [
        (0, 5, 15), (28, 33, 43), (56, 61, 71), (85, 90, 100),
    ]
    assert [s.index for s in plan] == [0, 1, 2, 3]


def test_plan_exact_fit_and_single_slice() -> None:
    # 4 x (5 + 10) = 60 = n_jobs: no free job, segments back to back
    assert [s.first for s in plan_slices(60, 4, 10, lead_in=5)] == [0, 15, 30, 45]
    # one slice begins at row 0 whatever the spare jobs
    assert plan_slices(50, 1, 30, lead_in=0) == [Slice(0, 0, 0, 30)]


@pytest.mark.parametrize("seed", range(20))
def test_plan_invariants(seed: int) -> None:
    rng = np.random.default_rng(seed)
    count, jobs, lead = int(rng.integers(1, 8)), int(rng.integers(1, 50)), int(rng.integers(0, 9))
    n = count * (lead + jobs) + int(rng.integers(0, 200))
    plan = plan_slices(n, count, jobs, lead_in=lead)
    assert len(plan) == count and plan[0].first == 0
    for s in plan:
        assert (s.start - s.first, s.stop - s.start) == (lead, jobs)
    for a, b in pairwise(plan):
        assert a.stop <= b.first  # segments never overlap
        gap = b.first - a.stop
        assert gap in ((n - count * (lead + jobs)) // (count - 1),
                       -(-(n - count * (lead + jobs)) // (count - 1)))  # floor or ceil
    if count > 1:
        assert plan[-1].stop == n


def test_plan_errors() -> None:
    with pytest.raises(InputError, match=r"field slices: slice count must be >= 1, got 0"):
        plan_slices(100, 0, 10)
    with pytest.raises(InputError, match="jobs per slice must be >= 1"):
        plan_slices(100, 2, 0)
    with pytest.raises(InputError, match="lead-in must be >= 0"):
        plan_slices(100, 2, 10, lead_in=-1)
    with pytest.raises(InputError, match="slice count must be an integer"):
        plan_slices(100, True, 10)
    # 4 x (5 + 20) = 100 jobs fit in 100 but not in 99
    assert len(plan_slices(100, 4, 20, lead_in=5)) == 4
    with pytest.raises(InputError, match=r"need 4 x \(5 \+ 20\) = 100 jobs, the trace has 99"):
        plan_slices(99, 4, 20, lead_in=5)


def test_measure_for() -> None:
    s = Slice(1, 390, 410, 610)
    # the run simulates rows 390..609 (220 rows) and measures its rows 20..219
    assert measure_for(s) == "index:20:220"
    m = Measure.parse(measure_for(s))
    assert m == Measure.by_index(20, 220)
    mask = m.mask(np.zeros(220, np.int64))
    assert mask.sum() == 200 and not mask[:20].any() and mask[20:].all()
    # no lead-in: the whole selection is measured
    assert measure_for(Slice(0, 0, 0, 30)) == "index:0:30"
