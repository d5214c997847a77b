"""One rank's walk through its workload graph: dependency counts, ready queues per resource,
and busy flags (DESIGN.md, system layer: "a rank's state ... separate small classes").

Issue semantics (chakra-format.md §1.7, astra-sim-semantics.md "Graph"): nodes whose
dependencies are done are issued in ascending node-id order, each when its resource is free.
Resources: one CPU slot (``is_cpu_op``), one GPU compute slot, one GPU communication slot
(collectives, sends and GPU memory accesses); receives, METADATA and INVALID nodes take none.
"""

from __future__ import annotations

import heapq
from typing import Any, NoReturn

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
    """Children lists and dependency counts of one graph, shared by ranks with the same graph.

    ``children[p]``: the positions that depend on ``p``, ascending, each once; ``dep_count[c]``:
    how many distinct positions ``c`` depends on; ``roots``: the positions with none, ascending.
    Built with numpy from the graph's CSR dependencies (:func:`dependency_lists` is the
    per-node definition it equals, tests/system/test_rank.py)."""

    __slots__ = ("dep_count", "children", "roots")

    def __init__(self, graph: WorkloadGraph, *, use_ctrl_deps: bool = True) -> None:
        n = len(graph)
        ptr, parents = graph.dep_indices(ctrl=use_ctrl_deps)
        child = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
        if parents.size and int(parents.min()) < 0:
            _missing_dep(graph, int(child[int(np.flatnonzero(parents < 0)[0])]), use_ctrl_deps)
        # each (parent, child) pair once, ordered by parent then child (np.unique's result;
        # sorted by hand because np.unique imports numpy.ma, 6 ms of every run's start-up)
        pairs = np.sort(parents.astype(np.int64) * max(n, 1) + child)
        if pairs.size > 1:
            pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]
        parent_u, child_u = np.divmod(pairs, max(n, 1))
        counts = np.bincount(child_u, minlength=n)
        bounds = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(parent_u, minlength=n), out=bounds[1:])
        flat = child_u.tolist()
        edges = bounds.tolist()
        self.dep_count: list[int] = counts.tolist()
        self.children: list[list[int]] = [flat[edges[p] : edges[p + 1]] for p in range(n)]
        self.roots: list[int] = np.flatnonzero(counts == 0).tolist()


def dependency_lists(graph: WorkloadGraph, *, use_ctrl_deps: bool = True) -> tuple[list[int], list[list[int]]]:
    """(dep_count, children) of :class:`DependencyIndex`, node by node: the definition its numpy
    build is tested against."""
    position = graph.position_of()
    n = len(graph)
    dep_count = [0] * n
    children: list[list[int]] = [[] for _ in range(n)]
    for pos in range(n):
        seen: set[int] = set()
        for dep in graph.deps_of(pos, ctrl=use_ctrl_deps):
            parent = position.get(dep)
            if parent is None:
                _missing_dep(graph, pos, use_ctrl_deps)
            if parent in seen:
                continue
            seen.add(parent)
            dep_count[pos] += 1
            children[parent].append(pos)
    return dep_count, children


def _missing_dep(graph: WorkloadGraph, pos: int, use_ctrl_deps: bool) -> NoReturn:
    """Raise for the first dependency of position ``pos`` that is not in the graph."""
    position = graph.position_of()
    dep = next(d for d in graph.deps_of(pos, ctrl=use_ctrl_deps) if d not in position)
    raise TraceError(
        f"depends on node {dep}, which is not in the graph",
        file=graph.source or None,
        rank=graph.rank,
        node_id=int(graph.ids[pos]),
    )


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
        "n",
        "types",
        "columns",
        "handlers",
    )

    def __init__(
        self,
        rank: int,
        graph: WorkloadGraph,
        resource: list[int],
        deps: DependencyIndex,
        types: list[int] | None = None,
    ) -> None:
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
        self.n = len(graph)
        # node types as plain ints (the executor's handler lookup), shared by ranks of one graph
        self.types: list[int] = graph.types.tolist() if types is None else types
        self.columns: Any = None  # the executor's per-graph columns, made on first use
        self.handlers: Any = None  # the executor's handler of each node
        for pos in deps.roots:
            self.ready[resource[pos]].append(pos)  # ascending: already a heap

    def next_issuable(self) -> int:
        """Pop the lowest-id ready node whose resource is free; -1 when there is none."""
        ready = self.ready
        busy = self.busy
        # FREE, GPU_COMPUTE, CPU, GPU_COMM in turn (unrolled: the per-node path)
        heap = ready[FREE]
        best, best_class = (heap[0], FREE) if heap else (-1, -1)
        heap = ready[GPU_COMPUTE]
        if heap and not busy[GPU_COMPUTE] and (best < 0 or heap[0] < best):
            best, best_class = heap[0], GPU_COMPUTE
        heap = ready[CPU]
        if heap and not busy[CPU] and (best < 0 or heap[0] < best):
            best, best_class = heap[0], CPU
        heap = ready[GPU_COMM]
        if heap and not busy[GPU_COMM] and (best < 0 or heap[0] < best):
            best, best_class = heap[0], GPU_COMM
        if best >= 0:
            heapq.heappop(ready[best_class])
            if best_class != FREE:
                busy[best_class] = True
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
        return self.done == self.n
