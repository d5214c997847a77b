"""Collectives on groups whose members differ in several network dimensions (the default
mode's path rule, ``topology/multidim.py``: a message crosses every differing dimension,
summed hops x latency, the slowest bandwidth): priced as computed by hand, slower than the
first-dimension rule, ASTRA-sim's rule kept in ``compat: astra``, and every fast path
(representative groups, shift memo, equivalent-rank folding, replica slice) equal to rank by
rank."""

from dataclasses import replace

import pytest

from tests.system.symmetry.test_shift import _three_ways
from tests.system.test_symmetry import assert_same
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import CommType, NodeType
from trainsim.system.api import simulate
from trainsim.workload.graph import GraphBuilder

# 8-GPU NVSwitch nodes (300 GB/s, 700 ns), InfiniBand between 4 nodes (25 GB/s, 2,000 ns)
NODES = Platform(
    network=NetworkSpec((DimSpec("Switch", 8, 300e9, 700.0), DimSpec("Switch", 4, 25e9, 2000.0))),
    system=SystemSpec(local_mem_bw=2039e9),
)
SIZE = 10_000_000


def _graphs(groups: dict[str, tuple[int, ...]], layers: int = 1, comm_type: int = int(CommType.ALL_REDUCE)):
    """Per rank: ``layers`` x (compute, a collective on its group)."""
    of = {r: name for name, members in groups.items() for r in members}
    graphs = []
    for rank in range(NODES.network.npus):
        b = GraphBuilder(source="test", rank=rank)
        if rank in of:
            prev = None
            for layer in range(layers):
                b.add(2 * layer, NodeType.COMP_NODE, "c", duration_s=1e-6, data_deps=[] if prev is None else [prev])
                b.add(2 * layer + 1, NodeType.COMM_COLL_NODE, "x", comm_type=comm_type, comm_size=SIZE, data_deps=[2 * layer], pg_name=of[rank])
                prev = 2 * layer + 1
        graphs.append(b.build())
    return graphs


def _alone(members, compat="default"):
    plat = replace(NODES, comm_groups={"g": tuple(members)}, compat=compat)
    return simulate(plat, _graphs({"g": tuple(members)})).makespan_s


def test_pair_across_nodes_by_hand():
    """A 2-member ring all-reduce is a reduce-scatter message then an all-gather message of
    SIZE / 2 each way; what does not depend on the link (insertions, the reduction) cancels in
    differences. GPU 6 of node 0 and GPU 0 of node 1 differ in both dimensions: each message
    pays 2 x 700 + 2 x 2,000 ns and moves at 25 GB/s."""
    chunk = SIZE / 2
    in_node = _alone((0, 1))  # dimension 0 only: 2 x 700 ns, 300 GB/s
    one_hop_out = _alone((0, 8))  # dimension 1 only: 2 x 2,000 ns, 25 GB/s
    across = _alone((6, 8))
    assert across - in_node == pytest.approx(2 * (4000e-9 + chunk / 25e9 - chunk / 300e9), rel=1e-9)
    assert across - one_hop_out == pytest.approx(2 * 1400e-9, rel=1e-6)
    # ASTRA-sim's rule prices 6 -> 8 on the NVSwitch, as 0 -> 1
    assert _alone((6, 8), "astra") == _alone((0, 1), "astra")


def test_strided_group_crossing_nodes_is_slower():
    """Data-parallel groups with TP 2 (stride 2): inside one node and across two. Under the
    first-dimension rule both priced every message on the NVSwitch and took the same time;
    crossing, two of the ring's four edges are node-crossing now."""
    inside = _alone((0, 2, 4, 6))
    crossing = _alone((4, 6, 8, 10))
    assert crossing > inside * 3
    assert _alone((4, 6, 8, 10), "astra") == _alone((0, 2, 4, 6), "astra")
    # by hand, send by send (the slow edges' ports bind): the strategy estimate's closed form
    from trainsim.optimize.strategy.comm import CommModel

    plat = replace(NODES, comm_groups={"g": (4, 6, 8, 10)})
    estimate = CommModel(plat).collective(int(CommType.ALL_REDUCE), SIZE, (4, 6, 8, 10))
    assert estimate == pytest.approx(crossing - 1e-6, rel=1e-7, abs=1e-9)  # after 1 us of compute


