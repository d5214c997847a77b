"""A k-tier Clos fabric (topology/clos.py): its links carry the derivation's per-NPU
bandwidths, routes go up to the lowest common tier, and a data-parallel all-reduce across the
oversubscribed tier slows by the ratio config/clos.py derives, on the dims and on the links."""

import pytest

from trainsim.config.platform import parse_platform
from trainsim.system.api import simulate
from trainsim.topology.fabrics import build_graph
from trainsim.workload.micro import collective_workload


def _platform(top_oversubscription=1.0, *, rail=False, latency_ns=0.0, spines=2):
    tiers = [
        {"name": "node", "size": 2, "bandwidth_gbps": 400, "latency_ns": latency_ns},
        {"name": "leaf", "size": 2, "bandwidth_gbps": 50, "latency_ns": latency_ns, "rail": rail},
        {"name": "spine", "size": 2, "latency_ns": latency_ns, "switches": spines},
        {"name": "core", "size": 2, "latency_ns": latency_ns, "oversubscription": top_oversubscription},
    ]
    return parse_platform({"network": {"fabric": {"kind": "clos", "tiers": tiers}}, "system": {"all_reduce": ["ring"]}}, "<t>")


def test_routes_climb_to_the_lowest_common_tier():
    g = build_graph(_platform(2.0).network)
    assert g.npus == 16
    hops = {dst: len(g.route(0, dst)) for dst in (1, 2, 4, 8)}
    assert hops == {1: 2, 2: 2, 4: 4, 8: 6}  # node, leaf, spine, core
    # each NPU's share of a tier's uplinks is the derived per-NPU bandwidth
    dims = _platform(2.0).network.dims
    for dst, dim in ((2, 1), (4, 2), (8, 3)):
        route = g.route(0, dst)
        up = route[len(route) // 2 - 1]  # the link into the top switch
        under = 2 ** dim  # NPUs under the switch the link leaves (one switch per unit below tier 2)
        ways = 2 if dim >= 2 else 1  # parallel switches of the tier above it
        per_npu = g.bandwidth[up] * ways / (under if dim >= 2 else 1)
        assert per_npu == pytest.approx(dims[dim].bandwidth), dim


def test_rail_optimized_leaves_cross_the_nvswitch_first():
    g = build_graph(_platform(rail=True).network)
    route = g.route(0, 3)  # GPU 0 of node 0 to GPU 1 of node 1: via GPU 1 of node 0, rail 1
    ends = [(g.link_src[link], g.link_dst[link]) for link in route]
    assert ends[0][0] == 0 and ends[1][1] == 1 and ends[-1][1] == 3
    assert len({g.link_dst[link] for link in route[2:3]}) == 1


@pytest.mark.parametrize("backend", ["congestion_unaware", "flow"])
def test_all_reduce_across_the_tapered_tier_slows_by_the_derived_ratio(backend):
    across_top = (False, False, False, True)  # the data-parallel group: one NPU per pod
    size = 64 << 20

    def time_s(oversubscription):
        # one spine per pod: no ECMP collisions, which the dims do not model
        p = _platform(oversubscription, spines=1)
        return simulate(p, collective_workload(16, "all_reduce", size, involved_dim=across_top), backend=backend).makespan_s

    base = time_s(1.0)
    # the derivation: per-NPU bandwidth across tier 3 is b / (o_1 o_2 o_3) = 50 GB/s / o_3, and
    # a 2-member ring all-reduce sends 2 (n - 1) / n x size = size per NPU, so the wire time
    # scales by o_3; what does not scale (the endpoint's delay, the local reduction) cancels
    wire = size / 50e9
    assert time_s(2.0) - base == pytest.approx(wire, rel=1e-3)
    assert time_s(4.0) - base == pytest.approx(3 * wire, rel=1e-3)
    assert base == pytest.approx(wire, rel=0.05)
    assert time_s(2.0) / base == pytest.approx(2.0, rel=0.03)


def test_ecmp_collisions_only_slow_the_links_down():
    """With parallel spines the flow backend's time is the dims' or more (hash collisions share
    a link), never less: the dims are the fabric's best case."""
    across_top = (False, False, False, True)
    for spines in (1, 2):
        p = _platform(2.0, spines=spines)
        work = collective_workload(16, "all_reduce", 16 << 20, involved_dim=across_top)
        dims = simulate(p, work, backend="congestion_unaware").makespan_s
        links = simulate(p, work, backend="flow").makespan_s
        assert links >= dims * (1 - 1e-9)
        if spines == 1:
            assert links == pytest.approx(dims, rel=1e-3)
