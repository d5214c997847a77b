"""Where a training step's time goes, rank by rank: every instant of the step on a rank is given
to exactly one category, so the categories sum to the step time (DESIGN.md, report layer;
definitions in docs/breakdown.md).

A pure function of the executor's node timelines (issue and completion time of every node,
``system.result.NodeTimeline``) and, when a generator made the workload, of what each node is
for (:class:`NodeRoles`: the group role of each collective, the recomputation inside each
compute node). An instant of ``[0, step)`` goes to the first category, in this order of
precedence, that has something in flight on the rank then:

1. ``compute``: a GPU compute node (the part of it that is not recomputation);
2. ``recompute``: the recomputation share of a GPU compute node (a node that mixes both is
   split in proportion to the generator's operator times);
3. ``cpu``: a CPU node;
4. ``memory``: a memory load or store (a memory stall);
5. collectives: with roles, ``tp_comm`` (tensor-parallel groups), ``dp_comm`` (data-parallel
   and expert-data-parallel gradient and parameter synchronization), ``other_comm`` (expert
   all-to-alls, the tied-embedding all-reduce); without roles, one ``comm[GROUP]`` per
   communicator group (``comm[all]`` for the whole machine). With roles, on a rank of a
   pipeline, the part of a collective before its group's last member issued it (the k-th
   collective on a group is one instance, as the collective runtime pairs them) is
   ``pipeline_bubble`` instead: the ranks of a stage are alike, so a member that is late is
   in another stage (the tied-embedding all-reduce of the last stage waits for the first
   stage's last backward: the pipeline draining);
6. a receive the rank waits for: from the moment the node that consumes it has every other
   dependency done until the message arrives. With roles (a generated pipeline) the wait is
   ``pipeline_bubble`` until the sending stage has produced the tensor (the send's own
   dependencies done) and ``p2p_wait`` from then until it arrives; without roles all of it is
   ``p2p_wait``;
7. ``p2p_wait``: a send in flight;
8. with roles, on a rank that sends or receives between stages, the time after its last node
   until the step ends is ``pipeline_bubble`` (it waits for the pipeline to drain);
9. ``idle``: nothing of the above.

"Exposed" communication is exposed on the rank's own timeline (nothing of higher precedence
runs meanwhile), not necessarily on the step's critical path. Times in seconds (timelines in ns).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trainsim.enums import NodeType
from trainsim.report.intervals import merge
from trainsim.system.result import NodeTimeline

COMM_CATEGORIES = ("tp_comm", "dp_comm", "other_comm")
"""Categories of collectives when roles are known; :attr:`NodeRoles.comm` indexes this."""
ROLE_CATEGORY = {"tp": "tp_comm", "dp": "dp_comm", "edp": "dp_comm", "ep": "other_comm", "emb": "other_comm", "cp": "other_comm", "": "other_comm"}
"""The category of a collective on a generated group of each role (``emitter.ROLE_CODES``)."""

# display order (the attribution's precedence is _PRECEDENCE)
ROLE_ORDER = ("compute", "recompute", "cpu", "tp_comm", "pipeline_bubble", "p2p_wait", "dp_comm", "other_comm", "memory", "idle")
ALWAYS_WITH_ROLES = ("compute", "recompute", "tp_comm", "pipeline_bubble", "p2p_wait", "dp_comm", "memory", "idle")
ALWAYS_WITHOUT_ROLES = ("compute", "p2p_wait", "idle")

LABELS = {
    "compute": "compute",
    "recompute": "recompute",
    "cpu": "CPU",
    "memory": "memory",
    "tp_comm": "TP comm",
    "dp_comm": "DP comm",
    "other_comm": "other comm",
    "pipeline_bubble": "bubble",
    "p2p_wait": "p2p wait",
    "idle": "idle",
}
"""Short human names of the categories (tables, plots); communication is the exposed part."""


DEFINITIONS = {
    "compute": "a GPU compute node runs (its recomputation share excepted)",
    "recompute": "a GPU compute node recomputes activations for the backward pass (activation checkpointing)",
    "cpu": "a CPU node runs and no GPU compute does",
    "memory": "a memory load or store is in flight and no compute runs (a memory stall)",
    "tp_comm": "a tensor-parallel collective is in flight and no compute or memory node runs (exposed tensor-parallel communication)",
    "dp_comm": "a data-parallel (or expert-data-parallel) gradient or parameter collective is in flight and no compute, "
    "memory node or tensor-parallel collective runs (exposed data-parallel communication)",
    "other_comm": "only another collective is in flight (an expert all-to-all, the tied-embedding all-reduce)",
    "pipeline_bubble": "no compute, memory node or collective runs and the rank waits for another pipeline stage: a receive "
    "whose sender has not produced the tensor yet, or the rest of the step after the rank's last node; also the part of "
    "a collective before its last member, in another stage, issued it",
    "p2p_wait": "no compute, memory node or collective runs and the rank waits for a point-to-point transfer: a receive "
    "whose tensor is on its way, or a send in flight",
    "idle": "nothing is in flight and the rank waits for nothing of the above",
}
"""What each category counts (docs/breakdown.md says the same, with the precedence)."""
GROUP_DEFINITION = (
    "comm[GROUP]: a collective on communicator group GROUP ('all': every rank) is in flight and no compute, CPU or "
    "memory node runs (when collectives of two groups overlap, the group whose name sorts first)"
)
GRAPH_P2P_DEFINITION = (
    "no compute, memory node or collective runs and the rank waits for a receive (from when the node that consumes it has "
    "every other input) or a send is in flight"
)


def label(key: str) -> str:
    """A category's short name (``comm[GROUP]`` stays as it is)."""
    return LABELS.get(key, key)

