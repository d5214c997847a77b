//! Whole collectives of a rank in the core: its chunks (streams) in the rank's dimension queues
//! and their ring phases one after the other, as the collective engine runs them
//! (``system/collective_engine.py``: ``start_rank``, ``DimQueue.insert``, ``_fill``,
//! ``_init_stream``, ``_phase_over``, ``_chunk_done``; astra-sim-semantics.md C3, C5), so that
//! Python hears of a rank's collective once, at its end, with its chunks' spans. Only for
//! collectives whose phases are all rings, one queue per dimension and no smallest-chunk-first
//! ordering; the engine keeps a rank's streams either all here or all in Python.

use crate::ring::{PhaseParams, Ring};
use crate::{reuse_or_push, Core};

/// One chunk of one rank (``Stream``).
struct Stream {
    work: u32,
    rank: u32,
    tag: i64,
    chunk: u32,
    priority: i64,
    phases: Vec<PhaseParams>,
    pos: usize,
    initialized: bool,
}

/// One rank's share of one collective (``RankWork``): chunks not over, and each chunk's
/// [start, end] ns.
pub struct Work {
    chunks_left: u32,
    pub spans: Vec<f64>,
}

#[derive(Default)]
struct Queue {
    streams: Vec<u32>,
    running: u32,
}

#[derive(Default)]
pub struct Queues {
    streams: Vec<Option<Stream>>,
    free_streams: Vec<u32>,
    pub works: Vec<Work>,
    free_works: Vec<u32>,
    /// rank -> dimension queue id -> queue
    queues: Vec<Vec<Queue>>,
    /// chunks a queue runs at once (active chunks per dimension)
    limit: u32,
}

impl Queues {
    fn queue(&mut self, rank: u32, qid: u32) -> &mut Queue {
        let (r, q) = (rank as usize, qid as usize);
        if self.queues.len() <= r {
            self.queues.resize_with(r + 1, Vec::new);
        }
        let of_rank = &mut self.queues[r];
        if of_rank.len() <= q {
            of_rank.resize_with(q + 1, Queue::default);
        }
        &mut of_rank[q]
    }

    fn stream(&self, id: u32) -> &Stream {
        self.streams[id as usize].as_ref().expect("a live stream")
    }

    fn stream_mut(&mut self, id: u32) -> &mut Stream {
        self.streams[id as usize].as_mut().expect("a live stream")
    }

    /// ``DimQueue.insert``: after every started stream, then after every waiting stream of
    /// priority >= its own.
    fn insert(&mut self, rank: u32, qid: u32, id: u32) {
        self.queue(rank, qid);
        let Queues { streams, queues, .. } = self;
        let stream = |x: u32| streams[x as usize].as_ref().expect("a live stream");
        let priority = stream(id).priority;
        let order = &mut queues[rank as usize][qid as usize].streams;
        let mut i = 0;
        while i < order.len() && stream(order[i]).initialized {
            i += 1;
        }
        while i < order.len() && stream(order[i]).priority >= priority {
            i += 1;
        }
        order.insert(i, id);
    }
}

impl Core {
    /// A rank's collective taken over at ``now`` (``seq`` a fresh number of the kernel's
    /// counter): each chunk's phases, in chunk order; returns the work's id.
    pub(crate) fn work_start(
        &mut self,
        rank: u32,
        priority: i64,
        tag_base: i64,
        limit: u32,
        chunks: Vec<Vec<PhaseParams>>,
        now: f64,
        seq: u64,
    ) -> u32 {
        self.now = now;
        self.seq = seq;
        self.sub = 0;
        let q = &mut self.queues;
        q.limit = limit.max(1);
        let work = Work { chunks_left: chunks.len() as u32, spans: vec![-1.0; 2 * chunks.len()] };
        let wid = reuse_or_push(&mut q.works, &mut q.free_works, work);
        for (c, phases) in chunks.into_iter().enumerate() {
            let qid = phases[0].qid;
            let stream = Stream { work: wid, rank, tag: tag_base + c as i64, chunk: c as u32, priority, phases, pos: 0, initialized: false };
            let q = &mut self.queues;
            let id = reuse_or_push(&mut q.streams, &mut q.free_streams, Some(stream));
            q.insert(rank, qid, id);
            self.fill(rank, qid);
        }
        self.publish();
        wid
    }

    /// ``Engine._fill``: start waiting streams while the queue has room.
    fn fill(&mut self, rank: u32, qid: u32) {
        loop {
            let limit = self.queues.limit;
            let q = self.queues.queue(rank, qid);
            let i = q.running as usize;
            if i >= q.streams.len() || q.running >= limit {
                break;
            }
            let id = q.streams[i];
            q.running += 1;
            self.init_stream(id);
        }
    }

    /// ``Engine._init_stream``: the stream's current phase starts (a ring).
    fn init_stream(&mut self, id: u32) {
        let now = self.now;
        let q = &mut self.queues;
        let s = q.streams[id as usize].as_mut().expect("a live stream");
        s.initialized = true;
        if s.pos == 0 {
            let (work, chunk) = (s.work as usize, s.chunk as usize);
            let p = s.phases[0];
            let (rank, tag) = (s.rank, s.tag);
            q.works[work].spans[2 * chunk] = now;
            self.start_ring(rank, tag, p, id);
        } else {
            let p = s.phases[s.pos];
            let (rank, tag) = (s.rank, s.tag);
            self.start_ring(rank, tag, p, id);
        }
    }

    fn start_ring(&mut self, rank: u32, tag: i64, p: PhaseParams, owner: u32) {
        self.ring_add(Ring::of(rank, tag, &p, 1, owner as i64));
    }

    /// ``Engine._phase_over``: the stream's phase ended; it moves to its next phase's queue,
    /// or its chunk ends. Returns the work that ended with it, if one did.
    pub(crate) fn stream_phase_over(&mut self, id: u32) -> Option<u32> {
        let q = &mut self.queues;
        let (rank, old) = {
            let s = q.stream(id);
            (s.rank, s.phases[s.pos].qid)
        };
        let queue = q.queue(rank, old);
        let at = queue.streams.iter().position(|&x| x == id).expect("a running stream is in its queue");
        queue.streams.remove(at);
        let s = q.stream_mut(id);
        s.pos += 1;
        if s.pos < s.phases.len() {
            s.initialized = false;
            let new = s.phases[s.pos].qid;
            q.insert(rank, new, id);
            q.queue(rank, old).running -= 1;
            self.fill(rank, old);
            self.fill(rank, new);
            return None;
        }
        q.queue(rank, old).running -= 1;
        self.fill(rank, old);
        // ``_chunk_done``
        let now = self.now;
        let q = &mut self.queues;
        let s = q.streams[id as usize].take().expect("a live stream");
        q.free_streams.push(id);
        let work = &mut q.works[s.work as usize];
        work.spans[2 * s.chunk as usize + 1] = now;
        work.chunks_left -= 1;
        if work.chunks_left == 0 {
            q.free_works.push(s.work);
            return Some(s.work);
        }
        None
    }
}
