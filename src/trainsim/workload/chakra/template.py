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
of valid UTF-8). The comparison is numpy over 8-byte words (a mask per word says which of its
bytes are values); each value is read as one unaligned 8-byte number at its start (an
overlapping view of the file, no copy), and a group string is decoded once per distinct value. Nothing else of the graph can differ, so the new graph shares every other
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
from trainsim.workload.graph import CodedNames, WorkloadGraph

_SRC, _DST, _PG = 0, 1, 2
_INT_KEY = 0x38  # int32_val, varint
_STRING_KEY = b"\xea\x01"  # string_val, length-delimited
_NAMES = {b"comm_src": _SRC, b"comm_dst": _DST, b"pg_name": _PG}
_KEY_BYTES = 7
"""A group string of up to 7 bytes is compared as one number, its bytes and its length; longer
ones are compared and decoded one by one."""
_INT_BYTES = 5  # an int32 varint within 0 .. INT32_MAX


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


def _sliding(buf: np.ndarray) -> np.ndarray:
    """The 8 bytes from every offset of ``buf`` (at least 8 bytes) as a little-endian uint64:
    a view, not a copy."""
    return np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))


class Template:
    """A decoded rank file and where its peer and group values lie (module docstring), with
    the tables that read those values from a file of its length, built once."""

    def __init__(self, data: bytes, graph: WorkloadGraph, layout: dict[str, Any]) -> None:
        self.raw = data
        self.graph = graph
        size = len(data)
        # the spans of each distinct attribute part, then of every node (numpy: no loop over
        # nodes); a longer peer varint (a negative value) is kept as fixed bytes: a file
        # differing there is decoded
        kept = [
            [(c, a, b - a) for c, a, b in _value_spans(t) if size >= 8 and (c == _PG or b - a <= _INT_BYTES)]
            for t in layout["tails"]
        ]
        counts = np.array([len(k) for k in kept], dtype=np.int64)
        table = np.array([x for k in kept for x in k], dtype=np.int64).reshape(-1, 3)
        which = np.asarray(layout["which"], dtype=np.int64)
        per_node = counts[which]
        node_of = np.repeat(np.arange(which.size), per_node)
        row = np.repeat((np.cumsum(counts) - counts)[which], per_node)
        row += np.arange(node_of.size) - np.repeat(np.cumsum(per_node) - per_node, per_node)
        column = table[row, 0].astype(np.int8)
        start = layout["tail_start"][node_of] + table[row, 1]
        length = table[row, 2]
        # which bytes of each 8-byte word are values (the last size % 8 bytes: one by one)
        is_value = np.zeros(size, dtype=bool)
        is_value[np.repeat(start, length) + np.arange(int(length.sum())) - np.repeat(np.cumsum(length) - length, length)] = True
        self.whole = size // 8 * 8
        self.words = np.frombuffer(data, dtype="<u8", count=size // 8)
        self.fixed = np.where(is_value[: self.whole], 0, 0xFF).astype(np.uint8).view("<u8")
        self.rest = np.frombuffer(data, dtype=np.uint8)[self.whole :]
        self.rest_fixed = ~is_value[self.whole :]
        # each value as one 8-byte read: from where (at most size - 8), shifted, masked
        at = np.minimum(start, max(size - 8, 0))
        shift = (8 * (start - at)).astype(np.uint64)
        keep = np.where(length >= 8, ~np.uint64(0), (np.uint64(1) << (8 * np.minimum(length, 7)).astype(np.uint64)) - np.uint64(1))
        sliding = _sliding(np.frombuffer(data, dtype=np.uint8)) if size >= 8 else np.zeros(0, dtype="<u8")
        ints = column != _PG
        self.int_at, self.int_shift, self.int_keep = at[ints], shift[ints], keep[ints]
        self.int_node, self.int_src = node_of[ints], column[ints] == _SRC
        self.int_length = length[ints]
        # a varint of L bytes: the continuation bit set in its first L - 1 bytes, clear in byte L
        marks = np.uint64(0x8080808080808080)
        self.int_more = (np.uint64(1) << (8 * self.int_length - 8).astype(np.uint64)) - np.uint64(1) & marks
        self.int_values = self._read(sliding, self.int_at, self.int_shift, self.int_keep)
        pg = ~ints
        narrow = pg & (length <= _KEY_BYTES)
        self.pg_at, self.pg_shift, self.pg_keep = at[narrow], shift[narrow], keep[narrow]
        self.pg_length = length[narrow].astype(np.uint64) << np.uint64(56)
        self.pg_node = node_of[narrow]
        self.pg_start, self.pg_stop = start[narrow], start[narrow] + length[narrow]
        self.pg_keys = self._keys(sliding)
        wide = pg & ~narrow
        self.wide = list(zip(start[wide].tolist(), (start + length)[wide].tolist(), node_of[wide].tolist(), strict=True))
        # each node's group as a number (CodedNames): in a file read from the template, spans
        # that held one value usually hold one new value, found without a sort, and the
        # numbers stay the template's
        index: dict[str, int] = {}
        some = np.zeros(len(counts), dtype=np.int64)
        some[which] = np.arange(which.size)  # a node of each attribute part (any: one group)
        by_tail = np.array([index.setdefault(graph.pg_name[p], len(index)) for p in some.tolist()], dtype=np.int32)
        self.codes = by_tail[which] if which.size else np.zeros(0, dtype=np.int32)
        self.values = tuple(index)
        if np.array(self.values, dtype=object)[self.codes].tolist() != graph.pg_name:  # changed since
            index.clear()
            self.codes = np.array([index.setdefault(name, len(index)) for name in graph.pg_name], dtype=np.int32)
            self.values = tuple(index)
        graph.pg_name = CodedNames(graph.pg_name, self.codes, self.values)
        self.pg_value = self.codes[self.pg_node].astype(np.int64)
        self._names = np.array(graph.pg_name, dtype=object)

    @staticmethod
    def _read(sliding: np.ndarray, at: np.ndarray, shift: np.ndarray, keep: np.ndarray) -> np.ndarray:
        return (sliding[at] >> shift) & keep if at.size else np.zeros(0, dtype=np.uint64)

    def _keys(self, sliding: np.ndarray) -> np.ndarray:
        """Each narrow group value as a number: its bytes and, in the top byte, its length."""
        return self._read(sliding, self.pg_at, self.pg_shift, self.pg_keep) | self.pg_length

    def match(self, data: bytes, source: str, rank: int) -> WorkloadGraph | None:
        """The graph of ``data`` (a file of the template's length), or None when it differs
        from the template elsewhere than in peer and group values."""
        if len(data) != len(self.raw):
            return None
        twin = copy.copy(self.graph)
        twin.rank, twin.source, twin.warnings = rank, source, []
        if data == self.raw:
            return twin
        now = np.frombuffer(data, dtype=np.uint8)
        words = np.frombuffer(data, dtype="<u8", count=self.words.size)
        differ = np.bitwise_xor(words, self.words)
        if np.bitwise_and(differ, self.fixed, out=differ).any():
            return None  # a byte outside every value differs
        if np.any((now[self.whole :] != self.rest) & self.rest_fixed):
            return None
        sliding = _sliding(now)
        if self.int_at.size and not self._peers(twin, sliding):
            return None
        if self.pg_at.size or self.wide:
            names = self._strings(data, sliding)
            if names is None:
                return None
            twin.pg_name = names
        return twin

    def _peers(self, twin: WorkloadGraph, sliding: np.ndarray) -> bool:
        """Put the peer values read from the file into ``twin``; False when one is not an
        int32 varint of its span's length within ``0 .. INT32_MAX``."""
        raw = self._read(sliding, self.int_at, self.int_shift, self.int_keep)
        changed = raw != self.int_values
        if not changed.any():
            return True
        raw = raw[changed]
        marks = np.uint64(0x8080808080808080) & self.int_keep[changed]
        if np.any(raw & marks != self.int_more[changed]):
            return False
        value = np.zeros(raw.size, dtype=np.uint64)
        for i in range(_INT_BYTES):
            value |= ((raw >> np.uint64(8 * i)) & np.uint64(0x7F)) << np.uint64(7 * i)
        if np.any(value > INT32_MAX):
            return False
        src = self.int_src[changed]
        nodes = self.int_node[changed]
        for name, chosen in (("comm_src", src), ("comm_dst", ~src)):
            if chosen.any():
                array = getattr(self.graph, name).copy()
                array[nodes[chosen]] = value[chosen].astype(np.int64)
                setattr(twin, name, array)
        return True

    def _strings(self, data: bytes, sliding: np.ndarray) -> list[str] | None:
        """The graph's groups read from ``data``: the template's list when none changed, else
        each distinct new value decoded once (None when one is not UTF-8)."""
        key = self._keys(sliding)
        wide = [(a, b, p) for a, b, p in self.wide if data[a:b] != self.raw[a:b]]
        if not wide and np.array_equal(key, self.pg_keys):
            return self.graph.pg_name
        old = self.pg_value
        some = np.full(len(self.values), -1, dtype=np.int64)
        some[old] = np.arange(key.size)  # a span of each old value (any)
        if np.array_equal(key, key[some[old]]):  # each old value has one new value
            present = np.flatnonzero(some >= 0)
            texts = self._decoded(data, some[present])
            if texts is None:
                return None
            values = list(self.values)
            for v, text in zip(present.tolist(), texts, strict=True):
                values[v] = text
            names = np.array(values, dtype=object)[self.codes]
            if not wide and len(set(values)) == len(values):
                return CodedNames(names.tolist(), self.codes, tuple(values))
        else:
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            texts = self._decoded(data, first)
            if texts is None:
                return None
            names = self._names.copy()
            names[self.pg_node] = np.array(texts, dtype=object)[inverse.reshape(-1)]
        for a, b, p in wide:
            try:
                names[p] = data[a:b].decode()
            except UnicodeDecodeError:
                return None
        return names.tolist()  # type: ignore[no-any-return]

    def _decoded(self, data: bytes, spans: np.ndarray) -> list[str] | None:
        """The narrow group values at ``spans`` (None when one is not UTF-8)."""
        texts = []
        for a, b in zip(self.pg_start[spans].tolist(), self.pg_stop[spans].tolist(), strict=True):
            try:
                texts.append(data[a:b].decode())
            except UnicodeDecodeError:
                return None
        return texts
