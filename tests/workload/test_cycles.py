"""find_cycle and ctrl_deps_closing_cycles on small hand-made graphs."""

from __future__ import annotations

import numpy as np

from trainsim.enums import NodeType
from trainsim.workload.cycles import ctrl_deps_closing_cycles, find_cycle
from trainsim.workload.graph import GraphBuilder, WorkloadGraph


def _graph(data: dict[int, list[int]], ctrl: dict[int, list[int]] | None = None) -> WorkloadGraph:
    builder = GraphBuilder("g.0.et")
    for node_id in sorted(set(data) | set(ctrl or {})):
        builder.add(
            node_id,
            NodeType.COMP_NODE,
            data_deps=data.get(node_id, []),
            ctrl_deps=(ctrl or {}).get(node_id, []),
        )
    return builder.build()


def _is_cycle(graph: WorkloadGraph, cycle: list[int], *, ctrl: bool = True) -> bool:
    """Each node waits for the one before it, and the first for the last."""
    pos = graph.position_of()
    return all(cycle[i - 1] in graph.deps_of(pos[node], ctrl=ctrl) for i, node in enumerate(cycle))


def test_acyclic_graph_with_edges_to_higher_ids_has_no_cycle():
    graph = _graph({1: [], 2: [5], 3: [1, 2], 5: [1]})
    assert find_cycle(graph) is None


def test_two_node_cycle_is_named_in_wait_order():
    graph = _graph({1: [], 2: [1, 3], 3: [2], 4: [3]})
    cycle = find_cycle(graph)
    assert sorted(cycle) == [2, 3]
    assert _is_cycle(graph, cycle)


def test_self_dependency_is_a_cycle_of_one():
    assert find_cycle(_graph({1: [], 2: [2]})) == [2]


def test_long_cycle_behind_an_acyclic_prefix():
    data = {i: [i - 1] for i in range(1, 50)}
    data[0] = []
    data[10] = [9, 40]  # 10 waits for 40, which (through the chain) waits for 10
    graph = _graph(data)
    cycle = find_cycle(graph)
    assert sorted(cycle) == list(range(10, 41))
    assert _is_cycle(graph, cycle)


def test_dependencies_on_absent_ids_are_ignored():
    assert find_cycle(_graph({1: [99], 2: [1]})) is None


def test_ctrl_edges_count_only_when_asked():
    graph = _graph({1: [], 2: [1]}, ctrl={1: [2]})
    assert find_cycle(graph, ctrl=False) is None
    assert sorted(find_cycle(graph, ctrl=True)) == [1, 2]


def test_ctrl_deps_closing_cycles_drops_one_ctrl_edge_per_cycle():
    graph = _graph({1: [], 2: [1], 3: [], 4: [3]}, ctrl={1: [2], 3: [4], 4: [1]})
    dropped, data_cycle = ctrl_deps_closing_cycles(graph)
    assert data_cycle is None
    assert graph.ctrl_dep_ids[dropped].tolist() == [2, 4]
    keep = np.ones(graph.ctrl_dep_ids.shape, dtype=bool)
    keep[dropped] = False
    assert graph.ctrl_dep_ids[keep].tolist() == [1]


def test_ctrl_deps_closing_cycles_reports_a_pure_data_cycle():
    graph = _graph({1: [2], 2: [1]}, ctrl={1: []})
    _, data_cycle = ctrl_deps_closing_cycles(graph)
    assert sorted(data_cycle) == [1, 2]


def test_empty_graph_has_no_cycle():
    assert find_cycle(GraphBuilder().build()) is None


def test_forward_dependencies_are_peeled_whole_or_by_components_alike(monkeypatch):
    """A graph with forward dependencies under the whole-graph peel's limit is proved acyclic
    without scipy's components; above it (limit 0 here) the components give the same answers."""
    from trainsim.workload import cycles

    acyclic = _graph({1: [], 2: [5], 3: [1, 2], 5: [1]}, ctrl={3: [5]})
    cyclic = _graph({1: [], 2: [1, 3], 3: [2], 4: [3]}, ctrl={1: [4]})
    answers = []
    for limit in (cycles._PEEL_WHOLE_EDGES, 0):
        monkeypatch.setattr(cycles, "_PEEL_WHOLE_EDGES", limit)
        dropped, data_cycle = ctrl_deps_closing_cycles(acyclic)
        answers.append((find_cycle(acyclic), find_cycle(cyclic), dropped.tolist(), data_cycle, ctrl_deps_closing_cycles(cyclic)[1]))
    assert answers[0] == answers[1]
    assert answers[0][1] is not None and answers[0][0] is None
