"""Finite injection bandwidth for the default (physical) mode on the analytical backend.

Network behaviour below the seam (DESIGN.md, network layer): the analytical backend hands the
collective engine a fresh :class:`InjectionPorts` (``AnalyticalNetwork.injection_ports``).

ASTRA-sim's congestion-unaware backend lets a rank drive any number of messages at full link
bandwidth at once (astra-sim-semantics.md A1 and README "no contention at all"): a ``direct``
phase on a Switch sends n-1 messages through one uplink in the time of one. In the default
mode trainsim keeps the unaware backend's pricing of each message but serializes a rank's
messages on its *first link*: on the dimension the topology accounts the message to
(``MultiDimTopology.send_dim``: ASTRA-sim's first differing dimension in compat mode; in the
default mode, the bottleneck of the dimensions it crosses), per rank and dimension, one port per outgoing link

- Ring: two ports (the clockwise and the counter-clockwise link; a message takes the shorter
  way, ties clockwise),
- Switch: one port (the uplink),
- FullyConnected: one port per peer,

each a FIFO busy for ``bytes / bandwidth`` per message. A message starts when its port is
free, then arrives ``hops x latency + bytes / bandwidth`` later (the backend's delay). Later
hops and the receiver's downlink are not modelled (that is the congestion-aware backend's job).
Units: ns, bytes, bytes/ns.
"""

from __future__ import annotations

from trainsim.topology import MultiDimTopology
from trainsim.topology.multidim import RING, SWITCH


class InjectionPorts:
    __slots__ = ("topology", "bytes_per_ns", "_free", "_ports", "_last", "_latest")

    def __init__(self, topology: MultiDimTopology, bandwidths: list[float]) -> None:
        self.topology = topology
        self.bytes_per_ns = [b / 1e9 for b in bandwidths]
        self._free: dict[tuple[int, int, int], float] = {}
        self._ports: dict[int, list[tuple[int, int]]] = {}  # src -> (dim, port) of its keys in ``_free``
        self._last: dict[int, float] = {}  # src -> when its last reserved port frees
        self._latest = 0.0  # the largest of ``_last`` (values only grow): all idle from then on

    def idle(self, src: int, now: float) -> bool:
        """Whether every port of ``src`` is free at ``now``."""
        return self._last.get(src, 0.0) <= now

    def all_idle(self, ranks: tuple[int, ...], now: float) -> bool:
        """Whether every port of every rank of ``ranks`` is free at ``now``."""
        last = self._last
        return not last or self._latest <= now or all(last.get(r, 0.0) <= now for r in ranks)

    def reserve(self, src: int, dst: int, nbytes: int, now: float) -> float:
        """Start time (ns) of a message of ``nbytes`` from ``src`` to ``dst`` issued at ``now``."""
        topo = self.topology
        dim = topo.send_dim(src, dst)
        if dim < 0:
            return now
        kind = topo.kinds[dim]
        if kind == SWITCH:
            port = 0
        elif kind == RING:
            n = topo.sizes[dim]
            ahead = (topo.coord(dst, dim) - topo.coord(src, dim)) % n
            port = 0 if ahead <= n - ahead else 1
        else:
            port = 2 + topo.coord(dst, dim)
        key = (src, dim, port)
        held = self._free.get(key)
        if held is None:
            self._ports.setdefault(src, []).append((dim, port))
            held = 0.0
        start = max(now, held)
        free = self._free[key] = start + nbytes / self.bytes_per_ns[dim]
        if free > self._last.get(src, 0.0):
            self._last[src] = free
            if free > self._latest:
                self._latest = free
        return start

    def copy_busy(self, src: int, ranks: tuple[int, ...], now: float) -> None:
        """Give every rank of ``ranks`` the ports of ``src`` still busy at ``now``, each as its
        own port toward the peer at the same coordinate offset (same Switch uplink, same Ring
        direction, FullyConnected port of the translated peer). For ranks that mirror ``src``
        (``system/symmetry/replica.py``): every message such a rank sends is ``src``'s at the
        same offsets (equal ``MultiDimTopology.shape``), so its ports hold what ``src``'s hold;
        a run that does not simulate its other messages sets them from ``src``'s this way."""
        if self._last.get(src, 0.0) <= now:
            return
        topo = self.topology
        free, last = self._free, self._last
        busy = [(d, p, free[(src, d, p)]) for d, p in self._ports[src] if free[(src, d, p)] > now]
        for rank in ranks:
            for dim, port, until in busy:
                if port >= 2:  # FullyConnected: the peer's coordinate, translated
                    n = topo.sizes[dim]
                    port = 2 + (port - 2 - topo.coord(src, dim) + topo.coord(rank, dim)) % n
                key = (rank, dim, port)
                held = free.get(key)
                if held is None:
                    self._ports.setdefault(rank, []).append((dim, port))
                elif held >= until:
                    continue
                free[key] = until
                if until > last.get(rank, 0.0):
                    last[rank] = until
