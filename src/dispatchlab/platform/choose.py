"""The platform of a run from its description: the one place that turns the command
line's ``--platform/--nodes/--cores-per-node`` and a campaign's ``[[platforms]]`` entry
into a :class:`~dispatchlab.platform.Platform`."""

from __future__ import annotations

from typing import Any

from dispatchlab.platform.eurora import eurora_platform
from dispatchlab.platform.files import read_platform, trace_platform
from dispatchlab.platform.platform import Platform

#: the built-in platforms by name
PRESETS = {"eurora": eurora_platform, "marconi100": Platform.marconi100,
           "marconi100-nodes": Platform.marconi100_nodes}


def platform_for(spec: dict[str, Any], jobs: Any, advice: str) -> Platform:
    """The platform described by ``spec``, one of ``{"cores": C}`` (a pool of C cores),
    ``{"nodes": N, "cores_per_node": C}``, ``{"builtin": NAME}`` (a preset of
    :data:`PRESETS`: ``eurora``, ``marconi100``,
    ``marconi100-nodes``), ``{"file": PATH}``
    (a platform TOML or a PA-HPC-SIM node file, also ``ARCHIVE#MEMBER``) or ``{}``: the
    trace header's machine (``jobs.info``; :func:`~dispatchlab.platform.files.trace_platform`, whose
    error ends with ``advice``). Other keys (a campaign's ``allocator``) are ignored."""
    if "cores" in spec:
        return Platform.pooled(spec["cores"])
    if "nodes" in spec:
        return Platform.homogeneous(spec["nodes"], spec["cores_per_node"])
    if "builtin" in spec:
        return PRESETS[spec["builtin"]]()
    if "file" in spec:
        return read_platform(spec["file"])
    return trace_platform(jobs.info, advice=advice)
