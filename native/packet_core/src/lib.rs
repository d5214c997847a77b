//! Compiled core of trainsim's packet-level network backend (DESIGN.md, network layer).
//!
//! The same model as the pure-Python reference engine
//! (src/trainsim/network/packet/engine.py and cc.py): RoCE NICs pacing one queue pair per
//! message, strict-priority egress ports, shared-buffer switches with PFC (dynamic
//! threshold, headroom, reserve, resume offset), RED-like ECN, ACK / NACK / CNP packets,
//! go-back-N, and DCQCN / DCTCP / TIMELY / HPCC per QP. It runs its own event heap; the
//! Python side steps it to the shared kernel's time and gets back the messages delivered.
//! Every parameter and per-link array comes from the Python engine's set-up, so both
//! engines share one configuration. Times in ns, sizes in bytes, rates in B/ns.
//! C ABI only (no crates): loaded with ctypes.

use std::collections::VecDeque;
use std::rc::Rc;

const PRIO: usize = 8;
const DATA: u8 = 0;
const ACK: u8 = 1;
const NACK: u8 = 2;
const CNP: u8 = 3;
const PFC: u8 = 4;
const MAXHOP: usize = 8;

#[allow(dead_code)]
const CC_NONE: i32 = 0;
const CC_DCQCN: i32 = 1;
const CC_DCTCP: i32 = 2;
const CC_TIMELY: i32 = 3;
const CC_HPCC: i32 = 4;

const EV_FREE: u8 = 0;
const EV_ARRIVE: u8 = 1;
const EV_WAKE: u8 = 2;
const EV_RTO: u8 = 3;
const EV_SAMPLE: u8 = 4;
const EV_DEC: u8 = 5;
const EV_INC: u8 = 6;

#[derive(Clone, Copy, Default)]
struct IntRec {
    t: f64,
    tx: f64,
    q: f64,
    bw: f64,
}

/// A packet: 48 bytes, so a packet landing after a link's flight touches one cache line (the
/// link it crossed comes with the landing, not from the record).
#[derive(Clone, Copy)]
#[repr(C)]
struct Pkt {
    seq: u64,
    ts: f64,
    qp: u32,
    in_link: i32,
    roff: u32, // its route: routes[roff .. roff + rlen]
    payload: u32,
    size: u32,
    rlen: u16,
    hop: u16,
    kind: u8,
    prio: u8,
    ecn: bool,
    nints: u8,
    has_ints: bool,
}

/// An event: 24 bytes. ``key`` is the scheduling sequence number shifted left 3 bits with the
/// kind in the low bits (sequence numbers are unique, so ordering on the key is ordering on
/// the sequence: first scheduled, first run among equal times).
#[derive(Clone, Copy)]
struct Ev {
    t: f64,
    key: u64,
    a: u32,
    b: u32,
}
impl Ev {
    fn kind(&self) -> u8 {
        (self.key & 7) as u8
    }
}

/// The event queue: a 4-ary min-heap on (time, key). Half the depth of a binary heap, and a
/// node's children are adjacent (96 bytes), so a pop reads fewer cache lines. The order is
/// the total order of ``Ev`` (keys are unique), so any correct heap pops the same sequence.
///
/// Events are taken lazily: ``take`` hands out the top but leaves it in place, and the first
/// event scheduled while it runs (nearly every event schedules one: a port's next free time,
/// a link's next landing) takes its slot and sifts down from the root: one sift per event
/// instead of two (the last leaf sifting down after a pop, the new event sifting up after a
/// push). ``settle`` removes the top if nothing took its place. On 128 NPUs the new event is
/// usually about the latest (the ports run in lock step, a packet time apart), so it goes
/// down 3.7 of the ~4.2 levels of a 340-event heap. Comparisons are branch-free: a time is
/// never negative, so its bits order as the number does, and (time bits, key) compares as a
/// u128.
#[derive(Default)]
struct Heap {
    v: Vec<Ev>,
    taken: bool, // v[0] is the event being run, free to overwrite
}

impl Heap {
    #[inline(always)]
    fn rank(e: &Ev) -> u128 {
        ((e.t.to_bits() as u128) << 64) | e.key as u128
    }

    #[inline(always)]
    fn before(a: &Ev, b: &Ev) -> bool {
        Self::rank(a) < Self::rank(b)
    }

    /// The earliest of ``v[first..]``'s (at most 4) children.
    #[inline(always)]
    fn least_child(v: &[Ev], first: usize) -> usize {
        let n = v.len();
        if first + 3 < n {
            let a = first + Self::before(&v[first + 1], &v[first]) as usize;
            let b = first + 2 + Self::before(&v[first + 3], &v[first + 2]) as usize;
            if Self::before(&v[b], &v[a]) {
                b
            } else {
                a
            }
        } else {
            let mut best = first;
            for c in first + 1..n {
                if Self::before(&v[c], &v[best]) {
                    best = c;
                }
            }
            best
        }
    }

    /// Place ``ev`` in the hole at ``i``, moving it down past earlier children.
    #[inline(always)]
    fn sift_down(&mut self, mut i: usize, ev: Ev) {
        let v = &mut self.v[..];
        let n = v.len();
        let r = Self::rank(&ev);
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let best = Self::least_child(v, first);
            if Self::rank(&v[best]) < r {
                v[i] = v[best];
                i = best;
            } else {
                break;
            }
        }
        v[i] = ev;
    }

    #[inline]
    fn push(&mut self, ev: Ev) {
        debug_assert!(ev.t >= 0.0);
        if self.taken {
            self.taken = false;
            self.sift_down(0, ev);
            return;
        }
        let mut i = self.v.len();
        self.v.push(ev);
        let v = &mut self.v[..];
        let r = Self::rank(&ev);
        while i > 0 {
            let parent = (i - 1) / 4;
            if r < Self::rank(&v[parent]) {
                v[i] = v[parent];
                i = parent;
            } else {
                break;
            }
        }
        v[i] = ev;
    }

    #[inline]
    fn peek(&self) -> Option<&Ev> {
        debug_assert!(!self.taken);
        self.v.first()
    }

    /// The top event, left in place until ``settle`` (or a ``push`` overwrites it).
    #[inline]
    fn take(&mut self) -> Ev {
        debug_assert!(!self.taken && !self.v.is_empty());
        self.taken = true;
        self.v[0]
    }

    /// The event that runs after the taken one unless it schedules an earlier one.
    #[inline]
    fn next_after_taken(&self) -> Option<&Ev> {
        if self.v.len() < 2 {
            None
        } else {
            Some(&self.v[Self::least_child(&self.v, 1)])
        }
    }

    #[inline]
    fn settle(&mut self) {
        if self.taken {
            self.taken = false;
            let last = self.v.pop().unwrap();
            if !self.v.is_empty() {
                self.sift_down(0, last);
            }
        }
    }
}

