"""Seed 004 campaigns: dispatcher entries with a duration model, traces with a hot start,
generated Eurora instances, archive patterns, job power carried by the workload, and caps
as shares of a reference uncapped ``bf`` run's peak (computed in the worker)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from campaign_helpers import connect, stored_runs, write_campaign
from conftest import TRACES_DIR
from dispatchlab import Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.experiment.campaign import load_campaign, run_campaign
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power.accounting import platform_power
from dispatchlab.power.eurora_synth import eurora_instance
from dispatchlab.predict.power.predictors import RealPowerPredictor
from dispatchlab.workload.clean import clean

ARCHIVE = TRACES_DIR / \
    "Eurora-PA-HPC-SIM-testdata.tar.gz"

HEAD = """
[campaign]
name = "s4"
seeds = [0]
store_series = true

[[traces]]
label = "e"
generate = "eurora"
jobs = 24
arrival_window = 600
arrival = "burst"
burst_size = 12

[[platforms]]
builtin = "eurora"

[power]
from_workload = true
cap_base = "bf-peak"
caps = [0.5]

[[power_predictors]]
name = "real"
"""

METHODS = """
[[dispatchers]]
name = "ls"
[[dispatchers]]
label = "dyn-0.5"
name = "rapl-dynshare"
duration_model = "factor:f=0.5"
[[dispatchers]]
label = "dyn-mixed"
name = "rapl-dynshare"
duration_model = { name = "mixed", params = { profile = "dynshare" } }
"""


def test_duration_models_enter_the_configuration_only_when_given(tmp_path):
    c = load_campaign(write_campaign(tmp_path, HEAD + METHODS))
    by = {r["dispatcher"]["label"]: r for r in c.runs}
    assert "duration_model" not in by["ls"]["config"]
    assert by["ls"]["duration_model"] is None
    assert by["dyn-0.5"]["config"]["duration_model"] == {
        "name": "factor", "params": {"f": 0.5}, "seeded": []}
    # the campaign's seed goes into the mixed model's unset seed
    mixed = by["dyn-mixed"]["duration_model"]
    assert mixed == {"name": "mixed", "params": {"profile": "dynshare", "seed": 0}}
    assert by["dyn-0.5"]["config"]["power"] == {"from_workload": True, "cap_base": "bf-peak"}
    assert by["ls"]["trace"]["generate"] == "eurora"
    assert by["ls"]["trace"]["burst_size"] == 12


def test_a_seed_004_campaign_runs_with_caps_on_the_reference_peak(tmp_path):
    path = write_campaign(tmp_path, HEAD + METHODS)
    report = run_campaign(path, workers=1)
    assert (report.total, report.failed) == (3, 0)
    runs = {r["dispatcher"]: r for r in stored_runs(tmp_path / "results.duckdb").values()}
    # the reference: bf without a cap on the same instance (seed 0), real power
    jobs = clean(eurora_instance(24, 600, arrival="burst", seed=0, burst_size=12),
                 copy=False)
    ref = Simulation(eurora_platform(), jobs, make_dispatcher("bf"),
                     power_predictor=RealPowerPredictor()).run()
    peak = float(platform_power(ref)[1].max())
    con = connect(tmp_path / "results.duckdb")
    try:
        caps = dict(con.execute(
            "SELECT r.dispatcher, max(s.value) FROM series s JOIN runs r USING (run_key) "
            "WHERE s.name = 'power_cap' GROUP BY 1").fetchall())
        power = dict(con.execute(
            "SELECT r.dispatcher, max(s.value) FROM series s JOIN runs r USING (run_key) "
            "WHERE s.name = 'platform_power' GROUP BY 1").fetchall())
    finally:
        con.close()
    for label in runs:
        assert caps[label] == pytest.approx(0.5 * peak)
    # LS with exact power never goes above the budget; the BSLD of seed 004 is reported
    assert power["ls"] <= 0.5 * peak + 1e-6
    assert runs["ls"]["cap_time_above_share"] == 0
    for r in runs.values():
        assert r["mean_power_bsld"] >= 1
    summary = json.loads(runs["dyn-0.5"]["summary"])
    assert summary["mean_power_bsld"] == runs["dyn-0.5"]["mean_power_bsld"]


def test_hot_start_is_a_trace_key_and_its_jobs_are_not_measured(tmp_path):
    text = HEAD.replace('burst_size = 12\n', 'burst_size = 12\nhot_start = 0.25\n') + \
        '[[dispatchers]]\nname = "bf"\n'
    c = load_campaign(write_campaign(tmp_path, text))
    (spec,) = c.runs
    assert spec["trace"]["hot_start"] == 0.25
    assert spec["trace"]["label"] == "e"
    report = run_campaign(write_campaign(tmp_path, text), workers=1)
    assert report.failed == 0
    (row,) = stored_runs(tmp_path / "results.duckdb").values()
    assert row["hot_start_jobs"] == 16 and row["jobs"] == 24


@pytest.mark.skipif(not ARCHIVE.exists(), reason="needs ../shared/traces (the Eurora "
                    "PA-HPC-SIM test archive)")
@pytest.mark.traces
def test_an_archive_pattern_is_one_trace_per_member(tmp_path):
    text = f"""
