"""Power in campaigns: the ``[power]`` table (job power data and caps) and the
``[[power_predictors]]`` entries, checked at expansion; and, in the worker, what a run
builds from them (job power columns, the cap, the power predictor).

``[power]`` keys (all optional except one power source):

* ``file = "power.parquet"``: job power joined by job id (:func:`dispatchlab.power.data.
  attach_power`: Parquet/CSV, or the Eurora archive's predictions), relative to the
  campaign file; its SHA-256 is one of the run's input files. Or
* ``synth_seed = S``: synthetic power (:func:`dispatchlab.power.synth.synthesize_power`)
  drawn for *each run's own job table* (after slicing and selection) with seed ``S``
  on the run's platform: the same workload always gets the same power, and a
  workload's power does not depend on the rest of the trace (ours).
* ``from_workload = true``: the jobs carry their own power (``generate = "eurora"``
  instances, Borghesi et al. 2018's synthetic workloads).
* ``cap_base``: what a cap share is a share of. ``"bf-peak"`` (one reading of Borghesi
  et al. 2018): the peak power of a reference ``bf`` run of the same workload without a
  cap, the same watts for every method; ``"own-peak"`` (ours, the other reading of
  the paper's "we run each dispatcher without power cap", section 5.2): the peak power
  of the run's **own dispatcher** (same parameters, duration model, predictors) on the
  same workload without a cap, so each method gets its own watts. Both are computed and
  cached inside the worker (:func:`dispatchlab.experiment.campaign.worker._scaled_to_reference`);
  default ``"max-dynamic-power"``: the platform's ``max_dynamic_power``.
* ``series = true`` (with ``synth_seed``): also draw the per-job power series at
  ``period`` seconds (default 20, Carastan-Santos et al. 2024's) and compute the cap-window metrics
  from the sampled platform power (see :mod:`dispatchlab.power.accounting`).
* ``caps = [...]``: the cap axis. Each item is a cap value (``0.5``: a fraction of the
  platform's ``max_dynamic_power``; ``"400kW"``: watts; ``"none"``: no cap) or an
  inline table ``{label = "...", value = ..., window = [T0, T1], file = "steps.txt"}``
  (``file``: a ``time;watts`` schedule instead of a value). Default label: the value
  as written (``0.5`` -> ``"50%"``). Default ``caps``: one entry ``none``.
* ``window = [T0, T1]``: the cap window of every cap entry without its own (seconds;
  default: the whole run); ``window_from = "trace"`` (default: trace time, as
  ``--cap-window``) or ``"measure"``: relative to the run's measured start, the submit
  time of the first measured job (for slices: the first job of the slice's own block,
  after its lead-in; ours), so that every slice's window opens on a busy machine.
* ``history_jobs = N`` (ours; slices of trace files): the power predictor starts having
  seen up to N jobs of the trace before the run's slice (those that ended, by their
  recorded end, before the run's first submission; their power drawn with the run's:
  :class:`~dispatchlab.predict.power.predictors.WithPriorHistory`), as Carastan-Santos et al. 2024's
  predictors knew each user's past; without it ``history`` starts cold (``naive``) in a run that
  begins with a queued lead-in.
* ``procs_per_node`` is a *trace* key (see :func:`dispatchlab.workload.clean.
  units_as_nodes`), not a power one.

``[[power_predictors]]`` entries are components like ``[[predictors]]`` (``name``,
``params``, ``label``) of the registry :data:`dispatchlab.predict.power.predictors.
POWER_PREDICTORS` or own classes. They form one more axis of the product. A campaign
whose dispatchers need power predictions (``needs_power``) must have both ``[power]``
and ``[[power_predictors]]``.

The run configuration gains ``power``, ``cap`` and ``power_predictor`` entries only
when the campaign has a ``[power]`` table, so other campaigns keep their run keys.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dispatchlab.core.errors import InputError
from dispatchlab.experiment.campaign.checks import _check_keys, _existing_file, _resolve, _typed
from dispatchlab.experiment.provenance import file_sha256
from dispatchlab.platform.eurora import split_archive
from dispatchlab.power.cap import PowerCap, parse_cap_value
from dispatchlab.power.data import attach_power, with_power
from dispatchlab.power.model import has_power
from dispatchlab.power.synth import synthesize_power

_POWER_KEYS = {"file", "synth_seed", "from_workload", "series", "period", "caps", "window",
               "window_from", "history_jobs", "cap_base"}
_CAP_BASES = ("max-dynamic-power", "bf-peak", "own-peak")
_CAP_KEYS = {"label", "value", "window", "file"}
_WINDOW_FROM = ("trace", "measure")

__all__ = ["NO_CAP", "build_cap", "cap_entries", "power_table", "run_power"]

#: The cap entry of a campaign without ``caps``.
NO_CAP: dict[str, Any] = {"label": "none", "spec": None, "inputs": {}}


def _label_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    v = float(value)
    if 0 < v <= 1:
        pct = v * 100
        return f"{pct:g}%"
    return f"{v:g}W"


def _window(where, value: Any, entry: str) -> list[int] | None:
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in value)):
        raise where.error(f"window must be [T0, T1] (integer seconds), got {value!r}", entry)
    t0, t1 = value
    if t0 < 0 or t1 <= t0:
        raise where.error(f"window [T0, T1] needs 0 <= T0 < T1, got {value!r}", entry)
    return [int(t0), int(t1)]


def power_table(where, base: Path, doc: dict) -> dict[str, Any] | None:
    """The checked ``[power]`` table: ``{"spec": {...}, "inputs": {...}, "caps": [...]}``
    (None without the table)."""

    if "power" not in doc:
        return None
    entry = "power"
    t = _check_keys(where, doc["power"], _POWER_KEYS, entry)
    spec: dict[str, Any] = {}
    inputs: dict[str, str] = {}
    sources = [k for k in ("file", "synth_seed", "from_workload") if k in t]
    if len(sources) != 1:
        raise where.error("give one power source: file = \"...\" (job power data), "
                          "synth_seed = S (synthetic power) or from_workload = true (the "
                          "jobs carry their power, as generate = 'eurora' instances)", entry)
    if "from_workload" in t:
        if _typed(where, t, "from_workload", bool, entry) is not True:
            raise where.error("from_workload must be true (or left out)", entry)
        spec["from_workload"] = True
        if t.get("series"):
            raise where.error("series = true needs synth_seed", entry)
    elif "file" in t:
        text = _typed(where, t, "file", str, entry)

        archive, member = split_archive(_resolve(base, text))
        path = _existing_file(where, archive, "power file", entry)
        spec["file"] = str(path) if member is None else f"{path}#{member}"
        inputs[str(path)] = file_sha256(path)
        if t.get("series"):
            raise where.error("series = true needs synth_seed (a power file's series "
                              "are not read by campaigns yet)", entry)
    else:
        spec["synth_seed"] = _typed(where, t, "synth_seed", int, entry)
        spec["series"] = _typed(where, t, "series", bool, entry, False)
        period = _typed(where, t, "period", int, entry, 20)
        if period < 1:
            raise where.error(f"period must be >= 1 s, got {period}", entry)
        spec["period"] = period
    history = _typed(where, t, "history_jobs", int, entry, 0)
    if history < 0:
        raise where.error(f"history_jobs must be >= 0, got {history}", entry)
    if history:  # only when set: other campaigns keep their configuration
        spec["history_jobs"] = history
    window = _window(where, t.get("window"), entry)
    window_from = _typed(where, t, "window_from", str, entry, "trace")
    if window_from not in _WINDOW_FROM:
        raise where.error(f"window_from must be one of {', '.join(_WINDOW_FROM)}, got "
                          f"{window_from!r}", entry)
    caps = cap_entries(where, base, t.get("caps"), window, window_from)
    cap_base = _typed(where, t, "cap_base", str, entry, "max-dynamic-power")
    if cap_base not in _CAP_BASES:
        raise where.error(f"cap_base must be one of {', '.join(_CAP_BASES)}, got "
                          f"{cap_base!r}", entry)
    if cap_base != "max-dynamic-power":  # only when set: others keep their configuration
        spec["cap_base"] = cap_base
        for c in caps:
            v = None if c["spec"] is None else c["spec"].get("value")
            if c["spec"] is not None and not (isinstance(v, float) and 0 < v <= 1):
                raise where.error(f"with cap_base = {cap_base!r} every cap is a share of the "
                                  f"reference peak in (0, 1] (or \"none\"), got cap "
                                  f"{c['label']!r}", entry)
    return {"spec": spec, "inputs": inputs, "caps": caps}


def cap_entries(where, base: Path, caps: Any, window: list[int] | None,
                window_from: str) -> list[dict[str, Any]]:
    """The cap axis: ``{"label", "spec", "inputs"}`` per entry (``spec`` None: no cap)."""

    if caps is None:
        return [dict(NO_CAP)]
    if not isinstance(caps, list) or not caps:
        raise where.error(f"caps must be a non-empty array, got {caps!r}", "power")
    out = []
    for i, item in enumerate(caps):
        entry = f"power.caps[{i}]"
        if not isinstance(item, dict):
            item = {"value": item}
        unknown = set(item) - _CAP_KEYS
        if unknown:
            raise where.error(f"unknown key(s) {', '.join(sorted(unknown))}; allowed: "
                              f"{', '.join(sorted(_CAP_KEYS))}", entry)
        if ("value" in item) == ("file" in item):
            raise where.error("a cap needs value = ... or file = \"...\" (one of them)", entry)
        if "file" in item:
            if not isinstance(item["file"], str):
                raise where.error("file must be a path", entry)
            path = _existing_file(where, _resolve(base, item["file"]), "cap schedule",
                                  entry)
            try:
                PowerCap.from_file(path)
            except InputError as exc:
                raise where.error(exc.message, entry) from None
            spec = {"file": str(path)}
            inputs = {str(path): file_sha256(path)}
            label = item.get("label", path.stem)
        else:
            value = item["value"]
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise where.error(f"a cap value is a number or text, got {value!r}", entry)
            label = item.get("label", _label_of(value))
            inputs = {}
            if isinstance(value, str) and value.strip().lower() == "none":
                out.append({"label": label, "spec": None, "inputs": {}})
                continue
            try:  # checked now on a base of 1 W (fractions) to catch bad values early
                parse_cap_value(str(value), 1.0)
            except InputError as exc:
                raise where.error(exc.message, entry) from None
            spec = {"value": value if isinstance(value, str) else float(value),
                    "window": _window(where, item.get("window"), entry) or window,
                    "window_from": window_from}
        if not isinstance(label, str):
            raise where.error(f"label must be text, got {label!r}", entry)
        out.append({"label": label, "spec": spec, "inputs": inputs})
    labels = [c["label"] for c in out]
    dup = {x for x in labels if labels.count(x) > 1}
    if dup:
        raise where.error(f"cap label(s) {', '.join(sorted(dup))} used twice; give each "
                          "cap a distinct label", "power")
    return out


# ------------------------------------------------------------------------ worker


def build_cap(spec: dict[str, Any] | None, platform, jobs, measured_first: int | None):
    """The :class:`~dispatchlab.power.cap.PowerCap` of a cap spec (None: no cap).
    ``measured_first`` is the job row of the run's first measured job (for
    ``window_from = "measure"``)."""

    if spec is None:
        return None
    if "file" in spec:
        return PowerCap.from_file(spec["file"])
    base = platform.dynamic_power_base
    value = spec["value"]
    text = value if isinstance(value, str) else repr(float(value))
    if base is None and not isinstance(value, str) and 0 < float(value) <= 1:
        raise InputError(f"cap {value!r} is a fraction of the platform's max_dynamic_power, "
                         f"which {platform.name} does not have (give watts, or a platform "
                         "with max_power / max_dynamic_power)", field="cap")
    watts = parse_cap_value(text, base if base is not None else math.nan)
    window = spec.get("window")
    if window is None:
        return PowerCap.window(watts, 0, None)
    t0, t1 = window
    if spec.get("window_from") == "measure":
        submit = jobs["submit"]
        first = 0 if measured_first is None else measured_first
        offset = int(submit[first]) if len(submit) else 0
        t0, t1 = t0 + offset, t1 + offset
    return PowerCap.window(watts, t0, t1)


def run_power(spec: dict[str, Any] | None, jobs, platform):
    """``(jobs with power columns, job series or None)`` for a run's ``power`` spec."""
    if spec is None:
        return jobs, None
    if spec.get("from_workload"):

        if not has_power(jobs):
            raise InputError("[power] from_workload = true, but the run's jobs carry no "
                             "power columns (give file = ... or synth_seed = ...)",
                             field="power")
        return jobs, None
    if "file" in spec:
        jobs, _report = attach_power(jobs, spec["file"], platform)
        return jobs, None

    want = bool(spec.get("series"))
    columns, series = synthesize_power(jobs, platform, seed=int(spec["synth_seed"]),
                                       period=int(spec.get("period", 20)), series=want)

    return with_power(jobs, columns), series
