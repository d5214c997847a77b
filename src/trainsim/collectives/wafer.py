"""Wafer-scale collective algorithms as flow programs (DESIGN.md, collectives layer;
docs/fred.md): what moves where, with no clock. ``system/flow_program.py`` runs a program on a
flow-level backend.

A program is a list of :class:`Step` s; a step starts when the steps it names in ``after`` are
done and is done when every transfer in it has arrived. A transfer is a :class:`Unicast`
(``src -> dst`` along the fabric's route) or a :class:`Tree` (one flow over a set of links: an
in-network reduction up and multicast down, ``InNetworkFlow.send_tree``). Sizes are bytes;
``nbytes`` of a collective is its full buffer: the all-reduce's data, the reduce-scatter's input,
the all-gather's output, as ``comm_size`` in Chakra.

Algorithms (:data:`WAFER_ALGORITHMS`):

- ``ring``: each concurrent group a logical ring over its members in the order given, every
  member streaming its ring share to the next at once (the steady state of a pipelined ring,
  ``2 (n-1)/n D`` per member for an all-reduce, ``(n-1)/n D`` for reduce-scatter or
  all-gather); over the mesh the ring's messages follow X-Y routes.
- ``hierarchical``: a multi-level decomposition (the 2-D algorithm on the mesh: rows, then
  columns), reduce-scatter level by level then all-gather back, the data cut into ``chunks``
  pipelined so that different chunks occupy different levels at once; with two ``orders``
  half the chunks take the levels in the opposite order (the two concurrent chunks in opposite
  directions of the paper's mesh baseline).
- ``in_network``: each group a reduction / multicast tree through the switches (FRED-B/D); a
  group spanning several L1 switches goes through the L2 planes its conflict-graph colouring
  gives (``topology/fred_routing.py``), striped over them, one round after another. Every
  member sends its ``D`` once (all-reduce), instead of ``2 (n-1)/n D``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from trainsim.errors import ConfigError
from trainsim.topology.fred_routing import colour_trees
from trainsim.topology.wafer import WaferFabric

ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER = "all_reduce", "reduce_scatter", "all_gather"
COMM_TYPES = (ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER)


@dataclass(frozen=True, slots=True)
class Unicast:
    src: int
    dst: int
    nbytes: float


@dataclass(frozen=True, slots=True)
class Tree:
    links: tuple[int, ...]
    nbytes: float
    latency_ns: float = 0.0


@dataclass(frozen=True, slots=True)
class Step:
    transfers: tuple[Unicast | Tree, ...]
    after: tuple[int, ...] = ()


@dataclass
class Program:
    """Steps in an order where every ``after`` points back. ``sent_per_npu``: bytes each
    member of the largest group injects (for effective bandwidth)."""

    steps: list[Step] = field(default_factory=list)
    sent_per_npu: float = 0.0

    def add(self, transfers: Sequence[Unicast | Tree], after: Sequence[int] = ()) -> int:
        self.steps.append(Step(tuple(transfers), tuple(after)))
        return len(self.steps) - 1


def _check(comm: str) -> None:
    if comm not in COMM_TYPES:
        raise ConfigError(f"wafer collectives run {', '.join(COMM_TYPES)}; got {comm!r}")


def ring_share(comm: str, nbytes: float, n: int) -> float:
    """Bytes each ring member sends (the ring's steady state; ``nbytes``: full buffer)."""
    _check(comm)
    if n < 2:
        return 0.0
    return (2.0 if comm == ALL_REDUCE else 1.0) * (n - 1) / n * nbytes


def ring_transfers(groups: Sequence[Sequence[int]], comm: str, nbytes: float) -> list[Unicast]:
    out = []
    for g in groups:
        share = ring_share(comm, nbytes, len(g))
        if share:
            out += [Unicast(g[i], g[(i + 1) % len(g)], share) for i in range(len(g))]
    return out


def ring(groups: Sequence[Sequence[int]], comm: str, nbytes: float) -> Program:
    """Every group's ring at once (one step)."""
    prog = Program(sent_per_npu=max((ring_share(comm, nbytes, len(g)) for g in groups), default=0.0))
    prog.add(ring_transfers(groups, comm, nbytes))
    return prog


def hierarchical(
    levels: Sequence[Sequence[Sequence[int]]], comm: str, nbytes: float, *, orders: Sequence[Sequence[int]] = ((0, 1),), chunks: int = 4
) -> Program:
    """The multi-level algorithm. ``levels[k]`` partitions the ranks into level k's groups
    (the mesh: rows, columns); ``orders``: the level orders, the chunks split evenly among
    them; ``chunks`` per order, pipelined (a chunk's phase on a level waits for the chunk before
    it on that level)."""
    _check(comm)
    if chunks < 1 or not orders:
        raise ConfigError(f"hierarchical needs chunks >= 1 and an order, got chunks={chunks}, orders={orders}")
    prog = Program()
    chunk_bytes = nbytes / (len(orders) * chunks)
    sent = 0.0
    for order in orders:
        if sorted(order) != list(range(len(levels))):
            raise ConfigError(f"level order {tuple(order)}: expected a permutation of 0..{len(levels) - 1}")
        phases: list[tuple[int, str]] = []
        if comm in (ALL_REDUCE, REDUCE_SCATTER):
            phases += [(lv, REDUCE_SCATTER) for lv in order]
        if comm in (ALL_REDUCE, ALL_GATHER):
            phases += [(lv, ALL_GATHER) for lv in reversed(order)]
        last_of_phase: list[int | None] = [None] * len(phases)
        for _ in range(chunks):
            prev: int | None = None
            size = chunk_bytes  # the buffer on the level: shrinks by each reduce-scatter
            sizes = []
            for lv, kind in phases:
                n = len(levels[lv][0])
                if kind == REDUCE_SCATTER:
                    sizes.append(size)
                    size /= n
                else:
                    size *= n
                    sizes.append(size)
            for p, ((lv, kind), sz) in enumerate(zip(phases, sizes, strict=True)):
                after = [s for s in (prev, last_of_phase[p]) if s is not None]
                prev = last_of_phase[p] = prog.add(ring_transfers(levels[lv], kind, sz), after)
            sent += sum(ring_share(kind, sz, len(levels[lv][0])) for (lv, kind), sz in zip(phases, sizes, strict=True))
    prog.sent_per_npu = sent
    return prog


def tree_bytes(comm: str, nbytes: float, n: int) -> float:
    """Bytes a tree streams: an all-reduce or reduce-scatter sends the full buffer up once, an
    all-gather multicasts the whole output (each member's 1/n share)."""
    _check(comm)
    return nbytes if n > 1 else 0.0


def in_network(fabric: WaferFabric, groups: Sequence[Sequence[int]], roles: Sequence[str], comm: str, nbytes: float) -> Program:
    """Every group's in-network tree, routed by conflict-graph colouring (module docstring)."""
    if not fabric.params.in_network:
        raise ConfigError(f"in_network needs a fabric whose switches reduce (a {fabric.kind} with in_network false)")
    routes = colour_trees(groups, roles, fabric.params.per_l1, fabric.params.planes)
    prog = Program()
    rounds: dict[int, list[Tree]] = {}
    hop_ns = fabric.params.latency_ns
    for g, route in zip(groups, routes, strict=True):
        size = tree_bytes(comm, nbytes, len(g))
        if not size:
            continue
        planes = route.planes or (0,)
        depth = 4 if route.planes else 2
        for p in planes:
            rounds.setdefault(route.round, []).append(Tree(fabric.tree_links(g, (p,)), size / len(planes), depth * hop_ns))
        prog.sent_per_npu = max(prog.sent_per_npu, size if comm != ALL_GATHER else size / len(g))
    prev: list[int] = []
    for r in sorted(rounds):
        prev = [prog.add(rounds[r], prev)]
    return prog


def forward_tree(fabric: WaferFabric, root: int, members: Sequence[int]) -> list[tuple[int, int]]:
    """(parent, child) pairs of a tree over ``members`` rooted at ``root``, each NPU forwarding
    what it receives: grown from the root, every step joins the member nearest (in route
    hops; ties: the parent forwarding to the fewest so far, then lowest ids) to the tree so far (Prim's algorithm on route length). On the mesh
    every tree edge is one link."""
    inside, edges = [root], []
    rest = sorted(set(members) - {root})
    fanout = dict.fromkeys(members, 0)
    fanout[root] = 0
    while rest:
        _, _, child, parent = min((len(fabric.route(a, b)), fanout[a], b, a) for a in inside for b in rest)
        fanout[parent] += 1
        edges.append((parent, child))
        inside.append(child)
        rest.remove(child)
    return edges


def stream_in(fabric: WaferFabric, demand: Sequence[tuple[Sequence[int], float]]) -> Program:
    """Parameters streamed in from off-wafer memory: each ``(members, nbytes)`` is data every
    member needs, striped over all I/O controllers. With in-network multicast (FRED-B/D) each
    controller's stripe is one tree down to the members. Otherwise the controller delivers it
    once to one member (on the mesh the NPU it is joined to, when that is one; else the members
    in turn) and the members forward it along a :func:`forward_tree` as it arrives
    (cut-through: every edge of the tree streams at once)."""
    prog = Program()
    ios = fabric.io
    if not ios:
        raise ConfigError("the wafer has no I/O controllers to stream from")
    moves: list[Unicast | Tree] = []
    trees: dict[tuple[int, tuple[int, ...]], list[tuple[int, int]]] = {}
    for members, nbytes in demand:
        stripe = nbytes / len(ios)
        for k, io in enumerate(ios):
            if fabric.params.in_network:
                moves.append(Tree(fabric.tree_links(members, io=io), stripe, 4 * fabric.params.latency_ns))
                continue
            attached = fabric.io_attach[k]
            first = attached if attached in members else members[k % len(members)]
            key = (first, tuple(members))
            if key not in trees:
                trees[key] = forward_tree(fabric, first, members)
            moves.append(Unicast(io, first, stripe))
            moves += [Unicast(a, b, stripe) for a, b in trees[key]]
    prog.add(moves)
    return prog


def stream_out(fabric: WaferFabric, sources: Sequence[tuple[Sequence[int], float]]) -> Program:
    """Data written back to off-wafer memory: ``(members, nbytes)`` held (already reduced) by
    the members, each member writing its ``1/len`` share striped over the controllers."""
    prog = Program()
    moves = []
    for members, nbytes in sources:
        share = nbytes / len(members) / len(fabric.io)
        moves += [Unicast(m, io, share) for m in members for io in fabric.io]
    prog.add(moves)
    return prog


WAFER_ALGORITHMS = ("ring", "hierarchical", "in_network")
"""The wafer's collective algorithms (above); ``collectives.algorithms.ALGORITHMS`` holds the
per-rank phase machines of the multi-dimensional runtime."""
