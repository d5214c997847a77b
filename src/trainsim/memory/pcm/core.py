"""Closed-loop cores for the PCM study: a reorder-buffer (ROB) model driven by cache misses.

Part of ``memory/pcm`` (DESIGN.md, "Layers": memory); runs on the event kernel. Times in ns,
instructions counted, IPC per core.

A first-order out-of-order core (after Karkhanis and Smith, "A first-order superscalar
processor model", ISCA 2004): instructions dispatch and retire in order at ``width`` per
cycle; everything but last-level-cache misses completes at once. A miss issues a line read to
the memory and completes when the data returns. Miss positions: gaps between misses are
geometric with mean ``1000 / mpki`` instructions. With ``dt = 1 / (width * f)`` ns per
instruction slot, for miss ``j`` at instruction ``m_j``:

- dispatch: ``D_j = max(D_{j-1} + (m_j - m_{j-1}) dt, R(m_j - rob))``: the ROB holds at most
  ``rob`` instructions, so ``m_j`` enters only when instruction ``m_j - rob`` has retired;
- retire of the instruction ``n`` after the last miss ``i <= n``: ``R(n) = R_i + (n - m_i) dt``;
- retire of a miss: ``R_j = max(C_j, R_{j-1} + (m_j - m_{j-1}) dt, D_j + dt)``, ``C_j`` its
  completion.

Misses within one ROB window overlap (memory-level parallelism); a long read at the head stops
retirement and, once the ROB fills, dispatch. ``writebacks_per_miss`` of the misses also send a
dirty line back (a posted write that never stalls the core). The core's IPC is its
instructions over the cycles until its last instruction retires.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from trainsim.engine.kernel import EventQueue
from trainsim.memory.pcm.config import CoreConfig
from trainsim.memory.pcm.timing import Request


class Core:
    """One core issuing reads (and write-backs) to ``submit`` as its ROB allows."""

    def __init__(
        self,
        eq: EventQueue,
        submit: Callable[[Request], None],
        cfg: CoreConfig,
        seed: int,
        pool_size: int,
        footprint_lines: int = 1 << 20,
    ) -> None:
        self.eq, self.submit, self.cfg = eq, submit, cfg
        rng = np.random.default_rng(seed)
        n = cfg.instructions
        gaps = rng.geometric(min(1.0, cfg.mpki / 1000.0), size=int(n * cfg.mpki / 1000 * 1.5) + 16)
        miss = np.cumsum(gaps) - 1
        miss = miss[miss < n]
        self.m = miss.tolist()
        k = len(self.m)
        # the last miss at or before instruction m_j - rob (-1: none), for the ROB constraint
        self.blocker = (np.searchsorted(miss, miss - cfg.rob, side="right") - 1).tolist()
        self.read_line = rng.integers(0, footprint_lines, k).tolist()
        self.wb = (rng.random(k) < cfg.writebacks_per_miss).tolist()
        self.wb_line = rng.integers(0, footprint_lines, k).tolist()
        self.wb_content = rng.integers(0, pool_size, k).tolist()
        self.dt = 1.0 / (cfg.width * cfg.freq_ghz)
        self.D = [0.0] * k
        self.C: list[float | None] = [None] * k
        self.R = [0.0] * k
        self.next = 0
        self.retired = 0
        self.finish_ns: float | None = None
        self.rid = seed * 10_000_000

    def start(self) -> None:
        self._dispatch()
        if not self.m:
            self.finish_ns = self.cfg.instructions * self.dt

    def _dispatch(self) -> None:
        m, dt, rob = self.m, self.dt, self.cfg.rob
        while self.next < len(m):
            j = self.next
            t = (self.D[j - 1] + (m[j] - m[j - 1]) * dt) if j else m[0] * dt
            i = self.blocker[j]
            if i >= 0:
                if i >= self.retired:
                    return  # the ROB is full behind miss i; wait for it to retire
                t = max(t, self.R[i] + (m[j] - rob - m[i]) * dt)
            self.D[j] = t
            self.next += 1
            self.eq.schedule_at(max(t, self.eq.now), self._issue, j)

    def _issue(self, j: int) -> None:
        self.rid += 1
        self.submit(Request(self.rid, False, self.read_line[j], on_done=self._complete, tag=j))
        if self.wb[j]:
            self.rid += 1
            self.submit(Request(self.rid, True, self.wb_line[j], content=self.wb_content[j]))

    def _complete(self, req: Request) -> None:
        self.C[req.tag] = self.eq.now
        m, dt, C, R = self.m, self.dt, self.C, self.R
        while self.retired < len(m):
            i = self.retired
            ci = C[i]
            if ci is None:
                break
            prev = R[i - 1] + (m[i] - m[i - 1]) * dt if i else m[0] * dt
            R[i] = max(ci, prev, self.D[i] + dt)
            self.retired += 1
        if self.retired == len(m):
            last = R[-1] + (self.cfg.instructions - 1 - m[-1]) * dt
            self.finish_ns = max(last, self.cfg.instructions * dt)
        self._dispatch()

    @property
    def ipc(self) -> float:
        """Instructions per core cycle (nan until the core has finished)."""
        if self.finish_ns is None:
            return float("nan")
        return self.cfg.instructions / (self.finish_ns * self.cfg.freq_ghz)
