"""The timed host of collective phases: endpoint delay, reductions, message matching, per-rank
dimension queues (astra-sim-semantics.md A3, B1-B2, C3-C6). Used by ``collective_runtime``.

- ``bundle``: an insertion costs the endpoint model's delay (``EngineOptions.endpoint``, an
  ``endpoint.EndpointModel``; ASTRA-sim's: E, or 10 ns on a communicator group's "Fast" path)
  plus, when the insertion reduces b bytes, the model's time to reduce them (ASTRA-sim's:
  ``red(b)``, three memory passes at local-mem-bw, B2), charged back to back.
- Messages are matched on (tag = chunk id, src, dst, bytes) in order per key (A3); a receive
  posted after its message arrived runs at once (delay 0); sending costs the sender nothing.
  A custom collective's graph (``collectives/custom.py``) sends with ``message`` (its SEND
  node is done when the message arrives, just before the receiver's match, G12), receives with
  ``post`` (matched on its own tag too, within the collective) and computes with ``wait``.
- Each rank has one queue per logical dimension; when a phase ends, in the same tick: the
  stream leaves its queue, joins the next phase's queue, the old queue starts its next
  waiting stream, the new queue starts streams if it has room (C5).
- With ``rendezvous`` (ASTRA-sim's ``--rendezvous-protocol``: ``Sys::rendezvous_sim_send`` /
  ``rendezvous_sim_recv``), a receive does not wait passively: posting it sends the sender a
  control message of ``RENDEZVOUS_BYTES`` (8 KiB), and only when that control message arrives
  is the receive really posted and (if the sender has reached its send) the data sent; a
  sender that reaches its send first waits for the control message. At the control message's
  arrival the receiver's receive is posted first, then the data leaves; a control message that
  was there before the send starts the data at the send's tick (delay 0). Control messages are
  network traffic but not the collective's bytes (records count data only).
- With several queues per dimension (``queues_per_dim``), each rank's phases pick their queue
  and direction when the rank's chunks are generated (``system.queues``), and each queue runs
  ``ceil(active_chunks / queues_per_dim)`` chunks at once.
- ``switch_reduce`` (``inSwitch``): the upload leaves through the rank's uplink (its injection
  port in the default mode) and reaches the switch one hop later (``network.switch_hop``);
  when all n members' uploads are there (a join keyed by chunk tag, dimension and ring), the
  switch sends each member its download, one hop. Only on backends that declare the
  ``in_switch`` capability (``network/protocol.py``).

Where the network offers it (``ring_core``: the congestion-aware and analytical backends'
compiled core), a collective whose chunks are rings in every phase hands each ring phase to the
core at its start and hears back at its end (``_to_core``, ``_core_finish``): the core does
what ``bundle``, ``send``, ``recv``, the matching and ``RingPhase`` do here, event for event
(``native/link_core/src/ring.rs``); the dimension queues and everything per chunk stay here.

``SymmetricEngine`` runs one representative rank of a collective whose members are all
equivalent (same collective, same tick, vertex-transitive dimensions, symmetric algorithms):
each message it sends stands for the identical message its mirror peer sends it at the same
time, so the arrival is scheduled to itself. Time in ns, sizes in bytes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from trainsim.collectives import (
    DOUBLE_BINARY_TREE,
    RING,
    LogicalLayout,
    Phase,
    PhaseSpec,
    make_phase,
    phase_output_size,
)
from trainsim.collectives.base import ALL_REDUCE, REDUCE_SCATTER
from trainsim.collectives.ring import ring_sends, ring_sizes
from trainsim.config.types import RENDEZVOUS_BYTES
from trainsim.endpoint import EndpointModel
from trainsim.endpoint.astra import AstraEndpoint
from trainsim.endpoint.protocol import SharedResources
from trainsim.engine import EventQueue
from trainsim.errors import ConfigError
from trainsim.network.injection import InjectionPorts
from trainsim.network.protocol import NetworkBackend
from trainsim.system.dim_queue import DimQueue
from trainsim.system.queues import QueuePicker
from trainsim.topology import MultiDimTopology

_RS_AG = (2, 7)  # CommType.ALL_GATHER, CommType.REDUCE_SCATTER: SCF applies to these phases


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """What an engine needs besides its clock, network and topology: the endpoint model that
    prices bundles, the arithmetic mode (``compat_astra``: ASTRA-sim's whole-ns arithmetic,
    which lets the symmetric runner memoize phases), the active chunks per dimension queue and
    whether queues order streams smallest-chunk-first (``scf``, C5), the rendezvous protocol
    and the queues per dimension (module docstring). Built by the collective runtime from the
    platform (``system.build.build_endpoint`` for the endpoint)."""

    endpoint: EndpointModel
    compat_astra: bool
    active_chunks: int
    scf: bool
    rendezvous: bool = False
    queues_per_dim: int = 1


@dataclass(slots=True)
class CollectiveRecord:
    """One rank's part of one collective, for reports. Times in ns; ``dim_bytes[d]`` = bytes
    this rank sent on network dimension d; ``algorithms[l]`` = the algorithm its chunks ran on
    logical dimension l (= network dimension l unless the layout is a flat ``one*`` dimension
    or a communicator group's ring; "" where nothing ran; ``replay`` for a replayed
    broadcast); ``chunk_spans[c]`` = [start, end] ns of chunk c on this rank (its first phase
    started, its last phase ended; -1 for a chunk that ran no phase); ``group_size`` = members of the collective (for the
    bandwidth figures of ``collectives.bandwidth``)."""

    rank: int
    node_id: int
    comm_type: int
    size: int
    group: str
    start_ns: float
    end_ns: float = -1.0
    dim_bytes: list[int] = field(default_factory=list)
    chunks: int = 0
    algorithms: list[str] = field(default_factory=list)
    chunk_spans: list[list[float]] = field(default_factory=list)
    group_size: int = 0


@dataclass(slots=True)
class RankWork:
    """One rank's share of one collective in flight."""

    rank: int
    chunks_left: int
    on_done: Callable[[Any], None]
    arg: Any
    record: CollectiveRecord
    what: str


