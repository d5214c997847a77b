"""Writing Chakra ET files: round trips of every reference file, byte-exact reproduction of
chakra's own files, the wire layout checked with a schema-independent decoder, strictness."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.reference_data import REFERENCE_DATA
from trainsim.enums import CommType, NodeType
from trainsim.errors import TraceError
from trainsim.workload import GraphBuilder, TraceWarning, WorkloadGraph, read_rank, write_rank

from ..conftest import graph_differences, reference_et_files, reference_id

# --- a schema-independent protobuf wire decoder ------------------------------------------------

VARINT, I64, LEN, I32 = 0, 1, 2, 5


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def wire_fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """``(field number, wire type, value)`` per field; value is bytes for LEN, else an int."""
    fields: list[tuple[int, int, int | bytes]] = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if wire_type == VARINT:
            value, pos = _varint(data, pos)
            fields.append((number, wire_type, value))
        elif wire_type in (I64, I32):
            width = 8 if wire_type == I64 else 4
            fields.append((number, wire_type, int.from_bytes(data[pos : pos + width], "little")))
            pos += width
        elif wire_type == LEN:
            length, pos = _varint(data, pos)
            fields.append((number, wire_type, data[pos : pos + length]))
            pos += length
        else:
            raise AssertionError(f"wire type {wire_type} at byte {pos}")
    return fields


def frames(data: bytes) -> list[bytes]:
    """Split a rank file on its varint length prefixes."""
    out, pos = [], 0
    while pos < len(data):
        length, pos = _varint(data, pos)
        out.append(data[pos : pos + length])
        pos += length
    assert pos == len(data)
    return out


def packed_varints(data: bytes) -> list[int]:
    values, pos = [], 0
    while pos < len(data):
        value, pos = _varint(data, pos)
        values.append(value)
    return values


def attributes(node: bytes) -> dict[str, tuple[int, int, int | bytes]]:
    """name -> (oneof field number, wire type, value) of a Node's attributes (field 10)."""
    out = {}
    for number, _, attr in wire_fields(node):
        if number == 10:
            inner = wire_fields(attr)
            name = next(v for n, _, v in inner if n == 1).decode()
            out[name] = next((n, w, v) for n, w, v in inner if n not in (1, 2))
    return out


# Field numbers and wire types ASTRA-sim expects (chakra-format.md §1.4, §1.5).
EXPECTED_ATTRIBUTE_FIELDS = {
    "is_cpu_op": (27, VARINT),  # bool_val
    "num_ops": (9, VARINT),  # int64_val
    "tensor_size": (13, VARINT),  # uint64_val
    "comm_type": (9, VARINT),  # int64_val
    "comm_priority": (7, VARINT),  # int32_val
    "comm_size": (9, VARINT),  # int64_val
    "comm_src": (7, VARINT),  # int32_val
    "comm_dst": (7, VARINT),  # int32_val
    "comm_tag": (7, VARINT),  # int32_val
    "pg_name": (29, LEN),  # string_val
    "involved_dim": (28, LEN),  # bool_list
}


def _every_attribute_graph() -> WorkloadGraph:
    builder = GraphBuilder("all.0.et")
    builder.add(
        0,
        NodeType.COMP_NODE,
        "first",
        duration_s=3e-6,
        is_cpu_op=False,
        num_ops=1e9,
        tensor_size=4096,
    )
    builder.add(
        5, NodeType.COMM_COLL_NODE, "ar", is_cpu_op=False, comm_type=CommType.ALL_REDUCE,
        comm_priority=0, comm_size=1 << 20, pg_name="0", involved_dim=(True, False),
        data_deps=[0], ctrl_deps=[0],
    )  # fmt: skip
    builder.add(3, NodeType.COMM_SEND_NODE, "send", comm_size=8, comm_dst=1, comm_tag=0)
    builder.add(
        4, NodeType.COMM_RECV_NODE, "recv", comm_size=8, comm_src=1, comm_tag=0, data_deps=[3]
    )
    return builder.build()


def test_written_file_decodes_with_the_reference_field_numbers(tmp_path):
    data = write_rank(tmp_path / "all.0.et", _every_attribute_graph()).read_bytes()
    metadata, *nodes = frames(data)
    assert wire_fields(metadata) == [(1, LEN, b"0.0.4")]
    node_ids = [dict((n, v) for n, _, v in wire_fields(node)).get(1, 0) for node in nodes]
    assert node_ids == [0, 3, 4, 5]  # ascending; id 0 is a proto3 default, left out

    coll = wire_fields(nodes[3])
    assert (1, VARINT, 5) in coll and (2, LEN, b"ar") in coll and (3, VARINT, 7) in coll
    assert (4, LEN, bytes([0])) in coll and (5, LEN, bytes([0])) in coll  # packed deps
    assert (7, VARINT, 3) in wire_fields(nodes[0])  # duration_micros

    seen = {}
    for node in nodes:
        seen.update(attributes(node))
    assert set(seen) == set(EXPECTED_ATTRIBUTE_FIELDS)
    for name, (number, wire_type) in EXPECTED_ATTRIBUTE_FIELDS.items():
        assert seen[name][:2] == (number, wire_type), name
    assert seen["is_cpu_op"][2] == 0 and seen["comm_type"][2] == 0  # zero values are written
    assert seen["num_ops"][2] == 10**9 and seen["comm_size"][2] == 1 << 20
    assert wire_fields(seen["involved_dim"][2]) == [(1, LEN, bytes([1, 0]))]  # packed bools


