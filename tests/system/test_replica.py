"""A replica slice (one data-parallel replica, the other replicas' ranks joining its
cross-replica collectives) gives the full simulation's results bit for bit under the
congestion-unaware backend."""

import dataclasses

import pytest

from trainsim.compute import OperatorTimer
from trainsim.config.types import DimSpec, NetworkSpec, Platform
from trainsim.errors import ConfigError
from trainsim.network.injection import InjectionPorts
from trainsim.report.breakdown import breakdown
from trainsim.report.step_breakdown import roles_of
from trainsim.system.api import simulate
from trainsim.system.symmetry import replica
from trainsim.system.symmetry.replica import simulate_generated, simulate_replica
from trainsim.workload.generate import Parallelism, generate
from trainsim.workload.graph import executed_flop
from trainsim.workload.models import get_model


def _platform(sizes):
    dims = tuple(DimSpec("Switch", s, bw, lat) for s, bw, lat in zip(sizes, (300e9, 25e9), (700.0, 2000.0), strict=False))
    return Platform(network=NetworkSpec(dims))


def _shrunk_1_7b(layers=4):
    from dataclasses import replace

    return replace(get_model("megatron-1.7b"), layers=layers, seq=512)

def assert_busy_port_exact(par, sizes=(2, 8)):
    """The slice takes ``par`` on ``sizes``, where a replica-0 rank's injection port is still
    held by an earlier collective's last messages when its cross-replica collective starts
    (``replica.py``'s module docstring), and every rank's result, timeline and collective
    record equals the run of every rank rank by rank bit for bit. The port is genuinely busy:
    with the other replicas' ports left idle (``InjectionPorts.copy_busy`` off) the slice
    differs (or leaves the other replicas' reduction early, and is refused). Returns (platform, workload, the every-rank run)."""
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=sizes)
    platform = w.platform(_platform(sizes))
    every = simulate(platform, w.graphs, symmetry=False)
    sliced = simulate_replica(platform, w)
    assert sliced.makespan_s == every.makespan_s
    assert all(got == every.ranks[got.rank] for got in sliced.rank_results())
    run = simulate_generated(_platform(sizes), w)
    assert run.mode == "replica slice"
    assert_same_run(run.result, every)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(InjectionPorts, "copy_busy", lambda *_: None)
        try:
            idle = simulate_replica(platform, w)
        except ConfigError as exc:  # the other replicas leave the reduction before replica 0
            assert "ends at different times" in str(exc)
        else:
            assert any(got != every.ranks[got.rank] for got in idle.rank_results())
    return platform, w, every


def assert_same_run(got, want):
    """Every rank's result, timeline and collective record the same, exactly."""
    assert got.makespan_s == want.makespan_s and list(got.ranks) == list(want.ranks)
    for a, b in zip(got.timelines, want.timelines, strict=True):
        assert list(a.start_ns) == list(b.start_ns) and list(a.end_ns) == list(b.end_ns)

    def key(r):
        return (r.rank, r.node_id, r.group, r.comm_type, r.size, r.group_size)

    records = sorted(got.collectives, key=key)
    assert [key(r) for r in records] == sorted(map(key, want.collectives))
    for a, b in zip(records, sorted(want.collectives, key=key), strict=True):
        assert (a.start_ns, a.end_ns, a.dim_bytes, a.chunk_spans) == (b.start_ns, b.end_ns, b.dim_bytes, b.chunk_spans)
    # the breakdown (per communicator group, from the graphs), worked out on the ranks that ran
    # when the slice says every rank repeats one (RunResult.repeats)
    assert breakdown(got) == breakdown(want)


CASES = [
    # (tp, pp, dp, network sizes, extra Parallelism fields)
    (1, 1, 4, (4,), {}),
    (2, 2, 4, (8, 2), {}),
    # data-parallel groups inside one network dimension: under the default mode's path rule
    # (topology/multidim.py) a group whose ring crosses dimensions unevenly ends at different
    # times on its members and needs more replicas (test_uneven_cross_replica_ring_runs_two_replicas); with
    # the stages in that dimension too, (2, 8), an injection port is still busy when the
    # reduction starts (test_busy_injection_port_is_exact)
    (2, 2, 4, (8, 2), {"zero": 1}),
    (2, 2, 4, (8, 2), {"schedule": "interleaved", "virtual_stages": 2}),
    (1, 2, 4, (4, 2), {"zero": 2}),
]


