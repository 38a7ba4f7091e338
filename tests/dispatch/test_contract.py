"""The declared dispatcher contract (issue 29, item 3): ``Dispatcher.requires`` read
instead of attribute probes, the public ``validate()``, the declared pass log, and the
typed :class:`~dispatchlab.dispatch.view.View` protocol implemented by
:class:`~dispatchlab.sim.view.EngineView`."""

from __future__ import annotations

import gc
import inspect

import numpy as np
import pytest

from dispatchlab import Simulation
from dispatchlab.core.deprecation import MovedWarning
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import DISPATCHERS, FIFO, Dispatcher, make_dispatcher
from dispatchlab.dispatch.base import Requirements, View
from dispatchlab.dispatch.requirements import DECLARATIONS
from dispatchlab.dispatch.view import View as ProtocolView
from dispatchlab.predict.duration.base import Predictor
from dispatchlab.run.build import check_power_inputs
from dispatchlab.sim.duration import Factor
from dispatchlab.sim.view import EngineView
from dispatchlab.testing import check_dispatcher, contending_workloads, node_workloads


def counting_run():
    return contending_workloads(1, seed=3)[0]


def node_run():
    return node_workloads(1, seed=3)[0]


class _Counting(FIFO):
    """FIFO that counts its calls at passes with an empty queue."""

    def start(self, view):
        super().start(view)
        self.empty_calls_ = 0

    def dispatch(self, view):
        if view.queue_length == 0:
            self.empty_calls_ += 1
        return super().dispatch(view)


# ------------------------------------------------------------------ requirements


def test_a_plain_dispatcher_requires_nothing_special():
    req = Requirements()
    assert req.node_level and req.empty_queue_pass
    assert not (req.power_predictions or req.job_power or req.cap
                or req.slows_running_jobs or req.pass_log)
    assert set(req.as_dict()) == set(DECLARATIONS)
    with pytest.raises(AttributeError):
        req.cap = True  # type: ignore[misc]  # frozen


def test_old_style_class_attributes_are_still_honoured():
    class OldStyle(FIFO):
        needs_power = True
        needs_cap = True
        supports_node_level = False
        call_on_empty_queue = True

    req = OldStyle().requires
    assert req == Requirements(node_level=False, power_predictions=True, cap=True,
                               empty_queue_pass=True)

    class SetOnInstance(Dispatcher):
        def __init__(self) -> None:
            self.needs_job_power = True  # an old instance-level setting

        def dispatch(self, view):
            return []

    assert SetOnInstance().requires.job_power


def test_builtin_declarations_read_through_requires():
    def req(name: str, **params) -> Requirements:
        return make_dispatcher(name, **params).requires

    assert req("easy") == Requirements(empty_queue_pass=False)
    assert req("easy-pc").node_level and req("knapsack").node_level
    assert req("easy-pc").power_predictions
    assert req("pcp").pass_log and req("hcp").pass_log and req("dec").pass_log
    rapl = req("rapl-dynshare")
    assert rapl.job_power and rapl.cap and rapl.slows_running_jobs
    # a wrapper's requirements join its parts': a pooled-only part makes it pooled-only

    class PooledOnly(FIFO):
        supports_node_level = False

    assert req("dec-rapl").node_level
    assert req("dec-rapl", high="easy-pc").node_level
    assert req("dec-rapl", high=PooledOnly()).node_level is False
    assert req("dec-rapl").pass_log is False  # its DEC part's log is the part's


def test_the_engine_reads_requires_not_attributes():
    """A class that declares its needs only through ``requires`` gets them honoured:
    node-level refusal, the duration model check, skipped empty-queue passes."""

    class PooledOnly(FIFO):
        @property
        def requires(self) -> Requirements:
            return Requirements(node_level=False)

    platform, jobs = node_run()
    with pytest.raises(InputError, match="cannot place jobs on nodes"):
        Simulation(platform, jobs, PooledOnly())

    class Throttles(FIFO):
        @property
        def requires(self) -> Requirements:
            return Requirements(slows_running_jobs=True)

    platform, jobs = counting_run()
    with pytest.raises(InputError, match="slows running jobs"):
        Simulation(platform, jobs, Throttles())
    Simulation(platform, jobs, Throttles(), duration_model=Factor(f=1.0)).run()

    class NoEmptyPasses(_Counting):
        @property
        def requires(self) -> Requirements:
            return Requirements(empty_queue_pass=False)

    class EmptyPasses(_Counting):
        call_on_empty_queue = True

    skipped = Simulation(platform, jobs, NoEmptyPasses())
    called = Simulation(platform, jobs, EmptyPasses())
    a, b = skipped.run(), called.run()
    assert np.array_equal(a.start, b.start) and a.passes == b.passes
    assert skipped.dispatcher.empty_calls_ == 0 < called.dispatcher.empty_calls_


