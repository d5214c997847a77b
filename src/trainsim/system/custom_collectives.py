"""The custom collective algorithms a system file names, read from their Chakra ET files
(system layer: it joins the workload layer's reader and the collectives layer's
``collectives/custom.py``; used by the planner through :class:`CustomCollectives`).

Where a system file names them (ASTRA-sim 518bd51, ``CollectiveImplLookup``):

- ``<type>-implementation-custom: [PREFIX]`` (``all-reduce``, ``all-gather``,
  ``reduce-scatter``, ``all-to-all``; native platform file: ``custom_collectives: {all_reduce:
  PREFIX}``): every collective of that type runs the graphs ``PREFIX.<rank>.et``;
- ``per-node-custom-implementation: FILE.yml`` (a YAML mapping of workload node id to PREFIX):
  the collective node with that id runs those graphs, whatever its type; it comes first.

A PREFIX (and the YAML file) is looked for as written, i.e. relative to the working directory
as ASTRA-sim does, then relative to the folder of the file that names it. Every graph is read
and checked when the runtime is built (:func:`load_graphs`): a missing or unreadable file, a
node other than SEND / RECV / COMP, a peer outside the graph's ranks, a missing attribute, and
graphs that cannot finish together (``custom.check_graphs``) are errors naming the file. That
a graph has as many ranks as the collective's group is checked when a collective uses it.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from trainsim.collectives.custom import (
    COMP,
    RECV,
    SEND,
    CustomGraphs,
    CustomRankGraph,
    check_graphs,
)
from trainsim.config.types import SystemSpec
from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError, TraceError
from trainsim.workload.diagnostics import TraceWarning
from trainsim.workload.graph import ABSENT, WorkloadGraph

_KEYS = {
    "all_reduce": (int(CommType.ALL_REDUCE), "all-reduce-implementation-custom"),
    "all_gather": (int(CommType.ALL_GATHER), "all-gather-implementation-custom"),
    "reduce_scatter": (int(CommType.REDUCE_SCATTER), "reduce-scatter-implementation-custom"),
    "all_to_all": (int(CommType.ALL_TO_ALL), "all-to-all-implementation-custom"),
}
_PER_NODE_KEY = "per-node-custom-implementation"
_OPS = {int(NodeType.COMM_SEND_NODE): SEND, int(NodeType.COMM_RECV_NODE): RECV, int(NodeType.COMP_NODE): COMP}


class CustomCollectives:
    """The custom algorithms of one system (module docstring), read once at construction;
    :meth:`lookup` says which, if any, a collective node runs."""

    def __init__(self, system: SystemSpec) -> None:
        impl = system.implementations
        source = system.source
        loaded: dict[Path, CustomGraphs] = {}

        def graphs(value: str, file: str, field: str) -> CustomGraphs:
            prefix = resolve_prefix(value, file, field)
            if prefix not in loaded:
                loaded[prefix] = load_graphs(prefix)
            return loaded[prefix]

        self.by_type: dict[int, CustomGraphs] = {}
        for attr, path in impl.custom.items():
            ctype, key = _KEYS[attr]
            self.by_type[ctype] = graphs(path, source, key)
        self.by_node: dict[int, CustomGraphs] = {}
        if impl.per_node_custom is not None:
            table = resolve_file(impl.per_node_custom, source, _PER_NODE_KEY)
            for node_id, path in _per_node_table(table).items():
                self.by_node[node_id] = graphs(path, str(table), str(node_id))

    def __bool__(self) -> bool:
        return bool(self.by_type or self.by_node)

    def lookup(self, comm_type: int, node_id: int) -> CustomGraphs | None:
        """The graphs the collective node ``node_id`` of type ``comm_type`` runs (None: a
        built-in algorithm): its per-node entry first, then its type's."""
        if self.by_node:
            graphs = self.by_node.get(node_id)
            if graphs is not None:
                return graphs
        return self.by_type.get(comm_type)


def _candidates(value: str, named_in: str) -> list[Path]:
    path = Path(value)
    out = [path]
    if named_in and not path.is_absolute():
        beside = Path(named_in).parent / path
        if beside != path:
            out.append(beside)
    return out


def _looked(value: str, named_in: str) -> str:
    if Path(value).is_absolute():
        return ""
    where = " relative to the working directory"
    if named_in:
        where += f" or to {Path(named_in).parent}"
    return where


