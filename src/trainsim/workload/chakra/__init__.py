"""Chakra ET files: rank files to :class:`~trainsim.workload.graph.WorkloadGraph` and back
(DESIGN.md, workload layer; ``workload/chakra``; format facts in chakra-format.md §1, §2, §6).

Modules, bottom up:

- ``schema`` (with ``schema.proto``): the message classes, built without protoc;
- ``wire``: rank-file names, varint framing, gzip detection;
- ``attrs``: the standard node attributes, read tolerantly and written strictly;
- ``decode``: the reader's fast path (canonical nodes without message objects);
- ``encode``: the writer's column-wise node encoder;
- ``reader``: :func:`read_rank`, :func:`read_workload` (tolerant, streaming);
- ``writer``: :func:`write_rank`, :func:`write_workload` (strict).

Names are imported on first use, so importing a light module of this package (``wire``,
``attrs``) does not load protobuf.
"""

from typing import TYPE_CHECKING

from trainsim.lazyimport import lazy_exports

if TYPE_CHECKING:
    from trainsim.workload.chakra.reader import CtrlDepsPolicy, read_rank, read_workload
    from trainsim.workload.chakra.wire import count_rank_files, rank_file
    from trainsim.workload.chakra.writer import (
        DEFAULT_VERSION,
        encode_nodes_with_messages,
        encode_rank_file,
        write_rank,
        write_workload,
    )

_EXPORTS = {
    "CtrlDepsPolicy": "reader",
    "DEFAULT_VERSION": "writer",
    "count_rank_files": "wire",
    "encode_nodes_with_messages": "writer",
    "encode_rank_file": "writer",
    "rank_file": "wire",
    "read_rank": "reader",
    "read_workload": "reader",
    "write_rank": "writer",
    "write_workload": "writer",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = [
    "DEFAULT_VERSION",
    "CtrlDepsPolicy",
    "count_rank_files",
    "encode_nodes_with_messages",
    "encode_rank_file",
    "rank_file",
    "read_rank",
    "read_workload",
    "write_rank",
    "write_workload",
]
