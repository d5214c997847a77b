"""When some ranks may stand for others (DESIGN.md, "Speed": symmetry first): the platform
conditions that the replica slice (``replica``) and equivalence folding (``equivalence``, run
by ``system.api``) both check before running part of the ranks.

A shortcut that runs part of the ranks drops the others' traffic. That is exact only where
no resource is shared across the ranks it folds away: a node's or a pool's memory tier queues
every rank's accesses, and a collective pricer that prices the groups in flight together
(the wafer's) needs every group. A rank that mirrors another keeps its own injection ports,
which only the collectives it is simulated in touch (``why_not_mirrored_ports``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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


def _group_names(graph: WorkloadGraph) -> set[str]:
    """The communicator groups of ``graph``'s collectives."""
    names = graph.pg_name
    return {names[p] for p in np.flatnonzero(graph.types == NodeType.COMM_COLL_NODE).tolist()}


def why_not_mirrored_ports(
    platform: Platform, ran: Sequence[WorkloadGraph], mirrored: dict[int, WorkloadGraph], *, compat_astra: bool
) -> str | None:
    """Why mirrors (ranks that do not run; ``mirrored[m]``: the graph mirror ``m`` stands for)
    may not behave as their representatives once they take part in a collective that runs
    (None: they do, as far as injection ports go).

    In the default mode a rank's collective messages queue on its injection port of the
    dimension they are accounted to (``network/injection.py``), and a port can still be busy
    after the collective has ended on the rank (a peer that joined later still waits for its
    last messages). A collective of mirrors only (its members' representatives run its image)
    is never simulated, so the mirrors' ports stay idle where in the full run they would be
    busy, as their representatives' are: a later collective that runs with a mirror as a
    member (a representative's group holding its own mirrors) would then send on the mirror's
    idle port at once. Refused when a mirror has both kinds of collectives on a common network
    dimension (where a group's members differ in coordinate; the ports its messages take are
    among them). ASTRA-sim's mode has no ports."""
    if compat_astra or not mirrored:
        return None
    from trainsim.topology import MultiDimTopology

    topo = MultiDimTopology.of_network(platform.network, compat_astra=False)
    simulated: set[str] = set()
    for g in ran:
        simulated |= _group_names(g)

    def dims(name: str) -> set[int]:
        members = platform.comm_groups.get(name)
        if members is None:  # every rank: every dimension
            return set(range(len(topo.sizes)))
        return {d for d in range(len(topo.sizes)) if len({topo.coord(m, d) for m in members}) > 1}

    for mirror, graph in mirrored.items():
        names = _group_names(graph)
        run = set().union(*(dims(n) for n in names if n in simulated))
        idle = set().union(*(dims(n) for n in names if n not in simulated))
        if run & idle:
            return (
                f"mirror rank {mirror} takes part in collectives that run and in collectives that do not (run by its "
                f"representative's image) on network dimension {min(run & idle)}: its injection port there would stay "
                "idle where the full run has it busy; simulate every rank"
            )
    return None
