"""Duration models: how a running job's power level changes its speed.

A dispatcher may lower a running job's power level ``M`` in ``(0, 1]``
(:class:`~dispatchlab.dispatch.base.SetPower`); the simulation's duration model gives
the speed (work per second, 1 = nominal) the job then runs at, and the engine
reschedules the job's remaining work at that speed (exactly, see the engine's
docstring). The base model, :class:`NoSlowdown`, is the identity on durations: a level
changes the job's power but not its speed.

**Semantics** (Borghesi et al. 2018, and PA-HPC-SIM's code). Times are seconds; a level ``M`` is
the share of the job's full (predicted / measured) dynamic power it may draw, and a
speed ``v`` means that from the change on, one second of wall time does ``v`` seconds of
the job's nominal work (its trace ``run`` at full power). A model stretches the
*remaining* work only: a job whose level changes at time ``t`` with ``W`` seconds of
nominal work left ends at ``t + ceil(W / v)``; the work is tracked exactly and only the
end event is rounded up to the second (the engine), so many changes never drift. Every
model here has ``v <= 1`` for every level (a lower level never speeds a job up) and
``v = 1`` at ``M = 1``: restoring a job's power shortens its remaining time again, but
never below the original duration. The power of a job is never below 1 W per node
(Borghesi et al. 2018): that floor is the *dispatcher's* job (it chooses the levels it sets; the
engine accepts any level in ``(0, 1]``), not the model's.

Models (registry :data:`DURATION_MODELS`, built by :func:`make_duration_model` from the
component grammar ``NAME(:KEY=VALUE)*``, e.g. ``factor:f=0.5``,
``mixed:profile=dvfs:seed=3``, ``cpi``):

- ``none`` (:class:`NoSlowdown`): ``v = 1``.
- ``factor`` (:class:`Factor`, Borghesi et al. 2018 section 5.1.1): ``D' = max(1, F / M) x D``, i.e.
  ``v = min(1, M / F)``; ``F = 0`` never stretches (``v = 1``), ``F = 1`` stretches in
  proportion to the power cut; ``F`` in ``[0, 1]``.
- ``mixed`` (:class:`MixedFactor`): the same law with a per-job ``F`` drawn once per job
  from ``N(mu, sigma)`` clipped to ``[0, 1]`` by application type, PA-HPC-SIM's
  distributions (profile ``dynshare`` or ``dvfs``).
- ``cpi`` (:class:`CPIModel`, Borghesi et al. 2018 eq. 4): ``D' = D (1 - 1/CPI + 1/(CPI M))``, i.e.
  ``v = 1 / (1 - 1/CPI + 1/(CPI M))``, ``CPI < 1`` taken as 1; the CPI comes from a job
  column or, when the table has none (the Eurora data), is drawn per application type
  (ours, see :class:`CPIModel`).

**Application type** (``mixed`` and the drawn CPI): the job column ``app`` (the Eurora
reader's codes: 0 average, 1 CPU-bound, 2 memory-bound). Ours: a job table without an
``app`` column, and any other code, counts as *average* (0).

**Exact speeds.** :meth:`DurationModel.speed` returns a float (what dispatchers use to
predict a stretched duration, :meth:`~dispatchlab.dispatch.base.View.speed`);
:meth:`DurationModel.exact_speed` returns the same speed as a :class:`~fractions.Fraction`
computed exactly from the float level and parameters, so that, e.g., ``F = 0.75`` at
``M = 0.5`` stretches 100 s to exactly 150 s (the float ``2/3`` would round the end up to
151 s).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from fractions import Fraction
from numbers import Integral, Real
from typing import Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Params
from dispatchlab.core.registry import Registry


class DurationModel(Params, ABC):
    """Base class: override :meth:`speed`; :meth:`start` sees the job table once.

    A model with parameters validates them in ``_check`` (called by
    :func:`make_duration_model` and by :meth:`start`), raising
    :class:`~dispatchlab.core.errors.InputError` with ``field`` the parameter's name."""

    name = "duration-model"

    def __init__(self) -> None:
        pass

    def _check(self) -> None:
        """Validate the parameters (InputError naming the parameter); none here."""

    def start(self, jobs) -> None:
        """Called once before the run with the job table."""
        self._check()

    @abstractmethod
    def speed(self, job: int, level: float) -> float:
        """The speed (> 0) of job row ``job`` at power level ``level`` (0 < level <= 1)."""

    def exact_speed(self, job: int, level: float) -> Fraction:
        """:meth:`speed` as an exact fraction (by default the float's exact value);
        models override it to compute the law in rational arithmetic."""
        return Fraction(self.speed(job, level))


