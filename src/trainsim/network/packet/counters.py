"""The packet backend's statistics (DESIGN.md, network layer; read by studies and reports):
what :meth:`PacketNetwork.counters` returns, gathered from a :class:`PacketEngine` or the
compiled core's ``NativeEngine``. The run result carries them as its generic
``network_counters`` (``system/result.py``) and ``trainsim report`` draws them
(``report/network.py``).

Bounded in size whatever the run's length: the queue-depth series of the ``HOT_PORTS``
deepest switch ports are reduced to at most ``MAX_POINTS`` points (each the deepest sample of
its time bin, so no peak is lost), and at most ``MAX_FLOWS`` messages are listed (evenly
spaced over the completion order) next to the summary of every message's rate.

Times in ns unless the key says otherwise, sizes in bytes, rates in Gb/s.
"""

from __future__ import annotations

import statistics
from typing import Any

from trainsim.network.packet.engine import PRIORITIES, PacketEngine

HOT_PORTS = 8
MAX_POINTS = 1000
MAX_FLOWS = 1000


def pause_ns(engine: PacketEngine) -> list[float]:
    """Time each link's upstream port spent paused so far (open pauses up to now)."""
    now = engine.queue.now
    out = list(engine.pause_ns)
    for link, since in enumerate(engine.pause_since):
        for prio in range(PRIORITIES):
            if since[prio] >= 0:
                out[link] += now - since[prio]
    return out


def hot_ports(engine: PacketEngine, count: int = HOT_PORTS) -> list[int]:
    """The monitored ports with the deepest peak queues, deepest first."""
    peaks = engine.peak_queue_bytes
    ranked = sorted(engine._monitored, key=lambda ln: -peaks[ln])
    return [ln for ln in ranked[:count] if peaks[ln] > 0]


def queue_series(engine: PacketEngine, link: int) -> tuple[list[float], list[int]]:
    """(sample times ns, queue bytes) of a monitored port."""
    col = engine._monitored.index(link)
    return list(engine.samples_t), [row[col] for row in engine.samples_q]


def downsample(
    t: list[float], q: list[int], points: int = MAX_POINTS
) -> tuple[list[float], list[int]]:
    """At most ``points`` samples: consecutive samples grouped into equal runs, each run
    kept as its deepest sample (its time and depth), so the peaks survive."""
    if len(t) <= points:
        return list(t), list(q)
    step = -(-len(t) // points)
    ts, qs = [], []
    for i in range(0, len(t), step):
        j = max(range(i, min(i + step, len(t))), key=q.__getitem__)
        ts.append(t[j])
        qs.append(q[j])
    return ts, qs


def _flows(completions: list[tuple[int, int, int, float, float]], limit: int) -> dict[str, Any]:
    rates = [b * 8 / (t1 - t0) if t1 > t0 else 0.0 for _, _, b, t0, t1 in completions]
    n = len(completions)
    picked = range(n) if n <= limit else [i * n // limit for i in range(limit)]
    listed = [
        {
            "src": completions[i][0],
            "dst": completions[i][1],
            "bytes": completions[i][2],
            "start_ns": completions[i][3],
            "end_ns": completions[i][4],
            "gbps": rates[i],
        }
        for i in picked
    ]
    summary = (
        {
            "min": min(rates),
            "median": statistics.median(rates),
            "mean": statistics.fmean(rates),
            "max": max(rates),
        }
        if rates
        else {}
    )
    return {
        "flow_count": n,
        "flow_bytes": sum(c[2] for c in completions),
        "flow_gbps": summary,
        "flows": listed,
    }


def collect(
    engine: Any,
    *,
    hot: int = HOT_PORTS,
    max_points: int = MAX_POINTS,
    max_flows: int = MAX_FLOWS,
) -> dict[str, Any]:
    """The statistics of a :class:`PacketEngine` or a ``NativeEngine``."""
    if hasattr(engine, "sync"):
        engine.sync()
    g = engine.graph
    pauses = pause_ns(engine)
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
    for link in hot_ports(engine, hot):
        t, q = downsample(*queue_series(engine, link), max_points)
        series[f"{g.link_src[link]}->{g.link_dst[link]}"] = {
            "link": link,
            "peak_queue_bytes": engine.peak_queue_bytes[link],
            "t_ns": t,
            "queue_bytes": q,
        }
    return {
        "kind": "packet",
        "cc": engine.cc.name,
        "monitor_interval_ns": engine.opts.monitor_interval_us * 1e3,
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
        **_flows(engine.completions, max_flows),
    }
