"""The Python API a notebook user reaches for: the one component grammar in every
``make_*`` function, ``JobTable`` slicing, ``repr`` and conversions, results as
pandas."""

from __future__ import annotations

from pathlib import Path

import pytest

import dispatchlab as dl
from dispatchlab.dispatch import EASY
from dispatchlab.dispatch.allocators import BestFit
from dispatchlab.dispatch.orderings import FifoOrder, L2ROrder, MauiOrder
from dispatchlab.errors import InputError

OWN = '''
from dispatchlab.dispatch import EASY
from dispatchlab.dispatch.orderings import SjfOrder


class Tagged(EASY):
    def __init__(self, tag: str = "x", reservations: int = 1) -> None:
        super().__init__(reservations=reservations)
        self.tag = tag


class Shortest(SjfOrder):
    pass
'''


# ------------------------------------------------------------------- the grammar


def test_make_dispatcher_takes_the_whole_grammar(tmp_path: Path) -> None:
    disp = dl.make_dispatcher("easy:order=sjf")
    assert type(disp) is EASY and disp.order == "sjf"
    # typed from the class, case-insensitive name, merged with keyword arguments
    disp = dl.make_dispatcher("EASY:reservations=2:explain=yes", allocator="best-fit")
    assert (disp.reservations, disp.explain, disp.allocator) == (2, True, "best-fit")
    # nested: a sub-component's parameter
    disp = dl.make_dispatcher("easy:priority=maui:priority__wait=0:priority__sld=1")
    assert isinstance(disp.priority, MauiOrder)
    assert (disp.priority.wait, disp.priority.sld) == (0, 1)
    disp = dl.make_dispatcher("easy:priority=l2r:priority__model=m.json")
    assert isinstance(disp.priority, L2ROrder) and disp.priority.model == "m.json"
    # a parameter whose value is itself a spec, given as a keyword
    assert dl.make_dispatcher("easy", priority="maui:wait=0").priority == "maui:wait=0"
    # own classes: file and module forms, with parameters
    (tmp_path / "own_api.py").write_text(OWN)
    disp = dl.make_dispatcher(f"{tmp_path / 'own_api.py'}:Tagged:tag=a")
    assert (type(disp).__name__, disp.tag) == ("Tagged", "a")
    disp = dl.make_dispatcher(f"{tmp_path / 'own_api.py'}:Tagged:reservations=3")
    assert disp.reservations == 3


def test_grammar_errors_name_the_parameter() -> None:
    with pytest.raises(InputError, match="has no parameter 'nope'"):
        dl.make_dispatcher("easy:nope=1")
    with pytest.raises(InputError, match="must be an integer"):
        dl.make_dispatcher("easy:reservations=two")
    with pytest.raises(InputError, match="given twice"):
        dl.make_dispatcher("easy:order=sjf", order="fifo")
    with pytest.raises(InputError, match="expected KEY=VALUE after 'easy'"):
        dl.make_dispatcher("easy:sjf")
    with pytest.raises(InputError, match=r"unknown dispatcher 'eazy'.*easy"):
        dl.make_dispatcher("eazy:order=sjf")


def test_every_kind_takes_the_grammar(tmp_path: Path, monkeypatch) -> None:
    pred = dl.make_predictor("inflated:base=real:factor=1.25")
    assert (pred.base, pred.factor) == ("real", 1.25)
    pred = dl.make_predictor("inflated:base=history:base__cap_by_walltime=false")
    assert pred.base.cap_by_walltime is False
    power = dl.make_power_predictor("history:alpha=3")
    assert (type(power).__name__, power.alpha) == ("HistoryPowerPredictor", 3.0)
    model = dl.make_duration_model("mixed:profile=dvfs:seed=3")
    assert (model.profile, model.seed) == ("dvfs", 3)
    order = dl.make_ordering("maui:wait=0:sld=1")
    assert isinstance(order, MauiOrder) and (order.wait, order.sld) == (0, 1)
    assert isinstance(dl.make_ordering("fcfs"), FifoOrder)
    assert isinstance(dl.make_allocator("best-fit"), BestFit)
    with pytest.raises(InputError, match="has no parameter 'x'"):
        dl.make_allocator("best-fit:x=1")
    with pytest.raises(InputError, match="has no parameter 'nope'"):
        dl.make_ordering("maui:nope=1")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "own_api_mod.py").write_text(OWN)
    assert type(dl.make_ordering("own_api_mod:Shortest")).__name__ == "Shortest"
    assert dl.make_dispatcher("own_api_mod:Tagged:tag=z").tag == "z"
