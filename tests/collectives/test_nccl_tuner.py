"""NCCL's tuning model (collectives/nccl_tuner.py): latencies and bandwidths by hand from
tuning.cc's constants, the protocol switch LL -> LL128 -> Simple with size, NVLS capped by the
switch's reduction rate, the algorithms enabled per fabric."""

from __future__ import annotations

import pytest

from trainsim.collectives.nccl_tuner import (
    ALL_GATHER,
    ALL_REDUCE,
    LL,
    LL128,
    NVLS,
    NVLS_TREE,
    RING,
    SIMPLE,
    TREE,
    NcclFabric,
    NcclTuner,
)
from trainsim.config.types import NcclSpec
from trainsim.errors import ConfigError

GB = 1e9
A100 = NcclFabric(ranks=8, nodes=1, intra_bw=300 * GB, inter_bw=float("inf"), inter_latency_s=0.0)
H100 = NcclFabric(ranks=8, nodes=1, intra_bw=450 * GB, inter_bw=float("inf"), inter_latency_s=0.0)


def _pair(tuner, coll, size, algo, proto):
    (c,) = [c for c in tuner.candidates(coll, size) if (c.algorithm, c.protocol) == (algo, proto)]
    return c


def test_ring_latency_and_bandwidth_by_hand():
    t = NcclTuner(A100, NcclSpec(arch="ampere"))
    # ring LL all-reduce on 8 GPUs: baseLat 6.6 us + 2(n-1) = 14 NVLink steps x 0.6 us
    tiny = _pair(t, ALL_REDUCE, 8, RING, LL)
    busbw_ll = 300 * GB * 0.8 / 4  # NVLink x 20/25, LL quarter (under llMaxBw 87.7 GB/s)
    assert tiny.predicted_s == pytest.approx(15.0e-6 + 8 / (busbw_ll * 8 / 14))
    # ring Simple: 8.4 + 14 x 3.4 us, algbw = 240 GB/s x n / 2(n-1)
    big = _pair(t, ALL_REDUCE, 1 << 30, RING, SIMPLE)
    assert big.algbw == pytest.approx(240 * GB * 8 / 14)
    assert big.time_s == pytest.approx((8.4 + 14 * 3.4) * 1e-6 + (1 << 30) / big.algbw)


def test_protocol_switches_ll_ll128_simple_as_size_grows():
    t = NcclTuner(A100, NcclSpec(arch="ampere"))
    picks = [t.choose(ALL_REDUCE, 1 << k) for k in range(3, 34)]
    protos = [c.protocol for c in picks]
    first = {p: protos.index(p) for p in (LL, LL128, SIMPLE)}
    assert first[LL] == 0 < first[LL128] < first[SIMPLE]
    # once a protocol gives way it does not come back
    assert protos == sorted(protos, key=[LL, LL128, SIMPLE].index)
    assert picks[-1].algorithm == RING


def test_busbw_rises_with_size_and_saturates_below_the_link():
    t = NcclTuner(A100, NcclSpec(arch="ampere"))
    busbw = [2 * 7 / 8 * (1 << k) / t.choose(ALL_REDUCE, 1 << k).time_s for k in range(3, 34)]
    assert all(b2 >= b1 for b1, b2 in zip(busbw, busbw[1:], strict=False))
    assert busbw[-1] < 300 * GB
    assert busbw[-1] / busbw[-3] < 1.01  # flat at the top


