"""Collective algorithms as per-rank phase state machines, and the hierarchical decomposition of
a chunk into phases (DESIGN.md, collectives layer). Timing belongs to the host (system layer)."""

from trainsim.collectives.base import Phase, PhaseHost
from trainsim.collectives.halving_doubling import HalvingDoublingPhase
from trainsim.collectives.in_switch import InSwitchPhase
from trainsim.collectives.logical import LogicalDim, LogicalLayout
from trainsim.collectives.plan import (
    ASYMMETRIC_KINDS,
    DIRECT,
    DOUBLE_BINARY_TREE,
    HALVING_DOUBLING,
    IN_SWITCH,
    RING,
    AlgoSpec,
    PhaseSpec,
    chunk_phases,
    parse_algorithm,
    phase_output_size,
)
from trainsim.collectives.ring import RingPhase
from trainsim.collectives.rooted import (
    PLANNED_TYPES,
    ROOTED_TYPES,
    RootedPhaseSpec,
    make_rooted_phase,
    rooted_chunk_phases,
)
from trainsim.collectives.tree import DoubleBinaryTreePhase

__all__ = [
    "ASYMMETRIC_KINDS",
    "DIRECT",
    "DOUBLE_BINARY_TREE",
    "HALVING_DOUBLING",
    "IN_SWITCH",
    "RING",
    "AlgoSpec",
    "DoubleBinaryTreePhase",
    "HalvingDoublingPhase",
    "InSwitchPhase",
    "LogicalDim",
    "LogicalLayout",
    "Phase",
    "PhaseHost",
    "PLANNED_TYPES",
    "PhaseSpec",
    "ROOTED_TYPES",
    "RingPhase",
    "RootedPhaseSpec",
    "chunk_phases",
    "make_phase",
    "parse_algorithm",
    "phase_output_size",
    "rooted_chunk_phases",
]


def make_phase(
    host: PhaseHost,
    spec: PhaseSpec,
    rank: int,
    members: list[int],
    index: int,
    *,
    max_tree: bool = True,
) -> Phase:
    """Instantiate one rank's phase for ``spec``."""
    if isinstance(spec, RootedPhaseSpec):
        return make_rooted_phase(host, spec, rank, members, index)
    kind = spec.algo.kind
    if kind == RING:
        return RingPhase(
            host, rank, members, index, spec.comm_type, spec.in_size, clockwise=spec.clockwise
        )
    if kind == DIRECT:
        window = spec.algo.window or len(members) - 1
        return RingPhase(
            host,
            rank,
            members,
            index,
            spec.comm_type,
            spec.in_size,
            window=window,
            clockwise=spec.clockwise,
        )
    if kind == HALVING_DOUBLING:
        return HalvingDoublingPhase(host, rank, members, index, spec.comm_type, spec.in_size)
    if kind == IN_SWITCH:
        return InSwitchPhase(host, rank, members, index, spec.comm_type, spec.in_size)
    return DoubleBinaryTreePhase(
        host, rank, members, index, spec.comm_type, spec.in_size, max_tree=max_tree
    )
