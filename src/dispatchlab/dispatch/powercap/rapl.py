"""RAPL-like power capping by throttling (Borghesi et al. 2018): ``rapl-dynshare``, ``rapl-simple``
and the ``dec-rapl`` switch.

These dispatchers let jobs in with an *admission* dispatcher and then keep the platform
under the power budget (``view.cap``, W) by lowering running jobs' power levels
(:class:`~dispatchlab.dispatch.base.SetPower`); the simulation's duration model turns
a level into a slowdown (``duration_model=``; Borghesi et al. 2018: ``D' = max(1, F / M) x D``).
They act on **measured** power: a job's real power (the job table's ``power_mean``,
``view.job_power``) times its level, per node (``view.node_power()``), as a RAPL
controller reads its sockets. *Ours*: when the jobs carry no real power the predicted
power (``view.power_prediction`` mean) stands for it; a job of unknown power counts
0 W and is never throttled. The budget is therefore *not* guaranteed: how far and how
long it is exceeded is a measured metric of every run
(:func:`dispatchlab.power.accounting.power_facts`: ``cap_time_above_share``,
``cap_max_excess``).

**Floor.** A job never draws less than 1 W per node: its lowest level is
``min(1, nodes_j x 1 W / power_j)`` with ``nodes_j`` the distinct nodes of its
allocation (counting platforms: its units) and ``power_j`` its real power.

**Admission** (``admission``, both RAPL methods; Borghesi et al. 2018 section 5.2.2): the jobs are
started by :class:`~dispatchlab.dispatch.powercap.budget.BF` (PA's power-aware EASY) checking
the *predicted* power against ``admission x`` the cap (default 3, the paper's
"empirical" factor); ``admission = None`` or ``"none"`` is BF without a power check
(everything that fits the resources starts: the paper's plain EASY-BF, which fails at
budgets <= 30 %). BF sees a throttled running job as its prediction times its level.

DynShare (``rapl-dynshare``)
----------------------------
POWsched's dynamic power sharing (Ellsworth et al. SC15, libmsr ``powsched.c``) with
PA-HPC-SIM's per-node parameters (POWsched, libmsr ``powsched.c``): every ``period`` seconds
(default 5) the per-node measured power ``c`` updates the per-node allocations ``a``
(:func:`dynshare_step`, numpy over nodes), then each node's allocation is enforced
(PA ``apply_nodeRAPL``):

* a node drawing more than its allocation: each job on it gets ``a_n x (its power on
  n / c_n)``, i.e. its level times ``a_n / c_n``;
* a node drawing less with a throttled job on it: the jobs are raised the same way,
  never above full power (level 1);
* a multi-node job takes **one** level, the minimum its nodes allow; never below its
  floor. Only jobs whose level changes get a ``SetPower`` (compared with the level
  the engine reports, ``view.power_level``, kept per job from ``view.changed``;
  changes under 1e-9 are ignored).

**Dead band** (``deadband``, default 0.05; **ours**, 0 gives PA's rules exactly): a
*raise* is applied only when the new level exceeds the current one by more than
``deadband`` of it, or restores full power; a lowering is always applied, so no node
is left above its allocation. PA's take-condition (``sum(a) + N >= bound``) holds
whenever the allocations add up to the bound, so a busy node beside idle ones cycles
between two allocations a few watts apart (e.g. 95 / 92.75 W: see the tests) and every
job on it would change level every period - a level change, a rescheduled end and an
engine event each, for a 2 % power difference. With the band the job stays at the lower
value and the cycle stops (the allocations then equal what the nodes draw).

The measured power per node is computed from a job-node incidence cached per running
set (one ``bincount``): the same quantity as ``view.node_power()`` (tested equal),
without rebuilding it per call. The admission dispatcher is called only when something
it reads changed (see ``_Admitting._admit``): most passes of a throttled run come from
end events superseded by level changes.

Timing (*ours* where PA's event loop is not public): the measurements fall on a grid of
``period`` s from the trace origin, asked for with ``view.wake_at`` while jobs run (a
platform with nothing running has nothing to measure, and waking an idle platform
forever would never end a run); the enforcement happens at the measurement, before the
admission of that pass, so jobs started in a pass run at full power until the next
measurement. The first measurement (and the first after a gap longer than one period)
sets every allocation to ``round(bound / N)`` (PA's first call); without a cap now
nothing is enforced, the allocations are forgotten and throttled jobs go back to level
1. On counting (pooled) platforms there is no placement: the platform is one node
(*ours*).

**Settled periods** (an exact shortcut, same schedules): a measurement is a function of
the running set, the jobs' levels, the cap and the allocations. When one changes no
level, its pass starts nothing, and the allocations repeat with a period of at most
``QUIET_CYCLE`` (4) measurements (a fixed point, or a two-allocation cycle as above),
every later measurement until the next event would repeat the cycle and change nothing.
DynShare then asks for no more wake-ups and declares ``call_on_empty_queue`` so it sees
every event; at the next pass it counts the skipped measurements, replays their
allocations (:meth:`RaplDynShare.resume`) and goes on as if it had measured all along.
The one time-driven change the engine makes at a pass, an estimated end passing (the
predictor's ``on_expiry``), is kept by a wake-up at the first measurement at or after
the earliest future estimated end (withdrawn when an event comes first). ``run_facts``:
``dynshare_measurements`` (skipped ones included) and ``dynshare_skipped``. A throttled
50-job Eurora run at 10 % of the budget makes 153 passes instead of 126,974.

Simple (``rapl-simple``) - **ours**
-----------------------------------
Bodas et al. (E2SC 2014) publish no details; this is our reading of
Borghesi et al. 2018's description (rigid per-job budgets, no sharing): when a job starts its budget
is ``min(its predicted power, budget left)``, with ``budget left = cap - the budgets of
the running jobs`` (a running job that got no budget from us, e.g. a hot start's, counts
its prediction times its level), never below 1 W per node. The *predicted* power
(``view.power_prediction`` mean; the real power without a predictor) sets the budget,
as a scheduler knows only predictions; the job then runs from its start at level
``budget / its real power`` (at most 1, never below its floor), slowed by the duration
model: the pass returns ``Start(j)`` then ``SetPower(j, level)``. The budget returns to
the pool only at the job's end; levels never change afterwards (no sharing). Without a
cap a job's budget is its prediction and it runs at full power.

DEC+RAPL (``dec-rapl``)
-----------------------
A switch between two dispatchers (``high``, default ``dec``, and ``low``, default
``rapl-dynshare``) on the job arrival frequency (Borghesi et al. 2018 section 5.2.3: "if the job
arrival frequency is high LS & DEC provide better results when job arrival frequency
decreases under a threshold the best method is some variant of DynShare"; the threshold:
one job every two minutes, ``threshold`` = 1/120 jobs per s). ``high`` decides a pass
when the rate is ``>= threshold``, ``low`` otherwise. Jobs rejected at submission and a
hot start's jobs are no arrivals.

**The rate** (**ours**: the paper does not say how it is measured), ``estimator``:

* ``"arrivals"`` (the default): causal, from the arrivals so far only, measured at the
  latest one. With the arrival times ``s_1 <= ... <= s_n`` and ``c = min(K, n)``
  (``K`` = ``arrivals``, a whole number >= 2, or ``"all"``: ``c = n``), the rate is
  ``(c - 1) / (s_n - s_{n-c+1})``: the inverse of the mean gap between the last ``c``
  arrivals (the maximum-likelihood rate of ``c - 1`` exponential gaps), so "one job every
  two minutes" means a mean gap of 120 s. Arrivals at one time (a burst) read as an
  infinite rate, a lone first arrival as exactly ``threshold`` (no gap yet: ``high``),
  no arrival as 0. The mode is re-evaluated only at a pass where jobs arrived and stays
  between arrivals: the paper switches on the workload's arrival frequency, and states
  that on its 5-minute instances "the RAPL component is never activated"; a rate that
  decays with the time since the last arrival would hand those instances to DynShare
  while their jobs still wait (they run for hours after the last arrival). The default
  ``K = 2`` (``DEFAULT_ARRIVALS``: ``high`` while the latest arrival came at most
  ``1 / threshold`` s after the one before) is the best of K in 2, 5, 10, 20, all on
  the Eurora historical instances of 100 jobs (docs/reproductions/borghesi2018.md, campaign
  ``borghesi2018-decrapl-rate.toml``); with it ``dec-rapl`` gives DEC's schedule on 100 jobs
  in 5 minutes (uniform arrivals: tested).
* ``"window"``: the rate is re-evaluated at every pass as the number of jobs queued in
  ``(now - window, now]`` divided by ``window`` (default 1800 s); the estimator of
  earlier versions, kept so their results can be reproduced (with
  ``handover="immediate"``).

**The hand-over to** ``high`` (**ours**), ``handover``: ``"budget"`` (default) switches
from ``low`` to ``high`` only at a pass where the measured power of the running jobs is
within the cap; until then ``low`` keeps the passes. DynShare admits jobs up to
``admission x`` the budget at full power and throttles them at its next 5-s period; a
switch at once (``"immediate"``, the rule of earlier versions) left such jobs to
``high``, which does not throttle: measured in the arrival-window sweep, one run (1-h
window, 30 % budget) stayed up to 128 % above the budget for 19 % of its time.

At a switch to ``high``, the jobs ``low`` throttled
keep their levels until they end (restoring them to full power could put the platform
far above the budget, since DynShare admits up to ``admission x`` the budget; ``high``
plans with their predicted power times that level); at a switch back, DynShare
measures afresh (its allocations restart at ``round(bound / N)``). Both components live
for the whole run: each is called only in its mode, and its ``view.changed`` gathers
everything since its own previous call; jobs the other one started reach it as
``pinned`` (started without it). A settled DynShare (see above) is resumed at every
pass whatever the mode, so its measurements keep PA's timing; the switch is called at
every event while one is settled, and a pass with no waiting job that the every-period
DynShare would not have made is not handed to a component. Jobs the other one
*rejected* are not reported (no field says so; neither ``dec`` nor the RAPL methods
track the queue from ``view.changed``). ``run_facts`` merges both components' facts and
adds ``decrapl_high_passes`` / ``decrapl_low_passes`` (the passes handed to each),
``decrapl_high_starts`` / ``decrapl_low_starts`` (the jobs each started) and
``decrapl_switches``.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, ClassVar, cast

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Nested
from dispatchlab.dispatch import DISPATCHERS
from dispatchlab.dispatch.base import (
    Allocation,
    Changes,
    Decision,
    Dispatcher,
    Requirements,
    SetPower,
    Start,
    View,
)
from dispatchlab.dispatch.powercap.budget import BF

#: a job never draws less than this per node (W), Borghesi et al. 2018 and PA
MIN_NODE_WATTS = 1.0
#: level changes smaller than this are not sent to the engine (float noise)
LEVEL_TOLERANCE = 1e-9
#: the longest allocation cycle (in measurements) recognised as settled
QUIET_CYCLE = 4
#: dec-rapl's arrival-rate estimators (see the module docstring)
ESTIMATORS = ("arrivals", "window")
#: dec-rapl's default K: the rate of the last K arrivals (ours, from a sweep:
#: docs/reproductions/borghesi2018.md)
DEFAULT_ARRIVALS = 2
#: dec-rapl's hand-over rules from ``low`` to ``high`` (see the module docstring)
HANDOVERS = ("budget", "immediate")


# ----------------------------------------------------------------------------- DynShare
def dynshare_step(measured: np.ndarray, alloc: np.ndarray | None, bound: float,
                  q: float = 5.0, rfact: float = 0.9, p_min: float = 1.0,
                  p_max: float = 400.0) -> np.ndarray:
    """One DynShare allocation step (POWsched rules, PA-HPC-SIM's per-node variant,
    libmsr ``powsched.c``): the new per-node allocations (W, float64) from the measured
    per-node power ``measured`` (W) and the current allocations ``alloc`` under the
    total ``bound`` (W). Pure and vectorized over nodes.

    ``alloc`` None (the first call): every node gets ``round(bound / N)`` (C's
    ``round``, halves away from zero, as PA) and nothing else happens. Otherwise, with ``N`` nodes:

    1. *yield*: a node with ``c < a - q`` goes **down** to ``max(c + q, p_min)``;
    2. *take*: when no node went down and ``sum(a) + N >= bound`` (PA's condition),
       every ``a > bound / N`` becomes ``a - (a - bound / N) x (1 - rfact)``;
    3. *up*: unless every node went down, ``u = (bound - sum(a)) / (N - n_down)`` is
       added to every node that did not go down, capped at ``p_max``. PA has no
       ``u < 0`` guard, so a negative ``u`` lowers them; *ours*: never below ``p_min``.
    """
    c = np.asarray(measured, dtype=np.float64)
    n = len(c)
    if alloc is None:
        return np.full(n, float(math.floor(bound / n + 0.5)))
    a = np.asarray(alloc, dtype=np.float64)
    down = c < a - q
    a = np.where(down, np.maximum(c + q, p_min), a)
    n_down = int(np.count_nonzero(down))
    if n_down == 0 and a.sum() + n >= bound:
        share = bound / n
        a = np.where(a > share, a - (a - share) * (1.0 - rfact), a)
    if n_down < n:
        u = (bound - a.sum()) / (n - n_down)
        a = np.where(down, a, np.clip(a + u, p_min, p_max))
    return a


def _check_number(value: object, field: str, low: float, high: float = math.inf,
                  low_open: bool = False) -> None:
    ok = not isinstance(value, bool) and isinstance(value, int | float) and \
        (value > low if low_open else value >= low) and value <= high
    if not ok:
        bound = f"> {low}" if low_open else f">= {low}"
        if high < math.inf:
            bound += f" and <= {high}"
        raise InputError(f"{field} must be a number {bound}, got {value!r}", field=field)


def _floor_levels(watts: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """The lowest level of each job: ``min(1, nodes x 1 W / watts)`` (1 for 0 W)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.where(watts > 0, nodes * MIN_NODE_WATTS / watts, 1.0)
    return np.minimum(floor, 1.0)


def _measured_watts(view: View) -> np.ndarray | None:
    """Real power per job row at full level (W; unknown -> 0): the jobs' own power, or
    the predicted mean when the jobs carry none (ours); None when neither exists."""
    real = view.job_power
    if real is None:
        pred = view.power_prediction
        if pred is None:
            return None
        real = pred[0]
    return np.nan_to_num(np.asarray(real, dtype=np.float64), nan=0.0)


class _Incidence:
    """Which node each running job holds units on, for a set of running jobs (sorted
    rows): one entry per (job, node) with the job's share of its power there."""

    __slots__ = ("entry_job", "entry_node", "entry_share", "first", "floor", "known", "nodes",
                 "rows", "watts")

    def __init__(self, view: View, rows: np.ndarray) -> None:
        self.rows = rows
        self.floor: np.ndarray | None = None  # the jobs' lowest levels, once known
        #: the jobs' real power (W) and whether it is > 0, once known (static power)
        self.watts: np.ndarray | None = None
        self.known: np.ndarray | None = None
        units = np.asarray(view.jobs["units"], dtype=np.int64)[rows]
        if view.counting:  # one pooled node (ours)
            self.entry_node = np.zeros(len(rows), dtype=np.int64)
            self.entry_job = np.arange(len(rows), dtype=np.int64)
            self.entry_share = np.ones(len(rows))
            self.first = np.arange(len(rows), dtype=np.int64)
            self.nodes = units.astype(np.float64)
            return
        # node level: every running job has an allocation
        allocs = cast(list[Allocation], [view.allocation(int(j)) for j in rows.tolist()])
        sizes = np.fromiter((len(al.nodes) for al in allocs), dtype=np.int64,
                            count=len(allocs))
        self.entry_node = np.concatenate([al.nodes for al in allocs]).astype(np.int64)
        counts = np.concatenate([al.counts for al in allocs]).astype(np.float64)
        self.entry_job = np.repeat(np.arange(len(rows), dtype=np.int64), sizes)
        self.entry_share = counts / units[self.entry_job]
        self.first = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        self.nodes = sizes.astype(np.float64)


class _Admitting(Dispatcher):
    """Shared by the RAPL methods: the admission dispatcher (``admission``)."""

    admission: float | str | None
    call_on_empty_queue = False
    #: check_dispatcher gives such dispatchers a power predictor and a cap
    needs_power = True
    #: a power-capping method: the command line refuses it without a cap
    needs_cap = True
    #: reads the jobs' measured power (view.job_power): job power data needed
    needs_job_power = True
    #: throttles running jobs (SetPower): a run needs an explicit duration model
    slows_running_jobs: ClassVar[bool] = True
    #: the admission dispatcher, built in ``start``
    admit_: Dispatcher | None = None

    def validate(self) -> None:
        a = self.admission
        if a is None or a == "none":
            return
        if isinstance(a, bool) or not isinstance(a, int | float) or not 0 < a < math.inf:
            raise InputError(f"admission must be a factor > 0 on the budget or 'none', "
                             f"got {a!r}", field="admission")

    def _admission_dispatcher(self) -> Dispatcher:
        """BF checking ``admission x`` the cap (``none``: no power check)."""

        if self.admission is None or self.admission == "none":
            return BF(power_check=False)
        return BF(cap_scale=float(self.admission))

    def start(self, view: View) -> None:
        self.validate()
        self.admit_ = self._admission_dispatcher()
        self.admit_.start(view)
        #: view.changes when the admission last ran and decided nothing (None: run it)
        self.admit_mark_: int | None = None
        self.admission_runs_ = 0

    def _admit(self, view: View) -> list[Decision]:
        """The admission dispatcher's decisions. *Skipped* (no decision) when it decided
        nothing at its previous run and nothing it reads changed since: no submission
        and the view's change counter (completions, new or expired estimates, level
        changes - ours included -, rejections, cap steps) did not move. Such passes
        come from end events superseded by level changes; BF is a function of the
        queue, the free resources, the running jobs with their levels and estimated
        ends, and the cap, so it would decide nothing again."""
        admit = self.admit_
        assert admit is not None  # built in start
        if view.queue_length == 0 and not admit.call_on_empty_queue:
            return []
        changes = view.changes
        if self.admit_mark_ == changes and not view.changed.submitted:
            return []
        self.admission_runs_ += 1
        out = admit.dispatch(view)
        self.admit_mark_ = None if out else changes
        return out

    def run_facts(self) -> dict:
        admit = self.admit_
        return {} if admit is None else admit.run_facts()


class RaplDynShare(_Admitting):
    """DynShare: periodic per-node power sharing and proportional per-job enforcement,
    jobs admitted by BF at ``admission x`` the budget (see the module docstring).

    ``period`` (s, whole, >= 1), ``q`` (W), ``rfact`` (0-1), ``p_min`` / ``p_max`` (W
    per node): PA-HPC-SIM's defaults; ``deadband`` (0-1): raises smaller than this share
    of the level are skipped (ours; 0 = PA exactly)."""

    name = "rapl-dynshare"

    def __init__(self, period: int = 5, q: float = 5.0, rfact: float = 0.9,
                 p_min: float = 1.0, p_max: float = 400.0,
                 admission: float | str | None = 3.0, deadband: float = 0.05) -> None:
        self.period = period
        self.q = q
        self.rfact = rfact
        self.p_min = p_min
        self.p_max = p_max
        self.admission = admission
        self.deadband = deadband

    def validate(self) -> None:
        super().validate()
        p = self.period
        if isinstance(p, bool) or not isinstance(p, int | float) or p < 1 or p != int(p):
            raise InputError(f"period must be a whole number of seconds >= 1, got {p!r}",
                             field="period")
        _check_number(self.q, "q", 0.0)
        _check_number(self.rfact, "rfact", 0.0, 1.0)
        _check_number(self.p_min, "p_min", 0.0, low_open=True)
        _check_number(self.p_max, "p_max", float(self.p_min))
        _check_number(self.deadband, "deadband", 0.0, 1.0)

    def start(self, view: View) -> None:
        super().start(view)
        self.period_ = int(self.period)
        self.alloc_: np.ndarray | None = None  # per-node allocations (W)
        self.next_tick_: int | None = None  # the measurement asked for
        self.last_tick_: int | None = None
        self.incidence_: _Incidence | None = None
        self.ticks_ = 0
        self.skipped_ticks_ = 0  # measurements skipped in settled periods
        self.gap_: bool | None = None  # whether the last measurement restarted
        #: allocations after the consecutive measurements that changed nothing (None
        #: when none was made: np.array_equal compares those too)
        self.quiet_hist_: list[Any] = []
        self.quiet_mark_ = -1  # view.changes at the last entry of quiet_hist_
        self.expiry_wake_: int | None = None  # the wake-up asked for while settled
        #: (time, allocation cycle) while settled, else None
        self.quiet_: tuple[int, list[np.ndarray]] | None = None
        #: the power level of every job row, kept from view.changed (a level change
        #: lists the job as re-estimated at the next pass; ended jobs read 1)
        self.level_ = np.ones(len(view.jobs))
        real = view.job_power  # static: converted once (unknown -> 0 W)
        self.real_ = None if real is None else np.nan_to_num(
            np.asarray(real, dtype=np.float64), nan=0.0)

    def dispatch(self, view: View) -> list[Decision]:
        now = view.now
        self.resume(view)
        changed = view.changed.reestimated
        if changed:
            level, power_level = self.level_, view.power_level
            for j in changed:
                level[j] = power_level(j)
        out: list[Decision] = []
        ticked = False
        if self.next_tick_ is not None and now >= self.next_tick_:
            self.next_tick_ = None
            alloc_in = self.alloc_
            out = self._tick(view)
            ticked = self.alloc_ is not alloc_in  # the allocations were updated
        out += self._admit(view)
        if ticked and not out and self._settled(view, alloc_in):
            return out
        if not ticked or out:
            self.quiet_hist_ = []
        if self.next_tick_ is None and (view.first_estimated_end() is not None
                                        or any(type(d) is Start for d in out)):
            self.next_tick_ = (now // self.period_ + 1) * self.period_
            view.wake_at(self.next_tick_)
        return out

    # ------------------------------------------------------------- settled periods
    def _settled(self, view: View, alloc_in: np.ndarray | None) -> bool:
        """After a measurement that changed nothing (no level change, no admission):
        True when the allocations now repeat with a period of ``m <= QUIET_CYCLE``
        measurements, all of which changed nothing. Every later measurement until the
        next event would then change nothing either (its inputs - the running set,
        levels, cap and allocations - repeat), so none is asked for: the run is
        *settled* (:meth:`resume` replays the skipped ones' allocations). The one
        time-driven change the engine makes at a pass (an estimated end passing,
        ``_expire``) is kept: a wake-up is asked at the first measurement at or after
        the earliest future estimated end."""
        hist = self.quiet_hist_
        if hist and self.quiet_mark_ != view.changes:  # something happened between
            hist.clear()
        self.quiet_mark_ = view.changes
        if not hist and alloc_in is not None and self.gap_ is False:
            hist.append(alloc_in)
        hist.append(self.alloc_)
        last = hist[-1]
        for m in range(1, min(QUIET_CYCLE, len(hist) - 1) + 1):
            if np.array_equal(last, hist[-1 - m]):
                break
        else:
            if len(hist) > QUIET_CYCLE + 1:
                del hist[0]
            return False
        now = view.now
        self.quiet_ = (now, hist[-m:])
        self.call_on_empty_queue = True  # every event ends the settled period
        self.quiet_hist_ = []
        self.next_tick_ = None
        ends = view.running.est_end
        later = ends[ends > now]
        if len(later):  # where the engine would expire that estimate
            p = self.period_
            self.expiry_wake_ = -(-int(later[0]) // p) * p
            view.wake_at(self.expiry_wake_)
        return True

    def resume(self, view: View) -> bool:
        """Leave a settled period (see :meth:`_settled`) at a pass at ``view.now``: the
        skipped measurements (every ``period`` s after the settling one, before now)
        are counted, their allocations (the repeating cycle) replayed, and the next
        measurement asked for as if none had been skipped. A no-op when not settled.
        ``dec-rapl`` calls it at every pass, so a DynShare it does not call this pass
        keeps PA's timing too. True when a skipped measurement falls at this pass (a pass
        the every-period DynShare would have been woken for)."""
        quiet = self.quiet_
        if quiet is None:
            return False
        self.quiet_ = None
        del self.call_on_empty_queue  # the class's False again
        wake, self.expiry_wake_ = self.expiry_wake_, None
        if wake is not None and wake > view.now:  # left before it: not PA's timing
            view.withdraw_wake(wake)
        settled_at, cycle = quiet
        p, m = self.period_, len(cycle)
        skipped = max(0, (view.now - settled_at - 1) // p)
        self.alloc_ = cycle[(m - 1 + skipped) % m]
        self.last_tick_ = settled_at + skipped * p
        self.ticks_ += skipped
        self.skipped_ticks_ += skipped
        self.next_tick_ = self.last_tick_ + p
        if self.next_tick_ > view.now:
            view.wake_at(self.next_tick_)
            return False
        return True

    def run_facts(self) -> dict:
        facts = super().run_facts()
        if hasattr(self, "ticks_"):
            facts["dynshare_measurements"] = self.ticks_
            facts["dynshare_skipped"] = self.skipped_ticks_
        return facts

    # ------------------------------------------------------------------ one period
    def _incidence(self, view: View, rows: np.ndarray) -> _Incidence:
        inc = self.incidence_
        if inc is None or not np.array_equal(inc.rows, rows):
            inc = self.incidence_ = _Incidence(view, rows)
        return inc

    def _tick(self, view: View) -> list[Decision]:
        """Measure, update the allocations, enforce them (see the module docstring)."""
        now = view.now
        gap = self.last_tick_ is None or now - self.last_tick_ > self.period_
        self.gap_ = gap
        self.last_tick_ = now
        self.ticks_ += 1
        rows = np.sort(view.running.jobs)
        if not len(rows):
            return []
        levels = self.level_[rows]
        bound = view.cap
        if bound is None:  # nothing to enforce: every job back to full power
            self.alloc_ = None
            return [SetPower(int(j), 1.0) for j in rows[levels < 1.0].tolist()]
        inc = self._incidence(view, rows)
        if self.real_ is not None:  # static: taken once per running set
            watts = inc.watts
            if watts is None:
                watts = inc.watts = self.real_[rows]
        else:
            watts_all = _measured_watts(view)
            if watts_all is None:
                return []
            watts = watts_all[rows]
        measured = self.measure(view, inc, watts * levels)
        self.alloc_ = dynshare_step(measured, None if gap else self.alloc_, float(bound),
                                    self.q, self.rfact, self.p_min, self.p_max)
        return self._enforce(rows, levels, watts, inc, measured, self.alloc_)

    @staticmethod
    def measure(view: View, inc: _Incidence, drawn: np.ndarray) -> np.ndarray:
        """Measured power per node (W): each running job's power now (``drawn``: real
        power x level, by position in ``inc.rows``) shared among its nodes in proportion
        to its units there - :meth:`View.node_power`'s quantity, from the cached
        job-node incidence (one ``bincount``); the pooled platform is one node."""
        if view.counting:
            return np.array([float(drawn.sum())])
        return np.bincount(inc.entry_node, weights=drawn[inc.entry_job] * inc.entry_share,
                           minlength=view.capacity.shape[0])

    def _enforce(self, rows: np.ndarray, levels: np.ndarray, watts: np.ndarray,
                 inc: _Incidence, measured: np.ndarray,
                 alloc: np.ndarray) -> list[Decision]:
        """PA's ``apply_nodeRAPL``, vectorized: each job's level times ``a_n / c_n`` on
        each of its nodes, the minimum over its nodes, within [floor, 1]; raises inside
        the dead band are skipped (see the module docstring)."""
        ratio = np.full(len(measured), np.inf)
        np.divide(alloc, measured, out=ratio, where=measured > 0)
        want = levels[inc.entry_job] * ratio[inc.entry_node]
        new = np.minimum.reduceat(want, inc.first) if len(want) else want
        if inc.floor is None:
            inc.floor = _floor_levels(watts, inc.nodes)
            inc.known = watts > 0
        new = np.maximum(np.minimum(new, 1.0), inc.floor)
        assert inc.known is not None  # set with the floor
        new = np.where(inc.known, new, levels)  # unknown or 0 W: left alone
        lower = new < levels - LEVEL_TOLERANCE
        raise_ = (new > levels + LEVEL_TOLERANCE) & (
            (new > levels * (1.0 + float(self.deadband))) | (new == 1.0))
        moved = np.flatnonzero(lower | raise_)
        return [SetPower(int(rows[k]), float(new[k])) for k in moved.tolist()]


class RaplSimple(_Admitting):
    """**Ours** (Bodas et al. 2014 publish no details): a rigid power budget per job
    given at its start (``min(predicted power, budget left)``, >= 1 W per node), kept
    until its end, no sharing; jobs admitted by BF at ``admission x`` the budget (see
    the module docstring)."""

    name = "rapl-simple"

    def __init__(self, admission: float | str | None = 3.0) -> None:
        self.admission = admission

    def start(self, view: View) -> None:
        super().start(view)
        self.budget_: dict[int, float] = {}  # running job row -> its budget (W)

    def dispatch(self, view: View) -> list[Decision]:
        admitted = self._admit(view)
        if not any(type(d) is Start for d in admitted):
            return admitted
        real = _measured_watts(view)
        pred_all = view.power_prediction
        pred = real if pred_all is None else np.nan_to_num(pred_all[0], nan=0.0)
        running = view.running.jobs.tolist()
        budgets = {j: self.budget_[j] for j in running if j in self.budget_}
        used = sum(budgets.values())
        for j in running:  # running without a budget from us: prediction x level
            if j not in budgets and pred is not None:
                used += float(pred[j]) * view.power_level(j)
        cap = view.cap
        units = view.jobs["units"]
        out: list[Decision] = []
        for d in admitted:
            out.append(d)
            if type(d) is not Start:
                continue
            j = d.job
            p = 0.0 if pred is None else float(pred[j])
            w = 0.0 if real is None else float(real[j])
            nodes = int(units[j]) if d.allocation is None else len(d.allocation.nodes)
            if cap is None:
                budget, level = p, 1.0
            else:
                budget = max(min(p, float(cap) - used), nodes * MIN_NODE_WATTS)
                level = 1.0 if w <= 0 else min(1.0, budget / w)
                level = max(level, float(_floor_levels(np.array([w]),
                                                       np.array([nodes]))[0]))
            used += budget
            budgets[j] = budget
            if level < 1.0:
                out.append(SetPower(j, level))
        self.budget_ = budgets
        return out


# ----------------------------------------------------------------------------- DEC+RAPL
class _ComponentView:
    """The view a switch component sees: the run's view (every member read through,
    see :class:`View`), with its own ``now`` and ``changed`` (gathered since the
    component's own previous call)."""

    def __init__(self, view: View) -> None:
        self._view = view
        self.now = view.now
        self.changed_ = Changes((), (), ())

    @property
    def changed(self) -> Changes:
        return self.changed_

    def __getattr__(self, name: str) -> Any:
        # only for members not defined here (not now, changed, changed_)
        return getattr(self._view, name)


class DecRapl(Dispatcher):
    """DEC while jobs arrive fast, DynShare (with admission) otherwise (Borghesi et al. 2018
    DEC+RAPL; the rate measure is ours, see the module docstring). ``high`` / ``low``: the two
    dispatchers (names or instances); ``threshold`` (jobs per s); ``estimator``:
    ``"arrivals"`` (default: the rate of the last ``arrivals`` = K arrivals, a whole
    number >= 2 or ``"all"``, measured at each arrival; the mode stays between arrivals)
    or ``"window"`` (the jobs queued in the last ``window`` s, at every pass: the old
    estimator). ``run_facts``: the components' facts and ``decrapl_high_passes``,
    ``decrapl_low_passes``, ``decrapl_high_starts``, ``decrapl_low_starts``,
    ``decrapl_switches``."""

    name = "dec-rapl"
    needs_power = True
    #: a power-capping method: the command line refuses it without a cap
    needs_cap = True
    #: reads the jobs' measured power (view.job_power): job power data needed
    needs_job_power = True
    #: throttles running jobs through its DynShare part (SetPower): a run needs an
    #: explicit duration model
    slows_running_jobs: ClassVar[bool] = True
    nested: ClassVar[Nested] = {"high": DISPATCHERS, "low": DISPATCHERS}
    #: the two dispatchers (high, low), built in ``start``
    parts_: tuple[Dispatcher, ...] = ()

    @property  # type: ignore[misc]  # computed from the parts: not settable like the base's
    def call_on_empty_queue(self) -> bool:
        """False, but True while a component wants every event (a settled DynShare)."""
        return any(part.call_on_empty_queue for part in self.parts_)

    @property
    def requires(self) -> Requirements:
        """Its own declarations joined with its two parts' requirements (see
        :meth:`Requirements.union`): the parts are built from ``high`` and ``low`` (an
        InputError when one is not a dispatcher)."""
        own = Requirements.declared_by(self)
        parts = self.parts_ or (self._build(self.high), self._build(self.low))
        return own.union(*(part.requires for part in parts))

    def __init__(self, high: str | Dispatcher = "dec",
                 low: str | Dispatcher = "rapl-dynshare", window: int = 1800,
                 threshold: float = 1 / 120, estimator: str = "arrivals",
                 arrivals: int | str = DEFAULT_ARRIVALS, handover: str = "budget") -> None:
        self.high = high
        self.low = low
        self.window = window
        self.threshold = threshold
        self.estimator = estimator
        self.arrivals = arrivals
        self.handover = handover

    def validate(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise InputError(f"estimator must be one of {', '.join(ESTIMATORS)}, got "
                             f"{self.estimator!r}", field="estimator")
        _check_number(self.window, "window", 0.0, low_open=True)
        _check_number(self.threshold, "threshold", 0.0)
        if self.handover not in HANDOVERS:
            raise InputError(f"handover must be one of {', '.join(HANDOVERS)}, got "
                             f"{self.handover!r}", field="handover")
        self._arrivals_k()

    def _arrivals_k(self) -> int | None:
        """``arrivals`` as K (None: all arrivals so far); a whole number >= 2 (also as
        text, as the command line gives it) or ``"all"``, else an InputError."""
        k = self.arrivals
        if isinstance(k, str):
            if k.strip().lower() == "all":
                return None
            k = int(k) if k.strip().isdigit() else k
        if isinstance(k, bool) or not isinstance(k, int | float) or k != k or \
                k < 2 or k != int(k):
            raise InputError(f"arrivals must be a whole number of jobs >= 2 or 'all', got "
                             f"{self.arrivals!r}", field="arrivals")
        return int(k)

    def _build(self, spec: str | Dispatcher) -> Dispatcher:
        return DISPATCHERS.build(spec)  # validated

    def start(self, view: View) -> None:
        self.validate()
        self.parts_ = (self._build(self.high), self._build(self.low))
        self.views_ = (_ComponentView(view), _ComponentView(view))
        # per component: submitted, completed, reestimated, pinned since its last call
        self.pending_: tuple[list[list[int]], ...] = ([[], [], [], []], [[], [], [], []])
        for part, pview in zip(self.parts_, self.views_, strict=True):
            part.start(cast(View, pview))  # it stands for the run's view
        self._reset_rate()
        self.mode_: int | None = None  # 0 high, 1 low
        self.passes_ = [0, 0]
        self.starts_ = [0, 0]  # jobs started by each component
        self.switches_ = 0

    def _reset_rate(self) -> None:
        """No arrival yet (the estimator's state; at :meth:`start`)."""
        k = self._arrivals_k()
        #: window: the submission times in the window; arrivals: the last K (all: the
        #: last one, with first_ and count_)
        self.arrivals_: deque[int] = deque(maxlen=None if self.estimator == "window"
                                           else 1 if k is None else k)
        self.all_ = k is None
        self.first_: int | None = None  # the first arrival's time
        self.count_ = 0  # arrivals so far
        self.want_ = 1  # arrivals: the mode set by the latest arrival (low before any)

    def _record(self, times: list[int]) -> None:
        """Arrivals at ``times`` (s, in order: the jobs queued since the last pass)."""
        if times and self.first_ is None:
            self.first_ = times[0]
        self.count_ += len(times)
        self.arrivals_.extend(times)

    def rate(self, now: int) -> float:
        """The arrival rate (jobs per s) the switch compares with ``threshold``.

        ``estimator = "window"``: jobs queued in ``(now - window, now]`` per second.
        ``estimator = "arrivals"`` (``now`` is not read): with the arrival times so far
        ``s_1 <= ... <= s_n`` and ``c = min(K, n)`` (K = ``arrivals``, or n for
        ``"all"``), ``(c - 1) / (s_n - s_{n-c+1})``, the inverse of the mean gap between
        the last ``c`` arrivals; ``inf`` when they share one time (``span`` 0), exactly
        ``threshold`` for a lone arrival (``c = 1``: no gap yet), 0 before any."""
        arrivals = self.arrivals_
        if self.estimator == "window":
            since = now - self.window
            while arrivals and arrivals[0] <= since:
                arrivals.popleft()
            return len(arrivals) / float(self.window)
        c = self.count_ if self.all_ else len(arrivals)
        if c == 0:
            return 0.0
        if c == 1:
            return float(self.threshold)
        oldest = arrivals[0] if not self.all_ else cast(int, self.first_)  # set: c >= 1
        span = arrivals[-1] - oldest
        return math.inf if span <= 0 else (c - 1) / float(span)

    def dispatch(self, view: View) -> list[Decision]:
        ch = view.changed
        submit = view.jobs["submit"]
        new = [int(submit[j]) for j in ch.submitted]
        self._record(new)
        for pend in self.pending_:
            for k, items in enumerate(ch):
                pend[k].extend(items)
        due = False  # a settled DynShare's skipped measurement falls now
        for part, pview in zip(self.parts_, self.views_, strict=True):
            resume = getattr(part, "resume", None)
            if resume is not None:  # a settled DynShare keeps its timing
                pview.now = view.now
                due = resume(cast(View, pview)) or due
        if self.estimator == "window":
            mode = 0 if self.rate(view.now) >= self.threshold else 1
        else:  # re-evaluated at arrivals only: between them the mode stays
            if new:
                self.want_ = 0 if self.rate(view.now) >= self.threshold else 1
            mode = self.want_
        if mode == 0 and self.mode_ == 1 and self.handover == "budget" and \
                self._over_budget(view):
            mode = 1  # ours: DynShare first throttles what it admitted under the budget
        if view.queue_length == 0 and not (view.woken or due) and \
                not self.parts_[mode].call_on_empty_queue:
            return []  # called only for another component (see call_on_empty_queue)
        if self.mode_ is not None and mode != self.mode_:
            self.switches_ += 1
        self.mode_ = mode
        self.passes_[mode] += 1
        pview, pend = self.views_[mode], self.pending_[mode]
        pview.now = view.now
        pview.changed_ = Changes(*(tuple(items) for items in pend))
        for pending in pend:
            pending.clear()
        out = self.parts_[mode].dispatch(cast(View, pview))
        started = [d.job for d in out if type(d) is Start]
        self.starts_[mode] += len(started)
        self.pending_[1 - mode][3].extend(started)
        return out

    @staticmethod
    def _over_budget(view: View) -> bool:
        """Whether the measured power of the running jobs is above the cap now (False
        without a cap or without job power to measure)."""
        cap = view.cap
        if cap is None or view.job_power is None:
            return False
        return view.running_power() > cap * (1 + 1e-9)

    def run_facts(self) -> dict:
        parts = self.parts_
        if not parts:
            return {}
        return {**parts[1].run_facts(), **parts[0].run_facts(),
                "decrapl_high_passes": self.passes_[0], "decrapl_low_passes": self.passes_[1],
                "decrapl_high_starts": self.starts_[0], "decrapl_low_starts": self.starts_[1],
                "decrapl_switches": self.switches_}
