"""Simulate one data-parallel replica of a generated workload instead of every rank
(DESIGN.md, system layer; "Speed: symmetry first").

On a backend of the ``pairwise`` symmetry class (``network/protocol.py``: a message's delay
depends on its two ends only; the analytical backend) the data-parallel replicas of a generated workload
(:func:`trainsim.workload.generate.generate`) never share a link, and they run identical graphs
(only group ids and peers differ), so every replica follows the same timeline. They interact
only through the *cross-replica* collectives: the data-parallel gradient reduction (and, under
ZeRO-1/2, the parameter all-gather) and the expert-gradient reduction. Those are issued at the
end of the step, by all members of a group at the same instant (the members are the same rank
of identical replicas), and each runs alone on its ranks.

:func:`simulate_replica` therefore runs two small simulations on the *full* platform:

1. the cross-replica collectives alone: every rank issues its ``k``-th cross-replica
   collective at time 0 (one simulation per ``k``); rank ``r`` finishes it after ``T[r][k]``
   seconds, which is the time it takes in the full run, since there too it starts on every
   member at once and nothing else of those ranks runs on the network meanwhile;
2. replica 0 only (the ranks with data-parallel index 0; the other ranks get empty graphs),
   with each cross-replica collective replaced by a compute node of duration ``T[r][k]`` that
   also waits for the rank's earlier sends and collectives (in the full run the collective
   waits for them: a rank has one GPU communication slot, ``system/rank.py``).

Rank numbering and the platform are the full run's, so tensor-parallel collectives and
pipeline sends price exactly as there. The makespan equals the full simulation's
(``tests/system/test_replica.py`` checks it on small cases).

Preconditions (checked): a ``pairwise`` backend; every cross-replica collective, run alone,
ending at one time on all its members (not so when its group's messages cross the network's
dimensions unevenly under the default mode's path rule: ``topology/multidim.py``); no memory offload to a per-node or pooled
tier (its accesses queue across replicas); no expert parallelism (its
all-to-alls cross replicas during the step); ZeRO stage below 3 and no
``overlap_grad_reduce`` (their reductions overlap compute and each other); in every graph
only compute and cross-replica collectives follow the first cross-replica collective. Checked
after the replica run (:func:`_check_clear_start`): each stand-in starts at one time on the
replica's members of its group, and not while an earlier collective of its rank that sent on
the dimensions it sends on still runs on a peer (that collective's last messages may still
hold the rank's injection port, which the run alone had free).

Reported per rank: ``ReplicaResult.run`` counts the stand-in nodes as compute;
:meth:`ReplicaResult.rank_results` moves them back to communication (they hold the rank's
communication slot, not its GPU); :meth:`ReplicaResult.world_result` is every rank's
``RunResult``, derived (``replica_result.py``). :func:`simulate_generated` picks the slice when
it applies and every rank otherwise. Times in seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from trainsim.config.types import Platform
from trainsim.engine import collector_paused
from trainsim.enums import NodeType
from trainsim.errors import ConfigError
from trainsim.network.protocol import PAIRWISE
from trainsim.network.registry import DEFAULT_BACKEND, backend_capabilities
from trainsim.system.api import simulate
from trainsim.system.result import RankResult, RunResult
from trainsim.system.symmetry.partial import (
    has_memory_nodes,
    why_not_mirrored_ports,
    why_not_partial,
)
from trainsim.workload.generate import GeneratedWorkload
from trainsim.workload.graph import GraphBuilder, WorkloadGraph

CROSS_REPLICA_ROLES = ("dp", "edp")
_COMM_SLOT = (int(NodeType.COMM_COLL_NODE), int(NodeType.COMM_SEND_NODE))


@dataclass
class ReplicaResult:
    """``makespan_s`` of the whole step; ``run`` the replica-0 simulation (stand-ins included);
    ``sync_s[rank]`` the isolated time of each cross-replica collective of a replica-0 rank;
    wall-clock seconds of both phases in ``wall_s``."""

    makespan_s: float
    run: RunResult
    sync_s: dict[int, list[float]]
    ranks_simulated: int
    wall_s: dict[str, float] = field(default_factory=dict)
    events: int = 0
    mirror_of: dict[int, int] = field(default_factory=dict)
    """Replica-0 ranks that were not run because they behave as another (:func:`tensor_mirrors`)."""
    positions: list[np.ndarray] = field(default_factory=list, repr=False)
    """Per pipeline stage, the positions of its cross-replica collectives."""
    sync_records: list[list[Any]] = field(default_factory=list, repr=False)
    """Per rank (every rank), its records of the cross-replica collectives run alone."""

    def rank_results(self) -> list[RankResult]:
        """Replica 0's ranks as the full run reports them: each stand-in's time (the rank's
        cross-replica collectives, which run one after another once its other communication
        is done) moved from compute to communication, and exposed communication with it."""
        out = []
        for rank, times in self.sync_s.items():
            r = self.run.ranks[self.mirror_of.get(rank, rank)]
            if r.rank != rank:
                r = replace(r, rank=rank)
            held = sum(times)
            compute = r.compute_s - held
            out.append(replace(r, compute_s=compute, comm_s=r.comm_s + held, exposed_comm_s=max(0.0, r.finish_s - compute)))
        return out

    def world_result(self, workload: GeneratedWorkload) -> RunResult:
        """Every rank's result, timeline and collective records, as a run of every rank
        reports them: the ranks that did not run (mirrors, other replicas) with the times of
        the rank they repeat (``replica_result.world_result``)."""
        from trainsim.system.symmetry.replica_result import world_result

        return world_result(self, workload, self.positions, self.sync_records)

    def to_dict(self) -> dict[str, Any]:
        return {
            "makespan_s": self.makespan_s,
            "ranks_simulated": self.ranks_simulated,
            "events": self.events,
            "wall_s": dict(self.wall_s),
        }


Progress = Callable[[float, int, int], None]
"""``progress(simulated_ns, nodes_done, nodes_total)``, as ``Executor.run`` calls it."""


class _Overall:
    """One progress report over several simulations: the nodes of the finished ones plus the
    running one's, of every node still to simulate (``total`` is lowered once mirrors are
    known; ``done`` never goes back)."""

    def __init__(self, report: Progress | None, total: int) -> None:
        self.report = report
        self.total = total
        self.done = 0

    def during(self) -> Progress | None:
        """The callback for the next simulation (None when nobody listens)."""
        if self.report is None:
            return None
        report, base = self.report, self.done
        return lambda now_ns, done, _total: report(now_ns, min(base + done, self.total), self.total)

    def finished(self, now_ns: float, nodes: int) -> None:
        self.done += nodes
        if self.report is not None:
            self.report(now_ns, min(self.done, self.total), self.total)


def _check(workload: GeneratedWorkload, backend: str) -> None:
    if backend_capabilities(backend).symmetry != PAIRWISE:
        raise ConfigError(
            f"a replica slice equals the full run only on a backend of the pairwise symmetry class "
            f"(replicas never share a link; the analytical one), not {backend!r}",
            field="backend",
            hint="simulate every rank with trainsim.system.api.simulate",
        )
    par = workload.parallelism
    if par is None or not workload.node_roles or not workload.replica_of_rank:
        raise ConfigError("the workload records no parallelism or group roles; generate it with trainsim.workload.generate.generate")
    if par.ep > 1:
        raise ConfigError("expert parallelism exchanges tokens across replicas during the step; simulate every rank", field="ep")
    if par.zero >= 3:
        raise ConfigError("ZeRO-3/FSDP gathers weights across replicas during the step; simulate every rank", field="zero")
    if par.overlap_grad_reduce:
        raise ConfigError("overlapped gradient reductions run concurrently with compute; simulate every rank", field="overlap_grad_reduce")


def _cross_positions(workload: GeneratedWorkload, stage: int) -> np.ndarray:
    """Positions of the cross-replica collectives of ``stage``, checked to be the tail."""
    pos = workload.role_positions(stage, *CROSS_REPLICA_ROLES)
    if pos.size:
        graph = workload.graphs[workload.stage_of_rank.index(stage)]
        after = np.arange(int(pos[0]), len(graph))
        other = np.setdiff1d(after, pos, assume_unique=True)
        bad = other[graph.types[other] != NodeType.COMP_NODE]
        if bad.size:
            raise ConfigError(
                f"stage {stage}: {graph.node_summary(int(bad[0]))} follows the data-parallel reduction; "
                "a replica slice needs only compute and cross-replica collectives after it",
                hint="simulate every rank with trainsim.system.api.simulate",
            )
    return pos


def _sync_times(
    platform: Platform, workload: GeneratedWorkload, positions: list[np.ndarray], backend: str, overall: _Overall
) -> tuple[list[list[float]], list[list[Any]]]:
    """``T[rank][k]``: seconds of rank's ``k``-th cross-replica collective, run alone; and the
    rank's record of it (times from 0)."""
    world = len(workload.graphs)
    times: list[list[float]] = [[] for _ in range(world)]
    records: list[list[Any]] = [[] for _ in range(world)]
    rounds = max((p.size for p in positions), default=0)
    empty = GraphBuilder(source="replica-slice: idle").build()
    for k in range(rounds):
        graphs: list[WorkloadGraph] = []
        for rank, g in enumerate(workload.graphs):
            pos = positions[workload.stage_of_rank[rank]]
            if k >= pos.size:
                graphs.append(empty)
                continue
            p = int(pos[k])
            b = GraphBuilder(source=f"replica-slice: {g.names[p]}", rank=rank)
            b.add(
                0,
                NodeType.COMM_COLL_NODE,
                g.names[p],
                comm_type=int(g.comm_type[p]),
                comm_size=int(g.comm_size[p]),
                pg_name=g.pg_name[p],
                involved_dim=g.involved_dim.get(p),
            )
            graphs.append(b.build())
        result = simulate(platform, graphs, backend=backend, progress=overall.during())
        of_rank = {rec.rank: rec for rec in result.collectives}
        for rank in range(world):
            if k < positions[workload.stage_of_rank[rank]].size:
                times[rank].append(result.ranks[rank].finish_s)
                records[rank].append(of_rank[rank])
        overall.finished(result.makespan_s * 1e9, sum(len(g) for g in graphs))
    return times, records


