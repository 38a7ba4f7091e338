"""Which jobs count: ``jobs.parquet`` and the campaign's jobs table carry per-job
slowdowns, a ``measured`` flag (the jobs the run's metrics count: not lead-in jobs of a
slice, not hot-start dummies) and a ``hot_start`` flag; the report's per-job figures
use the measured jobs only."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from campaign_helpers import connect, synthetic_trace, write_campaign
from dispatchlab import Platform, Simulation
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.experiment.campaign import run_campaign
from dispatchlab.metrics import Measure
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.predict import make_predictor
from dispatchlab.run.outputs import write_result
from dispatchlab.workload.synthetic import generate_synthetic


def test_jobs_parquet_has_the_per_job_slowdowns_and_the_measured_flag(tmp_path):
    # jobs of up to 64 cores on 32: the wider ones are rejected (null slowdowns)
    jobs = generate_synthetic(300, cores=64, seed=4)
    result = Simulation(Platform.pooled(32), jobs, make_dispatcher("easy"),
                        make_predictor("walltime")).run()
    summary = write_result(result, tmp_path, tau=10.0, measure=Measure.by_index(30, 300))
    table = pq.read_table(tmp_path / "jobs.parquet")
    status = np.asarray(table["status"].cast("string").to_pylist(), dtype=object)
    rejected = status == "rejected"
    assert rejected.any() and not rejected.all()
    wait = table["wait"].to_numpy()
    run = table["run"].to_numpy()
    sld = table["slowdown"].to_numpy(zero_copy_only=False)
    bsld = table["bounded_slowdown"].to_numpy(zero_copy_only=False)
    assert table["slowdown"].null_count == table["bounded_slowdown"].null_count == \
        rejected.sum()
    ran = ~rejected
    # DESIGN's definitions: slowdown = (wait + run) / max(run, 1); bounded slowdown =
    # max((wait + run) / max(run, tau), 1) with tau = 10 s
    np.testing.assert_allclose(sld[ran], (wait[ran] + run[ran]) / np.maximum(run[ran], 1))
    np.testing.assert_allclose(bsld[ran], np.maximum(
        (wait[ran] + run[ran]) / np.maximum(run[ran], 10), 1))
    short = ran & (run < 10) & (wait > 0)
    assert short.any()  # the threshold matters for these
    assert (bsld[short] < sld[short]).all()
    # measured: rows 30.. (the window), as the summary counts them
    measured = table["measured"].to_numpy(zero_copy_only=False)
    assert measured.sum() == summary["measured_jobs"] == 270
    assert not measured[:30].any() and measured[30:].all()
    assert not table["hot_start"].to_numpy(zero_copy_only=False).any()
    # the summary's mean bsld is the mean over the measured jobs that ran
    assert np.mean(bsld[measured & ran]) == pytest.approx(summary["mean_bsld"])


def test_hot_start_dummies_are_flagged_and_not_measured(tmp_path):
    from dispatchlab.power.eurora_synth import eurora_instance
    from dispatchlab.sim.hotstart import add_hot_start

    platform = eurora_platform()
    jobs = eurora_instance(24, 600, "burst", seed=0, burst_size=12)
    jobs, pinned = add_hot_start(jobs, platform, 0.25)
    result = Simulation(platform, jobs, make_dispatcher("bf"), pinned=pinned).run()
    summary = write_result(result, tmp_path)
    table = pq.read_table(tmp_path / "jobs.parquet")
    hot = table["hot_start"].to_numpy(zero_copy_only=False)
    measured = table["measured"].to_numpy(zero_copy_only=False)
    # 16 dummies beyond the 24 jobs of the workload, flagged, never measured
    assert len(table) == 40 and summary["total_jobs"] == 24
    assert hot.sum() == summary["hot_start_jobs"] == 16
    assert not (hot & measured).any() and measured.sum() == 24


@pytest.fixture(scope="module")
def sliced_db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sliced")
    trace = synthetic_trace(folder, 600, seed=3, cores=64)
    path = write_campaign(folder, f"""
[campaign]
seeds = [1]
[[traces]]
label = "syn"
path = "{trace}"
slices = {{ count = 6, jobs = 40, lead_in = 15 }}
[[platforms]]
cores = 64
[[dispatchers]]
name = "easy"
""")
    report = run_campaign(path, workers=1)
    assert report.executed == 6 and report.failed == 0
    return folder / "results.duckdb"


def test_the_jobs_table_flags_the_lead_in_jobs(sliced_db):
    con = connect(sliced_db)
    try:
        rows = con.execute("SELECT count(*), count(*) FILTER (WHERE measured), "
                           "count(*) FILTER (WHERE hot_start) FROM jobs").fetchall()
        per_run = con.execute("SELECT r.jobs, count(*) FILTER (WHERE j.measured AND "
                              "j.status <> 'rejected') FROM runs r JOIN jobs j USING "
                              "(run_key) GROUP BY r.run_key, r.jobs").fetchall()
    finally:
        con.close()
    # 6 slices of 15 lead-in + 40 measured jobs
    assert rows == [(6 * 55, 6 * 40, 0)]
    assert all(jobs == measured for jobs, measured in per_run)


def test_report_box_plots_count_the_measured_jobs(sliced_db, tmp_path, monkeypatch):
    from dispatchlab.report import plots
    from dispatchlab.report.html import write_report

    seen = []
    original = plots.slowdown_boxes

    def spy(values, **kwargs):
        seen.append({k: len(v) for k, v in values.items()})
        return original(values, **kwargs)

    monkeypatch.setattr(plots, "slowdown_boxes", spy)
    text = write_report(sliced_db, tmp_path / "rep").read_text()
    # n = 6 x 40 in every box (the 6 x 15 lead-in jobs left out), as the summaries count
    assert seen and all(counts == {"easy-walltime": 240} for counts in seen)
    assert "measured jobs only" in text
