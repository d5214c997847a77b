"""The native platform YAML: loading, the GB/s convention, equivalence with ASTRA-sim's files,
dump/load round trips, the JSON Schema and ``trainsim schema``."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.helpers.reference_data import RESULTS

from trainsim.cli.main import main
from trainsim.config.astra import load_astra_platform
from trainsim.config.platform import dump_platform, load_platform, platform_json_schema
from trainsim.config.types import DimSpec, NetworkSpec, Platform, RemoteMemorySpec, SystemSpec
from trainsim.errors import ConfigError

NATIVE = """\
network:
  dims:
    - {topology: Ring, size: 8, bandwidth_gbps: 50, latency_ns: 500}
    - {topology: Switch, size: 4, bandwidth_gbps: 12.5, latency_ns: 1000}
system:
  scheduling_policy: LIFO
  endpoint_delay_ns: 10
  active_chunks_per_dimension: 2
  preferred_dataset_splits: 4
  collective_optimization: localBWAware
  local_mem_bw_gbps: 1600
  all_reduce: [ring, direct]
  all_gather: [ring]
  reduce_scatter: [halvingDoubling, ring]
  all_to_all: [direct8]
  roofline_enabled: true
  peak_perf_tflops: 900
  boost_mode: false
memory: {mode: per_node, latency_ns: 100, bandwidth_gbps: 25.6, nodes: 4, npus_per_node: 8}
comm_groups: {"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]}
compat: COMPAT
"""

ASTRA_NETWORK = """\
topology: [ Ring, Switch ]
npus_count: [ 8, 4 ]
bandwidth: [ 50.0, 12.5 ]
latency: [ 500.0, 1000.0 ]
"""
ASTRA_SYSTEM = {
    "scheduling-policy": "LIFO",
    "endpoint-delay": 10,
    "active-chunks-per-dimension": 2,
    "preferred-dataset-splits": 4,
    "collective-optimization": "localBWAware",
    "local-mem-bw": 1600,
    "all-reduce-implementation": ["ring", "direct"],
    "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["halvingDoubling", "ring"],
    "all-to-all-implementation": ["direct8"],
    "roofline-enabled": 1,
    "peak-perf": 900,
    "boost-mode": 0,
}
ASTRA_MEMORY = {
    "memory-type": "PER_NODE_MEMORY_EXPANSION",
    "remote-mem-latency": 100,
    "remote-mem-bw": 25.6,
    "num-nodes": 4,
    "num-npus-per-node": 8,
}
ASTRA_GROUPS = {"1": [0, 1, 2, 3], "2": [4, 5, 6, 7]}


def _native(tmp_path: Path, compat: str) -> Platform:
    path = tmp_path / f"platform_{compat}.yaml"
    path.write_text(NATIVE.replace("COMPAT", compat))
    return load_platform(path)


def _astra(tmp_path: Path) -> Platform:
    files = {
        "n.yml": ASTRA_NETWORK,
        "s.json": json.dumps(ASTRA_SYSTEM),
        "m.json": json.dumps(ASTRA_MEMORY),
        "g.json": json.dumps(ASTRA_GROUPS),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return load_astra_platform(*(tmp_path / name for name in files))


def test_native_and_astra_files_give_equal_platforms_under_compat_astra(tmp_path):
    assert _native(tmp_path, "astra") == _astra(tmp_path)


def test_native_default_compat_differs_only_by_the_gbs_convention(tmp_path):
    native, astra = _native(tmp_path, "default"), _astra(tmp_path)
    for ours, theirs in zip(native.network.dims, astra.network.dims, strict=True):
        assert ours.bandwidth * 2**30 == theirs.bandwidth * 1e9
    same_units = dataclasses.replace(
        native,
        network=astra.network,
        compat="astra",
    )
    assert same_units == astra


def test_units_of_the_native_file(tmp_path):
    p = _native(tmp_path, "default")
    assert p.network.dims[0] == DimSpec("Ring", 8, 50e9, 500.0)
    assert p.system.local_mem_bw == 1600e9 and p.system.peak_perf == 900e12
    assert p.memory == RemoteMemorySpec("PER_NODE_MEMORY_EXPANSION", 100.0, 25.6e9, 8, 4)
    assert p.comm_groups == {"1": (0, 1, 2, 3), "2": (4, 5, 6, 7)}
    assert p.network.source == str(tmp_path / "platform_default.yaml")


def test_minimal_native_file_takes_the_documented_defaults(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(
        "network:\n  dims: [{topology: FullyConnected, size: 4, bandwidth_gbps: 1, latency_ns: 0}]\n"
    )
    p = load_platform(path)
    assert p.system == SystemSpec() and p.memory == RemoteMemorySpec()
    assert p.compat == "default" and p.comm_groups == {}


def test_integer_group_ids_are_accepted_in_yaml(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text(
        "network:\n  dims: [{topology: Ring, size: 4, bandwidth_gbps: 1, latency_ns: 1}]\n"
        "comm_groups:\n  1: [0, 1]\n  2: [3, 2]\n"
    )
    assert load_platform(path).comm_groups == {"1": (0, 1), "2": (3, 2)}


def _round_trip(tmp_path: Path, platform: Platform) -> Platform:
    path = tmp_path / "dumped.yaml"
    path.write_text(dump_platform(platform))
    return load_platform(path)


def test_dump_then_load_gives_the_same_platform(tmp_path):
    for compat in ("astra", "default"):
        p = _native(tmp_path, compat)
        assert _round_trip(tmp_path, p) == p
    astra = _astra(tmp_path)
    assert _round_trip(tmp_path, astra) == astra


def test_every_reference_astra_config_round_trips_through_the_native_file(tmp_path):
    cases = json.loads((RESULTS / "cases.json").read_text())
    for combo in sorted({(c["network"], c["system"], c["memory"]) for c in cases}):
        p = load_astra_platform(*(RESULTS / f for f in combo))
        assert _round_trip(tmp_path, p) == p


def test_dump_is_readable_yaml_with_units_in_names(tmp_path):
    text = dump_platform(_native(tmp_path, "default"))
    assert text.startswith("# trainsim platform")
    data = yaml.safe_load(text)
    assert data["network"]["dims"][0] == {
        "topology": "Ring",
        "size": 8,
        "bandwidth_gbps": 50.0,
        "latency_ns": 500.0,
    }
    assert data["memory"]["mode"] == "per_node" and data["compat"] == "default"


finite = {"allow_nan": False, "allow_infinity": False}
bandwidths = st.floats(min_value=1e-3, max_value=1e6, **finite)
latencies = st.floats(min_value=0, max_value=1e7, **finite)
impl_names = st.sampled_from(
    ["ring", "direct", "direct4", "halvingDoubling", "oneRing", "doubleBinaryTree"]
)


@st.composite
def native_files(draw):
    ndims = draw(st.integers(1, 3))
    dims = [
        {
            "topology": draw(st.sampled_from(["Ring", "FullyConnected", "Switch"])),
            "size": draw(st.integers(2, 8)),
            "bandwidth_gbps": draw(bandwidths),
            "latency_ns": draw(latencies),
        }
        for _ in range(ndims)
    ]
    npus = math.prod(d["size"] for d in dims)
    per_node = draw(st.integers(1, 4))
    system = {
        "endpoint_delay_ns": draw(latencies),
        "local_mem_bw_gbps": draw(bandwidths),
        "peak_perf_tflops": draw(st.floats(min_value=1e-3, max_value=1e4, **finite)),
        "roofline_enabled": draw(st.booleans()),
        "preferred_dataset_splits": draw(st.integers(1, 64)),
        "broadcast": draw(st.sampled_from(["replay", "simulate"])),
        **{c: draw(st.lists(impl_names, max_size=ndims)) for c in ("all_reduce", "all_to_all")},
    }
    memory = {
        "mode": draw(st.sampled_from(["none", "per_npu", "per_node", "pool"])),
        "bandwidth_gbps": draw(bandwidths),
        "latency_ns": draw(latencies),
        "npus_per_node": per_node,
        "nodes": -(-npus // per_node),
    }
    members = st.lists(st.integers(0, npus - 1), min_size=1, max_size=npus, unique=True)
    groups = draw(st.dictionaries(st.integers(0, 99).map(str), members, max_size=3))
    compat = draw(st.sampled_from(["default", "astra"]))
    return {
        "compat": compat,
        "network": {"dims": dims},
        "system": system,
        "memory": memory,
        "comm_groups": groups,
    }


@settings(max_examples=60, deadline=None)
@given(native_files())
def test_any_loaded_platform_round_trips_exactly(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("rt")
    path = tmp / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    p = load_platform(path)
    assert _round_trip(tmp, p) == p


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1.0, max_value=1e15, **finite), min_size=1, max_size=3))
def test_any_bandwidth_round_trips_within_an_ulp(tmp_path_factory, bws):
    """A bandwidth that no file produced (an optimizer's) may come back 1 ulp away: the file
    says GB/s and not every float in B/s is a float in GB/s times 1e9."""
    dims = tuple(DimSpec("Ring", 2, bw, 1.0) for bw in bws)
    p = Platform(NetworkSpec(dims))
    back = _round_trip(tmp_path_factory.mktemp("ulp"), p)
    for ours, theirs in zip(back.network.dims, dims, strict=True):
        assert abs(ours.bandwidth - theirs.bandwidth) <= math.ulp(theirs.bandwidth)


def test_json_schema_describes_the_file():
    schema = platform_json_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    assert schema["required"] == ["network"]
    assert set(schema["properties"]) == {"compat", "network", "system", "memory", "comm_groups", "endpoint", "backends", "devices"}
    endpoint = schema["properties"]["endpoint"]["anyOf"][0]["oneOf"]
    assert {"$ref": "#/$defs/AstraEndpointConfig"} in endpoint
    astra = schema["$defs"]["AstraEndpointConfig"]
    assert astra["additionalProperties"] is False and astra["properties"]["model"]["const"] == "astra"
    assert schema["additionalProperties"] is False
    dim = schema["$defs"]["DimModel"]
    assert dim["additionalProperties"] is False
    assert dim["properties"]["size"]["minimum"] == 2
    assert dim["properties"]["topology"]["enum"] == ["Ring", "FullyConnected", "Switch", "Mesh"]
    assert "bandwidth_gbps" in dim["required"]
    json.dumps(schema)


def test_schema_command_prints_the_schema(capsys, tmp_path):
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == platform_json_schema()
    out = tmp_path / "platform.schema.json"
    assert main(["schema", "--out", str(out)]) == 0
    assert json.loads(out.read_text()) == platform_json_schema()


def test_fabrics_in_the_native_file(tmp_path):
    from trainsim.config.platform import dump_platform, load_platform

    (tmp_path / "g.txt").write_text("0 2 100 5\n1 2 100 5\n")
    path = tmp_path / "p.yaml"
    path.write_text(
        "network:\n  dims: [{topology: Switch, size: 2, bandwidth_gbps: 100, latency_ns: 5}]\n"
        "  fabric: {kind: graph, file: g.txt}\n"
    )
    plat = load_platform(path)
    assert plat.network.fabric.file == str(tmp_path / "g.txt")
    path.write_text(
        "network:\n  dims: [{topology: Switch, size: 8, bandwidth_gbps: 100, latency_ns: 5}]\n"
        "  fabric: {kind: leaf_spine, hosts_per_leaf: 4, spines: 2, oversubscription: 2, bandwidth_gbps: 100}\n"
    )
    plat = load_platform(path)
    assert plat.network.fabric.oversubscription == 2
    again = tmp_path / "again.yaml"
    again.write_text(dump_platform(plat))
    assert load_platform(again) == plat
    path.write_text("network:\n  dims: [{topology: Switch, size: 8, bandwidth_gbps: 1, latency_ns: 5}]\n  fabric: {kind: leaf_spine}\n")
    with pytest.raises(ConfigError, match="leaf_spine needs hosts_per_leaf"):
        load_platform(path)


def test_broadcast_knob_loads_dumps_and_rejects_unknown_values(tmp_path):
    base = "network:\n  dims: [{topology: Ring, size: 4, bandwidth_gbps: 1, latency_ns: 1}]\n"
    path = tmp_path / "p.yaml"
    path.write_text(base)
    assert load_platform(path).system.broadcast == "replay"  # ASTRA-sim's way by default
    path.write_text(base + "system: {broadcast: simulate}\n")
    p = load_platform(path)
    assert p.system.broadcast == "simulate"
    assert "broadcast: simulate" in dump_platform(p)
    assert _round_trip(tmp_path, p) == p
    path.write_text(base + "system: {broadcast: tree}\n")
    with pytest.raises(ConfigError, match="broadcast"):
        load_platform(path)
