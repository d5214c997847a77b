"""Where no link is shared, the congestion-aware and flow backends give the unaware result."""

import pytest

from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.system.api import simulate
from trainsim.workload.micro import collective_workload


def ring_platform(npus=8):
    system = SystemSpec(preferred_dataset_splits=4, collective_optimization="localBWAware", implementations=CollectiveImpl(all_reduce=("ring",)))
    return Platform(NetworkSpec((DimSpec("Ring", npus, 50e9, 500.0),)), system)


@pytest.mark.parametrize("size", [1 << 20, 3_000_017])
def test_ring_allreduce_on_a_ring_is_backend_independent(size):
    plat, graphs = ring_platform(), collective_workload(8, "all_reduce", size)
    unaware = simulate(plat, graphs, backend="congestion_unaware").ranks
    for backend in ("congestion_aware", "flow"):
        other = simulate(plat, graphs, backend=backend).ranks
        assert [r.finish_s for r in other] == pytest.approx([r.finish_s for r in unaware], rel=1e-12)


def test_astra_mode_aware_equals_unaware_on_ring():
    plat, graphs = ring_platform(), collective_workload(8, "all_reduce", 1 << 20)
    a = simulate(plat, graphs, backend="congestion_unaware", compat="astra").makespan_s
    b = simulate(plat, graphs, backend="congestion_aware", compat="astra").makespan_s
    assert a == b
