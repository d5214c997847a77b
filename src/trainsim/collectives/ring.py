"""Ring and direct (``direct``, ``directN``) phases, ASTRA-sim's ``Ring`` / ``AllToAll``.

Sources: astra-sim-semantics.md B1 (insertions), B3-B4 (which insertions reduce), D1 (ring),
D2 (direct). Sizes in bytes; integer division as ASTRA-sim (``data // n``).

Insertions come in rounds of ``P`` "first" insertions followed by ``Q`` "later" ones; a later
insertion reduces for reduce-scatter always and for all-reduce in even rounds (B4).
Ring: P = 1, Q = n-1. Direct: P = window (n-1 unless ``directN``), Q = P, except on a
communicator group's Local ring, where Q = (n-1) x P (``AllToAll::get_non_zero_latency_packets``
in ASTRA-sim's ``AllToAll.cc``; docs/collectives.md, "direct on a communicator group").
"""

from __future__ import annotations

from collections import deque
from typing import Any

from trainsim.collectives.base import ALL_REDUCE, ALL_TO_ALL, REDUCE_SCATTER, RoundedPhase


def ring_sizes(comm_type: int, data_size: int, n: int) -> tuple[int, int]:
    """(message size, output size) of a ring or direct phase (D1 table)."""
    if comm_type == ALL_REDUCE:
        return data_size // n, data_size
    if comm_type == REDUCE_SCATTER:
        return data_size // n, data_size // n
    if comm_type == ALL_TO_ALL:
        return data_size // n, data_size
    return data_size, data_size * n  # all-gather: the message is the whole input


def ring_sends(comm_type: int, n: int) -> int:
    """Messages one member of an ``n``-member ring (window 0) sends in a phase."""
    if comm_type == ALL_REDUCE:
        return 2 * (n - 1)
    if comm_type == ALL_TO_ALL:
        return n * (n - 1) // 2
    return n - 1


class RingPhase(RoundedPhase):
    """One rank's ring (``window == 0``) or direct (``window >= 1`` peers at once) phase."""

    __slots__ = (
        "n",
        "msg",
        "sends_left",
        "free",
        "received",
        "reducing",
        "packets",
        "direct",
        "gate",
        "middle",
        "step",
        "sign",
    )

    def __init__(self, *args: Any, window: int = 0, clockwise: bool = True) -> None:
        super().__init__(*args)
        comm_type = self.comm_type
        members = self.members
        n = len(members)
        self.n = n
        self.msg = ring_sizes(comm_type, self.data_size, n)[0]
        self.direct = window > 0
        if self.direct:
            p = min(window, n - 1)
            self._init_rounds(p, p)
            self.sends_left = 2 * (n - 1) if comm_type == ALL_REDUCE else n - 1
        else:
            self._init_rounds(1, n - 1)
            self.sends_left = ring_sends(comm_type, n)
        self.gate = self.direct and comm_type == ALL_REDUCE
        self.middle = n - 1
        self.free = 0
        self.received = 0
        self.reducing = 0  # insertions whose reduction is not over (counted when ``ordered``)
        self.packets: deque[tuple[int, int]] = deque()
        self.step = 1  # peers are ``step`` positions ahead (send) / behind (receive)
        self.sign = 1 if clockwise else -1

    def _insert(self) -> None:
        processed = self._next_is_processed()
        members = self.members
        n = self.n
        off = self.sign * self.step
        self.packets.append((members[(self.index + off) % n], members[(self.index - off) % n]))
        if self.direct:
            step = self.step + 1
            self.step = 1 if step >= n else step
        if processed and self.ordered:
            self.reducing += 1
        self.host.bundle(self, self.msg if processed else 0)

    def start(self) -> None:
        if self.direct and self.fast:
            # A Local ring (a communicator group's; the host sets ``fast`` exactly there, as
            # ASTRA-sim picks its Fast bus on the same test) counts (n-1) x window "later"
            # insertions per round: an all-reduce then reduces on every receive, not only on
            # the first half's.
            self.later = (self.n - 1) * self.first
        for _ in range(self.first):
            self._insert()

    def _ready(self) -> bool:
        """Send the next packet if one is due and a slot is free; False when none could go."""
        if not self.packets or self.sends_left == 0 or self.free == 0:
            return False
        dst, src = self.packets.popleft()
        host = self.host
        host.send(self, dst, self.msg, src)
        host.recv(self, src, self.msg)
        self.sends_left -= 1
        self.free -= 1
        return True

    def on_general(self, _arg: Any = None) -> None:
        self.free += 1
        if _arg:  # ``ordered``: the host passes the bytes this insertion reduced
            self.reducing -= 1
        if self.gate and self.sends_left <= self.middle:
            # D2 all-reduce gate: the second half waits for every first-half message; when
            # ``ordered``, also for their reductions (the shard it sends is their sum;
            # docs/ace.md, "Ordering")
            if self.received < self.middle or self.reducing:
                return
            for _ in range(self.first):
                if not self._ready():  # nothing changes in between: the rest would fail too
                    break
        else:
            self._ready()
        if self.sends_left == 0 and self.free == self.first:
            self.host.finish(self)

    def on_recv(self, _arg: Any = None) -> None:
        self.received += 1
        self._insert()