def test_node_order_in_the_file_is_ascending_id_whatever_the_input(tmp_path):
    builder = GraphBuilder()
    for node_id in (9, 2, 7):
        builder.add(node_id, NodeType.COMP_NODE)
    _, *nodes = frames(write_rank(tmp_path / "o.0.et", builder.build()).read_bytes())
    assert [wire_fields(n)[0] for n in nodes] == [(1, VARINT, 2), (1, VARINT, 7), (1, VARINT, 9)]


def test_all_reduce_microbenchmark_is_reproduced_byte_for_byte(tmp_path):
    reference = (
        REFERENCE_DATA
        / "reference-workloads/astra-sim-examples/microbenchmarks/all_reduce/4npus_1MB/all_reduce.1.et"
    )
    builder = GraphBuilder()
    builder.add(
        1, NodeType.COMM_COLL_NODE, "all_reduce_4npus_1MB",
        is_cpu_op=False, comm_type=CommType.ALL_REDUCE, comm_size=1_048_576,
    )  # fmt: skip
    written = write_rank(tmp_path / "all_reduce.1.et", builder.build()).read_bytes()
    assert len(written) == 83
    assert written == reference.read_bytes()


def _canonical_reference_files() -> list[Path]:
    """Files chakra's and ASTRA-sim's tools wrote in the strict layout (no legacy types or
    missing fields, nodes in id order): reading then writing them must give the same bytes."""
    kept = ("astra-sim-examples", "generated-by-chakra-1.0.0", "inputs/workload/all_")
    lacking_comm_size = ("one_comm_send_node", "one_comm_recv_node")
    return [
        p
        for p in reference_et_files()
        if any(k in str(p) for k in kept) and not any(k in p.name for k in lacking_comm_size)
    ]


@pytest.mark.parametrize("path", _canonical_reference_files(), ids=reference_id)
def test_canonical_files_are_rewritten_byte_for_byte(path, tmp_path):
    assert write_rank(tmp_path / path.name, read_rank(path)).read_bytes() == path.read_bytes()


def _assert_round_trip(path: Path, tmp_path: Path, **read_options: str) -> WorkloadGraph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        first = read_rank(path, **read_options)
    written = write_rank(tmp_path / f"copy.{first.rank}.et", first)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TraceWarning)  # what we write reads without complaint
        second = read_rank(written, **read_options)
    assert graph_differences(first, second) == []
    return second


@pytest.mark.parametrize("path", reference_et_files(), ids=reference_id)
def test_read_write_read_keeps_everything(path, tmp_path):
    _assert_round_trip(path, tmp_path)


@pytest.mark.parametrize("policy", ["both", "data_only"])
def test_pytorch_trace_round_trips_and_is_written_strictly(pytorch_trace, tmp_path, policy):
    graph = _assert_round_trip(pytorch_trace, tmp_path, ctrl_deps=policy)
    _, *nodes = frames(Path(graph.source).read_bytes())
    assert len(nodes) == 3664
    standard = set(EXPECTED_ATTRIBUTE_FIELDS)
    for node in nodes:
        names = []
        for number, _, attr in wire_fields(node):
            if number == 10:
                inner = wire_fields(attr)
                names.append(next(v for n, _, v in inner if n == 1).decode())
        assert len([n for n in names if n in standard]) == len({n for n in names if n in standard})
        for name, (number, wire_type, _) in attributes(node).items():
            if name in standard:
                assert (number, wire_type) == EXPECTED_ATTRIBUTE_FIELDS[name]


def test_metadata_read_is_kept_and_default_metadata_is_not_empty(tmp_path):
    source = (
        REFERENCE_DATA / "reference-workloads/generated-by-chakra-1.0.0/text-converter/microAllReduce.0.et"
    )
    graph = read_rank(source)
    kept = frames(write_rank(tmp_path / "m.0.et", graph).read_bytes())[0]
    assert kept == frames(source.read_bytes())[0]
    graph.metadata = b""
    assert frames(write_rank(tmp_path / "m.0.et", graph).read_bytes())[0] == b"\x0a\x050.0.4"


