"""Flow-level backend: concurrent transfers share every link by max-min fairness.

Each message is a flow along its route (the same routes as the congestion-aware backend).
Rates are recomputed by progressive filling (:mod:`trainsim.network.maxmin`) at most once per
timestamp, however many flows start or end then, and only when the set of flows changed.
Between recomputations every flow drains at its rate; a flow's last byte arrives its route's
summed latency after it leaves (propagation is not a shared resource). A flow is done when its
remaining bytes would drain in less than the clock's resolution at the current time (one float
ulp of ``now`` in ns), so a late flow never waits for an event that cannot advance the clock.
Completion events carry
a version token and stale ones are dropped (lazy deletion). Times in ns, bandwidth in B/ns.

Where no link is shared this gives ``latency + bytes / bandwidth`` per hop-free path, the
congestion-unaware result for neighbour messages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from trainsim.network.link_backend import LinkGraphBackend
from trainsim.network.maxmin import max_min_rates
from trainsim.network.protocol import ONE_LINK, Capabilities
from trainsim.topology.graph import LinkGraph

_EPS_BYTES = 1e-6


class FlowNetwork(LinkGraphBackend):
    """Max-min fair sharing of links by concurrent flows."""

    name = "flow"
    capabilities = Capabilities(symmetry=ONE_LINK)  # times are never whole ns: no memos

    def _init_links(self, graph: LinkGraph) -> None:
        self._capacity = np.asarray(graph.bandwidth, dtype=float) / 1e9  # B/ns
        self._latency = np.asarray(graph.latency_ns, dtype=float)
        # active flows: parallel lists, compacted when flows finish
        self._routes: list[tuple[int, ...]] = []
        self._remaining: list[float] = []
        self._rate = np.zeros(0)
        self._done: list[tuple[Callable[[Any], None], Any, float, float, int]] = []
        self._last_ns = 0.0
        self._version = 0
        self._recompute_pending = False
        self.link_bytes = np.zeros(graph.links)
        self.recomputations = 0
        self.queue.stall_reports.append(self.stall_report)

    def stall_report(self, limit: int = 8) -> str:
        """The active flows (for the event loop's livelock error): route ends, bytes left, rate."""
        links = self.graph
        rows = []
        for route, rem, rate in list(zip(self._routes, self._remaining, self._rate.tolist(), strict=False))[:limit]:
            src, dst = links.link_src[route[0]], links.link_dst[route[-1]]
            rows.append(f"{src}->{dst} {rem:.3g} B left at {rate:.4g} B/ns")
        more = f" and {len(self._routes) - limit} more" if len(self._routes) > limit else ""
        return f"{self.name} backend: {len(self._routes)} active flows: {'; '.join(rows) or 'none'}{more}"

    def delay_ns(self, src: int, dst: int, nbytes: int) -> float:
        route = self.graph.route(src, dst)  # type: ignore[attr-defined]
        if not route:
            return 0.0
        links = list(route)
        return float(self._latency[links].sum() + nbytes / self._capacity[links].min())

    def send(self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any = None) -> None:
        self.bytes_sent += nbytes
        self.messages_sent += 1
        route = self.graph.route(src, dst)  # type: ignore[attr-defined]
        latency = float(self._latency[list(route)].sum()) if route else 0.0
        if not route or nbytes <= 0:
            self.queue.schedule(latency, on_arrival, arg)
            return
        self._add_flow(route, nbytes, on_arrival, arg, latency)

    def _add_flow(self, route: tuple[int, ...], nbytes: int, on_arrival: Callable[[Any], None], arg: Any, latency: float) -> None:
        """Start a flow of ``nbytes`` over the links ``route``, done ``latency`` ns after its
        last byte leaves."""
        self._drain()
        for link in route:
            self.link_bytes[link] += nbytes
        self._routes.append(route)
        self._remaining.append(float(nbytes))
        self._rate = np.append(self._rate, 0.0)
        self._done.append((on_arrival, arg, latency, self.queue.now, nbytes))
        self._request_recompute()

    def carrying(self) -> bool:
        """Flows still draining on the links (they share them with new ones)."""
        return bool(self._routes)

    @property
    def active_flows(self) -> int:
        """Flows draining on the links now (not counting ones past their last byte)."""
        return len(self._routes)

    # -- internals ----------------------------------------------------------------------

    def _drain(self) -> None:
        """Advance every active flow to now at its current rate."""
        now = self.queue.now
        dt = now - self._last_ns
        if dt > 0 and self._remaining:
            rem = np.asarray(self._remaining) - self._rate * dt
            self._remaining = rem.tolist()
        self._last_ns = now

    def _request_recompute(self) -> None:
        if not self._recompute_pending:
            self._recompute_pending = True
            self._version += 1  # pending completion events are stale now
            self.queue.schedule(0.0, self._recompute)

    def _recompute(self, _: Any = None) -> None:
        self._recompute_pending = False
        self._drain()
        self._finish_drained()
        if not self._routes:
            return
        self.recomputations += 1
        flow_of = np.fromiter((f for f, r in enumerate(self._routes) for _ in r), dtype=np.int64)
        link_of = np.fromiter((link for r in self._routes for link in r), dtype=np.int64)
        self._rate = max_min_rates(flow_of, link_of, self._capacity, len(self._routes))
        times = np.asarray(self._remaining) / self._rate
        self._version += 1
        self.queue.schedule(float(max(0.0, times.min())), self._on_completion, self._version)

    def _on_completion(self, version: int) -> None:
        if version != self._version:
            return
        self._drain()
        self._finish_drained()
        self._request_recompute()

    def _finish_drained(self) -> None:
        if not self._remaining:
            return
        rem = np.asarray(self._remaining)
        now = self.queue.now
        # done when what is left is a rounding residue, or drains in less time than the clock
        # resolves at ``now`` (float ns: one ulp is 1.5e-5 ns at 1e11 ns); a completion event
        # ``rem / rate`` ahead would land on ``now`` itself and repeat forever
        finished = rem <= np.maximum(_EPS_BYTES * np.maximum(1.0, self._rate), self._rate * np.spacing(now))
        if not finished.any():
            return
        keep = ~finished
        for idx in np.flatnonzero(finished).tolist():
            on_arrival, arg, latency, start, nbytes = self._done[idx]
            if self.transfers is not None:
                self.transfers.extend((start, now, self.graph.link_dim[link], nbytes) for link in self._routes[idx])
            self.queue.schedule(latency, on_arrival, arg)
        self._routes = [r for r, k in zip(self._routes, keep.tolist(), strict=True) if k]
        self._done = [d for d, k in zip(self._done, keep.tolist(), strict=True) if k]
        self._remaining = rem[keep].tolist()
        self._rate = self._rate[keep]
