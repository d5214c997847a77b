"""One rank's execution graph as parallel arrays (DESIGN.md, workload layer).

Nodes are stored by position ``0..n-1`` (sorted by node id); every attribute the simulator
reads is a numpy array, so a graph of a million nodes is a handful of arrays, not a million
objects. Dependencies are CSR arrays of *node ids* (``data_dep_ptr``/``data_dep_ids``);
:meth:`WorkloadGraph.dep_indices` resolves them to positions.

Fields a simulator does not read (IOInfo, ``start_time_micros``, attributes outside the standard
set of chakra-format.md §1.5) are kept per node as ``extra``: the serialized bytes of a Chakra
``Node`` message holding only those fields (``b""`` when there are none), so a read-then-write
round trip loses nothing.

Which standard attributes a node carries is the bitmask ``present`` (one :class:`Attr` bit per
attribute), so a writer emits exactly the attributes that were read or set, zero values included.
Absent attributes still hold a neutral value in their array (0, ``""``, or the sentinels
:data:`ABSENT` / ``NO_COMM_TYPE`` for ``comm_src``/``comm_dst``/``comm_tag``/``comm_type``), so
the simulator can read the arrays without consulting the mask.

Units: ``duration_s`` in seconds (Chakra's ``duration_micros`` / 1e6); ``num_ops`` in FLOP;
``tensor_size`` and ``comm_size`` in bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import IntFlag
from itertools import chain
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from trainsim.enums import NO_COMM_TYPE, NodeType

if TYPE_CHECKING:
    from typing_extensions import Unpack

ABSENT = -1
"""Value of ``comm_src``/``comm_dst``/``comm_tag`` when the attribute is not in the file."""


class Attr(IntFlag):
    """One bit per standard node attribute (chakra-format.md §1.5), in the order writers emit them."""

    IS_CPU_OP = 1
    NUM_OPS = 2
    TENSOR_SIZE = 4
    COMM_TYPE = 8
    COMM_PRIORITY = 16
    COMM_SIZE = 32
    COMM_SRC = 64
    COMM_DST = 128
    COMM_TAG = 256
    PG_NAME = 512
    INVOLVED_DIM = 1024


class CodedNames(list[str]):
    """A list of strings (a graph's ``pg_name``) that also says which are equal: ``codes[p]``
    (int32 numpy array) is the index in ``values`` (distinct strings) of item ``p``. Readers
    that know it for free (``workload/chakra/template.py``) build it, so that finding equal
    groups (``system/symmetry/equivalence.py``) needs no pass over the strings. Any change to
    the list drops ``codes`` (None): a stale code is never read."""

    codes: np.ndarray | None
    values: tuple[str, ...]

    def __init__(self, items: Sequence[str], codes: np.ndarray | None, values: tuple[str, ...]) -> None:
        super().__init__(items)
        self.codes, self.values = codes, values

    def _changed(self) -> None:
        self.codes = None

    def __setitem__(self, key, value):  # type: ignore[no-untyped-def]
        self._changed()
        super().__setitem__(key, value)

    def __delitem__(self, key):  # type: ignore[no-untyped-def]
        self._changed()
        super().__delitem__(key)

    def __iadd__(self, other):  # type: ignore[no-untyped-def,misc]
        self._changed()
        return super().__iadd__(other)

    def __imul__(self, n):  # type: ignore[no-untyped-def,misc]
        self._changed()
        return super().__imul__(n)

    def append(self, item: str) -> None:
        self._changed()
        super().append(item)

    def extend(self, items):  # type: ignore[no-untyped-def]
        self._changed()
        super().extend(items)

    def insert(self, index, item):  # type: ignore[no-untyped-def]
        self._changed()
        super().insert(index, item)

    def pop(self, index=-1):  # type: ignore[no-untyped-def]
        self._changed()
        return super().pop(index)

    def remove(self, item):  # type: ignore[no-untyped-def]
        self._changed()
        super().remove(item)

    def clear(self) -> None:
        self._changed()
        super().clear()

    def sort(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self._changed()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._changed()
        super().reverse()

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (CodedNames, (list(self), self.codes, self.values))


@dataclass
class WorkloadGraph:
    """One rank's graph. All arrays have length ``n``; positions are sorted by ``ids``."""

    ids: np.ndarray  # int64 node ids, ascending
    types: np.ndarray  # int8 NodeType
    names: list[str]
    duration_s: np.ndarray  # float64, replay duration in seconds
    is_cpu_op: np.ndarray  # bool
    num_ops: np.ndarray  # float64 FLOP (0 when absent)
    tensor_size: np.ndarray  # int64 bytes (0 when absent)
    comm_type: np.ndarray  # int16 CommType, NO_COMM_TYPE when absent
    comm_size: np.ndarray  # int64 bytes (0 when absent)
    comm_src: np.ndarray  # int32 rank, ABSENT when absent
    comm_dst: np.ndarray  # int32 rank, ABSENT when absent
    comm_tag: np.ndarray  # int64, ABSENT when absent
    comm_priority: np.ndarray  # int32 (0 when absent)
    pg_name: list[str]  # communicator group id ("" = all ranks)
    involved_dim: dict[int, tuple[bool, ...]]  # position -> dims; absent = all involved
    data_dep_ptr: np.ndarray  # int64, length n+1
    data_dep_ids: np.ndarray  # int64 node ids
    ctrl_dep_ptr: np.ndarray  # int64, length n+1
    ctrl_dep_ids: np.ndarray  # int64 node ids
    extra: list[bytes]  # serialized Node with the fields not modelled above
    present: np.ndarray  # uint16 bitmask of Attr: which standard attributes each node carries
    metadata: bytes = b""  # serialized GlobalMetadata as read (b"" = none)
    source: str = ""  # file the graph came from, for error messages
    rank: int = 0
    warnings: list[str] = field(default_factory=list)
    use_ctrl_deps: bool = True
    """Whether ctrl_deps order execution (ASTRA-sim's FeederV3: yes; the legacy feeder: no).
    They are kept, and written, either way."""

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def position_of(self) -> dict[int, int]:
        """Map node id -> position."""
        return {int(i): p for p, i in enumerate(self.ids.tolist())}

    def deps_of(self, pos: int, *, ctrl: bool | None = None) -> list[int]:
        """Node ids position ``pos`` depends on: data deps, then ctrl deps if ``ctrl``
        (default: :attr:`use_ctrl_deps`)."""
        deps = self.data_dep_ids[self.data_dep_ptr[pos] : self.data_dep_ptr[pos + 1]].tolist()
        if self.use_ctrl_deps if ctrl is None else ctrl:
            deps += self.ctrl_dep_ids[self.ctrl_dep_ptr[pos] : self.ctrl_dep_ptr[pos + 1]].tolist()
        return deps

    def dep_indices(self, *, ctrl: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Dependencies as CSR ``(ptr, positions)``: node ``p`` depends on
        ``positions[ptr[p]:ptr[p+1]]`` (data deps, then ctrl deps if ``ctrl``, default
        :attr:`use_ctrl_deps`); ``-1`` marks an id that is not in the graph."""
        use_ctrl = self.use_ctrl_deps if ctrl is None else ctrl
        if not use_ctrl:
            return self.data_dep_ptr, self.positions_of_ids(self.data_dep_ids)
        n = len(self)
        rows = np.concatenate(
            [
                np.repeat(np.arange(n), np.diff(self.data_dep_ptr)),
                np.repeat(np.arange(n), np.diff(self.ctrl_dep_ptr)),
            ]
        )
        order = np.argsort(rows, kind="stable")
        ptr = self.data_dep_ptr + self.ctrl_dep_ptr
        ids = np.concatenate([self.data_dep_ids, self.ctrl_dep_ids])[order]
        return ptr, self.positions_of_ids(ids)

    def positions_of_ids(self, ids: np.ndarray) -> np.ndarray:
        """Position of each node id in ``ids`` (int64 array), ``-1`` where it is not in the graph."""
        if len(self) == 0:
            return np.full(ids.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.ids, ids), len(self) - 1)
        return np.where(self.ids[pos] == ids, pos, -1).astype(np.int64)

    def with_comm_sizes(self, comm_size: np.ndarray) -> WorkloadGraph:
        """A copy with these communication sizes; every other array is shared."""
        return replace(self, comm_size=comm_size)

    def node_summary(self, pos: int) -> str:
        """A short human description of one node, for error messages."""
        kind = (
            NodeType(int(self.types[pos])).name
            if int(self.types[pos]) in NodeType._value2member_map_
            else str(int(self.types[pos]))
        )
        return f"node {int(self.ids[pos])} ({kind}, {self.names[pos]!r})"


# Plain ints: IntFlag arithmetic is slow in the per-node path.
_OPTIONAL_BITS = tuple(
    int(flag)
    for flag in (
        Attr.IS_CPU_OP, Attr.NUM_OPS, Attr.TENSOR_SIZE, Attr.COMM_PRIORITY,
        Attr.COMM_SIZE, Attr.PG_NAME, Attr.INVOLVED_DIM,
    )
)  # fmt: skip
_SENTINEL_BITS = (
    (int(Attr.COMM_TYPE), NO_COMM_TYPE),
    (int(Attr.COMM_SRC), ABSENT),
    (int(Attr.COMM_DST), ABSENT),
    (int(Attr.COMM_TAG), ABSENT),
)


def _presence(optional: tuple, sentinelled: tuple) -> int:
    """The :class:`Attr` bitmask of one node. ``optional``: values of is_cpu_op, num_ops,
    tensor_size, comm_priority, comm_size, pg_name, involved_dim (None = absent);
    ``sentinelled``: comm_type, comm_src, comm_dst, comm_tag (their sentinel = absent)."""
    bits = 0
    for value, bit in zip(optional, _OPTIONAL_BITS, strict=True):
        if value is not None:
            bits |= bit
    for value, (bit, absent) in zip(sentinelled, _SENTINEL_BITS, strict=True):
        if value != absent:
            bits |= bit
    return bits


class NodeAttributes(TypedDict, total=False):
    """The keyword arguments of :func:`attribute_row` and :meth:`GraphBuilder.add`, for type
    checkers: a misspelt attribute is an error there, not a silent absence."""

    duration_s: float
    is_cpu_op: bool | None
    num_ops: float | None
    tensor_size: int | None
    comm_type: int
    comm_size: int | None
    comm_src: int
    comm_dst: int
    comm_tag: int
    comm_priority: int | None
    pg_name: str | None
    involved_dim: tuple[bool, ...] | None


def attribute_row(
    *,
    duration_s: float = 0.0,
    is_cpu_op: bool | None = None,
    num_ops: float | None = None,
    tensor_size: int | None = None,
    comm_type: int = NO_COMM_TYPE,
    comm_size: int | None = None,
    comm_src: int = ABSENT,
    comm_dst: int = ABSENT,
    comm_tag: int = ABSENT,
    comm_priority: int | None = None,
    pg_name: str | None = None,
    involved_dim: tuple[bool, ...] | None = None,
) -> tuple:
    """A node's duration and standard attributes as :meth:`GraphBuilder.add_row` takes them.
    An attribute left at ``None`` (or at its sentinel, for ``comm_type``/``comm_src``/
    ``comm_dst``/``comm_tag``) is absent; ``involved_dim`` only sets its bit here."""
    present = _presence(
        (is_cpu_op, num_ops, tensor_size, comm_priority, comm_size, pg_name, involved_dim),
        (comm_type, comm_src, comm_dst, comm_tag),
    )
    return (
        duration_s,
        bool(is_cpu_op),
        num_ops or 0.0,
        tensor_size or 0,
        comm_type,
        comm_size or 0,
        comm_src,
        comm_dst,
        comm_tag,
        comm_priority or 0,
        pg_name or "",
        present,
    )


_ROW_WIDTH = 15
"""Id, type, name and the 12 values of :func:`attribute_row`."""

_INT_COLUMNS = (
    (0, "node id", np.int64), (1, "node type", np.int8), (6, "tensor_size", np.int64), (7, "comm_type", np.int16),
    (8, "comm_size", np.int64), (9, "comm_src", np.int32), (10, "comm_dst", np.int32), (11, "comm_tag", np.int64),
    (12, "comm_priority", np.int32),
)  # fmt: skip
"""The integer columns of a row: (position, name, dtype), for the range error of ``build``."""


class GraphBuilder:
    """Accumulates nodes one by one and freezes them into a :class:`WorkloadGraph`.

    Readers and generators use it; ``build`` sorts by id and packs the arrays once. An attribute
    left at ``None`` (or at its sentinel, for ``comm_type``/``comm_src``/``comm_dst``/``comm_tag``)
    is absent from the node: its bit in ``present`` is clear and a writer will not emit it.
    """

    def __init__(self, source: str = "", rank: int = 0, *, use_ctrl_deps: bool = True) -> None:
        self.source = source
        self.rank = rank
        self.use_ctrl_deps = use_ctrl_deps
        self._rows: list[tuple] = []
        self._data_deps: list[Sequence[int]] = []
        self._ctrl_deps: list[Sequence[int]] = []
        self._involved: list[tuple[bool, ...] | None] = []
        self._extra: list[bytes] = []
        self.metadata = b""
        self.warnings: list[str] = []

    def add(
        self,
        node_id: int,
        node_type: int,
        name: str = "",
        *,
        data_deps: Sequence[int] = (),
        ctrl_deps: Sequence[int] = (),
        extra: bytes = b"",
        **attributes: Unpack[NodeAttributes],
    ) -> int:
        """Add one node; returns its id. ``attributes``: ``duration_s`` and the standard
        attributes, as :func:`attribute_row` takes them (units: seconds, bytes, FLOP)."""
        self.add_row(
            node_id,
            node_type,
            name,
            attribute_row(**attributes),
            attributes.get("involved_dim"),
            data_deps,
            ctrl_deps,
            extra,
        )
        return node_id

    def add_row(
        self,
        node_id: int,
        node_type: int,
        name: str,
        attributes: tuple,
        involved_dim: tuple[bool, ...] | None,
        data_deps: Sequence[int],
        ctrl_deps: Sequence[int],
        extra: bytes,
    ) -> None:
        """:meth:`add` with the attributes already packed by :func:`attribute_row` (readers
        that see the same attributes on many nodes pack them once)."""
        self._rows.append((node_id, node_type, name, *attributes))
        self._data_deps.append(data_deps)
        self._ctrl_deps.append(ctrl_deps)
        self._involved.append(involved_dim)
        self._extra.append(extra)

    def __len__(self) -> int:
        return len(self._rows)

    def build(self) -> WorkloadGraph:
        """Pack the nodes into arrays; a value beyond its column's integer range (an id, size
        or tag above int64, a rank above int32) is a :class:`~trainsim.errors.TraceError`
        naming the node and the field, not numpy's OverflowError."""
        try:
            return self._build()
        except OverflowError:
            self._raise_out_of_range()
            raise

    def _raise_out_of_range(self) -> None:
        from trainsim.errors import TraceError

        for row, deps in zip(self._rows, zip(self._data_deps, self._ctrl_deps, strict=True), strict=True):
            node_id = row[0]
            checks = [(name, row[k], dtype) for k, name, dtype in _INT_COLUMNS]
            checks += [("a dependency", d, np.int64) for d in (*deps[0], *deps[1])]
            for name, value, dtype in checks:
                info = np.iinfo(dtype)
                if isinstance(value, int | np.integer) and not info.min <= value <= info.max:
                    raise TraceError(
                        f"{name} {value} is beyond the {np.dtype(dtype).name} range "
                        f"[{info.min}, {info.max}]",
                        file=self.source or None,
                        rank=self.rank,
                        node_id=int(node_id) if np.iinfo(np.int64).min <= node_id <= np.iinfo(np.int64).max else None,
                    )

    def _build(self) -> WorkloadGraph:
        rows = self._rows
        n = len(rows)
        columns = list(zip(*rows, strict=True)) if n else [()] * _ROW_WIDTH
        ids = np.fromiter(columns[0], dtype=np.int64, count=n)
        order = np.argsort(ids, kind="stable")
        if n and np.any(np.diff(ids[order]) == 0):
            dup = int(ids[order][np.flatnonzero(np.diff(ids[order]) == 0)[0]])
            from trainsim.errors import TraceError

            raise TraceError(
                f"node id {dup} appears more than once",
                file=self.source or None,
                rank=self.rank,
                node_id=dup,
            )
        in_order = bool(np.all(order[1:] > order[:-1])) if n else True
        perm = order.tolist()
        if not in_order:
            columns = list(zip(*[rows[i] for i in perm], strict=True))

        def col(k: int, dtype: type | str) -> np.ndarray:
            return np.fromiter(columns[k], dtype=dtype, count=n)

        def csr(lists: list[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
            ordered = lists if in_order else [lists[i] for i in perm]
            lens = np.fromiter((len(x) for x in ordered), dtype=np.int64, count=n)
            ptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(lens, out=ptr[1:])
            flat = np.fromiter(chain.from_iterable(ordered), dtype=np.int64, count=int(ptr[-1]))
            return ptr, flat

        dptr, dids = csr(self._data_deps)
        cptr, cids = csr(self._ctrl_deps)
        involved = {p: v for p, i in enumerate(perm) if (v := self._involved[i]) is not None}
        return WorkloadGraph(
            ids=ids[order],
            types=col(1, np.int8),
            names=list(columns[2]),
            duration_s=col(3, np.float64),
            is_cpu_op=col(4, np.bool_),
            num_ops=col(5, np.float64),
            tensor_size=col(6, np.int64),
            comm_type=col(7, np.int16),
            comm_size=col(8, np.int64),
            comm_src=col(9, np.int32),
            comm_dst=col(10, np.int32),
            comm_tag=col(11, np.int64),
            comm_priority=col(12, np.int32),
            pg_name=list(columns[13]),
            involved_dim=involved,
            data_dep_ptr=dptr,
            data_dep_ids=dids,
            ctrl_dep_ptr=cptr,
            ctrl_dep_ids=cids,
            extra=list(self._extra) if in_order else [self._extra[i] for i in perm],
            present=col(14, np.uint16),
            metadata=self.metadata,
            source=self.source,
            rank=self.rank,
            warnings=list(self.warnings),
            use_ctrl_deps=self.use_ctrl_deps,
        )


def executed_flop(graphs: Sequence[WorkloadGraph]) -> float:
    """FLOPs the compute nodes of all ``graphs`` execute (``num_ops``; recomputation included
    where the graphs recompute); ranks that share arrays (one pipeline stage of a generated
    workload, a replicated microbenchmark) are summed once per array."""
    per_array: dict[int, float] = {}
    total = 0.0
    for g in graphs:
        key = id(g.num_ops)
        flop = per_array.get(key)
        if flop is None:
            flop = per_array[key] = float(g.num_ops[g.types == NodeType.COMP_NODE].sum())
        total += flop
    return total
