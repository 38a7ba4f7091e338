"""dispatchlab: a trace-driven HPC workload-manager simulator for data-driven dispatching.

Quick start::

    from dispatchlab import Simulation, Platform, load_trace
    from dispatchlab.dispatch import EASY
    from dispatchlab.run.outputs import run_summary
    jobs = load_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    result = Simulation(Platform.pooled(100), jobs, EASY()).run()
    print(run_summary(result)["mean_wait"])

Every component is named as on the command line (``NAME``, ``NAME:KEY=VALUE...``,
``NAME:PARAM=SUB:PARAM__KEY=VALUE`` for a sub-component's parameter, ``module:Class``,
``path/file.py:Class``; see :mod:`dispatchlab.core.components`), by :func:`make_dispatcher`,
:func:`make_predictor`, :func:`make_power_predictor`, :func:`make_duration_model`,
:func:`make_allocator` and :func:`make_ordering`::

    make_dispatcher("easy:order=sjf:allocator=best-fit")
"""

from importlib import import_module
from typing import Any

from dispatchlab.core import deprecation

__version__ = "0.1.0"

deprecation.install()  # old module paths (before the layering) still resolve, with a warning

#: The public names of the package root and the module each lives in, imported on first
#: use (a module ``__getattr__``): ``import dispatchlab.dispatch`` loads no engine, and
#: ``dispatchlab --version`` loads nothing it does not need.
_LAZY: dict[str, str] = {
    "Dispatcher": "dispatchlab.dispatch",
    "make_dispatcher": "dispatchlab.dispatch",
    "make_allocator": "dispatchlab.dispatch.allocators",
    "make_ordering": "dispatchlab.dispatch.orderings",
    "InputError": "dispatchlab.core.errors",
    "Platform": "dispatchlab.platform",
    "Predictor": "dispatchlab.predict",
    "make_predictor": "dispatchlab.predict",
    "make_power_predictor": "dispatchlab.predict.power.predictors",
    "Simulation": "dispatchlab.sim",
    "SimulationResult": "dispatchlab.sim",
    "make_duration_model": "dispatchlab.sim.duration",
    "JobTable": "dispatchlab.workload.jobs",
    "load_trace": "dispatchlab.workload.load",
}


def __getattr__(name: str) -> Any:
    """A public name of the package root, imported from its module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dispatchlab' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "Dispatcher",
    "InputError",
    "JobTable",
    "Platform",
    "Predictor",
    "Simulation",
    "SimulationResult",
    "__version__",
    "load_trace",
    "make_allocator",
    "make_dispatcher",
    "make_duration_model",
    "make_ordering",
    "make_power_predictor",
    "make_predictor",
]
