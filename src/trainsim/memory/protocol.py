"""The memory seam: what the executor asks of remote / pooled / disaggregated / expanded memory
(DESIGN.md, "Layers": memory as tiers behind one protocol that the executor is handed).

The executor runs a workload's MEM_LOAD / MEM_STORE nodes by calling :meth:`MemoryModel.access`
and continues when it calls back; a model with no tier (:attr:`MemoryModel.enabled` false)
makes such a node an error. Each tier is also described as data (:class:`MemoryTier`: latency,
bandwidth, capacity) for reports and for models above that price a tier without running it.
Implementations: ``memory.remote.RemoteMemory`` (ASTRA-sim's four modes). Times in ns (the
kernel's clock), bandwidth in B/s, sizes and capacities in bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

Done = Callable[[Any], None]


@dataclass(frozen=True, slots=True)
class MemoryTier:
    """One memory tier as data: access latency (ns), the bandwidth an access sees (B/s) and the
    capacity (bytes; ``math.inf`` where the model sets no limit)."""

    name: str
    latency_ns: float
    bandwidth: float
    capacity: float


class MemoryModel(Protocol):
    """The memory behind a rank's load and store nodes (module docstring)."""

    @property
    def enabled(self) -> bool:
        """Whether load and store nodes can run at all."""
        ...

    @property
    def tiers(self) -> tuple[MemoryTier, ...]:
        """The tiers, nearest first (none when not :attr:`enabled`)."""
        ...

    def access(self, rank: int, nbytes: int, on_done: Done, arg: Any = None) -> None:
        """Start (or queue) one access of ``nbytes`` by ``rank``; ``on_done(arg)`` runs on the
        event kernel when it completes."""
        ...
