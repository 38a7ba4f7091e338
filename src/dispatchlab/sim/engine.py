"""The discrete-event engine: the whole life of a job, top to bottom.

Time is integer seconds in the trace's own origin; the clock jumps from event to event
(no idle stepping). Events are integer keys (time, kind rank, payload) in one heap,
merged with the pre-sorted stream of submissions, and each kind has a handler
(:mod:`dispatchlab.sim.events`: a new event source is a new kind, not a new loop). At
every timestamp with an event, in this order:

1. **completions** of jobs ending now, in job (file) order: resources are freed
   and the predictor observes the finished job;
2. **submissions** at this time, in file order: a job that cannot fit the empty
   platform is rejected (status ``rejected``, with its reason); every other job gets
   its estimate from the predictor and joins the end of the queue;
3. one **dispatch pass**: running jobs that outlived their estimates get a new one from
   the predictor's ``on_expiry`` (or count as ending now); then the dispatcher is
   called with a read-only view and its decisions are validated and applied. If jobs
   started by the pass end at this same timestamp (0-second jobs), their completions
   are handled and another pass runs, until none does.

A pass also happens at a time a dispatcher asked for with ``view.wake_at``. Built-in
dispatchers ask for none. *Ours*: a time point whose only events are superseded ends
(end events left in the queue after a rate change moved a job's end) is no time point
with an event: nothing happens there and no pass runs. Such passes would come at the
old end times of throttled jobs, arbitrary instants for the dispatcher; runs without
rate changes have none.

A started job holds its allocation until it ends: after its actual run time
(``overrun="run"``) or at its requested time if that comes first (``overrun="kill"``,
status ``killed``). A running job's speed (``SetSpeed``) or power level (``SetPower``,
turned into a speed by the duration model, :mod:`dispatchlab.sim.duration`) can be
changed: its remaining work, tracked exactly, is rescheduled at the new speed (end = now
+ ceil(remaining work / speed), only the end rounded); under ``overrun="kill"`` it is
still killed at start + requested time in wall-clock time. Every change is recorded
(``SimulationResult.segments``).
"""

from __future__ import annotations

import heapq
import math
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable
from fractions import Fraction
from operator import itemgetter
from time import perf_counter

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.limits import time_limit
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.dispatch.allocators import units_per_node
from dispatchlab.dispatch.base import (
    Allocation,
    Changes,
    Dispatcher,
    DispatchError,
    Reject,
    SetPower,
    SetSpeed,
    Start,
)
from dispatchlab.dispatch.profile import CoreProfile, NodeProfile
from dispatchlab.platform import Platform
from dispatchlab.power.cap import PowerCap
from dispatchlab.power.model import has_power
from dispatchlab.predict.duration.base import Predictor, PredictorContext, WalltimePredictor
from dispatchlab.predict.power.base import PowerPredictor
from dispatchlab.sim.duration import DURATION_MODELS, DurationModel, NoSlowdown
from dispatchlab.sim.events import CAP, KINDS, WAKE, KeyCodec
from dispatchlab.sim.result import (
    STATUS_COMPLETED,
    STATUS_FUTURE,
    STATUS_KILLED,
    STATUS_REJECTED,
    STATUS_RUNNING,
    STATUS_WAITING,
    SimulationResult,
)
from dispatchlab.sim.state import RunningSet, WaitingQueue
from dispatchlab.sim.view import EngineView
from dispatchlab.workload.jobs import JobTable
from dispatchlab.workload.requests import is_internal, needs_fitting

OVERRUN_MODES = ("run", "kill")


def check_overrun(overrun: object, field: str = "overrun") -> str:
    """``overrun`` if it is one of :data:`OVERRUN_MODES`, else an :class:`InputError`
    naming ``field`` (the one check used by the engine, the CLI and campaign files)."""
    if overrun not in OVERRUN_MODES:
        hint = did_you_mean(overrun, OVERRUN_MODES) if isinstance(overrun, str) else ""
        raise InputError(f"overrun must be 'run' or 'kill', got {overrun!r}{hint}",
                         field=field)
    return str(overrun)


def is_node_level(platform: Platform, jobs: JobTable) -> bool:
    """Whether a run of ``jobs`` on ``platform`` places jobs on nodes: False exactly when
    fit reduces to counting free cores (the platform has only cores and every job unit
    is one core, nothing else), as :attr:`Simulation.counting` decides it."""
    names = platform.resource_names
    if "core" not in names or not platform.is_core_only():
        return True
    res = jobs.resources
    if len(jobs) and ("core" not in res or not bool(np.all(res["core"] == 1))):
        return True
    return any(not bool(np.all(res[r] == 0)) for r in names if r != "core" and r in res)


def check_combination(dispatcher: Dispatcher, *, duration_model: object | None,
                      node_level: bool | None = None,
                      model_field: str | None = "duration_model",
                      platform_field: str = "platform") -> None:
    """Refuse, before a run starts, a combination that cannot give a meaningful run: the
    one check that every way of building a run calls (:class:`Simulation`, the
    ``simulate``, ``compare`` and ``study`` commands, campaign files at load time).

    1. ``dispatcher`` slows running jobs (``requires.slows_running_jobs``, see
       :class:`~dispatchlab.dispatch.requirements.Requirements`) and
       ``duration_model`` is None (not given): without a model a throttled job would
       run as long as at full power. ``none`` given explicitly is
       accepted (the run then warns "throttling without slowdown",
       :func:`dispatchlab.run.advice.result_warnings`). ``model_field``: where the caller
       takes a model (the error names it), None when it takes none.
    2. ``dispatcher`` cannot place jobs on nodes (``requires.node_level`` False) and the
       run is node-level (``node_level`` True, :func:`is_node_level`; None: not known
       yet, not checked); the error names ``platform_field``.

    Each refusal is one :class:`InputError` line."""
    name = dispatcher.name or type(dispatcher).__name__
    requires = dispatcher.requires
    if requires.slows_running_jobs and duration_model is None:
        models = ", ".join(DURATION_MODELS)
        what = (f"dispatcher {name!r} slows running jobs (it lowers their power levels), "
                f"so the run needs a duration model ({models}; e.g. mixed:profile="
                "dynshare; 'none' keeps their run times: throttling without slowdown)")
        if model_field is None:
            raise InputError(what + ", and this command takes none: run it with "
                             "'dispatchlab simulate --duration-model', 'dispatchlab study "
                             "predictions --duration-model' or in a campaign",
                             field="dispatcher")
        raise InputError(what, field=model_field)
    if node_level and not requires.node_level:
        raise InputError(f"dispatcher {name!r} cannot place jobs on nodes (it declares "
                         "supports_node_level = False) and this run is node-level (the "
                         "platform has more than cores, or jobs ask for more than one core "
                         "per unit): run it on pooled cores", field=platform_field)


