"""Campaign files: a TOML declaration of many simulations, expanded into run specs.

A campaign is the product of its ``[[traces]]`` (times their ``slices``),
``[[platforms]]``, ``[[dispatchers]]``, ``[[predictors]]``, seeds and repetitions,
minus the ``[[exclude]]`` combinations. Everything is validated before anything runs
or is written: an unknown section or key (with a "did you mean" suggestion), a bad
value, a missing file (with the nearest names in its folder), an unknown dispatcher
or predictor name, bad component parameters, slices that do not fit the trace or an
exclusion that matches nothing raise :class:`~dispatchlab.core.errors.InputError` naming
the file and the entry.

Each run becomes a JSON-able *spec* (see :func:`load_campaign`) holding its
**configuration** (``spec["config"]``): the trace's reading and selection options
(with the slice plan), the platform, each component's canonical name
(:meth:`dispatchlab.core.registry.Registry.canonical`; a ``path/file.py:Class`` name is
made absolute, relative to the campaign file's folder) and its *full* parameters
(``get_params()``: defaults included; values that are not JSON by ``repr``), tau,
overrun, measure, seed, repetition and slice.

- The **run key** (:func:`run_key`) is the first 20 hex digits of the SHA-256 of the
  configuration, the SHA-256 of every input file the run reads (its contents, not its
  path: the trace, a ``like`` trace, the platform file, the files a component or one
  of its sub-components declares in ``input_files``, such as the model file of
  ``priority = "l2r:model=m.json"``: see
  :func:`dispatchlab.experiment.provenance.declared_input_files`; ``spec["inputs"]`` maps path
  -> SHA-256) and the run's code hash
  (:func:`dispatchlab.experiment.provenance.run_code_hash`: dispatchlab's result-affecting code,
  the versions of numpy, ortools, lightgbm and scikit-learn, and the user's own
  classes with the modules they import). Labels, the campaign name and the storage
  switches are not part of it. So running an unchanged campaign again finds every run
  stored, while editing a trace, a platform file, a declared input file, a parameter,
  dispatchlab's code or an own class gives new keys: those runs execute again.
- The **configuration key** (:func:`config_key`) identifies what is compared: the
  campaign name and the configuration without seed, repetition and slice, and without
  the seed values the campaign injects into components. Runs of one configuration
  key over different workloads (``spec["workload"]``: ``seed=S`` or
  ``seed=S/slice=K``) are the samples of one configuration; runs of different keys are
  never pooled (:mod:`dispatchlab.experiment.campaign.groups`).

Seeds are given to generated traces (``generate = ...``), to a trace's
``sample_jobs`` block choice and to any dispatcher or predictor with a ``seed`` or
``random_state`` parameter the campaign file leaves unset. The built-in simulation is
deterministic, so repetitions of one configuration give identical metrics; they
differ in wall-clock fields only (useful for timing).

**Slices**: ``slices = { count = K, jobs = N }`` (optionally ``lead_in = L``, default
:func:`dispatchlab.workload.slices.default_lead_in`) on a trace file gives K runs per
configuration and seed, one per slice of :func:`dispatchlab.workload.slices.
plan_slices`: each simulates its cleaned rows ``[first, stop)`` and measures its own
block (:func:`~dispatchlab.workload.slices.measure_for`). The trace is read once at
expansion to check that the plan fits its cleaned jobs.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dispatchlab.core.components import parse_component, registry_of
from dispatchlab.core.errors import InputError, parse_toml
from dispatchlab.core.registry import is_own_class_name
from dispatchlab.core.suggest import did_you_mean, missing_file_hint
from dispatchlab.dispatch import ALLOCATORS
from dispatchlab.experiment import provenance
from dispatchlab.experiment.campaign.checks import (
    _check_keys,
    _existing_file,
    _resolve,
    _typed,
    _unknown,
    _Where,
)
from dispatchlab.experiment.campaign.keys import (  # re-exported: the public key functions
    _SEED_PARAMS,
    config_key,
    jsonable,
    legacy_config_key,
    run_key,
    workload_name,
)
from dispatchlab.experiment.campaign.power_table import power_table
from dispatchlab.experiment.campaign.traces import cleaned_length
from dispatchlab.experiment.campaign.validate import validate_run
from dispatchlab.experiment.provenance import (
    code_hash_from,
    file_sha256,
    is_file_module,
    package_version,
)
from dispatchlab.metrics import Measure
from dispatchlab.metrics.jobs import check_tau
from dispatchlab.platform.choose import PRESETS
from dispatchlab.platform.eurora import split_archive
from dispatchlab.platform.files import load_platform_file
from dispatchlab.predict import make_predictor
from dispatchlab.sim.engine import check_combination, check_overrun
from dispatchlab.sim.native import ENGINES
from dispatchlab.workload.companions import find_machines
from dispatchlab.workload.eurora import archive_members
from dispatchlab.workload.load import FORMATS
from dispatchlab.workload.requests import parse_partition_map
from dispatchlab.workload.slices import default_lead_in, measure_for, plan_slices

SECTIONS = ("campaign", "traces", "platforms", "dispatchers", "predictors", "exclude",
            "power", "power_predictors")
_CAMPAIGN_KEYS = {"name", "database", "seeds", "repetitions", "tau", "overrun",
                  "store_jobs", "store_series", "measure", "max_wall", "engine"}
_TRACE_KEYS = {"label", "path", "lenient", "extra_fields", "drop_overrun", "max_procs",
               "window", "jobs", "fraction", "sample_jobs", "generate", "like",
               "machine_size", "load", "slices", "format", "submit_from", "timezone",
               "columns",
               "unstarted", "running", "procs_per_node", "hot_start", "arrival",
               "arrival_window", "burst_size", "bursts", "partition_map",
               "ignore_partitions"}
#: Reader options of a trace file entry (``load_trace``'s ``format`` and
#: ``reader_options``), checked against the format's reader when the format is given.
_READER_KEYS = ("format", "submit_from", "timezone", "columns", "unstarted", "running")
_SLICE_KEYS = {"count", "jobs", "lead_in", "queued"}
_SELECTIONS = ("jobs", "window", "fraction", "sample_jobs")
_PLATFORM_KEYS = {"label", "cores", "nodes", "cores_per_node", "file", "builtin",
                  "allocator"}
_COMPONENT_KEYS = {"label", "name", "params"}
#: a dispatcher entry may also name the run's duration model (Borghesi et al. 2018's throttling)
_DISPATCHER_KEYS = _COMPONENT_KEYS | {"duration_model"}
#: the arrival patterns of ``generate = "eurora"`` (Borghesi et al. 2018's synthetic instances)
_ARRIVALS = ("uniform", "left-skewed", "burst")
_EXCLUDE_KEYS = {"trace", "platform", "dispatcher", "predictor", "seed", "cap",
                 "power_predictor"}

__all__ = ["Campaign", "config_key", "file_sha256", "jsonable", "legacy_config_key",
           "load_campaign", "run_key", "workload_name"]


@dataclass(frozen=True)
class Campaign:
    """A validated campaign: its file, name, database path and expanded run specs."""

    path: Path
    name: str
    database: Path
    runs: list[dict[str, Any]]

    @property
    def keys(self) -> list[str]:
        """The run keys, in expansion order."""
        return [r["run_key"] for r in self.runs]


#: the most repetitions of one configuration (each is a run to expand and store)
MAX_REPETITIONS = 10_000


# ------------------------------------------------------------------------ keys


# ------------------------------------------------------------------ small checks


def _pair(where: _Where, table: dict, key: str, entry: str) -> list[int] | None:
    """``table[key]`` as ``[A, B]`` with ``0 <= A < B`` (None when absent)."""
    value = table.get(key)
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise where.error(f"{key} must be an array of two integers [A, B], got {value!r}",
                          entry)
    if value[1] <= value[0] or value[0] < 0:
        raise where.error(f"{key} = {value!r} must satisfy 0 <= A < B", entry)
    return list(value)


def _label(where: _Where, table: dict, entry: str, default: str) -> str:
    """The entry's non-empty ``label`` (``default`` when absent)."""
    label = _typed(where, table, "label", str, entry, default)
    if not label:
        raise where.error("label must not be empty", entry)
    return label


