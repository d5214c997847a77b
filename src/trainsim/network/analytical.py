"""Congestion-unaware analytical backend: ``hops x latency + bytes / bandwidth`` per message.

The message's path is the topology's (``topology/multidim.py``, one rule for every pricer). In
``compat_astra`` mode it is priced on the first dimension where source and destination
coordinates differ (astra-sim-semantics.md A1, A2). In the default mode it crosses every
dimension where they differ, dimension-ordered and cut-through: ``sum over those dimensions of
hops_d x latency_d + bytes / min(bandwidth_d)`` (a message from GPU 6 of one node to GPU 0 of
the next crosses the node's switch and the inter-node link, so it moves at the slower one's
bandwidth and pays both latencies); its transfer record names the bottleneck dimension
(``MultiDimTopology.send_dim``). Nothing is shared: a rank may drive all its peers at full
bandwidth at once. In ``compat_astra`` mode the delay is truncated to whole ns (one
truncation of the double sum, as ASTRA-sim's ``BasicTopology::compute_communication_delay``);
otherwise it is exact.

``switch_hop``: one message between a rank and the switch of a Switch dimension, for in-switch
reduction (``inSwitch``): one hop, ``latency + bytes / bandwidth`` (half the 2-hop rank-to-rank
path's latency, the whole serialization), truncated in ``compat_astra`` mode like a message.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from trainsim.config.types import NetworkSpec
from trainsim.engine import EventQueue
from trainsim.network.base import BackendBase
from trainsim.network.injection import InjectionPorts
from trainsim.network.protocol import PAIRWISE, Capabilities
from trainsim.topology import MultiDimTopology


class AnalyticalNetwork(BackendBase):
    """Point-to-point delays on a multi-dimensional Ring / FullyConnected / Switch network."""

    name = "congestion_unaware"
    capabilities = Capabilities(symmetry=PAIRWISE, whole_ns_compat=True, in_switch=True)
    topology: MultiDimTopology

    def __init__(
        self, spec: NetworkSpec, queue: EventQueue, *, compat_astra: bool = False, options: Any = None
    ) -> None:
        super().__init__(queue, compat_astra=compat_astra)
        self.spec = spec
        self.topology = MultiDimTopology.of_network(spec, compat_astra=compat_astra)
        self._bytes_per_ns = tuple(d.bandwidth / 1e9 for d in spec.dims)
        self._latency_ns = tuple(d.latency_ns for d in spec.dims)
        # (src, dst) -> (bottleneck dim, summed hops x latency ns, bytes per ns): a collective talks to the
        # same few peers again and again, so the coordinate arithmetic is done once per pair
        self._pairs: dict[tuple[int, int], tuple[int, float, float]] = {}

    def _pair(self, src: int, dst: int) -> tuple[int, float, float]:
        key = (src, dst)
        pair = self._pairs.get(key)
        if pair is None:
            topo = self.topology
            path = topo.path(src, dst)
            if not path:
                pair = (-1, 0.0, math.inf)
            else:  # one dimension in compat mode: exactly hops x latency and its bandwidth
                latency = sum(topo.hops(d, src, dst) * self._latency_ns[d] for d in path)
                pair = (topo.send_dim(src, dst), latency, min(self._bytes_per_ns[d] for d in path))
            if len(self._pairs) < 1 << 22:
                self._pairs[key] = pair
        return pair

    def delay_ns(self, src: int, dst: int, nbytes: int) -> float:
        _, latency, bytes_per_ns = self._pair(src, dst)
        delay = latency + nbytes / bytes_per_ns
        return float(math.trunc(delay)) if self.compat_astra else delay

    def send(
        self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any = None
    ) -> None:
        self.bytes_sent += nbytes
        self.messages_sent += 1
        delay = self.delay_ns(src, dst, nbytes)
        if self.transfers is not None and nbytes:
            now = self.queue.now
            self.transfers.append((now, now + delay, self._pair(src, dst)[0], nbytes))
        self.queue.schedule(delay, on_arrival, arg)

    def switch_hop(self, dim: int, nbytes: int, wait: float = 0.0, *, streamed: int = 0) -> float:
        """Delay (ns) of ``nbytes`` between a rank and dimension ``dim``'s switch, sent
        ``wait`` ns from now; counted as one message. ``streamed`` bytes already left while
        the switch was still receiving (cut-through), so only the rest is serialized."""
        self.bytes_sent += nbytes
        self.messages_sent += 1
        delay = self._latency_ns[dim] + max(0, nbytes - streamed) / self._bytes_per_ns[dim]
        if self.compat_astra:
            delay = float(math.trunc(delay))
        if self.transfers is not None and nbytes:
            start = self.queue.now + wait
            self.transfers.append((start, start + delay, dim, nbytes))
        return delay

    def dim_capacity(self) -> list[float]:
        """Injection capacity of each dimension, B/ns: every NPU's bandwidth into it."""
        return [self.topology.npus * bpn for bpn in self._bytes_per_ns]

    def fork(self, queue: EventQueue) -> AnalyticalNetwork:
        return AnalyticalNetwork(self.spec, queue, compat_astra=self.compat_astra)

    def injection_ports(self) -> InjectionPorts | None:
        """Per-link injection in the default mode; none in ASTRA-sim's (``injection.py``)."""
        if self.compat_astra:
            return None
        return InjectionPorts(self.topology, [d.bandwidth for d in self.spec.dims])
