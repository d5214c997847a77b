"""The packet backend's parameters: the ``backends: {packet: {...}}`` section of a native
platform file (DESIGN.md, network layer; ``network/registry.py`` validates it).

Every default is the public HPCC ns-3 code base's (github.com/alibaba-edu/High-Precision-
Congestion-Control: ``mix/config.txt``, ``scratch/third.cc``, ``rdma-hw.cc``,
``switch-mmu.cc``), the one the HOTI'22 RoCE study ran on, converted to units in the names:

- 1000 B payload per packet, 32 MiB shared buffer per switch, PFC dynamic threshold
  ``(buffer - headroom - reserve - shared used) >> 3`` (alpha 1/8), 4 KiB reserve and 3 KiB
  resume offset per ingress queue, headroom ``3 x rate x link delay`` per port;
- ECN by link rate: Kmin/Kmax 100/400 KB at 25 Gb/s, 200/800 at 50, 400/1600 at 100, Pmax 0.2;
  rates not in the table scale the nearest lower entry linearly (200 Gb/s: 800/3200 KB);
- DCQCN (Mellanox's version in ``rdma-hw.cc``): g = 1/256, alpha timer 1 us, rate-decrease
  interval 4 us, rate-increase timer 900 us, 1 fast-recovery stage, AI 50 Mb/s, HAI
  100 Mb/s, minimum rate 100 Mb/s;
- DCTCP (rate-based): AI 1000 Mb/s, g = 1/256;
- TIMELY: alpha 0.875, beta 0.8, T_low 50 us, T_high 500 us, min RTT 20 us;
- HPCC: eta 0.95, maxStage 0, fast reaction on every ACK, AI 50 Mb/s, window = BDP.

The NP's CNP interval has no counterpart in that code base (its receivers echo ECN on every
ACK and the RP acts at most once per rate-decrease interval): ``cnp_interval_us`` 4 keeps that
timing while sending CNPs as their own packets. ``cell_packets`` > 1 moves ``k`` packets as
one unit (sweeps); 1 is the validated packet-level model.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CcName = Literal["none", "dcqcn", "dctcp", "timely", "hpcc"]


class EcnLevel(BaseModel):
    """RED-like marking of one link rate: probability 0 below ``kmin_kb``, rising linearly to
    ``pmax`` at ``kmax_kb``, 1 above (``switch-mmu.cc`` ShouldSendCN; KB = 1000 B)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    rate_gbps: float = Field(gt=0)
    kmin_kb: float = Field(ge=0)
    kmax_kb: float = Field(gt=0)
    pmax: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> EcnLevel:
        if self.kmax_kb <= self.kmin_kb:
            raise ValueError(f"kmax_kb ({self.kmax_kb}) must exceed kmin_kb ({self.kmin_kb})")
        return self


_HPCC_ECN = (
    EcnLevel(rate_gbps=25, kmin_kb=100, kmax_kb=400, pmax=0.2),
    EcnLevel(rate_gbps=50, kmin_kb=200, kmax_kb=800, pmax=0.2),
    EcnLevel(rate_gbps=100, kmin_kb=400, kmax_kb=1600, pmax=0.2),
)


