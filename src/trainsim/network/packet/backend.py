"""The packet-level network backend (DESIGN.md, network layer): RoCE packets, shared-buffer
switches with PFC and ECN, and per-QP congestion control behind the network seam.

``PacketNetwork`` wraps the reference engine (:mod:`trainsim.network.packet.engine`) over the
platform's physical graph (its fabric, or the multi-dimensional network's links) with the
``backends: {packet: {...}}`` options (:class:`~trainsim.network.packet.config.
PacketOptions`). Every message is its own queue pair; ``on_arrival`` runs when its last byte
reaches the receiver. Capabilities: no symmetry class (queues, pauses and rate control couple
every flow, and the ``one_link`` argument has not been proven for them), no whole-ns times,
no in-switch reduction. :meth:`counters` gives the queue, pause and rate statistics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trainsim.config.types import NetworkSpec
from trainsim.engine import EventQueue
from trainsim.errors import ConfigError
from trainsim.network.link_backend import LinkGraphBackend
from trainsim.network.packet.cc import make_cc
from trainsim.network.packet.config import PacketOptions
from trainsim.network.packet.engine import PacketEngine
from trainsim.network.protocol import NO_SYMMETRY, Capabilities
from trainsim.topology.graph import LinkGraph


class PacketNetwork(LinkGraphBackend):
    """Packet-level RoCE network (PFC, ECN, DCQCN / DCTCP / TIMELY / HPCC)."""

    name = "packet"
    capabilities = Capabilities(symmetry=NO_SYMMETRY)

    def __init__(
        self,
        spec: NetworkSpec | None,
        queue: EventQueue,
        *,
        compat_astra: bool = False,
        graph: LinkGraph | None = None,
        options: PacketOptions | None = None,
    ) -> None:
        self.options = options if options is not None else PacketOptions()
        super().__init__(spec, queue, compat_astra=compat_astra, graph=graph)

    def _init_links(self, graph: LinkGraph) -> None:
        from trainsim.network.packet import native

        opts = self.options
        use_native = opts.engine == "native" or (opts.engine == "auto" and native.available())
        if use_native and not native.available():
            raise ConfigError(
                f"backends.packet.engine is 'native' but the compiled core is not built ({native.library_path()})",
                field="backends.packet.engine",
                hint="run make (it builds native/packet_core with cargo), or use engine: python",
            )
        cc = make_cc(opts)
        self.engine: PacketEngine | native.NativeEngine = (
            native.NativeEngine(graph, self.queue, opts, cc)
            if use_native
            else PacketEngine(graph, self.queue, opts, cc)
        )

    def send(
        self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any = None
    ) -> None:
        self.bytes_sent += nbytes
        self.messages_sent += 1
        if src == dst or nbytes <= 0:
            self.queue.schedule(0.0, on_arrival, arg)
            return
        self.engine.start_message(src, dst, nbytes, on_arrival, arg)

    def delay_ns(self, src: int, dst: int, nbytes: int) -> float:
        """Unloaded time: the first packet store-and-forwarded along the route, the rest
        behind it at the slowest link's rate."""
        route = self.graph.route(src, dst)  # type: ignore[attr-defined]
        if not route or nbytes <= 0:
            return 0.0
        e, o = self.engine, self.options
        unit = e.unit
        packets = -(-nbytes // unit)
        first = min(unit, nbytes) + o.header_bytes
        wire = nbytes + packets * o.header_bytes
        slowest = min(e.bw[ln] for ln in route)
        return sum(e.lat[ln] + first / e.bw[ln] for ln in route) + (wire - first) / slowest

    def carrying(self) -> bool:
        return self.engine.active > 0

    def counters(self) -> dict[str, Any]:
        """Packets, drops, pauses, ECN marks, CNPs; per link bytes, peak queue and pause time;
        the queue-depth samples of the hottest switch ports; per message start and end."""
        from trainsim.network.packet.counters import collect

        return collect(self.engine)
