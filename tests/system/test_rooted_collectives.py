"""Reduce, gather, scatter, broadcast (simulated) and barrier (collectives.rooted): bytes each
rank must move, hand-computed finish times on small cases, lower bounds, groups and roots,
replayed vs simulated broadcast."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.system.test_collective_properties import platform
from trainsim.collectives.rooted import subtree_size, tree_children
from trainsim.config.types import Platform
from trainsim.engine import EventQueue
from trainsim.enums import CommType
from trainsim.network import AnalyticalNetwork
from trainsim.network.congestion_aware import CongestionAwareNetwork
from trainsim.system.collective_api import CollectiveRequest
from trainsim.system.collective_runtime import CollectiveRuntime

REDUCE, GATHER, SCATTER, BROADCAST, BARRIER = (
    int(c)
    for c in (
        CommType.REDUCE,
        CommType.GATHER,
        CommType.SCATTER,
        CommType.BROADCAST,
        CommType.BARRIER,
    )
)
ROOTED = [REDUCE, GATHER, SCATTER, BROADCAST]
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BPNS = 50 * 2**30 / 1e9  # bytes per ns of platform()'s links
LAT = 500.0
E = 10.0


def simulate_broadcast(p: Platform) -> Platform:
    return dataclasses.replace(p, system=dataclasses.replace(p.system, broadcast="simulate"))


def run(
    p: Platform,
    ctype: int,
    size: int,
    *,
    group: tuple[int, ...] | None = None,
    compat: bool = True,
    aware: bool = False,
    duration_ns: float = 0.0,
    symmetry: bool = True,
) -> tuple[dict[int, float], CollectiveRuntime]:
    """Issue one collective on every member at t = 0; every member's finish ns."""
    queue = EventQueue()
    net_cls = CongestionAwareNetwork if aware else AnalyticalNetwork
    network = net_cls(p.network, queue, compat_astra=compat)
    rt = CollectiveRuntime(p, network, queue, compat_astra=compat, symmetry=symmetry)
    members = group if group is not None else tuple(range(p.network.npus))
    finish: dict[int, float] = {}
    for rank in members:
        req = CollectiveRequest(
            rank, 7, ctype, size, group, "g" if group else "", None, duration_ns=duration_ns
        )
        rt.issue(req, lambda r: finish.__setitem__(r, queue.now), rank)
    queue.run()
    assert sorted(finish) == sorted(members)
    return finish, rt


def net(nbytes: int, hops: int = 1) -> float:
    """Compat-mode delay of one message (astra-sim-semantics.md A1)."""
    return float(math.trunc(hops * LAT + nbytes / BPNS))


# -- what each rank must send ---------------------------------------------------------------

TREE_OF = {"ring": "chain", "direct": "star", "halvingDoubling": "binomial"}


def _kids(kind: str, r: int, n: int) -> list[int]:
    """Children by definition: chain r+1; star: the root's n-1; binomial: r + 2^j below r's
    lowest set bit (the root: every 2^j < n)."""
    if kind == "chain":
        return [r + 1] if r + 1 < n else []
    if kind == "star":
        return list(range(1, n)) if r == 0 else []
    low = r & -r if r else 1 << n.bit_length()
    return [r + m for m in (1 << j for j in range(n.bit_length())) if m < low and r + m < n]


def _subtree(kind: str, r: int, n: int) -> int:
    return 1 + sum(_subtree(kind, c, n) for c in _kids(kind, r, n))


def test_tree_shapes_match_their_definitions():
    for kind in ("chain", "star", "binomial"):
        for n in range(1, 20):
            for r in range(n):
                assert sorted(tree_children(kind, r, n)) == _kids(kind, r, n)
                assert subtree_size(kind, r, n) == _subtree(kind, r, n)
    # binomial on 8 (MPICH): 0 -> 4, 2, 1; 4 -> 6, 5; 6 -> 7; 2 -> 3
    assert tree_children("binomial", 0, 8) == [4, 2, 1]
    assert tree_children("binomial", 4, 8) == [6, 5]


