"""Allocators: which nodes a job's units go to (node-level platforms).

An allocator maps ``(request, units, free)`` to an :class:`Allocation` or ``None``
(does not fit). ``request`` is the per-unit resource vector (platform resource
order), ``free`` the (nodes x resources) free matrix. A node can host
``min over requested resources r of free[n, r] // request[r]`` units.

* ``first-fit``: nodes in index order, as many units per node as fit
  (all-requested-computers-available policy: the job fits only if all its units can be
  placed now).
* ``best-fit``: nodes with the fewest free resources first, compared per resource
  (lexicographically over the resources the job requests, in platform resource order;
  ties by node index) - never by adding cores to bytes. Packs jobs to limit
  fragmentation.
* ``consolidate`` (the PRB allocator of Galleguillos et al. 2017): nodes with the smallest
  *share* of free resources first, the share of a node being the mean, over the
  resources with capacity > 0 on that node, of ``free / capacity`` (ties by node
  index); each unit goes to the first node in that order with room (several units may
  share a node). *Ours*: the normalisation by node capacity; AccaSim sorts by the raw
  sum of free amounts (cores + GPUs + memory in KB), so memory alone decides. It needs
  the node capacities, given once per run by :meth:`Allocator.start`.

* ``energy-consolidate`` (the LS/DEC allocator of Borghesi et al. 2018, section 4.2): nodes
  *energy-efficient first* (ascending ``efficiency_rank`` of the node's type, from the
  platform: :meth:`dispatchlab.platform.Platform.efficiency_ranks`; on Eurora the 2.1
  GHz MIC nodes 0-31), then as ``consolidate`` (smallest share of free resources), ties
  by node index. It needs the platform, given once per run by
  :meth:`Allocator.use_platform`.

**Node weights** (Slurm's ``Weight``: lower weights are allocated first). When the
platform's node weights differ (:meth:`dispatchlab.platform.Platform.has_weights`),
every allocator above takes nodes of **lower weight first** and applies its own rule
among nodes of equal weight (first-fit: index order; best-fit: fewest free resources;
consolidate: smallest share; energy-consolidate: efficiency rank, then share), as
Slurm's select plug-in does (weight first, then its own packing). When all weights are
equal (every platform but a slurm.conf or TOML one giving weights), nothing changes:
the allocators run exactly the code they ran before weights existed.

**Per-run set-up.** A dispatcher calls ``allocator.start(capacity)`` once per run (the
(nodes x resources) total capacity matrix, ``view.capacity``) and
``allocator.use_platform(view.platform)`` before its first ``allocate`` (the helper
:func:`start_allocator` does both); every allocator reads the node weights in
``use_platform``, consolidate stores the capacities, energy-consolidate also the
nodes' efficiency ranks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Params
from dispatchlab.core.registry import Registry
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.dispatch.allocation import Allocation


def units_per_node(request: np.ndarray, free: np.ndarray) -> np.ndarray:
    """How many units of ``request`` each node can host given ``free``."""
    pos, per_unit = requested(request)
    if not len(pos):
        return np.full(free.shape[0], np.iinfo(np.int64).max // 4, dtype=np.int64)
    return units_per_node_of(pos, per_unit, free)


def requested(request: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The resources a per-unit ``request`` asks for (positions) and how much of each:
    found once, then given to :func:`units_per_node_of` for many free matrices."""
    pos = np.flatnonzero(request > 0)
    return pos, request[pos]


