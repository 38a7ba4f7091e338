"""The native engine: which runs the compiled core (``dispatchlab._core``, the Rust
crates in ``rust/``) can simulate, and running them with the Python engine's result.

Two engines simulate a run: the Python engine (:class:`dispatchlab.sim.engine.
Simulation`, which runs every component) and the native one (:class:`NativeSimulation`,
which runs the components the core implements, many times faster). Where both can run
they give the same schedule (start, end, status of every job, and the event and pass
counts): the Python engine is the reference.

:func:`native_reason` says whether a run (its platform, jobs and components, with the
arguments of :class:`~dispatchlab.sim.engine.Simulation`) can run natively: None when
it can, else a short reason for people ("dispatcher 'sjf' is not native yet"). It
decides from tables, one entry per native capability:

* :data:`NATIVE_DISPATCHERS`: the registered name of each native dispatcher, its exact
  class, the requirements it declares (:class:`~dispatchlab.dispatch.requirements.
  Requirements`) and the parameter values the core implements (a tuple of values, or
  a rule, :class:`Accepts`: e.g. the static orderings of :data:`STATIC_ORDERINGS`,
  which reach the core as per-job ranks, :func:`static_rank`);
* a dispatcher written in Python (:func:`is_python_dispatcher`: a class defined
  outside dispatchlab) runs through the ``View`` (:mod:`dispatchlab.sim.native_view`)
  on counting and node-level runs (it makes its allocations), unless it declares a requirement of
  :data:`PYTHON_DISPATCHER_NEEDS` (power predictions, a cap, slowed running jobs, a
  pass log);
* :data:`NATIVE_PREDICTORS`: the native duration predictors (exact classes); any
  other duration predictor (dispatchlab's learning ones, ``history``, ``tsafrir``, ...,
  or a class of yours) runs in Python, called by the core at each submission,
  completion and expiry (:mod:`dispatchlab.sim.native_predict`), under a native
  dispatcher that needs no estimate before the run (:func:`_python_predictor_reason`);
* the platform: counting runs (a pooled platform of cores, every job unit one core:
  :func:`~dispatchlab.sim.engine.is_node_level` False) under every native dispatcher;
  node-level runs (nodes x any resources, node weights, partitions and the other
  internal ``@`` resources of the request fitting) under the dispatchers of
  :data:`NODE_LEVEL` with an allocator of :data:`NATIVE_ALLOCATORS`;
* everything else a run may carry is refused until the core implements it: a power
  cap, a power predictor, a duration model, a hot start (pinned jobs), a wall-clock
  budget (``max_wall``), jobs the request fitting found unservable on a counting run
  (on a node-level run they are rejected with their reasons, as the Python engine
  rejects them), and job requests of resources the platform lacks (the Python engine
  reports those).

:func:`simulate_native` runs such a run and returns the
:class:`~dispatchlab.sim.result.SimulationResult` the Python engine returns, field for
field (so every output file is the same), except the two that measure the wall clock:
``wall_seconds`` (the native run's) and ``decision_times``, which is empty: the core
does not time its native dispatchers' calls (the summary's ``decision_calls`` and
decision times are then null, :func:`dispatchlab.run.outputs.run_summary`; ``passes``
counts the passes as the Python engine does). A dispatcher written in Python is timed
as on the Python engine.
:class:`NativeSimulation` wraps it with :class:`Simulation`'s interface (``run()``,
``dispatcher``, ``counting``, ``engine``) for the run layer. ``engine`` of the result
is ``"native"``.

Errors: the inputs are checked as the Python engine checks them
(:func:`~dispatchlab.sim.engine.check_jobs`: one :class:`InputError` line); a panic or
a broken rule in the core raises :class:`NativeCoreError` (a ``RuntimeError``: a bug,
never an abort; the command line prints it as one ``error:`` line).

**Adding a native capability** (a dispatcher, a parameter value, a predictor the core
implements): one entry in the table, and, when the core takes it through another
binding function or argument, one branch in :func:`_core_call`. A dispatcher the core
also runs on node-level platforms (its ``make_node_dispatcher`` builds it): its name
in :data:`NODE_LEVEL` (node-level runs go through ``_core.simulate_nodes``, with the
dispatcher's ``allocator`` by name).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.allocation import Allocation
from dispatchlab.dispatch.allocators import (
    Allocator,
    BestFit,
    Consolidate,
    EnergyConsolidate,
    FirstFit,
)
from dispatchlab.dispatch.backfill import EASY, Conservative
from dispatchlab.dispatch.base import Dispatcher, DispatchError
from dispatchlab.dispatch.orderings import (
    EwtOrder,
    FifoOrder,
    Ordering,
    OrderKeys,
    RandomOrder,
    SjfOrder,
    WalltimeOrder,
    job_width,
    make_ordering,
)
from dispatchlab.dispatch.priority import FIFO, LJF, SJF
from dispatchlab.dispatch.requirements import Requirements
from dispatchlab.platform import Platform
from dispatchlab.platform.queues import DEFAULT_EWT, job_ewt
from dispatchlab.predict.duration.base import (
    Predictor,
    PredictorContext,
    RealPredictor,
    WalltimePredictor,
)
from dispatchlab.sim.engine import (
    OVERRUN_MODES,
    Simulation,
    check_jobs,
    check_overrun,
    is_node_level,
    unfit_reason,
)
from dispatchlab.sim.native_predict import NativePredictorCalls
from dispatchlab.sim.native_view import NativePasses, NotNativeDecision, make_passes
from dispatchlab.sim.result import STATUS_REJECTED, SimulationResult
from dispatchlab.workload.jobs import JobTable
from dispatchlab.workload.requests import needs_fitting

try:  # the compiled core: built with the package (`make native` rebuilds it in place)
    from dispatchlab import _core
except ImportError:  # not built: every run is refused with the reason (NOT_BUILT)
    _core = None

__all__ = ["ENGINES", "NATIVE_ALLOCATORS", "NATIVE_DISPATCHERS", "NATIVE_PREDICTORS",
           "NODE_LEVEL", "STATIC_ORDERINGS", "Accepts", "NativeCoreError",
           "NativeDispatcher", "NativeSimulation", "native_reason", "simulate_native",
           "static_rank"]

#: The values of ``--engine``: ``auto`` (native when :func:`native_reason` is None,
#: else python), ``native`` (refused with the reason when it cannot run), ``python``.
ENGINES = ("auto", "native", "python")

#: The reason every run gets when the extension module is missing.
NOT_BUILT = ("the native core dispatchlab._core is not built (build it with `make "
             "native`; building needs a Rust toolchain)")


class NativeCoreError(RuntimeError):
    """The native core panicked or broke one of its rules: a bug in dispatchlab, not a
    mistake in the input. The message is the core's (a panic's message included)."""


@dataclass(frozen=True)
class Accepts:
    """The native values of a parameter given by a rule: ``test(value)`` says whether
    the core implements ``value``; ``native`` describes them (in the reason a run is
    not native)."""

    test: Callable[[Any], bool]
    native: str


@dataclass(frozen=True)
class NativeDispatcher:
    """A dispatcher the core implements: its exact class ``cls`` (a subclass may change
    any rule, so it is not native), the ``requires`` its class declares (a run whose
    dispatcher declares other requirements is not native), the parameter values the
    core implements (``params``: name -> the accepted values, or an :class:`Accepts`
    rule; any other value is not native) and the parameters that cannot change a
    counting run (``any_value``: the allocator places nothing on pooled cores), the
    core's name for it (``core``) and the parameters handed to the core (``core_params``,
    the binding's ``params``: the orderings ``order`` and ``priority`` as the core's
    names or per-job ranks, see :func:`_core_params`)."""

    cls: type[Dispatcher]
    core: str
    params: Mapping[str, tuple[Any, ...] | Accepts] = field(default_factory=dict)
    any_value: frozenset[str] = frozenset()
    requires: Requirements = field(
        default_factory=lambda: Requirements(empty_queue_pass=False))
    core_params: tuple[str, ...] = ()


#: The orderings the core runs (exact classes): queue order and ``sjf`` by name, the
#: other static orderings as per-job ranks (:func:`static_rank`): an ordering whose
#: relative order of two jobs never changes and whose keys are per job (so the order
#: of any subset of the jobs is the order of their ranks over all jobs).
STATIC_ORDERINGS: tuple[type[Ordering], ...] = (FifoOrder, SjfOrder, WalltimeOrder, EwtOrder,
                                               RandomOrder)


def _ordering(value: object) -> Ordering | None:
    """The ordering ``value`` names when the core runs it (None: it does not)."""
    if not isinstance(value, str | Ordering):
        return None
    try:
        ordering = make_ordering(value)
    except InputError:
        return None
    return ordering if type(ordering) in STATIC_ORDERINGS else None


def _native_order(value: object) -> bool:
    return (isinstance(value, str) and value.lower() == "priority") or \
        _ordering(value) is not None


_ORDERINGS = ", ".join(cls.name for cls in STATIC_ORDERINGS)
#: ``order`` (the backfill scan) and ``priority`` (the queue priority) of the backfilling
#: dispatchers: the static orderings (``order`` also ``priority``: the priority's)
_ORDER = Accepts(_native_order, f"{_ORDERINGS}, priority")
_PRIORITY = Accepts(lambda value: _ordering(value) is not None, _ORDERINGS)
_RESERVATIONS = Accepts(lambda k: type(k) is int and k >= 1, "an integer >= 1")


#: The allocators the core implements, by registered name (exact classes, no
#: parameters): the ``allocator`` of a native dispatcher on a node-level run. They
#: only place jobs on nodes (their set-up reads nothing a pooled platform may lack):
#: any of them leaves a counting run unchanged.
NATIVE_ALLOCATORS: dict[str, type[Allocator]] = {
    "first-fit": FirstFit,
    "best-fit": BestFit,
    "consolidate": Consolidate,
    "energy-consolidate": EnergyConsolidate,
}
_PLAIN_ALLOCATORS = tuple(NATIVE_ALLOCATORS)

#: The native dispatchers that also run node-level runs (registered names; the core's
#: ``make_node_dispatcher`` builds them): one entry per dispatcher whose node-level
#: pass (``Dispatcher::dispatch_nodes``) the core implements. Their parameters are
#: checked by :data:`NATIVE_DISPATCHERS` (the ``allocator`` among them), and the
#: allocator is handed to the core by name.
NODE_LEVEL: frozenset[str] = frozenset({"fifo", "sjf", "ljf",
                                        # node-level backfilling (rust/core/src/backfill_nodes.rs)
                                        "easy", "conservative"})

#: The native dispatchers by registered name (one entry per dispatcher the core
#: implements; :class:`NativeDispatcher`).
NATIVE_DISPATCHERS: dict[str, NativeDispatcher] = {
    "fifo": NativeDispatcher(FIFO, "fifo", {"allocator": _PLAIN_ALLOCATORS}),
    # strict or skipping
    "sjf": NativeDispatcher(SJF, "sjf", {"skip": (False, True),
                                         "allocator": _PLAIN_ALLOCATORS},
                            core_params=("skip",)),
    "ljf": NativeDispatcher(LJF, "ljf", {"skip": (False, True),
                                         "allocator": _PLAIN_ALLOCATORS},
                            core_params=("skip",)),
    # EASY with K reservations, a static backfill order and a static queue priority
    "easy": NativeDispatcher(EASY, "easy", {
        "order": _ORDER, "reservations": _RESERVATIONS, "priority": _PRIORITY,
        "scope": ("backfill", "queue"), "explain": (False,),
        "allocator": _PLAIN_ALLOCATORS},
        core_params=("order", "reservations", "priority", "scope")),
    "conservative": NativeDispatcher(Conservative, "conservative", {
        "order": _ORDER, "explain": (False,), "allocator": _PLAIN_ALLOCATORS},
        core_params=("order",)),
}

#: The native duration predictors by registered name: exact classes, no parameters
#: (the core's ``walltime`` and ``real``, with Tsafrir's expiry rule).
NATIVE_PREDICTORS: dict[str, type[Predictor]] = {
    "walltime": WalltimePredictor,
    "real": RealPredictor,
}


# --- dispatchers written in Python (the core calls them through the View) -------------

#: The requirements (``Dispatcher.requires`` fields) a dispatcher written in Python may
#: declare on the native engine, with the reason a run that needs the opposite is not
#: native (the others: placement on nodes, measured job power, passes on an empty
#: queue, are what the native View gives on a counting platform).
PYTHON_DISPATCHER_NEEDS: dict[str, tuple[bool, str]] = {
    "power_predictions": (False, "power predictions"),
    "cap": (False, "a power cap"),
    "slows_running_jobs": (False, "slowing running jobs (a duration model)"),
    "pass_log": (False, "a pass log"),
}


def is_python_dispatcher(dispatcher: Dispatcher) -> bool:
    """Whether ``dispatcher`` is a class written outside dispatchlab (yours: the
    README's one small class), which the native engine runs through the ``View``
    protocol (:mod:`dispatchlab.sim.native_view`). dispatchlab's own dispatchers that
    are not native yet run on the Python engine."""
    module = type(dispatcher).__module__
    return module != "dispatchlab" and not module.startswith("dispatchlab.")


def _python_dispatcher_reason(dispatcher: Dispatcher) -> str | None:
    """Why the Python ``dispatcher`` (:func:`is_python_dispatcher`) cannot run on the
    native engine (None: it can): a requirement the native View does not meet."""
    name = dispatcher.name or type(dispatcher).__name__
    requires = dispatcher.requires
    for key, (native, what) in PYTHON_DISPATCHER_NEEDS.items():
        if getattr(requires, key) != native:
            return f"dispatcher {name!r} needs {what}, which the native engine lacks yet"
    return None


def _dispatcher_reason(dispatcher: Dispatcher) -> str | None:
    """Why ``dispatcher`` is not native (None: it is)."""
    name = dispatcher.name or type(dispatcher).__name__
    entry = NATIVE_DISPATCHERS.get(name)
    if ((entry is None or type(dispatcher) is not entry.cls)
            and is_python_dispatcher(dispatcher)) or getattr(dispatcher, _VIA_VIEW, False):
        return _python_dispatcher_reason(dispatcher)
    if entry is None:
        return f"dispatcher {name!r} is not native yet"
    if type(dispatcher) is not entry.cls:
        return (f"dispatcher {name!r} of class {type(dispatcher).__module__}."
                f"{type(dispatcher).__qualname__} is not the native {name!r}")
    if dispatcher.requires != entry.requires or dispatcher.call_on_empty_queue:
        return f"dispatcher {name!r} declares requirements the native core lacks"
    for key, value in dispatcher.get_params().items():
        if key in entry.any_value:
            continue
        accepted = entry.params.get(key, ())
        if isinstance(accepted, Accepts):
            if accepted.test(value):
                continue
            native = accepted.native
        elif any(type(value) is type(a) and value == a for a in accepted):
            continue
        else:
            native = "|".join(str(a) for a in accepted)
        return (f"dispatcher {name!r} with {key}={value!r} is not native yet"
                + (f" (native: {key}={native})" if native else ""))
    return None


def _predictor_reason(predictor: Predictor) -> str | None:
    """Why ``predictor`` is not native (None: it is): the core then calls it in
    Python (:func:`_python_predictor_reason`)."""
    name = predictor.name or type(predictor).__name__
    cls = NATIVE_PREDICTORS.get(name)
    if cls is None:
        return f"predictor {name!r} is not native yet"
    if type(predictor) is not cls:
        return (f"predictor {name!r} of class {type(predictor).__module__}."
                f"{type(predictor).__qualname__} is not the native {name!r}")
    if predictor.get_params():
        return f"predictor {name!r} with parameters is not native yet"
    return None


# --- duration predictors run in Python (the core calls them: native_predict.py) ------

def _python_predictor_reason(predictor: Predictor, dispatcher: Dispatcher) -> str | None:
    """Why the predictor ``predictor``, which the core does not implement and calls in
    Python (its estimates then exist only from each job's submission on), cannot run
    under ``dispatcher`` on the native engine (None: it can): a native dispatcher
    ordering jobs by per-job ranks over all jobs (:func:`static_rank`, made from every
    job's estimate before the run). A dispatcher written in Python runs with it."""
    name = predictor.name or type(predictor).__name__
    if _via_view(dispatcher):
        return None  # (its View sees each estimate from the job's submission on)
    for key, value in dispatcher.get_params().items():
        if key in NATIVE_DISPATCHERS[dispatcher.name].core_params \
                and key in ("order", "priority"):
            ordering = _ordering(value)
            if ordering is not None and type(ordering) not in (FifoOrder, SjfOrder):
                return (f"predictor {name!r} with {key}={ordering.name!r} is not native "
                        "yet (the ordering needs every estimate before the run)")
    return None


def _jobs_reason(platform: Platform, jobs: JobTable,
                 dispatcher: Dispatcher | None = None) -> str | None:
    """Why the jobs on ``platform`` cannot run natively under ``dispatcher`` (None:
    they can)."""
    if is_node_level(platform, jobs):
        reason = _node_reason(platform, jobs, dispatcher)
        if reason is not None:
            return reason
    names = set(platform.resource_names)
    for r, values in jobs.resources.items():
        if r not in names and bool(np.any(values)):
            return f"the jobs request resource {r!r}, which the platform lacks"
    unservable = jobs.columns.get("unservable")
    if unservable is not None and bool(np.any(unservable != "")) \
            and not is_node_level(platform, jobs):
        return "jobs the request fitting found unservable are not native yet on pooled cores"
    return None


def _node_reason(platform: Platform, jobs: JobTable,
                 dispatcher: Dispatcher | None) -> str | None:
    """Why a node-level run cannot run natively under ``dispatcher`` (None: it can)."""
    if dispatcher is not None and _via_view(dispatcher):  # it makes its allocations
        if not dispatcher.requires.node_level:
            return f"dispatcher {dispatcher.name!r} cannot place jobs on nodes"
    elif dispatcher is None or dispatcher.name not in NODE_LEVEL:
        name = None if dispatcher is None else dispatcher.name
        return f"dispatcher {name!r} is not native on node-level platforms yet"
    else:
        allocator = dispatcher.get_params().get("allocator")
        if not isinstance(allocator, str) or allocator not in NATIVE_ALLOCATORS:
            return (f"allocator {allocator!r} is not native yet (native: "
                    f"{', '.join(NATIVE_ALLOCATORS)})")
    if needs_fitting(jobs, platform):
        return "jobs read from a cluster log and not fitted to the platform"
    if len(jobs) and bool(np.any(_requests(jobs, platform).max(axis=1) == 0)):
        return "jobs asking for no resource per unit are not native"
    return None


def _requests(jobs: JobTable, platform: Platform) -> np.ndarray:
    """The per-unit requests (jobs x resources, int64, the platform's resource order),
    as the Python engine builds them."""
    names = platform.resource_names
    requests = np.zeros((len(jobs), len(names)), dtype=np.int64)
    for k, r in enumerate(names):
        if r in jobs.resources:
            requests[:, k] = jobs.resources[r]
    return requests


def _unservable(jobs: JobTable) -> np.ndarray | None:
    """True for each job the request fitting found unservable (its ``unservable``
    reason not empty), or None when there is none."""
    unservable = jobs.columns.get("unservable")
    if unservable is None or not bool(np.any(unservable != "")):
        return None
    return np.ascontiguousarray(unservable != "", dtype=bool)


def native_reason(platform: Platform, jobs: JobTable, dispatcher: Dispatcher,
                  predictor: Predictor | None = None, *, overrun: str = "run",
                  max_wall: float | None = None, duration_model: Any = None,
                  cap: Any = None, power_predictor: Any = None,
                  pinned: Mapping[int, Any] | None = None) -> str | None:
    """None when the run of ``jobs`` on ``platform`` under ``dispatcher`` and
    ``predictor`` (None: ``walltime``), with the other arguments of
    :class:`~dispatchlab.sim.engine.Simulation`, can run on the native core; else a
    short reason for people, the first that applies (see the module docstring for what
    is native). Checks nothing else: a mistake in the inputs is reported by the run."""
    if _core is None:
        return NOT_BUILT
    reason = _dispatcher_reason(dispatcher)
    if reason is None and _predictor_reason(predictor or WalltimePredictor()) is not None:
        assert predictor is not None  # (walltime is native)
        reason = _python_predictor_reason(predictor, dispatcher)
    if reason is not None:
        return reason
    if overrun not in OVERRUN_MODES:
        return f"overrun {overrun!r} is not native"
    refused = [(cap is not None, "power caps"),
               (power_predictor is not None, "power predictors"),
               (duration_model is not None, "duration models"),
               (bool(pinned), "hot starts"),
               (max_wall is not None, "wall-clock budgets (max_wall)")]
    for given, what in refused:
        if given:
            return f"{what} are not native yet"
    return _jobs_reason(platform, jobs, dispatcher)


def static_rank(ordering: Ordering, jobs: JobTable, platform: Platform,
                estimate: np.ndarray) -> np.ndarray:
    """Each job row's rank (int64, 0 first) in the static ``ordering`` (one of
    :data:`STATIC_ORDERINGS`) over all ``jobs``, with the keys the backfilling
    dispatchers give it (:class:`~dispatchlab.dispatch.orderings.OrderKeys`: submit
    times, the predictor's ``estimate`` of every job, the EWT of its queue, its demand):
    sorting any set of jobs by rank gives the ordering's order of that set, which is
    how the core applies it. A copy of ``ordering`` is started on the run's jobs."""
    ordering = ordering.clone()
    ordering.start(SimpleNamespace(jobs=jobs, platform=platform))
    n = len(jobs)
    names = platform.resource_names
    requests = np.zeros((n, len(names)), dtype=np.int64)
    for k, r in enumerate(names):
        if r in jobs.resources:
            requests[:, k] = jobs.resources[r]
    est = np.asarray(estimate, dtype=np.int64)
    width = job_width(requests, jobs["units"], platform.capacity_matrix().sum(axis=0))
    keys = OrderKeys(np.arange(n, dtype=np.int64), 0,
                     np.asarray(jobs["submit"], dtype=np.int64), est,
                     job_ewt(jobs, platform, DEFAULT_EWT), est * width)
    rank = np.empty(n, dtype=np.int64)
    rank[np.asarray(ordering.sort(keys), dtype=np.int64)] = np.arange(n, dtype=np.int64)
    return rank


def _core_params(dispatcher: Dispatcher, jobs: JobTable, platform: Platform,
                 estimate: np.ndarray) -> dict[str, Any]:
    """The binding's ``params`` for a native ``dispatcher``: its parameters the core
    takes (:attr:`NativeDispatcher.core_params`), an ordering as ``"fifo"``, ``"sjf"``
    or ``"priority"``, or else as per-job ranks (:func:`static_rank`)."""
    entry = NATIVE_DISPATCHERS[dispatcher.name]
    given = dispatcher.get_params()
    out: dict[str, Any] = {}
    for key in entry.core_params:
        value = given[key]
        if key in ("order", "priority"):
            ordering = _ordering(value)
            if ordering is None:  # order="priority" (native_reason accepted it)
                value = "priority"
            elif type(ordering) in (FifoOrder, SjfOrder):
                value = ordering.name
            else:
                value = static_rank(ordering, jobs, platform, estimate)
        out[key] = value
    return out


def _columns(jobs: JobTable) -> tuple[np.ndarray, ...]:
    """The job columns every simulate function of the core takes first: submit, run,
    requested time and units (int64, contiguous)."""
    return tuple(np.ascontiguousarray(jobs[c], dtype=np.int64)
                 for c in ("submit", "run", "requested_time", "units"))


def _core_resource(platform: Platform) -> int | None:
    """The index of the ``core`` resource among the platform's (None: it has none)."""
    names = platform.resource_names
    return names.index("core") if "core" in names else None


def _core_call(jobs: JobTable, total_cores: int, dispatcher: Dispatcher,
               predictor: Predictor, overrun: str, *, platform: Platform,
               estimate: np.ndarray,
               calls: NativePredictorCalls | None = None) -> tuple[Any, ...]:
    """The core's ``(start, end, status, events, passes)`` for a native run, and on a
    node-level run the allocations as flat arrays ``(offsets, nodes, counts)`` after
    them (one branch per binding function: ``simulate_nodes`` for node-level runs,
    ``simulate_counting`` for the others). ``estimate``: every job's estimate at
    submission (for the orderings' ranks); ``calls``: the calls of a predictor run in
    Python (:mod:`dispatchlab.sim.native_predict`; None: ``predictor`` is native)."""
    entry = NATIVE_DISPATCHERS[dispatcher.name]
    params = _core_params(dispatcher, jobs, platform, estimate)
    python_predictor = None if calls is None else calls.binding_args
    assert _core is not None  # native_reason refused the run otherwise
    if is_node_level(platform, jobs):
        params["allocator"] = dispatcher.get_params()["allocator"]
        return _core.simulate_nodes(
            *_columns(jobs), _requests(jobs, platform), platform.capacity_matrix(),
            entry.core, core=_core_resource(platform),
            weights=platform.node_weights() if platform.has_weights() else None,
            ranks=platform.efficiency_ranks(), unservable=_unservable(jobs),
            predictor=predictor.name, overrun=overrun, params=params,
            python_predictor=python_predictor)
    return _core.simulate_counting(*_columns(jobs), total_cores, entry.core,
                                   predictor=predictor.name, overrun=overrun, counts=True,
                                   params=params, python_predictor=python_predictor)


def _via_view(dispatcher: Dispatcher) -> bool:
    """Whether the core runs ``dispatcher`` through the View (a dispatcher written in
    Python, or one forced so by :func:`simulate_native`'s ``via_view``)."""
    entry = NATIVE_DISPATCHERS.get(dispatcher.name)
    return entry is None or type(dispatcher) is not entry.cls \
        or getattr(dispatcher, _VIA_VIEW, False)


#: set on a dispatcher clone to run it through the View (tests of the View)
_VIA_VIEW = "_dispatchlab_via_view"


def _core_call_python(jobs: JobTable, total_cores: int, passes: NativePasses,
                      predictor: Predictor, overrun: str,
                      calls: NativePredictorCalls | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """The core's ``(start, end, status, events, passes)`` for a dispatcher written in
    Python (:mod:`dispatchlab.sim.native_view`); ``calls`` as for :func:`_core_call`."""
    empty = (None if passes.dispatcher.requires.empty_queue_pass
             else passes.empty_queue_pass)
    nodes = None
    if not passes.counting:  # the platform (the Python side makes the allocations)
        platform = passes.platform
        nodes = (_requests(jobs, platform), platform.capacity_matrix(),
                 _core_resource(platform), _unservable(jobs))
    assert _core is not None  # native_reason refused the run otherwise
    return _core.simulate_python(*_columns(jobs), total_cores, passes.run_pass,
                                 (passes.queue, passes.running), empty_queue=empty,
                                 predictor=predictor.name, overrun=overrun, nodes=nodes,
                                 python_predictor=None if calls is None
                                 else calls.binding_args)


def simulate_native(platform: Platform, jobs: JobTable, dispatcher: Dispatcher,
                    predictor: Predictor | None = None, *, overrun: str = "run",
                    progress: Callable[[int, int], None] | None = None,
                    **others: Any) -> SimulationResult:
    """Run ``jobs`` on ``platform`` under ``dispatcher`` and ``predictor`` (None:
    ``walltime``) on the native core; the result equals
    ``Simulation(platform, jobs, dispatcher, predictor, overrun=overrun).run()`` (see
    the module docstring for ``wall_seconds`` and ``decision_times``).

    ``others``: the other keyword arguments of :class:`~dispatchlab.sim.engine.
    Simulation` (``max_wall``, ``cap``, ...), accepted as :func:`native_reason` accepts
    them. A run that cannot run natively raises :class:`InputError` on ``engine``
    naming the reason; ``progress`` is called once, with ``(n, n)``, when the run
    ends. The components given stay unstarted (the run uses clones)."""
    check_overrun(overrun)
    reason = native_reason(platform, jobs, dispatcher, predictor, overrun=overrun,
                           **others)
    if reason is not None:
        raise InputError(f"the native engine cannot run this: {reason}", field="engine")
    wall0 = time.perf_counter()
    via_view = getattr(dispatcher, _VIA_VIEW, False)
    dispatcher = dispatcher.clone()
    if via_view:
        setattr(dispatcher, _VIA_VIEW, True)
    predictor = (predictor or WalltimePredictor()).clone()
    run, requested = jobs["run"], jobs["requested_time"]
    sim_run = np.minimum(run, requested) if overrun == "kill" else run
    limit = check_jobs(jobs, sim_run)
    names = platform.resource_names
    capacity = platform.capacity_matrix()
    total_cores = int(capacity[:, names.index("core")].sum()) if "core" in names else 0
    n = len(jobs)
    calls: NativePredictorCalls | None = None
    if _predictor_reason(predictor) is not None:  # run in Python, called by the core
        calls = NativePredictorCalls(predictor, jobs, overrun, limit)
        estimate = calls.estimate  # (filled at each submission)
    else:
        predictor.start(PredictorContext(jobs, overrun, np.full(n, -1, dtype=np.int64)))
        estimate = np.array(predictor.static_estimates(), dtype=np.int64)
        if estimate.shape != (n,) or (n and (estimate.min() < 0
                                             or estimate.max() >= limit // 4)):
            raise DispatchError(f"{predictor!r}: static_estimates() must give one "
                                "estimate >= 0 per job")
    decision_times = np.zeros(0, dtype=np.float64)
    # a dispatcher written in Python is started here, with its view (what it raises
    # is raised unchanged)
    passes_: NativePasses | None = (
        make_passes(platform, jobs, dispatcher, estimate, total_cores)
        if _via_view(dispatcher) else None)
    try:
        flat: list[np.ndarray] = []
        if passes_ is not None:
            if calls is not None:  # the View sees each estimate from submission on
                calls.mirrors.append(passes_._est0)
            start, end, status, events, passes = _core_call_python(
                jobs, total_cores, passes_, predictor, overrun, calls)
            decision_times = np.frombuffer(passes_.decision_times, dtype=np.float64).copy()
        else:
            start, end, status, events, passes, *flat = _core_call(
                jobs, total_cores, dispatcher, predictor, overrun,
                platform=platform, estimate=estimate, calls=calls)
    except (ValueError, RuntimeError) as exc:
        if calls is not None and calls.error is exc:
            raise  # the predictor's own exception (or its estimate's check), unchanged
        if passes_ is not None and passes_.error is exc:
            raise  # the dispatcher's own exception (or its decisions' check), unchanged
        if passes_ is not None and "waiting forever" in str(exc):
            waiting = passes_.waiting_rows()
            raise DispatchError(
                f"{dispatcher!r} left {len(waiting)} jobs waiting forever (first: job "
                f"{int(jobs['job_id'][waiting[0]])}) though they fit the platform"
                ) from None
        if isinstance(exc, ValueError):  # the Python checks above passed: they disagree
            raise NativeCoreError(f"the native core refused an input the Python checks "
                                  f"accepted (a bug): {exc}") from exc
        raise NativeCoreError(str(exc)) from exc
    rejected = np.flatnonzero(status == STATUS_REJECTED)
    by_dispatcher = {} if passes_ is None else passes_.reject_reason
    if by_dispatcher:  # they keep their estimates, as on the Python engine
        rejected = np.array([r for r in rejected.tolist() if r not in by_dispatcher],
                            dtype=np.int64)
    estimate[rejected] = -1
    units = jobs["units"]
    allocations: dict[int, Allocation] = {}
    if flat or (passes_ is not None and not passes_.counting):
        # a node-level run: every job that started, with its allocation
        requests = _requests(jobs, platform)
        unservable = jobs.columns.get("unservable")
        reasons = {int(r): (str(unservable[r]) if unservable is not None and unservable[r]
                            else unfit_reason(names, requests[r], int(units[r]), capacity))
                   for r in rejected.tolist()}
        if passes_ is not None:  # (the dispatcher's own allocations, as it made them)
            allocations = dict(passes_.allocation_log)
        else:
            offsets, nodes, counts = flat
            bounds = offsets.tolist()
            for row in np.flatnonzero(status != STATUS_REJECTED).tolist():
                lo, hi = bounds[row], bounds[row + 1]
                allocations[row] = Allocation(nodes[lo:hi], counts[lo:hi])
    else:
        reasons = {int(r): f"needs {int(units[r])} cores, the platform has {total_cores}"
                   for r in rejected.tolist()}
    reasons.update(by_dispatcher)
    if progress is not None:
        progress(n, n)
    return SimulationResult(
        jobs=jobs, platform=platform, dispatcher=repr(dispatcher),
        predictor=repr(predictor), overrun=overrun, start=start, end=end, status=status,
        estimate=estimate, reject_reason=reasons, allocations=allocations,
        events=int(events), passes=int(passes), decision_times=decision_times,
        wall_seconds=time.perf_counter() - wall0,
        dispatcher_facts=dispatcher.run_facts(), engine="native")


class NativeSimulation:
    """One run on the native core with :class:`~dispatchlab.sim.engine.Simulation`'s
    interface: ``NativeSimulation(platform, jobs, dispatcher, predictor,
    overrun=...).run()`` is :func:`simulate_native`. Made only for a run that can run
    natively (else :class:`InputError` on ``engine`` naming the reason); runs once."""

    #: the engine that ran (``SimulationResult.engine``): ``"python"`` after a fallback
    engine = "native"
    #: why the run fell back to the Python engine (None: it did not)
    fell_back: str | None = None

    def __init__(self, platform: Platform, jobs: JobTable, dispatcher: Dispatcher,
                 predictor: Predictor | None = None, *, overrun: str = "run",
                 progress: Callable[[int, int], None] | None = None,
                 fallback: bool = False, **others: Any) -> None:
        """``fallback`` (``--engine auto``): when a dispatcher written in Python returns
        a decision the native engine does not apply (:class:`~dispatchlab.sim.
        native_view.NotNativeDecision`: a rate change, which a dispatcher need not
        declare), the whole run is made again from the start on the Python engine, with
        fresh copies of the dispatcher and predictor (the same schedule as a run on the
        Python engine from the start; :attr:`engine` is then ``"python"`` and
        :attr:`fell_back` says why). Without it that decision is a one-line error."""
        check_overrun(overrun)
        reason = native_reason(platform, jobs, dispatcher, predictor, overrun=overrun,
                               **others)
        if reason is not None:
            raise InputError(f"the native engine cannot run this: {reason}",
                             field="engine")
        self.platform, self.jobs, self.overrun = platform, jobs, overrun
        #: whether the run counts free cores (False: it places jobs on nodes)
        self.counting = not is_node_level(platform, jobs)
        self.dispatcher = dispatcher.clone()
        self.predictor = (predictor or WalltimePredictor()).clone()
        self._progress = progress
        self._ran = False
        self._fallback = ((dispatcher, predictor, others) if fallback else None)

    def run(self) -> SimulationResult:
        """Simulate every job to completion and return the result."""
        if self._ran:
            raise RuntimeError("a NativeSimulation runs once; build a new one")
        self._ran = True
        try:
            return simulate_native(self.platform, self.jobs, self.dispatcher,
                                   self.predictor, overrun=self.overrun,
                                   progress=self._progress)
        except NotNativeDecision as e:
            if self._fallback is None:
                raise
            dispatcher, predictor, others = self._fallback
            sim = Simulation(self.platform, self.jobs, dispatcher.clone(),
                             None if predictor is None else predictor.clone(),
                             overrun=self.overrun, progress=self._progress, **others)
            self.engine, self.fell_back = "python", str(e)
            self.dispatcher = sim.dispatcher
            return sim.run()
