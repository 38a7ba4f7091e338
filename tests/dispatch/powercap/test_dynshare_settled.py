"""DynShare's settled periods: measurements that cannot change anything are skipped,
and the schedule is the one of a DynShare that measures every period.

A measurement is a function of the running set, the jobs' levels, the cap and the
allocations. Once a measurement changes no level and starts nothing, and the
allocations repeat with a period of at most ``QUIET_CYCLE`` measurements, every later
measurement until the next event repeats the cycle: DynShare asks for no more wake-ups
(and is called at every event while settled), then replays the skipped measurements'
allocations at the next pass. ``QUIET_CYCLE = 0`` turns this off, which is what these
tests compare with.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import FIFO, make_dispatcher
from dispatchlab.dispatch.base import DispatchError
from dispatchlab.dispatch.powercap import rapl
from dispatchlab.dispatch.powercap.rapl import RaplDynShare
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power import PowerCap
from dispatchlab.power.data import with_power
from dispatchlab.power.eurora_synth import eurora_instance
from dispatchlab.predict.duration.base import Predictor
from dispatchlab.predict.power.predictors import RealPowerPredictor
from dispatchlab.sim.duration import Factor, MixedFactor


def powered(watts, **cols) -> JobTable:
    w = np.asarray(watts, dtype=np.float64)
    return with_power(JobTable.from_arrays(**cols),
                      {"power_mean": w, "power_max": w, "power_std": 0 * w})


def run(platform, jobs, dispatcher, cap, model, overrun="run", predictor=None):
    return Simulation(platform, jobs, dispatcher, predictor=predictor,
                      power_predictor=RealPowerPredictor(), cap=cap,
                      duration_model=model, overrun=overrun).run()


class Quarter(Predictor):
    """A quarter of the requested time; at expiry the requested time (Tsafrir)."""

    name = "quarter"

    def __init__(self) -> None:
        pass

    def predict(self, job: int, now: int) -> int:
        return max(1, int(self._requested[job]) // 4)


def schedule(result):
    seg = result.segments or {}
    return (result.start.tolist(), result.end.tolist(), result.status.tolist(),
            {k: np.asarray(v).tolist() for k, v in seg.items()})


def both(make_run):
    """(settled run, every-period run) of ``make_run()``."""
    settled = make_run()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(rapl, "QUIET_CYCLE", 0)
        plain = make_run()
    return settled, plain


def test_two_period_cycle_settles_and_the_rest_is_replayed():
    # The dead-band case of test_rapl: 2 nodes of 1 core, cap 100 W, J0 (300 W, 100 s,
    # F = 0: throttling does not stretch it) alone on node 0. Levels: 50 W at 5, 95 W at
    # 10, 92.75 W at 15; then the allocations alternate [95, 5] (t = 20) and [92.75,
    # 7.25] (t = 25) with no level change: at 25 the allocations equal those before 20,
    # a cycle of 2 measurements, so DynShare settles and asks for no wake-up. Passes:
    # 0 (submission), 5, 10, 15, 20, 25, 100 (J0 ends): 7 instead of 21 (every 5 s).
    # At 100 the 14 skipped measurements (30..95) are counted and the one at 100 runs.
    jobs = powered([300.0], submit=[0], run=[100], units=[1],
                   resources={"core": [1], "mem": [1]})
    platform = Platform.homogeneous(2, 1, mem=8)
    cap = PowerCap.window(100.0)
    settled, plain = both(lambda: run(
        platform, jobs, RaplDynShare(admission="none"), cap, Factor(0.0)))
    assert schedule(settled) == schedule(plain)
    assert settled.end.tolist() == [100]
    assert plain.passes == 21
    assert settled.passes == 7
    assert settled.dispatcher_facts["dynshare_measurements"] == 20
    assert settled.dispatcher_facts["dynshare_skipped"] == 14
    assert plain.dispatcher_facts["dynshare_skipped"] == 0


def test_an_estimate_passing_while_settled_still_reaches_the_admission():
    # Node-level, 2 nodes of 1 core, cap 100 W, F = 1, overrun = run, admission none.
    # J0 (1 node, 200 W, run 400 s, asks 100 s) starts at 0 and is throttled; J1 (2
    # nodes) waits for node 0. J0's estimate scales with its speed; whenever it passes,
    # the engine expires it at the next pass, which changes BF's shadow: the settled
    # DynShare wakes up at the first measurement at or after that estimated end, so
    # every decision falls where the every-period DynShare takes it.
    jobs = powered([200.0, 50.0, 30.0], submit=[0, 1, 2], run=[400, 50, 20],
                   units=[1, 2, 1], requested_time=[100, 60, 30],
                   resources={"core": [1, 1, 1], "mem": [1, 1, 1]})
    platform = Platform.homogeneous(2, 1, mem=8)
    cap = PowerCap.window(100.0)
    settled, plain = both(lambda: run(
        platform, jobs, RaplDynShare(admission="none"), cap, Factor(1.0)))
    assert schedule(settled) == schedule(plain)
    assert settled.passes < plain.passes


def test_a_settled_dynshare_wakes_where_an_estimate_expires():
    # 2 nodes of 1 core, cap 1,000 W (never binding), admission none, estimates a
    # quarter of the requested time. J0 (1 unit, 50 W, run 300, asks 400: estimate 100)
    # starts at 0; J1 (2 units, asks 60) waits for node 0; J2 (1 unit, run 20, asks 600:
    # estimate 150) cannot backfill on node 1 since 2 + 150 > J1's shadow, J0's
    # estimated end 100. The allocations alternate [55, 5] / [400, 400] from t = 10 with
    # no level change: settled. At the pass at 100 (a measurement) the engine expires
    # J0's estimate and the predictor moves it to 0 + 400: the shadow is 400, and J2
    # (100 + 150 < 400) backfills at 100, ends at 120. J0 ends at 300, J1 starts then.
    # The settled DynShare asked for a wake-up at 100, the first measurement at or after
    # J0's estimated end, so J2 starts at 100 as with a measurement every period (not
    # at 300, J0's end, the next event).
    jobs = powered([50.0, 40.0, 30.0], submit=[0, 1, 2], run=[300, 50, 20],
                   units=[1, 2, 1], requested_time=[400, 60, 600],
                   resources={"core": [1, 1, 1], "mem": [1, 1, 1]})
    platform = Platform.homogeneous(2, 1, mem=8)
    settled, plain = both(lambda: run(
        platform, jobs, RaplDynShare(admission="none"), PowerCap.window(1000.0),
        Factor(1.0), predictor=Quarter()))
    assert settled.start.tolist() == [0, 300, 100]
    assert settled.end.tolist() == [300, 350, 120]
    assert schedule(settled) == schedule(plain)
    assert settled.dispatcher_facts["dynshare_skipped"] > 0


def test_withdrawn_wake_up_makes_no_pass():
    # A dispatcher asks for wake-ups at 10 and 20 and withdraws the one at 20 at its
    # pass at 10: passes at 0 (submission), 10 and 50 (the job's end) only.
    class Waker(FIFO):
        def dispatch(self, view):
            if view.now == 0:
                view.wake_at(10)
                view.wake_at(20)
            elif view.now == 10:
                view.withdraw_wake(20)
                with pytest.raises(DispatchError, match="none is pending"):
                    view.withdraw_wake(20)
            return super().dispatch(view)

        call_on_empty_queue = True

    jobs = JobTable.from_arrays(submit=[0], run=[50], units=[1])
    seen = []
    disp = Waker()
    orig = Waker.dispatch

    def spy(self, view):
        seen.append(view.now)
        return orig(self, view)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(Waker, "dispatch", spy)
        result = Simulation(Platform.homogeneous(1, 1), jobs, disp).run()
    assert seen == [0, 10, 50]
    assert result.passes == 3


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(3, 10),
       share=st.sampled_from([0.1, 0.3, 0.6, 1.0]),
       f=st.sampled_from([0.0, 0.5, 1.0, None]),
       admission=st.sampled_from([3.0, 1.0, "none"]),
       deadband=st.sampled_from([0.05, 0.0]),
       hurry=st.booleans())
def test_settled_runs_equal_every_period_runs(seed, n, share, f, admission,
                                              deadband, hurry):
    # Eurora-like jobs on the 64-node Eurora platform, run and requested times / 20 (a
    # throttled run at a low cap is long, and the every-period run measures all of it);
    # ``hurry`` halves the requested times again (jobs overrun their estimates:
    # expiries while settled).
    jobs = eurora_instance(n, 600, "uniform", seed=seed)
    cols = dict(jobs.columns)
    cols["run"] = np.maximum(1, cols["run"] // 20)
    for name in ("requested_time", "req_time"):
        cols[name] = np.maximum(cols["run"], cols[name] // 20) // (2 if hurry else 1)
    jobs = replace(jobs, columns=cols)
    platform = eurora_platform()
    peak = float(np.asarray(jobs["power_mean"]).sum())
    cap = PowerCap.window(share * peak)
    model = MixedFactor("dynshare", seed=seed) if f is None else Factor(f)
    settled, plain = both(lambda: run(
        platform, jobs, RaplDynShare(admission=admission, deadband=deadband), cap, model))
    assert schedule(settled) == schedule(plain)
    assert settled.passes <= plain.passes


@pytest.mark.parametrize("seed", [0])
def test_dec_rapl_with_a_settled_dynshare_equals_every_period(seed):
    # 20 jobs over 2 h: DynShare (slow arrivals) most of the time, DEC during denser
    # stretches; the DynShare part resumes at every pass, in either mode.
    jobs = eurora_instance(20, 7200, "left-skewed", seed=seed)
    platform = eurora_platform()
    cap = PowerCap.window(0.2 * float(np.asarray(jobs["power_mean"]).sum()))
    settled, plain = both(lambda: run(
        platform, jobs, make_dispatcher("dec-rapl", window=600, threshold=1 / 300,
                                        estimator="window"),
        cap, MixedFactor("dynshare", seed=seed)))
    assert schedule(settled) == schedule(plain)
    assert settled.passes < plain.passes