# ---------------------------------------------------------------------- traces


def _generated_trace(where: _Where, base: Path, t: dict,
                     entry: str) -> tuple[dict[str, Any], Path | None, str]:
    """Options, source file (``like``) and default label of a ``generate = ...`` entry."""
    generate = t["generate"]
    if "path" in t:
        raise where.error("give either path (a real trace) or generate, not both", entry)
    if generate not in ("fitted", "lublin", "eurora"):
        raise where.error(f"generate must be 'fitted', 'lublin' or 'eurora', got "
                          f"{generate!r}", entry)
    jobs = _typed(where, t, "jobs", int, entry)
    if jobs is None or jobs < 1:
        raise where.error("a generated trace needs jobs = N >= 1", entry)
    allowed = {"label", "generate", "jobs"} | (
        {"like", "lenient", "extra_fields"} if generate == "fitted"
        else {"arrival", "arrival_window", "burst_size", "bursts"} if generate == "eurora"
        else {"machine_size", "load"})
    for key in sorted(set(t) - allowed):
        raise where.error(f"{key} does not apply to generate = {generate!r}", entry)
    out: dict[str, Any] = {"generate": generate, "jobs": jobs}
    if generate == "eurora":  # Borghesi et al. 2018's synthetic instances on the Eurora machine
        window = _typed(where, t, "arrival_window", int, entry)
        if window is None or window < 1:
            raise where.error("generate = 'eurora' needs arrival_window = SECONDS >= 1 "
                              "(jobs arrive in [0, arrival_window))", entry)
        arrival = _typed(where, t, "arrival", str, entry, "uniform")
        if arrival not in _ARRIVALS:

            raise where.error(f"arrival must be one of {', '.join(_ARRIVALS)}, got "
                              f"{arrival!r}{did_you_mean(arrival, _ARRIVALS)}", entry)
        out.update(arrival_window=window, arrival=arrival)
        label = f"eurora-{jobs}-{window}s-{arrival}"
        if arrival == "burst":  # bursts = G groups or burst_size = N jobs a group
            if "bursts" in t and "burst_size" in t:
                raise where.error("give bursts = G (groups) or burst_size = N (jobs a "
                                  "group), not both", entry)
            for key in ("bursts", "burst_size"):
                size = _typed(where, t, key, int, entry)
                if size is not None and size < 1:
                    raise where.error(f"{key} must be an integer >= 1, got {size}", entry)
            if "burst_size" in t:
                out["burst_size"] = t["burst_size"]
                label += f"{t['burst_size']}"
            elif "bursts" in t:  # only when set: other campaigns keep their configuration
                out["bursts"] = t["bursts"]
                label += f"-{t['bursts']}groups"
        else:
            for key in sorted({"burst_size", "bursts"} & set(t)):
                raise where.error(f"{key} applies to arrival = 'burst' only", entry)
        return out, None, label
    if generate == "lublin":
        procs = _typed(where, t, "machine_size", int, entry)
        if procs is None or procs < 2:
            raise where.error("generate = 'lublin' needs machine_size = P >= 2", entry)
        out["machine_size"] = procs
        load = _typed(where, t, "load", (int, float), entry)
        if load is not None:  # arrivals scaled to this offered load (only when given)
            if not (load > 0 and math.isfinite(load)):
                raise where.error(f"load must be a number > 0, got {load!r}", entry)
            out["load"] = float(load)
            return out, None, f"lublin-{procs}-{jobs}-load{load:g}"
        return out, None, f"lublin-{procs}-{jobs}"
    like = _typed(where, t, "like", str, entry)
    if like is None:
        raise where.error("generate = 'fitted' needs like = \"TRACE\"", entry)
    path = _existing_file(where, _resolve(base, like), "trace file", entry)
    if t.get("lenient"):
        out["lenient"] = True
    if t.get("extra_fields", "error") != "error":
        out["extra_fields"] = t["extra_fields"]
    return out, path, f"fitted-{Path(like).name.split('.')[0]}-{jobs}"


def _selection(where: _Where, t: dict, entry: str) -> dict[str, Any]:
    """The trace file entry's job selection (at most one of jobs, window, fraction,
    sample_jobs)."""
    out: dict[str, Any] = {}
    for key in ("jobs", "window"):
        pair = _pair(where, t, key, entry)
        if pair is not None:
            out[key] = pair
    fraction = _typed(where, t, "fraction", str, entry)
    if fraction is not None:
        side, _, number = fraction.partition(":")
        try:
            f = float(number)
        except ValueError:
            f = -1.0
        if side not in ("first", "last") or not 0 < f <= 1:
            raise where.error(f"fraction must be 'first:F' or 'last:F' with 0 < F <= 1, "
                              f"got {fraction!r}", entry)
        out["fraction"] = fraction
    sample = _typed(where, t, "sample_jobs", int, entry)
    if sample is not None:
        if sample < 1:
            raise where.error("sample_jobs must be >= 1", entry)
        out["sample_jobs"] = sample
    if len(out) > 1:
        raise where.error("give at most one of jobs, window, fraction, sample_jobs", entry)
    return out


