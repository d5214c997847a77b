"""Collectives priced by NCCL's choice in a simulation (system.collective_tuner: nccl,
system/nccl_pricing.py): the runtime's result is the tuner's price, members wait for the last
issuer, groups and the representative runs agree with rank by rank, and compat astra ignores
the tuner (ASTRA-sim's numbers unchanged)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from trainsim.config.platform import load_platform, parse_platform, platform_to_dict
from trainsim.config.types import DimSpec, NcclSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError
from trainsim.system.api import simulate
from trainsim.system.collective_bench import collective_sweep
from trainsim.system.nccl_pricing import NcclPricing
from trainsim.workload.graph import GraphBuilder
from trainsim.workload.micro import collective_workload, data_parallel_workload

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "nccl"
GB = 1e9


def _platform(dims, **nccl) -> Platform:
    system = SystemSpec(collective_tuner="nccl", nccl=NcclSpec(**nccl))
    return Platform(network=NetworkSpec(tuple(dims)), system=system)


TWO_NODES = _platform([DimSpec("Switch", 8, 300 * GB, 700.0), DimSpec("Switch", 2, 25 * GB, 1000.0)])


def test_run_time_is_the_tuners_price():
    size = 64 << 20
    result = simulate(TWO_NODES, collective_workload(16, "all_reduce", size))
    priced = NcclPricing(TWO_NODES).price(int(CommType.ALL_REDUCE), size, tuple(range(16)))
    assert result.makespan_s == pytest.approx(priced.duration_ns * 1e-9)
    rec = result.collectives[0]
    assert rec.algorithms == [f"nccl:{priced.choice.name}"]
    assert rec.dim_bytes[1] > 0  # it crosses the network


def test_protocol_switches_on_the_8_gpu_example():
    plat = load_platform(EXAMPLES / "dgx_a100_8gpu.yaml")
    sizes = [1 << k for k in range(3, 34, 2)]
    points = collective_sweep(plat, "all_reduce", sizes, backend="congestion_unaware")
    protos = [p.algorithm.split("/")[-1] for p in points]
    assert protos[0] == "LL" and "LL128" in protos and protos[-1] == "Simple"
    assert protos.index("LL128") > protos.index("LL") and protos.index("Simple") > protos.index("LL128")
    busbw = [p.busbw for p in points]
    assert all(b2 >= b1 for b1, b2 in zip(busbw, busbw[1:], strict=False))
    assert busbw[-1] < 300 * GB and busbw[-1] / busbw[-2] < 1.01


def test_nvls_example_is_limited_by_the_switch():
    plat = load_platform(EXAMPLES / "dgx_h100_8gpu.yaml")
    (point,) = collective_sweep(plat, "all_reduce", [8 << 30], backend="congestion_unaware")
    assert point.algorithm == "nccl:nvls/Simple"
    cap = plat.system.nccl.nvls_reduce_bw
    assert cap is not None and point.algbw == pytest.approx(cap, rel=0.01)
    free = replace(plat, system=replace(plat.system, nccl=replace(plat.system.nccl, nvls_reduce_bw=None)))
    (faster,) = collective_sweep(free, "all_reduce", [8 << 30], backend="congestion_unaware")
    assert faster.algbw > point.algbw * 1.05


def test_members_wait_for_the_last_issuer():
    late_ns = 50_000.0
    graphs = []
    for rank in range(16):
        b = GraphBuilder(source="<late>")
        b.add(0, NodeType.COMP_NODE, "c", duration_s=(late_ns if rank == 5 else 1000.0) * 1e-9)
        b.add(1, NodeType.COMM_COLL_NODE, "ar", comm_type=int(CommType.ALL_REDUCE), comm_size=1 << 20, data_deps=[0])
        graphs.append(b.build())
    result = simulate(TWO_NODES, graphs)
    priced = NcclPricing(TWO_NODES).price(int(CommType.ALL_REDUCE), 1 << 20, tuple(range(16)))
    ends = [r.end_ns for r in result.collectives]
    assert len(ends) == 16 and ends == pytest.approx([late_ns + priced.duration_ns] * 16)
    starts = sorted(r.start_ns for r in result.collectives)
    assert starts[0] == pytest.approx(1000.0) and starts[-1] == pytest.approx(late_ns)


def test_group_inside_one_node_is_one_node():
    pricing = NcclPricing(TWO_NODES)
    inside = pricing.tuner(tuple(range(8)))
    across = pricing.tuner((0, 8))
    assert (inside.fabric.ranks, inside.fabric.nodes) == (8, 1)
    assert (across.fabric.ranks, across.fabric.nodes) == (2, 2)
    graphs = []
    for rank in range(16):
        b = GraphBuilder(source="<groups>")
        b.add(0, NodeType.COMM_COLL_NODE, "ar", comm_type=int(CommType.ALL_REDUCE), comm_size=1 << 24, pg_name=f"g{rank // 8}")
        graphs.append(b.build())
    plat = replace(TWO_NODES, comm_groups={"g0": tuple(range(8)), "g1": tuple(range(8, 16))})
    result = simulate(plat, graphs)
    priced = pricing.price(int(CommType.ALL_REDUCE), 1 << 24, tuple(range(8)))
    assert result.makespan_s == pytest.approx(priced.duration_ns * 1e-9)


def test_representative_run_equals_rank_by_rank():
    graphs = data_parallel_workload(16, 3, 8 << 20)
    fast = simulate(TWO_NODES, graphs)
    slow = simulate(TWO_NODES, graphs, symmetry=False)
    assert fast.info["symmetry"] == "representative"
    assert fast.makespan_s == pytest.approx(slow.makespan_s, rel=1e-12)
    assert fast.makespan_s > 0


def test_all_to_all_runs_the_listed_phases():
    plat = replace(TWO_NODES, system=replace(TWO_NODES.system, implementations=replace(
        TWO_NODES.system.implementations, all_to_all=("direct", "direct"))))
    result = simulate(plat, collective_workload(16, "all_to_all", 1 << 20))
    assert not result.collectives[0].algorithms[0].startswith("nccl:")


def test_compat_astra_ignores_the_tuner():
    base = Platform(network=TWO_NODES.network, system=replace(TWO_NODES.system, collective_tuner=None))
    work = collective_workload(16, "all_reduce", 1 << 22)
    tuned = simulate(TWO_NODES, work, compat="astra")
    plain = simulate(base, work, compat="astra")
    assert tuned.makespan_s == plain.makespan_s
    assert simulate(TWO_NODES, work).makespan_s != tuned.makespan_s


def test_platform_file_section_round_trips_and_refuses_unknown_keys():
    plat = load_platform(EXAMPLES / "dgx_h100_8gpu.yaml")
    again = parse_platform(platform_to_dict(plat), "<dump>")
    assert again.system.nccl == plat.system.nccl and again.system.collective_tuner == "nccl"
    data = platform_to_dict(plat)
    data["system"]["nccl"]["chanels"] = 8
    with pytest.raises(ConfigError, match="chanels"):
        parse_platform(data, "<bad>")
    data = platform_to_dict(plat)
    data["system"]["nccl"]["protocols"] = ["LL256"]
    with pytest.raises(ConfigError):
        parse_platform(data, "<bad>")
