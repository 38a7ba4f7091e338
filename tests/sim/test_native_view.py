"""A dispatcher written in Python on the native engine (``dispatchlab.sim.native_view``,
the core's adapter ``rust/py/src/python_dispatcher.rs``): the same schedule, counts,
dispatch calls and errors as on the Python engine.

* the README's example class (``examples/custom_dispatcher.py``) and this file's
  classes on the contending workloads of ``dispatchlab.testing`` and on
  hypothesis-drawn workloads (zero-second jobs, tied submissions, expired estimates,
  jobs larger than the platform);
* :class:`Probe`, which reads every member of the ``View`` protocol at every pass
  (its log must be equal on both engines) and asks for everything a dispatcher may
  ask on a counting platform: starts, rejections, wake-ups, withdrawn wake-ups,
  passes on an empty queue switched on and off during the run; :class:`SparseProbe`
  reads them at one pass in 13 only (the native running set applies the changes
  between such reads, or takes a copy after many);
* dispatchlab's own dispatchers forced through the View (they run on the Python
  engine otherwise): the View the core implements is the Python engine's, member
  for member;
* errors: what the dispatcher raises is raised unchanged, and a decision that breaks
  the rules gives the Python engine's message; the GIL: runs on threads at once.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import Dispatcher, JobTable, Platform, Simulation
from dispatchlab.dispatch import Reject, SetPower, SetSpeed, Start, make_dispatcher
from dispatchlab.dispatch.allocators import BestFit, FirstFit, start_allocator
from dispatchlab.dispatch.base import DispatchError
from dispatchlab.predict import make_predictor
from dispatchlab.sim import native
from dispatchlab.sim.native import native_reason, simulate_native
from dispatchlab.testing import contending_workloads, node_workloads
from test_native_engine import counting_workloads
from test_native_nodes import node_workloads as drawn_node_workloads

pytest.importorskip("dispatchlab._core", reason="the native core dispatchlab._core is not "
                    "built (build it with `make native`)")

ROOT = Path(__file__).resolve().parents[2]


def _example(name: str) -> type:
    """A class of ``examples/custom_dispatcher.py`` (the README's example), imported
    as the command line imports ``file.py:Class``."""
    spec = importlib.util.spec_from_file_location("custom_dispatcher",
                                                  ROOT / "examples" / "custom_dispatcher.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


WidestFirst = _example("WidestFirst")


class HeadFirst(Dispatcher):
    """FIFO from the queue's head (``queue_head``), called at every pass (the default:
    passes on an empty queue too)."""

    name = "head-first"

    def dispatch(self, view):
        free, out = view.free_cores, []
        jobs, units, _ = view.queue_head(4)
        for job, u in zip(jobs, units, strict=True):
            if u > free:
                break
            free -= u
            out.append(Start(job))
        return out


class PlacingHead(Dispatcher):
    """FIFO from the head on any platform: on nodes, each job placed by best-fit on
    the free matrix it keeps up to date within the pass."""

    name = "placing-head"

    def start(self, view):
        self.allocator_ = BestFit()
        start_allocator(self.allocator_, view)

    def dispatch(self, view):
        if view.counting:
            return HeadFirst().dispatch(view)
        free, out = view.free.copy(), []
        jobs, units, _ = view.queue_head(4)
        for job, u in zip(jobs, units, strict=True):
            alloc = self.allocator_.allocate(view.requests[job], u, free)
            if alloc is None:
                break
            free[alloc.nodes] -= alloc.counts[:, None] * view.requests[job][None, :]
            out.append(Start(job, alloc))
        return out


class Probe(Dispatcher):
    """Reads every member of the View at every pass into a log (its digest is its run
    fact ``probe``) and decides from what it read: EASY-like starts from the release
    profile, a rejection of every job whose row is 5 mod 11 and that waited 30 s,
    wake-ups 7 s ahead (one of two withdrawn), and passes on an empty queue asked for
    while an odd number of jobs runs."""

    name = "probe"
    call_on_empty_queue = False

    #: read every member at one pass in ``every`` (the others: the queue only)
    every = 1

    def start(self, view):
        self.log_ = hashlib.sha256()
        self.wakes_ = []
        self.counts_ = {"empty": 0, "woken": 0, "withdrawn": 0, "rejected": 0}
        self.calls_ = 0

    def _record(self, *values):
        self.log_.update(repr(values).encode())

    def dispatch(self, view):
        self.calls_ += 1
        if self.calls_ % self.every:
            return self._head_only(view)
        now = view.now
        q, r = view.queue, view.running
        self._record(now, view.woken, view.changes, view.free_cores, view.queue_length,
                     view.counting, view.running_count, view.first_estimated_end(),
                     view.changed, view.cap, view.next_cap_change(), view.cap_schedule,
                     view.power_prediction, view.job_power is None, view.requests.shape,
                     view.capacity.tolist(), view.free.tolist(), len(view.jobs),
                     view.platform.describe())
        self._record([c.tolist() for c in q], [c.tolist() for c in r], view.queue_head(3),
                     view.running_head(2), view.queue_head(-2), view.queue_head(10**9),
                     view.running_head(-1), view.queued_after(-1),
                     view.queued_after(np.int64(len(view.jobs) // 2)),
                     view.queued_after(len(view.jobs) / 3), view.queued_after(10**20))
        for c in (*q, *r):  # the kind of every column, as the Python engine builds it
            self._record(type(c), c.dtype, c.shape, c.flags.writeable, c.flags.owndata,
                         c.flags.c_contiguous, c.base is None)
        self._record(view.queue.jobs is q.jobs, view.queue.submit is q.submit)
        if len(q.jobs):
            self._record(view.queued_after(int(q.jobs[0])),
                         view.queued_after(int(q.jobs[-1])))
        for job in r.jobs.tolist():
            alloc = view.allocation(job)
            self._record(view.estimated_end(job), view.start_time(job),
                         None if alloc is None else (alloc.nodes.tolist(),
                                                     alloc.counts.tolist()),
                         view.power_level(job), view.speed(job, 0.5),
                         view.exact_speed(job, 0.5))
        profile = view.release_profile()
        self.counts_["empty"] += not len(q.jobs)
        self.counts_["woken"] += view.woken
        if view.counting:
            self._record(profile.times, profile.free)
            out = self._decide(view, profile)
        else:
            self._record(profile.times, [f.tolist() for f in profile.free])
            out = self._decide_nodes(view)
        if now % 3 == 0:
            view.wake_at(now + 7)
            self.wakes_.append(now + 7)
            if len(self.wakes_) % 2 == 0 and self.wakes_[-2] > now:
                view.withdraw_wake(self.wakes_[-2])  # asked for, not fired yet
                self.counts_["withdrawn"] += 1
        self.call_on_empty_queue = view.running_count % 2 == 1
        return out

    def _head_only(self, view):
        """FIFO from the head by the free cores (or first-fit on nodes), reading the
        queue only."""
        if not view.counting:
            return self._decide_nodes(view)
        q, free, out = view.queue, view.free_cores, []
        self._record(view.now, view.queue_length, free, [c.tolist() for c in q])
        for job, units in zip(q.jobs.tolist(), q.units.tolist(), strict=True):
            if units > free:
                break
            free -= units
            out.append(Start(job))
        return out

    def _decide_nodes(self, view):
        """FIFO from the head, placed first-fit, and the probe's rejections."""
        out, free = [], view.free.copy()
        q = view.queue
        for job, units, submit in zip(q.jobs.tolist(), q.units.tolist(),
                                      q.submit.tolist(), strict=True):
            if job % 11 == 5 and view.now - submit >= 30:
                out.append(Reject(job, f"waited {view.now - submit} s"))
                self.counts_["rejected"] += 1
                continue
            alloc = FirstFit().allocate(view.requests[job], units, free)
            if alloc is None:
                break
            free[alloc.nodes] -= alloc.counts[:, None] * view.requests[job][None, :]
            out.append(Start(job, alloc))
        self._record([(d.job, getattr(d, "allocation", None) is not None) for d in out])
        return out

    def _decide(self, view, profile):
        """EASY-like starts from the release profile, and the probe's rejections."""
        now, q = view.now, view.queue
        out = []
        free = view.free_cores
        for job, units, est, submit in zip(*(c.tolist() for c in q), strict=True):
            if job % 11 == 5 and now - submit >= 30:
                out.append(Reject(job, f"waited {now - submit} s"))
                self.counts_["rejected"] += 1
                continue
            if units <= free and profile.earliest(units, max(est, 1)) == now:
                profile.reserve(now, max(est, 1), units)
                free -= units
                out.append(Start(job))
        self._record(out)
        return out

    def run_facts(self):
        return {"probe": self.log_.hexdigest(), **self.counts_}


