"""Equivalent ranks of any workload, found from the graphs alone (DESIGN.md, system layer;
"Speed: symmetry first"): workloads read from Chakra files, which carry no parallelism.

The generator's path (``replica.py``) knows which ranks are data-parallel replicas and
tensor-parallel peers. Here nothing is known but the graphs and the communicator groups, so the
equivalence is proved instead: a rank ``x`` behaves as rank ``r`` when a *renaming* ``pi`` of
every rank with ``pi(x) = r`` maps the whole workload onto itself:

- for every rank ``y``, ``y`` and ``pi(y)`` have the same arrays (ids, types, durations,
  sizes, tags, dependencies, involved dimensions: everything but peers and groups);
- each send / receive peer ``p`` of ``y`` at a position is renamed to the peer of ``pi(y)`` at
  that position, ``pi(p)``, along the same network path (``MultiDimTopology.shape`` under the
  platform's mode: the dimensions crossed and the coordinate offset class in each, as
  ``group.py`` compares them: the same delay and injection port);
- each collective's group ``G`` of ``y`` at a position maps, member by member, to the group
  ``G'`` of ``pi(y)`` there, either up to a rotation of the member order (``pi(G[i]) =
  G'[i + s]``) when both groups have the same offset table, every member seeing every offset
  alike, and, where halving-doubling is configured (a member talks to ``i + o`` or ``i - o``
  by its index), offsets ``o`` and ``-o`` alike (``group.py``'s condition for a collective
  whose members all behave as member 0; so a rotation of the order changes nothing), or, for a
  group whose members see the offsets differently (a ring's consecutive ranks, whose last
  member reaches the first the long way round), in order (``pi(G[i]) = G'[i]``) when the two
  groups' ordered tables are equal: the path from member ``i`` to member ``j`` has the same
  shape in both, for every ``i``, ``j`` (groups of up to :data:`ORDERED_GROUP_LIMIT`
  members); rooted collectives and asymmetric algorithms (double binary tree) refuse;
- no collective spans the whole machine (a renaming would have to be an automorphism of
  the network; ``whole_step.py`` covers uniform whole-machine steps).

On a backend of the ``pairwise`` symmetry class (a message's delay depends on its two ends
only) the whole run is then invariant under ``pi``: rank ``pi(y)`` does at each instant what
``y`` does. ``pi`` is built by propagation from ``x -> r`` (every peer and group member it
reaches is bound, each binding checked once; every rank must be reached, so ``pi`` is a
bijection of the machine) and refused at the first mismatch. Renamings compose, so the orbits
of the renamings found (union-find) are classes of ranks with identical times; each class runs
its smallest rank, the others are ``simulate``'s *mirrors* (they issue their representative's
collectives on groups holding them). That needs every send / receive peer of a
representative to be a representative and every member of its groups to be itself or one of
its mirrors; otherwise nothing is folded.

:func:`find_mirrors` gives ``{representative: mirrors}`` (``{}`` when nothing can be shown),
:func:`world_result` every rank's result from the representatives' run, as a run of every rank
reports it (``replica_result.ReplicaRecords`` renames the records to each rank's groups).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from trainsim.collectives import ASYMMETRIC_KINDS, HALVING_DOUBLING, ROOTED_TYPES
from trainsim.config.types import Platform
from trainsim.enums import NodeType
from trainsim.system.result import NodeTimeline, RunResult
from trainsim.system.symmetry.partial import why_not_mirrored_ports
from trainsim.workload.graph import CodedNames, WorkloadGraph

_SEND, _RECV, _COLL = int(NodeType.COMM_SEND_NODE), int(NodeType.COMM_RECV_NODE), int(NodeType.COMM_COLL_NODE)

# every column but the peers (comm_src, comm_dst) and groups (pg_name), and the names
ORDERED_GROUP_LIMIT = 64
"""The largest group whose ordered table (member ``i`` to member ``j``, every pair) is built."""

_SAME_COLUMNS = (
    "ids", "types", "duration_s", "is_cpu_op", "num_ops", "tensor_size", "comm_type", "comm_size",
    "comm_tag", "comm_priority", "present", "data_dep_ptr", "data_dep_ids", "ctrl_dep_ptr", "ctrl_dep_ids",
)  # fmt: skip


def same_structure(a: WorkloadGraph, b: WorkloadGraph) -> bool:
    """Whether two graphs are equal but for peers, groups and node names."""
    if a is b:
        return True
    if len(a) != len(b) or a.use_ctrl_deps != b.use_ctrl_deps:
        return False
    for name in _SAME_COLUMNS:
        x, y = getattr(a, name), getattr(b, name)
        if x is not y and not np.array_equal(x, y):
            return False
    return a.involved_dim == b.involved_dim and (a.extra is b.extra or a.extra == b.extra)


class _Profile:
    """One rank's peers and groups, by position, as first-occurrence labels (``pattern``) and
    the distinct values in that order (``values``)."""

    __slots__ = ("cls", "peer_key", "peers", "group_key", "groups")

    def __init__(
        self, graph: WorkloadGraph, cls: int, positions: _Positions, interned: dict[Any, int], patterns: dict[Any, Any]
    ) -> None:
        p2p, is_send, colls, colls_of = positions
        self.cls = cls
        vals = np.where(is_send, graph.comm_dst[p2p], graph.comm_src[p2p]).astype(np.int64)
        self.peer_key, self.peers = _labels(vals, interned)
        pg = graph.pg_name
        if isinstance(pg, CodedNames) and pg.codes is not None:  # which groups are equal
            codes = pg.codes  # ranks read from one template share this array
            found = patterns.get((cls, id(codes)))
            if found is None or found[0] is not codes:
                found = patterns[cls, id(codes)] = (codes, *_labels(codes[colls].astype(np.int64), interned))
            self.group_key = found[1]
            self.groups = [pg.values[c] for c in found[2]]
            return
        names = colls_of(pg)  # the groups by position (itemgetter: no Python loop)
        self.groups = list(dict.fromkeys(names))
        index = dict(zip(self.groups, range(len(self.groups)), strict=True))
        labels = np.fromiter(map(index.__getitem__, names), dtype=np.int64, count=len(names))
        self.group_key = interned.setdefault(labels.tobytes(), len(interned))  # as _labels's


_Positions = tuple[np.ndarray, np.ndarray, np.ndarray, Callable[[list[str]], tuple[str, ...]]]
"""A class's send / receive positions, which of them are sends, its collectives' positions and
their getter."""


def _getter(positions: list[int]) -> Callable[[list[str]], tuple[str, ...]]:
    if not positions:
        return lambda _names: ()
    if len(positions) == 1:
        p = positions[0]
        return lambda names: (names[p],)
    return operator.itemgetter(*positions)


def _labels(vals: np.ndarray, interned: dict[Any, int]) -> tuple[int, list[int]]:
    if vals.size == 0:
        return interned.setdefault(b"", len(interned)), []
    uniq, first, inv = np.unique(vals, return_index=True, return_inverse=True)
    order = np.argsort(first)
    relabel = np.empty(len(uniq), dtype=np.int64)
    relabel[order] = np.arange(len(uniq))
    return interned.setdefault(relabel[inv].tobytes(), len(interned)), uniq[order].tolist()


class _Finder:
    def __init__(self, platform: Platform, graphs: Sequence[WorkloadGraph], compat_astra: bool) -> None:
        from trainsim.topology import MultiDimTopology

        # the run's path rule: a message's shape is what its backend prices (topology/multidim.py)
        self.topo = MultiDimTopology.of_network(platform.network, compat_astra=compat_astra)
        self.groups = {name: tuple(members) for name, members in platform.comm_groups.items()}
        self.graphs = graphs
        self.n = len(graphs)
        self._tables: dict[str, Any] = {}
        self._ordered: dict[str, Any] = {}
        self.halving = _halving_configured(platform)
        self._shapes: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}

    # -- classes of equal structure ---------------------------------------------------------
    def profiles(self) -> list[_Profile] | None:
        classes: list[WorkloadGraph] = []
        buckets: dict[tuple, list[int]] = {}
        positions: list[_Positions] = []
        interned: dict[Any, int] = {}
        digests: dict[int, int] = {}  # id(array) -> hash of its bytes (graphs share arrays)

        def digest(array: np.ndarray) -> int:
            found = digests.get(id(array))
            if found is None:
                found = digests[id(array)] = hash(array.tobytes())
            return found

        of_rank = []
        for g in self.graphs:
            # exact up to hash collisions, so that a bucket holds one class (else: compared)
            key = (len(g), g.use_ctrl_deps, digest(g.types), digest(g.duration_s), digest(g.comm_size), digest(g.data_dep_ids))
            cls = next((c for c in buckets.get(key, ()) if same_structure(classes[c], g)), -1)
            if cls < 0:
                cls = len(classes)
                classes.append(g)
                buckets.setdefault(key, []).append(cls)
                t = g.types
                p2p = np.flatnonzero((t == _SEND) | (t == _RECV))
                colls = np.flatnonzero(t == _COLL)
                for p in colls.tolist():
                    if int(g.comm_type[p]) in ROOTED_TYPES:
                        return None
                positions.append((p2p, t[p2p] == _SEND, colls, _getter(colls.tolist())))
            of_rank.append(cls)
        if len(classes) == self.n:
            return None  # no two ranks alike
        patterns: dict[Any, Any] = {}
        return [_Profile(g, cls, positions[cls], interned, patterns) for g, cls in zip(self.graphs, of_rank, strict=True)]

    # -- the path between two ranks, as group.py's offset table sees it -------------------------
    def shape(self, a: int, b: int) -> tuple[tuple[int, int], ...]:
        found = self._shapes.get((a, b))
        if found is None:
            found = self._shapes[a, b] = self.topo.shape(a, b)
        return found

    def table(self, name: str) -> Any:
        """The group's offset table (``o`` and ``-o`` alike where halving-doubling is
        configured), None when a member sees an offset differently or the group is not one (a
        whole-machine collective)."""
        if name in self._tables:
            return self._tables[name]
        members = self.groups.get(name)
        out: Any = None
        if members is not None and len(set(members)) == len(members) and all(0 <= m < self.n for m in members):
            k = len(members)
            table: list[tuple[tuple[int, int], ...]] = []
            for o in range(1, k):
                seen = {self.shape(members[i], members[(i + o) % k]) for i in range(k)}
                if len(seen) != 1:
                    break
                table.append(seen.pop())
            if len(table) == k - 1 and (not self.halving or all(table[o - 1] == table[k - o - 1] for o in range(1, k))):
                out = tuple(table)
        self._tables[name] = out
        return out

    def ordered_table(self, name: str) -> Any:
        """The shape of the path from member ``i`` to member ``j`` for every pair, in the
        group's order; None when the group is not one or is too large."""
        if name in self._ordered:
            return self._ordered[name]
        members = self.groups.get(name)
        out: Any = None
        if (
            members is not None
            and len(members) <= ORDERED_GROUP_LIMIT
            and len(set(members)) == len(members)
            and all(0 <= m < self.n for m in members)
        ):
            out = tuple(tuple(self.shape(a, b) for b in members) for a in members)
        self._ordered[name] = out
        return out

    # -- one renaming -----------------------------------------------------------------------
    def renaming(self, prof: list[_Profile], x: int, r: int) -> list[int] | None:
        """``pi`` (a list: rank -> rank) with ``pi(x) = r`` that maps the workload onto itself,
        or None."""
        pi = [-1] * self.n
        taken = [False] * self.n
        pi[x] = r
        taken[r] = True
        todo = [x]
        gmap: dict[str, str] = {}
        shape, groups = self.shape, self.groups

        def bind(a: int, b: int) -> bool:
            if not (0 <= a < self.n and 0 <= b < self.n):
                return False
            if pi[a] >= 0:
                return pi[a] == b
            if taken[b]:
                return False
            pi[a] = b
            taken[b] = True
            todo.append(a)
            return True

        while todo:
            y = todo.pop()
            z = pi[y]
            py, pz = prof[y], prof[z]
            if py.cls != pz.cls or py.peer_key != pz.peer_key or py.group_key != pz.group_key:
                return None
            for a, b in zip(py.peers, pz.peers, strict=True):
                if not bind(a, b) or shape(y, a) != shape(z, b):
                    return None
            for g, h in zip(py.groups, pz.groups, strict=True):
                if g in gmap:
                    if gmap[g] != h:
                        return None
                    continue
                tg, th = self.table(g), self.table(h)
                gm, hm = groups.get(g, ()), groups.get(h, ())
                if y not in gm or z not in hm:
                    return None
                s = hm.index(z) - gm.index(y)
                if tg is None and th is None and s == 0:  # in order: the ordered tables decide
                    og = self.ordered_table(g)
                    if og is None or og != self.ordered_table(h):
                        return None
                elif tg is None or tg != th:
                    return None
                k = len(gm)
                if any(not bind(gm[i], hm[(i + s) % k]) for i in range(k)):
                    return None
                gmap[g] = h
        if not all(taken):
            return None
        if len(set(gmap.values())) != len(gmap):
            return None
        return pi


