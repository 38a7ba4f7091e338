"""The engine's power inputs: the cap over time (events and view), cap parsing, and the
power-predictor protocol (predicted at submission, observed at completion)."""

from __future__ import annotations

import numpy as np
import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import FIFO, DispatchError
from dispatchlab.power import PowerCap, parse_cap_value
from dispatchlab.power.cap import parse_window
from dispatchlab.predict.power.base import PowerPrediction, PowerPredictor
from dispatchlab.run.outputs import run_summary


class Watcher(FIFO):
    """FIFO that records (now, cap, next cap change, predicted mean of waiting jobs)."""

    def dispatch(self, view):
        pred = view.power_prediction
        waiting = view.queue.jobs.tolist()
        self.seen = [*getattr(self, "seen", []), (
            view.now, view.cap, view.next_cap_change(),
            None if pred is None else [float(pred[0][j]) for j in waiting])]
        return super().dispatch(view)


def jobs3():
    # J0 (2 cores, 200 s) at 0; J1 (1 core, 10 s) at 20; J2 (1 core, 10 s) at 150
    return JobTable.from_arrays(submit=[0, 20, 150], run=[200, 10, 10], units=[2, 1, 1])


def test_cap_changes_are_events_with_a_pass_and_show_in_the_view():
    # cap 1000 W on [50, 100): passes at 0 (J0 starts), 20 (J1 waits: 2 cores busy),
    # 50 and 100 (cap steps, nothing else happens), 150 (J2 waits), 200 (J0 ends: J1 and
    # J2 start), 210 (both end; empty queue: FIFO is not called)
    sim = Simulation(Platform.pooled(2), jobs3(), Watcher(), cap=PowerCap.window(1000, 50, 100))
    r = sim.run()
    seen = [(t, c, n) for t, c, n, _ in sim.dispatcher.seen]
    assert seen == [(0, None, (50, 1000.0)), (20, None, (50, 1000.0)),
                    (50, 1000.0, (100, None)), (100, None, None), (150, None, None),
                    (200, None, None)]
    assert r.start.tolist() == [0, 200, 200]
    # the same schedule without the cap
    plain = Simulation(Platform.pooled(2), jobs3(), FIFO()).run()
    assert plain.start.tolist() == r.start.tolist()


class ByUnits(PowerPredictor):
    """100 W per unit; max 150 W per unit; std 10 W; counts observations."""

    name = "by-units"

    def start(self, jobs, platform):
        self.units_ = np.asarray(jobs["units"])
        self.observed_: list[tuple[int, int]] = []

    def predict(self, job, now):
        u = int(self.units_[job])
        return PowerPrediction(100.0 * u, 150.0 * u, 10.0)

    def observe(self, job, end):
        self.observed_.append((job, end))


def test_power_predictions_at_submission_and_observations_at_completion():
    sim = Simulation(Platform.pooled(2), jobs3(), Watcher(), power_predictor=ByUnits())
    r = sim.run()
    by_time = {t: p for t, _, _, p in sim.dispatcher.seen}
    assert by_time[20] == [100.0]  # J1 waits, predicted at its submission
    assert by_time[150] == [100.0, 100.0]
    assert r.power_prediction["mean"].tolist() == [200.0, 100.0, 100.0]
    assert r.power_prediction["max"].tolist() == [300.0, 150.0, 150.0]
    assert sim.power_predictor.observed_ == [(0, 200), (1, 210), (2, 210)]
    # without a power predictor the view says so
    sim = Simulation(Platform.pooled(2), jobs3(), Watcher())
    sim.run()
    assert all(p is None for *_, p in sim.dispatcher.seen)


class Bad(PowerPredictor):
    name = "bad"

    def predict(self, job, now):
        return PowerPrediction(10.0, 5.0, 1.0)  # mean above max


def test_a_bad_power_prediction_is_an_error():
    with pytest.raises(DispatchError, match="mean <= max"):
        Simulation(Platform.pooled(2), jobs3(), FIFO(), power_predictor=Bad()).run()


def test_cap_values_and_windows():
    assert parse_cap_value("0.5", 955_080) == pytest.approx(477_540)
    assert parse_cap_value("400kW", None) == 400_000
    assert parse_cap_value("1.2MW", None) == pytest.approx(1_200_000)
    assert parse_cap_value("2100W", None) == 2100
    for bad in ("0", "1.5", "-3", "abc", "0W"):
        with pytest.raises(InputError):
            parse_cap_value(bad, 1000)
    with pytest.raises(InputError, match="max_dynamic_power"):
        parse_cap_value("0.5", None)
    assert parse_window("0:10800") == (0, 10800)
    assert parse_window("3600:") == (3600, None)
    for bad in ("10:10", "20:10", "x:5", "5"):
        with pytest.raises(InputError):
            parse_window(bad)
    cap = PowerCap.window(500.0, 10, 20)
    assert [cap.at(t) for t in (0, 9, 10, 19, 20, 99)] == [None, None, 500, 500, None, None]


