"""Rooted collectives (reduce, gather, scatter, broadcast) and the barrier: per-rank phases and
their multi-dimensional plan (DESIGN.md, collectives layer). ASTRA-sim rejects reduce, gather,
scatter and barrier, and replays broadcast from its recorded duration; trainsim simulates them.

**Root.** Chakra carries no root attribute: the root is the communicator group's first member
(rank 0 for a whole-machine collective). On a logical dimension the *ring root* of a ring is
its member sharing the root's coordinate on that dimension.

**Algorithms per dimension.** The rooted types read the implementation list of their nearest
relative (reduce, broadcast and barrier: ``all-reduce-implementation``; gather and scatter:
``all-gather-implementation``) and map each entry to a tree over the ring's n members, in ring
order from the ring root (relative position r = 0 .. n-1), the entry's ``Algorithm.rooted``
(``algorithms.py``):

- ``ring`` -> *chain*: r's parent is r-1 (a pipeline along the ring; successive chunks overlap,
  the ring broadcast / reduce of NCCL);
- ``direct`` / ``directN`` -> *star*: every member's parent is the root (one step; the window
  is ignored);
- ``halvingDoubling`` / ``doubleBinaryTree`` -> *binomial* tree (Thakur, Rabenseifner and Gropp,
  "Optimization of Collective Communication Operations in MPICH", IJHPCA 19(1), 2005, §3-4):
  r's parent is r - lowbit(r); its children are r + 2^j for 2^j < lowbit(r) (the root: every
  2^j < n), sent largest subtree first; r's subtree is [r, min(r + lowbit(r), n)).

**Per rank, per phase** (E = endpoint delay, red(b) = local reduction of b bytes, as in
``collective_engine``; an insertion is a bundle of E plus red when it reduces; sending costs the
sender nothing, astra-sim-semantics.md A3, B1):

- broadcast of D bytes: the root: E, then D to each child. Others: on the parent's D: E, then D
  to each child; done after the sends (as ASTRA-sim's tree, D4).
- reduce of D bytes: a leaf: E, then D to its parent. Others: every child's D -> E + red(D);
  after the last of these, D to the parent (the root: done).
- gather (each member holds a block of b bytes; the ring root ends with n b): tree: a leaf: E,
  then its block up; an inner node: every child's subtree (size(c) b) -> E; after the last, its
  subtree size(r) b up. Chain: each member sends its own block after E, then forwards every
  block from its child after E (one block per message, so blocks pipeline; n-1-r forwards).
- scatter (the ring root holds n b; each member ends with b): tree: the root: E, then size(c) b
  to each child; others: on the parent's message E, then size(c) b to each child. Chain: the
  root: E, then the n-1 blocks to r = 1 farthest-destination first; r receives n-r blocks, E
  after each, forwards the first n-r-1 and keeps the last (its own).
- barrier (dissemination, Hensgen, Finkel and Manber, "Two algorithms for barrier
  synchronization", IJPP 17(1), 1988): ceil(log2 n) rounds; in round j a member sends 0 bytes
  to the member 2^j ahead and waits for the one 2^j behind; E at the start and after every
  receive. Every member runs it whatever the list says.

**Multi-dimensional plan** over the active logical dimensions ``order`` (ascending), each
chunk of c bytes (gather / scatter: c is the per-member block; the others: the buffer):

- broadcast: phase i on dim order[i]; a ring takes part iff its coordinates on order[i+1:]
  are the root's (the dims the data has not spread over yet), input c;
- reduce: phase i on order[i]; a ring takes part iff its coordinates on order[:i] are the
  root's (the dims already reduced into it), input c;
- gather: as reduce, per-member input c x prod(sizes of order[:i]);
- scatter: dims descending (order reversed); phase i on order'[i], taking part iff its
  coordinates on order'[i+1:] are the root's; the ring root holds c x prod(sizes of
  order'[i:]) and passes each member 1/n of it;
- barrier: one phase of 0 bytes per dim, every ring.

A rank whose ring does not take part in a phase skips it (no time). Sizes in bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from trainsim.collectives.algorithms import CHAIN, STAR, AlgoSpec, algorithm
from trainsim.collectives.base import Phase, PhaseHost
from trainsim.collectives.logical import FLAT, GROUP, NET, LogicalLayout
from trainsim.collectives.plan import PhaseSpec
from trainsim.enums import CommType

REDUCE = int(CommType.REDUCE)
GATHER = int(CommType.GATHER)
SCATTER = int(CommType.SCATTER)
BROADCAST = int(CommType.BROADCAST)
BARRIER = int(CommType.BARRIER)
ROOTED_TYPES = (REDUCE, GATHER, SCATTER, BROADCAST)
PLANNED_TYPES = (*ROOTED_TYPES, BARRIER)
"""Collective types planned by this module."""

DISSEMINATION = "dissemination"


def rooted_algorithm(algo: AlgoSpec) -> AlgoSpec:
    """The tree (``Algorithm.rooted``) a rooted collective runs on a dimension whose list entry
    is ``algo``."""
    return AlgoSpec(algorithm(algo.kind).rooted, algo.window, algo.flat)


# -- trees over relative positions 0..n-1 ---------------------------------------------------


def _span(kind: str, r: int, n: int) -> int:
    """Binomial: the width of r's subtree before clipping to n (root: next power of 2 >= n)."""
    if r == 0:
        return 1 << (n - 1).bit_length()
    return r & -r


