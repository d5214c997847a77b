"""Congestion control of a queue pair (DESIGN.md, network layer; the packet backend's
per-flow rate control): one small class per scheme behind :class:`CongestionControl`.

Each scheme follows the public HPCC ns-3 code base's ``rdma-hw.cc`` (the one the HOTI'22
study ran): the formulas are cited per method. Rates are B/ns (``Mb/s / 8000``), times ns.
The engine calls :meth:`start` when a QP is created, :meth:`on_ack` on every ACK or NACK,
:meth:`on_cnp` on every CNP and :meth:`finish` when the QP is fully acknowledged; a scheme
changes ``qp.rate`` (and calls ``engine.kick(qp)`` when a timer raised it).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainsim.network.packet.config import PacketOptions
    from trainsim.network.packet.engine import Packet, PacketEngine, QueuePair


def _mbps(x: float) -> float:
    return x / 8000.0  # Mb/s -> B/ns


class CongestionControl:
    """No rate control: QPs send at line rate and only PFC holds them back."""

    name = "none"
    uses_int = False  # data packets collect INT records (HPCC)
    uses_cnp = False  # the receiver sends CNPs for marked packets (DCQCN's NP)

    def __init__(self, opts: PacketOptions) -> None:
        self.opts = opts
        self.min_rate = _mbps(opts.min_rate_mbps)
        self.engine: PacketEngine | None = None

    def bind(self, engine: PacketEngine) -> None:
        self.engine = engine

    def start(self, qp: QueuePair) -> None:
        """A new QP starts at line rate."""

    def on_ack(self, qp: QueuePair, pkt: Packet) -> None:
        """An ACK or NACK (``pkt.ecn``: ECN echo, ``pkt.ints``: INT, ``pkt.ts``: send time)."""

    def on_cnp(self, qp: QueuePair) -> None:
        """A CNP for this QP."""

    def finish(self, qp: QueuePair) -> None:
        """The QP is done: its timers must do nothing more."""

    def change_rate(self, qp: QueuePair, new_rate: float) -> None:
        """``ChangeRate``: the pending packet's departure moves by the change of its
        transmission time (HPCC and TIMELY set rates through it)."""
        if qp.last_pkt_bytes:
            qp.next_avail += qp.last_pkt_bytes / new_rate - qp.last_pkt_bytes / qp.rate
        qp.rate = new_rate


class _DcqcnState:
    __slots__ = (
        "alpha",
        "target",
        "first",
        "anchor",
        "ticks",
        "alpha_flag",
        "dec_flag",
        "dec_anchor",
        "dec_pending",
        "stage",
        "timer",
    )

    def __init__(self, rate: float) -> None:
        self.alpha = 1.0
        self.target = rate
        self.first = True
        self.anchor = 0.0
        self.ticks = 0
        self.alpha_flag = False
        self.dec_flag = False
        self.dec_anchor = 0.0
        self.dec_pending = False
        self.stage = 0
        self.timer = 0  # version of the rate-increase timer


class Dcqcn(CongestionControl):
    """DCQCN, Mellanox's version (``rdma-hw.cc`` *Mlx; Zhu et al., SIGCOMM'15).

    RP: the first CNP sets alpha = 1; alpha then updates every ``alpha_resume_interval``:
    ``alpha = (1 - g) alpha + g`` if a CNP came in the period, else ``(1 - g) alpha``; every
    ``rate_decrease_interval`` after the first CNP, if a CNP came, ``target = rate`` (unless
    still in the first increase stage and not clamping) and ``rate = max(min, rate (1 -
    alpha / 2))``, and the increase timer restarts. Each ``rp_timer`` tick: fast recovery
    ``rate = (rate + target) / 2`` for the first ``fast_recovery_times`` ticks, then additive
    increase (``target += AI``), then hyper increase (``target += HAI``), with the same
    averaging. The periodic alpha and decrease timers are evaluated lazily (exactly: alpha
    decays geometrically between CNPs, and a decrease only acts after a CNP).
    """

    name = "dcqcn"
    uses_cnp = True

    def __init__(self, opts: PacketOptions) -> None:
        super().__init__(opts)
        self.g = opts.ewma_gain
        self.t_alpha = opts.dcqcn_alpha_resume_interval_us * 1e3
        self.t_dec = opts.dcqcn_rate_decrease_interval_us * 1e3
        self.t_rp = opts.dcqcn_rp_timer_us * 1e3
        self.rai = _mbps(opts.rate_ai_mbps)
        self.rhai = _mbps(opts.rate_hai_mbps)

    def start(self, qp: QueuePair) -> None:
        qp.cc = _DcqcnState(qp.rate)

    def _catch_up(self, st: _DcqcnState, now: float) -> None:
        periods = math.floor((now - st.anchor) / self.t_alpha + 1e-9)
        n = periods - st.ticks
        if n > 0:
            g = self.g
            st.alpha = (1 - g) * st.alpha + (g if st.alpha_flag else 0.0)
            st.alpha_flag = False
            if n > 1:
                st.alpha *= (1 - g) ** (n - 1)
            st.ticks = periods

    def on_cnp(self, qp: QueuePair) -> None:
        st: _DcqcnState = qp.cc
        engine = self.engine
        assert engine is not None
        now = engine.queue.now
        if st.first:
            st.first = False
            st.alpha, st.anchor, st.ticks, st.alpha_flag = 1.0, now, 0, False
            st.dec_flag = True
            st.dec_anchor = now + self.t_dec + 1.0  # 1 ns after the alpha update (rdma-hw.cc)
            st.target = qp.rate
            self._schedule_decrease(qp, st, now)
            return
        self._catch_up(st, now)
        st.alpha_flag = True
        st.dec_flag = True
        self._schedule_decrease(qp, st, now)

    def _schedule_decrease(self, qp: QueuePair, st: _DcqcnState, now: float) -> None:
        if st.dec_pending:
            return
        k = max(0, math.ceil((now - st.dec_anchor) / self.t_dec - 1e-9))
        at = st.dec_anchor + k * self.t_dec
        if at <= now and k == 0 and now > st.dec_anchor:
            at += self.t_dec
        st.dec_pending = True
        assert self.engine is not None
        self.engine.queue.schedule_at(max(at, now), self._decrease, qp)

    def _decrease(self, qp: QueuePair) -> None:
        st: _DcqcnState = qp.cc
        st.dec_pending = False
        if qp.done or not st.dec_flag:
            return
        engine = self.engine
        assert engine is not None
        self._catch_up(st, engine.queue.now)
        if self.opts.dcqcn_clamp_target_rate or st.stage != 0:
            st.target = qp.rate
        qp.rate = max(self.min_rate, qp.rate * (1 - st.alpha / 2))
        st.stage = 0
        st.dec_flag = False
        st.timer += 1
        engine.queue.schedule(self.t_rp, self._increase, (qp, st.timer))

    def _increase(self, arg: tuple[QueuePair, int]) -> None:
        qp, version = arg
        st: _DcqcnState = qp.cc
        if qp.done or version != st.timer:
            return
        engine = self.engine
        assert engine is not None
        engine.queue.schedule(self.t_rp, self._increase, arg)
        fr = self.opts.dcqcn_fast_recovery_times
        if st.stage > fr:
            st.target = min(qp.max_rate, st.target + self.rhai)
        elif st.stage == fr:
            st.target = min(qp.max_rate, st.target + self.rai)
        qp.rate = qp.rate / 2 + st.target / 2
        st.stage += 1
        engine.kick(qp)


class _DctcpState:
    __slots__ = ("alpha", "last_update_seq", "batch", "ecn_count", "cwr", "high_seq")

    def __init__(self) -> None:
        self.alpha = 1.0
        self.last_update_seq = 0
        self.batch = 1
        self.ecn_count = 0
        self.cwr = False
        self.high_seq = 0


class Dctcp(CongestionControl):
    """Rate-based DCTCP (``rdma-hw.cc`` HandleAckDctcp; Alizadeh et al., SIGCOMM'10).

    Once per window of data (an ACK beyond the sequence sent at the last update), alpha =
    ``(1 - g) alpha + g F`` with F the fraction of ECN-echoing ACKs; an ECN echo outside
    congestion-window-reduced state cuts ``rate *= 1 - alpha / 2`` (at most once per window);
    otherwise each new window adds ``dctcp_rate_ai``."""

    name = "dctcp"

    def __init__(self, opts: PacketOptions) -> None:
        super().__init__(opts)
        self.g = opts.ewma_gain
        self.rai = _mbps(opts.dctcp_rate_ai_mbps)

    def start(self, qp: QueuePair) -> None:
        qp.cc = _DctcpState()

    def on_ack(self, qp: QueuePair, pkt: Packet) -> None:
        st: _DctcpState = qp.cc
        mtu = self.opts.mtu_bytes * self.opts.cell_packets
        seq = pkt.seq
        st.ecn_count += pkt.ecn
        new_batch = False
        if seq > st.last_update_seq:
            new_batch = True
            if st.last_update_seq == 0:
                st.last_update_seq = qp.snd_nxt
                st.batch = qp.snd_nxt // mtu + 1
            else:
                frac = min(1.0, st.ecn_count / st.batch)
                st.alpha = (1 - self.g) * st.alpha + self.g * frac
                st.last_update_seq = qp.snd_nxt
                st.ecn_count = 0
                st.batch = (qp.snd_nxt - seq) // mtu + 1
        if st.cwr and seq > st.high_seq:
            st.cwr = False
        if pkt.ecn and not st.cwr:
            qp.rate = max(self.min_rate, qp.rate * (1 - st.alpha / 2))
            st.cwr = True
            st.high_seq = qp.snd_nxt
        if not st.cwr and new_batch:
            qp.rate = min(qp.max_rate, qp.rate + self.rai)


class _TimelyState:
    __slots__ = ("last_update_seq", "last_rtt", "rtt_diff", "cur_rate", "stage")

    def __init__(self, rate: float) -> None:
        self.last_update_seq = 0
        self.last_rtt = 0.0
        self.rtt_diff = 0.0
        self.cur_rate = rate
        self.stage = 0


class Timely(CongestionControl):
    """TIMELY (``rdma-hw.cc`` UpdateRateTimely; Mittal et al., SIGCOMM'15), once per window:
    with the RTT from the echoed send time and ``gradient = EWMA(RTT diff) / min RTT``: below
    T_low increase, above T_high ``rate *= 1 - beta (1 - T_high / RTT)``, else increase if the
    gradient is <= 0 and ``rate *= 1 - beta gradient`` if not. Increases add AI (HAI after 5
    increasing windows)."""

    name = "timely"

    def __init__(self, opts: PacketOptions) -> None:
        super().__init__(opts)
        self.rai = _mbps(opts.rate_ai_mbps)
        self.rhai = _mbps(opts.rate_hai_mbps)
        self.t_low = opts.timely_t_low_us * 1e3
        self.t_high = opts.timely_t_high_us * 1e3
        self.min_rtt = opts.timely_min_rtt_us * 1e3

    def start(self, qp: QueuePair) -> None:
        qp.cc = _TimelyState(qp.rate)

    def on_ack(self, qp: QueuePair, pkt: Packet) -> None:
        st: _TimelyState = qp.cc
        if pkt.seq <= st.last_update_seq:
            return  # the code base's fast reaction for TIMELY does nothing
        engine = self.engine
        assert engine is not None
        rtt = engine.queue.now - pkt.ts
        o = self.opts
        if st.last_update_seq != 0:
            new_diff = rtt - st.last_rtt
            diff = (1 - o.timely_alpha) * st.rtt_diff + o.timely_alpha * new_diff
            gradient = diff / self.min_rtt
            if rtt < self.t_low or (rtt <= self.t_high and gradient <= 0):
                step = self.rai if st.stage < 5 else self.rhai
                rate = min(qp.max_rate, st.cur_rate + step)
                st.stage += 1
            else:
                if rtt > self.t_high:
                    c = 1 - o.timely_beta * (1 - self.t_high / rtt)
                else:
                    c = max(0.0, 1 - o.timely_beta * gradient)
                rate = max(self.min_rate, st.cur_rate * c)
                st.stage = 0
            self.change_rate(qp, rate)
            st.cur_rate = rate
            st.rtt_diff = diff
        if qp.snd_nxt > st.last_update_seq:
            st.last_update_seq = qp.snd_nxt
            st.last_rtt = rtt


class _HpccState:
    __slots__ = ("last_update_seq", "hops", "u", "cur_rate", "stage")

    def __init__(self, rate: float) -> None:
        self.last_update_seq = 0
        self.hops: list[tuple[float, int, int, float]] = []
        self.u = 0.0
        self.cur_rate = rate
        self.stage = 0


class Hpcc(CongestionControl):
    """HPCC (``rdma-hw.cc`` UpdateRateHp, single-rate form; Li et al., SIGCOMM'19, Alg. 1).

    Per hop from two INT records: ``u = txRate / B + min(qlen, qlen') / (B x T)`` (T the base
    RTT, B the line rate; with the window W = line rate x T this is the code base's
    ``qlen x max_rate / B / W``); U = the largest, smoothed ``U = (U (T - tau) + u tau) / T``.
    ``rate = cur / (U / eta) + AI`` when U >= eta or after ``max_stage`` increases, else
    ``cur + AI``; ``cur`` moves once per RTT (an ACK beyond the sequence sent at the last
    update), every other ACK reacts from ``cur`` (fast reaction). The window scales with the
    rate (``var_window``)."""

    name = "hpcc"
    uses_int = True

    def __init__(self, opts: PacketOptions) -> None:
        super().__init__(opts)
        self.rai = _mbps(opts.rate_ai_mbps)

    def start(self, qp: QueuePair) -> None:
        qp.cc = _HpccState(qp.rate)

    def on_ack(self, qp: QueuePair, pkt: Packet) -> None:
        st: _HpccState = qp.cc
        full = pkt.seq > st.last_update_seq
        if not full and not self.opts.hpcc_fast_react:
            return
        ints = pkt.ints or []
        next_seq = qp.snd_nxt
        if st.last_update_seq == 0:
            st.last_update_seq = next_seq
            st.hops = list(ints)
            return
        if len(st.hops) != len(ints):
            st.hops = list(ints)
            return
        base_rtt = qp.base_rtt_ns
        win = qp.win or qp.max_rate * base_rtt
        big_u, dt = 0.0, 0.0
        for new, old in zip(ints, st.hops, strict=True):
            tau = new[0] - old[0]
            if tau <= 0:
                continue
            line = new[3]
            u = (new[1] - old[1]) / tau / line + min(new[2], old[2]) * qp.max_rate / line / win
            if u > big_u:
                big_u, dt = u, tau
        st.hops = list(ints)
        if dt > 0:
            dt = min(dt, base_rtt)
            st.u = (st.u * (base_rtt - dt) + big_u * dt) / base_rtt
            max_c = st.u / self.opts.hpcc_eta
            if max_c >= 1 or st.stage >= self.opts.hpcc_max_stage:
                rate, stage = st.cur_rate / max_c + self.rai if max_c > 0 else qp.max_rate, 0
            else:
                rate, stage = st.cur_rate + self.rai, st.stage + 1
            rate = min(qp.max_rate, max(self.min_rate, rate))
            self.change_rate(qp, rate)
            if full:
                st.cur_rate, st.stage = rate, stage
        if full and next_seq > st.last_update_seq:
            st.last_update_seq = next_seq


SCHEMES: dict[str, type[CongestionControl]] = {
    c.name: c for c in (CongestionControl, Dcqcn, Dctcp, Timely, Hpcc)
}
"""Scheme name (the ``cc`` option) -> its class."""


def make_cc(opts: PacketOptions) -> CongestionControl:
    return SCHEMES[opts.cc](opts)


__all__ = ["CongestionControl", "Dcqcn", "Dctcp", "Hpcc", "SCHEMES", "Timely", "make_cc"]
