"""ACE, the Accelerator Collectives Engine: an engine beside the network interface that runs
collectives out of its own SRAM (endpoint layer; Rashidi et al., ISCA 2021, Sec. IV).

Rule (docs/ace.md):

- a chunk is read from HBM once, by the engine's DMA at ``dma_bw`` B/s, streaming: its first
  phase starts at once and its messages arrive no earlier than the read channel has brought in
  the first message's share (``nbytes / parts``; ``chunk_begin_ns``: the read overlaps the
  network as the baseline's feed does); its result is written to HBM once (a gather's only
  in its received part: the rank's own input is in place), streaming behind the last
  phase's arrivals: the chunk is done when the DMA pipe takes the
  write (``chunk_end_ns``), the write's bytes charged to the pipe from then. The DMA has a read
  and a write channel, each at ``dma_bw / 2`` (a chunk's read does not queue behind the last
  one's write), each one FIFO pipe per rank (``resource.Pipe``), and each, while busy, uses its
  rate of the rank's HBM bandwidth (compute kernels get the rest); spilled traffic takes the
  read channel;
- forwarding is from SRAM (no HBM traffic); reductions run on the engine's ALUs, a second FIFO
  pipe at ``alu_bw`` bytes reduced per second;
- the SRAM holds ``sram_bytes``; with ``oversize: split`` a chunk is at most ``sram_bytes //
  pipeline_chunks`` (the planner cuts collectives into more chunks, ``max_chunk_bytes``), and
  a chunk begins only while it fits in the SRAM beside the chunks resident on the rank
  (``may_begin``: the collective engine holds it in its first queue until one is done), so
  the engine holds at most ``pipeline_chunks`` chunks of the largest size; with
  ``spill`` chunks keep their size, and while the chunks resident on the rank exceed the SRAM
  the excess fraction f of every message and reduction goes through HBM as in the baseline
  (``shared.SEND_HBM`` and ``shared.REDUCE_HBM`` bytes per byte, on the read channel);
- the compute units are all the compute's: the engine uses none.

Times in ns, sizes in bytes, bandwidths in B/s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from trainsim.endpoint.resource import Pipe, ResourceEndpoint
from trainsim.endpoint.shared import REDUCE_HBM, SEND_HBM
from trainsim.errors import ConfigError

if TYPE_CHECKING:
    from trainsim.config.types import Platform

MIB = 2**20


@dataclass(frozen=True, slots=True)
class AceEndpointSpec:
    """The platform file's ``endpoint: {model: ace, ...}`` in SI units. ``hbm_bw`` None: the
    system section's ``local_mem_bw``."""

    model: ClassVar[str] = "ace"
    sram_bytes: int = 4 * MIB
    dma_bw: float = 450e9  # B/s
    alu_bw: float = 1000e9  # B/s of reduced bytes
    pipeline_chunks: int = 4
    oversize: Literal["split", "spill"] = "split"
    hbm_bw: float | None = None  # B/s


