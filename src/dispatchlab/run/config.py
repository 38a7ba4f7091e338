"""One run's configuration: a frozen, typed record of everything that makes a run.

A :class:`RunConfig` names the trace to read (:class:`TraceSource`: the file, its
reader options, the cleaning filters and the selection), the platform
(:class:`PlatformChoice`), the components in the component grammar
(:class:`Component`: the dispatcher, the predictor, the power predictor and the
duration model), the power inputs (job power file, power series, cap), the hot start,
the overrun policy, the measured jobs, tau, the limits (``max_wall``) and the engine. It holds
names and numbers only, no loaded data, so it is written to and read from JSON
(:meth:`RunConfig.to_json`, :meth:`RunConfig.from_json`: ``from_json(c.to_json()) ==
c``).

:meth:`RunConfig.validate` is the one check of the settings that need no file: it
raises :class:`~dispatchlab.core.errors.InputError` with the one-line text of the first
mistake, naming the field by its command-line option (:data:`OPTIONS`), as
``dispatchlab simulate`` prints it. What needs the files (the trace, the platform, the
power data, whether a dispatcher's requirements are met) is checked when the run is
assembled.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from dispatchlab.core.components import parse_spec
from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.metrics import Measure, check_tau
from dispatchlab.sim.engine import check_overrun
from dispatchlab.sim.native import ENGINES
from dispatchlab.workload.requests import parse_partition_map

__all__ = ["OPTIONS", "Component", "PlatformChoice", "RunConfig", "TraceSource"]

#: The command-line option that sets each validated field (the ``field`` of its errors).
OPTIONS: dict[str, str] = {
    "measure": "--measure",
    "hot_start": "--hot-start",
    "overrun": "--overrun",
    "max_wall": "--max-wall",
    "dispatcher": "--dispatcher",
    "predictor": "--predictor",
    "power_predictor": "--power-predictor",
    "duration_model": "--duration-model",
    "partition_map": "--partition-map",
    "ignore_partitions": "--ignore-partitions",
    "engine": "--engine",
}

#: The component kind (:mod:`dispatchlab.core.components`) of each component field.
_KINDS: dict[str, str] = {"dispatcher": "dispatcher", "predictor": "predictor",
                          "power_predictor": "power-predictor",
                          "duration_model": "duration-model"}


@dataclass(frozen=True)
class Component:
    """A component by its registered (or ``module:Class``) ``name`` and the parameters
    given (typed values: numbers, text, booleans; the defaults are the class's)."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The component in the grammar, ``NAME:KEY=VALUE...`` (values by ``str``)."""
        return self.name + "".join(f":{k}={v}" for k, v in self.params.items())


@dataclass(frozen=True)
class TraceSource:
    """A trace file and how it is read, cleaned and selected (the options of
    :func:`dispatchlab.workload.load.load_trace`): ``format`` (None: from the content)
    and the reader's ``reader_options`` (``submit_from``, ``timezone``, ``columns``,
    ``unstarted``, ``running``), ``lenient`` (skip malformed lines), ``extra_fields``
    (``error`` | ``ignore``), the drop filters ``drop_overrun`` and ``max_procs``, and
    one selection as the command line writes it: ``window`` ``T0:T1``, ``jobs``
    ``I0:I1`` or ``fraction`` ``first:F`` / ``last:F``."""

    path: str
    format: str | None = None
    reader_options: dict[str, Any] = field(default_factory=dict)
    lenient: bool = False
    extra_fields: str = "error"
    drop_overrun: bool = False
    max_procs: bool = False
    window: str | None = None
    jobs: str | None = None
    fraction: str | None = None


@dataclass(frozen=True)
class PlatformChoice:
    """The platform: a preset or platform file (``platform``), a homogeneous machine
    (``nodes`` x ``cores_per_node``), or, with neither, the trace header's machine as
    one pool of cores."""

    platform: str | None = None
    nodes: int | None = None
    cores_per_node: int | None = None


@dataclass(frozen=True)
class RunConfig:
    """Everything one simulation is made of (see the module docstring).

    ``trace``: None when the caller gives the job table to
    :func:`~dispatchlab.run.build.build` (``compare`` runs each slice of a table it
    read once).

    ``power``: the job power file (``--power``); ``power_series``: the job power series
    file; ``cap`` (a fraction of the platform's maximum dynamic power, or watts such as
    ``400kW``) with ``cap_window`` ``T0:T1``, or a ``cap_file``; ``hot_start``: the share
    of nodes busy with dummy jobs at t = 0 (None: none); ``overrun``: ``run`` | ``kill``;
    ``measure``: the measured jobs (``all`` | ``time:T0:T1`` | ``index:I0:I1``); ``tau``:
    the bounded-slowdown threshold (s); ``max_wall``: the wall-clock budget (s, None:
    none). ``partition_map``: ``OLD=NEW[,OLD=NEW...]``, log partition names renamed to
    the platform's; ``ignore_partitions``: no partition restricts any job (the two
    exclude each other; see :mod:`dispatchlab.workload.requests`). ``engine``: which
    engine simulates (:data:`dispatchlab.sim.native.ENGINES`): ``auto`` (the native core
    when it implements every component of the run, else the Python engine), ``native``
    (a run it cannot simulate is refused, naming why) or ``python``."""

    trace: TraceSource | None = None
    platform: PlatformChoice = field(default_factory=PlatformChoice)
    dispatcher: Component = field(default_factory=lambda: Component("easy"))
    predictor: Component = field(default_factory=lambda: Component("walltime"))
    power_predictor: Component | None = None
    duration_model: Component | None = None
    power: str | None = None
    power_series: str | None = None
    cap: str | None = None
    cap_window: str | None = None
    cap_file: str | None = None
    hot_start: float | None = None
    overrun: str = "run"
    measure: str = "all"
    tau: float = 10.0
    max_wall: float | None = None
    partition_map: str | None = None
    ignore_partitions: bool = False
    engine: str = "auto"

    def validate(self) -> RunConfig:
        """Check every setting that needs no file; return ``self``. The first mistake
        raises :class:`InputError` naming the field's command-line option."""
        check_tau(self.tau)
        self.parsed_measure()
        for name, kind in _KINDS.items():
            comp = getattr(self, name)
            if comp is not None:
                parse_spec(comp.name, kind, option=OPTIONS[name],
                           typed=comp.params)
        if self.hot_start is not None and not 0 <= self.hot_start <= 1:
            raise InputError(f"the hot start is a share of the nodes in [0, 1], got "
                             f"{self.hot_start}", field=OPTIONS["hot_start"])
        check_overrun(self.overrun, field=OPTIONS["overrun"])
        wall = self.max_wall
        if wall is not None and not (wall > 0 and math.isfinite(wall)):
            raise InputError(f"the wall-clock budget must be a number of seconds > 0, got "
                             f"{wall}", field=OPTIONS["max_wall"])
        parse_partition_map(self.partition_map)
        if self.partition_map is not None and self.ignore_partitions:
            raise InputError("give either --partition-map or --ignore-partitions, not both",
                             field=OPTIONS["ignore_partitions"])
        if self.engine not in ENGINES:
            hint = did_you_mean(self.engine, ENGINES) if isinstance(self.engine, str) else ""
            raise InputError(f"the engine is one of {', '.join(ENGINES)}, got "
                             f"{self.engine!r}{hint}", field=OPTIONS["engine"])
        return self

    def parsed_measure(self) -> Measure:
        """:attr:`measure` as a :class:`~dispatchlab.metrics.Measure` (InputError
        naming ``--measure`` when it is not one)."""
        try:
            return Measure.parse(self.measure)
        except (ValueError, InputError) as exc:
            message = exc.message if isinstance(exc, InputError) else str(exc)
            raise InputError(message, field=OPTIONS["measure"]) from None

    def to_json(self) -> str:
        """The configuration as JSON text (sorted keys): :meth:`from_json` reads it back
        equal."""
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> RunConfig:
        """The configuration of :meth:`to_json`'s text. Unknown or missing keys raise
        :class:`InputError` naming them; values are checked by :meth:`validate`."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise InputError(f"not a run configuration: {exc}") from None
        if not isinstance(data, dict):
            raise InputError("not a run configuration: expected a JSON object")
        return _record(cls, data, "")


_NESTED: dict[str, type] = {"trace": TraceSource, "platform": PlatformChoice,
                            "dispatcher": Component, "predictor": Component,
                            "power_predictor": Component, "duration_model": Component}


def _record(cls: type, data: dict[str, Any], where: str) -> Any:
    """``cls`` from the JSON object ``data`` (nested records by :data:`_NESTED`)."""
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} (keys: {', '.join(sorted(known))})",
                         field=where + unknown[0])
    values = {}
    for key, value in data.items():
        nested = _NESTED.get(key) if cls is RunConfig else None
        if nested is not None and value is not None:
            if not isinstance(value, dict):
                raise InputError("expected a JSON object", field=where + key)
            value = _record(nested, value, f"{where}{key}.")
        values[key] = value
    try:
        return cls(**values)
    except TypeError:
        missing = [f.name for f in fields(cls) if f.name not in values]
        raise InputError(f"missing key {missing[0]!r}" if missing else
                         "not a run configuration", field=where.rstrip(".") or None) from None