def test_a_live_call_on_empty_queue_overrides_the_declaration_during_a_run():
    class Live(_Counting):
        call_on_empty_queue = False

        def dispatch(self, view):
            if view.now > 0:
                self.call_on_empty_queue = True  # on this instance, for the rest
            return super().dispatch(view)

    platform, jobs = counting_run()
    sim = Simulation(platform, jobs, Live())
    sim.run()
    assert sim.dispatcher.empty_calls_ > 0
    del sim.dispatcher.call_on_empty_queue
    assert sim.dispatcher.call_on_empty_queue is False  # the class's value again


def test_call_on_empty_queue_set_on_an_instance_of_a_class_that_declares_none():
    class SetsIt(Dispatcher):
        def __init__(self, quiet: bool = True) -> None:
            self.quiet = quiet
            if quiet:
                self.call_on_empty_queue = False  # the base class's property keeps it

        def dispatch(self, view):
            return []

    d = SetsIt()
    assert d.call_on_empty_queue is False and d.requires.empty_queue_pass is False
    del d.call_on_empty_queue
    assert d.call_on_empty_queue is True and d.requires.empty_queue_pass is True
    del d.call_on_empty_queue  # nothing set: still the class's value
    assert SetsIt(quiet=False).requires.empty_queue_pass is True


@pytest.mark.parametrize("name", ["fifo", "easy", "conservative"])
def test_reading_requires_leaves_the_dispatchers_attributes_inline(name):
    """``requires`` reads instance attributes without ``vars()``: on CPython 3.11 an
    object whose ``__dict__`` was made keeps its attributes in a dictionary from then on
    (seen by the garbage collector as a referent dict), and every read of the engine's
    dispatcher in the run loop becomes a slower dictionary lookup."""
    d = make_dispatcher(name)
    d.requires  # noqa: B018  # what Simulation reads of its clone before the run
    d.call_on_empty_queue  # noqa: B018
    params = set(d.get_params())
    assert not [r for r in gc.get_referents(d) if isinstance(r, dict) and params <= set(r)]


def test_the_command_line_checks_read_requires():
    class NeedsCap(FIFO):
        name = "needs-cap"

        @property
        def requires(self) -> Requirements:
            return Requirements(cap=True, power_predictions=True)

    _, jobs = counting_run()
    with pytest.raises(InputError) as err:
        check_power_inputs(NeedsCap(), None, jobs, None)
    assert err.value.field == "--cap"
    with pytest.raises(InputError) as err:
        check_power_inputs(NeedsCap(), object(), jobs, None)
    assert err.value.field == "--power-predictor"


def test_check_dispatcher_reports_the_requirements():
    class PooledFifo(FIFO):
        supports_node_level = False

    report = check_dispatcher(PooledFifo, workloads=2)
    assert report["requires"] == Requirements(node_level=False,
                                              empty_queue_pass=False).as_dict()
    assert report["workloads"] == 2  # no node-level workload for a pooled-only one
    assert check_dispatcher(FIFO, workloads=2)["requires"]["node_level"] is True


def test_check_dispatcher_holds_a_declared_pass_log_to_its_word():
    class ClaimsALog(FIFO):
        keeps_pass_log = True  # but never makes pass_log_ a list

    with pytest.raises(AssertionError, match="pass_log_ is not a list"):
        check_dispatcher(ClaimsALog, workloads=1)

    class KeepsALog(FIFO):
        keeps_pass_log = True

        def start(self, view):
            super().start(view)
            self.pass_log_ = []

        def dispatch(self, view):
            self.pass_log_.append({"now": view.now})
            return super().dispatch(view)

    assert check_dispatcher(KeepsALog, workloads=1)["requires"]["pass_log"]


def test_every_dispatcher_declares_its_pass_log_by_its_requirements():
    for name in ("fifo", "easy", "conservative", "prb"):
        d = make_dispatcher(name)
        assert not d.requires.pass_log and d.pass_log_ == ()


# ------------------------------------------------------------------ validate


