"""Discrete-event kernel: the bottom layer of the map (DESIGN.md, "Layers").

Time is a float number of **nanoseconds** (one tick = 1 ns). This is the one place where the
package does not use seconds: ASTRA-sim's arithmetic is whole nanoseconds, and float ns hold
integers exactly up to 2**53 ns (104 days), so the compatibility mode stays exact. Everything
above the system layer sees seconds.

Events are ``(time, seq, callback, arg)`` tuples on a heap; ``seq`` comes from a counter, so
events at the same time run in the order they were scheduled (ASTRA-sim's order as well). No
event objects, no generators. Cancellation is the caller's business (lazy deletion with a
version token inside ``arg``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import count
from typing import Any

Callback = Callable[[Any], None]


class EventQueue:
    """A heap-driven clock. ``now`` is the time (ns) of the event being processed."""

    __slots__ = ("now", "_heap", "_seq", "events_processed")

    def __init__(self) -> None:
        self.now: float = 0.0
        self._heap: list[tuple[float, int, Callback, Any]] = []
        self._seq = count()
        self.events_processed = 0

    def schedule(self, delay_ns: float, callback: Callback, arg: Any = None) -> None:
        """Run ``callback(arg)`` ``delay_ns`` after now (0 runs later in the current tick)."""
        heapq.heappush(self._heap, (self.now + delay_ns, next(self._seq), callback, arg))

    def schedule_at(self, time_ns: float, callback: Callback, arg: Any = None) -> None:
        """Run ``callback(arg)`` at absolute time ``time_ns`` (never before now)."""
        if time_ns < self.now:
            raise ValueError(f"cannot schedule at {time_ns} ns, before now ({self.now} ns)")
        heapq.heappush(self._heap, (time_ns, next(self._seq), callback, arg))

    def __len__(self) -> int:
        return len(self._heap)

    def run(
        self,
        until_ns: float | None = None,
        *,
        tick: Callable[[], None] | None = None,
        tick_every: int = 100_000,
    ) -> float:
        """Process events in time order until the heap is empty (or past ``until_ns``).

        ``tick()`` (for progress displays) is called every ``tick_every`` events. Returns the
        time of the last processed event.
        """
        heap = self._heap
        pop = heapq.heappop
        processed = 0
        try:
            if tick is not None:
                limit = float("inf") if until_ns is None else until_ns
                countdown = tick_every
                while heap and heap[0][0] <= limit:
                    t, _, callback, arg = pop(heap)
                    self.now = t
                    processed += 1
                    callback(arg)
                    countdown -= 1
                    if not countdown:
                        countdown = tick_every
                        tick()
            elif until_ns is None:
                while heap:
                    t, _, callback, arg = pop(heap)
                    self.now = t
                    processed += 1
                    callback(arg)
            else:
                while heap and heap[0][0] <= until_ns:
                    t, _, callback, arg = pop(heap)
                    self.now = t
                    processed += 1
                    callback(arg)
        finally:
            self.events_processed += processed
        return self.now
