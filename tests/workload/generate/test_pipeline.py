"""Pipeline parallelism: schedules, matching SEND/RECV between stages, and the 1F1B bubble
(p-1)/(m+p-1) (Narayanan et al. SC'21 §2.2.1) emerging from a simulation."""

import numpy as np
import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.types import DimSpec, NetworkSpec, Platform
from trainsim.enums import NodeType
from trainsim.errors import InfeasibleError
from trainsim.system.api import simulate
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.generate.schedule import in_flight, interleaved, one_f_one_b

from .conftest import toy


def test_1f1b_order():
    assert one_f_one_b(0, 4, 6)[:5] == [("F", 0, 0), ("F", 1, 0), ("F", 2, 0), ("F", 3, 0), ("B", 0, 0)]
    last = one_f_one_b(3, 4, 6)
    assert last[:4] == [("F", 0, 0), ("B", 0, 0), ("F", 1, 0), ("B", 1, 0)]
    assert in_flight("1f1b", 0, 4, 8) == 4 and in_flight("1f1b", 3, 4, 8) == 1
    assert in_flight("gpipe", 0, 4, 8) == 8


def test_interleaved_covers_every_chunk_and_microbatch_once():
    steps = interleaved(1, 4, 8, 2)
    assert sorted(s for s in steps if s[0] == "F") == [("F", mb, c) for mb in range(8) for c in range(2)]
    assert sorted(s for s in steps if s[0] == "B") == [("B", mb, c) for mb in range(8) for c in range(2)]
    assert steps[0] == ("F", 0, 0) and steps[4] == ("F", 0, 1)  # chunk 1 after p forwards of chunk 0


def _p2p(graph):
    out = []
    for i in range(len(graph)):
        t = int(graph.types[i])
        if t == NodeType.COMM_SEND_NODE:
            out.append(("send", graph.rank, int(graph.comm_dst[i]), int(graph.comm_tag[i]), int(graph.comm_size[i])))
        elif t == NodeType.COMM_RECV_NODE:
            out.append(("recv", int(graph.comm_src[i]), graph.rank, int(graph.comm_tag[i]), int(graph.comm_size[i])))
    return out


@pytest.mark.parametrize("schedule,v", [("1f1b", 1), ("gpipe", 1), ("interleaved", 2)])
def test_every_send_has_a_matching_receive(schedule, v):
    spec = toy(layers=8)
    par = Parallelism(tp=2, pp=4, dp=1, micro_batch=1, global_batch=8, schedule=schedule, virtual_stages=v)
    w = generate(spec, par)
    sends, recvs = [], []
    for g in w.graphs:
        for kind, src, dst, tag, size in _p2p(g):
            (sends if kind == "send" else recvs).append((src, dst, tag, size))
    assert sorted(sends) == sorted(recvs)
    # activations and gradients: 2 x m x (chunks - 1) messages per TP rank
    assert len(sends) == 2 * 8 * (4 * v - 1) * 2
    # scatter/gather (SC'21 §4.1): each TP rank sends 1/t of b x s x h
    assert {s[3] for s in sends} == {spec.seq * spec.hidden * 2 // 2}
    # stage neighbours keep the TP coordinate: rank 0 (tp 0, stage 0) talks to rank 2
    assert {s[1] for s in sends if s[0] == 0} == {2} | ({6} if v > 1 else set())


def test_pp_must_divide_layers():
    with pytest.raises(InfeasibleError, match="PP=3 does not divide 8 layers"):
        generate(toy(layers=8), Parallelism(pp=3, micro_batch=1))


def _compute_only(npus):
    return Platform(network=NetworkSpec((DimSpec("Switch", npus, 1e18, 0.0),)))


@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
def test_1f1b_bubble_fraction_emerges_from_simulation(schedule):
    p, m = 4, 8
    # untied, tiny vocabulary: stages are balanced and no collective is needed
    spec = toy(layers=8, vocab=64, tied_embeddings=False, learned_positions=False)
    w = generate(spec, Parallelism(pp=p, micro_batch=1, global_batch=m, schedule=schedule), OperatorTimer("A100"))
    result = simulate(_compute_only(p), w.graphs)
    expected = (p - 1) / (m + p - 1)
    bubbles = np.array([1 - r.compute_s / result.makespan_s for r in result.ranks])
    assert np.all(np.abs(bubbles - expected) < 0.02), (bubbles, expected)


def test_interleaving_shrinks_the_bubble():
    p, m = 4, 8
    spec = toy(layers=8, vocab=64, tied_embeddings=False, learned_positions=False)
    timer = OperatorTimer("A100")
    plain = simulate(_compute_only(p), generate(spec, Parallelism(pp=p, micro_batch=1, global_batch=m), timer).graphs)
    inter = generate(spec, Parallelism(pp=p, micro_batch=1, global_batch=m, schedule="interleaved", virtual_stages=2), timer)
    fast = simulate(_compute_only(p), inter.graphs)
    bubble = 1 - fast.ranks[0].compute_s / fast.makespan_s
    # SC'21 §2.2.2: the bubble shrinks by the number of chunks v: (p-1)/v / (m + (p-1)/v)
    assert bubble == pytest.approx((p - 1) / 2 / (m + (p - 1) / 2), abs=0.03)
    assert fast.makespan_s < plain.makespan_s
