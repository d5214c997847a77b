"""Collectives priced by a wafer fabric's flow programs (system layer, beside the planner:
``system.collective_tuner: wafer`` on a platform whose ``network.fabric`` is a wafer;
docs/fred.md).

For an all-reduce, reduce-scatter or all-gather the runtime asks :class:`WaferPricing` instead of
planning phases. The members are placed on the wafer (``wafer.placement``,
``config.wafer.npu_of_rank``), the fabric's algorithm for them is built
(``collectives.wafer.collective_program``: an in-network tree through the planes the conflict
colouring gives on FRED-B/D; the hierarchical algorithm for a wafer-wide group, a ring
otherwise) and run on a fresh flow-level backend over the fabric (``flow_program.run_program``).
Collectives that become ready in the same tick run in one program, so sibling groups (the
tensor-parallel groups of every stage, the data-parallel groups) share the fabric as they do in
the step: same-type, same-size groups are coloured together; other collectives of that tick are
separate programs run at the same time. Collectives priced earlier and still in flight run
beside them with the part of their bytes left (rounded to eighths, so a step's repeated
situations share one price), loading the fabric; their own prices are not revised
(docs/fred.md).

The backend is the first registered one declaring ``capabilities.in_network`` (it also carries
the mesh's plain unicasts); nothing here names it. Sizes in bytes (Chakra's ``comm_size``: an
all-gather's is each member's piece, so the program's output is ``n x`` that), times in ns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from trainsim.collectives import wafer as W
from trainsim.config.types import Platform
from trainsim.config.wafer import npu_of_rank
from trainsim.engine import EventQueue
from trainsim.enums import CommType
from trainsim.errors import ConfigError
from trainsim.network.registry import backend_capabilities, backend_names, make_backend
from trainsim.system.collective_pricing import Price, PriceRequest
from trainsim.system.flow_program import run_program
from trainsim.topology.fabrics import build_graph
from trainsim.topology.wafer import WaferFabric

PRICED = {
    int(CommType.ALL_REDUCE): W.ALL_REDUCE,
    int(CommType.REDUCE_SCATTER): W.REDUCE_SCATTER,
    int(CommType.ALL_GATHER): W.ALL_GATHER,
}
"""Chakra types the wafer's programs price -> their names (others run the phases)."""


class WaferPricing:
    """Prices collectives on one platform's wafer (module docstring); prices are kept per
    batch: a training step repeats the same few."""

    concurrent = True

    def __init__(self, platform: Platform) -> None:
        net = platform.network
        fabric = build_graph(net) if net.fabric is not None else None
        if not isinstance(fabric, WaferFabric):
            raise ConfigError(
                "collective_tuner wafer needs a wafer fabric (network.fabric.kind: wafer)",
                file=net.source or None,
                field="system.collective_tuner",
            )
        self.fabric = fabric
        self.npu_of = npu_of_rank(fabric.params)
        self.dims = net.dims
        name = next((n for n in backend_names() if backend_capabilities(n).in_network), None)
        if name is None:
            raise ConfigError("collective_tuner wafer needs a registered network backend declaring in_network", field="system.collective_tuner")
        self.backend_name = name
        self._template = make_backend(name, net, EventQueue(), compat_astra=False)
        self._memo: dict[tuple[tuple[PriceRequest, ...], tuple[PriceRequest, ...]], list[Price]] = {}
        self.programs_run = 0

    def prices(self, comm_type: int) -> bool:
        return comm_type in PRICED

    def program(self, batch: Sequence[PriceRequest], background: Sequence[PriceRequest] = ()) -> tuple[W.Program, list[W.Program], list[list[int]], list[int]]:
        """One program for ``batch`` and ``background`` (module docstring), its sub-programs,
        the steps of each in it, and the sub-program of each request of ``batch``."""
        keys: dict[tuple[bool, int, int, int], list[int]] = {}
        everything = [*batch, *background]
        for i, r in enumerate(everything):
            keys.setdefault((i >= len(batch), r.comm_type, r.size, len(r.members)), []).append(i)
        programs: list[W.Program] = []
        which = [0] * len(everything)
        for (_, ctype, size, n), idx in keys.items():
            comm = PRICED[ctype]
            nbytes = float(size) * (n if comm == W.ALL_GATHER else 1)
            groups = [[self.npu_of[m] for m in everything[i].members] for i in idx]
            for i in idx:
                which[i] = len(programs)
            programs.append(W.collective_program(self.fabric, groups, ["group"] * len(groups), comm, nbytes))
        merged, owned = W.merge(programs)
        return merged, programs, owned, which[: len(batch)]

    def price_batch(self, batch: Sequence[PriceRequest], in_flight: Sequence[tuple[PriceRequest, float]] = ()) -> list[Price]:
        """Each request's time: when the last step of its sub-program finishes, every request
        of ``batch`` running at once beside what is left of ``in_flight`` (module docstring)."""
        background = []
        for r, left in in_flight:
            if r.comm_type not in PRICED:
                continue
            eighths = math.ceil(left * 8 - 1e-9)
            if eighths > 0:
                background.append(PriceRequest(r.comm_type, r.size * eighths // 8, r.members))
        key = (tuple(batch), tuple(sorted(background, key=lambda r: (r.comm_type, r.size, r.members))))
        got = self._memo.get(key)
        if got is None:
            prog, programs, owned, which = self.program(batch, key[1])
            ends: list[float] = []
            backend = self._template.fork(EventQueue())  # type: ignore[attr-defined]
            run_program(backend, prog, ends)
            self.programs_run += 1
            sub_ns = [max((ends[s] for s in steps), default=0.0) for steps in owned]
            label = "wafer:in_network" if self.fabric.params.in_network else "wafer"
            got = self._memo[key] = [
                Price(sub_ns[which[i]], label, self._dim_bytes(r, programs[which[i]].sent_per_npu)) for i, r in enumerate(batch)
            ]
        return got

    def _dim_bytes(self, r: PriceRequest, sent: float) -> list[int]:
        """The bytes a member sends, on the highest logical dimension the group spans."""
        out = [0] * len(self.dims)
        stride, top = 1, 0
        for d, dim in enumerate(self.dims):
            if len({(m // stride) % dim.size for m in r.members}) > 1:
                top = d
            stride *= dim.size
        out[top] = int(sent)
        return out
