"""The pure-Python packet engine (DESIGN.md, network layer; the reference model of the packet
backend): RoCE packets on the event kernel, as in the public HPCC ns-3 code base.

Model (times in ns, sizes in bytes, rates in B/ns):
- A message is a queue pair (QP) that segments it into packets of ``mtu_bytes`` payload (or
  cells of ``cell_packets`` packets) plus ``header_bytes``; the sender NIC paces each QP at
  its rate (the next packet leaves ``wire bytes / rate`` after the last one) and, with a
  window, keeps at most ``window x rate / line rate`` bytes unacknowledged.
- Every directed link is an egress port with 8 strict-priority queues: priority 0 (CNPs, PFC
  frames, ACKs when ``ack_high_priority``) first, then data at ``data_priority``; a NIC serves
  its queues, then its QPs round robin. A packet takes ``bytes / rate`` on the wire and
  reaches the next device the link's latency later; routes are the graph's (ECMP per pair).
- Each forwarding device has one shared buffer (``switch-mmu.cc``): an ingress queue first
  fills its reserve, then the shared pool up to the dynamic threshold
  ``(buffer - headroom - reserve - shared used) >> shift``, then its headroom. Crossing the
  threshold (or touching headroom) sends a PFC pause of that priority to the upstream port;
  falling ``resume_offset`` below it sends a resume. A packet is dropped only when headroom
  is full too, or, with PFC off, when the buffer is full.
- At dequeue a data packet is ECN-marked with the RED probability of its egress queue and,
  under HPCC, gets an INT record (time, bytes sent, queue bytes, line rate) of the port.
- The receiver ACKs every ``ack_interval_packets`` in-order packets (echoing ECN, INT and the
  send time), NACKs a gap at most once per ``nack_interval_us`` and ACKs duplicates; DCQCN's
  NP sends a CNP per marked flow at most once per ``cnp_interval_us``. A NACK or a timeout
  without progress (``rto_us``, armed once a drop is possible) sends again from the first
  unacknowledged byte (go-back-N).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from trainsim.network.packet.config import PacketOptions
from trainsim.topology.graph import LinkGraph

if TYPE_CHECKING:
    from trainsim.engine import EventQueue
    from trainsim.network.packet.cc import CongestionControl

DATA, ACK, NACK, CNP, PFC = range(5)
PRIORITIES = 8
_INF = float("inf")


class SplitMix64:
    """The ECN draws' generator (Steele et al., OOPSLA'14), the same in the compiled core so
    that both engines mark the same packets."""

    __slots__ = ("state",)
    MASK = (1 << 64) - 1

    def __init__(self, seed: int) -> None:
        self.state = seed & self.MASK

    def random(self) -> float:
        """Uniform in [0, 1) with 53 bits."""
        m = self.MASK
        self.state = z = (self.state + 0x9E3779B97F4A7C15) & m
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
        return ((z ^ (z >> 31)) >> 11) * (1.0 / (1 << 53))


class Packet:
    """One packet (or cell) on the wire. For a PFC frame ``seq`` is the link to pause and
    ``payload`` 1 for pause, 0 for resume."""

    __slots__ = (
        "kind",
        "qp",
        "seq",
        "payload",
        "size",
        "route",
        "hop",
        "prio",
        "ecn",
        "ints",
        "ts",
        "in_link",
    )

    def __init__(
        self,
        kind: int,
        qp: Any,
        seq: int,
        payload: int,
        size: int,
        route: tuple[int, ...],
        prio: int,
        ts: float = 0.0,
    ) -> None:
        self.kind = kind
        self.qp = qp
        self.seq = seq
        self.payload = payload
        self.size = size
        self.route = route
        self.hop = 0
        self.prio = prio
        self.ecn = False
        self.ints: list[tuple[float, int, int, float]] | None = None
        self.ts = ts
        self.in_link = -1


class QueuePair:
    """A message's sender and receiver state (one QP per message, as ASTRA-sim over ns-3)."""

    __slots__ = (
        "fid", "src", "dst", "size", "route", "ack_route", "port", "snd_nxt", "snd_una", "rate",
        "max_rate", "win", "next_avail", "base_rtt_ns", "last_pkt_bytes", "done", "cc",
        "on_arrival", "arg", "start_ns", "finish_ns", "expected", "milestone", "nack_at",
        "last_nack", "last_cnp", "ecn_pending", "delivered", "rto_una", "rto_armed", "sent_high",
    )  # fmt: skip

    def __init__(
        self,
        fid: int,
        src: int,
        dst: int,
        size: int,
        route: tuple[int, ...],
        ack_route: tuple[int, ...],
        rate: float,
    ) -> None:
        self.fid, self.src, self.dst, self.size = fid, src, dst, size
        self.route, self.ack_route, self.port = route, ack_route, route[0]
        self.snd_nxt = self.snd_una = self.sent_high = 0
        self.rate = self.max_rate = rate
        self.win = 0.0
        self.next_avail = 0.0
        self.base_rtt_ns = 0.0
        self.last_pkt_bytes = 0
        self.done = False
        self.cc: Any = None
        self.on_arrival: Callable[[Any], None] | None = None
        self.arg: Any = None
        self.start_ns = self.finish_ns = 0.0
        self.expected = 0  # receiver: next in-order byte
        self.milestone = 0
        self.nack_at = -_INF
        self.last_nack = -1
        self.last_cnp = -_INF
        self.ecn_pending = False
        self.delivered = False
        self.rto_una = -1
        self.rto_armed = False

    def window_open(self, var_window: bool) -> bool:
        if not self.win:
            return True
        win = self.win * self.rate / self.max_rate if var_window else self.win
        return self.snd_nxt - self.snd_una < win