/// A queue pair. The fields a port's scheduler reads for every QP it passes over
/// (``next_qp_packet``, ``window_open``, ``make_data``) fill its first cache line.
#[derive(Default)]
#[repr(C, align(64))]
struct Qp {
    snd_nxt: u64,
    snd_una: u64,
    size: u64,
    rate: f64,
    max_rate: f64,
    win: f64,
    next_avail: f64,
    roff: u32,
    rlen: u32,
    // the rest
    sent_high: u64,
    key: u64,
    aoff: u32,
    alen: u32,
    port: u32,
    base_rtt: f64,
    last_pkt_bytes: u64,
    done: bool,
    expected: u64,
    milestone: u64,
    nack_at: f64,
    last_nack: i64,
    last_cnp: f64,
    ecn_pending: bool,
    delivered: bool,
    rto_una: i64,
    rto_armed: bool,
    // DCQCN
    d_alpha: f64,
    d_target: f64,
    d_first: bool,
    d_anchor: f64,
    d_ticks: i64,
    d_alpha_flag: bool,
    d_dec_flag: bool,
    d_dec_anchor: f64,
    d_dec_pending: bool,
    d_stage: i64,
    d_timer: u32,
    // DCTCP
    t_alpha: f64,
    t_last_update: u64,
    t_batch: u64,
    t_ecn_count: u64,
    t_cwr: bool,
    t_high_seq: u64,
    // TIMELY
    m_last_update: u64,
    m_last_rtt: f64,
    m_rtt_diff: f64,
    m_cur_rate: f64,
    m_stage: i64,
    // HPCC
    h_last_update: u64,
    h_nhops: usize,
    h_u: f64,
    h_cur_rate: f64,
    h_stage: i64,
}

/// A link's sending end: what a send, a landing and an enqueue read and write, in one cache
/// line (they had been eleven arrays, a line each).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Port {
    bw: f64,  // B/ns
    lat: f64, // ns
    free_at: f64,
    wake_at: f64,
    tx_bytes: f64, // bytes sent: the link's bytes carried, and HPCC's INT tx counter
    qbytes: i64,
    peak: i64,
    rr: u32,      // the QP scheduler's round-robin position
    nonempty: u8, // bit p: queue p of the port holds packets
    free_pending: bool,
}

/// Parameters, in the order of ``native.py``'s ``PARAMS``.
#[derive(Default, Clone, Copy)]
struct Params {
    cc: i32,
    mtu: u64,
    header: u64,
    ack_bytes: u64,
    int_hop: u64,
    pfc_frame: u64,
    unit: u64,
    data_prio: usize,
    ack_high: bool,
    pfc: bool,
    buffer: f64,
    reserve: i64,
    resume_offset: f64,
    ecn: bool,
    seed: u64,
    ack_interval: u64,
    nack_interval: f64,
    rto: f64,
    var_window: bool,
    min_rate: f64,
    rai: f64,
    rhai: f64,
    g: f64,
    t_alpha: f64,
    t_dec: f64,
    t_rp: f64,
    fast_recovery: i64,
    clamp: bool,
    cnp_interval: f64,
    dctcp_rai: f64,
    tm_alpha: f64,
    tm_beta: f64,
    tm_low: f64,
    tm_high: f64,
    tm_min_rtt: f64,
    eta: f64,
    max_stage: i64,
    fast_react: bool,
    monitor: f64,
}

pub struct Engine {
    p: Rc<Params>,
    now: f64,
    seq: u64,
    heap: Heap,
    inc: VecDeque<Ev>, // DCQCN's increase timers, in the order they fall due
    // links
    ports: Vec<Port>,
    dst: Vec<u32>,
    rev: Vec<i32>,
    headroom: Vec<f64>,
    shift: Vec<f64>, // 2**shift
    kmin: Vec<f64>,
    kmax: Vec<f64>,
    pmax: Vec<f64>,
    queues: Vec<[VecDeque<u32>; PRIO]>,
    flight: Vec<VecDeque<(f64, u32)>>,
    egress: Vec<[i64; PRIO]>,
    paused: Vec<[bool; PRIO]>,
    qps_at: Vec<Vec<u32>>,
    pause_ns: Vec<f64>,
    pause_since: Vec<[f64; PRIO]>,
    // devices
    total_hdrm: Vec<f64>,
    total_rsrv: Vec<f64>,
    shared_used: Vec<f64>,
    dev_used: Vec<i64>,
    ing: Vec<[i64; PRIO]>,
    hdrm: Vec<[i64; PRIO]>,
    xoff: Vec<[bool; PRIO]>,
    // packets and QPs
    pkts: Vec<Pkt>,
    ints: Vec<[IntRec; MAXHOP]>, // HPCC's INT records, by packet id
    hp_hops: Vec<[IntRec; MAXHOP]>, // HPCC's last INT records, by QP
    routes: Vec<u32>,
    free_pkts: Vec<u32>,
    qps: Vec<Qp>,
    active: i64,
    active_list: Vec<u32>,
    rto_on: bool,
    rng: u64,
    loss: Vec<i64>,
    any_loss: bool,
    monitoring: bool,
    monitored: Vec<u32>,
    samples_t: Vec<f64>,
    samples_q: Vec<i64>,
    delivered: Vec<u64>,
    // counters
    pause_frames: u64,
    drops: u64,
    packets_sent: u64,
    packets_resent: u64,
    hops: u64,
    ecn_marks: u64,
    cnps: u64,
    events: u64,
}

impl Engine {
    fn schedule_at(&mut self, t: f64, kind: u8, a: u32, b: u32) {
        self.seq += 1;
        self.heap.push(Ev {
            t,
            key: (self.seq << 3) | kind as u64,
            a,
            b,
        });
    }

    /// DCQCN's rate-increase timer of QP ``qi``, version ``version``, due ``t_rp`` from now.
    /// Every such timer is due a fixed delay after it is set, so they fall due in the order
    /// they were set: they wait in a FIFO (``inc``) with the key they would have had in the
    /// heap, which holds only the first live one. A timer is stale once its QP is done or
    /// has restarted it (a newer version); the QP only moves further from it, so stale ones
    /// are dropped when they reach the FIFO's head (each counted as the event it would have
    /// been: a stale timer does nothing when it runs). Each rate decrease restarts the timer,
    /// so stale ones had filled the heap (7,500 events on average and up to 17,000, nearly all
    /// stale, in a 128-NPU 8 MiB all-reduce; 340 on average without them).
    fn schedule_inc(&mut self, qi: usize, version: u32) {
        self.seq += 1;
        let ev = Ev {
            t: self.now + self.p.t_rp,
            key: (self.seq << 3) | EV_INC as u64,
            a: qi as u32,
            b: version,
        };
        self.inc.push_back(ev);
        if self.inc.len() == 1 {
            self.heap.push(ev);
        }
    }

