"""Wafer-scale fabrics (DESIGN.md, topology layer: graphs and routes, no time): the wafer's 2-D
mesh and FRED's two-level switch fabric (Rashidi et al., "FRED: A Wafer-scale Fabric for 3D
Parallel DNN Training", arXiv 2406.19580 / ISCA 2025).

Both are :class:`~trainsim.topology.fabrics.RoutedGraph` s: devices ``0..npus-1`` are the NPUs,
then switches, then the off-wafer I/O controllers. Every link is one direction; a physical
channel is a pair of links. Units: bandwidth in B/s, latency in ns.

- **Mesh** (:func:`wafer_mesh`): ``cols x rows`` NPUs, rank ``r`` at ``(x, y) = (r % cols,
  r // cols)``, a link each way between grid neighbours, X-Y (dimension-order) routing. The
  I/O controllers sit on the edge, one per edge position (top and bottom rows, left and right
  columns: ``2 cols + 2 rows`` of them, 18 on 5 x 4), each joined to the NPU at its position
  (corner NPUs get two).
- **FRED** (:func:`fred_fabric`): ``npus / per_l1`` L1 switches of ``per_l1`` NPUs each and an
  L2 level of ``planes`` middle micro-switches (the paper's L2 FRED switch seen as its middle
  stage). NPU - L1 channels carry ``npu_l1_bw``; every L1 has one channel to every plane of
  ``per_l1 x npu_l2_bw / planes``, so each NPU's share of the L2 level is ``npu_l2_bw``. An NPU's
  traffic to another L1 rises through the plane of its own index under its L1 (a static,
  non-blocking assignment: no two NPUs of an L1 share an uplink). I/O controllers hang off the
  planes, round robin.

:meth:`WaferFabric.tree_links` gives the links of an in-network reduction / multicast tree over
a group through chosen planes (FRED only): the network layer streams one flow over them.
"""

from __future__ import annotations

from collections.abc import Sequence

from trainsim.config.wafer import FRED, GB_S, MESH, TB_S, WaferParams
from trainsim.errors import ConfigError
from trainsim.topology.fabrics import RoutedGraph

__all__ = ["FRED", "MESH", "WaferFabric", "WaferParams", "fred_fabric", "paper_fred", "paper_mesh", "wafer_fabric", "wafer_mesh"]


class WaferFabric(RoutedGraph):
    """A wafer's graph plus where its switches and I/O controllers are."""

    params: WaferParams
    io: tuple[int, ...]  # device ids of the I/O controllers
    io_attach: tuple[int, ...]  # the device each controller is joined to
    l1: tuple[int, ...]  # FRED: device id of each L1 switch
    plane: tuple[int, ...]  # FRED: device id of each L2 plane

    @property
    def kind(self) -> str:
        return self.params.kind

    def coord(self, rank: int) -> tuple[int, int]:
        """(x, y) of an NPU on the mesh."""
        return rank % self.params.cols, rank // self.params.cols

    def l1_of(self, rank: int) -> int:
        """Index of the L1 switch an NPU sits under (FRED)."""
        return rank // self.params.per_l1

    def tree_links(self, members: Sequence[int], planes: tuple[int, ...] = (0,), *, io: int | None = None) -> tuple[int, ...]:
        """Links of an in-network tree over ``members`` (FRED): each member up to its L1 and
        back down, and, when the members span more than one L1 (or ``io`` joins), each of those
        L1s up to and down from every plane in ``planes``; ``io`` (a controller's device id)
        adds its channel both ways and replaces ``planes`` with the controller's own plane. One flow over these links moves data up (reduced at each
        switch) and down (multicast) at one rate."""
        if self.kind != FRED:
            raise ConfigError("in-network trees need a FRED fabric (a mesh has no switches)")
        links: list[int] = []
        l1s = sorted({self.l1_of(m) for m in members})
        for m in members:
            sw = self.l1[self.l1_of(m)]
            links += [self.link(m, sw), self.link(sw, m)]
        if io is not None:
            planes = (self.plane.index(self.io_attach[self.io.index(io)]),)
            pl = self.plane[planes[0]]
            links += [self.link(io, pl), self.link(pl, io)]
        if len(l1s) > 1 or io is not None:
            for p in planes:
                pl = self.plane[p]
                for k in l1s:
                    links += [self.link(self.l1[k], pl), self.link(pl, self.l1[k])]
        return tuple(links)


def _check(params: WaferParams) -> None:
    problem = params.problem()
    if problem is not None:
        raise ConfigError(f"wafer fabric: {problem}", field="network.fabric")


def mesh_io_positions(cols: int, rows: int, count: int) -> list[tuple[int, int]]:
    """Edge positions of ``count`` I/O controllers: top row, bottom row, left column, right
    column, in that order (x, y of the NPU each joins)."""
    spots = [(x, 0) for x in range(cols)] + [(x, rows - 1) for x in range(cols)]
    spots += [(0, y) for y in range(rows)] + [(cols - 1, y) for y in range(rows)]
    return spots[:count]


