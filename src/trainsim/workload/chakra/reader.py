"""Chakra ET reader: rank files to :class:`WorkloadGraph` (DESIGN.md, workload layer;
``workload/chakra``; format facts in chakra-format.md §1, §2 and §6).

Reading is tolerant and streaming: messages are parsed one at a time from a buffered (possibly
gzip) file; any integer, bool or float case is accepted for numeric attributes; legacy and
broken details (missing ``comm_size``, dependencies on absent nodes, non-standard types, unknown
node types) are tolerated with one warning per kind of problem per file. What cannot be made
sense of (truncated or garbage bytes, duplicate node ids, a dependency cycle) is a
:class:`TraceError` naming the file, rank and node or byte offset. The writer is ``writer.py``.

Units: ``duration_micros`` in files is microseconds; ``WorkloadGraph.duration_s`` is seconds.
"""

from __future__ import annotations

import copy
import hashlib
import io
import os
import re
import zlib
from io import BufferedIOBase
from pathlib import Path
from typing import Any, Literal

import numpy as np

from trainsim.enums import NodeType
from trainsim.errors import TraceError
from trainsim.workload.chakra.attrs import INT64_MAX, SPEC_BY_NAME, AttrSpec, UnusableValue
from trainsim.workload.chakra.decode import RowCache, decode_file, metadata_is_valid
from trainsim.workload.chakra.template import Template
from trainsim.workload.chakra.wire import (
    count_rank_files,
    iter_frames,
    open_trace,
    rank_file,
    read_plain,
)
from trainsim.workload.cycles import ctrl_deps_closing_cycles
from trainsim.workload.diagnostics import WarningTally, emit_trace_warnings
from trainsim.workload.graph import Attr, GraphBuilder, WorkloadGraph

CtrlDepsPolicy = Literal["both", "data_only"]

_MODELLED_NODE_FIELDS = ("id", "name", "type", "ctrl_deps", "data_deps", "duration_micros")
_COMM_NODE_TYPES = (NodeType.COMM_SEND_NODE, NodeType.COMM_RECV_NODE, NodeType.COMM_COLL_NODE)
_INT8_MAX = 127
_WHOLE_FILE_BYTES = 256 << 20
"""Uncompressed files up to this size are decoded column-wise in memory when all their nodes
are canonical (decode.decode_file); larger ones stream through the row-by-row reader."""
_RANK_SUFFIX = re.compile(r"\.(\d+)\.et(\.gz)?$")


# ---------------------------------------------------------------------------------------------
# reading


def read_rank(
    path: str | os.PathLike[str], rank: int | None = None, *, ctrl_deps: CtrlDepsPolicy = "both"
) -> WorkloadGraph:
    """Read one rank file into a graph.

    ``rank`` defaults to the number in a ``<prefix>.<rank>.et`` name (else 0). ``ctrl_deps``:
    ``"both"`` makes ctrl_deps order execution like ASTRA-sim's FeederV3, ``"data_only"`` like the
    legacy feeder; they are kept either way. Tolerated problems are listed in
    ``graph.warnings`` and emitted as :class:`~trainsim.workload.diagnostics.TraceWarning`.
    """
    path = Path(path)
    graph = _read_graph(path, _rank_from_name(path) if rank is None else rank, ctrl_deps)
    emit_trace_warnings(str(path), graph.warnings)
    return graph


def _rank_from_name(path: Path) -> int:
    match = _RANK_SUFFIX.search(path.name)
    return int(match.group(1)) if match else 0


