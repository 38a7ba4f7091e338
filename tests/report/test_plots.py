"""dispatchlab.report.plots: figures from small hand-made inputs, core-lane assignment."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from dispatchlab.core.errors import InputError
from dispatchlab.metrics import StepFunction
from dispatchlab.report import plots


def _boxes(ax) -> int:
    """Box patches drawn by bxp (patch_artist=True gives PathPatch boxes)."""
    from matplotlib.patches import PathPatch

    return sum(isinstance(p, PathPatch) for p in ax.patches)


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=50)
    return buf.getvalue()


def _rectangles(fig: Figure) -> int:
    ax = fig.axes[0]
    return sum(len(c.get_paths()) for c in ax.collections if isinstance(c, PolyCollection))


def _step(times, values, end) -> StepFunction:
    return StepFunction(np.asarray(times, np.int64), np.asarray(values), end)


def _legend_texts(ax) -> list[str]:
    legend = ax.get_legend()
    assert legend is not None, "no legend"
    return [t.get_text() for t in legend.get_texts()]


def _box_faces(ax) -> list[tuple[float, ...]]:
    from matplotlib.patches import PathPatch

    return [tuple(p.get_facecolor()) for p in ax.patches if isinstance(p, PathPatch)]


# ------------------------------------------------------------------------ boxes
def test_slowdown_boxes_one_box_per_label_log_scale_nan_ignored():
    values = {"fifo-W": np.array([1.0, 2.0, np.nan, 8.0]),
              "fifo-R": np.array([1.0, 1.5, 3.0]),
              "easy-W": np.array([np.nan, np.nan])}
    fig = plots.slowdown_boxes(values, title="T")
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    assert ax.get_yscale() == "log"
    assert _boxes(ax) == 2  # easy-W has no finite value: no box, but a tick
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == ["fifo-W\nn=3", "fifo-R\nn=3", "easy-W\nn=0"]
    assert ax.get_title() == "T"
    assert ax.get_ylabel() == "slowdown"
    # no groups: every label its own colour, and its own legend entry
    faces = [tuple(p.get_facecolor()) for p in ax.patches]
    assert faces[0] != faces[1]
    assert _legend_texts(ax) == ["fifo-W", "fifo-R", "easy-W"]
    _png(fig)


def test_slowdown_boxes_per_class_three_panels():
    values = {"fifo-W": np.array([1.0, 2.0, 30.0, 4.0]), "easy-W": np.array([1.0, 5.0, 2.0, 1.0])}
    classes = {"fifo-W": np.array(["short", "short", "long", None], dtype=object),
               "easy-W": np.array([0, 1, 1, 2])}
    fig = plots.slowdown_boxes(values, classes=classes, ylabel="bounded slowdown")
    assert [ax.get_title() for ax in fig.axes] == ["short jobs", "medium jobs", "long jobs"]
    assert all(ax.get_yscale() == "log" for ax in fig.axes)
    assert [_boxes(ax) for ax in fig.axes] == [2, 1, 2]
    short_ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert short_ticks == ["fifo-W\nn=2", "easy-W\nn=1"]
    with pytest.raises(InputError):
        plots.slowdown_boxes(values, classes={"fifo-W": np.array([0]), "easy-W": np.array([0])})
    with pytest.raises(InputError):
        plots.slowdown_boxes({})


def test_queue_length_distribution_excludes_all_empty_time():
    a = _step([0, 10, 20, 100], [0, 2, 0, 0], 200)  # queue 2 on [10, 20)
    b = _step([0, 10, 30], [0, 4, 0], 200)  # queue 4 on [10, 30)
    fig = plots.queue_length_distribution({"fifo-W": a, "easy-W": b})
    (ax,) = fig.axes
    assert ax.get_yscale() == "log" and _boxes(ax) == 2
    # kept time: [10, 30) = 20 s (all-empty time left out)
    assert "0.0 hours" in ax.get_title()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["fifo-W", "easy-W"]
    _png(fig)


def test_over_time_overlaid_in_one_panel_and_binning():
    f = _step(np.arange(0, 10_000, 2), np.arange(5000) % 7, 10_000)
    g = _step([0, 86_400], [1.0, 0.5], 4 * 86_400)
    fig = plots.over_time({"a": f, "b": g, "c": _step([], [], 0)}, ylabel="utilization",
                          title="Utilization", max_points=100)
    (ax,) = fig.axes  # one panel, the series overlaid
    assert ax.get_title() == "Utilization"
    assert "days from the series start" in ax.get_xlabel()
    steps = ax.patches  # ax.stairs adds a StepPatch per non-empty series
    assert len(steps) == 2
    # a is binned: 100 bins of its exact time-weighted mean; b is drawn as is
    assert len(steps[0].get_data().values) == 100
    assert steps[1].get_data().values.tolist() == [1.0, 0.5]
    # one legend entry per line, in label order, saying which are binned or empty
    texts = _legend_texts(ax)
    assert texts[0].startswith("a (mean per") and texts[1] == "b"
    assert texts[2] == "c (no data)"
    _png(fig)


def test_binned_is_exact_time_weighted_mean():
    f = _step([0, 10, 30], [1.0, 3.0, 0.0], 40)
    means = plots._binned(f, np.array([0.0, 20.0, 40.0]))
    assert means == pytest.approx([(10 + 30) / 20, (30 + 0) / 20])


def test_prediction_errors_ratio_and_hours():
    est = {"easy-W": np.array([3600, 7200, -1]), "easy-D": np.array([1800, 3600, 10])}
    act = {"easy-W": np.array([1800, 7200, 50]), "easy-D": np.array([3600, 3600, 10])}
    fig = plots.prediction_errors(est, act)
    ratio_ax, error_ax, scatter_ax = fig.axes
    assert scatter_ax.get_xscale() == "log" and scatter_ax.get_yscale() == "log"
    assert ratio_ax.get_yscale() == "log" and error_ax.get_yscale() == "symlog"
    assert "hours" in error_ax.get_ylabel()
    assert [t.get_text() for t in ratio_ax.get_xticklabels()] == ["easy-W\nn=2", "easy-D\nn=3"]
    with pytest.raises(InputError):
        plots.prediction_errors({"a": np.array([1])}, {"a": np.array([1, 2])})
    with pytest.raises(InputError, match="no actual"):
        plots.prediction_errors({"a": np.array([1])}, {"b": np.array([1])})


# ------------------------------------------------------------ colours, legends
def test_colour_map_first_appearance_order_not_label_text():
    assert plots.colour_map(["b", "a", "b", "c"]) == {
        "b": plots.PALETTE[0], "a": plots.PALETTE[1], "c": plots.PALETTE[2]}
    # the same positions give the same colours whatever the names
    assert list(plots.colour_map(["x-1", "y", "x-1"]).values()) == list(plots.PALETTE[:2])
    many = plots.colour_map([str(k) for k in range(len(plots.PALETTE) + 1)])
    assert len(set(many.values())) == len(plots.PALETTE) and many["0"] == many["20"]
    # an override fixes some groups; the others skip the colours it uses
    got = plots.colour_map(["a", "b", "c"], {"b": plots.PALETTE[0]})
    assert got == {"a": plots.PALETTE[1], "b": plots.PALETTE[0], "c": plots.PALETTE[2]}


def test_box_colours_follow_explicit_groups_not_label_text():
    # an own dispatcher named easy-saf: parsing the label would make its group "saf-..."
    values = {"easy-walltime": np.array([1.0, 2.0]), "easy-saf-walltime": np.array([2.0, 3.0]),
              "easy-history": np.array([1.0, 5.0]), "easy-saf-history": np.array([4.0, 2.0])}
    groups = {"easy-walltime": "walltime", "easy-saf-walltime": "walltime",
              "easy-history": "history", "easy-saf-history": "history"}
    fig = plots.slowdown_boxes(values, groups=groups)
    (ax,) = fig.axes
    faces = _box_faces(ax)
    assert faces[0] == faces[1] and faces[2] == faces[3] and faces[0] != faces[2]
    assert _legend_texts(ax) == ["walltime", "history"]
    # the per-class panels use the same colours; the legend is on the last panel
    classes = {k: np.array([0, 2]) for k in values}
    fig = plots.slowdown_boxes(values, classes=classes, groups=groups)
    assert _box_faces(fig.axes[0]) == faces
    assert _legend_texts(fig.axes[-1]) == ["walltime", "history"]
    # explicit colours: the same predictor keeps its colour in another figure
    colours = plots.colour_map(["history", "walltime"])
    fig = plots.slowdown_boxes(values, groups=groups, colours=colours)
    from matplotlib.colors import to_rgba

    got = _box_faces(fig.axes[0])
    assert got[0][:3] == to_rgba(colours["walltime"])[:3]
    assert got[2][:3] == to_rgba(colours["history"])[:3]


def test_queue_length_distribution_legend_and_groups():
    a = _step([0, 10], [1, 0], 20)
    b = _step([0, 10], [2, 0], 20)
    c = _step([0, 5], [3, 0], 20)
    groups = {"fifo-x": "x", "easy-saf-x": "x", "easy-y": "y"}
    fig = plots.queue_length_distribution({"fifo-x": a, "easy-saf-x": b, "easy-y": c},
                                          groups=groups)
    (ax,) = fig.axes
    faces = _box_faces(ax)
    assert faces[0] == faces[1] != faces[2]
    assert _legend_texts(ax) == ["x", "y"]


def test_over_time_groups_share_colour_and_differ_by_style():
    f = _step([0, 100], [1, 2], 200)
    series = {"easy-walltime": f, "easy-saf-walltime": f, "easy-history": f}
    groups = {"easy-walltime": "walltime", "easy-saf-walltime": "walltime",
              "easy-history": "history"}
    fig = plots.over_time(series, ylabel="u", title="t", groups=groups)
    (ax,) = fig.axes
    p0, p1, p2 = ax.patches
    assert p0.get_edgecolor() == p1.get_edgecolor() != p2.get_edgecolor()
    assert p0.get_linestyle() != p1.get_linestyle()
    assert _legend_texts(ax) == list(series)


def _oracle_case(with_real: bool):
    """Two inexact predictors and (optionally) an exact one whose jobs are much longer:
    were it used for the limits, every axis would widen."""
    rng = np.random.default_rng(5)
    act = rng.integers(60, 7200, 300)
    est = {"walltime": act * 3, "history": np.maximum(act + rng.integers(-50, 600, 300), 0)}
    acts = {"walltime": act, "history": act}
    if with_real:
        long_runs = act * 400
        est["real"], acts["real"] = long_runs, long_runs
    return est, acts


def _limits(fig) -> list[list[float]]:
    """[x0, x1, y0, y1] per axes."""
    return [[*ax.get_xlim(), *ax.get_ylim()] for ax in fig.axes]


def test_prediction_figures_limits_ignore_an_exact_predictor():
    without = _oracle_case(False)
    with_real = _oracle_case(True)
    # box figure: y limits of the two box panels, both limits of the scatter
    a = plots.prediction_errors(*without)
    b = plots.prediction_errors(*with_real)
    for k in (0, 1):
        assert a.axes[k].get_ylim() == pytest.approx(b.axes[k].get_ylim())
    assert _limits(a)[2] == pytest.approx(_limits(b)[2])
    assert "exact for every job" in b.get_suptitle() and "real" in b.get_suptitle()
    assert _legend_texts(b.axes[2]) == ["walltime", "history", "real"]
    # the exact predictor is still drawn: one more box, more points
    assert _boxes(b.axes[0]) == 3
    assert len(b.axes[2].collections[0].get_offsets()) == 900
    # curves: every limit of both panels
    a = plots.prediction_error_curves(*without)
    b = plots.prediction_error_curves(*with_real)
    for got, expected in zip(_limits(b), _limits(a), strict=True):
        assert got == pytest.approx(expected)
    assert b.axes[0].get_ylim()[1] < 100  # real's 100 % first bin does not set the top
    assert _legend_texts(b.axes[1]) == ["walltime", "history", "real"]
    # small multiples: shared limits
    a = plots.predicted_vs_actual(*without)
    b = plots.predicted_vs_actual(*with_real)
    assert _limits(a)[0] == pytest.approx(_limits(b)[0])
    assert len(b.axes) == 3 and _limits(b)[2] == _limits(b)[0]
    assert _legend_texts(b.axes[-1]) == ["walltime", "history", "real"]
    # the exclusion is what keeps them: were real used, the top would be far higher
    assert b.axes[0].get_xlim()[1] < 400 * 7200 / 60
    # every label exact: they set the limits themselves
    act = np.array([60, 600, 6000])
    fig = plots.prediction_error_curves({"real": act}, act)
    assert fig.axes[0].get_ylim()[1] >= 100 and "exact" not in fig.get_suptitle()
    _png(fig)


def test_prediction_curves_hand_made():
    # errors (estimate - actual): job 1 -60 s (under), job 2 0, job 3 +120 s, job 4 +600 s
    act = np.array([120, 300, 60, 600])
    est = {"p": np.array([60, 300, 180, 1200])}
    fig = plots.prediction_error_curves(est, act)
    ax_abs, ax_signed = fig.axes
    (line,) = ax_signed.get_lines()[1:]  # the first line is the 0 reference
    x, y = line.get_data()
    # a step CDF in minutes: 0 below the first error, 1 at the largest
    assert x.tolist() == [-1.0, -1.0, 0.0, 2.0, 10.0]
    assert y.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ax_signed.get_xscale() == "symlog" and ax_abs.get_xscale() == "log"
    (hist,) = ax_abs.patches
    assert hist.get_path().vertices[:, 1].max() == pytest.approx(25.0)  # 1 job of 4 per bin
    assert _legend_texts(ax_signed) == ["p"]


def test_predicted_vs_actual_samples_large_inputs():
    act = np.arange(1, 2001) * 60
    fig = plots.predicted_vs_actual({"a": act * 2, "b": act}, act, max_points=500)
    assert len(fig.axes) == 2
    assert len(fig.axes[0].collections[0].get_offsets()) == 500
    assert "a uniform sample of 500" in fig.get_suptitle()
    # each panel says what it draws: 500 of the 2,000 jobs (not "a sample of 500" over
    # a panel titled with 2,000)
    assert [ax.get_title() for ax in fig.axes] == ["a: 500 of 2,000 jobs drawn",
                                                   "b: 500 of 2,000 jobs drawn"]
    assert "exact" in fig.get_suptitle()  # b equals the actual run times
    x, y = fig.axes[0].collections[0].get_offsets().T
    assert np.allclose(y, 2 * x)  # minutes, estimate twice the actual
    with pytest.raises(InputError):
        plots.predicted_vs_actual({}, act)
    _png(fig)


# ------------------------------------------------------------------- core lanes
def test_assign_core_lanes_hand_cases():
    # 4 cores. A [0,10) 2 cores; B [0,5) 1 core; C [5,10) 2 cores: B ends at 5, its lane
    # (2) is freed; free lanes 2,3 -> contiguous.
    lanes = plots.assign_core_lanes(np.array([0, 0, 5]), np.array([10, 5, 10]),
                                    np.array([2, 1, 2]), 4)
    assert lanes == [[(0, 2)], [(2, 3)], [(2, 4)]]
    # fragmentation: A [0,10) lane 0; B [0,10) lane 1; C [0,5) lane 2; D [0,10) lane 3
    # ... make free lanes non-adjacent: 5 cores, jobs 1 core each, then middle ones end.
    start = np.array([0, 0, 0, 0, 0, 6])
    end = np.array([10, 5, 10, 5, 10, 10])
    procs = np.array([1, 1, 1, 1, 1, 2])
    lanes = plots.assign_core_lanes(start, end, procs, 5)
    assert lanes[:5] == [[(0, 1)], [(1, 2)], [(2, 3)], [(3, 4)], [(4, 5)]]
    assert lanes[5] == [(1, 2), (3, 4)]  # split: no contiguous 2-lane block at t=6
    # ties at the same start: input order; rejected jobs get no lane
    lanes = plots.assign_core_lanes(np.array([3, 3, -1]), np.array([4, 4, -1]),
                                    np.array([1, 1, 5]), 2)
    assert lanes == [[(0, 1)], [(1, 2)], []]
    # a job ending at t frees its lanes for a job starting at t
    lanes = plots.assign_core_lanes(np.array([0, 4]), np.array([4, 8]), np.array([2, 2]), 2)
    assert lanes == [[(0, 2)], [(0, 2)]]
    with pytest.raises(InputError, match="more cores"):
        plots.assign_core_lanes(np.array([0, 1]), np.array([4, 8]), np.array([2, 1]), 2)


def test_split_uses_fewest_blocks():
    # 10 cores; 1-core jobs on lanes 0..9; lanes 1, 3-6 and 8 free up; a 5-core job
    # takes the 4-lane block and one more block
    n = 10
    start = np.zeros(n + 1, np.int64)
    start[-1] = 5
    end = np.full(n + 1, 100)
    for lane in (1, 3, 4, 5, 6, 8):
        end[lane] = 2
    procs = np.ones(n + 1, np.int64)
    procs[-1] = 5
    lanes = plots.assign_core_lanes(start, end, procs, n)
    assert lanes[-1] == [(1, 2), (3, 7)]


@st.composite
def _schedules(draw):
    """A feasible pooled schedule: jobs placed by a simple counting simulation."""
    cores = draw(st.integers(1, 12))
    n = draw(st.integers(0, 25))
    jobs = []
    for _ in range(n):
        jobs.append((draw(st.integers(0, 40)), draw(st.integers(0, 15)),
                     draw(st.integers(1, cores))))
    # keep a job only if the cores in use stay <= cores over its interval; a job
    # occupies [s, max(e, s + 1)): even a 0-second job needs free cores to start
    start, end, procs = [], [], []
    for s, d, p in jobs:
        hi = s + max(d, 1)
        use_at = [sum(pp for ss, ee, pp in zip(start, end, procs, strict=True)
                      if ss <= t < max(ee, ss + 1))
                  for t in [s] + [ss for ss in start if s <= ss < hi]]
        if max(use_at) + p <= cores:
            start.append(s)
            end.append(s + d)
            procs.append(p)
    return np.array(start, np.int64), np.array(end, np.int64), np.array(procs, np.int64), cores


@settings(max_examples=150, deadline=None)
@given(_schedules())
def test_assign_core_lanes_property(case):
    start, end, procs, cores = case
    lanes = plots.assign_core_lanes(start, end, procs, cores)
    n = len(start)
    sets = []
    for j in range(n):
        lane_set = set()
        for lo, hi in lanes[j]:
            assert 0 <= lo < hi <= cores
            lane_set |= set(range(lo, hi))
        assert len(lane_set) == procs[j]  # exactly procs lanes, segments disjoint
        sets.append(lane_set)
    for i in range(n):
        for j in range(i + 1, n):
            if start[i] < end[j] and start[j] < end[i]:  # overlapping in time
                assert not sets[i] & sets[j], (i, j)
    # contiguous whenever a contiguous free block existed at the job's start
    order = np.lexsort((np.arange(n), start))
    for pos, j in enumerate(order):
        busy = set()
        for k in order[:pos]:
            if end[k] > start[j]:
                busy |= sets[k]
        run, best = 0, 0
        for lane in range(cores):
            run = 0 if lane in busy else run + 1
            best = max(best, run)
        if best >= procs[j]:
            assert len(lanes[j]) == 1, (j, lanes[j])


# ------------------------------------------------------------------------ gantt
def test_gantt_pooled_core_lanes_and_window():
    job_id = np.array([1, 2, 3, 4, 5])
    start = np.array([0, 0, 200, 5000, -1])
    end = np.array([3600, 200, 7200, 6000, -1])
    procs = np.array([2, 1, 2, 4, 3])
    fig = plots.gantt(job_id, start, end, procs, window=(0, 4000), cores=4)
    assert _rectangles(fig) == 3  # job 4 starts after the window, job 5 never ran
    ax = fig.axes[0]
    assert "placement not simulated" in ax.get_ylabel()
    assert "placement not simulated" in fig.get_suptitle()
    assert ax.get_ylim() == (0, 4)
    assert "hours from t = 0 s" in ax.get_xlabel()
    # limit: at most max_jobs drawn, the title says how many were left out
    fig = plots.gantt(job_id, start, end, procs, window=None, cores=4, max_jobs=2)
    assert _rectangles(fig) == 2
    assert "2 later-starting jobs not drawn" in fig.get_suptitle()
    with pytest.raises(InputError):
        plots.gantt(job_id, start, end, procs, window=(10, 10))
    _png(fig)


def test_gantt_split_job_draws_one_rectangle_per_segment():
    # 4 cores; lanes 1 and 3 free up at 5, not adjacent: the 2-core job at 6 is split
    fig = plots.gantt(np.arange(5), np.array([0, 0, 0, 0, 6]), np.array([10, 5, 10, 5, 10]),
                      np.array([1, 1, 1, 1, 2]), window=(0, 10), cores=4)
    assert _rectangles(fig) == 6  # 4 one-lane jobs + the split job's 2 segments
    assert "1 jobs split" in fig.get_suptitle()


def test_gantt_node_level_rectangle_per_node():
    job_id = np.array([10, 11, 12, -5])
    start = np.array([0, 0, 50, -1])
    end = np.array([100, 80, 200, -1])
    procs = np.array([6, 2, 4, 1])
    alloc = ["0:4,1:2", "1:2", "2:4", None]
    fig = plots.gantt(job_id, start, end, procs, window=(0, 200), allocation=alloc,
                      nodes=4, cores=4)
    ax = fig.axes[0]
    assert _rectangles(fig) == 4  # job 10 on nodes 0 and 1, job 11 on 1, job 12 on 2
    assert ax.get_ylim() == (0, 4)
    assert "node" in ax.get_ylabel()
    (coll,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    ys = sorted((float(p.vertices[:, 1].min()), float(p.vertices[:, 1].max()))
                for p in coll.get_paths())
    # node 1: job 10 (2 of 4 units) and job 11 (2 units) stacked, not overlapping
    node1 = [y for y in ys if 1 <= y[0] < 2]
    assert len(node1) == 2 and node1[0][1] <= node1[1][0] + 1e-9
    # the same colour on both of job 10's rectangles
    faces = coll.get_facecolors()
    paths = coll.get_paths()
    job10 = [k for k, p in enumerate(paths) if p.vertices[:, 0].max() == pytest.approx(100 / 3600)]
    assert len(job10) == 2 and np.allclose(faces[job10[0]], faces[job10[1]])
    with pytest.raises(InputError, match="allocation"):
        plots.gantt(job_id, start, end, procs, window=(0, 200), allocation=["x", None, None, None])
