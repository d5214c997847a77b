"""The step breakdown (report/step_breakdown.py): every instant of the step on a rank in one
category, the categories summing to the step; a pipeline's bubble as computed by hand."""

from dataclasses import replace

import numpy as np
import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.types import DimSpec, NetworkSpec, Platform
from trainsim.enums import CommType
from trainsim.enums import NodeType as T
from trainsim.report.breakdown import breakdown
from trainsim.report.step_breakdown import roles_of, step_breakdown, step_mean
from trainsim.system.api import simulate
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model

from ..system.conftest import ring_platform
from ..system.test_executor import graphs_for

BLOCK_S = 1e-3  # each attention GEMM of a layer, forward or backward


class AttentionOnly:
    """An operator timer under which a layer's forward and its backward each take 2 ms and
    every other operator (embedding, head, optimizer) nothing: equal pipeline stages."""

    name = "attention-only"
    memory_capacity = 1e15

    def op_time(self, kind, flops, nbytes, shape, precision):
        return BLOCK_S if kind == "attention" else 0.0


def _sums_to_step(row, step):
    assert sum(row.values()) == pytest.approx(step, rel=1e-12, abs=1e-18)
    assert all(v >= 0 for v in row.values())


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
@pytest.mark.parametrize(("p", "m"), [(2, 3), (4, 6), (4, 2)])
def test_pipeline_bubble_by_hand(schedule, p, m):
    """Equal stages, free transfers: the step is (m + p - 1)(t_f + t_b) and every stage
    computes m(t_f + t_b), so its bubble is (p - 1) / (m + p - 1) of the step."""
    spec = replace(get_model("megatron-1.7b"), layers=2 * p, seq=128, tied_embeddings=False)
    w = generate(spec, Parallelism(pp=p, global_batch=m, schedule=schedule), AttentionOnly())
    platform = w.platform(Platform(network=NetworkSpec((DimSpec("Switch", p, 1e18, 0.0),))))
    res = simulate(platform, w.graphs)
    pass_s = 2 * 2 * BLOCK_S  # a stage's forward or backward of one micro-batch: 2 layers x 2 GEMMs
    assert res.makespan_s == pytest.approx((m + p - 1) * 2 * pass_s, rel=1e-9)
    rows = step_breakdown(res.timelines, res.makespan_s, roles_of(w))
    assert len(rows) == p
    for row in rows:
        _sums_to_step(row, res.makespan_s)
        assert row["pipeline_bubble"] / res.makespan_s == pytest.approx((p - 1) / (m + p - 1), rel=1e-6)
        assert row["compute"] == pytest.approx(m * 2 * pass_s, rel=1e-12)
        assert row["p2p_wait"] < 1e-9 and row["idle"] < 1e-12
        assert row["tp_comm"] == row["dp_comm"] == row["recompute"] == 0.0


def _case(recompute="full", **extra):
    spec = replace(get_model("megatron-1.7b"), layers=4, seq=512)
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=16, recompute=recompute, **extra)
    sizes = (8, 2)
    w = generate(spec, par, OperatorTimer("A100"), network_sizes=sizes)
    dims = (DimSpec("Switch", 8, 300e9, 700.0), DimSpec("Switch", 2, 25e9, 2000.0))
    return w, Platform(network=NetworkSpec(dims))


@pytest.mark.parametrize("extra", [{}, {"schedule": "interleaved", "virtual_stages": 2}, {"recompute": "selective", "zero": 1}])
def test_categories_sum_to_the_step_and_recompute_is_the_generators(extra):
    w, platform = _case(**extra)
    run = simulate_generated(platform, w)
    res = run.result
    rows = step_breakdown(res.timelines, res.makespan_s, roles_of(w))
    assert len(rows) == len(w.graphs) == 16
    for rank, row in enumerate(rows):
        _sums_to_step(row, res.makespan_s)
        graph = w.graphs[rank]
        recompute = float(np.sum(w.node_recompute_s[w.stage_of_rank[rank]]))
        assert recompute > 0
        assert row["recompute"] == pytest.approx(recompute, rel=1e-9)
        # GPU compute runs on one slot, first in precedence: compute + recompute is all of it
        assert row["compute"] + row["recompute"] == pytest.approx(float(np.sum(graph.duration_s[graph.types == T.COMP_NODE])), rel=1e-9)
        assert row["tp_comm"] > 0 and row["dp_comm"] > 0 and row["pipeline_bubble"] > 0
    mean = step_mean(rows)
    assert sum(mean.values()) == pytest.approx(res.makespan_s, rel=1e-12)


