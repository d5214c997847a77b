"""Custom collective algorithms: a per-rank graph of sends, receives and computes that *is*
the algorithm (ASTRA-sim's ``CustomAlgorithm``, ``astraccl/custom_collectives``; the graphs are
Chakra ET files, e.g. lowered from MSCCL-IR by Chakra's converter). Collectives layer: the
graphs arrive here as plain data (:class:`CustomGraphs`, built by ``system/custom.py`` from the
files); :class:`CustomPhase` walks one rank's graph on its host, and :func:`check_graphs` proves
before any run that the ranks' graphs finish together.

Semantics (ASTRA-sim 518bd51, ``CustomAlgorithm.cc``, ``Sys::generate_collective``):

- the collective is one stream with one phase; the phase issues every node whose dependencies
  are done, at once and without resource limits (ascending node id here; ASTRA-sim's order is
  its hash set's, which only matters for same-tick sends sharing a congestion-aware link);
- SEND: one message of the node's ``comm_size`` bytes to graph rank ``comm_dst``; the node is
  done when the message arrives (the backend's send handler, A3/G12);
- RECV: a receive of ``comm_size`` bytes from graph rank ``comm_src``, matched on (source,
  destination, ``comm_tag``, bytes) in order (A3); done at the match;
- COMP (a reduction or copy): waits its ``duration_micros`` x 1000 ns, 1 ns when 0 (whole ns in
  compatibility mode; the exact duration otherwise); no compute model, no slot;
- the phase ends on a rank when its last node is done: the collective ends there then;
- sizes are the graph's, as written: the workload's ``comm_size`` is not used (ASTRA-sim's
  documented limitation: the collective size is fixed when the graph is generated);
- graph rank g is the g-th member of the collective's group as the group lists it (rank g
  without a group); which rank file a member runs is its position among the members sorted
  (``CommunicatorGroup``'s ``pos_in_group``), the same thing unless a group lists its members
  out of order (then in compatibility mode only; otherwise the listed position).

Sizes in bytes, times in ns.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trainsim.collectives.base import Phase
from trainsim.errors import TraceError

SEND, RECV, COMP = 0, 1, 2
"""The operations a custom graph's nodes run (``CustomRankGraph.ops``)."""

_OP_NAMES = ("SEND", "RECV", "COMP")


@dataclass(frozen=True, eq=False)
class CustomRankGraph:
    """One graph rank's program: per node (in ascending id order) its operation, peer graph
    rank (-1 for COMP), bytes, tag, duration (ns, COMP only), id, and the positions it waits
    for and that wait for it."""

    ops: tuple[int, ...]
    peers: tuple[int, ...]
    nbytes: tuple[int, ...]
    tags: tuple[int, ...]
    duration_ns: tuple[float, ...]
    node_ids: tuple[int, ...]
    deps: tuple[tuple[int, ...], ...]
    children: tuple[tuple[int, ...], ...]
    file: str = ""

    def describe(self, pos: int) -> str:
        """``node 5 (RECV of 131072 B from graph rank 7, tag 0)``, for messages."""
        op = self.ops[pos]
        what = _OP_NAMES[op]
        if op == SEND:
            what += f" of {self.nbytes[pos]} B to graph rank {self.peers[pos]}, tag {self.tags[pos]}"
        elif op == RECV:
            what += f" of {self.nbytes[pos]} B from graph rank {self.peers[pos]}, tag {self.tags[pos]}"
        return f"node {self.node_ids[pos]} ({what})"


@dataclass(frozen=True, eq=False)
class CustomGraphs:
    """A custom algorithm: one :class:`CustomRankGraph` per graph rank, read from the rank files
    ``<source>.<rank>.et``."""

    source: str
    ranks: tuple[CustomRankGraph, ...]

    @property
    def nranks(self) -> int:
        return len(self.ranks)


