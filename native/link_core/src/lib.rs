//! Compiled core of trainsim's congestion-aware backend (DESIGN.md, network layer).
//!
//! The same model as the pure-Python reference (src/trainsim/network/congestion_aware.py):
//! FIFO links, a message store-and-forwarded link by link on a route fixed at send time,
//! ``t + latency + bytes / bw`` to the next device and the link free at ``t + bytes / bw``
//! (both truncated to whole ns separately in compatibility mode, G4), the arrival scheduled
//! before the link frees (G10). Times in ns (f64), sizes in bytes, bandwidth in B/ns.
//!
//! Exactness: the reference runs these events on the shared kernel heap, ordered by
//! ``(time, seq)`` with ``seq`` from the kernel's counter. This core keeps its own heap with
//! keys ``(time, seq, sub)``: each call from Python brings one fresh number of the kernel's
//! counter (``seq``) and the events scheduled during that call take ``sub`` 0, 1, 2, ... in
//! scheduling order, which sorts exactly as the reference's consecutive numbers would
//! against every kernel event (all scheduled before the call have smaller numbers, all after
//! it larger ones). Python keeps one proxy event in the kernel heap at the key of this core's
//! earliest event; when it pops, [`lc_run`] runs the core's events that come before the
//! kernel's next one, stopping at each delivery so that ``on_arrival`` runs in its place.
//! A link's free event is kept out of the heap until something needs it: a message that finds
//! the link busy before the free event's key pushes it then, under the key it was given when
//! the transfer started; a message that comes after that key finds the link free (the event
//! would have run, with no one waiting). So the events run and their order are the reference's
//! while an uncontended hop costs one heap event instead of two. Deciding "after that key"
//! needs the key of the event being processed: the core's own, the delivery whose callback is
//! running, or the kernel's (``EventQueue.current_seq``).
//!
//! Ring phases (``ring.rs``): a collective's ring phase (trainsim's ``RingPhase`` under the
//! collective engine's ``bundle`` / ``send`` / ``recv`` / message matching) may run here too,
//! its insertions, matches and messages as events of this heap under the same keys, so that
//! only its start and its end cross into Python.
//! C ABI only (no crates): loaded with ctypes.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

mod py;
mod queues;
mod ring;

const EV_ARRIVE: u8 = 0;
const EV_FREE: u8 = 1;
/// a ring phase's insertion is over (``on_general``): ``id`` is the ring
const EV_GENERAL: u8 = 2;
/// a ring phase's receive matched a message that was there first (``on_recv``)
const EV_RECV: u8 = 3;
/// a ring message that crosses no link, or that the backend prices itself, is delivered
/// (``id`` is its slot)
const EV_LOCAL: u8 = 4;
/// ``Msg::ring_tag`` of a message whose delivery runs Python's ``on_arrival``
const PYTHON_MESSAGE: i64 = i64::MIN;

/// ``sub`` takes the low bits of an event's packed key: a call that schedules more events
/// than this takes a fresh number of the kernel's counter (``Core::next_key``)
const SUB_BITS: u32 = 24;
/// the kernel's counter must stay under this for the packed key (``py.rs`` refuses beyond)
pub const SEQ_LIMIT: u64 = 1 << (64 - SUB_BITS);

/// An event, its key packed in two integers: the time's bits (times are >= 0, whose IEEE bits
/// order as the numbers do) and ``seq << SUB_BITS | sub``; 24 bytes, so a heap sift moves
/// less and compares two integers (10 % of a congestion-aware run, measured).
#[derive(Clone, Copy)]
pub struct Ev {
    time_bits: u64,
    seq_sub: u64,
    id: u32,
    kind: u8,
}

