"""The path of a message that crosses several dimensions (``topology/multidim.py``): in the
default mode it crosses every dimension where its ends differ (summed hops x latency, the
slowest bandwidth, accounted to and injected on the bottleneck dimension); in ``compat: astra``
it travels the first differing dimension only (astra-sim-semantics.md A1-A2)."""

import math

import pytest

from trainsim.config.types import DimSpec, NetworkSpec
from trainsim.engine import EventQueue
from trainsim.network import AnalyticalNetwork
from trainsim.topology import MultiDimTopology

# an 8-GPU NVSwitch node (300 GB/s, 700 ns) and InfiniBand between 4 nodes (25 GB/s, 2,000 ns)
NODES = NetworkSpec((DimSpec("Switch", 8, 300e9, 700.0), DimSpec("Switch", 4, 25e9, 2000.0)))
NBYTES = 1_000_000


def test_topology_path_rules():
    default = MultiDimTopology.of_network(NODES, compat_astra=False)
    astra = MultiDimTopology.of_network(NODES, compat_astra=True)
    # GPU 6 of node 0 -> GPU 0 of node 1: differs in both dimensions
    assert default.path(6, 8) == (0, 1) and default.send_dim(6, 8) == 1
    assert astra.path(6, 8) == (0,) and astra.send_dim(6, 8) == 0
    # one dimension only: both rules agree
    for topo in (default, astra):
        assert topo.path(0, 8) == (1,) and topo.send_dim(0, 8) == 1
        assert topo.path(0, 5) == (0,) and topo.send_dim(0, 5) == 0
        assert topo.path(3, 3) == () and topo.send_dim(3, 3) == -1
    # shapes: Switch offsets are one class; messages that cross different dimension sets differ
    assert default.shape(6, 8) == ((0, 0), (1, 0)) == default.shape(1, 26)
    assert default.shape(6, 8) != default.shape(0, 8)
    assert astra.shape(6, 8) == ((0, 0),) == astra.shape(0, 1)


def test_bottleneck_ties_go_to_the_higher_dimension():
    topo = MultiDimTopology(["Ring", "Ring", "Switch"], [4, 4, 2], bandwidths=[50.0, 50.0, 100.0])
    assert topo.send_dim(0, 1 + 4) == 1  # dims 0 and 1, equal bandwidth: the higher
    assert topo.send_dim(0, 1 + 16) == 0  # dims 0 and 2: dim 0 is slower
    assert topo.send_dim(0, 1 + 4 + 16) == 1


def test_message_across_nodes_is_priced_on_every_dimension_it_crosses():
    net = AnalyticalNetwork(NODES, EventQueue())
    # 2 hops x 700 ns + 2 hops x 2,000 ns + 1 MB at the slower 25 GB/s
    assert net.delay_ns(6, 8, NBYTES) == pytest.approx(2 * 700 + 2 * 2000 + NBYTES / 25.0, rel=1e-15)
    # within one dimension nothing changes
    assert net.delay_ns(6, 7, NBYTES) == 2 * 700 + NBYTES / 300.0
    assert net.delay_ns(0, 8, NBYTES) == 2 * 2000 + NBYTES / 25.0
    # a Ring crossing: the hops of each dimension, shorter way round
    ring = NetworkSpec((DimSpec("Ring", 8, 100e9, 500.0), DimSpec("Ring", 4, 50e9, 1000.0)))
    rnet = AnalyticalNetwork(ring, EventQueue())
    assert rnet.delay_ns(1, 7 + 2 * 8, 1000) == pytest.approx(2 * 500 + 2 * 1000 + 1000 / 50.0, rel=1e-15)


def test_compat_keeps_the_first_dimension():
    net = AnalyticalNetwork(NODES, EventQueue(), compat_astra=True)
    assert net.delay_ns(6, 8, NBYTES) == math.trunc(2 * 700 + NBYTES / 300.0)
    assert net.injection_ports() is None


def test_transfer_and_port_on_the_bottleneck_dimension():
    q = EventQueue()
    net = AnalyticalNetwork(NODES, q)
    net.transfers = []
    net.send(6, 8, NBYTES, lambda _: None)
    q.run()
    assert net.transfers[0][2] == 1
    ports = net.injection_ports()
    assert ports is not None
    # GPU 6 -> 8 takes the InfiniBand port for 1 MB / 25 GB/s ...
    assert ports.reserve(6, 8, NBYTES, 0.0) == 0.0
    # ... so a second node-crossing message waits for it, one inside the node does not
    assert ports.reserve(6, 7, NBYTES, 0.0) == 0.0
    assert ports.reserve(6, 16, NBYTES, 0.0) == pytest.approx(NBYTES / 25.0)
