"""Tsafrir, Etsion & Feitelson (2007): the mean of the user's last two run times."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dispatchlab.predict.duration.base import Predictor

if TYPE_CHECKING:
    from dispatchlab.predict.duration.base import PredictorContext


class TsafrirPredictor(Predictor):
    """Tsafrir et al. (2007): mean run time of the user's last two completed jobs.

    The user's last two jobs are the two that completed most recently at or before the
    submission (ties on the completion time: the larger job row counts as the later);
    a job ending exactly at the submission time is used, a job still running is not.
    The estimate is the mean of their observed run times (completion minus start,
    integer seconds, rounded up), capped by the job's wall-time (requested time). With
    a single completed job, its run time (capped); with none, or for jobs without a
    user id (``user == -1``), the wall-time. A job outliving its estimate gets the
    default treatment of :class:`Predictor` (jump to the wall-time). O(1) per job: the
    last two completions of each user are kept.
    """

    name = "tsafrir"

    def __init__(self) -> None:
        pass

    def start(self, context: PredictorContext) -> None:
        super().start(context)
        self.user_list_ = context.jobs["user"].tolist()
        # user -> up to two (completion time, job row, observed run), oldest first
        self.last_: dict[int, list[tuple[int, int, int]]] = {}

    def predict(self, job: int, now: int) -> int:
        wall = int(self._requested[job])
        user = self.user_list_[job]
        if user == -1:
            return wall
        last = self.last_.get(user)
        if not last:
            return wall
        if len(last) == 1:
            return min(last[0][2], wall)
        return min(-(-(last[0][2] + last[1][2]) // 2), wall)

    def observe(self, job: int, now: int) -> None:
        user = self.user_list_[job]
        if user == -1:
            return
        entry = (now, job, now - int(self.context_.start_times[job]))
        last = self.last_.setdefault(user, [])
        last.append(entry)
        if len(last) > 1 and last[-2] > entry:  # a tie at `now` with a larger row
            last.sort()
        if len(last) > 2:
            del last[0]