def _reading(where: _Where, t: dict, entry: str) -> dict[str, Any]:
    """The trace file entry's reading and cleaning options (defaults left out)."""
    out: dict[str, Any] = {}
    for key in ("lenient", "drop_overrun", "max_procs"):
        if _typed(where, t, key, bool, entry):
            out[key] = True
    extra = _typed(where, t, "extra_fields", str, entry, "error")
    if extra not in ("error", "ignore"):
        raise where.error(f"extra_fields must be 'error' or 'ignore', got {extra!r}", entry)
    if extra != "error":
        out["extra_fields"] = extra
    per_node = _typed(where, t, "procs_per_node", int, entry, 1)
    if per_node < 1:
        raise where.error(f"procs_per_node must be >= 1, got {per_node}", entry)
    if per_node != 1:  # jobs ask for whole nodes (dispatchlab.workload.clean.units_as_nodes)
        out["procs_per_node"] = per_node
    out.update(_reader(where, t, entry))
    return out


def _reader(where: _Where, t: dict, entry: str) -> dict[str, Any]:
    """The entry's format and reader options (``format = "sacct"``, ``timezone``, ...):
    types checked here, values by the reader when the trace is read."""

    out: dict[str, Any] = {}
    fmt = _typed(where, t, "format", str, entry)
    if fmt is not None:
        if fmt not in FORMATS:
            raise where.error(f"unknown format {fmt!r}{did_you_mean(fmt, FORMATS)} (choose "
                              f"from {', '.join(FORMATS)})", entry)
        out["format"] = fmt
    for key in _READER_KEYS[1:]:
        value = _typed(where, t, key, list if key == "columns" else str, entry)
        if value is None:
            continue
        if key == "columns" and not all(isinstance(c, str) and c for c in value):
            raise where.error("columns must be an array of column names", entry)
        if fmt is not None and key not in FORMATS[fmt]:
            raise where.error(f"{key} does not apply to {fmt} traces", entry)
        out[key] = value
    return out


def _slices(where: _Where, t: dict, entry: str) -> dict[str, int] | None:
    """``slices = {count, jobs, lead_in, queued}`` with the lead-in resolved, or None.
    ``queued = true``: each run's lead-in jobs are all submitted at the submission time
    of its first measured job, so the run starts with them queued on an empty machine
    (a replay that resubmits the jobs running and waiting at its start, as Carastan-Santos et al.
    2024's power-cap windows open; ours)."""
    if "slices" not in t:
        return None
    s = _check_keys(where, t["slices"], _SLICE_KEYS, f"{entry}.slices")
    count = _typed(where, s, "count", int, f"{entry}.slices")
    jobs = _typed(where, s, "jobs", int, f"{entry}.slices")
    if count is None or jobs is None or count < 1 or jobs < 1:
        raise where.error("slices needs count = K >= 1 and jobs = N >= 1", entry)
    lead_in = _typed(where, s, "lead_in", int, f"{entry}.slices")
    if lead_in is not None and lead_in < 0:
        raise where.error("slices.lead_in must be >= 0", entry)
    conflicts = [k for k in _SELECTIONS if k in t]
    if conflicts:
        raise where.error(f"slices choose their own blocks of jobs: remove "
                          f"{', '.join(conflicts)} from this trace", entry)

    out = {"count": count, "jobs": jobs,
           "lead_in": default_lead_in(jobs) if lead_in is None else lead_in}
    if _typed(where, s, "queued", bool, f"{entry}.slices", False):
        # the lead-in is a backlog queued at the block's first submission (ours; only
        # when set, so other slices keep their configuration)
        if out["lead_in"] == 0:
            raise where.error("slices.queued needs lead_in > 0 (the jobs queued at the "
                              "start)", entry)
        out["queued"] = True
    return out


def _file_trace(where: _Where, base: Path, t: dict,
                entry: str) -> tuple[dict[str, Any], Path, str]:
    """Options, file and default label of a ``path = ...`` trace entry."""
    text = _typed(where, t, "path", str, entry)
    if text is None:
        raise where.error("a trace needs path = \"FILE\" (or generate = ...)", entry)
    if "like" in t:
        raise where.error("like applies to generated traces only", entry)
    if ("load" in t) != ("machine_size" in t):
        raise where.error("a trace file's load = L needs machine_size = UNITS (the units "
                          "the offered load is computed on), and machine_size needs load",
                          entry)
    member = None
    if "#" in text and not _resolve(base, text).exists():
        # ARCHIVE#MEMBER: a job instance inside a tar archive (the Eurora test data)
        archive_text, _, member = text.partition("#")
        path = _existing_file(where, _resolve(base, archive_text), "trace archive", entry)
    else:
        path = _existing_file(where, _resolve(base, text), "trace file", entry)
    slices = _slices(where, t, entry)
    out = {**_selection(where, t, entry), **_reading(where, t, entry)}
    if "load" in t:  # each run's jobs: arrivals scaled to this offered load (ours)
        load = _typed(where, t, "load", (int, float), entry)
        size = _typed(where, t, "machine_size", int, entry)
        if not (load > 0 and math.isfinite(load)):
            raise where.error(f"load must be a number > 0, got {load!r}", entry)
        if size < 1:
            raise where.error(f"machine_size must be >= 1, got {size}", entry)
        out["load"], out["machine_size"] = float(load), size
    if slices is not None:
        out["slices"] = slices
    if member is not None:
        out["member"] = member
        return out, path, Path(member).name.split(".")[0]
    return out, path, Path(text).name.split(".")[0]


def companion_files(path: Path) -> list[Path]:
    """Files read together with a trace file (Alea's machine file, see
    :func:`dispatchlab.workload.companions.find_machines`): their contents join the run
    key like the trace's."""

    found = find_machines(path)
    return [] if found is None else [found]