class NoSlowdown(DurationModel):
    """The identity on durations: every level runs at speed 1."""

    name = "none"

    def speed(self, job: int, level: float) -> float:
        return 1.0

    def exact_speed(self, job: int, level: float) -> Fraction:
        return Fraction(1)


# ----------------------------------------------------------------------- helpers


def _check_share(value: Any, field: str) -> None:
    """``value`` must be a real number in ``[0, 1]`` (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, Real) or \
            not (math.isfinite(float(value)) and 0.0 <= float(value) <= 1.0):
        raise InputError(f"{field} must be a number in [0, 1], got {value!r}", field=field)


def _check_seed(value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
        raise InputError(f"seed must be an integer >= 0, got {value!r}", field="seed")


#: Application-type codes of the job column ``app`` (Eurora reader).
APP_AVG, APP_CPU, APP_MEM = 0, 1, 2


def app_types(jobs) -> np.ndarray:
    """The application type per job row (int8: 0 average, 1 CPU-bound, 2 memory-bound).
    Ours: a table without an ``app`` column, and any other code, counts as average."""
    n = len(jobs)
    if "app" not in jobs.columns:
        return np.zeros(n, dtype=np.int8)
    app = np.asarray(jobs["app"])
    out = np.zeros(n, dtype=np.int8)
    for code in (APP_CPU, APP_MEM):
        out[app == code] = code
    return out


def _standard_normals(jobs, seed: int) -> np.ndarray:
    """One standard normal per job row from ``numpy.random.default_rng(seed)``, handed
    out in row order to the workload rows first and then to the hot-start dummies (job
    column ``hot_start`` = 1), so a job's draw does not depend on whether a hot start
    added dummy rows (ours)."""
    n = len(jobs)
    z = np.random.default_rng(int(seed)).standard_normal(n)
    if "hot_start" not in jobs.columns:
        return z
    order = np.argsort(np.asarray(jobs["hot_start"]) == 1, kind="stable")
    out = np.empty(n)
    out[order] = z
    return out


def _factor_speed(f: float, level: float) -> float:
    return 1.0 if f <= 0.0 else min(1.0, level / f)


_ONE = Fraction(1)


def _factor_exact(f: float, level: float) -> Fraction:
    """``min(1, level / f)`` exactly (1 when ``f <= 0``): the floats' integer ratios
    multiplied out, one reduction (a hot path: DynShare changes levels every period)."""
    if f <= 0.0:
        return _ONE
    a, b = level.as_integer_ratio()
    c, d = f.as_integer_ratio()
    num, den = a * d, b * c
    return _ONE if num >= den else Fraction(num, den)


def _cpi_speed(cpi: float, level: float) -> float:
    if level >= 1.0:
        return 1.0
    c = max(1.0, cpi)
    return 1.0 / (1.0 - 1.0 / c + 1.0 / (c * level))


def _cpi_exact(cpi: float, level: float) -> Fraction:
    """``min(1, 1 / (1 - 1/C + 1/(C M)))`` exactly, ``C = max(1, cpi)``, ``M = level``:
    with C = p/q and M = a/b it is C M / (C M - M + 1) = p a / (p a - q a + q b)."""
    p, q = (1, 1) if cpi <= 1.0 else cpi.as_integer_ratio()
    a, b = level.as_integer_ratio()
    num, den = p * a, p * a - q * a + q * b
    return _ONE if num >= den else Fraction(num, den)


def _not_started(model: DurationModel) -> RuntimeError:
    return RuntimeError(f"{model!r}: start(jobs) must run before speed() (the engine "
                        "calls it; a model used on its own needs it too)")


# ------------------------------------------------------------------------ models


class Factor(DurationModel):
    """Borghesi et al. 2018's power-duration factor: ``D' = max(1, F / M) x D``, i.e. speed
    ``min(1, M / F)``; ``f = 0`` never stretches. ``f`` in ``[0, 1]`` (InputError)."""

    name = "factor"

    def __init__(self, f: float = 1.0) -> None:
        self.f = f

    def _check(self) -> None:
        _check_share(self.f, "f")

    def speed(self, job: int, level: float) -> float:
        return _factor_speed(float(self.f), level)

    def exact_speed(self, job: int, level: float) -> Fraction:
        return _factor_exact(float(self.f), level)


#: PA-HPC-SIM's mixed power-duration factors, ``(mu, sigma)`` per application type
#: (average, CPU-bound, memory-bound), by profile (PA-HPC-SIM's code).
MIXED_PROFILES: dict[str, tuple[tuple[float, float], ...]] = {
    "dynshare": ((0.7, 0.1), (0.8, 0.2), (0.3, 0.2)),
    "dvfs": ((0.7, 0.2), (0.9, 0.2), (0.5, 0.2)),
}


class MixedFactor(DurationModel):
    """:class:`Factor` with a per-job ``F`` drawn once per job by application type.

    At :meth:`start`, ``F_j ~ N(mu, sigma)`` clipped to ``[0, 1]`` with ``(mu, sigma)`` of
    the job's application type in the profile (:data:`MIXED_PROFILES`, PA-HPC-SIM):
    ``dynshare`` avg ``N(0.7, 0.1)``, CPU ``N(0.8, 0.2)``, memory ``N(0.3, 0.2)``;
    ``dvfs`` avg ``N(0.7, 0.2)``, CPU ``N(0.9, 0.2)``, memory ``N(0.5, 0.2)``. The draw
    is one vector of standard normals from ``numpy.random.default_rng(seed)`` in job
    table row order (workload rows first, hot-start dummies after), so the same table
    and seed give the same factors, with or without a hot start (ours). The
    factors are in ``factors_`` (float64 per job row; after a run, on the simulation's
    copy of the model, ``sim.duration_model``).
    """

    name = "mixed"

    def __init__(self, profile: str = "dynshare", seed: int = 0) -> None:
        self.profile = profile
        self.seed = seed

    def _check(self) -> None:
        if self.profile not in MIXED_PROFILES:
            raise InputError(f"profile must be one of {', '.join(MIXED_PROFILES)}, got "
                             f"{self.profile!r}", field="profile")
        _check_seed(self.seed)

    def start(self, jobs) -> None:
        self._check()
        table = np.asarray(MIXED_PROFILES[self.profile], dtype=np.float64)
        app = app_types(jobs)
        z = _standard_normals(jobs, self.seed)
        self.factors_ = np.clip(table[app, 0] + table[app, 1] * z, 0.0, 1.0)

    def _f(self, job: int) -> float:
        try:
            return float(self.factors_[job])
        except AttributeError:
            raise _not_started(self) from None

    def speed(self, job: int, level: float) -> float:
        return _factor_speed(self._f(job), level)

    def exact_speed(self, job: int, level: float) -> Fraction:
        return _factor_exact(self._f(job), level)


#: Ours: the CPI drawn per application type when the job table has no CPI column,
#: lognormal ``exp(N(log(median), sigma))`` with ``(median, sigma)`` for average,
#: CPU-bound and memory-bound jobs. Borghesi et al. 2018 only say CPI <= 1 is CPU-bound and >= 5
#: memory-bound; the medians 2, 1 and 6 and the spread 0.3 are our choice.
CPI_DRAW: tuple[tuple[float, float], ...] = ((2.0, 0.3), (1.0, 0.3), (6.0, 0.3))


class CPIModel(DurationModel):
    """Borghesi et al. 2018 eq. 4: ``D' = D (1 - 1/CPI + 1/(CPI M))``, speed
    ``1 / (1 - 1/CPI + 1/(CPI M))``; ``CPI < 1`` is taken as 1 (then ``D' = D / M``).

    The CPI of each job is the job column ``column`` (default ``cpi``) when the table
    has it: its values must be finite and > 0 (InputError naming the column and the
    first bad job id). Without that column (the Eurora data has none) the CPI is drawn
    per job by application type, **ours**: lognormal with the medians and spread of
    :data:`CPI_DRAW` (average 2, CPU-bound 1, memory-bound 6, sigma 0.3), one vector of
    standard normals from ``numpy.random.default_rng(seed)`` in row order (workload rows
    first, hot-start dummies after, as :class:`MixedFactor`). The CPIs used
    (before the ``< 1 -> 1`` rule) are in ``cpi_``, with ``cpi_drawn_`` telling whether
    they were drawn.
    """

    name = "cpi"

    def __init__(self, seed: int = 0, column: str = "cpi") -> None:
        self.seed = seed
        self.column = column

    def _check(self) -> None:
        _check_seed(self.seed)
        if not isinstance(self.column, str) or not self.column:
            raise InputError(f"column must be a column name, got {self.column!r}",
                             field="column")

    def start(self, jobs) -> None:
        self._check()
        if self.column in jobs.columns:
            cpi = np.asarray(jobs[self.column], dtype=np.float64)
            bad = ~np.isfinite(cpi) | (cpi <= 0)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise InputError(f"CPI column {self.column!r}: job {int(jobs['job_id'][i])} "
                                 f"has CPI {float(cpi[i])!r}; a CPI must be finite and > 0",
                                 field=self.column)
            self.cpi_, self.cpi_drawn_ = cpi, False
            return
        table = np.asarray(CPI_DRAW, dtype=np.float64)
        app = app_types(jobs)
        z = _standard_normals(jobs, self.seed)
        self.cpi_ = np.exp(np.log(table[app, 0]) + table[app, 1] * z)
        self.cpi_drawn_ = True

    def _cpi(self, job: int) -> float:
        try:
            return float(self.cpi_[job])
        except AttributeError:
            raise _not_started(self) from None

    def speed(self, job: int, level: float) -> float:
        return min(1.0, _cpi_speed(self._cpi(job), level))

    def exact_speed(self, job: int, level: float) -> Fraction:
        return _cpi_exact(self._cpi(job), level)


def _validate(model: DurationModel) -> None:
    """Refuse bad parameters of a duration model (its ``_check``)."""
    model._check()


#: The registered duration models (component kind ``duration-model``).
DURATION_MODELS: Registry[DurationModel] = Registry("duration-model", DurationModel, {
    "none": NoSlowdown,
    "factor": Factor,
    "mixed": MixedFactor,
    "cpi": CPIModel,
}, validate=_validate)


def make_duration_model(name: str, **params: Any) -> DurationModel:
    """Build a duration model by registered name (:data:`DURATION_MODELS`,
    case-insensitive), ``module:Class`` or ``path/file.py:Class``, with its ``__init__``
    parameters, validated. ``name`` may also be a whole spec in the component grammar
    (``"factor:f=0.5"``, ``"mixed:profile=dvfs:seed=3"``; see
    :mod:`dispatchlab.core.components`), whose parameters are typed from the class and merged
    with ``params``. An unknown name or parameter, or a bad value, raises
    :class:`InputError` naming the choices."""
    return DURATION_MODELS.build(name, **params)
