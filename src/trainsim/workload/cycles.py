"""Dependency cycles in a :class:`WorkloadGraph`: find one, or break those that ctrl_deps close
(DESIGN.md, workload layer).

ASTRA-sim requires an acyclic graph (chakra-format.md §6.2); a cycle would leave its nodes
waiting forever. Real PyTorch-derived traces contain ctrl_deps (caller/callee relations, §1.7)
that close cycles with data_deps, so a tolerant reader drops such ctrl edges and only a cycle of
data_deps is an error.

Both functions are iterative and near-linear in nodes plus edges: a vectorized check proves the
common case (every dependency has a lower node id) acyclic at once, and Kahn's algorithm over
every edge a graph of up to 100,000 edges with forward dependencies; otherwise scipy's strongly
connected components (compiled) keep only the edges inside a component, since only those can lie
on a cycle. On that remainder Kahn's algorithm peels what is acyclic and a walk over what is left
names one cycle at a time; breaking a cycle resumes the peel where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trainsim.workload.graph import WorkloadGraph

_PEEL_WHOLE_EDGES = 100_000
"""Edges up to which a graph with forward dependencies is first peeled whole (``peel_whole``)."""


@dataclass
class _Edges:
    """Resolved dependency edges: node ``rows[e]`` waits for node ``deps[e]`` (positions)."""

    rows: np.ndarray
    deps: np.ndarray
    is_ctrl: np.ndarray  # bool
    index: np.ndarray  # index into graph.data_dep_ids or graph.ctrl_dep_ids

    @classmethod
    def of(cls, graph: WorkloadGraph, ctrl: bool) -> _Edges:
        kinds = [(False, graph.data_dep_ptr, graph.data_dep_ids)]
        if ctrl:
            kinds.append((True, graph.ctrl_dep_ptr, graph.ctrl_dep_ids))
        parts = []
        for ctrl_kind, ptr, ids in kinds:
            rows = np.repeat(np.arange(len(graph), dtype=np.int64), np.diff(ptr))
            deps = graph.positions_of_ids(ids)
            known = np.flatnonzero(deps >= 0)
            parts.append((rows[known], deps[known], np.full(known.size, ctrl_kind), known))
        rows, deps, is_ctrl, index = (np.concatenate(column) for column in zip(*parts, strict=True))
        return cls(rows, deps, is_ctrl, index)

    def all_point_backward(self) -> bool:
        """True when every edge waits for a node earlier in id order: then there is no cycle."""
        return not np.any(self.deps >= self.rows)

    def peel_whole(self, n: int) -> bool:
        """True when Kahn's algorithm over every edge finishes every node: then there is no
        cycle. Tried below ``_PEEL_WHOLE_EDGES`` edges before the strongly connected
        components, whose scipy import costs more than peeling a graph that size in Python."""
        return self.rows.size <= _PEEL_WHOLE_EDGES and _Peeler(n, self).next_unfinished() is None

    def inside_components(self, n: int) -> _Edges:
        """The edges whose ends share a strongly connected component: all that cycles use."""
        # imported here: only graphs with forward dependencies get this far, and scipy costs
        # every other run a sixth of a second of start-up
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        adjacency = coo_matrix(
            (np.ones(self.rows.size, dtype=np.int8), (self.rows, self.deps)), shape=(n, n)
        ).tocsr()
        _, component = connected_components(adjacency, directed=True, connection="strong")
        inside = component[self.rows] == component[self.deps]
        return _Edges(
            self.rows[inside], self.deps[inside], self.is_ctrl[inside], self.index[inside]
        )


class _Peeler:
    """Kahn's algorithm with edge removal: nodes still ``pending`` lie on or behind a cycle."""

    def __init__(self, n: int, edges: _Edges) -> None:
        self.rows = edges.rows.tolist()
        self.deps = edges.deps.tolist()
        self.out_ptr, self.out_edges = _csr(edges.deps, n)
        self.in_ptr, self.in_edges = _csr(edges.rows, n)
        self.pending = np.bincount(edges.rows, minlength=n).tolist()
        self.removed: set[int] = set()
        self._cursor = 0
        self._peel([node for node, count in enumerate(self.pending) if count == 0])

    def _peel(self, ready: list[int]) -> None:
        pending, rows, removed = self.pending, self.rows, self.removed
        out_ptr, out_edges = self.out_ptr, self.out_edges
        while ready:
            node = ready.pop()
            for edge in out_edges[out_ptr[node] : out_ptr[node + 1]]:
                if edge in removed:
                    continue
                waiter = rows[edge]
                pending[waiter] -= 1
                if pending[waiter] == 0:
                    ready.append(waiter)

    def next_unfinished(self) -> int | None:
        """Lowest position still pending (finished nodes stay finished, so a cursor suffices)."""
        pending = self.pending
        while self._cursor < len(pending) and pending[self._cursor] == 0:
            self._cursor += 1
        return self._cursor if self._cursor < len(pending) else None

    def cycle_from(self, node: int) -> list[int]:
        """Edges of one cycle reached from a pending node: each edge's dep is the next edge's row.

        Every pending node waits on a pending node through an edge not removed, so the walk
        never stalls.
        """
        seen: dict[int, int] = {}
        path: list[int] = []
        while node not in seen:
            seen[node] = len(path)
            edge = next(
                e
                for e in self.in_edges[self.in_ptr[node] : self.in_ptr[node + 1]]
                if e not in self.removed and self.pending[self.deps[e]] > 0
            )
            path.append(edge)
            node = self.deps[edge]
        return path[seen[node] :]

    def remove(self, edge: int) -> None:
        """Drop one edge whose dep is pending and resume peeling."""
        self.removed.add(edge)
        waiter = self.rows[edge]
        self.pending[waiter] -= 1
        if self.pending[waiter] == 0:
            self._peel([waiter])