_COMP, _RECV, _SEND, _COLL = (int(t) for t in (NodeType.COMP_NODE, NodeType.COMM_RECV_NODE, NodeType.COMM_SEND_NODE, NodeType.COMM_COLL_NODE))
_MEM = (int(NodeType.MEM_LOAD_NODE), int(NodeType.MEM_STORE_NODE))


@dataclass(frozen=True)
class NodeRoles:
    """What a generator knows of one rank's graph, position by position: ``comm[p]`` the
    category of collective ``p`` (an index into :data:`COMM_CATEGORIES`; -1 for other nodes),
    ``recompute_s[p]`` the seconds of recomputation in compute node ``p`` (of its
    ``duration_s``)."""

    comm: np.ndarray
    recompute_s: np.ndarray


def roles_of(workload: Any) -> list[NodeRoles] | None:
    """Per rank, the :class:`NodeRoles` of a generated workload
    (``workload.generate.GeneratedWorkload``: ``node_roles``, ``node_recompute_s``,
    ``stage_of_rank``), one object per pipeline stage; None when it records no roles."""
    from trainsim.workload.generate.emitter import ROLE_NAMES

    if not workload.node_roles or not workload.stage_of_rank:
        return None
    lut = np.array([COMM_CATEGORIES.index(ROLE_CATEGORY[name]) for name in ROLE_NAMES], dtype=np.int8)
    per_stage = []
    for stage, codes in enumerate(workload.node_roles):
        graph = workload.graphs[workload.stage_of_rank.index(stage)]
        comm = np.where(graph.types == _COLL, lut[codes], -1).astype(np.int8)
        recompute = workload.node_recompute_s[stage] if stage < len(workload.node_recompute_s) else np.zeros(len(graph))
        per_stage.append(NodeRoles(comm, recompute))
    return [per_stage[s] for s in workload.stage_of_rank]


def step_breakdown(
    timelines: Sequence[NodeTimeline],
    step_s: float,
    roles: Sequence[NodeRoles | None] | None = None,
    *,
    repeats: Sequence[int] | None = None,
) -> list[dict[str, float]]:
    """Per rank (in the order of ``timelines``), seconds per category, summing to ``step_s``;
    the same keys, in display order, for every rank. ``roles``: per rank, or None for a
    workload read from files (categories that the graph alone tells: compute, exposed
    communication per communicator group, p2p wait, idle). ``repeats`` (a replica slice's
    ``RunResult.repeats``): rank ``i``'s row is rank ``repeats[i]``'s, and only those ranks'
    rows are worked out (every group of theirs holds the rank each member repeats, so a group's
    issue times are found among them)."""
    with_roles = roles is not None and all(r is not None for r in roles)
    ranks = sorted(set(repeats)) if repeats is not None else range(len(timelines))
    cache = _Cache(timelines, ranks)
    keys: dict[int, int] = {}

    def key_of(i: int) -> int:
        if i not in keys:
            keys[i] = cache.own_key(i)
        return keys[i]

    done: dict[tuple[Any, ...], dict[str, float]] = {}
    rows: dict[int, dict[str, float]] = {}
    for i in ranks:
        rank_roles = roles[i] if with_roles and roles is not None else None
        key = (key_of(i), id(rank_roles), tuple(key_of(q) for q in cache.peers(i)), cache.joined_key(i))
        row = done.get(key)
        if row is None:
            row = done[key] = _rank(cache, i, timelines[i], step_s, rank_roles)
        rows[i] = row
    return _align([rows[i] for i in (repeats if repeats is not None else ranks)], with_roles)


