"""Platforms: node types and their resource capacities, queue tables, presets and
readers (TOML, Alea machine files, PA-HPC-SIM/Eurora node and queue files)."""

from dispatchlab.platform.alea import read_alea_machines
from dispatchlab.platform.eurora import (
    EURORA_QUEUES,
    read_eurora_nodes,
    read_system_queues,
)
from dispatchlab.platform.platform import NodeType, Platform, load_platform_file
from dispatchlab.platform.queues import DEFAULT_EWT, job_ewt

homogeneous = Platform.homogeneous
eurora = Platform.eurora

__all__ = [
    "DEFAULT_EWT",
    "EURORA_QUEUES",
    "NodeType",
    "Platform",
    "eurora",
    "homogeneous",
    "job_ewt",
    "load_platform_file",
    "read_alea_machines",
    "read_eurora_nodes",
    "read_system_queues",
]
