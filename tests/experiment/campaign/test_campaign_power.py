"""Power in campaigns: the ``[power]`` table (job power, caps, window), the
``[[power_predictors]]`` axis, exclusions by lists of labels, the store's ``cap`` /
``power_predictor`` labels, stored results equal to a direct simulation, the
``results power`` table (changes against the uncapped baseline) and trace files at a
given offered load in whole nodes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from campaign_helpers import stored_runs, synthetic_trace, write_campaign
from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.experiment.campaign import load_campaign, run_campaign
from dispatchlab.experiment.campaign.power_table import build_cap
from dispatchlab.experiment.campaign.worker import load_jobs, load_run_jobs
from dispatchlab.experiment.statistics import power_rows
from dispatchlab.power import PowerCap
from dispatchlab.power.synth import synthesize_power
from dispatchlab.predict.power.predictors import WithPriorHistory, make_power_predictor
from dispatchlab.run.outputs import run_summary
from dispatchlab.workload.clean import clean
from dispatchlab.workload.load import load_trace, offered_load
from dispatchlab.workload.lublin import lublin_model
from test_cli import assert_ok, assert_user_error, run_cli

HEAD = """
[campaign]
name = "pw"
seeds = [1]

[[traces]]
label = "lub"
generate = "lublin"
jobs = 120
machine_size = 64

[[platforms]]
builtin = "marconi100-nodes"
"""

POWER = """
[power]
synth_seed = 3
caps = ["none", 0.02, { label = "20kW", value = "20kW", window = [0, 20000] }]
window = [0, 30000]

[[power_predictors]]
name = "real"
[[power_predictors]]
name = "history"

[[dispatchers]]
name = "easy"
[[dispatchers]]
label = "pc"
name = "easy-pc"
params = { check = "gaussian99" }

