//! Ring phases in the core: trainsim's ``RingPhase`` (``collectives/ring.py``, window 0) as
//! the collective engine hosts it (``system/collective_engine.py``: ``bundle``, ``send``,
//! ``recv``, ``_arrive`` / ``_post``), for a time-invariant ASTRA-sim endpoint and no
//! injection model. The engine hands a phase over at its start (``ring_start`` in
//! ``py.rs``) and gets it back at its end; in between, its insertions (the endpoint delay
//! and reduction, then ``on_general``), its messages, their matching by ``(chunk tag, src,
//! dst, bytes)`` in order per key and ``on_recv`` are events of the core's heap, numbered as
//! the kernel would number them (``lib.rs``), so the order of every event is the
//! reference's. Only rings whose chunk runs nothing but rings come here: every message of
//! such a chunk's tag is one of these, so matching here equals matching there.
//! On the analytical backend (``network/analytical_native.py``) the core has no links: a
//! ring's message is one event at the backend's delay, priced once per ring by Python.
//! Times in ns, sizes in bytes, bandwidth in B/s.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::{reuse_or_push, Core, Msg, EV_GENERAL, EV_LOCAL, EV_RECV};

/// A message's match key: (chunk tag, src, dst, bytes).
type Key = (i64, u32, u32, i64);

/// A multiply-rotate hasher for the match tables' integer keys (std's SipHash took a tenth of
/// a ring-heavy step's time; the keys are the simulator's own numbers, not an attacker's).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type KeyMap<V> = HashMap<Key, V, BuildHasherDefault<KeyHasher>>;

/// No receive after this one in its key's queue (``Posted::next``).
const NONE: u32 = u32::MAX;

/// One posted receive: the ring phase waiting and the next receive posted with the same key
/// (a first-in first-out list threaded through a pool, so posting allocates nothing once the
/// pool has grown).
#[derive(Clone, Copy)]
struct Posted {
    ring: u32,
    next: u32,
}

/// One rank's ring phase (``RingPhase``'s state; ``packets`` is a count, every ring packet
/// going to the same peer).
#[derive(Clone, Copy, Default)]
pub struct Ring {
    pub rank: u32,
    pub dst: u32,
    pub src: u32,
    /// route id of rank -> dst, -1 when it crosses no link
    pub route: i64,
    /// the backend's delay of one message (ns) when it prices messages itself (the analytical
    /// backend: no links here); negative when the message takes its route
    pub delay: f64,
    pub tag: i64,
    pub msg: i64,
    pub first: u32,
    pub later: u32,
    pub reduce_all: bool,
    pub reduce_ar: bool,
    pub fast: bool,
    pub sends_left: u64,
    /// the core's stream (``queues.rs``) whose phase this is, or -1: Python hears its end
    pub owner: i64,
    pub(crate) zero_left: u32,
    pub(crate) nonzero_left: u32,
    pub(crate) toggle: bool,
    pub(crate) free: u32,
    pub(crate) pending: u32,
}

/// A ring phase's numbers as the engine hands them over (``Engine._ring_numbers``): the
/// dimension queue it runs in (whole collectives, ``queues.rs``), its peers, the route or the
/// backend's delay of its messages, message bytes, later insertions, sends and ``flags`` (1
/// reduce-scatter, 2 all-reduce, 4 the Fast path).
#[derive(Clone, Copy)]
pub struct PhaseParams {
    pub qid: u32,
    pub dst: u32,
    pub src: u32,
    pub route: i64,
    pub delay: f64,
    pub msg: i64,
    pub later: u32,
    pub sends: u64,
    pub flags: u32,
}

impl Ring {
    /// ``rank``'s ring phase of chunk ``tag`` with these numbers, ``first`` insertions a round,
    /// owned by a stream of the core (``owner`` >= 0) or by Python (-1).
    pub fn of(rank: u32, tag: i64, p: &PhaseParams, first: u32, owner: i64) -> Ring {
        Ring {
            rank,
            dst: p.dst,
            src: p.src,
            route: p.route,
            delay: p.delay,
            tag,
            msg: p.msg,
            first,
            later: p.later,
            reduce_all: p.flags & 1 != 0,
            reduce_ar: p.flags & 2 != 0,
            fast: p.flags & 4 != 0,
            sends_left: p.sends,
            owner,
            ..Ring::default()
        }
    }
}

