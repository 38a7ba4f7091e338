"""DEC, the hybrid CP power capper of Borghesi et al. 2018 (section 4.3): HCP with power as one
more cumulative resource.

**DEC** (``DEC()``, name ``dec``; as the authors' code, feedback ours). Each pass is
:class:`~dispatchlab.dispatch.cp.hcp.HCP`'s (relaxed CP-SAT schedule minimising the
EWT-weighted waiting time, allocation of the start-now jobs, feedback re-solves), with:

* **power cumulative** when a cap applies now (``view.cap``): each modelled waiting job
  demands its predicted power (``view.power_prediction`` mean) in whole watts **rounded
  up**, each running job its prediction x current level rounded up, at a capacity of
  ``floor(margin x cap)`` W, so a plan of the model never exceeds ``margin x cap`` by
  the predictions (the model is safe). *Ours*: when the running jobs alone exceed the
  capacity (a cap step down, a job past its estimate), their demands are lowered,
  earliest estimated end first, by the excess, so the model sees exactly
  ``min(running power, capacity)`` at every time: no job starts until enough power is
  released, and the model stays feasible. A job's demand above the capacity (a job
  within 1 W of the whole budget) is lowered to the capacity: stage 2's check below
  keeps it safe;
* **reference plan and hint = LS's proactive plan with power**
  (:func:`dispatchlab.dispatch.prb.proactive_schedule` with a
  :class:`~dispatchlab.dispatch.prb.PowerBudget`: ``order`` (default ``ewt``),
  ``allocator`` (default ``energy-consolidate``), predicted power within ``margin x
  cap``; future cap steps ignored, ours). The solver's plan is used only when
  *strictly* better than LS's under the objective, so DEC never does worse than LS's
  plan by that objective; :meth:`run_facts` reports the share of solver passes where
  DEC's own plan improved on LS's (``cp_improved_share``; per pass
  ``improved_on_prb`` in ``pass_log_``);
* **stage 2** in ``order`` (ewt) with LS's power check in floating point: a start-now
  job whose predicted power does not fit what is left of ``margin x cap`` fails like one
  that does not map, and goes to the feedback (so DEC never starts a job LS's check
  would refuse);
* waiting jobs whose predicted power alone exceeds ``margin x cap`` are not modelled
  (they cannot start under the cap now); those that exceed it at the largest cap of the
  rest of the run are rejected, as LS does (ours).

*Time limits* (Borghesi et al. 2018 section 4.3: "we first try to find a solution within 1
second, if the time is not sufficient [...] we double the time limit. The maximal time limit
is one minute"; as the authors' code; its section 5.1.2 states a 10 s limit instead).
``time_limit`` first, doubled while a round finds no solution, up to ``max_time_limit``.
Defaults (ours): 0.1 -> 6.0 **deterministic** seconds (the paper's
ratio of 1 : 60, scaled like HCP's: single worker, seeded, reproducible);
``time_mode="wall"`` makes them wall-clock seconds (the paper's values are
``time_limit=1, max_time_limit=60``; not reproducible). As the search is hinted with
LS's plan, the first round nearly always has a solution, so ``time_limit`` is the
effective limit per solve. ``conflicts`` and ``presolve``: HCP's solver budget (ours;
see :mod:`dispatchlab.dispatch.cp.hcp`); what smaller budgets cost and save is
measured in docs/explanation/performance.md (*Power-capping targets*), and the defaults
stay those its Borghesi et al. 2018 results were made with.

Without a cap now DEC is HCP with DEC's ``order`` and ``allocator`` (its uncapped
self). Works on counting and node-level platforms; needs a power predictor when the run
has a cap (``needs_power``).
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Nested
from dispatchlab.dispatch.allocators import ALLOCATORS
from dispatchlab.dispatch.base import Decision, View
from dispatchlab.dispatch.cp.common import pass_facts
from dispatchlab.dispatch.cp.hcp import HCP, Candidates, ModelPower, PassPower
from dispatchlab.dispatch.orderings import ORDERINGS, make_ordering
from dispatchlab.dispatch.powercap.ls import check_margin, check_power_inputs, reject_never_fitting
from dispatchlab.dispatch.prb import PowerBudget, power_sum, running_power_prediction


def model_power(running: np.ndarray, pred: np.ndarray, budget: float) -> ModelPower:
    """The integer power cumulative of a DEC pass: ``running`` predicted watts of the
    running jobs (float, in order of estimated end), ``pred`` those of the candidates,
    ``budget`` margin x cap (W). Demands are rounded up, the capacity down; running
    demands above the capacity in total are lowered, earliest end first, by the excess;
    a candidate's demand is at most the capacity (see the module docstring)."""
    capacity = max(0, math.floor(budget))
    run = np.ceil(np.asarray(running, dtype=np.float64)).astype(np.int64)
    excess = int(run.sum()) - capacity
    if excess > 0:
        for k in range(len(run)):
            cut = min(int(run[k]), excess)
            run[k] -= cut
            excess -= cut
            if excess == 0:
                break
    cand = np.minimum(np.ceil(np.asarray(pred, dtype=np.float64)).astype(np.int64), capacity)
    return ModelPower(run, cand, capacity)


