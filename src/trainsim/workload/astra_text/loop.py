"""ASTRA-sim 1.0's training loop as a dependency graph (DESIGN.md, workload layer;
chakra-format.md §5.1).

ASTRA-sim 1.0 runs a text workload with one finite-state machine per mode
(``Workload::iterate_*``): a single sequential thread of compute steps that issues collectives,
blocking or not, and now and then waits for one to finish. :class:`_Loop` replays that machine
once and writes what it does as nodes: every compute step is a COMP node that depends on the
step before it (``chain``) and on every collective the machine waited for since (``pending``);
every issued collective is a COMM_COLL node that depends on the step that issued it; a blocking
collective becomes the new ``chain``. Each collective is followed by its layer's update delay
(ASTRA-sim 1.0 adds it after the fwd, input-gradient and weight-gradient collectives alike) as a
CPU COMP node (``is_cpu_op``), so the delay holds back what waits for the collective without
taking the GPU. Nodes get consecutive ids in the order the machine issues them.

Per mode (``L`` layers, ``i`` from ``L-1`` down in the backward pass):

- MICRO: the first layer's weight-gradient collective once per pass, nothing else.
- DATA: forward compute of every layer; then per layer weight-gradient compute, its collective
  (non-blocking), input-gradient compute; the first layer has no input-gradient step.
- MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_CUSTOMIZED: forward compute then a blocking
  forward collective per layer; backward: input-gradient compute, its collective (non-blocking,
  none for the first layer), weight-gradient compute, its collective (non-blocking); the next
  layer's input gradient waits for this layer's input-gradient collective.
- HYBRID_TRANSFORMER: as above, but the input-gradient collective blocks and the first layer has
  one too. HYBRID_TRANSFORMER_FWD_IN_BCKWD adds the recomputation: on reaching an initiating layer
  the forward steps (compute and collective) from the nearest checkpoint below it run again.
- HYBRID_DLRM(_ENHANCED): forward compute per layer; an all-to-all forward collective is issued
  without blocking, and the layer after the last bottom layer waits for the first layer's one;
  backward: weight-gradient compute, its collective, input-gradient compute (none for the first
  layer); after the input gradient of the layer above the last bottom layer the first layer's
  input-gradient all-to-all is issued, and (HYBRID_DLRM only) the first layer's weight-gradient
  step waits for it before the pass ends.
- DISTRIBUTED_INFERENCE: forward compute and a blocking forward collective per layer.

Across passes, layer ``i``'s forward compute waits for its previous weight-gradient collective
and update delay (its weight-gradient compute where there is no collective).

Units: text cycles are nanoseconds (ASTRA-sim 1.0 runs at 1 GHz), so ``duration_s`` = cycles x
1e-9 s; ``comm_size`` in bytes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from trainsim.enums import CommType, NodeType
from trainsim.errors import ConfigError, TraceError
from trainsim.workload.astra_text.dims import (
    ALL,
    ASTRA_SIM_1_DIMS,
    is_active,
    model_parallel_boundary,
    phase_dims,
)
from trainsim.workload.astra_text.parse import PHASES, TextWorkload
from trainsim.workload.graph import GraphBuilder, WorkloadGraph

COMM_TYPES = {
    "ALLREDUCE": CommType.ALL_REDUCE,
    "ALLGATHER": CommType.ALL_GATHER,
    "ALLTOALL": CommType.ALL_TO_ALL,
    "REDUCESCATTER": CommType.REDUCE_SCATTER,
}
"""Text collective name -> Chakra collective type (NONE issues nothing)."""

CYCLES_PER_SECOND = 1e9
"""ASTRA-sim 1.0's fixed clock (1 GHz): a text cycle is a nanosecond."""

_TRANSFORMERS = ("HYBRID_TRANSFORMER", "HYBRID_TRANSFORMER_FWD_IN_BCKWD")
_HYBRIDS = ("MODEL", "HYBRID_DATA_MODEL", "HYBRID_MODEL_DATA", "HYBRID_CUSTOMIZED", *_TRANSFORMERS)
_UPDATE_TAG = {"fwd": "FWD", "ig": "IG", "wg": "WG"}


