"""The collective algorithms in one table (DESIGN.md, collectives layer): for each kind, its name
in ``<type>-implementation`` lists, the spellings accepted, what the rest of trainsim needs to
know of it, and the factory of one rank's phase. The parser (:func:`parse_algorithm`), the
config validation (:func:`name_problem`, used by ``config/astra_system.py`` and the native
platform file), ``make_phase``, the phase sizes of ``plan.py``, the trees of ``rooted.py`` and
the layout checks of ``logical.py`` all read it. Adding an algorithm: its module (a
:class:`~trainsim.collectives.base.Phase`) and one entry in :data:`ALGORITHMS`.

``custom`` (``custom.py``) is in the table but not nameable in an implementation list: a system
file names a custom algorithm by the path of its graphs (``<type>-implementation-custom``,
``per-node-custom-implementation``), and the planner builds its one phase.

Spellings: the name (``ring``) or the name capitalized (``Ring``); ``one`` before the
capitalized name (``oneRing``, ``oneDirect``) for a flat dimension over every rank, where the
algorithm allows it; a window of 1 to 5 digits after it (``direct4``, ``oneDirect12``), N >= 1,
where it takes one. ASTRA-sim 518bd51 (``generate_collective_impl_from_input``) accepts
``ring``, ``oneRing``, ``direct[N]``, ``oneDirect[N]``, ``halvingDoubling``,
``oneHalvingDoubling`` and ``doubleBinaryTree``; ``inSwitch`` and the other capitalizations are
trainsim's.

Sizes in bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from trainsim.collectives.base import Phase, PhaseHost
from trainsim.collectives.custom import CustomPhase
from trainsim.collectives.halving_doubling import HalvingDoublingPhase, hd_output_size
from trainsim.collectives.in_switch import InSwitchPhase
from trainsim.collectives.ring import RingPhase, ring_sizes
from trainsim.collectives.tree import DoubleBinaryTreePhase
from trainsim.errors import ConfigError

if TYPE_CHECKING:
    from trainsim.collectives.plan import CustomPhaseSpec, PhaseSpec

RING, DIRECT, HALVING_DOUBLING, DOUBLE_BINARY_TREE, IN_SWITCH, CUSTOM = (
    "ring",
    "direct",
    "halvingDoubling",
    "doubleBinaryTree",
    "inSwitch",
    "custom",
)
CHAIN, STAR, BINOMIAL = "chain", "star", "binomial"
"""The trees a rooted collective (reduce, gather, scatter, broadcast) runs (``rooted.py``)."""

FLAT_PREFIX = "one"
MAX_WINDOW_DIGITS = 5  # ASTRA-sim reads at most five (``substr(6, 5)``)

PhaseFactory = Callable[[PhaseHost, "PhaseSpec", int, list[int], int, bool], Phase]
"""(host, spec, rank, members in ring order, this rank's index, max tree) -> the rank's phase;
``max tree`` picks one of a double binary tree's two trees, the other algorithms ignore it."""


@dataclass(frozen=True, slots=True)
class Algorithm:
    """One collective algorithm.

    - ``name``: as written in an implementation list (and ``AlgoSpec.kind``);
    - ``build``: the factory of one rank's phase;
    - ``output_size(comm_type, input bytes, members)``: the phase's output bytes (the next
      phase's input, astra-sim-semantics.md D1-D4);
    - ``rooted``: the tree a rooted collective runs on a dimension listing this algorithm;
    - ``symmetric``: every member runs the same schedule on its own, so one representative can
      stand for all (not: roles, or a join across members at a switch);
    - ``windowed``: takes a window N (``directN``: N peers at once);
    - ``flat``: may run on a flat dimension over every rank (``one*``);
    - ``all_to_all``: runs an all-to-all phase;
    - ``switch``: runs in the switch of a Switch network dimension, so only there (never on
      another dimension, a flat one or a communicator group's ring);
    - ``listed``: may be named in an implementation list (not ``custom``, named by a path).
    """

    name: str
    build: PhaseFactory
    output_size: Callable[[int, int, int], int]
    rooted: str
    symmetric: bool = True
    windowed: bool = False
    flat: bool = True
    all_to_all: bool = True
    switch: bool = False
    listed: bool = True


def _ring(h: PhaseHost, s: PhaseSpec, rank: int, m: list[int], i: int, _t: bool) -> Phase:
    return RingPhase(h, rank, m, i, s.comm_type, s.in_size, clockwise=s.clockwise)


def _direct(h: PhaseHost, s: PhaseSpec, rank: int, m: list[int], i: int, _t: bool) -> Phase:
    window = s.algo.window or len(m) - 1  # no window: every peer at once
    return RingPhase(h, rank, m, i, s.comm_type, s.in_size, window=window, clockwise=s.clockwise)


def _halving_doubling(
    h: PhaseHost, s: PhaseSpec, rank: int, m: list[int], i: int, _t: bool
) -> Phase:
    return HalvingDoublingPhase(h, rank, m, i, s.comm_type, s.in_size)


def _tree(h: PhaseHost, s: PhaseSpec, rank: int, m: list[int], i: int, max_tree: bool) -> Phase:
    return DoubleBinaryTreePhase(h, rank, m, i, s.comm_type, s.in_size, max_tree=max_tree)


def _in_switch(h: PhaseHost, s: PhaseSpec, rank: int, m: list[int], i: int, _t: bool) -> Phase:
    return InSwitchPhase(h, rank, m, i, s.comm_type, s.in_size)


def _custom(h: PhaseHost, s: PhaseSpec, rank: int, m: list[int], i: int, _t: bool) -> Phase:
    spec = cast("CustomPhaseSpec", s)
    assert spec.graphs is not None
    graph = spec.graphs.ranks[spec.file_of[i]]
    return CustomPhase(h, rank, m, i, s.comm_type, s.in_size, graph=graph, whole_ns=spec.whole_ns)


def _ring_output(comm_type: int, data_size: int, n: int) -> int:
    return ring_sizes(comm_type, data_size, n)[1]


def _same_size(_comm_type: int, data_size: int, _n: int) -> int:
    return data_size  # an all-reduce of the chunk whatever the type (tree.py)


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm(RING, _ring, _ring_output, CHAIN),
        Algorithm(DIRECT, _direct, _ring_output, STAR, windowed=True),
        Algorithm(HALVING_DOUBLING, _halving_doubling, hd_output_size, BINOMIAL),
        Algorithm(DOUBLE_BINARY_TREE, _tree, _same_size, BINOMIAL, symmetric=False, flat=False),
        # the switch outputs what a ring does (in_switch.py); rooted types run endpoint trees
        Algorithm(
            IN_SWITCH,
            _in_switch,
            _ring_output,
            STAR,
            symmetric=False,
            flat=False,
            all_to_all=False,
            switch=True,
        ),
        # the graphs are the algorithm: every rank runs its own (custom.py)
        Algorithm(CUSTOM, _custom, _same_size, CHAIN, symmetric=False, flat=False, listed=False),
    )
}
"""Every algorithm, by name, in the order error messages list them."""

