"""Platforms: node types and their resource capacities."""

from dispatchlab.platform.alea import read_alea_machines
from dispatchlab.platform.platform import NodeType, Platform

homogeneous = Platform.homogeneous
eurora = Platform.eurora

__all__ = ["NodeType", "Platform", "eurora", "homogeneous", "read_alea_machines"]
