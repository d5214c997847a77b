"""Logical dimensions: the rings and groups a collective's phases run on (astra-sim-semantics.md
D5, "Communicator groups").

- A network dimension d: the ranks sharing every coordinate but d, in coordinate order (ring
  order; clockwise = coordinate + 1).
- A flat dimension (``one*`` algorithms): every rank, in id order.
- A communicator group smaller than the machine: one flat "Local" ring over the members in the
  order the group lists them; its ring, direct and halving-doubling phases use the endpoint's
  "Fast" path (ASTRA-sim's fixed 10 ns) instead of ``endpoint-delay``, and an implementation list with more
  than one entry is forced to ring.

An algorithm that runs in the switch (``inSwitch``; ``Algorithm.switch`` in ``algorithms.py``)
needs a Switch network dimension: on any other dimension, a flat dimension or a communicator
group's ring it is a ConfigError.

A list shorter than the network's dimensions stops after the listed ones (ASTRA-sim's
convention); :func:`spanning_list` extends it to every dimension (the default outside the
compatibility mode: ``system.planner``).
"""

from __future__ import annotations

from dataclasses import dataclass

from trainsim.collectives.algorithms import RING, AlgoSpec, algorithm, parse_algorithm
from trainsim.errors import ConfigError
from trainsim.topology import MultiDimTopology
from trainsim.topology.multidim import SWITCH

NET, FLAT, GROUP = 0, 1, 2


def spanning_list(impl: tuple[str, ...], topology: MultiDimTopology) -> tuple[str, ...]:
    """``impl`` extended to every network dimension of ``topology``: each missing entry repeats
    the list's last algorithm, or ``ring`` where that one cannot run on the dimension (an
    in-switch algorithm on a dimension that is not a Switch). A list with a flat entry (``one*``,
    over every rank already) or as long as the dimensions is returned as it is."""
    ndims = len(topology.sizes)
    if not impl or len(impl) >= ndims or any(parse_algorithm(name).flat for name in impl):
        return impl
    last = impl[-1]
    in_switch = algorithm(parse_algorithm(last).kind).switch
    fill = tuple(
        "ring" if in_switch and topology.kinds[d] != SWITCH else last for d in range(len(impl), ndims)
    )
    return impl + fill


@dataclass(frozen=True, slots=True)
class LogicalDim:
    kind: int  # NET, FLAT or GROUP
    size: int
    net_dim: int = -1  # for NET: the network dimension; for accounting: -1 = per message
    members: tuple[int, ...] = ()  # for GROUP


class LogicalLayout:
    """The logical dimensions and per-dimension algorithms of one collective type on one group."""

    __slots__ = ("dims", "algos", "topology", "fast", "_members", "_index")

    def __init__(
        self,
        topology: MultiDimTopology,
        impl: tuple[str, ...] | list[str],
        group: tuple[int, ...] | None = None,
    ) -> None:
        self.topology = topology
        self._members: dict[tuple[int, int], list[int]] = {}
        self._index: dict[int, int] = {}
        dims: list[LogicalDim] = []
        algos: list[AlgoSpec] = []
        if group is not None:
            spec = parse_algorithm(impl[0]) if len(impl) == 1 else AlgoSpec(RING)
            if algorithm(spec.kind).switch:
                raise ConfigError(
                    f"{spec.name} on a communicator group of {len(group)} members: in-switch "
                    "reduction needs a Switch network dimension, a group runs one flat ring",
                    hint="list two or more algorithms (a group then runs ring) or use ring/direct",
                )
            dims.append(LogicalDim(GROUP, len(group), -1, tuple(group)))
            algos.append(AlgoSpec(spec.kind, spec.window, False))
            self._index = {r: i for i, r in enumerate(group)}
            self.fast = True
        else:
            self.fast = False
            for i, name in enumerate(impl):
                spec = parse_algorithm(name)
                if spec.flat:
                    dims.append(LogicalDim(FLAT, topology.npus, -1))
                    algos.append(spec)
                    break
                size = topology.sizes[i] if i < len(topology.sizes) else 1
                on_switch = i >= len(topology.sizes) or topology.kinds[i] == SWITCH
                if algorithm(spec.kind).switch and not on_switch:
                    raise ConfigError(
                        f"{spec.name} on network dimension {i}, a {topology.kinds[i]}: in-switch "
                        "reduction needs a Switch dimension",
                        hint=f"use ring, direct or halvingDoubling on dimension {i}",
                    )
                dims.append(LogicalDim(NET, size, i if i < len(topology.sizes) else -1))
                algos.append(spec)
        self.dims = dims
        self.algos = algos

    @classmethod
    def single(cls, topology: MultiDimTopology, members: tuple[int, ...], algo: AlgoSpec) -> LogicalLayout:
        """One logical dimension over ``members`` in the order given, running ``algo`` with
        the usual endpoint (a custom collective's layout: its graph says who talks to whom)."""
        layout = cls.__new__(cls)
        layout.topology = topology
        layout._members = {}
        layout._index = {r: i for i, r in enumerate(members)}
        layout.dims = [LogicalDim(GROUP, len(members), -1, tuple(members))]
        layout.algos = [algo]
        layout.fast = False
        return layout

    @property
    def sizes(self) -> list[int]:
        return [d.size for d in self.dims]

    def members(self, rank: int, ldim: int) -> tuple[list[int], int]:
        """(members in ring order, this rank's index) of ``rank``'s ring on ``ldim``."""
        dim = self.dims[ldim]
        if dim.kind == NET:
            topo = self.topology
            d = dim.net_dim
            coord = topo.coord(rank, d)
            base = rank - coord * topo.strides[d]
            key = (ldim, base)
            members = self._members.get(key)
            if members is None:
                members = self._members[key] = topo.dim_peers(rank, d)
            return members, coord
        if dim.kind == FLAT:
            key = (ldim, 0)
            members = self._members.get(key)
            if members is None:
                members = self._members[key] = list(range(dim.size))
            return members, rank
        key = (ldim, 0)
        members = self._members.get(key)
        if members is None:
            members = self._members[key] = list(dim.members)
        return members, self._index[rank]