def _expand_members(where: _Where, base: Path, tables: list) -> list:
    """Trace entries whose ``path`` is ``ARCHIVE#PATTERN`` with a glob pattern (``*``,
    ``?``, ``[``) become one entry per archive member matching it (the pattern is
    matched against each member's full name and its ``/``-separated tails), in name
    order; each is labelled ``LABEL/STEM`` (``LABEL``: the entry's label, default the
    pattern's folder). So ``path = "Eurora.tar.gz#historical_traces/100/*.log_crypt"``
    is every 100-job Eurora instance. A pattern that matches nothing is an error."""
    import fnmatch

    out = []
    for i, t in enumerate(tables):
        text = t.get("path") if isinstance(t, dict) else None
        if not isinstance(text, str) or "#" not in text or _resolve(base, text).exists():
            out.append(t)
            continue
        archive_text, _, pattern = text.partition("#")
        if not any(c in pattern for c in "*?["):
            out.append(t)
            continue
        entry = f"traces[{i}]"
        archive = _existing_file(where, _resolve(base, archive_text), "trace archive", entry)

        try:
            members = archive_members(archive)
        except InputError as exc:
            raise where.error(exc.message, entry) from None
        hits = sorted(m for m in members
                      if any(fnmatch.fnmatchcase("/".join(m.split("/")[k:]), pattern)
                             for k in range(m.count("/") + 1)))
        if not hits:
            raise where.error(f"no member of {archive.name} matches {pattern!r}", entry)
        prefix = t.get("label") or Path(pattern).parent.name or archive.stem
        for m in hits:
            stem = Path(m).name.split(".")[0]
            out.append({**t, "path": f"{archive_text}#{m}", "label": f"{prefix}/{stem}"})
    return out


def _partition_options(where: _Where, t: dict[str, Any], entry: str) -> dict[str, Any]:
    """A trace entry's ``partition_map = "OLD=NEW,..."`` and ``ignore_partitions =
    true`` (``simulate --partition-map`` / ``--ignore-partitions``), popped from ``t``
    and checked: the options to add (none when not given)."""
    out: dict[str, Any] = {}
    mapping = t.pop("partition_map", None)
    ignore = t.pop("ignore_partitions", None)
    if mapping is not None:
        if not isinstance(mapping, str):
            raise where.error(f"partition_map must be a text OLD=NEW[,OLD=NEW], got "
                              f"{mapping!r}", entry)
        try:
            parse_partition_map(mapping)
        except InputError as exc:
            raise where.error(f"partition_map: {exc.message}", entry) from None
        out["partition_map"] = mapping
    if ignore is not None:
        if not isinstance(ignore, bool):
            raise where.error(f"ignore_partitions must be true or false, got {ignore!r}",
                              entry)
        if ignore:
            out["ignore_partitions"] = True
    if "partition_map" in out and "ignore_partitions" in out:
        raise where.error("give either partition_map or ignore_partitions, not both", entry)
    return out


def _trace(where: _Where, base: Path, table: Any, i: int,
           sums: dict[Path, str]) -> dict[str, Any]:
    """One ``[[traces]]`` entry: label, file, options, input files and checksum."""
    entry = f"traces[{i}]"
    t = dict(_check_keys(where, table, _TRACE_KEYS, entry))
    hot = t.pop("hot_start", None)
    partitions = _partition_options(where, t, entry)
    if t.get("generate") is not None:
        if "slices" in t:
            raise where.error("slices apply to trace files (path = ...), not to "
                              "generated traces", entry)
        options, path, default_label = _generated_trace(where, base, t, entry)
    else:
        options, path, default_label = _file_trace(where, base, t, entry)
    if hot is not None:  # only when given: other traces keep their run keys
        if isinstance(hot, bool) or not isinstance(hot, int | float) or not 0 <= hot <= 1:
            raise where.error(f"hot_start must be a share of the nodes in [0, 1], got "
                              f"{hot!r}", entry)
        options["hot_start"] = float(hot)
        default_label += f"-hs{float(hot) * 100:g}"
    options.update(partitions)  # only when given: other traces keep their run keys
    inputs = {}
    member = options.get("member")  # in the configuration: members of one archive differ
    if path is not None:
        if path not in sums:
            sums[path] = file_sha256(path)
        inputs[str(path)] = sums[path]
        for companion in companion_files(path):  # e.g. Alea's machine file
            inputs[str(companion)] = file_sha256(companion)
    if path is None:
        sha = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()
    elif member is not None:  # one member of an archive: the archive's bytes and the name
        sha = hashlib.sha256(f"{sums[path]}#{member}".encode()).hexdigest()
    else:
        sha = sums[path]
    shown = None if path is None else str(path) if member is None else f"{path}#{member}"
    return {"label": _label(where, t, entry, default_label),
            "path": shown, "options": options, "inputs": inputs, "sha256": sha,
            "entry": entry}


_CLEANED_LENGTHS: dict[tuple, int] = {}


def _cleaned_length(where: _Where, trace: dict[str, Any]) -> int:
    """Jobs left after reading and cleaning a trace file entry (no selection); read
    once per file content and options in this process."""
    options = {k: v for k, v in trace["options"].items()
               if k in ("lenient", "extra_fields", "drop_overrun", "max_procs", *_READER_KEYS)}
    key = (trace["path"], trace["sha256"], json.dumps(options, sort_keys=True))
    if key not in _CLEANED_LENGTHS:
        try:
            _CLEANED_LENGTHS[key] = cleaned_length({"path": trace["path"], **options})
        except InputError as exc:
            raise where.error(f"reading the trace to plan its slices: {exc}",
                              trace["entry"]) from None
    return _CLEANED_LENGTHS[key]


def _slice_plan(where: _Where, trace: dict[str, Any], measure: str) -> list[Any]:
    """The slices of a trace entry (``[None]`` without slices); a plan that does not
    fit the cleaned jobs, or a campaign measure other than ``all``, is an error."""
    s = trace["options"].get("slices")
    if s is None:
        return [None]
    if measure != "all":
        raise where.error(f"slices measure their own blocks: they do not combine with "
                          f"[campaign] measure = {measure!r}", trace["entry"])

    n = _cleaned_length(where, trace)
    try:
        return plan_slices(n, s["count"], s["jobs"], s["lead_in"])
    except InputError as exc:
        raise where.error(f"slices do not fit {trace['path']}: {exc.message}",
                          trace["entry"]) from None


# ------------------------------------------------------------------- platforms


def _platform_node_level(spec: dict[str, Any]) -> bool | None:
    """True when every run on the platform of ``spec`` is node-level (a preset or a
    platform file with more resources than cores); None when its runs' jobs decide
    (pooled cores, homogeneous nodes of cores, the trace's machine)."""
    if "builtin" in spec:

        platform = PRESETS[spec["builtin"]]()
    elif "file" in spec:

        platform, _ = load_platform_file(spec["file"])
    else:
        return None
    if "core" not in platform.resource_names or not platform.is_core_only():
        return True
    return None


