"""Per-queue expected waiting times (EWT) and the EWT of every job.

Some dispatchers rank jobs by the *expected waiting time* of the queue they were
submitted to (PRB-urgency ranks by ``(now - submit + 1) / EWT``, LS by ascending EWT;
as the authors' codes do). A platform carries a table queue name -> EWT in integer
seconds (:attr:`dispatchlab.platform.Platform.queues`), read from a platform TOML file
(``[queues]`` table or ``queues_file``), from a PA-HPC-SIM ``system_queues`` file
(:func:`dispatchlab.platform.eurora.read_system_queues`) or given by the Eurora preset.

:func:`job_ewt` maps every job row to the EWT of its queue, once per run.

Queue names: a job's ``queue`` column is an integer code. When the trace names its
queues (``jobs.info.codes["queue"]``, e.g. Eurora, PBS or Slurm logs), code ``k`` is the
queue named ``codes["queue"][k]``; otherwise (SWF) the name is the decimal code itself,
``str(k)`` (so ``[queues]`` ``"1" = 3600`` gives SWF queue 1 an EWT of one hour).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from dispatchlab.core.errors import InputError

if TYPE_CHECKING:
    from dispatchlab.platform.platform import Platform
    from dispatchlab.workload.jobs import JobTable

__all__ = ["DEFAULT_EWT", "check_ewt", "job_ewt", "queue_name", "queue_table"]

#: EWT (s) of a queue missing from the table: PA-HPC-SIM ``OnlineDispatcher::addJob``
#: and AccaSim (``{'default': 1800}``) both use 1800 s.
DEFAULT_EWT = 1800


def check_ewt(value: object, *, source: str | None = None, line: int | None = None,
              field: str | None = None) -> int:
    """``value`` as an EWT: an integer number of seconds > 0 (``bool`` is refused), else
    :class:`InputError` located at ``source``/``line``/``field``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value <= 0:
        raise InputError(f"expected waiting time must be a positive integer number of "
                         f"seconds, got {value!r}", file=source, line=line, field=field)
    return int(value)


def queue_table(queues: Mapping[str, object] | Iterable[tuple[str, object]], *,
                source: str | None = None,
                field: str = "queues") -> tuple[tuple[str, int], ...]:
    """A validated, immutable queue table: ``((name, ewt_seconds), ...)`` in the given
    order. Names are non-empty strings without whitespace, unique; EWTs pass
    :func:`check_ewt`. Errors name ``source`` and ``field.NAME``."""
    items = list(queues.items()) if isinstance(queues, Mapping) else list(queues)
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, tuple) or len(item) != 2:
            raise InputError(f"a queue entry must be a (name, seconds) pair, got {item!r}",
                             file=source, field=field)
        name, ewt = item
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise InputError(f"a queue name must be a non-empty word, got {name!r}",
                             file=source, field=field)
        if name in seen:
            raise InputError(f"queue {name!r} given twice", file=source, field=f"{field}.{name}")
        seen.add(name)
        out.append((name, check_ewt(ewt, source=source, field=f"{field}.{name}")))
    return tuple(out)


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
