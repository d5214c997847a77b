"""The collectives of a run as table rows: type, size, group, start, end, bytes per dimension.

Ranks whose record of one collective is identical (same node, times and bytes: symmetric
ranks) are folded into one row with a ``ranks`` count, so a 65,536-rank run gives one row per
collective, not 65,536. Times in seconds, sizes in bytes.
"""

from __future__ import annotations

from typing import Any

from trainsim.enums import CommType


def collective_rows(result: Any, *, limit: int = 10_000) -> list[dict[str, Any]]:
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for rec in result.collectives:
        key = (rec.node_id, rec.comm_type, rec.size, rec.group, rec.start_ns, rec.end_ns, tuple(rec.dim_bytes))
        row = rows.get(key)
        if row is not None:
            row["ranks"] += 1
            continue
        if len(rows) >= limit:
            continue
        name = CommType(rec.comm_type).name.lower() if rec.comm_type in CommType._value2member_map_ else str(rec.comm_type)
        rows[key] = {
            "rank": rec.rank,
            "ranks": 1,
            "node_id": rec.node_id,
            "type": name,
            "size_bytes": rec.size,
            "group": rec.group,
            "start_s": rec.start_ns * 1e-9,
            "end_s": rec.end_ns * 1e-9,
            "dim_bytes": list(rec.dim_bytes),
        }
    return sorted(rows.values(), key=lambda r: (r["start_s"], r["rank"]))