class PacketOptions(BaseModel):
    """Parameters of the packet-level backend (units in the names)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    engine: Literal["auto", "python", "native"] = "auto"
    """The compiled core (native; ``make`` builds it), the pure-Python reference engine
    (python), or the core when built and the reference otherwise (auto)."""
    cc: CcName = "dcqcn"
    """Congestion control per queue pair: none (PFC only), dcqcn, dctcp, timely or hpcc."""
    mtu_bytes: int = Field(default=1000, gt=0)
    """Payload bytes per packet (PACKET_PAYLOAD_SIZE)."""
    header_bytes: int = Field(default=48, ge=0)
    """Per-packet wire overhead (PPP + IPv4 + UDP + sequence header)."""
    ack_bytes: int = Field(default=60, gt=0)
    """ACK / NACK / CNP size (the code base pads them to 60 B)."""
    int_hop_bytes: int = Field(default=8, ge=0)
    """INT bytes per hop added to data packets and echoed in ACKs under HPCC."""
    pfc_frame_bytes: int = Field(default=64, gt=0)
    cell_packets: int = Field(default=1, ge=1)
    """Move ``k`` packets as one unit of ``k x mtu_bytes`` (1: packet level)."""
    data_priority: int = Field(default=3, ge=1, le=7)
    """Priority of RDMA data (the code base's pg 3); 0 is the control class."""
    ack_high_priority: bool = False
    """ACK_HIGH_PRIO: ACKs and NACKs in the control class at switches."""

    pfc: bool = True
    buffer_mib: float = Field(default=32.0, gt=0)
    """Shared buffer per switch (BUFFER_SIZE, MiB)."""
    pfc_alpha_shift: int = Field(default=3, ge=0, le=16)
    """Dynamic threshold: free shared buffer >> shift (3: alpha = 1/8)."""
    reserve_bytes: int = Field(default=4096, ge=0)
    resume_offset_bytes: int = Field(default=3072, ge=0)
    headroom_factor: float = Field(default=3.0, ge=0)
    """Headroom per port = factor x rate x link delay."""

    ecn: bool = True
    ecn_levels: tuple[EcnLevel, ...] = _HPCC_ECN
    seed: int = 1
    """Seed of the ECN marking draws (runs are deterministic)."""

    ack_interval_packets: int = Field(default=1, ge=1)
    nack_interval_us: float = Field(default=500.0, gt=0)
    rto_us: float = Field(default=1000.0, gt=0)
    """Go-back-N timeout: unacknowledged data is resent when no ACK advanced for this long."""
    has_window: bool = True
    """HAS_WIN: a window of the network's largest bandwidth-delay product (GLOBAL_T)."""
    var_window: bool = True
    """VAR_WIN: the window scales with the current rate."""

    min_rate_mbps: float = Field(default=100.0, gt=0)
    rate_ai_mbps: float = Field(default=50.0, ge=0)
    rate_hai_mbps: float = Field(default=100.0, ge=0)
    ewma_gain: float = Field(default=1 / 256, gt=0, le=1)

    dcqcn_alpha_resume_interval_us: float = Field(default=1.0, gt=0)
    dcqcn_rate_decrease_interval_us: float = Field(default=4.0, gt=0)
    dcqcn_rp_timer_us: float = Field(default=900.0, gt=0)
    dcqcn_fast_recovery_times: int = Field(default=1, ge=0)
    dcqcn_clamp_target_rate: bool = False
    cnp_interval_us: float = Field(default=4.0, ge=0)

    dctcp_rate_ai_mbps: float = Field(default=1000.0, ge=0)

    timely_alpha: float = Field(default=0.875, gt=0, le=1)
    timely_beta: float = Field(default=0.8, gt=0)
    timely_t_low_us: float = Field(default=50.0, ge=0)
    timely_t_high_us: float = Field(default=500.0, gt=0)
    timely_min_rtt_us: float = Field(default=20.0, gt=0)

    hpcc_eta: float = Field(default=0.95, gt=0, le=1)
    hpcc_max_stage: int = Field(default=0, ge=0)
    hpcc_fast_react: bool = True

    monitor_interval_us: float = Field(default=10.0, gt=0)
    """Sampling period of the queue-depth time series of the switch ports."""

    def ecn_thresholds(self, rate_bps: float) -> tuple[float, float, float]:
        """(kmin bytes, kmax bytes, pmax) of a link of ``rate_bps`` bit/s: the table's entry
        at that rate, else the nearest lower one (the lowest for slower links) scaled by the
        rate ratio."""
        gbps = rate_bps / 1e9
        levels = sorted(self.ecn_levels, key=lambda e: e.rate_gbps)
        for e in levels:
            if abs(e.rate_gbps - gbps) <= 1e-9 * gbps:
                return e.kmin_kb * 1000, e.kmax_kb * 1000, e.pmax
        lower = [e for e in levels if e.rate_gbps < gbps]
        base = lower[-1] if lower else levels[0]
        scale = gbps / base.rate_gbps
        return base.kmin_kb * 1000 * scale, base.kmax_kb * 1000 * scale, base.pmax

    @model_validator(mode="after")
    def _check(self) -> PacketOptions:
        if not self.ecn_levels:
            raise ValueError("ecn_levels needs at least one entry")
        if self.timely_t_high_us <= self.timely_t_low_us:
            raise ValueError("timely_t_high_us must exceed timely_t_low_us")
        return self