class Stream:
    """One chunk on one rank (ASTRA-sim's ``StreamBaseline``)."""

    __slots__ = (
        "rank",
        "tag",
        "phases",
        "pos",
        "phase",
        "queue",
        "initialized",
        "priority",
        "trees",
        "work",
        "layout",
        "chunk",
        "ready_ns",
        "in_core",
    )

    def __init__(
        self,
        rank: int,
        tag: int,
        phases: list[PhaseSpec],
        priority: int,
        trees: list[bool],
        work: RankWork,
        layout: LogicalLayout,
        chunk: int = 0,
    ) -> None:
        self.rank = rank
        self.tag = tag
        self.phases = phases
        self.pos = 0
        self.phase: Phase | None = None
        self.queue: DimQueue | None = None
        self.initialized = False
        self.priority = priority
        self.trees = trees
        self.work = work
        self.layout = layout
        self.chunk = chunk  # index in the collective, for the record's chunk spans
        self.ready_ns = 0.0  # a resource-sharing endpoint's: its data is there to send (ns)
        self.in_core = False  # its phases run in the network's compiled core (Engine._ring_start)

    def phase_size(self) -> int:
        spec = self.phases[self.pos]
        # SCF orders reduce-scatter / all-gather phases only (Sys::insert_stream)
        return spec.in_size if spec.comm_type in _RS_AG else -1


class RankState:
    """A rank's dimension queues, priority counter, double-binary-tree counters and (with
    several queues per dimension) its queue picker."""

    __slots__ = ("queues", "limit", "priority", "tree_counters", "active", "picker", "in_core")

    def __init__(self, limit: int, picker: QueuePicker | None = None) -> None:
        self.queues: list[DimQueue] = []
        self.limit = limit
        self.priority = 0
        self.tree_counters: dict[tuple[int, int], int] = {}
        self.active = 0  # streams in flight
        self.picker = picker
        self.in_core = 0  # of them, chunks in the network core's dimension queues (Engine._work_to_core)

    def queue(self, qid: int) -> DimQueue:
        queues = self.queues
        while len(queues) <= qid:
            queues.append(DimQueue(self.limit))
        return queues[qid]


class CoreQueuesConflict(Exception):
    """A rank would have streams both in the network core's dimension queues and in Python's
    (internal: ``api.simulate`` reruns with ``core_queues=False``)."""


