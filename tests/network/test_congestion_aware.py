import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainsim.config.types import DimSpec, NetworkSpec
from trainsim.engine import EventQueue
from trainsim.network import AnalyticalNetwork
from trainsim.network.congestion_aware import CongestionAwareNetwork
from trainsim.topology.graph import MultiDimGraph

BW = 50 * 2**30  # ASTRA-sim's 50 "GB/s"
BPNS = BW / 1e9


def net(kind, n, *, latency=500.0, compat=True, dims=None):
    spec = NetworkSpec(dims or (DimSpec(kind, n, BW, latency),))
    q = EventQueue()
    return CongestionAwareNetwork(spec, q, compat_astra=compat), q


def arrivals(network, q, sends):
    got = {}
    for i, (src, dst, size) in enumerate(sends):
        network.send(src, dst, size, lambda tag: got.__setitem__(tag, q.now), i)
    q.run()
    return [got[i] for i in range(len(sends))]


def test_neighbour_message_equals_unaware_formula():
    n, q = net("Ring", 8)
    # G11: 54 bytes on a neighbour link take trunc(500 + 54 / 53.69) = 501 ns on both backends
    assert arrivals(n, q, [(0, 1, 54)]) == [501]
    assert AnalyticalNetwork(NetworkSpec((DimSpec("Ring", 8, BW, 500.0),)), EventQueue(), compat_astra=True).delay_ns(0, 1, 54) == 501


def test_store_and_forward_pays_each_hop():
    n, q = net("Ring", 8)
    hop = math.trunc(500 + 32768 / BPNS)
    assert arrivals(n, q, [(0, 2, 32768)]) == [2 * hop]
    # tie at distance n/2 goes clockwise: 0 -> 1 -> 2 -> 3 -> 4
    assert n.graph.route(0, 4) == tuple(n.graph.link(i, i + 1) for i in range(4))
    assert n.graph.route(0, 6) == (n.graph.link(0, 7), n.graph.link(7, 6))


def test_switch_uplink_is_shared_in_send_order():
    n, q = net("Switch", 4)
    size = 32768
    ser = math.trunc(size / BPNS)
    hop = math.trunc(500 + size / BPNS)
    # two messages leave rank 0 at once: the second waits for the uplink for one serialization
    assert arrivals(n, q, [(0, 1, size), (0, 2, size)]) == [2 * hop, ser + 2 * hop]
    stats = n.link_stats()
    uplink = n.graph.link(0, 4)
    assert stats[uplink]["bytes"] == 2 * size and stats[uplink]["peak_queue"] == 1


def test_fully_connected_pairs_do_not_share():
    n, q = net("FullyConnected", 4)
    size = 4096
    hop = math.trunc(500 + size / BPNS)
    assert arrivals(n, q, [(0, 1, size), (0, 2, size), (0, 3, size)]) == [hop] * 3


def test_multidim_routes_dimension_by_dimension():
    dims = (DimSpec("Ring", 4, BW, 100.0), DimSpec("Switch", 2, BW, 1000.0))
    n, q = net(None, None, dims=dims)
    route = n.graph.route(1, 6)  # (1,0) -> (2,1): ring hop 1->2, then through the switch of group x=2
    assert [(n.graph.link_src[link], n.graph.link_dst[link]) for link in route] == [(1, 2), (2, 10), (10, 6)]  # dim-1 switches are devices 8..11, one per dim-0 coordinate


@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(["Ring", "Switch", "FullyConnected"]),
    sends=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(1, 200_000)), min_size=1, max_size=25),
)
def test_no_link_exceeds_its_bandwidth_and_bytes_are_conserved(kind, sends):
    n, q = net(kind, 6, compat=False)
    done = arrivals(n, q, sends)
    end = max(done)
    for s in n.link_stats():
        assert s["busy_s"] * 1e9 <= end + 1e-6
        assert s["bytes"] <= BPNS * end + 1e-6  # never more than bandwidth x elapsed
    for (src, dst, size), t in zip(sends, done, strict=True):
        assert t >= n.delay_ns(src, dst, size) - 1e-6  # never faster than uncontended
    carried = sum(s["bytes"] for s in n.link_stats())
    assert carried == sum(size * len(n.graph.route(a, b)) for a, b, size in sends)


def test_two_node_ring_runs():
    n, q = net("Ring", 2)
    assert n.graph.links == 2
    assert arrivals(n, q, [(0, 1, 54), (1, 0, 54)]) == [501, 501]


@pytest.mark.parametrize("kind", ["Ring", "Mesh"])
def test_mesh_has_no_wraparound(kind):
    g = MultiDimGraph([kind], [4], [BW], [1.0])
    assert len(g.route(0, 3)) == (1 if kind == "Ring" else 3)
