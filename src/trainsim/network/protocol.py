"""The interface every network backend implements (DESIGN.md, network layer).

A backend moves ``nbytes`` from rank ``src`` to rank ``dst`` and calls ``on_arrival(arg)`` on
the shared event queue when the last byte has arrived. It charges nothing to the sender and
knows nothing of collectives. Times are the event kernel's ns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from trainsim.engine import EventQueue


class NetworkBackend(Protocol):
    queue: EventQueue

    def send(
        self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any = None
    ) -> None:
        """Start moving ``nbytes`` from ``src`` to ``dst``; ``on_arrival(arg)`` at arrival."""
        ...

    def delay_ns(self, src: int, dst: int, nbytes: int) -> float:
        """Uncontended transfer time of ``nbytes`` from ``src`` to ``dst`` in ns."""
        ...
