"""What a dispatcher needs from a run: :class:`Requirements` (``Dispatcher.requires``).

Modelled on scikit-learn's estimator tags: a small frozen record, declared by the
dispatcher class and read by everything that builds or checks a run instead of probing
the dispatcher's attributes one by one:

* the engine (:class:`dispatchlab.sim.engine.Simulation`, :func:`dispatchlab.sim.engine.
  check_combination`): node-level placement, slowed running jobs, passes on an empty
  queue;
* the command line (``check_power_inputs``): a cap, job power, power predictions;
* campaign files (which dispatchers need the ``[power]`` section);
* :func:`dispatchlab.testing.check_dispatcher` (which inputs its check runs give, which
  workloads it runs, and the requirements it reports).

A dispatcher declares its requirements with class attributes (the names of earlier
releases, still honoured for your own classes, see :meth:`Requirements.declared_by`)::

    class Mine(Dispatcher):
        needs_power = True            # Requirements.power_predictions
        supports_node_level = False   # Requirements.node_level

or by overriding the ``requires`` property (a wrapper whose requirements depend on its
parts, like ``dec-rapl``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

#: Requirements field -> the dispatcher class attribute that declares it (and its value
#: when the class does not set it)
DECLARATIONS: dict[str, tuple[str, bool]] = {
    "node_level": ("supports_node_level", True),
    "power_predictions": ("needs_power", False),
    "job_power": ("needs_job_power", False),
    "cap": ("needs_cap", False),
    "empty_queue_pass": ("call_on_empty_queue", True),
    "slows_running_jobs": ("slows_running_jobs", False),
    "pass_log": ("keeps_pass_log", False),
}


@dataclass(frozen=True, slots=True)
class Requirements:
    """What a dispatcher needs from a run (see the module docstring).

    The defaults describe a plain dispatcher: it places jobs on nodes when the platform
    asks for it, needs no power input, is called at every pass and keeps no pass log.
    """

    #: it can place jobs on nodes (node-level platforms: more resources than cores, or
    #: units of more than one core); False: pooled (counting) platforms only, a
    #: node-level run of it is refused before it starts (``supports_node_level``)
    node_level: bool = True
    #: it reads the power predictions (``view.power_prediction``): a run needs a power
    #: predictor, and ``check_dispatcher`` gives one and a cap (``needs_power``)
    power_predictions: bool = False
    #: it reads the jobs' measured power (``view.job_power``, ``view.node_power()``): the
    #: jobs need power data (``needs_job_power``)
    job_power: bool = False
    #: it caps power: a run without a power cap is refused (``needs_cap``)
    cap: bool = False
    #: it must be called at a pass whose queue is empty (no waiting job) when no
    #: wake-up it asked for fired then. False lets the engine skip such passes; the
    #: engine then reads the dispatcher's live ``call_on_empty_queue`` at each of them,
    #: so a dispatcher may ask for them for a while during a run (a settled DynShare
    #: does) (``call_on_empty_queue``)
    empty_queue_pass: bool = True
    #: it lowers the power levels of running jobs (``SetPower``): a run needs an
    #: explicit duration model (``slows_running_jobs``)
    slows_running_jobs: bool = False
    #: it appends one record (a dict) per pass to its ``pass_log_`` list, which
    #: ``simulate --trace-decisions`` writes (the CP dispatchers) (``keeps_pass_log``)
    pass_log: bool = False

    @classmethod
    def declared_by(cls, dispatcher: Any) -> Requirements:
        """The requirements ``dispatcher`` (an instance) declares with class attributes
        (:data:`DECLARATIONS`: ``supports_node_level``, ``needs_power``,
        ``needs_job_power``, ``needs_cap``, ``call_on_empty_queue``,
        ``slows_running_jobs``, ``keeps_pass_log``); an attribute it does not set
        keeps the field's default. This is what ``Dispatcher.requires`` gives unless a
        class overrides it."""
        values = {}
        for field, (attr, default) in DECLARATIONS.items():
            value = _declared(dispatcher, attr)
            values[field] = default if value is None else bool(value)
        return cls(**values)

    def union(self, *others: Requirements) -> Requirements:
        """The requirements of a dispatcher made of this one and ``others`` (parts it
        calls): placement on nodes only if all support it, every other need if any
        has it, except ``pass_log``, which stays this one's (a part's log is the
        part's own)."""
        out = {}
        for f in fields(self):
            values = [getattr(r, f.name) for r in (self, *others)]
            out[f.name] = (all(values) if f.name == "node_level"
                           else values[0] if f.name == "pass_log" else any(values))
        return Requirements(**out)

    def as_dict(self) -> dict[str, bool]:
        """The fields as a plain dict (for reports)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def describe(self) -> str:
        """One line for people: the needs that differ from a plain dispatcher's."""
        plain = Requirements()
        words = {
            "node_level": "pooled (counting) platforms only",
            "power_predictions": "power predictions",
            "job_power": "measured job power",
            "cap": "a power cap",
            "empty_queue_pass": "no pass on an empty queue",
            "slows_running_jobs": "a duration model (slows running jobs)",
            "pass_log": "a pass log",
        }
        parts = [words[f.name] for f in fields(self)
                 if getattr(self, f.name) != getattr(plain, f.name)]
        return ", ".join(parts) if parts else "nothing beyond a plain dispatcher"


def _declared(dispatcher: Any, attr: str) -> object | None:
    """The value ``dispatcher`` declares for ``attr`` (its own instance attribute, else
    its class's), None when it declares none: only the base class ``Dispatcher``
    answers (whose ``call_on_empty_queue`` is derived from ``requires``; a value set on
    an instance is kept in :data:`OWN_EMPTY_QUEUE_PASS`).

    The instance's own value is read through the attribute protocol, never through
    ``vars(dispatcher)``: on CPython 3.11 making an object's ``__dict__`` turns every
    later attribute read of that object into a dictionary lookup, and the engine reads
    its dispatcher's ``requires`` before the run (about 2 % more instructions for a
    whole EASY run)."""
    for klass in type(dispatcher).__mro__:
        if attr not in vars(klass):
            continue
        value = vars(klass)[attr]
        if klass.__module__ == _BASE_MODULE and klass.__qualname__ == "Dispatcher":
            if isinstance(value, property):  # call_on_empty_queue: set on the instance?
                return getattr(dispatcher, OWN_EMPTY_QUEUE_PASS, None)
            own = getattr(dispatcher, attr, value)  # an instance attribute shadows it
            return None if own is value else own
        if isinstance(value, property):  # computed (dec-rapl's call_on_empty_queue)
            return value.__get__(dispatcher, type(dispatcher))
        return getattr(dispatcher, attr, value)  # an instance attribute shadows it
    return getattr(dispatcher, attr, None)


_BASE_MODULE = "dispatchlab.dispatch.base"
#: The instance attribute in which ``Dispatcher.call_on_empty_queue`` keeps a value set
#: on a dispatcher (deleting the property removes it: the class's value again).
OWN_EMPTY_QUEUE_PASS = "_own_call_on_empty_queue"
