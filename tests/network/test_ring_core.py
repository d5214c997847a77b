"""Ring phases in the compiled core (``native/link_core/src/ring.rs``, handed over by
``system/collective_engine.Engine._to_core``) on the congestion-aware backend (against the
links-only core and the pure-Python reference) and on the analytical one
(``network/analytical_native.py``, against ``analytical.py``): per-rank results, timelines,
collective records, event counts and the backend's counters equal (==) on random small
training steps in both modes, with ring, direct and halving-doubling mixed, several chunks and
queues, rendezvous; the core really runs the rings; a receive nobody answers is reported."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from trainsim.collectives.ring import RingPhase
from trainsim.compute import OperatorTimer
from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.engine import EventQueue
from trainsim.network import congestion_native
from trainsim.network.congestion_native import NativeCongestionAwareNetwork
from trainsim.system.api import simulate
from trainsim.system.result import RunResult
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.models import get_model

pytestmark = pytest.mark.skipif(
    not congestion_native.available(),
    reason=f"the link core is not built ({congestion_native.library_path()}): run make (needs cargo)",
)

GiB = 2**30
MODEL = replace(get_model("megatron-1.7b"), layers=4, seq=512)
TOPOLOGIES = [
    (("Ring", 8),),
    (("Switch", 8),),
    (("FullyConnected", 8),),
    (("Ring", 4), ("Switch", 2)),
    (("Ring", 2), ("Ring", 4)),
]


def _case(seed: int) -> tuple[Platform, object, str]:
    """A random 8-rank Megatron step and platform (both modes, mixed algorithms, chunks,
    queues, policies, rendezvous)."""
    rnd = random.Random(seed)
    dims = rnd.choice(TOPOLOGIES)
    tp, pp = rnd.choice([(2, 2), (4, 1), (2, 1), (1, 2), (8, 1)])
    dp = 8 // (tp * pp)
    par = Parallelism(tp=tp, pp=pp, dp=dp, micro_batch=1, global_batch=2 * dp * pp, recompute=rnd.choice(["full", "none"]))
    algos = ["ring"] * 3 + ["direct", "halvingDoubling"]
    impl = tuple(tuple(rnd.choice(algos) if rnd.random() < 0.3 else "ring" for _ in dims) for _ in range(4))
    acpd = rnd.choice([1, 1, 2, 4])
    system = SystemSpec(
        scheduling_policy=rnd.choice(["LIFO", "FIFO"]),
        endpoint_delay_ns=rnd.choice([10, 0, 137]),
        active_chunks_per_dimension=acpd,
        preferred_dataset_splits=rnd.choice([1, 2, 4, 8]),
        collective_optimization=rnd.choice(["localBWAware", "baseline"]),
        local_mem_bw=rnd.choice([1600e9, 77e9]),
        implementations=CollectiveImpl(*impl),
        rendezvous=rnd.random() < 0.15,
        queues_per_dim=rnd.choice([1, 1, 2]) if acpd > 1 else 1,
    )
    compat = rnd.choice(["astra", "default"])
    net = NetworkSpec(tuple(DimSpec(k, s, rnd.choice([50, 25, 200]) * GiB, rnd.choice([500.0, 20.0])) for k, s in dims))
    w = generate(MODEL, par, OperatorTimer("A100"), network_sizes=tuple(s for _, s in dims))
    platform = w.platform(Platform(net, system, compat=compat))
    return platform, w.graphs, f"{dims} tp{tp} pp{pp} dp{dp} {impl} acpd {acpd} {compat}"


def _run(monkeypatch, core: str, platform: Platform, graphs: object, backend: str = "congestion_aware") -> RunResult:
    monkeypatch.setenv("TRAINSIM_CONGESTION_CORE", core)
    monkeypatch.setenv("TRAINSIM_ANALYTICAL_CORE", "python" if core == "python" else "native")
    return simulate(platform, graphs, backend=backend, symmetry=backend == "congestion_aware")  # type: ignore[arg-type]


def _summary(r: RunResult) -> tuple:
    return (
        list(r.ranks),
        r.makespan_s,
        r.events,
        [(list(t.start_ns), list(t.end_ns)) for t in r.timelines],
        [(c.rank, c.node_id, c.start_ns, c.end_ns, tuple(c.dim_bytes), tuple(map(tuple, c.chunk_spans))) for c in r.collectives],
        r.to_dict(),
    )


@pytest.mark.parametrize("seed", range(10))
def test_random_steps_are_the_references(monkeypatch, seed):
    platform, graphs, what = _case(seed)
    ref = _summary(_run(monkeypatch, "python", platform, graphs))
    assert _summary(_run(monkeypatch, "links", platform, graphs)) == ref, what
    assert _summary(_run(monkeypatch, "native", platform, graphs)) == ref, what


@pytest.mark.parametrize("seed", range(10))
def test_random_steps_on_the_analytical_backend_are_the_references(monkeypatch, seed):
    """Rank by rank (no symmetric shortcut), so that every ring phase of a compatibility-mode
    run is the core's."""
    platform, graphs, what = _case(seed)
    ref = _summary(_run(monkeypatch, "python", platform, graphs, "congestion_unaware"))
    assert _summary(_run(monkeypatch, "native", platform, graphs, "congestion_unaware")) == ref, what


