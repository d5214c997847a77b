"""LIBRA's cost model: building blocks counted over the whole system, linear in bandwidth."""

import numpy as np
import pytest

from tests.optimize.conftest import libra_path
from trainsim.errors import ConfigError
from trainsim.optimize.cost import building_blocks, cost_coefficients
from trainsim.optimize.libra_inputs import LibraNetwork, load_cost_model, load_network


def test_3d_blocks_as_libra_counts_them():
    net = load_network(libra_path("network", "3d_network.yml"))
    blocks = building_blocks(net, load_cost_model(libra_path("cost_model", "3d_cost_model.yml")))
    ring, fc, switch = blocks
    assert (ring.blocks, ring.links_per_block, ring.link_share) == (4096 // 16, 32, 0.5)
    assert (fc.blocks, fc.links_per_block, fc.link_share) == (4096 // 8, 56, pytest.approx(1 / 7))
    assert (switch.blocks, switch.links_per_block, switch.link_share) == (1, 4096, 1.0)
    assert switch.components == ("Link", "Nic", "Switch")
    assert switch.unit_price == pytest.approx(7.80003 + 31.60003 + 18.00003)


def test_every_block_kind_costs_npus_times_price():
    net = load_network(libra_path("network", "4d_network.yml"))
    prices = load_cost_model(libra_path("cost_model", "4d_cost_model.yml"))
    want = 4096 * np.array([2.00001, 4.00002, 4.00003, 7.80004 + 18.00004 + 31.60004])
    np.testing.assert_allclose(cost_coefficients(net, prices), want)


def test_switch_below_the_top_counts_one_switch_per_upper_group():
    net = LibraNetwork(("Switch", "Ring"), (8, 4), ("A", "B"))
    prices = {"A": {"Link": 1.0, "Nic": 1.0, "Switch": 1.0}, "B": {"Link": 2.0}}
    sw, ring = building_blocks(net, prices)
    assert (sw.blocks, sw.links_per_block) == (4, 8)
    np.testing.assert_allclose(cost_coefficients(net, prices), [32 * 3.0, 32 * 2.0])


def test_missing_prices_are_named(tmp_path):
    net = LibraNetwork(("Ring", "Switch"), (4, 8), ("A", "B"))
    with pytest.raises(ConfigError, match="Nic, Switch"):
        building_blocks(net, {"A": {"Link": 1.0}, "B": {"Link": 1.0}})
    with pytest.raises(ConfigError, match="'B'"):
        building_blocks(net, {"A": {"Link": 1.0}})
    with pytest.raises(ConfigError, match="cannot be priced"):
        building_blocks(LibraNetwork(("Ring",), (4,)), {})
    bad = tmp_path / "c.yml"
    bad.write_text("A:\n  Link: -1\n")
    with pytest.raises(ConfigError, match=r"A\.Link"):
        load_cost_model(bad)
