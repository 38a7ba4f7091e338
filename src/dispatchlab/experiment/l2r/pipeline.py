"""The learning-to-rank pipeline of Darrous, learning-to-rank report, end to end: label training
lists by simulation, train a ranker,
evaluate it on the test part (``dispatchlab l2r train`` / ``l2r evaluate``).

**Training** (:func:`train`), as the report's code (predictsim's ``pyss/src/jad``) unless
marked *ours*:

1. the trace (cleaned as the set-up says, see below) is split in file order into
   ``lists`` contiguous training lists and a test part (:func:`~dispatchlab.experiment.l2r.split.
   split_lists`);
2. every list is simulated **alone** (from an empty machine) under each policy: EASY
   with the policy as the queue priority (``scope="queue"``, backfill in queue order,
   estimates = requested times, jobs never killed). These K x P simulations run as a
   **campaign** (``labels.toml`` in the work folder, results in ``labels.duckdb``; a
   local process pool or Dask), so a second training with another learner or feature
   set re-uses them;
3. per list, the policy with the lowest average bounded slowdown (tau = 10 s, every job
   of the list; ties: the first policy given) is kept, and its jobs get the relative
   score of :func:`~dispatchlab.rank.learn.finish_order_scores` (earlier end = higher);
4. features (:mod:`dispatchlab.rank.features`; the ``seed`` set reads the kept
   simulation's wait and run), min-max scaling over all training rows, and a learner
   (``ranksvm``, the paper's, or ``lambdamart``) trained on within-list pairs;
5. the model file holds the scaler, the feature set, the weights and a summary.

**Set-ups** (``setup``): ``causal`` (the default, ours) reads the trace with the
default cleaning and uses the ``causal`` features. ``seed`` reproduces the authors'
set-up: their pre-filter and pyss's input cleaning (:func:`seed_clean`), machine sizes
from the header
(CEA-Curie at 80,640 cores) and the leaky ``seed`` features (the test part's *recorded*
wait and *actual* run time). What stays different from pyss: same-time events
(dispatchlab ends jobs before it submits new ones at one time point, pyss the reverse).
The feature set is an independent choice (``features``, default the set-up's own):
``setup="seed", features="causal"`` is the authors' cleaning and machine sizes with
the leak-free features, ``setup="causal", features="seed"`` the reverse. The model
file records its feature set, and the ``l2r`` ordering always scores with it.

**Evaluation** (:func:`evaluate`): the test part simulated alone under EASY FCFS, every
training policy (their best = the paper's "EASY+BF"), the learned score and a random
score (seeded control), all with ``scope="queue"``; the improvement is the paper's
``baseline / L2R - 1``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.experiment.campaign.config import load_campaign
from dispatchlab.experiment.campaign.runner import run_campaign
from dispatchlab.experiment.campaign.store import open_read
from dispatchlab.experiment.l2r.split import Split, split_lists
from dispatchlab.platform import Platform
from dispatchlab.platform.choose import platform_for
from dispatchlab.rank.features import (
    apply_minmax,
    check_feature_set_name,
    fit_minmax,
    job_features,
)
from dispatchlab.rank.learn import finish_order_scores, make_learner
from dispatchlab.rank.model import L2RModel, check_feature_set, load_model
from dispatchlab.run.build import build
from dispatchlab.run.config import Component, RunConfig
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.swf import write_swf

#: the tau of the paper's bounded slowdown (s)
TAU = 10
#: policy name -> EASY priority (the paper's two, and the four its later code adds)
POLICIES: dict[str, str] = {
    "fcfs": "fcfs",
    "slowdown": "maui:wait=0:sld=1",
    "largest": "maui:wait=0:size=1",
    "lcfs": "maui:wait=-1",
    "smallest-slowdown": "maui:wait=0:sld=-1",
    "smallest": "maui:wait=0:size=-1",
}
#: the paper's version (commit fafc673): FCFS and SLD
DEFAULT_POLICIES: tuple[str, ...] = ("fcfs", "slowdown")
SETUPS: tuple[str, ...] = ("causal", "seed")
#: machine sizes the paper's code forces (trace file name prefix -> cores)
SEED_MACHINE_SIZES: dict[str, int] = {"CEA-Curie": 80_640}


def check_policies(names: Sequence[str]) -> list[str]:
    """The policy names, validated (InputError on ``policies`` naming the valid ones)."""
    out = []
    for name in names:
        key = name.strip().lower()
        if key not in POLICIES:
            raise InputError(f"unknown policy {name!r}{did_you_mean(key, POLICIES)} (choose "
                             f"from {', '.join(POLICIES)})", field="policies")
        if key in out:
            raise InputError(f"policy {key!r} given twice", field="policies")
        out.append(key)
    if not out:
        raise InputError("give at least one policy", field="policies")
    return out


def check_setup(setup: str) -> str:
    if setup not in SETUPS:
        raise InputError(f"unknown set-up {setup!r} (choose from {', '.join(SETUPS)})",
                         field="setup")
    return setup


def avg_bsld(submit: np.ndarray, start: np.ndarray, end: np.ndarray,
             tau: float = TAU) -> float:
    """The paper's AVGbsld: mean over jobs of ``max((end - submit) / max(run, tau), 1)``
    with ``run = end - start`` (seconds)."""
    submit, start, end = (np.asarray(a, dtype=np.float64) for a in (submit, start, end))
    if len(submit) == 0:
        return float("nan")
    run = end - start
    return float(np.mean(np.maximum((end - submit) / np.maximum(run, tau), 1.0)))


# ----------------------------------------------------------------------------- inputs
def seed_clean(jobs, machine: int):
    """The report code's input cleaning, on a table read without cleaning:

    1. the author's pre-filter (predictsim's ``strong_filter_all_swf``): jobs asking for
       more than ``machine`` processors, or with run <= 0, requested time <= 0 or
       submit < 0 are dropped (counted in ``info.dropped`` under ``seed filter: ...``);
       a run longer than the requested time is cut to it;
    2. then pyss's own rules, which after step 1 change nothing on the PWA traces but are
       applied as written: requested processors clipped to ``machine``; requested time <
       run time: the estimate becomes the run time and the run time the requested time;
       invalid jobs (run <= 0, processors <= 0, submit < 0) become 1-second jobs on
       ``max(1, allocated)`` processors.

    Returns a new table (kept rows in their order)."""
    cols = jobs.columns
    units = np.asarray(cols["units"], dtype=np.int64)
    run = np.asarray(cols["run"], dtype=np.int64)
    req = np.asarray(cols["requested_time"], dtype=np.int64)
    submit = np.asarray(cols["submit"], dtype=np.int64)
    reasons = {"seed filter: processors > machine": units > machine,
               "seed filter: run <= 0": run <= 0,
               "seed filter: requested time <= 0": req <= 0,
               "seed filter: submit < 0": submit < 0}
    drop = np.zeros(len(jobs), dtype=bool)
    dropped: dict[str, int] = {}
    for reason, mask in reasons.items():
        new = mask & ~drop
        if new.any():
            dropped[reason] = int(new.sum())
        drop |= mask
    out = jobs.take(np.flatnonzero(~drop))
    out.info.dropped = {**jobs.info.dropped, **dropped}
    cols = out.columns
    units = np.minimum(np.asarray(cols["units"], dtype=np.int64), machine)
    req = np.asarray(cols["requested_time"], dtype=np.int64).copy()
    run = np.minimum(np.asarray(cols["run"], dtype=np.int64), req)  # step 1's cut
    submit = np.asarray(cols["submit"], dtype=np.int64).copy()
    alloc = np.asarray(cols["alloc_procs"], dtype=np.int64)
    # step 2, pyss (no-ops after step 1, kept as the authors' code has them)
    invalid = (run <= 0) | (units <= 0) | (submit < 0)
    swap = (req < run) & ~invalid
    req[swap], run[swap] = run[swap], req[swap].copy()
    run[invalid] = 1
    units[invalid] = np.minimum(np.maximum(alloc[invalid], 1), machine)
    submit = np.maximum(submit, 0)
    cols.update(units=units, run=run, requested_time=req, req_time=req.copy(),
                req_procs=units.copy(), submit=submit)
    return out


@dataclass
class Prepared:
    """The jobs the pipeline splits, the file the label campaign reads (same rows after
    its default cleaning) and the machine size."""

    jobs: Any
    path: Path
    cores: int


def prepare(trace: str | Path, setup: str, work: Path) -> Prepared:
    """Read ``trace`` as ``setup`` says (see the module docstring)."""

    check_setup(setup)
    trace = Path(trace)
    if setup == "causal":
        jobs = load_trace(trace)
        plat = platform_for({}, jobs, advice="(l2r needs the machine size in the header)")
        return Prepared(jobs, trace, int(plat.total_capacity()["core"]))

    raw = load_trace(trace, clean=False)
    machine = next((v for k, v in SEED_MACHINE_SIZES.items() if trace.name.startswith(k)),
                   raw.info.max_procs)
    if not machine:
        raise InputError("the seed set-up needs MaxProcs in the trace header",
                         file=str(trace))
    cleaned = seed_clean(raw, int(machine))
    work.mkdir(parents=True, exist_ok=True)
    path = work / "seed-cleaned.swf"
    write_swf(cleaned, path)
    jobs = load_trace(path)
    if len(jobs) != len(cleaned):
        raise AssertionError("the seed cleaning left jobs that the default cleaning drops")
    jobs.info.dropped = dict(cleaned.info.dropped)
    return Prepared(jobs, path, int(machine))


# ------------------------------------------------------------------------ labelling
def _toml_value(value: Any) -> str:
    return json.dumps(value)


def label_campaign(prep: Prepared, split: Split, policies: Sequence[str], work: Path,
                   name: str = "l2r-labels") -> Path:
    """Write the campaign of the K x P label simulations; returns its path."""
    lines = [
        "# written by dispatchlab l2r train: the label simulations (one list x policy",
        "# each), re-used by later trainings on the same lists",
        "[campaign]", f"name = {_toml_value(name)}", 'database = "labels.duckdb"',
        f"tau = {TAU}", 'overrun = "run"', "store_series = false", "",
    ]
    for k, (a, b) in enumerate(split.lists):
        lines += ["[[traces]]", f"label = {_toml_value(f'list{k:04d}')}",
                  f"path = {_toml_value(str(prep.path.resolve()))}", f"jobs = [{a}, {b}]",
                  ""]
    lines += ["[[platforms]]", f"cores = {prep.cores}", ""]
    for p in policies:
        lines += ["[[dispatchers]]", f"label = {_toml_value(p)}", 'name = "easy"',
                  "[dispatchers.params]", 'scope = "queue"',
                  f"priority = {_toml_value(POLICIES[p])}", ""]
    lines += ["[[predictors]]", 'name = "walltime"', ""]
    work.mkdir(parents=True, exist_ok=True)
    path = work / "labels.toml"
    path.write_text("\n".join(lines))
    return path


def run_labels(prep: Prepared, split: Split, policies: Sequence[str], work: Path, *,
               workers: int | None = None, dask: str | None = None,
               on_progress: Callable[[int, int, int], None] | None = None
               ) -> dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]:
    """Run (or find stored) the label campaign; ``{(list, policy): (start, end)}``
    aligned with the list's rows."""

    path = label_campaign(prep, split, policies, work)
    camp = load_campaign(path)
    report = run_campaign(camp, workers=workers, dask=dask, on_progress=on_progress)
    if report.failed:
        raise InputError(f"{report.failed} label simulations failed (see `dispatchlab "
                         f"results runs {work / 'labels.duckdb'}`)", file=str(path))
    con = open_read(work / "labels.duckdb")
    try:
        rows = con.execute(
            "SELECT r.trace, r.dispatcher, j.submit_time, j.job_id, j.start_time, "
            "j.end_time FROM runs r JOIN jobs j USING (run_key) "
            "WHERE r.campaign = 'l2r-labels' AND r.run_key IN (SELECT unnest(?))",
            [camp.keys]).fetchnumpy()
    finally:
        con.close()
    out: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
    trace_col = np.asarray(rows["trace"])
    disp_col = np.asarray(rows["dispatcher"])
    submit_all = np.asarray(prep.jobs["submit"])
    id_all = np.asarray(prep.jobs["job_id"])
    for k, (a, b) in enumerate(split.lists):
        # rows of the list by (submit, job id), stable: matched rank to rank with the
        # stored rows (the selection may re-base times: same order)
        order = np.lexsort((id_all[a:b], submit_all[a:b]))
        for p in policies:
            m = (trace_col == f"list{k:04d}") & (disp_col == p)
            if int(m.sum()) != b - a:
                raise AssertionError(f"list {k} policy {p}: {int(m.sum())} stored jobs, "
                                     f"expected {b - a}")
            s_sub, s_id = rows["submit_time"][m], rows["job_id"][m]
            s_order = np.lexsort((s_id, s_sub))
            start = np.empty(b - a, dtype=np.int64)
            end = np.empty(b - a, dtype=np.int64)
            start[order] = np.asarray(rows["start_time"][m])[s_order]
            end[order] = np.asarray(rows["end_time"][m])[s_order]
            # back to the list's own time origin
            shift = int(submit_all[a + order[0]]) - int(s_sub[s_order[0]])
            out[(k, p)] = (start + shift, end + shift)
    return out