def tree_parent(kind: str, r: int, n: int) -> int:
    """Relative position of r's parent (-1 for the root)."""
    if r == 0:
        return -1
    if kind == CHAIN:
        return r - 1
    if kind == STAR:
        return 0
    return r - (r & -r)


def tree_children(kind: str, r: int, n: int) -> list[int]:
    """r's children, in the order r sends to them (largest subtree first)."""
    if kind == CHAIN:
        return [r + 1] if r + 1 < n else []
    if kind == STAR:
        return list(range(1, n)) if r == 0 else []
    out = []
    m = _span(kind, r, n) >> 1
    while m >= 1:
        if r + m < n:
            out.append(r + m)
        m >>= 1
    return out


def subtree_size(kind: str, r: int, n: int) -> int:
    """Members in r's subtree, r included."""
    if kind == CHAIN:
        return n - r
    if kind == STAR:
        return n if r == 0 else 1
    return min(_span(kind, r, n), n - r)


def dissemination_rounds(n: int) -> int:
    """ceil(log2 n) rounds of the dissemination barrier (0 for n = 1)."""
    return (n - 1).bit_length()


# -- the plan -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RootedPhaseSpec(PhaseSpec):
    """A phase of a rooted collective or barrier: ``root_index`` is the ring root's index in
    ring order; a rank takes part iff ``(rank // stride) % size == coord`` for every
    ``(stride, size, coord)`` of ``fixed``."""

    root_index: int = 0
    fixed: tuple[tuple[int, int, int], ...] = ()

    def takes_part(self, rank: int) -> bool:
        return all(rank // stride % size == coord for stride, size, coord in self.fixed)


def _coord_key(layout: LogicalLayout, ldim: int) -> tuple[int, int]:
    """(stride, size) giving a rank's coordinate on ``ldim``."""
    dim = layout.dims[ldim]
    if dim.kind == NET:
        d = dim.net_dim
        return layout.topology.strides[d], layout.topology.sizes[d]
    if dim.kind == FLAT:
        return 1, layout.topology.npus
    raise AssertionError("a group layout has a single dimension")  # pragma: no cover


def rooted_chunk_phases(
    comm_type: int, chunk: int, order: list[int], layout: LogicalLayout, root: int
) -> list[PhaseSpec]:
    """The phases of one chunk of ``chunk`` bytes (gather / scatter: per-member block) of a
    rooted collective or barrier rooted at global rank ``root``; ``order`` lists the active
    logical dims ascending."""
    sizes = layout.sizes
    flat = [d for d in order if layout.dims[d].kind == FLAT]
    if flat:  # a flat dimension spans every rank: the collective runs on it alone
        order = flat[:1]
    if comm_type == SCATTER:
        order = list(reversed(order))

    def fixed(dims: list[int]) -> tuple[tuple[int, int, int], ...]:
        out = []
        for d in dims:
            if layout.dims[d].kind == GROUP:
                continue
            stride, size = _coord_key(layout, d)
            out.append((stride, size, (root // stride) % size))
        return tuple(out)

    phases: list[PhaseSpec] = []
    for i, d in enumerate(order):
        root_index = layout.members(root, d)[1]
        if comm_type == BARRIER:
            algo = AlgoSpec(DISSEMINATION)
            phases.append(RootedPhaseSpec(d, algo, comm_type, 0, root_index=root_index))
            continue
        algo = rooted_algorithm(layout.algos[d])
        if comm_type == BROADCAST:
            size, fix = chunk, fixed(order[i + 1 :])
        elif comm_type == REDUCE:
            size, fix = chunk, fixed(order[:i])
        elif comm_type == GATHER:
            size = chunk * math.prod(sizes[e] for e in order[:i])
            fix = fixed(order[:i])
        else:  # scatter: the ring root holds every block of the ring below it
            size = chunk * math.prod(sizes[e] for e in order[i:])
            fix = fixed(order[i + 1 :])
        phases.append(RootedPhaseSpec(d, algo, comm_type, size, root_index=root_index, fixed=fix))
    return phases


def rooted_bytes_sent(comm_type: int, kind: str, in_size: int, r: int, n: int) -> int:
    """Bytes the member at relative position r sends in one phase (for tests and reports)."""
    if comm_type == BARRIER or n < 2:
        return 0
    if comm_type == BROADCAST:
        return in_size * len(tree_children(kind, r, n))
    if comm_type == REDUCE:
        return 0 if r == 0 else in_size
    if comm_type == GATHER:
        if r == 0:
            return 0
        return in_size * (subtree_size(kind, r, n) if kind != CHAIN else n - r)
    block = in_size // n  # scatter
    if kind == CHAIN:
        return block * (n - 1 - r)
    return block * sum(subtree_size(kind, c, n) for c in tree_children(kind, r, n))


# -- the phases -----------------------------------------------------------------------------


class RootedPhase(Phase):
    """One rank's broadcast, reduce, gather or scatter phase on a chain, star or binomial tree.

    Built as a small schedule: ``expected`` lists the receives (src, bytes) posted at the start;
    every receive is followed by a bundle; ``plan[k]`` lists the (dst, bytes) messages sent when
    the k-th bundle completes; the phase ends with bundle ``last``."""

    __slots__ = ("kind", "r", "n", "parent", "children", "bundles", "expected", "plan", "last")

    def __init__(
        self, host: PhaseHost, spec: RootedPhaseSpec, rank: int, members: list[int], index: int
    ) -> None:
        super().__init__(host, rank, members, index, spec.comm_type, spec.in_size)
        n = len(members)
        kind = spec.algo.kind
        root = spec.root_index
        r = (index - root) % n
        self.kind = kind
        self.r = r
        self.n = n

        def member(pos: int) -> int:
            return members[(root + pos) % n]

        p = tree_parent(kind, r, n)
        self.parent = member(p) if p >= 0 else -1
        kids = tree_children(kind, r, n)
        self.children = [member(c) for c in kids]
        self.bundles = 0
        # plan: per completed bundle (1, 2, ...), the messages it releases
        self.plan: dict[int, list[tuple[int, int]]] = {}
        self.expected: list[tuple[int, int]] = []  # receives to post at start: (src, bytes)
        t = self.comm_type
        d = self.data_size
        parent = self.parent
        if t == BROADCAST:
            if r > 0:
                self.expected = [(parent, d)]
            self.plan[1] = [(c, d) for c in self.children]
        elif t == REDUCE:
            if kids:
                self.expected = [(c, d) for c in self.children]
            last = max(len(kids), 1)
            self.plan[last] = [(parent, d)] if r > 0 else []
        elif t == GATHER:
            if kind == CHAIN:
                # own block after the start bundle, then one forward per received block
                below = n - 1 - r
                child = self.children[0] if kids else -1
                self.expected = [(child, d)] * below
                if r > 0:
                    for j in range(1, below + 2):
                        self.plan[j] = [(parent, d)]
                else:
                    self.plan[max(below, 1)] = []
            else:
                self.expected = [
                    (m, d * subtree_size(kind, c, n))
                    for m, c in zip(self.children, kids, strict=True)
                ]
                last = max(len(kids), 1)
                self.plan[last] = [(parent, d * subtree_size(kind, r, n))] if r > 0 else []
        elif t == SCATTER:
            block = d // n
            if kind == CHAIN:
                child = self.children[0] if kids else -1
                if r == 0:
                    self.plan[1] = [(child, block)] * (n - 1)
                else:
                    mine = n - r  # blocks arriving here, farthest destination first
                    self.expected = [(parent, block)] * mine
                    for j in range(1, mine):
                        self.plan[j] = [(child, block)]
                    self.plan[mine] = []
            else:
                if r > 0:
                    self.expected = [(parent, block * subtree_size(kind, r, n))]
                self.plan[1] = [
                    (m, block * subtree_size(kind, c, n))
                    for m, c in zip(self.children, kids, strict=True)
                ]
        else:  # pragma: no cover - the plan only builds the types above
            raise AssertionError(f"not a rooted type: {t}")
        self.last = max(self.plan)  # the bundle after which the phase ends

    def _starts_with_bundle(self) -> bool:
        """Leaves of reduce / gather, roots of broadcast / scatter, chain gather members: E first."""
        t = self.comm_type
        if t in (BROADCAST, SCATTER):
            return self.r == 0
        if t == GATHER and self.kind == CHAIN:
            return self.r > 0
        return not self.expected

    def start(self) -> None:
        host = self.host
        for src, nbytes in self.expected:
            host.recv(self, src, nbytes)
        if self._starts_with_bundle():
            host.bundle(self, 0)

    def on_recv(self, _arg: Any = None) -> None:
        self.host.bundle(self, self.data_size if self.comm_type == REDUCE else 0)

    def on_general(self, _arg: Any = None) -> None:
        self.bundles += 1
        host = self.host
        for dst, nbytes in self.plan.get(self.bundles, ()):
            host.send(self, dst, nbytes, dst)
        if self.bundles == self.last:
            host.finish(self)


class DisseminationPhase(Phase):
    """One rank's dissemination barrier on its ring (0-byte messages)."""

    __slots__ = ("n", "rounds", "round", "dist")

    def __init__(
        self, host: PhaseHost, spec: RootedPhaseSpec, rank: int, members: list[int], index: int
    ) -> None:
        super().__init__(host, rank, members, index, spec.comm_type, 0)
        self.n = len(members)
        self.rounds = dissemination_rounds(self.n)
        self.round = 0
        self.dist = 1

    def start(self) -> None:
        self.host.bundle(self, 0)

    def on_general(self, _arg: Any = None) -> None:
        if self.round == self.rounds:
            self.host.finish(self)
            return
        members, n, i, d = self.members, self.n, self.index, self.dist
        src = members[(i - d) % n]
        self.host.send(self, members[(i + d) % n], 0, src)
        self.host.recv(self, src, 0)
        self.round += 1
        self.dist = d * 2

    def on_recv(self, _arg: Any = None) -> None:
        self.host.bundle(self, 0)


def make_rooted_phase(
    host: PhaseHost, spec: RootedPhaseSpec, rank: int, members: list[int], index: int
) -> Phase:
    if spec.comm_type == BARRIER:
        return DisseminationPhase(host, spec, rank, members, index)
    return RootedPhase(host, spec, rank, members, index)
