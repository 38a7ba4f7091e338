"""Campaign files: a TOML declaration of many simulations, expanded into run specs.

A campaign is the product of its ``[[traces]]``, ``[[platforms]]``, ``[[dispatchers]]``,
``[[predictors]]``, seeds and repetitions, minus the ``[[exclude]]`` combinations.
Everything is validated before anything runs or is written: an unknown key, a bad
value, a missing trace file, an unknown dispatcher or predictor name, bad component
parameters or an exclusion that matches nothing raise
:class:`~dispatchlab.errors.InputError` naming the file and the entry.

Each run becomes a JSON-able *spec* (see :func:`expand`). Its **run key** is the
first 20 hex digits of the SHA-256 of the run's canonical configuration (trace options,
platform, dispatcher and predictor names and parameters, tau, overrun, seed,
repetition), the trace file's SHA-256 and the dispatchlab version. Labels, the
campaign name and the storage switches are not part of it: they do not change results.
So a re-run of an unchanged campaign finds every finished run by key, while editing
a trace file, a parameter or upgrading dispatchlab gives new keys.

Seeds are given to generated traces (``generate = ...``), to a trace's
``sample_jobs`` block choice and to any dispatcher or predictor with a ``seed`` or
``random_state`` parameter the campaign file leaves unset. The built-in simulation is
deterministic, so repetitions of one configuration give identical metrics; they
differ in wall-clock fields only (useful for timing).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dispatchlab.errors import InputError

KEY_LENGTH = 20

_CAMPAIGN_KEYS = {"name", "database", "seeds", "repetitions", "tau", "overrun",
                  "store_jobs", "store_series", "measure"}
_TRACE_KEYS = {"label", "path", "lenient", "extra_fields", "drop_overrun", "max_procs",
               "window", "jobs", "fraction", "sample_jobs", "generate", "like",
               "machine_size"}
_PLATFORM_KEYS = {"label", "cores", "nodes", "cores_per_node", "file", "builtin",
                  "allocator"}
_COMPONENT_KEYS = {"label", "name", "params"}
_EXCLUDE_KEYS = {"trace", "platform", "dispatcher", "predictor", "seed"}


@dataclass(frozen=True)
class Campaign:
    """A validated campaign: its file, name, database path and expanded run specs."""

    path: Path
    name: str
    database: Path
    runs: list[dict[str, Any]]

    @property
    def keys(self) -> list[str]:
        return [r["run_key"] for r in self.runs]


class _Where:
    """Error context: campaign file and entry name."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def error(self, message: str, entry: str) -> InputError:
        return InputError(message, file=str(self.path), field=entry)


