"""Communicator-group collectives by a representative member (``system/symmetry/group.py``)
against rank by rank, exactly: ``simulate(symmetry="strict")`` equals ``symmetry=False`` for
every rank (finish, compute, communication and exposed times, node timelines, collective
records), and the default ``symmetry=True`` too whenever it met no order-dependent tie (the
policy of tests/system/test_symmetry.py). Random small networks, aligned and non-aligned
groups, unsorted member lists, every symmetric algorithm, both modes."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.system.test_symmetry import MiB, assert_same, platform
from trainsim.enums import NodeType
from trainsim.system.api import simulate
from trainsim.workload.graph import GraphBuilder

_TYPES = (0, 2, 6, 7)  # all-reduce, all-gather, all-to-all, reduce-scatter


def _partition(npus: int, rng: random.Random, how: str) -> list[tuple[int, ...]]:
    """Groups covering the machine: consecutive blocks (aligned), strided, or shuffled."""
    sizes = [s for s in (2, 4, 8) if s < npus and npus % s == 0] or [npus]
    size = rng.choice(sizes)
    ranks = list(range(npus))
    if how == "strided":
        stride = npus // size
        return [tuple(range(i, npus, stride)) for i in range(stride)]
    if how == "shuffled":
        rng.shuffle(ranks)
    groups = [tuple(ranks[i : i + size]) for i in range(0, npus, size)]
    if how == "reversed":
        groups = [tuple(reversed(g)) for g in groups]
    return groups


def _workload(npus: int, seed: int, layers: int, overlap: bool):
    """Per rank: compute, then a collective on its group of partition A, compute, one on its
    group of partition B, ... Compute durations differ by group (so groups issue at different
    ticks) and, for one rank in a while, within a group (so that group runs rank by rank).
    ``overlap``: a second collective without a dependency on the first."""
    rng = random.Random(seed)
    groups: dict[str, tuple[int, ...]] = {}
    plan = []
    for layer in range(layers):
        how = rng.choice(["aligned", "strided", "shuffled", "reversed"])
        part = _partition(npus, rng, how)
        for g, members in enumerate(part):
            groups[f"l{layer}g{g}"] = members
        plan.append((part, rng.choice(_TYPES), rng.choice([MiB // 4, MiB, 3 * MiB + 17]), rng.random() < 0.2))
    graphs = []
    for r in range(npus):
        b = GraphBuilder()
        nid = 0
        prev = None
        for layer, (part, ctype, size, skew) in enumerate(plan):
            g = next(i for i, m in enumerate(part) if r in m)
            slow = skew and r == part[g][-1]
            b.add(nid, NodeType.COMP_NODE, "c", duration_s=(1 + g + layer + (0.5 if slow else 0)) * 1e-6, data_deps=[] if prev is None else [prev])
            b.add(nid + 1, NodeType.COMM_COLL_NODE, "x", comm_type=ctype, comm_size=size, data_deps=[nid], pg_name=f"l{layer}g{g}")
            if overlap and layer == 0:
                b.add(nid + 2, NodeType.COMM_COLL_NODE, "y", comm_type=0, comm_size=MiB, data_deps=[nid], pg_name=f"l{layer}g{g}")
                prev = nid + 2
                nid += 3
            else:
                prev = nid + 1
                nid += 2
        graphs.append(b.build())
    return groups, graphs


def _both(plat, graphs):
    strict = simulate(plat, graphs, symmetry="strict")
    slow = simulate(plat, graphs, symmetry=False)
    assert_same(strict, slow)
    fast = simulate(plat, graphs, symmetry=True)
    if fast.info["symmetric_ties"] == 0:
        assert_same(fast, slow)
    return fast, slow


def _plat(dims, algo, groups, **kw):
    return platform(dims, algo, groups=groups, **kw)


def test_aligned_tensor_parallel_groups_take_the_group_path():
    dims = [("Switch", 4), ("Ring", 4)]
    groups, graphs = _workload(16, 3, 3, False)
    fast, _ = _both(_plat(dims, "ring", groups), graphs)
    assert "group symmetry off" not in fast.info["symmetry"]


def test_overlapping_collectives_are_refused():
    """The executor runs one collective per rank at a time (ASTRA-sim's workload layer), so a
    member cannot overlap two; a runtime driven directly raises the internal conflict that
    makes ``api.simulate`` rerun without group symmetry."""
    import pytest

    from trainsim.engine import EventQueue
    from trainsim.network.analytical import AnalyticalNetwork
    from trainsim.system.collective_api import CollectiveRequest
    from trainsim.system.collective_runtime import CollectiveRuntime
    from trainsim.system.symmetry.group import GroupSymmetryConflict

    plat = _plat([("Ring", 4), ("Switch", 2)], "ring", {})
    q = EventQueue()
    net = AnalyticalNetwork(plat.network, q)
    rt = CollectiveRuntime(plat, net, q, group_symmetry=True)
    group = (0, 1, 2, 3)
    for r in group:
        rt.issue(CollectiveRequest(r, 1, 0, MiB, group, "g", None), lambda _a: None)
    q.schedule(1.0, lambda _a: rt.issue(CollectiveRequest(0, 2, 0, MiB, (0, 4), "h", None), lambda _b: None), None)
    with pytest.raises(GroupSymmetryConflict):
        q.run()


def test_group_path_runs_and_counts():
    """The runtime really uses the path (and the runs equal rank by rank, above)."""
    from trainsim.engine import EventQueue
    from trainsim.network.analytical import AnalyticalNetwork
    from trainsim.system.build import build_compute, build_memory
    from trainsim.system.collective_runtime import CollectiveRuntime
    from trainsim.system.executor import Executor

    groups = {f"g{i}": tuple(range(4 * i, 4 * i + 4)) for i in range(4)}
    graphs = []
    for r in range(16):
        b = GraphBuilder()
        b.add(0, NodeType.COMP_NODE, "c", duration_s=(1 + r // 4) * 1e-6)
        b.add(1, NodeType.COMM_COLL_NODE, "x", comm_type=0, comm_size=MiB, data_deps=[0], pg_name=f"g{r // 4}")
        graphs.append(b.build())
    plat = _plat([("Ring", 4), ("Switch", 4)], "ring", groups)
    q = EventQueue()
    net = AnalyticalNetwork(plat.network, q)
    rt = CollectiveRuntime(plat, net, q, group_symmetry=True)
    Executor(plat, graphs, net, q, memory=build_memory(plat, q, False), compute=build_compute(plat, False), collectives=rt).run()
    assert rt._groups is not None and rt._groups.runs == 4
    _both(plat, graphs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dims=st.lists(st.tuples(st.sampled_from(["Ring", "Switch", "FullyConnected"]), st.sampled_from([2, 3, 4])), min_size=1, max_size=3),
    algo=st.sampled_from(["ring", "direct", "halvingDoubling"]),
    seed=st.integers(0, 10**6),
    layers=st.integers(1, 3),
    splits=st.integers(1, 5),
    acpd=st.integers(1, 2),
    compat=st.sampled_from(["astra", "default"]),
    overlap=st.booleans(),
)
def test_random_groups_fast_equals_rank_by_rank(dims, algo, seed, layers, splits, acpd, compat, overlap):
    npus = 1
    for _, s in dims:
        npus *= s
    if npus < 4:
        dims = [*dims, ("Ring", 4)]
        npus *= 4
    groups, graphs = _workload(npus, seed, layers, overlap)  # overlap: queued by the executor
    if algo == "halvingDoubling" and any(len(m) & (len(m) - 1) for m in groups.values()):
        algo = "ring"
    plat = _plat(dims, algo, groups, splits=splits, acpd=acpd, compat=compat)
    _both(plat, graphs)