def check_jobs(jobs: JobTable, sim_run: np.ndarray, cap: PowerCap | None = None) -> int:
    """Validate the fields the engine uses of ``jobs`` (simulated for ``sim_run`` s each,
    under ``cap``); return the time limit (seconds): a mistake raises
    :class:`InputError` naming the job, its line and the field. Shared by
    :class:`Simulation` and the native engine (:mod:`dispatchlab.sim.native`).

    Times are packed with a job row into one int64 key (``state.RunningSet``), which
    bounds them (:func:`~dispatchlab.core.limits.time_limit`): no simulated time can
    pass the last submission (or the last cap step, if later) plus every run (all
    jobs one after another) plus the longest requested time.
    """
    n = len(jobs)
    limit = time_limit(n)
    if n == 0:
        return limit
    where = {"file": jobs.info.source}

    def fail(row: int, field: str, message: str) -> InputError:
        return InputError(f"job {int(jobs['job_id'][row])} {message}",
                          line=int(jobs["line"][row]) or None, field=field, **where)

    run, units, requested = jobs["run"], jobs["units"], jobs["requested_time"]
    submit = jobs["submit"]
    if run.min() < 0:
        raise fail(int(np.argmax(run < 0)), "run", "has a negative run time; clean the "
                   "trace")
    if units.min() <= 0:
        row = int(np.argmax(units <= 0))
        raise fail(row, "units", f"requests {int(units[row])} units; clean the trace")
    if requested.min() < 0:
        raise fail(int(np.argmax(requested < 0)), "requested_time",
                   "has no requested time")
    if submit.min() < 0:
        raise fail(int(np.argmin(submit)), "submit", "has a negative submit time")
    last_cap = cap.steps[-1][0] if cap is not None else 0
    horizon = max(int(submit.max()), last_cap) + int(sim_run.sum(dtype=np.float64)) \
        + int(max(requested.max(), run.max())) + 1
    if last_cap > int(submit.max()) and horizon >= limit:
        raise InputError(f"a cap step at time {last_cap:,} s leaves no room for the "
                         f"trace's runs below the engine's time limit of {limit:,} s "
                         f"for {n:,} jobs", field="cap")
    if horizon >= limit:
        col = max(("submit", "requested_time", "run"), key=lambda c: int(jobs[c].max()))
        row = int(np.argmax(jobs[col]))
        raise fail(row, col, f"has {col} {int(jobs[col][row]):,}: simulated times must "
                   f"stay below {limit:,} s ({limit / 3.156e7:,.0f} years) for {n:,} jobs")
    return limit


def unfit_reason(names: tuple[str, ...], request: np.ndarray, units: int,
                 capacity: np.ndarray) -> str:
    """Why a job of ``units`` units asking ``request`` per unit (resources ``names``)
    fits no empty node-level platform of ``capacity``: the units it needs against
    those the platform can host (internal ``@`` resources left out: "on the nodes it
    may use"). Shared with the native engine (:mod:`dispatchlab.sim.native`)."""
    cap_units = int(units_per_node(request, capacity).sum())
    per_unit = ", ".join(f"{int(v)} {names[k]}" for k, v in enumerate(request)
                         if v and not is_internal(names[k]))
    where = ("the nodes it may use" if any(v and is_internal(names[k])
                                          for k, v in enumerate(request))
             else "the empty platform")
    return f"needs {units} units of ({per_unit}); {where} can host {cap_units} such units"


def _ratio(x: float | Fraction) -> tuple[int, int]:
    """``x`` (> 0) as an exact reduced integer fraction ``(numerator, denominator)``."""
    if isinstance(x, Fraction):
        return x.numerator, x.denominator
    if isinstance(x, int):
        return x, 1
    return float(x).as_integer_ratio()


#: a work or planned-end fraction whose denominator passes this many bits is rounded to
#: a multiple of 2**-64 (see ``Simulation._change_rate``)
EXACT_BITS = 128


def _dyadic(p: int, q: int) -> tuple[int, int]:
    """``p / q`` rounded to the nearest multiple of ``2**-64`` (halves up), reduced."""
    n = ((p << 65) + q) // (2 * q)
    if n == 0:
        return 0, 1
    zeros = min((n & -n).bit_length() - 1, 64)
    return n >> zeros, 1 << (64 - zeros)


def _int_buffer(values: np.ndarray) -> array:
    """An ``array('q')`` copy of an integer numpy array."""
    buf = array("q")
    buf.frombytes(np.ascontiguousarray(values, dtype=np.int64).tobytes())
    return buf


