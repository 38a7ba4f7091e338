"""The code blocks of the documentation that the tests do not run, each with the reason.

Every other shell command and Python block of every page is run by
``test_docs_examples.py`` (the getting-started and tutorial pages at small scale, with
the traces of ``$DISPATCHLAB_TRACES``). A block is named by its page and the start of its
first line; an entry that names no block is an error, so the list cannot go stale.
"""

from __future__ import annotations

#: (page, start of the block's first line) -> why it is not run
EXEMPT: dict[tuple[str, str], str] = {
    ("getting-started.md", "make demo"):
        "creates .venv and runs the whole test suite; `dispatchlab demo` (the next block) "
        "is what `make demo` runs",
    ("contributing.md", "make demo"):
        "the same two commands as on the getting-started page",
    ("tutorials/cluster.md", "SLURM_TIME_FORMAT=%s sacct"):
        "needs a Slurm cluster; the tutorial generates an export in the same format instead",
    ("reference/usage.md", "# EASY backfilling on a Parallel Workloads Archive trace"):
        "an overview with TRACE placeholders; each command runs in a tutorial",
    ("reference/campaigns.md", "dispatchlab campaign run examples/campaigns/quick.toml"):
        "an overview: a Dask scheduler address and CAMPAIGN.toml placeholders; "
        "tutorials/campaign.md runs a campaign, its status, summary, query and report",
    ("reference/campaigns.md", "from dispatchlab.experiment.campaign import run_campaign"):
        "names a placeholder campaign.toml; run_campaign is what `campaign run` calls "
        "(tutorials/campaign.md)",
    ("reference/reports.md", "import duckdb"):
        "needs a results database; run on one by "
        "tests/experiment/campaign/test_campaign.py, and as tutorials/campaign.md's last block",
    ("reference/cluster-logs.md", "# Slurm: one export of the jobs of a period"):
        "needs a Slurm or PBS server; tutorials/cluster.md runs the same commands on a "
        "generated export",
    ("reference/power.md", "# synthetic job power for a PWA trace"):
        "TRACE placeholders; tutorials/power-caps.md runs the same commands",
    ("explanation/performance.md", "python benchmarks/bench_sim.py"):
        "a benchmark: minutes of whole-trace runs, best of 3",
    ("explanation/performance.md", "python benchmarks/bench_native.py"):
        "a benchmark that builds a Rust program with cargo",
    ("explanation/performance.md", "python benchmarks/bench_targets.py"):
        "a benchmark: about ten minutes, and AccaSim in a throwaway venv",
    ("explanation/performance.md", "python benchmarks/bench_campaign.py"):
        "a benchmark: 108 runs twice",
    ("explanation/references.md", "export DISPATCHLAB_TRACES=/data/traces"):
        "an example folder that does not exist here",
    ("reproductions/galleguillos2017.md", "dispatchlab study predictions"):
        "a reproduction: hcp on 5,000 jobs per trace takes minutes",
    ("reproductions/cp-dispatching.md", "dispatchlab campaign run"):
        "a reproduction: the campaign takes about 8 minutes on 2 cores",
    ("reproductions/darrous-l2r.md", "dispatchlab l2r train"):
        "a reproduction: 256 label lists simulated per trace",
    ("reproductions/carastan-santos2024.md", "dispatchlab campaign run"):
        "a reproduction: 1,560 runs, about 4 minutes on 2 cores",
}


def reason(page: str, first_line: str) -> str | None:
    """Why the block of ``page`` whose first line is ``first_line`` is not run (None: it
    is run)."""
    for (p, start), why in EXEMPT.items():
        if p == page and first_line.startswith(start):
            return why
    return None
