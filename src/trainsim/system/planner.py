"""Collective planning, with no runtime: which logical layout a collective runs on, how it is
cut into chunks, which dimension order each chunk takes, and the phases of each chunk
(DESIGN.md, system layer; used by ``collective_runtime``, callable from tests on its own).

- layout: one logical dimension per entry of the system's ``<type>-implementation`` list
  (``collectives.LogicalLayout``; a communicator group is one flat dimension); a list shorter
  than the network's dimensions is extended to all of them (``collectives.spanning_list``)
  unless the system's ``collective_span`` is ``listed``, the default in ``compat: astra``; rooted
  collectives and the barrier use their nearest relative's list (``collectives.rooted``);
- chunks: ``chunking.chunk_sizes`` (astra-sim-semantics.md C1, C2);
- dimension order per chunk: ``inter_dim`` (baseline ascending, roundRobin, Themis' greedy);
  under Themis the plan is guarded against the baseline's (``themis_guard``) by a predictor the
  caller hands in (the runtime predicts with its own engine on a private clock);
- phases: ``collectives.chunk_phases`` / ``rooted_chunk_phases`` (D5, E1-E3);
- a custom algorithm (``custom_collectives``: the system names Chakra graphs for the node or
  its type) instead: one chunk of one phase, ``CustomPhaseSpec``, on one logical dimension
  over the members as listed; no chunking, no dimensions (the graph holds all of that).

State kept between plans: the layouts (by type and group) and the round-robin position per
group, exactly as ASTRA-sim's system layer keeps them. Sizes in bytes, times in ns.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from trainsim.collectives import (
    CUSTOM,
    PLANNED_TYPES,
    AlgoSpec,
    LogicalLayout,
    PhaseSpec,
    chunk_phases,
    rooted_chunk_phases,
)
from trainsim.collectives.custom import CustomGraphs, check_graphs
from trainsim.collectives.logical import NET, spanning_list, spans_all
from trainsim.collectives.plan import CustomPhaseSpec
from trainsim.config.types import SystemSpec
from trainsim.enums import CommType
from trainsim.errors import ConfigError, TraceError
from trainsim.system import themis_guard
from trainsim.system.chunking import chunk_sizes
from trainsim.system.custom_collectives import CustomCollectives
from trainsim.system.inter_dim import RoundRobin, ThemisGreedy, baseline_order
from trainsim.topology import MultiDimTopology
from trainsim.workload.diagnostics import TraceWarning

Plan = list[list[PhaseSpec]]
"""Per chunk, its phases in order."""

_NAMES = {int(c): c.name.lower() for c in CommType}
_BARRIER = int(CommType.BARRIER)
_IMPLEMENTATION_LIST = {
    int(CommType.ALL_REDUCE): "all_reduce",
    int(CommType.ALL_GATHER): "all_gather",
    int(CommType.REDUCE_SCATTER): "reduce_scatter",
    int(CommType.ALL_TO_ALL): "all_to_all",
    # rooted types and the barrier: their nearest relative's list (collectives.rooted)
    int(CommType.REDUCE): "all_reduce",
    int(CommType.BROADCAST): "all_reduce",
    int(CommType.BARRIER): "all_reduce",
    int(CommType.GATHER): "all_gather",
    int(CommType.SCATTER): "all_gather",
}


@dataclass(frozen=True, slots=True)
class CollectivePlan:
    """What one collective runs: its layout, each chunk's phases, and Themis' guarded decision
    (None when Themis did not plan it or its plans were not symmetric)."""

    layout: LogicalLayout
    chunks: Plan
    themis: themis_guard.ThemisChoice | None = None


class CollectivePlanner:
    """Plans collectives for one platform (module docstring). ``bandwidths``: B/s per network
    dimension (Themis' loads); ``predict(layout, plan)``: the finish (ns after the start) of
    ``plan`` run alone, for the Themis guard (None: Themis' plan is taken unguarded). The
    system's custom algorithms are read here, once (``custom_collectives``). ``max_chunk_bytes``:
    the endpoint's largest chunk (ACE's SRAM share, ``SharedResources.max_chunk_bytes``): a
    collective is cut into more chunks than ``preferred_dataset_splits`` so that none is larger."""

    def __init__(
        self,
        system: SystemSpec,
        topology: MultiDimTopology,
        bandwidths: Sequence[float],
        *,
        compat_astra: bool,
        predict: Callable[[LogicalLayout, Plan], float] | None = None,
        max_chunk_bytes: int | None = None,
    ) -> None:
        self.system = system
        self.max_chunk_bytes = max_chunk_bytes
        self.topology = topology
        self.bandwidths = list(bandwidths)
        self.compat_astra = compat_astra
        self.predict = predict
        self._layouts: dict[tuple[int, tuple[int, ...] | None], LogicalLayout] = {}
        self._round_robin: dict[int, RoundRobin] = {}
        self.custom = CustomCollectives(system)
        self._custom_layouts: dict[tuple[int, ...], LogicalLayout] = {}
        self._pairings_checked: set[tuple[int, tuple[int, ...]]] = set()
        self._splits_warned = False
        self._spans_all = spans_all(system.collective_span, compat_astra)
        self._plans: dict[tuple[Any, ...], CollectivePlan] = {}  # plan's inputs -> plan (``plan``)

    def layout(self, phase_type: int, group: tuple[int, ...] | None) -> LogicalLayout:
        """The logical layout of ``phase_type`` collectives on ``group`` (None: every rank)."""
        key = (phase_type, group)
        layout = self._layouts.get(key)
        if layout is None:
            attr = _IMPLEMENTATION_LIST[phase_type]
            impl = getattr(self.system.implementations, attr)
            if not impl:
                name = attr.replace("_", "-")
                raise ConfigError(
                    f"no algorithm configured, but the workload has {_NAMES[phase_type]} collectives; "
                    "expected a list of algorithms, one per network dimension",
                    file=self.system.source or None,
                    field=f"{name}-implementation",
                    hint=f"e.g. \"{name}-implementation\": [\"ring\"] (system.{attr}: [ring] in a platform file)",
                )
            if group is None and self._spans_all:
                impl = spanning_list(impl, self.topology)
            layout = self._layouts[key] = LogicalLayout(self.topology, impl, group)
        return layout

    def plan(
        self,
        phase_type: int,
        size: int,
        members: tuple[int, ...],
        group: tuple[int, ...] | None,
        involved_dims: Sequence[bool] | None = None,
        node_id: int = -1,
    ) -> CollectivePlan:
        """The plan of one ``phase_type`` collective of ``size`` bytes on ``members`` (``group``
        None: the whole machine). ``involved_dims``: the workload's per-dimension flags (a
        whole-machine collective skips the dimensions marked False). ``node_id``: the workload
        node, for a per-node custom algorithm."""
        if self.custom:
            graphs = self.custom.lookup(phase_type, node_id)
            if graphs is not None:
                return self._custom_plan(graphs, phase_type, size, members, group)
        # a plan is a function of these unless Themis or round-robin orders the chunks (their
        # state changes with every whole-machine collective): reuse it (plans are never mutated)
        key = None
        if group is not None or self.system.inter_dimension_scheduling not in ("themis", "roundRobin"):
            dims = None if group is not None or involved_dims is None else tuple(involved_dims)
            key = (phase_type, size, members[0] if phase_type in PLANNED_TYPES else -1, group, dims)
            hit = self._plans.get(key)
            if hit is not None:
                return hit
        plan = self._plan(phase_type, size, members, group, involved_dims)
        if key is not None:
            self._plans[key] = plan
        return plan

    def _plan(
        self,
        phase_type: int,
        size: int,
        members: tuple[int, ...],
        group: tuple[int, ...] | None,
        involved_dims: Sequence[bool] | None,
    ) -> CollectivePlan:
        """:meth:`plan` of a built-in algorithm, computed."""
        layout = self.layout(phase_type, group)
        system = self.system
        sizes = layout.sizes
        active = [
            d
            for d, dim in enumerate(layout.dims)
            if dim.size > 1
            and (involved_dims is None or group is not None or d >= len(involved_dims) or involved_dims[d])
        ]
        splits = system.preferred_dataset_splits
        cap = self.max_chunk_bytes
        if cap is not None and size > cap * splits:
            splits = -(-size // cap)  # the endpoint holds at most cap bytes of a chunk
        chunks = chunk_sizes(
            phase_type,
            size,
            splits,
            self.topology.npus,
            compat_astra=self.compat_astra,
        )
        if phase_type in PLANNED_TYPES:
            if phase_type == _BARRIER:
                chunks = [0]
            root = members[0]  # Chakra has no root: the group's first member
            return CollectivePlan(layout, [rooted_chunk_phases(phase_type, c, active, layout, root) for c in chunks])
        local_bw_aware = system.collective_optimization == "localBWAware"
        policy = system.inter_dimension_scheduling
        themis = None
        if policy == "themis" and group is None:
            bws = [
                self.bandwidths[d.net_dim] if d.kind == NET else self.bandwidths[0]
                for d in layout.dims
            ]
            themis = ThemisGreedy(sizes, bws)
        rr = None
        if policy == "roundRobin" and group is None:
            rr = self._round_robin.setdefault(members[0], RoundRobin())
        plans = []
        for chunk in chunks:
            if themis is not None:
                order = themis.order(phase_type, active, chunk)
            elif rr is not None:
                order = rr.order(phase_type, len(layout.dims), active)
            else:
                order = baseline_order(phase_type, active)
            plans.append(
                chunk_phases(
                    phase_type,
                    chunk,
                    order,
                    layout.algos,
                    sizes,
                    local_bw_aware=local_bw_aware,
                    themis=themis is not None,
                )
            )
        if themis is None or self.predict is None:
            return CollectivePlan(layout, plans)
        # fall back to the baseline plan when it is predicted to finish first (themis_guard)
        base_order = baseline_order(phase_type, active)
        base = [
            chunk_phases(phase_type, c, base_order, layout.algos, sizes, local_bw_aware=local_bw_aware)
            for c in chunks
        ]
        predict = self.predict
        plans, choice = themis_guard.guard(plans, base, lambda p: predict(layout, p))
        return CollectivePlan(layout, plans, choice)

    def _custom_plan(
        self,
        graphs: CustomGraphs,
        phase_type: int,
        size: int,
        members: tuple[int, ...],
        group: tuple[int, ...] | None,
    ) -> CollectivePlan:
        """One phase running ``graphs``: graph rank g is ``members[g]``; a member runs the
        rank file of its position among the members sorted (ASTRA-sim's ``pos_in_group``) in
        compatibility mode, of its listed position otherwise (``collectives/custom.py``)."""
        n = len(members)
        if graphs.nranks != n:
            on = "the whole machine" if group is None else f"a group of {n} ranks {list(group)[:8]}"
            raise ConfigError(
                f"the custom {_NAMES[phase_type]} is a graph for {graphs.nranks} ranks "
                f"({graphs.nranks} rank files), but the collective runs on {on}",
                file=f"{graphs.source}.<rank>.et",
                hint=f"give it a graph of {n} rank files, one per member of the collective",
            )
        layout = self._custom_layouts.get(members)
        if layout is None:
            layout = self._custom_layouts[members] = LogicalLayout.single(self.topology, members, AlgoSpec(CUSTOM))
        if self.compat_astra and not self._splits_warned:
            self._warn_astra_splits(graphs, phase_type, size)
        file_of = tuple(range(n))
        if self.compat_astra and list(members) != sorted(members):
            order = {r: i for i, r in enumerate(sorted(members))}
            file_of = tuple(order[r] for r in members)
            self._check_pairing(graphs, file_of)
        spec = CustomPhaseSpec(
            0, AlgoSpec(CUSTOM), phase_type, size, graphs=graphs, file_of=file_of, whole_ns=self.compat_astra
        )
        return CollectivePlan(layout, [[spec]])

    def _warn_astra_splits(self, graphs: CustomGraphs, phase_type: int, size: int) -> None:
        """ASTRA-sim 518bd51 counts the chunks of a custom collective as of a built-in one
        (``Sys::generate_collective``: its DataSet waits for that many streams) but runs one
        stream: with more than one chunk the collective never ends there, silently."""
        splits = self.system.preferred_dataset_splits
        count = len(chunk_sizes(phase_type, size, splits, self.topology.npus, compat_astra=True))
        if count > 1:
            self._splits_warned = True
            warnings.warn(
                f"{graphs.source}.<rank>.et: with preferred-dataset-splits {splits}, ASTRA-sim waits for "
                f"{count} chunks of a custom {_NAMES[phase_type]} but runs its graph once, and never "
                "finishes; trainsim runs the graph once and finishes (set preferred-dataset-splits to 1 "
                "to compare with ASTRA-sim)",
                TraceWarning,
                stacklevel=2,
            )

    def _check_pairing(self, graphs: CustomGraphs, file_of: tuple[int, ...]) -> None:
        """The graphs as ASTRA-sim pairs them on a group listed out of order (a member runs the
        rank file of its sorted position, peers are listed positions) must still finish."""
        key = (id(graphs), file_of)
        if key in self._pairings_checked:
            return
        try:
            stray = check_graphs(graphs, file_of)
        except TraceError as exc:
            exc.hint = (
                "the group lists its members out of order: ASTRA-sim (and --compat astra) runs the "
                "rank file of each member's position among the members sorted, but sends to members "
                "by their listed position; list the group in ascending order, or use --compat default"
            )
            raise
        for message in stray:
            warnings.warn(f"{graphs.source}.<rank>.et: {message}", TraceWarning, stacklevel=2)
        self._pairings_checked.add(key)
