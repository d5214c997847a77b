"""The replica slice with context parallelism: one data-parallel replica (every TP x CP x PP
rank of DP index 0) plus the dp x cp gradient reductions run alone gives the full run's
per-rank results."""

import pytest

from trainsim.compute import OperatorTimer
from trainsim.errors import ConfigError
from trainsim.system.api import simulate
from trainsim.system.symmetry.replica import simulate_generated, simulate_replica
from trainsim.workload.generate import Parallelism, generate

from .test_replica import _platform, _shrunk_1_7b, assert_busy_port_refused


@pytest.mark.parametrize(
    ("tp", "cp", "pp", "dp", "sizes", "extra"),
    [
        # the dp x cp reduction groups inside one network dimension (a group whose ring crosses
        # dimensions unevenly ends at different times on its members: no slice, test_replica.py),
        # the stages in the other (on (2, 8) they share one: test_cp_slice_refuses_a_busy_injection_port)
        (2, 2, 2, 2, (8, 2), {}),
        (1, 2, 2, 4, (8, 2), {"zero": 1}),
        (2, 2, 1, 2, (8,), {"sp": True}),
    ],
)
def test_slice_equals_full_with_cp(tp, cp, pp, dp, sizes, extra):
    par = Parallelism(tp=tp, cp=cp, pp=pp, dp=dp, micro_batch=1, global_batch=4 * dp, recompute="full", **extra)
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=sizes)
    platform = w.platform(_platform(sizes))
    full = simulate(platform, w.graphs)
    sliced = simulate_replica(platform, w)
    assert sliced.makespan_s == pytest.approx(full.makespan_s, rel=1e-12)
    assert sliced.ranks_simulated <= tp * cp * pp
    unmirrored = simulate_replica(platform, w, mirror=False)
    assert unmirrored.rank_results() == sliced.rank_results()
    for got in sliced.rank_results():
        want = full.ranks[got.rank]
        for name in ("finish_s", "compute_s", "comm_s", "exposed_comm_s"):
            assert getattr(got, name) == pytest.approx(getattr(want, name), rel=1e-9, abs=1e-12), name
    run = simulate_generated(_platform(sizes), w)
    assert run.mode == "replica slice"
    for got, want in zip(run.result.ranks, full.ranks, strict=True):
        assert got.finish_s == pytest.approx(want.finish_s, rel=1e-9, abs=1e-12)


def test_cp_slice_refuses_a_busy_injection_port():
    """TP 2, CP 2, PP 2, DP 2 on (2, 8): the dp x cp reductions and the stages' tied-embedding
    all-reduce share dimension 1. Rank 8 leaves the embedding all-reduce before its stage-0 peer
    does, its last message still holding the port when the reduction starts (run alone, the
    reduction had it free): the slice ended stage 1 at 32.8643 ms against 32.9748 ms for every
    rank. It refuses, and the step is the every-rank run's, exactly."""
    assert_busy_port_refused(Parallelism(tp=2, cp=2, pp=2, dp=2, micro_batch=1, global_batch=8, recompute="full"))


def test_cp_members_reaching_the_reduction_apart_are_refused():
    """The dp x cp group holds two ranks of replica 0 (CP 0 and CP 1 of a stage): the full run
    starts the reduction when the later one reaches it, a stand-in at its own rank's time, so a
    slice whose CP ranks reach their stand-ins at different times is refused (here the slice's
    own timeline with one CP rank's stand-in moved 1 ns; the unmoved one passes)."""
    import copy

    from trainsim.system.symmetry.replica import _check_clear_start

    sizes = (8, 2)
    par = Parallelism(tp=2, cp=2, pp=2, dp=2, micro_batch=1, global_batch=8, recompute="full")
    w = generate(_shrunk_1_7b(), par, OperatorTimer("A100"), network_sizes=sizes)
    sliced = simulate_replica(w.platform(_platform(sizes)), w, mirror=False)
    ran = sorted(sliced.sync_s)
    _check_clear_start(w, sliced.positions, sliced.run, ran, sliced.sync_records)
    pos = int(sliced.positions[1][0])  # stage 1's reduction
    group = w.graphs[8].pg_name[pos]
    late = next(r for r in ran if r != 8 and w.stage_of_rank[r] == 1 and w.graphs[r].pg_name[pos] == group)
    run = copy.copy(sliced.run)
    run.timelines = list(run.timelines)
    timeline = run.timelines[late]
    start = list(timeline.start_ns)
    start[pos] += 1.0
    run.timelines[late] = type(timeline)(timeline.graph, start, timeline.end_ns)
    with pytest.raises(ConfigError, match="starts at different times on ranks 8 and"):
        _check_clear_start(w, sliced.positions, run, ran, sliced.sync_records)