class SparseProbe(Probe):
    """The probe, reading the running set (every member) at one pass in 13 only."""

    name = "sparse-probe"
    every = 13


def run_both(platform, jobs, dispatcher, predictor=None, overrun="run"):
    """The results of the Python and the native engine."""
    predictor = predictor or make_predictor("walltime")
    py = Simulation(platform, jobs, dispatcher, predictor, overrun=overrun).run()
    nat = simulate_native(platform, jobs, dispatcher, predictor, overrun=overrun)
    return py, nat


def assert_same(py, nat) -> None:
    """The same per-job table (schedule, estimates, statuses, reasons, allocations),
    counts, number of dispatch calls and run facts."""
    assert nat.engine == "native" and py.engine == "python"
    assert py.to_arrow().equals(nat.to_arrow()), "the per-job tables differ"
    assert py.allocations.keys() == nat.allocations.keys()
    for job, alloc in py.allocations.items():
        assert alloc.nodes.tolist() == nat.allocations[job].nodes.tolist()
        assert alloc.counts.tolist() == nat.allocations[job].counts.tolist()
    assert py.reject_reason == nat.reject_reason
    assert (py.events, py.passes) == (nat.events, nat.passes)
    assert len(py.decision_times) == len(nat.decision_times)
    assert py.dispatcher_facts == nat.dispatcher_facts


