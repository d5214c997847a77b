"""Runtime behaviour beyond the reference cases: groups, errors, replayed broadcast, records."""

from __future__ import annotations

import pytest

from tests.helpers.astra_cases import run_collective
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.engine import EventQueue
from trainsim.enums import CommType
from trainsim.errors import TraceError
from trainsim.network import AnalyticalNetwork
from trainsim.system.collective_api import CollectiveRequest
from trainsim.system.collective_runtime import CollectiveRuntime

RING8 = NetworkSpec((DimSpec("Ring", 8, 50 * 2**30, 500.0),))


def make(platform: Platform, compat: bool = True):
    q = EventQueue()
    net = AnalyticalNetwork(platform.network, q, compat_astra=compat)
    return q, CollectiveRuntime(platform, net, q, compat_astra=compat)


def req(rank, size=2**20, ctype=CommType.ALL_REDUCE, group=None, name=""):
    return CollectiveRequest(rank, 7, int(ctype), size, group, name, None)


def test_rank_outside_its_group_is_a_trace_error():
    _q, rt = make(Platform(RING8, SystemSpec()))
    with pytest.raises(TraceError, match=r"rank 5, node 7: .*group 'tp'"):
        rt.issue(req(5, group=(0, 1, 2, 3), name="tp"), lambda _a: None)


def test_mismatched_sizes_are_a_trace_error():
    _q, rt = make(Platform(RING8, SystemSpec()))
    rt.issue(req(0), lambda _a: None)
    with pytest.raises(TraceError, match="rank 1"):
        rt.issue(req(1, size=2**21), lambda _a: None)


def test_group_uses_fast_endpoint_and_ignores_endpoint_delay():
    """Communicator groups run on a Local ring with MemBus' fixed 10 ns (groups section)."""
    times = []
    for delay in (10.0, 50.0):
        q, rt = make(
            Platform(RING8, SystemSpec(endpoint_delay_ns=delay, preferred_dataset_splits=4))
        )
        done: list[float] = []
        for r in (0, 1, 2, 3):
            rt.issue(req(r, group=(0, 1, 2, 3), name="g"), done.append, r)
        q.run()
        times.append(q.now)
        assert len(done) == 4
    assert times[0] == times[1]


def test_group_listing_every_rank_runs_the_normal_plan():
    p = Platform(
        RING8, SystemSpec(preferred_dataset_splits=4, collective_optimization="localBWAware")
    )
    q, rt = make(p)
    done = []
    for r in range(8):
        rt.issue(req(r, group=tuple(range(8)), name="world"), lambda _a: done.append(q.now))
    q.run()
    assert max(done) == 64_440  # main__unaware__ring8__all_reduce__1MiB__1d_ring


def test_broadcast_is_replayed_from_its_duration():
    q, rt = make(Platform(RING8, SystemSpec()))
    done = []
    rt.issue(
        CollectiveRequest(0, 3, int(CommType.BROADCAST), 100, None, "", None, duration_ns=1234.0),
        done.append,
        "x",
    )
    q.run()
    assert done == ["x"] and q.now == 1234.0


@pytest.mark.parametrize(
    "ctype", [CommType.REDUCE, CommType.GATHER, CommType.SCATTER, CommType.BARRIER]
)
def test_types_astra_rejects_are_simulated(ctype):
    finish, rt = run_collective(
        Platform(RING8, SystemSpec(preferred_dataset_splits=2)), ctype, 2**20
    )
    assert min(finish) > 0 and not rt.pending()


def test_records_hold_times_and_per_dimension_bytes():
    spec = NetworkSpec(
        (DimSpec("Ring", 4, 50 * 2**30, 500.0), DimSpec("Switch", 2, 25 * 2**30, 1000.0))
    )
    impl = CollectiveImpl(("ring", "ring"), ("ring", "ring"), ("ring", "ring"), ("ring", "ring"))
    p = Platform(spec, SystemSpec(collective_optimization="localBWAware", implementations=impl))
    finish, rt = run_collective(p, CommType.ALL_REDUCE, 8000, symmetry=False)
    rec = {r.rank: r for r in rt.records}
    assert set(rec) == set(range(8))
    # RS on dim 0: 3 x 2000 B; AR on dim 1 over 2000 B: 2 x 1000 B; AG on dim 0: 3 x 2000 B
    assert rec[0].dim_bytes == [12000, 2000]
    assert rec[0].start_ns == 0 and rec[0].end_ns == finish[0]


def test_physical_mode_serializes_direct_on_a_switch_uplink():
    spec = NetworkSpec((DimSpec("Switch", 8, 50 * 2**30, 500.0),))
    impl = CollectiveImpl(("direct",), ("direct",), ("direct",), ("direct",))
    p = Platform(spec, SystemSpec(implementations=impl))
    compat, _ = run_collective(p, CommType.ALL_TO_ALL, 2**20, compat_astra=True)
    physical, _ = run_collective(p, CommType.ALL_TO_ALL, 2**20, compat_astra=False)
    # 7 messages of 128 KiB through one uplink instead of all at once
    assert max(physical) > max(compat) + 6 * (2**17 / (50 * 2**30 / 1e9)) - 1