def step_mean(rows: Sequence[dict[str, float]], weights: Sequence[int] | None = None) -> dict[str, float]:
    """The step as a whole: each category's mean over ranks (``weights``: ranks per row)."""
    if not rows:
        return {}
    w = np.asarray(weights if weights is not None else [1] * len(rows), dtype=float)
    return {k: float(np.dot(w, [r.get(k, 0.0) for r in rows]) / w.sum()) for k in rows[0]}


def _align(rows: list[dict[str, float]], with_roles: bool) -> list[dict[str, float]]:
    """Every row with the same keys in display order: the categories always shown, and any
    other that is non-zero on some rank."""
    present = {k for r in rows for k, v in r.items() if v > 0}
    if with_roles:
        keys = [k for k in ROLE_ORDER if k in ALWAYS_WITH_ROLES or k in present]
    else:
        groups = sorted(k for k in present if k.startswith("comm["))
        keys = ["compute"] + [k for k in ("cpu",) if k in present] + groups + ["p2p_wait"] + [k for k in ("memory",) if k in present] + ["idle"]
    return [{k: r.get(k, 0.0) for k in keys} for r in rows]


class _Cache:
    """Arrays of the timelines, converted once per list (ranks that repeat a representative
    share its lists), and each rank's sends by (destination, tag)."""

    def __init__(self, timelines: Sequence[NodeTimeline], ranks: Sequence[int]) -> None:
        self.timelines = timelines
        self.ranks = ranks  # those whose rows are worked out (and whose collectives join)
        self._arrays: dict[int, np.ndarray] = {}
        self._deps: dict[tuple[int, int, bool], tuple[np.ndarray, np.ndarray]] = {}
        self._keys: dict[tuple[Any, ...], int] = {}
        self._lists: dict[tuple[int, int, int, int], int] = {}
        self._sends: dict[int, dict[tuple[int, int], list[float]]] = {}
        self._joined: dict[int, list[tuple[np.ndarray, np.ndarray, int]]] | None = None

    def array(self, values: Sequence[float]) -> np.ndarray:
        got = self._arrays.get(id(values))
        if got is None:
            got = self._arrays[id(values)] = np.asarray(values, dtype=float)
        return got

    def own_key(self, i: int) -> int:
        """A small id for rank ``i``'s own timeline: equal for equal graphs and times
        (compared once per set of lists)."""
        t = self.timelines[i]
        g = t.graph
        lists = (id(g.ids), id(g.types), id(t.start_ns), id(t.end_ns))
        got = self._lists.get(lists)
        if got is None:
            key = (g.ids.tobytes(), g.types.tobytes(), self.array(t.start_ns).tobytes(), self.array(t.end_ns).tobytes())
            got = self._lists[lists] = self._keys.setdefault(key, len(self._keys))
        return got

    def peers(self, i: int) -> list[int]:
        g = self.timelines[i].graph
        src = g.comm_src[g.types == _RECV]
        return [int(q) for q in np.unique(src) if 0 <= q < len(self.timelines)] if src.size else []

    def deps(self, t: NodeTimeline) -> tuple[np.ndarray, np.ndarray]:
        """(child position, parent position) of every dependency inside the graph."""
        g = t.graph
        key = (id(g.data_dep_ids), id(g.ctrl_dep_ids), g.use_ctrl_deps)
        got = self._deps.get(key)
        if got is None:
            ptr, parent = g.dep_indices()
            child = np.repeat(np.arange(len(g)), np.diff(ptr))
            keep = parent >= 0
            got = self._deps[key] = (child[keep], parent[keep])
        return got

    def _issue_classes(self, t: NodeTimeline, memo: dict[tuple[int, int], list[np.ndarray]]) -> list[np.ndarray]:
        """Positions of the rank's collectives, one array per communicator group, each in
        issue order (ranks that share a timeline's lists share these)."""
        g = t.graph
        key = (id(t.start_ns), id(g.ids))
        got = memo.get(key)
        if got is None:
            start = self.array(t.start_ns)
            pos = np.flatnonzero((g.types == _COLL) & (self.array(t.end_ns) >= 0))
            pos = pos[np.lexsort((pos, start[pos]))]
            names = np.asarray([g.pg_name[p] for p in pos.tolist()], dtype=object)
            got = memo[key] = [pos[names == name] for name in dict.fromkeys(names.tolist())]
        return got

    def _member_issues(self) -> dict[int, list[tuple[np.ndarray, np.ndarray, int]]]:
        """Per rank of :attr:`ranks`, per communicator group of its collectives: (positions in
        issue order, when the group's last member among those ranks issued each, a key of those
        times)."""
        memo: dict[tuple[int, int], list[np.ndarray]] = {}
        per_rank: list[list[tuple[str, np.ndarray]]] = []
        members: dict[str, list[np.ndarray]] = {}
        for i in self.ranks:
            t = self.timelines[i]
            start = self.array(t.start_ns)
            classes = self._issue_classes(t, memo)
            names = [_group(t.graph.pg_name[int(c[0])]) for c in classes]
            if len(set(names)) != len(names):  # shares lists with a rank grouped otherwise
                classes = self._issue_classes(t, {})
                names = [_group(t.graph.pg_name[int(c[0])]) for c in classes]
            per_rank.append(list(zip(names, classes, strict=True)))
            for name, c in zip(names, classes, strict=True):
                members.setdefault(name, []).append(start[c])
        last: dict[str, tuple[np.ndarray, int]] = {}
        for name, times in members.items():
            n = min(len(x) for x in times)
            arr = np.max(np.stack([x[:n] for x in times]), axis=0) if len(times) > 1 else times[0][:n]
            last[name] = (arr, hash(arr.tobytes()))
        return {i: [(c[: len(last[name][0])], *last[name]) for name, c in rank] for i, rank in zip(self.ranks, per_rank, strict=True)}

    def joined(self, i: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """Rank ``i``'s collectives, per group: (positions, when their last member issued them
        (ns), a key of those times)."""
        if self._joined is None:
            self._joined = self._member_issues()
        return self._joined[i]

    def joined_key(self, i: int) -> tuple[int, ...]:
        return tuple(k for _, _, k in self.joined(i))

    def produced_ns(self, q: int, dst: int, tag: int) -> list[float]:
        """When rank ``q``'s sends to ``dst`` with ``tag`` had their data (their own
        dependencies done), in the order they arrive (the order receives match them)."""
        sends = self._sends.get(q)
        if sends is None:
            t = self.timelines[q]
            g = t.graph
            start, end = self.array(t.start_ns), self.array(t.end_ns)
            child, parent = self.deps(t)
            ready = np.full(len(g), -np.inf)
            np.maximum.at(ready, child, end[parent])
            ready = np.where(np.isfinite(ready), ready, start)
            pos = np.flatnonzero((g.types == _SEND) & (end >= 0))
            pos = pos[np.argsort(end[pos], kind="stable")]
            sends = {}
            for p, d, tg in zip(pos.tolist(), g.comm_dst[pos].tolist(), g.comm_tag[pos].tolist(), strict=True):
                sends.setdefault((d, tg), []).append(float(ready[p]))
            self._sends[q] = sends
        return sends.get((dst, tag), [])


def _rank(cache: _Cache, rank: int, t: NodeTimeline, step_s: float, roles: NodeRoles | None) -> dict[str, float]:
    g = t.graph
    start, end = cache.array(t.start_ns), cache.array(t.end_ns)
    types = g.types
    ran = end >= 0
    cpu = g.is_cpu_op
    comp = (types == _COMP) & ran
    gpu = comp & ~cpu
    mem = np.isin(types, _MEM) & ran
    coll = (types == _COLL) & ran
    spans: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}

    def add(name: str, s: np.ndarray, e: np.ndarray) -> None:
        spans.setdefault(name, []).append((s, e))

    pipeline = roles is not None and bool(np.any((types == _SEND) | (types == _RECV)))
    if roles is not None:
        dur = g.duration_s[gpu]
        share = np.divide(roles.recompute_s[gpu], dur, out=np.zeros(dur.shape), where=dur > 0).clip(0.0, 1.0)
        split = end[gpu] - share * (end[gpu] - start[gpu])
        add("compute", start[gpu], split)
        add("recompute", split, end[gpu])
        issued = start.copy()  # when the collective's last member issued it
        if pipeline:
            for pos, last, _key in cache.joined(rank):
                issued[pos] = np.clip(last, start[pos], end[pos])
            add("pipeline_bubble", start[coll], issued[coll])
        codes = roles.comm
        for c, name in enumerate(COMM_CATEGORIES):
            m = coll & (codes == c)
            add(name, issued[m], end[m])
    else:
        add("compute", start[gpu], end[gpu])
        coll_pos = np.flatnonzero(coll)
        names = np.asarray([g.pg_name[p] or "all" for p in coll_pos.tolist()], dtype=object)
        for name in sorted(set(names.tolist())):
            m = coll_pos[names == name]
            add(f"comm[{name}]", start[m], end[m])
    add("cpu", start[comp & cpu], end[comp & cpu])
    add("cpu", start[mem & cpu], end[mem & cpu])
    add("memory", start[mem & ~cpu], end[mem & ~cpu])
    _receive_waits(cache, rank, t, start, end, pipeline, add)
    sends = (types == _SEND) & ran
    add("p2p_wait", start[sends], end[sends])
    finish_ns = float(end.max()) if end.size else 0.0
    step_ns = step_s * 1e9
    if pipeline and finish_ns < step_ns:
        add("pipeline_bubble", np.array([finish_ns]), np.array([step_ns]))
    order = ["compute", "recompute", "cpu", "memory", *(COMM_CATEGORIES if roles is not None else sorted(k for k in spans if k.startswith("comm["))), "pipeline_bubble", "p2p_wait"]
    out: dict[str, float] = {}
    cov_s, cov_e = np.empty(0), np.empty(0)
    covered = 0.0
    for name in order:
        parts = spans.get(name)
        if not parts:
            out[name] = 0.0
            continue
        s = np.concatenate([cov_s, *(p[0] for p in parts)])
        e = np.concatenate([cov_e, *(p[1] for p in parts)])
        cov_s, cov_e = merge(np.clip(s, 0.0, step_ns), np.clip(e, 0.0, step_ns))
        total = float(np.sum(cov_e - cov_s))
        out[name] = (total - covered) * 1e-9
        covered = total
    idle_ns = step_ns - covered
    # below a picosecond the difference is the rounding of the sums above, not idle time
    out["idle"] = idle_ns * 1e-9 if idle_ns >= 1e-3 else 0.0
    return out


