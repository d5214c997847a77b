"""What the link-level backends share (DESIGN.md, network layer): a :class:`LinkGraph` of
directed links, routes over it, the multi-dimensional topology when the graph is one (None on
a physical fabric), and a fork that shares the graph. Bandwidth in B/ns per dimension."""

from __future__ import annotations

from typing import Any

from trainsim.config.types import NetworkSpec
from trainsim.engine import EventQueue
from trainsim.network.base import BackendBase
from trainsim.topology.fabrics import graph_of
from trainsim.topology.graph import LinkGraph


class LinkGraphBackend(BackendBase):
    """A backend over the links of ``graph`` (or of ``spec``'s physical graph); subclasses
    set up their per-link state in :meth:`_init_links`."""

    def __init__(
        self,
        spec: NetworkSpec | None,
        queue: EventQueue,
        *,
        compat_astra: bool = False,
        graph: LinkGraph | None = None,
        options: Any = None,
    ) -> None:
        super().__init__(queue, compat_astra=compat_astra)
        self.graph = graph_of(spec, graph)
        topology = getattr(self.graph, "topology", None)  # None on a physical fabric
        # a message's dimension for accounting: the path rule of the mode (topology/multidim.py)
        self.topology = topology.astra_rule() if compat_astra and topology is not None else topology
        self._init_links(self.graph)

    def _init_links(self, graph: LinkGraph) -> None:
        """The backend's own per-link state (called once the graph is known)."""

    def fork(self, queue: EventQueue) -> LinkGraphBackend:
        """The same kind of backend on the same graph, empty, on ``queue``."""
        return type(self)(None, queue, compat_astra=self.compat_astra, graph=self.graph)

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        return self.graph.route(src, dst)  # type: ignore[attr-defined, no-any-return]

    def dim_capacity(self) -> list[float]:
        """Summed bandwidth of the links of each dimension, B/ns."""
        graph = self.graph
        out = [0.0] * (max(graph.link_dim, default=-1) + 1)
        for dim, bw in zip(graph.link_dim, graph.bandwidth, strict=True):
            if dim >= 0:
                out[dim] += bw / 1e9
        return out