@pytest.mark.parametrize(("tp", "pp", "dp", "sizes", "extra"), CASES)
def test_slice_equals_full(tp, pp, dp, sizes, extra):
    par = Parallelism(tp=tp, pp=pp, dp=dp, micro_batch=1, global_batch=4 * dp, recompute="full", **extra)
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=sizes)
    platform = w.platform(_platform(sizes))
    full = simulate(platform, w.graphs)
    sliced = simulate_replica(platform, w)
    # a stage's tensor-parallel peers mirror its first rank: one rank per stage runs
    assert sliced.ranks_simulated == pp
    assert len(sliced.mirror_of) == (tp - 1) * pp
    assert sliced.makespan_s == full.makespan_s
    unmirrored = simulate_replica(platform, w, mirror=False)
    assert unmirrored.ranks_simulated == tp * pp and not unmirrored.mirror_of
    assert unmirrored.rank_results() == sliced.rank_results()  # exactly
    # every rank of replica 0 as the full run reports it, to the last bit
    assert all(got == full.ranks[got.rank] for got in sliced.rank_results())


def test_slice_makes_only_the_graphs_of_the_replicas_it_runs():
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=16, recompute="full")
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=(8, 2))
    eager = list(generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=(8, 2)).graphs)  # rank by rank, first thing
    run = simulate_generated(_platform((8, 2)), w)  # the slice and the world result (a sweep's path)
    assert run.mode == "replica slice" and len(run.ranks) == par.world
    made = [r for r in range(par.world) if w.graphs._made[r] is not None]  # type: ignore[attr-defined]
    assert made == [r for r in range(par.world) if w.replica_of_rank[r] == 0]
    assert w.executed_flop() == executed_flop(eager)  # from the templates, every rank, the same sum
    assert [r for r in range(par.world) if w.graphs._made[r] is not None] == made  # type: ignore[attr-defined]
    # a graph made later is the one made in rank order up front, and it is kept
    for rank in range(par.world):
        got, want = w.graphs[rank], eager[rank]
        assert got is w.graphs[rank] and got.rank == want.rank == rank
        assert got.pg_name == want.pg_name and got.involved_dim == want.involved_dim
        assert (got.comm_src == want.comm_src).all() and (got.comm_dst == want.comm_dst).all()


@pytest.mark.parametrize(("tp", "pp", "dp", "sizes", "extra"), CASES)
def test_world_result_is_the_full_runs(tp, pp, dp, sizes, extra):
    """Every rank of a slice's result, those that did not run (mirrors, other replicas)
    included, as the full run reports it: times, timelines and collective records."""
    par = Parallelism(tp=tp, pp=pp, dp=dp, micro_batch=1, global_batch=4 * dp, recompute="full", **extra)
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=sizes)
    full = simulate(w.platform(_platform(sizes)), w.graphs)
    run = simulate_generated(_platform(sizes), w)
    res = run.result
    assert run.mode == "replica slice" and len(res.ranks) == len(res.timelines) == tp * pp * dp
    assert all(got.graph is w.graphs[rank] for rank, got in enumerate(res.timelines))
    assert_same_run(res, full)
    assert res.repeats is not None  # the breakdown below is worked out on the ranks that ran
    assert breakdown(res, roles_of(w)) == breakdown(full, roles_of(w))
    assert [res.collectives[i] for i in range(len(res.collectives))] == list(res.collectives)  # by index as in order
    # the records of the ranks that ran, each with the number of ranks that repeat it, count them all
    assert sum(count for _, count in res.collectives.represented()) == len(full.collectives)


def test_progress_of_a_slice_counts_its_simulations_as_one():
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=16, recompute="full", zero=1)
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=(8, 2))
    calls = []
    run = simulate_generated(_platform((8, 2)), w, progress=lambda now, done, total: calls.append((now, done, total)))
    assert run.mode == "replica slice"
    # the replica's two ranks that run (the others mirror them, the other replicas join their
    # cross-replica collectives)
    ran = sum(len(w.graphs[r]) for r in (0, 8))
    assert calls[-1][1:] == (ran, ran)
    done = [c[1] for c in calls]
    assert done == sorted(done) and all(c[1] <= c[2] for c in calls)
    assert calls[-1][0] == pytest.approx(run.makespan_s * 1e9)


