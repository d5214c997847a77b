"""LIBRA's traffic model: the bytes each rank moves on each network dimension, and the time.

Source: LIBRA (Won, Rashidi et al., arXiv 2109.11762), the end-to-end time model of its
framework, as implemented in astra-sim/libra ``src/model/model.py`` and
``inputs/training_loop/no_overlap.py``. Units: bytes, seconds, bandwidths in GB/s per NPU
(``B_d``, 1e9 B/s; LIBRA uses bytes per ns, the same number).

Bytes on dimension ``d`` for one collective of ``S`` bytes whose group spans ``g_d`` NPUs there
(dimensions a phase's communicator marks ``-1`` are skipped and carry nothing):

- all-reduce, ascending ``d``: ``2 S (g_d - 1) / g_d``, then ``S /= g_d``;
- reduce-scatter, ascending: ``S (g_d - 1) / g_d``, then ``S /= g_d``;
- all-gather, descending: ``S (g_d - 1)``, then ``S *= g_d`` (``S`` is the per-rank input);
- all-to-all, every ``d``: ``S (g_d - 1) / g_d`` (no resizing).

This is the hierarchical decomposition ASTRA-sim's ``localBWAware`` runs (reduce-scatter up the
dimensions, all-gather down; astra-sim-semantics.md E1) with each step priced at its bandwidth
optimum. A collective on ``B`` takes ``max_d bytes_d / B_d`` when its chunks are pipelined across
the dimensions (LIBRA's model: ``coll_time = max(dim_time)``), or ``sum_d bytes_d / B_d`` when
they are not (one chunk). Latency is not modelled, as in LIBRA.

The end-to-end time is LIBRA's ``no_overlap`` training loop: the sum of every layer's forward,
input-gradient and weight-gradient compute times plus every collective's time, nothing
overlapped. So ``T(B) = C + sum_p t_p(B)``: convex in ``B`` (each ``bytes / B_d`` is convex for
``B_d > 0``, and a max or a sum of convex functions is convex), which the optimizer relies on.

Workloads come from ASTRA-sim 1.0 text with a LIBRA communicator (:func:`traffic_from_text`;
the file is read by the shared :func:`trainsim.workload.astra_text.parse_text_workload`, which
takes LIBRA's header-less layer files as ``mode=None``) or from one rank's Chakra graph
(:func:`traffic_from_graph`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError, TraceError
from trainsim.optimize.libra_inputs import Communicator, LibraNetwork
from trainsim.workload.astra_text import (
    COMM_TYPES,
    PHASES,
    TextLayer,
    TextWorkload,
    parse_text_workload,
)
from trainsim.workload.graph import WorkloadGraph

GBPS = 1e9  # B/s in one GB/s
PHASE_NAMES = ("forward", "input_grad", "weight_grad")


def _layers(workload: str | Path | TextWorkload | Sequence[TextLayer]) -> tuple[TextLayer, ...]:
    if isinstance(workload, str | Path):
        return parse_text_workload(workload).layers
    if isinstance(workload, TextWorkload):
        return workload.layers
    return tuple(workload)


def phase_comm(layer: TextLayer, index: int) -> CommType | None:
    """The Chakra collective type of phase ``index`` (0 forward, 1 input gradient, 2 weight
    gradient) of a text layer; ``None`` for ``NONE`` or an empty collective."""
    phase = layer.phase(PHASES[index])
    if phase.comm == "NONE" or phase.nbytes == 0:
        return None
    try:
        return COMM_TYPES[phase.comm]
    except KeyError:
        raise ConfigError(
            f"layer {layer.name!r} (line {layer.line}): {phase.comm} has no per-dimension traffic model",
            field=f"{PHASE_NAMES[index]} collective",
        ) from None


def dim_bytes(comm: CommType, size: float, groups: Sequence[int | None]) -> np.ndarray:
    """Bytes one rank moves on each dimension for one collective of ``size`` bytes (LIBRA's
    per-dimension message sizes; ``None`` or 1 = the group does not span that dimension)."""
    out = np.zeros(len(groups))
    s = float(size)
    dims = [d for d, g in enumerate(groups) if g is not None and g > 1]
    if comm == CommType.ALL_REDUCE:
        for d in dims:
            g = groups[d]
            assert g is not None
            out[d] = 2.0 * s * (g - 1) / g
            s /= g
    elif comm in (CommType.REDUCE_SCATTER, CommType.REDUCE_SCATTER_BLOCK):
        for d in dims:
            g = groups[d]
            assert g is not None
            out[d] = s * (g - 1) / g
            s /= g
    elif comm == CommType.ALL_GATHER:
        for d in reversed(dims):
            g = groups[d]
            assert g is not None
            out[d] = s * (g - 1)
            s *= g
    elif comm == CommType.ALL_TO_ALL:
        for d in dims:
            g = groups[d]
            assert g is not None
            out[d] = s * (g - 1) / g
    elif comm != CommType.BARRIER:
        raise ValueError(f"LIBRA's traffic model has no formula for {CommType(comm).name}")
    return out


@dataclass
class WorkloadTraffic:
    """One workload on one network: total compute time and, per communication, the bytes one
    rank moves on each dimension (row ``p`` of ``bytes_per_dim``, shape ``(P, D)``)."""

    name: str
    compute_s: float
    bytes_per_dim: np.ndarray
    labels: list[str] = field(default_factory=list)
    pipelined: bool = True

    @property
    def ndims(self) -> int:
        return int(self.bytes_per_dim.shape[1])

    def dim_times_s(self, bandwidths_gbps: Sequence[float] | np.ndarray) -> np.ndarray:
        """``(P, D)`` seconds each communication spends on each dimension (inf where a
        dimension with traffic has no bandwidth)."""
        bw = np.asarray(bandwidths_gbps, dtype=float) * GBPS
        if bw.shape != (self.ndims,):
            raise ValueError(f"expected {self.ndims} bandwidths, got {bw.shape}")
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(self.bytes_per_dim > 0, self.bytes_per_dim / bw, 0.0)
        return np.where((self.bytes_per_dim > 0) & (bw <= 0), np.inf, t)

    def comm_times_s(self, bandwidths_gbps: Sequence[float] | np.ndarray) -> np.ndarray:
        """Seconds of each communication: slowest dimension when pipelined, else the sum."""
        t = self.dim_times_s(bandwidths_gbps)
        if t.shape[0] == 0:
            return np.zeros(0)
        return t.max(axis=1) if self.pipelined else t.sum(axis=1)

    def comm_s(self, bandwidths_gbps: Sequence[float] | np.ndarray) -> float:
        return float(self.comm_times_s(bandwidths_gbps).sum())

    def time_s(self, bandwidths_gbps: Sequence[float] | np.ndarray) -> float:
        """End-to-end seconds of one step (LIBRA's no-overlap training loop)."""
        return self.compute_s + self.comm_s(bandwidths_gbps)

    def bytes_on_dims(self) -> np.ndarray:
        """Total bytes per dimension over the step, ``(D,)``."""
        return self.bytes_per_dim.sum(axis=0)


def traffic_from_text(
    workload: str | Path | TextWorkload | Sequence[TextLayer],
    communicator: Communicator,
    network: LibraNetwork,
    *,
    pipelined: bool = True,
    name: str | None = None,
) -> WorkloadTraffic:
    """A LIBRA workload: text layers (a path, read by the shared
    :func:`trainsim.workload.astra_text.parse_text_workload`, or its parsed layers) and the
    communicator of each phase kind."""
    layers = _layers(workload)
    for index in range(3):
        if len(communicator.phase(index)) != network.ndims:
            raise ConfigError(
                f"the communicator has {len(communicator.phase(index))} dimensions, the network {network.ndims}",
                file=communicator.source or None,
            )
    compute_ns = 0.0
    rows, labels = [], []
    for layer in layers:
        for k, which in enumerate(PHASES):
            phase = layer.phase(which)
            compute_ns += phase.cycles  # ASTRA-sim 1.0 cycles are ns
            comm = phase_comm(layer, k)
            if comm is None:
                continue
            groups = communicator.phase(k)
            rows.append(dim_bytes(comm, phase.nbytes, groups))
            labels.append(f"{layer.name}.{PHASE_NAMES[k]} {comm.name} {phase.nbytes} B")
    label = name or (Path(workload).stem if isinstance(workload, str | Path) else "workload")
    matrix = np.array(rows, dtype=float).reshape(len(rows), network.ndims)
    return WorkloadTraffic(label, compute_ns * 1e-9, matrix, labels, pipelined)


def _coords(rank: int, sizes: Sequence[int]) -> list[int]:
    out = []
    for n in sizes:
        out.append(rank % n)
        rank //= n
    return out


def group_sizes(members: Sequence[int], sizes: Sequence[int], *, name: str = "") -> tuple[int | None, ...]:
    """Per-dimension group sizes of a communicator group that is a sub-grid of the network
    (ranks vary fastest in dimension 0); ``None`` where it spans one NPU."""
    coords = [_coords(r, sizes) for r in members]
    spans = [len({c[d] for c in coords}) for d in range(len(sizes))]
    if math.prod(spans) != len(set(members)):
        raise ConfigError(
            f"communicator group {name!r} ({len(members)} ranks) is not a sub-grid of the network, "
            "so its traffic per dimension is not defined by LIBRA's model",
            field=f"comm_groups.{name}",
        )
    return tuple(s if s > 1 else None for s in spans)


def traffic_from_graph(
    graph: WorkloadGraph,
    network: LibraNetwork,
    *,
    comm_groups: Mapping[str, Sequence[int]] | None = None,
    pipelined: bool = True,
    name: str | None = None,
) -> WorkloadTraffic:
    """One rank's Chakra graph as a LIBRA workload.

    Compute time is the sum of the COMP nodes' durations; every COMM_COLL node is one
    communication, its groups being the network dimensions ``involved_dim`` marks (all when
    absent), narrowed to the node's communicator group (``pg_name`` looked up in
    ``comm_groups``) when it has one. A SEND node puts its bytes on the first dimension where
    the rank and its peer differ (the analytical network's routing); RECV nodes add nothing.
    Like LIBRA's loop this sums everything, ignoring the overlap the graph may allow.
    """
    sizes = network.sizes
    compute = 0.0
    rows, labels = [], []
    types = graph.types
    for pos in range(len(graph)):
        kind = int(types[pos])
        if kind == NodeType.COMP_NODE:
            compute += float(graph.duration_s[pos])
        elif kind == NodeType.COMM_COLL_NODE:
            comm = int(graph.comm_type[pos])
            if comm not in CommType._value2member_map_:
                raise TraceError("COMM_COLL node without a known comm_type", file=graph.source or None, rank=graph.rank, node_id=int(graph.ids[pos]))
            involved = graph.involved_dim.get(pos) or (True,) * len(sizes)
            if len(involved) < len(sizes):
                involved = tuple(involved) + (False,) * (len(sizes) - len(involved))
            groups: tuple[int | None, ...] = tuple(n if involved[d] else None for d, n in enumerate(sizes))
            pg = graph.pg_name[pos]
            if pg:
                if comm_groups is None or pg not in comm_groups:
                    raise TraceError(
                        f"collective of communicator group {pg!r}, which no comm-group mapping defines",
                        file=graph.source or None, rank=graph.rank, node_id=int(graph.ids[pos]),
                    )
                sub = group_sizes(comm_groups[pg], sizes, name=pg)
                groups = tuple(s if involved[d] else None for d, s in enumerate(sub))
            try:
                row = dim_bytes(CommType(comm), float(graph.comm_size[pos]), groups)
            except ValueError as exc:
                raise TraceError(
                    str(exc), file=graph.source or None, rank=graph.rank, node_id=int(graph.ids[pos]),
                    hint="LIBRA's model covers all-reduce, reduce-scatter, all-gather and all-to-all",
                ) from None
            rows.append(row)
            labels.append(f"{graph.names[pos]} {CommType(comm).name} {int(graph.comm_size[pos])} B")
        elif kind == NodeType.COMM_SEND_NODE:
            peer = int(graph.comm_dst[pos])
            a, b = _coords(graph.rank, sizes), _coords(peer, sizes) if peer >= 0 else None
            if b is None or not 0 <= peer < network.npus:
                raise TraceError("SEND node without a valid comm_dst", file=graph.source or None, rank=graph.rank, node_id=int(graph.ids[pos]))
            diff = [d for d in range(len(sizes)) if a[d] != b[d]]
            if diff:
                row = np.zeros(len(sizes))
                row[diff[0]] = float(graph.comm_size[pos])
                rows.append(row)
                labels.append(f"{graph.names[pos]} SEND {int(graph.comm_size[pos])} B")
    matrix = np.array(rows, dtype=float).reshape(len(rows), len(sizes))
    return WorkloadTraffic(name or Path(graph.source).stem or f"rank{graph.rank}", compute, matrix, labels, pipelined)
