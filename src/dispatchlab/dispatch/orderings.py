"""Queue orderings: the order in which a list dispatcher tries the waiting jobs.

An :class:`Ordering` maps the keys of ``n`` candidate jobs (:class:`OrderKeys`, one
entry per candidate, candidates given in queue order) to the candidates' positions
``0..n-1`` in dispatch order (first = tried first). Every ordering is a total order:
after its own keys, remaining ties go to submit time, then job row (= queue order), so
the result never depends on the sort algorithm.

Registered orderings (``make_ordering(name)``):

* ``fifo``: queue order (submit time, then file order).
* ``sjf``: ascending estimate, ties by queue order (a stable sort; the same order as
  EASY's ``order="sjf"`` backfill scan).
* ``urgency`` (PRB of Galleguillos et al. 2017, AccaSim ``prb_scheduler.py``): descending
  ``(wait + 1) / EWT`` with ``wait = now - submit`` seconds and EWT the expected waiting
  time of the job's queue; ties ascending job demand (:func:`job_demand`), then submit
  time, then job row.
* ``ewt`` (list scheduler of Borghesi et al. 2018): ascending EWT; ties ascending job demand, then
  submit time, then job row.
* ``walltime`` (PA-HPC-SIM's list scheduler): ascending estimate; ties by submit time,
  then job row.
* ``slowdown`` (the priority of HCP'/PCP', as ``hcp3_scheduler.py`` computes it):
  descending current slowdown ``(wait + est) / est`` (``est = 0``: ``max(1, wait)``);
  ties ascending job demand, then submit time, then job row.

* ``maui`` (the MAUI-like priority of Darrous's pyss code, ``maui_scheduler.py``): descending
  ``wait_w * wait + sld_w * sld + size_w * units`` with ``sld = (wait + est) // est``
  (integer division, as the authors' Python 2 code; ``est <= 0`` counts as 1); ties by
  queue order (a stable sort). ``maui`` with ``wait=1`` (the default) is FCFS, with
  ``wait=0:sld=1`` the report's SLD policy.
* ``random`` (the control of Darrous, learning-to-rank report): a uniform score drawn
  once per job from ``seed``; descending, ties by submit time, then job row.
* ``l2r`` (Darrous, learning-to-rank report; :mod:`dispatchlab.dispatch.l2r`, imported
  when used): the score of a learned ranking model
  (``model=PATH``, a file written by ``dispatchlab l2r train``), computed once per job
  from the features of the set the model file records (``features=causal|seed``
  refuses a model trained on another set); descending, ties by submit time, then job
  row.

``fcfs`` is another name for ``fifo``. An ordering is **static** (``static`` is True)
when the relative order of two waiting jobs never changes while they wait: ``fifo``,
``sjf``, ``ewt``, ``walltime``, ``random``, ``l2r``, and ``maui`` without its slowdown
term. Dispatchers may cache decisions across passes only for static orderings.

Orderings that need per-job facts beyond :class:`OrderKeys` read them in
:meth:`Ordering.start`, which every dispatcher calls once before its first pass.

Ratios (urgency, slowdown) are compared **exactly**: two jobs whose ratios are equal
as rational numbers are a tie and go to the tie-breakers (see :func:`ratio_key`).

*Ours*: the final tie-breakers (submit time, then job row) where the authors' codes
keep their list order; the normalised job demand (see :func:`job_demand`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from dispatchlab.core.deprecation import moved_attributes
from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Params
from dispatchlab.core.registry import Registry
from dispatchlab.core.suggest import case_match, did_you_mean


class OrderKeys(NamedTuple):
    """The keys of ``n`` candidate jobs, each array in the candidates' (queue) order.

    ``rows``: job rows (int64); ``now``: the time the keys are evaluated at (int
    seconds, trace origin; wait = ``now - submit``); ``submit``: submit times (int64
    seconds); ``estimate``: the predictor's estimates (int64 seconds, may be 0);
    ``ewt``: expected waiting time of each job's queue (int64 seconds, > 0);
    ``demand``: job demand (float64, see :func:`job_demand`)."""

    rows: np.ndarray
    now: int
    submit: np.ndarray
    estimate: np.ndarray
    ewt: np.ndarray
    demand: np.ndarray


#: float64 division of integers ``num / den`` orders exactly (equal rationals give equal
#: floats, distinct ones distinct floats in the right order) while
#: ``max|num| * max den < 2**52`` (see :func:`ratio_key`)
_EXACT_FLOAT_BOUND = 1 << 52


def ratio_key(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """A sort key ordered exactly like the rationals ``num / den`` (``den > 0``).

    Returns ``num / den`` as float64 when that is exact for ordering: IEEE division is
    correctly rounded and monotone, so equal rationals give equal floats, and for
    ``a/b < c/d`` the gap ``>= 1/(bd)`` exceeds both rounding errors
    (``<= 2**-53 * value`` each) whenever ``max|num| * max(den) < 2**52``. Beyond that
    bound (waits of decades), returns the dense rank of the exact
    :class:`fractions.Fraction` values (int64), slower but still exact."""
    num = np.asarray(num, dtype=np.int64)
    den = np.asarray(den, dtype=np.int64)
    if len(num) == 0:
        return np.zeros(0, dtype=np.float64)
    if int(np.abs(num).max()) * int(den.max()) < _EXACT_FLOAT_BOUND:
        return num / den
    fracs = [Fraction(a, b) for a, b in zip(num.tolist(), den.tolist(), strict=True)]
    rank = {f: k for k, f in enumerate(sorted(set(fracs)))}
    return np.fromiter((rank[f] for f in fracs), dtype=np.int64, count=len(fracs))


def job_width(requests: np.ndarray, units: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """The share of the platform a job uses, summed over resources (float64 per job):
    ``sum over r with totals[r] > 0 of units * requests[:, r] / totals[r]``.

    ``requests``: per-unit requests (jobs x resources); ``units``: units per job;
    ``totals``: platform total of each resource. On a counting platform (one resource,
    cores, 1 per unit) this is ``units / total cores``."""
    requests = np.asarray(requests, dtype=np.int64)
    totals = np.asarray(totals, dtype=np.int64)
    use = totals > 0
    share = requests[:, use] / totals[use][None, :]
    return share.sum(axis=1) * np.asarray(units, dtype=np.float64)


def job_demand(requests: np.ndarray, units: np.ndarray, estimate: np.ndarray,
               totals: np.ndarray) -> np.ndarray:
    """Job demand, the tie-breaker of PRB (float64 per job):
    ``estimate x sum over resources r of units x requests[:, r] / totals[r]``.

    ``estimate`` in seconds (0 gives demand 0), ``requests`` per unit (jobs x
    resources), ``totals`` the platform total per resource; resources with total 0 are
    skipped. *Ours*: AccaSim adds the raw amounts of all resources (cores + GPUs +
    memory in KB), so memory dominates; here each resource is normalised by the
    platform total, so a job's demand is "platform-seconds". On a counting platform
    this is ``estimate x units / total cores``. Computed as
    ``estimate * job_width(...)`` (same floats whichever way it is called)."""
    return np.asarray(estimate, dtype=np.float64) * job_width(requests, units, totals)


class Ordering(Params, ABC):
    """Base class of queue orderings: override :meth:`sort`.

    ``sort(keys)`` returns the positions ``0..n-1`` of the candidates in dispatch order
    (an int64 permutation; first = tried first). ``start(view)`` is called once before
    the first pass (read per-job facts there); ``static`` tells whether the relative
    order of two waiting jobs can change over time (False: assume it can)."""

    name: str = "ordering"
    static: bool = False

    def __init__(self) -> None:
        pass

    def start(self, view) -> None:
        """Called by the dispatcher once before its first pass (``view``: the
        :class:`~dispatchlab.dispatch.base.View`); the default does nothing."""

    @abstractmethod
    def sort(self, keys: OrderKeys) -> np.ndarray:
        """Subclasses implement this."""


class FifoOrder(Ordering):
    """Queue order (submit time, then file order): the identity."""

    name = "fifo"
    static = True

    def sort(self, keys: OrderKeys) -> np.ndarray:
        return np.arange(len(keys.rows), dtype=np.int64)


class SjfOrder(Ordering):
    """Ascending estimate, ties by queue order (``np.argsort(est, kind="stable")``)."""

    name = "sjf"
    static = True

    def sort(self, keys: OrderKeys) -> np.ndarray:
        return np.argsort(keys.estimate, kind="stable").astype(np.int64)


class UrgencyOrder(Ordering):
    """PRB urgency: descending ``(now - submit + 1) / ewt``, compared exactly; ties by
    ascending demand, then submit time, then job row."""

    name = "urgency"

    def sort(self, keys: OrderKeys) -> np.ndarray:
        ewt = np.asarray(keys.ewt, dtype=np.int64)
        if len(ewt) and ewt.min() == ewt.max():
            # one EWT: descending urgency is ascending submit time (same order)
            return np.lexsort((keys.rows, keys.demand, keys.submit)).astype(np.int64)
        wait = keys.now - np.asarray(keys.submit, dtype=np.int64)
        urgency = ratio_key(wait + 1, ewt)
        return np.lexsort((keys.rows, keys.submit, keys.demand, -urgency)).astype(np.int64)


class EwtOrder(Ordering):
    """Queue priority (Borghesi et al. 2018 LS): ascending EWT; ties by ascending demand, then
    submit time, then job row."""

    name = "ewt"
    static = True

    def sort(self, keys: OrderKeys) -> np.ndarray:
        return np.lexsort((keys.rows, keys.submit, keys.demand, keys.ewt)).astype(np.int64)


class WalltimeOrder(Ordering):
    """Ascending estimate (PA-HPC-SIM's wall-time ranker); ties by submit time, then job
    row (*ours*: PA uses an unstable ``std::sort``)."""

    name = "walltime"
    static = True

    def sort(self, keys: OrderKeys) -> np.ndarray:
        return np.lexsort((keys.rows, keys.submit, keys.estimate)).astype(np.int64)


class SlowdownOrder(Ordering):
    """HCP'/PCP' priority: descending current slowdown ``(wait + est) / est``
    (``est = 0``: ``max(1, wait)``), compared exactly; ties by ascending demand, then
    submit time, then job row."""

    name = "slowdown"

    def sort(self, keys: OrderKeys) -> np.ndarray:
        est = np.asarray(keys.estimate, dtype=np.int64)
        wait = keys.now - np.asarray(keys.submit, dtype=np.int64)
        zero = est <= 0
        num = np.where(zero, np.maximum(wait, 1), wait + est)
        den = np.where(zero, 1, est)
        slowdown = ratio_key(num, den)
        return np.lexsort((keys.rows, keys.submit, keys.demand, -slowdown)).astype(np.int64)


def _by_score(keys: OrderKeys, score: np.ndarray) -> np.ndarray:
    """Descending ``score`` (one value per candidate), ties by submit time, then row."""
    return np.lexsort((keys.rows, keys.submit, -score)).astype(np.int64)


class MauiOrder(Ordering):
    """MAUI-like weighted priority (Darrous's pyss ``maui_scheduler``):
    descending ``wait * (now - submit) + sld * ((now - submit + est) // est) + size *
    units`` (``est <= 0`` counts as 1), ties by queue order. ``user``, ``bypass`` and
    ``admin`` are the other three MAUI weights; no trace carries QoS or bypass counts,
    so they must be 0 (the paper's policies leave them at 0)."""

    name = "maui"

    def __init__(self, wait: float = 1.0, sld: float = 0.0, size: float = 0.0,
                 user: float = 0.0, bypass: float = 0.0, admin: float = 0.0) -> None:
        self.wait = wait
        self.sld = sld
        self.size = size
        self.user = user
        self.bypass = bypass
        self.admin = admin

    @property
    def static(self) -> bool:  # type: ignore[override]
        return float(self.sld) == 0.0

    def _check(self) -> None:
        for key in ("wait", "sld", "size", "user", "bypass", "admin"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int | float) or \
                    not np.isfinite(value):
                raise InputError(f"the {key} weight must be a finite number, got {value!r}",
                                 field=key)
        for key in ("user", "bypass", "admin"):
            if getattr(self, key) != 0:
                raise InputError(f"the {key} weight must be 0: no trace carries user/admin "
                                 "QoS or bypass counts", field=key)

    def start(self, view) -> None:
        self._check()
        self.units_ = np.asarray(view.jobs["units"], dtype=np.int64)

    def sort(self, keys: OrderKeys) -> np.ndarray:
        rows = np.asarray(keys.rows, dtype=np.int64)
        wait = keys.now - np.asarray(keys.submit, dtype=np.int64)
        prio = np.zeros(len(rows), dtype=np.float64)
        if self.wait:
            prio += float(self.wait) * wait
        if self.sld:
            est = np.maximum(np.asarray(keys.estimate, dtype=np.int64), 1)
            prio += float(self.sld) * ((wait + est) // est)
        if self.size:
            units = getattr(self, "units_", None)
            if units is None:
                raise RuntimeError("MauiOrder.start(view) must be called before sort")
            prio += float(self.size) * units[rows]
        return np.argsort(-prio, kind="stable").astype(np.int64)


class RandomOrder(Ordering):
    """A uniform random score per job, drawn once from ``seed`` (the control of Darrous,
    learning-to-rank report); descending, ties by submit time, then job row."""

    name = "random"
    static = True

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def start(self, view) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"seed must be an integer >= 0, got {self.seed!r}", field="seed")
        self.score_ = np.random.default_rng(self.seed).random(len(view.jobs))

    def sort(self, keys: OrderKeys) -> np.ndarray:
        return _by_score(keys, self.score_[np.asarray(keys.rows, dtype=np.int64)])


#: The registered orderings (component kind ``ordering``), with their aliases.
ORDERINGS: Registry[Ordering] = Registry("ordering", Ordering, {
    **{cls.name: cls
       for cls in (FifoOrder, SjfOrder, UrgencyOrder, EwtOrder, WalltimeOrder, SlowdownOrder,
                   MauiOrder, RandomOrder)},
    # a lazy entry: its model code (rank, and the workload package it reads) is imported
    # when the ordering is used, not on every command's start-up
    "l2r": "dispatchlab.dispatch.l2r:L2ROrder",
}, aliases={"fcfs": "fifo"})

# the l2r ordering's class moved to its own module (imported on use)
__getattr__ = moved_attributes(__name__, {"L2ROrder": "dispatchlab.dispatch.l2r:L2ROrder"})

#: other names (lower case) accepted by :func:`make_ordering` (``ORDERINGS.aliases``)
ALIASES: dict[str, str] = ORDERINGS.aliases


def make_ordering(spec: str | Ordering, field: str = "order", **params: object) -> Ordering:
    """The ordering named ``spec`` (case-insensitive; with parameters in the component
    grammar, ``maui:wait=0:sld=1``; ``module:Class``, ``path/file.py:Class``), or a
    clone of ``spec`` when it is already an :class:`Ordering`, with ``params`` set
    (``make_ordering("maui", wait=0)``). An unknown name raises :class:`InputError` on
    ``field`` with a did-you-mean suggestion."""
    if isinstance(spec, Ordering) and not params:
        return spec.clone()
    if isinstance(spec, Ordering) or (isinstance(spec, str) and (":" in spec or params)):
        try:
            return ORDERINGS.build(spec, **params)
        except InputError as exc:
            raise InputError(exc.message, field=field) from None
        except (TypeError, ValueError) as exc:
            raise InputError(f"bad parameters for ordering {spec!r}: {exc}",
                             field=field) from None
    if not isinstance(spec, str):
        raise InputError(f"an ordering is a name, got {spec!r} (choose from "
                         f"{', '.join(ORDERINGS)})", field=field)
    spec = ALIASES.get(spec.lower(), spec)
    name = spec if spec in ORDERINGS else case_match(spec, ORDERINGS)
    if name is None:
        raise InputError(f"unknown ordering {spec!r}{did_you_mean(spec, ORDERINGS)} "
                         f"(choose from {', '.join(ORDERINGS)})", field=field)
    return ORDERINGS[name]()
