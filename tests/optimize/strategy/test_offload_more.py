"""Weight and activation offload to the platform's expanded-memory tier (issue 21): the
generator's memory and graph, the transfers on or off the critical path, the estimate against
simulation, the tier's capacity, the search's knobs."""

from pathlib import Path

import pytest

from tests.optimize.strategy.test_offload import tiered
from trainsim.compute import OperatorTimer
from trainsim.config.platform import load_platform
from trainsim.enums import NodeType
from trainsim.errors import InfeasibleError
from trainsim.optimize.strategy.estimate import StepEstimator
from trainsim.optimize.strategy.search import SearchInputs, search
from trainsim.optimize.strategy.space import SearchSpace
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.generate.memory import check_offload, layer_activation_bytes
from trainsim.workload.models import get_model

BASE = dict(tp=2, pp=2, dp=4, micro_batch=1, global_batch=64, zero=1)


def _nodes(graph, kind, word):
    return [i for i in range(len(graph)) if graph.types[i] == kind and word in graph.names[i]]


def test_offloaded_weights_leave_hbm_but_the_loaded_layers(tiny_model):
    spec = get_model(tiny_model)
    plain = generate(spec, Parallelism(**BASE)).memory
    off = generate(spec, Parallelism(**BASE, offload_params=True)).memory
    layer = spec.dense_params_per_layer() / 2 * 2  # TP 2, 2 bytes per parameter
    for a, b in zip(plain, off, strict=True):
        assert b.offloaded == b.offloaded_weights == pytest.approx(2 * layer)  # 2 layers per stage
        assert b.weights == pytest.approx(a.weights)  # 2 layers: both fit the prefetch window
    z3 = dict(BASE, zero=3)
    deep = generate(spec, Parallelism(**{**z3, "pp": 1, "dp": 8}, offload_params=True, zero3_prefetch=0)).memory[0]
    flat = generate(spec, Parallelism(**{**z3, "pp": 1, "dp": 8}, zero3_prefetch=0)).memory[0]
    shard = layer / 8
    assert deep.offloaded_weights == pytest.approx(4 * shard)
    assert deep.weights == pytest.approx(flat.weights - 3 * shard)  # one loaded layer stays


def test_offloaded_activations_keep_three_chunks_in_hbm(tiny_model):
    spec = get_model(tiny_model)
    par = Parallelism(tp=2, pp=4, dp=2, micro_batch=2, global_batch=64)
    plain = generate(spec, par).memory
    off = generate(spec, Parallelism(**{**par.__dict__, "offload_activations": True})).memory
    chunk = layer_activation_bytes(spec, par)[0] * 1  # one layer per stage
    live = [4, 3, 2, 1]  # 1F1B on 4 stages
    for s, (a, b) in enumerate(zip(plain, off, strict=True)):
        assert a.activations == pytest.approx(live[s] * chunk)
        if live[s] > 1:
            assert b.offloaded_activations == pytest.approx(live[s] * chunk)
            assert b.activations == pytest.approx(min(live[s], 3) * chunk)
        else:  # the last stage runs each backward right after its forward: nothing offloaded
            assert b.offloaded == 0 and b.activations == a.activations


def test_loads_and_stores_are_copy_engine_nodes_the_compute_waits_for(tiny_model):
    spec = get_model(tiny_model)
    work = generate(spec, Parallelism(**BASE, offload_params=True, offload_activations=True))
    m = 64 // 4
    g = work.graphs[0]  # stage 0: 2 layers, 16 micro-batches, 1F1B on 2 stages
    weights = _nodes(g, NodeType.MEM_LOAD_NODE, "weights_load")
    assert len(weights) == 2 * 2 * m  # every layer, forward and backward, every micro-batch
    stores = _nodes(g, NodeType.MEM_STORE_NODE, "activations_store")
    loads = _nodes(g, NodeType.MEM_LOAD_NODE, "activations_load")
    assert len(stores) == len(loads) == m  # stage 0's backward never follows its own forward
    assert all(g.is_cpu_op[i] for i in weights + stores + loads)
    last = generate(spec, Parallelism(**BASE, offload_activations=True)).graphs[-1]
    assert not _nodes(last, NodeType.MEM_STORE_NODE, "activations")
    # a backward's first compute depends on its activations' load
    ids = g.ids.tolist()
    for load in loads:
        mb = g.names[load].split(".")[0]
        users = [i for i in range(len(g)) if ids[load] in list(g.deps_of(i))]
        assert [g.names[i].split(".")[0] for i in users] == [mb]
        assert g.types[users[0]] == NodeType.COMP_NODE and "bwd" in g.names[users[0]]


