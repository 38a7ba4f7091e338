"""The dispatcher contract: the :class:`Dispatcher` base, what it may decide
(:class:`Start`, ...), what it needs (:class:`Requirements`) and what it sees
(:class:`View`, a protocol defined in :mod:`dispatchlab.dispatch.view` and re-exported
here).

A dispatcher is called once per dispatch pass with a read-only, lazy view of the
system and returns a list of decisions. The engine applies them in order and
re-validates each (the job must be waiting, its allocation must fit the free
resources), so a buggy dispatcher cannot corrupt a run: an invalid decision raises
:class:`DispatchError` naming the dispatcher, the job and the reason.

Two ways of fitting jobs exist:

* **counting** (``view.counting`` is True): every job unit is exactly one core and the
  platform has no other resource, so a job fits iff ``units <= view.free_cores``.
  Placement is not simulated; a :class:`Start` carries no allocation.
* **node-level**: ``view.free`` is the (nodes x resources) matrix of free capacity and a
  :class:`Start` must carry an :class:`Allocation` (units per node), usually made by
  the dispatcher's allocator.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

from dispatchlab.core.deprecation import REMOVED_IN, MovedWarning
from dispatchlab.core.params import Params
from dispatchlab.dispatch.allocation import Allocation
from dispatchlab.dispatch.requirements import OWN_EMPTY_QUEUE_PASS, Requirements
from dispatchlab.dispatch.view import Changes, QueueColumns, RunningColumns, View

__all__ = [
    "Allocation",
    "Changes",
    "Decision",
    "DispatchError",
    "Dispatcher",
    "QueueColumns",
    "Reject",
    "Requirements",
    "RunningColumns",
    "SetPower",
    "SetSpeed",
    "Start",
    "View",
]


class DispatchError(RuntimeError):
    """A dispatcher returned a decision the engine cannot apply (a bug in the dispatcher)."""


class Start(NamedTuple):
    """Start waiting job ``job`` (row in the job table) now, on ``allocation``."""

    job: int
    allocation: Allocation | None = None


class Reject(NamedTuple):
    """Remove waiting job ``job`` from the queue without running it."""

    job: int
    reason: str


class SetSpeed(NamedTuple):
    """Run job ``job`` at ``speed`` (work per second, 1.0 = nominal) from now on; the
    engine reschedules its end from its exact remaining work (and scales its remaining
    estimate the same way)."""

    job: int
    speed: float


class SetPower(NamedTuple):
    """Run job ``job`` at power level ``level`` (0 < level <= 1, 1 = full power) from now
    on; the simulation's duration model turns the level into a speed (the identity
    model keeps the speed at 1), and the job's remaining work is rescheduled at it."""

    job: int
    level: float


#: What :meth:`Dispatcher.dispatch` returns a list of: one of the four decisions.
Decision = Start | Reject | SetSpeed | SetPower


