"""The estimate's collective closed forms (``optimize/strategy/comm.py``) against simulating
the same collective alone."""

from dataclasses import replace

import pytest

from trainsim.config.types import DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import CommType, NodeType
from trainsim.optimize.strategy.comm import CommModel
from trainsim.system.api import simulate
from trainsim.workload.graph import GraphBuilder

PLATFORM = Platform(
    network=NetworkSpec((DimSpec("Switch", 8, 300e9, 700.0), DimSpec("Switch", 4, 25e9, 2000.0))),
    system=SystemSpec(local_mem_bw=2039e9),
)
SIZE = 10_000_000


def simulated(members, comm_type):
    platform = replace(PLATFORM, comm_groups={"1": tuple(members)})
    graphs = []
    for rank in range(PLATFORM.network.npus):
        b = GraphBuilder(source="test", rank=rank)
        if rank in members:
            pg = "" if len(members) == PLATFORM.network.npus else "1"
            b.add(
                0,
                NodeType.COMM_COLL_NODE,
                "c",
                comm_type=int(comm_type),
                comm_size=SIZE,
                pg_name=pg,
            )
        graphs.append(b.build())
    return simulate(platform, graphs).makespan_s


GROUPS = {
    "4 in a node": tuple(range(4)),
    "a node": tuple(range(8)),
    "one per node": tuple(range(0, 32, 8)),
    "two nodes": tuple(range(16)),
    "strided across nodes": tuple(range(0, 32, 2)),
    "every rank": tuple(range(32)),
}


@pytest.mark.parametrize("group", GROUPS, ids=str)
@pytest.mark.parametrize(
    "comm_type",
    [CommType.ALL_REDUCE, CommType.ALL_GATHER, CommType.REDUCE_SCATTER],
    ids=lambda c: c.name,
)
def test_collective_closed_form_equals_simulation(group, comm_type):
    members = GROUPS[group]
    ours = CommModel(PLATFORM).collective(int(comm_type), SIZE, members)
    assert ours == pytest.approx(simulated(members, comm_type), rel=1e-7, abs=1e-9)


def test_send_closed_form():
    model = CommModel(PLATFORM)
    # across nodes: 2 hops x 2,000 ns + 1 MB / 25 GB/s + 10 ns endpoint
    assert model.send_s(0, 8, 1e6) == pytest.approx(4e-6 + 1e6 / 25e9 + 10e-9)


def simulated_passes(members, passes, compute_s):
    """``passes`` repetitions of (compute, all-gather, compute, reduce-scatter) on the group,
    each step after the one before on its rank."""
    platform = replace(PLATFORM, comm_groups={"1": tuple(members)})
    graphs = []
    for rank in range(PLATFORM.network.npus):
        b = GraphBuilder(source="test", rank=rank)
        if rank in members:
            prev: list[int] = []
            for i in range(passes):
                for j, ctype in enumerate((CommType.ALL_GATHER, CommType.REDUCE_SCATTER)):
                    c = b.add(4 * i + 2 * j, NodeType.COMP_NODE, "f", data_deps=prev, duration_s=compute_s)
                    prev = [b.add(4 * i + 2 * j + 1, NodeType.COMM_COLL_NODE, "c", data_deps=[c], comm_type=int(ctype), comm_size=SIZE, pg_name="1")]
        graphs.append(b.build())
    return simulate(platform, graphs).makespan_s


@pytest.mark.parametrize("compute_s", [0.0, 50e-6, 400e-6])
def test_passes_on_an_uneven_ring_reach_the_steady_state(compute_s):
    # a ring over two of the four nodes (two edges cross them): its members drift apart over
    # repeated passes, so a pass takes less than from a common start (ring_pass_s's period)
    members = tuple(range(4, 20))
    model = CommModel(PLATFORM)
    steps = ((compute_s, int(CommType.ALL_GATHER), SIZE), (compute_s, int(CommType.REDUCE_SCATTER), SIZE))
    period = model.ring_pass_s(steps, 0.0, members)
    in_turn = 2 * compute_s + model.collective(steps[0][1], SIZE, members) + model.collective(steps[1][1], SIZE, members)
    assert model.uneven_ring(members) and not model.uneven_ring(tuple(range(8)))
    assert period < in_turn
    assert period == pytest.approx((simulated_passes(members, 12, compute_s) - simulated_passes(members, 6, compute_s)) / 6, rel=0.01)