def _check_even(platform: Platform, workload: GeneratedWorkload, positions: list[np.ndarray], sync: list[list[float]]) -> None:
    """Refuse the slice when a cross-replica collective, run alone, ends at different times on
    its members: its group's messages cross different network dimensions (the default mode's
    path rule, ``topology/multidim.py``: a data-parallel ring with members 0, 2, 4, 6 on
    4-rank nodes crosses the inter-node link only from 2 to 4 and back from 6 to 0), so the
    replicas leave it at different times and no longer follow one timeline."""
    ends: dict[tuple[int, str], float] = {}
    for rank, g in enumerate(workload.graphs):
        for k, p in enumerate(positions[workload.stage_of_rank[rank]].tolist()):
            name = g.pg_name[p]
            first = ends.setdefault((k, name), sync[rank][k])
            if sync[rank][k] != first:
                raise ConfigError(
                    f"{g.node_summary(p)} (group {name!r}) ends at different times on its members "
                    f"({first:.9g} s and {sync[rank][k]:.9g} s run alone): its messages cross the network's "
                    "dimensions unevenly, so the data-parallel replicas do not follow one timeline; simulate every rank",
                    field="comm_groups",
                )


def _check_clear_start(
    workload: GeneratedWorkload, positions: list[np.ndarray], run: RunResult, ran: list[int], sync_records: list[list[Any]]
) -> None:
    """Refuse the slice when a stand-in did not start as its collective would in the full run,
    with every member at once and the injection ports it sends on free (the run alone that
    priced it had them free). Two ways it can differ:

    - the replica-0 members of a cross-replica group (with context parallelism: the ranks of
      a dp x cp group that differ in their CP index) reach it at different times; the full
      run starts the collective at the last one, each stand-in at its own rank's time;
    - a rank's earlier collective ended on it before it ended on a peer (a group spanning
      pipeline stages, such as the tied-embedding all-reduce of the first and last stage,
      entered at different times): the rank's last messages of it may still hold its
      injection port of a dimension (``network/injection.py``) and delay the cross-replica
      collective's messages on that dimension. Every message a rank sends in a collective is
      awaited by a peer and arrives no earlier than its port frees, so the ports it sent on
      are free once the collective has ended on all its members; a stand-in sending on such
      a dimension before then is refused (a sufficient condition).

    ``ran``: the replica-0 ranks that ran their graphs (mirrors repeat their representative);
    ``sync_records[rank][k]``: its ``k``-th cross-replica collective run alone."""
    ends: dict[tuple[str, int], float] = {}  # (group, k-th collective on it) -> last member's end ns
    sent: dict[int, list[tuple[list[int], tuple[str, int]]]] = {}  # rank -> (bytes per dim, instance)
    count: dict[tuple[int, str], int] = {}
    for rec in run.collectives:
        k = count[(rec.rank, rec.group)] = count.get((rec.rank, rec.group), -1) + 1
        key = (rec.group, k)
        ends[key] = max(ends.get(key, rec.end_ns), rec.end_ns)
        sent.setdefault(rec.rank, []).append((rec.dim_bytes, key))
    starts: dict[tuple[int, str], tuple[int, float]] = {}
    for rank in ran:
        g = workload.graphs[rank]
        timeline = run.timelines[rank].start_ns
        for k, p in enumerate(positions[workload.stage_of_rank[rank]].tolist()):
            start = timeline[p]
            dims = [d for d, n in enumerate(sync_records[rank][k].dim_bytes) if n]
            busy = max((ends[key] for dim_bytes, key in sent.get(rank, ()) if any(dim_bytes[d] for d in dims)), default=0.0)
            if busy > start:
                raise ConfigError(
                    f"rank {rank}: {g.node_summary(p)} starts at {start:.9g} ns while an earlier collective that sent on "
                    f"its dimensions {dims} runs on a peer until {busy:.9g} ns (its injection ports may still be busy), "
                    "so it would not run as it does alone; simulate every rank",
                    field="comm_groups",
                )
            seen = starts.setdefault((k, g.pg_name[p]), (rank, start))
            if seen[1] != start:
                raise ConfigError(
                    f"{g.node_summary(p)} (group {g.pg_name[p]!r}) starts at different times on ranks {seen[0]} and "
                    f"{rank} of one replica ({seen[1]:.9g} and {start:.9g} ns): the full run starts it at the "
                    "later, the slice at each; simulate every rank",
                    field="comm_groups",
                )


