import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trainsim.config.types import DimSpec, NetworkSpec
from trainsim.engine import EventQueue
from trainsim.network import AnalyticalNetwork
from trainsim.network.flow import FlowNetwork
from trainsim.network.maxmin import max_min_rates

BW = 100e9  # B/s = 100 B/ns


def flow_net(kind="FullyConnected", n=4, latency=10.0):
    q = EventQueue()
    return FlowNetwork(NetworkSpec((DimSpec(kind, n, BW, latency),)), q), q


def run_sends(network, q, sends):
    got = {}
    for i, (src, dst, size) in enumerate(sends):
        network.send(src, dst, size, lambda tag: got.__setitem__(tag, q.now), i)
    q.run()
    return [got[i] for i in range(len(sends))]


def test_two_flows_on_one_link_share_it_equally():
    n, q = flow_net()
    t = run_sends(n, q, [(0, 1, 1000), (0, 1, 1000)])
    assert t == pytest.approx([10 + 2000 / 100] * 2)


def test_short_flow_leaves_and_long_one_speeds_up():
    n, q = flow_net()
    t = run_sends(n, q, [(0, 1, 1000), (0, 1, 3000)])
    # both at 50 B/ns until the short one ends at 20 ns; the long one has 2000 B left at 100 B/ns
    assert t == pytest.approx([10 + 20, 10 + 20 + 20])


def test_unshared_flows_equal_the_unaware_backend():
    n, q = flow_net("Ring", 8)
    spec = NetworkSpec((DimSpec("Ring", 8, BW, 10.0),))
    unaware = AnalyticalNetwork(spec, EventQueue())
    sends = [(r, (r + 1) % 8, 12345) for r in range(8)]
    assert run_sends(n, q, sends) == pytest.approx([unaware.delay_ns(a, b, s) for a, b, s in sends])


def test_one_recomputation_per_timestamp():
    n, q = flow_net("Switch", 8)
    run_sends(n, q, [(r, (r + 3) % 8, 5000) for r in range(8)])
    assert n.recomputations == 1  # all start together and end together


@settings(max_examples=60, deadline=None)
@given(
    links=st.integers(1, 6),
    flows=st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True), min_size=1, max_size=10),
    caps=st.lists(st.floats(0.5, 50), min_size=6, max_size=6),
)
def test_max_min_fairness_holds(links, flows, caps):
    flows = [[link % links for link in f] for f in flows]
    flows = [sorted(set(f)) for f in flows]
    cap = np.asarray(caps[:links])
    flow_of = np.asarray([i for i, f in enumerate(flows) for _ in f])
    link_of = np.asarray([link for f in flows for link in f])
    rate = max_min_rates(flow_of, link_of, cap, len(flows))
    load = np.bincount(link_of, weights=rate[flow_of], minlength=links)
    assert np.all(load <= cap * (1 + 1e-9))
    for i, f in enumerate(flows):
        # every flow has a saturated link on which no flow gets more than it does
        ok = False
        for link in f:
            on_link = [j for j, g in enumerate(flows) if link in g]
            if load[link] >= cap[link] * (1 - 1e-9) and rate[i] >= max(rate[on_link]) * (1 - 1e-9):
                ok = True
        assert ok, (i, f, rate, load, cap)
