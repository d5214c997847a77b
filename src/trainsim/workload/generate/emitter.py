"""Low-level graph emission for the generators: compute segments, collectives and
point-to-point messages with role placeholders (DESIGN.md, workload layer: generators).

A generator builds one *template* graph per pipeline stage with an :class:`Emitter`.
Collectives carry a group *role* (``tp``, ``dp``, ...) instead of a communicator-group id, and
sends/receives a peer *code* (:data:`PREV`, :data:`NEXT`) instead of a rank; :func:`specialize`
turns a template into one rank's graph by looking both up, sharing every other array with the
template (so ranks of one stage share ids, types, durations and dependencies, and the executor
builds one dependency index per stage).

Compute segments are chained: each depends on the previous segment or blocking collective of
the rank, in emission order, which is also node-id (issue) order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from trainsim.enums import NodeType
from trainsim.workload.graph import ABSENT, GraphBuilder, WorkloadGraph, attribute_row
from trainsim.workload.models.ops import Op

PREV = -10  # peer code: the previous pipeline stage (cyclic)
NEXT = -11  # peer code: the next pipeline stage (cyclic)
ROLE_CODES = {"": 0, "tp": 1, "dp": 2, "ep": 3, "edp": 4, "emb": 5, "cp": 6}
ROLE_NAMES = tuple(ROLE_CODES)
RECOMPUTE_PREFIX = "recompute."  # name prefix of the ops that recompute activations


class Emitter:
    """Builds one template graph; ``tail`` is the id of the last chained node."""

    def __init__(self, source: str, timer: object | None, precision: str = "bf16") -> None:
        self.builder = GraphBuilder(source=source)
        self.timer = timer
        self.precision = precision
        self.next_id = 0
        self.tail: int | None = None
        self.roles: list[int] = []
        self.recompute: list[float] = []  # seconds of recomputation in each node (ops named recompute.*)
        self._op_time: dict[Op, float] = {}
        self._totals_cache: dict[int, tuple[tuple[Op, ...], tuple[float, float, int, float]]] = {}
        # packed attribute rows (graph.attribute_row), one per distinct compute op tuple or
        # collective: a step repeats a few hundred of them over up to millions of nodes
        self._compute_rows: dict[int, tuple[tuple[Op, ...], tuple]] = {}
        self._collective_rows: dict[tuple[int, int, str], tuple] = {}
        self.compute_s = 0.0

    def _id(self) -> int:
        nid = self.next_id
        self.next_id += 1
        return nid

    def op_time(self, op: Op) -> float:
        cached = self._op_time.get(op)
        if cached is None:
            timer = self.timer
            cached = 0.0 if timer is None else float(timer.op_time(op.kind, op.flops, op.nbytes, op.shape, self.precision))  # type: ignore[attr-defined]
            self._op_time[op] = cached
        return cached

    def _deps(self, extra: Sequence[int], chained: bool) -> list[int]:
        deps = [self.tail] if chained and self.tail is not None else []
        if len(extra):
            deps += [d for d in extra if d is not None and d not in deps]
        return deps

    def _totals(self, ops: tuple[Op, ...]) -> tuple[float, float, int, float]:
        """(seconds, FLOPs, bytes, seconds of recomputation) of a tuple of ops, cached by the
        tuple's identity (the generators reuse one tuple per compiled step)."""
        hit = self._totals_cache.get(id(ops))
        if hit is None or hit[0] is not ops:
            totals = (
                sum(self.op_time(op) for op in ops),
                float(sum(op.flops for op in ops)),
                int(sum(op.nbytes for op in ops)),
                sum(self.op_time(op) for op in ops if op.name.startswith(RECOMPUTE_PREFIX)),
            )
            hit = (ops, totals)
            self._totals_cache[id(ops)] = hit
        return hit[1]

    def compute(self, name: str, ops: tuple[Op, ...], extra_deps: Sequence[int] = ()) -> int:
        """One COMP node for ``ops`` (durations summed), chained after ``tail``."""
        dur, flops, nbytes, recompute = self._totals(ops)
        hit = self._compute_rows.get(id(ops))
        if hit is None or hit[0] is not ops:
            hit = (ops, attribute_row(duration_s=dur, num_ops=flops, tensor_size=nbytes))
            self._compute_rows[id(ops)] = hit
        nid = self._id()
        self.builder.add_row(nid, NodeType.COMP_NODE, name, hit[1], None, self._deps(extra_deps, True), (), b"")
        self.roles.append(0)
        self.recompute.append(recompute)
        self.tail = nid
        self.compute_s += dur
        return nid

    def collective(self, name: str, comm_type: int, size: int, role: str, extra_deps: Sequence[int] = (), *, chained: bool = True) -> int:
        """A COMM_COLL node on the group ``role``; chained (blocking) unless ``chained=False``."""
        key = (int(comm_type), int(size), role)
        row = self._collective_rows.get(key)
        if row is None:
            row = self._collective_rows[key] = attribute_row(comm_type=key[0], comm_size=key[1], pg_name=role)
        nid = self._id()
        self.builder.add_row(nid, NodeType.COMM_COLL_NODE, name, row, None, self._deps(extra_deps, chained), (), b"")
        self.roles.append(ROLE_CODES[role])
        self.recompute.append(0.0)
        if chained:
            self.tail = nid
        return nid

    def send(self, name: str, size: int, peer: int, tag: int, deps: Sequence[int]) -> int:
        nid = self.builder.add(
            self._id(), NodeType.COMM_SEND_NODE, name, comm_size=int(size), comm_dst=peer, comm_tag=tag, data_deps=list(deps)
        )
        self.roles.append(0)
        self.recompute.append(0.0)
        return nid

    def memory(self, name: str, node_type: int, size: int, deps: Sequence[int], *, copy_engine: bool = False) -> int:
        """A MEM_LOAD or MEM_STORE node of ``size`` bytes to the expanded-memory tier, after
        ``deps`` only (not chained). It holds the rank's GPU communication slot, or with
        ``copy_engine`` its CPU slot (``is_cpu_op``; ``system/rank.py``), which nothing else of a
        generated step uses: a copy stream beside compute and collectives, one access at a time."""
        if copy_engine:
            nid = self.builder.add(self._id(), node_type, name, tensor_size=int(size), data_deps=list(deps), is_cpu_op=True)
        else:
            nid = self.builder.add(self._id(), node_type, name, tensor_size=int(size), data_deps=list(deps))
        self.roles.append(0)
        self.recompute.append(0.0)
        return nid

    def recv(self, name: str, size: int, peer: int, tag: int, deps: Sequence[int] = ()) -> int:
        nid = self.builder.add(
            self._id(), NodeType.COMM_RECV_NODE, name, comm_size=int(size), comm_src=peer, comm_tag=tag, data_deps=list(deps)
        )
        self.roles.append(0)
        self.recompute.append(0.0)
        return nid

    def build(self) -> Template:
        graph = self.builder.build()  # ids are emitted ascending, so positions = emission order
        return Template(graph, np.asarray(self.roles, dtype=np.int8), self.compute_s, np.asarray(self.recompute, dtype=float))


