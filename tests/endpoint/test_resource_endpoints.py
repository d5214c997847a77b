"""The resource-sharing endpoint models (``endpoint.shared``, ``endpoint.ace``) and the ideal
one: HBM traffic per network byte by hand, a compute kernel re-rated by a concurrent
collective by hand, ACE's SRAM split and spill, and the order ideal <= ACE <= baseline."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainsim.config.platform import dump_platform, parse_platform
from trainsim.endpoint.ace import AceEndpointSpec
from trainsim.endpoint.shared import SharedEndpointSpec
from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError
from trainsim.system.api import simulate
from trainsim.system.build import build_endpoint
from trainsim.workload.graph import GraphBuilder
from trainsim.workload.micro import collective_workload, data_parallel_workload, replicate

MiB = 2**20
SHARED = {
    "model": "shared",
    "compute_units": 10,
    "comm_units": 2,
    "comm_hbm_gbps": 200,
    "unit_bandwidth_gbps": 100,
}


def ring(
    n: int = 4,
    algo: str = "ring",
    endpoint: dict[str, Any] | None = None,
    bw: float = 100.0,
    ndims: int = 1,
) -> Any:
    """A ring of ``n`` (``ndims`` > 1: a torus of ``ndims`` such rings, localBWAware)."""
    data: dict[str, Any] = {
        "network": {
            "dims": [{"topology": "Ring", "size": n, "bandwidth_gbps": bw, "latency_ns": 500}]
            * ndims
        },
        "system": {
            "endpoint_delay_ns": 10,
            "local_mem_bw_gbps": 1000,
            "preferred_dataset_splits": 4,
            "all_reduce": [algo] * ndims,
            "reduce_scatter": [algo] * ndims,
            "all_gather": [algo] * ndims,
            "roofline_enabled": True,
            "peak_perf_tflops": 100,
        },
    }
    if ndims > 1:
        data["system"]["collective_optimization"] = "localBWAware"
    if endpoint is not None:
        data["endpoint"] = endpoint
    return parse_platform(data, "<test>")


@pytest.mark.parametrize("algo", ["ring", "direct"])
def test_hbm_traffic_per_step_by_hand(algo):
    """n = 4, S = 4 MiB. A reduce-scatter sends (n - 1) messages of S / n per rank (ring: one per
    step to the next rank; direct: one to each peer) and reduces each message received: per
    message the sender reads its buffer and the receiver writes the chunk (2 bytes per network
    byte), per reduction both operands are read and the sum written (3): 5 x 3 MiB. An
    all-gather of S / n per rank moves the same messages with no reduction: 2 x 3 MiB. An
    all-reduce is both: (5 + 2) / 2 = 3.5 per network byte."""
    platform = ring(4, algo, SHARED)
    expect = {
        "reduce_scatter": (3 * MiB, 5 * 3 * MiB),
        "all_gather": (3 * MiB, 2 * 3 * MiB),
        "all_reduce": (6 * MiB, 7 * 3 * MiB),
    }
    for collective, (net, hbm) in expect.items():
        size = MiB if collective == "all_gather" else 4 * MiB
        result = simulate(platform, collective_workload(4, collective, size))
        assert result.resources is not None
        for rank in result.resources:
            assert rank.network_bytes == net, collective
            assert rank.comm_hbm_bytes == hbm, collective
    assert result.resources[0].hbm_per_network_byte == 3.5


def _compute_and_collective(flops: float, nbytes: int, size: int) -> Any:
    """Every rank: one compute node and one all-reduce, both ready at t = 0."""
    b = GraphBuilder(source="<test>")
    b.add(0, NodeType.COMP_NODE, "kernel", num_ops=flops, tensor_size=nbytes)
    b.add(
        1, NodeType.COMM_COLL_NODE, "allreduce", comm_type=int(CommType.ALL_REDUCE), comm_size=size
    )
    return replicate(b.build(), 4)


def test_compute_bound_kernel_loses_the_collectives_units():
    """A compute-bound kernel of C = 1e10 FLOP / 100 TFLOP/s = 100 us beside an all-reduce that
    holds 2 of the 10 units from t = 0 to its end T: it runs at u = 0.8 until T (T x 0.8 of
    its work) and at full speed after, ending at T + C - 0.8 T."""
    result = simulate(ring(4, "ring", SHARED), _compute_and_collective(1e10, 0, 2 * MiB))
    t_end = result.collectives[0].end_ns
    c_ns = 1e10 / 100e12 * 1e9
    assert c_ns > 0.8 * t_end  # still running when the collective ends
    kernel_end = result.timelines[0].end_ns[0]
    assert kernel_end == pytest.approx(t_end + c_ns - 0.8 * t_end, rel=1e-12)
    assert result.resources[0].compute_slowdown == pytest.approx(kernel_end / c_ns, rel=1e-12)
    # ACE takes no units and this kernel touches no HBM: untouched; ideal likewise
    for endpoint in ({"model": "ace"}, {"model": "ideal"}):
        other = simulate(ring(4, "ring", endpoint), _compute_and_collective(1e10, 0, 2 * MiB))
        assert other.timelines[0].end_ns[0] == pytest.approx(c_ns, rel=1e-12)


def test_memory_bound_kernel_gets_the_hbm_left_over():
    """A memory-bound kernel (M = 8 MB / 1000 GB/s = 8 us; C = 1 us) beside an all-reduce whose
    HBM pipe moves at 200 GB/s while busy: during every busy stretch it gets 800 of the 1000
    GB/s, i.e. runs at D = max(C / 0.8, M / 0.8) = M / 0.8; while the collective is in flight
    with its pipe idle at D = max(C / 0.8, M) = M; after, at M. Integrating the pipe's logged
    busy stretches gives its end."""
    flops, nbytes = 1e8, 8_000_000
    result = simulate(ring(4, "ring", SHARED), _compute_and_collective(flops, nbytes, 2 * MiB))
    m_ns = nbytes / 1000e9 * 1e9
    busy: list[list[float]] = []
    for start, end, _b in sorted(result.resources[0].comm_hbm):
        if busy and start <= busy[-1][1]:
            busy[-1][1] = max(busy[-1][1], end)
        else:
            busy.append([start, end])
    t, left = 0.0, 1.0
    for start, end in busy:
        if left <= 0:
            break
        if start > t:  # idle stretch: full HBM
            step = min(start - t, left * m_ns)
            left -= step / m_ns
            t += step
            if left <= 0:
                break
        d = m_ns / 0.8
        step = min(end - t, left * d)
        left -= step / d
        t += step
    expect = t + left * m_ns
    assert busy and expect > m_ns
    assert result.timelines[0].end_ns[0] == pytest.approx(expect, rel=1e-9)
    hbm_moved = sum(b for _s, _e, b in result.resources[0].compute_hbm)
    assert hbm_moved == pytest.approx(nbytes, rel=1e-9)


def test_ace_splits_a_chunk_larger_than_its_sram():
    """8 MiB in 4 splits is 2 MiB chunks; an SRAM of 1 MiB for one chunk at a time cuts it
    into 8 chunks of 1 MiB; 4 MiB holds the 2 MiB chunks whole. With spill the chunks keep
    their size and the excess goes through HBM: more than the 2 x 8 MiB of one read and one
    write per chunk."""

    def run(**ace: Any) -> Any:
        return simulate(
            ring(4, "ring", {"model": "ace", "pipeline_chunks": 1, **ace}),
            collective_workload(4, "all_reduce", 8 * MiB),
        )

    small, big = run(sram_mib=1.0), run(sram_mib=4.0)
    assert small.collectives[0].chunks == 8 and big.collectives[0].chunks == 4
    assert small.resources[0].comm_hbm_bytes == big.resources[0].comm_hbm_bytes == 2 * 8 * MiB
    spilled = run(sram_mib=1.0, oversize="spill")
    assert spilled.collectives[0].chunks == 4
    assert spilled.resources[0].comm_hbm_bytes > 2 * 8 * MiB


def test_ace_split_holds_no_more_chunks_than_its_sram_regression():
    """8 MiB on a 4 x 4 torus of rings (reduce-scatter on the first, all-reduce on the second,
    all-gather on the first: localBWAware), SRAM 1 MiB for 2 chunks: 16 chunks of 512 KiB, of
    which at most 2 are in the engine at once (from a chunk's begin, its read, to its result's
    write): the third begins when the first is done. The planner's split alone let every
    chunk begin as the one before left the first dimension (8 MiB read into 1 MiB of SRAM, the
    first dimension's reduce-scatters queued ahead of the all-gathers): 16 in the engine."""
    ace = {"model": "ace", "sram_mib": 1.0, "pipeline_chunks": 2}
    result = simulate(ring(4, "ring", ace, ndims=2), collective_workload(16, "all_reduce", 8 * MiB))
    spans = result.collectives[0].chunk_spans
    assert result.collectives[0].chunks == len(spans) == 16
    for begin, _end in spans:
        assert sum(b <= begin < e for b, e in spans) <= 2
    ends = sorted(e for _b, e in spans)
    begins = sorted(b for b, _e in spans)
    assert all(begins[k] >= ends[k - 2] for k in range(2, 16))


def test_sections_load_dump_and_refuse_bad_values():
    for section in (
        SHARED,
        {"model": "ace", "sram_mib": 2.0, "oversize": "spill"},
        {"model": "ideal"},
    ):
        platform = ring(4, "ring", section)
        again = parse_platform(__import__("yaml").safe_load(dump_platform(platform)), "<again>")
        assert again.endpoint == platform.endpoint
    assert ring(4, "ring", SHARED).endpoint == SharedEndpointSpec(10, 2, 200e9, 100e9, None)
    assert ring(4, "ring", {"model": "ace"}).endpoint == AceEndpointSpec()
    for bad, match in (
        ({**SHARED, "comm_units": 10}, "comm_units 10 must be below compute_units 10"),
        ({**SHARED, "comm_hbm": 5}, "unknown key 'comm_hbm'"),
        ({"model": "ace", "oversize": "drop"}, "endpoint.oversize"),
        ({"model": "ace", "sram_mib": 0}, "endpoint.sram_mib"),
    ):
        with pytest.raises(ConfigError, match=match):
            ring(4, "ring", bad)
    # a share that leaves compute no HBM is refused when the model is built
    for bad in (
        {**SHARED, "comm_hbm_gbps": 1000, "comm_units": 9, "unit_bandwidth_gbps": 200},
        {"model": "ace", "dma_bandwidth_gbps": 1000},
    ):
        with pytest.raises(ConfigError, match="all of the rank's 1000 GB/s"):
            build_endpoint(ring(4, "ring", bad), False)


def _ordered(n: int, algo: str, bw: float, ace: dict[str, Any], base: dict[str, Any], graphs: Any):
    """Makespans (s) of ideal, ACE and the baseline on one network and system."""
    return [
        simulate(ring(n, algo, endpoint, bw), graphs).makespan_s
        for endpoint in ({"model": "ideal"}, ace, base)
    ]


def test_direct_all_reduce_waits_for_its_reductions_regression():
    """The counter-example of docs/ace.md, "Ordering": a direct all-reduce of 500 KiB on a
    ring of 8 at 200 GB/s. Under ASTRA-sim's gate a rank sends its reduced shard at the first
    go signal after the last first-half message arrives; the baseline, whose earlier
    reductions were still queued, got one at that arrival and sent before its own last
    reduction (18.640 us, ACE 18.744 us). With a resource endpoint the gate also waits for the
    reductions: ideal <= ACE <= baseline (18.560 <= 18.744 <= 20.560 us)."""
    graphs = collective_workload(8, "all_reduce", 500 * 1024)
    times = _ordered(8, "direct", 200.0, {"model": "ace"}, SHARED, graphs)
    assert [round(t * 1e9, 3) for t in times] == [18560.0, 18744.0, 20560.0]


def test_ace_all_gather_writes_only_what_it_received_regression():
    """An all-gather of 541 KiB per rank on a ring of 4 at 200 GB/s, ACE's DMA equal to the
    baseline's 200 GB/s of HBM: ACE reads the rank's shard and writes the 3 shards it
    received (the rank's own is in place), 4 x 541 KiB of HBM against the baseline's
    2 x 3 x 541 KiB; writing the whole 4-shard output made ACE slower than the baseline."""
    graphs = collective_workload(4, "all_gather", 541 * 1024)
    ace = {"model": "ace", "dma_bandwidth_gbps": 200, "sram_mib": 64}
    base = {**SHARED, "comm_units": 8, "unit_bandwidth_gbps": 25}
    result = simulate(ring(4, "ring", ace, 200.0), graphs)
    chunks = result.collectives[0].chunks
    assert result.resources is not None
    assert result.resources[0].comm_hbm_bytes == 4 * (541 * 1024 // chunks) * chunks
    times = _ordered(4, "ring", 200.0, ace, base, graphs)
    assert times[0] <= times[1] <= times[2]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.sampled_from([2, 4, 8]),
    algo=st.sampled_from(["ring", "direct"]),
    workload=st.sampled_from(["all_reduce", "reduce_scatter", "all_gather", "training"]),
    size_kib=st.integers(16, 8192),
    bw=st.sampled_from([50.0, 200.0, 400.0]),
    comm_units=st.integers(1, 8),
    unit_gbps=st.sampled_from([25.0, 50.0, 100.0]),
    comm_hbm_gbps=st.sampled_from([100.0, 200.0, 450.0]),
    dma_over=st.sampled_from([1.0, 1.0, 1.5]),
    alu_fast=st.booleans(),
)
def test_ideal_never_slower_than_ace_never_slower_than_baseline(
    n, algo, workload, size_kib, bw, comm_units, unit_gbps, comm_hbm_gbps, dma_over, alu_fast
):
    """On the same platform (docs/ace.md, "Ordering"): ideal <= ACE <= the baseline, where
    ACE's engine has at least the HBM bandwidth the baseline's collectives borrow (DMA =
    1 or 1.5 x the baseline's rate, min(comm_hbm, comm_units x unit bandwidth)), ALUs that
    reduce at least as fast as the baseline's 3 HBM bytes per reduced byte (rate / 3 or 1000
    GB/s), and an SRAM that holds the planner's chunks (64 MiB: no extra split, no spill)."""
    rate = min(comm_hbm_gbps, comm_units * unit_gbps)
    base = {
        **SHARED,
        "comm_units": comm_units,
        "unit_bandwidth_gbps": unit_gbps,
        "comm_hbm_gbps": comm_hbm_gbps,
    }
    ace = {
        "model": "ace",
        "dma_bandwidth_gbps": min(rate * dma_over, 999.0),
        "alu_bandwidth_gbps": 1000.0 if alu_fast else rate / 3,
        "sram_mib": 64.0,
    }
    if workload == "training":
        graphs = data_parallel_workload(n, 2, size_kib * 1024, forward_s=20e-6, backward_s=40e-6)
    else:
        graphs = collective_workload(n, workload, size_kib * 1024)
    times = _ordered(n, algo, bw, ace, base, graphs)
    assert times[0] <= times[1] * (1 + 1e-12)
    assert times[1] <= times[2] * (1 + 1e-12)


def test_astra_default_keeps_the_symmetric_paths():
    """Without an endpoint section the model is ASTRA-sim's (time invariant): the whole step
    still runs by a representative, and no resources are reported."""
    result = simulate(ring(4), collective_workload(4, "all_reduce", MiB))
    assert result.info["symmetry"] == "representative" and result.resources is None
    shared = simulate(ring(4, "ring", SHARED), collective_workload(4, "all_reduce", MiB))
    assert shared.info["symmetry"].startswith("off")
