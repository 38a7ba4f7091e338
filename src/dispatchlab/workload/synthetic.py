"""A seeded synthetic workload, for ``dispatchlab demo``, tests and quick experiments.

The model (every draw comes from one ``numpy.random.Generator(PCG64(seed))``, in a
fixed order, so the same parameters give the same table byte for byte):

1. **Users.** ``users`` users; user ``u`` (1-based) submits a share of the jobs
   proportional to ``1/u`` (a few heavy users, a long tail). Users are put in groups
   of four (``group = (u - 1) // 4 + 1``).
2. **Profiles.** Each user owns 2 to 6 *job profiles*: an application number ``app``
   (unique per profile), a size in ``units`` (1-core units), a base run time and a
   requested time. A user's job reuses one of its profiles (picked uniformly) with
   probability 0.8; otherwise it is a *one-off* job with a fresh profile and its own
   new ``app`` number. Jobs of one profile have the same ``app``, ``units`` and
   requested time and run times within 25 % of each other, so history-based
   predictors have something to learn.
3. **Sizes.** Log-uniform on ``1..cores`` (``floor(exp(U(0, ln(cores + 1))))``);
   with probability 0.75 the size is then rounded (in log scale) to a power of two
   no larger than ``cores``. Every job fits the platform.
4. **Run times.** The profile's base run time is log-uniform on
   ``[min_run, max_run]`` seconds (default 10 s .. 24 h); a job runs
   ``base x f`` with ``f`` log-uniform on ``[0.75, 1]``, rounded to the second.
5. **Requested times.** ``ceil_to_minute(base x factor)``, capped at
   ``ceil_to_minute(max_run)`` (a wall-time limit), where the over-estimation
   ``factor`` is log-uniform on ``[1, 10]``. With probability 0.15 a profile is
   *exact*: its base run is rounded up to a minute, its jobs run exactly that long
   and request exactly that (``run == requested``). So ``run <= requested``, except:
6. **Overruns.** A share ``overrun_share`` (default 2 %) of the jobs run slightly
   past their requested time: ``run = requested + max(1, ceil(requested x U(0, 0.05)))``.
7. **Arrivals.** A Poisson process: exponential inter-arrival gaps, scaled so that the
   submit span (last submit - first submit, seconds) is
   ``sum(units x run) / (load x cores)``, i.e. the *offered load*
   ``sum(units x run) / (cores x span)`` is ``load`` up to rounding to whole seconds.
   Times start at ``start_time`` (s); submit times are non-decreasing and the rows are
   in arrival order (ties keep that order).

Columns: ``job_id`` 1..n, ``submit``, ``run``, ``units`` = ``req_procs`` =
``alloc_procs``, ``requested_time`` = ``req_time``, ``user``, ``group``, ``app``,
``queue`` (1 when requested <= 1 h, 2 when <= 12 h, 3 above), ``status`` 1
(completed), ``line`` 0; every other SWF field -1; one core per unit.
``info.source`` is ``"<synthetic seed=S>"``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
from numpy.random import PCG64, Generator

from dispatchlab.core.errors import InputError
from dispatchlab.workload.jobs import JobTable, TraceInfo

#: Probability that a job reuses one of its user's profiles (else a one-off job).
REPEAT_PROBABILITY = 0.8
#: Probability that a size is rounded to a power of two.
POWER_OF_TWO_PROBABILITY = 0.75
#: Probability that a profile has an exact requested time.
EXACT_PROBABILITY = 0.15
#: Range of the log-uniform over-estimation factor.
FACTOR_RANGE = (1.0, 10.0)
#: Range of the log-uniform run-time variation inside a profile.
JITTER_RANGE = (0.75, 1.0)
#: Largest relative overrun of an overrunning job.
MAX_OVERRUN = 0.05
#: Number of profiles per user: integers in [lo, hi].
PROFILES_PER_USER = (2, 6)


def _check_int(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise InputError(f"{name} must be an integer, got {value!r}", field=name)
    if value < low:
        raise InputError(f"{name} must be >= {low}, got {value}", field=name)
    return int(value)


def _check_real(name: str, value: object, low: float, high: float, *, open_low: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InputError(f"{name} must be a number, got {value!r}", field=name)
    x = float(value)
    too_low = x <= low if open_low else x < low
    if not math.isfinite(x) or too_low or x > high:
        bracket = "(" if open_low else "["
        raise InputError(f"{name} must be in {bracket}{low}, {high}], got {value!r}", field=name)
    return x


def _log_uniform(rng: Generator, lo: float, hi: float, size: int) -> np.ndarray:
    return np.exp(rng.uniform(math.log(lo), math.log(hi), size))


def _ceil_minute(seconds: np.ndarray) -> np.ndarray:
    return (np.ceil(np.asarray(seconds, dtype=np.float64) / 60.0) * 60.0).astype(np.int64)


def _sizes(rng: Generator, count: int, cores: int) -> np.ndarray:
    """Log-uniform units in 1..cores, rounded to powers of two with probability 0.75."""
    raw = np.exp(rng.uniform(0.0, math.log(cores + 1), count))
    units = np.clip(np.floor(raw), 1, cores).astype(np.int64)
    max_exp = cores.bit_length() - 1  # largest power of two <= cores is 2**max_exp
    pow2 = np.left_shift(1, np.clip(np.rint(np.log2(raw)), 0, max_exp).astype(np.int64))
    to_pow2 = rng.random(count) < POWER_OF_TWO_PROBABILITY
    return np.where(to_pow2, pow2, units).astype(np.int64)


def _profiles(
    rng: Generator, count: int, cores: int, min_run: int, max_run: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Units, base run (float s), requested time (s) and exactness of ``count`` profiles."""
    units = _sizes(rng, count, cores)
    base = _log_uniform(rng, min_run, max_run, count)
    factor = _log_uniform(rng, *FACTOR_RANGE, count)
    exact = rng.random(count) < EXACT_PROBABILITY
    limit = int(_ceil_minute(np.array([max_run]))[0])
    base = np.where(exact, _ceil_minute(base), base)
    requested = np.where(exact, _ceil_minute(base), _ceil_minute(base * factor))
    return units, base, np.minimum(requested, limit), exact


