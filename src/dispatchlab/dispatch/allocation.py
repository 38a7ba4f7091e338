"""Where a job runs: :class:`Allocation`, the units of a job per node (the payload of a
``Start`` decision on a node-level platform, and what the engine keeps per running job).

Its own module, below the decisions (:mod:`dispatchlab.dispatch.base`), the allocators
and the release profiles, which all use it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class Allocation:
    """Units of a job per node: ``nodes[k]`` gets ``counts[k]`` units (int64 arrays)."""

    nodes: np.ndarray
    counts: np.ndarray

    def matrix(self, request: np.ndarray, n_nodes: int) -> np.ndarray:
        """Resources used per node (nodes x resources)."""
        used = np.zeros((n_nodes, len(request)), dtype=np.int64)
        used[self.nodes] = self.counts[:, None] * request[None, :]
        return used
