"""The expanded-memory tier a platform file describes, resolved to numbers (DESIGN.md,
"Layers": memory as tiers behind one protocol).

A platform's ``memory`` section (``config.types.RemoteMemorySpec``) says what backs the tier:

- ``technology: dram`` (the default; ASTRA-sim's remote memory): latency and bandwidth as the
  file gives them;
- ``technology: pcm``: the tier estimate of the PCM model (``memory.pcm.pcm_expansion_tier``,
  docs/pcm.md "For the rest of trainsim") under the section's ``pcm`` parameters (scheme, load,
  channels, banks): its mean read latency at that load (queueing included) and its sustainable
  line bandwidth times ``devices`` (PCM memories an access stripes over); the capacity is the
  file's ``capacity_gb`` or the PCM memories' own (``channels x banks x bank_bytes x devices``).

``config/`` cannot import ``memory/`` (the layers), so the file keeps the parameters and the
tier is resolved here, where it is built (``system.build.build_memory``) or priced (the
strategy search's estimate, the generator's capacity checks). Resolving a resolved or DRAM
spec returns it unchanged. Times in ns, bandwidth in B/s, capacity in bytes.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache
from typing import Any

from trainsim.config.types import Platform, RemoteMemorySpec
from trainsim.memory.protocol import MemoryTier

PCM = "pcm"


@lru_cache(maxsize=64)
def _pcm_tier(options: tuple[tuple[str, Any], ...]) -> MemoryTier:
    """One PCM memory's tier under ``options`` (cached: the estimate runs the PCM model)."""
    from trainsim.memory.pcm import PcmConfig, pcm_expansion_tier

    opts = dict(options)
    cfg = PcmConfig().replace(**{"memory.channels": int(opts["channels"]), "memory.banks": int(opts["banks"])})
    return pcm_expansion_tier(cfg, str(opts["scheme"]), load=float(opts["load"]), requests=int(opts["requests"]))


def resolve_memory(spec: RemoteMemorySpec) -> RemoteMemorySpec:
    """``spec`` with a PCM tier's latency, bandwidth and capacity filled in (module docstring)."""
    if spec.technology != PCM or spec.bandwidth > 0 or spec.mode == "NO_MEMORY_EXPANSION":
        return spec
    opts = dict(spec.pcm)
    tier = _pcm_tier(spec.pcm)
    devices = int(opts.get("devices", 1))
    capacity = spec.capacity if math.isfinite(spec.capacity) else tier.capacity * devices
    return replace(spec, latency_ns=tier.latency_ns, bandwidth=tier.bandwidth * devices, capacity=capacity)


def resolve_platform(platform: Platform) -> Platform:
    """``platform`` with its memory tier resolved (:func:`resolve_memory`)."""
    memory = resolve_memory(platform.memory)
    return platform if memory is platform.memory else replace(platform, memory=memory)


def expansion_tier(spec: RemoteMemorySpec) -> MemoryTier:
    """The tier as the memory seam describes tiers (per access: latency ns, bandwidth B/s; the
    capacity as the file counts it: per NPU, per node or in all)."""
    spec = resolve_memory(spec)
    name = f"{spec.technology}:{spec.mode}"
    return MemoryTier(name, spec.latency_ns, spec.bandwidth, spec.capacity)
