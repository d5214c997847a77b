import pytest

from trainsim.engine import EventQueue
from trainsim.errors import ConfigError
from trainsim.network.flow import FlowNetwork
from trainsim.topology.fabrics import graph_from_edges, leaf_spine, load_edge_list


def test_leaf_spine_routes_and_oversubscription():
    g = leaf_spine(16, 4, 2, 100e9, 100.0, oversubscription=2.0)
    assert len(g.route(0, 3)) == 2
    assert len(g.route(0, 5)) == 4
    uplink = g.route(0, 5)[1]
    assert g.bandwidth[uplink] == pytest.approx(4 * 100e9 / 2 / 2)
    assert g.route(0, 5) == g.route(0, 5)  # deterministic


def test_oversubscribed_uplinks_slow_cross_leaf_traffic():
    g = leaf_spine(8, 4, 1, 100e9, 0.0, oversubscription=2.0)
    q = EventQueue()
    net = FlowNetwork(None, q, graph=g)
    done = []
    for h in range(4):  # four hosts of leaf 0 send to leaf 1 through one 200 GB/s uplink
        net.send(h, h + 4, 1000, done.append, q)
    q.run()
    assert q.now == pytest.approx(4 * 1000 / 200)


def test_user_graph_shortest_latency_path(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("# a b GB/s ns\n0 2 100 10\n2 1 100 10\n0 3 100 1\n3 1 100 1\n")
    g = load_edge_list(path, npus=2)
    assert [g.link_dst[link] for link in g.route(0, 1)] == [3, 1]


def test_graphml(tmp_path):
    path = tmp_path / "g.graphml"
    path.write_text(
        '<?xml version="1.0"?><graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
        '<key id="d0" for="edge" attr.name="bandwidth_gbps" attr.type="double"/>'
        '<key id="d1" for="edge" attr.name="latency_ns" attr.type="double"/>'
        '<graph edgedefault="undirected"><node id="0"/><node id="1"/>'
        '<edge source="0" target="1"><data key="d0">50</data><data key="d1">5</data></edge></graph></graphml>'
    )
    g = load_edge_list(path, npus=2)
    assert g.bandwidth[g.route(0, 1)[0]] == 50e9


def test_unreachable_and_bad_edges_are_clear_errors(tmp_path):
    g = graph_from_edges(3, [(0, 1, 1e9, 1.0), (2, 3, 1e9, 1.0)])
    with pytest.raises(ConfigError, match="rank 2 cannot be reached from rank 0"):
        g.route(0, 2)
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1 fast 10\n")
    with pytest.raises(ConfigError, match="line 1: not numbers"):
        load_edge_list(bad, 2)


def test_leaf_spine_uplinks_may_have_their_own_latency():
    g = leaf_spine(32, 8, 4, 25e9, 5000.0, oversubscription=2.0, uplink_latency_ns=12500.0)
    route = g.route(0, 31)
    assert [g.latency_ns[link] for link in route] == [5000.0, 12500.0, 12500.0, 5000.0]
    assert g.bandwidth[route[1]] == 25e9  # 8 x 25 / 2 over 4 uplinks
