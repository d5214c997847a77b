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
