"""Synthetic job power for traces without power data (every PWA trace). *Ours* throughout.

:func:`synthesize_power` gives each job a power profile drawn from a small model of
users and applications, and returns the power columns of :mod:`dispatchlab.power.model`
(``power_mean``, ``power_max``, ``power_std``: float64 **watts of the whole job**, all
nodes together) and optionally the sampled series (``job_id``, ``offset`` in seconds
since the job's start, ``watts``), the layout of
:func:`dispatchlab.power.data.read_power_series`.

The model
---------
Levels are fractions of the platform's maximum node power ``P`` (its
``max_node_power``; :data:`REFERENCE_NODE_POWER` = 2,100 W, Marconi100's, when the
platform gives none, e.g. a pooled SWF platform), so the calibration below carries over
in shape to any node size.

* **Signatures.** Each user has 1 to 4 application signatures (uniform,
  :data:`SIGNATURES_PER_USER`). A signature is a per-node power level ``L``, a fraction
  of ``P`` drawn from a mixture of three log-normals (:data:`LEVEL_COMPONENTS`,
  probability / median / log-sd): 0.25 / 0.22 / 0.30 (CPU-bound jobs leaving the GPUs
  idle, ~460 W on Marconi100), 0.45 / 0.345 / 0.12 (the bulk, ~725 W), 0.30 / 0.58 /
  0.30 (GPU-heavy jobs, ~1,220 W); a phase pattern; and a noise level (uniform in
  :data:`NOISE_RANGE` = 0.02 - 0.09, the sd of a per-phase multiplicative Gaussian
  noise).
  Patterns (:data:`PATTERN_WEIGHTS`): ``plateau`` (constant ``L``); ``ramp`` (from
  ``r x L``, ``r`` in :data:`RAMP_START`, up to ``L`` linearly over the first fraction
  ``f`` of the run, ``f`` in :data:`RAMP_LENGTH`, then ``L``); ``bursts`` (``L``, raised
  to ``(1 + a) x L`` during a fraction ``d`` of each of ``c`` cycles of the run: ``a`` in
  :data:`BURST_AMPLITUDE`, ``d`` in :data:`BURST_DUTY`, ``c`` in :data:`BURST_CYCLES`).
  All ranges are uniform draws.
* **Locality.** A user's jobs, in table (submit) order: the first draws a signature of
  the user uniformly; each later job reuses the signature of the user's previous job
  with probability :data:`REUSE_PROBABILITY` = 0.8, else draws one uniformly among the
  user's signatures (possibly the same). Jobs with user ``-1`` (missing) each count as
  a user of their own. Each job scales its signature's level by a log-normal jitter of
  log-sd :data:`JOB_JITTER`.
* **Series.** A job of run time ``run`` s is sampled every ``period`` s at offsets
  ``0, period, ...`` up to ``run``: ``n = run // period + 1`` samples (a 0-s job, or a
  missing run time, has one). The samples are split into ``K = min(n,`` :data:`MAX_PHASES`
  ``)`` consecutive phases of equal length (to one sample); the per-node power is
  constant within a phase: ``L x jitter x pattern(x) x (1 + noise x z)`` with ``x`` the
  phase's centre as a fraction of the run and ``z`` standard normal, clipped to
  ``[``:data:`FLOOR_FRACTION` ``x P, P]``. So a job of up to 64 samples (21 min at 20 s)
  has per-sample noise, a longer one is a step function of 64 phases.
* **Whole-job values.** Every node of a job draws the same series (ours: a parallel
  job's nodes move together); the job's values are the per-node ones times
  :func:`~dispatchlab.power.model.job_nodes`. ``power_mean``, ``power_max`` and
  ``power_std`` (population sd) are computed **exactly** over the ``n`` samples from the
  ``K`` phase values weighted by their sample counts: the same numbers as summarising
  the full series (:func:`dispatchlab.power.data.series_power`), to rounding, without
  materialising it. Hence ``power_max >= power_mean >= 0`` always.

Cost: ``O(sum of K)`` <= 64 values per job, processed in chunks of
:data:`CHUNK_JOBS` jobs; ``series=True`` also materialises every sample (meant for
small tables). Deterministic for a seed (one :class:`numpy.random.Generator`, draws in a
fixed order); the columns do not depend on ``series``.

Calibration (Carastan-Santos et al. 2024, Figure 2)
---------------------------------------------------
Carastan-Santos et al. 2024 show, for 523,204 exclusive-node Marconi100 jobs, the per-node mean,
max and standard deviation of power, with "a peak density of jobs with mean and max consumption
of around 700 watts", the rest spread up to the 2,100 W node maximum. The figure gives no
numbers beyond that, so the targets are ours, fixed **before** tuning (on Marconi100, per
node, over jobs):

=============================================  =========  ==========
quantity                                       target     tolerance
=============================================  =========  ==========
mode of the mean (centre of the densest        700 W      +- 50 W
50-W bin)
first quartile of the mean                     600 W      +- 60 W
median of the mean                             750 W      +- 60 W
third quartile of the mean                     1,000 W    +- 60 W
median of max / mean                           1.15       +- 0.05
=============================================  =========  ==========

(:data:`CALIBRATION_TARGETS`; :func:`calibration_report` measures them.) The parameters
below were then tuned on tables of 10,000 jobs of 2,000 users (a user's share of the
jobs proportional to ``rank ** -0.5``; log-normal run times of median 30 min, capped at
one day; 1 to 16 nodes) and frozen. Measured over 10 such tables and seeds (min - max,
mean): mode 675 - 725 W (720), Q1 606 - 626 W (617), median 744 - 764 W (754), Q3
949 - 1,014 W (982), median max/mean 1.141 - 1.146 (1.145); for information, median
per-node sd 55 - 58 W and mode of the per-node max 775 - 875 W. Fewer, heavier users
spread the statistics more, since a user's few signatures then weigh more (on 5,000
jobs of 250 users with ``rank ** -0.8`` shares: Q3 910 - 1,100 W).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.power.model import DEFAULT_PERIOD, POWER_COLUMNS, job_nodes
from dispatchlab.workload.jobs import JobTable

if TYPE_CHECKING:
    from dispatchlab.platform.platform import Platform

__all__ = [
    "CALIBRATION_TARGETS",
    "REFERENCE_NODE_POWER",
    "calibration_report",
    "synthesize_power",
]

#: Node power (W) the levels are fractions of when the platform gives none
#: (Marconi100's maximum node power, Carastan-Santos et al. 2024).
REFERENCE_NODE_POWER = 2100.0
#: Signatures per user: uniform integer in this closed range.
SIGNATURES_PER_USER = (1, 4)
#: Probability that a user's job reuses the signature of the user's previous job.
REUSE_PROBABILITY = 0.8
#: Level components (fractions of P): (probability, median, log-sd) of a log-normal each:
#: CPU-bound jobs with idle GPUs, the bulk around 700 W on Marconi100, GPU-heavy jobs.
LEVEL_COMPONENTS: tuple[tuple[float, float, float], ...] = (
    (0.25, 0.22, 0.30),
    (0.45, 0.345, 0.12),
    (0.30, 0.58, 0.30),
)
#: Per-job log-normal jitter (log-sd) of the signature's level.
JOB_JITTER = 0.05
#: Lowest per-node power, a fraction of P (an idle node; 252 W on Marconi100).
FLOOR_FRACTION = 0.12
#: Pattern names and their probabilities.
PATTERN_WEIGHTS: tuple[tuple[str, float], ...] = (
    ("plateau", 0.5), ("ramp", 0.25), ("bursts", 0.25))
#: Per-phase noise sd (a fraction of the level), uniform in this range.
NOISE_RANGE = (0.02, 0.09)
#: Ramp: start (fraction of L) and length (fraction of the run).
RAMP_START = (0.4, 0.9)
RAMP_LENGTH = (0.05, 0.3)
#: Bursts: amplitude (fraction of L above L), duty cycle and cycles per run.
BURST_AMPLITUDE = (0.1, 0.6)
BURST_DUTY = (0.2, 0.5)
BURST_CYCLES = (2, 6)
#: Most phases (distinct power values) per job.
MAX_PHASES = 64
#: Jobs processed at once (bounds the memory: <= CHUNK_JOBS x MAX_PHASES values).
CHUNK_JOBS = 32768

#: Calibration targets on Marconi100 (per node, W): name -> (target, tolerance).
CALIBRATION_TARGETS: dict[str, tuple[float, float]] = {
    "mode_w": (700.0, 50.0),
    "q1_w": (600.0, 60.0),
    "median_w": (750.0, 60.0),
    "q3_w": (1000.0, 60.0),
    "max_mean_ratio": (1.15, 0.05),
}
#: Histogram bin width (W) of the mode.
MODE_BIN_W = 50.0

_PLATEAU, _RAMP, _BURSTS = 0, 1, 2


def _node_power(platform: Platform) -> float:
    value = getattr(platform, "max_node_power", None)
    return float(value) if value else REFERENCE_NODE_POWER


def _assign_signatures(users: np.ndarray,
                       rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(signature id of each job, user code of each job) with the locality rule of the
    module docstring; signature ids run over all users (``0 .. total - 1``)."""
    n = users.size
    users = np.asarray(users, dtype=np.int64)
    top = int(users.max()) + 1 if n else 0
    key = np.where(users >= 0, users, top + np.arange(n))  # missing user: one per job
    _, code = np.unique(key, return_inverse=True)
    code = code.reshape(-1).astype(np.int64)
    n_users = int(code.max()) + 1 if n else 0
    lo, hi = SIGNATURES_PER_USER
    per_user = rng.integers(lo, hi + 1, size=n_users)
    offset = np.concatenate(([0], np.cumsum(per_user)[:-1])).astype(np.int64)
    keep = rng.random(n) < REUSE_PROBABILITY
    draw = np.floor(rng.random(n) * per_user[code]).astype(np.int64)
    order = np.argsort(code, kind="stable")  # each user's jobs, in table order
    c = code[order]
    switch = ~keep[order]
    if n:
        switch[0] = True
        switch[1:] |= c[1:] != c[:-1]
    last = np.maximum.accumulate(np.where(switch, np.arange(n), 0))
    local = np.empty(n, dtype=np.int64)
    local[order] = draw[order][last]
    return offset[code] + local, code


