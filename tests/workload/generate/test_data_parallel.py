"""Data parallelism and ZeRO-1/2/3 (Rajbhandari et al. 2020): gradient all-reduce, or
reduce-scatter + all-gather, or per-layer all-gather/reduce-scatter."""

import pytest

from trainsim.workload.generate import Parallelism, generate

from .conftest import collectives, toy


def test_dp_one_gradient_allreduce_of_all_parameters():
    spec = toy()
    w = generate(spec, Parallelism(dp=4, micro_batch=2, global_batch=16))
    g = w.graphs[0]
    grads = collectives(g, "grad_allreduce")
    assert len(grads) == 1
    name, kind, size, pg = grads[0]
    assert kind == "ALL_REDUCE" and pg == ""  # DP group = all ranks
    assert size == spec.total_params() * 2
    # pure DP: every rank runs the very same graph object's arrays
    assert all(x.ids is g.ids for x in w.graphs)
    assert w.info["microbatches"] == 2


def test_overlapped_grad_reduce_one_bucket_per_layer():
    spec = toy(layers=4)
    w = generate(spec, Parallelism(dp=2, micro_batch=1, global_batch=4, overlap_grad_reduce=True))
    per_layer = [c for c in collectives(w.graphs[0], "grad_allreduce") if c[0].startswith("L")]
    assert len(per_layer) == 4
    assert all(c[2] == spec.dense_params_per_layer() * 2 for c in per_layer)


def test_zero1_reduce_scatter_then_allgather():
    spec = toy()
    dp = 4
    w = generate(spec, Parallelism(dp=dp, micro_batch=1, zero=1))
    g = w.graphs[0]
    rs = collectives(g, "grad_reducescatter")
    ag = collectives(g, "param_allgather")
    assert [c[1] for c in rs] == ["REDUCE_SCATTER"] and rs[0][2] == spec.total_params() * 2
    assert [c[1] for c in ag] == ["ALL_GATHER"] and ag[0][2] == spec.total_params() * 2 // dp
    assert not collectives(g, "allreduce")


def test_zero3_gathers_every_layer_every_pass():
    spec = toy(layers=3)
    dp, m = 4, 2
    w = generate(spec, Parallelism(dp=dp, micro_batch=1, global_batch=dp * m, zero=3))
    g = w.graphs[0]
    ags = collectives(g, "zero3_allgather")
    assert len(ags) == 2 * 3 * m  # forward and backward, every layer, every micro-batch
    assert {c[2] for c in ags} == {int(spec.dense_params_per_layer() * 2 / dp)}
    rss = [c for c in collectives(g, "zero3_grad_reducescatter") if ".L" in c[0]]
    assert len(rss) == 3 * m and {c[1] for c in rss} == {"REDUCE_SCATTER"}


def test_fsdp_is_zero3():
    a = generate(toy(), Parallelism(dp=2, micro_batch=1, fsdp=True))
    b = generate(toy(), Parallelism(dp=2, micro_batch=1, zero=3))
    assert collectives(a.graphs[0]) == collectives(b.graphs[0])


def test_rank_graphs_that_cannot_fit_in_memory_are_refused_at_once():
    """A data-parallel degree of a billion would take minutes to lay out and then run out of
    memory; it is refused before any of that, saying what it would need."""
    from trainsim.budget import BudgetError, forced
    from trainsim.errors import InfeasibleError
    from trainsim.workload.models import get_model

    par = Parallelism(dp=10**9, global_batch=10**9)
    with pytest.raises(BudgetError, match=r"1,000,000,000 ranks: estimated 1,000,000,000 ranks, over the limit"):
        generate(get_model("megatron-1.7b"), par)
    with forced(), pytest.raises(InfeasibleError, match=r"1,000,000,000 rank graphs need about [\d,]+ GB; this machine has"):
        generate(get_model("megatron-1.7b"), par)
