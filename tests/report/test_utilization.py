import pytest

from trainsim.report.utilization import utilization_series


def test_one_transfer_fills_its_buckets():
    series = utilization_series([(0.0, 50.0, 0, 500)], [10.0], 100.0, buckets=4)
    u = [p[1] for p in series[0]["utilization"]]
    assert u == pytest.approx([1.0, 1.0, 0.0, 0.0])
    assert series[0]["bytes"] == 500
    assert series[0]["mean"] == pytest.approx(0.5)


def test_partial_overlap_and_two_dims():
    series = utilization_series([(10.0, 30.0, 1, 200), (0.0, 100.0, 0, 100)], [1.0, 10.0], 100.0, buckets=2)
    assert [p[1] for p in series[1]["utilization"]] == pytest.approx([200 / (10 * 50), 0.0])
    assert [p[1] for p in series[0]["utilization"]] == pytest.approx([1.0, 1.0])


def test_transfers_of_a_generated_slice_are_each_records_and_sends():
    """``transfers_of`` (its per-graph send lists and per-pair dimensions) lists what the
    definition does: every record's bytes per dimension, in that order, then every finished
    SEND on its rank's first differing dimension: a slice's world result lists the sends of the
    ranks that ran, each times the ranks that repeat it (``RunResult.repeats``), which must be
    every rank's sends summed per interval and dimension; the utilization is the same."""
    from collections import Counter

    import numpy as np

    from trainsim.enums import NodeType
    from trainsim.report.collectives import weighted_records
    from trainsim.report.utilization import transfers_of
    from trainsim.system.symmetry.replica import simulate_generated
    from trainsim.topology import MultiDimTopology

    from .test_step_breakdown import _case

    w, platform = _case()
    result = simulate_generated(platform, w).result
    net = platform.network
    topology = MultiDimTopology([d.kind for d in net.dims], [d.size for d in net.dims])
    expected = []
    for rec, count in weighted_records(result.collectives):
        expected += [(rec.start_ns, rec.end_ns, d, b * count) for d, b in enumerate(rec.dim_bytes) if b]
    records = len(expected)
    for rank, t in enumerate(result.timelines):
        g = t.graph
        for pos in np.flatnonzero(g.types == NodeType.COMM_SEND_NODE).tolist():
            dst = int(g.comm_dst[pos])
            dim = topology.first_diff_dim(rank, dst) if 0 <= dst < topology.npus else -1
            if dim >= 0 and t.end_ns[pos] >= 0:
                expected.append((t.start_ns[pos], t.end_ns[pos], dim, int(g.comm_size[pos])))
    got = transfers_of(result, topology)
    assert any(x[2] == 1 for x in got)  # the pipeline's sends cross the second dimension
    assert got[:records] == expected[:records]

    def summed(transfers):
        out = Counter()
        for start, end, dim, nbytes in transfers:
            out[(start, end, dim)] += nbytes
        return out

    assert result.repeats is not None and len(got) < len(expected)  # the sends of the ranks that ran
    assert summed(got[records:]) == summed(expected[records:])
    one, every = (utilization_series(x, [1.0, 1.0], result.makespan_s * 1e9, buckets=50) for x in (got, expected))
    for a, b in zip(one, every, strict=True):
        assert a["bytes"] == b["bytes"] and [p[1] for p in a["utilization"]] == pytest.approx([p[1] for p in b["utilization"]], rel=1e-12)
