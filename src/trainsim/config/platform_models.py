"""The pydantic models of trainsim's native platform YAML (config layer; see ``platform.py``).

Field names carry their units (DESIGN.md, "Units"): ``*_gbps`` is GB/s (a number, or a string
with its unit: ``"200 Gb/s"``, ``"2 TB/s"``), ``*_ns`` nanoseconds,
``*_tflops`` TFLOP/s. GB/s is decimal (1e9 B/s) unless the file says ``compat: astra``, in
which case network ``bandwidth_gbps`` is ASTRA-sim's 2**30 B/s (memory bandwidths are decimal
in ASTRA-sim too, so they do not change). Every model forbids unknown keys and coerces nothing
(``strict``): ``"8"`` is not 8 and ``1`` is not ``true``. Defaults are those of
:class:`~trainsim.config.types.SystemSpec` and :class:`~trainsim.config.types.RemoteMemorySpec`.
The ``endpoint`` section is validated by the model it names (``trainsim.endpoint.registry``),
in ``platform.py``: endpoint models are plug-ins, so its shape is not fixed here. The checks
that are code live in ``platform_rules.py`` (no pydantic), which the fast path of a valid file
(``platform_fast.py``, from the table ``platform_schema_gen.py`` derives from these models)
calls too.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from trainsim.config import platform_rules as rules
from trainsim.config.types import (
    MAX_DATASET_SPLITS,
    MAX_NPUS,
    NcclSpec,
    RemoteMemorySpec,
    SharedBusSpec,
    SystemSpec,
)
from trainsim.units import GBPS, TFLOPS

_SYS = SystemSpec()
_BUS = SharedBusSpec()
_MEM = RemoteMemorySpec()

NonNeg = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]

GBps = Annotated[float, BeforeValidator(rules.in_gbytes), Field(gt=0, allow_inf_nan=False)]
"""A bandwidth in GB/s (1e9 B/s): a number, or a string with its unit ('200 Gb/s')."""
GBpsOrZero = Annotated[float, BeforeValidator(rules.in_gbytes), Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=1)]


_IMPL_LIST = (
    "Algorithm per network dimension, lowest first (ASTRA-sim names, collectives/algorithms.py); "
    "[] = not configured: a collective of this type is then an error"
)
ImplList = Annotated[
    list[Annotated[str, AfterValidator(rules.impl_name)]], Field(description=_IMPL_LIST)
]
AllToAllList = Annotated[
    list[Annotated[str, AfterValidator(rules.all_to_all_name)]], Field(description=_IMPL_LIST)
]
CollectiveName = Literal["all_reduce", "all_gather", "reduce_scatter", "all_to_all"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class DimModel(_Model):
    """One network dimension."""

    topology: Literal["Ring", "FullyConnected", "Switch", "Mesh"] = Field(
        description="Ring (a torus dimension), FullyConnected, Switch, or Mesh (a line, no wrap-around)"
    )
    size: int = Field(ge=2, le=MAX_NPUS, description="NPUs in this dimension (2 .. 2**31-1)")
    bandwidth_gbps: GBps = Field(description="Per-link bandwidth, GB/s, or with its unit ('200 Gb/s')")
    latency_ns: NonNeg = Field(description="Per-hop latency, ns")


class WaferModel(_Model):
    """A wafer: ``mesh`` (``cols`` wide, X-Y routing, edge I/O controllers) or ``fred`` (L1
    switches of ``per_l1`` NPUs, ``planes`` L2 planes; ``in_network`` for variants B and D)."""

    kind: Literal["mesh", "fred"]
    cols: int = Field(5, ge=2, description="mesh: NPUs per row")
    per_l1: int = Field(4, ge=1, description="fred: NPUs per L1 switch")
    planes: int = Field(4, ge=1, description="fred: L2 planes (middle-stage micro-switches)")
    npu_link_gbps: GBps = Field(description="mesh: each NPU-NPU link; fred: each NPU-L1 link (GB/s)")
    npu_l2_gbps: GBps = Field(375.0, description="fred: each NPU's share of the L1-L2 channels (GB/s)")
    io_controllers: int = Field(18, ge=0, description="off-wafer memory controllers")
    io_gbps: GBps = Field(128.0, description="each I/O controller (GB/s)")
    in_network: bool = Field(False, description="fred: switches reduce and multicast (variants B, D)")
    latency_ns: NonNeg = 20.0
    placement: Literal["linear", "snake", "column"] = Field(
        "linear", description="where rank r sits for the wafer collective pricer (system.collective_tuner: wafer; docs/fred.md)"
    )

    _sane = model_validator(mode="after")(rules.wafer_sane)


class ClosTierModel(_Model):
    """One tier of a Clos fabric, lowest first: tier 0 the NPUs of a node (NVLink), tier 1 the
    nodes under a leaf, tier 2 the leaves of a pod, tier 3 the pods (docs/topologies.md)."""

    name: str = Field("", description="A label (node, leaf, pod, core): reports and errors only")
    size: int = Field(ge=2, le=MAX_NPUS, description="Units of the tier below in one unit of this tier (tier 0: NPUs per node)")
    bandwidth_gbps: GBps | None = Field(
        None, description="Per-NPU link bandwidth into this tier before the taper, GB/s or with its unit; "
        "needed on tiers 0 and 1, default above: the tier below's",
    )
    latency_ns: NonNeg = Field(0.0, description="One way through this tier's switch (link up plus link down), ns")
    oversubscription: Positive = Field(
        1.0, description="Down:up ratio entering this tier (2 = 2:1); tier 1: NPUs per NIC; tier 0 has none",
    )
    rail: bool = Field(False, description="Tier 1 only: one leaf per NPU position of a node (rail-optimized)")
    switches: int = Field(1, ge=1, description="Tiers 2 and up: parallel switches per unit, ECMP over them")


class FabricModel(_Model):
    """A physical fabric under the logical dims: leaf_spine (a two-level Clos / fat-tree with
    an oversubscription ratio, ECMP routing), clos (k tiers, each with its oversubscription),
    or graph (an edge list or GraphML file, shortest paths). Used by the congestion_aware and
    flow backends; a clos fabric also gives the network its dims (docs/topologies.md)."""

    kind: Literal["leaf_spine", "graph", "wafer", "clos"]
    hosts_per_leaf: int = Field(0, ge=0)
    spines: int = Field(0, ge=0)
    oversubscription: Positive = 1.0
    bandwidth_gbps: GBpsOrZero = Field(0.0, description="Host link bandwidth, GB/s or with its unit (leaf_spine)")
    latency_ns: NonNeg = 0.0
    uplink_latency_ns: NonNeg | None = Field(None, description="Leaf-spine link latency, ns (leaf_spine; default latency_ns)")
    file: str = Field("", description="Edge list ('a b bandwidth_gbps latency_ns' lines) or GraphML, for kind graph")
    wafer: WaferModel | None = Field(None, description="A wafer's mesh or FRED fabric, for kind wafer (docs/fred.md)")
    tiers: list[ClosTierModel] | None = Field(None, description="clos: the tiers, lowest (NVLink) first (docs/topologies.md)")

    _clos_tiers = model_validator(mode="after")(rules.fabric_clos_tiers)

    _complete = model_validator(mode="after")(rules.fabric_complete)


class NetworkModel(_Model):
    """A multi-dimensional network; rank ids vary fastest in dims[0]. With a clos fabric the
    dims may be left out: they are derived from its tiers (docs/topologies.md)."""

    dims: list[DimModel] = Field(default_factory=list, description="The dimensions, lowest first; "
                                 "required unless the fabric is a clos")
    fabric: FabricModel | None = None

    _dims_or_clos = model_validator(mode="after")(rules.network_dims_or_clos)

    _npus_in_range = model_validator(mode="after")(rules.network_npus_in_range)


class SharedBusModel(_Model):
    """ASTRA-sim's model-shared-bus and its LogGP parameters."""

    enabled: bool = _BUS.enabled
    latency_ns: NonNeg = _BUS.latency_ns
    overhead_ns: NonNeg = _BUS.overhead_ns
    gap_ns: NonNeg = _BUS.gap_ns
    gap_per_byte_ns: NonNeg = _BUS.gap_per_byte_ns
    local_reduction_delay_ns: NonNeg = _BUS.local_reduction_delay_ns


