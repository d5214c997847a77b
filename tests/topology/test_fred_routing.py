"""Conflict-graph colouring of in-network trees over FRED's planes (topology/fred_routing.py)."""

from __future__ import annotations

from trainsim.topology.fred_routing import TreeRoute, colour_trees


def test_groups_sharing_an_l1_take_different_planes():
    # both groups span L1 0 and L1 1 (NPUs 0-3, 4-7): they conflict
    groups = [[0, 4], [1, 5]]
    routes = colour_trees(groups, ["dp", "dp"], per_l1=4, planes=2)
    assert routes == [TreeRoute(0, (0,)), TreeRoute(0, (1,))]


def test_one_plane_serializes_by_priority():
    groups = [[1, 5], [0, 4]]  # the data-parallel group is listed first
    routes = colour_trees(groups, ["dp", "tp"], per_l1=4, planes=1)
    assert routes[1] == TreeRoute(0, (0,))  # tensor parallel goes first
    assert routes[0] == TreeRoute(1, (0,))  # data parallel waits a round


def test_disjoint_groups_and_single_l1_groups():
    routes = colour_trees([[0, 4], [8, 12], [16, 17]], ["dp", "dp", "tp"], per_l1=4, planes=2)
    # no shared L1: both stripe over every plane; a group inside one L1 needs none
    assert routes == [TreeRoute(0, (0, 1)), TreeRoute(0, (0, 1)), TreeRoute(0, ())]


def test_lone_wafer_wide_group_stripes_all_planes():
    assert colour_trees([list(range(20))], ["dp"], per_l1=4, planes=4) == [TreeRoute(0, (0, 1, 2, 3))]
