"""The packet backend's counters in the run result (``RunResult.network_counters``): present,
bounded, and consistent with the engine's own statistics and with what PFC must do."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import trainsim.system.api as api
from trainsim.config.platform import load_platform
from trainsim.config.types import Platform
from trainsim.network.packet import native
from trainsim.network.packet.counters import collect, downsample
from trainsim.network.packet.engine import PacketEngine
from trainsim.system.result import RunResult
from trainsim.workload.micro import collective_workload

PLATFORM = Path(__file__).resolve().parent / "data" / "oversubscribed_8.yaml"
SIZE = 1 << 18  # all-to-all bytes per NPU: 32 KiB to each of the 7 others


def _platform(engine: str) -> Platform:
    p = load_platform(PLATFORM)
    opts = p.backend_options["packet"].model_copy(update={"engine": engine})
    return dataclasses.replace(p, backend_options={"packet": opts})


def _run(engine: str) -> tuple[RunResult, Any]:
    """The all-to-all through ``simulate``, and the backend it ran on."""
    made: list[Any] = []
    original = api.make_network

    def spy(*args: Any, **kwargs: Any) -> Any:
        made.append(original(*args, **kwargs))
        return made[-1]

    api.make_network = spy  # type: ignore[assignment]
    try:
        result = api.simulate(_platform(engine), collective_workload(8, "all_to_all", SIZE), backend="packet")
    finally:
        api.make_network = original  # type: ignore[assignment]
    return result, made[-1]


@pytest.fixture(scope="module")
def reference() -> tuple[RunResult, Any]:
    return _run("python")


def test_the_result_carries_the_counters(reference: tuple[RunResult, Any]) -> None:
    result, _ = reference
    c = result.network_counters
    assert c is not None and c["kind"] == "packet" and c["cc"] == "none"
    doc = result.to_dict()
    assert doc["network_counters"] == c
    json.dumps(doc)  # JSON-ready


def test_pfc_pauses_the_upstream_links_and_the_queue_passes_the_threshold(
    reference: tuple[RunResult, Any],
) -> None:
    result, net = reference
    c = result.network_counters
    engine: PacketEngine = net.engine
    leaves = {0: 8, 1: 8, 2: 8, 3: 8, 4: 9, 5: 9, 6: 9, 7: 9}
    pauses = {(ln["src"], ln["dst"]): ln["pause_ns"] for ln in c["links"]}
    # 4:1 oversubscribed uplinks: every NIC was held by its leaf, nothing else paused, no loss
    for host, leaf in leaves.items():
        assert pauses[(host, leaf)] > 0
    assert {k for k, v in pauses.items() if v > 0} == set(leaves.items())
    assert c["drops"] == 0 and c["pause_frames"] > 0
    # the hottest ports are the leaves' uplinks, whose queues passed the ingress PFC
    # threshold (reserve + dynamic threshold of an empty buffer) several times over
    hot = list(c["hot_port_queues"])[:2]
    assert set(hot) == {"8->10", "9->10"}
    threshold = engine.opts.reserve_bytes + engine._threshold(engine.graph.link(0, 8))
    for name in hot:
        assert max(c["hot_port_queues"][name]["queue_bytes"]) > 2 * threshold


def test_the_counters_add_up(reference: tuple[RunResult, Any]) -> None:
    result, net = reference
    c = result.network_counters
    engine = net.engine
    assert c["total_pause_ns"] == pytest.approx(sum(ln["pause_ns"] for ln in c["links"]))
    assert sum(ln["bytes"] for ln in c["links"]) == sum(engine.link_bytes)
    assert c["flow_count"] == 56 == net.messages_sent
    assert c["flow_bytes"] == 56 * SIZE // 8 == net.bytes_sent
    packets_per_flow = -(-(SIZE // 8) // engine.unit)
    assert c["packets_sent"] == 56 * packets_per_flow and c["packets_resent"] == 0
    for f in c["flows"]:  # each message's rate is its bytes over its time, below line rate
        assert f["gbps"] == pytest.approx(f["bytes"] * 8 / (f["end_ns"] - f["start_ns"]))
        assert 0 < f["gbps"] < 100
        assert f["end_ns"] <= result.makespan_s * 1e9 + 1e-6
    rates = [f["gbps"] for f in c["flows"]]
    assert c["flow_gbps"]["min"] == min(rates) and c["flow_gbps"]["max"] == max(rates)
    for s in c["hot_port_queues"].values():
        assert len(s["t_ns"]) == len(s["queue_bytes"]) and max(s["queue_bytes"]) <= s["peak_queue_bytes"]
        assert s["peak_queue_bytes"] == engine.peak_queue_bytes[s["link"]]


def test_the_counters_are_bounded(reference: tuple[RunResult, Any]) -> None:
    _, net = reference
    c = collect(net.engine, hot=2, max_points=3, max_flows=10)
    assert len(c["hot_port_queues"]) == 2 and len(c["flows"]) == 10 and c["flow_count"] == 56
    assert all(len(s["t_ns"]) <= 3 for s in c["hot_port_queues"].values())


def test_downsampling_keeps_the_peaks() -> None:
    t = [float(i) for i in range(10)]
    q = [0, 5, 1, 0, 9, 0, 0, 0, 2, 7]
    assert downsample(t, q, 4) == ([1.0, 4.0, 8.0, 9.0], [5, 9, 2, 7])  # runs of 3
    assert downsample(t, q, 10) == (t, q)


@pytest.mark.skipif(not native.available(), reason="the compiled core is not built (make builds it)")
def test_the_compiled_core_gives_the_same_counters(reference: tuple[RunResult, Any]) -> None:
    result, _ = reference
    fast, _ = _run("native")
    assert fast.makespan_s == result.makespan_s
    assert fast.network_counters == result.network_counters


def test_backends_without_counters_leave_the_field_empty() -> None:
    result = api.simulate(_platform("python"), collective_workload(8, "all_to_all", SIZE), backend="flow")
    assert result.network_counters is None and "network_counters" not in result.to_dict()
