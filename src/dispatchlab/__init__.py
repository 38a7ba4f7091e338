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

from typing import Any

from dispatchlab.core import deprecation
from dispatchlab.core.errors import InputError
from dispatchlab.dispatch import Dispatcher, make_dispatcher
from dispatchlab.dispatch.allocators import make_allocator
from dispatchlab.dispatch.orderings import make_ordering
from dispatchlab.platform import Platform
from dispatchlab.predict import Predictor, make_predictor
from dispatchlab.sim import Simulation, SimulationResult
from dispatchlab.sim.duration import make_duration_model
from dispatchlab.workload.jobs import JobTable
from dispatchlab.workload.load import load_trace

__version__ = "0.1.0"

deprecation.install()  # old module paths (before the layering) still resolve, with a warning


def __getattr__(name: str) -> Any:
    """``make_power_predictor``, imported on first use (the power predictors' module
    costs start-up time every command would pay)."""
    if name == "make_power_predictor":
        from dispatchlab.predict.power.predictors import make_power_predictor

        return make_power_predictor
    raise AttributeError(f"module 'dispatchlab' has no attribute {name!r}")


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
