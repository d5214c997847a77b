"""Memory timing model of a PCM main memory: channels x banks, a scheduler, queues, write drain.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory); runs on the event kernel
(``engine/kernel.py``: time in float ns). Times in ns.

Organisation. Lines are interleaved across channels first, then banks: line ``a`` goes to
channel ``a % channels`` and bank ``(a // channels) % banks``. Requests that find their queue
full wait, in order, in an unbounded buffer before the controller (NVMain refuses them and the
cache retries) and enter the queue as it frees; their latency counts from arrival at that
buffer. Service is non-preemptive (write pausing off): a read never interrupts a write.

Schedulers (``MemoryConfig.scheduler``), applied whenever a bank is free. NVMain's two
controllers are modelled from their definitions (``MemControl/FRFCFS``, ``MemControl/FRFCFS-WQF``
and ``src/MemoryController.cpp`` in NVMain) without row buffers: every access senses or programs
the array, so "first ready" (row-buffer hits first, and the starvation rule that bounds them)
never applies and the rule reduces to the oldest ready request.

- ``frfcfs`` (NVMain ``FRFCFS``, the default): one transaction queue of ``queue`` (32)
  requests per channel, reads and writes alike; a free bank takes the oldest queued request for
  it. A request beyond the 32 waits outside even when its bank is idle.
- ``frfcfs-wqf`` (NVMain ``FRFCFS-WQF``): a read queue (``read_queue``) and a write queue
  (``write_queue``) per channel. A drain starts when the write queue holds ``drain_high``
  requests and ends when ``drain_low`` remain; while draining only writes are scheduled and no
  write may enter the queue, otherwise only reads (writes wait for the next drain). When
  :meth:`Controller.flush` is called (the end of a run, NVMain's ``Drain``), writes go whenever
  the read queue is empty.
- ``read-first`` (issue 11): per bank a read and a write queue; when the bank's write queue
  holds ``drain_high`` it drains writes, oldest first, until ``drain_low`` remain; otherwise the
  oldest read; otherwise, with no read waiting, the oldest write.

A read of a line that has a write waiting in the controller is answered from that write
(forwarded): it takes one channel burst and no bank time, and sees the new data.

Service. A write first moves its 64 B over the channel (``burst_ns``, the channel is a FCFS
resource shared by its banks), then programs the array for its line write time; a read senses
the array, then moves its data over the channel. Latency: from arrival at the controller to
the end of the array write (writes) or of the data transfer (reads).

What the array time is comes from a :class:`ServiceModel`: fixed times for tests, or
:class:`LineStore` which knows each line's stored form under a scheme.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from trainsim.engine.kernel import EventQueue
from trainsim.memory.pcm.cell import Spread
from trainsim.memory.pcm.config import CellConfig, MemoryConfig, Scheduler
from trainsim.memory.pcm.trilevel import LineProfiles


class Request:
    """One line request. ``content``: pool index of the data a write stores (-1 for reads)."""

    __slots__ = (
        "rid",
        "is_write",
        "line",
        "content",
        "arrival_ns",
        "start_ns",
        "done_ns",
        "tri",
        "on_done",
        "tag",
    )

    def __init__(
        self,
        rid: int,
        is_write: bool,
        line: int,
        arrival_ns: float = 0.0,
        content: int = -1,
        on_done: Callable[[Request], None] | None = None,
        tag: int = -1,
    ) -> None:
        self.rid = rid
        self.is_write = is_write
        self.line = line
        self.content = content
        self.arrival_ns = arrival_ns
        self.start_ns = -1.0
        self.done_ns = -1.0
        self.tri = False
        self.on_done = on_done
        self.tag = tag


class ServiceModel(Protocol):
    """Array time of a request at the moment its service starts."""

    def write_ns(self, req: Request) -> float: ...

    def read_ns(self, req: Request) -> float: ...


@dataclass
class FixedService:
    """Every read senses for ``read`` ns, every write programs for ``write`` ns."""

    read: float
    write: float

    def write_ns(self, req: Request) -> float:
        return self.write

    def read_ns(self, req: Request) -> float:
        return self.read


class LineStore:
    """Service times from line contents: which pool line each address holds, stored how.

    ``profiles`` describe a pool of contents under one scheme (``trilevel.profile_lines``).
    An address not yet written holds pool line ``hash(address) % len(pool)`` (a deterministic
    initial image); a write stores its pool line when its service starts. Write times draw the
    per-cell spread from ``seed``, two uniform numbers per write, the same sequence whatever
    the scheme (so schemes are compared on common random numbers).
    """

    def __init__(self, profiles: LineProfiles, cell: CellConfig, seed: int = 0) -> None:
        self.p = profiles
        self.cell = cell
        self.spread = Spread.of(cell)
        self._form = profiles.form.tolist()
        self._read = profiles.read_ns.tolist()
        # per line and group: nominal iterations and the distribution of the cells' largest
        # offset (F ** n), so a write inverts it in plain Python (same rule as cell.write_time_ns)
        offsets = self.spread.offsets.tolist()
        tables = []
        for nominal, n in profiles.groups:
            cdf_max = self.spread.cdf[None, :] ** np.maximum(n, 1)[:, None]
            tables.append(
                [
                    (int(a), int(c), row)
                    for a, c, row in zip(nominal, n, cdf_max.tolist(), strict=True)
                ]
            )
        self._groups = list(zip(*tables, strict=True))
        self._fixed = profiles.fixed.tolist()
        self._offsets = offsets
        self.holds: dict[int, int] = {}
        self._rng = np.random.default_rng(seed)
        self._u: list[list[float]] = []
        self._next = 0
        self.relaxed_writes = 0
        self.writes = 0
        self.tri_reads = 0
        self.reads = 0

    def initial(self, line: int) -> int:
        return ((line * 2654435761) >> 7) % len(self.p)

    def write_ns(self, req: Request) -> float:
        if self._next >= len(self._u):
            self._u = self._rng.random((4096, 2)).tolist()
            self._next = 0
        u = self._u[self._next]
        self._next += 1
        i = req.content
        self.holds[req.line] = i
        tri = self._form[i] in (1, 3)
        req.tri = tri
        self.writes += 1
        self.relaxed_writes += tri
        iters = self._fixed[i]
        for g, (nominal, n, cdf_max) in enumerate(self._groups[i]):
            if n:
                k = 0
                while cdf_max[k] < u[g] and k < len(cdf_max) - 1:
                    k += 1
                iters = max(iters, nominal + self._offsets[k], 1)
        return self.cell.reset_ns + self.cell.set_ns * iters

    def read_ns(self, req: Request) -> float:
        i = self.holds.get(req.line)
        if i is None:
            i = self.initial(req.line)
        req.content = i
        tri = self._form[i] in (1, 3)
        req.tri = tri
        self.reads += 1
        self.tri_reads += tri
        return self._read[i]


class _Bank:
    __slots__ = (
        "rq",
        "wq",
        "rwait",
        "wwait",
        "busy",
        "draining",
        "busy_ns",
        "channel",
        "index",
        "pending",
    )

    def __init__(self, channel: int, index: int) -> None:
        self.rq: deque[Request] = deque()  # read-first: the bank's own queues
        self.wq: deque[Request] = deque()
        self.rwait: deque[Request] = deque()
        self.wwait: deque[Request] = deque()
        self.busy = False
        self.draining = False
        self.busy_ns = 0.0
        self.channel = channel
        self.index = index
        self.pending: dict[int, int] = {}  # line -> writes to it waiting in the controller


class _Channel:
    """Channel-wide queues of NVMain's controllers (``frfcfs``: ``rq`` holds everything)."""

    __slots__ = ("rq", "wq", "rwait", "wwait", "draining", "flushing")

    def __init__(self) -> None:
        self.rq: list[Request] = []  # arrival order; small (32), scanned per pick
        self.wq: list[Request] = []
        self.rwait: deque[Request] = deque()
        self.wwait: deque[Request] = deque()
        self.draining = False
        self.flushing = False


