"""The strategy search's communication model takes NCCL's price when the platform sets
``system.collective_tuner: nccl`` (optimize/strategy/comm.py, docs/nccl.md): equal to the
simulation on groups inside a node, across nodes and on every rank."""

from __future__ import annotations

from dataclasses import replace

import pytest

from trainsim.config.types import DimSpec, NcclSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import CommType, NodeType
from trainsim.optimize.strategy.comm import CommModel
from trainsim.system.api import simulate
from trainsim.workload.graph import GraphBuilder

PLATFORM = Platform(
    network=NetworkSpec((DimSpec("Switch", 8, 300e9, 700.0), DimSpec("Switch", 4, 25e9, 2000.0))),
    system=SystemSpec(local_mem_bw=2039e9, collective_tuner="nccl", nccl=NcclSpec(arch="ampere")),
)
SIZE = 10_000_000
GROUPS = {"a node": tuple(range(8)), "one per node": tuple(range(0, 32, 8)), "every rank": tuple(range(32))}


def simulated(members, comm_type):
    platform = replace(PLATFORM, comm_groups={"1": tuple(members)})
    graphs = []
    for rank in range(PLATFORM.network.npus):
        b = GraphBuilder(source="test", rank=rank)
        if rank in members:
            pg = "" if len(members) == PLATFORM.network.npus else "1"
            b.add(0, NodeType.COMM_COLL_NODE, "c", comm_type=int(comm_type), comm_size=SIZE, pg_name=pg)
        graphs.append(b.build())
    return simulate(platform, graphs).makespan_s


@pytest.mark.parametrize("group", GROUPS, ids=str)
@pytest.mark.parametrize("comm_type", [CommType.ALL_REDUCE, CommType.ALL_GATHER, CommType.REDUCE_SCATTER], ids=lambda c: c.name)
def test_nccl_priced_collective_equals_simulation(group, comm_type):
    members = GROUPS[group]
    ours = CommModel(PLATFORM).collective(int(comm_type), SIZE, members)
    assert ours == pytest.approx(simulated(members, comm_type), rel=1e-9)
    plain = CommModel(replace(PLATFORM, system=replace(PLATFORM.system, collective_tuner=None)))
    assert ours != plain.collective(int(comm_type), SIZE, members)