def _read_graph(
    path: Path,
    rank: int,
    ctrl_deps: CtrlDepsPolicy,
    cache: RowCache | None = None,
    layout: dict[str, Any] | None = None,
) -> WorkloadGraph:
    if ctrl_deps not in ("both", "data_only"):
        raise ValueError(f"ctrl_deps must be 'both' or 'data_only', not {ctrl_deps!r}")
    cache = cache or RowCache()
    builder = GraphBuilder(str(path), rank, use_ctrl_deps=ctrl_deps == "both")
    tally = WarningTally()
    fields = None
    try:
        with open_trace(path) as stream:
            data = read_plain(stream, _WHOLE_FILE_BYTES)
            if len(cache.names) >= cache.limit:
                cache.clear()
            fields = None if data is None else decode_file(data, cache.tails, cache.names, layout)
            if fields is None:
                _NodeDecoder(builder, tally, cache).consume(
                    stream if data is None else io.BytesIO(data)
                )
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceError(f"cannot read the file ({exc})", file=str(path), rank=rank) from exc
    if fields is None:
        graph = builder.build()
    else:
        graph = WorkloadGraph(
            **fields, source=builder.source, rank=rank, use_ctrl_deps=builder.use_ctrl_deps
        )
    _drop_dangling_deps(graph, tally)
    _host_side_comm_as_cpu_ops(graph, tally)
    _note_graph_level_problems(graph, tally)
    _require_acyclic(graph, tally)
    graph.warnings = tally.messages()
    return graph


_GIVE_UP_FAST_ROWS = 64
"""Nodes the canonical decoder may decline at the start of a file before the rest of it goes
straight to protobuf (a PyTorch-derived trace has none it can read: trying every node cost that
file as much as reading it)."""


