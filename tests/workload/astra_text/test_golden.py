"""Our text-workload graphs against chakra's own text converter (chakra 1.0.0,
``chakra_converter Text --num-npus 2 --num-passes 1``), node for node.

The golden files are decoded here with a schema-independent wire decoder, so these tests do not
wait on trainsim's Chakra reader. What differs is asserted explicitly:

1. durations: chakra writes the text's cycles into ``duration_micros``; ours are seconds,
   ``cycles * 1e-9`` (a cycle is a nanosecond at ASTRA-sim 1.0's 1 GHz);
2. ``involved_dim``: chakra writes none; ours are ASTRA-sim 1.0's per-mode dimensions;
3. update delays: ours add a CPU compute node after each collective; contracting them gives
   exactly the graph with ``update_delays=False``;
4. HYBRID_DLRM: three dependencies (see ``DEP_DIFFERENCES``), where chakra departs from
   ASTRA-sim 1.0's loop;
5. ids: chakra numbers on across ranks, ours restart at 0 on every rank.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.workload.astra_text.helpers import (
    GOLDEN_DIR,
    TEXT_DIR,
    deps_by_position,
    read_et,
)
from trainsim.enums import NodeType
from trainsim.workload.astra_text import parse_text_workload, text_to_graphs
from trainsim.workload.graph import WorkloadGraph

GOLDEN = [
    "microAllReduce",
    "Resnet50_DataParallel",
    "DLRM_HybridParallel",
    "MLP_ModelParallel",
    "MLP_HybridParallel_Data_Model",
]

# position -> (chakra's deps, ours), as positions in the node list. In ASTRA-sim 1.0's DLRM loop
# the forward all-to-all (1) is awaited after the last bottom layer's compute (5, MLP_Bottom_3),
# i.e. by MLP_Top_0 (6); chakra makes MLP_Bottom_3 wait. The backward all-to-all (18) holds back
# only the end of the pass in ASTRA-sim 1.0; chakra makes Embedding's weight gradient (31) wait.
DEP_DIFFERENCES = {
    "DLRM_HybridParallel": {5: ({4, 1}, {4}), 6: ({5}, {5, 1}), 31: ({30, 18}, {30})},
}


def _ours(name: str, *, update_delays: bool) -> list[WorkloadGraph]:
    wl = parse_text_workload(TEXT_DIR / f"{name}.txt")
    return text_to_graphs(wl, 2, update_delays=update_delays)


@pytest.mark.parametrize("rank", [0, 1])
@pytest.mark.parametrize("name", GOLDEN)
def test_same_nodes_as_chakra_converter(name: str, rank: int) -> None:
    golden = read_et(GOLDEN_DIR / f"{name}.{rank}.et")
    ours = _ours(name, update_delays=False)[rank]
    assert ours.rank == rank
    assert len(ours) == len(golden)
    assert ours.names == [n.name for n in golden]
    assert ours.types.tolist() == [n.type for n in golden]
    comm = ours.types == NodeType.COMM_COLL_NODE
    assert ours.comm_type[comm].tolist() == [
        n.attrs["comm_type"] for n in golden if n.type == NodeType.COMM_COLL_NODE
    ]
    assert ours.comm_size[comm].tolist() == [
        n.attrs["comm_size"] for n in golden if n.type == NodeType.COMM_COLL_NODE
    ]
    # 5. ids: chakra's rank 1 continues from rank 0's last id; ours start at 0 on every rank
    base = golden[0].id
    assert [n.id - base for n in golden] == list(range(len(golden)))
    assert ours.ids.tolist() == list(range(len(golden)))
    # dependencies, as sets of positions; chakra writes no ctrl deps
    chakra_deps = [{d - base for d in n.data_deps} for n in golden]
    assert all(not n.ctrl_deps for n in golden)
    differences = DEP_DIFFERENCES.get(name, {})
    for pos, (theirs, mine) in differences.items():
        assert chakra_deps[pos] == theirs
        chakra_deps[pos] = mine
    assert deps_by_position(ours) == chakra_deps
    # 1. durations: chakra's duration_micros holds the cycles; ours are cycles * 1 ns in seconds
    cycles = np.array([n.duration_micros for n in golden], dtype=np.float64)
    np.testing.assert_allclose(ours.duration_s, cycles / 1e9, rtol=0, atol=0)
    assert np.all(cycles[ours.types == NodeType.COMP_NODE] > 0)
    # 2. involved dims: chakra writes none; ours are on every collective, 10 long with no
    # network given (their values per mode: test_loop.py)
    assert all("involved_dim" not in n.attrs for n in golden)
    assert sorted(ours.involved_dim) == np.flatnonzero(comm).tolist()
    assert {len(d) for d in ours.involved_dim.values()} == {10}


def _contract_updates(graph: WorkloadGraph) -> tuple[list[str], list[set[int]]]:
    """Drop the update-delay nodes, moving each dependency on one to the collective it follows."""
    index = graph.position_of()
    update = graph.is_cpu_op & (graph.types == NodeType.COMP_NODE)
    through = {}
    for pos in np.flatnonzero(update).tolist():
        (dep,) = graph.deps_of(pos)
        assert graph.types[index[dep]] == NodeType.COMM_COLL_NODE
        through[int(graph.ids[pos])] = dep
    keep = [p for p in range(len(graph)) if not update[p]]
    renumber = {int(graph.ids[p]): k for k, p in enumerate(keep)}
    deps = [{renumber[through.get(d, d)] for d in graph.deps_of(p)} for p in keep]
    return [graph.names[p] for p in keep], deps


@pytest.mark.parametrize("name", GOLDEN)
def test_update_delays_are_extra_cpu_nodes_after_collectives(name: str) -> None:
    with_updates = _ours(name, update_delays=True)[0]
    without = _ours(name, update_delays=False)[0]
    names, deps = _contract_updates(with_updates)
    assert names == without.names
    assert deps == deps_by_position(without)
    # 3. one update node per collective, right after it, lasting the layer's update delay
    wl = parse_text_workload(TEXT_DIR / f"{name}.txt")
    delay = {layer.name: layer.update_cycles / 1e9 for layer in wl.layers}
    comm_positions = np.flatnonzero(with_updates.types == NodeType.COMM_COLL_NODE).tolist()
    for pos in comm_positions:
        follower = pos + 1
        assert with_updates.is_cpu_op[follower]
        assert with_updates.deps_of(follower) == [int(with_updates.ids[pos])]
        update_name = with_updates.names[follower]
        assert update_name.startswith("COMP_NODE_") and update_name.endswith("_UPDATE")
        layer = update_name.removeprefix("COMP_NODE_").removesuffix("_UPDATE").rsplit("_", 1)[0]
        assert with_updates.names[pos].startswith(f"COMM_COLL_NODE_{layer}_")
        assert with_updates.duration_s[follower] == delay[layer]
    assert int(with_updates.is_cpu_op.sum()) == len(comm_positions)
