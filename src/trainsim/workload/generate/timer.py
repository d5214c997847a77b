"""The compute-time interface the generators use (DESIGN.md, workload layer).

The workload layer does not import the compute layer (they are siblings); a generator takes any
object with this shape, for example :class:`trainsim.compute.OperatorTimer`. Seconds and bytes.
"""

from __future__ import annotations

from typing import Protocol


class OpTimer(Protocol):
    """Prices one operator: ``op_time`` in seconds; ``memory_capacity`` in bytes per rank."""

    name: str
    memory_capacity: float

    def op_time(self, kind: str, flops: float, nbytes: float, shape: tuple[int, ...] = (), precision: str = "bf16") -> float: ...
