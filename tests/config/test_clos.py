"""A clos fabric's tiers: the dims derived from them (config/clos.py) and one-line errors."""

import pytest

from trainsim.config.platform import load_platform, parse_platform, platform_to_dict
from trainsim.errors import ConfigError


def _doc(tiers, **network):
    return {"network": {"fabric": {"kind": "clos", "tiers": tiers}, **network}, "system": {"all_reduce": ["ring"]}}


TIERS = [
    {"name": "node", "size": 8, "bandwidth_gbps": 450, "latency_ns": 700},
    {"name": "leaf", "size": 16, "bandwidth_gbps": "400 Gb/s", "latency_ns": 1000, "rail": True},
    {"name": "spine", "size": 4, "latency_ns": 600, "oversubscription": 2, "switches": 4},
    {"name": "core", "size": 2, "latency_ns": 400, "oversubscription": 1.5},
]


def test_dims_follow_the_derivation():
    dims = parse_platform(_doc(TIERS), "<t>").network.dims
    assert [d.kind for d in dims] == ["Switch"] * 4
    assert [d.size for d in dims] == [8, 16, 4, 2]
    # bandwidth_i = b_i / (o_1 ... o_i); b inherits upwards from the NIC tier
    assert [d.bandwidth for d in dims] == pytest.approx([450e9, 50e9, 25e9, 50e9 / 3])
    # latency_0 = l_0; latency_i = l_1 + ... + l_i
    assert [d.latency_ns for d in dims] == [700.0, 1000.0, 1600.0, 2000.0]


def test_round_trip_and_the_example():
    p = parse_platform(_doc(TIERS), "<t>")
    assert parse_platform(platform_to_dict(p), "<t>") == p
    example = load_platform("examples/clos_h100/platform.yaml")
    assert example.network.npus == 2048
    assert [d.bandwidth / 1e9 for d in example.network.dims] == [450, 50, 50, 25]


def test_explicit_dims_must_count_the_same_npus():
    dims = [{"topology": "Switch", "size": 8, "bandwidth_gbps": 450, "latency_ns": 700},
            {"topology": "Switch", "size": 128, "bandwidth_gbps": 50, "latency_ns": 2000}]
    assert parse_platform(_doc(TIERS, dims=dims), "<t>").network.npus == 1024
    with pytest.raises(ConfigError, match=r"network: fabric\.tiers: sizes 8 x 16 x 4 x 2 = 1,024 NPUs but the dims have 512") as err:
        parse_platform(_doc(TIERS, dims=[dims[0], {**dims[1], "size": 64}]), "<t>")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        ({2: {"oversubscription": 0}}, r"network\.fabric\.tiers\[2\]\.oversubscription: got 0; .*greater than 0"),
        ({2: {"oversubscription": -1.5}}, r"network\.fabric\.tiers\[2\]\.oversubscription: got -1\.5"),
        ({1: {"radix": 64}}, r"network\.fabric\.tiers\[1\]\.radix: unknown key 'radix'; expected one of name, size"),
        ({0: {"size": 1}}, r"network\.fabric\.tiers\[0\]\.size: got 1; .*greater than or equal to 2"),
        ({1: {"bandwidth_gbps": None}}, r"network\.fabric: tiers\[1\] \(leaf\)\.bandwidth_gbps: missing"),
        ({0: {"oversubscription": 2}}, r"tiers\[0\] \(node\)\.oversubscription: got 2\.0; tier 0 has no tier below"),
        ({2: {"rail": True}}, r"tiers\[2\] \(spine\)\.rail: only tier 1"),
        ({1: {"switches": 2}}, r"tiers\[1\] \(leaf\)\.switches: got 2; only tiers 2 and up"),
    ],
)
def test_bad_tiers_are_one_line_errors_naming_the_field(change, pattern):
    tiers = [dict(t) for t in TIERS]
    for i, fields in change.items():
        tiers[i].update(fields)
        tiers[i] = {k: v for k, v in tiers[i].items() if v is not None}
    with pytest.raises(ConfigError, match=pattern) as err:
        parse_platform(_doc(tiers), "<t>")
    assert "\n" not in str(err.value)


def test_fabric_section_mistakes():
    with pytest.raises(ConfigError, match=r"network\.fabric: kind clos needs tiers"):
        parse_platform({"network": {"fabric": {"kind": "clos"}}}, "<t>")
    with pytest.raises(ConfigError, match=r"network: dims: missing; expected a list of dimensions \(or a fabric of kind clos"):
        parse_platform({"network": {}}, "<t>")
    with pytest.raises(ConfigError, match=r"network\.fabric: kind clos takes its sizes.*; got oversubscription, spines \(expected only kind and tiers\)"):
        parse_platform({"network": {"fabric": {"kind": "clos", "tiers": TIERS, "spines": 4, "oversubscription": 2}}}, "<t>")
    with pytest.raises(ConfigError, match=r"tiers: 1 given; expected at least 2"):
        parse_platform(_doc(TIERS[:1]), "<t>")