/// The core's ring phases, their matching tables, the endpoint's prices and counters.
#[derive(Default)]
pub struct Rings {
    rings: Vec<Ring>,
    free_ids: Vec<u32>,
    /// per key, the first and last of its posted receives (indexes of ``pool``)
    posted: KeyMap<(u32, u32)>,
    pool: Vec<Posted>,
    pool_free: Vec<u32>,
    early: KeyMap<u32>,
    /// ASTRA-sim's endpoint: E, the Fast path's delay, local-mem-bw (B/s), whole-ns mode
    pub delay_ns: f64,
    pub fast_ns: f64,
    pub local_mem_bw: f64,
    pub compat: bool,
    /// messages sent, bytes sent, messages delivered (the backend's counters add them)
    pub sent: u64,
    pub bytes_sent: f64,
    pub delivered: u64,
}

impl Rings {
    /// ``AstraEndpoint.reduction_ns``: three memory passes, each truncated in whole-ns mode.
    fn reduction_ns(&self, nbytes: i64) -> f64 {
        let one = nbytes as f64 / self.local_mem_bw * 1e9;
        3.0 * if self.compat { one.trunc() } else { one }
    }

    /// (receiver, chunk tag, sender, bytes) of every receive posted and not matched.
    pub fn waiting(&self) -> Vec<(u32, i64, u32, i64)> {
        let mut out = Vec::new();
        for (&(tag, src, dst, nbytes), &(first, _)) in &self.posted {
            let mut at = first;
            while at != NONE {
                out.push((dst, tag, src, nbytes));
                at = self.pool[at as usize].next;
            }
        }
        out.sort_unstable();
        out
    }
}

/// ``RoundedPhase._next_is_processed``: count one insertion; true when it reduces.
fn next_is_processed(r: &mut Ring) -> bool {
    if r.zero_left == 0 && r.nonzero_left == 0 {
        r.zero_left = r.first;
        r.nonzero_left = r.later;
        r.toggle = !r.toggle;
    }
    if r.zero_left > 0 {
        r.zero_left -= 1;
        return false;
    }
    r.nonzero_left -= 1;
    r.reduce_all || (r.reduce_ar && r.toggle)
}

impl Core {
    /// Take a ring phase over at ``now`` (the kernel's time; ``seq`` a fresh number of its
    /// counter) and make its first insertions (``RingPhase.start``). Returns its id.
    pub(crate) fn ring_start(&mut self, ring: Ring, now: f64, seq: u64) -> u32 {
        self.now = now;
        self.seq = seq;
        self.sub = 0;
        let id = self.ring_add(ring);
        self.publish();
        id
    }

    /// Take a ring phase over now and make its first insertions (``RingPhase.start``).
    pub(crate) fn ring_add(&mut self, ring: Ring) -> u32 {
        let first = ring.first;
        let rings = &mut self.rings;
        let id = reuse_or_push(&mut rings.rings, &mut rings.free_ids, ring);
        for _ in 0..first {
            self.ring_insert(id);
        }
        id
    }

    /// The stream that owns ring ``id`` (-1: Python's).
    pub(crate) fn ring_owner(&self, id: u32) -> i64 {
        self.rings.rings[id as usize].owner
    }

    /// ``RingPhase._insert`` and the engine's ``bundle``: one more packet, and its insertion
    /// over after the endpoint's delay (plus the reduction when it reduces).
    pub(crate) fn ring_insert(&mut self, id: u32) {
        let rings = &mut self.rings;
        let r = &mut rings.rings[id as usize];
        let processed = next_is_processed(r);
        r.pending += 1;
        let (fast, msg) = (r.fast, r.msg);
        let mut delay = if fast { rings.fast_ns } else { rings.delay_ns };
        if processed && msg != 0 {
            delay += rings.reduction_ns(msg);
        }
        let at = self.now + delay;
        self.schedule(at, EV_GENERAL, id);
    }

