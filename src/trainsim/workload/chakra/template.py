"""Rank files that differ from one already read only in peers and groups, read without a
decode (DESIGN.md, workload layer; ``workload/chakra``; wire layout in chakra-format.md §1).

The ranks of one pipeline stage, and the stages of a data-parallel replica, write the same
nodes with other peer ranks (``comm_src``, ``comm_dst``) and communicator groups
(``pg_name``). When such a value keeps its length in bytes (a rank id of as many digits, a
varint of as many bytes) the two files have the same length and differ only inside those
values. A :class:`Template` is a file decoded column-wise (``decode.decode_file``) with the
byte span of each such value; a file of the same length is compared with it byte for byte
(numpy), and when every differing byte lies inside one of those spans the file is the template
with those values replaced: each replaced value is decoded from the new bytes and checked as
the decoder checks it (a varint ending where the span ends, within ``0 .. INT32_MAX``; a string
of valid UTF-8). Nothing else of the graph can differ, so the new graph shares every other
array with the template's (its canonical form), which also makes the equivalence proof of
``system/symmetry/equivalence.py`` cheap (arrays compared by identity). Any other difference
(a length byte, a duration, a dependency) refuses the match and the file is decoded.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from trainsim.workload.chakra.attrs import INT32_MAX
from trainsim.workload.chakra.decode import read_varint
from trainsim.workload.graph import WorkloadGraph

_SRC, _DST, _PG = 0, 1, 2
_INT_KEY = 0x38  # int32_val, varint
_STRING_KEY = b"\xea\x01"  # string_val, length-delimited
_NAMES = {b"comm_src": _SRC, b"comm_dst": _DST, b"pg_name": _PG}
_SEVEN = (7 * np.arange(5)).astype(np.int64)


def _value_spans(tail: bytes) -> list[tuple[int, int, int]]:
    """``(column, start, stop)`` of the peer and group values in one node's attribute part (a
    part ``decode_file`` accepted: canonical layout)."""
    out = []
    pos, end = 0, len(tail)
    if end and tail[0] == 0x38:  # duration_micros
        _, pos = read_varint(tail, 1)
    while pos < end:
        length, start = read_varint(tail, pos + 1)  # 0x52: an attribute
        stop = start + length
        name_len, name_start = read_varint(tail, start + 1)  # 0x0A: its name
        at = name_start + name_len
        column = _NAMES.get(tail[name_start:at])
        if column == _PG:
            n, value_start = read_varint(tail, at + len(_STRING_KEY))
            out.append((column, value_start, value_start + n))
        elif column is not None:
            out.append((column, at + 1, stop))
        pos = stop
    return out


class Template:
    """A decoded rank file and where its peer and group values lie (module docstring)."""

    def __init__(self, data: bytes, graph: WorkloadGraph, layout: dict[str, Any]) -> None:
        self.data = np.frombuffer(data, dtype=np.uint8)
        self.graph = graph
        rel = [_value_spans(t) for t in layout["tails"]]
        starts, stops, nodes, columns = [], [], [], []
        tail_start = layout["tail_start"].tolist()
        for node, (w, base) in enumerate(zip(layout["which"], tail_start, strict=True)):
            for column, a, b in rel[w]:
                starts.append(base + a)
                stops.append(base + b)
                nodes.append(node)
                columns.append(column)
        self.start = np.asarray(starts, dtype=np.int64)
        self.stop = np.asarray(stops, dtype=np.int64)
        self.node = np.asarray(nodes, dtype=np.int64)
        self.column = np.asarray(columns, dtype=np.int8)
        self._names: np.ndarray | None = None  # the template's groups as an object array
        self.raw = data
        lengths = self.stop - self.start
        self.span_of_byte = np.repeat(np.arange(len(lengths)), lengths)
        firsts = np.cumsum(lengths) - lengths
        self.value_bytes = np.repeat(self.start - firsts, lengths) + np.arange(int(lengths.sum()))
        self.values = self.data[self.value_bytes]

    def match(self, data: bytes, source: str, rank: int) -> WorkloadGraph | None:
        """The graph of ``data`` (a file of the template's length), or None when it differs
        from the template elsewhere than in peer and group values."""
        now = np.frombuffer(data, dtype=np.uint8)
        twin = copy.copy(self.graph)
        twin.rank, twin.source, twin.warnings = rank, source, []
        if data == self.raw:
            return twin
        # equal outside the values: the new bytes with the template's values put back
        now_values = now[self.value_bytes]
        mixed = now.copy()
        mixed[self.value_bytes] = self.values
        if not np.array_equal(mixed, self.data):
            return None
        changed = self.span_of_byte[np.flatnonzero(now_values != self.values)]
        touched = changed[np.concatenate(([True], changed[1:] != changed[:-1]))]  # ascending
        column = self.column[touched]
        ints = touched[column != _PG]
        if ints.size:
            ints_read = self._ints(now, ints)
            if ints_read is None:
                return None
            src = self.column[ints] == _SRC
            for name, chosen in (("comm_src", src), ("comm_dst", ~src)):
                if chosen.any():
                    array = getattr(self.graph, name).copy()
                    array[self.node[ints[chosen]]] = ints_read[chosen]
                    setattr(twin, name, array)
        strings = touched[column == _PG]
        if strings.size:
            names = self._strings(data, now, strings)
            if names is None:
                return None
            twin.pg_name = names
        return twin

    def _strings(self, data: bytes, now: np.ndarray, spans: np.ndarray) -> list[str] | None:
        """The template's groups with the strings at ``spans`` read from ``data`` (each
        distinct one decoded once; None when one is not UTF-8)."""
        start, stop = self.start[spans], self.stop[spans]
        length = stop - start
        width = int(length.max())
        if width <= 7:  # one integer per string: its bytes and its length
            window = now[np.minimum(start[:, None] + np.arange(width), len(now) - 1)].astype(np.int64)
            window[np.arange(width) >= length[:, None]] = 0
            keys = (window << (8 * np.arange(width))).sum(axis=1) | (length << 56)
            distinct, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        else:
            first = np.arange(len(spans))
            inverse = first
        texts = []
        for a, b in zip(start[first].tolist(), stop[first].tolist(), strict=True):
            try:
                texts.append(data[a:b].decode())
            except UnicodeDecodeError:
                return None
        if self._names is None:
            self._names = np.array(self.graph.pg_name, dtype=object)
        names = self._names.copy()
        names[self.node[spans]] = np.array(texts, dtype=object)[inverse.reshape(-1)]
        return names.tolist()  # type: ignore[no-any-return]

    def _ints(self, now: np.ndarray, spans: np.ndarray) -> np.ndarray | None:
        """The int32 varints at ``spans``: each must end exactly where its span ends (the
        template's varint had that length) and lie within ``0 .. INT32_MAX``."""
        start, stop = self.start[spans], self.stop[spans]
        length = stop - start
        if np.any(length > 5):
            return None
        window = now[np.minimum(start[:, None] + np.arange(5), len(now) - 1)].astype(np.int64)
        inside = np.arange(5) < length[:, None]
        last = np.arange(5) == (length - 1)[:, None]
        more = window >= 0x80
        if not np.all(more[inside & ~last]) or np.any(more[last]):
            return None
        values = np.where(inside, (window & 0x7F) << _SEVEN, 0).sum(axis=1)
        if np.any(values > INT32_MAX):
            return None
        return values
