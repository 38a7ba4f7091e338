"""The Python API a notebook user reaches for: the one component grammar in every
``make_*`` function, ``JobTable`` slicing, ``repr`` and conversions, results as
pandas."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dispatchlab as dl
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import EASY
from dispatchlab.dispatch.allocators import BestFit
from dispatchlab.dispatch.l2r import L2ROrder
from dispatchlab.dispatch.orderings import FifoOrder, MauiOrder

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
    assert dl.make_ordering("maui", wait=0).wait == 0  # keyword arguments as for the others
    with pytest.raises(InputError, match="ordering 'maui' has no parameter 'nope'"):
        dl.make_ordering("maui", nope=1)
    assert isinstance(dl.make_allocator("best-fit"), BestFit)
    with pytest.raises(InputError, match="has no parameter 'x'"):
        dl.make_allocator("best-fit:x=1")
    with pytest.raises(InputError, match="has no parameter 'nope'"):
        dl.make_ordering("maui:nope=1")
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "own_api_mod.py").write_text(OWN)
    assert type(dl.make_ordering("own_api_mod:Shortest")).__name__ == "Shortest"
    assert dl.make_dispatcher("own_api_mod:Tagged:tag=z").tag == "z"


# --------------------------------------------------------------------- JobTable


def _jobs(n: int = 10) -> dl.JobTable:
    rng = np.random.default_rng(1)
    return dl.JobTable.from_arrays(submit=np.arange(n) * 100, run=rng.integers(10, 500, n),
                                   units=rng.integers(1, 5, n), user=np.arange(n) % 3)


def test_jobtable_slices_masks_and_rows_give_jobtables() -> None:
    jobs = _jobs()
    head = jobs[:4]
    assert isinstance(head, dl.JobTable) and len(head) == 4
    assert head["job_id"].tolist() == [1, 2, 3, 4]
    assert jobs[::3]["job_id"].tolist() == [1, 4, 7, 10]
    assert jobs[-2:]["submit"].tolist() == [800, 900]
    # resources follow the rows; the selection is a copy
    head["submit"][0] = 12345
    assert jobs["submit"][0] == 0 and head.resources["core"].tolist() == [1] * 4
    mask = jobs["user"] == 1
    assert jobs[mask]["job_id"].tolist() == [2, 5, 8]
    assert jobs[[0, 2, -1]]["job_id"].tolist() == [1, 3, 10]
    assert jobs[np.array([], dtype=np.int64)].n == 0
    assert len(jobs[np.zeros(10, dtype=bool)]) == 0
    # a selection simulates like any table
    result = dl.Simulation(dl.Platform.pooled(4), jobs[2:8], dl.make_dispatcher("fifo")).run()
    assert len(result.jobs) == 6 and (result.start >= result.jobs["submit"]).all()


def test_jobtable_selections_that_would_break_submit_order_are_refused() -> None:
    jobs = _jobs()
    with pytest.raises(ValueError, match="negative step"):
        jobs[::-1]
    with pytest.raises(ValueError, match="increasing"):
        jobs[[3, 1]]
    with pytest.raises(ValueError, match="increasing"):
        jobs[[1, 1]]
    with pytest.raises(ValueError, match="one value per job"):
        jobs[np.ones(3, dtype=bool)]
    with pytest.raises(TypeError, match=r"jobs\[3:4\]"):
        jobs[3]
    with pytest.raises(IndexError):
        jobs[[0, 10]]
    with pytest.raises(KeyError):
        jobs["nope"]


def test_jobtable_repr_is_short() -> None:
    jobs = _jobs(5000)
    text = repr(jobs)
    assert text.startswith("JobTable: 5,000 jobs from <memory>, submitted over 5.8 days "
                           "(t = 0 .. 499,900 s)")
    assert "columns: job_id, submit, wait, run" in text and "resources (per unit): core" in text
    assert "[" not in text and len(text.splitlines()) == 3 and len(text) < 400
    assert repr(jobs[:0]).startswith("JobTable: 0 jobs from <memory>\n")


def test_jobtable_to_arrow_and_to_pandas(tmp_path: Path) -> None:
    jobs = _jobs()
    table = jobs.to_arrow()
    assert table.num_rows == 10 and table.column_names[:2] == ["job_id", "submit"]
    assert table.column("res_core").to_pylist() == [1] * 10
    frame = jobs[:3].to_pandas()
    assert list(frame["job_id"]) == [1, 2, 3] and frame.shape == (3, table.num_columns)
    assert frame["run"].tolist() == jobs["run"][:3].tolist()


def test_result_to_pandas() -> None:
    jobs = _jobs()
    result = dl.Simulation(dl.Platform.pooled(4), jobs, dl.make_dispatcher("easy")).run()
    frame = result.to_pandas()
    assert frame.shape == (10, result.to_arrow().num_columns)
    assert frame["wait"].tolist() == (result.start - jobs["submit"]).tolist()
    assert str(frame["status"].dtype) == "category"
    assert set(frame["status"]) == {"completed"}


def test_to_pandas_without_pandas_says_so(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    jobs = _jobs()
    result = dl.Simulation(dl.Platform.pooled(4), jobs, dl.make_dispatcher("fifo")).run()
    for obj in (jobs, result):
        with pytest.raises(ImportError, match=r"to_pandas\(\) needs pandas.*pip install pandas"):
            obj.to_pandas()
    assert result.to_arrow().num_rows == 10  # arrow still works
