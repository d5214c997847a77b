"""Tier estimate for the rest of trainsim (memory/pcm/tier.py)."""

import pytest

from trainsim.errors import ConfigError
from trainsim.memory.pcm import MemoryTierEstimate, PcmConfig, Pool, estimate_tier


def test_tri_tier_is_faster_and_wider_than_base():
    pool = Pool.of(size=1024)
    base = estimate_tier(PcmConfig(), "base", pool, requests=5000)
    tri = estimate_tier(PcmConfig(), "tri+fpc", pool, requests=5000)
    assert tri.bandwidth > base.bandwidth > 0
    assert tri.read_latency_ns < base.read_latency_ns
    assert tri.write_latency_ns < base.write_latency_ns
    assert base.read_latency_ns > PcmConfig().read.m_metric_4level_ns  # queueing included


def test_access_time_is_latency_plus_size_over_bandwidth():
    est = MemoryTierEstimate(read_latency_ns=500.0, write_latency_ns=1000.0, bandwidth=2e9)
    assert est.access_time(4096) == pytest.approx(500e-9 + 4096 / 2e9)
    assert est.access_time(4096, write=True) == pytest.approx(1000e-9 + 4096 / 2e9)
    with pytest.raises(ConfigError, match="got -1 bytes"):
        est.access_time(-1)


def test_load_must_be_a_fraction():
    with pytest.raises(ConfigError, match="load: got 1.5"):
        estimate_tier(load=1.5)


def test_expansion_tier_is_a_memory_tier_of_the_estimate():
    """The contract the expansion model consumes: a MemoryTier built from the same estimate."""
    from trainsim.memory.pcm import pcm_expansion_tier
    from trainsim.memory.protocol import MemoryTier

    pool = Pool.of(size=1024)
    tier = pcm_expansion_tier(PcmConfig(), "tri", pool, load=0.4, requests=4000)
    est = estimate_tier(PcmConfig(), "tri", pool, load=0.4, requests=4000)
    assert isinstance(tier, MemoryTier)
    assert tier == MemoryTier("pcm-tri@0.4", est.read_latency_ns, est.bandwidth, 8 * 2**30)
    sixteen = PcmConfig().replace(**{"memory.banks": 16})
    wide = pcm_expansion_tier(sixteen, "tri", pool, load=0.4, requests=4000, capacity_bytes=1e12)
    assert wide.capacity == 1e12
    assert wide.bandwidth > tier.bandwidth  # more banks serve more lines per second
    base = pcm_expansion_tier(PcmConfig(), "base", pool, load=0.4, requests=4000)
    assert base.latency_ns > tier.latency_ns and base.bandwidth < tier.bandwidth
    with pytest.raises(ConfigError, match="capacity_bytes: got 0"):
        pcm_expansion_tier(capacity_bytes=0)
