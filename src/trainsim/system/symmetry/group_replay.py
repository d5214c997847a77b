"""Communicator-group collectives answered from a private run of the whole group (DESIGN.md,
"Speed": memoize where exact). Used by ``collective_runtime.flush`` before the group-symmetric
path (``symmetry/group.py``), which it replaces where it applies: it also takes groups whose
members do not see each other alike, so no one member stands for the rest (a tensor-parallel
group that is a segment of a Ring: its last member's message to the first goes the long way
round), members that issue the collective at different ticks, and it ends each member when
rank by rank would (below), where the group path ends every member at the last issue in
member order.

Where it applies (:meth:`GroupReplay.enabled`): a backend of the ``pairwise`` class (a
message's delay is a function of its two ends; no link is shared), a time-invariant endpoint,
the compatibility mode on a backend whose times there are whole ns (a run started a whole
number of ns later is the same run shifted, exactly), one queue per dimension, no rendezvous,
no injection model, no pricer and no per-node custom algorithm; and a communicator group's
plan of built-in ring, direct or halving-doubling phases (a double binary tree alternates per
rank from one collective to the next; a rooted collective runs per rank).

Why it is exact. A member that issues a collective with no other collective work (nothing in
its dimension queues, no work in flight: ``CollectiveRuntime.members_idle``) takes none until
this one ends for it (the runtime refuses that: below). Its part then meets nothing but the
other members' parts: messages are matched by the collective's own tags and priced by their
two ends, and the endpoint prices an insertion by its bytes alone. So every member's end,
bytes per dimension and chunk spans are a function of the plan, of the group's geometry
(``MultiDimTopology.shape_classes`` of every ordered pair of members: two groups with equal
shapes have equal delays, ``symmetry/group.py``) and of the members' issue times in issue
order. The runtime holds each member when it issues (its record and work in flight, nothing
running); when the last one issues, the group runs alone in a private event queue on a fork of
the network, every member rank by rank by the plain Python engine (the reference the compiled
core equals), each started at its issue time less the first one's; each member then finishes
at the first issue plus its end in that run. A later collective with the same plan, geometry
and issue pattern is answered from it (a folded run's collective on a rank's own group,
issued at once for it and its mirrors, without an instance: :meth:`GroupReplay.answer_at_once`).
A private run is a Python simulation of the whole group, slower than the step's own compiled
path and growing as the square of its members (a ring's messages): groups of more than
:data:`MAX_MEMBERS` are left to the group path (a representative) or rank by rank, and once
:data:`TRIES` runs of one geometry and plan have been answered fewer times than they ran
(issue patterns that do not repeat), its collectives run rank by rank again.

Ties. Events of one tick run in the order they were scheduled. A member starts in a flush
the runtime schedules in the tick it issues, so after every event of that tick scheduled
before it: the private run starts it after the collective's events of that tick scheduled
before, and refuses one scheduled in the tick itself (a receive matched on arrival), whose
order with the start depends on the rest of the step. Refused too: a member not idle when it
issues after others were held, and a step that stops with members held (a deadlock: its
report is the rank-by-rank one). Each raises :class:`GroupReplayConflict` and ``api._run``
runs the step again without group replay: a refusal costs time, never a result. A held member
that starts another collective is a ``GroupSymmetryConflict`` (held members are busy in the
group path's ``busy``). A member's end is an event scheduled when its last event was in the
private run (a relay event then schedules it), so it runs among the step's events of its tick
as rank by rank, except against an event of its tick scheduled in that same earlier tick
(their order is the two ticks' order rank by rank). Times in ns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from trainsim.collectives import DOUBLE_BINARY_TREE, ROOTED_TYPES, LogicalLayout, PhaseSpec
from trainsim.engine import EventQueue, TracingEventQueue
from trainsim.network.protocol import PAIRWISE
from trainsim.system.collective_engine import CollectiveRecord, Engine, RankWork

if TYPE_CHECKING:
    from trainsim.system.collective_runtime import CollectiveInstance, CollectiveRuntime

_BUILT_IN = PhaseSpec  # a custom collective's phase is a subclass (its graph is the algorithm)

MAX_MEMBERS = 16
"""The largest group answered by a private run (a ring all-reduce of 16 members in 4 chunks is
~6,000 Python events, tens of ms; 64 members would be ~100,000)."""

TRIES = 8
"""Private runs of one geometry and plan before group replay asks whether its memo pays: while
its answers from the memo are fewer than its runs, its collectives run rank by rank."""


class GroupReplayConflict(Exception):
    """A held collective cannot be answered exactly (module docstring; internal: ``api._run``
    runs the step again without group replay)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A private run's outcome, times from the first member's issue. ``ends``: the members in
    the order they ended, in runs of one (time the event they ended in was scheduled, end),
    each member as (its index in the group, the number of its bytes per dimension in
    ``dim_bytes``, of its chunks' [start, end] in ``spans``); equal bytes or spans are kept
    once (their members share one list, as the group path's do). A span's None is the -1
    marker of a chunk that ran no phase; ``whole[i]``: spans ``i`` has none."""

    ends: tuple[tuple[float, float, tuple[tuple[int, int, int], ...]], ...]
    dim_bytes: tuple[tuple[int, ...], ...]
    spans: tuple[tuple[tuple[float | None, float | None], ...], ...]
    whole: tuple[bool, ...]


Held = tuple[int, Any, float]
"""A held member: its rank, its work (None for a mirror rank, which runs nothing) and its issue
time (ns)."""


class GroupReplay:
    """The group-replay path of one collective runtime."""

    def __init__(self, runtime: CollectiveRuntime, busy: dict[int, float]) -> None:
        self.rt = runtime
        self.busy = busy  # the group path's: member -> end ns (inf while held)
        self.replays = 0  # collectives answered (simulated privately or from the memo)
        self._held_count = 0  # instances holding members now
        # id(layout) -> (layout, its geometry's number, rank -> index in the group)
        self._layouts: dict[int, tuple[LogicalLayout, int, dict[int, int]]] = {}
        self._geometries: dict[bytes, int] = {}  # the shapes of every pair -> a number
        # id(chunks) -> (chunks, the plan's number, -1 when the plan does not qualify)
        self._plans: dict[int, tuple[Any, int]] = {}
        self._plan_ids: dict[tuple[tuple[PhaseSpec, ...], ...], int] = {}  # the phases -> a number
        # (geometry, plan) -> [private runs, answers from the memo]
        self._payoff: dict[tuple[int, int], list[int]] = {}
        # (geometry, plan, type, issue pattern) -> the private run's answer
        self._memo: dict[tuple[Any, ...], Answer] = {}

    @staticmethod
    def enabled(runtime: CollectiveRuntime) -> bool:
        """Whether the runtime's backend, endpoint and options qualify (module docstring)."""
        options = runtime.engine_options
        caps = runtime.network.capabilities
        return (
            caps.symmetry == PAIRWISE
            and caps.whole_ns_compat
            and options.compat_astra
            and options.endpoint.time_invariant  # (so the engine shares no rank resources)
            and options.queues_per_dim == 1
            and not options.rendezvous
            and runtime.engine.injection is None
        )

    @property
    def holding(self) -> bool:
        """Whether some collective holds members that issued it (the others have not)."""
        return self._held_count > 0

    # -- the path ----------------------------------------------------------------------------
    def take(self, inst: CollectiveInstance, pending: list[Any]) -> bool:
        """Hold ``pending`` (members that issued ``inst`` now) when ``inst`` qualifies; once
        every member has issued, finish them all from the group's private run. False leaves
        the collective to the caller (rank by rank), having changed nothing."""
        held = inst.replay
        if held is False:
            return False
        rt = self.rt
        now = rt.queue.now
        ranks = tuple([entry[0] for entry in pending])
        if held is None:
            if not (self._pays(inst) and rt.members_idle(ranks, now, self.busy)):
                inst.replay = False
                return False
            held = inst.replay = []
            self._held_count += 1
        elif not rt.members_idle(ranks, now, self.busy):
            raise GroupReplayConflict(
                f"a member of {inst.key[0]!r} issued collective #{inst.key[1]} with other collective work while others were held"
            )
        mirrors = rt._mirror_ranks
        shared = rt.held_lists(inst)
        for entry in pending:
            rank = entry[0]
            held.append((rank, None if rank in mirrors else rt.held_work(inst, entry, shared), now))
        if inst.issued < len(inst.members):
            busy = self.busy
            for rank in ranks:
                busy[rank] = math.inf  # until the private run says
            return True
        inst.replay = False
        self._held_count -= 1
        self._finish(inst, held)
        return True

    def _finish(self, inst: CollectiveInstance, held: list[Held]) -> None:
        """Every member has issued ``inst``: its members' ends, from the memo or a private run,
        each scheduled (module docstring)."""
        rt = self.rt
        layout = inst.layout
        assert layout is not None
        index = self._layout(layout)[2]
        t0 = held[0][2]
        pattern = tuple([(index[rank], t - t0) for rank, _w, t in held])
        answer = self._known(inst, pattern)
        if answer is None:
            answer = self._simulate(layout, inst, held, t0)
            key = self._memo_key(inst, pattern)
            self._memo[key] = answer
            self._payoff.setdefault(key[:2], [0, 0])[0] += 1
            self.replays += 1
        self._end_members(answer, layout, t0, {rank: work for rank, work, _t in held if work is not None})
        rt._instances.pop(inst.key, None)

    def answer_at_once(
        self, first: CollectiveInstance, rank: int, request: Any, on_done: Any, arg: Any, mirrors: tuple[int, ...], now: float
    ) -> bool:
        """:meth:`take` of a collective that ``rank`` issued now for its whole group (itself and
        ``mirrors``: ``CollectiveRuntime._flush_own``), ``first`` an earlier instance of the same
        plan on the same group, answered from the memo without an instance of its own; False,
        having changed nothing, when the memo has no answer or a member is not idle (the
        caller then goes the usual way)."""
        rt = self.rt
        layout = first.layout
        if layout is None or not (self._pays(first) and rt.members_idle(first.members, now, self.busy)):
            return False
        index = self._layout(layout)[2]
        answer = self._known(first, tuple([(index[r], 0.0) for r in (rank, *mirrors)]))
        if answer is None:
            return False
        work = rt.held_work(first, (rank, request, on_done, arg, now), rt.held_lists(first))
        self._end_members(answer, layout, now, {rank: work})
        return True

    def _memo_key(self, inst: CollectiveInstance, pattern: tuple[tuple[int, float], ...]) -> tuple[Any, ...]:
        """(geometry, plan, type, issue pattern): the memo's key of ``inst`` (its first two: the
        payoff's)."""
        assert inst.layout is not None
        return (self._layout(inst.layout)[1], self._plan_key(inst), inst.phase_type, pattern)

    def _known(self, inst: CollectiveInstance, pattern: tuple[tuple[int, float], ...]) -> Answer | None:
        """The memo's answer for ``inst`` issued with ``pattern`` (counted as answered), or None."""
        key = self._memo_key(inst, pattern)
        answer = self._memo.get(key)
        if answer is not None:
            self._payoff[key[:2]][1] += 1
            self.replays += 1
        return answer

    def _end_members(self, answer: Answer, layout: LogicalLayout, t0: float, works: dict[int, RankWork]) -> None:
        """Every member of ``layout``'s group ends as ``answer`` says, its first issue at
        ``t0``; ``works``: the members that run a graph (the others are mirrors)."""
        members = layout.dims[0].members
        busy = self.busy
        bytes_lists: list[list[int] | None] = [None] * len(answer.dim_bytes)
        span_lists: list[list[list[float]] | None] = [None] * len(answer.spans)
        for scheduled, end_offset, who in answer.ends:
            end = t0 + end_offset
            finishing: list[RankWork] = []
            for member, nbytes, nspans in who:
                rank = members[member]
                busy[rank] = end
                work = works.get(rank)
                if work is None:  # a mirror: it runs nothing
                    continue
                record = work.record
                record.end_ns = end
                dim_bytes = bytes_lists[nbytes]
                if dim_bytes is None:
                    dim_bytes = bytes_lists[nbytes] = list(answer.dim_bytes[nbytes])
                spans = span_lists[nspans]
                if spans is None:
                    offsets = answer.spans[nspans]
                    if answer.whole[nspans]:
                        spans = [[t0 + a, t0 + b] for a, b in offsets]  # type: ignore[operator]
                    else:
                        spans = [[-1.0 if a is None else t0 + a, -1.0 if b is None else t0 + b] for a, b in offsets]
                    span_lists[nspans] = spans
                record.dim_bytes = dim_bytes
                record.chunk_spans = spans
                finishing.append(work)
            if finishing:
                self._end_at(t0 + scheduled, end, finishing)

    def _end_at(self, scheduled: float, end: float, works: list[RankWork]) -> None:
        """Finish ``works`` at ``end`` by an event scheduled at ``scheduled``, as their last
        event was in the private run (so it runs after the step's other events of that tick
        scheduled before it, as rank by rank; module docstring): a relay event at
        ``scheduled`` schedules it, or it is scheduled now when that is now."""
        queue = self.rt.queue
        if scheduled <= queue.now:
            queue.schedule_at(end, self.rt._symmetric_done, works)
        else:
            queue.schedule_at(scheduled, self._relay, (end, works))

    def _relay(self, token: tuple[float, list[RankWork]]) -> None:
        self.rt.queue.schedule_at(token[0], self.rt._symmetric_done, token[1])

    def _simulate(self, layout: LogicalLayout, inst: CollectiveInstance, held: list[Held], t0: float) -> Answer:
        """The group alone: each member started at its issue time less ``t0``, in issue order
        (members of one tick in one event, as one flush starts them), rank by rank by a plain
        :class:`Engine` on a private queue and a fork of the network."""
        rt = self.rt
        private = TracingEventQueue()
        finished: list[tuple[RankWork, float]] = []

        def done(work: RankWork) -> None:
            finished.append((work, private.scheduled_ns))

        engine = Engine(private, rt.network.fork(private), rt.topology, rt.engine_options, on_rank_done=done, core_queues=False)
        ndims = len(rt.topology.sizes)
        chunks = inst.chunks
        starts: list[tuple[float, list[int]]] = []
        for rank, _w, t in held:
            offset = t - t0
            if starts and starts[-1][0] == offset:
                starts[-1][1].append(rank)
            else:
                starts.append((offset, [rank]))
        last = max(offset for offset, _r in starts)

        def start(ranks: list[int]) -> None:
            offset = private.now
            self._no_event_at(private, offset, inst)
            for rank in ranks:
                record = CollectiveRecord(
                    rank, -1, inst.comm_type, inst.size, "", offset,
                    dim_bytes=[0] * ndims, chunks=len(chunks), chunk_spans=[[-1.0, -1.0] for _ in chunks],
                )  # fmt: skip
                engine.start_rank(RankWork(rank, len(chunks), _nothing, None, record, ""), layout, chunks, inst.tag_base, 0)
            self._no_event_at(private, offset, inst)

        for offset, ranks in starts:
            # the start runs after the collective's events of its tick scheduled before it, as
            # the flush (scheduled in that tick) does in the step
            private.run(until_ns=math.nextafter(offset, -math.inf))
            private.schedule_at(offset, start, ranks)
        private.run()
        if len(finished) != len(held):
            raise GroupReplayConflict(f"collective #{inst.key[1]} of {inst.key[0]!r}: {len(held) - len(finished)} members never finished alone")
        index = self._layout(layout)[2]
        ends: list[tuple[float, float, list[tuple[int, int, int]]]] = []
        byte_numbers: dict[tuple[int, ...], int] = {}
        span_numbers: dict[tuple[tuple[float | None, float | None], ...], int] = {}
        for work, scheduled in finished:
            record = work.record
            if record.end_ns <= last:
                raise GroupReplayConflict(f"collective #{inst.key[1]} of {inst.key[0]!r}: a member finished before the last one issued it")
            spans = tuple((None if a < 0 else a, None if b < 0 else b) for a, b in record.chunk_spans)
            member = (index[work.rank], byte_numbers.setdefault(tuple(record.dim_bytes), len(byte_numbers)), span_numbers.setdefault(spans, len(span_numbers)))
            if ends and ends[-1][0] == scheduled and ends[-1][1] == record.end_ns:
                ends[-1][2].append(member)
            else:
                ends.append((scheduled, record.end_ns, [member]))
        whole = tuple(all(a is not None and b is not None for a, b in spans) for spans in span_numbers)
        return Answer(tuple((s, e, tuple(who)) for s, e, who in ends), tuple(byte_numbers), tuple(span_numbers), whole)

    @staticmethod
    def _no_event_at(private: EventQueue, offset: float, inst: CollectiveInstance) -> None:
        """Refuse an event of the collective scheduled in the tick a member starts in (a
        message matched on arrival, or a start's own zero-delay event): whether it runs before
        or after the member's start depends on the rest of the step."""
        nxt = private.next_time()
        if nxt is not None and nxt <= offset:
            raise GroupReplayConflict(
                f"collective #{inst.key[1]} of {inst.key[0]!r}: an event of it scheduled in the tick a member issues it ({offset} ns after the first)"
            )

    # -- what qualifies ----------------------------------------------------------------------
    def _pays(self, inst: CollectiveInstance) -> bool:
        """Whether ``inst``'s plan qualifies and its geometry and plan's memo pays for its
        private runs (module docstring)."""
        plan = self._plan_key(inst)
        if plan < 0:
            return False
        assert inst.layout is not None  # (a plan that qualifies has one)
        payoff = self._payoff.get((self._layout(inst.layout)[1], plan))
        return payoff is None or payoff[0] < TRIES or payoff[1] >= payoff[0]

    def _plan_key(self, inst: CollectiveInstance) -> int:
        """The memo's number of ``inst``'s plan (its chunks' phases), or -1 when the plan does
        not qualify (module docstring); once per planned chunk list."""
        chunks = inst.chunks
        known = self._plans.get(id(chunks))
        if known is None or known[0] is not chunks:
            layout = inst.layout
            ok = (
                layout is not None
                and layout.fast
                and len(inst.members) <= MAX_MEMBERS
                and inst.phase_type not in ROOTED_TYPES
                and any(chunks)
                and all(type(s) is _BUILT_IN and s.algo.kind != DOUBLE_BINARY_TREE for c in chunks for s in c)
            )
            number = self._plan_ids.setdefault(tuple(tuple(c) for c in chunks), len(self._plan_ids)) if ok else -1
            known = self._plans[id(chunks)] = (chunks, number)
        return known[1]

    def _layout(self, layout: LogicalLayout) -> tuple[LogicalLayout, int, dict[int, int]]:
        """(layout, its geometry's number, rank -> index): groups with the same shape of every
        ordered pair of members share a number; once per layout (a layout is its group's for
        the run)."""
        known = self._layouts.get(id(layout))
        if known is None or known[0] is not layout:
            members = layout.dims[0].members
            ranks = np.asarray(members, dtype=np.int64)
            n = len(ranks)
            shapes = self.rt.topology.shape_classes(np.repeat(ranks, n), np.tile(ranks, n))
            geometry = self._geometries.setdefault(n.to_bytes(4, "little") + shapes.tobytes(), len(self._geometries))
            known = self._layouts[id(layout)] = (layout, geometry, {r: i for i, r in enumerate(members)})
        return known


def _nothing(_arg: Any) -> None:
    """A private run's member finished (the run collects it by ``on_rank_done``)."""
