"""The discrete-event engine (read :mod:`dispatchlab.sim.engine` top to bottom)."""

from dispatchlab.sim.engine import Simulation
from dispatchlab.sim.result import SimulationResult

__all__ = ["Simulation", "SimulationResult"]
