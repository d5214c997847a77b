"""Fast path of the Chakra reader: nodes in the canonical layout decoded without message objects
(DESIGN.md, workload layer; wire layout in chakra-format.md §1).

A node qualifies when its fields come in number order, each once (``id``, ``name``, ``type``,
packed ``ctrl_deps`` and ``data_deps``, ``duration_micros``, then standard attributes, each once,
``name`` first and its value in the member ASTRA-sim's tools write, within the range the graph
keeps), with nothing else: what chakra's tools and our writer produce. Such a node reads
exactly as protobuf's parse followed by the general path would read it, with no warning. Any
other node (legacy member types, unknown or unmodelled fields, values out of range, garbage) is
declined, and the general path in reader.py reads it, warns and fails as it always did.

Decoded rows are cached by bytes: the attribute part of a node (``duration_micros`` and the
attributes, often the same on thousands of nodes of a file) and whole nodes (often the same
across the rank files of one pipeline stage). Units: ``duration_micros`` in files is
microseconds; rows hold seconds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trainsim.workload.chakra.attrs import INT64_MAX, SPEC_BY_NAME
from trainsim.workload.graph import attribute_row

Row = tuple[int, int, str, tuple, Any, list[int], list[int]]
"""``(id, type, name, attribute_row(...), involved_dim, data_deps, ctrl_deps)``."""

_TWO_64 = 1 << 64
_TWO_63 = 1 << 63
_TWO_31 = 1 << 31
_STRICT_KEYS = {
    "bool_val": b"\xd8\x01",  # field 27, varint
    "int64_val": b"\x48",  # field 9, varint
    "uint64_val": b"\x68",  # field 13, varint
    "int32_val": b"\x38",  # field 7, varint
    "string_val": b"\xea\x01",  # field 29, length-delimited
    "bool_list": b"\xe2\x01",  # field 28, length-delimited
}


class _Decline(Exception):
    """The node is not in the canonical layout; the general path reads it."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """``(value, position after it)`` of the varint at ``pos``; declines past 10 bytes or 2**64."""
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            if value >= _TWO_64:
                raise _Decline
            return value, pos
        shift += 7
        if shift == 70:
            raise _Decline


def _delimited(data: bytes, pos: int) -> tuple[int, int]:
    """``(start, stop)`` of the length-delimited payload whose length varint is at ``pos``."""
    length, start = read_varint(data, pos)
    stop = start + length
    if stop > len(data):
        raise _Decline
    return start, stop


def _packed_ids(data: bytes, start: int, stop: int) -> list[int]:
    """The packed repeated uint64 payload ``data[start:stop]`` (node ids, int64 range)."""
    ids = []
    while start < stop:
        value, start = read_varint(data, start)
        ids.append(value)
    if start != stop or (ids and max(ids) > INT64_MAX):
        raise _Decline
    return ids


def _bools(data: bytes) -> list[int]:
    """The values of a BoolList message written packed, one byte each."""
    if not data:
        return []
    start, stop = _delimited(data, 1)
    if data[0] != 0x0A or stop != len(data) or max(data[start:stop], default=0) >= 0x80:
        raise _Decline
    return list(data[start:stop])


def _wire_value(case: str, data: bytes, pos: int) -> tuple[Any, int]:
    """The value of oneof member ``case`` at ``pos`` as protobuf gives it, and the end."""
    if case == "string_val":
        start, stop = _delimited(data, pos)
        return data[start:stop].decode(), stop
    if case == "bool_list":
        start, stop = _delimited(data, pos)
        return _bools(data[start:stop]), stop
    value, pos = read_varint(data, pos)
    if case == "bool_val":
        return value != 0, pos
    if case == "int64_val":
        return (value - _TWO_64 if value >= _TWO_63 else value), pos
    if case == "int32_val":
        if _TWO_31 <= value < _TWO_64 - _TWO_31:
            raise _Decline
        return (value - _TWO_64 if value >= _TWO_63 else value), pos
    return value, pos


def _attribute(data: bytes, pos: int, stop: int) -> tuple[str, Any]:
    """``(name, graph value)`` of the AttributeProto in ``data[pos:stop]``."""
    if data[pos] != 0x0A:
        raise _Decline
    start, pos = _delimited(data, pos + 1)
    spec = SPEC_BY_NAME.get(data[start:pos].decode())
    if spec is None:
        raise _Decline
    key = _STRICT_KEYS[spec.case]
    if not data.startswith(key, pos):
        raise _Decline
    raw, pos = _wire_value(spec.case, data, pos + len(key))
    if pos != stop:
        raise _Decline
    try:
        return spec.name, spec.convert(raw)
    except (ValueError, OverflowError) as exc:
        raise _Decline from exc


def _attributes(data: bytes) -> tuple[tuple, Any]:
    """``(attribute_row(...), involved_dim)`` of a node's bytes from ``duration_micros`` on."""
    pos, end, micros = 0, len(data), 0
    if end and data[0] == 0x38:
        micros, pos = read_varint(data, 1)
    values: dict[str, Any] = {}
    while pos < end:
        if data[pos] != 0x52:
            raise _Decline
        start, stop = _delimited(data, pos + 1)
        name, value = _attribute(data, start, stop)
        if name in values:
            raise _Decline
        values[name] = value
        pos = stop
    return attribute_row(duration_s=micros / 1e6, **values), values.get("involved_dim")


