"""Flow-level backend with in-network collectives (DESIGN.md, network layer; docs/fred.md).

The flow backend (:mod:`trainsim.network.flow`: max-min fair sharing of every link by the
flows crossing it) plus :meth:`InNetworkFlow.send_tree`: one flow over an arbitrary *set* of
links instead of a route. A switch that reduces the streams arriving from below and multicasts
the result down (FRED's micro-switches, SHARP) moves the data over every link of the tree at one
rate, the tree's bottleneck share: exactly a flow whose links are the tree's, in progressive
filling. Unicast sends are the flow backend's, so the system layer can use it as ``flow``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from trainsim.network.flow import FlowNetwork
from trainsim.network.protocol import ONE_LINK, Capabilities


class InNetworkFlow(FlowNetwork):
    """Max-min fair flows, and reduction / multicast trees as single flows."""

    name = "in_network_flow"
    capabilities = Capabilities(symmetry=ONE_LINK, in_network=True)

    def send_tree(
        self, links: Sequence[int], nbytes: float, on_arrival: Callable[[Any], None], arg: Any = None, *, latency_ns: float = 0.0
    ) -> None:
        """Stream ``nbytes`` over every link of ``links`` at one shared rate; ``on_arrival(arg)``
        ``latency_ns`` (the tree's depth in link latencies) after the last byte has left."""
        route = tuple(dict.fromkeys(int(x) for x in links))
        self.bytes_sent += int(nbytes)
        self.messages_sent += 1
        if not route or nbytes <= 0:
            self.queue.schedule(latency_ns, on_arrival, arg)
            return
        self._add_flow(route, int(nbytes), on_arrival, arg, latency_ns)
