"""The fast paths of issue 9 against the rank-by-rank path, exactly: ``simulate(symmetry=True)``
(one representative for the whole step, or one per collective, with memoized phases) must give
every rank the same finish, compute, communication times and node timeline as
``simulate(symmetry=False)``, which simulates every rank. Small versions of bench/scale.py's
cases, random networks, and the cases where the fast path must step aside."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import NodeType
from trainsim.system.api import simulate
from trainsim.system.result import RunResult, UniformRanks
from trainsim.system.symmetry.whole_step import representative_graph
from trainsim.workload.graph import GraphBuilder
from trainsim.workload.micro import (
    ReplicatedGraphs,
    collective_workload,
    data_parallel_workload,
    replicate,
    shift_workload,
)

GiB, MiB = 2**30, 2**20


def platform(dims, algo="ring", *, splits=4, acpd=1, opt="localBWAware", compat="astra", policy="LIFO", E=10.0, groups=None, broadcast="replay"):
    n = len(dims)
    impl = CollectiveImpl(*(((algo,) * n,) * 4))
    return Platform(
        NetworkSpec(tuple(DimSpec(k, s, 50 * GiB, 500.0) for k, s in dims)),
        SystemSpec(
            scheduling_policy=policy,
            endpoint_delay_ns=E,
            active_chunks_per_dimension=acpd,
            preferred_dataset_splits=splits,
            collective_optimization=opt,
            local_mem_bw=1600e9,
            implementations=impl,
            broadcast=broadcast,
        ),
        comm_groups=groups or {},
        compat=compat,
    )


def _records(result: RunResult) -> list[tuple]:
    return sorted(
        (r.rank, r.node_id, r.comm_type, r.size, r.group, r.start_ns, r.end_ns, tuple(r.dim_bytes), r.chunks, tuple(r.algorithms), tuple(map(tuple, r.chunk_spans)), r.group_size)
        for r in result.collectives
    )


def assert_same(fast: RunResult, slow: RunResult) -> None:
    assert fast.makespan_s == slow.makespan_s
    assert len(fast.ranks) == len(slow.ranks)
    assert list(fast.ranks) == list(slow.ranks)  # every field of every rank, exactly
    for a, b in zip(fast.timelines, slow.timelines, strict=True):
        assert a.start_ns == b.start_ns
        assert a.end_ns == b.end_ns
    assert _records(fast) == _records(slow)  # collective records: times, bytes, chunk spans


def both(plat, graphs, backend="congestion_unaware"):
    """The strict fast path equals rank by rank, always; the default one too unless it met an
    order-dependent same-tick tie (where rank by rank differs by rank: docs/collectives.md)."""
    strict = simulate(plat, graphs, backend=backend, symmetry="strict")
    slow = simulate(plat, graphs, backend=backend, symmetry=False)
    assert slow.info["symmetry"] == "off"
    assert_same(strict, slow)
    fast = simulate(plat, graphs, backend=backend, symmetry=True)
    if fast.info["symmetric_ties"] == 0:
        assert_same(fast, slow)
    return strict, slow


# small versions of bench/scale.py's cases (compatibility mode, ASTRA-sim's default knobs)
SMALL = {
    "ring16": ([("Ring", 16)], "ring", "ar"),
    "switch16_direct": ([("Switch", 16)], "direct", "ar"),
    "2d_ring4_switch4": ([("Ring", 4), ("Switch", 4)], "ring", "ar"),
    "3d_ring2_fc4_switch4": ([("Ring", 2), ("FullyConnected", 4), ("Switch", 4)], "ring", "ar"),
    "3d_dp3": ([("Ring", 2), ("FullyConnected", 4), ("Switch", 4)], "ring", "dp"),
    "3d_ring4_fc2_switch2_hd": ([("Ring", 4), ("FullyConnected", 2), ("Switch", 2)], "halvingDoubling", "dp"),
}


def small_case(name, compat):
    """The platform and rank graphs of ``SMALL[name]``."""
    dims, algo, wl = SMALL[name]
    plat = platform(dims, algo, compat=compat)
    npus = plat.network.npus
    graphs = collective_workload(npus, "all_reduce", 64 * MiB) if wl == "ar" else data_parallel_workload(npus, 3, 4 * MiB)
    return plat, graphs


@pytest.mark.parametrize("name", list(SMALL))
@pytest.mark.parametrize("compat", ["astra", "default"])
def test_small_cases_fast_equals_rank_by_rank(name, compat):
    plat, graphs = small_case(name, compat)
    fast, _ = both(plat, graphs)
    assert fast.info["symmetry"] == "representative"
    assert fast.events < 10_000


def test_congestion_aware_ring_uses_the_representative():
    plat = platform([("Ring", 16)])
    fast, _ = both(plat, collective_workload(16, "all_reduce", 16 * MiB), backend="congestion_aware")
    assert fast.info["symmetry"] == "representative"


def test_congestion_aware_ring_with_shared_links():
    """Two active chunks share the representative's link, starting messages in the same tick:
    rank by rank that is served in global event order, so the fast path steps aside."""
    plat = platform([("Ring", 8)], acpd=2, splits=8)
    fast, _ = both(plat, data_parallel_workload(8, 2, 8 * MiB), backend="congestion_aware")
    assert "share a link" in fast.info["symmetry"]


@pytest.mark.parametrize("backend", ["congestion_aware", "flow"])
@pytest.mark.parametrize("compat", ["astra", "default"])
def test_a_ring_through_switches_uses_the_representative(backend, compat):
    """A Switch route crosses the sender's uplink and the receiver's downlink; with one peer
    per Switch dimension each downlink carries one sender's messages, as the representative's
    private run has it: the same result as rank by rank, with far fewer events. (Baseline
    all-reduce: an all-reduce per dimension, one direction; ``localBWAware``'s all-gathers run
    the other way round, a second peer.)"""
    plat = platform([("Switch", 4), ("Ring", 2), ("Switch", 4)], opt="baseline", compat=compat)
    fast, slow = both(plat, collective_workload(32, "all_reduce", 4 * MiB), backend=backend)
    assert fast.info["symmetry"] == "representative" and fast.events < slow.events / 10


@pytest.mark.parametrize("backend", ["congestion_aware", "flow"])
def test_two_peers_across_a_switch_fall_back(backend):
    """Direct sends to every other member at once: their downlinks carry several senders'
    messages, which the representative's run does not: rank by rank, same result."""
    plat = platform([("Ring", 2), ("Switch", 4)], "direct")
    fast, _ = both(plat, collective_workload(8, "all_reduce", MiB), backend=backend)
    assert fast.info["symmetry"].startswith("per collective") and "two peers across Switch dimension 1" in fast.info["symmetry"]


