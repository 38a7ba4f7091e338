"""Registries of components: one :class:`Registry` per component kind, defined by the
package where the components live (``dispatch.DISPATCHERS``, ``predict.PREDICTORS``,
``predict.power.POWER_PREDICTORS``, ``sim.duration.DURATION_MODELS``,
``dispatch.allocators.ALLOCATORS``, ``dispatch.orderings.ORDERINGS``).

A registry maps registered names to classes. An entry may be given as a
``"module:Class"`` string instead of the class: it is imported the first time it is
used (looked up, resolved, built, or listed by ``values()``/``items()``), so a package
can register a class whose module is expensive to import (the CP dispatchers load
OR-Tools) or would import the registry's own module (a component that nests another
one of its kind). Looking at the names (``names()``, iteration, ``in``) imports nothing.

Beyond registered names, :meth:`Registry.resolve` and :meth:`Registry.build` accept
aliases (other spellings, ``fcfs`` for the ``fifo`` ordering), a registered name in
another case (``EASY`` -> ``easy``), a class of your own as ``module:Class`` (the
current directory is importable) or ``path/file.py:Class``, and :meth:`Registry.build`
a whole spec in the component grammar (``"easy:order=sjf"``, parsed by
:func:`dispatchlab.core.components.parse_spec`). Every user mistake raises
:class:`~dispatchlab.core.errors.InputError` on the field named after the registry's
kind, with did-you-mean suggestions.

A registry is also a mutable mapping name -> class, so code written against the plain
dicts these registries replace keeps working (``DISPATCHERS["easy"]``,
``"easy" in DISPATCHERS``, ``DISPATCHERS["mine"] = Mine``).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from dispatchlab.core.components import load_object, parse_spec
from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import case_match, did_you_mean, missing_file_hint

T = TypeVar("T")


def is_own_class_name(name: str) -> bool:
    """True for ``module:Class`` and ``path/file.py:Class`` names (not registered)."""
    return ":" in name


def _import_file(path_text: str, kind: str, name: str) -> ModuleType:
    """Import a module from a ``.py`` file path (``path/file.py:Class`` names). The
    module is registered in ``sys.modules`` under a name derived from its resolved
    path, so one file is imported once per process; the file's folder becomes
    importable, so it may import its sibling modules."""
    path = Path(path_text).expanduser().resolve()
    if not path.is_file():
        raise InputError(f"no such Python file {path_text!r} for {kind} {name!r}"
                         + missing_file_hint(path_text), field=kind)
    import hashlib  # only for own classes from files (start-up of every command)

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


def _import_module(module: str, kind: str, name: str) -> ModuleType:
    """Import ``module`` by name; the current directory is importable (as for
    ``python -m``), so a module next to where the command runs is found."""
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


class Registry(MutableMapping[str, type[T]]):
    """The components of one kind, by registered name.

    ``kind`` names the kind in messages and is the error field ("dispatcher",
    "predictor", "allocator", "ordering", "power-predictor", "duration-model");
    ``base`` is the class every component of the kind derives from (own classes are
    checked against it; None accepts any class); ``entries`` maps each registered name
    to its class or to a lazy ``"module:Class"`` string, in the order names are listed
    (help texts and error messages list them in this order); ``aliases`` maps other
    names (lower case) to registered names; ``validate``, when given, is called on
    every instance :meth:`build` returns (it raises on a bad combination of
    parameters)."""

    def __init__(self, kind: str, base: type[T] | None = None,
                 entries: Mapping[str, type[T] | str] | None = None, *,
                 aliases: Mapping[str, str] | None = None,
                 validate: Callable[[T], None] | None = None) -> None:
        self.kind = kind
        self.base = base
        self._entries: dict[str, type[T] | str] = {}
        #: other names (lower case) -> registered name
        self.aliases: dict[str, str] = dict(aliases or {})
        self.validate = validate
        for name, entry in (entries or {}).items():
            self.register(name, entry)

    # ------------------------------------------------------------ the mapping
    def __getitem__(self, name: str) -> type[T]:
        """The class registered under exactly ``name`` (a lazy entry is imported now);
        KeyError for any other name (see :meth:`resolve` for the forgiving lookup)."""
        entry = self._entries[name]
        if isinstance(entry, str):
            entry = load_object(entry)
            self._entries[name] = entry
        return entry

    def __setitem__(self, name: str, cls: type[T] | str) -> None:
        """Add or replace an entry, as on a dict (:meth:`register` refuses a taken name)."""
        self._entries[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries  # imports nothing

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {', '.join(self._entries)})"

    # ----------------------------------------------------------- registering
    def register(self, name: str, cls: type[T] | str) -> type[T] | str:
        """Register ``cls`` (a class, or a lazy ``"module:Class"`` string) under
        ``name`` and return it. A name holding ``:`` is refused (it would read as an
        own class), and so is a name already registered to another entry; a class that
        does not derive from :attr:`base` raises TypeError."""
        if not name or ":" in name:
            raise ValueError(f"a {self.kind} name must be non-empty without ':', "
                             f"got {name!r}")
        if name in self._entries and self._entries[name] is not cls:
            raise ValueError(f"{self.kind} {name!r} is already registered "
                             f"({self._entries[name]!r})")
        if isinstance(cls, str):
            if not is_own_class_name(cls):
                raise ValueError(f"a lazy {self.kind} entry is 'module:Class', got {cls!r}")
        elif not isinstance(cls, type) or (self.base is not None
                                           and not issubclass(cls, self.base)):
            expected = self.base.__name__ if self.base is not None else "a class"
            raise TypeError(f"{cls!r} is not a subclass of {expected}")
        self._entries[name] = cls
        return cls

    def names(self) -> list[str]:
        """The registered names, in registration order (nothing is imported)."""
        return list(self._entries)

    # -------------------------------------------------------------- resolving
    def canonical(self, name: str) -> str:
        """``name`` as stored: a registered name in its registered spelling (an alias,
        or a name that differs only by case, is accepted: ``EASY`` -> ``easy``);
        ``module:Class`` and file names unchanged. An unknown name raises
        :class:`InputError` with suggestions and the choices."""
        if is_own_class_name(name) or name in self._entries:
            return name
        alias = self.aliases.get(name.lower())
        if alias is not None:
            return alias
        match = case_match(name, self._entries)
        if match is not None:
            return match
        raise InputError(f"unknown {self.kind} {name!r}{did_you_mean(name, self._entries)} "
                         f"(choose from {', '.join(self._entries)}, or give module:Class "
                         "or path/file.py:Class)", field=self.kind)

    def resolve(self, name: str) -> type[T]:
        """The class ``name`` refers to: a registered name (see :meth:`canonical`), or a
        class of your own as ``"module:Class"`` (imported; the current directory is
        importable) or ``"path/file.py:Class"``, which must derive from :attr:`base`. A
        class of your own so works in every command and in campaign worker processes,
        as long as its module is importable there."""
        if not is_own_class_name(name):
            return self[self.canonical(name)]
        kind = self.kind
        module, _, attr = name.rpartition(":")
        if module.endswith(".py") or "/" in module or "\\" in module:
            mod = _import_file(module, kind, name)
        else:
            mod = _import_module(module, kind, name)
        try:
            cls = getattr(mod, attr)
        except AttributeError:
            classes = [k for k, v in vars(mod).items() if isinstance(v, type)]
            raise InputError(f"module {module!r} has no {attr!r} ({kind} {name!r})"
                             + did_you_mean(attr, classes), field=kind) from None
        if not isinstance(cls, type) or (self.base is not None
                                         and not issubclass(cls, self.base)):
            expected = self.base.__name__ if self.base is not None else "a class"
            raise InputError(f"{name!r} is not a subclass of {expected}", field=kind)
        return cls

    # --------------------------------------------------------------- building
    def build(self, spec: str | T, /, **params: Any) -> T:
        """A new component: ``spec`` is a name (see :meth:`resolve`), a whole spec in
        the component grammar (``"easy:order=sjf"``, ``"mymod:Cls:alpha=0.5"``: its
        values are typed from the class and merged with ``params``; a key given in both
        is an error), or an instance of :attr:`base` (cloned). ``params`` are
        ``__init__`` keywords; ``name__param`` keys set a nested component's parameter.
        The instance is checked by :attr:`validate`. An unknown name or parameter, or
        bad parameters, raise :class:`InputError` naming the choices."""
        if isinstance(spec, str):
            inst = self._build_named(spec, dict(params))
        else:
            clone = getattr(spec, "clone", None)
            if not callable(clone) or (self.base is not None
                                       and not isinstance(spec, self.base)):
                expected = self.base.__name__ if self.base is not None else "component"
                raise InputError(f"a {self.kind} is a name or a {expected} instance, "
                                 f"got {spec!r}", field=self.kind)
            inst = clone()
            if params:
                inst = inst.set_params(**params)
        if self.validate is not None:
            self.validate(inst)
        return inst

    def _build_named(self, name: str, params: dict[str, Any]) -> T:
        kind = self.kind
        if ":" in name:  # NAME:KEY=VALUE..., module:Class[:K=V...]
            name, params = parse_spec(name, self, option=kind, typed=params)
        cls = self.resolve(name)
        plain = {k: v for k, v in params.items() if "__" not in k}
        deep = {k: v for k, v in params.items() if "__" in k}
        self._check_names(cls, name, [*plain, *(k.partition("__")[0] for k in deep)])
        try:
            inst = cls(**plain)
            return inst.set_params(**deep) if deep else inst  # type: ignore[attr-defined]
        except TypeError as exc:
            raise InputError(f"bad parameters for {kind} {name!r}: {exc}",
                             field=kind) from None
        except ValueError as exc:
            if not deep:
                raise
            raise InputError(f"bad parameters for {kind} {name!r}: {exc}",
                             field=kind) from None

    def _check_names(self, cls: type, name: str, keys: list[str]) -> None:
        """An :class:`InputError` with the nearest parameter name ("did you mean") for a
        key ``cls.__init__`` does not take (a class taking ``**kwargs`` accepts any)."""
        try:
            sig = inspect.signature(cls.__init__)  # type: ignore[misc]
        except (TypeError, ValueError):
            return
        names = [k for k, p in sig.parameters.items()
                 if k != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
            return
        for key in keys:
            if key not in names:
                raise InputError(f"{self.kind} {name!r} has no parameter {key!r}"
                                 f"{did_you_mean(key, names)} (parameters: "
                                 f"{', '.join(names) or 'none'})", field=self.kind)
