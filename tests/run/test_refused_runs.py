"""Combinations refused before a run starts (:func:`dispatchlab.sim.engine.
check_combination`), in every way of building a run: the Python ``Simulation``, the
``simulate``, ``compare`` and ``study`` commands and campaign files.

1. A dispatcher that slows running jobs (``slows_running_jobs``: ``dvfs``,
   ``rapl-simple``, ``rapl-dynshare``, ``dec-rapl``) without an explicit duration model;
   ``none`` given on purpose runs and warns "throttling without slowdown".
2. A dispatcher that cannot place jobs on nodes (``supports_node_level = False``, the
   README's ``WidestFirst``) on a node-level platform (``--platform eurora``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import DISPATCHERS, make_dispatcher
from dispatchlab.experiment.campaign.config import load_campaign
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power import PowerCap
from dispatchlab.power.eurora_synth import eurora_instance, write_instance
from dispatchlab.predict.power.predictors import make_power_predictor
from dispatchlab.run.advice import THROTTLING_WITHOUT_SLOWDOWN, result_warnings
from dispatchlab.sim.duration import Factor, NoSlowdown
from dispatchlab.sim.engine import check_combination, is_node_level
from test_cli import assert_ok, assert_user_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
WIDEST = ROOT / "examples" / "custom_dispatcher.py"
THROTTLING = ["dvfs", "rapl-simple", "rapl-dynshare", "dec-rapl"]
MODELS = "(none, factor, mixed, cpi;"


def widest_first() -> type:
    """The README's WidestFirst class (examples/custom_dispatcher.py)."""
    spec = importlib.util.spec_from_file_location("custom_dispatcher_for_test", WIDEST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.WidestFirst


@pytest.fixture(scope="module")
def instance(tmp_path_factory) -> Path:
    """40 Eurora-like jobs in 2 hours, with their power columns (Parquet)."""
    path = tmp_path_factory.mktemp("refused") / "inst.parquet"
    write_instance(eurora_instance(40, 7200, "uniform", seed=3), path)
    return path


def eurora_jobs() -> JobTable:
    return eurora_instance(40, 7200, "uniform", seed=3)


# ------------------------------------------------------------------ the declaration


def test_exactly_the_throttling_methods_declare_that_they_slow_running_jobs():
    declared = sorted(name for name, cls in DISPATCHERS.items()
                      if cls.slows_running_jobs)
    assert declared == sorted(THROTTLING)
    # a class property, not an instance setting nor a list of names
    assert DISPATCHERS["dvfs"].__dict__["slows_running_jobs"] is True
    assert DISPATCHERS["bf"].slows_running_jobs is False  # same module, never throttles


# ------------------------------------------------------------------ Python Simulation


def power_run(name: str, **kwargs):
    """``name`` on the Eurora instance at a 5 % cap with real power predictions."""
    jobs = eurora_jobs()
    platform = eurora_platform()
    cap = PowerCap.window(0.05 * platform.dynamic_power_base)
    return Simulation(platform, jobs, make_dispatcher(name), cap=cap,
                      power_predictor=make_power_predictor("real"), **kwargs)


@pytest.mark.parametrize("name", THROTTLING)
def test_simulation_refuses_a_throttling_method_without_a_duration_model(name):
    with pytest.raises(InputError) as err:
        power_run(name)  # refused when the Simulation is built, before run()
    assert err.value.field == "duration_model"
    assert f"dispatcher {name!r} slows running jobs" in err.value.message
    assert MODELS in err.value.message and "\n" not in str(err.value)


def test_explicit_none_runs_and_warns_throttling_without_slowdown():
    result = power_run("rapl-dynshare", duration_model=NoSlowdown()).run()
    assert result.throttling_without_slowdown
    assert result.segments is not None  # it did throttle
    warnings = result_warnings(result)
    assert warnings[0].startswith(THROTTLING_WITHOUT_SLOWDOWN + ": dispatcher RaplDynShare()")
    # with a model that slows, no such warning
    slowed = power_run("rapl-dynshare", duration_model=Factor(f=1.0)).run()
    assert not slowed.throttling_without_slowdown
    assert not any(w.startswith(THROTTLING_WITHOUT_SLOWDOWN) for w in result_warnings(slowed))


def test_a_method_that_does_not_throttle_needs_no_model():
    result = power_run("bf").run()
    assert not result.throttling_without_slowdown
    assert result_warnings(result) == []


# ------------------------------------------------------------------ command line


@pytest.mark.parametrize("name", THROTTLING)
def test_simulate_refuses_a_throttling_method_without_a_duration_model(instance, name):
    proc = run_cli("simulate", instance, "--platform", "eurora", "--dispatcher", name,
                   "--cap", "0.05", "--power-predictor", "real")
    line = assert_user_error(proc, "--duration-model", MODELS)
    assert f"dispatcher {name!r} slows running jobs" in line


def test_simulate_with_none_says_throttling_without_slowdown(instance):
    proc = run_cli("simulate", instance, "--platform", "eurora", "--dispatcher",
                   "rapl-dynshare", "--cap", "0.05", "--power-predictor", "real",
                   "--duration-model", "none")
    assert_ok(proc)
    warnings = [x for x in proc.stderr.splitlines() if x.startswith("warning: ")]
    assert any(x.startswith(f"warning: {THROTTLING_WITHOUT_SLOWDOWN}: ") for x in warnings)
    # the table's header says it too (rich may wrap it: compare without line breaks)
    head = " ".join(proc.stdout.split("┏")[0].split())
    assert "duration model none; throttling without slowdown" in head


def test_compare_refuses_a_throttling_method(instance):
    proc = run_cli("compare", instance, "--platform", "eurora", "--dispatcher", "easy",
                   "--dispatcher", "dvfs", "--workers", "1")
    line = assert_user_error(proc, "'dvfs' slows running jobs", MODELS)
    assert "this command takes none" in line
    assert "easy" not in proc.stdout  # refused before any run


def test_study_refuses_a_throttling_method_without_a_duration_model(instance, tmp_path):
    args = ("study", "predictions", instance, "--platform", "eurora", "--dispatchers",
            "easy,dvfs", "--predictors", "real", "--cap", "0.05", "--power-predictor",
            "real")
    assert_user_error(run_cli(*args), "--duration-model", MODELS)
    proc = run_cli(*args, "--duration-model", "factor:f=1")
    assert_ok(proc)
    assert "dvfs" in proc.stdout


# ------------------------------------------------------------------ campaign files

CAMPAIGN = """
[campaign]
name = "refused"
seeds = [0]
[[traces]]
label = "inst"
generate = "eurora"
jobs = 20
arrival_window = 300
arrival = "uniform"
[[platforms]]
builtin = "eurora"
[power]
from_workload = true
caps = [0.5]
[[power_predictors]]
name = "real"
[[dispatchers]]
name = "bf"
[[dispatchers]]
name = "rapl-dynshare"
{model}
"""


def test_a_campaign_names_the_dispatcher_without_a_duration_model(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN.format(model=""))
    with pytest.raises(InputError) as err:
        load_campaign(path)
    assert err.value.file == str(path)
    assert err.value.field == "dispatchers[1].duration_model"
    assert MODELS in err.value.message
    # through the command line: one error line, nothing run or stored
    proc = run_cli("campaign", "run", path, "--workers", "1")
    assert_user_error(proc, "dispatchers[1].duration_model", MODELS)
    assert not (tmp_path / "refused.duckdb").exists()
    path.write_text(CAMPAIGN.format(model='duration_model = "none"'))
    assert len(load_campaign(path).runs) == 2


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "campaigns").glob("*.toml")),
                         ids=lambda p: p.name)
