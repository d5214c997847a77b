"""The physical graph of a k-tier Clos fabric (topology layer; the platform file's
``network.fabric: {kind: clos}``, parameters in ``config/clos.py``; docs/topologies.md), for
the congestion_aware and flow backends. The congestion-unaware backend uses the equivalent
dims instead (``ClosParams.dims``).

Devices: the NPUs ``0 .. N-1``, then one NVSwitch per node (tier 0), the leaves (tier 1: one
per node group, or one per NPU position of a node when ``rail``), then ``switches`` switches
per unit of every tier above. Links (both ways):

- NPU - its node's NVSwitch: ``b_0``;
- NPU - its leaf: ``b_1 / o_1``;
- every switch of a tier ``i - 1`` unit - every switch of its tier ``i`` unit: the unit's
  NPUs x ``b_i / (o_1 ... o_i)``, spread evenly over those links (the taper of
  ``config/clos.py``).

A link into tier ``i`` has half the tier's latency (a message goes up and down). Routes go up
to the lowest tier whose unit holds both ends and down again, choosing among a unit's parallel
switches by a hash of the pair (ECMP, as ``fabrics.leaf_spine``). On a rail-optimized fabric a
message between different NPU positions first crosses the node's NVSwitch to the NPU on the
destination's rail (as NCCL's PXN does), then stays on that rail.

Units: bandwidths in B/s, latencies in ns.
"""

from __future__ import annotations

import math

from trainsim.config.clos import ClosParams
from trainsim.topology.fabrics import RoutedGraph


def _hash(src: int, dst: int, tier: int, ways: int) -> int:
    """A deterministic flow hash of the pair, salted by the tier: the pair's Knuth product,
    then a 32-bit avalanche mix (so that pairs with equal low bits do not all pick one switch)."""
    h = (src * 2654435761 + dst * 40503 + tier * 97) % 2**32
    h = ((h ^ (h >> 16)) * 0x45D9F3B) % 2**32
    h = ((h ^ (h >> 16)) * 0x45D9F3B) % 2**32
    return (h ^ (h >> 16)) % ways


def clos_fabric(params: ClosParams) -> RoutedGraph:
    """The graph of ``params`` (module docstring)."""
    tiers = params.tiers
    npus = params.npus
    per_node = tiers[0].size
    # NPUs in one unit of each tier, and units of each tier
    unit = [math.prod(t.size for t in tiers[: i + 1]) for i in range(len(tiers))]
    units = [npus // u for u in unit]
    # switches in one unit of each tier (tier 0: the node's NVSwitch)
    per_unit = [1, per_node if tiers[1].rail else 1, *(t.switches for t in tiers[2:])]
    first = [npus]  # device id of each tier's first switch
    for i in range(len(tiers) - 1):
        first.append(first[i] + units[i] * per_unit[i])
    devices = first[-1] + units[-1] * per_unit[-1]
    g = RoutedGraph(npus=npus, devices=devices)

    def switch(tier: int, unit_index: int, k: int) -> int:
        return first[tier] + unit_index * per_unit[tier] + k

    def both(a: int, b: int, bandwidth: float, latency_ns: float, tier: int) -> None:
        g.add_link(a, b, bandwidth, latency_ns, tier)
        g.add_link(b, a, bandwidth, latency_ns, tier)

    leaf_bw = params.per_npu_bandwidth(1)
    for n in range(npus):
        both(n, switch(0, n // per_node, 0), tiers[0].bandwidth, tiers[0].latency_ns / 2, 0)
        both(n, switch(1, n // unit[1], n % per_node if tiers[1].rail else 0), leaf_bw, tiers[1].latency_ns / 2, 1)
    for i in range(2, len(tiers)):
        links_per_unit = per_unit[i - 1] * per_unit[i]
        bandwidth = unit[i - 1] * params.per_npu_bandwidth(i) / links_per_unit
        for u in range(units[i - 1]):
            for k in range(per_unit[i - 1]):
                for j in range(per_unit[i]):
                    both(switch(i - 1, u, k), switch(i, u // tiers[i].size, j), bandwidth, tiers[i].latency_ns / 2, i)

    def router(src: int, dst: int) -> tuple[int, ...]:
        top = next(i for i in range(len(tiers)) if src // unit[i] == dst // unit[i])
        if top == 0:
            nvswitch = switch(0, src // per_node, 0)
            return (g.link(src, nvswitch), g.link(nvswitch, dst))
        hops: list[int] = []
        here = src
        if tiers[1].rail and src % per_node != dst % per_node:
            nvswitch = switch(0, src // per_node, 0)
            here = src - src % per_node + dst % per_node
            hops += [g.link(src, nvswitch), g.link(nvswitch, here)]
        rail = here % per_node if tiers[1].rail else 0
        up = [switch(1, here // unit[1], rail)]
        down = [switch(1, dst // unit[1], rail)]
        for i in range(2, top + 1):
            pick = _hash(src, dst, i, per_unit[i])
            up.append(switch(i, here // unit[i], pick))
            if i < top:
                down.append(switch(i, dst // unit[i], _hash(dst, src, i, per_unit[i])))
        # within one leaf the two ends share it: up and down are the same switch
        path = [here, up[0], dst] if top == 1 else [here, *up, *reversed(down), dst]
        hops += [g.link(a, b) for a, b in zip(path, path[1:], strict=False)]
        return tuple(hops)

    g._router = router
    return g
