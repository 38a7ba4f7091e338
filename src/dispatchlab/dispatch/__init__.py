"""Dispatchers (scheduling + allocation) and the view they see.

``make_dispatcher(name, **params)`` builds a registered dispatcher: ``fifo``, ``sjf``,
``ljf``, ``easy``, ``conservative``, ``prb``, and the CP-SAT dispatchers ``hcp``,
``hcp-online``, ``pcp``, ``pcp-online`` (imported on first use: OR-Tools is loaded only
by them), Carastan-Santos et al. 2024's power-capped ``easy-pc`` and ``knapsack``, and Borghesi et
al. 2018's power
cappers ``ls``, ``dec`` (scheduling), ``bf``, ``dvfs`` (PA-HPC-SIM's power-budget EASY
variants), ``rapl-simple``, ``rapl-dynshare`` (throttling) and ``dec-rapl``. A new
dispatcher is one subclass of
:class:`Dispatcher` with a ``dispatch(view)`` method; see docs/tutorials/extending.md.
"""

from dispatchlab.core.registry import Registry
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


def _validate(dispatcher: Dispatcher) -> None:
    """Refuse a bad combination of a dispatcher's parameters (:meth:`Dispatcher.validate`)."""
    dispatcher.validate()


#: The registered dispatchers. The CP dispatchers and the power cappers are lazy
#: ``module:Class`` entries, imported on first use: :mod:`dispatchlab.dispatch.cp`
#: imports OR-Tools, and a run of another dispatcher must not load it.
DISPATCHERS: Registry[Dispatcher] = Registry("dispatcher", Dispatcher, {
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
}, validate=_validate)


def make_dispatcher(name: str | Dispatcher, **params: object) -> Dispatcher:
    """Build a dispatcher by registered name, or ``"module:Class"`` for a class of your
    own, with its ``__init__`` parameters (:meth:`DISPATCHERS.build
    <dispatchlab.core.registry.Registry.build>`: a spec in the component grammar, such
    as ``"easy:order=sjf"``, works too; the dispatcher is validated)."""
    return DISPATCHERS.build(name, **params)


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
