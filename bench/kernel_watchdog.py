"""Cost of the event loop's livelock watchdog (engine/kernel.py, issue 24): the loop before it
(a per-event ``while heap`` with a counter, copied here) against ``EventQueue.run`` with the
watchdog's per-batch check, on the same events in the same process.

Each case schedules ``chains`` independent chains of events; every event reschedules its chain
after a pseudo-random delay until ``events`` have run (a heap of ``chains`` entries, as a
simulation's). Prints one line per case, best of ``--repeat`` runs each, with the ratio
watchdog / baseline (1.00 = no cost), then a JSON line. Not a test.

    PYTHONPATH=src python bench/kernel_watchdog.py [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import heapq
import json
import time
from typing import Any

from trainsim.engine import EventQueue


def baseline_run(q: EventQueue) -> float:
    """The loop of EventQueue.run before the watchdog (no tick, no until)."""
    heap = q._heap
    pop = heapq.heappop
    processed = 0
    try:
        while heap:
            t, _, callback, arg = pop(heap)
            q.now = t
            processed += 1
            callback(arg)
    finally:
        q.events_processed += processed
    return q.now


def make(chains: int, events: int) -> tuple[EventQueue, list[int]]:
    q = EventQueue()
    left = [events]
    schedule = q.schedule

    def step(state: Any) -> None:
        left[0] -= 1
        if left[0] > 0:
            state[0] = (state[0] * 1103515245 + 12345) & 0x7FFFFFFF
            schedule(float(state[0] % 1000), step, state)

    for c in range(chains):
        q.schedule(float(c), step, [c + 1])
    return q, left


def timed(run: Any, chains: int, events: int) -> tuple[float, int, float]:
    q, _ = make(chains, events)
    start = time.perf_counter()
    end = run(q)
    return time.perf_counter() - start, q.events_processed, end


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rows = []
    for chains in (1, 64, 4096):
        base = [timed(baseline_run, chains, args.events) for _ in range(args.repeat)]
        new = [timed(EventQueue.run, chains, args.events) for _ in range(args.repeat)]
        assert base[0][1:] == new[0][1:], (base[0], new[0])  # same events, same end time
        b, n = min(x[0] for x in base), min(x[0] for x in new)
        rows.append(
            {
                "chains": chains,
                "events": base[0][1],
                "baseline_s": b,
                "watchdog_s": n,
                "ratio": n / b,
            }
        )
        print(
            f"{chains:5d} chains, {base[0][1]:,} events: baseline {b:.3f} s, watchdog {n:.3f} s, ratio {n / b:.3f}"
        )
    print(json.dumps({"bench": "kernel_watchdog", "cases": rows}))


if __name__ == "__main__":
    main()
