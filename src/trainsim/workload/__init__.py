"""Workloads: the in-memory graph, the Chakra ET reader/writer, the ASTRA-sim 1.0 text format
and generators (DESIGN.md, workload layer).

Names are imported on first use, so a simulation built in memory does not load the Chakra
reader's protobuf machinery.
"""

from typing import TYPE_CHECKING

from trainsim.lazyimport import lazy_exports

if TYPE_CHECKING:
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

_EXPORTS = {
    "ABSENT": "graph",
    "Attr": "graph",
    "GraphBuilder": "graph",
    "TraceWarning": "diagnostics",
    "WorkloadGraph": "graph",
    "count_rank_files": "chakra",
    "find_cycle": "cycles",
    "rank_file": "chakra",
    "read_rank": "chakra",
    "read_workload": "chakra",
    "write_rank": "chakra",
    "write_workload": "chakra",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
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
