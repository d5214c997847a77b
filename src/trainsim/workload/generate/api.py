"""``generate(model, parallelism, timer)``: per-rank workload graphs, communicator groups and
per-rank memory of one training step (DESIGN.md, workload layer: generators).

One template graph is built per pipeline stage and specialized per rank (communicator-group
ids, pipeline peers, network dimensions) when that rank's graph is first asked for
(:class:`RankGraphs`), so ranks share their arrays, 1024+ ranks generate in about the time of
one stage per distinct stage, and a run that simulates a few ranks for all makes only theirs.
With a timer, COMP nodes carry durations (seconds) and the memory of every stage is checked
against ``timer.memory_capacity`` (:class:`InfeasibleError` when a rank does not fit).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from trainsim import budget
from trainsim.config.types import Platform
from trainsim.engine import collector_paused
from trainsim.errors import ConfigError, InfeasibleError
from trainsim.lazyseq import LazySequence
from trainsim.units import GB
from trainsim.workload.generate.emitter import ROLE_CODES, Template
from trainsim.workload.generate.groups import RankLayout
from trainsim.workload.generate.layered_gen import LayeredGenerator
from trainsim.workload.generate.memory import MemoryBreakdown, stage_memory
from trainsim.workload.generate.parallel import Parallelism
from trainsim.workload.generate.timer import OpTimer
from trainsim.workload.generate.transformer_gen import TransformerGenerator
from trainsim.workload.graph import WorkloadGraph, executed_flop
from trainsim.workload.models.layered import LayeredModel
from trainsim.workload.models.transformer import TransformerSpec


@dataclass
class GeneratedWorkload:
    """The result of :func:`generate`: one graph per rank (ranks of a stage share arrays),
    the communicator groups (``{"<id>": [ranks]}``, ASTRA-sim's JSON), their human names,
    per-stage memory (bytes) and a summary.

    ``replica_of_rank`` is each rank's data-parallel index and ``node_roles`` the group role
    of every node of each stage's graph (codes of ``emitter.ROLE_CODES``; 0 for non-collectives
    and all-rank groups), which :func:`trainsim.system.symmetry.replica.simulate_replica` uses to
    simulate one data-parallel replica; ``node_recompute_s`` the seconds of recomputation in
    each node of each stage's graph (part of a compute node's duration, 0 elsewhere), which the
    step breakdown (``report/step_breakdown.py``) tells apart from compute."""

    graphs: Sequence[WorkloadGraph]
    comm_groups: dict[str, list[int]]
    group_names: dict[str, str]
    memory: list[MemoryBreakdown]
    info: dict[str, Any] = field(default_factory=dict)
    stage_of_rank: list[int] = field(default_factory=list)
    replica_of_rank: list[int] = field(default_factory=list)
    node_roles: list[np.ndarray] = field(default_factory=list)
    parallelism: Parallelism | None = None
    node_recompute_s: list[np.ndarray] = field(default_factory=list)

    def platform(self, platform: Platform) -> Platform:
        """``platform`` with this workload's communicator groups added (ids as decimal strings,
        members as tuples of ints: the form ``Platform.comm_groups`` holds)."""
        groups = {str(int(gid)): tuple(int(r) for r in members) for gid, members in self.comm_groups.items()}
        return replace(platform, comm_groups={**platform.comm_groups, **groups})

    def role_positions(self, stage: int, *roles: str) -> np.ndarray:
        """Positions (ascending) of the collectives of ``stage``'s graph on groups of ``roles``
        (``tp``, ``dp``, ``ep``, ``edp``, ``emb``)."""
        if not self.node_roles:
            raise ConfigError("this workload records no group roles (a layered model: every collective spans all ranks)")
        codes = [ROLE_CODES[r] for r in roles]
        return np.flatnonzero(np.isin(self.node_roles[stage], codes))

    def executed_flop(self) -> float:
        """:func:`~trainsim.workload.graph.executed_flop` of every rank's graph, from the stage
        templates (a rank's graph shares its FLOP array with its template) without making the
        graphs a replica slice did not need: the same sum in the same order."""
        graphs = self.graphs
        if isinstance(graphs, RankGraphs):
            return executed_flop([graphs.templates[stage].graph for stage in self.stage_of_rank])
        return executed_flop(graphs)

    def write_comm_groups(self, path: str | Path) -> None:
        """Write the communicator-group JSON ASTRA-sim reads (``--comm-group-configuration``)."""
        Path(path).write_text(json.dumps(self.comm_groups, indent=1) + "\n")

    def peak_memory(self) -> MemoryBreakdown:
        return max(self.memory, key=lambda m: m.total)


# What one rank's graph costs on top of its stage's shared template (measured on GPT-3 175B,
# 1,024 ranks: ~0.3 MB for 15k nodes): the rank's group ids and peers, its graph object and its
# entries in the rank layout.
_BYTES_PER_RANK = 2048
_BYTES_PER_RANK_NODE = 24


def _check_host_memory(world: int, nodes_per_rank: int) -> None:
    """Refuse, before spending minutes on it, a workload whose rank graphs cannot fit in this
    machine's memory (a strategy with a huge data-parallel degree, say)."""
    import os

    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return  # not knowable here (Windows): no check
    need = world * (_BYTES_PER_RANK + _BYTES_PER_RANK_NODE * nodes_per_rank)
    if need > physical:
        per_rank = f" of {nodes_per_rank:,} nodes" if nodes_per_rank else ""
        raise InfeasibleError(
            f"{world:,} rank graphs{per_rank} need about {need / GB:,.0f} GB; this machine has {physical / GB:,.0f} GB",
            hint="simulate fewer ranks: a smaller data-parallel degree gives the same per-replica step",
        )


_PROBE_ABOVE_MICROBATCHES = 1000
"""Above this many micro-batches, :func:`_check_budget` counts one micro-batch's nodes."""


def _check_budget(model: TransformerSpec | LayeredModel, par: Parallelism) -> None:
    """Refuse, before any graph is built, a step whose rank graphs are over the limits of
    ``trainsim.budget`` (docs/limits.md). A stage's graph has at least one node per micro-batch
    (a fused forward and backward), and at least two per layer of the stage."""
    budget.check("ranks", par.world, f"TP x PP x DP = {par.world:,} ranks", way_under="use smaller --tp, --pp or --dp")
    layers = len(model.layers) if isinstance(model, LayeredModel) else model.layers
    nodes = max(par.microbatches, 2 * max(1, layers // par.pp))
    if par.microbatches > _PROBE_ABOVE_MICROBATCHES and nodes <= budget.LIMITS["graph_nodes"].value:
        # a stage's graph grows by about the same nodes per micro-batch: generate one micro-batch
        # (one replica, no timer) and count, halved to stay a lower bound
        one = generate(model, replace(par, dp=1, ep=1, global_batch=par.micro_batch), check_memory=False)
        nodes = max(nodes, max(one.info["nodes_per_stage"]) // 2 * par.microbatches)
    budget.check(
        "graph_nodes",
        nodes,
        f"{par.microbatches:,} micro-batches per step (global batch {par.global_batch:,})",
        way_under="use a smaller --global-batch or a larger --micro-batch",
    )
    budget.check("rank_nodes", par.world * nodes, f"{par.world:,} rank graphs of at least {nodes:,} nodes", way_under="use fewer ranks or micro-batches")


@collector_paused()  # engine.kernel.collector_paused: no garbage cycles to look for
def generate(
    model: TransformerSpec | LayeredModel,
    parallelism: Parallelism,
    timer: OpTimer | None = None,
    *,
    network_sizes: Sequence[int] | None = None,
    check_memory: bool = True,
) -> GeneratedWorkload:
    """Generate one training step of ``model`` under ``parallelism``.

    ``timer`` prices operators (e.g. ``trainsim.compute.OperatorTimer("A100")``); without one
    compute nodes have zero duration but still carry FLOPs and bytes. ``network_sizes`` (the
    size of each network dimension, dimension 0 fastest) sets ``involved_dim`` on collectives
    whose group spans whole dimensions; their product must equal the number of ranks.
    """
    par = parallelism
    if network_sizes is not None:
        total = 1
        for s in network_sizes:
            total *= int(s)
        if total != par.world:
            raise ConfigError(
                f"the network has {total} NPUs ({' x '.join(str(s) for s in network_sizes)}) but TP x {'CP x ' if par.cp > 1 else ''}PP x DP = {par.world}",
                field="network",
            )
    _check_budget(model, par)
    _check_host_memory(par.world, 0)
    if isinstance(model, LayeredModel):
        if par.cp > 1:
            raise ConfigError(f"context parallelism splits a transformer's sequence; {model.name} is not one", field="cp")
        return LayeredGenerator(model, par, timer).generate(network_sizes, check_memory=check_memory)
    if not isinstance(model, TransformerSpec):
        raise ConfigError(f"cannot generate a workload for {type(model).__name__}", field="model")
    layout = RankLayout(par, tied_embeddings=model.tied_embeddings, expert_groups=model.is_moe)
    sizes = {role: layout.group_size(role) for role in ("tp", "dp", "ep", "edp", "emb", "cp")}
    gen = TransformerGenerator(model, par, timer, groups=sizes)
    memory = [transformer_memory(gen, stage, timer) for stage in range(par.pp)]
    if check_memory and timer is not None:
        _check_fits(memory, timer)
    templates = [gen.stage_template(stage) for stage in range(par.pp)]
    _check_host_memory(par.world, max(len(t.graph) for t in templates))
    graphs = RankGraphs(templates, layout, network_sizes)
    info = {
        "model": model.name,
        "params": model.total_params(),
        "world": par.world,
        "microbatches": par.microbatches,
        "nodes_per_stage": [len(t.graph) for t in templates],
        "compute_s_per_stage": [t.compute_s for t in templates],
        "device": getattr(timer, "name", None),
    }
    return GeneratedWorkload(
        graphs,
        layout.comm_groups(),
        layout.group_roles(),
        memory,
        info,
        [layout.stage_of(r) for r in range(par.world)],
        [int(x) for x in layout.dp_index.tolist()],
        [t.roles for t in templates],
        par,
        [t.recompute_s for t in templates],
    )


class RankGraphs(LazySequence[WorkloadGraph]):
    """Every rank's graph of a generated transformer step, its stage's template specialized
    (:meth:`~.emitter.Template.specialize`) when first asked for and kept: a run that
    simulates a few ranks for all (``system/symmetry/replica.py``) never builds the others'."""

    __slots__ = ("templates", "layout", "network_sizes", "_made")

    _ROLES = ("tp", "dp", "ep", "edp", "emb", "cp")

    def __init__(self, templates: Sequence[Template], layout: RankLayout, network_sizes: Sequence[int] | None) -> None:
        super().__init__(layout.par.world)
        self.templates = templates
        self.layout = layout
        self.network_sizes = network_sizes
        self._made: list[WorkloadGraph | None] = [None] * self.length

    def item(self, index: int) -> WorkloadGraph:
        made = self._made[index]
        if made is None:
            made = self._made[index] = self._specialize(index)
        return made

    def _specialize(self, rank: int) -> WorkloadGraph:
        layout, sizes = self.layout, self.network_sizes
        ids = {r: layout.pg_name(r, rank) for r in self._ROLES}
        dims = {r: layout.involved_dims(r, rank, sizes) for r in self._ROLES if ids[r] is not None} if sizes else {}
        pipelined = layout.par.pp > 1
        prev_rank = layout.neighbour(rank, -1) if pipelined else rank
        next_rank = layout.neighbour(rank, 1) if pipelined else rank
        return self.templates[layout.stage_of(rank)].specialize(rank, ids, prev_rank, next_rank, dims)


def transformer_memory(gen: TransformerGenerator, stage: int, timer: OpTimer | None = None) -> MemoryBreakdown:
    """Peak memory of one rank of ``stage`` (bytes): :func:`~.memory.stage_memory` for the
    generator's model and strategy, checked against ``timer``'s capacity."""
    capacity = float(getattr(timer, "memory_capacity", 0.0) or 0.0)
    return stage_memory(gen.spec, gen.par, stage, capacity=capacity, edp=max(1, gen.group_sizes.get("edp", 1)))


def _check_fits(memory: Sequence[MemoryBreakdown], timer: OpTimer) -> None:
    cap = float(timer.memory_capacity)
    worst = max(memory, key=lambda m: m.total)
    if worst.total > cap:
        raise InfeasibleError(
            f"pipeline stage {worst.stage} needs {worst.total / GB:.1f} GB per rank "
            f"(weights {worst.weights / GB:.1f}, gradients {worst.gradients / GB:.1f}, optimizer "
            f"{worst.optimizer / GB:.1f}, activations {worst.activations / GB:.1f}, working set "
            f"{worst.transient / GB:.1f}) but {timer.name} has {cap / GB:.1f} GB",
            hint="raise TP/PP, use ZeRO or recomputation, or shrink the micro-batch",
        )