def test_simulate_generated_takes_the_slice_when_it_can():
    sizes = (8, 2)
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=16, recompute="full")
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=sizes)
    run = simulate_generated(_platform(sizes), w)
    full = simulate(w.platform(_platform(sizes)), w.graphs)
    assert run.mode == "replica slice" and run.why_every_rank == ""
    assert len(run.ranks) == 16 and run.world == 16
    assert run.makespan_s == full.makespan_s
    assert run.to_dict()["ranks_simulated"] == 2  # one per stage: the TP peer mirrors it


def test_simulate_generated_says_why_it_ran_every_rank():
    w = generate(_shrunk_1_7b(), Parallelism(tp=1, pp=2, dp=2, zero=3, global_batch=4), OperatorTimer("A100"))
    run = simulate_generated(_platform((4,)), w, backend="flow")
    assert run.mode == "every rank" and "pairwise symmetry class" in run.why_every_rank
    assert len(run.ranks) == 4
    assert run.makespan_s == simulate(w.platform(_platform((4,))), w.graphs, backend="flow").makespan_s
    assert simulate_generated(_platform((4,)), w, backend="flow", replica_slice=False).why_every_rank == ""


def test_slice_refuses_what_it_cannot_reproduce():
    w = generate(_shrunk_1_7b(), Parallelism(tp=1, pp=1, dp=4, global_batch=4), OperatorTimer("A100"))
    with pytest.raises(ConfigError, match="pairwise symmetry class"):
        simulate_replica(w.platform(_platform((4,))), w, backend="congestion_aware")


def test_reduction_waits_for_the_last_send():
    """Untied embeddings and a slow second dimension: the last stage's gradient send is still
    in flight when its data-parallel all-reduce is due; the all-reduce waits for it (one
    communication slot per rank) in the slice as in the full run."""
    from dataclasses import replace

    spec = replace(_shrunk_1_7b(layers=2), tied_embeddings=False)
    sizes = (4, 2)  # the data-parallel group in dimension 0, the pipeline send on the slow one
    par = Parallelism(tp=1, pp=2, dp=4, micro_batch=1, global_batch=8, recompute="full")
    w = generate(spec, par, OperatorTimer("A100"), network_sizes=sizes)
    dims = (DimSpec("Switch", 4, 300e9, 700.0), DimSpec("Switch", 2, 1e9, 2000.0))
    platform = w.platform(Platform(network=NetworkSpec(dims)))
    full = simulate(platform, w.graphs)
    sliced = simulate_replica(platform, w)
    last = [r for r in sliced.sync_s if w.stage_of_rank[r] == 1]
    assert last
    assert all(got == full.ranks[got.rank] for got in sliced.rank_results())


@pytest.mark.parametrize("extra", [{"zero": 1}, {}, {"schedule": "interleaved", "virtual_stages": 2}])
def test_uneven_cross_replica_ring_runs_two_replicas(extra):
    """TP 2 on 4-rank nodes: the data-parallel ring 0, 2, 4, 6 crosses the inter-node link only
    from 2 to 4 and from 6 to 0 (the default mode's path rule), so its reduce-scatter ends at
    different times on its members and replica 1 does not follow replica 0. Moving every rank
    two replicas on (one node) maps each ring onto itself, edge costs included, so replicas 0
    and 1 run and the others repeat them: every rank's result, timeline and record equal the
    run of every rank bit for bit. With one replica standing for all (period 1 forced) the
    replicas' ends differ and the slice refuses. In ASTRA-sim's mode every message of the ring
    travels dimension 0: one replica suffices."""
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=16, recompute="full", **extra)
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=(4, 4))
    platform = w.platform(_platform((4, 4)))
    every = simulate(platform, w.graphs, symmetry=False)
    sliced = simulate_replica(platform, w)
    assert sliced.period == 2 and sliced.ranks_simulated == 2 * 2  # a rank per stage, two replicas
    run = simulate_generated(_platform((4, 4)), w)
    assert run.mode == "replica slice" and run.replica_ranks == 8
    assert_same_run(run.result, every)
    assert len({r.end_ns for r in every.collectives if r.group_size == 4 and r.rank in (0, 2)}) > 1  # genuinely uneven
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replica, "replica_period", lambda *_: 1)
        with pytest.raises(ConfigError, match="cross the network's dimensions unevenly"):
            simulate_replica(platform, w)
    astra = dataclasses.replace(platform, compat="astra")
    sliced = simulate_replica(astra, w)
    assert sliced.period == 1 and sliced.makespan_s == simulate(astra, w.graphs).makespan_s