[campaign]
name = "pat"
[[traces]]
label = "h100"
path = "{ARCHIVE}#historical_traces/100/*.log_crypt"
[[platforms]]
builtin = "eurora"
[[dispatchers]]
name = "easy"
"""
    c = load_campaign(write_campaign(tmp_path, text))
    labels = [r["trace"]["label"] for r in c.runs]
    assert len(labels) == 29 and len(set(labels)) == 29
    assert all(x.startswith("h100/hist_100_") for x in labels)


@pytest.mark.parametrize("change, message", [
    (("burst_size = 12\n", "burst_size = 12\nhot_start = 1.5\n"), "hot_start"),
    (('arrival = "burst"\n', 'arrival = "bursty"\n'), "arrival must be one of"),
    (("arrival_window = 600\n", ""), "arrival_window"),
    (('cap_base = "bf-peak"\n', 'cap_base = "peak"\n'), "cap_base"),
    (("caps = [0.5]\n", 'caps = ["400W"]\n'), "share of the reference peak"),
    (("from_workload = true\n", "from_workload = true\nsynth_seed = 1\n"),
     "one power source"),
])
def test_bad_seed_004_keys_are_errors(tmp_path, change, message):
    text = HEAD.replace(*change) + '[[dispatchers]]\nname = "bf"\n'
    with pytest.raises(InputError, match=message):
        load_campaign(write_campaign(tmp_path, text))


@pytest.mark.parametrize("change, message", [
    (("burst_size = 12\n", "burst_size = 12\nbursts = 2\n"), "not both"),
    (("burst_size = 12\n", "bursts = 0\n"), "bursts must be an integer >= 1, got 0"),
    (("burst_size = 12\n", "bursts = 2.5\n"), "bursts must be an integer"),
    (("burst_size = 12\n", "burst_size = 0\n"), "burst_size must be an integer >= 1"),
    (("arrival = \"burst\"\nburst_size = 12\n", "bursts = 3\n"),
     "bursts applies to arrival = 'burst' only"),
])
def test_bad_burst_keys_are_one_line_errors(tmp_path, change, message):
    text = HEAD.replace(*change) + '[[dispatchers]]\nname = "bf"\n'
    assert change[0] in HEAD
    with pytest.raises(InputError, match=message) as err:
        load_campaign(write_campaign(tmp_path, text))
    assert "traces[0]" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("line, groups", [("bursts = 3\n", 3), ("", 10)])
def test_the_campaign_number_of_groups_reaches_the_instance(tmp_path, line, groups):
    from dispatchlab.experiment.campaign.worker import load_jobs

    text = HEAD.replace("burst_size = 12\n", line) + '[[dispatchers]]\nname = "bf"\n'
    (spec,) = load_campaign(write_campaign(tmp_path, text)).runs
    assert "burst_size" not in spec["config"]["trace"]
    assert spec["config"]["trace"].get("bursts") == (groups if line else None)
    for seed in (0, 1, 2):
        jobs = load_jobs(spec["trace"], seed)
        counts = np.unique(jobs["submit"], return_counts=True)[1]
        assert len(counts) == groups and counts.sum() == 24


def test_a_bad_duration_model_names_the_entry(tmp_path):
    text = HEAD + '[[dispatchers]]\nname = "rapl-dynshare"\nduration_model = "factor:f=2"\n'
    with pytest.raises(InputError, match=r"dispatchers\[0\].duration_model"):
        load_campaign(write_campaign(tmp_path, text))


def test_the_reference_peak_leaves_hot_start_jobs_out(tmp_path):
    from dispatchlab.sim.hotstart import add_hot_start

    text = HEAD.replace('burst_size = 12\n', 'burst_size = 12\nhot_start = 0.25\n') + \
        '[[dispatchers]]\nname = "ls"\n'
    assert run_campaign(write_campaign(tmp_path, text), workers=1).failed == 0
    con = connect(tmp_path / "results.duckdb")
    try:
        (cap,) = con.execute("SELECT max(value) FROM series WHERE name = 'power_cap'"
                             ).fetchone()
    finally:
        con.close()
    # the reference run, by hand: bf with the 16 dummy jobs (5 W each) pinned
    jobs = clean(eurora_instance(24, 600, arrival="burst", seed=0, burst_size=12),
                 copy=False)
    hot, pinned = add_hot_start(jobs, eurora_platform(), 0.25)
    ref = Simulation(eurora_platform(), hot, make_dispatcher("bf"),
                     power_predictor=RealPowerPredictor(), pinned=pinned).run()
    with_dummies = float(platform_power(ref)[1].max())
    ref.start = np.where(np.isin(np.arange(len(hot)), list(pinned)), -1, ref.start)
    without = float(platform_power(ref)[1].max())
    assert without < with_dummies  # the dummies run at the peak: the test can tell
    assert cap == pytest.approx(0.5 * without)


SHIPPED = Path(__file__).resolve().parents[3] / "examples" / "campaigns"


@pytest.mark.parametrize("name, runs", [
    # 4 traces x 20 seeds x 5 caps x 12 methods, DynShare without admission only on
    # the 400-job bursts (Figure 4a): 4,800 - 3 x 100
    ("seed004-synthetic.toml", 4500),
    # 5 windows x 20 seeds x 4 caps x 3 methods
    ("seed004-sweep.toml", 1200),
    # 1 trace x 20 seeds x 4 caps x 3 methods
    ("seed004-large.toml", 240),
    # 20 seeds x 3 caps x (2 predictors x 6 methods - 4 excluded)
    ("seed004-mispredict.toml", 480),
    # 2 traces x 5 seeds x 4 caps x 7 methods, each budget base
    ("borghesi2018-bases.toml", 280),
    ("borghesi2018-bases-bf.toml", 280),
])
def test_shipped_seed_004_campaigns_are_valid(name, runs):
    assert len(load_campaign(SHIPPED / name).runs) == runs


def hand_instance(path: Path) -> Path:
    """Three Eurora jobs submitted at 0 (16 cores a unit, exact wall-times):
    J1 32 nodes x 100 s at 3,200 W, J2 64 nodes x 100 s at 640 W, J3 32 nodes x 1,000 s
    at 3,200 W."""
    from dispatchlab.power.eurora_synth import write_instance
    from dispatchlab.workload.jobs import JobTable

    t = JobTable.from_arrays(submit=[0, 0, 0], run=[100, 100, 1000], units=[32, 64, 32],
                             requested_time=[100, 100, 1000], job_id=[1, 2, 3],
                             resources={"core": [16] * 3, "gpu": [0] * 3, "mic": [0] * 3,
                                        "mem": [1024] * 3})
    t.columns["power_mean"] = np.array([3200.0, 640.0, 3200.0])
    t.columns["power_max"] = t.columns["power_mean"].copy()
    t.columns["power_std"] = np.zeros(3)
    write_instance(t, path)
    return path


BASES = """
[campaign]
name = "bases"
store_series = true
[[traces]]
label = "hand"
path = "hand.parquet"
[[platforms]]
builtin = "eurora"
[power]
from_workload = true
cap_base = "CAP_BASE"
caps = [1.0]
[[power_predictors]]
name = "real"
[[dispatchers]]
name = "bf"
[[dispatchers]]
name = "ls"
[[dispatchers]]
label = "dyn"
name = "rapl-dynshare"
duration_model = "factor:f=0.5"
"""


@pytest.mark.parametrize("cap_base, caps", [
    # bf uncapped (FCFS, PA's EASY): J1 at 0; J2 (64 nodes) is the head, its shadow
    # time 100; J3 would end after it, so it waits: J1, then J2, then J3, one at a time:
    # peak 3,200 W, the cap of every method
    ("bf-peak", {"bf": 3200.0, "ls": 3200.0, "dyn": 3200.0}),
    # ls uncapped (list scheduling, no reservation): J1 and J3 both start at 0 (J2
    # does not fit and is skipped): peak 6,400 W, ls's own cap; DynShare admits with bf
    # and throttles nothing without a cap: bf's schedule, bf's peak
    ("own-peak", {"bf": 3200.0, "ls": 6400.0, "dyn": 3200.0}),
])
def test_the_two_cap_bases_give_the_worked_out_caps(tmp_path, cap_base, caps):
    hand_instance(tmp_path / "hand.parquet")
    path = write_campaign(tmp_path, BASES.replace("CAP_BASE", cap_base))
    report = run_campaign(path, workers=1)
    assert (report.total, report.failed) == (3, 0)
    con = connect(tmp_path / "results.duckdb")
    try:
        got = dict(con.execute(
            "SELECT r.dispatcher, max(s.value) FROM series s JOIN runs r USING (run_key) "
            "WHERE s.name = 'power_cap' GROUP BY 1").fetchall())
    finally:
        con.close()
    assert got == pytest.approx(caps)
    for row in stored_runs(tmp_path / "results.duckdb").values():
        assert json.loads(row["summary"])["cap_base_w"] == caps[row["dispatcher"]]


def test_the_reference_key_includes_the_dispatcher_only_for_own_peak(tmp_path):
    from dispatchlab.experiment.campaign.worker import reference_key

    hand_instance(tmp_path / "hand.parquet")
    for cap_base, distinct in (("bf-peak", 1), ("own-peak", 3)):
        c = load_campaign(write_campaign(tmp_path, BASES.replace("CAP_BASE", cap_base)))
        assert len({reference_key(spec) for spec in c.runs}) == distinct
    # the cap is not part of the key: two caps, one reference per dispatcher
    text = BASES.replace("CAP_BASE", "own-peak").replace("caps = [1.0]", "caps = [1.0, 0.5]")
    c = load_campaign(write_campaign(tmp_path, text))
    assert len(c.runs) == 6 and len({reference_key(spec) for spec in c.runs}) == 3


@pytest.mark.parametrize("change, message", [
    (("caps = [1.0]", 'caps = ["400W"]'), "with cap_base = 'own-peak' every cap is a share"),
    (('cap_base = "own-peak"', 'cap_base = "own"'), "cap_base must be one of "
     "max-dynamic-power, bf-peak, own-peak"),
])
def test_bad_own_peak_keys_are_errors(tmp_path, change, message):
    hand_instance(tmp_path / "hand.parquet")
    text = BASES.replace("CAP_BASE", "own-peak").replace(*change)
    with pytest.raises(InputError, match=message) as err:
        load_campaign(write_campaign(tmp_path, text))
    assert err.value.field == "power"