# ------------------------------------------------------------------------- training
@dataclass
class Training:
    """What :func:`train` did."""

    model: L2RModel
    best: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def train(trace: str | Path, *, lists: int, policies: Sequence[str] = DEFAULT_POLICIES,
          features: str | None = None, learner: str = "ranksvm",
          learner_params: dict[str, Any] | None = None, setup: str = "causal",
          work: str | Path, workers: int | None = None, dask: str | None = None,
          on_progress: Callable[[int, int, int], None] | None = None) -> Training:
    """Train a ranking model on ``trace`` (see the module docstring). ``features``
    defaults to the set-up's (``causal`` -> ``causal``, ``seed`` -> ``seed``)."""
    t0 = time.perf_counter()
    setup = check_setup(setup)
    features = features or setup
    check_feature_set_name(features)
    policies = check_policies(policies)
    learner_obj = make_learner(learner, **(learner_params or {}))
    work = Path(work)
    prep = prepare(trace, setup, work)
    split = split_lists(len(prep.jobs), lists)
    t1 = time.perf_counter()
    labels = run_labels(prep, split, policies, work, workers=workers, dask=dask,
                        on_progress=on_progress)
    t2 = time.perf_counter()
    X_parts, y_parts, q_parts = [], [], []
    best_count = dict.fromkeys(policies, 0)
    list_bsld = []
    for k, (a, b) in enumerate(split.lists):
        sub = prep.jobs.take(np.arange(a, b))
        submit = np.asarray(sub["submit"])
        scores = {p: avg_bsld(submit, *labels[(k, p)]) for p in policies}
        best = min(policies, key=lambda p: scores[p])  # ties: the first policy given
        best_count[best] += 1
        list_bsld.append(scores[best])
        start, end = labels[(k, best)]
        X_parts.append(job_features(sub, features, wait=start - submit, run=end - start))
        y_parts.append(finish_order_scores(end))
        q_parts.append(np.full(b - a, k, dtype=np.int64))
    X = np.vstack(X_parts)
    lo, hi = fit_minmax(X)
    learner_obj.fit(apply_minmax(X, lo, hi), np.concatenate(y_parts),
                    np.concatenate(q_parts))
    model = L2RModel.from_fitted(features, lo, hi, learner_obj)
    t3 = time.perf_counter()
    model.summary = {
        "trace": str(trace), "setup": setup, "lists": lists, "jobs_per_list": split.part,
        "train_jobs": split.part * lists, "test_rows": list(split.test),
        "policies": list(policies), "best_policy_count": best_count,
        "mean_best_list_avg_bsld": float(np.mean(list_bsld)), "learner": learner,
        "learner_params": learner_params or {}, "machine_cores": prep.cores,
        "seconds": {"prepare": t1 - t0, "labels": t2 - t1, "fit": t3 - t2,
                    "total": t3 - t0},
    }
    return Training(model, best_count, model.summary["seconds"])


