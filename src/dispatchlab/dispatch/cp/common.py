"""Shared machinery of the CP-SAT dispatchers (``hcp``, ``hcp-online``, ``pcp``, ``pcp-online``).

Everything here is independent of the model a dispatcher builds:

* :func:`solver_parameters` - a single-threaded, seeded ``CpSolver`` whose limit is
  either *deterministic time* (``time_mode="deterministic"``, the default: the same
  model, hint and seed give the same answer on every machine and every run) or wall
  time (``time_mode="wall"``: closer to the authors' millisecond limits, but **not
  reproducible**: the answer depends on the machine's speed and load).
* :class:`TimeControl` - the round loop of the authors' HCP and HCP' codes: a first limit,
  doubled each round up to a maximum, with two stopping rules (``stop="first"``: the
  first round with a solution, HCP/CPH; ``stop="stable"``: a proven optimum or the same
  best objective over the last ``max_k`` rounds, HCP'/PCP'). Its result is a
  :class:`SolveOutcome`.
* :func:`fit_now_mask` - HCP''s *fit-now filter*: which waiting jobs could start now on
  the free resources.
* :class:`DispatchSkip` - HCP''s *dispatch skip* rule, and :func:`resource_usage`.
* :func:`add_slowdown_objective` / :func:`slowdown_objective_value` - HCP''s slowdown
  objective (2.6), as CP-SAT constraints and evaluated in Python on a given plan.
* :func:`pass_facts` - the per-pass record a CP dispatcher appends to ``pass_log_``
  (the engine writes it to Parquet with ``--trace-decisions``), and
  :func:`improvement_share`.

Times in models are seconds with origin 0 = the pass's ``now``; a job's start variable
``s`` is its offset from now. Deterministic time is CP-SAT's own work unit (roughly, but
not exactly, seconds on a fast machine).

This module imports ``ortools``; it is imported only by the CP dispatchers (the
registry loads them lazily), never by ``import dispatchlab.dispatch``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from ortools.sat.python import cp_model

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.allocators import units_per_node

#: accepted values of the ``time_mode`` parameter
TIME_MODES: tuple[str, ...] = ("deterministic", "wall")
#: the stopping rules of :class:`TimeControl`
STOP_RULES: tuple[str, ...] = ("first", "stable")
#: the largest magnitude (ours) a model's objective terms may reach before
#: :func:`slowdown_digits` drops significant digits, far below CP-SAT's int64 limit
OBJECTIVE_CAP = 1 << 60
#: CP-SAT status names with a solution
_HAS_SOLUTION = (cp_model.OPTIMAL, cp_model.FEASIBLE)


# --- parameters ---------------------------------------------------------------------
def check_control_params(time_limit: float, max_time_limit: float, time_mode: str,
                         seed: int) -> None:
    """Validate the time-control parameters shared by the CP dispatchers.

    Raises :class:`InputError` naming the field: ``time_limit`` must be > 0,
    ``max_time_limit`` >= ``time_limit``, ``time_mode`` one of :data:`TIME_MODES`,
    ``seed`` an integer in [0, 2**31)."""
    for name, value in (("time_limit", time_limit), ("max_time_limit", max_time_limit)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 \
                or value != value or value == float("inf"):
            raise InputError(f"must be a finite number of seconds > 0, got {value!r}",
                             field=name)
    if max_time_limit < time_limit:
        raise InputError(f"must be >= time_limit ({time_limit!r}), got {max_time_limit!r}",
                         field="max_time_limit")
    if time_mode not in TIME_MODES:
        raise InputError(f"unknown time mode {time_mode!r} (choose from "
                         f"{', '.join(TIME_MODES)})", field="time_mode")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**31:
        raise InputError(f"must be an integer in [0, 2**31), got {seed!r}", field="seed")


def check_solver_budget(conflicts: Any, presolve: Any) -> None:
    """Validate the solver-budget parameters of the hybrid CP dispatchers: ``conflicts``
    None or an integer >= 1, ``presolve`` a bool (:class:`InputError` naming the
    field)."""
    if conflicts is not None:
        check_positive_int(conflicts, "conflicts")
    if not isinstance(presolve, bool | np.bool_):
        raise InputError(f"must be true or false, got {presolve!r}", field="presolve")


def check_positive_int(value: Any, field: str, minimum: int = 1) -> None:
    """Raise :class:`InputError` unless ``value`` is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InputError(f"must be an integer >= {minimum}, got {value!r}", field=field)