impl Ev {
    #[inline]
    fn new(t: f64, seq: u64, sub: u64, kind: u8, id: u32) -> Ev {
        debug_assert!(t >= 0.0 && seq < SEQ_LIMIT && sub < 1 << SUB_BITS);
        Ev { time_bits: t.to_bits(), seq_sub: (seq << SUB_BITS) | sub, id, kind }
    }
    #[inline]
    fn t(&self) -> f64 {
        f64::from_bits(self.time_bits)
    }
    #[inline]
    fn seq(&self) -> u64 {
        self.seq_sub >> SUB_BITS
    }
    #[inline]
    fn sub(&self) -> u64 {
        self.seq_sub & ((1 << SUB_BITS) - 1)
    }
    #[inline]
    fn key_cmp(&self, other: &Ev) -> Ordering {
        (self.time_bits, self.seq_sub).cmp(&(other.time_bits, other.seq_sub))
    }
}

impl PartialEq for Ev {
    fn eq(&self, other: &Ev) -> bool {
        self.key_cmp(other) == Ordering::Equal
    }
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, other: &Ev) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ev {
    // BinaryHeap is a max-heap: reverse for the earliest key first
    fn cmp(&self, other: &Ev) -> Ordering {
        other.key_cmp(self)
    }
}

/// A proxy's key in the kernel heap, earliest first.
#[derive(Clone, Copy, PartialEq)]
struct Key(f64, u64);
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Key) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

#[derive(Clone, Copy)]
struct Msg {
    route: u32,
    hop: u32,
    /// bytes as the reference divides them (an int converts to the same double)
    nbytes: f64,
    /// a ring phase's message: its match key (chunk tag, src, dst, bytes); else
    /// ``ring_tag`` is [`PYTHON_MESSAGE`]
    ring_tag: i64,
    ring_src: u32,
    ring_dst: u32,
    ring_bytes: i64,
}

/// Transfer record: (start ns, end ns, link, bytes).
type Transfer = (f64, f64, u32, f64);

pub struct Core {
    bytes_per_ns: Vec<f64>,
    latency: Vec<f64>,
    compat: bool,
    busy: Vec<bool>,
    waiting: Vec<VecDeque<u32>>,
    /// the key of each busy link's free event, and whether that event is in the heap
    free_key: Vec<(f64, u64, u64)>,
    free_queued: Vec<bool>,
    link_bytes: Vec<f64>,
    link_busy_ns: Vec<f64>,
    peak_queue: Vec<u64>,
    route_start: Vec<u32>,
    route_links: Vec<u32>,
    msgs: Vec<Msg>,
    free_slots: Vec<u32>,
    heap: BinaryHeap<Ev>,
    proxies: BinaryHeap<Key>,
    now: f64,
    seq: u64,
    sub: u64,
    /// the key of the event being processed (a kernel event's: its seq and sub 0)
    cur: (f64, i64, u64),
    /// events run, counting a free event kept out of the heap when its transfer starts
    events: u64,
    /// ``sub`` numbers a call takes before a fresh ``seq`` (``1 << SUB_BITS``; lower in tests)
    sub_limit: u64,
    record: bool,
    transfers: Vec<Transfer>,
    /// [earliest event time (inf when none), its seq, 1 when a proxy must be pushed at that
    /// key, time of the last delivery, events run]
    state: [f64; 5],
    /// the kernel and the messages' callbacks (``py.rs``)
    host: Option<py::Host>,
    /// ring phases, their message matching and the endpoint's prices (``ring.rs``)
    rings: ring::Rings,
    /// whole collectives of a rank: chunks in dimension queues (``queues.rs``)
    queues: queues::Queues,
}

/// Put ``item`` in a slot of ``items`` that ``free`` lists, or at the end: its index. The
/// core's tables (messages, ring phases, streams, works, posted receives) keep their ids
/// stable and reuse them, so a long run allocates only while it grows.
pub(crate) fn reuse_or_push<T>(items: &mut Vec<T>, free: &mut Vec<u32>, item: T) -> u32 {
    match free.pop() {
        Some(i) => {
            items[i as usize] = item;
            i
        }
        None => {
            items.push(item);
            (items.len() - 1) as u32
        }
    }
}

impl Core {
    fn schedule(&mut self, at: f64, kind: u8, id: u32) {
        let (seq, sub) = self.next_key();
        self.heap.push(Ev::new(at, seq, sub, kind, id));
    }

