"""A trained L2R model: feature set, min-max bounds, learner parameters, and its file.

The file is JSON::

    {"format": "dispatchlab-l2r-model", "version": 1,
     "feature_set": "causal", "features": [...], "lo": [...], "hi": [...],
     "learner": "ranksvm" | "lambdamart",
     "coef": [...] | null, "booster": "<LightGBM text model>" | null,
     "summary": {...}}

Floats are written by Python's ``json`` (``repr``: the shortest text that reads back to
the same double), so a loaded model scores bit-for-bit like the saved one. Every
problem with a model file is an :class:`~dispatchlab.core.errors.InputError` whose ``file``
is the path and whose message names what is wrong.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.core.errors import InputError, digit_limit_message, one_line
from dispatchlab.rank.features import FEATURE_SETS, apply_minmax
from dispatchlab.rank.learn import LEARNERS, LambdaMART, RankSVM

#: the ``format`` value of a model file
MODEL_FORMAT = "dispatchlab-l2r-model"
#: the file version this code writes and reads
MODEL_VERSION = 1
_KEYS = ("format", "version", "feature_set", "features", "lo", "hi", "learner", "coef",
         "booster", "summary")


@dataclass(eq=False)
class L2RModel:
    """A trained ranking model.

    ``features`` are the column names of ``FEATURE_SETS[feature_set]``; ``lo``/``hi``
    the per-feature min-max bounds fitted on the training rows; ``learner`` is
    ``"ranksvm"`` (``coef``: one linear weight per feature, ``booster`` None) or
    ``"lambdamart"`` (``booster``: LightGBM's text model, ``coef`` None); ``summary``
    holds free-form JSON-able training facts (trace, lists, policies, counts, times).
    ``path`` is the file the model was loaded from or saved to (None otherwise).
    """

    feature_set: str
    features: tuple[str, ...]
    lo: np.ndarray
    hi: np.ndarray
    learner: str
    coef: np.ndarray | None = None
    booster: str | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    path: str | None = field(default=None, compare=False)
    _booster_obj: Any = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def from_fitted(cls, feature_set: str, lo: np.ndarray, hi: np.ndarray,
                    learner: RankSVM | LambdaMART,
                    summary: dict[str, Any] | None = None) -> L2RModel:
        """The model of a fitted learner trained on rows normalised with ``lo``/``hi``."""
        features = FEATURE_SETS[feature_set]
        if isinstance(learner, RankSVM):
            if learner.coef_ is None:
                raise ValueError("RankSVM is not fitted")
            return cls(feature_set, features, np.asarray(lo, np.float64).copy(),
                       np.asarray(hi, np.float64).copy(), "ranksvm",
                       coef=learner.coef_.copy(), summary=dict(summary or {}))
        return cls(feature_set, features, np.asarray(lo, np.float64).copy(),
                   np.asarray(hi, np.float64).copy(), "lambdamart",
                   booster=learner.model_string(), summary=dict(summary or {}))

    def normalise(self, X_raw: np.ndarray) -> np.ndarray:
        """``X_raw`` (n x len(features), raw feature values) min-max scaled with lo/hi."""
        return apply_minmax(X_raw, self.lo, self.hi)

    def score(self, X_raw: np.ndarray) -> np.ndarray:
        """Scores (float64, higher = ranks first) of raw feature rows ``X_raw``
        (n x len(features), as :func:`~dispatchlab.rank.features.job_features` gives them):
        min-max scaling with ``lo``/``hi`` (not clipped), then ``X @ coef`` (ranksvm) or
        the booster's raw prediction (lambdamart)."""
        X = self.normalise(X_raw)
        if self.learner == "ranksvm":
            assert self.coef is not None
            return X @ self.coef
        if self._booster_obj is None:
            import lightgbm

            self._booster_obj = lightgbm.Booster(model_str=self.booster)
        return np.asarray(self._booster_obj.predict(X), dtype=np.float64)

    def to_json(self) -> dict[str, Any]:
        """The file's JSON object."""
        return {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "feature_set": self.feature_set,
            "features": list(self.features),
            "lo": [float(v) for v in self.lo],
            "hi": [float(v) for v in self.hi],
            "learner": self.learner,
            "coef": None if self.coef is None else [float(v) for v in self.coef],
            "booster": self.booster,
            "summary": self.summary,
        }

    def save(self, path: str | Path) -> Path:
        """Write the model as JSON to ``path`` (through a temporary file in the same
        folder, then renamed: a crash never leaves half a model). Sets ``self.path``.
        An OS failure is an :class:`InputError` naming the file."""
        out = Path(path)
        text = json.dumps(self.to_json(), indent=1, default=_json_default)
        tmp = out.with_name(out.name + ".tmp")
        try:
            tmp.write_text(text + "\n", encoding="utf-8")
            os.replace(tmp, out)
        except OSError as exc:
            raise InputError(f"cannot write the model: {exc.strerror}",
                             file=str(out)) from None
        self.path = str(out)
        return out

    @classmethod
    def load(cls, path: str | Path) -> L2RModel:
        """Read and validate a model file (see :func:`load_model`)."""
        return load_model(path)


def _json_default(obj: Any) -> Any:
    """numpy scalars/arrays and paths in ``summary`` as plain JSON values."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"summary value of type {type(obj).__name__} is not JSON-serialisable")


def _floats(data: dict[str, Any], key: str, n: int, file: str) -> np.ndarray:
    values = data[key]
    if not isinstance(values, list) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        raise InputError(f"{key!r} must be a list of numbers", file=file, field=key)
    if len(values) != n:
        raise InputError(f"{key!r} has {len(values)} values but the model has {n} features",
                         file=file, field=key)
    try:
        floats = [float(v) for v in values]
    except OverflowError:  # an integer beyond a float (a 400-digit number)
        raise InputError(f"{key!r} holds a number beyond a float's range", file=file,
                         field=key) from None
    if not all(math.isfinite(v) for v in floats):
        raise InputError(f"{key!r} holds a non-finite value", file=file, field=key)
    return np.asarray(floats, dtype=np.float64)


def load_model(path: str | Path) -> L2RModel:
    """Read a model written by :meth:`L2RModel.save`.

    :class:`InputError` with ``file=str(path)`` when the file is missing or unreadable,
    is not JSON, lacks the ``"dispatchlab-l2r-model"`` marker, has another version,
    misses keys, names an unknown feature set or learner, lists features that are not
    those of its feature set, has ``lo``/``hi``/``coef`` of the wrong length, or holds
    a booster LightGBM cannot read or with another number of features.
    """
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("model file not found", file=file) from None
    except UnicodeDecodeError:
        raise InputError("not a dispatchlab L2R model file (not UTF-8 text)",
                         file=file) from None
    except OSError as exc:
        raise InputError(f"cannot read the model file: {exc.strerror}", file=file) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not a dispatchlab L2R model file (invalid JSON: {exc.msg} at "
                         f"line {exc.lineno} column {exc.colno})", file=file) from None
    except ValueError as exc:  # an integer too long for Python's int parsing
        raise InputError(digit_limit_message(exc) or f"invalid JSON: {one_line(exc)}",
                         file=file) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", file=file) from None
    if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT:
        raise InputError(f"not a dispatchlab L2R model file (no \"format\": "
                         f"\"{MODEL_FORMAT}\" marker)", file=file, field="format")
    if data.get("version") != MODEL_VERSION:
        raise InputError(f"unsupported model file version {data.get('version')!r} "
                         f"(this dispatchlab reads version {MODEL_VERSION})",
                         file=file, field="version")
    missing = [k for k in _KEYS if k not in data]
    if missing:
        raise InputError(f"model file lacks key(s): {', '.join(missing)}", file=file)
    feature_set = data["feature_set"]
    if not isinstance(feature_set, str) or feature_set not in FEATURE_SETS:
        valid = ", ".join(sorted(FEATURE_SETS))
        raise InputError(f"unknown feature set {feature_set!r} (valid: {valid})",
                         file=file, field="feature_set")
    expected = FEATURE_SETS[feature_set]
    features = data["features"]
    if not isinstance(features, list) or tuple(features) != expected:
        raise InputError(f"features {features!r} are not those of feature set "
                         f"{feature_set!r}: {list(expected)}", file=file, field="features")
    n = len(expected)
    lo = _floats(data, "lo", n, file)
    hi = _floats(data, "hi", n, file)
    if np.any(hi < lo):
        raise InputError("'hi' is below 'lo' for some feature", file=file, field="hi")
    learner = data["learner"]
    if learner not in LEARNERS:
        valid = ", ".join(sorted(LEARNERS))
        raise InputError(f"unknown learner {learner!r} (valid: {valid})", file=file,
                         field="learner")
    summary = data["summary"]
    if not isinstance(summary, dict):
        raise InputError("'summary' must be a JSON object", file=file, field="summary")
    model = L2RModel(feature_set=feature_set, features=expected, lo=lo, hi=hi,
                     learner=learner, summary=summary, path=file)
    if learner == "ranksvm":
        if data["coef"] is None:
            raise InputError("a ranksvm model needs 'coef'", file=file, field="coef")
        model.coef = _floats(data, "coef", n, file)
    else:
        booster = data["booster"]
        if not isinstance(booster, str) or not booster:
            raise InputError("a lambdamart model needs 'booster' (LightGBM text model)",
                             file=file, field="booster")
        import lightgbm

        try:
            obj = lightgbm.Booster(model_str=booster)
        except lightgbm.basic.LightGBMError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else "unreadable"
            raise InputError(f"LightGBM cannot read 'booster': {first}", file=file,
                             field="booster") from None
        if obj.num_feature() != n:
            raise InputError(f"'booster' uses {obj.num_feature()} features but the model "
                             f"has {n}", file=file, field="booster")
        model.booster = booster
        model._booster_obj = obj
    return model


def check_feature_set(model: L2RModel, expected: str) -> None:
    """:class:`InputError` (field ``features``, ``file`` = the model's path) unless
    ``model`` was trained on feature set ``expected``: its scores are meaningless for
    rows of another set."""
    if model.feature_set != expected:
        raise InputError(f"model was trained on feature set {model.feature_set!r}, "
                         f"not {expected!r}", file=model.path, field="features")