class Template:
    """A stage's graph with role placeholders; :func:`specialize` makes rank graphs of it.
    ``roles``: each node's group role code; ``recompute_s``: seconds of recomputation in each
    node (part of a compute node's duration; 0 elsewhere)."""

    def __init__(self, graph: WorkloadGraph, roles: np.ndarray, compute_s: float, recompute_s: np.ndarray | None = None) -> None:
        self.graph = graph
        self.roles = roles
        self.compute_s = compute_s
        self.recompute_s = np.zeros(len(graph)) if recompute_s is None else recompute_s
        self.coll_positions = {code: np.flatnonzero(roles == code) for code in range(1, len(ROLE_NAMES)) if np.any(roles == code)}
        self._src_prev = graph.comm_src == PREV
        self._src_next = graph.comm_src == NEXT
        self._dst_prev = graph.comm_dst == PREV
        self._dst_next = graph.comm_dst == NEXT
        self._involved_cache: dict[tuple, dict[int, tuple[bool, ...]]] = {}

    def specialize(
        self,
        rank: int,
        group_ids: dict[str, str | None],
        prev_rank: int,
        next_rank: int,
        dims: dict[str, tuple[bool, ...] | None],
    ) -> WorkloadGraph:
        """Rank ``rank``'s graph: roles -> communicator-group ids, peer codes -> ranks."""
        g = self.graph
        lut = np.array([""] + [group_ids.get(r) or "" for r in ROLE_NAMES[1:]], dtype=object)
        pg_name = lut[self.roles].tolist()
        src = g.comm_src
        dst = g.comm_dst
        if self._src_prev.any() or self._src_next.any():
            src = src.copy()
            src[self._src_prev] = prev_rank
            src[self._src_next] = next_rank
        if self._dst_prev.any() or self._dst_next.any():
            dst = dst.copy()
            dst[self._dst_prev] = prev_rank
            dst[self._dst_next] = next_rank
        key = tuple(sorted((r, d) for r, d in dims.items() if d is not None))
        involved = self._involved_cache.get(key)
        if involved is None:
            involved = {}
            for code, positions in self.coll_positions.items():
                d = dims.get(ROLE_NAMES[code])
                if d is not None:
                    for pos in positions.tolist():
                        involved[pos] = d
            self._involved_cache[key] = involved
        return replace(g, pg_name=pg_name, comm_src=src, comm_dst=dst, involved_dim=involved, rank=rank, warnings=[])


def has_peer_codes(graph: WorkloadGraph) -> bool:
    return bool(np.any(graph.comm_src < ABSENT) or np.any(graph.comm_dst < ABSENT))
