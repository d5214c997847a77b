"""Equivalent ranks found from graphs read from files (system/symmetry/equivalence.py): the
folded run gives every rank the rank-by-rank result bit for bit, and a rank that differs is
never folded."""

from dataclasses import replace

import numpy as np
import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.system.api import simulate
from trainsim.system.symmetry.equivalence import find_mirrors
from trainsim.workload.chakra import read_workload, write_workload
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model


def _platform(sizes, algorithm="ring", kinds=("Switch", "Switch"), algorithms=None):
    dims = tuple(DimSpec(k, s, bw, lat) for k, s, bw, lat in zip(kinds, sizes, (300e9, 25e9), (700.0, 2000.0), strict=False))
    algos = (algorithm,) * len(dims)
    impl = CollectiveImpl(*(algorithms or (algos, algos, algos, algos)))
    return Platform(network=NetworkSpec(dims), system=SystemSpec(implementations=impl))


def _written(tmp_path, tp, pp, dp, sizes, change=None, **platform):
    """A small generated step written to rank files and read back; ``change(graphs)`` edits
    the graphs before they are written; ``platform``: ``_platform``'s keywords."""
    spec = replace(get_model("megatron-1.7b"), layers=4, seq=512)
    par = Parallelism(tp=tp, pp=pp, dp=dp, micro_batch=1, global_batch=4 * dp, recompute="full")
    w = generate(spec, par, OperatorTimer("A100"), network_sizes=sizes)
    graphs = list(w.graphs)
    if change is not None:
        change(graphs)
    write_workload(tmp_path / "w", graphs)
    return w.platform(_platform(sizes, **platform)), read_workload(tmp_path / "w", len(graphs))


def _assert_folded_run_is_rank_by_rank(platform, graphs, compat):
    fast = simulate(platform, graphs, compat=compat)
    slow = simulate(platform, graphs, compat=compat, symmetry=False)
    assert list(fast.ranks) == list(slow.ranks)  # bit for bit
    assert fast.makespan_s == slow.makespan_s
    for a, b in zip(fast.timelines, slow.timelines, strict=True):
        assert a.start_ns == b.start_ns and a.end_ns == b.end_ns
    got = sorted((r.rank, r.node_id, r.start_ns, r.end_ns, r.group, tuple(r.dim_bytes)) for r in fast.collectives)
    assert got == sorted((r.rank, r.node_id, r.start_ns, r.end_ns, r.group, tuple(r.dim_bytes)) for r in slow.collectives)
    return fast


CASES = [(2, 2, 2, (4, 2)), (2, 2, 4, (8, 2)), (4, 1, 2, (4, 2)), (1, 2, 4, (2, 4))]


@pytest.mark.parametrize(("tp", "pp", "dp", "sizes"), CASES)
@pytest.mark.parametrize("compat", ["default", "astra"])
def test_folded_equals_rank_by_rank(tmp_path, tp, pp, dp, sizes, compat):
    platform, graphs = _written(tmp_path, tp, pp, dp, sizes)
    mirrors = find_mirrors(platform, graphs, compat_astra=compat == "astra")
    if compat == "default" and sizes == (2, 4):
        # the data-parallel ring 0, 1, 2, 3 crosses both dimensions from 1 to 2 and from 3 to
        # 0 but one from 0 to 1 (the default mode's path rule): its members are not equivalent
        assert mirrors == {}
        fast = simulate(platform, graphs, compat=compat)
        slow = simulate(platform, graphs, compat=compat, symmetry=False)
        assert "equivalent ranks folded" not in fast.info["symmetry"]
        assert list(fast.ranks) == list(slow.ranks)
        return
    # one rank per pipeline stage runs: its tensor-parallel peers and data-parallel replicas repeat it
    assert len(mirrors) == pp
    assert sum(len(ms) for ms in mirrors.values()) == tp * pp * dp - pp
    fast = simulate(platform, graphs, compat=compat)
    slow = simulate(platform, graphs, compat=compat, symmetry=False)
    assert "equivalent ranks folded" in fast.info["symmetry"]
    assert fast.info["ranks_simulated"] == pp
    assert list(fast.ranks) == list(slow.ranks)  # bit for bit
    assert fast.makespan_s == slow.makespan_s
    for a, b in zip(fast.timelines, slow.timelines, strict=True):
        assert a.graph is not None and a.start_ns == b.start_ns and a.end_ns == b.end_ns
    got = sorted((r.rank, r.node_id, r.start_ns, r.end_ns, r.group) for r in fast.collectives)
    want = sorted((r.rank, r.node_id, r.start_ns, r.end_ns, r.group) for r in slow.collectives)
    assert got == want


def _slower_compute(rank):
    def change(graphs):
        g = graphs[rank]
        comp = int(np.flatnonzero(g.types == 4)[0]) if (g.types == 4).any() else int(np.argmax(g.duration_s))
        duration = g.duration_s.copy()
        duration[comp] += 1e-3
        graphs[rank] = replace(g, duration_s=duration)

    return change


def test_a_rank_that_differs_is_not_folded(tmp_path):
    platform, graphs = _written(tmp_path, 2, 2, 2, (4, 2), change=_slower_compute(5))
    mirrors = find_mirrors(platform, graphs)
    folded = {m for ms in mirrors.values() for m in ms} | set(mirrors)
    assert 5 not in folded
    fast = simulate(platform, graphs)
    slow = simulate(platform, graphs, symmetry=False)
    assert list(fast.ranks) == list(slow.ranks)
    assert len({r.finish_s for r in slow.ranks}) > 1


