"""Column-wise Chakra Node encoder: a whole graph's node messages in one numpy buffer (DESIGN.md,
workload layer; wire layout in chakra-format.md §1 and §2).

The bytes are the ones protobuf's own ``Node.SerializeToString`` gives for the same values
(fields in number order, proto3 defaults left out, packed dependencies, the standard attributes
in :data:`~trainsim.workload.chakra.attrs.STANDARD_ATTRS` order, each oneof member written even
when zero), each message preceded by its varint length. Instead of one message object per node,
every field is a *piece*: a byte count per node (0 where the node lacks the field) and a writer
that fills the pieces of all nodes at once. A node's message is its pieces in order.

:func:`encode_frames` covers the values ASTRA-sim's types hold (non-negative ids and
dependencies, durations under 2**63 microseconds, attribute values in the written type's range,
``str`` names). For anything else it returns None and the caller takes the message-object path,
which refuses bad values naming the node. Units: ``duration_s`` seconds (written as whole
microseconds), sizes bytes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from trainsim.workload.chakra.attrs import INT32_MAX, INT64_MAX, STANDARD_ATTRS, AttrSpec
from trainsim.workload.chakra.wire import encode_varint
from trainsim.workload.graph import WorkloadGraph

_U64 = np.uint64
_VARINT_STEPS = np.array([1 << (7 * k) for k in range(1, 10)], dtype=_U64)
_TWO_63 = float(2**63)
EMPTY_NODE = b"\x08\x00"
"""A Node that serializes to nothing (id 0, all defaults) is written as an explicit ``id = 0``:
a zero-length message stops chakra's Python reader."""

Writer = Callable[[np.ndarray, np.ndarray], None]
"""Fills one piece of every node: ``(out buffer, absolute start of the piece per node)``."""


def varint_lengths(values: np.ndarray) -> np.ndarray:
    """Bytes of the unsigned varint of each uint64 value."""
    return np.searchsorted(_VARINT_STEPS, values, side="right").astype(np.int64) + 1


