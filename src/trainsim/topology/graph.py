"""Physical networks as graphs of devices (ranks and switches) joined by directed links, with
their routes (DESIGN.md, topology layer: no time, no collectives).

Devices ``0..npus-1`` are the ranks; switches follow. Every link is one direction with its own
bandwidth (B/s) and latency (ns). A route is the tuple of link ids a message crosses.

Multi-dimensional networks (:func:`multidim_graph`) follow ASTRA-sim's congestion-aware
building blocks (astra-sim-semantics.md G6-G8): a Ring joins neighbours both ways and routes
the shorter way round, clockwise (increasing coordinate) on a tie; a Switch adds one switch
device per group with an uplink and a downlink per member; FullyConnected has a link per
ordered pair. A ``Mesh`` dimension is a line (no wrap-around link). Routing is dimension by
dimension in ascending order (dimension-order routing), one hop sequence per differing
dimension.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from trainsim.topology.multidim import FULLY_CONNECTED, MESH, RING, SWITCH, MultiDimTopology


@dataclass
class LinkGraph:
    """Devices and directed links; ``route(src, dst)`` is memoized."""

    npus: int
    devices: int
    link_src: list[int] = field(default_factory=list)
    link_dst: list[int] = field(default_factory=list)
    bandwidth: list[float] = field(default_factory=list)  # B/s
    latency_ns: list[float] = field(default_factory=list)
    link_dim: list[int] = field(default_factory=list)  # network dimension of each link (-1: none)
    _index: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)
    _routes: dict[tuple[int, int], tuple[int, ...]] = field(default_factory=dict, repr=False)

    def add_link(self, a: int, b: int, bandwidth: float, latency_ns: float, dim: int = -1) -> int:
        if (a, b) in self._index:
            raise ValueError(f"duplicate link {a} -> {b}")
        self._index[(a, b)] = len(self.link_src)
        self.link_src.append(a)
        self.link_dst.append(b)
        self.bandwidth.append(bandwidth)
        self.latency_ns.append(latency_ns)
        self.link_dim.append(dim)
        return len(self.link_src) - 1

    def link(self, a: int, b: int) -> int:
        return self._index[(a, b)]

    @property
    def links(self) -> int:
        return len(self.link_src)


class MultiDimGraph(LinkGraph):
    """A :class:`LinkGraph` of a multi-dimensional network, with dimension-order routing."""

    def __init__(self, kinds: Sequence[str], sizes: Sequence[int], bandwidth: Sequence[float], latency_ns: Sequence[float]) -> None:
        # its routes cross every differing dimension: the default mode's path rule
        # (``multidim.py``; ``MultiDimTopology.astra_rule`` for ASTRA-sim's accounting)
        self.topology = MultiDimTopology(kinds, sizes, bandwidths=bandwidth)
        self.kinds = tuple(kinds)
        super().__init__(npus=self.topology.npus, devices=self.topology.npus)
        self._switch_of: dict[tuple[int, int], int] = {}  # (dim, group base rank) -> switch device
        for dim, kind in enumerate(kinds):
            self._build_dim(dim, kind, bandwidth[dim], latency_ns[dim])

    def _build_dim(self, dim: int, kind: str, bw: float, lat: float) -> None:
        topo = self.topology
        n = topo.sizes[dim]
        for rank in range(topo.npus):
            if topo.coord(rank, dim) != 0:
                continue
            members = topo.dim_peers(rank, dim)
            if kind in (RING, MESH):
                last = n if kind == RING and n > 2 else n - 1
                for i in range(last):
                    a, b = members[i], members[(i + 1) % n]
                    self.add_link(a, b, bw, lat, dim)
                    self.add_link(b, a, bw, lat, dim)
            elif kind == SWITCH:
                switch = self.devices
                self.devices += 1
                self._switch_of[(dim, rank)] = switch
                for m in members:
                    self.add_link(m, switch, bw, lat, dim)
                    self.add_link(switch, m, bw, lat, dim)
            elif kind == FULLY_CONNECTED:
                for a in members:
                    for b in members:
                        if a != b:
                            self.add_link(a, b, bw, lat, dim)
            else:
                raise ValueError(f"unknown topology kind {kind!r}")

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        """Link ids from ``src`` to ``dst``, dimension by dimension in ascending order."""
        key = (src, dst)
        cached = self._routes.get(key)
        if cached is not None:
            return cached
        topo = self.topology
        path: list[int] = []
        here = src
        for dim in range(len(topo.sizes)):
            a, b = topo.coord(here, dim), topo.coord(dst, dim)
            if a == b:
                continue
            stride = topo.strides[dim]
            target = here + (b - a) * stride
            path.extend(self._route_in_dim(dim, here, target, a, b, stride))
            here = target
        route = tuple(path)
        self._routes[key] = route
        return route

    def _route_in_dim(self, dim: int, here: int, target: int, a: int, b: int, stride: int) -> list[int]:
        kind = self.kinds[dim]
        n = self.topology.sizes[dim]
        if kind == FULLY_CONNECTED:
            return [self.link(here, target)]
        if kind == SWITCH:
            switch = self._switch_of[(dim, here - a * stride)]
            return [self.link(here, switch), self.link(switch, target)]
        if kind == MESH:
            step = 1 if b > a else -1
        else:  # ring: the shorter way, clockwise on a tie (G6)
            forward = (b - a) % n
            step = 1 if forward <= n - forward else -1
        links = []
        c = a
        base = here - a * stride
        while c != b:
            nxt = (c + step) % n
            links.append(self.link(base + c * stride, base + nxt * stride))
            c = nxt
        return links
