"""Symmetry classes of whole runs: when every rank would do the same thing at the same time,
simulate one representative rank and derive every other rank's result from it (DESIGN.md,
"Speed": symmetry first; system layer, beside the executor it specializes).

The fast path is taken only when all of these hold (:func:`representative_graph` checks the
static ones before the run):

1. every rank has the same graph: the same arrays (``micro.ReplicatedGraphs`` or shallow
   copies), or equal ones (node names may differ: they never change timing);
2. the graph has only compute, collective, metadata and invalid nodes: no send / receive
   (their peers differ per rank) and no remote-memory access (a shared pool is not symmetric);
3. every collective is on the whole machine (no ``pg_name``, or a group listing every rank),
   and the system names no custom algorithm (each rank runs its own graph, ``custom.py``);
4. every network dimension is vertex-transitive (Ring, Switch, FullyConnected; not Mesh), with
   no fabric, and the backend declares a symmetry class (``network/protocol.py``); the system
   has no rendezvous protocol, one queue per dimension (``symmetry.collective.
   knobs_blocking_symmetry``) and no ``trace-enabled`` (which logs every rank's nodes);
5. at run time, every collective passes the collective runtime's own symmetric test
   (``CollectiveRuntime.symmetric_ok``: symmetric algorithms, no double binary tree, no
   group) and its representative simulation accepts the backend (``one_link`` class: every
   message crosses one link). Otherwise :class:`SymmetryBroken` ends the attempt and
   ``api.simulate`` runs the whole step rank by rank, from scratch.

Why this is exact: by induction over events, all ranks start the same graph at t = 0 with the
same durations, so they issue each collective at the same tick; the runtime's symmetric path
(already exact against rank by rank, tests/system/test_symmetry.py) then ends it at the same
tick on every rank. So every rank has the representative's node times.

Derived results: ``RunResult.ranks`` is a :class:`~trainsim.system.result.UniformRanks` (rank
i = the representative's result with ``rank = i``, built on access), ``RunResult.timelines``
holds the representative's :class:`NodeTimeline` once per rank (the same object; its graph is
the representative's, rank 0), ``RunResult.collectives`` is a
:class:`~trainsim.system.result.UniformRecords` (each of the representative's collective
records once per rank, in the order a rank-by-rank run appends them). Memory: one graph, one rank state, one per-node timing list,
whatever the rank count. Times in ns inside, seconds in results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from trainsim.compute import ComputeModel
from trainsim.config.types import Platform
from trainsim.engine import EventQueue
from trainsim.enums import NodeType
from trainsim.memory import MemoryModel
from trainsim.network.protocol import NO_SYMMETRY, NetworkBackend
from trainsim.network.registry import backend_capabilities
from trainsim.system.build import build_compute, build_memory
from trainsim.system.collective_runtime import CollectiveInstance, CollectiveRuntime
from trainsim.system.executor import Executor
from trainsim.system.result import RunResult, UniformRanks, UniformRecords
from trainsim.system.symmetry.collective import VERTEX_TRANSITIVE, knobs_blocking_symmetry
from trainsim.workload.graph import WorkloadGraph
from trainsim.workload.micro import ReplicatedGraphs

_ALLOWED_NODES = np.array(
    [NodeType.COMP_NODE, NodeType.COMM_COLL_NODE, NodeType.METADATA_NODE, NodeType.INVALID_NODE]
)
_ARRAYS = (
    "ids",
    "types",
    "duration_s",
    "is_cpu_op",
    "num_ops",
    "tensor_size",
    "comm_type",
    "comm_size",
    "comm_src",
    "comm_dst",
    "comm_tag",
    "comm_priority",
    "data_dep_ptr",
    "data_dep_ids",
    "ctrl_dep_ptr",
    "ctrl_dep_ids",
)
_OTHERS = ("pg_name", "involved_dim")


class SymmetryBroken(Exception):
    """The representative cannot stand for every rank (internal: the caller falls back)."""


def uniform_graph(graphs: Sequence[WorkloadGraph]) -> WorkloadGraph | None:
    """The graph every rank runs, or None when two ranks' graphs differ in anything that can
    change timing."""
    if isinstance(graphs, ReplicatedGraphs):
        return graphs.graph
    if not graphs:
        return None
    first = graphs[0]
    for g in graphs[1:]:
        for name in _ARRAYS:
            a, b = getattr(first, name), getattr(g, name)
            if a is not b and not np.array_equal(a, b):
                return None
        for name in _OTHERS:
            a, b = getattr(first, name), getattr(g, name)
            if a is not b and a != b:
                return None
    return first


def representative_graph(platform: Platform, graphs: Sequence[WorkloadGraph], backend: str) -> WorkloadGraph | str:
    """The graph one representative runs for every rank, or why it cannot (conditions 1-4 of
    the module docstring)."""
    net = platform.network
    if backend_capabilities(backend).symmetry == NO_SYMMETRY:
        return f"backend {backend} declares no symmetry class"
    blocker = knobs_blocking_symmetry(platform.system)
    if blocker:
        return blocker
    if platform.system.trace_enabled:
        return "trace-enabled (every rank's nodes are logged)"
    if net.fabric is not None:
        return "a physical fabric"
    if any(d.kind not in VERTEX_TRANSITIVE for d in net.dims):
        return "a dimension that is not vertex-transitive (Mesh)"
    impl = platform.system.implementations
    if impl.custom or impl.per_node_custom:
        return "custom collective algorithms (each rank runs its own graph)"
    graph = uniform_graph(graphs)
    if graph is None:
        return "ranks with different graphs"
    if not np.isin(graph.types, _ALLOWED_NODES).all():
        return "send, receive or memory nodes"
    npus = net.npus
    for pos in np.flatnonzero(graph.types == NodeType.COMM_COLL_NODE).tolist():
        name = graph.pg_name[pos]
        if name in ("", "0"):
            continue
        members = platform.comm_groups.get(name)
        if members is None or len(members) != npus or sorted(members) != list(range(npus)):
            return f"a collective on communicator group {name!r}"
    return graph


class RepresentativeRuntime(CollectiveRuntime):
    """A collective runtime in which one request stands for every member's identical request."""

    def flush(self, inst: CollectiveInstance) -> None:
        if self.tuned(inst):  # NCCL-priced: no phases to represent (system/nccl_pricing.py)
            pending, inst.pending = inst.pending, []
            inst.issued = len(inst.members)
            self.flush_tuned(inst, pending)
            return
        pending = self.take_pending(inst)
        if not pending:
            return
        members = len(inst.members)
        inst.issued = members  # every member issues it at this tick, by symmetry
        if not self.symmetric_ok(inst, pending * members):
            raise SymmetryBroken(f"collective {inst.key} cannot run by a representative")
        if not self.run_symmetric(inst, pending):
            refusals = self.symmetric_refusals
            why = refusals[-1] if refusals else "refused"
            raise SymmetryBroken(f"collective {inst.key} cannot run by a representative: {why}")


