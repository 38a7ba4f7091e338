"""D: the user-history profile heuristic of Galleguillos et al. (section 3)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from dispatchlab.predict.duration.base import Predictor

if TYPE_CHECKING:
    from dispatchlab.predict.duration.base import PredictorContext

_TRAILING_DIGITS = re.compile(r"\d+$")

#: rule numbers whose profile uses the name prefix instead of the name
_PREFIX_RULES = (2, 4, 6)


def name_prefix(name: Any) -> Any:
    """The job name without its trailing number (``"job12"`` -> ``"job"``), or ``None``
    when the name has no prefix: numeric names (SWF executable numbers, or strings made
    only of digits) and empty names, whose prefix would match every job."""
    if not isinstance(name, str):
        return None
    prefix = _TRAILING_DIGITS.sub("", name)
    return prefix or None


class HistoryPredictor(Predictor):
    """D: predict from the user's most recent completed job with a matching profile.

    For a job of user ``u`` submitted at ``t``, the candidates are the jobs of ``u``
    that completed at or before ``t`` (a job ending exactly at ``t`` is used, since
    completions at a timestamp are observed before the submissions at that timestamp;
    a job still running is not). The first rule that matches wins:

    1. same job name, queue, wall-time (requested time) and resources of each type
       (number of units and per-unit amount of every resource);
    2. as 1 with the job-name prefix (the name without its trailing number,
       ``"job12"`` -> ``"job"``) instead of the name;
    3. same name, queue and wall-time (resources may differ);
    4. as 3 with the name prefix;
    5. same name;
    6. same name prefix;
    7. otherwise: the job's wall-time.

    Among the jobs matching a rule, the one that completed most recently is used (ties
    on the completion time: the later submitted one, i.e. the larger job row). The
    prediction is its observed run time (completion minus start, seconds), capped by
    the current job's wall-time when ``cap_by_walltime`` (the default). All times are
    integer seconds.

    The job name is the table's string column ``name`` when present, else the SWF
    executable (application) number (field 14, ``app``); the queue is the column
    ``queue`` (SWF field 15, or a string column). A numeric name has no prefix, and
    neither has a name made only of digits: rules 2, 4 and 6 are skipped for it. -1 is
    an ordinary value, so on traces without application numbers the profile is user +
    queue + wall-time + resources. Jobs without a user id (``user == -1``) get their
    wall-time and are counted under ``"no_user"``.

    After a run, ``rule_counts_`` maps each rule number (7 for the fall-back) and
    ``"no_user"`` to the number of jobs predicted that way. Each prediction and each
    observation costs O(1) (one hash map per rule, keyed by user + profile, holding the
    latest match: (completion time, job row, observed run time)).
    """

    name = "history"

    def __init__(self, cap_by_walltime: bool = True) -> None:
        self.cap_by_walltime = cap_by_walltime

    def start(self, context: PredictorContext) -> None:
        super().start(context)
        jobs = context.jobs
        n = len(jobs)
        names_col = jobs.columns.get("name")
        names = list(names_col) if names_col is not None else jobs["app"].tolist()
        queues_col = jobs["queue"]
        queues = list(queues_col) if queues_col.dtype == object else queues_col.tolist()
        units = jobs["units"].tolist()
        per_unit = [jobs.resources[k].tolist() for k in sorted(jobs.resources)]
        self.user_list_ = jobs["user"].tolist()
        self.wall_list_ = self._requested.tolist()
        self.name_list_ = names
        self.prefix_list_ = [name_prefix(x) for x in names]
        self.queue_list_ = queues
        self.res_list_ = [(units[i], *(col[i] for col in per_unit)) for i in range(n)]
        # rule -> {(user, profile...): (completion time, job row, observed run)}
        self.latest_: dict[int, dict[tuple, tuple[int, int, int]]] = {
            r: {} for r in range(1, 7)}
        self.rule_counts_: dict[int | str, int] = {r: 0 for r in range(1, 8)}
        self.rule_counts_["no_user"] = 0

    def _keys(self, job: int) -> list[tuple[int, tuple]]:
        """(rule, key) for rules 1..6, in rule order; prefix rules only with a prefix."""
        user = self.user_list_[job]
        name = self.name_list_[job]
        prefix = self.prefix_list_[job]
        queue = self.queue_list_[job]
        wall = self.wall_list_[job]
        res = self.res_list_[job]
        keys = [(1, (user, name, queue, wall, res))]
        if prefix is not None:
            keys.append((2, (user, prefix, queue, wall, res)))
        keys.append((3, (user, name, queue, wall)))
        if prefix is not None:
            keys.append((4, (user, prefix, queue, wall)))
        keys.append((5, (user, name)))
        if prefix is not None:
            keys.append((6, (user, prefix)))
        return keys

    def predict(self, job: int, now: int) -> int:
        wall = self.wall_list_[job]
        if self.user_list_[job] == -1:
            self.rule_counts_["no_user"] += 1
            return wall
        for rule, key in self._keys(job):
            hit = self.latest_[rule].get(key)
            if hit is not None:
                self.rule_counts_[rule] += 1
                run = hit[2]
                return min(run, wall) if self.cap_by_walltime else run
        self.rule_counts_[7] += 1
        return wall

    def observe(self, job: int, now: int) -> None:
        if self.user_list_[job] == -1:
            return  # never looked up
        entry = (now, job, now - int(self.context_.start_times[job]))
        for rule, key in self._keys(job):
            table = self.latest_[rule]
            old = table.get(key)
            if old is None or (old[0], old[1]) < (now, job):
                table[key] = entry
