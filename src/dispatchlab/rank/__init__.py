"""Learning to rank for backfilling (Darrous, learning-to-rank report): what a dispatcher
needs at run time, and the learners that train it.

Pieces (cutting a trace into training lists and the training pipeline are experiments:
:mod:`dispatchlab.experiment.l2r`):

* :mod:`~dispatchlab.rank.features` — per-job feature matrices (:data:`FEATURE_SETS`:
  the paper's five SWF fields, or the causal submit-time set used by default) and the
  paper's min-max normalisation (:func:`fit_minmax`, :func:`apply_minmax`);
* :mod:`~dispatchlab.rank.learn` — the target (:func:`finish_order_scores`: earlier
  finish in the best simulated schedule = higher score), within-list preference pairs
  (:func:`pairs`), and the learners :class:`RankSVM` (the paper's SVMrank) and
  :class:`LambdaMART` (ours, LightGBM);
* :mod:`~dispatchlab.rank.model` — :class:`L2RModel`, the trained model and its JSON
  file (:func:`load_model`, :func:`check_feature_set`).

Simulating the lists and the test part, choosing the best policy per list and using
the scores in the dispatcher are the job of the layers above; this package depends only
on numpy, scikit-learn, LightGBM and :mod:`dispatchlab.workload`.
"""

from __future__ import annotations

from dispatchlab.rank.features import (
    DEFAULT_FEATURE_SET,
    FEATURE_SETS,
    apply_minmax,
    check_feature_set_name,
    fit_minmax,
    hour_of_day,
    job_features,
    user_jobs_before,
    user_last2_run,
)
from dispatchlab.rank.learn import (
    LEARNERS,
    MAX_GRADES,
    TOP_SCORE,
    LambdaMART,
    Learner,
    PairSet,
    RankSVM,
    finish_order_scores,
    graded_labels,
    make_learner,
    pairs,
)
from dispatchlab.rank.model import (
    MODEL_FORMAT,
    MODEL_VERSION,
    L2RModel,
    check_feature_set,
    load_model,
)

__all__ = [
    "DEFAULT_FEATURE_SET",
    "FEATURE_SETS",
    "LEARNERS",
    "MAX_GRADES",
    "MODEL_FORMAT",
    "MODEL_VERSION",
    "TOP_SCORE",
    "L2RModel",
    "LambdaMART",
    "Learner",
    "PairSet",
    "RankSVM",
    "apply_minmax",
    "check_feature_set",
    "check_feature_set_name",
    "finish_order_scores",
    "fit_minmax",
    "graded_labels",
    "hour_of_day",
    "job_features",
    "load_model",
    "make_learner",
    "pairs",
    "user_jobs_before",
    "user_last2_run",
]
