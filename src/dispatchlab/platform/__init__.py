"""Platforms: node types and their resource capacities, queue tables, presets and
readers (TOML, Alea machine files, PA-HPC-SIM/Eurora node and queue files)."""

from dispatchlab.platform.alea import read_alea_machines
from dispatchlab.platform.eurora import (
    EURORA_QUEUES,
    eurora_platform,
    read_eurora_nodes,
    read_system_queues,
)
from dispatchlab.platform.files import (
    load_platform_file,
    platform_from_table,
    read_platform,
    read_platform_toml,
    trace_platform,
)
from dispatchlab.platform.platform import NodeType, Partition, Platform
from dispatchlab.platform.queues import DEFAULT_EWT, job_ewt

homogeneous = Platform.homogeneous
eurora = eurora_platform

__all__ = [
    "DEFAULT_EWT",
    "EURORA_QUEUES",
    "NodeType",
    "Partition",
    "Platform",
    "eurora",
    "eurora_platform",
    "homogeneous",
    "job_ewt",
    "load_platform_file",
    "platform_from_table",
    "read_alea_machines",
    "read_eurora_nodes",
    "read_platform",
    "read_platform_toml",
    "read_system_queues",
    "trace_platform",
]