def _configured_kinds(platform: Platform) -> set[str]:
    from trainsim.collectives.algorithms import parse_algorithm

    impl = platform.system.implementations
    names = (*impl.all_reduce, *impl.all_gather, *impl.reduce_scatter, *impl.all_to_all)
    return {parse_algorithm(name).kind for name in names}


def _halving_configured(platform: Platform) -> bool:
    return HALVING_DOUBLING in _configured_kinds(platform)


def _algorithms_symmetric(platform: Platform) -> bool:
    """Whether every configured algorithm runs the same schedule on every member (no custom
    collective, no tree or in-switch one)."""
    if platform.system.implementations.custom:
        return False
    return not (_configured_kinds(platform) & ASYMMETRIC_KINDS)


def find_mirrors(
    platform: Platform, graphs: Sequence[WorkloadGraph], *, compat_astra: bool | None = None
) -> dict[int, tuple[int, ...]]:
    """``{representative: mirrors}`` of ranks proved to behave as a representative (module
    docstring), ``{}`` when none can be shown. The caller checks the backend's symmetry class.
    ``compat_astra`` is the run's mode (its message path rule; None: the platform's)."""
    if len(graphs) < 2 or not _algorithms_symmetric(platform):
        return {}
    if compat_astra is None:
        compat_astra = platform.compat == "astra"
    finder = _Finder(platform, graphs, compat_astra)
    prof = finder.profiles()
    if prof is None:
        return {}
    parent = list(range(len(graphs)))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    members: dict[int, list[int]] = {}
    for rank, p in enumerate(prof):
        members.setdefault(p.cls, []).append(rank)
    for ranks in members.values():
        r0 = ranks[0]
        for x in ranks[1:]:
            if find(x) == find(r0):
                continue
            pi = finder.renaming(prof, x, r0)
            if pi is None:
                continue
            for y, z in enumerate(pi):
                a, b = find(y), find(z)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    orbits: dict[int, list[int]] = {}
    for rank in range(len(graphs)):
        orbits.setdefault(find(rank), []).append(rank)
    mirrors = {rep: tuple(rs[1:]) for rep, rs in orbits.items() if len(rs) > 1}
    if not mirrors:
        return {}
    mirror_of = {m: rep for rep, ms in mirrors.items() for m in ms}
    for rep in orbits:
        p = prof[rep]
        if any(peer in mirror_of for peer in p.peers):
            return {}
        for g in p.groups:
            if any(mirror_of.get(m, rep) != rep for m in finder.groups.get(g, ())):
                return {}
    if why_not_mirrored_ports(platform, graphs, mirror_of, compat_astra=compat_astra):
        return {}
    return mirrors


