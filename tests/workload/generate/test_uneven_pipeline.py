"""Pipelines whose stages hold different layer counts (Megatron-Core's first/last pipeline
stage layers; Llama 3 405B's 126 layers on 16 stages as 7 + 14 x 8 + 7, Dubey et al. 2024
§3.3.2): the split rule, the graphs, memory per stage, and the step's FLOPs."""

import numpy as np
import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.types import DimSpec, NetworkSpec, Platform
from trainsim.enums import NodeType
from trainsim.errors import ConfigError, InfeasibleError
from trainsim.system.api import simulate
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.generate.api import transformer_memory
from trainsim.workload.generate.transformer_gen import TransformerGenerator
from trainsim.workload.models import get_model, megatron_flops

from .conftest import toy
from .flops import step_model_flops


def test_llama3_405b_split_as_meta():
    par = Parallelism(tp=8, pp=16, first_stage_layers=7, last_stage_layers=7, micro_batch=1, global_batch=16)
    assert par.stage_layers(126) == (7,) + (8,) * 14 + (7,)
    with pytest.raises(InfeasibleError, match="PP=16 does not divide 126 layers"):
        Parallelism(pp=16).stage_layers(126)
    assert Parallelism(pp=4, layers_per_stage=(2, 3, 3, 2)).stage_layers(10) == (2, 3, 3, 2)
    # interleaving splits every stage's layers over its chunks, chunks in Megatron's order
    inter = Parallelism(pp=2, layers_per_stage=(4, 6), schedule="interleaved", virtual_stages=2)
    assert inter.chunk_layers(10) == [range(0, 2), range(2, 5), range(5, 7), range(7, 10)]


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(pp=4, layers_per_stage=(2, 3, 3)), "must list 4 positive integers"),
        (dict(pp=1, first_stage_layers=2), "need PP >= 2"),
        (dict(pp=4, layers_per_stage=(3, 3, 3, 3), first_stage_layers=2), "not both"),
        (dict(pp=4, first_stage_layers=-1), "integer >= 0"),
    ],
)
def test_bad_splits_are_config_errors(kw, message):
    with pytest.raises(ConfigError, match=message):
        Parallelism(**kw)


@pytest.mark.parametrize(
    "kw, message",
    [
        (dict(pp=4, layers_per_stage=(3, 3, 3, 3)), "adds up to 12, not the model's 10"),
        (dict(pp=4, first_stage_layers=3, last_stage_layers=2), "cannot share evenly"),
        (dict(pp=2, layers_per_stage=(3, 7), schedule="interleaved", virtual_stages=2), "do not divide the stage layer counts"),
    ],
)
def test_infeasible_splits(kw, message):
    with pytest.raises(InfeasibleError, match=message):
        generate(toy(layers=10), Parallelism(micro_batch=1, global_batch=4, **kw))


def _layers_in(graph):
    layers = set()
    for i in np.flatnonzero(graph.types == NodeType.COMP_NODE).tolist():
        for part in graph.names[i].split("."):
            if part.startswith("L") and part[1:].isdigit():
                layers.add(int(part[1:]))
    return layers


@pytest.mark.parametrize(
    "kw",
    [
        dict(pp=4, first_stage_layers=2, last_stage_layers=2),
        dict(pp=4, layers_per_stage=(1, 4, 4, 1)),
        dict(pp=2, layers_per_stage=(4, 6), schedule="interleaved", virtual_stages=2),
    ],
)
def test_uneven_stages_hold_their_layers_and_the_step_has_the_models_flops(kw):
    spec = toy(layers=10, vocab=1024)
    b, gbatch = 2, 8
    par = Parallelism(tp=2, dp=2, micro_batch=b, global_batch=gbatch, recompute="full", granularity="op", **kw)
    w = generate(spec, par)
    split = par.stage_layers(spec.layers)
    for rank, g in enumerate(w.graphs):
        assert len(_layers_in(g)) == split[w.stage_of_rank[rank]]
    # every rank's GEMM and attention FLOPs together are the formula's (full recomputation)
    assert step_model_flops(w) == pytest.approx(megatron_flops(spec, gbatch, recompute=True), rel=1e-12)
    # memory per stage follows the split: weights of a middle stage exceed the first's by
    # its extra layers (the first also holds the embedding)
    gen = TransformerGenerator(spec, par, None)
    params = [gen.stage_params(s)[0] for s in range(par.pp)]
    for s in range(1, par.pp - 1):
        assert params[s] == pytest.approx(split[s] * spec.dense_params_per_layer() / par.tp)


def test_llama3_405b_memory_per_stage_follows_the_split():
    spec = get_model("llama3-405b")
    par = Parallelism(tp=8, pp=16, dp=1, first_stage_layers=7, last_stage_layers=7, micro_batch=1, global_batch=16, recompute="full")
    gen = TransformerGenerator(spec, par, None)
    mem = [transformer_memory(gen, s) for s in range(par.pp)]
    layer = spec.dense_params_per_layer() / 8
    assert mem[1].params == pytest.approx(8 * layer)
    assert mem[0].params == pytest.approx(7 * layer + spec.vocab * spec.hidden / 8)
    assert mem[15].params == pytest.approx(7 * layer + spec.norm_params() + spec.vocab * spec.hidden / 8)
    # 1F1B: stage 0 keeps p micro-batches of its 7 layers' inputs, stage 1 p - 1 of its 8
    assert mem[0].activations / 7 / 16 == pytest.approx(mem[1].activations / 8 / 15)


def test_uneven_pipeline_simulates():
    spec = toy(layers=6, vocab=64, tied_embeddings=False, learned_positions=False)
    par = Parallelism(pp=3, first_stage_layers=1, last_stage_layers=1, micro_batch=1, global_batch=6)
    w = generate(spec, par, OperatorTimer("A100"))
    result = simulate(Platform(network=NetworkSpec((DimSpec("Switch", 3, 1e18, 0.0),))), w.graphs)
    busy = [r.compute_s for r in result.ranks]
    assert busy[1] > 3 * busy[0]  # the middle stage holds 4 layers, the others 1
    assert result.makespan_s >= busy[1]


def test_layers_per_chunk_interleaved_first_and_last_chunk_short():
    # Llama 3 style under interleaving: the first chunk (with the embedding) and the last
    # chunk (with the output head) one layer short
    spec = toy(layers=14, vocab=1024)
    per_chunk = (1, 2, 2, 2, 2, 2, 2, 1)  # chunk c of stage s at c x pp + s, pp 4, v 2
    par = Parallelism(tp=2, pp=4, micro_batch=1, global_batch=4, schedule="interleaved", virtual_stages=2, layers_per_chunk=per_chunk, recompute="full", granularity="op")
    assert par.stage_layers(14) == (3, 4, 4, 3)
    assert par.chunk_layers(14)[0] == range(0, 1) and par.chunk_layers(14)[-1] == range(13, 14)
    w = generate(spec, par)
    assert step_model_flops(w) == pytest.approx(megatron_flops(spec, 4, recompute=True), rel=1e-12)
    with pytest.raises(ConfigError, match="must list 8 positive integers"):
        Parallelism(pp=4, schedule="interleaved", virtual_stages=2, layers_per_chunk=(1, 2))
