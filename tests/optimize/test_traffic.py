"""LIBRA's traffic model: bytes per dimension per collective, text workloads, Chakra graphs."""

import numpy as np
import pytest

from tests.optimize.conftest import libra_case, libra_path
from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError, TraceError
from trainsim.optimize.libra_inputs import (
    Communicator,
    LibraNetwork,
    load_communicator,
    load_network,
)
from trainsim.optimize.traffic import (
    WorkloadTraffic,
    dim_bytes,
    group_sizes,
    phase_comm,
    traffic_from_graph,
    traffic_from_text,
)
from trainsim.workload.astra_text import parse_text_workload
from trainsim.workload.graph import GraphBuilder

S = 1_000_000.0


def test_all_reduce_ascends_and_shrinks():
    got = dim_bytes(CommType.ALL_REDUCE, S, (16, 8, 32))
    want = [2 * S * 15 / 16, 2 * (S / 16) * 7 / 8, 2 * (S / 128) * 31 / 32]
    np.testing.assert_allclose(got, want)


def test_reduce_scatter_skips_unused_dimensions():
    got = dim_bytes(CommType.REDUCE_SCATTER, S, (4, None, 8))
    np.testing.assert_allclose(got, [S * 3 / 4, 0.0, (S / 4) * 7 / 8])


def test_all_gather_descends_and_grows():
    got = dim_bytes(CommType.ALL_GATHER, S, (16, 8, None))
    np.testing.assert_allclose(got, [8 * S * 15, S * 7, 0.0])


def test_all_to_all_does_not_resize():
    got = dim_bytes(CommType.ALL_TO_ALL, S, (4, 8))
    np.testing.assert_allclose(got, [S * 3 / 4, S * 7 / 8])


def test_all_reduce_equals_reduce_scatter_plus_all_gather():
    groups = (4, 8, 2)
    rs = dim_bytes(CommType.REDUCE_SCATTER, S, groups)
    ag = dim_bytes(CommType.ALL_GATHER, S / 64, groups)
    np.testing.assert_allclose(dim_bytes(CommType.ALL_REDUCE, S, groups), rs + ag)


def test_unmodelled_collective_is_refused():
    with pytest.raises(ValueError, match="BROADCAST"):
        dim_bytes(CommType.BROADCAST, S, (4,))


def test_libra_file_without_header():
    """LIBRA's layer files have no header and no count: the shared parser reads them as mode None."""
    wl = parse_text_workload(libra_path("workload", "ResNet_50.txt"))
    assert wl.mode is None and len(wl.layers) == 54 and wl.layers[0].name == "conv1"
    assert phase_comm(wl.layers[0], 2) == CommType.ALL_REDUCE and wl.layers[0].wg.nbytes == 51005824


def test_astra_text_with_header_and_parallelism_column():
    path = libra_path("..", "astra-sim-1.0-text", "sample_per_layer_parallel_HybridCustomized.txt")
    wl = parse_text_workload(path)
    assert len(wl.layers) == 6
    assert [phase_comm(wl.layers[0], k) for k in range(3)] == [CommType.ALL_GATHER, CommType.REDUCE_SCATTER, CommType.ALL_REDUCE]


