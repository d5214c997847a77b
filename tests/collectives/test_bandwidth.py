"""nccl-tests' bandwidth figures (collectives.bandwidth): bus factors, sizes, algbw / busbw and
the injection bound, by hand."""

from __future__ import annotations

import pytest

from trainsim.collectives.bandwidth import (
    algbw,
    bandwidth_figures,
    bus_factor,
    injection_bandwidth,
    nccl_size,
)
from trainsim.enums import CommType as C


@pytest.mark.parametrize(
    ("ctype", "factor"),
    [
        (C.ALL_REDUCE, 2 * 7 / 8),
        (C.ALL_GATHER, 7 / 8),
        (C.REDUCE_SCATTER, 7 / 8),
        (C.ALL_TO_ALL, 7 / 8),
        (C.GATHER, 7 / 8),
        (C.SCATTER, 7 / 8),
        (C.BROADCAST, 1.0),
        (C.REDUCE, 1.0),
        (C.BARRIER, 0.0),
    ],
)
def test_bus_factors_of_nccl_tests(ctype, factor):
    assert bus_factor(int(ctype), 8) == pytest.approx(factor)


def test_one_rank_moves_nothing_and_bad_inputs_are_refused():
    assert bus_factor(int(C.ALL_REDUCE), 1) == 0.0
    with pytest.raises(ValueError, match="at least one rank"):
        bus_factor(int(C.ALL_REDUCE), 0)
    with pytest.raises(ValueError, match="unknown collective type 42"):
        bus_factor(42, 4)
    with pytest.raises(ValueError, match="positive"):
        algbw(100, 0.0)


def test_size_column_is_the_largest_buffer():
    assert nccl_size(int(C.ALL_GATHER), 1000, 8) == 8000  # comm_size is the per-rank input
    assert nccl_size(int(C.REDUCE_SCATTER), 8000, 8) == 8000
    assert nccl_size(int(C.ALL_REDUCE), 8000, 8) == 8000
    assert nccl_size(int(C.BARRIER), 8000, 8) == 0


def test_figures_by_hand():
    # 1 GB all-reduce on 8 ranks in 10 ms: algbw 100 GB/s, busbw 175 GB/s
    f = bandwidth_figures(int(C.ALL_REDUCE), 10**9, 8, 0.01, bound=200e9)
    assert f.algbw == pytest.approx(100e9)
    assert f.busbw == pytest.approx(175e9)
    assert f.ratio == pytest.approx(0.875)
    # all-gather of 125 MB per rank on 8 ranks in 10 ms: S = 1 GB, busbw 87.5 GB/s
    g = bandwidth_figures(int(C.ALL_GATHER), 125 * 10**6, 8, 0.01, bound=0.0)
    assert (g.size, g.busbw, g.ratio) == (10**9, pytest.approx(87.5e9), 0.0)


def test_injection_bandwidth_counts_outgoing_links():
    bw = 50e9
    assert injection_bandwidth(["Ring"], [8], [bw]) == 2 * bw
    assert injection_bandwidth(["Ring"], [2], [bw]) == bw
    assert injection_bandwidth(["Switch"], [8], [bw]) == bw
    assert injection_bandwidth(["FullyConnected"], [4], [bw]) == 3 * bw
    assert (
        injection_bandwidth(["Mesh", "Switch", "Ring"], [4, 1, 4], [bw, 7.0, 25e9]) == 2 * bw + 50e9
    )
