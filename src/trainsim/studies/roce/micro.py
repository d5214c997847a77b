"""The congestion-control papers' micro-benchmarks on the packet backend (studies layer;
docs/roce.md, "Against the papers' micro-benchmarks"; ``trainsim study roce-micro``).

Each benchmark is a small star (hosts on one switch, the papers' 25 Gb/s NICs) run on the
reference engine (``network/packet/engine.py``, whose queue samples and per-QP times it reads;
the compiled core gives the same times, tests/network/packet/test_backend.py). Parameters are
the packet backend's defaults (the HPCC ns-3 code base's), never fitted to the published
numbers, which are listed beside ours in :data:`PUBLISHED` and never used in a computation.
Times in microseconds, rates in Gb/s, queues in bytes.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from trainsim.engine import EventQueue
from trainsim.network.packet.backend import PacketNetwork
from trainsim.network.packet.config import EcnLevel, PacketOptions
from trainsim.network.packet.engine import PacketEngine, QueuePair
from trainsim.topology.fabrics import graph_from_edges


@dataclass(frozen=True)
class Published:
    """One published number (or bound) of a micro-benchmark, with where it comes from."""

    paper: str
    where: str
    claim: str
    value: float | None
    """The number, in the unit of our measurement (None: a claim without one)."""


PUBLISHED = {
    "dcqcn_fair_gbps": Published(
        "DCQCN, SIGCOMM'15 (Zhu et al.)", "Fig. 10 (as described by a reproduction, see docs)",
        "two flows converge to near-equal shares, about 20 + 20 Gb/s of a 40 Gb/s bottleneck", 20.0),
    "hpcc_utilization": Published(
        "HPCC, SIGCOMM'19 (Li et al.)", "Algorithm 1 (eta) and abstract",
        "target utilization eta = 95% with near-zero in-network queues", 0.95),
    "hpcc_mice_us": Published(
        "HPCC, SIGCOMM'19", "testbed micro-benchmark, elephant + mice (as summarized, see docs)",
        "1 KB mice latency close to the 5.4 us base RTT", 5.4),
    "dcqcn_mice_us": Published(
        "HPCC, SIGCOMM'19", "same micro-benchmark, DCQCN",
        "1 KB mice latency above 35 us (standing queue)", 35.0),
    "dcqcn_recovery_us": Published(
        "HPCC, SIGCOMM'19", "testbed micro-benchmark, long + short flow (as summarized, see docs)",
        "DCQCN's long flow not back at line rate more than 2 ms after the short flow ends", 2000.0),
    "hpcc_recovery_us": Published(
        "HPCC, SIGCOMM'19", "same micro-benchmark, HPCC",
        "HPCC restores the long flow's rate immediately", None),
}  # fmt: skip


def star(hosts: int, *, rate_gbps: float = 25.0, latency_ns: float = 1000.0, **options: Any) -> tuple[EventQueue, PacketEngine]:
    """``hosts`` ranks on one switch (device ``hosts``), every link ``rate_gbps``; the
    reference engine with ``options`` (``PacketOptions`` fields)."""
    graph = graph_from_edges(hosts, [(h, hosts, rate_gbps * 1e9 / 8, latency_ns) for h in range(hosts)])
    queue = EventQueue()
    net = PacketNetwork(None, queue, graph=graph, options=PacketOptions(engine="python", **options))
    assert isinstance(net.engine, PacketEngine)  # engine="python": the reference engine
    return queue, net.engine


def _start(engine: PacketEngine, src: int, dst: int, nbytes: int) -> QueuePair:
    return engine.start_message(src, dst, nbytes, lambda _key: None, None)


def payload_gbps(rate_gbps: float, options: PacketOptions | None = None) -> float:
    """A link's payload rate: ``mtu / (mtu + header)`` of its line rate."""
    o = options or PacketOptions()
    return rate_gbps * o.mtu_bytes / (o.mtu_bytes + o.header_bytes)


def _queue_series(engine: PacketEngine, link: int, after_ns: float) -> list[int]:
    col = engine._monitored.index(link)
    return [row[col] for t, row in zip(engine.samples_t, engine.samples_q, strict=True) if t > after_ns]


def long_flows(cc: str, *, flows: int = 2, rate_gbps: float = 25.0, warm_us: float = 1000.0, measure_us: float = 4000.0,
               has_window: bool = True) -> dict[str, float]:  # fmt: skip
    """``flows`` long-lived flows into one receiver: the bottleneck's utilization (wire bytes
    over line rate, after ``warm_us``) and its queue (sampled every 1 us)."""
    queue, engine = star(flows + 1, rate_gbps=rate_gbps, cc=cc, has_window=has_window, monitor_interval_us=1.0)
    for s in range(flows):
        _start(engine, s, flows, 10**10)
    bottleneck = int(engine.graph.link(flows + 1, flows))  # type: ignore[attr-defined]
    queue.run(until_ns=warm_us * 1e3)
    before = engine.link_bytes[bottleneck]
    queue.run(until_ns=(warm_us + measure_us) * 1e3)
    sent = engine.link_bytes[bottleneck] - before
    samples = _queue_series(engine, bottleneck, warm_us * 1e3)
    return {
        "utilization": sent * 8 / (measure_us * 1e3) / rate_gbps,
        "queue_mean_bytes": statistics.mean(samples),
        "queue_max_bytes": max(samples),
        "ecn_marks": engine.ecn_marks,
        "pause_frames": engine.pause_frames,
    }


