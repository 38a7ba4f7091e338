"""The scikit-learn-style parameter contract shared by predictors and dispatchers.

Every parameter is an explicit keyword of ``__init__`` stored unchanged on an attribute
of the same name; state learned during a run ends in ``_`` and is created by the
component's ``start``/``reset`` method, never in ``__init__``. That makes components
clone-able (a campaign builds fresh copies from a config) and gives a readable ``repr``.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, ClassVar, Self


class Params:
    """Mixin: ``get_params``, ``set_params``, ``clone`` and ``repr`` from ``__init__``.

    **Nested components.** A parameter listed in the class attribute ``nested``
    (parameter name -> component kind, e.g. ``{"allocator": "allocator"}``) holds a
    sub-component: a registered name (``"best-fit"``) or an instance. Its own parameters
    are reached with ``name__param`` keys, as in scikit-learn: ``set_params(
    allocator__x=1)`` replaces a name by an instance of that component with ``x=1``;
    ``get_params(deep=True)`` lists the sub-component's parameters under ``name__...``;
    ``clone`` clones sub-components too.
    """

    #: parameter name -> component kind of the parameters that hold a sub-component
    nested: ClassVar[dict[str, str]] = {}

    @classmethod
    def _param_names(cls) -> list[str]:
        if cls.__init__ is object.__init__:
            return []  # no __init__ of its own anywhere: a component without parameters
        sig = inspect.signature(cls.__init__)
        names = []
        for name, p in sig.parameters.items():
            if name == "self":
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ must not take *args or **kwargs")
            names.append(name)
        return names

    def get_params(self, deep: bool = False) -> dict[str, Any]:
        """The ``__init__`` parameters as stored on the instance; with ``deep``, also the
        parameters of sub-components that are instances, as ``name__param`` keys."""
        out = {name: getattr(self, name) for name in self._param_names()}
        if deep:
            for name, value in list(out.items()):
                if isinstance(value, Params):
                    for key, sub in value.get_params(deep=True).items():
                        out[f"{name}__{key}"] = sub
        return out

    def set_params(self, **params: Any) -> Self:
        """Set parameters; ``name__param`` keys set a sub-component's parameter (a
        sub-component given by name becomes an instance of that component)."""
        valid = set(self._param_names())
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            head, sep, rest = key.partition("__")
            if sep:
                nested.setdefault(head, {})[rest] = value
                continue
            if key not in valid:
                from dispatchlab.core.suggest import did_you_mean

                raise ValueError(f"{type(self).__name__} has no parameter {key!r}"
                                 + did_you_mean(key, sorted(valid)))
            setattr(self, key, value)
        for head, sub in nested.items():
            if head not in valid:
                raise ValueError(f"{type(self).__name__} has no parameter {head!r}")
            setattr(self, head, self._component(head).set_params(**sub))
        return self

    def _component(self, name: str) -> Params:
        """A fresh instance of the sub-component held by parameter ``name``."""
        value = getattr(self, name)
        if isinstance(value, Params):
            return value.clone()
        kind = self.nested.get(name)
        if kind is None or not isinstance(value, str):
            raise ValueError(f"parameter {name!r} of {type(self).__name__} is not a "
                             "component (it has no parameters of its own)")
        return make_component(kind, value)

    def clone(self) -> Self:
        """A fresh, unstarted copy with the same parameters (sub-components cloned)."""
        return type(self)(**{k: v.clone() if isinstance(v, Params) else v
                             for k, v in self.get_params().items()})

    def __repr__(self) -> str:
        defaults = {
            n: p.default for n, p in inspect.signature(type(self).__init__).parameters.items()
        }
        shown = [f"{k}={v!r}" for k, v in self.get_params().items() if defaults.get(k) != v]
        return f"{type(self).__name__}({', '.join(shown)})"


def comparable_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with each sub-component replaced by ``(its class, its comparable
    parameters)``: two components built alike compare equal this way."""
    return {k: (type(v), comparable_params(v.get_params())) if isinstance(v, Params) else v
            for k, v in params.items()}


