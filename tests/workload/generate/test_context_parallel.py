"""Context parallelism (Megatron-LM ``--context-parallel-size``; Llama 3's all-gather CP,
Dubey et al. 2024 §3.3.2): the sequence split over CP ranks, K/V all-gathered per layer
(reduce-scattered in the backward), attention work divided evenly (causal load balancing),
gradients reduced over DP x CP, ranks in Megatron's tp-cp-ep-dp-pp order."""

import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.types import DimSpec, NetworkSpec, Platform
from trainsim.errors import ConfigError, InfeasibleError
from trainsim.system.api import simulate
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.generate.memory import layer_activation_bytes
from trainsim.workload.models import megatron_flops

from .conftest import collectives, toy
from .flops import step_model_flops


def _members(w, gid):
    return [] if gid is None else (list(range(len(w.graphs))) if gid == "" else w.comm_groups[gid])


def _group_of(w, rank, part):
    names = {c[3] for c in collectives(w.graphs[rank], part) if not c[0].startswith("embedding")}
    assert len(names) == 1, names
    return _members(w, names.pop())


def test_groups_in_megatron_order():
    par = Parallelism(tp=2, cp=2, pp=2, dp=2, micro_batch=1, global_batch=4)
    assert par.world == 16
    w = generate(toy(), par)
    # tp innermost, then cp, then dp, pp outermost
    assert _group_of(w, 0, "cp_kv") == [0, 2]
    assert _group_of(w, 5, "cp_kv") == [5, 7]
    assert _group_of(w, 0, "attn_out") == [0, 1]
    # gradients over the ranks holding the same weights: dp x cp
    assert _group_of(w, 0, "grad_allreduce") == [0, 2, 4, 6]
    assert w.stage_of_rank[:8] == [0] * 8 and w.stage_of_rank[8:] == [1] * 8


def test_kv_exchange_sizes_by_hand():
    spec = toy(kv_heads=4)  # head_dim 64, 4 key/value heads
    b, tp, cp = 2, 2, 4
    w = generate(spec, Parallelism(tp=tp, cp=cp, micro_batch=b, global_batch=2 * b))
    g = w.graphs[0]
    local_tokens = b * 512 // cp  # 256
    kv_per_rank = 4 * 64 // tp  # 128 elements of K (and of V) per token
    ag = [c for c in collectives(g, "cp_kv.fwd")]
    rs = [c for c in collectives(g, "cp_kv.bwd")]
    # one all-gather and one reduce-scatter per layer per micro-batch
    assert len(ag) == len(rs) == spec.layers * 2
    assert {c[1:3] for c in ag} == {("ALL_GATHER", 2 * local_tokens * kv_per_rank * 2)}  # 131,072 bytes
    assert {c[1:3] for c in rs} == {("REDUCE_SCATTER", 4 * 2 * local_tokens * kv_per_rank * 2)}
    # the TP all-reduces carry this rank's seq / cp tokens
    assert {c[2] for c in collectives(g, "attn_out")} == {local_tokens * spec.hidden * 2}
    # GQA: the exchange shrinks with the key/value heads
    mha = generate(toy(), Parallelism(tp=tp, cp=cp, micro_batch=b, global_batch=2 * b))
    assert collectives(mha.graphs[0], "cp_kv.fwd")[0][2] == 4 * ag[0][2]


@pytest.mark.parametrize("recompute", ["full", "none"])
def test_cp_step_has_the_models_flops(recompute):
    spec = toy(layers=4, vocab=1024)
    gbatch = 8
    par = Parallelism(tp=2, cp=2, pp=2, dp=2, micro_batch=2, global_batch=gbatch, recompute=recompute, granularity="op")
    total = step_model_flops(generate(spec, par))
    assert total == pytest.approx(megatron_flops(spec, gbatch, recompute=recompute == "full"), rel=1e-12)


def test_causal_fused_attention_is_split_evenly():
    spec = toy(layers=2, fused_attention=True, kv_heads=4)
    base = Parallelism(tp=2, micro_batch=1, global_batch=2, granularity="op")
    with_cp = Parallelism(tp=2, cp=4, micro_batch=1, global_batch=2, granularity="op")
    one, four = generate(spec, base), generate(spec, with_cp)
    assert step_model_flops(four) == pytest.approx(step_model_flops(one), rel=1e-12)
    per_rank = [step_model_flops(type(four)([g], {}, {}, [])) for g in four.graphs]
    assert max(per_rank) == pytest.approx(min(per_rank), rel=1e-12)


def test_cp_memory_and_model_states():
    spec = toy(layers=2)
    par1 = Parallelism(tp=2, micro_batch=2)
    par4 = Parallelism(tp=2, cp=4, micro_batch=2, zero=1)
    kept1, _ = layer_activation_bytes(spec, par1)
    kept4, _ = layer_activation_bytes(spec, par4)
    assert kept4 == pytest.approx(kept1 / 4)
    w = generate(spec, par4)
    # ZeRO-1 shards the optimizer over the dp x cp = 4 ranks of the same weights
    assert w.memory[0].optimizer == pytest.approx(12 * w.memory[0].params / 4)


def test_bad_cp():
    with pytest.raises(InfeasibleError, match="2 x CP equal chunks"):
        generate(toy(seq=500), Parallelism(cp=4))
    with pytest.raises(ConfigError, match="cp"):
        Parallelism(cp=0)


def test_cp_step_simulates():
    spec = toy(layers=2, vocab=64, tied_embeddings=False, learned_positions=False)
    par = Parallelism(tp=2, cp=2, dp=2, micro_batch=1, global_batch=4)
    w = generate(spec, par, OperatorTimer("A100"))
    platform = Platform(network=NetworkSpec((DimSpec("Switch", 8, 100.0, 500.0),)))
    result = simulate(w.platform(platform), w.graphs)
    assert result.makespan_s > max(r.compute_s for r in result.ranks)
