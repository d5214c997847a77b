"""Per-rank collective phases as small state machines (DESIGN.md, collectives layer).

A *phase* is one rank's part of one algorithm step on one logical dimension for one chunk
(ASTRA-sim's ``CollectivePhase`` + ``Algorithm``). It never touches time directly: it asks its
:class:`PhaseHost` (the system layer's runtime) to

- ``bundle(phase, red_bytes)``: charge one *insertion* — the endpoint delay, plus the local
  reduction of ``red_bytes`` bytes when non-zero — and then call ``phase.on_general()``
  (astra-sim-semantics.md B1, B2);
- ``send(phase, dst, nbytes, mirror_src)``: send one message (``mirror_src`` is the member
  that, by symmetry, sends this rank the matching message at the same step; the symmetric
  runtime uses it, the rank-by-rank runtime ignores it);
- ``recv(phase, src, nbytes)``: post one receive; ``phase.on_recv()`` runs when it matches
  (A3);
- ``switch_reduce(phase, up_bytes, down_bytes)``: send ``up_bytes`` up to the switch of the
  phase's Switch dimension; once every member of ``phase.members`` has (the join), the switch
  sends ``down_bytes`` down to each and ``phase.on_recv()`` runs at its arrival (``inSwitch``);
- ``finish(phase)``: the phase is over (D0);
- for a phase that runs a graph of point-to-point nodes (``custom.py``), with ``node`` handed
  back: ``message(phase, dst, nbytes, tag, node)`` sends one message, and
  ``phase.on_sent(node)`` runs when it arrives (before the receiver's match);
  ``post(phase, src, nbytes, tag, node)`` posts a receive matched on (src, dst, ``tag``, bytes)
  within the phase's collective, ``phase.on_recv(node)`` at the match;
  ``wait(phase, ns, node)``: ``phase.on_general(node)`` after ``ns``.

Units: bytes for sizes; the host owns time (ns). ``members`` is the logical ring or group in
ring order (global rank ids) and ``index`` this rank's position in it.
"""

from __future__ import annotations

from typing import Any, Protocol

from trainsim.enums import CommType

ALL_REDUCE = int(CommType.ALL_REDUCE)
ALL_GATHER = int(CommType.ALL_GATHER)
REDUCE_SCATTER = int(CommType.REDUCE_SCATTER)
ALL_TO_ALL = int(CommType.ALL_TO_ALL)
PHASE_TYPES = (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL)


class PhaseHost(Protocol):
    def bundle(self, phase: Phase, red_bytes: int) -> None: ...

    def send(self, phase: Phase, dst: int, nbytes: int, mirror_src: int) -> None: ...

    def recv(self, phase: Phase, src: int, nbytes: int) -> None: ...

    def switch_reduce(self, phase: Phase, up_bytes: int, down_bytes: int) -> None: ...

    def finish(self, phase: Phase) -> None: ...

    def message(self, phase: Phase, dst: int, nbytes: int, tag: int, node: int) -> None: ...

    def post(self, phase: Phase, src: int, nbytes: int, tag: int, node: int) -> None: ...

    def wait(self, phase: Phase, ns: float, node: int) -> None: ...


class Phase:
    """Common state of one rank's phase. Subclasses implement ``start``, ``on_general`` and
    ``on_recv``; ``owner``, ``tag``, ``dim``, ``fast`` and ``ordered`` belong to the host
    (stream, message tag, dimension for byte accounting, whether the 10 ns "Fast" endpoint
    path applies, whether data waits for the reductions that produce it: set with an endpoint
    whose reductions take the rank's resources, which then passes ``bundle``'s ``red_bytes``
    to ``on_general``; ``ring.RingPhase``'s direct all-reduce gate uses it)."""

    __slots__ = (
        "host",
        "rank",
        "members",
        "index",
        "comm_type",
        "data_size",
        "owner",
        "tag",
        "dim",
        "fast",
        "ordered",
        "on_general_cb",
        "on_recv_cb",
    )

    def __init__(
        self,
        host: PhaseHost,
        rank: int,
        members: list[int],
        index: int,
        comm_type: int,
        data_size: int,
    ) -> None:
        self.host = host
        self.rank = rank
        self.members = members
        self.index = index
        self.comm_type = comm_type
        self.data_size = data_size
        self.owner: Any = None
        self.tag = 0
        self.dim = 0
        self.fast = False
        self.ordered = False
        self.on_general_cb = self.on_general
        self.on_recv_cb = self.on_recv

    def start(self) -> None:
        raise NotImplementedError

    def on_general(self, _arg: Any = None) -> None:
        raise NotImplementedError

    def on_recv(self, _arg: Any = None) -> None:
        raise NotImplementedError


class RoundedPhase(Phase):
    """Insertions in rounds of ``first`` "first" and ``later`` "later" insertions; decides
    which insertions reduce (astra-sim-semantics.md B4)."""

    __slots__ = ("first", "later", "zero_left", "nonzero_left", "toggle", "reduce_all", "reduce_ar")

    def _init_rounds(self, first: int, later: int) -> None:
        self.first = first
        self.later = later
        self.zero_left = 0
        self.nonzero_left = 0
        self.toggle = False
        self.reduce_all = self.comm_type == REDUCE_SCATTER
        self.reduce_ar = self.comm_type == ALL_REDUCE

    def _next_is_processed(self) -> bool:
        """Count one insertion; True when it carries a reduction."""
        if self.zero_left == 0 and self.nonzero_left == 0:
            self.zero_left = self.first
            self.nonzero_left = self.later
            self.toggle = not self.toggle
        if self.zero_left > 0:
            self.zero_left -= 1
            return False
        self.nonzero_left -= 1
        return self.reduce_all or (self.reduce_ar and self.toggle)
