"""The scikit-learn-style parameter contract shared by predictors and dispatchers.

Every parameter is an explicit keyword of ``__init__`` stored unchanged on an attribute
of the same name; state learned during a run ends in ``_`` and is created by the
component's ``start``/``reset`` method, never in ``__init__``. That makes components
clone-able (a campaign builds fresh copies from a config) and gives a readable ``repr``.
"""

from __future__ import annotations

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


def build(registry: dict[str, type], kind: str, name: str, params: dict[str, Any]) -> Any:
    """Build ``registry[name](**params)``; an unknown name or bad parameters raise
    :class:`~dispatchlab.errors.InputError` naming the choices (``kind``: "dispatcher",
    "predictor", ...)."""
    from dispatchlab.errors import InputError

    try:
        cls = registry[name]
    except KeyError:
        raise InputError(f"unknown {kind} {name!r} (choose from {', '.join(registry)})",
                         field=kind) from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise InputError(f"bad parameters for {kind} {name!r}: {exc}", field=kind) from None