_NCCL = NcclSpec()
_NcclAlgo = Literal["tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree"]
_NcclProto = Literal["LL", "LL128", "Simple"]


class NcclModel(_Model):
    """``system.nccl``: NCCL's tuning model's inputs (``config.types.NcclSpec``, docs/nccl.md)."""

    arch: Literal["volta", "ampere", "hopper", "blackwell"] = _NCCL.arch
    channels: Count = Field(default=_NCCL.channels, le=64, description="NCCL's channel count (its INFO log prints it)")
    nvlink_fraction: float | None = Field(
        default=None, gt=0, le=1, description="Usable / line rate of an NVLink; default NCCL's topo.h value for arch"
    )
    efficiency: float = Field(default=_NCCL.efficiency, gt=0, le=1, description="Priced bandwidths x this (calibration)")
    nvls: bool = Field(default=_NCCL.nvls, description="NVSwitch reduction (NVLink SHARP, Hopper on)")
    nvls_reduce_gbps: GBps | None = Field(default=None, description="NVSwitch reduction rate per GPU port")
    collnet: bool = Field(default=_NCCL.collnet, description="Network switches reduce (InfiniBand SHARP)")
    net_overhead_us: NonNeg = _NCCL.net_overhead_us
    algorithms: list[_NcclAlgo] = Field(
        default_factory=lambda: cast("list[_NcclAlgo]", list(_NCCL.algorithms)), min_length=1, description="Enabled (NCCL_ALGO)"
    )
    protocols: list[_NcclProto] = Field(
        default_factory=lambda: cast("list[_NcclProto]", list(_NCCL.protocols)), min_length=1, description="Enabled (NCCL_PROTO)"
    )


