from trainsim.config.types import DimSpec, NetworkSpec
from trainsim.engine import EventQueue
from trainsim.network import AnalyticalNetwork

RING8 = NetworkSpec((DimSpec("Ring", 8, 50 * 2**30, 500.0),))


def test_ring_neighbour_delay_matches_astra_arithmetic():
    # 1 MiB / 4 chunks / 8 ranks = 32,768 B; 50 GiB/s = 53.687 B/ns -> 610.35 ns + 500 ns.
    net = AnalyticalNetwork(RING8, EventQueue(), compat_astra=True)
    assert net.delay_ns(0, 1, 32768) == 1110
    assert AnalyticalNetwork(RING8, EventQueue()).delay_ns(0, 1, 32768) > 1110


def test_send_schedules_arrival_and_counts_bytes():
    q = EventQueue()
    net = AnalyticalNetwork(RING8, q, compat_astra=True)
    got = []
    net.send(0, 4, 1000, got.append, "x")
    q.run()
    assert got == ["x"]
    assert q.now == 4 * 500 + int(1000 / (50 * 2**30 / 1e9))
    assert net.bytes_sent == 1000


def test_second_dimension_is_priced_on_its_own_link():
    spec = NetworkSpec((DimSpec("Ring", 8, 200 * 2**30, 500.0), DimSpec("Switch", 4, 50 * 2**30, 1000.0)))
    net = AnalyticalNetwork(spec, EventQueue(), compat_astra=True)
    assert net.delay_ns(0, 8, 0) == 2000
    assert net.delay_ns(0, 9, 0) == 500
