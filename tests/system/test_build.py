"""The models a run is handed (``system.build``): compute and memory behind their seams, built
from the platform in one place, and an executor that takes whatever model it is handed."""

from __future__ import annotations

import math

import pytest

from trainsim.compute import ReplayCompute, RooflineCompute, roofline_time_ns
from trainsim.config.types import RemoteMemorySpec, SystemSpec
from trainsim.engine import EventQueue
from trainsim.enums import NodeType as T
from trainsim.memory import MemoryTier, RemoteMemory
from trainsim.network import AnalyticalNetwork
from trainsim.system.build import build_compute, build_memory
from trainsim.system.executor import Executor
from trainsim.workload import GraphBuilder

from .conftest import ring_platform


def _graph():
    b = GraphBuilder()
    b.add(1, T.COMP_NODE, "gemm", duration_s=2.5e-6, num_ops=1e9, tensor_size=10**8)
    b.add(2, T.COMP_NODE, "host", duration_s=0.0, is_cpu_op=True, data_deps=[1])
    b.add(3, T.COMP_NODE, "late", duration_s=1.0000004e-6, data_deps=[2])
    return b.build()


@pytest.mark.parametrize("compat", [True, False])
def test_replay_compute_is_the_recorded_duration(compat):
    model = build_compute(ring_platform(2), compat)
    assert isinstance(model, ReplayCompute) and not isinstance(model, RooflineCompute)
    g = _graph()
    if compat:  # whole ns, and a zero duration takes 1 ns (ASTRA-sim)
        assert [model.node_ns(g, p, p == 1) for p in range(3)] == [2500.0, 1.0, 1000.0]
    else:
        assert [model.node_ns(g, p, p == 1) for p in range(3)] == [
            2.5e-6 * 1e9,
            0.0,
            1.0000004e-6 * 1e9,
        ]


@pytest.mark.parametrize("compat", [True, False])
def test_roofline_compute_for_accelerator_nodes_replay_for_cpu_nodes(compat):
    system = SystemSpec(roofline_enabled=True, peak_perf=100e12, local_mem_bw=1000e9)
    model = build_compute(ring_platform(2, system=system), compat)
    assert isinstance(model, RooflineCompute)
    g = _graph()
    assert model.node_ns(g, 0, False) == roofline_time_ns(
        1e9, 1e8, 100e12, 1000e9, compat_astra=compat
    )
    assert model.node_ns(g, 1, True) == (1.0 if compat else 0.0)


@pytest.mark.parametrize(("compat", "bandwidth"), [(True, 25e9), (False, 25.6e9)])
def test_remote_memory_is_a_tier(compat, bandwidth):
    spec = RemoteMemorySpec(mode="MEMORY_POOL", latency_ns=100, bandwidth=25.6e9)
    memory = build_memory(ring_platform(2, memory=spec), EventQueue(), compat)
    assert isinstance(memory, RemoteMemory) and memory.enabled
    assert memory.tiers == (MemoryTier("MEMORY_POOL", 100, bandwidth, math.inf),)
    none = build_memory(ring_platform(2), EventQueue(), compat)
    assert not none.enabled and none.tiers == ()


class _Doubled:
    """A compute model of the test's own: twice the recorded duration."""

    def node_ns(self, graph, pos, cpu):
        return self.replay_ns(float(graph.duration_s[pos]))

    def replay_ns(self, duration_s):
        return 2e9 * duration_s


def test_executor_runs_the_models_it_is_handed():
    platform = ring_platform(2)
    g = _graph()
    queue = EventQueue()
    network = AnalyticalNetwork(platform.network, queue)
    executor = Executor(
        platform,
        [g, g],
        network,
        queue,
        memory=build_memory(platform, queue, False),
        compute=_Doubled(),
    )
    result = executor.run()
    assert result.ranks[0].compute_s == pytest.approx(2 * (2.5e-6 + 1.0000004e-6))
    assert result.ranks[0].cpu_s == 0.0
