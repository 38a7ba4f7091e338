"""A wall-clock budget (``max_wall``) and the per-pass decision trace."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import FIFO, make_dispatcher
from dispatchlab.platform import Platform
from dispatchlab.run.advice import result_warnings
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim.engine import Simulation
from dispatchlab.workload.jobs import JobTable


class SlowFIFO(FIFO):
    """FIFO that takes 20 ms per pass: a run of many passes outlives a small budget."""

    name = "slow-fifo"

    def dispatch(self, view):
        time.sleep(0.02)
        return super().dispatch(view)


def _jobs(n: int = 200) -> JobTable:
    # one job every 10 s, each 1 core for 15 s on 1 core: a queue forms, passes at
    # every submission and completion (~2n passes)
    return JobTable.from_arrays(submit=np.arange(n) * 10, run=np.full(n, 15),
                                units=np.ones(n, dtype=np.int64),
                                requested_time=np.full(n, 15))


def test_a_run_past_its_budget_stops_and_keeps_what_it_did() -> None:
    result = Simulation(Platform.pooled(1), _jobs(), SlowFIFO(), max_wall=0.3).run()
    assert not result.finished
    e = result.extra
    assert e["jobs_total"] == 200 and 0 < e["jobs_done"] < 200
    assert len(result.jobs) == e["jobs_done"]
    assert e["jobs_done"] + e["jobs_running"] + e["jobs_waiting"] + \
        e["jobs_not_submitted"] == 200
    # the jobs kept all ended: FIFO on one core, each 15 s, starts back to back
    assert (result.end >= 0).all() and (result.start >= 0).all()
    summary = run_summary(result)
    assert summary["finished"] == 0 and summary["unfinished"]["stopped_at"] > 0
    assert result_warnings(result)[0].startswith("NOT FINISHED")


def test_a_run_within_its_budget_is_finished() -> None:
    result = Simulation(Platform.pooled(1), _jobs(20), FIFO(), max_wall=60).run()
    assert result.finished and run_summary(result)["finished"] == 1
    assert len(result.jobs) == 20


@pytest.mark.parametrize("bad", [0, -1, float("nan"), "10", True])
def test_bad_budget(bad) -> None:
    with pytest.raises(InputError, match="wall-clock budget"):
        Simulation(Platform.pooled(1), _jobs(5), FIFO(), max_wall=bad)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dispatchlab.cli", *args],
                          capture_output=True, text=True, timeout=300)


def test_cli_trace_decisions_and_bad_budget(tmp_path) -> None:
    trace = tmp_path / "t.swf"
    jobs = _jobs(30)
    from dispatchlab.workload.swf import write_swf

    write_swf(jobs, trace)
    out = tmp_path / "easy.parquet"
    proc = _cli("simulate", str(trace), "--nodes", "1", "--cores-per-node", "1",
                "--dispatcher", "easy", "--trace-decisions", str(out), "--out",
                str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(out)
    assert table.column_names == ["call", "decision_time"] and table.num_rows > 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["finished"] == 1 and summary["decision_calls"] == table.num_rows
    # a CP dispatcher writes its solver facts, one row per pass
    out = tmp_path / "cp.parquet"
    proc = _cli("simulate", str(trace), "--nodes", "1", "--cores-per-node", "1",
                "--dispatcher", "hcp-online:time_limit=0.05", "--trace-decisions", str(out))
    assert proc.returncode == 0, proc.stderr
    facts = pq.read_table(out)
    assert {"now", "status", "objective", "prb_objective", "modelled",
            "improved_on_prb", "hit_limit"} <= set(facts.column_names)
    proc = _cli("simulate", str(trace), "--max-wall", "0")
    assert proc.returncode == 2 and proc.stderr.startswith("error:")
    assert "wall-clock budget" in proc.stderr and "Traceback" not in proc.stderr


def test_cp_run_facts_reach_the_summary() -> None:
    jobs = JobTable.from_arrays(submit=[0, 0, 0], run=[100, 60, 10], units=[1, 2, 1],
                                requested_time=[100, 60, 10])
    result = Simulation(Platform.pooled(2), jobs,
                        make_dispatcher("hcp-online", time_limit=0.1)).run()
    s = run_summary(result)
    assert s["cp_passes"] >= 1 and 0.0 <= s["cp_improved_share"] <= 1.0
    assert s["cp_mean_modelled"] >= 1 and s["cp_limit_hits"] >= 0


def test_campaign_max_wall_stores_unfinished_runs(tmp_path) -> None:
    from campaign_helpers import stored_runs, write_campaign
    from dispatchlab.experiment.campaign import load_campaign, run_campaign
    from dispatchlab.workload.swf import write_swf

    trace = tmp_path / "slow.swf"
    write_swf(_jobs(200), trace)
    (tmp_path / "slow_fifo.py").write_text(
        "import time\nfrom dispatchlab.dispatch import FIFO\n\n\n"
        "class SlowFIFO(FIFO):\n    name = 'slow-fifo'\n\n"
        "    def dispatch(self, view):\n        time.sleep(0.02)\n"
        "        return super().dispatch(view)\n")
    path = write_campaign(tmp_path, f"""
[campaign]
name = "budget"
database = "{tmp_path / 'r.duckdb'}"
max_wall = 0.3
[[traces]]
path = "{trace}"
[[platforms]]
cores = 1
[[dispatchers]]
name = "{tmp_path / 'slow_fifo.py'}:SlowFIFO"
label = "slow"
[[dispatchers]]
name = "fifo"
""")
    campaign = load_campaign(path)
    assert all(r["config"]["max_wall"] == 0.3 for r in campaign.runs)
    run_campaign(campaign, workers=1)
    runs = {r["dispatcher"]: r for r in stored_runs(tmp_path / "r.duckdb").values()}
    assert runs["slow"]["finished"] == 0 and runs["slow"]["jobs"] < 200
    assert runs["fifo"]["finished"] == 1 and runs["fifo"]["jobs"] == 200


def test_campaign_max_wall_must_be_positive(tmp_path) -> None:
    from campaign_helpers import write_campaign
    from dispatchlab.experiment.campaign import load_campaign

    path = write_campaign(tmp_path, """
[campaign]
name = "budget"
max_wall = -1
[[traces]]
generate = "lublin"
jobs = 10
machine_size = 8
[[platforms]]
cores = 8
[[dispatchers]]
name = "fifo"
""")
    with pytest.raises(InputError, match="max_wall must be a number of seconds > 0"):
        load_campaign(path)