def mice_latency(cc: str, *, elephants: int = 2, mice: int = 40, mice_bytes: int = 1000, interval_us: float = 50.0,
                 warm_us: float = 1000.0, rate_gbps: float = 25.0, has_window: bool = True) -> dict[str, float]:  # fmt: skip
    """``elephants`` long flows and one host's ``mice`` messages of ``mice_bytes``, one every
    ``interval_us`` after ``warm_us``, all into one receiver; each mouse's completion time
    (start to last ACK), and that of the same mouse on the idle network (the base)."""
    hosts = elephants + 2
    dst, mouse_src = elephants + 1, elephants

    def run(with_elephants: bool) -> list[float]:
        queue, engine = star(hosts, rate_gbps=rate_gbps, cc=cc, has_window=has_window)
        if with_elephants:
            for s in range(elephants):
                _start(engine, s, dst, 10**10)
        qps: list[QueuePair] = []
        for i in range(mice):
            queue.run(until_ns=(warm_us + i * interval_us) * 1e3)
            qps.append(_start(engine, mouse_src, dst, mice_bytes))
        queue.run(until_ns=(warm_us + (mice + 20) * interval_us) * 1e3)
        done = [qp for qp in qps if qp.done]
        assert len(done) == mice, "a mouse did not finish"
        return [(qp.finish_ns - qp.start_ns) / 1e3 for qp in done]

    loaded, idle = run(True), run(False)
    return {"base_us": statistics.median(idle), "median_us": statistics.median(loaded), "max_us": max(loaded)}


def long_short(cc: str, *, short_bytes: int = 1_000_000, join_us: float = 1000.0, horizon_us: float = 4000.0,
               step_us: float = 10.0, rate_gbps: float = 25.0, has_window: bool = True) -> dict[str, Any]:  # fmt: skip
    """A long flow has the receiver's link to itself; a short flow of ``short_bytes`` from
    another host joins at ``join_us``. The long flow's sending rate (its congestion control's
    rate, read every ``step_us``): its lowest while the short flow ran, the first time after the
    short flow's last byte arrived that it is back at 90% of line rate (``recovery_us``; None
    if not within ``horizon_us``), and its rate 2 ms after the short flow ended."""
    queue, engine = star(3, rate_gbps=rate_gbps, cc=cc, has_window=has_window)
    long = _start(engine, 0, 2, 10**10)
    queue.run(until_ns=join_us * 1e3)
    short = _start(engine, 1, 2, short_bytes)
    t, step = join_us * 1e3, step_us * 1e3
    lowest = long.rate
    while short.expected < short_bytes:
        t += step
        queue.run(until_ns=t)
        lowest = min(lowest, long.rate)
    end_ns, line = t, rate_gbps / 8  # B/ns, as QueuePair.rate
    recovery, at_2ms = None, None
    while t < end_ns + max(horizon_us, 2000.0) * 1e3:
        t += step
        queue.run(until_ns=t)
        if recovery is None and long.rate >= 0.9 * line:
            recovery = (t - end_ns) / 1e3
        if at_2ms is None and t >= end_ns + 2e6:
            at_2ms = long.rate * 8
    return {"short_end_us": end_ns / 1e3, "lowest_gbps": lowest * 8, "recovery_us": recovery, "gbps_at_2ms": at_2ms}


DCQCN_PAPER: dict[str, Any] = {
    "ecn_levels": (EcnLevel(rate_gbps=40, kmin_kb=5, kmax_kb=200, pmax=0.01),),
    "ewma_gain": 1 / 256,
    "dcqcn_alpha_resume_interval_us": 55.0,
    "dcqcn_rp_timer_us": 55.0,
    "dcqcn_rate_decrease_interval_us": 50.0,
    "cnp_interval_us": 50.0,
    "rate_ai_mbps": 40.0,
    "dcqcn_fast_recovery_times": 5,
    "has_window": False,
}
"""The DCQCN paper's parameters at 40 Gb/s (SIGCOMM'15, section 5.3, as listed by the sources
in docs/roce.md): Kmin 5 KB, Kmax 200 KB, Pmax 1%, g = 1/256, 55 us alpha and rate-increase
timers, a CNP at most every 50 us, R_AI 40 Mb/s, F = 5, no window. Its 10 MB byte counter is
not modelled; hyper increase keeps the code base's 100 Mb/s."""


