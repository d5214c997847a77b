"""The seam between the system layer and every network backend (DESIGN.md, network layer).

A backend moves ``nbytes`` from rank ``src`` to rank ``dst`` and calls ``on_arrival(arg)`` on
the shared event queue when the last byte has arrived. It charges nothing to the sender and
knows nothing of collectives. Times are the event kernel's ns, sizes bytes, rates B/ns.

:class:`NetworkBackend` states everything ``system/`` uses of a backend; :class:`Capabilities`
declares which of the system layer's shortcuts are exact on it. ``system/`` never names a
concrete backend: it reads the capabilities (``network/registry.py`` maps names to factories).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

if TYPE_CHECKING:
    from trainsim.engine import EventQueue
    from trainsim.network.injection import InjectionPorts
    from trainsim.topology import MultiDimTopology

PAIRWISE: Final = "pairwise"
"""Symmetry class: a message's delay depends only on its size and on where its two ends lie
relative to each other on the multi-dimensional topology (``MultiDimTopology.shape``: the
dimensions it crosses and the hops on each), and no message affects another. A representative rank
may then price the message its mirror peer sends it with ``delay_ns``, and equivalent groups
or data-parallel replicas never meet (``system/symmetry``, ``system/symmetry/replica.py``)."""

ONE_LINK: Final = "one_link"
"""Symmetry class: messages share links, but while every message of a representative rank
crosses exactly one link (which then carries only its source's traffic), or crosses a Switch
dimension as a star (its uplink, then the receiver's downlink; checked on the backend's
routes) to the one peer it has there, the representative's messages run exactly as on the
full network through a private :meth:`NetworkBackend.fork` holding its own links; the fork
must be idle when such a run starts (``carrying()`` False)."""

NO_SYMMETRY: Final = "none"
"""Symmetry class: every rank is simulated (no representative shortcut is exact)."""

SymmetryClass = Literal["pairwise", "one_link", "none"]


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend guarantees, so that ``system/`` can choose its exact fast paths.

    ``symmetry``: one of :data:`PAIRWISE`, :data:`ONE_LINK`, :data:`NO_SYMMETRY`.
    ``whole_ns_compat``: in ASTRA-sim compatibility mode every delay is a whole number of ns,
    so a phase's duration does not depend on when it starts (memoized phases are exact).
    ``in_switch``: the backend prices in-switch reduction hops (:meth:`NetworkBackend.switch_hop`).
    ``in_network``: the backend streams one flow over a set of links (``send_tree``): a
    reduction up a tree of switches and a multicast down it at one rate (FRED, docs/fred.md).
    """

    symmetry: SymmetryClass = NO_SYMMETRY
    whole_ns_compat: bool = False
    in_switch: bool = False
    in_network: bool = False

    def __post_init__(self) -> None:
        if self.symmetry not in (PAIRWISE, ONE_LINK, NO_SYMMETRY):
            raise ValueError(f"unknown symmetry class {self.symmetry!r}")


class NetworkBackend(Protocol):
    """Everything the system layer uses of a network backend."""

    queue: EventQueue
    compat_astra: bool

    @property
    def name(self) -> str:
        """The registry name, for messages."""
        ...

    @property
    def capabilities(self) -> Capabilities:
        """What the backend guarantees (class-wide; the registry entry declares the same)."""
        ...

    @property
    def topology(self) -> MultiDimTopology | None:
        """The multi-dimensional topology the ranks sit on, or None for a physical fabric."""
        ...

    bytes_sent: int
    messages_sent: int
    transfers: list[tuple[float, float, int, int]] | None
    """(start ns, end ns, dim, bytes) of every transmission when not None (utilization)."""

    def send(
        self, src: int, dst: int, nbytes: int, on_arrival: Callable[[Any], None], arg: Any = None
    ) -> None:
        """Start moving ``nbytes`` from ``src`` to ``dst``; ``on_arrival(arg)`` at arrival."""
        ...

    def delay_ns(self, src: int, dst: int, nbytes: int) -> float:
        """Uncontended transfer time of ``nbytes`` from ``src`` to ``dst`` in ns."""
        ...

    def dim_capacity(self) -> list[float]:
        """Injection capacity of each network dimension, B/ns (for utilization)."""
        ...

    def fork(self, queue: EventQueue) -> NetworkBackend:
        """A private backend of the same kind and parameters on ``queue``, with no traffic:
        a representative's run on its own clock."""
        ...

    def carrying(self) -> bool:
        """Whether traffic now on the network could share a link with a new message."""
        ...

    def route(self, src: int, dst: int) -> tuple[int, ...]:
        """The ids of the links a message from ``src`` to ``dst`` crosses, in order (what the
        :data:`ONE_LINK` class checks; empty for a backend that models no links)."""
        ...

    def injection_ports(self) -> InjectionPorts | None:
        """A fresh per-rank injection model for the collective engine (a rank's messages
        serialized on its first link), or None when the backend models injection itself."""
        ...

    def switch_hop(self, dim: int, nbytes: int, wait: float = 0.0, *, streamed: int = 0) -> float:
        """Delay (ns) of ``nbytes`` between a rank and dimension ``dim``'s switch, sent
        ``wait`` ns from now (``capabilities.in_switch`` backends only)."""
        ...

    def counters(self) -> dict[str, Any] | None:
        """The backend's own statistics of the run so far (JSON-ready, bounded in size; e.g.
        queue depths, pause times, per-flow rates), carried in the result as
        ``network_counters``; None when the backend keeps none."""
        ...
