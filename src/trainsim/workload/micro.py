"""Microbenchmark workloads built in memory: one collective per rank, or a data-parallel step.

These are the shapes of ASTRA-sim's microbenchmarks and of reference-results' ``dp`` graphs
(reference-results/README.md): a ``dp`` step has L forward compute nodes, L backward compute
nodes in reverse layer order, and one all-reduce per layer depending on its backward node.
Every rank gets the same arrays (:class:`ReplicatedGraphs`: one graph, a shallow copy per rank
made on access), so a 65,536-rank workload costs one graph. Sizes in bytes, times in seconds.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError
from trainsim.lazyseq import LazySequence
from trainsim.workload.graph import GraphBuilder, WorkloadGraph

COLLECTIVE_NAMES = {
    "all_reduce": CommType.ALL_REDUCE,
    "all_gather": CommType.ALL_GATHER,
    "reduce_scatter": CommType.REDUCE_SCATTER,
    "all_to_all": CommType.ALL_TO_ALL,
    "broadcast": CommType.BROADCAST,
    "reduce": CommType.REDUCE,
    "gather": CommType.GATHER,
    "scatter": CommType.SCATTER,
    "barrier": CommType.BARRIER,
}


def comm_type_named(name: str) -> CommType:
    """``"all_reduce"`` (or ``"ALL_REDUCE"``, ``"allreduce"``) -> :class:`CommType`."""
    if not isinstance(name, str):
        raise ConfigError(
            f"got {name!r}; expected a collective name, one of {', '.join(COLLECTIVE_NAMES)}",
            field="collective",
        )
    key = name.strip().lower().replace("-", "_")
    aliases = {k.replace("_", ""): v for k, v in COLLECTIVE_NAMES.items()}
    found = COLLECTIVE_NAMES.get(key) or aliases.get(key.replace("_", ""))
    if found is None:
        raise ConfigError(
            f"unknown collective {name!r}; expected one of {', '.join(COLLECTIVE_NAMES)}",
            field="collective",
        )
    return found


class ReplicatedGraphs(LazySequence[WorkloadGraph]):
    """``npus`` rank graphs sharing one graph's arrays: item i is a shallow copy with
    ``rank = i``, made on access, so the sequence costs one graph whatever ``npus`` is."""

    __slots__ = ("graph",)

    def __init__(self, graph: WorkloadGraph, npus: int) -> None:
        super().__init__(npus)
        self.graph = graph

    @property
    def npus(self) -> int:
        return self.length

    def item(self, rank: int) -> WorkloadGraph:
        g = copy.copy(self.graph)
        g.rank = rank
        return g


def replicate(graph: WorkloadGraph, npus: int) -> ReplicatedGraphs:
    """``npus`` rank graphs sharing ``graph``'s arrays (only the ``rank`` field differs)."""
    return ReplicatedGraphs(graph, npus)


def comm_scaled(graphs: Sequence[WorkloadGraph], scale: float) -> Sequence[WorkloadGraph]:
    """``graphs`` with every communication size x ``scale``, truncated to whole bytes
    (ASTRA-sim 1.0's ``--comm-scale``, whose product was stored as a uint64). Ranks that shared
    a size array share the scaled one; ``scale`` 1 returns ``graphs`` itself."""
    if scale == 1.0:
        return graphs
    scaled: dict[int, np.ndarray] = {}

    def one(graph: WorkloadGraph) -> WorkloadGraph:
        key = id(graph.comm_size)
        sizes = scaled.get(key)
        if sizes is None:
            sizes = scaled[key] = np.trunc(graph.comm_size.astype(np.float64) * scale).astype(np.int64)
        return graph.with_comm_sizes(sizes)

    if isinstance(graphs, ReplicatedGraphs):
        return ReplicatedGraphs(one(graphs.graph), graphs.npus)
    return [one(g) for g in graphs]


def collective_workload(npus: int, collective: str | int, size_bytes: int, *, involved_dim: tuple[bool, ...] | None = None) -> ReplicatedGraphs:
    """One COMM_COLL node of ``size_bytes`` on every rank (ASTRA-sim's microbenchmarks)."""
    comm_type = CommType(collective) if isinstance(collective, int) else comm_type_named(collective)
    if size_bytes < 0:
        raise ConfigError(f"collective size must be >= 0 bytes, got {size_bytes}", field="size")
    b = GraphBuilder(source="<collective microbenchmark>")
    b.add(0, NodeType.COMM_COLL_NODE, comm_type.name.lower(), comm_type=int(comm_type), comm_size=int(size_bytes), involved_dim=involved_dim)
    return replicate(b.build(), npus)


def data_parallel_workload(
    npus: int, layers: int, allreduce_bytes: int, *, forward_s: float = 100e-6, backward_s: float = 200e-6
) -> ReplicatedGraphs:
    """A data-parallel training step: forward over ``layers``, backward in reverse, and one
    all-reduce of ``allreduce_bytes`` per layer after its backward compute."""
    if layers < 1:
        raise ConfigError(f"layers must be >= 1, got {layers}", field="layers")
    b = GraphBuilder(source="<data-parallel step>")
    node = 0
    prev: list[int] = []
    for layer in range(layers):
        b.add(node, NodeType.COMP_NODE, f"fwd_{layer}", duration_s=forward_s, data_deps=prev)
        prev = [node]
        node += 1
    for layer in reversed(range(layers)):
        bwd = b.add(node, NodeType.COMP_NODE, f"bwd_{layer}", duration_s=backward_s, data_deps=prev)
        prev = [bwd]
        node += 1
        b.add(node, NodeType.COMM_COLL_NODE, f"allreduce_{layer}", comm_type=int(CommType.ALL_REDUCE), comm_size=allreduce_bytes, data_deps=[bwd])
        node += 1
    return replicate(b.build(), npus)


def shift_workload(npus: int, size_bytes: int, *, steps: int = 1, distance: int = 1) -> list[WorkloadGraph]:
    """Every rank sends ``size_bytes`` to rank ``+distance`` and receives from ``-distance``,
    ``steps`` times in sequence (a neighbour exchange made of SEND/RECV nodes)."""
    if npus < 2 or steps < 1 or size_bytes <= 0:
        raise ConfigError(f"shift needs npus >= 2, steps >= 1, size > 0; got npus={npus}, steps={steps}, size={size_bytes}", field="workload.shift")
    graphs = []
    for rank in range(npus):
        b = GraphBuilder(source="<shift microbenchmark>", rank=rank)
        prev: list[int] = []
        for step in range(steps):
            send = b.add(2 * step, NodeType.COMM_SEND_NODE, f"send_{step}", comm_dst=(rank + distance) % npus, comm_tag=step, comm_size=size_bytes, data_deps=prev)
            recv = b.add(2 * step + 1, NodeType.COMM_RECV_NODE, f"recv_{step}", comm_src=(rank - distance) % npus, comm_tag=step, comm_size=size_bytes, data_deps=prev)
            prev = [send, recv]
        graphs.append(b.build())
    return graphs
