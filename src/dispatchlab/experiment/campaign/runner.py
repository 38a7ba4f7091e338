"""Run a campaign: skip finished runs, execute the rest on workers, store the results.

Backends (each yields one outcome per run, in completion order):

- :class:`LocalPool` (default): ``N`` worker processes on this machine, one run at a
  time each. The coordinator knows which run every worker holds, so when a worker
  process dies (killed, out of memory) exactly that run is re-executed on a fresh
  worker, up to ``max_attempts`` executions, after which it is stored as failed.
- :class:`DaskBackend`: an existing Dask distributed cluster (``--dask
  tcp://host:8786``) or a ``LocalCluster`` of ``N`` single-threaded worker processes
  (``--dask local``). Dask's scheduler re-executes the runs of a worker that dies
  (``distributed.scheduler.allowed-failures`` times, then the run fails with
  ``KilledWorker``); the number of executions is read from the scheduler.

Only the coordinator (this process) writes the database, from a writer thread so that
handing out runs never waits for storage; it opens the file for each batch of finished
runs (one transaction: the runs arrived within :data:`FLUSH_SECONDS`, at most
:data:`FLUSH_RUNS` runs or :data:`FLUSH_BYTES` of rows) and closes it in between, so
``campaign status`` and ``results query`` can read while a campaign runs.
A coordinator killed at any moment loses at most the runs finished since the last
flush; they are simply executed again by the next invocation, never stored twice.

Which runs execute: those whose key is not stored (new runs, and runs whose code or
input files changed: their keys changed, and storing them replaces the outdated rows
of the same slot, see :mod:`dispatchlab.experiment.campaign.store`); failed runs with
``retry_failed``; every run with ``rerun``, or the stored runs matching the SQL
condition ``rerun_where``; a re-executed run replaces its stored rows.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from dispatchlab.core.components import load_object
from dispatchlab.core.errors import InputError
from dispatchlab.experiment.campaign import store
from dispatchlab.experiment.campaign.config import Campaign, load_campaign

#: Flush finished runs to the database at least every this many runs...
FLUSH_RUNS = 64
#: ...or every this many seconds...
FLUSH_SECONDS = 2.0
#: ...or when the runs waiting to be stored hold this many bytes of job and series rows.
FLUSH_BYTES = 128 << 20
#: Executions of one run before a run whose worker keeps dying is stored as failed.
MAX_ATTEMPTS = 3
#: How long a flush waits for a reader holding the database (s).
LOCK_WAIT = 60.0
#: What executes one run, by name (as the local pool names its processes' module,
#: ``dispatchlab.experiment.campaign.serve``): a Dask worker calls it with a run spec.
#: It is resolved when runs execute, so loading the campaign package (status, results,
#: the report) does not load the simulator.
RUN_TASK = "dispatchlab.experiment.campaign.worker:execute_run"


def _failed(spec: dict[str, Any], error: str, attempts: int) -> dict[str, Any]:
    import datetime as dt

    return {"spec": spec, "status": "failed", "error": error, "attempts": attempts,
            "finished_at": dt.datetime.now(dt.UTC).replace(tzinfo=None)}


class LocalPool:
    """``workers`` processes on this machine, each a fresh interpreter running
    :mod:`dispatchlab.experiment.campaign.serve` (no fork: safe with the coordinator's threads,
    and the caller's ``__main__`` is never re-imported)."""

    def __init__(self, workers: int, *, max_attempts: int = MAX_ATTEMPTS) -> None:
        if workers < 1:
            raise InputError(f"must be >= 1, got {workers}", field="--workers")
        self.workers = workers
        self.max_attempts = max_attempts
        self.describe = f"local pool of {workers} worker process{'es' * (workers > 1)}"
        self._procs: dict[int, subprocess.Popen] = {}

    def pids(self) -> list[int]:
        """Process ids of the live worker processes (for monitoring)."""
        return [pid for pid, proc in list(self._procs.items()) if proc.poll() is None]

    def _start(self) -> tuple[Connection, Connection, subprocess.Popen]:
        task_r, task_w = os.pipe()
        result_r, result_w = os.pipe()
        proc = subprocess.Popen(
            [sys.executable, "-m", "dispatchlab.experiment.campaign.serve", str(task_r),
             str(result_w)],
            pass_fds=(task_r, result_w), stdin=subprocess.DEVNULL)
        os.close(task_r)
        os.close(result_w)
        self._procs[proc.pid] = proc
        return (Connection(task_w, readable=False), Connection(result_r, writable=False),
                proc)

    def execute(self, specs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        pending = deque(specs)
        attempts: dict[str, int] = {}
        # result connection -> (task connection, process, the spec it holds)
        busy: dict[Connection, tuple[Connection, subprocess.Popen, dict[str, Any]]] = {}

        def stop(results: Connection) -> None:
            tasks, proc, _ = busy.pop(results)
            with contextlib.suppress(OSError):
                tasks.send(None)
            tasks.close()
            results.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

        def assign(results: Connection, tasks: Connection, proc: subprocess.Popen) -> None:
            spec = pending.popleft()
            key = spec["run_key"]
            attempts[key] = attempts.get(key, 0) + 1
            busy[results] = (tasks, proc, spec)
            with contextlib.suppress(OSError):  # a dead worker is found at the next wait
                tasks.send(spec)

        try:
            for _ in range(min(self.workers, len(pending))):
                tasks, results, proc = self._start()
                assign(results, tasks, proc)
            while busy:
                for results in wait(list(busy)):
                    tasks, proc, spec = busy[results]
                    try:
                        outcome = results.recv()
                    except (EOFError, OSError):
                        outcome = None
                    if outcome is not None:
                        outcome["attempts"] = attempts[spec["run_key"]]
                        yield outcome
                        if pending:
                            assign(results, tasks, proc)
                        else:
                            stop(results)
                        continue
                    # end of file: the worker died while holding `spec`
                    busy.pop(results)
                    tasks.close()
                    results.close()
                    code = proc.wait()
                    n = attempts[spec["run_key"]]
                    if n >= self.max_attempts:
                        yield _failed(spec, f"the worker process died in each of {n} "
                                      f"attempts (last exit status {code})", n)
                    else:
                        pending.appendleft(spec)
                    if pending:
                        tasks, results, proc = self._start()
                        assign(results, tasks, proc)
        finally:
            for results in list(busy):
                tasks, proc, _ = busy.pop(results)
                proc.kill()
                proc.wait()
                tasks.close()
                results.close()


def _suspicious(dask_scheduler, keys: list[str]) -> dict[str, int]:
    tasks = dask_scheduler.tasks
    return {k: tasks[k].suspicious for k in keys if k in tasks}


class DaskBackend:
    """Runs on a Dask distributed cluster: ``address`` ``tcp://host:port`` or ``local``."""

    def __init__(self, address: str, workers: int, *, timeout: float = 10.0) -> None:
        self.address = address
        self.workers = workers
        self.timeout = timeout
        self.describe = (f"Dask LocalCluster of {workers} worker processes"
                         if address == "local" else f"Dask cluster at {address}")

    def _client(self):
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - a declared dependency
            raise InputError("Dask distributed is not installed (pip install "
                             "'dask[distributed]')", field="--dask") from None
        if self.address == "local":
            # the worker processes started now inherit "ignore Ctrl-C" (as the local
            # pool's do): interrupting is the coordinator's job, and a terminal's Ctrl-C
            # reaches the whole process group (their tracebacks otherwise)
            main = threading.current_thread() is threading.main_thread()
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
            try:
                cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1,
                                       processes=True, dashboard_address=":0")
            finally:
                if previous is not None:
                    signal.signal(signal.SIGINT, previous)
            return Client(cluster), cluster
        try:
            return Client(self.address, timeout=f"{self.timeout}s"), None
        except (OSError, TimeoutError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {self.address} within "
                             f"{self.timeout:g} s: {str(exc).splitlines()[0]}",
                             field="--dask") from None
        except ValueError as exc:
            raise InputError(f"bad Dask scheduler address {self.address!r}: {exc}",
                             field="--dask") from None

    def execute(self, specs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        from distributed import as_completed

        execute_run = load_object(RUN_TASK)
        client, cluster = self._client()
        token = uuid.uuid4().hex[:8]
        futures: dict = {}
        try:
            futures = {client.submit(execute_run, spec, pure=False,
                                     key=f"dispatchlab-{spec['run_key']}-{token}"): spec
                       for spec in specs}
            for future in as_completed(futures):
                spec = futures[future]
                executions = 1 + client.run_on_scheduler(
                    _suspicious, keys=[future.key]).get(future.key, 0)
                try:
                    outcome = future.result()
                except Exception as exc:  # KilledWorker and friends: recorded, go on
                    name = type(exc).__name__
                    text = ("the Dask workers running it died too often (KilledWorker)"
                            if name == "KilledWorker" else f"{name}: {exc}")
                    outcome = _failed(spec, text, executions)
                outcome["attempts"] = executions
                future.release()
                yield outcome
        except BaseException:  # Ctrl-C, or the caller stopping: cancel, shut down quietly
            with _quiet_dask():
                with contextlib.suppress(Exception):
                    client.cancel(list(futures))
                client.close()
                if cluster is not None:
                    cluster.close()
            raise
        client.close()
        if cluster is not None:
            cluster.close()


@contextlib.contextmanager
def _quiet_dask() -> Iterator[None]:
    """This process's Dask and Tornado loggers silent for a while: an interrupted
    shutdown logs cancelled tasks and closed connections, which are expected then."""
    import logging

    loggers = [logging.getLogger(name) for name in ("distributed", "tornado")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@dataclass
class CampaignReport:
    """What one ``campaign run`` did."""

    campaign: str
    database: Path
    backend: str
    total: int
    skipped_done: int = 0
    skipped_failed: int = 0
    executed: int = 0
    failed: int = 0
    reexecuted: int = 0
    stored: int = 0  # executed runs stored (fewer if another coordinator stored some first)
    rerun: int = 0  # stored runs executed again on request (rerun / rerun_where)
    superseded: int = 0  # stored runs of older code or inputs replaced by new results
    wall_seconds: float = 0.0
    executed_keys: list[str] = field(default_factory=list)


class CampaignInterrupted(KeyboardInterrupt):
    """Ctrl-C (``KeyboardInterrupt``) during :func:`run_campaign`, raised once the
    runs finished before it are stored and the workers are stopped; ``report`` counts
    what this call executed and stored (the runs still executing are lost and run
    again by the next call)."""

    def __init__(self, report: CampaignReport) -> None:
        super().__init__(f"interrupted after storing {report.stored:,} runs")
        self.report = report


def _open_for_flush(path: Path):
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            return store.open_write(path)
        except InputError as exc:
            if "in use" not in exc.message or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _nbytes(outcome: dict[str, Any]) -> int:
    return sum(t.nbytes for t in (outcome.get("jobs"), outcome.get("series"))
               if t is not None)


class _Writer(threading.Thread):
    """The coordinator's database writer: stores finished runs in batches (one
    transaction each: the runs arriving within :data:`FLUSH_SECONDS`, at most
    :data:`FLUSH_RUNS` runs or :data:`FLUSH_BYTES` of rows), so handing out work never
    waits for the database."""

    _STOP = object()

    def __init__(self, db: Path, replace: set[str]) -> None:
        super().__init__(name="dispatchlab-db-writer", daemon=True)
        self.db = db
        self.replace = replace
        self.queue: queue.Queue = queue.Queue()
        self.error: BaseException | None = None
        self.stored = 0
        self.superseded = 0

    def put(self, outcome: dict[str, Any]) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(outcome)

    def run(self) -> None:
        stop = False
        while not stop:
            item = self.queue.get()
            if item is self._STOP:
                return
            batch = [item]
            size = _nbytes(item)
            deadline = time.monotonic() + FLUSH_SECONDS
            while len(batch) < FLUSH_RUNS and size < FLUSH_BYTES:
                try:
                    item = self.queue.get(timeout=max(deadline - time.monotonic(), 0))
                except queue.Empty:
                    break
                if item is self._STOP:
                    stop = True
                    break
                batch.append(item)
                size += _nbytes(item)
            try:
                con = _open_for_flush(self.db)
                try:
                    counts = store.store_outcomes(con, batch, replace=self.replace)
                    self.stored += counts.stored
                    self.superseded += counts.superseded
                finally:
                    con.close()
            except BaseException as exc:  # reported to the coordinator's thread
                self.error = exc
                return

    def close(self) -> None:
        """Store everything queued, stop, and raise a storing error if one happened."""
        self.queue.put(self._STOP)
        self.join()
        if self.error is not None:
            raise self.error


def _plan(camp: Campaign, states: dict[str, str], retry_failed: bool,
          rerun: set[str] | None, report: CampaignReport) -> tuple[list, set[str]]:
    """The specs to execute and the stored keys their results replace; counts the
    skipped runs in ``report``. ``rerun``: stored keys to execute again (None: none)."""
    todo, replace = [], set()
    for spec in camp.runs:
        key = spec["run_key"]
        state = states.get(key)
        if state is not None and rerun is not None and key in rerun:
            report.rerun += 1
            replace.add(key)
            todo.append(spec)
        elif state == "done":
            report.skipped_done += 1
        elif state == "failed" and not retry_failed:
            report.skipped_failed += 1
        else:
            if state == "failed":
                replace.add(key)
            todo.append(spec)
    return todo, replace


def _stored_states(db: Path, camp: Campaign, rerun: bool,
                   rerun_where: str | None) -> tuple[dict[str, str], set[str] | None]:
    """The stored status of the campaign's runs and the keys to execute again."""
    store.verify(db)  # a damaged file is told before any run executes
    con = _open_for_flush(db)  # checks the version first; waits while another process writes
    try:
        states = store.run_states(con, camp.keys)
        if rerun:
            return states, set(states)
        if rerun_where is not None:
            try:
                return states, store.matching_keys(con, rerun_where, campaign=camp.name,
                                                   field="--rerun-where")
            except InputError as exc:
                raise InputError(exc.message, file=str(db), field=exc.field) from None
        return states, None
    finally:
        con.close()


def run_campaign(
    campaign: str | Path | Campaign,
    *,
    workers: int | None = None,
    dask: str | None = None,
    retry_failed: bool = False,
    rerun: bool = False,
    rerun_where: str | None = None,
    database: str | Path | None = None,
    on_progress: Callable[[int, int, int], None] | None = None,
    max_attempts: int = MAX_ATTEMPTS,
    backend: LocalPool | DaskBackend | None = None,
    dask_timeout: float = 10.0,
) -> CampaignReport:
    """Run the unfinished runs of a campaign and store them; see the module docstring.

    ``workers`` defaults to the number of cores. ``dask`` is a scheduler address or
    ``"local"``; ``dask_timeout`` bounds the connection to a scheduler (s). Failed
    runs are re-executed only with ``retry_failed``. ``rerun`` executes every run of
    the campaign again, ``rerun_where`` the stored runs of this campaign whose row
    matches an SQL condition on the ``runs`` table (``"dispatcher = 'easy'"``); their
    new results replace the stored rows (runs, jobs, series) in the same transaction.
    ``on_progress(done, failed, total)`` is called after each finished run.
    ``backend`` overrides ``workers``/``dask``: any object with a ``describe`` string
    and an ``execute(specs)`` method yielding one outcome per spec.
    Ctrl-C (``KeyboardInterrupt``) while runs execute stops the workers, stores the
    runs finished so far and raises :class:`CampaignInterrupted`; calling again
    resumes (stored runs are skipped).
    Everything is validated before the database is touched; a bad campaign, a bad
    ``rerun_where`` condition or a database of a newer version raises
    :class:`InputError` and writes nothing but an older file's migration.
    """
    t0 = time.perf_counter()
    camp = campaign if isinstance(campaign, Campaign) else load_campaign(
        campaign, database=database)
    db = Path(database) if database is not None else camp.database
    n = (os.cpu_count() or 1) if workers is None else workers
    if n < 1:
        raise InputError(f"must be >= 1, got {n}", field="--workers")
    if backend is None:
        backend = (DaskBackend(dask, n, timeout=dask_timeout) if dask is not None
                   else LocalPool(n, max_attempts=max_attempts))
    states, again = _stored_states(db, camp, rerun, rerun_where)
    report = CampaignReport(camp.name, db, backend.describe, len(camp.runs))
    todo, replace = _plan(camp, states, retry_failed, again, report)
    if on_progress is not None:
        on_progress(0, 0, len(todo))
    writer = _Writer(db, replace)
    writer.start()
    outcomes = backend.execute(todo) if todo else iter(())
    interrupted = False
    try:
        try:
            for outcome in outcomes:
                writer.put(outcome)
                report.executed += 1
                report.executed_keys.append(outcome["spec"]["run_key"])
                report.failed += outcome["status"] == "failed"
                report.reexecuted += outcome.get("attempts", 1) > 1
                if on_progress is not None:
                    on_progress(report.executed, report.failed, len(todo))
        except KeyboardInterrupt:
            interrupted = True
        finally:  # stop the workers now (a generator backend's own finally)
            close = getattr(outcomes, "close", None)
            if close is not None:
                close()
    finally:
        writer.close()  # stores every finished run, interrupted or not
    report.stored = writer.stored
    report.superseded = writer.superseded
    report.wall_seconds = time.perf_counter() - t0
    if interrupted:
        raise CampaignInterrupted(report)
    return report


@dataclass
class CampaignStatus:
    """Stored state of a campaign's runs."""

    campaign: str
    database: Path
    total: int
    done: int
    failed: int
    pending: int
    other_runs: int  # runs in the database that this campaign file does not declare
    errors: list[tuple[str, str, str]]  # (run_key, description, error) of failed runs
    #: stored runs of this campaign made by other code (their slots are pending and
    #: the next ``campaign run`` replaces them); included in ``other_runs``
    outdated: int = 0
    #: up to :data:`STATUS_EXAMPLES` of them: (run_key, description, why outdated)
    outdated_runs: list[tuple[str, str, str]] = field(default_factory=list)


#: Outdated runs described by :func:`campaign_status`.
STATUS_EXAMPLES = 5


def _describe(row: dict[str, Any]) -> str:
    """``trace/platform/dispatcher/predictor/workload/repN`` of a stored run."""
    workload = row.get("workload") or f"seed={row.get('seed')}"
    return "/".join(str(row.get(k)) for k in ("trace", "platform", "dispatcher",
                                               "predictor")) + \
        f"/{workload}/rep{row.get('repetition')}"


def campaign_status(campaign: str | Path | Campaign, *,
                    database: str | Path | None = None) -> CampaignStatus:
    """Count the campaign's runs that are done, failed and not run yet, and the stored
    runs of this campaign that are outdated (reads only)."""
    camp = campaign if isinstance(campaign, Campaign) else load_campaign(
        campaign, database=database)
    db = Path(database) if database is not None else camp.database
    if not db.exists():
        return CampaignStatus(camp.name, db, len(camp.runs), 0, 0, len(camp.runs), 0, [])
    con = store.open_read(db)
    try:
        rows, outdated = store.select_runs(con)
    finally:
        con.close()
    rows += outdated
    keys = set(camp.keys)
    mine = {r["run_key"]: r for r in rows if r["run_key"] in keys}
    done = sum(r["status"] == "done" for r in mine.values())
    failed = sorted((r for r in mine.values() if r["status"] == "failed"),
                    key=lambda r: r["run_key"])
    errors = [(r["run_key"], _describe(r), r["error"] or "") for r in failed]
    stale = [r for r in outdated if r["campaign"] == camp.name and r["run_key"] not in keys]
    return CampaignStatus(
        camp.name, db, len(camp.runs), done, len(failed), len(camp.runs) - len(mine),
        len(rows) - len(mine), errors, outdated=len(stale),
        outdated_runs=[(r["run_key"], _describe(r), r["outdated"])
                       for r in stale[:STATUS_EXAMPLES]])


__all__ = ["CampaignInterrupted", "CampaignReport", "CampaignStatus", "DaskBackend", "LocalPool",
           "campaign_status", "run_campaign"]