    /// The increase timer at the FIFO's head has come due: the next live one enters the heap.
    fn pop_inc(&mut self) {
        self.inc.pop_front();
        while let Some(&ev) = self.inc.front() {
            let q = &self.qps[ev.a as usize];
            if q.done || ev.b != q.d_timer {
                self.inc.pop_front();
                self.events += 1;
            } else {
                self.heap.push(ev);
                break;
            }
        }
    }

    fn rand(&mut self) -> f64 {
        self.rng = self.rng.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        ((z ^ (z >> 31)) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    fn new_pkt(&mut self, pkt: Pkt) -> u32 {
        if let Some(i) = self.free_pkts.pop() {
            self.pkts[i as usize] = pkt;
            i
        } else {
            self.pkts.push(pkt);
            if self.p.cc == CC_HPCC {
                self.ints.push([IntRec::default(); MAXHOP]);
            }
            (self.pkts.len() - 1) as u32
        }
    }

    fn hop_link(&self, id: u32) -> usize {
        let p = &self.pkts[id as usize];
        self.routes[(p.roff + p.hop as u32) as usize] as usize
    }

    // -- ports ------------------------------------------------------------------------

    fn try_send(&mut self, link: usize) {
        if self.ports[link].free_at > self.now {
            if !self.ports[link].free_pending {
                self.ports[link].free_pending = true;
                let t = self.ports[link].free_at;
                self.schedule_at(t, EV_FREE, link as u32, 0);
            }
            return;
        }
        let mut mask = self.ports[link].nonempty;
        while mask != 0 {
            let prio = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if prio == 0 || !self.paused[link][prio] {
                let id = self.queues[link][prio].pop_front().unwrap();
                match self.queues[link][prio].front() {
                    // the next packet out of this queue goes when this one is on the wire:
                    // fetch its record now (it has waited long enough to be out of cache)
                    Some(&next) => prefetch(self.pkts.as_ptr().wrapping_add(next as usize)),
                    None => self.ports[link].nonempty &= !(1u8 << prio),
                }
                let (size, in_link) = {
                    let p = &self.pkts[id as usize];
                    (p.size, p.in_link)
                };
                self.ports[link].qbytes -= size as i64;
                if in_link >= 0 && prio != 0 {
                    self.leave_buffer(link, id);
                }
                self.transmit(link, id);
                return;
            }
        }
        if !self.qps_at[link].is_empty() && !self.paused[link][self.p.data_prio] {
            if let Some(id) = self.next_qp_packet(link) {
                self.transmit(link, id);
            }
        }
    }

    fn window_open(&self, q: &Qp) -> bool {
        if q.win == 0.0 {
            return true;
        }
        let win = if self.p.var_window {
            q.win * q.rate / q.max_rate
        } else {
            q.win
        };
        ((q.snd_nxt - q.snd_una) as f64) < win
    }

    fn next_qp_packet(&mut self, link: usize) -> Option<u32> {
        let n = self.qps_at[link].len();
        let now = self.now;
        let mut soonest = f64::INFINITY;
        let start = self.ports[link].rr as usize % n;
        for i in 0..n {
            let qi = self.qps_at[link][(start + i) % n] as usize;
            let q = &self.qps[qi];
            if q.snd_nxt >= q.size || !self.window_open(q) {
                continue;
            }
            if q.next_avail > now {
                if q.next_avail < soonest {
                    soonest = q.next_avail;
                }
                continue;
            }
            self.ports[link].rr = ((start + i + 1) % n) as u32;
            return Some(self.make_data(qi));
        }
        if soonest < self.ports[link].wake_at {
            self.ports[link].wake_at = soonest;
            self.schedule_at(soonest, EV_WAKE, link as u32, 0);
        }
        None
    }

    fn make_data(&mut self, qi: usize) -> u32 {
        let p = Rc::clone(&self.p);
        let now = self.now;
        let q = &mut self.qps[qi];
        let payload = p.unit.min(q.size - q.snd_nxt);
        let (q_roff, q_rlen) = (q.roff, q.rlen);
        let mut per_packet = p.header;
        let uses_int = p.cc == CC_HPCC;
        if uses_int {
            per_packet += p.int_hop * q.rlen as u64;
        }
        let size = payload + per_packet * payload.div_ceil(p.mtu);
        let seq = q.snd_nxt;
        let resent = q.snd_nxt < q.sent_high;
        q.snd_nxt += payload;
        if q.snd_nxt > q.sent_high {
            q.sent_high = q.snd_nxt;
        }
        q.last_pkt_bytes = size;
        q.next_avail = now + size as f64 / q.rate;
        if resent {
            self.packets_resent += 1;
        }
        self.packets_sent += 1;
        self.new_pkt(Pkt {
            kind: DATA,
            prio: p.data_prio as u8,
            ecn: false,
            hop: 0,
            nints: 0,
            has_ints: uses_int,
            qp: qi as u32,
            seq,
            payload: payload as u32,
            size: size as u32,
            in_link: -1,
            ts: now,
            roff: q_roff,
            rlen: q_rlen as u16,
        })
    }

    fn transmit(&mut self, link: usize, id: u32) {
        let size = self.pkts[id as usize].size;
        let ser = size as f64 / self.ports[link].bw;
        let now = self.now;
        self.ports[link].free_at = now + ser;
        self.ports[link].tx_bytes += size as f64;
        self.hops += 1;
        if !self.ports[link].free_pending
            && (!self.qps_at[link].is_empty() || self.ports[link].nonempty != 0)
        {
            self.ports[link].free_pending = true;
            self.schedule_at(now + ser, EV_FREE, link as u32, 0);
        }
        // a link delivers in order after a fixed latency: one pending event per link
        let t = now + ser + self.ports[link].lat;
        self.flight[link].push_back((t, id));
        if self.flight[link].len() == 1 {
            self.schedule_at(t, EV_ARRIVE, link as u32, id);
        }
    }

    fn land(&mut self, link: usize) {
        let (_, id) = self.flight[link].pop_front().unwrap();
        if let Some(&(t, next)) = self.flight[link].front() {
            self.schedule_at(t, EV_ARRIVE, link as u32, next);
            // it lands about a packet time from now, a few hundred events on: fetch its
            // record now, into the cache levels it should still be in by then
            prefetch(self.pkts.as_ptr().wrapping_add(next as usize));
        }
        self.arrive(link, id);
    }

    fn enqueue(&mut self, link: usize, id: u32) {
        let (prio, size) = {
            let p = &self.pkts[id as usize];
            (p.prio as usize, p.size as i64)
        };
        self.queues[link][prio].push_back(id);
        self.ports[link].nonempty |= 1u8 << prio;
        let q = self.ports[link].qbytes + size;
        self.ports[link].qbytes = q;
        if q > self.ports[link].peak {
            self.ports[link].peak = q;
        }
        self.try_send(link);
    }

    // -- switching --------------------------------------------------------------------

    fn drop_pkt(&mut self, id: u32) {
        self.free_pkts.push(id);
        self.drops += 1;
        if !self.rto_on {
            self.rto_on = true;
            let list = self.active_list.clone();
            for qi in list {
                if !self.qps[qi as usize].done {
                    self.arm_rto(qi as usize);
                }
            }
        }
    }

    fn arrive(&mut self, link: usize, id: u32) {
        let (len, kind) = {
            let p = &self.pkts[id as usize];
            (p.rlen as usize, p.kind)
        };
        if self.any_loss && kind == DATA && self.loss[link] > 0 {
            self.loss[link] -= 1;
            self.drop_pkt(id);
            return;
        }
        if kind == PFC {
            self.pfc_frame(id);
            return;
        }
        let hop = self.pkts[id as usize].hop as usize;
        if hop == len - 1 {
            self.deliver(id);
            return;
        }
        self.pkts[id as usize].hop += 1;
        self.pkts[id as usize].in_link = link as i32;
        let out = self.hop_link(id);
        let prio = self.pkts[id as usize].prio;
        if prio != 0 && !self.admit(link, out as usize, id) {
            return;
        }
        self.enqueue(out as usize, id);
    }

    fn threshold(&self, in_link: usize) -> f64 {
        let dev = self.dst[in_link] as usize;
        let free =
            self.p.buffer - self.total_hdrm[dev] - self.total_rsrv[dev] - self.shared_used[dev];
        free.max(0.0) / self.shift[in_link]
    }

    fn admit(&mut self, in_link: usize, out: usize, id: u32) -> bool {
        let (size, prio) = {
            let p = &self.pkts[id as usize];
            (p.size as i64, p.prio as usize)
        };
        let dev = self.dst[in_link] as usize;
        if !self.p.pfc {
            if (self.dev_used[dev] + size) as f64 > self.p.buffer {
                self.drop_pkt(id);
                return false;
            }
            self.dev_used[dev] += size;
            self.egress[out][prio] += size;
            return true;
        }
        let reserve = self.p.reserve;
        let thresh = self.threshold(in_link);
        let shared = (self.ing[in_link][prio] - reserve).max(0);
        if (size + self.hdrm[in_link][prio]) as f64 > self.headroom[in_link]
            && (size + shared) as f64 > thresh
        {
            self.drop_pkt(id);
            return false;
        }
        let new = self.ing[in_link][prio] + size;
        if new <= reserve {
            self.ing[in_link][prio] = new;
        } else if (new - reserve) as f64 > thresh {
            self.hdrm[in_link][prio] += size;
        } else {
            self.ing[in_link][prio] = new;
            self.shared_used[dev] += size.min(new - reserve) as f64;
        }
        self.egress[out][prio] += size;
        if !self.xoff[in_link][prio] {
            let shared = (self.ing[in_link][prio] - reserve).max(0);
            if self.hdrm[in_link][prio] > 0 || shared as f64 >= self.threshold(in_link) {
                self.xoff[in_link][prio] = true;
                self.send_pfc(in_link, prio, true);
            }
        }
        true
    }

    fn leave_buffer(&mut self, link: usize, id: u32) {
        let (size, prio, in_link, kind) = {
            let p = &self.pkts[id as usize];
            (p.size as i64, p.prio as usize, p.in_link as usize, p.kind)
        };
        self.egress[link][prio] -= size;
        if !self.p.pfc {
            self.dev_used[self.dst[in_link] as usize] -= size;
        } else {
            let reserve = self.p.reserve;
            let from_hdrm = self.hdrm[in_link][prio].min(size);
            let from_shared = (size - from_hdrm).min((self.ing[in_link][prio] - reserve).max(0));
            self.hdrm[in_link][prio] -= from_hdrm;
            self.ing[in_link][prio] -= size - from_hdrm;
            self.shared_used[self.dst[in_link] as usize] -= from_shared as f64;
            if self.xoff[in_link][prio] && self.hdrm[in_link][prio] == 0 {
                let shared = (self.ing[in_link][prio] - reserve).max(0);
                if shared == 0 || shared as f64 + self.p.resume_offset <= self.threshold(in_link) {
                    self.xoff[in_link][prio] = false;
                    self.send_pfc(in_link, prio, false);
                }
            }
        }
        if kind == DATA {
            if self.p.ecn {
                let (kmin, kmax, pmax) = (self.kmin[link], self.kmax[link], self.pmax[link]);
                let q = self.egress[link][prio] as f64;
                let mark =
                    q > kmax || (q > kmin && self.rand() < pmax * (q - kmin) / (kmax - kmin));
                if mark {
                    if !self.pkts[id as usize].ecn {
                        self.ecn_marks += 1;
                    }
                    self.pkts[id as usize].ecn = true;
                }
            }
            if self.pkts[id as usize].has_ints {
                let rec = IntRec {
                    t: self.now,
                    tx: self.ports[link].tx_bytes,
                    q: self.ports[link].qbytes as f64,
                    bw: self.ports[link].bw,
                };
                let p = &mut self.pkts[id as usize];
                let n = p.nints as usize;
                if n < MAXHOP {
                    p.nints += 1;
                    self.ints[id as usize][n] = rec;
                }
            }
        }
    }

    fn send_pfc(&mut self, in_link: usize, prio: usize, pause: bool) {
        let back = self.rev[in_link];
        if back < 0 {
            return;
        }
        self.pause_frames += 1;
        let id = self.new_pkt(Pkt {
            kind: PFC,
            prio: 0,
            ecn: false,
            hop: 0,
            nints: 0,
            has_ints: false,
            qp: back as u32,
            seq: (in_link * PRIO + prio) as u64,
            payload: pause as u32,
            size: self.p.pfc_frame as u32,
            in_link: -1,
            ts: 0.0,
            roff: 0,
            rlen: 1,
        });
        self.enqueue(back as usize, id);
    }

    fn pfc_frame(&mut self, id: u32) {
        let (seq, pause) = {
            let p = &self.pkts[id as usize];
            (p.seq as usize, p.payload != 0)
        };
        self.free_pkts.push(id);
        let (link, prio) = (seq / PRIO, seq % PRIO);
        if pause {
            if !self.paused[link][prio] {
                self.paused[link][prio] = true;
                self.pause_since[link][prio] = self.now;
            }
        } else if self.paused[link][prio] {
            self.paused[link][prio] = false;
            self.pause_ns[link] += self.now - self.pause_since[link][prio];
            self.pause_since[link][prio] = -1.0;
            self.try_send(link);
        }
    }

    // -- hosts ------------------------------------------------------------------------

    fn deliver(&mut self, id: u32) {
        let pkt = self.pkts[id as usize];
        let qi = pkt.qp as usize;
        match pkt.kind {
            DATA => self.receive_data(qi, &pkt, id),
            CNP => {
                if !self.qps[qi].done && self.p.cc == CC_DCQCN {
                    self.dcqcn_cnp(qi);
                }
            }
            _ => self.receive_ack(qi, &pkt, id),
        }
        self.free_pkts.push(id);
    }

    fn receive_data(&mut self, qi: usize, pkt: &Pkt, id: u32) {
        let p = Rc::clone(&self.p);
        let now = self.now;
        if pkt.ecn {
            self.qps[qi].ecn_pending = true;
            if p.cc == CC_DCQCN && now - self.qps[qi].last_cnp >= p.cnp_interval {
                self.qps[qi].last_cnp = now;
                self.cnps += 1;
                self.reply(CNP, qi, 0, None, 0.0, false);
            }
        }
        let seq = pkt.seq;
        let expected = self.qps[qi].expected;
        let ints = if pkt.has_ints { Some((id, pkt.nints)) } else { None };
        if seq == expected {
            let q = &mut self.qps[qi];
            q.expected += pkt.payload as u64;
            if q.expected >= q.size && !q.delivered {
                q.delivered = true;
                self.delivered.push(q.key);
            }
            let q = &self.qps[qi];
            if q.expected >= q.milestone || q.expected >= q.size {
                let e = q.expected;
                let ecn = q.ecn_pending;
                let q = &mut self.qps[qi];
                q.milestone = e + p.ack_interval * p.unit;
                q.ecn_pending = false;
                self.reply(ACK, qi, e, ints, pkt.ts, ecn);
            }
        } else if seq > expected {
            let q = &self.qps[qi];
            if now >= q.nack_at || q.last_nack != expected as i64 {
                let ecn = q.ecn_pending;
                let q = &mut self.qps[qi];
                q.nack_at = now + p.nack_interval;
                q.last_nack = expected as i64;
                q.ecn_pending = false;
                self.reply(NACK, qi, expected, ints, pkt.ts, ecn);
            }
        } else {
            self.reply(ACK, qi, expected, ints, pkt.ts, false);
        }
    }

    fn reply(&mut self, kind: u8, qi: usize, seq: u64, ints: Option<(u32, u8)>, ts: f64, ecn: bool) {
        let p = Rc::clone(&self.p);
        let mut size = p.ack_bytes;
        let mut pkt = Pkt {
            kind,
            prio: if kind == CNP || p.ack_high {
                0
            } else {
                p.data_prio as u8
            },
            ecn,
            hop: 0,
            nints: 0,
            has_ints: false,
            qp: qi as u32,
            seq,
            payload: 0,
            size: 0,
            in_link: -1,
            ts,
            roff: self.qps[qi].aoff,
            rlen: self.qps[qi].alen as u16,
        };
        if let Some((_, n)) = ints {
            pkt.has_ints = true;
            pkt.nints = n;
            size += p.int_hop * n as u64;
        }
        pkt.size = size as u32;
        let first = self.routes[self.qps[qi].aoff as usize] as usize;
        let id = self.new_pkt(pkt);
        if let Some((src, _)) = ints {
            self.ints[id as usize] = self.ints[src as usize];
        }
        self.enqueue(first, id);
    }

    fn receive_ack(&mut self, qi: usize, pkt: &Pkt, id: u32) {
        if self.qps[qi].done {
            return;
        }
        {
            let q = &mut self.qps[qi];
            if pkt.seq > q.snd_una {
                q.snd_una = pkt.seq;
            }
            if pkt.kind == NACK {
                q.snd_nxt = q.snd_una;
            }
        }
        match self.p.cc {
            CC_DCTCP => self.dctcp_ack(qi, pkt),
            CC_TIMELY => self.timely_ack(qi, pkt),
            CC_HPCC => self.hpcc_ack(qi, pkt, id),
            _ => {}
        }
        let port = self.qps[qi].port as usize;
        if self.qps[qi].snd_una >= self.qps[qi].size {
            let q = &mut self.qps[qi];
            q.done = true;
            let pos = self.qps_at[port]
                .iter()
                .position(|&x| x as usize == qi)
                .unwrap();
            self.qps_at[port].remove(pos);
            self.active -= 1;
        }
        self.try_send(port);
    }

    fn arm_rto(&mut self, qi: usize) {
        let q = &mut self.qps[qi];
        if !q.rto_armed {
            q.rto_armed = true;
            q.rto_una = q.snd_una as i64;
            let t = self.now + self.p.rto;
            self.schedule_at(t, EV_RTO, qi as u32, 0);
        }
    }

    fn rto(&mut self, qi: usize) {
        if self.qps[qi].done {
            return;
        }
        let q = &mut self.qps[qi];
        let mut kick = false;
        if q.snd_una as i64 == q.rto_una && q.snd_nxt > q.snd_una {
            q.snd_nxt = q.snd_una;
            kick = true;
        }
        q.rto_una = q.snd_una as i64;
        let port = q.port as usize;
        if kick {
            self.try_send(port);
        }
        let t = self.now + self.p.rto;
        self.schedule_at(t, EV_RTO, qi as u32, 0);
    }

    fn sample(&mut self) {
        self.samples_t.push(self.now);
        for i in 0..self.monitored.len() {
            let l = self.monitored[i] as usize;
            self.samples_q.push(self.ports[l].qbytes);
        }
        if self.active > 0 {
            let t = self.now + self.p.monitor;
            self.schedule_at(t, EV_SAMPLE, 0, 0);
        } else {
            self.monitoring = false;
        }
    }

    fn change_rate(&mut self, qi: usize, new_rate: f64) {
        let q = &mut self.qps[qi];
        if q.last_pkt_bytes > 0 {
            let b = q.last_pkt_bytes as f64;
            q.next_avail += b / new_rate - b / q.rate;
        }
        q.rate = new_rate;
    }

    fn kick(&mut self, qi: usize) {
        if !self.qps[qi].done {
            let port = self.qps[qi].port as usize;
            self.try_send(port);
        }
    }

    // -- DCQCN (cc.py Dcqcn) ----------------------------------------------------------

    fn dcqcn_catch_up(&mut self, qi: usize) {
        let (t_alpha, g, now) = (self.p.t_alpha, self.p.g, self.now);
        let q = &mut self.qps[qi];
        let periods = ((now - q.d_anchor) / t_alpha + 1e-9).floor() as i64;
        let n = periods - q.d_ticks;
        if n > 0 {
            q.d_alpha = (1.0 - g) * q.d_alpha + if q.d_alpha_flag { g } else { 0.0 };
            q.d_alpha_flag = false;
            if n > 1 {
                q.d_alpha *= (1.0 - g).powi((n - 1) as i32);
            }
            q.d_ticks = periods;
        }
    }

    fn dcqcn_cnp(&mut self, qi: usize) {
        let now = self.now;
        if self.qps[qi].d_first {
            let t_dec = self.p.t_dec;
            let q = &mut self.qps[qi];
            q.d_first = false;
            q.d_alpha = 1.0;
            q.d_anchor = now;
            q.d_ticks = 0;
            q.d_alpha_flag = false;
            q.d_dec_flag = true;
            q.d_dec_anchor = now + t_dec + 1.0;
            q.d_target = q.rate;
            self.dcqcn_schedule_decrease(qi);
            return;
        }
        self.dcqcn_catch_up(qi);
        let q = &mut self.qps[qi];
        q.d_alpha_flag = true;
        q.d_dec_flag = true;
        self.dcqcn_schedule_decrease(qi);
    }

    fn dcqcn_schedule_decrease(&mut self, qi: usize) {
        let (now, t_dec) = (self.now, self.p.t_dec);
        let q = &mut self.qps[qi];
        if q.d_dec_pending {
            return;
        }
        let k = ((now - q.d_dec_anchor) / t_dec - 1e-9).ceil().max(0.0);
        let mut at = q.d_dec_anchor + k * t_dec;
        if at <= now && k == 0.0 && now > q.d_dec_anchor {
            at += t_dec;
        }
        q.d_dec_pending = true;
        self.schedule_at(at.max(now), EV_DEC, qi as u32, 0);
    }

    fn dcqcn_decrease(&mut self, qi: usize) {
        self.qps[qi].d_dec_pending = false;
        if self.qps[qi].done || !self.qps[qi].d_dec_flag {
            return;
        }
        self.dcqcn_catch_up(qi);
        let p = Rc::clone(&self.p);
        let q = &mut self.qps[qi];
        if p.clamp || q.d_stage != 0 {
            q.d_target = q.rate;
        }
        q.rate = p.min_rate.max(q.rate * (1.0 - q.d_alpha / 2.0));
        q.d_stage = 0;
        q.d_dec_flag = false;
        q.d_timer += 1;
        let v = q.d_timer;
        self.schedule_inc(qi, v);
    }

    fn dcqcn_increase(&mut self, qi: usize, version: u32) {
        if self.qps[qi].done || version != self.qps[qi].d_timer {
            return;
        }
        let p = Rc::clone(&self.p);
        self.schedule_inc(qi, version);
        let q = &mut self.qps[qi];
        if q.d_stage > p.fast_recovery {
            q.d_target = q.max_rate.min(q.d_target + p.rhai);
        } else if q.d_stage == p.fast_recovery {
            q.d_target = q.max_rate.min(q.d_target + p.rai);
        }
        q.rate = q.rate / 2.0 + q.d_target / 2.0;
        q.d_stage += 1;
        self.kick(qi);
    }

    // -- DCTCP, TIMELY, HPCC (cc.py) -------------------------------------------------

    fn dctcp_ack(&mut self, qi: usize, pkt: &Pkt) {
        let p = Rc::clone(&self.p);
        let q = &mut self.qps[qi];
        let seq = pkt.seq;
        q.t_ecn_count += pkt.ecn as u64;
        let mut new_batch = false;
        if seq > q.t_last_update {
            new_batch = true;
            if q.t_last_update == 0 {
                q.t_last_update = q.snd_nxt;
                q.t_batch = q.snd_nxt / p.unit + 1;
            } else {
                let frac = (q.t_ecn_count as f64 / q.t_batch as f64).min(1.0);
                q.t_alpha = (1.0 - p.g) * q.t_alpha + p.g * frac;
                q.t_last_update = q.snd_nxt;
                q.t_ecn_count = 0;
                q.t_batch = (q.snd_nxt - seq) / p.unit + 1;
            }
        }
        if q.t_cwr && seq > q.t_high_seq {
            q.t_cwr = false;
        }
        if pkt.ecn && !q.t_cwr {
            q.rate = p.min_rate.max(q.rate * (1.0 - q.t_alpha / 2.0));
            q.t_cwr = true;
            q.t_high_seq = q.snd_nxt;
        }
        if !q.t_cwr && new_batch {
            q.rate = q.max_rate.min(q.rate + p.dctcp_rai);
        }
    }

    fn timely_ack(&mut self, qi: usize, pkt: &Pkt) {
        let p = Rc::clone(&self.p);
        if pkt.seq <= self.qps[qi].m_last_update {
            return;
        }
        let rtt = self.now - pkt.ts;
        if self.qps[qi].m_last_update != 0 {
            let q = &self.qps[qi];
            let new_diff = rtt - q.m_last_rtt;
            let diff = (1.0 - p.tm_alpha) * q.m_rtt_diff + p.tm_alpha * new_diff;
            let gradient = diff / p.tm_min_rtt;
            let rate;
            let stage;
            if rtt < p.tm_low || (rtt <= p.tm_high && gradient <= 0.0) {
                let step = if q.m_stage < 5 { p.rai } else { p.rhai };
                rate = q.max_rate.min(q.m_cur_rate + step);
                stage = q.m_stage + 1;
            } else {
                let c = if rtt > p.tm_high {
                    1.0 - p.tm_beta * (1.0 - p.tm_high / rtt)
                } else {
                    (1.0 - p.tm_beta * gradient).max(0.0)
                };
                rate = p.min_rate.max(q.m_cur_rate * c);
                stage = 0;
            }
            self.change_rate(qi, rate);
            let q = &mut self.qps[qi];
            q.m_stage = stage;
            q.m_cur_rate = rate;
            q.m_rtt_diff = diff;
        }
        let q = &mut self.qps[qi];
        if q.snd_nxt > q.m_last_update {
            q.m_last_update = q.snd_nxt;
            q.m_last_rtt = rtt;
        }
    }

    fn hpcc_ack(&mut self, qi: usize, pkt: &Pkt, id: u32) {
        let p = Rc::clone(&self.p);
        let full = pkt.seq > self.qps[qi].h_last_update;
        if !full && !p.fast_react {
            return;
        }
        let n = pkt.nints as usize;
        let next_seq = self.qps[qi].snd_nxt;
        {
            let q = &mut self.qps[qi];
            if q.h_last_update == 0 {
                q.h_last_update = next_seq;
                self.hp_hops[qi] = self.ints[id as usize];
                q.h_nhops = n;
                return;
            }
            if q.h_nhops != n {
                self.hp_hops[qi] = self.ints[id as usize];
                q.h_nhops = n;
                return;
            }
        }
        let q = &self.qps[qi];
        let base_rtt = q.base_rtt;
        let win = if q.win != 0.0 {
            q.win
        } else {
            q.max_rate * base_rtt
        };
        let (mut big_u, mut dt) = (0.0f64, 0.0f64);
        for i in 0..n {
            let (new, old) = (self.ints[id as usize][i], self.hp_hops[qi][i]);
            let tau = new.t - old.t;
            if tau <= 0.0 {
                continue;
            }
            let u = (new.tx - old.tx) / tau / new.bw + new.q.min(old.q) * q.max_rate / new.bw / win;
            if u > big_u {
                big_u = u;
                dt = tau;
            }
        }
        self.hp_hops[qi] = self.ints[id as usize];
        if dt > 0.0 {
            let q = &self.qps[qi];
            let dt = dt.min(base_rtt);
            let u = (q.h_u * (base_rtt - dt) + big_u * dt) / base_rtt;
            let max_c = u / p.eta;
            let (mut rate, stage);
            if max_c >= 1.0 || q.h_stage >= p.max_stage {
                rate = if max_c > 0.0 {
                    q.h_cur_rate / max_c + p.rai
                } else {
                    q.max_rate
                };
                stage = 0;
            } else {
                rate = q.h_cur_rate + p.rai;
                stage = q.h_stage + 1;
            }
            rate = q.max_rate.min(p.min_rate.max(rate));
            self.qps[qi].h_u = u;
            self.change_rate(qi, rate);
            if full {
                let q = &mut self.qps[qi];
                q.h_cur_rate = rate;
                q.h_stage = stage;
            }
        }
        let q = &mut self.qps[qi];
        if full && next_seq > q.h_last_update {
            q.h_last_update = next_seq;
        }
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev.kind() {
            EV_FREE => {
                let l = ev.a as usize;
                if self.ports[l].free_at > self.now {
                    // the port started another packet since: still the one pending
                    let t = self.ports[l].free_at;
                    self.schedule_at(t, EV_FREE, l as u32, 0);
                } else {
                    self.ports[l].free_pending = false;
                    self.try_send(l);
                }
            }
            EV_ARRIVE => self.land(ev.a as usize),
            EV_WAKE => {
                let l = ev.a as usize;
                if self.ports[l].wake_at <= self.now {
                    self.ports[l].wake_at = f64::INFINITY;
                }
                self.try_send(l);
            }
            EV_RTO => self.rto(ev.a as usize),
            EV_SAMPLE => self.sample(),
            EV_DEC => self.dcqcn_decrease(ev.a as usize),
            EV_INC => {
                self.pop_inc();
                self.dcqcn_increase(ev.a as usize, ev.b)
            }
            _ => {}
        }
    }
}

#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

// ---- C ABI ----------------------------------------------------------------------------

unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

/// A new engine. ``links``-long arrays: bandwidth (B/ns), latency (ns), source and
/// destination device, reverse link (-1: none), headroom (B), 2**shift, ECN kmin / kmax
/// (B) and pmax; ``devices``-long: total headroom and reserve; ``params``: see Params.
#[no_mangle]
pub unsafe extern "C" fn pc_new(
    links: usize,
    devices: usize,
    bw: *const f64,
    lat: *const f64,
    dst: *const u32,
    rev: *const i32,
    headroom: *const f64,
    shift: *const f64,
    kmin: *const f64,
    kmax: *const f64,
    pmax: *const f64,
    total_hdrm: *const f64,
    total_rsrv: *const f64,
    monitored: *const u32,
    n_monitored: usize,
    params: *const f64,
    n_params: usize,
) -> *mut Engine {
    let v = slice(params, n_params);
    let g = |i: usize| v[i];
    let p = Params {
        cc: g(0) as i32,
        mtu: g(1) as u64,
        header: g(2) as u64,
        ack_bytes: g(3) as u64,
        int_hop: g(4) as u64,
        pfc_frame: g(5) as u64,
        unit: g(6) as u64,
        data_prio: g(7) as usize,
        ack_high: g(8) != 0.0,
        pfc: g(9) != 0.0,
        buffer: g(10),
        reserve: g(11) as i64,
        resume_offset: g(12),
        ecn: g(13) != 0.0,
        seed: g(14) as u64,
        ack_interval: g(15) as u64,
        nack_interval: g(16),
        rto: g(17),
        var_window: g(18) != 0.0,
        min_rate: g(19),
        rai: g(20),
        rhai: g(21),
        g: g(22),
        t_alpha: g(23),
        t_dec: g(24),
        t_rp: g(25),
        fast_recovery: g(26) as i64,
        clamp: g(27) != 0.0,
        cnp_interval: g(28),
        dctcp_rai: g(29),
        tm_alpha: g(30),
        tm_beta: g(31),
        tm_low: g(32),
        tm_high: g(33),
        tm_min_rtt: g(34),
        eta: g(35),
        max_stage: g(36) as i64,
        fast_react: g(37) != 0.0,
        monitor: g(38),
    };
    let e = Engine {
        p: Rc::new(p),
        now: 0.0,
        seq: 0,
        heap: Heap::default(),
        inc: VecDeque::new(),
        ports: (0..links)
            .map(|l| Port {
                bw: slice(bw, links)[l],
                lat: slice(lat, links)[l],
                free_at: f64::NEG_INFINITY,
                wake_at: f64::INFINITY,
                tx_bytes: 0.0,
                qbytes: 0,
                peak: 0,
                rr: 0,
                nonempty: 0,
                free_pending: false,
            })
            .collect(),
        dst: slice(dst, links).to_vec(),
        rev: slice(rev, links).to_vec(),
        headroom: slice(headroom, links).to_vec(),
        shift: slice(shift, links).to_vec(),
        kmin: slice(kmin, links).to_vec(),
        kmax: slice(kmax, links).to_vec(),
        pmax: slice(pmax, links).to_vec(),
        queues: (0..links).map(|_| Default::default()).collect(),
        flight: (0..links).map(|_| VecDeque::new()).collect(),
        egress: vec![[0; PRIO]; links],
        paused: vec![[false; PRIO]; links],
        qps_at: vec![Vec::new(); links],
        pause_ns: vec![0.0; links],
        pause_since: vec![[-1.0; PRIO]; links],
        total_hdrm: slice(total_hdrm, devices).to_vec(),
        total_rsrv: slice(total_rsrv, devices).to_vec(),
        shared_used: vec![0.0; devices],
        dev_used: vec![0; devices],
        ing: vec![[0; PRIO]; links],
        hdrm: vec![[0; PRIO]; links],
        xoff: vec![[false; PRIO]; links],
        pkts: Vec::new(),
        ints: Vec::new(),
        hp_hops: Vec::new(),
        routes: Vec::new(),
        free_pkts: Vec::new(),
        qps: Vec::new(),
        active: 0,
        active_list: Vec::new(),
        rto_on: !p.pfc,
        rng: p.seed,
        loss: vec![0; links],
        any_loss: false,
        monitoring: false,
        monitored: slice(monitored, n_monitored).to_vec(),
        samples_t: Vec::new(),
        samples_q: Vec::new(),
        delivered: Vec::new(),
        pause_frames: 0,
        drops: 0,
        packets_sent: 0,
        packets_resent: 0,
        hops: 0,
        ecn_marks: 0,
        cnps: 0,
        events: 0,
    };
    Box::into_raw(Box::new(e))
}

#[no_mangle]
pub unsafe extern "C" fn pc_free(e: *mut Engine) {
    if !e.is_null() {
        drop(Box::from_raw(e));
    }
}

/// Start a message (a QP) at time ``now``: ``key`` comes back from ``pc_run`` at delivery.
#[no_mangle]
pub unsafe extern "C" fn pc_send(
    e: *mut Engine,
    now: f64,
    key: u64,
    size: u64,
    route: *const u32,
    route_len: usize,
    ack_route: *const u32,
    ack_len: usize,
    base_rtt: f64,
    win: f64,
) {
    let e = &mut *e;
    e.now = now;
    let route = slice(route, route_len);
    let ack_route = slice(ack_route, ack_len);
    let port = route[0];
    let rate = e.ports[port as usize].bw;
    let qi = e.qps.len();
    let roff = e.routes.len() as u32;
    e.routes.extend_from_slice(route);
    let aoff = e.routes.len() as u32;
    e.routes.extend_from_slice(ack_route);
    if e.p.cc == CC_HPCC {
        e.hp_hops.push([IntRec::default(); MAXHOP]);
    }
    e.qps.push(Qp {
        key,
        roff,
        rlen: route_len as u32,
        aoff,
        alen: ack_len as u32,
        port,
        size,
        rate,
        max_rate: rate,
        win,
        next_avail: now,
        base_rtt,
        nack_at: f64::NEG_INFINITY,
        last_nack: -1,
        last_cnp: f64::NEG_INFINITY,
        rto_una: -1,
        d_alpha: 1.0,
        d_target: rate,
        d_first: true,
        t_alpha: 1.0,
        t_batch: 1,
        m_cur_rate: rate,
        h_cur_rate: rate,
        ..Default::default()
    });
    e.qps_at[port as usize].push(qi as u32);
    e.active_list.push(qi as u32);
    e.active += 1;
    if e.rto_on {
        e.arm_rto(qi);
    }
    if !e.monitoring {
        e.monitoring = true;
        e.sample();
    }
    e.try_send(port as usize);
}

/// Time of the next event (infinity when none).
#[no_mangle]
pub unsafe extern "C" fn pc_next_time(e: *const Engine) -> f64 {
    let e = &*e;
    e.heap.peek().map_or(f64::INFINITY, |ev| ev.t)
}

/// Process the events before ``until`` (strictly), stopping after the first one that
/// delivers a message; writes the keys delivered (at most ``cap``), their time to ``at``,
/// and returns how many.
#[no_mangle]
pub unsafe extern "C" fn pc_run(
    e: *mut Engine,
    until: f64,
    out: *mut u64,
    cap: usize,
    at: *mut f64,
) -> usize {
    let e = &mut *e;
    while e.delivered.is_empty() {
        match e.heap.peek() {
            Some(ev) if ev.t < until => {}
            _ => break,
        }
        let ev = e.heap.take();
        // a packet landing was written a link's flight earlier (microseconds of simulated
        // time, thousands of events): fetch the next event's packet while this one runs
        if let Some(next) = e.heap.next_after_taken() {
            if next.kind() == EV_ARRIVE {
                prefetch(e.pkts.as_ptr().wrapping_add(next.b as usize));
                if let Some(entry) = e.flight[next.a as usize].front() {
                    prefetch(entry as *const (f64, u32));
                }
            }
        }
        e.now = ev.t;
        e.events += 1;
        e.dispatch(ev);
        e.heap.settle();
    }
    *at = e.now;
    let n = e.delivered.len().min(cap);
    for (i, k) in e.delivered.drain(..n).enumerate() {
        *out.add(i) = k;
    }
    n
}

/// Scalar counters: active QPs, packets sent, resent, link transmissions, drops, pause
/// frames, ECN marks, CNPs, events processed, samples taken.
#[no_mangle]
pub unsafe extern "C" fn pc_counters(e: *const Engine, out: *mut f64) {
    let e = &*e;
    let vals = [
        e.active as f64,
        e.packets_sent as f64,
        e.packets_resent as f64,
        e.hops as f64,
        e.drops as f64,
        e.pause_frames as f64,
        e.ecn_marks as f64,
        e.cnps as f64,
        e.events as f64,
        e.samples_t.len() as f64,
    ];
    for (i, v) in vals.iter().enumerate() {
        *out.add(i) = *v;
    }
}

/// Per link: bytes carried, peak queue bytes, closed pause time (ns), open pause start
/// (the earliest of its priorities, -1 when not paused).
#[no_mangle]
pub unsafe extern "C" fn pc_links(
    e: *const Engine,
    bytes: *mut f64,
    peak: *mut f64,
    pause: *mut f64,
    since: *mut f64,
) {
    let e = &*e;
    for l in 0..e.ports.len() {
        *bytes.add(l) = e.ports[l].tx_bytes;
        *peak.add(l) = e.ports[l].peak as f64;
        *pause.add(l) = e.pause_ns[l];
        let open = e.pause_since[l]
            .iter()
            .copied()
            .filter(|&s| s >= 0.0)
            .fold(f64::INFINITY, f64::min);
        *since.add(l) = if open.is_finite() { open } else { -1.0 };
    }
}

/// The queue samples: ``times`` (samples) and ``queues`` (samples x monitored ports).
#[no_mangle]
pub unsafe extern "C" fn pc_samples(e: *const Engine, times: *mut f64, queues: *mut i64) {
    let e = &*e;
    std::ptr::copy_nonoverlapping(e.samples_t.as_ptr(), times, e.samples_t.len());
    std::ptr::copy_nonoverlapping(e.samples_q.as_ptr(), queues, e.samples_q.len());
}

/// Fault injection: lose the next ``packets`` data packets that cross ``link``.
#[no_mangle]
pub unsafe extern "C" fn pc_lose(e: *mut Engine, link: usize, packets: i64) {
    let e = &mut *e;
    e.loss[link] += packets;
    e.any_loss = true;
}