def _take_oldest(queue: list[Request], bank: int, bank_of: Callable[[int], int]) -> Request | None:
    """Remove and return the oldest request of ``queue`` for ``bank`` (None if there is none)."""
    for i, req in enumerate(queue):
        if bank_of(req.line) == bank:
            return queue.pop(i)
    return None


class Controller:
    """The memory controller and its banks (see the module docstring for the rules)."""

    def __init__(self, eq: EventQueue, cfg: MemoryConfig, service: ServiceModel) -> None:
        self.eq = eq
        self.cfg = cfg
        self.service = service
        self.banks = [
            _Bank(c, c * cfg.banks + b) for c in range(cfg.channels) for b in range(cfg.banks)
        ]
        self.chans = [_Channel() for _ in range(cfg.channels)]
        self.channel_free = [0.0] * cfg.channels
        self.done: list[Request] = []
        self.order: list[Request] = []  # service order, for inspection
        self.forwarded = 0
        self._pick = {
            Scheduler.READ_FIRST: self._pick_read_first,
            Scheduler.FRFCFS: self._pick_frfcfs,
            Scheduler.FRFCFS_WQF: self._pick_wqf,
        }[cfg.scheduler]

    def bank_of(self, line: int) -> int:
        ch = line % self.cfg.channels
        return ch * self.cfg.banks + (line // self.cfg.channels) % self.cfg.banks

    def submit(self, req: Request) -> None:
        """A request arrives now (``req.arrival_ns`` is set to now)."""
        req.arrival_ns = self.eq.now
        bank = self.banks[self.bank_of(req.line)]
        if req.is_write:
            bank.pending[req.line] = bank.pending.get(req.line, 0) + 1
        elif req.line in bank.pending:
            self.forwarded += 1
            req.start_ns = self.eq.now
            self._transfer(bank, self._forward_done, req)
            return
        if self.cfg.scheduler is Scheduler.READ_FIRST:
            if req.is_write:
                (bank.wq if len(bank.wq) < self.cfg.write_queue else bank.wwait).append(req)
            else:
                (bank.rq if len(bank.rq) < self.cfg.read_queue else bank.rwait).append(req)
            if not bank.busy:
                self._start(bank)
            return
        ch = self.chans[bank.channel]
        (ch.wwait if req.is_write else ch.rwait).append(req)
        self._admit(ch)
        self._kick(ch)

    def flush(self) -> None:
        """No more requests will arrive: let writes held for a drain go (NVMain's ``Drain``)."""
        for ch in self.chans:
            ch.flushing = True
            self._kick(ch)

    # -- NVMain's controllers: channel queues ---------------------------------------------

    def _admit(self, ch: _Channel) -> None:
        """Move waiting requests into the channel's queues as room (and the drain) allows."""
        cfg = self.cfg
        if cfg.scheduler is Scheduler.FRFCFS:
            # one queue, arrival order across reads and writes
            while len(ch.rq) < cfg.queue and (ch.rwait or ch.wwait):
                r = ch.rwait[0] if ch.rwait else None
                w = ch.wwait[0] if ch.wwait else None
                take_w = r is None or (w is not None and w.arrival_ns < r.arrival_ns)
                if take_w:
                    ch.rq.append(ch.wwait.popleft())
                else:
                    ch.rq.append(ch.rwait.popleft())
            return
        while ch.rwait and len(ch.rq) < cfg.read_queue:
            ch.rq.append(ch.rwait.popleft())
        if not ch.draining:  # during a drain no write can enter the write queue
            while ch.wwait and len(ch.wq) < cfg.write_queue:
                ch.wq.append(ch.wwait.popleft())
        self._update_drain(ch)

    def _update_drain(self, ch: _Channel) -> None:
        if not ch.draining and len(ch.wq) >= self.cfg.drain_high:
            ch.draining = True
        elif ch.draining and len(ch.wq) <= self.cfg.drain_low:
            ch.draining = False
            self._admit(ch)  # writes refused during the drain may enter now

    def _kick(self, ch: _Channel) -> None:
        """Start every idle bank of the channel that has work under the current rules.

        Banks in index order; only those with a queued request are tried (the others would
        find nothing), so the cost follows the queue (32), not the bank count.
        """
        wqf = self.cfg.scheduler is Scheduler.FRFCFS_WQF
        queue = ch.wq if wqf and (ch.draining or (ch.flushing and not ch.rq)) else ch.rq
        for index in sorted({self.bank_of(req.line) for req in queue}):
            bank = self.banks[index]
            if not bank.busy:
                self._start(bank)

    def _pick_frfcfs(self, bank: _Bank) -> Request | None:
        ch = self.chans[bank.channel]
        req = _take_oldest(ch.rq, bank.index, self.bank_of)
        if req is not None:
            self._admit(ch)
        return req

    def _pick_wqf(self, bank: _Bank) -> Request | None:
        ch = self.chans[bank.channel]
        if ch.draining or (ch.flushing and not ch.rq):
            req = _take_oldest(ch.wq, bank.index, self.bank_of)
            if req is not None:
                self._update_drain(ch)
        else:
            req = _take_oldest(ch.rq, bank.index, self.bank_of)
        if req is not None:
            self._admit(ch)
        return req

    # -- issue 11's per-bank discipline ---------------------------------------------------

    def _pick_read_first(self, bank: _Bank) -> Request | None:
        cfg = self.cfg
        if bank.draining:
            if len(bank.wq) <= cfg.drain_low:
                bank.draining = False
        elif len(bank.wq) >= cfg.drain_high:
            bank.draining = True
        if bank.draining or (not bank.rq and bank.wq):
            req = bank.wq.popleft()
            if bank.wwait:
                bank.wq.append(bank.wwait.popleft())
            return req
        if bank.rq:
            req = bank.rq.popleft()
            if bank.rwait:
                bank.rq.append(bank.rwait.popleft())
            return req
        return None

    def _start(self, bank: _Bank) -> None:
        req = self._pick(bank)
        if req is None:
            bank.busy = False
            return
        bank.busy = True
        cfg = self.cfg
        now = self.eq.now
        req.start_ns = now
        self.order.append(req)
        if req.is_write:
            left = bank.pending[req.line] - 1
            if left:
                bank.pending[req.line] = left
            else:
                del bank.pending[req.line]
            xfer = max(now, self.channel_free[bank.channel])
            self.channel_free[bank.channel] = xfer + cfg.burst_ns
            end = xfer + cfg.burst_ns + self.service.write_ns(req)
            self.eq.schedule_at(end, self._finish, (bank, req))
        else:
            self.eq.schedule(self.service.read_ns(req), self._sensed, (bank, req))
        if cfg.scheduler is not Scheduler.READ_FIRST:
            # the pick may have let a request for an idle bank into the queue, or ended a drain
            self._kick(self.chans[bank.channel])

    def _transfer(self, bank: _Bank, then: Callable[[Any], None], arg: Any) -> None:
        """Move one line over the bank's channel (FCFS), then call ``then(arg)``."""
        xfer = max(self.eq.now, self.channel_free[bank.channel])
        self.channel_free[bank.channel] = xfer + self.cfg.burst_ns
        self.eq.schedule_at(xfer + self.cfg.burst_ns, then, arg)

    def _sensed(self, arg: tuple[_Bank, Request]) -> None:
        self._transfer(arg[0], self._finish, arg)

    def _forward_done(self, req: Request) -> None:
        req.done_ns = self.eq.now
        self.done.append(req)
        if req.on_done is not None:
            req.on_done(req)

    def _finish(self, arg: tuple[_Bank, Request]) -> None:
        bank, req = arg
        req.done_ns = self.eq.now
        bank.busy_ns += req.done_ns - req.start_ns
        self.done.append(req)
        if req.on_done is not None:
            req.on_done(req)
        self._start(bank)

    def latencies(self, writes: bool) -> NDArray[np.float64]:
        """Latencies (ns) of the completed reads or writes."""
        return np.array([r.done_ns - r.arrival_ns for r in self.done if r.is_write == writes])

    def utilization(self, horizon_ns: float) -> float:
        """Mean fraction of ``horizon_ns`` the banks spent serving requests."""
        if horizon_ns <= 0:
            return 0.0
        return float(np.mean([b.busy_ns for b in self.banks]) / horizon_ns)
