"""Metrics per group of jobs (partition, user, account, QOS) and the fairness figures a
centre asks for.

Everything here is a pure function of numpy arrays aligned with the rows of a job table
(and of the table's name tables, ``info.codes``). A job table is only read by column:
metrics import no workload module.

**Group keys** (:data:`GROUP_KEYS`, :func:`group_labels`). Each job gets one label per
key; a job whose value is missing gets :data:`MISSING_GROUP` (``"(none)"``):

==============  ============================================================================
``partition``   the name of the job's ``queue`` code (``info.codes["queue"]``: Slurm
                ``Partition``, possibly a comma list as the log wrote it; the PBS queue).
                A trace that names no queues (SWF: numbers only) gives the number as
                text: SWF field 16 (partition) when some job records one, else field 15
                (queue). :attr:`GroupLabels.source` says which.
``user``        the user's name (``info.codes["user"]``), else the SWF user number as text
``account``     the optional text column ``account`` (sacct, PBS); "" is missing
``qos``         the optional text column ``qos`` (sacct; PBS logs record none: every
                job is then in ``(none)``)
==============  ============================================================================

A trace without the ``account`` or ``qos`` column (SWF, Alea) cannot be grouped by it:
:class:`~dispatchlab.core.errors.InputError` naming the key.

**Per group** (:func:`group_metrics`), over the *measured* jobs of the group (inside the
measurement window, not hot-start dummies) that were not rejected, exactly as the run's
summary counts them: ``jobs``; ``rejected`` (measured jobs of the group rejected);
``mean_wait``, ``median_wait`` (linear interpolation, as
:func:`~dispatchlab.metrics.jobs.describe`), ``max_wait`` (s); ``mean_bsld`` (bounded
slowdown with the run's ``tau``); ``hours`` = sum over the group's jobs of ``held x run /
3600`` and ``hours_share`` = the group's share of all groups' hours (None when no job
held anything). ``held`` is what a job holds while it runs: on node-level runs the number
of nodes of its allocation (a node shared with other jobs counts whole for each of them:
*node-hours*), on pooled runs its amount of the primary resource (units x per-unit cores:
*core-hours*, or ``<resource>-hours`` on a platform without cores); the caller says
which (``hours_unit``). Statistics of a group without a
job that ran are None (NaN before the JSON conversion).

**Fairness** (:func:`fairness`), over the same jobs:

- ``mean_wait``: the mean wait of all of them (the summary's ``mean_wait``);
- the user with the largest mean wait among the users with at least
  :data:`MIN_USER_JOBS` (ours: 5) such jobs, so that one unlucky job of an occasional user
  does not decide it: ``max_user_mean_wait`` (s), ``max_wait_user`` (label),
  ``max_wait_user_jobs``, and ``max_user_wait_ratio`` = ``max_user_mean_wait /
  mean_wait`` (None when ``mean_wait`` is 0 or no user qualifies); ``users_counted`` is
  the number of qualifying users. Ties go to the label that sorts first;
- ``account_hours_share``: each account's share of the hours (``held x run``) of all
  jobs, None when the trace has no account column or no job held anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import did_you_mean
from dispatchlab.metrics.jobs import DEFAULT_TAU, REJECTED, job_columns

if TYPE_CHECKING:  # read by column only
    from dispatchlab.workload.jobs import JobTable

#: The keys jobs can be grouped by, in the order tables are printed.
GROUP_KEYS: tuple[str, ...] = ("partition", "user", "account", "qos")
#: The label of the jobs whose group value is missing.
MISSING_GROUP: str = "(none)"
#: Least number of (measured, run) jobs a user needs to count in the fairness figure.
MIN_USER_JOBS: int = 5


def parse_group_keys(values: Iterable[str], field: str = "--by") -> tuple[str, ...]:
    """The group keys of ``--by`` values: each value a key or a comma list of keys
    (``partition``, ``user``, ``account``, ``qos``), repeats dropped, in the order
    first given. An unknown or empty key raises :class:`InputError` naming ``field``."""
    keys: list[str] = []
    for value in values:
        for part in str(value).split(","):
            key = part.strip().lower()
            if key not in GROUP_KEYS:
                raise InputError(f"unknown group {part.strip()!r}"
                                 f"{did_you_mean(part.strip(), GROUP_KEYS)} (one of "
                                 f"{', '.join(GROUP_KEYS)}; several as a comma list or "
                                 "by repeating the option)", field=field)
            if key not in keys:
                keys.append(key)
    return tuple(keys)


@dataclass(frozen=True, eq=False)
class GroupLabels:
    """One group label per job: ``names[codes[i]]`` is job ``i``'s group.

    ``key`` is the group key, ``source`` says where the labels come from (shown in the
    tables' headers: ``"the log's user names"``, ``"SWF field 16 ..."``, ...)."""

    key: str
    codes: np.ndarray
    names: tuple[str, ...]
    source: str

    def label(self, i: int) -> str:
        return self.names[int(self.codes[i])]


def _from_numbers(key: str, values: np.ndarray, names: list[str] | None,
                  source: str) -> GroupLabels:
    """Labels of an integer column: the name of code ``k`` when ``names`` is given
    (``-1`` missing), else the number as text (negative numbers missing)."""
    values = np.asarray(values, dtype=np.int64)
    uniq, inverse = np.unique(values, return_inverse=True)
    labels: list[str] = []
    for v in uniq.tolist():
        if v < 0:
            labels.append(MISSING_GROUP)
        elif names is not None and v < len(names) and names[v] != "":
            labels.append(str(names[v]))
        else:
            labels.append(str(v))
    return _merged(key, inverse, labels, source)


def _from_text(key: str, values: np.ndarray, source: str) -> GroupLabels:
    """Labels of a text column ("" and None missing)."""
    text = np.array(["" if v is None else str(v) for v in values.tolist()], dtype=object)
    uniq, inverse = np.unique(text.astype(str), return_inverse=True)
    labels = [MISSING_GROUP if u == "" else u for u in uniq.tolist()]
    return _merged(key, inverse, labels, source)


def _merged(key: str, inverse: np.ndarray, labels: list[str], source: str) -> GroupLabels:
    """Codes into distinct labels (two values with one label, e.g. two missing forms,
    become one group)."""
    index: dict[str, int] = {}
    remap = np.array([index.setdefault(lab, len(index)) for lab in labels], dtype=np.int64)
    distinct = list(index)
    codes = remap[np.asarray(inverse, dtype=np.int64).reshape(-1)] if len(labels) else \
        np.zeros(0, np.int64)
    return GroupLabels(key, codes, tuple(distinct), source)


def group_labels(table: JobTable, key: str) -> GroupLabels:
    """Each job's label for group ``key`` (see the module docstring for the rules).

    A key the trace cannot give (``account`` / ``qos`` of a trace without that column)
    raises :class:`InputError` naming the key and the trace's format."""
    if key not in GROUP_KEYS:
        raise InputError(f"unknown group {key!r}{did_you_mean(key, GROUP_KEYS)}",
                         field="--by")
    codes = table.info.codes
    if key == "partition":
        if "queue" in codes:
            return _from_numbers(key, table["queue"], list(codes["queue"]),
                                 "the log's partition or queue names")
        if np.any(np.asarray(table["partition"]) >= 0):
            return _from_numbers(key, table["partition"], None,
                                 "SWF field 16 (partition numbers: the trace names none)")
        return _from_numbers(key, table["queue"], None,
                             "SWF field 15 (queue numbers: the trace names none and "
                             "records no field 16)")
    if key == "user":
        if "user" in codes:
            return _from_numbers(key, table["user"], list(codes["user"]),
                                 "the log's user names")
        return _from_numbers(key, table["user"], None,
                             "SWF field 12 (user numbers: the trace names none)")
    if key not in table.columns:
        raise InputError(f"the trace ({table.info.format}) has no {key} column, so its "
                         f"jobs cannot be grouped by {key} (sacct exports and PBS logs "
                         "record accounts; sacct records QOS)", field="--by")
    return _from_text(key, np.asarray(table[key], dtype=object), f"the log's {key} column")


def check_group_keys(table: JobTable, keys: Iterable[str]) -> None:
    """Raise :class:`InputError` (before a run) when ``table`` cannot give a key."""
    for key in keys:
        if key in ("account", "qos") and key not in table.columns:
            group_labels(table, key)


def _bool(mask: ArrayLike | None, n: int, name: str) -> np.ndarray:
    if mask is None:
        return np.ones(n, dtype=bool)
    m = np.asarray(mask, dtype=bool)
    if m.shape != (n,):
        raise InputError(f"{name} has shape {m.shape}, expected ({n},)", field=name)
    return m


def _hours(held: ArrayLike, run: np.ndarray, n: int) -> np.ndarray:
    """``held x run / 3600`` per job (float64; 0 for rejected jobs, whose run is -1)."""
    h = np.asarray(held, dtype=np.float64)
    if h.shape != (n,):
        raise InputError(f"held has shape {h.shape}, expected ({n},)", field="held")
    if np.any(h < 0) or not np.all(np.isfinite(h)):
        raise InputError("held amounts must be finite and >= 0", field="held")
    return h * np.maximum(run, 0) / 3600.0


def _none(x: float) -> float | None:
    return None if not np.isfinite(x) else float(x)


def group_metrics(labels: GroupLabels, wait: ArrayLike, bsld: ArrayLike, hours: ArrayLike,
                  status: ArrayLike, measured: ArrayLike | None = None
                  ) -> dict[str, dict[str, Any]]:
    """``label -> {jobs, rejected, mean_wait, median_wait, max_wait, mean_bsld, hours,
    hours_share}`` over the measured rows (see the module docstring), for every label
    with at least one measured row (ran or rejected).

    ``wait`` (s) and ``bsld`` are the per-job columns
    (:func:`~dispatchlab.metrics.jobs.job_columns`; values of rejected rows are
    ignored), ``hours`` each job's ``held x run / 3600`` (0 for rejected jobs),
    ``status`` the simulator's statuses and ``measured`` the rows that count (None:
    all). Undefined statistics are None."""
    codes = labels.codes
    n = len(codes)
    st = np.asarray(status)
    counted = _bool(measured, n, "measured")
    ran = counted & (st != REJECTED)
    w = np.asarray(wait, dtype=np.float64)
    b = np.asarray(bsld, dtype=np.float64)
    h = np.asarray(hours, dtype=np.float64)
    k = len(labels.names)
    jobs = np.bincount(codes[ran], minlength=k)
    rejected = np.bincount(codes[counted & (st == REJECTED)], minlength=k)
    hours_sum = np.bincount(codes[ran], weights=h[ran], minlength=k)
    total_hours = float(hours_sum.sum())
    order = np.flatnonzero(ran)
    order = order[np.lexsort((w[order], codes[order]))]  # by group, then wait
    bounds = np.searchsorted(codes[order], np.arange(k + 1))
    out: dict[str, dict[str, Any]] = {}
    for g, name in enumerate(labels.names):
        if jobs[g] == 0 and rejected[g] == 0:
            continue
        rows = order[bounds[g]:bounds[g + 1]]
        gw = w[rows]
        nan = float("nan")
        out[name] = {
            "jobs": int(jobs[g]),
            "rejected": int(rejected[g]),
            "mean_wait": _none(float(gw.mean()) if gw.size else nan),
            "median_wait": _none(float(np.percentile(gw, 50.0)) if gw.size else nan),
            "max_wait": None if not gw.size else int(gw.max()),
            "mean_bsld": _none(float(b[rows].mean()) if gw.size else nan),
            "hours": float(hours_sum[g]),
            "hours_share": _none(float(hours_sum[g]) / total_hours if total_hours > 0
                                 else nan),
        }
    return out


def fairness(wait: ArrayLike, hours: ArrayLike, status: ArrayLike, users: GroupLabels,
             accounts: GroupLabels | None, measured: ArrayLike | None = None,
             *, min_user_jobs: int = MIN_USER_JOBS) -> dict[str, Any]:
    """The fairness figures of the module docstring: ``mean_wait``, ``min_user_jobs``,
    ``users_counted``, ``max_user_mean_wait``, ``max_wait_user``, ``max_wait_user_jobs``,
    ``max_user_wait_ratio`` and ``account_hours_share`` (None without ``accounts``)."""
    n = len(users.codes)
    st = np.asarray(status)
    ran = _bool(measured, n, "measured") & (st != REJECTED)
    w = np.asarray(wait, dtype=np.float64)
    h = np.asarray(hours, dtype=np.float64)
    k = len(users.names)
    count = np.bincount(users.codes[ran], minlength=k)
    total = np.bincount(users.codes[ran], weights=w[ran], minlength=k)
    overall = float(w[ran].mean()) if ran.any() else float("nan")
    out: dict[str, Any] = {"mean_wait": _none(overall), "min_user_jobs": int(min_user_jobs)}
    qualified = np.flatnonzero(count >= min_user_jobs)
    out["users_counted"] = int(qualified.size)
    out.update({"max_user_mean_wait": None, "max_wait_user": None,
                "max_wait_user_jobs": None, "max_user_wait_ratio": None})
    if qualified.size:
        means = total[qualified] / count[qualified]
        best = min(range(qualified.size),
                   key=lambda i: (-means[i], users.names[qualified[i]]))
        top = float(means[best])
        out["max_user_mean_wait"] = top
        out["max_wait_user"] = users.names[qualified[best]]
        out["max_wait_user_jobs"] = int(count[qualified[best]])
        out["max_user_wait_ratio"] = top / overall if overall > 0 else None
    if accounts is None:
        out["account_hours_share"] = None
    else:
        k = len(accounts.names)
        acc = np.bincount(accounts.codes[ran], weights=h[ran], minlength=k)
        present = np.bincount(accounts.codes[ran], minlength=k) > 0
        whole = float(acc.sum())
        out["account_hours_share"] = None if whole <= 0 else {
            name: float(acc[g]) / whole for g, name in enumerate(accounts.names)
            if present[g]}
    return out


def group_summary(table: JobTable, start: ArrayLike, end: ArrayLike, status: ArrayLike,
                  keys: Iterable[str], *, held: ArrayLike, hours_unit: str,
                  measured: ArrayLike | None = None, tau: float = DEFAULT_TAU
                  ) -> dict[str, Any]:
    """The ``by_group`` section of a run's summary: ``hours_unit``, and for each key of
    ``keys`` ``{"source": ..., "groups": {label: metrics}}`` (:func:`group_metrics`),
    then ``fairness`` (:func:`fairness`; the account shares when the table has an
    account column).

    ``start``, ``end``, ``status`` are the simulator's per-job results; ``held`` each
    job's nodes (node-level runs, ``hours_unit = "node-hours"``) or primary-resource
    amount (pooled runs, ``"core-hours"``, or ``"<resource>-hours"``); ``measured`` the
    rows the run's metrics
    count (None: all)."""
    if not isinstance(hours_unit, str) or not hours_unit.endswith("-hours"):
        raise InputError(f"hours_unit must be 'node-hours' or '<resource>-hours', got "
                         f"{hours_unit!r}", field="hours_unit")
    keys = parse_group_keys(keys)
    n = len(table)
    cols = job_columns(table["submit"], start, end, status, tau=tau)
    hours = _hours(held, cols["run"], n)
    out: dict[str, Any] = {"hours_unit": hours_unit}
    cache: dict[str, GroupLabels] = {}
    for key in keys:
        labels = cache[key] = group_labels(table, key)
        out[key] = {"source": labels.source,
                    "groups": group_metrics(labels, cols["wait"], cols["bounded_slowdown"],
                                            hours, status, measured)}
    users = cache.get("user") or group_labels(table, "user")
    accounts = cache.get("account") or (group_labels(table, "account")
                                        if "account" in table.columns else None)
    out["fairness"] = fairness(cols["wait"], hours, status, users, accounts, measured)
    return out


def _sorted_groups(groups: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Labels by hours (descending), then jobs (descending), then label."""
    return sorted(groups, key=lambda g: (-(groups[g]["hours"] or 0.0),
                                         -groups[g]["jobs"], g))


def ordered_groups(section: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The groups of one key's section (``{"source", "groups"}``) as ``(label,
    metrics)`` pairs, largest hours first (the order tables print them)."""
    groups = section["groups"]
    return [(g, groups[g]) for g in _sorted_groups(groups)]
