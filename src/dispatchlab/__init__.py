"""dispatchlab: a trace-driven HPC workload-manager simulator for data-driven dispatching.

Quick start::

    from dispatchlab import Simulation, Platform, load_trace
    from dispatchlab.dispatch import EASY
    jobs = load_trace("KTH-SP2-1996-2.1-cln.swf.gz")
    result = Simulation(Platform.pooled(100), jobs, EASY()).run()
    print(result.summary()["mean_wait"])
"""

from dispatchlab.dispatch import Dispatcher, make_dispatcher
from dispatchlab.errors import InputError
from dispatchlab.platform import Platform
from dispatchlab.predict import Predictor, make_predictor
from dispatchlab.sim import Simulation, SimulationResult
from dispatchlab.workload.jobs import JobTable

__version__ = "0.1.0"

__all__ = [
    "Dispatcher",
    "InputError",
    "JobTable",
    "Platform",
    "Predictor",
    "Simulation",
    "SimulationResult",
    "__version__",
    "make_dispatcher",
    "make_predictor",
]
