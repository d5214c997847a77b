"""Simulate one data-parallel replica (or a few) of a generated workload instead of every rank
(DESIGN.md, system layer; "Speed: symmetry first").

On a backend of the ``pairwise`` symmetry class (``network/protocol.py``: a message's delay
depends on its two ends only; the analytical backend) the data-parallel replicas of a generated workload
(:func:`trainsim.workload.generate.generate`) never share a link, and they run identical graphs
(only group ids and peers differ), so every replica follows the same timeline. They interact
only through the *cross-replica* collectives: the data-parallel gradient reduction (and, under
ZeRO-1/2, the parameter all-gather) and the expert-gradient reduction, issued at the end of
the step by each member when the same rank of every replica is, at the same time.

:func:`simulate_replica` therefore runs replica 0 only (the ranks with data-parallel index 0;
the other ranks get empty graphs), on the *full* platform and rank numbering, with every
other replica's rank as a mirror of the replica-0 rank it repeats (``simulate``'s
``mirrors``): it runs nothing of its own, and joins each cross-replica collective its
replica-0 rank issues, at that rank's time. Its injection ports (``network/injection.py``),
which the run does not fill with its own replica's traffic, are set from its replica-0
rank's at each such collective (``mirror_ports``): where an earlier collective's last messages
still hold them (a group spanning pipeline stages, such as the tied-embedding all-reduce of
the first and last stage, left at different times by its members), the cross-replica
collective waits as in the full run. Each cross-replica collective thus runs in the replica
run itself, at the full run's time, with its members, ports and path (group-symmetric
representative or rank by rank) - the same floating-point operations, so the slice's times
are the full run's bit for bit (``tests/system/test_replica.py`` compares every rank's result
with ``==``).

Where a cross-replica group's ring crosses the network's dimensions unevenly under the
default mode's path rule (``topology/multidim.py``; a data-parallel ring with TP 4 on 8-GPU
nodes leaves the node on every second edge), its members leave it at different times and
replica 1 does not follow replica 0. Replica ``k`` then follows replica ``k % p``, for the
smallest ``p`` dividing the data-parallel degree whose shift maps every such ring onto itself,
edge costs included (:func:`replica_period`): replicas ``0 .. p - 1`` run, every other
replica's rank mirrors its counterpart among them (2 replicas for that ring instead of 32).

Preconditions (checked): a ``pairwise`` backend; every cross-replica collective ending on
every member when it ends on the rank that member repeats (checked on the run's records,
:func:`_check_even`); a ring shift of fewer than all replicas (above); no memory
offload to a per-node or pooled tier (its accesses queue across replicas); with expert
parallelism, whole expert groups among the replicas that run (its all-to-alls cross
replicas during the step: the period is a multiple of EP when EP < DP, and another replica's
expert group is an image of one that runs, as a tensor-parallel group of mirrors is; an
expert group of every replica, EP = DP, is a cross-replica group the mirrors join); every
replica the replica it repeats moved along the network (the same message shapes between the
ranks that exchange messages, :func:`_check_translates`). Cross-replica collectives may come anywhere in the step
(ZeRO-3's gathers and reduce-scatters, overlapped reductions), with or without pipeline or
context-parallel messages: a rank's collectives and sends take its one communication slot
one at a time (``system/rank.py``), point-to-point messages take no injection port (their
delay is the pair's), so at each cross-replica collective a mirror's ports, set from its
counterpart's as it joins, are what its own traffic would have left them.

Reported per rank: :meth:`ReplicaResult.rank_results` the ranks of the replicas that ran;
:meth:`ReplicaResult.world_result` is every rank's ``RunResult``, derived
(``replica_result.py``). :func:`simulate_generated` picks the slice when it applies and every
rank otherwise. Times in seconds.
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
from trainsim.system.symmetry.partial import has_memory_nodes, why_not_partial
from trainsim.workload.generate import GeneratedWorkload
from trainsim.workload.graph import GraphBuilder, WorkloadGraph

CROSS_REPLICA_ROLES = ("dp", "edp")


@dataclass
class ReplicaResult:
    """``makespan_s`` of the whole step; ``run`` the simulation of replicas ``0 .. period - 1``
    (the other replicas' ranks joined their cross-replica collectives); ``sync_s[rank]`` the
    seconds each rank that ran spent in each of its cross-replica collectives; wall-clock
    seconds in ``wall_s``."""

    makespan_s: float
    run: RunResult
    sync_s: dict[int, list[float]]
    ranks_simulated: int
    wall_s: dict[str, float] = field(default_factory=dict)
    events: int = 0
    mirror_of: dict[int, int] = field(default_factory=dict)
    """Ranks of the replicas that ran which were not run because they behave as another
    (:func:`tensor_mirrors`)."""
    positions: list[np.ndarray] = field(default_factory=list, repr=False)
    """Per pipeline stage, the positions of its cross-replica collectives."""
    period: int = 1
    """Replicas ``0 .. period - 1`` ran; replica ``k`` repeats replica ``k % period``
    (:func:`replica_period`)."""

    def rank_results(self) -> list[RankResult]:
        """The ranks of the replicas that ran as the full run reports them (a mirror with its
        representative's times)."""
        out = []
        for rank in self.sync_s:
            r = self.run.ranks[self.mirror_of.get(rank, rank)]
            out.append(r if r.rank == rank else replace(r, rank=rank))
        return out

    def world_result(self, workload: GeneratedWorkload) -> RunResult:
        """Every rank's result, timeline and collective records, as a run of every rank
        reports them: the ranks that did not run (mirrors, other replicas) with the times of
        the rank they repeat (``replica_result.world_result``)."""
        from trainsim.system.symmetry.replica_result import world_result

        return world_result(self, workload)

    def to_dict(self) -> dict[str, Any]:
        return {
            "makespan_s": self.makespan_s,
            "ranks_simulated": self.ranks_simulated,
            "replicas_simulated": self.period,
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
    """Refuse what the slice cannot reproduce from the workload and backend alone."""
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


def _stage_graphs(workload: GeneratedWorkload) -> list[WorkloadGraph]:
    """One graph per pipeline stage of replica 0 (a stage's ranks run the same node types)."""
    firsts: dict[int, int] = {}  # stage -> its first rank in replica 0
    for rank, (stage, replica) in enumerate(zip(workload.stage_of_rank, workload.replica_of_rank, strict=True)):
        if replica == 0:
            firsts.setdefault(stage, rank)
    return [workload.graphs[r] for r in firsts.values()]


def _expert_block(workload: GeneratedWorkload) -> int:
    """How many consecutive replicas must run together: an expert group spans ``ep`` of them
    and exchanges tokens during the step, so when it spans fewer than every replica the ones
    that run hold whole expert groups (another replica's group is an image of one that runs);
    1 without expert parallelism, and when one expert group holds every replica (it is then a
    cross-replica group, :func:`simulate_replica`)."""
    ep = workload.parallelism.ep if workload.parallelism is not None else 1
    return ep if ep < max(workload.replica_of_rank) + 1 else 1


def _check_even(workload: GeneratedWorkload, run: RunResult, cross: set[str], counterpart: list[int]) -> None:
    """Refuse the slice when a rank of another replica left a cross-replica collective at a
    different time than the rank it repeats (``counterpart``): the group's messages cross the
    network's dimensions unevenly (the default mode's path rule, ``topology/multidim.py``: a
    data-parallel ring with members 0, 2, 4, 6 on 4-rank nodes crosses the inter-node link only
    from 2 to 4 and back from 6 to 0) in a way :func:`replica_period` did not foresee, so the
    replicas no longer follow the timelines of the ones that ran. A
    collective run by a group-symmetric representative ends at one time on every member; one
    run rank by rank leaves a record per member, the other replicas' included. ``cross``: the
    cross-replica collectives' groups. Records are paired by their node (a mirror's record
    carries its representative's node id, and a node issues once): a mirror has no record of
    the collectives a memo answered for its representative, so counting records would pair a
    mirror's k-th collective with another one of its counterpart's."""
    ends: dict[tuple[str, int, int], tuple[int, float]] = {}  # (group, node id, repeated rank) -> (rank, end ns)
    for rec in run.collectives:
        if rec.group not in cross:
            continue
        first = ends.setdefault((rec.group, rec.node_id, counterpart[rec.rank]), (rec.rank, rec.end_ns))
        if rec.end_ns != first[1]:
            g = workload.graphs[rec.rank]
            p = int(g.positions_of_ids(np.array([rec.node_id], dtype=np.int64))[0])
            raise ConfigError(
                f"{g.node_summary(p)} (group {rec.group!r}) ends at different times on ranks {first[0]} and {rec.rank} "
                f"({first[1]:.9g} ns and {rec.end_ns:.9g} ns) of two replicas: its messages cross the network's "
                "dimensions unevenly, so the data-parallel replicas do not follow one timeline; simulate every rank",
                field="comm_groups",
            )


def _check_translates(platform: Platform, workload: GeneratedWorkload, images: dict[int, list[int]], cross: set[str]) -> None:
    """Refuse the slice unless every replica is the replica it repeats moved along the network:
    for every two ranks that run and exchange messages (send and receive peers, members of one
    collective's group other than a cross-replica one), their counterparts in every other
    replica have the same ``MultiDimTopology.shape`` between them (the dimensions crossed and
    the offset in each), so each replica's messages have the repeated one's delays and ports
    (``InjectionPorts.copy_busy`` translates ports by it). ``images[r]``: the ranks that
    repeat rank ``r``, replica by replica. Each pair is looked at once."""
    from trainsim.topology import MultiDimTopology

    topo = MultiDimTopology.of_network(platform.network, compat_astra=platform.compat == "astra")
    groups = platform.comm_groups
    pairs: set[tuple[int, int]] = set()
    seen_groups: set[str] = set()
    for r in images:
        g = workload.graphs[r]
        for kind, column in _PEER_COLUMNS:
            pairs.update((r, int(peer)) for peer in set(getattr(g, column)[g.types == kind].tolist()))
        names = g.pg_name
        for name in {names[p] for p in np.flatnonzero(g.types == NodeType.COMM_COLL_NODE).tolist()} - cross - seen_groups:
            seen_groups.add(name)
            members = groups.get(name, ())
            pairs.update((a, b) for a in members for b in members if a != b)
    for a, b in sorted(pairs):
        want = topo.shape(a, b)
        for x, y in zip(images[a], images[b], strict=True):
            if topo.shape(x, y) != want:
                raise ConfigError(
                    f"ranks {a} and {b} of data-parallel replica 0 exchange messages across {want} (dimension, offset), "
                    f"their counterparts {x} and {y} of another replica across {topo.shape(x, y)}: the replicas do not "
                    "follow one timeline on this network; simulate every rank",
                    field="comm_groups",
                )


def _hop_cost(topo: Any, a: int, b: int) -> tuple[tuple[int, int], ...]:
    """What a message from ``a`` to ``b`` pays under the platform's path rule
    (``topology/multidim.py``): the dimensions it crosses, with the hops in each."""
    return tuple((d, topo.hops(d, a, b)) for d in topo.path(a, b))


def replica_period(platform: Platform, workload: GeneratedWorkload, cross: set[str]) -> int:
    """The fewest data-parallel replicas whose run stands for all: the smallest ``p``
    dividing the data-parallel degree such that moving every rank ``p`` replicas on (same
    stage and position, replica ``k`` to ``(k + p) % dp``) turns the ring of every
    cross-replica collective's group (``cross``) into itself, rotated, edge costs included
    (the dimensions each edge crosses and the hops in each). Replica ``k`` then follows
    replica ``k % p``'s timeline: 1 where every ring's edges cost alike; 2 for a
    data-parallel ring with TP 4 on 8-GPU nodes (members 0, 4, 8, ...: every second edge
    leaves the node). A ConfigError, naming a group and its edge costs, when only every
    replica would do."""
    from trainsim.topology import MultiDimTopology

    dp = max(workload.replica_of_rank) + 1
    topo = MultiDimTopology.of_network(platform.network, compat_astra=platform.compat == "astra")
    places: dict[tuple[int, int], list[int]] = {}  # (stage, replica) -> its ranks, ascending
    for rank, place in enumerate(zip(workload.stage_of_rank, workload.replica_of_rank, strict=True)):
        places.setdefault(place, []).append(rank)
    index = {r: i for ranks in places.values() for i, r in enumerate(ranks)}
    rings = []  # (members, edge costs) per group
    for name in sorted(cross):
        # no name: the whole machine, in rank order
        members = tuple(platform.comm_groups.get(name, ())) if name else tuple(range(len(workload.graphs)))
        if not members:
            raise ConfigError(f"cross-replica collective on group {name!r}, which the platform does not define", field="comm_groups")
        n = len(members)
        rings.append((members, [_hop_cost(topo, members[i], members[(i + 1) % n]) for i in range(n)]))

    def moves_onto_itself(members: tuple[int, ...], costs: list[Any], p: int) -> bool:
        at = {m: i for i, m in enumerate(members)}
        moved = [places[(workload.stage_of_rank[m], (workload.replica_of_rank[m] + p) % dp)][index[m]] for m in members]
        shift = at.get(moved[0])
        n = len(members)
        return shift is not None and all(
            moved[i] == members[(i + shift) % n] and costs[i] == costs[(i + shift) % n] for i in range(n)
        )

    step = _expert_block(workload)  # the period is a multiple of it
    if dp == 1 or (not rings and step == 1):
        return 1
    for p in range(step, dp, step):
        if dp % p == 0 and all(moves_onto_itself(members, costs, p) for members, costs in rings):
            return p
    members, costs = next(((m, c) for m, c in rings if len(set(c)) > 1), rings[0])
    raise ConfigError(
        f"the cross-replica group {list(members)[:8]}{'...' if len(members) > 8 else ''} has ring edges of costs "
        f"{sorted(set(costs))} ((dimension, hops) crossed) that no shift by fewer than all {dp} replicas maps onto "
        "themselves: every replica follows its own timeline; simulate every rank",
        field="comm_groups",
    )


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
    replica 0, whose cross-replica collectives run with the other replicas' ranks as mirrors.
    Equal to ``simulate(platform, workload.graphs)`` under the preconditions of this module.
    With ``mirror``, the tensor-parallel peers of a stage's first rank run as its mirrors
    (:func:`tensor_mirrors`) when they provably behave as it. ``progress`` hears of the run:
    nodes done of all to simulate."""
    _check(workload, backend)
    stages = max(workload.stage_of_rank) + 1
    block = _expert_block(workload)
    expert_groups = workload.parallelism is not None and workload.parallelism.ep > 1
    # an expert group of every replica is a cross-replica group like the data-parallel ones
    roles = CROSS_REPLICA_ROLES + (("ep",) if expert_groups and block == 1 else ())
    positions = [workload.role_positions(s, *roles) for s in range(stages)]
    why = why_not_partial(platform, memory_traffic=has_memory_nodes(_stage_graphs(workload)))
    if why:
        raise ConfigError(why)
    from trainsim.system.symmetry.replica_result import counterparts

    # the replicas that run at least (``_expert_block``): their cross-replica groups cover
    # every one (an expert-data-parallel ring holds one replica of each expert group)
    first = [r for r, replica in enumerate(workload.replica_of_rank) if replica < block]
    cross = {workload.graphs[r].pg_name[p] for r in first for p in positions[workload.stage_of_rank[r]].tolist()}
    period = replica_period(platform, workload, cross)
    counterpart = counterparts(workload, period)
    empty = GraphBuilder(source="replica-slice: other replica").build()
    # (a generated step makes a rank's graph when asked for it: the other replicas' are never made)
    graphs = [workload.graphs[r] if replica < period else empty for r, replica in enumerate(workload.replica_of_rank)]
    ran = [r for r, replica in enumerate(workload.replica_of_rank) if replica < period]
    images: dict[int, list[int]] = {r: [] for r in ran}  # rank that runs -> the ranks repeating it, replica by replica
    for rank in sorted(range(len(counterpart)), key=workload.replica_of_rank.__getitem__):
        if counterpart[rank] != rank:
            images[counterpart[rank]].append(rank)
    own = {(r, workload.graphs[r].pg_name[p]) for r in ran for p in positions[workload.stage_of_rank[r]].tolist()}
    _check_translates(platform, workload, images, cross)
    overall = _Overall(progress, sum(len(graphs[r]) for r in ran))
    t0 = time.perf_counter()
    mirrors = tensor_mirrors(platform, workload, graphs, ran) if mirror else {}
    for ms in mirrors.values():
        for m in ms:
            overall.total -= len(graphs[m])
            graphs[m] = empty
    mirror_of = {m: rep for rep, ms in mirrors.items() for m in ms}
    joined = {r: mirrors.get(r, ()) + tuple(images[r]) for r in ran if r not in mirror_of}
    joined = {r: ms for r, ms in joined.items() if ms}
    run = simulate(platform, graphs, backend=backend, mirrors=joined or None, mirror_ports=True, progress=overall.during())
    overall.finished(run.makespan_s * 1e9, sum(len(g) for g in graphs))
    _check_even(workload, run, cross, counterpart)
    sync: dict[int, list[float]] = {r: [] for r in ran}
    for rec in run.collectives:
        if (rec.rank, rec.group) in own:
            sync[rec.rank].append((rec.end_ns - rec.start_ns) / 1e9)
    for m, rep in mirror_of.items():
        sync[m] = list(sync[rep])
    return ReplicaResult(
        makespan_s=run.makespan_s,
        run=run,
        sync_s=sync,
        ranks_simulated=len(ran) - len(mirror_of),
        wall_s={"replica": time.perf_counter() - t0},
        events=run.events,
        mirror_of=mirror_of,
        positions=positions,
        period=period,
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
    platform: Platform, workload: GeneratedWorkload, graphs: list[WorkloadGraph], ran: list[int]
) -> dict[int, tuple[int, ...]]:
    """The ranks of each pipeline stage of each replica in ``ran`` that behave exactly as the
    stage's first rank in that replica (its tensor-parallel peers), as ``{representative:
    mirrors}``; ``{}`` when that cannot be shown.

    Rank ``i`` of a stage mirrors rank 0 of it when renaming rank ``i`` of every stage, in
    every replica, to rank 0 of that stage and replica turns its graph into rank 0's: the same arrays apart from peers and
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

    stages: dict[tuple[int, int], list[int]] = {}  # (stage, replica) -> its ranks that run, ascending
    for r in ran:
        stages.setdefault((workload.stage_of_rank[r], workload.replica_of_rank[r]), []).append(r)
    width = {len(rs) for rs in stages.values()}
    if len(width) != 1 or width == {1}:
        return {}
    places: dict[tuple[int, int], list[int]] = {}  # (stage, replica) -> its ranks, ascending
    for r, place in enumerate(zip(workload.stage_of_rank, workload.replica_of_rank, strict=True)):
        places.setdefault(place, []).append(r)
    net = platform.network
    topo = MultiDimTopology.of_network(net, compat_astra=platform.compat == "astra")
    groups = {name: tuple(members) for name, members in platform.comm_groups.items()}

    def shape(a: int, b: int) -> tuple[tuple[int, int], ...]:
        # every dimension the message crosses under the platform's path rule, with the
        # coordinate offset in each (finer than group.py's classes: Switch offsets kept)
        return tuple((d, (topo.coord(b, d) - topo.coord(a, d)) % topo.sizes[d]) for d in topo.path(a, b))

    def cost(a: int, b: int) -> tuple[tuple[int, int], ...]:
        return _hop_cost(topo, a, b)

    def same_shapes(group: tuple[int, ...], rename: dict[int, int]) -> bool:
        # every two members as far apart as their renamed ones; a rename that moves every
        # member by one coordinate vector keeps every difference (so every path and offset):
        # checked per member, not per pair (a 128-member data-parallel group is 16,384 pairs)
        if _moves_by_one_vector(topo, group, rename):
            return True
        return all(shape(a, b) == shape(rename[a], rename[b]) for a in group for b in group)

    mirrors: dict[int, tuple[int, ...]] = {}
    for i in range(1, width.pop()):
        rename = {rs[i]: rs[0] for rs in places.values()}
        for rs in stages.values():
            if not _mirrors_rank(graphs[rs[i]], graphs[rs[0]], rs, rename, groups, shape, cost, same_shapes):
                return {}
    for rs in stages.values():
        mirrors[rs[0]] = tuple(rs[1:])
    mirror_of = {m: rep for rep, ms in mirrors.items() for m in ms}
    for rep in mirrors:
        if not _issues_alone_or_with_its_mirrors(graphs[rep], mirror_of, groups):
            return {}
    # no ``partial.why_not_mirrored_ports`` here: the slice runs with ``mirror_ports``, so a
    # mirror joining a collective has its representative's busy ports, which are its own in
    # the full run (every message it sends there is the representative's at the same offsets)
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
    same_shapes: Any,
) -> bool:
    """Whether ``mine`` is ``rep`` renamed (:func:`tensor_mirrors`); ``shape(a, b)``: what a
    message from ``a`` to ``b`` looks like (the dimensions it crosses and the offset in each);
    ``cost(a, b)``: what it pays (the dimensions, with the hops in each); ``same_shapes(group,
    rename)``: whether every two members of ``group`` have the shape of their renamed ones."""
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
        if not same_shapes(group, rename):
            return False
    return True


def _moves_by_one_vector(topo: Any, group: tuple[int, ...], rename: dict[int, int]) -> bool:
    """Whether ``rename`` moves every member of ``group`` by the same coordinate vector (exact
    integers, no wrap-around): then the coordinate differences between any two members, and so
    the dimensions a message between them crosses and its offset in each, are their renamed
    ones' under every topology kind and path rule."""
    if not group:
        return True
    first = group[0]
    moved = tuple(b - a for a, b in zip(topo.coords(first), topo.coords(rename[first]), strict=True))
    return all(
        tuple(b - a for a, b in zip(topo.coords(m), topo.coords(rename[m]), strict=True)) == moved for m in group
    )


@dataclass
class GeneratedRun:
    """One step of a generated workload. ``result``: every rank's result, timeline and
    collective records, as ``simulate`` gives them (in a slice, the ranks that did not run
    repeat the rank they mirror: :meth:`ReplicaResult.world_result`); ``ranks_simulated`` of
    the ranks ran their graphs (a slice runs one rank per pipeline stage when its
    tensor-parallel peers mirror it); ``mode`` says which, ``why_every_rank`` why a slice was
    not taken ("" when it was or was not asked for). ``wall_s``: seconds the simulation
    took; ``replica_ranks``: in a slice, the ranks of the replicas that ran (0 otherwise),
    ``replica_period`` how many replicas ran (replica ``k`` repeats replica ``k % period``)."""

    result: RunResult
    mode: str
    why_every_rank: str
    wall_s: float
    ranks_simulated: int
    replica_ranks: int = 0
    replica_period: int = 0

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
            "replicas_simulated": self.replica_period,
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
            sliced = simulate_replica(platform, workload, backend=backend, progress=progress)
        except ConfigError as exc:
            why = str(exc)
        else:
            result = sliced.world_result(workload)
            return GeneratedRun(result, "replica slice", "", time.perf_counter() - t0, sliced.ranks_simulated, len(sliced.sync_s), sliced.period)
    full = simulate(platform, workload.graphs, backend=backend, progress=progress)
    full.info.update(mode="every rank", ranks_simulated=len(full.ranks), world=len(full.ranks))
    return GeneratedRun(full, "every rank", why, time.perf_counter() - t0, len(full.ranks))
