"""A local-pool worker process:
``python -m dispatchlab.experiment.campaign.serve TASK_FD RESULT_FD``.

Started by :class:`dispatchlab.experiment.campaign.runner.LocalPool` as a fresh interpreter (not a
fork and not multiprocessing's spawn, which would re-import the caller's ``__main__``).
It reads pickled run specs from ``TASK_FD`` and writes each outcome of
:func:`~dispatchlab.experiment.campaign.worker.execute_run` to ``RESULT_FD``, one run at a time,
until it reads ``None`` or the coordinator is gone (end of file). Ctrl-C is ignored:
interrupting a campaign is the coordinator's job.
"""

from __future__ import annotations

import signal
import sys
from multiprocessing.connection import Connection

from dispatchlab.experiment.campaign.worker import execute_run


def serve(task_fd: int, result_fd: int) -> None:
    tasks = Connection(task_fd, writable=False)
    results = Connection(result_fd, readable=False)

    while True:
        try:
            spec = tasks.recv()
        except (EOFError, OSError):  # the coordinator is gone
            return
        if spec is None:
            return
        try:
            results.send(execute_run(spec))
        except (BrokenPipeError, EOFError, OSError):
            return


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(int(sys.argv[1]), int(sys.argv[2]))