def generate_synthetic(
    n_jobs: int = 1000,
    cores: int = 128,
    seed: int = 0,
    load: float = 0.9,
    *,
    users: int = 16,
    min_run: int = 10,
    max_run: int = 86_400,
    overrun_share: float = 0.02,
    start_time: int = 0,
) -> JobTable:
    """Generate ``n_jobs`` jobs for a platform of ``cores`` cores (see the module docstring).

    ``load`` is the target offered load (default 0.9, so queues form and backfilling
    matters; above 1 the system is overloaded). ``min_run``/``max_run`` bound the base
    run times (s); ``max_run`` rounded up to a minute is also the wall-time limit.
    ``overrun_share`` is the share of jobs that run past their requested time.
    Raises :class:`InputError` for invalid parameters.
    """
    n = _check_int("n_jobs", n_jobs, 1)
    cores = _check_int("cores", cores, 1)
    seed = _check_int("seed", seed, 0)
    load = _check_real("load", load, 0.0, math.inf, open_low=True)
    users = _check_int("users", users, 1)
    min_run = _check_int("min_run", min_run, 1)
    max_run = _check_int("max_run", max_run, min_run)
    overrun_share = _check_real("overrun_share", overrun_share, 0.0, 1.0, open_low=False)
    if isinstance(start_time, bool) or not isinstance(start_time, Integral):
        raise InputError(f"start_time must be an integer, got {start_time!r}", field="start_time")

    rng = Generator(PCG64(seed))

    # 1-2. Users and their profiles (profile p of user u has app number p + 1).
    user_weight = 1.0 / np.arange(1, users + 1)
    n_profiles = rng.integers(PROFILES_PER_USER[0], PROFILES_PER_USER[1] + 1, users)
    first_profile = np.concatenate(([0], np.cumsum(n_profiles)[:-1]))
    p_units, p_base, p_requested, p_exact = _profiles(
        rng, int(n_profiles.sum()), cores, min_run, max_run
    )

    # 3. Jobs: user, then one of the user's profiles or a one-off profile.
    user = rng.choice(users, size=n, p=user_weight / user_weight.sum())
    profile = first_profile[user] + rng.integers(0, n_profiles[user])
    one_off = rng.random(n) >= REPEAT_PROBABILITY
    o_units, o_base, o_requested, o_exact = _profiles(
        rng, int(one_off.sum()), cores, min_run, max_run
    )
    units = p_units[profile]
    base = p_base[profile]
    requested = p_requested[profile]
    exact = p_exact[profile]
    app = profile + 1
    units[one_off] = o_units
    base[one_off] = o_base
    requested[one_off] = o_requested
    exact[one_off] = o_exact
    app[one_off] = len(p_units) + 1 + np.arange(len(o_units))

    # 4. Run times within a profile; exact profiles run exactly their request.
    jitter = _log_uniform(rng, *JITTER_RANGE, n)
    run = np.where(exact, requested, np.rint(base * jitter)).astype(np.int64)
    run = np.minimum(run, requested)

    # 6. A few slight overruns.
    overrun = rng.random(n) < overrun_share
    extra = np.maximum(1, np.ceil(requested * rng.uniform(0.0, MAX_OVERRUN, n))).astype(np.int64)
    run = np.where(overrun, requested + extra, run)

    # 7. Poisson arrivals scaled to the offered load.
    work = float(np.dot(units.astype(np.float64), run))
    span = work / (load * cores)
    gaps = rng.exponential(1.0, n - 1)
    arrival = np.concatenate(([0.0], np.cumsum(gaps)))
    if n > 1 and arrival[-1] > 0:
        arrival = arrival / arrival[-1] * span
    submit = int(start_time) + np.floor(arrival).astype(np.int64)

    queue = np.where(requested <= 3600, 1, np.where(requested <= 43_200, 2, 3))
    info = TraceInfo(
        source=f"<synthetic seed={seed}>",
        header={
            "Note": (
                f"synthetic workload: n_jobs={n} cores={cores} seed={seed} load={load} "
                f"users={users} min_run={min_run} max_run={max_run} "
                f"overrun_share={overrun_share}"
            )
        },
        max_procs=cores,
        max_runtime=int(_ceil_minute(np.array([max_run]))[0]),
        max_jobs=n,
        max_records=n,
    )
    return JobTable.from_arrays(
        submit=submit,
        run=run,
        units=units,
        requested_time=requested,
        info=info,
        alloc_procs=units,
        user=user + 1,
        group=user // 4 + 1,
        app=app,
        queue=queue,
        status=np.ones(n, dtype=np.int64),
    )
