"""Power facts of the platform presets, whole-node workloads (``units_as_nodes``) and the
``predict-power`` command name."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dispatchlab import JobTable, Simulation
from dispatchlab.cli import app
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.powercap.capped import EasyPC
from dispatchlab.platform.choose import PRESETS, platform_for
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power import PowerCap
from dispatchlab.power.model import job_nodes
from dispatchlab.predict.power.predictors import NaivePowerPredictor
from dispatchlab.workload.clean import units_as_nodes


def test_marconi100_nodes_preset_is_980_whole_nodes_simulated_by_counting():
    p = platform_for({"builtin": "marconi100-nodes"}, None, advice="")
    assert "marconi100-nodes" in PRESETS
    assert p.n_nodes == 980 and p.total_capacity() == {"core": 980}
    assert p.max_node_power == 2100.0 and p.dynamic_power_base == 955_080.0
    jobs = JobTable.from_arrays(submit=[0, 0], run=[10, 10], units=[3, 980])
    assert job_nodes(jobs, p).tolist() == [3, 980]  # a unit is a node
    sim = Simulation(p, jobs, EasyPC(), power_predictor=NaivePowerPredictor(),
                     cap=PowerCap.window(0.5 * 955_080.0))
    assert sim.counting  # so the capped dispatchers run on it
    r = sim.run()
    # naive: 2,100 W per node; the cap is 477,540 W = 227.4 nodes: the 3-node job starts at
    # 0, the 980-node job (2,058,000 W) never fits the permanent cap and is rejected
    assert r.start.tolist() == [0, -1]


def test_eurora_preset_has_400_w_nodes():
    p = eurora_platform()
    assert [nt.max_power for nt in p.node_types] == [400.0, 400.0]
    assert [nt.idle_power for nt in p.node_types] == [None, None]
    assert p.dynamic_power_base == 64 * 400.0


def test_units_as_nodes_rounds_processors_up_to_whole_nodes():
    jobs = JobTable.from_arrays(submit=[0, 1, 2], run=[5, 5, 5], units=[1, 4, 9])
    out = units_as_nodes(jobs, 4)
    assert out["units"].tolist() == [1, 1, 3]   # ceil(1/4), ceil(4/4), ceil(9/4)
    assert out["req_procs"].tolist() == [1, 1, 3]
    assert jobs["units"].tolist() == [1, 4, 9]  # the input is not changed
    assert units_as_nodes(jobs, 1)["units"].tolist() == [1, 4, 9]
    for bad in (0, -2, 1.5, True):
        with pytest.raises(InputError, match="procs_per_node"):
            units_as_nodes(jobs, bad)


def test_predict_power_is_the_power_predict_command():
    a = CliRunner().invoke(app, ["predict-power", "--help"])
    b = CliRunner().invoke(app, ["power", "predict", "--help"])
    assert a.exit_code == 0 and b.exit_code == 0
    assert a.output.split("\n", 1)[1] == b.output.split("\n", 1)[1]
