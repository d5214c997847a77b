"""The congestion-aware backend's compiled core (network/congestion_native.py) against the
pure-Python reference (network/congestion_aware.py): the same deliveries in the same order at
the same times, the same link statistics and event counts, and the same per-rank results
bit for bit (==) through ``simulate`` on the symmetry tests' congestion-aware cases and on a
generated training step."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.engine import EventQueue
from trainsim.errors import ConfigError
from trainsim.network import congestion_native
from trainsim.network.congestion_aware import CongestionAwareNetwork
from trainsim.network.congestion_native import NativeCongestionAwareNetwork, make_congestion_aware
from trainsim.system.api import simulate
from trainsim.system.result import RunResult
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.micro import collective_workload, data_parallel_workload
from trainsim.workload.models import get_model

pytestmark = pytest.mark.skipif(
    not congestion_native.available(),
    reason=f"the link core is not built ({congestion_native.library_path()}): run make (needs cargo)",
)

GiB, MiB = 2**30, 2**20
BW = 50 * GiB

NETWORKS = {
    "ring 8": (DimSpec("Ring", 8, BW, 500.0),),
    "switch 6": (DimSpec("Switch", 6, BW, 500.0),),
    "fully connected 5": (DimSpec("FullyConnected", 5, BW, 500.0),),
    "ring 4 x switch 3": (DimSpec("Ring", 4, BW, 500.0), DimSpec("Switch", 3, BW / 4, 2000.0)),
}


def _traffic(
    cls: type, dims: tuple[DimSpec, ...], compat: bool, seed: int, sizes: tuple[int, ...] = (1, 54, 4096, 32768, 1 << 20)
) -> tuple[list, list, list, int, list]:
    """Random messages whose arrivals send more messages, some at once and some through a
    kernel event at the same tick (ties between the core's events and the kernel's), then
    more sent between two runs of the kernel."""
    q = EventQueue()
    net = cls(NetworkSpec(dims), q, compat_astra=compat)
    net.transfers = []
    npus = net.graph.devices if net.topology is None else net.topology.npus
    rnd = random.Random(seed)
    log: list[tuple[float, int, bool]] = []

    def arrived(tag: int) -> None:
        log.append((q.now, tag, net.carrying()))
        if tag < 400:
            for k in range(rnd.randrange(3)):
                src, dst = rnd.randrange(npus), rnd.randrange(npus)
                if rnd.random() < 0.5:
                    net.send(src, dst, rnd.choice(sizes), arrived, 10 * tag + k + 10)
                else:
                    q.schedule(rnd.choice((0.0, 0.0, 1.0)), lambda a: net.send(*a), (src, dst, rnd.choice(sizes), arrived, 10 * tag + k + 10))

    for i in range(12):
        net.send(i % npus, (3 * i + 1) % npus, sizes[i % len(sizes)], arrived, i)
    q.run()
    for i in range(6):  # after the heap ran empty: every link's free event is behind us
        net.send(i % npus, (i + 1) % npus, sizes[i % len(sizes)], arrived, 1000 + i)
    q.run()
    return log, net.link_stats(), list(net.transfers), q.events_processed, [net.messages_sent, net.messages_delivered, net.carrying()]


@pytest.mark.parametrize("name", list(NETWORKS))
@pytest.mark.parametrize("compat", [True, False])
@pytest.mark.parametrize("seed", [1, 2])
def test_random_traffic_is_the_references(name, compat, seed):
    want = _traffic(CongestionAwareNetwork, NETWORKS[name], compat, seed)
    got = _traffic(NativeCongestionAwareNetwork, NETWORKS[name], compat, seed)
    assert len(want[0]) > 12
    assert got == want  # deliveries (time, order), link stats, transfers, events, counters


@pytest.mark.parametrize("compat", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_traffic_that_ties_with_links_freeing_is_the_references(compat, seed):
    """1 B/ns links with no latency and messages of 0-8 B: messages reach links at the very
    tick they free, from the core's own events, from delivery callbacks and from kernel
    events, before and after the link's free event (whose key the core keeps off its heap
    until a message needs it)."""
    dims = (DimSpec("Ring", 4, 1e9, 0.0), DimSpec("Switch", 2, 1e9, 0.0))
    want = _traffic(CongestionAwareNetwork, dims, compat, seed, sizes=(0, 1, 2, 3, 8))
    got = _traffic(NativeCongestionAwareNetwork, dims, compat, seed, sizes=(0, 1, 2, 3, 8))
    assert len(want[0]) > 30
    assert got == want


class _RenumberingNetwork(NativeCongestionAwareNetwork):
    """The core taking a fresh number of the kernel's counter every 3 events of a call
    (instead of every 2**24), so that its packed event keys renumber all the time."""

    def _init_links(self, graph):
        super()._init_links(graph)
        self._lib.lc_sub_limit(self._handle, 3)


@pytest.mark.parametrize("compat", [True, False])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_call_renumbering_its_events_is_the_references(compat, seed):
    dims = (DimSpec("Ring", 4, 1e9, 0.0), DimSpec("Switch", 2, 1e9, 0.0))
    want = _traffic(CongestionAwareNetwork, dims, compat, seed, sizes=(0, 1, 2, 3, 8))
    assert _traffic(_RenumberingNetwork, dims, compat, seed, sizes=(0, 1, 2, 3, 8)) == want
    got = _traffic(_RenumberingNetwork, NETWORKS["ring 4 x switch 3"], compat, seed)
    assert got == _traffic(CongestionAwareNetwork, NETWORKS["ring 4 x switch 3"], compat, seed)


def test_delay_fork_and_routeless_messages():
    spec = NetworkSpec(NETWORKS["ring 8"])
    q = EventQueue()
    ref, net = CongestionAwareNetwork(spec, q, compat_astra=True), NativeCongestionAwareNetwork(spec, q, compat_astra=True)
    assert net.delay_ns(0, 3, 12345) == ref.delay_ns(0, 3, 12345)
    fork = net.fork(EventQueue())
    assert type(fork) is NativeCongestionAwareNetwork and fork.graph is net.graph
    got: list[float] = []
    net.send(2, 2, 100, lambda _: got.append(q.now))  # crosses no link: delivered at once
    net.send(0, 1, 100, lambda _: got.append(q.now))
    assert net.carrying() and net.messages_delivered == 1
    q.run()
    assert got == [0.0, 501.0] and not net.carrying() and net.messages_delivered == 2


def test_factory_honours_the_python_switch(monkeypatch):
    spec = NetworkSpec(NETWORKS["ring 8"])
    assert type(make_congestion_aware(spec, EventQueue())) is NativeCongestionAwareNetwork
    monkeypatch.setenv("TRAINSIM_CONGESTION_CORE", "python")
    assert type(make_congestion_aware(spec, EventQueue())) is CongestionAwareNetwork
    monkeypatch.setenv("TRAINSIM_CONGESTION_CORE", "Links")
    net = make_congestion_aware(spec, EventQueue())
    assert type(net) is NativeCongestionAwareNetwork and net.ring_core(10.0, 10.0, 1e9, True) is None
    monkeypatch.setenv("TRAINSIM_CONGESTION_CORE", "rust")  # a value we do not know: said, not ignored
    with pytest.raises(ConfigError, match="TRAINSIM_CONGESTION_CORE='rust' is not a choice; expected one of native, links, python"):
        make_congestion_aware(spec, EventQueue())


def _platform(dims, *, acpd=1, splits=4, compat="astra"):
    n = len(dims)
    return Platform(
        NetworkSpec(tuple(DimSpec(k, s, BW, 500.0) for k, s in dims)),
        SystemSpec(
            endpoint_delay_ns=10,
            active_chunks_per_dimension=acpd,
            preferred_dataset_splits=splits,
            collective_optimization="localBWAware",
            local_mem_bw=1600e9,
            implementations=CollectiveImpl(*((("ring",) * n,) * 4)),
        ),
        compat=compat,
    )


def _both(monkeypatch, platform, graphs, **kw) -> tuple[RunResult, RunResult]:
    monkeypatch.setenv("TRAINSIM_CONGESTION_CORE", "python")
    ref = simulate(platform, graphs, backend="congestion_aware", **kw)
    monkeypatch.delenv("TRAINSIM_CONGESTION_CORE")
    got = simulate(platform, graphs, backend="congestion_aware", **kw)
    return ref, got


def _assert_same(ref: RunResult, got: RunResult) -> None:
    assert list(got.ranks) == list(ref.ranks)  # every field of every rank, ==
    assert got.makespan_s == ref.makespan_s and got.events == ref.events
    for a, b in zip(got.timelines, ref.timelines, strict=True):
        assert list(a.start_ns) == list(b.start_ns) and list(a.end_ns) == list(b.end_ns)
    key = [(r.rank, r.node_id, r.start_ns, r.end_ns, tuple(r.dim_bytes)) for r in got.collectives]
    assert key == [(r.rank, r.node_id, r.start_ns, r.end_ns, tuple(r.dim_bytes)) for r in ref.collectives]
    # the seam's counters (network/base.py): neither backend reports queue counters
    assert got.network_counters is None and ref.network_counters is None
    assert got.to_dict() == ref.to_dict()


CASES = {
    # tests/system/test_symmetry.py's congestion-aware cases, rank by rank and fast
    "ring 16 all-reduce": (lambda: _platform([("Ring", 16)]), lambda: collective_workload(16, "all_reduce", 16 * MiB)),
    "ring 8 shared links": (lambda: _platform([("Ring", 8)], acpd=2, splits=8), lambda: data_parallel_workload(8, 2, 8 * MiB)),
    "ring 2 x switch 4": (lambda: _platform([("Ring", 2), ("Switch", 4)]), lambda: collective_workload(8, "all_reduce", MiB)),
    "ring 2 x switch 4 default mode": (lambda: _platform([("Ring", 2), ("Switch", 4)], compat="default"), lambda: data_parallel_workload(8, 2, MiB)),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("symmetry", [False, True])
def test_simulate_is_the_references(monkeypatch, name, symmetry):
    platform, graphs = (make() for make in CASES[name])
    ref, got = _both(monkeypatch, platform, graphs, symmetry=symmetry)
    _assert_same(ref, got)


def test_generated_step_is_the_references(monkeypatch):
    """A Megatron step (TP 2, PP 2, DP 2) on a Ring of 8 whose tensor-, pipeline- and
    data-parallel messages cross one to four links and queue behind each other."""
    model = replace(get_model("megatron-1.7b"), layers=4, seq=512)
    par = Parallelism(tp=2, pp=2, dp=2, micro_batch=1, global_batch=4, recompute="full")
    w = generate(model, par, OperatorTimer("A100"), network_sizes=(8,))
    platform = w.platform(_platform([("Ring", 8)]))
    ref, got = _both(monkeypatch, platform, w.graphs)
    assert len({r.finish_s for r in ref.ranks}) > 1  # ranks differ: it ran rank by rank
    _assert_same(ref, got)


def _odd_sizes(cls: type) -> tuple[list, object, list]:
    import numpy as np

    q = EventQueue()
    net = cls(NetworkSpec(NETWORKS["ring 8"]), q, compat_astra=False)
    out: list = []
    for args in [(np.int64(0), np.int64(3), np.int64(1000)), (1, 2, 1000.0), (1, 2, 1000.5), (np.int32(1), 2, np.uint64(77))]:
        net.send(*args, lambda a: out.append((q.now, a)), args)
    q.run()
    return out, net.bytes_sent, net.link_stats()


def test_numpy_ranks_and_float_sizes_are_the_references():
    """Graph arrays give numpy integers; a size may be a float: both as the reference takes them."""
    assert _odd_sizes(NativeCongestionAwareNetwork) == _odd_sizes(CongestionAwareNetwork)


def test_bad_arguments_raise():
    net = NativeCongestionAwareNetwork(NetworkSpec(NETWORKS["ring 8"]), EventQueue())
    with pytest.raises(TypeError):
        net.send("0", 1, 10, print)
    with pytest.raises(TypeError):
        net.send(0, 1, 10)


def test_a_proxy_outliving_its_backend_does_nothing():
    """A run stopped with messages on the links leaves the core's proxy in the kernel heap;
    once the backend is freed, running the queue again must not touch the freed core."""
    import gc

    q = EventQueue()
    net = NativeCongestionAwareNetwork(NetworkSpec(NETWORKS["ring 8"]), q)
    got: list[float] = []
    net.send(0, 4, 1 << 20, lambda _: got.append(q.now))
    assert len(q) == 1
    del net
    gc.collect()
    q.run()
    assert got == [] and q.events_processed == 1