    /// ``RingPhase.on_general``: a slot frees and the next packet goes if it can. True when
    /// the phase is over (its id is free again; the engine's ``finish`` runs next).
    pub(crate) fn ring_general(&mut self, id: u32) -> bool {
        self.rings.rings[id as usize].free += 1;
        self.ring_ready(id);
        let r = &self.rings.rings[id as usize];
        if r.sends_left == 0 && r.free == r.first {
            self.rings.free_ids.push(id);
            return true;
        }
        false
    }

    /// ``RingPhase._ready``: send the next packet to the peer ahead and post its receive
    /// from the peer behind, if a packet is due and a slot is free.
    fn ring_ready(&mut self, id: u32) {
        let r = &mut self.rings.rings[id as usize];
        if r.pending == 0 || r.sends_left == 0 || r.free == 0 {
            return;
        }
        r.pending -= 1;
        r.sends_left -= 1;
        r.free -= 1;
        let r = *r;
        let rings = &mut self.rings;
        rings.sent += 1;
        rings.bytes_sent += r.msg as f64;
        let msg = Msg {
            route: r.route.max(0) as u32,
            hop: 0,
            nbytes: r.msg as f64,
            ring_tag: r.tag,
            ring_src: r.rank,
            ring_dst: r.dst,
            ring_bytes: r.msg,
        };
        let slot = self.new_message(msg);
        if r.delay >= 0.0 {
            let at = self.now + r.delay; // the analytical backend's one event per message
            self.schedule(at, EV_LOCAL, slot);
        } else if r.route < 0 {
            self.rings.delivered += 1; // as the backend counts one that crosses no link
            let now = self.now;
            self.schedule(now, EV_LOCAL, slot);
        } else {
            self.enter_link(slot);
        }
        self.ring_post((r.tag, r.src, r.rank, r.msg), id);
    }

    /// The engine's ``_post``: match a message that came first (``on_recv`` in this tick) or
    /// wait for one.
    fn ring_post(&mut self, key: Key, id: u32) {
        let rings = &mut self.rings;
        if let Some(count) = rings.early.get_mut(&key) {
            *count -= 1;
            if *count == 0 {
                rings.early.remove(&key);
            }
            let now = self.now;
            self.schedule(now, EV_RECV, id);
        } else {
            let entry = Posted { ring: id, next: NONE };
            let at = reuse_or_push(&mut rings.pool, &mut rings.pool_free, entry);
            match rings.posted.get_mut(&key) {
                Some(ends) => {
                    rings.pool[ends.1 as usize].next = at;
                    ends.1 = at;
                }
                None => {
                    rings.posted.insert(key, (at, at));
                }
            }
        }
    }

    /// The engine's ``_arrive`` for a ring message (``routed``: it crossed links; one that
    /// crossed none was counted delivered when sent).
    pub(crate) fn ring_arrive(&mut self, slot: u32, routed: bool) {
        self.free_slots.push(slot);
        let m = self.msgs[slot as usize];
        let rings = &mut self.rings;
        if routed {
            rings.delivered += 1;
        }
        let key = (m.ring_tag, m.ring_src, m.ring_dst, m.ring_bytes);
        match rings.posted.get_mut(&key) {
            Some(ends) => {
                let first = ends.0;
                let Posted { ring: id, next } = rings.pool[first as usize];
                if next == NONE {
                    rings.posted.remove(&key);
                } else {
                    ends.0 = next;
                }
                rings.pool_free.push(first);
                self.ring_insert(id); // on_recv
            }
            None => *rings.early.entry(key).or_insert(0) += 1,
        }
    }
}

/// Set the endpoint the core's ring phases are priced with (``AstraEndpoint``'s E, Fast-path
/// delay, local-mem-bw in B/s, whole-ns mode).
///
/// # Safety
/// ``core`` comes from ``lc_new``.
#[no_mangle]
pub unsafe extern "C" fn lc_ring_endpoint(core: *mut Core, delay_ns: f64, fast_ns: f64, local_mem_bw: f64, compat: i32) {
    let r = &mut (*core).rings;
    r.delay_ns = delay_ns;
    r.fast_ns = fast_ns;
    r.local_mem_bw = local_mem_bw;
    r.compat = compat != 0;
}
