"""ZeRO-3 / FSDP at scale: per-layer gathers on every pass of every micro-batch, a bounded
prefetch (issued when the layer before starts), one communication stream per rank, the gathered
layers' memory; at a fixed global batch the throughput per GPU falls as DP grows, because
compute per GPU shrinks and the gathers and reduce-scatters per layer do not."""

import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import NodeType
from trainsim.errors import ConfigError
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import megatron_flops

from .conftest import toy


def _dp_nodes(g):
    return [i for i in range(len(g)) if g.types[i] == NodeType.COMM_COLL_NODE and "zero3" in g.names[i]]


def test_zero3_collectives_queue_on_one_stream_and_prefetch_one_layer():
    spec = toy(layers=4)
    w = generate(spec, Parallelism(dp=4, zero=3, micro_batch=1, global_batch=8))
    g = w.graphs[0]
    pos = g.position_of()
    deps = {p: {pos[d] for d in g.deps_of(p)} for p in range(len(g))}
    coll = _dp_nodes(g)
    # every ZeRO-3 collective waits for the previous one (one NCCL stream per process group)
    for a, b in zip(coll, coll[1:], strict=False):
        assert a in deps[b], (g.names[a], g.names[b])
    # the gather of layer 2's forward is issued when layer 1 starts: after layer 0's compute
    names = list(g.names)
    ag2 = names.index("mb0.L2.fwd.zero3_allgather")
    comp0 = max(p for p in range(ag2) if names[p].startswith("mb0.L0.") and g.types[p] == NodeType.COMP_NODE)
    assert comp0 in deps[ag2]
    assert not any(names[p].startswith("mb0.L1.") and g.types[p] == NodeType.COMP_NODE for p in deps[ag2])


def test_prefetch_depth_and_reshard_after_forward():
    spec = toy(layers=4)
    base = dict(dp=4, zero=3, micro_batch=1, global_batch=4)
    one = generate(spec, Parallelism(**base))
    two = generate(spec, Parallelism(**base, zero3_prefetch=2))
    layer_bytes = spec.dense_params_per_layer() * 2
    assert two.memory[0].transient - one.memory[0].transient == pytest.approx(layer_bytes)
    keep = generate(spec, Parallelism(**base, reshard_after_forward=False))
    names = [keep.graphs[0].names[i] for i in _dp_nodes(keep.graphs[0])]
    assert not [n for n in names if ".bwd.zero3_allgather" in n]
    assert len([n for n in names if ".fwd.zero3_allgather" in n]) == 4
    assert keep.memory[0].transient - one.memory[0].transient == pytest.approx(2 * layer_bytes)
    with pytest.raises(ConfigError, match="zero3_prefetch"):
        Parallelism(zero3_prefetch=-1)


def _platform(npus):
    node = min(8, npus)
    dims = [DimSpec("Switch", node, 300e9, 700.0)]
    if npus > node:
        dims.append(DimSpec("Switch", npus // node, 25e9, 2000.0))
    ring = ("ring",) * len(dims)  # every collective crosses every dimension it spans
    impl = CollectiveImpl(all_reduce=ring, all_gather=ring, reduce_scatter=ring, all_to_all=ring)
    return Platform(network=NetworkSpec(tuple(dims)), system=SystemSpec(implementations=impl))


def test_zero3_throughput_falls_as_dp_grows_at_fixed_global_batch():
    spec = toy(layers=4, hidden=2048, heads=16, ffn=8192, seq=1024, vocab=1024)
    gbatch = 32
    timer = OperatorTimer("A100")
    tflops = []
    for dp in (8, 16, 32):
        par = Parallelism(dp=dp, zero=3, micro_batch=gbatch // dp, global_batch=gbatch)
        w = generate(spec, par, timer, check_memory=False)
        step = simulate_generated(_platform(dp), w).makespan_s
        tflops.append(megatron_flops(spec, gbatch, recompute=False) / dp / step / 1e12)
    # per-GPU compute halves with each doubling; the per-layer gathers stay: throughput falls
    assert tflops[1] < 0.95 * tflops[0] and tflops[2] < 0.9 * tflops[1], tflops
