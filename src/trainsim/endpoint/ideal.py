"""The ideal endpoint: collectives cost the rank nothing - no insertion delay, no reduction
time, no HBM bandwidth, no compute units (endpoint layer; the upper bound Rashidi et al., ISCA
2021, compare ACE with). Time invariant, so every symmetric fast path applies. Times in ns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from trainsim.config.types import Platform


@dataclass(frozen=True, slots=True)
class IdealEndpointSpec:
    """The platform file's ``endpoint: {model: ideal}`` (no parameters)."""

    model: ClassVar[str] = "ideal"


class IdealEndpoint:
    """Zero per insertion, zero per reduction."""

    __slots__ = ()
    time_invariant = True

    def insertion_ns(self, rank: int, now_ns: float, fast: bool) -> float:
        return 0.0

    def reduction_ns(self, rank: int, now_ns: float, nbytes: int) -> float:
        return 0.0


def build_ideal_endpoint(
    spec: IdealEndpointSpec, platform: Platform, compat_astra: bool
) -> IdealEndpoint:
    """The registry's factory."""
    return IdealEndpoint()
