"""Physical fabrics beyond the multi-dimensional blocks: leaf-spine Clos (two-level fat-tree)
with an oversubscription ratio and ECMP, and any graph a user gives (an edge list or GraphML)
with shortest-path routing. Both return a :class:`RoutedGraph`.

Units: bandwidths in B/s, latencies in ns.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import numpy as np

from trainsim import budget
from trainsim.config.types import NetworkSpec
from trainsim.errors import ConfigError
from trainsim.topology.graph import LinkGraph

Router = Callable[[int, int], tuple[int, ...]]


class RoutedGraph(LinkGraph):
    """A :class:`LinkGraph` whose routes come from a routing function, memoized."""

    _router: Router

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        key = (src, dst)
        cached = self._routes.get(key)
        if cached is None:
            cached = self._routes[key] = () if src == dst else self._router(src, dst)
        return cached


def _ecmp_hash(src: int, dst: int, ways: int) -> int:
    """A deterministic flow hash (Knuth's multiplicative hash of the pair)."""
    return ((src * 2654435761) ^ (dst * 40503)) % 2**32 % ways


def leaf_spine(
    npus: int,
    hosts_per_leaf: int,
    spines: int,
    host_bandwidth: float,
    latency_ns: float,
    *,
    oversubscription: float = 1.0,
    uplink_latency_ns: float | None = None,
) -> RoutedGraph:
    """Two-level Clos: each leaf joins ``hosts_per_leaf`` ranks and every spine.

    Each leaf's uplink capacity is ``hosts_per_leaf * host_bandwidth / oversubscription``,
    spread over its ``spines`` uplinks (oversubscription 2 means 2:1). Routes: host -> leaf
    -> host within a leaf, else host -> leaf -> spine (ECMP by a hash of the pair) -> leaf ->
    host. ``uplink_latency_ns`` (default ``latency_ns``) is the leaf-spine links' latency.
    """
    if npus < 1 or hosts_per_leaf < 1 or spines < 1 or oversubscription <= 0:
        raise ConfigError(f"leaf-spine needs positive sizes and oversubscription, got npus={npus}, hosts_per_leaf={hosts_per_leaf}, spines={spines}, oversubscription={oversubscription}")
    leaves = math.ceil(npus / hosts_per_leaf)
    g = RoutedGraph(npus=npus, devices=npus + leaves + spines)
    leaf0, spine0 = npus, npus + leaves
    uplink_bw = hosts_per_leaf * host_bandwidth / oversubscription / spines
    for h in range(npus):
        leaf = leaf0 + h // hosts_per_leaf
        g.add_link(h, leaf, host_bandwidth, latency_ns, 0)
        g.add_link(leaf, h, host_bandwidth, latency_ns, 0)
    for leaf in range(leaf0, spine0):
        for spine in range(spine0, spine0 + spines):
            up_ns = latency_ns if uplink_latency_ns is None else uplink_latency_ns
            g.add_link(leaf, spine, uplink_bw, up_ns, 1)
            g.add_link(spine, leaf, uplink_bw, up_ns, 1)

    def router(src: int, dst: int) -> tuple[int, ...]:
        a, b = leaf0 + src // hosts_per_leaf, leaf0 + dst // hosts_per_leaf
        if a == b:
            return (g.link(src, a), g.link(a, dst))
        spine = spine0 + _ecmp_hash(src, dst, spines)
        return (g.link(src, a), g.link(a, spine), g.link(spine, b), g.link(b, dst))

    g._router = router
    return g


def graph_from_edges(npus: int, edges: list[tuple[int, int, float, float]], *, source: str = "") -> RoutedGraph:
    """A user graph: devices ``0..npus-1`` are ranks, higher ids switches; each edge
    ``(a, b, bandwidth B/s, latency ns)`` is bidirectional. Routes are lowest-latency paths
    (ties: fewest hops, then scipy's deterministic order)."""
    if not edges:
        raise ConfigError("the graph has no edges", file=source or None)
    devices = max(max(a, b) for a, b, _, _ in edges) + 1
    # routes keep one predecessor array per source rank (8 bytes a device), besides the
    # device-indexed arrays of the routing matrix: refuse before allocating any of it
    budget.check(
        "memory",
        8.0 * devices * (npus + 4),
        f"a graph whose highest device id is {devices - 1:,} ({npus:,} ranks)",
        way_under="number the devices from 0 without gaps",
        file=source or None,
    )
    if devices < npus:
        raise ConfigError(f"the graph has {devices} devices but {npus} ranks were asked for", file=source or None)
    g = RoutedGraph(npus=npus, devices=devices)
    for a, b, bw, lat in edges:
        if a == b or min(a, b) < 0 or not 0 < bw < math.inf or not 0 <= lat < math.inf:
            raise ConfigError(
                f"bad edge {a} - {b}: bandwidth {bw} B/s, latency {lat} ns (need node ids >= 0, a != b, "
                "a finite bandwidth > 0 and a finite latency >= 0)",
                file=source or None,
            )
        g.add_link(a, b, bw, lat)
        g.add_link(b, a, bw, lat)
    # scipy is imported here, not at the top: it is needed for user graphs only and costs a
    # sixth of a second of start-up to every other run
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra

    weights = np.asarray(g.latency_ns) + 1e-6  # the epsilon prefers fewer hops on equal latency
    matrix = csr_matrix((weights, (g.link_src, g.link_dst)), shape=(devices, devices))
    predecessors: dict[int, np.ndarray] = {}

    def router(src: int, dst: int) -> tuple[int, ...]:
        pred = predecessors.get(src)
        if pred is None:
            _, pred = dijkstra(matrix, indices=src, return_predecessors=True)
            predecessors[src] = pred
        if pred[dst] < 0:
            raise ConfigError(f"rank {dst} cannot be reached from rank {src} in the graph", file=source or None)
        hops = []
        node = dst
        while node != src:
            prev = int(pred[node])
            hops.append(g.link(prev, node))
            node = prev
        return tuple(reversed(hops))

    g._router = router
    return g


def load_edge_list(path: str | Path, npus: int) -> RoutedGraph:
    """Read ``a b bandwidth_gbps latency_ns`` lines ('#' comments) or GraphML (edge data keys
    ``bandwidth_gbps`` and ``latency_ns``); GB/s here is 1e9 B/s."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the graph file: {exc.strerror}", file=str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text (byte {exc.start}: {exc.object[exc.start:exc.start + 1]!r}); expected an edge "
                          "list or GraphML", file=str(path)) from None
    if path.suffix.lower() == ".graphml" or text.lstrip().startswith("<"):
        return graph_from_edges(npus, _graphml_edges(text, str(path)), source=str(path))
    edges = []
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.replace(",", " ").split()
        if len(parts) != 4:
            raise ConfigError(f"line {lineno}: expected 'a b bandwidth_gbps latency_ns', got {line!r}", file=str(path))
        try:
            edge = (int(parts[0]), int(parts[1]), float(parts[2]) * 1e9, float(parts[3]))
        except ValueError:
            raise ConfigError(f"line {lineno}: not numbers: {line!r}", file=str(path)) from None
        if not (0 < edge[2] < math.inf and 0 <= edge[3] < math.inf):
            raise ConfigError(
                f"line {lineno}: bandwidth {parts[2]} GB/s, latency {parts[3]} ns; expected a finite bandwidth > 0 "
                "and a finite latency >= 0",
                file=str(path),
            )
        edges.append(edge)
    return graph_from_edges(npus, edges, source=str(path))


def _graphml_edges(text: str, source: str) -> list[tuple[int, int, float, float]]:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ConfigError(f"not valid GraphML: {exc}", file=source) from None
    ns = {"g": root.tag.split("}")[0].strip("{")} if root.tag.startswith("{") else {}
    prefix = "g:" if ns else ""
    keys = {k.get("id"): k.get("attr.name") for k in root.iter(f"{{{ns['g']}}}key" if ns else "key")}
    edges = []
    for edge in root.iter(f"{{{ns['g']}}}edge" if ns else "edge"):
        data = {keys.get(d.get("key"), d.get("key")): d.text for d in edge.findall(f"{prefix}data", ns)}
        try:
            edges.append((int(edge.get("source", "")), int(edge.get("target", "")), float(data["bandwidth_gbps"] or 0) * 1e9, float(data.get("latency_ns") or 0)))
        except (KeyError, ValueError):
            raise ConfigError(f"edge {edge.get('source')} - {edge.get('target')}: needs integer node ids and a bandwidth_gbps value", file=source) from None
    return edges


def build_graph(spec: NetworkSpec) -> LinkGraph:
    """The physical graph of a network: its fabric when it has one, else its dimensions."""
    from trainsim.topology.graph import MultiDimGraph

    fabric = spec.fabric
    if fabric is None:
        return MultiDimGraph([d.kind for d in spec.dims], [d.size for d in spec.dims], [d.bandwidth for d in spec.dims], [d.latency_ns for d in spec.dims])
    if fabric.kind == "wafer" and fabric.wafer is not None:
        from trainsim.topology.wafer import wafer_fabric

        if fabric.wafer.npus != spec.npus:
            raise ConfigError(f"the wafer fabric has {fabric.wafer.npus} NPUs but the network's dims {spec.npus}", field="network.fabric")
        return wafer_fabric(fabric.wafer)
    if fabric.kind == "clos" and fabric.clos is not None:
        from trainsim.topology.clos import clos_fabric

        if fabric.clos.npus != spec.npus:
            raise ConfigError(f"the clos fabric has {fabric.clos.npus} NPUs but the network's dims {spec.npus}", field="network.fabric.tiers")
        return clos_fabric(fabric.clos)
    if fabric.kind == "leaf_spine":
        return leaf_spine(spec.npus, fabric.hosts_per_leaf, fabric.spines, fabric.bandwidth, fabric.latency_ns, oversubscription=fabric.oversubscription, uplink_latency_ns=fabric.uplink_latency_ns)
    return load_edge_list(fabric.file, spec.npus)


def graph_of(spec: NetworkSpec | None, graph: LinkGraph | None) -> LinkGraph:
    """``graph`` if given, else the physical graph of ``spec`` (for the link-level backends)."""
    if graph is not None:
        return graph
    if spec is None:
        raise ValueError("give a NetworkSpec or a LinkGraph")
    return build_graph(spec)