[[exclude]]
dispatcher = "easy"
power_predictor = "history"
[[exclude]]
dispatcher = "pc"
cap = ["none"]
"""


def test_power_axes_expand_with_list_exclusions(tmp_path):
    c = load_campaign(write_campaign(tmp_path, HEAD + POWER))
    combos = sorted((r["dispatcher"]["label"], r["power_predictor"]["label"], r["cap"]["label"])
                    for r in c.runs)
    # easy x real x 3 caps, pc x {real, history} x 2 caps
    assert combos == sorted([("easy", "real", "none"), ("easy", "real", "2%"),
                             ("easy", "real", "20kW"), ("pc", "real", "2%"),
                             ("pc", "real", "20kW"), ("pc", "history", "2%"),
                             ("pc", "history", "20kW")])
    spec = next(r for r in c.runs if r["cap"]["label"] == "2%")
    assert spec["config"]["cap"] == {"value": 0.02, "window": [0, 30000],
                                     "window_from": "trace"}
    assert spec["config"]["power"] == {"synth_seed": 3, "series": False, "period": 20}
    assert spec["config"]["power_predictor"]["name"] == "real"
    own = next(r for r in c.runs if r["cap"]["label"] == "20kW")
    assert own["config"]["cap"]["window"] == [0, 20000]  # its own window wins


def test_campaigns_without_power_keep_their_configuration(tmp_path):
    text = HEAD + "[[dispatchers]]\nname = \"easy\"\n"
    c = load_campaign(write_campaign(tmp_path, text))
    (spec,) = c.runs
    assert not {"power", "cap", "power_predictor"} & set(spec["config"])
    assert spec["power"] is None and spec["cap"] is None and spec["power_predictor"] is None


@pytest.mark.parametrize("text, message", [
    ("[[power_predictors]]\nname = \"real\"\n[[dispatchers]]\nname = \"easy\"\n",
     "power predictors need job power"),
    ("[[dispatchers]]\nname = \"easy-pc\"\n", "need power predictions"),
    ("[power]\nsynth_seed = 1\nfile = \"x.parquet\"\n[[dispatchers]]\nname = \"easy\"\n",
     "one power source"),
    ("[power]\n[[dispatchers]]\nname = \"easy\"\n", "one power source"),
    ("[power]\nsynth_seed = 1\ncaps = [1.5]\n[[dispatchers]]\nname = \"easy\"\n",
     "fraction"),
    ("[power]\nsynth_seed = 1\ncaps = [0.5]\nwindow = [100, 100]\n"
     "[[dispatchers]]\nname = \"easy\"\n", "0 <= T0 < T1"),
    ("[power]\nsynth_seed = 1\ncaps = [0.5, 0.5]\n[[dispatchers]]\nname = \"easy\"\n",
     "used twice"),
    ("[power]\nsynth_seed = 1\nwindow_from = \"slice\"\n[[dispatchers]]\nname = \"easy\"\n",
     "window_from"),
    ("[power]\nsynth_seed = 1\nbogus = 2\n[[dispatchers]]\nname = \"easy\"\n", "bogus"),
    ("[power]\nsynth_seed = 1\ncaps = [{ value = 0.5, colour = 1 }]\n"
     "[[dispatchers]]\nname = \"easy\"\n", "colour"),
    ("[[dispatchers]]\nname = \"easy\"\n[[exclude]]\ncap = \"none\"\n", "[power] table"),
    ("[power]\nsynth_seed = 1\n[[power_predictors]]\nname = \"nope\"\n"
     "[[dispatchers]]\nname = \"easy\"\n", "power_predictors[0]"),
])
def test_bad_power_tables_are_errors_naming_the_entry(tmp_path, text, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[")):
        load_campaign(write_campaign(tmp_path, HEAD + text))


def test_window_from_measure_opens_at_the_first_measured_job():
    jobs = JobTable.from_arrays(submit=[5, 40, 90], run=[1, 1, 1], units=[1, 1, 1])
    spec = {"value": "1000W", "window": [10, 20], "window_from": "measure"}
    assert build_cap(spec, Platform.pooled(4), jobs, 1) == PowerCap.window(1000.0, 50, 60)
    trace = {**spec, "window_from": "trace"}
    assert build_cap(trace, Platform.pooled(4), jobs, 1) == PowerCap.window(1000.0, 10, 20)
    with pytest.raises(InputError, match="max_dynamic_power"):
        build_cap({"value": 0.5, "window": None}, Platform.pooled(4), jobs, None)


def test_stored_capped_runs_equal_a_direct_simulation(tmp_path):
    path = write_campaign(tmp_path, HEAD + POWER)
    report = run_campaign(path, workers=1)
    assert (report.total, report.failed) == (7, 0)
    runs = stored_runs(tmp_path / "results.duckdb")
    row = next(r for r in runs.values()
               if (r["dispatcher"], r["power_predictor"], r["cap"]) == ("pc", "history", "2%"))
    # the same run by hand: the workload, its synthetic power, the cap, the predictor
    platform = Platform.marconi100_nodes()
    jobs = clean(lublin_model(64).sample(120, 1), copy=False).compact()
    cols, _ = synthesize_power(jobs, platform, seed=3)
    jobs.columns.update(cols)
    cap = PowerCap.window(0.02 * 955_080.0, 0, 30000)
    direct = Simulation(platform, jobs, make_dispatcher("easy-pc", check="gaussian99"),
                        cap=cap, power_predictor=make_power_predictor("history")).run()
    s = run_summary(direct, tau=10.0)
    for key in ("mean_wait", "max_turnaround", "cap_mean_share", "cap_time_above_share",
                "cap_time_above_own_share", "window_start_share", "energy_j"):
        assert row[key] == pytest.approx(s[key]), key
    assert {r["cap"] for r in runs.values()} == {"none", "2%", "20kW"}
    easy_none = next(r for r in runs.values() if (r["dispatcher"], r["cap"]) == ("easy", "none"))
    assert easy_none["cap_mean_share"] is None and easy_none["energy_j"] > 0

    # results power: the pc runs' turnaround against easy without a cap
    out = run_cli("results", "power", str(tmp_path / "results.duckdb"), "--format", "json")
    assert_ok(out)
    table = json.loads(out.stdout)
    pc = next(t for t in table if (t["dispatcher"], t["power_predictor"], t["cap"])
              == ("pc", "history", "2%"))
    assert pc["runs"] == 1 and pc["baselined"] == 1
    assert pc["mean_turnaround_change"] == pytest.approx(
        row["mean_turnaround"] / easy_none["mean_turnaround"] - 1)
    shown = run_cli("results", "power", str(tmp_path / "results.duckdb"))
    assert_ok(shown)
    assert "20kW" in shown.stdout and "pc" in shown.stdout
    bad = run_cli("results", "power", str(tmp_path / "results.duckdb"), "--runs",
                  "cap = 'nope'")
    assert_user_error(bad, "no current run with a power cap")


def _row(dispatcher, cap, workload, mean_t, max_t, above=0.0, share=0.9):
    return {"status": "done", "campaign": "c", "trace": "t", "platform": "p",
            "predictor": "walltime", "power_predictor": "real", "dispatcher": dispatcher,
            "cap": cap, "workload": workload, "repetition": 0, "mean_turnaround": mean_t,
            "max_turnaround": max_t, "mean_wait": mean_t - 100, "cap_mean_share": share,
            "cap_time_above_share": above, "cap_max_excess": 0.0, "cap_mean_underuse": 0.1,
            "window_start_share": 0.2}


def test_power_rows_average_per_workload_changes_against_the_baseline():
    rows = [_row("easy", "none", "w1", 1000, 5000), _row("easy", "none", "w2", 2000, 8000),
            _row("pc", "50%", "w1", 1100, 6000, above=0.0),   # +10 %, +20 %
            _row("pc", "50%", "w2", 2600, 8000, above=0.25),  # +30 %, 0 %
            _row("pc", "50%", "w3", 900, 900)]                # no baseline on w3
    (easy, pc) = power_rows(rows)
    assert easy["cap"] == "none" and easy["mean_turnaround_change"] == 0.0
    assert pc["runs"] == 3 and pc["baselined"] == 2
    assert pc["mean_turnaround_change"] == pytest.approx((0.10 + 0.30) / 2)
    assert pc["max_turnaround_change"] == pytest.approx((0.20 + 0.0) / 2)
    assert pc["above_share"] == pytest.approx(1 / 3)  # one run of three went above
    assert power_rows(rows, baseline="other")[1]["mean_turnaround_change"] is None


def test_trace_files_at_an_offered_load_in_whole_nodes(tmp_path):
    trace = synthetic_trace(tmp_path, 300, cores=64)
    base = f"""
