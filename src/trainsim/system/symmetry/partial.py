"""When some ranks may stand for others (DESIGN.md, "Speed": symmetry first): the platform
conditions that the replica slice (``replica``) and equivalence folding (``equivalence``, run
by ``system.api``) both check before running part of the ranks.

A shortcut that runs part of the ranks drops the others' traffic. That is exact only where
no resource is shared across the ranks it folds away: a node's or a pool's memory tier queues
every rank's accesses, and a collective pricer that prices the groups in flight together
(the wafer's) needs every group.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from trainsim.config.types import Platform
from trainsim.enums import NodeType
from trainsim.system.collective_pricing import concurrent_pricer
from trainsim.workload.graph import WorkloadGraph

SHARED_MEMORY_MODES = ("PER_NODE_MEMORY_EXPANSION", "MEMORY_POOL")
_MEMORY_NODE_TYPES = (int(NodeType.MEM_LOAD_NODE), int(NodeType.MEM_STORE_NODE))


def has_memory_nodes(graphs: Iterable[WorkloadGraph]) -> bool:
    """Whether any graph loads from or stores to the remote memory (each distinct node-type
    array looked at once: ranks of a stage share theirs)."""
    seen: set[int] = set()
    for g in graphs:
        if id(g.types) in seen:
            continue
        seen.add(id(g.types))
        if np.isin(g.types, _MEMORY_NODE_TYPES).any():
            return True
    return False


def why_not_partial(platform: Platform, *, memory_traffic: bool, compat_astra: bool = False) -> str | None:
    """Why part of the ranks cannot stand for all on ``platform`` (None: they can, as far as
    the platform goes); ``memory_traffic``: whether the workload uses the remote memory."""
    if memory_traffic and platform.memory.mode in SHARED_MEMORY_MODES:
        return "a node's or a pool's memory accesses queue across replicas; simulate every rank"
    if concurrent_pricer(platform, compat_astra):
        return "the collective pricer prices concurrent groups together: every replica's groups must run"
    return None
