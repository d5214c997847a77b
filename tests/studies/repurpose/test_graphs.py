import numpy as np
import pytest

from trainsim.enums import NodeType
from trainsim.studies.repurpose.comm import BYTES_PER_SCALAR
from trainsim.studies.repurpose.graphs import build_graphs
from trainsim.studies.repurpose.methods import METHODS, deploy


@pytest.mark.parametrize("method", METHODS)
def test_graphs_carry_the_plan(digits, method):
    split, mlp = digits
    d = deploy(method, mlp, split.x_train, 4, 0.05)
    peak = 1e12
    graphs = build_graphs(d.stages, peak)
    assert [g.rank for g in graphs] == [0, 1, 2, 3]
    sends, recvs = {}, {}
    for g in graphs:
        comp = g.types == NodeType.COMP_NODE
        np.testing.assert_allclose(g.duration_s[comp], g.num_ops[comp] / peak)
        ids = set(g.ids.tolist())
        for pos in range(len(g)):
            assert set(g.deps_of(pos)) <= ids
            assert all(dep < g.ids[pos] for dep in g.deps_of(pos))  # ids follow a topological order
            key = (int(g.comm_src[pos]), int(g.comm_dst[pos]), int(g.comm_tag[pos]))
            if g.types[pos] == NodeType.COMM_SEND_NODE:
                assert key[0] == g.rank
                sends[key] = int(g.comm_size[pos])
            elif g.types[pos] == NodeType.COMM_RECV_NODE:
                assert key[1] == g.rank
                recvs[key] = int(g.comm_size[pos])
    assert sends == recvs
    assert sum(sends.values()) == d.communication * BYTES_PER_SCALAR
    total_flops = sum(float(g.num_ops.sum()) for g in graphs)
    assert total_flops == pytest.approx(sum(float(s.flops.sum()) for s in d.stages))


def test_compute_waits_for_the_stage_receives(digits):
    split, mlp = digits
    d = deploy("direct_tp", mlp, split.x_train, 2)
    g = build_graphs(d.stages, 1e12)[1]
    pos = g.names.index("fc2.comp")
    deps = g.deps_of(pos)
    names = [g.names[g.position_of()[i]] for i in deps]
    assert names == ["fc1.comp", "fc2.recv.0->1"]


def test_a_batch_scales_messages_and_compute_but_not_weights(digits):
    split, mlp = digits
    d = deploy("repurpose", mlp, split.x_train, 4, 0.05)
    one, five = build_graphs(d.stages, 1e12), build_graphs(d.stages, 1e12, batch=5)
    for g1, g5 in zip(one, five, strict=True):
        assert g1.names == g5.names  # one message per worker pair per stage, whatever the batch
        np.testing.assert_array_equal(
            g5.comm_size, np.where(g1.comm_size > 0, 5 * g1.comm_size, g1.comm_size)
        )
        comp = g1.types == NodeType.COMP_NODE
        np.testing.assert_allclose(g5.num_ops[comp], 5 * g1.num_ops[comp])
    k = 1
    comp = [s for s in d.stages if s.flops[k] > 0]
    sizes = five[k].tensor_size[five[k].types == NodeType.COMP_NODE]
    expected = [int(s.weight_bytes[k] + 5 * s.act_bytes[k]) for s in comp]
    assert sizes.tolist() == expected
