"""Chakra ET message classes, built at import time without protoc (DESIGN.md, workload layer).

The schema is the one of ``schema.proto`` beside this module (chakra's ``et_def.proto``
field numbers and types, package ``trainsim.chakra``; chakra-format.md §1). Instead of shipping
generated code, this module describes the same file as a ``FileDescriptorProto``, adds it to a
private descriptor pool and asks the installed protobuf runtime (>= 4.25, any backend) for the
classes. A test parses the ``.proto`` text and checks that both agree field by field.

Units: ``Node.duration_micros`` and ``Node.start_time_micros`` are microseconds; sizes in
attributes are bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from trainsim.enums import CommType, NodeType

PACKAGE = "trainsim.chakra"
PROTO_FILE = "trainsim/workload/chakra/schema.proto"
PROTO_PATH = Path(__file__).with_name("schema.proto")

_F = descriptor_pb2.FieldDescriptorProto

# (scalar case prefix, protobuf type, list message name), in AttributeProto field order:
# member i of the oneof is ``<prefix>_val`` = 3 + 2i and ``<prefix>_list`` = 4 + 2i.
ATTRIBUTE_CASES: tuple[tuple[str, int, str], ...] = (
    ("double", _F.TYPE_DOUBLE, "DoubleList"),
    ("float", _F.TYPE_FLOAT, "FloatList"),
    ("int32", _F.TYPE_INT32, "Int32List"),
    ("int64", _F.TYPE_INT64, "Int64List"),
    ("uint32", _F.TYPE_UINT32, "Uint32List"),
    ("uint64", _F.TYPE_UINT64, "Uint64List"),
    ("sint32", _F.TYPE_SINT32, "Sint32List"),
    ("sint64", _F.TYPE_SINT64, "Sint64List"),
    ("fixed32", _F.TYPE_FIXED32, "Fixed32List"),
    ("fixed64", _F.TYPE_FIXED64, "Fixed64List"),
    ("sfixed32", _F.TYPE_SFIXED32, "Sfixed32List"),
    ("sfixed64", _F.TYPE_SFIXED64, "Sfixed64List"),
    ("bool", _F.TYPE_BOOL, "BoolList"),
    ("string", _F.TYPE_STRING, "StringList"),
    ("bytes", _F.TYPE_BYTES, "BytesList"),
)


def _add_field(
    message: descriptor_pb2.DescriptorProto,
    name: str,
    number: int,
    field_type: int,
    *,
    repeated: bool = False,
    type_name: str | None = None,
    oneof_index: int | None = None,
) -> None:
    field = message.field.add(name=name, number=number, type=field_type)
    field.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    if type_name is not None:
        field.type_name = f".{PACKAGE}.{type_name}"
    if oneof_index is not None:
        field.oneof_index = oneof_index


def _attribute_messages(file: descriptor_pb2.FileDescriptorProto) -> None:
    attribute = file.message_type.add(name="AttributeProto")
    _add_field(attribute, "name", 1, _F.TYPE_STRING)
    _add_field(attribute, "doc_string", 2, _F.TYPE_STRING)
    attribute.oneof_decl.add(name="value")
    for i, (prefix, scalar_type, list_name) in enumerate(ATTRIBUTE_CASES):
        _add_field(attribute, f"{prefix}_val", 3 + 2 * i, scalar_type, oneof_index=0)
        _add_field(
            attribute,
            f"{prefix}_list",
            4 + 2 * i,
            _F.TYPE_MESSAGE,
            type_name=list_name,
            oneof_index=0,
        )
    for _, scalar_type, list_name in ATTRIBUTE_CASES:
        _add_field(file.message_type.add(name=list_name), "values", 1, scalar_type, repeated=True)


def _enums(file: descriptor_pb2.FileDescriptorProto) -> None:
    for proto_name, members in (("NodeType", NodeType), ("CollectiveCommType", CommType)):
        enum = file.enum_type.add(name=proto_name)
        for member in members:
            enum.value.add(name=member.name, number=int(member))


def _node_messages(file: descriptor_pb2.FileDescriptorProto) -> None:
    metadata = file.message_type.add(name="GlobalMetadata")
    _add_field(metadata, "version", 1, _F.TYPE_STRING)
    _add_field(metadata, "attr", 2, _F.TYPE_MESSAGE, repeated=True, type_name="AttributeProto")

    node = file.message_type.add(name="Node")
    _add_field(node, "id", 1, _F.TYPE_UINT64)
    _add_field(node, "name", 2, _F.TYPE_STRING)
    _add_field(node, "type", 3, _F.TYPE_ENUM, type_name="NodeType")
    _add_field(node, "ctrl_deps", 4, _F.TYPE_UINT64, repeated=True)
    _add_field(node, "data_deps", 5, _F.TYPE_UINT64, repeated=True)
    _add_field(node, "start_time_micros", 6, _F.TYPE_UINT64)
    _add_field(node, "duration_micros", 7, _F.TYPE_UINT64)
    _add_field(node, "inputs", 8, _F.TYPE_MESSAGE, type_name="IOInfo")
    _add_field(node, "outputs", 9, _F.TYPE_MESSAGE, type_name="IOInfo")
    _add_field(node, "attr", 10, _F.TYPE_MESSAGE, repeated=True, type_name="AttributeProto")

    io_info = file.message_type.add(name="IOInfo")
    for number, name in enumerate(("values", "shapes", "types"), start=1):
        _add_field(io_info, name, number, _F.TYPE_STRING)

    tensor = file.message_type.add(name="Tensor")
    for number, name in enumerate(
        ("tensor_id", "storage_id", "offset", "num_elem", "elem_bytes"), start=1
    ):
        _add_field(tensor, name, number, _F.TYPE_UINT64)
    _add_field(tensor, "device", 6, _F.TYPE_STRING)


def file_descriptor_proto() -> descriptor_pb2.FileDescriptorProto:
    """The schema as a ``FileDescriptorProto`` (what protoc would make of the ``.proto``)."""
    file = descriptor_pb2.FileDescriptorProto(name=PROTO_FILE, package=PACKAGE, syntax="proto3")
    _attribute_messages(file)
    _enums(file)
    _node_messages(file)
    return file


_POOL = descriptor_pool.DescriptorPool()
_POOL.AddSerializedFile(file_descriptor_proto().SerializeToString())


def _message_class(name: str) -> Any:
    return message_factory.GetMessageClass(_POOL.FindMessageTypeByName(f"{PACKAGE}.{name}"))


AttributeProto = _message_class("AttributeProto")
GlobalMetadata = _message_class("GlobalMetadata")
Node = _message_class("Node")
IOInfo = _message_class("IOInfo")
Tensor = _message_class("Tensor")
BoolList = _message_class("BoolList")
