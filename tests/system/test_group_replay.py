"""Group collectives answered from a private run of the whole group
(``system/symmetry/group_replay.py``): on random steps of groups that are segments of a Ring
(their members do not see each other alike) issued at different ticks, the step is the
rank-by-rank one (per-rank results, timelines, collective records ==); the memo answers
repeated issue patterns; a tie at an issue time, a deadlock with members held and a forced
refusal all end in the rank-by-rank answer; a held member that starts another collective is
refused."""

from __future__ import annotations

import random

import pytest

from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.engine import EventQueue
from trainsim.enums import CommType, NodeType
from trainsim.errors import DeadlockError
from trainsim.network.analytical import AnalyticalNetwork
from trainsim.system.api import simulate
from trainsim.system.collective_api import CollectiveRequest
from trainsim.system.collective_runtime import CollectiveRuntime
from trainsim.system.symmetry import group_replay
from trainsim.system.symmetry.group import GroupSymmetryConflict
from trainsim.system.symmetry.group_replay import GroupReplay, GroupReplayConflict
from trainsim.workload import GraphBuilder

GiB = 2**30
AR, AG, RS = int(CommType.ALL_REDUCE), int(CommType.ALL_GATHER), int(CommType.REDUCE_SCATTER)
TOPOLOGIES = [(("Ring", 8),), (("Ring", 16),), (("Ring", 4), ("Switch", 2)), (("Ring", 4), ("Ring", 2))]


def _platform(dims, groups: dict[str, tuple[int, ...]], rnd: random.Random | None = None, **system) -> Platform:
    rnd = rnd or random.Random(0)
    algos = ["ring", "ring", "direct", "halvingDoubling"]
    impl = CollectiveImpl(*(tuple(rnd.choice(algos) for _ in dims) for _ in range(4)))
    spec = SystemSpec(
        **{
            "endpoint_delay_ns": rnd.choice([10, 137]),
            "preferred_dataset_splits": rnd.choice([1, 2, 4]),
            "active_chunks_per_dimension": rnd.choice([1, 2]),
            "scheduling_policy": rnd.choice(["LIFO", "FIFO"]),
            "implementations": impl,
            **system,
        }
    )
    net = NetworkSpec(tuple(DimSpec(k, s, rnd.choice([25, 50]) * GiB, rnd.choice([500.0, 20.0])) for k, s in dims))
    return Platform(net, spec, compat="astra", comm_groups=groups)