class RowCache:
    """Decoded rows by bytes, shared by the files of one read; at most ``limit`` whole nodes."""

    def __init__(self, limit: int = 1 << 20) -> None:
        self.limit = limit
        self.nodes: dict[bytes, Row | None] = {}
        self.tails: dict[bytes, tuple[tuple, Any] | None] = {}
        self.names: dict[str, str] = {}

    def clear(self) -> None:
        self.nodes.clear()
        self.tails.clear()
        self.names.clear()

    def row(self, data: bytes) -> Row | None:
        """The row of one serialized Node, or None when the general path must read it."""
        try:
            return self.nodes[data]
        except KeyError:
            pass
        if len(self.nodes) >= self.limit:
            self.clear()
        row = self.nodes[data] = self._decode(data)
        return row

    def _decode(self, data: bytes) -> Row | None:
        try:
            node_id, node_type, name, pos = 0, 0, "", 0
            end = len(data)
            if pos < end and data[pos] == 0x08:
                node_id, pos = read_varint(data, pos + 1)
                if node_id > INT64_MAX:
                    return None
            if pos < end and data[pos] == 0x12:
                start, pos = _delimited(data, pos + 1)
                name = data[start:pos].decode()
            if pos < end and data[pos] == 0x18:
                node_type = data[pos + 1]
                if node_type >= 0x80:
                    return None
                pos += 2
            ctrl_span = data_span = (0, 0)
            if pos < end and data[pos] == 0x22:
                ctrl_span = _delimited(data, pos + 1)
                pos = ctrl_span[1]
            if pos < end and data[pos] == 0x2A:
                data_span = _delimited(data, pos + 1)
                pos = data_span[1]
            # the attributes first: a node they decline (extra fields, legacy types) goes to
            # protobuf without its dependency lists decoded here in vain
            tail = data[pos:]
            if tail in self.tails:
                attributes = self.tails[tail]
            else:
                attributes = self.tails[tail] = self._tail(tail)
            if attributes is None:
                return None
            ctrl_deps = _packed_ids(data, *ctrl_span)
            data_deps = _packed_ids(data, *data_span)
        except (_Decline, IndexError, UnicodeDecodeError):
            return None
        return (node_id, node_type, name, attributes[0], attributes[1], data_deps, ctrl_deps)

    @staticmethod
    def _tail(data: bytes) -> tuple[tuple, Any] | None:
        try:
            return _attributes(data)
        except (_Decline, IndexError, UnicodeDecodeError):
            return None


# ---------------------------------------------------------------------------------------------
# whole files, column-wise

_TEN = np.arange(10)
_SHIFTS = (7 * _TEN).astype(np.uint64)
_PAD = bytes(16)
"""Zero bytes after the file, so a 10-byte window read at any byte of it stays in the buffer."""


def _frame_bounds(data: bytes) -> tuple[list[int], list[int]]:
    """Start and stop of each length-prefixed message; declines on a bad prefix or short file."""
    starts, stops = [], []
    pos, end = 0, len(data)
    while pos < end:
        length = data[pos]
        if length < 0x80:
            pos += 1
        else:
            length, pos = read_varint(data, pos)
        starts.append(pos)
        pos += length
        stops.append(pos)
    if pos != end:
        raise _Decline
    return starts, stops


