"""One rank's walk through its workload graph: dependency counts, ready queues per resource,
and busy flags (DESIGN.md, system layer: "a rank's state ... separate small classes").

Issue semantics (chakra-format.md §1.7, astra-sim-semantics.md "Graph"): nodes whose
dependencies are done are issued in ascending node-id order, each when its resource is free.
Resources: one CPU slot (``is_cpu_op``), one GPU compute slot, one GPU communication slot
(collectives, sends and GPU memory accesses); receives, METADATA and INVALID nodes take none.
"""

from __future__ import annotations

import heapq

import numpy as np

from trainsim.enums import NodeType
from trainsim.errors import TraceError
from trainsim.workload.graph import WorkloadGraph

FREE, GPU_COMPUTE, CPU, GPU_COMM = 0, 1, 2, 3
RESOURCE_NAMES = ("none", "GPU compute", "CPU", "GPU communication")


def resource_classes(graph: WorkloadGraph) -> np.ndarray:
    """The resource slot each node occupies (FREE, GPU_COMPUTE, CPU or GPU_COMM)."""
    types = graph.types
    cpu = graph.is_cpu_op
    res = np.full(len(graph), FREE, dtype=np.int8)
    comp = types == NodeType.COMP_NODE
    mem = (types == NodeType.MEM_LOAD_NODE) | (types == NodeType.MEM_STORE_NODE)
    comm = (types == NodeType.COMM_COLL_NODE) | (types == NodeType.COMM_SEND_NODE)
    res[comp & ~cpu] = GPU_COMPUTE
    res[(comp | mem) & cpu] = CPU
    res[(mem & ~cpu) | comm] = GPU_COMM
    bad = (comm | (types == NodeType.COMM_RECV_NODE)) & cpu
    if bad.any():
        pos = int(np.flatnonzero(bad)[0])
        raise TraceError(
            "communication node is marked is_cpu_op; ASTRA-sim runs communication on the GPU only",
            file=graph.source or None,
            rank=graph.rank,
            node_id=int(graph.ids[pos]),
        )
    return res


class DependencyIndex:
    """Children lists and dependency counts of one graph, shared by ranks with the same graph."""

    __slots__ = ("dep_count", "children")

    def __init__(self, graph: WorkloadGraph, *, use_ctrl_deps: bool = True) -> None:
        position = graph.position_of()
        n = len(graph)
        dep_count = [0] * n
        children: list[list[int]] = [[] for _ in range(n)]
        ids = graph.ids.tolist()
        for pos in range(n):
            seen: set[int] = set()
            for dep in graph.deps_of(pos, ctrl=use_ctrl_deps):
                parent = position.get(dep)
                if parent is None:
                    raise TraceError(
                        f"depends on node {dep}, which is not in the graph",
                        file=graph.source or None,
                        rank=graph.rank,
                        node_id=ids[pos],
                    )
                if parent in seen:
                    continue
                seen.add(parent)
                dep_count[pos] += 1
                children[parent].append(pos)
        self.dep_count = dep_count
        self.children = children


class RankState:
    """Mutable per-rank state during a simulation. Positions index the rank's graph."""

    __slots__ = (
        "rank",
        "graph",
        "resource",
        "children",
        "pending",
        "ready",
        "busy",
        "done",
        "issued",
        "completed",
        "finish_ns",
        "compute_ns",
        "cpu_ns",
        "memory_ns",
        "comm_ns",
        "comm_active",
        "comm_since",
        "start_ns",
        "end_ns",
    )

    def __init__(self, rank: int, graph: WorkloadGraph, resource: list[int], deps: DependencyIndex) -> None:
        self.rank = rank
        self.graph = graph
        self.resource = resource
        self.children = deps.children
        self.pending = list(deps.dep_count)
        # one ready heap of positions per resource class
        self.ready: tuple[list[int], list[int], list[int], list[int]] = ([], [], [], [])
        self.busy = [False, False, False, False]
        self.done = 0
        self.issued = bytearray(len(graph))
        self.completed = bytearray(len(graph))
        self.finish_ns = 0.0
        self.compute_ns = 0.0
        self.cpu_ns = 0.0
        self.memory_ns = 0.0
        self.comm_ns = 0.0
        self.comm_active = 0
        self.comm_since = 0.0
        # issue and completion time of every node (ns; -1 until it happens)
        self.start_ns = [-1.0] * len(graph)
        self.end_ns = [-1.0] * len(graph)
        for pos, count in enumerate(self.pending):
            if count == 0:
                self.ready[resource[pos]].append(pos)  # ascending: already a heap

    def next_issuable(self) -> int:
        """Pop the lowest-id ready node whose resource is free; -1 when there is none."""
        best = -1
        best_class = -1
        for cls in (FREE, GPU_COMPUTE, CPU, GPU_COMM):
            heap = self.ready[cls]
            if heap and (cls == FREE or not self.busy[cls]) and (best < 0 or heap[0] < best):
                best, best_class = heap[0], cls
        if best >= 0:
            heapq.heappop(self.ready[best_class])
            if best_class != FREE:
                self.busy[best_class] = True
            self.issued[best] = 1
        return best

    def release(self, pos: int) -> None:
        """Free the node's resource and make its children ready when their deps are done."""
        cls = self.resource[pos]
        if cls != FREE:
            self.busy[cls] = False
        self.done += 1
        self.completed[pos] = 1
        pending = self.pending
        ready = self.ready
        resource = self.resource
        for child in self.children[pos]:
            pending[child] -= 1
            if pending[child] == 0:
                heapq.heappush(ready[resource[child]], child)

    @property
    def finished(self) -> bool:
        return self.done == len(self.graph)