def text_to_graphs(
    workload: TextWorkload,
    npus: int,
    *,
    num_passes: int = 1,
    network_dims: int | None = None,
    dim_sizes: Sequence[int] | None = None,
    update_delays: bool = True,
) -> list[WorkloadGraph]:
    """Per-rank graphs of ``num_passes`` training iterations of ``workload`` on ``npus`` ranks.

    Every rank runs the same loop, so one graph is built and each rank gets a shallow copy of it
    (the same arrays) with its own ``rank``. ``dim_sizes`` (ranks per network dimension,
    dimension 0 first; their product must be ``npus``) decides the transformer modes'
    model-parallel boundary and drops collectives whose involved dimensions all have one rank,
    as ASTRA-sim 1.0 does. ``network_dims`` only sets the length of ``involved_dim``; without
    either, it is ASTRA-sim 1.0's 10. ``update_delays=False`` leaves the update-delay nodes
    out (the graph chakra's text converter would give, with our durations and dimensions).
    """
    ndims, sizes = _network(npus, num_passes, network_dims, dim_sizes)
    _check_budget(workload, npus, num_passes)
    graph = _Loop(workload, ndims, sizes, update_delays).run(num_passes)
    return [graph] + [dataclasses.replace(graph, rank=r) for r in range(1, npus)]


def _check_budget(workload: TextWorkload, npus: int, num_passes: int) -> None:
    """Refuse, before building it, a loop over the limits of ``trainsim.budget``: a pass has
    at least two nodes per layer (forward and backward compute)."""
    from trainsim import budget

    budget.check("ranks", npus, f"{npus:,} ranks", way_under="use fewer ranks")
    nodes = 2 * max(1, len(workload.layers)) * num_passes
    budget.check(
        "graph_nodes",
        nodes,
        f"{num_passes:,} passes of {len(workload.layers)} layers",
        way_under="use fewer passes",
    )


def _network(
    npus: int, num_passes: int, network_dims: int | None, dim_sizes: Sequence[int] | None
) -> tuple[int, tuple[int, ...] | None]:
    """Check the arguments of :func:`text_to_graphs`; returns (dimension count, sizes)."""
    if npus < 1:
        raise ConfigError(f"the rank count must be at least 1, got {npus}", field="npus")
    if num_passes < 1:
        raise ConfigError(f"passes must be at least 1, got {num_passes}", field="num_passes")
    if network_dims is not None and network_dims < 1:
        raise ConfigError(
            f"network_dims must be at least 1, got {network_dims}", field="network_dims"
        )
    if dim_sizes is None:
        return network_dims or ASTRA_SIM_1_DIMS, None
    sizes = tuple(int(s) for s in dim_sizes)
    if not sizes or min(sizes) < 1:
        raise ConfigError(f"dimension sizes must be positive, got {list(sizes)}", field="dim_sizes")
    if math.prod(sizes) != npus:
        raise ConfigError(
            f"the dimension sizes {'x'.join(map(str, sizes))} make {math.prod(sizes)} ranks, not {npus}",
            field="dim_sizes",
        )
    if network_dims is not None and network_dims != len(sizes):
        raise ConfigError(
            f"network_dims is {network_dims} but {len(sizes)} dimension sizes are given",
            field="network_dims",
        )
    return len(sizes), sizes


def _unique(ids: Sequence[int | None]) -> list[int]:
    seen: list[int] = []
    for i in ids:
        if i is not None and i not in seen:
            seen.append(i)
    return seen


