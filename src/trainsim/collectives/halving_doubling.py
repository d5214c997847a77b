"""Halving-doubling phases, ASTRA-sim's ``HalvingDoubling`` (astra-sim-semantics.md D3, B3-B4).

n must be a power of two, k = log2(n). Per insertion the (peer distance, message size) pair
is fixed when the insertion is made; afterwards the distance is multiplied by a factor (2, or
0.5 on the way back) and truncated to an int, the size divided by it and truncated (uint64):

- all-reduce: (1, D/2), (2, D/4), ..., (n/2, D/2^k), then back up (n/2, D/2^k), ..., (1, D/2);
- reduce-scatter: the first half; all-gather: (n/2, D), (n/4, 2D), ..., (1, 2^(k-1) D);
- all-to-all (ASTRA-sim rejects it; trainsim runs the recursive-doubling exchange):
  (1, D/2), (2, D/2), ..., (n/2, D/2), never reduced.

The peer at distance ``d`` is clockwise when ``index // d`` is even, else counter-clockwise,
so partners pair up. Rounds: P = 1 first insertion, Q = k - 1 later ones (B4).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from trainsim.collectives.base import (
    ALL_GATHER,
    ALL_REDUCE,
    ALL_TO_ALL,
    REDUCE_SCATTER,
    RoundedPhase,
)
from trainsim.errors import ConfigError


def log2_exact(n: int, *, what: str = "halvingDoubling") -> int:
    k = n.bit_length() - 1
    if n < 1 or (1 << k) != n:
        raise ConfigError(
            f"{what} needs a power-of-two group, got {n} members",
            hint="use ring or direct on this dimension",
        )
    return k


def hd_output_size(comm_type: int, data_size: int, n: int) -> int:
    if comm_type == REDUCE_SCATTER:
        return data_size // n
    if comm_type == ALL_GATHER:
        return data_size * n
    return data_size


class HalvingDoublingPhase(RoundedPhase):
    __slots__ = (
        "n",
        "sends_left",
        "free",
        "packets",
        "offset",
        "mult",
        "msg",
        "flip",
        "fixed_size",
    )

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        comm_type = self.comm_type
        data_size = self.data_size
        n = len(self.members)
        k = log2_exact(n)
        self.n = n
        self._init_rounds(1, k - 1)
        self.sends_left = 2 * k if comm_type == ALL_REDUCE else k
        if comm_type == ALL_GATHER:
            self.offset = n // 2
            self.mult = 0.5
            self.msg = data_size
        else:
            self.offset = 1
            self.mult = 2.0
            self.msg = data_size // 2
        self.flip = comm_type == ALL_REDUCE
        self.fixed_size = comm_type == ALL_TO_ALL
        self.free = 0
        self.packets: deque[tuple[int, int]] = deque()

    def _partner(self, offset: int) -> int:
        if offset <= 0:
            return self.rank
        if (self.index // offset) % 2 == 0:
            return self.members[(self.index + offset) % self.n]
        return self.members[(self.index - offset) % self.n]

    def _insert(self) -> None:
        processed = self._next_is_processed()
        msg = self.msg
        self.packets.append((self._partner(self.offset), msg))
        # Advance distance and size for the next insertion (D3).
        self.offset = int(self.offset * self.mult)
        if not self.fixed_size:
            self.msg = int(msg / self.mult)
        if self.flip and self.offset == self.n:
            self.flip = False
            self.mult = 0.5
            self.offset = int(self.offset * 0.5)
            self.msg = int(self.msg / 0.5)
        self.host.bundle(self, msg if processed else 0)

    def start(self) -> None:
        self._insert()

    def on_general(self, _arg: Any = None) -> None:
        self.free += 1
        if self.packets and self.sends_left > 0:
            peer, size = self.packets.popleft()
            host = self.host
            host.send(self, peer, size, peer)
            host.recv(self, peer, size)
            self.sends_left -= 1
            self.free -= 1
        if self.sends_left == 0 and self.free == 1:
            self.host.finish(self)

    def on_recv(self, _arg: Any = None) -> None:
        self._insert()