def units_per_node_of(pos: np.ndarray, per_unit: np.ndarray, free: np.ndarray) -> np.ndarray:
    """:func:`units_per_node` for a request already split by :func:`requested` (``pos``
    not empty): per node the fewest over the requested resources of ``free //
    per_unit``."""
    return (free[:, pos] // per_unit).min(axis=1)


def _take_in_order(order: np.ndarray, fit: np.ndarray, units: int) -> Allocation | None:
    fit_o = fit[order]
    cum = np.cumsum(fit_o)
    if len(cum) == 0 or cum[-1] < units:
        return None
    k = int(np.searchsorted(cum, units, side="left"))
    counts = fit_o[: k + 1].copy()
    counts[-1] -= int(cum[k]) - units
    nodes = order[: k + 1]
    nz = counts > 0
    return Allocation(nodes[nz].astype(np.int64), counts[nz])


class Allocator(Params, ABC):
    """Base class: override :meth:`allocate`; override :meth:`start` when the allocator
    needs the node capacities."""

    name = "allocator"
    #: the node weights of the platform (int64, node order) when they differ, else
    #: None (no preference: the allocator's own order alone); set by :meth:`use_platform`
    node_weight_: np.ndarray | None = None

    def start(self, capacity: np.ndarray) -> None:
        """Called by the dispatcher once per run, before the first :meth:`allocate`, with
        the (nodes x resources) total capacity matrix. Default: nothing."""

    def use_platform(self, platform) -> None:
        """Called by the dispatcher once per run, before the first :meth:`allocate`, with
        the :class:`~dispatchlab.platform.Platform` (node facts beyond the capacities:
        the node weights, the efficiency ranks). Default: stores the node weights
        (:attr:`node_weight_`) when they differ."""
        self.node_weight_ = (np.asarray(platform.node_weights(), dtype=np.int64)
                        if platform.has_weights() else None)

    @abstractmethod
    def allocate(self, request: np.ndarray, units: int, free: np.ndarray) -> Allocation | None:
        """Subclasses implement this."""


class FirstFit(Allocator):
    """Nodes in index order (lower node weights first when they differ), as many units
    per node as fit."""

    name = "first-fit"
    #: the node order when weights differ (ascending weight, then index), else None
    order_: np.ndarray | None = None

    def __init__(self) -> None:
        pass

    def use_platform(self, platform) -> None:
        super().use_platform(platform)
        self.order_ = (None if self.node_weight_ is None
                       else np.argsort(self.node_weight_, kind="stable").astype(np.int64))

    def allocate(self, request: np.ndarray, units: int, free: np.ndarray) -> Allocation | None:
        fit = units_per_node(request, free)
        if self.order_ is not None:
            return _take_in_order(self.order_, fit, units)
        return _take_in_order(np.arange(len(fit)), fit, units)


class BestFit(Allocator):
    """Nodes with the fewest free resources first (per resource, lexicographic; lower
    node weights first when they differ)."""

    name = "best-fit"

    def __init__(self) -> None:
        pass

    def allocate(self, request: np.ndarray, units: int, free: np.ndarray) -> Allocation | None:
        fit = units_per_node(request, free)
        usable = np.flatnonzero(fit > 0)
        if fit[usable].sum() < units:
            return None
        # np.lexsort's last key is the primary one: the first requested resource is
        # primary, then the next ones; the node index breaks the remaining ties.
        keys = [usable]
        for r in reversed(np.flatnonzero(request > 0)):
            keys.append(free[usable, r])
        if self.node_weight_ is not None:  # lower weights first (the primary key)
            keys.append(self.node_weight_[usable])
        order = usable[np.lexsort(keys)]
        return _take_in_order(order, fit, units)


class Consolidate(Allocator):
    """Nodes with the smallest share of free resources first (mean over the node's
    resources of free / capacity; ties by node index), each unit on the first node in
    that order with room. Needs :meth:`start` (node capacities) before :meth:`allocate`.

    A node with no capacity at all has share 0 (it hosts only jobs requesting nothing).
    Shares are compared rounded to 12 decimals (*ours*), so equal shares reached
    through different float sums tie and go to the node index.
    """

    name = "consolidate"

    def __init__(self) -> None:
        pass

    def start(self, capacity: np.ndarray) -> None:
        cap = np.asarray(capacity, dtype=np.int64)
        has = cap > 0
        n_res = has.sum(axis=1)
        # weight[n, r] = 1 / (capacity[n, r] * resources with capacity on n), 0 elsewhere:
        # share = (free * weight).sum(axis=1) is the mean of free / capacity
        weight = np.zeros(cap.shape, dtype=np.float64)
        np.divide(1.0, cap * np.maximum(n_res, 1)[:, None], out=weight, where=has)
        self.capacity_ = cap
        self.weight_ = weight

    def share(self, free: np.ndarray) -> np.ndarray:
        """The share of free resources of each node (float64 in [0, 1])."""
        return (free * self.weight_).sum(axis=1)

    def allocate(self, request: np.ndarray, units: int, free: np.ndarray) -> Allocation | None:
        weight = getattr(self, "weight_", None)
        if weight is None or weight.shape != free.shape:
            raise InputError("the consolidate allocator needs the node capacities: its "
                             "dispatcher must call allocator.start(capacity) once per run "
                             "(this dispatcher does not; use first-fit or best-fit with it)",
                             field="allocator")
        fit = units_per_node(request, free)
        usable = np.flatnonzero(fit > 0)
        if fit[usable].sum() < units:
            return None
        share = np.round((free[usable] * weight[usable]).sum(axis=1), 12)
        if self.node_weight_ is not None:  # lower node weights first
            order = usable[np.lexsort((usable, share, self.node_weight_[usable]))]
        else:
            order = usable[np.lexsort((usable, share))]
        return _take_in_order(order, fit, units)


class EnergyConsolidate(Consolidate):
    """Borghesi et al. 2018's LS node order: the more energy-efficient nodes first (ascending
    ``efficiency_rank`` from the platform), then the smallest share of free resources
    (as :class:`Consolidate`), ties by node index; each unit on the first node in that
    order with room. Needs :meth:`start` (capacities) and :meth:`use_platform` (ranks)
    before :meth:`allocate`. On a platform whose node types all have the same rank it
    places exactly as ``consolidate``."""

    name = "energy-consolidate"

    def use_platform(self, platform) -> None:
        super().use_platform(platform)
        self.rank_ = np.asarray(platform.efficiency_ranks(), dtype=np.int64)

    def allocate(self, request: np.ndarray, units: int, free: np.ndarray) -> Allocation | None:
        rank = getattr(self, "rank_", None)
        weight = getattr(self, "weight_", None)
        if rank is None or weight is None or weight.shape != free.shape \
                or rank.shape[0] != free.shape[0]:
            raise InputError("the energy-consolidate allocator needs the node capacities and "
                             "efficiency ranks: its dispatcher must call "
                             "allocator.start(capacity) and allocator.use_platform(platform) "
                             "once per run (see dispatchlab.dispatch.allocators."
                             "start_allocator)", field="allocator")
        fit = units_per_node(request, free)
        usable = np.flatnonzero(fit > 0)
        if fit[usable].sum() < units:
            return None
        share = np.round((free[usable] * weight[usable]).sum(axis=1), 12)
        if self.node_weight_ is not None:  # lower node weights first, then efficiency
            order = usable[np.lexsort((usable, share, rank[usable],
                                       self.node_weight_[usable]))]
        else:
            order = usable[np.lexsort((usable, share, rank[usable]))]
        return _take_in_order(order, fit, units)


def start_allocator(allocator: Allocator, view) -> None:
    """The per-run set-up of ``allocator`` for a dispatcher: ``start(view.capacity)`` and
    ``use_platform(view.platform)``."""
    allocator.start(view.capacity)
    allocator.use_platform(view.platform)


#: The registered allocators (component kind ``allocator``).
ALLOCATORS: Registry[Allocator] = Registry("allocator", Allocator, {
    "first-fit": FirstFit,
    "best-fit": BestFit,
    "consolidate": Consolidate,
    "energy-consolidate": EnergyConsolidate,
})


def make_allocator(name: str | Allocator, **params: object) -> Allocator:
    """A fresh allocator by registered name, ``module:Class``, a spec in the component
    grammar (``module:Class:key=value``), or a copy of an instance, with ``params`` set
    (unknown name: :class:`InputError` on field ``allocator`` with a did-you-mean
    suggestion)."""
    if isinstance(name, Allocator) and not params:
        return name.clone()
    if isinstance(name, Allocator) or (isinstance(name, str) and (":" in name or params)):
        return ALLOCATORS.build(name, **params)
    try:
        return ALLOCATORS[name]()
    except (KeyError, TypeError):
        raise InputError(
            f"unknown allocator {name!r}{did_you_mean(str(name), ALLOCATORS)} "
            f"(choose from {', '.join(sorted(ALLOCATORS))})",
            field="allocator",
        ) from None
