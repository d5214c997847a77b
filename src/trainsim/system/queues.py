"""Which of its dimension's queues a chunk's phase waits in, with several queues per dimension
(ASTRA-sim's ``--num-queues-per-dim``; system layer, used by ``collective_engine``).

ASTRA-sim 518bd51 (``QueueLevels`` / ``QueueLevelHandler``, ``Sys::generate_collective``,
``Sys::Sys``): each network dimension has ``q`` queues; each queue starts at most
``ceil(active-chunks-per-dimension / q)`` chunks at once. A rank keeps three round-robin
positions per dimension, and every phase of every chunk it generates advances one of them, in
generation order (chunk by chunk, phase by phase), as its spec's ``pick`` says
(``collectives.plan``):

- ``NEXT``: the next of all ``q`` queues; the phase runs counter-clockwise when the position
  was in the second half (``position >= q // 2``, with ``q > 1``), else clockwise;
- ``FIRST``: the next of the first ``q // 2`` queues (queue 0 when ``q`` is 1), clockwise;
- ``LAST``: the next of queues ``q // 2 .. q - 1``, counter-clockwise.

With ``q`` = 1 every phase takes its dimension's single queue in the direction the plan gives,
so nothing here runs (the engine's fast path). Queue ids are ``dimension x q + index``.
"""

from __future__ import annotations

from dataclasses import replace

from trainsim.collectives import PhaseSpec
from trainsim.collectives.plan import FIRST, LAST


class QueuePicker:
    """One rank's round-robin positions, per dimension (module docstring)."""

    __slots__ = ("q", "_next", "_first", "_last")

    def __init__(self, queues_per_dim: int) -> None:
        self.q = queues_per_dim
        self._next: dict[int, int] = {}
        self._first: dict[int, int] = {}
        self._last: dict[int, int] = {}

    def pick(self, level: int, how: int) -> tuple[int, bool]:
        """(queue index in the dimension, clockwise) for the next phase on ``level``."""
        q = self.q
        half = q // 2
        if how == FIRST:
            at = self._first.get(level, 0)
            following = at + 1
            self._first[level] = 0 if following >= half else following
            return at, True
        if how == LAST:
            at = self._last.get(level, half)
            following = at + 1
            self._last[level] = half if following >= q else following
            return at, False
        at = self._next.get(level, 0)
        following = at + 1
        self._next[level] = 0 if following >= q else following
        return at, not (q > 1 and at >= half)

    def assign(self, phases: list[PhaseSpec], fast: bool) -> list[PhaseSpec]:
        """``phases`` (one chunk's, in order) with their queue and direction chosen; a group's
        flat layout (``fast``) uses dimension 0's queues, as ASTRA-sim's one-dimension group
        topology does."""
        out = []
        for spec in phases:
            queue, clockwise = self.pick(0 if fast else spec.ldim, spec.pick)
            out.append(replace(spec, queue=queue, clockwise=clockwise))
        return out