def test_a_ring_no_shift_maps_onto_itself_runs_every_rank():
    """PP 3, DP 4 on (3, 4): the data-parallel ring 0, 1, 2, 3 runs along dimension 0, then
    across both dimensions (2 to 3), then along dimension 1 (3 to 0): no shift by fewer than
    the 4 replicas maps its edges onto themselves, so the step runs every rank and says why."""
    par = Parallelism(tp=1, pp=3, dp=4, micro_batch=1, global_batch=8, recompute="full")
    w = generate(_shrunk_1_7b(layers=6), par, OperatorTimer("A100"), network_sizes=(3, 4))
    with pytest.raises(ConfigError, match=r"group \[0, 1, 2, 3\] has ring edges"):
        simulate_replica(w.platform(_platform((3, 4))), w)
    run = simulate_generated(_platform((3, 4)), w)
    assert run.mode == "every rank" and "no shift by fewer than all 4 replicas" in run.why_every_rank


def test_replicas_that_are_not_translates_are_refused():
    """PP 3, DP 2 on (3, 2): replica 0 is ranks 0, 2, 4 at coordinates (0, 0), (2, 0), (1, 1),
    replica 1 ranks 1, 3, 5 at (1, 0), (0, 1), (2, 1), so the first pipeline send stays in
    dimension 0 in replica 0 and crosses both dimensions in replica 1. The replicas then differ
    (rank 5's communication time is not rank 4's), and the slice, which reports replica 1 as
    replica 0, refuses."""
    par = Parallelism(tp=1, pp=3, dp=2, micro_batch=1, global_batch=8, recompute="full")
    w = generate(_shrunk_1_7b(layers=6), par, OperatorTimer("A100"), network_sizes=(3, 2))
    platform = w.platform(_platform((3, 2)))
    every = simulate(platform, w.graphs, symmetry=False)
    assert every.ranks[5].comm_s != every.ranks[4].comm_s
    with pytest.raises(ConfigError, match="counterparts 1 and 3 of another replica"):
        simulate_replica(platform, w)
    run = simulate_generated(_platform((3, 2)), w)
    assert run.mode == "every rank" and "do not follow one timeline" in run.why_every_rank


@pytest.mark.parametrize("extra", [{"zero": 1}, {}])
def test_busy_injection_port_is_exact(extra):
    """TP 2, PP 2 on (2, 8): the stages and the data-parallel groups both lie in dimension 1.
    Stage 1's rank 8 enters the tied-embedding all-reduce with stage 0's rank 0 early and
    leaves it before rank 0 does, its last message still holding its dimension-1 injection
    port when its data-parallel reduction starts. The slice used to refuse this (its
    reduction, priced alone, had the port free: rank 8 ended about 110 us early); the other
    replicas' ranks now join replica 0's reduction with its busy ports, and every rank's result
    is the every-rank run's bit for bit."""
    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=16, recompute="full", **extra)
    platform, w, every = assert_busy_port_exact(par)
    rec = {(r.rank, r.group): r for r in every.collectives}
    embedding = next(g for (rank, g), r in rec.items() if rank == 8 and r.group_size == 2 and r.dim_bytes[1])
    reduction = min((r for r in every.collectives if r.rank == 8 and r.group_size == 4), key=lambda r: r.start_ns)
    # the old rule's refusal: rank 8's reduction starts while the embedding all-reduce still runs on rank 0
    assert reduction.start_ns < rec[(0, embedding)].end_ns and reduction.dim_bytes[1]