def check_graphs(graphs: CustomGraphs, file_of: tuple[int, ...] | None = None) -> list[str]:
    """Run every rank's graph without time (sends never block, a receive completes once a
    matching message was sent, computes always): the timed run completes iff this does,
    whatever the delays. ``file_of[i]``: the rank file member i runs (default: file i), its
    peers being members. Graphs that cannot finish are a :class:`TraceError` naming the files
    and the receives that wait forever; returns a warning per kind of message sent and never
    received (ASTRA-sim drops them)."""
    n = graphs.nranks
    file_of = tuple(range(n)) if file_of is None else file_of
    progs = [graphs.ranks[f] for f in file_of]
    who = _namer(file_of)
    for r, g in enumerate(progs):
        for p, peer in enumerate(g.peers):
            if peer == r:
                raise TraceError(
                    f"{who(r)} {g.describe(p)} has itself as its peer", file=f"{graphs.source}.<rank>.et"
                )
    left = [[len(d) for d in g.deps] for g in progs]
    sent: dict[tuple[int, int, int, int], int] = defaultdict(int)
    parked: dict[tuple[int, int, int, int], list[tuple[int, int]]] = defaultdict(list)
    work = [(r, p) for r in range(n) for p, d in enumerate(progs[r].deps) if not d]
    done = [0] * n

    def finish(r: int, p: int) -> None:
        done[r] += 1
        counts = left[r]
        for c in progs[r].children[p]:
            counts[c] -= 1
            if counts[c] == 0:
                work.append((r, c))

    while work:
        r, p = work.pop()
        g = progs[r]
        op = g.ops[p]
        if op == SEND:
            key = (r, g.peers[p], g.tags[p], g.nbytes[p])
            waiting = parked.get(key)
            if waiting:
                finish(*waiting.pop())
            else:
                sent[key] += 1
        elif op == RECV:
            key = (g.peers[p], r, g.tags[p], g.nbytes[p])
            if not sent[key]:
                parked[key].append((r, p))
                continue
            sent[key] -= 1
        finish(r, p)
    if any(done[r] < len(progs[r].ops) for r in range(n)):
        raise TraceError(_deadlock(progs, who, parked, sent, done), file=f"{graphs.source}.<rank>.et")
    return [
        f"{who(src)} sends {count} message(s) of {nbytes} B to {who(dst)} with tag {tag} that it "
        "never receives"
        for (src, dst, tag, nbytes), count in sorted(sent.items())
        if count
    ]


def _namer(file_of: tuple[int, ...]) -> Callable[[int], str]:
    """How messages name process i: its graph rank, or its member position and rank file when
    the two differ (a group listed out of order, in compatibility mode)."""
    if file_of == tuple(range(len(file_of))):
        return lambda i: f"graph rank {i}"
    return lambda i: f"member {i} (rank file {file_of[i]})"


def _deadlock(
    progs: list[CustomRankGraph],
    who: Callable[[int], str],
    parked: dict[tuple[int, int, int, int], list[tuple[int, int]]],
    sent: dict[tuple[int, int, int, int], int],
    done: list[int],
) -> str:
    stuck = [(r, p, key) for key, waits in parked.items() for r, p in waits]
    stuck.sort()
    total = sum(len(g.ops) for g in progs) - sum(done)
    parts = []
    for r, p, (src, _dst, tag, nbytes) in stuck[:3]:
        what = f"{who(r)} {progs[r].describe(p)} waits for a message {who(src)} never sends"
        other = sorted(k[3] for k, c in sent.items() if c and k[:3] == (src, r, tag) and k[3] != nbytes)
        if other:
            what += f" (it sends {other[0]} B with that tag: a receive matches only the same size)"
        parts.append(what)
    more = f"; {len(stuck) - 3} more receives wait" if len(stuck) > 3 else ""
    return (
        f"the custom collective's graphs cannot finish ({total} nodes never run): "
        + "; ".join(parts)
        + more
    )


class CustomPhase(Phase):
    """One rank's run of its custom graph (module docstring). ``to_rank[g]``: the global rank
    of graph rank g; ``whole_ns``: COMP durations as ASTRA-sim counts them (whole ns, 1 for 0).
    The host calls ``on_sent(pos)`` when a SEND's message arrives, ``on_recv(pos)`` when a
    RECV matches and ``on_general(pos)`` when a COMP's time is over."""

    __slots__ = ("graph", "to_rank", "whole_ns", "left", "remaining")

    def __init__(self, *args: Any, graph: CustomRankGraph, whole_ns: bool) -> None:
        super().__init__(*args)
        self.graph = graph
        self.to_rank = self.members
        self.whole_ns = whole_ns
        self.left = [len(d) for d in graph.deps]
        self.remaining = len(graph.ops)

    def start(self) -> None:
        for pos, deps in enumerate(self.graph.deps):
            if not deps:
                self._issue(pos)

    def _issue(self, pos: int) -> None:
        g = self.graph
        op = g.ops[pos]
        if op == SEND:
            self.host.message(self, self.to_rank[g.peers[pos]], g.nbytes[pos], g.tags[pos], pos)
        elif op == RECV:
            self.host.post(self, self.to_rank[g.peers[pos]], g.nbytes[pos], g.tags[pos], pos)
        else:
            ns = g.duration_ns[pos]
            if self.whole_ns:
                ns = float(round(ns)) or 1.0
            self.host.wait(self, ns, pos)

    def _done(self, pos: int) -> None:
        self.remaining -= 1
        left = self.left
        for child in self.graph.children[pos]:
            left[child] -= 1
            if left[child] == 0:
                self._issue(child)
        if self.remaining == 0:
            self.host.finish(self)

    def on_general(self, arg: Any = None) -> None:
        self._done(arg)

    def on_recv(self, arg: Any = None) -> None:
        self._done(arg)

    def on_sent(self, arg: Any) -> None:
        self._done(arg)
