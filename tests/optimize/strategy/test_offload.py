"""Optimizer-state offload to the platform's expanded-memory tier: the generator's memory and
graph, the platform's tier capacity, the estimate against simulation, the search."""

import math

import pytest
import yaml

from trainsim.compute import OperatorTimer
from trainsim.config.platform import load_platform
from trainsim.enums import NodeType
from trainsim.errors import InfeasibleError
from trainsim.optimize.strategy.estimate import StepEstimator
from trainsim.optimize.strategy.search import SearchInputs, search
from trainsim.optimize.strategy.space import SearchSpace
from trainsim.sweep.runner import run_items
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.generate.memory import check_offload
from trainsim.workload.models import get_model


def tiered(tmp_path, mode="per_npu", capacity_gb=None):
    dims = [{"topology": "Switch", "size": 8, "bandwidth_gbps": 300, "latency_ns": 700},
            {"topology": "Switch", "size": 2, "bandwidth_gbps": 25, "latency_ns": 2000}]  # fmt: skip
    memory = {"mode": mode, "latency_ns": 250, "bandwidth_gbps": 64, "npus_per_node": 8, "nodes": 2}
    if capacity_gb is not None:
        memory["capacity_gb"] = capacity_gb
    path = tmp_path / f"tier_{mode}.yaml"
    path.write_text(
        yaml.safe_dump(
            {"network": {"dims": dims}, "system": {"local_mem_bw_gbps": 2039}, "memory": memory}
        )
    )
    return str(path)


PAR = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=64, zero=1, offload_optimizer=True)


def test_offloaded_states_leave_hbm_and_become_loads_and_stores(tiny_model):
    spec = get_model(tiny_model)
    plain = generate(spec, Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=64, zero=1))
    off = generate(spec, PAR)
    for a, b in zip(plain.memory, off.memory, strict=True):
        assert b.optimizer == 0 and b.offloaded == a.optimizer > 0
        assert b.total == pytest.approx(a.total - a.optimizer)
    graph = off.graphs[0]
    loads = [i for i in range(len(graph)) if graph.types[i] == NodeType.MEM_LOAD_NODE]
    stores = [i for i in range(len(graph)) if graph.types[i] == NodeType.MEM_STORE_NODE]
    assert len(loads) == len(stores) == 1
    assert (
        graph.tensor_size[loads[0]] == graph.tensor_size[stores[0]] == int(off.memory[0].offloaded)
    )


def test_the_tier_capacity_from_the_platform_file(tmp_path):
    assert load_platform(tiered(tmp_path, "per_node", 512)).memory.capacity_per_npu(16) == 64e9
    assert load_platform(tiered(tmp_path, "pool", 512)).memory.capacity_per_npu(16) == 32e9
    assert load_platform(tiered(tmp_path, "per_npu")).memory.capacity == math.inf


def test_offload_beyond_the_tier_is_infeasible_with_the_numbers(tiny_model):
    memory = generate(get_model(tiny_model), PAR).memory
    with pytest.raises(
        InfeasibleError,
        match=r"offloads 0\.01 GB of optimizer states per NPU but the expanded-memory tier holds 0\.00 GB per NPU",
    ):
        check_offload(memory, 1e6)
    check_offload(memory, 1e9)


@pytest.mark.parametrize("mode", ["per_npu", "per_node", "pool"])
def test_offload_estimate_within_5_percent_of_simulation(tiny_model, tmp_path, mode):
    spec = get_model(tiny_model)
    timer = OperatorTimer("A100")
    platform = load_platform(tiered(tmp_path, mode))
    for par in (
        PAR,
        Parallelism(tp=1, pp=1, dp=16, micro_batch=1, global_batch=64, offload_optimizer=True),
    ):
        sim = simulate_generated(
            platform, generate(spec, par, timer, network_sizes=platform.network.sizes)
        )
        assert StepEstimator(spec, timer, platform).estimate(par).step_s == pytest.approx(
            sim.makespan_s, rel=0.05
        )


def test_search_includes_offload_when_the_platform_has_a_tier(tiny_model, tmp_path, dgx16):
    space = SearchSpace(
        tp=(2,),
        pp=(2,),
        micro_batch=(1,),
        zero=(1,),
        recompute=("full",),
        schedules=("1f1b",),
        sp=(False,),
        offload_params=(False,),  # this test is about the optimizer's states (test_offload_more.py: the rest)
        offload_activations=(False,),
    )
    without = search(SearchInputs(tiny_model, 16, 64, dgx16), space=space, top_k=0)
    assert [r.params.get("offload_optimizer", False) for r in without.rows] == [False]
    small = search(
        SearchInputs(tiny_model, 16, 64, tiered(tmp_path, "per_node", 0.01)),
        space=space,
        top_k=2,
        run=run_items,
        max_every_rank=16,
    )
    assert sorted(r.params.get("offload_optimizer", False) for r in small.rows) == [False]
    assert (
        small.rejections[
            "does not fit: offloaded optimizer states exceed the expanded-memory tier"
        ].count
        == 1
    )
    big = search(
        SearchInputs(tiny_model, 16, 64, tiered(tmp_path, "per_node", 512)),
        space=space,
        top_k=2,
        run=run_items,
        max_every_rank=16,
    )
    assert sorted(r.params.get("offload_optimizer", False) for r in big.rows) == [False, True]
    for row in big.simulated:
        assert abs(row.error) < 0.05


def test_cli_shows_the_offloaded_states(tiny_model, tmp_path, capsys):
    from trainsim.cli.main import EXIT_USER_ERROR, main

    args = ["optimize", "strategy", tiny_model, "--gpus", "16", "--global-batch", "64", "--tp", "2", "--pp", "2",
            "--micro-batch", "1", "--zero", "1", "--recompute", "full", "--schedules", "1f1b", "--no-sp", "--top-k", "0"]  # fmt: skip
    assert main([*args, "--platform", tiered(tmp_path, "per_npu", 1)]) == 0
    assert "optimizer 0.0 GB" in capsys.readouterr().out
    plain = tmp_path / "plain.yaml"
    plain.write_text(
        yaml.safe_dump(
            {
                "network": {
                    "dims": [
                        {"topology": "Switch", "size": 16, "bandwidth_gbps": 300, "latency_ns": 700}
                    ]
                }
            }
        )
    )
    assert main([*args, "--platform", str(plain), "--offload"]) == EXIT_USER_ERROR
    assert "offloading needs an expanded-memory tier" in capsys.readouterr().err


def test_generate_cli_offloads_and_refuses_a_small_tier(tiny_model, tmp_path, capsys):
    from trainsim.cli.main import EXIT_INFEASIBLE, main

    args = [
        "generate",
        tiny_model,
        "--tp",
        "2",
        "--pp",
        "2",
        "--dp",
        "4",
        "--global-batch",
        "64",
        "--zero",
        "1",
        "--offload-optimizer",
    ]
    assert main([*args, "--platform", tiered(tmp_path, "per_node", 0.01)]) == EXIT_INFEASIBLE
    assert "offloads 0.01 GB of optimizer states per NPU" in capsys.readouterr().err
    assert main([*args, "--platform", tiered(tmp_path, "per_node", 512)]) == 0
    assert "queue across replicas" in capsys.readouterr().out  # why every rank ran: the node's tier
