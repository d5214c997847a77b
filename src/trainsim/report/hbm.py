"""HBM bandwidth used by compute and by collectives over time, per rank (report layer; from
``RunResult.resources``, present when the endpoint model shares the rank's HBM and units:
``system/contention.py``, docs/ace.md).

Each logged stretch (start ns, end ns, bytes) is spread evenly over its duration and summed into
time buckets: the result is the mean bandwidth in GB/s per bucket. Times in seconds."""

from __future__ import annotations

from typing import Any

import numpy as np

BUCKETS = 200


def _series(stretches: list[tuple[float, float, float]], edges: np.ndarray) -> list[float]:
    """GB/s per bucket between ``edges`` (ns) of the stretches' bytes, spread evenly."""
    moved = np.zeros(len(edges) - 1)
    for start, end, nbytes in stretches:
        if end <= start:
            continue
        rate = nbytes / (end - start)  # B/ns
        overlap = np.clip(np.minimum(edges[1:], end) - np.maximum(edges[:-1], start), 0.0, None)
        moved += overlap * rate
    width = edges[1] - edges[0]
    return (moved / width).tolist()  # B/ns = GB/s


def hbm_over_time(
    result: Any, ranks: tuple[int, ...] = (0,), buckets: int = BUCKETS
) -> list[dict[str, Any]]:
    """``[{"rank", "t_s": [...], "compute_gbps": [...], "comm_gbps": [...], "compute_slowdown",
    "hbm_per_network_byte"}, ...]`` for ``ranks`` (empty without resources)."""
    resources = getattr(result, "resources", None)
    if not resources or result.makespan_s <= 0:
        return []
    by_rank = {r.rank: r for r in resources}
    edges = np.linspace(0.0, result.makespan_s * 1e9, buckets + 1)
    out = []
    for rank in ranks:
        res = by_rank.get(rank)
        if res is None:
            continue
        out.append(
            {
                "rank": rank,
                "t_s": (edges[:-1] * 1e-9).tolist(),
                "compute_gbps": _series(res.compute_hbm, edges),
                "comm_gbps": _series(res.comm_hbm, edges),
                "compute_slowdown": res.compute_slowdown,
                "hbm_per_network_byte": res.hbm_per_network_byte,
            }
        )
    return out
