"""Group stored runs into configurations, never pooling what differs.

A group is every stored run of one campaign, trace, platform and configuration key
(:func:`dispatchlab.experiment.campaign.config.config_key`: the canonical configuration without
seed, repetition and slice). Its runs differ only in their workload (seed, slice) and
repetition, so they are samples of one configuration; runs of two campaigns, or of two
job selections, parameter values or measures, are never pooled even when the campaign
files gave them the same labels.

Each group's ``label`` is ``dispatcher-predictor`` (the campaign file's labels; in
campaigns with power, ``dispatcher-predictor-power_predictor@cap``) when
no other group of the same (trace, platform) section has that label, across
campaigns. Groups that would share a label are told apart by what differs between
them, in brackets: the campaign name first, then up to :data:`MAX_FIELDS`
configuration fields (dotted paths into the stored configuration), e.g.
``easy-walltime [campaign=a]`` and ``easy-walltime [trace.sample_jobs=1000]``. A
difference that no field shows falls back to the configuration key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dispatchlab.experiment.campaign.config import legacy_config_key

#: Most configuration fields named in one label.
MAX_FIELDS = 3
#: Configuration entries that vary within a group (not used to tell groups apart).
_PER_RUN = ("seed", "repetition", "slice")


@dataclass
class Group:
    """The stored runs of one configuration: ``campaign``, ``trace`` and ``platform``
    labels, ``config_key``, ``label`` (unique within its trace and platform),
    ``dispatcher`` and ``predictor`` (the campaign file's labels; the predictor is the
    colour group of figures) and ``runs`` (the row dicts, in the given order)."""

    campaign: str
    trace: str
    platform: str
    config_key: str
    label: str
    predictor: str
    dispatcher: str
    runs: list[dict[str, Any]] = field(default_factory=list)


def _config_key(row: dict[str, Any]) -> str:
    """The row's ``config_key`` (computed from its stored configuration when null)."""
    key = row.get("config_key")
    if key:
        return key

    config = row.get("config")
    text = config if isinstance(config, str) or config is None else json.dumps(config)
    return legacy_config_key(row.get("campaign") or "", text, row.get("seed")) or ""


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a.b": leaf}`` for every leaf of nested dicts (lists are leaves)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: value}


def _fields(row: dict[str, Any]) -> dict[str, Any]:
    """The configuration fields of a stored run, without the per-run entries and
    without the parameters the campaign seeded."""
    config = row.get("config")
    try:
        config = json.loads(config) if isinstance(config, str) else config
    except ValueError:
        config = None
    if not isinstance(config, dict):
        return {}
    config = {k: v for k, v in config.items() if k not in _PER_RUN}
    for kind in ("dispatcher", "predictor"):
        comp = config.get(kind)
        if isinstance(comp, dict) and isinstance(comp.get("params"), dict):
            seeded = set(comp.get("seeded") or ())
            config[kind] = {**comp, "params": {k: v for k, v in comp["params"].items()
                                               if k not in seeded}}
    return _flatten(config)


def _show(value: Any) -> str:
    """A configuration value in a label: text as is, anything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _differences(groups: list[Group]) -> dict[int, list[str]]:
    """For groups sharing a label: the ``key=value`` parts that tell each apart."""
    fields = [_fields(g.runs[0]) for g in groups]
    parts: dict[int, list[str]] = {id(g): [] for g in groups}
    if len({g.campaign for g in groups}) > 1:
        for g in groups:
            parts[id(g)].append(f"campaign={g.campaign}")
    names = sorted(set().union(*fields))
    differing = [n for n in names
                 if len({json.dumps(f.get(n, "<absent>"), sort_keys=True)
                         for f in fields}) > 1]
    for g, f in zip(groups, fields, strict=True):
        shown = [f"{n}={_show(f[n])}" for n in differing if n in f]
        if len(shown) > MAX_FIELDS:
            shown = [*shown[:MAX_FIELDS], f"+{len(shown) - MAX_FIELDS} more"]
        parts[id(g)] += shown
    return parts


def _label_section(groups: list[Group]) -> None:
    """Make the labels of one (trace, platform) section unique (see the module
    docstring)."""
    by_label: dict[str, list[Group]] = {}
    for g in groups:
        by_label.setdefault(g.label, []).append(g)
    for base, members in by_label.items():
        if len(members) < 2:
            continue
        parts = _differences(members)
        for g in members:
            g.label = _bracket(base, parts[id(g)])
        labels = [g.label for g in members]
        for g in members:
            if labels.count(g.label) > 1:
                g.label = _bracket(base, [*parts[id(g)], f"config={g.config_key[:8]}"])


def _bracket(base: str, parts: list[str]) -> str:
    """``base [part, part]``, or ``base`` without parts."""
    return f"{base} [{', '.join(parts)}]" if parts else base


def group_runs(runs: Sequence[dict[str, Any]]) -> list[Group]:
    """Group stored run rows (dicts with the ``runs`` columns) by campaign, trace,
    platform and configuration key, in order of first appearance; labels as in the
    module docstring."""
    groups: dict[tuple, Group] = {}
    for row in runs:
        key = (row.get("campaign"), row.get("trace"), row.get("platform"),
               _config_key(row))
        if key not in groups:
            dispatcher, predictor = row.get("dispatcher"), row.get("predictor")
            label = f"{dispatcher}-{predictor}"
            if row.get("power_predictor"):
                label += f"-{row['power_predictor']}"
            if row.get("cap"):
                label += f"@{row['cap']}"
            groups[key] = Group(campaign=key[0], trace=key[1], platform=key[2],
                                config_key=key[3], label=label,
                                predictor=predictor, dispatcher=dispatcher)
        groups[key].runs.append(row)
    sections: dict[tuple, list[Group]] = {}
    for g in groups.values():
        sections.setdefault((g.trace, g.platform), []).append(g)
    for members in sections.values():
        _label_section(members)
    return list(groups.values())


__all__ = ["MAX_FIELDS", "Group", "group_runs"]
