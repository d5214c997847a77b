"""Checking an allocation by simulation: the bandwidths as a network, the workload as graphs.

The optimizer's time model is LIBRA's closed form (:mod:`~trainsim.optimize.traffic`); this
module runs the same step through trainsim's simulator at two allocations (usually the optimum
and the equal split) so the predicted speed-up can be put beside the simulated one.

How LIBRA's quantities become a simulated platform:

- **Workload.** A text workload with its communicator becomes one graph per rank that follows
  LIBRA's ``no_overlap`` training loop: every layer's forward compute then its forward
  collective, then, from the last layer back, input-gradient compute and collective,
  weight-gradient compute and collective; each node depends on the previous one. A collective's
  ``involved_dim`` marks the dimensions its communicator uses; a group must span its whole
  dimension (LIBRA's files all do), since a narrower one needs communicator-group files.
- **Network.** ``B_d`` is what one NPU injects on dimension ``d``. The link bandwidth given to
  the simulator is chosen so that the collective algorithm run on that dimension drives exactly
  ``B_d`` per NPU, as LIBRA's model assumes: FullyConnected runs ``direct`` over its ``n - 1``
  links at once, so a link gets ``B_d / (n - 1)`` (the same split as LIBRA's cost model); Ring
  and Switch run ``ring``, which sends on one link at a time, so that link gets ``B_d``. (LIBRA's
  cost model prices a Ring NPU as two links of ``B_d / 2``; ASTRA-sim's ring algorithm sends one
  way only, and would see half of ``B_d``.) Latency is 0 unless asked, as LIBRA ignores it.
- **System.** ``localBWAware`` all-reduce (reduce-scatter up the dimensions, all-gather down:
  the per-dimension bytes of LIBRA's model) and ``chunks`` chunks per collective, so that the
  dimensions pipeline and the collective approaches LIBRA's ``max_d`` time.

What remains between model and simulation (measured on ResNet-50, docs/libra.md): the
reductions, which the simulator charges at the local-memory bandwidth (1600 GB/s by default)
and LIBRA does not model (about +5% of the step at these sizes; with ``reduction_bandwidth``
very large the equal split simulates to within 1e-6 of the model), and the pipeline's fill and
drain, ``(sum_d t_d - max_d t_d) / chunks`` per collective, which is largest at LIBRA's optimum
because there every dimension is equally busy. Both slow the optimum a little more than the
equal split, so the simulated speed-up is slightly below the predicted one.

Units: bandwidths in GB/s (1e9 B/s) unless a name says otherwise; the ASTRA-sim network YAML
written by :func:`write_astra_network` uses ASTRA-sim's "GB/s" (2**30 B/s) per link.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainsim.config.types import CollectiveImpl, DimSpec, NetworkSpec, Platform, SystemSpec
from trainsim.enums import NodeType
from trainsim.errors import ConfigError, TrainsimError
from trainsim.optimize.libra_inputs import Communicator, LibraNetwork
from trainsim.optimize.traffic import GBPS, phase_comm
from trainsim.units import ASTRA_GBPS
from trainsim.workload.astra_text import PHASES, TextLayer
from trainsim.workload.graph import GraphBuilder, WorkloadGraph

RUNTIME_MODULE = "trainsim.system.collective_runtime"


def simulation_link_share(kind: str, size: int) -> float:
    """Link bandwidth / ``B_d`` that lets the dimension's algorithm inject ``B_d`` per NPU."""
    return 1.0 / (size - 1) if kind == "FullyConnected" else 1.0


def simulation_network(network: LibraNetwork, bandwidths_gbps: Sequence[float] | np.ndarray, *,
                       latency_ns: float = 0.0) -> NetworkSpec:
    """A trainsim network whose dimensions give each NPU ``B_d`` GB/s under the algorithms of
    :func:`simulation_system`."""
    bw = np.asarray(bandwidths_gbps, dtype=float)
    if bw.shape != (network.ndims,):
        raise ConfigError(f"{bw.shape[0]} bandwidths for {network.ndims} dimensions", field="bandwidths")
    dims = []
    for d, (kind, size) in enumerate(zip(network.kinds, network.sizes, strict=True)):
        if not bw[d] > 0:
            raise ConfigError(f"B{d} = {bw[d]} GB/s cannot be simulated; every dimension needs bandwidth", field=f"B{d}")
        dims.append(DimSpec(kind, size, float(bw[d]) * GBPS * simulation_link_share(kind, size), latency_ns))  # type: ignore[arg-type]
    return NetworkSpec(tuple(dims), source=f"optimized bandwidths {np.round(bw, 3).tolist()} GB/s")


def simulation_system(network: LibraNetwork, *, chunks: int = 16, reduction_bandwidth: float | None = None) -> SystemSpec:
    """localBWAware, ``chunks`` chunks, ``direct`` on FullyConnected and ``ring`` elsewhere;
    ``reduction_bandwidth`` (B/s) replaces the system's local-memory bandwidth, which prices
    the reductions (``None``: the default, 1600 GB/s)."""
    algos = tuple("direct" if kind == "FullyConnected" else "ring" for kind in network.kinds)
    extra = {} if reduction_bandwidth is None else {"local_mem_bw": float(reduction_bandwidth)}
    return SystemSpec(
        **extra,  # type: ignore[arg-type]
        collective_optimization="localBWAware",
        preferred_dataset_splits=chunks,
        active_chunks_per_dimension=1,
        endpoint_delay_ns=0.0,
        implementations=CollectiveImpl(algos, algos, algos, algos),
    )