def test_generated_groups_enter_the_platform_as_tuples():
    w = generate(_shrunk_1_7b(), Parallelism(tp=2, pp=2, dp=2, global_batch=2), OperatorTimer("A100"))
    groups = w.platform(_platform((8,))).comm_groups
    assert groups and all(k == str(int(k)) for k in groups)
    assert all(isinstance(m, tuple) and all(type(r) is int for r in m) for m in groups.values())
    assert {tuple(m) for m in w.comm_groups.values()} == set(groups.values())


@pytest.mark.parametrize("symmetry", [True, False])
def test_mirrors_issue_with_their_representative(symmetry):
    """A mirror runs no graph; its collectives join its representative's, through the group
    symmetric path or rank by rank, and the representative's times are the full run's."""
    from trainsim.workload.graph import GraphBuilder

    sizes = (4,)
    w = generate(_shrunk_1_7b(layers=2), Parallelism(tp=4, pp=1, dp=1, global_batch=1), OperatorTimer("A100"), network_sizes=sizes)
    platform = w.platform(_platform(sizes))
    full = simulate(platform, w.graphs, symmetry=symmetry)
    empty = GraphBuilder(source="mirror").build()
    graphs = [w.graphs[0], empty, empty, empty]
    run = simulate(platform, graphs, symmetry=symmetry, mirrors={0: (1, 2, 3)})
    assert run.ranks[0] == full.ranks[0]
    assert [r.nodes for r in run.ranks[1:]] == [0, 0, 0]


def test_a_representative_that_would_wait_for_another_ranks_mirror_gets_none():
    """A mirror runs nothing: a representative sending to one, or sharing a group with another
    representative's mirror, would wait forever, so no mirrors are used then."""
    from trainsim.enums import CommType, NodeType
    from trainsim.system.symmetry.replica import _issues_alone_or_with_its_mirrors
    from trainsim.workload.graph import GraphBuilder

    def graph(**comm):
        b = GraphBuilder(rank=0)
        b.add(0, NodeType.COMM_SEND_NODE if "comm_dst" in comm else NodeType.COMM_COLL_NODE, "c", comm_size=8, **comm)
        return b.build()

    groups = {"g": (0, 1, 3)}
    mirror_of = {1: 0, 3: 2}
    assert not _issues_alone_or_with_its_mirrors(graph(comm_dst=3, comm_tag=1), mirror_of, groups)
    assert _issues_alone_or_with_its_mirrors(graph(comm_dst=2, comm_tag=1), mirror_of, groups)
    coll = {"comm_type": int(CommType.ALL_REDUCE), "pg_name": "g"}
    assert not _issues_alone_or_with_its_mirrors(graph(**coll), mirror_of, groups)
    assert _issues_alone_or_with_its_mirrors(graph(**coll), {1: 0}, groups)


def test_tensor_peers_on_an_uneven_ring_are_not_mirrors():
    """A tensor-parallel ring that crosses nodes on two of its edges (TP 8 on nodes of 4) ends
    at a different time on each member, and the slow edges' injection ports carry into the next
    collective: its peers do not behave as the stage's first rank, and the step equals the full
    run's (taken here on every rank: the slice then meets a busy port); with TP inside a node
    (an even ring) they are still mirrors."""
    platform = Platform(network=NetworkSpec((DimSpec("Switch", 4, 300e9, 700.0), DimSpec("Switch", 4, 12.5e9, 2000.0))))
    for tp, dp in ((8, 2), (4, 4)):
        w = generate(_shrunk_1_7b(), Parallelism(tp=tp, dp=dp, sp=True, micro_batch=1, global_batch=dp), OperatorTimer("A100"),
                     network_sizes=(4, 4))  # fmt: skip
        full = simulate(w.platform(platform), w.graphs, symmetry=False)
        run = simulate_generated(platform, w)
        assert run.result.makespan_s == pytest.approx(full.makespan_s, rel=1e-12)
        if tp == 4:
            assert run.mode == "replica slice" and run.ranks_simulated == 1
            continue
        assert run.ranks_simulated > 1
        first = min(r.node_id for r in full.collectives)  # the members of one collective end apart
        assert len({round(r.end_ns) for r in full.collectives if r.node_id == first and r.rank < tp}) > 1


