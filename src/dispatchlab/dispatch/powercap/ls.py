"""LS, the list scheduler of Borghesi et al. 2018: PRB with power as one more resource.

**LS** (``LS(order="ewt", allocator="energy-consolidate", default_ewt=1800,
margin=1.0)``, name ``ls``; Borghesi et al. 2018 section 4.2, and PA-HPC-SIM's code). A
:class:`~dispatchlab.dispatch.prb.PRB` whose defaults are Borghesi et al. 2018's: jobs in ``ewt``
order (ascending expected waiting time of their queue, ties ascending job demand), nodes
energy-efficient first then fewer free resources (``energy-consolidate``: the platform's
``efficiency_rank``, on Eurora the 2.1 GHz nodes 0-31). When a power cap applies now
(``view.cap``, W) a job starts only if

* it fits the free resources (as PRB: the allocator maps all its units), **and**
* ``sum over running jobs of predicted power x current level`` + the predicted power of
  the jobs started earlier in this pass + its own predicted power ``<= margin x cap``
  (PA-HPC-SIM's code: a single scalar check before mapping the units).

The predicted power of a job is its power prediction's mean (``view.power_prediction``,
W at full level); running jobs without a prediction count 0 W. Jobs that do not fit are
skipped, not waited for (no reservation), as in PRB. ``margin`` (0 < margin <= 1) is the
safety margin of Borghesi et al. 2018's misprediction study (5.2.4). Without a cap now the pass *is*
PRB's with the same order and allocator (the same code decides).

*Ours*: a waiting job whose predicted power alone exceeds ``margin x`` the largest cap of
the rest of the run (no uncapped time ahead) can never start; it is rejected with that
reason rather than left waiting forever (as the Carastan-Santos et al. 2024 power dispatchers do).
Sums of running power are correctly rounded (:func:`~dispatchlab.dispatch.prb.power_sum`).

**Proactive form** (:meth:`LS.plan`): PRB's proactive list schedule with the power
dimension (:class:`~dispatchlab.dispatch.prb.PowerBudget`; future cap steps ignored,
ours); its start-now part equals LS's decisions; it is DEC's hint and reference.

Works on counting (pooled) and node-level platforms. Needs a power predictor when the
run has a cap (``needs_power``)."""

from __future__ import annotations

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.base import Decision, Reject, Start, View
from dispatchlab.dispatch.orderings import OrderKeys
from dispatchlab.dispatch.prb import (
    PRB,
    PowerBudget,
    ProactivePlan,
    power_sum,
    proactive_schedule,
    running_power_prediction,
)


def check_margin(margin) -> float:
    """``margin`` as a float in (0, 1], else :class:`InputError` on field ``margin``."""
    if isinstance(margin, bool) or not isinstance(margin, int | float | np.floating) \
            or not 0 < float(margin) <= 1:
        raise InputError(f"must be a number in (0, 1], got {margin!r}", field="margin")
    return float(margin)


def check_power_inputs(name: str, view: View) -> None:
    """A capped run needs power predictions (InputError naming ``power-predictor``)."""
    if view.cap_schedule is not None and view.power_prediction is None:
        raise InputError(f"{name} needs job power predictions under a power cap: give a "
                         "power predictor (--power-predictor)", field="power-predictor")


def largest_cap_left(view: View) -> float | None:
    """The largest cap from now to the end of the cap schedule (W), or None when some
    time ahead (or now) is uncapped."""
    sched = view.cap_schedule
    caps = [view.cap] + ([w for t, w in sched.steps if t > view.now] if sched else [])
    known = [c for c in caps if c is not None]
    if len(known) < len(caps):
        return None
    return float(max(known))


def never_fitting(view: View, rows: np.ndarray, pred: np.ndarray,
                  margin: float) -> tuple[np.ndarray, float | None]:
    """Positions (into ``rows``) of waiting jobs whose predicted power alone exceeds
    ``margin`` x the largest cap left (ours: they can never start), and that cap."""
    top = largest_cap_left(view)
    if top is None or len(rows) == 0:
        return np.zeros(0, dtype=np.int64), top
    return np.flatnonzero(np.asarray(pred)[rows] > margin * top), top


