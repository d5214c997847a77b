"""Every rank's result of a replica slice (DESIGN.md, system layer; "Speed: symmetry first").

:func:`trainsim.system.symmetry.replica.simulate_replica` runs data-parallel replica 0 (one
rank per pipeline stage when tensor-parallel mirrors stand for the others), the other replicas'
ranks joining its cross-replica collectives. Every other rank repeats a rank that ran, up to
renaming: a mirror its stage's first rank, a rank of replica ``k`` the replica-0 rank of the
same stage and position. :func:`world_result` builds the
:class:`~trainsim.system.result.RunResult` of the whole machine from that, as ``simulate``
returns it for a run of every rank:

- ``ranks``: each rank's times, those of the rank it repeats;
- ``timelines``: each rank's own graph (collectives on its own groups, its own pipeline peers)
  with the issue and completion times of the rank it repeats (the same lists, not copies),
  made on access (:class:`ReplicaTimelines`);
- ``collectives``: every rank's records (:class:`ReplicaRecords`, made on access): the
  repeated rank's, renamed.

Times in ns inside records and timelines, seconds in rank results.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from trainsim.enums import NodeType
from trainsim.lazyseq import LazySequence
from trainsim.system.result import NodeTimeline, RankResult, RunResult

if TYPE_CHECKING:
    from trainsim.system.symmetry.replica import ReplicaResult
    from trainsim.workload.generate import GeneratedWorkload
    from trainsim.workload.graph import WorkloadGraph


def counterparts(workload: GeneratedWorkload, period: int = 1) -> list[int]:
    """For every rank, the rank it repeats: the rank of replica ``replica % period`` at the
    same pipeline stage and the same position among its stage's ranks of its replica (ranks
    ascending: every other index, tensor-parallel included, is the same)."""
    by_place: dict[tuple[int, int], list[int]] = {}
    for rank, (stage, replica) in enumerate(zip(workload.stage_of_rank, workload.replica_of_rank, strict=True)):
        by_place.setdefault((stage, replica), []).append(rank)
    out = [0] * len(workload.graphs)
    for (stage, replica), ranks in by_place.items():
        for i, rank in enumerate(ranks):
            out[rank] = by_place[(stage, replica % period)][i]
    return out


def world_result(sliced: ReplicaResult, workload: GeneratedWorkload) -> RunResult:
    """The whole machine's result of a replica slice."""
    run = sliced.run
    part = counterparts(workload, sliced.period)
    mirror_of = sliced.mirror_of
    source = [mirror_of.get(part[r], part[r]) for r in range(len(workload.graphs))]
    by_rank = {r.rank: r for r in sliced.rank_results()}
    ranks: list[RankResult] = []
    for rank in range(len(workload.graphs)):
        own = by_rank[part[rank]]
        ranks.append(own if own.rank == rank else replace(own, rank=rank))
    simulated = set(source)
    base: dict[int, list[Any]] = {r: [] for r in simulated}
    for rec in run.collectives:
        if rec.rank in simulated:
            base[rec.rank].append(rec)
    return RunResult(
        makespan_s=run.makespan_s,
        ranks=ranks,
        events=sliced.events,
        info={**run.info, "mode": "replica slice", "ranks_simulated": sliced.ranks_simulated, "replicas_simulated": sliced.period, "world": len(ranks)},
        timelines=ReplicaTimelines(run.timelines, source, workload.graphs),
        collectives=ReplicaRecords(base, source, workload.graphs),
        repeats=source if _groups_hold_what_their_members_repeat(workload, source) else None,
    )


