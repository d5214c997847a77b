"""The pricing seam of the collective runtime (DESIGN.md, system layer; docs/nccl.md,
docs/fred.md): a *pricer* gives a whole collective's duration once every member has issued it,
instead of the runtime running the implementation lists' phases on the network backend.

``system.collective_tuner`` names the pricer (:data:`PRICERS`, a registry of ``"module:attr"``
factories, imported on first use): ``nccl`` (NCCL's algorithm and protocol choice,
``nccl_pricing.py``) and ``wafer`` (the wafer fabric's flow programs, ``wafer_pricing.py``).
A pricer declares which collective types it prices (:meth:`CollectivePricer.prices`) and
whether collectives that become ready in the same tick are priced together
(``concurrent``: their groups then share the fabric in one program, beside what is left of
the collectives still in flight). The runtime
(``collective_runtime.CollectiveRuntime.flush_tuned``) holds the members until the last one
issues, asks for the price and finishes every member at that tick plus the price. Sizes in
bytes (Chakra's ``comm_size``), times in ns.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from trainsim.errors import ConfigError

if TYPE_CHECKING:
    from trainsim.config.types import Platform


@dataclass(frozen=True, slots=True)
class Price:
    """One priced collective: its duration (ns), a label for its record (``nccl:ring/simple``,
    ``wafer:in_network``) and the bytes each member sends per network dimension."""

    duration_ns: float
    label: str
    dim_bytes: list[int]


@dataclass(frozen=True, slots=True)
class PriceRequest:
    """One collective ready to price: its Chakra type, ``comm_size`` and members."""

    comm_type: int
    size: int
    members: tuple[int, ...]


class CollectivePricer(Protocol):
    """Prices whole collectives (module docstring)."""

    concurrent: bool
    """Collectives ready in the same tick are priced together (one :meth:`price_batch`)."""

    def prices(self, comm_type: int) -> bool:
        """Whether collectives of Chakra type ``comm_type`` are priced here (the others run
        the implementation lists' phases)."""
        ...

    def price_batch(self, batch: Sequence[PriceRequest], in_flight: Sequence[tuple[PriceRequest, float]] = ()) -> list[Price]:
        """A price per request, the requests running at once; ``in_flight``: collectives priced
        earlier and still running, each with the fraction of its bytes left (a concurrent
        pricer may let them load the fabric; their own prices stand)."""
        ...


PRICERS: dict[str, str] = {
    "nccl": "trainsim.system.nccl_pricing:NcclPricing",
    "wafer": "trainsim.system.wafer_pricing:WaferPricing",
}
"""``system.collective_tuner`` -> the pricer's factory ``factory(platform)``."""


def _factory(name: str) -> Any:
    ref = PRICERS.get(name)
    if ref is None:
        raise ConfigError(f"unknown collective tuner {name!r}; expected one of {', '.join(PRICERS)}", field="system.collective_tuner")
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def concurrent_pricer(platform: Platform, compat_astra: bool = False) -> bool:
    """Whether ``platform``'s pricer prices concurrent collectives together (then a run of
    part of the ranks misses the others' groups: ``symmetry/replica.py`` refuses its slice)."""
    name = platform.system.collective_tuner
    return name is not None and not compat_astra and bool(_factory(name).concurrent)


def make_pricer(platform: Platform, compat_astra: bool) -> CollectivePricer | None:
    """The pricer ``platform.system.collective_tuner`` names, or None (none named, or
    ``compat: astra``, which always runs the phases)."""
    name = platform.system.collective_tuner
    if name is None or compat_astra:
        return None
    pricer: CollectivePricer = _factory(name)(platform)
    return pricer
