"""Learning-to-rank training (Darrous, learning-to-rank report): cutting a trace into
training lists (:mod:`~dispatchlab.experiment.l2r.split`) and the pipeline that simulates
them, labels them and trains a model (:mod:`~dispatchlab.experiment.l2r.pipeline`).

The run-time pieces (features, learners, the model file) are :mod:`dispatchlab.rank`;
this package re-exports them with the split, as the old ``dispatchlab.l2r`` did.
"""

from __future__ import annotations

from dispatchlab.experiment.l2r.split import TRAIN_FRACTION, Split, split_lists, training_size
from dispatchlab.rank import *  # noqa: F403
from dispatchlab.rank import __all__ as _rank_all

__all__ = [*_rank_all, "TRAIN_FRACTION", "Split", "split_lists", "training_size"]
