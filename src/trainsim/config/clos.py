"""A k-tier Clos fabric's parameters in SI units, and the network dimensions equivalent to it
(config layer; the platform file's ``network.fabric: {kind: clos, tiers: [...]}``; the graph is
built by ``topology/clos.py``; docs/topologies.md).

Tier 0 is the scale-up domain (GPUs of a node on NVLink/NVSwitch); tier 1 joins nodes under a
leaf (per rail or not); tier 2 joins leaves into a pod under spines; tier 3 joins pods under a
core (super-spine); and so on. ``size`` of tier ``i`` is how many units of tier ``i - 1`` one
unit of tier ``i`` holds (tier 0: NPUs per node), so the NPU count is the product of the sizes
and rank ids vary fastest in tier 0, as in ``NetworkSpec.dims``.

The equivalent dimensions (one per tier, ``Switch``), used by the congestion-unaware backend and
its replica fast path (docs/topologies.md, "Derivation")::

    bandwidth_i = b_i / (o_1 x o_2 x ... x o_i)      per NPU, B/s
    latency_i   = l_0                 (i = 0)
                = l_1 + ... + l_i     (i >= 1)       ns

where ``b_i`` is the tier's per-NPU link bandwidth before tapering (the tier's own, or the one
below's when not given) and ``o_j`` the oversubscription entering tier ``j`` (the down:up
ratio of the switches of tier ``j - 1``; ``o_1`` is NICs shared by NPUs): every byte that
crosses tier ``i`` went through the tapers of tiers ``1 .. i``, and with all NPUs of a unit
sending at once (a collective on that dimension) each gets its share of the thinnest, topmost
one. A message crossing tier ``i`` passes a switch of every tier ``1 .. i`` up and down, hence
the latency sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsim.config.types import DimSpec


@dataclass(frozen=True)
class ClosTier:
    """One tier: ``size`` units of the tier below per unit; ``bandwidth`` B/s per NPU (before
    the taper); ``latency_ns`` one way through the tier's switch; ``oversubscription`` entering
    this tier (>= 1 tapers); ``rail``: one switch per NPU position of a node (tier 1 only);
    ``switches``: parallel switches per unit (ECMP over them), tiers 2 and up."""

    size: int
    bandwidth: float
    latency_ns: float = 0.0
    oversubscription: float = 1.0
    rail: bool = False
    switches: int = 1


@dataclass(frozen=True)
class ClosParams:
    """A k-tier Clos, lowest tier first."""

    tiers: tuple[ClosTier, ...]

    @property
    def npus(self) -> int:
        return math.prod(t.size for t in self.tiers)

    def taper(self, tier: int) -> float:
        """The product of the oversubscriptions of tiers ``1 .. tier``."""
        return math.prod(t.oversubscription for t in self.tiers[1 : tier + 1])

    def per_npu_bandwidth(self, tier: int) -> float:
        """B/s each NPU gets crossing ``tier`` when every NPU of a unit sends at once."""
        return self.tiers[tier].bandwidth / self.taper(tier)

    def latency_ns(self, tier: int) -> float:
        """One way, NPU to NPU, across ``tier``."""
        if tier == 0:
            return self.tiers[0].latency_ns
        return sum(t.latency_ns for t in self.tiers[1 : tier + 1])

    def dims(self) -> tuple[DimSpec, ...]:
        """The equivalent network dimensions (module docstring)."""
        return tuple(
            DimSpec("Switch", t.size, self.per_npu_bandwidth(i), self.latency_ns(i))
            for i, t in enumerate(self.tiers)
        )