class PacketEngine:
    """Ports, shared-buffer switches with PFC and ECN, and RoCE NICs over a :class:`LinkGraph`."""

    def __init__(
        self, graph: LinkGraph, queue: EventQueue, opts: PacketOptions, cc: CongestionControl
    ) -> None:
        self.graph, self.queue, self.opts, self.cc = graph, queue, opts, cc
        cc.bind(self)
        n = graph.links
        self.npus = graph.npus
        self.bw = [b / 1e9 for b in graph.bandwidth]  # B/ns
        self.lat = list(graph.latency_ns)
        self.src = list(graph.link_src)
        self.dst = list(graph.link_dst)
        index = graph._index
        self.rev = [index.get((b, a), -1) for a, b in zip(self.src, self.dst, strict=True)]
        self.queues = [[deque() for _ in range(PRIORITIES)] for _ in range(n)]  # type: list[list[deque[Packet]]]
        self.qbytes = [0] * n
        self.flight: list[deque[tuple[float, Packet]]] = [deque() for _ in range(n)]
        self.egress = [[0] * PRIORITIES for _ in range(n)]
        self.paused = [[False] * PRIORITIES for _ in range(n)]
        # a port is busy until free_at; its "free" event is scheduled only when something
        # waits for it (at transmit, or when a packet or a QP asks while it is busy)
        self.free_at = [-_INF] * n
        self.free_pending = [False] * n
        self.tx_bytes = [0] * n
        self.qps: list[list[QueuePair]] = [[] for _ in range(n)]
        self.rr = [0] * n
        self.wake_at = [_INF] * n
        # counters
        self.link_bytes = [0] * n
        self.peak_queue_bytes = [0] * n
        self.pause_ns = [0.0] * n  # time each port spent paused (any data priority)
        self.pause_since = [[-1.0] * PRIORITIES for _ in range(n)]
        self.pause_frames = 0
        self.drops = 0
        self.packets_sent = 0  # data packets (or cells) put on a first link, resends included
        self.packets_resent = 0
        self.hops = 0  # packet transmissions on links, every kind
        self.ecn_marks = 0
        self.cnps = 0
        self.completions: list[
            tuple[int, int, int, float, float]
        ] = []  # (src, dst, bytes, start, end)
        self.samples_t: list[float] = []
        self.samples_q: list[list[int]] = []
        self._init_mmu(graph)
        self._rng = SplitMix64(opts.seed)
        self._ecn = [opts.ecn_thresholds(b * 8) for b in graph.bandwidth]
        self._fid = 0
        self._loss: dict[int, int] = {}
        self.active = 0
        self._rto_on = not opts.pfc
        self._active_qps: set[QueuePair] = set()
        self._monitoring = False
        self._monitored = [ln for ln in range(n) if self.src[ln] >= self.npus] or list(range(n))
        self.unit = opts.mtu_bytes * opts.cell_packets
        # GLOBAL_T: one base RTT (the largest) and window (the largest BDP) for every QP
        self.max_rtt_ns = 0.0
        max_bdp = self._max_bdp()
        self.window_bytes = max_bdp if opts.has_window else 0.0

    # -- set-up -----------------------------------------------------------------------------

    def _init_mmu(self, graph: LinkGraph) -> None:
        opts = self.opts
        n, devices = graph.links, graph.devices
        self.buffer = opts.buffer_mib * 1024 * 1024
        # third.cc's 3 x rate x delay, plus room for the two extra whole cells that a cell
        # larger than a packet can put in flight (one serializing behind the pause frame, one
        # leaving upstream as it lands); unchanged at cell_packets = 1
        extra = 2 * opts.mtu_bytes * (opts.cell_packets - 1)
        self.headroom = [
            self.bw[ln] * self.lat[ln] * opts.headroom_factor + extra for ln in range(n)
        ]
        host_rates = [self.bw[ln] for ln in range(n) if self.src[ln] < self.npus]
        nic_rate = min(host_rates) if host_rates else min(self.bw, default=1.0)
        self.shift = []
        for ln in range(n):
            shift, rate = opts.pfc_alpha_shift, self.bw[ln]
            while (
                rate > nic_rate * (1 + 1e-9) and shift > 0
            ):  # third.cc: alpha doubles per rate doubling
                shift -= 1
                rate /= 2
            self.shift.append(shift)
        self.total_hdrm = [0.0] * devices
        self.total_rsrv = [0.0] * devices
        for ln in range(n):
            d = self.dst[ln]
            self.total_hdrm[d] += self.headroom[ln]
            self.total_rsrv[d] += opts.reserve_bytes
        self.shared_used = [0.0] * devices
        self.dev_used = [0] * devices  # every byte in the device's buffer (PFC off)
        self.ing = [[0] * PRIORITIES for _ in range(n)]  # per ingress link and priority
        self.hdrm = [[0] * PRIORITIES for _ in range(n)]
        self.xoff = [[False] * PRIORITIES for _ in range(n)]

    def _max_bdp(self) -> float:
        g = self.graph
        best = 0.0
        npus = self.npus
        pairs = [(0, d) for d in range(1, npus)] + [(s, 0) for s in range(1, npus)]
        if npus <= 64:
            pairs = [(s, d) for s in range(npus) for d in range(npus) if s != d]
        for s, d in pairs:
            route = g.route(s, d)  # type: ignore[attr-defined]
            if route:
                rtt = self.base_rtt(route, g.route(d, s))  # type: ignore[attr-defined]
                self.max_rtt_ns = max(self.max_rtt_ns, rtt)
                best = max(best, rtt * self.bw[route[0]])
        return best

    def base_rtt(self, route: tuple[int, ...], back: tuple[int, ...]) -> float:
        """Unloaded round trip of a full packet out and an ACK back, ns."""
        o = self.opts
        pkt = self.unit + o.header_bytes
        out = sum(self.lat[ln] + pkt / self.bw[ln] for ln in route)
        ack = sum(self.lat[ln] + o.ack_bytes / self.bw[ln] for ln in back)
        return out + ack

    # -- messages ---------------------------------------------------------------------------

    def start_message(
        self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any
    ) -> QueuePair:
        g = self.graph
        route = g.route(src, dst)  # type: ignore[attr-defined]
        back = g.route(dst, src)  # type: ignore[attr-defined]
        self._fid += 1
        qp = QueuePair(self._fid, src, dst, nbytes, route, back, self.bw[route[0]])
        qp.on_arrival, qp.arg = on_arrival, arg
        qp.start_ns = qp.next_avail = self.queue.now
        qp.base_rtt_ns = self.max_rtt_ns or self.base_rtt(route, back)
        qp.win = self.window_bytes
        self.cc.start(qp)
        self.qps[qp.port].append(qp)
        self._active_qps.add(qp)
        self.active += 1
        if self._rto_on:
            self._arm_rto(qp)
        if not self._monitoring:
            self._monitoring = True
            self._sample(None)
        self.try_send(qp.port)
        return qp

    # -- ports ------------------------------------------------------------------------------

    def try_send(self, link: int) -> None:
        """Start the next packet on ``link`` if it is idle and has one to send."""
        if self.free_at[link] > self.queue.now:
            if not self.free_pending[link]:
                self.free_pending[link] = True
                self.queue.schedule_at(self.free_at[link], self._free, link)
            return
        queues, paused = self.queues[link], self.paused[link]
        for prio in range(PRIORITIES):
            q = queues[prio]
            if q and (prio == 0 or not paused[prio]):
                pkt = q.popleft()
                self.qbytes[link] -= pkt.size
                if pkt.in_link >= 0 and prio != 0:
                    self._leave_buffer(link, pkt)
                self._transmit(link, pkt)
                return
        if self.qps[link] and not paused[self.opts.data_priority]:
            data = self._next_qp_packet(link)
            if data is not None:
                self._transmit(link, data)

    def kick(self, qp: QueuePair) -> None:
        """A QP's rate or window changed: its NIC may send now or at another time."""
        if not qp.done:
            self.try_send(qp.port)

    def _next_qp_packet(self, link: int) -> Packet | None:
        qps = self.qps[link]
        n = len(qps)
        now = self.queue.now
        var_window = self.opts.var_window
        soonest = _INF
        start = self.rr[link] % n
        for i in range(n):
            qp = qps[(start + i) % n]
            if qp.snd_nxt >= qp.size or not qp.window_open(var_window):
                continue
            if qp.next_avail > now:
                soonest = min(soonest, qp.next_avail)
                continue
            self.rr[link] = (start + i + 1) % n
            return self._make_data(qp)
        if soonest < self.wake_at[link]:
            self.wake_at[link] = soonest
            self.queue.schedule_at(soonest, self._wake, link)
        return None

    def _wake(self, link: int) -> None:
        if self.wake_at[link] <= self.queue.now:
            self.wake_at[link] = _INF
        self.try_send(link)

    def _make_data(self, qp: QueuePair) -> Packet:
        o = self.opts
        payload = min(self.unit, qp.size - qp.snd_nxt)
        per_packet = o.header_bytes
        if self.cc.uses_int:
            per_packet += o.int_hop_bytes * len(qp.route)
        size = payload + per_packet * -(-payload // o.mtu_bytes)  # a cell keeps every header
        now = self.queue.now
        pkt = Packet(DATA, qp, qp.snd_nxt, payload, size, qp.route, o.data_priority, now)
        if self.cc.uses_int:
            pkt.ints = []
        if qp.snd_nxt < qp.sent_high:
            self.packets_resent += 1
        qp.snd_nxt += payload
        if qp.snd_nxt > qp.sent_high:
            qp.sent_high = qp.snd_nxt
        qp.last_pkt_bytes = size
        qp.next_avail = now + size / qp.rate
        self.packets_sent += 1
        return pkt

    def _transmit(self, link: int, pkt: Packet) -> None:
        size = pkt.size
        ser = size / self.bw[link]
        self.free_at[link] = self.queue.now + ser
        self.link_bytes[link] += size
        self.tx_bytes[link] += size
        self.hops += 1
        if not self.free_pending[link] and (self.qps[link] or any(self.queues[link])):
            self.free_pending[link] = True
            self.queue.schedule(ser, self._free, link)
        # a link delivers in order after a fixed latency: one pending event per link (the
        # head of its packets in flight) keeps the kernel's heap small
        flight = self.flight[link]
        at = self.queue.now + ser + self.lat[link]
        flight.append((at, pkt))
        if len(flight) == 1:
            self.queue.schedule_at(at, self._land, link)

    def _free(self, link: int) -> None:
        if self.free_at[link] > self.queue.now:  # the port started another packet since
            self.queue.schedule_at(self.free_at[link], self._free, link)  # still the one pending
            return
        self.free_pending[link] = False
        self.try_send(link)

    def _enqueue(self, link: int, pkt: Packet) -> None:
        self.queues[link][pkt.prio].append(pkt)
        q = self.qbytes[link] + pkt.size
        self.qbytes[link] = q
        if q > self.peak_queue_bytes[link]:
            self.peak_queue_bytes[link] = q
        self.try_send(link)

    # -- switching --------------------------------------------------------------------------

    def lose(self, link: int, packets: int = 1) -> None:
        """Fault injection: the next ``packets`` data packets that cross ``link`` are lost
        (counted as drops), e.g. to exercise go-back-N where PFC prevents every drop."""
        self._loss[link] = self._loss.get(link, 0) + packets

    def _land(self, link: int) -> None:
        flight = self.flight[link]
        pkt = flight.popleft()[1]
        if flight:
            self.queue.schedule_at(flight[0][0], self._land, link)
        self._arrive(pkt)

    def _arrive(self, pkt: Packet) -> None:
        link = pkt.route[pkt.hop]
        if self._loss and pkt.kind == DATA and self._loss.get(link):
            self._loss[link] -= 1
            self._drop()
            return
        if pkt.kind == PFC:
            self._pfc_frame(pkt)
            return
        if pkt.hop == len(pkt.route) - 1:
            self._deliver(pkt)
            return
        pkt.hop += 1
        out = pkt.route[pkt.hop]
        pkt.in_link = link
        prio = pkt.prio
        if prio != 0 and not self._admit(link, out, pkt):
            return
        self._enqueue(out, pkt)

    def _admit(self, in_link: int, out: int, pkt: Packet) -> bool:
        """Buffer admission at the device ``in_link`` enters (``switch-mmu.cc``)."""
        o = self.opts
        size, prio = pkt.size, pkt.prio
        dev = self.dst[in_link]
        if not o.pfc:
            if self.dev_used[dev] + size > self.buffer:
                self._drop()
                return False
            self.dev_used[dev] += size
            self.egress[out][prio] += size
            return True
        ing, hdrm = self.ing[in_link], self.hdrm[in_link]
        thresh = self._threshold(in_link)
        reserve = o.reserve_bytes
        shared = max(0, ing[prio] - reserve)
        if size + hdrm[prio] > self.headroom[in_link] and size + shared > thresh:
            self._drop()
            return False
        new = ing[prio] + size
        if new <= reserve:
            ing[prio] = new
        elif new - reserve > thresh:
            hdrm[prio] += size
        else:
            ing[prio] = new
            self.shared_used[dev] += min(size, new - reserve)
        self.egress[out][prio] += size
        if not self.xoff[in_link][prio] and (
            hdrm[prio] > 0 or max(0, ing[prio] - reserve) >= self._threshold(in_link)
        ):
            self.xoff[in_link][prio] = True
            self._send_pfc(in_link, prio, True)
        return True

    def _threshold(self, in_link: int) -> float:
        dev = self.dst[in_link]
        free = self.buffer - self.total_hdrm[dev] - self.total_rsrv[dev] - self.shared_used[dev]
        return max(0.0, free) / (1 << self.shift[in_link])

    def _leave_buffer(self, link: int, pkt: Packet) -> None:
        """``pkt`` leaves the queue of ``link`` at the device it was buffered in."""
        o = self.opts
        size, prio, in_link = pkt.size, pkt.prio, pkt.in_link
        self.egress[link][prio] -= size
        if not o.pfc:
            self.dev_used[self.dst[in_link]] -= size
        else:
            ing, hdrm = self.ing[in_link], self.hdrm[in_link]
            from_hdrm = min(hdrm[prio], size)
            reserve = o.reserve_bytes
            from_shared = min(size - from_hdrm, max(0, ing[prio] - reserve))
            hdrm[prio] -= from_hdrm
            ing[prio] -= size - from_hdrm
            self.shared_used[self.dst[in_link]] -= from_shared
            if self.xoff[in_link][prio] and hdrm[prio] == 0:
                shared = max(0, ing[prio] - reserve)
                if shared == 0 or shared + o.resume_offset_bytes <= self._threshold(in_link):
                    self.xoff[in_link][prio] = False
                    self._send_pfc(in_link, prio, False)
        if pkt.kind == DATA:
            if o.ecn:
                kmin, kmax, pmax = self._ecn[link]
                q = self.egress[link][prio]
                if q > kmax or (
                    q > kmin and self._rng.random() < pmax * (q - kmin) / (kmax - kmin)
                ):
                    if not pkt.ecn:
                        self.ecn_marks += 1
                    pkt.ecn = True
            if pkt.ints is not None:
                pkt.ints.append(
                    (self.queue.now, self.tx_bytes[link], self.qbytes[link], self.bw[link])
                )

    def _send_pfc(self, in_link: int, prio: int, pause: bool) -> None:
        back = self.rev[in_link]
        if back < 0:
            return
        self.pause_frames += 1
        frame = Packet(
            PFC,
            None,
            in_link * PRIORITIES + prio,
            1 if pause else 0,
            self.opts.pfc_frame_bytes,
            (back,),
            0,
        )
        self._enqueue(back, frame)

    def _pfc_frame(self, frame: Packet) -> None:
        """A pause or resume frame reaches the upstream end of the link it names."""
        link, prio = divmod(frame.seq, PRIORITIES)
        now = self.queue.now
        since = self.pause_since[link]
        if frame.payload:
            if not self.paused[link][prio]:
                self.paused[link][prio] = True
                since[prio] = now
        elif self.paused[link][prio]:
            self.paused[link][prio] = False
            self.pause_ns[link] += now - since[prio]
            since[prio] = -1.0
            self.try_send(link)

    def _drop(self) -> None:
        self.drops += 1
        if not self._rto_on:
            self._rto_on = True
            for qp in self._active_qps:
                self._arm_rto(qp)

    # -- hosts ------------------------------------------------------------------------------

    def _deliver(self, pkt: Packet) -> None:
        kind = pkt.kind
        qp: QueuePair = pkt.qp
        if kind == DATA:
            self._receive_data(qp, pkt)
        elif kind == CNP:
            if not qp.done:
                self.cc.on_cnp(qp)
        else:
            self._receive_ack(qp, pkt)

    def _receive_data(self, qp: QueuePair, pkt: Packet) -> None:
        o = self.opts
        now = self.queue.now
        if pkt.ecn:
            qp.ecn_pending = True
            if self.cc.uses_cnp and now - qp.last_cnp >= o.cnp_interval_us * 1e3:
                qp.last_cnp = now
                self.cnps += 1
                self._reply(CNP, qp, 0, None, 0.0, False)
        seq = pkt.seq
        if seq == qp.expected:
            qp.expected += pkt.payload
            if qp.expected >= qp.size and not qp.delivered:
                qp.delivered = True
                self.completions.append((qp.src, qp.dst, qp.size, qp.start_ns, now))
                assert qp.on_arrival is not None
                self.queue.schedule(0.0, qp.on_arrival, qp.arg)
            if qp.expected >= qp.milestone or qp.expected >= qp.size:
                qp.milestone = qp.expected + o.ack_interval_packets * self.unit
                self._reply(ACK, qp, qp.expected, pkt.ints, pkt.ts, qp.ecn_pending)
                qp.ecn_pending = False
        elif seq > qp.expected:
            if now >= qp.nack_at or qp.last_nack != qp.expected:
                qp.nack_at = now + o.nack_interval_us * 1e3
                qp.last_nack = qp.expected
                self._reply(NACK, qp, qp.expected, pkt.ints, pkt.ts, qp.ecn_pending)
                qp.ecn_pending = False
        else:  # a duplicate after go-back-N: say again how far we are
            self._reply(ACK, qp, qp.expected, pkt.ints, pkt.ts, False)

    def _reply(self, kind: int, qp: QueuePair, seq: int, ints: Any, ts: float, ecn: bool) -> None:
        o = self.opts
        size = o.ack_bytes
        if ints is not None:
            size += o.int_hop_bytes * len(ints)
        prio = 0 if kind == CNP or o.ack_high_priority else o.data_priority
        pkt = Packet(kind, qp, seq, 0, size, qp.ack_route, prio, ts)
        pkt.ecn = ecn
        pkt.ints = ints
        # the NIC serves its queues (ACKs, CNPs) before its QPs' data (RdmaEnqueueHighPrioQ)
        self._enqueue(pkt.route[0], pkt)

    def _receive_ack(self, qp: QueuePair, pkt: Packet) -> None:
        if qp.done:
            return
        if pkt.seq > qp.snd_una:
            qp.snd_una = pkt.seq
        if pkt.kind == NACK:
            qp.snd_nxt = qp.snd_una
        self.cc.on_ack(qp, pkt)
        if qp.snd_una >= qp.size:
            self._finish(qp)
        self.try_send(qp.port)

    def _finish(self, qp: QueuePair) -> None:
        qp.done = True
        qp.finish_ns = self.queue.now
        self.cc.finish(qp)
        self.qps[qp.port].remove(qp)
        self._active_qps.discard(qp)
        self.active -= 1

    def _arm_rto(self, qp: QueuePair) -> None:
        if not qp.rto_armed:
            qp.rto_armed = True
            qp.rto_una = qp.snd_una
            self.queue.schedule(self.opts.rto_us * 1e3, self._rto, qp)

    def _rto(self, qp: QueuePair) -> None:
        if qp.done:
            return
        if qp.snd_una == qp.rto_una and qp.snd_nxt > qp.snd_una:
            qp.snd_nxt = qp.snd_una  # go back to the first unacknowledged byte
            self.try_send(qp.port)
        qp.rto_una = qp.snd_una
        self.queue.schedule(self.opts.rto_us * 1e3, self._rto, qp)

    # -- monitor ----------------------------------------------------------------------------

    def _sample(self, _: Any) -> None:
        qb = self.qbytes
        self.samples_t.append(self.queue.now)
        self.samples_q.append([qb[ln] for ln in self._monitored])
        if self.active:
            self.queue.schedule(self.opts.monitor_interval_us * 1e3, self._sample, None)
        else:
            self._monitoring = False