ASYMMETRIC_KINDS = frozenset(a.name for a in ALGORITHMS.values() if not a.symmetric)
"""Algorithms whose members do not all run the same schedule on their own (roles, or a join
across members at the switch): never run by a symmetric representative."""


def _capitalized(name: str) -> str:
    return name[0].upper() + name[1:]


_SPELLINGS = {
    s: a for a in ALGORITHMS.values() if a.listed for s in (a.name, _capitalized(a.name))
}


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
        return FLAT_PREFIX + _capitalized(base) if self.flat else base


def _parse(name: str) -> AlgoSpec | None:
    base = name.rstrip("0123456789")
    digits = name[len(base) :]
    algo, flat = _SPELLINGS.get(base), False
    if algo is None and base.startswith(FLAT_PREFIX):
        algo, flat = _SPELLINGS.get(base[len(FLAT_PREFIX) :]), True
    if algo is None or (flat and not algo.flat):
        return None
    if digits and not (algo.windowed and len(digits) <= MAX_WINDOW_DIGITS and int(digits) >= 1):
        return None
    return AlgoSpec(algo.name, int(digits) if digits else 0, flat)


def accepted_names(*, all_to_all: bool = False) -> str:
    """What an implementation list accepts (of a list for all-to-all, when ``all_to_all``), for
    error messages: ``one of ring, oneRing, direct, directN, ...``."""
    names: list[str] = []
    for algo in ALGORITHMS.values():
        if not algo.listed or (all_to_all and not algo.all_to_all):
            continue
        forms = [algo.name]
        if algo.flat:
            forms.append(FLAT_PREFIX + _capitalized(algo.name))
        names += [w for f in forms for w in ((f, f + "N") if algo.windowed else (f,))]
    return (
        f"one of {', '.join(names)} (N: a window of 1 to {MAX_WINDOW_DIGITS} digits, >= 1; a "
        f"capitalized name, e.g. {_capitalized(RING)!r}, is the same)"
    )


def name_problem(name: object, *, all_to_all: bool = False) -> str | None:
    """None when ``name`` is an accepted spelling (of an algorithm that runs all-to-all, when
    ``all_to_all``: the entry of an ``all-to-all-implementation`` list), else what was
    expected."""
    spec = _parse(name) if isinstance(name, str) else None
    if spec is None:
        return accepted_names()
    if all_to_all and not ALGORITHMS[spec.kind].all_to_all:
        return f"an algorithm that runs all-to-all, {accepted_names(all_to_all=True)}"
    return None


def parse_algorithm(name: str) -> AlgoSpec:
    """Parse an implementation name (``ring``, ``direct4``, ``oneRing``, ``Ring``, ...; see the
    module docstring); an unknown one is a ConfigError listing those accepted."""
    spec = _parse(name)
    if spec is None:
        raise ConfigError(
            f"unknown collective implementation {name!r}; expected {accepted_names()}"
        )
    return spec


def algorithm(kind: str) -> Algorithm:
    """The table entry of ``kind`` (an ``AlgoSpec.kind``); an unknown kind is a ConfigError."""
    algo = ALGORITHMS.get(kind)
    if algo is None:
        raise ConfigError(
            f"unknown collective algorithm kind {kind!r}; expected one of {', '.join(ALGORITHMS)}"
        )
    return algo
