"""The bookkeeping shared by endpoint models whose collectives compete with compute for the
rank's HBM bandwidth and compute units (endpoint layer, beside ``astra``; used by ``shared``
and ``ace``; DESIGN.md: the endpoint models "the HBM and compute units it borrows").

A *pipe* is a first-come first-served server of one rank: a transfer of b bytes at r B/s
occupies it for ``b / r x 1e9`` ns, starting when the pipe frees (``Pipe.reserve``). The
HBM pipe is the path by which the endpoint moves collective data through HBM (the baseline's
communication kernels, ACE's DMA engine); ACE adds an ALU pipe. While a rank's HBM pipe is
busy its collectives use the pipe's rate of HBM bandwidth, and compute kernels get the rest
(``compute_share``); the model calls the executor back (``attach``) at every tick where that
changes, so kernels in flight are re-rated. Every reservation is logged as (start ns, end ns,
bytes) for the results (:class:`CommUsage`). Times in ns on the event kernel's clock, bytes,
rates in B/s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class CommUsage:
    """What one rank's collectives used: HBM transfers as (start ns, end ns, bytes), the bytes
    the rank sent on the network, the ns its HBM pipe and its ALU pipe were busy."""

    hbm: list[tuple[float, float, float]] = field(default_factory=list)
    network_bytes: float = 0.0
    hbm_bytes: float = 0.0
    alu_bytes: float = 0.0


class Pipe:
    """A FIFO server per rank (module docstring). A rank's pipe is busy from the start of a
    transfer it took while idle (``since``) to the end of the last one it holds."""

    __slots__ = ("busy_until", "since")

    def __init__(self) -> None:
        self.busy_until: dict[int, float] = {}
        self.since: dict[int, float] = {}

    def reserve(self, rank: int, now_ns: float, nbytes: float, rate: float) -> tuple[float, float]:
        """Occupy ``rank``'s pipe for ``nbytes`` at ``rate`` B/s from ``now_ns`` or when it
        frees: (start, end) in ns."""
        until = self.busy_until.get(rank, 0.0)
        if until < now_ns:
            self.since[rank] = now_ns
        start = max(now_ns, until)
        end = start + nbytes / rate * 1e9
        self.busy_until[rank] = end
        return start, end

    def busy(self, rank: int, now_ns: float) -> bool:
        return self.since.get(rank, 0.0) <= now_ns < self.busy_until.get(rank, 0.0)


class ResourceEndpoint:
    """Base of the resource-sharing endpoint models: the HBM pipe, the rank's collective
    activity, the executor's callback and the usage logs (module docstring). Subclasses set
    ``hbm_bw`` (the rank's HBM bandwidth, B/s) and ``delay_ns`` (per insertion) and define
    ``compute_share`` and the data hooks of ``protocol.SharedResources``."""

    time_invariant = False

    def __init__(self, hbm_bw: float, delay_ns: float) -> None:
        self.hbm_bw = float(hbm_bw)
        self.delay_ns = float(delay_ns)
        self.hbm = Pipe()
        self.active: dict[int, int] = {}
        self.logs: dict[int, CommUsage] = {}
        self._queue: Any = None
        self._on_change: Callable[[int], None] | None = None

    # -- EndpointModel ------------------------------------------------------------------------
    def insertion_ns(self, rank: int, now_ns: float, fast: bool) -> float:
        return self.delay_ns

    # -- SharedResources ----------------------------------------------------------------------
    def attach(self, queue: Any, on_change: Callable[[int], None]) -> None:
        self._queue = queue
        self._on_change = on_change

    def collective_active(self, rank: int, now_ns: float, active: bool) -> None:
        self.active[rank] = self.active.get(rank, 0) + (1 if active else -1)
        self._changed(rank)

    def max_chunk_bytes(self) -> int | None:
        return None

    def may_begin(self, rank: int, now_ns: float, nbytes: int) -> bool:
        return True

    def usage(self) -> dict[int, CommUsage]:
        return self.logs

    # -- helpers --------------------------------------------------------------------------------
    def log(self, rank: int) -> CommUsage:
        usage = self.logs.get(rank)
        if usage is None:
            usage = self.logs[rank] = CommUsage()
        return usage

    def move_hbm(
        self, rank: int, now_ns: float, nbytes: float, rate: float, pipe: Pipe | None = None
    ) -> float:
        """``nbytes`` of collective HBM traffic of ``rank`` through its HBM pipe (or another
        one of its HBM ``pipe``s) at ``rate``: the end (ns). The executor hears when the pipe
        turns busy and when it turns idle."""
        if nbytes <= 0:
            return now_ns
        if pipe is None:
            pipe = self.hbm
        was_idle = pipe.busy_until.get(rank, 0.0) < now_ns or not pipe.busy(rank, now_ns)
        start, end = pipe.reserve(rank, now_ns, nbytes, rate)
        usage = self.log(rank)
        usage.hbm.append((start, end, nbytes))
        usage.hbm_bytes += nbytes
        queue = self._queue
        if was_idle and queue is not None:
            if start > queue.now:  # a transfer that starts later (after an insertion's delay)
                queue.schedule_at(start, self._busy_now, rank)
            else:
                self._changed(rank)
            queue.schedule_at(end, self._idle_check, (rank, pipe))
        return end

    def _busy_now(self, rank: int) -> None:
        self._changed(rank)

    def _idle_check(self, item: tuple[int, Pipe]) -> None:
        rank, pipe = item
        queue = self._queue
        until = pipe.busy_until[rank]
        if until > queue.now:
            queue.schedule_at(until, self._idle_check, item)
        else:
            self._changed(rank)

    def _changed(self, rank: int) -> None:
        if self._on_change is not None:
            self._on_change(rank)