@pytest.mark.parametrize("cls", [WidestFirst, HeadFirst, PlacingHead, Probe, SparseProbe])
def test_python_dispatchers_on_contending_workloads(cls):
    for platform, jobs in contending_workloads(6):
        dispatcher = cls()
        assert native_reason(platform, jobs, dispatcher) is None
        assert_same(*run_both(platform, jobs, dispatcher))


@pytest.mark.parametrize("cls", [PlacingHead, Probe, SparseProbe])
def test_python_dispatchers_on_nodes(cls):
    """Node-level platforms (several node types, cores, GPUs and memory): the
    dispatcher's allocations, the free matrix, the node-level release profile."""
    for platform, jobs in node_workloads(4):
        dispatcher = cls()
        assert native_reason(platform, jobs, dispatcher) is None
        assert_same(*run_both(platform, jobs, dispatcher))


def test_the_probe_exercised_everything():
    """The probe's runs rejected jobs, woke up, withdrew wake-ups and made passes on
    an empty queue (else the log comparison proves less)."""
    counts = dict.fromkeys(("empty", "woken", "withdrawn", "rejected"), 0)
    for platform, jobs in contending_workloads(6) + node_workloads(4):
        nat = simulate_native(platform, jobs, Probe())
        for key in counts:
            counts[key] += nat.dispatcher_facts[key]
    assert min(counts.values()) >= 3, counts


@settings(max_examples=300, deadline=None)
@given(workload=counting_workloads(),
       cls=st.sampled_from([WidestFirst, HeadFirst, Probe, SparseProbe]),
       predictor=st.sampled_from(["walltime", "real"]),
       overrun=st.sampled_from(["run", "kill"]))
def test_python_dispatchers_on_drawn_workloads(workload, cls, predictor, overrun):
    jobs, cores = workload
    assert_same(*run_both(Platform.pooled(cores), jobs, cls(), make_predictor(predictor),
                          overrun))


@settings(max_examples=150, deadline=None)
@given(workload=drawn_node_workloads(),
       cls=st.sampled_from([PlacingHead, Probe, SparseProbe]),
       predictor=st.sampled_from(["walltime", "real"]),
       overrun=st.sampled_from(["run", "kill"]))
def test_python_dispatchers_on_drawn_node_workloads(workload, cls, predictor, overrun):
    """Drawn node-level runs (node types, GPUs, memory, a partition, weights)."""
    platform, jobs = workload
    assert_same(*run_both(platform, jobs, cls(), make_predictor(predictor), overrun))


#: dispatchlab's own dispatchers that run through the View when forced (every one
#: whose requirements the native engine meets; the native ones included)
OWN = ["fifo", "sjf:skip=True", "ljf", "easy", "easy:order=urgency",
       "easy:reservations=3:order=sjf", "easy:priority=slowdown:scope=queue",
       "easy:explain=True", "conservative", "conservative:order=sjf", "prb",
       "easy:allocator=best-fit", "conservative:allocator=consolidate"]