def _check_keys(where: _Where, table: Any, allowed: set[str], entry: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise where.error(f"expected a table, got {type(table).__name__}", entry)
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise where.error(f"unknown key(s) {', '.join(map(repr, unknown))} (allowed: "
                          f"{', '.join(sorted(allowed))})", entry)
    return table


def _typed(where: _Where, table: dict, key: str, types: type | tuple, entry: str,
           default: Any = None) -> Any:
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in (types if isinstance(types, tuple)
                                                else (types,)):
        raise where.error(f"{key} must be {_type_names(types)}, got {value!r}", entry)
    if not isinstance(value, types):
        raise where.error(f"{key} must be {_type_names(types)}, got {value!r}", entry)
    return value


def _type_names(types: type | tuple) -> str:
    ts = types if isinstance(types, tuple) else (types,)
    return " or ".join({"int": "an integer", "float": "a number", "str": "a string",
                        "bool": "true or false", "list": "an array",
                        "dict": "a table"}.get(t.__name__, t.__name__) for t in ts)


def _pair(where: _Where, table: dict, key: str, entry: str) -> list[int] | None:
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
    label = _typed(where, table, "label", str, entry, default)
    if not label:
        raise where.error("label must not be empty", entry)
    return label


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _resolve(base: Path, text: str) -> Path:
    p = Path(text).expanduser()
    return p if p.is_absolute() else (base / p)


def _trace(where: _Where, base: Path, table: Any, i: int,
           sums: dict[Path, str]) -> dict[str, Any]:
    entry = f"traces[{i}]"
    t = _check_keys(where, table, _TRACE_KEYS, entry)
    out: dict[str, Any] = {}
    generate = t.get("generate")
    if generate is not None:
        if "path" in t:
            raise where.error("give either path (a real trace) or generate, not both", entry)
        if generate not in ("fitted", "lublin"):
            raise where.error(f"generate must be 'fitted' or 'lublin', got {generate!r}",
                              entry)
        jobs = _typed(where, t, "jobs", int, entry)
        if jobs is None or jobs < 1:
            raise where.error("a generated trace needs jobs = N >= 1", entry)
        allowed = {"label", "generate", "jobs"} | (
            {"like", "lenient", "extra_fields"} if generate == "fitted" else {"machine_size"})
        for key in sorted(set(t) - allowed):
            raise where.error(f"{key} does not apply to generate = {generate!r}", entry)
        out.update(generate=generate, jobs=jobs)
        if generate == "fitted":
            like = _typed(where, t, "like", str, entry)
            if like is None:
                raise where.error("generate = 'fitted' needs like = \"TRACE\"", entry)
            path = _resolve(base, like)
            if t.get("lenient"):
                out["lenient"] = True
            if t.get("extra_fields", "error") != "error":
                out["extra_fields"] = t["extra_fields"]
            default_label = f"fitted-{path.name.split('.')[0]}-{jobs}"
        else:
            if "like" in t:
                raise where.error("like does not apply to generate = 'lublin'", entry)
            procs = _typed(where, t, "machine_size", int, entry)
            if procs is None or procs < 2:
                raise where.error("generate = 'lublin' needs machine_size = P >= 2", entry)
            out["machine_size"] = procs
            path = None
            default_label = f"lublin-{procs}-{jobs}"
    else:
        text = _typed(where, t, "path", str, entry)
        if text is None:
            raise where.error("a trace needs path = \"FILE\" (or generate = ...)", entry)
        for key in ("like", "machine_size"):
            if key in t:
                raise where.error(f"{key} applies to generated traces only", entry)
        path = _resolve(base, text)
        default_label = path.name.split(".")[0]
        jobs_range = _pair(where, t, "jobs", entry)
        if jobs_range is not None:
            out["jobs"] = jobs_range
        window = _pair(where, t, "window", entry)
        if window is not None:
            out["window"] = window
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
        if sum(k in out for k in ("jobs", "window", "fraction", "sample_jobs")) > 1:
            raise where.error("give at most one of jobs, window, fraction, sample_jobs",
                              entry)
        for key in ("lenient", "drop_overrun", "max_procs"):
            value = _typed(where, t, key, bool, entry)
            if value:
                out[key] = True
        extra = _typed(where, t, "extra_fields", str, entry, "error")
        if extra not in ("error", "ignore"):
            raise where.error(f"extra_fields must be 'error' or 'ignore', got {extra!r}",
                              entry)
        if extra != "error":
            out["extra_fields"] = extra
    if path is not None:
        if not path.exists():
            raise where.error(f"trace file not found: {path}", entry)
        if not path.is_file():
            raise where.error(f"trace path is not a file: {path}", entry)
        if path not in sums:
            sums[path] = file_sha256(path)
    label = _label(where, t, entry, default_label)
    return {"label": label, "path": None if path is None else str(path.resolve()),
            "options": out, "sha256": sums[path] if path is not None else
            hashlib.sha256(json.dumps(out, sort_keys=True).encode()).hexdigest()}


def _platform(where: _Where, base: Path, table: Any, i: int) -> dict[str, Any]:
    entry = f"platforms[{i}]"
    t = _check_keys(where, table, _PLATFORM_KEYS, entry)
    kinds = [k for k in ("cores", "nodes", "file", "builtin") if k in t]
    if len(kinds) > 1:
        raise where.error(f"give one of cores, nodes (+ cores_per_node), file, builtin; got "
                          f"{', '.join(kinds)}", entry)
    allocator = _typed(where, t, "allocator", str, entry, "first-fit")
    from dispatchlab.dispatch import ALLOCATORS

    if allocator not in ALLOCATORS:
        raise where.error(f"unknown allocator {allocator!r} (choose from "
                          f"{', '.join(ALLOCATORS)})", entry)
    spec: dict[str, Any] = {}
    if not kinds:
        if "cores_per_node" in t:
            raise where.error("cores_per_node needs nodes", entry)
        spec["from_trace"] = True
        label = "trace"
    elif kinds[0] == "cores":
        cores = _typed(where, t, "cores", int, entry)
        if cores < 1:
            raise where.error("cores must be >= 1", entry)
        spec["cores"] = cores
        label = f"{cores}-cores"
    elif kinds[0] == "nodes":
        nodes = _typed(where, t, "nodes", int, entry)
        per = _typed(where, t, "cores_per_node", int, entry)
        if per is None:
            raise where.error("nodes needs cores_per_node", entry)
        if nodes < 1 or per < 1:
            raise where.error("nodes and cores_per_node must be >= 1", entry)
        spec.update(nodes=nodes, cores_per_node=per)
        label = f"{nodes}x{per}"
    elif kinds[0] == "builtin":
        name = _typed(where, t, "builtin", str, entry)
        if name != "eurora":
            raise where.error(f"unknown builtin platform {name!r} (choose from eurora)", entry)
        spec["builtin"] = name
        label = name
    else:
        path = _resolve(base, _typed(where, t, "file", str, entry))
        from dispatchlab.platform import Platform

        Platform.from_toml(path)  # validates now (raises InputError naming the file)
        spec["file"] = str(path.resolve())
        spec["file_sha256"] = file_sha256(path)
        label = path.stem
    if allocator != "first-fit":
        spec["allocator"] = allocator
    return {"label": _label(where, t, entry, label), **spec}


def _component(where: _Where, table: Any, i: int, kind: str) -> dict[str, Any]:
    entry = f"{kind}s[{i}]"
    t = _check_keys(where, table, _COMPONENT_KEYS, entry)
    name = _typed(where, t, "name", str, entry)
    if name is None:
        raise where.error(f"a {kind} needs name = \"...\"", entry)
    params = _typed(where, t, "params", dict, entry, {})
    params = dict(params)
    if kind == "dispatcher":
        from dispatchlab.dispatch import make_dispatcher as make
    else:
        from dispatchlab.predict import make_predictor as make
    try:
        component = make(name, **params)
    except InputError as exc:
        raise where.error(exc.message, entry) from None
    except (ValueError, TypeError) as exc:
        raise where.error(f"bad parameters for {kind} {name!r}: {exc}", entry) from None
    seeded = [p for p in ("seed", "random_state") if p in component.get_params()
              and p not in params]
    default_label = name if not params else name + "(" + ",".join(
        f"{k}={v}" for k, v in sorted(params.items())) + ")"
    return {"label": _label(where, t, entry, default_label), "name": name, "params": params,
            "seeded": seeded, "accepts": sorted(component.get_params())}


def _list(where: _Where, doc: dict, key: str, required: bool) -> list:
    value = doc.get(key, [])
    if not isinstance(value, list):
        raise where.error(f"expected an array of tables [[{key}]]", key)
    if required and not value:
        raise where.error(f"the campaign needs at least one [[{key}]] entry", key)
    return value


def _unique_labels(where: _Where, items: list[dict], kind: str) -> None:
    seen: set[str] = set()
    for item in items:
        if item["label"] in seen:
            raise where.error(f"label {item['label']!r} is used twice; give each entry a "
                              "distinct label", kind)
        seen.add(item["label"])


def run_key(config: dict[str, Any], trace_sha256: str, version: str) -> str:
    """The stable run key: SHA-256 of the canonical config, trace checksum and version."""
    text = json.dumps({"config": config, "trace_sha256": trace_sha256, "version": version},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def load_campaign(path: str | Path, *, database: str | Path | None = None) -> Campaign:
    """Read, validate and expand a campaign file (nothing is run or written)."""
    p = Path(path)
    if not p.exists():
        raise InputError("campaign file not found", file=str(p))
    if p.is_dir():
        raise InputError("is a directory, expected a campaign TOML file", file=str(p))
    where = _Where(p)
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"invalid TOML: {exc}", file=str(p)) from None
    except UnicodeDecodeError:
        raise InputError("not a UTF-8 text file", file=str(p)) from None
    unknown = sorted(set(doc) - {"campaign", "traces", "platforms", "dispatchers",
                                 "predictors", "exclude"})
    if unknown:
        raise where.error(f"unknown section(s) {', '.join(map(repr, unknown))} (allowed: "
                          "campaign, traces, platforms, dispatchers, predictors, exclude)",
                          unknown[0])
    base = p.parent
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
    if repetitions < 1:
        raise where.error("repetitions must be >= 1", "campaign")
    tau = _typed(where, head, "tau", (int, float), "campaign", 10.0)
    if not tau > 0:
        raise where.error("tau must be > 0", "campaign")
    overrun = _typed(where, head, "overrun", str, "campaign", "run")
    if overrun not in ("run", "kill"):
        raise where.error(f"overrun must be 'run' or 'kill', got {overrun!r}", "campaign")
    measure = _typed(where, head, "measure", str, "campaign", "all")
    from dispatchlab.metrics import Measure

    try:
        Measure.parse(measure)
    except (ValueError, InputError) as exc:
        raise where.error(f"bad measure {measure!r}: "
                          f"{getattr(exc, 'message', exc)}", "campaign") from None
    store_jobs = _typed(where, head, "store_jobs", bool, "campaign", True)
    store_series = _typed(where, head, "store_series", bool, "campaign", True)
    db_text = _typed(where, head, "database", str, "campaign", "results.duckdb")
    db = Path(database) if database is not None else _resolve(base, db_text)

    sums: dict[Path, str] = {}
    traces = [_trace(where, base, t, i, sums)
              for i, t in enumerate(_list(where, doc, "traces", True))]
    platforms = [_platform(where, base, t, i)
                 for i, t in enumerate(_list(where, doc, "platforms", False))] or [
        {"label": "trace", "from_trace": True}]
    dispatchers = [_component(where, t, i, "dispatcher")
                   for i, t in enumerate(_list(where, doc, "dispatchers", True))]
    predictors = [_component(where, t, i, "predictor")
                  for i, t in enumerate(_list(where, doc, "predictors", False))] or [
        {"label": "walltime", "name": "walltime", "params": {}, "seeded": [],
         "accepts": []}]
    for items, kind in ((traces, "traces"), (platforms, "platforms"),
                        (dispatchers, "dispatchers"), (predictors, "predictors")):
        _unique_labels(where, items, kind)
    for pl in platforms:
        for di in dispatchers:
            if "allocator" in pl and "allocator" not in di["accepts"]:
                raise where.error(f"platform {pl['label']!r} sets allocator = "
                                  f"{pl['allocator']!r}, but dispatcher {di['label']!r} "
                                  "takes no allocator parameter", "platforms")
    excludes = []
    for i, ex in enumerate(_list(where, doc, "exclude", False)):
        e = _check_keys(where, ex, _EXCLUDE_KEYS, f"exclude[{i}]")
        if not e:
            raise where.error("an empty exclusion would exclude every run", f"exclude[{i}]")
        labels = {"trace": traces, "platform": platforms, "dispatcher": dispatchers,
                  "predictor": predictors}
        for key, value in e.items():
            if key == "seed":
                if value not in seeds:
                    raise where.error(f"seed {value!r} is not among the seeds", f"exclude[{i}]")
            elif value not in {x["label"] for x in labels[key]}:
                raise where.error(f"no {key} labelled {value!r}", f"exclude[{i}]")
        excludes.append(e)

    from dispatchlab.campaign.store import package_version

    version = package_version()
    runs: list[dict[str, Any]] = []
    used = [0] * len(excludes)
    keys: dict[str, str] = {}
    for tr, pl, di, pr, seed, rep in itertools.product(
            traces, platforms, dispatchers, predictors, seeds, range(repetitions)):
        labels = {"trace": tr["label"], "platform": pl["label"], "dispatcher": di["label"],
                  "predictor": pr["label"], "seed": seed}
        hit = [i for i, e in enumerate(excludes)
               if all(labels[k] == v for k, v in e.items())]
        for i in hit:
            used[i] += 1
        if hit:
            continue
        dparams = {**di["params"], **dict.fromkeys(di["seeded"], seed)}
        pparams = {**pr["params"], **dict.fromkeys(pr["seeded"], seed)}
        platform = {k: v for k, v in pl.items() if k != "label"}
        config = {
            "trace": tr["options"], "platform": platform,
            "dispatcher": {"name": di["name"], "params": dparams},
            "predictor": {"name": pr["name"], "params": pparams},
            "tau": float(tau), "overrun": overrun, "measure": measure,
            "seed": seed, "repetition": rep,
        }
        key = run_key(config, tr["sha256"], version)
        desc = "/".join(str(v) for v in labels.values()) + f"/rep{rep}"
        if key in keys:
            raise where.error(f"runs {keys[key]} and {desc} have the same configuration "
                              "(two entries differ only by label?)", "campaign")
        keys[key] = desc
        runs.append({
            "run_key": key, "campaign": name, "seed": seed, "repetition": rep,
            "tau": float(tau), "overrun": overrun, "measure": measure, "version": version,
            "trace_sha256": tr["sha256"], "store_jobs": store_jobs,
            "store_series": store_series,
            "trace": {"label": tr["label"], "path": tr["path"], **tr["options"]},
            "platform": dict(pl),
            "dispatcher": {"label": di["label"], "name": di["name"], "params": dparams},
            "predictor": {"label": pr["label"], "name": pr["name"], "params": pparams},
            "config": config,
        })
    for i, n in enumerate(used):
        if n == 0:
            raise where.error("this exclusion matches no run", f"exclude[{i}]")
    if not runs:
        raise where.error("every run is excluded", "exclude")
    return Campaign(path=p, name=name, database=db, runs=runs)
