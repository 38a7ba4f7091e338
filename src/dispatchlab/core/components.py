"""One grammar for naming a component (dispatcher, predictor, power predictor, duration
model, allocator, ordering) with its parameters.

Used by every command (``simulate``, ``compare``, ``study``, ``predict``), by
campaigns and by every ``make_*`` function of the Python API (``make_dispatcher(
"easy:order=sjf")``; one parser, :func:`parse_spec`)::

    SPEC  = NAME (":" KEY "=" VALUE)*
    NAME  = a registered name          easy, sjf, history  (case-insensitive: EASY -> easy)
          | module:Class               my_dispatchers:EasySAF  (the current directory is
                                       importable)
          | path/file.py:Class         ./mine/easy_saf.py:EasySAF

Segments that contain ``=`` are parameters; everything before the first of them is the
name. So ``easy:order=sjf:reservations=2`` is ``easy`` with two parameters, and
``mymod:Cls:alpha=0.5`` is ``mymod:Cls`` with one. A value that itself contains ``:``
or ``,`` cannot be written inline: give it with ``-D KEY=VALUE`` (dispatcher) or
``-P KEY=VALUE`` (predictor) instead.

Values are typed from the class's ``__init__``: a parameter whose default is a bool
takes ``true/false/yes/no/1/0``; an int default takes an integer; a float default a
number; a str default the text as is. A number default whose parameter is annotated
to take text too (``arrivals: int | str``, ``admission: float | str | None``) keeps a
value that is no number as text (``arrivals=all``; the class checks it). A parameter
without a usable default (``None`` or required) is read as ``true``/``false``/``none``,
an integer, a number, or text, in that order. An unknown parameter or a value of the
wrong type is an :class:`~dispatchlab.core.errors.InputError` naming the parameter, with
suggestions.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean


class Registry(Protocol):
    """What the grammar needs of a registry (:class:`dispatchlab.core.registry.Registry`
    is the one implementation): declared here so that the grammar does not import the
    registry module, which imports the grammar to parse its specs."""

    kind: str

    @property
    def aliases(self) -> Mapping[str, str]: ...

    def names(self) -> list[str]: ...

    def canonical(self, name: str) -> str: ...

    def resolve(self, name: str) -> type: ...

    def build(self, spec: Any, /, **params: Any) -> Any: ...

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}

#: The component kinds by name -> where their registry lives (``module:NAME``), for
#: callers that name a kind by text (``parse_component(text, "dispatcher")``, an own
#: class's ``nested = {"allocator": "allocator"}``); the module is imported on first
#: use, as a registry's lazy entries are.
KINDS: dict[str, str] = {
    "dispatcher": "dispatchlab.dispatch:DISPATCHERS",
    "predictor": "dispatchlab.predict:PREDICTORS",
    "allocator": "dispatchlab.dispatch.allocators:ALLOCATORS",
    "ordering": "dispatchlab.dispatch.orderings:ORDERINGS",
    "power-predictor": "dispatchlab.predict.power.predictors:POWER_PREDICTORS",
    "duration-model": "dispatchlab.sim.duration:DURATION_MODELS",
}


def load_object(spec: str) -> Any:
    """The object a ``"module:NAME"`` string names (the module is imported)."""
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def registry_of(kind: str | Registry) -> Any:
    """The registry (a :class:`dispatchlab.core.registry.Registry`) of a component kind
    given by name (:data:`KINDS`); a registry is returned as is. An unknown kind name
    is a ValueError (a programming error)."""
    if not isinstance(kind, str):
        return kind
    home = KINDS.get(kind)
    if home is None:
        raise ValueError(f"unknown component kind {kind!r}")
    return load_object(home)


def registered_names(kind: str | Registry) -> list[str]:
    """The registered names of ``kind`` (a registry or a kind name), in registry order
    (help texts list these, never a hand-written list)."""
    return registry_of(kind).names()


def component_class(kind: str | Registry, name: str) -> type:
    """The class a component name refers to (registered, ``module:Class`` or file)."""
    return registry_of(kind).resolve(name)


def split_spec(text: str, option: str) -> tuple[str, dict[str, str]]:
    """``NAME(:KEY=VALUE)*`` -> (NAME, {KEY: VALUE text}); see the module docstring."""
    text = text.strip()
    parts = text.split(":")
    first_param = next((i for i, p in enumerate(parts) if "=" in p), len(parts))
    name = ":".join(parts[:first_param]).strip()
    if not name:
        raise InputError(f"expected NAME or NAME:KEY=VALUE, got {text!r}", field=option)
    raw: dict[str, str] = {}
    for part in parts[first_param:]:
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise InputError(f"expected KEY=VALUE after the name, got {part!r} in {text!r} "
                             "(a value containing ':' or ',' goes through -D/-P)",
                             field=option)
        if key in raw:
            raise InputError(f"parameter {key!r} given twice in {text!r}", field=option)
        raw[key] = value
    return name, raw


def parse_assignments(items: Iterable[str], option: str) -> dict[str, str]:
    """``-D``/``-P`` values ``KEY=VALUE`` (repeatable) -> {KEY: VALUE text}; the value
    may contain anything, ``:`` and ``,`` included."""
    out: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise InputError(f"expected KEY=VALUE, got {item!r}", field=option)
        if key in out:
            raise InputError(f"parameter {key!r} given twice", field=option)
        out[key] = value
    return out


def _parse_untyped(value: str) -> Any:
    low = value.strip().lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def _admits_text(annotation: Any) -> bool:
    """Whether a parameter annotation (a string under postponed evaluation, or a type)
    lists ``str`` as a union member."""
    if isinstance(annotation, str):
        return "str" in {part.strip() for part in annotation.split("|")}
    return annotation is str or str in typing.get_args(annotation)


def typed_value(cls: type, key: str, value: str, *, kind: str, name: str,
                option: str, given: Mapping[str, Any] | None = None) -> Any:
    """Parse ``value`` for parameter ``key`` of ``cls`` (see the module docstring).

    ``head__param`` keys address a sub-component's parameter (``allocator__x``): the
    value is typed from the class of the sub-component named in ``given`` (the values
    parsed so far) or, when not given, by the parameter's default."""
    sig = inspect.signature(cls.__init__)  # type: ignore[misc]  # a class's own __init__
    params = {k: p for k, p in sig.parameters.items() if k != "self"}
    head, sep, rest = key.partition("__")
    if sep and head in params:
        sub_kind = getattr(cls, "nested", {}).get(head)
        current = (given or {}).get(head, params[head].default)
        if sub_kind is None or not isinstance(current, str):
            raise InputError(f"parameter {head!r} of {kind} {name!r} is not a component "
                             f"(it has no parameters of its own), so {key!r} is not a "
                             "parameter", field=option)
        sub = registry_of(sub_kind)
        sub_name = sub.canonical(current)
        return typed_value(sub.resolve(sub_name), rest, value,
                           kind=f"{sub.kind} of {kind} {name!r}", name=sub_name,
                           option=option)
    if key not in params:
        raise InputError(f"{kind} {name!r} has no parameter {key!r}"
                         f"{did_you_mean(key, params)} (parameters: "
                         f"{', '.join(params) or 'none'})", field=option)
    default = params[key].default
    text = value.strip()
    try:
        if isinstance(default, bool):
            low = text.lower()
            if low in _TRUE:
                return True
            if low in _FALSE:
                return False
            raise ValueError
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
        if isinstance(default, str):
            return value
    except ValueError:
        if not isinstance(default, bool) and _admits_text(params[key].annotation):
            return value
        expected = ("true or false" if isinstance(default, bool) else
                    "an integer" if isinstance(default, int) else "a number")
        raise InputError(f"parameter {key!r} of {kind} {name!r} must be {expected}, "
                         f"got {value!r}", field=option) from None
    return _parse_untyped(value)