class SystemModel(_Model):
    """The system layer's knobs (ASTRA-sim's system JSON, renamed with units)."""

    scheduling_policy: Literal["LIFO", "FIFO", "EXPLICIT"] = _SYS.scheduling_policy
    endpoint_delay_ns: NonNeg = _SYS.endpoint_delay_ns
    active_chunks_per_dimension: Count = _SYS.active_chunks_per_dimension
    preferred_dataset_splits: int = Field(
        default=_SYS.preferred_dataset_splits, ge=1, le=MAX_DATASET_SPLITS,
        description=f"Chunks a collective is split into (1 .. {MAX_DATASET_SPLITS})",
    )
    collective_optimization: Literal["localBWAware", "baseline"] = _SYS.collective_optimization
    local_mem_bw_gbps: GBps = Field(
        default=_SYS.local_mem_bw / GBPS,
        description="Local memory bandwidth, also the reduction bandwidth",
    )
    all_reduce: ImplList = list(_SYS.implementations.all_reduce)
    all_gather: ImplList = list(_SYS.implementations.all_gather)
    reduce_scatter: ImplList = list(_SYS.implementations.reduce_scatter)
    all_to_all: AllToAllList = list(_SYS.implementations.all_to_all)
    collective_span: Literal["all", "listed"] | None = Field(
        default=None,
        description="A whole-machine collective whose list is shorter than the network's dims: "
        "all = crosses every dim (missing entries repeat the last algorithm), listed = stops after "
        "the listed dims (ASTRA-sim); default: listed with compat astra, all otherwise",
    )
    custom_collectives: dict[CollectiveName, str] = Field(
        default_factory=dict, description="Collective type -> Chakra ET of a custom algorithm"
    )
    per_node_custom_implementation: str | None = None
    inter_dimension_scheduling: Literal["baseline", "themis", "roundRobin"] = (
        _SYS.inter_dimension_scheduling
    )
    intra_dimension_scheduling: Literal["FIFO", "SCF"] = _SYS.intra_dimension_scheduling
    broadcast: Literal["replay", "simulate"] = Field(
        default=_SYS.broadcast,
        description="replay: a broadcast waits its recorded duration (ASTRA-sim); simulate: a "
        "real broadcast from the group's first member, on the all_reduce list's dimensions",
    )
    roofline_enabled: bool = _SYS.roofline_enabled
    peak_perf_tflops: NonNeg = _SYS.peak_perf / TFLOPS
    boost_mode: bool = _SYS.boost_mode
    trace_enabled: bool = _SYS.trace_enabled
    replay_only: bool = _SYS.replay_only
    track_local_mem: bool = _SYS.track_local_mem
    local_mem_trace_filename: str = _SYS.local_mem_trace_filename
    shared_bus: SharedBusModel = SharedBusModel()
    comm_scale: Positive = Field(default=_SYS.comm_scale, description="Communication sizes x this (ASTRA-sim's --comm-scale)")
    compute_scale: Positive = Field(default=_SYS.compute_scale, description="Compute times x this (ASTRA-sim's --compute-scale)")
    injection_scale: Positive = Field(default=_SYS.injection_scale, description="Endpoint delay x this (ASTRA-sim's --injection-scale)")
    rendezvous: bool = Field(default=_SYS.rendezvous, description="A control message from the receiver before every message (ASTRA-sim's --rendezvous-protocol)")
    queues_per_dim: Count = Field(default=_SYS.queues_per_dim, description="Dimension queues per network dimension (ASTRA-sim's --num-queues-per-dim)")
    collective_tuner: Literal["nccl", "wafer"] | None = Field(
        default=None,
        description="nccl: price NCCL-tuned collectives by NCCL's algorithm/protocol choice (docs/nccl.md); wafer: by the wafer fabric's flow programs (docs/fred.md); default mode only",
    )
    nccl: NcclModel = NcclModel()

    _roofline_needs_peak = model_validator(mode="after")(rules.system_roofline_needs_peak)


