"""How many jobs of the Eurora archive's job instances have a power prediction in its
``power_predictions`` file, and how many get PA-HPC-SIM's fallback model (40 W x nodes
+ 62 W x GPUs + 115 W x MICs), over every instance (a check of the power data).

    python examples/eurora_power_coverage.py [ARCHIVE]

ARCHIVE defaults to ``Eurora-PA-HPC-SIM-testdata.tar.gz`` in the traces folder
(``$DISPATCHLAB_TRACES``, see :mod:`dispatchlab.core.references`).

Prints one line per instance size and the total (jobs counted per instance: the
instances of one size overlap and share jobs, so a job counts once per instance it is
in).
"""

from __future__ import annotations

import sys
import tarfile
from collections import defaultdict
from pathlib import Path

from dispatchlab.core.references import traces_dir
from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.power.data import EURORA_PREDICTIONS_MEMBER, attach_power
from dispatchlab.workload.load import load_trace

ARCHIVE = (Path(sys.argv[1]) if len(sys.argv) > 1 else
           traces_dir(Path(__file__).resolve().parents[1]) / "Eurora-PA-HPC-SIM-testdata.tar.gz")


def main() -> None:
    if not ARCHIVE.exists():
        raise SystemExit(f"{ARCHIVE} not found: give the PA-HPC-SIM test data archive")
    with tarfile.open(ARCHIVE) as tar:
        members = sorted(m.name for m in tar.getmembers() if m.name.endswith(".log_crypt"))
    platform = eurora_platform()
    per_size: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for name in members:
        jobs = load_trace(f"{ARCHIVE}#{name}")
        _, report = attach_power(jobs, f"{ARCHIVE}#{EURORA_PREDICTIONS_MEMBER}", platform)
        size = Path(name).parent.name
        row = per_size[size]
        row[0] += 1
        row[1] += report.jobs
        row[2] += report.fallback
    print(f"{'size':>6} {'instances':>9} {'jobs':>8} {'predicted':>9} {'fallback':>8} {'share':>6}")
    total = [0, 0, 0]
    for size in sorted(per_size, key=int):
        n, jobs, fb = per_size[size]
        total = [total[0] + n, total[1] + jobs, total[2] + fb]
        print(f"{size:>6} {n:>9} {jobs:>8,} {jobs - fb:>9,} {fb:>8,} {(jobs - fb) / jobs:>6.1%}")
    n, jobs, fb = total
    print(f"{'all':>6} {n:>9} {jobs:>8,} {jobs - fb:>9,} {fb:>8,} {(jobs - fb) / jobs:>6.1%}")


if __name__ == "__main__":
    main()