def component_registry(kind: str) -> tuple[dict[str, type], type]:
    """The registry and base class of a component kind: ``dispatcher``, ``predictor``,
    ``allocator``, ``ordering``, ``power-predictor`` or ``duration-model``."""
    if kind == "dispatcher":
        from dispatchlab.dispatch import DISPATCHERS, Dispatcher

        return DISPATCHERS, Dispatcher
    if kind == "predictor":
        from dispatchlab.predict import PREDICTORS, Predictor

        return PREDICTORS, Predictor
    if kind == "allocator":
        from dispatchlab.dispatch.allocators import ALLOCATORS, Allocator

        return ALLOCATORS, Allocator
    if kind == "ordering":
        from dispatchlab.dispatch.orderings import ORDERINGS, Ordering

        return ORDERINGS, Ordering
    if kind == "power-predictor":
        from dispatchlab.predict.power.base import PowerPredictor
        from dispatchlab.predict.power.predictors import POWER_PREDICTORS

        return POWER_PREDICTORS, PowerPredictor
    if kind == "duration-model":
        from dispatchlab.sim.duration import DURATION_MODELS, DurationModel

        return DURATION_MODELS, DurationModel
    raise ValueError(f"unknown component kind {kind!r}")


def component_aliases(kind: str) -> dict[str, str]:
    """Other names (lower case) accepted for registered names of ``kind``: ``fcfs`` for
    the ``fifo`` ordering."""
    if kind == "ordering":
        from dispatchlab.dispatch.orderings import ALIASES

        return ALIASES
    return {}


def make_component(kind: str, spec: str | Params, **params: Any) -> Any:
    """An instance of a ``kind`` component from a registered name, ``module:Class``,
    ``path/file.py:Class``, a spec in the component grammar (``"maui:wait=0:sld=1"``)
    or an instance (cloned), with ``params`` set on it."""
    if isinstance(spec, Params):
        inst = spec.clone()
        return inst.set_params(**params) if params else inst
    registry, base = component_registry(kind)
    plain = {k: v for k, v in params.items() if "__" not in k}
    inst = build(registry, kind, spec, plain, base=base)
    deep = {k: v for k, v in params.items() if "__" in k}
    return inst.set_params(**deep) if deep else inst


def _import_file(path_text: str, kind: str, name: str):
    """Import a module from a ``.py`` file path (``path/file.py:Class`` names). The
    module is registered in ``sys.modules`` under a name derived from its resolved
    path, so one file is imported once per process."""
    import hashlib
    import importlib.util
    import sys
    from pathlib import Path

    from dispatchlab.core.errors import InputError

    path = Path(path_text).expanduser().resolve()
    if not path.is_file():
        from dispatchlab.core.suggest import missing_file_hint

        raise InputError(f"no such Python file {path_text!r} for {kind} {name!r}"
                         + missing_file_hint(path_text), field=kind)
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    mod_name = f"_dispatchlab_user_{path.stem}_{digest}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"cannot import {path_text!r} as Python for {kind} {name!r}",
                         field=kind)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    # the file's own folder is importable, so it may import its sibling modules
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[mod_name]
        raise InputError(f"importing {path_text!r} for {kind} {name!r} failed: "
                         f"{type(exc).__name__}: {exc}", field=kind) from None
    return module


def _import_module(module: str, kind: str, name: str):
    """Import ``module`` by name; the current directory is importable (as for
    ``python -m``), so a module next to where the command runs is found."""
    import os
    import sys

    from dispatchlab.core.errors import InputError

    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise InputError(f"cannot import module {module!r} for {kind} {name!r}: {exc} "
                         "(is it in the current directory or on PYTHONPATH? A file "
                         "path works too: path/file.py:Class)", field=kind) from None
    except Exception as exc:
        raise InputError(f"importing module {module!r} for {kind} {name!r} failed: "
                         f"{type(exc).__name__}: {exc}", field=kind) from None


def is_own_class_name(name: str) -> bool:
    """True for ``module:Class`` and ``path/file.py:Class`` names (not registered)."""
    return ":" in name


def canonical_name(registry: dict[str, type], kind: str, name: str) -> str:
    """The name as stored: a registered name in its registered spelling (a name that
    differs only by case is accepted: ``EASY`` -> ``easy``); ``module:Class`` and file
    names unchanged. An unknown registered name raises :class:`InputError` with
    suggestions."""
    from dispatchlab.core.errors import InputError
    from dispatchlab.core.suggest import case_match, did_you_mean

    if is_own_class_name(name):
        return name
    if name in registry:
        return name
    alias = component_aliases(kind).get(name.lower())
    if alias is not None:
        return alias
    match = case_match(name, registry)
    if match is not None:
        return match
    raise InputError(f"unknown {kind} {name!r}{did_you_mean(name, registry)} (choose "
                     f"from {', '.join(registry)}, or give module:Class or "
                     "path/file.py:Class)", field=kind)


