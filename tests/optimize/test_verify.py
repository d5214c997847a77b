"""Verification by simulation: the network written from bandwidths, LIBRA's loop as graphs, and
the simulated speed-up beside the predicted one (needs the collective runtime)."""

from dataclasses import replace

import numpy as np
import pytest
import yaml

from tests.optimize.conftest import libra_path
from trainsim.enums import NodeType
from trainsim.errors import ConfigError, TrainsimError
from trainsim.optimize.bandwidth import optimize_bandwidth
from trainsim.optimize.libra_inputs import (
    Communicator,
    LibraNetwork,
    load_communicator,
    load_network,
)
from trainsim.optimize.traffic import traffic_from_text
from trainsim.optimize.verify import (
    has_collective_runtime,
    libra_graphs,
    simulate_allocation,
    simulation_network,
    verify_allocation,
    write_astra_network,
)
from trainsim.units import ASTRA_GBPS
from trainsim.workload.astra_text import Phase, parse_text_workload

SMALL = LibraNetwork(("Ring", "FullyConnected", "Switch"), (4, 4, 4))


def test_network_gives_each_npu_its_bandwidth(tmp_path):
    net = load_network(libra_path("network", "3d_network.yml"))
    spec = simulation_network(net, [400.0, 70.0, 30.0], latency_ns=5.0)
    assert [d.kind for d in spec.dims] == ["Ring", "FullyConnected", "Switch"]
    np.testing.assert_allclose([d.bandwidth for d in spec.dims], [400e9, 70e9 / 7, 30e9])
    path = tmp_path / "net.yml"
    write_astra_network(path, spec)
    data = yaml.safe_load(path.read_text())
    assert data["topology"] == ["Ring", "FullyConnected", "Switch"] and data["npus_count"] == [16, 8, 32]
    np.testing.assert_allclose(np.array(data["bandwidth"]) * ASTRA_GBPS, [400e9, 10e9, 30e9])
    assert data["latency"] == [5.0, 5.0, 5.0]
    with pytest.raises(ConfigError, match="B1"):
        simulation_network(net, [400.0, 0.0, 30.0])


def test_graphs_follow_libra_no_overlap_loop():
    net = load_network(libra_path("network", "3d_network.yml"))
    comm = load_communicator(libra_path("communicator", "MSFT_1T_3d.yml"), net)
    layers = parse_text_workload(libra_path("workload", "MSFT_1T.txt")).layers
    graphs = libra_graphs(layers, comm, net)
    assert len(graphs) == 4096 and graphs[5].rank == 5 and graphs[5].ids is graphs[0].ids
    g = graphs[0]
    names = g.names
    assert names[:2] == ["Q1.0.compute", "K1.0.compute"]  # Q1's forward has no collective
    assert names[names.index("concat1.0.compute") + 1] == "concat1.0.ALL_REDUCE"
    first_back = next(p for p, n in enumerate(names) if ".0." not in n)
    assert names[first_back : first_back + 2] == ["layerNorm2.1.compute", "layerNorm2.2.compute"]
    assert names[-2:] == ["Q1.2.compute", "Q1.2.ALL_REDUCE"]  # the first layer's weight gradient ends the step
    colls = [p for p in range(len(g)) if g.types[p] == NodeType.COMM_COLL_NODE]
    # forward and input-gradient collectives on dims 0-1, weight gradients on dim 2
    for p in colls:
        phase = names[p].split(".")[1]
        assert g.involved_dim[p] == ((True, True, False) if phase in "01" else (False, False, True))
    # a chain: every node depends on the one before it
    for p in range(1, len(g)):
        assert g.deps_of(p) == [int(g.ids[p - 1])]
    total = sum(float(g.duration_s[p]) for p in range(len(g)) if g.types[p] == NodeType.COMP_NODE)
    assert total == pytest.approx(traffic_from_text(layers, comm, net).compute_s)