def _csr(keys: np.ndarray, n: int) -> tuple[list[int], list[int]]:
    """Edge indices grouped by ``keys`` (a node position per edge), as ``(ptr, edges)`` lists."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return ptr.tolist(), np.argsort(keys, kind="stable").tolist()


def find_cycle(graph: WorkloadGraph, *, ctrl: bool | None = None) -> list[int] | None:
    """Node ids of one dependency cycle, or None if the graph is acyclic.

    In the list, which starts at its lowest id, each node waits for the one before it, and the
    first for the last. Edges are
    data deps plus ctrl deps if ``ctrl`` (default: ``graph.use_ctrl_deps``); dependencies on ids
    absent from the graph are ignored.
    """
    edges = _Edges.of(graph, graph.use_ctrl_deps if ctrl is None else ctrl)
    if edges.all_point_backward() or edges.peel_whole(len(graph)):
        return None
    peeler = _Peeler(len(graph), edges.inside_components(len(graph)))
    start = peeler.next_unfinished()
    if start is None:
        return None
    return _cycle_ids(graph, peeler, peeler.cycle_from(start))


def _cycle_ids(graph: WorkloadGraph, peeler: _Peeler, cycle: list[int]) -> list[int]:
    """Node ids in wait order, rotated to start at the lowest id."""
    ids = [int(graph.ids[peeler.rows[edge]]) for edge in reversed(cycle)]
    start = ids.index(min(ids))
    return ids[start:] + ids[:start]


def ctrl_deps_closing_cycles(graph: WorkloadGraph) -> tuple[np.ndarray, list[int] | None]:
    """Which ctrl_deps to drop so that data and ctrl deps together are acyclic.

    Returns ``(indices into graph.ctrl_dep_ids, data_cycle)``: one ctrl edge per cycle found (on
    each, the one waiting for the highest position), and ``data_cycle``, the node ids of a cycle
    made of data_deps alone (as :func:`find_cycle` lists them), or None. The search stops at a
    data cycle, which no ctrl edge can break.
    """
    edges = _Edges.of(graph, ctrl=True)
    dropped: list[int] = []
    if edges.all_point_backward() or edges.peel_whole(len(graph)):
        return np.asarray(dropped, dtype=np.int64), None
    edges = edges.inside_components(len(graph))
    peeler = _Peeler(len(graph), edges)
    is_ctrl = edges.is_ctrl.tolist()
    while (start := peeler.next_unfinished()) is not None:
        cycle = peeler.cycle_from(start)
        ctrl_edges = [edge for edge in cycle if is_ctrl[edge]]
        if not ctrl_edges:
            return np.asarray(dropped, dtype=np.int64), _cycle_ids(graph, peeler, cycle)
        edge = max(ctrl_edges, key=peeler.deps.__getitem__)
        peeler.remove(edge)
        dropped.append(int(edges.index[edge]))
    return np.asarray(dropped, dtype=np.int64), None
