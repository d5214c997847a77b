"""A table of bad inputs across the five file kinds: each one is a ConfigError whose message
names the file, the dotted field and the offending value."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainsim.config.astra import (
    load_astra_memory,
    load_astra_network,
    load_astra_platform,
    load_astra_system,
    load_comm_groups,
)
from trainsim.config.platform import load_platform
from trainsim.errors import ConfigError

RING8 = "topology: [Ring]\nnpus_count: [8]\nbandwidth: [50]\nlatency: [500]\n"
SYSTEM = '{"endpoint-delay": 10, "all-reduce-implementation": ["ring"]}'
NATIVE_DIMS = (
    "network:\n  dims:\n    - {topology: Ring, size: 8, bandwidth_gbps: 50, latency_ns: 500}\n"
)


def _network(p: Path):
    return load_astra_network(p)


def _groups(p: Path):
    return load_comm_groups(p, npus=8)


LOADERS = {
    "yml": _network,
    "sys.json": load_astra_system,
    "mem.json": load_astra_memory,
    "groups.json": _groups,
    "platform.yaml": load_platform,
}

# (case id, file kind, file text, field named, value text named)
CASES = [
    ("net-unknown-key", "yml", RING8 + "link_speed: [1]\n", "link_speed", "link_speed"),
    ("net-wrong-type", "yml", RING8.replace("[8]", "[8.0]"), "npus_count[0]", "8.0"),
    ("net-string-count", "yml", RING8.replace("[8]", "['8']"), "npus_count[0]", "'8'"),
    ("net-lengths", "yml", RING8.replace("[50]", "[50, 50]"), "bandwidth", "[50, 50]"),
    (
        "net-size-1",
        "yml",
        "topology: [Ring, Switch]\nnpus_count: [8, 1]\nbandwidth: [50, 50]\nlatency: [5, 5]\n",
        "npus_count[1]",
        "1",
    ),
    ("net-zero-bandwidth", "yml", RING8.replace("[50]", "[0]"), "bandwidth[0]", "0"),
    ("net-negative-latency", "yml", RING8.replace("[500]", "[-1]"), "latency[0]", "-1"),
    ("net-topology-name", "yml", RING8.replace("[Ring]", "[Torus]"), "topology[0]", "'Torus'"),
    ("net-topology-case", "yml", RING8.replace("[Ring]", "[ring]"), "topology[0]", "'ring'"),
    ("net-empty-list", "yml", RING8.replace("[Ring]", "[]"), "topology", "[]"),
    ("net-scalar", "yml", RING8.replace("[Ring]", "Ring"), "topology", "'Ring'"),
    ("net-missing-key", "yml", RING8.replace("latency: [500]\n", ""), "latency", "missing"),
    ("net-duplicate-key", "yml", RING8 + "latency: [5]\n", None, "duplicate key 'latency'"),
    ("net-syntax", "yml", "topology: [Ring\nnpus_count: [8]\n", None, "line 2"),
    (
        "net-libra",
        "yml",
        "Topology: [Ring]\nNpusCount: [8]\nCostDimension: [InterNode]\n",
        "Topology",
        "'Topology'",
    ),
    ("sys-unknown-key", "sys.json", '{"endpoint_delay": 10}', "endpoint_delay", "endpoint_delay"),
    (
        "sys-impl-name",
        "sys.json",
        '{"all-reduce-implementation": ["ring", "rign"]}',
        "all-reduce-implementation[1]",
        "'rign'",
    ),
    (
        "sys-impl-window",
        "sys.json",
        '{"all-gather-implementation": ["directX"]}',
        "all-gather-implementation[0]",
        "'directX'",
    ),
    (
        "sys-impl-empty",
        "sys.json",
        '{"all-to-all-implementation": []}',
        "all-to-all-implementation",
        "[]",
    ),
    (
        "sys-wrong-type",
        "sys.json",
        '{"preferred-dataset-splits": "4"}',
        "preferred-dataset-splits",
        "'4'",
    ),
    ("sys-bool-flag", "sys.json", '{"roofline-enabled": false}', "roofline-enabled", "False"),
    (
        "sys-choice-case",
        "sys.json",
        '{"collective-optimization": "LocalBWAware"}',
        "collective-optimization",
        "'LocalBWAware'",
    ),
    ("sys-zero-chunks", "sys.json", '{"active-chunks-per-dimension": 0}', "active-chunks", "0"),
    ("sys-negative-delay", "sys.json", '{"endpoint-delay": -5}', "endpoint-delay", "-5"),
    ("sys-roofline-peak", "sys.json", '{"roofline-enabled": 1}', "peak-perf", "roofline-enabled"),
    (
        "sys-custom-two",
        "sys.json",
        '{"all-reduce-implementation-custom": ["a.et", "b.et"]}',
        "all-reduce-implementation-custom",
        "'a.et'",
    ),
    ("sys-syntax", "sys.json", '{\n  "endpoint-delay": 10,\n}', None, "line 3"),
    (
        "sys-duplicate",
        "sys.json",
        '{"endpoint-delay": 10, "endpoint-delay": 5}',
        "endpoint-delay",
        "duplicate",
    ),
    ("sys-not-object", "sys.json", '["ring"]', None, "a list"),
    ("sys-nan", "sys.json", '{"local-mem-bw": NaN}', None, "NaN"),
    ("mem-type", "mem.json", '{"memory-type": "PER_GPU"}', "memory-type", "'PER_GPU'"),
    ("mem-missing-type", "mem.json", "{}", "memory-type", "missing"),
    (
        "mem-unknown-key",
        "mem.json",
        '{"memory-type": "MEMORY_POOL", "remote-mem-bandwidth": 5}',
        "remote-mem-bandwidth",
        "remote-mem-bandwidth",
    ),
    (
        "mem-per-node-count",
        "mem.json",
        '{"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-bw": 25, "num-nodes": 2}',
        "num-npus-per-node",
        "missing",
    ),
    (
        "mem-bw-below-1",
        "mem.json",
        '{"memory-type": "MEMORY_POOL", "remote-mem-bw": 0.5}',
        "remote-mem-bw",
        "0.5",
    ),
    ("grp-range", "groups.json", '{"1": [0, 8]}', "1[1]", "8"),
    ("grp-repeat", "groups.json", '{"1": [3, 3]}', "1[1]", "3"),
    ("grp-id", "groups.json", '{"a": [0, 1]}', "a", "'a'"),
    ("grp-negative-id", "groups.json", '{"-1": [0, 1]}', "-1", "'-1'"),
    ("grp-same-id", "groups.json", '{"1": [0], "01": [1]}', "01", "'01'"),
    ("grp-member-type", "groups.json", '{"1": ["0"]}', "1[0]", "'0'"),
    ("grp-empty", "groups.json", '{"1": []}', "1", "[]"),
    (
        "native-unknown-key",
        "platform.yaml",
        NATIVE_DIMS.replace("latency_ns: 500}", "latency_ns: 500, speed: 3}"),
        "network.dims[0].speed",
        "'speed'",
    ),
    (
        "native-strict-type",
        "platform.yaml",
        NATIVE_DIMS.replace("bandwidth_gbps: 50", "bandwidth_gbps: '50'"),
        "network.dims[0].bandwidth_gbps",
        "'50'",
    ),
    (
        "native-size-1",
        "platform.yaml",
        NATIVE_DIMS.replace("size: 8", "size: 1"),
        "network.dims[0].size",
        "1",
    ),
    (
        "native-no-network",
        "platform.yaml",
        "system: {endpoint_delay_ns: 10}\n",
        "network",
        "missing",
    ),
    (
        "native-impl-name",
        "platform.yaml",
        NATIVE_DIMS + "system: {all_reduce: [rign]}\n",
        "system.all_reduce[0]",
        "'rign'",
    ),
    (
        "native-impl-too-long",
        "platform.yaml",
        NATIVE_DIMS + "system: {all_reduce: [ring, direct]}\n",
        "system.all_reduce",
        "['ring', 'direct']",
    ),
    (
        "native-group-range",
        "platform.yaml",
        NATIVE_DIMS + "comm_groups: {1: [0, 9]}\n",
        "comm_groups.1[1]",
        "9",
    ),
    (
        "native-memory-nodes",
        "platform.yaml",
        NATIVE_DIMS + "memory: {mode: per_node, bandwidth_gbps: 25, nodes: 1, npus_per_node: 4}\n",
        "memory.nodes",
        "1",
    ),
    (
        "native-memory-mode",
        "platform.yaml",
        NATIVE_DIMS + "memory: {mode: pooled}\n",
        "memory.mode",
        "'pooled'",
    ),
    (
        "native-bool-as-int",
        "platform.yaml",
        NATIVE_DIMS + "system: {boost_mode: 0}\n",
        "system.boost_mode",
        "0",
    ),
    ("native-compat", "platform.yaml", NATIVE_DIMS + "compat: ASTRA\n", "compat", "'ASTRA'"),
    (
        "native-duplicate",
        "platform.yaml",
        NATIVE_DIMS + "compat: astra\ncompat: default\n",
        None,
        "line 5",
    ),
    ("native-empty", "platform.yaml", "", None, "empty"),
]


@pytest.mark.parametrize(
    ("kind", "text", "field", "value"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_names_file_field_and_value(tmp_path, kind, text, field, value):
    path = tmp_path / f"bad.{kind}"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        LOADERS[kind](path)
    message = str(info.value)
    assert str(path) in message
    assert info.value.file == str(path)
    if field is not None:
        assert field in message
        assert info.value.field is not None and field in info.value.field
    assert value in message or value in (info.value.hint or "")
    assert "\n" not in message


def test_table_covers_every_file_kind_with_at_least_15_cases():
    assert len(CASES) >= 15
    assert {c[1] for c in CASES} == set(LOADERS)


@pytest.mark.parametrize(
    ("loader", "text", "says"),
    [
        (load_astra_network, "Topology: [Ring]\nNpusCount: [8]\nCostDimension: [X]\n", "LIBRA"),
        (load_astra_system, '{"endpoint_delay": 10}', "did you mean 'endpoint-delay'"),
        (load_astra_system, '{"trace-enabled": true}', "write 0 or 1"),
        (load_astra_network, RING8.replace("[Ring]", "[ring]"), "did you mean 'Ring'"),
        (load_platform, NATIVE_DIMS.replace("latency_ns", "latncy_ns"), "latncy_ns'; expected one of topology, size, bandwidth_gbps, latency_ns (did you mean 'latency_ns'?)"),
        (load_platform, NATIVE_DIMS + "system: {local_mem_bw_gbs: 1600}\n", "did you mean 'local_mem_bw_gbps'"),
    ],
    ids=["libra", "near-key", "bool-flag", "near-topology", "native-near-key", "native-near-system-key"],
)
def test_error_or_hint_helps(tmp_path, loader, text, says):
    path = tmp_path / "f.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        loader(path)
    assert says in f"{info.value} {info.value.hint}"


def test_missing_file_names_the_path(tmp_path):
    missing = tmp_path / "nowhere.yml"
    for loader in (load_astra_network, load_astra_system, load_astra_memory, load_platform):
        with pytest.raises(ConfigError, match="file not found") as info:
            loader(missing)
        assert str(missing) in str(info.value)


def _astra_files(tmp_path: Path, network: str, system: str, memory: str) -> tuple[Path, Path, Path]:
    paths = (tmp_path / "n.yml", tmp_path / "s.json", tmp_path / "m.json")
    for p, text in zip(paths, (network, system, memory), strict=True):
        p.write_text(text)
    return paths


def test_cross_file_implementation_list_longer_than_dims(tmp_path):
    n, s, m = _astra_files(
        tmp_path,
        RING8,
        '{"all-reduce-implementation": ["ring", "ring"]}',
        '{"memory-type": "NO_MEMORY_EXPANSION"}',
    )
    with pytest.raises(ConfigError) as info:
        load_astra_platform(n, s, m)
    assert info.value.file == str(s)
    assert info.value.field == "all-reduce-implementation"
    assert "at most 1 entry" in str(info.value) and "['ring', 'ring']" in str(info.value)


def test_cross_file_shorter_implementation_list_is_valid(tmp_path):
    two_d = "topology: [Ring, Switch]\nnpus_count: [8, 4]\nbandwidth: [50, 50]\nlatency: [5, 5]\n"
    n, s, m = _astra_files(tmp_path, two_d, SYSTEM, '{"memory-type": "NO_MEMORY_EXPANSION"}')
    assert load_astra_platform(n, s, m).system.implementations.all_reduce == ("ring",)


def test_cross_file_per_node_memory_must_cover_every_npu(tmp_path):
    memory = '{"memory-type": "PER_NODE_MEMORY_EXPANSION", "remote-mem-bw": 25, "num-nodes": 1, "num-npus-per-node": 4}'
    n, s, m = _astra_files(tmp_path, RING8, SYSTEM, memory)
    with pytest.raises(ConfigError) as info:
        load_astra_platform(n, s, m)
    assert info.value.file == str(m) and info.value.field == "num-nodes"
    assert "at least 2" in str(info.value)


def test_comm_group_out_of_range_against_the_network(tmp_path):
    n, s, m = _astra_files(tmp_path, RING8, SYSTEM, '{"memory-type": "NO_MEMORY_EXPANSION"}')
    groups = tmp_path / "g.json"
    groups.write_text('{"1": [0, 1, 2, 8]}')
    with pytest.raises(ConfigError, match=r"1\[3\]: got 8; expected an NPU id in \[0, 8\)"):
        load_astra_platform(n, s, m, groups)


@pytest.mark.parametrize(
    ("kind", "text", "field", "value", "all_to_all"),
    [
        ("sys.json", '{"all-gather-implementation": ["ring", "butterfly"]}', "all-gather-implementation[1]", "'butterfly'", False),
        ("platform.yaml", NATIVE_DIMS + "system: {reduce_scatter: [butterfly]}\n", "system.reduce_scatter[0]", "'butterfly'", False),
        ("sys.json", '{"all-to-all-implementation": ["InSwitch"]}', "all-to-all-implementation[0]", "'InSwitch'", True),
        ("platform.yaml", NATIVE_DIMS + "system: {all_to_all: [ring, inSwitch]}\n", "system.all_to_all[1]", "'inSwitch'", True),
    ],
    ids=["system-json", "native", "system-json-all-to-all", "native-all-to-all"],
)
def test_algorithm_errors_list_the_algorithm_table(tmp_path, kind, text, field, value, all_to_all):
    """An unknown name, or one that does not run all-to-all in an all-to-all list: the error
    names the field and the value and lists what the algorithm table accepts there."""
    from trainsim.collectives.algorithms import accepted_names

    path = tmp_path / f"bad.{kind}"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        LOADERS[kind](path)
    assert info.value.field == field and value in str(info.value)
    assert accepted_names(all_to_all=all_to_all) in str(info.value)


def test_capitalized_algorithm_names_are_accepted(tmp_path):
    path = tmp_path / "s.sys.json"
    path.write_text('{"all-reduce-implementation": ["Ring", "HalvingDoubling", "Direct4"]}')
    impl = load_astra_system(path).implementations
    assert impl.all_reduce == ("Ring", "HalvingDoubling", "Direct4")
    native = tmp_path / "p.platform.yaml"
    native.write_text(NATIVE_DIMS + "system: {all_reduce: [Direct]}\n")
    assert load_platform(native).system.implementations.all_reduce == ("Direct",)