def _platform(where: _Where, base: Path, table: Any, i: int) -> dict[str, Any]:
    """One ``[[platforms]]`` entry: ``{"label", "spec", "inputs", "node_level"}``
    (:func:`_platform_node_level`)."""
    entry = f"platforms[{i}]"
    t = _check_keys(where, table, _PLATFORM_KEYS, entry)
    kinds = [k for k in ("cores", "nodes", "file", "builtin") if k in t]
    if len(kinds) > 1:
        raise where.error(f"give one of cores, nodes (+ cores_per_node), file, builtin; got "
                          f"{', '.join(kinds)}", entry)
    allocator = _typed(where, t, "allocator", str, entry, "first-fit")

    if allocator not in ALLOCATORS:
        raise where.error(f"unknown allocator {_unknown(allocator, tuple(ALLOCATORS))} "
                          f"(choose from {', '.join(ALLOCATORS)})", entry)
    spec, label, inputs = _platform_kind(where, base, t, kinds[0] if kinds else None, entry)
    if allocator != "first-fit":
        spec["allocator"] = allocator
    return {"label": _label(where, t, entry, label), "spec": spec, "inputs": inputs,
            "node_level": _platform_node_level(spec)}


def _platform_kind(where: _Where, base: Path, t: dict, kind: str | None,
                   entry: str) -> tuple[dict[str, Any], str, dict[str, str]]:
    """The platform spec, default label and input files of one kind of entry."""
    if kind is None:
        if "cores_per_node" in t:
            raise where.error("cores_per_node needs nodes", entry)
        return {"from_trace": True}, "trace", {}
    if kind == "cores":
        cores = _typed(where, t, "cores", int, entry)
        if cores < 1:
            raise where.error("cores must be >= 1", entry)
        return {"cores": cores}, f"{cores}-cores", {}
    if kind == "nodes":
        nodes = _typed(where, t, "nodes", int, entry)
        per = _typed(where, t, "cores_per_node", int, entry)
        if per is None:
            raise where.error("nodes needs cores_per_node", entry)
        if nodes < 1 or per < 1:
            raise where.error("nodes and cores_per_node must be >= 1", entry)
        return {"nodes": nodes, "cores_per_node": per}, f"{nodes}x{per}", {}
    if kind == "builtin":
        name = _typed(where, t, "builtin", str, entry)

        if name not in PRESETS:
            raise where.error(f"unknown builtin platform {_unknown(name, tuple(PRESETS))} "
                              f"(choose from {', '.join(PRESETS)})", entry)
        return {"builtin": name}, name, {}
    # a platform TOML or PA-HPC-SIM node file, or ARCHIVE#MEMBER (the archive resolved)

    archive, member = split_archive(_resolve(base, _typed(where, t, "file", str, entry)))
    path = _existing_file(where, archive, "platform file", entry)
    spec_file = str(path) if member is None else f"{path}#{member}"
    # validates now (raises InputError naming the file); checksums every file it reads
    _platform, files = load_platform_file(spec_file)
    label = path.stem if member is None else Path(member).name
    return {"file": spec_file}, label, {str(p): file_sha256(p) for p in files}


# ------------------------------------------------------------------ components


def _absolute_name(base: Path, name: str) -> str:
    """``path/file.py:Class`` with the path made absolute (relative to ``base``)."""

    module, sep, attr = name.rpartition(":")
    if not sep or not is_file_module(module):
        return name
    return f"{_resolve(base, module).resolve()}:{attr}"


def _seed_params(component: Any, given: dict[str, Any]) -> list[str]:
    """The parameters the campaign seeds in ``component``: its own ``seed`` /
    ``random_state`` and, at any depth, those of its nested components (``high__seed``
    of ``dec-rapl``'s DEC, whether given by name or as an instance), except the ones
    ``given`` explicitly. A nested component left at its default name gets the seed
    through ``name__seed`` like any nested parameter."""
    own = component.get_params()
    out = [p for p in _SEED_PARAMS if p in own and p not in given]
    for name in getattr(component, "nested", {}):
        try:
            sub = component._component(name)
        except (ValueError, TypeError, InputError):
            continue  # not set (None) or not a component
        prefix = name + "__"
        sub_given = {k[len(prefix):]: v for k, v in given.items() if k.startswith(prefix)}
        out += [prefix + p for p in _seed_params(sub, sub_given)]
    return out


def _component(where: _Where, base: Path, table: Any, i: int, kind: str) -> dict[str, Any]:
    """One ``[[dispatchers]]`` / ``[[predictors]]`` entry, built once to check it:
    label, canonical name, given and full parameters, seeded parameters, declared
    input files and the code hash of an own class."""

    entry = f"{kind.replace('-', '_')}s[{i}]"
    t = _check_keys(where, table, _DISPATCHER_KEYS if kind == "dispatcher"
                    else _COMPONENT_KEYS, entry)
    typed = _typed(where, t, "name", str, entry)
    if typed is None:
        raise where.error(f"a {kind} needs name = \"...\"", entry)
    params = dict(_typed(where, t, "params", dict, entry, {}))
    registry = registry_of(kind)
    try:
        name = registry.canonical(_absolute_name(base, typed))
        component = registry.build(name, **params)
        inputs = {str(p): file_sha256(p) for p in [
            *provenance.declared_input_files(component),
            *provenance.nested_own_class_files(component)]}
        code = provenance.component_code_hash(name)
    except InputError as exc:
        raise where.error(exc.message, entry) from None
    except (ValueError, TypeError) as exc:
        raise where.error(f"bad parameters for {kind} {typed!r}: {exc}", entry) from None
    full = component.get_params(deep=True)
    seeded = _seed_params(component, params)
    # the canonical spelling (EASY -> easy), so labels compare like names
    shown = typed if is_own_class_name(typed) else name
    default_label = shown if not params else shown + "(" + ",".join(
        f"{k}={v}" for k, v in sorted(params.items())) + ")"
    out = {"label": _label(where, t, entry, default_label), "name": name, "params": params,
           "full": jsonable(full), "seeded": seeded, "accepts": sorted(full),
           "inputs": inputs, "code": code,
           "needs_power": kind == "dispatcher" and component.requires.power_predictions}
    if "duration_model" in t:
        out["duration_model"] = _duration_model(where, base, t["duration_model"],
                                                f"{entry}.duration_model")
    if kind == "dispatcher":

        # refused here, before any run: a dispatcher that slows running jobs without a
        # duration model (node-level platforms: checked in _expand)
        out["built"] = component
        try:
            check_combination(component, duration_model=out.get("duration_model"),
                              model_field=f"{entry}.duration_model")
        except InputError as exc:
            raise where.error(exc.message, exc.field or entry) from None
    return out


