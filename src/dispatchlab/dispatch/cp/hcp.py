"""Hybrid CP dispatchers with OR-Tools CP-SAT: ``hcp`` (CPH / DEC without power) and
``hcp-online`` (HCP'). DEC itself (HCP with a power cumulative, Borghesi et al. 2018) is
:class:`dispatchlab.dispatch.cp.dec.DEC`, built on :meth:`HCP._hybrid_pass`.

**HCP** (``HCP()``, name ``hcp``; Galleguillos et al. 2017 "CPH", Borghesi et al. 2018 "DEC"
without the power
cumulative; as the authors' code). Each pass has two stages.

*Stage 1 (schedule, relaxed).* A CP-SAT model over the running jobs and the first
``q_length`` waiting jobs in ``model_order`` (``"queue"``: submit time then file order,
as the authors; ``"urgency"``: PRB urgency, ours); the other waiting jobs are postponed
to a later pass. Time origin 0 = now, seconds. A running job is a fixed interval
``[0, max(1, est_end - now))``; a waiting job an interval of ``max(1, estimate)``
seconds starting at ``s in [0, H]``, ``H`` = the sum of all these durations (the
worst-case makespan). Resources are *relaxed*: one ``AddCumulative`` per resource type
at the platform's summed capacity (demand = units x per-unit request; types no modelled
job uses are skipped). Objective (Borghesi et al. 2018 eq. 2 with the authors' integer weights):
minimise ``sum_i w_i (s_i + wait_i)``, ``w_i = floor(max_ewt * 10**5 / ewt_i)``,
``ewt_i`` the expected waiting time of the job's queue
(:func:`dispatchlab.platform.queues.job_ewt`), ``max_ewt`` the largest among the
modelled jobs, ``wait_i = now - submit_i``: the EWT-weighted waiting time, in which
jobs of queues expected to wait less weigh more.

*Reference plan.* The proactive PRB plan (PRB-urgency list schedule over future
events on the real nodes, :func:`dispatchlab.dispatch.prb.proactive_schedule`) is the
solver's hint (CP-SAT's counterpart of the authors' search that "starts from the PRB
solution") and the reference: when the solver finds no solution, or none *strictly*
better than PRB's plan under the same objective, PRB's plan is used.

*Stage 2 (allocation).* The jobs planned at 0 (now), in urgency order, are mapped on the
free nodes by the allocator (default ``consolidate``: fewest free resources first); a
job that does not map is postponed. *Feedback* (DEC's is not published; **ours**, the
authors' form is unpublished): for each start-now job that failed to map, add
``s_j >= r`` and re-solve (hint = the previous plan), then redo stage 2, at most
``feedback_rounds`` times or until every start-now job maps. ``hcp`` defaults to
``feedback_rounds=0``, as CPH is run by Galleguillos et al. 2017 (the authors' CPH code
solves once per pass, ``numberOfIterations = 1``); ``dec`` defaults to 3 (ours). A
re-solve without a solution keeps the previous mapping. ``r`` (:func:`first_release`) is
the first time free resources can grow (the first estimated end of a running job or of a
job mapped now), at least 1: the authors' ``s_j >= 1`` made tight, since before ``r``
node free resources only shrink, and ``s_j >= 1`` alone lets the relaxed plan park the
job at 1 s, when no pass happens. On counting platforms the model has one cumulative
(cores) and stage 2 cannot fail.

*Time limits* (2.3): a first round of ``time_limit`` seconds, doubled while no solution
is found, rounds stop once the limit would exceed ``max_time_limit``. The authors use
1 s doubling to "stop before 150 s" of wall time; our defaults are 0.1 and 15
*deterministic* seconds (the same ratio; ours: CP-SAT's deterministic second is not a
wall second, and with the authors' values a 1,000-job Eurora run took minutes).

*Shortcut* (ours, all CP dispatchers of this module): when the modelled jobs all fit the
free resources together (summed over nodes), "all start now" is the relaxed model's
optimum for both objectives (they grow with the start times, and running jobs only
release resources), so the solver is not called (status ``ALL_FIT``).

**HCP'** (``HCPOnline()``, name ``hcp-online``; Galleguillos et al., CP-based dispatching,
``hcp3_scheduler.py``,
as the authors' code). As HCP, with: the *fit-now filter* (only waiting jobs that fit the
free resources now are modelled, at most ``cur_q_length`` of them, taken in
``slowdown`` priority order: descending current slowdown, ties ascending demand); the
*slowdown objective* ``sum_i floor((s_i + wait_i + est_i) * 10**d / est_i)`` with the
predictor's estimates (``est = 0``: ``max(1, s_i + wait_i) * 10**d``; ``d = max(5,
digits of H)``); the *round control* (``time_limit`` doubling up to
``max_time_limit``, stop at a proven optimum or when the best objective is unchanged
over ``max_k`` = 2 rounds; the authors' 1 s -> 16 s of wall time, our defaults 0.1 ->
1.6 deterministic seconds: the same ratio, and a decision time p99 well under 1 s on
the 64-node Eurora machine; a pass that stops neither way is *unsolved* and
halves ``cur_q_length``, min 1; a solved pass resets it to ``q_length``); *no solution
-> nothing dispatched* (ours: except on an idle system, where no later event would
call the dispatcher again: there PRB's start-now jobs start); the *dispatch skip* (the
previous pass dispatched nothing, no job was submitted since, and no resource type has
less usage than then: return no decision without solving). The proactive PRB plan in
slowdown order is the hint and the logged reference (``prb_objective``), not a
fallback. Stage 2 as HCP, no feedback.

**Determinism.** One worker, ``seed`` as CP-SAT's ``random_seed`` and, with
``time_mode="deterministic"`` (default), limits in CP-SAT's *deterministic time*: two
runs give byte-identical schedules on any machine. ``time_mode="wall"`` uses wall-clock
limits like the authors (milliseconds in their code) and is **not reproducible**.
``hcp`` (and ``dec``) also take a *solver budget* (ours): ``conflicts``, CP-SAT's
conflict budget per solve (default None: 2,000 per deterministic second of the round's
limit, at least 100), and ``presolve`` (default true; off saves CP-SAT's fixed presolve
cost on these small models). Both are deterministic.

**Explain.** Every pass that reaches the solver, or skips it, appends a record to
``self.pass_log_`` (:func:`dispatchlab.dispatch.cp.common.pass_facts`): status,
objective (the solver's, before any fallback), PRB's objective, bound, modelled jobs,
solved, improved_on_prb, rounds (feedback re-solves included), hit_limit and
deterministic time. ``status`` is ``"SKIPPED"`` for a dispatch skip and ``"NO_FIT"``
when no modelled job fits now (*ours* for HCP: then no plan could start a job, so the
solver is not called; this changes no decision).

*Ours*, beyond the authors: a pass that starts nothing while no job runs asks for a
pass (``view.wake_at``) at its plan's first start; running jobs ending at the same time
are merged into one interval (the same cumulative constraint, fewer variables); the
slowdown scale ``d`` is lowered when the objective would approach CP-SAT's 64-bit
range; the solver plan of an HCP pass is only used when strictly better than PRB's.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

import numpy as np
from ortools.sat.python import cp_model

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Nested
from dispatchlab.dispatch.allocators import ALLOCATORS, Allocator, make_allocator, start_allocator
from dispatchlab.dispatch.base import Decision, Dispatcher, Start, View
from dispatchlab.dispatch.cp.common import (
    ModelSaver,
    OnlineControl,
    TimeControl,
    add_slowdown_objective,
    all_fit_now,
    check_choice,
    check_control_params,
    check_positive_int,
    check_solver_budget,
    fit_now_mask,
    improvement_share,
    next_queue_length,
    pass_facts,
    resource_usage,
    run_facts,
    slowdown_digits,
    slowdown_objective_value,
)
from dispatchlab.dispatch.orderings import OrderKeys, job_demand, make_ordering
from dispatchlab.dispatch.prb import PowerBudget, power_sum, proactive_schedule
from dispatchlab.platform.queues import job_ewt

MODEL_ORDERS: tuple[str, ...] = ("queue", "urgency")
#: the authors' integer-weight scale of the EWT objective (5 significant digits)
EWT_WEIGHT_SCALE = 10**5


class Candidates(NamedTuple):
    """The waiting jobs a pass models, in the dispatch (priority) order of stage 2.

    ``rows`` job rows; ``units``; ``estimate`` (the predictor's, s, may be 0);
    ``submit`` (s, trace origin); ``ewt`` (s); ``demand`` (job demand, float)."""

    rows: np.ndarray
    units: np.ndarray
    estimate: np.ndarray
    submit: np.ndarray
    ewt: np.ndarray
    demand: np.ndarray

    def take(self, positions: np.ndarray) -> Candidates:
        return Candidates(*(col[positions] for col in self))


class ModelPower(NamedTuple):
    """Power as one more cumulative of the relaxed model (DEC, Borghesi et al. 2018 section 4.3):
    ``running`` integer watts of each running job (aligned with ``view.running.jobs``),
    ``candidates`` integer watts of each candidate, ``capacity`` integer watts."""

    running: np.ndarray
    candidates: np.ndarray
    capacity: int


class PassPower(NamedTuple):
    """The power facts of one DEC pass: ``pred`` predicted watts of each candidate
    (float, candidate order), ``used`` the predicted power of the running jobs now (W),
    ``budget`` margin x cap (W), ``plan`` the reference plan's
    :class:`~dispatchlab.dispatch.prb.PowerBudget`, ``model`` the :class:`ModelPower`."""

    pred: np.ndarray
    used: float
    budget: float
    plan: Any
    model: ModelPower

    def take(self, positions: np.ndarray) -> PassPower:
        """The same facts for the candidates at ``positions``."""

        pred = self.pred[positions]
        return PassPower(pred, self.used, self.budget,
                         PowerBudget(pred, self.plan.budget, self.plan.running),
                         ModelPower(self.model.running, self.model.candidates[positions],
                                    self.model.capacity))


class RelaxedModel(NamedTuple):
    """A built stage-1 model: ``starts[k]`` is the start variable (offset from now) of
    candidate ``k``; ``horizon`` H in seconds; ``objective`` the integer expression."""

    model: cp_model.CpModel
    starts: list[cp_model.IntVar]
    horizon: int
    objective: Any


def planned_durations(estimate: np.ndarray) -> np.ndarray:
    """Planning durations ``max(estimate, 1)`` (int64 seconds)."""
    return np.maximum(np.asarray(estimate, dtype=np.int64), 1)


def build_relaxed_model(view: View, cand: Candidates, extra_horizon: int = 0,
                        power: ModelPower | None = None) -> RelaxedModel:
    """The relaxed scheduling model of the authors' HCP (stage 1) without objective.

    Running jobs: fixed intervals ``[0, max(1, est_end - now))`` (those with the same
    duration merged into one interval with the summed demand, ours); candidates:
    intervals of ``max(1, estimate)`` seconds, start in ``[0, H]`` with ``H`` = sum of
    all durations (+ ``extra_horizon`` when a reference plan starts later, ours). One
    cumulative per resource type at the summed platform capacity; a type that no
    modelled job (running or waiting) requests is skipped. On counting platforms the
    one resource is cores, demand = units. ``power`` (DEC) adds power as one more
    cumulative (integer watts; the same rules)."""
    now = view.now
    model = cp_model.CpModel()
    running = view.running
    run_dur = np.maximum(np.asarray(running.est_end, dtype=np.int64) - now, 1)
    dur = planned_durations(cand.estimate)
    horizon = int(run_dur.sum()) + int(dur.sum()) + int(extra_horizon)
    if view.counting:
        cap = np.array([int(view.platform.total_capacity()["core"])], dtype=np.int64)
        run_dem = np.asarray(running.units, dtype=np.int64)[:, None]
        cand_dem = np.asarray(cand.units, dtype=np.int64)[:, None]
    else:
        cap = np.asarray(view.capacity, dtype=np.int64).sum(axis=0)
        reqs = np.asarray(view.requests)
        run_jobs = np.asarray(running.jobs, dtype=np.int64)
        run_dem = np.asarray(running.units, dtype=np.int64)[:, None] * reqs[run_jobs]
        cand_dem = np.asarray(cand.units, dtype=np.int64)[:, None] * reqs[cand.rows]
    if power is not None:
        cap = np.append(cap, int(power.capacity))
        run_dem = np.column_stack([run_dem, np.asarray(power.running, dtype=np.int64)])
        cand_dem = np.column_stack([cand_dem, np.asarray(power.candidates, dtype=np.int64)])
    # running jobs: one fixed interval per distinct remaining duration
    fixed: list[tuple[Any, np.ndarray]] = []
    if len(run_dur):
        durs, inv = np.unique(run_dur, return_inverse=True)
        merged = np.zeros((len(durs), run_dem.shape[1]), dtype=np.int64)
        np.add.at(merged, np.asarray(inv).reshape(-1), run_dem)
        for k, d in enumerate(durs.tolist()):
            fixed.append((model.new_fixed_size_interval_var(0, d, f"run_{k}"), merged[k]))
    starts: list[cp_model.IntVar] = []
    intervals = []
    for k, d in enumerate(dur.tolist()):
        s = model.new_int_var(0, horizon, f"s_{k}")
        starts.append(s)
        intervals.append(model.new_fixed_size_interval_var(s, d, f"job_{k}"))
    for r in range(len(cap)):
        demand_r = cand_dem[:, r]
        fixed_r = [(iv, int(dem[r])) for iv, dem in fixed if dem[r] > 0]
        if not demand_r.any() and not fixed_r:
            continue
        ivs = [iv for iv, _ in fixed_r] + [iv for iv, q in
                                             zip(intervals, demand_r.tolist(), strict=True)
                                             if q > 0]
        dems = [q for _, q in fixed_r] + [q for q in demand_r.tolist() if q > 0]
        model.add_cumulative(ivs, dems, int(cap[r]))
    return RelaxedModel(model, starts, horizon, None)


def first_release(first_running_release: int | None, mapped_durations: np.ndarray) -> int:
    """The feedback bound of HCP (ours): the earliest offset at which free resources can
    grow after stage 2 - the first estimated end of a running job or the planned end of
    a job mapped now, whichever comes first; at least 1 (a job that failed to map cannot
    start now). Before it the free resources of every node only shrink, so a job that
    failed to map now cannot map earlier (given the jobs mapped now)."""
    ends = [int(d) for d in np.asarray(mapped_durations).tolist()]
    if first_running_release is not None:
        ends.append(int(first_running_release))
    return max(1, min(ends)) if ends else 1


def power_total(watts: np.ndarray) -> float:
    """The correctly rounded sum of ``watts`` (see :func:`dispatchlab.dispatch.prb.power_sum`)."""

    return power_sum(watts)


def ewt_weights(ewt: np.ndarray) -> np.ndarray:
    """The authors' integer weights ``floor(max_ewt * 10**5 / ewt_i)`` (int64)."""
    ewt = np.asarray(ewt, dtype=np.int64)
    if len(ewt) == 0:
        return ewt.copy()
    return (int(ewt.max()) * EWT_WEIGHT_SCALE) // ewt


def ewt_objective_value(offsets: np.ndarray, wait: np.ndarray, weights: np.ndarray) -> int:
    """``sum_i w_i (s_i + wait_i)`` for start ``offsets`` (seconds after now)."""
    return int(sum(int(w) * (int(s) + int(q)) for s, q, w in
                   zip(np.asarray(offsets).tolist(), np.asarray(wait).tolist(),
                       np.asarray(weights).tolist(), strict=True)))


class _HybridCP(Dispatcher):
    """Machinery shared by :class:`HCP` and :class:`HCPOnline` (not registered)."""

    call_on_empty_queue = False
    #: one record per pass in pass_log_ (:func:`~.common.pass_facts`)
    keeps_pass_log: ClassVar[bool] = True
    pass_log_: list[dict[str, Any]]

    allocator: str
    nested: ClassVar[Nested] = {"allocator": ALLOCATORS}
    default_ewt: int
    time_limit: float
    max_time_limit: float
    time_mode: str
    seed: int
    q_length: int
    #: ``hcp-online`` only (see :class:`~.common.ModelSaver`); off for the others
    save_models: str | None = None
    save_every: int = 1

    def validate(self) -> None:
        check_control_params(self.time_limit, self.max_time_limit, self.time_mode, self.seed)
        check_positive_int(self.q_length, "q_length")
        ModelSaver.check(self.save_models, self.save_every)
        if isinstance(self.default_ewt, bool) or not isinstance(
                self.default_ewt, int | np.integer) or self.default_ewt <= 0:
            raise InputError(f"must be an integer number of seconds > 0, got "
                             f"{self.default_ewt!r}", field="default_ewt")
        if not isinstance(self.allocator, str):
            raise InputError(f"an allocator is a name, got {self.allocator!r}",
                             field="allocator")

    def run_facts(self) -> dict:
        """``cp_*`` facts of the run from :attr:`pass_log_` (see
        :func:`dispatchlab.dispatch.cp.common.run_facts`)."""

        return run_facts(self.pass_log_)

    def start(self, view: View) -> None:

        self.validate()
        self.allocator_: Allocator = make_allocator(self.allocator)
        start_allocator(self.allocator_, view)
        self.ewt_: np.ndarray = job_ewt(view.jobs, view.platform, self.default_ewt)
        self.pass_log_ = []
        self.saver_ = ModelSaver(self.save_models, self.save_every, self.name)
        self.saver_.start()
        self.totals_: np.ndarray = np.asarray(view.capacity, dtype=np.int64).sum(axis=0) \
            if not view.counting else np.array(
                [int(view.platform.total_capacity()["core"])], dtype=np.int64)

    # --- helpers --------------------------------------------------------------
    def _candidates(self, view: View, rows: np.ndarray, units: np.ndarray,
                    estimate: np.ndarray, submit: np.ndarray) -> Candidates:
        if view.counting:
            reqs = np.ones((len(rows), 1), dtype=np.int64)
        else:
            reqs = np.asarray(view.requests)[rows]
        demand = job_demand(reqs, units, estimate, self.totals_)
        return Candidates(np.asarray(rows, dtype=np.int64), np.asarray(units, dtype=np.int64),
                          np.asarray(estimate, dtype=np.int64),
                          np.asarray(submit, dtype=np.int64), self.ewt_[rows], demand)

    @staticmethod
    def _ordered(cand: Candidates, now: int, ordering: str) -> Candidates:
        keys = OrderKeys(cand.rows, now, cand.submit, cand.estimate, cand.ewt, cand.demand)
        return cand.take(make_ordering(ordering).sort(keys))

    def _prb_offsets(self, view: View, cand: Candidates, ordering: str,
                     power: Any = None) -> np.ndarray:
        """The proactive PRB plan of the candidates (:func:`proactive_schedule` with
        ``ordering``, and the power budget ``power`` when given: LS's plan), as start
        offsets from now; -1 for a job the plan never places (one that does not fit the
        empty platform's nodes)."""

        plan = proactive_schedule(view, cand.rows, cand.estimate, make_ordering(ordering),
                                  self.allocator_, cand.ewt, cand.demand, power=power)
        starts = np.asarray(plan.starts, dtype=np.int64)
        return np.where(starts >= 0, starts - view.now, -1)

    @staticmethod
    def _hint(prb: np.ndarray) -> list[int | None]:
        """The PRB plan as a CP-SAT hint (unplaced jobs not hinted)."""
        return [int(x) if x >= 0 else None for x in prb.tolist()]

    def _map_now(self, view: View, cand: Candidates, offsets: np.ndarray,
                 power: PassPower | None = None
                 ) -> tuple[list[Decision], list[int], list[int]]:
        """Stage 2: the candidates planned at 0, in candidate order, mapped on the free
        resources; returns the decisions, the positions mapped and those that failed.
        With ``power`` (DEC) a job also fails unless the predicted power in use (running
        jobs and those mapped before it) plus its own stays within the budget: LS's
        check, in floating point, so DEC never starts what LS's check would refuse."""
        out: list[Decision] = []
        mapped: list[int] = []
        failed: list[int] = []
        now_pos = np.flatnonzero(np.asarray(offsets) == 0).tolist()
        if power is not None:
            used, budget = power.used, power.budget
            watts = power.pred.tolist()
        if view.counting:
            free = int(view.free_cores)
            for p in now_pos:
                u = int(cand.units[p])
                if power is not None and not used + watts[p] <= budget:
                    failed.append(p)
                elif u <= free:
                    free -= u
                    out.append(Start(int(cand.rows[p])))
                    mapped.append(p)
                    if power is not None:
                        used += watts[p]
                else:
                    failed.append(p)
            return out, mapped, failed
        free_m = np.array(view.free, dtype=np.int64, copy=True)
        reqs = view.requests
        for p in now_pos:
            job = int(cand.rows[p])
            if power is not None and not used + watts[p] <= budget:
                failed.append(p)
                continue
            alloc = self.allocator_.allocate(reqs[job], int(cand.units[p]), free_m)
            if alloc is None:
                failed.append(p)
                continue
            free_m[alloc.nodes] -= alloc.counts[:, None] * reqs[job][None, :]
            out.append(Start(job, alloc))
            mapped.append(p)
            if power is not None:
                used += watts[p]
        return out, mapped, failed

    @staticmethod
    def _keep_alive(view: View, decisions: list[Decision], offsets: np.ndarray) -> None:
        """Ours: when a pass starts nothing on an idle system (no running job), no event
        would ever call the dispatcher again; ask for a pass at the plan's first start."""
        if decisions or len(view.running.jobs):
            return
        later = np.asarray(offsets)[np.asarray(offsets) > 0]
        if len(later):
            view.wake_at(view.now + int(later.min()))

    def improvement_share(self) -> float:
        """Share of solver passes whose plan improved on PRB's (0.0 before a run)."""

        return improvement_share(self.pass_log_)


class HCP(_HybridCP):
    """Hybrid CP dispatcher (CPH / DEC without power): relaxed CP-SAT schedule with the
    EWT-weighted waiting-time objective, PRB reference plan, allocation of the start-now
    jobs, optional feedback re-solves (ours; ``feedback_rounds=0`` by default, as the
    authors run CPH). See the module docstring."""

    name = "hcp"

    def __init__(self, q_length: int = 100, model_order: str = "queue",
                 default_ewt: int = 1800, allocator: str = "consolidate",
                 time_limit: float = 0.1, max_time_limit: float = 15.0,
                 time_mode: str = "deterministic", seed: int = 0,
                 feedback_rounds: int = 0, conflicts: int | None = None,
                 presolve: bool = True) -> None:
        self.q_length = q_length
        self.model_order = model_order
        self.default_ewt = default_ewt
        self.allocator = allocator
        self.time_limit = time_limit
        self.max_time_limit = max_time_limit
        self.time_mode = time_mode
        self.seed = seed
        self.feedback_rounds = feedback_rounds
        self.conflicts = conflicts
        self.presolve = presolve

    def validate(self) -> None:
        super().validate()
        check_choice(self.model_order, "model_order", MODEL_ORDERS)
        check_positive_int(self.feedback_rounds, "feedback_rounds", minimum=0)
        check_solver_budget(self.conflicts, self.presolve)

    def start(self, view: View) -> None:
        super().start(view)
        self.control_ = TimeControl(self.time_limit, self.max_time_limit, self.time_mode,
                                    self.seed, stop="first", conflicts=self.conflicts,
                                    presolve=self.presolve)

    #: the ordering of the reference plan and of stage 2 (the authors' code: PRB urgency)
    priority: str = "urgency"

    def _modelled(self, view: View) -> Candidates:
        """The first ``q_length`` waiting jobs in ``model_order``, in :attr:`priority`
        order (``urgency`` for HCP)."""
        q = view.queue
        now = view.now
        if self.model_order == "queue":
            k = min(self.q_length, len(q.jobs))
            cand = self._candidates(view, q.jobs[:k], q.units[:k], q.estimate[:k],
                                    q.submit[:k])
        else:
            cand = self._candidates(view, q.jobs, q.units, q.estimate, q.submit)
            cand = self._ordered(cand, now, "urgency")
            cand = cand.take(np.arange(min(self.q_length, len(cand.rows))))
        return self._ordered(cand, now, self.priority)

    def dispatch(self, view: View) -> list[Decision]:
        if len(view.queue.jobs) == 0:
            return []
        return self._hybrid_pass(view, self._modelled(view))

    def _hybrid_pass(self, view: View, cand: Candidates,
                     power: PassPower | None = None) -> list[Decision]:
        """One pass over the candidates ``cand`` (in :attr:`priority` order): stage 1,
        the reference plan, stage 2 and the feedback (module docstring). ``power``
        (DEC): the power facts of the pass; every candidate's predicted power must be
        within the budget (others are left out by the caller)."""
        now = view.now
        fit_now = fit_now_mask(view, cand.rows, cand.units)
        if power is not None:
            fit_now &= power.used + power.pred <= power.budget
        if not fit_now.any():
            # ours: no modelled job can start now on any plan; skipping the solver
            # changes no decision
            self.pass_log_.append(pass_facts(now, None, modelled=len(cand.rows),
                                             status="NO_FIT"))
            return []
        if all_fit_now(view, cand.rows, cand.units) and (
                power is None or power.used + power_total(power.pred) <= power.budget):
            # ours: every modelled job fits now together, so "all start now" is the
            # model's optimum; only the mapping on nodes (stage 2) can postpone a job
            zeros = np.zeros(len(cand.rows), np.int64)
            decisions, _, _ = self._map_now(view, cand, zeros, power)
            self._keep_alive(view, decisions, zeros)
            self.pass_log_.append(pass_facts(now, None, modelled=len(cand.rows),
                                             status="ALL_FIT"))
            return decisions
        wait = now - cand.submit
        weights = ewt_weights(cand.ewt)
        prb = self._prb_offsets(view, cand, self.priority,
                                None if power is None else power.plan)
        complete = bool((prb >= 0).all())
        prb_obj = ewt_objective_value(prb, wait, weights) if complete else None
        model_power = None if power is None else power.model
        rm = build_relaxed_model(view, cand, power=model_power)
        extra = max(0, int(prb.max()) - rm.horizon)
        if extra:
            rm = build_relaxed_model(view, cand, extra_horizon=extra, power=model_power)
        objective = cp_model.LinearExpr.weighted_sum(rm.starts, weights.tolist()) \
            + int((weights * wait).sum())
        rm.model.minimize(objective)
        outcome = self.control_.solve(rm.model, rm.starts, self._hint(prb), objective)
        improved = outcome.objective is not None and (
            prb_obj is None or outcome.objective < prb_obj)
        plan = np.asarray(outcome.values, dtype=np.int64) if improved else prb
        decisions, mapped, failed = self._map_now(view, cand, plan, power)
        rounds, det_time = outcome.rounds, outcome.deterministic_time
        # feedback (ours; DEC's is not published): failed start-now jobs cannot start before
        # resources are released
        run_ends = np.asarray(view.running.est_end, dtype=np.int64) - now
        first_run_release = int(max(run_ends.min(), 1)) if len(run_ends) else None
        for _ in range(self.feedback_rounds):
            if not failed:
                break
            release = first_release(first_run_release,
                                    planned_durations(cand.estimate[mapped]))
            for p in failed:
                rm.model.add(rm.starts[p] >= release)
            again = self.control_.solve(rm.model, rm.starts, self._hint(plan), objective)
            rounds += again.rounds
            det_time += again.deterministic_time
            if again.values is None:
                break
            plan = np.asarray(again.values, dtype=np.int64)
            decisions, mapped, failed = self._map_now(view, cand, plan, power)
        self._keep_alive(view, decisions, plan)
        facts = pass_facts(now, outcome, modelled=len(cand.rows), prb_objective=prb_obj,
                           improved_on_prb=improved)
        facts["rounds"] = rounds
        facts["deterministic_time"] = det_time
        self.pass_log_.append(facts)
        return decisions


class HCPOnline(OnlineControl, _HybridCP):
    """HCP' (Galleguillos et al., CP-based dispatching): fit-now filter, slowdown
    priority and objective, round control with queue-length halving, dispatch skip. See
    the module docstring. ``save_models``
    / ``save_every``: write the model of every ``save_every``-th solve (with the PRB
    hint) and a JSON of the pass to that folder (off by default; see
    :class:`~.common.ModelSaver`)."""

    name = "hcp-online"

    def __init__(self, q_length: int = 100, default_ewt: int = 1800,
                 allocator: str = "consolidate", time_limit: float = 0.1,
                 max_time_limit: float = 1.6, max_k: int = 2,
                 time_mode: str = "deterministic", seed: int = 0,
                 save_models: str | None = None, save_every: int = 1) -> None:
        self.save_models = save_models
        self.save_every = save_every
        self.q_length = q_length
        self.default_ewt = default_ewt
        self.allocator = allocator
        self.time_limit = time_limit
        self.max_time_limit = max_time_limit
        self.max_k = max_k
        self.time_mode = time_mode
        self.seed = seed

    def dispatch(self, view: View) -> list[Decision]:
        q = view.queue
        if len(q.jobs) == 0:
            return []
        now = view.now
        usage = resource_usage(view)
        if self.skip_.should_skip(view, usage):
            self.pass_log_.append(pass_facts(now, None, modelled=0, status="SKIPPED"))
            return []
        cand = self._ordered(self._candidates(view, q.jobs, q.units, q.estimate, q.submit),
                             now, "slowdown")
        fits = np.flatnonzero(fit_now_mask(view, cand.rows, cand.units))
        cand = cand.take(fits[: self.cur_q_length_])
        if len(cand.rows) == 0:
            self.skip_.record(usage, 0)
            self.pass_log_.append(pass_facts(now, None, modelled=0, status="NO_FIT"))
            return []
        if all_fit_now(view, cand.rows, cand.units):
            # ours: they all fit now together: "all start now" is the model's optimum
            # (a solved pass); only the mapping on nodes can postpone a job
            zeros = np.zeros(len(cand.rows), np.int64)
            decisions: list[Decision]
            decisions, _, _ = self._map_now(view, cand, zeros)
            self._keep_alive(view, decisions, zeros)
            self.cur_q_length_ = next_queue_length(self.cur_q_length_, int(self.q_length),
                                                   True)
            self.skip_.record(usage, len(decisions))
            self.pass_log_.append(pass_facts(now, None, modelled=len(cand.rows),
                                             status="ALL_FIT"))
            return decisions
        wait = now - cand.submit
        prb = self._prb_offsets(view, cand, "slowdown")
        rm = build_relaxed_model(view, cand)
        extra = max(0, int(prb.max()) - rm.horizon)
        if extra:
            rm = build_relaxed_model(view, cand, extra_horizon=extra)
        digits = slowdown_digits(rm.horizon, wait.tolist(), cand.estimate.tolist())
        objective = add_slowdown_objective(rm.model, rm.starts, wait.tolist(),
                                           cand.estimate.tolist(), rm.horizon, digits)
        prb_obj = slowdown_objective_value(prb.tolist(), wait.tolist(),
                                           cand.estimate.tolist(), digits) \
            if (prb >= 0).all() else None
        hint = self._hint(prb)
        self.saver_.record(rm.model, rm.starts, hint, now=int(now), jobs=cand.rows.tolist())
        outcome = self.control_.solve(rm.model, rm.starts, hint, objective)
        self.cur_q_length_ = next_queue_length(self.cur_q_length_, int(self.q_length),
                                               outcome.solved)
        decisions = []
        if outcome.values is not None:
            plan = np.asarray(outcome.values, dtype=np.int64)
            decisions, _, _ = self._map_now(view, cand, plan)
            self._keep_alive(view, decisions, plan)
        elif len(view.running.jobs) == 0:
            # ours: no solution on an idle system; waiting would deadlock the run (no
            # later event), so PRB's start-now jobs start
            decisions, _, _ = self._map_now(view, cand, prb)
        self.skip_.record(usage, len(decisions))
        self.pass_log_.append(pass_facts(
            now, outcome, modelled=len(cand.rows), prb_objective=prb_obj,
            improved_on_prb=outcome.objective is not None and (
                prb_obj is None or outcome.objective < prb_obj)))
        return decisions
