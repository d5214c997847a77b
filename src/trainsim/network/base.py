"""Defaults shared by network backends (DESIGN.md, network layer): the parts of
:class:`~trainsim.network.protocol.NetworkBackend` that most backends answer the same way.

A backend subclasses :class:`BackendBase` and overrides what it models: ``send`` and
``delay_ns`` always; ``fork`` when it declares a symmetry class; ``carrying`` when traffic in
flight can share links with a new message; ``switch_hop`` when it prices in-switch reduction.
Times in ns, sizes in bytes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from trainsim.errors import ConfigError
from trainsim.network.protocol import Capabilities

if TYPE_CHECKING:
    from trainsim.engine import EventQueue
    from trainsim.network.injection import InjectionPorts
    from trainsim.network.protocol import NetworkBackend
    from trainsim.topology import MultiDimTopology


class BackendBase(ABC):
    """Counters and the conservative answers to the protocol's optional questions."""

    capabilities = Capabilities()
    name = ""  # the registry name, for messages

    queue: EventQueue
    compat_astra: bool
    topology: MultiDimTopology | None = None

    def __init__(self, queue: EventQueue, *, compat_astra: bool) -> None:
        self.queue = queue
        self.compat_astra = compat_astra
        self.bytes_sent = 0
        self.messages_sent = 0
        self.transfers: list[tuple[float, float, int, int]] | None = None

    @abstractmethod
    def send(
        self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any = None
    ) -> None:
        """Start moving ``nbytes`` from ``src`` to ``dst``; ``on_arrival(arg)`` at arrival."""

    @abstractmethod
    def delay_ns(self, src: int, dst: int, nbytes: int) -> float:
        """Uncontended transfer time of ``nbytes`` from ``src`` to ``dst`` in ns."""

    def dim_capacity(self) -> list[float]:
        return []

    def fork(self, queue: EventQueue) -> NetworkBackend:
        """Only backends that declare a symmetry class are forked (``system/symmetry``)."""
        raise TypeError(f"{type(self).__name__} declares no symmetry class and cannot fork")

    def carrying(self) -> bool:
        return False

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        """No links modelled: the ``one_link`` symmetry class needs a real route."""
        return ()

    def injection_ports(self) -> InjectionPorts | None:
        return None

    def counters(self) -> dict[str, Any] | None:
        return None

    def switch_hop(self, dim: int, nbytes: int, wait: float = 0.0, *, streamed: int = 0) -> float:
        raise ConfigError(
            f"inSwitch needs a network backend that prices in-switch reduction; "
            f"{self.name or type(self).__name__!r} does not",
            hint="use ring or direct on this backend, or the congestion_unaware backend",
        )
