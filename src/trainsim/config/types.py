"""The validated, SI-unit platform description every simulation layer consumes.

Both ASTRA-sim's inputs (network YAML, system JSON, remote-memory JSON, comm-group JSON) and
trainsim's native platform YAML are parsed into these frozen objects; nothing downstream reads
a file. Field units: bandwidths in B/s, latencies in ns (``latency_ns``: the event kernel's
tick, see ``engine/kernel.py``), FLOP/s, bytes. The endpoint model's parameters are its own
frozen spec (``trainsim.endpoint``), held here as an :class:`EndpointSpec`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from trainsim import budget
from trainsim.config.wafer import WaferParams

if TYPE_CHECKING:
    from trainsim.config.clos import ClosParams

TopologyKind = Literal["Ring", "FullyConnected", "Switch", "Mesh"]
Compat = Literal["default", "astra"]
"""``astra``: the numbers are ASTRA-sim's (network "GB/s" = 2**30 B/s) and a run reproduces its
arithmetic (whole-ns truncation, uint64 remote-memory bandwidth); ``default``: decimal units,
exact arithmetic (DESIGN.md, "Units")."""
MemoryMode = Literal[
    "NO_MEMORY_EXPANSION",
    "PER_NPU_MEMORY_EXPANSION",
    "PER_NODE_MEMORY_EXPANSION",
    "MEMORY_POOL",
]


@dataclass(frozen=True)
class DimSpec:
    """One network dimension: its building block, size and per-link bandwidth and latency."""

    kind: TopologyKind
    size: int
    bandwidth: float  # B/s per link (ASTRA-sim "GB/s" x 2**30)
    latency_ns: float  # per hop


@dataclass(frozen=True)
class FabricSpec:
    """A physical fabric under the logical dimensions: a leaf-spine Clos or a user graph.

    With a fabric, ``NetworkSpec.dims`` is the logical view the collectives use, and the
    congestion-aware and flow backends route messages over the fabric's links."""

    kind: Literal["leaf_spine", "graph", "wafer", "clos"]
    hosts_per_leaf: int = 0
    spines: int = 0
    oversubscription: float = 1.0
    bandwidth: float = 0.0  # B/s per host link
    latency_ns: float = 0.0  # per link
    uplink_latency_ns: float | None = None  # leaf-spine links (leaf_spine); None: latency_ns
    file: str = ""  # edge list or GraphML, for kind "graph"
    wafer: WaferParams | None = None  # for kind "wafer" (docs/fred.md)
    clos: ClosParams | None = None  # for kind "clos" (docs/topologies.md)


@dataclass(frozen=True)
class NetworkSpec:
    """A multi-dimensional network; rank ids vary fastest in dimension 0."""

    dims: tuple[DimSpec, ...]
    source: str = field(default="", compare=False)  # provenance only
    fabric: FabricSpec | None = None

    def __post_init__(self) -> None:
        # a machine over the ranks limit is refused where it is described, before any per-rank
        # structure is built for it (docs/limits.md)
        budget.check(
            "ranks",
            self.npus,
            f"a network of {' x '.join(f'{s:,}' for s in self.sizes)} NPUs",
            way_under="use smaller dimensions",
            file=self.source or None,
            field="network.dims",
        )

    @property
    def npus(self) -> int:
        return math.prod(d.size for d in self.dims)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(d.size for d in self.dims)


@dataclass(frozen=True)
class CollectiveImpl:
    """The per-dimension algorithm names of one collective type, as in ASTRA-sim's
    ``<type>-implementation`` lists (``ring``, ``direct``, ``directN``, ``halvingDoubling``,
    ``doubleBinaryTree``, ``inSwitch``, ``oneRing``, ...: the spellings of the algorithm table,
    ``collectives/algorithms.py``), kept as written.

    An empty tuple means "not configured" (the key was absent from an ASTRA-sim system JSON): a
    collective of that type is then an error at run time, as in ASTRA-sim."""

    all_reduce: tuple[str, ...] = ("ring",)
    all_gather: tuple[str, ...] = ("ring",)
    reduce_scatter: tuple[str, ...] = ("ring",)
    all_to_all: tuple[str, ...] = ("ring",)
    custom: dict[str, str] = field(default_factory=dict)
    """``<type>-implementation-custom``: collective type (``all_reduce`` ...) -> the Chakra ET
    of a custom algorithm, as written in the file (ASTRA-sim opens it relative to its cwd; trainsim
    then tries beside the file: ``system/custom_collectives.py``)."""
    per_node_custom: str | None = None
    """``per-node-custom-implementation``: a YAML file mapping workload node id -> Chakra ET."""


