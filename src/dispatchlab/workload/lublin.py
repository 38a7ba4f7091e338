"""The Lublin & Feitelson (2003) workload model of rigid batch jobs, as a generator.

U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
characteristics of rigid jobs", J. Parallel Distrib. Comput. 63(11):1105-1122, 2003.
The parameter values and the sampling mechanisms follow the authors' reference program
``m_lublin99.c`` published with the Parallel Workloads Archive
(https://www.cs.huji.ac.il/labs/parallel/workload/models.html), *batch* parameter set
(``*_BATCH`` constants). That program is not copied here: this module is an
independent, vectorised numpy implementation of the same model. Where the program's
comments and its code disagree, the code is followed (see "Choices" below).

The model, per job:

1. **Size** (number of processors). With probability ``serial_prob`` the job is serial
   (size 1). Otherwise ``x`` is drawn from the two-stage uniform distribution on
   ``log2(size)``: with probability ``uprob`` uniform on ``[ulow, umed]``, else uniform
   on ``[umed, uhi]``. With probability ``pow2_prob`` (an *unconditional* probability:
   one uniform ``u`` decides ``u < serial_prob`` -> serial, ``u < serial_prob +
   pow2_prob`` -> power of two, as in the reference program) ``x`` is first rounded to
   the nearest integer. The size is ``round(2 ** x)``, clipped to ``[1, max_procs]``
   (the clip only matters when ``max_procs`` is not a power of two).
2. **Run time.** ``g`` is drawn from the hyper-gamma distribution: with probability
   ``p = clip(pa * size + pb, 0, 1)`` from ``Gamma(shape=a1, scale=b1)``, else from
   ``Gamma(shape=a2, scale=b2)``; a draw ``g > max_log_run`` (12, i.e. about 45 h) is
   rejected and the whole hyper-gamma draw repeated. ``g`` is the *natural* log of the
   run time: ``run = floor(exp(g))`` seconds (the reference program returns ``exp(hg)``
   converted to an integer), so ``run >= 1``. With ``pa < 0``, larger jobs draw more
   often from the second (long) gamma: run time grows with size.
3. **Arrivals.** A day is cut into 48 half-hour buckets. Bucket ``k`` (``k*30`` to
   ``(k+1)*30`` minutes after midnight) gets the weight ``F(i + 0.5) - F(i - 0.5)``
   of the ``Gamma(shape=anum, scale=bnum)`` CDF ``F`` at ``i = k + 1`` when
   ``k + 1 >= day_start_bucket`` and ``i = k + 1 + 48`` otherwise (the model's day
   starts at bucket ``day_start_bucket`` = 11, 05:00, and wraps); the weights are
   normalised to a mean of 1 (:meth:`LublinModel.bucket_weights`). Each inter-arrival
   "budget" is ``exp(h)`` seconds with ``h ~ Gamma(shape=aarr * arar, scale=barr)``
   (``h > max_log_gap`` = 13 rejected and redrawn). The budget is converted to points
   (``exp(h) / 1800``) and spent walking forward through the buckets, a bucket costing
   its weight: in a bucket of weight ``w`` the clock advances ``1800 / w`` seconds per
   point. Arrivals therefore fall in each bucket in proportion to its weight (peak
   around 13:00, trough around 05:00, ratio about 7 between the extreme half-hours),
   and the long-run mean inter-arrival time is the mean of ``exp(h)`` (about 3,517 s
   with the default parameters). This is exactly the reference program's
   "points/buckets/reminder" mechanism, written as the inverse of the cumulative
   weight function.

Parameter sources (all from ``m_lublin99.c``, its batch parameter set; the paper's
text was not at hand to cross-check each value against its tables):

=====================  ===========  =======================================================
field                  default      reference-program constant
=====================  ===========  =======================================================
``serial_prob``        0.2927       ``SERIAL_PROB_BATCH``
``pow2_prob``          0.6686       ``POW2_PROB_BATCH``
``ulow``               1.2          ``ULOW_BATCH``
``umed``               uhi - 2      ``UMED_BATCH`` = 5 for ``UHI_BATCH`` = 7 (see Choices)
``uhi``                log2(P)      ``UHI_BATCH`` ("log2 of the system size")
``uprob``              0.875        ``UPROB_BATCH``
``a1``, ``b1``         6.57, 0.823  ``A1_BATCH``, ``B1_BATCH``
``a2``, ``b2``         639.1,       ``A2_BATCH``, ``B2_BATCH``
                       0.0156
``pa``, ``pb``         -0.003,      ``PA_BATCH``, ``PB_BATCH``
                       0.6986
``max_log_run``        12           ``TOO_MUCH_TIME``
``aarr``, ``barr``     6.0415,      ``AARR_BATCH``, ``BARR_BATCH``
                       0.8531
``arar``               1.0519       ``ARAR_BATCH`` (the gamma shape used is aarr * arar)
``anum``, ``bnum``     6.1271,      ``ANUM_BATCH``, ``BNUM_BATCH``
                       5.2740
``max_log_gap``        13           ``TOO_MUCH_ARRIVE_TIME``
``day_start_bucket``   11           ``CYCLIC_DAY_START``
``start_hour``         0            ``START`` (time 0 is midnight)
=====================  ===========  =======================================================

Choices where the model or its program is ambiguous (ours, documented):

* **Batch jobs only.** The reference program by default interleaves a batch and an
  interactive stream (``INCLUDE_JOBS_TYPE``); this generator is the batch-job model
  alone (one stream, one parameter set). Other parameter sets (e.g. the program's
  interactive or "whole sample" values) can be given as fields.
* **``pow2_prob`` is unconditional** (share of all jobs), as the program uses it; so
  about 0.6686 / (1 - 0.2927) = 94.5 % of the parallel jobs are designated power of
  two. Non-designated parallel jobs can still land on a power of two by rounding.
* **Machine-size scaling.** ``uhi = log2(max_procs)``; ``umed = uhi - 2`` (the batch
  defaults' offset, 7 - 5; the program's comment suggests ``uhi - 2.5``, between 1.5
  and 3.5); ``ulow = min(1.2, uhi)``. When ``uhi - 2 < ulow`` (``max_procs < 10``)
  ``umed`` is the midpoint ``(ulow + uhi) / 2``.
* **Daily cycle units.** The program's comments speak of hours for
  ``CYCLIC_DAY_START`` and the ``anum``/``bnum`` gamma, but its code evaluates the gamma
  on half-hour bucket indices 11..58 (wrapping 49..58 to buckets 0..9); the code is
  followed (this puts the peak near 13:00).
* **First job and clock.** The first job is submitted at time 0 (midnight when
  ``start_hour`` = 0); each later job comes one model inter-arrival after the previous
  one. (The program's first job arrives one inter-arrival after time 0.) Times are
  kept exact and floored to whole seconds at the end, instead of truncating every
  increment as the program's integer clock does.
* **Requested time (SWF field 9) is not part of the model.** Our rule: the smallest of
  the "round" wall-time limits users typically choose, :data:`REQUEST_STEPS` (5, 10,
  15, 30 min, 1, 2, 4, 6, 8, 12, 18, 24, 36, 48 h), that is ``>=`` the run time; a run
  longer than 48 h (impossible with the default ``max_log_run``) requests its run time
  rounded up to a whole hour.
* **Users.** The model has none: ``user`` (and every SWF field the model does not
  define) is -1. ``status`` is 1, ``wait`` -1, ``alloc_procs = req_procs = units``.

Sampling uses one ``numpy.random.default_rng(seed)`` (PCG64) in a fixed order
(arrivals, sizes, run times), so the same ``(model, n_jobs, seed)`` gives an identical
table, and :func:`~dispatchlab.workload.generate.write_generated` a byte-identical file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from numbers import Integral, Real

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.workload.jobs import JobTable, TraceInfo

__all__ = [
    "BUCKETS",
    "REQUEST_STEPS",
    "LublinModel",
    "gamma_cdf",
    "lublin_header_lines",
    "lublin_model",
    "requested_times",
]

#: Half-hour buckets in a day (the model's time-of-day resolution).
BUCKETS = 48
#: Seconds in one bucket.
BUCKET_SECONDS = 86400 // BUCKETS
#: Requested-time values (s) users choose from (our rule, not part of the model).
REQUEST_STEPS: tuple[int, ...] = tuple(
    m * 60 for m in (5, 10, 15, 30)
) + tuple(h * 3600 for h in (1, 2, 4, 6, 8, 12, 18, 24, 36, 48))

# Batch-job parameters of the reference program m_lublin99.c (see the module docstring).
SERIAL_PROB = 0.2927
POW2_PROB = 0.6686
ULOW = 1.2
UMED_OFFSET = 2.0  # UHI_BATCH - UMED_BATCH = 7 - 5
UPROB = 0.875


def gamma_cdf(x: float, shape: float, scale: float) -> float:
    """CDF of ``Gamma(shape, scale)`` at ``x`` (regularised lower incomplete gamma
    ``P(shape, x / scale)``: power series below ``shape + 1``, continued fraction for the
    upper tail above)."""
    if x <= 0.0:
        return 0.0
    a, z = float(shape), float(x) / float(scale)
    log_front = a * math.log(z) - z - math.lgamma(a)
    if z < a + 1.0:
        # P(a, z) = z^a e^-z / Gamma(a) * sum_k z^k / (a (a+1) ... (a+k))
        term = total = 1.0 / a
        denom = a
        for _ in range(10_000):
            denom += 1.0
            term *= z / denom
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return min(1.0, total * math.exp(log_front))
    # Q(a, z) by the modified Lentz evaluation of its continued fraction
    tiny = 1e-300
    b = z + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return max(0.0, 1.0 - math.exp(log_front) * h)


def _default_shape(max_procs: int) -> tuple[float, float, float]:
    """``(ulow, umed, uhi)`` for a machine of ``max_procs`` (see the module docstring)."""
    uhi = math.log2(max_procs)
    ulow = min(ULOW, uhi)
    umed = uhi - UMED_OFFSET
    if umed < ulow:
        umed = 0.5 * (ulow + uhi)
    return ulow, umed, uhi


def _check_max_procs(max_procs: object) -> int:
    if isinstance(max_procs, bool) or not isinstance(max_procs, Integral) or max_procs < 2:
        raise InputError(f"max_procs (the machine size in processors) must be an integer "
                         f">= 2, got {max_procs!r}")
    return int(max_procs)


@dataclass(frozen=True)
class LublinModel:
    """The Lublin & Feitelson (2003) batch-job model for a machine of ``max_procs``
    processors (see the module docstring for the mechanism, the sources of the defaults
    and our choices). ``uhi``/``umed``/``ulow`` left as ``None`` get the machine-size
    defaults of :func:`lublin_model`. Invalid values raise :class:`InputError`."""

    #: Machine size (processors); sizes are clipped to it.
    max_procs: int
    #: Probability of a serial (1-processor) job. ``SERIAL_PROB_BATCH``.
    serial_prob: float = SERIAL_PROB
    #: Probability (of all jobs) of a parallel job whose log2 size is rounded to an
    #: integer (a power-of-two size). ``POW2_PROB_BATCH``.
    pow2_prob: float = POW2_PROB
    #: Two-stage uniform on log2(size): lower bound. ``ULOW_BATCH``.
    ulow: float | None = None
    #: Change point of the two-stage uniform. ``UMED_BATCH`` (= uhi - 2).
    umed: float | None = None
    #: Upper bound, log2 of the machine size. ``UHI_BATCH``.
    uhi: float | None = None
    #: Probability of the lower uniform ``[ulow, umed]``. ``UPROB_BATCH``.
    uprob: float = UPROB
    #: First gamma of the hyper-gamma on ln(run time): shape, scale. ``A1/B1_BATCH``.
    a1: float = 6.57
    b1: float = 0.823
    #: Second gamma: shape, scale. ``A2/B2_BATCH``.
    a2: float = 639.1
    b2: float = 0.0156
    #: Mixing probability of the first gamma ``p = pa * size + pb`` (clipped to [0, 1]).
    #: ``PA_BATCH``, ``PB_BATCH``.
    pa: float = -0.003
    pb: float = 0.6986
    #: Largest ln(run time); larger draws are redrawn. ``TOO_MUCH_TIME``.
    max_log_run: float = 12.0
    #: Gamma of ln(inter-arrival budget): shape ``aarr * arar``, scale ``barr``.
    #: ``AARR_BATCH``, ``BARR_BATCH``, ``ARAR_BATCH``.
    aarr: float = 6.0415
    barr: float = 0.8531
    arar: float = 1.0519
    #: Gamma giving the daily cycle (over half-hour bucket indices). ``ANUM/BNUM_BATCH``.
    anum: float = 6.1271
    bnum: float = 5.2740
    #: Largest ln(inter-arrival budget); larger draws are redrawn.
    #: ``TOO_MUCH_ARRIVE_TIME``.
    max_log_gap: float = 13.0
    #: Bucket at which the model's day starts (cyclic shift). ``CYCLIC_DAY_START``.
    day_start_bucket: int = 11
    #: Hour of day (0-23) of time 0. ``START``.
    start_hour: int = 0

    def __post_init__(self) -> None:
        procs = _check_max_procs(self.max_procs)
        ulow, umed, uhi = _default_shape(procs)
        for name, default in (("ulow", ulow), ("umed", umed), ("uhi", uhi)):
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("max_procs", "day_start_bucket", "start_hour"):
                if isinstance(value, bool) or not isinstance(value, Integral):
                    raise InputError(f"Lublin model: {f.name} must be an integer, "
                                     f"got {value!r}")
            elif (isinstance(value, bool) or not isinstance(value, Real)
                  or not math.isfinite(value)):
                raise InputError(f"Lublin model: {f.name} must be a finite number, "
                                 f"got {value!r}")
        for name in ("serial_prob", "pow2_prob", "uprob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise InputError(f"Lublin model: {name} must be in [0, 1], "
                                 f"got {getattr(self, name)!r}")
        if self.serial_prob + self.pow2_prob > 1.0 + 1e-12:
            raise InputError("Lublin model: serial_prob + pow2_prob must be <= 1, got "
                             f"{self.serial_prob} + {self.pow2_prob}")
        if not 0.0 <= self.ulow <= self.umed <= self.uhi:  # type: ignore[operator]
            raise InputError("Lublin model: need 0 <= ulow <= umed <= uhi, got "
                             f"{self.ulow}, {self.umed}, {self.uhi}")
        for name in ("a1", "b1", "a2", "b2", "aarr", "barr", "arar", "anum", "bnum",
                     "max_log_run", "max_log_gap"):
            if getattr(self, name) <= 0:
                raise InputError(f"Lublin model: {name} must be > 0, got "
                                 f"{getattr(self, name)!r}")
        if not 0 <= self.start_hour <= 23:
            raise InputError(f"Lublin model: start_hour must be in 0..23, got "
                             f"{self.start_hour!r}")

    # -- the model's pieces ------------------------------------------------------------

    def bucket_weights(self) -> np.ndarray:
        """The 48 half-hour weights of the daily cycle (index 0 = 00:00-00:30), mean 1:
        arrivals fall in each bucket in proportion to its weight."""
        w = np.empty(BUCKETS)
        start = int(self.day_start_bucket)
        for i in range(start, start + BUCKETS):
            w[(i - 1) % BUCKETS] = (gamma_cdf(i + 0.5, self.anum, self.bnum)
                                    - gamma_cdf(i - 0.5, self.anum, self.bnum))
        w = np.maximum(w, 1e-300)
        return w / w.mean()

    def _gap_budgets(self, rng: np.random.Generator, k: int) -> np.ndarray:
        """``k`` inter-arrival budgets ``exp(h)`` in seconds, ``h ~ Gamma(aarr*arar,
        barr)`` redrawn while ``> max_log_gap``."""
        shape = self.aarr * self.arar
        h = rng.gamma(shape, self.barr, k)
        bad = np.flatnonzero(h > self.max_log_gap)
        while bad.size:
            h[bad] = rng.gamma(shape, self.barr, bad.size)
            bad = bad[h[bad] > self.max_log_gap]
        return np.exp(h)

    def _submits(self, budgets: np.ndarray) -> np.ndarray:
        """Submit times (float s) of jobs 0..len(budgets): job 0 at 0, then the clock
        walks through the weighted buckets spending each budget (module docstring)."""
        b0 = (self.start_hour * BUCKETS) // 24
        w = np.roll(self.bucket_weights(), -b0)  # w[j]: j-th bucket after time 0
        cw = np.cumsum(w)
        day_points = float(cw[-1])
        points = np.concatenate(([0.0], np.cumsum(budgets / BUCKET_SECONDS)))
        day = np.floor(points / day_points)
        rest = points - day * day_points
        k = np.minimum(np.searchsorted(cw, rest, side="left"), BUCKETS - 1)
        before = np.where(k > 0, cw[k - 1], 0.0)
        frac = np.clip((rest - before) / w[k], 0.0, 1.0)
        return day * 86400.0 + (k + frac) * BUCKET_SECONDS

    def _sizes(self, rng: np.random.Generator, n: int) -> np.ndarray:
        u = rng.random(n)
        lower = rng.random(n) < self.uprob
        v = rng.random(n)
        lo = np.where(lower, self.ulow, self.umed)
        hi = np.where(lower, self.umed, self.uhi)
        x = lo + v * (hi - lo)
        serial = u < self.serial_prob
        pow2 = ~serial & (u < self.serial_prob + self.pow2_prob)
        x = np.where(pow2, np.floor(x + 0.5), x)
        size = np.floor(np.exp2(x) + 0.5).astype(np.int64)
        size = np.where(serial, 1, size)
        return np.clip(size, 1, self.max_procs)

    def _log_runs(self, rng: np.random.Generator, size: np.ndarray) -> np.ndarray:
        """ln(run time) from the hyper-gamma with ``p = clip(pa*size + pb, 0, 1)``; a
        draw above ``max_log_run`` is redrawn whole (component and value)."""
        p = np.clip(self.pa * size.astype(np.float64) + self.pb, 0.0, 1.0)
        g = np.empty(size.size)
        todo = np.arange(size.size)
        while todo.size:
            m = todo.size
            first = rng.random(m) < p[todo]
            g1 = rng.gamma(self.a1, self.b1, m)
            g2 = rng.gamma(self.a2, self.b2, m)
            g[todo] = np.where(first, g1, g2)
            todo = todo[g[todo] > self.max_log_run]
        return g

    def max_run(self) -> int:
        """The largest possible run time (s): ``floor(exp(max_log_run))``."""
        return math.floor(math.exp(self.max_log_run))

    # -- sampling ----------------------------------------------------------------------

    def sample(self, n_jobs: int, seed: int) -> JobTable:
        """Draw ``n_jobs`` jobs with ``numpy.random.default_rng(seed)``; the same
        ``(model, n_jobs, seed)`` gives an identical table (job ids 1..n, the first job
        submitted at 0, sorted by submit time)."""
        if isinstance(n_jobs, bool) or not isinstance(n_jobs, Integral) or n_jobs < 1:
            raise InputError(f"the number of jobs must be an integer >= 1, got {n_jobs!r}",
                             field="--jobs")
        if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
            raise InputError(f"the seed must be an integer >= 0, got {seed!r}", field="--seed")
        n = int(n_jobs)
        rng = np.random.default_rng(int(seed))
        submit = np.floor(self._submits(self._gap_budgets(rng, n - 1))).astype(np.int64)
        units = self._sizes(rng, n)
        run = np.maximum(np.floor(np.exp(self._log_runs(rng, units))), 1).astype(np.int64)
        requested = requested_times(run)
        info = TraceInfo(
            source=f"<generated model=lublin max_procs={self.max_procs} seed={seed}>",
            max_procs=int(self.max_procs),
            max_nodes=int(self.max_procs),
            max_runtime=self.max_run(),
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
        )


def requested_times(run: np.ndarray) -> np.ndarray:
    """Our requested-time rule (not Lublin's): the smallest of :data:`REQUEST_STEPS`
    that is ``>= run``; beyond 48 h the run time rounded up to a whole hour."""
    run = np.asarray(run, dtype=np.int64)
    steps = np.asarray(REQUEST_STEPS, dtype=np.int64)
    idx = np.searchsorted(steps, run, side="left")
    beyond = idx >= steps.size
    hours = -(-run // 3600) * 3600
    return np.where(beyond, hours, steps[np.minimum(idx, steps.size - 1)]).astype(np.int64)


def lublin_model(max_procs: int) -> LublinModel:
    """The published batch-job model (``m_lublin99.c`` defaults) for a machine of
    ``max_procs`` processors: ``uhi = log2(max_procs)``, ``umed = uhi - 2``, ``ulow =
    1.2`` (small machines: see the module docstring). ``max_procs < 2`` (or not an
    integer) raises :class:`InputError`."""
    return LublinModel(max_procs=_check_max_procs(max_procs))


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def lublin_header_lines(model: LublinModel, seed: int, n_jobs: int) -> tuple[str, ...]:
    """The SWF header (``; Key: value`` lines, as
    :func:`~dispatchlab.workload.generate.header_lines`) of a generated Lublin trace."""
    m = model
    return (
        f"; Note: generated by dispatchlab generate --model lublin --seed {seed} "
        f"--jobs {n_jobs} (model: Lublin & Feitelson 2003, batch jobs)",
        "; Note: model from U. Lublin and D. G. Feitelson, JPDC 63(11), 2003; parameters "
        "of its reference program m_lublin99.c (batch set)",
        f"; MaxJobs: {n_jobs}",
        f"; MaxRecords: {n_jobs}",
        f"; MaxProcs: {m.max_procs}",
        f"; MaxNodes: {m.max_procs}",
        f"; MaxRuntime: {m.max_run()}",
        f"; Note: Lublin sizes: serial_prob={_fmt(m.serial_prob)} "
        f"pow2_prob={_fmt(m.pow2_prob)} ulow={_fmt(m.ulow)} umed={_fmt(m.umed)} "  # type: ignore[arg-type]
        f"uhi={_fmt(m.uhi)} uprob={_fmt(m.uprob)}",  # type: ignore[arg-type]
        f"; Note: Lublin run times: ln(run) ~ hyper-gamma a1={_fmt(m.a1)} b1={_fmt(m.b1)} "
        f"a2={_fmt(m.a2)} b2={_fmt(m.b2)} p=pa*size+pb pa={_fmt(m.pa)} pb={_fmt(m.pb)} "
        f"max_log_run={_fmt(m.max_log_run)}",
        f"; Note: Lublin arrivals: ln(gap) ~ gamma aarr={_fmt(m.aarr)} x arar={_fmt(m.arar)} "
        f"barr={_fmt(m.barr)} max_log_gap={_fmt(m.max_log_gap)}; daily cycle "
        f"anum={_fmt(m.anum)} bnum={_fmt(m.bnum)} day_start_bucket={m.day_start_bucket} "
        f"(48 half-hours); time 0 is {m.start_hour:02d}:00",
        "; Note: requested times are dispatchlab's rule (smallest of 5/10/15/30 min, "
        "1/2/4/6/8/12/18/24/36/48 h that is >= the run), not part of the model; "
        "users are -1 (the model has none)",
    )