def resolve_prefix(value: str, named_in: str, field: str) -> Path:
    """The prefix whose ``.0.et`` file exists, as written or beside ``named_in``."""
    for prefix in _candidates(value, named_in):
        if Path(f"{prefix}.0.et").is_file():
            return prefix
    hint = "the value is the prefix of the rank files PREFIX.0.et, PREFIX.1.et, ..."
    if value.endswith(".et"):
        hint = f"leave out the '.<rank>.et' suffix: {value.rsplit('.', 2)[0]!r} if the files are {value!r}, ..."
    raise ConfigError(
        f"custom collective graph {value!r} not found: no {value}.0.et{_looked(value, named_in)}",
        file=named_in or None,
        field=field,
        hint=hint,
    )


def resolve_file(value: str, named_in: str, field: str) -> Path:
    """The file ``value``, as written or beside ``named_in``."""
    for path in _candidates(value, named_in):
        if path.is_file():
            return path
    raise ConfigError(
        f"file {value!r} not found{_looked(value, named_in)}", file=named_in or None, field=field
    )


def _per_node_table(path: Path) -> dict[int, str]:
    """``{node id: prefix}`` from a per-node YAML file (ASTRA-sim: a mapping of int -> string)."""
    from trainsim.config.files import load_yaml_mapping

    data = load_yaml_mapping(path)
    table: dict[int, str] = {}
    for key, value in data.items():
        node_id = key if isinstance(key, int) and not isinstance(key, bool) else None
        if node_id is None and isinstance(key, str) and key.strip().lstrip("-").isdigit():
            node_id = int(key)
        if node_id is None or not isinstance(value, str):
            raise ConfigError(
                f"expected a mapping of workload node id (an integer) to a custom graph prefix (a string), got {key!r}: {value!r}",
                file=str(path),
                field=str(key),
            )
        table[node_id] = value
    return table


def load_graphs(prefix: Path) -> CustomGraphs:
    """Read and check the graphs ``<prefix>.<rank>.et`` (module docstring)."""
    from trainsim.workload.chakra import read_workload

    source = os.fspath(prefix)
    graphs = read_workload(source)
    out = CustomGraphs(source, tuple(_rank_graph(g, len(graphs)) for g in graphs))
    for message in check_graphs(out):
        warnings.warn(f"{source}.<rank>.et: {message}", TraceWarning, stacklevel=2)
    return out


def _rank_graph(graph: WorkloadGraph, nranks: int) -> CustomRankGraph:
    """One rank file as a :class:`CustomRankGraph`; what it cannot be is a TraceError."""
    n = len(graph)
    ids = graph.ids.tolist()
    types = graph.types.tolist()
    ops, peers, nbytes, tags = [], [], [], []
    for pos in range(n):
        op = _OPS.get(types[pos])
        if op is None:
            raise _bad(graph, pos, "a custom collective's graph holds only COMM_SEND, COMM_RECV and COMP nodes")
        peer = tag = -1
        if op != COMP:
            column, attr = (graph.comm_dst, "comm_dst") if op == SEND else (graph.comm_src, "comm_src")
            peer = int(column[pos])
            tag = int(graph.comm_tag[pos])
            if peer == ABSENT or not 0 <= peer < nranks or peer == graph.rank:
                got = "missing" if peer == ABSENT else str(peer)
                raise _bad(graph, pos, f"{attr} is {got}; expected another of the graph's ranks 0..{nranks - 1}")
            if tag == ABSENT:
                raise _bad(graph, pos, "comm_tag is missing")
        ops.append(op)
        peers.append(peer)
        nbytes.append(int(graph.comm_size[pos]))
        tags.append(tag)
    if not n:
        raise TraceError("a custom collective's graph has no nodes: it would never finish", file=graph.source, rank=graph.rank)
    ptr, dep_pos = graph.dep_indices()
    bounds, deps_flat = ptr.tolist(), dep_pos.tolist()
    deps = tuple(tuple(p for p in deps_flat[bounds[i] : bounds[i + 1]] if p >= 0) for i in range(n))
    children: list[list[int]] = [[] for _ in range(n)]
    for child, parents in enumerate(deps):
        for parent in parents:
            children[parent].append(child)
    return CustomRankGraph(
        ops=tuple(ops),
        peers=tuple(peers),
        nbytes=tuple(nbytes),
        tags=tuple(tags),
        duration_ns=tuple((graph.duration_s * 1e9).tolist()),
        node_ids=tuple(ids),
        deps=deps,
        children=tuple(tuple(c) for c in children),
        file=graph.source,
    )


def _bad(graph: WorkloadGraph, pos: int, what: str) -> TraceError:
    return TraceError(f"{graph.node_summary(pos)}: {what}", file=graph.source, rank=graph.rank)
