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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainsim.collectives.base import ALL_GATHER, ALL_REDUCE, REDUCE_SCATTER
from trainsim.collectives.halving_doubling import hd_output_size
from trainsim.collectives.ring import ring_sizes
from trainsim.errors import ConfigError

RING, DIRECT, HALVING_DOUBLING, DOUBLE_BINARY_TREE, IN_SWITCH = (
    "ring",
    "direct",
    "halvingDoubling",
    "doubleBinaryTree",
    "inSwitch",
)
ASYMMETRIC_KINDS = frozenset((DOUBLE_BINARY_TREE, IN_SWITCH))
"""Algorithms whose members do not all run the same schedule on their own (roles, or a join
across members at the switch): never run by a symmetric representative."""

_ALGO_RE = re.compile(
    r"^(one)?(ring|Ring|direct|Direct|halvingDoubling|HalvingDoubling|doubleBinaryTree|inSwitch)(\d{0,5})$"
)


@dataclass(frozen=True, slots=True)
class AlgoSpec:
    """A parsed implementation name: kind, direct window (0 = all peers), flat (``one*``)."""

    kind: str
    window: int = 0
    flat: bool = False

    @property
    def name(self) -> str:
        """The implementation name as written in a system file (``direct4``, ``oneRing``)."""
        base = self.kind + (str(self.window) if self.window else "")
        return "one" + base[0].upper() + base[1:] if self.flat else base


def parse_algorithm(name: str) -> AlgoSpec:
    """Parse an ASTRA-sim implementation name (``ring``, ``direct``, ``direct4``,
    ``halvingDoubling``, ``doubleBinaryTree``, ``inSwitch``, ``oneRing``, ``oneDirect``,
    ``oneHalvingDoubling``)."""
    m = _ALGO_RE.match(name)
    if not m:
        raise ConfigError(
            f"unknown collective implementation {name!r}",
            hint="expected ring, direct, directN, halvingDoubling, doubleBinaryTree, inSwitch, "
            "oneRing, oneDirect or oneHalvingDoubling",
        )
    flat = m.group(1) is not None
    base = m.group(2)
    base = base[0].lower() + base[1:]
    digits = m.group(3)
    if digits and base != DIRECT:
        raise ConfigError(f"only direct takes a window, got {name!r}")
    if flat and base in ASYMMETRIC_KINDS:
        raise ConfigError(f"unknown collective implementation {name!r}")
    return AlgoSpec(base, int(digits) if digits else 0, flat)


def phase_output_size(kind: str, comm_type: int, data_size: int, n: int) -> int:
    """Output bytes of one phase (D1-D4): the next phase's input."""
    if kind == DOUBLE_BINARY_TREE:
        return data_size
    if kind == HALVING_DOUBLING:
        return hd_output_size(comm_type, data_size, n)
    return ring_sizes(comm_type, data_size, n)[1]


@dataclass(frozen=True, slots=True)
class PhaseSpec:
    """One phase of a chunk, identical on every rank: logical dimension, algorithm, type,
    input bytes, ring direction, and the queue it waits in (the dimension's queue)."""

    ldim: int
    algo: AlgoSpec
    comm_type: int
    in_size: int
    clockwise: bool = True


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

    def add(d: int, t: int, clockwise: bool = True) -> None:
        nonlocal size
        algo = algos[d]
        phases.append(PhaseSpec(d, algo, t, size, clockwise))
        size = phase_output_size(algo.kind, t, size, sizes[d])

    if comm_type != ALL_REDUCE or not local_bw_aware:
        for d in order:
            add(d, comm_type)
    elif themis:
        for d in order:
            add(d, REDUCE_SCATTER)
        for d in reversed(order):
            add(d, ALL_GATHER, False)
    else:
        for d in order[:-1]:
            add(d, REDUCE_SCATTER)
        if order:
            add(order[-1], ALL_REDUCE)
        for d in reversed(order[:-1]):
            add(d, ALL_GATHER, False)
    return phases
