"""NCCL's algorithm and protocol choice, and the price of the choice on the modelled network
(DESIGN.md, collectives layer: a cost model beside the per-rank algorithms; the collective
runtime uses it when the platform sets ``system.collective_tuner: nccl``, docs/nccl.md).

NCCL picks, per collective and size, the (algorithm, protocol) pair its tuning model predicts
fastest: ``time = latency + bytes / algbw`` (``ncclTopoGetAlgoTime``), with latencies and
bandwidths built once per communicator by ``ncclTopoTuneModel`` (NVIDIA/nccl
``src/graph/tuning.cc``, read at commit b6475625, the 2.19 series). This module reproduces that
model's structure with its constants (cited below, the values, not the code) and feeds it the
bandwidths of the platform's network dimensions:

- algorithms: ring, tree (double binary tree across nodes, chain inside a node), NVLS (NVLink
  SHARP, one node), NVLS tree (NVLS inside nodes, tree across them), CollNet direct and chain
  (network SHARP); protocols LL (8-byte lines of 4 data + 4 flag bytes), LL128 (128-byte lines,
  120 data bytes) and Simple. NVLS and CollNet run Simple only.
- bandwidth per GPU: the intra-node link rate x NCCL's usable fraction (topo.h's per-link
  NVLink rate over the line rate: SM80 20.0 / 25, SM90 20.6 / 25, SM100 40.1 / 50 GB/s); across
  nodes, the node's NIC aggregate (GPUs per node x the per-GPU share of the network dimension).
- protocol factors of tuning.cc: ring LL busbw / 4 (all-reduce, reduce or multi-node; / 3
  otherwise) capped by ``llMaxBws``; ring LL128 x 0.92 (0.7 below 2 GPUs per node) capped by
  channels x ``perChMaxRingLL128Bws``; tree x 0.92 capped by channels x ``perChMaxTreeBws``,
  LL / 3.8, LL128 x 7/9 (one node) or 120/128; bus-to-algorithm ratio n / steps for ring, 1/2
  for tree and CollNet, 5/6 for NVLS; the tree correction factors per size and the ring
  "plateau" (latency x 1.4 from Ampere on, 1.9 before, for a multi-node Simple all-reduce).
- latency: ``baseLat`` + per-step ``hwLat`` (NVLink / PCI / network) x the steps of the
  pattern (ring 2(n-1) for all-reduce, of which 2 x nodes cross the network; tree 2 x (GPUs per
  node - 1 + log2 nodes); NVLS one intra step, + one network step across nodes), the network
  steps paying the platform's inter-node latency (NCCL's ``latencyInter``, twice for Simple),
  and the per-step network post overhead (1 us, x 3 for Simple).

Prediction versus price: :meth:`NcclTuner.choose` takes NCCL's prediction, as NCCL does. The
price of the chosen pair (:attr:`Choice.time_s`) is the same formula with what the network
imposes and NCCL's tuner ignores: an NVLS collective's algorithm bandwidth is capped by the
switch's reduction rate (``nvls_reduce_gbps``, per GPU port; NVLS multicasts the result, so the
cap is on the reduced stream, not on the links); tree and CollNet across nodes are capped by the
node's NIC aggregate; and a per-hardware ``efficiency`` multiplies every bandwidth (the one
calibration factor, set on one nccl-tests row, docs/nccl.md).

Sizes in bytes (``size`` is NCCL's ``nBytes``: the all-gather's output, the reduce-scatter's
input), bandwidths in B/s, times in seconds (NCCL's tables are in us and GB/s; converted here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from trainsim.config.types import NcclSpec
from trainsim.errors import ConfigError

LL, LL128, SIMPLE = "LL", "LL128", "Simple"
PROTOCOLS = (LL, LL128, SIMPLE)
TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE = (
    "tree",
    "ring",
    "collnet_direct",
    "collnet_chain",
    "nvls",
    "nvls_tree",
)
ALGORITHMS = (TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE)

ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, REDUCE = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "broadcast",
    "reduce",
)
TUNED = (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, REDUCE)
"""Collectives NCCL tunes; all-to-all is point-to-point in NCCL (no algorithm choice)."""

_US = 1e-6
_GB = 1e9

# tuning.cc baseLat (us), per algorithm, (LL, LL128, Simple)
_BASE_LAT_US = {
    TREE: (6.8, 14.0, 0.0),
    RING: (6.6, 14.0, 8.4),
    COLLNET_DIRECT: (0.0, 0.0, 0.0),
    COLLNET_CHAIN: (0.0, 0.0, 0.0),
    NVLS: (0.0, 0.0, 0.0),
    NVLS_TREE: (0.0, 0.0, 0.0),
}
# tuning.cc hwLat (us): link kind -> algorithm -> (LL, LL128, Simple)
_HW_LAT_US = {
    "nvlink": {
        TREE: (0.6, 1.25, 28.0),
        RING: (0.6, 1.9, 3.4),
        COLLNET_DIRECT: (0.0, 0.0, 3.7),
        COLLNET_CHAIN: (0.0, 0.0, 2.8),
        NVLS: (0.0, 0.0, 23.0),
        NVLS_TREE: (0.0, 0.0, 23.0),
    },
    "pci": {
        TREE: (1.0, 1.9, 28.0),
        RING: (1.0, 2.5, 5.7),
        COLLNET_DIRECT: (0.0, 0.0, 3.7),
        COLLNET_CHAIN: (0.0, 0.0, 2.8),
        NVLS: (0.0, 0.0, 0.0),
        NVLS_TREE: (0.0, 0.0, 0.0),
    },
    "net": {
        TREE: (5.0, 8.5, 28.0),
        RING: (2.7, 4.0, 14.0),
        COLLNET_DIRECT: (0.0, 0.0, 31.0),
        COLLNET_CHAIN: (0.0, 0.0, 30.0),
        NVLS: (0.0, 0.0, 18.0),
        NVLS_TREE: (0.0, 0.0, 14.0),
    },
}
_ARCH_INDEX = {"volta": 0, "ampere": 1, "hopper": 2, "blackwell": 2}
# tuning.cc per-channel caps (GB/s), [arch][nodes index: 1, 2, >2]; llMaxBws is [arch or CPU][..]
_LL_MAX_BW = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (87.7, 22.5, 19.0))
_PER_CH_RING_LL128 = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7))
_PER_CH_TREE_LL128 = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0))
_PER_CH_TREE = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0))
# tuning.cc treeCorrectionFactor, per protocol, for log2(bytes / 64) = 0 .. 22
_TREE_CORRECTION = {
    LL: (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0),
    LL128: (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0),
    SIMPLE: (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9),
}
NVLINK_FRACTION = {"volta": 20.0 / 25.0, "ampere": 20.0 / 25.0, "hopper": 20.6 / 25.0, "blackwell": 40.1 / 50.0}
"""NCCL's usable NVLink rate per link (topo.h ``SM70/80/90/100_NVLINK_BW``) over the link's line
rate (NVLink 2/3/4: 25 GB/s per direction, NVLink 5: 50)."""


@dataclass(frozen=True, slots=True)
class NcclFabric:
    """What one communicator spans: ``ranks`` GPUs on ``nodes`` nodes (``ranks // nodes`` per
    node, as NCCL's ``nRanks / nNodes``),
    per GPU the intra-node link rate ``intra_bw`` and its share of the network ``inter_bw``
    (B/s, per direction), the network's one-way latency ``inter_latency_s``, whether the
    intra-node fabric is an NVSwitch (``switch``: NVLS possible) and its link kind."""

    ranks: int
    nodes: int
    intra_bw: float
    inter_bw: float
    inter_latency_s: float
    switch: bool = True
    intra_link: str = "nvlink"

    @property
    def per_node(self) -> int:
        return self.ranks // self.nodes


@dataclass(frozen=True, slots=True)
class Choice:
    """One (algorithm, protocol) pair for one collective and size: NCCL's predicted time and
    the modelled price (seconds), and the price's algorithm bandwidth (B/s)."""

    algorithm: str
    protocol: str
    predicted_s: float
    time_s: float
    algbw: float

    @property
    def name(self) -> str:
        return f"{self.algorithm}/{self.protocol}"


class NcclTuner:
    """NCCL's tuning model for one communicator on ``fabric`` with the platform's ``spec``
    (module docstring). Immutable; :meth:`choose` is a pure function of its arguments."""

    def __init__(self, fabric: NcclFabric, spec: NcclSpec) -> None:
        if not 1 <= fabric.nodes <= fabric.ranks:
            raise ConfigError(f"{fabric.ranks} ranks on {fabric.nodes} nodes; expected 1 <= nodes <= ranks", field="system.nccl")
        self.fabric = fabric
        self.spec = spec
        arch = spec.arch
        self._arch = _ARCH_INDEX[arch]
        self._nodes_index = 0 if fabric.nodes == 1 else 1 if fabric.nodes == 2 else 2
        fraction = spec.nvlink_fraction if spec.nvlink_fraction is not None else NVLINK_FRACTION[arch]
        self.intra_bw = fabric.intra_bw * (fraction if fabric.intra_link == "nvlink" else 1.0)
        # the node's NIC aggregate, as NCCL's network graph sees it (bwInter x channels)
        self.net_bw = fabric.inter_bw * fabric.per_node if fabric.nodes > 1 else math.inf

    # -- NCCL's model ------------------------------------------------------------------------
    def _enabled(self, coll: str, algo: str, proto: str) -> bool:
        f, spec = self.fabric, self.spec
        if algo not in spec.algorithms or proto not in spec.protocols:
            return False  # NCCL_ALGO / NCCL_PROTO
        if (algo in (NVLS, NVLS_TREE, COLLNET_DIRECT, COLLNET_CHAIN)) and proto != SIMPLE:
            return False
        if coll != ALL_REDUCE:
            return algo == RING  # the version modelled also has NVLS / CollNet all-gather: not here
        if algo == NVLS:
            return spec.nvls and f.switch and f.nodes == 1
        if algo == NVLS_TREE:
            return spec.nvls and f.switch and f.nodes > 1
        if algo in (COLLNET_DIRECT, COLLNET_CHAIN):
            return spec.collnet and f.nodes > 1 and (algo == COLLNET_CHAIN or f.switch)
        # tuning.cc enables LL128 by default on Volta / Ampere / Hopper + NVLink only
        return proto != LL128 or (f.intra_link == "nvlink" and spec.arch in ("volta", "ampere", "hopper"))

    def _steps(self, coll: str) -> tuple[int, int]:
        n, nodes = self.fabric.ranks, self.fabric.nodes
        if coll == ALL_REDUCE:
            return 2 * (n - 1), (2 * nodes if nodes > 1 else 0)
        if coll in (ALL_GATHER, REDUCE_SCATTER):
            return n - 1, nodes - 1
        return n, nodes

    def _bus_bw(self, coll: str, algo: str, proto: str) -> float:
        """tuning.cc's bus bandwidth (B/s) of the pair (the network's caps: ``_alg_bw``)."""
        f, spec = self.fabric, self.spec
        ch = spec.channels
        a, k = self._arch, self._nodes_index
        multi = f.nodes > 1
        gb = _GB
        if algo in (COLLNET_DIRECT, COLLNET_CHAIN):
            bw = self.intra_bw
        elif algo in (NVLS, NVLS_TREE):
            bw = min(self.intra_bw, self.net_bw if multi else self.intra_bw)
            if algo == NVLS_TREE and f.nodes > 2:
                bw = min(self.intra_bw, self.net_bw / 2)
        elif not multi or (algo == TREE and f.nodes <= 2):
            bw = self.intra_bw  # tuning.cc takes the tree graph's intra bandwidth up to 2 nodes
        else:
            bw = min(self.intra_bw, self.net_bw)  # a ring channel crosses a NIC (graph search)
        bus = bw
        if algo == RING and proto == LL:
            quarter = multi or coll in (ALL_REDUCE, REDUCE)
            bus = min(_LL_MAX_BW[a if not multi else 0][k] * gb, bus / (4.0 if quarter else 3.0))
        if algo == RING and proto == LL128:
            bus = min(bus * (0.7 if f.per_node < 2 else 0.92), ch * _PER_CH_RING_LL128[a][k] * gb)
        if algo == TREE:
            bus = min(bus * 0.92, ch * _PER_CH_TREE[a][k] * gb)
            if proto == LL:
                bus = min(bus / 3.8, _LL_MAX_BW[a if not multi else 0][k] * gb)
            elif proto == LL128:
                bus = min(bus * (7.0 / 9.0 if not multi else 120.0 / 128.0), ch * _PER_CH_TREE_LL128[a][k] * gb)
        if algo == COLLNET_DIRECT:
            ratio = f.per_node / ch
            ratio -= (ratio - 1) / 2
            bus = bus / ratio * (0.85 if spec.arch in ("hopper", "blackwell") else 1.0)
        return bus

    def _alg_bw(self, coll: str, algo: str, proto: str, *, priced: bool) -> float:
        bus = self._bus_bw(coll, algo, proto)
        if algo == RING:
            steps, _ = self._steps(coll)
            alg = bus * self.fabric.ranks / steps
        elif algo in (NVLS, NVLS_TREE):
            alg = bus * 5.0 / 6.0
        else:
            alg = bus * 0.5
        if priced:
            alg *= self.spec.efficiency
            if algo in (NVLS, NVLS_TREE) and self.spec.nvls_reduce_bw is not None:
                alg = min(alg, self.spec.nvls_reduce_bw)  # the switch reduces at most this per port
            if self.fabric.nodes > 1 and algo in (TREE, COLLNET_DIRECT, COLLNET_CHAIN, NVLS_TREE):
                alg = min(alg, self.net_bw * self.spec.efficiency)  # each node moves >= S each way
        return alg

    def _latency_s(self, coll: str, algo: str, proto: str) -> float:
        f, spec = self.fabric, self.spec
        p = PROTOCOLS.index(proto)
        lat = _BASE_LAT_US[algo][p]
        intra = _HW_LAT_US[f.intra_link][algo][p]
        inter = _HW_LAT_US["net"][algo][p] + f.inter_latency_s / _US
        if proto == SIMPLE:
            inter += f.inter_latency_s / _US  # the flush's extra network round
        if algo == RING:
            steps, inter_steps = self._steps(coll)
            if coll in (REDUCE, BROADCAST):
                lat += _HW_LAT_US["net" if f.nodes > 1 else f.intra_link][algo][p]  # one pipelined chain
            else:
                if f.nodes > 1:
                    intra = max(intra, spec.net_overhead_us * (3.0 if proto == SIMPLE else 1.0))
                lat += (steps - inter_steps) * intra + inter_steps * inter
        elif algo == TREE:
            lat += 2 * ((f.per_node - 1) * intra + math.floor(math.log2(f.nodes)) * inter)
        elif algo == COLLNET_DIRECT:
            lat += 2 * (min(1, f.per_node - 1) * intra + (f.per_node - 1) * 0.4) + inter
        elif algo == COLLNET_CHAIN:
            lat += 2 * (f.per_node - 1) * intra + inter
        elif algo == NVLS:
            lat = intra + (inter if f.nodes > 1 else 0.0)
        elif algo == NVLS_TREE:
            lat += intra + 2 * math.floor(math.log2(f.nodes)) * inter
        return lat * _US

    def _time_s(self, coll: str, algo: str, proto: str, size: int, *, priced: bool) -> tuple[float, float]:
        f = self.fabric
        bw = self._alg_bw(coll, algo, proto, priced=priced)
        lat = self._latency_s(coll, algo, proto)
        if bw <= 0:
            return math.inf, 0.0
        log_size = int(math.log2(size >> 6)) if size >> 6 else 0
        if algo == TREE and log_size < len(_TREE_CORRECTION[proto]):
            bw *= _TREE_CORRECTION[proto][log_size]
        if (
            algo == RING and proto == SIMPLE and f.nodes > 1 and coll == ALL_REDUCE
            and size / (self.spec.channels * f.ranks) >= 64
        ):
            lat *= 1.9 if self.spec.arch == "volta" else 1.4  # the ring's "plateau"
        return lat + size / bw, bw

    # -- the choice --------------------------------------------------------------------------
    def candidates(self, coll: str, size: int) -> list[Choice]:
        """Every enabled pair for ``coll`` of ``size`` bytes, with NCCL's prediction and the price."""
        if coll not in TUNED:
            raise ConfigError(f"NCCL does not tune {coll!r}; expected one of {', '.join(TUNED)}", field="collective")
        out = []
        for algo in ALGORITHMS:
            for proto in PROTOCOLS:
                if not self._enabled(coll, algo, proto):
                    continue
                predicted, _ = self._time_s(coll, algo, proto, size, priced=False)
                price, bw = self._time_s(coll, algo, proto, size, priced=True)
                if math.isfinite(predicted):
                    out.append(Choice(algo, proto, predicted, price, bw))
        return out

    def choose(self, coll: str, size: int) -> Choice:
        """NCCL's pick for ``coll`` of ``size`` bytes (the smallest predicted time; on a tie the
        first in NCCL's order: tree, ring, CollNet, NVLS; LL, LL128, Simple), with its price. One
        rank: nothing to move, 0 s."""
        if self.fabric.ranks == 1 or size <= 0:
            return Choice(RING, SIMPLE, 0.0, 0.0, math.inf)
        cands = self.candidates(coll, size)
        if not cands:
            raise ConfigError(
                f"no NCCL algorithm and protocol enabled for {coll} on {self.fabric.ranks} ranks; "
                "check system.nccl.algorithms / protocols",
                field="system.nccl",
            )
        return min(cands, key=lambda c: c.predicted_s)
