"""Chakra ET writer: :class:`WorkloadGraph` to rank files (DESIGN.md, workload layer;
``workload/chakra``; format facts in chakra-format.md §1, §2 and §6).

Writing is strict: uncompressed, a non-empty GlobalMetadata first, nodes in ascending id, each
standard attribute once in the type ASTRA-sim expects, zero values included, and only the
attributes the graph marks present. Fields the graph does not model travel in
``WorkloadGraph.extra`` and are written back unchanged.

Units: ``WorkloadGraph.duration_s`` is seconds; ``duration_micros`` in files is microseconds.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from trainsim.errors import TraceError
from trainsim.workload.chakra import schema
from trainsim.workload.chakra.attrs import STANDARD_ATTRS, AttrSpec, UnusableValue
from trainsim.workload.chakra.encode import EMPTY_NODE, encode_frames
from trainsim.workload.chakra.wire import encode_varint, rank_file
from trainsim.workload.graph import WorkloadGraph

DEFAULT_VERSION = "0.0.4"
"""GlobalMetadata.version written when the graph carries no metadata of its own."""


def write_rank(path: str | os.PathLike[str], graph: WorkloadGraph) -> Path:
    """Write one graph as an uncompressed rank file; returns the path.

    The file appears complete or not at all (written beside it, then renamed). A value that does
    not fit ASTRA-sim's attribute type (e.g. a negative ``comm_size``) is a :class:`TraceError`.
    """
    path = Path(path)
    _write_whole(path, encode_rank_file(graph, str(path)))
    return path


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to a new temporary file in ``path``'s folder (``tempfile.mkstemp``: a
    fresh name, opened exclusively, never a link someone left there), then rename it over
    ``path``: the file appears whole or not at all."""
    fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(partial, 0o666 & ~_umask())
        os.replace(partial, path)
    finally:
        Path(partial).unlink(missing_ok=True)


@functools.cache
def _umask() -> int:
    """The process's umask (read once: reading it means setting it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_workload(prefix: str | os.PathLike[str], graphs: Sequence[WorkloadGraph]) -> list[Path]:
    """Write ``graphs[r]`` to ``<prefix>.<r>.et``; graphs sharing their content are encoded once."""
    paths: list[Path] = []
    written_by_ids: dict[int, tuple[WorkloadGraph, Path]] = {}  # id(graph.ids) -> first writer
    for rank, graph in enumerate(graphs):
        path = rank_file(prefix, rank)
        path.parent.mkdir(parents=True, exist_ok=True)
        twin = written_by_ids.get(id(graph.ids))
        if twin is not None and _same_content(twin[0], graph):
            _write_whole(path, twin[1].read_bytes())
        else:
            write_rank(path, graph)
            written_by_ids.setdefault(id(graph.ids), (graph, path))
        paths.append(path)
    return paths


_PER_RANK_FIELDS = {"rank", "source", "warnings"}


def _same_content(a: WorkloadGraph, b: WorkloadGraph) -> bool:
    """True when ``b`` is ``a`` or a copy sharing all of ``a``'s arrays (see read_workload)."""
    return all(
        getattr(a, f.name) is getattr(b, f.name)
        for f in dataclasses.fields(WorkloadGraph)
        if f.name not in _PER_RANK_FIELDS
    )


def encode_rank_file(graph: WorkloadGraph, file: str = "") -> bytes:
    """The bytes :func:`write_rank` writes for ``graph``; ``file`` names it in errors.

    Nodes are encoded column-wise (:func:`~trainsim.workload.chakra.encode.encode_frames`); a node
    carrying ``extra`` fields, or a graph holding a value that encoder does not cover, goes
    through protobuf message objects (:func:`encode_nodes_with_messages`), which give the same
    bytes and refuse what ASTRA-sim's types cannot hold.
    """
    metadata = graph.metadata or schema.GlobalMetadata(version=DEFAULT_VERSION).SerializeToString()
    parts = [encode_varint(len(metadata)), metadata]
    columnwise = encode_frames(graph)
    if columnwise is None:
        for data in encode_nodes_with_messages(graph, file):
            parts += (encode_varint(len(data)), data)
        return b"".join(parts)
    buffer, starts = columnwise
    with_extra = [pos for pos, extra in enumerate(graph.extra) if extra]
    if not with_extra:
        return b"".join([*parts, buffer.tobytes()])
    frames = buffer.tobytes()
    bounds = starts.tolist()
    done = 0
    for pos, data in zip(with_extra, encode_nodes_with_messages(graph, file, with_extra), strict=True):
        parts += (frames[bounds[done] : bounds[pos]], encode_varint(len(data)), data)
        done = pos + 1
    parts.append(frames[bounds[done] :])
    return b"".join(parts)


def encode_nodes_with_messages(
    graph: WorkloadGraph, file: str, positions: Iterable[int] | None = None
) -> Iterator[bytes]:
    """The serialized Node of each position (default: all), built as protobuf messages."""
    columns = {spec.name: _column(graph, spec.name) for spec in STANDARD_ATTRS}
    bits = [(spec, int(spec.bit)) for spec in STANDARD_ATTRS]
    ids = graph.ids.tolist()
    types = graph.types.tolist()
    durations = graph.duration_s.tolist()
    present = graph.present.tolist()
    data_ptr, data_ids = graph.data_dep_ptr.tolist(), graph.data_dep_ids.tolist()
    ctrl_ptr, ctrl_ids = graph.ctrl_dep_ptr.tolist(), graph.ctrl_dep_ids.tolist()
    for pos in range(len(ids)) if positions is None else positions:
        node_id = ids[pos]
        node = schema.Node(
            id=node_id,
            name=graph.names[pos],
            type=types[pos],
            ctrl_deps=ctrl_ids[ctrl_ptr[pos] : ctrl_ptr[pos + 1]],
            data_deps=data_ids[data_ptr[pos] : data_ptr[pos + 1]],
            duration_micros=_micros(durations[pos], file, graph.rank, node_id),
        )
        for spec, bit in bits:
            if present[pos] & bit:
                _write_attribute(node, spec, columns[spec.name][pos], (file, graph.rank, node_id))
        if graph.extra[pos]:
            node.MergeFromString(graph.extra[pos])
        yield node.SerializeToString() or EMPTY_NODE


def _column(graph: WorkloadGraph, name: str) -> Any:
    """Per-position values of one standard attribute (a list, or a dict for involved_dim)."""
    value = getattr(graph, name)
    return value.tolist() if isinstance(value, np.ndarray) else value


def _micros(duration_s: float, file: str, rank: int, node_id: int) -> int:
    micros = duration_s * 1e6
    if not (np.isfinite(micros) and 0 <= micros < 2**64):
        raise TraceError(
            f"duration {duration_s!r} s cannot be written as duration_micros",
            file=file,
            rank=rank,
            node_id=node_id,
        )
    return round(micros)


def _write_attribute(node: Any, spec: AttrSpec, value: Any, where: tuple[str, int, int]) -> None:
    try:
        spec.write(node.attr.add(), value)
    except (UnusableValue, ValueError, OverflowError, TypeError) as exc:
        file, rank, node_id = where
        raise TraceError(
            f"{spec.name} = {value!r} cannot be written as {spec.case}: {exc}",
            file=file,
            rank=rank,
            node_id=node_id,
        ) from exc
