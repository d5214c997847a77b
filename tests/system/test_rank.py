"""The numpy build of ``system.rank.DependencyIndex`` equals its node-by-node definition
(``dependency_lists``), and the unrolled ``RankState.next_issuable`` keeps the issue order."""

import pytest

from trainsim.compute import OperatorTimer
from trainsim.enums import NodeType as T
from trainsim.errors import TraceError
from trainsim.system.rank import DependencyIndex, RankState, dependency_lists, resource_classes
from trainsim.workload import GraphBuilder
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model


def _same(graph, ctrl):
    index = DependencyIndex(graph, use_ctrl_deps=ctrl)
    dep_count, children = dependency_lists(graph, use_ctrl_deps=ctrl)
    assert index.dep_count == dep_count
    assert index.children == children
    assert index.roots == [p for p, c in enumerate(dep_count) if c == 0]


@pytest.mark.parametrize("ctrl", [True, False])
def test_generated_graphs_index_as_node_by_node(ctrl):
    work = generate(get_model("megatron-1.7b"), Parallelism(tp=2, pp=2, dp=2, global_batch=8), OperatorTimer("A100"))
    for graph in work.graphs[:3]:
        _same(graph, ctrl)


def _repeats():
    """Repeated parents (twice in data deps, and in both data and ctrl deps), unsorted deps,
    node ids that are not positions."""
    b = GraphBuilder()
    b.add(10, T.COMP_NODE, "a", duration_s=1e-6)
    b.add(20, T.COMP_NODE, "b", duration_s=1e-6, data_deps=[10, 10])
    b.add(30, T.COMP_NODE, "c", duration_s=1e-6, data_deps=[20], ctrl_deps=[20, 10])
    b.add(40, T.COMP_NODE, "d", duration_s=1e-6, ctrl_deps=[30])
    b.add(50, T.COMP_NODE, "e", duration_s=1e-6, data_deps=[30, 10, 20], ctrl_deps=[40])
    b.add(60, T.COMP_NODE, "f", duration_s=1e-6)
    return b.build()


@pytest.mark.parametrize("ctrl", [True, False])
def test_repeated_and_ctrl_dependencies_count_once(ctrl):
    _same(_repeats(), ctrl)
    index = DependencyIndex(_repeats(), use_ctrl_deps=ctrl)
    assert index.children[0] == ([1, 2, 4] if ctrl else [1, 4])


def test_empty_graph():
    _same(GraphBuilder().build(), True)


def test_missing_dependency_names_the_first_node_and_id_as_node_by_node():
    b = GraphBuilder(source="m.0.et")
    b.add(1, T.COMP_NODE, "a", duration_s=1e-6)
    b.add(2, T.COMP_NODE, "b", duration_s=1e-6, data_deps=[1], ctrl_deps=[99])
    b.add(3, T.COMP_NODE, "c", duration_s=1e-6, data_deps=[77])
    graph = b.build()
    with pytest.raises(TraceError) as fast:
        DependencyIndex(graph)
    with pytest.raises(TraceError) as slow:
        dependency_lists(graph)
    assert str(fast.value) == str(slow.value)
    assert "node 99" in str(fast.value)


def test_next_issuable_lowest_ready_id_whose_slot_is_free():
    b = GraphBuilder()
    b.add(1, T.COMP_NODE, "gpu", duration_s=1e-6)
    b.add(2, T.COMP_NODE, "gpu2", duration_s=1e-6)
    b.add(3, T.COMP_NODE, "cpu", duration_s=1e-6, is_cpu_op=True)
    b.add(4, T.METADATA_NODE, "meta")
    graph = b.build()
    state = RankState(0, graph, resource_classes(graph).tolist(), DependencyIndex(graph))
    # node 1 takes the GPU slot, node 2 waits for it, the CPU node and the free node go on
    assert [state.next_issuable() for _ in range(4)] == [0, 2, 3, -1]
    state.release(0)
    assert state.next_issuable() == 1
    assert not state.finished

