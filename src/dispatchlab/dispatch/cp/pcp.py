"""Pure CP dispatchers with OR-Tools CP-SAT: ``pcp`` (Bartolini et al. CP 2014 as
re-implemented in ``cp_dispatchers/PCP``) and ``pcp-online`` (PCP', Galleguillos et al., CP-based
dispatching).

Unlike HCP (:mod:`.hcp`), one CP-SAT model decides both *when* each job starts and
*where* its units go: there is no separate mapping stage (the authors' ``PCP/pcp_scheduler.py``, in
our CP-SAT translation).

**The model** (one per pass; time origin 0 = the pass's ``now``, integer seconds).

* *Waiting jobs* (the "modelled" jobs, see each dispatcher): a start ``s_j`` and one
  fixed-size interval ``[s_j, s_j + d_j)``, ``d_j = max(1, estimate_j)`` (the planning
  duration of :mod:`dispatchlab.dispatch.profile`); ``s_j`` in ``[0, H - d_j]``.
* *Allocation*: for each (job, node) pair the job may use, an integer ``x_{j,n}`` in
  ``[0, b_{j,n}]`` = units of ``j`` on node ``n``, with ``sum_n x_{j,n} = units_j``.
  This replaces the authors' optional unit intervals and ``Alternative(job, units,
  k)``, which needs their patched OR-Tools 7.3 (stock alternatives select one
  interval); CP-SAT has no such constraint, so allocation is modelled with integers
  (our CP-SAT translation). The bound ``b_{j,n}`` is ``min(units_j, floor(capacity_n /
  request_j))`` (minimum over the requested resource types) on the nodes the job may
  use, 0 elsewhere (no variable).
* *Resources*: one ``AddCumulative`` per (node, resource type) over the job intervals
  with the affine demand ``x_{j,n} x request_{j,r}`` (0 when ``x_{j,n} = 0``), at the
  node's *total* capacity. *Running jobs* are fixed on their nodes: per node, a fixed
  interval ``[0, max(1, est_end - now))`` with demand = the units the job holds there x
  its per-unit request (running jobs of a node ending at the same time are merged into
  one interval, ours). A (node, type) pair no modelled job can use is skipped, and so
  is one whose capacity covers the largest possible load (ours: redundant).
* *Counting platforms* (``view.counting``): one pooled node of all cores, demand =
  units; starts carry no allocation.
* *Horizon* ``H`` (worst-case makespan, always feasible): with ``nodes="all"``, the
  longest remaining running duration + the sum of the modelled jobs' durations (after
  the last running job ends, the jobs in sequence each fit the empty platform; ours,
  tighter than the authors' sum over running jobs); with ``nodes="room"``, the sum of
  the modelled jobs' durations (each modelled job fits now and free room only grows as
  running jobs end). Either is raised when the PRB reference plan ends later.

Jobs whose start is 0 in the chosen plan are dispatched now, in model order, with the
allocation ``x_{j,n}`` of the plan; each is re-checked against ``view.free`` (minus the
starts before it in the pass) and postponed if it does not fit (cannot happen with a
correct view; kept as a guard). The other modelled jobs, and the jobs not modelled,
wait for a later pass.

**Which nodes** (``nodes``): ``"all"`` - every node the job's unit fits on when empty
(the authors' PCP); ``"room"`` - only the nodes where at least one unit of the job fits
*now* (the authors' PCP'). *What ``"room"`` implies for jobs planned later than now
(our choice, documented here)*: a plan may only put a later job on nodes that have
room for it now, so it cannot use a node that is full now and frees up later (e.g.
when a running job ends): the later part of the plan is *pessimistic* (such a job may be
planned later than it really could start, which inflates its objective term and may
tilt the start-now choice). The authors' unit alternatives were also capped by the room
now; with integer unit counts the cap costs nothing, so we bound by the node's
*capacity* (``b_{j,n} = min(units_j, floor(capacity_n / request_j))``) on the nodes with
room: a later job may use room that running jobs on those nodes free later. Start-now
jobs are exact either way: the cumulative at time 0 is the free room now. In
``"room"`` mode of ``pcp``, a job with no room now is left out of the pass (it could
not start now; ours). Because ``"room"`` restricts the plan, its optimum can be worse
than the value of PRB's plan (which may use any node later): on a 150-job Eurora-like
run ``pcp-online`` never logged ``improved_on_prb`` with ``"room"`` and matched or beat
PRB on every solved pass with ``"all"``; ``"all"`` costs one unit count per node per
job instead of one per node with room.

**Objectives** (integers, CP-SAT; ``d`` digits of scale):

* ``pcp``: EWT-normalised tardiness ``sum_j max(0, floor((s_j + wait_j - ewt_j) *
  10**d / ewt_j))`` (as the authors' code), ``wait_j = now - submit_j``, ``ewt_j`` the
  expected waiting time of the job's queue (:func:`dispatchlab.platform.queues.job_ewt`,
  ``default_ewt`` for a queue not in the platform's table). Posted exactly: a floor
  variable ``f_j`` with ``ewt_j f_j <= 10**d (s_j + wait_j - ewt_j) <= ewt_j f_j +
  ewt_j - 1`` and ``t_j = max(f_j, 0)`` (``AddMaxEquality``). ``d`` = 5 significant
  digits (ours, as the 5-digit weights of HCP; the authors' PCP value is not
  published), lowered (ours) while the number of modelled jobs x the largest possible
  term ``(H + wait_j) * 10**d / ewt_j`` reaches :data:`~.common.OBJECTIVE_CAP`
  (``2**60``), so every coefficient, bound and sum stays inside CP-SAT's int64 range.
  Jobs whose term is 0 on the whole horizon (``H + wait_j <= ewt_j``) add no variable.
* ``pcp-online``: HCP''s slowdown objective with the predictor's estimates
  (:func:`~.common.add_slowdown_objective`, ``d = max(5, digits of H)`` lowered by
  :func:`~.common.slowdown_digits`).

**Reference plan.** The proactive PRB plan (:func:`dispatchlab.dispatch.prb.
proactive_schedule`; ``pcp``: urgency order, ``pcp-online``: slowdown order; the
``allocator``, default ``consolidate``) of the modelled jobs is the solver's hint:
starts, and the allocation of every planned job (replayed by :func:`prb_allocations`,
since the plan returns only the start-now ones), made feasible in the model by
:func:`feasible_hint`: with ``nodes="room"`` PRB may plan a later job on a node outside
the room set, an allocation the model cannot express (before this repair the hint lost
those units and was infeasible in every sampled pass of a Lublin/Eurora run); such a job
is moved to the earliest time its room nodes can hold it. With ``nodes="all"`` PRB's
plan is feasible and is the hint unchanged. In ``pcp`` the reference is also the *fallback*:
when the solver finds no plan strictly better than PRB's under the same objective,
PRB's start-now jobs are dispatched (as ``hcp``). In ``pcp-online`` (as ``hcp-online``)
it is only the hint and the logged reference; no solution -> nothing dispatched.
When the PRB plan starts *every* modelled job now it is optimal (both objectives are
non-decreasing in each start), so the solver is not called and PRB's plan is dispatched
(ours, ``status="PRB_OPTIMAL"``: in ``pcp`` this changes no decision, in ``pcp-online``
it takes PRB's allocation rather than one of the solver's equally good ones; on light
loads it saves most solves).

**PCP** (``PCP()``, name ``pcp``). Models the first ``q_length`` (100) waiting jobs in
queue order (submit time, then file order; the authors'): the oldest jobs are the ones
the tardiness objective weighs most, and the cap bounds the model (one start, one
interval and up to one unit count per node for each job); the rest wait for a later
pass. All running jobs are modelled (on the modelled nodes), since they fix the free
room over time. Time control (the authors' code: "60 s doubling to 125 s while no job
dispatched"): rounds of ``time_limit`` doubled up to ``max_time_limit`` (defaults 0.1
and 0.2 deterministic seconds: the authors' 60 s / 125 s ratio, ours scaled down), stopping
after a round that proves the optimum or infeasibility, or whose best plan starts a job
now. When no modelled job fits now, no plan can start one, so the solver is not called
(``NO_FIT``; changes no decision).

**PCP'** (``PCPOnline()``, name ``pcp-online``; the authors' ``pcp3``). As PCP with
HCP''s *fit-now filter* (only waiting jobs that fit the free resources now, at most
``cur_q_length`` of them in ``slowdown`` priority order: descending current slowdown,
ties ascending job demand), the *slowdown objective*, the *round control* (0.1 doubling
to 1.6 deterministic seconds, ours, as ``hcp-online``; stop at a proven optimum or when
the best objective is unchanged over ``max_k`` = 2 rounds; an unsolved pass halves
``cur_q_length``, min 1; a solved pass resets it to ``q_length``), the *dispatch skip*
(the previous pass dispatched nothing, no job was submitted since and no resource type
has less usage: no decision, no solve) and ``nodes="room"`` by default.

**PCP' pooled model (ours;** ``pcp-online``'s ``model="pooled"``, :func:`build_pooled_model`).
Motivated by the paper's remark that the new PCP "currently focuses only on the
scheduling problem" (its future work: include allocation in the search). Start times
``s_j`` of fixed-length intervals; the future is one cumulative per resource type over
the modelled capacity (all nodes), running jobs as fixed intervals from 0 (one per node
type and resource with a unit count per job x type, the finer form, is
``build_pooled_model(by_type=True)``; not used: CP-SAT found no solution on 16-job
Eurora passes in 3 s with it, against the optimum in 0.17 s without); a literal
``now_j <=> s_j = 0``; an exact node packing only for the jobs that start now
(``x_{j,n} <= min(u_j, floor(free_n / req_j)) * now_j``, ``sum_n x_{j,n} = u_j now_j``,
``sum_j req_{j,r} x_{j,n} <= free_{n,r}``); the same slowdown objective and round
control; hint = PRB's start times (no allocation: the model has none for later jobs).
The start-now jobs are dispatched with the ``x_{j,n}`` of the plan. Jobs planned later
are placed on pooled capacity only, so their starts are optimistic (the node model's
are pessimistic with ``nodes="room"``); only start-now decisions are ever carried out.
The default ``model="nodes"`` is the authors' form (unit counts per node, ``nodes``):
with the repaired hint it runs the 1,000-job Lublin/Eurora workload (``benchmarks/
bench_cp.py``, history predictor, default limits) to the end in 37 s (decision p99
0.22 s, mean slowdown 13.2); the pooled model in 31 s (p99 0.41 s, mean slowdown 11.5).

**Determinism.** One worker, ``seed`` as CP-SAT's ``random_seed`` and, with
``time_mode="deterministic"`` (default), limits in CP-SAT deterministic time: two runs
give identical schedules on any machine. ``time_mode="wall"`` uses wall-clock seconds
(as the authors) and is **not reproducible**.

**Saved models.** ``save_models="DIR"`` (with ``save_every=N``, default 1) writes the
model of every N-th solve (solves 0, N, 2N, ... of the run) to ``DIR``: the CP-SAT model
as protobuf text with the hint, and a JSON of the pass (``now``, the modelled ``jobs``,
the modelled ``nodes``, ``horizon``, ``hint_feasible``: whether the hint satisfies every
constraint); see :class:`~.common.ModelSaver`. Off by default; saving never changes a
schedule.

**Explain.** Every pass that reaches the solver, or skips it, appends
:func:`~.common.pass_facts` to ``self.pass_log_``: ``objective`` is the solver's own
best (before any fallback), ``prb_objective`` the reference plan's; ``status``
``"SKIPPED"`` / ``"NO_FIT"`` / ``"PRB_OPTIMAL"`` when no solver ran.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple, cast

import numpy as np
from ortools.sat.python import cp_model

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Nested
from dispatchlab.dispatch.allocators import (
    ALLOCATORS,
    Allocator,
    make_allocator,
    start_allocator,
    units_per_node,
)
from dispatchlab.dispatch.base import Allocation, Decision, Dispatcher, Start, View
from dispatchlab.dispatch.cp.common import (
    OBJECTIVE_CAP,
    ModelSaver,
    OnlineControl,
    SolveOutcome,
    TimeControl,
    add_slowdown_objective,
    check_choice,
    check_control_params,
    check_positive_int,
    fit_now_mask,
    hint_extends,
    improvement_share,
    next_queue_length,
    pass_facts,
    resource_usage,
    run_facts,
    slowdown_digits,
    slowdown_objective_value,
)
from dispatchlab.dispatch.orderings import Ordering, OrderKeys, job_demand, make_ordering
from dispatchlab.dispatch.prb import proactive_schedule
from dispatchlab.dispatch.profile import NodeProfile
from dispatchlab.platform.queues import job_ewt

#: accepted values of the ``nodes`` parameter (see the module docstring)
NODE_MODES: tuple[str, ...] = ("all", "room")
#: accepted values of ``pcp-online``'s ``model`` parameter (see the module docstring)
MODEL_FORMS: tuple[str, ...] = ("nodes", "pooled")
#: significant digits of the tardiness objective before the int64 guard (ours)
TARDINESS_DIGITS = 5


# --- the planning problem, independent of the view ---------------------------------
class PlanProblem(NamedTuple):
    """One pass's planning problem (time origin 0 = now, integer seconds).

    ``capacity``: total capacity of the modelled nodes (N x R, int64); ``run_node``,
    ``run_duration``, ``run_usage``: one entry per (running job, node) it holds -
    the node (index into ``capacity``), the remaining duration (>= 1 s) and the
    resources held there (k x R); ``units``, ``requests`` (m x R per unit),
    ``durations`` (planned, >= 1 s) of the m modelled waiting jobs; ``bounds`` (m x N):
    the most units job ``j`` may put on node ``n`` (0 = not allowed); ``horizon`` H:
    every job must end by H."""

    capacity: np.ndarray
    run_node: np.ndarray
    run_duration: np.ndarray
    run_usage: np.ndarray
    units: np.ndarray
    requests: np.ndarray
    durations: np.ndarray
    bounds: np.ndarray
    horizon: int


class PlanModel(NamedTuple):
    """A built model: ``starts[j]`` the start variable of job ``j``; ``counts[j]`` the
    list of ``(node, x_{j,node})`` pairs; ``variables`` = starts, then every count in
    job then node order (the order of :meth:`values_to_plan`)."""

    model: cp_model.CpModel
    starts: list[cp_model.IntVar]
    counts: list[list[tuple[int, cp_model.IntVar]]]
    variables: list[cp_model.IntVar]

    def values_to_plan(self, values: tuple[int, ...] | list[int],
                       n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
        """Split solver values into start offsets (m,) and unit counts (m x N)."""
        m = len(self.starts)
        offsets = np.asarray(values[:m], dtype=np.int64)
        units = np.zeros((m, n_nodes), dtype=np.int64)
        k = m
        for j, pairs in enumerate(self.counts):
            for n, _ in pairs:
                units[j, n] = int(values[k])
                k += 1
        return offsets, units

    def plan_to_values(self, offsets: np.ndarray, units: np.ndarray) -> list[int]:
        """The inverse of :meth:`values_to_plan` (for hints)."""
        out = [int(s) for s in np.asarray(offsets).tolist()]
        for j, pairs in enumerate(self.counts):
            out.extend(int(units[j, n]) for n, _ in pairs)
        return out


def build_plan_model(problem: PlanProblem) -> PlanModel:
    """The PCP model of ``problem`` without objective (see the module docstring)."""
    model = cp_model.CpModel()
    cap = np.asarray(problem.capacity, dtype=np.int64)
    n_nodes, n_res = cap.shape
    horizon = int(problem.horizon)
    starts: list[cp_model.IntVar] = []
    intervals = []
    counts: list[list[tuple[int, cp_model.IntVar]]] = []
    variables: list[cp_model.IntVar] = []
    for j, (d, u) in enumerate(zip(problem.durations.tolist(), problem.units.tolist(),
                                   strict=True)):
        s = model.new_int_var(0, max(horizon - d, 0), f"s_{j}")
        starts.append(s)
        intervals.append(model.new_fixed_size_interval_var(s, d, f"job_{j}"))
        pairs = []
        for n in np.flatnonzero(problem.bounds[j] > 0).tolist():
            pairs.append((n, model.new_int_var(0, int(problem.bounds[j, n]), f"x_{j}_{n}")))
        model.add(sum(x for _, x in pairs) == u)
        counts.append(pairs)
    variables.extend(starts)
    for pairs in counts:
        variables.extend(x for _, x in pairs)
    # running jobs: per node, one fixed interval per distinct remaining duration
    fixed: dict[int, list[tuple[Any, np.ndarray]]] = {}
    run_node = np.asarray(problem.run_node, dtype=np.int64)
    run_dur = np.asarray(problem.run_duration, dtype=np.int64)
    run_use = np.asarray(problem.run_usage, dtype=np.int64).reshape(len(run_node), n_res)
    for n in np.unique(run_node).tolist():
        here = run_node == n
        durs, inv = np.unique(run_dur[here], return_inverse=True)
        merged = np.zeros((len(durs), n_res), dtype=np.int64)
        np.add.at(merged, np.asarray(inv).reshape(-1), run_use[here])
        fixed[n] = [(model.new_fixed_size_interval_var(0, int(d), f"run_{n}_{k}"), merged[k])
                    for k, d in enumerate(durs.tolist())]
    reqs = np.asarray(problem.requests, dtype=np.int64)
    users_of: list[list[tuple[int, cp_model.IntVar]]] = [[] for _ in range(n_nodes)]
    for j, pairs in enumerate(counts):
        for n, x in pairs:
            users_of[n].append((j, x))
    for n, users in enumerate(users_of):
        if not users:
            continue
        for r in range(n_res):
            jobs_r = [(j, x) for j, x in users if reqs[j, r] > 0]
            if not jobs_r:
                continue
            fixed_r = [(iv, int(use[r])) for iv, use in fixed.get(n, []) if use[r] > 0]
            most = sum(int(problem.bounds[j, n]) * int(reqs[j, r]) for j, _ in jobs_r) \
                + sum(q for _, q in fixed_r)
            if most <= int(cap[n, r]):
                continue  # ours: the constraint could never bind
            ivs = [iv for iv, _ in fixed_r] + [intervals[j] for j, _ in jobs_r]
            dems = [q for _, q in fixed_r] + [x * int(reqs[j, r]) for j, x in jobs_r]
            model.add_cumulative(ivs, dems, int(cap[n, r]))
    return PlanModel(model, starts, counts, variables)


def plan_is_feasible(problem: PlanProblem, offsets: np.ndarray, units: np.ndarray) -> bool:
    """Whether a plan (start offsets, unit counts m x N) satisfies every constraint of
    the model: bounds, unit sums, horizon and per-node capacity at every time (checked
    at every start, where load only rises). For tests and debugging."""
    offsets = np.asarray(offsets, dtype=np.int64)
    units = np.asarray(units, dtype=np.int64)
    if (offsets < 0).any() or (offsets + problem.durations > problem.horizon).any():
        return False
    if (units < 0).any() or (units > problem.bounds).any():
        return False
    if not np.array_equal(units.sum(axis=1), problem.units):
        return False
    cap = problem.capacity
    points = sorted({0, *offsets.tolist()})
    for t in points:
        load = np.zeros_like(cap)
        for k in range(len(problem.run_node)):
            if t < problem.run_duration[k]:
                load[problem.run_node[k]] += problem.run_usage[k]
        for j in range(len(offsets)):
            if offsets[j] <= t < offsets[j] + problem.durations[j]:
                load += units[j][:, None] * problem.requests[j][None, :]
        if (load > cap).any():
            return False
    return True


def feasible_hint(problem: PlanProblem, offsets: np.ndarray,
                  units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A plan of ``problem`` that satisfies every constraint but the horizon, built from a
    reference plan (start ``offsets``, -1 unplaced; unit counts m x N on the modelled
    nodes): the hint of the pure CP dispatchers.

    Jobs are taken in the reference's start order (unplaced last, ties model order).
    A job keeps its reference start and allocation when that allocation is allowed
    (within ``bounds``, ``units_j`` units) and fits beside the running jobs and the jobs
    already taken; otherwise (ours) it is placed at the earliest time (0 or the end of a
    running or taken job) at which the modelled nodes it may use have room for its
    units during its whole duration, its units put greedily on the nodes with the most
    room (ties: node order). A feasible reference plan is returned unchanged. Such a
    time always exists: after every other job has ended, a job fits the nodes it may
    use (``nodes="all"``: it fits the empty nodes; ``"room"``: it fits their free room
    now, and their capacity is at least that). The reference is infeasible where the
    model is narrower than PRB: with ``nodes="room"`` PRB may put a later job on a node
    outside the room set, whose units the model cannot express. The caller raises the
    horizon to the plan's end."""
    cap = np.asarray(problem.capacity, dtype=np.int64)
    n_nodes, n_res = cap.shape
    m = len(problem.units)
    reqs = np.asarray(problem.requests, dtype=np.int64).reshape(m, n_res)
    durs = np.asarray(problem.durations, dtype=np.int64)
    bounds = np.asarray(problem.bounds, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    units = np.asarray(units, dtype=np.int64).reshape(m, n_nodes)
    # load changes: (time, node-by-resource delta); running jobs from 0
    times: list[int] = [0]
    deltas: list[np.ndarray] = [np.zeros((n_nodes, n_res), dtype=np.int64)]
    run_use = np.asarray(problem.run_usage, dtype=np.int64).reshape(-1, n_res)
    for n, d, use in zip(np.asarray(problem.run_node).tolist(),
                         np.asarray(problem.run_duration).tolist(), run_use, strict=True):
        delta = np.zeros((n_nodes, n_res), dtype=np.int64)
        delta[n] = use
        times.extend((0, int(d)))
        deltas.extend((delta, -delta))
    out_off = np.zeros(m, dtype=np.int64)
    out_units = np.zeros((m, n_nodes), dtype=np.int64)
    order = sorted(range(m), key=lambda j: (offsets[j] < 0, int(offsets[j]), j))
    for j in order:
        t_arr = np.asarray(times, dtype=np.int64)
        points, inv = np.unique(t_arr, return_inverse=True)
        step = np.zeros((len(points), n_nodes, n_res), dtype=np.int64)
        np.add.at(step, np.asarray(inv).reshape(-1), np.asarray(deltas))
        load = np.cumsum(step, axis=0)  # load on [points[k], points[k + 1])
        d = int(durs[j])

        def room(t: int, points=points, load=load, d=d) -> np.ndarray:
            lo = int(np.searchsorted(points, t, side="right")) - 1
            hi = int(np.searchsorted(points, t + d, side="left"))
            return cap - load[max(lo, 0):max(hi, lo + 1)].max(axis=0)

        need = reqs[j]
        chosen: tuple[int, np.ndarray] | None = None
        ref = units[j]
        if offsets[j] >= 0 and int(ref.sum()) == int(problem.units[j]) \
                and (ref <= bounds[j]).all() \
                and (ref[:, None] * need[None, :] <= room(int(offsets[j]))).all():
            chosen = (int(offsets[j]), ref.copy())
        else:
            for t in points.tolist():
                free = room(int(t))
                k = bounds[j].copy()
                for r in np.flatnonzero(need > 0).tolist():
                    k = np.minimum(k, np.maximum(free[:, r], 0) // need[r])
                if int(k.sum()) < int(problem.units[j]):
                    continue
                alloc = np.zeros(n_nodes, dtype=np.int64)
                left = int(problem.units[j])
                # the nodes by decreasing units that fit there, then by node
                for n in np.lexsort((np.arange(n_nodes), -k)).tolist():
                    take = min(left, int(k[n]))
                    alloc[n] = take
                    left -= take
                    if left == 0:
                        break
                chosen = (int(t), alloc)
                break
        assert chosen is not None, "a job that fits its nodes always has a start"
        t0, alloc = chosen
        out_off[j] = t0
        out_units[j] = alloc
        use = alloc[:, None] * need[None, :]
        times.extend((t0, t0 + d))
        deltas.extend((use, -use))
    return out_off, out_units


def build_pooled_model(problem: PlanProblem, free: np.ndarray,
                       by_type: bool = False) -> PlanModel:
    """The pooled model of ``pcp-online`` (``model="pooled"``, ours; see the module
    docstring) without objective. ``problem`` is the ``nodes="all"`` problem and
    ``free`` the free resources now of its modelled nodes (N x R).

    Per job: a start ``s_j`` of a fixed-size interval, a literal ``now_j <=> s_j = 0``.
    The future: one cumulative per resource type at the modelled nodes' summed
    capacity, demand ``units_j x request_j``, the running jobs as fixed intervals from 0
    (``by_type=False``, the default). ``by_type=True`` is the finer form the issue
    proposed: node types = distinct capacity rows, one cumulative per (type, resource)
    at the type's summed capacity, and a unit count ``y_{j,t}`` per job and type
    (``sum_t y_{j,t} = units_j``, at most the units the type's nodes hold) carrying
    the demand. Not the default (measured, ours): on 16-job passes of the Lublin/Eurora
    run (2 node types) CP-SAT found no solution in 3 s of wall time with it, and proved
    the optimum in 0.17 s without it (variable cumulative demands propagate weakly).
    The exact packing is posted only for now: ``x_{j,n} <= min(units_j,
    floor(free_n / request_j)) * now_j``, ``sum_n x_{j,n} = units_j * now_j``,
    ``sum_j request_{j,r} x_{j,n} <= free_{n,r}``, and (``by_type``) ``y_{j,t} =
    sum_{n in t} x_{j,n}`` when ``now_j``. ``counts`` of the result
    are the ``x_{j,n}``: the allocation of the jobs that start now."""
    model = cp_model.CpModel()
    cap = np.asarray(problem.capacity, dtype=np.int64)
    free = np.asarray(free, dtype=np.int64).reshape(cap.shape)
    n_nodes, n_res = cap.shape
    horizon = int(problem.horizon)
    if by_type:
        kinds, type_of = np.unique(cap, axis=0, return_inverse=True)
        type_of = np.asarray(type_of).reshape(-1)
        n_types = len(kinds)
    else:
        type_of = np.zeros(n_nodes, dtype=np.int64)
        n_types = 1
    reqs = np.asarray(problem.requests, dtype=np.int64).reshape(-1, n_res)
    starts: list[cp_model.IntVar] = []
    intervals = []
    counts: list[list[tuple[int, cp_model.IntVar]]] = []
    per_type: list[list[Any]] = []  # per job: the units on each type (var or int)
    bounds_now: list[list[int]] = []  # per job: the upper bound of each x_{j,n}
    for j, (d, u) in enumerate(zip(problem.durations.tolist(), problem.units.tolist(),
                                   strict=True)):
        s = model.new_int_var(0, max(horizon - d, 0), f"s_{j}")
        now = model.new_bool_var(f"now_{j}")
        model.add(s == 0).only_enforce_if(now)
        model.add(s >= 1).only_enforce_if(~now)
        starts.append(s)
        intervals.append(model.new_fixed_size_interval_var(s, d, f"job_{j}"))
        if n_types == 1:
            per_type.append([int(u)])
        else:
            ys = []
            for t in range(n_types):
                most = min(int(u), int(problem.bounds[j][type_of == t].sum()))
                ys.append(model.new_int_var(0, most, f"y_{j}_{t}"))
            model.add(sum(ys) == u)
            per_type.append(ys)
        room = np.minimum(problem.bounds[j], int(u))
        for r in np.flatnonzero(reqs[j] > 0).tolist():
            room = np.minimum(room, np.maximum(free[:, r], 0) // reqs[j, r])
        pairs = []
        for n in np.flatnonzero(room > 0).tolist():
            x = model.new_int_var(0, int(room[n]), f"x_{j}_{n}")
            model.add(x <= int(room[n]) * now)
            pairs.append((n, x))
        bounds_now.append([int(room[n]) for n, _ in pairs])
        model.add(sum(x for _, x in pairs) == u * now)
        if n_types > 1:
            for t in range(n_types):
                model.add(per_type[j][t] == sum(x for n, x in pairs if type_of[n] == t)) \
                    .only_enforce_if(now)
        counts.append(pairs)
    variables: list[cp_model.IntVar] = list(starts)
    for pairs in counts:
        variables.extend(x for _, x in pairs)
    # the future: one cumulative per (type, resource), running jobs fixed from 0
    run_node = np.asarray(problem.run_node, dtype=np.int64)
    run_dur = np.asarray(problem.run_duration, dtype=np.int64)
    run_use = np.asarray(problem.run_usage, dtype=np.int64).reshape(len(run_node), n_res)
    for t in range(n_types):
        here = type_of[run_node] == t if len(run_node) else np.zeros(0, dtype=bool)
        durs, inv = np.unique(run_dur[here], return_inverse=True)
        merged = np.zeros((len(durs), n_res), dtype=np.int64)
        np.add.at(merged, np.asarray(inv).reshape(-1), run_use[here])
        fixed = [(model.new_fixed_size_interval_var(0, int(d), f"run_{t}_{k}"), merged[k])
                 for k, d in enumerate(durs.tolist())]
        for r in range(n_res):
            capacity = int(cap[type_of == t, r].sum())
            jobs_r = [j for j in range(len(starts)) if reqs[j, r] > 0]
            fixed_r = [(iv, int(q[r])) for iv, q in fixed if q[r] > 0]
            if not jobs_r:
                continue
            most = sum(int(problem.units[j]) * int(reqs[j, r]) for j in jobs_r) \
                + sum(q for _, q in fixed_r)
            if most <= capacity:
                continue  # the constraint could never bind
            ivs = [iv for iv, _ in fixed_r] + [intervals[j] for j in jobs_r]
            dems = [q for _, q in fixed_r] + [per_type[j][t] * int(reqs[j, r])
                                              for j in jobs_r]
            model.add_cumulative(ivs, dems, capacity)
    # now: the exact packing of the start-now jobs on the free room
    users_of: list[list[tuple[int, cp_model.IntVar, int]]] = [[] for _ in range(n_nodes)]
    for j, (pairs, ubs) in enumerate(zip(counts, bounds_now, strict=True)):
        for (n, x), ub in zip(pairs, ubs, strict=True):
            users_of[n].append((j, x, ub))
    for n, users in enumerate(users_of):
        for r in range(n_res):
            terms = [(x, int(reqs[j, r]), ub) for j, x, ub in users if reqs[j, r] > 0]
            if sum(q * ub for _, q, ub in terms) > int(free[n, r]):
                model.add(sum(q * x for x, q, _ in terms) <= int(free[n, r]))
    return PlanModel(model, starts, counts, variables)


# --- the tardiness objective of PCP -------------------------------------------------
def tardiness_digits(horizon: int, wait: list[int], ewt: list[int],
                     significant: int = TARDINESS_DIGITS) -> int:
    """The scale exponent ``d`` of the tardiness objective: ``significant`` (5), lowered
    (ours) while the number of jobs x the largest possible term ``(horizon + wait) *
    10**d // ewt``, or the largest floor constraint side ``(horizon + wait + ewt) *
    10**d``, reaches :data:`~.common.OBJECTIVE_CAP` (``2**60``)."""
    d = int(significant)
    n = max(len(wait), 1)
    while d > 0:
        scale = 10**d
        worst = max(((int(horizon) + int(w)) * scale // int(e)
                     for w, e in zip(wait, ewt, strict=True)), default=0)
        side = max(((int(horizon) + int(w) + int(e)) * scale
                    for w, e in zip(wait, ewt, strict=True)), default=0)
        if (worst + 1) * n < OBJECTIVE_CAP and side < OBJECTIVE_CAP:
            break
        d -= 1
    return d


def add_tardiness_objective(model: cp_model.CpModel, starts: list[Any], wait: list[int],
                            ewt: list[int], horizon: int, digits: int) -> Any:
    """Post PCP's objective ``sum_j max(0, floor((s_j + wait_j - ewt_j) * 10**digits /
    ewt_j))`` and ``Minimize`` it; returns the objective expression (exact for every
    solution, not only the optimum: the floor is two-sided and the max an
    ``AddMaxEquality``). ``starts`` in [0, horizon], ``wait`` = now - submit (s, >= 0),
    ``ewt`` > 0 seconds."""
    scale = 10**digits
    terms = []
    for k, (s, w, e) in enumerate(zip(starts, wait, ewt, strict=True)):
        w, e = int(w), int(e)
        top = (int(horizon) + w - e) * scale // e
        if top <= 0:
            continue  # never tardy within the horizon: the term is 0
        low = (w - e) * scale // e  # the value at s = 0 (>= -scale)
        f = model.new_int_var(min(low, 0), top, f"late_{k}")
        numer = scale * s + scale * (w - e)
        model.add(e * f <= numer)
        model.add(numer <= e * f + (e - 1))
        t = model.new_int_var(0, top, f"tard_{k}")
        model.add_max_equality(t, [f, 0])
        terms.append(t)
    objective = cp_model.LinearExpr.sum(terms)
    model.minimize(objective)
    return objective


def tardiness_objective_value(offsets: list[int], wait: list[int], ewt: list[int],
                              digits: int) -> int:
    """The value of :func:`add_tardiness_objective`'s objective for start ``offsets``
    (seconds after now), exactly (Python integers; floor division rounds down)."""
    scale = 10**digits
    return sum(max(0, (int(s) + int(w) - int(e)) * scale // int(e))
               for s, w, e in zip(offsets, wait, ewt, strict=True))


# --- the dispatchers --------------------------------------------------------------
class Candidates(NamedTuple):
    """The waiting jobs a pass models, in model order (the dispatch order of the
    start-now jobs). ``rows``; ``units``; ``estimate`` (the predictor's, s, may be 0);
    ``submit`` (s, trace origin); ``ewt`` (s); ``demand`` (job demand, float)."""

    rows: np.ndarray
    units: np.ndarray
    estimate: np.ndarray
    submit: np.ndarray
    ewt: np.ndarray
    demand: np.ndarray

    def take(self, positions: np.ndarray) -> Candidates:
        return Candidates(*(col[positions] for col in self))


def prb_allocations(view: View, cand: Candidates, offsets: np.ndarray,
                    ordering: Ordering, allocator: Allocator) -> list[Allocation | None]:
    """The allocation of every job of a proactive PRB plan (start ``offsets`` from now,
    aligned with ``cand``), replayed: :func:`~dispatchlab.dispatch.prb.proactive_schedule`
    returns only the start-now allocations. Walking the plan's start times in order, the
    jobs placed at each time, sorted by ``ordering`` with keys at that time, are
    allocated on the same profile windows; jobs the plan skipped there never changed
    the profile, so the allocations are the plan's. None for a job without one (an
    unplaced job, or counting platforms)."""
    out: list[Allocation | None] = [None] * len(cand.rows)
    if view.counting or len(cand.rows) == 0:
        return out
    now = int(view.now)
    start_allocator(allocator, view)
    prof = view.release_profile()
    assert isinstance(prof, NodeProfile)  # node level (counting returned above)
    phys = np.array(view.free, dtype=np.int64, copy=True)
    reqs = np.asarray(view.requests)[cand.rows]
    n_nodes = phys.shape[0]
    offsets = np.asarray(offsets, dtype=np.int64)
    for t in np.unique(offsets[offsets >= 0]).tolist():
        at = np.flatnonzero(offsets == t)
        keys = OrderKeys(cand.rows[at], now + t, cand.submit[at], cand.estimate[at],
                         cand.ewt[at], cand.demand[at])
        for p in at[ordering.sort(keys)].tolist():
            d = max(int(cand.estimate[p]), 1)
            window = prof.window_min(now + t, d)
            if t == 0:
                window = np.minimum(window, phys)
            alloc = allocator.allocate(reqs[p], int(cand.units[p]), window)
            if alloc is None:
                continue
            used = alloc.matrix(reqs[p], n_nodes)
            prof.reserve(now + t, d, used)
            if t == 0:
                phys -= used
            out[p] = alloc
    return out


class _PureCP(Dispatcher):
    """Machinery shared by :class:`PCP` and :class:`PCPOnline` (not registered)."""

    call_on_empty_queue = False
    #: one record per pass in pass_log_ (:func:`~.common.pass_facts`)
    keeps_pass_log: ClassVar[bool] = True
    pass_log_: list[dict[str, Any]]
    q_length: int
    nodes: str
    allocator: str
    nested: ClassVar[Nested] = {"allocator": ALLOCATORS}
    time_limit: float
    max_time_limit: float
    time_mode: str
    seed: int
    save_models: str | None = None
    save_every: int = 1
    #: the ordering of the PRB reference plan
    reference_order: str = "urgency"

    def validate(self) -> None:
        check_control_params(self.time_limit, self.max_time_limit, self.time_mode, self.seed)
        check_positive_int(self.q_length, "q_length")
        check_choice(self.nodes, "nodes", NODE_MODES)
        ModelSaver.check(self.save_models, self.save_every)
        if not isinstance(self.allocator, str):
            raise InputError(f"an allocator is a name, got {self.allocator!r}",
                             field="allocator")
        make_allocator(self.allocator)

    def _ewt_default(self) -> int:
        return int(getattr(self, "default_ewt", 1800))

    def run_facts(self) -> dict:
        """``cp_*`` facts of the run from :attr:`pass_log_` (see
        :func:`dispatchlab.dispatch.cp.common.run_facts`)."""

        return run_facts(self.pass_log_)

    def _keep_alive(self, view: View, cand, prb: np.ndarray, prb_now: dict,
                    decisions: list[Decision]) -> list[Decision]:
        """Ours: a pass that starts nothing on an idle system (no running job) would
        never be followed by another (no event is left to call the dispatcher), so
        there PRB's start-now jobs start instead (on an empty platform PRB always
        starts at least one job)."""
        if decisions or len(view.running.jobs):
            return decisions
        allocs = [prb_now.get(int(r)) for r in cand.rows.tolist()]
        return self._decide(view, cand, prb, allocs)

    def start(self, view: View) -> None:

        self.validate()
        self.allocator_: Allocator = make_allocator(self.allocator)
        start_allocator(self.allocator_, view)
        self.ordering_: Ordering = make_ordering(self.reference_order)
        self.ordering_.start(view)
        self.ewt_: np.ndarray = job_ewt(view.jobs, view.platform, self._ewt_default())
        self.pass_log_ = []
        self.saver_ = ModelSaver(self.save_models, self.save_every, self.name)
        self.saver_.start()
        if view.counting:
            total = int(view.platform.total_capacity()["core"])
            self.capacity_: np.ndarray = np.array([[total]], dtype=np.int64)
        else:
            self.capacity_ = np.array(view.capacity, dtype=np.int64, copy=True)
        self.totals_: np.ndarray = self.capacity_.sum(axis=0)

    # --- helpers --------------------------------------------------------------
    def _requests(self, view: View, rows: np.ndarray) -> np.ndarray:
        if view.counting:
            return np.ones((len(rows), 1), dtype=np.int64)
        return np.asarray(view.requests, dtype=np.int64)[rows]

    def _free(self, view: View) -> np.ndarray:
        if view.counting:
            return np.array([[int(view.free_cores)]], dtype=np.int64)
        return np.array(view.free, dtype=np.int64, copy=True)

    def _candidates(self, view: View, rows: np.ndarray, units: np.ndarray,
                    estimate: np.ndarray, submit: np.ndarray) -> Candidates:
        rows = np.asarray(rows, dtype=np.int64)
        units = np.asarray(units, dtype=np.int64)
        demand = job_demand(self._requests(view, rows), units, estimate, self.totals_)
        return Candidates(rows, units, np.asarray(estimate, dtype=np.int64),
                          np.asarray(submit, dtype=np.int64), self.ewt_[rows], demand)

    def _fits_empty(self, view: View, cand: Candidates) -> np.ndarray:
        """Which candidates fit the empty platform (the engine rejects the others at
        submission; a guard so that the model is always feasible)."""
        reqs = self._requests(view, cand.rows)
        return np.array([int(units_per_node(req, self.capacity_).sum()) >= u
                         for req, u in zip(reqs, cand.units.tolist(), strict=True)],
                        dtype=bool)

    def _problem(self, view: View, cand: Candidates,
                 nodes: str | None = None) -> tuple[PlanProblem, np.ndarray]:
        """The :class:`PlanProblem` of the candidates and the platform node index of
        each modelled node (``nodes``: ``"all"`` / ``"room"``, default the parameter)."""
        mode = self.nodes if nodes is None else nodes
        now = int(view.now)
        reqs = self._requests(view, cand.rows)
        free = self._free(view)
        cap_all = self.capacity_
        m = len(cand.rows)
        bounds = np.zeros((m, cap_all.shape[0]), dtype=np.int64)
        for j in range(m):
            b = np.minimum(units_per_node(reqs[j], cap_all), int(cand.units[j]))
            if mode == "room":
                b = np.where(units_per_node(reqs[j], free) > 0, b, 0)
            bounds[j] = b
        used_nodes = np.flatnonzero(bounds.any(axis=0))
        index = np.full(cap_all.shape[0], -1, dtype=np.int64)
        index[used_nodes] = np.arange(len(used_nodes))
        running = view.running
        run_rows = np.asarray(running.jobs, dtype=np.int64)
        run_rem = np.maximum(np.asarray(running.est_end, dtype=np.int64) - now, 1)
        r_node: list[int] = []
        r_dur: list[int] = []
        r_use: list[np.ndarray] = []
        if view.counting:
            for u, d in zip(np.asarray(running.units).tolist(), run_rem.tolist(), strict=True):
                r_node.append(0)
                r_dur.append(d)
                r_use.append(np.array([u], dtype=np.int64))
        else:
            all_reqs = view.requests
            for job, d in zip(run_rows.tolist(), run_rem.tolist(), strict=True):
                alloc = view.allocation(job)
                if alloc is None:
                    continue
                for n, c in zip(alloc.nodes.tolist(), alloc.counts.tolist(), strict=True):
                    if index[n] >= 0:
                        r_node.append(int(index[n]))
                        r_dur.append(d)
                        r_use.append(int(c) * np.asarray(all_reqs[job], dtype=np.int64))
        durations = np.maximum(cand.estimate, 1)
        if mode == "all":
            horizon = int(run_rem.max(initial=0)) + int(durations.sum())
        else:
            horizon = int(durations.sum())
        n_res = cap_all.shape[1]
        problem = PlanProblem(
            capacity=cap_all[used_nodes],
            run_node=np.asarray(r_node, dtype=np.int64),
            run_duration=np.asarray(r_dur, dtype=np.int64),
            run_usage=np.asarray(r_use, dtype=np.int64).reshape(len(r_node), n_res),
            units=cand.units.copy(), requests=reqs, durations=durations,
            bounds=bounds[:, used_nodes], horizon=horizon)
        return problem, used_nodes

    def _reference(self, view: View, cand: Candidates,
                   used_nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray,
                                                    dict[int, Allocation | None]]:
        """The proactive PRB plan: start offsets (-1 unplaced), unit counts on the
        modelled nodes (m x N, for the hint) and the start-now allocations by row."""

        plan = proactive_schedule(view, cand.rows, cand.estimate, self.ordering_,
                                  self.allocator_, cand.ewt, cand.demand)
        starts = np.asarray(plan.starts, dtype=np.int64)
        offsets = np.where(starts >= 0, starts - int(view.now), -1)
        units = np.zeros((len(cand.rows), len(used_nodes)), dtype=np.int64)
        if view.counting:
            units[:, 0] = cand.units
        else:
            index = {int(n): k for k, n in enumerate(used_nodes.tolist())}
            for j, alloc in enumerate(prb_allocations(view, cand, offsets, self.ordering_,
                                                      self.allocator_)):
                if alloc is None:
                    continue
                for n, c in zip(alloc.nodes.tolist(), alloc.counts.tolist(), strict=True):
                    if n in index:
                        units[j, index[n]] = int(c)
        return offsets, units, plan.allocations

    def _save(self, view: View, cand: Candidates, pm: PlanModel, hint: list[Any],
              problem: PlanProblem, used_nodes: np.ndarray) -> None:
        """Count the solve and save its model when sampled (``save_models``); the JSON
        also says whether the hint satisfies every constraint (``hint_feasible``): with
        the node model, the hinted plan checked by :func:`plan_is_feasible` on
        ``problem``; with the pooled model (whose hint is start times only), whether the
        hinted start times extend to a solution of that model
        (:func:`~.common.hint_extends`: true, false, or null when undecided)."""
        def extra() -> dict[str, Any]:
            form = getattr(self, "model", "nodes")
            if form == "pooled":  # the hint is start times only: ask the model itself
                feasible = hint_extends(pm.model, pm.variables, hint)
            else:
                offsets, units = pm.values_to_plan(hint, len(used_nodes))
                feasible = plan_is_feasible(problem, offsets, units)
            return {"dispatcher": self.name, "nodes_mode": self.nodes, "model": form,
                    "horizon": int(problem.horizon), "hint_feasible": feasible}

        self.saver_.record(pm.model, pm.variables, hint, now=int(view.now),
                           jobs=cand.rows.tolist(),
                           nodes=[] if view.counting else used_nodes.tolist(), extra=extra)

    @staticmethod
    def _hint_plan(problem: PlanProblem, prb: np.ndarray,
                   prb_units: np.ndarray) -> tuple[PlanProblem, np.ndarray, np.ndarray]:
        """The hint: PRB's plan made feasible in the model (:func:`feasible_hint`), and
        the problem with its horizon raised to the hint's end."""
        off, units = feasible_hint(problem, prb, prb_units)
        end = int((off + problem.durations).max(initial=0))
        return problem._replace(horizon=max(problem.horizon, end)), off, units

    def _with_reference_horizon(self, problem: PlanProblem,
                                prb: np.ndarray) -> PlanProblem:
        """Raise the horizon to the PRB plan's end when it ends later (ours, as hcp)."""
        placed = prb >= 0
        if not placed.any():
            return problem
        end = int((prb[placed] + problem.durations[placed]).max())
        return problem._replace(horizon=max(problem.horizon, end))

    def _decide(self, view: View, cand: Candidates, offsets: np.ndarray,
                allocs: list[Allocation | None]) -> list[Decision]:
        """Start the candidates planned at 0, in model order, each re-checked against the
        free resources left by the previous ones (postponed when it does not fit)."""
        out: list[Decision] = []
        now_pos = np.flatnonzero(np.asarray(offsets) == 0).tolist()
        if view.counting:
            free = int(view.free_cores)
            for p in now_pos:
                u = int(cand.units[p])
                if u <= free:
                    free -= u
                    out.append(Start(int(cand.rows[p])))
            return out
        free_m = np.array(view.free, dtype=np.int64, copy=True)
        reqs = view.requests
        for p in now_pos:
            alloc = allocs[p]
            job = int(cand.rows[p])
            if alloc is None or int(alloc.counts.sum()) != int(cand.units[p]):
                continue
            need = alloc.counts[:, None] * np.asarray(reqs[job])[None, :]
            if (free_m[alloc.nodes] < need).any():
                continue
            free_m[alloc.nodes] -= need
            out.append(Start(job, alloc))
        return out

    def _reference_is_optimal(self, view: View, cand: Candidates, prb: np.ndarray,
                              prb_now: dict[int, Allocation | None],
                              prb_obj: int | None) -> list[Decision]:
        """The PRB plan starts every modelled job now: every objective term is at its
        least (both objectives are non-decreasing in each start), so the plan is optimal
        and the solver could only tie. Ours: the solver is not called and PRB's plan is
        dispatched (``status="PRB_OPTIMAL"``); for ``pcp`` this changes no decision (a
        tie falls back to PRB), for ``pcp-online`` it fixes the allocation to PRB's
        instead of one of the solver's equally good ones."""
        allocs = [prb_now.get(int(r)) for r in cand.rows.tolist()]
        self.pass_log_.append(pass_facts(view.now, None, modelled=len(cand.rows),
                                         prb_objective=prb_obj, status="PRB_OPTIMAL"))
        return self._decide(view, cand, prb, allocs)

    @staticmethod
    def _allocations(units: np.ndarray, used_nodes: np.ndarray,
                     counting: bool) -> list[Allocation | None]:
        """Unit counts on the modelled nodes (m x N) as Allocations (platform nodes)."""
        if counting:
            return [None] * len(units)
        out: list[Allocation | None] = []
        for row in units:
            nz = np.flatnonzero(row > 0)
            out.append(Allocation(used_nodes[nz].astype(np.int64), row[nz].astype(np.int64)))
        return out

    def improvement_share(self) -> float:
        """Share of solver passes whose plan improved on PRB's (0.0 before a run)."""

        return improvement_share(self.pass_log_)


class PCP(_PureCP):
    """Pure CP dispatcher (Bartolini et al. CP 2014 as re-implemented): one CP-SAT model
    for schedule and allocation, EWT-normalised tardiness objective, PRB hint and
    fallback. See the module docstring.

    ``q_length``: waiting jobs modelled (first in queue order); ``default_ewt``: EWT (s)
    of a queue not in the platform's table; ``nodes``: ``"all"`` or ``"room"``;
    ``allocator``: of the PRB reference plan; ``time_limit`` / ``max_time_limit``:
    first and largest round limit (deterministic units or seconds, see
    ``time_mode``); ``seed``: CP-SAT's random seed; ``save_models`` / ``save_every``:
    write the model of every ``save_every``-th solve, with its hint and a JSON of the
    pass, to the folder ``save_models`` (off by default; see
    :class:`~.common.ModelSaver`)."""

    name = "pcp"
    reference_order = "urgency"

    def __init__(self, q_length: int = 100, default_ewt: int = 1800, nodes: str = "all",
                 allocator: str = "consolidate", time_limit: float = 0.1,
                 max_time_limit: float = 0.2, time_mode: str = "deterministic",
                 seed: int = 0, save_models: str | None = None,
                 save_every: int = 1) -> None:
        self.q_length = q_length
        self.default_ewt = default_ewt
        self.nodes = nodes
        self.allocator = allocator
        self.time_limit = time_limit
        self.max_time_limit = max_time_limit
        self.time_mode = time_mode
        self.seed = seed
        self.save_models = save_models
        self.save_every = save_every

    def validate(self) -> None:
        super().validate()
        if isinstance(self.default_ewt, bool) or not isinstance(
                self.default_ewt, int | np.integer) or self.default_ewt <= 0:
            raise InputError(f"must be an integer number of seconds > 0, got "
                             f"{self.default_ewt!r}", field="default_ewt")

    def start(self, view: View) -> None:
        super().start(view)
        self.control_ = TimeControl(self.time_limit, self.max_time_limit, self.time_mode,
                                    self.seed, stop="first")

    def _solve(self, pm: PlanModel, hint: list[int], objective: Any) -> SolveOutcome:
        """PCP's rounds: limits doubled as :meth:`TimeControl.limits`; stop after a round
        that proves the optimum or infeasibility, or whose best plan starts a job now
        ("while no job dispatched"). ``solved``: one of these happened."""
        c = self.control_
        best: SolveOutcome | None = None
        rounds, det, wall = 0, 0.0, 0.0
        last = None
        solved = False
        m = len(pm.starts)
        for limit in c.limits():
            one = TimeControl(limit, limit, c.time_mode, c.seed, stop="first")
            start_from = best.values if best is not None else hint
            last = one.solve(pm.model, pm.variables, start_from, objective)
            rounds += 1
            det += last.deterministic_time
            wall += last.wall_time
            if last.values is not None and (best is None or cast(int, last.objective)
                                            < cast(int, best.objective)):
                best = last  # (a solution has an objective value)
            if last.status in ("OPTIMAL", "INFEASIBLE", "MODEL_INVALID"):
                solved = last.status == "OPTIMAL"
                break
            if best is not None and any(v == 0 for v in cast(tuple, best.values)[:m]):
                solved = True
                break
        assert last is not None
        src = best if best is not None else last
        return SolveOutcome(status=last.status, values=src.values, objective=src.objective,
                            bound=last.bound, solved=solved, rounds=rounds,
                            hit_limit=last.hit_limit, deterministic_time=det, wall_time=wall)

    def dispatch(self, view: View) -> list[Decision]:
        q = view.queue
        if len(q.jobs) == 0:
            return []
        now = int(view.now)
        k = min(int(self.q_length), len(q.jobs))
        cand = self._candidates(view, q.jobs[:k], q.units[:k], q.estimate[:k], q.submit[:k])
        cand = cand.take(np.flatnonzero(self._fits_empty(view, cand)))
        fits = fit_now_mask(view, cand.rows, cand.units)
        if not fits.any():
            # no modelled job can start now on any plan: no solve (changes no decision)
            self.pass_log_.append(pass_facts(now, None, modelled=len(cand.rows),
                                             status="NO_FIT"))
            return []
        if self.nodes == "room":
            cand = cand.take(np.flatnonzero(fits))  # ours: the others cannot start now
        problem, used_nodes = self._problem(view, cand)
        prb, prb_units, prb_now = self._reference(view, cand, used_nodes)
        problem = self._with_reference_horizon(problem, prb)
        problem, hint_off, hint_units = self._hint_plan(problem, prb, prb_units)
        wait = (now - cand.submit).tolist()
        ewt = cand.ewt.tolist()
        digits = tardiness_digits(problem.horizon, wait, ewt)
        complete = bool((prb >= 0).all())
        prb_obj = tardiness_objective_value(prb.tolist(), wait, ewt, digits) \
            if complete else None
        if (prb == 0).all():
            return self._reference_is_optimal(view, cand, prb, prb_now, prb_obj)
        pm = build_plan_model(problem)
        objective = add_tardiness_objective(pm.model, pm.starts, wait, ewt,
                                            problem.horizon, digits)
        hint = pm.plan_to_values(hint_off, hint_units)
        self._save(view, cand, pm, hint, problem, used_nodes)
        outcome = self._solve(pm, hint, objective)
        improved = outcome.objective is not None and (
            prb_obj is None or outcome.objective < prb_obj)
        if improved:
            assert outcome.values is not None
            offsets, units = pm.values_to_plan(outcome.values, len(used_nodes))
            decisions = self._decide(view, cand, offsets,
                                     self._allocations(units, used_nodes, view.counting))
        else:  # PRB's plan (as hcp): its start-now jobs with its allocations
            allocs = [prb_now.get(int(r)) for r in cand.rows.tolist()]
            decisions = self._decide(view, cand, prb, allocs)
        decisions = self._keep_alive(view, cand, prb, prb_now, decisions)
        self.pass_log_.append(pass_facts(now, outcome, modelled=len(cand.rows),
                                         prb_objective=prb_obj, improved_on_prb=improved))
        return decisions


class PCPOnline(OnlineControl, _PureCP):
    """PCP' (Galleguillos et al., CP-based dispatching): PCP's model with HCP''s fit-now filter,
    slowdown priority and
    objective, round control with queue-length halving and dispatch skip; unit counts
    only on nodes with room now by default. See the module docstring.

    ``q_length``: most jobs modelled (halved after an unsolved pass); ``nodes``:
    ``"room"`` (default) or ``"all"``; ``allocator``: of the PRB reference plan;
    ``time_limit`` / ``max_time_limit`` / ``max_k``: the round control; ``time_mode``,
    ``seed``, ``save_models``, ``save_every`` as :class:`PCP`; ``model``: ``"nodes"``
    (the authors' form: unit counts per node for every modelled job, ``nodes`` applies)
    or ``"pooled"`` (ours: cumulatives over pooled capacity for the future and an exact
    node packing only for the jobs that start now; ``nodes`` is ignored; see
    :func:`build_pooled_model`)."""

    def validate(self) -> None:
        super().validate()
        check_choice(self.model, "model", MODEL_FORMS)

    name = "pcp-online"
    reference_order = "slowdown"

    def __init__(self, q_length: int = 100, nodes: str = "room",
                 allocator: str = "consolidate", time_limit: float = 0.1,
                 max_time_limit: float = 1.6, max_k: int = 2,
                 time_mode: str = "deterministic", seed: int = 0,
                 save_models: str | None = None, save_every: int = 1,
                 model: str = "nodes") -> None:
        self.q_length = q_length
        self.model = model
        self.nodes = nodes
        self.allocator = allocator
        self.time_limit = time_limit
        self.max_time_limit = max_time_limit
        self.max_k = max_k
        self.time_mode = time_mode
        self.seed = seed
        self.save_models = save_models
        self.save_every = save_every

    def dispatch(self, view: View) -> list[Decision]:
        q = view.queue
        if len(q.jobs) == 0:
            return []
        now = int(view.now)
        usage = resource_usage(view)
        if self.skip_.should_skip(view, usage):
            self.pass_log_.append(pass_facts(now, None, modelled=0, status="SKIPPED"))
            return []
        cand = self._candidates(view, q.jobs, q.units, q.estimate, q.submit)
        fits = np.flatnonzero(fit_now_mask(view, cand.rows, cand.units))
        cand = cand.take(fits)
        keys = OrderKeys(cand.rows, now, cand.submit, cand.estimate, cand.ewt, cand.demand)
        cand = cand.take(self.ordering_.sort(keys)[: self.cur_q_length_])
        if len(cand.rows) == 0:
            self.skip_.record(usage, 0)
            self.pass_log_.append(pass_facts(now, None, modelled=0, status="NO_FIT"))
            return []
        pooled = self.model == "pooled"
        problem, used_nodes = self._problem(view, cand, "all" if pooled else None)
        prb, prb_units, prb_now = self._reference(view, cand, used_nodes)
        problem = self._with_reference_horizon(problem, prb)
        if not pooled:
            problem, hint_off, hint_units = self._hint_plan(problem, prb, prb_units)
        wait = (now - cand.submit).tolist()
        est = cand.estimate.tolist()
        digits = slowdown_digits(problem.horizon, wait, est)
        prb_obj = slowdown_objective_value(prb.tolist(), wait, est, digits) \
            if bool((prb >= 0).all()) else None
        if (prb == 0).all():
            self.cur_q_length_ = next_queue_length(self.cur_q_length_, int(self.q_length),
                                                   True)
            decisions: list[Decision] = self._reference_is_optimal(view, cand, prb, prb_now,
                                                                   prb_obj)
            self.skip_.record(usage, len(decisions))
            return decisions
        if pooled:  # ours: hint = PRB's start times
            pm = build_pooled_model(problem, self._free(view)[used_nodes])
            hint: list[Any] = [int(t) if t >= 0 else None for t in prb.tolist()]
            hint += [None] * (len(pm.variables) - len(hint))
        else:
            pm = build_plan_model(problem)
            hint = pm.plan_to_values(hint_off, hint_units)
        objective = add_slowdown_objective(pm.model, pm.starts, wait, est, problem.horizon,
                                           digits)
        self._save(view, cand, pm, hint, problem, used_nodes)
        outcome = self.control_.solve(pm.model, pm.variables, hint, objective)
        self.cur_q_length_ = next_queue_length(self.cur_q_length_, int(self.q_length),
                                               outcome.solved)
        decisions = []
        if outcome.values is not None:
            offsets, units = pm.values_to_plan(outcome.values, len(used_nodes))
            decisions = self._decide(view, cand, offsets,
                                     self._allocations(units, used_nodes, view.counting))
        decisions = self._keep_alive(view, cand, prb, prb_now, decisions)
        self.skip_.record(usage, len(decisions))
        self.pass_log_.append(pass_facts(
            now, outcome, modelled=len(cand.rows), prb_objective=prb_obj,
            improved_on_prb=outcome.objective is not None and (
                prb_obj is None or outcome.objective < prb_obj)))
        return decisions


__all__ = [
    "MODEL_FORMS",
    "NODE_MODES",
    "PCP",
    "PCPOnline",
    "PlanModel",
    "PlanProblem",
    "add_tardiness_objective",
    "build_plan_model",
    "build_pooled_model",
    "feasible_hint",
    "plan_is_feasible",
    "prb_allocations",
    "tardiness_digits",
    "tardiness_objective_value",
]
