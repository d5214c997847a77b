"""Chrome-trace / Perfetto JSON timelines (Trace Event Format, "JSON Object Format").

One process per rank (or per class of ranks with identical timelines, unless ``expand``),
one thread per lane (compute, communication, memory, CPU), every node a complete event
("ph": "X", ``ts``/``dur`` in microseconds); collectives' chunks, when the collective
runtime recorded them, nest under their collective on the same lane. Optional counter
events ("ph": "C") carry per-dimension network utilization. Loads in ui.perfetto.dev and
chrome://tracing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trainsim import budget
from trainsim.enums import NodeType
from trainsim.report.breakdown import SameTimeline
from trainsim.system.result import NodeTimeline, RunResult

LANES = {"compute": 1, "comm": 2, "memory": 3, "cpu": 4}
_LANE_OF_TYPE = {
    NodeType.COMP_NODE: "compute",
    NodeType.COMM_COLL_NODE: "comm",
    NodeType.COMM_SEND_NODE: "comm",
    NodeType.COMM_RECV_NODE: "comm",
    NodeType.MEM_LOAD_NODE: "memory",
    NodeType.MEM_STORE_NODE: "memory",
}

_TYPES = {int(t): t for t in NodeType}
_COMM = (NodeType.COMM_COLL_NODE, NodeType.COMM_SEND_NODE, NodeType.COMM_RECV_NODE)


def _rank_classes(result: RunResult, expand: bool) -> list[tuple[list[int], NodeTimeline]]:
    if expand:
        return [([r.rank], t) for r, t in zip(result.ranks, result.timelines, strict=True)]
    classes: dict[int, tuple[list[int], NodeTimeline]] = {}
    same = SameTimeline()
    for i, r in enumerate(result.ranks):
        key = same.id(result.timeline_like(i))
        if key not in classes:  # the class shows its first rank's own timeline
            classes[key] = ([], result.timelines[i])
        classes[key][0].append(r.rank)
    return list(classes.values())


def _chunk_spans(records: Sequence[Any], ranks: set[int]) -> dict[tuple[int, int], list[list[float]]]:
    """``(rank, node id) -> chunk spans`` of the collectives of ``ranks`` (the ranks a trace
    shows); records that can list one rank's (``of_rank``, a derived result's) are not all
    made."""
    of_rank = getattr(records, "of_rank", None)
    source = (rec for rank in sorted(ranks) for rec in of_rank(rank)) if of_rank is not None else records
    return {(rec.rank, rec.node_id): rec.chunk_spans for rec in source if rec.rank in ranks and getattr(rec, "chunk_spans", None)}


def check_trace_size(nodes: int, timelines: int, *, classes: bool = False) -> None:
    """Refuse a trace of ``nodes`` nodes over ``timelines`` timelines (one per rank, or per
    class of identical ranks) over the ``trace_events`` budget (docs/limits.md)."""
    if classes:
        what, way_under = f"a trace of {timelines:,} classes of ranks", "simulate a shorter step"
    else:
        what, way_under = f"--expand: a trace of every rank's timeline ({timelines:,} ranks)", "leave out --expand (ranks with identical timelines shown once)"
    budget.check("trace_events", nodes, what, way_under=way_under, field="--trace")


def _label(ranks: Sequence[int]) -> str:
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return f"ranks {ranks[0]}..{ranks[-1]} ({len(ranks)} identical)"


def trace_events(
    result: RunResult,
    *,
    expand: bool = False,
    counters: dict[str, list[tuple[float, float]]] | None = None,
) -> list[dict[str, Any]]:
    """The ``traceEvents`` list. ``counters`` maps a series name to (time_s, value) points."""
    events: list[dict[str, Any]] = []
    if expand:  # counted before every rank's timeline is made
        check_trace_size(sum(len(result.timeline_like(i).graph) for i in range(len(result.ranks))), len(result.ranks))
    classes = _rank_classes(result, expand)
    if not expand:
        check_trace_size(sum(len(t.graph) for _, t in classes), len(classes), classes=True)
    chunks = _chunk_spans(result.collectives, {ranks[0] for ranks, _ in classes})
    for pid, (ranks, timeline) in enumerate(classes):
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": _label(ranks)}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        for lane, tid in LANES.items():
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": lane}})
        g = timeline.graph
        types, cpu, ids, sizes = g.types.tolist(), g.is_cpu_op.tolist(), g.ids.tolist(), g.comm_size.tolist()
        for pos, (start, end) in enumerate(zip(timeline.start_ns, timeline.end_ns, strict=True)):
            if end < 0:
                continue
            node_type = _TYPES.get(types[pos])
            lane = "cpu" if cpu[pos] else _LANE_OF_TYPE.get(node_type, "compute")  # type: ignore[arg-type]
            args: dict[str, Any] = {"node_id": ids[pos], "type": node_type.name if node_type else types[pos]}
            if node_type in _COMM:
                args["bytes"] = sizes[pos]
            if node_type == NodeType.COMM_COLL_NODE:
                # the collective's chunks, nested inside its slice on the same lane
                for c, (c_start, c_end) in enumerate(chunks.get((ranks[0], ids[pos]), [])):
                    events.append({"ph": "X", "name": f"chunk {c}", "cat": "chunk", "pid": pid, "tid": LANES[lane], "ts": c_start / 1e3, "dur": max(0.0, c_end - c_start) / 1e3, "args": {"chunk": c}})
            events.append(
                {
                    "ph": "X",
                    "name": g.names[pos] or (node_type.name if node_type else "node"),
                    "cat": lane,
                    "pid": pid,
                    "tid": LANES[lane],
                    "ts": start / 1e3,
                    "dur": (end - start) / 1e3,
                    "args": args,
                }
            )
    if counters:
        pid = len(events) + 1_000_000
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "network"}})
        for name, points in counters.items():
            for t, value in points:
                events.append({"ph": "C", "name": name, "pid": pid, "tid": 0, "ts": t * 1e6, "args": {"utilization": value}})
    events.sort(key=lambda e: (e["ph"] != "M", e.get("ts", 0.0)))
    return events


def write_trace(path: str | Path, result: RunResult, **kwargs: Any) -> Path:
    """Write the timeline as ``{"traceEvents": [...], "displayTimeUnit": "ns"}``."""
    path = Path(path)
    doc = {"traceEvents": trace_events(result, **kwargs), "displayTimeUnit": "ns", "otherData": {"generator": "trainsim"}}
    path.write_text(json.dumps(doc, separators=(",", ":")))
    return path
