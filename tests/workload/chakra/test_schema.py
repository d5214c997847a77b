"""The Python-built Chakra descriptor agrees with the shipped .proto and with chakra's numbers."""

from __future__ import annotations

import re

import pytest
from google.protobuf import descriptor_pb2

from trainsim.workload.chakra import schema as chakra_schema

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    name: getattr(_F, f"TYPE_{name.upper()}")
    for name in (
        "double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
        "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes",
    )
}  # fmt: skip
_TOKEN = re.compile(r"//[^\n]*|[A-Za-z_][\w.]*|\d+|\"[^\"]*\"|[{};=]")


def _parse_proto(text: str) -> dict:
    """A small parser for the subset of proto3 the schema uses: package, messages with
    (repeated) fields and one oneof, enums. Returns {"package", "messages", "enums"}."""
    tokens = [t for t in _TOKEN.findall(text) if not t.startswith("//")]
    schema: dict = {"package": None, "messages": {}, "enums": {}}
    i = 0
    while i < len(tokens):
        if tokens[i] == "package":
            schema["package"] = tokens[i + 1]
            i += 3
        elif tokens[i] == "syntax":
            i += 4
        elif tokens[i] == "message":
            i = _parse_message(tokens, i + 1, schema["messages"])
        elif tokens[i] == "enum":
            i = _parse_enum(tokens, i + 1, schema["enums"])
        else:
            raise AssertionError(f"unexpected token {tokens[i]!r}")
    return schema


def _parse_enum(tokens: list[str], i: int, enums: dict) -> int:
    name, values = tokens[i], {}
    i += 2  # name {
    while tokens[i] != "}":
        values[tokens[i]] = int(tokens[i + 2])  # NAME = N ;
        i += 4
    enums[name] = values
    return i + 1


def _parse_message(tokens: list[str], i: int, messages: dict) -> int:
    name, fields = tokens[i], {}
    i += 2  # name {
    oneof = None
    while True:
        if tokens[i] == "}":
            if oneof is None:
                messages[name] = fields
                return i + 1
            oneof, i = None, i + 1
        elif tokens[i] == "oneof":
            oneof, i = tokens[i + 1], i + 3
        else:
            repeated = tokens[i] == "repeated"
            i += repeated
            type_name, field_name, number = tokens[i], tokens[i + 1], int(tokens[i + 3])
            fields[field_name] = (number, type_name, repeated, oneof)
            i += 5  # type name = N ;


def _descriptor_view(file: descriptor_pb2.FileDescriptorProto) -> dict:
    """The descriptor in the parser's shape, type names spelled as in a .proto file."""
    names_by_type = {v: k for k, v in _SCALARS.items()}
    messages = {}
    for message in file.message_type:
        oneofs = [o.name for o in message.oneof_decl]
        fields = {}
        for field in message.field:
            type_name = (
                field.type_name.rsplit(".", 1)[-1] if field.type_name else names_by_type[field.type]
            )
            oneof = oneofs[field.oneof_index] if field.HasField("oneof_index") else None
            fields[field.name] = (field.number, type_name, field.label == _F.LABEL_REPEATED, oneof)
        messages[message.name] = fields
    enums = {e.name: {v.name: v.number for v in e.value} for e in file.enum_type}
    return {"package": file.package, "messages": messages, "enums": enums}


def test_proto_file_and_python_descriptor_agree_field_by_field():
    from_proto = _parse_proto(chakra_schema.PROTO_PATH.read_text())
    from_python = _descriptor_view(chakra_schema.file_descriptor_proto())
    assert from_proto == from_python


def test_own_package_and_file_name_so_it_loads_beside_chakras():
    file = chakra_schema.file_descriptor_proto()
    assert file.package == "trainsim.chakra" != "ChakraProtoMsg"
    assert not file.name.endswith("et_def.proto")
    assert file.syntax == "proto3"


# Field numbers and types of chakra's et_def.proto as chakra-format.md §1 tabulates them.
_REFERENCE_FIELDS = {
    "GlobalMetadata": {"version": (1, "string"), "attr": (2, "AttributeProto")},
    "Node": {
        "id": (1, "uint64"), "name": (2, "string"), "type": (3, "NodeType"),
        "ctrl_deps": (4, "uint64"), "data_deps": (5, "uint64"),
        "start_time_micros": (6, "uint64"), "duration_micros": (7, "uint64"),
        "inputs": (8, "IOInfo"), "outputs": (9, "IOInfo"), "attr": (10, "AttributeProto"),
    },
    "IOInfo": {"values": (1, "string"), "shapes": (2, "string"), "types": (3, "string")},
    "Tensor": {
        "tensor_id": (1, "uint64"), "storage_id": (2, "uint64"), "offset": (3, "uint64"),
        "num_elem": (4, "uint64"), "elem_bytes": (5, "uint64"), "device": (6, "string"),
    },
    "AttributeProto": {
        "name": (1, "string"), "doc_string": (2, "string"),
        "double_val": (3, "double"), "int32_val": (7, "int32"), "int64_val": (9, "int64"),
        "uint64_val": (13, "uint64"), "sint64_val": (17, "sint64"), "fixed64_val": (21, "fixed64"),
        "bool_val": (27, "bool"), "bool_list": (28, "BoolList"), "string_val": (29, "string"),
        "bytes_list": (32, "BytesList"),
    },
    "BoolList": {"values": (1, "bool")},
}  # fmt: skip


@pytest.mark.parametrize("message", sorted(_REFERENCE_FIELDS))
def test_field_numbers_match_the_reference_schema(message):
    fields = _descriptor_view(chakra_schema.file_descriptor_proto())["messages"][message]
    for name, (number, type_name) in _REFERENCE_FIELDS[message].items():
        assert fields[name][:2] == (number, type_name), name


def test_enums_match_the_reference_schema():
    enums = _descriptor_view(chakra_schema.file_descriptor_proto())["enums"]
    assert enums["NodeType"]["COMM_COLL_NODE"] == 7
    assert enums["NodeType"]["METADATA_NODE"] == 1
    assert enums["CollectiveCommType"]["ALL_TO_ALL"] == 6
    assert enums["CollectiveCommType"]["BARRIER"] == 9


def test_oneof_holds_all_thirty_value_members():
    attribute = _descriptor_view(chakra_schema.file_descriptor_proto())["messages"][
        "AttributeProto"
    ]
    members = {name: spec[0] for name, spec in attribute.items() if spec[3] == "value"}
    assert sorted(members.values()) == list(range(3, 33))


def test_classes_round_trip_a_message():
    node = chakra_schema.Node(id=7, name="n", type=4, data_deps=[1, 2], duration_micros=5)
    node.attr.add(name="is_cpu_op", bool_val=False)
    again = chakra_schema.Node.FromString(node.SerializeToString())
    assert again == node
    assert again.attr[0].WhichOneof("value") == "bool_val"