def check_choice(value: Any, field: str, choices: Sequence[str]) -> None:
    """Raise :class:`InputError` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise InputError(f"unknown value {value!r} (choose from {', '.join(choices)})",
                         field=field)


#: conflicts allowed per second of deterministic time limit (ours; see
#: :func:`solver_parameters`)
CONFLICTS_PER_SECOND = 2000


def solver_parameters(time_limit: float, time_mode: str = "deterministic",
                      seed: int = 0, conflicts: int | None = None,
                      presolve: bool = True) -> cp_model.CpSolver:
    """A ``CpSolver`` with ``num_workers = 1``, ``random_seed = seed`` and the limit.

    ``time_mode="deterministic"``: ``time_limit`` is CP-SAT's ``max_deterministic_time``
    (reproducible: single worker + fixed seed + deterministic limit give byte-identical
    answers), with a budget of ``conflicts`` conflicts (default
    :data:`CONFLICTS_PER_SECOND` x ``time_limit``, at least 100), also deterministic.
    ``time_mode="wall"``: ``time_limit`` is ``max_time_in_seconds`` of wall time (**not
    reproducible**; ``conflicts`` still bounds the search when given). ``presolve``:
    CP-SAT's ``cp_model_presolve`` (off saves its fixed cost on small models). Search
    logging is off."""
    if time_mode not in TIME_MODES:
        raise InputError(f"unknown time mode {time_mode!r} (choose from "
                         f"{', '.join(TIME_MODES)})", field="time_mode")
    solver = cp_model.CpSolver()
    params = solver.parameters
    params.num_workers = 1
    params.random_seed = int(seed)
    params.log_search_progress = False
    if time_mode == "deterministic":
        params.max_deterministic_time = float(time_limit)
        # ours: CP-SAT's deterministic clock barely moves while it tightens the
        # objective bound of these scheduling models one step at a time (seen: 22 s of
        # wall time within 0.07 deterministic seconds); a conflict budget, also
        # deterministic, bounds that search
        params.max_number_of_conflicts = (
            max(100, int(CONFLICTS_PER_SECOND * time_limit)) if conflicts is None
            else int(conflicts))
    else:
        params.max_time_in_seconds = float(time_limit)
        if conflicts is not None:
            params.max_number_of_conflicts = int(conflicts)
    params.cp_model_presolve = bool(presolve)
    return solver


def hint_extends(model: cp_model.CpModel, variables: Sequence[Any],
                 hint: Sequence[int | None], time_limit: float = 1.0) -> bool | None:
    """Whether the hinted values (``None``: not hinted) extend to a solution of ``model``:
    a copy of the model without its objective, the hinted variables fixed, solved by
    :func:`solver_parameters` (one worker, seed 0, ``time_limit`` deterministic seconds).
    True (a solution exists), False (proved infeasible) or None (undecided within the
    limit). For saved-model diagnostics (ours); the model itself is not changed."""
    copy = model.clone()
    copy.clear_objective()
    copy.clear_hints()
    for var, value in zip(variables, hint, strict=True):
        if value is not None:
            copy.add(copy.get_int_var_from_proto_index(var.index) == int(value))
    status = solver_parameters(time_limit).solve(copy)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    if status == cp_model.INFEASIBLE:
        return False
    return None


# --- the round loop -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SolveOutcome:
    """What :meth:`TimeControl.solve` found.

    ``status``: CP-SAT's status name of the last round (``OPTIMAL``, ``FEASIBLE``,
    ``INFEASIBLE``, ``UNKNOWN``, ``MODEL_INVALID``); ``values``: the best solution's
    values of the variables passed to ``solve`` (None when no round found one);
    ``objective``: its objective value (int, None without a solution); ``bound``: the
    last round's best objective bound (None without a solution); ``solved``: the
    stopping rule was met (see :class:`TimeControl`); ``rounds``: rounds run;
    ``hit_limit``: the last round stopped on its time limit; ``deterministic_time`` and
    ``wall_time``: summed over the rounds (CP-SAT units / seconds)."""

    status: str
    values: tuple[int, ...] | None
    objective: int | None
    bound: float | None
    solved: bool
    rounds: int
    hit_limit: bool
    deterministic_time: float
    wall_time: float

    @property
    def has_solution(self) -> bool:
        return self.values is not None


class TimeControl:
    """The time-limit control of the authors' codes: HCP's, and HCP''s / PCP''s.

    Round ``k`` (k = 0, 1, ...) solves the model with limit ``time_limit * 2**k``; rounds
    stop once the next limit would exceed ``max_time_limit`` (so with 1 and 16 the limits
    are 1, 2, 4, 8, 16; with 1 and 150, 1..128 as in the authors' "stop before 150 s"),
    or when the stopping rule is met:

    * ``stop="first"`` (HCP/CPH, 2.3): the first round that finds a solution (or proves
      the model infeasible). ``solved`` = a solution was found.
    * ``stop="stable"`` (HCP'/PCP', 2.6): a round proves the optimum, or the best
      objective found is the same after each of the last ``max_k`` rounds. ``solved`` =
      one of the two happened (a pass that is not solved halves HCP''s queue length).
      Ours: two rounds *without* a solution never count as "unchanged" (the authors'
      code does not handle that case).

    Every round after the first is hinted with the best solution so far (ours: CP-SAT
    does not keep an incumbent between calls; the authors' search was restarted from
    scratch and deterministic, so it found the previous solution again); the first round
    uses the caller's ``hint`` (the PRB plan). A model proven infeasible stops the loop
    (``solved`` False). The solver of each round is :func:`solver_parameters` with the
    round's limit, ``time_mode``, ``seed``, ``conflicts`` (a fixed budget for every
    round when given) and ``presolve``.
    """

    def __init__(self, time_limit: float = 1.0, max_time_limit: float = 16.0,
                 time_mode: str = "deterministic", seed: int = 0, max_k: int = 2,
                 stop: Literal["first", "stable"] = "stable", conflicts: int | None = None,
                 presolve: bool = True) -> None:
        check_control_params(time_limit, max_time_limit, time_mode, seed)
        check_positive_int(max_k, "max_k")
        check_choice(stop, "stop", STOP_RULES)
        check_solver_budget(conflicts, presolve)
        self.conflicts = None if conflicts is None else int(conflicts)
        self.presolve = bool(presolve)
        self.time_limit = float(time_limit)
        self.max_time_limit = float(max_time_limit)
        self.time_mode = time_mode
        self.seed = int(seed)
        self.max_k = int(max_k)
        self.stop = stop

    def limits(self) -> list[float]:
        """The per-round limits, in order (at least one)."""
        out = [self.time_limit]
        while out[-1] * 2 <= self.max_time_limit * (1 + 1e-12):
            out.append(out[-1] * 2)
        return out

    def solve(self, model: cp_model.CpModel, variables: Sequence[cp_model.IntVar],
              hint: Sequence[int | None] | None = None,
              objective: Any = None) -> SolveOutcome:
        """Run the rounds on ``model`` (which must have an objective) and return the best
        solution's values of ``variables``. ``hint`` (same length as ``variables``) seeds
        the first round (entries None are not hinted); the model's hints are replaced at
        each round. ``objective``, the
        objective's integer expression, is evaluated exactly with ``solver.Value`` when
        given (CP-SAT reports the objective as a float, inexact above 2**53)."""
        best_vals: tuple[int, ...] | None = None
        best_obj: int | None = None
        bound: float | None = None
        history: list[int | None] = []  # best objective after each round
        status_name = "UNKNOWN"
        solved = hit_limit = False
        det_time = wall_time = 0.0
        rounds = 0
        for limit in self.limits():
            rounds += 1
            model.clear_hints()
            start_from = best_vals if best_vals is not None else hint
            if start_from is not None:
                for var, value in zip(variables, start_from, strict=True):
                    if value is not None:
                        model.add_hint(var, int(value))
            solver = solver_parameters(limit, self.time_mode, self.seed, self.conflicts,
                                       self.presolve)
            status = solver.solve(model)
            det_time += float(solver.deterministic_time)
            wall_time += float(solver.wall_time)
            status_name = solver.status_name(status)
            if status in _HAS_SOLUTION:
                obj = (int(solver.value(objective)) if objective is not None
                       else round(solver.objective_value))
                bound = float(solver.best_objective_bound)
                if best_obj is None or obj < best_obj:
                    best_obj = obj
                    best_vals = tuple(int(solver.value(v)) for v in variables)
            history.append(best_obj)
            if status == cp_model.OPTIMAL:
                solved, hit_limit = True, False
                break
            if status in (cp_model.INFEASIBLE, cp_model.MODEL_INVALID):
                solved, hit_limit = False, False
                break
            hit_limit = True  # FEASIBLE or UNKNOWN: the round ran out of time
            if self.stop == "first":
                if best_vals is not None:
                    solved = True
                    break
            elif (len(history) >= self.max_k and history[-1] is not None
                  and all(h == history[-1] for h in history[-self.max_k:])):
                solved = True
                break
        return SolveOutcome(status=status_name, values=best_vals, objective=best_obj,
                            bound=bound, solved=solved, rounds=rounds, hit_limit=hit_limit,
                            deterministic_time=det_time, wall_time=wall_time)


# --- the fit-now filter and the dispatch skip ---------------------------------------
def fit_now_mask(view: Any, rows: np.ndarray, units: np.ndarray) -> np.ndarray:
    """Which of the waiting jobs ``rows`` (with ``units``) fit the free resources now.

    Node-level platforms (HCP' filter, ``hcp3_scheduler.py``): job ``j`` fits iff
    ``sum over nodes of min over requested types r of floor(free[n, r] / req_j[r]) >=
    units_j`` (a job requesting nothing fits). Counting platforms: ``units_j <=
    view.free_cores``. Jobs sharing a per-unit request are computed together, so the
    cost grows with the number of distinct requests, not with the queue length.
    Returns a bool array aligned with ``rows``."""
    rows = np.asarray(rows, dtype=np.int64)
    units = np.asarray(units, dtype=np.int64)
    if len(rows) == 0:
        return np.zeros(0, dtype=bool)
    if view.counting:
        return units <= int(view.free_cores)
    free = np.asarray(view.free)
    reqs = np.asarray(view.requests)[rows]
    distinct, inverse = np.unique(reqs, axis=0, return_inverse=True)
    room = np.array([int(units_per_node(req, free).sum()) for req in distinct],
                    dtype=np.int64)
    return units <= room[np.asarray(inverse).reshape(-1)]


def resource_usage(view: Any) -> np.ndarray:
    """Resources in use now, summed over nodes (int64, platform resource order; on
    counting platforms one entry: busy cores)."""
    if view.counting:
        total = int(view.platform.total_capacity()["core"])
        return np.array([total - int(view.free_cores)], dtype=np.int64)
    return np.asarray(view.capacity).sum(axis=0) - np.asarray(view.free).sum(axis=0)


def all_fit_now(view: Any, rows: np.ndarray, units: np.ndarray) -> bool:
    """True when the jobs ``rows`` (with ``units``) fit the free resources together,
    summed over nodes: the relaxed (summed-capacity) model's plan "every job starts now"
    is then feasible, since running jobs only release resources later, and it is optimal
    for any objective that grows with the start times (the HCP and HCP' objectives).
    The dispatchers then skip the solver (ours: it would only prove this)."""
    rows = np.asarray(rows, dtype=np.int64)
    units = np.asarray(units, dtype=np.int64)
    if view.counting:
        return int(units.sum()) <= int(view.free_cores)
    demand = (np.asarray(view.requests)[rows] * units[:, None]).sum(axis=0)
    return bool((demand <= np.asarray(view.free).sum(axis=0)).all())


class OnlineControl:
    """What HCP' and PCP' share (mixed into their classes): the ``max_k`` check and, per
    run, the round control (:class:`TimeControl` with ``stop="stable"``), the current
    queue length (``cur_q_length_``, reset to ``q_length``) and the dispatch skip."""

    def validate(self) -> None:
        super().validate()  # type: ignore[misc]
        check_positive_int(self.max_k, "max_k")  # type: ignore[attr-defined]

    def start(self, view: Any) -> None:
        super().start(view)  # type: ignore[misc]
        self.control_ = TimeControl(self.time_limit, self.max_time_limit,  # type: ignore[attr-defined]
                                    self.time_mode, self.seed,  # type: ignore[attr-defined]
                                    max_k=self.max_k, stop="stable")  # type: ignore[attr-defined]
        self.cur_q_length_: int = int(self.q_length)  # type: ignore[attr-defined]
        self.skip_ = DispatchSkip()


class DispatchSkip:
    """HCP''s dispatch skip (``hcp3_scheduler.py``).

    After a pass that dispatched nothing, :meth:`record` keeps the resource usage then.
    At the next pass, :meth:`should_skip` says "skip" (return no decision without
    solving) iff no job was submitted since the previous pass (``view.changed``), the
    system is not empty, and no resource type has less usage than then; otherwise it
    forgets the recorded state and the pass solves."""

    def __init__(self) -> None:
        self.usage_: np.ndarray | None = None

    def should_skip(self, view: Any, usage: np.ndarray) -> bool:
        if self.usage_ is None:
            return False
        if len(view.changed.submitted) or not usage.any() \
                or (usage < self.usage_).any():
            self.usage_ = None
            return False
        return True

    def record(self, usage: np.ndarray, dispatched: int) -> None:
        """Remember ``usage`` when the pass dispatched nothing; forget it otherwise."""
        self.usage_ = usage.copy() if dispatched == 0 else None


def next_queue_length(current: int, q_length: int, solved: bool) -> int:
    """HCP''s queue-length control: halved (min 1) after an unsolved pass, back to
    ``q_length`` after a solved one."""
    return q_length if solved else max(1, current // 2)


# --- the slowdown objective (HCP', PCP') -----------------------------------------------
def slowdown_digits(horizon: int, wait: Sequence[int], est: Sequence[int],
                    significant: int = 5) -> int:
    """The scale exponent ``d`` of the slowdown objective: ``max(significant, number of
    digits of horizon)`` (authors' rule), then lowered (ours) until every term, at most
    ``(horizon + wait + max(est, 1)) * 10**d`` (the ``est = 0`` terms included), and
    their sum stay below :data:`OBJECTIVE_CAP`, so CP-SAT never sees an overflow."""
    d = max(significant, len(str(max(int(horizon), 0))))
    n = max(len(wait), 1)
    worst = max((int(horizon) + int(w) + max(int(e), 1)
                 for w, e in zip(wait, est, strict=True)), default=1)
    while d > 0 and worst * 10**d * n >= OBJECTIVE_CAP:
        d -= 1
    return d


def add_slowdown_objective(model: cp_model.CpModel, starts: Sequence[Any],
                           wait: Sequence[int], est: Sequence[int], horizon: int,
                           digits: int) -> cp_model.LinearExpr:
    """Post HCP''s objective ``sum_i floor((s_i + wait_i + est_i) * 10**digits / est_i)``
    (``est_i = 0``: ``max(1, s_i + wait_i) * 10**digits``) and ``Minimize`` it.

    ``starts`` are the start expressions (offsets from now, in [0, horizon]); ``wait``
    the jobs' waits so far (now - submit, s) and ``est`` their estimates (s, the
    predictor's, not the planning duration). The floor is exact: a term variable ``q``
    with ``est*q <= K*(s + wait + est) <= est*q + est - 1`` (minimisation makes it the
    floor). Returns the objective expression."""
    scale = 10**digits
    terms = []
    for k, (s, w, e) in enumerate(zip(starts, wait, est, strict=True)):
        w, e = int(w), int(e)
        if e > 0:
            top = (int(horizon) + w + e) * scale // e
            q = model.new_int_var(0, top, f"sld_{k}")
            numer = scale * s + scale * (w + e)
            model.add(e * q <= numer)
            model.add(numer <= e * q + (e - 1))
            terms.append(q)
        else:
            m = model.new_int_var(1, max(1, int(horizon) + w), f"sld0_{k}")
            model.add(m >= s + w)
            terms.append(scale * m)
    objective = cp_model.LinearExpr.sum(terms)
    model.minimize(objective)
    return objective


def slowdown_objective_value(offsets: Sequence[int], wait: Sequence[int],
                             est: Sequence[int], digits: int) -> int:
    """The value of :func:`add_slowdown_objective`'s objective for start ``offsets``
    (seconds after now), computed exactly in Python (for a reference plan, or tests)."""
    scale = 10**digits
    total = 0
    for s, w, e in zip(offsets, wait, est, strict=True):
        s, w, e = int(s), int(w), int(e)
        total += (s + w + e) * scale // e if e > 0 else max(1, s + w) * scale
    return total


# --- per-pass facts -----------------------------------------------------------------
#: the keys of a :func:`pass_facts` record, in order
PASS_FACT_KEYS: tuple[str, ...] = (
    "now", "status", "objective", "prb_objective", "bound", "modelled", "solved",
    "improved_on_prb", "rounds", "hit_limit", "deterministic_time",
)


def pass_facts(now: int, outcome: SolveOutcome | None, *, modelled: int,
               prb_objective: int | None = None, improved_on_prb: bool = False,
               status: str | None = None) -> dict[str, Any]:
    """The record a CP dispatcher appends to ``self.pass_log_`` for one pass.

    Keys (:data:`PASS_FACT_KEYS`): ``now`` (s, trace origin); ``status`` (CP-SAT's last
    status name, or the given ``status`` such as ``"SKIPPED"`` / ``"NO_FIT"`` when no
    solver ran); ``objective`` (int, the solver's best, before any fallback; None
    without a solution); ``prb_objective`` (the same objective on the PRB reference plan;
    None when there is none); ``bound`` (float or None); ``modelled`` (waiting jobs in
    the model); ``solved`` (:class:`TimeControl`'s rule met); ``improved_on_prb`` (the
    solver's plan was strictly better than PRB's and was used); ``rounds``;
    ``hit_limit``; ``deterministic_time`` (summed over rounds, 0.0 without a solve).
    Missing numbers are None, so every record has the same keys and types."""
    if outcome is None:
        return {"now": int(now), "status": status or "NOT_SOLVED", "objective": None,
                "prb_objective": None if prb_objective is None else int(prb_objective),
                "bound": None, "modelled": int(modelled), "solved": False,
                "improved_on_prb": False, "rounds": 0, "hit_limit": False,
                "deterministic_time": 0.0}
    return {"now": int(now), "status": status or outcome.status,
            "objective": outcome.objective,
            "prb_objective": None if prb_objective is None else int(prb_objective),
            "bound": outcome.bound, "modelled": int(modelled), "solved": bool(outcome.solved),
            "improved_on_prb": bool(improved_on_prb), "rounds": int(outcome.rounds),
            "hit_limit": bool(outcome.hit_limit),
            "deterministic_time": float(outcome.deterministic_time)}


def run_facts(pass_log: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Run-level facts of a CP dispatcher from its pass log (the summary's ``cp_*``
    keys): ``cp_passes`` (passes where the solver ran), ``cp_improved_share`` (share of
    those whose plan improved on PRB's reference; None without solver passes),
    ``cp_limit_hits`` (passes that hit the time limit), ``cp_mean_modelled`` (mean
    waiting jobs modelled per solver pass; None without solver passes)."""
    solved = [p for p in pass_log if p["rounds"] > 0]
    return {
        "cp_passes": len(solved),
        "cp_improved_share": improvement_share(pass_log) if solved else None,
        "cp_limit_hits": sum(1 for p in solved if p["hit_limit"]),
        "cp_mean_modelled": (sum(p["modelled"] for p in solved) / len(solved)
                             if solved else None),
    }


def improvement_share(pass_log: Sequence[dict[str, Any]]) -> float:
    """The share of solver passes (``rounds > 0``) whose plan improved on PRB's
    (``improved_on_prb``); 0.0 when the solver never ran."""
    solved = [p for p in pass_log if p["rounds"] > 0]
    if not solved:
        return 0.0
    return sum(1 for p in solved if p["improved_on_prb"]) / len(solved)


# --- saving the models of sampled passes -------------------------------------------
class ModelSaver:
    """Writes the CP-SAT model of every ``every``-th solve to ``folder`` (the
    ``save_models`` / ``save_every`` parameters of the CP dispatchers; off when
    ``folder`` is None, the default).

    Solves are counted from 0 over the run (passes that reach the solver; skipped or
    short-circuited passes are not solves); solves 0, ``every``, 2 x ``every``, ... are
    saved. Solve ``k`` writes two files: ``{name}-{k:06d}.pb.txt``, the model as CP-SAT
    protobuf text (``CpModel.export_to_file``) *with the hint the solver's first round
    receives* (``solution_hint``), and ``{name}-{k:06d}.json``, the pass: ``solve``
    (k), ``now`` (s), ``jobs`` (the modelled waiting jobs' row numbers, in model order),
    ``nodes`` (the platform node index of each modelled node, e.g. the room nodes of
    ``nodes="room"``; empty for models without nodes) and the dispatcher's ``extra``
    facts. Saving adds and clears the hint only: the model the solver sees and so the
    schedule are the same with saving on or off. The folder is created at
    :meth:`start`; an unusable folder is an :class:`InputError` on ``save_models``."""

    def __init__(self, folder: Any, every: int, name: str) -> None:
        self.folder = None if folder is None else str(folder)
        self.every = int(every)
        self.name = name
        self.solves = 0

    @staticmethod
    def check(folder: Any, every: Any) -> None:
        """Validate the parameters (:class:`InputError` naming the field)."""
        if folder is not None and (not isinstance(folder, str) or not folder):
            raise InputError(f"must be a folder path, got {folder!r}", field="save_models")
        check_positive_int(every, "save_every")

    def start(self) -> None:
        """Create the folder (when saving) and reset the solve counter."""
        from pathlib import Path

        self.solves = 0
        if self.folder is None:
            return
        try:
            Path(self.folder).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create folder {self.folder}: {exc.strerror or exc}",
                             field="save_models") from exc

    def record(self, model: cp_model.CpModel, variables: Sequence[Any],
               hint: Sequence[int | None] | None, *, now: int, jobs: Sequence[int],
               nodes: Sequence[int] = (), extra: Any = None) -> None:
        """Count one solve and save it when it is sampled (see the class). ``extra``: a
        dict of more facts, or a callable returning one (called only when saved)."""
        import json
        from pathlib import Path

        k = self.solves
        self.solves += 1
        if self.folder is None or k % self.every:
            return
        base = Path(self.folder) / f"{self.name}-{k:06d}"
        model.clear_hints()
        if hint is not None:
            for var, value in zip(variables, hint, strict=True):
                if value is not None:
                    model.add_hint(var, int(value))
        ok = model.export_to_file(str(base) + ".pb.txt")
        model.clear_hints()
        if not ok:
            raise InputError(f"cannot write {base}.pb.txt", field="save_models")
        facts = {"solve": k, "now": int(now), "jobs": [int(j) for j in jobs],
                 "nodes": [int(n) for n in nodes],
                 **((extra() if callable(extra) else extra) or {})}
        Path(str(base) + ".json").write_text(json.dumps(facts, indent=1) + "\n")