STRIDED = {f"dp{i}": tuple(range(i, 32, 2)) for i in range(2)}  # two 16-member groups, 4 nodes
PAIRS = {f"p{i}": (i, i + 10) for i in range(6)} | {f"q{i}": (i + 16, i + 26) for i in range(6)}  # cross dims 0 and 1


@pytest.mark.parametrize("groups", [STRIDED, PAIRS, {f"tp{i}": tuple(range(2 * i, 2 * i + 2)) for i in range(16)}], ids=["strided", "pairs", "aligned"])
def test_fast_paths_equal_rank_by_rank(groups, monkeypatch):
    """Representative groups and the shift memo against rank by rank, bit for bit."""
    plat = replace(NODES, comm_groups=groups)
    memo, _, slow = _three_ways(plat, _graphs(groups, layers=3), monkeypatch)
    assert memo.info.get("symmetric_ties", 0) == 0
    assert_same(memo, slow)


def test_flat_whole_machine_ring_runs_rank_by_rank():
    """A flat ring over every rank (``oneRing``): 7 -> 8 crosses both dimensions, 0 -> 1 one,
    so rank 0 cannot stand for all in the default mode."""
    impl = CollectiveImpl(("oneRing",), ("oneRing",), ("oneRing",), ("oneRing",))
    plat = replace(NODES, system=replace(NODES.system, implementations=impl))
    graphs = []
    for rank in range(plat.network.npus):
        b = GraphBuilder(source="test", rank=rank)
        b.add(0, NodeType.COMM_COLL_NODE, "x", comm_type=int(CommType.ALL_REDUCE), comm_size=SIZE)
        graphs.append(b.build())
    fast = simulate(plat, graphs)
    slow = simulate(plat, graphs, symmetry=False)
    assert_same(fast, slow)
    astra = simulate(replace(plat, compat="astra"), graphs)
    assert astra.makespan_s < fast.makespan_s


def test_generated_step_with_node_crossing_groups(monkeypatch, tmp_path):
    """TP 2 on 4-GPU nodes: data-parallel rings 0, 2, 4, 6 cross nodes unevenly. The shift
    memo, the folding of equivalent ranks (a workload read back from files) and the replica
    slice's refusal all give the rank-by-rank result."""
    from trainsim.compute import OperatorTimer
    from trainsim.system.symmetry.replica import simulate_generated
    from trainsim.workload.chakra import read_workload, write_workload
    from trainsim.workload.generate import Parallelism, generate
    from trainsim.workload.models import get_model

    sizes = (4, 4)
    base = Platform(network=NetworkSpec((DimSpec("Switch", 4, 300e9, 700.0), DimSpec("Switch", 4, 25e9, 2000.0))))
    spec = replace(get_model("megatron-1.7b"), layers=4, seq=512)
    w = generate(spec, Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=16, recompute="full"), OperatorTimer("A100"), network_sizes=sizes)
    plat = w.platform(base)
    memo, _, slow = _three_ways(plat, w.graphs, monkeypatch)
    assert_same(memo, slow)
    run = simulate_generated(base, w)
    assert run.result.makespan_s == slow.makespan_s
    assert [r.finish_s for r in run.result.ranks] == [r.finish_s for r in slow.ranks]
    write_workload(tmp_path / "w", list(w.graphs))
    read = read_workload(tmp_path / "w", len(w.graphs))
    folded = simulate(plat, read)
    assert [r.finish_s for r in folded.ranks] == [r.finish_s for r in simulate(plat, read, symmetry=False).ranks]
