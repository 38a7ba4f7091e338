"""Campaign keys: the configuration key (a configuration's runs over seeds, repetitions
and slices), the run key (configuration, input contents, code hash) and the key of a
run stored by schema version 1. Its own module, below the campaign configuration
(:mod:`~dispatchlab.experiment.campaign.config`, which computes keys while expanding a
file) and the store (:mod:`~dispatchlab.experiment.campaign.store`, which reads old
rows), so that neither imports the other."""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
from numbers import Integral, Real
from typing import Any

from dispatchlab.core.components import registry_of

#: hex digits of a key
KEY_LENGTH = 20
#: component parameters a campaign seeds with the run's seed
_SEED_PARAMS = ("seed", "random_state")
#: Configuration entries that vary between the runs of one configuration.
_PER_RUN = ("seed", "repetition", "slice")


def _digest(value: Any) -> str:
    """First :data:`KEY_LENGTH` hex digits of the SHA-256 of canonical JSON."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:KEY_LENGTH]


def run_key(config: dict[str, Any], inputs: dict[str, str], code_hash: str) -> str:
    """The run key: first 20 hex digits of the SHA-256 of the canonical configuration,
    the input files' SHA-256s (contents only, so moving a folder keeps the keys) and
    the run's code hash."""
    return _digest({"config": config, "inputs": sorted(set(inputs.values())),
                    "code": code_hash})


def config_key(campaign: str, config: dict[str, Any]) -> str:
    """The configuration key: first 20 hex digits of the SHA-256 of the campaign name
    and the configuration without ``seed``, ``repetition`` and ``slice`` and without
    the component parameters the campaign seeded (each component's ``seeded`` list)."""
    reduced = {k: v for k, v in config.items() if k not in _PER_RUN}
    for kind in ("dispatcher", "predictor"):
        comp = dict(reduced.get(kind) or {})
        seeded = set(comp.get("seeded", ()))
        comp["params"] = {k: v for k, v in (comp.get("params") or {}).items()
                          if k not in seeded}
        reduced[kind] = comp
    return _digest({"campaign": campaign, "config": reduced})


def workload_name(seed: int, slice_index: int | None) -> str:
    """What the statistics pair runs on: ``seed=S`` or ``seed=S/slice=K``."""
    return f"seed={seed}" if slice_index is None else f"seed={seed}/slice={slice_index}"


def jsonable(value: Any) -> Any:
    """``value`` as JSON data: numbers, strings, booleans and None as they are (a
    non-finite float as its ``repr``), tuples and lists as lists, dicts with string
    keys as dicts, anything else as its ``repr``."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        f = float(value)
        return f if math.isfinite(f) else repr(f)
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: jsonable(v) for k, v in value.items()}
    return repr(value)


def _legacy_component(comp: dict[str, Any], kind: str, seed: Any) -> dict[str, Any]:
    """A schema-1 component entry in today's form: canonical name, full parameters
    when the class can still be built (else the stored ones), and ``seeded`` guessed
    as the seed parameters whose value is the run's seed."""
    name, params = comp.get("name", ""), dict(comp.get("params") or {})
    registry = registry_of(kind)
    try:
        name = registry.canonical(name)
        params = jsonable(registry.build(name, **params).get_params(deep=True))
    except Exception:  # an old class gone, or bad parameters: keep what was stored
        pass
    seeded = [p for p in _SEED_PARAMS if p in params and params[p] == seed]
    return {"name": name, "params": params, "seeded": seeded}


@functools.lru_cache(maxsize=4096)
def legacy_config_key(campaign: str, config_text: str | None, seed: Any) -> str | None:
    """The :func:`config_key` of a run stored by schema version 1 (its ``config``
    JSON): the configuration is first brought to today's form (full component
    parameters, no platform file checksum), so it matches a new run of the same
    configuration. None when the text is not a configuration. Memoized (a reading
    view computes it for every row of every query)."""
    try:
        config = json.loads(config_text) if config_text else None
    except ValueError:
        return None
    if not isinstance(config, dict):
        return None
    config = copy.deepcopy(config)
    if isinstance(config.get("platform"), dict):
        config["platform"].pop("file_sha256", None)
    for kind in ("dispatcher", "predictor"):
        if isinstance(config.get(kind), dict) and "seeded" not in config[kind]:
            config[kind] = _legacy_component(config[kind], kind, seed)
    return config_key(campaign or "", config)
