"""A PCM expansion tier as the rest of trainsim sees it: effective latency and bandwidth.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory). The memory system (local HBM,
DRAM-backed or PCM-backed expansion, pools) needs a tier's cost per access, not its cells;
this module runs the PCM model once and condenses it into a :class:`MemoryTierEstimate`.
Latencies in ns (the kernel's tick), bandwidth in B/s, ``access_time`` in seconds (SI).

- ``bandwidth``: the sustainable line bandwidth, ``min(channels * banks * 64 B / E[s],
  channels * 64 B / burst)``, ``E[s]`` the mean bank time of a request at the read fraction
  (``run.capacity_per_ns``);
- ``read_latency_ns`` / ``write_latency_ns``: mean latencies of an open-loop Poisson stream at
  ``load`` times that bandwidth (queueing included), from the timing model.

:func:`pcm_expansion_tier` is the contract a memory-expansion model consumes (docs/pcm.md, "For
the rest of trainsim"): the same estimate as a :class:`~trainsim.memory.protocol.MemoryTier`,
the description every tier of the memory seam has (latency ns, bandwidth B/s, capacity bytes),
so a PCM-backed tier can stand where a DRAM-backed one would.
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsim.errors import ConfigError
from trainsim.memory.pcm.config import LINE_BYTES, PcmConfig, Scheme
from trainsim.memory.pcm.run import Pool, capacity_per_ns, run_trace
from trainsim.memory.pcm.trace import open_loop_trace
from trainsim.memory.pcm.trilevel import profile_lines
from trainsim.memory.protocol import MemoryTier


@dataclass(frozen=True)
class MemoryTierEstimate:
    """Effective cost of a memory tier: latencies (ns) at a load, and bandwidth (B/s)."""

    read_latency_ns: float
    write_latency_ns: float
    bandwidth: float
    scheme: str = Scheme.TRI.value
    load: float = 0.5

    def access_time(self, nbytes: float, write: bool = False) -> float:
        """Seconds to read (or write) ``nbytes``: one access latency plus ``nbytes / bandwidth``."""
        if nbytes < 0:
            raise ConfigError(f"got {nbytes!r} bytes, expected a size >= 0", field="nbytes")
        latency_ns = self.write_latency_ns if write else self.read_latency_ns
        return latency_ns * 1e-9 + nbytes / self.bandwidth


def estimate_tier(
    cfg: PcmConfig | None = None,
    scheme: Scheme | str = Scheme.TRI,
    pool: Pool | None = None,
    *,
    load: float = 0.5,
    read_fraction: float = 2 / 3,
    requests: int = 20_000,
) -> MemoryTierEstimate:
    """Estimate a PCM tier under ``scheme`` at ``load`` (a fraction of its own bandwidth)."""
    cfg = cfg or PcmConfig()
    scheme = Scheme(scheme)
    if not 0 < load < 1:
        raise ConfigError(
            f"got {load!r}, expected a load in (0, 1) of the tier's bandwidth", field="load"
        )
    pool = pool or Pool.of(seed=cfg.seed)
    rate = capacity_per_ns(cfg, profile_lines(pool.lines, scheme, cfg), read_fraction)
    mem = cfg.memory
    if mem.burst_ns > 0:
        rate = min(rate, mem.channels / mem.burst_ns)
    trace = open_loop_trace(requests, load * rate, read_fraction, seed=cfg.seed)
    r = run_trace(cfg, scheme, pool, trace)
    return MemoryTierEstimate(
        r.read_latency_ns, r.write_latency_ns, rate * 1e9 * LINE_BYTES, scheme.value, load
    )


def pcm_expansion_tier(
    cfg: PcmConfig | None = None,
    scheme: Scheme | str = Scheme.TRI,
    pool: Pool | None = None,
    *,
    load: float = 0.5,
    read_fraction: float = 2 / 3,
    requests: int = 20_000,
    capacity_bytes: float | None = None,
) -> MemoryTier:
    """A PCM expansion tier under ``scheme`` as the memory seam describes tiers.

    ``latency_ns``: the mean *read* latency at ``load`` (queueing included; writes are posted,
    so a load waits for reads); ``bandwidth``: the sustainable line bandwidth (B/s);
    ``capacity``: ``capacity_bytes`` or the memory's own (``MemoryConfig.capacity_bytes``: 8 GiB
    under the defaults). The name says the scheme and the load, e.g. ``pcm-tri@0.5``.
    """
    cfg = cfg or PcmConfig()
    if capacity_bytes is not None and not capacity_bytes > 0:
        raise ConfigError(
            f"got {capacity_bytes!r}, expected a capacity in bytes > 0", field="capacity_bytes"
        )
    est = estimate_tier(
        cfg, scheme, pool, load=load, read_fraction=read_fraction, requests=requests
    )
    capacity = float(cfg.memory.capacity_bytes if capacity_bytes is None else capacity_bytes)
    return MemoryTier(f"pcm-{est.scheme}@{load:g}", est.read_latency_ns, est.bandwidth, capacity)