def _group(name: str) -> str:
    """The collective runtime's key of a communicator group: "" for the whole machine."""
    return "" if name in ("", "0") else name


def _receive_waits(cache: _Cache, rank: int, t: NodeTimeline, start: np.ndarray, end: np.ndarray, pipeline: bool, add: Any) -> None:
    """The intervals during which the rank waits for a receive (precedence 6 of the module
    docstring): from when the receive's first consumer has every other dependency done (or
    the receive was posted, if later) until it completes."""
    g = t.graph
    recv = (g.types == _RECV) & (end >= 0)
    if not recv.any():
        return
    child, parent = cache.deps(t)
    val = end[parent]
    n = len(g)
    top = np.full(n, -np.inf)
    np.maximum.at(top, child, val)
    # the dependency that attains each child's latest end, and the latest end without it
    attains = np.flatnonzero(val == top[child])
    _, first = np.unique(child[attains], return_index=True)
    chosen = attains[first]
    rest = val.copy()
    rest[chosen] = -np.inf
    second = np.full(n, -np.inf)
    np.maximum.at(second, child, rest)
    other = top[child].copy()
    other[chosen] = second[child[chosen]]
    edges = recv[parent]
    wait_from = np.full(n, np.inf)
    np.minimum.at(wait_from, parent[edges], np.maximum(other[edges], start[parent[edges]]))
    pos = np.flatnonzero(recv & np.isfinite(wait_from))
    begin, finish = wait_from[pos], end[pos]
    keep = finish > begin
    pos, begin, finish = pos[keep], begin[keep], finish[keep]
    if not pipeline:
        add("p2p_wait", begin, finish)
        return
    produced = np.array(begin)
    taken: dict[tuple[int, int], int] = {}
    for j in np.argsort(start[pos], kind="stable").tolist():
        p = int(pos[j])
        key = (int(g.comm_src[p]), int(g.comm_tag[p]))
        k = taken.get(key, 0)
        taken[key] = k + 1
        if 0 <= key[0] < len(cache.timelines):
            ready = cache.produced_ns(key[0], rank, key[1])
            if k < len(ready):
                produced[j] = ready[k]
    cut = np.clip(produced, begin, finish)
    add("pipeline_bubble", begin, cut)
    add("p2p_wait", cut, finish)