def test_shipped_campaigns_name_their_models_and_load(path, traces_dir):
    camp = load_campaign(path)
    for run in camp.runs:
        cls = DISPATCHERS[run["dispatcher"]["name"]]
        if cls.slows_running_jobs:
            assert run["duration_model"] is not None


def test_shipped_campaigns_hold_throttling_runs(traces_dir):
    # the load test above exercises the refusal only if some shipped campaign runs a
    # dispatcher that slows running jobs (the power-capping campaigns do)
    throttling = [p.name for p in sorted((ROOT / "examples" / "campaigns").glob("*.toml"))
                  if any(DISPATCHERS[r["dispatcher"]["name"]].slows_running_jobs
                         for r in load_campaign(p).runs)]
    assert "seed004-historical.toml" in throttling


# ------------------------------------------------------------------ node-level platforms


def test_is_node_level_follows_the_engine():
    pooled = Platform.pooled(8)
    one = JobTable.from_arrays(submit=[0, 1], run=[5, 5], units=[2, 3])
    wide = JobTable.from_arrays(submit=[0, 1], run=[5, 5], units=[1, 1],
                                resources={"core": [1, 2]})
    for platform, jobs, expected in ((pooled, one, False), (pooled, wide, True),
                                     (Platform.homogeneous(2, 4), one, False),
                                     (Platform.homogeneous(2, 4, gpu=1), one, True),
                                     (eurora_platform(), eurora_jobs(), True)):
        assert is_node_level(platform, jobs) is expected
        sim = Simulation(platform, jobs, make_dispatcher("fifo"))
        assert sim.counting is not expected


