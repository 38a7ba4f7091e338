"""The learning-to-rank ordering ``l2r`` (Darrous, learning-to-rank report): the score of a
learned ranking model, one of the registered :mod:`~dispatchlab.dispatch.orderings`.

Its own module, registered lazily in :data:`~dispatchlab.dispatch.orderings.ORDERINGS`
(``"dispatchlab.dispatch.l2r:L2ROrder"``), because it loads the model code of
:mod:`dispatchlab.rank` (and the workload package it reads): a command that does not use
the ordering does not import it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.dispatch.orderings import Ordering, OrderKeys, _by_score
from dispatchlab.rank.features import check_feature_set_name, job_features
from dispatchlab.rank.model import L2RModel, check_feature_set

__all__ = ["L2ROrder"]


class L2ROrder(Ordering):
    """The score of a learned ranking model (Darrous, learning-to-rank report): ``model`` is the
    path of a model
    file written by ``dispatchlab l2r train``. Each job's features are computed once,
    from the job table, with the model's feature set (``causal``: what is known at
    submission; ``seed``: the paper's five fields, including the trace's *recorded*
    wait and actual run time, which no real scheduler knows); descending score, ties by
    submit time, then job row. ``features`` (``causal`` | ``seed``; empty: the model's)
    names the feature set the caller expects: a model trained on another set is refused
    (:class:`InputError`, field ``features``) instead of being scored with columns it
    was not fitted on."""

    name = "l2r"
    static = True

    def __init__(self, model: str = "", features: str = "") -> None:
        self.model = model
        self.features = features

    def input_files(self) -> tuple[str, ...]:
        """The model file, absolute (a relative ``model`` is read from the current
        directory); none without a model. Its contents join a campaign run's key (see
        :func:`dispatchlab.experiment.provenance.declared_input_files`)."""
        if not isinstance(self.model, str) or not self.model:
            return ()
        return (str(Path(self.model).resolve()),)

    def start(self, view) -> None:
        if not self.model:
            raise InputError("the l2r ordering needs a model file (l2r:model=PATH)",
                             field="model")
        if self.features:
            check_feature_set_name(self.features)
        model = L2RModel.load(self.model)
        if self.features:
            check_feature_set(model, self.features)
        self.model_ = model
        self.score_ = model.score(job_features(view.jobs, model.feature_set))

    def sort(self, keys: OrderKeys) -> np.ndarray:
        return _by_score(keys, self.score_[np.asarray(keys.rows, dtype=np.int64)])
