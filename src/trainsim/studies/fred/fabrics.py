"""Collectives and I/O streams measured on a wafer fabric (studies layer; docs/fred.md).

:class:`WaferNet` holds one fabric and runs flow programs on a fresh in-network flow backend
each time (so measurements never share a clock). It picks the algorithm a fabric runs a
collective with: on the mesh and on FRED without in-network support, a wafer-wide group runs
the hierarchical algorithm (mesh: rows then columns and, for half the data, columns then rows;
FRED: inside the L1 switches, then across them), a smaller group a logical ring over its
members; on FRED-B/D every group runs an in-network tree. Times in ns, sizes in bytes,
bandwidths in B/ns (= GB/s).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from trainsim.collectives import wafer as W
from trainsim.config.wafer import MESH
from trainsim.engine import EventQueue
from trainsim.network.in_network import InNetworkFlow
from trainsim.system.flow_program import run_program
from trainsim.topology.wafer import WaferFabric

CHUNKS = 8
"""Chunks the hierarchical algorithm pipelines (per level order)."""


@dataclass
class WaferNet:
    fabric: WaferFabric
    name: str = ""
    npu_of: tuple[int, ...] = ()  # NPU of each rank (placement.py); () = NPU r
    _memo: dict[tuple[object, ...], float] = field(default_factory=dict, repr=False)

    def place(self, ranks: Sequence[int]) -> list[int]:
        """The NPUs of ``ranks``."""
        return [self.npu_of[r] for r in ranks] if self.npu_of else list(ranks)

    def run(self, program: W.Program) -> float:
        """Duration of ``program`` in ns on an idle fabric."""
        backend = InNetworkFlow(None, EventQueue(), graph=self.fabric)
        return run_program(backend, program)

    def levels(self) -> list[list[list[int]]]:
        """The hierarchical algorithm's levels over every NPU."""
        p = self.fabric.params
        if p.kind == MESH:
            cols, rows = p.cols, p.npus // p.cols
            return [[[y * cols + x for x in range(cols)] for y in range(rows)], [[y * cols + x for y in range(rows)] for x in range(cols)]]
        per, l1s = p.per_l1, p.npus // p.per_l1
        return [[[k * per + i for i in range(per)] for k in range(l1s)], [[k * per + i for k in range(l1s)] for i in range(per)]]

    def collective(self, groups: Sequence[Sequence[int]], roles: Sequence[str], comm: str, nbytes: float) -> W.Program:
        """The program of ``groups`` (concurrent, disjoint) each running ``comm`` on ``nbytes``."""
        p = self.fabric.params
        groups = [self.place(g) for g in groups]
        if p.in_network:
            return W.in_network(self.fabric, groups, roles, comm, nbytes)
        if len(groups) == 1 and sorted(groups[0]) == list(range(p.npus)):
            orders = ((0, 1), (1, 0)) if p.kind == MESH else ((0, 1),)
            return W.hierarchical(self.levels(), comm, nbytes, orders=orders, chunks=CHUNKS)
        return W.ring(groups, comm, nbytes)

    def collective_ns(self, groups: Sequence[Sequence[int]], roles: Sequence[str], comm: str, nbytes: float) -> float:
        key = ("coll", tuple(map(tuple, groups)), tuple(roles), comm, round(nbytes))
        if key not in self._memo:
            self._memo[key] = self.run(self.collective(groups, roles, comm, nbytes))
        return self._memo[key]

    def effective_bw(self, groups: Sequence[Sequence[int]], roles: Sequence[str], comm: str, nbytes: float) -> tuple[float, float, float]:
        """(bytes each NPU sends, ns, per-NPU bandwidth in GB/s = bytes / ns) of a collective."""
        prog = self.collective(groups, roles, comm, nbytes)
        t = self.run(prog)
        return prog.sent_per_npu, t, prog.sent_per_npu / t

    def p2p_ns(self, pairs: Sequence[tuple[int, int]], nbytes: float) -> float:
        """Every ``(src, dst)`` pair sending ``nbytes`` at once."""
        key = ("p2p", tuple(pairs), round(nbytes))
        if key not in self._memo:
            prog = W.Program()
            placed = [self.place((a, b)) for a, b in pairs]
            prog.add([W.Unicast(a, b, nbytes) for a, b in placed])
            self._memo[key] = self.run(prog)
        return self._memo[key]

    def stream_in_ns(self, demand: Sequence[tuple[Sequence[int], float]]) -> float:
        key = ("in", tuple((tuple(m), round(b)) for m, b in demand))
        if key not in self._memo:
            self._memo[key] = self.run(W.stream_in(self.fabric, [(self.place(m), b) for m, b in demand]))
        return self._memo[key]

    def stream_out_ns(self, sources: Sequence[tuple[Sequence[int], float]]) -> float:
        """Gradients written back: reduced in the switches on the way out on FRED-B/D (a tree
        per controller stripe), else reduce-scattered over each group first, then written."""
        key = ("out", tuple((tuple(m), round(b)) for m, b in sources))
        if key in self._memo:
            return self._memo[key]
        if self.fabric.params.in_network:
            t = self.stream_in_ns(sources)  # the same trees, data flowing up: one rate
        else:
            groups = [list(m) for m, _ in sources if len(m) > 1]
            rs = self.collective_ns(groups, ["dp"] * len(groups), W.REDUCE_SCATTER, sources[0][1]) if groups else 0.0
            t = rs + self.run(W.stream_out(self.fabric, [(self.place(m), b) for m, b in sources]))
        self._memo[key] = t
        return t

    def io_efficiency(self, nbytes: float = 18e9, *, shared: bool = True) -> float:
        """Achieved fraction of the controllers' line rate streaming ``nbytes``: every NPU
        needing all of it (``shared``: weights of data-parallel replicas) or each NPU its own
        ``1/npus`` (sharded weights)."""
        p = self.fabric.params
        everyone = list(range(p.npus))
        demand = [(everyone, nbytes)] if shared else [([r], nbytes / p.npus) for r in everyone]
        t = self.stream_in_ns(demand)
        return nbytes / t / (p.io_controllers * p.io_bw / 1e9)
