"""The packet backend behind the network seam: registry entry, strict options, platform
files, delays, counters, and whole simulations against the flow backend."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tests.network.packet.helpers import star
from trainsim.config.platform import load_platform
from trainsim.engine import EventQueue
from trainsim.errors import ConfigError
from trainsim.network.packet import native
from trainsim.network.packet.backend import PacketNetwork
from trainsim.network.packet.config import PacketOptions
from trainsim.network.protocol import NO_SYMMETRY
from trainsim.network.registry import backend_capabilities, backend_names, validate_options
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload

ROCE = Path(__file__).resolve().parents[3] / "examples" / "roce"


def test_registered_without_symmetry() -> None:
    assert "packet" in backend_names()
    assert backend_capabilities("packet").symmetry == NO_SYMMETRY
    assert PacketNetwork.capabilities == backend_capabilities("packet")


@pytest.mark.parametrize(
    ("section", "field"),
    [
        ({"cc": "reno"}, "backends.packet.cc"),
        ({"mtu": 1000}, "backends.packet.mtu"),
        ({"mtu_bytes": 0}, "backends.packet.mtu_bytes"),
    ],
)
def test_options_are_strict(section: dict, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        validate_options("packet", section, file="p.yaml")
    assert field in str(err.value)


def test_ecn_thresholds_by_rate() -> None:
    opts = PacketOptions()
    assert opts.ecn_thresholds(25e9) == (100_000, 400_000, 0.2)
    assert opts.ecn_thresholds(100e9) == (400_000, 1_600_000, 0.2)
    assert opts.ecn_thresholds(200e9) == pytest.approx((800_000, 3_200_000, 0.2))


def test_uncontended_delay_is_the_simulated_one() -> None:
    queue = EventQueue()
    net = PacketNetwork(None, queue, graph=star(2), options=PacketOptions(has_window=False))
    done: list[float] = []
    net.send(0, 1, 123_456, lambda _: done.append(queue.now))
    queue.run()
    assert done[0] == pytest.approx(net.delay_ns(0, 1, 123_456), abs=1e-6)
    assert not net.carrying()


def test_counters_report_queues_pauses_and_flows() -> None:
    queue = EventQueue()
    net = PacketNetwork(
        None,
        queue,
        graph=star(5),
        options=PacketOptions(cc="none", has_window=False, buffer_mib=1.0),
    )
    for s in range(4):
        net.send(s, 4, 300_000, lambda _: None)
    queue.run()
    c = net.counters()
    assert c["drops"] == 0 and c["pause_frames"] > 0 and c["total_pause_ns"] > 0
    assert len(c["flows"]) == 4 and all(f["bytes"] == 300_000 for f in c["flows"])
    hot = next(iter(c["hot_port_queues"]))
    assert hot == "5->4"  # the switch port into the receiver
    assert max(c["hot_port_queues"][hot]["queue_bytes"]) > 0


def test_the_32_npu_fabric_file() -> None:
    platform = load_platform(ROCE / "platform_32.yaml")
    opts = platform.backend_options["packet"]
    assert opts.cc == "dcqcn" and opts.buffer_mib == 32 and opts.mtu_bytes == 1000
    fabric = platform.network.fabric
    assert fabric is not None and fabric.uplink_latency_ns == 12500 and fabric.latency_ns == 5000
    graphs = collective_workload(32, "all_reduce", 1 << 16)
    packet = simulate(platform, graphs, backend="packet").makespan_s
    flow = simulate(platform, graphs, backend="flow").makespan_s
    assert packet == pytest.approx(flow, rel=0.02)


native_only = pytest.mark.skipif(
    not native.available(), reason="the compiled core is not built (make builds it)"
)


@native_only
@pytest.mark.parametrize("cc", ["none", "dcqcn", "dctcp", "timely", "hpcc"])
@pytest.mark.parametrize(
    "extra",
    [
        {},
        {"has_window": False, "buffer_mib": 1.0},
        {"has_window": False, "pfc": False, "buffer_mib": 1.0},
    ],
)
def test_the_compiled_core_matches_the_reference(cc: str, extra: dict) -> None:
    def run(engine: str) -> tuple[dict[int, float], dict]:
        queue = EventQueue()
        net = PacketNetwork(
            None, queue, graph=star(5), options=PacketOptions(engine=engine, cc=cc, **extra)
        )
        done: dict[int, float] = {}
        for s in range(4):
            net.send(s, 4, 300_000 + 1000 * s, lambda key: done.__setitem__(key, queue.now), s)
        queue.run()
        c = net.counters()
        return done, {k: v for k, v in c.items() if isinstance(v, int | float)} | {
            "links": c["links"]
        }

    (ref, ref_counters), (fast, fast_counters) = run("python"), run("native")
    assert fast == ref  # every message at the same ns
    assert fast_counters == ref_counters


@native_only
def test_the_compiled_core_on_the_fabric() -> None:
    platform = load_platform(ROCE / "platform_32.yaml")
    graphs = collective_workload(32, "all_to_all", 1 << 15)
    times = {}
    for engine in ("python", "native"):
        opts = platform.backend_options["packet"].model_copy(update={"engine": engine})
        plat = dataclasses.replace(platform, backend_options={"packet": opts})
        times[engine] = simulate(plat, graphs, backend="packet").makespan_s
    assert times["native"] == pytest.approx(times["python"], rel=1e-9)


def test_a_native_engine_that_is_not_built_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINSIM_PACKET_CORE", "/nonexistent/libpacket_core.so")
    native._load.cache_clear()
    try:
        with pytest.raises(ConfigError, match="compiled core is not built"):
            PacketNetwork(None, EventQueue(), graph=star(2), options=PacketOptions(engine="native"))
        # auto falls back to the reference engine
        net = PacketNetwork(None, EventQueue(), graph=star(2), options=PacketOptions(engine="auto"))
        assert type(net.engine).__name__ == "PacketEngine"
    finally:
        monkeypatch.delenv("TRAINSIM_PACKET_CORE")
        native._load.cache_clear()


def test_events_stay_a_few_per_packet_hop_under_pauses() -> None:
    # one pending "port free" event per port: PFC-paused ports once multiplied them
    queue = EventQueue()
    net = PacketNetwork(
        None,
        queue,
        graph=star(9),
        options=PacketOptions(engine="python", cc="none", has_window=False, buffer_mib=1.0),
    )
    for s in range(8):
        net.send(s, 8, 500_000, lambda _: None)
    queue.run()
    engine = net.engine
    assert engine.pause_frames > 0
    assert queue.events_processed < 3 * engine.hops


@native_only
@pytest.mark.parametrize("cc", ["none", "hpcc"])
def test_the_compiled_core_matches_the_reference_in_a_paused_incast(cc: str) -> None:
    def run(engine: str) -> dict[int, float]:
        queue = EventQueue()
        net = PacketNetwork(
            None,
            queue,
            graph=star(9),
            options=PacketOptions(engine=engine, cc=cc, has_window=False, buffer_mib=1.0),
        )
        done: dict[int, float] = {}
        for s in range(8):
            net.send(s, 8, 1_000_000, lambda key: done.__setitem__(key, queue.now), s)
        queue.run()
        return done

    assert run("native") == run("python")