def test_a_node_with_only_defaults_is_not_written_as_an_empty_message(tmp_path):
    builder = GraphBuilder()
    builder.add(0, NodeType.INVALID_NODE)
    path = write_rank(tmp_path / "empty.0.et", builder.build())
    assert frames(path.read_bytes())[1] == b"\x08\x00"
    assert read_rank(path).ids.tolist() == [0]


def test_duration_is_written_in_whole_microseconds(tmp_path):
    builder = GraphBuilder()
    builder.add(1, NodeType.COMP_NODE, duration_s=1.2345e-3)
    path = write_rank(tmp_path / "d.0.et", builder.build())
    assert (7, VARINT, 1234) in wire_fields(frames(path.read_bytes())[1])
    assert read_rank(path).duration_s[0] == pytest.approx(1.234e-3)


@pytest.mark.parametrize(
    ("attributes_given", "message"),
    [
        ({"comm_size": -1}, "comm_size = -1 cannot be written as int64_val"),
        ({"comm_tag": 2**31}, "comm_tag = 2147483648 cannot be written as int32_val"),
        ({"comm_dst": -5}, "comm_dst = -5 cannot be written as int32_val"),
        ({"num_ops": math.inf}, "num_ops"),
        ({"duration_s": math.nan}, "duration nan s cannot be written"),
        ({"duration_s": -1.0}, "duration -1.0 s cannot be written"),
    ],
)
def test_values_outside_astra_sims_types_are_refused_naming_the_node(
    tmp_path, attributes_given, message
):
    builder = GraphBuilder()
    builder.add(1, NodeType.COMP_NODE)
    builder.add(42, NodeType.COMM_SEND_NODE, **attributes_given)
    target = tmp_path / "bad.3.et"
    with pytest.raises(TraceError, match=rf"bad\.3\.et, rank 0, node 42: {message}"):
        write_rank(target, builder.build())
    assert list(tmp_path.iterdir()) == []  # neither the file nor a partial one is left


# --- property: any graph the builder makes survives a write and a read --------------------------

_optional = st.none() | st.integers(0, 2**31 - 1)
_sentinel = st.just(-1) | st.integers(0, 2**31 - 1)
_node = st.fixed_dictionaries(
    {
        "node_type": st.sampled_from(list(NodeType)),
        "name": st.text(max_size=8),
        "duration_s": st.integers(0, 10**9).map(lambda us: us / 1e6),
        "is_cpu_op": st.none() | st.booleans(),
        "num_ops": st.none() | st.integers(0, 2**53).map(float),
        "tensor_size": st.none() | st.integers(0, 2**63 - 1),
        "comm_type": st.just(-1) | st.sampled_from([int(c) for c in CommType]),
        "comm_size": st.none() | st.integers(0, 2**63 - 1),
        "comm_src": _sentinel,
        "comm_dst": _sentinel,
        "comm_tag": _sentinel,
        "comm_priority": st.none() | st.integers(-(2**31), 2**31 - 1),
        "pg_name": st.none() | st.text(max_size=4),
        "involved_dim": st.none() | st.lists(st.booleans(), max_size=4).map(tuple),
    }
)


@settings(max_examples=60, deadline=None)
@given(nodes=st.lists(_node, min_size=1, max_size=12), data=st.data())
def test_any_built_graph_round_trips(tmp_path_factory, nodes, data):
    builder = GraphBuilder()
    builder.metadata = b"\x0a\x051.0.0"  # GlobalMetadata(version="1.0.0")
    for node_id, node in enumerate(nodes):
        earlier = st.lists(st.integers(0, node_id - 1), max_size=3) if node_id else st.just([])
        node["comm_size"] = (
            node["comm_size"] if node["node_type"] not in (5, 6, 7) else node["comm_size"] or 0
        )
        builder.add(node_id, data_deps=data.draw(earlier), ctrl_deps=data.draw(earlier), **node)
    graph = builder.build()
    path = write_rank(tmp_path_factory.mktemp("rt") / "g.0.et", graph)
    # the reader's one rewrite: communication nodes marked is_cpu_op become CPU COMP nodes
    host = np.isin(graph.types, (5, 6, 7)) & graph.is_cpu_op
    graph.types[host] = NodeType.COMP_NODE
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceWarning)
        assert graph_differences(graph, read_rank(path)) == []


def test_write_workload_writes_distinct_graphs_each_to_its_rank(tmp_path):
    from trainsim.workload import read_workload, write_workload

    prefix = (
        REFERENCE_DATA
        / "reference-workloads/astra-sim-examples/custom_ring_allreduce_8npus_1MB/custom_allreduce"
    )
    graphs = read_workload(prefix, 8)
    paths = write_workload(tmp_path / "ring", graphs)
    for rank, path in enumerate(paths):
        assert path.read_bytes() == Path(f"{prefix}.{rank}.et").read_bytes()