@pytest.mark.fuzz
@pytest.mark.parametrize("seed", range(10, 70))
def test_more_random_steps_are_the_references(monkeypatch, seed):
    test_random_steps_are_the_references(monkeypatch, seed)
    test_random_steps_on_the_analytical_backend_are_the_references(monkeypatch, seed)


def test_the_core_runs_the_rings(monkeypatch):
    """With the whole core no ring phase starts in Python; with the links only, every one."""
    started: list[int] = []
    real = RingPhase.start
    monkeypatch.setattr(RingPhase, "start", lambda self: (started.append(self.rank), real(self))[1])
    model = replace(MODEL, layers=2)
    w = generate(model, Parallelism(tp=2, pp=1, dp=4, micro_batch=1, global_batch=4), OperatorTimer("A100"), network_sizes=(8,))
    system = SystemSpec(preferred_dataset_splits=4, implementations=CollectiveImpl(*((("ring",),) * 4)))
    platform = w.platform(Platform(NetworkSpec((DimSpec("Ring", 8, 50 * GiB, 500.0),)), system, compat="astra"))
    links = _run(monkeypatch, "links", platform, w.graphs)
    assert len(started) > 50
    started.clear()
    native = _run(monkeypatch, "native", platform, w.graphs)
    assert started == []
    assert _summary(native) == _summary(links)


def test_an_unanswered_receive_is_reported():
    """A ring phase whose peer behind never sends waits; the core lists that receive, and the
    message it sent ahead arrived (and waits to be matched)."""
    q = EventQueue()
    net = NativeCongestionAwareNetwork(NetworkSpec((DimSpec("Ring", 8, 50 * GiB, 500.0),)), q, compat_astra=True)
    ring_start = net.ring_core(10.0, 10.0, 1600e9, True)[0]
    ended: list[object] = []
    ring_start(0, 1, 7, 5, 1000, 1, 7, 14, 2, -1.0, ended.append, "phase")
    q.run()
    assert ended == []
    assert net.ring_waiting() == [(0, 5, 7, 1000)]
    assert (net.messages_sent, net.messages_delivered, net.bytes_sent) == (1, 1, 1000)
    with pytest.raises(RuntimeError, match="negative"):
        ring_start(0, 1, 7, 5, -1, 1, 7, 14, 2, -1.0, ended.append, None)


def test_a_lone_two_member_ring_ends_and_calls_back():
    """Two ring phases facing each other (a 2-member all-reduce) run to their end in the core
    and call ``on_end(arg)`` once each, at the reference's arithmetic: 2 sends each."""
    q = EventQueue()
    net = NativeCongestionAwareNetwork(NetworkSpec((DimSpec("Ring", 2, 1e9, 0.0),)), q, compat_astra=True)
    ring_start = net.ring_core(10.0, 10.0, 1e9, True)[0]
    ended: list[tuple[float, str]] = []
    for rank, name in ((0, "a"), (1, "b")):
        ring_start(rank, 1 - rank, 1 - rank, 9, 100, 1, 1, 2, 2, -1.0, lambda arg: ended.append((q.now, arg)), name)
    q.run()
    assert sorted(arg for _, arg in ended) == ["a", "b"]
    assert net.ring_waiting() == [] and net.messages_sent == 4 and not net.carrying()
    # insert 10, send 100 B at 1 B/ns (100), receive -> reduce (3 x 100 ns) + 10, send, receive -> 10
    assert ended[0][0] == 10 + 100 + 310 + 100 + 10


