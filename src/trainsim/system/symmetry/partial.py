"""When some ranks may stand for others (DESIGN.md, "Speed": symmetry first): the platform
conditions that the replica slice (``replica``) and equivalence folding (``equivalence``, run
by ``system.api``) both check before running part of the ranks.

A shortcut that runs part of the ranks drops the others' traffic. That is exact only where
no resource is shared across the ranks it folds away: a node's or a pool's memory tier queues
every rank's accesses, and a collective pricer that prices the groups in flight together
(the wafer's) needs every group. A rank that mirrors another keeps its own injection ports,
which only the collectives it is simulated in touch (``why_not_mirrored_ports``, for
equivalence folding; the replica slice copies its representatives' busy ports to its mirrors
instead: ``InjectionPorts.copy_busy``).
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
    platform: Platform, graphs: Sequence[WorkloadGraph], mirror_of: dict[int, int], *, compat_astra: bool
) -> str | None:
    """Why mirrors (``mirror_of``: mirror -> representative; ``graphs[r]``: the graph rank ``r``
    runs, or stands for when it is a mirror) may not behave as their representatives once they
    take part in a collective that runs (None: they do, as far as injection ports go).

    In the default mode a rank's collective messages queue on its injection port of the
    dimension they are accounted to (``network/injection.py``), and a port can still be busy
    after a collective has ended on the rank when it ends on a peer later (a group spanning
    pipeline stages, such as the tied-embedding all-reduce of the first and last stage, whose
    members enter it at different times). A collective of mirrors only is never simulated
    (their representatives run its image), so the mirrors' ports stay idle where in the full
    run they would be busy: a later collective that runs with a mirror as a member would send
    on the mirror's idle port at once. Refused when a mirror has both a collective that runs
    and one that does not, whose members stand for different representatives (members of one
    class end together, their ports free by then: every message a rank sends is awaited by a
    peer and arrives no earlier than its port frees), on a common network dimension (where a
    group's members differ in coordinate; its messages' ports are among them). ASTRA-sim's
    mode has no ports."""
    if compat_astra or not mirror_of:
        return None
    from trainsim.topology import MultiDimTopology

    topo = MultiDimTopology.of_network(platform.network, compat_astra=False)
    every = tuple(range(len(graphs)))
    simulated: set[str] = set()
    for rank, g in enumerate(graphs):
        if rank not in mirror_of:
            simulated |= _group_names(g)

    def dims(members: Sequence[int]) -> set[int]:
        return {d for d in range(len(topo.sizes)) if len({topo.coord(m, d) for m in members}) > 1}

    for mirror in mirror_of:
        run: set[int] = set()
        idle: set[int] = set()
        for name in _group_names(graphs[mirror]):
            members = platform.comm_groups.get(name, every)
            if name in simulated:
                run |= dims(members)
            elif len({mirror_of.get(m, m) for m in members}) > 1:
                idle |= dims(members)
        if run & idle:
            return (
                f"mirror rank {mirror} takes part in collectives that run and in collectives that do not (run by its "
                f"representative's image) on network dimension {min(run & idle)}: its injection port there would stay "
                "idle where the full run has it busy; simulate every rank"
            )
    return None