def two_flows(cc: str, *, rate_gbps: float = 40.0, join_us: float = 1000.0, from_us: float = 6000.0,
              to_us: float = 10000.0, **options: Any) -> dict[str, float]:  # fmt: skip
    """Flow A alone from 0, flow B from another host joins at ``join_us``, both into one
    receiver: each flow's goodput (payload delivered in order) between ``from_us`` and
    ``to_us``, in Gb/s, and the fair share of the payload line rate."""
    queue, engine = star(3, rate_gbps=rate_gbps, cc=cc, **options)
    a = _start(engine, 0, 2, 10**10)
    queue.run(until_ns=join_us * 1e3)
    b = _start(engine, 1, 2, 10**10)
    queue.run(until_ns=from_us * 1e3)
    before = (a.expected, b.expected)
    queue.run(until_ns=to_us * 1e3)
    span_ns = (to_us - from_us) * 1e3
    return {"a_gbps": (a.expected - before[0]) * 8 / span_ns, "b_gbps": (b.expected - before[1]) * 8 / span_ns,
            "fair_gbps": payload_gbps(rate_gbps) / 2}  # fmt: skip


@dataclass(frozen=True)
class Row:
    """One comparison: our measurement of a micro-benchmark beside the published figure."""

    key: str
    benchmark: str
    ours: float | None
    unit: str
    published: Published
    band: str
    """What "agrees" means for this row, in words."""
    agrees: bool


def comparison_rows(*, dcqcn_paper: bool = True) -> list[Row]:
    """Run every micro-benchmark of :data:`PUBLISHED` (stars of 1 us links; about 5 s of CPU
    on the reference engine, plus 10 s for the DCQCN paper's 50 ms at 40 Gb/s when
    ``dcqcn_paper``) and compare each with its published figure."""
    p = PUBLISHED
    rows = []
    if dcqcn_paper:
        early = two_flows("dcqcn", **DCQCN_PAPER)
        late = two_flows("dcqcn", from_us=40000.0, to_us=50000.0, **DCQCN_PAPER)
        for name, r in (("6-10 ms", early), ("40-50 ms", late)):
            worst = max(abs(r["a_gbps"] - r["fair_gbps"]), abs(r["b_gbps"] - r["fair_gbps"])) / r["fair_gbps"]
            rows.append(Row("dcqcn_fair_gbps", f"2 flows -> 1 at 40 Gb/s, DCQCN paper parameters: A and B over {name}, Gb/s of payload",
                            None, f"{r['a_gbps']:.2f} + {r['b_gbps']:.2f} (fair {r['fair_gbps']:.2f}: {worst:.1%} off)",
                            p["dcqcn_fair_gbps"], "each within 5% of the fair share", worst <= 0.05))  # fmt: skip
    util = long_flows("hpcc")
    hpcc_mice = mice_latency("hpcc")
    dcqcn_mice = mice_latency("dcqcn", has_window=False)
    hpcc_ls = long_short("hpcc", step_us=2.0)
    dcqcn_ls = long_short("dcqcn", has_window=False)
    packet = PacketOptions().mtu_bytes + PacketOptions().header_bytes
    base = hpcc_mice["base_us"]
    return rows + [
        Row("hpcc_utilization", "2 long flows -> 1, HPCC: bottleneck utilization", util["utilization"], "of line rate",
            p["hpcc_utilization"], "within 0.02 of 0.95", abs(util["utilization"] - 0.95) <= 0.02),
        Row("hpcc_queue", "2 long flows -> 1, HPCC: mean queue", util["queue_mean_bytes"], "bytes",
            p["hpcc_utilization"], f"below one packet ({packet} B)", util["queue_mean_bytes"] < packet),
        Row("hpcc_mice_us", "2 elephants + 1 KB mice -> 1, HPCC: median mouse completion", hpcc_mice["median_us"], "us",
            p["hpcc_mice_us"], f"within 20% of the idle network's {base:.2f} us (ours; the paper's base is 5.4 us)",
            hpcc_mice["median_us"] <= 1.2 * base),
        Row("dcqcn_mice_us", "2 elephants + 1 KB mice -> 1, DCQCN: median mouse completion", dcqcn_mice["median_us"], "us",
            p["dcqcn_mice_us"], "above 35 us", dcqcn_mice["median_us"] > 35.0),
        Row("hpcc_recovery_us", "long + 1 MB short flow, HPCC: long flow back at 90% of line rate", hpcc_ls["recovery_us"], "us after",
            p["hpcc_recovery_us"], "within 10 us (two base RTTs)",
            hpcc_ls["recovery_us"] is not None and hpcc_ls["recovery_us"] <= 10.0),
        Row("dcqcn_recovery_us", "long + 1 MB short flow, DCQCN: long flow back at 90% of line rate", dcqcn_ls["recovery_us"], "us after",
            p["dcqcn_recovery_us"], "later than 2000 us", dcqcn_ls["recovery_us"] is None or dcqcn_ls["recovery_us"] > 2000.0),
    ]  # fmt: skip
