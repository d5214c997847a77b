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
    if compat:
        assert a == b
    else:
        # exact arithmetic in float ns: rank by rank, same-tick port reservations happen in a
        # different order on different ranks, which moves finishes by < 0.01 ns (seen: 7e-4 ns
        # on Ring 2 x 2 x 4, halving-doubling, 2 active chunks)
        assert a == pytest.approx(b, abs=1e-2, rel=0)
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
        finish, rt = run_collective(Platform(NetworkSpec(dims), sysspec), AR, 64 * 2**20)
        return max(finish), rt

    return run("themis"), run("baseline")[0]


themis_cases = st.tuples(
    st.lists(
        st.tuples(
            st.sampled_from(["Ring", "Switch", "FullyConnected"]),
            st.sampled_from([2, 3, 4, 8, 16]),
            st.sampled_from([12.5, 25.0, 50.0, 100.0, 200.0]),
        ),
        min_size=2,
        max_size=3,
    ),
    st.sampled_from(["ring", "direct", "halvingDoubling"]),
    st.sampled_from([AR, AR, RS, AG]),
    st.integers(100_000, 64 * 2**20),
    st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
    st.sampled_from([1, 2]),
    st.sampled_from(["FIFO", "SCF"]),
    st.booleans(),
)


def _themis_platform(case, inter):
    dims, algo, _ctype, _size, splits, acpd, intra, _compat = case
    if algo == "halvingDoubling":
        dims = [(k, 1 << (n.bit_length() - 1), bw) for k, n, bw in dims]
    return Platform(
        NetworkSpec(tuple(DimSpec(k, n, bw * 2**30, 500.0) for k, n, bw in dims)),
        SystemSpec(
            preferred_dataset_splits=splits,
            active_chunks_per_dimension=acpd,
            collective_optimization="localBWAware",
            implementations=CollectiveImpl(*(((algo,) * len(dims),) * 4)),
            inter_dimension_scheduling=inter,
            intra_dimension_scheduling=intra,
        ),
    )


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(themis_cases)
def test_themis_is_never_slower_than_baseline(case):
    """Random 2-D / 3-D networks with unequal bandwidths, every chunk count, both modes: Themis'
    plan runs only when it is predicted to finish no later than the baseline's
    (system.themis_guard); for a collective alone on this backend the prediction is the
    symmetric run itself, so the bound is 0 ns."""
    ctype, size, compat = case[2], case[3], case[7]
    themis, rt = run_collective(_themis_platform(case, "themis"), ctype, size, compat_astra=compat)
    baseline, _ = run_collective(
        _themis_platform(case, "baseline"), ctype, size, compat_astra=compat
    )
    assert rt.symmetric_runs == 1
    assert max(themis) <= max(baseline)
    for choice in rt.themis_choices:  # the prediction is the result
        assert max(themis) == min(choice.themis_ns, choice.baseline_ns)


@pytest.mark.xfail(
    strict=True,
    reason="known gap (docs/collectives.md): rank by rank, exact same-tick ties between chunks "
    "entering a free dimension queue are broken in global event order, which differs by rank; "
    "with Themis' mixed orders the ranks then drift apart (Ring 2 x 3 x 2 at 12.5 GB/s, 2 chunks: "
    "6.4% slower than baseline, while the symmetric run is faster than baseline)",
)
def test_themis_rank_by_rank_equals_symmetric_under_exact_ties():
    case = (
        [("Ring", 2, 12.5), ("Ring", 3, 12.5), ("Ring", 2, 12.5)],
        "ring",
        AR,
        100_000,
        2,
        1,
        "FIFO",
        False,
    )
    p = _themis_platform(case, "themis")
    sym, _ = run_collective(p, AR, 100_000, compat_astra=False, symmetry=True)
    rbr, _ = run_collective(p, AR, 100_000, compat_astra=False, symmetry=False)
    assert rbr == sym


def test_themis_falls_back_where_the_greedy_loses():
    """The two counterexamples of the greedy alone (docs/collectives.md): the guard keeps the
    baseline plan, whose predicted finish is earlier."""
    for sizes, bws, splits, greedy_ns in (
        ([8, 4], [100, 25], 8, 1_488_597),
        ([2, 8], [25, 25], 16, 2_839_299),
    ):
        (themis, rt), baseline = _themis_vs_baseline(sizes, bws, splits)
        (choice,) = rt.themis_choices
        assert choice.themis_ns == greedy_ns and choice.baseline_ns == baseline
        assert not choice.themis_kept and themis == baseline
