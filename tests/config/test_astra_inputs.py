"""Every ASTRA-sim input under reference-data/ loads, with its numbers converted to SI exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers.reference_data import REFERENCE_DATA, RESULTS, WORKLOADS

from trainsim.config.astra import (
    load_astra_memory,
    load_astra_network,
    load_astra_platform,
    load_astra_system,
    load_comm_groups,
)
from trainsim.config.files import load_json_mapping
from trainsim.errors import ConfigError

CONFIG_DIRS = (
    "reference-results/inputs",
    "reference-workloads/astra-sim-examples/configs",
    "reference-workloads/astra-sim-regression-template",
)


def _config_files(suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for d in CONFIG_DIRS for p in (REFERENCE_DATA / d).rglob("*") if p.suffix in suffixes)


def test_every_reference_network_yaml_loads():
    files = _config_files((".yml", ".yaml"))
    assert len(files) >= 4
    for path in files:
        net = load_astra_network(path)
        assert net.npus >= 2 and net.source == str(path)


def test_every_reference_json_config_loads_as_its_kind():
    kinds = {"memory": 0, "system": 0}
    for path in _config_files((".json",)):
        if "memory-type" in load_json_mapping(path):
            load_astra_memory(path)
            kinds["memory"] += 1
        else:
            load_astra_system(path)
            kinds["system"] += 1
    assert kinds["memory"] >= 3 and kinds["system"] >= 16


def test_every_reference_case_loads_as_a_platform():
    cases = json.loads((RESULTS / "cases.json").read_text())
    combos = {(c["network"], c["system"], c["memory"]) for c in cases}
    assert len(combos) >= 10
    for network, system, memory in sorted(combos):
        platform = load_astra_platform(RESULTS / network, RESULTS / system, RESULTS / memory)
        assert platform.compat == "astra"


def test_libra_network_files_are_not_astra_format():
    """LIBRA's network files (Topology/NpusCount/CostDimension, no bandwidth: LIBRA chooses it)
    are not ASTRA-sim network files; they are refused with a hint saying so."""
    files = sorted((WORKLOADS / "libra/network").glob("*.yml"))
    assert files
    for path in files:
        with pytest.raises(ConfigError) as info:
            load_astra_network(path)
        assert "LIBRA" in (info.value.hint or "")


def _reference(network: str, system: str, groups: str | None = None):
    inputs = RESULTS / "inputs"
    return load_astra_platform(
        inputs / "network" / network,
        inputs / "system" / system,
        inputs / "remote_memory.json",
        groups,
    )


def test_ring8_numbers_in_si():
    p = _reference("2d_ring8_sw4.yml", "2d_direct.json")
    ring, switch = p.network.dims
    assert (ring.kind, ring.size, switch.kind, switch.size) == ("Ring", 8, "Switch", 4)
    assert ring.bandwidth == 200 * 2**30 and switch.bandwidth == 50 * 2**30
    assert (ring.latency_ns, switch.latency_ns) == (500.0, 1000.0)
    s = p.system
    assert s.local_mem_bw == 1600e9 and s.endpoint_delay_ns == 10
    assert s.preferred_dataset_splits == 4 and s.collective_optimization == "localBWAware"
    assert s.implementations.all_to_all == ("direct", "direct")
    assert p.memory.mode == "NO_MEMORY_EXPANSION" and p.comm_groups == {}


def test_example_system_with_roofline_keys():
    s = load_astra_system(WORKLOADS / "astra-sim-examples/configs/Ring_4chunks.json")
    assert s.peak_perf == 900e12 and not s.roofline_enabled and not s.boost_mode
    assert s.implementations.all_reduce == ("ring",)


def _write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_every_system_key_is_read(tmp_path):
    data = {
        "scheduling-policy": "FIFO",
        "endpoint-delay": 25,
        "active-chunks-per-dimension": 2,
        "preferred-dataset-splits": 8,
        "all-reduce-implementation": ["direct4", "oneHalvingDoubling"],
        "all-gather-implementation": ["oneRing"],
        "reduce-scatter-implementation": ["oneDirect12"],
        "all-to-all-implementation": ["doubleBinaryTree"],
        "all-reduce-implementation-custom": ["custom/ring.et"],
        "per-node-custom-implementation": "custom/per_node.yml",
        "collective-optimization": "baseline",
        "local-mem-bw": 50,
        "peak-perf": 312.5,
        "roofline-enabled": 1,
        "trace-enabled": 1,
        "replay-only": 0,
        "track-local-mem": 0,  # 1 is refused (tests/config/test_astra_compat.py)
        "local-mem-trace-filename": "mem.csv",
        "boost-mode": 1,
        "intra-dimension-scheduling": "smallestFirst",
        "inter-dimension-scheduling": "offlineGreedy",
        "model-shared-bus": 0,  # 1 is refused (tests/config/test_astra_compat.py)
        "L": 1,
        "o": 2,
        "g": 3,
        "G": 0.5,
        "local-reduction-delay": 4,
    }
    s = load_astra_system(_write(tmp_path, "s.json", data))
    assert (s.scheduling_policy, s.endpoint_delay_ns, s.active_chunks_per_dimension) == (
        "FIFO",
        25,
        2,
    )
    assert s.preferred_dataset_splits == 8 and s.collective_optimization == "baseline"
    impl = s.implementations
    assert impl.all_reduce == ("direct4", "oneHalvingDoubling") and impl.all_gather == ("oneRing",)
    assert impl.reduce_scatter == ("oneDirect12",) and impl.all_to_all == ("doubleBinaryTree",)
    assert impl.custom == {"all_reduce": "custom/ring.et"}
    assert impl.per_node_custom == "custom/per_node.yml"
    assert s.local_mem_bw == 50e9 and s.peak_perf == 312.5e12
    assert s.roofline_enabled and s.trace_enabled and not s.replay_only and not s.track_local_mem
    assert s.local_mem_trace_filename == "mem.csv" and s.boost_mode
    assert (s.intra_dimension_scheduling, s.inter_dimension_scheduling) == ("SCF", "themis")
    bus = s.shared_bus
    assert not bus.enabled and (bus.latency_ns, bus.overhead_ns, bus.gap_ns) == (1, 2, 3)
    assert bus.gap_per_byte_ns == 0.5 and bus.local_reduction_delay_ns == 4


def test_absent_implementation_list_means_not_configured(tmp_path):
    s = load_astra_system(_write(tmp_path, "s.json", {"all-reduce-implementation": ["ring"]}))
    assert s.implementations.all_reduce == ("ring",)
    assert s.implementations.all_gather == () and s.implementations.all_to_all == ()


@pytest.mark.parametrize(
    ("data", "mode", "nodes", "per_node"),
    [
        ({"memory-type": "NO_MEMORY_EXPANSION"}, "NO_MEMORY_EXPANSION", 1, 1),
        (
            {
                "memory-type": "PER_NPU_MEMORY_EXPANSION",
                "remote-mem-bw": 25.6,
                "remote-mem-latency": 100,
            },
            "PER_NPU_MEMORY_EXPANSION",
            1,
            1,
        ),
        (
            {
                "memory-type": "PER_NODE_MEMORY_EXPANSION",
                "remote-mem-bw": 25.6,
                "remote-mem-latency": 100,
                "num-nodes": 2,
                "num-npus-per-node": 4,
            },
            "PER_NODE_MEMORY_EXPANSION",
            2,
            4,
        ),
        (
            {"memory-type": "MEMORY_POOL", "remote-mem-bw": 25.6, "remote-mem-latency": 100},
            "MEMORY_POOL",
            1,
            1,
        ),
    ],
)
def test_memory_modes(tmp_path, data, mode, nodes, per_node):
    m = load_astra_memory(_write(tmp_path, "m.json", data))
    assert (m.mode, m.nodes, m.npus_per_node) == (mode, nodes, per_node)
    if mode != "NO_MEMORY_EXPANSION":
        # the value as written, in B/s; ASTRA-sim's uint64 truncation (25) is the compat mode's job
        assert m.bandwidth == 25.6e9 and m.latency_ns == 100


def test_comm_groups_keep_member_order_and_normalise_ids(tmp_path):
    groups = load_comm_groups(_write(tmp_path, "g.json", {"1": [3, 1, 2], "02": [0, 4]}), npus=8)
    assert groups == {"1": (3, 1, 2), "2": (0, 4)}


def test_comm_group_path_empty_means_no_groups():
    assert _reference("ring8.yml", "1d_ring.json", "empty").comm_groups == {}


def test_yaml_12_floats_read_as_numbers(tmp_path):
    path = tmp_path / "n.yml"
    path.write_text("topology: [Ring]\nnpus_count: [4]\nbandwidth: [1e2]\nlatency: [5E1]\n")
    (dim,) = load_astra_network(path).dims
    assert dim.bandwidth == 100 * 2**30 and dim.latency_ns == 50