class _NodeDecoder:
    """Turns the messages of one file into GraphBuilder rows, tallying tolerated problems.

    Nodes in the canonical layout come decoded from ``cache``; the others are parsed as protobuf
    messages (:meth:`add_node`)."""

    def __init__(self, builder: GraphBuilder, tally: WarningTally, cache: RowCache) -> None:
        self.builder = builder
        self.tally = tally
        self.cache = cache
        self.node: Any = None  # protobuf's, for the nodes the canonical decoder declines
        self.schema: Any = None
        self.decode_error: type[Exception] = Exception
        self.offset = 0

    def _load_protobuf(self) -> None:
        """The message classes and protobuf's DecodeError, imported when first needed (files
        whose messages are all canonical never load protobuf)."""
        from google.protobuf.message import DecodeError

        from trainsim.workload.chakra import schema

        self.schema, self.decode_error, self.node = schema, DecodeError, schema.Node()

    def fail(self, message: str, node_id: int | None = None) -> TraceError:
        return TraceError(
            message, file=self.builder.source, rank=self.builder.rank, node_id=node_id
        )

    def consume(self, stream: BufferedIOBase) -> None:
        frames = iter_frames(stream, file=self.builder.source, rank=self.builder.rank)
        first = next(frames, None)
        if first is None:
            raise self.fail(
                "the file is empty; a Chakra ET file starts with a GlobalMetadata message"
            )
        self.builder.metadata = self._checked_metadata(first[1])
        row_of = self.cache.row
        add_row = self.builder.add_row
        declined = 0  # nodes the canonical decoder declined before it read any
        try_fast = True
        empty = 0  # zero-length messages: each is a node of id 0, so a second one is a duplicate
        for self.offset, data in frames:
            if not data:
                empty += 1
                if (
                    empty > 1
                ):  # refused here, not after a stream of them has been read (a gzip bomb)
                    raise self.fail(
                        f"node id 0 appears more than once (zero-length messages at byte {self.offset})",
                        0,
                    )
            row = row_of(data) if try_fast else None
            if row is not None:
                declined = -1  # it reads this file: keep trying it on every node
                add_row(*row, b"")
                continue
            if declined >= 0:
                declined += 1
                try_fast = declined < _GIVE_UP_FAST_ROWS
            self.add_node(data)

    def _checked_metadata(self, data: bytes) -> bytes:
        if metadata_is_valid(data):
            return data
        self._load_protobuf()
        try:
            self.schema.GlobalMetadata.FromString(data)
        except self.decode_error as exc:
            raise self.fail(f"the first message is not a valid GlobalMetadata ({exc})") from exc
        return data

    def add_node(self, data: bytes) -> None:
        if self.node is None:
            self._load_protobuf()
        node = self.node
        try:
            node.ParseFromString(data)
        except self.decode_error as exc:
            raise self.fail(
                f"the message at byte {self.offset} is not a valid Chakra Node ({exc})"
            ) from exc
        node_id = node.id
        if node_id > INT64_MAX or not 0 <= node.type <= _INT8_MAX:
            raise self.fail(f"node id or type out of range (type {node.type})", node_id)
        attributes = self._take_standard_attributes(node, node_id)
        self.builder.add(
            node_id,
            node.type,
            node.name,
            duration_s=node.duration_micros / 1e6,
            data_deps=self._dep_ids(node.data_deps, "data_deps"),
            ctrl_deps=self._dep_ids(node.ctrl_deps, "ctrl_deps"),
            extra=self._unmodelled_bytes(node),
            **attributes,
        )

    def _take_standard_attributes(self, node: Any, node_id: int) -> dict[str, Any]:
        """Values of the standard attributes by name; removes them all from ``node.attr``."""
        values: dict[str, Any] = {}
        standard_indices = []
        for index, attribute in enumerate(node.attr):
            spec = SPEC_BY_NAME.get(attribute.name)
            if spec is None:
                continue
            standard_indices.append(index)
            if spec.name in values:
                self.tally.add(
                    f"{{n}} repeated {spec.name} attribute(s) ignored; the first one is used"
                )
                continue
            self._read_attribute(spec, attribute, values, node_id)
        for index in reversed(standard_indices):
            del node.attr[index]
        return values

    def _read_attribute(self, spec: AttrSpec, attribute: Any, values: dict[str, Any], node_id: int) -> None:
        try:
            value, case = spec.read(attribute)
        except (UnusableValue, ValueError, OverflowError) as exc:
            if spec.name == "comm_size":
                # a size that is there but no byte count: refused, not read as a missing 0 B
                case = attribute.WhichOneof("value")
                raw = getattr(attribute, case) if case else None
                raise self.fail(
                    f"comm_size {raw!r} ({case or 'no value'}) is not a byte count; expected an "
                    f"integer in 0..{INT64_MAX}",
                    node_id,
                ) from None
            self.tally.add(f"{{n}} {spec.name} attribute(s) ignored: {exc}")
            return
        if case != spec.case:
            self.tally.add(
                f"{{n}} {spec.name} attribute(s) stored as {case}, not {spec.case}; converted"
            )
        values[spec.name] = value

    def _dep_ids(self, deps: Any, kind: str) -> list[int]:
        ids = list(deps)
        if ids and max(ids) > INT64_MAX:
            kept = [d for d in ids if d <= INT64_MAX]
            self.tally.add(
                f"{{n}} {kind} name nodes absent from the file; dropped", len(ids) - len(kept)
            )
            return kept
        return ids

    def _unmodelled_bytes(self, node: Any) -> bytes:
        for name in _MODELLED_NODE_FIELDS:
            node.ClearField(name)
        return node.SerializeToString()


def _drop_dangling_deps(graph: WorkloadGraph, tally: WarningTally) -> None:
    """Remove dependencies on ids that are not in the graph (ASTRA-sim rejects them)."""
    for kind in ("data", "ctrl"):
        known = graph.positions_of_ids(getattr(graph, f"{kind}_dep_ids")) >= 0
        if not known.all():
            tally.add(
                f"{{n}} {kind}_deps name nodes absent from the file; dropped", int((~known).sum())
            )
            _keep_deps(graph, kind, known)