def test_a_slow_tier_puts_the_transfers_on_the_critical_path(tiny_model, tmp_path):
    spec = get_model(tiny_model)
    timer = OperatorTimer("A100")
    fast = load_platform(tiered(tmp_path, "per_npu"))  # 64 GB/s, 250 ns
    slow_path = tmp_path / "slow.yaml"
    slow_path.write_text(Path(tiered(tmp_path, "per_npu")).read_text().replace("bandwidth_gbps: 64", "bandwidth_gbps: 1"))
    slow = load_platform(str(slow_path))
    plain = Parallelism(**BASE)
    acts = Parallelism(**BASE, offload_activations=True)

    def step(platform, par):
        return simulate_generated(platform, generate(spec, par, timer, network_sizes=platform.network.sizes)).makespan_s

    base = step(fast, plain)
    assert step(fast, acts) == pytest.approx(base, rel=1e-9)  # overlapped by the schedule
    assert step(slow, acts) > 1.5 * base  # 1 GB/s: the loads stall the backwards


CASES = [
    dict(BASE, offload_params=True),
    dict(BASE, offload_activations=True),
    dict(BASE, offload_params=True, offload_activations=True, offload_optimizer=True),
    dict(tp=2, pp=4, dp=2, micro_batch=2, global_batch=64, offload_activations=True),
    dict(tp=2, pp=4, dp=2, micro_batch=2, global_batch=64, offload_params=True, offload_activations=True),
    dict(tp=1, pp=1, dp=16, micro_batch=1, global_batch=64, zero=3, offload_params=True),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(k[8:] for k in c if k.startswith("offload")) + f"-pp{c['pp']}")
def test_offload_estimate_within_10_percent_of_simulation(tiny_model, tmp_path, case):
    spec = get_model(tiny_model)
    timer = OperatorTimer("A100")
    platform = load_platform(tiered(tmp_path, "per_npu"))
    par = Parallelism(**case)
    sim = simulate_generated(platform, generate(spec, par, timer, network_sizes=platform.network.sizes)).makespan_s
    assert StepEstimator(spec, timer, platform).estimate(par).step_s == pytest.approx(sim, rel=0.10)


def test_offload_beyond_the_tier_names_every_kind(tiny_model):
    memory = generate(get_model(tiny_model), Parallelism(**BASE, offload_params=True, offload_activations=True)).memory
    with pytest.raises(InfeasibleError, match=r"pipeline stage 0 offloads 0\.03 GB \(0\.01 GB of weights, 0\.02 GB of activations\) per NPU but the expanded-memory tier holds 0\.00 GB per NPU"):
        check_offload(memory, 1e6)


def test_search_enumerates_weight_and_activation_offload_where_a_tier_exists(tiny_model, tmp_path, dgx16):
    space = SearchSpace(tp=(2,), pp=(1, 2), micro_batch=(1,), zero=(1,), recompute=("none",), schedules=("1f1b",), sp=(False,), offload=(False,))
    plain = search(SearchInputs(tiny_model, 16, 64, dgx16), space=space, top_k=0)
    assert not any(r.parallelism.offload_params or r.parallelism.offload_activations for r in plain.rows)
    tier = search(SearchInputs(tiny_model, 16, 64, tiered(tmp_path, "per_npu", 512)), space=space, top_k=0)
    kinds = {(r.params["pp"], r.parallelism.offload_params, r.parallelism.offload_activations) for r in tier.rows}
    assert kinds == {(1, False, False), (1, True, False), (2, False, False), (2, True, False), (2, False, True), (2, True, True)}
    small = search(SearchInputs(tiny_model, 16, 64, tiered(tmp_path, "per_npu", 0.001)), space=space, top_k=0)
    assert small.rejections["does not fit: offloaded activations exceed the expanded-memory tier"].count == 1


