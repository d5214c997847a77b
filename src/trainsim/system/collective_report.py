"""Bandwidth figures of one recorded collective (system layer): ties a
:class:`~trainsim.system.collective_engine.CollectiveRecord` to the pure formulas of
:mod:`trainsim.collectives.bandwidth` (nccl-tests' algbw and busbw, and busbw over the rank's
injection bandwidth on the dimensions it sent on). Times in ns in the record, seconds and B/s
in the figures.
"""

from __future__ import annotations

from trainsim.collectives.bandwidth import BandwidthFigures, bandwidth_figures, injection_bandwidth
from trainsim.config.types import NetworkSpec
from trainsim.errors import TraceError
from trainsim.system.collective_engine import CollectiveRecord


def record_bandwidth(record: CollectiveRecord, network: NetworkSpec) -> BandwidthFigures:
    """nccl-tests' figures for one rank's record. The bound sums the dimensions the rank sent
    on (all of them when it sent nothing, e.g. a replayed broadcast or a leaf that only
    receives)."""
    if record.end_ns < record.start_ns:
        raise TraceError(
            f"collective not finished (start {record.start_ns} ns, end {record.end_ns} ns)",
            rank=record.rank,
            node_id=record.node_id,
        )
    dims = network.dims
    used = [d for d, b in enumerate(record.dim_bytes) if b > 0] or list(range(len(dims)))
    bound = injection_bandwidth(
        [dims[d].kind for d in used],
        [dims[d].size for d in used],
        [dims[d].bandwidth for d in used],
    )
    seconds = (record.end_ns - record.start_ns) / 1e9
    if seconds <= 0:
        raise TraceError(
            "collective took no time: no bandwidth to report",
            rank=record.rank,
            node_id=record.node_id,
        )
    return bandwidth_figures(record.comm_type, record.size, record.group_size, seconds, bound)
