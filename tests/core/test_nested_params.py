"""Nested components (``name__param`` keys), deep ``get_params``/``clone``, and the
node-level half of ``check_dispatcher``."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from dispatchlab.core.components import parse_component
from dispatchlab.core.errors import InputError
from dispatchlab.core.params import comparable_params, make_component
from dispatchlab.dispatch import Dispatcher, Start
from dispatchlab.dispatch.allocators import ALLOCATORS, Allocator, FirstFit
from dispatchlab.testing import check_dispatcher


class Spread(Allocator):
    """Test allocator with a parameter: at most ``per_node`` units on a node."""

    name = "spread"

    def __init__(self, per_node: int = 1) -> None:
        self.per_node = per_node

    def allocate(self, request, units, free):
        return FirstFit().allocate(request, units, free)


class Holder(Dispatcher):
    """Dispatcher whose ``allocator`` parameter is a nested component."""

    name = "holder"
    nested: ClassVar[dict[str, str]] = {"allocator": "allocator"}

    def __init__(self, allocator="spread", limit: int = 3) -> None:
        self.allocator = allocator
        self.limit = limit

    def dispatch(self, view):
        return []


@pytest.fixture(autouse=True)
def _register_spread():
    ALLOCATORS["spread"] = Spread
    yield
    del ALLOCATORS["spread"]


def test_set_params_turns_a_name_into_a_configured_instance() -> None:
    h = Holder().set_params(allocator__per_node=4, limit=5)
    assert isinstance(h.allocator, Spread) and h.allocator.per_node == 4 and h.limit == 5
    assert h.get_params(deep=True) == {"allocator": h.allocator, "limit": 5,
                                       "allocator__per_node": 4}
    # shallow get_params lists __init__ keywords only
    assert set(h.get_params()) == {"allocator", "limit"}


def test_clone_is_deep_and_equal() -> None:
    h = Holder(allocator=Spread(per_node=2))
    twin = h.clone()
    assert twin.allocator is not h.allocator
    assert comparable_params(twin.get_params()) == comparable_params(h.get_params())
    twin.allocator.per_node = 9
    assert h.allocator.per_node == 2


def test_errors_name_the_parameter() -> None:
    with pytest.raises(ValueError, match="no parameter 'nope'"):
        Holder().set_params(nope__x=1)
    with pytest.raises(ValueError, match="not a component"):
        Holder().set_params(limit__x=1)
    with pytest.raises(ValueError, match="no parameter 'bogus'"):
        Holder().set_params(allocator__bogus=1)


def test_make_component_builds_nested_keys() -> None:
    a = make_component("allocator", "spread", per_node=3)
    assert isinstance(a, Spread) and a.per_node == 3
    b = make_component("allocator", a)
    assert b is not a and b.per_node == 3


def test_grammar_types_nested_values_from_the_sub_component(monkeypatch) -> None:
    from dispatchlab.dispatch import DISPATCHERS

    monkeypatch.setitem(DISPATCHERS, "holder", Holder)
    spec = parse_component("holder:allocator__per_node=7", "dispatcher")
    assert spec.params == {"allocator__per_node": 7}  # typed int from Spread's default
    built = spec.build()
    assert built.allocator.per_node == 7
    with pytest.raises(InputError, match="must be an integer"):
        parse_component("holder:allocator__per_node=x", "dispatcher")
    with pytest.raises(InputError, match="has no parameter 'per_nod'"):
        parse_component("holder:allocator__per_nod=1", "dispatcher")
    with pytest.raises(InputError, match="not a component"):
        parse_component("holder:limit__x=1", "dispatcher")


class CountingOnly(Dispatcher):
    """Starts jobs without allocations: fine on pooled platforms only."""

    name = "counting-only"

    def __init__(self) -> None:
        pass

    def dispatch(self, view):
        free, out = view.free_cores, []
        for job, units in zip(view.queue.jobs.tolist(), view.queue.units.tolist(),
                              strict=True):
            if units > free:
                break
            free -= units
            out.append(Start(job))
        return out


def test_check_dispatcher_runs_node_level_workloads() -> None:
    from dispatchlab.dispatch.base import DispatchError

    # without an allocation the engine refuses the start on a node-level platform
    with pytest.raises(DispatchError, match="without a valid allocation"):
        check_dispatcher(CountingOnly)

    class Declared(CountingOnly):
        supports_node_level = False

    report = check_dispatcher(Declared)
    assert report["workloads"] == 6


def test_node_workloads_contend() -> None:
    from dispatchlab.dispatch import make_dispatcher
    from dispatchlab.sim.engine import Simulation
    from dispatchlab.testing import node_workloads

    for platform, jobs in node_workloads():
        result = Simulation(platform, jobs, make_dispatcher("easy")).run()
        assert (result.wait > 0).any()
        assert len(platform.resource_names) == 3 and (jobs.resources["gpu"] > 0).any()
        assert np.all(result.start[result.status != 2] >= 0)