def _sync_nodes(workload: GeneratedWorkload, positions: list[np.ndarray]) -> int:
    """Nodes of the cross-replica runs: one per rank and cross-replica collective."""
    return sum(positions[stage].size for stage in workload.stage_of_rank)


def _stand_in_template(graph: WorkloadGraph, pos: np.ndarray) -> WorkloadGraph:
    """``graph`` with the collectives at ``pos`` turned into compute nodes (durations set per
    rank later); the first also gets control dependencies on every earlier send or collective
    that nothing depends on, so it starts when the rank's communication slot would be free."""
    types = graph.types.copy()
    types[pos] = NodeType.COMP_NODE
    first = int(pos[0])
    ptr, dep_pos = graph.dep_indices(ctrl=True)
    has_child = np.zeros(len(graph), dtype=bool)
    has_child[dep_pos[dep_pos >= 0]] = True
    earlier = np.arange(first)
    comm = np.isin(graph.types[:first], _COMM_SLOT)
    wait_ids = graph.ids[earlier[comm & ~has_child[:first]]]
    counts = np.diff(graph.ctrl_dep_ptr)
    counts[first] += wait_ids.size
    ctrl_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    hi = int(graph.ctrl_dep_ptr[first + 1])
    ctrl_ids = np.concatenate((graph.ctrl_dep_ids[:hi], wait_ids, graph.ctrl_dep_ids[hi:])).astype(np.int64)
    return replace(graph, types=types, ctrl_dep_ptr=ctrl_ptr, ctrl_dep_ids=ctrl_ids, use_ctrl_deps=True)


