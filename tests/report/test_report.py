"""dispatchlab.report.html: a static HTML report from a real results database."""

from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.experiment.campaign import store
from dispatchlab.experiment.campaign.worker import jobs_table, series_table
from dispatchlab.experiment.provenance import run_code_hash
from dispatchlab.metrics import Measure
from dispatchlab.platform import Platform
from dispatchlab.report.html import write_report
from dispatchlab.run.outputs import run_summary

TAU = 10.0


def _outcome(key: str, dispatcher: str, predictor: str, platform: Platform, plat_label: str,
             *, seed: int = 0, store_rows: bool = True, campaign: str = "test",
             code_hash: str | None = None, extra: dict | None = None) -> dict:
    from dispatchlab.dispatch import make_dispatcher
    from dispatchlab.predict import make_predictor
    from dispatchlab.sim import Simulation
    from dispatchlab.workload.synthetic import generate_synthetic

    jobs = generate_synthetic(250, cores=64, seed=seed, load=1.1)
    result = Simulation(platform, jobs, make_dispatcher(dispatcher),
                        make_predictor(predictor)).run()
    measure = Measure()
    series, lo, hi = series_table(result, measure)
    config = {"dispatcher": {"name": dispatcher, "params": {}},
              "predictor": {"name": predictor, "params": {}}, "seed": seed,
              "note": "<script>alert(1)</script>", **(extra or {})}
    spec = {"run_key": key, "campaign": campaign, "trace": {"label": "synth", "path": None},
            "platform": {"label": plat_label},
            "dispatcher": {"label": dispatcher, "name": dispatcher},
            "predictor": {"label": predictor, "name": predictor}, "seed": seed,
            "repetition": 0, "tau": TAU, "overrun": "run", "config": config,
            "trace_sha256": "0" * 64, "version": store.package_version(),
            "code_hash": code_hash or run_code_hash(dispatcher, predictor),
            "workload": f"seed={seed}"}
    return {"spec": spec, "status": "done", "summary": run_summary(result, tau=TAU),
            "finished_at": dt.datetime(2024, 1, 1), "cores": 64,
            "node_level": not platform.is_pooled, "worker": "test:1",
            "nodes": None if platform.is_pooled else len(platform.capacity_matrix()),
            "wall_seconds": 0.1, "simulate_seconds": result.wall_seconds,
            "jobs": jobs_table(result, TAU) if store_rows else None,
            "series": series if store_rows else None,
            "series_start": lo, "series_end": hi}