class RepresentativeExecutor(Executor):
    """Runs rank 0's graph for all ``npus`` ranks (the conditions are the caller's to check)."""

    def __init__(
        self,
        platform: Platform,
        graph: WorkloadGraph,
        network: NetworkBackend,
        queue: EventQueue,
        *,
        memory: MemoryModel,
        compute: ComputeModel,
        collectives: RepresentativeRuntime,
    ) -> None:
        rep = graph if graph.rank == 0 else replace(graph, rank=0)
        super().__init__(platform, [rep], network, queue, memory=memory, compute=compute, collectives=collectives)
        self.npus = platform.network.npus

    def _result(self) -> RunResult:
        one = super()._result()
        npus = self.npus
        return RunResult(
            makespan_s=one.makespan_s,
            ranks=UniformRanks(one.ranks[0], npus),
            events=one.events,
            timelines=list(one.timelines) * npus,
            collectives=UniformRecords(one.collectives, npus),
        )


def representative_run(
    platform: Platform,
    graph: WorkloadGraph,
    make_network: Callable[[EventQueue], NetworkBackend],
    *,
    compat_astra: bool,
    strict: bool = False,
    progress: Callable[[float, int, int], None] | None = None,
) -> RunResult:
    """Simulate ``graph`` once for every rank; raises :class:`SymmetryBroken` (or whatever the
    run raises) when the representative cannot stand for all."""
    queue = EventQueue()
    network = make_network(queue)
    runtime = RepresentativeRuntime(platform, network, queue, compat_astra=compat_astra, symmetry="strict" if strict else True)
    memory, compute = build_memory(platform, queue, compat_astra), build_compute(platform, compat_astra)
    executor = RepresentativeExecutor(platform, graph, network, queue, memory=memory, compute=compute, collectives=runtime)
    result = executor.run(progress)
    result.info["symmetric_collectives"] = runtime.symmetric_runs
    result.info["symmetric_ties"] = runtime.symmetric_ties
    result.info["shift_replays"] = runtime.shift_replays
    return result


__all__: list[Any] = [
    "RepresentativeExecutor",
    "RepresentativeRuntime",
    "SymmetryBroken",
    "representative_graph",
    "representative_run",
    "uniform_graph",
]
