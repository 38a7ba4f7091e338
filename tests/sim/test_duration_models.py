"""Seed 004's duration models (factor F, mixed F, CPI), their registry and builder, seed
004's BSLD (eq. 3) in the summary, and hot-start dummies left out of the metrics.

Every expected schedule is worked out by hand in the comments: a job with W seconds of
nominal work left at time t, running at speed v, ends at t + ceil(W / v); a level M
gives v = min(1, M / F) (F = 0: v = 1) or, for CPI, v = 1 / (1 - 1/CPI + 1/(CPI M))."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.components import parse_component
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import FIFO, SetPower
from dispatchlab.metrics.jobs import power_bounded_slowdown, unstretched_run
from dispatchlab.metrics.keys import BY_KEY
from dispatchlab.metrics.summary import summarize, summarize_table
from dispatchlab.run.outputs import run_summary
from dispatchlab.sim import engine as engine_module
from dispatchlab.sim.duration import (
    DURATION_MODELS,
    MIXED_PROFILES,
    CPIModel,
    Factor,
    MixedFactor,
    NoSlowdown,
    make_duration_model,
)
from dispatchlab.sim.engine import EXACT_BITS


class Changer(FIFO):
    """FIFO that applies ``changes[t] = [SetPower, ...]`` at time t (waking itself)."""

    def __init__(self, changes=None) -> None:
        super().__init__()
        self.changes = changes

    def start(self, view) -> None:
        super().start(view)
        self._times = sorted(self.changes or {})

    def dispatch(self, view):
        out = super().dispatch(view)
        later = [t for t in self._times if t > view.now]
        if later:
            view.wake_at(later[0])
        return out + list((self.changes or {}).get(view.now, []))


def with_columns(jobs: JobTable, **cols) -> JobTable:
    return replace(jobs, columns={**jobs.columns, **{k: np.asarray(v) for k, v in
                                                     cols.items()}})


def with_power(jobs: JobTable, watts: float = 100.0) -> JobTable:
    n = len(jobs)
    return with_columns(jobs, power_mean=np.full(n, watts), power_max=np.full(n, watts),
                        power_std=np.zeros(n))


def run_one(run_s, changes, model, *, req=None, overrun="run", cores=1, jobs=None):
    jobs = jobs if jobs is not None else JobTable.from_arrays(
        submit=[0], run=[run_s], units=[1], requested_time=[req or run_s])
    sim = Simulation(Platform.pooled(cores), jobs, Changer(changes), overrun=overrun,
                     duration_model=model)
    return sim, sim.run()


# ------------------------------------------------------------------- factor F


# One job of 1000 s starting at 0; level 0.5 at t = 100, 0.25 at t = 300, back to 1 at
# t = 700. Work left: 900 at 100; then
#   F = 0     : v = 1 always                         -> ends 1000
#   F = 0.25  : v(0.5) = min(1, 2) = 1, v(0.25) = 1  -> ends 1000
#   F = 0.5   : v(0.5) = 1; v(0.25) = 0.5: 900 - 200 = 700 at 300, 700 - 400 x 0.5 = 500
#               at 700, at full speed -> 700 + 500 = 1200
#   F = 0.75  : v(0.5) = 2/3: 900 - 200 x 2/3 = 2300/3 at 300; v(0.25) = 1/3:
#               2300/3 - 400/3 = 1900/3 = 633.3 at 700 -> 700 + ceil(633.3) = 1334
#   F = 1     : v(0.5) = 0.5: 900 - 100 = 800 at 300; v(0.25) = 0.25: 800 - 100 = 700
#               at 700 -> 1400
# Without the restore at 700 the F = 1 job would run the 800 s left at 300 at 0.25:
# 300 + 3200 = 3500.
CHANGES = {100: [SetPower(0, 0.5)], 300: [SetPower(0, 0.25)], 700: [SetPower(0, 1.0)]}


@pytest.mark.parametrize(("f", "end"), [(0.0, 1000), (0.25, 1000), (0.5, 1200),
                                        (0.75, 1334), (1.0, 1400)])
def test_factor_schedule_by_hand(f, end):
    _, r = run_one(1000, CHANGES, Factor(f=f))
    assert r.end.tolist() == [end]
    assert r.segments["power_level"].tolist() == [0.5, 0.25, 1.0]
    # restoring full power: never below the original duration
    assert end >= 1000


def test_restoring_power_shortens_the_remaining_time_never_below_the_original():
    # F = 1, the same changes without the restore: 3500 (see CHANGES); with it 1400
    _, slow = run_one(1000, {k: v for k, v in CHANGES.items() if k < 700}, Factor(f=1.0))
    assert slow.end.tolist() == [3500]
    _, back = run_one(1000, CHANGES, Factor(f=1.0))
    assert back.end.tolist() == [1400]
    # restored at once (level 0.5 at 100, back to 1 at 101): 900 - 0.5 = 899.5 left at
    # 101 -> 101 + ceil(899.5) = 1001: one second (the rounding), not less than 1000
    _, quick = run_one(1000, {100: [SetPower(0, 0.5)], 101: [SetPower(0, 1.0)]},
                       Factor(f=1.0))
    assert quick.end.tolist() == [1001]
    # every model gives speed 1 at full power, at most 1 below it
    jobs = with_columns(JobTable.from_arrays(submit=[0, 0, 0], run=[1, 1, 1],
                                             units=[1, 1, 1]), app=[0, 1, 2],
                        cpi=[0.5, 3.0, 8.0])
    for model in (Factor(f=0.3), MixedFactor(), MixedFactor(profile="dvfs"), CPIModel(),
                  NoSlowdown()):
        model.start(jobs)
        for j in range(3):
            assert model.speed(j, 1.0) == 1.0 and model.exact_speed(j, 1.0) == 1
            for level in (0.01, 0.2, 0.5, 0.99):
                assert 0 < model.speed(j, level) <= 1
                assert 0 < model.exact_speed(j, level) <= 1


def test_factor_speeds_and_exact_speeds():
    assert Factor(f=0.0).speed(0, 0.1) == 1.0
    assert Factor(f=0.5).speed(0, 0.25) == 0.5
    assert Factor(f=0.5).speed(0, 0.75) == 1.0
    # F = 0.75 at M = 0.5: D' = 1.5 D exactly: 100 s of work take 150 s (the float 2/3
    # would make it 150.000...01 and round the end up)
    v = Factor(f=0.75).exact_speed(0, 0.5)
    assert v == Fraction(2, 3) and 100 / v == 150
    assert Factor(f=0.75).speed(0, 0.5) == pytest.approx(2 / 3)


def test_one_thousand_level_changes_match_the_closed_form():
    # F = 0.5; levels cycle 0.125, 0.375, 1, 0.25 -> speeds 0.25, 0.75, 1, 0.5 (exact in
    # binary); a change every 7 s from t = 1. Closed form: the work pieces (time between
    # changes x speed) subtracted exactly from 100,000 s, then end = last change +
    # ceil(left / speed).
    levels = [0.125, 0.375, 1.0, 0.25]
    changes = {1 + 7 * k: [SetPower(0, levels[k % 4])] for k in range(1000)}
    model = Factor(f=0.5)
    work, t, v = Fraction(100_000), 0, Fraction(1)
    for when in sorted(changes):
        work -= (when - t) * v
        t, v = when, model.exact_speed(0, changes[when][0].level)
    expected = t + math.ceil(work / v)
    _, r = run_one(100_000, changes, model)
    assert r.end.tolist() == [expected]
    # no drift: the pieces of work done per segment add up to the job's run, to within
    # the last second's rounding
    seg = r.segments
    times = [0, *seg["time"].tolist(), int(r.end[0])]
    speeds = [Fraction(1), *(Fraction(s) for s in seg["speed"].tolist())]
    done = sum((b - a) * s for a, b, s in zip(times[:-1], times[1:], speeds, strict=True))
    assert 100_000 <= done < 100_000 + speeds[-1]
    assert len(seg["job"]) == 1000


def test_irregular_levels_keep_the_fractions_small_and_the_end_exact():
    # CPI 2.7, 3,000 changes at levels drawn from a seeded generator (floats: the exact
    # speeds C M / (C M - M + 1) have denominators of ~100 bits, so the exact work left
    # would grow by that much per change). The engine rounds a fraction whose
    # denominator passes EXACT_BITS to a multiple of 2**-64 s: the numbers stay small
    # and the end is the exact closed form's (an error below 3,000 x 2**-65 s).
    rng = np.random.default_rng(7)
    levels = rng.uniform(0.05, 1.0, 3000).tolist()
    changes = {1 + 3 * k: [SetPower(0, lv)] for k, lv in enumerate(levels)}
    jobs = with_columns(JobTable.from_arrays(submit=[0], run=[50_000], units=[1]),
                        cpi=[2.7])
    model = CPIModel()
    rounded = []
    real_dyadic = engine_module._dyadic

    def counting(p, q):
        rounded.append(q.bit_length())
        return real_dyadic(p, q)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(engine_module, "_dyadic", counting)
        sim, r = run_one(None, changes, model, jobs=jobs)
    assert len(rounded) > 1000 and max(rounded) < 400  # rounded as they pass 128 bits
    work, t, v = Fraction(50_000), 0, Fraction(1)
    for when in sorted(changes):
        work -= (when - t) * v
        t, v = when, sim.duration_model.exact_speed(0, changes[when][0].level)
    assert work > 0
    exact_end = t + work / v
    assert r.end.tolist() == [math.ceil(exact_end)]
    assert exact_end != math.ceil(exact_end)  # not a whole second: no tie to break
    assert EXACT_BITS == 128


# ---------------------------------------------------------------------------- CPI


def test_cpi_model_by_hand():
    # two 100 s jobs on two cores, CPI 3 and 0.5 (taken as 1); both throttled at t = 11:
    #   CPI 3, M = 0.5: D'/D = 1 - 1/3 + 1/(3 x 0.5) = 4/3: 89 s left take 118.67 s
    #     -> 11 + 119 = 130
    #   CPI 0.5 -> 1, M = 0.5: D'/D = 1 - 1 + 1/0.5 = 2: 89 s take 178 s -> 189
    # then at t = 50, job 0 to M = 0.25: D'/D = 1 - 1/3 + 4/3 = 2, v = 1/2; work left at
    # 50: 89 - 39 x 3/4 = 59.75 -> 50 + ceil(119.5) = 170
    jobs = with_columns(JobTable.from_arrays(submit=[0, 0], run=[100, 100], units=[1, 1]),
                        cpi=[3.0, 0.5])
    changes = {11: [SetPower(0, 0.5), SetPower(1, 0.5)]}
    _, r = run_one(None, changes, CPIModel(), cores=2, jobs=jobs)
    assert r.end.tolist() == [130, 189]
    _, r = run_one(None, {**changes, 50: [SetPower(0, 0.25)]}, CPIModel(), cores=2,
                   jobs=jobs)
    assert r.end.tolist() == [170, 189]
    m = CPIModel()
    m.start(jobs)
    assert m.exact_speed(0, 0.5) == Fraction(3, 4) and m.speed(0, 0.5) == pytest.approx(0.75)
    assert m.exact_speed(1, 0.5) == Fraction(1, 2) and m.speed(1, 0.25) == 0.25
    assert not m.cpi_drawn_ and m.cpi_.tolist() == [3.0, 0.5]


def test_cpi_from_another_column_and_drawn_without_one():
    jobs = with_columns(JobTable.from_arrays(submit=[0, 0], run=[10, 10], units=[1, 1]),
                        my_cpi=[2.0, 4.0])
    m = make_duration_model("cpi:column=my_cpi")
    m.start(jobs)
    assert m.cpi_.tolist() == [2.0, 4.0]
    # no such column: drawn per app type (ours: lognormal, medians 2 / 1 / 6), seeded
    n = 20_000
    app = np.repeat([0, 1, 2], n // 3 + 1)[:n]
    big = with_columns(JobTable.from_arrays(submit=np.zeros(n, int), run=np.ones(n, int),
                                            units=np.ones(n, int)), app=app)
    a, b, c = CPIModel(seed=5), CPIModel(seed=5), CPIModel(seed=6)
    for x in (a, b, c):
        x.start(big)
    assert a.cpi_drawn_ and np.array_equal(a.cpi_, b.cpi_) and not np.array_equal(a.cpi_,
                                                                                  c.cpi_)
    for code, median in enumerate((2.0, 1.0, 6.0)):
        assert np.median(a.cpi_[app == code]) == pytest.approx(median, rel=0.02)
    assert np.all(a.cpi_ > 0)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_a_cpi_column_with_bad_values_is_an_input_error(bad):
    jobs = with_columns(JobTable.from_arrays(submit=[0, 0, 0], run=[10, 10, 10],
                                             units=[1, 1, 1]), cpi=[2.0, bad, bad])
    with pytest.raises(InputError, match=r"'cpi'.*job 2 ") as err:
        CPIModel().start(jobs)
    assert err.value.field == "cpi"
    # through the engine too
    with pytest.raises(InputError, match="job 2"):
        Simulation(Platform.pooled(1), jobs, FIFO(), duration_model=CPIModel()).run()


# -------------------------------------------------------------------------- mixed


def clipped_normal_mean(mu: float, sigma: float) -> float:
    """E[clip(X, 0, 1)] for X ~ N(mu, sigma): 0 x P(X < 0) + 1 x P(X > 1) + the
    integral of x f(x) over [0, 1] = mu (Phi(b) - Phi(a)) + sigma (phi(a) - phi(b))."""
    def cdf(z):
        return 0.5 * (1 + math.erf(z / math.sqrt(2)))

    def pdf(z):
        return math.exp(-z * z / 2) / math.sqrt(2 * math.pi)

    a, b = (0 - mu) / sigma, (1 - mu) / sigma
    return (1 - cdf(b)) + mu * (cdf(b) - cdf(a)) + sigma * (pdf(a) - pdf(b))


@pytest.mark.parametrize("profile", ["dynshare", "dvfs"])
def test_mixed_draws_per_app_type_and_seed(profile):
    n = 60_000  # 20,000 per application type
    app = np.repeat([0, 1, 2], n // 3)
    jobs = with_columns(JobTable.from_arrays(submit=np.zeros(n, int), run=np.ones(n, int),
                                             units=np.ones(n, int)), app=app)
    a, b, c = (MixedFactor(profile=profile, seed=s) for s in (1, 1, 2))
    for x in (a, b, c):
        x.start(jobs)
    assert np.array_equal(a.factors_, b.factors_)
    assert not np.array_equal(a.factors_, c.factors_)
    assert a.factors_.min() >= 0 and a.factors_.max() <= 1
    for code, (mu, sigma) in enumerate(MIXED_PROFILES[profile]):
        f = a.factors_[app == code]
        assert len(f) == 20_000
        # the sample mean's standard error is at most 0.2 / sqrt(20,000) = 0.0014
        assert f.mean() == pytest.approx(clipped_normal_mean(mu, sigma), abs=0.006)
    # the speed follows the drawn factor
    j = int(np.argmax(a.factors_ > 0.6))
    assert a.speed(j, 0.3) == pytest.approx(min(1.0, 0.3 / a.factors_[j]))


def test_mixed_without_an_app_column_or_with_other_codes_counts_as_average():
    n = 20_000
    plain = JobTable.from_arrays(submit=np.zeros(n, int), run=np.ones(n, int),
                                 units=np.ones(n, int))
    odd = with_columns(plain, app=np.full(n, 7))
    x, y = MixedFactor(seed=3), MixedFactor(seed=3)
    x.start(plain)
    y.start(odd)
    assert np.array_equal(x.factors_, y.factors_)
    assert x.factors_.mean() == pytest.approx(clipped_normal_mean(0.7, 0.1), abs=0.005)


def test_draws_of_the_workload_do_not_depend_on_hot_start_dummies():
    # dummies inserted at rows 0 and 2: the workload rows get the draws they get alone
    n = 50
    plain = JobTable.from_arrays(submit=np.arange(n), run=np.ones(n, int),
                                 units=np.ones(n, int))
    both = JobTable.from_arrays(submit=np.arange(n + 2), run=np.ones(n + 2, int),
                                units=np.ones(n + 2, int))
    hot = np.zeros(n + 2, int)
    hot[[0, 2]] = 1
    both = with_columns(both, hot_start=hot)
    for cls in (MixedFactor, CPIModel):
        a, b = cls(seed=9), cls(seed=9)
        a.start(plain)
        b.start(both)
        attr = "factors_" if cls is MixedFactor else "cpi_"
        assert np.array_equal(getattr(a, attr), getattr(b, attr)[hot == 0])


def test_the_engine_uses_the_mixed_factor_of_each_job():
    # one job, F drawn with seed 0; level 0.5 at t = 10 -> 90 s left at min(1, 0.5 / F)
    jobs = JobTable.from_arrays(submit=[0], run=[100], units=[1])
    sim, r = run_one(None, {10: [SetPower(0, 0.5)]}, MixedFactor(seed=0), jobs=jobs)
    f = float(sim.duration_model.factors_[0])
    v = min(Fraction(1), Fraction(0.5) / Fraction(f))
    assert f > 0.5  # the avg profile N(0.7, 0.1): with seed 0 it is above 0.5
    assert r.end.tolist() in ([10 + math.ceil(90 / v)],
                              [10 + math.ceil(90 / Fraction(min(1.0, 0.5 / f)))])


# --------------------------------------------------------- registry and bad input


def test_registry_and_builder():
    assert list(DURATION_MODELS) == ["none", "factor", "mixed", "cpi"]
    assert make_duration_model("factor:f=0.5").get_params() == {"f": 0.5}
    assert make_duration_model("mixed:profile=dvfs:seed=3").get_params() == {
        "profile": "dvfs", "seed": 3}
    assert isinstance(make_duration_model("cpi"), CPIModel)
    assert isinstance(make_duration_model("NONE"), NoSlowdown)
    assert make_duration_model("factor", f=0.25).f == 0.25
    spec = parse_component("mixed:seed=4", "duration-model")
    assert (spec.name, spec.params) == ("mixed", {"seed": 4})
    assert spec.build().get_params() == {"profile": "dynshare", "seed": 4}
    assert Factor(f=0.25).clone().f == 0.25


@pytest.mark.parametrize(("spec", "message"), [
    ("factor:f=1.5", r"f must be a number in \[0, 1\]"),
    ("factor:f=-0.1", r"\[0, 1\]"),
    ("factor:f=abc", "must be a number"),
    ("mixed:profile=rapl", "dynshare, dvfs"),
    ("mixed:seed=-1", "seed"),
    ("turbo", "none, factor, mixed, cpi"),
    ("factor:g=0.5", "no parameter 'g'"),
])
def test_bad_duration_model_specs_are_input_errors(spec, message):
    with pytest.raises(InputError, match=message):
        make_duration_model(spec)


def test_bad_parameters_name_the_parameter():
    with pytest.raises(InputError) as err:
        make_duration_model("factor", f=2.0)
    assert err.value.field == "f"
    with pytest.raises(InputError):
        make_duration_model("factor", f=True)
    with pytest.raises(InputError) as err:
        Factor(f=1.2).start(JobTable.from_arrays(submit=[0], run=[1], units=[1]))
    assert err.value.field == "f"
    with pytest.raises(InputError):
        Simulation(Platform.pooled(1), JobTable.from_arrays(submit=[0], run=[1], units=[1]),
                   FIFO(), duration_model=Factor(f=-1)).run()
    with pytest.raises(RuntimeError, match="start"):
        MixedFactor().speed(0, 0.5)


# --------------------------------------------------------------- seed 004's BSLD


def test_power_bsld_by_hand():
    # pooled(1): J0 run 1000 s submitted at 0, J1 run 100 s submitted at 50. F = 1, J0
    # at level 0.5 from t = 500: 500 s left at speed 0.5 -> ends 1500; J1 runs
    # [1500, 1600].
    #   J0: wait 0, effective run 1500, unstretched 1000: (0 + 1500) / max(300, 1000) = 1.5
    #   J1: wait 1450, run 100: (1450 + 100) / max(300, 100) = 1550 / 300 = 5.1667
    # mean (1.5 + 5.1667) / 2 = 3.3333, max 5.1667. The bsld with tau = 10 divides by
    # the effective run: J0 1500 / 1500 = 1, J1 1550 / 100 = 15.5 -> mean 8.25.
    jobs = with_power(JobTable.from_arrays(submit=[0, 50], run=[1000, 100], units=[1, 1]))
    _, r = run_one(None, {500: [SetPower(0, 0.5)]}, Factor(f=1.0), jobs=jobs)
    assert r.start.tolist() == [0, 1500] and r.end.tolist() == [1500, 1600]
    s = run_summary(r)
    assert s["mean_power_bsld"] == pytest.approx((1.5 + 1550 / 300) / 2)
    assert s["max_power_bsld"] == pytest.approx(1550 / 300)
    assert s["power_bsld_theta"] == 300.0
    assert s["mean_bsld"] == pytest.approx(8.25)
    assert BY_KEY["mean_power_bsld"].value(s) == s["mean_power_bsld"]
    # overrun = kill, J0 requested 1200 s: killed at 1200 (its stretched end 1500 is
    # later); unstretched run min(1000, 1200) = 1000: J0 1200 / 1000 = 1.2; J1 runs
    # [1200, 1300]: (1150 + 100) / 300 = 4.1667
    jobs = with_power(JobTable.from_arrays(submit=[0, 50], run=[1000, 100], units=[1, 1],
                                           requested_time=[1200, 100]))
    _, r = run_one(None, {500: [SetPower(0, 0.5)]}, Factor(f=1.0), jobs=jobs,
                   overrun="kill")
    assert r.end.tolist() == [1200, 1300]
    s = run_summary(r)
    assert s["mean_power_bsld"] == pytest.approx((1.2 + 1250 / 300) / 2)
    # a trace run longer than the request, killed at 800 unthrottled: unstretched 800
    assert unstretched_run([1000], [800], "kill").tolist() == [800]
    assert unstretched_run([1000], [800], "run").tolist() == [1000]


def test_power_bsld_only_in_runs_with_job_power():
    jobs = JobTable.from_arrays(submit=[0, 50], run=[1000, 100], units=[1, 1])
    s = run_summary(Simulation(Platform.pooled(1), jobs, FIFO()).run())
    assert "mean_power_bsld" not in s and BY_KEY["mean_power_bsld"].value(s) is None
    # the function: at least 1, theta bounds short jobs: (0 + 100) / 300 -> 1;
    # (10 + 50) / 300 -> 1; (0 + 2000) / 1000 = 2; (500 + 100) / 300 = 2
    out = power_bounded_slowdown([0, 10, 0, 500], [100, 50, 2000, 100],
                                 [100, 50, 1000, 100])
    assert out.tolist() == [1.0, 1.0, 2.0, 2.0]


def test_summarize_power_bsld_directly():
    # three jobs, one rejected: wait 100 run 400 nominal 200 -> 500 / 300; wait 0 run 50
    # nominal 50 -> max(1, 50 / 300) = 1
    s = summarize([0, 0, 0], [100, 0, -1], [500, 50, -1], [0, 0, 2], [1, 1, 1],
                  {"core": [1, 1, 1]}, {"core": 2}, unstretched_run=[200, 50, 10])
    assert s["mean_power_bsld"] == pytest.approx((500 / 300 + 1) / 2)
    assert s["max_power_bsld"] == pytest.approx(500 / 300)
    with pytest.raises(InputError):
        summarize([0], [0], [1], [0], [1], {"core": [1]}, {"core": 1},
                  unstretched_run=[1, 2])


# ------------------------------------------------------------------------ hot start


def hot_table():
    # row 0: a dummy of a hot start (1 core, [0, 600)); rows 1-3: the workload
    return JobTable.from_arrays(submit=[0, 100, 200, 300], run=[600, 400, 300, 50],
                                units=[1, 1, 2, 1])


def test_hot_start_rows_are_left_out_of_the_summary():
    jobs = hot_table()
    start, end, status = [0, 100, 600, 500], [600, 500, 900, 550], [0, 0, 0, 0]
    capacity = {"core": 2}
    hot = with_columns(jobs, hot_start=[1, 0, 0, 0])
    with_hot = summarize_table(hot, start, end, status, capacity)
    # the same summary as the workload rows alone, plus the dummy count
    alone = summarize_table(jobs.take(np.array([1, 2, 3])), start[1:], end[1:], status[1:],
                            capacity)
    assert with_hot.pop("hot_start_jobs") == 1
    assert with_hot == alone
    assert alone["total_jobs"] == 3 and alone["first_submit"] == 100
    # by hand: waits 0, 400, 200 -> mean 200; makespan 900 - 100 = 800
    assert alone["mean_wait"] == pytest.approx(200) and alone["makespan"] == 800
    # a hot_start column of zeros: the plain summary and hot_start_jobs = 0
    zero = summarize_table(with_columns(jobs, hot_start=[0, 0, 0, 0]), start, end, status,
                           capacity)
    plain = summarize_table(jobs, start, end, status, capacity)
    assert "hot_start_jobs" not in plain
    assert zero.pop("hot_start_jobs") == 0 and zero == plain


def test_hot_start_in_a_run_and_bad_values():
    jobs = with_columns(hot_table(), hot_start=[1, 0, 0, 0])
    r = Simulation(Platform.pooled(2), jobs, FIFO()).run()
    s = run_summary(r)
    assert s["hot_start_jobs"] == 1 and s["jobs"] == 3 and s["total_jobs"] == 3
    assert BY_KEY["hot_start_jobs"].value(s) == 1
    with pytest.raises(InputError, match="hot_start must be 0 or 1"):
        summarize_table(with_columns(hot_table(), hot_start=[2, 0, 0, 0]), [0, 100, 600, 500],
                        [600, 500, 900, 550], [0, 0, 0, 0], {"core": 2})


def test_engine_uses_exact_speed():
    # F = 0.75 at level 0.5: speed 2/3 exactly; 90 s of work left at t = 10 take
    # 90 x 3/2 = 135 s (a float speed would round up to 136): end 10 + 135 = 145
    _, r = run_one(100, {10: [SetPower(0, 0.5)]}, Factor(f=0.75))
    assert r.end.tolist() == [145]


@settings(max_examples=300, deadline=None)
@given(st.floats(0.0, 1.0), st.floats(1e-9, 1.0), st.floats(0.01, 50.0))
def test_exact_speeds_equal_the_fraction_formulas(f, level, cpi) -> None:
    """The integer-ratio forms of the exact speeds equal the formulas written with
    Fractions: min(1, M / F) (1 when F = 0) and min(1, C M / (C M - M + 1)), C >= 1."""
    from dispatchlab.sim.duration import _cpi_exact, _factor_exact

    one, m = Fraction(1), Fraction(level)
    assert _factor_exact(f, level) == (one if f <= 0 else min(one, m / Fraction(f)))
    c = max(one, Fraction(cpi))
    assert _cpi_exact(cpi, level) == min(one, c * m / (c * m - m + 1))