@pytest.mark.parametrize("spec", OWN)
def test_own_dispatchers_through_the_view(spec):
    for platform, jobs in contending_workloads(4) + node_workloads(3):
        dispatcher = make_dispatcher(spec)
        setattr(dispatcher, native._VIA_VIEW, True)
        assert native_reason(platform, jobs, dispatcher) is None
        assert_same(*run_both(platform, jobs, dispatcher))


def test_reasons_for_python_dispatchers():
    platform, jobs = contending_workloads(1)[0]

    class Powered(WidestFirst):
        needs_power = True

    class Capping(WidestFirst):
        needs_cap = True

    class Slowing(WidestFirst):
        slows_running_jobs = True

    class Logging(WidestFirst):
        keeps_pass_log = True

    for cls, what in [(Powered, "power predictions"), (Capping, "a power cap"),
                      (Slowing, "slowing running jobs (a duration model)"),
                      (Logging, "a pass log")]:
        assert native_reason(platform, jobs, cls()) == (
            f"dispatcher 'widest-first' needs {what}, which the native engine lacks yet")
    # the other parts of the run are checked as for a native dispatcher
    assert native_reason(platform, jobs, WidestFirst(), max_wall=10.0) == (
        "wall-clock budgets (max_wall) are not native yet")
    # a predictor written in Python runs too (tests/sim/test_native_predictor.py)
    assert native_reason(platform, jobs, WidestFirst(), make_predictor("history")) is None
    nodes = Platform.homogeneous(2, 4, mem=16)
    assert native_reason(nodes, jobs, HeadFirst()) is None  # it places its jobs

    class Fifo(WidestFirst):  # a native dispatcher's name: still a Python dispatcher
        name = "fifo"

    assert native_reason(nodes, jobs, Fifo()) == "dispatcher 'fifo' cannot place jobs on nodes"


# --- errors ---------------------------------------------------------------------------

def _jobs() -> tuple[Platform, JobTable]:
    jobs = JobTable.from_arrays(submit=[0, 0, 5, 9], run=[10, 4, 3, 2], units=[2, 3, 1, 1],
                                requested_time=[10, 5, 5, 5])
    return Platform.pooled(4), jobs


class Raising(Dispatcher):
    name = "raising"

    def __init__(self, at: int = 5, exc: str = "value"):
        self.at, self.exc = at, exc

    def dispatch(self, view):
        if view.now >= self.at:
            errors = {"value": ValueError("the rule broke at 5"),
                      "key": KeyError("job"), "dispatch": DispatchError("mine"),
                      "runtime": RuntimeError("mine too")}
            raise errors[self.exc]
        return HeadFirst().dispatch(view)


class Broken(Dispatcher):
    """One rule broken at the pass at time 5."""

    name = "broken"

    def __init__(self, how: str = "twice"):
        self.how = how

    def dispatch(self, view):
        out = HeadFirst().dispatch(view)
        if view.now != 5:
            return out
        rows = view.queue.jobs.tolist()
        running = view.running.jobs.tolist()
        if self.how == "withdraw-twice":
            view.wake_at(9)
            view.withdraw_wake(9)
            view.withdraw_wake(9)
        if self.how == "wake-now":
            view.wake_at(5)
        return {"twice": [Start(rows[0]), Start(rows[0])] if rows else out,
                "running": [Start(running[0])],
                "too-wide": [Start(r) for r in rows] + [Start(1)],
                "not-waiting": [Reject(running[0], "no")],
                "junk": ["start 3"],
                "no-job": [SetSpeed(99, 0.5)],
                "speed": [SetSpeed(running[0], 0.5)],
                "power": [SetPower(running[0], 0.5)]}.get(self.how, out)


@pytest.mark.parametrize("exc", ["value", "key", "dispatch", "runtime"])
def test_what_the_dispatcher_raises_is_raised_unchanged(exc):
    platform, jobs = _jobs()
    errors = []
    for run in (lambda d: Simulation(platform, jobs, d).run(),
                lambda d: simulate_native(platform, jobs, d)):
        with pytest.raises(Exception) as info:
            run(Raising(exc=exc))
        errors.append(info.value)
    assert type(errors[0]) is type(errors[1]) and str(errors[0]) == str(errors[1])
    assert not isinstance(errors[1], native.NativeCoreError)