def test_nvls_is_capped_by_the_switch_reduction_rate():
    free = NcclTuner(H100, NcclSpec(arch="hopper", nvls=True))
    capped = NcclTuner(H100, NcclSpec(arch="hopper", nvls=True, nvls_reduce_bw=200 * GB))
    size = 8 << 30
    nvls_free = _pair(free, ALL_REDUCE, size, NVLS, SIMPLE)
    nvls_capped = _pair(capped, ALL_REDUCE, size, NVLS, SIMPLE)
    assert nvls_free.algbw == pytest.approx(450 * GB * 20.6 / 25 * 5 / 6)  # tuning.cc: x 5/6
    assert nvls_capped.algbw == 200 * GB
    # NCCL's tuner does not see the cap: it picks NVLS either way, the price differs
    assert free.choose(ALL_REDUCE, size).algorithm == capped.choose(ALL_REDUCE, size).algorithm == NVLS
    assert nvls_capped.predicted_s == nvls_free.predicted_s
    assert nvls_capped.time_s > nvls_free.time_s
    # NVLS latency: hwLat NVLink NVLS 23 us, no base latency
    assert _pair(free, ALL_REDUCE, 64, NVLS, SIMPLE).predicted_s == pytest.approx(23e-6, rel=1e-3)


def test_algorithms_enabled_per_fabric():
    one = NcclTuner(H100, NcclSpec(arch="hopper", nvls=True))
    two = NcclTuner(
        NcclFabric(16, 2, 450 * GB, 50 * GB, 2e-6), NcclSpec(arch="hopper", nvls=True, collnet=False)
    )
    algos_one = {c.algorithm for c in one.candidates(ALL_REDUCE, 1 << 20)}
    algos_two = {c.algorithm for c in two.candidates(ALL_REDUCE, 1 << 20)}
    assert NVLS in algos_one and NVLS_TREE not in algos_one
    assert NVLS_TREE in algos_two and NVLS not in algos_two
    assert {c.algorithm for c in one.candidates(ALL_GATHER, 1 << 20)} == {RING}
    no_nvls = NcclTuner(H100, NcclSpec(arch="hopper"))
    assert {c.algorithm for c in no_nvls.candidates(ALL_REDUCE, 1 << 20)} == {TREE, RING}
    only_simple = NcclTuner(A100, NcclSpec(protocols=("Simple",)))
    assert {c.protocol for c in only_simple.candidates(ALL_REDUCE, 8)} == {SIMPLE}


def test_multi_node_ring_pays_the_network_steps():
    lat = 5e-6
    t = NcclTuner(NcclFabric(16, 2, 300 * GB, 25 * GB, lat), NcclSpec(arch="ampere"))
    c = _pair(t, ALL_REDUCE, 8, RING, LL)
    # 2(n-1) = 30 steps, 2 x nodes = 4 across the network (hwLat 2.7 us + the 5 us link each),
    # 26 on NVLink at max(hwLat 0.6 us, net overhead 1 us) = 1 us each; baseLat 6.6 us
    assert c.predicted_s == pytest.approx((6.6 + 26 * 1.0 + 4 * (2.7 + 5.0)) * 1e-6, rel=1e-3)
    # ring bandwidth priced on the node's NIC aggregate: 8 x 25 GB/s
    big = _pair(t, ALL_REDUCE, 1 << 32, RING, SIMPLE)
    assert big.algbw == pytest.approx(200 * GB * 16 / 30)


def test_uneven_or_empty_fabric_is_refused():
    with pytest.raises(ConfigError):
        NcclTuner(NcclFabric(4, 8, 1.0, 1.0, 0.0), NcclSpec())
    with pytest.raises(ConfigError):
        NcclTuner(A100, NcclSpec()).choose("all_to_all", 1024)


def test_one_rank_costs_nothing():
    t = NcclTuner(NcclFabric(1, 1, 300 * GB, float("inf"), 0.0), NcclSpec())
    assert t.choose(ALL_REDUCE, 1 << 20).time_s == 0.0


def test_nccl_algo_restricts_the_choice():
    ring_only = NcclTuner(H100, NcclSpec(arch="hopper", nvls=True, algorithms=("ring",)))
    assert {c.algorithm for c in ring_only.candidates(ALL_REDUCE, 1 << 30)} == {RING}
    assert ring_only.choose(ALL_REDUCE, 8 << 30).algbw == pytest.approx(450 * GB * 20.6 / 25 * 8 / 14)