ZERO3_CASES = [
    # (tp, dp, network sizes, extra Parallelism fields): no pipeline, so no point-to-point traffic
    (1, 4, (4,), {"zero": 3}),
    (2, 4, (2, 4), {"zero": 3}),
    (2, 8, (2, 8), {"zero": 3, "sp": True}),
    (2, 4, (4, 2), {"zero": 3}),  # data-parallel rings crossing nodes unevenly: two replicas run
    (2, 4, (2, 4), {"overlap_grad_reduce": True}),
    (1, 8, (4, 2), {"overlap_grad_reduce": True, "zero": 2}),
]


@pytest.mark.parametrize(("tp", "dp", "sizes", "extra"), ZERO3_CASES)
def test_zero3_and_overlapped_reduction_without_a_pipeline(tp, dp, sizes, extra):
    """ZeRO-3's gathers and reduce-scatters and overlapped reductions cross replicas during the
    step. Without point-to-point messages a rank's only traffic is its collectives, one at a
    time on its communication slot, so a mirror whose ports are set from its counterpart's at
    each cross-replica collective has them as in the full run: the slice equals the run of
    every rank bit for bit. With a pipeline it refuses (the sends hold ports the mirrors would
    not see; test_slice_refuses_what_it_cannot_reproduce)."""
    par = Parallelism(tp=tp, pp=1, dp=dp, micro_batch=1, global_batch=2 * dp, recompute="full", **extra)
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=sizes)
    every = simulate(w.platform(_platform(sizes)), w.graphs, symmetry=False)
    run = simulate_generated(_platform(sizes), w)
    assert run.mode == "replica slice", run.why_every_rank
    assert run.replica_ranks < len(w.graphs)
    assert_same_run(run.result, every)


def test_the_search_expects_the_slice_for_every_strategy_of_the_generator():
    from trainsim.optimize.strategy.search import needs_every_rank

    for par in (Parallelism(tp=2, pp=2, dp=2, zero=3, global_batch=4), Parallelism(tp=2, pp=2, dp=2, overlap_grad_reduce=True, global_batch=4),
                Parallelism(tp=1, pp=1, dp=4, ep=2, global_batch=4), Parallelism(tp=1, pp=1, dp=4, ep=4, global_batch=4)):  # fmt: skip
        assert not needs_every_rank(par, "NO_MEMORY_EXPANSION")


# expert parallelism: the replicas that run hold whole expert groups (a period a multiple of EP)
EXPERTS = [
    (1, 1, 4, 2, (4,), {}),
    (2, 2, 4, 2, (4, 4), {"sp": True}),
    (1, 2, 8, 2, (4, 4), {"zero": 1}),  # uneven rings: 4 replicas run
    (1, 2, 8, 4, (8, 2), {"overlap_grad_reduce": True}),
    (1, 1, 4, 4, (4,), {}),  # an expert group of every replica: a cross-replica group
    (1, 2, 4, 4, (4, 2), {"zero": 1}),
]


@pytest.mark.parametrize(("tp", "pp", "dp", "ep", "sizes", "extra"), EXPERTS)
def test_expert_parallel_slice_runs_whole_expert_groups(tp, pp, dp, ep, sizes, extra):
    model = dataclasses.replace(get_model("mixtral-8x7b"), layers=2, seq=256)
    par = Parallelism(tp=tp, pp=pp, dp=dp, ep=ep, micro_batch=1, global_batch=2 * dp, recompute="full", **extra)
    w = generate(model, par, OperatorTimer("A100"), network_sizes=sizes, check_memory=False)
    platform = w.platform(_platform(sizes))
    sliced = simulate_replica(platform, w)
    assert sliced.period < dp and (ep == dp or sliced.period % ep == 0)
    assert_same_run(sliced.world_result(w), simulate(platform, w.graphs, symmetry=False))


