"""Compute kernels re-rated while collectives share the rank's resources (system layer, beside
the executor that hands it its GPU compute nodes; used only with an endpoint model that is not
time invariant: ``endpoint.protocol.SharedResources``).

A kernel has two roofs on the whole device (``ComputeModel.node_bounds``): C ns bound by
compute units, M ns bound by HBM bandwidth. Given fractions (u, h) of the units and of the HBM
bandwidth (``SharedResources.compute_share``), it runs at the rate of a kernel of duration
``D(u, h) = max(C / u, M / h)``: a memory-bound kernel gets the HBM bandwidth the collectives
leave, a compute-bound one the units they leave. The share is piecewise constant; the endpoint
calls :meth:`SharedCompute.rerate` at every tick it changes, and the kernel in flight (one per
rank: the GPU compute slot) keeps the fraction of its work done so far and finishes the rest at
the new rate: with fraction ``w`` left at t, it ends at ``t + w x D(u, h)``.

Per rank it records the HBM bytes compute moved over time (each stretch of a kernel at one
rate: its share of the kernel's bytes) and the kernels' time alone and as run, for
:class:`RankResources` in the run's result. Times in ns, sizes in bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trainsim.compute import ComputeModel
from trainsim.endpoint.protocol import SharedResources
from trainsim.engine import EventQueue


@dataclass(slots=True)
class RankResources:
    """One rank's use of its HBM and compute units, in a run with a resource-sharing endpoint:
    ``compute_hbm`` / ``comm_hbm``: (start ns, end ns, bytes) moved through HBM by compute
    kernels / by collectives; ``compute_alone_ns``: the kernels' time on the whole device,
    ``compute_ns``: their time as run; ``network_bytes``: bytes the rank's collectives sent."""

    rank: int
    compute_hbm: list[tuple[float, float, float]] = field(default_factory=list)
    comm_hbm: list[tuple[float, float, float]] = field(default_factory=list)
    compute_alone_ns: float = 0.0
    compute_ns: float = 0.0
    network_bytes: float = 0.0
    comm_hbm_bytes: float = 0.0

    @property
    def compute_slowdown(self) -> float:
        """Kernels' time as run over their time alone (1: no slowdown)."""
        return self.compute_ns / self.compute_alone_ns if self.compute_alone_ns > 0 else 1.0

    @property
    def hbm_per_network_byte(self) -> float:
        """HBM bytes the collectives moved per byte they sent."""
        return self.comm_hbm_bytes / self.network_bytes if self.network_bytes > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "compute_slowdown": self.compute_slowdown,
            "compute_alone_s": self.compute_alone_ns * 1e-9,
            "compute_s": self.compute_ns * 1e-9,
            "network_bytes": self.network_bytes,
            "comm_hbm_bytes": self.comm_hbm_bytes,
            "compute_hbm_bytes": sum(b for _s, _e, b in self.compute_hbm),
            "hbm_per_network_byte": self.hbm_per_network_byte,
        }


class _Kernel:
    __slots__ = (
        "token",
        "compute_ns",
        "memory_ns",
        "nbytes",
        "left",
        "since",
        "dur",
        "share",
        "version",
        "start",
    )

    def __init__(
        self, token: Any, compute_ns: float, memory_ns: float, nbytes: float, now: float
    ) -> None:
        self.token = token
        self.compute_ns = compute_ns
        self.memory_ns = memory_ns
        self.nbytes = nbytes
        self.left = 1.0  # fraction of the work still to do
        self.since = now  # when ``left`` was last brought up to date
        self.dur = 0.0  # D(u, h) at the current share
        self.share = (1.0, 1.0)
        self.version = 0
        self.start = now


def rated_ns(compute_ns: float, memory_ns: float, share: tuple[float, float]) -> float:
    """``max(C / u, M / h)`` (module docstring)."""
    units, hbm = share
    return max(compute_ns / units if compute_ns else 0.0, memory_ns / hbm if memory_ns else 0.0)


class SharedCompute:
    """Runs a rank's GPU compute kernels under a resource-sharing endpoint (module docstring).
    ``complete(token)`` is the executor's completion of a node."""

    def __init__(
        self,
        endpoint: SharedResources,
        compute: ComputeModel,
        queue: EventQueue,
        complete: Callable[[Any], None],
    ) -> None:
        self.endpoint = endpoint
        self.queue = queue
        self.complete = complete
        self._bounds = compute.node_bounds
        self._kernels: dict[int, _Kernel] = {}
        self.ranks: dict[int, RankResources] = {}
        endpoint.attach(queue, self.rerate)

    def resources(self, rank: int) -> RankResources:
        res = self.ranks.get(rank)
        if res is None:
            res = self.ranks[rank] = RankResources(rank)
        return res

    def start(self, rank: int, graph: Any, pos: int, token: Any) -> None:
        """Start the GPU compute node ``pos`` of ``graph`` on ``rank``; ``complete(token)`` at
        its end."""
        compute_ns, memory_ns = self._bounds(graph, pos, False)
        now = self.queue.now
        kernel = _Kernel(token, compute_ns, memory_ns, float(graph.tensor_size[pos]), now)
        self._kernels[rank] = kernel
        self.resources(rank).compute_alone_ns += max(compute_ns, memory_ns)
        self._schedule(rank, kernel, self.endpoint.compute_share(rank, now))

    def _schedule(self, rank: int, kernel: _Kernel, share: tuple[float, float]) -> None:
        kernel.share = share
        kernel.dur = rated_ns(kernel.compute_ns, kernel.memory_ns, share)
        kernel.version += 1
        self.queue.schedule(kernel.left * kernel.dur, self._done, (rank, kernel, kernel.version))

    def rerate(self, rank: int) -> None:
        """The endpoint changed ``rank``'s compute share: re-rate its kernel in flight."""
        kernel = self._kernels.get(rank)
        if kernel is None:
            return
        now = self.queue.now
        share = self.endpoint.compute_share(rank, now)
        if share == kernel.share:
            return
        self._advance(rank, kernel, now)
        self._schedule(rank, kernel, share)

    def _advance(self, rank: int, kernel: _Kernel, now: float) -> None:
        """Bring the kernel's work left up to ``now`` and log its HBM bytes since."""
        if kernel.dur > 0 and now > kernel.since:
            done = min(kernel.left, (now - kernel.since) / kernel.dur)
            kernel.left -= done
            if kernel.nbytes:
                self.resources(rank).compute_hbm.append((kernel.since, now, done * kernel.nbytes))
        kernel.since = now

    def _done(self, item: tuple[int, _Kernel, int]) -> None:
        rank, kernel, version = item
        if version != kernel.version:
            return  # re-rated since: a later event ends it
        now = self.queue.now
        self._advance(rank, kernel, now)
        del self._kernels[rank]
        self.resources(rank).compute_ns += now - kernel.start
        self.complete(kernel.token)

    def results(self) -> list[RankResources]:
        """Every rank's resources, with the endpoint's logs of its collectives."""
        for rank, usage in self.endpoint.usage().items():
            res = self.resources(rank)
            res.comm_hbm = usage.hbm
            res.network_bytes = usage.network_bytes
            res.comm_hbm_bytes = usage.hbm_bytes
        return [self.ranks[r] for r in sorted(self.ranks)]