    /// The next ``(seq, sub)`` of this call; past ``SUB_BITS`` a fresh number of the kernel's
    /// counter (nothing else took one meanwhile: later than every key so far, earlier than any
    /// to come, as consecutive numbers would be).
    fn next_key(&mut self) -> (u64, u64) {
        if self.sub >= self.sub_limit {
            // SAFETY: the core runs only inside calls from Python, with the GIL held
            self.seq = unsafe { py::fresh_seq(self.host.as_ref()) };
            self.sub = 0;
        }
        let sub = self.sub;
        self.sub += 1;
        (self.seq, sub)
    }

    fn link_of(&self, m: &Msg) -> usize {
        self.route_links[(self.route_start[m.route as usize] + m.hop) as usize] as usize
    }

    fn route_len(&self, route: u32) -> u32 {
        self.route_start[route as usize + 1] - self.route_start[route as usize]
    }

    fn enter_link(&mut self, slot: u32) {
        let link = self.link_of(&self.msgs[slot as usize]);
        if self.busy[link] {
            if !self.free_queued[link] {
                let (t, seq, sub) = self.free_key[link];
                let (ct, cseq, csub) = self.cur;
                let passed = t < ct || (t == ct && ((seq as i64) < cseq || (seq as i64 == cseq && sub < csub)));
                if passed {
                    // its free event would have run, with no one waiting
                    self.start(link, slot);
                    return;
                }
                self.heap.push(Ev::new(t, seq, sub, EV_FREE, link as u32));
                self.free_queued[link] = true;
                self.events -= 1; // counted again when it runs
            }
            let w = &mut self.waiting[link];
            w.push_back(slot);
            if w.len() as u64 > self.peak_queue[link] {
                self.peak_queue[link] = w.len() as u64;
            }
        } else {
            self.start(link, slot);
        }
    }

    fn start(&mut self, link: usize, slot: u32) {
        let nbytes = self.msgs[slot as usize].nbytes;
        let serialization = nbytes / self.bytes_per_ns[link];
        let mut arrival = self.latency[link] + serialization;
        let mut busy = serialization;
        if self.compat {
            arrival = arrival.trunc();
            busy = busy.trunc();
        }
        self.busy[link] = true;
        self.link_bytes[link] += nbytes;
        self.link_busy_ns[link] += busy;
        let now = self.now;
        if self.record {
            self.transfers.push((now, now + busy, link as u32, nbytes));
        }
        self.schedule(now + arrival, EV_ARRIVE, slot);
        // the free event's key is taken now, as if it were scheduled (module docstring)
        let (seq, sub) = self.next_key();
        let key = (now + busy, seq, sub);
        self.free_key[link] = key;
        if self.waiting[link].is_empty() {
            self.free_queued[link] = false;
            self.events += 1;
        } else {
            self.free_queued[link] = true;
            self.heap.push(Ev::new(key.0, key.1, key.2, EV_FREE, link as u32));
        }
    }

    /// Publish the earliest event and whether it needs a proxy in the kernel heap.
    fn publish(&mut self) {
        match self.heap.peek() {
            None => {
                self.state[0] = f64::INFINITY;
                self.state[2] = 0.0;
            }
            Some(ev) => {
                let key = Key(ev.t(), ev.seq());
                self.state[0] = ev.t();
                self.state[1] = ev.seq() as f64;
                // a proxy pending at or before this key wakes the core in time
                let covered = match self.proxies.peek() {
                    Some(p) => p.0 < key.0 || (p.0 == key.0 && p.1 <= key.1),
                    None => false,
                };
                if covered {
                    self.state[2] = 0.0;
                } else {
                    self.proxies.push(key);
                    self.state[2] = 1.0;
                }
            }
        }
    }
}

unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