@pytest.mark.parametrize("backend", ["congestion_aware", "flow"])
def test_a_flat_ring_on_a_link_backend_runs_rank_by_rank_regression(backend):
    """``oneRing`` (one ring over every rank, in id order) crosses dimensions at its seams
    (7 -> 8 on [8, 4]), so its members' messages are not the representative's images; the
    representative's answer differed from rank by rank (52.4 us against 56.4 us here). Found by
    a random search comparing the two (docs/speed.md)."""
    plat = platform([("Ring", 8), ("Ring", 4)], "oneRing", splits=2)
    fast, _ = both(plat, collective_workload(32, "reduce_scatter", MiB), backend=backend)
    assert "flat dimension" in fast.info["symmetry"]



# the flow backend: one-link routes (Ring, FullyConnected) give each link its source's flows only
FLOW_SMALL = {
    "ring16": ([("Ring", 16)], "ar"),
    "2d_ring4_ring4": ([("Ring", 4), ("Ring", 4)], "ar"),
    "3d_ring2_ring2_ring4": ([("Ring", 2), ("Ring", 2), ("Ring", 4)], "ar"),
    "3d_dp3": ([("Ring", 2), ("FullyConnected", 4), ("Ring", 2)], "dp"),
}


@pytest.mark.parametrize("name", list(FLOW_SMALL))
@pytest.mark.parametrize("compat", ["astra", "default"])
def test_flow_one_link_cases_use_the_representative(name, compat):
    dims, wl = FLOW_SMALL[name]
    plat = platform(dims, compat=compat)
    npus = plat.network.npus
    graphs = collective_workload(npus, "all_reduce", 16 * MiB) if wl == "ar" else data_parallel_workload(npus, 3, 4 * MiB)
    fast, slow = both(plat, graphs, backend="flow")
    assert fast.info["symmetry"] == "representative"
    assert fast.events < slow.events


