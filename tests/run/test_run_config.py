"""The run configuration (:mod:`dispatchlab.run.config`): JSON round trip and the one
validation of a run's settings, with the command line's error texts."""

from __future__ import annotations

import json

import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.run.config import Component, PlatformChoice, RunConfig, TraceSource
from test_cli import assert_user_error, run_cli, synthetic_swf


def _full() -> RunConfig:
    return RunConfig(
        trace=TraceSource("t.swf", format="swf", reader_options={"timezone": "UTC"},
                          lenient=True, extra_fields="ignore", drop_overrun=True,
                          max_procs=True, window="0:100"),
        platform=PlatformChoice(nodes=4, cores_per_node=8),
        dispatcher=Component("easy", {"order": "sjf", "reservations": 2}),
        predictor=Component("tsafrir"),
        power_predictor=Component("history", {"alpha": 1.0}),
        duration_model=Component("factor", {"f": 0.5}),
        power="p.parquet", cap="0.5", cap_window="0:1000", hot_start=0.25,
        overrun="kill", measure="index:10:", tau=5.0, max_wall=30.0)


@pytest.mark.parametrize("config", [RunConfig(), RunConfig(TraceSource("t.swf")), _full()])
def test_json_round_trip(config: RunConfig) -> None:
    text = config.to_json()
    assert RunConfig.from_json(text) == config
    assert RunConfig.from_json(text).to_json() == text
    assert json.loads(text)["dispatcher"] == (
        {"name": "easy", "params": {}} if config.power is None
        else {"name": "easy", "params": {"order": "sjf", "reservations": 2}})
    assert config.validate() is config


def test_from_json_names_unknown_and_missing_keys() -> None:
    data = json.loads(RunConfig(TraceSource("t.swf")).to_json())
    with pytest.raises(InputError, match=r"field trace\.lenght: unknown key 'lenght'"):
        RunConfig.from_json(json.dumps({**data, "trace": {"path": "t", "lenght": 1}}))
    with pytest.raises(InputError, match="field trace: missing key 'path'"):
        RunConfig.from_json(json.dumps({**data, "trace": {}}))
    with pytest.raises(InputError, match="expected a JSON object"):
        RunConfig.from_json("[1]")


@pytest.mark.parametrize(("change", "message"), [
    ({"tau": 0}, "field tau: tau must be > 0 seconds, got 0"),
    ({"measure": "index:9:3"}, "field --measure: "),
    ({"hot_start": 1.5}, "field --hot-start: the hot start is a share of the nodes in "
                         "[0, 1], got 1.5"),
    ({"overrun": "explode"}, "field --overrun: overrun must be 'run' or 'kill', got "
                             "'explode'"),
    ({"max_wall": 0.0}, "field --max-wall: the wall-clock budget must be a number of "
                        "seconds > 0, got 0.0"),
    ({"max_wall": float("inf")}, "field --max-wall: the wall-clock budget must be a "
                                 "number of seconds > 0, got inf"),
    ({"dispatcher": Component("eassy")}, "field dispatcher: unknown dispatcher 'eassy'"),
    ({"duration_model": Component("factr")},
     "field duration-model: unknown duration-model 'factr'"),
])
def test_validate_raises_one_line(change: dict, message: str) -> None:
    config = RunConfig(TraceSource("t.swf"), **change)
    with pytest.raises(InputError) as info:
        config.validate()
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


@pytest.mark.parametrize(("args", "change"), [
    (["--max-wall", "0"], {"max_wall": 0.0}),
    (["--hot-start", "2"], {"hot_start": 2.0}),
    (["--overrun", "explode"], {"overrun": "explode"}),
])
def test_simulate_prints_the_configuration_error(tmp_path, args: list[str],
                                                 change: dict) -> None:
    """``simulate`` checks its settings through :meth:`RunConfig.validate`: the same
    line, before the trace is read."""
    trace = synthetic_swf(tmp_path / "t.swf")
    line = assert_user_error(run_cli("simulate", trace, *args))
    with pytest.raises(InputError) as info:
        RunConfig(TraceSource(str(trace)), **change).validate()
    assert line == f"error: {info.value}"