def _keep_deps(graph: WorkloadGraph, kind: str, keep: np.ndarray) -> None:
    """Keep only the ``kind`` ("data" or "ctrl") dependencies where ``keep`` (bool per edge)."""
    n = len(graph)
    rows = np.repeat(np.arange(n), np.diff(getattr(graph, f"{kind}_dep_ptr")))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=n), out=ptr[1:])
    setattr(graph, f"{kind}_dep_ptr", ptr)
    setattr(graph, f"{kind}_dep_ids", getattr(graph, f"{kind}_dep_ids")[keep])


def _host_side_comm_as_cpu_ops(graph: WorkloadGraph, tally: WarningTally) -> None:
    """Communication nodes marked ``is_cpu_op`` become CPU COMP nodes of their duration.

    They are host-side calls (``c10d::allreduce_``, ``nccl:...``), which chakra's PyTorch
    converter typed as communication nodes before 2024-06-27 and types as CPU COMP nodes since.
    The collective itself is the GPU kernel node (``ncclKernel_*``) that carries comm_type and
    comm_size. ASTRA-sim throws "Comm node should not be on CPU" on them. docs/workloads.md,
    "PyTorch traces", gives the reasons.
    """
    host = np.isin(graph.types, _COMM_NODE_TYPES) & graph.is_cpu_op
    if host.any():
        tally.add(
            "{n} communication node(s) marked is_cpu_op (host-side calls such as "
            "c10d::allreduce_) run as CPU compute nodes of their duration; the GPU kernel "
            "nodes hold the collectives",
            int(host.sum()),
        )
        graph.types[host] = NodeType.COMP_NODE


def _note_graph_level_problems(graph: WorkloadGraph, tally: WarningTally) -> None:
    """Missing comm_size becomes an explicit 0 (so a rewrite carries it); unknown types are noted."""
    lacks_size = np.isin(graph.types, _COMM_NODE_TYPES) & ((graph.present & Attr.COMM_SIZE) == 0)
    if lacks_size.any():
        tally.add(
            "{n} communication node(s) lack comm_size; taken as 0 bytes", int(lacks_size.sum())
        )
        graph.present[lacks_size] |= np.uint16(Attr.COMM_SIZE)
    unknown_types = ~np.isin(graph.types, list(NodeType))
    if unknown_types.any():
        kinds = sorted(set(graph.types[unknown_types].tolist()))
        tally.add(
            f"{{n}} node(s) of a type unknown to trainsim ({kinds}) kept as read",
            int(unknown_types.sum()),
        )


def _require_acyclic(graph: WorkloadGraph, tally: WarningTally) -> None:
    """Drop ctrl_deps that close cycles; a cycle of data_deps alone is a TraceError."""
    dropped, data_cycle = ctrl_deps_closing_cycles(graph)
    if data_cycle is not None:
        shown = " -> ".join(str(i) for i in [*data_cycle[:10], data_cycle[0]])
        raise TraceError(
            f"data_deps form a cycle of {len(data_cycle)} node(s): {shown} "
            "(each waits for the one before it)",
            file=graph.source,
            rank=graph.rank,
            node_id=data_cycle[0],
        )
    if dropped.size:
        tally.add(
            "{n} ctrl_deps closed a dependency cycle with other deps; dropped", int(dropped.size)
        )
        keep = np.ones(graph.ctrl_dep_ids.shape, dtype=bool)
        keep[dropped] = False
        _keep_deps(graph, "ctrl", keep)


# ---------------------------------------------------------------------------------------------
# whole workloads


