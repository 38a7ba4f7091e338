"""The scikit-learn-style parameter contract shared by predictors and dispatchers.

Every parameter is an explicit keyword of ``__init__`` stored unchanged on an attribute
of the same name; state learned during a run ends in ``_`` and is created by the
component's ``start``/``reset`` method, never in ``__init__``. That makes components
clone-able (a campaign builds fresh copies from a config) and gives a readable ``repr``.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from dispatchlab.core.components import registry_of
from dispatchlab.core.deprecation import REMOVED_IN, MovedWarning, moved_attributes
from dispatchlab.core.registry import Registry
from dispatchlab.core.suggest import did_you_mean

#: The type of :attr:`Params.nested`: parameter name -> the registry of the component
#: kind it holds (or, in classes written before registries, the kind's name).
Nested = Mapping[str, "Registry[Any] | str"]


class Params:
    """Mixin: ``get_params``, ``set_params``, ``clone`` and ``repr`` from ``__init__``.

    **Nested components.** A parameter listed in the class attribute ``nested``
    (parameter name -> the registry of its component kind, e.g. ``{"allocator":
    ALLOCATORS}``; a kind name such as ``"allocator"`` works too) holds a
    sub-component: a registered name (``"best-fit"``) or an instance. Its own parameters
    are reached with ``name__param`` keys, as in scikit-learn: ``set_params(
    allocator__x=1)`` replaces a name by an instance of that component with ``x=1``;
    ``get_params(deep=True)`` lists the sub-component's parameters under ``name__...``;
    ``clone`` clones sub-components too.
    """

    #: parameter name -> registry of the parameters that hold a sub-component
    nested: ClassVar[Nested] = {}

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
        registry = self.nested.get(name)
        if registry is None or not isinstance(value, str):
            raise ValueError(f"parameter {name!r} of {type(self).__name__} is not a "
                             "component (it has no parameters of its own)")
        return registry_of(registry).build(value)

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


def make_component(kind: str | Registry[Any], spec: str | Params, **params: Any) -> Any:
    """An instance of a component of ``kind`` (its registry, or a kind name of
    :data:`~dispatchlab.core.components.KINDS`) from a registered name,
    ``module:Class``, ``path/file.py:Class``, a spec in the component grammar
    (``"maui:wait=0:sld=1"``) or an instance (cloned), with ``params`` set on it:
    :meth:`Registry.build <dispatchlab.core.registry.Registry.build>`."""
    return registry_of(kind).build(spec, **params)


# ------------------------------------------------ before registries (removed in 0.3.0)
#: ``is_own_class_name`` moved unchanged
__getattr__ = moved_attributes(__name__, {
    "is_own_class_name": "dispatchlab.core.registry:is_own_class_name"})


def _warn(old: str, new: str) -> None:
    """The :class:`MovedWarning` of a function below, pointing at its caller."""
    warnings.warn(f"{__name__}.{old} moved to {new}; the old name is removed in "
                  f"dispatchlab {REMOVED_IN}", MovedWarning, stacklevel=3)


def _registry(registry: Mapping[str, type] | Registry[Any], kind: str,
              base: type | None = None) -> Registry[Any]:
    return registry if isinstance(registry, Registry) else Registry(kind, base, registry)


def component_registry(kind: str) -> tuple[Registry[Any], type | None]:
    """Deprecated: the registry of ``kind`` is
    :func:`dispatchlab.core.components.registry_of` (its base class ``.base``)."""
    _warn("component_registry", "dispatchlab.core.components.registry_of")
    registry = registry_of(kind)
    return registry, registry.base


def component_aliases(kind: str) -> dict[str, str]:
    """Deprecated: use ``registry_of(kind).aliases``."""
    _warn("component_aliases", "dispatchlab.core.registry.Registry.aliases")
    return registry_of(kind).aliases


def canonical_name(registry: Mapping[str, type], kind: str, name: str) -> str:
    """Deprecated: use :meth:`dispatchlab.core.registry.Registry.canonical`."""
    _warn("canonical_name", "dispatchlab.core.registry.Registry.canonical")
    return _registry(registry, kind).canonical(name)


def resolve(registry: Mapping[str, type], kind: str, name: str,
            base: type | None = None) -> type:
    """Deprecated: use :meth:`dispatchlab.core.registry.Registry.resolve`."""
    _warn("resolve", "dispatchlab.core.registry.Registry.resolve")
    return _registry(registry, kind, base).resolve(name)


def build(registry: Mapping[str, type], kind: str, name: str, params: dict[str, Any],
          base: type | None = None) -> Any:
    """Deprecated: use :meth:`dispatchlab.core.registry.Registry.build`."""
    _warn("build", "dispatchlab.core.registry.Registry.build")
    return _registry(registry, kind, base).build(name, **params)
