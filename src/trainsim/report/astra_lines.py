"""ASTRA-sim's per-rank result lines, for scripts written around ASTRA-sim (report layer).

ASTRA-sim's workload layer (``Workload::report``, ``Statistics::report``) logs, when a rank's
graph is done::

    sys[0] finished, 117780 cycles, exposed communication 117780 cycles.
    sys[0], Wall time: 117780
    sys[0], Comm time: 117780

A cycle is 1 ns. "exposed communication" is the finish time minus the summed durations of the
rank's GPU compute nodes (``hw_resource->tics_gpu_ops``; CPU and remote-memory time are not
subtracted), which is :attr:`RankResult.exposed_comm_s`. The wall time is the last node's
end (the finish time); each "<kind> time" is the union of the intervals of the rank's nodes of
that kind (CPU compute, GPU compute, communication, remote memory, invalid), printed only for
kinds the rank ran, in the order of ASTRA-sim's ``OperatorType`` (ASTRA-sim prints them in its
hash map's order). Numbers are whole nanoseconds: exact in ``compat astra`` (whose times are
whole ns), rounded to the nearest ns in the default mode. ASTRA-sim's other lines ("Post
statistics processing", logging of its own set-up) carry no result and are not reproduced.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from trainsim.enums import NodeType
from trainsim.report.intervals import union_length

_COMM = (NodeType.COMM_COLL_NODE, NodeType.COMM_SEND_NODE, NodeType.COMM_RECV_NODE)
_MEMORY = (NodeType.MEM_LOAD_NODE, NodeType.MEM_STORE_NODE)


def whole_ns(seconds: float) -> int:
    """Seconds as a whole number of nanoseconds (ASTRA-sim's cycles)."""
    return round(seconds * 1e9)


def astra_rank_lines(result: Any) -> Iterator[str]:
    """The lines ASTRA-sim logs for each rank of ``result`` (a :class:`RunResult`), rank by rank."""
    kinds: dict[int, list[tuple[str, int]]] = {}  # per timeline object: ranks may share one
    timelines = result.timelines
    for index, rank in enumerate(result.ranks):
        finish = whole_ns(rank.finish_s)
        yield f"sys[{rank.rank}] finished, {finish} cycles, exposed communication {finish - whole_ns(rank.compute_s)} cycles."
        yield f"sys[{rank.rank}], Wall time: {finish}"
        if index < len(timelines):
            timeline = timelines[index]
            if id(timeline) not in kinds:
                kinds[id(timeline)] = _kind_times(timeline)
            for name, ns in kinds[id(timeline)]:
                yield f"sys[{rank.rank}], {name} time: {ns}"


def _kind_times(timeline: Any) -> list[tuple[str, int]]:
    """``[(ASTRA-sim's name of a node kind, union of its intervals in whole ns), ...]`` for the
    kinds of node the rank ran."""
    graph = timeline.graph
    start = np.asarray(timeline.start_ns, dtype=float)
    end = np.asarray(timeline.end_ns, dtype=float)
    ran = end >= 0
    types = graph.types
    compute = types == NodeType.COMP_NODE
    masks = (
        ("CPU", compute & graph.is_cpu_op),
        ("GPU", compute & ~graph.is_cpu_op),
        ("Comm", np.isin(types, _COMM)),
        ("Remote mem", np.isin(types, _MEMORY)),
        ("Invalid", types == NodeType.INVALID_NODE),
    )
    out = []
    for name, mask in masks:
        mask = mask & ran
        if mask.any():
            out.append((name, round(union_length(start[mask], end[mask]))))
    return out
