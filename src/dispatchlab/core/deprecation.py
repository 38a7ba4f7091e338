"""Old import paths of moved modules, names and methods: they keep working, with a warning.

dispatchlab 0.2 put its modules in layers (see docs/explanation/design.md); the modules that
moved keep their old dotted names until :data:`REMOVED_IN`:

* :data:`MOVED_MODULES` maps each old module name to its new one. :func:`install` (run
  by ``import dispatchlab``) puts a finder in front of :data:`sys.meta_path` that
  answers an import of an old name with the new module itself (the same object, so
  ``module:Class`` specs, pickles of Dask tasks and ``isinstance`` checks written
  against the old path all still work) and warns once per old name with
  :class:`MovedWarning`.
* :func:`moved_attributes` gives a package a module ``__getattr__`` for names it no
  longer defines (``dispatchlab.power.PowerPredictor``, now in
  :mod:`dispatchlab.predict.power.base`).
* :func:`moved_callable` resolves a function that moved to a higher layer on first use
  (the old method ``SimulationResult.write`` calls the run layer's writer).

The targets are resolved by name with :func:`importlib.import_module`, on use: a shim
never makes the module that keeps it import a higher layer.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from types import FrameType, ModuleType
from typing import Any

#: The release that removes every old path listed here.
REMOVED_IN = "0.3.0"

#: Old module name -> new module name (the layering of dispatchlab 0.2).
MOVED_MODULES: dict[str, str] = {
    "dispatchlab._memory": "dispatchlab.core.memory",
    "dispatchlab.advice": "dispatchlab.run.advice",
    "dispatchlab.campaign": "dispatchlab.experiment.campaign",
    "dispatchlab.campaign.config": "dispatchlab.experiment.campaign.config",
    "dispatchlab.campaign.groups": "dispatchlab.experiment.campaign.groups",
    "dispatchlab.campaign.power": "dispatchlab.experiment.campaign.power_table",
    "dispatchlab.campaign.powerstats": "dispatchlab.experiment.statistics",
    "dispatchlab.campaign.runner": "dispatchlab.experiment.campaign.runner",
    "dispatchlab.campaign.serve": "dispatchlab.experiment.campaign.serve",
    "dispatchlab.campaign.statistics": "dispatchlab.experiment.statistics",
    "dispatchlab.campaign.store": "dispatchlab.experiment.campaign.store",
    "dispatchlab.campaign.validate": "dispatchlab.experiment.campaign.validate",
    "dispatchlab.campaign.worker": "dispatchlab.experiment.campaign.worker",
    "dispatchlab.checks": "dispatchlab.testing",
    "dispatchlab.compare": "dispatchlab.experiment.compare",
    "dispatchlab.components": "dispatchlab.core.components",
    "dispatchlab.experiment.campaign.powerstats": "dispatchlab.experiment.statistics",
    "dispatchlab.experiment.campaign.statistics": "dispatchlab.experiment.statistics",
    "dispatchlab.dispatch.budget": "dispatchlab.dispatch.powercap.budget",
    "dispatchlab.dispatch.ls": "dispatchlab.dispatch.powercap.ls",
    "dispatchlab.dispatch.power": "dispatchlab.dispatch.powercap.capped",
    "dispatchlab.dispatch.rapl": "dispatchlab.dispatch.powercap.rapl",
    "dispatchlab.errors": "dispatchlab.core.errors",
    "dispatchlab.l2r": "dispatchlab.experiment.l2r",
    "dispatchlab.l2r.features": "dispatchlab.rank.features",
    "dispatchlab.l2r.learn": "dispatchlab.rank.learn",
    "dispatchlab.l2r.model": "dispatchlab.rank.model",
    "dispatchlab.l2r.pipeline": "dispatchlab.experiment.l2r.pipeline",
    "dispatchlab.l2r.split": "dispatchlab.experiment.l2r.split",
    "dispatchlab.params": "dispatchlab.core.params",
    "dispatchlab.plots": "dispatchlab.report.plots",
    "dispatchlab.power.evaluate": "dispatchlab.experiment.power_accuracy",
    "dispatchlab.power.predict": "dispatchlab.predict.power.base",
    "dispatchlab.power.predictors": "dispatchlab.predict.power.predictors",
    "dispatchlab.predict.base": "dispatchlab.predict.duration.base",
    "dispatchlab.predict.evaluate": "dispatchlab.experiment.duration_accuracy",
    "dispatchlab.predict.history": "dispatchlab.predict.duration.history",
    "dispatchlab.predict.ml": "dispatchlab.predict.duration.ml",
    "dispatchlab.predict.safety": "dispatchlab.predict.duration.safety",
    "dispatchlab.predict.tsafrir": "dispatchlab.predict.duration.tsafrir",
    "dispatchlab.provenance": "dispatchlab.experiment.provenance",
    "dispatchlab.references": "dispatchlab.core.references",
    "dispatchlab.sim.limits": "dispatchlab.core.limits",
    "dispatchlab.stats": "dispatchlab.experiment.statistics",
    "dispatchlab.study": "dispatchlab.experiment.study",
    "dispatchlab.suggest": "dispatchlab.core.suggest",
    "dispatchlab.workload.eurora_synth": "dispatchlab.power.eurora_synth",
    "dispatchlab.workload.hotstart": "dispatchlab.sim.hotstart",
}


class MovedWarning(DeprecationWarning):
    """An old import path or method of dispatchlab was used (it goes in :data:`REMOVED_IN`)."""


def _warn(old: str, new: str) -> None:
    # point at the first frame outside the import machinery and this module
    depth = 1
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and (
        frame.f_code.co_filename.startswith("<frozen")
        or "importlib" in frame.f_code.co_filename
        or frame.f_code.co_filename == __file__
    ):
        depth, frame = depth + 1, frame.f_back
    warnings.warn(
        f"{old} moved to {new}; the old name is removed in dispatchlab {REMOVED_IN}",
        MovedWarning, stacklevel=depth + 1,
    )


class _AliasLoader:
    """Loads an old module name as the new module object (no second copy)."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        _warn(module.__name__, self.new)
        # the import system returns whatever sys.modules holds under the old name
        sys.modules[module.__name__] = importlib.import_module(self.new)