@dataclass(frozen=True)
class ComponentSpec:
    """A component named by the grammar: ``kind``, canonical ``name`` and typed
    ``params`` (only those given; defaults are the class's). ``registry`` is the
    registry of a kind not listed in :data:`KINDS` (None for those: found by name)."""

    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    registry: Registry | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        """The spec written back in the grammar (values by ``str``)."""
        return self.name + "".join(f":{k}={v}" for k, v in self.params.items())

    def build(self) -> Any:
        """A fresh instance, built and validated by the kind's registry
        (:meth:`dispatchlab.core.registry.Registry.build`, as ``make_dispatcher`` does)."""
        registry = self.registry if self.registry is not None else registry_of(self.kind)
        return registry.build(self.name, **self.params)


def parse_spec(text: str, registry: str | Registry, *, option: str | None = None,
               extra: Mapping[str, str] | None = None,
               typed: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """Parse ``text`` in the grammar against ``registry`` (a registry, or a kind name
    of :data:`KINDS`) into the canonical name and the typed parameters, without
    building the component: the one parser behind :func:`parse_component` (the command
    line, campaign files) and every ``make_*`` function of the Python API (through
    :meth:`dispatchlab.core.registry.Registry.build`). ``extra`` holds ``-D``/``-P``
    assignments (text values, typed like inline ones; an inline and an extra value for
    one key is an error); ``typed`` holds values already typed (keyword arguments of a
    ``make_*`` call, the legacy options such as ``--order``); a key given twice is an
    error. ``option`` names the command-line option (or API field) in errors."""
    reg = registry_of(registry)
    kind = reg.kind
    option = option or f"--{kind}"
    name, raw = split_spec(text, option)
    head, colon, rest = name.partition(":")
    if colon and head.lower() in {k.lower() for k in reg.names()} | set(reg.aliases):
        raise InputError(f"expected KEY=VALUE after {head!r}, got {rest!r} in {text!r}",
                         field=option)
    name = reg.canonical(name)
    cls = reg.resolve(name)
    params: dict[str, Any] = {}
    given = dict(typed or {})
    # plain keys first: a sub-component's name types its ``name__param`` keys
    for key, value in sorted(raw.items(), key=lambda kv: "__" in kv[0]):
        params[key] = typed_value(cls, key, value, kind=kind, name=name, option=option,
                                  given={**given, **params})
    for key, value in sorted((extra or {}).items(), key=lambda kv: "__" in kv[0]):
        if key in params:
            raise InputError(f"parameter {key!r} of {kind} {name!r} given both inline and "
                             "with -D/-P", field=option)
        dash = {"dispatcher": "-D", "power-predictor": "-Q"}.get(kind, "-P")
        params[key] = typed_value(cls, key, value, kind=kind, name=name, option=dash,
                                  given={**given, **params})
    for key, value in given.items():
        if key in params:
            raise InputError(f"parameter {key!r} of {kind} {name!r} given twice",
                             field=option)
        params[key] = value
    return name, params


def parse_component(text: str, kind: str | Registry, *, option: str | None = None,
                    extra: Mapping[str, str] | None = None,
                    typed: Mapping[str, Any] | None = None) -> ComponentSpec:
    """Parse ``text`` in the grammar into a :class:`ComponentSpec` (:func:`parse_spec`)
    and validate it by building one instance. ``kind`` is a registry or a kind name
    of :data:`KINDS`; ``option`` names the command-line option in errors."""
    registry = registry_of(kind)
    kind_name: str = registry.kind
    option = option or f"--{kind_name}"
    name, params = parse_spec(text, registry, option=option, extra=extra, typed=typed)
    spec = ComponentSpec(kind_name, name, params, None if kind_name in KINDS else registry)
    try:
        spec.build()
    except InputError as exc:  # name the parameter the message is about
        message = exc.message
        if exc.field and exc.field != kind_name and exc.field not in message:
            message = f"parameter {exc.field!r} of {kind_name} {name!r}: {message}"
        raise InputError(message, field=option) from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"bad parameters for {kind_name} {name!r}: {exc}", field=option) from None
    return spec


def parse_component_list(values: Iterable[str], kind: str | Registry, *,
                         option: str | None = None) -> list[ComponentSpec]:
    """Several specs: the option repeated, and/or a comma-separated list of plain names
    (``--dispatcher easy,sjf``; a spec with parameters is given alone). Duplicates are
    an error."""
    registry = registry_of(kind)
    option = option or f"--{registry.kind}"
    specs: list[ComponentSpec] = []
    for value in values:
        items = [value] if "=" in value else [v for v in value.split(",")]
        if any(not v.strip() for v in items):
            raise InputError(f"expected comma-separated names, got {value!r}", field=option)
        specs.extend(parse_component(v, registry, option=option) for v in items)
    seen: set[str] = set()
    for s in specs:
        if s.text in seen:
            raise InputError(f"{s.text!r} is given twice", field=option)
        seen.add(s.text)
    return specs