@collector_paused()  # engine.kernel.collector_paused: no garbage cycles to look for
def simulate_replica(
    platform: Platform,
    workload: GeneratedWorkload,
    *,
    backend: str = DEFAULT_BACKEND,
    mirror: bool = True,
    progress: Progress | None = None,
) -> ReplicaResult:
    """One training step of ``workload`` on ``platform`` (the full platform, with the workload's
    communicator groups: :meth:`GeneratedWorkload.platform`), simulating data-parallel
    replica 0 and the cross-replica collectives separately. Equal to
    ``simulate(platform, workload.graphs).makespan_s`` under the preconditions of this module.
    With ``mirror``, the tensor-parallel peers of a stage's first rank run as its mirrors
    (:func:`tensor_mirrors`) when they provably behave as it. ``progress`` hears of every
    simulation as one: nodes done of all to simulate."""
    _check(workload, backend)
    stages = max(workload.stage_of_rank) + 1
    positions = [_cross_positions(workload, s) for s in range(stages)]
    why = why_not_partial(platform, memory_traffic=has_memory_nodes(workload.graphs))
    if why:
        raise ConfigError(why)
    replica_nodes = sum(len(g) for g, replica in zip(workload.graphs, workload.replica_of_rank, strict=True) if replica == 0)
    overall = _Overall(progress, _sync_nodes(workload, positions) + replica_nodes)
    t0 = time.perf_counter()
    sync, sync_records = _sync_times(platform, workload, positions, backend, overall)
    _check_even(platform, workload, positions, sync)
    t1 = time.perf_counter()
    empty = GraphBuilder(source="replica-slice: other replica").build()
    templates: dict[int, WorkloadGraph] = {}  # id(ids array) -> stand-in template
    graphs: list[WorkloadGraph] = []
    replica0: list[int] = []
    for rank, g in enumerate(workload.graphs):
        if workload.replica_of_rank[rank] != 0:
            graphs.append(empty)
            continue
        replica0.append(rank)
        pos = positions[workload.stage_of_rank[rank]]
        if pos.size == 0:
            graphs.append(g)
            continue
        key = id(g.ids)
        base = templates.get(key)
        if base is None:
            base = templates[key] = _stand_in_template(g, pos)
        duration = g.duration_s.copy()
        duration[pos] = sync[rank]
        graphs.append(replace(base, duration_s=duration, pg_name=g.pg_name, comm_src=g.comm_src, comm_dst=g.comm_dst,
                              involved_dim=g.involved_dim, rank=rank, source=g.source))
    mirrors = tensor_mirrors(platform, workload, graphs, replica0) if mirror else {}
    for ms in mirrors.values():
        for m in ms:
            overall.total -= len(graphs[m])
            graphs[m] = empty
    run = simulate(platform, graphs, backend=backend, mirrors=mirrors or None, progress=overall.during())
    overall.finished(run.makespan_s * 1e9, sum(len(g) for g in graphs))
    mirror_of = {m: rep for rep, ms in mirrors.items() for m in ms}
    _check_clear_start(workload, positions, run, [r for r in replica0 if r not in mirror_of], sync_records)
    t2 = time.perf_counter()
    return ReplicaResult(
        makespan_s=run.makespan_s,
        run=run,
        sync_s={r: sync[r] for r in replica0},
        ranks_simulated=len(replica0) - sum(len(ms) for ms in mirrors.values()),
        wall_s={"sync": t1 - t0, "replica": t2 - t1},
        events=run.events,
        mirror_of=mirror_of,
        positions=positions,
        sync_records=sync_records,
    )


