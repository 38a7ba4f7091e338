"""Seed 003's power-cap figures (dispatchlab.report.plots) and the report's power section."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import PathPatch, Rectangle

from campaign_helpers import write_campaign
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.campaign import run_campaign, store
from dispatchlab.experiment.statistics import power_rows
from dispatchlab.report import plots
from dispatchlab.report.html import write_report

NAN = float("nan")


# ------------------------------------------------------------------------ helpers
def _lines(ax, gid: str) -> list:
    return [ln for ln in ax.get_lines() if ln.get_gid() == gid]


def _ys(ax, gid: str = "runs") -> list[list[float]]:
    return [list(np.asarray(ln.get_ydata(), dtype=float)) for ln in _lines(ax, gid)]


def _legend(ax) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None, "no legend"
    return [t.get_text() for t in legend.get_texts()]


def _boxes(ax) -> int:
    return sum(isinstance(p, PathPatch) for p in ax.patches)


def _bars(ax) -> list[Rectangle]:
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def _ticks(ax) -> list[str]:
    return [t.get_text() for t in ax.get_xticklabels()]


SHARES = {"50%": {"a/real": np.array([0.8, 1.1, 0.9]), "b/real": np.array([1.2, NAN])},
          "40%": {"a/real": np.array([0.7])}}
GROUPS = {"a/real": "a", "b/real": "b"}


# ---------------------------------------------------------------------- figures
def test_cap_power_boxes_panel_per_cap_boxes_dots_and_cap_line():
    fig = plots.cap_power_boxes(SHARES, groups=GROUPS)
    assert isinstance(fig, Figure)
    ax50, ax40 = fig.axes
    assert [ax50.get_title(), ax40.get_title()] == ["cap 50%", "cap 40%"]
    assert (_boxes(ax50), _boxes(ax40)) == (2, 1)
    assert _ticks(ax50) == ["a/real\nn=3", "b/real\nn=1"]
    # the runs as dots: the inputs, NaN left out, in input order
    assert _ys(ax50) == [[0.8, 1.1, 0.9], [1.2]]
    assert _ys(ax40) == [[0.7]]
    (cap,) = _lines(ax50, "cap")
    assert list(cap.get_ydata()) == [1.0, 1.0]
    assert _legend(ax40) == ["a", "b"]
    # the dots of one method are spread around its box
    xs = np.asarray(_lines(ax50, "runs")[0].get_xdata())
    assert np.all(np.abs(xs) <= 0.2) and len(set(xs.tolist())) == 3


def test_underuse_boxes_no_cap_line():
    fig = plots.underuse_boxes({"50%": {"a": [0.1, 0.3], "b": [0.0]}})
    (ax,) = fig.axes
    assert _boxes(ax) == 2 and not _lines(ax, "cap")
    assert _ys(ax) == [[0.1, 0.3], [0.0]]
    assert _legend(ax) == ["a", "b"]  # no groups: every label is its own group


def test_cap_panels_wrap_beyond_the_width_limit():
    many = {f"{c}%": {f"m{k}": [0.5] for k in range(12)} for c in (40, 50, 60, 70)}
    fig = plots.cap_power_boxes(many)
    assert len(fig.axes) == 4
    rows = {round(ax.get_position().y0, 3) for ax in fig.axes}
    assert len(rows) > 1  # 4 panels of 12 boxes do not fit in one row


def test_time_above_cap_dots_means_and_own_variant():
    above = {"50%": {"a": np.array([0.0, 0.5, 1.0]), "b": np.array([0.2])}}
    own = {"50%": {"a": np.array([0.0, 0.25, 0.5]), "b": np.array([0.0])}}
    fig = plots.time_above_cap(above, own=own)
    (ax,) = fig.axes
    assert _ys(ax, "runs") == [[0.0, 0.5, 1.0], [0.2]]
    assert _ys(ax, "own") == [[0.0, 0.25, 0.5], [0.0]]
    assert [y[0] for y in _ys(ax, "runs-mean")] == pytest.approx([0.5, 0.2])
    assert [y[0] for y in _ys(ax, "own-mean")] == pytest.approx([0.25, 0.0])
    # own dots sit right of the filled ones
    filled, hollow = _lines(ax, "runs")[0], _lines(ax, "own")[0]
    assert max(filled.get_xdata()) < min(hollow.get_xdata())
    assert _legend(ax) == ["a", "b", "all window time", "own starts only"]
    fig = plots.time_above_cap(above)
    (ax,) = fig.axes
    assert not _lines(ax, "own") and _legend(ax) == ["a", "b"]
    assert _ticks(ax) == ["a", "b"]


def test_turnaround_change_rows_per_cap_columns_per_metric():
    mean = {"50%": {"a": [0.1, -0.05], "b": [0.3]}, "40%": {"a": [0.2]}}
    worst = {"50%": {"a": [0.0, 0.5], "b": [1.0]}, "40%": {"a": [0.4]}}
    fig = plots.turnaround_change(mean, worst, baseline="easy at cap none")
    assert len(fig.axes) == 4
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["cap 50%: mean turnaround", "cap 50%: max turnaround",
                      "cap 40%: mean turnaround", "cap 40%: max turnaround"]
    assert _ys(fig.axes[0]) == [[0.1, -0.05], [0.3]]
    assert _ys(fig.axes[1]) == [[0.0, 0.5], [1.0]]
    assert _ys(fig.axes[3]) == [[0.4]]
    assert "vs easy at cap none" in fig.axes[0].get_ylabel()
    # the zero line
    assert any(list(ln.get_ydata()) == [0.0, 0.0] for ln in fig.axes[0].get_lines())
    assert len(plots.turnaround_change(mean).axes) == 2  # mean only: one column


def test_window_start_bars_mean_height_and_dots():
    shares = {"50%": {"a": [0.2, 0.4], "b": [NAN, 0.1], "c": [NAN]}}
    fig = plots.window_start_bars(shares)
    (ax,) = fig.axes
    heights = [b.get_height() for b in _bars(ax)]
    assert heights == pytest.approx([0.3, 0.1])  # c has no value: no bar
    assert _ys(ax) == [[0.2, 0.4], [0.1]]
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["30%", "10%"]
    assert _ticks(ax) == ["a", "b", "c"]


def test_size_classes_and_names():
    assert plots.size_class_names() == ["1", "2-4", "5-16", "17-64", "65-256", ">256"]
    assert plots.size_classes(np.array([1, 2, 4, 5, 16, 17, 64, 65, 256, 257, 10_000])
                              ).tolist() == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert plots.size_class_names([2, 3]) == ["1-2", "3", ">3"]
    for bad in ([], [0, 4], [4, 4], [8, 4]):
        with pytest.raises(InputError, match="size class bounds"):
            plots.size_class_names(bad)


def test_wait_by_size_class_bar_heights_per_class():
    procs = {"50%": {"x/real": np.array([1, 1, 3, 20, 300]),
                     "y/real": np.array([1, 1, 3, 20, 300])}}
    wait = {"50%": {"x/real": np.array([0.0, 3600.0, 7200.0, 36000.0, NAN]),
                    "y/real": np.array([1800.0, 1800.0, 0.0, 3600.0, 72000.0])}}
    fig = plots.wait_by_size_class(procs, wait, stats=("mean", "max"),
                                   groups={"x/real": "g", "y/real": "g"})
    ax_mean, ax_max = fig.axes
    bars = _bars(ax_mean)
    # x: classes 1, 2-4, 17-64 (the NaN wait of the >256 job is left out); y: all four
    assert [b.get_height() for b in bars] == pytest.approx([0.5, 2.0, 10.0,
                                                            0.5, 0.0, 1.0, 20.0])
    assert [b.get_height() for b in _bars(ax_max)] == pytest.approx([1.0, 2.0, 10.0,
                                                                     0.5, 0.0, 1.0, 20.0])
    # classes without jobs have no bar; bars sit in their class's slot
    centres = [b.get_x() + b.get_width() / 2 for b in bars]
    assert [round(c) for c in centres] == [0, 1, 3, 0, 1, 3, 5]
    assert _ticks(ax_mean)[0] == "1\n2 jobs" and _ticks(ax_mean)[5] == ">256\n0 jobs"
    # one legend entry per method; the methods of one colour group differ by hatching
    assert _legend(ax_max) == ["x/real", "y/real"]
    assert {b.get_hatch() for b in bars[:3]} != {b.get_hatch() for b in bars[3:]}
    assert bars[0].get_facecolor() == bars[3].get_facecolor()
    assert [ax.get_title() for ax in fig.axes] == ["cap 50%: mean wait", "cap 50%: max wait"]


def test_power_figures_refuse_bad_input():
    with pytest.raises(InputError, match="at least one cap"):
        plots.cap_power_boxes({})
    with pytest.raises(InputError, match="at least one cap"):
        plots.time_above_cap({"50%": {}})
    with pytest.raises(InputError, match="one entry per wait"):
        plots.wait_by_size_class({"c": {"m": [1, 2]}}, {"c": {"m": [0.0]}})
    with pytest.raises(InputError, match="'mean' and / or 'max'"):
        plots.wait_by_size_class({"c": {"m": [1]}}, {"c": {"m": [0.0]}}, stats=("p99",))


# ----------------------------------------------------------------------- report
POWER_CAMPAIGN = """
[campaign]
name = "{name}"
seeds = {seeds}
store_series = false
store_jobs = {store_jobs}

