"""Collectives priced by NCCL's algorithm and protocol choice (system layer, beside the planner:
``system.collective_tuner: nccl`` in a platform file; docs/nccl.md).

For a collective of a type NCCL tunes (all-reduce, all-gather, reduce-scatter, broadcast,
reduce), the runtime asks :class:`NcclPricing` instead of planning phases: it describes the
members as NCCL's communicator sees them (``collectives.nccl_tuner.NcclFabric``: network
dimension 0 is the node, the NVLink domain; the dimensions above it that the members span are
the network), lets the tuner pick the pair NCCL would pick, and returns its price. Every member
finishes at the last member's issue time plus that price: an NCCL collective is one kernel per
rank that progresses only once every peer has launched its own.

Sizes in bytes (Chakra's: an all-gather's ``comm_size`` is the piece each rank contributes, so
NCCL's ``nBytes`` is n x that), times in ns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsim.collectives.nccl_tuner import (
    ALL_GATHER,
    ALL_REDUCE,
    BROADCAST,
    COLLNET_CHAIN,
    COLLNET_DIRECT,
    LL,
    LL128,
    NVLS,
    NVLS_TREE,
    REDUCE,
    REDUCE_SCATTER,
    RING,
    Choice,
    NcclFabric,
    NcclTuner,
)
from trainsim.config.types import Platform
from trainsim.enums import CommType

TUNED_TYPES = {
    int(CommType.ALL_REDUCE): ALL_REDUCE,
    int(CommType.ALL_GATHER): ALL_GATHER,
    int(CommType.REDUCE_SCATTER): REDUCE_SCATTER,
    int(CommType.BROADCAST): BROADCAST,
    int(CommType.REDUCE): REDUCE,
}
"""Chakra types NCCL tunes -> the tuner's names (all-to-all, gather, scatter and the barrier
run the implementation lists' phases as without the tuner)."""

_WIRE = {LL: 2.0, LL128: 128.0 / 120.0}
"""Bytes on the wire per data byte: LL lines carry 4 data + 4 flag bytes, LL128 lines 120 + 8."""


@dataclass(frozen=True, slots=True)
class Priced:
    """One priced collective: its duration (ns), NCCL's pick and the bytes each member sends
    per network dimension (the pattern's traffic, protocol lines included)."""

    duration_ns: float
    choice: Choice
    dim_bytes: list[int]


class NcclPricing:
    """Prices collectives of one platform (module docstring); tuners are kept per group shape,
    prices per (type, size, shape): a training step repeats the same few collectives."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.spec = platform.system.nccl
        self.dims = platform.network.dims
        self._tuners: dict[tuple[int, int, tuple[int, ...]], NcclTuner] = {}
        self._shapes: dict[tuple[int, ...], tuple[int, int, tuple[int, ...]]] = {}
        self._prices: dict[tuple[int, int, tuple[int, int, tuple[int, ...]]], Priced] = {}

    def _shape(self, members: tuple[int, ...]) -> tuple[int, int, tuple[int, ...]]:
        """(ranks, nodes, network dimensions spanned above dimension 0), kept per member list."""
        shape = self._shapes.get(members)
        if shape is None:
            shape = self._shapes[members] = self._new_shape(members)
        return shape

    def _new_shape(self, members: tuple[int, ...]) -> tuple[int, int, tuple[int, ...]]:
        dims = self.dims
        first = members[0]
        strides = [1]
        for d in dims[:-1]:
            strides.append(strides[-1] * d.size)
        spanned = tuple(
            d for d in range(1, len(dims))
            if any((m // strides[d]) % dims[d].size != (first // strides[d]) % dims[d].size for m in members)
        )
        nodes = len({m // dims[0].size for m in members})
        return len(members), nodes, spanned

    def tuner(self, members: tuple[int, ...]) -> NcclTuner:
        """The tuning model of a communicator of ``members``."""
        return self._tuner(self._shape(members))

    def _tuner(self, key: tuple[int, int, tuple[int, ...]]) -> NcclTuner:
        tuner = self._tuners.get(key)
        if tuner is None:
            ranks, nodes, spanned = key
            dims = self.dims
            inter_bw = min((dims[d].bandwidth for d in spanned), default=math.inf)
            hops = {"Switch": 2}
            latency_ns = sum(dims[d].latency_ns * hops.get(dims[d].kind, 1) for d in spanned)
            fabric = NcclFabric(
                ranks=ranks,
                nodes=nodes,
                intra_bw=dims[0].bandwidth,
                inter_bw=inter_bw,
                inter_latency_s=latency_ns * 1e-9,
                switch=dims[0].kind == "Switch",
            )
            tuner = self._tuners[key] = NcclTuner(fabric, self.spec)
        return tuner

    def price(self, comm_type: int, size: int, members: tuple[int, ...]) -> Priced:
        """Duration and pick of one ``comm_type`` collective of Chakra ``size`` on ``members``."""
        coll = TUNED_TYPES[comm_type]
        n = len(members)
        nbytes = size * n if coll == ALL_GATHER else size
        key = self._shape(members)
        memo = (comm_type, nbytes, key)
        priced = self._prices.get(memo)
        if priced is None:
            tuner = self._tuner(key)
            choice = tuner.choose(coll, nbytes)
            net_dim = key[2][-1] if key[2] else 0
            dim_bytes = self._dim_bytes(tuner, coll, choice, nbytes, net_dim)
            priced = self._prices[memo] = Priced(choice.time_s * 1e9, choice, dim_bytes)
        return priced

    def _dim_bytes(self, tuner: NcclTuner, coll: str, choice: Choice, nbytes: int, net_dim: int) -> list[int]:
        """Bytes one member sends per network dimension in the chosen pattern: a ring member
        sends the ring's share (2(n-1)/n for all-reduce, (n-1)/n for all-gather and
        reduce-scatter, 1 for broadcast and reduce), one in GPUs-per-node of it across the
        network; tree and CollNet send the buffer up and down (2 S), NVLS S + S/n to the
        switch; the network's share goes to the highest dimension the members span."""
        f = tuner.fabric
        n, per_node = f.ranks, f.per_node
        if choice.algorithm == RING:
            share = {ALL_REDUCE: 2 * (n - 1) / n, ALL_GATHER: (n - 1) / n, REDUCE_SCATTER: (n - 1) / n}
            total = nbytes * share.get(coll, 1.0)
        elif choice.algorithm == NVLS:
            total = nbytes * (1 + 1 / n)
        else:
            total = 2.0 * nbytes
        total *= _WIRE.get(choice.protocol, 1.0)
        out = [0] * len(self.dims)
        if f.nodes > 1:
            direct = choice.algorithm in (COLLNET_DIRECT, COLLNET_CHAIN, NVLS_TREE)
            net = 2.0 * nbytes / per_node if direct else total / per_node
            out[net_dim] = int(net)
            total = max(0.0, total - net)
        out[0] = int(total)
        return out