_PEER_COLUMNS = ((NodeType.COMM_SEND_NODE, "comm_dst"), (NodeType.COMM_RECV_NODE, "comm_src"))
"""Point-to-point node types and the column holding each one's peer rank."""

# Columns a mirror's graph must share with its representative's; the rank-specific ones
# (pg_name, comm_src, comm_dst) are checked through the renaming instead.
_SAME_COLUMNS = (
    "ids", "types", "duration_s", "is_cpu_op", "num_ops", "tensor_size", "comm_type", "comm_size",
    "comm_tag", "comm_priority", "data_dep_ptr", "data_dep_ids", "ctrl_dep_ptr", "ctrl_dep_ids",
)  # fmt: skip


def tensor_mirrors(
    platform: Platform, workload: GeneratedWorkload, graphs: list[WorkloadGraph], replica0: list[int]
) -> dict[int, tuple[int, ...]]:
    """Replica 0's ranks of each pipeline stage that behave exactly as the stage's first rank
    (its tensor-parallel peers), as ``{representative: mirrors}``; ``{}`` when that cannot be
    shown.

    Rank ``i`` of a stage mirrors rank 0 of it when renaming rank ``i`` of every stage to rank
    0 of that stage turns its graph into rank 0's: the same arrays apart from peers and
    groups; each send / receive peer renamed to the representative's peer along the same
    network path (the dimensions it crosses and the coordinate offset in each,
    ``MultiDimTopology.path``, so the same delay and port); each collective either
    on the very group of the representative's node when that group is the stage's ranks and
    every edge of its ring costs alike (run once, with every member: ``CollectiveRuntime``'s
    mirrors; a ring whose edges cross dimensions unevenly ends at a different time on each
    member), or on a group that renames,
    member by member and with the same path between every two members, to the
    representative's group. Then, under the
    congestion-unaware backend, every event of the mirror happens when the representative's
    does, so the mirror's run is the representative's."""
    from trainsim.topology import MultiDimTopology

    stages: dict[int, list[int]] = {}
    for r in replica0:
        stages.setdefault(workload.stage_of_rank[r], []).append(r)
    width = {len(rs) for rs in stages.values()}
    if len(width) != 1 or width == {1}:
        return {}
    net = platform.network
    topo = MultiDimTopology.of_network(net, compat_astra=platform.compat == "astra")
    groups = {name: tuple(members) for name, members in platform.comm_groups.items()}

    def shape(a: int, b: int) -> tuple[tuple[int, int], ...]:
        # every dimension the message crosses under the platform's path rule, with the
        # coordinate offset in each (finer than group.py's classes: Switch offsets kept)
        return tuple((d, (topo.coord(b, d) - topo.coord(a, d)) % topo.sizes[d]) for d in topo.path(a, b))

    def cost(a: int, b: int) -> tuple[tuple[int, int], ...]:
        # what the message pays under the path rule: the dimensions it crosses, hops in each
        return tuple((d, topo.hops(d, a, b)) for d in topo.path(a, b))

    mirrors: dict[int, tuple[int, ...]] = {}
    for i in range(1, width.pop()):
        rename = {rs[i]: rs[0] for rs in stages.values()}
        for rs in stages.values():
            if not _mirrors_rank(graphs[rs[i]], graphs[rs[0]], rs, rename, groups, shape, cost):
                return {}
    for rs in stages.values():
        mirrors[rs[0]] = tuple(rs[1:])
    mirror_of = {m: rep for rep, ms in mirrors.items() for m in ms}
    for rep in mirrors:
        if not _issues_alone_or_with_its_mirrors(graphs[rep], mirror_of, groups):
            return {}
    if why_not_mirrored_ports(platform, graphs, mirror_of, compat_astra=platform.compat == "astra"):
        return {}
    return mirrors


