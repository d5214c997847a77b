"""Grouped-query attention (Ainslie et al. 2023; Llama 3: 8 key/value heads): smaller K/V
projections (FLOPs, weights, saved activations), the same TP all-reduces (they carry the
hidden-size block output, not K/V), and TP must divide the key/value heads (Megatron-Core)."""

import numpy as np
import pytest

from trainsim.enums import NodeType
from trainsim.errors import InfeasibleError
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.generate.memory import layer_activation_bytes

from .conftest import collectives, toy


def _op_flops(graph, op):
    comp = np.flatnonzero(graph.types == NodeType.COMP_NODE).tolist()
    return sum(float(graph.num_ops[i]) for i in comp if graph.names[i].endswith(f".{op}"))


def test_gqa_shrinks_the_kv_projection_only():
    b, tp = 2, 4
    mha, gqa = toy(), toy(kv_heads=4)
    par = Parallelism(tp=tp, micro_batch=b, granularity="op")
    wm, wg = generate(mha, par), generate(gqa, par)
    t, h, d = b * mha.seq, mha.hidden, mha.head_dim
    # forward QKV GEMM: 2 t h (q + 2 kv) / tp
    n = mha.layers
    assert _op_flops(wm.graphs[0], "qkv") == n * 2 * t * h * (16 + 2 * 16) * d / tp
    assert _op_flops(wg.graphs[0], "qkv") == n * 2 * t * h * (16 + 2 * 4) * d / tp
    # scores and context use every query head: unchanged
    for op in ("attn_scores", "attn_context", "attn_proj", "fc1"):
        assert _op_flops(wg.graphs[0], op) == _op_flops(wm.graphs[0], op)
    # TP all-reduces carry t x h activations, with or without GQA
    assert collectives(wg.graphs[0]) == collectives(wm.graphs[0])
    assert {c[2] for c in collectives(wg.graphs[0]) if c[1] == "ALL_REDUCE" and ".L" in c[0]} == {t * h * 2}
    # weights: K and V projections of kv_heads x head_dim each
    assert mha.attention_params() - gqa.attention_params() == 2 * h * (16 - 4) * d + 2 * (16 - 4) * d
    # saved activations: K and V of one rank's kv_heads / tp heads
    kept_m, _ = layer_activation_bytes(mha, par)
    kept_g, _ = layer_activation_bytes(gqa, par)
    assert kept_m - kept_g == pytest.approx(2 * t * 2 * (16 - 4) * d / tp)


def test_tp_must_divide_the_kv_heads():
    with pytest.raises(InfeasibleError, match="TP=8 does not divide 4 key/value heads"):
        generate(toy(kv_heads=4), Parallelism(tp=8))