def _random_step(seed: int) -> tuple[Platform, list]:
    """Ranks in tensor-parallel segments of consecutive ranks and data-parallel groups across
    them; each rank computes a random few µs (from a small set, so issue patterns repeat)
    before each collective of its groups, in one order per group."""
    rnd = random.Random(seed)
    dims = rnd.choice(TOPOLOGIES)
    world = 1
    for _, s in dims:
        world *= s
    tp = rnd.choice([t for t in (2, 4, 8) if t < world])
    groups = {f"tp{g}": tuple(range(g * tp, (g + 1) * tp)) for g in range(world // tp)}
    groups |= {f"dp{i}": tuple(range(i, world, tp)) for i in range(tp)}
    steps = [(rnd.choice(["tp", "tp", "dp"]), rnd.choice([AR, AR, AG, RS]), rnd.choice([1 << 16, 1 << 20, 3 << 18])) for _ in range(rnd.randint(4, 10))]
    graphs = []
    for rank in range(world):
        b = GraphBuilder(rank=rank)
        prev: tuple[int, ...] = ()
        for k, (kind, comm, size) in enumerate(steps):
            group = f"tp{rank // tp}" if kind == "tp" else f"dp{rank % tp}"
            micros = rnd.choice([1.0, 1.0, 2.0, 3.5]) if rnd.random() < 0.6 else 1.0
            b.add(2 * k, int(NodeType.COMP_NODE), f"c{k}", data_deps=prev, duration_s=micros * 1e-6)
            b.add(2 * k + 1, int(NodeType.COMM_COLL_NODE), f"x{k}", data_deps=(2 * k,), comm_type=comm, comm_size=size, pg_name=group)
            prev = (2 * k + 1,)
        graphs.append(b.build())
    return _platform(dims, groups, rnd), graphs


def _summary(r) -> tuple:
    return (
        list(r.ranks),
        r.makespan_s,
        [(list(t.start_ns), list(t.end_ns)) for t in r.timelines],
        sorted((c.rank, c.node_id, c.start_ns, c.end_ns, tuple(c.dim_bytes), tuple(map(tuple, c.chunk_spans)), c.group) for c in r.collectives),
    )


def _without_replay(monkeypatch, platform, graphs):
    with monkeypatch.context() as m:
        m.setattr(GroupReplay, "enabled", staticmethod(lambda _rt: False))
        return simulate(platform, graphs, backend="congestion_unaware")


def _assert_replay_is_rank_by_rank(monkeypatch, platform, graphs):
    fast = simulate(platform, graphs, backend="congestion_unaware")
    ref = _without_replay(monkeypatch, platform, graphs)
    assert ref.info["group_replays"] == 0
    assert _summary(fast) == _summary(ref)
    assert _summary(simulate(platform, graphs, backend="congestion_unaware", symmetry=False)) == _summary(ref)
    return fast


@pytest.mark.parametrize("seed", range(12))
def test_random_steps_are_rank_by_rank(monkeypatch, seed):
    platform, graphs = _random_step(seed)
    fast = _assert_replay_is_rank_by_rank(monkeypatch, platform, graphs)
    assert fast.info["group_replays"] > 0, fast.info
    assert "group_replay" not in fast.info  # nothing refused


@pytest.mark.fuzz
@pytest.mark.parametrize("seed", range(12, 100))
def test_more_random_steps_are_rank_by_rank(monkeypatch, seed):
    platform, graphs = _random_step(seed)
    _assert_replay_is_rank_by_rank(monkeypatch, platform, graphs)


def test_the_memo_answers_repeated_patterns(monkeypatch):
    """Segments of one Ring have one geometry: the four groups' collectives with the same
    issue pattern are answered by one private run."""
    groups = {f"tp{g}": tuple(range(4 * g, 4 * g + 4)) for g in range(4)}
    platform = _platform((("Ring", 16),), groups)
    graphs = []
    for rank in range(16):
        b = GraphBuilder(rank=rank)
        prev: tuple[int, ...] = ()
        for k in range(6):
            late = 2.0 if rank % 4 == 3 else 1.0  # the last member of each group issues 1 µs late
            b.add(2 * k, int(NodeType.COMP_NODE), "c", data_deps=prev, duration_s=late * 1e-6)
            b.add(2 * k + 1, int(NodeType.COMM_COLL_NODE), "x", data_deps=(2 * k,), comm_type=AR, comm_size=1 << 20, pg_name=f"tp{rank // 4}")
            prev = (2 * k + 1,)
        graphs.append(b.build())
    runs: list[int] = []
    real = GroupReplay._simulate

    def counted(self, *args):
        runs.append(1)
        return real(self, *args)

    monkeypatch.setattr(GroupReplay, "_simulate", counted)
    fast = _assert_replay_is_rank_by_rank(monkeypatch, platform, graphs)
    assert fast.info["group_replays"] == 24
    assert len(runs) <= 6  # at most one per collective: the four groups share each answer


def test_patterns_that_never_repeat_go_back_to_rank_by_rank(monkeypatch):
    """Compute times drawn anew for every rank and layer: no issue pattern repeats, so after
    ``TRIES`` private runs of the group's plan its collectives run rank by rank (a private run
    costs more than the step's own path); the result is the rank-by-rank one either way."""
    groups = {"tp0": (0, 1, 2, 3), "tp1": (4, 5, 6, 7)}
    platform = _platform((("Ring", 8),), groups, implementations=RINGS)
    rnd = random.Random(5)
    graphs = []
    for rank in range(8):
        b = GraphBuilder(rank=rank)
        prev: tuple[int, ...] = ()
        for k in range(20):
            b.add(2 * k, int(NodeType.COMP_NODE), "c", data_deps=prev, duration_s=rnd.randint(1000, 9000) * 1e-9)
            b.add(2 * k + 1, int(NodeType.COMM_COLL_NODE), "x", data_deps=(2 * k,), comm_type=AR, comm_size=1 << 20, pg_name=f"tp{rank // 4}")
            prev = (2 * k + 1,)
        graphs.append(b.build())
    fast = _assert_replay_is_rank_by_rank(monkeypatch, platform, graphs)
    assert fast.info["group_replays"] == group_replay.TRIES  # then rank by rank: 40 collectives


def test_large_groups_are_left_to_the_group_path_or_rank_by_rank(monkeypatch):
    """A private run grows as the square of the group: a group of more than ``MAX_MEMBERS``
    (here a segment of 20 of a Ring of 32) is not replayed, the other group (12) is; the step
    is the rank-by-rank one."""
    n = group_replay.MAX_MEMBERS + 4
    groups = {"big": tuple(range(n)), "small": tuple(range(n, 32))}
    platform = _platform((("Ring", 32),), groups, implementations=RINGS)
    graphs = []
    for rank in range(32):
        b = GraphBuilder(rank=rank)
        b.add(0, int(NodeType.COMP_NODE), "c", duration_s=(1 + rank % 2) * 1e-6)
        b.add(1, int(NodeType.COMM_COLL_NODE), "x", data_deps=(0,), comm_type=AR, comm_size=1 << 20, pg_name="big" if rank < n else "small")
        graphs.append(b.build())
    fast = _assert_replay_is_rank_by_rank(monkeypatch, platform, graphs)
    assert fast.info["group_replays"] == 1  # the small group only


def test_groups_of_one_size_and_another_shape_are_told_apart(monkeypatch):
    """On a Ring of 16, four consecutive ranks and four ranks four apart run the same plan
    with the same issue pattern (every other member 1 µs late) but different delays: each
    geometry has its own answer."""
    groups = {f"tp{g}": tuple(range(4 * g, 4 * g + 4)) for g in range(4)}
    groups |= {f"dp{i}": tuple(range(i, 16, 4)) for i in range(4)}
    platform = _platform((("Ring", 16),), groups, implementations=RINGS)
    graphs = []
    for rank in range(16):
        b = GraphBuilder(rank=rank)
        for k, (group, late) in enumerate(((f"tp{rank // 4}", rank % 2), (f"dp{rank % 4}", rank // 4 % 2))):
            b.add(2 * k, int(NodeType.COMP_NODE), "c", data_deps=(2 * k - 1,) if k else (), duration_s=(1 + late) * 1e-6)
            b.add(2 * k + 1, int(NodeType.COMM_COLL_NODE), "x", data_deps=(2 * k,), comm_type=AR, comm_size=1 << 20, pg_name=group)
        graphs.append(b.build())
    fast = _assert_replay_is_rank_by_rank(monkeypatch, platform, graphs)
    assert fast.info["group_replays"] == 8
    took = {c.group: max(x.end_ns for x in fast.collectives if x.group == c.group) - c.start_ns for c in fast.collectives if c.rank == 0}
    assert took["tp0"] != took["dp0"]  # (else the test shows nothing)


def _issue(rt: CollectiveRuntime, q: EventQueue, at: float, rank: int, node: int, members: tuple[int, ...], done: list) -> None:
    request = CollectiveRequest(rank, node, AR, 1 << 20, members, "g", None)
    q.schedule_at(at, lambda _a: rt.issue(request, done.append, (rank, node)))


RINGS = CollectiveImpl(("ring",), ("ring",), ("ring",), ("ring",))


def _runtime(members: tuple[int, ...] = (0, 1, 2), replay: bool = True) -> tuple[CollectiveRuntime, EventQueue]:
    """A runtime with group replay (else rank by rank) on a Ring of 8, group ``g``."""
    platform = _platform((("Ring", 8),), {"g": members}, endpoint_delay_ns=10, implementations=RINGS)
    q = EventQueue()
    net = AnalyticalNetwork(platform.network, q, compat_astra=True)
    return CollectiveRuntime(platform, net, q, compat_astra=True, symmetry=replay, group_symmetry=replay, group_replay=replay), q


def test_a_member_issuing_in_the_tick_of_a_matched_receive_is_refused():
    """Members 0 and 1 issue at 0, member 2 at 100 µs: member 1's first message to 2 is
    there long before, so 2's first insertion (10 ns later, the endpoint delay) posts a
    receive matched at once, an event of that very tick. Member 3 issuing in that tick would
    start before or after it depending on the rest of the step: refused. One ns later, or in
    the tick of the insertion itself (an event scheduled before the tick: it runs first in the
    step too), it is answered."""
    for at3, refused in ((100_010.0, True), (100_011.0, False), (100_000.0, False)):
        rt, q = _runtime(members=(0, 1, 2, 3))
        done: list = []
        for rank, at in ((0, 0.0), (1, 0.0), (2, 100_000.0), (3, at3)):
            _issue(rt, q, at, rank, 0, (0, 1, 2, 3), done)
        if refused:
            with pytest.raises(GroupReplayConflict, match="scheduled in the tick a member issues it"):
                q.run()
            continue
        q.run()
        assert rt.group_replays == 1 and sorted(done) == [(r, 0) for r in range(4)]


@pytest.mark.parametrize("members", [(0, 1, 2), (0, 2, 4, 6)])
def test_a_members_end_runs_among_its_ticks_events_as_rank_by_rank(members):
    """Rank by rank, a member's end runs after the events of its tick that were scheduled
    before its last event was (here a probe scheduled 1 ns after the start), and members
    ending in one tick end in the order their last events run: replayed, each end is
    scheduled by a relay at that time, in that order, not when the last member issued. A
    group every member sees alike ((0, 2, 4, 6) on a Ring of 8, which the group-symmetric
    path would answer with every member's end at the last issue, in member order) too."""

    def log(replay: bool, ends: list[float]) -> list:
        rt, q = _runtime(members, replay=replay)
        out: list = []
        for rank in members:
            _issue(rt, q, 0.0, rank, 0, members, out)
        for end in ends:
            q.schedule_at(1.0, lambda _a, end=end: q.schedule_at(end, out.append, ("probe", end)))
        q.run()
        assert rt.group_replays == int(replay)
        return out

    rt, q = _runtime(members, replay=False)
    for rank in members:
        _issue(rt, q, 0.0, rank, 0, members, [])
    q.run()
    ends = sorted({r.end_ns for r in rt.records})
    want = log(False, ends)
    assert want[0][0] == "probe"  # (else the test shows nothing)
    assert log(True, ends) == want


def test_a_held_member_starting_another_collective_is_refused():
    """A step never does it (a rank's collectives take its one communication slot in turn);
    issued straight to the runtime, member 0 starts a second collective while its first is
    held: the group path's conflict (``simulate`` reruns without group symmetry)."""
    rt, q = _runtime()
    done: list = []
    _issue(rt, q, 0.0, 0, 0, (0, 1, 2), done)
    _issue(rt, q, 5.0, 0, 1, (0, 1), done)
    with pytest.raises(GroupSymmetryConflict, match="rank 0 starts a collective"):
        q.run()


def test_members_left_held_are_a_rank_by_rank_deadlock(monkeypatch):
    """Rank 2 never issues the group's collective: the deadlock report is the rank-by-rank
    run's (held members posted no receive to report)."""
    platform = _platform((("Ring", 8),), {"g": (0, 1, 2)}, implementations=RINGS)
    graphs = []
    for rank in range(8):
        b = GraphBuilder(rank=rank)
        b.add(0, int(NodeType.COMP_NODE), "c", duration_s=1e-6)
        if rank < 2:
            b.add(1, int(NodeType.COMM_COLL_NODE), "x", data_deps=(0,), comm_type=AR, comm_size=1 << 20, pg_name="g")
        graphs.append(b.build())
    with pytest.raises(DeadlockError) as ref:
        _without_replay(monkeypatch, platform, graphs)
    with pytest.raises(DeadlockError) as got:
        simulate(platform, graphs, backend="congestion_unaware")
    assert str(got.value) == str(ref.value)
    assert "a 174762 B message of chunk 0 from rank 2" in str(got.value)


def test_a_refusal_reruns_the_step_without_group_replay(monkeypatch):
    platform, graphs = _random_step(3)
    ref = _without_replay(monkeypatch, platform, graphs)

    def refuse(self, *args):
        raise GroupReplayConflict("forced")

    monkeypatch.setattr(GroupReplay, "_simulate", refuse)
    got = simulate(platform, graphs, backend="congestion_unaware")
    assert got.info["group_replay"] == "off (forced)" and got.info["group_replays"] == 0
    assert _summary(got) == _summary(ref)


def test_only_exact_settings_replay():
    """The default mode (float times, injection ports) and several queues per dimension
    (a picker's state carries over) keep every group rank by rank."""
    rt, _q = _runtime()
    assert GroupReplay.enabled(rt)
    rnd = random.Random(1)
    for system in ({"queues_per_dim": 2, "active_chunks_per_dimension": 2}, {"rendezvous": True}):
        platform = _platform((("Ring", 8),), {"g": (0, 1, 2)}, rnd, **system)
        q = EventQueue()
        rt = CollectiveRuntime(platform, AnalyticalNetwork(platform.network, q, compat_astra=True), q, compat_astra=True, group_symmetry=True, group_replay=True)
        assert not GroupReplay.enabled(rt)
    q = EventQueue()
    platform = _platform((("Ring", 8),), {"g": (0, 1, 2)})
    rt = CollectiveRuntime(platform, AnalyticalNetwork(platform.network, q, compat_astra=False), q, compat_astra=False, group_symmetry=True, group_replay=True)
    assert not GroupReplay.enabled(rt)
