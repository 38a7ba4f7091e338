"""Per-queue expected waiting times (EWT) and the EWT of every job.

Some dispatchers rank jobs by the *expected waiting time* of the queue they were
submitted to (PRB-urgency ranks by ``(now - submit + 1) / EWT``, LS by ascending EWT;
as the authors' codes do). A platform carries a table queue name -> EWT in integer
seconds (:attr:`dispatchlab.platform.Platform.queues`), read from a platform TOML file
(``[queues]`` table or ``queues_file``), from a PA-HPC-SIM ``system_queues`` file
(:func:`dispatchlab.platform.eurora.read_system_queues`) or given by the Eurora preset.

:func:`job_ewt` maps every job row to the EWT of its queue, once per run. The table's
validation (:func:`queue_table`, :func:`check_ewt`) is defined with the data class in
:mod:`dispatchlab.platform.platform` and re-exported here.

Queue names: a job's ``queue`` column is an integer code. When the trace names its
queues (``jobs.info.codes["queue"]``, e.g. Eurora, PBS or Slurm logs), code ``k`` is the
queue named ``codes["queue"][k]``; otherwise (SWF) the name is the decimal code itself,
``str(k)`` (so ``[queues]`` ``"1" = 3600`` gives SWF queue 1 an EWT of one hour).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.platform.platform import Platform, check_ewt, queue_table

if TYPE_CHECKING:
    from dispatchlab.workload.jobs import JobTable

__all__ = ["DEFAULT_EWT", "check_ewt", "job_ewt", "queue_name", "queue_table"]

#: EWT (s) of a queue missing from the table: PA-HPC-SIM ``OnlineDispatcher::addJob``
#: and AccaSim (``{'default': 1800}``) both use 1800 s.
DEFAULT_EWT = 1800


def queue_name(code: int, names: list[str] | None) -> str | None:
    """The name of queue ``code`` (see the module docstring): ``names[code]`` for a
    trace that names its queues (``None`` when the code has no name), else
    ``str(code)``; ``None`` for a missing queue (``code < 0``)."""
    if code < 0:
        return None
    if names is None:
        return str(code)
    return str(names[code]) if code < len(names) else None


def job_ewt(jobs: JobTable, platform: Platform, default_ewt: int = DEFAULT_EWT) -> np.ndarray:
    """EWT in seconds of every job row (int64, length ``len(jobs)``, row order).

    A job gets the EWT its queue has in ``platform.queues``; ``default_ewt`` when the
    queue is not in the table, when the job has no queue (``queue = -1``), or when a
    named log has no name for its code. Queue names as in the module docstring. Call it
    once per run (cost: one ``np.unique`` over the ``queue`` column)."""
    default = check_ewt(default_ewt, field="default_ewt")
    q = np.asarray(jobs["queue"], dtype=np.int64)
    out = np.full(len(q), default, dtype=np.int64)
    table = platform.queue_ewt
    if not table or len(q) == 0:
        return out
    names = (jobs.info.codes or {}).get("queue")
    has = q >= 0
    codes, inverse = np.unique(q[has], return_inverse=True)
    values = np.array([table.get(queue_name(int(c), names) or "", default) for c in codes],
                      dtype=np.int64)
    out[has] = values[inverse.reshape(-1)]
    return out
