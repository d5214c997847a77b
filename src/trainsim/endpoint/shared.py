"""The baseline endpoint as a resource: collectives run on the rank's own compute units and
HBM, competing with its compute kernels (endpoint layer; Rashidi et al., ISCA 2021, "ACE",
Sec. III: the baseline runs collectives as kernels on the accelerator, e.g. NCCL's channels).

Rule (docs/ace.md has the derivation and the table per algorithm):

- collectives get ``comm_units`` of the rank's ``compute_units`` while any of their chunks is
  in flight on the rank (NCCL-style channels: a persistent kernel holds its units), and move
  data through HBM at ``rate = min(comm_hbm_bw, comm_units x unit_bw)`` B/s, one FIFO pipe per
  rank (``resource.Pipe``);
- a message of b bytes costs ``SEND_HBM x b`` of HBM traffic (the sender reads its send buffer,
  the receiver writes the received chunk: both charged to the sender's pipe, since in every
  symmetric collective a rank receives what it sends), and arrives no earlier than the pipe
  has moved it: the network is driven at most at ``rate / SEND_HBM``;
- reducing b bytes costs ``REDUCE_HBM x b`` (read both operands, write the sum) on the same
  pipe: ``reduction_ns`` is the wait for the pipe plus ``3 b / rate``;
- compute kernels get ``1 - comm_units / compute_units`` of the units while a collective is in
  flight, and ``(hbm_bw - rate) / hbm_bw`` of the HBM bandwidth while the pipe is busy; the
  executor re-rates them by their roofline (``compute.model.ComputeModel.node_bounds``).

So a reduce-scatter step moves 5 bytes of HBM traffic per network byte and an all-gather step
2. Times in ns, sizes in bytes, bandwidths in B/s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from trainsim.endpoint.resource import ResourceEndpoint
from trainsim.errors import ConfigError

if TYPE_CHECKING:
    from trainsim.config.types import Platform

SEND_HBM = 2  # HBM bytes per network byte sent: read the send buffer, write the received chunk
REDUCE_HBM = 3  # HBM bytes per reduced byte: read both operands, write the sum


@dataclass(frozen=True, slots=True)
class SharedEndpointSpec:
    """The platform file's ``endpoint: {model: shared, ...}`` in SI units. ``hbm_bw`` None: the
    system section's ``local_mem_bw``."""

    model: ClassVar[str] = "shared"
    compute_units: int = 80
    comm_units: int = 8
    comm_hbm_bw: float = 450e9  # B/s
    unit_bw: float = 50e9  # B/s one unit moves
    hbm_bw: float | None = None  # B/s


class SharedEndpoint(ResourceEndpoint):
    """Collectives on the rank's units and HBM (module docstring)."""

    def __init__(self, spec: SharedEndpointSpec, hbm_bw: float, delay_ns: float) -> None:
        super().__init__(hbm_bw, delay_ns)
        self.compute_units = spec.compute_units
        self.comm_units = spec.comm_units
        self.rate = min(spec.comm_hbm_bw, spec.comm_units * spec.unit_bw, self.hbm_bw)
        self._units_left = 1.0 - spec.comm_units / spec.compute_units
        self._hbm_left = (self.hbm_bw - self.rate) / self.hbm_bw

    def reduction_ns(self, rank: int, now_ns: float, nbytes: int) -> float:
        return self.move_hbm(rank, now_ns, REDUCE_HBM * nbytes, self.rate) - now_ns

    def chunk_begin_ns(self, rank: int, now_ns: float, nbytes: int, parts: int) -> float:
        return now_ns

    def send_ready_ns(self, rank: int, now_ns: float, nbytes: int) -> float:
        self.log(rank).network_bytes += nbytes
        return self.move_hbm(rank, now_ns, SEND_HBM * nbytes, self.rate)

    def chunk_end_ns(
        self, rank: int, now_ns: float, in_bytes: int, out_bytes: int, parts: int
    ) -> float:
        return now_ns

    def compute_share(self, rank: int, now_ns: float) -> tuple[float, float]:
        units = self._units_left if self.active.get(rank, 0) > 0 else 1.0
        hbm = self._hbm_left if self.hbm.busy(rank, now_ns) else 1.0
        return units, hbm


def build_shared_endpoint(
    spec: SharedEndpointSpec, platform: Platform, compat_astra: bool
) -> SharedEndpoint:
    """The registry's factory: HBM bandwidth from the spec or the system's ``local_mem_bw``,
    the insertion delay from the system's ``endpoint_delay_ns``."""
    system = platform.system
    hbm = system.local_mem_bw if spec.hbm_bw is None else spec.hbm_bw
    rate = min(spec.comm_hbm_bw, spec.comm_units * spec.unit_bw)
    if rate >= hbm:
        raise ConfigError(
            f"collectives may use {rate / 1e9:g} GB/s of HBM (min of comm_hbm_gbps and comm_units x "
            f"unit_bandwidth_gbps), all of the rank's {hbm / 1e9:g} GB/s; expected less, so "
            "compute keeps some",
            file=platform.network.source or None,
            field="endpoint.comm_hbm_gbps",
        )
    return SharedEndpoint(spec, hbm, system.endpoint_delay_ns)