def _duration_model(where: _Where, base: Path, value: Any, entry: str) -> dict[str, Any]:
    """A dispatcher entry's ``duration_model``: a spec in the component grammar
    (``"factor:f=0.5"``) or a table ``{name = "...", params = {...}}``."""
    if isinstance(value, str):
        try:
            spec = parse_component(value, "duration-model", option=entry)
        except InputError as exc:
            raise where.error(exc.message, entry) from None
        value = {"name": spec.name, "params": dict(spec.params)}
    if not isinstance(value, dict):
        raise where.error(f"duration_model must be a spec (\"factor:f=0.5\") or a table "
                          f"{{name = ..., params = {{...}}}}, got {value!r}", entry)
    comp = _component(where, base, {"name": value.get("name"), **(
        {"params": value["params"]} if "params" in value else {})}, 0, "duration-model")
    unknown = set(value) - {"name", "params"}
    if unknown:
        raise where.error(f"unknown key(s) {', '.join(sorted(unknown))} in duration_model",
                          entry)
    return comp


def _default_predictor() -> dict[str, Any]:
    """The predictor of a campaign without ``[[predictors]]``: ``walltime``."""

    full = make_predictor("walltime").get_params()
    return {"label": "walltime", "name": "walltime", "params": {}, "full": jsonable(full),
            "seeded": [], "accepts": sorted(full), "inputs": {}, "code": None}


# -------------------------------------------------------------------- the file


def _list(where: _Where, doc: dict, key: str, required: bool) -> list:
    """The array of tables ``[[key]]`` (required: at least one entry)."""
    value = doc.get(key, [])
    if not isinstance(value, list):
        raise where.error(f"expected an array of tables [[{key}]]", key)
    if required and not value:
        raise where.error(f"the campaign needs at least one [[{key}]] entry", key)
    return value


def _unique_labels(where: _Where, items: list[dict], kind: str) -> None:
    """Labels of one kind must differ (they name runs and select exclusions)."""
    seen: set[str] = set()
    for item in items:
        if item["label"] in seen:
            raise where.error(f"label {item['label']!r} is used twice; give each entry a "
                              "distinct label", kind)
        seen.add(item["label"])


def _read_toml(p: Path) -> dict[str, Any]:
    """The campaign file as TOML; a missing file, bad TOML or an unknown section (with
    the closest section name) raise :class:`InputError`."""
    if not p.exists():

        raise InputError(f"campaign file not found{missing_file_hint(p)}", file=str(p))
    if p.is_dir():
        raise InputError("is a directory, expected a campaign TOML file", file=str(p))
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", file=str(p)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=str(p)) from None
    doc = parse_toml(text, str(p))
    unknown = sorted(set(doc) - set(SECTIONS))
    if unknown:
        names = ", ".join(_unknown(k, SECTIONS) for k in unknown)
        raise InputError(f"unknown section(s) {names}; allowed: {', '.join(SECTIONS)}",
                         file=str(p), field=unknown[0])
    return doc


@dataclass(frozen=True)
class _Head:
    """The validated ``[campaign]`` table."""

    name: str
    seeds: list[int]
    repetitions: int
    tau: float
    overrun: str
    measure: str
    store_jobs: bool
    store_series: bool
    database: Path
    max_wall: float | None = None
    engine: str = "auto"


def _head(where: _Where, doc: dict, database: str | Path | None) -> _Head:
    """The ``[campaign]`` table checked, with defaults (``database`` overrides it)."""
    p = where.path
    head = _check_keys(where, doc.get("campaign", {}), _CAMPAIGN_KEYS, "campaign")
    name = _typed(where, head, "name", str, "campaign", p.stem)
    seeds = head.get("seeds", [0])
    if (not isinstance(seeds, list) or not seeds
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds)):
        raise where.error(f"seeds must be a non-empty array of integers, got {seeds!r}",
                          "campaign")
    if len(set(seeds)) != len(seeds):
        raise where.error(f"seeds has a repeated value: {seeds!r}", "campaign")
    repetitions = _typed(where, head, "repetitions", int, "campaign", 1)
    if not 1 <= repetitions <= MAX_REPETITIONS:
        raise where.error(f"repetitions must be from 1 to {MAX_REPETITIONS:,}", "campaign")
    tau = _typed(where, head, "tau", (int, float), "campaign", 10.0)

    try:
        tau = check_tau(tau)
    except InputError as exc:
        raise where.error(exc.message, "tau") from None
    overrun = _typed(where, head, "overrun", str, "campaign", "run")

    try:
        check_overrun(overrun)
    except InputError as exc:
        raise where.error(exc.message, "campaign") from None
    measure = _measure(where, head)
    db_text = _typed(where, head, "database", str, "campaign", "results.duckdb")
    max_wall = _typed(where, head, "max_wall", (int, float), "campaign", None)
    if max_wall is not None and not (max_wall > 0 and math.isfinite(max_wall)):
        raise where.error(f"max_wall must be a number of seconds > 0, got {max_wall!r}",
                          "campaign")
    engine = _typed(where, head, "engine", str, "campaign", "auto")
    if engine not in ENGINES:
        raise where.error(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}"
                          + did_you_mean(engine, ENGINES), "campaign")
    return _Head(name, seeds, repetitions, float(tau), overrun, measure,
                 _typed(where, head, "store_jobs", bool, "campaign", True),
                 _typed(where, head, "store_series", bool, "campaign", True),
                 Path(database) if database is not None else _resolve(p.parent, db_text),
                 None if max_wall is None else float(max_wall), engine)


def _measure(where: _Where, head: dict) -> str:
    """The campaign's ``measure`` text, checked by :meth:`Measure.parse`."""
    measure = _typed(where, head, "measure", str, "campaign", "all")

    try:
        Measure.parse(measure)
    except (ValueError, InputError) as exc:
        raise where.error(f"bad measure {measure!r}: "
                          f"{getattr(exc, 'message', exc)}", "campaign") from None
    return measure


