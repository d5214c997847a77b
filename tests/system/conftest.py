"""Small platforms and graph builders for executor tests."""

import pytest

from trainsim.config.types import DimSpec, NetworkSpec, Platform, RemoteMemorySpec, SystemSpec


def ring_platform(npus=8, gbps=50.0, latency_ns=500.0, memory=None, system=None):
    net = NetworkSpec((DimSpec("Ring", npus, gbps * 2**30, latency_ns),))
    return Platform(network=net, system=system or SystemSpec(), memory=memory or RemoteMemorySpec())


@pytest.fixture
def ring8():
    return ring_platform()
