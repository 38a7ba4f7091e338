"""Decision-time metrics and dispatcher facts: the per-pass wall-time summary
(calls / mean / p50 / p99 / max / total), the run-level facts a dispatcher or the
engine supplies (``finished``, ``cp_*``), their store columns (also in a database
written before they were declared) and the report's decision-time cell."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from campaign_helpers import connect
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.campaign import store
from dispatchlab.metrics import decision_time_stats, summarize
from dispatchlab.metrics.keys import (
    BY_KEY,
    DISPATCHER_FACTS,
    METRICS,
    WALL_CLOCK,
    summary_values,
)
from dispatchlab.metrics.summary import check_dispatcher_facts
from dispatchlab.run.outputs import run_summary

# Two jobs on 2 cores (s): job 0 submit 0, start 0, end 10; job 1 submit 0, start 10,
# end 20. Enough for a valid summary; the tests here look at the other keys.
JOBS = ([0, 0], [0, 10], [10, 20], [0, 0], [2, 2], {"core": [1, 1]}, {"core": 2})

DECISION_KEYS = ("decision_calls", "mean_decision_time", "p50_decision_time",
                 "p99_decision_time", "max_decision_time", "total_decision_time")
FACTS = {"finished": True, "cp_passes": 3, "cp_improved_share": 2 / 3,
         "cp_limit_hits": 1, "cp_mean_modelled": 12.5}


# ------------------------------------------------------------------ the statistics
def test_four_passes_hand_computed() -> None:
    # [0.1, 0.2, 0.3, 0.4] s, "linear" percentiles, h = q / 100 x (n - 1):
    #   p50: h = 0.5 x 3 = 1.5   -> x[1] + 0.5 x (x[2] - x[1]) = 0.2 + 0.05 = 0.25
    #   p99: h = 0.99 x 3 = 2.97 -> x[2] + 0.97 x (x[3] - x[2]) = 0.3 + 0.097 = 0.397
    #   mean 1.0 / 4 = 0.25, max 0.4, total 1.0; the order of the passes does not matter
    for times in ([0.1, 0.2, 0.3, 0.4], [0.4, 0.1, 0.3, 0.2]):
        d = decision_time_stats(times)
        assert d["calls"] == 4
        assert d["mean"] == pytest.approx(0.25, rel=1e-12)
        assert d["p50"] == pytest.approx(0.25, rel=1e-12)
        assert d["p99"] == pytest.approx(0.397, rel=1e-12)
        assert d["max"] == 0.4
        assert d["total"] == pytest.approx(1.0, rel=1e-12)


def test_one_pass_every_statistic_is_that_pass() -> None:
    d = decision_time_stats(np.array([0.125]))
    assert d == {"calls": 1, "mean": 0.125, "p50": 0.125, "p99": 0.125, "max": 0.125,
                 "total": 0.125}


@pytest.mark.parametrize("times", [None, [], np.zeros(0)])
def test_no_pass(times) -> None:
    d = decision_time_stats(times)
    assert d["calls"] == 0 and d["total"] == 0.0
    assert all(math.isnan(d[k]) for k in ("mean", "p50", "p99", "max"))
    # in the summary: 0 calls, total 0, the undefined statistics None (JSON null)
    s = summarize(*JOBS, decision_times=times)
    assert s["decision_calls"] == 0 and s["total_decision_time"] == 0.0
    for key in ("mean_decision_time", "p50_decision_time", "p99_decision_time",
                "max_decision_time"):
        assert key in s and s[key] is None
        assert BY_KEY[key].format(s[key]) == "-"


@pytest.mark.parametrize("bad", [[-0.1], [float("nan")], [float("inf")], [[0.1, 0.2]]])
def test_bad_decision_times(bad) -> None:
    with pytest.raises(InputError, match="decision times") as err:
        decision_time_stats(bad)
    assert err.value.field == "decision_times"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 10, allow_nan=False, allow_infinity=False), min_size=1,
                max_size=50))
def test_statistics_are_ordered_and_match_numpy(times: list[float]) -> None:
    d = decision_time_stats(times)
    x = np.asarray(times)
    tol = 1e-12 * (1 + x.max())
    assert d["calls"] == len(times)
    assert x.min() - tol <= d["p50"] <= d["p99"] + tol <= d["max"] + 2 * tol
    assert x.min() - tol <= d["mean"] <= d["max"] + tol
    assert d["max"] == x.max()
    assert d["total"] == pytest.approx(x.sum(), rel=1e-12, abs=1e-12)
    # numpy's median is the linear 50th percentile, up to rounding (mean vs interpolation)
    assert d["p50"] == pytest.approx(float(np.median(x)), rel=1e-12, abs=1e-12)
    assert d["p99"] == np.percentile(x, 99)


def test_summary_decision_keys_in_seconds() -> None:
    s = summarize(*JOBS, decision_times=[0.1, 0.2, 0.3, 0.4])
    assert [s[k] for k in DECISION_KEYS] == pytest.approx([4, 0.25, 0.25, 0.397, 0.4, 1.0],
                                                          rel=1e-12)
    assert json.loads(json.dumps(s, allow_nan=False)) == s


def test_declared_keys() -> None:
    for key in DECISION_KEYS[1:]:
        m = BY_KEY[key]
        assert (m.unit, m.sql, m.better, m.wall_clock) == ("s", "DOUBLE", "lower", True)
    assert not BY_KEY["decision_calls"].wall_clock  # the count is deterministic
    assert set(DECISION_KEYS[1:]) <= WALL_CLOCK
    assert BY_KEY["p50_decision_time"].format(0.000123) == "1.23e-04"
    # every declared fact is a declared metric, none is computed from the schedule
    assert set(DISPATCHER_FACTS) <= set(BY_KEY)
    assert not set(DISPATCHER_FACTS) & set(summarize(*JOBS))
    # one column per metric, names unique
    assert len({m.key for m in METRICS}) == len(METRICS)


# ----------------------------------------------------------------- dispatcher facts
def test_summarize_copies_dispatcher_facts() -> None:
    s = summarize(*JOBS, decision_times=[0.1, 0.2, 0.3, 0.4],
                  dispatcher_facts={**FACTS, "cp_solver": "cp-sat",
                                    "cp_status_counts": {"OPTIMAL": np.int64(2)}})
    # bool -> int for the BIGINT ``finished``; numpy scalars unwrapped; others as given
    assert s["finished"] == 1 and type(s["finished"]) is int
    assert (s["cp_passes"], s["cp_limit_hits"]) == (3, 1)
    assert s["cp_improved_share"] == pytest.approx(2 / 3) and s["cp_mean_modelled"] == 12.5
    assert s["cp_solver"] == "cp-sat" and s["cp_status_counts"] == {"OPTIMAL": 2}
    assert json.loads(json.dumps(s, allow_nan=False)) == s
    values = summary_values(s)
    given = {**FACTS, "finished": 1}
    assert {k: values[k] for k in given} == given
    # the facts this run does not supply (power ones) are None
    assert all(values[k] is None for k in DISPATCHER_FACTS if k not in given)
    # the computed keys are the same with and without facts
    plain = summarize(*JOBS, decision_times=[0.1, 0.2, 0.3, 0.4])
    assert {k: v for k, v in s.items() if k in plain} == plain


def test_absent_facts_are_none_and_shown_as_dash() -> None:
    s = summarize(*JOBS)
    assert not set(DISPATCHER_FACTS) & set(s)
    values = summary_values(s)
    assert all(values[k] is None for k in DISPATCHER_FACTS)
    assert all(BY_KEY[k].format(values[k]) == "-" for k in DISPATCHER_FACTS)
    assert summary_values(None)["finished"] is None
    # a fact given as None or NaN (undefined for this run) is None too
    s = summarize(*JOBS, dispatcher_facts={"cp_improved_share": float("nan"),
                                           "cp_mean_modelled": None,
                                           "finished": np.bool_(False)})
    assert s["cp_improved_share"] is None and s["cp_mean_modelled"] is None
    assert s["finished"] == 0 and BY_KEY["finished"].format(s["finished"]) == "0"


def test_a_run_stopped_by_its_budget() -> None:
    s = summarize(*JOBS, dispatcher_facts={"finished": 0})
    assert s["finished"] == 0 and BY_KEY["finished"].better == "higher"


@pytest.mark.parametrize(("facts", "field", "match"), [
    ({"mean_wait": 1.0}, "mean_wait", "computes itself"),
    ({"p99_decision_time": 1.0}, "p99_decision_time", "computes itself"),
    ({"finished": 2}, "finished", r"outside \[0, 1\]"),
    ({"cp_improved_share": 1.5}, "cp_improved_share", "outside"),
    ({"cp_passes": -1}, "cp_passes", "outside"),
    ({"cp_passes": 2.5}, "cp_passes", "integer"),
    ({"cp_mean_modelled": float("inf")}, "cp_mean_modelled", "outside"),
    ({"cp_passes": "3"}, "cp_passes", "number"),
    ({"cp_passes": 2, "cp_limit_hits": 3}, "cp_limit_hits", "exceeds cp_passes"),
    ({"cp_passes": 5}, "cp_passes", "exceeds the dispatcher calls"),
    ({"notes": object()}, "notes", "JSON"),
    ({"": 1}, "dispatcher_facts", "non-empty strings"),
    ({3: 1}, "dispatcher_facts", "non-empty strings"),
    ([("finished", 1)], "dispatcher_facts", "mapping"),
])
def test_bad_dispatcher_facts(facts, field, match) -> None:
    # four decision times: four dispatcher calls, so cp_passes may be at most 4
    with pytest.raises(InputError, match=match) as err:
        summarize(*JOBS, decision_times=[0.1, 0.2, 0.3, 0.4], dispatcher_facts=facts)
    assert err.value.field == field


def test_check_dispatcher_facts_alone() -> None:
    assert check_dispatcher_facts(None) == {}
    assert check_dispatcher_facts({"cp_passes": np.int32(4), "cp_limit_hits": 4.0}) == \
        {"cp_passes": 4, "cp_limit_hits": 4}
    # without decision times, cp_passes is not compared with the (unknown) calls
    assert summarize(*JOBS, dispatcher_facts={"cp_passes": 9})["cp_passes"] == 9


# ---------------------------------------------------------- a real simulation run
def test_a_simulation_summary_has_every_decision_key() -> None:
    from dispatchlab.dispatch import make_dispatcher
    from dispatchlab.platform import Platform
    from dispatchlab.predict import make_predictor
    from dispatchlab.sim import Simulation
    from dispatchlab.workload.synthetic import generate_synthetic

    result = Simulation(Platform.pooled(32), generate_synthetic(60, cores=32, seed=3),
                        make_dispatcher("easy"), make_predictor("walltime")).run()
    s = run_summary(result)
    x = result.decision_times
    assert s["decision_calls"] == len(x) > 0
    assert s["p50_decision_time"] <= s["p99_decision_time"] <= s["max_decision_time"]
    assert s["max_decision_time"] == x.max()
    assert s["total_decision_time"] == pytest.approx(x.sum())


# --------------------------------------------------------------------- the store
def _outcome(key: str, summary: dict | None, status: str = "done") -> dict:
    spec = {"run_key": key, "campaign": "t", "trace": {"label": "tiny", "path": None},
            "platform": {"label": "pool2"},
            "dispatcher": {"label": "cp", "name": "cp"},
            "predictor": {"label": "walltime", "name": "walltime"}, "seed": 0,
            "repetition": 0, "tau": 10.0, "overrun": "run",
            "config": {"dispatcher": {"name": "cp"}}, "trace_sha256": "0" * 64,
            "version": store.package_version(), "code_hash": "x", "workload": "seed=0"}
    return {"spec": spec, "status": status, "summary": summary,
            "finished_at": dt.datetime(2024, 1, 1), "cores": 2, "node_level": False,
            "worker": "test:1", "nodes": None, "wall_seconds": 0.1,
            "simulate_seconds": 0.05, "jobs": None, "series": None,
            "series_start": None, "series_end": None,
            "error": None if status == "done" else "boom"}


NEW_COLUMNS = ("p50_decision_time", "max_decision_time", *DISPATCHER_FACTS)


@pytest.fixture
def db(tmp_path) -> Path:
    """A database with a CP run (facts given), a plain run (no facts) and a failed run."""
    path = tmp_path / "results.duckdb"
    times = [0.1, 0.2, 0.3, 0.4]
    con = store.open_write(path)
    try:
        store.store_outcomes(con, [
            _outcome("cp", summarize(*JOBS, decision_times=times, dispatcher_facts=FACTS)),
            _outcome("plain", summarize(*JOBS, decision_times=times)),
            _outcome("broken", None, status="failed"),
        ])
    finally:
        con.close()
    return path


def _rows(path: Path) -> dict[str, dict]:
    con = connect(path)
    try:
        cur = con.execute("SELECT * FROM runs")
        cols = [d[0] for d in cur.description]
        return {r[0]: dict(zip(cols, r, strict=True)) for r in cur.fetchall()}
    finally:
        con.close()


def _check(rows: dict[str, dict]) -> None:
    cp, plain, broken = rows["cp"], rows["plain"], rows["broken"]
    for r in (cp, plain):
        assert r["decision_calls"] == 4
        assert r["p50_decision_time"] == pytest.approx(0.25)
        assert r["max_decision_time"] == pytest.approx(0.4)
    assert (cp["finished"], cp["cp_passes"], cp["cp_limit_hits"]) == (1, 3, 1)
    assert cp["cp_improved_share"] == pytest.approx(2 / 3)
    assert cp["cp_mean_modelled"] == 12.5
    assert all(plain[k] is None and broken[k] is None for k in DISPATCHER_FACTS)
    assert broken["max_decision_time"] is None


def test_store_round_trip(db) -> None:
    _check(_rows(db))
    con = connect(db)
    try:
        types = dict(con.execute("SELECT name, type FROM pragma_table_info('runs')")
                     .fetchall())
    finally:
        con.close()
    assert {k: types[k] for k in NEW_COLUMNS} == {k: BY_KEY[k].sql for k in NEW_COLUMNS}


def test_a_database_written_before_the_new_keys_gets_their_columns(db) -> None:
    # the file as an older dispatchlab wrote it: the summaries hold the values, the
    # runs table lacks the columns
    con = store.open_write(db)
    try:
        for col in NEW_COLUMNS:
            con.execute(f"ALTER TABLE runs DROP COLUMN {col}")
    finally:
        con.close()
    assert not set(NEW_COLUMNS) & set(_rows(db)["cp"])
    # reading: the view computes them from the stored summary (nothing written)
    con = store.open_read(db)
    try:
        runs, _ = store.select_runs(con, include_outdated=True)
    finally:
        con.close()
    assert not set(NEW_COLUMNS) & set(_rows(db)["cp"])
    _check({r["run_key"]: r for r in runs})
    # writing: the columns are added and filled from the summary
    store.open_write(db).close()
    _check(_rows(db))


# -------------------------------------------------------------------- the report
def test_report_decision_cell() -> None:
    from dispatchlab.report.html import _decision_cell

    # seconds shown in milliseconds, 3 significant digits: 0.25 s, 0.397 s, 0.4 s
    assert _decision_cell({"mean_decision_time": 0.25, "p99_decision_time": 0.397,
                           "max_decision_time": 0.4}) == "250 / 397 / 400"
    assert _decision_cell({"mean_decision_time": 1.234e-5, "p99_decision_time": 2.5,
                           "max_decision_time": 12.0}) == "0.0123 / 2,500 / 12,000"
    # no call: the statistics are null; a failed run has nothing
    assert _decision_cell({"mean_decision_time": None, "p99_decision_time": 1e-3,
                           "max_decision_time": None}) == "- / 1 / -"
    assert _decision_cell({}) == ""


def test_report_shows_decision_time_and_facts(db, tmp_path) -> None:
    from dispatchlab.report.html import DECISION_HEADER, write_report

    text = write_report(db, tmp_path / "rep", include_outdated=True).read_text()
    assert f">{DECISION_HEADER}</th>" in text
    assert '<td class="num">250 / 397 / 400</td>' in text
    # the statistics table lists the mean decision time (s, the declared format)
    assert ">mean decision s</th>" in text and "2.50e-01" in text
    # the facts fold out per run
    assert "<dt>cp_passes</dt><dd>3</dd>" in text
    assert "<dt>finished</dt><dd>1</dd>" in text
