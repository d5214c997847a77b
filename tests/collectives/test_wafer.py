"""Wafer collectives as flow programs (collectives/wafer.py) run on the in-network flow backend
(network/in_network.py, system/flow_program.py): bytes per NPU and times by hand."""

from __future__ import annotations

import pytest

from trainsim.collectives import wafer as W
from trainsim.engine import EventQueue
from trainsim.errors import ConfigError
from trainsim.network.in_network import InNetworkFlow
from trainsim.network.registry import backend_capabilities
from trainsim.system.flow_program import run_program
from trainsim.topology.wafer import paper_fred, paper_mesh, wafer_fabric

D = 1e9  # bytes


def _run(fabric, program):
    backend = InNetworkFlow(None, EventQueue(), graph=fabric)
    return run_program(backend, program), backend


def _npu_up_bytes(fabric, backend, npu):
    return backend.link_bytes[fabric.link(npu, fabric.l1[fabric.l1_of(npu)])]


def test_in_switch_all_reduce_moves_d_per_npu():
    fred = wafer_fabric(paper_fred("D"))
    t_in, b_in = _run(fred, W.in_network(fred, [list(range(20))], ["dp"], W.ALL_REDUCE, D))
    for npu in range(20):
        assert _npu_up_bytes(fred, b_in, npu) == pytest.approx(D)
    # at 3 TB/s per NPU: D / 3e12 s, plus the tree's depth in latencies
    assert t_in == pytest.approx(D / 3e3 + 4 * 20, rel=1e-6)
    # the endpoint ring moves 2 (N-1)/N D per NPU
    t_ring, b_ring = _run(fred, W.ring([list(range(20))], W.ALL_REDUCE, D))
    assert _npu_up_bytes(fred, b_ring, 7) == pytest.approx(2 * 19 / 20 * D)
    assert t_ring / t_in == pytest.approx(1.9, rel=1e-3)


def test_in_network_refused_without_switches():
    mesh = wafer_fabric(paper_mesh())
    with pytest.raises(ConfigError, match="in_network"):
        W.in_network(mesh, [[0, 1]], ["tp"], W.ALL_REDUCE, D)
    fred_c = wafer_fabric(paper_fred("C"))
    with pytest.raises(ConfigError, match="in_network"):
        W.in_network(fred_c, [[0, 1]], ["tp"], W.ALL_REDUCE, D)


def test_conflicting_groups_serialize_on_one_plane():
    from dataclasses import replace

    from trainsim.topology.wafer import fred_fabric

    one_plane = fred_fabric(replace(paper_fred("D"), planes=1, npu_l2_bw=750e9))
    groups, roles = [[0, 4], [1, 5]], ["dp", "tp"]
    prog = W.in_network(one_plane, groups, roles, W.ALL_REDUCE, D)
    assert len(prog.steps) == 2 and prog.steps[1].after == (0,)  # two rounds
    t_serial, _ = _run(one_plane, prog)
    two = fred_fabric(replace(paper_fred("D"), planes=2, npu_l2_bw=750e9))
    prog2 = W.in_network(two, groups, roles, W.ALL_REDUCE, D)
    assert len(prog2.steps) == 1  # re-routed: one plane each, at once
    t_parallel, _ = _run(two, prog2)
    # each tree is bound by its L1's channel to the plane (4 x 750 / planes GB/s)
    assert t_serial == pytest.approx(2 * D / 3e3, rel=1e-3)
    assert t_parallel == pytest.approx(D / 1.5e3, rel=1e-3)


def test_mesh_ring_follows_xy_routes():
    mesh = wafer_fabric(paper_mesh())
    t, b = _run(mesh, W.ring([[0, 4]], W.ALL_REDUCE, D))
    # 0 -> 4 east along row 0 and 4 -> 0 back west: each link carries one flow of D bytes
    for x in range(4):
        assert b.link_bytes[mesh.link(x, x + 1)] == pytest.approx(D)
        assert b.link_bytes[mesh.link(x + 1, x)] == pytest.approx(D)
    assert b.link_bytes[mesh.link(0, 5)] == 0
    assert t == pytest.approx(D / 750 + 4 * 20, rel=1e-6)


def test_hierarchical_pipelines_chunks():
    mesh = wafer_fabric(paper_mesh())
    rows = [[y * 5 + x for x in range(5)] for y in range(4)]
    cols = [[y * 5 + x for y in range(4)] for x in range(5)]
    prog = W.hierarchical([rows, cols], W.ALL_REDUCE, D, orders=((0, 1), (1, 0)), chunks=2)
    assert len(prog.steps) == 2 * 2 * 4
    # per NPU: 2 (5-1)/5 of D over rows and 2 (4-1)/4 of D / 5 over columns
    assert prog.sent_per_npu == pytest.approx(2 * 0.8 * D + 2 * 0.75 * D / 5)
    t, _ = _run(mesh, prog)
    assert prog.sent_per_npu / t > 1.2 * 750  # both dimensions busy at once


def test_tree_needs_an_in_network_backend():
    from trainsim.network.flow import FlowNetwork

    fred = wafer_fabric(paper_fred("D"))
    backend = FlowNetwork(None, EventQueue(), graph=fred)
    with pytest.raises(ConfigError, match="in_network"):
        run_program(backend, W.in_network(fred, [[0, 1]], ["tp"], W.ALL_REDUCE, D))
    assert backend_capabilities("in_network_flow").in_network


def test_stream_in_multicasts_on_fred_d():
    fred = wafer_fabric(paper_fred("D"))
    t, b = _run(fred, W.stream_in(fred, [(list(range(20)), 18e9)]))
    # each controller's 1 GB stripe leaves it once, at 128 GB/s
    assert b.link_bytes[fred.link(fred.io[0], fred.io_attach[0])] == pytest.approx(1e9)
    assert t == pytest.approx(1e9 / 128 + 4 * 20, rel=1e-3)
