"""Physical graphs and routing only; knows nothing of time or collectives (DESIGN.md, topology)."""

from trainsim.topology.multidim import MultiDimTopology

__all__ = ["MultiDimTopology"]