class _Cursor:
    """One read position per message, advanced field by field over all messages at once."""

    def __init__(self, data: bytes, starts: list[int], stops: list[int]) -> None:
        self.data = data
        self.buf = np.frombuffer(data + _PAD, dtype=np.uint8)
        self.pos = np.array(starts, dtype=np.int64)
        self.stop = np.array(stops, dtype=np.int64)

    def key(self, key: int) -> np.ndarray:
        """Positions of the messages whose next byte is the single-byte field key ``key``;
        steps past it."""
        chosen = np.flatnonzero((self.pos < self.stop) & (self.buf[self.pos] == key))
        self.pos[chosen] += 1
        return chosen

    def varint(self, chosen: np.ndarray) -> np.ndarray:
        """The varint at the chosen messages' positions (uint64); steps past it."""
        at = self.pos[chosen]
        window = self.buf[at[:, None] + _TEN]
        ends = window < 0x80
        if not ends.any(axis=1).all():
            raise _Decline
        lengths = ends.argmax(axis=1) + 1
        if np.any(at + lengths > self.stop[chosen]) or np.any((lengths == 10) & (window[:, 9] > 1)):
            raise _Decline
        groups = (window & 0x7F).astype(np.uint64) << _SHIFTS
        groups[lengths[:, None] <= _TEN] = 0
        self.pos[chosen] = at + lengths
        return np.bitwise_or.reduce(groups, axis=1)

    def delimited(self, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(start, length)`` of each message's next length-delimited payload, 0 where the
        message is not chosen; steps past it."""
        lengths = self.varint(chosen).astype(np.int64)
        start = np.zeros(len(self.pos), dtype=np.int64)
        start[chosen] = self.pos[chosen]
        length = np.zeros(len(self.pos), dtype=np.int64)
        length[chosen] = lengths
        if np.any(start + length > self.stop):
            raise _Decline
        self.pos[chosen] += lengths
        return start, length

    def gather(self, start: np.ndarray, length: np.ndarray) -> np.ndarray:
        """The bytes of the ranges one after the other."""
        firsts = np.cumsum(length) - length
        return self.buf[np.repeat(start - firsts, length) + np.arange(int(length.sum()))]

    def strings(self, key: int) -> list[str]:
        """A string field per message (``""`` where absent)."""
        start, length = self.delimited(self.key(key))
        raw = self.gather(start, length)
        bounds = np.zeros(len(length) + 1, dtype=np.int64)
        np.cumsum(length, out=bounds[1:])
        edges = bounds.tolist()
        if raw.size == 0 or raw.max() < 0x80:
            text = raw.tobytes().decode("ascii")
            return [text[a:b] for a, b in zip(edges[:-1], edges[1:], strict=True)]
        data = self.data
        return [
            data[a : a + n].decode() for a, n in zip(start.tolist(), length.tolist(), strict=True)
        ]

    def packed_ids(self, start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A packed repeated uint64 field per message, its payloads at ``(start, length)``
        (:meth:`delimited`), as CSR ``(ptr, values)`` (int64)."""
        raw = self.gather(start, length)
        ends = raw < 0x80
        bounds = np.zeros(len(length) + 1, dtype=np.int64)
        np.cumsum(length, out=bounds[1:])
        nonempty = length > 0
        if raw.size and not ends[bounds[1:][nonempty] - 1].all():
            raise _Decline  # a payload ending inside a varint
        counted = np.zeros(raw.size + 1, dtype=np.int64)
        np.cumsum(ends, out=counted[1:])
        ptr = counted[bounds]
        last = np.flatnonzero(ends)
        first = np.zeros(last.size, dtype=np.int64)
        first[1:] = last[:-1] + 1
        sizes = last - first + 1
        if np.any(sizes > 10) or np.any((sizes == 10) & (raw[last] > 1)):
            raise _Decline
        within = np.arange(raw.size) - np.repeat(first, sizes)
        groups = (raw & 0x7F).astype(np.uint64) << _SHIFTS[within]
        values = np.bitwise_or.reduceat(groups, first) if raw.size else groups
        if np.any(values > INT64_MAX):
            raise _Decline
        return ptr, values.astype(np.int64)

    def tails(self) -> list[bytes]:
        """Each message's bytes from the current position to its end."""
        data = self.data
        return [data[a:b] for a, b in zip(self.pos.tolist(), self.stop.tolist(), strict=True)]


_TAIL_COLUMNS = (
    ("duration_s", np.float64), ("is_cpu_op", np.bool_), ("num_ops", np.float64),
    ("tensor_size", np.int64), ("comm_type", np.int16), ("comm_size", np.int64),
    ("comm_src", np.int32), ("comm_dst", np.int32), ("comm_tag", np.int64),
    ("comm_priority", np.int32), ("pg_name", None), ("present", np.uint16),
)  # fmt: skip
"""The WorkloadGraph fields of :func:`attribute_row`'s values, in its order (None: a list)."""


_PROBE_NODES = 8


def metadata_is_valid(data: bytes) -> bool:
    """Whether ``data`` parses as a GlobalMetadata message. The forms the writers produce (a
    ``version`` string, ``attr`` entries of a ``name`` and a ``string_val``: chakra's converter
    writes ``schema``) are read here when every string is ASCII; anything else
    by protobuf, which is then imported (so a run from such files never loads it)."""
    if _ascii_fields(data, {b"\x0a": None, b"\x12": {b"\x0a": None, b"\xea\x01": None}}):
        return True
    from google.protobuf.message import DecodeError

    from trainsim.workload.chakra import schema

    try:
        schema.GlobalMetadata.FromString(data)
    except DecodeError:
        return False
    return True


def _ascii_fields(data: bytes, tags: dict[bytes, Any]) -> bool:
    """Whether ``data`` is only length-delimited fields of ``tags`` (field key bytes; a value of
    None: an ASCII string, else a message of those tags)."""
    i = 0
    while i < len(data):
        tag = next((t for t in tags if data.startswith(t, i)), None)
        if tag is None:
            return False
        i += len(tag)
        size = shift = 0
        while i < len(data) and shift < 28 and data[i] & 0x80:
            size |= (data[i] & 0x7F) << shift
            i, shift = i + 1, shift + 7
        if i >= len(data) or data[i] & 0x80:
            return False
        size |= data[i] << shift
        body = data[i + 1 : i + 1 + size]
        if len(body) < size or not (body.isascii() if tags[tag] is None else _ascii_fields(body, tags[tag])):
            return False
        i += 1 + size
    return True


def decode_file(
    data: bytes,
    tails: dict[bytes, tuple[tuple, Any] | None],
    names_cache: dict[str, str] | None = None,
    layout: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The WorkloadGraph fields (all but ``source``, ``rank``, ``warnings``, ``use_ctrl_deps``)
    of a whole uncompressed file whose nodes are all canonical and in ascending unique id order,
    metadata included; None otherwise (the row-by-row reader then reads it). ``tails`` caches
    the attribute parts by bytes, as :class:`RowCache` does; ``names_cache`` keeps one object per
    distinct node name (the ranks of a stage repeat every name: one copy, not one per rank).
    ``layout``, when given, receives where each node's attribute part starts (``tail_start``),
    which distinct one it is (``which``) and the distinct ones (``tails``): ``template.py``
    reads the files that differ from this one only in peers and groups from that."""
    try:
        starts, stops = _frame_bounds(data)
        if not starts:
            return None
        metadata = data[starts[0] : stops[0]]
        if not metadata_is_valid(metadata):
            return None
        # every node must be canonical: a first one that is not (a traced file) ends it here
        probe = RowCache(limit=_PROBE_NODES)
        probe.tails = tails
        if any(probe.row(data[a:b]) is None for a, b in zip(starts[1 : 1 + _PROBE_NODES], stops[1 : 1 + _PROBE_NODES], strict=True)):
            return None
        cursor = _Cursor(data, starts[1:], stops[1:])
        n = len(cursor.pos)
        ids = np.zeros(n, dtype=np.int64)
        with_id = cursor.key(0x08)
        node_ids = cursor.varint(with_id)
        if np.any(node_ids > INT64_MAX):
            return None
        ids[with_id] = node_ids
        if np.any(ids[1:] <= ids[:-1]):
            return None
        names = cursor.strings(0x12)
        if names_cache is not None:
            names = [names_cache.setdefault(name, name) for name in names]
        types = np.zeros(n, dtype=np.int8)
        typed = cursor.key(0x18)
        type_values = cursor.varint(typed)
        if np.any(type_values >= 0x80):
            return None
        types[typed] = type_values
        ctrl_span = cursor.delimited(cursor.key(0x22))
        data_span = cursor.delimited(cursor.key(0x2A))
        # the attributes before the dependency lists: a file they decline goes to the
        # row-by-row reader without its dependencies decoded here in vain
        index: dict[bytes, int] = {}
        which = [index.setdefault(tail, len(index)) for tail in cursor.tails()]
        tail_start = cursor.pos.copy()
        rows = []
        for tail in index:
            if tail not in tails:
                tails[tail] = RowCache._tail(tail)
            row = tails[tail]
            if row is None:
                return None
            rows.append(row)
        ctrl_ptr, ctrl_ids = cursor.packed_ids(*ctrl_span)
        data_ptr, data_ids = cursor.packed_ids(*data_span)
    except (_Decline, IndexError, UnicodeDecodeError):
        return None
    fields: dict[str, Any] = {
        "ids": ids, "types": types, "names": names,
        "data_dep_ptr": data_ptr, "data_dep_ids": data_ids,
        "ctrl_dep_ptr": ctrl_ptr, "ctrl_dep_ids": ctrl_ids,
        "extra": [b""] * n, "metadata": metadata,
    }  # fmt: skip
    positions = np.array(which, dtype=np.int64)
    unique_columns = list(zip(*(row[0] for row in rows), strict=True)) or [()] * len(_TAIL_COLUMNS)
    for (name, dtype), values in zip(_TAIL_COLUMNS, unique_columns, strict=True):
        if dtype is None:
            fields[name] = [values[w] for w in which]
        else:
            fields[name] = np.fromiter(values, dtype=dtype, count=len(values))[positions]
    dims = [row[1] for row in rows]
    fields["involved_dim"] = (
        {p: dims[w] for p, w in enumerate(which) if dims[w] is not None}
        if any(d is not None for d in dims)
        else {}
    )
    if layout is not None:
        layout.update(tail_start=tail_start, which=which, tails=list(index))
    return fields
