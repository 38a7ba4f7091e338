"""Hypothesis strategies for small workloads that *contend* for a pooled machine.

The generated workloads are built so that the interesting dispatching cases happen
often: bursts of submissions at the same second, many jobs wider than half the
machine (so queue heads block), a mix of short and long jobs, 0-second jobs,
requested times both below (overrun) and above the actual run time, and the odd job
wider than the machine (rejected). One workload in three starts with
:func:`backfill_setup`, a burst that makes EASY backfill into the extra cores.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st


@dataclass(frozen=True)
class Workload:
    """Jobs in file order (sorted by submit, ties in file order) and the pool size."""

    capacity: int
    submit: tuple[int, ...]
    run: tuple[int, ...]
    units: tuple[int, ...]
    requested_time: tuple[int, ...]

    @property
    def n(self) -> int:
        return len(self.submit)

    def as_lists(self) -> dict[str, list[int]]:
        return {
            "submit": list(self.submit),
            "run": list(self.run),
            "units": list(self.units),
            "requested_time": list(self.requested_time),
        }


# Gaps between consecutive submissions: mostly bursts (0), sometimes spread out.
_GAPS = st.sampled_from([0, 0, 0, 0, 0, 1, 2, 3, 5, 8, 13, 30, 60])
_RUN_CLASS = st.sampled_from(["short", "medium", "long", "zero", "short", "medium", "long"])
_REQ_KIND = st.sampled_from(["over", "exact", "under", "zero", "over_big"])
# Width classes, weighted by repetition; "too_wide" (> capacity, rejected) is rare.
_WIDTH = st.sampled_from(
    ["wide", "small", "medium", "wide", "small", "medium", "wide", "small", "full", "small"] * 4
    + ["too_wide"] * 3
)


@st.composite
def jobs_row(draw: st.DrawFn, capacity: int) -> tuple[int, int, int, int]:
    """One job: (gap since previous submission, run, units, requested_time)."""
    gap = draw(_GAPS)

    if draw(st.integers(0, 5)) == 5:
        # a narrow, long job: the typical candidate for backfilling into the extra cores
        run = draw(st.integers(41, 200))
        units = draw(st.integers(1, max(1, capacity // 4)))
        return gap, run, units, draw(_requested(run))

    run_class = draw(_RUN_CLASS)
    if run_class == "zero":
        run = 0
    elif run_class == "short":
        run = draw(st.integers(1, 5))
    elif run_class == "medium":
        run = draw(st.integers(6, 40))
    else:
        run = draw(st.integers(41, 200))

    width = draw(_WIDTH)
    half = capacity // 2
    if width == "wide":
        units = draw(st.integers(half + 1, capacity))
    elif width == "small":
        units = draw(st.integers(1, max(1, capacity // 4)))
    elif width == "medium":
        units = draw(st.integers(1, max(1, half)))
    elif width == "full":
        units = capacity
    else:
        units = draw(st.integers(capacity + 1, capacity + 3))

    return gap, run, units, draw(_requested(run))


@st.composite
def _requested(draw: st.DrawFn, run: int) -> int:
    """A requested time for a job of ``run`` seconds: exact, over, under or 0."""
    kind = draw(_REQ_KIND)
    if kind == "exact":
        return run
    if kind == "over":
        return run + draw(st.integers(1, 20))
    if kind == "over_big":
        return run * draw(st.integers(2, 5)) + draw(st.integers(0, 50))
    if kind == "under":
        return draw(st.integers(0, max(0, run - 1)))
    return 0


@st.composite
def backfill_setup(draw: st.DrawFn, capacity: int) -> list[tuple[int, int, int, int]]:
    """A burst that makes EASY backfill into the extra cores (with exact estimates).

    Two jobs fill all but ``f`` cores and end at ``r1 < r2``; the head needs more than
    ``f`` but less than ``f + w1`` cores (so it is blocked and leaves ``extra > 0`` at
    its shadow time ``r1``); then a narrow job that fits in both ``f`` and the extra
    but runs past ``r1``. Rows are (gap, run, units, requested_time), gaps 0.
    """
    f = draw(st.integers(1, max(1, capacity // 4)))
    rest = capacity - f
    w1 = draw(st.integers(2, rest - 1))
    r1 = draw(st.integers(5, 30))
    head = draw(st.integers(f + 1, f + w1 - 1))
    extra = f + w1 - head
    narrow = draw(st.integers(1, min(f, extra)))
    rows = []
    for run, units in (
        (r1, w1),
        (draw(st.integers(r1 + 1, 200)), rest - w1),
        (draw(st.integers(1, 60)), head),
        (draw(st.integers(r1 + 1, 200)), narrow),
    ):
        rows.append((0, run, units, draw(_requested(run))))
    return rows


@st.composite
def workloads(
    draw: st.DrawFn,
    min_jobs: int = 5,
    max_jobs: int = 40,
    min_capacity: int = 4,
    max_capacity: int = 16,
) -> Workload:
    """A contending workload of ``min_jobs..max_jobs`` jobs on 4..16 cores."""
    capacity = draw(st.integers(min_capacity, max_capacity))
    rows = []
    if draw(st.integers(0, 2)) == 2:
        rows = draw(backfill_setup(capacity))
    rows += draw(
        st.lists(jobs_row(capacity), min_size=max(0, min_jobs - len(rows)),
                 max_size=max_jobs - len(rows))
    )
    t = draw(st.integers(0, 5))
    submit, run, units, req = [], [], [], []
    for gap, r, u, q in rows:
        t += gap
        submit.append(t)
        run.append(r)
        units.append(u)
        req.append(q)
    return Workload(capacity, tuple(submit), tuple(run), tuple(units), tuple(req))