def write_astra_network(path: str | Path, spec: NetworkSpec) -> None:
    """An ASTRA-sim network YAML (``bandwidth`` per link in ASTRA-sim's GB/s, 2**30 B/s)."""
    def flow(items: Sequence[object]) -> str:
        return "[ " + ", ".join(str(i) for i in items) + " ]"

    text = (
        f"# {spec.source}\n"
        f"topology: {flow([d.kind for d in spec.dims])}\n"
        f"npus_count: {flow([d.size for d in spec.dims])}\n"
        f"bandwidth: {flow([repr(d.bandwidth / ASTRA_GBPS) for d in spec.dims])}  # GB/s = 2**30 B/s per link\n"
        f"latency: {flow([repr(d.latency_ns) for d in spec.dims])}  # ns\n"
    )
    Path(path).write_text(text)


def libra_graphs(layers: Sequence[TextLayer], communicator: Communicator, network: LibraNetwork) -> list[WorkloadGraph]:
    """One graph per rank (all ranks share one set of arrays) following LIBRA's no-overlap loop."""
    builder = GraphBuilder(source=communicator.source or "libra workload", rank=0)
    involved = []
    for k in range(3):
        groups = communicator.phase(k)
        for d, g in enumerate(groups):
            if g is not None and g not in (1, network.sizes[d]):
                raise ConfigError(
                    f"group size {g} on dimension {d} is not the whole dimension ({network.sizes[d]}); "
                    "simulating it needs communicator-group files",
                    file=communicator.source or None,
                )
        involved.append(tuple(g is not None and g > 1 for g in groups))
    order = [(layer, 0) for layer in layers] + [(layer, k) for layer in reversed(layers) for k in (1, 2)]
    prev: list[int] = []
    nid = 0
    for layer, k in order:
        phase = layer.phase(PHASES[k])
        if phase.cycles > 0:  # ASTRA-sim 1.0 cycles are ns
            builder.add(nid, NodeType.COMP_NODE, f"{layer.name}.{k}.compute", duration_s=phase.cycles * 1e-9, data_deps=prev)
            prev, nid = [nid], nid + 1
        comm = phase_comm(layer, k)
        if comm is not None and any(involved[k]):
            builder.add(nid, NodeType.COMM_COLL_NODE, f"{layer.name}.{k}.{comm.name}", comm_type=int(comm),
                        comm_size=phase.nbytes, involved_dim=involved[k], data_deps=prev)
            prev, nid = [nid], nid + 1
    graph = builder.build()
    return [dataclasses.replace(graph, rank=r) for r in range(network.npus)]


def has_collective_runtime() -> bool:
    return importlib.util.find_spec(RUNTIME_MODULE) is not None


def simulate_allocation(network: LibraNetwork, bandwidths_gbps: Sequence[float] | np.ndarray,
                        graphs: Sequence[WorkloadGraph], *, chunks: int = 16, latency_ns: float = 0.0,
                        reduction_bandwidth: float | None = None) -> float:
    """Simulated step time (s, the makespan) of ``graphs`` at the given bandwidths."""
    from trainsim.system.api import simulate

    needs_runtime = any(bool(np.any(g.types == NodeType.COMM_COLL_NODE)) for g in graphs[:1])
    if needs_runtime and not has_collective_runtime():
        raise TrainsimError(
            f"simulating collectives needs the collective runtime ({RUNTIME_MODULE}), which this build lacks",
            hint="the model's prediction stands alone until the collectives land",
        )
    platform = Platform(network=simulation_network(network, bandwidths_gbps, latency_ns=latency_ns),
                        system=simulation_system(network, chunks=chunks, reduction_bandwidth=reduction_bandwidth))
    return simulate(platform, graphs).makespan_s


@dataclass(frozen=True)
class Verification:
    """Model and simulation side by side at two allocations (seconds)."""

    bandwidths_gbps: tuple[float, ...]
    baseline_gbps: tuple[float, ...]
    model_time_s: float
    model_baseline_s: float
    sim_time_s: float
    sim_baseline_s: float

    @property
    def model_speedup(self) -> float:
        return self.model_baseline_s / self.model_time_s

    @property
    def sim_speedup(self) -> float:
        return self.sim_baseline_s / self.sim_time_s

    @property
    def speedup_error(self) -> float:
        """Relative difference of the simulated speed-up from the predicted one."""
        return self.sim_speedup / self.model_speedup - 1.0


def verify_allocation(network: LibraNetwork, layers: Sequence[TextLayer], communicator: Communicator,
                      bandwidths_gbps: Sequence[float] | np.ndarray, baseline_gbps: Sequence[float] | np.ndarray,
                      *, chunks: int = 16, latency_ns: float = 0.0, pipelined: bool = True,
                      reduction_bandwidth: float | None = None) -> Verification:
    """Simulate a LIBRA text workload at ``bandwidths_gbps`` and ``baseline_gbps``."""
    from trainsim.optimize.traffic import traffic_from_text

    traffic = traffic_from_text(layers, communicator, network, pipelined=pipelined)
    graphs = libra_graphs(layers, communicator, network)
    return Verification(
        tuple(float(b) for b in bandwidths_gbps), tuple(float(b) for b in baseline_gbps),
        traffic.time_s(bandwidths_gbps), traffic.time_s(baseline_gbps),
        simulate_allocation(network, bandwidths_gbps, graphs, chunks=chunks, latency_ns=latency_ns,
                            reduction_bandwidth=reduction_bandwidth),
        simulate_allocation(network, baseline_gbps, graphs, chunks=chunks, latency_ns=latency_ns,
                            reduction_bandwidth=reduction_bandwidth),
    )