def varint_bytes(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The varints of ``values`` (uint64, with their ``lengths``) one after the other, as uint8."""
    owner = np.repeat(np.arange(len(values)), lengths)
    group = np.arange(owner.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    low7 = (values[owner] >> (7 * group).astype(_U64)) & _U64(0x7F)
    more = (group < lengths[owner] - 1).astype(_U64) << _U64(7)
    return (low7 | more).astype(np.uint8)


class Pieces:
    """The pieces of one message per node, in wire order; ``n`` nodes."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.lengths: list[np.ndarray] = []
        self.writers: list[Writer] = []
        self._total = np.zeros(n, dtype=np.int64)

    def total(self) -> np.ndarray:
        """Message length per node (so far)."""
        return self._total.copy()

    def add(self, lengths: np.ndarray, write: Writer) -> None:
        """One piece: its byte count per node and its writer."""
        self.lengths.append(lengths)
        self.writers.append(write)
        self._total += lengths

    def const(self, data: bytes, where: np.ndarray) -> None:
        """The same bytes at the nodes ``where`` (bool) is true."""
        payload = np.frombuffer(data, dtype=np.uint8)
        chosen = np.flatnonzero(where)
        def write(out: np.ndarray, starts: np.ndarray) -> None:
            if len(data) == 1:
                out[starts[chosen]] = payload[0]
            else:
                out[starts[chosen, None] + np.arange(len(data))] = payload

        self.add(np.where(where, len(data), 0), write)

    def varint(self, values: np.ndarray, where: np.ndarray) -> None:
        """Each chosen node's value (uint64) as a varint."""
        chosen = np.flatnonzero(where)
        values = values[chosen]
        lengths = varint_lengths(values)
        per_node = np.zeros(self.n, dtype=np.int64)
        per_node[chosen] = lengths
        one_byte = not lengths.size or int(lengths.max()) == 1

        def write(out: np.ndarray, starts: np.ndarray) -> None:
            if one_byte:
                out[starts[chosen]] = values
                return
            first = np.repeat(starts[chosen], lengths)
            out[first + np.arange(first.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)] = (
                varint_bytes(values, lengths)
            )

        self.add(per_node, write)

    def blob(self, data: np.ndarray, lengths: np.ndarray) -> None:
        """Consecutive slices of ``data`` (uint8), ``lengths[i]`` bytes for node i."""
        def write(out: np.ndarray, starts: np.ndarray) -> None:
            source_starts = np.cumsum(lengths) - lengths
            out[np.repeat(starts - source_starts, lengths) + np.arange(data.size)] = data

        self.add(lengths, write)

    def field(self, tag: bytes, values: np.ndarray, where: np.ndarray) -> None:
        """A varint field (its key bytes ``tag``, then the value) at the chosen nodes."""
        self.const(tag, where)
        self.varint(values, where)

    def delimited(self, tag: bytes, inner: Pieces, where: np.ndarray) -> None:
        """A length-delimited field holding ``inner``'s pieces, at the chosen nodes."""
        self.const(tag, where)
        self.varint(inner.total().astype(_U64), where)
        self.extend(inner)

    def extend(self, other: Pieces) -> None:
        """Append all of ``other``'s pieces."""
        for lengths, write in zip(other.lengths, other.writers, strict=True):
            self.add(lengths, write)

    def render(self) -> tuple[np.ndarray, np.ndarray]:
        """``(buffer, start of each node's message)``."""
        starts = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(self._total, out=starts[1:])
        out = np.empty(int(starts[-1]), dtype=np.uint8)
        at = starts[:-1].copy()
        for lengths, write in zip(self.lengths, self.writers, strict=True):
            write(out, at)
            at += lengths
        return out, starts


def _utf8(strings: list[str], where: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(bytes of the chosen strings one after the other, UTF-8 length per node)``; None when one
    is not a ``str`` or cannot be encoded."""
    chosen = [s for s, keep in zip(strings, where.tolist(), strict=True) if keep]
    try:
        joined = "".join(chosen)
    except TypeError:
        return None
    lengths = np.zeros(len(strings), dtype=np.int64)
    if joined.isascii():
        lengths[where] = np.fromiter(map(len, chosen), dtype=np.int64, count=len(chosen))
        return np.frombuffer(joined.encode("ascii"), dtype=np.uint8), lengths
    try:
        encoded = [s.encode("utf-8") for s in chosen]
    except UnicodeEncodeError:
        return None
    lengths[where] = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), lengths


def _string_field(
    pieces: Pieces, tag: bytes, strings: list[str], where: np.ndarray, *, omit_empty: bool = False
) -> bool:
    """A string field at the chosen nodes (not where it is empty, if ``omit_empty``: proto3
    leaves out a default that is not a oneof member); False if a value is not a valid string."""
    encoded = _utf8(strings, where)
    if encoded is None:
        return False
    data, lengths = encoded
    pieces.field(tag, lengths.astype(_U64), where & (lengths > 0) if omit_empty else where)
    pieces.blob(data, lengths)
    return True


def _packed_ids(pieces: Pieces, tag: bytes, ptr: np.ndarray, ids: np.ndarray) -> bool:
    if ids.size and ids.min() < 0:
        return False
    values = ids.astype(_U64)
    lengths = varint_lengths(values)
    cumulative = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=cumulative[1:])
    packed = cumulative[ptr[1:]] - cumulative[ptr[:-1]]
    where = packed > 0
    pieces.field(tag, packed.astype(_U64), where)
    pieces.blob(varint_bytes(values, lengths), packed)
    return True


def _signed64(values: np.ndarray) -> np.ndarray:
    """int64 (or narrower) values as protobuf writes int32/int64: two's complement uint64."""
    return values.astype(np.int64).view(_U64)


def _numeric_attribute(graph: WorkloadGraph, spec: AttrSpec, where: np.ndarray) -> np.ndarray | None:
    """Wire values (uint64) of one numeric attribute, or None if one of the chosen is out of range."""
    column = getattr(graph, spec.name)
    if spec.name == "num_ops":
        chosen = column[where]
        if not np.all((chosen >= 0) & (chosen < _TWO_63)):
            return None
        return np.rint(np.where(where, column, 0.0)).astype(_U64)
    if spec.name == "is_cpu_op":
        return column.astype(_U64)
    low, high = _RANGES[spec.name]
    chosen = column[where]
    if chosen.size and (chosen.min() < low or chosen.max() > high):
        return None
    return _signed64(np.where(where, column, 0))


_RANGES = {
    "tensor_size": (0, INT64_MAX),
    "comm_type": (0, 2**15 - 1),
    "comm_priority": (-(2**31), INT32_MAX),
    "comm_size": (0, INT64_MAX),
    "comm_src": (0, INT32_MAX),
    "comm_dst": (0, INT32_MAX),
    "comm_tag": (0, INT32_MAX),
}
_WIRE_TAG = {"bool_val": b"\xd8\x01", "int64_val": b"\x48", "uint64_val": b"\x68", "int32_val": b"\x38"}
_STRING_TAG = b"\xea\x01"  # string_val, field 29
_BOOL_LIST_TAG = b"\xe2\x01"  # bool_list, field 28
_ATTR_TAG = b"\x52"  # Node.attr, field 10
_NAME_TAG = b"\x0a"  # AttributeProto.name and BoolList.values, field 1


def _attribute(pieces: Pieces, graph: WorkloadGraph, spec: AttrSpec, where: np.ndarray) -> bool:
    """Append one standard attribute at the nodes ``where`` marks; False if a value does not fit."""
    inner = Pieces(graph.__len__())
    inner.const(_NAME_TAG + encode_varint(len(spec.name)) + spec.name.encode(), where)
    if spec.case == "string_val":
        inner.const(_STRING_TAG, where)
        if not _string_field(inner, b"", graph.pg_name, where):
            return False
    elif spec.case == "bool_list":
        if not _involved_dims(inner, graph, where):
            return False
    else:
        values = _numeric_attribute(graph, spec, where)
        if values is None:
            return False
        inner.field(_WIRE_TAG[spec.case], values, where)
    pieces.delimited(_ATTR_TAG, inner, where)
    return True


def _involved_dims(pieces: Pieces, graph: WorkloadGraph, where: np.ndarray) -> bool:
    positions = np.flatnonzero(where).tolist()
    if not all(p in graph.involved_dim for p in positions):
        return False
    flags = [bytes(map(bool, graph.involved_dim[p])) for p in positions]
    counts = np.zeros(len(graph), dtype=np.int64)
    counts[positions] = [len(f) for f in flags]
    has_values = counts > 0
    values = Pieces(len(graph))
    values.field(_NAME_TAG, counts.astype(_U64), has_values)
    values.blob(np.frombuffer(b"".join(flags), dtype=np.uint8), counts)
    pieces.const(_BOOL_LIST_TAG, where)
    pieces.delimited(b"", values, where)
    return True


def encode_frames(graph: WorkloadGraph) -> tuple[np.ndarray, np.ndarray] | None:
    """Every node's length-prefixed Node message, ignoring ``graph.extra``:
    ``(buffer, start of each node's frame, n + 1 entries)``; None when a value is outside what
    this encoder covers (see the module docstring)."""
    n = len(graph)
    if n and (graph.ids.min() < 0 or graph.types.min() < 0):
        return None
    micros = graph.duration_s * 1e6
    if not np.all((micros >= 0) & (micros < _TWO_63)):
        return None
    body = Pieces(n)
    ids = graph.ids.astype(_U64)
    body.field(b"\x08", ids, ids != 0)
    if not _string_field(body, b"\x12", graph.names, np.ones(n, dtype=bool), omit_empty=True):
        return None
    body.field(b"\x18", graph.types.astype(_U64), graph.types != 0)
    if not (
        _packed_ids(body, b"\x22", graph.ctrl_dep_ptr, graph.ctrl_dep_ids)
        and _packed_ids(body, b"\x2a", graph.data_dep_ptr, graph.data_dep_ids)
    ):
        return None
    whole_micros = np.rint(micros).astype(_U64)
    body.field(b"\x38", whole_micros, whole_micros != 0)
    present = graph.present
    for spec in STANDARD_ATTRS:
        where = (present & np.uint16(spec.bit)) != 0
        if where.any() and not _attribute(body, graph, spec, where):
            return None
    empty = body.total() == 0
    body.const(EMPTY_NODE, empty)
    framed = Pieces(n)
    framed.varint(body.total().astype(_U64), np.ones(n, dtype=bool))
    framed.extend(body)
    return framed.render()