def _issues_alone_or_with_its_mirrors(graph: WorkloadGraph, mirror_of: dict[int, int], groups: dict[str, tuple[int, ...]]) -> bool:
    """Whether every peer of a representative's sends and receives runs its own graph, and every
    member of its collectives' groups does or is one of its own mirrors (which the runtime
    issues with it): a mirror of another rank there would never take part."""
    me = graph.rank
    for kind, column in _PEER_COLUMNS:
        peers = set(getattr(graph, column)[graph.types == kind].tolist())
        if any(p in mirror_of for p in peers):
            return False
    colls = np.flatnonzero(graph.types == NodeType.COMM_COLL_NODE).tolist()
    for name in {graph.pg_name[p] for p in colls}:
        for member in groups.get(name, ()):
            if mirror_of.get(member, me) != me:
                return False
    return True


def _mirrors_rank(
    mine: WorkloadGraph,
    rep: WorkloadGraph,
    stage_ranks: list[int],
    rename: dict[int, int],
    groups: dict[str, tuple[int, ...]],
    shape: Any,
    cost: Any,
) -> bool:
    """Whether ``mine`` is ``rep`` renamed (:func:`tensor_mirrors`); ``cost(a, b)``: what a
    message from ``a`` to ``b`` pays (the dimensions it crosses, with the hops in each)."""
    for name in _SAME_COLUMNS:
        a, b = getattr(mine, name), getattr(rep, name)
        if a is not b and not np.array_equal(a, b):
            return False
    if mine.involved_dim != rep.involved_dim or mine.use_ctrl_deps != rep.use_ctrl_deps:
        return False
    me, them = mine.rank, rep.rank
    for kind, column in _PEER_COLUMNS:
        pos = np.flatnonzero(mine.types == kind)
        pairs = set(zip(getattr(mine, column)[pos].tolist(), getattr(rep, column)[pos].tolist(), strict=True))
        for peer, rep_peer in pairs:
            if rename.get(peer) != rep_peer or shape(me, peer) != shape(them, rep_peer):
                return False
    stage = set(stage_ranks)
    colls = np.flatnonzero(mine.types == NodeType.COMM_COLL_NODE).tolist()
    for name, rep_name in {(mine.pg_name[p], rep.pg_name[p]) for p in colls}:
        group, rep_group = groups.get(name), groups.get(rep_name)
        if group is None or rep_group is None:
            return False  # a whole-machine collective: every replica takes part
        if name == rep_name:
            if set(group) != stage:
                return False
            # run once with every member, all ending together: only so when every edge of the
            # group's ring is alike (a ring whose edges cross dimensions unevenly ends on each
            # member at its own time, and its slow edges' ports carry into the next collective)
            if len({cost(a, b) for a, b in zip(group, group[1:] + group[:1], strict=True)}) > 1:
                return False
            continue
        renamed = tuple(rename.get(r, -1) for r in group)
        if renamed != rep_group:
            return False
        if any(shape(a, b) != shape(rename[a], rename[b]) for a in group for b in group):
            return False
    return True


