"""A new duration predictor in one small class: the user's last observed run time.

Run it: ``python examples/custom_predictor.py`` (uses a synthetic workload).
"""

from dispatchlab import Platform, Predictor, Simulation
from dispatchlab.dispatch import EASY
from dispatchlab.run.outputs import run_summary
from dispatchlab.testing import check_predictor
from dispatchlab.workload.synthetic import generate_synthetic


class LastRun(Predictor):
    """Predict the user's last observed run time, capped by the wall-time."""

    name = "last-run"

    def __init__(self, default: str = "walltime"):
        self.default = default  # what to predict before the user's first completion

    def start(self, context):
        super().start(context)  # sets self.jobs_ (the job table) and self.context_
        self.last_ = {}  # learned state ends in "_" and is created here

    def predict(self, job, now):
        wall = int(self.jobs_["requested_time"][job])
        last = self.last_.get(int(self.jobs_["user"][job]), wall)
        return min(last, wall)

    def observe(self, job, now):  # the job completed at `now`
        ran = now - int(self.context_.start_times[job])
        self.last_[int(self.jobs_["user"][job])] = ran


if __name__ == "__main__":
    check_predictor(LastRun)  # parameters, determinism and causality checks
    jobs = generate_synthetic(2000, cores=64, seed=7)
    result = Simulation(Platform.pooled(64), jobs, EASY(), LastRun()).run()
    print(run_summary(result)["mean_bsld"])