def wafer_mesh(params: WaferParams) -> WaferFabric:
    """The 2-D mesh with X-Y routing and edge I/O controllers (module docstring)."""
    _check(params)
    cols, rows, bw, lat = params.cols, params.npus // params.cols, params.npu_link_bw, params.latency_ns
    g = WaferFabric(npus=params.npus, devices=params.npus + params.io_controllers)
    g.params, g.l1, g.plane = params, (), ()
    for r in range(params.npus):
        x, y = r % cols, r // cols
        if x + 1 < cols:
            g.add_link(r, r + 1, bw, lat, 0)
            g.add_link(r + 1, r, bw, lat, 0)
        if y + 1 < rows:
            g.add_link(r, r + cols, bw, lat, 1)
            g.add_link(r + cols, r, bw, lat, 1)
    io, attach = [], []
    for i, (x, y) in enumerate(mesh_io_positions(cols, rows, params.io_controllers)):
        dev, npu = params.npus + i, y * cols + x
        g.add_link(dev, npu, params.io_bw, lat, 2)
        g.add_link(npu, dev, params.io_bw, lat, 2)
        io.append(dev)
        attach.append(npu)
    g.io, g.io_attach = tuple(io), tuple(attach)
    npus = params.npus

    def xy(src: int, dst: int) -> list[int]:
        hops, here = [], src
        tx, ty = dst % cols, dst // cols
        while here % cols != tx:
            nxt = here + (1 if tx > here % cols else -1)
            hops.append(g.link(here, nxt))
            here = nxt
        while here // cols != ty:
            nxt = here + (cols if ty > here // cols else -cols)
            hops.append(g.link(here, nxt))
            here = nxt
        return hops

    def router(src: int, dst: int) -> tuple[int, ...]:
        first: list[int] = []
        last: list[int] = []
        a, b = src, dst
        if src >= npus:
            a = attach[src - npus]
            first = [g.link(src, a)]
        if dst >= npus:
            b = attach[dst - npus]
            last = [g.link(b, dst)]
        return tuple(first + xy(a, b) + last)

    g._router = router
    return g


def fred_fabric(params: WaferParams) -> WaferFabric:
    """FRED's L1 / L2 switch fabric (module docstring)."""
    _check(params)
    n, per, planes, lat = params.npus, params.per_l1, params.planes, params.latency_ns
    l1s = n // per
    l10, pl0, io0 = n, n + l1s, n + l1s + planes
    g = WaferFabric(npus=n, devices=io0 + params.io_controllers)
    g.params = params
    g.l1 = tuple(range(l10, pl0))
    g.plane = tuple(range(pl0, io0))
    for r in range(n):
        sw = l10 + r // per
        g.add_link(r, sw, params.npu_link_bw, lat, 0)
        g.add_link(sw, r, params.npu_link_bw, lat, 0)
    up_bw = per * params.npu_l2_bw / planes
    for sw in g.l1:
        for pl in g.plane:
            g.add_link(sw, pl, up_bw, lat, 1)
            g.add_link(pl, sw, up_bw, lat, 1)
    g.io = tuple(range(io0, io0 + params.io_controllers))
    g.io_attach = tuple(pl0 + i % planes for i in range(params.io_controllers))
    for dev, pl in zip(g.io, g.io_attach, strict=True):
        g.add_link(dev, pl, params.io_bw, lat, 2)
        g.add_link(pl, dev, params.io_bw, lat, 2)

    def router(src: int, dst: int) -> tuple[int, ...]:
        if src < n and dst < n:
            a, b = l10 + src // per, l10 + dst // per
            if a == b:
                return (g.link(src, a), g.link(a, dst))
            pl = pl0 + (src % per) % planes
            return (g.link(src, a), g.link(a, pl), g.link(pl, b), g.link(b, dst))
        if src >= io0 and dst < n:
            pl, b = g.io_attach[src - io0], l10 + dst // per
            return (g.link(src, pl), g.link(pl, b), g.link(b, dst))
        if src < n and dst >= io0:
            a, pl = l10 + src // per, g.io_attach[dst - io0]
            return (g.link(src, a), g.link(a, pl), g.link(pl, dst))
        raise ConfigError(f"no route from device {src} to device {dst} on FRED (I/O controllers talk to NPUs only)")

    g._router = router
    return g


def wafer_fabric(params: WaferParams) -> WaferFabric:
    """The mesh or FRED fabric that ``params`` describes."""
    return wafer_mesh(params) if params.kind == MESH else fred_fabric(params)


FRED_VARIANTS: dict[str, tuple[float, bool]] = {
    # variant: (NPU-L2 bandwidth, in-network collectives); the A-D (arXiv 2406.19580):
    # A has the mesh's bisection (per-NPU L2 share 375 GB/s), C 30 TB/s (3 TB/s per NPU)
    "A": (375 * GB_S, False),
    "B": (375 * GB_S, True),
    "C": (3 * TB_S, False),
    "D": (3 * TB_S, True),
}


def paper_mesh() -> WaferParams:
    """The paper's baseline: 5 x 4 NPUs, 750 GB/s links, 18 I/O controllers of 128 GB/s."""
    return WaferParams(MESH, npus=20, cols=5, npu_link_bw=750 * GB_S, io_controllers=18, io_bw=128 * GB_S)


def paper_fred(variant: str) -> WaferParams:
    """FRED variant A, B, C or D of the paper: 5 L1s of 4 NPUs at 3 TB/s, 4 planes."""
    if variant not in FRED_VARIANTS:
        raise ConfigError(f"unknown FRED variant {variant!r}; expected one of {', '.join(FRED_VARIANTS)}")
    l2, in_net = FRED_VARIANTS[variant]
    return WaferParams(FRED, npus=20, per_l1=4, planes=4, npu_link_bw=3 * TB_S, npu_l2_bw=l2, io_controllers=18, io_bw=128 * GB_S, in_network=in_net)