def test_partial_groups_cannot_be_simulated():
    comm = Communicator((2, None, None), (None,) * 3, (None,) * 3)
    with pytest.raises(ConfigError, match="not the whole dimension"):
        libra_graphs(parse_text_workload(libra_path("workload", "ResNet_50.txt")).layers, comm, SMALL)


def test_compute_only_step_simulates_to_the_model_time():
    layers = [replace(la, fwd=Phase(la.fwd.cycles, "NONE", 0), ig=Phase(la.ig.cycles, "NONE", 0), wg=Phase(la.wg.cycles, "NONE", 0))
              for la in parse_text_workload(libra_path("workload", "ResNet_50.txt")).layers]
    net = LibraNetwork(("Ring", "FullyConnected", "Switch"), (2, 2, 2))
    comm = Communicator.full(net)
    model = traffic_from_text(layers, comm, net).time_s([100.0, 100.0, 100.0])
    sim = simulate_allocation(net, [100.0, 100.0, 100.0], libra_graphs(layers, comm, net))
    assert sim == pytest.approx(model, rel=1e-12) and model == pytest.approx(1_095_314e-9)


@pytest.mark.skipif(has_collective_runtime(), reason="only meaningful without the collective runtime")
def test_missing_runtime_is_a_clear_error():
    layers = parse_text_workload(libra_path("workload", "ResNet_50.txt")).layers
    comm = Communicator.full(SMALL)
    with pytest.raises(TrainsimError, match="collective runtime"):
        simulate_allocation(SMALL, [100.0] * 3, libra_graphs(layers, comm, SMALL))


def _verify(net, workload, comm, **kw):
    layers = parse_text_workload(libra_path("workload", f"{workload}.txt")).layers
    traffic = traffic_from_text(layers, comm, net)
    res = optimize_bandwidth(net, [traffic], ["sum == 500"])
    return traffic, res, verify_allocation(net, layers, comm, res.bandwidths_gbps, res.equal_bandwidths_gbps, **kw)


@pytest.mark.parametrize("workload", ["ResNet_50", "MSFT_1T"])
def test_simulated_speedup_matches_the_model(workload):
    pytest.importorskip("trainsim.system.collective_runtime", reason="simulating collectives needs the collective runtime")
    comm = Communicator.full(SMALL) if workload == "ResNet_50" else Communicator((4, 4, None), (4, 4, None), (None, None, 4))
    _, res, check = _verify(SMALL, workload, comm)
    assert check.model_speedup == pytest.approx(res.speedup)
    assert abs(check.speedup_error) < 0.10
    assert check.sim_speedup > 1.0


def test_gap_is_reductions_and_pipeline_fill():
    """Without reduction cost the equal split simulates to the model; the optimum is slower by
    at most the fill and drain of the chunk pipeline, (sum - max) / chunks per collective."""
    pytest.importorskip("trainsim.system.collective_runtime", reason="simulating collectives needs the collective runtime")
    chunks = 64
    traffic, res, check = _verify(SMALL, "ResNet_50", Communicator.full(SMALL), chunks=chunks, reduction_bandwidth=1e18)
    assert check.sim_baseline_s == pytest.approx(check.model_baseline_s, rel=1e-5)
    dim_t = traffic.dim_times_s(res.bandwidths_gbps)
    fill = float(np.sum(dim_t.sum(axis=1) - dim_t.max(axis=1))) / chunks
    assert check.model_time_s <= check.sim_time_s <= check.model_time_s + 1.05 * fill


@pytest.mark.slow
def test_full_scale_resnet_speedup():
    pytest.importorskip("trainsim.system.collective_runtime", reason="simulating collectives needs the collective runtime")
    net = load_network(libra_path("network", "3d_network.yml"))
    comm = load_communicator(libra_path("communicator", "ResNet_50_3d.yml"), net)
    _, res, check = _verify(net, "ResNet_50", comm)
    assert abs(check.speedup_error) < 0.10
