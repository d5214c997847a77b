"""Result objects of a simulation: per-rank times and the run's makespan, in seconds.

``exposed_comm_s`` follows ASTRA-sim's definition: finish time minus the summed GPU compute
time (reference-results/README.md). ``comm_s`` is the time during which at least one
communication node (collective, send, receive) of the rank is in flight.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from trainsim.lazyseq import LazySequence
from trainsim.workload.graph import WorkloadGraph


@dataclass
class RankResult:
    rank: int
    finish_s: float
    compute_s: float  # GPU compute (busy time of the GPU compute slot)
    comm_s: float  # union of in-flight communication intervals
    exposed_comm_s: float  # finish - compute (ASTRA-sim's "exposed communication")
    cpu_s: float = 0.0  # CPU-op busy time
    memory_s: float = 0.0  # remote-memory access time
    nodes: int = 0


class UniformRanks(LazySequence[RankResult]):
    """Every rank's result when all ranks behave as one representative
    (``system/symmetry/whole_step.py``): item i is the representative's result with ``rank = i``,
    made on access, so 65,536 ranks cost one object."""

    __slots__ = ("template",)

    def __init__(self, template: RankResult, npus: int) -> None:
        super().__init__(npus)
        self.template = template

    def item(self, index: int) -> RankResult:
        return replace(self.template, rank=index)

    def __repr__(self) -> str:
        return f"UniformRanks({self.template!r}, npus={self.length})"


class UniformRecords(LazySequence[Any]):
    """Every rank's collective records when all ranks behave as one representative: for each of
    the representative's records in order, one per rank (the order a symmetric rank-by-rank run
    appends them), the representative's with ``rank`` replaced, made on access."""

    __slots__ = ("records", "npus")

    def __init__(self, records: Sequence[Any], npus: int) -> None:
        super().__init__(len(records) * npus)
        self.records = list(records)
        self.npus = npus

    def item(self, index: int) -> Any:
        rec = self.records[index // self.npus]
        return replace(
            rec,
            rank=index % self.npus,
            dim_bytes=list(rec.dim_bytes),
            chunk_spans=[list(span) for span in rec.chunk_spans],
        )


@dataclass
class NodeTimeline:
    """When each node of one rank's graph was issued and completed (ns; -1 = never)."""

    graph: WorkloadGraph
    start_ns: list[float]
    end_ns: list[float]


@dataclass
class RunResult:
    makespan_s: float
    ranks: Sequence[RankResult]
    events: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    timelines: Sequence[NodeTimeline] = field(default_factory=list, repr=False)
    # per rank, the rank that ran for it when its timeline repeats another's times on its own
    # graph, in a way every breakdown of it is that rank's (a replica slice's world result:
    # ``system/symmetry/replica_result.py``); None when each rank's timeline is its own run
    repeats: Sequence[int] | None = field(default=None, repr=False)
    collectives: Sequence[Any] = field(default_factory=list, repr=False)  # CollectiveRecord per rank and collective
    # per rank, HBM and unit use of compute and collectives (``system.contention.RankResources``)
    # when the endpoint model shares them (docs/ace.md); None otherwise
    resources: list[Any] | None = field(default=None, repr=False)
    # the network backend's own statistics (``NetworkBackend.counters``: e.g. queue depth over
    # time, pause time per link, per-flow rates), None when it keeps none
    network_counters: dict[str, Any] | None = field(default=None, repr=False)

    def timeline_like(self, rank: int) -> NodeTimeline:
        """A timeline with rank ``rank``'s node arrays and times: its own, or that of the rank
        it repeats (:attr:`repeats`), which is already made; for reports that need only those."""
        return self.timelines[rank if self.repeats is None else self.repeats[rank]]

    def to_dataframe(self) -> Any:
        """One row per rank (pandas), for notebooks."""
        from trainsim.extras import require

        pd = require("pandas", "a result DataFrame")
        return pd.DataFrame([asdict(r) for r in self.ranks]).set_index("rank")

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``trainsim run --json`` (issue 2)."""
        return {
            "makespan_s": self.makespan_s,
            "ranks": [asdict(r) for r in self.ranks],
            "events": self.events,
            **({"info": self.info} if self.info else {}),
            **({"resources": [r.to_dict() for r in self.resources]} if self.resources is not None else {}),
            **({"network_counters": self.network_counters} if self.network_counters is not None else {}),
        }
