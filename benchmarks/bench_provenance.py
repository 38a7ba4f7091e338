"""How long the project code hash takes (campaign expansion and every worker pay it once
per process): :func:`dispatchlab.experiment.provenance.package_code_hash` over the installed
package, best and median of ``--repeat`` (the cached ``project_code_hash`` is not timed).

Usage::

    python benchmarks/bench_provenance.py --repeat 5
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from dispatchlab.experiment import provenance

    root = provenance._installed_root()
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        provenance.package_code_hash(root)
        times.append(time.perf_counter() - t0)
    modules = len(provenance.project_modules())
    print(f"project code hash over {modules} modules: best {min(times):.3f} s, median "
          f"{statistics.median(times):.3f} s ({args.repeat} runs)")


if __name__ == "__main__":
    main()