class _Loop:
    """One replay of ASTRA-sim 1.0's loop for one rank; see the module docstring."""

    def __init__(
        self, wl: TextWorkload, ndims: int, sizes: tuple[int, ...] | None, update_delays: bool
    ) -> None:
        if wl.mode is None:
            raise TraceError(
                "the workload has no parallelism header (a LIBRA layers-only file)",
                file=wl.path,
                hint='give one, e.g. parse_text_workload(path, header="DATA") or --header DATA',
            )
        self.wl = wl
        self.layers = wl.layers
        self.sizes = sizes
        self.update_delays = update_delays
        self.builder = GraphBuilder(source=wl.path)
        self.next_id = 0
        self.chain: int | None = None  # last step of the sequential loop
        self.pending: list[int] = []  # collectives the next step waits for
        self.prev_wg: list[int | None] = [None] * len(self.layers)  # last pass's wg completions
        self.dims = self._layer_dims(ndims)

    # ----- involved dimensions

    def _layer_dims(self, ndims: int) -> list[dict[str, tuple[bool, ...]]]:
        wl = self.wl
        mode = wl.mode
        assert mode is not None
        boundary = None
        if mode in _TRANSFORMERS:
            group = wl.model_parallel_npu_group or 1
            if group != 1 and self.sizes is None:
                raise TraceError(
                    f"{mode} needs the network's dimension sizes to place model_parallel_NPU_group {group}",
                    file=wl.path,
                    hint="pass dim_sizes (the CLI's --dims), e.g. --dims 4,8",
                )
            boundary = model_parallel_boundary(group, self.sizes or (), file=wl.path)
        out = []
        for i, layer in enumerate(self.layers):
            policy = mode
            if mode == "HYBRID_CUSTOMIZED":
                assert layer.parallelism is not None
                policy = layer.parallelism
            elif mode in ("HYBRID_DLRM", "HYBRID_DLRM_ENHANCED") and i == 0:
                policy = ALL
            out.append({ph: phase_dims(policy, ph, ndims, boundary) for ph in PHASES})
        return out

    # ----- node emitters

    def _add(self, node_type: NodeType, name: str, deps: Sequence[int], **attrs: Any) -> int:
        nid = self.next_id
        self.next_id += 1
        self.builder.add(nid, node_type, name, data_deps=deps, **attrs)
        return nid

    def compute(self, index: int, tag: str, cycles: int, extra: Sequence[int | None] = ()) -> int:
        """A compute step of the loop: waits for the previous step, ``extra`` and ``pending``."""
        layer = self.layers[index]
        deps = _unique([self.chain, *extra, *self.pending])
        nid = self._add(
            NodeType.COMP_NODE,
            f"COMP_NODE_{layer.name}_{tag}",
            deps,
            duration_s=cycles / CYCLES_PER_SECOND,
        )
        self.chain = nid
        self.pending = []
        return nid

    def collective(self, index: int, phase: str, *, label: str = "", tag: str = "") -> int | None:
        """Issue layer ``index``'s ``phase`` collective after the current step; returns the node
        that marks its completion (the update-delay node, or the collective), or ``None`` when
        ASTRA-sim 1.0 issues nothing (NONE, or no involved dimension with more than one rank)."""
        layer = self.layers[index]
        ph = layer.phase(phase)
        dims = self.dims[index][phase]
        if ph.comm == "NONE" or not is_active(dims, self.sizes):
            return None
        if ph.comm not in COMM_TYPES:
            raise TraceError(
                f"line {layer.line}: layer {layer.name!r} issues a {ph.comm} {phase} collective, "
                "which neither ASTRA-sim 1.0 (it panics: no known collective operation) nor Chakra can run",
                file=self.wl.path,
            )
        name = f"COMM_COLL_NODE_{layer.name}{label}_{ph.comm}"
        done = self._add(
            NodeType.COMM_COLL_NODE,
            name,
            [] if self.chain is None else [self.chain],
            comm_type=int(COMM_TYPES[ph.comm]),
            comm_size=ph.nbytes,
            involved_dim=dims,
        )
        if self.update_delays and layer.update_cycles > 0:
            done = self._add(
                NodeType.COMP_NODE,
                f"COMP_NODE_{layer.name}_{tag or _UPDATE_TAG[phase]}_UPDATE",
                [done],
                duration_s=layer.update_cycles / CYCLES_PER_SECOND,
                is_cpu_op=True,
            )
        return done

    def blocking(self, index: int, phase: str, **kw: str) -> int | None:
        """A collective the loop waits for before its next step."""
        done = self.collective(index, phase, **kw)
        if done is not None:
            self.chain = done
        return done

    # ----- the loops

    def run(self, num_passes: int) -> WorkloadGraph:
        mode = self.wl.mode
        for _ in range(num_passes):
            if mode == "MICRO":
                self._micro()
            elif mode == "DATA":
                self._data()
            elif mode in _HYBRIDS:
                self._hybrid()
            elif mode in ("HYBRID_DLRM", "HYBRID_DLRM_ENHANCED"):
                self._dlrm()
            elif mode == "DISTRIBUTED_INFERENCE":
                self._forward(blocking=True)
            else:  # pragma: no cover - the parser admits only the modes above
                raise TraceError(f"no training loop for mode {mode!r}", file=self.wl.path)
        if mode == "MICRO" and len(self.layers) > 1:
            self.builder.warnings.append(
                f"MICRO: ASTRA-sim 1.0 issues only the first layer's collective; "
                f"{len(self.layers) - 1} other layer(s) ignored"
            )
        return self.builder.build()

    def _micro(self) -> None:
        self.collective(0, "wg")  # no compute: every pass's collective is issued at once

    def _forward(self, *, blocking: bool) -> None:
        for i, layer in enumerate(self.layers):
            self.compute(i, "FWD", layer.fwd.cycles, [self.prev_wg[i]])
            if blocking:
                self.blocking(i, "fwd")

    def _data(self) -> None:
        self._forward(blocking=False)
        wg: list[int | None] = [None] * len(self.layers)
        for i in reversed(range(len(self.layers))):
            layer = self.layers[i]
            wg[i] = self.compute(i, "BWD_WG", layer.wg.cycles)
            wg[i] = self.collective(i, "wg") or wg[i]
            if i > 0:
                self.compute(i, "BWD_IG", layer.ig.cycles)
        self.prev_wg = wg

    def _hybrid(self) -> None:
        mode = self.wl.mode
        transformer = mode in _TRANSFORMERS
        label = "_IG_COMM_" if mode == "HYBRID_DATA_MODEL" else ""  # chakra's converter's name
        restarts = self._recompute_starts()
        self._forward(blocking=True)
        wg: list[int | None] = [None] * len(self.layers)
        for i in reversed(range(len(self.layers))):
            layer = self.layers[i]
            if i in restarts:
                for k in range(restarts[i], i):
                    self.compute(k, "FWD_RECOMPUTE", self.layers[k].fwd.cycles)
                    self.blocking(k, "fwd", label="_RECOMPUTE", tag="FWD_RECOMPUTE")
            self.compute(i, "BWD_IG", layer.ig.cycles)
            ig = None
            if transformer:
                self.blocking(i, "ig")
            elif i > 0:
                ig = self.collective(i, "ig", label=label)
            wg[i] = self.compute(i, "BWD_WG", layer.wg.cycles)
            wg[i] = self.collective(i, "wg") or wg[i]
            if ig is not None:
                self.pending.append(ig)
        self.prev_wg = wg

    def _recompute_starts(self) -> dict[int, int]:
        """Initiating layer -> the checkpoint its recomputation starts from (FWD_IN_BCKWD)."""
        if self.wl.mode != "HYBRID_TRANSFORMER_FWD_IN_BCKWD":
            return {}
        checkpoints = sorted(self.wl.checkpoints)
        return {i: max(c for c in checkpoints if c < i) for i in self.wl.checkpoint_initiates}

    def _dlrm(self) -> None:
        last_bottom = self.wl.dlrm_last_bottom_layer
        layers = self.layers
        a2a_fwd = None
        for i, layer in enumerate(layers):
            self.compute(i, "FWD", layer.fwd.cycles, [self.prev_wg[i]])
            if layer.fwd.comm == "ALLTOALL":
                done = self.collective(i, "fwd")
                if i == 0:
                    a2a_fwd = done
            elif i == last_bottom and a2a_fwd is not None:
                self.pending.append(a2a_fwd)
        a2a_bwd = None
        wg: list[int | None] = [None] * len(layers)
        for i in reversed(range(len(layers))):
            wg[i] = self.compute(i, "BWD_WG", layers[i].wg.cycles)
            wg[i] = self.collective(i, "wg") or wg[i]
            if i == 0:
                if self.wl.mode == "HYBRID_DLRM" and a2a_bwd is not None:
                    self.pending.append(a2a_bwd)
                break
            self.compute(i, "BWD_IG", layers[i].ig.cycles)
            if last_bottom is not None and i == last_bottom + 1:
                a2a_bwd = self.collective(0, "ig")
        self.prev_wg = wg
