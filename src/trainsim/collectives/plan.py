"""Hierarchical decomposition: which phases one chunk runs, on which logical dimension, with
which algorithm and sizes (astra-sim-semantics.md D5, E1-E3; Themis, arXiv 2110.04478 §4).

Logical dimensions: one per entry of the ``<type>-implementation`` list (D5). A ``one*``
algorithm (``oneRing``, ``oneDirect``, ``oneHalvingDoubling``) makes its entry a flat
dimension over every rank and ends the list. Communicator groups smaller than the machine are
one flat "Local" dimension over the members in the order listed (see ``logical.py``).

Phase sequences for one chunk, given the chunk's dimension ``order`` (ascending by default;
the inter-dimension scheduler may permute it) over the *active* dimensions (size > 1, involved):

- all-reduce, ``localBWAware``: reduce-scatter on order[:-1], all-reduce on order[-1],
  all-gather on reversed(order[:-1]) (E1; the all-gather phases run counter-clockwise);
- all-reduce, ``baseline``: an all-reduce on every dimension of ``order``, full size (E2);
- all-reduce under Themis: reduce-scatter on every dimension of ``order``, then all-gather on
  the reverse order (the all-gather is the mirror, Themis §4.2);
- reduce-scatter, all-to-all: one phase per dimension of ``order``; all-gather: one phase per
  dimension of ``order`` (the caller passes it descending, E3).

Each phase's input is the previous phase's output. Sizes in bytes.

Which of its dimension's queues a phase waits in (ASTRA-sim's ``QueueLevels``, used with
``--num-queues-per-dim`` above 1) is chosen per rank when the chunk is generated; ``pick`` says
how (``Sys::generate_collective``): the all-reduce phases of ``localBWAware`` (and Themis)
take the first half of the dimension's queues (``FIRST``: reduce-scatter and the last
dimension's all-reduce) or the second half (``LAST``: the all-gather phases, counter-clockwise),
every other phase the next queue in turn (``NEXT``). ``queue`` is the chosen queue's index
within its dimension (0 until chosen: ``system.queues``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trainsim.collectives.algorithms import AlgoSpec, algorithm
from trainsim.collectives.base import ALL_GATHER, ALL_REDUCE, REDUCE_SCATTER
from trainsim.collectives.custom import CustomGraphs

NEXT, FIRST, LAST = 0, 1, 2
"""How a phase picks its dimension queue (module docstring)."""


def phase_output_size(kind: str, comm_type: int, data_size: int, n: int) -> int:
    """Output bytes of one phase (D1-D4): the next phase's input."""
    return algorithm(kind).output_size(comm_type, data_size, n)


@dataclass(frozen=True, slots=True)
class PhaseSpec:
    """One phase of a chunk: logical dimension, algorithm, type, input bytes, ring direction,
    how it picks its dimension queue (``NEXT`` / ``FIRST`` / ``LAST``) and the queue's index
    in its dimension (module docstring)."""

    ldim: int
    algo: AlgoSpec
    comm_type: int
    in_size: int
    clockwise: bool = True
    pick: int = NEXT
    queue: int = 0


@dataclass(frozen=True, slots=True)
class CustomPhaseSpec(PhaseSpec):
    """The one phase of a custom collective (``custom.py``): ``graphs`` is the algorithm,
    ``file_of[i]`` the graph rank the i-th member (in ring order, as the group lists them) runs,
    ``whole_ns`` counts COMP durations in whole ns (compatibility mode)."""

    graphs: CustomGraphs | None = field(default=None, compare=False)
    file_of: tuple[int, ...] = ()
    whole_ns: bool = False


def chunk_phases(
    comm_type: int,
    chunk: int,
    order: list[int],
    algos: list[AlgoSpec],
    sizes: list[int],
    *,
    local_bw_aware: bool,
    themis: bool = False,
) -> list[PhaseSpec]:
    """The phases of one chunk of ``chunk`` bytes; ``order`` lists active logical dims."""
    phases: list[PhaseSpec] = []
    size = chunk

    def add(d: int, t: int, pick: int = NEXT) -> None:
        nonlocal size
        algo = algos[d]
        phases.append(PhaseSpec(d, algo, t, size, pick != LAST, pick))
        size = phase_output_size(algo.kind, t, size, sizes[d])

    if comm_type != ALL_REDUCE or not local_bw_aware:
        for d in order:
            add(d, comm_type)
    elif themis:
        for d in order:
            add(d, REDUCE_SCATTER, FIRST)
        for d in reversed(order):
            add(d, ALL_GATHER, LAST)
    else:
        for d in order[:-1]:
            add(d, REDUCE_SCATTER, FIRST)
        if order:
            add(order[-1], ALL_REDUCE, FIRST)
        for d in reversed(order[:-1]):
            add(d, ALL_GATHER, LAST)
    return phases
