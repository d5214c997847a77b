"""Workloads: the in-memory graph, the Chakra ET reader/writer, the ASTRA-sim 1.0 text format
and generators (DESIGN.md, workload layer)."""

from trainsim.workload.graph import GraphBuilder, WorkloadGraph

__all__ = ["GraphBuilder", "WorkloadGraph"]
