"""Assembling a run (:func:`dispatchlab.run.build.build`): the run of a configuration is
the run wired by hand, notes and warnings arrive in order, and the settings are
checked before any file is read."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power.cap import PowerCap
from dispatchlab.power.eurora_synth import eurora_instance, write_instance
from dispatchlab.predict import make_predictor
from dispatchlab.predict.power.predictors import make_power_predictor
from dispatchlab.run.build import PowerInputs, Prepared, build
from dispatchlab.run.config import Component, PlatformChoice, RunConfig, TraceSource
from dispatchlab.sim.duration import make_duration_model
from dispatchlab.sim.hotstart import add_hot_start
from dispatchlab.workload.jobs import TraceInfo
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.swf import write_swf


def _same_schedule(a, b) -> None:
    assert np.array_equal(a.start, b.start) and np.array_equal(a.end, b.end)
    assert np.array_equal(a.status, b.status) and (a.events, a.passes) == (b.events, b.passes)


def test_a_capped_throttling_run_is_the_run_wired_by_hand(tmp_path) -> None:
    path = tmp_path / "inst.parquet"
    write_instance(eurora_instance(60, 7200, "uniform", seed=4), path)
    config = RunConfig(
        TraceSource(str(path)), PlatformChoice("eurora"),
        dispatcher=Component("rapl-dynshare"), predictor=Component("real"),
        power_predictor=Component("real"),
        duration_model=Component("mixed", {"profile": "dynshare"}),
        cap="0.05", cap_window="100:5000", hot_start=0.25, overrun="kill")
    run = build(config)
    assert run.config is config and run.series is None
    jobs = load_trace(path)
    plat = eurora_platform()
    cap = PowerCap.window(0.05 * plat.dynamic_power_base, 100, 5000)
    assert run.cap == cap
    jobs, pinned = add_hot_start(jobs, plat, 0.25)
    by_hand = Simulation(plat, jobs, make_dispatcher("rapl-dynshare"), make_predictor("real"),
                         overrun="kill", cap=cap, power_predictor=make_power_predictor("real"),
                         duration_model=make_duration_model("mixed", profile="dynshare"),
                         pinned=pinned).run()
    result = run.simulation.run()
    assert len(run.jobs) == len(jobs) and result.cap == cap
    _same_schedule(result, by_hand)


def test_a_given_table_and_platform_are_used_as_they_are() -> None:
    jobs = JobTable.from_arrays(submit=[0, 5, 9], run=[50, 20, 10], units=[2, 1, 2])
    plat = Platform.pooled(2)
    config = RunConfig(dispatcher=Component("easy", {"order": "sjf"}),
                       predictor=Component("real"))
    run = build(config, jobs=jobs, platform=plat)
    assert run.jobs is jobs and run.platform is plat
    _same_schedule(run.simulation.run(), Simulation(
        plat, jobs, make_dispatcher("easy", order="sjf"), make_predictor("real")).run())
    with pytest.raises(InputError, match="names no trace"):
        build(config)


def test_notes_and_warnings_reach_report_in_order(tmp_path) -> None:
    jobs = JobTable.from_arrays(submit=[0, 1, 2, 3], run=[4000] * 4, units=[8] * 4,
                                info=TraceInfo(max_procs=16, header={"MaxProcs": "16"},
                                               header_lines=("; MaxProcs: 16",)))
    trace = tmp_path / "t.swf"
    write_swf(jobs, trace)
    seen: list[tuple[str, str]] = []
    build(RunConfig(TraceSource(str(trace)), PlatformChoice(nodes=2, cores_per_node=4)),
          report=lambda kind, text: seen.append((kind, text)))
    assert [k for k, _ in seen] == ["warning", "warning"]
    assert seen[0][1].startswith("platform has 8 cores, the trace's machine had 16")
    assert seen[1][1].startswith("offered load on this platform is about")


def test_settings_are_checked_before_the_trace_is_read(tmp_path) -> None:
    missing = TraceSource(str(tmp_path / "missing.swf"))
    with pytest.raises(InputError, match="field --max-wall"):
        build(RunConfig(missing, max_wall=-1.0))
    with pytest.raises(InputError, match=r"missing\.swf: no such file"):
        build(RunConfig(missing))
    with pytest.raises(InputError, match="field --cap-window: --cap-window needs --cap"):
        build(RunConfig(cap_window="0:10"), jobs=JobTable.from_arrays(
            submit=[0], run=[1], units=[1]), platform=Platform.pooled(1))


def test_supplied_power_inputs_and_a_cap_rule_make_the_run() -> None:
    # a campaign's way in: the jobs' power, the cap and the power predictor made by the
    # caller, and the cap rescaled after the hot start from the prepared inputs
    jobs = eurora_instance(40, 600, "uniform", seed=2)
    plat = eurora_platform()
    given = PowerCap.window(0.5 * plat.dynamic_power_base)
    seen = []

    def power(j, p):
        assert p is plat
        return PowerInputs(j, None, given, make_power_predictor("real"))

    def halve(prepared: Prepared) -> PowerCap:
        seen.append(prepared)
        return PowerCap.window(0.5 * prepared.cap.steps[0][1])

    config = RunConfig(dispatcher=Component("ls"), predictor=Component("real"),
                       power_predictor=Component("real"), hot_start=0.5)
    run = build(config, jobs=jobs, platform=plat, power=power, cap_rule=halve)
    (prepared,) = seen
    assert prepared.cap == given and prepared.platform is plat
    assert prepared.pinned and len(prepared.jobs) == len(run.jobs) > len(jobs)
    assert prepared.dispatcher.name == "ls" and prepared.power_predictor is not None
    half = PowerCap.window(0.25 * plat.dynamic_power_base)
    assert run.cap == half
    hot, pinned = add_hot_start(jobs, plat, 0.5)
    by_hand = Simulation(plat, hot, make_dispatcher("ls"), make_predictor("real"), cap=half,
                         power_predictor=make_power_predictor("real"), pinned=pinned).run()
    _same_schedule(run.simulation.run(), by_hand)


def test_power_inputs_come_from_one_place() -> None:
    jobs = eurora_instance(10, 600, "uniform", seed=2)
    config = RunConfig(cap="0.5")
    with pytest.raises(ValueError, match=r"both by 'power' and by the configuration \(cap\)"):
        build(config, jobs=jobs, platform=eurora_platform(),
              power=lambda j, p: PowerInputs(j))


def test_a_supplied_power_predictor_meets_the_dispatchers_requirement() -> None:
    # the requirement is checked against what the run gets, not the config's name
    jobs = eurora_instance(10, 600, "uniform", seed=2)
    plat = eurora_platform()
    cap = PowerCap.window(plat.dynamic_power_base)
    config = RunConfig(dispatcher=Component("ls"), predictor=Component("real"))
    with pytest.raises(InputError, match="needs job power predictions"):
        build(config, jobs=jobs, platform=plat, power=lambda j, p: PowerInputs(j, cap=cap))
    run = build(config, jobs=jobs, platform=plat, power=lambda j, p: PowerInputs(
        j, cap=cap, power_predictor=make_power_predictor("real")))
    assert run.simulation.power_predictor is not None


def test_a_plain_swf_run_imports_no_optional_part(tmp_path) -> None:
    """A run of an SWF trace without power data loads neither the Alea fitting, nor the
    power-data readers, nor the Eurora archive code, nor the slurm.conf reader
    (:data:`dispatchlab.run.build.OPTIONAL`, :data:`dispatchlab.platform.files.
    SLURM_CONF`); each is imported when a run uses it."""
    trace = tmp_path / "t.swf"
    write_swf(JobTable.from_arrays(submit=[0, 5], run=[10, 20], units=[1, 2],
                                   requested_time=[20, 30]), trace)
    code = (
        "import sys\n"
        "from dispatchlab.run.build import build\n"
        "from dispatchlab.run.config import PlatformChoice, RunConfig, TraceSource\n"
        f"build(RunConfig(TraceSource({str(trace)!r}), PlatformChoice(None, 2, 4)))"
        ".simulation.run()\n"
        "print(sorted(m for m in ('dispatchlab.workload.alea', 'dispatchlab.power.data',\n"
        "    'dispatchlab.workload.eurora', 'dispatchlab.platform.slurmconf')\n"
        "    if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    assert out.strip() == "[]"