class DEC(HCP):
    """Borghesi et al. 2018's hybrid CP power capper: HCP with a power cumulative at ``margin x
    cap``, LS's power-aware plan as hint and reference, ``ewt`` order and
    ``energy-consolidate`` nodes. See the module docstring."""

    name = "dec"
    #: the simulation must give power predictions (``check_dispatcher`` supplies them)
    needs_power = True
    #: a power-capping method: the command line refuses it without a cap
    needs_cap = True
    nested: ClassVar[Nested] = {"allocator": ALLOCATORS, "order": ORDERINGS}

    def __init__(self, q_length: int = 100, model_order: str = "queue", order: str = "ewt",
                 default_ewt: int = 1800, allocator: str = "energy-consolidate",
                 time_limit: float = 0.1, max_time_limit: float = 6.0,
                 time_mode: str = "deterministic", seed: int = 0,
                 feedback_rounds: int = 3, margin: float = 1.0,
                 conflicts: int | None = None, presolve: bool = True) -> None:
        super().__init__(q_length=q_length, model_order=model_order,
                         default_ewt=default_ewt, allocator=allocator,
                         time_limit=time_limit, max_time_limit=max_time_limit,
                         time_mode=time_mode, seed=seed, feedback_rounds=feedback_rounds,
                         conflicts=conflicts, presolve=presolve)
        self.order = order
        self.margin = margin

    @property
    def priority(self) -> str:  # type: ignore[override]
        """The reference plan's and stage 2's ordering: ``order``."""
        return self.order

    def validate(self) -> None:
        super().validate()
        if not isinstance(self.order, str):
            raise InputError(f"an ordering is a name, got {self.order!r}", field="order")
        make_ordering(self.order, field="order")
        check_margin(self.margin)

    def start(self, view: View) -> None:
        super().start(view)
        check_power_inputs(self.name, view)

    def _modelled_within(self, view: View, pred: np.ndarray, budget: float) -> Candidates:
        """As :meth:`HCP._modelled` over the waiting jobs whose predicted power is within
        ``budget`` (the others cannot start under the cap now)."""
        q = view.queue
        now = view.now
        keep = np.flatnonzero(pred[q.jobs] <= budget)
        rows, units, est, sub = q.jobs[keep], q.units[keep], q.estimate[keep], q.submit[keep]
        if self.model_order == "queue":
            k = min(self.q_length, len(rows))
            cand = self._candidates(view, rows[:k], units[:k], est[:k], sub[:k])
        else:
            cand = self._candidates(view, rows, units, est, sub)
            cand = self._ordered(cand, now, "urgency")
            cand = cand.take(np.arange(min(self.q_length, len(cand.rows))))
        return self._ordered(cand, now, self.priority)

    def dispatch(self, view: View) -> list[Decision]:
        q = view.queue
        if len(q.jobs) == 0:
            return []
        cap = view.cap
        if cap is None:
            return self._hybrid_pass(view, self._modelled(view))
        margin = float(self.margin)
        budget = margin * float(cap)
        prediction = view.power_prediction
        assert prediction is not None  # requires.power_predictions (checked in start)
        pred = np.asarray(prediction[0], dtype=np.float64)
        out = reject_never_fitting(self.name, view, q.jobs, pred, margin)
        cand = self._modelled_within(view, pred, budget)
        if len(cand.rows) == 0:
            self.pass_log_.append(pass_facts(view.now, None, modelled=0, status="NO_FIT"))
            return out
        running = running_power_prediction(view)
        pc = pred[cand.rows]
        power = PassPower(pc, power_sum(running), budget, PowerBudget(pc, budget, running),
                          model_power(running, pc, budget))
        return out + self._hybrid_pass(view, cand, power)


__all__ = ["DEC", "model_power"]