[campaign]
name = "load"
[[traces]]
path = "{trace}"
procs_per_node = 4
{{extra}}
[[platforms]]
nodes = 16
cores_per_node = 1
[[dispatchers]]
name = "easy"
"""
    with pytest.raises(InputError, match="needs machine_size"):
        load_campaign(write_campaign(tmp_path, base.replace("{extra}", "load = 0.9")))
    with pytest.raises(InputError, match="procs_per_node must be >= 1"):
        load_campaign(write_campaign(tmp_path, base.replace("{extra}", "").replace(
            "procs_per_node = 4", "procs_per_node = 0")))
    path = write_campaign(tmp_path, base.replace("{extra}", "load = 0.9\nmachine_size = 16"))
    assert run_campaign(path, workers=1).failed == 0
    (row,) = stored_runs(tmp_path / "results.duckdb").values()
    (spec,) = load_campaign(path).runs
    jobs = load_jobs(spec["trace"], 0)
    raw = clean(load_trace(trace), copy=True)
    assert jobs["units"].tolist() == (-(-raw["units"] // 4)).tolist()
    assert offered_load(jobs, 16) == pytest.approx(0.9, rel=0.01)
    assert row["jobs"] == len(jobs) and np.isfinite(row["mean_wait"])


SLICED = """
[campaign]
name = "sl"
[[traces]]
path = "{trace}"
slices = {{ count = 2, jobs = 60, lead_in = 20{queued} }}
[[platforms]]
cores = 64
[[dispatchers]]
name = "easy"
"""


def test_queued_lead_in_and_past_rows_leave_the_run_table_alone(tmp_path):
    trace = synthetic_trace(tmp_path, 400, cores=64)
    plain = load_campaign(write_campaign(tmp_path, SLICED.format(trace=trace, queued="")))
    spec = plain.runs[1]["trace"]  # the second slice: rows before it exist
    jobs, history, prior = load_run_jobs(spec, 0, past=50)
    alone, none, zero = load_run_jobs(spec, 0)
    assert none is None and zero == 0 and prior == 50 and len(history) == 50 + len(jobs)
    for name in ("submit", "run", "units", "user"):
        assert jobs[name].tolist() == alone[name].tolist() == history[name][50:].tolist()
    assert history["submit"][49] <= 0 == jobs["submit"][0]  # the past before the run
    first = load_run_jobs(plain.runs[0]["trace"], 0, past=50)
    assert first[2] == 0 and first[1] is None  # the first slice has no past
    queued = load_campaign(write_campaign(
        tmp_path, SLICED.format(trace=trace, queued=", queued = true")))
    q = load_run_jobs(queued.runs[1]["trace"], 0)[0]
    # the 20 lead-in jobs all wait at the first measured job's submission
    assert q["submit"][:21].tolist() == [alone["submit"][20]] * 21
    assert q["submit"][21:].tolist() == alone["submit"][21:].tolist()
    with pytest.raises(InputError, match="queued needs lead_in"):
        load_campaign(write_campaign(tmp_path, SLICED.format(
            trace=trace, queued=", queued = true").replace("lead_in = 20", "lead_in = 0")))
    with pytest.raises(InputError, match="history_jobs must be >= 0"):
        load_campaign(write_campaign(tmp_path, HEAD + "[power]\nsynth_seed = 1\n"
                                     "history_jobs = -1\n[[dispatchers]]\nname = \"easy\"\n"))


def test_with_prior_history_has_seen_the_past_jobs_that_ended():
    # rows 0-1 are the past (user 7 at 500 W ended at -100; user 8 ends at +50, after the
    # run's first submission at 0, so it is not seen); row 2 is the run's job of user 7
    history = JobTable.from_arrays(submit=[-300, -200, 0], run=[200, 250, 10],
                                   units=[1, 1, 1], user=[7, 8, 7])
    history.columns.update(power_mean=np.array([500.0, 900.0, 600.0]),
                           power_max=np.array([550.0, 950.0, 650.0]),
                           power_std=np.array([5.0, 9.0, 6.0]))
    jobs = history.take(np.arange(2, 3))
    platform = Platform.marconi100_nodes()
    warm = WithPriorHistory(make_power_predictor("history"), history, 2,
                            np.array([-100, 50]))
    r = Simulation(platform, jobs, make_dispatcher("easy"), power_predictor=warm).run()
    # user 7's only finished job (weight 0 with s = back to it): the plain mean, 500 W
    assert r.power_prediction["mean"].tolist() == [500.0]
    cold = Simulation(platform, jobs, make_dispatcher("easy"),
                      power_predictor=make_power_predictor("history")).run()
    assert cold.power_prediction["mean"].tolist() == [2100.0]  # naive: nothing finished
    with pytest.raises(InputError, match="the run's jobs"):
        other = JobTable.from_arrays(submit=[5], run=[10], units=[1], user=[7])
        Simulation(platform, other, make_dispatcher("easy"), power_predictor=warm).run()


def test_with_prior_history_under_a_hot_start():
    """The hot start's dummy jobs are not in the history: the run's other rows are, in
    order; a dummy job is predicted at its recorded power (5 W) and never observed."""
    from dispatchlab.sim.hotstart import add_hot_start

    history = JobTable.from_arrays(submit=[-300, -200, 0, 30], run=[200, 250, 10, 10],
                                   units=[1, 1, 1, 1], user=[7, 8, 7, 8])
    history.columns.update(power_mean=np.array([500.0, 900.0, 600.0, 950.0]),
                           power_max=np.array([550.0, 950.0, 650.0, 990.0]),
                           power_std=np.array([5.0, 9.0, 6.0, 9.0]))
    platform = Platform.marconi100_nodes()
    jobs, pinned = add_hot_start(history.take(np.arange(2, 4)), platform, 0.1)
    dummy = np.asarray(jobs["hot_start"]) == 1
    assert dummy.sum() >= 1
    warm = WithPriorHistory(make_power_predictor("history"), history, 2,
                            np.array([-100, 50]))
    r = Simulation(platform, jobs, make_dispatcher("easy"), power_predictor=warm,
                   pinned=pinned).run()
    mean = np.asarray(r.power_prediction["mean"])
    assert mean[dummy].tolist() == [5.0] * int(dummy.sum())
    assert mean[~dummy][0] == 500.0  # user 7's finished past job, as without a hot start