class Engine:
    """Host of the phases of every rank (rank-by-rank simulation). ``core_queues``: whole
    collectives of rings may run in the network's core with their dimension queues
    (``_work_to_core``)."""

    def __init__(
        self,
        queue: EventQueue,
        network: NetworkBackend,
        topology: MultiDimTopology,
        options: EngineOptions,
        *,
        injection: InjectionPorts | None = None,
        on_rank_done: Callable[[RankWork], None],
        core_queues: bool = True,
    ) -> None:
        self.queue = queue
        self.network = network
        self.topology = topology
        self.options = options
        endpoint = options.endpoint
        self._insertion_ns = endpoint.insertion_ns
        self._reduction_ns = endpoint.reduction_ns
        # an endpoint whose collectives share the rank's resources hears when chunks start and
        # end and when messages leave (endpoint.protocol.SharedResources); ASTRA-sim's does not
        self.shared: SharedResources | None = None
        if not endpoint.time_invariant:
            self.shared = cast(SharedResources, endpoint)
            self.send = self._fed_send  # type: ignore[method-assign]
        self.scf = options.scf
        self.queues_per_dim = q = options.queues_per_dim
        self.active_chunks = -(-options.active_chunks // q)  # per queue (Sys::Sys)
        if options.rendezvous:
            self.send = self._rdv_send  # type: ignore[method-assign]
            self.recv = self._rdv_recv  # type: ignore[method-assign]
        self.injection = injection
        # ring phases run in the network's compiled core where it offers to (``_core_rings``),
        # asked when the first collective starts (a run whose collectives are all folded never
        # loads the core); ``_ring_delay``: the backend's message delay where it prices them
        self._ring_offer = self._core_rings(endpoint)
        self._ring_start: Callable[..., None] | None = None
        self._ring_delay: Callable[[int, int, int], float] | None = None
        self._work_start: Callable[..., None] | None = None  # whole collectives (``_work_to_core``)
        self._core_queues = core_queues and options.queues_per_dim == 1 and not options.scf
        self._in_core_last: tuple[object, bool] = (None, False)  # ``_in_core``'s last answer
        self._rings: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # ``_to_core``'s numbers
        self._works: dict[tuple[int, int, int], tuple[Any, ...]] = {}  # ``_work_to_core``'s
        self.on_rank_done = on_rank_done
        self.ranks: dict[int, RankState] = {}
        self.active_ranks = 0  # ranks with streams in flight (``RankState.active`` > 0)
        # (tag, src, dst, bytes) -> receivers waiting / messages arrived first; a custom
        # collective's tag is (chunk tag, the graph's tag)
        self._posted: dict[tuple[Any, int, int, int], deque[Any]] = {}
        self._early: dict[tuple[Any, int, int, int], int] = {}
        # (tag, dim, first member) -> [uploads arrived at the switch, phases that sent one]
        self._joins: dict[tuple[int, int, int], list[Any]] = {}
        # rendezvous, keyed (tag, sender, receiver): sends waiting for their control message,
        # and control messages that arrived before their send
        self._rdv_sends: dict[tuple[int, int, int], deque[tuple[Phase, int, int]]] = {}
        self._rdv_early: dict[tuple[int, int, int], int] = {}

    def _core_rings(self, endpoint: EndpointModel) -> Callable[..., Any] | None:
        """The network's ``ring_core`` offer (``congestion_native``, ``analytical_native``)
        when it has one and this engine is the plain rank-by-rank host of ring phases priced by
        ASTRA-sim's endpoint: no subclass (symmetric hosts send otherwise), no rendezvous, no
        resource-sharing endpoint, no injection model. The core then runs what ``bundle``,
        ``send``, ``recv``, ``_arrive`` and ``RingPhase`` do for those phases, event for event
        (``native/link_core/src/ring.rs``)."""
        offer = getattr(self.network, "ring_core", None)
        if (
            offer is None
            or type(self) is not Engine
            or type(endpoint) is not AstraEndpoint
            or self.shared is not None
            or self.options.rendezvous
            or self.injection is not None
        ):
            return None
        return offer  # type: ignore[no-any-return]

    def ring_core(self) -> Callable[..., None] | None:
        """The core's ``ring_start``, asking the network on the first call (None: no core)."""
        offer = self._ring_offer
        if offer is not None:
            self._ring_offer = None
            endpoint = cast(AstraEndpoint, self.options.endpoint)
            got = offer(endpoint.delay_ns, endpoint.fast_ns, endpoint.local_mem_bw, endpoint.compat_astra)
            if got is not None:
                self._ring_start, self._ring_delay, work_start = got
                if self._core_queues:
                    self._work_start = work_start
        return self._ring_start

    def _to_core(self, stream: Stream, spec: PhaseSpec, members: list[int], index: int) -> None:
        """Hand the stream's ring phase to the network's core (what ``RingPhase`` and this
        host would do, with no Python phase); the core calls ``_core_finish`` at its end.
        Its bytes are counted now: every packet of a ring goes to the same peer."""
        rank = stream.rank
        _, dst, src, msg, later, sends, flags, delay, d = self._ring_numbers(rank, stream.layout, spec, members, index)
        stream.work.record.dim_bytes[d] += sends * msg
        assert self._ring_start is not None
        self._ring_start(rank, dst, src, stream.tag, msg, 1, later, sends, flags, delay, self._core_finish, stream)

    def _ring_numbers(self, rank: int, layout: LogicalLayout, spec: PhaseSpec, members: list[int], index: int) -> tuple[Any, ...]:
        """(layout, dst, src, message bytes, later insertions, sends, flags, delay, network
        dimension) of ``rank``'s ring phase for ``spec``: what the core needs
        (``ring_start``'s numbers) and the dimension its bytes count on."""
        # a group's collectives repeat (every layer, every micro-batch): the ring's numbers
        # are kept per layout, dimension, rank, type, size and direction
        key = (id(layout), spec.ldim, rank, spec.comm_type, spec.in_size, spec.clockwise)
        ring = self._rings.get(key)
        if ring is None or ring[0] is not layout:
            n = len(members)
            comm_type = spec.comm_type
            msg = ring_sizes(comm_type, spec.in_size, n)[0]
            sign = 1 if spec.clockwise else -1
            dst, src = members[(index + sign) % n], members[(index - sign) % n]
            d = layout.dims[spec.ldim].net_dim
            if d < 0:
                d = self.topology.send_dim(rank, dst)
            flags = (comm_type == REDUCE_SCATTER) | (comm_type == ALL_REDUCE) << 1 | bool(layout.fast) << 2
            delay = -1.0 if self._ring_delay is None else self._ring_delay(rank, dst, msg)
            ring = (layout, dst, src, msg, n - 1, ring_sends(comm_type, n), flags, delay, d)
            if len(self._rings) < 1 << 18:
                self._rings[key] = ring
        return ring

    def _work_to_core(self, work: RankWork, rs: RankState, layout: LogicalLayout, chunks: list[list[PhaseSpec]], tag_base: int, priority: int) -> None:
        """Hand a rank's whole collective of rings to the network's core: its chunks go into
        the rank's dimension queues there and run phase after phase (``queues.rs``: what
        ``start_rank``, ``_fill``, ``_init_stream``, ``_phase_over`` and ``_chunk_done`` do
        here); ``_core_work_done`` at its end. A rank's streams are all in the core or all
        here (else :class:`CoreQueuesConflict`)."""
        rank = work.rank
        if rs.active != rs.in_core:
            raise CoreQueuesConflict(f"rank {rank} starts a collective of rings in the core with streams queued in Python")
        # a collective's plan is shared by its members and by its repeats (every layer): the
        # core's numbers and the bytes per dimension are kept per plan, layout and rank
        key = (id(chunks), id(layout), rank)
        known = self._works.get(key)
        if known is None or known[0] is not chunks or known[1] is not layout:
            known = (chunks, layout, *self._work_numbers(rank, layout, chunks))
            if len(self._works) < 1 << 16:
                self._works[key] = known
        params, adds = known[2], known[3]
        dim_bytes = work.record.dim_bytes
        for d, nbytes in adds:
            dim_bytes[d] += nbytes
        n = len(chunks)
        if rs.active == 0:
            self.active_ranks += 1
        rs.active += n
        rs.in_core += n
        assert self._work_start is not None
        self._work_start(rank, priority, tag_base, self.active_chunks, params, self._core_work_done, work)

    def _work_numbers(self, rank: int, layout: LogicalLayout, chunks: list[list[PhaseSpec]]) -> tuple[list[list[tuple[Any, ...]]], list[tuple[int, int]]]:
        """``work_start``'s chunks (each phase's queue id and ring numbers) for ``rank``, and the
        bytes it sends per network dimension."""
        fast = layout.fast  # a communicator group's ring: queue 0 (``_queue_id``)
        members_of: dict[int, tuple[list[int], int]] = {}
        params = []
        adds: dict[int, int] = {}
        for phases in chunks:
            out = []
            for spec in phases:
                ldim = spec.ldim
                found = members_of.get(ldim)
                if found is None:
                    found = members_of[ldim] = layout.members(rank, ldim)
                _, dst, src, msg, later, sends, flags, delay, d = self._ring_numbers(rank, layout, spec, *found)
                adds[d] = adds.get(d, 0) + sends * msg
                out.append((0 if fast else ldim, dst, src, msg, later, sends, flags, delay))
            params.append(out)
        return params, list(adds.items())

    def _core_work_done(self, work: RankWork, spans: tuple[float, ...]) -> None:
        """A rank's collective run whole by the core is over (``_chunk_done`` of its last
        chunk): its chunks' spans, its end."""
        rs = self.ranks[work.rank]
        n = len(spans) // 2
        rs.active -= n
        rs.in_core -= n
        if rs.active == 0:
            self.active_ranks -= 1
        record = work.record
        for c, span in enumerate(record.chunk_spans):
            span[0], span[1] = spans[2 * c], spans[2 * c + 1]
        work.chunks_left = 0
        record.end_ns = self.queue.now
        self.on_rank_done(work)

    def _core_finish(self, stream: Stream) -> None:
        """A ring phase run by the core is over (``finish`` without a Python phase)."""
        self._phase_over(stream, None)

    # -- PhaseHost -----------------------------------------------------------------------
    def bundle(self, phase: Phase, red_bytes: int) -> None:
        """The insertion's delay, then its reduction of ``red_bytes`` (B1-B2), then the
        phase's go signal (carrying ``red_bytes`` when the phase is ``ordered``)."""
        queue = self.queue
        now = queue.now
        delay = self._insertion_ns(phase.rank, now, phase.fast)
        if red_bytes:
            delay += self._reduction_ns(phase.rank, now + delay, red_bytes)
        queue.schedule(delay, phase.on_general_cb, red_bytes if phase.ordered else None)

    def _fed_send(self, phase: Phase, dst: int, nbytes: int, mirror_src: int) -> None:
        """``send`` with a resource-sharing endpoint: the message arrives no earlier than the
        endpoint has fed it to the network (``SharedResources.send_ready_ns``) nor than its
        chunk's data is there (``chunk_begin_ns``)."""
        assert self.shared is not None
        self._account(phase, dst, nbytes)
        ready = max(self.shared.send_ready_ns(phase.rank, self.queue.now, nbytes), phase.owner.ready_ns)
        key = (phase.tag, phase.rank, dst, nbytes)
        self._transmit(phase.rank, dst, nbytes, self._fed_arrive, (ready, key))

    def _fed_arrive(self, item: tuple[float, tuple[Any, int, int, int]]) -> None:
        ready, key = item
        if ready > self.queue.now:
            self.queue.schedule_at(ready, self._arrive, key)
        else:
            self._arrive(key)

    def _account(self, phase: Phase, dst: int, nbytes: int) -> None:
        d = phase.dim
        if d < 0:  # a group's ring or a flat dimension: the topology's rule
            d = self.topology.send_dim(phase.rank, dst)
        phase.owner.work.record.dim_bytes[d] += nbytes

    def send(self, phase: Phase, dst: int, nbytes: int, mirror_src: int) -> None:
        self._account(phase, dst, nbytes)
        self._transmit(phase.rank, dst, nbytes, self._arrive, (phase.tag, phase.rank, dst, nbytes))

    def _transmit(self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any) -> None:
        """One message on the network, after the sender's injection port frees (default mode)."""
        inj = self.injection
        if inj is not None:
            now = self.queue.now
            start = inj.reserve(src, dst, nbytes, now)
            if start > now:
                self.queue.schedule(start - now, self._deferred_send, (src, dst, nbytes, on_arrival, arg))
                return
        self.network.send(src, dst, nbytes, on_arrival, arg)

    def _deferred_send(self, item: tuple[int, int, int, Callable[[Any], None], Any]) -> None:
        self.network.send(*item)

    def _arrive(self, key: tuple[Any, int, int, int]) -> None:
        posted = self._posted.get(key)
        if posted:
            phase = posted.popleft()
            if not posted:
                del self._posted[key]
            phase.on_recv()
        else:
            early = self._early
            early[key] = early.get(key, 0) + 1

    def recv(self, phase: Phase, src: int, nbytes: int) -> None:
        self._post((phase.tag, src, phase.rank, nbytes), phase)

    def _post(self, key: tuple[Any, int, int, int], phase: Any) -> None:
        """Match ``phase`` (anything with ``on_recv`` / ``on_recv_cb``) to a message of ``key``."""
        early = self._early
        count = early.get(key)
        if count:
            if count == 1:
                del early[key]
            else:
                early[key] = count - 1
            self.queue.schedule(0.0, phase.on_recv_cb, None)
        else:
            posted = self._posted.get(key)
            if posted is None:
                posted = self._posted[key] = deque()
            posted.append(phase)

    # -- the rendezvous protocol (module docstring): ``send`` / ``recv`` when it is on --------

    def _rdv_send(self, phase: Phase, dst: int, nbytes: int, mirror_src: int) -> None:
        """A send waits for its receiver's control message (there already: at once, delay 0)."""
        key = (phase.tag, phase.rank, dst)
        early = self._rdv_early.get(key)
        if early:
            if early == 1:
                del self._rdv_early[key]
            else:
                self._rdv_early[key] = early - 1
            self.queue.schedule(0.0, self._rdv_data, (phase, dst, nbytes))
            return
        waiting = self._rdv_sends.get(key)
        if waiting is None:
            waiting = self._rdv_sends[key] = deque()
        waiting.append((phase, dst, nbytes))

    def _rdv_data(self, item: tuple[Phase, int, int]) -> None:
        phase, dst, nbytes = item
        if self.shared is not None:
            self._fed_send(phase, dst, nbytes, -1)
        else:
            Engine.send(self, phase, dst, nbytes, -1)

    def _rdv_recv(self, phase: Phase, src: int, nbytes: int) -> None:
        """A receive sends its control message; it is posted when that arrives."""
        self._transmit(phase.rank, src, RENDEZVOUS_BYTES, self._rdv_arrive, (phase, src, nbytes))

    def _rdv_arrive(self, item: tuple[Phase, int, int]) -> None:
        phase, src, nbytes = item
        Engine.recv(self, phase, src, nbytes)
        key = (phase.tag, src, phase.rank)
        waiting = self._rdv_sends.get(key)
        if waiting:
            sender = waiting.popleft()
            if not waiting:
                del self._rdv_sends[key]
            self._rdv_data(sender)
        else:
            self._rdv_early[key] = self._rdv_early.get(key, 0) + 1

    def message(self, phase: Phase, dst: int, nbytes: int, tag: int, node: int) -> None:
        """A custom graph's SEND: ``phase.on_sent(node)`` when it arrives, then the match."""
        self._account(phase, dst, nbytes)
        key = ((phase.tag, tag), phase.rank, dst, nbytes)
        self._transmit(phase.rank, dst, nbytes, self._delivered, (phase, node, key))

    def _delivered(self, arg: tuple[Any, int, tuple[Any, int, int, int]]) -> None:
        phase, node, key = arg
        phase.on_sent(node)
        self._arrive(key)

    def post(self, phase: Phase, src: int, nbytes: int, tag: int, node: int) -> None:
        """A custom graph's RECV: ``phase.on_recv(node)`` at the match."""
        self._post(((phase.tag, tag), src, phase.rank, nbytes), _Receipt(phase, node))

    def wait(self, phase: Phase, ns: float, node: int) -> None:
        """A custom graph's COMP: ``phase.on_general(node)`` after ``ns``."""
        self.queue.schedule(ns, phase.on_general_cb, node)

    def switch_reduce(self, phase: Phase, up_bytes: int, down_bytes: int) -> None:
        if not self.network.capabilities.in_switch:
            raise ConfigError(
                f"inSwitch needs a network backend with in-switch reduction; "
                f"{self.network.name!r} has none",
                hint="use ring or direct on this backend, or one that declares in_switch "
                "(trainsim run --help lists the backends)",
            )
        hop = self.network.switch_hop
        d = phase.dim
        phase.owner.work.record.dim_bytes[d] += up_bytes
        wait = 0.0
        inj = self.injection
        if inj is not None:
            now = self.queue.now
            peer = phase.members[(phase.index + 1) % len(phase.members)]  # any: one uplink
            wait = inj.reserve(phase.rank, peer, up_bytes, now) - now
        key = (phase.tag, d, phase.members[0])
        join = self._joins.get(key)
        if join is None:
            join = self._joins[key] = [0, []]
        join[1].append((phase, down_bytes, up_bytes))
        self.queue.schedule(wait + hop(d, up_bytes, wait), self._switch_arrive, key)

    def _switch_arrive(self, key: tuple[int, int, int]) -> None:
        join = self._joins[key]
        join[0] += 1
        phases = join[1]
        if join[0] < len(phases[0][0].members):
            return
        del self._joins[key]
        hop = self.network.switch_hop
        schedule = self.queue.schedule
        for phase, down, up in phases:
            # the switch reduces and forwards packets as they arrive (SHARP streams): the
            # result follows the last upload by one hop latency, plus whatever the download
            # carries beyond the upload (all-gather's n x D)
            schedule(hop(key[1], down, streamed=up), phase.on_recv_cb, None)

    def finish(self, phase: Phase) -> None:
        self._phase_over(phase.owner, phase)

    def _phase_over(self, stream: Stream, phase: Phase | None) -> None:
        """``stream``'s current phase is over: the stream moves to its next phase's queue or
        its chunk ends (C5). ``phase`` is None for a ring run by the core, never with a
        resource-sharing endpoint."""
        old = stream.queue
        assert old is not None
        old.streams.remove(stream)
        stream.pos += 1
        stream.phase = None
        if stream.pos < len(stream.phases):
            stream.initialized = False
            new = self.rank_state(stream.rank).queue(self._queue_id(stream))
            stream.queue = new
            new.insert(stream, self.scf)
            old.running -= 1
            self._fill(old)
            self._fill(new)
            return
        old.running -= 1
        shared = self.shared
        if shared is not None:  # the chunk's end first: the stream started next queues behind it
            first, last = stream.phases[0], stream.phases[-1]
            assert phase is not None
            parts = len(phase.members)
            out = phase_output_size(last.algo.kind, last.comm_type, last.in_size, parts)
            done = shared.chunk_end_ns(stream.rank, self.queue.now, first.in_size, out, parts)
            self._fill(old)
            if done > self.queue.now:
                self.queue.schedule_at(done, self._chunk_done, stream)
                return
        else:
            self._fill(old)
        self._chunk_done(stream)

    def _chunk_done(self, stream: Stream) -> None:
        """A chunk's last phase is over (and, with a resource-sharing endpoint, its result
        stored): its rank's share of the collective may end."""
        work = stream.work
        spans = work.record.chunk_spans
        if spans:
            spans[stream.chunk][1] = self.queue.now
        rs = self.rank_state(stream.rank)
        rs.active -= 1
        if rs.active == 0:
            self.active_ranks -= 1
            if self.shared is not None:
                self.shared.collective_active(stream.rank, self.queue.now, False)
        if self.shared is not None:
            for q in rs.queues:  # chunks held back for room in the endpoint may begin now
                if q.running < q.limit and len(q.streams) > q.running:
                    self._fill(q)
        work.chunks_left -= 1
        if work.chunks_left == 0:
            work.record.end_ns = self.queue.now
            self.on_rank_done(work)

    # -- streams and queues ------------------------------------------------------------------
    def rank_state(self, rank: int) -> RankState:
        rs = self.ranks.get(rank)
        if rs is None:
            q = self.queues_per_dim
            rs = self.ranks[rank] = RankState(self.active_chunks, QueuePicker(q) if q > 1 else None)
        return rs

    def _queue_id(self, stream: Stream) -> int:
        spec = stream.phases[stream.pos]
        return (0 if stream.layout.fast else spec.ldim) * self.queues_per_dim + spec.queue

    def _fill(self, q: DimQueue) -> None:
        streams = q.streams
        i = q.running
        shared = self.shared
        while i < len(streams) and q.running < q.limit:
            stream = streams[i]
            if (
                shared is not None
                and stream.pos == 0
                and not shared.may_begin(stream.rank, self.queue.now, stream.phases[0].in_size)
            ):
                i += 1  # its chunk waits for room in the endpoint (ACE's SRAM): the next may run
                continue
            if i != q.running:  # running streams stay at the front (DimQueue.insert)
                streams.insert(q.running, streams.pop(i))
            q.running += 1
            i += 1
            self._init_stream(stream)

    def _init_stream(self, stream: Stream) -> None:
        stream.initialized = True
        pos = stream.pos
        if pos == 0:
            spans = stream.work.record.chunk_spans
            if spans:
                spans[stream.chunk][0] = self.queue.now
            shared = self.shared
            if shared is not None:  # the chunk's messages arrive once its data is there
                first = stream.phases[0]
                parts = len(stream.layout.members(stream.rank, first.ldim)[0])
                stream.ready_ns = shared.chunk_begin_ns(stream.rank, self.queue.now, first.in_size, parts)
        spec = stream.phases[pos]
        layout = stream.layout
        members, index = layout.members(stream.rank, spec.ldim)
        if stream.in_core:
            self._to_core(stream, spec, members, index)
            return
        phase = make_phase(self, spec, stream.rank, members, index, max_tree=stream.trees[pos])
        phase.owner = stream
        phase.tag = stream.tag
        phase.dim = layout.dims[spec.ldim].net_dim
        phase.fast = layout.fast and spec.algo.kind != DOUBLE_BINARY_TREE
        phase.ordered = self.shared is not None
        stream.phase = phase
        phase.start()

    def start_rank(
        self,
        work: RankWork,
        layout: LogicalLayout,
        chunks: list[list[PhaseSpec]],
        tag_base: int,
        priority: int,
    ) -> None:
        """Generate one rank's chunks and place each in its first queue (C3, C5)."""
        rank = work.rank
        rs = self.rank_state(rank)
        counters = rs.tree_counters
        lid = id(layout)
        picker = rs.picker
        in_core = self._in_core(chunks)
        if in_core and self._work_start is not None:
            self._work_to_core(work, rs, layout, chunks, tag_base, priority)
            return
        if rs.in_core:
            raise CoreQueuesConflict(f"rank {rank} starts a collective in Python with streams queued in the core")
        for c, phases in enumerate(chunks):
            if picker is not None:
                phases = picker.assign(phases, layout.fast)
            trees = []
            for spec in phases:
                if spec.algo.kind == DOUBLE_BINARY_TREE:
                    key = (lid, spec.ldim)
                    k = counters.get(key, 0)
                    counters[key] = k + 1
                    trees.append(k % 2 == 0)
                else:
                    trees.append(True)
            stream = Stream(rank, tag_base + c, phases, priority, trees, work, layout, c)
            stream.in_core = in_core
            rs.active += 1
            if rs.active == 1:
                self.active_ranks += 1
                if self.shared is not None:
                    self.shared.collective_active(rank, self.queue.now, True)
            q = rs.queue(self._queue_id(stream))
            stream.queue = q
            q.insert(stream, self.scf)
            self._fill(q)

    def _in_core(self, chunks: list[list[PhaseSpec]]) -> bool:
        """Whether a collective's chunks run in the network's core: only if all their phases
        are rings, so that every message of their tags is the core's and matching there is
        matching here. The members of a collective start one after the other with the same
        chunks: the last answer is kept."""
        if chunks is self._in_core_last[0]:
            return self._in_core_last[1]
        ok = self.ring_core() is not None and all(
            type(spec) is PhaseSpec and spec.algo.kind == RING and type(spec.in_size) is int
            for phases in chunks
            for spec in phases
        )
        self._in_core_last = (chunks, ok)
        return ok

    def waiting(self) -> list[tuple[int, str]]:
        """(rank, what) for every posted receive not yet matched and every member waiting for
        a switch's result (deadlock reports)."""
        out = []
        for (tag, src, dst, nbytes), phases in self._posted.items():
            for _ in phases:
                out.append((dst, f"a {nbytes} B message of chunk {tag} from rank {src}"))
        if self._ring_start is not None:
            for dst, tag, src, nbytes in self.network.ring_waiting():  # type: ignore[attr-defined]
                out.append((dst, f"a {nbytes} B message of chunk {tag} from rank {src}"))
        for (tag, src, dst), sends in self._rdv_sends.items():
            for _ in sends:
                out.append((src, f"the rendezvous control message of chunk {tag} from rank {dst}"))
        for (tag, dim, _first), (arrived, phases) in self._joins.items():
            n = len(phases[0][0].members)
            for phase, *_sizes in phases:  # (phase, down bytes, up bytes)
                out.append(
                    (
                        phase.rank,
                        f"the switch's result of chunk {tag} on dimension {dim} "
                        f"({arrived} of {n} members' data arrived)",
                    )
                )
        return out


class _Receipt:
    """A custom graph's posted RECV node, matched like a phase: ``on_recv`` completes the node."""

    __slots__ = ("phase", "node", "rank")

    def __init__(self, phase: Phase, node: int) -> None:
        self.phase = phase
        self.node = node
        self.rank = phase.rank

    def on_recv(self, _arg: Any = None) -> None:
        self.phase.on_recv(self.node)

    on_recv_cb = on_recv


class SymmetricEngine(Engine):
    """Simulates one representative rank; every send is mirrored back as its own arrival."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._delay: dict[tuple[int, int, int], float] = {}

    def send(self, phase: Phase, dst: int, nbytes: int, mirror_src: int) -> None:
        self._account(phase, dst, nbytes)
        rank = phase.rank
        dkey = (mirror_src, rank, nbytes)
        delay = self._delay.get(dkey)
        if delay is None:
            delay = self._delay[dkey] = self.network.delay_ns(mirror_src, rank, nbytes)
        inj = self.injection
        if inj is not None:
            now = self.queue.now
            delay += inj.reserve(rank, dst, nbytes, now) - now
        self.queue.schedule(delay, self._arrive, (phase.tag, mirror_src, rank, nbytes))
