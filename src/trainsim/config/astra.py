"""ASTRA-sim's input files, accepted unchanged and validated strictly (config layer).

Each loader turns one file into the SI objects of :mod:`trainsim.config.types`; an unknown key,
a wrong type or an impossible value is one :class:`~trainsim.errors.ConfigError` naming the
file, the dotted field (``bandwidth[1]``), the value and what was expected. ASTRA-sim itself
ignores unknown keys and exits (or asserts) on most other problems; here nothing is ignored.

- Network YAML (``--network-configuration``), read by astra-network-analytical's
  ``NetworkParser`` (``common/network-parser/NetworkParser.cc``): ``topology`` (``Ring``,
  ``FullyConnected``, ``Switch``, spelled exactly), ``npus_count`` (ints > 1: ASTRA-sim exits
  with "should be larger than 1" on a dimension of size 1), ``bandwidth`` (> 0, ASTRA-sim's
  "GB/s" = 2**30 B/s: DimSpec.bandwidth = value * 2**30 exactly), ``latency`` (ns per hop,
  >= 0); four lists of one length, one entry per dimension.
- System JSON: :mod:`trainsim.config.astra_system`.
- Remote-memory JSON (``--remote-memory-configuration``), read by ``AnalyticalRemoteMemory``:
  ``memory-type`` (``NO_MEMORY_EXPANSION``, ``PER_NPU_MEMORY_EXPANSION``,
  ``PER_NODE_MEMORY_EXPANSION``, ``MEMORY_POOL``), ``remote-mem-latency`` (ns),
  ``remote-mem-bw`` (decimal GB/s = bytes/ns), ``num-nodes`` and ``num-npus-per-node`` (read by
  ASTRA-sim in PER_NODE mode only). ASTRA-sim stores the bandwidth and the latency as uint64, so
  25.6 GB/s acts as 25: the spec keeps the value as written (bandwidth = value * 1e9 B/s) and
  the ``astra`` compat mode truncates at run time; a bandwidth below 1 in an expansion mode is
  refused, since ASTRA-sim would divide by zero.
- Communicator-group JSON (``--comm-group-configuration``): ``{"<group id>": [npu ids...]}``,
  ids decimal strings, members distinct ints in [0, npus). ASTRA-sim treats the path ``empty``
  as "no groups"; so does :func:`load_astra_platform`.

Every :class:`Platform` built from these files has ``compat="astra"``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trainsim.config.astra_system import load_astra_system, parse_astra_system
from trainsim.config.checks import (
    check_keys,
    fail,
    want_choice,
    want_int,
    want_list,
    want_number,
)
from trainsim.config.files import load_json_mapping, load_yaml_mapping
from trainsim.config.types import (
    MAX_NPUS,
    DimSpec,
    MemoryMode,
    NetworkSpec,
    Platform,
    RemoteMemorySpec,
)
from trainsim.errors import ConfigError
from trainsim.units import ASTRA_GBPS, GBPS

TOPOLOGIES = ("Ring", "FullyConnected", "Switch")
NETWORK_KEYS = ("topology", "npus_count", "bandwidth", "latency")
_LIBRA_KEYS = {"Topology", "NpusCount", "CostDimension"}
MEMORY_KEYS = (
    "memory-type",
    "remote-mem-latency",
    "remote-mem-bw",
    "num-nodes",
    "num-npus-per-node",
)
MEMORY_MODES: tuple[MemoryMode, ...] = (
    "NO_MEMORY_EXPANSION",
    "PER_NPU_MEMORY_EXPANSION",
    "PER_NODE_MEMORY_EXPANSION",
    "MEMORY_POOL",
)
_GROUP_ID = re.compile(r"[0-9]+")


def _entries(n: int) -> str:
    return "entry" if n == 1 else "entries"


def parse_astra_network(data: dict[str, Any], file: str) -> NetworkSpec:
    """Validate an already-parsed network YAML mapping; ``file`` names it in errors."""
    hint = None
    if _LIBRA_KEYS & set(data):
        hint = (
            "this looks like a LIBRA network file (Topology/NpusCount/CostDimension, no "
            "bandwidth); ASTRA-sim's analytical backend needs topology, npus_count, bandwidth "
            "and latency"
        )
    check_keys(data, NETWORK_KEYS, file, hint=hint)
    lists = {}
    for key in NETWORK_KEYS:
        if key not in data:
            raise ConfigError(
                "missing; expected a list with one entry per dimension",
                file=file,
                field=key,
                hint=hint,
            )
        lists[key] = want_list(data[key], file, key)
    ndims = len(lists["topology"])
    for key in NETWORK_KEYS[1:]:
        if len(lists[key]) != ndims:
            raise fail(
                file,
                key,
                lists[key],
                f"{ndims} {_entries(ndims)}, one per dimension as in topology",
            )
    dims = []
    for i in range(ndims):
        kind = want_choice(lists["topology"][i], file, f"topology[{i}]", TOPOLOGIES)
        size = want_int(lists["npus_count"][i], file, f"npus_count[{i}]", maximum=MAX_NPUS)
        if size < 2:
            raise fail(
                file,
                f"npus_count[{i}]",
                size,
                "an integer >= 2",
                hint="ASTRA-sim exits on a dimension of size 1 ('should be larger than 1'); "
                "leave the dimension out",
            )
        bw = want_number(lists["bandwidth"][i], file, f"bandwidth[{i}]", positive=True)
        lat = want_number(lists["latency"][i], file, f"latency[{i}]", minimum=0)
        dims.append(DimSpec(kind=kind, size=size, bandwidth=bw * ASTRA_GBPS, latency_ns=lat))  # type: ignore[arg-type]
    return NetworkSpec(dims=tuple(dims), source=file)


def load_astra_network(path: str | Path) -> NetworkSpec:
    """Read and validate an ASTRA-sim network YAML (keys and units: module docstring)."""
    return parse_astra_network(load_yaml_mapping(path), str(path))


def parse_astra_memory(data: dict[str, Any], file: str) -> RemoteMemorySpec:
    """Validate an already-parsed remote-memory JSON object."""
    check_keys(data, MEMORY_KEYS, file)
    if "memory-type" not in data:
        raise ConfigError(
            f"missing; expected one of {', '.join(MEMORY_MODES)}", file=file, field="memory-type"
        )
    mode = want_choice(data["memory-type"], file, "memory-type", MEMORY_MODES)
    latency = want_number(data.get("remote-mem-latency", 0), file, "remote-mem-latency", minimum=0)
    bw = want_number(data.get("remote-mem-bw", 0), file, "remote-mem-bw", minimum=0)
    expands = mode != "NO_MEMORY_EXPANSION"
    if expands and bw < 1:
        raise fail(
            file,
            "remote-mem-bw",
            data.get("remote-mem-bw", "(missing)"),
            f"a number >= 1 (GB/s = bytes/ns) with {mode}",
            hint="ASTRA-sim reads it as a whole number of bytes per ns and divides by it",
        )
    counts = {}
    for key in ("num-nodes", "num-npus-per-node"):
        if key in data:
            counts[key] = want_int(data[key], file, key, minimum=1)
        elif mode == "PER_NODE_MEMORY_EXPANSION":
            raise ConfigError(
                "missing; expected an integer >= 1 with PER_NODE_MEMORY_EXPANSION",
                file=file,
                field=key,
            )
    return RemoteMemorySpec(
        mode=mode,  # type: ignore[arg-type]
        latency_ns=latency,
        bandwidth=bw * GBPS,
        nodes=counts.get("num-nodes", 1),
        npus_per_node=counts.get("num-npus-per-node", 1),
        source=file,
    )


def load_astra_memory(path: str | Path) -> RemoteMemorySpec:
    """Read and validate an ASTRA-sim remote-memory JSON (keys and units: module docstring)."""
    return parse_astra_memory(load_json_mapping(path), str(path))


def parse_comm_groups(
    data: dict[Any, Any], file: str, *, npus: int | None = None, prefix: str = ""
) -> dict[str, tuple[int, ...]]:
    """Validate ``{"<group id>": [npu ids...]}``; with ``npus``, ids must lie in [0, npus).

    Group ids are decimal strings (ASTRA-sim converts them with ``stoi``); ``"01"`` and ``"1"``
    are the same group, so both at once is an error. The member order is kept: it is the order
    of the group's ring (astra-sim-semantics.md, "Communicator groups")."""
    groups: dict[str, tuple[int, ...]] = {}
    for key, members in data.items():
        field = f"{prefix}{key}"
        if not isinstance(key, str) or not _GROUP_ID.fullmatch(key):
            raise fail(file, field, key, 'a group id written as a decimal string such as "1"')
        gid = str(int(key))
        if gid in groups:
            raise fail(file, field, key, f"a group id not already used (same as {gid!r})")
        seen: set[int] = set()
        for i, npu in enumerate(want_list(members, file, field)):
            want_int(npu, file, f"{field}[{i}]", minimum=0)
            if npus is not None and npu >= npus:
                raise fail(
                    file,
                    f"{field}[{i}]",
                    npu,
                    f"an NPU id in [0, {npus}) (the network has {npus} NPUs)",
                )
            if npu in seen:
                raise fail(file, f"{field}[{i}]", npu, "NPU ids listed once per group")
            seen.add(npu)
        groups[gid] = tuple(members)
    return groups