def test_cap_schedule_file(tmp_path):
    good = tmp_path / "caps"
    good.write_text("# PA-HPC-SIM variable_power_caps\n0;1000\n\n3600;800.5\n7200;1200\n")
    assert PowerCap.from_file(good).steps == ((0, 1000.0), (3600, 800.5), (7200, 1200.0))
    cases = {"0;1000\n10\n": "expected 'time;watts'", "0;1000\nx;5\n": "integer",
             "0;-5\n": "> 0", "10;5\n5;5\n": "increase", "\n# nothing\n": "no step"}
    for k, (text, message) in enumerate(cases.items()):
        f = tmp_path / f"bad{k}"
        f.write_text(text)
        with pytest.raises(InputError, match=message) as err:
            PowerCap.from_file(f)
        assert err.value.file == str(f)


def test_power_accounting_of_a_hand_schedule():
    # A (1 core, 0-100 s, 300 W), B (1 core, 50-150 s, 200 W): platform power 300 W on
    # [0, 50), 500 on [50, 100), 200 on [100, 150): energy 15,000 + 25,000 + 10,000 =
    # 50,000 J, mean 50,000 / 150 = 333.3 W.
    # Cap 400 W on [40, 120): 80 s inside; energy inside 3,000 + 25,000 + 4,000 = 32,000
    # -> mean share 32,000 / (400 x 80) = 1.0; above the cap 50 of 80 s = 0.625; largest
    # excess (500 - 400) / 400 = 0.25; under-use (100/400 x 10 + 200/400 x 20) / 80 =
    # 0.15625; started inside: B of A, B = 0.5.
    from dispatchlab.power.accounting import platform_power

    jobs = JobTable.from_arrays(submit=[0, 50], run=[100, 100], units=[1, 1])
    jobs.columns.update(power_mean=np.array([300.0, 200.0]), power_max=np.array([300.0, 200.0]),
                        power_std=np.zeros(2))
    r = Simulation(Platform.pooled(4), jobs, FIFO(), cap=PowerCap.window(400.0, 40, 120)).run()
    times, watts = platform_power(r)
    assert times.tolist() == [0, 50, 100, 150] and watts.tolist() == [300, 500, 200, 0]
    s = run_summary(r)
    assert s["energy_j"] == pytest.approx(50_000)
    assert s["mean_power_w"] == pytest.approx(50_000 / 150)
    assert s["cap_mean_share"] == pytest.approx(1.0)
    assert s["cap_time_above_share"] == pytest.approx(0.625)
    assert s["cap_max_excess"] == pytest.approx(0.25)
    assert s["cap_mean_underuse"] == pytest.approx(0.15625)
    assert s["window_start_share"] == pytest.approx(0.5)
    # without power columns: no power metrics, None in the summary
    plain = run_summary(Simulation(Platform.pooled(4), JobTable.from_arrays(
        submit=[0, 50], run=[100, 100], units=[1, 1]), FIFO()).run())
    assert plain.get("energy_j") is None


def test_power_levels_change_the_accounted_power():
    # A at level 0.5 from t = 20 (identity duration model: still ends at 100):
    # 300 W on [0, 20), 150 on [20, 50), 350 on [50, 100), 200 on [100, 150)
    from dispatchlab.dispatch import SetPower
    from dispatchlab.power.accounting import platform_power

    class Halve(FIFO):
        def dispatch(self, view):
            if view.now == 0:
                view.wake_at(20)
            out = super().dispatch(view)
            return [*out, SetPower(0, 0.5)] if view.now == 20 else out

    jobs = JobTable.from_arrays(submit=[0, 50], run=[100, 100], units=[1, 1])
    jobs.columns.update(power_mean=np.array([300.0, 200.0]), power_max=np.array([300.0, 200.0]),
                        power_std=np.zeros(2))
    r = Simulation(Platform.pooled(4), jobs, Halve()).run()
    times, watts = platform_power(r)
    assert times.tolist() == [0, 20, 50, 100, 150]
    assert watts.tolist() == [300, 150, 350, 200, 0]
    assert run_summary(r)["energy_j"] == pytest.approx(300 * 20 + 150 * 30 + 350 * 50 + 200 * 50)
