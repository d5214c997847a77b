"""Multi-dimensional networks built from Ring, FullyConnected and Switch blocks.

Rank addressing follows ASTRA-sim: rank ``r`` has coordinate ``(r // stride[d]) % size[d]`` in
dimension ``d``, with dimension 0 varying fastest (``stride[0] = 1``). Hop counts per block (astra-sim-semantics.md
A2): Ring, the shorter way round (links are bidirectional); Switch, 2 (up and down);
FullyConnected, 1; and Mesh (a line without wrap-around, trainsim's), the coordinate distance.

The path of a point-to-point message (:meth:`MultiDimTopology.path`, :meth:`send_dim`,
:meth:`shape`: the one place that decides it; every pricer, port and symmetry proof asks here):

- ASTRA-sim's rule (``compat: astra``, and a topology built without bandwidths): the message
  travels on the first dimension in which source and destination differ and nowhere else
  (reference-results/README.md, astra-sim-semantics.md A1-A2);
- the default mode's rule (a topology built with the dimensions' bandwidths,
  :meth:`MultiDimTopology.of_network`): the message crosses every dimension in which they
  differ, in ascending order (dimension-ordered routing, as the congestion-aware graph routes:
  ``topology/graph.py``). Its bytes count on, and its injection port is taken on, the
  *bottleneck* dimension: the slowest of those crossed, ties to the highest (the one leaving
  the node). The congestion-unaware pricing of such a message is cut-through:
  ``sum(hops_d x latency_d) + bytes / min(bandwidth_d)`` over the crossed dimensions
  (``network/analytical.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

RING = "Ring"
SWITCH = "Switch"
FULLY_CONNECTED = "FullyConnected"
MESH = "Mesh"
KINDS = (RING, SWITCH, FULLY_CONNECTED, MESH)


class MultiDimTopology:
    """Coordinates, hop counts and message paths of a multi-dimensional network (no time).

    ``bandwidths`` (any unit, one per dimension) selects the default mode's path rule and ranks
    the dimensions for the bottleneck; None keeps ASTRA-sim's first-dimension rule (module
    docstring)."""

    __slots__ = ("kinds", "sizes", "strides", "npus", "bottleneck_rank", "_agree_moduli", "_send_dims")

    def __init__(self, kinds: Sequence[str], sizes: Sequence[int], *, bandwidths: Sequence[float] | None = None) -> None:
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
        # two ranks agree on dimensions 0..d iff they are equal modulo stride[d + 1]
        self._agree_moduli = (*self.strides[1:], self.npus)
        self._send_dims: dict[int, int] = {}  # src x npus + dst -> send_dim (asked once per message)
        # per dimension, its rank as a bottleneck (higher: slower; equal bandwidths, the higher
        # dimension); None: ASTRA-sim's first-dimension rule
        self.bottleneck_rank: tuple[int, ...] | None = None
        if bandwidths is not None:
            if len(bandwidths) != len(self.sizes):
                raise ValueError(f"{len(bandwidths)} bandwidths but {len(self.sizes)} dimensions")
            order = sorted(range(len(self.sizes)), key=lambda d: (-float(bandwidths[d]), d))
            rank = [0] * len(order)
            for position, d in enumerate(order):
                rank[d] = position
            self.bottleneck_rank = tuple(rank)

    @classmethod
    def of_network(cls, network: Any, *, compat_astra: bool) -> MultiDimTopology:
        """The topology of a network spec (``config.types.NetworkSpec``: ``dims`` with ``kind``,
        ``size``, ``bandwidth``) with its mode's path rule (module docstring)."""
        dims = network.dims
        bandwidths = None if compat_astra else [d.bandwidth for d in dims]
        return cls([d.kind for d in dims], [d.size for d in dims], bandwidths=bandwidths)

    def astra_rule(self) -> MultiDimTopology:
        """This topology under ASTRA-sim's first-dimension rule (itself when it is already)."""
        return self if self.bottleneck_rank is None else MultiDimTopology(self.kinds, self.sizes)

    def coord(self, rank: int, dim: int) -> int:
        """Coordinate of ``rank`` in dimension ``dim``."""
        return (rank // self.strides[dim]) % self.sizes[dim]

    def coords(self, rank: int) -> tuple[int, ...]:
        return tuple((rank // s) % n for s, n in zip(self.strides, self.sizes, strict=True))

    def rank_of(self, coords: Sequence[int]) -> int:
        return sum(c * s for c, s in zip(coords, self.strides, strict=True))

    def first_diff_dim(self, src: int, dst: int) -> int:
        """The first dimension where ``src`` and ``dst`` differ (-1 if src == dst): the one
        ASTRA-sim's message travels on (:meth:`send_dim` decides by the topology's rule).
        Ranks in ``0 .. npus - 1``; once per message on the congestion-aware path."""
        diff = src - dst
        if diff:
            for d, modulus in enumerate(self._agree_moduli):
                if diff % modulus:
                    return d
        return -1

    def path(self, src: int, dst: int) -> tuple[int, ...]:
        """The dimensions a message from ``src`` to ``dst`` crosses, ascending (empty if src ==
        dst): the first differing one under ASTRA-sim's rule, every differing one otherwise."""
        if self.bottleneck_rank is None:
            d = self.first_diff_dim(src, dst)
            return () if d < 0 else (d,)
        return tuple(
            d for d, (stride, size) in enumerate(zip(self.strides, self.sizes, strict=True))
            if (src // stride) % size != (dst // stride) % size
        )

    def send_dim(self, src: int, dst: int) -> int:
        """The dimension a message from ``src`` to ``dst`` is accounted to and takes its
        injection port on (-1 if src == dst): the first differing one under ASTRA-sim's rule,
        the bottleneck of :meth:`path` otherwise (module docstring). Kept per rank pair
        (collective engines and injection ports ask it for every message)."""
        pair = src * self.npus + dst
        known = self._send_dims.get(pair)
        if known is not None:
            return known
        rank = self.bottleneck_rank
        if rank is None:
            best = self.first_diff_dim(src, dst)
        else:
            best = -1
            for d, (stride, size) in enumerate(zip(self.strides, self.sizes, strict=True)):
                if (src // stride) % size != (dst // stride) % size and (best < 0 or rank[d] > rank[best]):
                    best = d
        if len(self._send_dims) < 1 << 22:  # (a bound: pairs a run uses, not every pair)
            self._send_dims[pair] = best
        return best

    def shape(self, src: int, dst: int) -> tuple[tuple[int, int], ...]:
        """What a message from ``src`` to ``dst`` looks like to a pricer and to the injection
        ports, as ``(dim, offset class)`` per dimension of :meth:`path`: Switch 0 (two hops,
        the uplink, whoever the peer), Mesh the signed coordinate offset, Ring and
        FullyConnected the offset modulo the size (hops, direction and peer port follow from
        it). Two messages of equal shape from any two ranks have the same delay on a pairwise
        backend, the same bottleneck dimension and the same port class; messages that differ
        in any crossed dimension's hops have different shapes (``system/symmetry``)."""
        out = []
        for d in self.path(src, dst):
            kind = self.kinds[d]
            delta = self.coord(dst, d) - self.coord(src, d)
            out.append((d, 0 if kind == SWITCH else delta if kind == MESH else delta % self.sizes[d]))
        return tuple(out)

    def shape_classes(self, src: Any, dst: Any) -> Any:
        """:meth:`shape` of many messages at once, as a numpy int64 array with a row per
        message (``src[i]`` to ``dst[i]``) and a column per dimension: two rows are equal
        exactly when the two messages' shapes are (a dimension off the path holds a value no
        offset class takes). For the symmetry proofs that compare every pair of a group."""
        import numpy as np

        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        off_path = np.iinfo(np.int64).min
        out = np.full((len(src), len(self.sizes)), off_path, dtype=np.int64)
        first = np.full(len(src), True)  # no differing dimension found yet (ASTRA-sim's rule)
        for d, (kind, stride, size) in enumerate(zip(self.kinds, self.strides, self.sizes, strict=True)):
            delta = (dst // stride) % size - (src // stride) % size
            crosses = delta != 0
            if self.bottleneck_rank is None:
                crosses &= first
                first &= delta == 0
            cls = np.zeros_like(delta) if kind == SWITCH else delta if kind == MESH else delta % size
            out[crosses, d] = cls[crosses]
        return out

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
