"""Borghesi et al. 2018's synthetic instances on the Eurora platform: Eurora-like jobs, three
arrival
modes (uniform, left-skewed, burst), Eurora-like power. *Ours* throughout, from the
paper's description (section 5: "the features of each job ... are drawn from random
distributions defined by parameters learned from past workloads"; "in the synthetic
benchmarks there are no such short jobs", i.e. none under one minute).

:func:`eurora_instance` draws ``n_jobs`` jobs with one ``Generator(PCG64(seed))`` in a
fixed order (same arguments, same table byte for byte).

Job model (:class:`EuroraModel`, one :class:`QueueModel` per queue)
-------------------------------------------------------------------
1. **Queue** with the queue's share of the jobs.
2. **Size**, given the queue: one *size class* ``(units, core, gpu, mic, mem)`` (per-unit
   requests as the Eurora reader gives them, memory in KB) with its share in the queue.
3. **Wall-time** (``requested_time`` = ``req_time``), given the queue: one of the
   queue's wall-times with its share.
4. **Run**, given the queue: ``run = clip(round(wall x f), 60, wall)`` with ``f`` drawn
   from the queue's distribution of ``run / wall`` (piecewise-linear inverse CDF through
   its 5 %-quantiles, :data:`FRACTION_LEVELS`); so ``60 <= run <= requested_time``.
5. **Application type** ``app`` (0 average, 1 CPU-bound, 2 memory-bound), given the
   queue.

The parameters come either from a Eurora job table (``source=``: :func:`fit_eurora_model`
on it, the *empirical* distributions: every size class and wall-time, exact quantiles)
or from :data:`EURORA_MODEL`, frozen here, measured once on the PA-HPC-SIM test data
(``Eurora-PA-HPC-SIM-testdata.tar.gz``): all 206 historical instances read with
:func:`dispatchlab.workload.eurora.read_eurora_archive`, each job id once (5,930 unique
jobs), keeping the 4,964 jobs with ``run >= 60`` s, then :func:`fit_eurora_model` with
``min_share = 0.01`` (size classes and wall-times below 1 % of their queue dropped and
the rest renormalised), shares rounded to 4 decimals. ``tests/power/test_seed004_data.py``
re-derives them from the archive when it is present.

Power (per job, W of the whole job; ``power_mean`` = ``power_max``, ``power_std`` 0 as
in the Eurora data, which has one value per job): PA-HPC-SIM's dummy model
``40 W x nodes + 62 W x GPUs + 115 W x MICs`` (PA-HPC-SIM's code, nodes = units) times a
log-normal noise ``exp(N(0, power_noise))`` (default ``power_noise`` =
:data:`POWER_NOISE` = 0.25, ours), then PA's per-job rules
(:func:`dispatchlab.power.data.eurora_job_power`: at least 1 W, per node rounded up and
capped at 400 W). For reference, the archive's ML power predictions are lower than the
dummy model (median ratio 0.475, log-sd 1.0 over its 4,795 jobs with a prediction):
the paper's "Eurora-like" power is the dummy model's scale (ours, labelled).

Arrivals within ``[0, window_s)`` (integer seconds; rows sorted by submit, job ids
1..n in that order):

* ``uniform``: ``floor(window x U(0, 1))`` per job;
* ``left-skewed``: ``floor(window x B)`` with ``B ~ Beta(1, 3)`` (density ``3(1 - x)^2``:
  median ``1 - 2^(-1/3) = 0.206`` of the window against 0.5 for uniform; ours);
* ``burst``: the jobs, in draw order, form consecutive *groups* ("jobs arrive in
  groups", Borghesi et al. 2018, section 5, which gives no number of groups) and **all
  the jobs of a group arrive at the same second**. Either ``bursts = G`` groups (sizes
  as even as possible: the first ``n_jobs mod G`` groups have one job more; at most
  ``n_jobs`` groups: with ``G > n_jobs`` every job is its own group) or groups of
  ``burst_size`` jobs (the last group may be smaller); neither: ``bursts`` =
  :data:`DEFAULT_BURSTS` = 10 groups (the number is ours). The groups' seconds are
  **distinct** when there are no more groups than seconds in the window (a uniform draw
  without replacement: group ``g`` takes the ``floor(U x (window - g))``-th second not
  yet taken, one uniform per group), so the instance has exactly that many arrival
  seconds; with more groups than seconds each group draws ``floor(window x U)`` on its
  own (groups then share seconds). Borghesi et al. 2018's "200 (400) jobs in 300 s,
  burst arrival" is ``eurora_instance(200, 300, "burst", ...)``: 10 groups of 20 (40).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path

import numpy as np
from numpy.random import PCG64, Generator

from dispatchlab.core.errors import InputError
from dispatchlab.power.data import eurora_job_power
from dispatchlab.workload.generate import write_generated
from dispatchlab.workload.jobs import FLOAT_FIELDS, SWF_FIELDS, JobTable, TraceInfo
from dispatchlab.workload.swf import finish_table
from dispatchlab.workload.tables import write_parquet

__all__ = [
    "ARRIVALS",
    "EURORA_MODEL",
    "FRACTION_LEVELS",
    "MIN_RUN",
    "POWER_NOISE",
    "EuroraModel",
    "QueueModel",
    "eurora_instance",
    "fit_eurora_model",
    "write_instance",
]

#: arrival modes
ARRIVALS = ("uniform", "left-skewed", "burst")
#: no synthetic job is shorter than this (s): Borghesi et al. 2018
MIN_RUN = 60
#: quantile levels of the run / wall-time distributions (0, 0.05, ..., 1)
FRACTION_LEVELS: tuple[float, ...] = tuple(k / 20 for k in range(21))
#: sd of the log-normal noise on the dummy power model (ours)
POWER_NOISE = 0.25
#: Beta(1, 3): the left-skewed arrival shape (ours)
LEFT_SKEW = (1.0, 3.0)
#: groups (bursts) per ``burst`` instance when neither ``bursts`` nor ``burst_size`` is
#: given (ours: Borghesi et al. 2018 say "jobs arrive in groups" without a number)
DEFAULT_BURSTS = 10
#: PA-HPC-SIM's dummy power model (W per node, per GPU, per MIC)
DUMMY_NODE, DUMMY_GPU, DUMMY_MIC = 40.0, 62.0, 115.0


@dataclass(frozen=True)
class QueueModel:
    """One queue's jobs: ``share`` of all jobs; size classes ``(units, core, gpu, mic,
    mem KB)`` per unit with their shares; wall-times (s) with their shares; quantiles of
    ``run / wall`` at :data:`FRACTION_LEVELS`; shares of app types 0, 1, 2."""

    name: str
    share: float
    sizes: tuple[tuple[int, int, int, int, int], ...]
    size_p: tuple[float, ...]
    walls: tuple[int, ...]
    wall_p: tuple[float, ...]
    fraction: tuple[float, ...]
    app_p: tuple[float, float, float]


@dataclass(frozen=True)
class EuroraModel:
    """The queues of a Eurora-like workload (see the module docstring)."""

    queues: tuple[QueueModel, ...]


def _shares(values: np.ndarray, min_share: float) -> tuple[list, list[float]]:
    """Distinct values by decreasing count (ties: ascending value) and their shares,
    dropping those below ``min_share`` and renormalising."""
    if values.ndim == 1:
        uniq, counts = np.unique(values, return_counts=True)
        keys = [int(v) for v in uniq]
    else:
        uniq, counts = np.unique(values, axis=0, return_counts=True)
        keys = [tuple(int(x) for x in row) for row in uniq]
    order = sorted(range(len(keys)), key=lambda i: (-counts[i], keys[i]))
    total = counts.sum()
    kept = [i for i in order if counts[i] / total >= min_share] or order[:1]
    s = float(sum(counts[i] for i in kept))
    return [keys[i] for i in kept], [float(counts[i]) / s for i in kept]


def fit_eurora_model(source: JobTable, *, min_share: float = 0.0, min_run: int = MIN_RUN,
                     digits: int | None = None) -> EuroraModel:
    """The :class:`EuroraModel` of a Eurora job table (the reader's columns: ``queue``
    with names in ``info.codes["queue"]``, ``app``, resources ``core``/``gpu``/``mic``/
    ``mem``), over its jobs with ``run >= min_run``. Size classes and wall-times with a
    share below ``min_share`` of their queue are dropped (the rest renormalised; 0 keeps
    the full empirical distributions); ``digits`` rounds shares and quantiles.
    :class:`InputError` when no job is long enough."""
    run = np.asarray(source["run"], dtype=np.int64)
    keep = run >= min_run
    if not keep.any():
        raise InputError(f"no job of the source runs {min_run} s or more", field="source")
    n = len(source)
    res = source.resources

    def resource(name: str) -> np.ndarray:
        v = res.get(name)
        return np.zeros(n, np.int64) if v is None else np.asarray(v, dtype=np.int64)

    sizes = np.stack([np.asarray(source["units"], np.int64), resource("core"),
                      resource("gpu"), resource("mic"), resource("mem")], axis=1)
    wall = np.asarray(source["requested_time"], dtype=np.int64)
    app = np.asarray(source["app"], dtype=np.int64)
    queue = np.asarray(source["queue"], dtype=np.int64)
    names = (source.info.codes or {}).get("queue")
    keep &= wall >= min_run
    rnd = (lambda x: round(x, digits)) if digits is not None else (lambda x: x)
    out = []
    total = int(keep.sum())
    for code in np.unique(queue[keep]):
        m = keep & (queue == code)
        qname = names[int(code)] if names and 0 <= code < len(names) else str(int(code))
        size_keys, size_p = _shares(sizes[m], min_share)
        wall_keys, wall_p = _shares(wall[m], min_share)
        frac = np.quantile(run[m] / wall[m], FRACTION_LEVELS)
        apps = np.bincount(np.clip(app[m], 0, 2), minlength=3) / m.sum()
        out.append(QueueModel(
            qname, rnd(float(m.sum() / total)), tuple(size_keys), tuple(rnd(p) for p in size_p),
            tuple(wall_keys), tuple(rnd(p) for p in wall_p),
            tuple(rnd(float(f)) for f in frac),
            (rnd(float(apps[0])), rnd(float(apps[1])), rnd(float(apps[2])))))
    out.sort(key=lambda q: (-q.share, q.name))
    return EuroraModel(tuple(out))


#: The frozen model. Measured as the module docstring says: the 5,930 unique jobs of the
#: 206 historical instances of Eurora-PA-HPC-SIM-testdata.tar.gz (first occurrence of each
#: job id), ``fit_eurora_model(jobs, min_share=0.01, digits=4)`` (so on the 4,964 jobs
#: with run >= 60 s); ``tests/power/test_seed004_data.py`` re-derives it from the archive.
EURORA_MODEL = EuroraModel(queues=(
    QueueModel(
        "parallel", 0.4736,
        sizes=((1, 8, 0, 0, 204800), (1, 1, 1, 0, 1048576), (1, 1, 0, 0, 8388608),
               (1, 16, 0, 0, 10485760), (1, 8, 0, 0, 1048576), (1, 2, 2, 0, 1048576),
               (1, 16, 0, 0, 14680064), (1, 8, 1, 0, 4194304), (1, 12, 0, 0, 12582912),
               (1, 16, 2, 0, 14680064), (1, 2, 2, 0, 2097152), (2, 16, 0, 0, 1048576)),
        size_p=(0.3777, 0.2128, 0.157, 0.0643, 0.0578, 0.0269, 0.0234, 0.0189, 0.0189,
                0.0154, 0.0149, 0.012),
        walls=(14400, 12600, 14340, 3600),
        wall_p=(0.8232, 0.1368, 0.0287, 0.0113),
        fraction=(0.0043, 0.0174, 0.0255, 0.0312, 0.0366, 0.042, 0.0526, 0.0668, 0.1156,
                  0.2795, 0.3559, 0.3837, 0.4892, 0.5411, 0.7208, 0.8503, 0.9882, 1.0, 1.0,
                  1.0, 1.0),
        app_p=(0.5393, 0.3046, 0.1561)),
    QueueModel(
        "debug", 0.4307,
        sizes=((1, 1, 0, 0, 4194304), (1, 16, 0, 0, 14680064)),
        size_p=(0.9758, 0.0242),
        walls=(1800, 600),
        wall_p=(0.989, 0.011),
        fraction=(0.0333, 0.0411, 0.0572, 0.077, 0.1011, 0.12, 0.1344, 0.1594, 0.2488,
                  0.4146, 0.5, 0.6523, 0.9961, 0.9967, 0.9967, 0.9972, 0.9972, 0.9978,
                  0.9983, 1.0, 1.0),
        app_p=(0.5472, 0.3026, 0.1501)),
    QueueModel(
        "R", 0.056,
        sizes=((1, 14, 0, 0, 8388608), (1, 2, 2, 0, 1048576), (1, 1, 0, 0, 2097152),
               (1, 8, 0, 0, 4194304), (11, 16, 0, 0, 14680064), (1, 8, 0, 0, 7340032),
               (1, 8, 0, 0, 1048576), (1, 1, 0, 0, 1048576), (1, 16, 0, 0, 1048576),
               (1, 8, 0, 0, 6291456), (1, 16, 0, 0, 13631488), (1, 8, 0, 0, 14680064),
               (1, 16, 0, 1, 14680064), (8, 16, 0, 0, 13631488), (1, 8, 0, 0, 2097152)),
        size_p=(0.2433, 0.1103, 0.1027, 0.0798, 0.0798, 0.0646, 0.057, 0.0456, 0.0456,
                0.0418, 0.0418, 0.0266, 0.0266, 0.0228, 0.0114),
        walls=(5400, 14400, 21600, 3600, 28800, 1800),
        wall_p=(0.3357, 0.296, 0.1805, 0.0975, 0.0794, 0.0108),
        fraction=(0.0029, 0.0047, 0.0065, 0.0113, 0.0236, 0.065, 0.1354, 0.2975, 0.5407,
                  0.542, 0.6667, 0.6669, 0.6669, 0.6669, 0.6685, 0.987, 0.9878, 0.9937, 1.0,
                  1.0, 1.0),
        app_p=(0.5288, 0.3165, 0.1547)),
    QueueModel(
        "np_longpar", 0.0397,
        sizes=((1, 1, 0, 0, 1048576), (1, 8, 0, 0, 1048576), (1, 6, 2, 0, 4194304),
               (1, 8, 0, 0, 14680064), (1, 16, 2, 0, 1048576), (4, 16, 0, 0, 4194304),
               (1, 4, 0, 0, 1048576), (1, 4, 0, 0, 14680064), (1, 5, 2, 0, 4194304),
               (1, 12, 0, 0, 14680064), (1, 16, 2, 0, 2097152), (1, 6, 2, 0, 2097152),
               (6, 8, 0, 0, 14680064)),
        size_p=(0.6198, 0.1302, 0.0521, 0.0365, 0.0312, 0.026, 0.0208, 0.0156, 0.0156,
                0.0156, 0.0156, 0.0104, 0.0104),
        walls=(28800, 14400),
        wall_p=(0.9746, 0.0254),
        fraction=(0.0027, 0.2453, 0.9429, 0.9903, 0.9905, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
                  1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
        app_p=(0.5635, 0.269, 0.1675)),
))


def _check_count(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise InputError(f"{name} must be an integer >= {low}, got {value!r}", field=name)
    return int(value)


def _draw(rng: Generator, p: tuple[float, ...], size: int) -> np.ndarray:
    """Indices drawn with probabilities ``p`` (normalised) by inversion of one uniform
    each (stable across numpy versions)."""
    cdf = np.cumsum(np.asarray(p, dtype=np.float64))
    cdf /= cdf[-1]
    return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), len(p) - 1)


def _group_sizes(n: int, bursts: int | None, burst_size: int | None) -> np.ndarray:
    """Sizes of the consecutive groups of a ``burst`` instance (see the module
    docstring): ``burst_size`` jobs each (the last one smaller), or ``bursts`` groups
    (default :data:`DEFAULT_BURSTS`, at most ``n``) as even as possible."""
    if burst_size is not None:
        groups = -(-n // burst_size)
        sizes = np.full(groups, burst_size, dtype=np.int64)
        sizes[-1] = n - burst_size * (groups - 1)
        return sizes
    groups = min(n, DEFAULT_BURSTS if bursts is None else bursts)
    sizes = np.full(groups, n // groups, dtype=np.int64)
    sizes[:n % groups] += 1
    return sizes


def _distinct_seconds(u: np.ndarray, window: int) -> np.ndarray:
    """Distinct seconds of ``[0, window)``, one per uniform of ``u`` (``len(u) <=
    window``): the ``g``-th takes the ``floor(u[g] x (window - g))``-th second not taken
    by the earlier ones, a uniform draw without replacement."""
    from bisect import bisect_right, insort

    taken: list[int] = []
    out = np.empty(len(u), dtype=np.int64)
    for g, x in enumerate(u.tolist()):
        k = min(int(x * (window - g)), window - g - 1)  # the k-th free second (0-based)
        s = k
        while True:  # the smallest s with k free seconds before it and s itself free
            t = k + bisect_right(taken, s)
            if t == s:
                break
            s = t
        insort(taken, s)
        out[g] = s
    return out


def _arrivals(rng: Generator, n: int, window: int, arrival: str,
              burst_size: int | None, bursts: int | None = None) -> np.ndarray:
    if arrival == "uniform":
        x = rng.random(n)
    elif arrival == "left-skewed":
        x = rng.beta(*LEFT_SKEW, size=n)
    else:
        sizes = _group_sizes(n, bursts, burst_size)
        u = rng.random(len(sizes))
        if len(sizes) <= window:
            return np.repeat(_distinct_seconds(u, window), sizes)
        x = np.repeat(u, sizes)
    return np.minimum(np.floor(x * window).astype(np.int64), window - 1)


def eurora_instance(n_jobs: int, window_s: int, arrival: str = "uniform", seed: int = 0,
                    burst_size: int | None = None, source: JobTable | None = None, *,
                    power_noise: float = POWER_NOISE, bursts: int | None = None) -> JobTable:
    """A synthetic Eurora instance of ``n_jobs`` jobs arriving in ``[0, window_s)`` (see
    the module docstring). ``arrival``: ``uniform``, ``left-skewed`` or ``burst``
    (``bursts`` groups, default 10, or ``burst_size`` jobs a group, not both; only with
    ``burst``);
    ``source``: a Eurora job table whose empirical distributions replace the frozen
    :data:`EURORA_MODEL`; ``power_noise``: the sd of the log-normal power noise (>= 0).

    Columns: ``job_id`` 1..n, ``submit``, ``run``, ``units``, ``requested_time`` =
    ``req_time``, ``req_procs`` = ``alloc_procs`` = total cores, ``req_mem`` (KB per core,
    rounded up), ``queue`` (codes, names in ``info.codes["queue"]``), ``app``, ``status``
    1, ``user`` -1, the power columns; resources ``core``, ``gpu``, ``mic``, ``mem`` (KB)
    per unit. Every job fits one Eurora node per unit as the traces' jobs do.
    :class:`InputError` for bad arguments (field = the argument's name)."""
    n = _check_count("n_jobs", n_jobs, 1)
    window = _check_count("window_s", window_s, 1)
    seed = _check_count("seed", seed, 0)
    if arrival not in ARRIVALS:
        raise InputError(f"unknown arrival mode {arrival!r}: expected one of "
                         f"{', '.join(ARRIVALS)}", field="arrival")
    if burst_size is not None:
        if arrival != "burst":
            raise InputError("burst_size is only used with arrival='burst'",
                             field="burst_size")
        burst_size = _check_count("burst_size", burst_size, 1)
    if bursts is not None:
        if arrival != "burst":
            raise InputError("bursts is only used with arrival='burst'", field="bursts")
        if burst_size is not None:
            raise InputError("give bursts (the number of groups) or burst_size (jobs a "
                             "group), not both", field="bursts")
        bursts = _check_count("bursts", bursts, 1)
    if isinstance(power_noise, bool) or not isinstance(power_noise, Real) \
            or not math.isfinite(float(power_noise)) or power_noise < 0:
        raise InputError(f"power_noise must be a number >= 0, got {power_noise!r}",
                         field="power_noise")
    model = EURORA_MODEL if source is None else fit_eurora_model(source)
    queues = model.queues
    rng = Generator(PCG64(seed))
    # fixed draw order: queue, size, wall, fraction, app, power noise, arrivals
    q = _draw(rng, tuple(m.share for m in queues), n)
    size = np.zeros((n, 5), dtype=np.int64)
    wall = np.zeros(n, dtype=np.int64)
    frac = np.zeros(n)
    app = np.zeros(n, dtype=np.int64)
    levels = np.asarray(FRACTION_LEVELS)
    u_size, u_wall, u_frac, u_app = (rng.random(n) for _ in range(4))
    for k, m in enumerate(queues):
        rows = np.flatnonzero(q == k)
        if not rows.size:
            continue
        cdf = np.cumsum(m.size_p) / np.sum(m.size_p)
        pick = np.minimum(np.searchsorted(cdf, u_size[rows], side="right"), len(cdf) - 1)
        size[rows] = np.asarray(m.sizes, dtype=np.int64)[pick]
        cdf = np.cumsum(m.wall_p) / np.sum(m.wall_p)
        pick = np.minimum(np.searchsorted(cdf, u_wall[rows], side="right"), len(cdf) - 1)
        wall[rows] = np.asarray(m.walls, dtype=np.int64)[pick]
        frac[rows] = np.interp(u_frac[rows], levels, np.asarray(m.fraction))
        cdf = np.cumsum(m.app_p) / np.sum(m.app_p)
        app[rows] = np.minimum(np.searchsorted(cdf, u_app[rows], side="right"), 2)
    run = np.clip(np.rint(wall * frac).astype(np.int64), MIN_RUN, wall)
    noise = np.exp(rng.normal(0.0, float(power_noise), n))
    submit = _arrivals(rng, n, window, arrival, burst_size, bursts)


    units, core, gpu, mic, mem = size.T
    dummy = (DUMMY_NODE * units + DUMMY_GPU * units * gpu + DUMMY_MIC * units * mic)
    power = eurora_job_power(dummy * noise, units)

    order = np.argsort(submit, kind="stable")
    cols: dict[str, np.ndarray] = {}
    for name in SWF_FIELDS:
        cols[name] = np.full(n, -1, dtype=np.float64 if name in FLOAT_FIELDS else np.int64)
    procs = units * core
    cols.update({
        "job_id": np.arange(1, n + 1, dtype=np.int64),
        "submit": submit[order],
        "run": run[order],
        "req_time": wall[order],
        "requested_time": wall[order],
        "alloc_procs": procs[order],
        "req_procs": procs[order],
        "req_mem": (-(-(units * mem) // np.maximum(procs, 1)))[order],
        "status": np.ones(n, dtype=np.int64),
        "app": app[order],
        "queue": q[order].astype(np.int64),
        "units": units[order],
        "line": np.zeros(n, dtype=np.int64),
        "power_mean": power[order],
        "power_max": power[order].copy(),
        "power_std": np.zeros(n),
    })
    resources = {"core": core[order], "gpu": gpu[order], "mic": mic[order],
                 "mem": mem[order]}
    resources = {k: np.ascontiguousarray(v) for k, v in resources.items()}
    label = f"<eurora-synth n={n} window={window} arrival={arrival} seed={seed}" + (
        f" burst={burst_size}" if burst_size is not None else "") + (
        f" bursts={bursts}" if bursts is not None else "") + (
        " source" if source is not None else "") + ">"
    info = TraceInfo(source=label, lines_read=n, format="eurora-synth",
                     max_nodes=64, max_procs=1024)
    info.codes = {"queue": [m.name for m in queues]}
    info.header = {"Computer": "Eurora (synthetic, dispatchlab eurora_instance)",
                   "MaxNodes": "64", "MaxProcs": "1024",
                   "Note": "synthetic Eurora instance (Borghesi et al. 2018): " + label}
    return finish_table(cols, resources, info)


def write_instance(table: JobTable, path: str | Path) -> None:
    """Write an instance: Parquet (``.parquet``/``.pq``: every column, the per-unit
    resources and the power columns) or SWF (``.swf``/``.swf.gz``: the 18 SWF fields
    only, so the per-unit GPU/MIC/memory requests and the power are lost; a ``.gz`` file
    is byte-identical for equal tables)."""
    p = Path(path)
    name = p.name.lower()
    if name.endswith((".parquet", ".pq")):
        write_parquet(table, p)
    elif name.endswith((".swf", ".swf.gz")):

        write_generated(table, p, (f"; Note: {table.info.source}",
                                   f"; MaxJobs: {len(table)}", f"; MaxRecords: {len(table)}",
                                   "; MaxNodes: 64", "; MaxProcs: 1024"))
    else:
        raise InputError("unknown instance format: expected .parquet, .pq, .swf or .swf.gz",
                         file=str(path))
