"""Tri-level MLC phase-change memory (PCM): cells, compression, timing, runs, tier estimate.

Part of the memory layer (DESIGN.md, "Layers"): imports ``engine``, ``errors``, ``units`` and
the memory seam's ``protocol`` only. Times in ns, sizes in bytes or bits as named, bandwidth in B/s. docs/pcm.md is the
guide (calibration, results, caveats). The device model lives here; the study built on it
(scheme comparisons, sweeps, calibration, the gap diagnosis) is ``trainsim.studies.pcm``.
Modules, bottom up:

- ``config``: validated settings with documented defaults;
- ``cell``: 2-bit cells, write pulses and spread, line write time;
- ``fpc``: frequent pattern compression (Alameldeen and Wood, 2004);
- ``trilevel``: the tri-level scheme (Rashidi, Jalili and Sarbazi-Azad, TACO 2018): metadata
  in the spare bits, qualification, storage decisions, exact recovery;
- ``content``: line contents (a documented mix, real bytes of package files);
- ``timing``: channels x banks, queues, write drain, on the event kernel;
- ``trace`` and ``core``: open-loop traces (with a text format) and closed-loop ROB cores;
- ``run``: one run of the model under a scheme, closed loop or open loop; capacity;
- ``tier``: :class:`MemoryTierEstimate` for the rest of the simulator, and
  :func:`pcm_expansion_tier`, the same as a ``memory.protocol.MemoryTier``.
"""

from __future__ import annotations

from trainsim.memory.pcm.config import (
    CellConfig,
    CoreConfig,
    MemoryConfig,
    PcmConfig,
    ReadConfig,
    ReadMetric,
    Scheduler,
    Scheme,
    SpareConfig,
)
from trainsim.memory.pcm.run import Pool, RunResult
from trainsim.memory.pcm.tier import MemoryTierEstimate, estimate_tier, pcm_expansion_tier

__all__ = [
    "CellConfig",
    "CoreConfig",
    "MemoryConfig",
    "MemoryTierEstimate",
    "PcmConfig",
    "Pool",
    "ReadConfig",
    "ReadMetric",
    "RunResult",
    "Scheduler",
    "Scheme",
    "SpareConfig",
    "estimate_tier",
    "pcm_expansion_tier",
]
