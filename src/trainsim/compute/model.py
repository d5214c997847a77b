"""The compute seam: how long a compute node takes on its rank (DESIGN.md, "Layers": compute,
behind a protocol the executor is handed; built by ``system.build.build_compute``).

:class:`ComputeModel` answers one question per compute node, from the node's columns of the
workload graph (:class:`ComputeNodes`: replay duration, FLOP, bytes touched). Implementations:

- :class:`ReplayCompute`: the duration the graph recorded. In compatibility mode ASTRA-sim's
  arithmetic: ``round(duration_s x 1e9)`` ns, and a zero duration takes 1 ns;
- :class:`RooflineCompute` (the system file's ``roofline_enabled``): the roofline
  (``roofline.roofline_time_ns``, whole ns in compatibility mode) for GPU nodes; CPU nodes
  replay their duration as above;
- :class:`ScaledCompute`: another model's times x a factor (ASTRA-sim 1.0's
  ``--compute-scale``, which multiplied each layer's compute cycles and stored the product as a
  whole number of cycles: truncated to whole ns in compatibility mode).

Units: seconds and FLOP in the graph, FLOP/s and B/s for the device; results in ns.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Protocol

from trainsim.compute.roofline import roofline_time_ns

if TYPE_CHECKING:
    from numpy.typing import NDArray


class ComputeNodes(Protocol):
    """The columns of a workload graph a compute model reads, indexed by node position."""

    @property
    def duration_s(self) -> NDArray[Any]: ...  # float64, replay duration (s)

    @property
    def num_ops(self) -> NDArray[Any]: ...  # float64 FLOP (0 when absent)

    @property
    def tensor_size(self) -> NDArray[Any]: ...  # int64 bytes touched (0 when absent)


class ComputeModel(Protocol):
    """The duration of a compute node (module docstring)."""

    def node_ns(self, graph: ComputeNodes, pos: int, cpu: bool) -> float:
        """Time (ns) of the compute node at position ``pos`` of ``graph``; ``cpu``: it runs on
        the host CPU rather than the accelerator."""
        ...

    def replay_ns(self, duration_s: float) -> float:
        """Time (ns) of a node replayed from its recorded duration (a replayed broadcast)."""
        ...

    def node_bounds(self, graph: ComputeNodes, pos: int, cpu: bool) -> tuple[float, float]:
        """(compute-bound ns, memory-bound ns) of the node on all of the device's units and
        all of its HBM bandwidth; its time is the larger. An endpoint model that takes units
        or HBM from compute re-rates a kernel given fractions (u, h) of them to
        ``max(compute / u, memory / h)`` (``system/executor.py``)."""
        ...


def replay_ns(duration_s: float, *, compat_astra: bool) -> float:
    """A replayed node's time in ns (a compute node, a replayed broadcast): its recorded
    duration; in compatibility mode ASTRA-sim's ``duration_micros x 1000`` ns, and 1 ns for a
    zero duration (``Workload::issue_replay``, the BROADCAST branch of ``issue_coll_comm``)."""
    if compat_astra:
        return float(round(duration_s * 1e9)) or 1.0
    return duration_s * 1e9


class ReplayCompute:
    """Every node takes the duration its graph recorded (module docstring)."""

    __slots__ = ("compat_astra",)

    def __init__(self, *, compat_astra: bool) -> None:
        self.compat_astra = compat_astra

    def node_ns(self, graph: ComputeNodes, pos: int, cpu: bool) -> float:
        return replay_ns(float(graph.duration_s[pos]), compat_astra=self.compat_astra)

    def replay_ns(self, duration_s: float) -> float:
        return replay_ns(duration_s, compat_astra=self.compat_astra)

    def node_bounds(self, graph: ComputeNodes, pos: int, cpu: bool) -> tuple[float, float]:
        """A replayed kernel's bound is not known: it counts as compute-bound (slowed by the
        units it loses, not by HBM bandwidth)."""
        return self.node_ns(graph, pos, cpu), 0.0


class RooflineCompute(ReplayCompute):
    """Accelerator nodes by the roofline on a device of ``peak_flops`` FLOP/s and ``mem_bw`` B/s
    of local memory; CPU nodes replayed (module docstring)."""

    __slots__ = ("peak_flops", "mem_bw")

    def __init__(self, peak_flops: float, mem_bw: float, *, compat_astra: bool) -> None:
        super().__init__(compat_astra=compat_astra)
        self.peak_flops = peak_flops
        self.mem_bw = mem_bw

    def node_ns(self, graph: ComputeNodes, pos: int, cpu: bool) -> float:
        if cpu:
            return super().node_ns(graph, pos, cpu)
        return roofline_time_ns(
            float(graph.num_ops[pos]),
            float(graph.tensor_size[pos]),
            self.peak_flops,
            self.mem_bw,
            compat_astra=self.compat_astra,
        )

    def node_bounds(self, graph: ComputeNodes, pos: int, cpu: bool) -> tuple[float, float]:
        """FLOP / peak and bytes / HBM bandwidth (the two roofs); CPU nodes replay."""
        if cpu:
            return super().node_bounds(graph, pos, cpu)
        flops = float(graph.num_ops[pos])
        if flops <= 0:
            return 0.0, 0.0
        return flops / self.peak_flops * 1e9, float(graph.tensor_size[pos]) / self.mem_bw * 1e9


class ScaledCompute:
    """``inner``'s time x ``scale``, truncated to whole ns when ``compat_astra`` (module
    docstring)."""

    __slots__ = ("inner", "scale", "compat_astra", "_inner_ns")

    def __init__(self, inner: ComputeModel, scale: float, *, compat_astra: bool) -> None:
        self.inner = inner
        self.scale = float(scale)
        self.compat_astra = compat_astra
        self._inner_ns = inner.node_ns

    def node_ns(self, graph: ComputeNodes, pos: int, cpu: bool) -> float:
        ns = self._inner_ns(graph, pos, cpu) * self.scale
        return float(math.trunc(ns)) if self.compat_astra else ns

    def replay_ns(self, duration_s: float) -> float:
        """A replayed broadcast is communication: the compute scale leaves it alone."""
        return self.inner.replay_ns(duration_s)

    def node_bounds(self, graph: ComputeNodes, pos: int, cpu: bool) -> tuple[float, float]:
        compute, memory = self.inner.node_bounds(graph, pos, cpu)
        return compute * self.scale, memory * self.scale
