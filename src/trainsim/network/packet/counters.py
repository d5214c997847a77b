"""The packet backend's statistics (DESIGN.md, network layer; read by studies and reports):
what :meth:`PacketNetwork.counters` returns, gathered from a :class:`PacketEngine`.

Times in ns unless the key says otherwise, sizes in bytes, rates in Gb/s.
"""

from __future__ import annotations

from typing import Any

from trainsim.network.packet.engine import PRIORITIES, PacketEngine


def pause_ns(engine: PacketEngine) -> list[float]:
    """Time each link's upstream port spent paused so far (open pauses up to now)."""
    now = engine.queue.now
    out = list(engine.pause_ns)
    for link, since in enumerate(engine.pause_since):
        for prio in range(PRIORITIES):
            if since[prio] >= 0:
                out[link] += now - since[prio]
    return out


def hot_ports(engine: PacketEngine, count: int = 8) -> list[int]:
    """The monitored ports with the deepest peak queues, deepest first."""
    peaks = engine.peak_queue_bytes
    ranked = sorted(engine._monitored, key=lambda ln: -peaks[ln])
    return [ln for ln in ranked[:count] if peaks[ln] > 0]


def queue_series(engine: PacketEngine, link: int) -> tuple[list[float], list[int]]:
    """(sample times ns, queue bytes) of a monitored port."""
    col = engine._monitored.index(link)
    return list(engine.samples_t), [row[col] for row in engine.samples_q]


def collect(engine: Any) -> dict[str, Any]:
    """The statistics of a :class:`PacketEngine` or a ``NativeEngine``."""
    if hasattr(engine, "sync"):
        engine.sync()
    g = engine.graph
    pauses = pause_ns(engine)
    hot = hot_ports(engine)
    links = []
    for link in range(g.links):
        if engine.link_bytes[link] or pauses[link]:
            links.append(
                {
                    "link": link,
                    "src": g.link_src[link],
                    "dst": g.link_dst[link],
                    "bytes": engine.link_bytes[link],
                    "peak_queue_bytes": engine.peak_queue_bytes[link],
                    "pause_ns": pauses[link],
                }
            )
    series = {}
    for link in hot:
        t, q = queue_series(engine, link)
        series[f"{g.link_src[link]}->{g.link_dst[link]}"] = {"t_ns": t, "queue_bytes": q}
    flows = [
        {
            "src": s,
            "dst": d,
            "bytes": b,
            "start_ns": t0,
            "end_ns": t1,
            "gbps": b * 8 / (t1 - t0) if t1 > t0 else 0.0,
        }
        for s, d, b, t0, t1 in engine.completions
    ]
    return {
        "cc": engine.cc.name,
        "packets_sent": engine.packets_sent,
        "packets_resent": engine.packets_resent,
        "link_transmissions": engine.hops,
        "drops": engine.drops,
        "pause_frames": engine.pause_frames,
        "ecn_marks": engine.ecn_marks,
        "cnps": engine.cnps,
        "total_pause_ns": sum(pauses),
        "links": links,
        "hot_port_queues": series,
        "flows": flows,
    }