@dataclass(frozen=True)
class SharedBusSpec:
    """ASTRA-sim's ``model-shared-bus`` with its LogGP parameters ``L``, ``o``, ``g``, ``G``
    (ns, ns, ns, ns per byte) and ``local-reduction-delay`` (ns, read by its LogGP model); they
    only act when ``enabled``."""

    enabled: bool = False
    latency_ns: float = 0.0  # L
    overhead_ns: float = 0.0  # o
    gap_ns: float = 0.0  # g
    gap_per_byte_ns: float = 0.0  # G
    local_reduction_delay_ns: float = 1.0


MAX_DATASET_SPLITS = 4096
"""Most ``preferred_dataset_splits``: each split is a chunk the simulator runs as its own events,
so a million splits of one collective take minutes and gigabytes; ASTRA-sim's studies use 1-64."""

MAX_NPUS = 2**31 - 1
"""Most NPUs in a network (one dimension or all): ranks are int32 in the workload's arrays."""


@dataclass(frozen=True)
class NcclSpec:
    """NCCL's tuning model's inputs a platform sets (``system.nccl``; ``collectives/nccl_tuner.py``,
    docs/nccl.md). Bandwidths in B/s.

    - ``arch``: the GPU generation (NCCL's per-architecture constants);
    - ``channels``: NCCL's channel count (its ``NCCL_DEBUG=INFO`` log prints it);
    - ``nvlink_fraction``: usable over line rate of an NVLink (None: NCCL's topo.h value for ``arch``);
    - ``efficiency``: every priced bandwidth x this (the per-hardware calibration factor);
    - ``nvls``: the NVSwitch reduces (NVLink SHARP, Hopper on); ``nvls_reduce_bw``: its
      reduction rate per GPU port (None: no cap beyond the links);
    - ``collnet``: the network's switches reduce (InfiniBand SHARP);
    - ``net_overhead_us``: NCCL's network post overhead per step (1 us on Intel CPUs, 2 on AMD);
    - ``algorithms`` / ``protocols``: those enabled (``NCCL_ALGO`` / ``NCCL_PROTO``)."""

    arch: Literal["volta", "ampere", "hopper", "blackwell"] = "ampere"
    channels: int = 16
    nvlink_fraction: float | None = None
    efficiency: float = 1.0
    nvls: bool = False
    nvls_reduce_bw: float | None = None
    collnet: bool = False
    net_overhead_us: float = 1.0
    algorithms: tuple[str, ...] = ("tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree")
    protocols: tuple[str, ...] = ("LL", "LL128", "Simple")


@dataclass(frozen=True)
class SystemSpec:
    """The system layer's knobs (ASTRA-sim system JSON), in SI units."""

    scheduling_policy: Literal["LIFO", "FIFO", "EXPLICIT"] = "LIFO"
    endpoint_delay_ns: float = 10.0
    active_chunks_per_dimension: int = 1
    preferred_dataset_splits: int = 1
    collective_optimization: Literal["localBWAware", "baseline"] = "baseline"
    local_mem_bw: float = 1600e9  # B/s (decimal GB/s x 1e9); also the reduction bandwidth
    implementations: CollectiveImpl = field(default_factory=CollectiveImpl)
    collective_span: Literal["all", "listed"] | None = None
    """How far a whole-machine collective reaches when its implementation list is shorter than
    the network's dimensions: ``all`` crosses every dimension (the missing entries repeat the
    list's last algorithm, ``ring`` where that one cannot run on the dimension), ``listed`` stops
    after the listed ones (ASTRA-sim's convention); None: ``listed`` in ``compat: astra``,
    ``all`` otherwise (``system.planner``)."""
    inter_dimension_scheduling: Literal["baseline", "themis", "roundRobin"] = "baseline"
    intra_dimension_scheduling: Literal["FIFO", "SCF"] = "FIFO"
    broadcast: Literal["replay", "simulate"] = "replay"
    """Chakra broadcast: ``replay`` waits the node's recorded duration (ASTRA-sim's way);
    ``simulate`` runs a real broadcast from the group's first member (collectives.rooted)."""
    roofline_enabled: bool = False
    peak_perf: float = 0.0  # FLOP/s (system JSON "peak-perf" TFLOP/s x 1e12)
    boost_mode: bool = False
    trace_enabled: bool = False
    replay_only: bool = False
    track_local_mem: bool = False
    local_mem_trace_filename: str = "local_mem_trace"
    shared_bus: SharedBusSpec = field(default_factory=SharedBusSpec)
    # ASTRA-sim's command-line knobs of its system layer (``Sys``'s constructor arguments;
    # ``trainsim run --comm-scale`` ..., or set here from Python): docs/astra-compat.md
    comm_scale: float = 1.0
    """Every communication size (collective, send, receive) x this, truncated to whole bytes
    (ASTRA-sim 1.0's ``--comm-scale``; applied to the graphs by ``system.api.simulate``)."""
    compute_scale: float = 1.0
    """Every compute node's time x this (whole ns, truncated, in compatibility mode; ASTRA-sim
    1.0's ``--compute-scale``; applied by the compute model, ``system.build.build_compute``)."""
    injection_scale: float = 1.0
    """The endpoint delay x this (ASTRA-sim's ``--injection-scale``: ``int(int(E) x scale)``;
    applied by the endpoint model, ``endpoint.astra``)."""
    rendezvous: bool = False
    """ASTRA-sim's ``--rendezvous-protocol``: before every message (of a collective, and every
    SEND / RECV node) the receiver sends the sender an ``RENDEZVOUS_BYTES`` control message
    when it posts the receive, and the data leaves only once that has arrived."""
    collective_tuner: Literal["nccl", "wafer"] | None = None
    """``nccl``: whole collectives of the types NCCL tunes are priced by NCCL's algorithm and
    protocol choice (``collectives/nccl_tuner.py``, docs/nccl.md) instead of running the
    implementation lists' phases; ``wafer``: all-reduce, reduce-scatter and all-gather priced by
    the wafer fabric's flow programs (``system/wafer_pricing.py``, docs/fred.md); default mode
    only (refused with ``compat: astra``)."""
    nccl: NcclSpec = field(default_factory=NcclSpec)
    """The tuner's inputs (``NcclSpec``), read when ``collective_tuner`` is ``nccl``."""
    queues_per_dim: int = 1
    """ASTRA-sim's ``--num-queues-per-dim``: dimension queues per network dimension; each runs
    ``ceil(active_chunks_per_dimension / queues_per_dim)`` chunks at once, and a chunk's phase
    takes the next queue of its dimension in turn (``system.queues``)."""
    source: str = field(default="", compare=False)


