"""Tensor parallelism (Megatron-LM, Shoeybi et al. 2019 §3): 2 all-reduces per block per pass,
and reduce-scatter/all-gather with sequence parallelism (Korthikanti et al. 2022 §4.2.2)."""

import pytest

from trainsim.errors import InfeasibleError
from trainsim.workload.generate import Parallelism, generate

from .conftest import collectives, toy


def test_tp8_two_layers_four_allreduces_per_forward_per_microbatch():
    spec = toy()
    b, m = 2, 3
    w = generate(spec, Parallelism(tp=8, micro_batch=b, global_batch=b * m))
    g = w.graphs[0]
    act = b * spec.seq * spec.hidden * 2
    fwd_blocks = [c for c in collectives(g, ".fwd") if ".L" in c[0] and "recompute" not in c[0]]
    assert len(fwd_blocks) == 4 * m
    assert all(c[1] == "ALL_REDUCE" and c[2] == act for c in fwd_blocks)
    for mb in range(m):
        assert len([c for c in fwd_blocks if c[0].startswith(f"mb{mb}.")]) == 4
    # the vocab-parallel embedding all-reduces its output once per forward
    emb = collectives(g, "embedding_out.fwd")
    assert len(emb) == m and emb[0][1:3] == ("ALL_REDUCE", act)
    # backward: the conjugate f operators, 2 per block, plus the one before the output GEMM
    bwd_blocks = [c for c in collectives(g, ".bwd") if ".L" in c[0]]
    assert len(bwd_blocks) == 4 * m and all(c[1:3] == ("ALL_REDUCE", act) for c in bwd_blocks)
    assert len(collectives(g, "head_in.bwd")) == m
    # cross-entropy: 3 all-reduces of tokens x fp32
    ce = collectives(g, "ce_reduce")
    assert len(ce) == 3 * m and all(c[2] == b * spec.seq * 4 for c in ce)
    # the TP group is every rank here: pg_name "" (all ranks)
    assert {c[3] for c in collectives(g)} == {""}


def test_full_recompute_repeats_forward_allreduces():
    spec = toy()
    w = generate(spec, Parallelism(tp=4, micro_batch=1, recompute="full"))
    g = w.graphs[0]
    assert len(collectives(g, "recompute")) == 4  # 2 layers x 2 all-reduces re-run before backward
    assert all(c[1] == "ALL_REDUCE" for c in collectives(g, "recompute"))


def test_sequence_parallel_uses_reduce_scatter_and_all_gather():
    spec = toy()
    b, t = 1, 4
    w = generate(spec, Parallelism(tp=t, sp=True, micro_batch=b))
    g = w.graphs[0]
    full = b * spec.seq * spec.hidden * 2
    fwd = [c for c in collectives(g, ".fwd") if ".L" in c[0]]
    assert sorted(c[1] for c in fwd) == ["ALL_GATHER"] * 4 + ["REDUCE_SCATTER"] * 4
    assert {c[2] for c in fwd if c[1] == "REDUCE_SCATTER"} == {full}
    assert {c[2] for c in fwd if c[1] == "ALL_GATHER"} == {full // t}  # per-rank input
    bwd = [c for c in collectives(g, ".bwd") if ".L" in c[0]]
    # mirrors (2 RS, 2 AG) plus the 2 re-gathers of the saved inputs for the weight gradients
    assert sorted(c[1] for c in bwd) == ["ALL_GATHER"] * 8 + ["REDUCE_SCATTER"] * 4
    assert not [c for c in collectives(g) if c[1] == "ALL_REDUCE" and ".L" in c[0]]


def test_tp_groups_follow_megatron_order():
    w = generate(toy(), Parallelism(tp=2, dp=4, micro_batch=1))
    tp_groups = {tuple(v) for k, v in w.comm_groups.items() if w.group_names[k].startswith("tp")}
    assert tp_groups == {(0, 1), (2, 3), (4, 5), (6, 7)}
    dp_groups = {tuple(v) for k, v in w.comm_groups.items() if w.group_names[k].startswith("dp")}
    assert dp_groups == {(0, 2, 4, 6), (1, 3, 5, 7)}
    g5 = w.graphs[5]
    tp_ids = {c[3] for c in collectives(g5, ".L")}
    assert len(tp_ids) == 1 and w.comm_groups[tp_ids.pop()] == [4, 5]


def test_tp_must_divide_heads():
    with pytest.raises(InfeasibleError, match="TP=3 does not divide 16 heads"):
        generate(toy(), Parallelism(tp=3, micro_batch=1))


@pytest.mark.parametrize("granularity", ["block", "op"])
def test_recomputation_seconds_per_node(granularity):
    """node_recompute_s holds the seconds of recomputation inside each compute node: all the
    extra compute that full or selective recomputation adds to the step, and nothing else."""
    import numpy as np

    from trainsim.compute import OperatorTimer
    from trainsim.enums import NodeType

    spec = toy(layers=4)
    steps = {}
    for rc in ("none", "selective", "full"):
        w = generate(spec, Parallelism(tp=2, pp=2, micro_batch=1, global_batch=4, recompute=rc, granularity=granularity), OperatorTimer("A100"))
        steps[rc] = w
        for stage, recompute in enumerate(w.node_recompute_s):
            g = w.graphs[w.stage_of_rank.index(stage)]
            assert recompute.shape == (len(g),)
            assert np.all(recompute[g.types != NodeType.COMP_NODE] == 0)
            assert np.all(recompute <= g.duration_s + 1e-15)
    for rc in ("selective", "full"):
        for stage in range(2):
            extra = steps[rc].info["compute_s_per_stage"][stage] - steps["none"].info["compute_s_per_stage"][stage]
            assert float(np.sum(steps[rc].node_recompute_s[stage])) == pytest.approx(extra, rel=1e-9)
            assert extra > 0
    assert not any(np.any(r) for r in steps["none"].node_recompute_s)