def resolve(registry: dict[str, type], kind: str, name: str,
            base: type | None = None) -> type:
    """The class for ``name``: a registered name (case-insensitive), ``"module:Class"``
    (imported; the current directory is importable) or ``"path/file.py:Class"``, so a
    class of your own works in every command and in campaign worker processes, as long
    as its module is importable there. ``base`` is the class it must derive from."""
    from dispatchlab.core.errors import InputError

    if not is_own_class_name(name):
        return registry[canonical_name(registry, kind, name)]
    module, _, attr = name.rpartition(":")
    if module.endswith(".py") or "/" in module or "\\" in module:
        mod = _import_file(module, kind, name)
    else:
        mod = _import_module(module, kind, name)
    try:
        cls = getattr(mod, attr)
    except AttributeError:
        from dispatchlab.core.suggest import did_you_mean

        classes = [k for k, v in vars(mod).items() if isinstance(v, type)]
        raise InputError(f"module {module!r} has no {attr!r} ({kind} {name!r})"
                         + did_you_mean(attr, classes), field=kind) from None
    if not isinstance(cls, type) or (base is not None and not issubclass(cls, base)):
        expected = base.__name__ if base is not None else "a class"
        raise InputError(f"{name!r} is not a subclass of {expected}", field=kind)
    return cls


def _check_names(cls: type, kind: str, name: str, keys: list[str]) -> None:
    """An :class:`~dispatchlab.core.errors.InputError` with the nearest parameter name
    ("did you mean") for a key ``cls.__init__`` does not take (a class taking
    ``**kwargs`` accepts any)."""
    from dispatchlab.core.errors import InputError
    from dispatchlab.core.suggest import did_you_mean

    try:
        sig = inspect.signature(cls.__init__)  # type: ignore[misc]  # a class's own __init__
    except (TypeError, ValueError):
        return
    names = [k for k, p in sig.parameters.items()
             if k != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        return
    for key in keys:
        if key not in names:
            raise InputError(f"{kind} {name!r} has no parameter {key!r}"
                             f"{did_you_mean(key, names)} (parameters: "
                             f"{', '.join(names) or 'none'})", field=kind)


def build(registry: dict[str, type], kind: str, name: str, params: dict[str, Any],
          base: type | None = None) -> Any:
    """Build ``cls(**params)`` for ``name`` (see :func:`resolve`); an unknown name or bad
    parameters raise :class:`~dispatchlab.core.errors.InputError` naming the choices
    (``kind``: "dispatcher", "predictor", ...).

    ``name`` may be a whole spec in the component grammar of
    :mod:`dispatchlab.core.components` (``"easy:order=sjf"``, ``"easy:allocator=best-fit"``,
    ``"mymod:Cls:alpha=0.5"``), parsed by :func:`dispatchlab.core.components.parse_spec`:
    its values are typed from the class and merged with ``params`` (a key given in both
    is an error). Every ``make_*`` function builds through here, so the Python API
    accepts what the command line accepts."""
    from dispatchlab.core.errors import InputError

    if isinstance(name, str) and ":" in name:  # NAME:KEY=VALUE..., module:Class[:K=V...]
        from dispatchlab.core.components import parse_spec

        name, params = parse_spec(name, kind, option=kind, typed=params)
    cls = resolve(registry, kind, name, base)
    plain = {k: v for k, v in params.items() if "__" not in k}
    deep = {k: v for k, v in params.items() if "__" in k}
    _check_names(cls, kind, name, [*plain, *(k.partition("__")[0] for k in deep)])
    try:
        inst = cls(**plain)
        return inst.set_params(**deep) if deep else inst
    except TypeError as exc:
        raise InputError(f"bad parameters for {kind} {name!r}: {exc}", field=kind) from None
    except ValueError as exc:
        if not deep:
            raise
        raise InputError(f"bad parameters for {kind} {name!r}: {exc}", field=kind) from None
