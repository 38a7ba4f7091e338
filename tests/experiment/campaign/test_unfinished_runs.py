"""Unfinished runs (stopped at their wall-clock budget) are left out of every summary,
statistic and figure by default and listed with their job counts; with
``--include-unfinished`` they are used and marked."""

from __future__ import annotations

import re

import numpy as np
import pytest
from click.testing import CliRunner

from campaign_helpers import write_campaign
from dispatchlab.cli import app
from dispatchlab.experiment.campaign import run_campaign, select_runs, store
from dispatchlab.experiment.statistics import run_statistics
from dispatchlab.report.html import write_report
from dispatchlab.run.outputs import run_summary
from dispatchlab.workload.jobs import JobTable
from dispatchlab.workload.swf import write_swf

SLOW_FIFO = ("import time\nfrom dispatchlab.dispatch import FIFO\n\n\n"
             "class SlowFIFO(FIFO):\n    name = 'slow-fifo'\n\n"
             "    def dispatch(self, view):\n        time.sleep(0.02)\n"
             "        return super().dispatch(view)\n")


@pytest.fixture(scope="module")
def budget_db(tmp_path_factory):
    """Two samples of 120 jobs (seeds 1, 2) of a 1-core trace (a job every 10 s, 15 s
    each) under ``fifo`` (finishes) and a FIFO slowed to 20 ms a pass (stops at its
    0.3 s budget)."""
    folder = tmp_path_factory.mktemp("budget")
    n = 240
    trace = folder / "slow.swf"
    write_swf(JobTable.from_arrays(submit=np.arange(n) * 10, run=np.full(n, 15),
                                   units=np.ones(n, dtype=np.int64),
                                   requested_time=np.full(n, 15)), trace)
    (folder / "slow_fifo.py").write_text(SLOW_FIFO)
    path = write_campaign(folder, f"""
[campaign]
name = "budget"
seeds = [1, 2]
max_wall = 0.3
[[traces]]
label = "t"
path = "{trace}"
sample_jobs = 120
[[platforms]]
label = "one"
cores = 1
[[dispatchers]]
name = "{folder / 'slow_fifo.py'}:SlowFIFO"
label = "slow"
[[dispatchers]]
name = "fifo"
""")
    report = run_campaign(path, workers=1)
    assert report.executed == 4 and report.failed == 0
    db = folder / "results.duckdb"
    con = store.open_read(db)
    try:
        runs, _ = select_runs(con)
    finally:
        con.close()
    finished = {(r["dispatcher"], r["finished"]) for r in runs}
    assert finished == {("slow", 0), ("fifo", 1)}  # the fixture does what it says
    return db


def _runs(db):
    con = store.open_read(db)
    try:
        return select_runs(con)[0]
    finally:
        con.close()


def test_statistics_leave_unfinished_runs_out(budget_db):
    runs = _runs(budget_db)
    used, left = store.split_unfinished(runs)
    assert sorted(r["dispatcher"] for r in left) == ["slow", "slow"]
    assert {r["dispatcher"] for r in used} == {"fifo"}
    (section,) = run_statistics(runs, metrics=["mean_wait"])
    assert [g.dispatcher for g in section.groups] == ["fifo"]
    (section,) = run_statistics(runs, metrics=["mean_wait"], include_unfinished=True)
    assert sorted(g.dispatcher for g in section.groups) == ["fifo", "slow"]
    assert {r["config"]: r["unfinished"] for r in section.rows} == {
        "fifo-walltime": 0, "slow-walltime": 2}


