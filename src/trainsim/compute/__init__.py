"""Device compute models: the roofline and, later, device specs (DESIGN.md, compute layer)."""

from trainsim.compute.roofline import roofline_time_ns

__all__ = ["roofline_time_ns"]
