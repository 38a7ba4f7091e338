"""Assembling a run: :func:`build` turns a :class:`~dispatchlab.run.config.RunConfig`
into a ready :class:`~dispatchlab.sim.Simulation`, the one way every entry point wires
a run (``dispatchlab simulate``, ``compare``, ``study`` and learning-to-rank
evaluation).

The order is fixed: the settings are checked (:meth:`RunConfig.validate`), then the
trace is read, cleaned and selected (:func:`load_jobs`; or the caller's job table),
the platform chosen (:func:`choose_platform`; or the caller's), an Alea table fitted to
it (:func:`fit_jobs`), a cluster log's requests fitted to it (GPUs, memory,
partitions: :func:`fit_cluster_requests`), the power cap made (:func:`power_cap`), the
job power attached (:func:`attach_job_power`) and its series matched (:func:`read_job_series`), the
components built, the dispatcher's needs checked against the inputs
(:func:`check_power_inputs`), the hot start's dummy jobs added, the combination checked
(:func:`~dispatchlab.sim.engine.check_combination`), the platform warnings
reported (:func:`dispatchlab.run.advice.platform_warnings`), a caller's cap rule
applied, and the engine chosen (:func:`choose_engine`). Campaigns and studies supply
what the configuration names no file for (a
generated or sliced job table, the platform, synthetic power and cap, a built
duration model) as arguments of :func:`build`; the order stays the same. Every mistake raises
:class:`~dispatchlab.core.errors.InputError` with one line naming the command-line
option (or file) at fault.

Notes and warnings along the way (what the power file matched, an Alea table losing
its constraints, an overloaded platform) go to ``report(kind, text)`` (``kind``:
``"note"`` or ``"warning"``), as they happen; ``dispatchlab simulate`` prints them on
stderr. Without ``report`` they are dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from dispatchlab.core.components import ComponentSpec, load_object
from dispatchlab.core.errors import InputError
from dispatchlab.core.memory import release_free_memory
from dispatchlab.core.suggest import did_you_mean, missing_file_hint
from dispatchlab.dispatch.base import Dispatcher
from dispatchlab.platform.choose import PRESETS, platform_for
from dispatchlab.platform.eurora import split_archive
from dispatchlab.power.cap import PowerCap, parse_cap_value, parse_window
from dispatchlab.power.model import has_power
from dispatchlab.run.advice import platform_warnings
from dispatchlab.run.config import OPTIONS, Component, PlatformChoice, RunConfig, TraceSource
from dispatchlab.sim.engine import Simulation, check_combination, is_node_level
from dispatchlab.sim.hotstart import add_hot_start
from dispatchlab.sim.native import NativeSimulation, native_reason
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.requests import fit_requests

if TYPE_CHECKING:
    from dispatchlab.platform import Platform
    from dispatchlab.workload.jobs import JobTable

__all__ = ["OPEN_END", "Assembled", "CapRule", "PowerInputs", "PowerSource", "Prepared",
           "Report", "apply_hot_start", "attach_job_power", "build", "build_component",
           "check_power_inputs", "choose_engine", "choose_platform", "fit_cluster_requests",
           "fit_jobs",
           "load_jobs", "parse_fraction", "parse_range", "power_cap", "read_job_series"]

#: ``report(kind, text)``: a note or warning while a run is assembled.
Report = Callable[[str, str], None]
#: The end of an open range ``A:`` (beyond any trace's times and job counts).
OPEN_END = 2**62

#: The parts of an assembly that only some runs need, as lazy ``"module:name"`` entries
#: (like the readers of :data:`dispatchlab.workload.load.READERS`): each module is
#: imported when a run uses it (an ``ARCHIVE#MEMBER`` trace, an Alea table, a job power
#: file or series, a platform file that may be a slurm.conf), so a run of an SWF trace
#: without power data imports none of them (the power data, Alea, Eurora archive and
#: slurm.conf modules and what they import: some 50 M instructions, about 1 % of a
#: whole ``simulate`` of KTH-SP2).
OPTIONAL: dict[str, str] = {
    "slurm_conf_note": "dispatchlab.platform.slurmconf:slurm_conf_note",
    "split_archive_path": "dispatchlab.workload.eurora:split_archive_path",
    "for_platform": "dispatchlab.workload.alea:for_platform",
    "attach_power": "dispatchlab.power.data:attach_power",
    "read_power_series": "dispatchlab.power.data:read_power_series",
    "match_power_series": "dispatchlab.power.data:match_power_series",
    "DEFAULT_PERIOD": "dispatchlab.power.data:DEFAULT_PERIOD",
}

_KINDS = {"dispatcher": "dispatcher", "predictor": "predictor",
          "power_predictor": "power-predictor", "duration_model": "duration-model"}


def _silent(kind: str, text: str) -> None:
    """The default :data:`Report`: drops notes and warnings."""


@dataclass(frozen=True)
class PowerInputs:
    """The power inputs of a run made by the caller (a campaign's synthetic power
    tables and cap specs, a study's shared cap) instead of from the configuration's
    files: the ``jobs`` with their power columns (or as given), the power ``series``
    (passed through to :attr:`Assembled.series` as given; None: none), the ``cap``
    (None: none) and the built ``power_predictor`` (None: none)."""

    jobs: JobTable
    series: dict[str, Any] | None = None
    cap: PowerCap | None = None
    power_predictor: Any = None


#: ``power(jobs, platform) -> PowerInputs``: the caller's power inputs for the jobs
#: (fitted to the platform) and the platform of the run.
PowerSource = Callable[["JobTable", "Platform"], PowerInputs]


@dataclass(frozen=True)
class Prepared:
    """A run's inputs just before its :class:`~dispatchlab.sim.Simulation` is made (what
    a :data:`CapRule` reads): the ``jobs`` (hot-start dummies included), the
    ``platform``, the rows ``pinned`` to their nodes by the hot start (None: no hot
    start), the ``cap`` and the built components (fresh instances; the simulation
    clones them)."""

    jobs: JobTable
    platform: Platform
    pinned: dict[int, Any] | None
    cap: PowerCap
    dispatcher: Dispatcher
    predictor: Any
    power_predictor: Any
    duration_model: Any


#: ``cap_rule(prepared) -> PowerCap``: the cap the run simulates under, from its
#: prepared inputs (a campaign's ``cap_base`` reads the cap's shares as shares of an
#: uncapped reference run's peak).
CapRule = Callable[[Prepared], PowerCap]


@dataclass
class Assembled:
    """What :func:`build` made: the ``simulation`` (not run yet) and the inputs it was
    made of: the ``jobs`` as simulated (power columns and hot-start dummies included),
    the ``platform``, the ``cap`` (None: none), the job power ``series`` to attach to
    the result (:attr:`~dispatchlab.sim.result.SimulationResult.power_series`; None:
    none) and the ``config``. ``engine``: the engine that will run (``"native"`` or
    ``"python"``, :func:`choose_engine`); ``not_native``: why the native core cannot
    run it (None when it can)."""

    simulation: Simulation | NativeSimulation
    jobs: JobTable
    platform: Platform
    cap: PowerCap | None
    series: dict[str, Any] | None
    config: RunConfig
    engine: str = "python"
    not_native: str | None = None


# ------------------------------------------------------------------------ trace
def parse_range(text: str | None, option: str, cast: Callable[[str], Any] = int,
                *, open_end: bool = True) -> tuple[Any, Any] | None:
    """``A:B`` -> (A, B); with ``open_end``, ``A:`` -> (A, :data:`OPEN_END`): to the end."""
    if text is None:
        return None
    parts = text.split(":")
    if len(parts) != 2 or not parts[0].strip():
        raise InputError(f"expected A:B{' or A:' if open_end else ''}, got {text!r}",
                         field=option)
    try:
        lo = cast(parts[0])
        hi = OPEN_END if (open_end and not parts[1].strip()) else cast(parts[1])
    except ValueError:
        raise InputError(f"expected numbers A:B, got {text!r}", field=option) from None
    return lo, hi


def parse_fraction(text: str | None) -> tuple[Literal["first", "last"], float] | None:
    """``first:F`` or ``last:F`` (0 < F <= 1; checked by the loader)."""
    if text is None:
        return None
    parts = text.split(":")
    if len(parts) != 2 or parts[0] not in ("first", "last"):
        raise InputError(f"expected first:F or last:F, got {text!r}", field="--fraction")
    try:
        return cast(Literal["first", "last"], parts[0]), float(parts[1])
    except ValueError:
        raise InputError(f"expected a number after ':', got {text!r}",
                         field="--fraction") from None


def load_jobs(source: TraceSource, *, clean: bool = True) -> JobTable:
    """Read, clean and select the trace of ``source``
    (:func:`dispatchlab.workload.load.load_trace`; ``clean=False``: the trace as read,
    for conversion and inference, where nothing may be lost)."""
    if source.extra_fields not in ("error", "ignore"):
        raise InputError(f"must be 'error' or 'ignore', got {source.extra_fields!r}",
                         field="--extra-fields")
    path = Path(source.path)
    # ARCHIVE#MEMBER names a job instance inside a tar: no file of that name
    if not path.exists() and load_object(OPTIONAL["split_archive_path"])(path) is None:
        raise InputError("no such file" + missing_file_hint(path), file=str(path))
    options = dict(source.reader_options)
    if options.get("columns") is not None:
        options["columns"] = [c.strip() for c in options["columns"].split(",")]
    return load_trace(
        path,
        format=source.format,
        reader_options=options,
        lenient=source.lenient,
        extra_fields=cast(Literal["error", "ignore"], source.extra_fields),
        drop_overrun=source.drop_overrun,
        max_procs=True if source.max_procs else None,
        window=parse_range(source.window, "--window"),
        jobs=parse_range(source.jobs, "--jobs"),
        fraction=parse_fraction(source.fraction),
        clean=clean,
    )


# --------------------------------------------------------------------- platform
def choose_platform(jobs: JobTable, choice: PlatformChoice) -> Platform:
    """The platform of ``choice``: a preset (``eurora``, ...), a platform TOML file (with
    an optional ``[queues]`` table or ``queues_file``) or a PA-HPC-SIM node file
    (``nodes_#64``), either possibly inside a tar archive as ``ARCHIVE#MEMBER``; a
    homogeneous machine of ``nodes`` x ``cores_per_node``; or the trace header's
    machine (pooled cores)."""
    platform, nodes, cores_per_node = choice.platform, choice.nodes, choice.cores_per_node
    if platform is not None and (nodes is not None or cores_per_node is not None):
        raise InputError("give either --platform or --nodes/--cores-per-node, not both",
                         field="--platform")
    spec: dict[str, Any] = {}
    if platform in PRESETS:
        spec = {"builtin": platform}
    elif platform is not None:
        path, _member = split_archive(platform)
        if not path.exists():
            hint = did_you_mean(platform, list(PRESETS)) or missing_file_hint(path)
            raise InputError("platform file not found (give a TOML file, an Eurora node "
                             f"file, ARCHIVE#MEMBER or a preset: {', '.join(PRESETS)})"
                             + hint, file=str(path))
        spec = {"file": platform}
    elif nodes is not None or cores_per_node is not None:
        if nodes is None or cores_per_node is None:
            raise InputError("--nodes and --cores-per-node go together", field="--nodes")
        spec = {"nodes": nodes, "cores_per_node": cores_per_node}
    return platform_for(spec, jobs, advice="give --platform or --nodes and --cores-per-node")


def fit_jobs(jobs: JobTable, platform: Platform, report: Report = _silent) -> JobTable:
    """``jobs`` made runnable on ``platform``: an Alea table on another platform than
    its machine file loses its cluster, exclusivity and memory requests, with one
    warning saying so (:func:`dispatchlab.workload.alea.for_platform`)."""
    if jobs.info.format != "alea":
        return jobs
    jobs, note = load_object(OPTIONAL["for_platform"])(jobs, platform.total_capacity())
    if note:
        report("warning", note)
    return jobs


def fit_cluster_requests(jobs: JobTable, platform: Platform, config: RunConfig,
                         report: Report = _silent) -> tuple[JobTable, Platform]:
    """The jobs and platform of the run after the request fitting
    (:func:`dispatchlab.workload.requests.fit_requests`, with the configuration's
    ``partition_map`` / ``ignore_partitions``): GPUs, memory, partitions and node
    features of a cluster log become per-unit requests; its warnings and notes go to
    ``report``. An SWF trace on a platform without ``mem`` (its default pooled one
    included) is returned as it is."""
    fitted = fit_requests(jobs, platform, partition_map=config.partition_map,
                          ignore_partitions=config.ignore_partitions)
    for text in fitted.warnings:
        report("warning", text)
    for text in fitted.notes:
        report("note", text)
    return fitted.jobs, fitted.platform


# ------------------------------------------------------------------------ power
def power_cap(cap: str | None, window: str | None, cap_file: str | Path | None,
              platform: Platform) -> PowerCap | None:
    """The :class:`~dispatchlab.power.cap.PowerCap` of ``cap`` (a fraction of the
    platform's maximum dynamic power, or watts) on ``window`` ``T0:T1``, or of the cap
    schedule ``cap_file`` (None without either)."""
    if cap_file is not None:
        if cap is not None or window is not None:
            raise InputError("give either --cap-file or --cap (and --cap-window)",
                             field="--cap-file")
        return PowerCap.from_file(cap_file)
    if cap is None:
        if window is not None:
            raise InputError("--cap-window needs --cap", field="--cap-window")
        return None
    try:
        watts = parse_cap_value(cap, platform.dynamic_power_base)
        t0, t1 = parse_window(window) if window is not None else (0, None)
    except InputError as exc:
        raise InputError(exc.message, field=f"--{exc.field or 'cap'}") from None
    return PowerCap.window(watts, t0, t1)


def attach_job_power(jobs: JobTable, power_file: str | None, platform: Platform,
                     report: Report = _silent) -> JobTable:
    """The jobs with the power columns of ``power_file`` (a note says what matched);
    ``jobs`` unchanged without a file."""
    if power_file is None:
        return jobs
    jobs, matched = load_object(OPTIONAL["attach_power"])(jobs, power_file, platform)
    report("note", f"power: {matched.describe()}")
    return jobs


def read_job_series(path: str | Path | None, jobs: JobTable, power_file: str | None,
                    report: Report = _silent) -> dict[str, Any] | None:
    """The power series of the jobs in ``path``
    (:func:`~dispatchlab.power.data.read_power_series` then
    :func:`~dispatchlab.power.data.match_power_series`; a note says what matched, and
    another when the series' median step is not the sampling period); None without a
    path. Series need the job power (``power_file``)."""
    if path is None:
        return None
    if power_file is None:
        raise InputError("--power-series needs --power (the jobs' power_mean, power_max, "
                         "power_std, used by dispatchers and for jobs without a series)",
                         field="--power-series")
    read, match = (load_object(OPTIONAL[k]) for k in ("read_power_series", "match_power_series"))
    series, matched = match(jobs, read(path), source=str(path))
    report("note", matched.describe())
    period = load_object(OPTIONAL["DEFAULT_PERIOD"])
    if matched.median_step is not None and matched.median_step != period:
        report("note", f"the platform power is sampled every {period} s, the "
                       f"series' median step is {matched.median_step:g} s")
    return series


def check_power_inputs(dispatcher: Dispatcher, cap: PowerCap | None, jobs: JobTable,
                       power_predictor: Any) -> None:
    """What the dispatcher's requirements (``dispatcher.requires``) ask for and the run
    lacks: a cap (``requires.cap``), job power data (``requires.job_power``) or a power
    predictor (``requires.power_predictions``); one clear error."""
    name = dispatcher.name or type(dispatcher).__name__
    requires = dispatcher.requires
    if requires.cap and cap is None:
        raise InputError(f"dispatcher {name!r} caps power: give a power cap (--cap or "
                         "--cap-file)", field="--cap")
    if requires.job_power and not has_power(jobs):
        raise InputError(f"dispatcher {name!r} reads the jobs' measured power: give job "
                         "power data (--power FILE, e.g. from 'dispatchlab power "
                         "synth')", field="--power")
    if requires.power_predictions and power_predictor is None:
        raise InputError(f"dispatcher {name!r} needs job power predictions: give a power "
                         "predictor (--power-predictor, e.g. real or history)",
                         field="--power-predictor")


def apply_hot_start(jobs: JobTable, platform: Platform, share: float | None
                    ) -> tuple[JobTable, dict[int, Any] | None]:
    """The jobs with the hot start's dummy jobs on ``share`` of the nodes added, and
    the rows the engine pins to their nodes (``(jobs, None)`` without a hot start)."""
    if share is None:
        return jobs, None
    return add_hot_start(jobs, platform, share)


# ------------------------------------------------------------------------ build
def choose_engine(engine: str, not_native: str | None) -> str:
    """The engine that runs: ``"native"`` or ``"python"`` for the configuration's
    ``engine`` (``auto``, ``native``, ``python``) and ``not_native``, why the native
    core cannot run the run (:func:`~dispatchlab.sim.native.native_reason`; None: it
    can). ``auto`` is native exactly when it can; ``native`` when it cannot is an
    :class:`InputError` on ``--engine`` naming why."""
    if engine == "python":
        return "python"
    if not_native is None:
        return "native"
    if engine == "native":
        raise InputError(f"the native engine cannot run this: {not_native} (use --engine "
                         "auto or python)", field=OPTIONS["engine"])
    return "python"


def build_component(component: Component | None, field: str) -> Any:
    """A fresh instance of the component in the config's field ``field`` (dispatcher,
    predictor, power_predictor, duration_model), None for None."""
    if component is None:
        return None
    return ComponentSpec(_KINDS[field], component.name, dict(component.params)).build()


def build(config: RunConfig, *, jobs: JobTable | None = None,
          platform: Platform | None = None, power: PowerSource | None = None,
          duration_model: Any = None, cap_rule: CapRule | None = None,
          report: Report | None = None,
          progress: Callable[[int], Callable[[int, int], None] | None] | None = None
          ) -> Assembled:
    """Assemble the run of ``config`` (see the module docstring for the order).

    ``jobs``: a job table already loaded, cleaned and selected, used instead of
    reading ``config.trace``; ``platform``: a platform used instead of
    ``config.platform``. ``power``: the caller's power inputs (:data:`PowerSource`),
    used instead of the configuration's power file, series and cap (which must then be
    unset; ``config.power_predictor`` still names the power predictor the dispatcher's
    requirements are checked against, the built one comes from ``power``);
    ``duration_model``: a built duration model used instead of
    ``config.duration_model``; ``cap_rule``: with a cap, the cap actually simulated
    (:data:`CapRule`, called after the hot start). ``report``: where notes and
    warnings go; ``progress``: called with the number of jobs to simulate, returns the
    engine's progress callback (jobs submitted, total) or None."""
    say = report or _silent
    config.validate()
    if jobs is None:
        if config.trace is None:
            raise InputError("the run configuration names no trace and no job table "
                             "was given", field="trace")
        jobs = load_jobs(config.trace)
        release_free_memory()
    plat = choose_platform(jobs, config.platform) if platform is None else platform
    if platform is None and config.platform.platform not in (None, *PRESETS):
        # keys of a slurm.conf that are not modelled, once
        note = load_object(OPTIONAL["slurm_conf_note"])(config.platform.platform)
        if note:
            say("note", note)
    jobs = fit_jobs(jobs, plat, say)
    jobs, plat = fit_cluster_requests(jobs, plat, config, say)
    if power is None:
        cap = power_cap(config.cap, config.cap_window, config.cap_file, plat)
        jobs = attach_job_power(jobs, config.power, plat, say)
        series = read_job_series(config.power_series, jobs, config.power, say)
        power_predictor = build_component(config.power_predictor, "power_predictor")
    else:
        given = [k for k in ("power", "power_series", "cap", "cap_window", "cap_file")
                 if getattr(config, k) is not None]
        if given:
            raise ValueError(f"build: power inputs given both by 'power' and by the "
                             f"configuration ({', '.join(given)})")
        supplied = power(jobs, plat)
        jobs, series, cap = supplied.jobs, supplied.series, supplied.cap
        power_predictor = supplied.power_predictor
    dispatcher = build_component(config.dispatcher, "dispatcher")
    check_power_inputs(dispatcher, cap, jobs,
                       config.power_predictor if power is None else power_predictor)
    jobs, pinned = apply_hot_start(jobs, plat, config.hot_start)
    if duration_model is None:
        duration_model = build_component(config.duration_model, "duration_model")
    check_combination(dispatcher, duration_model=duration_model,
                      node_level=is_node_level(plat, jobs), model_field="--duration-model",
                      platform_field="--platform")
    for text in platform_warnings(jobs, plat):
        say("warning", text)
    predictor = build_component(config.predictor, "predictor")
    if cap_rule is not None and cap is not None:
        cap = cap_rule(Prepared(jobs, plat, pinned, cap, dispatcher, predictor,
                                power_predictor, duration_model))
    options: dict[str, Any] = {
        "overrun": config.overrun, "cap": cap, "power_predictor": power_predictor,
        "duration_model": duration_model, "pinned": pinned, "max_wall": config.max_wall}
    not_native = (None if config.engine == "python" else
                  native_reason(plat, jobs, dispatcher, predictor, **options))
    engine = choose_engine(config.engine, not_native)
    if engine == "native":  # under auto, a rate change makes the run again on Python
        options["fallback"] = config.engine == "auto"
    make = NativeSimulation if engine == "native" else Simulation
    sim = make(plat, jobs, dispatcher, predictor,
               progress=None if progress is None else progress(len(jobs)), **options)
    return Assembled(sim, jobs, plat, cap, series, config, engine, not_native)