def test_a_slice_breaks_down_as_the_full_run():
    w, platform = _case()
    run = simulate_generated(platform, w)
    full = simulate(w.platform(platform), w.graphs)
    roles = roles_of(w)
    got = step_breakdown(run.result.timelines, run.makespan_s, roles)
    want = step_breakdown(full.timelines, full.makespan_s, roles)
    for a, b in zip(got, want, strict=True):
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] == pytest.approx(b[k], rel=1e-9, abs=1e-12), k


def _recv_then_compute(b, rank):
    # rank 0 computes then sends; rank 1 computes while waiting for the message
    if rank == 0:
        b.add(1, T.COMP_NODE, "fwd", duration_s=10e-6)
        b.add(2, T.COMM_SEND_NODE, "send", comm_dst=1, comm_tag=1, comm_size=1 << 20, data_deps=[1])
        b.add(3, T.COMM_COLL_NODE, "ar", comm_type=int(CommType.ALL_REDUCE), comm_size=1 << 20, data_deps=[1])
    else:
        b.add(1, T.COMM_RECV_NODE, "recv", comm_src=0, comm_tag=1, comm_size=1 << 20)
        b.add(2, T.COMP_NODE, "overlapped", duration_s=5e-6)
        b.add(3, T.COMP_NODE, "after", duration_s=10e-6, data_deps=[1, 2])
        b.add(4, T.COMM_COLL_NODE, "ar", comm_type=int(CommType.ALL_REDUCE), comm_size=1 << 20, data_deps=[3])


def test_workload_from_files_gets_the_graphs_categories():
    """No roles: compute, exposed communication per group, p2p wait (from when the receive's
    consumer has its other input until the message comes), idle."""
    res = simulate(ring_platform(2), graphs_for(2, _recv_then_compute), compat="astra")
    rows = step_breakdown(res.timelines, res.makespan_s)
    assert list(rows[0]) == list(rows[1]) == ["compute", "comm[all]", "p2p_wait", "idle"]
    for row in rows:
        _sums_to_step(row, res.makespan_s)
    t1 = res.timelines[1]
    arrival = t1.end_ns[0] * 1e-9
    assert rows[1]["compute"] == pytest.approx(15e-6)
    assert rows[1]["p2p_wait"] == pytest.approx(arrival - 5e-6)
    ar_end = t1.end_ns[3] * 1e-9
    assert rows[1]["comm[all]"] == pytest.approx(ar_end - t1.start_ns[3] * 1e-9)
    assert rows[1]["idle"] == pytest.approx(res.makespan_s - ar_end, abs=1e-15)
    # rank 0: its all-reduce waits for rank 1 (no roles: the wait is the group's communication)
    t0 = res.timelines[0]
    assert rows[0]["comm[all]"] == pytest.approx((t0.end_ns[2] - t0.start_ns[2]) * 1e-9)


def test_breakdown_rows_carry_the_step_and_say_where_it_came_from():
    res = simulate(ring_platform(2), graphs_for(2, _recv_then_compute), compat="astra")
    rows = breakdown(res)
    assert {r.step_from for r in rows} == {"graph"}
    assert all(sum(r.step.values()) == pytest.approx(res.makespan_s) for r in rows)
    w, platform = _case()
    run = simulate_generated(platform, w)
    rows = breakdown(run.result, roles_of(w))
    assert {r.step_from for r in rows} == {"roles"}
    assert sorted(r for row in rows for r in row.ranks) == list(range(16))
    assert list(rows[0].to_dict()["step"]) == ["compute", "recompute", "tp_comm", "pipeline_bubble", "p2p_wait", "dp_comm", "other_comm", "memory", "idle"]


class OddTimes(AttentionOnly):
    """Operator times that are not sums of binary fractions: the categories' sums round."""

    name = "odd-times"

    def op_time(self, kind, flops, nbytes, shape, precision):
        return {"attention": 1.1e-4 / 3, "mlp": 0.7e-4 / 3}.get(kind, 1e-7 / 3)


def test_rounding_of_the_sums_is_not_idle():
    """A rank busy from start to finish has no idle time: the last bits of the categories'
    sums (well under a picosecond) are not shown as idle."""
    spec = replace(get_model("megatron-1.7b"), layers=8, seq=128, tied_embeddings=False)
    w = generate(spec, Parallelism(pp=4, global_batch=7), OddTimes())
    platform = w.platform(Platform(network=NetworkSpec((DimSpec("Switch", 4, 1e18, 0.0),))))
    res = simulate(platform, w.graphs)
    rows = step_breakdown(res.timelines, res.makespan_s, roles_of(w))
    for row in rows:
        _sums_to_step(row, res.makespan_s)
        assert row["idle"] == 0.0
