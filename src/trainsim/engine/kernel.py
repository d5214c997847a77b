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

import gc
import heapq
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import count
from typing import Any

from trainsim.errors import LivelockError

Callback = Callable[[Any], None]


STALL_LIMIT_EVENTS = 1 << 17
"""Events processed at one simulated time, with no sign of progress, before :meth:`EventQueue.run`
calls it a livelock (131,072: seconds of Python; a real step's bursts at one time are
far shorter, or show progress through the queue's ``progress_probe``)."""

WATCH_EVERY = 1 << 14
"""Events between two watchdog checks (the check runs per batch, not per event)."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (on again after it, if it was on).

    An event loop allocates millions of small objects that live on (records, per-node times)
    and makes almost no reference cycles, so the collector's passes over the growing heap find
    next to nothing: a fifth of a generated step's CPU time went to them. What cycles a run
    leaves are collected after it, as usual. Nothing the simulation computes depends on it.

    On the way out, what the block allocated is moved to the oldest generation (``gc.freeze``
    then ``gc.unfreeze``: two list splices) before the collector is back on: else its first
    young-generation pass walks every object the block made (0.3 s of a 4.7 M-event step, 7 %
    of its run). The oldest generation is still collected when Python next runs a full pass."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        gc.enable()


class EventQueue:
    """A heap-driven clock. ``now`` is the time (ns) of the event being processed.

    A watchdog turns a livelock (events that keep running without the clock advancing) into a
    :class:`~trainsim.errors.LivelockError`: after every batch of :data:`WATCH_EVERY` events
    it compares ``now`` with the batch's start; once :attr:`stall_limit_events` events have run
    at one time and ``progress_probe()`` (when set: a value that changes when work completes,
    such as nodes done and messages sent) has not changed, it stops. The error names the
    callback of the event that repeats and what each ``stall_reports`` callable says (a
    backend lists its flows). The per-event loop is unchanged; the check costs one comparison
    per batch.
    """

    __slots__ = (
        "now",
        "current_seq",
        "_heap",
        "_seq",
        "events_processed",
        "stall_limit_events",
        "progress_probe",
        "stall_reports",
    )

    def __init__(self) -> None:
        self.now: float = 0.0
        # the seq of the event being processed (-1 before the first; once the heap ran empty,
        # a fresh number: after every event scheduled so far, before any scheduled later):
        # with ``now``, where a call stands among the events (a compiled backend that keeps
        # some events off the heap asks it: network/congestion_native.py)
        self.current_seq = -1
        self._heap: list[tuple[float, int, Callback, Any]] = []
        self._seq = count()
        self.events_processed = 0
        self.stall_limit_events = STALL_LIMIT_EVENTS
        self.progress_probe: Callable[[], object] | None = None
        self.stall_reports: list[Callable[[], str]] = []

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

    def next_time(self) -> float | None:
        """The time (ns) of the next event to run; None when there is none."""
        return self._heap[0][0] if self._heap else None

    def run(
        self,
        until_ns: float | None = None,
        *,
        tick: Callable[[], None] | None = None,
        tick_every: int = 100_000,
    ) -> float:
        """Process events in time order until the heap is empty (or past ``until_ns``).

        ``tick()`` (for progress displays) is called every ``tick_every`` events. Returns the
        time of the last processed event. Raises :class:`~trainsim.errors.LivelockError` when
        the clock stops advancing (see the class docstring).
        """
        heap = self._heap
        pop = heapq.heappop
        limit = float("inf") if until_ns is None else until_ns
        batch = max(1, tick_every) if tick is not None else WATCH_EVERY
        processed = 0
        stalled = 0
        mark: object = None
        k = -1  # index in the batch of the event being processed
        try:
            while heap and heap[0][0] <= limit:
                before = self.now
                if until_ns is None:
                    for k in range(batch):  # noqa: B007 - k counts the events after the loop
                        if not heap:
                            break
                        t, self.current_seq, callback, arg = pop(heap)
                        self.now = t
                        callback(arg)
                    else:
                        k = batch
                else:
                    for k in range(batch):  # noqa: B007 - k counts the events after the loop
                        if not heap or heap[0][0] > limit:
                            break
                        t, self.current_seq, callback, arg = pop(heap)
                        self.now = t
                        callback(arg)
                    else:
                        k = batch
                processed += k
                full, k = k == batch, -1
                if not full:
                    continue
                if tick is not None:
                    tick()
                if self.now != before or not heap:
                    stalled = 0
                    continue
                if not stalled and self.progress_probe is not None:
                    mark = self.progress_probe()  # the window starts after this batch
                stalled += batch
                if stalled > self.stall_limit_events:
                    if self.progress_probe is not None and (now_mark := self.progress_probe()) != mark:
                        stalled, mark = batch, now_mark
                        continue
                    raise self._livelock(stalled)
        finally:
            self.events_processed += processed + k + 1  # k + 1: the batch cut short by an error
            if not heap:
                self.current_seq = next(self._seq)  # every event scheduled so far has run
        return self.now

    def _livelock(self, events: int) -> LivelockError:
        callbacks = sorted({getattr(cb, "__qualname__", repr(cb)) for _, _, cb, _ in heapq.nsmallest(8, self._heap)})
        parts = [f"no simulated time passed for {events:,} events at {self.now!r} ns (a livelock); "
                 f"the events that repeat: {', '.join(callbacks)}"]
        parts.extend(report() for report in self.stall_reports)
        return LivelockError("; ".join(parts))


class TracingEventQueue(EventQueue):
    """An :class:`EventQueue` that says, while an event runs, when that event was scheduled
    (``scheduled_ns``: the time of the event that scheduled it), for a private run replayed
    elsewhere in a step (``system/symmetry/group_replay.py``). One more call per event: for
    small runs."""

    __slots__ = ("scheduled_ns",)

    def __init__(self) -> None:
        super().__init__()
        self.scheduled_ns = -1.0

    def schedule(self, delay_ns: float, callback: Callback, arg: Any = None) -> None:
        super().schedule(delay_ns, self._traced, (self.now, callback, arg))

    def schedule_at(self, time_ns: float, callback: Callback, arg: Any = None) -> None:
        super().schedule_at(time_ns, self._traced, (self.now, callback, arg))

    def _traced(self, token: tuple[float, Callback, Any]) -> None:
        self.scheduled_ns, callback, arg = token
        callback(arg)