class _AliasFinder:
    """Finds the old names of :data:`MOVED_MODULES` (and nothing else)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None
                  ) -> ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        # a PEP 451 loader needs only create_module and exec_module (importlib.abc is not
        # imported: start-up of every command)
        return ModuleSpec(fullname, _AliasLoader(new))  # type: ignore[arg-type]


def install() -> None:
    """Put the finder of old module names first on :data:`sys.meta_path` (idempotent)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())


def _resolve(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def moved_attributes(module: str, moved: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for names that moved: ``{name: "new.module:name"}``.

    Each access warns with :class:`MovedWarning`; other names raise the usual
    ``AttributeError``."""

    def __getattr__(name: str) -> Any:
        target = moved.get(name)
        if target is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        _warn(f"{module}.{name}", target.replace(":", "."))
        return _resolve(target)

    return __getattr__


def moved_callable(old: str, target: str) -> Callable[..., Any]:
    """A function standing for ``target`` (``"module:function"``) under the old name
    ``old``: each call warns with :class:`MovedWarning` and calls the target with the
    same arguments (a moved method's shim: ``write = moved_callable(...)`` in the class
    body makes ``result.write(folder)`` call ``target(result, folder)``)."""

    def shim(*args: Any, **kwargs: Any) -> Any:
        _warn(old, target.replace(":", "."))
        return _resolve(target)(*args, **kwargs)

    shim.__name__ = old.rpartition(".")[2]
    shim.__doc__ = f"Deprecated: use :func:`{target.replace(':', '.')}` (removed in {REMOVED_IN})."
    return shim