/// A core over ``links`` links (bandwidth B/ns and latency ns each).
///
/// # Safety
/// ``bytes_per_ns`` and ``latency_ns`` point to ``links`` doubles.
#[no_mangle]
pub unsafe extern "C" fn lc_new(links: usize, bytes_per_ns: *const f64, latency_ns: *const f64, compat: i32) -> *mut Core {
    let core = Core {
        bytes_per_ns: slice(bytes_per_ns, links).to_vec(),
        latency: slice(latency_ns, links).to_vec(),
        compat: compat != 0,
        busy: vec![false; links],
        waiting: (0..links).map(|_| VecDeque::new()).collect(),
        free_key: vec![(0.0, 0, 0); links],
        free_queued: vec![false; links],
        link_bytes: vec![0.0; links],
        link_busy_ns: vec![0.0; links],
        peak_queue: vec![0; links],
        route_start: vec![0],
        route_links: Vec::new(),
        msgs: Vec::new(),
        free_slots: Vec::new(),
        heap: BinaryHeap::new(),
        proxies: BinaryHeap::new(),
        now: 0.0,
        seq: 0,
        sub: 0,
        cur: (0.0, -1, 0),
        events: 0,
        sub_limit: 1 << SUB_BITS,
        record: false,
        transfers: Vec::new(),
        state: [f64::INFINITY, 0.0, 0.0, 0.0, 0.0],
        host: None,
        rings: ring::Rings::default(),
        queues: queues::Queues::default(),
    };
    Box::into_raw(Box::new(core))
}

/// # Safety
/// ``core`` comes from [`lc_new`] and is not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn lc_free(core: *mut Core) {
    if !core.is_null() {
        py::release(&mut (*core).host);
        drop(Box::from_raw(core));
    }
}

impl Core {
    /// Send ``nbytes`` on route ``route`` at ``now`` (the kernel's time); ``seq`` is a fresh
    /// number of the kernel's counter. Returns the message's slot (Python keeps its
    /// ``on_arrival`` there).
    fn send(&mut self, route: u32, nbytes: f64, now: f64, seq: u64) -> u32 {
        self.now = now;
        self.seq = seq;
        self.sub = 0;
        let msg = Msg { route, hop: 0, nbytes, ring_tag: PYTHON_MESSAGE, ring_src: 0, ring_dst: 0, ring_bytes: 0 };
        let slot = self.new_message(msg);
        self.enter_link(slot);
        self.publish();
        slot
    }

    fn new_message(&mut self, msg: Msg) -> u32 {
        reuse_or_push(&mut self.msgs, &mut self.free_slots, msg)
    }

    /// Run the events whose key comes before the kernel's next event ``(limit_t, limit_seq)``
    /// (``limit_seq`` < 0: no kernel event), up to and including the first delivery to
    /// Python or the first ring phase that ends. ``seq`` is a fresh number of the kernel's
    /// counter; ``woken`` on the first call after a proxy popped (that proxy is spent).
    /// Returns the delivered message's slot, ``-2 - 2 ring`` for a ring phase of Python's that
    /// ended (its id is free again), ``-3 - 2 work`` for a whole collective of a rank that ended
    /// (``queues.rs``), or -1 when it stopped before the kernel's next event (or ran out of
    /// events); ``state[3]`` is the time of the delivery or the end. Only a call that returns
    /// -1 publishes the earliest event (``state[0..3]``), so the caller calls again after
    /// each delivery or end until one does.
    fn run(&mut self, limit_t: f64, limit_seq: i64, seq: u64, woken: bool) -> i64 {
        if woken {
            self.proxies.pop();
        }
        self.seq = seq;
        self.sub = 0;
        let mut delivered: i64 = -1;
        while let Some(ev) = self.heap.peek() {
            if limit_seq >= 0 && (ev.t() > limit_t || (ev.t() == limit_t && ev.seq() as i64 > limit_seq)) {
                break;
            }
            let ev = self.heap.pop().unwrap();
            self.now = ev.t();
            self.cur = (ev.t(), ev.seq() as i64, ev.sub());
            self.events += 1;
            match ev.kind {
                EV_FREE => {
                    let link = ev.id as usize;
                    self.free_queued[link] = false;
                    match self.waiting[link].pop_front() {
                        Some(slot) => self.start(link, slot),
                        None => self.busy[link] = false,
                    }
                }
                EV_ARRIVE => {
                    let slot = ev.id;
                    let m = &mut self.msgs[slot as usize];
                    m.hop += 1;
                    let (route, hop) = (m.route, m.hop);
                    if hop < self.route_len(route) {
                        self.enter_link(slot);
                    } else if self.msgs[slot as usize].ring_tag != PYTHON_MESSAGE {
                        self.ring_arrive(slot, true);
                    } else {
                        self.free_slots.push(slot);
                        self.state[3] = ev.t();
                        delivered = slot as i64;
                        break;
                    }
                }
                EV_LOCAL => self.ring_arrive(ev.id, false),
                EV_RECV => self.ring_insert(ev.id),
                _ => {
                    if self.ring_general(ev.id) {
                        let owner = self.ring_owner(ev.id);
                        if owner < 0 {
                            self.state[3] = ev.t();
                            delivered = -2 - 2 * ev.id as i64;
                            break;
                        }
                        if let Some(work) = self.stream_phase_over(owner as u32) {
                            self.state[3] = ev.t();
                            delivered = -3 - 2 * work as i64;
                            break;
                        }
                    }
                }
            }
        }
        self.state[4] = self.events as f64;
        if delivered == -1 {
            self.publish();
        }
        delivered
    }
}

