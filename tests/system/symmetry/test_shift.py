"""The default mode's shift-exact memo (``system/symmetry/shift.py``): the theorem it rests on,
checked on random float programs, what spoils a trace, and the memoized fast path against the
rank-by-rank path and the unmemoized fast path, bit for bit (``==``, never approx), on the
symmetry test cases and on generated workloads."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.system.test_symmetry import SMALL, assert_same, platform, small_case
from trainsim.compute import OperatorTimer
from trainsim.config.types import DimSpec, NetworkSpec
from trainsim.config.types import Platform as PlatformSpec
from trainsim.system.api import simulate
from trainsim.system.symmetry import shift
from trainsim.system.symmetry.collective import SymmetricRunner
from trainsim.system.symmetry.replica import simulate_replica
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.micro import data_parallel_workload
from trainsim.workload.models import get_model

MiB = 2**20

# -- the theorem on random programs -----------------------------------------------------------

_consts = st.floats(min_value=-1e4, max_value=1e6, allow_nan=False, allow_infinity=False)
_ops = st.lists(
    st.tuples(st.sampled_from(["add", "sub", "radd", "max", "min", "diff", "lt"]), _consts, st.integers(0, 50)),
    min_size=1,
    max_size=40,
)


def _program(ops):
    """A straight-line-and-branches program over times: additions of constants, max / min and
    comparisons of earlier times, differences of two times added back as constants - the
    operations an event simulation does with its clock."""

    def run(start):
        times = [start]
        x = start
        for op, c, i in ops:
            y = times[i % len(times)]
            if op == "add":
                x = x + c
            elif op == "sub":
                x = x - c
            elif op == "radd":
                x = c + x
            elif op == "max":
                x = max(x, y)
            elif op == "min":
                x = min(x, y)
            elif op == "diff":
                x = x + (x - y) * 0.5  # a product of a difference: a constant, shift-free
            elif op == "lt" and x < y:
                x = x + 1.25
            times.append(x)
        return times

    return run


@settings(max_examples=300, deadline=None)
@given(
    ops=_ops,
    start=st.floats(min_value=1.0, max_value=1e13, allow_nan=False),
    frac=st.floats(min_value=0.0, max_value=1.0),
)
def test_a_clean_trace_replays_bit_for_bit_anywhere_it_fits(ops, start, frac):
    run = _program(ops)
    traced, rec = shift.trace(start, run)
    assert rec is not None
    assert [float.__float__(t) for t in traced] == run(start)  # the traced run is the plain run
    if not rec.ok:
        return
    lo, hi = rec.lo, rec.hi
    other = lo + math.floor((hi - lo) * frac)  # another start of the same binade
    other = min(max(other, lo), math.nextafter(hi, 0.0))
    replay = shift.Replay(rec, None)
    if not replay.fits(other):
        return
    plain = run(other)
    for t, got in zip(traced, plain, strict=True):
        off = shift.offset(t, rec)
        if off is not None:
            assert other + off == got  # exactly


def test_a_tie_spoils_the_trace():
    start = 2.0**40  # ulp 2**-12: adding half of it rounds to even, which depends on the start
    _, rec = shift.trace(start, lambda s: s + 2.0**-13)
    assert rec is not None and not rec.ok and "tie" in rec.why
    _, rec = shift.trace(start, lambda s: s + 3 * 2.0**-14)
    assert rec is not None and rec.ok


@pytest.mark.parametrize(
    ("run", "why"),
    [
        (lambda s: s * 2.0, "__mul__"),
        (lambda s: s + s, "two times added"),
        (lambda s: 5.0 - s, "subtracted from a constant"),
        (lambda s: s < 2.0**40 + 3.0, "compared with the constant"),
        (lambda s: {s: 1}, "hashed"),
        (lambda s: int(s), "__int__"),
        (lambda s: s + 2.0**40, "left the binade"),
    ],
)
def test_what_spoils_a_trace(run, why):
    _, rec = shift.trace(2.0**40 + 1.0, run)
    assert rec is not None and not rec.ok and why in rec.why


def test_comparisons_outside_the_binade_and_between_times_keep_it():
    def run(s):
        t = s + 3.5
        return (s > 0.0, s < math.inf, s != -1.0, t > s, max(s, 0.0), t - s)

    out, rec = shift.trace(2.0**40 + 1.0, run)
    assert rec is not None and rec.ok and out[5] == 3.5
    assert shift.trace(0.0, run)[1] is None  # no binade at 0: not traced


# -- the fast path, memoized, against rank by rank and unmemoized ---------------------------------


def _finishes(result):
    return [r.finish_s for r in result.ranks]


def _three_ways(plat, graphs, monkeypatch, **kw):
    """(memoized fast path, unmemoized fast path, rank by rank); the first two equal, bit for
    bit, and equal to the third where the fast path met no order-dependent tie."""
    memo = simulate(plat, graphs, **kw)
    with monkeypatch.context() as m:
        m.setattr(SymmetricRunner, "shift_exact", False)
        plain = simulate(plat, graphs, **kw)
    assert plain.info.get("shift_replays", 0) == 0
    slow = simulate(plat, graphs, symmetry=False, **kw)
    assert _finishes(memo) == _finishes(plain)
    assert_same(memo, plain)
    assert memo.info.get("symmetric_ties", 0) == plain.info.get("symmetric_ties", 0)
    if memo.info.get("symmetric_ties", 0) == 0:
        assert _finishes(memo) == _finishes(slow)
        assert_same(memo, slow)
    return memo, plain, slow


@pytest.mark.parametrize("name", list(SMALL))
def test_small_symmetry_cases_default_mode(name, monkeypatch):
    plat, graphs = small_case(name, "default")
    _three_ways(plat, graphs, monkeypatch)


@pytest.mark.parametrize(
    "dims",
    [[("Ring", 8)], [("Switch", 8)], [("Ring", 2), ("FullyConnected", 4)], [("Ring", 2), ("Switch", 4)]],
)
def test_repeated_all_reduces_replay_exactly(dims, monkeypatch):
    """Twelve layers of the same all-reduce: most start in one binade and are replayed."""
    plat = platform(dims, compat="default")
    graphs = data_parallel_workload(plat.network.npus, 12, 3 * MiB + 17)
    memo, _, _ = _three_ways(plat, graphs, monkeypatch)
    assert memo.info["shift_replays"] > 0


def _gen_platform(sizes):
    dims = tuple(DimSpec("Switch", s, bw, lat) for s, bw, lat in zip(sizes, (300e9, 25e9), (700.0, 2000.0), strict=False))
    return PlatformSpec(network=NetworkSpec(dims))


def _generated(tp, pp, dp, sizes, **extra):
    from dataclasses import replace

    spec = replace(get_model("megatron-1.7b"), layers=4, seq=512)
    par = Parallelism(tp=tp, pp=pp, dp=dp, micro_batch=1, global_batch=4 * dp, recompute="full", **extra)
    w = generate(spec, par, OperatorTimer("A100"), network_sizes=sizes)
    return w, w.platform(_gen_platform(sizes))


@pytest.mark.parametrize(
    ("tp", "pp", "dp", "sizes", "extra"),
    [
        (2, 2, 4, (8, 2), {}),
        (4, 1, 2, (4, 2), {}),
        (2, 2, 2, (4, 2), {"schedule": "interleaved", "virtual_stages": 2}),
    ],
)
def test_generated_workloads_memoized_equal_rank_by_rank(tp, pp, dp, sizes, extra, monkeypatch):
    w, plat = _generated(tp, pp, dp, sizes, **extra)
    memo, _, _ = _three_ways(plat, w.graphs, monkeypatch)
    assert memo.info["shift_replays"] > 0


def test_replica_slice_memoized_equals_unmemoized(monkeypatch):
    """The path of bench/generate_gpt3.py: a replica slice with tensor-parallel mirrors."""
    w, plat = _generated(4, 2, 2, (8, 2))
    memo = simulate_replica(plat, w)
    with monkeypatch.context() as m:
        m.setattr(SymmetricRunner, "shift_exact", False)
        plain = simulate_replica(plat, w)
    assert memo.makespan_s == plain.makespan_s
    assert memo.rank_results() == plain.rank_results()  # every field of every rank, exactly


def test_numpy_scalars_spoil_the_trace_from_either_side():
    import numpy as np

    for run in (lambda s: np.float64(3.5) + s, lambda s: s + np.float64(3.5), lambda s: np.float64(2.0**40 + 2) < s):
        _, rec = shift.trace(2.0**40 + 1.0, run)
        assert rec is not None and not rec.ok and "float64" in rec.why


def test_a_time_of_another_trace_is_not_a_time_of_this_one():
    kept, rec = shift.trace(2.0**40 + 1.0, lambda s: s + 1.5)
    assert rec is not None and rec.ok
    for run in (lambda s: kept + 2.0, lambda s: s - kept, lambda s: s < kept):
        _, other = shift.trace(2.0**40 + 7.0, run)
        assert other is not None and not other.ok and "another run" in other.why
    assert kept + 2.0 == 2.0**40 + 4.5  # outside any trace a time is its float


def test_a_duration_from_another_binade_is_not_exact_but_the_replay_is():
    """Why the memo is kept per binade: a duration measured from a start in one binade, added to
    a start in another (what a whole-ns memo does), differs from the simulated sum in the last
    bits; a run traced in the start's own binade replays exactly."""

    import random

    rng = random.Random(0)
    delays = [rng.uniform(0.0, 3000.0) for _ in range(14)]  # a ring all-reduce's 14 messages

    def run(s):
        for d in delays:
            s = s + d
        return s

    s0 = 2.0**20 + 0.123
    duration = run(s0) - s0
    s1 = 2.0**35 + 0.5
    first, rec = shift.trace(s1, run)
    assert rec is not None and rec.ok
    naive_wrong = 0
    for k in range(1, 200):
        other = s1 + k * 1234.5678901
        assert shift.Replay(rec, None).fits(other)
        assert other + shift.offset(first, rec) == run(other)  # the replay: exact
        naive_wrong += other + duration != run(other)
    assert naive_wrong > 0
