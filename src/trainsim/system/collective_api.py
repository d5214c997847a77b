"""The seam between the graph executor and the collective runtime (DESIGN.md, system layer).

The executor hands every COMM_COLL node to a :class:`CollectiveRuntime` as a
:class:`CollectiveRequest`; the runtime pairs the requests of the ranks of one communicator
group in the order each rank issues them (ASTRA-sim's stream counter, chakra-format.md §1.7),
cuts them into chunks, runs the per-dimension algorithms over the network backend, and calls
``on_done(arg)`` for each rank when that rank's part of the collective is finished. Ranks may
finish at different times (e.g. double binary tree roles).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(slots=True)
class CollectiveRequest:
    """One rank's COMM_COLL node. ``size`` is bytes as in Chakra's ``comm_size`` (for
    all-gather the per-rank input, for the others the whole buffer). Not to be changed once
    issued (not frozen: a frozen dataclass costs several times as much to make, and the
    executor makes one per collective node)."""

    rank: int
    node_id: int
    comm_type: int  # trainsim.enums.CommType
    size: int  # bytes
    group: (
        tuple[int, ...] | None
    )  # member ranks in the order the comm-group file lists them; None = all
    group_name: str  # pg_name as read ("" = all ranks)
    involved_dims: tuple[bool, ...] | None  # None = every dimension
    priority: int = 0
    duration_ns: float = 0.0  # replay time (BROADCAST is replayed as ASTRA-sim does)
    name: str = ""


class CollectiveRuntime(Protocol):
    def issue(
        self, request: CollectiveRequest, on_done: Callable[[Any], None], arg: Any = None
    ) -> None:
        """Start (or queue until its peers arrive) one rank's collective."""
        ...

    def pending(self) -> list[tuple[int, int, str]]:
        """(rank, node_id, what it waits for) for every collective not finished, for deadlock
        reports."""
        ...
