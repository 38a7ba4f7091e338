"""A campaign run is assembled by :func:`dispatchlab.run.build.build`: the run spec
converts to a :class:`~dispatchlab.run.config.RunConfig` (:func:`run_config`) and the
worker supplies what the configuration names no file for (the generated jobs, the
platform, the synthetic power, the ``cap_base`` rule)."""

from __future__ import annotations

import pytest

from campaign_helpers import write_campaign
from dispatchlab.experiment.campaign import load_campaign, worker
from dispatchlab.run.config import Component, RunConfig

CAMPAIGN = """
[campaign]
name = "assembly"
seeds = [3]
max_wall = 600
[[traces]]
label = "inst"
generate = "eurora"
jobs = 30
arrival_window = 300
hot_start = 0.5
[[platforms]]
builtin = "eurora"
allocator = "best-fit"
[power]
from_workload = true
cap_base = "own-peak"
caps = [0.6]
[[power_predictors]]
name = "real"
[[dispatchers]]
name = "dvfs"
params = { margin = 0.9 }
duration_model = "mixed:profile=dvfs"
"""


@pytest.fixture
def spec(tmp_path):
    (run,) = load_campaign(write_campaign(tmp_path, CAMPAIGN)).runs
    return run


def test_a_run_spec_is_a_run_configuration(spec) -> None:
    config = worker.run_config(spec)
    assert config.dispatcher == Component("dvfs", {**spec["dispatcher"]["params"],
                                                   "allocator": "best-fit"})
    assert config.dispatcher.params["margin"] == 0.9
    assert config.predictor == Component("walltime", spec["predictor"]["params"])
    assert config.power_predictor == Component("real", spec["power_predictor"]["params"])
    assert config.duration_model == Component("mixed", spec["duration_model"]["params"])
    assert (config.hot_start, config.overrun, config.tau, config.max_wall) == (
        0.5, "run", 10.0, 600)
    assert config.measure == spec["measure"]
    assert config.trace is None and config.cap is None and config.power is None
    assert RunConfig.from_json(config.to_json()) == config.validate()


def test_the_worker_assembles_each_run_through_build(spec, monkeypatch) -> None:
    calls = []
    real_build = worker.build

    def spy(config, **kwargs):
        calls.append((config, kwargs))
        return real_build(config, **kwargs)

    monkeypatch.setattr(worker, "build", spy)
    out = worker.execute_run(spec)
    assert out["status"] == "done", out.get("error")
    ((config, kwargs),) = calls
    assert config == worker.run_config(spec)
    assert kwargs["cap_rule"] is not None and kwargs["platform"].name == "eurora"
    # the own-peak rule ran: the cap's shares are shares of the reference's peak
    assert out["summary"]["cap_base_w"] > 0
    assert out["nodes"] == 64 and out["node_level"]
