"""Helpers for the ASTRA-sim 1.0 text-workload tests: where the reference files are (in
reference-data/), a schema-independent decoder of Chakra ET files (varint framing + protobuf
wire format, field numbers of chakra-format.md §1), and graph checks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tests.helpers.reference_data import WORKLOADS
from trainsim.workload.graph import WorkloadGraph

TEXT_DIR = WORKLOADS / "astra-sim-1.0-text"
LIBRA_DIR = WORKLOADS / "libra" / "workload"
GOLDEN_DIR = WORKLOADS / "generated-by-chakra-1.0.0" / "text-converter"


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, pos


def _fields(buf: bytes) -> list[tuple[int, int, int | bytes]]:
    out: list[tuple[int, int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + length], pos + length
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, wire, value))
    return out


def _packed(value: int | bytes) -> list[int]:
    if isinstance(value, int):
        return [value]
    out, pos = [], 0
    while pos < len(value):
        item, pos = _varint(value, pos)
        out.append(item)
    return out


@dataclass
class EtNode:
    id: int = 0
    name: str = ""
    type: int = 0
    data_deps: list[int] = field(default_factory=list)
    ctrl_deps: list[int] = field(default_factory=list)
    duration_micros: int = 0
    attrs: dict[str, int | bytes] = field(default_factory=dict)


def read_et(path: Path) -> list[EtNode]:
    """The Node messages of an ET file (the GlobalMetadata is skipped); attribute values are
    the raw varint (integer cases) or bytes (list and string cases)."""
    data = path.read_bytes()
    pos, first, nodes = 0, True, []
    while pos < len(data):
        length, pos = _varint(data, pos)
        message, pos = data[pos : pos + length], pos + length
        if first:
            first = False
            continue
        node = EtNode()
        for number, _wire, value in _fields(message):
            if number == 1:
                node.id = int(value)  # type: ignore[arg-type]
            elif number == 2:
                node.name = bytes(value).decode()  # type: ignore[arg-type]
            elif number == 3:
                node.type = int(value)  # type: ignore[arg-type]
            elif number == 4:
                node.ctrl_deps += _packed(value)
            elif number == 5:
                node.data_deps += _packed(value)
            elif number == 7:
                node.duration_micros = int(value)  # type: ignore[arg-type]
            elif number == 10:
                attr = _fields(value)  # type: ignore[arg-type]
                name = next(bytes(v).decode() for n, _, v in attr if n == 1)  # type: ignore[arg-type]
                node.attrs[name] = next(v for n, _, v in attr if n != 1)
        nodes.append(node)
    return nodes


def topological_order_exists(graph: WorkloadGraph) -> bool:
    """Kahn's algorithm over data deps; also checks that every dependency names a node."""
    index = graph.position_of()
    n = len(graph)
    indegree = np.zeros(n, dtype=np.int64)
    children: list[list[int]] = [[] for _ in range(n)]
    for pos in range(n):
        for dep in graph.deps_of(pos):
            assert dep in index, f"{graph.node_summary(pos)} depends on absent node {dep}"
            children[index[dep]].append(pos)
            indegree[pos] += 1
    ready = [p for p in range(n) if indegree[p] == 0]
    seen = 0
    while ready:
        p = ready.pop()
        seen += 1
        for c in children[p]:
            indegree[c] -= 1
            if indegree[c] == 0:
                ready.append(c)
    return seen == n


def deps_by_position(graph: WorkloadGraph) -> list[set[int]]:
    index = graph.position_of()
    return [{index[d] for d in graph.deps_of(p)} for p in range(len(graph))]
