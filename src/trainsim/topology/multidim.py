"""Multi-dimensional networks built from Ring, FullyConnected and Switch blocks.

Rank addressing follows ASTRA-sim: rank ``r`` has coordinate ``(r // stride[d]) % size[d]`` in
dimension ``d``, with dimension 0 varying fastest (``stride[0] = 1``). A point-to-point message
travels on the first dimension in which source and destination differ
(reference-results/README.md). Hop counts per block (astra-sim-semantics.md A2): Ring, the
shorter way round (links are bidirectional); Switch, 2 (up and down); FullyConnected, 1; and
Mesh (a line without wrap-around, trainsim's), the coordinate distance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

RING = "Ring"
SWITCH = "Switch"
FULLY_CONNECTED = "FullyConnected"
MESH = "Mesh"
KINDS = (RING, SWITCH, FULLY_CONNECTED, MESH)


class MultiDimTopology:
    """Coordinates and hop counts of a multi-dimensional network (no time, no bandwidth)."""

    __slots__ = ("kinds", "sizes", "strides", "npus")

    def __init__(self, kinds: Sequence[str], sizes: Sequence[int]) -> None:
        if len(kinds) != len(sizes):
            raise ValueError(f"{len(kinds)} topology kinds but {len(sizes)} sizes")
        for kind in kinds:
            if kind not in KINDS:
                raise ValueError(f"unknown topology kind {kind!r}; expected one of {KINDS}")
        self.kinds = tuple(kinds)
        self.sizes = tuple(int(s) for s in sizes)
        strides = [1]
        for size in self.sizes[:-1]:
            strides.append(strides[-1] * size)
        self.strides = tuple(strides)
        self.npus = math.prod(self.sizes)

    def coord(self, rank: int, dim: int) -> int:
        """Coordinate of ``rank`` in dimension ``dim``."""
        return (rank // self.strides[dim]) % self.sizes[dim]

    def coords(self, rank: int) -> tuple[int, ...]:
        return tuple((rank // s) % n for s, n in zip(self.strides, self.sizes, strict=True))

    def rank_of(self, coords: Sequence[int]) -> int:
        return sum(c * s for c, s in zip(coords, self.strides, strict=True))

    def first_diff_dim(self, src: int, dst: int) -> int:
        """The dimension a message from ``src`` to ``dst`` travels on (-1 if src == dst)."""
        for d, (stride, size) in enumerate(zip(self.strides, self.sizes, strict=True)):
            if (src // stride) % size != (dst // stride) % size:
                return d
        return -1

    def hops(self, dim: int, src: int, dst: int) -> int:
        """Hops between two ranks' coordinates in ``dim`` (0 if they are equal)."""
        a, b = self.coord(src, dim), self.coord(dst, dim)
        if a == b:
            return 0
        kind = self.kinds[dim]
        if kind == RING:
            dist = abs(a - b)
            return min(dist, self.sizes[dim] - dist)
        if kind == SWITCH:
            return 2
        if kind == MESH:
            return abs(a - b)
        return 1

    def dim_peers(self, rank: int, dim: int) -> list[int]:
        """The ranks sharing every coordinate with ``rank`` except in ``dim``, in coordinate order."""
        base = rank - self.coord(rank, dim) * self.strides[dim]
        return [base + i * self.strides[dim] for i in range(self.sizes[dim])]
