"""Collectives priced by the wafer's flow programs in a simulation (system.collective_tuner:
wafer, system/wafer_pricing.py): a generated 3-D step on FRED-D and the mesh runs through
simulate, and every collective lasts what the fabric's program takes for the groups that
became ready in its tick, measured here by running those programs directly."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import pytest

from trainsim.collectives import wafer as W
from trainsim.config.platform import load_platform
from trainsim.config.types import DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.config.wafer import npu_of_rank
from trainsim.engine import EventQueue
from trainsim.enums import CommType
from trainsim.errors import ConfigError
from trainsim.network.in_network import InNetworkFlow
from trainsim.system.api import simulate
from trainsim.system.collective_pricing import PriceRequest, make_pricer
from trainsim.system.flow_program import run_program
from trainsim.system.symmetry.replica import simulate_generated
from trainsim.topology.fabrics import build_graph
from trainsim.workload.generate.api import generate
from trainsim.workload.generate.parallel import Parallelism
from trainsim.workload.models.zoo import get_model

FRED = Path(__file__).resolve().parents[2] / "examples" / "fred"
_COMM = {int(CommType.ALL_REDUCE): W.ALL_REDUCE, int(CommType.ALL_GATHER): W.ALL_GATHER, int(CommType.REDUCE_SCATTER): W.REDUCE_SCATTER}


@pytest.fixture(scope="module")
def workload():
    from trainsim.compute.devices import OperatorTimer

    par = Parallelism(tp=2, pp=2, dp=5, zero=1, micro_batch=1, global_batch=20)
    return generate(get_model("megatron-1.7b"), par, OperatorTimer("H100"))


def _direct_ns(fabric, groups, comm, nbytes):
    """The fabric's program for ``groups`` run directly on an in-network flow backend."""
    program = W.collective_program(fabric, groups, ["group"] * len(groups), comm, nbytes)
    return run_program(InNetworkFlow(None, EventQueue(), graph=fabric), program)


@pytest.mark.parametrize("name", ["fred_d", "mesh"])
def test_generated_step_collectives_are_the_flow_programs(workload, name):
    platform = workload.platform(load_platform(FRED / f"{name}.yaml"))
    result = simulate(platform, workload.graphs)
    fabric = build_graph(platform.network)
    npu_of = npu_of_rank(fabric.params)
    groups = {gid: tuple(m) for gid, m in platform.comm_groups.items()}
    # every collective instance: its members' issue times, its end
    inst: dict[tuple, list] = defaultdict(list)
    for r in result.collectives:
        inst[(r.group, r.comm_type, r.size, r.end_ns)].append(r.start_ns)
    ticks: dict[float, list] = defaultdict(list)
    for (gid, ctype, size, end), starts in inst.items():
        members = groups.get(gid, tuple(range(20)))
        assert len(starts) == len(members)  # every member recorded it
        ticks[max(starts)].append((members, ctype, size, end - max(starts)))
    spans = [(t, t + took) for t, batch in ticks.items() for *_, took in batch if took > 0]
    checked = set()
    for tick, batch in ticks.items():
        kinds = {(c, s, len(m)) for m, c, s, _ in batch}
        if len(kinds) != 1 or any(a < tick < b for a, b in spans):
            continue  # mixed collectives in one tick, or others in flight (checked below)
        ctype, size, n = kinds.pop()
        nbytes = size * (n if ctype == int(CommType.ALL_GATHER) else 1)
        placed = [[npu_of[m] for m in members] for members, *_ in batch]
        want = _direct_ns(fabric, placed, _COMM[ctype], nbytes)
        for *_, took in batch:
            assert took == pytest.approx(want, rel=1e-9)
        checked.add((ctype, n))
    # the tensor-parallel all-reduces (2 members) and the data-parallel collectives (ZeRO-1's
    # gradient reduction and parameter all-gather, 5 members) were priced by the fabric
    assert (int(CommType.ALL_REDUCE), 2) in checked
    assert (int(CommType.ALL_GATHER), 5) in checked
    assert all(rec.algorithms and rec.algorithms[0].startswith("wafer") for rec in result.collectives)


def test_generated_runs_every_rank(workload):
    """A replica slice would miss the other replicas' concurrent groups: every rank runs."""
    run = simulate_generated(load_platform(FRED / "fred_d.yaml"), workload)
    assert run.mode == "every rank"
    assert "concurrent groups" in run.why_every_rank


