"""Where each rank's time goes: compute, communication, exposed communication, overlap,
memory, CPU and idle (waiting on a peer or a pipeline bubble).

Definitions (all in seconds, per rank, from the executor's node issue/completion times):
- ``compute_s``: union of GPU compute node intervals;
- ``comm_s``: union of collective, send and receive intervals;
- ``overlap_s``: time both compute and communication are in flight;
- ``exposed_comm_s``: finish minus summed GPU compute, ASTRA-sim's definition
  (reference-results/README.md), equal to the time the rank is not computing;
- ``memory_s``, ``cpu_s``: unions of remote-memory and CPU-node intervals;
- ``idle_s``: finish minus the union of all activity;
- ``step``: the step breakdown (``report/step_breakdown.py``, docs/breakdown.md): every instant
  of the step given to one category (compute, recompute, exposed tensor-parallel and
  data-parallel communication, pipeline bubble, p2p wait, memory stalls, idle, ...), summing
  to the step time; ``step_from`` says whether the categories come from the generator's roles
  or from the graph alone.
Ranks with identical numbers are folded into one class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from trainsim.enums import NodeType
from trainsim.extras import require
from trainsim.report.intervals import intersection_length, union_length
from trainsim.report.step_breakdown import NodeRoles, step_breakdown
from trainsim.system.result import NodeTimeline, RunResult

COMM_TYPES = (NodeType.COMM_COLL_NODE, NodeType.COMM_SEND_NODE, NodeType.COMM_RECV_NODE)
MEM_TYPES = (NodeType.MEM_LOAD_NODE, NodeType.MEM_STORE_NODE)


@dataclass
class RankBreakdown:
    ranks: list[int]
    finish_s: float
    compute_s: float
    comm_s: float
    overlap_s: float
    exposed_comm_s: float
    memory_s: float
    cpu_s: float
    idle_s: float
    step: dict[str, float] = field(default_factory=dict)
    step_from: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def lanes(timeline: NodeTimeline) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Interval arrays (seconds) per lane: compute, comm, memory, cpu."""
    g = timeline.graph
    start = np.asarray(timeline.start_ns) * 1e-9
    end = np.asarray(timeline.end_ns) * 1e-9
    ran = end >= 0
    types = g.types
    comp = (types == NodeType.COMP_NODE) & ran
    masks = {
        "compute": comp & ~g.is_cpu_op,
        "cpu": (comp & g.is_cpu_op) | (np.isin(types, MEM_TYPES) & g.is_cpu_op & ran),
        "comm": np.isin(types, COMM_TYPES) & ran,
        "memory": np.isin(types, MEM_TYPES) & ~g.is_cpu_op & ran,
    }
    return {name: (start[m], end[m]) for name, m in masks.items()}


def rank_breakdown(rank: int, finish_s: float, timeline: NodeTimeline) -> RankBreakdown:
    ln = lanes(timeline)
    compute = union_length(*ln["compute"])
    busy_s = np.concatenate([v[0] for v in ln.values()])
    busy_e = np.concatenate([v[1] for v in ln.values()])
    return RankBreakdown(
        ranks=[rank],
        finish_s=finish_s,
        compute_s=compute,
        comm_s=union_length(*ln["comm"]),
        overlap_s=intersection_length(ln["compute"], ln["comm"]),
        exposed_comm_s=max(0.0, finish_s - float(np.sum(ln["compute"][1] - ln["compute"][0]))),
        memory_s=union_length(*ln["memory"]),
        cpu_s=union_length(*ln["cpu"]),
        idle_s=max(0.0, finish_s - union_length(busy_s, busy_e)),
    )


def breakdown_dataframe(rows: list[RankBreakdown]) -> Any:
    """The breakdown as a pandas DataFrame, one row per class of identical ranks."""
    pd = require("pandas", "a breakdown DataFrame")
    return pd.DataFrame([b.to_dict() for b in rows])


def breakdown(result: RunResult, roles: Sequence[NodeRoles | None] | None = None) -> list[RankBreakdown]:
    """Per-rank breakdowns, ranks with identical numbers folded into one entry. ``roles``: per
    rank, what a generator knows of each node (``step_breakdown.roles_of``), for the step
    breakdown's role categories; None for a workload read from files."""
    repeats = result.repeats
    steps = step_breakdown(result.timelines, result.makespan_s, roles, repeats=repeats)
    step_from = "roles" if roles is not None and all(r is not None for r in roles) else "graph"
    classes: dict[tuple[Any, ...], RankBreakdown] = {}
    same = SameTimeline()
    for i, (r, step) in enumerate(zip(result.ranks, steps, strict=True)):
        # ranks that ran the same graph at the same times have the same breakdown
        timeline = result.timeline_like(i)
        key = (same.id(timeline), r.finish_s, tuple(step.values()))
        if key in classes:
            classes[key].ranks.append(r.rank)
        else:
            row = classes[key] = rank_breakdown(r.rank, r.finish_s, timeline)
            row.step, row.step_from = step, step_from
    return list(classes.values())


class SameTimeline:
    """A small id per distinct (graph structure, issue times, completion times) of a timeline,
    its content compared once per set of lists (ranks derived from one share them): ranks with
    one id break down alike and show as one class in a trace."""

    def __init__(self) -> None:
        self._by_lists: dict[tuple[int, int, int, int], int] = {}
        self._by_content: dict[tuple[Any, ...], int] = {}

    def id(self, timeline: NodeTimeline) -> int:
        g = timeline.graph
        lists = (id(g.ids), id(g.types), id(timeline.start_ns), id(timeline.end_ns))
        got = self._by_lists.get(lists)
        if got is None:
            content = (g.ids.tobytes(), g.types.tobytes(), tuple(timeline.start_ns), tuple(timeline.end_ns))
            got = self._by_lists[lists] = self._by_content.setdefault(content, len(self._by_content))
        return got
