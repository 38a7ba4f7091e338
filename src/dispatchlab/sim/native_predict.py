"""A duration predictor written in Python on the native engine: the calls the core
makes.

The native core (``dispatchlab._core.simulate_counting`` / ``simulate_nodes`` with
``python_predictor``, the adapter in ``rust/py/src/python_predictor.rs``) runs the
engine loop and, with the GIL taken, calls :meth:`NativePredictorCalls.at_time` once
per time point with submissions (or completions, when the predictor observes them)
and :meth:`NativePredictorCalls.on_expiry` at a pass with running jobs at or past
their planned end. These call the predictor as the Python engine
(:class:`dispatchlab.sim.engine.Simulation`) calls it, in its order: ``start`` once
with a :class:`~dispatchlab.predict.duration.base.PredictorContext` whose
``start_times`` are live (the jobs started since the previous call are written into
them before each call), ``observe(job, now)`` for each job completed at ``now`` (in
completion order, only when the class overrides ``observe``), then
``predict(job, now)`` for each job submitted at ``now`` that fits the platform (in
row order; the predictor's ``static_estimates()``, when it gives them, instead), and
``on_expiry(job, now)`` for each expired running job (in the running set's order).
An estimate is checked with the Python engine's message
(:class:`~dispatchlab.dispatch.base.DispatchError`); whatever the predictor raises
stops the run and is raised unchanged.

The estimates exist only from each job's submission on, so the native dispatchers
run without the estimates of every job before the run (their ``start``); those that
need them (per-job ranks of an ordering over all jobs) are refused by
:func:`dispatchlab.sim.native.native_reason`. A dispatcher written in Python sees each
estimate from its job's submission on, as on the Python engine (its View's buffers are
written with the ``estimate`` and ``mirrors`` arrays of
:class:`NativePredictorCalls`).
"""

from __future__ import annotations

from collections.abc import MutableSequence
from typing import Any

import numpy as np

from dispatchlab.dispatch.base import DispatchError
from dispatchlab.predict.duration.base import Predictor, PredictorContext
from dispatchlab.workload.jobs import JobTable

__all__ = ["NativePredictorCalls"]


class NativePredictorCalls:
    """The calls the core makes to ``predictor`` (started here, on ``jobs`` with
    ``overrun``; ``limit``: the run's time limit, as
    :func:`~dispatchlab.sim.engine.check_jobs` gives it). :attr:`estimate` holds each
    job's estimate at submission (-1 until then)."""

    def __init__(self, predictor: Predictor, jobs: JobTable, overrun: str,
                 limit: int) -> None:
        n = len(jobs)
        self.predictor, self.jobs = predictor, jobs
        self._limit = limit
        #: each job's start time (-1 until it starts): the predictor's live start times
        self.start = np.full(n, -1, dtype=np.int64)
        #: each job's estimate at submission (-1: not submitted, or rejected)
        self.estimate = np.full(n, -1, dtype=np.int64)
        predictor.start(PredictorContext(jobs, overrun, self.start))
        static = predictor.static_estimates()
        if static is not None:  # as the Python engine checks them
            static = np.asarray(static)
            if static.shape != (n,) or (n and (static.min() < 0
                                                or static.max() >= limit // 4)):
                raise DispatchError(f"{predictor!r}: static_estimates() must give one "
                                    "estimate >= 0 per job")
        self._static = static
        #: whether the core calls :meth:`at_time` at completions too
        self.observes = type(predictor).observe is not Predictor.observe
        #: the exception that stopped the run (raised unchanged by the caller)
        self.error: BaseException | None = None
        #: more per-job estimate buffers written at each submission (the View's of a
        #: dispatcher written in Python, :mod:`dispatchlab.sim.native_view`)
        self.mirrors: list[MutableSequence[int]] = []

    @property
    def binding_args(self) -> tuple[Any, Any, bool]:
        """The ``python_predictor`` argument of the core's simulate functions:
        ``(at_time, on_expiry, observes)``."""
        return self.at_time, self.on_expiry, self.observes

    def _started(self, started: tuple[int, ...], times: tuple[int, ...]) -> None:
        if started:
            self.start[list(started)] = times

    def at_time(self, now: int, started: tuple[int, ...], times: tuple[int, ...],
                completed: tuple[int, ...], submitted: tuple[int, ...]) -> list[int]:
        """The time point ``now``: the jobs ``completed`` observed, then the
        estimates of the jobs ``submitted`` (``started``: the jobs started since the
        previous call, at ``times``)."""
        try:
            return self._at_time(now, started, times, completed, submitted)
        except BaseException as e:
            self.error = e
            raise

    def _at_time(self, now: int, started: tuple[int, ...], times: tuple[int, ...],
                 completed: tuple[int, ...], submitted: tuple[int, ...]) -> list[int]:
        self._started(started, times)
        predictor = self.predictor
        for job in completed:
            predictor.observe(job, now)
        out = []
        static, limit = self._static, self._limit // 4
        for job in submitted:
            if static is not None:
                estimate = static[job]
            else:
                estimate = predictor.predict(job, now)
                if estimate is None or not 0 <= estimate < limit:
                    raise DispatchError(f"{predictor!r} predicted {estimate!r} for job "
                                        f"{int(self.jobs['job_id'][job])}; estimates are "
                                        f"seconds >= 0 (and below {limit:,})")
            estimate = int(estimate)
            self.estimate[job] = estimate
            for mirror in self.mirrors:
                mirror[job] = estimate
            out.append(estimate)
        return out

    def on_expiry(self, now: int, started: tuple[int, ...], times: tuple[int, ...],
                  expired: tuple[int, ...]) -> list[int | None]:
        """The new estimates of the running jobs ``expired`` at ``now`` (None: the job
        counts as ending now), by the Python engine's rule."""
        try:
            return self._on_expiry(now, started, times, expired)
        except BaseException as e:
            self.error = e
            raise

    def _on_expiry(self, now: int, started: tuple[int, ...], times: tuple[int, ...],
                   expired: tuple[int, ...]) -> list[int | None]:
        self._started(started, times)
        out: list[int | None] = []
        half = self._limit // 2
        for job in expired:
            new = self.predictor.on_expiry(job, now)
            began = int(self.start[job])
            if new is not None and now < began + int(new) < half:
                out.append(int(new))
            else:
                out.append(None)
        return out
