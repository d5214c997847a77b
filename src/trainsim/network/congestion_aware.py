"""Congestion-aware backend: links as FIFO servers, messages store-and-forwarded link by link.

ASTRA-sim's semantics (astra-sim-semantics.md G2-G12), on any :class:`LinkGraph`:
- a message is one unit with a route fixed at send time;
- a link serves one message at a time, first in first out; starting ``b`` bytes at ``t``,
  the message reaches the next device at ``t + latency + b / bw`` and the link is free at
  ``t + b / bw`` (latency does not occupy it); in compatibility mode both are truncated to
  whole ns separately, the first one truncating the sum (G4);
- at an intermediate device the message is handed at once to the next link (G5);
- nothing is charged at the sender; ``on_arrival`` runs at the last device.
Unlike ASTRA-sim (1-D only, G1) any number of dimensions works: routes go dimension by
dimension. Per-link statistics: bytes carried, busy time (ns), peak queue length.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Any

from trainsim.network.link_backend import LinkGraphBackend
from trainsim.network.protocol import ONE_LINK, Capabilities
from trainsim.topology.graph import LinkGraph

# A message in flight: [route, hop index, nbytes, on_arrival, arg]
Message = list[Any]


class CongestionAwareNetwork(LinkGraphBackend):
    """Store-and-forward network of FIFO links over a :class:`LinkGraph`."""

    name = "congestion_aware"
    capabilities = Capabilities(symmetry=ONE_LINK, whole_ns_compat=True)

    def _init_links(self, graph: LinkGraph) -> None:
        n = graph.links
        self._bytes_per_ns = [bw / 1e9 for bw in graph.bandwidth]
        self._latency = list(graph.latency_ns)
        self._busy = [False] * n
        self._waiting: list[deque[Message]] = [deque() for _ in range(n)]
        self.link_bytes = [0] * n
        self.link_busy_ns = [0.0] * n
        self.link_peak_queue = [0] * n
        self.messages_delivered = 0  # sent minus delivered = messages on the links now

    def delay_ns(self, src: int, dst: int, nbytes: int) -> float:
        """Uncontended time: one serialization and latency per link (store and forward)."""
        total = 0.0
        for link in self.graph.route(src, dst):  # type: ignore[attr-defined]
            total += self._hop_ns(link, nbytes)[0]
        return total

    def send(self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any = None) -> None:
        self.bytes_sent += nbytes
        self.messages_sent += 1
        route = self.graph.route(src, dst)  # type: ignore[attr-defined]
        if not route:
            self.messages_delivered += 1  # crosses no link
            self.queue.schedule(0.0, on_arrival, arg)
            return
        self._enter_link([route, 0, nbytes, on_arrival, arg])

    def carrying(self) -> bool:
        """Messages still on the links (they queue with new ones)."""
        return self.messages_sent != self.messages_delivered

    def _hop_ns(self, link: int, nbytes: int) -> tuple[float, float]:
        """(arrival delay, busy time) of ``nbytes`` on ``link``."""
        serialization = nbytes / self._bytes_per_ns[link]
        arrival = self._latency[link] + serialization
        if self.compat_astra:
            return float(math.trunc(arrival)), float(math.trunc(serialization))
        return arrival, serialization

    def _enter_link(self, msg: Message) -> None:
        link = msg[0][msg[1]]
        if self._busy[link]:
            waiting = self._waiting[link]
            waiting.append(msg)
            if len(waiting) > self.link_peak_queue[link]:
                self.link_peak_queue[link] = len(waiting)
        else:
            self._start(link, msg)

    def _start(self, link: int, msg: Message) -> None:
        nbytes = msg[2]
        arrival, busy = self._hop_ns(link, nbytes)
        self._busy[link] = True
        self.link_bytes[link] += nbytes
        self.link_busy_ns[link] += busy
        if self.transfers is not None:
            now = self.queue.now
            self.transfers.append((now, now + busy, self.graph.link_dim[link], nbytes))
        schedule = self.queue.schedule
        schedule(arrival, self._arrive, msg)  # arrival is scheduled before the link frees (G10)
        schedule(busy, self._free, link)

    def _free(self, link: int) -> None:
        waiting = self._waiting[link]
        if waiting:
            self._start(link, waiting.popleft())
        else:
            self._busy[link] = False

    def _arrive(self, msg: Message) -> None:
        msg[1] += 1
        if msg[1] < len(msg[0]):
            self._enter_link(msg)
        else:
            self.messages_delivered += 1
            msg[3](msg[4])

    def link_stats(self) -> list[dict[str, Any]]:
        """Per-link bytes carried, busy time (s) and peak queue length."""
        g = self.graph
        nbytes, busy_ns, peak = self.link_bytes, self.link_busy_ns, self.link_peak_queue
        return [
            {
                "link": i,
                "src": g.link_src[i],
                "dst": g.link_dst[i],
                "dim": g.link_dim[i],
                "bytes": nbytes[i],
                "busy_s": busy_ns[i] * 1e-9,
                "peak_queue": peak[i],
            }
            for i in range(g.links)
        ]
