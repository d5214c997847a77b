"""Validation of the packet engine against known answers (docs/roce.md, "Validation").

Every case runs on a star of 25 Gb/s links with 1 us latency (the HPCC code base's ECN table
has an entry for 25 Gb/s: Kmin 100 KB, Kmax 400 KB). The payload rate of a link is
25 x 1000 / 1048 Gb/s (48 B of headers per 1000 B packet).
"""

from __future__ import annotations

import statistics

import pytest

from tests.network.packet.helpers import fair_goodput_gbps, goodput_gbps, link, network, start
from trainsim.network.packet.config import EcnLevel


def _queue_samples(engine, a: int, b: int, after_ns: float) -> list[int]:
    col = engine._monitored.index(link(engine, a, b))
    return [
        row[col] for t, row in zip(engine.samples_t, engine.samples_q, strict=True) if t > after_ns
    ]


def test_dcqcn_two_flows_converge_to_fair_shares() -> None:
    # flow A has the bottleneck to itself for 1 ms, then B joins; DCQCN must split it evenly
    queue, engine = network(3, cc="dcqcn", has_window=False)
    a = start(engine, 0, 2, 10**9)
    alone = goodput_gbps([a], queue, 0.5e6, 1e6)[0]
    b = start(engine, 1, 2, 10**9)
    rates = goodput_gbps([a, b], queue, 6e6, 12e6)
    fair = fair_goodput_gbps(2)  # 11.93 Gb/s
    assert alone == pytest.approx(2 * fair, rel=0.02)  # alone at line rate
    for r in rates:
        assert r == pytest.approx(fair, rel=0.06)
    assert sum(rates) == pytest.approx(2 * fair, rel=0.03)
    assert engine.cnps > 0 and engine.drops == 0


def test_pfc_incast_pauses_upstream_and_loses_nothing() -> None:
    # 8 senders at line rate into one receiver, no congestion control, a 1 MiB buffer
    queue, engine = network(9, cc="none", buffer_mib=1.0, has_window=False)
    done: dict[int, float] = {}
    for s in range(8):
        start(engine, s, 8, 500_000, done)
    queue.run()
    assert len(done) == 8 and engine.drops == 0 and engine.packets_resent == 0
    assert engine.pause_frames > 0
    switch = 9
    for s in range(8):  # every sender's NIC was held back by pauses
        assert engine.pause_ns[link(engine, s, switch)] > 0.5e6
    # lossless and work-conserving: the receiver link ran at its line rate throughout
    wire_bytes = 8 * 500_000 * 1048 / 1000
    ideal_ns = wire_bytes / (25 / 8)
    assert max(done.values()) == pytest.approx(ideal_ns, rel=0.01)
    # the buffer never overflowed its 1 MiB
    assert max(engine.peak_queue_bytes) <= 1 << 20


def test_without_pfc_the_incast_drops_and_go_back_n_recovers() -> None:
    queue, engine = network(9, cc="none", buffer_mib=1.0, has_window=False, pfc=False)
    done: dict[int, float] = {}
    qps = [start(engine, s, 8, 500_000, done) for s in range(8)]
    queue.run()
    assert engine.drops > 0 and engine.pause_frames == 0
    assert engine.packets_resent >= engine.drops
    assert len(done) == 8 and all(qp.expected == 500_000 for qp in qps)


def test_go_back_n_recovers_a_dropped_packet() -> None:
    queue, engine = network(2, cc="none")
    done: dict[int, float] = {}
    qp = start(engine, 0, 1, 200_000, done)
    queue.run(until_ns=3000)  # some packets are on their way
    engine.lose(link(engine, 2, 1))  # the next data packet into the receiver is lost
    queue.run()
    assert engine.drops == 1 and qp.expected == 200_000 and done
    # the NACK sent the sender back to the lost packet: it and the ones after it went again
    assert 1 <= engine.packets_resent <= engine.packets_sent - 200
    assert qp.snd_una == 200_000 and qp.done


def test_dctcp_queue_oscillates_around_k() -> None:
    k_bytes = 100_000
    # DCTCP marks every packet above K (a step: Kmin = K, Pmax = 1 just above)
    step = EcnLevel(rate_gbps=25, kmin_kb=100, kmax_kb=101, pmax=1.0)
    queue, engine = network(
        3, cc="dctcp", has_window=False, monitor_interval_us=1.0, ecn_levels=(step,)
    )
    a, b = start(engine, 0, 2, 10**9), start(engine, 1, 2, 10**9)
    queue.run(until_ns=6e6)
    samples = _queue_samples(engine, 3, 2, after_ns=1e6)
    mean = statistics.mean(samples)
    assert 0.6 * k_bytes <= mean <= 1.2 * k_bytes
    assert min(samples) < k_bytes < max(samples)  # it oscillates across K
    crossings = sum(
        (x > k_bytes) != (y > k_bytes) for x, y in zip(samples, samples[1:], strict=False)
    )
    assert crossings >= 10
    assert max(samples) < 1.5 * k_bytes
    rates = goodput_gbps([a, b], queue, 6e6, 7e6)
    assert sum(rates) == pytest.approx(2 * fair_goodput_gbps(2), rel=0.03)


def test_hpcc_holds_a_near_empty_queue_at_95_percent() -> None:
    queue, engine = network(3, cc="hpcc", monitor_interval_us=1.0)
    start(engine, 0, 2, 10**9)
    start(engine, 1, 2, 10**9)
    bottleneck = link(engine, 3, 2)
    queue.run(until_ns=1e6)
    before = engine.link_bytes[bottleneck]
    queue.run(until_ns=5e6)
    utilization = (engine.link_bytes[bottleneck] - before) / 4e6 / (25 / 8)
    assert utilization == pytest.approx(0.95, abs=0.02)
    samples = _queue_samples(engine, 3, 2, after_ns=1e6)
    assert statistics.mean(samples) < 2 * 1048  # under two packets on average
    assert max(samples) < 5 * 1048
    assert engine.ecn_marks == 0 and engine.pause_frames == 0


def test_timely_shares_the_bottleneck_without_pauses() -> None:
    queue, engine = network(3, cc="timely", has_window=False)
    a, b = start(engine, 0, 2, 10**9), start(engine, 1, 2, 10**9)
    rates = goodput_gbps([a, b], queue, 2e6, 8e6)
    assert sum(rates) == pytest.approx(2 * fair_goodput_gbps(2), rel=0.1)
    assert min(rates) > 0.7 * fair_goodput_gbps(2)


def test_cells_of_k_packets_stay_close_under_pfc_only() -> None:
    # an incast of 4 x 400 KB: cells of 4 and 16 packets against packets (docs/roce.md has
    # the error under each scheme; rate control reacting per cell is where it grows)
    def incast(cells: int) -> tuple[float, int]:
        queue, engine = network(5, cc="none", cell_packets=cells, has_window=False, buffer_mib=2.0)
        done: dict[int, float] = {}
        for s in range(4):
            start(engine, s, 4, 400_000, done)
        queue.run()
        assert len(done) == 4 and engine.drops == 0
        return max(done.values()), engine.packets_sent

    exact, packets = incast(1)
    for k in (4, 16):
        t, cells = incast(k)
        assert cells == packets // k
        assert t != exact and abs(t - exact) / exact < 0.02
