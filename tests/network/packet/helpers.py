"""Small fabrics and runners for the packet engine's validation tests."""

from __future__ import annotations

from typing import Any

from trainsim.engine import EventQueue
from trainsim.network.packet.backend import PacketNetwork
from trainsim.network.packet.config import PacketOptions
from trainsim.network.packet.engine import PacketEngine, QueuePair
from trainsim.topology.fabrics import graph_from_edges

GBPS_25 = 25e9 / 8  # B/s of a 25 Gb/s link


def star(hosts: int, *, rate_bps: float = GBPS_25, latency_ns: float = 1000.0) -> Any:
    """``hosts`` ranks on one switch (device ``hosts``)."""
    return graph_from_edges(hosts, [(h, hosts, rate_bps, latency_ns) for h in range(hosts)])


def network(hosts: int, engine: str = "python", **options: Any) -> tuple[EventQueue, PacketEngine]:
    queue = EventQueue()
    net = PacketNetwork(
        None, queue, graph=star(hosts), options=PacketOptions(engine=engine, **options)
    )
    return queue, net.engine


def link(engine: PacketEngine, a: int, b: int) -> int:
    return int(engine.graph.link(a, b))


def start(
    engine: PacketEngine, src: int, dst: int, nbytes: int, done: dict[int, float] | None = None
) -> QueuePair:
    def arrived(key: Any) -> None:
        if done is not None:
            done[key] = engine.queue.now

    return engine.start_message(src, dst, nbytes, arrived, src)


def goodput_gbps(
    qps: list[QueuePair], queue: EventQueue, t0_ns: float, t1_ns: float
) -> list[float]:
    """Each QP's in-order bytes delivered between two times, in Gb/s (runs the queue)."""
    queue.run(until_ns=t0_ns)
    before = [qp.expected for qp in qps]
    queue.run(until_ns=t1_ns)
    return [(qp.expected - b) * 8 / (t1_ns - t0_ns) for qp, b in zip(qps, before, strict=True)]


def fair_goodput_gbps(
    flows: int, *, rate_gbps: float = 25.0, mtu: int = 1000, header: int = 48
) -> float:
    """Each of ``flows`` flows' share of a bottleneck's payload rate."""
    return rate_gbps * mtu / (mtu + header) / flows