class Simulation:
    """One simulation of ``jobs`` on ``platform`` under ``dispatcher`` and ``predictor``.

    ``Simulation(platform, jobs, dispatcher, predictor).run()`` returns a
    :class:`~dispatchlab.sim.result.SimulationResult`. A Simulation object runs once;
    the dispatcher and predictor passed in are cloned, so the originals stay unstarted
    and can be reused.
    """

    #: the engine that runs (``SimulationResult.engine``, the summary's ``engine``; the
    #: native one is :class:`dispatchlab.sim.native.NativeSimulation`)
    engine = "python"
    #: why a run chosen for the native engine ran on this one instead (None here: see
    #: :attr:`dispatchlab.sim.native.NativeSimulation.fell_back`)
    fell_back: str | None = None

    def __init__(
        self,
        platform: Platform,
        jobs: JobTable,
        dispatcher: Dispatcher,
        predictor: Predictor | None = None,
        *,
        overrun: str = "run",
        progress: Callable[[int, int], None] | None = None,
        max_wall: float | None = None,
        duration_model: DurationModel | None = None,
        cap: PowerCap | None = None,
        power_predictor: PowerPredictor | None = None,
        pinned: dict[int, Allocation | None] | None = None,
    ) -> None:
        check_overrun(overrun)
        self._set_components(platform, jobs, dispatcher, predictor, duration_model, cap,
                             power_predictor)
        if max_wall is not None and (isinstance(max_wall, bool)
                                     or not isinstance(max_wall, int | float)
                                     or not max_wall > 0 or not math.isfinite(max_wall)):
            raise InputError(f"the wall-clock budget must be a number of seconds > 0, got "
                             f"{max_wall!r}", field="max_wall")
        self.overrun = overrun
        self._progress = progress
        self.max_wall = max_wall
        self._ran = False
        # the duration each job will be simulated for
        run, requested = jobs["run"], jobs["requested_time"]
        self.sim_run = np.minimum(run, requested) if overrun == "kill" else run.copy()
        self.time_limit = self._check_jobs()
        # the state, in four parts (each method says what it holds)
        self._set_resources(platform, jobs, dispatcher, duration_model)
        self._set_jobs_queue_and_running(jobs)
        self._set_clock_and_events(jobs)
        self._set_power_and_rates(jobs, overrun)
        self.pinned = self._check_pinned(pinned)

    def _set_components(self, platform: Platform, jobs: JobTable, dispatcher: Dispatcher,
                        predictor: Predictor | None, duration_model: DurationModel | None,
                        cap: PowerCap | None, power_predictor: PowerPredictor | None
                        ) -> None:
        """What runs: the inputs and the components, cloned (the originals stay
        unstarted), and what the dispatcher requires."""
        self.duration_model = (duration_model or NoSlowdown()).clone()
        if cap is not None and not isinstance(cap, PowerCap):
            raise TypeError(f"cap must be a PowerCap, got {type(cap).__name__}")
        #: the power cap over time (None: never capped) and its value now (W or None)
        self.cap = cap
        self.cap_watts: float | None = None
        self.power_predictor = None if power_predictor is None else power_predictor.clone()
        self.platform = platform
        self.jobs = jobs
        self.dispatcher = dispatcher.clone()
        #: what the dispatcher needs (read once: see Dispatcher.requires)
        self.requires = self.dispatcher.requires
        # passes on an empty queue may be skipped (see _pass)
        self._skip_empty = not self.requires.empty_queue_pass
        self.predictor = (predictor or WalltimePredictor()).clone()
        # predictors that learn nothing are not called at completions
        self._observes = type(self.predictor).observe is not Predictor.observe

    def _set_resources(self, platform: Platform, jobs: JobTable, dispatcher: Dispatcher,
                       duration_model: DurationModel | None) -> None:
        """Resources: the per-unit requests, counting or node-level mode (and the
        combination check that depends on it), capacity and what is free (cores, the
        free matrix), and the allocations of running and started jobs."""
        # per-unit requests in platform resource order (jobs x resources)
        names = platform.resource_names
        unknown = set(jobs.resources) - set(names)
        for r in sorted(unknown):
            if jobs.resources[r].any():
                raise InputError(f"jobs request resource {r!r}, which the platform lacks "
                                 f"(it has {', '.join(names)})", field="resources")
        self.requests = np.zeros((len(jobs), len(names)), dtype=np.int64)
        for k, r in enumerate(names):
            if r in jobs.resources:
                self.requests[:, k] = jobs.resources[r]
        core_k = names.index("core") if "core" in names else -1
        # counting mode: every unit is exactly one core and the platform has only cores
        self.counting = not is_node_level(platform, jobs)
        if not self.counting and needs_fitting(jobs, platform):
            raise InputError(f"the jobs were read from a {jobs.info.format} log and not "
                             "fitted to this node-level platform (their GPU, memory and "
                             "partition requests would run as bare cores): fit them first "
                             "with dispatchlab.workload.requests.fit_requests(jobs, "
                             "platform) and simulate its .jobs on its .platform",
                             field="jobs")
        check_combination(dispatcher, duration_model=duration_model,
                          node_level=not self.counting)
        self._capacity = platform.capacity_matrix()
        self.capacity = self._capacity.view()
        self.capacity.flags.writeable = False
        self.total_cores = int(self._capacity[:, core_k].sum()) if core_k >= 0 else 0
        self.allocations: dict[int, Allocation] = {}  # running jobs (node level)
        self.allocation_log: dict[int, Allocation] = {}  # every started job (node level)
        self.free_cores = self.total_cores
        self._free = self._capacity.copy()
        self.free_view = self._free.view()
        self.free_view.flags.writeable = False
        self._core_k = core_k

    def _set_jobs_queue_and_running(self, jobs: JobTable) -> None:
        """Per-job state (units, simulated run, start, end, estimate at submission,
        planned end, status) and the waiting queue and running set built on it."""
        n = len(jobs)
        # Per-job state lives in compact array.array buffers (fast scalar access from
        # Python, 8 bytes a job); the numpy arrays below are views of the same memory.
        self._units = _int_buffer(jobs["units"])
        self._run_for = _int_buffer(self.sim_run)
        self._start_at = _int_buffer(np.full(n, -1))
        self._end_at = _int_buffer(np.full(n, -1))
        self._est0 = _int_buffer(np.full(n, -1))  # estimate at submission (s)
        self._est_end = _int_buffer(np.full(n, -1))  # planned end of a running job
        self._status = array("b", bytes([STATUS_FUTURE]) * n)
        self.start = np.frombuffer(self._start_at, dtype=np.int64)
        self.end = np.frombuffer(self._end_at, dtype=np.int64)
        self.estimate0 = np.frombuffer(self._est0, dtype=np.int64)
        self.est_end = np.frombuffer(self._est_end, dtype=np.int64)
        self.status = np.frombuffer(self._status, dtype=np.int8)
        self.reject_reason: dict[int, str] = {}
        self.queue = WaitingQueue(jobs["units"], self.estimate0, jobs["submit"])
        self.running = RunningSet(jobs["units"], n)
        self._static_estimates: array | None = None
        self._final_expired: set[int] = set()
        self._pinned_started: list[int] = []

    def _set_clock_and_events(self, jobs: JobTable) -> None:
        """The clock and the events: now, the event heap and its key codec, each running
        job's scheduled end, the dispatcher's wake-ups, the counters (events, passes,
        changes) and what happened since the dispatcher's previous pass."""
        self.now = 0
        # the event queue: a heap of keys (time, kind rank, payload) (see sim.events),
        # merged in run() with the pre-sorted stream of submissions
        self._codec = KeyCodec(self.running.shift)
        self._events: list[int] = []
        self._tshift = self._codec.time_shift
        self._pmask = self._codec.payload_mask
        self._wake_seq = 0
        # scheduled end (speed changes move it)
        self._sched_end = _int_buffer(np.full(len(jobs), -1))
        #: a wake-up asked for by the dispatcher fired at this time point
        self.woken = False
        self._pending_wakes: dict[int, int] = {}  # wake-ups asked for, per time
        self._withdrawn_wakes: dict[int, int] = {}  # of those, withdrawn, per time
        # counts changes to running jobs not made by the dispatcher's own starts
        # (completions, new estimates, speed changes): lets a dispatcher know that only
        # new submissions happened since its previous pass
        self.changes = 0
        # what happened since the dispatcher's previous call (see View.changed), and a
        # version of the running set (starts, ends, new estimates) for the cached
        # release profile
        self._submitted: list[int] = []
        self._completed: list[int] = []
        self._reestimated: list[int] = []
        self._running_version = 0
        self._profile: tuple[int, int, object] | None = None
        self.events = 0
        self.passes = 0
        self._decision_times = array("d")

    def _set_power_and_rates(self, jobs: JobTable, overrun: str) -> None:
        """Power and rates: the exact rate changes of running jobs (speed, work left,
        planned end, power level, kills) and their log, the power predictions, and the
        jobs' measured power."""
        n = len(jobs)
        self._kill = overrun == "kill"
        # the trace's run times (rate changes, kills)
        self._trace_run = _int_buffer(jobs["run"])
        # rate changes (SetSpeed / SetPower) of running jobs, exact: the speed, the
        # nominal work left at a time and the exact planned end as reduced integer
        # fractions (numerator, denominator > 0; plain ints are much cheaper than
        # Fraction objects and give the same values), the power level, whether the
        # scheduled end is a kill, and the log of every change
        self._speed: dict[int, tuple[int, int]] = {}
        self._work: dict[int, tuple[int, int, int]] = {}  # (num, den, since)
        self._est_exact: dict[int, tuple[int, int]] = {}
        self._level: dict[int, float] = {}
        self._end_killed: dict[int, bool] = {}
        self._segments: list[tuple[int, int, float, float]] = []
        # power predictions at submission (W; NaN: not predicted), when a power
        # predictor is given
        if self.power_predictor is not None:
            self.power_mean = np.full(n, np.nan)
            self.power_max = np.full(n, np.nan)
            self.power_std = np.full(n, np.nan)
            # what View.power_prediction hands out: read-only views, made once (the
            # arrays are filled in place, never replaced)
            views = []
            for a in (self.power_mean, self.power_max, self.power_std):
                v = a.view()
                v.flags.writeable = False
                views.append(v)
            self.power_prediction_views = (views[0], views[1], views[2])
            self._power_observes = (type(self.power_predictor).observe
                                    is not PowerPredictor.observe)
        # the jobs' real power at full level (W), for dispatchers that act on measured
        # power; the per-node picture is cached per (time, running set)

        self.job_power_view: np.ndarray | None = None
        if has_power(jobs):
            self.job_power_view = np.asarray(jobs["power_mean"], dtype=np.float64).view()
            self.job_power_view.flags.writeable = False
        self._node_power: tuple[int, int, np.ndarray] | None = None

    # ------------------------------------------------------------------ the run
    def run(self) -> SimulationResult:
        """Simulate every job to completion and return the result."""
        if self._ran:
            raise RuntimeError("a Simulation runs once; build a new one")
        self._ran = True
        wall0 = time.perf_counter()
        jobs = self.jobs
        n = len(jobs)
        fits = self._fits_empty_platform().tolist()
        self.predictor.start(PredictorContext(jobs, self.overrun, self.start))
        static = self.predictor.static_estimates()
        if static is not None:  # estimates that use no history: computed once, vectorized
            static = np.asarray(static)
            if static.shape != (n,) or (n and (static.min() < 0
                                                or static.max() >= self.time_limit // 4)):
                raise DispatchError(f"{self.predictor!r}: static_estimates() must give one "
                                    "estimate >= 0 per job")
            self._static_estimates = static = _int_buffer(static)
        view = EngineView(self)
        self.duration_model.start(jobs)
        if self.power_predictor is not None:
            self.power_predictor.start(jobs, self.platform)
            static = None  # every submission goes through _submit (power predicted)
        if self.cap is not None:
            for k, (t, _) in enumerate(self.cap.steps):
                heapq.heappush(self._events, self._codec.key(t, CAP, k))
        self.dispatcher.start(view)

        submit = _int_buffer(jobs["submit"])
        heap = self._events  # every event but submissions, as integer keys
        tshift = self._tshift
        pbits = self._codec.payload_bits
        pmask, rmask = self._pmask, self._codec.rank_mask
        handlers = {rank: getattr(self, f"_on_{name}") for rank, name in KINDS.items()}
        heappop = heapq.heappop
        complete = self._complete
        submit_job = self._submit
        dispatch_pass = self._pass
        # the common submission (fits, estimate known in advance), done inline
        enqueue, status, est0 = self.queue.append, self._status, self._est0
        submitted = self._submitted.append
        pinned = self.pinned
        progress, progress_every = self._progress, max(n // 200, 1)
        never = 1 << 62
        next_sub = 0
        deadline = None if self.max_wall is None else wall0 + self.max_wall
        finished = True
        while True:
            # the next time point with an event
            now = submit[next_sub] if next_sub < n else never
            if heap and heap[0] >> tshift < now:
                now = heap[0] >> tshift
            if now == never:
                break
            if deadline is not None and time.perf_counter() > deadline:
                finished = False  # the wall-clock budget is spent: stop here
                break
            if now != self.now:
                self.woken = False
            self.now = view.now = now
            events_before = self.events
            # the events of this time point in key order: completions (rank 0, in job
            # order), submissions (rank 1, the stream, in file order), then the other
            # kinds (cap changes, wake-ups, ...) by rank
            while heap and heap[0] >> tshift == now and not (heap[0] >> pbits) & rmask:
                complete(heappop(heap))
            # False while the time point holds only superseded ends (see below)
            acted = self.events != events_before or (next_sub < n
                                                     and submit[next_sub] == now)
            while next_sub < n and submit[next_sub] == now:
                job = next_sub
                next_sub += 1
                if static is not None and fits[job] and job not in pinned:
                    self.events += 1
                    est0[job] = static[job]
                    status[job] = STATUS_WAITING
                    enqueue(job)
                    submitted(job)
                else:
                    submit_job(job, now, fits[job])
                if progress is not None and next_sub % progress_every == 0:
                    progress(next_sub, n)
            while heap and heap[0] >> tshift == now:
                key = heappop(heap)
                if handlers[(key >> pbits) & rmask](key & pmask) is not False:
                    acted = True  # (False: a withdrawn wake-up, nothing happened)
            if not acted:
                # only superseded ends (a rate change moved the job's end): nothing
                # happened at this time point, so no pass (ours, see the docstring)
                continue
            # one dispatch pass (jobs it starts that end now make another time point
            # at now: their completions, then another pass)
            dispatch_pass(view)
        if progress is not None and finished:
            progress(n, n)
        if not finished:
            return self._unfinished_result(wall0)
        self.start, self.end = self.start.copy(), self.end.copy()
        self.status, self.estimate0 = self.status.copy(), self.estimate0.copy()
        waiting = np.flatnonzero(self.status == STATUS_WAITING)
        if len(waiting):  # only possible with a dispatcher that never starts a job
            raise DispatchError(
                f"{self.dispatcher!r} left {len(waiting)} jobs waiting forever "
                f"(first: job {int(jobs['job_id'][waiting[0]])}) though they fit the platform")
        return SimulationResult(
            jobs=jobs,
            platform=self.platform,
            dispatcher=repr(self.dispatcher),
            predictor=repr(self.predictor),
            overrun=self.overrun,
            start=self.start,
            end=self.end,
            status=self.status,
            estimate=self.estimate0,
            reject_reason=self.reject_reason,
            allocations=self.allocation_log,
            events=self.events,
            passes=self.passes,
            decision_times=np.frombuffer(self._decision_times, dtype=np.float64).copy(),
            wall_seconds=time.perf_counter() - wall0,
            dispatcher_facts=self.dispatcher.run_facts(),
            segments=self._segment_columns(),
            power_prediction=None if self.power_predictor is None else {
                "mean": self.power_mean, "max": self.power_max, "std": self.power_std},
            cap=self.cap,
            throttling_without_slowdown=self._throttling_without_slowdown(),
        )

    def _throttling_without_slowdown(self) -> bool:
        """The dispatcher slows running jobs and the duration model is ``none``."""
        return bool(self.requires.slows_running_jobs
                    and type(self.duration_model) is NoSlowdown)

    def _segment_columns(self) -> dict[str, np.ndarray] | None:
        """The rate changes as columns (job row, time, speed, power level), in the
        order they happened; None when no job changed rate."""
        if not self._segments:
            return None
        job, t, speed, level = zip(*self._segments, strict=True)
        return {"job": np.array(job, dtype=np.int64), "time": np.array(t, dtype=np.int64),
                "speed": np.array(speed, dtype=np.float64),
                "power_level": np.array(level, dtype=np.float64)}

    def _unfinished_result(self, wall0: float) -> SimulationResult:
        """The result of a run stopped by its wall-clock budget: the jobs that ended
        (completed, killed or rejected) by the time it stopped, in table order; the
        others (running, waiting, not submitted yet) are counted in ``extra``."""
        status = self.status.copy()
        done = np.flatnonzero((status == STATUS_COMPLETED) | (status == STATUS_KILLED)
                              | (status == STATUS_REJECTED))
        new_row = {int(old): k for k, old in enumerate(done.tolist())}
        running = int((status == STATUS_RUNNING).sum())
        waiting = int((status == STATUS_WAITING).sum())
        return SimulationResult(
            jobs=self.jobs.take(done),
            platform=self.platform,
            dispatcher=repr(self.dispatcher),
            predictor=repr(self.predictor),
            overrun=self.overrun,
            start=self.start[done].copy(),
            end=self.end[done].copy(),
            status=status[done],
            estimate=self.estimate0[done].copy(),
            reject_reason={new_row[r]: t for r, t in self.reject_reason.items()
                           if r in new_row},
            allocations={new_row[r]: a for r, a in self.allocation_log.items()
                         if r in new_row},
            events=self.events,
            passes=self.passes,
            decision_times=np.frombuffer(self._decision_times, dtype=np.float64).copy(),
            wall_seconds=time.perf_counter() - wall0,
            finished=False,
            input_jobs=self.jobs,
            input_rows=done,
            dispatcher_facts=self.dispatcher.run_facts(),
            throttling_without_slowdown=self._throttling_without_slowdown(),
            extra={"stopped_at": int(self.now), "jobs_total": len(self.jobs),
                   "jobs_done": len(done), "jobs_running": running,
                   "jobs_waiting": waiting,
                   "jobs_not_submitted": len(self.jobs) - len(done) - running - waiting,
                   "max_wall": self.max_wall},
        )

    # ------------------------------------------------------------------ events
    def _submit(self, job: int, now: int, fits: bool) -> None:
        self.events += 1
        if not fits:
            self._status[job] = STATUS_REJECTED
            self.reject_reason[job] = self._why_not_fit(job)
            return
        if self._static_estimates is not None:
            estimate = self._static_estimates[job]
        else:
            estimate = self.predictor.predict(job, now)
            if estimate is None or not 0 <= estimate < self.time_limit // 4:
                raise DispatchError(f"{self.predictor!r} predicted {estimate!r} for job "
                                    f"{int(self.jobs['job_id'][job])}; estimates are seconds "
                                    f">= 0 (and below {self.time_limit // 4:,})")
            estimate = int(estimate)
        self._est0[job] = estimate
        self._status[job] = STATUS_WAITING
        if self.power_predictor is not None:
            self._predict_power(job, now)
        if job in self.pinned:  # a hot start's job: started here, on its given nodes
            self.queue.append(job)
            self._start(job, self.pinned[job], who="the hot start")
            self.queue.remove_jobs([job])
            self.changes += 1
            self._pinned_started.append(job)
            return
        self.queue.append(job)
        self._submitted.append(job)

    def _predict_power(self, job: int, now: int) -> None:
        p = self.power_predictor.predict(job, now)
        try:
            mean, peak, std = (float(v) for v in p)
        except (TypeError, ValueError):
            raise DispatchError(f"{self.power_predictor!r} predicted {p!r} for job "
                                f"{int(self.jobs['job_id'][job])}; expected (mean, max, "
                                "std) in W") from None
        if not (0 <= mean <= peak < math.inf and 0 <= std < math.inf):
            raise DispatchError(f"{self.power_predictor!r} predicted mean {mean!r}, max "
                                f"{peak!r}, std {std!r} W for job "
                                f"{int(self.jobs['job_id'][job])}; need 0 <= mean <= max "
                                "and std >= 0")
        self.power_mean[job], self.power_max[job], self.power_std[job] = mean, peak, std

    def _on_complete(self, job: int) -> None:
        """A completion handed over by the generic dispatch (not the fast path)."""
        self._complete((self.now << self._tshift) | job)

    def _on_submit(self, job: int) -> None:  # submissions come from their stream
        raise AssertionError("submissions are not queued as events")

    def _on_wake(self, seq: int) -> bool:
        """A wake-up fires (True), or was withdrawn (False: no event)."""
        now, pending = self.now, self._pending_wakes
        left = pending[now] - 1
        if left:
            pending[now] = left
        else:
            del pending[now]
        withdrawn = self._withdrawn_wakes
        if withdrawn and withdrawn.get(now):
            if withdrawn[now] == 1:
                del withdrawn[now]
            else:
                withdrawn[now] -= 1
            return False
        self.events += 1
        self.woken = True
        return True

    def _on_cap(self, index: int) -> None:
        """The cap changes: a change the dispatcher did not make (its caches go)."""
        self.events += 1
        self.changes += 1
        self.cap_watts = self.cap.steps[index][1]

    def next_cap_change(self) -> tuple[int, float | None] | None:
        """The next step of the cap after now, ``(time, watts or None)``, or None."""
        if self.cap is None:
            return None
        for t, w in self.cap.steps:
            if t > self.now:
                return t, w
        return None

    def _complete(self, key: int) -> None:
        end, job = key >> self._tshift, key & self._pmask
        if self._sched_end[job] != end:  # superseded by a speed change
            return
        self.events += 1
        self.changes += 1
        self._running_version += 1
        self._completed.append(job)
        if self.counting:
            self.free_cores += self._units[job]
        else:
            alloc = self.allocations.pop(job)
            self._free[alloc.nodes] += alloc.counts[:, None] * self.requests[job][None, :]
            self._count_free_cores()
        self.running.remove(job, self._est_end[job])
        if self._final_expired:
            self._final_expired.discard(job)
        killed = None
        if self._speed and self._speed.pop(job, None) is not None:
            self._work.pop(job, None)
            self._est_exact.pop(job, None)
            self._level.pop(job, None)
            killed = self._end_killed.pop(job)
        self._end_at[job] = end
        self._sched_end[job] = -1  # ends queued before a rate change are stale now
        if killed is None:
            killed = self._kill and self._run_for[job] < self._trace_run[job]
        self._status[job] = STATUS_KILLED if killed else STATUS_COMPLETED
        if self._observes:
            self.predictor.observe(job, end)
        if self.power_predictor is not None and self._power_observes:
            self.power_predictor.observe(job, end)

    def _count_free_cores(self) -> None:
        self.free_cores = int(self._free[:, self._core_k].sum()) if self._core_k >= 0 else 0

    def _start(self, job: int, alloc: Allocation | None, who: str | None = None) -> None:
        now = self.now
        if self._status[job] != STATUS_WAITING:
            raise DispatchError(f"{self.dispatcher!r} started job "
                                f"{int(self.jobs['job_id'][job])}, which is not waiting")
        if who is not None and self.counting:
            alloc = None
        units = self._units[job]
        if self.counting:
            if units > self.free_cores:
                raise DispatchError(f"{self.dispatcher!r} started job "
                                    f"{int(self.jobs['job_id'][job])} ({units} cores) with only "
                                    f"{self.free_cores} free")
            self.free_cores -= units
        else:
            if alloc is None or int(alloc.counts.sum()) != units or (alloc.counts <= 0).any():
                raise DispatchError(f"{self.dispatcher!r} started job "
                                    f"{int(self.jobs['job_id'][job])} without a valid allocation "
                                    f"of its {units} units")
            used = alloc.counts[:, None] * self.requests[job][None, :]
            if len(np.unique(alloc.nodes)) != len(alloc.nodes) or \
                    (self._free[alloc.nodes] < used).any():
                raise DispatchError(f"{self.dispatcher!r} allocated job "
                                    f"{int(self.jobs['job_id'][job])} beyond the free resources")
            self._free[alloc.nodes] -= used
            self.allocations[job] = alloc
            self.allocation_log[job] = alloc
            self._count_free_cores()
        self._start_at[job] = now
        self._status[job] = STATUS_RUNNING
        self._running_version += 1
        estimate = self._est0[job]
        est_end = now + (estimate if estimate > 0 else 1)  # planned end: at least 1 s
        self._est_end[job] = est_end
        self.running.insert(job, est_end, units)
        end = now + self._run_for[job]
        self._sched_end[job] = end
        heapq.heappush(self._events, (end << self._tshift) | job)

    # ------------------------------------------------------------------ a pass
    def _pass(self, view: EngineView) -> None:
        self.passes += 1
        ends = self.running.ends
        if ends and ends[0] <= self.now:
            self._expire()
        if self._skip_empty and not self.queue.jobs and not self.woken and \
                not self.dispatcher.call_on_empty_queue:
            return  # the dispatcher declared it has nothing to do without waiting jobs
            # (its live call_on_empty_queue is read at every such pass: a dispatcher
            # may ask for them for a while during a run)
        t0 = perf_counter()
        decisions = self.dispatcher.dispatch(view)
        self._decision_times.append(perf_counter() - t0)
        if self._submitted:  # cleared in place: run() holds the bound append
            self._submitted.clear()
        if self._completed:
            self._completed.clear()
        if self._reestimated:
            self._reestimated.clear()
        if self._pinned_started:
            self._pinned_started.clear()
        if not decisions:
            return
        left_queue: list[int] = []
        for d in decisions:
            kind = type(d)
            if kind is Start:
                self._start(d.job, d.allocation)
                left_queue.append(d.job)
            elif kind is Reject:
                self._reject_waiting(d.job, d.reason)
                left_queue.append(d.job)
            elif kind is SetSpeed:
                self._set_speed(d.job, d.speed)
            elif kind is SetPower:
                self._set_power(d.job, d.level)
            else:
                raise DispatchError(f"{self.dispatcher!r} returned {d!r}, not a decision")
        if left_queue:
            self.queue.remove_jobs(left_queue)

    def _expire(self) -> None:
        """Running jobs at or past their estimated end get a new estimate from the
        predictor's ``on_expiry``, or count as ending now (``_final_expired``)."""
        running, now, final = self.running, self.now, self._final_expired
        k = running.count_ending_by(now)
        if k <= len(final):  # every expired job already counts as ending now
            return
        self.changes += 1
        mask = running.mask
        for job in [key & mask for key in running.keys[:k] if key & mask not in final]:
            new = self.predictor.on_expiry(job, now)
            started = self._start_at[job]
            if new is not None and now < started + int(new) < self.time_limit // 2:
                self._running_version += 1
                self._reestimated.append(job)
                running.remove(job, self._est_end[job])
                self._est_end[job] = started + int(new)
                running.insert(job, self._est_end[job], self._units[job])
            else:
                final.add(job)

    def _reject_waiting(self, job: int, reason: str) -> None:
        if self._status[job] != STATUS_WAITING:
            raise DispatchError(f"{self.dispatcher!r} rejected job "
                                f"{int(self.jobs['job_id'][job])}, which is not waiting")
        self.changes += 1
        self._status[job] = STATUS_REJECTED
        self.reject_reason[job] = reason

    def _set_speed(self, job: int, speed: float) -> None:
        self._check_running(job, "changed the speed of")
        if isinstance(speed, bool) or not isinstance(speed, int | float) or \
                not 0 < speed < math.inf:
            raise DispatchError(f"{self.dispatcher!r} set speed {speed!r}; it must be > 0")
        self._change_rate(job, speed, self._level.get(job, 1.0))

    def _set_power(self, job: int, level: float) -> None:
        self._check_running(job, "changed the power level of")
        if isinstance(level, bool) or not isinstance(level, int | float) or \
                not 0 < level <= 1:
            raise DispatchError(f"{self.dispatcher!r} set power level {level!r}; it must "
                                "be in (0, 1]")
        speed = self.duration_model.exact_speed(job, float(level))
        if not 0 < speed < math.inf:
            raise DispatchError(f"{self.duration_model!r} gave speed {speed!r} for level "
                                f"{level!r}; a speed must be > 0")
        self._change_rate(job, speed, float(level))

    def _check_running(self, job: int, what: str) -> None:
        if not 0 <= job < len(self._status):
            raise DispatchError(f"{self.dispatcher!r} {what} job row {job!r}: no such job")
        if self._status[job] != STATUS_RUNNING:
            raise DispatchError(f"{self.dispatcher!r} {what} job "
                                f"{int(self.jobs['job_id'][job])}, which is not running")

    def _change_rate(self, job: int, speed: float, level: float) -> None:
        """Run ``job`` at ``speed`` and power ``level`` from now on.

        Exact: the nominal work left is tracked as a fraction (the trace's run time at
        the start, minus elapsed time x speed at each change) and only the end event is
        rounded up to the second, so any number of changes never drifts. The planned
        end (estimate) is scaled the same way. Speeds with large denominators (a model's
        law evaluated on float levels) would make these fractions grow with every
        change (thousands of digits after a few hundred changes); a fraction whose
        denominator passes :data:`EXACT_BITS` bits is rounded to the nearest multiple of
        2**-64 s (ours: an error below 1e-19 s per change, so the rounded-up end can only
        differ when the exact one is within that of a whole second). Under
        ``overrun="kill"`` the job is still killed at start + requested time, in
        wall-clock time: a slowed job can be killed although its trace run fits its
        request."""
        now = self.now
        self.changes += 1
        self._running_version += 1
        self._reestimated.append(job)
        a, b = self._speed.get(job, (1, 1))  # the old speed a / b
        started = self._start_at[job]
        if job in self._work:
            p, q, since = self._work[job]
        else:
            p, q, since = self._trace_run[job], 1, started
        # the work left, p / q - (now - since) x a / b, at least 0, reduced
        p = p * b - (now - since) * a * q
        if p > 0:
            q *= b
            g = math.gcd(p, q)
            if g != 1:
                p, q = p // g, q // g
            if q.bit_length() > EXACT_BITS:
                p, q = _dyadic(p, q)
        else:
            p, q = 0, 1
        c, d = _ratio(speed)  # the new speed c / d
        self._speed[job] = (c, d)
        self._work[job] = (p, q, now)
        self._level[job] = level
        self._segments.append((job, now, float(speed), level))
        end = now - (-p * d // (q * c))  # now + ceil(work / new speed)
        killed = False
        if self._kill:
            kill_at = started + int(self.jobs["requested_time"][job])
            if end > kill_at:
                end, killed = max(kill_at, now), True
        self._end_killed[job] = killed
        if end != self._sched_end[job]:  # else the queued end stands
            self._sched_end[job] = end
            heapq.heappush(self._events, (end << self._tshift) | job)
        est_end = self._est_end[job]
        if est_end > now:
            # the exact planned end e / f becomes now + (e / f - now) x (a / b) / (c / d)
            e, f = self._est_exact.get(job, (est_end, 1))
            e, f = (e - now * f) * a * d, f * b * c
            g = math.gcd(e, f)
            if g != 1:
                e, f = e // g, f // g
            e += now * f
            if f.bit_length() > EXACT_BITS:
                e, f = _dyadic(e, f)
            self._est_exact[job] = (e, f)
            self.running.remove(job, est_end)
            self._est_end[job] = -(-e // f)  # ceil
            self.running.insert(job, self._est_end[job], self._units[job])

    # ------------------------------------------------------------------ accessors
    def queue_head(self, k: int) -> tuple[list[int], list[int], list[int]]:
        """The first ``k`` waiting jobs as lists ``(jobs, units, estimates)``."""
        return self._job_lists(self.queue.jobs[:k].tolist())

    def queued_after(self, job: int) -> tuple[list[int], list[int], list[int]]:
        """The waiting jobs after row ``job`` as lists ``(jobs, units, estimates)``."""
        buf = self.queue.jobs
        return self._job_lists(buf[bisect_right(buf, job):].tolist())

    def _job_lists(self, rows: list[int]) -> tuple[list[int], list[int], list[int]]:
        """``(rows, units, estimates)`` of the job rows ``rows``, as lists."""
        if len(rows) < 2:
            return rows, [self._units[r] for r in rows], [self._est0[r] for r in rows]
        get = itemgetter(*rows)  # one C call per column
        return rows, list(get(self._units)), list(get(self._est0))

    def power_level(self, job: int) -> float:
        """The power level (0-1] of running job row ``job`` (1 unless changed)."""
        return self._level.get(job, 1.0)

    def estimated_end(self, job: int) -> int:
        """The raw planned end (s) of job row ``job`` while it runs (may lie in the
        past when it outlives its estimate; -1 before it starts)."""
        return self._est_end[job]

    def changes_since_pass(self) -> Changes:
        """Jobs submitted, completed and re-estimated since the dispatcher's last call."""
        return Changes(tuple(self._submitted), tuple(self._completed),
                       tuple(self._reestimated), tuple(self._pinned_started))

    def node_power(self) -> np.ndarray:
        """Measured power per node now (W): see :meth:`View.node_power`."""
        if self.counting:
            raise DispatchError(f"{self.dispatcher!r} asked for node power in counting mode "
                                "(a core-only platform with one-core units: no placement)")
        key = (self.now, self._running_version)
        if self._node_power is not None and self._node_power[:2] == key:
            return self._node_power[2]
        watts = self._require_power()
        out = np.zeros(self._capacity.shape[0], dtype=np.float64)
        jobs = self.running.columns()[0].tolist()
        if jobs:
            allocs = [self.allocations[j] for j in jobs]
            level = self._level
            per_unit = [(0.0 if watts[j] != watts[j] else float(watts[j]))
                        * level.get(j, 1.0) / self._units[j] for j in jobs]
            nodes = np.concatenate([a.nodes for a in allocs])
            share = np.concatenate([a.counts * w for a, w in zip(allocs, per_unit,
                                                                  strict=True)])
            np.add.at(out, nodes, share)
        out.flags.writeable = False
        self._node_power = (*key, out)
        return out

    def running_power(self) -> float:
        """The measured power of the running jobs now (W): see :meth:`View.running_power`."""
        watts = self._require_power()
        level = self._level
        total = 0.0
        for j in self.running.columns()[0].tolist():
            w = watts[j]
            if w == w:
                total += float(w) * level.get(j, 1.0)
        return total

    def _require_power(self) -> np.ndarray:
        if self.job_power_view is None:
            raise DispatchError(f"{self.dispatcher!r} reads measured job power, but the "
                                "jobs carry none (give job power: --power FILE or a "
                                "synthetic power file)")
        return self.job_power_view

    def _check_pinned(self, pinned) -> dict[int, Allocation | None]:
        """Validate a hot start's pinned jobs: row -> allocation (None on counting
        platforms); each must fit its nodes' capacity (their freedom at the start is
        checked when they start)."""
        if not pinned:
            return {}
        out: dict[int, Allocation | None] = {}
        n = len(self.jobs)
        for row, alloc in dict(pinned).items():
            if isinstance(row, bool) or not isinstance(row, int | np.integer) \
                    or not 0 <= row < n:
                raise InputError(f"pinned job row {row!r} is not a row of the job table",
                                 field="pinned")
            if not self.counting and not isinstance(alloc, Allocation):
                raise InputError(f"pinned job row {row} needs an Allocation on a "
                                 "node-level platform", field="pinned")
            out[int(row)] = alloc
        return out

    def release_profile(self):
        """The running jobs' release profile at now (cached per time and running set;
        callers copy it before changing it)."""
        key = (self.now, self._running_version)
        if self._profile is not None and self._profile[:2] == key:
            return self._profile[2]

        if self.counting:  # straight from the sorted running set (past ends count as now)
            prof = CoreProfile(self.now, self.running.ends, self.running.units,
                               self.free_cores)
        else:
            jobs, _, ends = self.running.columns()
            if len(ends) and ends[0] < self.now:
                ends = np.maximum(ends, self.now)
            allocations = self.allocations
            prof = NodeProfile.from_running(self.now, self._free, ends,
                                            [allocations[j] for j in jobs.tolist()],
                                            self.requests[jobs])
        self._profile = (*key, prof)
        return prof

    def request_wakeup(self, t: int) -> None:
        if t <= self.now:
            raise DispatchError(f"{self.dispatcher!r} asked to wake at {t}, not after now "
                                f"({self.now})")
        self._wake_seq = (self._wake_seq + 1) & self._pmask
        heapq.heappush(self._events, self._codec.key(t, WAKE, self._wake_seq))
        self._pending_wakes[t] = self._pending_wakes.get(t, 0) + 1

    def withdraw_wakeup(self, t: int) -> None:
        """Withdraw one wake-up asked for at ``t`` (> now) that has not fired yet."""
        left = self._pending_wakes.get(t, 0) - self._withdrawn_wakes.get(t, 0)
        if t <= self.now or left <= 0:
            raise DispatchError(f"{self.dispatcher!r} withdrew a wake-up at {t}, but none "
                                f"is pending then (now {self.now})")
        self._withdrawn_wakes[t] = self._withdrawn_wakes.get(t, 0) + 1

    # ------------------------------------------------------------------ helpers
    def _check_jobs(self) -> int:
        """Validate the fields the engine uses; return the time limit (seconds)
        (:func:`check_jobs`)."""
        return check_jobs(self.jobs, self.sim_run, self.cap)

    def _fits_empty_platform(self) -> np.ndarray:
        """Whether each job fits the empty platform (else it is rejected at submission);
        a job the request fitting found unservable (``unservable`` reason) never does."""
        units = self.jobs["units"]
        unservable = self.jobs.columns.get("unservable")
        served = None if unservable is None or not unservable.any() else unservable == ""
        if self.counting:
            fits = units <= self.total_cores
            return fits if served is None else fits & served
        fits = np.zeros(len(units), dtype=bool)
        uniq, inverse = np.unique(self.requests, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        for k, req in enumerate(uniq):
            cap_units = int(units_per_node(req, self._capacity).sum())
            rows = inverse == k
            fits[rows] = units[rows] <= cap_units
        return fits if served is None else fits & served

    def _why_not_fit(self, job: int) -> str:
        """Why ``job`` fits no empty platform: the request fitting's reason when it gave
        one, else the units it needs against those the platform can host (internal
        ``@`` resources left out: "on the nodes it may use")."""
        unservable = self.jobs.columns.get("unservable")
        if unservable is not None and unservable[job]:
            return str(unservable[job])
        units = int(self.jobs["units"][job])
        if self.counting:
            return f"needs {units} cores, the platform has {self.total_cores}"
        return unfit_reason(self.platform.resource_names, self.requests[job], units,
                            self._capacity)
