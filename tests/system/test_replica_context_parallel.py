"""The replica slice with context parallelism: one data-parallel replica (every TP x CP x PP
rank of DP index 0), the other replicas' ranks joining its dp x cp gradient reductions, gives
the full run's per-rank results bit for bit."""

import pytest

from trainsim.compute import OperatorTimer
from trainsim.system.api import simulate
from trainsim.system.symmetry.replica import simulate_generated, simulate_replica
from trainsim.workload.generate import Parallelism, generate

from .test_replica import _platform, _shrunk_1_7b, assert_busy_port_exact, assert_same_run


@pytest.mark.parametrize(
    ("tp", "cp", "pp", "dp", "sizes", "extra"),
    [
        # the dp x cp reduction groups inside one network dimension (a group whose ring crosses
        # dimensions unevenly ends at different times on its members: no slice, test_replica.py),
        # the stages in the other (on (2, 8) they share one: test_cp_slice_with_a_busy_injection_port)
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
    assert sliced.makespan_s == full.makespan_s
    assert sliced.ranks_simulated <= tp * cp * pp
    unmirrored = simulate_replica(platform, w, mirror=False)
    assert unmirrored.rank_results() == sliced.rank_results()
    assert all(got == full.ranks[got.rank] for got in sliced.rank_results())
    run = simulate_generated(_platform(sizes), w)
    assert run.mode == "replica slice"
    assert_same_run(run.result, full)


def test_cp_slice_with_a_busy_injection_port():
    """TP 2, CP 2, PP 2, DP 2 on (2, 8): the dp x cp reductions and the stages' tied-embedding
    all-reduce share dimension 1. Rank 8 leaves the embedding all-reduce before its stage-0 peer
    does, its last message still holding the port when the reduction starts: run alone, with
    the port free, the reduction ended stage 1 at 32.8643 ms against 32.9748 ms for every rank,
    and the slice refused. The other replica's ranks now join the reduction with rank 8's busy
    port: the slice is the every-rank run, bit for bit."""
    assert_busy_port_exact(Parallelism(tp=2, cp=2, pp=2, dp=2, micro_batch=1, global_batch=8, recompute="full"))
