"""The scikit-learn-style parameter contract shared by predictors and dispatchers.

Every parameter is an explicit keyword of ``__init__`` stored unchanged on an attribute
of the same name; state learned during a run ends in ``_`` and is created by the
component's ``start``/``reset`` method, never in ``__init__``. That makes components
clone-able (a campaign builds fresh copies from a config) and gives a readable ``repr``.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any, Self


class Params:
    """Mixin: ``get_params``, ``set_params``, ``clone`` and ``repr`` from ``__init__``."""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        names = []
        for name, p in sig.parameters.items():
            if name == "self":
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ must not take *args or **kwargs")
            names.append(name)
        return names

    def get_params(self) -> dict[str, Any]:
        """The ``__init__`` parameters as stored on the instance."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> Self:
        valid = set(self._param_names())
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"{type(self).__name__} has no parameter {key!r}")
            setattr(self, key, value)
        return self

    def clone(self) -> Self:
        """A fresh, unstarted copy with the same parameters."""
        return type(self)(**self.get_params())

    def __repr__(self) -> str:
        defaults = {
            n: p.default for n, p in inspect.signature(type(self).__init__).parameters.items()
        }
        shown = [f"{k}={v!r}" for k, v in self.get_params().items() if defaults.get(k) != v]
        return f"{type(self).__name__}({', '.join(shown)})"


def resolve(registry: dict[str, type], kind: str, name: str,
            base: type | None = None) -> type:
    """The class for ``name``: a registered name, or ``"module:Class"`` (imported, so a
    class of your own works in every command and in campaign worker processes, as long
    as its module is importable there). ``base`` is the class it must derive from."""
    from dispatchlab.errors import InputError

    if ":" not in name:
        try:
            return registry[name]
        except KeyError:
            raise InputError(f"unknown {kind} {name!r} (choose from {', '.join(registry)}, "
                             "or give module:Class)", field=kind) from None
    module, _, attr = name.partition(":")
    try:
        cls = getattr(importlib.import_module(module), attr)
    except ImportError as exc:
        raise InputError(f"cannot import module {module!r} for {kind} {name!r}: {exc} "
                         "(is it on PYTHONPATH?)", field=kind) from None
    except AttributeError:
        raise InputError(f"module {module!r} has no {attr!r} ({kind} {name!r})",
                         field=kind) from None
    if not isinstance(cls, type) or (base is not None and not issubclass(cls, base)):
        expected = base.__name__ if base is not None else "a class"
        raise InputError(f"{name!r} is not a subclass of {expected}", field=kind)
    return cls


def build(registry: dict[str, type], kind: str, name: str, params: dict[str, Any],
          base: type | None = None) -> Any:
    """Build ``cls(**params)`` for ``name`` (see :func:`resolve`); an unknown name or bad
    parameters raise :class:`~dispatchlab.errors.InputError` naming the choices
    (``kind``: "dispatcher", "predictor", ...)."""
    from dispatchlab.errors import InputError

    cls = resolve(registry, kind, name, base)
    try:
        return cls(**params)
    except TypeError as exc:
        raise InputError(f"bad parameters for {kind} {name!r}: {exc}", field=kind) from None
