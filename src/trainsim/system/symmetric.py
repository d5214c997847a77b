"""Symmetric collectives: one representative rank simulated for all members, with memoized
phases (DESIGN.md, "Speed": symmetry first, closed forms where exact). Used by
``collective_runtime`` when every member of a whole-machine collective issues it at the same
tick. Place in the map: system layer, beside ``collective_engine`` (whose
``SymmetricEngine`` mirrors each message the representative sends back to it as the identical
message its mirror peer sends it).

Backends (:func:`symmetric_backend`): the congestion-unaware analytical one (a message's delay
depends on the two ranks' positions only), and the congestion-aware one as long as every
message the representative sends crosses exactly one link. That link then carries only its
source's messages, so the state of the mirror peer's link equals the representative's own;
the representative's messages run through a private :class:`CongestionAwareNetwork` on its
own link and their arrival stands for the mirror's. A longer route (a Switch dimension: the
shared downlink) raises :class:`NotSymmetric` and the runtime runs the collective rank by rank.

Memoization, in compatibility mode only (every delay a whole number of ns, so a phase's
duration does not depend on when it starts; the default mode's float sums could differ in the
last bit, and its injection ports carry state across phases):

- a phase (logical dim, algorithm, type, input bytes, direction) runs on its own: its messages
  are matched by its chunk's tag and priced on their own; it meets the rest of the collective
  only when it finishes (its stream leaves one dimension queue and joins the next). So the
  first time a phase spec runs it is simulated, and later runs of the same spec are one event
  ``duration`` later, with the same bytes per dimension;
- two finishes at the same tick would be ordered by event sequence numbers that a memoized
  phase does not reproduce, so a memoized run with such a tie is discarded and the collective
  simulated again without phase memoization (:class:`_MemoTie`); the result never depends on it;
- a phase is memoized only when no message of its chunk is left unmatched when it finishes,
  and replayed only when none is when it starts (its receives meet only its own messages);
  with the congestion-aware backend also only when no message of the representative is in
  flight on its dimension at that moment (its links idle at both ends), with one active chunk
  per dimension and network (not flat) logical dimensions;
- a whole collective started idle is a function of its plan: the second one of the same plan
  costs one event (the data-parallel step's identical all-reduces).

Times in ns, sizes in bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from trainsim.collectives import LogicalLayout, Phase, PhaseSpec
from trainsim.collectives.logical import NET
from trainsim.engine import EventQueue
from trainsim.network.analytical import AnalyticalNetwork
from trainsim.network.congestion_aware import CongestionAwareNetwork
from trainsim.system.collective_engine import CollectiveRecord, RankWork, Stream, SymmetricEngine
from trainsim.system.injection import InjectionPorts
from trainsim.topology import MultiDimTopology
from trainsim.topology.multidim import FULLY_CONNECTED, RING, SWITCH

VERTEX_TRANSITIVE = (RING, SWITCH, FULLY_CONNECTED)


class NotSymmetric(Exception):
    """The collective cannot be simulated by a representative (internal signal)."""


class _MemoTie(Exception):
    """Two phase finishes at one tick during a memoized run (internal signal)."""


def symmetric_backend(network: Any, topology: MultiDimTopology) -> bool:
    """Whether a representative may stand for every rank on this backend and network."""
    if not all(kind in VERTEX_TRANSITIVE for kind in topology.kinds):
        return False
    if type(network) is AnalyticalNetwork:
        return True
    if type(network) is CongestionAwareNetwork:
        return getattr(network.graph, "topology", None) is not None  # a multi-dim graph, no fabric
    return False


@dataclass(frozen=True, slots=True)
class SymmetricOutcome:
    """When the representative finished (ns), the bytes it sent per network dimension, and the
    events its private simulation processed."""

    end_ns: float
    dim_bytes: tuple[int, ...]
    events: int


class _Replayed:
    """Stands in for a memoized phase when its stream finishes it."""

    __slots__ = ("owner",)

    def __init__(self, owner: Stream) -> None:
        self.owner = owner


class MemoEngine(SymmetricEngine):
    """:class:`SymmetricEngine` with memoized phases and the congestion-aware one-link path."""

    def __init__(
        self,
        *args: Any,
        phase_memo: dict[tuple[int, PhaseSpec], tuple[float, tuple[tuple[int, int], ...]]] | None,
        links: CongestionAwareNetwork | None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.phase_memo = phase_memo
        self.links = links
        self._started: dict[Phase, tuple[float, dict[int, int]]] = {}
        self._last_finish = -1.0
        self._in_flight: dict[int, int] = {}  # network dim -> messages of the representative

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
        memo = self.phase_memo
        if memo is not None:
            now = self.queue.now
            if now == self._last_finish:
                raise _MemoTie
            self._last_finish = now
            started = self._started.pop(phase, None)
            if started is not None:
                stream: Stream = phase.owner
                spec = stream.phases[stream.pos]
                dim = stream.layout.dims[spec.ldim].net_dim
                if self._quiet(stream.tag, dim):
                    start, sent = started
                    memo[(id(stream.layout), spec)] = (now - start, tuple(sorted(sent.items())))
        super().finish(phase)

    def _account(self, phase: Phase, dst: int, nbytes: int) -> None:
        d = phase.dim
        if d < 0:
            d = self.topology.first_diff_dim(phase.rank, dst)
        phase.owner.work.record.dim_bytes[d] += nbytes
        started = self._started.get(phase)
        if started is not None:
            sent = started[1]
            sent[d] = sent.get(d, 0) + nbytes

    # -- the congestion-aware one-link path --------------------------------------------------
    def send(self, phase: Phase, dst: int, nbytes: int, mirror_src: int) -> None:
        links = self.links
        if links is None:
            super().send(phase, dst, nbytes, mirror_src)
            return
        rank = phase.rank
        if len(links.graph.route(rank, dst)) != 1:  # type: ignore[attr-defined]
            raise NotSymmetric(f"rank {rank} -> {dst} crosses more than one link")
        self._account(phase, dst, nbytes)
        dim = self.topology.first_diff_dim(rank, dst)
        flying = self._in_flight
        flying[dim] = flying.get(dim, 0) + 1
        links.send(rank, dst, nbytes, self._link_arrive, (dim, (phase.tag, mirror_src, rank, nbytes)))

    def _link_arrive(self, arg: tuple[int, tuple[int, int, int, int]]) -> None:
        dim, key = arg
        self._in_flight[dim] -= 1
        self._arrive(key)


class SymmetricRunner:
    """Runs whole-machine collectives by a representative, with the memos described above.

    One runner per collective runtime: the memos are valid for its network, system knobs and
    layouts (keyed by layout identity; the runtime keeps its layouts for its lifetime)."""

    def __init__(
        self,
        network: Any,
        topology: MultiDimTopology,
        engine_kwargs: dict[str, Any],
        *,
        injection: Callable[[], InjectionPorts | None],
        memo: bool,
    ) -> None:
        self.network = network
        self.topology = topology
        self.engine_kwargs = engine_kwargs
        self.injection = injection
        self.memo = memo
        self._phase_memo: dict[tuple[int, PhaseSpec], tuple[float, tuple[tuple[int, int], ...]]] = {}
        self._collective_memo: dict[Any, tuple[float, tuple[int, ...]]] = {}
        self._refused: set[Any] = set()
        self.memo_ties = 0

    def _links_ok(self) -> bool:
        return self.engine_kwargs["active_chunks"] == 1

    def run(
        self, layout: LogicalLayout, chunks: list[list[PhaseSpec]], tag_base: int, start_ns: float
    ) -> SymmetricOutcome | None:
        """The representative's finish time and bytes, or None when the collective is not
        symmetric on this backend after all (the caller runs it rank by rank)."""
        key = (id(layout), tuple(tuple(c) for c in chunks))
        if key in self._refused:
            return None
        congestion_aware = type(self.network) is CongestionAwareNetwork
        if congestion_aware and self.network.messages_sent != self.network.messages_delivered:
            return None  # other traffic (sends) still on the links: they are shared
        hit = self._collective_memo.get(key) if self.memo else None
        if hit is not None:
            return SymmetricOutcome(start_ns + hit[0], hit[1], 0)
        phase_memo = self.memo and (
            not congestion_aware or (self._links_ok() and all(d.kind == NET for d in layout.dims))
        )
        try:
            try:
                outcome = self._simulate(layout, chunks, tag_base, start_ns, phase_memo)
            except _MemoTie:
                self.memo_ties += 1
                outcome = self._simulate(layout, chunks, tag_base, start_ns, False)
        except NotSymmetric:
            self._refused.add(key)
            return None
        if self.memo:
            self._collective_memo[key] = (outcome.end_ns - start_ns, outcome.dim_bytes)
        return outcome

    def _simulate(
        self,
        layout: LogicalLayout,
        chunks: list[list[PhaseSpec]],
        tag_base: int,
        start_ns: float,
        phase_memo: bool,
    ) -> SymmetricOutcome:
        private = EventQueue()
        private.now = start_ns
        links = None
        if type(self.network) is CongestionAwareNetwork:
            net = self.network
            links = CongestionAwareNetwork(None, private, compat_astra=net.compat_astra, graph=net.graph)
        done: list[RankWork] = []
        engine = MemoEngine(
            private,
            self.network,
            self.topology,
            on_rank_done=done.append,
            phase_memo=self._phase_memo if phase_memo else None,
            links=links,
            injection=self.injection(),
            **self.engine_kwargs,
        )
        rank = 0
        record = CollectiveRecord(rank, -1, 0, 0, "", start_ns, dim_bytes=[0] * len(self.topology.sizes), chunks=len(chunks))
        work = RankWork(rank, len(chunks), lambda _a: None, None, record, "")
        engine.start_rank(work, layout, chunks, tag_base, 0)
        private.run()
        if not done:
            raise NotSymmetric("the representative never finished")
        return SymmetricOutcome(record.end_ns, tuple(record.dim_bytes), private.events_processed)