RENDEZVOUS_BYTES = 8192
"""Size of ASTRA-sim's rendezvous control message (``Sys::rendezvous_sim_send``), bytes."""


@dataclass(frozen=True)
class RemoteMemorySpec:
    """Remote / pooled / disaggregated memory (ASTRA-sim remote-memory JSON).

    Access time = latency + bytes / bandwidth; PER_NODE queues per node, MEMORY_POOL queues
    globally (astra-sim-semantics.md, "Memory").
    """

    mode: MemoryMode = "NO_MEMORY_EXPANSION"
    latency_ns: float = 0.0
    bandwidth: float = 0.0  # B/s
    npus_per_node: int = 1
    nodes: int = 1
    source: str = field(default="", compare=False)
    capacity: float = math.inf
    """Bytes: per NPU (PER_NPU), per node (PER_NODE) or in all (MEMORY_POOL); ``math.inf``: no
    limit, as ASTRA-sim's remote memory (it never checks)."""
    technology: str = "dram"
    """What backs the tier: ``dram`` (latency and bandwidth as given) or ``pcm`` (latency,
    bandwidth and, when ``capacity`` is unset, capacity from the PCM model of ``pcm``; resolved
    by ``memory.expansion.resolve_memory`` where the tier is built or priced)."""
    pcm: tuple[tuple[str, Any], ...] = ()
    """The PCM tier's parameters (the platform file's ``memory.pcm``) as sorted pairs."""

    def capacity_per_npu(self, npus: int) -> float:
        """The tier's bytes one of ``npus`` NPUs can hold when each holds the same."""
        if self.mode == "PER_NODE_MEMORY_EXPANSION":
            return self.capacity / max(1, self.npus_per_node)
        if self.mode == "MEMORY_POOL":
            return self.capacity / max(1, npus)
        return self.capacity


class EndpointSpec(Protocol):
    """The frozen parameters (SI units) of one endpoint model of ``trainsim.endpoint``: the
    platform file's ``endpoint:`` section after validation. ``model`` names its registry entry."""

    @property
    def model(self) -> str: ...


@dataclass(frozen=True)
class Platform:
    """Everything a simulation needs besides the workload. ``endpoint`` None: ASTRA-sim's
    endpoint model with its defaults (``endpoint.astra``), as for every ASTRA-sim input."""

    network: NetworkSpec
    system: SystemSpec = field(default_factory=SystemSpec)
    memory: RemoteMemorySpec = field(default_factory=RemoteMemorySpec)
    comm_groups: dict[str, tuple[int, ...]] = field(default_factory=dict)
    compat: Compat = "default"
    backend_options: dict[str, Any] = field(default_factory=dict)
    """Backend name -> its validated ``backends:`` section (``network/registry.py``)."""
    endpoint: EndpointSpec | None = None
    devices: dict[str, Any] = field(default_factory=dict)
    """Device name -> ``trainsim.compute.devices.DeviceSpec`` from the file's ``devices:``."""