def test_simulation_refuses_widest_first_on_eurora():
    cls = widest_first()
    with pytest.raises(InputError) as err:
        Simulation(eurora_platform(), eurora_jobs(), cls())
    assert err.value.field == "platform"
    assert "'widest-first' cannot place jobs on nodes" in err.value.message
    # on pooled cores it runs
    jobs = JobTable.from_arrays(submit=[0, 0, 1], run=[5, 5, 5], units=[1, 3, 2])
    result = Simulation(Platform.pooled(4), jobs, cls()).run()
    assert result.start.tolist() == [0, 0, 5]
    with pytest.raises(InputError):  # the one check, called directly
        check_combination(cls(), duration_model=None, node_level=True)
    check_combination(cls(), duration_model=None, node_level=None)  # not known: passes


def test_simulate_refuses_widest_first_on_eurora(instance):
    proc = run_cli("simulate", instance, "--platform", "eurora", "--dispatcher",
                   f"{WIDEST}:WidestFirst")
    line = assert_user_error(proc, "--platform", "cannot place jobs on nodes")
    assert "bug" not in line


def test_compare_and_study_refuse_widest_first_on_eurora(instance):
    proc = run_cli("compare", instance, "--platform", "eurora", "--dispatcher", "easy",
                   "--dispatcher", f"{WIDEST}:WidestFirst", "--workers", "1")
    assert_user_error(proc, "--platform", "cannot place jobs on nodes")
    proc = run_cli("study", "predictions", instance, "--platform", "eurora",
                   "--dispatchers", f"easy,{WIDEST}:WidestFirst", "--predictors", "real")
    assert_user_error(proc, "cannot place jobs on nodes")


def test_a_campaign_refuses_widest_first_on_eurora_unless_excluded(tmp_path):
    text = f"""
[campaign]
name = "nodes"
seeds = [0]
[[traces]]
label = "inst"
generate = "eurora"
jobs = 20
arrival_window = 300
[[platforms]]
builtin = "eurora"
[[platforms]]
cores = 64
[[dispatchers]]
name = "easy"
[[dispatchers]]
label = "widest"
name = "{WIDEST}:WidestFirst"
"""
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        load_campaign(path)
    assert err.value.file == str(path) and err.value.field == "platforms"
    assert "cannot place jobs on nodes" in err.value.message
    assert "platform 'eurora' x dispatcher 'widest'" in err.value.message
    assert_user_error(run_cli("campaign", "run", path, "--workers", "1"),
                      "cannot place jobs on nodes")
    path.write_text(text + '[[exclude]]\nplatform = "eurora"\ndispatcher = "widest"\n')
    runs = load_campaign(path).runs
    assert sorted((r["platform"]["label"], r["dispatcher"]["label"]) for r in runs) == [
        ("64-cores", "easy"), ("64-cores", "widest"), ("eurora", "easy")]


def test_a_run_refused_by_its_jobs_fails_before_it_starts():
    # pooled cores, but jobs of 2 cores a unit: node-level, known only from the jobs
    jobs = JobTable.from_arrays(submit=[0], run=[5], units=[1], resources={"core": [2]})
    with pytest.raises(InputError, match="cannot place jobs on nodes"):
        Simulation(Platform.pooled(4), jobs, widest_first()())