class AceEndpoint(ResourceEndpoint):
    """The collectives engine beside the NIC (module docstring)."""

    def __init__(self, spec: AceEndpointSpec, hbm_bw: float, delay_ns: float) -> None:
        super().__init__(hbm_bw, delay_ns)
        self.spec = spec
        self.dma_bw = min(spec.dma_bw, self.hbm_bw)
        self.channel_bw = self.dma_bw / 2  # one read and one write channel (module docstring)
        self.write = Pipe()  # ``self.hbm`` is the read channel
        self.alu = Pipe()
        self.resident: dict[int, int] = {}
        self._held: dict[int, int] = {}  # bytes of the rank's chunks in the SRAM (``split``)
        self._frees: dict[int, list[tuple[float, int]]] = {}  # (write start ns, bytes) to come
        self._channel_share = self.channel_bw / self.hbm_bw

    def max_chunk_bytes(self) -> int | None:
        if self.spec.oversize == "split":
            return max(1, self.spec.sram_bytes // self.spec.pipeline_chunks)
        return None

    def may_begin(self, rank: int, now_ns: float, nbytes: int) -> bool:
        """With ``split``, a chunk begins (its read from HBM starts) only if it fits in the SRAM
        beside the chunks held on the rank, or none is: the engine's pipeline holds at most
        ``pipeline_chunks`` chunks of the largest size. A chunk is held from its begin to the
        start of its result's write (the write drains the SRAM as the next read fills it, both
        at the channel rate). With ``spill`` every chunk begins and the excess goes through HBM
        (``spill_fraction``)."""
        if self.spec.oversize != "split":
            return True
        frees = self._frees.get(rank)
        held = self._held.get(rank, 0)
        if frees:
            left = [(t, b) for t, b in frees if t > now_ns]
            held -= sum(b for t, b in frees if t <= now_ns)
            self._frees[rank] = left
            self._held[rank] = held
        return held == 0 or held + nbytes <= self.spec.sram_bytes

    def spill_fraction(self, rank: int) -> float:
        """With ``spill``, the fraction of the rank's resident chunks that does not fit in the
        SRAM; with ``split`` 0 (chunks are cut to their SRAM share)."""
        resident = self.resident.get(rank, 0)
        if self.spec.oversize == "split" or resident <= self.spec.sram_bytes:
            return 0.0
        return 1.0 - self.spec.sram_bytes / resident

    def chunk_begin_ns(self, rank: int, now_ns: float, nbytes: int, parts: int) -> float:
        self.resident[rank] = self.resident.get(rank, 0) + nbytes
        self._held[rank] = self._held.get(rank, 0) + nbytes
        start = (
            self.move_hbm(rank, now_ns, nbytes, self.channel_bw) - nbytes / self.channel_bw * 1e9
        )
        return start + nbytes / parts / self.channel_bw * 1e9

    def send_ready_ns(self, rank: int, now_ns: float, nbytes: int) -> float:
        self.log(rank).network_bytes += nbytes
        ready = now_ns
        spill = self.spill_fraction(rank)
        if spill > 0.0:
            ready = max(
                ready, self.move_hbm(rank, now_ns, SEND_HBM * spill * nbytes, self.channel_bw)
            )
        return ready

    def reduction_ns(self, rank: int, now_ns: float, nbytes: int) -> float:
        self.log(rank).alu_bytes += nbytes
        end = self.alu.reserve(rank, now_ns, nbytes, self.spec.alu_bw)[1]
        spill = self.spill_fraction(rank)
        if spill > 0.0:
            end = max(
                end, self.move_hbm(rank, now_ns, REDUCE_HBM * spill * nbytes, self.channel_bw)
            )
        return end - now_ns

    def chunk_end_ns(
        self, rank: int, now_ns: float, in_bytes: int, out_bytes: int, parts: int
    ) -> float:
        self.resident[rank] -= in_bytes
        # a gather's output holds the rank's own input in place: only what it received is
        # written (the baseline's rule too: the receiver writes each chunk it received)
        written = out_bytes - in_bytes if out_bytes > in_bytes else out_bytes
        end = self.move_hbm(rank, now_ns, written, self.channel_bw, self.write)
        done = end - written / self.channel_bw * 1e9
        self._frees.setdefault(rank, []).append((done, in_bytes))
        return done

    def compute_share(self, rank: int, now_ns: float) -> tuple[float, float]:
        busy = self.hbm.busy(rank, now_ns) + self.write.busy(rank, now_ns)
        return 1.0, 1.0 - busy * self._channel_share


def build_ace_endpoint(
    spec: AceEndpointSpec, platform: Platform, compat_astra: bool
) -> AceEndpoint:
    """The registry's factory: HBM bandwidth from the spec or the system's ``local_mem_bw``,
    the insertion delay from the system's ``endpoint_delay_ns``."""
    system = platform.system
    hbm = system.local_mem_bw if spec.hbm_bw is None else spec.hbm_bw
    if spec.dma_bw >= hbm:
        raise ConfigError(
            f"ACE's DMA at {spec.dma_bw / 1e9:g} GB/s would take all of the rank's {hbm / 1e9:g} GB/s "
            "of HBM; expected less, so compute keeps some",
            file=platform.network.source or None,
            field="endpoint.dma_bandwidth_gbps",
        )
    return AceEndpoint(spec, hbm, system.endpoint_delay_ns)