class BadRead(Dispatcher):
    """Calls the View's ``member`` with ``arg`` at its first pass with jobs running
    and waiting (then runs FIFO from the head)."""

    name = "bad-read"

    def __init__(self, member: str = "queue_head", arg: object = None):
        self.member, self.arg = member, arg

    def dispatch(self, view):
        if view.running_count and view.queue_length:
            getattr(view, self.member)(self.arg)
        return HeadFirst().dispatch(view)


@pytest.mark.parametrize(("member", "arg"), [
    ("queue_head", 2.5), ("queue_head", "x"), ("queued_after", "x"),
    ("queued_after", None), ("running_head", 1.5), ("running_head", "x")])
def test_bad_reads_give_the_python_engines_error(member, arg):
    """The queue and the running set answer a value a slice or a comparison refuses
    with the Python engine's error (the native ones are compiled objects)."""
    platform, jobs = _jobs()
    errors = []
    for run in (lambda d: Simulation(platform, jobs, d).run(),
                lambda d: simulate_native(platform, jobs, d)):
        with pytest.raises(TypeError) as info:
            run(BadRead(member, arg))
        errors.append(str(info.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("how", ["twice", "running", "too-wide", "not-waiting", "junk",
                                 "no-job", "withdraw-twice", "wake-now"])
def test_broken_rules_give_the_python_engines_message(how):
    platform, jobs = _jobs()
    messages = []
    for run in (lambda d: Simulation(platform, jobs, d).run(),
                lambda d: simulate_native(platform, jobs, d)):
        with pytest.raises(DispatchError) as info:
            run(Broken(how))
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("how", ["speed", "power"])
def test_rate_changes_are_refused_naming_the_python_engine(how):
    platform, jobs = _jobs()
    with pytest.raises(DispatchError, match=r"Broken\(how='(speed|power)'\) changed the "
                       r"(speed|power level) of job 1: rate changes \(SetSpeed, SetPower\) "
                       r"are not native yet \(run it with --engine python\)$"):
        simulate_native(platform, jobs, Broken(how))


def test_a_dispatcher_that_never_starts_a_job():
    class Idle(Dispatcher):
        name = "idle"

        def dispatch(self, view):
            return []

    platform, jobs = _jobs()
    messages = []
    for run in (lambda d: Simulation(platform, jobs, d).run(),
                lambda d: simulate_native(platform, jobs, d)):
        with pytest.raises(DispatchError) as info:
            run(Idle())
        messages.append(str(info.value))
    assert messages[0] == messages[1] == ("Idle() left 4 jobs waiting forever (first: "
                                          "job 1) though they fit the platform")


def test_an_error_in_start_or_in_call_on_empty_queue_is_raised_unchanged():
    class BadStart(HeadFirst):
        def start(self, view):
            raise LookupError("no state")

    class BadEmpty(HeadFirst):
        """Declares no passes on an empty queue; reading it fails once it ran."""

        @property
        def call_on_empty_queue(self):
            if getattr(self, "ran_", False):
                raise ZeroDivisionError("asked at an empty queue")
            return False

        def dispatch(self, view):
            self.ran_ = True
            return super().dispatch(view)

    platform, jobs = _jobs()
    assert not BadEmpty().requires.empty_queue_pass
    for cls, exc in [(BadStart, LookupError), (BadEmpty, ZeroDivisionError)]:
        messages = []
        for run in (lambda d: Simulation(platform, jobs, d).run(),
                    lambda d: simulate_native(platform, jobs, d)):
            with pytest.raises(exc) as info:
                run(cls())
            messages.append(str(info.value))
        assert messages[0] == messages[1]


def test_python_dispatchers_on_threads_at_once():
    """Runs on four threads at once (each takes the GIL at its passes) give the
    results of the same runs one after another; none blocks another."""
    runs = [(platform, jobs, cls()) for (platform, jobs), cls in
            zip(contending_workloads(4, seed=3), [WidestFirst, HeadFirst, Probe, WidestFirst],
                strict=True)]
    alone = [simulate_native(*args) for args in runs]
    start = threading.Barrier(4)

    def run(args):
        start.wait(timeout=60)  # all four run at once
        return simulate_native(*args)

    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(run, runs))
    for a, b in zip(alone, together, strict=True):
        assert a.to_arrow().equals(b.to_arrow())
        assert a.dispatcher_facts == b.dispatcher_facts
