"""Speed and power-level changes of running jobs: exact remaining work, the kill at the
wall-time, the duration model, the recorded segments, and the event queue's wake-ups."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dispatchlab import JobTable, Platform, Simulation
from dispatchlab.dispatch import FIFO, DispatchError, SetPower, SetSpeed
from dispatchlab.run.outputs import write_result
from dispatchlab.sim.duration import DurationModel


class Changer(FIFO):
    """FIFO that applies ``changes[t] = [decision, ...]`` at time t (waking itself)."""

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


def run(run_s, req, changes, overrun="run", duration_model=None):
    jobs = JobTable.from_arrays(submit=[0], run=[run_s], units=[1], requested_time=[req])
    return Simulation(Platform.pooled(1), jobs, Changer(changes), overrun=overrun,
                      duration_model=duration_model).run()


def test_one_thousand_changes_do_not_drift():
    # 1,000 changes, every 3 s from t = 1: speeds alternate 2/3 and 3/7. Closed form:
    # work left after each change, exact, then the end = last change + ceil(left / v).
    speeds = [0.6666666666666666, 0.42857142857142855]
    changes = {1 + 3 * k: [SetSpeed(0, speeds[k % 2])] for k in range(1000)}
    work, t, v = Fraction(100_000), 0, Fraction(1)
    for when in sorted(changes):
        work -= (when - t) * v
        t, v = when, Fraction(changes[when][0].speed)
    expected = t + math.ceil(work / v)
    r = run(100_000, 100_000, changes)
    assert r.end.tolist() == [expected]
    seg = r.segments
    assert len(seg["job"]) == 1000 and seg["time"][:3].tolist() == [1, 4, 7]
    assert seg["speed"][:2].tolist() == speeds and set(seg["power_level"]) == {1.0}
    table = r.segments_table()
    assert table.column_names == ["job_id", "time", "speed", "power_level"]
    assert table.num_rows == 1000 and set(table["job_id"].to_pylist()) == {1}


def test_segments_are_written_only_when_there_are_changes(tmp_path):
    write_result(run(100, 100, {}), tmp_path / "none")
    assert not (tmp_path / "none" / "segments.parquet").exists()
    write_result(run(100, 100, {10: [SetSpeed(0, 0.5)]}), tmp_path / "some")
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "some" / "segments.parquet")
    assert table.to_pylist() == [{"job_id": 1, "time": 10, "speed": 0.5, "power_level": 1.0}]


def test_a_slowed_job_is_killed_at_its_wall_time_in_wall_clock_time():
    # run 100 s, requested 120 s, halved at t = 50: 50 s of work left take 100 s, so it
    # would end at 150 > 120 = start + requested: killed at 120.
    r = run(100, 120, {50: [SetSpeed(0, 0.5)]}, overrun="kill")
    assert r.end.tolist() == [120]
    assert r.to_arrow()["status"].to_pylist() == ["killed"]
    # without the kill it ends at 150, completed
    r = run(100, 120, {50: [SetSpeed(0, 0.5)]})
    assert r.end.tolist() == [150]
    assert r.to_arrow()["status"].to_pylist() == ["completed"]
    # sped up, it completes before the wall-time: 50 + ceil(50 / 2) = 75
    r = run(100, 120, {50: [SetSpeed(0, 2.0)]}, overrun="kill")
    assert r.end.tolist() == [75] and r.to_arrow()["status"].to_pylist() == ["completed"]


class Linear(DurationModel):
    """speed = level (duration scales as 1 / level)."""

    name = "linear"

    def speed(self, job, level):
        return level


def test_set_power_uses_the_duration_model():
    # identity model (default): the level changes nothing in time: ends at 100
    r = run(100, 100, {40: [SetPower(0, 0.5)]})
    assert r.end.tolist() == [100]
    assert r.segments["power_level"].tolist() == [0.5]
    assert r.segments["speed"].tolist() == [1.0]
    # speed = level: 60 s of work at 0.5 from t = 40 -> 40 + 120 = 160; back to full
    # power at 100: 60 - 60 x 0.5 = 30 s left -> 130
    r = run(100, 100, {40: [SetPower(0, 0.5)]}, duration_model=Linear())
    assert r.end.tolist() == [160]
    r = run(100, 100, {40: [SetPower(0, 0.5)], 100: [SetPower(0, 1.0)]},
            duration_model=Linear())
    assert r.end.tolist() == [130]


@pytest.mark.parametrize("decision", [SetPower(0, 0.0), SetPower(0, 1.5), SetSpeed(0, 0.0),
                                      SetSpeed(0, float("inf")), SetPower(1, 0.5)])
def test_bad_rate_changes_are_dispatcher_errors(decision):
    with pytest.raises(DispatchError):
        run(100, 100, {10: [decision]})


def test_wake_ups_at_one_time_make_one_pass_each_time_point():
    # two wake-ups for t = 30 and one for t = 50: passes at 0, 30, 50 (and the job's end)
    class Waker(FIFO):
        def dispatch(self, view):
            if view.now == 0:
                view.wake_at(30)
                view.wake_at(30)
                view.wake_at(50)
            self.seen = [*getattr(self, "seen", []), view.now]
            return super().dispatch(view)

    jobs = JobTable.from_arrays(submit=[0], run=[100], units=[1])
    sim = Simulation(Platform.pooled(1), jobs, Waker())
    sim.run()
    assert sim.dispatcher.seen == [0, 30, 50]  # the pass at 100 has an empty queue
