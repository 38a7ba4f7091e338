"""Dispatchers (scheduling + allocation) and the view they see.

``make_dispatcher(name, **params)`` builds a registered dispatcher: ``fifo``, ``sjf``,
``ljf``, ``easy``, ``conservative``, ``prb``, and the CP-SAT dispatchers ``hcp``,
``hcp-online``, ``pcp``, ``pcp-online`` (imported on first use: OR-Tools is loaded only
by them), Carastan-Santos et al. 2024's power-capped ``easy-pc`` and ``knapsack``, and Borghesi et
al. 2018's power
cappers ``ls``, ``dec`` (scheduling), ``bf``, ``dvfs`` (PA-HPC-SIM's power-budget EASY
variants), ``rapl-simple``, ``rapl-dynshare`` (throttling) and ``dec-rapl``. A new
dispatcher is one subclass of
:class:`Dispatcher` with a ``dispatch(view)`` method; see the README.
"""

from dispatchlab.core.params import build
from dispatchlab.dispatch.allocators import ALLOCATORS, Allocator, BestFit, FirstFit
from dispatchlab.dispatch.backfill import EASY, Conservative
from dispatchlab.dispatch.base import (
    Allocation,
    Decision,
    Dispatcher,
    DispatchError,
    Reject,
    Requirements,
    SetPower,
    SetSpeed,
    Start,
    View,
)
from dispatchlab.dispatch.prb import PRB
from dispatchlab.dispatch.priority import FIFO, LJF, SJF


class LazyRegistry(dict):
    """A name -> class registry whose entries may be ``"module:Class"`` strings,
    imported on first access: the CP dispatchers live in :mod:`dispatchlab.dispatch.cp`,
    which imports OR-Tools, and a run of another dispatcher must not load it."""

    def __getitem__(self, name: str) -> type:
        value = super().__getitem__(name)
        if isinstance(value, str):
            import importlib

            module, _, attr = value.partition(":")
            value = getattr(importlib.import_module(module), attr)
            super().__setitem__(name, value)
        return value

    def get(self, name: str, default=None):
        if name not in self:
            return default
        return self[name]

    def values(self):
        return [self[k] for k in self]

    def items(self):
        return [(k, self[k]) for k in self]


DISPATCHERS: dict[str, type[Dispatcher]] = LazyRegistry({
    "fifo": FIFO,
    "sjf": SJF,
    "ljf": LJF,
    "easy": EASY,
    "conservative": Conservative,
    "prb": PRB,
    "hcp": "dispatchlab.dispatch.cp.hcp:HCP",
    "hcp-online": "dispatchlab.dispatch.cp.hcp:HCPOnline",
    "pcp": "dispatchlab.dispatch.cp.pcp:PCP",
    "pcp-online": "dispatchlab.dispatch.cp.pcp:PCPOnline",
    "easy-pc": "dispatchlab.dispatch.powercap.capped:EasyPC",
    "knapsack": "dispatchlab.dispatch.powercap.capped:Knapsack",
    "ls": "dispatchlab.dispatch.powercap.ls:LS",
    "dec": "dispatchlab.dispatch.cp.dec:DEC",
    "bf": "dispatchlab.dispatch.powercap.budget:BF",
    "dvfs": "dispatchlab.dispatch.powercap.budget:DVFS",
    "rapl-simple": "dispatchlab.dispatch.powercap.rapl:RaplSimple",
    "rapl-dynshare": "dispatchlab.dispatch.powercap.rapl:RaplDynShare",
    "dec-rapl": "dispatchlab.dispatch.powercap.rapl:DecRapl",
})


def make_dispatcher(name: str, **params: object) -> Dispatcher:
    """Build a dispatcher by registered name, or ``"module:Class"`` for a class of your
    own, with its ``__init__`` parameters."""
    disp = build(DISPATCHERS, "dispatcher", name, params, base=Dispatcher)
    disp.validate()
    return disp


__all__ = [
    "ALLOCATORS",
    "DISPATCHERS",
    "EASY",
    "FIFO",
    "LJF",
    "PRB",
    "SJF",
    "Allocation",
    "Allocator",
    "BestFit",
    "Conservative",
    "Decision",
    "DispatchError",
    "Dispatcher",
    "FirstFit",
    "Reject",
    "Requirements",
    "SetPower",
    "SetSpeed",
    "Start",
    "View",
    "make_dispatcher",
]
