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
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from dispatchlab.dispatch.base import Allocation
from dispatchlab.errors import InputError
from dispatchlab.params import Params


def units_per_node(request: np.ndarray, free: np.ndarray) -> np.ndarray:
    """How many units of ``request`` each node can host given ``free``."""
    need = request > 0
    if not need.any():
        return np.full(free.shape[0], np.iinfo(np.int64).max // 4, dtype=np.int64)
    return (free[:, need] // request[need]).min(axis=1)


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
    """Base class: override :meth:`allocate`."""

    name = "allocator"

    @abstractmethod
    def allocate(self, request: np.ndarray, units: int, free: np.ndarray) -> Allocation | None:
        """Subclasses implement this."""


class FirstFit(Allocator):
    """Nodes in index order, as many units per node as fit."""

    name = "first-fit"

    def __init__(self) -> None:
        pass

    def allocate(self, request: np.ndarray, units: int, free: np.ndarray) -> Allocation | None:
        fit = units_per_node(request, free)
        return _take_in_order(np.arange(len(fit)), fit, units)


class BestFit(Allocator):
    """Nodes with the fewest free resources first (per resource, lexicographic)."""

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
        order = usable[np.lexsort(keys)]
        return _take_in_order(order, fit, units)


ALLOCATORS: dict[str, type[Allocator]] = {"first-fit": FirstFit, "best-fit": BestFit}


def make_allocator(name: str) -> Allocator:
    try:
        return ALLOCATORS[name]()
    except KeyError:
        raise InputError(
            f"unknown allocator {name!r} (choose from {', '.join(sorted(ALLOCATORS))})",
            field="allocator",
        ) from None
