"""RAPL DynShare benchmark: ``rapl-dynshare`` with 5-s periods on the 64-node Eurora
preset over one simulated day, against a 30 s target.

The day: a synthetic Eurora instance (:func:`dispatchlab.power.eurora_synth.
eurora_instance`: Eurora-like sizes, wall-times, run times and dummy-model power)
of ``--jobs`` jobs (default 1,000) arriving uniformly over 86,400 s, seed 0. The budget
is ``--share`` (default 0.4) of the peak power of a reference uncapped run (BF without a
power check, i.e. the admission dispatcher alone), so that DynShare throttles most of
the day. Duration model: ``mixed`` with the DynShare profile when present, else the
factor F = 0.5. Power predictor: ``real``.

Reported: wall seconds of the capped simulation (in-process, the run alone: building
the instance and the reference run are not counted), jobs/s, simulated span (s),
passes, ``SetPower`` changes (segments), the wall time per simulated day (at a 40 %
budget the queue outlasts the arrival day), the peak RSS of the process (MB,
``resource``), and the budget metrics (time above the cap, max
excess). Determinism: the run is repeated and the schedules (start, end, segments) must
be identical.

Usage::

    python benchmarks/bench_rapl.py [--jobs 2000] [--share 0.4] [--period 5]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

from dispatchlab import Simulation
from dispatchlab.dispatch.powercap.budget import BF
from dispatchlab.dispatch.powercap.rapl import RaplDynShare
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power import PowerCap
from dispatchlab.power.accounting import platform_power, power_facts
from dispatchlab.power.eurora_synth import eurora_instance
from dispatchlab.predict.power.predictors import RealPowerPredictor

TARGET_S = 30.0
DAY = 86_400


def duration_model():
    try:
        from dispatchlab.sim.duration import MixedFactor

        return MixedFactor(profile="dynshare", seed=0)
    except (ImportError, TypeError):  # pragma: no cover - older duration module
        from dispatchlab.sim.duration import Factor

        return Factor(0.5)


def simulate(platform, jobs, dispatcher, cap):
    return Simulation(platform, jobs, dispatcher, power_predictor=RealPowerPredictor(),
                      cap=cap, duration_model=duration_model()).run()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--share", type=float, default=0.4)
    ap.add_argument("--period", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    platform = eurora_platform()
    jobs = eurora_instance(args.jobs, DAY, "uniform", seed=args.seed)
    ref = simulate(platform, jobs, BF(power_check=False), None)
    peak = float(platform_power(ref)[1].max())
    cap = PowerCap.window(args.share * peak)
    disp = RaplDynShare(period=args.period)

    t0 = time.perf_counter()
    first = simulate(platform, jobs, disp, cap)
    wall = time.perf_counter() - t0

    second = simulate(platform, jobs, disp, cap)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    same = (np.array_equal(first.start, second.start)
            and np.array_equal(first.end, second.end)
            and (first.segments is None) == (second.segments is None)
            and (first.segments is None
                 or all(np.array_equal(first.segments[k], second.segments[k])
                        for k in first.segments)))
    span = int(first.end.max() - first.start[first.start >= 0].min())
    changes = 0 if first.segments is None else len(first.segments["job"])
    facts = power_facts(first)
    print(f"eurora 64 nodes, {len(jobs)} jobs over {DAY} s (seed {args.seed}), cap "
          f"{args.share:.0%} of the uncapped peak {peak:.0f} W = {args.share * peak:.0f} W, "
          f"period {args.period} s")
    print(f"  wall {wall:.2f} s (target {TARGET_S:.0f} s), {len(jobs) / wall:.0f} jobs/s, "
          f"simulated span {span} s, passes {first.passes}, SetPower changes {changes}")
    print(f"  wall per simulated day {wall * DAY / span:.2f} s; peak RSS of the process "
          f"{peak_mb:.0f} MB")
    print(f"  time above the cap {facts.get('cap_time_above_share', 0):.4f}, max excess "
          f"{facts.get('cap_max_excess', 0):.3f}, mean power / cap "
          f"{facts.get('cap_mean_share', 0):.3f}")
    print(f"  deterministic: {'yes' if same else 'NO'}")
    ok = same and wall < TARGET_S
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
