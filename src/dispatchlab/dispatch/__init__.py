"""Dispatchers (scheduling + allocation) and the view they see.

``make_dispatcher(name, **params)`` builds a registered dispatcher: ``fifo``, ``sjf``,
``ljf``, ``easy``, ``conservative``. A new dispatcher is one subclass of
:class:`Dispatcher` with a ``dispatch(view)`` method; see the README.
"""

from dispatchlab.dispatch.allocators import ALLOCATORS, Allocator, BestFit, FirstFit
from dispatchlab.dispatch.backfill import EASY, Conservative
from dispatchlab.dispatch.base import (
    Allocation,
    Decision,
    Dispatcher,
    DispatchError,
    Reject,
    SetSpeed,
    Start,
    View,
)
from dispatchlab.dispatch.priority import FIFO, LJF, SJF
from dispatchlab.params import build

DISPATCHERS: dict[str, type[Dispatcher]] = {
    "fifo": FIFO,
    "sjf": SJF,
    "ljf": LJF,
    "easy": EASY,
    "conservative": Conservative,
}


def make_dispatcher(name: str, **params: object) -> Dispatcher:
    """Build a dispatcher by registered name, or ``"module:Class"`` for a class of your
    own, with its ``__init__`` parameters."""
    disp = build(DISPATCHERS, "dispatcher", name, params, base=Dispatcher)
    check = getattr(disp, "_check", None)
    if check is not None:
        check()
    return disp


__all__ = [
    "ALLOCATORS",
    "DISPATCHERS",
    "EASY",
    "FIFO",
    "LJF",
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
    "SetSpeed",
    "Start",
    "View",
    "make_dispatcher",
]