@pytest.mark.parametrize("name", ["fred_b", "mesh"])
def test_equivalent_ranks_are_not_folded(name):
    """Folding equivalent ranks (``symmetry/equivalence.py``) would run one rank of each class
    and miss the others' groups the pricer prices together (on FRED-B, TP 4 x DP 5 came out
    faster folded): simulate runs every rank."""
    from trainsim.compute.devices import OperatorTimer

    work = generate(get_model("megatron-1.7b"), Parallelism(tp=4, dp=5, global_batch=10), OperatorTimer("H100"))
    platform = work.platform(load_platform(FRED / f"{name}.yaml"))
    run = simulate(platform, work.graphs)
    assert "folded" not in run.info.get("symmetry", "")
    every = simulate(platform, work.graphs, fold=False)
    assert run.makespan_s == every.makespan_s
    assert list(run.ranks) == list(every.ranks)


def test_concurrent_batch_prices_each_collective_by_its_own_steps():
    platform = load_platform(FRED / "fred_d.yaml")
    pricer = make_pricer(platform, False)
    assert pricer is not None and pricer.concurrent
    small = PriceRequest(int(CommType.ALL_REDUCE), 1 << 20, (0, 1))
    big = PriceRequest(int(CommType.ALL_REDUCE), 1 << 30, (4, 8, 12, 16))
    alone = pricer.price_batch([small])[0].duration_ns
    both = pricer.price_batch([small, big])
    assert both[0].duration_ns == pytest.approx(alone, rel=1e-9)  # disjoint links: unaffected
    assert both[1].duration_ns > 100 * both[0].duration_ns
    fabric = build_graph(platform.network)
    assert both[1].duration_ns == pytest.approx(_direct_ns(fabric, [[4, 8, 12, 16]], W.ALL_REDUCE, 1 << 30))


def test_in_flight_collectives_load_the_fabric():
    """A collective priced while another is in flight on shared links shares them with what is
    left of it (rounded up to eighths); one on disjoint links does not notice."""
    platform = load_platform(FRED / "mesh.yaml")
    pricer = make_pricer(platform, False)
    row = PriceRequest(int(CommType.ALL_REDUCE), 1 << 28, (0, 4, 8, 12, 16))  # column placement: mesh row 0
    same_row = PriceRequest(int(CommType.ALL_REDUCE), 1 << 26, (0, 4))
    other_row = PriceRequest(int(CommType.ALL_REDUCE), 1 << 26, (1, 5))
    alone = pricer.price_batch([same_row])[0].duration_ns
    loaded = pricer.price_batch([same_row], [(row, 0.3)])[0].duration_ns
    assert loaded > alone
    fabric = build_graph(platform.network)
    npu = npu_of_rank(fabric.params)
    prog, owned = W.merge([
        W.collective_program(fabric, [[npu[m] for m in same_row.members]], ["group"], W.ALL_REDUCE, 1 << 26),
        W.collective_program(fabric, [[npu[m] for m in row.members]], ["group"], W.ALL_REDUCE, (1 << 28) * 3 // 8),
    ])
    ends: list[float] = []
    run_program(InNetworkFlow(None, EventQueue(), graph=fabric), prog, ends)
    assert loaded == pytest.approx(max(ends[s] for s in owned[0]))
    assert pricer.price_batch([other_row], [(row, 0.3)])[0].duration_ns == pytest.approx(pricer.price_batch([other_row])[0].duration_ns)


def test_sibling_groups_share_the_planes():
    """Two 5-member groups across the L1s, ready in one tick, are coloured together (they
    conflict on every L1): neither is faster than alone, and the batch is the direct program
    of both groups."""
    pricer = make_pricer(load_platform(FRED / "fred_d.yaml"), False)
    a = PriceRequest(int(CommType.ALL_REDUCE), 1 << 28, (0, 4, 8, 12, 16))
    b = PriceRequest(int(CommType.ALL_REDUCE), 1 << 28, (1, 5, 9, 13, 17))
    one = pricer.price_batch([a])[0].duration_ns
    two = pricer.price_batch([a, b])
    assert min(p.duration_ns for p in two) >= one * (1 - 1e-9)
    fabric = build_graph(load_platform(FRED / "fred_d.yaml").network)
    assert max(p.duration_ns for p in two) == pytest.approx(_direct_ns(fabric, [a.members, b.members], W.ALL_REDUCE, 1 << 28))


def test_wafer_tuner_needs_a_wafer():
    platform = Platform(network=NetworkSpec((DimSpec("Ring", 4, 100e9, 10.0),)), system=SystemSpec(collective_tuner="wafer"))
    with pytest.raises(ConfigError, match="needs a wafer fabric"):
        make_pricer(platform, False)


def test_compat_astra_runs_the_phases():
    platform = load_platform(FRED / "fred_d.yaml")
    assert make_pricer(platform, True) is None
    assert make_pricer(replace(platform, system=replace(platform.system, collective_tuner=None)), False) is None