def test_validate_is_public_and_called_when_built_by_name():
    with pytest.raises(InputError) as err:
        make_dispatcher("easy", scope="nowhere")
    assert err.value.field == "scope"
    with pytest.raises(InputError):
        DISPATCHERS["easy"](scope="nowhere").validate()
    FIFO().validate()  # nothing to check


def test_the_old_private_check_still_works_with_a_warning():
    with pytest.warns(MovedWarning, match="validate"), pytest.raises(InputError):
        DISPATCHERS["easy"](scope="nowhere")._check()

    class Legacy(FIFO):
        def __init__(self, size: int = 1) -> None:
            super().__init__()
            self.size = size

        def _check(self) -> None:
            super()._check()
            if self.size < 1:
                raise InputError("size must be >= 1", field="size")

    with pytest.warns(MovedWarning, match="define validate"), pytest.raises(InputError):
        Legacy(size=0).validate()


# ------------------------------------------------------------------ the View protocol


def _protocol_members() -> list[str]:
    return sorted(k for k in vars(ProtocolView)
                  if not k.startswith("_") and k not in {"mro"})


def test_view_is_the_protocol_reexported():
    assert View is ProtocolView
    assert getattr(ProtocolView, "_is_protocol", False)
    assert len(_protocol_members()) >= 35


def test_every_view_member_is_documented_with_its_cost():
    for name in _protocol_members():
        member = vars(ProtocolView)[name]
        func = member.fget if isinstance(member, property) else member
        doc = inspect.getdoc(func) or ""
        assert len(doc) > 20, f"View.{name} is not documented"
        assert "O(" in doc, f"View.{name} does not state its cost"


def test_the_engine_view_implements_the_protocol_and_nothing_else():
    members = set(_protocol_members())
    public = {k for k in dir(EngineView) if not k.startswith("_")} | {"now"}
    assert members == public
    seen = []

    class Records(FIFO):
        def dispatch(self, view):
            seen.append(view)
            return super().dispatch(view)

    platform, jobs = counting_run()
    Simulation(platform, jobs, Records()).run()
    assert seen and isinstance(seen[0], EngineView) and isinstance(seen[0], View)


def test_cheap_running_accessors_agree_with_the_running_columns():
    """``estimated_end`` (O(1)) gives each running job's value in ``running.est_end``
    (effective: never before now) and ``running_count`` its length, at every pass of a
    run whose estimates expire."""
    checked = []

    class Checks(FIFO):
        def dispatch(self, view):
            running = view.running
            assert view.running_count == len(running.jobs)
            ends = [view.estimated_end(j) for j in running.jobs.tolist()]
            assert ends == running.est_end.tolist()
            checked.append(len(ends))
            return super().dispatch(view)

    class OneSecond(Predictor):
        def predict(self, job, now):
            return 1  # every estimate expires: effective ends are clamped to now

    platform, jobs = counting_run()
    Simulation(platform, jobs, Checks(), OneSecond()).run()
    assert sum(checked) > 0


def test_a_component_view_stands_for_the_run_view():
    """dec-rapl's parts see the run's view through a wrapper (its own ``now`` and
    ``changed``), which satisfies the protocol."""
    from dispatchlab.dispatch.powercap.rapl import _ComponentView

    inner = []

    class Outer(FIFO):
        def dispatch(self, view):
            wrapped = _ComponentView(view)
            inner.append(isinstance(wrapped, View) and wrapped.queue_length
                         == view.queue_length and wrapped.now == view.now
                         and wrapped.changed == ((), (), (), ()))
            return super().dispatch(view)

    platform, jobs = counting_run()
    Simulation(platform, jobs, Outer()).run()
    assert inner and all(inner)


# ------------------------------------------------------------------ what mypy found


def test_a_list_dispatcher_whose_order_is_queue_order_runs_on_pooled_cores():
    """``ListDispatcher.order`` may return None (queue order) from a subclass; on a
    counting platform that used to index the queue with None (found by mypy)."""
    from dispatchlab.dispatch.priority import ListDispatcher

    class QueueOrder(ListDispatcher):
        def __init__(self, allocator: str = "first-fit") -> None:
            self.allocator = allocator

        def order(self, view):
            return None

    platform, jobs = counting_run()
    mine = Simulation(platform, jobs, QueueOrder()).run()
    fifo = Simulation(platform, jobs, FIFO()).run()
    assert np.array_equal(mine.start, fifo.start)
