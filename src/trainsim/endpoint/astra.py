"""ASTRA-sim's endpoint model (endpoint layer; astra-sim-semantics.md B1-B2).

An insertion costs the endpoint delay E (the system section's ``endpoint_delay_ns``, ASTRA-sim's
``endpoint-delay``, times its ``injection_scale``, ASTRA-sim's ``--injection-scale``: ASTRA-sim
stores both E and the product in an int, so in compatibility mode the delay is
``int(int(E) x scale)``; the "Fast" path is not scaled) or, on a communicator group's "Fast" path,
``fast_path_ns`` (10 ns, hard-coded in ASTRA-sim's ``MemBus``). Reducing b bytes costs three
memory passes at the system's ``local_mem_bw`` (B/s): ``red(b) = 3 x trunc(b / local_mem_bw x
1e9)`` ns in compatibility mode (each pass truncated on its own, B2), ``3 b / local_mem_bw x
1e9`` ns otherwise; memoized per size. Neither cost depends on the rank or the time. Times in
ns, bandwidth in B/s, sizes in bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from trainsim.config.types import Platform

FAST_PATH_NS = 10.0  # MemBus "Fast" transmission (astra-sim-semantics.md B1, groups)


@dataclass(frozen=True, slots=True)
class AstraEndpointSpec:
    """The platform file's ``endpoint: {model: astra, ...}``. E and the reduction bandwidth are
    the system section's (``endpoint_delay_ns``, ``local_mem_bw``), as in ASTRA-sim's system
    JSON; this model adds the "Fast" path's delay (ns)."""

    model: ClassVar[str] = "astra"
    fast_path_ns: float = FAST_PATH_NS


class AstraEndpoint:
    """E (or the Fast path) per insertion, ``red(b)`` per reduction (module docstring)."""

    __slots__ = ("delay_ns", "fast_ns", "local_mem_bw", "compat_astra", "_red")
    time_invariant = True

    def __init__(
        self,
        delay_ns: float,
        local_mem_bw: float,
        *,
        compat_astra: bool,
        fast_ns: float = FAST_PATH_NS,
        injection_scale: float = 1.0,
    ) -> None:
        if compat_astra:  # Sys::initialize_sys: int E, then int(E x injection_scale)
            self.delay_ns = float(int(int(delay_ns) * injection_scale))
        else:
            self.delay_ns = float(delay_ns) * injection_scale
        self.fast_ns = float(int(fast_ns)) if compat_astra else float(fast_ns)
        self.local_mem_bw = float(local_mem_bw)
        self.compat_astra = compat_astra
        self._red: dict[int, float] = {}

    def insertion_ns(self, rank: int, now_ns: float, fast: bool) -> float:
        return self.fast_ns if fast else self.delay_ns

    def reduction_ns(self, rank: int, now_ns: float, nbytes: int) -> float:
        red = self._red.get(nbytes)
        if red is None:
            one = nbytes / self.local_mem_bw * 1e9
            red = self._red[nbytes] = 3.0 * (math.trunc(one) if self.compat_astra else one)
        return red


def build_astra_endpoint(
    spec: AstraEndpointSpec, platform: Platform, compat_astra: bool
) -> AstraEndpoint:
    """The registry's factory: E and the reduction bandwidth from ``platform.system``."""
    system = platform.system
    return AstraEndpoint(
        system.endpoint_delay_ns,
        system.local_mem_bw,
        compat_astra=compat_astra,
        fast_ns=spec.fast_path_ns,
        injection_scale=system.injection_scale,
    )
