"""A workload model fitted to a real trace, and sampled to make new synthetic traces.

:func:`fit_model` estimates a :class:`WorkloadModel` from a :class:`JobTable`;
:meth:`WorkloadModel.sample` draws a new table of any length from it with one
``numpy.random.Generator(PCG64(seed))`` in a fixed order (same seed, same table);
:func:`write_generated` writes it as SWF (a ``.gz`` file is written with a fixed
gzip header, so the same seed gives a byte-identical file).

The model never copies the source's jobs: every quantity is drawn from a fitted,
smoothed distribution.

1. **Arrivals.** A non-homogeneous Poisson process with a piecewise-constant rate
   over the 168 hours of the week (hour of day x day of week). The rate of an hour
   is the number of submits in that hour of the week divided by the time the trace
   spent in it (the local time comes from the header's ``UnixStartTime`` plus the
   offset of ``TimeZoneString``, or ``TimeZone``, when present; without
   ``UnixStartTime`` the submit seconds modulo a week are used, hour 0 being
   submit second 0). The rates are scaled so that their weekly mean equals the
   trace's ``(jobs - 1) / submit span``. Real submissions come in batches (a user
   submitting several jobs within seconds), which a plain Poisson process misses,
   so the process generates *batch heads*: each job is a *follower* with
   probability ``b`` and comes a short within-batch gap after the previous job
   (drawn from a histogram of the trace's gaps ``<= T`` on a log scale with
   integer edges); otherwise it is a head, whose gap follows the NHPP from the
   previous submit (inversion of the cumulative intensity with a unit exponential)
   with the rates scaled by ``head_scale`` so that the overall mean gap is kept.
   ``T`` (and ``b``, the share of the trace's gaps ``<= T``) is chosen among gap
   quantiles to minimise the KS distance between the model's gap CDF (a mixture of
   the within-batch CDF and of exponentials over the 168 hourly rates) and the
   trace's. The first job is submitted at the source's first submit time.
2. **Sizes (units).** With the empirical probability of each power of two, that
   power of two; otherwise a size from a log-scale histogram density fitted to the
   non-power-of-two sizes (uniform in log scale within a bin, rounded to an
   integer, moved off powers of two), capped at the trace's largest size.
3. **Run times given the size.** For each size class ``floor(log2(units))`` with
   enough jobs (``MIN_CLASS_JOBS``; smaller classes borrow the nearest class with
   enough jobs), a histogram density of ``log(max(run, 1))`` with ``RUN_BINS``
   bins over the trace's range; a run is drawn uniformly within a drawn bin (so it
   is not one of the trace's values), rounded to the second, capped at the
   trace's largest run time. A zero run time keeps its share per class.
4. **Requested times.** The ratio ``requested / run`` (jobs with run > 0) as two
   log-scale histograms, one for ratios >= 1 and one for overruns (< 1), chosen
   with the trace's share of overruns. ``requested = ceil(run x ratio)`` rounded up
   to a minute (at least the run) for the ratios >= 1; overruns get
   ``min(ceil(run x ratio), run - 1)``. Requests are capped at the trace's largest
   request (but stay >= the run outside the overrun share).
5. **Users and locality.** As many users as the trace, with a Zipf-like activity:
   user of rank ``k`` submits a share proportional to ``k ** -s``, ``s`` fitted by
   least squares on the trace's sorted log shares. A job's *profile* is
   ``(units, log-run centre, ratio)``. With probability ``p_repeat`` a job reuses
   its user's previous profile with a log-normal perturbation of the run time
   (sigma ``sigma_repeat``); otherwise it gets a fresh profile from 2-4.
   ``p_repeat`` is fitted so that the share of jobs whose user's previous job has
   the same size matches the trace: if ``L`` is that share in the trace and ``q``
   the chance that two independent sizes are equal, ``p = (L - q) / (1 - q)``.
   ``sigma_repeat`` is half the spread of the log-run differences between a user's
   consecutive same-size jobs, capped at ``MAX_SIGMA``.

Output columns: ``job_id`` 1..n, ``submit``, ``wait`` -1, ``run``, ``alloc_procs``
= ``req_procs`` = ``units``, ``req_time`` = ``requested_time``, ``status`` 1,
``user``, every other field -1.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from numpy.random import PCG64, Generator

from dispatchlab.core.errors import InputError
from dispatchlab.workload.jobs import JobTable, TraceInfo
from dispatchlab.workload.load import offered_load
from dispatchlab.workload.swf import write_swf

__all__ = [
    "WorkloadModel",
    "fit_model",
    "ks_statistic",
    "same_size_share",
    "write_generated",
]

#: Hours in a week (the arrival-rate bins).
WEEK_HOURS = 168
#: Bins of the log run-time histograms.
RUN_BINS = 48
#: Geometric bins of the within-batch gap histogram.
BURST_BINS = 40
#: Bins of the log-ratio histograms.
RATIO_BINS = 40
#: Bins (per unit of log2) of the non-power-of-two size histogram.
SIZE_BINS_PER_OCTAVE = 4
#: Jobs a size class needs to have its own run-time distribution.
MIN_CLASS_JOBS = 50
#: Largest run-time perturbation (sigma of log run) of a repeated profile.
MAX_SIGMA = 0.5


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """The two-sample Kolmogorov-Smirnov statistic ``sup |F_a - F_b|`` (numpy only)."""
    a = np.sort(np.asarray(a, dtype=np.float64))
    b = np.sort(np.asarray(b, dtype=np.float64))
    if a.size == 0 or b.size == 0:
        raise ValueError("both samples must be non-empty")
    points = np.concatenate((a, b))
    fa = np.searchsorted(a, points, side="right") / a.size
    fb = np.searchsorted(b, points, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def same_size_share(user: np.ndarray, units: np.ndarray) -> float:
    """Share of jobs (among those whose user had a previous job) whose user's previous
    job, in table order, had the same size."""
    user = np.asarray(user)
    units = np.asarray(units)
    n = user.size
    if n < 2:
        return 0.0
    order = np.argsort(user, kind="stable")
    u, s = user[order], units[order]
    same_user = u[1:] == u[:-1]
    total = int(np.count_nonzero(same_user))
    if total == 0:
        return 0.0
    return float(np.count_nonzero(same_user & (s[1:] == s[:-1]))) / total


@dataclass
class _Histogram:
    """A histogram density: bin edges and probabilities; samples are uniform in a bin."""

    edges: np.ndarray
    probs: np.ndarray

    @classmethod
    def fit(cls, values: np.ndarray, bins: int, lo: float, hi: float) -> _Histogram:
        if hi <= lo:
            hi = lo + 1e-6
        counts, edges = np.histogram(values, bins=bins, range=(lo, hi))
        total = counts.sum()
        probs = counts / total if total else np.full(bins, 1.0 / bins)
        return cls(edges=edges, probs=probs.astype(np.float64))

    def sample(self, rng: Generator, size: int) -> np.ndarray:
        if size == 0:
            return np.zeros(0)
        cdf = np.cumsum(self.probs)
        cdf /= cdf[-1]
        idx = np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), cdf.size - 1)
        lo, hi = self.edges[idx], self.edges[idx + 1]
        return lo + (hi - lo) * rng.random(size)


@dataclass
class WorkloadModel:
    """A fitted workload model (see the module docstring); :meth:`sample` draws jobs."""

    source: str
    hour_rates: np.ndarray  # jobs per second, by hour of week (0 = Monday 00:00)
    burst_share: float  # share of jobs that follow a batch head
    burst_gaps: _Histogram | None  # on log1p(gap), gaps <= burst_threshold
    burst_threshold: int
    head_scale: float  # batch-head rate / hour_rates (see _head_scale)
    start_submit: int
    start_hour_offset: int  # hour of week of the submit time 0, local
    pow2_sizes: np.ndarray
    pow2_probs: np.ndarray  # probabilities of the powers of two (sum = share of pow2)
    other_sizes: _Histogram | None  # on log2(units)
    max_units: int
    run_classes: dict[int, tuple[float, _Histogram]]  # class -> (zero-run share, log hist)
    max_run: int
    ratio_over: _Histogram | None  # log ratio >= 0
    ratio_under: _Histogram | None  # log ratio < 0 (overruns)
    overrun_share: float
    max_requested: int
    n_users: int
    zipf_s: float
    p_repeat: float
    sigma_repeat: float
    target_locality: float
    header: dict[str, str] = field(default_factory=dict)
    max_procs: int | None = None
    max_nodes: int | None = None
    unix_start_time: int | None = None

    # -- sampling ----------------------------------------------------------------------

    def _arrivals(self, rng: Generator, n: int) -> np.ndarray:
        """Submit times: batch heads follow the NHPP (rate ``(1 - b) x rate(hour of
        week)``, by inversion of the cumulative intensity from the previous submit);
        each other job (probability ``b``) follows the previous one after a short
        within-batch gap (see the module docstring)."""
        follower = rng.random(n) < self.burst_share
        exp_draw = rng.exponential(1.0, n)
        within = np.zeros(n)
        k_f = int(np.count_nonzero(follower))
        if k_f and self.burst_gaps is not None:
            within[follower] = np.floor(np.expm1(self.burst_gaps.sample(rng, k_f)))
        rate_h = self.hour_rates * self.head_scale  # per second
        per_hour = rate_h * 3600.0
        heads_mass = float(exp_draw[~follower].sum())
        # within-batch time also consumes intensity: bound it with the largest rate
        mass = heads_mass + float(within.sum()) * float(rate_h.max())
        weeks = math.ceil(mass / float(per_hour.sum())) + 2
        h0 = self.start_submit // 3600
        bins = (h0 + self.start_hour_offset + np.arange(weeks * WEEK_HOURS)) % WEEK_HOURS
        cum_a = np.cumsum(per_hour[bins])
        cum = cum_a.tolist()
        rate = rate_h[bins].tolist()
        fol, ex, wi = follower.tolist(), exp_draw.tolist(), within.tolist()
        out = np.empty(n, dtype=np.float64)
        t = float(self.start_submit)
        out[0] = t
        base = h0 * 3600.0
        for i in range(1, n):
            if fol[i]:
                t += wi[i]
            else:
                k = int((t - base) // 3600.0)
                lam = (cum[k - 1] if k > 0 else 0.0) + (t - base - k * 3600.0) * rate[k]
                target = lam + ex[i]
                k = bisect_left(cum, target, k)
                t = base + k * 3600.0 + (target - (cum[k - 1] if k > 0 else 0.0)) / rate[k]
            out[i] = t
        return np.floor(out).astype(np.int64)

    def _sizes(self, rng: Generator, n: int) -> np.ndarray:
        share_pow2 = float(self.pow2_probs.sum())
        is_pow2 = rng.random(n) < share_pow2 if self.other_sizes is not None else np.ones(n, bool)
        sizes = np.empty(n, dtype=np.int64)
        k = int(np.count_nonzero(is_pow2))
        p = self.pow2_probs / self.pow2_probs.sum()
        sizes[is_pow2] = rng.choice(self.pow2_sizes, size=k, p=p)
        if self.other_sizes is not None:
            raw = np.exp2(self.other_sizes.sample(rng, n - k))
            other = np.clip(np.rint(raw), 3, self.max_units).astype(np.int64)
            on_pow2 = (other & (other - 1)) == 0
            # move a size that rounded onto a power of two to its neighbour on raw's side
            other = np.where(on_pow2 & (raw < other), other - 1, other)
            other = np.where(on_pow2 & (raw >= other) & (other + 1 <= self.max_units),
                             other + 1, other)
            sizes[~is_pow2] = np.maximum(other, 1)
        return np.minimum(sizes, self.max_units)

    def _log_runs(self, rng: Generator, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Log-run centres and zero-run flags for jobs of the given sizes."""
        n = sizes.size
        cls = np.floor(np.log2(np.maximum(sizes, 1))).astype(np.int64)
        u_zero = rng.random(n)
        logs = np.zeros(n)
        zero = np.zeros(n, dtype=bool)
        keys = np.array(sorted(self.run_classes))
        nearest = keys[np.abs(cls[:, None] - keys[None, :]).argmin(axis=1)]
        for key in keys.tolist():
            idx = np.flatnonzero(nearest == key)
            zero_share, hist = self.run_classes[key]
            logs[idx] = hist.sample(rng, idx.size)
            zero[idx] = u_zero[idx] < zero_share
        return logs, zero

    def _ratios(self, rng: Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        over = rng.random(n) < self.overrun_share
        if self.ratio_under is None:
            over[:] = False
        if self.ratio_over is None:
            over[:] = self.ratio_under is not None
        log_ratio = np.zeros(n)
        if self.ratio_over is not None:
            log_ratio[~over] = self.ratio_over.sample(rng, int(np.count_nonzero(~over)))
        if self.ratio_under is not None:
            log_ratio[over] = self.ratio_under.sample(rng, int(np.count_nonzero(over)))
        return log_ratio, over

    def sample(self, n_jobs: int, seed: int = 0) -> JobTable:
        """Draw ``n_jobs`` jobs with ``Generator(PCG64(seed))`` (same seed, same table)."""
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
            raise InputError(f"the number of jobs must be an integer >= 1, got {n_jobs!r}",
                             field="--jobs")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise InputError(f"the seed must be an integer >= 0, got {seed!r}", field="--seed")
        n = n_jobs
        rng = Generator(PCG64(seed))
        submit = self._arrivals(rng, n)

        # fresh profiles, one per job (used when the job does not repeat)
        f_units = self._sizes(rng, n)
        f_log, f_zero = self._log_runs(rng, f_units)
        f_ratio, f_over = self._ratios(rng, n)

        # users with Zipf-like activity, and profile reuse
        weight = np.arange(1, self.n_users + 1, dtype=np.float64) ** -self.zipf_s
        user = rng.choice(self.n_users, size=n, p=weight / weight.sum())
        repeat_draw = rng.random(n) < self.p_repeat
        perturb = rng.normal(0.0, self.sigma_repeat, n)
        src = np.arange(n)
        last = np.full(self.n_users, -1, dtype=np.int64)
        repeated = np.zeros(n, dtype=bool)
        user_l, rep_l, src_l, last_l = user.tolist(), repeat_draw.tolist(), src, last
        for i in range(n):
            u = user_l[i]
            j = last_l[u]
            if j >= 0 and rep_l[i]:
                src_l[i] = src_l[j]
                repeated[i] = True
            last_l[u] = i
        units = f_units[src]
        log_run = f_log[src] + np.where(repeated, perturb, 0.0)
        zero = f_zero[src]
        log_ratio = f_ratio[src]
        over = f_over[src]

        run = np.where(zero, 0, np.rint(np.exp(log_run))).astype(np.int64)
        run = np.clip(run, 0, self.max_run)
        base = np.maximum(run, 1).astype(np.float64)
        req_raw = np.ceil(base * np.exp(log_ratio))
        req_ok = (np.ceil(req_raw / 60.0) * 60.0).astype(np.int64)
        req_ok = np.maximum(np.minimum(req_ok, self.max_requested), np.maximum(run, 1))
        req_over = np.maximum(np.minimum(req_raw.astype(np.int64), run - 1), 1)
        requested = np.where(over & (run > 1), req_over, req_ok).astype(np.int64)

        info = TraceInfo(
            source=f"<generated like={self.source} seed={seed}>",
            header=dict(self.header),
            max_procs=self.max_procs,
            max_nodes=self.max_nodes,
            unix_start_time=self.unix_start_time,
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
            status=np.ones(n, dtype=np.int64),
            user=user + 1,
        )


# ------------------------------------------------------------------------------------------
# fitting
# ------------------------------------------------------------------------------------------


def _utc_offset(info: TraceInfo) -> int:
    """Seconds to add to UTC for the trace's local time (0 when unknown)."""
    lower = {k.lower(): v for k, v in info.header.items()}
    name = lower.get("timezonestring")
    if name and info.unix_start_time is not None:
        try:
            from zoneinfo import ZoneInfo

            when = datetime.fromtimestamp(info.unix_start_time, tz=UTC)
            delta = when.astimezone(ZoneInfo(name.strip())).utcoffset()
            if delta is not None:
                return int(delta.total_seconds())
        except Exception:
            pass
    tz = lower.get("timezone")
    if tz is not None:
        try:
            return int(tz.split()[0])
        except (ValueError, IndexError):
            return 0
    return 0


def _hour_offset(info: TraceInfo) -> int:
    """Hour of week (0 = Monday 00:00 local) of the trace's submit time 0, as an offset."""
    if info.unix_start_time is None:
        return 0
    local0 = info.unix_start_time + _utc_offset(info)
    # 1970-01-01 was a Thursday: hour of week of the Unix epoch is 3 x 24
    return int(((local0 // 3600) + 72) % WEEK_HOURS)


def _hour_rates(submit: np.ndarray, offset_s: int) -> np.ndarray:
    """Jobs per second by local hour of week, scaled to the trace's mean rate."""
    n = submit.size
    local = submit + offset_s
    hour_index = local // 3600
    counts = np.bincount((hour_index % WEEK_HOURS).astype(np.int64), minlength=WEEK_HOURS)
    first, last = int(hour_index.min()), int(hour_index.max())
    all_hours = np.arange(first, last + 1)
    exposure = np.bincount((all_hours % WEEK_HOURS).astype(np.int64),
                           minlength=WEEK_HOURS).astype(np.float64)
    rates = np.where(exposure > 0, counts / np.maximum(exposure, 1) / 3600.0, 0.0)
    if exposure.min() == 0 or rates.sum() == 0:
        # a trace shorter than a week: blend with a flat rate so every hour is possible
        rates = 0.5 * rates + 0.5 * (counts.sum() / max(exposure.sum(), 1) / 3600.0)
    span = float(submit.max() - submit.min())
    mean_rate = (n - 1) / span if span > 0 and n > 1 else 1.0
    rates = np.maximum(rates, 1e-3 * rates.max() if rates.max() > 0 else 1.0)
    return rates * (mean_rate / rates.mean())


def _gap_histogram(small: np.ndarray, threshold: int) -> _Histogram:
    """A histogram of log1p(gap) with edges on integers (so small gaps keep their
    probabilities and larger ones are smoothed within geometric bins)."""
    ints = np.unique(np.floor(np.geomspace(1.0, threshold + 2.0, BURST_BINS)).astype(np.int64))
    edges = np.log1p(ints - 1.0)
    counts, _ = np.histogram(np.log1p(small.astype(np.float64)), bins=edges)
    total = counts.sum()
    probs = counts / total if total else np.full(edges.size - 1, 1.0 / (edges.size - 1))
    return _Histogram(edges=edges, probs=probs.astype(np.float64))


def _head_scale(b: float, mean_small: float, mean_gap: float) -> float:
    """Factor on the hourly rates giving the batch heads' rate, so that the mean gap
    ``b x mean_small + (1 - b) x mean_head_gap`` stays the trace's ``mean_gap``."""
    return (1.0 - b) / max(1.0 - b * mean_small / mean_gap, 1e-9)


def _head_cdf(xs: np.ndarray, rates: np.ndarray, scale: float) -> np.ndarray:
    """Approximate gap CDF of the NHPP with rates ``scale x rates`` (a mixture of
    exponentials over the hours of the week, weighted by their rates)."""
    w = rates / rates.sum()
    r = rates * scale
    return (w[None, :] * (1.0 - np.exp(-xs[:, None] * r[None, :]))).sum(axis=1)


def _fit_bursts(
    gaps: np.ndarray, rates: np.ndarray
) -> tuple[float, _Histogram | None, int, float]:
    """Burst share ``b``, within-batch gap histogram and threshold ``T``.

    Gaps <= T are within-batch; T is the candidate (gap quantiles) whose model gap
    CDF ``b W(x) + (1 - b) H(x)`` is closest (KS) to the trace's gap CDF, ``b``
    being the share of gaps <= T, ``W`` the CDF of the gaps <= T and ``H`` that of
    the batch heads' NHPP (:func:`_head_cdf`).
    """
    if gaps.size < 10:
        return 0.0, None, 0, 1.0
    mean_gap = float(gaps.mean())
    if mean_gap <= 0:
        return 0.0, None, 0, 1.0
    xs = np.unique(np.quantile(gaps, np.linspace(0.0, 0.999, 400)))
    srt = np.sort(gaps)
    emp = np.searchsorted(srt, xs, side="right") / gaps.size
    best = (math.inf, 0.0, 0)
    flat = _head_cdf(xs, rates, 1.0)
    best = (float(np.max(np.abs(flat - emp))), 0.0, 0)
    for q in np.linspace(0.05, 0.9, 35):
        t = int(np.quantile(gaps, q))
        if t >= mean_gap:
            break
        small = srt[: np.searchsorted(srt, t, side="right")]
        b = small.size / gaps.size
        if b <= 0 or b >= 0.98:
            continue
        w = np.searchsorted(small, xs, side="right") / small.size
        scale = _head_scale(b, float(small.mean()), mean_gap)
        model = b * w + (1.0 - b) * _head_cdf(xs, rates, scale)
        d = float(np.max(np.abs(model - emp)))
        if d < best[0]:
            best = (d, b, t)
    _, b, t = best
    if b == 0.0:
        return 0.0, None, 0, 1.0
    small = srt[: np.searchsorted(srt, t, side="right")]
    return b, _gap_histogram(small, t), t, _head_scale(b, float(small.mean()), mean_gap)


def fit_model(jobs: JobTable) -> WorkloadModel:
    """Fit a :class:`WorkloadModel` to a (cleaned) job table (see the module docstring)."""
    cols = jobs.columns
    keep = (cols["units"] > 0) & (cols["run"] >= 0) & (cols["submit"] >= 0)
    if int(np.count_nonzero(keep)) < 2:
        raise InputError("the trace needs at least 2 jobs with a size and a run time to fit "
                         "a model", file=jobs.info.source)
    submit = cols["submit"][keep].astype(np.int64)
    units = cols["units"][keep].astype(np.int64)
    run = cols["run"][keep].astype(np.int64)
    req = cols["requested_time"][keep].astype(np.int64)
    user = cols["user"][keep].astype(np.int64)
    info = jobs.info
    order = np.argsort(submit, kind="stable")
    submit, units, run, req, user = (a[order] for a in (submit, units, run, req, user))

    # 1. arrivals
    if info.unix_start_time is not None:
        hour_offset = _hour_offset(info)
        rates = _hour_rates(submit, hour_offset * 3600)
    else:
        hour_offset = 0
        rates = _hour_rates(submit, 0)

    burst_share, burst_gaps, burst_threshold, head_scale = _fit_bursts(np.diff(submit), rates)

    # 2. sizes
    max_units = int(units.max())
    is_pow2 = (units & (units - 1)) == 0
    pow2_vals, pow2_counts = np.unique(units[is_pow2], return_counts=True)
    n = units.size
    if pow2_vals.size == 0:
        pow2_vals, pow2_counts = np.array([1]), np.array([0])
    pow2_probs = pow2_counts / n
    other = units[~is_pow2]
    other_hist = None
    if other.size:
        lo, hi = math.log2(2.5), math.log2(max_units + 0.5)
        bins = max(1, math.ceil((hi - lo) * SIZE_BINS_PER_OCTAVE))
        other_hist = _Histogram.fit(np.log2(other), bins, lo, hi)
    if pow2_probs.sum() == 0:
        pow2_probs = np.array([1e-12])

    # 3. run times by size class
    log_run = np.log(np.maximum(run, 1).astype(np.float64))
    lo_r, hi_r = 0.0, float(log_run.max()) + 1e-9
    cls = np.floor(np.log2(units)).astype(np.int64)
    run_classes: dict[int, tuple[float, _Histogram]] = {}
    for key in np.unique(cls).tolist():
        mask = cls == key
        if np.count_nonzero(mask) >= MIN_CLASS_JOBS:
            zero_share = float(np.count_nonzero(run[mask] == 0)) / int(mask.sum())
            run_classes[key] = (zero_share,
                                _Histogram.fit(log_run[mask], RUN_BINS, lo_r, hi_r))
    if not run_classes:
        run_classes[0] = (float(np.count_nonzero(run == 0)) / n,
                          _Histogram.fit(log_run, RUN_BINS, lo_r, hi_r))

    # 4. requested / run
    pos = (run > 0) & (req > 0)
    log_ratio = np.log(req[pos] / run[pos])
    over_mask = log_ratio >= 0
    overrun_share = float(np.count_nonzero(run > req)) / n
    ratio_over = ratio_under = None
    if np.any(over_mask):
        vals = log_ratio[over_mask]
        ratio_over = _Histogram.fit(vals, RATIO_BINS, 0.0, float(vals.max()) + 1e-9)
    if np.any(~over_mask):
        vals = log_ratio[~over_mask]
        ratio_under = _Histogram.fit(vals, RATIO_BINS, float(vals.min()), 0.0)
    max_requested = int(max(req.max(), run.max(), 1))

    # 5. users
    _, per_user = np.unique(user, return_counts=True)
    n_users = int(per_user.size)
    zipf_s = 1.0
    if n_users >= 3:
        share = np.sort(per_user)[::-1] / n
        rank = np.arange(1, n_users + 1)
        slope = np.polyfit(np.log(rank), np.log(share), 1)[0]
        zipf_s = float(np.clip(-slope, 0.0, 4.0))
    locality = same_size_share(user, units)
    size_probs = np.bincount(units).astype(np.float64) / n
    q = float(np.sum(size_probs**2))
    p_repeat = float(np.clip((locality - q) / (1.0 - q), 0.0, 0.98)) if q < 1 else 0.0
    # spread of log run between a user's consecutive same-size jobs
    u_order = np.argsort(user, kind="stable")
    uu, us, ul = user[u_order], units[u_order], log_run[u_order]
    pair = (uu[1:] == uu[:-1]) & (us[1:] == us[:-1])
    diffs = (ul[1:] - ul[:-1])[pair]
    sigma = float(np.std(diffs)) / 2.0 if diffs.size > 1 else MAX_SIGMA
    sigma_repeat = float(min(sigma, MAX_SIGMA))

    lower = {k.lower(): v for k, v in info.header.items()}
    header = {k: lower[k.lower()] for k in ("TimeZone", "TimeZoneString")
              if k.lower() in lower}
    return WorkloadModel(
        source=info.source,
        hour_rates=rates,
        burst_share=burst_share,
        burst_gaps=burst_gaps,
        burst_threshold=burst_threshold,
        head_scale=head_scale,
        start_submit=int(submit[0]),
        start_hour_offset=hour_offset,
        pow2_sizes=pow2_vals.astype(np.int64),
        pow2_probs=pow2_probs.astype(np.float64),
        other_sizes=other_hist,
        max_units=max_units,
        run_classes=run_classes,
        max_run=int(run.max()),
        ratio_over=ratio_over,
        ratio_under=ratio_under,
        overrun_share=overrun_share,
        max_requested=max_requested,
        n_users=n_users,
        zipf_s=zipf_s,
        p_repeat=p_repeat,
        sigma_repeat=sigma_repeat,
        target_locality=locality,
        header=header,
        max_procs=info.max_procs,
        max_nodes=info.max_nodes,
        unix_start_time=info.unix_start_time,
    )


# ------------------------------------------------------------------------------------------
# writing
# ------------------------------------------------------------------------------------------


def header_lines(model: WorkloadModel, like: str, seed: int, n_jobs: int,
                 model_name: str = "fitted") -> tuple[str, ...]:
    """The SWF header of a generated trace."""
    lines = [
        f"; Note: generated by dispatchlab generate --like {like} --seed {seed} "
        f"--jobs {n_jobs} (model: {model_name})",
        f"; MaxJobs: {n_jobs}",
        f"; MaxRecords: {n_jobs}",
    ]
    if model.max_procs is not None:
        lines.append(f"; MaxProcs: {model.max_procs}")
    if model.max_nodes is not None:
        lines.append(f"; MaxNodes: {model.max_nodes}")
    if model.unix_start_time is not None:
        lines.append(f"; UnixStartTime: {model.unix_start_time}")
    for key in ("TimeZone", "TimeZoneString"):
        if key in model.header:
            lines.append(f"; {key}: {model.header[key]}")
    return tuple(lines)


def scale_to_load(table: JobTable, load: float, capacity: int) -> tuple[JobTable, float]:
    """The table with submit times multiplied by one factor so that its offered load
    (:func:`dispatchlab.workload.load.offered_load` on ``capacity`` cores) becomes
    ``load``; returns ``(table, factor)``. Submit times are rounded down to the second
    (so the load reached differs from ``load`` by the rounding only); job order, sizes
    and run times are unchanged. ``load`` must be > 0."""

    if not (isinstance(load, int | float) and not isinstance(load, bool) and load > 0
            and math.isfinite(load)):
        raise InputError(f"the offered load must be a number > 0, got {load!r}",
                         field="--load")
    now = offered_load(table, capacity)
    if now is None:
        raise InputError("the offered load is undefined (all jobs submitted at once)",
                         field="--load")
    factor = now / float(load)
    out = table.take(np.arange(len(table)))
    first = int(out["submit"][0])
    out.columns["submit"] = first + np.floor((out["submit"] - first) * factor).astype(np.int64)
    return out, factor


def write_generated(table: JobTable, path: str | Path, lines: tuple[str, ...]) -> None:
    """Write a generated table as SWF with header ``lines`` (``write_swf``: a ``.gz``
    path gives a deterministic gzip stream, so equal tables give byte-identical files)."""

    table.info.header_lines = tuple(lines)
    write_swf(table, Path(path))