def test_text_errors_name_the_line(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("conv1 -1 10 NONE 0 10 BOGUS 5 10 NONE 0 0\n")
    with pytest.raises(TraceError, match="line 1.*BOGUS"):
        traffic_from_text(bad, Communicator.full(LibraNetwork(("Ring",), (4,))), LibraNetwork(("Ring",), (4,)))
    bad.write_text("DATA\n3\nconv1 -1 10 NONE 0 10 NONE 0 10 NONE 0 0\n")
    with pytest.raises(TraceError, match="3"):
        parse_text_workload(bad)
    bad.write_text("conv1 -1 10 ALLREDUCEALLTOALL 8 10 NONE 0 10 NONE 0 0\n")
    with pytest.raises(ConfigError, match="ALLREDUCEALLTOALL"):
        traffic_from_text(bad, Communicator.full(LibraNetwork(("Ring",), (4,))), LibraNetwork(("Ring",), (4,)))


def test_resnet_traffic_totals():
    net, traffic = libra_case("ResNet_50", "ResNet_50_3d.yml", "3d")
    assert traffic.compute_s == pytest.approx(1_095_314e-9)
    assert traffic.bytes_per_dim.shape == (1, 3)  # one all-reduce of 51,005,824 B
    np.testing.assert_allclose(traffic.bytes_per_dim[0], dim_bytes(CommType.ALL_REDUCE, 51005824, (16, 8, 32)))


def test_pipelined_is_max_and_unpipelined_is_sum():
    traffic = WorkloadTraffic("t", 1e-3, np.array([[2e9, 1e9], [0.0, 3e9]]))
    bw = np.array([2.0, 1.0])  # GB/s
    assert traffic.time_s(bw) == pytest.approx(1e-3 + max(1.0, 1.0) + 3.0)
    traffic.pipelined = False
    assert traffic.time_s(bw) == pytest.approx(1e-3 + (1.0 + 1.0) + 3.0)
    assert traffic.time_s(np.array([2.0, 0.0])) == np.inf


def test_msft_uses_each_phase_communicator():
    net, traffic = libra_case("MSFT_1T", "MSFT_1T_3d.yml", "3d")
    loaded = traffic.bytes_on_dims() > 0
    assert loaded.all()
    # forward and input-gradient collectives stay on dims 0-1 (TP-128), weight gradients on dim 2 (DP-32)
    tp_rows = traffic.bytes_per_dim[:, 2] == 0
    assert tp_rows.sum() > 0 and (traffic.bytes_per_dim[~tp_rows][:, :2] == 0).all()


def test_communicator_checks(tmp_path):
    net = load_network(libra_path("network", "3d_network.yml"))
    bad = tmp_path / "c.yml"
    bad.write_text("Forward: [16, 8]\nInputGrad: [16, 8, -1]\nWeightGrad: [-1, -1, 32]\n")
    with pytest.raises(ConfigError, match="Forward.*2 group sizes"):
        load_communicator(bad, net)
    bad.write_text("Forward: [16, 9, -1]\nInputGrad: [16, 8, -1]\nWeightGrad: [-1, -1, 32]\n")
    with pytest.raises(ConfigError, match=r"Forward\[1\]"):
        load_communicator(bad, net)


def test_network_loader_accepts_astra_shape(tmp_path):
    path = tmp_path / "n.yml"
    path.write_text("topology: [Ring, Switch]\nnpus_count: [4, 8]\nbandwidth: [50, 25]\nlatency: [500, 500]\n")
    net = load_network(path)
    assert net.kinds == ("Ring", "Switch") and net.sizes == (4, 8) and net.cost_dims is None
    path.write_text("Topology: [Ring, Torus]\nNpusCount: [4, 8]\nCostDimension: [A, B]\n")
    with pytest.raises(ConfigError, match=r"Topology\[1\].*Torus"):
        load_network(path)


def _graph(rank=0):
    b = GraphBuilder(source="g.et", rank=rank)
    b.add(0, NodeType.COMP_NODE, "fwd", duration_s=2e-3)
    b.add(1, NodeType.COMM_COLL_NODE, "ar", comm_type=CommType.ALL_REDUCE, comm_size=8_000_000,
          involved_dim=(True, False), data_deps=[0])
    b.add(2, NodeType.COMM_COLL_NODE, "ag", comm_type=CommType.ALL_GATHER, comm_size=1_000_000, data_deps=[1])
    b.add(3, NodeType.COMM_COLL_NODE, "grp", comm_type=CommType.REDUCE_SCATTER, comm_size=4_000_000,
          pg_name="7", data_deps=[2])
    b.add(4, NodeType.COMM_SEND_NODE, "send", comm_size=5_000, comm_dst=rank + 4, comm_tag=1, data_deps=[3])
    return b.build()


def test_chakra_graph_traffic():
    net = LibraNetwork(("Ring", "Switch"), (4, 8))
    groups = {"7": [0, 4, 8, 12]}  # coordinate 0 on dim 0, four coordinates on dim 1
    t = traffic_from_graph(_graph(), net, comm_groups=groups)
    assert t.compute_s == pytest.approx(2e-3)
    np.testing.assert_allclose(t.bytes_per_dim[0], dim_bytes(CommType.ALL_REDUCE, 8e6, (4, None)))
    np.testing.assert_allclose(t.bytes_per_dim[1], dim_bytes(CommType.ALL_GATHER, 1e6, (4, 8)))
    np.testing.assert_allclose(t.bytes_per_dim[2], dim_bytes(CommType.REDUCE_SCATTER, 4e6, (None, 4)))
    np.testing.assert_allclose(t.bytes_per_dim[3], [0.0, 5000.0])  # rank 0 -> 4 differ on dim 1


def test_chakra_group_without_mapping_is_an_error():
    net = LibraNetwork(("Ring", "Switch"), (4, 8))
    with pytest.raises(TraceError, match="group '7'"):
        traffic_from_graph(_graph(), net)


def test_group_must_be_a_sub_grid():
    assert group_sizes([0, 1, 2, 3], (4, 8)) == (4, None)
    with pytest.raises(ConfigError, match="sub-grid"):
        group_sizes([0, 1, 4], (4, 8), name="x")


def test_text_and_full_communicator_agree_for_data_parallel():
    net, traffic = libra_case("ResNet_50", "ResNet_50_3d.yml", "3d")
    full = traffic_from_text(libra_path("workload", "ResNet_50.txt"), Communicator.full(net), net)
    # DP-4096 uses no forward or input-gradient collectives, so the full communicator matches
    np.testing.assert_allclose(full.bytes_per_dim, traffic.bytes_per_dim)
