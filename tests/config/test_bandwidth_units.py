"""Bandwidths in a native platform file may carry their unit (issue 16: the DGX example wrote
200 Gb/s HDR as 25): a number is GB/s (1e9 B/s), a string names its unit, bits or bytes."""

from __future__ import annotations

import pytest

from trainsim.config.platform import parse_platform
from trainsim.errors import ConfigError


def _file(bandwidth, compat="default", memory=None):
    data = {"compat": compat, "network": {"dims": [{"topology": "Ring", "size": 4, "bandwidth_gbps": bandwidth, "latency_ns": 500}]}}
    if memory is not None:
        data["system"] = {"local_mem_bw_gbps": memory}
    return data


@pytest.mark.parametrize(
    ("given", "bytes_per_s"),
    [(25, 25e9), (25.5, 25.5e9), ("200 Gb/s", 25e9), ("25 GB/s", 25e9), ("1.6 TB/s", 1.6e12), ("400 Gbps", 50e9), ("800 MB/s", 0.8e9)],
)
def test_link_bandwidth_with_or_without_unit(given, bytes_per_s):
    plat = parse_platform(_file(given), "p.yaml")
    assert plat.network.dims[0].bandwidth == pytest.approx(bytes_per_s, rel=1e-12)


def test_memory_bandwidth_with_unit():
    plat = parse_platform(_file(25, memory="2.039 TB/s"), "p.yaml")
    assert plat.system.local_mem_bw == pytest.approx(2.039e12, rel=1e-12)


@pytest.mark.parametrize("bad", ["200 Gib/s", "fast", "200", "-5 GB/s", "nan GB/s"])
def test_bad_bandwidth_names_the_field(bad):
    with pytest.raises(ConfigError, match="bandwidth_gbps") as err:
        parse_platform(_file(bad), "p.yaml")
    assert "p.yaml" in str(err.value)


def test_units_are_refused_where_gbs_means_astra_sims():
    with pytest.raises(ConfigError, match="2\\*\\*30"):
        parse_platform(_file("25 GB/s", compat="astra"), "p.yaml")
    assert parse_platform(_file(25, compat="astra"), "p.yaml").network.dims[0].bandwidth == 25 * 2**30
