"""SWF status codes: the one mapping used by every reader and by ``simulate --swf-out``.

The Standard Workload Format's field 11 says how a job ended: **1** completed, **0**
failed, **5** cancelled (-1 unknown; SWF's 2, 3 and 4 are for partial records of
checkpointed jobs, which no log read here writes). :data:`STATUS_TABLE` maps what each
source says to that code; the table of docs/reference/cluster-logs.md is this one (a test keeps them
equal).
The rules (ours, following that definition):

* a job that ended by itself, successfully: 1;
* a job that ended by itself with an error, or was stopped by the system for its own
  limits or a fault (a time limit, memory, a node failure): 0 (failed). A job killed
  at its time limit is a failed job whose run time is known;
* a job stopped by a person or by the scheduler for another job (``scancel``,
  ``qdel``, preemption): 5 (cancelled), whether or not it had started;
* a job not finished when the log was written: -1.
"""

from __future__ import annotations

__all__ = [
    "CANCELLED",
    "COMPLETED",
    "FAILED",
    "PBS_DELETED",
    "SLURM_STATE_STATUS",
    "STATUS_TABLE",
    "UNKNOWN",
    "pbs_exit_status",
    "simulated_status",
]

COMPLETED, FAILED, CANCELLED, UNKNOWN = 1, 0, 5, -1

#: Slurm's unfinished job states (status -1).
_SLURM_UNFINISHED = ("PENDING", "RUNNING", "SUSPENDED", "RESIZING", "CONFIGURING",
                     "COMPLETING", "STOPPED", "SIGNALING", "STAGE_OUT", "POWER_UP_NODE",
                     "UPDATE_DB")

#: The one table: (source, what it says, SWF status). Sources: ``Slurm`` (sacct
#: ``State``, also the Eurora archive's status column), ``PBS`` (``Exit_status`` of an
#: ``E`` record and the D/A records), ``simulation`` (``simulate --swf-out``).
STATUS_TABLE: tuple[tuple[str, str, int], ...] = (
    ("Slurm", "COMPLETED", COMPLETED),
    *(("Slurm", s, FAILED) for s in ("FAILED", "OUT_OF_MEMORY", "NODE_FAIL", "BOOT_FAIL",
                                     "TIMEOUT", "LAUNCH_FAILED", "SPECIAL_EXIT",
                                     "RECONFIG_FAIL")),
    *(("Slurm", s, CANCELLED) for s in ("CANCELLED", "PREEMPTED", "DEADLINE", "REQUEUED",
                                        "REQUEUE_FED", "REQUEUE_HOLD", "REVOKED",
                                        "RESV_DEL_HOLD")),
    *(("Slurm", s, UNKNOWN) for s in _SLURM_UNFINISHED),
    ("PBS", "Exit_status 0", COMPLETED),
    ("PBS", "any other Exit_status (-29: killed at its walltime)", FAILED),
    ("PBS", "Exit_status 271 (256 + SIGTERM: deleted while running)", CANCELLED),
    ("PBS", "a D record before the E record (deleted while running)", CANCELLED),
    ("PBS", "deleted before it started", CANCELLED),
    ("PBS", "no Exit_status", UNKNOWN),
    ("simulation", "completed", COMPLETED),
    ("simulation", "killed at its requested time (overrun = kill)", FAILED),
    ("simulation", "rejected (never fits the platform)", CANCELLED),
)

#: SWF status of each Slurm job state (``State`` up to its first blank).
SLURM_STATE_STATUS: dict[str, int] = {what: status for source, what, status in STATUS_TABLE
                                      if source == "Slurm"}
#: PBS ``Exit_status`` of a job deleted while running (256 + SIGTERM, what qdel sends).
PBS_DELETED = 256 + 15


def pbs_exit_status(code: int | None, *, deleted: bool = False) -> int:
    """SWF status of a PBS job from its ``Exit_status`` (None: absent) and whether a D
    record (a deletion by request) came before its ``E`` record."""
    if deleted:
        return CANCELLED
    if code is None:
        return UNKNOWN
    if code == 0:
        return COMPLETED
    return CANCELLED if code == PBS_DELETED else FAILED


def simulated_status(completed: bool, killed: bool) -> int:
    """SWF status of a simulated job: completed, killed at its requested time, or else
    rejected."""
    return COMPLETED if completed else FAILED if killed else CANCELLED