def test_results_summary_lists_unfinished_runs_and_includes_them_on_request(budget_db):
    runner = CliRunner()
    res = runner.invoke(app, ["results", "summary", str(budget_db), "--metric",
                              "mean_wait"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    rows = [line for line in res.output.splitlines() if "-walltime" in line]
    assert len(rows) == 1 and "fifo-walltime" in rows[0]
    assert "2 unfinished runs left out" in res.output
    # each listed with its job counts: "t/slice=K...: N of 120 jobs ended"
    listed = re.findall(r"slow/walltime/seed=\S+: (\d+) of 120 jobs ended", res.output)
    assert len(listed) == 2 and all(0 < int(k) < 120 for k in listed)
    res = runner.invoke(app, ["results", "summary", str(budget_db), "--metric",
                              "mean_wait", "--include-unfinished"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "slow-walltime" in res.output and "2 (2 unfinished)" in res.output
    assert "left out" not in res.output


def test_report_leaves_unfinished_runs_out_and_lists_them(budget_db, tmp_path):
    text = write_report(budget_db, tmp_path / "rep").read_text()
    body = re.sub(r"<[^>]+>", " ", text)
    assert "2 unfinished runs left out" in body
    assert len(re.findall(r"slow/walltime/seed=\S+: \d+ of 120 jobs ended", body)) == 2
    summary = body[body.index("Summary"):body.index("All runs")]
    assert "fifo-walltime" in summary and "slow-walltime" not in summary
    runs_table = text[text.index("All runs"):]
    assert '<td class="text">slow</td>' not in runs_table
    assert runs_table.count('<td class="text">fifo</td>') == 2
    text = write_report(budget_db, tmp_path / "rep2", include_unfinished=True).read_text()
    body = re.sub(r"<[^>]+>", " ", text)
    assert "unfinished runs left out" not in body
    summary = body[body.index("Summary"):body.index("All runs")]
    assert "slow-walltime" in summary and "2 (2 unfinished)" in summary
    assert len(re.findall(r"unfinished \(\d+ of 120 jobs ended\)", body)) == 2
    assert text.count('<tr class="unfinished">') == 2


def test_an_unfinished_run_keeps_its_warning(budget_db, tmp_path):
    import json

    runs = _runs(budget_db)
    kept = {(r["dispatcher"], r["workload"]): json.loads(r["warnings"]) for r in runs}
    for (dispatcher, workload), warnings in kept.items():
        # a job every 10 s, 15 s each, on one core: 120 x 15 s of work over the 1,205 s
        # from the first submission (0) to the last end without waiting (1,190 + 15):
        # an estimated load of 1.49 for both; the unfinished run's is that of all its
        # jobs, not only of those that ended
        assert warnings[0].startswith("offered load on this platform is about 1.49")
        if dispatcher == "slow":
            assert warnings[1:] == [w for w in warnings if w.startswith("NOT FINISHED")]
            assert len(warnings) == 2 and warnings[0] == kept["fifo", workload][0]
        else:
            assert len(warnings) == 1
    for r in runs:
        assert json.loads(r["warnings"]) == json.loads(r["summary"])["warnings"]
    text = write_report(budget_db, tmp_path / "rep", include_unfinished=True).read_text()
    assert text.count("warning: NOT FINISHED") == 2


def test_an_unfinished_slice_keeps_its_measurement_window():
    """A slice's window is rows of the table the run was given: an unfinished run,
    which keeps only the jobs that ended, measures the same jobs among those (before,
    its summary failed: "the table has only N jobs")."""
    import time

    from dispatchlab.dispatch import FIFO
    from dispatchlab.metrics import Measure
    from dispatchlab.platform import Platform
    from dispatchlab.sim import Simulation

    class Slow(FIFO):
        def dispatch(self, view):
            time.sleep(0.02)
            return super().dispatch(view)

    n = 120
    jobs = JobTable.from_arrays(submit=np.arange(n) * 10, run=np.full(n, 15),
                                units=np.ones(n, dtype=np.int64),
                                requested_time=np.full(n, 15))
    result = Simulation(Platform.pooled(1), jobs, Slow(), max_wall=0.5).run()
    ended = result.extra["jobs_done"]
    assert not result.finished and 5 < ended < n
    summary = run_summary(result, measure=Measure.by_index(5, 100))
    # FIFO on one core: the jobs that ended are rows 0 .. ended-1; measured: 5 .. ended-1
    assert summary["measured_jobs"] == summary["jobs"] == ended - 5
    assert result.measured_rows(Measure.by_index(5, 100)).sum() == ended - 5
    assert summary["warnings"][-1].startswith("NOT FINISHED")