def test_the_engine_reports_the_cores_unanswered_receives():
    """A deadlock report (``Engine.waiting``) names what a rank's ring in the core waits for,
    as it names the Python phases' receives; engines the core cannot stand in for get no offer."""
    from trainsim.endpoint.astra import AstraEndpoint
    from trainsim.system.collective_engine import Engine, EngineOptions, SymmetricEngine

    q = EventQueue()
    spec = NetworkSpec((DimSpec("Ring", 8, 50 * GiB, 500.0),))
    net = NativeCongestionAwareNetwork(spec, q, compat_astra=True)
    options = EngineOptions(AstraEndpoint(10, 1600e9, compat_astra=True), compat_astra=True, active_chunks=1, scf=False)
    engine = Engine(q, net, net.topology, options, on_rank_done=print)
    ring_start = engine.ring_core()
    assert ring_start is not None
    ring_start(0, 1, 7, 5, 1000, 1, 7, 14, 2, -1.0, print, None)
    q.run()
    assert engine.waiting() == [(0, "a 1000 B message of chunk 5 from rank 7")]
    assert SymmetricEngine(q, net, net.topology, options, on_rank_done=print).ring_core() is None
    rendezvous = replace(options, rendezvous=True)
    assert Engine(q, net, net.topology, rendezvous, on_rank_done=print).ring_core() is None


def test_the_analytical_backend_counts_and_refuses_late_recording(monkeypatch):
    """Its counters add the core's ring messages; a transfer record started after the core
    took rings would miss theirs, so it is refused; with one from the start no offer is made;
    an unknown ``$TRAINSIM_ANALYTICAL_CORE`` is said."""
    from trainsim.errors import ConfigError
    from trainsim.network.analytical_native import NativeAnalyticalNetwork, make_congestion_unaware

    spec = NetworkSpec((DimSpec("Ring", 2, 1e9, 0.0),))
    q = EventQueue()
    net = make_congestion_unaware(spec, q, compat_astra=True)
    assert type(net) is NativeAnalyticalNetwork
    ring_start, delay, _ = net.ring_core(10.0, 10.0, 1e9, True)
    for rank in (0, 1):
        ring_start(rank, 1 - rank, 1 - rank, 9, 100, 1, 1, 2, 2, delay(rank, 1 - rank, 100), print, None)
    net.send(0, 1, 7, print, "p2p")
    q.run()
    assert (net.messages_sent, net.bytes_sent) == (5, 407) and net.ring_waiting() == []
    with pytest.raises(RuntimeError, match="from the start"):
        net.transfers = []
    recording = NativeAnalyticalNetwork(spec, EventQueue(), compat_astra=True)
    recording.transfers = []
    assert recording.ring_core(10.0, 10.0, 1e9, True) is None
    monkeypatch.setenv("TRAINSIM_ANALYTICAL_CORE", "fast")
    with pytest.raises(ConfigError, match="TRAINSIM_ANALYTICAL_CORE='fast' is not a choice; expected one of native, python"):
        make_congestion_unaware(spec, EventQueue())