def test_a_peer_on_another_path_is_not_folded(tmp_path):
    """Rank 1 sends to the other stage's rank of another offset: the paths differ, no renaming."""

    def change(graphs):
        g = graphs[1]
        dst = g.comm_dst.copy()
        sends = np.flatnonzero(g.types == 5)  # COMM_SEND_NODE
        if sends.size:
            dst[sends] = (dst[sends] + 1) % len(graphs)
        graphs[1] = replace(g, comm_dst=dst)

    platform, graphs = _written(tmp_path, 2, 2, 2, (4, 2))
    # the same workload with one rank's sends moved is refused as a whole (the proof fails)
    changed = list(graphs)
    change(changed)
    assert find_mirrors(platform, changed) == {} or 1 not in {m for ms in find_mirrors(platform, changed).values() for m in ms}


def test_asymmetric_algorithm_is_not_folded(tmp_path):
    platform, graphs = _written(tmp_path, 2, 2, 2, (4, 2))
    impl = CollectiveImpl(("doubleBinaryTree",) * 2, ("ring",) * 2, ("ring",) * 2, ("ring",) * 2)
    tree = replace(platform, system=replace(platform.system, implementations=impl))
    assert find_mirrors(tree, graphs) == {}


@pytest.mark.parametrize(("tp", "pp", "dp", "sizes"), CASES[:2])
def test_group_codes_give_the_classes_of_the_strings(tmp_path, tp, pp, dp, sizes):
    # read from templates, pg_name carries its codes (CodedNames); the classes found from them
    # are the classes found from the strings alone
    platform, graphs = _written(tmp_path, tp, pp, dp, sizes)
    assert all(getattr(g.pg_name, "codes", None) is not None for g in graphs)
    plain = [replace(g, pg_name=list(g.pg_name)) for g in graphs]
    for compat in (True, False):
        assert find_mirrors(platform, graphs, compat_astra=compat) == find_mirrors(platform, plain, compat_astra=compat)


@pytest.mark.parametrize(("tp", "dp", "sizes", "kinds", "classes"), [
    (2, 4, (8,), ("Ring",), {"astra": 2, "default": 0}),  # pairs: 0 -> 1 one way round, 1 -> 0 the other
    (4, 4, (16,), ("Ring",), {"astra": 4, "default": 0}),  # the last of 4 reaches the first the long way
    (2, 8, (16,), ("Ring",), {"astra": 2, "default": 0}),
    (4, 2, (4, 2), ("Ring", "Switch"), {"astra": 1, "default": 1}),  # a whole Ring dimension: a rotation
])  # fmt: skip
@pytest.mark.parametrize("compat", ["astra", "default"])
def test_ring_groups_fold_in_order(tmp_path, tp, dp, sizes, kinds, classes, compat):
    """On a Ring, a group of consecutive ranks is not seen alike by its members (no rotation
    maps it onto itself) and a data-parallel ring's offsets o and -o go opposite ways: the
    first maps in order, the second by rotation (no halving-doubling configured), so the
    data-parallel replicas fold (in ASTRA-sim's mode; the default mode's injection ports keep
    single-Ring steps from folding), and the folded run is the rank-by-rank one bit for bit."""
    platform, graphs = _written(tmp_path, tp, 1, dp, sizes, kinds=kinds)
    mirrors = find_mirrors(platform, graphs, compat_astra=compat == "astra")
    want = classes[compat]
    assert len(mirrors) == want and sum(len(ms) for ms in mirrors.values()) == (tp * dp - want if want else 0)
    fast = _assert_folded_run_is_rank_by_rank(platform, graphs, compat)
    assert ("equivalent ranks folded" in fast.info["symmetry"]) == (want > 0)


def test_halving_doubling_needs_o_and_minus_o_alike(tmp_path):
    """With halving-doubling configured a member talks to i + o or i - o by its index: on a
    Ring, where those go opposite ways, a rotated group is not the same, and the classes
    found are fewer (here none); the run is the rank-by-rank one either way."""
    hd = ("halvingDoubling",)
    platform, graphs = _written(tmp_path, 2, 1, 4, (8,), kinds=("Ring",), algorithms=(hd, hd, hd, hd))
    assert find_mirrors(platform, graphs, compat_astra=True) == {}
    _assert_folded_run_is_rank_by_rank(platform, graphs, "astra")


def _random_case(tmp_path, seed):
    import random

    rnd = random.Random(seed)
    kinds, sizes = rnd.choice([
        (("Ring",), (8,)), (("Ring",), (16,)), (("Ring", "Ring"), (4, 2)), (("Ring", "Switch"), (4, 4)),
        (("Switch", "Ring"), (2, 4)), (("FullyConnected", "Ring"), (4, 2)), (("Ring", "FullyConnected"), (2, 4)),
    ])  # fmt: skip
    world = int(np.prod(sizes))
    tp = rnd.choice([t for t in (1, 2, 4) if world % t == 0])
    pp = rnd.choice([p for p in (1, 2) if world % (tp * p) == 0])
    dp = world // (tp * pp)
    names = ("ring", "ring", "direct", "halvingDoubling")
    algorithms = tuple(tuple(rnd.choice(names) for _ in sizes) for _ in range(4))
    platform, graphs = _written(tmp_path, tp, pp, dp, sizes, kinds=kinds, algorithms=algorithms)
    return platform, graphs, rnd.choice(["astra", "default"])


@pytest.mark.parametrize("seed", range(8))
def test_random_ring_steps_fold_as_rank_by_rank(tmp_path, seed):
    platform, graphs, compat = _random_case(tmp_path, seed)
    _assert_folded_run_is_rank_by_rank(platform, graphs, compat)


@pytest.mark.fuzz
@pytest.mark.parametrize("seed", range(8, 80))
def test_more_random_ring_steps_fold_as_rank_by_rank(tmp_path, seed):
    test_random_ring_steps_fold_as_rank_by_rank(tmp_path, seed)