@pytest.fixture(scope="module")
def results_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "results.duckdb"
    con = store.open_write(path)
    pool = Platform.pooled(64)
    for d in ("fifo", "easy"):
        for p in ("walltime", "real"):
            store.store_outcome(con, _outcome(f"{d}-{p}-pool", d, p, pool, "pool64"))
    # a second seed of one label (pooled in boxes, separate in series figures)
    store.store_outcome(con, _outcome("easy-walltime-pool-s1", "easy", "walltime", pool,
                                      "pool64", seed=1))
    # a run whose jobs and series were not stored
    store.store_outcome(con, _outcome("easy-real-pool-s1", "easy", "real", pool, "pool64",
                                      seed=1, store_rows=False))
    # node-level platform (a second resource makes placement simulated)
    store.store_outcome(con, _outcome("easy-walltime-nodes", "easy", "walltime",
                                      Platform.homogeneous(8, 8, mem=1), "nodes8x8"))
    failed = _outcome("broken", "fifo", "walltime", pool, "pool64", store_rows=False)
    failed.update(status="failed", summary=None, error="ValueError: <boom> & friends",
                  series_start=None, series_end=None)
    store.store_outcome(con, failed)
    con.close()
    return path


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.imgs: list[dict[str, str | None]] = []
        self.rows: list[list[str]] = []
        self.stats: list[list[str]] = []
        self.partitions: list[list[str]] = []
        self._target = self.rows
        self.in_body = False
        self._cell: list[str] | None = None
        self.text: list[str] = []
        self.tags: list[tuple[str, list]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        if tag == "img":
            self.imgs.append(dict(attrs))
        if tag == "table":
            # rows: the runs table; partitions: the per-partition tables; stats: the
            # statistics tables at the top
            a = dict(attrs)
            self._target = (self.rows if a.get("id") == "runs" else self.partitions
                            if "partitions" in (a.get("class") or "") else self.stats)
        if tag == "tbody":
            self.in_body = True
        if tag == "tr" and self.in_body:
            self._target.append([])
        if tag == "td" and self.in_body:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._target[-1].append("".join(self._cell))
            self._cell = None
        if tag == "tbody":
            self.in_body = False

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _parse(path: Path) -> tuple[str, _Page]:
    text = path.read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    return text, page


def test_report_full(results_db, tmp_path):
    index = write_report(results_db, tmp_path / "rep")
    assert index == tmp_path / "rep" / "index.html"
    text, page = _parse(index)
    assert "http://" not in text and "https://" not in text
    assert "<script>alert(1)</script>" not in text  # config JSON escaped
    assert "&lt;script&gt;" in text
    assert all(i["src"].startswith("data:image/png;base64,") for i in page.imgs)
    alts = [i["alt"] for i in page.imgs]
    # pool group: sld, sld by class, bsld, bsld by class, prediction errors, queue dist,
    # utilization, queue over time = 8; nodes group: 8; Gantt: 1
    assert len(alts) == 17
    assert alts.count("Gantt chart") == 1
    assert alts.count("prediction errors") == 2
    assert alts.count("waiting jobs distribution") == 2
    # table: one row per run, done and failed
    assert len(page.rows) == 8
    keys = [r[0] for r in page.rows]
    assert set(keys) == {"fifo-walltime-pool", "fifo-real-pool", "easy-walltime-pool",
                         "easy-real-pool", "easy-walltime-pool-s1", "easy-real-pool-s1",
                         "easy-walltime-nodes", "broken"}
    broken = next(r for r in page.rows if r[0] == "broken")
    assert "failed" in broken and "ValueError: <boom> & friends" in broken
    body = "".join(page.text)
    # easy-real's seed-1 run stored no series: its configuration is drawn from seed 0
    assert "no stored series" not in body
    assert "No stored jobs" not in body  # easy-real keeps its seed-0 jobs
    assert "7 done, 1 failed" in body
    assert "Trace synth, platform pool64 (pooled 64 cores; 4 configurations, 6 runs)" in body
    assert "Trace synth, platform nodes8x8 (8 nodes, 64 cores; 1 configurations" in body
    # the statistics at the top: one row per configuration with its number of runs
    # (nodes8x8 first: sections in trace, platform order; within a section the
    # configurations of one predictor together, as they are paired with the baseline)
    assert [(r[0], r[1]) for r in page.stats] == [
        ("easy-walltime", "1"), ("easy-real", "2"), ("fifo-real", "1"),
        ("easy-walltime", "2"), ("fifo-walltime", "1")]
    assert text.index("<h2>Summary</h2>") < text.index("<img")
    # the default Gantt run is the first done run in (trace, platform, label) order
    assert "Run easy-walltime-nodes" in body
    assert "nodes, from the simulated placement" in body


def test_report_filter_node_level_gantt_and_window(results_db, tmp_path):
    index = write_report(results_db, tmp_path / "rep",
                         runs_filter="platform = 'nodes8x8' OR status = 'failed'",
                         gantt_run="easy-walltime-nodes", gantt_window=(0, 40_000))
    text, page = _parse(index)
    assert len(page.rows) == 2
    assert "nodes, from the simulated placement" in text
    assert "[0, 40,000) s" in "".join(page.text)
    assert len(page.imgs) == 9
    # pooled run in its own filter: core lanes; limited series figures
    index = write_report(results_db, tmp_path / "rep2", runs_filter="platform = 'pool64'",
                         max_runs_per_figure=2)
    text, page = _parse(index)
    assert "core lanes assigned after the run" in text
    assert "first 2 of 4 configurations" in "".join(page.text)


def test_report_without_any_jobs_says_so(results_db, tmp_path):
    index = write_report(results_db, tmp_path / "rep", runs_filter="run_key = 'easy-real-pool-s1'")
    _text, page = _parse(index)
    body = re.sub(r"\s+", " ", "".join(page.text))
    assert page.imgs == []
    assert "No stored jobs" in body and "no stored series" in body
    assert "No selected run has stored jobs: no Gantt chart." in body


def test_report_input_errors(results_db, tmp_path):
    with pytest.raises(InputError, match="bad run condition 'dispatcher = '"):
        write_report(results_db, tmp_path / "x", runs_filter="dispatcher = ")
    with pytest.raises(InputError, match="no_such_column"):
        write_report(results_db, tmp_path / "x", runs_filter="no_such_column = 1")
    with pytest.raises(InputError, match="no run matches"):
        write_report(results_db, tmp_path / "x", runs_filter="seed > 100")
    with pytest.raises(InputError, match="not among the selected runs"):
        write_report(results_db, tmp_path / "x", gantt_run="nope")
    with pytest.raises(InputError, match="no stored jobs"):
        write_report(results_db, tmp_path / "x", gantt_run="broken")
    with pytest.raises(InputError, match="T0 < T1"):
        write_report(results_db, tmp_path / "x", gantt_window=(5, 5))
    with pytest.raises(InputError, match="no such results database"):
        write_report(tmp_path / "missing.duckdb", tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_report_refuses_newer_database(tmp_path):
    path = tmp_path / "new.duckdb"
    con = store.open_write(path)
    con.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(InputError, match="schema version 999"):
        write_report(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_report_leaves_out_outdated_runs_and_never_pools_two_selections(tmp_path):
    """A run made by other code is listed, not used; two campaigns whose runs carry the
    same labels but different job selections get separate, distinguishable rows."""
    path = tmp_path / "mixed.duckdb"
    con = store.open_write(path)
    pool = Platform.pooled(64)
    for seed in (0, 1, 2):
        store.store_outcome(con, _outcome(f"a-{seed}", "easy", "walltime", pool, "pool64",
                                          seed=seed, campaign="fixed-slice",
                                          extra={"trace": {"jobs": [0, 250]}}))
        store.store_outcome(con, _outcome(f"b-{seed}", "easy", "walltime", pool, "pool64",
                                          seed=seed + 10, campaign="sampled",
                                          extra={"trace": {"sample_jobs": 250}}))
    store.store_outcome(con, _outcome("old", "easy", "walltime", pool, "pool64", seed=5,
                                      campaign="fixed-slice", code_hash="0" * 20,
                                      extra={"trace": {"jobs": [0, 250]}}))
    con.close()
    _text, page = _parse(write_report(path, tmp_path / "rep"))
    body = re.sub(r"\s+", " ", "".join(page.text))
    assert "1 outdated runs left out" in body and "old" in body
    assert "old" not in [r[0] for r in page.rows]  # not in the runs table either
    labels = sorted(r[0] for r in page.stats)
    # one row per selection, 3 runs each, labels naming the campaign that differs
    assert labels == ["easy-walltime [campaign=fixed-slice, trace.jobs=[0,250]]",
                      "easy-walltime [campaign=sampled, trace.sample_jobs=250]"]
    assert [r[1] for r in page.stats] == ["3", "3"]
    # 3 runs: the mean wait has a Student's t interval "mean [low, high] t"
    assert all(re.search(r"\[-?[\d,.]+, [\d,.]+\] t$", r[2]) for r in page.stats)
    # with the outdated run included, it is used (4 runs in the fixed-slice row)
    _text, page = _parse(write_report(path, tmp_path / "rep2", include_outdated=True))
    assert sorted(r[1] for r in page.stats) == ["3", "4"]
