"""Collective bandwidth figures for reports, as nccl-tests prints them (collectives layer; pure
functions, no time or network state).

Definitions (nccl-tests, doc/PERFORMANCE.md, "Algorithm bandwidth" and "Bus bandwidth"):

- ``size`` S is nccl-tests' size column: the bytes of the largest buffer of a rank. From a
  Chakra ``comm_size`` (``CollectiveRequest.size``: all-gather's per-rank input, the whole
  buffer for the others), S = n x comm_size for all-gather, comm_size otherwise;
- algorithm bandwidth ``algbw = S / t`` (B/s), t the collective's time in seconds;
- bus bandwidth ``busbw = algbw x factor``, with the factor that makes busbw comparable to a
  link's bandwidth whatever n: all-reduce 2(n-1)/n; all-gather, reduce-scatter, all-to-all,
  gather, scatter (n-1)/n; broadcast and reduce 1; barrier 0 (it moves no data).

The bound: without reduction in the network a rank must send (or receive) busbw x t bytes
(all-reduce: 2(n-1)/n S, Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for
clusters of workstations", JPDC 69(2), 2009; the others: the (n-1)/n S or S each non-root
receives), so busbw cannot exceed a rank's injection bandwidth: the sum over the dimensions it
uses of ports x link bandwidth (Ring 2 links, 1 when n = 2; Mesh 2; Switch 1 uplink;
FullyConnected n-1).
``ratio = busbw / bound`` is the fraction of that peak a collective reached; in-network
reduction (``inSwitch``) can exceed 1 for all-reduce, as SHARP does.
Units: bytes, seconds, B/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trainsim.enums import CommType

_HALF = {
    int(CommType.ALL_GATHER),
    int(CommType.REDUCE_SCATTER),
    int(CommType.REDUCE_SCATTER_BLOCK),
    int(CommType.ALL_TO_ALL),
    int(CommType.GATHER),
    int(CommType.SCATTER),
}
_ONE = {int(CommType.BROADCAST), int(CommType.REDUCE)}
_PORTS = {"Ring": 2, "Mesh": 2, "Switch": 1}


def bus_factor(comm_type: int, n: int) -> float:
    """nccl-tests' busbw / algbw factor for ``n`` ranks."""
    if n < 1:
        raise ValueError(f"a collective needs at least one rank, got n = {n}")
    t = int(comm_type)
    if t == int(CommType.ALL_REDUCE):
        return 2 * (n - 1) / n
    if t in _HALF:
        return (n - 1) / n
    if t in _ONE:
        return 1.0
    if t == int(CommType.BARRIER):
        return 0.0
    raise ValueError(f"unknown collective type {comm_type}")


def nccl_size(comm_type: int, comm_size: int, n: int) -> int:
    """nccl-tests' size S (bytes) of a collective whose Chakra ``comm_size`` is given."""
    if int(comm_type) == int(CommType.ALL_GATHER):
        return comm_size * n
    if int(comm_type) == int(CommType.BARRIER):
        return 0
    return comm_size


def algbw(size: float, seconds: float) -> float:
    """Algorithm bandwidth S / t (B/s)."""
    if seconds <= 0:
        raise ValueError(f"a collective's time must be positive, got {seconds} s")
    return size / seconds


def injection_bandwidth(
    kinds: Sequence[str], sizes: Sequence[int], bandwidths: Sequence[float]
) -> float:
    """A rank's peak injection bandwidth (B/s) over the given dimensions: per dimension, its
    outgoing links x the link bandwidth (dimensions of size 1 add nothing)."""
    total = 0.0
    for kind, n, bw in zip(kinds, sizes, bandwidths, strict=True):
        if n > 1:
            ports = n - 1 if kind == "FullyConnected" else _PORTS.get(kind, 1)
            if kind == "Ring" and n == 2:
                ports = 1  # both ring neighbours are the same rank over one link pair
            total += ports * bw
    return total


@dataclass(frozen=True, slots=True)
class BandwidthFigures:
    """nccl-tests' columns for one collective plus the fraction of the injection bound."""

    size: int  # bytes (nccl-tests' size)
    seconds: float
    algbw: float  # B/s
    busbw: float  # B/s
    bound: float  # B/s, a rank's injection bandwidth
    ratio: float  # busbw / bound


def bandwidth_figures(
    comm_type: int, comm_size: int, n: int, seconds: float, bound: float
) -> BandwidthFigures:
    """algbw, busbw and busbw / ``bound`` of a collective of ``comm_size`` bytes (Chakra's
    convention) on ``n`` ranks that took ``seconds``."""
    size = nccl_size(comm_type, comm_size, n)
    alg = algbw(size, seconds)
    bus = alg * bus_factor(comm_type, n)
    return BandwidthFigures(size, seconds, alg, bus, bound, bus / bound if bound > 0 else 0.0)
