"""A campaign's ``engine`` (``[campaign] engine = "auto" | "native" | "python"``): the
runs use it, every stored run records the engine that ran (``runs.engine``), and the
default keeps the run keys of campaigns that do not set it."""

from __future__ import annotations

import json

import pytest

from campaign_helpers import connect, stored_runs, synthetic_trace, write_campaign
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.campaign import load_campaign, run_campaign

pytest.importorskip("dispatchlab._core", reason="the native core is not built (make native)")


def _campaign(folder, trace, engine: str | None, name: str = "c.toml"):
    line = "" if engine is None else f'engine = "{engine}"'
    return write_campaign(folder, f"""
[campaign]
name = "engines"
{line}

[[traces]]
label = "syn"
path = "{trace}"

[[platforms]]
cores = 64

[[dispatchers]]
name = "fifo"
[[dispatchers]]
name = "easy"
[[dispatchers]]
name = "prb"

[[predictors]]
name = "walltime"
""", name)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    return synthetic_trace(tmp_path_factory.mktemp("engine"), 300, seed=4, cores=64)


def test_every_stored_run_records_its_engine(tmp_path, trace):
    auto = tmp_path / "auto"
    auto.mkdir()
    run_campaign(_campaign(auto, trace, None), workers=1)
    rows = {r["dispatcher"]: r for r in stored_runs(auto / "results.duckdb").values()}
    assert {d: r["engine"] for d, r in rows.items()} == {
        "fifo": "native", "easy": "native", "prb": "python"}
    assert all(json.loads(r["summary"])["engine"] == r["engine"] for r in rows.values())
    python = tmp_path / "python"
    python.mkdir()
    run_campaign(_campaign(python, trace, "python"), workers=1)
    again = {r["dispatcher"]: r for r in stored_runs(python / "results.duckdb").values()}
    assert {r["engine"] for r in again.values()} == {"python"}
    # the same schedules: the stored jobs of the native runs are the Python engine's
    for d in ("fifo", "easy"):
        got = []
        for folder, row in ((auto, rows[d]), (python, again[d])):
            con = connect(folder / "results.duckdb")
            got.append(con.execute("SELECT job_id, start_time, end_time, status, estimate "
                                   "FROM jobs WHERE run_key = ? ORDER BY rowid",
                                   [row["run_key"]]).fetchall())
            con.close()
        assert got[0] == got[1] and len(got[0]) == 300


def test_the_engine_is_part_of_the_configuration_only_when_set(tmp_path, trace):
    default = load_campaign(_campaign(tmp_path, trace, None))
    auto = load_campaign(_campaign(tmp_path, trace, "auto", "auto.toml"))
    python = load_campaign(_campaign(tmp_path, trace, "python", "python.toml"))
    assert default.keys == auto.keys  # auto is the default: same keys as before
    assert all("engine" not in r["config"] for r in default.runs)
    assert {r["engine"] for r in python.runs} == {"python"}
    assert not set(python.keys) & set(default.keys)


def test_a_run_the_native_engine_cannot_simulate_fails_naming_why(tmp_path, trace):
    report = run_campaign(_campaign(tmp_path, trace, "native"), workers=1)
    assert (report.total, report.failed) == (3, 1)
    rows = {r["dispatcher"]: r for r in stored_runs(tmp_path / "results.duckdb").values()}
    assert rows["prb"]["status"] == "failed" and rows["prb"]["engine"] is None
    assert "dispatcher 'prb' is not native yet" in rows["prb"]["error"]
    assert rows["easy"]["engine"] == "native"


def test_a_bad_engine_is_refused(tmp_path, trace):
    with pytest.raises(InputError, match=r"engine must be one of auto, native, python, "
                                         r"got 'pyhton' \(did you mean 'python'\?\)"):
        load_campaign(_campaign(tmp_path, trace, "pyhton"))
