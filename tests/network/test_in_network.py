"""The in-network flow backend (network/in_network.py): a tree is one max-min flow over its
links, sharing them with unicast flows."""

from __future__ import annotations

import pytest

from trainsim.engine import EventQueue
from trainsim.network.in_network import InNetworkFlow
from trainsim.topology.fabrics import graph_from_edges


def _star():
    # ranks 0, 1, 2 under switch 3, 100 B/ns (1e11 B/s) links, no latency
    return graph_from_edges(3, [(0, 3, 1e11, 0.0), (1, 3, 1e11, 0.0), (2, 3, 1e11, 0.0)])


def test_tree_alone_runs_at_its_bottleneck():
    g = _star()
    net = InNetworkFlow(None, EventQueue(), graph=g)
    done = []
    tree = [g.link(0, 3), g.link(1, 3), g.link(3, 0), g.link(3, 1)]
    net.send_tree(tree, 1000, lambda t: done.append(net.queue.now), latency_ns=5.0)
    net.queue.run()
    assert done == [pytest.approx(1000 / 100 + 5.0)]
    assert net.link_bytes[g.link(0, 3)] == 1000 and net.link_bytes[g.link(2, 3)] == 0


def test_tree_shares_links_with_a_unicast():
    g = _star()
    net = InNetworkFlow(None, EventQueue(), graph=g)
    ends = {}
    tree = [g.link(0, 3), g.link(1, 3), g.link(3, 0), g.link(3, 1)]
    net.send_tree(tree, 1000, lambda _: ends.setdefault("tree", net.queue.now))
    net.send(2, 0, 1000, lambda _: ends.setdefault("unicast", net.queue.now))
    net.queue.run()
    # both cross 3 -> 0: 50 B/ns each until both finish together
    assert ends["tree"] == pytest.approx(20.0) and ends["unicast"] == pytest.approx(20.0)
    assert net.capabilities.in_network