def load_comm_groups(path: str | Path, *, npus: int | None = None) -> dict[str, tuple[int, ...]]:
    """Read and validate an ASTRA-sim communicator-group JSON."""
    return parse_comm_groups(load_json_mapping(path), str(path), npus=npus)


def cross_check(platform: Platform, *, native: bool = False) -> None:
    """Checks that need two files: an ``<type>-implementation`` list longer than the network's
    dimensions (ASTRA-sim would index past its dimensions), and PER_NODE memory whose nodes do
    not cover every NPU (node = npu // npus-per-node must be < num-nodes). Shorter lists are
    valid: the collective then runs on the first dimensions only (astra-sim-semantics.md D5).
    ``native`` picks the field names of the native platform file for the messages."""
    ndims = len(platform.network.dims)
    system, memory = platform.system, platform.memory
    for attr in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        impl: tuple[str, ...] = getattr(system.implementations, attr)
        if len(impl) > ndims:
            field = f"system.{attr}" if native else f"{attr.replace('_', '-')}-implementation"
            where = "network.dims" if native else platform.network.source
            raise fail(
                system.source,
                field,
                list(impl),
                f"at most {ndims} {_entries(ndims)}, one per network dimension ({where} has {ndims})",
            )
    if memory.mode == "PER_NODE_MEMORY_EXPANSION":
        needed = -(-platform.network.npus // memory.npus_per_node)
        if memory.nodes < needed:
            raise fail(
                memory.source,
                "memory.nodes" if native else "num-nodes",
                memory.nodes,
                f"at least {needed}: {platform.network.npus} NPUs / {memory.npus_per_node} per node",
            )


def load_astra_platform(
    network: str | Path,
    system: str | Path,
    memory: str | Path | None = None,
    comm_groups: str | Path | None = None,
) -> Platform:
    """Load the files of one ASTRA-sim run (the paths of its ``--network-configuration``,
    ``--system-configuration``, ``--remote-memory-configuration`` and optional
    ``--comm-group-configuration``) and check them against each other. Without a
    remote-memory file there is no memory expansion."""
    net = load_astra_network(network)
    groups = {}
    if comm_groups is not None and str(comm_groups) != "empty":
        groups = load_comm_groups(comm_groups, npus=net.npus)
    platform = Platform(
        network=net,
        system=load_astra_system(system),
        memory=load_astra_memory(memory) if memory is not None else RemoteMemorySpec(),
        comm_groups=groups,
        compat="astra",
    )
    cross_check(platform)
    return platform


__all__ = [
    "cross_check",
    "load_astra_memory",
    "load_astra_network",
    "load_astra_platform",
    "load_astra_system",
    "load_comm_groups",
    "parse_astra_memory",
    "parse_astra_network",
    "parse_astra_system",
    "parse_comm_groups",
]