# ZeRO-3 and overlapped reductions beside pipeline and context-parallel messages (a rank's
# collectives and sends share its one communication slot; sends take no injection port)
PIPELINED = [
    (2, 2, 4, (4, 4), {"zero": 3, "overlap_grad_reduce": True}),
    (4, 2, 2, (2, 8), {"zero": 3}),  # TP 4 across 2-rank nodes: 8 ranks run
    (2, 2, 4, (8, 2), {"overlap_grad_reduce": True, "zero": 2, "sp": True}),
    (2, 2, 2, (4, 4), {"cp": 2, "zero": 3, "sp": True}),
    (2, 2, 2, (4, 2), {"zero": 3, "schedule": "interleaved", "virtual_stages": 2}),
]


@pytest.mark.parametrize(("tp", "pp", "dp", "sizes", "extra"), PIPELINED)
def test_zero3_and_overlapped_reduction_with_a_pipeline(tp, pp, dp, sizes, extra):
    par = Parallelism(tp=tp, pp=pp, dp=dp, micro_batch=1, global_batch=4 * dp, recompute="full", **extra)
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=sizes)
    platform = w.platform(_platform(sizes))
    full = simulate(platform, w.graphs, symmetry=False)
    sliced = simulate_replica(platform, w)
    assert sliced.ranks_simulated < par.world
    assert_same_run(sliced.world_result(w), full)


def test_mirrors_records_pair_by_node_regression():
    # TP 16 across two 8-NPU nodes, ZeRO-3: some of rank 15's gathers on its data-parallel
    # group are memo answers (no record for its mirror, rank 31), others run rank by rank (a
    # record each). Pairing the k-th records of rank and mirror compared different gathers
    # (2.4 ms against 6.9 ms) and refused the slice; by node they are equal.
    model = dataclasses.replace(get_model("gpt3-175b"), layers=2, seq=512)
    par = Parallelism(tp=16, pp=1, dp=2, micro_batch=1, global_batch=8, recompute="selective", zero=3, sp=True)
    w = generate(model, par, OperatorTimer("A100"), network_sizes=(8, 4), check_memory=False)
    platform = Platform(network=NetworkSpec((DimSpec("Switch", 8, 300e9, 700.0), DimSpec("Switch", 4, 100e9, 2000.0))))
    run = simulate_generated(platform, w)
    assert run.mode == "replica slice", run.why_every_rank
    full = simulate(w.platform(platform), w.graphs)
    assert list(run.result.ranks) == list(full.ranks)
    # in the slice's own run the mirror has records of fewer gathers than rank 15, each ending
    # when rank 15's record of the same node does
    sliced = simulate_replica(w.platform(platform), w)
    group = w.graphs[15].pg_name[34]
    ends = {(r.rank, r.node_id): r.end_ns for r in sliced.run.collectives if r.group == group}
    mirror = [node for rank, node in ends if rank == 31]
    assert 0 < len(mirror) < sum(1 for rank, _ in ends if rank == 15)
    assert all(ends[(31, node)] == ends[(15, node)] for node in mirror)


def test_a_resource_sharing_endpoint_keeps_the_slice_exact():
    # every collective then runs rank by rank (no symmetric path), so the even-ends check sees
    # every cross-replica one; mirrors run no compute, and their collectives still end as their
    # counterparts' do
    from trainsim.endpoint.shared import SharedEndpointSpec

    par = Parallelism(tp=2, pp=2, dp=4, micro_batch=1, global_batch=16, recompute="full", overlap_grad_reduce=True)
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=(4, 4))
    platform = dataclasses.replace(_platform((4, 4)), endpoint=SharedEndpointSpec())
    run = simulate_generated(platform, w)
    assert run.mode == "replica slice", run.why_every_rank
    assert_same_run(run.result, simulate(w.platform(platform), w.graphs))


