"""Send/receive matching across ranks (astra-sim-semantics.md A3 and "Send/recv").

A message from ``src`` to ``dst`` with tag ``t`` is matched to the receives ``dst`` posted for
``(src, t)`` in posting order. An arrival with no posted receive is remembered; a receive
posted later completes at once. Matching includes the byte count in ASTRA-sim, where a
mismatch silently hangs; here it is a :class:`TraceError` naming both nodes.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

from trainsim.errors import TraceError

Key = tuple[int, int, int]  # (src, dst, tag)


class SendRecvMatcher:
    """Pairs message arrivals with posted receives, per (src, dst, tag), in order."""

    def __init__(self) -> None:
        # posted receives: key -> deque of (node_id, nbytes, on_done, arg)
        self._posted: dict[Key, deque[tuple[int, int, Callable[[Any], None], Any]]] = defaultdict(deque)
        # arrived, unmatched messages: key -> deque of (send_node_id, nbytes)
        self._arrived: dict[Key, deque[tuple[int, int]]] = defaultdict(deque)

    def arrive(self, key: Key, send_node_id: int, nbytes: int) -> None:
        """A message reached its destination."""
        posted = self._posted.get(key)
        if posted:
            recv_node, expected, on_done, arg = posted.popleft()
            _check_sizes(key, send_node_id, nbytes, recv_node, expected)
            on_done(arg)
        else:
            self._arrived[key].append((send_node_id, nbytes))

    def post(self, key: Key, recv_node_id: int, nbytes: int, on_done: Callable[[Any], None], arg: Any) -> bool:
        """Post a receive; returns True when a message was already there (caller completes it)."""
        arrived = self._arrived.get(key)
        if arrived:
            send_node, size = arrived.popleft()
            _check_sizes(key, send_node, size, recv_node_id, nbytes)
            return True
        self._posted[key].append((recv_node_id, nbytes, on_done, arg))
        return False

    def waiting_receives(self) -> list[tuple[int, int, str]]:
        """(rank, node_id, reason) of every receive still waiting."""
        out = []
        for (src, dst, tag), posted in self._posted.items():
            for node_id, nbytes, _, _ in posted:
                out.append((dst, node_id, f"RECV of {nbytes} B from rank {src} tag {tag}: no matching SEND arrived"))
        return out


def _check_sizes(key: Key, send_node: int, sent: int, recv_node: int, expected: int) -> None:
    if sent != expected:
        src, dst, tag = key
        raise TraceError(
            f"RECV node {recv_node} expects {expected} B from rank {src} with tag {tag}, "
            f"but the matching SEND node {send_node} on rank {src} sends {sent} B",
            rank=dst,
            node_id=recv_node,
            hint="SEND and RECV of one message must carry the same comm_size",
        )