def _excludes(where: _Where, doc: dict, labels: dict[str, list[dict]],
              seeds: list[int]) -> list[dict[str, Any]]:
    """The ``[[exclude]]`` entries, each checked to name existing labels. A value may be
    a list of labels: the entry matches runs with any of them."""
    out = []
    for i, ex in enumerate(_list(where, doc, "exclude", False)):
        entry = f"exclude[{i}]"
        e = _check_keys(where, ex, _EXCLUDE_KEYS, entry)
        if not e:
            raise where.error("an empty exclusion would exclude every run", entry)
        for key, given in e.items():
            values = given if isinstance(given, list) else [given]
            if not values:
                raise where.error(f"{key} = [] matches nothing", entry)
            for value in values:
                if key == "seed":
                    if value not in seeds:
                        raise where.error(f"seed {value!r} is not among the seeds", entry)
                    continue
                if key not in labels:
                    raise where.error(f"{key} needs a [power] table in the campaign", entry)
                names = [x["label"] for x in labels[key]]
                if value not in names:
                    shown = _unknown(value, names) if isinstance(value, str) else repr(value)
                    raise where.error(f"no {key} labelled {shown}", entry)
        out.append(e)
    return out


def _check_allocators(where: _Where, platforms: list[dict], dispatchers: list[dict]) -> None:
    """A platform's ``allocator`` needs dispatchers that take an allocator parameter."""
    for pl in platforms:
        for di in dispatchers:
            if "allocator" in pl["spec"] and "allocator" not in di["accepts"]:
                raise where.error(f"platform {pl['label']!r} sets allocator = "
                                  f"{pl['spec']['allocator']!r}, but dispatcher "
                                  f"{di['label']!r} takes no allocator parameter",
                                  "platforms")


@dataclass(frozen=True)
class _Power:
    """The campaign's power axes: ``spec`` (the ``[power]`` data source, None without
    the table), ``inputs`` (its files), ``caps`` and ``predictors`` (the cap and power
    predictor entries; ``[None]`` when the campaign has no such axis)."""

    spec: dict[str, Any] | None
    inputs: dict[str, str]
    caps: list[dict[str, Any] | None]
    predictors: list[dict[str, Any] | None]


def _power(where: _Where, base: Path, doc: dict, dispatchers: list[dict]) -> _Power:
    """``[power]`` and ``[[power_predictors]]`` checked
    (:mod:`dispatchlab.experiment.campaign.power_table`)."""
    table = power_table(where, base, doc)
    entries = _list(where, doc, "power_predictors", False)
    if entries and table is None:
        raise where.error("power predictors need job power: add a [power] table (file = "
                          "... or synth_seed = ...)", "power_predictors")
    predictors = [_component(where, base, t, i, "power-predictor")
                  for i, t in enumerate(entries)]
    needing = [d["label"] for d in dispatchers if d["needs_power"]]
    if needing and not predictors:
        raise where.error(f"dispatcher(s) {', '.join(needing)} need power predictions: add "
                          "a [power] table and [[power_predictors]] entries",
                          "dispatchers")
    if table is None:
        return _Power(None, {}, [None], [None])
    return _Power(table["spec"], table["inputs"], table["caps"], predictors or [None])


def load_campaign(path: str | Path, *, database: str | Path | None = None) -> Campaign:
    """Read, validate and expand a campaign file (nothing is run or written).

    Each run spec holds: ``run_key``, ``config_key``, ``code_hash``, ``campaign``,
    ``seed``, ``repetition``, ``slice`` (index or None), ``workload``, ``tau``,
    ``overrun``, ``measure`` (the one the run applies: a slice's own block),
    ``engine`` (``auto``, ``native`` or ``python``: the campaign's ``engine``),
    ``version``, ``trace_sha256``, ``inputs`` (path -> SHA-256), ``store_jobs``,
    ``store_series``, ``trace`` (label, path, options, ``slice`` rows), ``platform``,
    ``dispatcher`` and ``predictor`` (label, name, the parameters to build it with)
    and ``config``."""
    p = Path(path)
    doc = _read_toml(p)
    where = _Where(p)
    head = _head(where, doc, database)
    base = p.parent
    sums: dict[Path, str] = {}
    traces = [_trace(where, base, t, i, sums)
              for i, t in enumerate(_expand_members(where, base,
                                                    _list(where, doc, "traces", True)))]
    platforms = [_platform(where, base, t, i)
                 for i, t in enumerate(_list(where, doc, "platforms", False))] or [
        {"label": "trace", "spec": {"from_trace": True}, "inputs": {}}]
    dispatchers = [_component(where, base, t, i, "dispatcher")
                   for i, t in enumerate(_list(where, doc, "dispatchers", True))]
    predictors = [_component(where, base, t, i, "predictor")
                  for i, t in enumerate(_list(where, doc, "predictors", False))] or [
        _default_predictor()]
    power = _power(where, base, doc, dispatchers)
    for items, kind in ((traces, "traces"), (platforms, "platforms"),
                        (dispatchers, "dispatchers"), (predictors, "predictors"),
                        (power.caps, "power.caps"),
                        (power.predictors, "power_predictors")):
        _unique_labels(where, [x for x in items if x is not None], kind)
    _check_allocators(where, platforms, dispatchers)
    labels = {"trace": traces, "platform": platforms, "dispatcher": dispatchers,
              "predictor": predictors}
    if power.spec is not None:
        labels.update(cap=power.caps, power_predictor=[p for p in power.predictors if p])
    excludes = _excludes(where, doc, labels, head.seeds)
    plans = {tr["label"]: _slice_plan(where, tr, head.measure) for tr in traces}
    runs = _expand(where, head, traces, platforms, dispatchers, predictors, excludes, plans,
                   power)
    return Campaign(path=p, name=head.name, database=head.database, runs=runs)


# ------------------------------------------------------------------- expansion


