"""Design-space sweeps: a sweep file, combinations, local or Dask execution, and a store that
survives a crash and resumes (DESIGN.md, sweep)."""

from trainsim.sweep.spec import SweepSpec, load_sweep

__all__ = ["SweepSpec", "load_sweep"]
