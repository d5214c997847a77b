"""Remote memory expansion: ASTRA-sim's four modes (astra-sim-semantics.md, "Memory"), one
tier behind the memory seam (``memory.protocol.MemoryModel``; built by ``system.build``).

An access of ``b`` bytes takes ``latency + b / bandwidth``. ``PER_NPU_MEMORY_EXPANSION`` has no
queue; ``PER_NODE_MEMORY_EXPANSION`` serializes the accesses of the NPUs of one node
(node = rank // npus_per_node) on one FIFO server; ``MEMORY_POOL`` serializes every access on
one global FIFO. When an access completes its owner is told first (its next request joins
the queue), then the head of the queue starts: ASTRA-sim's tie-breaking.

In compatibility mode the bandwidth is ASTRA-sim's integer bytes/ns (25.6 GB/s becomes 25)
and the transfer time is truncated to whole ns. ASTRA-sim's remote memory has no capacity
limit (the tier's capacity is ``math.inf`` unless the platform file gives ``capacity_gb``, which
the generator's offload checks; accesses are never refused here). Times are the event kernel's ns, bandwidth B/s.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from trainsim.config.types import RemoteMemorySpec
from trainsim.engine import EventQueue
from trainsim.memory.protocol import Done, MemoryTier

NONE = "NO_MEMORY_EXPANSION"
PER_NPU = "PER_NPU_MEMORY_EXPANSION"
PER_NODE = "PER_NODE_MEMORY_EXPANSION"
POOL = "MEMORY_POOL"


class _FifoServer:
    """One memory server: accesses run one at a time in arrival order."""

    __slots__ = ("queue", "waiting", "busy")

    def __init__(self, queue: EventQueue) -> None:
        self.queue = queue
        self.waiting: deque[tuple[float, Done, Any]] = deque()
        self.busy = False

    def submit(self, duration_ns: float, on_done: Done, arg: Any) -> None:
        self.waiting.append((duration_ns, on_done, arg))
        if not self.busy:
            self._start_next()

    def _start_next(self) -> None:
        if not self.waiting:
            self.busy = False
            return
        self.busy = True
        duration_ns, on_done, arg = self.waiting.popleft()
        self.queue.schedule(duration_ns, self._finish, (on_done, arg))

    def _finish(self, payload: tuple[Done, Any]) -> None:
        on_done, arg = payload
        self.busy = False
        on_done(arg)  # the owner's next request queues before the head starts
        if not self.busy:
            self._start_next()


class RemoteMemory:
    """Times MEM_LOAD / MEM_STORE accesses of every rank (a ``MemoryModel``)."""

    def __init__(self, spec: RemoteMemorySpec, queue: EventQueue, *, compat_astra: bool = False) -> None:
        self.spec = spec
        self.queue = queue
        self.compat_astra = compat_astra
        if compat_astra:
            self._bytes_per_ns = float(math.trunc(spec.bandwidth / 1e9))
        else:
            self._bytes_per_ns = spec.bandwidth / 1e9
        self._servers: dict[int, _FifoServer] = {}
        self.bytes_moved = 0

    @property
    def enabled(self) -> bool:
        return self.spec.mode != NONE

    @property
    def tiers(self) -> tuple[MemoryTier, ...]:
        """The remote tier (its bandwidth as accesses see it: ASTRA-sim's whole bytes/ns in
        compatibility mode), or none when there is no remote memory."""
        if not self.enabled:
            return ()
        return (MemoryTier(self.spec.mode, self.spec.latency_ns, self._bytes_per_ns * 1e9, self.spec.capacity),)

    def access_time_ns(self, nbytes: int) -> float:
        transfer = nbytes / self._bytes_per_ns if self._bytes_per_ns > 0 else math.inf
        if self.compat_astra:
            transfer = float(math.trunc(transfer))
        return self.spec.latency_ns + transfer

    def access(self, rank: int, nbytes: int, on_done: Done, arg: Any = None) -> None:
        """Start (or queue) one access of ``nbytes`` by ``rank``."""
        self.bytes_moved += nbytes
        duration = self.access_time_ns(nbytes)
        mode = self.spec.mode
        if mode == PER_NPU:
            self.queue.schedule(duration, on_done, arg)
            return
        key = rank // max(1, self.spec.npus_per_node) if mode == PER_NODE else 0
        server = self._servers.get(key)
        if server is None:
            server = self._servers[key] = _FifoServer(self.queue)
        server.submit(duration, on_done, arg)
