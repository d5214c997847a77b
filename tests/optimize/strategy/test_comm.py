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