/// Counters: [events run, messages on the links].
///
/// # Safety
/// ``core`` comes from [`lc_new`]; ``out`` points to 2 doubles.
#[no_mangle]
pub unsafe extern "C" fn lc_counters(core: *mut Core, out: *mut f64) {
    let c = &*core;
    *out = c.events as f64;
    *out.add(1) = (c.msgs.len() - c.free_slots.len()) as f64;
}

/// Per-link bytes carried, busy ns, peak queue length, each ``links`` doubles.
///
/// # Safety
/// ``core`` comes from [`lc_new`]; each pointer holds as many doubles as the core has links.
#[no_mangle]
pub unsafe extern "C" fn lc_links(core: *mut Core, bytes: *mut f64, busy_ns: *mut f64, peak: *mut f64) {
    let c = &*core;
    for i in 0..c.busy.len() {
        *bytes.add(i) = c.link_bytes[i];
        *busy_ns.add(i) = c.link_busy_ns[i];
        *peak.add(i) = c.peak_queue[i] as f64;
    }
}

/// Take a fresh ``seq`` after ``limit`` (1 .. ``1 << SUB_BITS``) events of one call instead of
/// ``1 << SUB_BITS``: the tests' way to reach that path.
///
/// # Safety
/// ``core`` comes from [`lc_new`].
#[no_mangle]
pub unsafe extern "C" fn lc_sub_limit(core: *mut Core, limit: u64) {
    (*core).sub_limit = limit.clamp(1, 1 << SUB_BITS);
}

/// Record each link transfer from now on (``on`` = 1) or not.
///
/// # Safety
/// ``core`` comes from [`lc_new`].
#[no_mangle]
pub unsafe extern "C" fn lc_record(core: *mut Core, on: i32) {
    (*core).record = on != 0;
}

/// Move up to ``max`` recorded transfers (oldest first) into ``out`` (4 doubles each: start
/// ns, end ns, link, bytes); returns how many.
///
/// # Safety
/// ``core`` comes from [`lc_new`]; ``out`` holds ``4 * max`` doubles.
#[no_mangle]
pub unsafe extern "C" fn lc_take_transfers(core: *mut Core, out: *mut f64, max: usize) -> usize {
    let c = &mut *core;
    let n = c.transfers.len().min(max);
    for (i, &(s, e, link, b)) in c.transfers.iter().take(n).enumerate() {
        *out.add(4 * i) = s;
        *out.add(4 * i + 1) = e;
        *out.add(4 * i + 2) = link as f64;
        *out.add(4 * i + 3) = b;
    }
    c.transfers.drain(..n);
    n
}
