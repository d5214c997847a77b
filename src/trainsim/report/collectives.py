"""The collectives of a run as table rows: type, size, group, start, end, bytes per dimension.

Ranks whose record of one collective is identical (same node, times and bytes: symmetric
ranks) are folded into one row with a ``ranks`` count, so a 65,536-rank run gives one row per
collective, not 65,536. Every record is kept: the counts add up to the number of collective
nodes the ranks ran. Times in seconds, sizes in bytes.

In a result document (``trainsim run --json``) the rows are written as columns
(:func:`collective_table`: one list per field, ``rows`` and ``records`` counts), which keeps a
step of hundreds of thousands of collectives to a few MB; :func:`rows_of` reads them back, and
also the list of row objects earlier versions wrote. A replica slice's rows are those
of the ranks that ran, each counting the ranks that repeat it on their own groups
(:func:`weighted_records`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter
from typing import Any

from trainsim.config.types import NetworkSpec
from trainsim.enums import CommType
from trainsim.errors import ConfigError, TrainsimError
from trainsim.system.collective_report import record_bandwidth
from trainsim.system.result import UniformRecords

COLUMNS = (
    "rank", "ranks", "node_id", "type", "size_bytes", "group", "start_s", "end_s", "dim_bytes",
    "algorithms", "group_size", "algbw_gbps", "busbw_gbps", "bound_ratio",
)  # fmt: skip


_COLUMN_VALUES = itemgetter(*COLUMNS)


def collective_rows(result: Any, network: NetworkSpec | None = None) -> list[dict[str, Any]]:
    """Rows for the report, every record of the run in one; with ``network``, nccl-tests'
    algorithm and bus bandwidth (GB/s, 1e9 B/s) and the ratio of bus bandwidth to the rank's
    injection bound."""
    if isinstance(result.collectives, UniformRecords):  # every rank as the representative
        npus = result.collectives.npus
        records: Iterable[tuple[Any, int]] = ((rec, npus) for rec in result.collectives.records)
    else:
        records = weighted_records(result.collectives)
    rows: dict[tuple[Any, ...], dict[str, Any]] = {}
    names: dict[int, str] = {}
    # a record's figures are a function of these (``system.collective_report.record_bandwidth``:
    # the duration is end - start, the dimensions it sent on come from its bytes): once each
    figures: dict[tuple[Any, ...], dict[str, float | None]] = {}
    for rec, count in records:
        dim_bytes = tuple(rec.dim_bytes)
        key = (rec.node_id, rec.comm_type, rec.size, rec.group, rec.start_ns, rec.end_ns, dim_bytes)
        row = rows.get(key)
        if row is not None:
            row["ranks"] += count
            continue
        name = names.get(rec.comm_type)
        if name is None:
            name = names[rec.comm_type] = CommType(rec.comm_type).name.lower() if rec.comm_type in CommType._value2member_map_ else str(rec.comm_type)
        group_size = getattr(rec, "group_size", None)
        fkey = (rec.comm_type, rec.size, group_size, rec.end_ns - rec.start_ns, rec.end_ns <= rec.start_ns, dim_bytes)
        fig = figures.get(fkey)
        if fig is None:
            fig = figures[fkey] = _bandwidth(rec, network)
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
            "group_size": group_size,
            **fig,
        }
    return sorted(rows.values(), key=lambda r: (r["start_s"], r["rank"]))


def collective_table(result: Any, network: NetworkSpec | None = None) -> dict[str, Any]:
    """:func:`collective_rows` as columns: ``{"rows": N, "records": M, "columns": {field:
    [N values]}}``; ``records`` (the sum of ``ranks``) counts every rank's record."""
    rows = collective_rows(result, network)
    # transposed row by row in C (itemgetter, zip): a step has hundreds of thousands of rows
    values = [_COLUMN_VALUES(r) for r in rows]
    columns = dict(zip(COLUMNS, map(list, zip(*values, strict=True)), strict=True)) if values else {name: [] for name in COLUMNS}
    return {
        "rows": len(rows),
        "records": sum(r["ranks"] for r in rows),
        "columns": columns,
    }


def rows_of(section: Any, *, file: str | None = None) -> list[dict[str, Any]]:
    """A result document's ``collectives`` as row objects: from the columns of
    :func:`collective_table`, or a list of rows as it is."""
    if section is None:
        return []
    if isinstance(section, list) and all(isinstance(r, dict) for r in section):
        return section
    if isinstance(section, dict) and isinstance(section.get("columns"), dict):
        columns = section["columns"]
        count = section.get("rows")
        if isinstance(count, int) and all(isinstance(v, list) and len(v) == count for v in columns.values()):
            names = list(columns)
            return [dict(zip(names, values, strict=True)) for values in zip(*columns.values(), strict=True)]
    raise ConfigError(
        "expected the columns of `trainsim run --json` ({rows, records, columns: {field: [one value per row]}}) or a list of objects",
        file=file,
        field="collectives",
    )


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