def _component_config(comp: dict[str, Any], seed: int,
                      overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """A component's configuration entry: canonical name, full parameters with the
    campaign's seed in the seeded ones, and which ones were seeded."""
    params = {**comp["full"], **(overrides or {}), **dict.fromkeys(comp["seeded"], seed)}
    return {"name": comp["name"], "params": params, "seeded": list(comp["seeded"])}


def _run_config(head: _Head, tr: dict, pl: dict, di: dict, pr: dict, seed: int, rep: int,
                sl: Any, power: _Power | None = None, cap: dict | None = None,
                pp: dict | None = None) -> dict[str, Any]:
    """The canonical configuration of one run (what its results depend on, besides
    input files and code)."""
    allocator = {"allocator": pl["spec"]["allocator"]} if "allocator" in pl["spec"] else None
    config: dict[str, Any] = {
        "trace": tr["options"], "platform": pl["spec"],
        "dispatcher": _component_config(di, seed, allocator),
        "predictor": _component_config(pr, seed),
        "tau": head.tau, "overrun": head.overrun, "measure": head.measure,
        "seed": seed, "repetition": rep,
    }
    if head.max_wall is not None:  # only when set: other configurations keep their keys
        config["max_wall"] = head.max_wall
    if head.engine != "auto":  # likewise
        config["engine"] = head.engine
    if di.get("duration_model") is not None:  # likewise
        config["duration_model"] = _component_config(di["duration_model"], seed)
    if power is not None and power.spec is not None:  # likewise: campaigns with [power]
        config["power"] = power.spec
        config["cap"] = None if cap is None else cap["spec"]
        config["power_predictor"] = None if pp is None else _component_config(pp, seed)
    if sl is not None:

        config["slice"] = {"index": sl.index, "rows": [sl.first, sl.stop],
                           "measure": measure_for(sl)}
    return config


def _code_hash(di: dict, pr: dict, memo: dict, pp: dict | None = None) -> str:
    """The run code hash of a dispatcher x predictor (x power predictor) combination
    (memoized in ``memo``)."""

    pair = (di["name"], pr["name"], None if pp is None else pp["name"])
    if pair not in memo:
        memo[pair] = code_hash_from(di["code"], pr["code"],
                                    None if pp is None else pp["code"])
    return memo[pair]


def _run_spec(head: _Head, version: str, config: dict, tr: dict, pl: dict, di: dict,
              pr: dict, code: str, sl: Any, power: _Power | None = None,
              cap: dict | None = None, pp: dict | None = None) -> dict[str, Any]:
    """A run spec (see :func:`load_campaign`) from its configuration."""
    seed, rep = config["seed"], config["repetition"]
    inputs = {**tr["inputs"], **pl["inputs"], **di["inputs"], **pr["inputs"],
              **(di.get("duration_model") or {}).get("inputs", {})}
    if power is not None and power.spec is not None:
        inputs.update(power.inputs)
        inputs.update({} if cap is None else cap["inputs"])
        inputs.update({} if pp is None else pp["inputs"])
    trace = {"label": tr["label"], "path": tr["path"], **tr["options"]}
    if sl is not None:
        trace["slice"] = {"index": sl.index, "first": sl.first, "start": sl.start,
                          "stop": sl.stop}
    return {
        "run_key": run_key(config, inputs, code),
        "config_key": config_key(head.name, config), "code_hash": code,
        "campaign": head.name, "seed": seed, "repetition": rep,
        "slice": None if sl is None else sl.index,
        "workload": workload_name(seed, None if sl is None else sl.index),
        "tau": head.tau, "overrun": head.overrun, "max_wall": head.max_wall,
        "engine": head.engine,
        "measure": config["slice"]["measure"] if sl is not None else head.measure,
        "version": version, "trace_sha256": tr["sha256"], "inputs": inputs,
        "store_jobs": head.store_jobs, "store_series": head.store_series,
        "trace": trace, "platform": {"label": pl["label"], **pl["spec"]},
        "dispatcher": {"label": di["label"], "name": di["name"],
                       "params": {**di["params"], **dict.fromkeys(di["seeded"], seed)}},
        "predictor": {"label": pr["label"], "name": pr["name"],
                      "params": {**pr["params"], **dict.fromkeys(pr["seeded"], seed)}},
        "duration_model": None if di.get("duration_model") is None else {
            "name": di["duration_model"]["name"],
            "params": {**di["duration_model"]["params"],
                       **dict.fromkeys(di["duration_model"]["seeded"], seed)}},
        "power": config.get("power"),
        "cap": None if cap is None else {"label": cap["label"], "spec": cap["spec"]},
        "power_predictor": None if pp is None else {
            "label": pp["label"], "name": pp["name"],
            "params": {**pp["params"], **dict.fromkeys(pp["seeded"], seed)}},
        "config": config,
    }


def _expand(where: _Where, head: _Head, traces: list, platforms: list, dispatchers: list,
            predictors: list, excludes: list, plans: dict,
            power: _Power | None = None) -> list[dict[str, Any]]:
    """Every run of the product minus the exclusions; two runs with one key (entries
    that differ only by label) and an exclusion that matches nothing are errors."""
    version = package_version()
    runs: list[dict[str, Any]] = []
    used = [0] * len(excludes)
    keys: dict[str, str] = {}
    memo: dict[tuple, str] = {}
    checked: dict[str, Any] = {}
    power = power or _Power(None, {}, [None], [None])
    for tr, pl, di, pr, cap, pp, seed in itertools.product(
            traces, platforms, dispatchers, predictors, power.caps, power.predictors,
            head.seeds):
        labels = {"trace": tr["label"], "platform": pl["label"], "dispatcher": di["label"],
                  "predictor": pr["label"]}
        if power.spec is not None:
            labels["cap"] = cap["label"]
            if pp is not None:
                labels["power_predictor"] = pp["label"]
        labels["seed"] = seed
        hit = [i for i, e in enumerate(excludes)
               if all(labels.get(k) in v if isinstance(v, list) else labels.get(k) == v
                      for k, v in e.items())]
        for i in hit:
            used[i] += 1
        if hit:
            continue
        if pl.get("node_level") and "built" in di:  # refused before any run

            try:
                check_combination(di["built"], duration_model=di.get("duration_model"),
                                  node_level=True)
            except InputError as exc:
                raise where.error(f"{exc.message} (platform {pl['label']!r} x dispatcher "
                                  f"{di['label']!r}; exclude the pair or change the "
                                  "platform)", "platforms") from None
        code = _code_hash(di, pr, memo, pp)
        for sl, rep in itertools.product(plans[tr["label"]], range(head.repetitions)):
            config = _run_config(head, tr, pl, di, pr, seed, rep, sl, power, cap, pp)
            spec = _run_spec(head, version, config, tr, pl, di, pr, code, sl, power, cap, pp)
            desc = "/".join(str(v) for v in labels.values()) + (
                f"/slice{sl.index}" if sl is not None else "") + f"/rep{rep}"
            if spec["run_key"] in keys:
                raise where.error(f"runs {keys[spec['run_key']]} and {desc} have the same "
                                  "configuration (two entries differ only by label?)",
                                  "campaign")
            keys[spec["run_key"]] = desc
            try:
                validate_run(spec, checked)  # exactly what the run checks first
            except InputError as exc:
                raise where.error(f"run {desc} cannot run: {exc.message}",
                                  exc.field or "campaign") from None
            runs.append(spec)
    for i, n in enumerate(used):
        if n == 0:
            raise where.error("this exclusion matches no run", f"exclude[{i}]")
    if not runs:
        raise where.error("every run is excluded", "exclude")
    return runs
