"""Symmetric collectives: one representative rank simulated for all members, with memoized
phases (DESIGN.md, "Speed": symmetry first, closed forms where exact). Used by
``collective_runtime`` when every member of a whole-machine collective issues it at the same
tick. Place in the map: system layer, beside ``collective_engine`` (whose
``SymmetricEngine`` mirrors each message the representative sends back to it as the identical
message its mirror peer sends it).

Backends (:func:`symmetric_backend`), by their declared symmetry class
(``network/protocol.py``): a ``pairwise`` backend (a message's delay depends on the two ranks'
relative positions only; the analytical one) prices the message the mirror peer sends with its
``delay_ns``. A ``one_link`` backend (congestion-aware, flow) is exact as long as every message
the representative sends crosses exactly one link: that link then carries only its source's
messages, so the state of the mirror peer's link equals the representative's own; the
representative's messages run through a private ``network.fork`` on its own clock and their
arrival stands for the mirror's. A route through a Switch dimension (uplink, then the
receiver's downlink) is exact while the representative sends to one peer per Switch
dimension, so each downlink carries one sender's messages (``MemoEngine._check_switch_route``);
a second peer there, or any other longer route, raises :class:`NotSymmetric` and the runtime
runs the collective rank by rank. (Flow: max-min
rates on links that share no flow are independent, so the fork's flows have the same rates,
drain points and completion times as the representative's own flows rank by rank.) Phases and
collectives are memoized only on backends whose compatibility-mode times are whole ns
(``capabilities.whole_ns_compat``; not the flow backend).

Memoization of phases, in compatibility mode only (every delay a whole number of ns, so a
phase's duration does not depend on when it starts; the default mode's float sums could differ
in the last bit, and its injection ports carry state across phases), and only with a
time-invariant endpoint model (``EndpointModel.time_invariant``: ASTRA-sim's). (In the default
mode, whole collectives on a pairwise backend are memoized where shifting a traced run is
provably exact: ``symmetry/shift.py``, :meth:`SymmetricRunner._shift_run`.)

- a phase (logical dim, algorithm, type, input bytes, direction) runs on its own: its messages
  are matched by its chunk's tag and priced on their own; it meets the rest of the collective
  only when it finishes (its stream leaves one dimension queue and joins the next). So the
  first time a phase spec runs it is simulated, and later runs of the same spec are one event
  ``duration`` later, with the same bytes per dimension;
- finishes in one tick may be ordered differently with memoized phases; where that order can
  matter (the same-tick ties below) a memoized run is discarded and the collective simulated
  again without phase memoization (:class:`_MemoTie`), so memoization never changes a result;
- a phase is memoized only when no message of its chunk is left unmatched when it finishes,
  and replayed only when none is when it starts (its receives meet only its own messages);
  with a ``one_link`` backend also only when no message of the representative is in
  flight on its dimension at that moment (its links idle at both ends), with one active chunk
  per dimension and network (not flat) logical dimensions;
- a whole collective started idle is a function of its plan: the second one of the same plan
  costs one event (the data-parallel step's identical all-reduces).

Same-tick ties. Rank by rank, events of one tick run in global event order, which differs by
rank (an event scheduled by a lower rank runs first). Where the order of two of a rank's
events can change what happens - two chunks joining one dimension queue in one tick (or, with
SCF, one joining where another leaves), two chunks starting messages on one shared FIFO (an
injection port's dimension in the default mode, a congestion-aware link) - the rank-by-rank
run is not even the same on every rank, while the representative's is one order-independent
answer (docs/collectives.md: the known rank-by-rank gap). ``strict`` runners refuse such a
collective (:class:`NotSymmetric`: the caller runs it rank by rank, so the result is the
rank-by-rank one, bit for bit); the default keeps the symmetric answer and counts the tie
(``SymmetricRunner.tie_runs``).

Times in ns, sizes in bytes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from trainsim.collectives import LogicalLayout, Phase, PhaseSpec
from trainsim.collectives.logical import FLAT, NET
from trainsim.config.types import SystemSpec
from trainsim.engine import EventQueue
from trainsim.network.injection import InjectionPorts
from trainsim.network.protocol import ONE_LINK, PAIRWISE, NetworkBackend
from trainsim.system.collective_engine import (
    CollectiveRecord,
    EngineOptions,
    RankWork,
    Stream,
    SymmetricEngine,
)
from trainsim.system.symmetry import shift
from trainsim.topology import MultiDimTopology
from trainsim.topology.multidim import FULLY_CONNECTED, RING, SWITCH

VERTEX_TRANSITIVE = (RING, SWITCH, FULLY_CONNECTED)
SHIFT_TRACE_TRIES = 4
"""Traced runs of one collective that could not be memoized (``symmetry/shift.py``) before the
runner stops tracing it (in that binade, when its runs left the binade; else anywhere)."""


class NotSymmetric(Exception):
    """The collective cannot be simulated by a representative (internal signal)."""


class _MemoTie(Exception):
    """An order-dependent same-tick tie during a run with memoized phases (internal signal)."""


def knobs_blocking_symmetry(system: SystemSpec) -> str:
    """Why the system's run knobs rule out every representative run ("" when none): with the
    rendezvous protocol a message's timing depends on when its receiver posts the receive, and
    with several queues per dimension each rank picks its queues by its own history; both are
    simulated rank by rank."""
    if system.rendezvous:
        return "the rendezvous protocol (each message waits for its receiver's control message)"
    if system.queues_per_dim > 1:
        return "several queues per dimension (each rank picks its queues in turn)"
    return ""


def symmetric_backend(network: NetworkBackend, topology: MultiDimTopology) -> bool:
    """Whether a representative may stand for every rank on this backend and network: a
    declared symmetry class, ranks on a multi-dimensional topology (no physical fabric) whose
    dimensions are all vertex-transitive."""
    if not all(kind in VERTEX_TRANSITIVE for kind in topology.kinds):
        return False
    return network.capabilities.symmetry in (PAIRWISE, ONE_LINK) and network.topology is not None


@dataclass(slots=True)
class SymmetricOutcome:
    """When the representative finished (ns), the bytes it sent per network dimension, each
    chunk's [start, end] ns (-1 for a chunk that ran no phase), and the events its private
    simulation processed. Not changed once made (not frozen: one is made per collective, and
    a frozen dataclass costs several times as much to make)."""

    end_ns: float
    dim_bytes: tuple[int, ...]
    chunk_spans: tuple[tuple[float, float], ...]
    events: int


class _Replayed:
    """Stands in for a memoized phase when its stream finishes it."""

    __slots__ = ("owner",)

    def __init__(self, owner: Stream) -> None:
        self.owner = owner


class MemoEngine(SymmetricEngine):
    """:class:`SymmetricEngine` with memoized phases, the congestion-aware one-link path, and
    the same-tick checks that keep it equal to the rank-by-rank run (module docstring)."""

    def __init__(
        self,
        *args: Any,
        phase_memo: dict[tuple[int, PhaseSpec], tuple[float, tuple[tuple[int, int], ...]]] | None,
        links: NetworkBackend | None,
        strict: bool,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.phase_memo = phase_memo
        self.links = links
        self.strict = strict
        self.ties = 0
        self._started: dict[Phase, tuple[float, dict[int, int]]] = {}
        self._in_flight: dict[int, int] = {}  # network dim -> messages of the representative
        self._finish_tick = -1.0
        self._joined: set[int] = set()  # dimension queues chunks joined / left this tick
        self._left: set[int] = set()
        self._send_tick = -1.0
        self._send_streams: dict[int, Stream] = {}  # shared resource -> stream, this tick
        self._mirror_ok: set[tuple[int, int]] = set()  # (mirror peer, destination) checked
        self._switch_peer: dict[int, int] = {}  # Switch dimension -> the one offset sent to there

    # -- memoized phases ---------------------------------------------------------------------
    def _init_stream(self, stream: Stream) -> None:
        memo = self.phase_memo
        if memo is None:
            super()._init_stream(stream)
            return
        spec = stream.phases[stream.pos]
        key = (id(stream.layout), spec)
        hit = memo.get(key)
        dim = stream.layout.dims[spec.ldim].net_dim
        if hit is not None and self._quiet(stream.tag, dim):
            stream.initialized = True
            if stream.pos == 0:
                spans = stream.work.record.chunk_spans
                if spans:
                    spans[stream.chunk][0] = self.queue.now
            duration, sent = hit
            record = stream.work.record.dim_bytes
            for d, nbytes in sent:
                record[d] += nbytes
            self.queue.schedule(duration, self._replayed_done, stream)
            return
        super()._init_stream(stream)
        phase = stream.phase
        assert phase is not None
        self._started[phase] = (self.queue.now, {})

    def _quiet(self, tag: int, dim: int) -> bool:
        """No message of chunk ``tag`` waits to be matched (a phase then meets only its own
        messages) and, congestion-aware, none of the representative's is on ``dim``'s links."""
        if any(key[0] == tag for key in self._early) or any(key[0] == tag for key in self._posted):
            return False
        return self.links is None or not self._in_flight.get(dim)

    def _replayed_done(self, stream: Stream) -> None:
        self.finish(_Replayed(stream))  # type: ignore[arg-type]

    def finish(self, phase: Phase) -> None:
        stream: Stream = phase.owner
        self._check_finish_tie(stream)
        memo = self.phase_memo
        if memo is not None:
            started = self._started.pop(phase, None)
            if started is not None:
                spec = stream.phases[stream.pos]
                dim = stream.layout.dims[spec.ldim].net_dim
                if self._quiet(stream.tag, dim):
                    start, sent = started
                    memo[(id(stream.layout), spec)] = (self.queue.now - start, tuple(sorted(sent.items())))
        super().finish(phase)

    def _check_finish_tie(self, stream: Stream) -> None:
        """Rank by rank, finishes in one tick run in global event order, which differs by rank.
        Their order can matter only when two of them insert into one dimension queue, or (SCF,
        where an insertion may go before waiting chunks) one inserts where another leaves:
        refuse those (docs/collectives.md). Removals alone, or an insertion behind equal-priority
        waiting chunks of the same collective, end in the same queue whatever the order."""
        phases = stream.phases
        left = phases[stream.pos].ldim
        joins = phases[stream.pos + 1].ldim if stream.pos + 1 < len(phases) else -1
        now = self.queue.now
        if now != self._finish_tick:
            self._finish_tick = now
            self._joined = set()
            self._left = set()
        if joins >= 0 and (joins in self._joined or (self.scf and joins in self._left)):
            self._tie(f"two chunks change dimension queue {joins} at {now} ns")
        elif self.scf and left in self._joined:
            self._tie(f"two chunks change dimension queue {left} at {now} ns")
        self._left.add(left)
        if joins >= 0:
            self._joined.add(joins)

    def _check_send_tie(self, resource: int, stream: Stream) -> None:
        """Two chunks starting messages on one shared FIFO (injection port dimension, link) in
        one tick are served in global event order rank by rank: refuse them."""
        now = self.queue.now
        if now != self._send_tick:
            self._send_tick = now
            self._send_streams = {resource: stream}
            return
        other = self._send_streams.setdefault(resource, stream)
        if other is not stream:
            self._tie(f"two chunks share a link in the same tick at {now} ns")

    def _tie(self, what: str) -> None:
        """An order-dependent same-tick tie (module docstring)."""
        if self.strict:
            raise NotSymmetric(what)
        if self.phase_memo is not None:
            raise _MemoTie(what)
        self.ties += 1

    def _account(self, phase: Phase, dst: int, nbytes: int) -> None:
        d = phase.dim
        if d < 0:
            d = self.topology.send_dim(phase.rank, dst)
        phase.owner.work.record.dim_bytes[d] += nbytes
        started = self._started.get(phase)
        if started is not None:
            sent = started[1]
            sent[d] = sent.get(d, 0) + nbytes

    # -- shared FIFOs: injection ports, congestion-aware links --------------------------------
    def send(self, phase: Phase, dst: int, nbytes: int, mirror_src: int) -> None:
        links = self.links
        rank = phase.rank
        if phase.dim < 0 and self.topology.bottleneck_rank is not None:
            self._check_mirror_shape(rank, dst, mirror_src)
        if links is None:
            if self.injection is not None:
                self._check_send_tie(self.topology.send_dim(rank, dst), phase.owner)
            super().send(phase, dst, nbytes, mirror_src)
            return
        route = links.route(rank, dst)
        if len(route) != 1:
            self._check_switch_route(rank, dst, route)
        self._check_send_tie(route[0], phase.owner)
        self._account(phase, dst, nbytes)
        dim = self.topology.send_dim(rank, dst)
        flying = self._in_flight
        flying[dim] = flying.get(dim, 0) + 1
        links.send(rank, dst, nbytes, self._link_arrive, (dim, (phase.tag, mirror_src, rank, nbytes)))

    def _check_switch_route(self, rank: int, dst: int, route: Any) -> None:
        """A message inside one Switch dimension crosses two links: the sender's uplink, which
        carries only the sender's messages, and the receiver's downlink, which carries every
        message to the receiver. While the representative sends to one peer per Switch
        dimension (one offset: its mirror peer then sends it only that message's image), the
        only messages on that downlink rank by rank are the representative's own, so its
        private run sees the links as every rank does. A second offset on the dimension
        (direct, halving-doubling, all-to-all, a ring the other way) would share downlinks
        between senders, and any longer route crosses links other ranks use: refused. The
        backend's routes are checked to be a star once per dimension (another member's
        message to ``dst`` shares only the downlink, ``rank``'s to another member only the
        uplink), so a backend that models the switch otherwise steps aside."""
        topo = self.topology
        differ = [d for d, (a, b) in enumerate(zip(topo.coords(rank), topo.coords(dst), strict=True)) if a != b]
        if len(route) != 2 or len(differ) != 1 or topo.kinds[differ[0]] != SWITCH:
            raise NotSymmetric(f"rank {rank} -> {dst} crosses more than one link")
        d = differ[0]
        offset = (topo.coord(dst, d) - topo.coord(rank, d)) % topo.sizes[d]
        seen = self._switch_peer.get(d)
        if seen is None:
            third = [r for r in topo.dim_peers(rank, d) if r not in (rank, dst)]
            if third:
                links = self.links
                assert links is not None
                into, out = links.route(third[0], dst), links.route(rank, third[0])
                if not (len(into) == len(out) == 2 and into[1] == route[1] and into[0] != route[0] and out[0] == route[0] and out[1] != route[1]):
                    raise NotSymmetric(f"Switch dimension {d} is not routed as a star (uplink, then the receiver's downlink)")
            self._switch_peer[d] = offset
        elif seen != offset:
            raise NotSymmetric(f"rank {rank} sends to two peers across Switch dimension {d}: their downlinks carry other ranks' messages too")

    def _check_mirror_shape(self, rank: int, dst: int, mirror_src: int) -> None:
        """The default mode's path rule (``topology/multidim.py``) prices a message by every
        dimension it crosses, so on a flat layout (every rank in id order) the message the
        mirror peer sends the representative need not look like the one the representative
        sends (0 -> 1 crosses dimension 0, N-1 -> 0 every dimension): the ranks are not
        equivalent and the collective runs rank by rank."""
        if (mirror_src, dst) in self._mirror_ok:
            return
        topo = self.topology
        if topo.shape(mirror_src, rank) == topo.shape(rank, dst):
            self._mirror_ok.add((mirror_src, dst))
        else:
            raise NotSymmetric(f"rank {mirror_src} -> {rank} and {rank} -> {dst} cross different dimensions")

    def _link_arrive(self, arg: tuple[int, tuple[int, int, int, int]]) -> None:
        dim, key = arg
        self._in_flight[dim] -= 1
        self._arrive(key)


class SymmetricRunner:
    """Runs whole-machine collectives by a representative, with the memos described above.

    One runner per collective runtime: the memos are valid for its network, engine options and
    layouts (keyed by layout identity; the runtime keeps its layouts for its lifetime). Memos
    are kept in compatibility mode with a time-invariant endpoint (module docstring); in the
    default mode, on a backend priced pairwise with a time-invariant endpoint, the shift-exact
    memo (``symmetry/shift.py``) serves instead."""

    shift_exact: ClassVar[bool] = True
    """Whether default-mode runners keep the shift-exact memo (tests and bench/memo.py turn it
    off to compare with the simulation of every collective)."""

    def __init__(
        self,
        network: NetworkBackend,
        topology: MultiDimTopology,
        options: EngineOptions,
        *,
        injection: Callable[[], InjectionPorts | None],
        strict: bool = False,
    ) -> None:
        self.network = network
        caps = network.capabilities
        self.private_links = caps.symmetry == ONE_LINK  # else pairwise: priced by delay_ns
        self.topology = topology
        self.options = options
        self.injection = injection
        self.memo = options.compat_astra and options.endpoint.time_invariant and caps.whole_ns_compat
        self.strict = strict
        self.tie_runs = 0  # collectives whose run had an order-dependent same-tick tie
        self._phase_memo: dict[tuple[int, PhaseSpec], tuple[float, tuple[tuple[int, int], ...]]] = {}
        self._collective_memo: dict[Any, SymmetricOutcome] = {}  # times from the start
        self._refused: set[Any] = set()
        # (layout identity, chunk phases) -> a number, the memos' key; (id(layout), id(chunks))
        # -> (chunks, that number) for chunk lists seen before
        self._plan_ids: dict[tuple[int, tuple[tuple[PhaseSpec, ...], ...]], int] = {}
        self._keys: dict[tuple[int, int], tuple[list[list[PhaseSpec]], int]] = {}
        self._binade = (0.0, 0.0)  # the last start's binade [lo, hi)
        self.refusals: list[str] = []  # why collectives ran rank by rank
        # default mode, priced pairwise, time-invariant endpoint: the shift-exact memo
        # (``symmetry/shift.py``), (collective key, binade low end) -> outputs' offsets
        self.shift_memo: dict[Any, shift.Replay] | None = None
        if self.shift_exact and not self.memo and not self.private_links and options.endpoint.time_invariant:
            self.shift_memo = {}
        # key, or (key, binade) when its runs left the binade -> traced runs not memoized
        self._shift_spoiled: dict[Any, int] = {}
        self.shift_replays = 0

    def _links_ok(self) -> bool:
        return self.options.active_chunks == 1

    def key(self, layout: LogicalLayout, chunks: list[list[PhaseSpec]]) -> int:
        """The memos' key of a plan: a number per (layout identity, chunk phases)."""
        known = self._keys.get((id(layout), id(chunks)))
        if known is not None and known[0] is chunks:
            return known[1]
        # planned chunk lists are reused (the planner's plans): number their plan once
        plan = (id(layout), tuple(tuple(c) for c in chunks))
        key = self._plan_ids.setdefault(plan, len(self._plan_ids))
        self._keys[(id(layout), id(chunks))] = (chunks, key)
        return key

    def replay(self, key: int, start_ns: float) -> tuple[float, tuple[int, ...], list[list[float]]] | None:
        """:meth:`run`'s answer from a memo, without simulating, when it has one for the plan
        numbered ``key`` (:meth:`key`) started at ``start_ns``: the end (ns), the bytes per
        dimension and each chunk's [start, end] as new lists (the records' form), equal to
        :meth:`run`'s outcome number for number; else None (then :meth:`run`). The group path
        calls it once per collective (``symmetry/group.py``)."""
        if key in self._refused or (self.private_links and self.network.carrying()):
            return None
        if self.memo:
            hit = self._collective_memo.get(key)
            if hit is None:
                return None
            # _shifted(hit, start_ns), as lists
            return (
                hit.end_ns + start_ns,
                hit.dim_bytes,
                [[a if a < 0 else a + start_ns, b if b < 0 else b + start_ns] for a, b in hit.chunk_spans],
            )
        memo = self.shift_memo
        if memo is None:
            return None
        lo, hi = self._binade
        if not lo <= start_ns < hi:
            lo, hi = self._binade = shift.binade(start_ns) if start_ns >= sys.float_info.min else (-1.0, 0.0)
        found = memo.get((key, lo))
        # found.fits(start_ns), inlined: the per-collective path
        if found is None or not (found.lo <= start_ns + found.min_off and start_ns + found.max_off < found.hi and found.lo <= start_ns):
            return None
        self.shift_replays += 1
        end_off, spans_off, dim_bytes, ties = found.outputs
        if ties:
            self.tie_runs += 1
        spans = [[-1.0 if a is None else start_ns + a, -1.0 if b is None else start_ns + b] for a, b in spans_off]
        return start_ns + end_off, dim_bytes, spans

    def run(
        self,
        layout: LogicalLayout,
        chunks: list[list[PhaseSpec]],
        tag_base: int,
        start_ns: float,
        *,
        rank: int = 0,
    ) -> SymmetricOutcome | None:
        """The representative's finish time and bytes, or None when the collective is not
        symmetric on this backend after all (the caller runs it rank by rank). ``rank``: the
        representative (a member of the layout's group; rank 0 for the whole machine)."""
        key = self.key(layout, chunks)
        if key in self._refused:
            return None
        private_links = self.private_links
        if private_links and self.network.carrying():
            return None  # other traffic (sends, flows) still on the links: they are shared
        if private_links and any(d.kind == FLAT for d in layout.dims):
            # a flat ring over every rank (``oneRing``) crosses dimensions at its seams
            # (rank 7 -> 8 on [8, 4]): its members' messages are not the representative's images
            self._refused.add(key)
            self.refusals.append("a flat dimension over every rank on a link-level backend")
            return None
        hit = self._collective_memo.get(key) if self.memo else None
        if hit is not None:
            return _shifted(hit, start_ns, events=0)
        if self.shift_memo is not None:
            return self._shift_run(key, layout, chunks, tag_base, start_ns, rank)
        phase_memo = self.memo and (
            not private_links or (self._links_ok() and all(d.kind == NET for d in layout.dims))
        )
        try:
            try:
                outcome = self._simulate(layout, chunks, tag_base, start_ns, phase_memo, rank)
            except _MemoTie:
                outcome = self._simulate(layout, chunks, tag_base, start_ns, False, rank)
        except NotSymmetric as exc:
            self._refused.add(key)
            self.refusals.append(str(exc))
            return None
        if self.memo:
            self._collective_memo[key] = _shifted(outcome, -start_ns, events=0)
        return outcome

    def _shift_run(
        self,
        key: Any,
        layout: LogicalLayout,
        chunks: list[list[PhaseSpec]],
        tag_base: int,
        start_ns: float,
        rank: int,
    ) -> SymmetricOutcome | None:
        """:meth:`run` in the default mode: the outcome from the shift-exact memo when it has
        this collective in this start's binade, else simulated with a traced start (and
        memoized when the trace shows every time moves with the start)."""
        memo = self.shift_memo
        assert memo is not None
        lo, hi = self._binade
        if not lo <= start_ns < hi:
            lo, hi = self._binade = shift.binade(start_ns) if start_ns >= sys.float_info.min else (-1.0, 0.0)
        hit = memo.get((key, lo))
        # hit.fits(start_ns), inlined: the per-collective path
        if hit is not None and hit.lo <= start_ns + hit.min_off and start_ns + hit.max_off < hit.hi and hit.lo <= start_ns:
            self.shift_replays += 1
            end_off, spans_off, dim_bytes, ties = hit.outputs
            if ties:
                self.tie_runs += 1
            spans = tuple([(-1.0 if a is None else start_ns + a, -1.0 if b is None else start_ns + b) for a, b in spans_off])
            return SymmetricOutcome(start_ns + end_off, dim_bytes, spans, 0)
        spoiled = max(self._shift_spoiled.get(key, 0), self._shift_spoiled.get((key, lo), 0))
        ties_before = self.tie_runs
        try:
            if hit is not None or spoiled >= SHIFT_TRACE_TRIES:
                outcome = self._simulate(layout, chunks, tag_base, start_ns, False, rank)
                rec = None
            else:
                outcome, rec = shift.trace(
                    start_ns, lambda s: self._simulate(layout, chunks, tag_base, s, False, rank)
                )
        except NotSymmetric as exc:
            self._refused.add(key)
            self.refusals.append(str(exc))
            return None
        if rec is None:
            return outcome
        plain = SymmetricOutcome(
            float.__float__(outcome.end_ns),
            outcome.dim_bytes,
            tuple((float.__float__(a), float.__float__(b)) for a, b in outcome.chunk_spans),
            outcome.events,
        )
        end_off = shift.offset(outcome.end_ns, rec)
        # a span time is a traced time (its offset) or the -1 marker of a chunk that ran no phase
        spans_off = tuple(tuple(shift.offset(t, rec) for t in span) for span in outcome.chunk_spans)
        markers_only = all(
            o is not None or t == -1.0 for span, times in zip(spans_off, plain.chunk_spans, strict=True)
            for o, t in zip(span, times, strict=True)
        )
        if rec.ok and end_off is not None and markers_only:
            ties = self.tie_runs > ties_before
            memo[(key, rec.lo)] = shift.Replay(rec, (end_off, spans_off, outcome.dim_bytes, ties))
        else:
            # a run that crossed out of its binade may fit in a later one (starts grow); any
            # other spoiling is the collective's own and would recur in every binade
            where = (key, rec.lo) if rec.why.startswith(shift.LEFT_BINADE) else key
            self._shift_spoiled[where] = self._shift_spoiled.get(where, 0) + 1
        return plain

    def _simulate(
        self,
        layout: LogicalLayout,
        chunks: list[list[PhaseSpec]],
        tag_base: int,
        start_ns: float,
        phase_memo: bool,
        rank: int = 0,
    ) -> SymmetricOutcome:
        private = EventQueue()
        private.now = start_ns
        links = self.network.fork(private) if self.private_links else None
        done: list[RankWork] = []
        engine = MemoEngine(
            private,
            self.network,
            self.topology,
            self.options,
            on_rank_done=done.append,
            phase_memo=self._phase_memo if phase_memo else None,
            links=links,
            strict=self.strict,
            injection=self.injection(),
        )
        record = CollectiveRecord(
            rank,
            -1,
            0,
            0,
            "",
            start_ns,
            dim_bytes=[0] * len(self.topology.sizes),
            chunks=len(chunks),
            chunk_spans=[[-1.0, -1.0] for _ in chunks],
        )
        work = RankWork(rank, len(chunks), lambda _a: None, None, record, "")
        engine.start_rank(work, layout, chunks, tag_base, 0)
        private.run()
        if engine.ties:
            self.tie_runs += 1
        if not done:
            raise NotSymmetric("the representative never finished")
        spans = tuple((a, b) for a, b in record.chunk_spans)
        return SymmetricOutcome(record.end_ns, tuple(record.dim_bytes), spans, private.events_processed)


def _shifted(outcome: SymmetricOutcome, by_ns: float, *, events: int) -> SymmetricOutcome:
    """``outcome`` with every time moved by ``by_ns`` (-1 markers kept). Exact in compatibility
    mode, where every time is a whole number of ns."""
    # a span is a [start, end] pair (one list comprehension: the per-collective path)
    spans = tuple([(a if a < 0 else a + by_ns, b if b < 0 else b + by_ns) for a, b in outcome.chunk_spans])
    return SymmetricOutcome(outcome.end_ns + by_ns, outcome.dim_bytes, spans, events)