def read_workload(
    prefix: str | os.PathLike[str],
    npus: int | None = None,
    *,
    ctrl_deps: CtrlDepsPolicy = "both",
    templates: bool = True,
) -> list[WorkloadGraph]:
    """Read ``<prefix>.<rank>.et`` for rank 0..npus-1 (default: as many as exist from 0).

    A missing rank file is a :class:`TraceError` naming it and the expected count. Byte-identical
    files are parsed once: their graphs are shallow copies that share every array (treat graphs
    as read-only) and differ only in ``rank`` and ``source``; warnings are emitted once per
    distinct file content. A file that differs from one already decoded only in its peer ranks
    and communicator groups (values of the same length) is not decoded: its graph shares every
    other array with that one's (``template.py``; ``templates=False`` decodes every distinct
    file, with the same result).
    """
    if npus is None:
        npus = count_rank_files(prefix)
    paths = _existing_rank_files(prefix, npus)
    first_of_content: dict[bytes, WorkloadGraph] = {}
    cache = RowCache()
    copies: dict[bytes, int] = {}
    kept_by_length: dict[int, list[Template]] = {}
    graphs = []
    for rank, path in enumerate(paths):
        data = _plain_bytes(path, rank) if templates else None
        if data is not None:
            twin = next((g for t in kept_by_length.get(len(data), ()) if (g := t.match(data, str(path), rank)) is not None), None)
            if twin is not None:
                graphs.append(twin)
                continue
        digest = _content_digest(path, rank) if data is None else hashlib.blake2b(data).digest()
        if digest in first_of_content:
            graphs.append(_with_rank(first_of_content[digest], path, rank))
            copies[digest] += 1
        else:
            layout: dict[str, Any] = {}
            graph = _read_graph(path, rank, ctrl_deps, cache, layout)
            graphs.append(first_of_content.setdefault(digest, graph))
            copies[digest] = 0
            if data is not None and layout and not graph.warnings:
                kept = kept_by_length.setdefault(len(data), [])
                kept.insert(0, Template(data, graph, layout))
                del kept[_TEMPLATES_PER_LENGTH:]
    for digest, graph in first_of_content.items():
        also = f" (and {copies[digest]} identical rank files)" if copies[digest] else ""
        emit_trace_warnings(graph.source + also, graph.warnings)
    return graphs


def _existing_rank_files(prefix: str | os.PathLike[str], npus: int) -> list[Path]:
    if npus < 1:
        raise TraceError(f"no rank files {rank_file(prefix, 0)}, {rank_file(prefix, 1).name}, ...")
    found = count_rank_files(prefix)  # counts existing files only: no list of npus paths first
    if found < npus:
        path = rank_file(prefix, found)
        what = "is a folder, not a rank file" if path.is_dir() else "rank file missing"
        raise TraceError(
            f"{what}: the workload needs {npus} files "
            f"{rank_file(prefix, 0).name} ... {rank_file(prefix, npus - 1).name}, found {found} from rank 0",
            file=str(path),
            rank=found,
        )
    if found > npus:
        raise TraceError(
            f"the workload has {found} rank files ({rank_file(prefix, 0).name} ... "
            f"{rank_file(prefix, found - 1).name}) but the network has {npus} NPUs; expected one file per NPU",
            file=str(rank_file(prefix, npus)),
        )
    return [rank_file(prefix, rank) for rank in range(npus)]


_TEMPLATES_PER_LENGTH = 4
"""Decoded files of one length a new file of that length is compared with (the latest)."""


def _plain_bytes(path: Path, rank: int) -> bytes | None:
    """The content of an uncompressed rank file a template may match, else None."""
    try:
        with open(path, "rb", buffering=0) as stream:  # read once into one bytes object
            if os.pread(stream.fileno(), 2, 0) == b"\x1f\x8b" or os.fstat(stream.fileno()).st_size > _WHOLE_FILE_BYTES:
                return None
            return stream.readall()
    except OSError as exc:
        raise TraceError(f"cannot read the file ({exc})", file=str(path), rank=rank) from exc


def _content_digest(path: Path, rank: int) -> bytes:
    try:
        with open(path, "rb") as stream:
            return hashlib.file_digest(stream, "blake2b").digest()
    except OSError as exc:
        raise TraceError(f"cannot read the file ({exc})", file=str(path), rank=rank) from exc


def _with_rank(graph: WorkloadGraph, path: Path, rank: int) -> WorkloadGraph:
    twin = copy.copy(graph)
    twin.rank = rank
    twin.source = str(path)
    return twin
