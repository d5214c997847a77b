"""nccl-tests-style sweeps of one collective (issue 17): the columns' definitions checked by hand,
the all-gather's size read as nccl-tests reads it, and the size parser."""

from __future__ import annotations

import pytest

from trainsim.cli.collective_cmd import parse_size, parse_sizes
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import CommType
from trainsim.errors import ConfigError
from trainsim.system.api import simulate
from trainsim.system.collective_bench import bus_factor, collective_sweep
from trainsim.workload.micro import collective_workload

RING8 = Platform(network=NetworkSpec((DimSpec("Ring", 8, 50e9, 500.0),)))


def test_algbw_and_busbw_follow_nccl_tests():
    (point,) = collective_sweep(RING8, "all_reduce", [1 << 26], backend="congestion_unaware")
    alone = simulate(RING8, collective_workload(8, "all_reduce", 1 << 26)).makespan_s
    assert point.time_s == alone
    assert point.algbw == (1 << 26) / alone
    assert point.busbw == pytest.approx(point.algbw * 2 * 7 / 8)


def test_all_gather_size_is_the_output_buffer():
    (point,) = collective_sweep(RING8, "all_gather", [8 << 20], backend="congestion_unaware")
    piece = simulate(RING8, collective_workload(8, "all_gather", 1 << 20)).makespan_s
    assert point.time_s == piece
    assert point.busbw == pytest.approx(point.algbw * 7 / 8)


def test_bus_factors():
    assert bus_factor(CommType.ALL_REDUCE, 4) == 1.5
    assert bus_factor(CommType.REDUCE_SCATTER, 4) == 0.75
    assert bus_factor(CommType.BROADCAST, 4) == 1.0


def test_busbw_grows_towards_the_link_rate_with_size():
    points = collective_sweep(RING8, "reduce_scatter", [1 << 16, 1 << 30], backend="congestion_unaware")
    assert points[0].busbw < points[1].busbw


@pytest.mark.parametrize(
    ("text", "size"),
    [("32M", 32 << 20), ("1GiB", 1 << 30), ("500MB", 500_000_000), ("4096", 4096), ("1.5K", 1536), ("2kB", 2000)],
)
def test_parse_size(text, size):
    assert parse_size(text) == size


def test_parse_sizes():
    assert parse_sizes("32M..256M", 2) == [32 << 20, 64 << 20, 128 << 20, 256 << 20]
    assert parse_sizes("1K,4K", 2) == [1024, 4096]
    assert parse_sizes("1M..8M", 4) == [1 << 20, 4 << 20]


@pytest.mark.parametrize(("text", "factor"), [("x", 2), ("8M..1M", 2), ("1M..8M", 1), ("1..1T", 1.01), ("0.5", 2)])
def test_bad_sizes_are_config_errors(text, factor):
    with pytest.raises(ConfigError):
        parse_sizes(text, factor)


def test_a_size_below_a_byte_per_rank_is_refused():
    with pytest.raises(ConfigError, match="below one byte per rank"):
        collective_sweep(RING8, "all_gather", [4], backend="congestion_unaware")


def test_a_collective_without_bus_bandwidth_is_refused():
    with pytest.raises(ConfigError, match="no nccl-tests bandwidth"):
        collective_sweep(RING8, "barrier", [4], backend="congestion_unaware")


def test_a_long_sweep_reports_progress():
    """Each size's simulation tells ``progress`` (simulated ns, nodes done, nodes total) every
    100,000 events: a large machine's rank-by-rank run shows it is alive."""
    direct = SystemSpec(implementations=CollectiveImpl(("direct", "direct"), ("direct", "direct"), ("direct", "direct"), ("direct", "direct")))
    # direct sends through the switches to every member: rank by rank, over 100,000 events
    switches = Platform(network=NetworkSpec((DimSpec("Switch", 4, 50e9, 500.0), DimSpec("Switch", 128, 50e9, 500.0))), system=direct)
    heard: list[tuple[float, int, int]] = []
    (point,) = collective_sweep(switches, "all_reduce", [1 << 28], backend="congestion_aware", progress=lambda *a: heard.append(a))
    assert heard and all(total == 512 and 0 <= done <= 512 and 0 < now <= point.time_s * 1e9 for now, done, total in heard)
    assert [now for now, _, _ in heard] == sorted(now for now, _, _ in heard)