@dataclass
class GeneratedRun:
    """One step of a generated workload. ``result``: every rank's result, timeline and
    collective records, as ``simulate`` gives them (in a slice, the ranks that did not run
    repeat the rank they mirror: :meth:`ReplicaResult.world_result`); ``ranks_simulated`` of
    the ranks ran their graphs (a slice runs one rank per pipeline stage when its
    tensor-parallel peers mirror it); ``mode`` says which, ``why_every_rank`` why a slice was
    not taken ("" when it was or was not asked for). ``wall_s``: seconds the simulation
    took; ``replica_ranks``: in a slice, the ranks of the replica that ran (0 otherwise)."""

    result: RunResult
    mode: str
    why_every_rank: str
    wall_s: float
    ranks_simulated: int
    replica_ranks: int = 0

    @property
    def makespan_s(self) -> float:
        return self.result.makespan_s

    @property
    def ranks(self) -> Sequence[RankResult]:
        return self.result.ranks

    @property
    def events(self) -> int:
        return self.result.events

    @property
    def world(self) -> int:
        return len(self.result.ranks)

    def to_dict(self) -> dict[str, Any]:
        """How the step was simulated (``result.to_dict()`` holds the times)."""
        return {
            "mode": self.mode,
            "why_every_rank": self.why_every_rank,
            "ranks_simulated": self.ranks_simulated,
            "world": self.world,
            "events": self.events,
            "wall_s": self.wall_s,
        }


@collector_paused()  # engine.kernel.collector_paused: no garbage cycles to look for
def simulate_generated(
    platform: Platform,
    workload: GeneratedWorkload,
    *,
    backend: str = DEFAULT_BACKEND,
    replica_slice: bool = True,
    progress: Progress | None = None,
) -> GeneratedRun:
    """One training step of ``workload`` on ``platform`` (its communicator groups are added
    here): a replica slice when ``replica_slice`` and the slice's preconditions hold (the
    reason is kept when they do not), else every rank; a layered model, whose collectives all
    span every rank, runs every rank with no reason to give. ``progress(simulated_ns,
    nodes_done, nodes_total)`` hears of the step's simulations as one."""
    platform = workload.platform(platform)
    t0 = time.perf_counter()
    why = ""
    # a layered model (no group roles) has only collectives over every rank: nothing to slice,
    # and simulate's whole-step symmetry already runs one rank for all
    if replica_slice and workload.node_roles:
        try:
            _check(workload, backend)
            sliced = simulate_replica(platform, workload, backend=backend, progress=progress)
        except ConfigError as exc:
            why = str(exc)
        else:
            result = sliced.world_result(workload)
            return GeneratedRun(result, "replica slice", "", time.perf_counter() - t0, sliced.ranks_simulated, len(sliced.sync_s))
    full = simulate(platform, workload.graphs, backend=backend, progress=progress)
    full.info.update(mode="every rank", ranks_simulated=len(full.ranks), world=len(full.ranks))
    return GeneratedRun(full, "every rank", why, time.perf_counter() - t0, len(full.ranks))
