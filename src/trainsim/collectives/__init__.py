"""Collective algorithms as per-rank phase state machines, and the hierarchical decomposition of
a chunk into phases (DESIGN.md, collectives layer). Timing belongs to the host (system layer).
The algorithms are listed in one table, ``algorithms.ALGORITHMS``."""

from trainsim.collectives.algorithms import (
    ALGORITHMS,
    ASYMMETRIC_KINDS,
    CUSTOM,
    DIRECT,
    DOUBLE_BINARY_TREE,
    HALVING_DOUBLING,
    IN_SWITCH,
    RING,
    Algorithm,
    AlgoSpec,
    algorithm,
    parse_algorithm,
)
from trainsim.collectives.base import Phase, PhaseHost
from trainsim.collectives.halving_doubling import HalvingDoublingPhase
from trainsim.collectives.in_switch import InSwitchPhase
from trainsim.collectives.logical import LogicalDim, LogicalLayout
from trainsim.collectives.plan import PhaseSpec, chunk_phases, phase_output_size
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
    "ALGORITHMS",
    "ASYMMETRIC_KINDS",
    "CUSTOM",
    "DIRECT",
    "DOUBLE_BINARY_TREE",
    "HALVING_DOUBLING",
    "IN_SWITCH",
    "RING",
    "AlgoSpec",
    "Algorithm",
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
    "algorithm",
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
    """Instantiate one rank's phase for ``spec`` (a rooted spec: ``rooted.py``; any other: its
    algorithm's factory in the table; an unknown kind is a ConfigError)."""
    if isinstance(spec, RootedPhaseSpec):
        return make_rooted_phase(host, spec, rank, members, index)
    return algorithm(spec.algo.kind).build(host, spec, rank, members, index, max_tree)
