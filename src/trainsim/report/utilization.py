"""Per-dimension network utilization over time, from a backend's recorded transfers.

A transfer ``(start, end, dim, bytes)`` is spread evenly over its interval; a bucket's
utilization is the bytes its transfers carry in it divided by the dimension's capacity times
the bucket length. The capacity is the backend's ``dim_capacity()``: for the
congestion-unaware backend every NPU's injection bandwidth into the dimension (so 100% means
every NPU sends into it at full rate), for the congestion-aware and flow backends the summed
bandwidth of the dimension's links. Times in seconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from trainsim.config.types import NetworkSpec
from trainsim.enums import NodeType
from trainsim.report.collectives import weighted_records
from trainsim.topology import MultiDimTopology


def utilization_series(
    transfers: Sequence[tuple[float, float, int, int]],
    capacity_bytes_per_ns: Sequence[float],
    makespan_ns: float,
    *,
    buckets: int = 200,
) -> list[dict[str, object]]:
    """``[{"dim": d, "bytes": B, "mean": u, "utilization": [(t_s, u), ...]}, ...]``, one entry
    per dimension; a run of zero length has no buckets (an empty ``utilization``)."""
    dims = len(capacity_bytes_per_ns)
    if makespan_ns <= 0:
        sent = [0.0] * dims
        for transfer in transfers:
            if 0 <= transfer[2] < dims:
                sent[transfer[2]] += transfer[3]
        return [{"dim": d, "bytes": sent[d], "mean": 0.0, "utilization": []} for d in range(dims)]
    edges = np.linspace(0.0, makespan_ns, buckets + 1)
    width = edges[1] - edges[0]
    load = np.zeros((dims, buckets))
    total = np.zeros(dims)
    if transfers:
        arr = np.asarray(transfers, dtype=float)
        start, end, dim, nbytes = arr[:, 0], np.maximum(arr[:, 1], arr[:, 0] + 1e-9), arr[:, 2].astype(int), arr[:, 3]
        keep = (dim >= 0) & (dim < dims)
        start, end, dim, nbytes = start[keep], end[keep], dim[keep], nbytes[keep]
        rate = nbytes / (end - start)
        np.add.at(total, dim, nbytes)
        for d in range(dims):
            m = dim == d
            if m.any():
                carried = _carried(start[m], end[m], rate[m], edges)
                load[d] = np.diff(carried)
    out = []
    for d in range(dims):
        cap = capacity_bytes_per_ns[d] * width
        util = load[d] / cap if cap > 0 else np.zeros(buckets)
        points = [(float(edges[b] * 1e-9), float(util[b])) for b in range(buckets)]
        out.append({"dim": d, "bytes": float(total[d]), "mean": float(util.mean()), "utilization": points})
    return out


def _carried(start: np.ndarray, end: np.ndarray, rate: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Bytes carried by time ``t`` for every ``t`` in ``at``: the sum of
    rate x clip(t - start, 0, end - start), from sorted prefix sums in O(n log n)."""

    def ramp(points: np.ndarray) -> np.ndarray:
        order = np.argsort(points)
        p, r = points[order], rate[order]
        cum_r = np.concatenate([[0.0], np.cumsum(r)])
        cum_rp = np.concatenate([[0.0], np.cumsum(r * p)])
        idx = np.searchsorted(p, at, side="right")
        return at * cum_r[idx] - cum_rp[idx]

    return ramp(start) - ramp(end)


def transfers_of(result: Any, topology: MultiDimTopology) -> list[tuple[float, float, int, int]]:
    """(start ns, end ns, dim, bytes) of what every rank injected: each collective's bytes per
    dimension over the collective's interval (times the ranks that repeat it, for a replica
    slice's records: ``collectives.weighted_records``), and every SEND over its interval (a
    replica slice's world result, ``RunResult.repeats``: the sends of the ranks that ran, times
    the ranks that repeat each, whose sends cross the same dimensions at the same times: the
    slice runs only when their messages have the same shapes, ``system/symmetry/replica.py``)."""
    out: list[tuple[float, float, int, int]] = []
    for rec, count in weighted_records(result.collectives):
        for dim, nbytes in enumerate(rec.dim_bytes):
            if nbytes:
                out.append((rec.start_ns, rec.end_ns, dim, nbytes * count))
    sends: dict[int, tuple[Any, list[int], list[int], list[int]]] = {}  # id(graph) -> (graph, positions, dsts, sizes)
    dims: dict[tuple[int, int], int] = {}  # (rank, dst) -> the dimension a message between them is accounted to (-1: none)
    repeats = getattr(result, "repeats", None)
    counts = Counter(repeats) if repeats is not None else None
    for rank in sorted(counts) if counts is not None else range(len(result.timelines)):
        timeline = result.timelines[rank]
        times = counts[rank] if counts is not None else 1
        g = timeline.graph
        known = sends.get(id(g))
        if known is None or known[0] is not g:  # ranks that repeat one graph share it
            where = np.flatnonzero(g.types == NodeType.COMM_SEND_NODE)
            known = sends[id(g)] = (g, where.tolist(), g.comm_dst[where].tolist(), g.comm_size[where].tolist())
        start, end = timeline.start_ns, timeline.end_ns
        for pos, dst, size in zip(known[1], known[2], known[3], strict=True):
            found = dims.get((rank, dst))
            if found is None:
                found = dims[(rank, dst)] = topology.send_dim(rank, dst) if 0 <= dst < topology.npus else -1
            if found >= 0 and end[pos] >= 0:
                out.append((start[pos], end[pos], found, size * times))
    return out


def injection_utilization(
    result: Any, network: NetworkSpec, *, buckets: int = 200, compat_astra: bool = False
) -> list[dict[str, object]]:
    """Per-dimension injection utilization of a run: 100% means every NPU sends into the
    dimension at its full link bandwidth. A SEND counts on the dimension the mode's path rule
    accounts it to (``MultiDimTopology.send_dim``: the first differing one with
    ``compat_astra``, the bottleneck of those crossed otherwise)."""
    topology = MultiDimTopology.of_network(network, compat_astra=compat_astra)
    capacity = [topology.npus * d.bandwidth / 1e9 for d in network.dims]
    series = utilization_series(transfers_of(result, topology), capacity, result.makespan_s * 1e9, buckets=buckets)
    for entry, dim in zip(series, network.dims, strict=True):
        entry["kind"] = dim.kind
    return series