def _random_step(rng):
    """A random small generated step and platform (None when the strategy does not fit the
    model or the network)."""
    from trainsim.errors import TrainsimError

    tp, pp, dp, cp = rng.choice([1, 2, 4]), rng.choice([1, 2, 4]), rng.choice([2, 4, 8]), rng.choice([1, 1, 2])
    world = tp * pp * dp * cp
    if world > 64:
        return None
    first = rng.choice([d for d in (2, 4, 8) if world % d == 0] or [world])
    sizes = (first, world // first) if world > first else (world,)
    kinds = (rng.choice(["Switch", "Ring", "FullyConnected"]), rng.choice(["Switch", "Ring"]))[: len(sizes)]
    bws = (rng.choice([300e9, 100e9]), rng.choice([25e9, 100e9, 300e9]))[: len(sizes)]
    extra = {"zero": rng.choice([0, 1, 2, 3]), "overlap_grad_reduce": rng.random() < 0.5, "sp": tp > 1 and rng.random() < 0.5}
    schedule = rng.choice(["1f1b", "gpipe", "interleaved"]) if pp > 1 else "1f1b"
    extra.update({"schedule": schedule, "virtual_stages": 2 if schedule == "interleaved" else 1})
    mb = rng.choice([1, 2])
    try:
        par = Parallelism(tp=tp, pp=pp, dp=dp, cp=cp, micro_batch=mb, global_batch=mb * dp * rng.choice([2, 4]),
                          recompute=rng.choice(["full", "selective", "none"]), **extra)  # fmt: skip
        w = generate(_shrunk_1_7b(8), par, OperatorTimer("A100"), network_sizes=sizes, check_memory=False)
    except TrainsimError:
        return None
    dims = tuple(DimSpec(k, s, b, lat) for k, s, b, lat in zip(kinds, sizes, bws, (700.0, 2000.0), strict=False))
    return w, Platform(network=NetworkSpec(dims))


def _slices_equal_every_rank(seeds):
    import random

    slices = 0
    for seed in seeds:
        step = _random_step(random.Random(seed))
        if step is None:
            continue
        w, platform = step
        run = simulate_generated(platform, w)
        if run.mode != "replica slice":  # refused, with its reason: every rank ran
            assert run.why_every_rank
            continue
        slices += 1
        full = simulate(w.platform(platform), w.graphs)
        assert list(run.result.ranks) == list(full.ranks), f"seed {seed}"
    return slices


def test_random_steps_slice_equal_every_rank():
    """ZeRO 0-3, overlapped reduction, SP, CP, 1F1B / GPipe / interleaved, Ring / Switch /
    FullyConnected dimensions: every slice the slice takes is every rank's run, bit for bit
    (bench: ~10,000 such steps, none different)."""
    assert _slices_equal_every_rank(range(60)) >= 20


@pytest.mark.fuzz
def test_more_random_steps_slice_equal_every_rank():
    assert _slices_equal_every_rank(range(1000, 3000)) >= 500


@pytest.mark.parametrize(
    "kinds_sizes",
    [(("Switch", 8), ("Switch", 16)), (("Ring", 4), ("Mesh", 3), ("FullyConnected", 2)), (("Mesh", 4), ("Ring", 6))],
)
@pytest.mark.parametrize("compat_astra", [True, False])
def test_a_rename_by_one_coordinate_vector_keeps_every_pairwise_shape(kinds_sizes, compat_astra):
    """tensor_mirrors' per-member shortcut (``_moves_by_one_vector``) never says yes where the
    pairwise check of ``MultiDimTopology.shape`` would say no; random groups and renames,
    translations (with and without wrap-around) among them."""
    import numpy as np

    from trainsim.topology import MultiDimTopology

    kinds, sizes = zip(*kinds_sizes, strict=True)
    topo = MultiDimTopology(list(kinds), list(sizes), **({} if compat_astra else {"bandwidths": [float(s) for s in sizes]}))
    rng = np.random.default_rng(11)
    said_yes = 0
    for _ in range(400):
        group = tuple(int(r) for r in rng.choice(topo.npus, size=int(rng.integers(2, 7)), replace=False))
        shift = [int(rng.integers(-2, 3)) for _ in sizes]
        if rng.random() < 0.7:  # a translation (wrapping around where it leaves the grid)
            rename = {r: topo.rank_of([(c + s) % n for c, s, n in zip(topo.coords(r), shift, sizes, strict=True)]) for r in group}
        else:
            rename = {r: int(rng.integers(topo.npus)) for r in group}
        pairwise = all(topo.shape(a, b) == topo.shape(rename[a], rename[b]) for a in group for b in group)
        if replica._moves_by_one_vector(topo, group, rename):
            said_yes += 1
            assert pairwise, (group, rename)
    assert said_yes > 20  # the shortcut is taken often enough to be tested
