"""Workloads: the in-memory graph, the Chakra ET reader/writer, the ASTRA-sim 1.0 text format
and generators (DESIGN.md, workload layer)."""

from trainsim.workload.chakra import (
    count_rank_files,
    rank_file,
    read_rank,
    read_workload,
    write_rank,
    write_workload,
)
from trainsim.workload.cycles import find_cycle
from trainsim.workload.diagnostics import TraceWarning
from trainsim.workload.graph import ABSENT, Attr, GraphBuilder, WorkloadGraph

__all__ = [
    "ABSENT",
    "Attr",
    "GraphBuilder",
    "TraceWarning",
    "WorkloadGraph",
    "count_rank_files",
    "find_cycle",
    "rank_file",
    "read_rank",
    "read_workload",
    "write_rank",
    "write_workload",
]
