"""Invariants of the collective runtime (hypothesis): bytes moved, physical lower bound,
monotonicity in bandwidth, Themis vs baseline, determinism, symmetric == rank by rank."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.astra_cases import run_collective
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import CommType

AR, AG, RS, A2A = (
    int(c)
    for c in (
        CommType.ALL_REDUCE,
        CommType.ALL_GATHER,
        CommType.REDUCE_SCATTER,
        CommType.ALL_TO_ALL,
    )
)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def platform(
    kinds, sizes, algo, *, splits=2, acpd=1, bw=50.0, inter="baseline", opt="localBWAware", E=10.0
):
    dims = tuple(DimSpec(k, n, bw * 2**30, 500.0) for k, n in zip(kinds, sizes, strict=True))
    impl = CollectiveImpl(*(((algo,) * len(sizes),) * 4))
    return Platform(
        NetworkSpec(dims),
        SystemSpec(
            endpoint_delay_ns=E,
            preferred_dataset_splits=splits,
            active_chunks_per_dimension=acpd,
            collective_optimization=opt,
            implementations=impl,
            inter_dimension_scheduling=inter,
            local_mem_bw=1600e9,
        ),
    )


one_dim = st.tuples(
    st.sampled_from(["Ring", "Switch", "FullyConnected"]),
    st.sampled_from([2, 4, 8]),
    st.sampled_from(["ring", "direct", "halvingDoubling"]),
    st.sampled_from([AR, AG, RS, A2A]),
    st.integers(1_000, 3_000_000),
    st.sampled_from([1, 2, 3]),
)


def _expected_bytes(algo, ctype, chunk, n):
    """Bytes one rank sends for one chunk on one dimension (D1-D3)."""
    if algo == "halvingDoubling":
        k = n.bit_length() - 1
        if ctype == AR:
            # down: D//2, then halved with truncation; back up from 2 * (last // 2), doubling (D3)
            down, s = [], chunk // 2
            for _ in range(k):
                down.append(s)
                s //= 2
            up = [2 * s * 2**i for i in range(k)]
            return sum(down) + sum(up)
        if ctype == RS:
            total, s = 0, chunk
            for _ in range(k):
                s //= 2
                total += s
            return total
        if ctype == AG:
            return sum(chunk * 2**i for i in range(k))
        return k * (chunk // 2)
    sends = {
        AR: 2 * (n - 1),
        RS: n - 1,
        AG: n - 1,
        A2A: n - 1 if algo == "direct" else n * (n - 1) // 2,
    }[ctype]
    msg = chunk if ctype == AG else chunk // n
    return sends * msg


def _run_one_dim(case, **kwargs):
    kind, n, algo, ctype, size, splits = case
    return run_collective(platform([kind], [n], algo, splits=splits), ctype, size, **kwargs)


@SETTINGS
@given(one_dim)
def test_bytes_sent_and_received_match_the_algorithm(case):
    kind, n, algo, ctype, size, splits = case
    finish, rt = _run_one_dim(case, symmetry=False)
    chunk = size // splits if not (ctype == AG and size // splits < n) else n
    chunks = -(-(size if ctype != AG or size // splits >= n else splits * n) // chunk)
    want = chunks * _expected_bytes(algo, ctype, chunk, n)
    sent = {r.rank: sum(r.dim_bytes) for r in rt.records}
    assert sent == dict.fromkeys(range(n), want)
    assert rt.network.bytes_sent == n * want  # every byte sent was received once


@SETTINGS
@given(one_dim)
def test_no_collective_beats_its_bandwidth_bound(case):
    kind, n = case[0], case[1]
    finish, rt = _run_one_dim(case, compat_astra=False)
    ports = {"Ring": 2, "Switch": 1, "FullyConnected": n - 1}[kind]
    bw = 50 * 2**30 / 1e9  # B/ns
    hop = {"Ring": 1, "Switch": 2, "FullyConnected": 1}[kind] * 500.0
    per_rank = max(sum(r.dim_bytes) for r in rt.records)
    assert min(finish) >= per_rank / (bw * ports) + hop - 1e-6


@SETTINGS
@given(one_dim, st.booleans())
def test_more_bandwidth_is_never_slower(case, compat):
    kind, n, algo, ctype, size, splits = case
    slow, _ = run_collective(
        platform([kind], [n], algo, splits=splits, bw=25.0), ctype, size, compat_astra=compat
    )
    fast, _ = run_collective(
        platform([kind], [n], algo, splits=splits, bw=100.0), ctype, size, compat_astra=compat
    )
    assert max(fast) <= max(slow)


multi_dim = st.tuples(
    st.lists(st.sampled_from(["Ring", "Switch", "FullyConnected"]), min_size=2, max_size=3),
    st.lists(st.sampled_from([2, 4]), min_size=3, max_size=3),
    st.sampled_from(["ring", "direct", "halvingDoubling"]),
    st.sampled_from([AR, AG, RS, A2A]),
    st.integers(10_000, 2_000_000),
    st.sampled_from([1, 2, 4]),
    st.sampled_from([1, 2]),
)


@SETTINGS
@given(multi_dim, st.booleans())
def test_symmetric_equals_rank_by_rank(case, compat):
    kinds, sizes, algo, ctype, size, splits, acpd = case
    sizes = sizes[: len(kinds)]
    p = platform(kinds, sizes, algo, splits=splits, acpd=acpd)
    a, rt_a = run_collective(p, ctype, size, compat_astra=compat, symmetry=True)
    b, rt_b = run_collective(p, ctype, size, compat_astra=compat, symmetry=False)
    assert rt_a.symmetric_runs == 1 and rt_b.symmetric_runs == 0
    assert a == b
    bytes_a = sorted((r.rank, tuple(r.dim_bytes)) for r in rt_a.records)
    bytes_b = sorted((r.rank, tuple(r.dim_bytes)) for r in rt_b.records)
    assert bytes_a == bytes_b


@SETTINGS
@given(multi_dim)
def test_results_identical_run_to_run(case):
    kinds, sizes, algo, ctype, size, splits, acpd = case
    p = platform(
        kinds, sizes[: len(kinds)], "doubleBinaryTree" if ctype == AR else algo, splits=splits
    )
    first = run_collective(p, ctype, size, symmetry=False)[0]
    assert run_collective(p, ctype, size, symmetry=False)[0] == first


def _themis_vs_baseline(sizes, bws, splits):
    dims = tuple(DimSpec("Switch", n, b * 2**30, 500.0) for n, b in zip(sizes, bws, strict=False))

    def run(inter):
        sysspec = SystemSpec(
            preferred_dataset_splits=splits,
            collective_optimization="localBWAware",
            implementations=CollectiveImpl(*((("ring",) * len(dims),) * 4)),
            inter_dimension_scheduling=inter,
        )
        return max(run_collective(Platform(NetworkSpec(dims), sysspec), AR, 64 * 2**20)[0])

    return run("themis"), run("baseline")


@pytest.mark.xfail(
    reason="known gap (docs/collectives.md): e.g. Switch 2 x Switch 8 at 25 GB/s, 16 chunks: "
    "Themis 7.9% slower than baseline",
    strict=False,
)
@SETTINGS
@given(
    st.lists(st.sampled_from([2, 4, 8, 16]), min_size=2, max_size=3),
    st.sampled_from([25.0, 50.0, 100.0, 200.0]),
    st.sampled_from([8, 16, 32]),
)
def test_themis_is_never_slower_than_baseline_on_equal_bandwidths(sizes, bw, splits):
    """The greedy keeps the baseline order while loads are within its threshold, then balances;
    on dimensions of equal bandwidth it loses at most a few percent (pipeline fill and drain,
    which its load model ignores: 2.6% on Switch 2 x Switch 4, 8 chunks)."""
    themis, baseline = _themis_vs_baseline(sizes, [bw] * 3, splits)
    assert themis <= 1.05 * baseline


@pytest.mark.xfail(
    strict=True,
    reason="known gap: Themis' load model ignores pipeline fill and drain; "
    "with few chunks and a slow small dimension it loses to baseline (docs/collectives.md)",
)
def test_themis_heterogeneous_bandwidth_gap():
    themis, baseline = _themis_vs_baseline([8, 4], [100.0, 25.0], 8)
    assert themis <= 1.05 * baseline