[[traces]]
generate = "lublin"
machine_size = 256
jobs = 150

[[platforms]]
builtin = "marconi100-nodes"

[power]
synth_seed = 0
caps = ["none", 0.5]

[[power_predictors]]
name = "real"

[[dispatchers]]
name = "easy"
[[dispatchers]]
name = "easy-pc"
params = {{ check = "gaussian99" }}
"""

PLAIN_CAMPAIGN = """
[campaign]
name = "plain"
seeds = [0]
store_series = false

[[traces]]
generate = "lublin"
machine_size = 256
jobs = 150

[[platforms]]
cores = 256

[[dispatchers]]
name = "fifo"
[[dispatchers]]
name = "easy"
"""

POWER_FIGURES = ["power in the cap window", "time above the cap", "under-use of the cap",
                 "turnaround change", "jobs started in window", "wait by job size class"]


class _InProcess:
    """A campaign backend running the specs in this process (no worker start-up)."""

    describe = "in process"

    def execute(self, specs):
        from dispatchlab.experiment.campaign.worker import execute_run

        for spec in specs:
            yield {**execute_run(spec), "attempts": 1}


@pytest.fixture(scope="module")
def power_db(tmp_path_factory) -> Path:
    """One database: a power campaign (2 seeds, jobs stored), one without stored jobs
    (another seed: runs of equal content share their key across campaigns) and a
    campaign without power."""
    folder = tmp_path_factory.mktemp("power_report")
    db = folder / "results.duckdb"
    for name, text in (
            ("power", POWER_CAMPAIGN.format(name="power", seeds="[0, 1]", store_jobs="true")),
            ("nojobs", POWER_CAMPAIGN.format(name="nojobs", seeds="[2]",
                                             store_jobs="false")),
            ("plain", PLAIN_CAMPAIGN)):
        report = run_campaign(write_campaign(folder, text, f"{name}.toml"),
                              backend=_InProcess(), database=db)
        assert report.failed == 0 and report.executed > 0
    return db


@pytest.fixture
def no_png(monkeypatch):
    """Figures are built but not rendered (rendering dominates the report's time; the
    structure tests need the figures' presence, not their pixels)."""
    import dispatchlab.report.html

    monkeypatch.setattr(dispatchlab.report.html, "_png", lambda fig: "")


class _Page(HTMLParser):
    """Image alts, headings, and the rows of each table by its class."""

    def __init__(self) -> None:
        super().__init__()
        self.alts: list[str] = []
        self.h2: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._rows: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self._h2: list[str] | None = None
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.alts.append(a.get("alt") or "")
        elif tag == "h2":
            self._h2 = []
        elif tag == "table":
            self._rows = self.tables.setdefault(a.get("class") or a.get("id") or "", [])
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._rows is not None:
            self._rows[-1].append("".join(self._cell))
            self._cell = None
        elif tag == "table":
            self._rows = None
        elif tag == "h2" and self._h2 is not None:
            self.h2.append("".join(self._h2))
            self._h2 = None

    def handle_data(self, data):
        self.text.append(data)
        for buf in (self._cell, self._h2):
            if buf is not None:
                buf.append(data)


def _page(path: Path) -> tuple[str, _Page]:
    text = path.read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    return text, page


def _pct(v) -> str:
    return "-" if v is None else f"{v * 100:.1f} %"


def test_report_power_section(power_db, tmp_path, monkeypatch):
    monkeypatch.setattr("dispatchlab.report.html.DPI", 40)  # rendered, small: faster
    text, page = _page(write_report(power_db, tmp_path / "rep",
                                    runs_filter="campaign = 'power'"))
    assert "Power caps (Carastan-Santos et al. 2024)" in page.h2
    # after the summary, before the per-trace sections
    assert page.h2.index("Summary") < page.h2.index("Power caps (Carastan-Santos et al. 2024)") < \
        next(k for k, h in enumerate(page.h2) if h.startswith("Trace"))
    head, *rows = page.tables["stats power"]
    assert head[:4] == ["cap", "dispatcher", "power predictor", "runs"]
    pc = "easy-pc(check=gaussian99)"
    # one row per (cap, dispatcher), caps in order (none first)
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("none", "easy", "real", "2"), ("none", pc, "real", "2"),
        ("50%", "easy", "real", "2"), ("50%", pc, "real", "2")]
    # the values are power_rows' means (from the stored runs)
    con = store.open_read(power_db)
    try:
        runs, _ = store.select_runs(con, "campaign = 'power'")
    finally:
        con.close()
    expected = {(r["cap"], r["dispatcher"]): r for r in power_rows(runs)}
    col = {name: k for k, name in enumerate(head)}
    for r in rows:
        e = expected[(r[0], r[1])]
        assert r[col["power / cap"]] == _pct(e["cap_mean_share"])
        assert r[col["under-use"]] == _pct(e["cap_mean_underuse"])
        assert r[col["with baseline"]] == str(e["baselined"]) == "2"
    capped = next(r for r in rows if r[:2] == ["50%", pc])
    assert capped[col["power / cap"]] not in ("-", "0.0 %")
    assert re.fullmatch(r"[+-]\d+\.\d %", capped[col["mean turnaround change"]])
    assert rows[0][col["power / cap"]] == "-"  # no cap: no window metrics
    # the six figures, each once (one trace x platform)
    for alt in POWER_FIGURES:
        assert page.alts.count(alt) == 1, alt
    assert all(src.startswith("data:image/png;base64,")
               for src in re.findall(r'<img alt="[^"]*" src="([^"]{0,30})', text))


def test_report_power_section_without_stored_jobs(power_db, tmp_path, no_png):
    _text, page = _page(write_report(power_db, tmp_path / "rep",
                                     runs_filter="campaign = 'nojobs'"))
    assert "Power caps (Carastan-Santos et al. 2024)" in page.h2
    assert len(page.tables["stats power"]) == 1 + 4
    assert "wait by job size class" not in page.alts
    assert all(page.alts.count(a) == 1 for a in POWER_FIGURES[:-1])
    body = re.sub(r"\s+", " ", "".join(page.text))
    assert "No stored jobs for the runs with a cap" in body


def test_report_without_power_has_no_power_section(power_db, tmp_path, no_png):
    text, page = _page(write_report(power_db, tmp_path / "rep",
                                    runs_filter="campaign = 'plain'"))
    assert "Power caps" not in text
    assert "stats power" not in page.tables
    assert not set(POWER_FIGURES) & set(page.alts)
    assert page.h2[0] == "Summary" and page.h2[1].startswith("Trace")
