"""The wafer's mesh (X-Y routes, edge I/O) and FRED's L1 / L2 fabric (topology/wafer.py)."""

from __future__ import annotations

import pytest

from trainsim.config.platform import load_platform
from trainsim.config.wafer import WaferParams
from trainsim.errors import ConfigError
from trainsim.topology.fabrics import build_graph
from trainsim.topology.wafer import paper_fred, paper_mesh, wafer_fabric


def _hops(g, route):
    return [(g.link_src[x], g.link_dst[x]) for x in route]


def test_mesh_routes_x_then_y():
    g = wafer_fabric(paper_mesh())
    # rank = y * 5 + x: (1, 0) -> (3, 2) goes east along row 0, then south down column 3
    assert _hops(g, g.route(1, 13)) == [(1, 2), (2, 3), (3, 8), (8, 13)]
    # and back: west along row 2 first, then north
    assert _hops(g, g.route(13, 1)) == [(13, 12), (12, 11), (11, 6), (6, 1)]
    assert g.route(7, 7) == ()
    assert all(g.bandwidth[x] == 750e9 for x in g.route(0, 19))


def test_mesh_io_controllers_on_the_edge():
    g = wafer_fabric(paper_mesh())
    assert len(g.io) == 18
    interior = {6, 7, 8, 11, 12, 13}
    assert not interior & set(g.io_attach)
    # each corner NPU holds two controllers, the other edge NPUs one
    assert sorted(g.io_attach.count(c) for c in (0, 4, 15, 19)) == [2, 2, 2, 2]
    io = g.io[0]
    assert _hops(g, g.route(io, 12)) == [(io, 0), (0, 1), (1, 2), (2, 7), (7, 12)]
    assert g.bandwidth[g.link(io, 0)] == 128e9


def test_fred_routes_through_l1_and_own_plane():
    g = wafer_fabric(paper_fred("A"))
    l1, pl = g.l1, g.plane
    assert _hops(g, g.route(0, 3)) == [(0, l1[0]), (l1[0], 3)]
    # NPU 6 is index 2 under L1 1: it rises through plane 2
    assert _hops(g, g.route(6, 17)) == [(6, l1[1]), (l1[1], pl[2]), (pl[2], l1[4]), (l1[4], 17)]
    up = g.link(l1[1], pl[2])
    assert g.bandwidth[up] == pytest.approx(375e9)  # 4 NPUs x 375 GB/s over 4 planes
    assert wafer_fabric(paper_fred("C")).bandwidth[up] == pytest.approx(3e12)


def test_fred_tree_links():
    g = wafer_fabric(paper_fred("D"))
    inside = g.tree_links([0, 1, 2, 3])
    assert len(inside) == 8  # up and down per member, no plane
    wide = g.tree_links(list(range(20)), (1,))
    assert len(wide) == 40 + 10 and all(g.link_dst[x] == g.plane[1] or g.link_src[x] == g.plane[1] for x in wide[40:])
    with pytest.raises(ConfigError, match="FRED"):
        wafer_fabric(paper_mesh()).tree_links([0, 1])


def test_bad_wafer_is_a_config_error():
    with pytest.raises(ConfigError, match="multiple of cols"):
        wafer_fabric(WaferParams("mesh", npus=21, cols=5))
    with pytest.raises(ConfigError, match="no switches"):
        wafer_fabric(WaferParams("mesh", in_network=True))


@pytest.mark.parametrize("name", ["mesh", "fred_a", "fred_b", "fred_c", "fred_d"])
def test_shipped_platforms_build(name):
    platform = load_platform(f"examples/fred/{name}.yaml")
    graph = build_graph(platform.network)
    assert graph.npus == 20 and len(graph.io) == 18
    assert graph.params.in_network == (name in ("fred_b", "fred_d"))


def test_platform_wafer_section_checked(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text(
        "network:\n  dims: [{topology: Mesh, size: 5, bandwidth_gbps: 1, latency_ns: 1}, {topology: Mesh, size: 4, bandwidth_gbps: 1, latency_ns: 1}]\n"
        "  fabric: {kind: wafer, wafer: {kind: mesh, cols: 3, npu_link_gbps: 750}}\n"
    )
    with pytest.raises(ConfigError, match="multiple of cols"):
        load_platform(bad)
    bad.write_text(bad.read_text().replace("cols: 3", "cols: 5, colour: red"))
    with pytest.raises(ConfigError, match="colour"):
        load_platform(bad)