def _signature_table(total: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Parameters of ``total`` signatures (module docstring)."""
    probs = np.array([c[0] for c in LEVEL_COMPONENTS])
    component = rng.choice(len(probs), size=total, p=probs / probs.sum())
    median = np.array([c[1] for c in LEVEL_COMPONENTS])[component]
    sigma = np.array([c[2] for c in LEVEL_COMPONENTS])[component]
    level = median * np.exp(sigma * rng.standard_normal(total))
    weights = np.array([w for _, w in PATTERN_WEIGHTS])
    pattern = rng.choice(len(weights), size=total, p=weights / weights.sum())

    def uniform(bounds: tuple[float, float]) -> np.ndarray:
        return rng.uniform(bounds[0], bounds[1], size=total)

    return {
        "level": level,
        "pattern": pattern.astype(np.int64),
        "noise": uniform(NOISE_RANGE),
        "ramp_start": uniform(RAMP_START),
        "ramp_length": uniform(RAMP_LENGTH),
        "amplitude": uniform(BURST_AMPLITUDE),
        "duty": uniform(BURST_DUTY),
        "cycles": rng.integers(BURST_CYCLES[0], BURST_CYCLES[1] + 1, size=total),
    }


def _phase_values(sig: dict[str, np.ndarray], job_sig: np.ndarray, level: np.ndarray,
                  samples: np.ndarray, rng: np.random.Generator,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(per-node phase values as fractions of P, sample count of each phase, phases per
    job) of a chunk of jobs, phases of a job contiguous and in time order."""
    phases = np.minimum(samples, MAX_PHASES)
    total = int(phases.sum())
    job = np.repeat(np.arange(samples.size), phases)
    start = np.concatenate(([0], np.cumsum(phases)[:-1]))
    k = np.arange(total) - start[job]
    n_j, k_j = samples[job], phases[job]
    base, extra = n_j // k_j, n_j % k_j
    count = base + (k < extra)
    first = k * base + np.minimum(k, extra)
    x = (first + 0.5 * count) / n_j  # the phase's centre, a fraction of the run
    s = job_sig[job]
    pattern = sig["pattern"][s]
    shape = np.ones(total)
    ramp = pattern == _RAMP
    r0, f = sig["ramp_start"][s[ramp]], sig["ramp_length"][s[ramp]]
    xr = x[ramp]
    shape[ramp] = np.where(xr < f, r0 + (1.0 - r0) * xr / f, 1.0)
    burst = pattern == _BURSTS
    cyc = sig["cycles"][s[burst]] * x[burst]
    on = (cyc - np.floor(cyc)) < sig["duty"][s[burst]]
    shape[burst] = np.where(on, 1.0 + sig["amplitude"][s[burst]], 1.0)
    noise = 1.0 + sig["noise"][s] * rng.standard_normal(total)
    values = np.clip(level[job] * shape * noise, FLOOR_FRACTION, 1.0)
    return values, count, phases


def synthesize_power(
    jobs: JobTable,
    platform: Platform,
    seed: int = 0,
    period: int = DEFAULT_PERIOD,
    series: bool = False,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """Synthetic power of every job of ``jobs`` on ``platform`` (module docstring).

    Returns ``(columns, series)``: ``columns`` maps ``power_mean``, ``power_max``,
    ``power_std`` to float64 arrays (W of the whole job, one value per row, no NaN);
    ``series`` is None, or with ``series=True`` a dict ``job_id`` (int64), ``offset`` (s
    since the job's start, float64), ``watts`` (W of the whole job), samples every
    ``period`` s, jobs in row order. Deterministic for ``seed``; the columns do not
    depend on ``series``. ``period`` is the sampling period in seconds (> 0).
    """
    if period <= 0:
        raise ValueError(f"period must be > 0 s, got {period}")
    n = len(jobs)
    rng = np.random.default_rng(seed)
    node_w = _node_power(platform)
    nodes = job_nodes(jobs, platform).astype(np.float64)
    job_sig, _ = _assign_signatures(np.asarray(jobs["user"]), rng)
    total = int(job_sig.max()) + 1 if n else 0
    sig = _signature_table(total, rng)
    level = sig["level"][job_sig] * np.exp(JOB_JITTER * rng.standard_normal(n))
    run = np.asarray(jobs["run"], dtype=np.int64)
    samples = np.maximum(run, 0) // int(period) + 1
    out = {name: np.empty(n) for name in POWER_COLUMNS}
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    ids = np.asarray(jobs["job_id"], dtype=np.int64)
    for lo in range(0, n, CHUNK_JOBS):
        hi = min(lo + CHUNK_JOBS, n)
        values, count, phases = _phase_values(sig, job_sig[lo:hi], level[lo:hi],
                                              samples[lo:hi], rng)
        starts = np.concatenate(([0], np.cumsum(phases)[:-1]))
        n_j = samples[lo:hi].astype(np.float64)
        mean = np.add.reduceat(values * count, starts) / n_j
        dev = values - np.repeat(mean, phases)
        var = np.add.reduceat(count * dev * dev, starts) / n_j
        scale = node_w * nodes[lo:hi]
        out["power_mean"][lo:hi] = mean * scale
        out["power_max"][lo:hi] = np.maximum.reduceat(values, starts) * scale
        out["power_std"][lo:hi] = np.sqrt(var) * scale
        if series:
            watts = np.repeat(values * np.repeat(scale, phases), count)
            job = np.repeat(np.arange(lo, hi), samples[lo:hi])
            first = np.concatenate(([0], np.cumsum(samples[lo:hi])[:-1]))
            index = np.arange(watts.size) - np.repeat(first, samples[lo:hi])
            pieces.append((ids[job], (index * period).astype(np.float64), watts))
    # the mean of values in [floor, 1] can exceed their max by rounding only: pin it
    out["power_mean"] = np.minimum(out["power_mean"], out["power_max"])
    if not series:
        return out, None
    if pieces:
        cat = [np.concatenate([p[i] for p in pieces]) for i in range(3)]
    else:
        cat = [np.zeros(0, np.int64), np.zeros(0), np.zeros(0)]
    return out, {"job_id": cat[0], "offset": cat[1], "watts": cat[2]}


def calibration_report(columns: Mapping[str, np.ndarray],
                       nodes: np.ndarray) -> dict[str, float]:
    """Per-node statistics of job power columns (jobs with a finite, positive mean),
    the quantities of :data:`CALIBRATION_TARGETS`: ``mode_w`` (centre of the densest
    50-W bin of the per-node mean, bins ``[0, 50), [50, 100), ...``; the lowest on a
    tie), ``q1_w``, ``median_w``, ``q3_w`` (quartiles of the per-node mean, numpy's
    linear interpolation), ``max_mean_ratio`` (median of max / mean), plus, for
    information, ``max_mode_w`` (the same mode of the per-node max), ``std_median_w``
    (median per-node sd) and ``jobs`` (jobs counted). ``nodes``: the nodes of each job
    (e.g. :func:`~dispatchlab.power.model.job_nodes`)."""
    mean = np.asarray(columns["power_mean"], dtype=np.float64)
    peak = np.asarray(columns["power_max"], dtype=np.float64)
    std = np.asarray(columns["power_std"], dtype=np.float64)
    nodes_f = np.maximum(np.asarray(nodes, dtype=np.float64), 1.0)
    ok = np.isfinite(mean) & np.isfinite(peak) & np.isfinite(std) & (mean > 0)
    if not ok.any():
        raise ValueError("no job with a finite, positive power_mean")
    per_mean = mean[ok] / nodes_f[ok]
    per_max = peak[ok] / nodes_f[ok]

    def mode(values: np.ndarray) -> float:
        counts = np.bincount(np.floor(values / MODE_BIN_W).astype(np.int64))
        return (int(np.argmax(counts)) + 0.5) * MODE_BIN_W

    q1, med, q3 = np.percentile(per_mean, [25, 50, 75])
    return {
        "jobs": float(per_mean.size),
        "mode_w": mode(per_mean),
        "q1_w": float(q1),
        "median_w": float(med),
        "q3_w": float(q3),
        "max_mean_ratio": float(np.median(peak[ok] / mean[ok])),
        "max_mode_w": mode(per_max),
        "std_median_w": float(np.median(std[ok] / nodes_f[ok])),
    }
