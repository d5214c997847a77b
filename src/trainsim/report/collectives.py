"""The collectives of a run as table rows: type, size, group, start, end, bytes per dimension.

Ranks whose record of one collective is identical (same node, times and bytes: symmetric
ranks) are folded into one row with a ``ranks`` count, so a 65,536-rank run gives one row per
collective, not 65,536; a replica slice's rows are those of the ranks that ran, each counting
the ranks that repeat it on their own groups (:func:`weighted_records`). Times in seconds, sizes in bytes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from trainsim.config.types import NetworkSpec
from trainsim.enums import CommType
from trainsim.errors import TrainsimError
from trainsim.system.collective_report import record_bandwidth


def collective_rows(result: Any, network: NetworkSpec | None = None, *, limit: int = 10_000) -> list[dict[str, Any]]:
    """Rows for the report; with ``network``, nccl-tests' algorithm and bus bandwidth (GB/s,
    1e9 B/s) and the ratio of bus bandwidth to the rank's injection bound."""
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    for rec, count in weighted_records(result.collectives):
        key = (rec.node_id, rec.comm_type, rec.size, rec.group, rec.start_ns, rec.end_ns, tuple(rec.dim_bytes))
        row = rows.get(key)
        if row is not None:
            row["ranks"] += count
            continue
        if len(rows) >= limit:
            continue
        name = CommType(rec.comm_type).name.lower() if rec.comm_type in CommType._value2member_map_ else str(rec.comm_type)
        rows[key] = {
            "rank": rec.rank,
            "ranks": count,
            "node_id": rec.node_id,
            "type": name,
            "size_bytes": rec.size,
            "group": rec.group,
            "start_s": rec.start_ns * 1e-9,
            "end_s": rec.end_ns * 1e-9,
            "dim_bytes": list(rec.dim_bytes),
            "algorithms": list(getattr(rec, "algorithms", []) or []),
            "group_size": getattr(rec, "group_size", None),
            **_bandwidth(rec, network),
        }
    return sorted(rows.values(), key=lambda r: (r["start_s"], r["rank"]))


def weighted_records(records: Sequence[Any]) -> Iterator[tuple[Any, int]]:
    """``(record, ranks)`` pairs: each record once (``ranks`` 1), or, when the sequence can
    list the records of the ranks that ran with how many ranks repeat each (``represented``:
    a replica slice's, ``system/symmetry/replica_result.py``), those: the repeating ranks run
    the same collective at the same times on their own groups."""
    represented = getattr(records, "represented", None)
    return represented() if represented is not None else ((rec, 1) for rec in records)


def _bandwidth(record: Any, network: NetworkSpec | None) -> dict[str, float | None]:
    none: dict[str, float | None] = {"algbw_gbps": None, "busbw_gbps": None, "bound_ratio": None}
    if network is None or record.end_ns <= record.start_ns:
        return none
    try:
        fig = record_bandwidth(record, network)
    except TrainsimError:
        return none
    return {"algbw_gbps": fig.algbw / 1e9, "busbw_gbps": fig.busbw / 1e9, "bound_ratio": fig.ratio}