def expected_sent(
    ctype: int, algo: str, sizes: list[int], chunks: list[int]
) -> dict[int, list[int]]:
    """rank -> bytes sent per dimension, from the tree definitions and the plan (root rank 0,
    dims ascending; scatter descending; a ring takes part when its coordinates on the dims
    the data has not reached / already left are 0)."""
    kind = TREE_OF[algo]
    npus = math.prod(sizes)
    out = {rank: [0] * len(sizes) for rank in range(npus)}
    strides = [math.prod(sizes[:d]) for d in range(len(sizes))]
    order = list(range(len(sizes)))
    if ctype == SCATTER:
        order.reverse()
    for c in chunks:
        for i, d in enumerate(order):
            n = sizes[d]
            if n == 1:
                continue
            zero = order[i + 1 :] if ctype in (BROADCAST, SCATTER) else order[:i]
            if ctype == GATHER:
                size = c * math.prod(sizes[e] for e in order[:i])
            elif ctype == SCATTER:
                size = c * math.prod(sizes[e] for e in order[i:]) // n
            else:
                size = c
            for rank in range(npus):
                if any((rank // strides[e]) % sizes[e] for e in zero):
                    continue
                r = (rank // strides[d]) % n
                if ctype == BROADCAST:
                    sent = size * len(_kids(kind, r, n))
                elif ctype == REDUCE:
                    sent = size if r else 0
                elif ctype == GATHER:
                    sent = size * _subtree(kind, r, n) if r else 0
                else:
                    sent = size * (_subtree(kind, r, n) - 1)
                out[rank][d] += sent
    return out


multi = st.tuples(
    st.lists(st.sampled_from(["Ring", "Switch", "FullyConnected"]), min_size=1, max_size=3),
    st.lists(st.sampled_from([2, 3, 4, 5]), min_size=3, max_size=3),
    st.sampled_from(["ring", "direct", "halvingDoubling"]),
    st.sampled_from(ROOTED),
    st.integers(1_000, 1_000_000),
    st.sampled_from([1, 2, 3]),
    st.booleans(),
)


def case_platform(case: tuple, bw: float = 50.0) -> tuple[Platform, list[int]]:
    """The platform of a ``multi`` case (broadcast simulated) and its dimension sizes."""
    kinds, sizes, algo, _ctype, _size, splits, _compat = case
    sizes = sizes[: len(kinds)]
    return simulate_broadcast(platform(kinds, sizes, algo, splits=splits, bw=bw)), sizes


@SETTINGS
@given(multi)
def test_bytes_sent_per_rank_and_dimension_match_the_algorithm(case):
    _kinds, _sizes, algo, ctype, size, splits, compat = case
    p, sizes = case_platform(case)
    finish, rt = run(p, ctype, size, compat=compat)
    npus = math.prod(sizes)
    per_rank = size // npus if ctype in (GATHER, SCATTER) else size
    if compat:
        chunk = max(per_rank // splits, 1)
        chunks = [chunk] * -(-per_rank // chunk)
    else:
        count = min(splits, per_rank)
        base, extra = divmod(per_rank, count)
        chunks = [base + 1] * extra + [base] * (count - extra)
    want = expected_sent(ctype, algo, sizes, chunks)
    assert {r.rank: r.dim_bytes for r in rt.records} == want
    assert rt.network.bytes_sent == sum(map(sum, want.values()))  # every byte sent arrived once
    # what the collective must deliver: each non-root receives the buffer once (broadcast);
    # each non-root's partial sum leaves it once, whatever the dims (reduce)
    total = sum(chunks)
    if ctype == BROADCAST:
        assert rt.network.bytes_sent == (npus - 1) * total
    if ctype == REDUCE:
        assert {r: sum(b) for r, b in want.items()} == {r: total if r else 0 for r in range(npus)}


# -- finish times by hand (compat mode: whole-ns delays, unbounded injection) ---------------


def test_chain_broadcast_on_ring4_one_chunk():
    D = 1 << 20
    finish, _ = run(simulate_broadcast(platform(["Ring"], [4], "ring", splits=1)), BROADCAST, D)
    # root E, then every hop: net + E
    assert finish == {0: E, 1: 2 * E + net(D), 2: 3 * E + 2 * net(D), 3: 4 * E + 3 * net(D)}


def test_chain_broadcast_pipelines_chunks():
    D = 1 << 20
    p = simulate_broadcast(platform(["Ring"], [4], "ring", splits=2))
    finish, _ = run(p, BROADCAST, D)
    c = D // 2
    # chunk 1 follows chunk 0 one endpoint delay behind at every hop (sending is free)
    assert max(finish.values()) == 5 * E + 3 * net(c)


def test_chain_reduce_on_ring4():
    D = 1 << 20
    finish, rt = run(platform(["Ring"], [4], "ring", splits=1), REDUCE, D)
    red = 3 * math.trunc(D / 1600e9 * 1e9)  # astra-sim-semantics.md B2
    assert finish[3] == E
    assert finish[0] == 4 * E + 3 * net(D) + 3 * red
    assert [sum(r.dim_bytes) for r in sorted(rt.records, key=lambda r: r.rank)] == [0, D, D, D]


def test_binomial_broadcast_on_switch4():
    D = 1 << 20
    p = simulate_broadcast(platform(["Switch"], [4], "halvingDoubling", splits=1))
    finish, _ = run(p, BROADCAST, D)
    hop = net(D, 2)
    # root -> 2 and 1 at E; 2 -> 3 after its own E
    assert finish == {0: E, 1: 2 * E + hop, 2: 2 * E + hop, 3: 3 * E + 2 * hop}


def test_chain_gather_on_ring3_forwards_block_by_block():
    block = 1 << 16
    finish, rt = run(platform(["Ring"], [3], "ring", splits=1), GATHER, 3 * block)
    assert finish == {2: E, 1: 2 * E + net(block), 0: 3 * E + 2 * net(block)}
    assert {r.rank: sum(r.dim_bytes) for r in rt.records} == {0: 0, 1: 2 * block, 2: block}


def test_star_scatter_default_mode_serializes_the_roots_uplink():
    block = 1 << 16
    finish, _ = run(platform(["Switch"], [4], "direct", splits=1), SCATTER, 4 * block, compat=False)
    t = block / BPNS
    # three blocks leave one uplink back to back, each then takes 2 latencies + t
    assert max(finish.values()) == pytest.approx(2 * E + 2 * LAT + 3 * t)
    assert finish[0] == E


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_dissemination_barrier_on_switch(n):
    p = platform(["Switch"], [n], "ring")
    rounds = (n - 1).bit_length()
    finish, rt = run(p, BARRIER, 0, symmetry=False)
    assert set(finish.values()) == {E + rounds * (2 * LAT + E)}
    assert rt.network.bytes_sent == 0 and rt.network.messages_sent == n * rounds
    finish_sym, rt = run(p, BARRIER, 0)
    assert finish_sym == finish and rt.symmetric_runs == 1


def test_barrier_on_two_dimensions_is_one_barrier_per_dimension():
    finish, _ = run(platform(["Ring", "Switch"], [4, 2], "direct"), BARRIER, 123)
    ring4 = E + (LAT + E) + (2 * LAT + E)  # distances 1 and 2 on a ring of 4
    assert set(finish.values()) == {ring4 + E + (2 * LAT + E)}  # each phase opens with E


@SETTINGS
@given(multi)
def test_barrier_symmetric_equals_rank_by_rank(case):
    kinds, sizes, algo, *_ = case
    p = platform(kinds, sizes[: len(kinds)], algo)
    a, rt = run(p, BARRIER, 0, symmetry=True)
    b, _ = run(p, BARRIER, 0, symmetry=False)
    assert a == b and rt.symmetric_runs == 1


# -- lower bounds and monotonicity (default mode) ----------------------------------------------


@SETTINGS
@given(multi)
def test_no_rooted_collective_beats_its_bounds(case):
    kinds, _sizes, _algo, ctype, size, _splits, _ = case
    p, sizes = case_platform(case)
    finish, rt = run(p, ctype, size, compat=False)
    npus = math.prod(sizes)
    # injection: no rank sends faster than all its ports at once (Ring 2, Switch 1, FC n-1)
    ports = sum(
        {"Ring": 2, "Switch": 1, "FullyConnected": n - 1}[k]
        for k, n in zip(kinds, sizes, strict=True)
    )
    per_rank = max(sum(r.dim_bytes) for r in rt.records)
    assert max(finish.values()) >= per_rank / (BPNS * ports) - 1e-6
    # every rank but the root waits for at least one message
    if npus > 1:
        assert max(finish.values()) >= LAT


@SETTINGS
@given(
    st.sampled_from([2, 4, 8]),
    st.sampled_from(["ring", "direct", "halvingDoubling"]),
    st.integers(10_000, 2_000_000),
)
def test_gather_root_downlink_bound_on_the_congestion_aware_switch(n, algo, size):
    """The root's downlink carries the n-1 foreign blocks: no gather ends before that."""
    p = platform(["Switch"], [n], algo)
    finish, _ = run(p, GATHER, size, compat=False, aware=True)
    block = size // n
    assert finish[0] >= (n - 1) * block / BPNS + 2 * LAT - 1e-6


@SETTINGS
@given(multi)
def test_more_bandwidth_is_never_slower_for_rooted_collectives(case):
    ctype, size, compat = case[3], case[4], case[6]
    slow = run(case_platform(case, 25.0)[0], ctype, size, compat=compat)[0]
    fast = run(case_platform(case, 100.0)[0], ctype, size, compat=compat)[0]
    assert max(fast.values()) <= max(slow.values())


# -- roots, groups, broadcast modes ----------------------------------------------------------------


def test_root_is_the_groups_first_member():
    p = simulate_broadcast(platform(["Ring", "Switch"], [4, 2], "direct", splits=1))
    group = (5, 0, 3)
    # a group is one ring in the listed order; a two-entry list forces ring, i.e. a chain
    finish, rt = run(p, BROADCAST, 3000, group=group)
    sent = {r.rank: sum(r.dim_bytes) for r in rt.records}
    assert sent == {5: 3000, 0: 3000, 3: 0}
    assert finish[5] == min(finish.values())
    finish, rt = run(p, REDUCE, 3000, group=group)
    assert {r.rank: sum(r.dim_bytes) for r in rt.records} == {5: 0, 0: 3000, 3: 3000}
    assert finish[5] == max(finish.values())
    star = simulate_broadcast(platform(["Ring"], [8], "direct", splits=1))
    _, rt = run(star, BROADCAST, 3000, group=group)
    assert {r.rank: sum(r.dim_bytes) for r in rt.records} == {5: 6000, 0: 0, 3: 0}


def test_broadcast_is_replayed_unless_asked_to_simulate():
    p = platform(["Ring"], [4], "ring")
    finish, rt = run(p, BROADCAST, 1 << 20, duration_ns=12345.0)
    assert set(finish.values()) == {12345.0} and rt.network.bytes_sent == 0
    finish, rt = run(simulate_broadcast(p), BROADCAST, 1 << 20, duration_ns=12345.0)
    assert rt.network.bytes_sent == 3 << 20 and max(finish.values()) != 12345.0


def test_rooted_results_identical_run_to_run():
    p = simulate_broadcast(
        platform(["Ring", "Switch", "FullyConnected"], [3, 4, 2], "halvingDoubling", splits=3)
    )
    for ctype in ROOTED:
        assert run(p, ctype, 777_777, compat=False)[0] == run(p, ctype, 777_777, compat=False)[0]


# -- records for reports -----------------------------------------------------------------------


def test_records_name_algorithms_and_nest_chunk_spans():
    from trainsim.system.collective_report import record_bandwidth

    p = simulate_broadcast(platform(["Ring", "Switch"], [4, 2], "direct", splits=3))
    for ctype, names in (
        (0, ["direct", "direct"]),
        (BROADCAST, ["star", "star"]),
        (BARRIER, ["dissemination"] * 2),
    ):
        _, rt = run(p, ctype, 3 << 20, symmetry=False)
        for rec in rt.records:
            assert rec.algorithms == names and rec.group_size == 8
            chunks = len(rec.chunk_spans)
            assert chunks == rec.chunks == (1 if ctype == BARRIER else 3)
            starts = [s for s, _ in rec.chunk_spans if s >= 0]
            ends = [e for _, e in rec.chunk_spans if e >= 0]
            assert all(rec.start_ns <= s <= e <= rec.end_ns for s, e in rec.chunk_spans if s >= 0)
            assert starts == sorted(starts) and max(ends) == rec.end_ns
    _, rt = run(p, BROADCAST, 3 << 20)
    assert rt.records[0].chunk_spans[0] == [0.0, 2 * E]  # the root: one E per dimension
    _, rt = run(platform(["Ring"], [4], "ring"), BROADCAST, 100, duration_ns=50.0)
    assert rt.records[0].algorithms == ["replay"]
    # bandwidth of a symmetric all-reduce record: ring on a Switch drives the uplink nearly
    # all the time for a large buffer
    sw = platform(["Switch"], [8], "ring", splits=4)
    _, rt = run(sw, 0, 1 << 30, compat=False)
    rec = rt.records[0]
    assert rec.chunk_spans == rt.records[5].chunk_spans  # copied to every member
    fig = record_bandwidth(rec, sw.network)
    assert fig.bound == sw.network.dims[0].bandwidth
    assert 0.95 < fig.ratio <= 1.0
    assert fig.busbw == pytest.approx(fig.algbw * 2 * 7 / 8)
