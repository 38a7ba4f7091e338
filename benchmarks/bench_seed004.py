"""Borghesi et al. 2018 power-capping benchmark: the per-run cost of the campaign's methods.

The Borghesi et al. 2018 campaigns (``examples/campaigns/seed004-*.toml``, ~8,450 runs) must run
in under an hour on 2 workers, i.e. < 0.85 s per run on average. This benchmark runs a
few representative runs on the 64-node Eurora preset and prints, per run, the CPU and
wall seconds of the simulation (``time.process_time``, steadier than wall time on a
shared machine, and ``time.perf_counter``; the reference run and the instance are not counted), the
dispatch passes, the decision-time stats (``result.decision_times``: sum, mean, p99,
max) and, for CP methods, ``cp_passes`` and ``cp_improved_share``. Every run is done
twice and the schedules (start, end, segments) must be identical (determinism).

Instances (:func:`dispatchlab.power.eurora_synth.eurora_instance`, seed 0):
``400j-burst`` (400 jobs in 300 s, one burst of 400) and ``100j-uniform`` (100 jobs
uniform over 3,600 s). Caps: 0.3 and 0.5 of the peak power of a reference uncapped
``bf`` run (as the campaign's ``cap_base = "bf-peak"``). Power predictor: ``real``.
Methods: ``dec``, ``rapl-dynshare`` with ``factor:f=1`` and ``mixed:profile=dynshare``,
``dec-rapl`` (mixed), ``ls`` and ``bf``.

Usage::

    python benchmarks/bench_seed004.py [--only dec,ls] [--caps 0.3,0.5]
        [--instances 400j-burst] [--dec-max 6.0] [--dec-limit 0.1] [--no-repeat]
        [--dec-conflicts 50] [--dec-no-presolve]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from dispatchlab import Simulation
from dispatchlab.dispatch import make_dispatcher
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power import PowerCap
from dispatchlab.power.accounting import platform_power
from dispatchlab.power.eurora_synth import eurora_instance
from dispatchlab.predict.power.predictors import RealPowerPredictor
from dispatchlab.sim.duration import Factor, MixedFactor, NoSlowdown

#: the campaign target: seconds per run on average
TARGET_S = 0.85

INSTANCES = {
    "400j-burst": lambda: eurora_instance(400, 300, "burst", seed=0, burst_size=400),
    "100j-uniform": lambda: eurora_instance(100, 3600, "uniform", seed=0),
}

#: (label, dispatcher name, duration model factory)
METHODS = (
    ("dec", "dec", NoSlowdown),
    ("dynshare-1", "rapl-dynshare", lambda: Factor(f=1.0)),
    ("dynshare-mixed", "rapl-dynshare", lambda: MixedFactor("dynshare")),
    ("dec-rapl", "dec-rapl", lambda: MixedFactor("dynshare")),
    ("ls", "ls", NoSlowdown),
    ("bf", "bf", NoSlowdown),
)


def reference_peak(platform, jobs) -> float:
    """The peak platform power (W) of an uncapped ``bf`` run (the campaign's bf-peak)."""
    ref = Simulation(platform, jobs, make_dispatcher("bf"),
                     power_predictor=RealPowerPredictor()).run()
    _, watts = platform_power(ref)
    return float(watts.max()) if len(watts) else 0.0


def dispatcher(name: str, dec_params: dict):
    if name == "dec":
        return make_dispatcher("dec", **dec_params)
    if name == "dec-rapl" and dec_params:
        return make_dispatcher("dec-rapl", high=make_dispatcher("dec", **dec_params))
    return make_dispatcher(name)


def run_once(platform, jobs, name, model, cap, dec_params):
    t0, w0 = time.process_time(), time.perf_counter()
    res = Simulation(platform, jobs, dispatcher(name, dec_params),
                     power_predictor=RealPowerPredictor(), cap=cap,
                     duration_model=model()).run()
    return res, time.process_time() - t0, time.perf_counter() - w0


def schedule(res) -> tuple:
    seg = res.segments
    segs = () if seg is None else tuple(tuple(np.asarray(v).tolist()) for v in seg.values())
    return res.start.tolist(), res.end.tolist(), segs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated method labels")
    ap.add_argument("--caps", default="0.3,0.5")
    ap.add_argument("--instances", default=",".join(INSTANCES))
    ap.add_argument("--dec-limit", type=float, default=None, help="DEC time_limit")
    ap.add_argument("--dec-max", type=float, default=None, help="DEC max_time_limit")
    ap.add_argument("--dec-conflicts", type=int, default=None,
                    help="DEC conflicts (CP-SAT's conflict budget per solve)")
    ap.add_argument("--dec-no-presolve", action="store_true", help="DEC presolve=false")
    ap.add_argument("--no-repeat", action="store_true", help="skip the determinism rerun")
    args = ap.parse_args(argv)
    only = {s for s in args.only.split(",") if s}
    caps = [float(c) for c in args.caps.split(",") if c]
    dec_params = {}
    if args.dec_limit is not None:
        dec_params["time_limit"] = args.dec_limit
    if args.dec_max is not None:
        dec_params["max_time_limit"] = args.dec_max
    if args.dec_conflicts is not None:
        dec_params["conflicts"] = args.dec_conflicts
    if args.dec_no_presolve:
        dec_params["presolve"] = False

    platform = eurora_platform()
    totals: dict[str, float] = {}
    ok = True
    print(f"{'instance':13} {'cap':>4} {'method':15} {'cpu s':>7} {'wall s':>7} {'passes':>6} "
          f"{'dec sum':>8} {'mean ms':>8} {'p99 ms':>8} {'max ms':>8} {'cp':>5} "
          f"{'impr':>5} det")
    for label in [s for s in args.instances.split(",") if s]:
        jobs = INSTANCES[label]()
        peak = reference_peak(platform, jobs)
        for share in caps:
            cap = PowerCap.window(share * peak)
            for mlabel, name, model in METHODS:
                if only and mlabel not in only:
                    continue
                res, cpu, wall = run_once(platform, jobs, name, model, cap, dec_params)
                same = "-"
                if not args.no_repeat:
                    again, _, _ = run_once(platform, jobs, name, model, cap, dec_params)
                    same = "yes" if schedule(res) == schedule(again) else "NO"
                    ok &= same == "yes"
                dt = np.asarray(res.decision_times, dtype=np.float64)
                facts = res.dispatcher_facts or {}
                share_imp = facts.get("cp_improved_share")
                print(f"{label:13} {share:4.2f} {mlabel:15} {cpu:7.2f} {wall:7.2f} {res.passes:6d} "
                      f"{dt.sum():8.2f} {1e3 * dt.mean():8.2f} "
                      f"{1e3 * np.percentile(dt, 99):8.2f} {1e3 * dt.max():8.2f} "
                      f"{facts.get('cp_passes', ''):>5} "
                      f"{'' if share_imp is None else f'{share_imp:.2f}':>5} {same}",
                      flush=True)
                totals[mlabel] = totals.get(mlabel, 0.0) + cpu
    print("total CPU s per method: " + ", ".join(f"{k} {v:.2f}" for k, v in totals.items()))
    if not ok:
        print("NOT DETERMINISTIC", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
