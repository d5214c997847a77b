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

from trainsim.enums import NodeType
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


def _rank_classes(result: RunResult, expand: bool) -> list[tuple[list[int], NodeTimeline]]:
    if expand:
        return [([r.rank], t) for r, t in zip(result.ranks, result.timelines, strict=True)]
    classes: dict[tuple[Any, ...], tuple[list[int], NodeTimeline]] = {}
    for r, t in zip(result.ranks, result.timelines, strict=True):
        key = (t.graph.ids.tobytes(), t.graph.types.tobytes(), tuple(t.start_ns), tuple(t.end_ns))
        classes.setdefault(key, ([], t))[0].append(r.rank)
    return list(classes.values())


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
    chunks = {(rec.rank, rec.node_id): rec.chunk_spans for rec in result.collectives if getattr(rec, "chunk_spans", None)}
    for pid, (ranks, timeline) in enumerate(_rank_classes(result, expand)):
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": _label(ranks)}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
        for lane, tid in LANES.items():
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": lane}})
        g = timeline.graph
        types = g.types.tolist()
        for pos, (start, end) in enumerate(zip(timeline.start_ns, timeline.end_ns, strict=True)):
            if end < 0:
                continue
            node_type = NodeType(types[pos]) if types[pos] in NodeType._value2member_map_ else None
            lane = "cpu" if bool(g.is_cpu_op[pos]) else _LANE_OF_TYPE.get(node_type, "compute")  # type: ignore[arg-type]
            args: dict[str, Any] = {"node_id": int(g.ids[pos]), "type": node_type.name if node_type else types[pos]}
            if node_type in (NodeType.COMM_COLL_NODE, NodeType.COMM_SEND_NODE, NodeType.COMM_RECV_NODE):
                args["bytes"] = int(g.comm_size[pos])
            if node_type == NodeType.COMM_COLL_NODE:
                # the collective's chunks, nested inside its slice on the same lane
                for c, (c_start, c_end) in enumerate(chunks.get((ranks[0], int(g.ids[pos])), [])):
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