class PcmTierModel(_Model):
    """A PCM-backed expansion tier (``memory/pcm``): the tier's latency, bandwidth and capacity
    come from the PCM model (``memory.expansion`` resolves them; docs/pcm.md)."""

    scheme: Literal["base", "tri", "tri+fpc"] = Field(default="tri", description="MLC write/read scheme of docs/pcm.md")
    load: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)] = Field(default=0.5, description="Load the latency is taken at, a fraction of the PCM's bandwidth")
    channels: Count = Field(default=1, description="Channels of one PCM memory (NVMain's example: 1)")
    banks: Count = Field(default=2, description="Banks per channel (NVMain's example: 2)")
    devices: Count = Field(default=1, description="PCM memories an access stripes over: bandwidth and capacity x devices, latency as one")
    requests: Annotated[int, Field(ge=500, le=200_000)] = Field(default=4000, description="Requests of the open-loop run that measures the latency")


class MemoryModel(_Model):
    """Remote / pooled memory: access time = latency + bytes / bandwidth. ``technology: pcm``
    takes latency, bandwidth and (unless given) capacity from the PCM model of ``pcm``."""

    mode: Literal["none", "per_npu", "per_node", "pool"] = "none"
    technology: Literal["dram", "pcm"] = Field(default="dram", description="What backs the tier: DRAM (latency_ns, bandwidth_gbps as given) or PCM (from the pcm section)")
    pcm: PcmTierModel | None = Field(default=None, description="The PCM tier's parameters (technology: pcm)")
    latency_ns: NonNeg = _MEM.latency_ns
    bandwidth_gbps: GBpsOrZero = Field(default=_MEM.bandwidth / GBPS, description="Decimal GB/s, or with its unit")
    nodes: Count = _MEM.nodes
    npus_per_node: Count = _MEM.npus_per_node
    capacity_gb: NonNeg | None = Field(
        default=None,
        description="Capacity of the tier in GB (1e9 B): per NPU (per_npu), per node (per_node) or in all (pool); "
        "absent: no limit (ASTRA-sim's remote memory has none). A generated step's offloaded states are checked against it",
    )

    _bandwidth_when_used = model_validator(mode="after")(rules.memory_bandwidth_when_used)


