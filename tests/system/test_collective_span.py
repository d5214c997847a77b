"""A whole-machine collective on a platform file that lists no algorithm per dimension (issue 17):
in ``compat: default`` it crosses every network dimension; in ``compat: astra`` (or with
``system.collective_span: listed``) it stops after the listed one, ASTRA-sim's convention."""

from __future__ import annotations

import pytest

from trainsim.config.platform import load_platform
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload

SIZE = 1 << 20


def _platform(tmp_path, extra: str):
    path = tmp_path / "platform.yaml"
    path.write_text(
        "network:\n"
        "  dims:\n"
        "    - {topology: Switch, size: 4, bandwidth_gbps: 100, latency_ns: 500}\n"
        "    - {topology: Switch, size: 2, bandwidth_gbps: 10, latency_ns: 2000}\n" + extra
    )
    return load_platform(path)


@pytest.mark.parametrize(
    ("extra", "crosses_dim_1"),
    [
        ("", True),
        ("compat: astra\n", False),
        ("system: {collective_span: listed}\n", False),
        ("compat: astra\nsystem: {collective_span: all}\n", True),
    ],
)
def test_a_collective_with_no_list_crosses_every_dimension_by_default(tmp_path, extra, crosses_dim_1):
    platform = _platform(tmp_path, extra)
    result = simulate(platform, collective_workload(8, "all_reduce", SIZE))
    dim_bytes = result.collectives[0].dim_bytes  # rank 0's all-reduce: bytes sent per dimension
    assert dim_bytes[0] > 0
    assert (dim_bytes[1] > 0) == crosses_dim_1


def test_crossing_the_slow_dimension_costs_its_time(tmp_path):
    default = simulate(_platform(tmp_path, ""), collective_workload(8, "all_reduce", SIZE))
    listed = simulate(_platform(tmp_path, "system: {collective_span: listed}\n"), collective_workload(8, "all_reduce", SIZE))
    # a ring all-reduce over 2 ranks at 10 GB/s moves 2 x (1/2) x (1 MiB / 4) = 262 kB there
    assert default.makespan_s - listed.makespan_s > SIZE / 4 / 10e9