class Dispatcher(Params, ABC):
    """Base class of all dispatchers: override :meth:`dispatch`.

    Parameters are ``__init__`` keywords (see :class:`dispatchlab.core.params.Params`),
    checked by :meth:`validate`. ``start(view)`` is called once before the run; per-run
    state goes there. What the dispatcher needs from a run is :attr:`requires`,
    declared with the class attributes below (read by :meth:`Requirements.declared_by`).
    """

    name: str = "dispatcher"
    # --- declarations, read by :attr:`requires` (see :class:`Requirements`) ----------
    #: False for a dispatcher that only handles counting (pooled cores) platforms
    #: (``requires.node_level``): a node-level run of it is refused before it starts
    #: (an InputError from :func:`dispatchlab.sim.engine.check_combination`, which
    #: every way of building a run calls), and :func:`dispatchlab.testing.
    #: check_dispatcher` skips its node-level checks
    supports_node_level: ClassVar[bool] = True
    #: True for a dispatcher that slows running jobs (``requires.slows_running_jobs``):
    #: it lowers their power levels (:class:`SetPower`), which the run's duration model
    #: turns into speeds. Such a run needs an explicit duration model (``none``, kept
    #: run times, only when given on purpose; it is then reported as "throttling
    #: without slowdown"); without one it is refused before it starts
    #: (:func:`dispatchlab.sim.engine.check_combination`). A dispatcher that only gives
    #: speeds itself (:class:`SetSpeed`) uses no duration model and need not declare it.
    slows_running_jobs: ClassVar[bool] = False
    #: True when it reads power predictions (``requires.power_predictions``)
    needs_power: ClassVar[bool] = False
    #: True when it reads the jobs' measured power (``requires.job_power``)
    needs_job_power: ClassVar[bool] = False
    #: True for a power-capping method that needs a cap (``requires.cap``)
    needs_cap: ClassVar[bool] = False
    #: True when it appends one record per pass to :attr:`pass_log_`
    #: (``requires.pass_log``)
    keeps_pass_log: ClassVar[bool] = False
    #: the per-pass records of a dispatcher that keeps a pass log (a list made in
    #: ``start``; empty for the others)
    pass_log_: Sequence[dict[str, Any]] = ()

    @property
    def call_on_empty_queue(self) -> bool:
        """Whether to call :meth:`dispatch` at a pass whose queue is empty (no wake-up
        fired). A class declares False to spare such calls (``requires.
        empty_queue_pass``); the engine then reads this attribute at each of them, so
        a dispatcher may set it True on itself for a while during a run (and delete it
        to fall back to its class's value). Default: ``requires.empty_queue_pass``."""
        own = getattr(self, OWN_EMPTY_QUEUE_PASS, None)
        return self.requires.empty_queue_pass if own is None else bool(own)

    @call_on_empty_queue.setter
    def call_on_empty_queue(self, value: bool) -> None:
        setattr(self, OWN_EMPTY_QUEUE_PASS, value)

    @call_on_empty_queue.deleter
    def call_on_empty_queue(self) -> None:
        if hasattr(self, OWN_EMPTY_QUEUE_PASS):
            delattr(self, OWN_EMPTY_QUEUE_PASS)

    @property
    def requires(self) -> Requirements:
        """What this dispatcher needs from a run (:class:`Requirements`), read by the
        engine, the command line, campaign files and ``check_dispatcher``. Default: the
        class's declarations (:meth:`Requirements.declared_by`: ``supports_node_level``,
        ``needs_power``, ``needs_job_power``, ``needs_cap``, ``call_on_empty_queue``,
        ``slows_running_jobs``, ``keeps_pass_log``). Override it when they depend on the
        parameters (a dispatcher made of parts)."""
        return Requirements.declared_by(self)

    def validate(self) -> None:
        """Check the parameters; raise :class:`~dispatchlab.core.errors.InputError`
        naming the bad one (``field``). Called when the dispatcher is built by name
        (:func:`dispatchlab.dispatch.make_dispatcher`, the command line, campaign
        files) and by the built-in dispatchers' ``start``. Default: nothing to check (a
        class of an earlier release that defines ``_check`` has it called)."""
        if type(self)._check is not Dispatcher._check:
            warnings.warn(f"{type(self).__name__}._check: define validate() instead; the "
                          f"old name is removed in dispatchlab {REMOVED_IN}", MovedWarning,
                          stacklevel=2)
            self._check()

    def _check(self) -> None:
        """Deprecated name of :meth:`validate` (removed in :data:`~dispatchlab.core.
        deprecation.REMOVED_IN`)."""
        if type(self)._check is Dispatcher._check:  # not reached from an override's super()
            warnings.warn("Dispatcher._check moved to Dispatcher.validate; the old name is "
                          f"removed in dispatchlab {REMOVED_IN}", MovedWarning, stacklevel=2)
            self.validate()

    def start(self, view: View) -> None:
        """Called once before the first pass."""

    def run_facts(self) -> dict:
        """Facts about the run a dispatcher reports in the summary once it ends (the
        CP dispatchers: solver passes, share improved on PRB, limit hits, jobs
        modelled). Keys must be declared in :data:`dispatchlab.metrics.keys.METRICS`
        to reach tables and stores. Default: none."""
        return {}

    @abstractmethod
    def dispatch(self, view: View) -> list[Decision]:
        """Subclasses implement this."""
