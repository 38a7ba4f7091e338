"""Every file a run reads is in its run key: a component's declared ``input_files``,
built-in (the ``l2r`` ordering's model) or nested in another component's parameter."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from campaign_helpers import stored_runs, synthetic_trace, write_campaign
from dispatchlab import make_dispatcher, make_predictor
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.campaign import load_campaign, run_campaign
from dispatchlab.experiment.provenance import declared_input_files
from dispatchlab.rank.learn import make_learner
from dispatchlab.rank.model import L2RModel


def write_model(path: Path, sign: float) -> Path:
    """An l2r model (causal features) that ranks first the jobs with the smallest
    (``sign=-1``) or largest (``sign=1``) requested time."""
    rng = np.random.default_rng(7)
    X = rng.random((60, 5))
    y = np.concatenate([np.argsort(np.argsort(sign * X[k:k + 6, 0])) for k in range(0, 60, 6)])
    q = np.repeat(np.arange(10), 6)
    learner = make_learner("ranksvm").fit(X, y.astype(np.float64), q)
    L2RModel.from_fitted("causal", np.zeros(5), np.ones(5), learner).save(path)
    return path


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    return synthetic_trace(tmp_path_factory.mktemp("traces"), 800, seed=3, cores=64)


def test_l2r_declares_its_model_and_nesting_passes_it_on(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = write_model(tmp_path / "m.json", 1.0)
    assert declared_input_files(make_dispatcher("easy")) == []
    # the model named in a parameter, relative to the current directory
    assert declared_input_files(make_dispatcher("easy", priority="l2r:model=m.json")) == [
        model.resolve()]
    # the nested form (priority__model) and the grammar of the API give the same file
    assert declared_input_files(make_dispatcher(
        "easy:priority=l2r:priority__model=m.json:scope=queue")) == [model.resolve()]
    # two levels down: an EASY inside dec-rapl
    assert declared_input_files(make_dispatcher(
        "dec-rapl", low="easy:priority=l2r:priority__model=m.json")) == [model.resolve()]
    # a predictor's sub-component is followed too: inflated's base, here a class of
    # one's own that declares a file (resolved against its module's folder)
    assert declared_input_files(make_predictor("inflated", base="walltime")) == []
    (tmp_path / "hist.txt").write_text("1\n")
    (tmp_path / "mine.py").write_text(
        "from dispatchlab.predict.duration.base import WalltimePredictor\n\n\n"
        "class Mine(WalltimePredictor):\n"
        "    input_files = ('hist.txt',)\n")
    assert declared_input_files(make_predictor(
        "inflated", base=f"{tmp_path / 'mine.py'}:Mine")) == [(tmp_path / "hist.txt").resolve()]
    with pytest.raises(InputError, match="which does not exist"):
        declared_input_files(make_dispatcher("easy", priority="l2r:model=gone.json"))


def test_editing_a_model_file_reexecutes_exactly_the_runs_that_read_it(
        tmp_path, monkeypatch, trace):
    monkeypatch.chdir(tmp_path)
    write_model(tmp_path / "a.json", 1.0)
    write_model(tmp_path / "b.json", 1.0)
    path = write_campaign(tmp_path, f"""
[campaign]
name = "l2r"
seeds = [1]
[[traces]]
label = "syn"
path = "{trace}"
[[platforms]]
cores = 64
[[dispatchers]]
name = "easy"
[[dispatchers]]
name = "easy"
label = "l2r-a"
params = {{ priority = "l2r:model=a.json", scope = "queue" }}
[[dispatchers]]
name = "easy"
label = "l2r-b"
params = {{ priority = "l2r", priority__model = "b.json", scope = "queue" }}
""")
    specs = {s["dispatcher"]["label"]: s for s in load_campaign(path).runs}
    assert set(specs["l2r-a"]["inputs"]) == {str(trace.resolve()),
                                            str((tmp_path / "a.json").resolve())}
    assert set(specs["l2r-b"]["inputs"]) == {str(trace.resolve()),
                                            str((tmp_path / "b.json").resolve())}
    assert set(specs["easy"]["inputs"]) == {str(trace.resolve())}
    db = tmp_path / "results.duckdb"
    assert run_campaign(path, workers=1).executed == 3
    before = {r["dispatcher"]: r for r in stored_runs(db).values()}
    assert json.loads(before["l2r-a"]["inputs"]).keys() == specs["l2r-a"]["inputs"].keys()
    # editing a.json re-executes the one run that reads it, with the new model
    write_model(tmp_path / "a.json", -1.0)
    report = run_campaign(path, workers=1)
    assert (report.executed, report.superseded) == (1, 1)
    after = {r["dispatcher"]: r for r in stored_runs(db).values()}
    assert after["easy"] == before["easy"] and after["l2r-b"] == before["l2r-b"]
    assert after["l2r-a"]["run_key"] != before["l2r-a"]["run_key"]
    assert after["l2r-a"]["mean_wait"] != before["l2r-a"]["mean_wait"]
    # the nested form's file likewise
    write_model(tmp_path / "b.json", -1.0)
    report = run_campaign(path, workers=1)
    assert (report.executed, report.superseded) == (1, 1)
    assert len(stored_runs(db)) == 3


NESTED_OWN = '''
from dispatchlab.dispatch.orderings import SjfOrder

from order_helpers import TAG


class Shortest(SjfOrder):
    """SJF under another name (a class of one's own, given as EASY's priority)."""
'''


def test_an_own_class_given_as_a_parameter_keys_its_code(tmp_path, monkeypatch, trace):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "order_helpers.py").write_text("TAG = 1\n")
    (tmp_path / "my_order.py").write_text(NESTED_OWN)
    path = write_campaign(tmp_path, f"""
[campaign]
name = "nested-own"
seeds = [1]
[[traces]]
label = "syn"
path = "{trace}"
[[platforms]]
cores = 64
[[dispatchers]]
name = "easy"
[[dispatchers]]
name = "easy"
label = "own-priority"
params = {{ priority = "my_order.py:Shortest", scope = "queue" }}
""")

    def keys() -> dict[str, dict]:
        return {s["dispatcher"]["label"]: s for s in load_campaign(path).runs}

    before = keys()
    assert set(before["own-priority"]["inputs"]) == {
        str(trace.resolve()), str((tmp_path / "my_order.py").resolve()),
        str((tmp_path / "order_helpers.py").resolve())}
    # editing the module it imports changes its run key, and only its
    (tmp_path / "order_helpers.py").write_text("TAG = 2\n")
    after = keys()
    assert after["own-priority"]["run_key"] != before["own-priority"]["run_key"]
    assert after["easy"]["run_key"] == before["easy"]["run_key"]