def test_a_sweep_combination_offloads_and_is_checked_against_the_tier(tiny_model, tmp_path):
    import yaml

    from trainsim.sweep.evaluate import evaluate

    def doc(capacity_gb):
        platform = yaml.safe_load(Path(tiered(tmp_path, "per_npu", capacity_gb)).read_text())
        gen = {"model": tiny_model, "global_batch": 64, "every_rank": True, **BASE, "offload_params": True, "offload_activations": True}
        return {"platform": platform, "workload": {"generate": gen}}

    status, metrics, _ = evaluate(doc(512))
    assert status == "ok" and metrics["makespan_s"] > 0
    status, _, error = evaluate(doc(0.001))
    assert status == "infeasible" and "GB of weights" in error and "GB of activations" in error


def test_generate_cli_offloads_weights_and_activations(tiny_model, tmp_path, capsys):
    from trainsim.cli.main import EXIT_INFEASIBLE, main

    args = ["generate", tiny_model, "--tp", "2", "--pp", "2", "--dp", "4", "--global-batch", "64", "--zero", "1",
            "--offload-params", "--offload-activations"]  # fmt: skip
    assert main([*args, "--platform", tiered(tmp_path, "per_npu", 0.001)]) == EXIT_INFEASIBLE
    assert "GB of weights" in capsys.readouterr().err
    assert main([*args, "--platform", tiered(tmp_path, "per_npu", 512)]) == 0


def test_a_shared_tier_is_never_simulated_on_a_replica_slice(tiny_model, tmp_path):
    """A per-node (or pooled) tier queues the accesses of every replica's ranks on one server:
    a replica slice would leave the other replicas' accesses out (it did: the step came out
    as on a per-NPU tier, 7.783 ms against 26.510 ms on every rank)."""
    from trainsim.system.api import simulate

    spec = get_model(tiny_model)
    timer = OperatorTimer("A100")
    platform = load_platform(tiered(tmp_path, "per_node"))
    work = generate(spec, Parallelism(**BASE, offload_params=True), timer, network_sizes=platform.network.sizes)
    run = simulate_generated(platform, work)
    assert run.mode == "every rank" and "queue across replicas" in run.why_every_rank
    full = simulate(work.platform(platform), work.graphs).makespan_s
    assert run.makespan_s == pytest.approx(full, rel=1e-12)
    per_npu = simulate_generated(load_platform(tiered(tmp_path, "per_npu")), work)
    assert per_npu.mode == "replica slice" and run.makespan_s > 2 * per_npu.makespan_s


@pytest.mark.parametrize("offload", ["offload_activations", "offload_params", "offload_optimizer"])
@pytest.mark.parametrize("base", [BASE, dict(tp=2, pp=4, dp=2, micro_batch=2, global_batch=64)])
def test_a_per_npu_tier_is_simulated_on_a_replica_slice(tiny_model, tmp_path, offload, base):
    """A per-NPU tier's accesses are the rank's own: the slice takes every kind of offload,
    the optimizer states' loads and stores between the gradient reduction and the parameter
    all-gather included, and every rank's result, timeline and collective record equal the
    run of every rank bit for bit; the search then simulates such strategies at any scale
    (a per-node tier's still need every rank)."""
    from tests.system.test_replica import assert_same_run
    from trainsim.optimize.strategy.search import needs_every_rank
    from trainsim.system.api import simulate

    platform = load_platform(tiered(tmp_path, "per_npu"))
    par = Parallelism(**base, **{offload: True})
    work = generate(get_model(tiny_model), par, OperatorTimer("A100"), network_sizes=platform.network.sizes)
    run = simulate_generated(platform, work)
    assert run.mode == "replica slice", run.why_every_rank
    assert_same_run(run.result, simulate(work.platform(platform), work.graphs, symmetry=False))
    assert not needs_every_rank(par, platform.memory.mode)
    assert needs_every_rank(par, load_platform(tiered(tmp_path, "per_node")).memory.mode)
