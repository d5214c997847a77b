"""The endpoint seam: what a collective costs the rank that runs it (DESIGN.md, "Layers": the
endpoint is a model behind its own seam, beside ``memory`` and ``compute``, below ``system``).

Every collective algorithm advances by "insertions" (astra-sim-semantics.md B1): an insertion
sends one message and waits for its *bundle* before the algorithm may go on. The collective
engine (``system/collective_engine.Engine.bundle``) prices a bundle with the two questions of
:class:`EndpointModel`, charged back to back:

- :meth:`~EndpointModel.insertion_ns`: the endpoint delay (ASTRA-sim's E on the normal path, or
  a communicator group's "Fast" path);
- :meth:`~EndpointModel.reduction_ns`: when the insertion reduces data, the time to reduce
  ``nbytes`` (B2), starting when the delay ends.

Both receive the rank and the time the part starts (the kernel's ns), so a model whose costs
depend on what else the rank does at that moment - ACE's collective-offload engine sharing HBM
bandwidth and compute units with the rank's compute - can price them; ASTRA-sim's model
(``endpoint.astra``) ignores both. Times in ns, sizes in bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol


class EndpointModel(Protocol):
    """The cost of an insertion's bundle to the rank that runs it (module docstring)."""

    @property
    def time_invariant(self) -> bool:
        """True when neither the rank nor the time changes a cost (and no call changes a later
        one): a phase then takes as long whenever it starts, so the symmetric runner may
        memoize phases (``system/symmetry/collective.py``)."""
        ...

    def insertion_ns(self, rank: int, now_ns: float, fast: bool) -> float:
        """The delay (ns) of one insertion by ``rank`` at ``now_ns``; ``fast``: the insertion
        is on a communicator group's "Fast" path instead of the normal one."""
        ...

    def reduction_ns(self, rank: int, now_ns: float, nbytes: int) -> float:
        """The time (ns) ``rank`` takes to reduce ``nbytes`` bytes, starting at ``now_ns``."""
        ...


class SharedResources(Protocol):
    """What an endpoint model that is *not* time invariant answers besides
    :class:`EndpointModel`: a model whose collectives share the rank's HBM bandwidth and compute
    units with its compute kernels (``endpoint.shared``, ``endpoint.ace``). The collective
    engine tells it when a rank's collective work starts and stops and asks it when data may
    move; the executor asks it what share of the rank's units and HBM bandwidth a compute kernel
    gets now and is called back when that share changes (``attach``). ``system/`` calls these
    only when ``time_invariant`` is False, so ASTRA-sim's model never sees them. Absolute times
    in ns (the event kernel's clock), sizes in bytes, fractions in [0, 1]."""

    def attach(self, queue: Any, on_change: Callable[[int], None]) -> None:
        """Bind the run's event queue (``engine.EventQueue``) and the executor's callback
        ``on_change(rank)``, called at the tick a rank's compute share changes."""
        ...

    def collective_active(self, rank: int, now_ns: float, active: bool) -> None:
        """``rank`` has collective chunks in flight from ``now_ns`` (``active``) or none."""
        ...

    def chunk_begin_ns(self, rank: int, now_ns: float, nbytes: int, parts: int) -> float:
        """A chunk of ``nbytes`` starts its first phase, among ``parts`` members, on ``rank``:
        the time its data is there to send (ACE: once its engine has read the first message's
        share, about ``nbytes / parts``, from HBM); the chunk's messages arrive no earlier."""
        ...

    def send_ready_ns(self, rank: int, now_ns: float, nbytes: int) -> float:
        """A message of ``nbytes`` leaves ``rank``: the time the endpoint has fed it to the
        network; it arrives no earlier (the network is driven only as fast as the endpoint
        feeds it)."""
        ...

    def chunk_end_ns(
        self, rank: int, now_ns: float, in_bytes: int, out_bytes: int, parts: int
    ) -> float:
        """A chunk that began with ``in_bytes`` ends its last phase, among ``parts`` members,
        with ``out_bytes`` on ``rank``: the time it is done (ACE: once the last message's share
        of its result is written to HBM)."""
        ...

    def compute_share(self, rank: int, now_ns: float) -> tuple[float, float]:
        """(fraction of compute units, fraction of HBM bandwidth) a compute kernel of ``rank``
        gets at ``now_ns``."""
        ...

    def max_chunk_bytes(self) -> int | None:
        """The largest chunk the endpoint holds at once (ACE's SRAM share), or None: the
        planner splits a collective into more chunks so none is larger."""
        ...

    def may_begin(self, rank: int, now_ns: float, nbytes: int) -> bool:
        """Whether a chunk of ``nbytes`` may begin on ``rank`` at ``now_ns`` (ACE with ``split``: it
        fits in the SRAM beside the chunks resident there, or none is). A chunk that may not
        waits in its first queue without taking its place; the collective engine asks again
        whenever one of the rank's chunks is done."""
        ...

    def usage(self) -> dict[int, Any]:
        """Per rank, what the endpoint's collectives used (``endpoint.resource.CommUsage``)."""
        ...
