"""Chakra enums shared by every layer: node types and collective types (chakra-format.md §1.6).

Lives beside `errors` and `units` because the workload, collectives and system layers all
speak these numbers and none of them may import another sibling.
"""

from __future__ import annotations

from enum import IntEnum


class NodeType(IntEnum):
    INVALID_NODE = 0
    METADATA_NODE = 1
    MEM_LOAD_NODE = 2
    MEM_STORE_NODE = 3
    COMP_NODE = 4
    COMM_SEND_NODE = 5
    COMM_RECV_NODE = 6
    COMM_COLL_NODE = 7


class CommType(IntEnum):
    ALL_REDUCE = 0
    REDUCE = 1
    ALL_GATHER = 2
    GATHER = 3
    SCATTER = 4
    BROADCAST = 5
    ALL_TO_ALL = 6
    REDUCE_SCATTER = 7
    REDUCE_SCATTER_BLOCK = 8
    BARRIER = 9


NO_COMM_TYPE = -1
"""Value of ``WorkloadGraph.comm_type`` for nodes that carry no ``comm_type`` attribute."""
