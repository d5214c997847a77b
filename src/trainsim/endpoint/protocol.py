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

from typing import Protocol


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
