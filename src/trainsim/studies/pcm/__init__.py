"""The tri-level MLC phase-change memory study (issue 11; docs/pcm.md).

Part of the studies layer (DESIGN.md, "Layers"; ``studies/pcm``): it runs the device model of
``trainsim.memory.pcm`` (cells, tri-level storage, timing, cores, traces, one run per scheme)
and compares the schemes against the paper (Rashidi, Jalili and Sarbazi-Azad, TACO 2018).
``trainsim pcm`` prints and plots what it returns. Times in ns.

- ``study``: comparisons, sweeps (spare bits, faults, load, content), the IPC band,
  calibration, the gap diagnosis, and the conditions grid (banks x load x qualifying share,
  issue 23).
"""

from __future__ import annotations

from trainsim.studies.pcm.study import (
    Comparison,
    Diagnosis,
    aging_sweep,
    calibrate,
    compare,
    conditions,
    diagnose,
    ipc_band,
    load_sweep,
    mix_sweep,
    qualified_pool,
    spare_sweep,
)

__all__ = [
    "Comparison",
    "Diagnosis",
    "aging_sweep",
    "calibrate",
    "compare",
    "conditions",
    "diagnose",
    "ipc_band",
    "load_sweep",
    "mix_sweep",
    "qualified_pool",
    "spare_sweep",
]