Fraction = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]


class EfficiencyModel(_Model):
    """Achievable fractions of a device's nominal ceilings (``compute/devices.py``,
    ``Efficiency``); a key left out keeps the base device's (or the default) value."""

    gemm: Fraction | None = Field(default=None, description="Large dense GEMMs, fraction of the tensor peak")
    attention: Fraction | None = Field(default=None, description="Batched score/context GEMMs")
    flash_attention: Fraction | None = Field(default=None, description="Fused attention kernels")
    memory: Fraction | None = Field(default=None, description="Streaming kernels, fraction of HBM bandwidth")
    sustained: Fraction | None = Field(default=None, description="Fraction of the benchmarked math throughput kept up in training")
    gemm_half_size: NonNeg | None = Field(default=None, description="GEMM size term: efficiency halves at min dimension = this")
    kernel_overhead_s: NonNeg | None = Field(default=None, description="Fixed seconds per kernel")


class DeviceModel(_Model):
    """An accelerator defined in the platform file: a built-in one (``base``) with changes, or
    a new one with its dense peaks, HBM bandwidth and capacity."""

    base: str | None = Field(default=None, description="A built-in device to start from (A100, H100, H200, B200, ...)")
    vendor: str = ""
    peak_tflops: dict[str, Positive] | None = Field(default=None, description="Dense peak TFLOP/s per precision, e.g. {bf16: 989.5}")
    hbm_bandwidth_gbps: GBps | None = Field(default=None, description="HBM bandwidth, GB/s (or with its unit, '3.35 TB/s')")
    hbm_capacity_gb: Positive | None = Field(default=None, description="HBM capacity, GB (1e9 B)")
    efficiency: EfficiencyModel | None = None

    _complete = model_validator(mode="after")(rules.device_complete)


class PlatformModel(_Model):
    """trainsim's native platform file: network, system, memory, communicator groups, endpoint."""

    compat: Literal["default", "astra"] = Field(
        default="default",
        description="astra: network bandwidth_gbps is ASTRA-sim's GB/s (2**30 B/s) and runs "
        "reproduce ASTRA-sim's arithmetic; default: decimal GB/s, exact arithmetic",
    )
    network: NetworkModel
    system: SystemModel = SystemModel()
    memory: MemoryModel = MemoryModel()
    comm_groups: Annotated[dict[str, list[Annotated[int, Field(ge=0)]]], BeforeValidator(rules.int_keys_as_text)] = Field(
        default_factory=dict,
        description='Group id (decimal) -> member NPU ids, in ring order, e.g. {"1": [0, 1]}; '
        "ids are distinct and below the network's NPU count",
    )
    endpoint: dict[str, Any] | None = Field(
        default=None,
        description="The endpoint model and its parameters, {model: astra, ...}; absent: astra "
        "(ASTRA-sim's endpoint delay and reductions, from the system section)",
    )
    backends: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Network backend name -> that backend's own parameters (each backend "
        "validates its section; `trainsim run --help` lists the backends)",
    )
    devices: dict[str, DeviceModel] = Field(
        default_factory=dict,
        description="Accelerators of this platform by name (used by `trainsim generate --device NAME`), "
        "beside the built-in table",
    )

    _astra_links_as_numbers = model_validator(mode="before")(rules.astra_links_as_numbers)
