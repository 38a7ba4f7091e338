"""A new dispatcher in one small class: widest job first, no reservations.

Run it: ``python examples/custom_dispatcher.py`` (uses a synthetic workload).
"""

import numpy as np

from dispatchlab import Dispatcher, Platform, Simulation
from dispatchlab.dispatch import Start
from dispatchlab.run.outputs import run_summary
from dispatchlab.testing import check_dispatcher
from dispatchlab.workload.synthetic import generate_synthetic


class WidestFirst(Dispatcher):
    """Start the widest waiting jobs that fit the free cores; ties by queue order."""

    name = "widest-first"
    call_on_empty_queue = False  # nothing to do when no job waits
    supports_node_level = False  # counts free cores: pooled platforms only

    def __init__(self, max_starts: int = 1_000):
        self.max_starts = max_starts  # parameters are stored as given

    def dispatch(self, view):
        jobs, units = view.queue.jobs, view.queue.units  # numpy, queue order
        free = view.free_cores  # counting platform: a job fits if units <= free
        starts = []
        for pos in np.argsort(-units, kind="stable"):
            if units[pos] <= free and len(starts) < self.max_starts:
                free -= int(units[pos])
                starts.append(Start(int(jobs[pos])))
        return starts


if __name__ == "__main__":
    check_dispatcher(WidestFirst)  # the contract checks, on seeded random workloads
    jobs = generate_synthetic(2000, cores=64, seed=7)
    result = Simulation(Platform.pooled(64), jobs, WidestFirst()).run()
    print(run_summary(result)["mean_wait"])