def test_flow_fabric_falls_back():
    from dataclasses import replace

    from trainsim.config.types import FabricSpec

    plat = platform([("Ring", 8)])
    fabric = FabricSpec("leaf_spine", hosts_per_leaf=4, spines=2, bandwidth=50 * GiB, latency_ns=500.0)
    plat = replace(plat, network=replace(plat.network, fabric=fabric))
    fast, _ = both(plat, collective_workload(8, "all_reduce", MiB), backend="flow")
    assert fast.info["symmetry"] == "per collective (whole step not symmetric: a physical fabric)"


@pytest.mark.parametrize(
    ("plat", "why"),
    [
        (platform([("Ring", 8)], "doubleBinaryTree"), "cannot run by a representative"),
        (platform([("Mesh", 4), ("Ring", 2)]), "vertex-transitive"),
        (platform([("Ring", 8)], groups={"half": (0, 1, 2, 3)}), "different graphs"),
    ],
)
def test_fast_path_steps_aside(plat, why):
    npus = plat.network.npus
    b = GraphBuilder()
    b.add(0, NodeType.COMP_NODE, "c", duration_s=1e-6)
    b.add(1, NodeType.COMM_COLL_NODE, "ar", comm_type=0, comm_size=MiB, data_deps=[0], pg_name="half" if "half" in plat.comm_groups else "")
    graph = b.build()
    if "half" in plat.comm_groups:
        graphs = [graph if r < 4 else GraphBuilder().build() for r in range(npus)]
    else:
        graphs = replicate(graph, npus)
    fast, _ = both(plat, graphs)
    assert why in fast.info["symmetry"]


def test_send_recv_steps_aside():
    plat = platform([("Ring", 4)])
    fast, _ = both(plat, shift_workload(4, MiB, steps=2))
    assert "different graphs" in fast.info["symmetry"]
    b = GraphBuilder()
    b.add(0, NodeType.COMM_SEND_NODE, "s", comm_dst=1, comm_tag=0, comm_size=MiB)
    assert "send, receive" in representative_graph(plat, replicate(b.build(), 4), "congestion_unaware")
    assert not isinstance(representative_graph(plat, collective_workload(4, "all_reduce", MiB), "flow"), str)


def test_equal_but_separate_graphs_are_recognized():
    """Graphs read one per rank (not shared arrays) with the same content are one class."""
    plat = platform([("Ring", 4), ("Switch", 2)])
    graphs = [data_parallel_workload(1, 2, MiB)[0] for _ in range(8)]
    fast, _ = both(plat, graphs)
    assert fast.info["symmetry"] == "representative"


def test_different_graphs_are_not_merged():
    plat = platform([("Ring", 4)])
    graphs = [data_parallel_workload(1, 2, MiB, forward_s=(1 + (r == 2)) * 1e-6)[0] for r in range(4)]
    fast, slow = both(plat, graphs)
    assert "different graphs" in fast.info["symmetry"]
    assert len({r.finish_s for r in slow.ranks}) >= 1


@pytest.mark.parametrize("policy", ["LIFO", "FIFO"])
def test_many_chunks_and_active_chunks(policy):
    """Several chunks in flight per dimension: phase finishes may tie; the memoized run must
    notice and still give the exact result."""
    plat = platform([("Ring", 4), ("FullyConnected", 4)], splits=16, acpd=3, policy=policy)
    both(plat, data_parallel_workload(16, 2, 3 * MiB + 5))


def test_65536_ranks_hold_one_graph_and_one_rank_state():
    plat = platform([("Ring", 16), ("FullyConnected", 64), ("Switch", 64)])
    graphs = collective_workload(65536, "all_reduce", MiB)
    assert isinstance(graphs, ReplicatedGraphs)
    result = simulate(plat, graphs)
    assert result.info["symmetry"] == "representative"
    assert isinstance(result.ranks, UniformRanks)
    assert len(result.ranks) == 65536 and result.ranks[-1].rank == 65535
    assert result.ranks[7].finish_s == result.makespan_s
    assert all(t is result.timelines[0] for t in result.timelines[:100])


