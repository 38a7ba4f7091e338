"""Learners: the paper's relevance target, within-list pairs, RankSVM and LambdaMART.

The target (:func:`finish_order_scores`) follows the seed: in the kept simulated
schedule of a training list, the job that finishes first gets 999999, the next 999998,
and so on; a learner is fitted so that a higher score means "should finish earlier",
and at test time the waiting queue is sorted by descending score.

Two learners share ``fit(X, y, qid) -> self`` and ``score(X) -> ndarray``:

* :class:`RankSVM` — the paper's learner (SVMrank ``svm_rank_learn -c 3``): a linear
  pairwise hinge-loss SVM without intercept, fitted with scikit-learn's ``LinearSVC``
  on within-list difference vectors;
* :class:`LambdaMART` — *Ours*: LightGBM's ``lambdarank`` gradient-boosted trees, a
  listwise alternative that is not in the seed.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple, Protocol

import numpy as np

from dispatchlab.core.errors import InputError

#: the paper's score of the first finished job of a list (``1000000 - 1``)
TOP_SCORE = 999_999
#: lists with more index pairs than this are sub-sampled without enumerating all pairs
_ENUMERATE_LIMIT = 4_000_000
#: cells of one boolean block while enumerating pairs (bounds the temporary memory)
_BLOCK_CELLS = 2_000_000
#: LightGBM's default ``label_gain`` has 31 entries: relevance labels 0..30
MAX_GRADES = 31


def finish_order_scores(end: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """The paper's relevance target: by finish order, ``999999, 999998, ...`` (int64).

    Jobs are ordered by ``end`` (any time unit) ascending, ties by ``rows`` ascending
    (default: the position in ``end``; pyss writes a job's output line when it ends, so
    equal end times keep the simulator's event order, which we take to be row order).
    The first gets ``999999``: an earlier finish means a higher score. The result is
    aligned with the input (``out[k]`` is the score of ``end[k]``).
    """
    end_a = np.asarray(end)
    n = len(end_a)
    rows_a = np.arange(n) if rows is None else np.asarray(rows)
    if rows_a.shape != end_a.shape:
        raise ValueError(f"rows has shape {rows_a.shape}, end has {end_a.shape}")
    order = np.lexsort((rows_a, end_a))
    out = np.empty(n, dtype=np.int64)
    out[order] = TOP_SCORE - np.arange(n, dtype=np.int64)
    return out


class PairSet(NamedTuple):
    """Preference pairs: job ``i[k]`` should rank above job ``j[k]`` (``y[i] > y[j]``).

    Indices are positions in the ``y``/``qid`` arrays given to :func:`pairs`;
    ``weight[k]`` is ``available / used`` for the list of pair ``k`` (1.0 when the list
    was not sub-sampled).
    """

    i: np.ndarray
    j: np.ndarray
    weight: np.ndarray


def _enumerate_pairs(yl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ``(a, b)``, ``a < b``, with ``yl[a] != yl[b]``, in ``(a, b)`` order; built by
    row blocks so that the temporary memory stays bounded."""
    m = len(yl)
    block = max(1, _BLOCK_CELLS // max(m, 1))
    cols = np.arange(m)
    out_a: list[np.ndarray] = []
    out_b: list[np.ndarray] = []
    for s in range(0, m, block):
        e = min(m, s + block)
        a_idx = np.arange(s, e)[:, None]
        mask = (cols[None, :] > a_idx) & (yl[None, :] != yl[s:e, None])
        ra, rb = np.nonzero(mask)
        out_a.append(ra + s)
        out_b.append(rb)
    return np.concatenate(out_a), np.concatenate(out_b)


def _sample_pairs_rejection(
    yl: np.ndarray, k: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``k`` distinct untied pairs ``(a, b)``, ``a < b``, uniformly without replacement,
    by drawing random index pairs and rejecting ties and repeats (the first ``k``
    distinct accepted draws are a uniform ``k``-subset). Sorted by ``(a, b)``."""
    m = len(yl)
    chosen = np.empty(0, dtype=np.int64)
    while len(chosen) < k:
        size = 2 * (k - len(chosen)) + 16
        a = rng.integers(0, m, size=size)
        b = rng.integers(0, m - 1, size=size)
        b = b + (b >= a)
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        keep = yl[lo] != yl[hi]
        codes = np.concatenate([chosen, lo[keep] * m + hi[keep]])
        _, first = np.unique(codes, return_index=True)
        chosen = codes[np.sort(first)][:k]
    chosen = np.sort(chosen)
    return chosen // m, chosen % m


def pairs(
    y: np.ndarray,
    qid: np.ndarray,
    *,
    max_pairs_per_list: int,
    rng: np.random.Generator,
) -> PairSet:
    """Within-list preference pairs, sub-sampled on big lists.

    For every list (equal ``qid``; lists need not be contiguous), every pair of its jobs
    with different ``y`` is *available*, oriented so that ``y[i] > y[j]``; ties give no
    pair and no pair ever joins two lists. When a list has more than
    ``max_pairs_per_list`` available pairs, a uniform sample of that many, without
    replacement, drawn from ``rng``, is used, and each of its pairs gets the weight
    ``available / used`` (*Ours*: so that a sub-sampled list keeps its share of the
    loss, as if all its pairs were there). Lists are visited in ascending ``qid``; pairs
    come in list order, then by the list's positions ``(a, b)`` with ``a < b``.

    Memory: lists with up to ~2800 jobs (4M index pairs) are enumerated in bounded
    blocks; bigger lists that must be sub-sampled are sampled by rejection without
    enumerating their pairs. The same ``y``, ``qid`` and generator state give the
    same pairs.
    """
    if max_pairs_per_list < 1:
        raise ValueError(f"max_pairs_per_list must be >= 1, got {max_pairs_per_list}")
    y_a = np.asarray(y)
    q_a = np.asarray(qid)
    if y_a.ndim != 1 or y_a.shape != q_a.shape:
        raise ValueError(f"y and qid must be 1-D of equal length, got {y_a.shape}/{q_a.shape}")
    order = np.argsort(q_a, kind="stable")
    _, starts, counts = np.unique(q_a[order], return_index=True, return_counts=True)
    out_i: list[np.ndarray] = []
    out_j: list[np.ndarray] = []
    out_w: list[np.ndarray] = []
    for start, m in zip(starts.tolist(), counts.tolist(), strict=True):
        if m < 2:
            continue
        members = order[start:start + m]
        yl = y_a[members]
        total = m * (m - 1) // 2
        _, tie_counts = np.unique(yl, return_counts=True)
        available = total - int((tie_counts * (tie_counts - 1) // 2).sum())
        if available == 0:
            continue
        if available <= max_pairs_per_list:
            a, b = _enumerate_pairs(yl)
        elif total <= _ENUMERATE_LIMIT or available <= 2 * max_pairs_per_list:
            a, b = _enumerate_pairs(yl)
            pick = np.sort(rng.choice(len(a), size=max_pairs_per_list, replace=False))
            a, b = a[pick], b[pick]
        else:
            a, b = _sample_pairs_rejection(yl, max_pairs_per_list, rng)
        a_first = yl[a] > yl[b]
        out_i.append(members[np.where(a_first, a, b)])
        out_j.append(members[np.where(a_first, b, a)])
        out_w.append(np.full(len(a), available / len(a), dtype=np.float64))
    if not out_i:
        empty = np.empty(0, dtype=np.int64)
        return PairSet(empty, empty.copy(), np.empty(0, dtype=np.float64))
    return PairSet(np.concatenate(out_i).astype(np.int64),
                   np.concatenate(out_j).astype(np.int64), np.concatenate(out_w))


def _check_xyq(X: np.ndarray, y: np.ndarray, qid: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X_a = np.asarray(X, dtype=np.float64)
    y_a = np.asarray(y, dtype=np.float64)
    q_a = np.asarray(qid)
    if X_a.ndim != 2 or y_a.ndim != 1 or q_a.ndim != 1 or not (
            len(X_a) == len(y_a) == len(q_a)):
        raise ValueError(f"X (n x f), y (n) and qid (n) disagree: {X_a.shape}, "
                         f"{y_a.shape}, {q_a.shape}")
    if len(X_a) == 0 or X_a.shape[1] == 0:
        raise InputError("no training job or no feature: nothing to learn", field="lists")
    return X_a, y_a, q_a


class Learner(Protocol):
    """What the pipeline needs from a learner."""

    name: str

    def fit(self, X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> Learner: ...

    def score(self, X: np.ndarray) -> np.ndarray: ...


class RankSVM:
    """Pairwise linear ranking SVM, as SVMrank (``svm_rank_learn``) with L1 slack.

    Solves ``min_w 1/2 |w|^2 + C_eff * sum_k s_k * max(0, 1 - w.(x_i - x_j))`` over the
    pairs ``(i, j)`` of :func:`pairs` (``y_i > y_j``, same list; ``s_k`` their weights),
    linear, **no intercept**; ``score(X) = X @ coef_`` (higher = rank first).

    ``C`` is SVMrank's ``-c`` (the report used 3). SVMrank's C is scaled by the number of
    training rankings: its documentation gives ``C_light = C_rank / n`` with ``n`` the
    number of queries, where SVM-light's ``-z p`` objective sums one slack per pair. So
    ``C_eff = C / n_lists`` (``n_lists`` = distinct ``qid`` values in the training data)
    is passed to scikit-learn's ``LinearSVC(loss="hinge", fit_intercept=False,
    dual=True)`` with the pair weights as ``sample_weight``. (This scaling is
    our reading, not confirmed in SVMrank's code; SVMrank itself solves the equivalent
    one-slack problem with a cutting-plane method, so coefficients agree only up to the
    solvers' tolerances.)

    ``LinearSVC`` needs two classes: each pair is the difference vector ``x_i - x_j``
    labelled +1, and a seeded half of them is negated (vector and label). Without an
    intercept this changes nothing in the objective (``hinge(-(w.(-d))) =
    hinge(w.d)``). A single pair is given in both signs at half weight each.

    ``max_pairs_per_list`` bounds the pairs per list (*Ours*: SVMrank uses all pairs;
    weights ``available / used`` keep each list's share). ``seed`` drives the pair
    sample, the sign flips and liblinear's coordinate order: the same data and seed give
    identical ``coef_``. After ``fit``: ``coef_`` (float64, one weight per feature),
    ``n_pairs_`` (pairs used), ``n_lists_``, ``C_eff_``, ``n_iter_`` and ``converged_``
    (``n_iter_ < max_iter``; the ConvergenceWarning is not raised).
    """

    name = "ranksvm"

    def __init__(self, C: float = 3.0, max_pairs_per_list: int = 2000, seed: int = 0,
                 *, max_iter: int = 10_000, tol: float = 1e-4) -> None:
        if not C > 0:
            raise InputError(f"C must be > 0, got {C}", field="C")
        if max_pairs_per_list < 1:
            raise InputError(f"max_pairs_per_list must be >= 1, got {max_pairs_per_list}",
                             field="max_pairs_per_list")
        self.C = float(C)
        self.max_pairs_per_list = int(max_pairs_per_list)
        self.seed = int(seed)
        self.max_iter = int(max_iter)
        self.tol = float(tol)
        self.coef_: np.ndarray | None = None
        self.n_pairs_ = 0
        self.n_lists_ = 0
        self.C_eff_ = 0.0
        self.n_iter_ = 0
        self.converged_ = False

    def fit(self, X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> RankSVM:
        """Fit on rows ``X`` (n x f, already normalised), targets ``y`` (higher = rank
        first) and list ids ``qid``. :class:`InputError` (field ``lists``) when no list
        has two jobs with different targets."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC

        X_a, y_a, q_a = _check_xyq(X, y, qid)
        rng = np.random.default_rng(self.seed)
        ps = pairs(y_a, q_a, max_pairs_per_list=self.max_pairs_per_list, rng=rng)
        n_pairs = len(ps.i)
        if n_pairs == 0:
            raise InputError("no training list has two jobs with different targets: "
                             "no pair to learn from", field="lists")
        diff = X_a[ps.i] - X_a[ps.j]
        label = np.ones(n_pairs, dtype=np.int64)
        weight = ps.weight.copy()
        flip = rng.permutation(n_pairs)[: n_pairs // 2]
        diff[flip] *= -1.0
        label[flip] = -1
        if n_pairs == 1:
            diff = np.vstack([diff, -diff])
            label = np.array([1, -1], dtype=np.int64)
            weight = np.repeat(weight / 2.0, 2)
        self.n_lists_ = len(np.unique(q_a))
        self.C_eff_ = self.C / self.n_lists_
        svc = LinearSVC(loss="hinge", fit_intercept=False, C=self.C_eff_, dual=True,
                        max_iter=self.max_iter, tol=self.tol, random_state=self.seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svc.fit(diff, label, sample_weight=weight)
        self.coef_ = np.asarray(svc.coef_, dtype=np.float64).ravel().copy()
        self.n_pairs_ = n_pairs
        self.n_iter_ = int(np.max(svc.n_iter_))
        self.converged_ = self.n_iter_ < self.max_iter
        return self

    def score(self, X: np.ndarray) -> np.ndarray:
        """``X @ coef_`` (float64): higher = should finish earlier = ranks first."""
        if self.coef_ is None:
            raise RuntimeError("RankSVM.score before fit")
        return np.asarray(X, dtype=np.float64) @ self.coef_


def graded_labels(y: np.ndarray, qid: np.ndarray, max_grades: int = MAX_GRADES
                  ) -> np.ndarray:
    """Small integer relevance labels for ``lambdarank`` (int32, aligned with ``y``).

    *Ours*: in a list of ``m`` jobs, job ``k``'s rank ``r`` is the number of jobs of the
    list with a strictly smaller ``y`` (0 for the latest finisher; equal ``y`` share the
    rank), and its label is ``r * G // m`` with ``G = min(max_grades, m)``: the list's
    ranks cut into ``G`` equal-size grades, higher = earlier finish. With the default
    ``G <= 31`` the labels fit LightGBM's default ``label_gain`` (``2^l - 1``, l <= 30).
    """
    y_a = np.asarray(y)
    q_a = np.asarray(qid)
    out = np.zeros(len(y_a), dtype=np.int32)
    order = np.argsort(q_a, kind="stable")
    _, starts, counts = np.unique(q_a[order], return_index=True, return_counts=True)
    for start, m in zip(starts.tolist(), counts.tolist(), strict=True):
        members = order[start:start + m]
        yl = y_a[members]
        r = np.searchsorted(np.sort(yl), yl, side="left")
        g = min(max_grades, m)
        out[members] = (r * g // m).astype(np.int32)
    return out


class LambdaMART:
    """*Ours* (not in the seed): LightGBM ``lambdarank`` gradient-boosted trees.

    ``fit`` sorts the rows by ``qid`` (stable), turns each list's targets into graded
    labels (:func:`graded_labels`: at most 31 equal-size grades, higher = earlier
    finish), and fits ``LGBMRanker(objective="lambdarank", n_estimators, learning_rate,
    num_leaves, deterministic=True, num_threads=1, random_state=seed, verbose=-1)``
    with one group per list. Extra keyword arguments go to ``LGBMRanker`` unchanged.
    ``score(X)`` is the booster's raw prediction (higher = ranks first). Single-threaded
    and deterministic: the same data and seed give identical scores. The fitted booster
    is ``booster_``; :meth:`model_string` serialises it
    (``lightgbm.Booster(model_str=...)`` reads it back).
    """

    name = "lambdamart"

    def __init__(self, n_estimators: int = 100, learning_rate: float = 0.1,
                 num_leaves: int = 15, seed: int = 0, **lgbm_params: Any) -> None:
        self.n_estimators = int(n_estimators)
        self.learning_rate = float(learning_rate)
        self.num_leaves = int(num_leaves)
        self.seed = int(seed)
        self.lgbm_params = dict(lgbm_params)
        self.booster_: Any = None
        self.n_lists_ = 0

    def fit(self, X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> LambdaMART:
        """Fit on rows ``X`` (n x f), targets ``y`` (higher = rank first), lists ``qid``."""
        import lightgbm

        X_a, y_a, q_a = _check_xyq(X, y, qid)
        order = np.argsort(q_a, kind="stable")
        X_s, y_s, q_s = X_a[order], y_a[order], q_a[order]
        _, counts = np.unique(q_s, return_counts=True)
        labels = graded_labels(y_s, q_s)
        params: dict[str, Any] = {
            "objective": "lambdarank", "n_estimators": self.n_estimators,
            "learning_rate": self.learning_rate, "num_leaves": self.num_leaves,
            "deterministic": True, "num_threads": 1, "random_state": self.seed,
            "verbose": -1,
        }
        params.update(self.lgbm_params)
        model = lightgbm.LGBMRanker(**params)
        model.fit(X_s, labels, group=counts)
        self.booster_ = model.booster_
        self.n_lists_ = len(counts)
        return self

    def score(self, X: np.ndarray) -> np.ndarray:
        """The booster's raw score per row (float64): higher = ranks first."""
        if self.booster_ is None:
            raise RuntimeError("LambdaMART.score before fit")
        return np.asarray(self.booster_.predict(np.asarray(X, dtype=np.float64)),
                          dtype=np.float64)

    def model_string(self) -> str:
        """The fitted booster as LightGBM's text model."""
        if self.booster_ is None:
            raise RuntimeError("LambdaMART.model_string before fit")
        return str(self.booster_.model_to_string())


#: learner name -> class
LEARNERS: dict[str, type[RankSVM] | type[LambdaMART]] = {
    "ranksvm": RankSVM,
    "lambdamart": LambdaMART,
}


def make_learner(name: str, **params: Any) -> RankSVM | LambdaMART:
    """A new learner by name (``"ranksvm"`` or ``"lambdamart"``) with ``params`` passed
    to its constructor. :class:`InputError` (field ``learner``) for an unknown name or
    a parameter the learner does not take."""
    try:
        cls = LEARNERS[name]
    except (KeyError, TypeError):
        valid = ", ".join(sorted(LEARNERS))
        raise InputError(f"unknown learner {name!r} (valid: {valid})",
                         field="learner") from None
    try:
        return cls(**params)
    except TypeError as exc:
        raise InputError(f"bad parameter for learner {name!r}: {exc}",
                         field="learner") from None