def test_a_rank_mixing_core_and_python_collectives_is_refused_and_rerun(monkeypatch):
    """A rank's collectives run one at a time in a step (its communication slot), so a rank
    never holds streams of two at once there; issued together straight to the runtime, a ring
    all-reduce (whole in the core, with its queues) and a halving-doubling all-gather (Python's)
    would share a rank's queues: refused. ``simulate`` answers such a refusal by running again
    with every queue in Python (forced here), with the reference's result."""
    from trainsim.enums import CommType
    from trainsim.network.analytical_native import NativeAnalyticalNetwork
    from trainsim.system import collective_engine
    from trainsim.system.collective_api import CollectiveRequest
    from trainsim.system.collective_runtime import CollectiveRuntime

    impl = CollectiveImpl(("ring",), ("halvingDoubling",), ("ring",), ("ring",))
    system = SystemSpec(preferred_dataset_splits=4, active_chunks_per_dimension=2, implementations=impl)
    platform = Platform(NetworkSpec((DimSpec("Ring", 8, 50 * GiB, 500.0),)), system, compat="astra")
    for core_queues in (True, False):
        q = EventQueue()
        rt = CollectiveRuntime(platform, NativeAnalyticalNetwork(platform.network, q, compat_astra=True), q, compat_astra=True, symmetry=False, core_queues=core_queues)
        for comm, size in ((CommType.ALL_REDUCE, 1 << 20), (CommType.ALL_GATHER, 1 << 18)):
            for r in range(8):
                rt.issue(CollectiveRequest(r, int(comm), int(comm), size, None, "", None), lambda _a: None)
        if core_queues:
            with pytest.raises(collective_engine.CoreQueuesConflict, match="queued in the core"):
                q.run()
        else:
            q.run()  # every queue in Python: no conflict
    platform, graphs, _ = _case(2)
    ref = _summary(_run(monkeypatch, "python", platform, graphs, "congestion_unaware"))
    real = collective_engine.Engine._work_to_core
    raised: list[bool] = []

    def refuse_once(self, *args):
        if not raised:
            raised.append(True)
            raise collective_engine.CoreQueuesConflict("forced")
        return real(self, *args)

    monkeypatch.setattr(collective_engine.Engine, "_work_to_core", refuse_once)
    assert _summary(_run(monkeypatch, "native", platform, graphs, "congestion_unaware")) == ref
    assert raised == [True]


def test_work_start_refuses_malformed_chunks():
    q = EventQueue()
    net = NativeCongestionAwareNetwork(NetworkSpec((DimSpec("Ring", 4, 50 * GiB, 500.0),)), q, compat_astra=True)
    work_start = net.ring_core(10.0, 10.0, 1600e9, True)[2]
    with pytest.raises(RuntimeError, match="a list of chunks"):
        work_start(0, 1, 0, 1, [], print, None)
    with pytest.raises(RuntimeError, match="phases as a list"):
        work_start(0, 1, 0, 1, [[]], print, None)
    with pytest.raises(RuntimeError, match="a phase is"):
        work_start(0, 1, 0, 1, [[(0, 1, 3)]], print, None)
    with pytest.raises(RuntimeError, match="negative"):
        work_start(0, 1, 0, 1, [[(0, -1, 3, 100, 3, 6, 2, -1.0)]], print, None)


@pytest.mark.parametrize("policy", ["LIFO", "FIFO"])
@pytest.mark.parametrize("backend", ["congestion_aware", "congestion_unaware"])
def test_two_collectives_sharing_a_ranks_queues_in_the_core(monkeypatch, policy, backend):
    """Issued straight to the runtime (a step never does: a rank runs one collective at a
    time), three ring collectives share each rank's dimension queue in the core: later ones
    are placed by priority ahead of waiting chunks (LIFO) or behind them (FIFO), exactly as
    the Python queues place them."""
    from trainsim.enums import CommType
    from trainsim.network.registry import make_backend
    from trainsim.system.collective_api import CollectiveRequest
    from trainsim.system.collective_runtime import CollectiveRuntime

    system = SystemSpec(scheduling_policy=policy, preferred_dataset_splits=4, active_chunks_per_dimension=2,
                        implementations=CollectiveImpl(*((("ring",),) * 4)))  # fmt: skip
    platform = Platform(NetworkSpec((DimSpec("Ring", 8, 50 * GiB, 500.0),)), system, compat="astra")

    def records(core: str) -> list[tuple]:
        monkeypatch.setenv("TRAINSIM_CONGESTION_CORE", core)
        monkeypatch.setenv("TRAINSIM_ANALYTICAL_CORE", "python" if core == "python" else "native")
        q = EventQueue()
        rt = CollectiveRuntime(platform, make_backend(backend, platform.network, q, compat_astra=True), q, compat_astra=True, symmetry=False)
        for node, (comm, size) in enumerate(((CommType.ALL_REDUCE, 1 << 20), (CommType.ALL_GATHER, 1 << 17), (CommType.REDUCE_SCATTER, 3 << 18))):
            for r in range(8):
                rt.issue(CollectiveRequest(r, node, int(comm), size, None, "", None), lambda _a: None)
        q.run()
        return sorted((x.rank, x.node_id, x.start_ns, x.end_ns, tuple(x.dim_bytes), tuple(map(tuple, x.chunk_spans))) for x in rt.records)

    want = records("python")
    assert len(want) == 24 and len({r[3] for r in want}) == 3  # each collective ends apart
    assert records("native") == want