def _groups_hold_what_their_members_repeat(workload: GeneratedWorkload, source: list[int]) -> bool:
    """Whether every communicator group of a rank that ran holds, for each of its members, the
    rank that member repeats. Then that rank has the group at the member's positions (one group
    per role), so the group's issue times are found among the ranks that ran, and each rank's
    breakdown is the one of the rank it repeats (``RunResult.repeats``). The whole machine's
    group ("" or "0") holds every rank."""
    groups = {str(int(gid)): set(members) for gid, members in workload.comm_groups.items()}
    seen: set[str] = set()
    for rank in sorted(set(source)):
        graph = workload.graphs[rank]
        names = {graph.pg_name[p] for p in np.flatnonzero(graph.types == NodeType.COMM_COLL_NODE).tolist()}
        for name in names - seen - {"", "0"}:
            seen.add(name)
            members = groups.get(name)
            if members is None or any(source[m] not in members for m in members):
                return False
    return True


class ReplicaTimelines(LazySequence[NodeTimeline]):
    """Every rank's node timeline: its own graph with the issue and completion times of the
    rank it repeats (``source[rank]``, which ran; the same lists). Made on access, so a caller
    that reads only the ranks' results (a sweep) never makes the other ranks' graphs."""

    __slots__ = ("ran", "source", "graphs")

    def __init__(self, ran: Sequence[NodeTimeline], source: list[int], graphs: Sequence[WorkloadGraph]) -> None:
        super().__init__(len(source))
        self.ran = ran
        self.source = source
        self.graphs = graphs

    def item(self, index: int) -> NodeTimeline:
        ran = self.ran[self.source[index]]
        return NodeTimeline(self.graphs[index], ran.start_ns, ran.end_ns)


class ReplicaRecords(LazySequence[Any]):
    """Every rank's collective records, rank by rank: the records of the rank it repeats
    (``source[rank]``, which ran) with ``rank`` and ``group`` (the rank's own communicator
    group of that node) replaced. Made on access; the lists inside a record are shared with
    the record it repeats."""

    __slots__ = ("base", "source", "graphs", "offsets", "_last")

    def __init__(self, base: dict[int, list[Any]], source: list[int], graphs: Sequence[WorkloadGraph]) -> None:
        counts = [len(base[source[r]]) for r in range(len(source))]
        super().__init__(sum(counts))
        self.base = base
        self.source = source
        self.graphs = graphs
        self.offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self._last: tuple[int, list[str]] = (-1, [])

    def _rank_groups(self, rank: int) -> list[str]:
        """The communicator group of each of ``source[rank]``'s records on ``rank``'s graph
        (the last rank's kept for the next random access)."""
        if self._last[0] == rank:
            return self._last[1]
        graph = self.graphs[rank]
        own = self.base[self.source[rank]]
        pos = graph.positions_of_ids(np.fromiter((rec.node_id for rec in own), dtype=np.int64, count=len(own)))
        names = graph.pg_name
        groups = [names[p] for p in pos.tolist()]
        self._last = (rank, groups)
        return groups

    def of_rank(self, rank: int) -> Iterator[Any]:
        """``rank``'s records, in the order this sequence holds them."""
        own = self.base[self.source[rank]]
        if self.source[rank] == rank:
            yield from own
        else:
            for rec, group in zip(own, self._rank_groups(rank), strict=True):
                yield replace(rec, rank=rank, group=group)

    def item(self, index: int) -> Any:
        rank = int(np.searchsorted(self.offsets, index, side="right")) - 1
        j = index - int(self.offsets[rank])
        own = self.base[self.source[rank]]
        if self.source[rank] == rank:
            return own[j]
        return replace(own[j], rank=rank, group=self._rank_groups(rank)[j])

    def represented(self) -> Iterator[tuple[Any, int]]:
        """Each record of the ranks that ran with the number of ranks that repeat it (itself
        included; the others on their own groups): what a report needs without making every
        record."""
        repeats: dict[int, int] = {}
        for src in self.source:
            repeats[src] = repeats.get(src, 0) + 1
        for src, count in sorted(repeats.items()):
            for rec in self.base[src]:
                yield rec, count

    def __iter__(self) -> Iterator[Any]:
        for rank in range(len(self.source)):
            yield from self.of_rank(rank)

    def __repr__(self) -> str:
        return f"ReplicaRecords({self.length} records of {len(self.source)} ranks, {len(self.base)} simulated)"