# ----------------------------------------------------------------------- evaluation
@dataclass
class EvalRow:
    """One simulation of the test part: its label, priority and AVGbsld."""

    label: str
    priority: str
    avg_bsld: float
    seconds: float


@dataclass
class Evaluation:
    trace: str
    setup: str
    test_rows: tuple[int, int]
    rows: list[EvalRow]

    def value(self, label: str) -> float:
        return next(r.avg_bsld for r in self.rows if r.label == label)

    @property
    def best_policy(self) -> EvalRow:
        return min((r for r in self.rows if r.label.startswith("policy:")),
                   key=lambda r: r.avg_bsld)

    def improvement(self, baseline: float) -> float:
        """The paper's improvement: ``baseline / L2R - 1``."""
        return baseline / self.value("l2r") - 1.0


def evaluate(trace: str | Path, model_path: str | Path, *, lists: int | None = None,
             setup: str | None = None, features: str | None = None,
             policies: Sequence[str] | None = None, random_seed: int = 0,
             work: str | Path) -> Evaluation:
    """Simulate the test part of ``trace`` (rows from ``part * K`` on, with ``K`` =
    ``lists`` or the model's) alone under each policy (``fcfs`` first by default), the
    learned score and a random score (see the module docstring). ``setup`` defaults to
    the model's; ``features``, when given, must be the model's feature set."""

    model = load_model(model_path)
    setup = check_setup(setup or model.summary.get("setup", "causal"))
    if features is not None:
        check_feature_set_name(features)
        check_feature_set(model, features)
    policies = check_policies(policies or model.summary.get("policies", DEFAULT_POLICIES))
    k = int(lists or model.summary.get("lists", 0))
    if k < 1:
        raise InputError("give --lists (the model file does not say)", field="lists")
    prep = prepare(trace, setup, Path(work))
    split = split_lists(len(prep.jobs), k)
    a, b = split.test
    test = prep.jobs.take(np.arange(a, b))
    platform = Platform.pooled(prep.cores)
    runs = [("policy:" + p, POLICIES[p]) for p in policies]
    runs += [("l2r", str(Path(model_path).resolve())), ("random", f"random:seed={random_seed}")]
    rows = []
    for label, priority in runs:
        order = f"l2r:model={priority}" if label == "l2r" else priority
        config = RunConfig(dispatcher=Component("easy", {"scope": "queue", "priority": order}),
                           predictor=Component("walltime"))
        t = time.perf_counter()
        res = build(config, jobs=test, platform=platform).simulation.run()
        rows.append(EvalRow(label, priority, avg_bsld(test["submit"], res.start, res.end),
                            time.perf_counter() - t))
    return Evaluation(str(trace), setup, (a, b), rows)