def world_result(run: RunResult, graphs: Sequence[WorkloadGraph], mirrors: dict[int, tuple[int, ...]]) -> RunResult:
    """Every rank's result from a run of the representatives (``simulate(..., mirrors=...)``
    with empty graphs for the mirrors): a mirror has its representative's times, timeline (on
    its own graph) and collective records (on its own groups)."""
    from trainsim.system.symmetry.replica_result import ReplicaRecords

    source = list(range(len(graphs)))
    for rep, ms in mirrors.items():
        for m in ms:
            source[m] = rep
    ranks = []
    timelines = []
    for rank, graph in enumerate(graphs):
        own = run.ranks[source[rank]]
        ranks.append(own if own.rank == rank else replace(own, rank=rank))
        if run.timelines:
            ran = run.timelines[source[rank]]
            timelines.append(NodeTimeline(graph, ran.start_ns, ran.end_ns))
    base: dict[int, list[Any]] = {r: [] for r in set(source)}
    for rec in run.collectives:
        if rec.rank in base:
            base[rec.rank].append(rec)
    simulated = len(base)
    info = {**run.info, "ranks_simulated": simulated, "world": len(graphs)}
    records = ReplicaRecords(base, source, graphs)
    return replace(run, ranks=ranks, timelines=timelines, collectives=records, info=info)
