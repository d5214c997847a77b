"""One rank's queue of chunks for one dimension (astra-sim-semantics.md C3, C5).

A queue holds streams (chunks) in order: the first ``running`` are started, the rest wait. At
most ``limit`` = active-chunks-per-dimension run at once. A stream is inserted after every
started stream and then, FIFO intra-dimension scheduling, after every waiting stream of
priority >= its own (``Sys::insert_stream``); with smallest-chunk-first (SCF; Themis §4.3),
reduce-scatter and all-gather phases go after every waiting stream whose phase input is
smaller than theirs.
"""

from __future__ import annotations

from typing import Any


class DimQueue:
    __slots__ = ("streams", "running", "limit")

    def __init__(self, limit: int) -> None:
        self.streams: list[Any] = []
        self.running = 0
        self.limit = max(1, int(limit))

    def insert(self, stream: Any, scf: bool) -> None:
        streams = self.streams
        i = 0
        end = len(streams)
        while i < end and streams[i].initialized:
            i += 1
        if scf:
            size = stream.phase_size()
            while i < end and streams[i].phase_size() < size:
                i += 1
        else:
            pri = stream.priority
            while i < end and streams[i].priority >= pri:
                i += 1
        streams.insert(i, stream)