dims_strategy = st.lists(
    st.tuples(st.sampled_from(["Ring", "Switch", "FullyConnected"]), st.sampled_from([2, 3, 4])),
    min_size=1,
    max_size=3,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dims=dims_strategy,
    algo=st.sampled_from(["ring", "direct", "halvingDoubling", "oneRing"]),
    collective=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "reduce", "gather", "scatter", "broadcast", "barrier"]),
    size=st.integers(1, 3 * MiB),
    splits=st.sampled_from([1, 2, 4, 7]),
    acpd=st.sampled_from([1, 2]),
    opt=st.sampled_from(["localBWAware", "baseline"]),
    compat=st.sampled_from(["astra", "default"]),
    dp=st.booleans(),
    broadcast=st.sampled_from(["replay", "simulate"]),
)
def test_random_platforms_fast_equals_rank_by_rank(dims, algo, collective, size, splits, acpd, opt, compat, dp, broadcast):
    if algo == "halvingDoubling" and any(n == 3 for _, n in dims):
        algo = "ring"  # halving-doubling needs powers of two
    plat = platform(dims, algo, splits=splits, acpd=acpd, opt=opt, compat=compat, broadcast=broadcast)
    npus = plat.network.npus
    if dp:
        graphs = data_parallel_workload(npus, 2, size)
    else:
        graphs = collective_workload(npus, collective, size)
    both(plat, graphs)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.sampled_from([2, 3, 5, 8]),
    size=st.integers(1_000, 4 * MiB),
    splits=st.sampled_from([1, 4, 9]),
    acpd=st.sampled_from([1, 2, 4]),
    algo=st.sampled_from(["ring", "direct", "halvingDoubling"]),
    kind=st.sampled_from(["Ring", "FullyConnected", "Switch"]),
    backend=st.sampled_from(["congestion_aware", "flow"]),
    compat=st.sampled_from(["astra", "default"]),
)
def test_random_link_backends_fast_equal_rank_by_rank(n, size, splits, acpd, algo, kind, backend, compat):
    """Congestion-aware and flow: one-link routes and Switch routes, every knob, both modes."""
    if algo == "halvingDoubling" and n not in (2, 8):
        algo = "ring"
    plat = platform([(kind, n)], algo, splits=splits, acpd=acpd, compat=compat)
    both(plat, data_parallel_workload(n, 2, size), backend=backend)


def test_replicated_graphs_and_uniform_ranks_behave_as_sequences():
    graphs = collective_workload(5, "all_reduce", MiB)
    assert len(graphs) == 5 and [g.rank for g in graphs] == [0, 1, 2, 3, 4]
    assert graphs[-1].rank == 4 and [g.rank for g in graphs[1:3]] == [1, 2]
    assert graphs[3].ids is graphs[0].ids
    with pytest.raises(IndexError):
        graphs[5]
    result = simulate(platform([("Ring", 5)]), graphs)
    ranks = result.ranks
    assert [r.rank for r in ranks] == [0, 1, 2, 3, 4]
    assert ranks[-1].rank == 4 and [r.rank for r in ranks[2:4]] == [2, 3]
    assert len(result.to_dict()["ranks"]) == 5


@pytest.mark.parametrize("backend", ["congestion_aware", "flow"])
def test_link_symmetry_waits_for_idle_links(backend):
    """Other traffic on the shared links (a send still in flight) rules the representative out."""
    from trainsim.collectives import LogicalLayout, chunk_phases
    from trainsim.engine import EventQueue
    from trainsim.network.congestion_aware import CongestionAwareNetwork
    from trainsim.network.flow import FlowNetwork
    from trainsim.system.collective_runtime import CollectiveRuntime
    from trainsim.system.symmetry.collective import SymmetricRunner

    plat = platform([("Ring", 4)])
    queue = EventQueue()
    net = (CongestionAwareNetwork if backend == "congestion_aware" else FlowNetwork)(plat.network, queue, compat_astra=True)
    runtime = CollectiveRuntime(plat, net, queue, compat_astra=True)
    assert runtime._symmetric_backend
    layout = LogicalLayout(runtime.topology, ("ring",))
    chunks = [chunk_phases(0, MiB, [0], layout.algos, layout.sizes, local_bw_aware=True)]
    runner = SymmetricRunner(net, runtime.topology, runtime.engine_options, injection=lambda: None)
    assert runner.memo == (backend == "congestion_aware")  # flow times are not whole ns: no memos
    assert runner.run(layout, chunks, 0, 0.0) is not None
    net.send(0, 2, MiB, lambda _a: None)
    assert runner.run(layout, chunks, 0, 0.0) is None
    queue.run()
    assert runner.run(layout, chunks, 0, queue.now) is not None
