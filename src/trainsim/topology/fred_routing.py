"""Routing concurrent in-network trees over FRED's middle stage by conflict-graph colouring
(DESIGN.md, topology layer; Rashidi et al., arXiv 2406.19580, the FRED switch's routing of
concurrent collectives).

A group whose members sit under more than one L1 switch needs a tree through an L2 plane (a
middle-stage micro-switch). Two such groups that share an L1 switch would share that L1's
channel to the plane if they took the same one: they *conflict*. The conflict graph has a
vertex per group and an edge per conflict; a colour is a plane. Groups are coloured greedily in
priority order (tensor > pipeline > data parallel, then by first member): each takes the lowest
plane no coloured neighbour of the same round uses; a group that finds none waits for the next
round (it is serialized after the groups of the round before it). A group then also stripes
its data over every further plane that none of its neighbours in its round holds, so a lone
wafer-wide group uses every plane. Groups under one L1 need no plane and never conflict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PRIORITY = {"tp": 0, "pp": 1, "dp": 2}
"""Colouring order of group roles: tensor > pipeline > data parallel (other roles after)."""


@dataclass(frozen=True, slots=True)
class TreeRoute:
    """Where one group's tree runs: its ``round`` (0 first; a later round starts when the one
    before has finished) and the ``planes`` it stripes over (empty: inside one L1)."""

    round: int
    planes: tuple[int, ...]


def colour_trees(
    groups: Sequence[Sequence[int]], roles: Sequence[str], per_l1: int, planes: int
) -> list[TreeRoute]:
    """A :class:`TreeRoute` per group (same order as ``groups``); ``roles[i]`` is group i's
    role (``tp``, ``pp``, ``dp``, ...), ``per_l1`` NPUs per L1 switch, ``planes`` L2 planes."""
    l1s = [frozenset(m // per_l1 for m in g) for g in groups]
    needs = [len(s) > 1 for s in l1s]
    order = sorted(range(len(groups)), key=lambda i: (PRIORITY.get(roles[i], len(PRIORITY)), min(groups[i], default=0), i))
    conflicts = [
        {j for j in range(len(groups)) if j != i and needs[i] and needs[j] and l1s[i] & l1s[j]} for i in range(len(groups))
    ]
    rnd = [0] * len(groups)
    colour: dict[int, int] = {}
    pending = [i for i in order if needs[i]]
    current = 0
    while pending:
        deferred = []
        for i in pending:
            taken = {colour[j] for j in conflicts[i] if j in colour and rnd[j] == current}
            free = [c for c in range(planes) if c not in taken]
            if free:
                colour[i], rnd[i] = free[0], current
            else:
                deferred.append(i)
        pending, current = deferred, current + 1
    stripes: dict[int, set[int]] = {i: {c} for i, c in colour.items()}
    for i in order:
        if i not in colour:
            continue
        held = set().union(*(stripes[j] for j in conflicts[i] if rnd[j] == rnd[i])) if conflicts[i] else set()
        stripes[i] |= {c for c in range(planes) if c not in held}
    return [TreeRoute(rnd[i], tuple(sorted(stripes[i])) if i in stripes else ()) for i in range(len(groups))]
