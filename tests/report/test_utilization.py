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