def reject_never_fitting(name: str, view: View, rows: np.ndarray, pred: np.ndarray,
                         margin: float) -> list[Decision]:
    """The :class:`Reject` decisions of :func:`never_fitting` jobs, with the reason."""
    never, top = never_fitting(view, rows, pred, margin)
    return [Reject(int(rows[p]), f"its predicted power ({float(pred[rows[p]]):,.0f} W) "
                   f"exceeds {name}'s budget at the largest cap left ({margin:g} x "
                   f"{top:,.0f} W)") for p in never.tolist()]


class LS(PRB):
    """Borghesi et al. 2018's list scheduler: PRB with ``ewt`` order, ``energy-consolidate`` nodes
    and the predicted power of running and started jobs checked against ``margin x cap``.
    See the module docstring."""

    name = "ls"
    #: the simulation must give power predictions (``check_dispatcher`` supplies them)
    needs_power = True
    #: a power-capping method: the command line refuses it without a cap
    needs_cap = True

    def __init__(self, order: str = "ewt", allocator: str = "energy-consolidate",
                 default_ewt: int = 1800, margin: float = 1.0) -> None:
        super().__init__(order=order, allocator=allocator, default_ewt=default_ewt)
        self.margin = margin

    def validate(self) -> None:
        super().validate()
        check_margin(self.margin)

    def start(self, view: View) -> None:
        super().start(view)
        check_power_inputs(self.name, view)

    def power_budget(self, view: View, rows: np.ndarray) -> PowerBudget | None:
        """The plan's :class:`PowerBudget` for waiting rows ``rows`` (None: no cap now)."""
        cap = view.cap
        if cap is None:
            return None
        prediction = view.power_prediction
        assert prediction is not None  # requires.power_predictions (checked in start)
        pred = np.asarray(prediction[0], dtype=np.float64)[rows]
        return PowerBudget(pred, float(self.margin) * float(cap),
                           running_power_prediction(view))

    def plan(self, view: View, limit: int | None = None) -> ProactivePlan:
        """The proactive schedule of the first ``limit`` waiting jobs (queue order) with
        the power dimension when a cap applies now (see :meth:`PRB.plan`)."""
        q = view.queue
        k = len(q.jobs) if limit is None else min(int(limit), len(q.jobs))
        rows, est = q.jobs[:k], q.estimate[:k]
        return proactive_schedule(view, rows, est, self.ordering_, self.allocator_,
                                  self.ewt_[rows], est * self.width_[rows],
                                  power=self.power_budget(view, rows))

    def dispatch(self, view: View) -> list[Decision]:
        cap = view.cap
        if cap is None:
            return super().dispatch(view)
        self._after = None  # PRB's submissions-only shortcut holds for uncapped passes only
        q = view.queue
        if len(q.jobs) == 0:
            return []
        margin = float(self.margin)
        budget = margin * float(cap)
        prediction = view.power_prediction
        assert prediction is not None  # requires.power_predictions (checked in start)
        pred = np.asarray(prediction[0], dtype=np.float64)
        used = power_sum(running_power_prediction(view))
        out = reject_never_fitting(self.name, view, q.jobs, pred, margin)
        # a rejected job's power alone exceeds the budget: the check below skips it
        if view.counting:
            return out + self._capped_counting(view, q, pred, used, budget)
        return out + self._dispatch_nodes(view, q, power=(pred, used, budget))

    def _capped_counting(self, view: View, q, pred: np.ndarray, used: float,
                         budget: float) -> list[Decision]:
        free = int(view.free_cores)
        cand = np.flatnonzero((q.units <= free) & (used + pred[q.jobs] <= budget))
        if len(cand) == 0:
            return []
        rows, units = q.jobs[cand], q.units[cand]
        keys = OrderKeys(rows, int(view.now), q.submit[cand], q.estimate[cand],
                         self.ewt_[rows], q.estimate[cand] * self.width_[rows])
        out: list[Decision] = []
        for p in self.ordering_.sort(keys).tolist():
            u = int(units[p])
            w = float(pred[rows[p]])
            if u <= free and used + w <= budget:
                out.append(Start(int(rows[p])))
                free -= u
                used += w
                if free == 0:
                    break
        return out


__all__ = ["LS", "check_margin", "largest_cap_left", "never_fitting", "reject_never_fitting"]
